"""The server at the protocol level: start-up, authentication, bad input, limits, cancel.
Driven with raw bytes (the codec's BackendParser) and with real drivers."""

from __future__ import annotations

import random
import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.proxy import ProxyServer
from walsender_proxy.protocol import BackendParser
from walsender_proxy.protocol import messages as m
from walsender_proxy.server.hba import HbaRule


@pytest.fixture(scope="module")
def proxy() -> Iterator[ProxyServer]:
    with ProxyServer() as p:
        assert p.ctx is not None
        p.ctx.roles.create("alice", password="wonderland", login=True)
        p.ctx.roles.create("nologin", login=False)
        yield p


def raw(proxy: ProxyServer) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
    return s


def read_messages(s: socket.socket, until: type = m.ReadyForQuery, limit: float = 10, count: int = 1) -> list[m.BackendMessage]:
    parser = BackendParser()
    out: list[m.BackendMessage] = []
    seen = 0
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            data = s.recv(65536)
        except TimeoutError:
            break
        if not data:
            break
        parser.feed(data)
        for msg in parser:
            out.append(msg)
            if isinstance(msg, m.ErrorResponse) and msg.fields.get("S") == "FATAL":
                return out
            if isinstance(msg, until):
                seen += 1
                if seen >= count:
                    return out
    return out


def startup(s: socket.socket, **params: str) -> list[m.BackendMessage]:
    s.sendall(m.StartupMessage(params).encode())
    return read_messages(s)


def fatal(msgs: list[m.BackendMessage]) -> m.ErrorResponse:
    errs = [x for x in msgs if isinstance(x, m.ErrorResponse)]
    assert errs, msgs
    return errs[-1]


def test_startup_reports_parameters_and_key(proxy: ProxyServer) -> None:
    with raw(proxy) as s:
        msgs = startup(s, user="postgres", database="postgres", application_name="t1")
    assert isinstance(msgs[0], m.AuthenticationOk)
    params = {x.name: x.value for x in msgs if isinstance(x, m.ParameterStatus)}
    for name in ("server_version", "server_encoding", "client_encoding", "DateStyle", "IntervalStyle", "TimeZone", "integer_datetimes", "standard_conforming_strings", "application_name", "is_superuser", "session_authorization"):
        assert name in params, name
    assert params["server_version"] == "15.18" and params["application_name"] == "t1"
    assert params["is_superuser"] == "on" and params["session_authorization"] == "postgres"
    assert any(isinstance(x, m.BackendKeyData) for x in msgs)
    assert isinstance(msgs[-1], m.ReadyForQuery) and msgs[-1].status == "I"


def test_ssl_and_gss_requests_are_declined_without_tls(proxy: ProxyServer) -> None:
    with raw(proxy) as s:
        s.sendall(m.SSLRequest().encode())
        assert s.recv(1) == b"N"
        s.sendall(m.GSSENCRequest().encode())
        assert s.recv(1) == b"N"
        msgs = startup(s, user="postgres")
        assert isinstance(msgs[-1], m.ReadyForQuery)


@pytest.mark.parametrize(
    ("params", "sqlstate", "text"),
    [
        ({"database": "postgres"}, "28000", "no PostgreSQL user name"),
        ({"user": "postgres", "database": "nope"}, "3D000", 'database "nope" does not exist'),
        ({"user": "ghost"}, "28000", 'role "ghost" does not exist'),
        ({"user": "nologin", "database": "postgres"}, "28000", "not permitted to log in"),
        ({"user": "postgres", "replication": "true"}, "0A000", "physical replication"),
        ({"user": "postgres", "options": "-c no_such_setting=1"}, "42704", "unrecognized configuration parameter"),
        ({"user": "postgres", "TimeZone": "Europe/Nowhere"}, "22023", 'invalid value for parameter "TimeZone": "Europe/Nowhere"'),
    ],
)
def test_startup_refusals_match_postgresql(proxy: ProxyServer, params: dict[str, str], sqlstate: str, text: str) -> None:
    with raw(proxy) as s:
        err = fatal(startup(s, **params))
    assert err.fields["S"] == "FATAL" and err.sqlstate == sqlstate, err.fields
    assert text in err.message


