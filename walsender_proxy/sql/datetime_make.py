"""make_date, make_time, make_timestamp and make_timestamptz as PostgreSQL 15 computes them.

DuckDB has functions of the same names that answer differently without an error: they
number years astronomically (``make_date(-44, 3, 15)`` is 45 BC there; PostgreSQL reads a
negative year as BC and has no year 0, so it is 44 BC), take year 0, carry seconds past 60
into the next minute (``make_timestamp(…, 30, 60.5)``) and word their errors otherwise.
These are UDFs over Arrow arrays that check each row as date.c's ``make_date`` and
``make_time`` and timestamp.c's ``make_timestamp_internal`` do, and raise the first
failure with PostgreSQL's SQLSTATE and message (the values printed with ``%d`` and
``%02g``). ``make_timestamptz`` with a time zone applies DuckDB's ``timezone()`` to the
local timestamp, as PostgreSQL applies the zone to ``make_timestamp_internal``'s result.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
from pglast import ast

from decoding.errors import PgError
from decoding.pgvalues import _calendar as cal
from walsender_proxy.sql import session_zone
from walsender_proxy.sql.nodes import call, cast

PREFIX = "wpx_"
#: PostgreSQL's name → (argument counts the UDF takes, the result's PostgreSQL type).
FUNCTIONS: dict[str, tuple[tuple[int, ...], str]] = {
    "make_date": ((3,), "date"),
    "make_time": ((3,), "time"),
    "make_timestamp": ((6,), "timestamp"),
    "make_timestamptz": ((6, 7), "timestamptz"),
}
_INT32_MIN = -(2**31)
_USECS_PER_DAY = cal.USECS_PER_DAY
#: datatype/timestamp.h: Julian day limits (JULIAN_MINYEAR/MONTH, JULIAN_MAXYEAR/MONTH).
_JULIAN_MINYEAR, _JULIAN_MINMONTH = -4713, 11
_JULIAN_MAXYEAR, _JULIAN_MAXMONTH = 5874898, 6
#: Days from 1970 whose microseconds, plus a day, fit int64.
_LAKE_DAYS = (cal.INT64_MAX - cal.USECS_PER_DAY) // cal.USECS_PER_DAY
#: Days from PostgreSQL's epoch of its first and last dates (IS_VALID_DATE).
_DATE_MIN_PG = -cal.POSTGRES_EPOCH_JDATE
_DATE_END_PG = 2147483494 - cal.POSTGRES_EPOCH_JDATE
_MDAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)


#: Argument types PostgreSQL converts implicitly to the parameters' int4, float8 and text
#: (None: not inferred, DuckDB's binder decides).
_TO_INT4 = frozenset({None, "unknown", "int2", "int4"})
_TO_FLOAT8 = _TO_INT4 | {"int8", "numeric", "float4", "float8"}
_TO_TEXT = frozenset({None, "unknown", "text", "varchar", "bpchar", "name"})


def call_of(name: str, args: Sequence[ast.Node], types: Sequence[str | None]) -> ast.Node | None:
    """The UDF call computing PostgreSQL's ``name(args)`` for arguments of the PostgreSQL
    ``types``; None when PostgreSQL has no such function (another number of arguments, a
    bigint year: there is no implicit cast to integer)."""
    counts, _ = FUNCTIONS[name]
    if len(args) not in counts:
        return None
    accepts = [_TO_INT4] * (3 if name == "make_date" else 2 if name == "make_time" else 5)
    accepts += [] if name == "make_date" else [_TO_FLOAT8]
    accepts += [_TO_TEXT] if len(args) == 7 else []
    if any(t not in ok for t, ok in zip(types, accepts, strict=True)):
        return None
    # a quoted literal is read as the parameter's type ('x' is not a valid integer)
    args = [
        cast(a, "integer" if ok is _TO_INT4 else "double") if t == "unknown" and ok is not _TO_TEXT else a
        for a, t, ok in zip(args, types, accepts, strict=True)
    ]
    if name == "make_timestamptz" and len(args) == 7:
        # the local timestamp in the given zone (make_timestamptz_at_timezone)
        return call("timezone", args[6], call(PREFIX + "make_timestamp", *args[:6]))
    if name == "make_timestamptz" and session_zone.ZONE.get():
        # the local timestamp in the session's zone: DuckDB's cast, in its TimeZone (the session's)
        return cast(call(PREFIX + "make_timestamp", *args), "timestamptz")
    return call(PREFIX + name, *args)


def result_type(name: str) -> str:
    return FUNCTIONS[name][1]


# -- PostgreSQL's formatting of the values in the messages ----------------------------------


def _g(sec: float) -> str:
    """C's ``%02g`` as PostgreSQL's snprintf prints it (NaN and the infinities spelled out)."""
    if math.isnan(sec):
        return "NaN"
    if math.isinf(sec):
        return "Infinity" if sec > 0 else "-Infinity"
    return f"{sec:02g}"


def _date_text(y: int, m: int, d: int) -> str:
    return f"{y}-{m:02d}-{d:02d}"


def _time_text(h: int, mi: int, sec: float) -> str:
    return f"{h}:{mi:02d}:{_g(sec)}"


# -- the checks, vectorised: each returns the rows that fail it ------------------------------


def _validate_date(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ValidateDate(DTK_DATE_M, …) of (year, month, day) where a negative year is BC:
    (rows that fail, the internal year — 1 BC is 0 — as it stands after the year step)."""
    bc = y < 0
    # (-INT_MIN wraps to itself in C, and is then no valid BC year)
    year = np.where(bc, np.where(y == _INT32_MIN, y, -y), y)
    bad = year <= 0
    year = np.where(bc & ~bad, -(year - 1), year)
    bad |= (m < 1) | (m > 12) | (d < 1) | (d > 31)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    mdays = _MDAYS[np.clip(m, 0, 12)] + ((m == 2) & leap)
    bad |= d > mdays
    return bad, year


