"""SCRAM over TLS against PostgreSQL 15 (issue 25): the same certificate, key, pg_hba.conf
rules and role on both servers, then the same clients — libpq with ``channel_binding=require``,
a raw client that bends the SCRAM exchange (a wrong channel binding, the wrong flag for the
mechanism), ``pg_stat_ssl`` of the connection, and the TLS protocol range
(``ssl_min_protocol_version``) — and both must answer alike."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import os
import re
import secrets
import shutil
import socket
import ssl
import subprocess
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from tests.integration.test_server_protocol import self_signed_cert
from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer
from walsender_proxy.protocol import BackendParser
from walsender_proxy.protocol import messages as m
from walsender_proxy.server.hba import parse_rules

HBA = [
    "hostssl all all 127.0.0.1/32 scram-sha-256",
    # (so that a connection without TLS gets as far as SCRAM, and libpq's own refusal)
    "host all all 127.0.0.1/32 scram-sha-256",
]
PASSWORD = "alice-pw"
#: alice, and a superuser to read the TLS settings (PostgreSQL shows them to superusers only).
ROLE_SQL = f"CREATE ROLE alice LOGIN PASSWORD '{PASSWORD}'; CREATE ROLE boss SUPERUSER LOGIN PASSWORD '{PASSWORD}'"


def hba_rules() -> tuple:
    keys = ("type", "database", "user", "address", "method")
    return parse_rules([dict(zip(keys, line.split(), strict=True)) for line in HBA], None)


@dataclass
class Servers:
    pg: PgCluster
    proxy: ProxyServer
    cert: Path
    key: Path

    def ports(self) -> dict[str, int]:
        return {"proxy": self.proxy.port, "postgres": self.pg.port}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    cert, key = self_signed_cert(tmp_path_factory.mktemp("certs"))
    pg = PgCluster(hba=HBA)
    for name in ("server.crt", "server.key"):  # readable by the server's user only
        shutil.copy(cert.parent / name, pg.root / name)
        if pg.user is not None:
            os.chown(pg.root / name, pg.user.pw_uid, pg.user.pw_gid)
    (pg.root / "server.key").chmod(0o600)
    pg.settings.update(
        ssl="on",
        ssl_cert_file=f"'{pg.root / 'server.crt'}'",
        ssl_key_file=f"'{pg.root / 'server.key'}'",
    )
    try:
        pg.start()
        pg.psql(ROLE_SQL, host=str(pg.root))
        with ProxyServer(ssl_cert_file=str(cert), ssl_key_file=str(key)) as proxy:
            with psycopg.connect(proxy.dsn(), autocommit=True) as c:
                c.execute(ROLE_SQL)
            proxy.reload(hba=hba_rules())
            yield Servers(pg, proxy, cert, key)
    finally:
        pg.stop()


def dsn(port: int, user: str = "alice", **extra: str) -> str:
    parts = [f"host=127.0.0.1 port={port} user={user} dbname=postgres password={PASSWORD}"]
    return " ".join(parts + [f"{k}={v}" for k, v in extra.items()])


def client_error(port: int, **extra: str) -> str:
    """libpq's message for a connection that fails, without the server's address."""
    with pytest.raises(psycopg.OperationalError) as ei:
        psycopg.connect(dsn(port, connect_timeout="10", **extra)).close()
    text = str(ei.value)
    return re.sub(r'connection to server at "127\.0\.0\.1", port \d+ failed: ', "", text).strip()


# -- libpq -------------------------------------------------------------------------------------


def test_channel_binding_require_over_tls(servers: Servers) -> None:
    """libpq's channel_binding=require takes SCRAM-SHA-256-PLUS and checks the binding:
    both servers let alice in."""
    for port in servers.ports().values():
        with psycopg.connect(dsn(port, sslmode="require", channel_binding="require")) as c:
            assert c.pgconn.ssl_in_use
            assert c.execute("SELECT current_user").fetchone() == ("alice",)


def test_channel_binding_require_without_tls_is_refused_by_the_client(servers: Servers) -> None:
    """Without TLS the server offers SCRAM-SHA-256 only, so libpq with channel_binding=require
    gives up itself — the same words with either server."""
    got = {name: client_error(port, sslmode="disable", channel_binding="require") for name, port in servers.ports().items()}
    assert got["proxy"] == got["postgres"]
    assert "channel binding" in got["postgres"]


def test_a_logical_replication_connection_with_channel_binding(servers: Servers) -> None:
    """A walsender connection (replication=database) authenticates the same way: a
    subscriber's CONNECTION with channel_binding=require gets in, and pg_stat_ssl shows it
    to a superuser — not to another role, as PostgreSQL hides other roles' backends."""
    for port in servers.ports().values():
        conninfo = dsn(port, "boss", sslmode="require", channel_binding="require", replication="database")
        with psycopg.connect(conninfo, autocommit=True) as c:
            assert c.pgconn.ssl_in_use
            assert c.execute("IDENTIFY_SYSTEM").fetchone() is not None
            pid = c.info.backend_pid
            sql = "SELECT ssl, version FROM pg_stat_ssl WHERE pid = %s"
            with psycopg.connect(dsn(port, "boss", sslmode="require")) as other:
                assert other.execute(sql, [pid]).fetchall() == [(True, "TLSv1.3")], port
            with psycopg.connect(dsn(port, sslmode="require")) as other:  # another role's
                assert other.execute(sql, [pid]).fetchall() == [], port


