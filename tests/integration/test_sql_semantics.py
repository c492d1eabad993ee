"""Answers that must be PostgreSQL's, not merely plausible: statements where DuckDB's own
semantics would give a different result without an error. Each statement runs on a real
PostgreSQL 15 and on the proxy, over the same small tables, and must answer the same.
"""

from __future__ import annotations

import psycopg
from psycopg.types.string import TextLoader

from tests.pgcluster import PgCluster
from tests.pgcompare import Client, raw_outcome, same_answers
from tests.proxy import ProxyServer


def _same_answers(proxy: ProxyServer, pg15: PgCluster, statements: list[str]) -> Client:
    return same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("sem")), statements)


#: character(n): stored with its padding, which bpchar's comparisons and its cast to text
#: (what every text function and operator receives) ignore, and pattern matching sees.
CHARACTER_N = [
    "CREATE TABLE c (x char(5), y varchar(5), z text)",
    "INSERT INTO c VALUES ('ab', 'ab', 'ab '), ('cd', 'cd ', 'cd')",
    "SELECT x, y, z FROM c ORDER BY x",
    "SELECT x || '|', y || '|', z || '|' FROM c ORDER BY 1",
    "SELECT x = 'ab', x = 'ab   ', x < 'ab ', x > 'ab' FROM c ORDER BY x",
    "SELECT count(*) FROM c WHERE x = 'ab'",
    "SELECT x FROM c WHERE x = 'ab  '::char(5)",
    "SELECT x FROM c WHERE x = y ORDER BY x",
    "SELECT x FROM c WHERE x = z ORDER BY x",
    "SELECT x FROM c WHERE x IN ('ab', 'zz')",
    "SELECT x FROM c WHERE x BETWEEN 'aa' AND 'ab'",
    "SELECT x = ANY('{ab,cd}'), x = ANY('{\"ab  \"}'), x = ANY(ARRAY['ab']) FROM c ORDER BY x",
    "SELECT x IN (SELECT y FROM c), y IN (SELECT x FROM c) FROM c ORDER BY x",
    "SELECT CASE x WHEN 'ab' THEN 1 ELSE 0 END FROM c ORDER BY x",
    "SELECT upper(x) || '|', length(x), x::text || '|', x::varchar || '|' FROM c ORDER BY x",
    "SELECT x LIKE 'ab', x LIKE 'ab%', x ~ 'b$', x NOT LIKE 'ab' FROM c ORDER BY x",
    "SELECT concat(x, '|'), format('%s|', x) FROM c ORDER BY x",
    "SELECT string_agg(x, ',' ORDER BY x) || '|', max(x) || '|' FROM c",
    "SELECT coalesce(x, 'q') || '|' FROM c ORDER BY x",
    "SELECT char(20) 'characters' || ' and text', text 'text' || char(20) ' and characters'",
    "SELECT 'ab'::char(5) IN ('ab', 'x'), 'ab'::char(5) = 'ab'::varchar, 'ab'::char(5) = 'ab '::text",
]


def test_character_n_compares_and_converts_as_postgresql_does(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, CHARACTER_N).close()


#: format(): NULL prints as nothing, values by their output function (bool as t), positions
#: and widths as PostgreSQL reads them, %I and %L, and its errors.
FORMAT = [
    "SELECT format('%s%s%s', 'Hello', NULL, 'World')",
    "SELECT format('%s|%s|%s|%s|%s', true, 1.5::float8, '2020-01-01'::date, ARRAY[1, 2], 'ab'::char(5))",
    "SELECT format('%-6s|%6s|', 'ab', 'cd'), format('%2$s %1$s', 'a', 'b'), format('100%% %s', 3)",
    "SELECT format('x'), format('%s', 'x'::text, 'unused')",
    "SELECT format('%s %s', 'a')",
    "SELECT format('%d', 1)",
    "SELECT format('%0$s', 1)",
    # %I by quote_ident, %L by quote_literal (NULL unquoted), one argument several ways
    "SELECT format('INSERT INTO %I VALUES(%L)', 'Hello', 'O''Reilly')",
    "SELECT format('%I %I %L %L', 'a b', 'select', NULL, 42)",
    "SELECT format('%s %1$I %1$L %2$s', 'x', 7), format('|%10I|%-10L|', 'ab', 'cd')",
    "SELECT format('%I', 'abc'), format('%L', 3.50::numeric), format('%L', true), format('%L', '2024-01-01'::date)",
    "SELECT format('%I', 'Ünïcode'), format('%I', 'x\"y')",
    "SELECT format('%I', NULL)",
]


def test_format_prints_as_postgresql_does(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, FORMAT).close()


#: num_nulls / num_nonnulls of arguments of any types, and of a VARIADIC array.
NUM_NULLS = [
    "SELECT num_nonnulls(NULL), num_nonnulls('1'), num_nonnulls(NULL::text, NULL::int), num_nulls(1, 2, NULL::text, '', int8 '9', 1.0 / NULL)",
    "SELECT num_nulls(VARIADIC '{1,2,NULL,3}'::int[]), num_nonnulls(VARIADIC '{\"1\",\"2\"}'::text[])",
    "SELECT num_nulls(VARIADIC ARRAY(SELECT CASE WHEN i <> 40 THEN i END FROM generate_series(1, 100) i))",
    "SELECT num_nonnulls(VARIADIC NULL::text[]), num_nulls(VARIADIC '{}'::int[]), pg_typeof(num_nulls(1))",
    "SELECT num_nulls()",
]


def test_num_nulls_counts_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, NUM_NULLS).close()


#: Unconstrained numeric: the lake keeps each value's exact text (more digits than DuckDB's
#: DECIMAL holds, each with its own display scale). Comparisons, ORDER BY and min/max
#: follow the numbers (they followed the text: max of 93901.57 and 7799461.41 was 93901.57).
NUMERIC_TEXT = [
    "CREATE TABLE nt (id int PRIMARY KEY, v numeric, w numeric)",
    "INSERT INTO nt VALUES (1, 93901.57, 1), (2, 7799461.41, 2), (3, -83028485, 3), (4, -24926804.04, 4),"
    " (5, 10, 10.0), (6, 10.000, 6), (7, 0.0001, 7), (8, -0.0001, 8), (9, 0, -0.0), (10, NULL, NULL),"
    " (11, 123456789012345678901234567890123456789012345.678901, 11), (12, 'NaN', 12), (13, 'Infinity', 13),"
    " (14, '-Infinity', 14), (15, -1000, 15), (16, -999.999, 16)",
    "SELECT max(v), min(v), max(w), min(w), count(v) FROM nt",
    "SELECT max(v), min(v) FROM nt WHERE id < 11",
    "SELECT id, v FROM nt ORDER BY v, id",
    "SELECT id, v FROM nt ORDER BY v DESC NULLS LAST, id",
    "SELECT id, v FROM nt ORDER BY 2, 1",
    "SELECT id FROM nt WHERE v > 100 ORDER BY id",
    "SELECT id FROM nt WHERE v = 10 ORDER BY id",
    "SELECT id FROM nt WHERE v = w ORDER BY id",
    "SELECT id FROM nt WHERE v <> 10.0 AND v < 1 ORDER BY id",
    "SELECT id FROM nt WHERE v IN (10, 0.0001, 'NaN') ORDER BY id",
    "SELECT id FROM nt WHERE v BETWEEN -1000 AND 10 ORDER BY id",
    "SELECT id FROM nt WHERE v IS DISTINCT FROM 10 ORDER BY id",
    "SELECT a.id, b.id FROM nt a JOIN nt b ON a.v = b.v WHERE a.id < b.id ORDER BY 1, 2",
    "SELECT id, v::text, format('%s', v), v || '', v::float8 FROM nt ORDER BY id",
    "SELECT id, v::numeric(60,2), v::numeric(20,3), v::int8, v::numeric FROM nt WHERE id < 11 ORDER BY id",
    "SELECT v::numeric(60,2) FROM nt WHERE id = 13",
    "SELECT v::numeric(10,2) FROM nt WHERE id = 11",
    "SELECT id, max(v) OVER (ORDER BY v, id) FROM nt WHERE id <> 6 ORDER BY id",  # (see below)
    "SELECT (SELECT max(v) FROM nt), (SELECT id FROM nt ORDER BY v DESC LIMIT 1)",
    "SELECT id, CASE WHEN v > 0 THEN v ELSE w END FROM nt ORDER BY id",
    "SELECT id, v + 1, v * w, v - w, -v, v / 7 FROM nt WHERE id <> 11 ORDER BY id",
    "SELECT id, round(v, 1), trunc(v), abs(v), sign(v), ceil(v), floor(v) FROM nt ORDER BY id",
    "SELECT sum(v), avg(v) FROM nt WHERE id < 11",
    "SELECT sum(v), avg(w), stddev(w), var_pop(w) FROM nt",
]
# Left: min/max over equal values of different display scales (10 and 10.000) may return
# another of them than PostgreSQL, which keeps the last one it met.
#: What the proxy refuses (0A000) rather than answer with DuckDB's reading of the text.
NUMERIC_TEXT_REFUSED = [
    "SELECT count(DISTINCT v) FROM nt",
    "SELECT sum(DISTINCT v) FROM nt",
    "SELECT v FROM nt GROUP BY v",
    "SELECT DISTINCT v FROM nt",
    "SELECT v FROM nt UNION SELECT w FROM nt",
    "SELECT greatest(v, w) FROM nt",
    "SELECT CASE v WHEN 10 THEN 1 END FROM nt",
    "SELECT id FROM nt WHERE v IN (SELECT w FROM nt)",
    "SELECT id FROM nt a JOIN (SELECT w AS v FROM nt) b USING (v)",
    "SELECT 1 FROM nt a NATURAL JOIN nt b",
]


def test_unconstrained_numeric_compares_as_numbers_or_is_refused(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, NUMERIC_TEXT) as got, Client(pg15.dsn(dbname=pg15.new_database("sem"))) as ref:
        ref(NUMERIC_TEXT[0])
        for sql in NUMERIC_TEXT_REFUSED:
            answer = got(sql)
            assert answer[:2] == ("error", "0A000"), (sql, answer)
            assert ref(sql)[0] != "error", sql  # (PostgreSQL answers it)


#: json_build_object's keys: scalars only (22023), never NULL, printed as JSON strings.
JSON_BUILD = [
    "SELECT json_build_object('a', 1, 'b', 'x', 2, true, 'n', NULL)",
    "SELECT json_build_object(r, 2) FROM (SELECT 1 AS a, 2 AS b) r",
    "SELECT json_build_object(json '{\"a\":1,\"b\":2}', 3)",
    "SELECT json_build_object('{1,2,3}'::int[], 3)",
    "SELECT json_build_object(NULL, 'a')",
    "SELECT json_build_object('a')",
]


def test_json_build_object_keys_as_postgresql_takes_them(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, JSON_BUILD).close()


