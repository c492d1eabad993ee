"""Operators and branches between values of different types resolve as PostgreSQL's parse
analysis resolves them (make_op, select_common_type, the coercion of untyped literals),
never as DuckDB's binder would: ``1 = '1'::text`` is 42883, ``COALESCE(1, true)`` 42804,
``VALUES (1), ('1.5')`` reads '1.5' as an integer (22P02) rather than rounding it, and the
type a client is told (RowDescription) is the one PostgreSQL reports.

Each statement runs on a real PostgreSQL 15 and on the proxy. The matrices pair a value of
every common type with every other: the proxy must answer exactly as PostgreSQL does, or
refuse — an answer PostgreSQL would not give is the failure this file exists for. The
curated list below must match exactly (errors by SQLSTATE and message)."""

from __future__ import annotations

import itertools
import uuid

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import Client, refused_where_postgres_answers, same_answers
from tests.proxy import ProxyProcess, ProxyServer

#: One value of each type (a quoted literal is PostgreSQL's unknown).
VALUES = {
    "int2": "1::int2", "int4": "1", "int8": "1::int8", "numeric": "1.5", "float4": "1.5::float4",
    "float8": "1.5::float8", "text": "'1'::text", "varchar": "'1'::varchar", "bpchar": "'1 '::char(2)",
    "bool": "true", "date": "'2020-01-01'::date", "time": "'10:00'::time",
    "timestamp": "'2020-01-01 10:00'::timestamp", "timestamptz": "'2020-01-01 10:00+00'::timestamptz",
    "interval": "'1 day'::interval", "bytea": "'\\x01'::bytea",
    "uuid": "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid", "jsonb": "'1'::jsonb", "int4[]": "ARRAY[1]",
}  # fmt: skip
#: Untyped literals that read differently as each type (or not at all).
LITERALS = ["'1'", "'1.5'", "'x'", "'2020-01-01'", "'1 day'", "'{1}'", "'99999'"]


def _operators() -> list[str]:
    pairs = itertools.product(VALUES.values(), repeat=2)
    return [f"SELECT {a} {op} {b}" for a, b in pairs for op in ("=", "+")]


def _branches() -> list[str]:
    out = []
    for a, b in itertools.product([*VALUES.values(), "'1'", "NULL"], repeat=2):
        # (CASE and GREATEST share COALESCE's resolution, set operations VALUES')
        out += [f"SELECT COALESCE({a}, {b})", f"SELECT x FROM (VALUES ({a}), ({b})) v(x)"]
    return out


def _literals() -> list[str]:
    out = []
    for v, lit in itertools.product(VALUES.values(), LITERALS):
        out += [f"SELECT {v} = {lit}", f"SELECT {lit} + {v}", f"SELECT {v} IN ({lit}, {lit})"]
    return out


#: pg_catalog functions over arguments of every type: a call PostgreSQL has no overload
#: for is its 42883 (``length(ARRAY[1])``, ``to_hex(1.5)``), not DuckDB's cast.
FUNCTIONS = ["length", "upper", "abs", "round", "sqrt", "md5", "reverse", "ascii", "to_hex", "quote_ident",
             "bit_length", "cardinality", "isfinite", "jsonb_typeof", "array_to_string", "lpad", "substr",
             "left", "repeat", "power", "date_part", "split_part"]  # fmt: skip


def _functions() -> list[str]:
    out = []
    for f, v in itertools.product(FUNCTIONS, [*VALUES.values(), "'a'"]):
        out += [f"SELECT {f}({v})", f"SELECT {f}({v}, 1)"]
    return out


def _silent_differences(proxy: ProxyServer, pg15: PgCluster, statements: list[str]) -> list[str]:
    """The statements the proxy answers where PostgreSQL answers otherwise or refuses; a
    refusal is not silent (the curated list below holds the SQLSTATEs to)."""
    ref = Client(pg15.dsn(dbname=pg15.new_database("types")))
    got = Client(proxy.dsn())
    out = []
    try:
        for sql in statements:
            want, have = ref(sql), got(sql)
            if have == want or have[0] == "error":  # (a refusal, whatever PostgreSQL said, is not silent)
                continue
            out.append(f"{sql}\n    PostgreSQL: {want!r}\n    proxy:      {have!r}")
    finally:
        ref.close()
        got.close()
    return out


@pytest.mark.parametrize(
    "statements", [_operators, _branches, _literals, _functions], ids=["operators", "branches", "literals", "functions"]
)
def test_no_answer_postgresql_would_not_give(proxy: ProxyServer, pg15: PgCluster, statements: object) -> None:
    assert callable(statements)
    silent = _silent_differences(proxy, pg15, statements())
    assert not silent, f"{len(silent)} statements differ silently:\n" + "\n".join(silent[:40])


