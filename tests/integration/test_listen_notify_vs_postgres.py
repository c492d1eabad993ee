"""LISTEN, UNLISTEN, NOTIFY and pg_notify() beside PostgreSQL 15: the same steps of two
sessions on each server, and the notifications each session's client receives (from whom,
on which channel, with what payload, in what order) compared: delivery at commit, to an
idle session at once and to one in a transaction block after it, duplicates in one
transaction sent once, rollbacks (of a transaction or to a savepoint) discarding, a
session's own notifications, the errors, and asyncpg's listeners."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

# (session, statement) or ("recv", session): what that session's client has received
STEPS: list[tuple[str, str]] = [
    ("a", "LISTEN jobs"),
    ("a", "LISTEN other"),
    ("b", "NOTIFY jobs, 'hello'"),
    ("recv", "a"),
    ("b", "SELECT pg_notify('jobs', 'two'), pg_notify('other', NULL)"),
    ("recv", "a"),
    ("b", "BEGIN"),
    ("b", "NOTIFY jobs, 'in tx'"),
    ("b", "NOTIFY jobs, 'in tx'"),
    ("b", "NOTIFY jobs, 'in tx 2'"),
    ("recv", "a"),
    ("b", "COMMIT"),
    ("recv", "a"),
    ("b", "BEGIN"),
    ("b", "NOTIFY jobs, 'rolled back'"),
    ("b", "ROLLBACK"),
    ("b", "BEGIN"),
    ("b", "NOTIFY jobs, 'kept'"),
    ("b", "SAVEPOINT s"),
    ("b", "NOTIFY jobs, 'undone'"),
    ("b", "ROLLBACK TO SAVEPOINT s"),
    ("b", "COMMIT"),
    ("recv", "a"),
    ("a", "BEGIN"),
    ("b", "NOTIFY jobs, 'while a is in a block'"),
    ("a", "SELECT 1"),
    ("recv", "a"),
    ("a", "COMMIT"),
    ("recv", "a"),
    ("a", "NOTIFY jobs, 'to myself'"),
    ("recv", "a"),
    ("a", "BEGIN"),
    ("a", "LISTEN never"),
    ("a", "ROLLBACK"),
    ("b", "NOTIFY never"),
    ("recv", "a"),
    ("a", "UNLISTEN other"),
    ("b", "NOTIFY other, 'gone'"),
    ("b", "NOTIFY jobs, 'still'"),
    ("recv", "a"),
    ("b", "NOTIFY \"\""),
    ("b", "SELECT pg_notify(NULL, 'x')"),
    ("b", "SELECT pg_notify('jobs', repeat('x', 8000))"),
    ("b", "SELECT pg_notify(repeat('c', 64), 'x')"),
    ("a", "UNLISTEN *"),
    ("b", "NOTIFY jobs, 'after unlisten'"),
    ("recv", "a"),
]


def _run(dsn: str) -> list[Any]:
    conns = {s: psycopg.connect(dsn, autocommit=True) for s in ("a", "b")}
    pids = {c.info.backend_pid: s for s, c in conns.items()}
    out: list[Any] = []
    try:
        for who, sql in STEPS:
            if who == "recv":
                # what came with the session's last results, then what reaches it idle
                got = [(pids.get(n.pid, "?"), n.channel, n.payload) for n in conns[sql].notifies(timeout=0.3)]
                out.append(("recv", sql, got))
                continue
            try:
                cur = conns[who].execute(sql)
                out.append((who, sql, cur.statusmessage))
            except psycopg.Error as e:
                out.append((who, sql, e.sqlstate, e.diag.message_primary))
    finally:
        for c in conns.values():
            c.close()
    return out


def test_listen_notify_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    theirs = _run(pg15.dsn(dbname=pg15.new_database("ln")))
    assert ("recv", "a", [("b", "jobs", "hello")]) in theirs
    ours = _run(proxy.dsn())
    for t, o in zip(theirs, ours, strict=True):
        assert o == t


async def _asyncpg(dsn_port: int) -> list[tuple[str, str]]:
    import asyncpg

    got: list[tuple[str, str]] = []
    arrived = asyncio.Event()
    listener = await asyncpg.connect(host="127.0.0.1", port=dsn_port, user="postgres", database="postgres")
    other = await asyncpg.connect(host="127.0.0.1", port=dsn_port, user="postgres", database="postgres")
    try:
        def on(conn: Any, pid: int, channel: str, payload: str) -> None:
            got.append((channel, payload))
            if len(got) == 2:
                arrived.set()

        await listener.add_listener("events", on)
        await other.execute("NOTIFY events, 'one'")
        await other.execute("SELECT pg_notify('events', $1)", "two")
        await asyncio.wait_for(arrived.wait(), 10)  # (the listener is idle: no query needed)
        await listener.remove_listener("events", on)
    finally:
        await listener.close()
        await other.close()
    return got


def test_asyncpg_listeners_hear_notifications(proxy: ProxyServer) -> None:
    assert asyncio.run(_asyncpg(proxy.port)) == [("events", "one"), ("events", "two")]


def test_a_transaction_that_notified_cannot_be_prepared(proxy: ProxyServer) -> None:
    """(PostgreSQL's test cluster has prepared transactions off: checked on the proxy.)"""
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("BEGIN")
        c.execute("NOTIFY jobs")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="cannot PREPARE a transaction that has executed LISTEN, UNLISTEN, or NOTIFY"):
            c.execute("PREPARE TRANSACTION 'ln'")
        assert c.info.transaction_status == 0  # (rolled back)
