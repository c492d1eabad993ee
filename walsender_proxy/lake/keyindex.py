"""In-memory indexes for point operations: primary keys, row versions and hot rows.

Without them every single-row statement is a DuckDB query over the table's files and memory
tail (the key check of an INSERT, the target of an UPDATE by key, the write-conflict check).
These structures answer the common cases with dict lookups and say "unknown" (``None``)
whenever they cannot be sure, so the caller falls back to the exact DuckDB query:

- :class:`VersionMap` (every table): ``_rid`` → CSN of its last committed write, for commits
  applied since ``base``. "Was this row changed after snapshot S?" is a lookup when
  ``S ≥ base``. Pruned to the oldest snapshot still in use at each fold.
- :class:`KeyIndex` (tables with a primary key of hashable, PostgreSQL-equal types, up to
  ``max_rows`` rows): the newest committed state of the key, key → ``_rid``, plus the CSN of
  each key's last change since ``base`` (so a lookup at snapshot S knows whether the answer
  held at S), plus optionally the newest committed row values by ``_rid`` (a row cache, for
  UPDATE/SELECT by key without DuckDB). Built lazily from the table (one DuckDB read at the
  newest applied state) and kept up to date at each commit from the committing transaction's
  key events; a commit it cannot follow exactly (a big statement, a restored prepared
  transaction, a TRUNCATE) drops it, and the next point operation rebuilds it.

Everything here is guarded by the lake's statement lock (``Lake._dml_lock``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoding.catalog import RID, Table
from walsender_proxy.lake.store import concat_rows

if TYPE_CHECKING:
    from walsender_proxy.lake.spill import FileRows

#: Statements with more rows than this are not tracked key by key (they drop the index at
#: commit and take the DuckDB path for their own checks).
SMALL = 1024
#: A commit writing more rows than this to one table keeps its rids as one array.
BIG_COMMIT = 4096
#: Key types whose Python equality and hash are PostgreSQL's equality (``numeric`` is not:
#: it may be stored as text; ``bpchar`` ignores trailing blanks; floats have NaN = NaN).
KEY_TYPES = frozenset(
    {"int2", "int4", "int8", "text", "varchar", "date", "timestamp", "timestamptz", "bool"}
)
#: Row values kept in the row cache (their Python value round-trips through Arrow unchanged).
ROW_TYPES = KEY_TYPES | {"float4", "float8", "bytea", "time", "numeric", "json", "jsonb"}

OP_COL = "_op"
_WRITE, _DELETE, _TRUNCATE = 0, 1, 2


def key_columns(t: Table) -> tuple[str, ...] | None:
    """The primary key's physical column names, if the index can hold them."""
    if not t.primary_key:
        return None
    out = []
    for name in t.primary_key:
        c = t.column(name)
        if c is None or c.type.is_array or c.type.base.name not in KEY_TYPES:
            return None
        out.append(c.physical)
    return tuple(out)


def keys_of(rows: pa.Table, cols: Sequence[str]) -> list[Any]:
    """Python keys of ``rows``: the value for one key column, tuples for several."""
    if len(cols) == 1:
        return rows.column(cols[0]).to_pylist()
    return list(zip(*(rows.column(c).to_pylist() for c in cols), strict=True))


def row_cache_columns(t: Table) -> tuple[str, ...] | None:
    """Physical columns of a row-cache entry (None: some type is not cacheable)."""
    out = []
    for c in t.columns:
        if c.type.is_array or c.type.base.name not in ROW_TYPES:
            return None
        out.append(c.physical)
    return tuple(out)


