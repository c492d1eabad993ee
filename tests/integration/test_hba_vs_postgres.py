"""Client authentication rules against PostgreSQL 15: the same pg_hba.conf lines (given to the
proxy as ``[[hba]]`` tables of its TOML configuration) and the same roles on both servers,
then the same connection attempts — as a normal client, a logical walsender
(``replication=database``) and a physical one (``replication=true``), over TLS or not, from
several loopback addresses and over IPv6 — and both must answer alike: the authentication
asked for (none, SASL, cleartext password), then the client is in or refused with the same
SQLSTATE and message."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import ssl
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import scramp

from decoding.errors import PgError
from tests.integration.test_server_protocol import self_signed_cert
from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer
from walsender_proxy.config import load_config, server_settings
from walsender_proxy.protocol import BackendParser
from walsender_proxy.protocol import messages as m
from walsender_proxy.server.hba import DEFAULT_RULES

#: The same roles on both servers; every password is the role's name and "-pw".
ROLES_SQL = """
CREATE ROLE replphys REPLICATION LOGIN PASSWORD 'replphys-pw';
CREATE ROLE alice LOGIN PASSWORD 'alice-pw';
CREATE ROLE bob LOGIN PASSWORD 'bob-pw';
CREATE ROLE nopw LOGIN;
CREATE ROLE "all" LOGIN PASSWORD 'all-pw';
CREATE ROLE "+plus" LOGIN PASSWORD '+plus-pw';
CREATE ROLE grp;
GRANT grp TO bob;
"""
#: Databases besides postgres: named after a role (sameuser, samerole) and after keywords.
DATABASES = ("alice", "all", "replication")
#: Files for ``@file``, beside pg_hba.conf and beside the proxy's configuration file.
INCLUDES = {
    "dbs.txt": "postgres # a comment\n\n  alice,\\\n  @more.txt\n",
    "more.txt": '"all"\n',
    "users.txt": "bob +alice\n",
}
PHYSICAL_REFUSAL = ("E", "0A000", "physical replication is not supported by walsender-proxy")
#: The values of ``replication`` the attempts use, and which ask for physical replication.
REPLICATION_VALUES = {
    "database": False, "": False, "o": False, "DATABASE": False, "of": False, "no": False, "0": False,
    "true": True, "t": True, "TRUE": True, "on": True,
}  # fmt: skip


@dataclass(frozen=True)
class Attempt:
    """One connection attempt; ``password`` is sent to whatever the server asks for."""

    user: str
    database: str | None = "postgres"
    replication: str | None = None
    password: str | None = None
    tls: bool = False
    host: str = "127.0.0.1"
    source: str | None = None

    def __str__(self) -> str:
        return " ".join(f"{k}={v}" for k, v in vars(self).items() if v not in (None, False))


Outcome = tuple[str | None, object]


class _Wire:
    """A client connection read message by message (one parser for the whole exchange)."""

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


def attempt(port: int, a: Attempt) -> Outcome:
    """(what authentication the server asked for first: 'trust' for AuthenticationOk,
    'SASL', 'cleartext', 'md5', or None; then 'ready' or the error's ('E', SQLSTATE,
    message))."""
    source = (a.source, 0) if a.source else None
    sock = socket.create_connection((a.host, port), timeout=20, source_address=source)
    with sock:
        if a.tls:
            sock.sendall(m.SSLRequest().encode())
            assert sock.recv(1) == b"S"
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            sock = ctx.wrap_socket(sock)
        wire = _Wire(sock)
        params = {"user": a.user}
        if a.database is not None:
            params["database"] = a.database
        if a.replication is not None:
            params["replication"] = a.replication
        wire.send(m.StartupMessage(params))
        auth: str | None = None
        client: scramp.ScramClient | None = None
        password = a.password if a.password is not None else "not the password"
        while (msg := wire.next()) is not None:
            if isinstance(msg, m.ErrorResponse):
                return auth, ("E", msg.sqlstate, msg.message)
            if isinstance(msg, m.ReadyForQuery):
                return auth, "ready"
            if isinstance(msg, m.AuthenticationOk):
                auth = auth or "trust"
            elif isinstance(msg, m.AuthenticationSASL):
                auth = "SASL"
                client = scramp.ScramClient(["SCRAM-SHA-256"], "unused", password)
                wire.send(m.SASLInitialResponse("SCRAM-SHA-256", client.get_client_first().encode()))
            elif isinstance(msg, m.AuthenticationSASLContinue):
                assert client is not None
                client.set_server_first(msg.data.decode())
                wire.send(m.SASLResponse(client.get_client_final().encode()))
            elif isinstance(msg, m.AuthenticationSASLFinal):
                assert client is not None
                client.set_server_final(msg.data.decode())  # checks the server's signature
            elif isinstance(msg, m.AuthenticationCleartextPassword):
                auth = "cleartext"
                wire.send(m.PasswordMessage(password.encode()))
            elif isinstance(msg, m.AuthenticationMD5Password):
                auth = "md5"
                inner = hashlib.md5((password + a.user).encode()).hexdigest()
                outer = hashlib.md5(inner.encode() + msg.salt).hexdigest()
                wire.send(m.PasswordMessage(f"md5{outer}".encode()))
        return auth, "closed"


def toml_rules(lines: Sequence[str]) -> str:
    """pg_hba.conf lines as the proxy's ``[[hba]]`` tables: a key per column, the column's
    text as it is (TOML literal strings keep its double quotes); ``name=value`` options
    become keys of the same name."""
    out = []
    for line in lines:
        cols = line.split()
        keys = ["type", "database", "user"]
        if cols[0] != "local":
            keys.append("address")
            if re.fullmatch(r"[0-9.]+|[0-9a-f:]+", cols[3]):  # an IP address without /bits
                keys.append("netmask")
        keys.append("method")
        table = dict(zip(keys, cols, strict=False))
        table.update(opt.split("=", 1) for opt in cols[len(keys) :])  # type: ignore[misc]
        out.append("[[hba]]\n" + "".join(f"{k} = '{v}'\n" for k, v in table.items()))
    return "\n".join(out)


@dataclass
class Servers:
    pg: PgCluster
    proxy: ProxyServer
    conf_dir: Path

    def configure(self, lines: Sequence[str]) -> None:
        """The same rules on both: pg_hba.conf reloaded, and the proxy's configuration file
        loaded (as ``serve -c`` loads it) into the running proxy."""
        self.pg.set_hba(lines)
        conf = self.conf_dir / "walsender-proxy.toml"
        conf.write_text(toml_rules(lines))
        self.proxy.reload(hba=server_settings(load_config(conf)).hba)

    def both(self, a: Attempt) -> tuple[Outcome, Outcome]:
        return attempt(self.proxy.port, a), attempt(self.pg.port, a)

    def compare(self, attempts: Sequence[Attempt]) -> list[Outcome]:
        """Each attempt's outcome on both; the proxy's must be PostgreSQL's, except that a
        physical replication connection PostgreSQL lets in is refused by the proxy (it
        has no physical replication) once authenticated. PostgreSQL's outcomes."""
        seen = []
        for a in attempts:
            got, want = self.both(a)
            if a.replication is not None and REPLICATION_VALUES[a.replication] and want[1] == "ready":
                want = (want[0], PHYSICAL_REFUSAL)
            assert got == want, f"{a}: proxy {got}, PostgreSQL {want}"
            seen.append(want)
        return seen


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    conf_dir = tmp_path_factory.mktemp("conf")
    cert, key = self_signed_cert(tmp_path_factory.mktemp("certs"))
    pg = PgCluster(hba=["host all postgres 127.0.0.1/32 trust"])
    for name in ("server.crt", "server.key"):  # readable by the server's user only
        shutil.copy(cert.parent / name, pg.root / name)
        if pg.user is not None:
            os.chown(pg.root / name, pg.user.pw_uid, pg.user.pw_gid)
    (pg.root / "server.key").chmod(0o600)
    pg.settings.update(
        listen_addresses="'127.0.0.1,::1'",
        ssl="on",
        ssl_cert_file=f"'{pg.root / 'server.crt'}'",
        ssl_key_file=f"'{pg.root / 'server.key'}'",
    )
    try:
        pg.start()
        for name, text in INCLUDES.items():  # beside pg_hba.conf and the proxy's file
            (pg.datadir / name).write_text(text)
            (conf_dir / name).write_text(text)
        pg.psql(ROLES_SQL, host=str(pg.root))
        for db in DATABASES:
            pg.psql(f'CREATE DATABASE "{db}"', host=str(pg.root))
        with ProxyServer(
            listen_addresses="127.0.0.1,::1",
            ssl_cert_file=str(cert),
            ssl_key_file=str(key),
            databases=("postgres", *DATABASES),
        ) as proxy:
            with psycopg.connect(proxy.dsn(), autocommit=True) as c:
                c.execute(ROLES_SQL)
            yield Servers(pg, proxy, conf_dir)
    finally:
        pg.stop()


