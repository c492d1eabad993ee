"""float8 and float4 against a real PostgreSQL 15 (float.c): the errors PostgreSQL raises
where IEEE arithmetic would answer (overflow, underflow, division by zero, logarithms, roots
and powers outside their domain, trigonometry of an infinity, casts out of range), the
values it gives instead (NaN / 0, half-to-even rounding, exact degree trigonometry), and
floats printed under every extra_float_digits from -15 to 3 — in result columns, arrays,
records, casts to text and COPY. Floats come back as their text, as a client reads them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import hypothesis.strategies as st
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from psycopg.types.string import TextLoader

from tests.pgcluster import PgCluster
from tests.pgcompare import Client
from tests.proxy import ProxyServer

DIGITS = (-15, 0, 1, 3)
_names = itertools.count(1)


def _as_text(c: Client) -> Client:
    """Floats (and their arrays) as the server's text: 1e+05 and 100000 must not compare equal."""
    for t in ("float4", "float8", "record"):
        c.conn.adapters.register_loader(t, TextLoader)
    return c


@pytest.fixture(scope="module")
def clients(proxy: ProxyServer, pg15: PgCluster) -> Iterator[tuple[Client, Client]]:
    pg15.psql("CREATE DATABASE floats_vs")
    with Client(pg15.dsn(dbname="floats_vs")) as ref, Client(proxy.dsn()) as got:
        yield _as_text(ref), _as_text(got)


def _same(clients: tuple[Client, Client], statements: list[str]) -> None:
    ref, got = clients
    for sql in statements:
        if sql.startswith(RECORD):  # (a table's row type has an OID of its own in PostgreSQL)
            expected, answer = ref(sql[len(RECORD):]), got(sql[len(RECORD):])
            assert (answer[0], answer[2:]) == (expected[0], expected[2:]), sql
        else:
            assert got(sql) == ref(sql), sql


#: Marks a statement whose rows are whole records: their text is compared, not their type.
RECORD = "-- rows of records\n"


