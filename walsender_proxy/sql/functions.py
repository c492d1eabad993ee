"""Server functions with side effects or session state — ``pg_export_snapshot()``,
``pg_logical_emit_message(…)``, ``pg_current_wal_lsn()``, ``txid_current()`` — as DuckDB
scalar UDFs. DuckDB functions belong to the database, not to a connection, so each is
installed once per server and the rewriter passes the calling backend's pid as a hidden
first argument; the function finds that session's transaction through it."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from decoding.errors import PgError
from decoding.lsn import format_lsn, parse_lsn
from walsender_proxy.lake import bulk
from walsender_proxy.lake.transaction import Isolation
from walsender_proxy.sql.advisory import EXCLUSIVE, SHARE, key_of
from walsender_proxy.sql.outcomes import Notice
from walsender_proxy.sql.rewrite_funcs import ADVISORY, ARITY_SUFFIX, ROW_SUFFIX
from walsender_proxy.sql.settings import duration_ms

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
        "pg_create_logical_replication_slot",
        "pg_drop_replication_slot",
        "pg_replication_slot_advance",
        *ADVISORY,
        "pg_advisory_unlock_all",
        "pg_sleep",
        "txid_current",
        "pg_current_xact_id",
        # The Spark pipeline's calls (walsender_proxy.lake.bulk): JSON text results.
        "walsender_proxy_table_layout",
        "walsender_proxy_commit_changeset",
        "walsender_proxy_install_checkpoint",
        "walsender_proxy_staging_dir",
    }
)


#: pg_database's oid of the one database (pg_replication_slots.datoid says the same).
DATABASE_OID = 5

#: PgErrors raised inside UDFs, by message: DuckDB re-raises them as InvalidInputException
#: with the text only, and the executor turns them back into the original (with SQLSTATE).
_udf_errors: dict[str, PgError] = {}
_UDF_PREFIX = "Python exception occurred while executing the UDF: PgError: "


def udf_error(message: str) -> PgError | None:
    i = message.find(_UDF_PREFIX)
    if i < 0:
        return None
    return _udf_errors.pop(message[i + len(_UDF_PREFIX) :].strip(), None)


def _keep_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except PgError as e:
            if len(_udf_errors) > 100:
                _udf_errors.clear()
            _udf_errors[str(e.message).strip()] = e
            raise

    return call


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

    def slot_user(pid: int) -> Executor:
        ex = session(pid)
        me = ctx.roles.get(ex.user)
        if me is None or not (me.superuser or me.replication):
            raise PgError("42501", "must be superuser or replication role to use replication slots")
        return ex

    def create_slot_row(pid: int, name: str, plugin: str, temporary: bool, two_phase: bool) -> dict[str, str]:
        ex = slot_user(pid)
        if ex.tx is not None and ex.tx.xid is not None:
            raise PgError("25001", "cannot create logical replication slot in transaction that has performed writes")
        slot, _ = ctx.slots.create_logical(
            name, plugin, ex.database, owner=pid, temporary=bool(temporary), two_phase=bool(two_phase)
        )
        return {"slot_name": slot.name, "lsn": format_lsn(slot.confirmed_flush)}

    def create_slot(pid: int, name: str, plugin: str, temporary: bool, two_phase: bool) -> str:
        row = create_slot_row(pid, name, plugin, temporary, two_phase)
        return f"({row['slot_name']},{row['lsn']})"  # record_out: neither needs quotes

    def advance_slot_row(pid: int, name: str, upto: str) -> dict[str, str]:
        slot_user(pid)
        try:
            lsn = parse_lsn(upto)
        except ValueError:
            raise PgError("22P02", f'invalid input syntax for type pg_lsn: "{upto}"') from None
        slot = ctx.slots.advance_to(name, lsn, pid)
        return {"slot_name": slot.name, "end_lsn": format_lsn(slot.confirmed_flush)}

    def advance_slot(pid: int, name: str, upto: str) -> str:
        row = advance_slot_row(pid, name, upto)
        return f"({row['slot_name']},{row['end_lsn']})"

    def drop_slot(pid: int, name: str) -> str:
        slot_user(pid)
        ctx.slots.drop(name, pid)
        return ""  # void's text

    def advisory(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
        """One of the pg_advisory_* functions (by its name's parts), for a key of one
        bigint or two int4 (``keys``)."""
        mode = SHARE if name.endswith("_shared") else EXCLUSIVE
        xact, tries, unlock = "_xact_" in name, name.startswith("pg_try_"), "_unlock" in name

        def call(pid: int, *keys: int) -> Any:
            ex = session(pid)
            key = key_of(DATABASE_OID, *keys)
            if unlock:
                if ctx.advisory.release(pid, key, mode):
                    return True
                ex.notices.append(Notice("WARNING", "01000", f"you don't own a lock of type {mode}"))
                return False
            if xact:
                ex.advisory_xact = True
            got = ctx.advisory.acquire(
                pid, key, mode, xact=xact, wait=not tries,
                lock_timeout=duration_ms(ex.settings.get("lock_timeout")) / 1000,
                deadlock_timeout=duration_ms(ex.settings.get("deadlock_timeout")) / 1000,
                cancelled=ex.cancelled.is_set,
            )  # fmt: skip
            return got if tries else ""  # void's text

        def bigint_key(pid: int, key: int) -> Any:  # (DuckDB reads the arity off the signature)
            return call(pid, key)

        def int4_keys(pid: int, key1: int, key2: int) -> Any:
            return call(pid, key1, key2)

        return bigint_key, int4_keys

    def unlock_all(pid: int) -> str:
        ctx.advisory.release_all(pid, xact=False)
        return ""

    def sleep(pid: int, seconds: float) -> str:
        """pg_sleep: interrupted by a cancel, as PostgreSQL's is."""
        ex = session(pid)
        until = time.monotonic() + max(seconds, 0.0)
        while (left := until - time.monotonic()) > 0:
            if ex.cancelled.wait(min(left, 0.1)):
                raise PgError("57014", "canceling statement due to user request")
        return ""

    def pipeline_role(pid: int, fn: str) -> Executor:
        ex = session(pid)
        me = ctx.roles.get(ex.user)
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
        (
            "pg_create_logical_replication_slot",
            create_slot,
            ["INTEGER", "VARCHAR", "VARCHAR", "BOOLEAN", "BOOLEAN"],
            "VARCHAR",
        ),
        (
            "pg_create_logical_replication_slot" + ROW_SUFFIX,
            create_slot_row,
            ["INTEGER", "VARCHAR", "VARCHAR", "BOOLEAN", "BOOLEAN"],
            "STRUCT(slot_name VARCHAR, lsn VARCHAR)",
        ),
        ("pg_drop_replication_slot", drop_slot, ["INTEGER", "VARCHAR"], "VARCHAR"),
        ("pg_replication_slot_advance", advance_slot, ["INTEGER", "VARCHAR", "VARCHAR"], "VARCHAR"),
        (
            "pg_replication_slot_advance" + ROW_SUFFIX,
            advance_slot_row,
            ["INTEGER", "VARCHAR", "VARCHAR"],
            "STRUCT(slot_name VARCHAR, end_lsn VARCHAR)",
        ),
        ("txid_current", current_xid, ["INTEGER"], "BIGINT"),
        ("pg_current_xact_id", current_xid, ["INTEGER"], "BIGINT"),
    ]
    for name in ADVISORY:
        ret = "BOOLEAN" if name.startswith("pg_try_") or "_unlock" in name else "VARCHAR"
        bigint_key, int4_keys = advisory(name)
        udfs.append((name + ARITY_SUFFIX + "1", bigint_key, ["INTEGER", "BIGINT"], ret))
        udfs.append((name + ARITY_SUFFIX + "2", int4_keys, ["INTEGER", "INTEGER", "INTEGER"], ret))
    udfs.append(("pg_advisory_unlock_all", unlock_all, ["INTEGER"], "VARCHAR"))
    udfs.append(("pg_sleep", sleep, ["INTEGER", "DOUBLE"], "VARCHAR"))
    for name, fn, args, ret in udfs:
        con.create_function(PREFIX + name, _keep_errors(fn), args, ret, side_effects=True)  # type: ignore[arg-type]