#: numeric arithmetic: exact at any size, each result with PostgreSQL's display scale
#: (select_div_scale for division, 16 significant digits for roots and logarithms), over
#: literals, integer columns, numeric(p,s) columns and unconstrained ones.
NUMERIC_EXACT = [
    "CREATE TABLE nx (i int, b bigint, d numeric(12,2), u numeric, f float8)",
    "INSERT INTO nx VALUES (1, 1234567890123456789, 1.50, 2.5, 0.1), (2, -9, 3.25, 10.125, 2.5),"
    " (4, 0, -0.01, 123456789012345678901234567890.5, 1e-5), (NULL, NULL, NULL, NULL, NULL)",
    "SELECT 70.0 / 70, 1 / 3::numeric, 10::numeric / 4, 12345678901234567890 / 123, 999999999999999999999::numeric / 1000000000000000000000",
    "SELECT 1.5 + 2.25, 1.5 * 2.25, 7.0 % 2.5, -7.5 % 2, 0.1 + 0.2, 2.50 - 2.5",
    "SELECT 4790999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
    " * 9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999",
    "SELECT 1e-30::numeric, 1e40::numeric, 'NaN'::numeric, '-Infinity'::numeric, '  12.50 '::numeric",
    "SELECT 'Infinity'::numeric - 'Infinity', 'Infinity'::numeric * 0, 1 / 'Infinity'::numeric, 'NaN'::numeric + 1",
    "SELECT sqrt(2::numeric), sqrt(96627521408608.56340355805::numeric), sqrt(8015491789940783531003294973900307::numeric)",
    "SELECT ln(2::numeric), log(2::numeric), log(2, 8.0), exp(1::numeric), exp(-10.5), ln(1e-20)",
    "SELECT 2::numeric ^ 0.5, 0.12 ^ (-20), 3.789 ^ 3.5, (-2.0) ^ 3, power(2::numeric, -2.0)",
    "SELECT round(2.5), round(-2.5), round(1234.5678, -2), round(1234.5678, 2), trunc(1234.5678, 2), trunc(-1.99)",
    "SELECT ceil(-1.5), floor(-1.5), sign(-3.2), abs(-3.20), div(17.5, 4), mod(-17.5, 4), mod(17, 4.0)",
    "SELECT scale(1.500), min_scale(1.500), trim_scale(1.500), scale(10::numeric / 4)",
    "SELECT i, b::numeric, b::numeric + 1, i::numeric / 7, d / 3, d * d, u / 3, u + d, f::numeric FROM nx ORDER BY i",
    "SELECT i, d::numeric(5,1), (u / 3)::numeric(40,10), (d / 7)::float8, (u / 3)::int8 FROM nx WHERE i < 4 ORDER BY i",
    "SELECT avg(i), avg(b), avg(d), avg(u), sum(u), sum(d / 3) FROM nx",
    "SELECT stddev(i), variance(i), stddev_pop(d), var_samp(d), var_pop(u), stddev_samp(b) FROM nx",
    "SELECT i, avg(d) OVER (ORDER BY i), sum(u) OVER (ORDER BY i) FROM nx ORDER BY i",
    "SELECT avg(d) FILTER (WHERE i > 1), avg(DISTINCT i) FROM nx",
    "SELECT i FROM nx WHERE d / 3 > 0.5 ORDER BY u / 3 DESC",
    "SELECT d + f, u * 2.0::float8, pg_typeof(d / 3), pg_typeof(d + f) FROM nx WHERE i = 1",
    "SELECT 0 ^ 0 + 0 ^ 1 + 0 ^ 0.0 + 0 ^ 0.5, 2 ^ 3, 2 ^ 3.0",
    "SELECT x, x::int8 FROM (VALUES (-2.5::numeric), (-0.5::numeric), (0.0::numeric), (2), (1.25)) t(x)",
    "SELECT CASE WHEN i > 1 THEN 1.5 ELSE i END AS c, coalesce(d, 0), coalesce(u, 1), nullif(u, 2.50), nullif(d, 1.5) FROM nx ORDER BY i",
    "CREATE TABLE np (n numeric(2,2))",
    "INSERT INTO np VALUES (0.5), (-0.05), (0)",
    "SELECT n, n::text, n || 'x', format('%s', n), n::varchar(10), 0.5::numeric(1,1)::text FROM np ORDER BY n",  # 42702
    "SELECT n, n::text, n || 'x', format('%s', n), n::varchar(10), 0.5::numeric(1,1)::text FROM np ORDER BY 1",
    "SELECT 1.1 AS two UNION ALL SELECT 2 ORDER BY 1",
    "SELECT x FROM (VALUES (1.5), (2)) v(x) UNION ALL SELECT 3.25 UNION ALL SELECT n FROM np ORDER BY 1",
    "SELECT 1.5 UNION SELECT 2.5 UNION SELECT 1.5 ORDER BY 1",
    "SELECT n FROM np UNION SELECT n FROM np ORDER BY 1",
    "SELECT * FROM np UNION ALL SELECT * FROM np ORDER BY 1",
    "CREATE TABLE fl (i int, f float8, r float4)",
    "INSERT INTO fl VALUES (1, 10.1, 777.777)",
    "INSERT INTO fl SELECT 2, 20.2, 1.1",
    "INSERT INTO fl VALUES (3, -30.3, 0.1), (4, 2, 3)",
    "SELECT * FROM fl ORDER BY i",
    "SELECT 1 / 0::numeric",
    "SELECT 1.5 % 0",
    "SELECT ln(0::numeric)",
    "SELECT ln(-1::numeric)",
    "SELECT sqrt(-1::numeric)",
    "SELECT 0::numeric ^ -1",
    "SELECT (-2.0) ^ 0.5",
    "SELECT 10.0 ^ 2147483647",
    "SELECT 'abc'::numeric + 1",
]


#: Set operations that compare rows of numeric values of different display scales: each
#: value's text, compared as text where no value is written with trailing fractional zeros
#: (then its text is its equality class's only one); refused where one is.
NUMERIC_REFUSED = [
    "SELECT 1.50 UNION SELECT 1.5",
    "SELECT d FROM nx UNION SELECT 2",
]
NUMERIC_SET_OPERATIONS = [
    "SELECT 1.1 AS two UNION SELECT 2 ORDER BY 1",
    "SELECT 1.1 AS three UNION SELECT 2 UNION ALL SELECT 2 ORDER BY 1",
    "SELECT 1.1 AS two UNION (SELECT 2 UNION ALL SELECT 2) ORDER BY 1",
    "CREATE TABLE ng (a numeric)",
    "INSERT INTO ng VALUES (1.5), (2), (1.5), (NULL), (10), ('NaN')",
    "SELECT DISTINCT a FROM ng ORDER BY a",
    "SELECT a, count(*) FROM ng GROUP BY a ORDER BY a",
    "SELECT a, count(*) FROM ng GROUP BY 1 ORDER BY 1 DESC",
    "SELECT count(DISTINCT a) FROM ng",
    "SELECT a FROM ng UNION SELECT 2.5 ORDER BY 1",
    "SELECT a FROM ng INTERSECT SELECT 2 ORDER BY 1",
    "SELECT a FROM ng EXCEPT SELECT 10 ORDER BY 1",
]


def test_numeric_arithmetic_is_exact_with_postgresqls_scales(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, NUMERIC_EXACT) as got, Client(pg15.dsn(dbname=pg15.new_database("sem"))) as ref:
        ref(NUMERIC_EXACT[0])
        for sql in NUMERIC_REFUSED:
            assert got(sql)[:2] == ("error", "0A000"), sql
            assert ref(sql)[0] != "error", sql
    _same_answers(proxy, pg15, NUMERIC_SET_OPERATIONS).close()


#: Row values print as record_out prints them (each field by its type's output, quoted
#: where record_out quotes). Their column is described as text, not record (2249).
RECORDS = [
    "SELECT foo FROM (SELECT 1 OFFSET 0) AS foo",
    "SELECT foo FROM (SELECT NULL OFFSET 0) AS foo",
    "SELECT foo FROM (SELECT 'xyzzy', 1, NULL OFFSET 0) AS foo",
    "SELECT x FROM (VALUES (ROW(1, 2)), (ROW(1, 3))) _(x) UNION SELECT x FROM (VALUES (ROW(1, 2)), (ROW(1, 4))) _(x) ORDER BY 1",
    "SELECT ROW(1, 'a b', NULL, '', 'q\"x', 1.50, true, 2.5::float8, 'a\\b', '(x)', date '2024-02-29')",
    "SELECT ROW(ROW(1, 2), 'x')",
]


def test_row_values_print_as_record_out(proxy: ProxyServer, pg15: PgCluster) -> None:
    with Client(pg15.dsn(dbname=pg15.new_database("sem"))) as ref, Client(proxy.dsn()) as got:
        ref.conn.adapters.register_loader("record", TextLoader)  # record_out's text, not a tuple
        for sql in RECORDS:
            expected, answer = ref(sql), got(sql)
            assert answer[0] == expected[0] == "rows", (sql, answer)
            assert answer[2] == expected[2], sql


#: Transaction characteristics as the session sees them: SHOW follows START TRANSACTION's
#: options over the defaults, a savepoint's end restores the access mode it found, AND
#: CHAIN starts the next block with the same characteristics (25P01 outside a block), and
#: a cursor declared in a rolled-back subtransaction is gone.
TRANSACTION_CHARACTERISTICS = [
    "CREATE TABLE abc (a int)",
    "SET default_transaction_read_only = on",
    "START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE, DEFERRABLE",
    "SHOW transaction_isolation", "SHOW transaction_read_only", "SHOW transaction_deferrable",
    "INSERT INTO abc VALUES (1)",
    "COMMIT AND CHAIN",
    "SHOW transaction_isolation", "SHOW transaction_read_only", "SHOW transaction_deferrable",
    "INSERT INTO abc VALUES ('error')",
    "COMMIT AND CHAIN",
    "SHOW transaction_isolation", "SHOW transaction_read_only",
    "INSERT INTO abc VALUES (2)",
    "ROLLBACK AND CHAIN",
    "SHOW transaction_isolation",
    "INSERT INTO abc VALUES (3)",
    "COMMIT",
    "COMMIT AND CHAIN",
    "ROLLBACK AND CHAIN",
    "SET default_transaction_read_only = off",
    "BEGIN",
    "SET TRANSACTION READ WRITE",
    "SAVEPOINT x",
    "SET TRANSACTION READ ONLY",
    "ROLLBACK TO SAVEPOINT x",
    "SHOW transaction_read_only",
    "SAVEPOINT y",
    "SET TRANSACTION READ ONLY",
    "RELEASE SAVEPOINT y",
    "SHOW transaction_read_only",
    "INSERT INTO abc VALUES (4)",
    "SAVEPOINT z",
    "DECLARE c CURSOR FOR SELECT a FROM abc ORDER BY a",
    "FETCH 1 FROM c",
    "ROLLBACK TO SAVEPOINT z",
    "FETCH 1 FROM c",
    "ROLLBACK",
    "BEGIN",
    "DECLARE d CURSOR FOR SELECT 1 / (a - 3) FROM abc ORDER BY a",
    "SAVEPOINT w",
    "FETCH 10 FROM d",
    "ROLLBACK TO SAVEPOINT w",
    "FETCH 10 FROM d",
    "COMMIT",
    "SELECT a FROM abc ORDER BY a",
]


def test_transaction_characteristics_chain_and_savepoints(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, TRANSACTION_CHARACTERISTICS).close()


#: String functions whose DuckDB namesakes answer otherwise (to_hex's case and width,
#: sha256's type, split_part's and substr's positions, chr(0)).
STRING_FUNCTIONS = [
    "SELECT to_hex(256*256*256 - 1), to_hex(-1), to_hex(-1::int8), to_hex(256::bigint*256::bigint*256::bigint*256::bigint - 1)",
    "SELECT sha256(''), sha256('abc'::bytea)",
    "SELECT chr(65), chr(0)",
    "SELECT split_part('joeuser@mydatabase', '', 1), split_part('joeuser@mydatabase', '', 2),"
    " split_part('joeuser@mydatabase', '', -1), split_part('joeuser@mydatabase', '@', -1),"
    " split_part('joeuser@mydatabase', '@', 3), split_part('a,b,c', ',', -4), split_part(NULL, ',', 1)",
    "SELECT split_part('joeuser@mydatabase', '@', 0)",
    "SELECT substr('1234567', -1, 5), substr('1234567', 0), substr('1234567', 3, 2), substr('1234567', 10, 2),"
    " SUBSTRING('string' FROM 2 FOR 3), substring('string', -3), substr(NULL, 1, 2), substr('abc', -5, 2)",
    "SELECT SUBSTRING('string' FROM -10 FOR -2147483646)",
    "SELECT no_such_function(1)",
    "SELECT lower(1)",
    "SELECT date '2020-01-01' + 'x'::text",
]