#: The cases PostgreSQL's float8.sql found answered without an error, and the rest of
#: float.c's checks: each must raise PostgreSQL's SQLSTATE and message.
ERRORS = [
    "SELECT power(float8 '0', float8 '-inf')",
    "SELECT power(float8 '-inf', float8 '3.5')",
    "SELECT float8 '-8' ^ float8 '0.5'",
    "SELECT float8 '0' ^ float8 '-1'",
    "SELECT float8 '10' ^ float8 '1e200'",
    "SELECT float8 '10' ^ float8 '-1e200'",
    "SELECT 2 ^ 1024",
    "SELECT ln(0::float8)", "SELECT ln(-1::float8)", "SELECT log(0::float8)", "SELECT log(-1::float8)",
    "SELECT log10(-1::float8)", "SELECT ln(float8 '-inf')",
    "SELECT sqrt(-1::float8)", "SELECT |/ float8 '-1'", "SELECT sqrt(float8 '-inf')",
    "SELECT exp(float8 '1000')", "SELECT exp(float8 '-1000')", "SELECT exp(float8 '-745.2')",
    "SELECT acosh(float8 '-infinity')", "SELECT acosh(float8 '0.5')",
    "SELECT atanh(float8 'infinity')", "SELECT atanh(float8 '-1.5')",
    "SELECT sin(float8 'infinity')", "SELECT cos(float8 '-infinity')", "SELECT tan(float8 'infinity')",
    "SELECT cot(float8 '-infinity')", "SELECT asin(float8 '2')", "SELECT acos(float8 '-1.01')",
    "SELECT sind(float8 'infinity')", "SELECT cosd(float8 '-infinity')", "SELECT tand(float8 'infinity')",
    "SELECT cotd(float8 'infinity')", "SELECT asind(float8 '2')", "SELECT acosd(float8 '-2')",
    "SELECT float8 '1e200' * float8 '1e200'", "SELECT float8 '1e-200' * float8 '1e-200'",
    "SELECT float8 '1e308' + float8 '1e308'", "SELECT float8 '-1e308' - float8 '1e308'",
    "SELECT float8 '1e300' / float8 '1e-300'", "SELECT float8 '1e-300' / float8 '1e300'",
    "SELECT float8 '5e-324' / 2", "SELECT float8 '1' / float8 '0'", "SELECT float8 '-inf' / 0",
    "SELECT 1 / float8 '0'", "SELECT float8 '1' / '0'",
    "SELECT float4 '1e30' * float4 '1e30'", "SELECT float4 '1e-30' * float4 '1e-30'",
    "SELECT float4 '3e38' + float4 '3e38'", "SELECT float4 '1' / float4 '0'", "SELECT float4 '1e-45' / '3'",
    "SELECT degrees(float8 '1e308')", "SELECT radians(float8 '5e-324')",
    "SELECT float8 '1e40'::float4", "SELECT float8 '-1e40'::float4", "SELECT float8 '1e-50'::float4",
    "SELECT float4(float8 '1e40')", "SELECT '1e40'::numeric::float4",
    "SELECT float8 '2147483647.5'::int4", "SELECT float8 '-2147483649'::int4", "SELECT float8 'nan'::int4",
    "SELECT float8 '32767.5'::int2", "SELECT float8 '-32769'::int2", "SELECT float8 'inf'::int2",
    "SELECT float8 '9223372036854775807'::int8", "SELECT float8 '-inf'::int8", "SELECT float8 'nan'::int8",
    "SELECT float4 '1e10'::int4", "SELECT float4 'nan'::int2", "SELECT float4 '1e19'::int8",
    "SELECT float8 '5' % 2", "SELECT float4 '5' % float4 '2'", "SELECT 1.5 % float8 '1'",
    "SELECT mod(float8 '5', 2)", "SELECT div(float8 '7', 2)", "SELECT round(float8 '1.5', 1)",
    "SELECT trunc(float4 '1.5', 1)", "SELECT log(2::float8, 8::float8)",
    "SELECT width_bucket(float8 '5', 3, 4, 0)", "SELECT width_bucket(float8 'nan', 3, 4, 2)",
    "SELECT width_bucket(float8 '5', '-inf', 4, 2)", "SELECT width_bucket(float8 '5', 3, 3, 2)",
    "SELECT float8 '1' + 'x'", "SELECT float4 '1' * ''", "SELECT float4send(1.5::float8)",
]  # fmt: skip

