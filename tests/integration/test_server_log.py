"""The server log as PostgreSQL 15 writes it: an error sent to a client is logged with its
DETAIL, HINT and the statement that raised it, so a client can be debugged from the log."""

from __future__ import annotations

import datetime
import re
import time
from typing import Any

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.proxy import ProxyProcess, ProxyServer

_LINE = re.compile(r"^\S+ \S+ UTC \[(\d+)\] (ERROR|DETAIL|HINT|STATEMENT):  (.*)$")


def _failing(dsn: str) -> int:
    """The session's failing statements; its backend PID (the log has other processes' lines
    too: a subscription worker of another test retrying its publisher)."""
    with psycopg.connect(dsn, autocommit=True) as c:
        for sql, params in [
            ("select 1/0", None),
            ("select * from no_such_table", None),
            ("select 1 +", None),
            ("select %s::int", ("abc",)),
            ("select no_such_function(1)", None),
        ]:
            with pytest.raises(psycopg.Error):
                c.execute(sql, params)
        return c.info.backend_pid


def _errors(log: str, pid: int | None = None) -> list[tuple[str, str]]:
    """(level, text) of the error lines of ``log``, of process ``pid`` only if given."""
    found = [m.groups() for m in map(_LINE.match, log.splitlines()) if m is not None]
    return [(level, text) for p, level, text in found if pid is None or int(p) == pid]


def test_errors_are_logged_with_their_statement_as_postgresql_logs_them(proxy_process: ProxyProcess, pg15: PgCluster) -> None:
    before = len(pg15.log_text)
    pid = _failing(pg15.dsn())
    _failing(proxy_process.dsn())
    proxy_process.stop()
    try:
        want = [e for e in _errors(pg15.log_text[before:], pid) if e[0] != "DETAIL"]
        got = [e for e in _errors(proxy_process.output) if e[0] != "DETAIL"]
        assert got == want
    finally:
        proxy_process.start()


_LOGGED = re.compile(r"^\S+ \S+ UTC \[(\d+)\] (LOG|DETAIL):  ((?:statement|execute|parameters)\b.*)$")


def _logged(log: str, pid: int | None = None) -> list[tuple[str, str]]:
    found = [m.groups() for m in map(_LOGGED.match, log.splitlines()) if m is not None]
    return [(level, text) for p, level, text in found if pid is None or int(p) == pid]


def _statements(dsn: str, level: str) -> int:
    """One session's statements of each kind, simple and extended, under log_statement."""
    t = f"logt_{level}"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"SET log_statement = '{level}'")
        c.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, v text, at timestamptz)")
        c.execute(f"INSERT INTO {t} VALUES (1, 'a', '2024-01-02 03:04:05+00')")
        c.execute(f"SELECT * FROM {t}")
        c.execute(f"INSERT INTO {t} VALUES (%s, %s, %s)", (2, "it's", datetime.datetime(2024, 5, 6, tzinfo=datetime.UTC)))
        c.execute(f"INSERT INTO {t} VALUES (%b, %b, NULL)", (3, b"binary".decode()))
        c.execute(f"SELECT v FROM {t} WHERE id = %s", (2,))
        c.execute(f"SELECT 1; INSERT INTO {t} VALUES (4, 'four', NULL)")
        with c.cursor().copy(f"COPY {t} (id, v) FROM STDIN") as cp:
            cp.write_row((6, "six"))
        c.execute("BEGIN")
        c.execute(f"UPDATE {t} SET v = 'x' WHERE id = 1")
        c.execute("COMMIT")
        c.execute(f"TRUNCATE {t}")
        c.execute(f"DROP TABLE {t}")
        c.execute("RESET log_statement")
        return c.info.backend_pid


@pytest.mark.parametrize("level", ["none", "ddl", "mod", "all"])
def test_log_statement_logs_what_postgresql_logs(proxy_process: ProxyProcess, pg15: PgCluster, level: str) -> None:
    """log_statement none/ddl/mod/all: the same statements logged, simple queries whole
    (``statement: …``), extended ones at Execute (``execute <unnamed>: …``) with their
    parameters as each type prints them."""
    before, out_before = len(pg15.log_text), len(proxy_process.output)
    pid = _statements(pg15.dsn(), level)
    _statements(proxy_process.dsn(), level)
    proxy_process.stop()
    try:
        want = _logged(pg15.log_text[before:], pid)
        assert _logged(proxy_process.output[out_before:]) == want
        assert bool(want) == (level != "none")
    finally:
        proxy_process.start()


