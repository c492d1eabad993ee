"""Window functions and frames answered as PostgreSQL 15 answers them, or refused: RANGE
offsets of each type (and the overflow PostgreSQL's in_range never has), GROUPS and the
EXCLUDE options, and the errors PostgreSQL's parser and executor raise for a window
definition or a frame offset. Each statement runs on a real PostgreSQL 15 and on the proxy
and must answer the same.

Rows that tie under a window's ORDER BY are peers whose order SQL leaves undefined (and
PostgreSQL's quicksort and DuckDB's sort decide differently), so the data here makes no
answer depend on it: ties are only used with aggregates over whole peer groups.
"""

from __future__ import annotations

import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import Client, same_answers
from tests.proxy import ProxyServer


def _same_answers(proxy: ProxyServer, pg15: PgCluster, statements: list[str]) -> None:
    """The statements compared on a fresh PostgreSQL 15 database and the proxy, whose
    table ``w`` is dropped after (the proxy is shared by the module's tests)."""
    try:
        same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("win")), statements).close()
    finally:
        with Client(proxy.dsn()) as got:
            got("DROP TABLE IF EXISTS w")


TABLE = [
    "CREATE TABLE w (i int, g int, d date, ts timestamp, f float8, r real, b bigint, n numeric(10, 2), u numeric)",
    """INSERT INTO w VALUES
    (1, 1, '2020-01-01', '2020-01-01 00:00', -3, -3, 9223372036854775800, -3, -3),
    (2, 1, '2020-01-20', '2020-01-01 10:00', -1.5, -1.5, 9223372036854775801, -1.5, -1.5),
    (3, 2, '2020-02-05', '2020-01-02 00:00', 0, 0, 9223372036854775802, 0.25, 0.25),
    (4, 3, '2020-03-01', '2020-01-03 12:00', 1.1, 1.1, -9223372036854775800, 1.1, 1.1),
    (5, 3, '2021-01-01', '2020-01-03 13:00', 2, 2, -9223372036854775801, 2, 2),
    (6, 5, '2021-06-30', '2020-02-01 00:00', 'inf', 'inf', 0, 99999999.99, 'NaN'),
    (7, 5, '2022-01-01', '2021-01-01 00:00', 'NaN', 'NaN', 1, 1.1, 1.1),
    (8, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)""",
]

