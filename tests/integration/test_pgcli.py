"""pgcli against the proxy and a real PostgreSQL 15: the queries its completer and its
special commands run (pgcli.pgexecute.PGExecute, pgspecial's ``\\d``, ``\\dt``, ``\\dn``,
``\\df``, ``\\l``) answer the same, over the same schema on both sides."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pgcli.pgexecute as pgexecute
import pgspecial.main as pgspecial_main
import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import Client
from tests.proxy import ProxyServer

SCHEMA = [
    "CREATE SCHEMA app",
    "CREATE TABLE app.orders (id bigint PRIMARY KEY, customer text NOT NULL, total numeric(10,2), "
    "placed timestamptz DEFAULT now(), tags text[])",
    "CREATE TABLE items (order_id bigint, sku varchar(12), qty int DEFAULT 1, data jsonb)",
    "CREATE SEQUENCE item_seq",
]


def _pgexecute(dsn: str) -> Any:
    parts = dict(p.split("=", 1) for p in dsn.split())
    return pgexecute.PGExecute(parts["dbname"], parts["user"], None, parts["host"], parts["port"])


@pytest.fixture(scope="module")
def sides(proxy: ProxyServer, pg15: PgCluster) -> Iterator[tuple[Any, Any]]:
    db = pg15.new_database("pgcli")
    for dsn in (pg15.dsn(dbname=db), proxy.dsn()):
        with Client(dsn) as c:
            for sql in SCHEMA:
                assert c(sql)[0] != "error", sql
    ref, got = _pgexecute(pg15.dsn(dbname=db)), _pgexecute(proxy.dsn())
    yield ref, got
    ref.conn.close()
    got.conn.close()


def _completions(ex: Any) -> dict[str, Any]:
    """What pgcli's completer loads on connecting (pgcli.main's refresh_completions)."""
    return {
        "search_path": ex.search_path(),
        "schemata": sorted(ex.schemata()),
        "tables": sorted(t for t in ex.tables() if t[0] in ("public", "app")),
        "table_columns": sorted(c for c in ex.table_columns() if c[0] in ("public", "app")),
        "views": sorted(v for v in ex.views() if v[0] in ("public", "app")),
        "foreignkeys": sorted(ex.foreignkeys()),
        "datatypes": sorted(t for t in ex.datatypes() if t[0] in ("public", "app")),
        "casing": sorted(ex.casing()),
    }


def test_completion_queries_match_postgresql(sides: tuple[Any, Any]) -> None:
    ref, got = sides
    want, have = _completions(ref), _completions(got)
    for key in want:
        assert have[key] == want[key], key


@pytest.mark.parametrize("command", ["\\dt", "\\dt app.*", "\\dn", "\\d items", "\\d app.orders", "\\ds", "\\dT app.*"])
def test_special_commands_match_postgresql(sides: tuple[Any, Any], command: str) -> None:
    ref, got = sides
    special = pgspecial_main.PGSpecial()
    want = [(title, list(rows or []), headers, status) for title, rows, headers, status, *_ in ref.run(command, pgspecial=special)]
    have = [(title, list(rows or []), headers, status) for title, rows, headers, status, *_ in got.run(command, pgspecial=special)]
    assert have == want
