"""PostgreSQL 15's array functions answered as PostgreSQL answers them, or refused (0A000).

Each statement runs on a real PostgreSQL 15 and on the proxy: rows (with column names and
type OIDs) compared in full; errors by SQLSTATE and message (the proxy's macros raise no
DETAIL). Covers array_fill, array_positions, array_remove, array_replace, string_to_table,
both width_buckets, the shape functions (array_length … cardinality) with other dimensions
and empty arrays, x op ANY with a non-boolean operator, multidimensional values in
expressions (literals, ARRAY[…] checks, ||, subscripts, comparisons, min/max, ORDER BY),
and the refusals that remain.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import Client, refused_where_postgres_answers
from tests.proxy import ProxyServer

_dbs = itertools.count(1)


@pytest.fixture(scope="module")
def clients(proxy: ProxyServer, pg15: PgCluster) -> Iterator[tuple[Client, Client]]:
    db = f"arrayfns{next(_dbs)}"
    pg15.psql(f"CREATE DATABASE {db}")
    ref, got = Client(pg15.dsn(dbname=db)), Client(proxy.dsn())
    yield ref, got
    ref.close()
    got.close()


def _same(clients: tuple[Client, Client], statements: list[str]) -> None:
    ref, got = clients
    for sql in statements:
        want, have = ref(sql), got(sql)
        if want[0] == "error":  # (SQLSTATE and message; the detail may be missing)
            assert have[:3] == want[:3], sql
        else:
            assert repr(have) == repr(want), sql


def _refused(clients: tuple[Client, Client], statements: list[str]) -> None:
    """Statements PostgreSQL answers that the proxy refuses with 0A000."""
    ref, got = clients
    refused_where_postgres_answers(got, ref, statements)


def test_array_fill(clients: tuple[Client, Client]) -> None:
    _same(clients, [
        "select array_fill(7, array[3,3])",
        "select array_fill(7, array[3])",
        "select array_fill(7, array[3], array[1])",
        "select array_fill(7, array[2,2], array[1,1])",
        "select array_fill('x'::text, array[2])",
        "select array_fill(null::int, array[2])",
        "select array_fill(1.5, array[2])",
        "select array_fill(1, array[0])",
        "select array_fill(1, array[3,0])",
        "select array_fill(1, '{}'::int[])",
        "select array_fill(1, '{2}')",
        "select array_fill(7, null)",
        "select array_fill(1, array[-1])",
        "select array_fill(1, array[null]::int[])",
        "select array_fill(7, array[3], null)",
        "select array_fill(7, array[3], array[1,1])",
        "select array_fill(7, array[3], array[null]::int[])",
        "select array_fill(1, array[1,1,1,1,1,1,1])",
        "select array_fill('x', array[2])",
        "select array_fill(x, array[2]) from (values (1), (null)) v(x)",
        "select array_fill(1, array[2, 0], array[2, 2])",
    ])  # fmt: skip
    _refused(clients, [
        "select array_fill(7, array[3], array[2])",
        "select array_fill(7, array[2,2], array[1,0])",
        "select array_fill(7, d) from (values (array[2])) v(d)",
    ])  # fmt: skip


def test_element_functions(clients: tuple[Client, Client]) -> None:
    _same(clients, [
        "select array_positions(array[1,2,1,null,1], 1)",
        "select array_positions(array[1,2,1,null,1], null)",
        "select array_positions(null::int[], 1)",
        "select array_positions('{}'::int[], 1)",
        "select array_positions(array['a','b','a'], 'a')",
        "select array_positions(array['NaN'::float8, 0, '-0'::float8, 'NaN'], 'NaN')",
        "select array_positions(array[0::float8, 1], '-0')",
        "select array_positions(array[[1,2],[3,4]], 1)",
        "select array_remove(array[1,2,2,3], 2)",
        "select array_remove(array[1,null,2], null)",
        "select array_remove(array['A','CC','D','C','RR'], 'RR')",
        "select array_remove(array[1,2], 5)",
        "select array_remove(null::int[], 1)",
        "select array_remove('{}'::text[], 'a')",
        "select array_remove(array[[1,2],[3,4]], 1)",
        "select array_remove(array[1.5, 2.5], 2.5)",
        "select array_replace(array[1,2,5,4], 5, 3)",
        "select array_replace(array[1,null,5], null, 3)",
        "select array_replace(array['AB',NULL,'CDE'], NULL, '12')",
        "select array_replace(array[1,2], 2, null)",
        "select array_replace(null::int[], 1, 2)",
        "select array_remove(a, x) from (values (array[1,2,3], 2), (array[4], null), (null, 1)) v(a, x)",
        "select array_position(array[[1,2],[3,4]], 1)",
        "select array_append(array[[1,2],[3,4]], 5)",
        "select array_prepend(5, array[[1,2],[3,4]])",
        "select array[[1,2]] || 3",
    ])  # fmt: skip
    _refused(clients, [
        "select array_replace(array[[1,2],[3,4]], 1, 9)",
        "select array_remove(array[1,2], 2::bigint)",
    ])  # fmt: skip


def test_string_to_table(clients: tuple[Client, Client]) -> None:
    _same(clients, [
        "select string_to_table('1|2|3', '|')",
        "select string_to_table('1|2|3|', '|')",
        "select string_to_table('', '|')",
        "select string_to_table('1|2|3', '')",
        "select string_to_table('1|2|3', null)",
        "select string_to_table(null, '|')",
        "select v, v is null as \"is null\" from string_to_table('1,2,3,4,*,6', ',', '*') g(v)",
        "select * from string_to_table('abc', null)",
        "select * from string_to_table('a,b', ',') with ordinality",
        "select t, s from (values ('a b'), ('c'), (null)) v(t), string_to_table(t, ' ') s order by 1, 2",
        "select string_to_table(1, ',')",
        "select string_to_table('a', ',', 'x', 'y')",
    ])  # fmt: skip


def test_unnest_of_several_arrays(clients: tuple[Client, Client]) -> None:
    """PostgreSQL's ROWS FROM (unnest(a), unnest(b), …): side by side, NULL-padded."""
    _same(clients, [
        "select * from unnest(array[1,2], array['a','b','c'])",
        "select * from unnest(array[1,2], array['a','b','c']) as t(x, y)",
        "select * from unnest(array[1,2], array['a','b','c']) with ordinality as t(x, y, o)",
        "select x, y from unnest(array[1,2]::int[], array['a']::varchar[]) as t(x, y) where x > 1",
        "select * from unnest('{1,2}'::int[], '{}'::text[])",
        "select * from unnest(null::int[], '{3}'::int[])",
        "select * from unnest(array[[1,2],[3,4]], array[5])",
        "select * from unnest(array[[1,2],[3,4]], array[5]) with ordinality",
        "select * from unnest(1, array[1])",
        "select * from unnest(array[1], array[2]) as t(a, b, c)",
        "select * from unnest('{a,b}'::varchar[], '{1,2}'::integer[], '{x,y}'::varchar[])",
    ])  # fmt: skip