#: Frames whose answers do not depend on the order of peers.
FRAMES = [
    *TABLE,
    # RANGE over dates and timestamps with interval offsets, every EXCLUDE
    "SELECT i, sum(i) OVER (ORDER BY d RANGE BETWEEN '1 month' PRECEDING AND '10 days' FOLLOWING) FROM w ORDER BY i",
    "SELECT i, sum(i) OVER (ORDER BY d RANGE BETWEEN UNBOUNDED PRECEDING AND '1 year'::interval FOLLOWING EXCLUDE CURRENT ROW) FROM w ORDER BY i",
    "SELECT i, first_value(i) OVER (ORDER BY d DESC RANGE BETWEEN '6 months' PRECEDING AND CURRENT ROW), last_value(i) OVER (ORDER BY d DESC RANGE BETWEEN '6 months' PRECEDING AND CURRENT ROW) FROM w ORDER BY i",
    "SELECT i, count(*) OVER (ORDER BY ts RANGE BETWEEN '12 hours' PRECEDING AND '1 day' FOLLOWING EXCLUDE GROUP) FROM w ORDER BY i",
    "SELECT i, max(i) OVER (ORDER BY ts RANGE BETWEEN '1 day' FOLLOWING AND '1 month' FOLLOWING) FROM w ORDER BY i",
    # RANGE over integers, with ties and with offsets past the type's range
    "SELECT i, sum(i) OVER (ORDER BY g RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE TIES) FROM w ORDER BY i",
    "SELECT i, sum(i) OVER (ORDER BY g DESC NULLS LAST RANGE BETWEEN 2 PRECEDING AND CURRENT ROW EXCLUDE GROUP) FROM w ORDER BY i",
    "SELECT i, count(*) OVER (ORDER BY g RANGE BETWEEN 2147483647 PRECEDING AND 2147483647 FOLLOWING) FROM w ORDER BY i",
    "SELECT x, last_value(x) OVER (ORDER BY x::smallint RANGE BETWEEN CURRENT ROW AND 2147450884 FOLLOWING) FROM generate_series(32764, 32766) x ORDER BY x",
    "SELECT x, last_value(x) OVER (ORDER BY x::smallint DESC RANGE BETWEEN CURRENT ROW AND 2147450885 FOLLOWING) FROM generate_series(-32766, -32764) x ORDER BY x",
    "SELECT i, b, count(*) OVER (ORDER BY b RANGE BETWEEN CURRENT ROW AND 10 FOLLOWING) FROM w ORDER BY i",
    "SELECT i, b, count(*) OVER (ORDER BY b DESC RANGE BETWEEN CURRENT ROW AND 10 FOLLOWING) FROM w ORDER BY i",
    # RANGE over floats: NaN and +Infinity values, infinite offsets where no -Infinity is
    "SELECT i, f, sum(i) OVER (ORDER BY f RANGE BETWEEN 1.5 PRECEDING AND 1 FOLLOWING) FROM w ORDER BY i",
    "SELECT i, r, sum(i) OVER (ORDER BY r RANGE BETWEEN 1.5 PRECEDING AND 'inf' FOLLOWING) FROM w ORDER BY i",
    "SELECT i, f, sum(i) OVER (ORDER BY f RANGE BETWEEN CURRENT ROW AND 'infinity' FOLLOWING) FROM w ORDER BY i",
    # RANGE over numeric(p,s) with literal offsets
    "SELECT i, sum(i) OVER (ORDER BY n RANGE BETWEEN 1 PRECEDING AND 0.85 FOLLOWING EXCLUDE TIES) FROM w ORDER BY i",
    "SELECT i, count(*) OVER (ORDER BY n DESC NULLS FIRST RANGE BETWEEN '0.001' PRECEDING AND 1e9 FOLLOWING) FROM w ORDER BY i",
    # GROUPS, and ROWS over a unique order
    "SELECT i, sum(i) OVER (ORDER BY g GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM w ORDER BY i",
    "SELECT i, sum(i) OVER (ORDER BY g GROUPS BETWEEN 1 FOLLOWING AND 2 FOLLOWING EXCLUDE GROUP) FROM w ORDER BY i",
    "SELECT i, count(*) OVER (ORDER BY g GROUPS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING EXCLUDE TIES) FROM w ORDER BY i",
    "SELECT i, sum(i) OVER (ORDER BY i ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING EXCLUDE CURRENT ROW) FROM w ORDER BY i",
    "SELECT i, nth_value(i, 2) OVER (ORDER BY i ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING) FROM w ORDER BY i",
    # a window that copies a named one, with its own frame
    "SELECT i, sum(i) OVER (w ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), sum(i) OVER (w RANGE 1 PRECEDING) FROM w WINDOW w AS (ORDER BY i) ORDER BY i",
    "SELECT i, count(*) FILTER (WHERE g > 1) OVER (ORDER BY i) FROM w ORDER BY i",
    "SELECT i, lag(i, -1) OVER (ORDER BY i), lead(i, 2, -1) OVER (ORDER BY i), ntile(3) OVER (ORDER BY i) FROM w ORDER BY i",
    "SELECT i, nth_value(i, NULL) OVER (ORDER BY i), ntile(NULL) OVER (ORDER BY i) FROM w ORDER BY i",
    # named windows, used in ORDER BY too
    "SELECT i, rank() OVER w, sum(i) OVER w FROM w WINDOW w AS (ORDER BY g RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) ORDER BY rank() OVER w, i",
    # offsets checked only as the frame is computed: no row, no error
    "SELECT sum(i) OVER (ORDER BY i RANGE BETWEEN -1 PRECEDING AND CURRENT ROW) FROM w WHERE false",
    "SELECT nth_value(i, 0) OVER (ORDER BY i), ntile(0) OVER () FROM w WHERE false",
]


def test_frames_answer_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, FRAMES)


