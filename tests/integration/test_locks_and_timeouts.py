"""Advisory locks, pg_sleep and statement_timeout as a migration tool or an application
uses them, against PostgreSQL 15: the same answers, warnings, waits and errors."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import psycopg

from tests.pgcluster import PgCluster
from tests.pgcompare import Client
from tests.proxy import ProxyServer

LOCKS = (
    "SELECT classid, objid, objsubid, mode, granted, pid = pg_backend_pid() AS mine, "
    "database = (SELECT oid FROM pg_database WHERE datname = current_database()) AS here "
    "FROM pg_locks WHERE locktype = 'advisory' ORDER BY objsubid, classid, objid, mode, granted, mine"
)



def _in_background(fn: Callable[[], object]) -> Callable[[], object]:
    """Run ``fn`` in a thread; the returned function joins it and gives its result."""
    box: list[object] = []
    th = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    th.start()
    time.sleep(0.3)  # (it is waiting by now)

    def join() -> object:
        th.join(30)
        assert box, "the waiting statement did not end"
        return box[0]

    return join


def _script(dsn: str) -> list[object]:
    seen: list[object] = []
    with Client(dsn) as a, Client(dsn) as b:
        for c, sql in [
            (a, "SELECT pg_advisory_lock(1)"),
            (a, "SELECT pg_advisory_lock(1)"),  # re-entrant
            (a, "SELECT pg_advisory_lock_shared(1, 2)"),
            (a, "SELECT pg_try_advisory_lock(4294967297)"),  # (1, 1, 1): bigint's own key space
            (b, "SELECT pg_try_advisory_lock(1)"),
            (b, "SELECT pg_try_advisory_lock_shared(1, 2)"),  # shared beside shared
            (b, "SELECT pg_try_advisory_lock(1, 2)"),
            (b, LOCKS),
            (a, "SELECT pg_advisory_unlock(1)"),
            (b, "SELECT pg_try_advisory_lock(1)"),  # still held once
            (a, "SELECT pg_advisory_unlock(1)"),
            (a, "SELECT pg_advisory_unlock(1)"),  # not held any more: a warning
            (a, "SELECT pg_advisory_unlock_shared(7, 7)"),
            (a, "SELECT pg_advisory_unlock(1, 2)"),  # held shared, not exclusive
            (b, "SELECT pg_try_advisory_lock(1)"),
            (b, "SELECT pg_advisory_unlock_all()"),
            (a, "SELECT pg_advisory_lock(NULL)"),  # strict
            (a, "SELECT pg_advisory_lock(1, 2, 3)"),
            (a, "SELECT pg_advisory_xact_lock(5)"),  # an implicit transaction: gone at once
            (b, "SELECT pg_try_advisory_xact_lock(5)"),
            (a, "BEGIN"),
            (a, "SELECT pg_advisory_xact_lock(6), pg_try_advisory_xact_lock_shared(8)"),
            (a, "SELECT pg_advisory_unlock(6)"),  # a transaction's lock is not unlocked
            (b, "SELECT pg_try_advisory_lock(6)"),
            (a, LOCKS),
            (a, "COMMIT"),
            (b, "SELECT pg_try_advisory_lock(6), pg_try_advisory_lock(8)"),
            (b, "SELECT pg_advisory_unlock_all()"),
            (a, "SELECT pg_sleep(0.01)"),
            (a, "SET lock_timeout = '150ms'"),
            (a, "SHOW lock_timeout"),
            (b, "SELECT pg_advisory_lock(20)"),
            (a, "SELECT pg_advisory_lock(20)"),  # waits, then gives up
            (a, "SET lock_timeout = 0"),
        ]:
            seen.append(c(sql))
        # b waits for a's lock: a gives it up, b gets it.
        a("SELECT pg_advisory_lock(30)")
        join = _in_background(lambda: b("SELECT pg_advisory_lock(30)"))
        seen.append(a(LOCKS))
        seen.append(a("SELECT pg_advisory_unlock(30)"))
        seen.append(join())
        # A cycle: b waits for a, then a for b; b, which has waited deadlock_timeout first,
        # finds it and fails; its session locks stay, so a goes on when b lets them go.
        a("SELECT pg_advisory_lock(40)")
        join = _in_background(lambda: b("SELECT pg_advisory_lock(40)"))
        join_a = _in_background(lambda: a("SELECT pg_advisory_lock(20)"))
        seen.append(join())
        seen.append(b("SELECT pg_advisory_unlock_all()"))
        seen.append(join_a())
        # A cancel ends a wait (and pg_sleep).
        b("SELECT pg_advisory_lock(50)")
        for sql in ("SELECT pg_advisory_lock(50)", "SELECT pg_sleep(30)"):
            join = _in_background(lambda sql=sql: a(sql))
            a.conn.cancel_safe()
            seen.append(join())
        # The session's end lets its locks go.
    with Client(dsn) as c:
        deadline = time.monotonic() + 10
        while c.conn.execute(LOCKS).fetchall() and time.monotonic() < deadline:
            time.sleep(0.05)
        seen.append(c(LOCKS))
    return seen


def test_advisory_locks_match_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    ours = _script(proxy.dsn())
    db = "advisory_ref"
    pg15.psql(f"DROP DATABASE IF EXISTS {db}")
    pg15.psql(f"CREATE DATABASE {db}")
    theirs = _script(pg15.dsn(db))
    for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        assert o == t, f"step {i}: proxy {o!r} != PostgreSQL {t!r}"
    # (what it covered)
    warned = ("rows", [("pg_advisory_unlock", 16)], [(False,)], [("WARNING", "01000", "you don't own a lock of type ExclusiveLock")])
    assert warned in ours
    assert ("error", "55P03", "canceling statement due to lock timeout", None) in ours
    assert any(o[:3] == ("error", "40P01", "deadlock detected") for o in ours if isinstance(o, tuple))
    assert ours.count(("error", "57014", "canceling statement due to user request", None)) == 2


def _timeouts(dsn: str) -> list[object]:
    seen: list[object] = []
    with Client(dsn) as a, Client(dsn) as b:
        b("SELECT pg_advisory_lock(60)")
        for sql in [
            "SET statement_timeout = '300ms'",
            "SHOW statement_timeout",
            "SELECT pg_sleep(5)",
            "SELECT 1",  # the next statement runs (nothing left of the timeout)
            "SELECT pg_advisory_lock(60)",  # a lock wait ends there too
            "SELECT count(*) FROM generate_series(1, 100000000000) g",  # so does a long query
            "SET statement_timeout = 0",
            "SELECT pg_sleep(0.5)",
            "BEGIN",
            "SET LOCAL statement_timeout = 100",
            "SELECT pg_sleep(1)",
            "ROLLBACK",
            "SHOW statement_timeout",
        ]:
            start = time.monotonic()
            got = a(sql)
            seen.append((got, time.monotonic() - start < 3))
        a.conn.execute("SET statement_timeout = '200ms'")
        try:  # the extended protocol (parameters): the same
            a.conn.execute("SELECT pg_sleep(%s)", (5,))
        except psycopg.Error as e:
            seen.append((e.sqlstate, e.diag.message_primary))
    return seen


def test_statement_timeout_matches_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    ours = _timeouts(proxy.dsn())
    theirs = _timeouts(pg15.dsn())
    for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        assert o == t, f"step {i}: proxy {o!r} != PostgreSQL {t!r}"
    timed_out = (("error", "57014", "canceling statement due to statement timeout", None), True)
    assert ours.count(timed_out) == 4
    assert ours[-1] == ("57014", "canceling statement due to statement timeout")


def test_a_migration_tool_runs_its_steps_one_at_a_time(proxy: ProxyServer) -> None:
    """Four 'deployments' race to migrate: each takes the same advisory lock, checks what is
    done, does the next step and lets go: every step runs once, in order."""
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE schema_steps (step int PRIMARY KEY, by_worker int)")

    def deploy(worker: int) -> None:
        with psycopg.connect(proxy.dsn(), autocommit=True) as c:
            for _ in range(5):
                c.execute("SELECT pg_advisory_lock(7777)")
                try:
                    done = c.execute("SELECT coalesce(max(step), 0) FROM schema_steps").fetchone()[0]  # type: ignore[index]
                    if done < 10:
                        c.execute("INSERT INTO schema_steps VALUES (%s, %s)", (done + 1, worker))
                finally:
                    c.execute("SELECT pg_advisory_unlock(7777)")

    threads = [threading.Thread(target=deploy, args=(w,)) for w in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    with psycopg.connect(proxy.dsn()) as c:
        steps = [r[0] for r in c.execute("SELECT step FROM schema_steps ORDER BY step")]
    assert steps == list(range(1, 11))
