"""float8/float4 semantics of PostgreSQL 15 (float.c): the Python functions, and the DuckDB
expressions the rewriter writes for the same operations, which must agree row by row — the
rewriter picks one or the other by how big the operands are."""

from __future__ import annotations

import math

import duckdb
import hypothesis.strategies as st
import pytest
from hypothesis import given, settings
from pglast.stream import RawStream

from decoding.errors import PgError
from walsender_proxy.sql import float_exprs, float_math, literals
from walsender_proxy.sql.nodes import cast, str_const
from walsender_proxy.sql.udf_errors import udf_error


def _err(fn: object, *args: float) -> tuple[str, str] | None:
    try:
        fn(*args)  # type: ignore[operator]
    except PgError as e:
        return (e.sqlstate, e.message)
    return None


@pytest.mark.parametrize(
    ("call", "error"),
    [  # PostgreSQL 15's errors for these (float8.sql and float.c)
        (lambda: float_math.power(0.0, -math.inf), float_math.POW_ZERO_NEGATIVE),
        (lambda: float_math.power(-math.inf, 3.5), float_math.POW_COMPLEX),
        (lambda: float_math.power(10.0, 1e200), float_math.OVERFLOW),
        (lambda: float_math.power(10.0, -1e200), float_math.UNDERFLOW),
        (lambda: float_math.ln(0.0), float_math.LOG_ZERO),
        (lambda: float_math.log10(-1.0), float_math.LOG_NEGATIVE),
        (lambda: float_math.sqrt(-1.0), float_math.SQRT_NEGATIVE),
        (lambda: float_math.exp(1000.0), float_math.OVERFLOW),
        (lambda: float_math.exp(-1000.0), float_math.UNDERFLOW),
        (lambda: float_math.acosh(-math.inf), float_math.INPUT_RANGE),
        (lambda: float_math.atanh(math.inf), float_math.INPUT_RANGE),
        (lambda: float_math.sin(math.inf), float_math.INPUT_RANGE),
        (lambda: float_math.sind(-math.inf), float_math.INPUT_RANGE),
        (lambda: float_math.asind(2.0), float_math.INPUT_RANGE),
        (lambda: float_math.mul(1e200, 1e200), float_math.OVERFLOW),
        (lambda: float_math.mul(1e-200, 1e-200), float_math.UNDERFLOW),
        (lambda: float_math.add(1e308, 1e308), float_math.OVERFLOW),
        (lambda: float_math.div(1.0, 0.0), float_math.ZERO_DIVIDE),
        (lambda: float_math.div(5e-324, 2.0), float_math.UNDERFLOW),
        (lambda: float_math.mul(1e30, 1e30, float4=True), float_math.OVERFLOW),
        (lambda: float_math.to_float4(1e40), float_math.OVERFLOW),
        (lambda: float_math.to_float4(1e-50), float_math.UNDERFLOW),
        (lambda: float_math.radians(5e-324), float_math.UNDERFLOW),
    ],
)
def test_postgresqls_errors(call: object, error: tuple[str, str]) -> None:
    assert _err(call) == error


def test_postgresqls_values_where_ieee_would_raise_nothing_either() -> None:
    assert math.isnan(float_math.div(math.nan, 0.0))  # NaN / 0 is NaN, not 22012
    assert float_math.power(math.nan, 0.0) == 1.0 and float_math.power(1.0, math.nan) == 1.0
    assert float_math.power(-math.inf, 3.0) == -math.inf and math.copysign(1, float_math.power(-math.inf, -3.0)) == -1
    assert float_math.exp(-math.inf) == 0.0 and float_math.sinh(1000.0) == math.inf
    assert float_math.cot(0.0) == math.inf and float_math.cot(-0.0) == -math.inf
    assert float_math.atanh(1.0) == math.inf and float_math.add(math.inf, 1.0) == math.inf
    assert float_math.to_float4(3.4028235e38) == 3.4028234663852886e38  # rounds to FLT_MAX


def test_degree_functions_are_exact_where_postgresql_is() -> None:
    assert [float_math.sind(x) for x in (0, 30, 90, 150, 180, 210, 270, 330, 360)] == [0, 0.5, 1, 0.5, 0, -0.5, -1, -0.5, 0]
    assert [float_math.cosd(x) for x in (0, 60, 90, 120, 180, 240, 270, 300, 360)] == [1, 0.5, 0, -0.5, -1, -0.5, 0, 0.5, 1]
    assert [float_math.tand(x) for x in (0, 45, 90, 135, 180)] == [0, 1, math.inf, -1, 0]
    assert [float_math.cotd(x) for x in (0, 45, 90, 135, 180)] == [math.inf, 1, 0, -1, -math.inf]
    assert [float_math.asind(x) for x in (-1, -0.5, 0, 0.5, 1)] == [-90, -30, 0, 30, 90]
    assert [float_math.acosd(x) for x in (-1, -0.5, 0, 0.5, 1)] == [180, 120, 90, 60, 0]
    assert [float_math.atand(x) for x in (-math.inf, -1, 0, 1, math.inf)] == [-90, -45, 0, 45, 90]
    assert [float_math.atan2d(y, x) for y, x in ((0, 10), (10, 0), (0, -10), (-10, 0))] == [0, 90, 180, -90]


# --------------------------------------------- the DuckDB expressions agree with them


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    c.execute("SET integer_division = true")  # (as the server's connection computes)
    literals.install(c)
    return c


def _double(v: float) -> object:
    return cast(str_const(repr(v) if math.isfinite(v) else str(v)), "double")


def _run(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[str, object]:
    try:
        v = con.execute(f"SELECT {sql}").fetchone()[0]  # type: ignore[index]
    except Exception as e:
        kept = udf_error(str(e))
        if kept is not None:
            return ("error", (kept.sqlstate, kept.message))
        text = str(e)
        i = text.find("PGERR[")
        assert i >= 0, text
        return ("error", (text[i + 6 : i + 11], text[i + 13 :].splitlines()[0]))
    return ("value", "nan" if isinstance(v, float) and math.isnan(v) else v)


_interesting = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e308, 1e-308, 5e-324, 709.8, -745.2, 1e200, -3.0, 30.0, 3.4028235e38]),
)
_ONE = ["sqrt", "cbrt", "exp", "ln", "log10", "sin", "cos", "tan", "cot", "asin", "acos", "atan",
        "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "degrees", "radians", "to_float4"]  # fmt: skip
_TWO = ["add", "sub", "mul", "div", "pow", "atan2"]


@settings(max_examples=30, deadline=None)
@given(_interesting, _interesting)
def test_expressions_and_udfs_compute_the_same(con: duckdb.DuckDBPyConnection, a: float, b: float) -> None:
    for name in _ONE + _TWO:
        args = [_double(a)] if name in _ONE else [_double(a), _double(b)]
        inline = RawStream()(float_exprs.apply(name, args))
        udf = f"{float_math.udf_name(name)}({', '.join(RawStream()(x) for x in args)})"
        assert _run(con, inline) == _run(con, udf), (name, a, b)
    reals = [cast(_double(float_math._f4(v) if abs(v) < 3.4e38 or not math.isfinite(v) else 0.0), "real") for v in (a, b)]
    for name in ("add", "sub", "mul", "div"):  # float4's, in single precision
        inline = RawStream()(float_exprs.apply(name, reals, float4=True))
        udf = f"{float_math.udf_name(name, True)}({', '.join(RawStream()(x) for x in reals)})"
        assert _run(con, inline) == _run(con, udf), (name, a, b)
