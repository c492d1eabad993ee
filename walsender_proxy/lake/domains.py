"""Domain constraints enforced on every write of a column declared with a domain, as
PostgreSQL's ``CoerceToDomain`` checks a value coerced to the column's type (an INSERT's or
UPDATE's new value, a COPY field, a streamed row, a Spark changeset), and the rows already
stored checked by ALTER DOMAIN … ADD CONSTRAINT and SET NOT NULL.

A domain check is kept like a table's (:class:`decoding.catalog.Check`), its value named as
the column of attnum :data:`decoding.catalog.DOMAIN_VALUE`; here it is evaluated by DuckDB
over each written column of that domain. A write is held to the newest committed domain
definition with the transaction's own DDL (PostgreSQL's type cache).

PostgreSQL coerces a row's values in column order before it checks the table's own
constraints, so a domain's error comes first; within one value, NOT NULL before the checks,
the checks of the innermost domain first, each domain's in name order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from decoding.catalog import (
    DOMAIN_VALUE,
    Catalog,
    Check,
    CompositeType,
    Domain,
    EnumType,
    Table,
    is_dropped_attribute,
)
from decoding.pgtypes import ColumnType
from walsender_proxy.lake.errors import LakeError
from walsender_proxy.lake.files import OWN_CSN

if TYPE_CHECKING:
    from walsender_proxy.lake.tx_services import OpenTransaction

_INDEX = "__wpx_domain_row"


def has_domains(t: Table) -> bool:
    return any(c.type.domain for c in t.columns)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def duck_sql(check: Check, value: str) -> str:
    """The check's DuckDB condition over the SQL expression ``value``."""
    return Check.fill(check.duck, {DOMAIN_VALUE: value})


def constraints(cat: Catalog, oid: int) -> list[Check | None]:
    """What a value coerced to domain ``oid`` is held to, in the order PostgreSQL checks
    it: NOT NULL (None) if a domain of the chain has it, then each domain's checks,
    innermost first. (The errors name domain ``oid`` itself, as PostgreSQL's do.)"""
    chain = cat.domain_chain(oid)
    out: list[Check | None] = [None] if any(d.not_null for d in chain) else []
    for d in reversed(chain):
        out += sorted(d.checks, key=lambda c: c.name)
    return out


def not_null_error(d: Domain) -> LakeError:
    return LakeError("23502", f"domain {shown(d)} does not allow null values").about(schema=d.schema)


def check_error(d: Domain, c: Check) -> LakeError:
    return LakeError("23514", f'value for domain {shown(d)} violates check constraint "{c.name}"').about(
        schema=d.schema, constraint=c.name
    )


def newest(tx: OpenTransaction) -> Catalog:
    """The catalog a write is held to: the newest committed one, with the transaction's
    own DDL."""
    lake = tx.lake
    return tx.ddl_catalog() if tx.changes_catalog else lake.catalog_at(lake.clock.last_assigned)


def check_rows(tx: OpenTransaction, t: Table, data: pa.Table) -> None:
    """Raise the error of the first written value (row by row, column by column) that its
    column's domain refuses; nothing for a table without domain columns."""
    if not data.num_rows or not has_domains(t):
        return
    cat = newest(tx)
    tests: list[tuple[int, str, Domain, Check | None]] = []  # (column position, condition, …)
    for pos, col in enumerate(t.columns):
        if not col.type.domain or col.physical not in data.column_names:
            continue
        v = _quoted(col.physical)
        d = cat.domains[col.type.domain]
        for c in constraints(cat, col.type.domain):
            fails = f"{v} IS NULL" if c is None else f"NOT coalesce(({duck_sql(c, v)}), true)"
            tests.append((pos, fails, d, c))
    if not tests:
        return
    rows = data.append_column(_INDEX, pa.array(np.arange(data.num_rows, dtype=np.int64)))
    cols = ", ".join(f"min(CASE WHEN {fails} THEN {_INDEX} END)" for _, fails, _, _ in tests)
    cur = tx.lake.store.cursor()
    try:
        cur.register("_wpx_domain_rows", rows)
        got = cur.sql(f"SELECT {cols} FROM _wpx_domain_rows").fetchall()[0]
    finally:
        cur.close()
    first: tuple[int, int, int] | None = None
    for k, ((pos, _, _, _), at) in enumerate(zip(tests, got, strict=True)):
        if at is not None and (first is None or (int(at), pos, k) < first):
            first = (int(at), pos, k)
    if first is None:
        return
    _, _, d, c = tests[first[2]]
    raise not_null_error(d) if c is None else check_error(d, c)


def validate(tx: OpenTransaction, cat: Catalog, domain: int, check: Check | None) -> None:
    """ALTER DOMAIN … ADD CONSTRAINT (``check``) or SET NOT NULL (None) over the rows already
    stored in every column declared with ``domain`` or a domain over it: PostgreSQL's
    ``validateDomainConstraint`` errors."""
    lake = tx.lake
    users = {o for o in cat.domains if domain in [d.oid for d in cat.domain_chain(o)]}
    for t in sorted(cat.tables.values(), key=lambda t: t.oid):
        cols = [c for c in t.columns if c.type.domain in users]
        if not cols:
            continue
        q = lake.store.snapshot_query(t, OWN_CSN - 1, own=tx.own_parts(t.oid), with_rid=True, physical=True)
        cur = lake.store.cursor()
        try:
            q.register(cur)
            for col in cols:
                v = _quoted(col.physical)
                fails = f"{v} IS NULL" if check is None else f"NOT coalesce(({duck_sql(check, v)}), true)"
                if cur.sql(f"SELECT 1 FROM ({q.sql}) WHERE {fails} LIMIT 1").fetchall():
                    if check is None:
                        raise LakeError("23502", f'column "{col.name}" of table "{t.name}" contains null values')
                    raise LakeError(
                        "23514", f'column "{col.name}" of table "{t.name}" contains values that violate the new constraint'
                    )
        finally:
            cur.close()


