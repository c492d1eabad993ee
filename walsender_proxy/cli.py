"""The ``walsender-proxy`` command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from decoding.errors import PgError
from decoding.lsn import format_lsn
from walsender_proxy.backend import logs


def _settings(args: argparse.Namespace):
    from walsender_proxy.config import lake_settings, load_config

    return lake_settings(load_config(args.config))


def _init(args: argparse.Namespace) -> int:
    from walsender_proxy.lake import Lake

    d = Path(args.D)
    if d.exists() and any(d.iterdir()):
        print(f'walsender-proxy: directory "{d}" exists but is not empty', file=sys.stderr)
        return 1
    with Lake(d, _settings(args)) as lake:
        if args.demo:
            from walsender_proxy.demo import load_demo

            load_demo(lake)
        lake.checkpoint(force=True)
    print(f'Success. The data directory "{d}" is ready{" with demo data" if args.demo else ""}.')
    return 0


def _inspect(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from walsender_proxy.lake import Lake

    with Lake(Path(args.D), replace(_settings(args), background=False)) as lake:
        cat = lake.catalog
        print(
            f"frontier CSN {lake.frontier}, log {format_lsn(lake.log.oldest_lsn)} .. {format_lsn(lake.log.insert_lsn)}"
        )
        for t in sorted(cat.tables.values(), key=lambda t: t.qualified_name):
            n = lake.read(t).num_rows
            cols = ", ".join(f"{c.name} {c.type.sql_name()}" for c in t.columns)
            print(f"  table {t.qualified_name} ({n} rows): {cols}")
        for p in cat.publications.values():
            what = (
                "ALL TABLES"
                if p.all_tables
                else ", ".join(cat.tables[x.table_oid].qualified_name for x in p.tables)
            )
            print(f"  publication {p.name}: {what}")
        for gid in lake.prepared:
            print(f"  prepared transaction {gid!r}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    import asyncio

    from walsender_proxy.config import lake_settings, load_config, server_settings
    from walsender_proxy.lake import Lake
    from walsender_proxy.server.context import ServerContext
    from walsender_proxy.server.server import Server, make_ssl_context
    from walsender_proxy.server.system_config import system_settings, with_file

    cfg = load_config(args.config)
    settings = server_settings(cfg, port=args.port, listen_addresses=args.host)
    d = Path(args.D)
    # (postgresql.auto.conf of the data directory comes on top: ALTER SYSTEM's TLS settings too)
    try:
        effective = with_file(settings, system_settings(d, fsync=False).values) if d.exists() else settings
    except PgError as e:
        print(f"walsender-proxy: FATAL:  {e.message}", file=sys.stderr)
        return 1
    ssl_ctx = None  # (a TLS setting PostgreSQL refuses stops it before anything else)
    if effective.ssl_cert_file and effective.ssl_key_file:
        ssl_ctx = make_ssl_context(
            effective.ssl_cert_file, effective.ssl_key_file,
            min_protocol_version=effective.ssl_min_protocol_version,
            max_protocol_version=effective.ssl_max_protocol_version,
            ciphers=effective.ssl_ciphers,
        )  # fmt: skip
    if not d.exists():
        print(f'walsender-proxy: directory "{d}" does not exist', file=sys.stderr)
        print(f"HINT:  Create it with: walsender-proxy init -D {d}", file=sys.stderr)
        return 1
    from walsender_proxy.spark import serve as spark_serve
    from walsender_proxy.spark.session import SparkSettings

    spark = SparkSettings.from_config(cfg)
    spark_serve.configure(spark if spark.read_rows_threshold > 0 else None)
    lake = Lake(d, lake_settings(cfg))
    ctx = ServerContext(lake, settings, ssl_context=ssl_ctx)

    async def run() -> None:
        server = Server(ctx, freeze_startup_objects=True)
        await server.serve_until_signalled()

    try:
        asyncio.run(run())
    except OSError as e:
        lake.close()
        print(f"walsender-proxy: FATAL:  could not bind: {e}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="walsender-proxy", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("init", help="create a data directory")
    p.add_argument("-D", required=True, metavar="DIR", help="data directory")
    p.add_argument("--demo", action="store_true", help="load demo tables and publication demo_pub")
    p.add_argument("-c", "--config", help="configuration file (default: conf/walsender-proxy.toml)")
    p.set_defaults(fn=_init)
    p = sub.add_parser("inspect", help="show what a (stopped) data directory holds")
    p.add_argument("-D", required=True, metavar="DIR", help="data directory")
    p.add_argument("-c", "--config", help="configuration file (default: conf/walsender-proxy.toml)")
    p.set_defaults(fn=_inspect)
    p = sub.add_parser("serve", help="run the server in the foreground", add_help=False)
    p.add_argument("--help", action="help", help="show this help message and exit")
    p.add_argument("-D", required=True, metavar="DIR", help="data directory")
    p.add_argument("-p", "--port", type=int, help="TCP port (default from the configuration: 5432)")
    p.add_argument("-h", "--host", dest="host", help="listen_addresses", default=None)
    p.add_argument("-c", "--config", help="configuration file (default: conf/walsender-proxy.toml)")
    p.set_defaults(fn=_serve)
    from walsender_proxy.spark.cli import add_parsers

    add_parsers(sub)
    args = parser.parse_args(argv)
    logs.configure()
    try:
        return int(args.fn(args))
    except PgError as e:
        print(f"walsender-proxy: FATAL:  {e.message}", file=sys.stderr)
        if e.detail:
            print(f"DETAIL:  {e.detail}", file=sys.stderr)
        if e.hint:
            print(f"HINT:  {e.hint}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
