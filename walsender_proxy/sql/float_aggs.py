"""PostgreSQL 15's float aggregates (``float.c``): sum, avg, variance, stddev, covariance,
correlation and the ``regr_*`` family over ``float4``/``float8``, computed as PostgreSQL
computes them, and how the rewriter writes them for DuckDB.

DuckDB's own versions answer differently: its sum of doubles is compensated (ten 0.1s
sum to 1, PostgreSQL's plain left-to-right float8pl gives 0.9999999999999999) and never
raises where PostgreSQL raises 22003 "value out of range: overflow"; its variance is not
the Youngs-Cramer update of ``float8_accum`` (the variance of 100000003…100000007 is
2.5 in PostgreSQL, 2.50000000558794 in DuckDB), and it answers 0 where an infinite or NaN
input makes PostgreSQL's NaN. So each aggregate becomes DuckDB's ``list()`` of its
inputs (keeping its DISTINCT, ORDER BY, FILTER and OVER, so windows and frames work) and a
Python UDF here that runs PostgreSQL's transition function over the list in order, then
its final function. NULL inputs are skipped, as the strict transition functions skip
them; a DISTINCT aggregate sees its values sorted, as PostgreSQL sorts them.

Results are bit-for-bit PostgreSQL's when the rows come in PostgreSQL's order: Python's
floats are IEEE doubles with the C library's operations."""

from __future__ import annotations

import copy
import itertools
import math
import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from pglast import ast
from pglast.enums import CoercionForm, SortByDir

from decoding.errors import PgError
from walsender_proxy.sql import float_math
from walsender_proxy.sql.nodes import bool_const as const
from walsender_proxy.sql.nodes import call
from walsender_proxy.sql.nodes import cast as _cast
from walsender_proxy.sql.nodes import op as op_node
from walsender_proxy.sql.numeric_exprs import INTEGERS, Operand

PREFIX = "wpx_floatagg_"
#: FRAMEOPTION_DEFAULTS (RANGE UNBOUNDED PRECEDING to CURRENT ROW): without an ORDER BY,
#: the whole partition.
_DEFAULT_FRAME = 0x2 | 0x20 | 0x400
_FLOATS = ("float4", "float8")
#: Argument types the float8-only aggregates take (converted to float8 as PostgreSQL's
#: implicit casts convert them).
_TO_FLOAT8 = frozenset({*INTEGERS, "numeric", "float4", "float8", "unknown"})

#: One-argument aggregates over float8_accum's (N, Sx, Sxx): PostgreSQL name → final.
ACCUM = {
    "avg": "avg", "variance": "var_samp", "var_samp": "var_samp", "var_pop": "var_pop",
    "stddev": "stddev_samp", "stddev_samp": "stddev_samp", "stddev_pop": "stddev_pop",
}  # fmt: skip
#: Two-argument aggregates over float8_regr_accum's (N, Sx, Sxx, Sy, Syy, Sxy).
REGR = frozenset({
    "covar_pop", "covar_samp", "corr", "regr_sxx", "regr_syy", "regr_sxy", "regr_avgx",
    "regr_avgy", "regr_r2", "regr_slope", "regr_intercept",
})  # fmt: skip


def _overflow() -> PgError:
    return PgError(*float_math.OVERFLOW)


def _div(a: float, b: float) -> float:
    """IEEE division, as C divides (Python raises for a zero divisor)."""
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


# ------------------------------------------------------------------ PostgreSQL's math


def sum_(values: Sequence[float], float4: bool = False) -> float | None:
    """float8pl (float4pl in single precision) from the first value on, left to right:
    22003 when finite operands give an infinite sum; NULL for no values."""
    if not len(values):
        return None
    dtype = np.float32 if float4 else np.float64
    x = np.asarray(values, dtype=dtype)
    with np.errstate(all="ignore"):
        sums = np.add.accumulate(x)  # (sequential: each partial sum rounded in its type)
    if len(x) > 1:
        bad = np.isinf(sums[1:]) & ~np.isinf(sums[:-1]) & ~np.isinf(x[1:])
        if bad.any():
            raise _overflow()
    return float(sums[-1])


