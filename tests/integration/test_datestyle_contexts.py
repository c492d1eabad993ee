"""Date and timestamp literals read under the session's DateStyle wherever PostgreSQL
coerces an unknown literal to a date, time or timestamp (CASE arms, COALESCE, VALUES,
ARRAY[…], set operations, row comparisons, operators), a prepared statement's literals
in the DateStyle of its Parse, and date/time arithmetic past the ranges the proxy can
hold: the same answer as PostgreSQL 15, or a refusal (0A000), never a different value.
"""

from __future__ import annotations

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import Client, same_answers
from tests.proxy import ProxyServer


def _same_answers(proxy: ProxyServer, pg15: PgCluster, statements: list[str]) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("dsc")), statements).close()


def _unknown_literals(order: str, table: str) -> list[str]:
    """'01/02/03' is 2003-01-02 in MDY, 2003-02-01 in DMY and 2001-02-03 in YMD; DuckDB's
    own cast from VARCHAR reads 0001-02-03."""
    return [
        f"SET DateStyle = 'ISO, {order}'",
        "SELECT CASE WHEN true THEN '01/02/03' ELSE date '2001-01-01' END",
        "SELECT CASE WHEN true THEN '01/02/03 10:00' ELSE timestamp '2001-01-01' END",
        "SELECT CASE WHEN true THEN '01/02/03 10:00+02' ELSE timestamptz '2001-01-01' END",
        "SELECT CASE WHEN false THEN '01/02/03' ELSE date '2003-01-02' END = date '2003-01-02'",
        "SELECT COALESCE('01/02/03', date '2001-01-01'), COALESCE(NULL, '01/02/03', date '2001-01-01')",
        "SELECT NULLIF('01/02/03', date '2001-01-01'), NULLIF(date '2003-01-02', '01/02/03')",
        "SELECT GREATEST('01/02/03', date '2001-01-01'), LEAST('01/02/03', date '2004-01-01', '01/01/04')",
        "VALUES (date '2001-01-01'), ('01/02/03')",
        "VALUES ('01/02/03'), (date '2001-01-01')",
        "SELECT * FROM (VALUES (date '2001-01-01'), ('01/02/03')) v(x) ORDER BY x",
        "SELECT ARRAY[date '2001-01-01', '01/02/03'], ARRAY['01/02/03', date '2001-01-01']",
        "SELECT ARRAY['01/02/03']::date[], '{01/02/03}'::date[], ARRAY['01/02/03 04:05']::timestamp[]",
        "SELECT date '2001-01-01' UNION SELECT '01/02/03' ORDER BY 1",
        "SELECT '01/02/03' UNION ALL SELECT date '2001-01-01' ORDER BY 1",
        "SELECT date '2001-01-01' UNION SELECT '01/02/03' UNION SELECT '01/02/04' ORDER BY 1",
        "SELECT x FROM (SELECT '01/02/03' AS x UNION SELECT '01/02/04') s ORDER BY 1",
        "SELECT (date '2003-01-02', 1) = ('01/02/03', 1), (date '2003-01-02', 1) IN (('01/02/03', 1), ('01/02/04', 2))",
        "SELECT (date '2003-01-02', 1) < ('01/02/04', 1)",
        "SELECT CASE date '2003-01-02' WHEN '01/02/03' THEN 'y' ELSE 'n' END",
        "SELECT date '2003-01-05' - '01/02/03', '01/05/03' - date '2003-01-02'",
        "SELECT timestamp '2003-01-05' - '01/02/03', '01/05/03' - timestamp '2003-01-02'",
        "SELECT date '2003-01-02' IS DISTINCT FROM '01/02/03', date '2003-01-02' < '01/02/03'",
        "SELECT generate_series('01/02/03'::timestamp, '01/04/03', '1 day')",
        "SELECT * FROM generate_series(timestamp '2003-01-02', '01/04/03', interval '1 day')",
        "SELECT array_position(ARRAY[date '2003-01-02'], '01/02/03'), array_append(ARRAY[date '2003-01-02'], '01/03/03')",
        "SELECT array_prepend('01/03/03', ARRAY[date '2003-01-02'])",
        "SELECT '01/02/03' = ANY(ARRAY[date '2003-01-02']), date '2003-01-02' = ANY('{01/02/03}')",
        "SELECT lag(x, 1, '01/02/03') OVER () FROM (VALUES (date '2001-01-01')) v(x)",
        f"CREATE TABLE {table} (d date, ts timestamp, tz timestamptz)",
        f"INSERT INTO {table} VALUES ('01/02/03', '01/02/03 10:00', '01/02/03 10:00+02')",
        f"INSERT INTO {table} SELECT '01/02/04', '01/02/04', '01/02/04'",
        f"SELECT * FROM {table} ORDER BY d",
        f"SELECT d, d = '01/02/03', d IN ('01/02/04'), d BETWEEN '01/01/03' AND '01/03/03' FROM {table} ORDER BY d",
        f"SELECT CASE d WHEN '01/02/03' THEN 1 ELSE 0 END, COALESCE(d, '01/02/05') FROM {table} ORDER BY d",
        f"SELECT d FROM {table} WHERE (d, 1) = ('01/02/04', 1)",
        f"SELECT * FROM {table} UNION ALL SELECT '01/02/05', '01/02/05', '01/02/05' ORDER BY 1",
        f"SELECT '01/02/06', * FROM {table} UNION ALL SELECT d, ts, tz, '01/02/07' FROM {table} ORDER BY 1, 2",
        f"UPDATE {table} SET d = '01/02/05' WHERE d = '01/02/04'",
        f"SELECT d, ts FROM {table} ORDER BY d",
        # errors where PostgreSQL raises them: at parse analysis, in a branch never taken too
        "SELECT CASE WHEN false THEN '2001-02-30' ELSE date '2001-01-01' END",
        "SELECT COALESCE('bogus', date '2001-01-01')",
        "SELECT ARRAY[date '2001-01-01', '13/13/2001']",
        "SELECT date '2001-01-01' UNION SELECT '2001-13-01'",
        "SELECT CASE WHEN true THEN 'epoch' ELSE date '2001-01-01' END, CASE WHEN true THEN 'today' ELSE date '2001-01-01' END = current_date",
    ]