LOGICAL = "database"
PHYSICAL = "true"


def test_a_replication_rule_does_not_let_a_logical_walsender_in(servers: Servers) -> None:
    """Issue 25: the keyword ``replication`` is for physical replication connections only. A
    logical walsender (replication=database) is matched by its database name or ``all``,
    so here it must get the scram-sha-256 rule; the proxy took the trust rule meant for
    physical replication and let a REPLICATION role in with no password."""
    servers.configure(
        [
            "host replication replphys 127.0.0.1/32 trust",
            "host all replphys 127.0.0.1/32 scram-sha-256",
        ]
    )
    without = Attempt("replphys", replication=LOGICAL)
    got, want = servers.both(without)
    assert want == ("SASL", ("E", "28P01", 'password authentication failed for user "replphys"'))
    assert got == want
    servers.compare(
        [
            Attempt("replphys", replication=LOGICAL, password="replphys-pw"),
            Attempt("replphys", replication=PHYSICAL),
            Attempt("replphys", password="replphys-pw"),
        ]
    )


ALL = Attempt("alice", password="alice-pw")
# Who tries, in the table below: names, then what is asked for.
CASES: dict[str, tuple[list[str], list[Attempt]]] = {
    # -- the database column --
    "database all": (
        ["host all alice,replphys 127.0.0.1/32 trust"],
        [Attempt("alice"), Attempt("alice", "alice"), Attempt("replphys", replication=LOGICAL),
         Attempt("replphys", replication=PHYSICAL), Attempt("bob")],
    ),
    "database replication": (
        ["host replication all 127.0.0.1/32 trust"],
        [Attempt("replphys", replication=PHYSICAL), Attempt("alice", None, replication=PHYSICAL),
         Attempt("replphys", replication=LOGICAL), Attempt("replphys"),
         Attempt("replphys", "replication", replication=LOGICAL), Attempt("alice", "replication")],
    ),
    "database sameuser": (
        ["host sameuser all 127.0.0.1/32 trust"],
        [Attempt("alice", "alice"), Attempt("alice"), Attempt("postgres"), Attempt("ghost", "ghost"),
         Attempt("replphys", replication=PHYSICAL)],
    ),
    "database samerole": (
        ["host samerole all 127.0.0.1/32 trust"],
        [Attempt("alice", "alice"), Attempt("alice"), Attempt("postgres"), Attempt("ghost", "ghost"),
         Attempt("bob", "alice")],
    ),
    "database samegroup": (
        ["host samegroup all 127.0.0.1/32 trust"],
        [Attempt("alice", "alice"), Attempt("alice"), Attempt("bob", "alice")],
    ),
    "database list": (
        ["host alice,postgres bob,replphys 127.0.0.1/32 trust"],
        [Attempt("bob"), Attempt("bob", "alice"), Attempt("bob", "all"),
         Attempt("replphys", replication=LOGICAL), Attempt("replphys", "all", replication=LOGICAL)],
    ),
    "database quoted keywords": (
        ['host "all","replication" alice,replphys 127.0.0.1/32 trust'],
        [Attempt("alice", "all"), Attempt("alice", "replication"), Attempt("alice"),
         Attempt("replphys", replication=PHYSICAL), Attempt("replphys", "replication", replication=LOGICAL)],
    ),
    "database +name is a name": (
        ["host +alice,+grp alice 127.0.0.1/32 trust"],
        [Attempt("alice"), Attempt("alice", "alice")],
    ),
    "database @file": (
        ["host @dbs.txt alice 127.0.0.1/32 trust", 'host "@dbs.txt" bob 127.0.0.1/32 trust'],
        [Attempt("alice"), Attempt("alice", "alice"), Attempt("alice", "all"),
         Attempt("alice", "replication"), Attempt("bob")],
    ),
    # -- the user column --
    "user all": (
        ["host postgres all 127.0.0.1/32 trust"],
        [Attempt("alice"), Attempt("ghost"), Attempt("grp"), Attempt("all")],
    ),
    "user +role": (
        ["host all +alice,+grp,+ghost 127.0.0.1/32 trust"],
        [Attempt("alice"), Attempt("bob"), Attempt("grp"), Attempt("ghost"), Attempt("postgres")],
    ),
    "user quoted": (
        ['host all "all","+plus" 127.0.0.1/32 trust', "host all +plus 127.0.0.1/32 reject"],
        [Attempt("all"), Attempt("+plus"), Attempt("alice"), Attempt("plus")],
    ),
    "user list and @file": (
        ["host all alice,@users.txt 127.0.0.1/32 scram-sha-256"],
        [ALL, Attempt("bob", password="bob-pw"), Attempt("replphys", password="replphys-pw")],
    ),
    # -- addresses --
    "address CIDR": (
        ["host all all 127.0.0.2/32 trust", "host all all 127.0.0.0/8 scram-sha-256"],
        [Attempt("alice", source="127.0.0.2"), ALL, Attempt("alice", source="127.0.0.3"),
         Attempt("alice", host="::1")],
    ),
    "address and netmask": (
        ["host all all 127.0.0.2 255.0.255.255 trust", "host all all 127.0.0.1 255.255.255.255 reject"],
        [Attempt("alice", source="127.9.0.2"), Attempt("alice", source="127.0.1.2"), Attempt("alice")],
    ),
    "address all": (
        ["host all alice all trust"],
        [Attempt("alice"), Attempt("alice", host="::1"), Attempt("alice", source="127.7.7.7"), Attempt("bob")],
    ),
    "address IPv6": (
        ["host all all ::1/128 trust", "host all all ::/0 reject"],
        [Attempt("alice", host="::1"), Attempt("alice")],
    ),
    "address samehost": (
        ["host all all samehost trust"],
        [Attempt("alice"), Attempt("alice", source="127.0.0.2"), Attempt("alice", host="::1")],
    ),
    "address samenet": (
        ["host all alice samenet trust"],
        [Attempt("alice"), Attempt("alice", source="127.0.0.2"), Attempt("alice", host="::1"), Attempt("bob")],
    ),
    # -- connection types --
    "type local": (
        ["local all all trust"],
        [Attempt("alice"), Attempt("replphys", replication=PHYSICAL)],
    ),
    "type hostssl": (
        ["hostssl all all 127.0.0.1/32 trust"],
        [Attempt("alice", tls=True), Attempt("alice"), Attempt("replphys", tls=True, replication=LOGICAL)],
    ),
    "type hostnossl": (
        ["hostnossl all all 127.0.0.1/32 trust", "hostnossl replication all 127.0.0.1/32 trust"],
        [Attempt("alice"), Attempt("alice", tls=True), Attempt("replphys", tls=True, replication=PHYSICAL)],
    ),
    "type hostgssenc": (
        ["hostgssenc all all 127.0.0.1/32 trust"],
        [Attempt("alice"), Attempt("alice", tls=True)],
    ),
    "type hostnogssenc": (
        ["hostnogssenc all alice 127.0.0.1/32 trust"],
        [Attempt("alice"), Attempt("alice", tls=True), Attempt("bob")],
    ),
    # -- the startup packet's replication parameter, as PostgreSQL's parse_bool reads it --
    "replication parameter": (
        ["host all all 127.0.0.1/32 trust", "host replication all 127.0.0.1/32 reject"],
        [Attempt("replphys", replication=v) for v in ("t", "TRUE", "on", "of", "no", "0", "o", "DATABASE", "")],
    ),
    # -- methods --
    "method reject": (
        ["host all alice 127.0.0.1/32 reject", "host replication all 127.0.0.1/32 reject",
         "host all all 127.0.0.1/32 trust"],
        [Attempt("alice"), Attempt("bob"), Attempt("replphys", replication=PHYSICAL),
         Attempt("alice", replication=LOGICAL), Attempt("alice", tls=True)],
    ),
    "method password": (
        ["host all all 127.0.0.1/32 password"],
        [ALL, Attempt("alice"), Attempt("nopw"), Attempt("ghost"), Attempt("+plus", password="+plus-pw")],
    ),
    "method scram-sha-256": (
        ["host all all 127.0.0.1/32 scram-sha-256", "host replication all 127.0.0.1/32 scram-sha-256"],
        [ALL, Attempt("alice"), Attempt("nopw"), Attempt("ghost"),
         Attempt("replphys", replication=PHYSICAL, password="replphys-pw"),
         Attempt("replphys", replication=LOGICAL, password="replphys-pw")],
    ),
    "method md5 with SCRAM verifiers": (
        ["host all all 127.0.0.1/32 md5"],
        [ALL, Attempt("alice"), Attempt("nopw"), Attempt("ghost")],
    ),
    "method trust, and what follows authentication": (
        ["host all all 127.0.0.1/32 trust"],
        [Attempt("ghost"), Attempt("grp"), Attempt("alice", "nodb"), Attempt("alice", replication=LOGICAL),
         Attempt("replphys", "nodb", replication=LOGICAL)],
    ),
}  # fmt: skip


