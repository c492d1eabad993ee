"""Bulk work done by another engine (Spark) and committed by the lake.

Spark cannot append to the change log — the proxy owns it, as a postmaster owns its WAL — so a
pipeline job reads the table's *files* at a held CSN (:func:`table_layout`), computes its
changes, writes them as a Parquet changeset in a staging directory and asks the lake to commit
it (:func:`commit_changeset`). The commit goes through the ordinary transaction API, so the
changes are logged, decoded and sent to subscribers like any other Insert/Update/Delete, and
write conflicts with concurrent writers are caught (40001) instead of silently overwritten.

Staging layout (what :mod:`walsender_proxy.spark.ingest` writes): a Hive-partitioned Parquet
directory with ``_kind=D`` (``_rid`` + ``__old_<column>``), ``_kind=U`` (``_rid``, new columns
under their names, old ones as ``__old_<column>``) and ``_kind=I`` (new columns). Column names
are SQL names; the lake maps them to physical ones.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from decoding.catalog import RID, Table
from decoding.lsn import format_lsn
from decoding.pgtypes import ColumnType
from decoding.pgvalues import decode_text_arrow
from walsender_proxy.lake.errors import LakeError
from walsender_proxy.lake.transaction import Isolation, Transaction

OLD = "__old_"
KIND = "_kind"
#: Rows handed to the transaction API at a time: bounds the memory one step needs.
BATCH_ROWS = 500_000


@dataclass(frozen=True, slots=True)
class TableLayout:
    """The files a read of ``table`` at ``csn`` combines: the newest checkpoint at or below
    it (taken at ``base_csn``) and the delta files to lay over it."""

    table: Table
    csn: int
    base_csn: int
    checkpoint: str | None
    deltas: tuple[str, ...]
    rows: int  # an upper bound: checkpoint rows plus delta rows

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table.to_json(),
            "csn": self.csn,
            "base_csn": self.base_csn,
            "checkpoint": self.checkpoint,
            "deltas": list(self.deltas),
            "rows": self.rows,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TableLayout:
        return cls(
            Table.from_json(d["table"]),
            d["csn"],
            d["base_csn"],
            d["checkpoint"],
            tuple(d["deltas"]),
            d["rows"],
        )


def table_layout(lake: Any, table: Table, csn: int, timeout: float = 30.0) -> TableLayout:
    """The files of ``table`` at ``csn``, after folding every commit ≤ ``csn`` out of memory.
    The caller holds ``csn`` (a transaction's snapshot) for as long as it reads them."""
    deadline = time.monotonic() + timeout
    while any(c <= csn for c in lake.store.mem_csns(table.oid)):
        lake.fold()
        if not any(c <= csn for c in lake.store.mem_csns(table.oid)):
            break
        if time.monotonic() > deadline:  # a commit before it is still being written
            raise LakeError("55P03", f"could not fold table {table.name!r} up to CSN {csn}")
        time.sleep(0.05)
    base_csn, base, deltas = lake.store.files_at(table.oid, csn)
    return TableLayout(
        table,
        csn,
        base_csn,
        None if base is None else str(lake.store.path_of(base)),
        tuple(str(lake.store.path_of(f)) for f in deltas),
        (base.rows if base is not None else 0) + sum(f.rows for f in deltas),
    )


@dataclass(slots=True)
class ChangesetResult:
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    transactions: int = 0
    first_csn: int | None = None
    last_csn: int | None = None
    commit_lsn: int | None = None
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "inserted": self.inserted,
            "updated": self.updated,
            "deleted": self.deleted,
            "transactions": self.transactions,
            "first_csn": self.first_csn,
            "last_csn": self.last_csn,
            "commit_lsn": None if self.commit_lsn is None else format_lsn(self.commit_lsn),
            "seconds": round(self.seconds, 3),
        }


def _batches(dataset: ds.Dataset, kind: str, rows: int) -> Iterator[pa.Table]:
    """Record batches of one kind, regrouped to about ``rows`` rows each."""
    pending: list[pa.RecordBatch] = []
    n = 0
    scanner = dataset.scanner(filter=ds.field(KIND) == kind, batch_size=min(rows, 131_072))
    for b in scanner.to_batches():
        if not b.num_rows:
            continue
        pending.append(b)
        n += b.num_rows
        if n >= rows:
            yield _plain(pending)
            pending, n = [], 0
    if pending:
        yield _plain(pending)