def test_log_settings_need_a_superuser_and_the_prefix_a_reload(proxy: ProxyServer, pg15: PgCluster) -> None:
    """log_statement and log_min_error_statement are a superuser's (42501 for others, as
    at start-up); log_line_prefix is the configuration's (55P02 for SET)."""

    def outcomes(dsn: str, role_dsn: str) -> list[object]:
        got: list[object] = []
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("DROP ROLE IF EXISTS log_plain")
            c.execute("CREATE ROLE log_plain LOGIN")
        try:
            with psycopg.connect(role_dsn, autocommit=True) as c:
                for sql in ("SET log_statement = 'all'", "SET log_min_error_statement = 'log'", "SET log_line_prefix = '%p'",
                            "SET log_parameter_max_length = 10", "SET application_name = 'fine'"):  # fmt: skip
                    try:
                        c.execute(sql)
                        got.append("ok")
                    except psycopg.Error as e:
                        got.append((e.sqlstate, str(e).splitlines()[0]))
                got.append(c.execute("SHOW log_line_prefix").fetchone())
            with psycopg.connect(dsn, autocommit=True) as c:
                for sql in ("SET log_statement = 'everything'", "SET log_statement = 'DDL'", "SET log_parameter_max_length = -2"):
                    try:
                        c.execute(sql)
                        got.append(c.execute("SHOW log_statement").fetchone())
                    except psycopg.Error as e:
                        got.append((e.sqlstate, str(e).splitlines()[0]))
            try:
                psycopg.connect(role_dsn + " options='-c log_statement=all'").close()
                got.append("connected")
            except psycopg.OperationalError as e:
                got.append(str(e).splitlines()[-1].split("FATAL:  ")[-1])
        finally:
            with psycopg.connect(dsn, autocommit=True) as c:
                c.execute("DROP ROLE log_plain")
        return got

    assert outcomes(proxy.dsn(), proxy.dsn(user="log_plain")) == outcomes(pg15.dsn(), pg15.dsn(user="log_plain"))


_PREFIX = "<%m|%t|%n|%p|%u|%d|%a|%h|%r|%b|%e|%c|%l|%s|%10u|%-10d|%P|%%|%q|%u>"
_PREFIX_LINE = re.compile(r"^<([^>]*)>(LOG|ERROR|STATEMENT):  (statement: select .*|division by zero|select 1/0)$")


def _prefix_shapes(log: str) -> list[tuple[str, ...]]:
    """Each field of the prefix, with times, pids and session ids reduced to shapes."""
    out = []
    for m in map(_PREFIX_LINE.match, log.splitlines()):
        if m is None:
            continue
        f = m.group(1).split("|")
        shapes = [
            re.sub(r"\d", "9", f[0]), re.sub(r"\d", "9", f[1]), re.sub(r"\d", "9", f[2]),
            "pid" if f[3].isdigit() else f[3], *f[4:8], re.sub(r"\(\d+\)$", "(port)", f[8]), f[9], f[10],
            "sid" if re.fullmatch(r"[0-9a-f]+\.[0-9a-f]+", f[11]) and f[11].endswith(f"{int(f[3]):x}") else f[11],
            f[12], re.sub(r"\d", "9", f[13]), *f[14:],
        ]  # fmt: skip
        out.append((*shapes, m.group(2), m.group(3)))
    return out


def test_log_line_prefix_escapes_as_postgresql_expands_them(pg15: PgCluster, tmp_path: Any) -> None:
    """log_line_prefix from the configuration: every escape PostgreSQL 15 has but %i, %v
    and %x (refused), padding included; line numbers count each line of a session."""

    def session(dsn: str) -> None:
        with psycopg.connect(dsn, autocommit=True, application_name="prefix_app") as c:
            c.execute("SET log_statement = 'all'")
            c.execute("select 'logged'")
            with pytest.raises(psycopg.errors.DivisionByZero):
                c.execute("select 1/0")

    pg15.psql(f"ALTER SYSTEM SET log_line_prefix = '{_PREFIX}'")
    pg15.psql("SELECT pg_reload_conf()")
    try:
        time.sleep(0.5)
        before = len(pg15.log_text)
        session(pg15.dsn())
        want = _prefix_shapes(pg15.log_text[before:])
    finally:
        pg15.psql("ALTER SYSTEM RESET log_line_prefix")
        pg15.psql("SELECT pg_reload_conf()")
    with ProxyProcess(tmp_path / "d", server=f"log_line_prefix = '{_PREFIX}'") as p:
        session(p.dsn())
        p.stop()
        got = _prefix_shapes(p.output)
        p.start()
    assert len(want) == 4 and got == want

    refused = ProxyProcess(tmp_path / "e", server="log_line_prefix = '%m %x '")
    with pytest.raises(RuntimeError, match="transaction ids"):
        refused.start()