@pytest.mark.parametrize(("lines", "attempts"), list(CASES.values()), ids=list(CASES))
def test_rules_decide_as_postgresql(servers: Servers, lines: list[str], attempts: list[Attempt]) -> None:
    """Each keyword, address form, connection type and method: the same rules, roles and
    attempts on both servers get the same authentication request and the same outcome."""
    servers.configure(lines)
    outcomes = servers.compare(attempts)
    # Each case tells something apart: somebody gets in (or is authenticated) and somebody
    # does not, or every attempt is refused by the rules themselves.
    assert len({str(o) for o in outcomes}) > 1 or all(o[0] is None for o in outcomes), outcomes


def _proxy_sql(servers: Servers) -> psycopg.Connection:
    """A superuser's connection to the proxy, under its default rules (the harness's way in,
    as ``ADMIN_HBA`` is PostgreSQL's); the next ``configure`` sets the rules under test."""
    servers.proxy.reload(hba=DEFAULT_RULES)
    return psycopg.connect(servers.proxy.dsn(), autocommit=True)


def _sql_on_both(servers: Servers, sql: str) -> None:
    servers.pg.psql(sql, host=str(servers.pg.root))
    with _proxy_sql(servers) as c:
        c.execute(sql)


def test_a_password_given_as_an_md5_hash(servers: Servers) -> None:
    """PostgreSQL 15 keeps a password given as an MD5 hash as it is, checks it by the md5
    method, and fails scram-sha-256 for such a role (28P01 after a SASL exchange: it has no
    SCRAM secret). The proxy stores only SCRAM verifiers: it refuses the hash with 0A000
    (it took the hash for the password itself and made a SCRAM verifier of it)."""
    digest = "md5" + hashlib.md5(b"md5-pw" + b"md5role").hexdigest()
    sql = f"CREATE ROLE md5role LOGIN PASSWORD '{digest}'"
    pg = servers.pg
    pg.psql(sql, host=str(pg.root))
    try:
        assert pg.psql("SELECT rolpassword FROM pg_authid WHERE rolname = 'md5role'", host=str(pg.root)).strip() == digest
        with _proxy_sql(servers) as c, pytest.raises(psycopg.errors.FeatureNotSupported) as ei:
            c.execute(sql)
        assert ei.value.diag.message_primary == "MD5 password hashes are not supported by walsender-proxy"
        right = Attempt("md5role", password="md5-pw")
        servers.configure(["host all all 127.0.0.1/32 md5"])
        assert attempt(pg.port, right) == ("md5", "ready")
        servers.configure(["host all all 127.0.0.1/32 scram-sha-256"])
        failed = ("SASL", ("E", "28P01", 'password authentication failed for user "md5role"'))
        assert attempt(pg.port, right) == failed
        assert attempt(servers.proxy.port, right) == failed  # (no such role on the proxy)
    finally:
        pg.psql("DROP ROLE md5role", host=str(pg.root))


