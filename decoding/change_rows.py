"""What every output plugin reads of a decoded transaction, whatever it writes: the
catalog a transaction is decoded with, and a change's (new, old) rows in bounded slices —
in memory, or read from a changeset's Parquet files a record batch at a time.

pgoutput (``decoding/pgoutput``) and test_decoding (``decoding/testdecoding.py``) both
take them from here, so they see the same rows in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from decoding import records as R
from decoding.reorder import ChangeList, DecodedTxn

#: A CSN above every other: ``catalog_at`` of it is the newest catalog.
LATEST_CSN = (1 << 63) - 1


def catalog_csn(txn: DecodedTxn, csn: int) -> int:
    """The CSN of the catalog a committed transaction (commit CSN ``csn``) is decoded with:
    the one before its own DDL when it has any (that DDL is applied as it is met)."""
    changes = txn.changes
    has_ddl = (
        changes.has_catalog_changes
        if isinstance(changes, ChangeList)
        else any(isinstance(c, R.CatalogChange) for c in changes)
    )
    return csn - 1 if has_ddl else csn


#: What PostgreSQL's reorder buffer holds for each row changed besides the row itself
#: (ReorderBufferChange and HeapTupleData with the tuple's header).
_CHANGE_OVERHEAD = 128


def changeset_size(rec: R.Changeset, changesets: Path) -> int:
    """The memory a changeset's rows would take decoded, as a reorder buffer counts a
    change's (logical_decoding_work_mem): their uncompressed size in the Parquet files
    plus a change's overhead per row. The record itself holds none of it (the rows stay in
    the files), but PostgreSQL would hold them, so a transaction streams or spills at
    the same size."""
    size = 0
    for p in (rec.new_path, rec.old_path):
        if p:
            meta = pq.read_metadata(changesets / p)
            size += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return size + rec.rows * _CHANGE_OVERHEAD


def key_changed(key_columns: Iterable[str], old: pa.Table, new: pa.Table) -> np.ndarray:
    """Rows whose replica identity (``key_columns``, physical names) changed: PostgreSQL
    logs the old key for those."""
    n = new.num_rows
    changed = np.zeros(n, dtype=bool)
    for name in key_columns:
        o = old.column(name) if name in old.column_names else pa.nulls(n)
        w = new.column(name) if name in new.column_names else pa.nulls(n)
        try:
            same = pc.or_(pc.fill_null(pc.equal(o, w), False), pc.and_(pc.is_null(o), pc.is_null(w)))
            changed |= ~np.asarray(same.to_numpy(zero_copy_only=False), dtype=bool)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
            changed |= np.array([a != b for a, b in zip(o.to_pylist(), w.to_pylist(), strict=True)], dtype=bool)
    return changed


def _rebatch(batches: Iterable[pa.RecordBatch], size: int) -> Iterator[pa.Table]:
    """Record batches regrouped into tables of exactly ``size`` rows (the last may be
    shorter), so the new and old rows of an update, read from two Parquet files whose
    row groups need not line up, come in matching slices."""
    pending: list[pa.RecordBatch] = []
    have = 0
    for b in batches:
        while b.num_rows:
            take = min(size - have, b.num_rows)
            pending.append(b.slice(0, take))
            have += take
            b = b.slice(take)
            if have == size:
                yield pa.Table.from_batches(pending)
                pending, have = [], 0
    if have:
        yield pa.Table.from_batches(pending)


def _step(rows: int, nbytes: int, chunk_rows: int, chunk_bytes: int) -> int:
    """Rows per slice: ``chunk_rows``, fewer for wide rows."""
    if rows <= 0:
        return chunk_rows
    per_row = max(1, nbytes // rows)
    return max(1, min(chunk_rows, chunk_bytes // per_row))


def change_rows(
    rec: R.Change | R.Changeset, columns: Iterable[str], changesets: Path, chunk_rows: int, chunk_bytes: int
) -> Iterator[tuple[pa.Table | None, pa.Table | None]]:
    """The (new, old) rows of a change in aligned slices of at most ``chunk_rows`` rows
    and about ``chunk_bytes`` bytes. A changeset's Parquet files (under ``changesets``)
    are read a record batch at a time, never whole, and only ``columns`` (physical names;
    not ``_rid``): a bulk statement is decoded in bounded memory whatever its size (one
    row group of the file at most, Arrow's reader decodes row groups whole)."""
    if isinstance(rec, R.Change):
        tables = [t for t in (rec.new, rec.old) if t is not None]
        if not tables:
            return
        n = tables[0].num_rows
        # The buffers' total size bounds nbytes from above at no cost; nbytes (exact
        # for slices, but a pass over the data even for one row) only when the bound is
        # too big.
        size = sum(t.get_total_buffer_size() for t in tables)
        if size > chunk_bytes:
            size = sum(t.nbytes for t in tables)
        step = _step(n, size, chunk_rows, chunk_bytes)
        for start in range(0, n, step):
            yield (
                rec.new.slice(start, step) if rec.new is not None else None,
                rec.old.slice(start, step) if rec.old is not None else None,
            )
        return
    files = [pq.ParquetFile(changesets / p) if p else None for p in (rec.new_path, rec.old_path)]
    try:
        meta = [f.metadata for f in files if f is not None]
        if not meta:
            return
        rows = meta[0].num_rows
        size = sum(m.row_group(i).total_byte_size for m in meta for i in range(m.num_row_groups))
        step = _step(rows, size, chunk_rows, chunk_bytes)
        wanted = set(columns)
        its = [
            _rebatch(
                f.iter_batches(batch_size=step, columns=[c for c in f.schema_arrow.names if c in wanted], use_threads=True),
                step,
            )
            if f is not None
            else None
            for f in files
        ]
        if its[0] is not None and its[1] is not None:
            yield from zip(its[0], its[1], strict=True)
        elif its[0] is not None:
            for b in its[0]:
                yield b, None
        else:
            assert its[1] is not None
            for b in its[1]:
                yield None, b
    finally:
        for f in files:
            if f is not None:
                f.close()