def test_pg_stat_ssl_of_the_connection(servers: Servers) -> None:
    sql = "SELECT ssl, version, cipher IS NOT NULL, bits FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
    for mode in ("require", "disable"):
        got = {}
        for name, port in servers.ports().items():
            with psycopg.connect(dsn(port, sslmode=mode)) as c:
                got[name] = c.execute(sql).fetchall()
        assert got["proxy"] == got["postgres"], mode
    assert got["postgres"] == [(False, None, False, None)]
    # The same cipher is agreed: TLS 1.3's suite, and with a client capped at TLS 1.2 the
    # first of ssl_ciphers' list (the server's preference, as PostgreSQL's default) that
    # the client offers.
    same = "SELECT version, cipher, bits FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
    for cap in ({}, {"ssl_max_protocol_version": "TLSv1.2"}):
        rows = {}
        for name, port in servers.ports().items():
            with psycopg.connect(dsn(port, sslmode="require", **cap)) as c:
                rows[name] = c.execute(same).fetchall()
        assert rows["proxy"] == rows["postgres"], cap


def test_pg_stat_ssl_columns_and_other_backends(servers: Servers) -> None:
    """The view's columns and types are PostgreSQL's; a TLS session sees the other
    connections' rows too (one per client backend), and no client certificate fields."""
    sql = "SELECT * FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
    shapes = {}
    for name, port in servers.ports().items():
        with psycopg.connect(dsn(port, sslmode="require")) as c, psycopg.connect(dsn(port, sslmode="disable")) as other:
            other_pid = other.info.backend_pid
            cur = c.execute(sql)
            shapes[name] = [(d.name, d.type_code) for d in cur.description]
            row = cur.fetchone()
            assert row is not None and row[1] is True and row[5:] == (None, None, None), name
            seen = c.execute("SELECT ssl, version FROM pg_stat_ssl WHERE pid = %s", [other_pid]).fetchall()
            assert seen == [(False, None)], name
    assert shapes["proxy"] == shapes["postgres"]


def test_show_tls_settings(servers: Servers) -> None:
    names = ("ssl", "ssl_min_protocol_version", "ssl_max_protocol_version", "ssl_ciphers")
    got = {}
    for name, port in servers.ports().items():
        with psycopg.connect(dsn(port, "boss", sslmode="require")) as c:
            got[name] = [c.execute(f"SHOW {n}").fetchone() for n in names]
            listed = ", ".join(f"'{n}'" for n in names)
            got[name] += c.execute(
                f"SELECT name, setting, source FROM pg_settings WHERE name IN ({listed}) ORDER BY name"
            ).fetchall()
    assert got["proxy"] == got["postgres"]


# -- a raw client: the SCRAM exchange bent in the ways a broken or hostile client bends it ---------


class _Wire:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.parser = BackendParser()
        self.pending: deque[m.BackendMessage] = deque()

    def send(self, msg: m.FrontendMessage) -> None:
        self.sock.sendall(msg.encode())

    def next(self) -> m.BackendMessage | None:
        while not self.pending:
            self.pending.extend(self.parser)
            if self.pending:
                break
            data = self.sock.recv(65536)
            if not data:
                return None
            self.parser.feed(data)
        return self.pending.popleft()