def test_string_functions_answer_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, STRING_FUNCTIONS).close()


def test_a_postgresql_function_the_proxy_lacks_is_unsupported_not_unknown(proxy: ProxyServer, pg15: PgCluster) -> None:
    with Client(proxy.dsn()) as got, Client(pg15.dsn(dbname=pg15.new_database("sem"))) as ref:
        for sql in ("SELECT age(timestamp '2001-04-10', timestamp '1957-06-13')", "SELECT pg_size_bytes('1 kB')", "SELECT to_tsvector('a b')"):
            answer = got(sql)
            assert answer[:2] == ("error", "0A000") and "is not supported by walsender-proxy" in str(answer[2]), answer
            assert ref(sql)[0] == "rows", sql


#: EXTRACT (numeric, fixed scales), date_part (float8) and date_trunc as PostgreSQL's:
#: fractional seconds kept, years before 1 AD numbered without a year 0, centuries from
#: …01, infinite inputs ±Infinity or NULL, a date truncated as a timestamp with time zone.
DATETIME_PARTS = [
    "CREATE TABLE dt (i int, d date, ts timestamp, tz timestamptz, t time)",
    "INSERT INTO dt VALUES (1, '2020-01-05', '2020-01-01 00:00:01.5', '2020-01-01 00:00:01.25+00', '10:00:01.25'),"
    " (2, '2020-08-11 BC', '0055-08-10 10:00 BC', '0012-12-31 BC', '00:00'), (3, 'infinity', '-infinity', 'infinity', NULL),"
    " (4, NULL, NULL, NULL, NULL)",
    "SELECT i, extract(year FROM d), extract(decade FROM d), extract(century FROM d), extract(millennium FROM d),"
    " extract(isoyear FROM d), extract(epoch FROM d), extract(day FROM d), extract(dow FROM d), extract(julian FROM d) FROM dt ORDER BY i",
    "SELECT i, extract(second FROM ts), extract(milliseconds FROM ts), extract(microseconds FROM ts), extract(epoch FROM ts),"
    " extract(year FROM ts), extract(century FROM tz), extract(decade FROM tz), extract(epoch FROM tz), extract(second FROM t),"
    " extract(epoch FROM t) FROM dt ORDER BY i",
    "SELECT i, date_part('second', ts), date_part('year', d), date_part('epoch', tz), date_part('day', ts) FROM dt ORDER BY i",
    "SELECT i, date_trunc('century', ts)::text, date_trunc('millennium', tz)::text, date_trunc('decade', d)::text,"
    " date_trunc('month', d)::text, date_trunc('hour', ts)::text FROM dt WHERE i <> 2 ORDER BY i",
    "SELECT extract(hour FROM date '2020-01-01')",
    "SELECT extract(foo FROM date '2020-01-01')",
    "SELECT date_trunc('foo', timestamp '2020-01-01')",
]


def test_datetime_fields_as_postgresql_extracts_them(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, DATETIME_PARTS) as got:
        # (what the proxy refuses rather than answer otherwise)
        for sql in ("SELECT date_trunc('century', d) FROM dt WHERE i = 2", "SELECT extract(julian FROM ts) FROM dt"):
            assert got(sql)[:2] == ("error", "0A000"), sql


#: Arrays with PostgreSQL's NULL rules: ANY/ALL three-valued, containment and overlap that
#: never match a NULL element, string_to_array/array_to_string edge cases, array_agg of
#: arrays, nested arrays cast with their dimensions.
ARRAYS = [
    "CREATE TABLE arr (seqno int, i int[], t text[])",
    "INSERT INTO arr VALUES (1, '{1,2,3}', '{a,b}'), (2, '{}', '{}'), (3, '{NULL}', '{NULL}'), (4, NULL, NULL), (5, '{2,NULL}', '{b,NULL}')",
    "SELECT seqno, i @> '{2}', i <@ '{1,2,3,4}', i @> '{NULL}', i <@ '{}', i && '{2}', i && '{NULL}', t @> '{b}', t <@ '{a,b}' FROM arr ORDER BY 1",
    "SELECT seqno, 2 = ANY(i), 2 <> ALL(i), 2 < ANY(i), 2 >= ALL(i), NULL = ANY(i), 'b' = ANY(t) FROM arr ORDER BY 1",
    "SELECT 33 = ANY('{1,null,3}'), 33 = ALL(null::int[]), 1 = ANY('{}'::int[]), null::int = ANY('{}'::int[])",
    "SELECT -1 != ALL(ARRAY(SELECT NULLIF(g.i, 900) FROM generate_series(1, 1000) g(i)))",
    "SELECT string_to_array('1|2|3', ''), string_to_array('', '|'), string_to_array('1|2|3', NULL), string_to_array('abc', '')",
    "SELECT string_to_array('1,2,,3', ',', ''), string_to_array('1,*,3', ',', '*'), string_to_array(NULL, ',')",
    "SELECT array_to_string(ARRAY[1, 2, NULL, 6], NULL), array_to_string(ARRAY[1, 2, NULL, 6], ','),"
    " array_to_string(ARRAY[1, NULL, 6], ',', '*'), array_to_string(ARRAY[true, false], ','), array_to_string(ARRAY[[1, 2], [3, 4]], ',')",
    "SELECT array[]",
    "SELECT array[]::int[]",
    "SELECT array_agg('{}'::int[]) FROM generate_series(1, 2)",
    "SELECT array_agg(null::int[]) FROM generate_series(1, 2)",
    "SELECT array_agg(ar) FROM (VALUES ('{1,2}'::int[]), ('{3}'::int[])) v(ar)",
    "SELECT array_agg(ar) FROM (VALUES ('{1,2}'::int[]), ('{3,4}'::int[])) v(ar)",
    "SELECT ARRAY[['a', 'bc'], ['def', 'hijk']]::text[]::varchar[], ARRAY[[1, 2], [3, 4]]::text[]",
]


def test_arrays_answer_with_postgresql_null_rules(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, ARRAYS) as got:
        # a DuckDB list of DECIMALs has one scale: refused rather than printed as 2.0
        for sql in ("SELECT ARRAY[1.1, 2]", "SELECT ARRAY[1.1] || ARRAY[2, 3]", "SELECT array_to_string(ARRAY[1.5::numeric], ',')"):
            assert got(sql)[:2] == ("error", "0A000"), sql


#: Set operations: character(n) with varchar takes the first arm's type; ORDER BY names
#: output columns only; row locks keep PostgreSQL's refusals.
SET_OPERATIONS = [
    "CREATE TABLE vc (f1 varchar(4))",
    "INSERT INTO vc VALUES ('a'), ('ab'), ('abcd'), ('abcd    ')",
    "CREATE TABLE ch (f1 char(4))",
    "INSERT INTO ch VALUES ('a'), ('ab'), ('abcd'), ('abcd    ')",
    "SELECT f1 || '|' FROM (SELECT f1 FROM vc UNION ALL SELECT f1 FROM ch) s ORDER BY 1",
    "SELECT f1 || '|' FROM (SELECT f1 FROM ch UNION ALL SELECT f1 FROM vc) s ORDER BY 1",
    "SELECT f1 FROM vc UNION SELECT f1 FROM ch ORDER BY f1",
    "SELECT f1 FROM vc EXCEPT SELECT f1 FROM ch ORDER BY q2",
    "SELECT 1 AS a UNION SELECT 2 ORDER BY a + 1",
    "SELECT f1 FROM vc EXCEPT ALL SELECT f1 FROM ch FOR NO KEY UPDATE",
    "SELECT DISTINCT f1 FROM vc FOR UPDATE",
    "SELECT f1 FROM vc GROUP BY f1 FOR SHARE",
    "SELECT f1 FROM vc WHERE f1 = 'a' FOR UPDATE",
]


def test_set_operations_type_and_order_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, SET_OPERATIONS).close()


#: An INSERT's single VALUES row reads as a SELECT list (set-returning functions allowed,
#: zipped); in any other VALUES they are 0A000 with the cursor on the call.
VALUES_SETS = [
    "VALUES (generate_series(1, 2))",
    "CREATE TABLE vs (a int, b int)",
    "INSERT INTO vs VALUES (generate_series(1, 3), 7)",
    "INSERT INTO vs VALUES (generate_series(1, 3), 7), (1, 2)",
    "INSERT INTO vs VALUES (generate_series(1, 2), generate_series(1, 3))",
    "INSERT INTO vs VALUES ((SELECT 5), unnest(ARRAY[8, 9]))",
    "INSERT INTO vs VALUES (generate_series(10, 11), 3) RETURNING *",
    "SELECT * FROM vs ORDER BY a NULLS FIRST, b",
]


def test_set_returning_functions_in_values_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, VALUES_SETS).close()


#: now(), CURRENT_TIMESTAMP and 'now' are the transaction's start; timestamp(p) columns
#: and casts round to p digits; date - date is an integer.
CLOCK_AND_PRECISION = [
    "CREATE TABLE tq (id int PRIMARY KEY, a timestamp(1), b timestamptz(0), c time(2), d timestamp)",
    "INSERT INTO tq VALUES (1, '2020-01-01 00:00:00.16', '2020-01-01 00:00:00.5', '10:00:00.125', '1999-12-31 23:59:59.25')",
    "INSERT INTO tq VALUES (2, '1999-12-31 23:59:59.25', '1999-12-31 23:59:59.5', '10:00:00.004', '1999-12-31 23:59:59.35')",
    "INSERT INTO tq SELECT id + 10, d, d, c, d FROM tq",
    "UPDATE tq SET a = a + interval '0.06 seconds' WHERE id = 1",
    "SELECT * FROM tq ORDER BY id",
    "SELECT id, d::timestamp(0), d::timestamp(1), c::time(1), a::timestamp(0) FROM tq ORDER BY id",
    "SELECT attname, atttypmod, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'tq'::regclass AND attnum > 0 ORDER BY attnum",
    "BEGIN",
    "CREATE TABLE nowt (d timestamp)",
    "INSERT INTO nowt VALUES ('now')",
    "SELECT pg_sleep(0.02)",
    "INSERT INTO nowt VALUES ('now')",
    "SELECT count(DISTINCT d), count(*) FROM nowt",
    "SELECT now() = current_timestamp, now() = transaction_timestamp(), now() < statement_timestamp(),"
    " current_date = now()::date, localtimestamp = now()::timestamp, now() = 'now'::timestamptz, 'today'::date = current_date",
    "SELECT count(*) FROM nowt WHERE d = now()::timestamp",
    "SELECT current_timestamp(2) = now()::timestamp(2)::timestamptz, localtimestamp(0) = now()::timestamp(0)",
    "COMMIT",
    "SELECT now() = statement_timestamp()",
    "SELECT 'tomorrow'::date - 'yesterday'::date, pg_typeof(date '2020-01-02' - date '2020-01-01'), pg_typeof(date '2020-01-01' + 1),"
    " pg_typeof(date '2020-01-01' + interval '1 day'), pg_typeof(timestamp '2020-01-01' - timestamp '2019-01-01')",
]


def test_clock_and_time_precision_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, CLOCK_AND_PRECISION) as got:
        assert got("CREATE TABLE iv (x interval(1))")[:2] == ("error", "0A000")