def accum(values: Sequence[float]) -> tuple[float, float, float]:
    """float8_accum (float4_accum widens first) over the values: (N, Sx, Sxx) by the
    Youngs-Cramer update, 22003 when finite inputs overflow, Sxx NaN after an infinite or
    NaN input."""
    n, sx, sxx = 0.0, 0.0, 0.0
    for v in values:
        n1 = n + 1.0
        sx1 = sx + v
        if n > 0.0:
            tmp = v * n1 - sx1
            sxx = sxx + tmp * tmp / (n1 * n)
            if math.isinf(sx1) or math.isinf(sxx):
                if not math.isinf(sx) and not math.isinf(v):
                    raise _overflow()
                sxx = math.nan
        elif math.isnan(v) or math.isinf(v):
            sxx = math.nan
        n, sx = n1, sx1
    return n, sx, sxx


def accum_final(name: str, state: tuple[float, float, float]) -> float | None:
    """float8_avg, float8_var_pop, float8_var_samp, float8_stddev_pop, float8_stddev_samp."""
    n, sx, sxx = state
    if name == "avg":
        return None if n == 0.0 else sx / n
    if name in ("var_pop", "stddev_pop"):
        if n == 0.0:
            return None
        var = sxx / n
    else:
        if n <= 1.0:
            return None
        var = sxx / (n - 1.0)
    return math.sqrt(var) if name.startswith("stddev") else var


def regr_accum(pairs: Sequence[tuple[float, float]]) -> tuple[float, ...]:
    """float8_regr_accum over (y, x) pairs: (N, Sx, Sxx, Sy, Syy, Sxy) by the
    Youngs-Cramer update, with its overflow checks and NaNs."""
    n, sx, sxx, sy, syy, sxy = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for y, x in pairs:
        n1 = n + 1.0
        sx1 = sx + x
        sy1 = sy + y
        if n > 0.0:
            tmp_x = x * n1 - sx1
            tmp_y = y * n1 - sy1
            scale = 1.0 / (n1 * n)
            sxx = sxx + tmp_x * tmp_x * scale
            syy = syy + tmp_y * tmp_y * scale
            sxy = sxy + tmp_x * tmp_y * scale
            if any(math.isinf(v) for v in (sx1, sxx, sy1, syy, sxy)):
                fin_x = not math.isinf(sx) and not math.isinf(x)
                fin_y = not math.isinf(sy) and not math.isinf(y)
                if (
                    ((math.isinf(sx1) or math.isinf(sxx)) and fin_x)
                    or ((math.isinf(sy1) or math.isinf(syy)) and fin_y)
                    or (math.isinf(sxy) and fin_x and fin_y)
                ):
                    raise _overflow()
                sxx, syy, sxy = (math.nan if math.isinf(v) else v for v in (sxx, syy, sxy))
        else:
            if math.isnan(x) or math.isinf(x):
                sxx = sxy = math.nan
            if math.isnan(y) or math.isinf(y):
                syy = sxy = math.nan
        n, sx, sy = n1, sx1, sy1
    return n, sx, sxx, sy, syy, sxy


def regr_final(name: str, state: tuple[float, ...]) -> float | None:
    """The final functions of covar_pop … regr_intercept (float8_covar_pop and the others)."""
    n, sx, sxx, sy, syy, sxy = state
    if n < 1.0 or (name == "covar_samp" and n < 2.0):
        return None
    if name == "regr_sxx":
        return sxx
    if name == "regr_syy":
        return syy
    if name == "regr_sxy":
        return sxy
    if name == "regr_avgx":
        return sx / n
    if name == "regr_avgy":
        return sy / n
    if name == "covar_pop":
        return sxy / n
    if name == "covar_samp":
        return sxy / (n - 1.0)
    if name == "corr":
        if sxx == 0 or syy == 0:
            return None
        return _div(sxy, math.sqrt(sxx * syy))
    if sxx == 0:  # regr_r2, regr_slope, regr_intercept: NULL for a vertical line
        return None
    if name == "regr_r2":
        return 1.0 if syy == 0 else _div(sxy * sxy, sxx * syy)
    if name == "regr_slope":
        return sxy / sxx
    return (sy - sx * sxy / sxx) / n  # regr_intercept


# ------------------------------------------------------------------ row order


