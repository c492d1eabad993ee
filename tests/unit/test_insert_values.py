"""One bound value into a column (the single-row INSERT path, insert_fast.ColumnInput): the
array laid out from the value's bytes is the array pa.array builds, and a value pa.array
refuses (out of range) still leaves the row to the DuckDB path, which raises PostgreSQL's
error."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoding.catalog import Column
from decoding.pgtypes import parse_type
from walsender_proxy.sql.insert_fast import ColumnInput


def column_input(type_text: str) -> ColumnInput:
    return ColumnInput(Column(1, "c", parse_type(type_text)))


def arrow_says(inp: ColumnInput, v: Any) -> pa.Array | None:
    try:
        return pa.array([v], inp.target)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        return None


def assert_same(inp: ColumnInput, v: Any) -> None:
    got = inp.array([v])
    want = arrow_says(inp, v)
    if want is None:
        assert got is None
        return
    assert got is not None
    assert got.type == want.type
    assert got.equals(want) or (v != v and got.is_nan().to_pylist() == [True])  # NaN
    got.validate(full=True)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(2**70), max_value=2**70), st.sampled_from(["int2", "int4", "int8"]))
def test_integers(v: int, type_text: str) -> None:
    assert_same(column_input(type_text), v)


@pytest.mark.parametrize("type_text", ["int2", "int4", "int8"])
def test_integer_bounds(type_text: str) -> None:
    inp = column_input(type_text)
    bits = {"int2": 16, "int4": 32, "int8": 64}[type_text]
    for v in (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1, 0):
        assert inp.array([v]).to_pylist() == [v]
    for v in (-(2 ** (bits - 1)) - 1, 2 ** (bits - 1)):
        assert inp.array([v]) is None  # the DuckDB path words 22003


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_float8(v: float) -> None:
    assert_same(column_input("float8"), v)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_text(v: str) -> None:
    assert_same(column_input("text"), v)


def test_text_that_is_not_utf8_is_refused() -> None:
    with pytest.raises(UnicodeEncodeError):  # _values_from_plan takes it as "not simple"
        column_input("text").array(["\udc80"])


ZONES = st.sampled_from([dt.UTC, ZoneInfo("Europe/Berlin"), ZoneInfo("America/St_Johns"),
                         dt.timezone(dt.timedelta(hours=-5, minutes=-30))])


@settings(max_examples=200, deadline=None)
@given(st.datetimes(timezones=ZONES))
def test_timestamptz(v: dt.datetime) -> None:
    assert_same(column_input("timestamptz"), v)


@settings(max_examples=200, deadline=None)
@given(st.datetimes())
def test_timestamp(v: dt.datetime) -> None:
    assert_same(column_input("timestamp"), v)


def test_a_value_of_another_kind_keeps_the_general_path() -> None:
    assert column_input("timestamptz").array([dt.datetime(2024, 1, 1)]) is None  # naive
    assert column_input("timestamp").array([dt.datetime(2024, 1, 1, tzinfo=dt.UTC)]) is None
    assert column_input("float8").array([3]).to_pylist() == [3.0]  # via pa.array
    assert column_input("int8").array([True]) is None  # a bool is not an integer here
    assert column_input("int4").array([None]).to_pylist() == [None]