#: Exact answers: errors by SQLSTATE and message, results by column type and value.
CURATED = [
    # make_op: no operator between the categories
    "SELECT 1 = '1'::text",
    "SELECT '1'::varchar < 2",
    "SELECT true = 1",
    "SELECT 1.5 = 'a'::text",
    "SELECT '1 day'::interval = 'a'::text",
    "SELECT 1 IN (1, 'a'::text)",
    "SELECT 1 = ANY (ARRAY['1'::text])",
    "SELECT NULLIF(1, 'a'::text)",
    "SELECT ARRAY[1] = ARRAY[1::int8]",
    "SELECT ARRAY[1] || ARRAY['a'::text]",
    "SELECT ARRAY[1] + ARRAY[1]",
    "SELECT ARRAY[1] + '{1}'",
    "SELECT true || ARRAY[1]",
    # select_common_type: the categories, the type chosen, the conversion
    "SELECT CASE WHEN true THEN 1 ELSE 'a'::text END",
    "SELECT COALESCE(1, true)",
    "SELECT GREATEST(1, 'a'::text)",
    "SELECT ARRAY[1, 'a'::text]",
    "SELECT 1 UNION SELECT 'a'::text",
    "SELECT x FROM (VALUES (1), ('a'::text)) v(x)",
    "SELECT COALESCE('10:00'::time, current_date)",
    "SELECT COALESCE(ARRAY[1], ARRAY['a'::text])",
    "SELECT CASE WHEN true THEN 'a'::char(3) ELSE 'b'::text END || '|'",
    "SELECT CASE WHEN true THEN 'a'::char(3) ELSE 'b'::varchar END || '|'",
    "SELECT CASE WHEN true THEN 'a'::text ELSE 'b'::char(2) END",
    "SELECT CASE WHEN true THEN 'x' END",
    "SELECT COALESCE(NULL, NULL)",
    "SELECT CASE WHEN true THEN 1.5 ELSE 2::float8 END, COALESCE(1, 2.5::float8), GREATEST(1.5, 2::float4)",
    "SELECT x FROM (VALUES (1), (2.5::float8)) v(x)",
    "SELECT x FROM (VALUES ('a'::char(3)), ('b'::text)) v(x)",
    "SELECT x FROM (SELECT 1 AS x UNION ALL SELECT 2.5 UNION ALL SELECT 3::float8) s ORDER BY 1",
    "SELECT 1::int8 || ARRAY[1], ARRAY[1] || 1.5::float8, 1.5::float4 || ARRAY[1]",
    # untyped literals read by the type they meet
    "SELECT COALESCE(1, '1.5')",
    "SELECT x FROM (VALUES (1), ('1.5')) v(x)",
    "SELECT 1 UNION ALL SELECT '2.5'",
    "SELECT true UNION ALL SELECT '1'",
    "SELECT '1 day'::interval UNION ALL SELECT '1'",
    "SELECT COALESCE(1::int2, '99999')",
    "SELECT 1 = '1.5'",
    "SELECT 1::int8 + '1.5'",
    "SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid = 'x'",
    "SELECT '1' IN ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid)",
    "CREATE TABLE lit (n numeric(10,2), ts timestamp(0), i int)",
    "INSERT INTO lit VALUES (1.56, '2020-01-01 10:00:00', 1)",
    "SELECT n = '1.555', n < '1.555', ts = '2020-01-01 10:00:00.4', i = '1', n IN ('1.555', '1.56') FROM lit",
    "SELECT n + '1.555', i + '1' FROM lit",
    # an INSERT's VALUES has no common type: each item is assigned to its column
    "CREATE TABLE ret (id int PRIMARY KEY, v text, c varchar(3), f float4)",
    "INSERT INTO ret (id, v) VALUES (1, 12345), (2, 1.5), (3, true), (4, 'x'), (5, NULL), (6, ARRAY[1, 2])",
    "INSERT INTO ret (id, c) VALUES (7, 'ab'), (8, 12345)",
    # RETURNING shows the value stored: a float8 result assigned to a float4 column
    "UPDATE ret SET f = 1.1::float4 * 2 WHERE id = 1 RETURNING f",
    "INSERT INTO ret (id, f) VALUES (2, 1) ON CONFLICT (id) DO UPDATE SET f = excluded.f * 1.1::float8 RETURNING f",
    "SELECT * FROM ret ORDER BY id",
    # literals beside a uuid column and an unconstrained numeric one (held as text)
    "CREATE TABLE gu (u uuid, n numeric)",
    "INSERT INTO gu VALUES ('11111111-1111-1111-1111-111111111111', 0.0), ('33333333-3333-3333-3333-333333333333', 2.50)",
    "SELECT count(*) FROM gu WHERE u < '22222222-2222-2222-2222-222222222222'",
    "SELECT count(*) FROM gu WHERE u = '{11111111-1111-1111-1111-111111111111}' OR u = 'X'",
    "SELECT n FROM gu WHERE n != '0.0' AND n = '2.5'",
    "SELECT 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
    # date and timestamp meeting each other
    "SELECT '2020-01-01'::date - '2020-01-01 10:00'::timestamp, '2020-01-01 10:00+00'::timestamptz - '2020-01-01 10:00'::timestamp",
    "SELECT octet_length('abc'::text), octet_length('ab '::char(5)), octet_length('é'), octet_length('ab '::varchar)",
    "SELECT length('ab'::bytea), octet_length('\\x0102'::bytea), bit_length('é')",
    # calls of pg_catalog functions no overload of which takes the arguments
    "SELECT length(ARRAY[1])",
    "SELECT to_hex(1.5)",
    "SELECT md5('{}'::jsonb)",
    "SELECT trim('{}'::jsonb)",
    "SELECT isfinite(1)",
    "SELECT cardinality('a')",
    "SELECT to_hex(1::int2)",
    "SELECT isfinite('a')",
    "SELECT length('a'::varchar), upper('a'::char(2)), to_hex(1::int2), round(1::int2), abs(1.5::float4)",
    # fields of an anonymous record (f1…fn), of a table's row, and of values that have none
    "SELECT (ROW(1, 'a'::text)).f1, (ROW(1, 'a'::text)).f2, (ROW(ARRAY[1], 2)).f1[1]",
    "SELECT (ROW(1, 2)).f3",
    "SELECT (ROW(NULL, 1)).f1",
    "SELECT ((ROW(ROW(1, 2), 3)).f1).f2",
    "SELECT (1).f1",
    "SELECT (ARRAY[1]).f1",
    "CREATE TABLE rowf (a int, b text)",
    "INSERT INTO rowf VALUES (1, 'x')",
    "SELECT (rowf).a, (r.*).b FROM rowf, rowf r",
    # time meeting interval: compared as intervals
    "SELECT '10:00'::time = '10 hours'::interval, '1 day'::interval > '23:00'::time, '10:00'::time IN ('10 hours'::interval)",
    # a recursive CTE typed by its non-recursive term
    "WITH RECURSIVE t(n) AS (SELECT '7' UNION ALL SELECT n + 1 FROM t WHERE n < 10) SELECT n FROM t",
    "WITH RECURSIVE t(i) AS (SELECT 1 UNION ALL SELECT (i + 1)::bigint FROM t WHERE i < 3) SELECT i FROM t",
    "WITH RECURSIVE t(n, s) AS (SELECT 1, 'a' UNION ALL SELECT n + 1, s || 'b' FROM t WHERE n < 4) SELECT * FROM t",
    "WITH RECURSIVE t(j) AS (WITH RECURSIVE s(i) AS (VALUES (1) UNION ALL SELECT i + 1 FROM s WHERE i < 3) "
    "SELECT i FROM s UNION ALL SELECT j + 1 FROM t WHERE j < 5) SELECT * FROM t",
    # interval_div, format()'s numbering, a literal AT TIME ZONE, generate_series' types
    "SELECT interval '41 mon 12 days 360:00' / 10, interval '1 mon 1 day' / 7.0, interval '-1 day 2 hours' / -3, interval '1 day' / 2::int8",
    "SELECT interval '1 day' / 0",
    "SELECT format('Hello %s %1$s %s', 'World', 'Hello again'), format('%2$s %s|%-3s|', 'a', 'b', 'c')",
    "SELECT '19970210 173201' AT TIME ZONE 'America/New_York'",
    "SELECT x, g FROM generate_series(1, 3) x, generate_series(1, 2) WITH ORDINALITY AS o(g, n) WHERE n = 1",
    "SELECT generate_series(1, 2), generate_series(1::int8, 2)",
    "SELECT * FROM generate_series(1::int2, 2::int2)",
    # a zero step is 22023 in the select list as in FROM (DuckDB's list form was empty)
    "SELECT generate_series(1, 3, 0)", "SELECT * FROM generate_series(1, 3, 0)",
    "SELECT generate_series(timestamp '2020-01-01', timestamp '2020-01-02', interval '0 days')",
    "SELECT generate_series(timestamptz '2020-01-01', timestamptz '2020-01-02', interval '1 month -30 days')",
    "SELECT generate_series('2020-01-01', '2020-01-03', interval '1 day')",
    # an unknown step takes the series' type; numeric series in the select list
    "SELECT count(*) FROM generate_series(timestamptz '2020-01-01', '2020-01-05', '1 day')",
    "SELECT generate_series(1, 5, '2'), generate_series(1::int8, 5, '2')", "SELECT generate_series(1, 5, '2.5')",
    "SELECT generate_series(1.5, 5, 1.5), generate_series(1.5, 4)", "SELECT generate_series(1.0, 2.0, 0.0)",
    # casts between time and interval, a date's range on its way to a timestamp, to_timestamp(float8)
    "SELECT time '10:30:15.5'::interval, time '00:00'::interval, time '23:59:59.999999'::interval",
    "SELECT interval '1 day 02:00'::time, interval '-3 hours'::time, interval '27:30'::time, interval '1 mon'::time",
    "SELECT '2202020-10-05'::date::timestamp", "SELECT '294277-01-01'::date::timestamptz",
    "SELECT 'infinity'::date::timestamp::text, '-infinity'::date::timestamptz::text, '2020-02-29'::date::timestamp",
    "SELECT to_timestamp('Infinity'::float8)::text, to_timestamp('-Infinity'::float8)::text, to_timestamp(0), to_timestamp(1284352323.5)",
    "SELECT to_timestamp(-1.000001), to_timestamp(1.5::numeric), to_timestamp(-210866803200)::text",
    "SELECT to_timestamp(1e20)", "SELECT to_timestamp('NaN'::float8)",
    # xid input as PostgreSQL 15's strtoul reads it; xid has = and <> only; name's 63 bytes
    "SELECT '010'::xid, '010'::xid8, '0x10'::xid, ' 12'::xid, '4294967296'::xid, '-1'::xid, 'abc'::xid, '-1'::xid8",
    "SELECT '1'::xid = 1, '1'::xid <> '2'::xid, '1'::xid = '1'::xid", "SELECT '1'::xid < '2'::xid", "SELECT '1'::xid + 1",
    "SELECT max(x) FROM (VALUES ('1'::xid)) v(x)", "SELECT x FROM (VALUES ('1'::xid)) v(x) ORDER BY x",
    "SELECT count(DISTINCT x) FROM (VALUES ('1'::xid), ('1'::xid)) v(x)", "SELECT '1'::xid::bigint", "SELECT '1'::xid8::bigint",
    "SELECT '1'::xid::text::bigint, '1'::xid8::xid, count(DISTINCT '1'::xid::text)",
    "SELECT length(repeat('x', 70)::name), length(repeat('é', 40)::name), repeat('ab', 40)::name, 'abc'::name",
    # pg_lsn compares, sorts, and takes min/max as the number it is; its input is checked and normalised
    "SELECT f FROM (VALUES ('0/10'::pg_lsn), ('0/9'::pg_lsn), ('A/1'::pg_lsn), ('1/0'::pg_lsn)) v(f) ORDER BY f",
    "SELECT '0/10'::pg_lsn > '0/9'::pg_lsn, max(x), min(x) FROM (VALUES ('0/10'::pg_lsn), ('0/9'::pg_lsn)) v(x)",
    "SELECT '0/0A'::pg_lsn = '0/A'::pg_lsn, '0/0a'::pg_lsn, 'ab/cd'::pg_lsn, '0/10'::pg_lsn >= '0/9', '0/9' < '0/10'::pg_lsn",
    "SELECT DISTINCT x FROM (VALUES ('0/a'::pg_lsn), ('0/A'::pg_lsn)) v(x)", "SELECT ('0/' || 'ff')::pg_lsn",
    "SELECT 'G/0'::pg_lsn", "SELECT ('x' || 'y')::pg_lsn", "SELECT '123456789/0'::pg_lsn",
    "SELECT pg_current_wal_lsn() > '0/0', pg_current_wal_lsn() >= pg_current_wal_lsn()",
    "SELECT '0/10'::pg_lsn - '0/9'::pg_lsn, '0/9'::pg_lsn - '0/10', 'FFFFFFFF/FFFFFFFF'::pg_lsn - '0/0'::pg_lsn",
    "SELECT pg_wal_lsn_diff('FFFFFFFF/FFFFFFFF', '0/0'), pg_wal_lsn_diff('0/9', '0/10')",
    "SELECT '0/10'::pg_lsn + 16, '0/10'::pg_lsn - 16, 16 + '0/10'::pg_lsn, '0/10'::pg_lsn + 1.5, '0/10'::pg_lsn - 1.5",
    "SELECT '0/10'::pg_lsn - 17", "SELECT 'FFFFFFFF/FFFFFFFF'::pg_lsn + 1", "SELECT 16 - '0/10'::pg_lsn",
    # pg_lsn(numeric): rounded half away from zero; 0A000 for NaN and the infinities, 22023 outside
    "SELECT pg_lsn(1.5::numeric), pg_lsn(2.5), pg_lsn(-0.4), pg_lsn(23783416::numeric), pg_lsn(18446744073709551615::numeric), pg_lsn(7)",
    "SELECT pg_lsn(-1::numeric)", "SELECT pg_lsn(18446744073709551616::numeric)", "SELECT pg_lsn('NaN'::numeric)",
    "SELECT pg_lsn('-Infinity'::numeric)", "SELECT pg_lsn(1e30)", "SELECT pg_lsn(-0.5)", "SELECT pg_lsn(1.5::float8)",
    "SELECT pg_lsn(x) FROM (VALUES (1.0), (2.0), (NULL)) v(x)", "SELECT pg_lsn('12')", "SELECT pg_lsn('1/2')",
    "SELECT '0/10'::pg_lsn + 1.5::float8", "SELECT pg_typeof('0/10'::pg_lsn - '0/9'::pg_lsn), pg_typeof('0/10'::pg_lsn + 1)",
    # c.f of a row-valued column c is a table c's column for PostgreSQL (42P01); (c).f its field
    "SELECT t.a FROM (SELECT t FROM rowf t) s", "SELECT (t).a FROM (SELECT t FROM rowf t) s",
    # errors DuckDB's binder finds, as PostgreSQL words them
    "SELECT b FROM rowf, rowf r",
    "SELECT 1 FROM rowf WHERE row_number() OVER () < 10",
    "SELECT x.a FROM rowf",
    "UPDATE rowf SET a = v.* FROM (VALUES (1, 2)) v(i, j)",
    # an aggregate's arguments are computed only for the rows its FILTER lets in
    "CREATE TABLE aggf (a int, b numeric, c float8, t text, j jsonb)",
    "INSERT INTO aggf VALUES (1, 1.5, 2.5, 'x', '{\"a\": 1}'), (2, 0, 0, 'y', '[1]'), (3, NULL, NULL, NULL, NULL), (0, 2, 4, 'z', '2')",
    "SELECT sum(1/a) FILTER (WHERE a > 0), count(1/a) FILTER (WHERE a <> 0), avg(10/a) FILTER (WHERE a > 0) FROM aggf",
    "SELECT sum(b/a) FILTER (WHERE a > 0), min(c/a) FILTER (WHERE a <> 0), max(1/b) FILTER (WHERE b <> 0) FROM aggf",
    "SELECT string_agg(t || (1/a)::text, ',' ORDER BY a) FILTER (WHERE a > 0), array_agg(1/a ORDER BY a) FILTER (WHERE a > 0) FROM aggf",
    "SELECT json_agg(1/a) FILTER (WHERE a > 0), jsonb_agg(1/a) FILTER (WHERE a > 0), count(DISTINCT 1/a) FILTER (WHERE a > 0) FROM aggf",
    "SELECT jsonb_object_agg(t, 1/a) FILTER (WHERE a > 1) FROM aggf WHERE t IS NOT NULL",
    "SELECT a, sum(1/a) FILTER (WHERE a > 0) OVER (ORDER BY a) FROM aggf ORDER BY a",
    "SELECT sum(1/a) FILTER (WHERE a > 0) FROM aggf GROUP BY a % 2 ORDER BY 1",
    # a CASE or COALESCE of unconstrained numeric values is numeric to its aggregates
    "SELECT sum(CASE WHEN a > 0 THEN b END), max(CASE WHEN a > 0 THEN b END), sum(COALESCE(b, 0)), avg(COALESCE(b, 0)) FROM aggf",
    "SELECT CASE WHEN a > 0 THEN b ELSE c::numeric END AS v FROM aggf ORDER BY v",
    # JOIN … USING columns of different types: PostgreSQL's merged column (buildMergedJoinVar)
    "CREATE TABLE using1 (f1 int, x int)",
    "CREATE TABLE using2 (f1 bigint, y int)",
    "CREATE TABLE using3 (k varchar(5), a int)",
    "CREATE TABLE using4 (k varchar(7), b int)",
    "INSERT INTO using1 VALUES (1, 1), (2, 2)",
    "INSERT INTO using2 VALUES (1, 10), (3, 30)",
    "INSERT INTO using3 VALUES ('a', 1)",
    "INSERT INTO using4 VALUES ('a', 2)",
    "SELECT f1, pg_typeof(f1) FROM using1 JOIN using2 USING (f1)",
    "SELECT f1, pg_typeof(f1) FROM using1 LEFT JOIN using2 USING (f1) ORDER BY 1",
    "SELECT f1, pg_typeof(f1) FROM using1 RIGHT JOIN using2 USING (f1) ORDER BY 1",
    "SELECT f1, pg_typeof(f1) FROM using1 FULL JOIN using2 USING (f1) ORDER BY 1",
    "SELECT using1.f1 FROM using1 LEFT JOIN using2 USING (f1) GROUP BY f1",
    "SELECT using1.f1 FROM using1 JOIN using2 USING (f1) GROUP BY f1",
    "SELECT using2.f1 FROM using2 LEFT JOIN using1 USING (f1) GROUP BY f1 ORDER BY 1",
    "SELECT using2.f1 FROM using1 RIGHT JOIN using2 USING (f1) GROUP BY f1 ORDER BY 1",
    "SELECT f1, count(*) FROM using1 FULL JOIN using2 USING (f1) GROUP BY f1 ORDER BY 1",
    "SELECT max(using1.f1) FROM using1 FULL JOIN using2 USING (f1) GROUP BY f1 ORDER BY 1",
    "SELECT using1.f1 FROM using1 JOIN using2 USING (f1) GROUP BY f1, using1.f1",
    "SELECT k, pg_typeof(k) FROM using3 JOIN using4 USING (k)",
    "SELECT using3.k FROM using3 JOIN using4 USING (k) GROUP BY k",
    # row locks PostgreSQL cannot take (CheckSelectLocking)
    "SELECT min(f1) FROM using1 FOR UPDATE",
    "SELECT count(*) OVER () FROM using1 FOR SHARE",
    "SELECT count(*) FROM using1 FOR NO KEY UPDATE",
    "SELECT (SELECT min(f1) FROM using1) FROM using1 FOR UPDATE",
    # timestamptz + interval: the months, then the days, then the time
    "SELECT timestamptz '1999-12-01 00:00+00' + interval '1 month -1 second', timestamptz '2000-01-31 12:00+00' + interval '1 month 2 days -30 hours'",
    "SELECT timestamptz '2000-01-01 00:00+00' + NULL::interval, NULL::timestamptz - interval '1 day', NULL::interval + now()",
    # a call of a type's name is the cast to it; a cast pg_cast lacks is 42846 (42883 as a call)
    "SELECT date(timestamp '2020-01-02 03:04:05'), date('2020-01-02'), date(now()) = current_date",
    "SELECT int4(2.5), int4(-2.5), int4('7'), int4(true), int2(5), int8(7.5), int8('9')",
    "SELECT text(1), text(true), text(1.50), text(date '2020-01-01'), bool('t'), bool(1), bool('no')",
    "SELECT float8(1), float4(2.5), float8('1e3'), name(1), oid(5), uuid('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')",
    "SELECT jsonb('{\"b\": 2, \"a\": 1}'), bytea('\\x01'), pg_catalog.int4(3.7)",
    "SELECT int4(date '2020-01-01')",
    "SELECT date(1)",
    "SELECT int4(1, 2)",
    "SELECT date '2020-01-01'::int4",
    "SELECT 1::date",
    "SELECT uuid 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::bytea",
    "SELECT true::float8",
    "SELECT interval '1 day'::int8",
    # a uuid column beside a cast, a literal or NULL::uuid (Django's Coalesce(uuid, Value(…)))
    "CREATE TEMP TABLE tr_u (u uuid)",
    "INSERT INTO tr_u VALUES (NULL), ('8532a4cd-02bd-4193-9abc-61474193ea5e')",
    "SELECT coalesce(u, NULL::uuid) FROM tr_u",
    "SELECT coalesce(u, '00000000-0000-0000-0000-000000000000') FROM tr_u",
    "SELECT coalesce(u, '00000000-0000-0000-0000-000000000000'::uuid) FROM tr_u",
    "SELECT CASE WHEN u IS NULL THEN '00000000-0000-0000-0000-000000000000'::uuid ELSE u END FROM tr_u",
    "SELECT greatest(u, NULL::uuid), least(u, 'ffffffff-0000-0000-0000-000000000000') FROM tr_u",
    # an operator name pg_operator does not have (it was a syntax error, or DuckDB's words)
    "SELECT 1 @#@ 2",
    "SELECT @#@ 24",
    "SELECT 1 <<<>>> 2",
    "SELECT 'a' @#@ 'b'",
    "SELECT 1 @#@ ANY (ARRAY[1, 2])",
    "SELECT u @#@ u FROM tr_u",
    "SELECT 1 OPERATOR(pg_catalog.+) 2, |/ 16.0, 2 ^ 3",
    # oid and xid through their input functions (DuckDB's "Could not convert string" before)
    "SELECT '-1'::oid, ' 12 '::oid, '+7'::oid, '-2147483648'::oid",
    "SELECT 'abc'::oid",
    "SELECT ''::oid",
    "SELECT x::oid FROM (VALUES ('12'), (' -1 '), ('4294967295')) v(x)",
    "SELECT x::oid FROM (VALUES ('4294967296')) v(x)",
    "SELECT x::oid FROM (VALUES ('-2147483649')) v(x)",
    "SELECT x::oid FROM (VALUES ('1.5')) v(x)",
    "SELECT x::xid FROM (VALUES ('12'), ('abc'), (' -1'), ('99999999999999999999999'), ('7z'), (''), ('+3')) v(x)",
    "SELECT '5'::xid, typname::text::oid IS NULL FROM pg_type WHERE false",
    # ORDER BY the position of a numeric or jsonb column a * gave (an internal error before)
    "CREATE TEMP TABLE tr_n (a text, c numeric, j jsonb)",
    """INSERT INTO tr_n VALUES ('x', 2.50, '{"b": 1}'), ('y', 10, '[1]'), ('z', -1.5, 'null')""",
    "SELECT a || '!' AS x, * FROM tr_n ORDER BY 3 DESC",
    "SELECT * FROM tr_n ORDER BY 2",
    "SELECT tr_n.*, 1 AS one FROM tr_n ORDER BY 3, 2",
    # untyped literals compared with oid, xid and reg* values: oid's (or xid's) input, or
    # in a list of several the left side's type's
    "SELECT typname FROM pg_type WHERE oid::regclass IN ('pg_type', 'pg_class') ORDER BY 1",
    "SELECT typname FROM pg_type WHERE oid::regtype IN ('int4', 'text') ORDER BY 1",
    "SELECT typname FROM pg_type WHERE oid::regtype IN ('int4', 'nope')",
    "SELECT typname FROM pg_type WHERE oid::regtype NOT IN ('int4') AND oid = 25",
    "SELECT typname FROM pg_type WHERE oid::regtype = 'int4'",
    "SELECT typname FROM pg_type WHERE 'x' = oid::regtype",
    "SELECT typname FROM pg_type WHERE oid = 'abc'",
    "SELECT typname FROM pg_type WHERE oid IN ('23', '25') ORDER BY 1",
    "SELECT typname FROM pg_type WHERE oid = '-1'",
    "SELECT '5'::xid = '5', '5'::xid IN ('5', '6'), '5'::xid = 'abc'",
    # a subscript of a value of a type without subscripting (DuckDB's array_extract before)
    "SELECT (now())[1]",
    """SELECT ('{"a": 1}'::json)['a']""",
    "SELECT ('0/10'::pg_lsn)[1]",
    # more slice subscripts than a one-dimensional array has dimensions: an empty array
    "SELECT ('{1,2,3}'::int[])[1:2][2], ('{1,2,3}'::int[])[1:1][NULL] IS NULL, (NULL::int[])[1:2][1] IS NULL,"
    " ('{}'::int[])[1:2][1], ('{a,b}'::text[])[2][1:1]",
    # a set-returning function's fields in a SELECT list, written twice, ordered by output columns
    """SELECT id, (json_each(j)).key, (json_each(j)).value FROM (VALUES (1, '{"a":1,"b":2}'::json), (0, '{"c":3}'::json)) v(id, j) ORDER BY 2""",
    """SELECT id, (json_each(j)).key AS k FROM (VALUES (1, '{"a":1,"b":2}'::json), (0, '{"c":3}'::json)) v(id, j) ORDER BY k DESC""",
    # SEARCH and CYCLE clauses checked as parse_cte.c checks them (then refused: see below)
    "with recursive t(x) as (select 1 union all select x + 1 from t where x < 3) search depth first by foo set y select * from t",
    "with recursive t(x) as (select 1 union all select x + 1 from t where x < 3) search depth first by x, x set y select * from t",
    "with recursive t(x) as (select 1 union all select x + 1 from t where x < 3) cycle x set c using c select * from t",
    "with recursive t(x) as (select 1 union all select x + 1 from t where x < 3) search depth first by x set s cycle x set s using p select * from t",
    "with recursive t(x) as (select 1) search depth first by x set s select * from t",
    # a catalog regproc column as the function's OID
    "SELECT typinput::oid, typinput::oid::regprocedure, typoutput::regprocedure, typinput::int8 FROM pg_type WHERE oid IN (23, 1007, 3802) ORDER BY oid",
]


