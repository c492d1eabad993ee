"""Server functions with side effects or session state — ``pg_export_snapshot()``,
``pg_logical_emit_message(…)``, ``pg_current_wal_lsn()``, ``txid_current()`` — as DuckDB
scalar UDFs. DuckDB functions belong to the database, not to a connection, so each is
installed once per server and the rewriter passes the calling backend's pid as a hidden
first argument; the function finds that session's transaction through it. The slot
functions are in :mod:`~walsender_proxy.sql.slot_functions`, advisory locks and pg_sleep in
:mod:`~walsender_proxy.sql.lock_functions`; their names are listed here."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from decoding.errors import PgError
from decoding.lsn import format_lsn, parse_lsn
from walsender_proxy.lake import bulk
from walsender_proxy.lake.transaction import Isolation
from walsender_proxy.sql import (
    literals,
    lock_functions,
    origin_functions,
    sequence_functions,
    slot_functions,
)
from walsender_proxy.sql.rewrite_funcs import ADVISORY, ROW_SUFFIX, SERVER_SETS, SET_SUFFIX
from walsender_proxy.sql.udf_errors import keep_errors

if TYPE_CHECKING:
    import duckdb

    from walsender_proxy.sql.services import SessionState, SqlServices

#: UDF names get this prefix (DuckDB has built-ins of some of these names).
PREFIX = "wpx_"
SERVER_FUNCTIONS = frozenset(
    {
        "pg_export_snapshot",
        "pg_current_wal_lsn",
        "pg_current_wal_insert_lsn",
        "pg_current_wal_flush_lsn",
        "pg_logical_emit_message",
        "pg_create_logical_replication_slot",
        "pg_drop_replication_slot",
        "pg_stat_reset_replication_slot",
        "pg_replication_slot_advance",
        "pg_copy_logical_replication_slot",
        "pg_walfile_name",
        "pg_walfile_name_offset",
        *SERVER_SETS,
        *ADVISORY,
        "pg_advisory_unlock_all",
        "pg_sleep",
        "pg_reload_conf",
        "pg_notify",
        "txid_current",
        "pg_current_xact_id",
        *sequence_functions.NAMES,
        *origin_functions.NAMES,
        # The Spark pipeline's calls (walsender_proxy.lake.bulk): JSON text results.
        "walsender_proxy_table_layout",
        "walsender_proxy_commit_changeset",
        "walsender_proxy_install_checkpoint",
        "walsender_proxy_staging_dir",
    }
)


def install(con: duckdb.DuckDBPyConnection, services: SqlServices) -> None:
    lake = services.lake

    def session(pid: int) -> SessionState:
        ex = services.backends.executor(pid)
        if ex is None:
            raise PgError("XX000", f"no session with pid {pid}")
        return ex

    def walfile(lsn: str) -> tuple[str, int]:
        """pg_walfile_name_offset: the segment file holding the byte before ``lsn``
        (XLByteToPrevSeg) on timeline 1, and ``lsn``'s offset in its own segment, by the
        log's segment size (``wal_segment_size``)."""
        try:
            n = parse_lsn(lsn)
        except ValueError:
            raise PgError("22P02", f'invalid input syntax for type pg_lsn: "{lsn}"') from None
        size = lake.log.segment_size
        segno = ((n - 1) & 0xFFFFFFFFFFFFFFFF) // size
        per_id = 0x100000000 // size
        return f"{1:08X}{segno // per_id:08X}{segno % per_id:08X}", n % size

    def export_snapshot(pid: int) -> str:
        ex = session(pid)
        tx = ex.tx
        if tx is None:
            raise PgError("25P01", "pg_export_snapshot() requires a transaction")
        return services.snapshots.export(tx.statement_csn(), ex, pid)

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
        return tx.ensure_xid()

    def reload_conf(pid: int) -> bool:
        ex = session(pid)
        if not ex.who().superuser:  # (EXECUTE is revoked from PUBLIC, as in PostgreSQL)
            raise PgError("42501", "permission denied for function pg_reload_conf")
        reload = services.server.reload
        if reload is None:
            raise PgError("0A000", "pg_reload_conf() is not supported without a server")
        return reload()

    def notify(pid: int, channel: str | None, payload: str | None) -> str:
        """pg_notify: NOTIFY with the channel and payload as values (NULL: empty)."""
        ex = session(pid)
        if ex.tx is None:
            raise PgError("25P01", "pg_notify() requires a transaction")
        ex.notifies.notify(channel or "", payload or "")
        return ""

    def pipeline_role(pid: int, fn: str) -> SessionState:
        ex = session(pid)
        me = services.roles.get(ex.user)
        if me is None or not (me.superuser or me.replication):
            raise PgError("42501", f"permission denied for function {fn}")
        return ex

    def table_layout(pid: int, table: str) -> str:
        ex = pipeline_role(pid, "walsender_proxy_table_layout")
        tx = ex.tx
        if tx is None or (tx.snapshot_csn is None and tx.isolation is Isolation.READ_COMMITTED):
            raise PgError(
                "25001",
                "walsender_proxy_table_layout() must run in a REPEATABLE READ transaction",
                hint="The transaction's snapshot keeps the files alive while they are read.",
            )
        csn = tx.statement_csn()
        t = tx.catalog().resolve_table(table, lake.search_path)
        return bulk.dumps(bulk.table_layout(lake, t, csn).to_json())

    def commit_changeset(pid: int, table: str, staging: str, based_on: int, per_tx: int) -> str:
        ex = pipeline_role(pid, "walsender_proxy_commit_changeset")
        if ex.explicit:
            raise PgError(
                "25001", "walsender_proxy_commit_changeset() cannot run inside a transaction block"
            )
        res = bulk.commit_changeset(
            lake, table, Path(staging), based_on_csn=based_on, rows_per_transaction=per_tx
        )
        return bulk.dumps(res.to_json())

    def install_checkpoint(pid: int, table: str, csn: int, path: str) -> str:
        pipeline_role(pid, "walsender_proxy_install_checkpoint")
        return bulk.dumps(bulk.install_checkpoint(lake, table, csn, Path(path)))

    def staging_dir(pid: int) -> str:
        pipeline_role(pid, "walsender_proxy_staging_dir")
        return str(lake.staging_dir())

    udfs = [
        ("walsender_proxy_table_layout", table_layout, ["INTEGER", "VARCHAR"], "VARCHAR"),
        (
            "walsender_proxy_commit_changeset",
            commit_changeset,
            ["INTEGER", "VARCHAR", "VARCHAR", "BIGINT", "BIGINT"],
            "VARCHAR",
        ),
        (
            "walsender_proxy_install_checkpoint",
            install_checkpoint,
            ["INTEGER", "VARCHAR", "BIGINT", "VARCHAR"],
            "VARCHAR",
        ),
        ("walsender_proxy_staging_dir", staging_dir, ["INTEGER"], "VARCHAR"),
        ("pg_export_snapshot", export_snapshot, ["INTEGER"], "VARCHAR"),
        ("pg_current_wal_lsn", lambda pid: format_lsn(lake.log.insert_lsn), ["INTEGER"], "VARCHAR"),
        ("pg_current_wal_insert_lsn", lambda pid: format_lsn(lake.log.insert_lsn), ["INTEGER"], "VARCHAR"),
        ("pg_current_wal_flush_lsn", lambda pid: format_lsn(lake.log.flushed_lsn), ["INTEGER"], "VARCHAR"),
        ("pg_logical_emit_message", emit, ["INTEGER", "BOOLEAN", "VARCHAR", "VARCHAR"], "VARCHAR"),
        ("txid_current", current_xid, ["INTEGER"], "BIGINT"),
        ("pg_reload_conf", reload_conf, ["INTEGER"], "BOOLEAN"),
        ("pg_notify", notify, ["INTEGER", "VARCHAR", "VARCHAR"], "VARCHAR"),
        ("pg_current_xact_id", current_xid, ["INTEGER"], "BIGINT"),
        ("pg_walfile_name", lambda pid, lsn: walfile(lsn)[0], ["INTEGER", "VARCHAR"], "VARCHAR"),
        ("pg_walfile_name_offset", lambda pid, lsn: "({},{})".format(*walfile(lsn)), ["INTEGER", "VARCHAR"], "VARCHAR"),
        (
            "pg_walfile_name_offset" + ROW_SUFFIX,
            lambda pid, lsn: dict(zip(("file_name", "file_offset"), walfile(lsn), strict=True)),
            ["INTEGER", "VARCHAR"],
            "STRUCT(file_name VARCHAR, file_offset INTEGER)",
        ),
    ]
    udfs += slot_functions.udfs(services, session)
    udfs += lock_functions.udfs(services, session)
    udfs += sequence_functions.udfs(services, session)
    udfs += origin_functions.udfs(services, session)
    for name, fn, args, ret in udfs:
        # (a UDF that may return NULL must say so to DuckDB, which then hands it NULLs too)
        nulls = "special" if name in sequence_functions.NULLABLE or name in origin_functions.NULLABLE or name in ("pg_notify", "pg_stat_reset_replication_slot") or name.endswith(SET_SUFFIX) or name.startswith("pg_copy_") else "default"
        con.create_function(PREFIX + name, keep_errors(fn), args, ret, side_effects=True, null_handling=nulls)  # type: ignore[arg-type]
    literals.install(con)