#: Up to this many values, an order-dependent result is checked over every order.
PERMUTE_MAX = 6
_FLT_MAX = 3.4028234663852886e38
_DBL_MAX = 1.7976931348623157e308


def _key(result: object) -> object:
    """A result compared bit for bit (NaN equals NaN, -0 differs from 0)."""
    return struct.pack("<d", result) if isinstance(result, float) else result


def _outcome(compute: Callable[[Sequence[Any]], float | None], values: Sequence[Any]) -> object:
    try:
        return _key(compute(values))
    except PgError as e:
        return ("error", e.sqlstate, e.message)


def _dyadic(v: float) -> tuple[int, int]:
    """(m, k) with v = m·2^k, m an integer."""
    n, d = v.as_integer_ratio()
    if d > 1:
        return n, -(d.bit_length() - 1)
    k = (n & -n).bit_length() - 1 if n else 0
    return n >> k, k


def exact_sums(values: Sequence[float], float4: bool = False) -> bool:
    """Whether every partial sum of the finite values, in any order, is exact in the type
    (float4's 24-bit or float8's 53-bit significand) and finite: then a sequential sum
    does not depend on the order of its inputs."""
    finite = [_dyadic(v) for v in values if math.isfinite(v)]
    if not finite:
        return True
    k0 = min(k for _, k in finite)
    total = sum(abs(m) << (k - k0) for m, k in finite)
    if total >= 1 << (24 if float4 else 53):
        return False
    try:
        return math.ldexp(float(total), k0) <= (_FLT_MAX if float4 else _DBL_MAX)
    except OverflowError:
        return False


def _bounded(values: Sequence[float]) -> bool:
    """Whether float8_accum cannot overflow over the finite values in any order:
    |tmp| = |v·N - Sx| ≤ 2·N·max|v|, whose square stays far below DBL_MAX."""
    finite = [abs(v) for v in values if math.isfinite(v)]
    return not finite or (2.0 * len(values) * max(finite)) ** 2 < 1e300


def in_any_order(
    values: Sequence[Any], compute: Callable[[Sequence[Any]], float | None], order_free: bool
) -> float | None:
    """``compute(values)`` when the rows' order cannot change it: ``order_free`` (proven by
    the caller), every value the same, or every order of a few values giving the same
    result (or error). Otherwise 0A000: the rows do not come here in PostgreSQL's order
    (a table's heap order, a sort's order of ties), and float arithmetic depends on it."""
    if order_free or len(values) <= 1 or all(_key(v) == _key(values[0]) for v in values):
        return compute(values)
    if len(values) <= PERMUTE_MAX:
        first = _outcome(compute, values)
        if all(_outcome(compute, p) == first for p in itertools.permutations(values)):
            return compute(values)
    raise PgError(
        "0A000",
        "a float aggregate whose result depends on the order of its input rows (which differs"
        " from PostgreSQL's here: a table, a join, a GROUP BY, a sort with ties) is not"
        " supported by walsender-proxy",
    )


# ------------------------------------------------------------------- DuckDB functions


def udf_name(name: str) -> str:
    return PREFIX + name


def _list_values(lists: pa.Array | pa.ChunkedArray) -> list[list[float] | None]:
    """Each list of a DuckDB ``list()`` result without its NULLs (None for a NULL list)."""
    if isinstance(lists, pa.ChunkedArray):
        lists = lists.combine_chunks()
    return [None if vs is None else [v for v in vs if v is not None] for vs in lists.to_pylist()]


def _strict_flags(strict: pa.Array | pa.ChunkedArray) -> list[bool]:
    return [bool(x) for x in strict.to_pylist()]


def _sum_udf(float4: bool) -> Callable[[pa.Array, pa.Array], pa.Array]:
    def fn(lists: pa.Array | pa.ChunkedArray, strict: pa.Array | pa.ChunkedArray) -> pa.Array:
        out: list[float | None] = []
        for vs, st in zip(_list_values(lists), _strict_flags(strict), strict=True):
            if vs is None:
                out.append(None)
            elif st:
                out.append(in_any_order(vs, lambda v: sum_(v, float4), exact_sums(vs, float4)))
            else:
                out.append(sum_(vs, float4))
        return pa.array(out, pa.float32() if float4 else pa.float64())

    return fn


