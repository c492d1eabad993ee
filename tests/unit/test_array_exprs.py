"""array_exprs' macros and width_bucket's functions against a model of PostgreSQL's rules.

The macros run in a bare DuckDB connection on random rectangular nested lists; the model is
PostgreSQL's own definition (array_cmp's order, array_cat's shapes, the bounds functions),
written over Python lists. The comparisons with a real PostgreSQL 15 are in
tests/integration/test_array_functions_vs_postgres.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction
from typing import Any

import duckdb
import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from decoding.errors import PgError
from walsender_proxy.sql import array_exprs, width_bucket


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    c = duckdb.connect()
    for body in array_exprs.MACROS.values():
        c.execute("CREATE MACRO " + body.split("MACRO ", 1)[1])
    yield c
    c.close()


def _lit(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_lit(x) for x in v) + "]"
    return "NULL" if v is None else str(v)


def _typed(v: Any, k: int) -> str:
    return f"{_lit(v)}::INTEGER{'[]' * k}"


@st.composite
def _arrays(draw: st.DrawFn, k: int) -> list[Any]:
    """A rectangular ``k``-level list of small ints and NULLs (never empty)."""
    dims = [draw(st.integers(1, 3)) for _ in range(k)]
    elem = st.one_of(st.none(), st.integers(-2, 2))

    def build(level: int) -> Any:
        if level == k:
            return draw(elem)
        return [build(level + 1) for _ in range(dims[level])]

    return build(0)


def _flat(a: Any) -> list[Any]:
    return [y for x in a for y in _flat(x)] if isinstance(a, list) else [a]


def _dims(a: Any) -> list[int]:
    return [len(a), *_dims(a[0])] if isinstance(a, list) and a else []


def _pg_cmp(a: list[Any], b: list[Any]) -> int:
    """array_cmp: elements in storage order (NULL above any value), then the number of
    elements, then of dimensions, then each dimension."""
    fa, fb = _flat(a), _flat(b)
    for x, y in zip(fa, fb, strict=False):
        if x is None and y is None:
            continue
        if x is None or y is None:
            return 1 if x is None else -1
        if x != y:
            return -1 if x < y else 1
    for x, y in ((len(fa), len(fb)), (len(_dims(a)), len(_dims(b)))):
        if x != y:
            return -1 if x < y else 1
    da, db = _dims(a), _dims(b)
    return (da > db) - (da < db)


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 3).flatmap(lambda k: st.tuples(st.just(k), _arrays(k), _arrays(k))))
def test_sort_key_is_array_cmp(con: duckdb.DuckDBPyConnection, case: tuple[int, list[Any], list[Any]]) -> None:
    k, a, b = case
    lt, eq = con.execute(
        f"SELECT pgc_arr_sortkey{k}({_typed(a, k)}) < pgc_arr_sortkey{k}({_typed(b, k)}),"
        f" pgc_arr_sortkey{k}({_typed(a, k)}) = pgc_arr_sortkey{k}({_typed(b, k)})"
    ).fetchone()
    want = _pg_cmp(a, b)
    assert (lt, eq) == (want < 0, want == 0)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3).flatmap(lambda k: st.tuples(st.just(k), _arrays(k))))
def test_shape_functions(con: duckdb.DuckDBPyConnection, case: tuple[int, list[Any]]) -> None:
    k, a = case
    v = _typed(a, k)
    dims = _dims(a)
    row = con.execute(
        f"SELECT pgc_arr_ndims{k}({v}), pgc_arr_dims{k}({v}), pgc_arr_cardinality{k}({v}),"
        + ", ".join(f"pgc_arr_length{k}({v}, {d}), pgc_arr_lower{k}({v}, {d})" for d in range(0, k + 2))
    ).fetchone()
    want: list[Any] = [k, "".join(f"[1:{n}]" for n in dims), len(_flat(a))]
    for d in range(0, k + 2):
        want += [dims[d - 1], 1] if 1 <= d <= k else [None, None]
    assert list(row) == want


def test_empty_arrays_have_no_dimensions(con: duckdb.DuckDBPyConnection) -> None:
    row = con.execute(
        "SELECT pgc_arr_ndims2([]::INTEGER[][]), pgc_arr_length2([[], []]::INTEGER[][], 1),"
        " pgc_arr_cardinality2([]::INTEGER[][]), pgc_arr_dims1([]::INTEGER[]), pgc_arr_length1(NULL::INTEGER[], 1)"
    ).fetchone()
    assert row == (None, None, 0, None, None)


@settings(max_examples=100, deadline=None)
@given(_arrays(2), _arrays(2), _arrays(1))
def test_array_cat_shapes(con: duckdb.DuckDBPyConnection, a: list[Any], b: list[Any], c: list[Any]) -> None:
    """Equal dimensions join along the first (inner ones must match); one fewer is one
    more element (it must match the others); 2202E otherwise."""

    def run(sql: str) -> Any:
        try:
            return con.execute(sql).fetchone()[0]
        except duckdb.Error as e:
            assert "cannot concatenate incompatible arrays" in str(e)
            return "2202E"

    want_same = a + b if _dims(a)[1:] == _dims(b)[1:] else "2202E"
    assert run(f"SELECT pgc_array_cat2_2({_typed(a, 2)}, {_typed(b, 2)})") == want_same
    want_elem = [*a, c] if _dims(a)[1:] == _dims(c) else "2202E"
    assert run(f"SELECT pgc_array_cat2_1({_typed(a, 2)}, {_typed(c, 1)})") == want_elem
    want_first = [c, *a] if _dims(a)[1:] == _dims(c) else "2202E"
    assert run(f"SELECT pgc_array_cat1_2({_typed(c, 1)}, {_typed(a, 2)})") == want_first


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-2, 2)), max_size=6), st.one_of(st.none(), st.integers(-2, 2)))
def test_element_functions(con: duckdb.DuckDBPyConnection, a: list[int | None], x: int | None) -> None:
    """Elements match as IS NOT DISTINCT FROM: a NULL finds the NULLs."""
    positions, removed, replaced = con.execute(
        f"SELECT pgc_array_positions({_typed(a, 1)}, {_lit(x)}::INTEGER), pgc_array_remove({_typed(a, 1)}, {_lit(x)}::INTEGER),"
        f" pgc_array_replace({_typed(a, 1)}, {_lit(x)}::INTEGER, 9)"
    ).fetchone()
    assert positions == [i + 1 for i, v in enumerate(a) if v == x]
    assert removed == [v for v in a if v != x]
    assert replaced == [9 if v == x else v for v in a]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=3), st.one_of(st.none(), st.integers(-5, 5)))
def test_array_fill(con: duckdb.DuckDBPyConnection, dims: list[int], v: int | None) -> None:
    k = len(dims)
    got = con.execute(f"SELECT pgc_array_fill{k}({_lit(v)}::INTEGER, {_lit(dims)}::INTEGER[])").fetchone()[0]

    def build(level: int) -> Any:
        return v if level == k else [build(level + 1) for _ in range(dims[level])]

    assert got == ([] if 0 in dims else build(0))


def test_nested_constructor_checks(con: duckdb.DuckDBPyConnection) -> None:
    assert con.execute("SELECT pgc_array_nest2([[], NULL]::INTEGER[][])").fetchone()[0] == []
    assert con.execute("SELECT pgc_array_nest2([[1, 2], [3, 4]]::INTEGER[][])").fetchone()[0] == [[1, 2], [3, 4]]
    for bad in ("[[1, 2], [3]]", "[[1, 2], NULL]", "[[1], []]"):
        with pytest.raises(duckdb.Error, match="matching dimensions"):
            con.execute(f"SELECT pgc_array_nest2({bad}::INTEGER[][])").fetchone()


# -- width_bucket ------------------------------------------------------------------------------

_num = st.decimals(min_value=-1000, max_value=1000, places=3, allow_nan=False, allow_infinity=False)


@settings(max_examples=300)
@given(_num, _num, _num, st.integers(1, 10**6))
def test_numeric_bucket_is_exact(x: Decimal, lo: Decimal, hi: Decimal, n: int) -> None:
    """The bucket is the floor of the exact quotient, plus one; 0 and n + 1 outside."""
    if lo == hi:
        with pytest.raises(PgError):
            width_bucket.numeric_bucket(str(x), str(lo), str(hi), n)
        return
    got = width_bucket.numeric_bucket(str(x), str(lo), str(hi), n)
    fx, flo, fhi = Fraction(x), Fraction(lo), Fraction(hi)
    if lo < hi:
        want = 0 if x < lo else n + 1 if x >= hi else math.floor((fx - flo) * n / (fhi - flo)) + 1
    else:
        want = 0 if x > lo else n + 1 if x <= hi else math.floor((flo - fx) * n / (flo - fhi)) + 1
    assert got == want


@settings(max_examples=300)
@given(st.lists(st.integers(-5, 5), max_size=8), st.integers(-6, 6))
def test_array_bucket_on_sorted_thresholds_counts(thresholds: list[int], x: int) -> None:
    """On sorted thresholds the binary search counts the thresholds at or below x."""
    ts = sorted(thresholds)
    want = sum(1 for t in ts if t <= x)
    assert width_bucket.array_bucket_numeric(str(x), [str(t) for t in ts]) == want
    assert width_bucket.array_bucket_float8(float(x), [float(t) for t in ts]) == want


def test_array_bucket_nan_and_nulls() -> None:
    nan = float("nan")
    assert width_bucket.array_bucket_float8(nan, [1.0, nan, 3.0]) == 3
    assert width_bucket.array_bucket_float8(2.0, [1.0, nan, 3.0]) == 1
    assert width_bucket.array_bucket_numeric("NaN", ["1", "NaN"]) == 2
    with pytest.raises(PgError) as e:
        width_bucket.array_bucket_numeric("1", ["1", None])
    assert e.value.sqlstate == "22004"

