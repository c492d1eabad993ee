"""PostgreSQL 15's ``float8`` and ``float4`` arithmetic and functions (``float.c``), as
Python functions and as DuckDB UDFs.

DuckDB computes floats as IEEE 754 says: ``1e308 * 10`` is Infinity, ``ln(0)`` is
-Infinity, ``sqrt(-1)`` and ``acos(2)`` are NaN. PostgreSQL raises instead: 22003 "value out
of range: overflow" (or underflow) when finite operands give an infinite (or zero) result,
22012 for a zero divisor, 2201E/2201F for logarithms, roots and powers outside their
domain, 22003 "input is out of range" for trigonometry of an infinity. Where it does not
raise, its values are the C library's (glibc's ``pow``, ``exp``, ``sin``…), which are
Python's ``math`` functions and DuckDB's own on this platform.

The rewriter writes these checks as DuckDB expressions when that is cheap
(:mod:`walsender_proxy.sql.float_exprs`); the functions here are the same semantics for
operands it cannot repeat in an expression (``wpx_float8_<name>`` UDFs, Arrow-vectorised),
and for the degree-based trigonometry (``sind``, ``cosd``…), whose exact results at 30°,
45°, 60°… come from PostgreSQL's own scaling steps, not from a DuckDB function.

Errors are :class:`PgError`; NULL stays NULL (the UDFs are called on NULL too)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa

from decoding.errors import PgError

#: RADIANS_PER_DEGREE of float.h, as the C compiler rounds it to a double.
RADIANS_PER_DEGREE = 0.0174532925199432957692
#: The smallest double a float4 conversion rounds to Infinity: (2 - 2^-24) · 2^127, the
#: midpoint above FLT_MAX (ties go to the even neighbour, Infinity).
FLOAT4_OVERFLOW_AT = 3.4028235677973366e38
#: The largest double a float4 conversion rounds to zero: 2^-150, the midpoint below the
#: smallest subnormal float (ties go to the even neighbour, zero).
FLOAT4_UNDERFLOW_AT = 2.0**-150

OVERFLOW = ("22003", "value out of range: overflow")
UNDERFLOW = ("22003", "value out of range: underflow")
ZERO_DIVIDE = ("22012", "division by zero")
INPUT_RANGE = ("22003", "input is out of range")
LOG_ZERO = ("2201E", "cannot take logarithm of zero")
LOG_NEGATIVE = ("2201E", "cannot take logarithm of a negative number")
SQRT_NEGATIVE = ("2201F", "cannot take square root of a negative number")
POW_ZERO_NEGATIVE = ("2201F", "zero raised to a negative power is undefined")
POW_COMPLEX = ("2201F", "a negative number raised to a non-integer power yields a complex result")


def _raise(err: tuple[str, str]) -> PgError:
    return PgError(*err)


# ----------------------------------------------------------------------- arithmetic


def _f4(v: float) -> float:
    """A double rounded to float4 (and back to a Python float, exactly)."""
    with np.errstate(over="ignore"):
        return float(np.float32(v))


def add(a: float, b: float, float4: bool = False) -> float:
    """float8_pl / float4_pl: an infinite sum of finite operands is 22003."""
    r = _f4(a + b) if float4 else a + b
    if math.isinf(r) and not math.isinf(a) and not math.isinf(b):
        raise _raise(OVERFLOW)
    return r


def sub(a: float, b: float, float4: bool = False) -> float:
    """float8_mi / float4_mi."""
    r = _f4(a - b) if float4 else a - b
    if math.isinf(r) and not math.isinf(a) and not math.isinf(b):
        raise _raise(OVERFLOW)
    return r


def mul(a: float, b: float, float4: bool = False) -> float:
    """float8_mul / float4_mul: infinite from finite, or zero from non-zero, is 22003."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        r = _f4(np.float32(a) * np.float32(b)) if float4 else a * b
    if math.isinf(r) and not math.isinf(a) and not math.isinf(b):
        raise _raise(OVERFLOW)
    if r == 0.0 and a != 0.0 and b != 0.0:
        raise _raise(UNDERFLOW)
    return r


def div(a: float, b: float, float4: bool = False) -> float:
    """float8_div / float4_div: a zero divisor is 22012 unless the dividend is NaN."""
    if b == 0.0:
        if math.isnan(a):
            return a
        raise _raise(ZERO_DIVIDE)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        r = _f4(np.float32(a) / np.float32(b)) if float4 else a / b
    if math.isinf(r) and not math.isinf(a):
        raise _raise(OVERFLOW)
    if r == 0.0 and a != 0.0 and not math.isinf(b):
        raise _raise(UNDERFLOW)
    return r