@dataclass(frozen=True, slots=True)
class Dependent:
    """A domain over user type ``on`` (``column`` empty), or column ``column`` of ``table``
    declared with it; ``array``: through the type's array type (``rainbow[]``)."""

    on: int
    domain: Domain | None = None
    table: Table | None = None
    column: str = ""
    array: bool = False
    #: The composite type whose attribute ``column`` is declared with the type.
    composite: CompositeType | None = None

    def describe(self) -> str:
        """As getObjectDescription names it."""
        if self.domain is not None:
            return f"type {shown(self.domain)}"
        if self.composite is not None:
            return f"column {self.column} of composite type {shown(self.composite)}"
        assert self.table is not None
        return f"column {self.column} of table {self.table.name}"


def shown(d: Domain | EnumType | CompositeType) -> str:
    """A user type's name as a message gives it: qualified outside public (format_type_be
    qualifies a type its search path does not find)."""
    return d.name if d.schema == "public" else d.qualified_name


def user_type(cat: Catalog, oid: int) -> Domain | EnumType | CompositeType:
    """The domain, enum or composite type ``oid``."""
    return cat.domains.get(oid) or cat.enums.get(oid) or cat.composites[oid]


def _declared_with(ctype: ColumnType, oid: int, array: bool) -> bool:
    """Whether a column or domain base of type ``ctype`` is declared with user type ``oid``
    directly (an enum's values or, ``array``, arrays of them; a domain)."""
    if ctype.domain:
        return ctype.domain == oid and not array
    return (ctype.is_enum or ctype.is_composite) and ctype.base.oid == oid and ctype.is_array == array


def _over(cat: Catalog, d: Domain, oid: int, array: bool) -> bool:
    """Whether domain ``d`` is over user type ``oid`` (``array``: over its array type)."""
    if oid in cat.domains:
        return d.parent == oid and not array
    return not d.parent and _declared_with(d.base, oid, array)


def dependent_objects(
    cat: Catalog, oid: int, skip: frozenset[int] = frozenset(), tables_going: frozenset[int] = frozenset()
) -> list[Dependent]:
    """What depends on user type ``oid`` (a domain or an enum), in the order DROP's DETAIL
    and NOTICE list it: findDependentObjects visits an object's dependents by OID
    descending (a table's columns by attnum), each one's own dependents before it, and
    reportDependentObjects lists what it found in reverse. The type's array type (its OID
    just below the type's, as PostgreSQL assigns it first) stands between: what uses
    ``type[]`` hangs from it. Domains in ``skip`` (dropped with it) and the columns of
    ``tables_going`` (which go whole) are left out."""
    found: list[Dependent] = []

    def visit(on: int) -> None:
        children: list[tuple[float, int, Dependent | None]] = [(on - 0.5, 0, None)]  # (the array type)
        for array in (False, True):
            children += [(d.oid, 0, Dependent(on, domain=d, array=array)) for d in cat.domains.values() if d.oid not in skip and _over(cat, d, on, array)]
            children += [
                (t.oid, c.attnum, Dependent(on, table=t, column=c.name, array=array))
                for t in cat.tables.values()
                if t.oid not in tables_going
                for c in t.columns
                if _declared_with(c.type, on, array)
            ]
            children += [
                (ct.relid, attnum, Dependent(on, composite=ct, column=name, array=array))
                for ct in cat.composites.values()
                if ct.oid not in skip
                for attnum, (name, ctype) in enumerate(ct.attributes, 1)
                if _declared_with(ctype, on, array) and not is_dropped_attribute(name)
            ]
        array_users = sorted((x for x in children if x[2] is not None and x[2].array), key=lambda x: (-x[0], x[1]))
        for _, _, dep in sorted((x for x in children if x[2] is None or not x[2].array), key=lambda x: (-x[0], x[1])):
            for sub in [dep] if dep is not None else [d for _, _, d in array_users]:
                assert sub is not None
                if sub.domain is not None:
                    visit(sub.domain.oid)
                found.append(sub)

    visit(oid)
    return found[::-1]


def dependents(
    cat: Catalog, oid: int, skip: frozenset[int] = frozenset(), tables_going: frozenset[int] = frozenset()
) -> Sequence[str]:
    """DROP's 2BP01 DETAIL lines for user type ``oid`` (see :func:`dependent_objects`)."""
    return [
        f"{dep.describe()} depends on type {shown(user_type(cat, dep.on))}{'[]' if dep.array else ''}"
        for dep in dependent_objects(cat, oid, skip, tables_going)
    ]


def refuse_if_used(cat: Catalog, oids: Sequence[int], name: str) -> None:
    """DROP's 2BP01 while a column, an attribute or a domain not dropped with the user types
    ``oids`` uses one (the SQL layer drops those first for CASCADE); ``name``: how the
    message names the one type of a single drop."""
    # (a list's objects report in reverse, as PostgreSQL's findDependentObjects lists them)
    deps = [line for oid in reversed(oids) for line in dependents(cat, oid, skip=frozenset(oids))]
    if deps:
        raise LakeError(
            "2BP01",
            "cannot drop desired object(s) because other objects depend on them"  # (findDependentObjects, for a list)
            if len(oids) > 1
            else f"cannot drop type {name} because other objects depend on it",
            detail="\n".join(deps),
            hint="Use DROP ... CASCADE to drop the dependent objects too.",
        )

