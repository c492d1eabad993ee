"""Delta rows kept in Parquet files instead of memory.

A transaction's pending rows and the memory tail of committed ones used to be Arrow tables in
memory, so one huge transaction held all its rows (twice, at times) until the fold wrote them
out. Parts of them now live in files, described by a small :class:`FileRows`:

- **Changeset-backed**: a statement big enough to be logged as a changeset
  (``changeset_bytes``) already has its rows in Parquet beside the log — the durable copy
  decoders read. The lake reads the same file: ``_rid`` and the columns are in it, and the
  delta-row columns are derived (``_seq`` = the statement's first ``_seq`` plus the row's
  position in the file, ``_op`` the statement's). Nothing is written twice, and crash
  recovery replays such a statement by reference instead of loading it. The file belongs to
  the log: it goes when the log is truncated, never with the part.
- **Spill files** (``DATA/lake-spill``): when a transaction's in-memory pending rows exceed
  ``spill_bytes``, they are written out as delta rows (``_csn`` = OWN_CSN, ``_seq``, ``_op``,
  ``_rid``, columns), one file per (table, subtransaction, operation). They are not durable
  state — the log is — so they die with the transaction, the fold that absorbs them, or the
  process (the lake removes leftovers on start), and need no fsync.

Either kind is read by DuckDB with ``read_parquet`` (:meth:`FileRows.sql`) and by pyarrow batch
by batch (:meth:`FileRows.batches`, for the fold), always with ``_csn`` replaced by the CSN
the reader gives (OWN_CSN for a transaction's own reads, the commit CSN once committed).
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from decoding.allocator import release_memory, tune_allocator
from decoding.catalog import RID
from walsender_proxy.lake.files import (
    CSN,
    DELTA_META,
    OP,
    OP_WRITE,
    PARQUET_OPTIONS,
    ROW_GROUP,
    SEQ,
)

#: A changeset column of this name would collide with DuckDB's row-position column: such a
#: statement stays in memory (and is spilled like any other) instead of being read by
#: reference.
ROW_NUMBER = "file_row_number"


@dataclass(frozen=True, slots=True)
class FileRows:
    """Delta rows of one or more statements, all with one ``_op``, kept in a Parquet file."""

    path: Path
    num_rows: int
    #: OP_WRITE or OP_DELETE (truncates are one row and stay in memory).
    op: int
    #: Changeset-backed: the ``_seq`` of the file's first row (the rest follow in order).
    #: None: a spill file, which has its own ``_csn``, ``_seq`` and ``_op`` columns.
    seq: int | None
    #: The delta-row columns the file provides (``_csn``, ``_seq``, ``_op``, ``_rid``, …).
    columns: tuple[str, ...]
    #: Every ``_rid`` from ``lo`` to ``hi`` once (an INSERT's fresh rids), else None.
    rid_range: tuple[int, int] | None = None

    @property
    def owned(self) -> bool:
        """A spill file: removed with its part (changesets are the log's)."""
        return self.seq is None

    # -- DuckDB --------------------------------------------------------------------------
    def sql(self, csn: int, columns: Sequence[str] | None = None) -> str:
        """A SELECT of the delta rows with ``_csn`` = ``csn`` (``columns``: only these)."""
        src = _sql_str(str(self.path))
        if self.seq is None:
            body = f"SELECT * REPLACE (CAST({csn} AS BIGINT) AS {CSN}) FROM read_parquet({src})"
        else:
            data = "* EXCLUDE (file_row_number)" if self.op == OP_WRITE else RID
            body = (
                f"SELECT CAST({csn} AS BIGINT) AS {CSN}, "
                f"CAST({self.seq} + file_row_number AS BIGINT) AS {SEQ}, "
                f"CAST({self.op} AS TINYINT) AS {OP}, {data} "
                f"FROM read_parquet({src}, file_row_number=true)"
            )
        if columns is None:
            return body
        return f"SELECT {', '.join(_ident(c) for c in columns)} FROM ({body})"

    # -- pyarrow -------------------------------------------------------------------------
    def schema(self) -> pa.Schema:
        """The delta-row schema (from the file's footer)."""
        file_schema = pq.read_schema(self.path).remove_metadata()
        if self.seq is None:
            return file_schema
        if self.op != OP_WRITE:
            return DELTA_META
        return pa.schema([*DELTA_META, *(f for f in file_schema if f.name != RID)])

    def batches(
        self, csn: int, columns: Sequence[str] | None = None, batch_rows: int = ROW_GROUP
    ) -> Iterator[pa.RecordBatch]:
        """The delta rows with ``_csn`` = ``csn``, a bounded batch at a time."""
        want = None if columns is None else list(columns)
        if self.seq is None:
            with pq.ParquetFile(self.path, pre_buffer=False) as f:
                for b in f.iter_batches(batch_size=batch_rows, columns=want, use_threads=False):
                    if CSN in b.schema.names:
                        i = b.schema.get_field_index(CSN)
                        b = b.set_column(i, b.schema.field(i), _const(csn, b.num_rows))
                    yield b
            return
        file_cols = None
        if self.op != OP_WRITE:
            file_cols = [RID]
        elif want is not None:
            file_cols = [c for c in want if c not in (CSN, SEQ, OP)]
        pos = self.seq
        with pq.ParquetFile(self.path, pre_buffer=False) as f:
            for b in f.iter_batches(batch_size=batch_rows, columns=file_cols, use_threads=False):
                n = b.num_rows
                meta = {
                    CSN: _const(csn, n),
                    SEQ: pa.array(np.arange(pos, pos + n, dtype=np.int64)),
                    OP: pa.array(np.full(n, self.op, dtype=np.int8)),
                }
                pos += n
                arrays = [meta[CSN], meta[SEQ], meta[OP], *b.columns]
                names = [CSN, SEQ, OP, *b.schema.names]
                out = pa.RecordBatch.from_arrays(arrays, names=names)
                yield out if want is None else out.select(want)

    def read(self, csn: int, columns: Sequence[str] | None = None) -> pa.Table:
        """All of it in memory (for callers that need a table; the lake itself streams)."""
        batches = list(self.batches(csn, columns))
        if batches:
            return pa.Table.from_batches(batches)
        schema = self.schema()
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns])
        return schema.empty_table()

    def rids(self) -> np.ndarray:
        """The ``_rid`` column (only that column is read)."""
        if self.rid_range is not None:
            return np.arange(self.rid_range[0], self.rid_range[1] + 1, dtype=np.int64)
        t = pq.read_table(self.path, columns=[RID])
        return t.column(RID).to_numpy()

    def max_rid(self) -> int | None:
        """The largest ``_rid``."""
        if self.rid_range is not None:
            return self.rid_range[1]
        bounds = rid_bounds(self.path)
        return None if bounds is None else bounds[1]

    @classmethod
    def changeset(
        cls,
        path: Path,
        op: int,
        seq: int,
        num_rows: int,
        columns: Sequence[str],
        rid_range: tuple[int, int] | None = None,
    ) -> FileRows | None:
        """A statement's delta rows as its changeset ``path`` holds them (``columns``: the
        file's, ``_rid`` first); None when the file cannot stand in for them."""
        if ROW_NUMBER in columns or RID not in columns:
            return None
        data = [c for c in columns if c != RID] if op == OP_WRITE else []
        return cls(path, num_rows, op, seq, (CSN, SEQ, OP, RID, *data), rid_range)


