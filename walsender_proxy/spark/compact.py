"""``walsender-proxy compact``: fold a table's committed deltas into a new checkpoint on Spark.

The table is read at a CSN held for the job (the same read as :mod:`.snapshot`), written
sorted by key — so row-group statistics serve point lookups — into the staging directory, and
adopted by the lake, which then removes every file no slot, exported snapshot or open
transaction still needs. Readers at older CSNs keep theirs; nobody sees a gap, because the
change log (what subscribers stream from) is not touched.
"""

from __future__ import annotations

import shutil
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from decoding.catalog import RID
from decoding.errors import PgError
from walsender_proxy.spark.progress import Progress
from walsender_proxy.spark.snapshot import read_snapshot

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from walsender_proxy.spark.access import LakeAccess


@dataclass(slots=True)
class CompactSummary:
    table: str
    csn: int = 0
    rows: int = 0
    files_removed: int = 0
    checkpoint: str = ""
    seconds: float = 0.0

    def lines(self) -> list[str]:
        return [
            f"table {self.table} compacted at CSN {self.csn}",
            f"rows           {self.rows:>14,}",
            f"files removed  {self.files_removed:>14,}",
            f"checkpoint     {self.checkpoint}",
            f"seconds        {self.seconds:>14.2f}",
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table, "csn": self.csn, "rows": self.rows,
            "files_removed": self.files_removed, "checkpoint": self.checkpoint,
            "seconds": round(self.seconds, 3),
        }


def run_compact(
    spark: SparkSession, access: LakeAccess, table: str, *, show_progress: bool = True,
    files: int | None = None,
) -> CompactSummary:
    from pyspark.sql import functions as F

    started = time.monotonic()
    progress = Progress(spark, enabled=show_progress)
    out = None
    try:
        progress.phase("reading table")
        layout = access.layout(table)
        if layout is None:
            raise PgError("42P01", f'relation "{table}" does not exist')
        t = layout.table
        df = read_snapshot(spark, layout, with_rid=True, physical=True)
        order = [F.col(f"`{t.column(k).physical}`") for k in t.primary_key] or [F.col(RID)]  # type: ignore[union-attr]
        if files:
            df = df.repartitionByRange(files, *order)
            df = df.sortWithinPartitions(*order)
        else:
            df = df.orderBy(*order)
        progress.phase("writing checkpoint")
        out = access.staging_dir() / f"ckpt-{uuid.uuid4().hex}"
        df.write.parquet(str(out))
        progress.phase("installing")
        res = access.install_checkpoint(table, layout.csn, out)
        out = None
        return CompactSummary(
            t.name, layout.csn, res["rows"], res["files_removed"], res["checkpoint"],
            time.monotonic() - started,
        )
    finally:
        progress.close()
        access.release()
        if out is not None:
            shutil.rmtree(out, ignore_errors=True)
