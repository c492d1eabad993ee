"""The table store: Parquet files plus an in-memory tail, readable at any retained CSN.

Per table, *row versions* are kept as **delta rows** ``(_csn, _seq, _op, _rid, columns…)``:
``_op`` 0 writes the row ``_rid`` (insert or update), 1 deletes it, 2 truncates the table
(``_rid`` -1). Committed deltas first sit in memory (:class:`MemChunk`, one per table per
commit) and are *folded* into delta Parquet files in the background; a *checkpoint* file
holds a table's full content at a CSN ``C``. A read at ``S`` is the newest checkpoint with
``C ≤ S`` with every delta row ``C < _csn ≤ S`` laid over it, the last one per ``_rid``
winning — one DuckDB query, no Python per row. Files are plain Parquet with real column
names, so Spark and DuckDB read them as they are.

Delta rows are ordered by CSN, not by log position, which is what makes out-of-order commits
harmless here: a read at ``S`` sees exactly the transactions with CSN ≤ S, wherever their
commit records stand in the log.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from decoding.catalog import RID, Column, Table
from decoding.durable import atomic_write, fsync_path, removed_on_failure
from walsender_proxy.lake.files import (
    CSN,
    DELTA_META,
    OP,
    OP_DELETE,
    OP_TRUNCATE,
    OP_WRITE,
    OWN_CSN,
    PARQUET_OPTIONS,
    ROW_GROUP,
    SEQ,
)
from walsender_proxy.lake.spill import FileRows

#: DuckDB keeps freed memory in its allocator's caches up to a threshold (128 MB a thread
#: by default) — after a 1M-row INSERT … SELECT that is memory the process never uses again.
_DUCKDB_CONFIG = {"allocator_flush_threshold": "32MB", "allocator_background_threads": True}
#: DuckDB's sort of a checkpoint runs out of memory below ~48 MB (seen at 32 MB): a lower
#: ``maintenance_work_mem`` is raised to this.
MIN_MAINTENANCE_MB = 64


@dataclass(frozen=True, slots=True)
class FileRef:
    path: str  # relative to the store root
    min_csn: int
    max_csn: int
    rows: int
    columns: tuple[str, ...]
    #: A delta file of inserts only, each of a fresh ``_rid`` (no other version of it
    #: anywhere): reads need not merge versions of its rows (see snapshot_query).
    fresh: bool = False

    def to_json(self) -> dict[str, Any]:
        d = {
            "path": self.path,
            "min_csn": self.min_csn,
            "max_csn": self.max_csn,
            "rows": self.rows,
            "columns": list(self.columns),
        }
        if self.fresh:
            d["fresh"] = True
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> FileRef:
        return cls(
            d["path"],
            d["min_csn"],
            d["max_csn"],
            d["rows"],
            tuple(d["columns"]),
            d.get("fresh", False),
        )


@dataclass(slots=True)
class TableFiles:
    checkpoints: list[tuple[int, FileRef]] = field(default_factory=list)  # sorted by CSN
    deltas: list[FileRef] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "checkpoints": [[c, f.to_json()] for c, f in self.checkpoints],
            "deltas": [f.to_json() for f in self.deltas],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TableFiles:
        return cls(
            [(c, FileRef.from_json(f)) for c, f in d["checkpoints"]],
            [FileRef.from_json(f) for f in d["deltas"]],
        )


@dataclass(frozen=True, slots=True)
class MemChunk:
    """The delta rows one commit made to one table; ``commit_lsn`` decides when it folds.
    Big statements' rows are not in ``rows`` but in ``files`` (spill.py), read with their
    ``_csn`` replaced by this commit's."""

    commit_lsn: int
    csn: int
    rows: pa.Table | None
    files: tuple[FileRows, ...] = ()

    @property
    def num_rows(self) -> int:
        return (0 if self.rows is None else self.rows.num_rows) + sum(
            f.num_rows for f in self.files
        )

    @property
    def fresh(self) -> bool:
        """Only big INSERTs' rows (fresh rids, written once): see :attr:`FileRef.fresh`."""
        return self.rows is None and all(f.rid_range is not None for f in self.files)


#: A transaction's own uncommitted delta rows, as :meth:`TableStore.snapshot_query` takes
#: them: one Arrow table, or parts in memory and in files (``_csn`` OWN_CSN either way).
OwnRows = Union[pa.Table, Sequence[Union[pa.Table, FileRows]]]  # noqa: UP007


#: The largest table :meth:`TableStore.snapshot_query` sorts into insertion order when
#: asked (``heap_order``); a bigger one comes in the order its files give.
HEAP_ORDER_ROWS = 100_000