def rid_bounds(path: Path) -> tuple[int, int] | None:
    """(min, max) ``_rid`` of a Parquet file, from its row groups' statistics (the column is
    read only when they lack them); None without rows."""
    meta = pq.read_metadata(path)
    lo = hi = None
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        col = next(
            (rg.column(j) for j in range(rg.num_columns) if rg.column(j).path_in_schema == RID),
            None,
        )
        st = None if col is None else col.statistics
        if st is None or not st.has_min_max:
            t = pq.read_table(path, columns=[RID]).column(RID)
            if len(t) == 0 or t.null_count == len(t):
                return None
            mm = pc.min_max(t).as_py()
            return int(mm["min"]), int(mm["max"])
        lo = st.min if lo is None else min(lo, st.min)
        hi = st.max if hi is None else max(hi, st.max)
    return None if lo is None or hi is None else (int(lo), int(hi))


class SpillDir:
    """``DATA/lake-spill``: where transactions spill pending rows (emptied on start)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        shutil.rmtree(path, ignore_errors=True)  # a previous process's leftovers
        path.mkdir(parents=True, exist_ok=True)

    def write(self, rows: pa.Table, op: int, rid_range: tuple[int, int] | None = None) -> FileRows:
        """Write delta rows (``_csn`` OWN_CSN) to a new spill file. No fsync: the file does
        not outlive the process, and the log holds the durable copy."""
        path = self.path / f"{uuid.uuid4().hex}.parquet"
        rows = rows.replace_schema_metadata(None)
        pq.write_table(rows, path, row_group_size=ROW_GROUP, **PARQUET_OPTIONS)
        return FileRows(path, rows.num_rows, op, None, tuple(rows.column_names), rid_range)

    @staticmethod
    def remove(parts: Sequence[FileRows]) -> None:
        for p in parts:
            if p.owned:
                p.path.unlink(missing_ok=True)


def spill_grouped(
    spill: SpillDir,
    parts: Sequence[tuple[tuple[int, int, int], pa.Table, tuple[int, int] | None]],
) -> list[FileRows | None]:
    """Write in-memory parts, each ``((relid, subxid, op), delta rows, rid range)``, one file
    per key — several statements each, so many small statements do not make many small
    files. Returns, per part, the group's file at the group's newest part and None at the
    others (their rows are in that file): a part list rebuilt so keeps each table's parts
    ordered by their newest rows. A statement's rows keep their ``_seq``, all that orders
    them; subtransactions stay apart, for ROLLBACK TO SAVEPOINT."""
    groups: dict[tuple[int, int, int], list[int]] = {}
    for i, (key, _, _) in enumerate(parts):
        groups.setdefault(key, []).append(i)
    out: list[FileRows | None] = [None] * len(parts)
    written: list[FileRows] = []
    try:
        for (_, _, op), idxs in groups.items():
            tables = [parts[i][1] for i in idxs]
            rows = (
                tables[0]
                if len(tables) == 1
                else pa.concat_tables(tables, promote_options="default")
            )
            f = spill.write(rows, op, parts[idxs[0]][2] if len(idxs) == 1 else None)
            written.append(f)
            out[idxs[-1]] = f
    except BaseException:
        SpillDir.remove(written)
        raise
    return out


def _const(v: int, n: int) -> pa.Array:
    return pa.array(np.full(n, v, dtype=np.int64))


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _ident(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


__all__ = ["FileRows", "SpillDir", "release_memory", "spill_grouped", "tune_allocator"]