def test_types_resolve_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("types")), CURATED).close()


def test_syntax_postgresql_takes_is_refused_by_name(proxy: ProxyServer, pg15: PgCluster) -> None:
    """What PostgreSQL 15's grammar takes and the proxy does not serve is 0A000 naming it,
    not the 42601 syntax error DuckDB's parser gave (or its own binder's words)."""
    ref, got = Client(pg15.dsn(dbname=pg15.new_database("refused"))), Client(proxy.dsn())
    try:
        refused_where_postgres_answers(got, ref, [
            "with recursive t(x) as (select 1 union all select x + 1 from t where x < 3) search depth first by x set y select * from t",
            "with recursive t(x) as (select 1 union all select x + 1 from t where x < 3) cycle x set c using p select * from t",
            "select a, count(*) from (values (1), (2)) v(a) group by distinct rollup(a)",
            "select rank(2) within group (order by a) from (values (1), (3)) v(a)",
            "select percent_rank(2, 1) within group (order by a desc, a) from (values (1), (3)) v(a)",
            """select (json_each(j)).key from (values (1, '{"a":1}'::json)) v(id, j) order by id""",
        ])  # fmt: skip
        for c in (ref, got):
            c("create temp table cur_t (a int)")
            c("begin")
            c("declare c1 cursor for select * from cur_t for update")
        for sql in ("delete from cur_t where current of c1", "update cur_t set a = 1 where current of c1"):
            assert ref(sql)[:2] == ("error", "24000")  # (not positioned on a row: the grammar took it)
            assert got(sql)[:2] == ("error", "0A000")
            for c in (ref, got):
                c("rollback")
                c("begin")
                c("declare c1 cursor for select * from cur_t for update")
        assert got("select (row(1, 2.0)).*") == ref("select (row(1, 2.0)).*")
    finally:
        ref.close()
        got.close()