def to_float4(v: float) -> float:
    """dtof: the float8 rounded to float4; 22003 when it leaves float4's range."""
    r = _f4(v)
    if math.isinf(r) and not math.isinf(v):
        raise _raise(OVERFLOW)
    if r == 0.0 and v != 0.0:
        raise _raise(UNDERFLOW)
    return r


# ------------------------------------------------------------------------ functions


def sqrt(x: float) -> float:
    if x < 0:
        raise _raise(SQRT_NEGATIVE)
    return math.sqrt(x)


def cbrt(x: float) -> float:
    return math.cbrt(x)


def exp(x: float) -> float:
    """dexp: exp(-Infinity) is 0, an infinite or zero result of a finite argument 22003."""
    if math.isnan(x):
        return x
    if math.isinf(x):
        return x if x > 0 else 0.0
    try:
        r = math.exp(x)
    except OverflowError:
        raise _raise(OVERFLOW) from None
    if r == 0.0:
        raise _raise(UNDERFLOW)
    return r


def _log(x: float, fn: Callable[[float], float]) -> float:
    if x == 0.0:
        raise _raise(LOG_ZERO)
    if x < 0:
        raise _raise(LOG_NEGATIVE)
    return fn(x)  # (NaN and Infinity pass through)


def ln(x: float) -> float:
    return _log(x, math.log)


def log10(x: float) -> float:
    return _log(x, math.log10)


def power(a: float, b: float) -> float:
    """dpow: POSIX's pow, with PostgreSQL's errors for a zero or negative base and for a
    result out of range."""
    if math.isnan(a):
        return a if math.isnan(b) or b != 0.0 else 1.0
    if math.isnan(b):
        return b if a != 1.0 else 1.0
    if a == 0 and b < 0:
        raise _raise(POW_ZERO_NEGATIVE)
    if a < 0 and math.isfinite(b) and math.floor(b) != b:  # (floor(±inf) is ±inf)
        raise _raise(POW_COMPLEX)
    if math.isinf(a) or math.isinf(b):
        return math.pow(a, b)  # (POSIX's special cases, never an error)
    try:
        r = math.pow(a, b)
    except OverflowError:
        raise _raise(OVERFLOW) from None
    if r == 0.0 and a != 0.0:
        raise _raise(UNDERFLOW)
    return r


def _trig(fn: Callable[[float], float]) -> Callable[[float], float]:
    def f(x: float) -> float:
        if math.isnan(x):
            return x
        if math.isinf(x):
            raise _raise(INPUT_RANGE)
        return fn(x)

    return f


sin = _trig(math.sin)
cos = _trig(math.cos)
tan = _trig(math.tan)


def _ieee_div(a: float, b: float) -> float:
    """C's a / b, where Python raises for a zero divisor: a signed infinity (cotd(-0) is
    -Infinity), or NaN for 0 / 0."""
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _cot(x: float) -> float:
    return _ieee_div(1.0, math.tan(x))  # (cot(0) is Infinity)


cot = _trig(_cot)


def _unit_range(fn: Callable[[float], float]) -> Callable[[float], float]:
    def f(x: float) -> float:
        if math.isnan(x):
            return x
        if x < -1.0 or x > 1.0:
            raise _raise(INPUT_RANGE)
        return fn(x)

    return f


asin = _unit_range(math.asin)
acos = _unit_range(math.acos)


def atan(x: float) -> float:
    return math.atan(x)


def atan2(y: float, x: float) -> float:
    return math.nan if math.isnan(y) or math.isnan(x) else math.atan2(y, x)


def sinh(x: float) -> float:
    try:
        return math.sinh(x)
    except OverflowError:  # (ERANGE: PostgreSQL gives the infinity)
        return math.copysign(math.inf, x)


def cosh(x: float) -> float:
    try:
        return math.cosh(x)
    except OverflowError:
        return math.inf


def tanh(x: float) -> float:
    return math.tanh(x)


def asinh(x: float) -> float:
    return math.asinh(x)


def acosh(x: float) -> float:
    if x < 1.0:
        raise _raise(INPUT_RANGE)
    return math.acosh(x)  # (NaN passes: NaN < 1 is false)


def atanh(x: float) -> float:
    if x < -1.0 or x > 1.0:
        raise _raise(INPUT_RANGE)
    if x in (-1.0, 1.0):
        return math.copysign(math.inf, x)
    return math.atanh(x)


