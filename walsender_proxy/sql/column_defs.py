"""A column definition of CREATE TABLE or ADD COLUMN read as PostgreSQL 15's
``transformColumnDefinition`` reads it: NULL / NOT NULL, DEFAULT, PRIMARY KEY, and the
columns that own a sequence — ``serial`` (a sequence ``<table>_<column>_seq`` of the
column's integer type, OWNED BY the column, ``DEFAULT nextval(…)``, NOT NULL) and
``GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY [(sequence options)]`` — with PostgreSQL's
errors, in its order. Making the sequences and the column is :func:`make_sequences` and
:func:`own_sequences` around the table's creation, as PostgreSQL's CREATE SEQUENCE before
and ALTER SEQUENCE … OWNED BY after it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pglast import ast, enums

from decoding.catalog import SEQUENCE_MARK, ColumnDefault
from decoding.errors import PgError
from decoding.pgtypes import parse_type
from walsender_proxy.lake import Transaction
from walsender_proxy.sql import collations, foreign_key_sql, sequences
from walsender_proxy.sql.sql_errors import SqlError

_C = enums.ConstrType
_ATTRIBUTES = {
    _C.CONSTR_ATTR_DEFERRABLE: "DEFERRABLE",
    _C.CONSTR_ATTR_NOT_DEFERRABLE: "NOT DEFERRABLE",
    _C.CONSTR_ATTR_DEFERRED: "INITIALLY DEFERRED",
    _C.CONSTR_ATTR_IMMEDIATE: "INITIALLY IMMEDIATE",
}


@dataclass(slots=True)
class ColumnPlan:
    name: str
    type_text: str
    not_null: bool = False
    raw_default: Any = None
    primary: bool = False
    #: "" (none), "serial", or the identity's kind "a" / "d"
    owns: str = ""
    #: an identity's sequence options (its own sequence_name among them)
    options: list[Any] = field(default_factory=list)
    #: UNIQUE column constraints (made as indexes once the table exists)
    unique: list[ast.Constraint] = field(default_factory=list)
    #: CONSTRAINT name PRIMARY KEY: the key's index name
    pkey_name: str | None = None
    #: REFERENCES column constraints (made once the table exists)
    foreign: list[ast.Constraint] = field(default_factory=list)
    #: CHECK column constraints (cooked once the table exists)
    checks: list[ast.Constraint] = field(default_factory=list)
    #: GENERATED ALWAYS AS (…) STORED: the raw expression (cooked once the table exists)
    raw_generated: Any = None
    #: a default already cooked (copied by LIKE … INCLUDING DEFAULTS)
    cooked_default: ColumnDefault | None = None


def _pos(c: ast.Constraint) -> int | None:
    """The 1-based position of a constraint (parser_errposition); None for one PostgreSQL
    added itself (a serial's)."""
    loc = getattr(c, "location", None)
    return loc + 1 if isinstance(loc, int) and loc >= 0 else None


def plan(el: ast.ColumnDef, table: str, type_text: Any, unsupported: Any, constraint_name: Any) -> ColumnPlan:
    """The column as the lake will make it (its default still raw)."""
    serial = sequences.serial_type(el.typeName)
    p = ColumnPlan(el.colname, serial if serial is not None else type_text(el.typeName))
    if el.collClause is not None:  # (a collation there is changes nothing: sql/collations.py)
        at = el.collClause.location + 1 if el.collClause.location >= 0 else None
        try:
            collations.check_name([n.sval for n in el.collClause.collname])
        except PgError as e:
            raise SqlError(e.sqlstate, e.message, at) from None
        ctype = parse_type(p.type_text)
        if ctype.is_enum or ctype.is_composite or not collations.collatable(ctype.base.name):
            raise SqlError("42804", collations.not_collatable(ctype.sql_name()).message, at)
    constraints = list(el.constraints or ())
    if serial is not None:
        p.owns = "serial"
        # (PostgreSQL appends its DEFAULT and NOT NULL to what the user wrote)
        constraints += [ast.Constraint(contype=_C.CONSTR_DEFAULT), ast.Constraint(contype=_C.CONSTR_NOTNULL)]
    saw_nullable = saw_default = saw_identity = saw_generated = False
    where = f'column "{el.colname}" of table "{table}"'
    last = None  # (the constraint a DEFERRABLE-style attribute applies to)
    last_con: ast.Constraint | None = None
    saw_deferrability = saw_initially = False
    for c in constraints:
        kind = c.contype
        if kind in _ATTRIBUTES and last not in (_C.CONSTR_PRIMARY, _C.CONSTR_UNIQUE, _C.CONSTR_FOREIGN):
            raise PgError("42601", f"misplaced {_ATTRIBUTES[kind]} clause")  # (transformConstraintAttrs)
        if kind not in _ATTRIBUTES:
            last, last_con = kind, c
            saw_deferrability = saw_initially = False
        if kind == _C.CONSTR_NULL:
            if saw_nullable and p.not_null:
                raise SqlError("42601", f"conflicting NULL/NOT NULL declarations for {where}", _pos(c))
            p.not_null, saw_nullable = False, True
        elif kind == _C.CONSTR_NOTNULL:
            if saw_nullable and not p.not_null:
                raise SqlError("42601", f"conflicting NULL/NOT NULL declarations for {where}", _pos(c))
            p.not_null, saw_nullable = True, True
        elif kind == _C.CONSTR_DEFAULT:
            if saw_default:
                raise SqlError("42601", f"multiple default values specified for {where}", _pos(c))
            p.raw_default, saw_default = c.raw_expr, True
        elif kind == _C.CONSTR_IDENTITY:
            if saw_identity:
                raise SqlError("42601", f"multiple identity specifications for {where}", _pos(c))
            if p.type_text not in ("int2", "int4", "int8"):
                raise PgError("22023", "identity column type must be smallint, integer, or bigint")
            p.owns, p.options, saw_identity = c.generated_when, list(c.options or ()), True
            if saw_nullable and not p.not_null:
                raise PgError("42601", f"conflicting NULL/NOT NULL declarations for {where}")
            p.not_null, saw_nullable = True, True
        elif kind == _C.CONSTR_PRIMARY:
            p.primary, p.pkey_name = True, c.conname
        elif kind == _C.CONSTR_UNIQUE:
            p.unique.append(c)
        elif kind == _C.CONSTR_FOREIGN:
            p.foreign.append(c)
        elif kind == _C.CONSTR_CHECK:
            p.checks.append(c)
        elif kind == _C.CONSTR_GENERATED:
            if saw_generated:
                raise SqlError("42601", f"multiple generation clauses specified for {where}", _pos(c))
            p.raw_generated, saw_generated = c.raw_expr, True
        elif kind in _ATTRIBUTES:
            assert last_con is not None
            saw_deferrability, saw_initially = foreign_key_sql.apply_attribute(kind, last_con, saw_deferrability, saw_initially, c.location)
        else:
            raise unsupported(f"column constraint {constraint_name(kind)}")
        if saw_default and saw_identity:
            raise SqlError("42601", f"both default and identity specified for {where}", _pos(c))
        if saw_default and saw_generated:
            raise SqlError("42601", f"both default and generation expression specified for {where}", _pos(c))
        if saw_identity and saw_generated:
            raise SqlError("42601", f"both identity and generation expression specified for {where}", _pos(c))
    if p.owns == "serial":
        p.raw_default = None  # (made from the sequence once it exists)
    return p


def make_sequences(tx: Transaction, schema: str, table: str, plans: list[ColumnPlan]) -> dict[str, int]:
    """generateSerialExtraStmts' CREATE SEQUENCE for each column that owns one, before the
    table: column name → the sequence's OID."""
    out: dict[str, int] = {}
    for p in plans:
        if not p.owns:
            continue
        opts, owned = sequences.options([o for o in p.options if o.defname != "sequence_name"])
        if owned is not None:
            raise PgError("42601", "invalid sequence option OWNED BY")
        opts = {"as": p.type_text, **opts}
        named = [o for o in p.options if o.defname == "sequence_name"]
        if named:
            parts = [n.sval for n in named[0].arg]
            seq_schema, name = (parts[-2] if len(parts) > 1 else schema), parts[-1]
        else:
            seq_schema, name = schema, sequences.choose_sequence_name(tx.catalog(), schema, table, p.name)
        sq = tx.create_sequence(f"{seq_schema}.{name}", opts, identity=p.owns != "serial")
        assert sq is not None
        out[p.name] = sq.oid
    return out


def column_default(p: ColumnPlan, seq_oid: int) -> ColumnDefault:
    """The default of a column that owns a sequence: its nextval (for an identity column
    PostgreSQL keeps no pg_attrdef row, and the catalog shows none)."""
    text = f"nextval('{SEQUENCE_MARK}'::regclass)"
    return ColumnDefault(text, text, True, 0, False, seq_oid)


def own_sequences(tx: Transaction, schema: str, table: str, owned: dict[str, int]) -> None:
    """ALTER SEQUENCE … OWNED BY table.column, after the table."""
    cat = tx.catalog()
    for column, oid in owned.items():
        sq = cat.sequences[oid]
        tx.alter_sequence(sq.qualified_name, {}, owned_by=[schema, table, column])


def with_identity(p: ColumnPlan, default: ColumnDefault | None) -> tuple[ColumnDefault | None, str]:
    """(default, identity kind) for the lake's column."""
    if p.owns in ("a", "d"):
        assert default is not None
        return replace(default, oid=0), p.owns
    return default, ""