def test_trim_array(clients: tuple[Client, Client]) -> None:
    _same(clients, [
        'SELECT trim_array(ARRAY[1, 2, 3], 1), trim_array(ARRAY[1, 2, 3], 0), trim_array(ARRAY[1, 2, 3], 3)',
        "SELECT trim_array(ARRAY['a', 'b'], 1), trim_array(NULL::int[], 1), trim_array(ARRAY[1, 2], NULL)",
        'SELECT trim_array(ARRAY[1, 2, 3], -1)',
        'SELECT trim_array(ARRAY[1, 2, 3], 10)',
        "SELECT trim_array('{}'::int[], 1)",
        'SELECT trim_array(trim_array(ARRAY[1, 2, 3, 4], 1), 1)',
    ])  # fmt: skip


def test_shape_functions(clients: tuple[Client, Client]) -> None:
    values = [
        "array[1,2,3]", "'{}'::int[]", "null::int[]", "array[[1,2,3],[4,5,6]]", "'{{{1},{2}}}'::int[]",
        "array[array[]::int[], array[]::int[]]", "array['a']",
    ]  # fmt: skip
    statements = []
    for v in values:
        statements.append(f"select array_ndims({v}), array_dims({v}), cardinality({v})")
        for d in (-1, 0, 1, 2, 3, 4):
            statements.append(f"select array_length({v}, {d}), array_lower({v}, {d}), array_upper({v}, {d})")
    statements += ["select array_length(array[1], null)", "select array_length(a, d) from (values (array[[1],[2]], 1), (array[[3]], 2)) v(a, d)"]
    _same(clients, statements)


