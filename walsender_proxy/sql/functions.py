"""Server functions with side effects or session state — ``pg_export_snapshot()``,
``pg_logical_emit_message(…)``, ``pg_current_wal_lsn()``, ``txid_current()`` — as DuckDB
scalar UDFs. DuckDB functions belong to the database, not to a connection, so each is
installed once per server and the rewriter passes the calling backend's pid as a hidden
first argument; the function finds that session's transaction through it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from decoding.errors import PgError
from decoding.lsn import format_lsn

if TYPE_CHECKING:
    import duckdb

    from walsender_proxy.server.context import ServerContext
    from walsender_proxy.sql.executor import Executor

#: UDF names get this prefix (DuckDB has built-ins of some of these names).
PREFIX = "wpx_"
SERVER_FUNCTIONS = frozenset(
    {
        "pg_export_snapshot",
        "pg_current_wal_lsn",
        "pg_current_wal_insert_lsn",
        "pg_current_wal_flush_lsn",
        "pg_logical_emit_message",
        "txid_current",
        "pg_current_xact_id",
    }
)


def install(con: duckdb.DuckDBPyConnection, ctx: ServerContext) -> None:
    lake = ctx.lake

    def session(pid: int) -> Executor:
        ex = ctx.executor(pid)
        if ex is None:
            raise PgError("XX000", f"no session with pid {pid}")
        return ex

    def export_snapshot(pid: int) -> str:
        ex = session(pid)
        tx = ex.tx
        if tx is None:
            raise PgError("25P01", "pg_export_snapshot() requires a transaction")
        return ctx.snapshots.export(tx.statement_csn(), ex, pid)

    def emit(pid: int, transactional: bool, prefix: str, content: str) -> str:
        if transactional:
            tx = session(pid).tx
            if tx is None:
                raise PgError("25P01", "no transaction")
            return format_lsn(tx.message(prefix, content, transactional=True))
        return format_lsn(lake.message(prefix, content))

    def current_xid(pid: int) -> int:
        tx = session(pid).tx
        if tx is None:
            raise PgError("25P01", "no transaction")
        return tx._ensure_xid()

    udfs = [
        ("pg_export_snapshot", export_snapshot, ["INTEGER"], "VARCHAR"),
        ("pg_current_wal_lsn", lambda pid: format_lsn(lake.log.insert_lsn), ["INTEGER"], "VARCHAR"),
        ("pg_current_wal_insert_lsn", lambda pid: format_lsn(lake.log.insert_lsn), ["INTEGER"], "VARCHAR"),
        ("pg_current_wal_flush_lsn", lambda pid: format_lsn(lake.log.flushed_lsn), ["INTEGER"], "VARCHAR"),
        ("pg_logical_emit_message", emit, ["INTEGER", "BOOLEAN", "VARCHAR", "VARCHAR"], "VARCHAR"),
        ("txid_current", current_xid, ["INTEGER"], "BIGINT"),
        ("pg_current_xact_id", current_xid, ["INTEGER"], "BIGINT"),
    ]
    for name, fn, args, ret in udfs:
        con.create_function(PREFIX + name, fn, args, ret, side_effects=True)  # type: ignore[arg-type]