#: What PostgreSQL raises for a window definition, a frame offset or a window call.
ERRORS = [
    *TABLE,
    "SELECT sum(i) OVER (PARTITION BY g GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM w",
    "SELECT sum(i) OVER (ORDER BY d, i RANGE BETWEEN '1 year' PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(i) OVER (RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(i) OVER (ORDER BY d RANGE BETWEEN 1 PRECEDING AND 2 FOLLOWING) FROM w",
    "SELECT sum(i) OVER (ORDER BY i RANGE BETWEEN '1 day'::interval PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(i) OVER (ORDER BY i RANGE BETWEEN 1.5 PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(i) OVER (ORDER BY i::text RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(i) OVER (ROWS BETWEEN g PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(i) OVER (ORDER BY i ROWS BETWEEN 1.5 PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(i) OVER (ORDER BY i ROWS BETWEEN -1 PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(i) OVER (ORDER BY i ROWS BETWEEN CURRENT ROW AND -2 FOLLOWING) FROM w WHERE false",
    "SELECT sum(i) OVER (ORDER BY g GROUPS BETWEEN NULL PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(i) OVER (ORDER BY g RANGE BETWEEN -1 PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(i) OVER (ORDER BY d RANGE BETWEEN '-1 day' PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(i) OVER (ORDER BY f RANGE BETWEEN 1 PRECEDING AND 'NaN' FOLLOWING) FROM w",
    "SELECT sum(i) OVER (ORDER BY r RANGE BETWEEN -1.5 PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(i) OVER (ORDER BY n RANGE BETWEEN 'NaN' PRECEDING AND CURRENT ROW) FROM w",
    "SELECT sum(i) OVER (ORDER BY n RANGE BETWEEN 1.5::float8 PRECEDING AND CURRENT ROW) FROM w",
    "SELECT count() OVER () FROM w",
    "SELECT count() FROM w",
    "SELECT generate_series(1, 2) OVER () FROM w",
    "SELECT nth_value(i, 0) OVER (ORDER BY i) FROM w",
    "SELECT ntile(0) OVER (ORDER BY i) FROM w",
    "SELECT count(*) OVER w FROM w WINDOW w AS (ORDER BY i), w AS (ORDER BY g)",
    "SELECT count(*) OVER (w ORDER BY g) FROM w WINDOW w AS (ORDER BY i)",
    "SELECT count(*) OVER (w PARTITION BY g) FROM w WINDOW w AS (ORDER BY i)",
    "SELECT count(*) OVER (w ROWS 1 PRECEDING) FROM w WINDOW w AS (ORDER BY i ROWS 2 PRECEDING)",
    "SELECT count(*) OVER (v) FROM w WINDOW w AS (ORDER BY i)",
    "SELECT rank() OVER (ORDER BY rank() OVER (ORDER BY i)) FROM w",
    # what DuckDB has and PostgreSQL 15 has not
    "SELECT array_agg(i ORDER BY i DESC) OVER (ORDER BY i) FROM w",
    "SELECT count(DISTINCT g) OVER (ORDER BY i) FROM w",
    "SELECT row_number() FILTER (WHERE g > 1) OVER (ORDER BY i) FROM w",
    "SELECT row_number() FROM w",
    "SELECT lag(i) FROM w",
    # the grammar's own frame checks
    "SELECT count(*) OVER (ORDER BY i ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM w",
    "SELECT count(*) OVER (ORDER BY i RANGE BETWEEN 1 FOLLOWING AND CURRENT ROW) FROM w",
    "SELECT count(*) OVER (ORDER BY i ROWS UNBOUNDED FOLLOWING) FROM w",
]


def test_window_errors_are_postgresqls(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, ERRORS)


@pytest.mark.parametrize(
    "sql",
    [
        # DuckDB's -Infinity + Infinity is NaN, PostgreSQL counts every row in range
        "SELECT i, sum(i) OVER (ORDER BY f RANGE BETWEEN 'inf' FOLLOWING AND 'inf' FOLLOWING) FROM w",
        "SELECT i, sum(i) OVER (ORDER BY f DESC RANGE BETWEEN 'inf' PRECEDING AND CURRENT ROW) FROM w",
        # PostgreSQL evaluates an offset once, DuckDB for each row
        "SELECT i, sum(i) OVER (ORDER BY i ROWS BETWEEN (random() * 2)::int PRECEDING AND CURRENT ROW) FROM w",
        # numeric values DuckDB holds as text, a numeric offset that is not a literal
        "SELECT i, sum(i) OVER (ORDER BY u RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM w",
        "SELECT i, sum(i) OVER (ORDER BY n RANGE BETWEEN 1.5 + 1 PRECEDING AND CURRENT ROW) FROM w",
    ],
)
def test_frames_duckdb_would_answer_otherwise_are_refused(proxy: ProxyServer, sql: str) -> None:
    with Client(proxy.dsn()) as got:
        got("DROP TABLE IF EXISTS w")
        for stmt in TABLE:
            got(stmt)
        got("INSERT INTO w (i, f) VALUES (9, '-inf')")
        outcome = got(sql)
        got("DROP TABLE w")
    assert outcome[:2] == ("error", "0A000"), outcome
