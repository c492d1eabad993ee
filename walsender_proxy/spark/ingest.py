"""``walsender-proxy ingest``: a source read by Spark becomes committed changes of a lake table.

Modes: ``append`` inserts every source row; ``upsert`` inserts new keys and updates existing
rows that differ; ``mirror`` makes the table equal to the source — one full outer join of the
source with the table at a held CSN yields the inserts, the updates (only rows that really
changed) and the deletes. Spark writes the changes as a Parquet changeset; the lake commits it
(:func:`walsender_proxy.lake.bulk.commit_changeset`), so subscribers receive ordinary
Insert/Update/Delete messages. A source that does not fit (missing path, unknown column, NULL
key, duplicate keys, a value its column cannot hold) stops the job before anything commits.
"""

from __future__ import annotations

import re
import shutil
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from decoding.catalog import RID, Table
from decoding.errors import PgError
from walsender_proxy.lake.bulk import KIND, OLD
from walsender_proxy.spark.progress import Progress
from walsender_proxy.spark.snapshot import read_snapshot
from walsender_proxy.spark.types import INPUT_ERROR_RE, conform, pg_type_for

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from walsender_proxy.spark.access import LakeAccess

MODES = ("append", "upsert", "mirror")
FORMATS = ("parquet", "csv", "json")


@dataclass(slots=True)
class IngestOptions:
    source: list[str]
    table: str
    mode: str = "append"
    format: str | None = None  # default: from the source's file extension
    options: dict[str, str] = field(default_factory=dict)
    create: bool = False
    key: list[str] = field(default_factory=list)
    rows_per_transaction: int = 0


@dataclass(slots=True)
class IngestSummary:
    table: str
    mode: str
    rows_read: int = 0
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    transactions: int = 0
    csn: int | None = None
    commit_lsn: str | None = None
    seconds: float = 0.0
    created: bool = False
    phases: dict[str, float] = field(default_factory=dict)

    def lines(self) -> list[str]:
        return [
            f"table {self.table} ({self.mode}{', created' if self.created else ''})",
            f"rows read     {self.rows_read:>14,}",
            f"inserted      {self.inserted:>14,}",
            f"updated       {self.updated:>14,}",
            f"deleted       {self.deleted:>14,}",
            f"transactions  {self.transactions:>14,}",
            f"CSN           {self.csn if self.csn is not None else '-':>14}",
            f"commit LSN    {self.commit_lsn or '-':>14}",
            f"seconds       {self.seconds:>14.2f}  "
            + " ".join(f"({k} {v:.1f})" for k, v in self.phases.items()),
        ]


def source_format(opts: IngestOptions) -> str:
    if opts.format:
        fmt = opts.format.lower()
    else:
        exts = {p.rsplit(".", 1)[-1].lower() for p in opts.source if "." in p.rsplit("/", 1)[-1]}
        fmt = exts.pop() if len(exts) == 1 else "parquet"
        fmt = {"jsonl": "json", "ndjson": "json", "parq": "parquet"}.get(fmt, fmt)
    if fmt not in FORMATS:
        raise PgError(
            "22023", f'unsupported source format "{fmt}"', hint=f"Use one of: {', '.join(FORMATS)}."
        )
    return fmt


def read_source(spark: SparkSession, opts: IngestOptions, table: Table | None) -> DataFrame:
    """The source through Spark's own readers and options. CSV has a header by default; its
    values are read as text and cast to the table's types (unless asked to infer)."""
    fmt = source_format(opts)
    options = dict(opts.options)
    if fmt == "csv":
        options.setdefault("header", "true")
        options.setdefault("inferSchema", "false" if table is not None else "true")
        options.setdefault("mode", "FAILFAST")
    if fmt == "json":
        options.setdefault("mode", "FAILFAST")
    try:
        return spark.read.format(fmt).options(**options).load(opts.source)
    except Exception as e:  # AnalysisException: PATH_NOT_FOUND, UNABLE_TO_INFER_SCHEMA…
        raise _spark_error(e, f"could not read source {', '.join(opts.source)}") from None


def _root_cause(e: Exception) -> str:
    """The innermost Java exception's message (py4j errors say only which call failed)."""
    j = getattr(e, "java_exception", None)
    text = ""
    try:
        while j is not None:
            text = str(j.toString())
            j = j.getCause()
    except Exception:  # the JVM is gone
        pass
    return text


