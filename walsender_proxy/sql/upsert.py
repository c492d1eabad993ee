"""INSERT … ON CONFLICT: PostgreSQL's upsert over one unique key of the table.

The proposed rows are computed as for a plain INSERT; the arbiter is the primary key or a
unique index (named by its columns, by ``ON CONSTRAINT <name>``, or the primary key implied
by a DO NOTHING without a target); each proposed row whose key is already in the table conflicts. DO NOTHING inserts
the others (a key proposed twice is inserted once, as the second then conflicts with the
first); DO UPDATE evaluates its SET list and WHERE over the existing row and the proposed
one (``EXCLUDED``) in DuckDB and updates the rows it selects; a row it would touch twice is
PostgreSQL's 21000. Errors are PostgreSQL's: 42P10 for a target that matches no unique
constraint, 42704 for an unknown constraint name, 42601 for DO UPDATE without a target.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa
from pglast import ast, enums
from pglast.stream import RawStream

from decoding.catalog import RID, Catalog, Table
from decoding.errors import PgError
from walsender_proxy.sql.defaults import value_sql
from walsender_proxy.sql.identity import check_update

if TYPE_CHECKING:
    from walsender_proxy.lake import Transaction

__all__ = ["POS", "arbiter", "positions", "split"]

#: The column that carries each proposed row's position through the split.
POS = "__wp_pos"


class KeyLookup(Protocol):
    """What the split needs of the engine: the proposed keys the table already holds."""

    def existing_keys(
        self, tx: Transaction, t: Table, key: Sequence[str], proposed: pa.Table, *, not_distinct: bool = False
    ) -> list[tuple[Any, ...]]: ...


def positions(rows: pa.Table) -> np.ndarray:
    return rows.column(POS).to_numpy()

_NO_MATCH = PgError("42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification")


def arbiters(t: Table, clause: ast.OnConflictClause) -> tuple[tuple[str, ...], ...]:
    """The keys a conflict is decided on: the one the clause names (the primary key or a
    unique index), or — DO NOTHING without a target — every unique index of the table,
    as PostgreSQL's arbiters are then; none when nothing can conflict."""
    infer = clause.infer
    if infer is None and clause.action != enums.OnConflictAction.ONCONFLICT_UPDATE:
        keys = [tuple(t.primary_key)] if t.primary_key else []
        if any(ix.unique and ix.predicate is not None for ix in t.indexes):
            raise PgError("0A000", "ON CONFLICT DO NOTHING without a target on a table with a partial unique index is not supported by walsender-proxy")
        keys += [_usable(ix) for ix in t.indexes if ix.unique]
        return tuple(dict.fromkeys(keys))
    key = arbiter(t, clause)
    return (key,) if key else ()


def arbiter(t: Table, clause: ast.OnConflictClause) -> tuple[str, ...]:
    """The key columns the conflict is decided on (the primary key or a unique index), or
    () when nothing can conflict (DO NOTHING on a table without one)."""
    pk = tuple(t.primary_key or ())
    uniques = [(ix.name, ix.columns, ix) for ix in t.indexes if ix.unique]
    infer = clause.infer
    update = clause.action == enums.OnConflictAction.ONCONFLICT_UPDATE
    if infer is None:
        if update:
            raise PgError(
                "42601",
                "ON CONFLICT DO UPDATE requires inference specification or constraint name",
                hint="For example, ON CONFLICT (column_name).",
            )
        return pk
    if infer.conname is not None:
        if pk and infer.conname == t.pkey_name:
            return pk
        ix = t.index(infer.conname)
        if ix is None or not ix.constraint:
            raise PgError("42704", f'constraint "{infer.conname}" for table "{t.name}" does not exist')
        return _usable(ix)
    names = []
    for elem in infer.indexElems or ():
        if not isinstance(elem, ast.IndexElem) or elem.name is None:
            raise _NO_MATCH  # (an expression: the lake has no expression index)
        if t.column(elem.name) is None:
            raise PgError("42703", f'column "{elem.name}" does not exist')
        names.append(elem.name)
    if pk and set(names) == set(pk):
        return pk
    for _name, cols, ix in uniques:
        if set(names) == set(cols) and ix.predicate is None:  # (a partial one needs the WHERE)
            return _usable(ix)
    if clause.infer.whereClause is not None:
        raise PgError("0A000", "ON CONFLICT (…) WHERE … (a partial unique index as the arbiter) is not supported by walsender-proxy")
    raise _NO_MATCH


