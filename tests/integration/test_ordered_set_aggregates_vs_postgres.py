"""percentile_cont, percentile_disc and mode() WITHIN GROUP against PostgreSQL 15: values,
types, direction, FILTER, NULLs, empty groups, percentile arrays and the errors."""

from __future__ import annotations

import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import same_answers
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

STATEMENTS = [
    "CREATE TABLE osa (g int, x int, f float8, n numeric, nn numeric(10,2), t text, d date, ts timestamptz)",
    "INSERT INTO osa SELECT i % 3, i, i * 1.1, i / 7.0, i / 3.0, 'v' || (i % 5), date '2020-01-01' + i,"
    " timestamptz '2020-01-01 00:00+00' + i * interval '1 hour' FROM generate_series(1, 20) i",
    "INSERT INTO osa VALUES (1, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "SELECT g, percentile_cont(0.5) WITHIN GROUP (ORDER BY x), percentile_cont(0.25) WITHIN GROUP (ORDER BY f),"
    " percentile_cont(0.9) WITHIN GROUP (ORDER BY n), percentile_cont(0.1) WITHIN GROUP (ORDER BY nn) FROM osa GROUP BY g ORDER BY g",
    "SELECT g, percentile_disc(0.5) WITHIN GROUP (ORDER BY t), percentile_disc(0.5) WITHIN GROUP (ORDER BY d DESC),"
    " percentile_disc(0.33) WITHIN GROUP (ORDER BY ts), percentile_disc(0.5) WITHIN GROUP (ORDER BY n),"
    " percentile_disc(0.5) WITHIN GROUP (ORDER BY nn) FROM osa GROUP BY g ORDER BY g",
    "SELECT g, mode() WITHIN GROUP (ORDER BY t), mode() WITHIN GROUP (ORDER BY t DESC), mode() WITHIN GROUP (ORDER BY x % 4) FROM osa GROUP BY g ORDER BY g",
    "SELECT percentile_cont(ARRAY[0, 0.5, 1]) WITHIN GROUP (ORDER BY x), percentile_disc(ARRAY[0.1, 0.9]) WITHIN GROUP (ORDER BY t) FROM osa",
    "SELECT percentile_cont(ARRAY[0.5, NULL, 1]) WITHIN GROUP (ORDER BY x) FROM (VALUES (1), (2), (4)) v(x)",
    "SELECT percentile_cont(ARRAY[0.5, 1]) WITHIN GROUP (ORDER BY x) FROM (VALUES (NULL::int)) v(x)",
    "SELECT percentile_cont(ARRAY[]::float8[]) WITHIN GROUP (ORDER BY x) FROM (VALUES (1)) v(x)",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FILTER (WHERE g = 1), percentile_disc(0.5) WITHIN GROUP (ORDER BY x) FILTER (WHERE x > 10) FROM osa",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM osa WHERE false",
    "SELECT percentile_cont(g / 3.0) WITHIN GROUP (ORDER BY x) FROM osa GROUP BY g ORDER BY g",
    "SELECT percentile_cont(0.3) WITHIN GROUP (ORDER BY x DESC), percentile_cont(1e-5) WITHIN GROUP (ORDER BY x) FROM (VALUES (1.5::float8), (2.25), (10)) v(x)",
    "SELECT pg_typeof(percentile_disc(0.5) WITHIN GROUP (ORDER BY d)), pg_typeof(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)) FROM osa",
    "SELECT mode() WITHIN GROUP (ORDER BY v), percentile_disc(0.5) WITHIN GROUP (ORDER BY v) FROM (VALUES ('1 mon'::interval), ('30 days'), ('2 days')) t(v)",
    "SELECT mode() WITHIN GROUP (ORDER BY v), percentile_disc(0.6) WITHIN GROUP (ORDER BY v) FROM (VALUES ('0'::float8), ('-0'), ('NaN'), ('NaN')) t(v)",
    "SELECT mode() WITHIN GROUP (ORDER BY v), percentile_disc(0.5) WITHIN GROUP (ORDER BY v DESC) FROM (VALUES ('a'::char(3)), ('b  '), ('a  ')) t(v)",
    # errors
    "SELECT percentile_cont(1.5) WITHIN GROUP (ORDER BY x) FROM (VALUES (1), (2)) v(x)",
    "SELECT percentile_cont(1.5) WITHIN GROUP (ORDER BY x) FROM (VALUES (1), (2)) v(x) WHERE false",
    "SELECT percentile_cont('NaN'::float8) WITHIN GROUP (ORDER BY x) FROM (VALUES (1)) v(x)",
    "SELECT percentile_disc(ARRAY[0.5, -1]) WITHIN GROUP (ORDER BY x) FROM (VALUES (1)) v(x)",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) OVER () FROM (VALUES (1), (2)) v(x)",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x, x) FROM (VALUES (1), (2)) v(x)",
    "SELECT mode(1) WITHIN GROUP (ORDER BY x) FROM (VALUES (1), (2)) v(x)",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY t) FROM (VALUES ('a')) v(t)",
    "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY v) FROM (VALUES ('{\"a\":1}'::jsonb), ('[1]')) t(v)",
]


def test_ordered_set_aggregates_answer_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("osa")), STATEMENTS).close()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY v) FROM (VALUES ('1 day'::interval)) t(v)",
        "SELECT mode() WITHIN GROUP (ORDER BY v) FROM osa_refused",  # (an unconstrained numeric)
        "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY v) FROM (VALUES (ARRAY[1])) t(v)",
    ],
)
def test_what_cannot_be_exact_is_refused(proxy: ProxyServer, sql: str) -> None:
    import psycopg

    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE IF NOT EXISTS osa_refused (v numeric)")
        with pytest.raises(psycopg.Error) as err:
            c.execute(sql)
    assert err.value.sqlstate == "0A000" and "walsender-proxy" in str(err.value)