#: Values PostgreSQL answers, where DuckDB's own would differ or raise.
VALUES = [
    "SELECT float8 'nan' / float8 '0', float8 'nan' / 0, float4 'nan' / float4 '0'",
    "SELECT float8 'inf' + 1, float8 'inf' * float8 'inf', float8 '-inf' - float8 'inf', float8 'inf' / float8 'inf'",
    "SELECT float8 '42' / float8 'inf', float8 '0' * float8 'inf', float8 '1e308' * float8 'inf'",
    "SELECT float8 'nan' ^ 0, 1 ^ float8 'nan', float8 '-inf' ^ 3, float8 '-inf' ^ -3, float8 '-inf' ^ 2",
    "SELECT float8 '0.5' ^ float8 'inf', float8 '2' ^ float8 '-inf', float8 '-1' ^ float8 'inf', 2 ^ -1070",
    "SELECT exp(float8 '-inf'), exp(float8 'inf'), exp(float8 'nan'), exp(float8 '-710'), exp(1)",
    "SELECT ln(float8 'inf'), ln(float8 'nan'), sqrt(float8 '-0'), |/ float8 '64', ||/ float8 '27', ||/ float8 '-27'",
    "SELECT cbrt(float8 '5e-324'), cot(float8 '0'), cot(float8 '-0'), atanh(float8 '1'), atanh(float8 '-1')",
    "SELECT sinh(float8 '1000'), cosh(float8 '-1000'), tanh(float8 '-inf'), asinh(float8 'inf'), acosh(float8 'nan')",
    "SELECT sin(float8 'nan'), asin(float8 'nan'), atan(float8 'inf'), atan2(1, float8 'nan'), atan2(0, -1)",
    "SELECT sinh(float8 '1'), cosh(float8 '1'), tanh(float8 '1'), asinh(float8 '1'), acosh(float8 '2'), atanh(float8 '0.5')",
    "SELECT round(float8 '2.5'), round(float8 '-2.5'), round(float8 '3.5'), round(float8 '-0.5'), round(float4 '0.5')",
    "SELECT trunc(float8 '-0.5'), ceil(float8 '-0.5'), floor(float8 '-0'), ceiling(float4 '1.5'), trunc(float8 'nan')",
    "SELECT sign(float8 '-0'), sign(float8 'nan'), sign(float8 '-inf'), sign(float4 '2'), sign(3)",
    "SELECT float8 '2.5'::int4, float8 '3.5'::int2, float8 '-2.5'::int8, float8 '-0.5'::int4, float4 '2.5'::int4",
    "SELECT float8 '-2147483648.5'::int4, float8 '2147483647.4'::int4, float8 '-32768.5'::int2",
    "SELECT float8 '3.4028235e38'::float4, float8 'inf'::float4, float8 'nan'::float4, float8 '-0'::float4",
    "SELECT - float8 '0', - float8 '-0', @ float8 '-1', @ float8 '-0', - float4 '1.5', @ float4 '-2'",
    "SELECT degrees(float8 '5e-324'), degrees(float8 'nan'), radians(float8 '-inf'), degrees(1), radians(180)",
    "SELECT 1 + float4 '1', float4 '1' + 1.5, float4 '1' * '2', float4 '1' / float4 '3', float4 '1' / 3, 1 / float8 '3'",
    "SELECT pg_typeof(1 + float4 '1'), pg_typeof(float4 '1' - '1'), pg_typeof(float4 '1' * float8 '1'), pg_typeof(|/ 16.0)",
    "SELECT pg_typeof(- float4 '1'), pg_typeof(@ float4 '1'), pg_typeof(sign(float4 '1')), pg_typeof(2 ^ 3), pg_typeof(sqrt(2))",
    "SELECT float4 '0.1' = 0.1, float4 '0.1' = float8 '0.1', 16777217 = float4 '16777216', float4 '0.1' = '0.1', float8 '0.1' = 0.1",
    "SELECT sqrt('4'), sin('1'), float8('1.5'), float8(4567890123456789::int8), float4(1.5)",
    "SELECT float8send('2.2250738585072014E-308'::float8), float8send(float8 '-0'), float4send(float4 '1.5'), float4send('-inf')",
    "SELECT x, sind(x), cosd(x), tand(x), cotd(x) FROM (VALUES (0), (30), (45), (60), (90), (135), (180), (210), (270), (330), (360), (-30), (720)) t(x)",
    "SELECT x, asind(x), acosd(x), atand(x) FROM (VALUES (-1), (-0.5), (0), (0.5), (1)) t(x)",
    "SELECT atand(float8 '-inf'), atand(float8 'inf'), atan2d(1, 1), atan2d(-10, 0), atan2d(0, -10), sind(float8 'nan')",
    "SELECT width_bucket(float8 'inf', 1, 10, 10), width_bucket(float8 '-inf', 1, 10, 10), width_bucket(5.5::float8, 10, 1, 3)",
    "SELECT x, width_bucket(x::float8, 10, 100, 9), width_bucket(x::float8, 100, 10, 9) FROM generate_series(0, 110, 10) x",
    "SELECT width_bucket(0.5e308::float8, -1e308, 1e308, 10), width_bucket(10.5::float8, -1e308, 1e308, 2147483647)",
    "SELECT 1e14::float8 || 'x', 'x' || float4 '0.1', concat(1e14::float8, '|', float4 '1e-5'), concat_ws(',', 1.5::float8, 1e20::float8)",
    "SELECT (1e14::float8)::text, (1 / 3::float8)::text, (1 / float4 '3')::text, format('%s', 1e14::float8), ARRAY[1e14::float8]::text",
    "SELECT array_to_string(ARRAY[1e14::float8, NULL, 1 / 3::float8], ','), array_to_string(ARRAY[float4 '0.1', 1e-5], '|')",
]  # fmt: skip