class VersionMap:
    """``_rid`` → CSN of the last committed write, for commits with CSN > the owner's base."""

    __slots__ = ("big", "ranges", "rids", "truncated")

    def __init__(self) -> None:
        self.rids: dict[int, int] = {}
        self.big: list[tuple[int, np.ndarray]] = []
        #: (csn, lo, hi): a big INSERT's rids lo..hi, kept as a range, not 8 bytes a row.
        self.ranges: list[tuple[int, int, int]] = []
        self.truncated = 0

    def record(self, csn: int, rows: pa.Table, truncated: bool) -> None:
        if truncated:
            self.truncated = max(self.truncated, csn)
        rids = rows.column(RID)
        if rows.num_rows > BIG_COMMIT:
            self.big.append((csn, np.unique(rids.to_numpy())))
            return
        get = self.rids.get
        for r in rids.to_pylist():
            if r >= 0 and get(r, 0) < csn:
                self.rids[r] = csn

    def record_file(self, csn: int, part: FileRows) -> None:
        """A commit's rows kept in a file: a range when they are an INSERT's fresh rids,
        else their ``_rid`` column (read alone)."""
        if part.rid_range is not None:
            self.ranges.append((csn, *part.rid_range))
        else:
            self.big.append((csn, np.unique(part.rids())))

    def last_write(self, rid: int) -> int:
        c = self.rids.get(rid, 0)
        for bc, arr in self.big:
            if bc > c:
                i = np.searchsorted(arr, rid)
                if i < len(arr) and arr[i] == rid:
                    c = bc
        for rc, lo, hi in self.ranges:
            if rc > c and lo <= rid <= hi:
                c = rc
        return c

    def changed_since(self, csn: int, rids: Sequence[int]) -> bool:
        if self.truncated > csn:
            return True
        if len(rids) <= SMALL:
            get = self.rids.get
            for r in rids:
                if get(r, 0) > csn:
                    return True
        else:
            recent = np.fromiter((r for r, c in self.rids.items() if c > csn), dtype=np.int64)
            if np.isin(np.asarray(rids, dtype=np.int64), recent).any():
                return True
        if self.big or self.ranges:
            probe = np.asarray(rids, dtype=np.int64)
            for bc, arr in self.big:
                if bc > csn and np.isin(probe, arr).any():
                    return True
            for rc, lo, hi in self.ranges:
                if rc > csn and ((probe >= lo) & (probe <= hi)).any():
                    return True
        return False

    def prune(self, horizon: int) -> None:
        self.rids = {r: c for r, c in self.rids.items() if c > horizon}
        self.big = [(c, a) for c, a in self.big if c > horizon]
        self.ranges = [r for r in self.ranges if r[0] > horizon]

    def __len__(self) -> int:
        return len(self.rids) + sum(len(a) for _, a in self.big) + sum(h - lo + 1 for _, lo, h in self.ranges)


@dataclass(slots=True)
class KeyIndex:
    """The newest committed primary-key state of one table (see the module docstring)."""

    cols: tuple[str, ...]
    #: Lookups at a snapshot below this CSN cannot tell what held then.
    base: int
    map: dict[Any, int]
    #: key → CSN of the last commit that added, removed or moved the key (CSN > base).
    changed: dict[Any, int] = field(default_factory=dict)
    #: Row cache: ``_rid`` → the newest committed values (``row_cols`` order); None: off.
    rows: dict[int, tuple[Any, ...]] | None = None
    row_cols: tuple[str, ...] = ()
    #: Commits not yet in ``rows``, in order: delta rows written, or rids deleted. Turning
    #: Arrow rows into Python values is done in bulk, when a row is asked for (or often
    #: enough to keep this short), not at every commit.
    lazy: list[tuple[pa.Table | None, list[int]]] = field(default_factory=list)

    def row(self, rid: int) -> tuple[Any, ...] | None:
        """The newest committed values of ``rid`` (None: not cached)."""
        if self.rows is None:
            return None
        if self.lazy:
            self.materialize()
        return self.rows.get(rid)

    def materialize(self) -> None:
        if self.rows is None:
            self.lazy = []
            return
        batch: list[pa.Table] = []
        for tbl, deleted in [*self.lazy, (None, [])]:
            if tbl is not None:
                batch.append(tbl)
                continue
            if batch:
                # One chunk first: to_pylist over many one-row chunks costs more than
                # copying them together and converting that.
                data = batch[0] if len(batch) == 1 else concat_rows(batch).combine_chunks()
                self.rows.update(_rows_by_rid(data, self.row_cols))
                batch = []
            for rid in deleted:
                self.rows.pop(rid, None)
        self.lazy = []

    def apply(
        self,
        csn: int,
        events: Iterable[tuple[int, int, Any, Any]],
        written: pa.Table | None,
    ) -> None:
        """A commit's key events ``(subxid, rid, old_key, new_key)`` in statement order, and
        the delta rows it wrote (for the row cache)."""
        m, ch = self.map, self.changed
        deleted = []
        for _, rid, old, new in events:
            if old is not None and old != new and m.get(old) == rid:
                del m[old]
                ch[old] = csn
            if new is not None:
                if m.get(new) != rid:
                    ch[new] = csn
                m[new] = rid
            else:
                deleted.append(rid)
        if self.rows is not None:
            if written is not None:
                self.lazy.append((written, []))
            if deleted:
                self.lazy.append((None, deleted))
            if len(self.lazy) >= 2048:
                self.materialize()

    def lookup(self, key: Any, csn: int) -> tuple[bool, int | None]:
        """(known, rid) of ``key`` in the newest state, known only if that mapping already
        held at snapshot ``csn`` (the caller still checks the row's own version)."""
        if csn < self.base or self.changed.get(key, 0) > csn:
            return False, None
        return True, self.map.get(key)

    def prune(self, horizon: int) -> None:
        if horizon > self.base:
            self.changed = {k: c for k, c in self.changed.items() if c > horizon}
            self.base = horizon