@dataclass(slots=True)
class SnapshotQuery:
    """SQL reading one table at a CSN, with the Arrow objects it names. Register them on a
    DuckDB connection (:meth:`register`) and use ``sql`` as a subquery."""

    sql: str
    arrow: dict[str, pa.Table]

    def register(self, con: duckdb.DuckDBPyConnection) -> None:
        for name, tbl in self.arrow.items():
            con.register(name, tbl)


def delta_rows(op: int, rows: pa.Table | None, seq_start: int, csn: int | None = None) -> pa.Table:
    """Turn a statement's rows into delta rows (``_seq`` numbered from ``seq_start``)."""
    if op == OP_TRUNCATE:
        data = pa.table({RID: pa.array([-1], pa.int64())})
    elif op == OP_DELETE:
        assert rows is not None
        data = rows.select([RID])
    else:
        assert rows is not None
        data = rows
    n = data.num_rows
    # Delete rows carry only ``_rid``: every column must accept nulls in delta rows.
    if any(not f.nullable for f in data.schema):
        data = data.cast(pa.schema([f.with_nullable(True) for f in data.schema]))
    out = data.add_column(0, OP, pa.array(np.full(n, op, dtype=np.int8)))
    out = out.add_column(0, SEQ, pa.array(np.arange(seq_start, seq_start + n, dtype=np.int64)))
    return out.add_column(0, CSN, _const_csn(csn if csn is not None else OWN_CSN, n))


def _const_csn(csn: int, n: int) -> pa.Array:
    return pa.array(np.full(n, csn, dtype=np.int64))


def with_csn(rows: pa.Table, csn: int) -> pa.Table:
    return rows.set_column(0, CSN, _const_csn(csn, rows.num_rows))


def _in_order(path: Path, column: str) -> bool:
    """Whether ``column`` never decreases down the Parquet file at ``path`` (no NULLs), read
    a row group at a time."""
    last: pa.Scalar | None = None
    with pq.ParquetFile(path) as f:
        for b in f.iter_batches(batch_size=ROW_GROUP, columns=[column], use_threads=False):
            a = b.column(0)
            n = len(a)
            if not n:
                continue
            if a.null_count or (last is not None and pc.less(a[0], last).as_py()):
                return False
            if n > 1 and not pc.all(pc.greater_equal(a.slice(1), a.slice(0, n - 1))).as_py():
                return False
            last = a[n - 1]
    return True


def _atomic_write_json(path: Path, data: Any, fsync: bool) -> None:
    atomic_write(path, json.dumps(data), fsync=fsync)


def _parquet_files(path: Path) -> list[Path]:
    """A Parquet file, or the part files of a directory another engine wrote."""
    if path.is_dir():
        return sorted(path.glob("*.parquet"))
    return [path]


def _parquet_glob(path: Path) -> str:
    return str(path / "*.parquet") if path.is_dir() else str(path)


def _split_own(own: OwnRows | None) -> tuple[pa.Table | None, list[FileRows]]:
    """A transaction's own rows as one Arrow table (its in-memory parts) and files."""
    if own is None or isinstance(own, pa.Table):
        return own, []
    tables = [p for p in own if isinstance(p, pa.Table)]
    files = [p for p in own if not isinstance(p, pa.Table)]
    if not tables:
        return None, files
    return concat_rows(tables), files