def _plain(batches: list[pa.RecordBatch]) -> pa.Table:
    """Batches as a table without the ``_kind`` column or Spark's schema metadata (which
    would otherwise travel into the lake's own files)."""
    return pa.Table.from_batches(batches).drop_columns([KIND]).replace_schema_metadata(None)


def _physical(t: Table, rows: pa.Table, prefix: str = "") -> pa.Table:
    """``_rid`` plus every column under its physical name, from staged SQL names."""
    arrays = [rows.column(RID)]
    names = [RID]
    for c in t.columns:
        name = prefix + c.name
        if name not in rows.column_names:
            raise LakeError("42703", f'changeset has no column "{name}" for table "{t.name}"')
        arrays.append(rows.column(name))
        names.append(c.physical)
    return pa.Table.from_arrays(arrays, names=names)


def _reads_as_text(ctype: ColumnType) -> bool:
    """A type the lake stores as its text whose input function does not keep every string
    as it is (json validates; jsonb, uuid and numeric rewrite; varchar(n)/char(n) check the
    length), or an array of any type."""
    if ctype.is_array:
        return True
    if not pa.types.is_string(ctype.arrow):
        return False
    return ctype.typmod >= 0 or ctype.base.name not in ("text", "varchar", "bpchar")


def checked_input(t: Table, rows: pa.Table) -> pa.Table:
    """A changeset's new values of text-stored columns through their types' input
    functions, as a COPY of the same text would be (Spark may write a jsonb value as any
    valid JSON, a uuid in capitals): the lake stores what PostgreSQL would, or refuses it
    with PostgreSQL's error. Arrays are checked element by element."""
    for c in t.columns:
        if c.name not in rows.column_names or not _reads_as_text(c.type):
            continue
        arr = rows.column(c.name).combine_chunks()
        elem = ColumnType(c.type.base, c.type.typmod)
        if c.type.is_array:
            if not pa.types.is_string(elem.arrow):
                continue  # typed elements: Arrow's types already hold them
            values = decode_text_arrow(elem, arr.flatten())
            arr = pa.ListArray.from_arrays(arr.offsets, values, mask=arr.is_null())
        else:
            arr = decode_text_arrow(elem, arr)
        rows = rows.set_column(rows.column_names.index(c.name), c.name, arr)
    return rows


def open_changeset(staging: Path) -> ds.Dataset | None:
    if not staging.is_dir():
        raise LakeError("58P01", f'could not open changeset "{staging}": no such directory')
    # Listed explicitly: dataset discovery skips "_kind=…" directories as hidden.
    files = sorted(str(p) for p in staging.rglob("*.parquet"))
    if not files:
        return None
    # Partitions may carry different column subsets (deletes have no new values).
    schema = pa.unify_schemas([pq.read_schema(f) for f in files] + [pa.schema([(KIND, pa.string())])])
    return ds.dataset(
        files, schema=schema, format="parquet", partitioning="hive", partition_base_dir=str(staging)
    )


