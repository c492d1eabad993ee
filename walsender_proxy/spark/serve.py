"""Big whole-table reads served by Spark: ``COPY t TO STDOUT`` of a table with at least
``[spark] read_rows_threshold`` rows is read at the statement's CSN by Spark (the same read
as DuckDB's, :mod:`.snapshot`), written to a scratch Parquet directory beside the table store
and streamed back to the client batch by batch — the proxy's memory stays bounded by one
batch, whatever the table's size. The scratch files are removed when the COPY ends."""

from __future__ import annotations

import logging
import shutil
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.dataset as ds

from walsender_proxy.lake.bulk import table_layout

if TYPE_CHECKING:
    from decoding.catalog import Table
    from walsender_proxy.lake.transaction import Transaction
    from walsender_proxy.spark.session import SparkSettings

log = logging.getLogger(__name__)
_settings: SparkSettings | None = None


def configure(settings: SparkSettings | None) -> None:
    """Called by ``serve`` with the ``[spark]`` configuration (None: never use Spark)."""
    global _settings
    _settings = settings


def wants(tx: Transaction, t: Table) -> bool:
    """Whether this table is big enough for Spark (counted from the file list: an upper
    bound, no scan)."""
    s = _settings
    if s is None or s.read_rows_threshold <= 0:
        return False
    _, base, deltas = tx.lake.store.files_at(t.oid, tx.statement_csn())
    rows = (base.rows if base is not None else 0) + sum(f.rows for f in deltas)
    return rows >= s.read_rows_threshold


def batches(tx: Transaction, t: Table, columns: list[str], batch_rows: int = 65_536) -> Iterator[pa.RecordBatch]:
    """``columns`` of ``t`` at the transaction's statement CSN, read by Spark."""
    from walsender_proxy.spark.session import get_session
    from walsender_proxy.spark.snapshot import read_snapshot

    lake = tx.lake
    csn = tx.statement_csn()
    hold = lake.holds.hold("spark read", csn=csn)
    out = lake.staging_dir() / f"read-{uuid.uuid4().hex}"
    try:
        layout = table_layout(lake, t, csn)
        spark = get_session(_settings)
        df = read_snapshot(spark, layout).select(*[f"`{c}`" for c in columns])
        df.write.parquet(str(out))
        files = sorted(str(p) for p in out.glob("*.parquet"))
        log.info("spark read of %s at CSN %d: %d files", t.name, csn, len(files))
        if files:
            yield from ds.dataset(files, format="parquet").to_batches(batch_size=batch_rows)
    finally:
        hold.release()
        shutil.rmtree(out, ignore_errors=True)
