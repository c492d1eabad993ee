"""make_date, make_time and make_timestamp over whole columns (sql/datetime_make.py): BC years
without a year 0, PostgreSQL's errors for the first row that has one, NULL in NULL out.
Their answers for single values are compared with PostgreSQL 15 in
tests/integration/test_dates_vs_postgres.py."""

from __future__ import annotations

from datetime import date, datetime, time

import pyarrow as pa
import pytest

from decoding.errors import PgError
from decoding.pgvalues import _calendar as cal
from walsender_proxy.sql import datetime_make as dm


def ints(*values: int | None) -> pa.Array:
    return pa.array(values, pa.int64())


def test_negative_years_are_bc_and_nulls_stay_null() -> None:
    got = dm.make_date(ints(-44, 2024, None, -1), ints(3, 2, 1, 1), ints(15, 29, 1, 1))
    days = got.view(pa.int32()).to_pylist()
    assert [cal.format_date(d) if d is not None else None for d in days] == [
        "0044-03-15 BC", "2024-02-29", None, "0001-01-01 BC",
    ]  # fmt: skip


def test_the_first_bad_row_is_the_error() -> None:
    with pytest.raises(PgError) as e:
        dm.make_date(ints(1999, 0, 2013), ints(1, 7, 2), ints(8, 15, 30))
    assert (e.value.sqlstate, e.value.message) == ("22008", "date field value out of range: 0-07-15")
    with pytest.raises(PgError) as e:
        dm.make_date(ints(-4714), ints(11), ints(23))
    assert e.value.message == "date out of range: -4713-11-23"  # (the year as ValidateDate left it)


def test_times_and_timestamps() -> None:
    secs = pa.array([45.887, 60.0, None], pa.float64())
    got = dm.make_timestamp(ints(2014, 2014, 2014), ints(12, 12, 12), ints(28, 28, 28), ints(6, 6, 6), ints(30, 30, 30), secs)
    assert got.to_pylist() == [datetime(2014, 12, 28, 6, 30, 45, 887000), datetime(2014, 12, 28, 6, 31), None]
    assert dm.make_time(ints(1), ints(2), pa.array([3.5])).to_pylist() == [time(1, 2, 3, 500000)]
    with pytest.raises(PgError) as e:
        dm.make_timestamp(ints(2014), ints(12), ints(28), ints(6), ints(30), pa.array([60.5]))
    assert e.value.message == "time field value out of range: 6:30:60.5"
    with pytest.raises(PgError) as e:
        dm.make_time(ints(1), ints(2), pa.array([float("nan")]))
    assert e.value.message == "time field value out of range: 1:02:NaN"
    assert dm.make_date(ints(1999), ints(1), ints(8)).to_pylist() == [date(1999, 1, 8)]
