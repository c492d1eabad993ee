"""Streams in walsender processes: the server hands a replication connection to a process
of its own after START_REPLICATION and gets it back after CopyDone (see
walsender_proxy/replication/sender_pool.py)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.pgcluster import pg_bindir
from tests.proxy import ProxyServer
from walsender_proxy.protocol import BackendParser
from walsender_proxy.protocol import messages as m


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[ProxyServer]:
    p = ProxyServer(tmp_path / "proxy").start()
    yield p
    p.stop()


def _setup(proxy: ProxyServer, slot: str) -> None:
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE a (id int PRIMARY KEY, v text)")
        c.execute("CREATE PUBLICATION p FOR TABLE a")
    with psycopg.connect(proxy.dsn(replication="database"), autocommit=True) as c:
        c.execute(f"CREATE_REPLICATION_SLOT {slot} LOGICAL pgoutput (SNAPSHOT 'nothing')")


def _recvlogical(proxy: ProxyServer, slot: str, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(pg_bindir() / "pg_recvlogical"), "-h", "127.0.0.1", "-p", str(proxy.port), "-U", "postgres",
         "-d", "postgres", "-S", slot, "--start", "-f", str(out), "-F", "1", "-s", "1",
         "-o", "proto_version=1", "-o", "publication_names=p"],
        stderr=subprocess.PIPE, text=True,
    )


def _wait(cond, timeout: float = 30) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _busy(proxy: ProxyServer) -> list[int]:
    assert proxy.ctx is not None
    return proxy.ctx.senders.busy_pids() if proxy.ctx.senders else []


def test_a_stream_runs_in_a_walsender_process_and_follows_ddl(proxy: ProxyServer, tmp_path: Path) -> None:
    _setup(proxy, "s1")
    out = tmp_path / "out.bin"
    rl = _recvlogical(proxy, "s1", out)
    try:
        _wait(lambda: len(_busy(proxy)) == 1)
        pid = _busy(proxy)[0]
        assert pid != os.getpid() and Path(f"/proc/{pid}").exists()
        with psycopg.connect(proxy.dsn(), autocommit=True) as c:
            c.execute("INSERT INTO a VALUES (1, 'before any ddl')")
            # DDL after the stream started: the process learns it from the log.
            c.execute("CREATE TABLE b (id int PRIMARY KEY, w text)")
            c.execute("ALTER PUBLICATION p ADD TABLE b")
            c.execute("INSERT INTO b VALUES (2, 'a table made later')")
            c.execute("ALTER TABLE a ADD COLUMN extra int")
            c.execute("INSERT INTO a VALUES (3, 'a column made later', 42)")
        _wait(lambda: out.exists() and b"a column made later" in out.read_bytes())
        data = out.read_bytes()
        assert b"before any ddl" in data and b"a table made later" in data
        assert b"extra" in data  # the Relation message sent again with the new column
        # The process's positions reach the server's views.
        with psycopg.connect(proxy.dsn(), autocommit=True) as c:
            lsn = c.execute("SELECT pg_current_wal_lsn()").fetchone()[0]

            def confirmed() -> bool:
                row = c.execute(
                    "SELECT s.sent_lsn >= %s::pg_lsn, s.flush_lsn >= %s::pg_lsn, r.confirmed_flush_lsn >= %s::pg_lsn"
                    " FROM pg_stat_replication s, pg_replication_slots r", (lsn, lsn, lsn)
                ).fetchone()
                return row == (True, True, True)

            _wait(confirmed)
    finally:
        rl.terminate()
        rl.communicate(timeout=30)
    _wait(lambda: not _busy(proxy))  # back to the pool when the client left


def test_streams_stay_in_the_server_process_with_walsender_processes_off(tmp_path: Path) -> None:
    proxy = ProxyServer(tmp_path / "proxy", walsender_processes=False).start()
    try:
        _setup(proxy, "s0")
        out = tmp_path / "out.bin"
        rl = _recvlogical(proxy, "s0", out)
        try:
            with psycopg.connect(proxy.dsn(), autocommit=True) as c:
                c.execute("INSERT INTO a VALUES (1, 'in process')")
            _wait(lambda: out.exists() and b"in process" in out.read_bytes())
            assert proxy.ctx is not None and proxy.ctx.senders is None
        finally:
            rl.terminate()
            rl.communicate(timeout=30)
    finally:
        proxy.stop()


def _start_raw(proxy: ProxyServer, slot: str) -> tuple[socket.socket, BackendParser]:
    s = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
    parser = BackendParser()
    s.sendall(m.StartupMessage({"user": "postgres", "database": "postgres", "replication": "database"}).encode())
    s.sendall(m.Query(f"START_REPLICATION SLOT {slot} LOGICAL 0/0 (proto_version '1', publication_names 'p')").encode())
    _until(s, parser, m.CopyData)
    return s, parser


def _until(s: socket.socket, parser: BackendParser, kind: type) -> m.BackendMessage:
    while True:
        for msg in parser:
            if isinstance(msg, kind):
                return msg
        data = s.recv(65536)
        assert data, "connection closed"
        parser.feed(data)


def test_the_connection_comes_back_after_copydone(proxy: ProxyServer) -> None:
    """A tablesync worker ends its stream with CopyDone and then drops its slot on the same
    connection: the server must answer both, with the bytes the process read past the
    CopyDone (here the next command, sent right behind it) handed back."""
    _setup(proxy, "s2")
    for _ in range(2):  # a process per stream
        s, parser = _start_raw(proxy, "s2")
        _wait(lambda: len(_busy(proxy)) == 1)
        s.sendall(m.CopyDone().encode() + m.Query("IDENTIFY_SYSTEM").encode())
        _until(s, parser, m.CopyDone)
        _until(s, parser, m.ReadyForQuery)
        row = _until(s, parser, m.DataRow)
        assert row.values[3] == b"postgres"  # type: ignore[attr-defined]
        _until(s, parser, m.ReadyForQuery)
        s.close()
        _wait(lambda: not _busy(proxy))


def test_a_killed_walsender_process_ends_only_its_stream(proxy: ProxyServer) -> None:
    _setup(proxy, "s3")
    s, parser = _start_raw(proxy, "s3")
    _wait(lambda: len(_busy(proxy)) == 1)
    os.kill(_busy(proxy)[0], signal.SIGKILL)
    s.settimeout(10)
    with pytest.raises(AssertionError, match="connection closed"):
        _until(s, parser, m.ErrorResponse)  # the server closes the connection
    s.close()
    _wait(lambda: not _busy(proxy))
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:  # the server lives on
        c.execute("INSERT INTO a VALUES (1, 'after the crash')")
    # The slot was let go, and a new process streams it.
    s, parser = _start_raw(proxy, "s3")
    _wait(lambda: len(_busy(proxy)) == 1)
    deadline = time.monotonic() + 30
    seen = b""
    while b"after the crash" not in seen:
        assert time.monotonic() < deadline
        seen += _until(s, parser, m.CopyData).data  # type: ignore[attr-defined]
    s.close()


def test_a_server_shutdown_ends_a_process_stream_with_57p01(tmp_path: Path) -> None:
    """As PostgreSQL's fast shutdown: the stream's client gets FATAL 57P01, whole, after
    whatever the walsender process had sent."""
    proxy = ProxyServer(tmp_path / "proxy").start()
    try:
        _setup(proxy, "s4")
        s, parser = _start_raw(proxy, "s4")
        _wait(lambda: len(_busy(proxy)) == 1)
        with psycopg.connect(proxy.dsn(), autocommit=True) as c:
            c.execute("INSERT INTO a SELECT i, repeat('x', 100) FROM generate_series(1, 2000) AS g(i)")
    finally:
        proxy.stop()
    s.settimeout(10)
    err = _until(s, parser, m.ErrorResponse)  # every message before it parsed whole
    assert err.fields["C"] == "57P01" and err.fields["S"] == "FATAL"  # type: ignore[attr-defined]
    s.close()


def test_a_tls_stream_stays_in_the_server_process(tmp_path: Path) -> None:
    cert, key = tmp_path / "server.crt", tmp_path / "server.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=localhost"],
        check=True, capture_output=True,
    )
    proxy = ProxyServer(tmp_path / "proxy", ssl_cert_file=str(cert), ssl_key_file=str(key)).start()
    try:
        _setup(proxy, "s5")
        out = tmp_path / "out.bin"
        rl = subprocess.Popen(
            [str(pg_bindir() / "pg_recvlogical"), "-d", proxy.dsn(sslmode="require"), "-S", "s5", "--start",
             "-f", str(out), "-F", "1", "-o", "proto_version=1", "-o", "publication_names=p"],
            stderr=subprocess.PIPE, text=True,
        )
        try:
            with psycopg.connect(proxy.dsn(), autocommit=True) as c:
                c.execute("INSERT INTO a VALUES (1, 'over tls')")
            _wait(lambda: out.exists() and b"over tls" in out.read_bytes())
            assert not _busy(proxy)
        finally:
            rl.terminate()
            rl.communicate(timeout=30)
    finally:
        proxy.stop()


def test_a_dead_template_is_started_again(proxy: ProxyServer) -> None:
    _setup(proxy, "s6")
    assert proxy.ctx is not None and proxy.ctx.senders is not None
    _wait(lambda: len(proxy.ctx.senders.pids()) == 1)  # the template is up
    template = proxy.ctx.senders.pids()[0]
    os.kill(template, signal.SIGKILL)
    for _ in range(2):  # the first stream may stay in the server; the next has a process
        s, parser = _start_raw(proxy, "s6")
        s.sendall(m.CopyDone().encode())
        _until(s, parser, m.ReadyForQuery)
        s.close()
        time.sleep(0.5)
    _wait(lambda: proxy.ctx.senders.pids() and proxy.ctx.senders.pids()[0] != template)
    s, parser = _start_raw(proxy, "s6")
    _wait(lambda: len(_busy(proxy)) == 1)
    s.close()
