"""jsonb_ops.sort_key orders jsonb texts as PostgreSQL's jsonb btree operators do
(compareJsonbContainers); the integration test compares it with a real PostgreSQL 15."""

from __future__ import annotations

from decimal import Decimal

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from decoding.errors import PgError
from walsender_proxy.sql.jsonb_ops import grouped, number_text, sort_key

#: PostgreSQL 15's order for these values (SELECT … ORDER BY j on a real server).
ORDERED = [
    "[]", "null", '""', '"a"', '"ab"', '"b"', "-100", "-1.5", "0", "0.001", "1", "2.5", "1e2",
    "false", "true", '["a"]', "[1]", "[1, 2]", "{}", '{"b": 1}', '{"a": 1, "b": 2}', '{"aa": 1, "b": 2}',
]  # fmt: skip


def test_order_of_types_counts_and_values() -> None:
    assert sorted(ORDERED, key=sort_key) == ORDERED


def test_numbers_compare_as_numerics() -> None:
    assert sort_key('{"a": 1.0}') == sort_key('{"a": 1.00}') == sort_key('{"a": 1}')
    assert sort_key("-0.0") == sort_key("0")
    assert sort_key("123456789012345678901234567890.5") > sort_key("123456789012345678901234567890")


@settings(max_examples=200)
@given(st.lists(st.decimals(allow_nan=False, allow_infinity=False, places=4), min_size=2, max_size=2))
def test_number_keys_order_as_the_numbers(pair: list[Decimal]) -> None:
    a, b = (sort_key(str(x)) for x in pair)
    assert (a < b) == (pair[0] < pair[1]) and (a == b) == (pair[0] == pair[1])


def test_grouping_refuses_only_numbers_with_trailing_zeros() -> None:
    assert grouped('{"b":1.5, "a": [1, "1.50"]}') == '{"a": [1, "1.50"], "b": 1.5}'
    with pytest.raises(PgError) as e:
        grouped('{"a": 1.50}')
    assert e.value.sqlstate == "0A000"


def test_numeric_cast_keeps_every_digit() -> None:
    assert number_text("12345.0000000000000000000000000000000000000000000005") == "12345.0000000000000000000000000000000000000000000005"
    with pytest.raises(PgError, match="cannot cast jsonb string to type numeric"):
        number_text('"1"')