def test_startup_options_are_applied(proxy: ProxyServer) -> None:
    with raw(proxy) as s:
        msgs = startup(s, user="postgres", options="-c application_name=fromopts --DateStyle=ISO,\\ DMY")
    params = {x.name: x.value for x in msgs if isinstance(x, m.ParameterStatus)}
    assert params["application_name"] == "fromopts"
    assert params["DateStyle"] == "ISO, DMY"  # (an escaped space)


def test_password_and_scram_authentication(tmp_path) -> None:
    rules = (
        HbaRule.parse({"type": "host", "database": "all", "user": "alice", "address": "127.0.0.1/32", "method": "scram-sha-256"}),
        HbaRule.parse({"type": "host", "database": "all", "user": "bob", "address": "127.0.0.1/32", "method": "password"}),
        HbaRule.parse({"type": "host", "database": "all", "user": "all", "address": "127.0.0.1/32", "method": "reject"}),
    )
    with ProxyServer(tmp_path / "d", hba=rules, auth_failure_delay=0.3) as p:
        assert p.ctx is not None
        p.ctx.roles.create("alice", password="wonderland")
        p.ctx.roles.create("bob", password="builder")
        with psycopg.connect(p.dsn("alice", password="wonderland")) as c:
            assert c.info.parameter_status("session_authorization") == "alice"
        with psycopg.connect(p.dsn("bob", password="builder")) as c:
            assert c.info.parameter_status("is_superuser") == "off"
        timings = []
        for user, pw in (("alice", "wrong"), ("bob", "wrong"), ("carol", "x")):
            t0 = time.monotonic()
            with pytest.raises(psycopg.OperationalError) as ei:
                psycopg.connect(p.dsn(user, password=pw))
            timings.append(time.monotonic() - t0)
            if user != "carol":
                assert f'password authentication failed for user "{user}"' in str(ei.value)
        assert all(t >= 0.3 for t in timings[:2])
        # libpq does not expose a start-up error's SQLSTATE: check it on the wire.
        with raw(p) as s:
            s.sendall(m.StartupMessage({"user": "bob"}).encode())
            assert isinstance(read_messages(s, until=m.AuthenticationCleartextPassword)[-1], m.AuthenticationCleartextPassword)
            s.sendall(m.PasswordMessage(b"wrong").encode())
            assert fatal(read_messages(s)).sqlstate == "28P01"
        with raw(p) as s:
            err = fatal(startup(s, user="postgres"))
            assert err.sqlstate == "28000" and err.message.startswith("pg_hba.conf rejects connection for host")
        verifier = p.ctx.roles.get("alice").verifier  # type: ignore[union-attr]
        assert verifier is not None and verifier.startswith("SCRAM-SHA-256$4096:") and "wonderland" not in verifier


def test_garbage_and_protocol_violations_get_08p01_and_the_server_lives(proxy: ProxyServer) -> None:
    cases = [
        b"\x00\x00\x00\x08\x00\x02\x00\x00",  # protocol 2.0
        b"\xff\xff\xff\xff",  # negative startup length
        b"\x00\x00\x00\x03",  # too short
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    ]
    for payload in cases:
        with raw(proxy) as s:
            s.sendall(payload)
            msgs = read_messages(s, limit=3)
            errs = [x for x in msgs if isinstance(x, m.ErrorResponse)]
            assert errs and errs[0].fields["S"] == "FATAL", (payload, msgs)
    with raw(proxy) as s:
        startup(s, user="postgres")
        s.sendall(b"Z\x00\x00\x00\x04")  # not a frontend message type
        err = fatal(read_messages(s))
        assert err.sqlstate == "08P01" and "invalid frontend message type 90" in err.message
    with raw(proxy) as s:
        startup(s, user="postgres")
        s.sendall(b"Q" + struct.pack("!I", 2))  # impossible length
        assert fatal(read_messages(s)).sqlstate == "08P01"
    with psycopg.connect(proxy.dsn()) as c:
        assert c.info.status == psycopg.pq.ConnStatus.OK