def test_a_password_given_as_a_scram_secret_is_kept(servers: Servers) -> None:
    """A SCRAM-SHA-256 secret given as the password is stored as it is, as PostgreSQL stores
    it (pg_dumpall's roles keep their passwords): the original password logs in, the
    secret's text does not. The proxy made a new verifier of the secret's text."""
    secret = servers.pg.psql("SELECT rolpassword FROM pg_authid WHERE rolname = 'alice'", host=str(servers.pg.root)).strip()
    assert secret.startswith("SCRAM-SHA-256$4096:")
    _sql_on_both(servers, f"CREATE ROLE scramcopy LOGIN PASSWORD '{secret}'")
    servers.configure(["host all all 127.0.0.1/32 scram-sha-256"])
    outcomes = servers.compare([Attempt("scramcopy", password="alice-pw"), Attempt("scramcopy", password=secret)])
    assert [o[1] for o in outcomes] == ["ready", ("E", "28P01", 'password authentication failed for user "scramcopy"')]


def test_an_empty_password_clears_the_password(servers: Servers) -> None:
    """``PASSWORD ''`` clears the password in PostgreSQL (with a NOTICE): neither the old
    password nor the empty one logs in, by SCRAM or in clear text (where an empty password
    is refused as such). ALTER ROLE made a verifier of the empty password."""
    _sql_on_both(servers, "CREATE ROLE emptypw LOGIN PASSWORD 'x'; ALTER ROLE emptypw PASSWORD ''")
    failed = ("E", "28P01", 'password authentication failed for user "emptypw"')
    expected = {
        "scram-sha-256": [failed, failed],
        "password": [("E", "28P01", "empty password returned by client"), failed],
    }
    for method, results in expected.items():
        servers.configure([f"host all all 127.0.0.1/32 {method}"])
        outcomes = servers.compare([Attempt("emptypw", password=""), Attempt("emptypw", password="x")])
        assert [o[1] for o in outcomes] == results