#: Smaller answers that differed without an error.
SMALL_ANSWERS = [
    "SELECT -('-9223372036854775808'::int8)",
    "SELECT -('-32768'::int2)",
    "SELECT abs('-2147483648'::int4)",
    "SELECT @('-9223372036854775808'::int8)",
    "SELECT -(5::int2), abs(-5::int8), @(-7)",
    "CREATE TABLE ct (i int)",
    "INSERT INTO ct VALUES (1), (2)",
    "SELECT CASE WHEN i > 100 THEN 1/0 ELSE 0 END FROM ct",
    "SELECT CASE WHEN i > 100 THEN i/0 ELSE 0 END FROM ct ORDER BY 1",
    "CREATE TABLE \"at\" (\"at\" int, struct text)",
    "INSERT INTO at VALUES (1, 'x')",
    "SELECT at, struct, at.at FROM at WHERE at = 1 ORDER BY at",
    "SET extra_float_digits = 2",
    "DISCARD SEQUENCES",
    "DISCARD PLANS",
    "SHOW extra_float_digits",
    "DISCARD ALL",
    "SHOW extra_float_digits",
    "SET escape_string_warning = off",
    "SHOW escape_string_warning",
    # LIKE escapes with a backslash unless ESCAPE says otherwise
    "SELECT 'a%b' LIKE 'a\\%b', 'axb' LIKE 'a\\%b', 'a_b' LIKE 'a\\_b', 'a\\b' LIKE 'a\\\\b', 'ab' LIKE 'a\\b'",
    "SELECT 'hawkeye' LIKE 'h%' ESCAPE '#', 'h%' LIKE 'h#%' ESCAPE '#', 'h%wk' NOT LIKE 'h#%' ESCAPE '#'",
    "SELECT 'a%b' ILIKE 'A\\%B', 'a%b' NOT LIKE 'a\\%b', 'A_B' ILIKE 'a#_b' ESCAPE '#', 'a\\b' LIKE 'a\\b' ESCAPE ''",
    "SELECT 'ab' LIKE 'ab' ESCAPE 'xx'",
    "SELECT 'foo' LIKE ANY (ARRAY['%a', '%o']), 'foo' LIKE ALL (ARRAY['f%', '%b']), 'foo' NOT LIKE ANY (ARRAY['%a', '%b']),"
    " 'foo' ILIKE ALL (ARRAY['F%', '%O']), 'foo' LIKE ANY (ARRAY['%a', NULL]), 'foo' LIKE ALL (ARRAY['f%', NULL]),"
    " 'foo' LIKE ANY ('{}'::text[]), 'a%' LIKE ANY (ARRAY['a\\%'])",
    "SELECT 5 # 3, 5::int8 # 12::int8, ~5, ~(-2147483648), 5 & 3, 5 | 3, 1::int2 # 3::int2",
    "SELECT x FROM (VALUES (1, 'b'), (2, 'a'), (3, 'c')) v(x, y) ORDER BY y USING <, x USING >",
    # a CTE of an INSERT hides the table of its name; DISTINCT aggregates sort; float sums
    "CREATE TABLE with_test (i int)",
    "WITH with_test AS (SELECT 42) INSERT INTO with_test SELECT * FROM with_test",
    "SELECT * FROM with_test",
    "SELECT array_agg(DISTINCT a) FROM (VALUES (1), (2), (1), (3), (NULL), (2)) v(a)",
    "SELECT string_agg(DISTINCT t, ',') FROM (VALUES ('c'), ('a'), ('b'), ('a')) v(t)",
    "SELECT sum(x), pg_typeof(sum(x)), pg_typeof(sum(x::float8)) FROM (VALUES (1.5::float4), (2.25::float4)) v(x)",
    # a table's columns through SELECT * in a subquery or a CTE keep their types
    "CREATE TABLE star_nt (id int, b numeric)",
    "INSERT INTO star_nt VALUES (1, 93901.57), (2, 7799461.41), (3, 10)",
    "SELECT max(b), min(b) FROM (SELECT * FROM star_nt) s",
    "SELECT b FROM (SELECT * FROM star_nt) s ORDER BY b",
    "SELECT max(x) FROM (SELECT *, b * 2 AS x FROM star_nt) s",
    "WITH w AS (SELECT * FROM star_nt) SELECT max(b) FROM w",
    "SELECT q.x, q.b FROM star_nt AS q(x) ORDER BY q.x",
    "SELECT lag(id, 1, 0) OVER (ORDER BY id), lag(id::float8, 1, 0.5) OVER (ORDER BY id) FROM star_nt ORDER BY id",
    "SELECT 'a\\' LIKE 'a\\'",
    "SELECT (VALUES (1)), (WITH c AS (SELECT 1 AS z) VALUES ((SELECT z FROM c))), (SELECT 1 UNION SELECT 2 ORDER BY 1 LIMIT 1)",
    # float4 against numeric or float8 elements compares in double precision: 1.1::float4 <> 1.1
    "CREATE TABLE f4any (x float4)",
    "INSERT INTO f4any VALUES (1.1), (2.5)",
    "SELECT x FROM f4any WHERE x = ANY(ARRAY[1.1, 2.5])",
    "SELECT x FROM f4any WHERE x <> ALL(ARRAY[1.1::float8, 2.5])",
    "SELECT x FROM f4any WHERE x = ANY(ARRAY[1.1::float4]) OR x IN (2.5)",
]


def test_small_answers_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, SMALL_ANSWERS) as got:
        for sql in ("SELECT '1'::money", "SELECT '1.2.3.4/32'::inet", "SELECT B'101'", "SELECT 'a b'::tsvector",
                    "SELECT lag(id, 1, 0.5) OVER (ORDER BY id) FROM star_nt", "SELECT interval '3000000 hours'",
                    "INSERT INTO with_test SELECT 1 FROM (VALUES ('3000000 hours'::text)) v(x) WHERE x::interval IS NULL"):
            assert got(sql)[:2] == ("error", "0A000"), sql


def test_explain_answers_with_a_plan_text(proxy: ProxyServer, pg15: PgCluster) -> None:
    """EXPLAIN gives a plan (DuckDB's, one line a row of a text column "QUERY PLAN"), through
    the simple and the extended protocol; what it cannot show is refused, bad options are
    PostgreSQL's errors."""
    with Client(proxy.dsn()) as got, Client(pg15.dsn(dbname=pg15.new_database("sem"))) as ref:
        for sql in ("CREATE TABLE ex (a int)", "EXPLAIN SELECT * FROM ex WHERE a = 1", "EXPLAIN (COSTS OFF, ANALYZE) SELECT count(*) FROM ex"):
            ours, theirs = got(sql), ref(sql)
            assert ours[0] == theirs[0], sql
            if ours[0] == "rows":
                assert ours[1] == theirs[1] == [("QUERY PLAN", 25)] and ours[2], sql
        for sql in ("EXPLAIN (foo) SELECT 1", "EXPLAIN (format yaml2) SELECT 1", "EXPLAIN SELECT * FROM nope", "EXPLAIN SELECT $1::int"):
            assert got(sql)[:2] == ref(sql)[:2], sql
        for sql in ("EXPLAIN (FORMAT JSON) SELECT 1", "EXPLAIN INSERT INTO ex VALUES (1)", "EXPLAIN ANALYZE DELETE FROM ex"):
            assert got(sql)[:2] == ("error", "0A000"), sql
    with psycopg.connect(proxy.dsn(), autocommit=True) as conn:
        plan = conn.execute("EXPLAIN SELECT * FROM ex WHERE a = %s", (1,)).fetchall()
        assert plan and all(isinstance(line, str) for (line,) in plan)


#: Cursors scroll as PostgreSQL's do: NEXT/PRIOR/FIRST/LAST/ABSOLUTE/RELATIVE/FORWARD/
#: BACKWARD [ALL], MOVE, positions before the first and after the last row, NO SCROLL's
#: 55000, and several open cursors beside other statements.
CURSORS = [
    'create table cu (i int)',
    'insert into cu select generate_series(1, 10)',
    'begin',
    'declare c scroll cursor for select i from cu order by i',
    'fetch 2 from c',
    'fetch backward 1 from c',
    'fetch prior from c',
    'fetch prior from c',
    'fetch next from c',
    'fetch last from c',
    'fetch next from c',
    'fetch next from c',
    'fetch prior from c',
    'fetch absolute 3 from c',
    'fetch absolute -2 from c',
    'fetch absolute 0 from c',
    'fetch relative 4 from c',
    'fetch relative -2 from c',
    'fetch relative 0 from c',
    'fetch 0 from c',
    'fetch forward all from c',
    'fetch backward all from c',
    'move forward 3 in c',
    'move backward 1 in c',
    'fetch 1 from c',
    'move absolute 20 in c',
    'fetch backward 2 from c',
    'fetch first from c',
    'fetch -2 from c',
    'fetch forward -1 from c',
    'move last in c',
    'move relative 1 in c',
    'declare d no scroll cursor for select i from cu order by i',
    'fetch 2 from d',
    'fetch backward 1 from d',
    'rollback',
    'begin',
    'declare d no scroll cursor for select i from cu order by i',
    'fetch 2 from d',
    'fetch absolute 5 from d',
    'fetch relative 2 from d',
    'fetch 0 from d',
    'fetch all from d',
    'fetch 1 from d',
    'declare e cursor for select i from cu order by i',
    'fetch 3 from e',
    'fetch backward 2 from e',
    'fetch last from e',
    'fetch absolute 1 from e',
    'rollback',
    # a WITH HOLD cursor outlives its transaction only when it commits
    'begin',
    'declare h1 cursor with hold for select i from cu order by i',
    'rollback',
    'fetch from h1',
    'begin',
    'declare h2 cursor with hold for select i from cu order by i',
    'commit',
    'begin',
    'fetch from h2',
    'rollback',
    'fetch from h2',
    'begin',
    'declare h3 cursor with hold for select i from cu order by i',
    'select 1/0',
    'commit',
    'fetch from h3',
    'close h2',
]


def test_cursors_scroll_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, CURSORS) as got:
        assert got("BEGIN") == ("done", "BEGIN")
        assert got("DECLARE b BINARY CURSOR FOR SELECT 1")[:2] == ("error", "0A000")
        got("ROLLBACK")


def test_cursor_rows_that_postgresql_makes_at_fetch_are_refused(proxy: ProxyServer) -> None:
    """A cursor's rows are computed at DECLARE; PostgreSQL computes them as FETCH reads
    them. Where that shows — a sequence advanced for rows never fetched, a FOR UPDATE
    cursor read after the transaction changed its rows — the proxy refuses (0A000) rather
    than answer otherwise."""
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE SEQUENCE cur_seq")
        c.execute("CREATE TABLE cur_rows (a int PRIMARY KEY, b text)")
        c.execute("INSERT INTO cur_rows VALUES (1, 'x'), (2, 'y')")
        for query in ("SELECT nextval('cur_seq') FROM generate_series(1, 10)", "SELECT a, (SELECT setval('cur_seq', 5)) FROM cur_rows"):
            c.execute("BEGIN")
            assert raw_outcome(c, f"DECLARE c CURSOR FOR {query}")[:2] == ("error", "0A000"), query
            c.execute("ROLLBACK")
        assert c.execute("SELECT nextval('cur_seq')").fetchone() == (1,)  # (none advanced it)
        c.execute("BEGIN")
        c.execute("DECLARE c CURSOR FOR SELECT * FROM cur_rows ORDER BY a FOR UPDATE")
        assert c.execute("FETCH 1 FROM c").fetchall() == [(1, "x")]  # (no write yet: as PostgreSQL)
        c.execute("UPDATE cur_rows SET b = 'z' WHERE a = 2")
        assert raw_outcome(c, "FETCH 1 FROM c")[:2] == ("error", "0A000")
        c.execute("ROLLBACK")
        c.execute("BEGIN")  # (a cursor without FOR UPDATE sees its snapshot, as PostgreSQL's)
        c.execute("DECLARE c CURSOR FOR SELECT * FROM cur_rows ORDER BY a")
        c.execute("INSERT INTO cur_rows VALUES (3, 'w')")
        assert c.execute("FETCH ALL FROM c").fetchall() == [(1, "x"), (2, "y")]
        c.execute("ROLLBACK")