def test_untyped_parameters_take_the_type_they_meet(proxy: ProxyServer, pg15: PgCluster) -> None:
    """A psycopg ``str`` parameter is sent untyped, as a literal is written: it takes the
    type of the value it meets, with that type's errors."""
    for dsn in (proxy.dsn(), pg15.dsn()):
        with psycopg.connect(dsn, autocommit=True) as c:
            assert c.execute("SELECT 1 = %s, %s = 'a'::text, COALESCE(%s, 2)", ("1", "a", "3")).fetchone() == (True, True, 3)
            zero = uuid.UUID(int=0)
            assert c.execute("SELECT COALESCE(NULL::uuid, %s), GREATEST(%s, 'ffffffff-0000-0000-0000-000000000000'::uuid)", (zero, zero)).fetchone() == (
                zero, uuid.UUID("ffffffff-0000-0000-0000-000000000000"),
            )
            with pytest.raises(psycopg.errors.InvalidTextRepresentation):
                c.execute("SELECT 1 = %s", ("1.5",))


#: Statements a driver prepares with unspecified parameters, each typed by its context as
#: PostgreSQL's parse analysis types it (ParameterDescription and RowDescription compared).
DESCRIBED = [
    "SELECT $1::int", "SELECT $1", "SELECT $1 + 1", "SELECT $1 || 'a'", "SELECT $1 = 1.5",
    "SELECT $1 UNION SELECT '2020-01-01'::date", "SELECT COALESCE($1, now())", "SELECT CASE WHEN $1 THEN 1 END",
    "SELECT 1 = ANY($1)", "SELECT 'a' = ANY($1)", "SELECT $1 = ANY(ARRAY[1, 2])", "SELECT $1 IN (1, 2)",
    "SELECT $1 BETWEEN 1 AND 2", "SELECT 'a' LIKE $1", "SELECT length($1)", "SELECT abs($1)", "SELECT round($1, 2)",
    "SELECT now() - $1", "SELECT now() + $1", "SELECT $1::date + 1", "SELECT NOT $1", "SELECT $1 AND true",
    "SELECT $1 LIMIT $2", "SELECT ARRAY[$1, 2]", "SELECT $1 @> ARRAY[1]", "SELECT generate_series(1, $1)",
    "SELECT x FROM generate_series(1, $1) x", "SELECT substr('abc', $1)", "SELECT greatest($1, 5)", "SELECT nullif($1, 5)",
    "SELECT x FROM (VALUES (1), ($1)) v(x)", "SELECT $1 * interval '1 day'", "SELECT 2 ^ $1", "SELECT encode($1, 'hex')",
    "SELECT ($1, 2) = (1, 2)", "SELECT 1 WHERE $1", "SELECT count(*) FILTER (WHERE $1)", "SELECT $1 || ARRAY[1]",
    "SELECT $1 IS TRUE", "SELECT date_trunc('day', $1::timestamp)", "SELECT to_char(now(), $1)",
]