def test_any_all(clients: tuple[Client, Client]) -> None:
    _same(clients, [
        "select 33 * any('{1,2,3}')",
        "select 33 * any(array[1,2,3])",
        "select 'a' || all(array['b'])",
        "select 1 = any(array[[1,2],[3,4]]), 5 = any(array[[1,2],[3,4]]), 5 <> all(array[[1,2],[3,4]])",
        "select 2 < any(array[[1,2],[3,null]])",
        "select unnest(array[[1,2],[3,4]])",
        "select * from unnest(array[[1,2],[3,4]]) with ordinality",
    ])  # fmt: skip


def test_width_bucket_thresholds(clients: tuple[Client, Client]) -> None:
    _same(clients, [
        "select width_bucket(5, array[1,3,4,6])",
        "select width_bucket(5.0::float8, array[1,3,4,6]::float8[])",
        "select width_bucket(5.0::numeric, array[1,3,4,6]::numeric[])",
        "select width_bucket(5, array[1,null,4,6])",
        "select width_bucket(5, array[[1,3],[4,6]])",
        "select width_bucket(5, '{}'::int[])",
        "select width_bucket(null, array[1,2])",
        "select width_bucket(5, null::int[])",
        "select width_bucket('NaN'::float8, array[1,'NaN'::float8, 3])",
        "select width_bucket(2::float8, array[1,'NaN'::float8, 3])",
        "select width_bucket(1.5, array[3, 1, 2, 0])",
        "select width_bucket(x, array[1.5, 2.5, 3.5]) from (values (0.5), (1.5), (3.49), (3.5), ('NaN'), (null)) v(x)",
        "select width_bucket(x, '{-Infinity,0,Infinity}'::float8[]) from (values (0::float8), ('-Infinity'), ('Infinity'), ('NaN')) v(x)",
    ])  # fmt: skip
    _refused(clients, ["select width_bucket('a'::text, array['a','b'])", "select width_bucket(1.5, array[1, 2.5])"])


def test_width_bucket_numeric(clients: tuple[Client, Client]) -> None:
    rnd = random.Random(15)
    statements = [
        "select width_bucket(5.5, 0, 10, 5)", "select width_bucket(5.5, 0, 10, 0)",
        "select width_bucket(5, 0, 10, 5)", "select width_bucket(5.5, 10, 0, 3)",
        "select width_bucket(10, 10, 0, 3)", "select width_bucket(-1.0, 10, 0, 3)",
        "select width_bucket(5.5, 'NaN', 10, 3)", "select width_bucket(5.5, 'Infinity', 10, 3)",
        "select width_bucket('Infinity'::numeric, 0, 10, 3)", "select width_bucket('NaN'::numeric, 0, 10, 3)",
        "select width_bucket(5.5, 1, 1, 3)", "select width_bucket(5.5, 0, 10, 2147483647)",
        "select width_bucket(15.5, 0, 10, 2147483647)", "select width_bucket(1::numeric/3, 0, 1, 3)",
        "select width_bucket(x, 0, 10, 5) from (values (1.5), (null), (9.99)) v(x)",
        "select width_bucket(5, 0, 10, 5::bigint)",
        "select width_bucket(0.3333333333333333333333333333333, 0, 1, 3)",
    ]  # fmt: skip
    for _ in range(40):  # (operands near the buckets' edges)
        lo = rnd.choice(["0", "-1.25", "3", "0.1", "-1000"])
        hi = rnd.choice(["10", "1.75", "-3", "0.30", "1000.001"])
        x = rnd.choice(["0", "1.5", "-0.5", "9.999999999999999999", "0.2", "333.333", "-1.25", "1.75", "10"])
        n = rnd.choice([1, 3, 7, 10, 1000000])
        statements.append(f"select width_bucket({x}::numeric, {lo}, {hi}, {n})")
    _same(clients, statements)