#: A table of float8.sql's values, through operators and functions as float8.sql uses them.
TABLE = [
    "CREATE TABLE f8 (id int, f1 float8, f4 float4)",
    "INSERT INTO f8 VALUES (1, '0.0', '0.0'), (2, '1004.30', '1004.3'), (3, '-34.84', '-34.84'), "
    "(4, '1.2345678901234e+200', '1.2345678e+20'), (5, '1.2345678901234e-200', '1.2345678e-20')",
    "SELECT id, f1 * '-10', f1 + '-10', f1 / '-10', f1 - '-10', f4 * '-10', f4 / 3 FROM f8 ORDER BY id",
    "SELECT id, f1 ^ '2.0', |/ abs(f1), ||/ f1, exp(ln(f1)) FROM f8 WHERE f1 > '1e-100' AND f1 < '1e100' ORDER BY id",
    "SELECT id, |/ f1, ||/ f1, exp(ln(f1)) FROM f8 WHERE f1 > '0.0' ORDER BY id",
    "SELECT id, round(f1), trunc(f1), ceil(f1), floor(f1), sign(f1), @ f1, - f4 FROM f8 ORDER BY id",
    "SELECT f.f1 * '1e200' FROM f8 f",
    "SELECT f.f1 ^ '1e200' FROM f8 f WHERE f.f1 > '1'",  # (rows may be computed in another order:
    "SELECT f.f1 ^ '1e200' FROM f8 f WHERE f.f1 < '1' AND f.f1 > '0'",  # each failing row raises the same)
    "SELECT ln(f.f1) FROM f8 f WHERE f.f1 = '0.0'",
    "SELECT ln(f.f1) FROM f8 f WHERE f.f1 < '0.0'",
    "SELECT exp(f.f1) FROM f8 f WHERE f.f1 > '1'",
    "SELECT exp(- f.f1) FROM f8 f WHERE f.f1 > '1'",
    "SELECT f.f1 / '0.0' FROM f8 f",
    "SELECT f.f4 * f.f4 * f.f4 FROM f8 f WHERE f.f4 > '1'",
    "SELECT f.f4 * f.f4 * f.f4 FROM f8 f WHERE f.f4 < '1'",
    "SELECT id, (f1 * 2 + f1 / 3) * (f1 - 1), f1 * f1 * f1 FROM f8 WHERE abs(f1) < 1e10 ORDER BY id",
    "SELECT id, f1, f4, ARRAY[f1, f1 / 3], ARRAY[f4] FROM f8 ORDER BY id",
    RECORD + "SELECT f8 FROM f8 ORDER BY id",
    "SELECT sum(f1), sum(f4), pg_typeof(sum(f1)), pg_typeof(sum(f4)) FROM f8 WHERE id < 4",
    "DROP TABLE f8",
]  # fmt: skip


#: A float8 assigned to a real column is dtof's cast: 22003 where it leaves float4's range.
ASSIGNMENTS = [
    "CREATE TABLE asg (id int PRIMARY KEY, f float8, r float4)",
    "INSERT INTO asg VALUES (1, 1e300, 1), (2, 2, 2), (3, 1e-300, 3)",
    "INSERT INTO asg VALUES (4, 1, float8 '1e300')",
    "INSERT INTO asg VALUES (4, 1, float8 '1e-50')",
    "INSERT INTO asg VALUES (4, 1, 1e300)",
    "INSERT INTO asg SELECT 5, f, f FROM asg WHERE id = 1",
    "INSERT INTO asg SELECT 5, f, f FROM asg WHERE id = 3",
    "UPDATE asg SET r = f WHERE id = 1",
    "UPDATE asg SET r = f WHERE f > 1e299",
    "UPDATE asg SET r = f * 1e-320 WHERE id = 2",
    "UPDATE asg SET r = f WHERE id = 3",
    "INSERT INTO asg VALUES (6, 'inf', float8 'inf'), (7, 'nan', float8 'nan'), (8, '-0', float8 '-0'), (9, 1, float8 '3.4028235e38')",
    "SELECT * FROM asg ORDER BY id",
    "DROP TABLE asg",
]