def _described(dsn: str, sql: str) -> object:
    pg = psycopg.pq.PGconn.connect(dsn.encode())  # (libpq in blocking mode: Parse, then Describe)
    try:
        r = pg.prepare(b"", sql.encode())
        if r.status == psycopg.pq.ExecStatus.FATAL_ERROR:
            return ("error", r.error_field(psycopg.pq.DiagnosticField.SQLSTATE))
        d = pg.describe_prepared(b"")
        if d.status == psycopg.pq.ExecStatus.FATAL_ERROR:
            return ("error", d.error_field(psycopg.pq.DiagnosticField.SQLSTATE))
        return [d.param_type(i) for i in range(d.nparams)], [d.ftype(i) for i in range(d.nfields)]
    finally:
        pg.finish()


@pytest.mark.parametrize("sql", DESCRIBED)
def test_unspecified_parameters_are_typed_by_their_context(proxy_process: ProxyProcess, pg15: PgCluster, sql: str) -> None:
    """Parse with no parameter types, then Describe: each ``$n`` has the type PostgreSQL
    infers from where it stands (``$1 = ANY(ARRAY[1, 2])``: int4, ``now() + $1``:
    interval, ``WHERE $1``: bool), as drivers such as asyncpg and pgjdbc read it. (libpq's
    blocking calls hold the GIL: the proxy runs in a process of its own.)"""
    assert _described(proxy_process.dsn(), sql) == _described(pg15.dsn(), sql)


