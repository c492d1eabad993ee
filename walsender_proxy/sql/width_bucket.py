"""width_bucket as PostgreSQL computes it: over numeric bounds (exactly) and over an array
of thresholds (PostgreSQL's binary search, so an unsorted array gives its answer too).

DuckDB has no width_bucket. PostgreSQL's resolution picks ``width_bucket(float8, float8,
float8, int4)`` for integer arguments (float8 is the numeric category's preferred type) and
the numeric version when a bound is numeric and none is a float; float_exprs answers the
float8 one. ``width_bucket(anycompatible, anycompatiblearray)`` compares with the common
type's order: numeric and integers here exactly (NaN above every number, as numeric's
btree order has it), float8 with NaN above every number; other element types are refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction

import pyarrow as pa
from pglast import ast

from decoding.errors import PgError
from walsender_proxy.sql import float_math, numeric_math
from walsender_proxy.sql.array_exprs import DECIMAL_TEXTS
from walsender_proxy.sql.nodes import call, cast
from walsender_proxy.sql.numeric_exprs import INTEGERS, Operand, as_text

NUMERIC_UDF = "wpx_width_bucket_numeric"
ARRAY_NUMERIC_UDF = "wpx_width_bucket_array_numeric"
ARRAY_FLOAT_UDF = "wpx_width_bucket_array_float8"

_INT_MAX = 2**31 - 1
_FLOATS = ("float4", "float8")
#: An array argument's PostgreSQL type name → its element type's name.
_NUMBERS = (*INTEGERS, "numeric", *_FLOATS)


def _key(v: numeric_math.N) -> tuple[int, Fraction]:
    """numeric's btree order: -Infinity < numbers < Infinity < NaN."""
    if v.special:
        return {"-inf": -1, "inf": 1, "nan": 2}[v.special], Fraction(0)
    return 0, Fraction(v.m, 10**v.dscale)


def numeric_bucket(operand: str, bound1: str, bound2: str, count: int) -> int:
    """width_bucket_numeric: the division truncates (PostgreSQL's div_var at scale 0),
    which for the in-range operand is the floor of the exact quotient."""
    if count <= 0:
        raise PgError("2201G", "count must be greater than zero")
    x, lo, hi = (numeric_math.parse(v) for v in (operand, bound1, bound2))
    if "nan" in (x.special, lo.special, hi.special):
        raise PgError("2201G", "operand, lower bound, and upper bound cannot be NaN")
    if lo.special or hi.special:
        raise PgError("2201G", "lower and upper bounds must be finite")
    kx, klo, khi = _key(x), _key(lo), _key(hi)
    if klo == khi:
        raise PgError("2201G", "lower bound cannot equal upper bound")
    if klo < khi:
        if kx < klo:
            return 0
        if kx >= khi:
            result = count + 1
        else:
            result = math.floor((kx[1] - klo[1]) * count / (khi[1] - klo[1])) + 1
    else:
        if kx > klo:
            return 0
        if kx <= khi:
            result = count + 1
        else:
            result = math.floor((klo[1] - kx[1]) * count / (klo[1] - khi[1])) + 1
    if result > _INT_MAX:
        raise PgError("22003", "integer out of range")
    return result


def _search(operand: object, thresholds: Sequence[object], less: Callable[[object, object], bool]) -> int:
    """width_bucket_array's binary search: the first position whose threshold is above
    the operand, as PostgreSQL's loop finds it."""
    left, right = 0, len(thresholds)
    while left < right:
        mid = (left + right) // 2
        if less(operand, thresholds[mid]):
            right = mid
        else:
            left = mid + 1
    return left


def _check(thresholds: Sequence[object | None]) -> None:
    if any(t is None for t in thresholds):
        raise PgError("22004", "thresholds array must not contain NULLs")


def array_bucket_numeric(operand: str, thresholds: Sequence[str | None]) -> int:
    _check(thresholds)
    keys = [_key(numeric_math.parse(t)) for t in thresholds if t is not None]
    return _search(_key(numeric_math.parse(operand)), keys, lambda a, b: a < b)  # type: ignore[operator]