#: CREATE TABLE AS and SELECT INTO: the query's column types (typmods kept), names given
#: first, WITH NO DATA, IF NOT EXISTS, temporary tables, rolled back with the transaction.
CREATE_TABLE_AS = [
    'create table ctas_src (id int primary key, n numeric(10,2), t text, v varchar(5), d date, u numeric, ts timestamp(2), arr int[])',
    "insert into ctas_src values (1, 1.5, 'a', 'xy', '2020-01-01', 10.123, '2020-01-01 00:00:00.12', '{1,2}'), (2, null, 'b', null, null, 7, null, null)",
    'create table ctas_1 as select * from ctas_src',
    'select * from ctas_1 order by id',
    "select attname, format_type(atttypid, atttypmod), attnotnull from pg_attribute where attrelid = 'ctas_1'::regclass and attnum > 0 order by attnum",
    'create table ctas_2 (a, b) as select id, t, 42 as z from ctas_src where id = 1',
    'select * from ctas_2',
    'create table ctas_3 as select 1 as x with no data',
    'select * from ctas_3',
    'create table if not exists ctas_3 as select 2 as y',
    'create table ctas_4 (a, b, c) as select 1',
    'create table ctas_5 as select 1 as a, 2 as a',
    "select id * 2 as dbl, t || '!' as bang into ctas_6 from ctas_src",
    'select * from ctas_6 order by dbl',
    'select 1 as x into temp ctas_7',
    "select relpersistence from pg_class where relname = 'ctas_7'",
    'create temp table ctas_8 as select generate_series(1,3) g',
    'select sum(g) from ctas_8',
    'begin',
    'create table ctas_9 as select 5 as five',
    'rollback',
    'select * from ctas_9',
    "create table ctas_11 as select 'lit' as l, 1.50 as n, now()::date = current_date as b",
    'select * from ctas_11',
]


def test_create_table_as_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, CREATE_TABLE_AS) as got:
        assert got("CREATE TABLE ctas_n AS SELECT relname FROM pg_class LIMIT 1") == ("done", "SELECT 1")
        assert got("CREATE MATERIALIZED VIEW ctas_mv AS SELECT 1")[:2] == ("error", "0A000")


#: INSERT … ON CONFLICT over the primary key: DO NOTHING, DO UPDATE with EXCLUDED and a
#: WHERE, RETURNING of inserted and updated rows, and PostgreSQL's errors.
ON_CONFLICT = [
    'create table ups (id int primary key, v text, n int)',
    "insert into ups values (1, 'a', 1), (2, 'b', 2)",
    "insert into ups values (2, 'x', 0), (3, 'c', 3) on conflict do nothing",
    'select * from ups order by id',
    "insert into ups values (3, 'y', 9), (4, 'd', 4) on conflict (id) do nothing returning *",
    "insert into ups values (1, 'new', 10), (5, 'e', 5) on conflict (id) do update set v = excluded.v, n = ups.n + excluded.n returning id, v, n",
    'select * from ups order by id',
    "insert into ups as u values (1, 'again', 100) on conflict (id) do update set v = excluded.v where u.n > 1000",
    'select * from ups order by id',
    "insert into ups values (1, 'z', 0), (1, 'w', 0) on conflict (id) do update set v = excluded.v",
    "insert into ups values (6, 'f', 6), (6, 'g', 7) on conflict (id) do nothing",
    'select * from ups order by id',
    "insert into ups values (1, 'q', 1) on conflict (v) do nothing",
    "insert into ups values (1, 'q', 1) on conflict do update set v = 'q'",
    "insert into ups values (1, 'q', 1) on conflict on constraint ups_pkey do update set v = 'viaconstraint'",
    "insert into ups values (1, 'q', 1) on conflict on constraint nope do nothing",
    'select * from ups order by id',
    'create table ups_nopk (a int)',
    'insert into ups_nopk values (1) on conflict do nothing',
    'insert into ups_nopk values (1) on conflict (a) do nothing',
    "insert into ups (id, v) select g, 'gen' from generate_series(5, 8) g on conflict (id) do update set n = -1 returning *",
    'select * from ups order by id',
    "insert into ups values (null, 'nullkey', 0) on conflict do nothing",
    "insert into ups values (10, 'ten', 0) on conflict (id) do update set id = 11",
    'select * from ups order by id',
]


def test_insert_on_conflict_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, ON_CONFLICT).close()


#: Aggregates in subqueries: PostgreSQL evaluates one whose arguments refer only to an
#: outer query's columns in that outer query (one row for ``SELECT (SELECT max(o.x)) FROM t
#: o``), counting the columns inside a subquery of its arguments too; DuckDB counts only
#: those written directly in the arguments. Where the two would differ the proxy refuses.
AGGREGATE_LEVELS = [
    "CREATE TABLE al (k int, x int, g int)",
    "INSERT INTO al VALUES (1, 10, 1), (2, 20, 1), (3, 30, 2)",
    "CREATE TABLE au (k int, y int)",
    "INSERT INTO au VALUES (1, 100), (2, 200), (3, 300)",
    "SELECT (SELECT max(y) FROM au WHERE au.k = o.k) FROM al o ORDER BY 1",
    "SELECT (SELECT count(*)) FROM al o",
    "SELECT (SELECT sum(o.x + au.y) FROM au) FROM al o ORDER BY 1",
    "SELECT k, (SELECT max(y) FROM au WHERE au.k < al.k) FROM al ORDER BY 1",
    "SELECT count(*) FILTER (WHERE (SELECT true)) FROM al",
    "SELECT (SELECT max(x) OVER ()) FROM al o ORDER BY 1",
    "SELECT k FROM al WHERE x > (SELECT avg(y) / 10 FROM au WHERE au.k <> al.k) ORDER BY k",
    "SELECT (SELECT max(o.x)) FROM al o",
    "SELECT (SELECT max(x)) FROM al o",
    "SELECT (SELECT max(au.y) + sum(o.x) FROM au) FROM al o",
    "SELECT g, (SELECT array_agg(x ORDER BY x)) FROM al GROUP BY g ORDER BY 1",
    "SELECT EXISTS(SELECT max(al.x)) FROM al",
    "SELECT (SELECT max(0) FILTER (WHERE x > 1)) FROM al",
    "SELECT g, sum(x) FROM al GROUP BY g HAVING EXISTS (SELECT 1 FROM au WHERE sum(DISTINCT al.x) = au.y - 70) ORDER BY 1",
    "SELECT (SELECT sum(x) FROM au) FROM al",
]
AGGREGATES_OF_AN_OUTER_QUERY = [
    "SELECT (SELECT max((SELECT au.y FROM au WHERE au.k = o.k))) FROM al o",
    "SELECT (SELECT max((SELECT au.y FROM au WHERE au.k = l.k) + o.x) FROM al l WHERE l.k = o.k) FROM al o",
]


def test_aggregates_belong_to_the_query_postgresql_gives_them(proxy: ProxyServer, pg15: PgCluster) -> None:
    ref = Client(pg15.dsn(dbname=pg15.new_database("sem")))
    with _same_answers(proxy, pg15, AGGREGATE_LEVELS) as got:
        for sql in AGGREGATE_LEVELS[:4]:
            ref(sql)
        for sql in AGGREGATES_OF_AN_OUTER_QUERY:
            assert ref(sql)[0] == "rows", sql
            answer = got(sql)
            assert answer[:2] == ("error", "0A000") and "subquery in its arguments" in str(answer[2]), (sql, answer)
        # (PostgreSQL names the column with its table, DuckDB's binder without)
        assert got("SELECT k FROM al GROUP BY g")[:2] == ref("SELECT k FROM al GROUP BY g")[:2] == ("error", "42803")
    ref.close()


#: Operators and functions that answered differently without an error: || of bytea and of
#: jsonb (text concatenation), concat's bool printing, string_agg of bytea and with a NULL
#: delimiter, gcd/lcm's result types and range checks, PostgreSQL 16's numeric literals.
CONCATENATION_AND_NUMBERS = [
    "CREATE TABLE cj (i int, j jsonb, b bytea, t text, f1 varchar)",
    "INSERT INTO cj VALUES (1, '{\"k\": 1}', '\\xff', 'a', 'x'), (2, '[1, 2]', '\\xaa', 'b', 'y'),"
    " (3, NULL, NULL, NULL, 'x'), (4, '\"s\"', '\\x0001', 'c', 'z')",
    "SELECT i, j || '{\"z\": 0.000000001}', j || '[3]'::jsonb, '{\"a\": 1}'::jsonb || j, b || '\\xcd', '\\xcd' || b, b || b, b || 'x'::text FROM cj ORDER BY i",
    "SELECT '{\"a\":1, \"b\": 2}'::jsonb || '{\"b\":3, \"aa\": [1,2.50]}'::jsonb, '1'::jsonb || '2'::jsonb, '{}'::jsonb || '{}'::jsonb",
    "SELECT '{\"a\":1}'::jsonb || 'notjson'",
    "SELECT 'x'::text || '{\"a\":1}'::jsonb, pg_typeof(j || j), pg_typeof(b || b) FROM cj WHERE i = 1",
    "SELECT 3 || 4.0",
    "SELECT 1 || 2",
    "SELECT date '2020-01-02' || 'x', 'x' || timestamp '2020-01-01 10:00:00.5', interval '1 day 2 hours' || '', true || 'a', 1.50 || 'a'",
    "SELECT concat(1, 2, 'hello', true, false, to_date('20100309', 'YYYYMMDD')), concat_ws('#', 1, true, 1.5::float8, '{1,2}'::int[])",
    "SELECT concat(date '2010-03-09', 1.50, timestamp '2020-01-01 10:00', interval '1 day', '\\x01'::bytea, null::int)",
    "SELECT string_agg(b, '' ORDER BY i), string_agg(b, '\\x0102' ORDER BY i), string_agg(b, NULL ORDER BY i DESC) FROM cj",
    "SELECT string_agg(DISTINCT b, ''), string_agg(DISTINCT b, ',' ORDER BY b DESC), string_agg(t, NULL ORDER BY i) FROM cj",
    "SELECT string_agg(b, ',') OVER (ORDER BY i), pg_typeof(string_agg(b, '')) FROM cj GROUP BY i, b ORDER BY i",
    "SELECT string_agg(b, 'a'::text) FROM cj",
    "SELECT string_agg(DISTINCT f1::text, ',' ORDER BY f1) FROM cj",
    "SELECT string_agg(DISTINCT f1, ',' ORDER BY f1) FROM cj",
    "SELECT gcd((-2147483648)::int4, 0::int4)",
    "SELECT lcm(2147483647::int4, 2147483646::int4)",
    "SELECT gcd((-9223372036854775808)::int8, 0::int8)",
    "SELECT lcm((-9223372036854775808)::int8, 1::int8)",
    "SELECT gcd(12, 18), lcm(-4, 6), lcm(0, 5), gcd(0, 0), gcd(12::int8, -18), pg_typeof(gcd(1, 2)), pg_typeof(lcm(1::int8, 2))",
    "SELECT gcd(1::int2, 2::int2)",
    "SELECT 1_2_3",
    "SELECT 0x1f",
    "SELECT 1_000.5",
    "SELECT 'a_1', 1e3, x_1 FROM (SELECT 1 AS x_1) s",
    "SELECT pg_get_viewdef('nope')",
    "SELECT pg_get_viewdef('cj'), pg_get_viewdef('cj'::regclass), pg_get_viewdef(0)",
]