def _server_cert_hash(sock: ssl.SSLSocket) -> bytes:
    """tls-server-end-point data as the client computes it (the certificate here is
    signed with SHA-256)."""
    der = sock.getpeercert(binary_form=True)
    assert der is not None
    return hashlib.sha256(der).digest()


@dataclass(frozen=True)
class Bent:
    """How the client bends the exchange: the mechanism it selects, its GS2 header, and
    the channel binding (``c=``) it sends; ``cbind`` None: the right one for the header."""

    mechanism: str = "SCRAM-SHA-256-PLUS"
    gs2: str = "p=tls-server-end-point,,"
    cbind: bytes | None = None
    tls: bool = True
    #: client-first-message-bare instead of ``n=,r=<nonce>`` ({nonce} is replaced)
    bare: str | None = None
    #: appended to the nonce of the client-final message
    nonce_suffix: str = ""
    #: the proof's text instead of the right one's, and what follows it
    proof: str | None = None
    tail: str = ""
    #: the client-first message in SASLInitialResponse (False: none there, -1 length; the
    #: server asks for it with an empty challenge)
    initial: bool = True
    user: str = "alice"


def scram_attempt(port: int, how: Bent) -> tuple[tuple[str, ...], object]:
    """(the mechanisms the server offered, then 'ready' or the error's (severity,
    SQLSTATE, message, detail))."""
    sock: socket.socket = socket.create_connection(("127.0.0.1", port), timeout=20)
    with sock:
        cbind_data = b""
        if how.tls:
            sock.sendall(m.SSLRequest().encode())
            assert sock.recv(1) == b"S"
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            sock = ctx.wrap_socket(sock)
            cbind_data = _server_cert_hash(sock)  # type: ignore[arg-type]
        wire = _Wire(sock)
        wire.send(m.StartupMessage({"user": how.user, "database": "postgres"}))
        offered: tuple[str, ...] = ()
        c_nonce = base64.b64encode(secrets.token_bytes(18)).decode()
        first_bare = f"n=,r={c_nonce}" if how.bare is None else how.bare.format(nonce=c_nonce)
        salted = b""
        auth_message = b""
        while (msg := wire.next()) is not None:
            if isinstance(msg, m.ErrorResponse):
                return offered, (msg.severity, msg.sqlstate, msg.message, msg.fields.get("D"))
            if isinstance(msg, m.ReadyForQuery):
                return offered, "ready"
            if isinstance(msg, m.AuthenticationSASL):
                offered = msg.mechanisms
                first = (how.gs2 + first_bare).encode()
                wire.send(m.SASLInitialResponse(how.mechanism, first if how.initial else None))
            elif isinstance(msg, m.AuthenticationSASLContinue) and not msg.data:
                wire.send(m.SASLResponse((how.gs2 + first_bare).encode()))
            elif isinstance(msg, m.AuthenticationSASLContinue):
                server_first = msg.data.decode()
                attrs = dict(a.split("=", 1) for a in server_first.split(","))
                salted = hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(), base64.b64decode(attrs["s"]), int(attrs["i"]))
                cbind_input = how.gs2.encode() + (cbind_data if how.gs2.startswith("p=") else b"")
                if how.cbind is not None:
                    cbind_input = how.cbind
                without_proof = f"c={base64.b64encode(cbind_input).decode()},r={attrs['r']}{how.nonce_suffix}"
                auth_message = f"{first_bare},{server_first},{without_proof}".encode()
                client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
                stored_key = hashlib.sha256(client_key).digest()
                signature = hmac.new(stored_key, auth_message, hashlib.sha256).digest()
                proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
                proof_text = base64.b64encode(proof).decode() if how.proof is None else how.proof
                wire.send(m.SASLResponse(f"{without_proof},p={proof_text}{how.tail}".encode()))
            elif isinstance(msg, m.AuthenticationSASLFinal):
                server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
                expected = hmac.new(server_key, auth_message, hashlib.sha256).digest()
                assert msg.data == b"v=" + base64.b64encode(expected)  # the server knows the password
        return offered, "closed"