def _valid_julian(year: np.ndarray, m: np.ndarray) -> np.ndarray:
    """IS_VALID_JULIAN (the day is not looked at)."""
    return ((year > _JULIAN_MINYEAR) | ((year == _JULIAN_MINYEAR) & (m >= _JULIAN_MINMONTH))) & (
        (year < _JULIAN_MAXYEAR) | ((year == _JULIAN_MAXYEAR) & (m < _JULIAN_MAXMONTH))
    )


def _days(year: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Days from 1970-01-01 (year 0 is 1 BC); rows outside the Julian range are garbage."""
    safe = _valid_julian(year, m)
    return cal.days_from_civil(np.where(safe, year, 2000), np.where(safe, m, 1), np.where(safe, d, 1))


def _time_overflows(h: np.ndarray, mi: np.ndarray, sec: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float_time_overflows: (rows that fail, microseconds of the time for the others)."""
    with np.errstate(invalid="ignore", over="ignore"):
        us = np.rint(sec * 1e6)
        bad = (h < 0) | (h > 24) | (mi < 0) | (mi >= 60) | np.isnan(sec) | (us < 0) | (us > 60e6)
        us = np.where(bad, 0, us).astype(np.int64)
    t = ((np.where(bad, 0, h) * 60 + np.where(bad, 0, mi)) * 60) * cal.USECS_PER_SEC + us
    bad |= t > _USECS_PER_DAY
    return bad, np.where(bad, 0, t)


# -- the UDFs ---------------------------------------------------------------------------------


def _ints(a: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(a.fill_null(0), dtype=np.int64)


def _floats(a: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(a.fill_null(0.0), dtype=np.float64)


def _valid(*arrays: pa.Array | pa.ChunkedArray) -> np.ndarray:
    ok = np.ones(len(arrays[0]), dtype=bool)
    for a in arrays:
        ok &= np.asarray(a.is_valid())
    return ok


def _first(bad: np.ndarray) -> int | None:
    rows = np.flatnonzero(bad)
    return int(rows[0]) if len(rows) else None


def make_date(y: pa.Array, m: pa.Array, d: pa.Array) -> pa.Array:
    """date.c's make_date; its messages print the year as ValidateDate left it."""
    valid = _valid(y, m, d)
    yy, mm, dd = _ints(y), _ints(m), _ints(d)
    field_bad, year = _validate_date(yy, mm, dd)
    field_bad &= valid
    julian_bad = valid & ~field_bad & ~_valid_julian(year, mm)
    days = _days(year, mm, dd)
    pg_days = days - cal.PG_EPOCH_DAYS
    range_bad = valid & ~field_bad & ~julian_bad & ((pg_days < _DATE_MIN_PG) | (pg_days >= _DATE_END_PG))
    r = _first(field_bad | julian_bad | range_bad)
    if r is not None:
        text = _date_text(int(year[r]), int(mm[r]), int(dd[r]))
        if field_bad[r]:
            raise PgError("22008", f"date field value out of range: {text}")
        raise PgError("22008", f"date out of range: {text}")
    return pa.array(np.where(valid, days, 0).astype(np.int32), pa.int32(), mask=~valid).view(pa.date32())


def make_time(h: pa.Array, mi: pa.Array, sec: pa.Array) -> pa.Array:
    """date.c's make_time (24:00:00 is a time; 23:59:60 is too)."""
    valid = _valid(h, mi, sec)
    hh, mm, ss = _ints(h), _ints(mi), _floats(sec)
    bad, t = _time_overflows(hh, mm, ss)
    r = _first(bad & valid)
    if r is not None:
        raise PgError("22008", f"time field value out of range: {_time_text(int(hh[r]), int(mm[r]), float(ss[r]))}")
    return pa.array(t, pa.int64(), mask=~valid).view(pa.time64("us"))


def _timestamp(
    y: pa.Array, m: pa.Array, d: pa.Array, h: pa.Array, mi: pa.Array, sec: pa.Array, out_type: pa.DataType
) -> pa.Array:
    """timestamp.c's make_timestamp_internal; its messages print the arguments as given."""
    valid = _valid(y, m, d, h, mi, sec)
    yy, mm, dd, hh, mn, ss = _ints(y), _ints(m), _ints(d), _ints(h), _ints(mi), _floats(sec)
    field_bad, year = _validate_date(yy, mm, dd)
    field_bad &= valid
    julian_bad = valid & ~field_bad & ~_valid_julian(year, mm)
    days = np.where(field_bad | julian_bad, 0, _days(year, mm, dd))
    time_bad, t = _time_overflows(hh, mn, ss)
    time_bad &= valid & ~field_bad & ~julian_bad
    # PostgreSQL's first timestamp (IS_VALID_TIMESTAMP) and the lake's last: int64
    # microseconds from 1970 end before PostgreSQL's 294277-01-01 (days kept where int64
    # holds the product)
    in_days = np.abs(days) < _LAKE_DAYS
    lake_us = np.where(in_days, days, 0) * _USECS_PER_DAY + t
    range_bad = ~in_days | (lake_us < cal.TS_MIN) | (lake_us > cal.TS_END)
    range_bad &= valid & ~field_bad & ~julian_bad & ~time_bad
    r = _first(field_bad | julian_bad | time_bad | range_bad)
    if r is not None:
        date = _date_text(int(yy[r]), int(mm[r]), int(dd[r]))
        if field_bad[r]:
            raise PgError("22008", f"date field value out of range: {date}")
        if julian_bad[r]:
            raise PgError("22008", f"date out of range: {date}")
        clock = _time_text(int(hh[r]), int(mn[r]), float(ss[r]))
        if time_bad[r]:
            raise PgError("22008", f"time field value out of range: {clock}")
        raise PgError("22008", f"timestamp out of range: {date} {clock}")
    return pa.array(np.where(valid, lake_us, 0), pa.int64(), mask=~valid).view(out_type)


def make_timestamp(y: pa.Array, m: pa.Array, d: pa.Array, h: pa.Array, mi: pa.Array, sec: pa.Array) -> pa.Array:
    return _timestamp(y, m, d, h, mi, sec, pa.timestamp("us"))


def make_timestamptz(y: pa.Array, m: pa.Array, d: pa.Array, h: pa.Array, mi: pa.Array, sec: pa.Array) -> pa.Array:
    """The local time in UTC (the session's TimeZone; other zones cast make_timestamp)."""
    return _timestamp(y, m, d, h, mi, sec, pa.timestamp("us", tz="UTC"))


def udfs() -> list[tuple[str, Callable[..., pa.Array], list[str], str]]:
    """(name, Arrow function, DuckDB argument types, DuckDB result type) of the UDFs; a NULL
    argument makes the result NULL (they are strict in PostgreSQL)."""
    # (BIGINT: DuckDB's own integers, generate_series' for one, widen to it; PostgreSQL's
    # types are checked by call_of)
    ymd = ["BIGINT", "BIGINT", "BIGINT"]
    hms = ["BIGINT", "BIGINT", "DOUBLE"]
    return [
        (PREFIX + "make_date", make_date, ymd, "DATE"),
        (PREFIX + "make_time", make_time, hms, "TIME"),
        (PREFIX + "make_timestamp", make_timestamp, ymd + hms, "TIMESTAMP"),
        (PREFIX + "make_timestamptz", make_timestamptz, ymd + hms, "TIMESTAMPTZ"),
    ]