def _accum_udf(final: str) -> Callable[[pa.Array, pa.Array], pa.Array]:
    def compute(values: Sequence[float]) -> float | None:
        return accum_final(final, accum(values))

    def fn(lists: pa.Array | pa.ChunkedArray, strict: pa.Array | pa.ChunkedArray) -> pa.Array:
        out: list[float | None] = []
        for vs, st in zip(_list_values(lists), _strict_flags(strict), strict=True):
            if vs is None:
                out.append(None)
            elif st:
                # avg is Sx/N: free of the order when the sums are exact; the variances are
                # NaN in any order once an infinity or NaN is among the values
                free = _bounded(vs) and (
                    exact_sums(vs) if final == "avg" else not all(math.isfinite(v) for v in vs)
                )
                out.append(in_any_order(vs, compute, free))
            else:
                out.append(compute(vs))
        return pa.array(out, pa.float64())

    return fn


def _regr_udf(final: str) -> Callable[[pa.Array, pa.Array], pa.Array]:
    def compute(pairs: Sequence[tuple[float, float]]) -> float | None:
        return regr_final(final, regr_accum(pairs))

    def fn(lists: pa.Array | pa.ChunkedArray, strict: pa.Array | pa.ChunkedArray) -> pa.Array:
        if isinstance(lists, pa.ChunkedArray):
            lists = lists.combine_chunks()
        out: list[float | None] = []
        for pairs, st in zip(lists.to_pylist(), _strict_flags(strict), strict=True):
            if pairs is None:
                out.append(None)
                continue
            kept = [
                (p[0], p[1])
                for p in pairs
                if p is not None and p[0] is not None and p[1] is not None
            ]
            out.append(in_any_order(kept, compute, False) if st else compute(kept))
        return pa.array(out, pa.float64())

    return fn


def udfs() -> list[tuple[str, Callable[..., pa.Array], list[str], str]]:
    """(name, Arrow function, DuckDB argument types, DuckDB result type) of every UDF."""
    out: list[tuple[str, Callable[..., pa.Array], list[str], str]] = [
        (udf_name("sum_float4"), _sum_udf(True), ["FLOAT[]", "BOOLEAN"], "FLOAT"),
        (udf_name("sum_float8"), _sum_udf(False), ["DOUBLE[]", "BOOLEAN"], "DOUBLE"),
    ]
    for final in sorted(set(ACCUM.values())):
        out.append((udf_name(final), _accum_udf(final), ["DOUBLE[]", "BOOLEAN"], "DOUBLE"))
    for final in sorted(REGR):
        out.append((udf_name(final), _regr_udf(final), ["DOUBLE[][]", "BOOLEAN"], "DOUBLE"))
    return out


# ---------------------------------------------------------------------- the rewriting


def _list_of(node: ast.FuncCall, value: ast.Node, sort_key: ast.Node | None) -> ast.FuncCall:
    """DuckDB's ``list(value)`` with the aggregate's DISTINCT, ORDER BY, FILTER and OVER; a
    DISTINCT aggregate without ORDER BY gets its values sorted (PostgreSQL sorts them to
    find the duplicates, and the transition function sees them in that order)."""
    order = copy.deepcopy(node.agg_order)
    if node.agg_distinct and not order and sort_key is not None:
        order = (
            ast.SortBy(
                node=copy.deepcopy(sort_key), sortby_dir=SortByDir.SORTBY_DEFAULT, sortby_nulls=0
            ),
        )
    return ast.FuncCall(
        funcname=(ast.String(sval="list"),), args=(value,), agg_distinct=node.agg_distinct,
        agg_order=order, agg_filter=copy.deepcopy(node.agg_filter), over=copy.deepcopy(node.over),
        funcformat=CoercionForm.COERCE_EXPLICIT_CALL,
    )  # fmt: skip


