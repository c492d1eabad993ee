"""The server log as PostgreSQL 15 writes it: an error sent to a client is logged with its
DETAIL, HINT and the statement that raised it, so a client can be debugged from the log."""

from __future__ import annotations

import re

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.proxy import ProxyProcess

_LINE = re.compile(r"^\S+ \S+ UTC \[\d+\] (ERROR|DETAIL|HINT|STATEMENT):  (.*)$")


def _failing(dsn: str) -> None:
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


def _errors(log: str) -> list[tuple[str, str]]:
    return [m.groups() for m in map(_LINE.match, log.splitlines()) if m is not None]  # type: ignore[misc]


def test_errors_are_logged_with_their_statement_as_postgresql_logs_them(proxy_process: ProxyProcess, pg15: PgCluster) -> None:
    before = len(pg15.log_text)
    _failing(pg15.dsn())
    _failing(proxy_process.dsn())
    proxy_process.stop()
    want = [e for e in _errors(pg15.log_text[before:]) if e[0] != "DETAIL"]
    got = [e for e in _errors(proxy_process.output) if e[0] != "DETAIL"]
    assert got == want
    proxy_process.start()
