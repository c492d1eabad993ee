"""The ``ingest`` and ``compact`` subcommands of ``walsender-proxy``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from decoding.errors import PgError


def add_parsers(sub: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    where = common.add_mutually_exclusive_group(required=True)
    where.add_argument("--dsn", help="commit through a running proxy (libpq conninfo or URI)")
    where.add_argument("-D", metavar="DIR", help="data directory of a stopped proxy")
    common.add_argument("-c", "--config", help="configuration file ([spark], [lake] sections)")
    common.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE",
        help="a spark.* setting for this run (repeatable)",
    )
    common.add_argument("--master", help="spark.master for this run (e.g. local[2], spark://h:7077)")
    common.add_argument("--json", action="store_true", help="print the summary as JSON")
    common.add_argument("--no-progress", action="store_true", help="no progress bar")

    p = sub.add_parser("ingest", parents=[common], help="load a source into a table (Spark)")
    p.add_argument("source", nargs="+", help="file, folder or glob (Spark reads it)")
    p.add_argument("-t", "--table", required=True, help="target table")
    p.add_argument("-m", "--mode", choices=["append", "upsert", "mirror"], default="append")
    p.add_argument("-f", "--format", choices=["parquet", "csv", "json"], help="default: from extension")
    p.add_argument(
        "-o", "--option", action="append", default=[], metavar="KEY=VALUE",
        help="a Spark reader option, e.g. header=false, delimiter=; (repeatable)",
    )
    p.add_argument("--create", action="store_true", help="create the table from the source's schema")
    p.add_argument("--key", help="key columns of a created table, comma-separated")
    p.add_argument(
        "--rows-per-transaction", type=int, default=0, metavar="N",
        help="commit every N changed rows (default: one transaction)",
    )
    p.set_defaults(fn=_ingest)

    p = sub.add_parser("compact", parents=[common], help="fold a table into a new checkpoint (Spark)")
    p.add_argument("-t", "--table", required=True, action="append", help="table (repeatable)")
    p.add_argument("--files", type=int, help="number of checkpoint files (default: Spark's choice)")
    p.set_defaults(fn=_compact)


def _pairs(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for it in items:
        k, sep, v = it.partition("=")
        if not sep:
            raise PgError("22023", f'{what} "{it}" is not KEY=VALUE')
        out[k.strip()] = v
    return out


def _setup(args: argparse.Namespace) -> tuple[Any, Any]:
    from dataclasses import replace

    from walsender_proxy.config import load_config
    from walsender_proxy.spark.access import open_access
    from walsender_proxy.spark.session import SparkSettings, get_session

    config = load_config(args.config)
    settings = SparkSettings.from_config(config)
    extra = _pairs(args.conf, "setting")
    settings = replace(settings, conf={**settings.conf, **extra})
    if args.master:
        settings = replace(settings, master=args.master)
    SparkSettings.from_config({"spark": {"conf": settings.conf}})  # forbidden keys check
    access = open_access(data_dir=args.D, dsn=args.dsn, config=config)
    try:
        spark = get_session(settings)
    except BaseException:
        access.close()
        raise
    return spark, access


def _ingest(args: argparse.Namespace) -> int:
    from walsender_proxy.spark.ingest import IngestOptions, run_ingest, summary_json

    opts = IngestOptions(
        source=args.source, table=args.table, mode=args.mode, format=args.format,
        options=_pairs(args.option, "option"), create=args.create,
        key=[k.strip() for k in args.key.split(",")] if args.key else [],
        rows_per_transaction=args.rows_per_transaction,
    )
    spark, access = _setup(args)
    try:
        s = run_ingest(spark, access, opts, show_progress=not args.no_progress)
    finally:
        access.close()
    print(json.dumps(summary_json(s)) if args.json else "\n".join(s.lines()))
    return 0


def _compact(args: argparse.Namespace) -> int:
    from walsender_proxy.spark.compact import run_compact

    spark, access = _setup(args)
    try:
        for table in args.table:
            s = run_compact(spark, access, table, show_progress=not args.no_progress, files=args.files)
            print(json.dumps(s.to_json()) if args.json else "\n".join(s.lines()))
    finally:
        access.close()
    sys.stdout.flush()
    return 0