def degrees(x: float) -> float:
    return div(x, RADIANS_PER_DEGREE)


def radians(x: float) -> float:
    return mul(x, RADIANS_PER_DEGREE)


# ------------------------------------------------------- degree-based trigonometry

# PostgreSQL's scaling constants, computed at run time from the same C library functions
# so that sind(30) is exactly 0.5, cosd(60) 0.5, tand(45) 1 (init_degree_constants).
_SIN_30 = math.sin(30.0 * RADIANS_PER_DEGREE)
_ONE_MINUS_COS_60 = 1.0 - math.cos(60.0 * RADIANS_PER_DEGREE)
_ASIN_0_5 = math.asin(0.5)
_ACOS_0_5 = math.acos(0.5)
_ATAN_1_0 = math.atan(1.0)


def _sind_0_to_30(x: float) -> float:
    return (math.sin(x * RADIANS_PER_DEGREE) / _SIN_30) / 2.0


def _cosd_0_to_60(x: float) -> float:
    return 1.0 - ((1.0 - math.cos(x * RADIANS_PER_DEGREE)) / _ONE_MINUS_COS_60) / 2.0


def _sind_q1(x: float) -> float:
    return _sind_0_to_30(x) if x <= 30.0 else _cosd_0_to_60(90.0 - x)


def _cosd_q1(x: float) -> float:
    return _cosd_0_to_60(x) if x <= 60.0 else _sind_0_to_30(90.0 - x)


_TAN_45 = _sind_q1(45.0) / _cosd_q1(45.0)
_COT_45 = _cosd_q1(45.0) / _sind_q1(45.0)


def _asind_q1(x: float) -> float:
    if x <= 0.5:
        return (math.asin(x) / _ASIN_0_5) * 30.0
    return 90.0 - (math.acos(x) / _ACOS_0_5) * 60.0


def _acosd_q1(x: float) -> float:
    if x <= 0.5:
        return 90.0 - (math.asin(x) / _ASIN_0_5) * 30.0
    return (math.acos(x) / _ACOS_0_5) * 60.0


def _degrees_in(x: float) -> float | None:
    """NaN passes through (None: the caller returns NaN), an infinity is 22003."""
    if math.isnan(x):
        return None
    if math.isinf(x):
        raise _raise(INPUT_RANGE)
    return math.fmod(x, 360.0)


def sind(x: float) -> float:
    a = _degrees_in(x)
    if a is None:
        return x
    sign = 1.0
    if a < 0.0:
        a, sign = -a, -sign
    if a > 180.0:
        a, sign = 360.0 - a, -sign
    if a > 90.0:
        a = 180.0 - a
    return sign * _sind_q1(a)


def cosd(x: float) -> float:
    a = _degrees_in(x)
    if a is None:
        return x
    sign = 1.0
    if a < 0.0:
        a = -a
    if a > 180.0:
        a = 360.0 - a
    if a > 90.0:
        a, sign = 180.0 - a, -sign
    return sign * _cosd_q1(a)


def _tand_cotd(x: float, cot: bool) -> float:
    a = _degrees_in(x)
    if a is None:
        return x
    sign = 1.0
    if a < 0.0:
        a, sign = -a, -sign
    if a > 180.0:
        a, sign = 360.0 - a, -sign
    if a > 90.0:
        a, sign = 180.0 - a, -sign
    s, c = _sind_q1(a), _cosd_q1(a)
    r = sign * (_ieee_div(c, s) / _COT_45 if cot else _ieee_div(s, c) / _TAN_45)
    return 0.0 if r == 0.0 else r  # (PostgreSQL never answers -0 here)


def tand(x: float) -> float:
    return _tand_cotd(x, cot=False)


def cotd(x: float) -> float:
    return _tand_cotd(x, cot=True)


def asind(x: float) -> float:
    if math.isnan(x):
        return x
    if x < -1.0 or x > 1.0:
        raise _raise(INPUT_RANGE)
    return _asind_q1(x) if x >= 0.0 else -_asind_q1(-x)


def acosd(x: float) -> float:
    if math.isnan(x):
        return x
    if x < -1.0 or x > 1.0:
        raise _raise(INPUT_RANGE)
    return _acosd_q1(x) if x >= 0.0 else 90.0 + _asind_q1(-x)


def atand(x: float) -> float:
    if math.isnan(x):
        return x
    return (math.atan(x) / _ATAN_1_0) * 45.0


def atan2d(y: float, x: float) -> float:
    if math.isnan(y) or math.isnan(x):
        return math.nan
    return (math.atan2(y, x) / _ATAN_1_0) * 45.0