def _spark_error(e: Exception, what: str) -> PgError:
    m = re.search(INPUT_ERROR_RE, _root_cause(e) + "\n" + str(e))
    if m:  # a value its type's input function refused, on an executor (spark/types.py)
        return PgError(m.group(1), m.group(2), detail=m.group(3))
    text = _root_cause(e) or (str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)
    text = text.strip().splitlines()[0]
    cls = getattr(e, "getCondition", lambda: None)() or ""
    code = "58P01" if "PATH_NOT_FOUND" in cls or "PATH_NOT_FOUND" in text else "22000"
    if "CAST_INVALID_INPUT" in text or "CAST_OVERFLOW" in text or "NUMERIC_VALUE_OUT_OF_RANGE" in text:
        code = "22P02"
    if "MALFORMED" in text or "is not a Parquet file" in text:
        code = "22P04"
    return PgError(code, f"{what}: {text}")


def _create_table(access: LakeAccess, opts: IngestOptions, df: DataFrame) -> None:
    cols = [(f.name, pg_type_for(f.dataType, f.name), f.name in opts.key) for f in df.schema.fields]
    missing = [k for k in opts.key if k not in df.columns]
    if missing:
        raise PgError("42703", f'key column "{missing[0]}" is not in the source')
    access.create_table(opts.table, cols, list(opts.key))


def _check(src: DataFrame, keys: list[str], t: Table, mode: str) -> int:
    """One pass over the source: rows, NULL keys, duplicate keys. Returns the row count."""
    from pyspark.sql import functions as F

    if not keys:
        return int(src.count())
    g = src.groupBy(*[F.col(f"`{k}`") for k in keys]).agg(F.count(F.lit(1)).alias("_n"))
    key_null = F.lit(False)
    for k in keys:
        key_null = key_null | F.col(f"`{k}`").isNull()
    stats = g.agg(
        F.sum("_n").alias("rows"),
        F.sum(F.when(key_null, F.col("_n"))).alias("nulls"),
        F.max(F.when(~key_null, F.col("_n"))).alias("dup"),
    ).collect()[0]
    rows = int(stats["rows"] or 0)
    if stats["nulls"]:
        k = next(k for k in keys if src.where(F.col(f"`{k}`").isNull()).limit(1).count())
        raise PgError(
            "23502",
            f'null value in column "{k}" of relation "{t.name}" violates not-null constraint',
            detail=f"{stats['nulls']} source rows have a NULL key.",
        )
    if stats["dup"] and stats["dup"] > 1:
        row = g.where(F.col("_n") > 1).limit(1).collect()[0]
        vals = ", ".join("NULL" if row[k] is None else str(row[k]) for k in keys)
        detail = f"Key ({', '.join(keys)})=({vals}) appears {row['_n']} times in the source."
        if mode == "append":
            raise PgError(
                "23505", f'duplicate key value violates unique constraint "{t.pkey_name}"',
                detail=detail,
            )
        raise PgError(
            "21000", "the source has duplicate keys: a row would be changed twice", detail=detail
        )
    return rows


