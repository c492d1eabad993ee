"""Advisory locks and ``pg_sleep`` from SQL, as DuckDB UDFs (see
:mod:`walsender_proxy.sql.functions`) over the server's lock table
(:class:`~walsender_proxy.sql.advisory.AdvisoryLocks`): the calling session's settings,
cancel flag and warnings."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from decoding.errors import PgError
from walsender_proxy.backend.outcomes import Notice
from walsender_proxy.sql.advisory import EXCLUSIVE, SHARE, key_of
from walsender_proxy.sql.rewrite_funcs import ADVISORY, ARITY_SUFFIX

if TYPE_CHECKING:
    from walsender_proxy.sql.services import SessionState, SqlServices

Udf = tuple[str, Callable[..., Any], list[str], str]

#: pg_database's oid of the one database (pg_replication_slots.datoid says the same).
DATABASE_OID = 5


def udfs(services: SqlServices, session: Callable[[int], SessionState]) -> list[Udf]:
    def advisory(name: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
        """One of the pg_advisory_* functions (by its name's parts), for a key of one
        bigint or two int4."""
        mode = SHARE if name.endswith("_shared") else EXCLUSIVE
        xact, tries, unlock = "_xact_" in name, name.startswith("pg_try_"), "_unlock" in name

        def call(pid: int, *keys: int) -> Any:
            ex = session(pid)
            key = key_of(DATABASE_OID, *keys)
            if unlock:
                if services.advisory.release(pid, key, mode):
                    return True
                ex.notices.append(Notice("WARNING", "01000", f"you don't own a lock of type {mode}"))
                return False
            if xact:
                ex.advisory_xact = True
            got = services.advisory.acquire(
                pid, key, mode, xact=xact, wait=not tries,
                lock_timeout=ex.settings.number("lock_timeout") / 1000,
                deadlock_timeout=ex.settings.number("deadlock_timeout") / 1000,
                cancelled=ex.cancelled.is_set,
            )  # fmt: skip
            return got if tries else ""  # void's text

        def bigint_key(pid: int, key: int) -> Any:  # (DuckDB reads the arity off the signature)
            return call(pid, key)

        def int4_keys(pid: int, key1: int, key2: int) -> Any:
            return call(pid, key1, key2)

        return bigint_key, int4_keys

    def unlock_all(pid: int) -> str:
        services.advisory.release_all(pid, xact=False)
        return ""

    def sleep(pid: int, seconds: float) -> str:
        """pg_sleep: interrupted by a cancel, as PostgreSQL's is."""
        ex = session(pid)
        until = time.monotonic() + max(seconds, 0.0)
        while (left := until - time.monotonic()) > 0:
            if ex.cancelled.wait(min(left, 0.1)):
                raise PgError("57014", "canceling statement due to user request")
        return ""

    out: list[Udf] = []
    for name in ADVISORY:
        ret = "BOOLEAN" if name.startswith("pg_try_") or "_unlock" in name else "VARCHAR"
        bigint_key, int4_keys = advisory(name)
        out.append((name + ARITY_SUFFIX + "1", bigint_key, ["INTEGER", "BIGINT"], ret))
        out.append((name + ARITY_SUFFIX + "2", int4_keys, ["INTEGER", "INTEGER", "INTEGER"], ret))
    out.append(("pg_advisory_unlock_all", unlock_all, ["INTEGER"], "VARCHAR"))
    out.append(("pg_sleep", sleep, ["INTEGER", "DOUBLE"], "VARCHAR"))
    return out