BENT = {
    "right binding": Bent(),
    "tampered binding": Bent(cbind=b"p=tls-server-end-point,," + bytes(32)),
    "binding of another header": Bent(cbind=b"n,,"),
    "no binding for -PLUS": Bent(gs2="n,,"),
    "client thinks the server cannot bind": Bent(mechanism="SCRAM-SHA-256", gs2="y,,"),
    "binding without -PLUS": Bent(mechanism="SCRAM-SHA-256"),
    "tls-unique": Bent(gs2="p=tls-unique,,"),
    "authzid": Bent(gs2="p=tls-server-end-point,a=alice,"),
    "bad flag": Bent(gs2="x,,"),
    "plain over TLS": Bent(mechanism="SCRAM-SHA-256", gs2="n,,"),
    "-PLUS without TLS": Bent(tls=False),
    "plain without TLS": Bent(mechanism="SCRAM-SHA-256", gs2="n,,", tls=False),
    "y without TLS": Bent(mechanism="SCRAM-SHA-256", gs2="y,,", tls=False),
    "unknown mechanism": Bent(mechanism="SCRAM-SHA-1"),
    "mandatory extension": Bent(bare="m=ext,n=,r={nonce}"),
    "no user attribute": Bent(bare="r={nonce}"),
    "non-printable nonce": Bent(bare="n=,r=\x7f{nonce}"),
    "client-first extension": Bent(bare="n=,r={nonce},x=1"),
    "empty client-first": Bent(gs2="", bare=""),
    "nonce mismatch": Bent(nonce_suffix="x"),
    "malformed proof": Bent(proof="not base64!"),
    "short proof": Bent(proof=base64.b64encode(bytes(16)).decode()),
    "garbage after the proof": Bent(tail=",x=1"),
    "wrong proof": Bent(proof=base64.b64encode(bytes(32)).decode()),
    "no initial response": Bent(initial=False),
    "unknown user": Bent(user="ghost"),
}


@pytest.mark.parametrize("case", list(BENT))
def test_scram_exchange_as_postgresql(servers: Servers, case: str) -> None:
    """The mechanisms offered (over TLS: SCRAM-SHA-256-PLUS first) and the outcome of the
    exchange — in, or FATAL with PostgreSQL's SQLSTATE, message and detail."""
    how = BENT[case]
    got = scram_attempt(servers.proxy.port, how)
    want = scram_attempt(servers.pg.port, how)
    assert got == want
    if case == "tampered binding":
        assert want[1] == ("FATAL", "28000", "SCRAM channel binding check failed", None)
    if case == "right binding":
        assert want == (("SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"), "ready")


# -- the TLS protocol range --------------------------------------------------------------------