def width_bucket(operand: float, bound1: float, bound2: float, count: int) -> int:
    """width_bucket_float8: the bucket of ``operand`` among ``count`` equal ones between the
    bounds (0 below, count + 1 at or above the upper), with PostgreSQL's 2201G errors."""
    if count <= 0:
        raise PgError("2201G", "count must be greater than zero")
    if math.isnan(operand) or math.isnan(bound1) or math.isnan(bound2):
        raise PgError("2201G", "operand, lower bound, and upper bound cannot be NaN")
    if math.isinf(bound1) or math.isinf(bound2):
        raise PgError("2201G", "lower and upper bounds must be finite")
    if bound1 == bound2:
        raise PgError("2201G", "lower bound cannot equal upper bound")
    if (operand < bound1) if bound1 < bound2 else (operand > bound1):
        return 0
    if (operand >= bound2) if bound1 < bound2 else (operand <= bound2):
        if count + 1 > 2**31 - 1:
            raise PgError("22003", "integer out of range")
        return count + 1
    if bound1 < bound2:
        r = count * (operand - bound1) / (bound2 - bound1) + 1
    else:
        r = count * (bound1 - operand) / (bound1 - bound2) + 1
    # (int32) of a double, as x86-64 converts it: truncated; NaN or beyond int32 gives
    # INT_MIN (PostgreSQL 15 answers -2147483648 when a huge width overflows)
    if math.isnan(r) or not -(2.0**31) < r < 2.0**31:
        return -(2**31)
    return int(r)


# ------------------------------------------------------------------ DuckDB functions

#: UDF name prefix: ``wpx_float8_<name>`` (DOUBLE arguments and result) and
#: ``wpx_float4_<name>`` (REAL), for :data:`FLOAT8` and :data:`FLOAT4`.
PREFIX = "wpx_float"

#: float8 functions by name: (function, arity).
FLOAT8: dict[str, tuple[Callable[..., float], int]] = {
    "add": (add, 2), "sub": (sub, 2), "mul": (mul, 2), "div": (div, 2), "pow": (power, 2),
    "sqrt": (sqrt, 1), "cbrt": (cbrt, 1), "exp": (exp, 1), "ln": (ln, 1), "log10": (log10, 1),
    "sin": (sin, 1), "cos": (cos, 1), "tan": (tan, 1), "cot": (cot, 1), "asin": (asin, 1),
    "acos": (acos, 1), "atan": (atan, 1), "atan2": (atan2, 2), "sinh": (sinh, 1),
    "cosh": (cosh, 1), "tanh": (tanh, 1), "asinh": (asinh, 1), "acosh": (acosh, 1),
    "atanh": (atanh, 1), "degrees": (degrees, 1), "radians": (radians, 1), "sind": (sind, 1),
    "cosd": (cosd, 1), "tand": (tand, 1), "cotd": (cotd, 1), "asind": (asind, 1),
    "acosd": (acosd, 1), "atand": (atand, 1), "atan2d": (atan2d, 2),
    "to_float4": (to_float4, 1),
}  # fmt: skip
#: float4 arithmetic (in single precision, as float4_pl and the others compute it).
FLOAT4: dict[str, Callable[..., float]] = {"add": add, "sub": sub, "mul": mul, "div": div}


def udf_name(name: str, float4: bool = False) -> str:
    return f"{PREFIX}{4 if float4 else 8}_{name}"


