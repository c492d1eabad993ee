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

from decoding.catalog import DOMAIN_VALUE, Catalog, Check, Domain, Table
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
    return LakeError("23502", f"domain {d.name} does not allow null values").about(schema=d.schema)


def check_error(d: Domain, c: Check) -> LakeError:
    return LakeError("23514", f'value for domain {d.name} violates check constraint "{c.name}"').about(
        schema=d.schema, constraint=c.name
    )


def _newest(tx: OpenTransaction) -> Catalog:
    lake = tx.lake
    return tx.ddl_catalog() if tx.changes_catalog else lake.catalog_at(lake.clock.last_assigned)


def check_rows(tx: OpenTransaction, t: Table, data: pa.Table) -> None:
    """Raise the error of the first written value (row by row, column by column) that its
    column's domain refuses; nothing for a table without domain columns."""
    if not data.num_rows or not has_domains(t):
        return
    cat = _newest(tx)
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
    """A domain over domain ``on`` (``column`` empty), or column ``column`` of ``table``
    declared with it."""

    on: int
    domain: Domain | None = None
    table: Table | None = None
    column: str = ""

    def describe(self) -> str:
        """As getObjectDescription names it."""
        if self.domain is not None:
            return f"type {shown(self.domain)}"
        assert self.table is not None
        return f"column {self.column} of table {self.table.name}"


def shown(d: Domain) -> str:
    """A domain's name as a message gives it: qualified outside public (format_type_be
    qualifies a type its search path does not find)."""
    return d.name if d.schema == "public" else d.qualified_name


def dependent_objects(
    cat: Catalog, oid: int, skip: frozenset[int] = frozenset(), tables_going: frozenset[int] = frozenset()
) -> list[Dependent]:
    """What depends on domain ``oid``, depth first and in the order of the dependents'
    OIDs, as findDependentObjects reports them: the domains over it (but those in
    ``skip``, dropped with it) each followed by what depends on it, and the columns
    declared with it (but those of ``tables_going``, which go whole)."""
    found: list[tuple[int, int, Dependent]] = [
        (d.oid, 0, Dependent(oid, domain=d)) for d in cat.domains.values() if d.parent == oid and d.oid not in skip
    ]
    found += [
        (t.oid, c.attnum, Dependent(oid, table=t, column=c.name))
        for t in cat.tables.values()
        if t.oid not in tables_going
        for c in t.columns
        if c.type.domain == oid
    ]
    out: list[Dependent] = []
    for _, _, dep in sorted(found, key=lambda x: (x[0], x[1])):
        out.append(dep)
        if dep.domain is not None:
            out += dependent_objects(cat, dep.domain.oid, skip, tables_going)
    return out


def dependents(
    cat: Catalog, oid: int, skip: frozenset[int] = frozenset(), tables_going: frozenset[int] = frozenset()
) -> Sequence[str]:
    """DROP's 2BP01 DETAIL lines for domain ``oid`` (see :func:`dependent_objects`)."""
    return [
        f"{dep.describe()} depends on type {shown(cat.domains[dep.on])}"
        for dep in dependent_objects(cat, oid, skip, tables_going)
    ]
