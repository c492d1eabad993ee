"""CREATE TYPE … AS (…) and DROP TYPE of composite types (PostgreSQL 15's
``DefineCompositeType`` and ``RemoveTypeById``), and the names of composite types where a
query names a type.

A composite type lives in the catalog (:class:`decoding.catalog.CompositeType`); its
values are rows in a query (``walsender_proxy/sql/composite_values.py``). An attribute
may be of a built-in type, an array of one, an enum, a domain, or another composite type
(or an array of one).

ALTER TYPE … RENAME TO and OWNER TO are taken (the latter in ``role_sql``). Refused by
name (0A000): a lake column of a composite type, an attribute of a table's row type,
COLLATE on an attribute, ALTER TYPE … ADD/DROP/ALTER/RENAME ATTRIBUTE, SET SCHEMA.
"""

from __future__ import annotations

from pglast import ast

from decoding.catalog import CompositeType
from decoding.errors import PgError
from decoding.pgtypes import parse_type
from walsender_proxy.backend.outcomes import Notice
from walsender_proxy.lake import Transaction
from walsender_proxy.sql.ddl_names import cascaded, unsupported
from walsender_proxy.sql.domain_sql import column_type_text
from walsender_proxy.sql.type_dependents import drop_dependents

_SERIALS = frozenset({"serial", "serial4", "bigserial", "serial8", "smallserial", "serial2"})


def lookup(tx: Transaction, names: list[str]) -> CompositeType | None:
    """The composite type a (possibly qualified) type name names; None when it names none."""
    if len(names) > 2:
        return None
    return tx.composite(".".join(names))


def create(tx: Transaction, s: ast.CompositeTypeStmt) -> str:

    rv = s.typevar
    if rv.catalogname is not None and rv.catalogname != tx.lake.database:
        raise PgError("0A000", f'cross-database references are not implemented: "{rv.catalogname}.{rv.schemaname}.{rv.relname}"')
    schema = rv.schemaname or tx.creation_schema()
    attributes = []
    for cd in s.coldeflist or ():
        if cd.collClause is not None:
            raise unsupported("COLLATE on an attribute of a composite type")
        tn = cd.typeName
        if len(tn.names) == 1 and tn.names[0].sval in _SERIALS:  # (only CREATE TABLE knows them)
            raise PgError("42704", f'type "{tn.names[0].sval}" does not exist')
        ctype = parse_type(column_type_text(tx, cd.typeName, composite=True))
        attributes.append((cd.colname, ctype))
    tx.create_composite(CompositeType(0, 0, 0, schema, rv.relname, tuple(attributes)))
    return "CREATE TYPE"


def drop(tx: Transaction, dropped: list[CompositeType], cascade: bool, notices: list[Notice] | None = None) -> None:
    """DROP TYPE of composite types. CASCADE first drops the attributes of other composite
    types (and the domains and columns) declared with them, as PostgreSQL's NOTICE names
    them; without it, those are the lake's 2BP01."""
    if cascade:
        gone = drop_dependents(tx, [c.oid for c in dropped])
        if notices is not None:
            cascaded(notices, [line for _, line in gone])
    tx.drop_composites([c.oid for c in dropped])


def refuse_alter(tx: Transaction, s: ast.AlterTableStmt) -> None:
    """ALTER TYPE … ADD/DROP/ALTER ATTRIBUTE: 42P01 for no relation of the name, 42809 for
    a relation that is not a composite type, else refused by name."""
    rv = s.relation
    names = [n for n in (rv.schemaname, rv.relname) if n]
    if lookup(tx, names) is None:
        cat = tx.catalog()
        schemas = [rv.schemaname] if rv.schemaname else tx.search_path or tx.lake.search_path
        if any(cat.relation_exists(sch, rv.relname) for sch in schemas):
            raise PgError("42809", f'"{rv.relname}" is not a composite type')
        raise PgError("42P01", f'relation "{".".join(names)}" does not exist')
    raise unsupported("ALTER TYPE … ADD/DROP/ALTER ATTRIBUTE")


__all__ = ["create", "drop", "lookup", "refuse_alter"]
