"""Float aggregates and float → numeric conversions as PostgreSQL 15 computes them
(float.c's float8_accum, float8_regr_accum, float8pl/float4pl; numeric.c's float8_numeric
and float4_numeric): each statement runs on a real PostgreSQL 15 and on the proxy and must
answer the same, values bit for bit, errors by SQLSTATE and message. Aggregates over a
table whose result would depend on the order of the table's rows are refused (0A000)."""

from __future__ import annotations

from tests.pgcluster import PgCluster
from tests.pgcompare import same_answers
from tests.proxy import ProxyServer

_VALUES8 = "(VALUES (100000003::float8), (100000004), (100000006), (100000007)) v(x)"
_TENTHS = "(VALUES (0.1::float8),(0.1),(0.1),(0.1),(0.1),(0.1),(0.1),(0.1),(0.1),(0.1)) v(x)"

FLOAT_AGGREGATES = [
    # infinities and NaN: NaN variances (DuckDB's are 0), NULL for too few values
    "SELECT var_pop('inf'::float8), var_samp('inf'::float8), stddev_pop('inf'::float8), stddev_samp('inf'::float8)",
    "SELECT var_pop('nan'::float8), var_samp('nan'::float8), stddev_pop('nan'::float4), avg('nan'::float4)",
    "SELECT var_pop('inf'::float4), var_samp('inf'::float4), avg('-inf'::float4), sum('inf'::float4)",
    "SELECT var_pop(x), avg(x), sum(x) FROM (VALUES (1::float8), ('inf'), (2)) v(x)",
    "SELECT var_pop(x), avg(x), sum(x) FROM (VALUES ('inf'::float8), ('-inf'), (2)) v(x)",
    # Youngs-Cramer, not DuckDB's algorithm
    f"SELECT avg(x), var_pop(x), var_samp(x), stddev_pop(x), stddev_samp(x) FROM {_VALUES8}",
    f"SELECT variance(x), stddev(x) FROM {_VALUES8}",
    # left-to-right float8pl: 0.9999999999999999, not a compensated 1
    f"SELECT sum(x), avg(x), var_samp(x) FROM {_TENTHS}",
    "SELECT sum(x), pg_typeof(sum(x)), avg(x), pg_typeof(avg(x)) FROM (VALUES (0.1::float4), (0.2), (0.7)) v(x)",
    "SELECT sum(x ORDER BY x DESC), sum(x ORDER BY x) FROM (VALUES (1e16::float8), (1), (1), (-1e16)) v(x)",
    "SELECT sum(DISTINCT x), avg(DISTINCT x) FROM (VALUES (0.1::float8), (0.2), (0.1), (0.3)) v(x)",
    "SELECT sum(x) FILTER (WHERE x > 0), var_samp(x) FILTER (WHERE x > 100) FROM (VALUES (1.5::float8), (2.5), (-1)) v(x)",
    # overflow: 22003 where PostgreSQL raises
    "SELECT sum(x) FROM (VALUES (1e308::float8), (1e308::float8)) v(x)",
    "SELECT sum(x) FROM (VALUES (3e38::float4), (3e38::float4)) v(x)",
    "SELECT avg(x) FROM (VALUES (1e308::float8), (1e308::float8)) v(x)",
    "SELECT var_pop(x) FROM (VALUES (1e200::float8), (-1e200::float8)) v(x)",
    "SELECT regr_sxx(y, x) FROM (VALUES (1e200::float8, 1e200::float8), (-1e200, -1e200)) v(y, x)",
    # no rows, one row
    "SELECT sum(x), avg(x), var_pop(x), var_samp(x), corr(x, x), covar_samp(x, x) FROM (SELECT 1.0::float8 WHERE false) v(x)",
    "SELECT avg(x), var_samp(x), stddev_samp(x), var_pop(x), covar_pop(x, x), covar_samp(x, x) FROM (VALUES (1.5::float8)) v(x)",
    # the float8 covariance and regression aggregates, integers and numeric taken as float8
    "SELECT covar_pop(y, x), covar_samp(y, x), corr(y, x), regr_count(y, x) FROM (VALUES (7.8::float4, 56), (99.097, 100), (0.09561, 0), (324.78, 42)) v(y, x)",
    "SELECT regr_sxx(y, x), regr_syy(y, x), regr_sxy(y, x), regr_avgx(y, x), regr_avgy(y, x) FROM (VALUES (7.8::float4, 56), (99.097, 100), (0.09561, 0), (324.78, 42)) v(y, x)",
    "SELECT regr_r2(y, x), regr_slope(y, x), regr_intercept(y, x) FROM (VALUES (7.8::float4, 56), (99.097, 100), (0.09561, 0), (324.78, 42)) v(y, x)",
    "SELECT corr(y, x), regr_r2(y, x), regr_slope(y, x), regr_intercept(y, x), covar_samp(y, x) FROM (VALUES (1::float8, 2::float8)) v(y, x)",
    "SELECT corr(y, x), regr_sxx(y, x), regr_syy(y, x), covar_pop(y, x) FROM (VALUES (1::float8, 'nan'::float8), (2, 3)) v(y, x)",
    "SELECT corr(y, x), regr_r2(y, x), regr_slope(y, x) FROM (VALUES (1::float8, 5::float8), (2, 5), (3, 5)) v(y, x)",
    "SELECT regr_avgx(y, 1.5::numeric), regr_avgy(y, 2), regr_count(y, NULL::float8) FROM (VALUES (0.5::float8), (1.25)) v(y)",
    # windows: the frame's rows in order
    "SELECT x, sum(y) OVER (ORDER BY x), avg(y) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM (VALUES (1, 0.1::float8), (2, 0.2), (3, 0.3)) v(x, y) ORDER BY x",
    "SELECT x, var_pop(y) OVER (ORDER BY x ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), corr(y, x) OVER (ORDER BY x) FROM (VALUES (1, 0.1::float8), (2, 0.25), (3, 0.3), (4, 7)) v(x, y) ORDER BY x",
    "SELECT sum(DISTINCT x) OVER () FROM (VALUES (1.5::float8)) v(x)",
    "SELECT sum(x ORDER BY x) OVER () FROM (VALUES (1.5::float8)) v(x)",
    "SELECT sum(x) OVER (), avg(x) OVER () FROM (VALUES (0.1::float8), (0.2), (0.3)) v(x)",
    "SELECT g, sum(x), avg(x) FROM (VALUES (1, 0.5::float8), (1, 0.25), (2, 3), (1, 1e3)) v(g, x) GROUP BY g ORDER BY g",
    "SELECT sum(x), var_pop(x) FROM (SELECT x FROM (VALUES (0.1::float8), (0.2), (0.3)) v(x) WHERE x > 0.1 LIMIT 5) s",
    "WITH c AS (SELECT x FROM (VALUES (1e16::float8), (1), (1), (-1e16), (0.3), (0.1), (2.5)) v(x)) SELECT sum(x), avg(x) FROM c",
    "SELECT y, sum(x) OVER (), avg(x) OVER (ORDER BY y) FROM (VALUES (1e16::float8, 3), (1, 1), (1, 2), (-1e16, 0), (0.3, 5), (0.1, 4), (2.5, 6)) v(x, y) ORDER BY y",
    "SELECT sum(x), stddev(x) FROM unnest(ARRAY[1e16::float8, 1, 1, -1e16, 0.3, 0.1, 2.5]) x",
    # a table of values whose sums are exact in any order
    "CREATE TABLE fa (g int, x float8, y float4)",
    "INSERT INTO fa SELECT i % 3, i * 0.5, i * 0.25 FROM generate_series(1, 100) i",
    "SELECT g, sum(x), avg(x), sum(y), avg(y) FROM fa GROUP BY g ORDER BY g",
    "SELECT sum(x), avg(x), count(*) FROM fa",
    "SELECT var_pop(x) FROM fa WHERE x = 2",
    # float → numeric: 15 significant digits of a float8, 6 of a float4
    "SELECT 0.1::float4::numeric, 1.23456789012345678::float8::numeric, 0.1::float4::numeric + 1",
    "SELECT 1e16::float4::numeric, 123456789::float4::numeric, 1.5e-7::float4::numeric, 'nan'::float4::numeric, '-0'::float4::numeric",
    "SELECT 'inf'::float8::numeric, '-inf'::float4::numeric, 1e300::float8::numeric",
    "SELECT (0.1::float4)::numeric(10, 5), 2.5e-5::float4::numeric(10, 4)",
    "CREATE TABLE aggtest (a int2, b float4)",
    "INSERT INTO aggtest VALUES (56, 7.8), (100, 99.097), (0, 0.09561), (42, 324.78)",
    "SELECT stddev_pop(b::numeric), var_samp(b::numeric), sum(b::numeric), avg(b::numeric) FROM aggtest",
    "SELECT b::numeric, b::numeric(10, 2), round(b::numeric, 1) FROM aggtest ORDER BY a",
    "SELECT avg(b), sum(DISTINCT b) FROM aggtest",
    # a table's rows in an order without ties (an aggregate's or a window's ORDER BY)
    "SELECT a, sum(b) OVER (ORDER BY a), avg(b) OVER (ORDER BY a), var_pop(b) OVER (ORDER BY a DESC ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM aggtest ORDER BY a",
    "SELECT a, sum(b) OVER (PARTITION BY a > 50 ORDER BY a), sum(b) FILTER (WHERE a > 10) OVER (ORDER BY a) FROM aggtest ORDER BY a",
    "SELECT sum(b ORDER BY a), sum(b ORDER BY b DESC), corr(b, a ORDER BY a), var_samp(b ORDER BY a) FILTER (WHERE a > 10) FROM aggtest",
    "SELECT a > 50, sum(b ORDER BY a) FROM aggtest GROUP BY 1 ORDER BY 1",
    "CREATE TABLE n (x numeric, y numeric(10, 3))",
    "INSERT INTO n SELECT b, b FROM aggtest",
    "INSERT INTO n VALUES (0.1::float4, 0.1::float4)",
    "INSERT INTO n SELECT 1.23456789012345678::float8, 1.23456789012345678::float8",
    "UPDATE n SET y = 2.675::float4 WHERE x = 0.1",
    "SELECT x, y FROM n ORDER BY x",
    # each row of a multi-row VALUES coerced to the column on its own, as PostgreSQL does
    "CREATE TABLE nv (x numeric, y numeric(10, 3), z int)",
    "INSERT INTO nv VALUES (0.1::float4, 0.1::float4, 1), (1.23456789012345678::float8, 2.5::float8, 2), (1.5, 7, 3), ('2.25', real '0.3', 4)",
    "INSERT INTO nv (z, x) VALUES (5, 0.2::float4), (6, 1e-7::float8)",
    "INSERT INTO nv VALUES (1, 'inf'::float8, 7), (1, 1, 8)",
    "SELECT x, y FROM nv ORDER BY z",
    # a float too big for numeric(p, s): 22003, not a wrapped-around value
    "SELECT 1e300::float8::numeric(10, 2)",
    "INSERT INTO nv (y) VALUES (1e300::float8)",
    "INSERT INTO nv (y) VALUES ('1e100')",
]

