"""numeric_text: the order key and the grouping guard of unconstrained numeric values,
which the lake keeps as their text."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decoding.errors import PgError
from walsender_proxy.sql.numeric_math import parse, text
from walsender_proxy.sql.numeric_text import grouped, sort_key

numbers = st.decimals(allow_nan=False, allow_infinity=False, places=4, min_value=-(10**9), max_value=10**9)


@given(numbers, numbers)
def test_the_key_orders_as_the_numbers(a: Decimal, b: Decimal) -> None:
    x, y = text(parse(str(a))), text(parse(str(b)))
    assert (sort_key(x) < sort_key(y)) == (a < b)
    assert (sort_key(x) == sort_key(y)) == (a == b)


@given(numbers, numbers)
def test_grouped_texts_are_equal_exactly_when_the_numbers_are(a: Decimal, b: Decimal) -> None:
    """Where the guard lets both values through, text equality is numeric equality."""
    x, y = text(parse(str(a))), text(parse(str(b)))
    try:
        gx, gy = grouped(x), grouped(y)
    except PgError as e:
        assert e.sqlstate == "0A000"
        return
    assert (gx == gy) == (a == b)


@pytest.mark.parametrize("value", ["1.50", "10.0", "0.000"])
def test_trailing_fractional_zeros_are_refused(value: str) -> None:
    with pytest.raises(PgError, match="trailing fractional zeros"):
        grouped(value)


@pytest.mark.parametrize("value", ["10", "-1.5", "NaN", "Infinity", "0", "100"])
def test_other_values_pass(value: str) -> None:
    assert grouped(value) == value
