"""A table read at a CSN on Spark — the same answer DuckDB's snapshot query gives
(:meth:`walsender_proxy.lake.store.TableStore.snapshot_query`), computed from the same files.

The newest checkpoint at or below the CSN is the base; delta rows with ``base < _csn ≤ CSN``
lie over it. A truncate hides everything before it; otherwise the last version of each ``_rid``
(by ``_csn``, ``_seq``) wins, and a delete version removes the row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from decoding.catalog import RID
from walsender_proxy.lake.bulk import TableLayout
from walsender_proxy.lake.files import CSN, OP, OP_TRUNCATE, OP_WRITE, SEQ
from walsender_proxy.spark.types import storage_type, table_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def _files(spark: SparkSession, paths: list[str], wanted: list[tuple[str, object]]) -> DataFrame:
    """Parquet files whose columns may be a subset of ``wanted`` (files written before an
    ADD COLUMN, delete-only deltas): missing columns read as NULL."""
    from pyspark.sql import functions as F

    df = spark.read.option("mergeSchema", "true").parquet(*paths)
    have = set(df.columns)
    return df.select(
        *[
            (F.col(f"`{n}`") if n in have else F.lit(None)).cast(t).alias(n)  # type: ignore[arg-type]
            for n, t in wanted
        ]
    )


def read_snapshot(
    spark: SparkSession, layout: TableLayout, *, with_rid: bool = False, physical: bool = False
) -> DataFrame:
    """The rows of ``layout.table`` at ``layout.csn`` as a DataFrame: SQL column names (or
    physical ones), storage types, ``_rid`` first when asked."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql.types import ByteType, LongType

    t = layout.table
    cols = [(c.physical, storage_type(c)) for c in t.columns]
    out = [F.col(f"`{c.physical}`").alias(c.physical if physical else c.name) for c in t.columns]
    if with_rid:
        out.insert(0, F.col(RID))
    base = None
    if layout.checkpoint is not None:
        base = _files(spark, [layout.checkpoint], [(RID, LongType()), *cols])
    if not layout.deltas:
        if base is None:
            return spark.createDataFrame([], table_schema(t, with_rid=with_rid, physical=physical))
        return base.select(*out)
    meta = [(CSN, LongType()), (SEQ, LongType()), (OP, ByteType()), (RID, LongType())]
    d = _files(spark, list(layout.deltas), [*meta, *cols]).where(
        (F.col(CSN) > layout.base_csn) & (F.col(CSN) <= layout.csn)
    )
    # The last truncate (by CSN, then statement order) hides every older version.
    tr = d.where(F.col(OP) == OP_TRUNCATE).agg(F.max(F.struct(CSN, SEQ)).alias("t"))
    d = d.crossJoin(F.broadcast(tr)).where(
        F.col("t").isNull() | (F.struct(CSN, SEQ) > F.col("t"))
    )
    w = Window.partitionBy(RID).orderBy(F.col(CSN).desc(), F.col(SEQ).desc())
    last = d.where(F.col(OP) != OP_TRUNCATE).withColumn("_n", F.row_number().over(w)).where("_n = 1")
    live = last.where(F.col(OP) == OP_WRITE).select(*out)
    if base is None:
        return live
    kept = base.join(last.select(RID), RID, "left_anti").crossJoin(F.broadcast(tr)).where(
        F.col("t").isNull()
    )
    return kept.select(*out).unionByName(live)