def test_oversized_message_is_refused(tmp_path) -> None:
    with ProxyServer(tmp_path / "d", max_message_length=1000) as p, raw(p) as s:
        startup(s, user="postgres")
        s.sendall(m.Query("SELECT '" + "x" * 5000 + "'").encode())
        err = fatal(read_messages(s))
        assert err.sqlstate == "08P01" and "invalid message length" in err.message


def test_max_connections(tmp_path) -> None:
    with ProxyServer(tmp_path / "d", max_connections=2) as p:
        a = psycopg.connect(p.dsn())
        b = psycopg.connect(p.dsn())
        with raw(p) as s:
            assert fatal(startup(s, user="postgres")).sqlstate == "53300"
        a.close()
        time.sleep(0.2)
        psycopg.connect(p.dsn()).close()
        b.close()


def test_protocol_fuzz_leaves_other_sessions_unaffected(proxy: ProxyServer) -> None:
    """Random and mutated messages, bounded in count and time; a concurrent session keeps
    working throughout and the server answers new connections afterwards."""
    rnd = random.Random(7)
    good = [
        m.StartupMessage({"user": "postgres", "database": "postgres"}).encode(),
        m.Query("SET application_name = 'fuzz'").encode(),
        m.Parse("", "SET application_name = 'x'", ()).encode(),
        m.Bind("", "", (), (), ()).encode(),
        m.Execute("", 0).encode(),
        m.Sync().encode(),
    ]
    keeper = psycopg.connect(proxy.dsn(), autocommit=True)
    deadline = time.monotonic() + 15
    n = 0
    while n < 300 and time.monotonic() < deadline:
        n += 1
        stream = b"".join(good[: rnd.randint(1, len(good))])
        data = bytearray(stream)
        for _ in range(rnd.randint(1, 8)):
            op = rnd.random()
            pos = rnd.randrange(len(data)) if data else 0
            if op < 0.4 and data:
                data[pos] = rnd.randrange(256)
            elif op < 0.7:
                data[pos:pos] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 16)))
            elif data:
                del data[pos : pos + rnd.randint(1, 8)]
        if rnd.random() < 0.2:
            data = bytearray(rnd.randbytes(rnd.randint(1, 200)))
        with raw(proxy) as s:
            s.settimeout(2)
            try:
                s.sendall(bytes(data))
                s.shutdown(socket.SHUT_WR)
                while s.recv(65536):
                    pass
            except OSError:
                pass
        keeper.execute("SET application_name = 'keeper'")
    assert keeper.info.parameter_status("application_name") == "keeper"
    keeper.close()
    with psycopg.connect(proxy.dsn()) as c:
        assert c.info.status == psycopg.pq.ConnStatus.OK


def self_signed_cert(directory: Path) -> tuple[Path, Path]:
    """``server.crt`` and ``server.key`` in ``directory``: a throwaway certificate for
    localhost, made with the openssl command."""
    import subprocess

    cert, key = directory / "server.crt", directory / "server.key"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_tls_when_configured(tmp_path: Path) -> None:
    cert, key = self_signed_cert(tmp_path)
    with ProxyServer(tmp_path / "d", ssl_cert_file=str(cert), ssl_key_file=str(key)) as p:
        with psycopg.connect(p.dsn(sslmode="require")) as c:
            assert c.pgconn.ssl_in_use
            assert c.execute("SELECT 1").fetchone() == (1,)
        with psycopg.connect(p.dsn(sslmode="disable")) as c:
            assert not c.pgconn.ssl_in_use


