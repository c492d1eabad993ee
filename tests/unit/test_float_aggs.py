"""PostgreSQL's float aggregates (float_aggs) on their own: values as float.c computes them,
and the order check that refuses what a table's row order could change."""

from __future__ import annotations

import math

import numpy as np
import pytest

from decoding.errors import PgError
from walsender_proxy.sql import float_aggs as fa
from walsender_proxy.sql import numeric_math


def test_sum_is_left_to_right_and_checks_overflow() -> None:
    assert fa.sum_([0.1] * 10) == 0.9999999999999999
    assert fa.sum_([1e16, 1.0, 1.0, -1e16]) == 0.0
    assert fa.sum_([]) is None
    with pytest.raises(PgError) as e:
        fa.sum_([1e308, 1e308])
    assert e.value.sqlstate == "22003"
    assert fa.sum_([math.inf, 1e308]) == math.inf
    with pytest.raises(PgError):
        fa.sum_([3e38, 3e38], float4=True)


def test_youngs_cramer() -> None:
    state = fa.accum([100000003.0, 100000004.0, 100000006.0, 100000007.0])
    assert fa.accum_final("var_pop", state) == 2.5
    assert fa.accum_final("avg", state) == 100000005.0
    assert math.isnan(fa.accum_final("var_pop", fa.accum([math.inf])) or 0.0)
    assert fa.accum_final("var_samp", fa.accum([math.inf])) is None
    with pytest.raises(PgError):
        fa.accum([1e200, -1e200])


def test_regression_finals() -> None:
    state = fa.regr_accum([(2.0, 1.0)])
    assert fa.regr_final("covar_samp", state) is None
    assert fa.regr_final("corr", state) is None
    assert fa.regr_final("regr_avgy", state) == 2.0
    assert fa.regr_final("regr_r2", fa.regr_accum([(5.0, 1.0), (5.0, 2.0)])) == 1.0


def test_order_check() -> None:
    assert fa.exact_sums([0.5, 0.25, 3.0])
    assert not fa.exact_sums([0.1, 0.2, 0.3])
    assert fa.in_any_order([0.1] * 50, fa.sum_, False) == fa.sum_([0.1] * 50)
    with pytest.raises(PgError) as e:
        fa.in_any_order([0.1 * i for i in range(1, 20)], fa.sum_, False)
    assert e.value.sqlstate == "0A000"


def test_float_to_numeric_text() -> None:
    assert numeric_math.text(numeric_math.from_float4(float(np.float32(0.1)))) == "0.1"
    assert numeric_math.text(numeric_math.from_float8(1.23456789012345678)) == "1.23456789012346"
