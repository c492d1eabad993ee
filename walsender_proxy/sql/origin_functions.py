"""Replication origins from SQL — ``pg_replication_origin_create``, ``_drop``, ``_oid``,
``_session_setup``/``_reset``/``_is_setup``/``_progress``, ``_xact_setup``/``_reset``,
``_advance``, ``_progress`` — as DuckDB UDFs (see :mod:`walsender_proxy.sql.functions`)
over the lake's :class:`~walsender_proxy.lake.origins.ReplicationOrigins`, with
PostgreSQL's checks: superusers only (EXECUTE is revoked from PUBLIC), and the functions
that change the catalog not inside a transaction block (PostgreSQL's would roll back with
it; these are not transactional)."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from decoding.errors import PgError
from decoding.lsn import format_lsn, parse_lsn

if TYPE_CHECKING:
    from walsender_proxy.sql.services import SessionState, SqlServices

Udf = tuple[str, Callable[..., Any], list[str], str]

#: The functions (their PostgreSQL result types are ``rewrite_funcs.SERVER_RETURNS``').
NAMES = frozenset(
    "pg_replication_origin_" + n
    for n in (
        "create", "drop", "oid", "session_setup", "session_reset", "session_is_setup", "session_progress",
        "xact_setup", "xact_reset", "advance", "progress",
    )
)  # fmt: skip
#: Those that may answer NULL (DuckDB then hands them NULL arguments too).
NULLABLE = frozenset({"pg_replication_origin_oid", "pg_replication_origin_session_progress", "pg_replication_origin_progress"})

_PG_EPOCH = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)


def _lsn(text: str) -> int:
    try:
        return parse_lsn(text)
    except ValueError:
        raise PgError("22P02", f'invalid input syntax for type pg_lsn: "{text}"') from None


def udfs(services: SqlServices, session: Callable[[int], SessionState]) -> list[Udf]:
    origins = services.lake.origins

    def superuser(pid: int, fn: str) -> SessionState:
        ex = session(pid)
        if not ex.who().superuser:
            raise PgError("42501", f"permission denied for function {fn}")
        return ex

    def outside_block(ex: SessionState, fn: str) -> None:
        if ex.explicit or ex.implicit_block:
            raise PgError(
                "0A000", f"{fn}() inside a transaction block is not supported by walsender-proxy",
                detail="Replication origins are made and dropped at once, not with the transaction.",
            )  # fmt: skip

    def create(pid: int, name: str) -> int:
        ex = superuser(pid, "pg_replication_origin_create")
        outside_block(ex, "pg_replication_origin_create")
        return origins.create(name)

    def drop(pid: int, name: str) -> str:
        ex = superuser(pid, "pg_replication_origin_drop")
        outside_block(ex, "pg_replication_origin_drop")
        origins.drop(name)
        return ""

    def oid(pid: int, name: str | None) -> int | None:
        superuser(pid, "pg_replication_origin_oid")
        return None if name is None else origins.oid(name)

    def session_setup(pid: int, name: str) -> str:
        ex = superuser(pid, "pg_replication_origin_session_setup")
        origins.setup(pid, name)
        origins.stamp(pid, ex.tx)
        return ""

    def session_reset(pid: int) -> str:
        ex = superuser(pid, "pg_replication_origin_session_reset")
        origins.reset(pid)
        origins.stamp(pid, ex.tx)
        return ""

    def session_is_setup(pid: int) -> bool:
        superuser(pid, "pg_replication_origin_session_is_setup")
        return origins.session(pid) is not None

    def session_progress(pid: int, flush: bool | None) -> str | None:
        superuser(pid, "pg_replication_origin_session_progress")
        if flush is None:
            return None
        lsn = origins.progress(origins.configured(pid).name)
        return None if lsn is None else format_lsn(lsn)

    def xact_setup(pid: int, lsn: str, ts: datetime.datetime) -> str:
        ex = superuser(pid, "pg_replication_origin_xact_setup")
        s = origins.configured(pid)
        s.origin_lsn = _lsn(lsn)
        s.origin_ts = (ts - _PG_EPOCH) // datetime.timedelta(microseconds=1)
        origins.stamp(pid, ex.tx)
        return ""

    def xact_reset(pid: int) -> str:
        ex = superuser(pid, "pg_replication_origin_xact_reset")
        s = origins.session(pid)
        if s is not None:
            s.origin_lsn = s.origin_ts = 0
            origins.stamp(pid, ex.tx)
        return ""

    def advance(pid: int, name: str, lsn: str) -> str:
        superuser(pid, "pg_replication_origin_advance")
        origins.advance(name, _lsn(lsn))
        return ""

    def progress(pid: int, name: str | None, flush: bool | None) -> str | None:
        superuser(pid, "pg_replication_origin_progress")
        if name is None or flush is None:
            return None
        lsn = origins.progress(name)
        return None if lsn is None else format_lsn(lsn)

    p = "pg_replication_origin_"
    return [
        (p + "create", create, ["INTEGER", "VARCHAR"], "BIGINT"),
        (p + "drop", drop, ["INTEGER", "VARCHAR"], "VARCHAR"),
        (p + "oid", oid, ["INTEGER", "VARCHAR"], "BIGINT"),
        (p + "session_setup", session_setup, ["INTEGER", "VARCHAR"], "VARCHAR"),
        (p + "session_reset", session_reset, ["INTEGER"], "VARCHAR"),
        (p + "session_is_setup", session_is_setup, ["INTEGER"], "BOOLEAN"),
        (p + "session_progress", session_progress, ["INTEGER", "BOOLEAN"], "VARCHAR"),
        (p + "xact_setup", xact_setup, ["INTEGER", "VARCHAR", "TIMESTAMP WITH TIME ZONE"], "VARCHAR"),
        (p + "xact_reset", xact_reset, ["INTEGER"], "VARCHAR"),
        (p + "advance", advance, ["INTEGER", "VARCHAR", "VARCHAR"], "VARCHAR"),
        (p + "progress", progress, ["INTEGER", "VARCHAR", "BOOLEAN"], "VARCHAR"),
    ]