def commit_changeset(
    lake: Any,
    table_name: str,
    staging: Path,
    *,
    based_on_csn: int,
    rows_per_transaction: int = 0,
    progress: Callable[[int], None] | None = None,
    remove: bool = True,
) -> ChangesetResult:
    """Commit a staged changeset to ``table_name``: deletes, then updates, then inserts, in
    one transaction or one per ``rows_per_transaction`` rows. The changes were computed
    against ``based_on_csn``: a target row changed by anyone since is a 40001 and the
    current transaction rolls back (earlier ones of a split run stay committed)."""
    started = time.monotonic()
    result = ChangesetResult()
    dataset = open_changeset(staging)
    if dataset is None:  # nothing changed: nothing to commit
        result.seconds = time.monotonic() - started
        if remove:
            shutil.rmtree(staging, ignore_errors=True)
        return result
    hold = lake.holds.hold("ingest", csn=based_on_csn)
    tx: Transaction | None = None
    in_tx = 0
    try:
        t = lake.catalog_at(lake.frontier).resolve_table(table_name, lake.search_path)
        if t.partition_key is not None:  # (its rows are its partitions': no routing of changesets)
            raise LakeError("0A000", f'Spark ingest into partitioned table "{t.name}" is not supported by walsender-proxy')
        non_key = [c.name for c in t.columns if c.name not in t.primary_key]

        def begin() -> Transaction:
            return lake.begin(Isolation.REPEATABLE_READ, snapshot_csn=based_on_csn)

        def commit() -> None:
            nonlocal tx, in_tx
            assert tx is not None
            info = tx.commit()
            tx, in_tx = None, 0
            if info.csn is not None:
                result.transactions += 1
                result.first_csn = info.csn if result.first_csn is None else result.first_csn
                result.last_csn, result.commit_lsn = info.csn, info.lsn

        def apply(kind: str, rows: pa.Table) -> None:
            assert tx is not None
            tx.begin_statement()
            if kind != "D":
                rows = checked_input(t, rows)
            if kind == "D":
                result.deleted += tx.apply_delete(t, _physical(t, rows, OLD))
            elif kind == "U":
                result.updated += tx.apply_update(
                    t, _physical(t, rows, OLD), _physical(t, rows), changed=non_key
                )
            else:
                result.inserted += tx.apply_insert(
                    t, rows.select([c.name for c in t.columns if c.name in rows.column_names])
                )
            if progress is not None:
                progress(rows.num_rows)

        step = min(BATCH_ROWS, rows_per_transaction) if rows_per_transaction else BATCH_ROWS
        for kind in ("D", "U", "I"):
            for batch in _batches(dataset, kind, step):
                rows = batch
                while rows.num_rows:
                    if tx is None:
                        tx = begin()
                    room = rows_per_transaction - in_tx if rows_per_transaction else rows.num_rows
                    part, rows = rows.slice(0, room), rows.slice(room)
                    apply(kind, part)
                    in_tx += part.num_rows
                    if rows_per_transaction and in_tx >= rows_per_transaction:
                        commit()
        if tx is not None:
            commit()
    except BaseException:
        if tx is not None:
            tx.abort()
        raise
    finally:
        hold.release()
    result.seconds = time.monotonic() - started
    if remove:
        shutil.rmtree(staging, ignore_errors=True)
    return result


def install_checkpoint(lake: Any, table_name: str, csn: int, source: Path) -> dict[str, Any]:
    """Adopt a checkpoint of ``table_name`` at ``csn`` written by Spark, then drop the files
    no holder needs any more (slots, exported snapshots and open transactions keep theirs)."""
    if not source.exists():
        raise LakeError("58P01", f'could not open checkpoint "{source}": no such file or directory')
    with lake._fold_mutex:
        t = lake.catalog_at(csn).resolve_table(table_name, lake.search_path)
        if t.partition_key is not None:
            raise LakeError("0A000", f'a checkpoint of partitioned table "{t.name}" is not supported by walsender-proxy')
        if csn > lake.frontier:
            raise LakeError("22023", f"checkpoint CSN {csn} is past the frontier")
        if any(c <= csn for c in lake.store.mem_csns(t.oid)):
            raise LakeError("55000", f"commits up to CSN {csn} are not folded yet")
        if lake.catalog.resolve_table(table_name, lake.search_path).oid != t.oid:
            raise LakeError("42P01", f'table "{table_name}" was replaced since CSN {csn}')
        files = [source] if source.is_file() else sorted(source.glob("*.parquet"))
        rows = sum(ds.dataset(f, format="parquet").count_rows() for f in files)
        schema = ds.dataset(files, format="parquet").schema if files else None
        want = {RID, *(c.physical for c in t.columns)}
        if schema is None or not want <= set(schema.names):
            raise LakeError(
                "42804", f'checkpoint for "{table_name}" lacks columns {sorted(want - set(schema.names if schema else []))}'
            )
        for extra in source.iterdir() if source.is_dir() else []:
            if extra.suffix != ".parquet":  # _SUCCESS, .crc files Spark leaves
                extra.unlink()
        ref = lake.store.install_checkpoint(t.oid, csn, source, rows)
        lake._write_manifest()
    files_removed, segments = lake.collect_garbage()
    return {"checkpoint": ref.path, "rows": rows, "files_removed": files_removed, "segments_removed": segments}


def dumps(d: dict[str, Any]) -> str:
    return json.dumps(d, sort_keys=True)
