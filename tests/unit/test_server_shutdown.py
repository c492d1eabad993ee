"""A server shutdown ends every session: the client reads PostgreSQL's FATAL 57P01 and the
session's thread leaves. (A session cancelled by the shutdown took its thread for gone; a
thread whose connection had then closed kept reading the socket's end of file for ever,
a core busy in a process that served nobody.)"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psycopg
import pytest

from tests.proxy import ProxyServer


def session_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("session-") and t.is_alive()}


def wait_gone(threads: set[threading.Thread]) -> list[threading.Thread]:
    deadline = time.monotonic() + 10
    while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [t for t in threads if t.is_alive()]


def test_a_shutdown_ends_an_idle_session_and_its_thread(tmp_path: Path) -> None:
    before = session_threads()
    proxy = ProxyServer(tmp_path / "proxy").start()
    conn = psycopg.connect(proxy.dsn(), autocommit=True)
    try:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        ours = session_threads() - before
        assert ours, "the session runs in a thread of its own"
        proxy.stop()
        with pytest.raises(psycopg.OperationalError) as err:
            conn.execute("SELECT 1")
        assert "terminating connection due to administrator command" in str(err.value)
        assert not wait_gone(ours)
    finally:
        conn.close()


def test_a_shutdown_right_after_the_client_left_leaves_no_thread_behind(tmp_path: Path) -> None:
    # The client's Terminate and the shutdown's cancellation race; whichever wins, the
    # session's thread ends. Several rounds, over one data directory (restarts).
    before = session_threads()
    for i in range(8):
        with ProxyServer(tmp_path / "proxy") as proxy:
            conn = psycopg.connect(proxy.dsn(), autocommit=True)
            conn.execute("CREATE TABLE IF NOT EXISTS t (a int)")
            conn.execute("INSERT INTO t VALUES (%s)", (i,))
            conn.close()
    assert not wait_gone(session_threads() - before)