def _float_less(a: object, b: object) -> bool:
    x, y = float(a), float(b)  # type: ignore[arg-type]
    if math.isnan(x):
        return False
    return math.isnan(y) or x < y


def array_bucket_float8(operand: float, thresholds: Sequence[float | None]) -> int:
    _check(thresholds)
    if math.isnan(operand):
        return len(thresholds)
    return _search(operand, thresholds, _float_less)


def rewrite(args: Sequence[Operand], depth: int) -> tuple[ast.Node, str, set[str]] | None:
    """``width_bucket(args)`` for DuckDB, or None to leave it to others (float8 bounds,
    answered by float_exprs). ``depth`` is the second argument's number of list levels."""
    if len(args) == 4:
        bounds, count = args[:3], args[3]
        if count.type not in ("int2", "int4", "unknown") or any(a.type in _FLOATS for a in bounds):
            return None
        if not all(a.type in (*INTEGERS, "numeric", "unknown") for a in bounds):
            return None
        if any(a.type == "numeric" for a in bounds):
            return call(NUMERIC_UDF, *(as_text(a) for a in bounds), cast(count.node, "integer")), "int4", set()
        floats = [cast(a.node, "double") for a in bounds]  # (all integers: float8's version)
        return call(float_math.udf_name("width_bucket"), *floats, cast(count.node, "integer")), "int4", set()
    if len(args) != 2:
        return None
    operand, arr = args
    elem = (arr.type or "")[1:] if depth == 1 else None
    if depth > 1:
        raise PgError("2202E", "thresholds must be one-dimensional array")
    if elem in _NUMBERS and operand.type not in (*_NUMBERS, "unknown", None):
        return None  # (no common type: 42883)
    if elem not in _NUMBERS or operand.type not in (*_NUMBERS, "unknown"):
        what = f"{arr.type}" if arr.type else "an untyped array"
        raise PgError("0A000", f"width_bucket() over {what} thresholds is not supported by walsender-proxy")
    if elem in _FLOATS or operand.type in _FLOATS:
        return call(ARRAY_FLOAT_UDF, cast(operand.node, "double"), cast(arr.node, "double", array=True)), "int4", set()
    if arr.text:  # (numeric elements held as their text)
        texts: ast.Node = cast(arr.node, "varchar", array=True)
    else:
        texts = call(DECIMAL_TEXTS, arr.node)
    return call(ARRAY_NUMERIC_UDF, as_text(operand), texts), "int4", set() if arr.text else {DECIMAL_TEXTS}


def _rows(fn: Callable[..., int], *arrays: pa.Array) -> pa.Array:
    cols = [a.to_pylist() for a in arrays]
    return pa.array([None if None in r else fn(*r) for r in zip(*cols, strict=True)], pa.int32())


def _numeric_udf(x: pa.Array, lo: pa.Array, hi: pa.Array, n: pa.Array) -> pa.Array:
    return _rows(numeric_bucket, x, lo, hi, n)


def _array_numeric_udf(x: pa.Array, thresholds: pa.Array) -> pa.Array:
    return _rows(array_bucket_numeric, x, thresholds)


def _array_float_udf(x: pa.Array, thresholds: pa.Array) -> pa.Array:
    return _rows(array_bucket_float8, x, thresholds)


def udfs() -> list[tuple[str, Callable[..., pa.Array], list[str], str]]:
    """(name, Arrow function, DuckDB argument types, DuckDB result type); NULL in, NULL out."""
    return [
        (NUMERIC_UDF, _numeric_udf, ["VARCHAR", "VARCHAR", "VARCHAR", "INTEGER"], "INTEGER"),
        (ARRAY_NUMERIC_UDF, _array_numeric_udf, ["VARCHAR", "VARCHAR[]"], "INTEGER"),
        (ARRAY_FLOAT_UDF, _array_float_udf, ["DOUBLE", "DOUBLE[]"], "INTEGER"),
    ]