def plan_changes(src: DataFrame, current: DataFrame | None, t: Table, mode: str) -> DataFrame:
    """The changed rows with a ``_kind`` of I, U or D, in the staging layout of
    :mod:`walsender_proxy.lake.bulk`: new values under column names, old ones as
    ``__old_<name>``, and the target ``_rid``."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    names = [c.name for c in t.columns]
    keys = list(t.primary_key)
    if mode == "append" or current is None:
        return src.select(
            F.lit(None).cast(LongType()).alias(RID),
            *[F.col(f"`{n}`") for n in names],
            *[F.lit(None).cast(src.schema[n].dataType).alias(OLD + n) for n in names],
            F.lit("I").alias(KIND),
        )
    # Pass 1 shuffles only keys, row ids and two row hashes (96 bits) of each side: the
    # candidates are keys on one side only or with different hashes — typically a small
    # fraction. A NULL's position enters the hash (Spark's hashes skip NULLs).
    non_key = [n for n in names if n not in keys]

    def hashed(df: DataFrame, prefix: str, extra: list[Any]) -> DataFrame:
        parts: list[Any] = []
        for n in non_key:
            parts += [F.col(f"`{n}`"), F.col(f"`{n}`").isNull()]
        h1 = F.xxhash64(*parts) if parts else F.lit(0)
        h2 = F.hash(*parts) if parts else F.lit(0)
        return df.select(
            *extra, *[F.col(f"`{k}`").alias(prefix + k) for k in keys],
            h1.alias(prefix + "h1"), h2.alias(prefix + "h2"),
        )

    s = hashed(src, "s_", [])
    c = hashed(current, "c_", [F.col(RID)])
    cond = None
    for k in keys:
        e = F.col("s_" + k) == F.col("c_" + k)
        cond = e if cond is None else cond & e
    j = s.join(c, cond, "full_outer" if mode == "mirror" else "left_outer")
    kind = (
        F.when(F.col(RID).isNull(), F.lit("I"))
        .when(F.col("s_" + keys[0]).isNull(), F.lit("D"))
        .when((F.col("s_h1") != F.col("c_h1")) | (F.col("s_h2") != F.col("c_h2")), F.lit("U"))
    )
    cand = j.select(
        F.col(RID), *[F.coalesce(F.col("s_" + k), F.col("c_" + k)).alias("k_" + k) for k in keys],
        kind.alias(KIND),
    ).where(F.col(KIND).isNotNull())
    # Pass 2: full rows only for the candidates (joins AQE turns into broadcasts when the
    # candidates are few), and the exact comparison for updates.
    new = src.select(*[F.col(f"`{n}`").alias("s_" + n) for n in names])
    old = current.select(F.col(RID).alias("o_rid"), *[F.col(f"`{n}`").alias("c_" + n) for n in names])
    on_new = None
    for k in keys:
        e = F.col("k_" + k) == F.col("s_" + k)
        on_new = e if on_new is None else on_new & e
    full = cand.join(new, on_new, "left").join(old, F.col(RID) == F.col("o_rid"), "left")
    same = F.lit(True)
    for n in non_key:
        same = same & F.col("s_" + n).eqNullSafe(F.col("c_" + n))
    return full.where((F.col(KIND) != "U") | ~same).select(
        F.col(RID),
        *[F.col("s_" + n).alias(n) for n in names],
        *[F.col("c_" + n).alias(OLD + n) for n in names],
        F.col(KIND),
    )


def run_ingest(
    spark: SparkSession, access: LakeAccess, opts: IngestOptions, *, show_progress: bool = True
) -> IngestSummary:
    if opts.mode not in MODES:
        raise PgError("22023", f'unknown ingest mode "{opts.mode}"', hint="Use append, upsert or mirror.")
    started = time.monotonic()
    summary = IngestSummary(opts.table, opts.mode)
    progress = Progress(spark, enabled=show_progress)
    staging = None
    try:
        progress.phase("reading source")
        layout = access.layout(opts.table)
        df = read_source(spark, opts, None if layout is None else layout.table)
        if layout is None:
            if not opts.create:
                raise PgError(
                    "42P01", f'relation "{opts.table}" does not exist',
                    hint="Pass --create (with --key) to create it from the source's schema.",
                )
            if opts.mode != "append" and not opts.key:
                raise PgError("22023", f"--create for mode {opts.mode} needs --key")
            _create_table(access, opts, df)
            summary.created = True
            layout = access.layout(opts.table)
            assert layout is not None
        t = layout.table
        keys = list(t.primary_key)
        if opts.mode != "append" and not keys:
            raise PgError(
                "55000", f'table "{t.name}" has no primary key; mode {opts.mode} matches rows by key'
            )
        try:
            src = conform(df, t)
        except PgError:
            raise
        except Exception as e:
            raise _spark_error(e, "the source does not match the table") from None
        progress.phase("checking source")
        try:
            summary.rows_read = _check(src, keys, t, opts.mode)
            current = None
            if layout.rows and (opts.mode != "append" or keys):
                current = read_snapshot(spark, layout, with_rid=True)
            if opts.mode == "append" and keys and current is not None:
                hit = src.join(current.select(*keys), keys, "left_semi").limit(1).collect()
                if hit:
                    vals = ", ".join(str(hit[0][k]) for k in keys)
                    raise PgError(
                        "23505",
                        f'duplicate key value violates unique constraint "{t.pkey_name}"',
                        detail=f"Key ({', '.join(keys)})=({vals}) already exists.",
                    )
            progress.phase("computing changes")
            staging = access.staging_dir() / f"ingest-{uuid.uuid4().hex}"
            changes = plan_changes(src, current if opts.mode != "append" else None, t, opts.mode)
            changes.write.partitionBy(KIND).parquet(str(staging))
        except PgError:
            raise
        except Exception as e:
            raise _spark_error(e, "the ingest job failed") from None
        progress.phase("committing")
        res = access.commit(opts.table, staging, layout.csn, opts.rows_per_transaction)
        staging = None  # the lake removed it
        summary.inserted, summary.updated, summary.deleted = (
            res["inserted"], res["updated"], res["deleted"],
        )
        summary.transactions = res["transactions"]
        summary.csn, summary.commit_lsn = res["last_csn"], res["commit_lsn"]
    finally:
        progress.close()
        summary.phases = progress.timings
        access.release()
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    summary.seconds = time.monotonic() - started
    return summary


def summary_json(s: IngestSummary) -> dict[str, Any]:
    return {
        "table": s.table, "mode": s.mode, "rows_read": s.rows_read, "inserted": s.inserted,
        "updated": s.updated, "deleted": s.deleted, "transactions": s.transactions,
        "csn": s.csn, "commit_lsn": s.commit_lsn, "seconds": round(s.seconds, 3),
        "created": s.created, "phases": s.phases,
    }