def test_ssl_min_protocol_version_refuses_an_older_client(servers: Servers, tmp_path: Path) -> None:
    """ssl_min_protocol_version = TLSv1.3: a client capped at TLS 1.2 is refused (during
    the handshake, so the words are libpq's and OpenSSL's), one that may use 1.3 gets in."""
    pg = servers.pg
    pg.psql("ALTER SYSTEM SET ssl_min_protocol_version = 'TLSv1.3'", host=str(pg.root))
    pg.psql("SELECT pg_reload_conf()", host=str(pg.root))
    try:
        with ProxyServer(
            tmp_path / "p13", ssl_cert_file=str(servers.cert), ssl_key_file=str(servers.key),
            ssl_min_protocol_version="TLSv1.3",
        ) as proxy:  # fmt: skip
            with psycopg.connect(proxy.dsn(), autocommit=True) as c:
                c.execute(ROLE_SQL)
            proxy.reload(hba=hba_rules())
            ports = {"proxy": proxy.port, "postgres": pg.port}
            got = {n: client_error(p, sslmode="require", ssl_max_protocol_version="TLSv1.2") for n, p in ports.items()}
            assert got["proxy"] == got["postgres"]
            assert "SSL" in got["postgres"]
            for port in ports.values():
                with psycopg.connect(dsn(port, sslmode="require")) as c:
                    row = c.execute("SELECT version FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone()
                    assert row == ("TLSv1.3",)
                with psycopg.connect(dsn(port, "boss", sslmode="require")) as c:
                    assert c.execute("SHOW ssl_min_protocol_version").fetchone() == ("TLSv1.3",)
                    source = "SELECT source FROM pg_settings WHERE name = 'ssl_min_protocol_version'"
                    assert c.execute(source).fetchone() == ("configuration file",)
    finally:
        pg.psql("ALTER SYSTEM RESET ssl_min_protocol_version", host=str(pg.root))
        pg.psql("SELECT pg_reload_conf()", host=str(pg.root))


def serve_fails(data_dir: Path, conf: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """What ``walsender-proxy serve -D data_dir -c conf`` writes to standard error, run
    through the command's ``main`` in this process (as ``python -m walsender_proxy.cli`` does, less
    an interpreter's start-up), asserting it ends with status 1. ``data_dir`` does not
    exist: a server that got past its settings stops there instead of serving."""
    from walsender_proxy import cli
    from walsender_proxy.backend import logs

    monkeypatch.setattr(logs, "configure", lambda *a, **k: None)  # (pytest's logging stays)
    capsys.readouterr()
    assert cli.main(["serve", "-D", str(data_dir), "-c", str(conf)]) == 1
    return capsys.readouterr().err


def _postgres_refuses(pg: PgCluster, name: str, value: str) -> str:
    """What ``postgres -C`` says of a bad value for setting ``name`` (the check PostgreSQL
    makes of its configuration at start-up), without starting a server."""
    cmd = [str(pg.bindir / "postgres"), "-D", str(pg.datadir), "-c", f"{name}={value}", "-C", name]
    if pg.user is not None:
        cmd = ["setpriv", f"--reuid={pg.user.pw_uid}", f"--regid={pg.user.pw_gid}", "--init-groups", *cmd]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    return r.stderr


@pytest.mark.parametrize(
    ("name", "value"),
    [("ssl_min_protocol_version", "TLSv1.4"), ("ssl_max_protocol_version", "SSLv3"), ("ssl_min_protocol_version", "")],
)
def test_bad_tls_settings_are_refused_at_start_up(
    servers: Servers, tmp_path: Path, name: str, value: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``walsender-proxy serve`` with a value PostgreSQL refuses stops with PostgreSQL's
    message and HINT."""
    conf = tmp_path / "proxy.toml"
    conf.write_text(f'[server]\n{name} = "{value}"\n')
    out = serve_fails(tmp_path / "d", conf, capsys, monkeypatch)
    pg_says = _postgres_refuses(servers.pg, name, value)
    message = f'invalid value for parameter "{name}": "{value}"'
    assert message in pg_says and message in out
    hint = re.search(r"HINT:\s+(.*)", pg_says)
    assert hint is not None and f"HINT:  {hint.group(1)}" in out


@pytest.mark.parametrize(
    "keyopts",
    [
        ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:secp384r1", "-sha384"],
        ["-newkey", "rsa:2048", "-sha512"],
        ["-newkey", "rsa:2048", "-sha224"],
    ],
    ids=["ecdsa-sha384", "rsa-sha512", "rsa-sha224"],
)
def test_channel_binding_hashes_with_the_certificates_algorithm(tmp_path: Path, keyopts: list[str]) -> None:
    """tls-server-end-point is the certificate hashed with its signature's hash algorithm
    (be_tls_get_certificate_hash): libpq computes it on its side, so channel_binding=require
    gets in only if the proxy hashed as libpq (and PostgreSQL) do."""
    cert, key = tmp_path / "server.crt", tmp_path / "server.key"
    subprocess.run(
        ["openssl", "req", "-x509", *keyopts, "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    with ProxyServer(tmp_path / "d", ssl_cert_file=str(cert), ssl_key_file=str(key)) as proxy:
        with psycopg.connect(proxy.dsn(), autocommit=True) as c:
            c.execute(ROLE_SQL)
        proxy.reload(hba=hba_rules())
        with psycopg.connect(dsn(proxy.port, sslmode="require", channel_binding="require")) as c:
            assert c.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone() == (True,)


@pytest.fixture(scope="module")
def fresh_datadir(servers: Servers) -> Iterator[tuple[PgCluster, Path, Path]]:
    """An initdb'ed data directory no server runs on (PostgreSQL checks its TLS settings
    when it starts), and the certificate and key where its user can read them."""
    pg = PgCluster()
    pg._run([str(pg.bindir / "initdb"), "-D", str(pg.datadir), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"])
    cert, key = pg.root / "server.crt", pg.root / "server.key"
    shutil.copy(servers.cert, cert)
    shutil.copy(servers.key, key)
    key.chmod(0o600)
    if pg.user is not None:
        for p in (cert, key):
            os.chown(p, pg.user.pw_uid, pg.user.pw_gid)
    yield pg, cert, key
    shutil.rmtree(pg.root, ignore_errors=True)


@pytest.mark.parametrize(
    "settings",
    [
        {"ssl_ciphers": "NO-SUCH-CIPHER"},
        {"ssl_min_protocol_version": "TLSv1.3", "ssl_max_protocol_version": "TLSv1.2"},
    ],
    ids=["ciphers", "range"],
)
def test_tls_settings_postgresql_refuses_when_it_starts(
    fresh_datadir: tuple[PgCluster, Path, Path], tmp_path: Path, settings: dict[str, str],
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cipher list with no cipher, or a minimum TLS version above the maximum: PostgreSQL
    does not start (FATAL, with its DETAIL), and neither does ``walsender-proxy serve``."""
    pg, cert, key = fresh_datadir
    args = {"ssl": "on", "ssl_cert_file": str(cert), "ssl_key_file": str(key), "listen_addresses": "",
            "unix_socket_directories": str(pg.root), "port": str(pg.port), **settings}  # fmt: skip
    cmd = [str(pg.bindir / "postgres"), "-D", str(pg.datadir)]
    for k, v in args.items():
        cmd += ["-c", f"{k}={v}"]
    if pg.user is not None:
        cmd = ["setpriv", f"--reuid={pg.user.pw_uid}", f"--regid={pg.user.pw_gid}", "--init-groups", *cmd]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        pg_out, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.terminate()
        proc.communicate()
        pytest.fail(f"PostgreSQL started with {settings}")
    assert proc.returncode != 0
    conf = tmp_path / "proxy.toml"
    conf.write_text(
        f"[server]\nssl_cert_file = '{cert}'\nssl_key_file = '{key}'\n"
        + "".join(f"{k} = '{v}'\n" for k, v in settings.items())
    )
    out = serve_fails(tmp_path / "d", conf, capsys, monkeypatch)
    fatal = re.search(r"FATAL:\s+(.*)", pg_out)
    assert fatal is not None, pg_out
    assert f"FATAL:  {fatal.group(1)}" in out
    detail = re.search(r"DETAIL:\s+(.*)", pg_out)
    if detail is not None:
        assert f"DETAIL:  {detail.group(1)}" in out


@pytest.mark.parametrize(
    "after_s",
    [b"", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"\x16\x03\x01\x00\x05hello"],
    ids=["closes", "not tls", "not a client hello"],
)
def test_a_broken_tls_start_as_postgresql(servers: Servers, after_s: bytes) -> None:
    """After ``S``, a client that closes, sends something that is not TLS, or a record that
    is not a ClientHello: the same bytes come back as from PostgreSQL (OpenSSL's alert, or
    nothing) and the connection ends; the server goes on serving."""
    got = {}
    for name, port in servers.ports().items():
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            sock.sendall(m.SSLRequest().encode())
            assert sock.recv(1) == b"S"
            if after_s:
                sock.sendall(after_s)
            else:
                sock.shutdown(socket.SHUT_WR)
            answer = b""
            with contextlib.suppress(ConnectionResetError):
                while chunk := sock.recv(4096):
                    answer += chunk
            got[name] = answer
        with psycopg.connect(dsn(port, sslmode="require")) as c:
            assert c.execute("SELECT 1").fetchone() == (1,)
    assert got["proxy"] == got["postgres"]


def test_notifications_reach_an_idle_session_over_tls(servers: Servers) -> None:
    """A TLS session waits for input on the event loop, not a thread of its own: a
    notification still reaches it at once, as from PostgreSQL."""
    got = {}
    for name, port in servers.ports().items():
        with psycopg.connect(dsn(port, "boss", sslmode="require"), autocommit=True) as a, psycopg.connect(
            dsn(port, "boss", sslmode="require"), autocommit=True
        ) as b:
            a.execute("LISTEN tls_channel")
            b.execute("NOTIFY tls_channel, 'over tls'")
            got[name] = [(n.channel, n.payload) for n in a.notifies(timeout=5, stop_after=1)]
    assert got["proxy"] == got["postgres"] == [("tls_channel", "over tls")]