def _salt(port: int, user: str) -> str:
    """The salt the server's first SCRAM message offers ``user``."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        wire = _Wire(sock)
        wire.send(m.StartupMessage({"user": user, "database": "postgres"}))
        assert isinstance(wire.next(), m.AuthenticationSASL)
        client = scramp.ScramClient(["SCRAM-SHA-256"], "unused", "x")
        wire.send(m.SASLInitialResponse("SCRAM-SHA-256", client.get_client_first().encode()))
        msg = wire.next()
        assert isinstance(msg, m.AuthenticationSASLContinue), msg
        return dict(kv.split("=", 1) for kv in msg.data.decode().split(","))["s"]


def test_unknown_users_are_challenged_like_real_ones(servers: Servers) -> None:
    """A user that does not exist, or has no password, is offered a salt of its own, the
    same at every attempt, as a real user is (PostgreSQL's mock salt, from the user name and
    a secret of the data directory). The proxy offered one salt to every such user, which
    told them apart from the real ones."""
    servers.configure(["host all all 127.0.0.1/32 scram-sha-256"])
    for port in (servers.proxy.port, servers.pg.port):
        salts = {u: {_salt(port, u), _salt(port, u)} for u in ("alice", "nopw", "ghost1", "ghost2")}
        assert all(len(s) == 1 for s in salts.values()), salts
        assert len(set.union(*salts.values())) == 4, salts


#: Lines PostgreSQL 15 refuses when it loads pg_hba.conf, and its reason, which the proxy
#: gives when it loads its configuration.
REFUSED_ALIKE = {
    "host all all 127.0.0.1/33 trust": 'invalid CIDR mask in address "127.0.0.1/33"',
    "host all all 127.0.0.1,127.0.0.2/32 trust": "multiple values specified for host address",
    "host all all 127.0.0.1/32 trust,reject": "multiple values specified for authentication type",
    "host,local all all 127.0.0.1/32 trust": "multiple values specified for connection type",
    "hostfoo all all 127.0.0.1/32 trust": 'invalid connection type "hostfoo"',
    "host all all 127.0.0.1/32 foo": 'invalid authentication method "foo"',
    "host all all 1.2.3.4.5/32 trust": 'specifying both host name and CIDR mask is invalid: "1.2.3.4.5/32"',
    "host all all 127.0.0.1 255.255.255.256 trust": 'invalid IP mask "255.255.255.256": Name or service not known',
    "host all all 127.0.0.1 ffff:: trust": "IP address and mask do not match",
    "host @missing.txt all 127.0.0.1/32 trust": 'could not open secondary authentication file "@missing.txt" as "DIR/missing.txt": No such file or directory',
}
#: Lines PostgreSQL 15 takes that the proxy cannot do exactly: refused at load, naming them.
REFUSED_BY_THE_PROXY = {
    "host all all example.invalid trust": 'host name "example.invalid" in an address is not supported by walsender-proxy',
    "host all all 127.0.0.1/32 ident": 'authentication method "ident" is not supported by walsender-proxy',
    "local all all peer": 'authentication method "peer" is not supported by walsender-proxy',
    "host all all 127.0.0.1/32 gss": 'authentication method "gss" is not supported by walsender-proxy',
    "host all all 127.0.0.1/32 pam": 'authentication method "pam" is not supported by walsender-proxy',
    "host all all 127.0.0.1/32 ldap ldapserver=localhost ldapbasedn=dc=x": 'unrecognized key "ldapbasedn"',
    "host all all 127.0.0.1/32 radius radiusservers=localhost radiussecrets=x": 'unrecognized key "radiussecrets"',
    "hostssl all all 127.0.0.1/32 cert": 'authentication method "cert" is not supported by walsender-proxy',
    "hostssl all all 127.0.0.1/32 trust clientcert=verify-full": 'unrecognized key "clientcert"',
}


def _proxy_refusal(servers: Servers, line: str) -> str:
    conf = servers.conf_dir / "refused.toml"
    conf.write_text(toml_rules([line]))
    with pytest.raises(PgError) as ei:
        server_settings(load_config(conf))
    assert ei.value.sqlstate == "F0000"
    return ei.value.message.replace(str(servers.conf_dir), "DIR")


@pytest.mark.parametrize(("line", "reason"), list(REFUSED_ALIKE.items()), ids=list(REFUSED_ALIKE))
def test_rules_postgresql_refuses_are_refused_at_load(servers: Servers, line: str, reason: str) -> None:
    with pytest.raises(RuntimeError) as ei:
        servers.pg.set_hba([line])
    assert reason.replace("DIR", str(servers.pg.datadir)) in str(ei.value)
    assert _proxy_refusal(servers, line).startswith(f"{reason}")


@pytest.mark.parametrize(("line", "reason"), list(REFUSED_BY_THE_PROXY.items()), ids=list(REFUSED_BY_THE_PROXY))
def test_rules_the_proxy_cannot_follow_are_refused_at_load(servers: Servers, line: str, reason: str) -> None:
    servers.pg.set_hba([line])  # PostgreSQL takes it
    assert reason in _proxy_refusal(servers, line)