def _count(
    node: ast.FuncCall, keys: Sequence[ast.Node] | None, over: ast.WindowDef | None
) -> ast.FuncCall:
    """``count(DISTINCT ROW(keys))`` under the aggregate's FILTER (``count(*)`` without keys)."""
    return ast.FuncCall(
        funcname=(ast.String(sval="count"),),
        args=None if keys is None else (ast.RowExpr(args=tuple(keys), row_format=CoercionForm.COERCE_EXPLICIT_CALL),),
        agg_star=keys is None, agg_distinct=keys is not None, agg_filter=copy.deepcopy(node.agg_filter),
        over=copy.deepcopy(over), funcformat=CoercionForm.COERCE_EXPLICIT_CALL,
    )  # fmt: skip


def _strict(node: ast.FuncCall, ordered: bool, value: ast.Node) -> ast.Node:
    """Whether the UDF must answer only what no order of the rows changes: not when they
    come in PostgreSQL's order (``ordered``), are sorted by DISTINCT, or by an ORDER BY
    (the aggregate's, or an inline window's) under which no two rows tie — that is
    decided row by row, counting the distinct sort keys of the group or partition."""
    over = node.over
    plain = not node.agg_order and (
        over is None or not (over.partitionClause or over.orderClause or over.refname or over.name)
    )
    if (ordered and plain) or node.agg_distinct:  # (a sort would not keep the order of ties)
        return const(False)
    if over is not None:
        if over.refname or over.name or not over.orderClause:
            return const(True)
        whole = ast.WindowDef(
            partitionClause=copy.deepcopy(over.partitionClause), frameOptions=_DEFAULT_FRAME
        )
        sort, counted_over = over.orderClause, whole
    elif node.agg_order:
        sort, counted_over = node.agg_order, None
    else:
        return const(True)
    # two rows tie when their sort keys are equal and their values are not (swapping
    # equal values changes nothing): as many distinct keys as distinct (keys, value)
    keys = [copy.deepcopy(k.node) for k in sort]
    with_value = [*copy.deepcopy(keys), copy.deepcopy(value)]
    return op_node("<>", _count(node, keys, counted_over), _count(node, with_value, counted_over))


def aggregate(
    node: ast.FuncCall,
    name: str,
    args: Sequence[Operand],
    to_float8: Callable[[Operand], ast.Node],
    ordered: bool,
) -> tuple[ast.Node, str] | None:
    """``name(args)`` as PostgreSQL's float aggregate, with its result type; None when
    PostgreSQL would not pick a float version (integer and numeric arguments of sum, avg
    and the variances are numeric's). ``to_float8`` converts an operand as PostgreSQL's
    implicit cast to float8 does. ``ordered``: the rows come in PostgreSQL's order (no
    table, join, GROUP BY or sort); otherwise the UDF answers only what no order of the
    rows changes, or what an ORDER BY without ties fixes.
    Raises 0A000 where the arguments' types are not known."""
    if node.agg_star or node.agg_within_group or node.func_variadic:
        return None
    one = len(args) == 1 and (name == "sum" or name in ACCUM) and args[0].type in _FLOATS
    two = len(args) == 2 and name in REGR
    if not (one or two):
        return None
    if node.agg_distinct and node.over is not None:
        raise PgError("0A000", "DISTINCT is not implemented for window functions")
    if node.agg_order and node.over is not None:
        raise PgError("0A000", "aggregate ORDER BY is not implemented for window functions")
    if one:
        arg = args[0]
        float4 = name == "sum" and arg.type == "float4"
        # (float4_accum widens each value to float8, exactly)
        value = _cast(arg.node, "real" if float4 else "double")
        strict = _strict(node, ordered, value)
        if name == "sum":
            return call(udf_name(f"sum_{arg.type}"), _list_of(node, value, value), strict), arg.type
        return call(udf_name(ACCUM[name]), _list_of(node, value, value), strict), "float8"
    if any(a.type is None for a in args):
        raise PgError(
            "0A000",
            f"{name}() of arguments whose types are not known is not supported by walsender-proxy",
        )
    if node.agg_distinct:
        raise PgError("0A000", f"{name}() with DISTINCT is not supported by walsender-proxy")
    if not all(a.type in _TO_FLOAT8 for a in args):
        return None  # (PostgreSQL's 42883, as DuckDB's resolution reports it)
    pair = call("list_value", *(to_float8(a) for a in args))  # (y, x): one list keeps them paired
    return call(udf_name(name), _list_of(node, pair, None), _strict(node, ordered, pair)), "float8"
