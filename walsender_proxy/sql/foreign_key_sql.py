"""FOREIGN KEY constraints as statements write them (``REFERENCES`` of a column,
``FOREIGN KEY (…) REFERENCES`` of a table, ``ALTER TABLE … ADD / VALIDATE``) turned into
the lake's :class:`~walsender_proxy.lake.foreign_key_ddl.ForeignKeySpec`. The lake checks
and enforces them (``lake/foreign_key_ddl.py``, ``lake/foreign_keys.py``)."""

from __future__ import annotations

from pglast import ast, enums

from decoding.errors import PgError
from walsender_proxy.lake.foreign_key_ddl import ForeignKeySpec


def _unsupported(what: str) -> PgError:
    return PgError("0A000", f"{what} is not supported by walsender-proxy")


def spec(c: ast.Constraint, column: str | None = None, *, new_table: bool = False) -> ForeignKeySpec:
    """The constraint's spec (``column``: a column constraint's own column; ``new_table``:
    made by CREATE TABLE, whose empty table PostgreSQL never leaves NOT VALID)."""
    if c.fk_matchtype == "p":
        raise PgError("0A000", "MATCH PARTIAL not yet implemented")
    if c.deferrable or c.initdeferred:
        raise _unsupported("a DEFERRABLE foreign key")
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
    )


def attribute(kind: enums.ConstrType) -> bool:
    """Whether a column constraint is a DEFERRABLE-style attribute of the one before it
    (DEFERRABLE and INITIALLY DEFERRED are refused; their opposites are the default)."""
    if kind in (enums.ConstrType.CONSTR_ATTR_DEFERRABLE, enums.ConstrType.CONSTR_ATTR_DEFERRED):
        raise _unsupported("a DEFERRABLE constraint")
    return kind in (enums.ConstrType.CONSTR_ATTR_NOT_DEFERRABLE, enums.ConstrType.CONSTR_ATTR_IMMEDIATE)