#: Over a table (whose rows come here in another order than PostgreSQL's heap order) these
#: results depend on the rows' order: refused, never answered with other last digits.
ORDER_DEPENDENT = [
    "SELECT sum(b) FROM agg_order",
    "SELECT var_pop(b) FROM agg_order",
    "SELECT corr(b, a) FROM agg_order",
    "SELECT sum(b) OVER (ORDER BY a > 50) FROM agg_order",
    "SELECT sum(b ORDER BY a > 50) FROM agg_order",
    "SELECT sum(b) OVER () FROM agg_order",
    # PostgreSQL's sort for a GROUP BY or a PARTITION BY does not keep the order of ties
    "SELECT g, sum(x) FROM (VALUES (1, 1e16::float8), (1, 1), (1, 1), (1, -1e16), (2, 0.1), (1, 0.3)) v(g, x) GROUP BY g",
    "SELECT sum(x) OVER (PARTITION BY g) FROM (VALUES (1, 1e16::float8), (1, 1), (1, 1), (1, -1e16), (2, 0.1), (1, 0.3)) v(g, x)",
    "SELECT sum(x) FROM (SELECT * FROM (VALUES (1, 1e16::float8), (1, 1), (1, 1), (1, -1e16), (2, 0.1), (1, 0.3), (1, 2)) v(g, x) ORDER BY g) s",
]


def test_float_aggregates_as_postgres(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("flagg")), FLOAT_AGGREGATES).close()


def test_order_dependent_float_aggregates_refused(proxy: ProxyServer) -> None:
    from tests.pgcompare import Client

    c = Client(proxy.dsn())
    try:
        c("CREATE TABLE agg_order (a int2, b float4)")
        c("INSERT INTO agg_order VALUES (56, 7.8), (100, 99.097), (0, 0.09561), (42, 324.78)")
        for sql in ORDER_DEPENDENT:
            got = c(sql)
            assert got[0] == "error" and got[1] == "0A000", (sql, got)
    finally:
        c.close()