def test_floats_assigned_to_real_columns_as_postgresql(clients: tuple[Client, Client]) -> None:
    _same(clients, ASSIGNMENTS)


def test_bound_floats_assigned_to_real_columns_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    """The single-row INSERT and key UPDATE paths that skip DuckDB check the range too."""
    answers = []
    for dsn in (pg15.dsn(dbname="floats_vs"), proxy.dsn()):
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE bnd (id int PRIMARY KEY, r float4)")
            got = []
            for sql, args in [
                ("INSERT INTO bnd VALUES (%s, %s)", (1, 1.5)), ("INSERT INTO bnd VALUES (%s, %s)", (2, 1e300)),
                ("INSERT INTO bnd VALUES (%s, %s)", (2, 1e-50)), ("INSERT INTO bnd VALUES (%s, %s), (%s, %s)", (2, 1e-50, 3, 1.0)),
                ("UPDATE bnd SET r = %s WHERE id = %s", (1e300, 1)), ("UPDATE bnd SET r = %s WHERE id = %s", (-1e-60, 1)),
                ("UPDATE bnd SET r = %s WHERE id = %s", (2.5, 1)), ("SELECT * FROM bnd ORDER BY id", ()),
            ]:  # fmt: skip
                for prepare in (False, True):
                    try:
                        cur = conn.execute(sql, args, prepare=prepare)
                        got.append(cur.fetchall() if cur.description else cur.statusmessage)
                    except psycopg.Error as e:
                        got.append((e.sqlstate, e.diag.message_primary))
            conn.execute("DROP TABLE bnd")
            answers.append(got)
    assert answers[1] == answers[0]


@pytest.mark.parametrize("digits", DIGITS)
def test_floats_raise_postgresqls_errors(clients: tuple[Client, Client], digits: int) -> None:
    _same(clients, [f"SET extra_float_digits = {digits}", *ERRORS])


@pytest.mark.parametrize("digits", DIGITS)
def test_floats_answer_and_print_as_postgresql(clients: tuple[Client, Client], digits: int) -> None:
    _same(clients, [f"SET extra_float_digits = {digits}", *VALUES])


@pytest.mark.parametrize("digits", DIGITS)
def test_a_float_table_through_float8_sql_s_operators(clients: tuple[Client, Client], digits: int) -> None:
    _same(clients, [f"SET extra_float_digits = {digits}", *TABLE])


def test_extra_float_digits_takes_postgresqls_range(clients: tuple[Client, Client]) -> None:
    _same(clients, [
        "SET extra_float_digits = -15", "SHOW extra_float_digits", "SET extra_float_digits = -16",
        "SET extra_float_digits = 4", "SELECT set_config('extra_float_digits', '-3', false), 1 / 3::float8",
        "RESET extra_float_digits", "SELECT 1 / 3::float8",
    ])  # fmt: skip


def _copy_out(dsn: str, sql: str) -> bytes:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET extra_float_digits = 0")
        with conn.cursor().copy(sql) as cp:
            return b"".join(bytes(b) for b in cp)


def test_copy_to_prints_floats_with_the_sessions_digits(proxy: ProxyServer, pg15: PgCluster) -> None:
    sql = "COPY (SELECT 1 / 3::float8 AS a, 1 / float4 '3' AS b, ARRAY[2 / 3::float8] AS c) TO STDOUT WITH (FORMAT {})"
    for fmt in ("text", "csv"):
        assert _copy_out(proxy.dsn(), sql.format(fmt)) == _copy_out(pg15.dsn(dbname="floats_vs"), sql.format(fmt))


# ------------------------------------------------------------------ generated values


def _text(v: float) -> str:
    return "NaN" if math.isnan(v) else repr(v).replace("inf", "Infinity")


_specials = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-310, 1.7976931348623157e308, -1e308,
             math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, 2.5, -2.5, 30.0, 1e15, 1e16, 123456789012345678.0,
             709.8, -745.2, 1e-5, 3.4028235e38, 1.4e-45, 1 / 3]  # fmt: skip
