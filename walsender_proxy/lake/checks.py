"""CHECK constraints enforced on every write, as PostgreSQL's ``ExecConstraints`` does for
each new row version (INSERT, UPDATE, COPY, ON CONFLICT, a streamed insert, a Spark
changeset: whatever reaches ``Transaction._insert``, ``_insert_streamed`` or
``update_rows``), and the rows already there checked by ADD and VALIDATE
(``validateCheckConstraint``).

A check is kept with a DuckDB expression the SQL layer translated from PostgreSQL's at DDL
time (:class:`decoding.catalog.Check`): the lake evaluates it over the written Arrow rows,
its columns named by their physical names. A row fails when the expression is FALSE (NULL
passes). Checks are tried in name order, as the relcache sorts them, and the first row
that fails one is reported, as PostgreSQL's row-by-row execution reports it.

A write is held to the checks of the newest committed catalog with the transaction's own
DDL (PostgreSQL's relcache, whatever the snapshot) and to those another open transaction's
ADD CONSTRAINT is making (PostgreSQL's writer would wait on its AccessExclusiveLock).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from decoding.catalog import Check, Table
from walsender_proxy.lake.errors import LakeError, failing_row
from walsender_proxy.lake.files import OWN_CSN

if TYPE_CHECKING:
    from walsender_proxy.lake.tx_services import OpenTransaction

_INDEX = "__wpx_check_row"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def duck_sql(check: Check, physical: Mapping[int, str]) -> str | None:
    """The check's DuckDB expression over columns named ``physical[attnum]`` (None when
    the table version has no longer one of its columns)."""
    if any(n not in physical for n in check.attnums):
        return None
    return Check.fill(check.duck, {n: _quoted(p) for n, p in physical.items()})


def _failing(expr: str) -> str:
    """A row fails a check when its expression is FALSE; NULL passes."""
    return f"NOT coalesce(({expr}), true)"


def binding(t: Table, check: Check) -> None:
    """Bind the check's DuckDB expression against ``t``'s stored row type (no rows): the
    translation is checked when the constraint is made, not at the first write."""
    import duckdb

    sql = duck_sql(check, {c.attnum: c.physical for c in t.columns})
    assert sql is not None
    con = duckdb.connect()
    try:
        con.register("_rows", t.arrow_schema(with_rid=False).empty_table())
        con.sql(f"SELECT {_failing(sql)} FROM _rows").fetchall()
    except duckdb.Error as e:
        raise LakeError(
            "0A000", f"CHECK constraint \"{check.name}\" ({e.__class__.__name__}) is not supported by walsender-proxy"
        ) from None
    finally:
        con.close()


def held_to(tx: OpenTransaction, t: Table) -> list[tuple[Check, Table]]:
    """The checks a write to ``t`` is held to, each with the table version it is of, in
    name order (a constraint once: the newest version's)."""
    lake = tx.lake
    newest = tx.ddl_catalog() if tx.changes_catalog else lake.catalog_at(lake.clock.last_assigned)
    versions = [newest.tables.get(t.oid, t)]
    owner = lake.catalog_owner
    if owner is not None and owner is not tx:
        making = owner.ddl_catalog().tables.get(t.oid)
        if making is not None and making.checks:
            versions.append(making)
    found: dict[int, tuple[Check, Table]] = {}
    for v in versions:
        for c in v.checks:
            found.setdefault(c.oid, (c, v))
    return sorted(found.values(), key=lambda x: x[0].name)


def first_violation(tx: OpenTransaction, t: Table, data: pa.Table) -> tuple[int, Check] | None:
    """The first row of ``data`` (physical names) that fails a check, and the check it
    fails first (by name); None when every row passes."""
    if not data.num_rows:
        return None
    checks = held_to(tx, t) if any_held(tx, t) else []
    exprs: list[tuple[Check, str]] = []
    rows = data
    for c, v in checks:
        physical = {col.attnum: col.physical for col in v.columns}
        sql = duck_sql(c, physical)
        if sql is None:
            continue
        for col in v.columns:  # (a column added since the writer's snapshot: NULL in its rows)
            if col.attnum in c.attnums and col.physical not in rows.column_names:
                rows = rows.append_column(col.physical, pa.nulls(rows.num_rows, col.type.arrow))
        exprs.append((c, sql))
    if not exprs:
        return None
    rows = rows.append_column(_INDEX, pa.array(np.arange(data.num_rows, dtype=np.int64)))
    cols = ", ".join(f"min(CASE WHEN {_failing(sql)} THEN {_INDEX} END)" for _, sql in exprs)
    cur = tx.lake.store.cursor()
    try:
        cur.register("_wpx_rows", rows)
        got = cur.sql(f"SELECT {cols} FROM _wpx_rows").fetchall()[0]
    except Exception as e:  # (a translation DuckDB cannot run: refused, never let pass)
        raise LakeError("XX000", f"CHECK constraint evaluation failed: {str(e).splitlines()[0]}") from None
    finally:
        cur.close()
    assert got is not None
    best: tuple[int, Check] | None = None
    for (c, _), at in zip(exprs, got, strict=True):
        if at is not None and (best is None or at < best[0]):
            best = (int(at), c)
    return best


def any_held(tx: OpenTransaction, t: Table) -> bool:
    """Whether a write to ``t`` may be held to a check: ``t`` has one, or a newer catalog
    may give it one (the usual write has none anywhere and costs nothing more)."""
    if t.checks:
        return True
    lake = tx.lake
    newest = lake.catalog_at(lake.clock.last_assigned).tables.get(t.oid)
    if newest is not None and newest is not t and newest.checks:
        return True
    if tx.changes_catalog:
        return True
    owner = lake.catalog_owner
    return owner is not None and owner is not tx


def violation(t: Table, check: Check, row: Sequence[str | None]) -> LakeError:
    """23514 for a new row, with PostgreSQL's DETAIL of the row's values."""

    return LakeError(
        "23514",
        f'new row for relation "{t.name}" violates check constraint "{check.name}"',
        detail=failing_row(row),
    ).about(schema=t.schema, table=t.name, constraint=check.name)


def validate(tx: OpenTransaction, t: Table, checks: Sequence[Check]) -> None:
    """ADD CONSTRAINT / VALIDATE CONSTRAINT over the rows already there: the newest
    committed state with the transaction's own changes (other writers were refused by the
    caller's table lock). 23514 naming the first check (in ``checks``' order) some row
    fails."""
    lake = tx.lake
    physical = {c.attnum: c.physical for c in t.columns}
    q = lake.store.snapshot_query(t, OWN_CSN - 1, own=tx.own_parts(t.oid), with_rid=True, physical=True)
    cur = lake.store.cursor()
    try:
        q.register(cur)
        for c in checks:
            sql = duck_sql(c, physical)
            if sql is None:
                continue
            if cur.sql(f"SELECT 1 FROM ({q.sql}) WHERE {_failing(sql)} LIMIT 1").fetchall():
                raise LakeError(
                    "23514", f'check constraint "{c.name}" of relation "{t.name}" is violated by some row'
                ).about(schema=t.schema, table=t.name, constraint=c.name)
    finally:
        cur.close()
