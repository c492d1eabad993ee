"""FETCH FIRST … WITH TIES as windows: the inner query orders its windows by what ORDER BY
names (an output position or name becomes the expression), and PostgreSQL's refusals."""

from __future__ import annotations

import pglast
import pytest
from pglast import ast

from decoding.errors import PgError
from walsender_proxy.sql import with_ties
from walsender_proxy.sql.nodes import deparse


def _stmt(sql: str) -> ast.SelectStmt:
    return pglast.parse_sql(sql)[0].stmt


def test_the_inner_query_orders_its_windows_by_the_named_expressions() -> None:
    stmt = _stmt("SELECT a + 1 AS x, b FROM t ORDER BY x DESC, 2 NULLS FIRST OFFSET 3 FETCH FIRST 2 ROWS WITH TIES")
    assert with_ties.applies(stmt)
    inner = deparse(with_ties.inner_query(stmt))
    assert "ORDER BY a + 1 DESC, b NULLS FIRST" in inner
    assert "row_number() OVER" in inner and "rank() OVER" in inner
    assert "OFFSET" not in inner and "FETCH" not in inner and "LIMIT" not in inner


@pytest.mark.parametrize(
    ("sql", "sqlstate"),
    [
        ("SELECT * FROM t ORDER BY a FETCH FIRST NULL ROWS WITH TIES", "2201W"),
        ("SELECT DISTINCT a FROM t ORDER BY a FETCH FIRST 1 ROW WITH TIES", "0A000"),
        ("SELECT a FROM t UNION SELECT 1 ORDER BY 1 FETCH FIRST 1 ROW WITH TIES", "0A000"),
        ("SELECT * FROM t ORDER BY 1 FETCH FIRST 1 ROW WITH TIES", "0A000"),
        ("SELECT a FROM t ORDER BY 2 FETCH FIRST 1 ROW WITH TIES", "42P10"),
    ],
)
def test_refusals(sql: str, sqlstate: str) -> None:
    with pytest.raises(PgError) as e:
        with_ties.inner_query(_stmt(sql))
    assert e.value.sqlstate == sqlstate