def test_asyncpg_binds_parameters_of_the_inferred_types(proxy: ProxyServer, pg15: PgCluster) -> None:
    """asyncpg encodes each argument by the type Describe reported: a Python int for
    ``generate_series(1, $1)``, a bool for ``WHERE $1``, bytes for ``encode($1, …)``."""
    import asyncio

    import asyncpg

    cases = [
        ("SELECT $1 = ANY(ARRAY[1, 2])", 1), ("SELECT x FROM generate_series(1, $1) x", 3), ("SELECT abs($1)", -1.5),
        ("SELECT $1 || ARRAY[1]", [2]), ("SELECT round($1, 2)", 1.234), ("SELECT encode($1, 'hex')", b"ab"),
        ("SELECT 2 ^ $1", 2.0), ("SELECT x FROM (VALUES (1), ($1)) v(x)", 5), ("SELECT 1 WHERE $1", True),
        ("SELECT now() - $1 > interval '0'", None),
    ]

    async def run(dsn: str) -> list[object]:
        info = psycopg.conninfo.conninfo_to_dict(dsn)
        c = await asyncpg.connect(host=info["host"], port=int(info["port"]), user=info["user"], database=info.get("dbname", "postgres"))
        try:
            return [[tuple(r) for r in await c.fetch(q, a)] for q, a in cases]
        finally:
            await c.close()

    assert asyncio.run(run(proxy.dsn())) == asyncio.run(run(pg15.dsn()))
