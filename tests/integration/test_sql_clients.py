"""psql, psycopg 3 and psycopg2 against the proxy, with PostgreSQL 15 as the reference:
the same script gives the same answers on both."""

from __future__ import annotations

import itertools
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer

HERE = Path(__file__).parent
_db = itertools.count(1)


@pytest.fixture(scope="module")
def proxy() -> Iterator[ProxyServer]:
    with ProxyServer() as p:
        yield p


def psql(port: int, *args: str, dbname: str = "postgres", input: str | None = None) -> subprocess.CompletedProcess[str]:
    from tests.pgcluster import pg_bindir

    return subprocess.run(
        [str(pg_bindir() / "psql"), "-X", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", dbname, "-v", "ON_ERROR_STOP=1", *args],
        capture_output=True,
        text=True,
        timeout=120,
        input=input,
    )


def fresh_pg_db(pg15: PgCluster) -> str:
    name = f"ref{next(_db)}"
    pg15.psql(f"CREATE DATABASE {name}")
    return name


def test_psql_tour_matches_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    script = str(HERE / "sql" / "tour.sql")
    ref = psql(pg15.port, "-f", script, dbname=fresh_pg_db(pg15))
    assert ref.returncode == 0, ref.stderr
    got = psql(proxy.port, "-f", script)
    assert got.returncode == 0, got.stderr
    ref_lines, got_lines = ref.stdout.splitlines(), got.stdout.splitlines()
    for i, (a, b) in enumerate(zip(ref_lines, got_lines, strict=False)):
        assert a == b, f"line {i + 1} differs:\npostgres: {a!r}\nproxy:    {b!r}\ncontext:\n" + "\n".join(ref_lines[max(0, i - 5) : i + 3])
    assert len(ref_lines) == len(got_lines)