def test_multidimensional_values(clients: tuple[Client, Client]) -> None:
    _same(clients, [
        "select '{{1,2,3},{4,5,6}}'::int[]",
        "select '{{{1,2},{3,4}},{{5,6},{7,8}}}'::int[]",
        "select '{{1,2},{3}}'::int[]",
        "select '{{1,{2}},{2,3}}'::text[]",
        "select '{{},{}}'::text[]",
        "select '{ { \",\" } , { 3 } }'::text[]",
        "select '{{\"a b\",NULL},{\"c\\\"d\",\"e\\\\f\"}}'::text[]",
        "select '{{1.5,2},{3,4}}'::int[]",
        "select '{{1.5,2},{3,4}}'::float8[]",
        "select '{{1.5,2.5},{3.0,4.0}}'::numeric[]",
        "select '{{a,b},{c,d}}'::varchar(1)[]",
        "select '{{{{{{{1}}}}}}}'::int[]",
        "select array[[1,2],[3,4]]",
        "select array[[1,2],[3]]",
        "select array[array[1,2],array[3]]",
        "select array[array[]::int[], array[]::int[]]",
        "select array[array[1], null]",
        "select array[null::int[], null::int[]]",
        "select array[[1,2],[3,4]] = '{{1,2},{3,4}}'",
        "select array[[1,2]] || array[3,4]",
        "select array[1,2] || array[[3,4]]",
        "select array_cat(array[[1,2]], array[3,4])",
        "select array[[1,2]] || array[[3,4]]",
        "select array[[1,2]] || array[[3,4,5]]",
        "select array[[1,2]] || array[3,4,5]",
        "select array[[1,2]] || null::int[]",
        "select array[]::int[] || array[[1,2]]",
        "select array[[[1]]] || array[1]",
        "select array[1] || '{2,3}'",
        "select array_to_string(array[['a',null],['b','c']], ',', '*')",
        "select (array[[1,2,3],[4,5,6]])[2][1], (array[[1,2,3],[4,5,6]])[2], (array[[1,2,3],[4,5,6]])[3][1]",
        "select (array[[1,2],[3,4]])[-1][1], (array[[1,2],[3,4]])[1][-1], (array[[1,2],[3,4]])[1][1][1]",
        "select (array[1,2,3])[0], (array[1,2,3])[-1], (array[1,2,3])[4], (array[1,2,3])[null]",
        "select (array[1,2,3])[-1:2], (array[1,2,3])[2:1], (array[1,2,3])[0:5], (array[1,2,3])[:2], (array[1,2,3])[2:], (array[1,2,3])[-3:-1]",
        "select array[[1,2],[3,4]] < array[[1,2],[3,5]], array[[1,2]] < array[[1],[2]], array[[1,null]] > array[[1,2]]",
        "select array[[1,2,3]] < array[[1,2],[3,4]], array[[1,2]] >= array[[1,2]]",
        "select min(a), max(a) from (values (array[[1,2,3]]), (array[[1,2],[3,4]]), (null), (array[[0,9]])) v(a)",
        "select a from (values (array[[1,2,3]]), (array[[1,2],[3,4]]), (array[[1,2]])) v(a) order by a",
        "select a from (values (array[[1,2,3]]), (array[[1,2],[3,4]]), (array[[1,2]])) v(a) order by a desc",
        "select array_agg(a) from (values (array[[1,2]]), (array[[3,4]])) v(a)",
        "select array_agg(a) from (values (array[[1,2]]), (array[[3]])) v(a)",
        "select array_agg(a) from (values (array[[[1,2]]]), (array[[[3],[4]]])) v(a)",
    ])  # fmt: skip
    _refused(clients, [
        "select array[[1,2],[3,4]]::text",
        "select (array[[1,2,3],[4,5,6]])[1:2][2:3]",
        "select '{{1.5,2},{3,4}}'::numeric[]",
        "select array[[1,2]] = array[1,2]",
        "select a from (values (array[[1,2,3]])) v(a) order by 1",
    ])  # fmt: skip