@dataclass(slots=True)
class OwnKeys:
    """One transaction's own key state for one table, from its key events: the newest own
    version of each ``_rid`` it wrote (its key, None if deleted) and the keys it holds."""

    newest: dict[int, Any]
    live: dict[Any, set[int]]

    @classmethod
    def build(cls, events: Iterable[tuple[int, int, Any, Any]]) -> OwnKeys:
        own = cls({}, {})
        own.add(events)
        return own

    def add(self, events: Iterable[tuple[int, int, Any, Any]]) -> None:
        newest, live = self.newest, self.live
        for _, rid, _old, new in events:
            prev = newest.get(rid)
            if prev is not None:
                s = live.get(prev)
                if s is not None:
                    s.discard(rid)
                    if not s:
                        del live[prev]
            newest[rid] = new
            if new is not None:
                live.setdefault(new, set()).add(rid)


@dataclass(slots=True)
class PendingWrites:
    """Keys of every row version a transaction has written (not yet committed) to a table:
    a set for small statements, key columns for big ones."""

    keys: set[Any]
    big: list[pa.Table]

    def hit(self, keys: Sequence[Any], cols: Sequence[str]) -> Any:
        """The first of ``keys`` present here, or None; raises LookupError if unknown."""
        for k in keys:
            if k in self.keys:
                return k
        for tbl in self.big:
            if len(cols) != 1:
                raise LookupError
            found = pc.is_in(pa.array(keys, tbl.schema.field(cols[0]).type), value_set=tbl.column(cols[0]))
            for k, f in zip(keys, found.to_pylist(), strict=True):
                if f:
                    return k
        return None