@pytest.mark.parametrize("order", ["MDY", "DMY", "YMD"])
def test_unknown_literals_take_the_datetime_type_in_the_datestyle_order(
    proxy: ProxyServer, pg15: PgCluster, order: str
) -> None:
    _same_answers(proxy, pg15, _unknown_literals(order, f"dates_{order.lower()}"))


def _prepared_runs(dsn: str) -> list[tuple[object, ...]]:
    """Statements parsed under MDY, bound and executed after ``SET DateStyle = DMY``: their
    literals keep the order of Parse, the text bound to their parameters is read in DMY."""
    statements: list[tuple[bytes, bytes, list[int], list[bytes | None]]] = [
        (b"lit", b"SELECT '02/03/2001'::date", [], []),
        (b"cmp", b"SELECT '02/03/2001'::date = $1", [0], [b"02/03/2001"]),
        (
            b"arm",
            b"SELECT CASE WHEN true THEN '02/03/2001' ELSE date '2001-01-01' END, '{02/03/2001}'::date[]",
            [],
            [],
        ),
        (
            b"where",
            b"SELECT count(*) FROM (VALUES (date '2001-02-03')) v(d) WHERE d = '02/03/2001'",
            [],
            [],
        ),
        (b"unk", b"SELECT $1::date", [0], [b"02/03/2001"]),
        (b"typed", b"SELECT $1", [1082], [b"02/03/2001"]),
        (
            b"arm_param",
            b"SELECT CASE WHEN true THEN $1 ELSE date '2001-01-01' END",
            [0],
            [b"02/03/2001"],
        ),
        (b"both", b"SELECT '02/03/2001'::timestamp, $1::timestamp", [0], [b"02/03/2001 10:00"]),
        (
            b"coalesce",
            b"SELECT COALESCE($1, date '2001-01-01'), GREATEST($1, date '2001-01-01')",
            [0],
            [b"02/03/2001"],
        ),
        (
            b"union",
            b"SELECT date '2001-01-01' UNION ALL SELECT $1 ORDER BY 1",
            [0],
            [b"02/03/2001"],
        ),
        (
            b"lag",
            b"SELECT lag(x, 1, $1) OVER () FROM (VALUES (date '2001-01-01')) v(x)",
            [0],
            [b"02/03/2001"],
        ),
        (
            b"minus",
            b"SELECT date '2001-03-05' - $1, (date '2001-03-02', 1) = ($1, 1)",
            [0],
            [b"02/03/2001"],
        ),
    ]
    out: list[tuple[object, ...]] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        pgc = conn.pgconn
        for name, sql, types, _ in statements:
            r = pgc.prepare(name, sql, types)
            out.append((name, r.status, r.error_field(ord("C"))))
        conn.execute("SET DateStyle = 'ISO, DMY'")
        for name, _, _, params in statements:
            r = pgc.exec_prepared(name, params)
            values = [r.get_value(0, i) for i in range(r.nfields)] if r.ntuples else None
            out.append((name, r.status, r.error_field(ord("C")), values))
    return out