def test_lake_keeps_refusing_multidimensional_storage(clients: tuple[Client, Client]) -> None:
    _, got = clients
    got("create table if not exists arr_md (a int[])")
    assert got("insert into arr_md values ('{{1,2},{3,4}}')")[:2] == ("error", "0A000")
    assert got("insert into arr_md values (array[[1,2],[3,4]])")[:2] == ("error", "0A000")
    assert got("insert into arr_md (a[1][1]) values (1)")[:2] == ("error", "0A000")
    assert got("select count(*) from arr_md")[2] == [(0,)]
    got("create table if not exists arr_md2 (a int[])")
    assert got("insert into arr_md2 values (array[1])") == ("done", "INSERT 0 1")
    assert got("update arr_md2 set a = array[[1,2]]")[:2] == ("error", "0A000")
    assert got("insert into arr_md2 select array_fill(1, array[2,2])")[:2] == ("error", "0A000")
    assert got("select a from arr_md2")[2] == [([1],)]


def test_regression_corners(clients: tuple[Client, Client]) -> None:
    """Cases from arrays.sql: NULL arrays typed by the other argument, a subquery argument,
    anycompatible's promotion to the array's type, quoted thresholds, a cast's element type
    reading ARRAY[…]'s quoted elements, more subscripts than MAXDIM."""
    _same(clients, [
        "SELECT array_positions(NULL, 10)",
        "SELECT array_positions(NULL, NULL::int)",
        "SELECT array_remove(NULL, 10), array_replace(NULL, 'a'::text, 'b')",
        "SELECT array_length(array_positions(ARRAY(SELECT 'AAAAAAAAAAAAAAAAAAAAAAAAA'::text || i % 10"
        " FROM generate_series(1,100) g(i)), 'AAAAAAAAAAAAAAAAAAAAAAAAA5'), 1)",
        "select array_remove(array[1.0, 2.1, 3.3], 1)",
        "select array_remove(array[1,2]::int8[], 1)",
        "select array_fill(1, array[[1,2],[3,4]])",
        "select array_remove(array[1,2,3], (select 2))",
        "select array_fill((select 3), array[2,2])",
        "select ARRAY[1, 3, 9, 'NaN', 'NaN']::float8[]",
        "select width_bucket(op, ARRAY[1, 3, 9, 'NaN', 'NaN']::float8[]) from (values (-5.2::float8), (4), (77), ('NaN')) v(op)",
        "SELECT width_bucket(5, '{}')",
        "SELECT width_bucket('5'::text, ARRAY[3, 4]::integer[])",
        "SELECT ('{}'::int[])[1][2][3][4][5][6][7]",
        "SELECT ('{{{1},{2},{3}},{{4},{5},{6}}}'::int[])[1][NULL][1]",
        "SELECT ARRAY[[[[[['hello'],['world']]]]]]",
        "select array[[1]]||array[[2]]||array[[3]]||array[[4]]||array[[5]]||array[[6]]||array[[7]]||array[[8]]||array[[9]]||array[[10]]",
        "select array_remove(array_remove(array_remove(array_remove(array_remove(array[1,2,3,4,5,6], 1), 2), 3), 4), 5)",
        "select * from unnest(array_remove(array[1,2,3], 2)) with ordinality as u(a, b)",
        "select * from unnest(array[1,2] || array[3]) with ordinality",
        "select * from (values (array[1,2]), (array[3])) v(a), lateral unnest(array_remove(a, 2)) with ordinality",
        "select * from generate_series(1, array_length(array[1,2,3], 1))",
    ])  # fmt: skip
    _refused(clients, ["select array_remove(array[1,2], 1::int8)", "SELECT width_bucket(now(), array['yesterday', 'today', 'tomorrow']::timestamptz[])"])