def _usable(ix: Any) -> tuple[str, ...]:
    """A unique index as the arbiter: its columns."""
    return tuple(ix.columns)


def not_distinct(t: Table, key: tuple[str, ...]) -> bool:
    """Whether NULLs conflict on ``key``: a unique index over those columns is NULLS NOT
    DISTINCT."""
    return any(ix.unique and ix.nulls_not_distinct and tuple(ix.columns) == key for ix in t.indexes)


def _keys(data: pa.Table, t: Table, key: tuple[str, ...]) -> list[tuple[Any, ...]]:
    cols = [data.column(k).to_pylist() for k in key]
    return list(zip(*cols, strict=True)) if cols else [() for _ in range(data.num_rows)]


def split(
    engine: KeyLookup, tx: Transaction, t: Table, keys: tuple[tuple[str, ...], ...], proposed: pa.Table, update: bool
) -> tuple[pa.Table, pa.Table]:
    """(rows to insert, proposed rows that conflict with a row in the table), the proposed
    rows in storage form under the table's column names. Rows are taken in order, as
    PostgreSQL inserts them: a row whose key (on any of ``keys``) a row before it took
    conflicts with that one (DO NOTHING skips it; DO UPDATE is 21000)."""
    if not keys or not proposed.num_rows:
        return proposed, proposed.slice(0, 0)
    mine = [_keys(proposed, t, key) for key in keys]
    nnd = [not_distinct(t, key) for key in keys]
    existing = [set(engine.existing_keys(tx, t, key, proposed, not_distinct=d)) for key, d in zip(keys, nnd, strict=True)]
    seen: list[set[tuple[Any, ...]]] = [set() for _ in keys]
    insert, conflict = [], []
    for i in range(proposed.num_rows):
        # (NULL equals nothing: a key with one conflicts with no row, unless its index is
        # NULLS NOT DISTINCT; NOT NULL speaks)
        row = [(j, m[i]) for j, m in enumerate(mine) if nnd[j] or not any(v is None for v in m[i])]
        if any(k in seen[j] for j, k in row):
            if update:
                raise PgError(
                    "21000",
                    "ON CONFLICT DO UPDATE command cannot affect row a second time",
                    hint="Ensure that no rows proposed for insertion within the same command have duplicate constrained values.",
                )
            continue
        for j, k in row:
            seen[j].add(k)
        (conflict if any(k in existing[j] for j, k in row) else insert).append(i)
    take = lambda idx: proposed.take(pa.array(np.asarray(idx, dtype=np.int64)))  # noqa: E731
    return take(insert), take(conflict)


def update_sql(
    t: Table, alias: str, clause: ast.OnConflictClause, key: tuple[str, ...], target: str, cat: Catalog
) -> tuple[str, list[str]]:
    """The query over the existing rows (``alias``) joined to their proposed rows
    (``excluded``): the old row, each SET value as ``__new_<column>``, the DO UPDATE WHERE
    as ``__ok``; and the columns set."""
    sets: dict[str, str] = {}
    check_update(t, clause.targetList)
    for res in clause.targetList or ():
        if not isinstance(res, ast.ResTarget) or res.indirection or isinstance(res.val, ast.MultiAssignRef):
            raise PgError("0A000", "ON CONFLICT DO UPDATE SET of several columns at once or of array elements is not supported by walsender-proxy")
        col = t.column(res.name)
        if col is None:
            raise PgError("42703", f'column "{res.name}" of relation "{t.name}" does not exist')
        sets[col.name] = value_sql(col, cat) if isinstance(res.val, ast.SetToDefault) else RawStream()(res.val)
    news = "".join(f', ({e}) AS "__new_{n}"' for n, e in sets.items())
    ok = RawStream()(clause.whereClause) if clause.whereClause is not None else "true"
    eq = "IS NOT DISTINCT FROM" if not_distinct(t, key) else "="
    on = " AND ".join(f'"{alias}"."{k}" {eq} excluded."{k}"' for k in key)
    return f'SELECT "{alias}".*{news}, ({ok}) AS "__ok", excluded."{POS}" AS "{POS}" FROM {target} AS "{alias}" JOIN excluded ON {on}', list(sets)


def keep_columns(t: Table) -> list[str]:
    return [RID] + [c.physical for c in t.columns]