def test_prepared_literals_keep_the_datestyle_of_parse(proxy: ProxyServer, pg15: PgCluster) -> None:
    assert _prepared_runs(proxy.dsn()) == _prepared_runs(pg15.dsn())


def test_prepared_write_with_literals_under_another_datestyle_is_refused(
    proxy: ProxyServer,
) -> None:
    """A prepared INSERT's literal read at Execute in the new order would store another
    date than PostgreSQL's: refused, while its bound parameters go in as PostgreSQL's."""
    with psycopg.connect(proxy.dsn(), autocommit=True) as conn:
        conn.execute("CREATE TABLE prepared_dates (d date)")
        pgc = conn.pgconn
        pgc.prepare(b"ins_lit", b"INSERT INTO prepared_dates VALUES ('04/05/2001')", [])
        pgc.prepare(b"ins_param", b"INSERT INTO prepared_dates VALUES ($1) RETURNING d", [0])
        conn.execute("SET DateStyle = 'ISO, DMY'")
        r = pgc.exec_prepared(b"ins_lit", [])
        assert r.error_field(ord("C")) == b"0A000"
        r = pgc.exec_prepared(b"ins_param", [b"04/05/2001"])
        assert r.get_value(0, 0) == b"2001-05-04"


#: Dates, timestamps and timestamptz together resolve to the last of them (select_common_type),
#: in every context that unifies types.
MIXED_DATETIMES = [
    "SELECT date '2001-01-01' UNION ALL SELECT timestamp '2001-01-01 10:00' ORDER BY 1",
    "SELECT date '2001-01-01' UNION ALL SELECT timestamptz '2001-01-01 10:00+00' ORDER BY 1",
    "SELECT timestamp '2001-01-01' UNION ALL SELECT timestamptz '2001-01-01 10:00+00' ORDER BY 1",
    "SELECT CASE WHEN true THEN date '2001-01-01' ELSE timestamp '2001-01-01 10:00' END",
    "SELECT COALESCE(date '2001-01-01', timestamp '2001-01-01 10:00')",
    "SELECT ARRAY[date '2001-01-01', timestamp '2001-01-01 10:00']",
    "VALUES (date '2001-01-01'), (timestamp '2001-01-01 10:00')",
    "SELECT CASE WHEN true THEN '01/02/03' ELSE date '2001-01-01' END, GREATEST(date '2001-01-01', timestamp '2001-01-01 10:00')",
]


