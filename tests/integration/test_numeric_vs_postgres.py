"""numeric arithmetic against a real PostgreSQL 15, value by value: generated values of every
size and scale (NaN and the infinities among them) through each operator, function and
aggregate; the proxy must print exactly PostgreSQL's digits, or fail with its SQLSTATE.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, example, given, settings

from tests.pgcluster import PgCluster
from tests.pgcompare import Client
from tests.proxy import ProxyServer

_digits = st.text("0123456789", min_size=1, max_size=24)
numerics = st.one_of(
    st.builds(lambda neg, i, f: ("-" if neg else "") + i + ("." + f if f else ""), st.booleans(), _digits, st.one_of(st.just(""), _digits)),
    st.sampled_from(["0", "1", "-1", "0.0", "10", "0.9", "1.1", "1.05", "NaN", "Infinity", "-Infinity"]),
)
_tables = itertools.count(1)

#: Each runs over every row of the generated table (a, b): one statement per expression, so
#: one that fails (division by zero, ln of a negative) fails alone, on both sides alike.
EXPRESSIONS = [
    "a + b", "a - b", "a * b", "a / b", "a % b", "div(a, b)", "-a", "abs(a)", "sign(a)",
    "round(a)", "round(a, 3)", "round(a, -2)", "trunc(a, 1)", "ceil(a)", "floor(a)",
    "scale(a)", "min_scale(a)", "trim_scale(a)", "sqrt(abs(a))", "ln(abs(a) + 1)",
    "log(abs(a) + 1)", "exp(a / 10000000000000000000000)", "a ^ 3", "a ^ -2",
    "abs(a) ^ 0.5", "a::float8", "round(a / 7, 2)::int8", "a < b", "a = b",
]  # fmt: skip
AGGREGATES = "SELECT sum(a), avg(a), variance(a), stddev_pop(a), avg(b), var_pop(b) FROM {t}"


@pytest.fixture(scope="module")
def clients(proxy: ProxyServer, pg15: PgCluster) -> Iterator[tuple[Client, Client]]:
    pg15.psql("CREATE DATABASE numeric_vs")
    with Client(pg15.dsn(dbname="numeric_vs")) as ref, Client(proxy.dsn()) as got:
        yield ref, got


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(numerics, numerics), min_size=1, max_size=8))
@example([("-100", "0")])  # (exp(-1e-20): exp_var's last digit, not the exactly rounded one)
def test_numeric_operators_print_postgresqls_digits(clients: tuple[Client, Client], rows: list[tuple[str, str]]) -> None:
    ref, got = clients
    t = f"nv{next(_tables)}"
    values = ", ".join(f"({i}, '{a}', '{b}')" for i, (a, b) in enumerate(rows))
    for sql in (f"CREATE TABLE {t} (id int, a numeric, b numeric)", f"INSERT INTO {t} VALUES {values}"):
        assert got(sql) == ref(sql), sql
    for expr in EXPRESSIONS:
        sql = f"SELECT id, {expr} FROM {t} ORDER BY id"
        expected, answer = ref(sql), got(sql)
        if expected[0] == "error":  # one of the SQLSTATEs PostgreSQL raises for some row
            each = [ref(f"SELECT {expr} FROM {t} WHERE id = {i}") for i in range(len(rows))]
            raised = {r[:2] for r in each if r[0] == "error"}
            assert answer[:2] in raised, (sql, rows, answer)
        else:
            assert repr(answer) == repr(expected), (sql, rows)
    sql = AGGREGATES.format(t=t)
    assert repr(got(sql)) == repr(ref(sql)), (sql, rows)


SERIES = [
    "SELECT * FROM generate_series(0.0::numeric, 4.0::numeric)",
    "SELECT * FROM generate_series(0.1::numeric, 4.0::numeric, 1.3::numeric)",
    "SELECT * FROM generate_series(4.0::numeric, -1.5::numeric, -2.2::numeric)",
    "SELECT x, x * 2 FROM generate_series(0.25, 1, 0.25) x ORDER BY x DESC",
    "SELECT * FROM generate_series(1::numeric, 3::numeric) i, generate_series(i, 3) j ORDER BY i, j",
    "SELECT * FROM generate_series(1::numeric, 3::numeric) i, generate_series(1, 5, i) j ORDER BY i, j",
    "SELECT * FROM generate_series(null::numeric, 3)",
    "SELECT * FROM generate_series(-100::numeric, 100::numeric, 0::numeric)",
    "SELECT * FROM generate_series(-100::numeric, 100::numeric, 'nan'::numeric)",
    "SELECT * FROM generate_series('nan'::numeric, 100::numeric, 10::numeric)",
    "SELECT * FROM generate_series(0::numeric, 'inf'::numeric, 10::numeric)",
    "SELECT * FROM generate_series(0::numeric, '42'::numeric, '-inf'::numeric)",
    "SELECT * FROM generate_series(1.5::float8, 3::numeric)",
]


def test_generate_series_of_numeric(clients: tuple[Client, Client]) -> None:
    ref, got = clients
    for sql in SERIES:
        assert repr(got(sql)) == repr(ref(sql)), sql