def test_concatenation_and_integer_functions_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, CONCATENATION_AND_NUMBERS) as got:
        for sql in ("SELECT concat('a', row(1, 2))", "SELECT pg_get_viewdef('pg_tables'::regclass)"):
            assert got(sql)[:2] == ("error", "0A000"), sql


#: A query without ORDER BY reads a table written by INSERTs (and DELETEs) in the order its
#: rows were inserted, as PostgreSQL's heap scan does: aggregates that keep their input's
#: order and LIMIT without ORDER BY answer the same.
INSERTION_ORDER = [
    "CREATE TABLE io (i int PRIMARY KEY, t text)",
    "INSERT INTO io VALUES (5, 'e'), (1, 'a'), (3, 'c')",
    "INSERT INTO io VALUES (2, 'b')",
    "BEGIN",
    "INSERT INTO io VALUES (9, 'i'), (4, 'd')",
    "SELECT array_agg(i), string_agg(t, ',') FROM io",
    "COMMIT",
    "DELETE FROM io WHERE i = 3",
    "SELECT array_agg(i), string_agg(t, ','), json_agg(i)::text FROM io",
    "SELECT i FROM io LIMIT 3",
    "SELECT array_agg(i) FROM (SELECT i FROM io WHERE i > 1) s",
]


def test_tables_are_read_in_insertion_order(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, INSERTION_ORDER).close()


#: The form PostgreSQL requires of a recursive CTE (DuckDB ran the forms it refuses), and
#: the column count of a CTE.
RECURSIVE_CTES = [
    "CREATE TABLE ry (a int)",
    "INSERT INTO ry SELECT generate_series(1, 10)",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM x WHERE n < 5) SELECT * FROM x ORDER BY n",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION SELECT n + 1 FROM (SELECT n FROM x) s WHERE n < 3) SELECT * FROM x ORDER BY n",
    "WITH RECURSIVE x(n) AS (SELECT 1 INTERSECT SELECT n + 1 FROM x) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 EXCEPT ALL SELECT n + 1 FROM x) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT n FROM x) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT n FROM x UNION ALL SELECT 1) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT a FROM ry WHERE a = 1 UNION ALL SELECT x.n + 1 FROM ry LEFT JOIN x ON x.n = ry.a WHERE n < 10) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT a FROM ry WHERE a = 1 UNION ALL SELECT x.n + 1 FROM x FULL JOIN ry ON x.n = ry.a WHERE n < 10) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM x WHERE n IN (SELECT * FROM x)) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM x ORDER BY 1) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM x LIMIT 10 OFFSET 1) SELECT * FROM x",
    "WITH RECURSIVE foo(i) AS (VALUES (1) UNION ALL (SELECT i + 1 FROM foo WHERE i < 10 UNION ALL SELECT i + 1 FROM foo WHERE i < 5)) SELECT * FROM foo",
    "WITH RECURSIVE foo(i) AS (VALUES (1) UNION ALL (SELECT i + 1 FROM foo WHERE i < 10 EXCEPT SELECT i + 1 FROM foo WHERE i < 5)) SELECT * FROM foo",
    "WITH RECURSIVE w(c) AS (WITH w(c) AS (SELECT 1) SELECT * FROM w) SELECT * FROM w",
    "WITH x(n, b) AS (SELECT 1) SELECT * FROM x",
    "WITH c AS (VALUES (1, 'a'), (2, 'b')) SELECT column1, column2 FROM c ORDER BY 1",
    "WITH c AS (VALUES (1) UNION ALL VALUES (2)) SELECT column1 FROM c ORDER BY 1",
    "WITH RECURSIVE r AS (VALUES (1) UNION ALL SELECT column1 + 1 FROM r WHERE column1 < 3) SELECT * FROM r",
]


def test_recursive_ctes_take_postgresqls_forms(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, RECURSIVE_CTES).close()


DISTINCT_ON = [
    "CREATE TABLE dn (a int, b int, c text)",
    "INSERT INTO dn VALUES (1, 2, 'x'), (1, 3, 'y'), (2, 1, 'z')",
    "SELECT DISTINCT ON (a) a, b FROM dn ORDER BY a, b DESC",
    "SELECT DISTINCT ON (a) a AS q, b FROM dn ORDER BY q, b",
    "SELECT DISTINCT ON (1) a, b FROM dn ORDER BY 1, 2",
    "SELECT DISTINCT ON (a) a, b FROM dn ORDER BY dn.a, b",
    "SELECT DISTINCT ON (b, a) a, b, c FROM dn ORDER BY a, b, c",
    "SELECT DISTINCT ON (a) a, b FROM dn ORDER BY b, a",
    "SELECT DISTINCT ON (a, b) a, b, c FROM dn ORDER BY a, c, b",
]


def test_distinct_on_leads_order_by_as_postgresql_requires(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, DISTINCT_ON).close()


#: row comparisons as RowCompareExpr: the first pair that is not equal decides, NULL when
#: it holds a NULL (keyset pagination's WHERE (a, b) > (…)); a row IS NULL when each field is.
ROW_COMPARISONS = [
    "CREATE TABLE rw (a text, b text)",
    "INSERT INTO rw VALUES ('a', 'b'), ('b', 'a'), ('a', NULL), ('a', 'a'), (NULL, 'z')",
    "SELECT a, b FROM rw WHERE (a, b) > ('a', 'a') ORDER BY a, b",
    "SELECT a, b FROM rw WHERE (a, b) <= ('a', 'b') ORDER BY a, b",
    "SELECT a, b, (a, b) = ('a', 'b'), (a, b) <> ('a', 'b'), (a, b) < ('b', NULL) FROM rw ORDER BY a, b",
    "SELECT ROW(1, 2) < ROW(1, NULL), ROW(1, 2) = ROW(1, NULL), ROW(1, 2) <> ROW(2, NULL), ROW(1, 2, 3) < ROW(1, NULL, 4)",
    "SELECT (1, 2) <= (1, 2), (1, 3) >= (1, 2), (2, 1) > (1, 5), (NULL, 1) < (1, 2)",
    "SELECT ROW(NULL, NULL) IS NULL, ROW(1, NULL) IS NULL, ROW(1, NULL) IS NOT NULL, ROW(1, 2) IS NOT NULL, ROW() IS NULL",
    "SELECT a, b, (a, b) IS NULL, (a, b) IS NOT NULL FROM rw ORDER BY a, b",
    "SELECT ROW() = ROW()",
    "SELECT (1, 2) = (1, 2, 3)",
    # functions only DuckDB has are none of PostgreSQL's
    "SELECT first(a) FROM rw",
    "SELECT list_value(1, 2)",
    "SELECT strftime(now(), '%Y')",
    "SELECT pg_typeof(NULL), pg_typeof('x'), pg_typeof(1)",
    "SELECT 'ab'::\"char\", '\\101'::\"char\", ''::\"char\"",
]


def test_rows_compare_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, ROW_COMPARISONS) as got:
        assert got("SELECT ROW('Jim', 'Beam')::text")[:2] == ("error", "0A000")


#: upper, lower, ILIKE and ~* under the C locale the proxy reports: ASCII letters only.
C_LOCALE_CASE = [
    "CREATE TABLE lc (t text)",
    "INSERT INTO lc VALUES ('Straße'), ('ÉCOLE'), ('école'), ('abc'), ('ABC')",
    "SELECT t, upper(t), lower(t) FROM lc ORDER BY t",
    "SELECT t FROM lc WHERE t ILIKE '%É%' ORDER BY t",
    "SELECT t FROM lc WHERE t ILIKE 'a_c' ORDER BY t",
    "SELECT t FROM lc WHERE t NOT ILIKE 'a%' ORDER BY t",
    "SELECT t FROM lc WHERE t ~* 'ab' ORDER BY t",
    "SELECT t FROM lc WHERE t ~* 'é' ORDER BY t",
    "SELECT 'É' ~* 'é', 'é' ~ '[[:alpha:]]', 'K' ~* '\u212a'",
    "SELECT 'Émile' ILIKE 'é%', 'a_c' ILIKE 'A\\_C', upper('ab  '::char(4)) || '|'",
]


def test_letter_case_follows_the_c_locale(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, C_LOCALE_CASE).close()


#: UPDATE … SET (a, b) = (…): a row's items assigned column by column, from the old row.
MULTI_ASSIGN = [
    "CREATE TABLE ma (id int PRIMARY KEY, a int, b int)",
    "INSERT INTO ma VALUES (1, 10, 20), (2, 30, 40), (3, 50, 60)",
    "UPDATE ma SET (a, b) = (b, a) WHERE id = 2",
    "UPDATE ma SET (a, b) = ROW(b, a + 1)",
    "UPDATE ma SET (a, b) = (1, 2, 3) WHERE id = 2",
    "UPDATE ma SET a = 1, a = 2 WHERE id = 2",
    "SELECT * FROM ma ORDER BY id",
]


def test_multiple_column_assignment(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, MULTI_ASSIGN) as got:
        assert got("UPDATE ma SET (a, b) = (SELECT 7, 8) WHERE id = 3")[:2] == ("error", "0A000")


#: GREATEST/LEAST of numeric values of several scales keep the chosen value's own scale;
#: integer overflow is PostgreSQL's message.
GREATEST_AND_OVERFLOW = [
    "CREATE TABLE gl (p numeric(10,2))",
    "INSERT INTO gl VALUES (9.99), (-1.00), (NULL)",
    "SELECT p, greatest(p, 0), least(p, 0) FROM gl ORDER BY p",
    "SELECT least(1, 2.5), greatest(1, 2.5), greatest(2.50, 2.5, 1), least(NULL, 2.00, 3)",
    "SELECT 2147483647 + 1",
    "SELECT 9223372036854775807::bigint * 2",
    "SELECT 32767::int2 + 1::int2",
    "SELECT 70000::int2",
    # GROUPING() is integer; every() is bool_and
    "SELECT a, b, grouping(a), grouping(a, b), sum(c) FROM (VALUES (1, 1, 1), (1, 2, 2), (2, 1, 3)) v(a, b, c)"
    " GROUP BY ROLLUP (a, b) ORDER BY a NULLS LAST, b NULLS LAST",
    "SELECT every(x > 0), every(x > 1) FROM (VALUES (1), (2)) v(x)",
]


def test_greatest_scales_and_integer_overflow(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, GREATEST_AND_OVERFLOW).close()


def test_posix_style_zones_are_refused(proxy: ProxyServer, pg15: PgCluster) -> None:
    """'UTC+3' is three hours west of Greenwich to PostgreSQL and east to ICU: a constant
    one is read as PostgreSQL reads it, one from a column is refused row by row."""
    with _same_answers(proxy, pg15, ["CREATE TABLE tzz (z text)", "INSERT INTO tzz VALUES ('UTC'), ('Europe/Paris')",
                                     "SELECT z, timestamp '2024-01-01 00:00' AT TIME ZONE z FROM tzz ORDER BY z",
                                     "SELECT timestamp '2024-01-01 00:00' AT TIME ZONE 'UTC+3'"]) as got:
        got("INSERT INTO tzz VALUES ('+03:00')")
        assert got("SELECT timestamp '2024-01-01 00:00' AT TIME ZONE z FROM tzz")[:2] == ("error", "0A000")


def test_nextval_beside_a_sort_or_limit_is_refused(proxy: ProxyServer, pg15: PgCluster) -> None:
    """PostgreSQL calls a volatile SELECT list after ORDER BY and LIMIT (10 values for
    LIMIT 10); DuckDB before (one per row read): refused rather than spend other values."""
    with _same_answers(proxy, pg15, [
        "CREATE SEQUENCE nv_s", "CREATE TABLE nv_t (a int)", "INSERT INTO nv_t SELECT generate_series(1, 100)",
        "SELECT a, nextval('nv_s') FROM nv_t WHERE a <= 3",
    ]) as got:  # fmt: skip
        for sql in ("SELECT a, nextval('nv_s') FROM nv_t ORDER BY a DESC LIMIT 3", "SELECT nextval('nv_s') FROM nv_t LIMIT 1"):
            assert got(sql)[:2] == ("error", "0A000"), sql
        assert got("SELECT currval('nv_s')") == ("rows", [("currval", 20)], [(3,)])