def concat_rows(tables: Sequence[pa.Table]) -> pa.Table:
    """Several pieces of one table's rows as one table (chunks kept, nothing copied).
    Pieces nearly always share one schema, and checking that costs much less than
    unifying them; pieces on both sides of an
    ADD or DROP COLUMN are unified, the missing columns null-filled."""
    if len(tables) == 1:
        return tables[0]
    try:
        return pa.concat_tables(tables)
    except pa.ArrowInvalid:
        return pa.concat_tables(tables, promote_options="default")


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _ident(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def enum_sql_type(labels: Sequence[str]) -> str:
    """DuckDB's ENUM of an enum's labels in their order: values that compare, sort and
    aggregate (min, max) by the enum's order, as PostgreSQL's enum operators do."""
    return "ENUM(" + ", ".join(_sql_str(x) for x in labels) + ")" if labels else "VARCHAR"


def _sql_value(c: Column, enum_labels: Mapping[int, Sequence[str]] | None) -> str:
    """A column in the type SQL computes with, from its storage form."""
    col = _ident(c.physical)
    if c.type.is_enum and enum_labels is not None and c.type.base.oid in enum_labels:
        return f"CAST({col} AS {enum_sql_type(enum_labels[c.type.base.oid])}{'[]' if c.type.is_array else ''})"
    if c.type.is_array:
        return col
    if c.type.base.name == "interval":
        return (
            f"CASE WHEN {col} IS NULL THEN NULL ELSE to_months({col}.months) + "
            f"to_days({col}.days) + to_microseconds({col}.microseconds) END"
        )
    if c.type.base.name == "uuid":
        return f"CAST({col} AS UUID)"
    return col


class TableStore:
    """Owns ``DATA/tables``: the files, the manifest that lists them, and the memory tail."""

    MANIFEST = "manifest.json"

    def __init__(
        self,
        root: Path,
        *,
        fsync: bool = True,
        maintenance_work_mem: int = 64 << 20,
        temp_dir: Path | None = None,
    ) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self.maintenance_work_mem = maintenance_work_mem
        self.temp_dir = temp_dir
        self._maint: duckdb.DuckDBPyConnection | None = None
        self._lock = threading.RLock()
        self._files: dict[int, TableFiles] = {}
        self._mem: dict[int, list[MemChunk]] = {}
        # Counted as chunks come and go: the background thread asks every 0.2 s, and
        # summing a long tail of single-row commits each time held the GIL for it.
        self._mem_chunks = 0
        self._mem_rows = 0
        # Its own spill directory beside the maintenance one: DuckDB's default for an
        # in-memory database is ``.tmp`` in the working directory, wherever that is.
        spill = self.temp_dir or (self.root / ".duckdb-tmp")
        self._db = duckdb.connect(
            config={**_DUCKDB_CONFIG, "temp_directory": str(spill.with_name(spill.name + "-serving"))}
        )
        self.state: dict[str, Any] = {}
        mpath = self.root / self.MANIFEST
        if mpath.exists():
            m = json.loads(mpath.read_text())
            self._files = {int(k): TableFiles.from_json(v) for k, v in m["tables"].items()}
            self.state = m["state"]
        self._remove_orphans()

    # -- manifest ------------------------------------------------------------------------
    def _remove_orphans(self) -> None:
        """Files a crash left behind before the manifest named them."""
        known = {f.path for tf in self._files.values() for f in self._all_refs(tf)}
        for table_dir in [p for p in self.root.iterdir() if p.is_dir()]:
            for p in table_dir.iterdir():
                rel = str(p.relative_to(self.root))
                if p.name.endswith(".tmp") or (
                    (p.suffix == ".parquet" or p.is_dir()) and rel not in known
                ):
                    if p.is_dir():
                        shutil.rmtree(p, ignore_errors=True)
                    else:
                        p.unlink()

    @staticmethod
    def _all_refs(tf: TableFiles) -> Iterable[FileRef]:
        yield from (f for _, f in tf.checkpoints)
        yield from tf.deltas

    def write_manifest(self, state: dict[str, Any]) -> None:
        with self._lock:
            tables = {str(k): v.to_json() for k, v in self._files.items()}
        self.state = state
        _atomic_write_json(
            self.root / self.MANIFEST, {"tables": tables, "state": state}, self.fsync
        )

    # -- the memory tail -----------------------------------------------------------------
    def add_commit(
        self,
        commit_lsn: int,
        csn: int,
        per_table: dict[int, pa.Table],
        files: dict[int, list[FileRows]] | None = None,
    ) -> None:
        """A commit's delta rows join the tail: ``per_table`` in memory (``_csn`` set),
        ``files`` in Parquet (spill files now belong to the tail, until the fold)."""
        files = files or {}
        with self._lock:
            for relid in dict.fromkeys([*per_table, *files]):
                chunk = MemChunk(commit_lsn, csn, per_table.get(relid), tuple(files.get(relid, ())))
                self._mem.setdefault(relid, []).append(chunk)
                self._mem_chunks += 1
                self._mem_rows += chunk.num_rows

    def mem_stats(self) -> tuple[int, int]:
        """(chunks, rows) not yet folded, in memory or in files — what decides when to fold."""
        return self._mem_chunks, self._mem_rows

    def mem_rows(self, relid: int) -> int:
        """Rows of one table not yet folded (in memory or in files)."""
        with self._lock:
            return sum(c.num_rows for c in self._mem.get(relid, ()))

    def min_mem_csn(self) -> int | None:
        with self._lock:
            return min((c.csn for v in self._mem.values() for c in v), default=None)

    # -- folding -------------------------------------------------------------------------
    def fold(self, before_lsn: int) -> int:
        """Write the memory tail of commits with LSN < ``before_lsn`` to delta files. The
        caller writes the manifest next and then calls :meth:`forget_folded`. Returns rows."""
        with self._lock:
            todo = {
                relid: [c for c in chunks if c.commit_lsn < before_lsn]
                for relid, chunks in self._mem.items()
            }
        total = 0
        new_refs: dict[int, list[FileRef]] = {}
        for relid, chunks in todo.items():
            if not chunks:
                continue
            if all(not c.files for c in chunks):
                lo, hi = min(c.csn for c in chunks), max(c.csn for c in chunks)
                rows = concat_rows([c.rows for c in chunks])  # type: ignore[misc]
                refs = [self._write_file(relid, "delta", rows, lo, hi)]
            else:  # some rows are in files: each of those is copied on its own
                refs = self._write_parts(relid, chunks)
            new_refs[relid] = refs
            total += sum(r.rows for r in refs)
        with self._lock:
            for relid, refs in new_refs.items():
                self._files.setdefault(relid, TableFiles()).deltas.extend(refs)
            self._pending_forget = {
                relid: {id(c) for c in chunks} for relid, chunks in todo.items()
            }
        return total

    def forget_folded(self) -> list[FileRows]:
        """Drop the folded chunks from the tail; returns their spill files, which the caller
        removes once no reader that listed them can still be reading them."""
        spilled: list[FileRows] = []
        with self._lock:
            forget = getattr(self, "_pending_forget", {})
            for relid, ids in forget.items():
                keep = []
                for c in self._mem.get(relid, []):
                    if id(c) in ids:
                        if c.files:
                            spilled.extend(f for f in c.files if f.owned)
                        self._mem_chunks -= 1
                        self._mem_rows -= c.num_rows
                    else:
                        keep.append(c)
                self._mem[relid] = keep
                if not self._mem[relid]:
                    del self._mem[relid]
            self._pending_forget = {}
        return spilled

    def _write_parts(self, relid: int, chunks: Sequence[MemChunk]) -> list[FileRef]:
        """Delta files for chunks partly in files, in the chunks' order: each run of rows in
        memory as one file, and each file part (a big statement's changeset or a spill file)
        as a file of its own that DuckDB copies with its ``_csn`` set, a row group at a time
        within the maintenance connection's memory limit. (Arrow's reader and writer held
        more memory for a big commit, and the server's arenas kept most of it.)
        One scan a file keeps its rows in order, which a big INSERT's checkpoint counts on
        (DuckDB does not keep the order of a UNION's branches)."""
        refs: list[FileRef] = []
        run: list[MemChunk] = []

        def write_run() -> None:
            if run:
                rows = concat_rows([c.rows for c in run])  # type: ignore[misc]
                lo, hi = min(c.csn for c in run), max(c.csn for c in run)
                refs.append(self._write_file(relid, "delta", rows, lo, hi))
                run.clear()

        for c in chunks:
            if c.rows is not None and c.rows.num_rows:
                run.append(c)
            if c.files:
                write_run()
                refs.extend(self._copy_part(relid, f, c.csn) for f in c.files)
        write_run()
        return refs

    def _copy_part(self, relid: int, part: FileRows, csn: int) -> FileRef:
        d = self.root / str(relid)
        d.mkdir(exist_ok=True)
        name = f"delta-{csn:016d}-{uuid.uuid4().hex[:12]}.parquet"
        tmp = d / (name + ".tmp")
        with removed_on_failure(tmp):
            con = self._maintenance()
            try:
                n = con.execute(
                    f"COPY ({part.sql(csn)}) TO {_sql_str(str(tmp))} "
                    f"(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE {ROW_GROUP})"
                ).fetchall()[0][0]
            finally:
                con.close()
            if self.fsync:
                fsync_path(tmp)
            os.replace(tmp, d / name)
        cols = tuple(pq.read_schema(d / name).names)
        return FileRef(f"{relid}/{name}", csn, csn, int(n), cols, fresh=part.rid_range is not None)

    def _maintenance(self) -> duckdb.DuckDBPyConnection:
        """A connection of the DuckDB instance for background work (checkpoints): its own
        memory limit (``maintenance_work_mem``) and one thread, spilling to ``temp_dir``,
        so a big table's checkpoint neither grows the process nor starves the serving."""
        if self._maint is None:
            self._maint = duckdb.connect(
                config={
                    **_DUCKDB_CONFIG,
                    "memory_limit": f"{max(self.maintenance_work_mem >> 20, MIN_MAINTENANCE_MB)}MB",
                    "threads": 1,
                    "temp_directory": str(self.temp_dir or (self.root / ".duckdb-tmp")),
                    "preserve_insertion_order": True,
                }
            )
        return self._maint.cursor()

    def _write_file(
        self, relid: int, kind: str, rows: pa.Table, min_csn: int, max_csn: int
    ) -> FileRef:
        d = self.root / str(relid)
        d.mkdir(exist_ok=True)
        name = f"{kind}-{max_csn:016d}-{uuid.uuid4().hex[:12]}.parquet"
        tmp = d / (name + ".tmp")
        # No schema metadata: Spark trusts a file's embedded Spark schema over its columns,
        # and rows that came from Spark-written changesets would carry a stale one.
        rows = rows.replace_schema_metadata(None)
        with removed_on_failure(tmp):
            with pq.ParquetWriter(tmp, rows.schema, **PARQUET_OPTIONS) as w:
                # A fold's rows are one chunk per commit: the writer's cost goes with the chunks,
                # so each row group is made one chunk first, which costs far less than writing
                # the chunks as they are. A single chunk is not copied.
                for start in range(0, max(rows.num_rows, 1), ROW_GROUP):
                    w.write_table(rows.slice(start, ROW_GROUP).combine_chunks(), row_group_size=ROW_GROUP)
            if self.fsync:
                fd = os.open(tmp, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            os.replace(tmp, d / name)
        return FileRef(f"{relid}/{name}", min_csn, max_csn, rows.num_rows, tuple(rows.column_names))

    def add_checkpoint(self, table: Table, csn: int) -> FileRef:
        """Materialise ``table`` at ``csn`` from the files alone (the caller ensures every
        commit with CSN ≤ csn is folded) as a new checkpoint."""
        q = self.snapshot_query(table, csn, with_rid=True, physical=True, files_only=True)
        # Sorted by key, so row-group statistics let point lookups skip most of the file.
        order = [table.column(k).physical for k in table.primary_key] or [RID]  # type: ignore[union-attr]
        d = self.root / str(table.oid)
        d.mkdir(exist_ok=True)
        name = f"ckpt-{csn:016d}-{uuid.uuid4().hex[:12]}.parquet"
        tmp = d / (name + ".tmp")
        # Rows that only big INSERTs wrote usually came in key order (a bulk load of
        # ascending keys): written as read, then checked, they need no sort — less time and
        # less memory. Rows found out of order are written again, sorted.
        _, _, deltas = self.files_at(table.oid, csn)
        unsorted_first = len(order) == 1 and bool(deltas) and all(f.fresh for f in deltas)
        # DuckDB writes it straight from the files, sorting out of core: a 10M-row table is
        # never an Arrow table in this process, and the work stays within its memory limit.
        with removed_on_failure(tmp):
            con = self._maintenance()
            try:
                q.register(con)
                for sort in (False, True) if unsorted_first else (True,):
                    by = f" ORDER BY {', '.join(_ident(c) for c in order)}" if sort else ""
                    n = con.execute(
                        f"COPY (SELECT * FROM ({q.sql}){by}) "
                        f"TO {_sql_str(str(tmp))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE {ROW_GROUP})"
                    ).fetchall()[0][0]
                    if sort or _in_order(tmp, order[0]):
                        break
            finally:
                con.close()
            if self.fsync:
                fsync_path(tmp)
            os.replace(tmp, d / name)
        cols = tuple(pq.read_schema(d / name).names)
        ref = FileRef(f"{table.oid}/{name}", csn, csn, int(n), cols)
        with self._lock:
            tf = self._files.setdefault(table.oid, TableFiles())
            tf.checkpoints.append((csn, ref))
            tf.checkpoints.sort(key=lambda x: x[0])
        return ref

    def files_at(self, relid: int, csn: int) -> tuple[int, FileRef | None, list[FileRef]]:
        """(base CSN, checkpoint, delta files) a read at ``csn`` combines — for readers other
        than DuckDB (Spark). Commits still in the memory tail are not in them: fold first."""
        with self._lock:
            tf = self._files.get(relid, TableFiles())
            ck = [(c, f) for c, f in tf.checkpoints if c <= csn]
            base_csn, base = ck[-1] if ck else (0, None)
            deltas = [f for f in tf.deltas if f.max_csn > base_csn and f.min_csn <= csn]
            return base_csn, base, deltas

    def mem_csns(self, relid: int) -> list[int]:
        """CSNs of this table's commits still in the memory tail."""
        with self._lock:
            return [c.csn for c in self._mem.get(relid, [])]

    def install_checkpoint(self, relid: int, csn: int, source: Path, rows: int) -> FileRef:
        """Adopt a checkpoint written by another engine (a Parquet file or a directory of
        them, ``_rid`` plus physical columns): moved under the table's directory and listed."""
        d = self.root / str(relid)
        d.mkdir(exist_ok=True)
        name = f"ckpt-{csn:016d}-{uuid.uuid4().hex[:12]}" + (".parquet" if source.is_file() else "")
        os.replace(source, d / name)
        if self.fsync:
            for p in [d / name, *((d / name).glob("*"))] if (d / name).is_dir() else [d / name]:
                fd = os.open(p, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            fd = os.open(d, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        cols = tuple(pq.read_schema(next(iter(_parquet_files(d / name)))).names)
        ref = FileRef(f"{relid}/{name}", csn, csn, rows, cols)
        with self._lock:
            tf = self._files.setdefault(relid, TableFiles())
            tf.checkpoints.append((csn, ref))
            tf.checkpoints.sort(key=lambda x: x[0])
        return ref

    def path_of(self, ref: FileRef) -> Path:
        return self.root / ref.path

    def delta_rows_count(self, relid: int) -> tuple[int, int]:
        """(delta files, delta rows) past the newest checkpoint — what decides compaction."""
        with self._lock:
            tf = self._files.get(relid)
            if tf is None:
                return 0, 0
            c = tf.checkpoints[-1][0] if tf.checkpoints else 0
            live = [f for f in tf.deltas if f.max_csn > c]
            return len(live), sum(f.rows for f in live)

    def remove_unneeded(self, oldest_csn: int, live_tables: set[int]) -> list[str]:
        """Drop files no read at a CSN ≥ ``oldest_csn`` can need; returns removed paths."""
        removed: list[FileRef] = []
        with self._lock:
            for relid in list(self._files):
                tf = self._files[relid]
                if relid not in live_tables:
                    removed.extend(self._all_refs(tf))
                    del self._files[relid]
                    continue
                base = max((c for c, _ in tf.checkpoints if c <= oldest_csn), default=None)
                if base is None:
                    continue
                keep_ck = [(c, f) for c, f in tf.checkpoints if c >= base]
                removed.extend(f for c, f in tf.checkpoints if c < base)
                keep_d = [f for f in tf.deltas if f.max_csn > base]
                removed.extend(f for f in tf.deltas if f.max_csn <= base)
                tf.checkpoints, tf.deltas = keep_ck, keep_d
        return [r.path for r in removed]

    def unlink(self, paths: Iterable[str]) -> None:
        for p in paths:
            path = self.root / p
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)

    def table_ids(self) -> set[int]:
        with self._lock:
            return set(self._files) | set(self._mem)

    def oldest_readable_csn(self, relid: int) -> int:
        with self._lock:
            tf = self._files.get(relid)
            if tf is None or not tf.checkpoints:
                return 0
            return tf.checkpoints[0][0]

    # -- reading -------------------------------------------------------------------------
    def snapshot_query(
        self,
        table: Table,
        csn: int,
        *,
        own: OwnRows | None = None,
        with_rid: bool = False,
        physical: bool = False,
        files_only: bool = False,
        prefilter: str | None = None,
        sql_types: bool = False,
        heap_order: bool = False,
        enum_labels: Mapping[int, Sequence[str]] | None = None,
    ) -> SnapshotQuery:
        """SQL for ``table`` as of ``csn`` (plus a transaction's ``own`` uncommitted delta
        rows). Columns come out under their SQL names unless ``physical``.

        ``prefilter`` (a predicate over physical column names) narrows the work to rows
        with *some* version matching it — a superset of the rows whose visible version
        matches, so the caller must still apply its predicate to the result. It turns a point
        lookup in a big table into filtered scans instead of a merge of every row.

        ``sql_types`` gives columns the DuckDB types SQL expects (INTERVAL, UUID, an enum's
        ENUM of its ``enum_labels`` by the enum's OID) instead of their storage form, for
        queries that compute with them.

        ``heap_order`` returns the rows of a table of at most :data:`HEAP_ORDER_ROWS` rows
        as a PostgreSQL heap scan usually does: in the order they were written, a row an
        UPDATE changed since the last checkpoint where the update put its new version (after
        the others; the checkpoint's rows by ``_rid``, then the newer versions by commit and
        statement). A query without ORDER BY (``array_agg(x)``, ``LIMIT 1``, ``SELECT *``)
        then answers as PostgreSQL usually does, where the merge of versions would return
        them in hash order."""
        with self._lock:
            tf = self._files.get(table.oid, TableFiles())
            ck = [(c, f) for c, f in tf.checkpoints if c <= csn]
            base_csn, base = ck[-1] if ck else (0, None)
            deltas = [f for f in tf.deltas if f.max_csn > base_csn and f.min_csn <= csn]
            chunks = (
                []
                if files_only
                else [c for c in self._mem.get(table.oid, []) if base_csn < c.csn <= csn]
            )
        mem = [c.rows for c in chunks if c.rows is not None]
        mem_files = [(f, c.csn) for c in chunks for f in c.files]
        own_mem, own_files = _split_own(own)
        if heap_order:
            rows = (base.rows if base is not None else 0) + sum(f.rows for f in deltas)
            rows += sum(c.num_rows for c in chunks) + (own_mem.num_rows if own_mem is not None else 0)
            rows += sum(f.num_rows for f in own_files)
            heap_order = rows <= HEAP_ORDER_ROWS
        order = f" ORDER BY {RID}" if heap_order else ""
        tag = uuid.uuid4().hex[:10]
        schema = table.arrow_schema(with_rid=True)
        arrow: dict[str, pa.Table] = {}
        # Zero-row tables with the full schema make every column exist with its right
        # type, whatever subset of columns the files and chunks carry.
        empty_d = f"_empty_d_{tag}"
        arrow[empty_d] = pa.unify_schemas([DELTA_META, schema.remove(0)]).empty_table()
        d_parts = [f"SELECT * FROM {empty_d}"]
        if deltas:
            paths = ", ".join(_sql_str(str(self.root / f.path)) for f in deltas)
            d_parts.append(
                f"SELECT * FROM read_parquet([{paths}], union_by_name=true) "
                f"WHERE {CSN} > {base_csn} AND {CSN} <= {csn}"
            )
        if mem:
            name = f"_mem_{tag}"
            arrow[name] = concat_rows(mem)
            d_parts.append(f"SELECT * FROM {name}")
        if own_mem is not None and own_mem.num_rows:
            name = f"_own_{tag}"
            arrow[name] = own_mem
            d_parts.append(f"SELECT * FROM {name}")
        # Parts in files never hold a truncate (one row, kept in memory): the prefilter
        # below need not keep one, which lets DuckDB join instead of testing each row.
        no_trunc = len(d_parts)
        d_parts.extend(f.sql(c) for f, c in mem_files)
        d_parts.extend(f.sql(OWN_CSN) for f in own_files)
        base_src = None
        if base is not None:
            empty_b = f"_empty_b_{tag}"
            arrow[empty_b] = schema.empty_table()
            base_src = (
                f"SELECT * FROM {empty_b} UNION ALL BY NAME "
                f"SELECT * FROM read_parquet({_sql_str(_parquet_glob(self.root / base.path))})"
            )
        sel = ", ".join(
            _ident(c.physical)
            if physical
            else f"{_sql_value(c, enum_labels) if sql_types else _ident(c.physical)} AS {_ident(c.name)}"
            for c in table.columns
        )
        if with_rid:
            sel = f"{RID}, {sel}" if sel else RID
        if not sel:
            sel = "NULL AS _none"

        ctes: list[str] = []
        if prefilter is not None:
            # Over the union with the empty full-schema table, so every column exists.
            cand = [f"SELECT {RID} FROM ({' UNION ALL BY NAME '.join(d_parts)}) WHERE {prefilter}"]
            if base_src is not None:
                cand.append(f"SELECT {RID} FROM ({base_src}) WHERE {prefilter}")
            ctes.append(f"cand AS ({' UNION ALL '.join(cand) or f'SELECT {RID} FROM {empty_d}'})")
            keep = f"{RID} IN (SELECT {RID} FROM cand)"
            # One semi join over the union of the parts in files (not one per part: DuckDB
            # would build a hash table of each part instead of one of the candidates).
            mem_parts, file_parts = d_parts[1:no_trunc], d_parts[no_trunc:]
            d_parts = [d_parts[0]] + [
                f"SELECT * FROM ({p}) WHERE {keep} OR {OP} = {OP_TRUNCATE}" for p in mem_parts
            ]
            if file_parts:
                union = " UNION ALL BY NAME ".join(f"({p})" for p in file_parts)
                d_parts.append(f"SELECT * FROM ({union}) WHERE {keep}")
            if base_src is not None:
                base_src = f"SELECT * FROM ({base_src}) WHERE {keep}"

        if len(d_parts) == 1:  # no deltas at all: the checkpoint (or nothing) is the answer
            src = empty_d if base_src is None else f"({base_src})"
            with_sql = f"WITH {', '.join(ctes)} " if ctes else ""
            return SnapshotQuery(f"{with_sql}SELECT {sel} FROM {src}{order}", arrow)
        if (
            prefilter is None
            and (own_mem is None or not own_mem.num_rows)
            and not own_files
            and all(f.fresh for f in deltas)
            and all(c.fresh for c in chunks)
        ):
            # Only inserts of fresh rids past the checkpoint: every row has one version,
            # so the answer is a plain union, with no merge of versions (the merge of a
            # 10M-row table is gigabytes of DuckDB memory).
            d_all = " UNION ALL BY NAME ".join(d_parts)
            src = f"SELECT * FROM ({d_all}) WHERE {OP} = {OP_WRITE}"
            if base_src is not None:
                src = f"{base_src} UNION ALL BY NAME {src}"
            return SnapshotQuery(f"SELECT {sel} FROM ({src}){order}", arrow)
        ctes += [
            f"d AS ({' UNION ALL BY NAME '.join(d_parts)})",
            f"tr AS (SELECT {CSN} AS tc, {SEQ} AS ts FROM d WHERE {OP} = {OP_TRUNCATE} "
            f"ORDER BY {CSN} DESC, {SEQ} DESC LIMIT 1)",
            f"live AS (SELECT * FROM d WHERE NOT EXISTS (SELECT 1 FROM tr WHERE d.{CSN} < tr.tc "
            f"OR (d.{CSN} = tr.tc AND d.{SEQ} <= tr.ts)))",
            f"last AS (SELECT * FROM live QUALIFY row_number() OVER "
            f"(PARTITION BY {RID} ORDER BY {CSN} DESC, {SEQ} DESC) = 1)",
        ]
        if base_src is not None:
            ctes.append(f"base AS (SELECT * FROM ({base_src}) WHERE NOT EXISTS (SELECT 1 FROM tr))")
            body = (
                f"SELECT {sel} FROM (SELECT * FROM base ANTI JOIN last USING ({RID}) "
                f"UNION ALL BY NAME SELECT * FROM last WHERE {OP} = {OP_WRITE})"
            )
        else:
            body = f"SELECT {sel} FROM last WHERE {OP} = {OP_WRITE}"
        if heap_order:  # (a row's newest version is where an UPDATE left it: at the end)
            order = f" ORDER BY {CSN} NULLS FIRST, {SEQ} NULLS FIRST, {RID}"
        return SnapshotQuery(f"WITH {', '.join(ctes)} {body}{order}", arrow)

    def changes_after(self, table: Table, csn: int) -> SnapshotQuery | None:
        """Delta rows committed with CSN > ``csn`` (write-conflict checks), or None."""
        with self._lock:
            tf = self._files.get(table.oid, TableFiles())
            files = [f for f in tf.deltas if f.max_csn > csn]
            chunks = [c for c in self._mem.get(table.oid, []) if c.csn > csn]
        mem = [c.rows.select([CSN, OP, RID]) for c in chunks if c.rows is not None]
        parts = [f.sql(c.csn, (CSN, OP, RID)) for c in chunks for f in c.files]
        arrow: dict[str, pa.Table] = {}
        if files:
            paths = ", ".join(_sql_str(str(self.root / f.path)) for f in files)
            parts.append(
                f"SELECT {CSN}, {OP}, {RID} FROM read_parquet([{paths}]) WHERE {CSN} > {csn}"
            )
        if mem:
            name = f"_chg_{uuid.uuid4().hex[:10]}"
            arrow[name] = pa.concat_tables(mem)
            parts.append(f"SELECT {CSN}, {OP}, {RID} FROM {name}")
        if not parts:
            return None
        return SnapshotQuery(" UNION ALL ".join(parts), arrow)

    def readable_floor(self) -> int:
        """The oldest CSN every table can still be read at."""
        with self._lock:
            return max(
                (tf.checkpoints[0][0] for tf in self._files.values() if tf.checkpoints), default=0
            )

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection for one thread's reads (DuckDB connections are not shared
        across threads; cursors of one database are cheap)."""
        return self._db.cursor()

    def read(
        self,
        table: Table,
        csn: int,
        *,
        own: OwnRows | None = None,
        with_rid: bool = False,
        physical: bool = False,
        files_only: bool = False,
        where: str | None = None,
        params: list[Any] | None = None,
    ) -> pa.Table:
        q = self.snapshot_query(
            table, csn, own=own, with_rid=with_rid, physical=physical, files_only=files_only
        )
        cur = self.cursor()
        try:
            q.register(cur)
            sql = q.sql if where is None else f"SELECT * FROM ({q.sql}) AS t WHERE {where}"
            return cur.sql(sql, params=params or None).to_arrow_table()
        finally:
            cur.close()

    def close(self) -> None:
        self._db.close()
        if self._maint is not None:
            self._maint.close()