def _values(arr: pa.Array | pa.ChunkedArray, dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """An Arrow float column as numpy values (NaN where NULL) and its validity."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    valid = np.asarray(arr.is_valid(), dtype=bool)
    return np.asarray(arr.fill_null(0).to_numpy(zero_copy_only=False), dtype=dtype), valid


def _first_error(masks: Sequence[tuple[np.ndarray, tuple[str, str]]]) -> None:
    """Raise the error of the first row any mask flags (a row's first mask wins), as
    PostgreSQL raises at the first row it computes that fails."""
    first: tuple[int, int] | None = None
    for k, (mask, _) in enumerate(masks):
        hit = np.flatnonzero(mask)
        if len(hit) and (first is None or hit[0] < first[0]):
            first = (int(hit[0]), k)
    if first is not None:
        raise _raise(masks[first[1]][1])


def _arith_udf(name: str, float4: bool) -> Callable[[pa.Array, pa.Array], pa.Array]:
    """+ - * / over whole columns with numpy, checked as :func:`add` and the others."""
    dtype = np.float32 if float4 else np.float64
    arrow_t = pa.float32() if float4 else pa.float64()

    def fn(x: pa.Array, y: pa.Array) -> pa.Array:
        a, va = _values(x, dtype)
        b, vb = _values(y, dtype)
        valid = va & vb
        with np.errstate(all="ignore"):
            if name == "add":
                r = a + b
            elif name == "sub":
                r = a - b
            elif name == "mul":
                r = a * b
            else:
                r = a / np.where(b == 0, 1, b).astype(dtype)
        fin_a, fin_b = np.isfinite(a) | np.isnan(a), np.isfinite(b) | np.isnan(b)  # (not ±inf)
        checks: list[tuple[np.ndarray, tuple[str, str]]] = []
        if name == "div":
            zero = valid & (b == 0)
            checks.append((zero & ~np.isnan(a), ZERO_DIVIDE))
            r = np.where(zero, a, r)
            rest = valid & ~zero
            checks.append((rest & np.isinf(r) & fin_a, OVERFLOW))
            checks.append((rest & (r == 0) & (a != 0) & fin_b, UNDERFLOW))
        else:
            checks.append((valid & np.isinf(r) & fin_a & fin_b, OVERFLOW))
            if name == "mul":
                checks.append((valid & (r == 0) & (a != 0) & (b != 0), UNDERFLOW))
        _first_error(checks)
        return pa.array(r, arrow_t, mask=~valid)

    return fn


def _rowwise_udf(fn: Callable[..., float], arity: int) -> Callable[..., pa.Array]:
    """A function applied row by row (C library results, as PostgreSQL's)."""

    def rows(*arrays: pa.Array | pa.ChunkedArray) -> pa.Array:
        cols = [a.to_pylist() for a in arrays]
        out = [None if any(v is None for v in row) else fn(*row) for row in zip(*cols, strict=True)]
        return pa.array(out, pa.float64())

    if arity == 1:
        return lambda a: rows(a)
    return lambda a, b: rows(a, b)


def _to_float4_udf(x: pa.Array) -> pa.Array:
    """dtof over a whole column, checked as :func:`to_float4`."""
    a, valid = _values(x, np.float64)
    with np.errstate(all="ignore"):
        r = a.astype(np.float32)
    _first_error([
        (valid & np.isinf(r) & ~np.isinf(a), OVERFLOW),
        (valid & (r == 0) & (a != 0), UNDERFLOW),
    ])  # fmt: skip
    return pa.array(r, pa.float32(), mask=~valid)


def udfs() -> list[tuple[str, Callable[..., pa.Array], list[str], str]]:
    """(name, Arrow function, DuckDB argument types, DuckDB result type) of every UDF."""
    out: list[tuple[str, Callable[..., pa.Array], list[str], str]] = []
    for name, (fn, arity) in FLOAT8.items():
        if name == "to_float4":
            out.append((udf_name(name), _to_float4_udf, ["DOUBLE"], "FLOAT"))
            continue
        udf = _arith_udf(name, False) if name in FLOAT4 else _rowwise_udf(fn, arity)
        out.append((udf_name(name), udf, ["DOUBLE"] * arity, "DOUBLE"))
    for name in FLOAT4:
        out.append((udf_name(name, True), _arith_udf(name, True), ["FLOAT", "FLOAT"], "FLOAT"))

    def bucket(x: pa.Array, lo: pa.Array, hi: pa.Array, n: pa.Array) -> pa.Array:
        rows = zip(x.to_pylist(), lo.to_pylist(), hi.to_pylist(), n.to_pylist(), strict=True)
        return pa.array([None if None in r else width_bucket(*r) for r in rows], pa.int32())

    out.append((udf_name("width_bucket"), bucket, ["DOUBLE", "DOUBLE", "DOUBLE", "INTEGER"], "INTEGER"))
    for float4 in (False, True):
        out.append((udf_name("send", float4), _send_udf(float4), ["FLOAT" if float4 else "DOUBLE"], "BLOB"))
    return out


def _send_udf(float4: bool) -> Callable[[pa.Array], pa.Array]:
    """float4send / float8send: the value's IEEE bytes, big-endian (its binary format)."""
    dtype = ">f4" if float4 else ">f8"

    def send(x: pa.Array) -> pa.Array:
        a, valid = _values(x, np.float32 if float4 else np.float64)
        raw = a.astype(dtype).tobytes()
        n = 4 if float4 else 8
        return pa.array([raw[i * n : (i + 1) * n] if ok else None for i, ok in enumerate(valid)], pa.binary())

    return send