def test_dates_and_timestamps_together_take_the_wider_type(
    proxy: ProxyServer, pg15: PgCluster
) -> None:
    _same_answers(proxy, pg15, MIXED_DATETIMES)


#: Date/time arithmetic at the ends of the ranges: PostgreSQL's errors where its values end.
RANGE_ERRORS = [
    "SELECT (date '5874897-12-31' + 1)::text",
    "SELECT date '5874897-12-31' + 1 > date '2000-01-01'",
    "SELECT date '4714-11-24 BC' - 1",
    "SELECT (date '4714-11-24 BC' + 0)::text, (date '5874897-12-31' - 0)::text",
    "SELECT timestamp '4714-11-24 00:00 BC' - interval '1 microsecond'",
    "SELECT (timestamp '4714-11-24 00:00 BC' + interval '1 microsecond')::text",
    "SELECT timestamptz '4713-01-01 BC' - interval '1000 years'",
    "SELECT date '4713-01-01 BC' - interval '1000 years'",
    "SELECT (timestamp 'infinity' + interval '1 day')::text, (timestamp '-infinity' - interval '1 day')::text",
    "SELECT interval '1 hour' * 1e20",
    "SELECT interval '1 microsecond' * 9.3e18",
    "SELECT interval '2000000 hours' + interval '500000 hours', -interval '2562047 hours'",
    "SELECT (timestamp '290000-01-01' + interval '1000000 hours' + interval '1000000 hours')::text",
    "SELECT timestamp '294277-01-01'",
]


def test_date_and_interval_arithmetic_ends_as_postgresql(
    proxy: ProxyServer, pg15: PgCluster
) -> None:
    _same_answers(proxy, pg15, RANGE_ERRORS)


#: Values PostgreSQL has that the proxy cannot compute or hold: an interval whose time part
#: passes Arrow's int64 nanoseconds, a timestamp past the lake's int64 microseconds from 1970.
REFUSED = [
    "SELECT interval '2562047 hours' * 2",
    "SELECT interval '2000000 hours' + interval '2000000 hours'",
    "SELECT interval '2000000 hours' - interval '-2000000 hours'",
    "SELECT interval '2000000 hours' * 1.5",
    "SELECT (interval '2000000 hours' + interval '2000000 hours')::text",
    "SELECT timestamp '294270-01-01'",
    "SELECT timestamptz '294276-12-31 23:59:59+00'",
    "SELECT timestamp '294247-01-09' + interval '2 day'",
    "SELECT timestamptz '294247-01-09' + interval '2 day'",
    "SELECT date '294247-01-09' + interval '5 days'",
    "SELECT '294270-01-01'::date::timestamp", "SELECT to_timestamp(9224318015999.999)",
    "SELECT date '2022-01-01' + time '10:00' + interval '1 day' FROM generate_series(timestamp '2022-01-01', 'infinity', '1 month') LIMIT 2",
    "SELECT generate_series(timestamp '2022-01-01', 'infinity'::timestamp, '1 month'::interval) LIMIT 2",
    "SELECT concat(VARIADIC ARRAY[1, 2, 3])",  # (not a range: DuckDB's parser has no VARIADIC)
    "SELECT format('%s', VARIADIC ARRAY['a', 'b'])",  # (was the array's text)
]


def test_values_past_the_proxys_ranges_are_refused(proxy: ProxyServer) -> None:
    with Client(proxy.dsn()) as c:
        c("CREATE TABLE long_intervals (i interval)")
        c("INSERT INTO long_intervals VALUES (interval '2000000 hours')")
        for sql in [
            *REFUSED,
            "SELECT i + i FROM long_intervals",
            "INSERT INTO long_intervals SELECT i * 2 FROM long_intervals",
        ]:
            got = c(sql)
            assert got[:2] == ("error", "0A000"), (sql, got)
        assert c("SELECT count(*) FROM long_intervals")[2] == [(1,)]