def test_copy_from_where_and_repeated_options(proxy: ProxyServer, pg15: PgCluster) -> None:
    """COPY FROM … WHERE stored every row (now 0A000); a repeated option is 42601 as in
    PostgreSQL."""
    import psycopg

    def copy(dsn: str, sql: str) -> str | None:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("CREATE TABLE IF NOT EXISTS cpw (a int, b int)")
            try:
                with c.cursor() as cur, cur.copy(sql) as cp:
                    cp.write(b"1,2\n3,4\n")
            except psycopg.Error as e:
                return e.sqlstate
            return None

    ref = pg15.dsn(dbname=pg15.new_database("copywhere"))
    assert copy(proxy.dsn(), "COPY cpw FROM STDIN (FORMAT csv, FORMAT csv)") == copy(ref, "COPY cpw FROM STDIN (FORMAT csv, FORMAT csv)") == "42601"
    assert copy(proxy.dsn(), "COPY cpw FROM STDIN (FORMAT csv) WHERE a = 1") == "0A000"


#: A SELECT of no columns (``SELECT FROM t``, ``EXISTS (SELECT FROM …)``) is PostgreSQL's; the
#: positions ORDER BY and GROUP BY name are checked against the output columns.
NO_COLUMNS = [
    "CREATE TABLE nc (a int)",
    "INSERT INTO nc VALUES (1), (2), (2)",
    "SELECT EXISTS (SELECT FROM nc WHERE a = 2), EXISTS (SELECT FROM nc WHERE a = 3)",
    "SELECT",
    "SELECT FROM nc",
    "SELECT FROM nc WHERE a > 1 ORDER BY a",
    "SELECT FROM nc GROUP BY a",
    "SELECT UNION SELECT",
    "SELECT UNION ALL SELECT",
    "SELECT FROM nc INTERSECT ALL SELECT FROM nc",
    "SELECT count(*) FROM (SELECT FROM nc) s",
    "SELECT * FROM (SELECT FROM nc) s",
    "SELECT a FROM nc WHERE NOT EXISTS (SELECT FROM nc n2 WHERE n2.a > nc.a) ORDER BY a",
    "VALUES (1) UNION SELECT",
    "SELECT 1 EXCEPT SELECT 1, 2",
    "SELECT FROM nc ORDER BY 1",
    "SELECT a FROM nc ORDER BY 2",
    "SELECT a, a FROM nc GROUP BY 3",
    "SELECT a FROM nc ORDER BY 0",
]


def test_select_of_no_columns(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, NO_COLUMNS) as got:
        assert got("SELECT FROM nc LIMIT 2") == ("rows", [], [(), ()])


#: SQL-level PREPARE/EXECUTE share the namespace of the protocol's prepared statements;
#: LOCK TABLE in the modes that block no writer (pg_dump takes ACCESS SHARE).
PREPARE_AND_LOCK = [
    "CREATE TABLE pt (a int, b text)",
    "INSERT INTO pt VALUES (1, 'x'), (2, 'y')",
    "PREPARE q1(int) AS SELECT * FROM pt WHERE a = $1",
    "EXECUTE q1(2)",
    "EXECUTE q1(1 + 1)",
    "EXECUTE q1('1')",
    "EXECUTE q1",
    "EXECUTE q1(1, 2)",
    "EXECUTE nope(1)",
    "PREPARE q1 AS SELECT 1",
    "PREPARE q2 AS SELECT $1::text || 'z'",
    "EXECUTE q2('a')",
    "PREPARE q3(int, text) AS INSERT INTO pt VALUES ($1, $2)",
    "EXECUTE q3(3, 'zz')",
    "SELECT * FROM pt ORDER BY a",
    "DEALLOCATE q1",
    "EXECUTE q1(2)",
    "PREPARE q4(nosuchtype) AS SELECT 1",
    "LOCK TABLE pt IN ACCESS SHARE MODE",
    "BEGIN",
    "LOCK TABLE pt IN ACCESS SHARE MODE",
    "LOCK pt IN ROW SHARE MODE",
    "LOCK TABLE nope",
    "ROLLBACK",
    # a prepared statement's result columns are fixed (PostgreSQL's plan cache)
    "CREATE TABLE pc AS SELECT 1::bigint AS q1, 2::bigint AS q2",
    "PREPARE pcs AS SELECT * FROM pc",
    "EXECUTE pcs",
    "ALTER TABLE pc ADD COLUMN q3 bigint",
    "EXECUTE pcs",
    "ALTER TABLE pc DROP COLUMN q3",
    "EXECUTE pcs",
    "COPY pc (q1, q2, q1) FROM STDIN",
    # a read-only transaction refuses DML on a table before reading a row
    "BEGIN READ ONLY",
    "UPDATE pt SET a = 0 WHERE false",
    "ROLLBACK",
    "BEGIN READ ONLY",
    "EXECUTE q3(9, 'x')",
    "ROLLBACK",
]


def test_prepare_execute_and_lock(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, PREPARE_AND_LOCK) as got:
        got("BEGIN")
        assert got("LOCK TABLE pt")[:2] == ("error", "0A000")  # (ACCESS EXCLUSIVE would block readers)
        got("ROLLBACK")


#: What pg_dump asks besides the catalogs: quote_literal of any value, pg_options_to_table.
QUOTING_AND_OPTIONS = [
    "SELECT quote_literal('abc'), quote_literal('a''b'), quote_literal(E'a\\\\b'), quote_literal(NULL), "
    "quote_nullable(NULL), quote_nullable('x')",
    "SELECT quote_literal(42), quote_literal(1.50), quote_literal(true), quote_literal(2.5::float8), "
    "quote_literal(date '2020-01-02'), quote_literal(array[1,2])",
    "SELECT quote_literal('x', 'y')",
    "SELECT * FROM pg_options_to_table(array['fillfactor=70', 'a=b=c', 'noval']) ORDER BY 1",
    "SELECT * FROM pg_options_to_table(null)",
    "SELECT o.* FROM (VALUES (array['k=v']), (null)) t(a), pg_options_to_table(t.a) o",
    "SELECT array_to_string(ARRAY(SELECT quote_ident(option_name) || ' ' || quote_literal(option_value) "
    "FROM pg_options_to_table('{x=1,y=2}'::text[]) ORDER BY option_name), ', ')",
]


def test_quoting_and_options_as_pg_dump_reads_them(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, QUOTING_AND_OPTIONS).close()


#: A table's row keeps its own field names when FROM renames its columns.
ROW_NAMES = [
    "CREATE TABLE rn (q1 int, q2 text)",
    "INSERT INTO rn VALUES (1, 'a')",
    "SELECT row_to_json(i) FROM rn i(x, y)",
    "SELECT row_to_json(i) FROM rn i(x)",
    "SELECT to_json(i), to_jsonb(i) FROM rn i(x, y)",
    "SELECT row_to_json(s) FROM (SELECT * FROM rn) s(m, n)",
]


def test_renamed_table_rows_keep_their_field_names(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, ROW_NAMES) as got:
        # DuckDB's TIMETZ keeps six fractional digits: a narrower timetz(p) is refused
        assert got("SELECT '12:34:56.123456+02'::timetz(4)")[:2] == ("error", "0A000")


def test_a_parameter_with_trailing_junk_is_a_syntax_error(proxy: ProxyServer, pg15: PgCluster) -> None:
    """PostgreSQL 15 reads ``$1a`` as one bad token; the parser here as ``$1 AS a``."""
    _same_answers(proxy, pg15, ["PREPARE pj AS SELECT $1a", "SELECT $1a", "PREPARE pk AS SELECT $1 a"]).close()


#: Errors DuckDB raises in its own words for what PostgreSQL words otherwise.
DUCKDB_WORDED = [
    'create table ci (a bigint, b text)',
    "insert into ci values (1, '1')",
    'select * from ci where a in (select b from ci)',
    'select * from ci where b in (select a from ci)',
    'select * from ci where a = any (select b from ci)',
    'SELECT CAST(4567890123456789::int8 AS oid)',
    'SELECT CAST(-1::int8 AS oid)',
    'SELECT * FROM generate_series(1::int8, 10::int8, 0)',
    "select * from generate_series('2020-01-01 00:00'::timestamp, '2020-01-02 03:00'::timestamp, '0 hour'::interval)",
]


def test_errors_duckdb_words_its_own_way_are_postgresqls(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, DUCKDB_WORDED).close()


#: Integer shifts as C's on PostgreSQL's types: the count modulo the width, a left shift
#: wrapping around (DuckDB refuses a negative value or a count past the width).
SHIFTS = [
    "SELECT -1 << 2, (-8) >> 1, 1 << 31, 1::int8 << 63, (-1)::int2 << 3",
    "SELECT 1 << 32, 1 << -1, 5 >> 33, (-5) >> 1, 32767::int2 << 1, (-32768)::int2 >> 15, 1::int8 << 64, (-9)::int8 >> 2",
    "SELECT pg_typeof(1::int2 << 1), pg_typeof(1 << 1), pg_typeof(1::int8 >> 1)",
    "SELECT 1 << 2::int8",
    "SELECT x << 3, x >> 1 FROM (VALUES (7), (-7), (NULL::int)) v(x) ORDER BY x NULLS FIRST",
]


def test_integer_shifts_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, SHIFTS).close()


#: A value of another type assigned to a text, varchar or character column goes through
#: its output function (the session's TimeZone and extra_float_digits; boolean's own
#: cast) and is then held to the column's length: 12345 into varchar(3) is 22001, as
#: 'abcd' is (both were stored, the first silently; a timestamp was stored as Arrow
#: printed it).
ASSIGNED_TEXT = [
    "CREATE TABLE at1 (b varchar(3), c char(2), t text, v varchar(40))",
    "INSERT INTO at1 (b) VALUES (12345)",
    "INSERT INTO at1 (b) SELECT 12345",
    "INSERT INTO at1 (c) VALUES (123)",
    "INSERT INTO at1 (b) SELECT true",
    "INSERT INTO at1 (b) VALUES (1.5)",
    "INSERT INTO at1 (b) SELECT 1.5::float8",
    "INSERT INTO at1 (c) SELECT 7",
    "INSERT INTO at1 (t, v) VALUES (date '2020-01-02', timestamp '2020-01-02 03:04:05')",
    "INSERT INTO at1 (t, v) SELECT timestamptz '2020-01-02 03:04:05+00', time '01:02:03'",
    "INSERT INTO at1 (t, v) SELECT 'Infinity'::float8, 'NaN'::float8",
    "INSERT INTO at1 (t, v) SELECT 1e20::float8, 0.1::float4",
    "INSERT INTO at1 (t, v) SELECT 1.50::numeric, false",
    "INSERT INTO at1 (t, v) SELECT interval '1 day 02:00', '{1,2}'::int[]",
    "INSERT INTO at1 (t, v) SELECT '\\x0001'::bytea, ARRAY[1.5, NULL]::float8[]",
    "SET TimeZone = 'Europe/Berlin'",
    "INSERT INTO at1 (t) SELECT timestamptz '2020-07-02 03:04:05+00'",
    "SET extra_float_digits = 3",
    "INSERT INTO at1 (t) SELECT 0.1::float8 + 0.2",
    "RESET ALL",
    "UPDATE at1 SET b = 12345 WHERE t = '1 day 02:00:00'",
    "UPDATE at1 SET c = 9 WHERE t = '1 day 02:00:00'",
    "SELECT * FROM at1 ORDER BY t, v, b, c",
]