float8s = st.one_of(st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True), st.sampled_from(_specials))
float4s = st.one_of(st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True), st.sampled_from([0.0, -0.0, 1.4e-45, 3.4028235e38, 0.1, 1 / 3]))
#: Each runs over every row (a, b, c): one statement per expression, so one failing row
#: (ln of a negative) fails it alone, on both sides alike.
EXPRESSIONS = [
    "a + b", "a - b", "a * b", "a / b", "a ^ b", "power(a, 2)", "-a", "@ a", "|/ a", "||/ a",
    "sqrt(a)", "cbrt(a)", "exp(a)", "ln(a)", "log(a)", "sin(a)", "cos(a)", "tan(a)", "cot(a)",
    "asin(a)", "acos(a)", "atan(a)", "atan2(a, b)", "sinh(a)", "cosh(a)", "tanh(a)", "asinh(a)",
    "acosh(a)", "atanh(a)", "degrees(a)", "radians(a)", "sind(a)", "cosd(a)", "tand(a)", "cotd(a)",
    "asind(a)", "acosd(a)", "atand(a)", "atan2d(a, b)", "round(a)", "trunc(a)", "ceil(a)", "floor(a)",
    "sign(a)", "a::float4", "a::int2", "a::int4", "a::int8", "c + c", "c * c", "c / c", "c - a",
    "c * 3", "c::int4", "a < b", "c = a", "(a * b) + (a / b)", "exp(ln(abs(a)))",
]  # fmt: skip


@pytest.fixture(scope="module")
def gen_clients(proxy: ProxyServer, pg15: PgCluster) -> Iterator[tuple[Client, Client]]:
    pg15.psql("CREATE DATABASE floats_gen")
    with Client(pg15.dsn(dbname="floats_gen")) as ref, Client(proxy.dsn()) as got:
        yield _as_text(ref), _as_text(got)


def _table(clients: tuple[Client, Client], rows: list[tuple[float, float, float]]) -> str:
    t = f"fg{next(_names)}"
    values = ", ".join(f"({i}, '{_text(a)}', '{_text(b)}', '{_text(c)}')" for i, (a, b, c) in enumerate(rows))
    _same(clients, [f"CREATE TABLE {t} (id int, a float8, b float8, c float4)", f"INSERT INTO {t} VALUES {values}"])
    return t


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(float8s, float8s, float4s), min_size=1, max_size=6), st.sampled_from([-15, -9, -1, 0]))
def test_generated_floats_print_as_postgresql_with_fewer_digits(
    gen_clients: tuple[Client, Client], rows: list[tuple[float, float, float]], digits: int
) -> None:
    t = _table(gen_clients, rows)
    _same(gen_clients, [
        f"SET extra_float_digits = {digits}",
        f"SELECT id, a, b, c, ARRAY[a, b], ARRAY[c], a::text, c::text, a || '|' || c FROM {t} ORDER BY id",
        f"{RECORD}SELECT {t} FROM {t} ORDER BY id",
        "RESET extra_float_digits",
    ])  # fmt: skip


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.tuples(float8s, float8s, float4s), min_size=1, max_size=5),
    st.lists(st.sampled_from(EXPRESSIONS), min_size=10, max_size=10, unique=True),
)
def test_generated_floats_through_every_function_answer_or_fail_as_postgresql(
    gen_clients: tuple[Client, Client], rows: list[tuple[float, float, float]], expressions: list[str]
) -> None:
    """Each example takes ten of the expressions (all of them would take half a minute)."""
    ref, got = gen_clients
    t = _table(gen_clients, rows)
    for expr in expressions:
        sql = f"SELECT id, {expr} FROM {t} ORDER BY id"
        expected, answer = ref(sql), got(sql)
        if expected[0] == "error":  # one of the errors PostgreSQL raises for some row
            each = [ref(f"SELECT {expr} FROM {t} WHERE id = {i}") for i in range(len(rows))]
            raised = {r[:3] for r in each if r[0] == "error"}
            assert answer[:3] in raised, (sql, rows, answer)
        else:
            assert answer == expected, (sql, rows)

