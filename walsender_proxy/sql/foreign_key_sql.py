"""FOREIGN KEY constraints as statements write them (``REFERENCES`` of a column,
``FOREIGN KEY (…) REFERENCES`` of a table, ``ALTER TABLE … ADD / VALIDATE``) turned into
the lake's :class:`~walsender_proxy.lake.foreign_key_ddl.ForeignKeySpec`. The lake checks
and enforces them (``lake/foreign_key_ddl.py``, ``lake/foreign_keys.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from pglast import ast, enums

from decoding.errors import PgError
from walsender_proxy.lake import Transaction
from walsender_proxy.lake.foreign_key_ddl import ForeignKeySpec
from walsender_proxy.sql.sql_errors import SqlError


def _at(location: int | None) -> int | None:
    return location + 1 if isinstance(location, int) and location >= 0 else None


def _unsupported(what: str) -> PgError:
    return PgError("0A000", f"{what} is not supported by walsender-proxy")


def spec(c: ast.Constraint, column: str | None = None, *, new_table: bool = False) -> ForeignKeySpec:
    """The constraint's spec (``column``: a column constraint's own column; ``new_table``:
    made by CREATE TABLE, whose empty table PostgreSQL never leaves NOT VALID)."""
    if c.fk_matchtype == "p":
        raise PgError("0A000", "MATCH PARTIAL not yet implemented")
    if getattr(c, "is_enforced", True) is False:
        raise _unsupported("a NOT ENFORCED foreign key")
    pk = c.pktable
    ref = f"{pk.schemaname}.{pk.relname}" if pk.schemaname else pk.relname
    if pk.catalogname:
        ref = f"{pk.catalogname}.{ref}"
    columns = (column,) if column is not None else tuple(k.sval for k in c.fk_attrs or ())
    return ForeignKeySpec(
        name=c.conname,
        columns=columns,
        ref_table=ref,
        ref_columns=tuple(k.sval for k in c.pk_attrs or ()),
        on_update=c.fk_upd_action or "a",
        on_delete=c.fk_del_action or "a",
        match_full=c.fk_matchtype == "f",
        set_columns=tuple(k.sval for k in c.fk_del_set_cols or ()),
        not_valid=bool(c.skip_validation) and not new_table,
        deferrable=bool(c.deferrable or c.initdeferred),
        initially_deferred=bool(c.initdeferred),
    )


def apply_attribute(
    kind: enums.ConstrType, con: ast.Constraint, saw_deferrability: bool, saw_initially: bool, location: int | None = None
) -> tuple[bool, bool]:
    """A column constraint's DEFERRABLE-style attribute applied to the constraint before
    it, as transformConstraintAttrs applies it (with its errors); a deferrable PRIMARY KEY
    or UNIQUE is refused (the lake checks keys at once). Returns what was seen since."""
    C = enums.ConstrType
    if kind in (C.CONSTR_ATTR_DEFERRABLE, C.CONSTR_ATTR_NOT_DEFERRABLE):
        if saw_deferrability:
            raise SqlError("42601", "multiple DEFERRABLE/NOT DEFERRABLE clauses not allowed", _at(location))
        con.deferrable = kind == C.CONSTR_ATTR_DEFERRABLE
        if not con.deferrable and saw_initially and con.initdeferred:
            raise SqlError("42601", "constraint declared INITIALLY DEFERRED must be DEFERRABLE", _at(location))
        saw_deferrability = True
    else:
        if saw_initially:
            raise SqlError("42601", "multiple INITIALLY IMMEDIATE/DEFERRED clauses not allowed", _at(location))
        con.initdeferred = kind == C.CONSTR_ATTR_DEFERRED
        if con.initdeferred and saw_deferrability and not con.deferrable:
            raise SqlError("42601", "constraint declared INITIALLY DEFERRED must be DEFERRABLE", _at(location))
        saw_initially = True
    if con.contype != C.CONSTR_FOREIGN and (con.deferrable or con.initdeferred):
        raise _unsupported("a DEFERRABLE constraint")
    return saw_deferrability, saw_initially


def deferrable_oids(tx: Transaction, names: Sequence[ast.RangeVar]) -> list[int]:
    """The constraints SET CONSTRAINTS names, as AfterTriggerSetState finds them: each name
    in its schema, or in the first schema of the search path that has a constraint of that
    name (every table's there); 42704 for none, 42809 for one that is not deferrable."""
    cat = tx.catalog()
    out: list[int] = []
    for rv in names:
        schemas = [rv.schemaname] if rv.schemaname else list(tx.search_path or tx.lake.search_path)
        found: list[tuple[str, int, bool]] = []
        for schema in schemas:
            for t in cat.tables.values():
                if t.schema != schema:
                    continue
                found += [(fk.name, fk.oid, fk.deferrable) for fk in t.foreign_keys if fk.name == rv.relname]
                keys = [t.pkey_name] if t.primary_key else []
                keys += [ix.name for ix in t.indexes if ix.constraint]
                keys += [c.name for c in t.checks]
                found += [(n, 0, False) for n in keys if n == rv.relname]
            if found:
                break
        if not found:
            raise PgError("42704", f'constraint "{rv.relname}" does not exist')
        for name, oid, deferrable in found:
            if not deferrable:
                raise PgError("42809", f'constraint "{name}" is not deferrable')
            out.append(oid)
    return out