def test_cancel_request_cancels_the_right_session(proxy: ProxyServer) -> None:
    import threading

    victim = psycopg.connect(proxy.dsn(), autocommit=True)
    bystander = psycopg.connect(proxy.dsn(), autocommit=True)
    errors: list[BaseException] = []

    def long_query() -> None:
        try:
            victim.execute("SELECT sum(x) FROM generate_series(1, 20000000000) AS t(x)")
        except BaseException as e:
            errors.append(e)

    th = threading.Thread(target=long_query)
    th.start()
    time.sleep(0.5)
    # cancel_safe: psycopg's blocking cancel() holds the GIL while it waits, which would
    # starve this in-process server; the real client-side behaviour is the same.
    victim.cancel_safe(timeout=10)
    th.join(30)
    assert not th.is_alive()
    assert errors and isinstance(errors[0], psycopg.errors.QueryCanceled)
    assert errors[0].sqlstate == "57014"
    assert victim.execute("SELECT 2").fetchone() == (2,)  # the session carries on
    assert bystander.execute("SELECT 3").fetchone() == (3,)
    victim.close()
    bystander.close()


def test_extended_protocol_errors_skip_to_sync(proxy: ProxyServer) -> None:
    with raw(proxy) as s:
        startup(s, user="postgres")
        s.sendall(
            m.Parse("", "SELECT nope_column FROM nowhere", ()).encode()
            + m.Bind("", "", (), (), ()).encode()
            + m.Execute("", 0).encode()
            + m.Sync().encode()
            + m.Parse("", "SELECT 1", ()).encode()
            + m.Bind("", "", (), (), ()).encode()
            + m.Execute("", 0).encode()
            + m.Sync().encode()
        )
        both = read_messages(s, count=2)
        cut = next(i for i, x in enumerate(both) if isinstance(x, m.ReadyForQuery)) + 1
        first, second = both[:cut], both[cut:]
        # PostgreSQL reports the missing table at Parse; the proxy resolves names when the
        # statement runs, so the error comes at Execute. Either way: one error, then Sync.
        kinds = [type(x).__name__ for x in first]
        assert kinds[-2:] == ["ErrorResponse", "ReadyForQuery"] and kinds.count("ErrorResponse") == 1
        assert first[-2].sqlstate == "42P01"
        assert [type(x).__name__ for x in second] == [
            "ParseComplete",
            "BindComplete",
            "DataRow",
            "CommandComplete",
            "ReadyForQuery",
        ]


def test_portal_row_limits_suspend(proxy: ProxyServer) -> None:
    with raw(proxy) as s:
        startup(s, user="postgres")
        s.sendall(
            m.Parse("s1", "SELECT x FROM generate_series(1, 5) AS t(x)", ()).encode()
            + m.Bind("p1", "s1", (), (), ()).encode()
            + m.Execute("p1", 2).encode()
            + m.Execute("p1", 2).encode()
            + m.Execute("p1", 2).encode()
            + m.Sync().encode()
        )
        msgs = read_messages(s)
        kinds = [type(x).__name__ for x in msgs]
        assert kinds == [
            "ParseComplete", "BindComplete",
            "DataRow", "DataRow", "PortalSuspended",
            "DataRow", "DataRow", "PortalSuspended",
            "DataRow", "CommandComplete", "ReadyForQuery",
        ]  # fmt: skip
        assert msgs[-2].tag == "SELECT 1"


def test_multi_statement_query_is_one_implicit_transaction(proxy: ProxyServer) -> None:
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE implicit_t (id int PRIMARY KEY)")
        with pytest.raises(psycopg.errors.UniqueViolation):
            c.execute("INSERT INTO implicit_t VALUES (1); INSERT INTO implicit_t VALUES (1)")
        assert c.execute("SELECT count(*) FROM implicit_t").fetchone() == (0,)
        c.execute("BEGIN")
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute("SELECT * FROM missing_table")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            c.execute("SELECT 1")
        c.execute("ROLLBACK")
        assert c.execute("SELECT 1").fetchone() == (1,)