def test_values_of_other_types_assigned_to_text_columns_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, ASSIGNED_TEXT).close()


#: A multi-row VALUES of an INSERT converts each item to its column (no common type of
#: the VALUES column first): 2.5 (numeric) into an integer is 3, 2.5::float8 is 2 (the
#: rows were unified as float8 and both became 2).
VALUES_ITEMS = [
    "CREATE TABLE vi (i int, s int2, n numeric(5,1), u numeric, f float8, t text)",
    "INSERT INTO vi (i) VALUES (2.5::float8), (3.5::float8), (-2.5::float8), (2.5), (-2.5), (0.5::float4)",
    "INSERT INTO vi (i) VALUES ('5'), ('6')",
    "INSERT INTO vi (i) VALUES (1e10), (1)",
    "INSERT INTO vi (s) VALUES (40000.0::float8), (1)",
    "INSERT INTO vi (n, u) VALUES (2.25, 1.50), (1, 2.000), (2.25::float8, 0.1::float4)",
    "INSERT INTO vi (f, t) VALUES (1, 'a'), (2.5, 'b')",
    "INSERT INTO vi (i, t) VALUES (DEFAULT, 'd'), (NULL, 'e')",
    "INSERT INTO vi (i) VALUES (1), (2) RETURNING *",
    "SELECT * FROM vi ORDER BY i NULLS FIRST, s, n, u, f, t",
]


def test_values_items_convert_to_their_columns_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, VALUES_ITEMS).close()


#: Date/time values assigned to a column of another date/time type convert in the
#: session's TimeZone, as PostgreSQL's casts (a timestamptz was stored as its UTC wall
#: time in a timestamp column, a timestamp read as UTC into a timestamptz one); numbers,
#: booleans and dates do not turn into one another (42804).
ASSIGNED_CLOCKS = [
    "SET TimeZone = 'America/New_York'",
    "CREATE TABLE ac1 (d date, ts timestamp, tz timestamptz, tm time, b bool, i interval)",
    "INSERT INTO ac1 (d, ts, tz) SELECT timestamptz '2020-01-02 03:04:05+00', timestamptz '2020-01-02 03:04:05+00', timestamp '2020-01-02 03:04:05'",
    "INSERT INTO ac1 (d, ts, tz) VALUES (timestamptz '2020-01-02 03:04:05+00', date '2020-05-06', date '2020-05-06')",
    "INSERT INTO ac1 (tm) SELECT timestamptz '2020-01-02 03:04:05+00'",
    "INSERT INTO ac1 (b) SELECT 1",
    "INSERT INTO ac1 (b) VALUES ('yes'), ('0')",
    "INSERT INTO ac1 (i) SELECT time '01:02:03'",
    "SET TimeZone = 'Europe/Berlin'",
    "INSERT INTO ac1 (tz) VALUES (timestamp '2021-03-28 02:30:00'), (timestamp '2021-10-31 02:30:00')",
    "INSERT INTO ac1 (ts, d) SELECT timestamptz '2021-03-28 00:30:00+00', timestamptz '1969-12-31 23:30:00+00'",
    "UPDATE ac1 SET d = 5 WHERE false",
    "INSERT INTO ac1 (d) SELECT 1.5",
    "UPDATE ac1 SET ts = tz WHERE tz IS NOT NULL",
    "SELECT * FROM ac1 ORDER BY d, ts, tz, tm, b, i",
]


def test_date_time_values_assigned_across_types_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, ASSIGNED_CLOCKS).close()


_MATRIX_TARGETS = [
    "int2", "int4", "int8", "numeric(6,2)", "numeric", "float4", "float8", "text", "varchar(5)",
    "char(3)", "bool", "date", "time", "timestamp", "timestamptz", "interval", "uuid", "json",
    "jsonb", "bytea", "int4[]", "text[]", "float8[]",
]  # fmt: skip
#: Values of every kind but text (a string may be an untyped literal: the column's input
#: function reads it, see sql-server.md's departures).
_MATRIX_SOURCES = [
    "1", "70000", "2.5", "2.5::float8", "true", "date '2020-01-02'",
    "timestamp '2020-01-02 03:04:05.5'", "timestamptz '2020-01-02 03:04:05+00'",
    "time '01:02:03'", "interval '1 day 2 hours'", "'{1,2}'::int[]", "'\\x01'::bytea",
    "12345678901", "-0.0::float8", "NULL::int",
]  # fmt: skip


def _assignment_matrix() -> list[str]:
    out = ["SET TimeZone = 'Asia/Kolkata'"]
    for i, t in enumerate(_MATRIX_TARGETS):
        out.append(f"CREATE TABLE am{i} (id int, c {t})")
        out += [f"INSERT INTO am{i} (id, c) SELECT {k}, {v}" for k, v in enumerate(_MATRIX_SOURCES)]
        out += [f"INSERT INTO am{i} (id, c) VALUES (-1, {v})" for v in _MATRIX_SOURCES[:6]]
        out.append(f"UPDATE am{i} SET c = 7 WHERE id = 1")
        out.append(f"UPDATE am{i} SET c = timestamptz '2021-06-01 12:00:00+00' WHERE id = 1")
        out.append(f"SELECT id, c::text FROM am{i} ORDER BY id, 2")
    return out


def test_every_kind_of_value_assigned_to_every_column_type_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    """Assignment (INSERT … SELECT, UPDATE) of each kind of value to each column type:
    PostgreSQL's assignment casts, its 42804 where there is none, the values it stores."""
    _same_answers(proxy, pg15, _assignment_matrix()).close()


#: A quoted name cast to a reg* type is read by parse analysis (coerce_type calls the
#: type's input function), so a missing one fails the statement where it would never run;
#: a text value cast so is read where it runs.
REG_LITERALS = [
    "CREATE TABLE rr (a int)",
    "SELECT CASE WHEN false THEN 'nope'::regclass END",
    "SELECT 1 WHERE false AND 'nope'::regtype IS NULL",
    "SELECT 'rr'::regclass, CAST('public.rr' AS regclass), 'int4'::regtype, 'rr'::regclass::text",
    "SELECT CASE WHEN false THEN nextval('noseq') END",
    "SELECT CASE WHEN false THEN pg_relation_size('nosuch') END",
    "SELECT pg_table_size('nosuch'), pg_total_relation_size(NULL)",
    "SELECT 'nosuch'::text::regclass FROM rr",
    "SELECT a FROM rr WHERE 'nons'::regnamespace IS NULL",
]


def test_reg_literals_are_read_at_parse_analysis(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, REG_LITERALS).close()


#: FETCH FIRST … WITH TIES (the rows after OFFSET, the first n and every row sorting equal
#: to the n-th; a NULL count is no limit, 0 none), and LIMIT/OFFSET's refusals of a
#: negative count with PostgreSQL's codes (2201W, 2201X) rather than DuckDB's words.
WITH_TIES = [
    "CREATE TABLE wt (a int, b text)",
    "INSERT INTO wt VALUES (1, 'a'), (1, 'b'), (2, 'c'), (2, 'd'), (3, 'e'), (NULL, 'f')",
    "SELECT a FROM wt ORDER BY a FETCH FIRST 1 ROW WITH TIES",
    "SELECT * FROM wt ORDER BY a FETCH FIRST 3 ROWS WITH TIES",
    "SELECT b FROM wt ORDER BY a DESC NULLS LAST OFFSET 1 FETCH FIRST 2 ROWS WITH TIES",
    "SELECT * FROM wt ORDER BY a NULLS FIRST FETCH FIRST 1 ROW WITH TIES",
    "SELECT a, count(*) FROM wt GROUP BY a ORDER BY 2 DESC, a FETCH FIRST 1 ROW WITH TIES",
    "SELECT a AS x, b FROM wt ORDER BY x FETCH FIRST 2 ROWS WITH TIES",
    "SELECT * FROM wt ORDER BY a FETCH FIRST 10 ROWS WITH TIES",
    "SELECT * FROM wt ORDER BY a FETCH FIRST 0 ROWS WITH TIES",
    "SELECT * FROM wt ORDER BY a FETCH FIRST ROWS WITH TIES",
    "SELECT * FROM wt ORDER BY a FETCH FIRST (NULL + 1) ROWS WITH TIES",
    "SELECT * FROM wt ORDER BY a OFFSET 4 FETCH FIRST 1 ROW WITH TIES",
    "SELECT * FROM (SELECT * FROM wt ORDER BY a FETCH FIRST 1 ROW WITH TIES) s ORDER BY b",
    "SELECT * FROM wt FETCH FIRST 2 ROWS WITH TIES",
    "SELECT * FROM wt ORDER BY a FETCH FIRST NULL ROWS WITH TIES",
    "SELECT * FROM wt ORDER BY a FETCH FIRST -1 ROWS WITH TIES",
    "SELECT * FROM wt ORDER BY a OFFSET -1 FETCH FIRST 1 ROW WITH TIES",
    "SELECT * FROM wt ORDER BY a FETCH FIRST 1 ROW WITH TIES FOR UPDATE SKIP LOCKED",
    "SELECT * FROM wt LIMIT -1",
    "SELECT * FROM wt OFFSET -2",
    "SELECT * FROM wt ORDER BY a LIMIT (SELECT -1)",
    "SELECT * FROM wt ORDER BY a, b LIMIT NULL",
]


def test_fetch_first_with_ties_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same_answers(proxy, pg15, WITH_TIES).close()


#: UPDATE and DELETE under a WITH of read-only CTEs (an ORM's bulk update from a VALUES
#: list); a data-modifying CTE, and a RETURNING subquery reading what the statement
#: writes (PostgreSQL's sees it as before the statement), are refused.
WITH_WRITES = [
    "CREATE TABLE wu (id int PRIMARY KEY, v text, n int)",
    "INSERT INTO wu SELECT g, 'v' || g, g FROM generate_series(1, 6) g",
    "WITH data(id, v) AS (VALUES (1, 'one'), (2, 'two')) UPDATE wu SET v = data.v FROM data WHERE wu.id = data.id",
    "WITH big AS (SELECT id FROM wu WHERE n > 4) DELETE FROM wu WHERE id IN (SELECT id FROM big) RETURNING id",
    "WITH x AS (SELECT 3 AS id) UPDATE wu SET v = 'three' WHERE id = (SELECT id FROM x) RETURNING v",
    "WITH x AS (SELECT 3 AS id) DELETE FROM wu WHERE id = (SELECT id FROM x) RETURNING *",
    "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 2) UPDATE wu SET n = -n WHERE id IN (SELECT i FROM r)",
    "WITH k AS (SELECT 4 AS id) UPDATE wu SET n = $$7$$::int WHERE id IN (SELECT id FROM k) RETURNING id, n",
    "SELECT * FROM wu ORDER BY id",
]


def test_update_and_delete_under_with_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    with _same_answers(proxy, pg15, WITH_WRITES) as got:
        for sql in (
            "WITH d AS (DELETE FROM wu WHERE id = 4 RETURNING id) UPDATE wu SET v = 'x' WHERE id IN (SELECT id FROM d)",
            "WITH m AS (SELECT max(n) AS mx FROM wu) UPDATE wu SET n = 1 WHERE id = 1 RETURNING (SELECT mx FROM m)",
            "UPDATE wu SET n = 10 WHERE id = 1 RETURNING n, (SELECT max(n) FROM wu)",
            "DELETE FROM wu WHERE id = 2 RETURNING (SELECT count(*) FROM wu)",
        ):
            assert got(sql)[:2] == ("error", "0A000"), sql
        assert got("SELECT id, n FROM wu ORDER BY id")[2] == [(1, -1), (2, -2), (4, 7)]
