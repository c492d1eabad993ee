"""``CREATE TABLE … (LIKE source [INCLUDING | EXCLUDING option] …)`` as PostgreSQL 15's
``transformTableLikeClause`` and ``expandTableLikeClause`` read it: the source's columns
(names, types, NOT NULL) take the clause's place among the new table's columns, and what
the options include is copied once the table exists — DEFAULTS (not of a generated
column), GENERATED (a generated column's expression; without it the column is an ordinary
one), IDENTITY (a new sequence with the source's options), CONSTRAINTS (CHECK constraints
under their names), INDEXES (the primary key, UNIQUE constraints and indexes, under names
chosen for the new table), STORAGE and COMMENTS (of columns and CHECK constraints).
STATISTICS and COMPRESSION copy nothing: the proxy has neither.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pglast
from pglast import ast, enums

from decoding.catalog import Check
from decoding.errors import PgError
from decoding.pgtypes import ColumnType, type_by_oid
from walsender_proxy.lake import Transaction
from walsender_proxy.sql import column_defs, pgcatalog_defs
from walsender_proxy.sql.ddl_names import qualified
from walsender_proxy.sql.sql_errors import SqlError

_O = enums.TableLikeOption
#: pg_class's and pg_constraint's OIDs, as pg_description keys objects by them.
_PG_CLASS, _PG_CONSTRAINT = 1259, 2606


@dataclass(slots=True)
class Copied:
    """What one LIKE clause gives the new table."""

    columns: list[column_defs.ColumnPlan] = field(default_factory=list)
    #: CHECK constraints (INCLUDING CONSTRAINTS), as raw constraints under their names
    checks: list[ast.Constraint] = field(default_factory=list)
    #: the primary key's columns (INCLUDING INDEXES), or none
    primary_key: list[str] = field(default_factory=list)
    #: UNIQUE constraints, as index_sql.unique_constraint gives them (names chosen anew)
    uniques: list[dict[str, Any]] = field(default_factory=list)
    #: other indexes, as Transaction.create_index's keyword arguments (names chosen anew)
    indexes: list[dict[str, Any]] = field(default_factory=list)
    #: column name → its storage letter (INCLUDING STORAGE)
    storage: dict[str, str] = field(default_factory=dict)
    #: column name → its comment, CHECK name → its comment (INCLUDING COMMENTS)
    column_comments: dict[str, str] = field(default_factory=dict)
    check_comments: dict[str, str] = field(default_factory=dict)


def _other_relation(tx: Transaction, rv: ast.RangeVar) -> list[tuple[str, ColumnType]] | None:
    """The columns of the view or composite type ``rv`` names (LIKE copies their names and
    types only), or None when it names neither."""
    cat = tx.catalog()
    for schema in [rv.schemaname] if rv.schemaname else tx.search_path or tx.lake.search_path:
        if cat.find_table(schema, rv.relname) is not None:
            return None
        kind = "sequences" if cat.find_sequence(schema, rv.relname) is not None else "indexes" if cat.find_index(schema, rv.relname) is not None else None
        if kind is not None:
            loc = rv.location
            raise SqlError(
                "42809", f'relation "{rv.relname}" is invalid in LIKE clause', loc + 1 if loc >= 0 else None,
                detail=f"This operation is not supported for {kind}.",
            )  # fmt: skip
        view = cat.find_view(schema, rv.relname)
        if view is not None:
            try:
                return [(vc.name, replace(type_by_oid(vc.type_oid), typmod=vc.typmod)) for vc in view.columns]
            except PgError:
                raise PgError("0A000", f'LIKE of view "{rv.relname}", a column of which is of a type the lake does not store, is not supported by walsender-proxy') from None
        ct = cat.find_composite(schema, rv.relname)
        if ct is not None:
            return list(ct.live_attributes)
    return None


def expand(tx: Transaction, like: ast.TableLikeClause) -> Copied:
    out = Copied()
    other = _other_relation(tx, like.relation)
    if other is not None:  # (a view or composite type: its columns, nothing else)
        out.columns = [column_defs.ColumnPlan(n, ct.type_text()) for n, ct in other]
        return out
    try:
        t = tx.table(qualified(like.relation))
    except PgError as e:
        if e.sqlstate == "42P01":
            loc = like.relation.location
            raise SqlError("42P01", f'relation "{like.relation.relname}" does not exist', loc + 1 if loc >= 0 else None) from None
        raise
    opts = like.options or 0
    cat = tx.catalog()
    names = {c.attnum: pgcatalog_defs.quote_ident(c.name) for c in t.columns}
    for c in t.columns:
        p = column_defs.ColumnPlan(c.name, c.type.type_text(), not_null=c.not_null)
        if c.identity and opts & _O.CREATE_TABLE_LIKE_IDENTITY and c.default is not None:
            sq = cat.sequences.get(c.default.sequence)
            if sq is not None:
                p.owns, p.not_null = c.identity, True
                p.options = _sequence_options(sq)
        elif c.generation is not None:
            if opts & _O.CREATE_TABLE_LIKE_GENERATED:
                p.raw_generated = _raw_expr(Check.fill(c.generation.expr, names))
        elif c.default is not None and not c.identity and opts & _O.CREATE_TABLE_LIKE_DEFAULTS:
            p.cooked_default = c.default
        if c.storage and opts & _O.CREATE_TABLE_LIKE_STORAGE:
            out.storage[c.name] = c.storage
        if opts & _O.CREATE_TABLE_LIKE_COMMENTS and (text := cat.comments.get(f"{_PG_CLASS}:{t.oid}:{c.attnum}")):
            out.column_comments[c.name] = text
        out.columns.append(p)
    if opts & _O.CREATE_TABLE_LIKE_CONSTRAINTS:
        for ck in t.checks:
            out.checks.append(
                ast.Constraint(
                    contype=enums.ConstrType.CONSTR_CHECK,
                    conname=ck.name,
                    raw_expr=_raw_expr(Check.fill(ck.expr, names)),
                    is_no_inherit=ck.no_inherit,
                    initially_valid=True,
                    location=-1,
                )
            )
            if opts & _O.CREATE_TABLE_LIKE_COMMENTS and (text := cat.comments.get(f"{_PG_CONSTRAINT}:{ck.oid}:0")):
                out.check_comments[ck.name] = text
    if opts & _O.CREATE_TABLE_LIKE_INDEXES:
        out.primary_key = list(t.primary_key)
        for ix in t.indexes:
            if any(ix.expressions) or ix.predicate is not None:
                raise PgError("0A000", f'LIKE … INCLUDING INDEXES of an expression or partial index ("{ix.name}") is not supported by walsender-proxy')
            if ix.constraint:
                out.uniques.append({"name": None, "columns": ix.columns, "include": ix.include, "nulls_not_distinct": ix.nulls_not_distinct})
            else:
                out.indexes.append(
                    {
                        "columns": ix.columns,
                        "unique": ix.unique,
                        "options": ix.options,
                        "include": ix.include,
                        "method": ix.method,
                        "nulls_not_distinct": ix.nulls_not_distinct,
                        "opclasses": ix.opclasses,
                    }
                )
    return out


def _raw_expr(text: str) -> Any:
    """An expression PostgreSQL printed, read back as a raw one (as its LIKE copies the
    cooked tree)."""
    return pglast.parse_sql(f"SELECT {text}")[0].stmt.targetList[0].val


def _sequence_options(sq: Any) -> list[Any]:
    """The identity sequence's options as CREATE SEQUENCE would give them."""
    cycle = "CYCLE" if sq.cycle else "NO CYCLE"
    text = f"CREATE SEQUENCE x START {sq.start} INCREMENT {sq.increment} MINVALUE {sq.min} MAXVALUE {sq.max} CACHE {sq.cache} {cycle}"
    return list(pglast.parse_sql(text)[0].stmt.options or ())