class PointIndexes:
    """A lake's version maps and key indexes (guarded by ``Lake._dml_lock``)."""

    def __init__(self, base_csn: int, max_rows: int, row_cache_rows: int) -> None:
        #: Version lookups at a snapshot below this are unknown.
        self.base = base_csn
        self.max_rows = max_rows
        self.row_cache_rows = row_cache_rows
        self.versions: dict[int, VersionMap] = {}
        #: relid → index, or None when the table cannot have one (checked once per shape).
        #: relid → index, or _NoIndex when the table is too big (or has NULL keys).
        self.keys: dict[int, KeyIndex | _NoIndex] = {}

    # -- versions ------------------------------------------------------------------------
    def changed_since(self, relid: int, csn: int, rids: Sequence[int]) -> bool | None:
        """Whether a commit with CSN > ``csn`` wrote one of ``rids`` (or truncated the
        table); None when the map does not reach back to ``csn``."""
        if csn < self.base:
            return None
        vm = self.versions.get(relid)
        return False if vm is None else vm.changed_since(csn, rids)

    def last_write(self, relid: int, rid: int, csn: int) -> int | None:
        """CSN of the last commit writing ``rid`` if it is after ``csn``, else 0; None when
        unknown."""
        if csn < self.base:
            return None
        vm = self.versions.get(relid)
        if vm is None:
            return 0
        if vm.truncated > csn:
            return vm.truncated
        c = vm.last_write(rid)
        return c if c > csn else 0

    # -- keys ----------------------------------------------------------------------------
    def key_index(
        self,
        t: Table,
        build: Callable[[tuple[str, ...], tuple[str, ...]], pa.Table | None],
        csn: int,
    ) -> KeyIndex | None:
        """The table's index, built now if need be (``build(key_cols, row_cols)`` reads the
        newest applied state: ``_rid`` plus those columns). ``csn``: the newest CSN assigned,
        the index's base. None: the table cannot have one (key types, size)."""
        cols = key_columns(t) if self.max_rows > 0 else None
        if cols is None:
            return None
        rcols = row_cache_columns(t)
        idx = self.keys.get(t.oid)
        if isinstance(idx, _NoIndex):
            if idx.cols == cols:
                return None
        elif idx is not None and idx.cols == cols and (idx.rows is None or idx.row_cols == rcols):
            return idx
        data = build(cols, rcols or ())
        if data is None:
            self.keys[t.oid] = _NoIndex(cols)
            return None
        keys = keys_of(data, cols)
        if data.num_rows > self.max_rows or any(
            k is None or (isinstance(k, tuple) and None in k) for k in keys
        ):
            self.keys[t.oid] = _NoIndex(cols)  # stays on the DuckDB path until TRUNCATE
            return None
        rids = data.column(RID).to_pylist()
        idx = KeyIndex(cols, csn, dict(zip(keys, rids, strict=True)))
        if (
            rcols is not None
            and data.num_rows <= self.row_cache_rows
            and set(rcols) <= set(data.schema.names)
        ):
            idx.rows = _rows_by_rid(data, rcols)
            idx.row_cols = rcols
        self.keys[t.oid] = idx
        return idx

    def drop_keys(self, relid: int) -> None:
        self.keys.pop(relid, None)

    # -- commit and pruning --------------------------------------------------------------
    def on_commit(
        self,
        csn: int,
        per_table: dict[int, pa.Table],
        events: dict[int, list[tuple[int, int, Any, Any]]],
        inexact: set[int],
        files: dict[int, list[FileRows]] | None = None,
    ) -> None:
        """A commit was applied: ``per_table`` its delta rows in memory and ``files`` those
        in files (spill.py), ``events`` its key events, ``inexact`` the tables whose events
        are incomplete. A table with rows in files had big statements: its index is
        dropped, as for any statement too big to follow."""
        for relid, parts in (files or {}).items():
            vm = self.versions.get(relid)
            if vm is None:
                vm = self.versions[relid] = VersionMap()
            for part in parts:
                vm.record_file(csn, part)
            if not isinstance(self.keys.get(relid), _NoIndex):
                self.keys.pop(relid, None)  # rebuilt at the next point operation
        for relid, rows in per_table.items():
            vm = self.versions.get(relid)
            if vm is None:
                vm = self.versions[relid] = VersionMap()
            col = rows.column(OP_COL)
            if rows.num_rows <= 16:
                opl = col.to_pylist()
                truncated, writes = _TRUNCATE in opl, opl.count(_WRITE)
            else:
                ops = col.to_numpy()
                truncated, writes = bool((ops == _TRUNCATE).any()), int((ops == _WRITE).sum())
            vm.record(csn, rows, truncated)
            idx = self.keys.get(relid)
            if idx is None:
                continue
            if isinstance(idx, _NoIndex):
                if vm.truncated == csn:
                    del self.keys[relid]  # emptied: worth another look
                continue
            if (
                relid in inexact
                or relid not in events  # a restored prepared transaction: no events kept
                or rows.num_rows > SMALL
                or vm.truncated == csn
            ):
                del self.keys[relid]  # rebuilt at the next point operation
                continue
            written = None
            if idx.rows is not None and writes:
                names = rows.schema.names
                if names[4:] == list(idx.row_cols) or set(idx.row_cols) <= set(names):
                    written = (
                        rows
                        if writes == rows.num_rows
                        else rows.filter(pc.equal(rows.column(OP_COL), _WRITE))
                    )
                else:  # a column this cache does not know: stop caching
                    idx.rows, idx.lazy = None, []
            idx.apply(csn, events.get(relid, ()), written)
            if len(idx.map) > self.max_rows:
                self.keys[relid] = _NoIndex(idx.cols)
            elif idx.rows is not None and len(idx.map) > self.row_cache_rows:
                idx.rows, idx.lazy = None, []

    def prune(self, horizon: int, live: set[int] | None = None) -> None:
        """Forget what no snapshot at or above ``horizon`` needs; drop dropped tables."""
        if horizon > self.base:
            for vm in self.versions.values():
                vm.prune(horizon)
            self.base = horizon
        for idx in self.keys.values():
            if isinstance(idx, KeyIndex):
                idx.prune(horizon)
        if live is not None:
            for d in (self.versions, self.keys):
                for relid in [r for r in d if r not in live]:
                    del d[relid]


@dataclass(frozen=True, slots=True)
class _NoIndex:
    cols: tuple[str, ...]


def _rows_by_rid(data: pa.Table, cols: Sequence[str]) -> dict[int, tuple[Any, ...]]:
    rids = data.column(RID).to_pylist()
    if not cols:
        return dict.fromkeys(rids, ())
    values = zip(*(data.column(c).to_pylist() for c in cols), strict=True)
    return dict(zip(rids, values, strict=True))


