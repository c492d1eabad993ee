"""Values into a column's storage type as PostgreSQL assigns them.

Text that reaches a non-text column (an untyped literal, a parameter bound as text, a string
DuckDB computed) goes through the column type's input function; a numeric going into a float
column, or a float into a numeric one, goes through its text as PostgreSQL's casts do. Used
wherever rows enter the lake from SQL: INSERT, UPDATE, ON CONFLICT, column defaults, and the
INSERT fast path (:mod:`walsender_proxy.sql.insert_fast`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from decoding import pgtz
from decoding.catalog import Table
from decoding.errors import PgError
from decoding.pgtypes import ColumnType, parse_type
from decoding.pgvalues import decode_text_arrow, encode_text_arrow
from walsender_proxy.backend import coercion_data
from walsender_proxy.sql import numeric_math


@dataclass(frozen=True, slots=True)
class TextOut:
    """The session settings an output function reads: a value of another type assigned
    to a text, varchar or character column is converted by its output function (an I/O
    conversion cast, as PostgreSQL's assignment of any type to a string type)."""

    extra_float_digits: int = 1
    bytea_output: str = "hex"
    zone: Any = None


_STRING_TYPES = ("text", "varchar", "bpchar", "name")

#: Arrow types of DuckDB's results and the PostgreSQL type whose output function prints
#: their values (integers print alike whatever their width).
_SOURCE_TYPES = {
    pa.int8(): "int2", pa.int16(): "int2", pa.int32(): "int4", pa.int64(): "int8",
    pa.uint8(): "int2", pa.uint16(): "int4", pa.uint32(): "int8", pa.uint64(): "numeric",
    pa.float32(): "float4", pa.float64(): "float8", pa.date32(): "date", pa.binary(): "bytea",
    pa.large_binary(): "bytea", pa.month_day_nano_interval(): "interval",
}  # fmt: skip


def _source_type(t: pa.DataType) -> ColumnType | None:
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        inner = _source_type(t.value_type)
        return replace(inner, is_array=True) if inner is not None and not inner.is_array else None
    if pa.types.is_decimal(t):
        return parse_type("numeric")
    if pa.types.is_timestamp(t):
        return parse_type("timestamptz" if t.tz else "timestamp")
    if pa.types.is_time(t):
        return parse_type("time")
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_struct(t):
        return parse_type("text")  # (a row value: record_out)
    name = _SOURCE_TYPES.get(t)
    return parse_type(name) if name is not None else None


def as_text(arr: pa.Array | pa.ChunkedArray, out: TextOut) -> pa.Array | pa.ChunkedArray | None:
    """A non-text value's text as PostgreSQL's cast to text gives it (the type's output
    function; ``true``/``false`` for boolean, whose cast has a function of its own);
    None for a type whose text the proxy cannot tell."""

    if pa.types.is_boolean(arr.type):
        return pc.if_else(arr, "true", "false")
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), pa.string())
    src = _source_type(arr.type)
    if src is None:
        return None
    raw = encode_text_arrow(
        src, arr, extra_float_digits=out.extra_float_digits, bytea_output=out.bytea_output, zone=out.zone
    )
    return raw.cast(pa.string())


def coerce_text(
    col: Any, arr: pa.Array | pa.ChunkedArray, date_order: str = "MDY", out: TextOut | None = None
) -> pa.Array | pa.ChunkedArray:
    """A text value bound for a non-text column goes through the column type's input
    function, as PostgreSQL resolves an untyped literal ('{a,b}' into text[], '\\x00' into
    bytea, '1 day' into interval) — DuckDB would only see a string. Dates and timestamps
    are read in the session's DateStyle order, ``date_order``. A value of another type
    bound for a text, varchar or character column is first printed by its output function
    (``out``: the session's settings for it), then held to the column's length."""

    if (
        col.type.base.name in _STRING_TYPES
        and not col.type.is_array
        and not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type))
    ):
        texts = as_text(arr, out or TextOut())
        if texts is None:
            from decoding.errors import PgError

            raise PgError(
                "0A000",
                f"assigning this value to a column of type {col.type.sql_name()} "
                "is not supported by walsender-proxy",
                hint="Cast the value to text.",
            )
        arr = texts
    else:
        _check_assignable(col, arr)
        if col.type.base.name in _CLOCK_TYPES and not col.type.is_array:
            arr = _clock_value(col.type.base.name, arr, (out or TextOut()).zone)

    if (
        pa.types.is_decimal(arr.type)
        and col.type.base.name in ("float4", "float8")
        and not col.type.is_array
    ):
        # numeric → float through its text (float8in), as PostgreSQL's cast does: Arrow's
        # decimal → double is m·10^-s in double arithmetic (10.1 would be 10.100000000000001)
        return decode_text_arrow(col.type, arr.cast(pa.string()))
    if pa.types.is_integer(arr.type) and col.type.base.name in ("float4", "float8") and not col.type.is_array:
        # int → float rounds to the nearest float (Arrow's checked cast refuses the loss)
        return arr.cast(col.type.arrow, safe=False)
    if pa.types.is_floating(arr.type) and col.type.base.name == "numeric" and not col.type.is_array:
        # float → numeric through float4_numeric's / float8_numeric's text (6 or 15
        # significant digits), not the binary value's longer decimal expansion
        return decode_text_arrow(col.type, numeric_math.float_texts(arr))
    if col.type.base.name == "name" and col.type.is_array and _string_list(arr.type):
        return _names(arr, col.type)
    if col.type.base.name in _INT_NAMES and _number_list(arr.type, col.type):
        return _to_integers(arr, col.type)
    if col.type.numeric_precision_scale is not None and _number_list(arr.type, col.type):
        return _to_numerics(arr, col.type)
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return arr
    if pa.types.is_string(col.type.arrow) and text_as_is(col.type):
        return arr
    return decode_text_arrow(col.type, arr, date_order)


_INT_NAMES = {"int2": "smallint", "int4": "integer", "int8": "bigint"}


def _string_list(t: pa.DataType) -> bool:
    return (pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_string(t.value_type)


def _names(arr: pa.Array | pa.ChunkedArray, ctype: Any) -> pa.Array | pa.ChunkedArray:
    """text[] into a name[] column: each element cut to a name's 63 bytes (text_name)."""

    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array([_names(c, ctype) for c in arr.chunks], type=ctype.arrow)
    inner = decode_text_arrow(replace(ctype, is_array=False), arr.values)
    return type(arr).from_arrays(arr.offsets, inner, mask=arr.is_null()).cast(ctype.arrow)


def _number_list(t: pa.DataType, ctype: Any) -> bool:
    """Numbers that need converting to ``ctype``'s: fractions, or integers of a wider
    type; for an array column, only a list of them (a scalar into it is 42804 elsewhere)."""
    if ctype.is_array != (pa.types.is_list(t) or pa.types.is_large_list(t)):
        return False
    while pa.types.is_list(t) or pa.types.is_large_list(t):
        t = t.value_type
    target = ctype.arrow.value_type if ctype.is_array else ctype.arrow
    return pa.types.is_decimal(t) or pa.types.is_floating(t) or (pa.types.is_integer(t) and t != target)


def _to_numerics(arr: pa.Array | pa.ChunkedArray, ctype: Any) -> pa.Array | pa.ChunkedArray:
    """numbers assigned to a ``numeric(p,s)`` column or its array's elements, rounded to its scale
    half away from zero as numeric's typmod coercion (apply_typmod) rounds; 22003 when one
    needs more digits than the precision leaves."""
    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array([_to_numerics(c, ctype) for c in arr.chunks], type=ctype.arrow)
    p, sc = ctype.numeric_precision_scale
    listed = pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)
    values = arr.values if listed else arr
    if pa.types.is_floating(values.type):  # (through its text, as float8_numeric)
        values = pc.cast(numeric_math.float_texts(values), pa.decimal128(38, 15))
    elif pa.types.is_integer(values.type):
        values = values.cast(pa.decimal128(38, 0))
    elif pa.types.is_decimal128(values.type) and values.type.precision < 38:  # (room for a carry: 999.999 → 1000.00)
        values = values.cast(pa.decimal128(38, values.type.scale))
    try:
        rounded = pc.round(values, sc, round_mode="half_towards_infinity")
        inner = rounded.cast(ctype.arrow.value_type if listed else ctype.arrow)
    except (pa.ArrowInvalid, OverflowError):
        from decoding.errors import PgError

        raise PgError(
            "22003", "numeric field overflow",
            detail=f"A field with precision {p}, scale {sc} must round to an absolute value less than {'1' if p == sc else f'10^{p - sc}'}.",
        ) from None  # fmt: skip
    if not listed:
        return inner
    return type(arr).from_arrays(arr.offsets, inner, mask=arr.is_null()).cast(ctype.arrow)


def _to_integers(arr: pa.Array | pa.ChunkedArray, ctype: Any) -> pa.Array | pa.ChunkedArray:
    """numeric or float values (or arrays of them) assigned to an integer column, rounded
    as PostgreSQL's casts round: numeric half away from zero (numeric_int4), float to the
    nearest even (rint in float8_int4); 22003 past the type's range, NaN included."""
    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array([_to_integers(c, ctype) for c in arr.chunks], type=ctype.arrow)
    if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
        inner = _to_integers(arr.values, replace(ctype, is_array=False))
        return type(arr).from_arrays(arr.offsets, inner, mask=arr.is_null()).cast(ctype.arrow)
    if pa.types.is_integer(arr.type):
        rounded = arr
    else:
        mode = "half_towards_infinity" if pa.types.is_decimal(arr.type) else "half_to_even"
        rounded = pc.round(arr, 0, round_mode=mode)
    try:
        return rounded.cast(ctype.arrow)
    except (pa.ArrowInvalid, OverflowError):
        from decoding.errors import PgError

        raise PgError("22003", f"{_INT_NAMES[ctype.base.name]} out of range") from None


def text_as_is(ctype: Any) -> bool:
    """A string goes into a column of this (string-stored) type without its input function:
    only where that function keeps every string as it is. Not numeric, uuid, json or jsonb,
    though stored as text: their input functions check the text and write it PostgreSQL's
    way (' 007.50 ' is 7.50, an uppercase uuid is lowered, 'not json' is 22P02, jsonb's
    keys are sorted and deduplicated)."""
    return (
        ctype.base.name in ("text", "varchar", "bpchar") and not ctype.is_array and ctype.typmod < 0
    )


def coerce_text_columns(t: Table, data: pa.Table, date_order: str = "MDY", out: TextOut | None = None) -> pa.Table:
    for i, name in enumerate(data.column_names):
        col = t.column(name)
        if col is not None:
            data = data.set_column(i, name, coerce_text(col, data.column(i), date_order, out))
    return data


def _check_assignable(col: Any, arr: pa.Array | pa.ChunkedArray) -> None:
    """42804 where PostgreSQL has no assignment cast from the value's type to the column's
    (pg_cast: an implicit or assignment cast, or the same type; any type into a string
    type is an I/O cast): ``1`` into a boolean, uuid or jsonb column, a date into an
    integer one, a scalar into an array column. Text values are left to the column's input
    function: a string here may be an untyped literal, which PostgreSQL reads that way."""
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type) or pa.types.is_null(arr.type):
        return
    src = parse_type("bool") if pa.types.is_boolean(arr.type) else _source_type(arr.type)
    if src is None:
        return
    tgt = col.type
    if tgt.is_array:
        if src.is_array:
            return  # (element by element: the array's own conversion refuses what it must)
    elif src.is_array:
        pass
    elif src.base.name == tgt.base.name or coercion_data.CASTS.get((src.base.name, tgt.base.name), ("e",))[0] in ("a", "i"):
        return

    raise PgError(
        "42804",
        f'column "{col.name}" is of type {replace(tgt, typmod=-1).sql_name()} '
        f"but expression is of type {src.sql_name()}",
        hint="You will need to rewrite or cast the expression.",
    )


_CLOCK_TYPES = ("timestamp", "timestamptz", "date", "time", "interval")
_USECS_PER_DAY = 86_400_000_000


def _clock_value(target: str, arr: pa.Array | pa.ChunkedArray, zone: Any) -> pa.Array | pa.ChunkedArray:
    """A date/time value of another date/time type for a ``target`` column, converted as
    PostgreSQL's casts do in the session's TimeZone: a timestamptz is the local time there
    when it goes into a timestamp, date or time column; a timestamp or a date going into a
    timestamptz column is read as a local time (Arrow would take UTC for both); a time into
    an interval column is its time of day."""

    zone = zone or pgtz.UTC_ZONE
    t = arr.type
    aware = pa.types.is_timestamp(t) and t.tz is not None
    naive = pa.types.is_timestamp(t) and t.tz is None
    if target == "time" and pa.types.is_interval(t):  # (interval_time: the time part, within a day)
        parts = arr.cast(pa.month_day_nano_interval()).to_pylist()
        return pa.array(
            [None if v is None else (v.nanoseconds // 1000) % _USECS_PER_DAY for v in parts], pa.int64()
        ).cast(pa.time64("us"))
    if target == "interval" and pa.types.is_time(t):
        us = arr.cast(pa.time64("us")).cast(pa.int64()).to_pylist()
        return pa.array([None if v is None else (0, 0, v * 1000) for v in us], pa.month_day_nano_interval())
    if aware and target in ("timestamp", "date", "time"):
        raw = arr.cast(pa.timestamp("us", tz="UTC")).cast(pa.int64())
        if zone.fixed is not None:  # (one offset: no per-value lookup)
            local = pc.add(raw, zone.fixed * 1_000_000).to_pylist()
        else:
            local = [None if v is None else v + zone.utc_offset(v) * 1_000_000 for v in raw.to_pylist()]
        if target == "timestamp":
            return pa.array(local, pa.int64()).cast(pa.timestamp("us"))
        if target == "date":
            return pa.array([None if v is None else v // _USECS_PER_DAY for v in local], pa.int32()).cast(pa.date32())
        return pa.array([None if v is None else v % _USECS_PER_DAY for v in local], pa.int64()).cast(pa.time64("us"))
    if target == "timestamptz" and (naive or pa.types.is_date(t)):
        if naive:
            local = arr.cast(pa.timestamp("us")).cast(pa.int64()).to_pylist()
        else:
            local = [None if v is None else v * _USECS_PER_DAY for v in arr.cast(pa.int32()).to_pylist()]
        if zone.fixed is not None:
            utc = [None if v is None else v - zone.fixed * 1_000_000 for v in local]
        else:
            utc = [None if v is None else zone.local_to_utc(v) for v in local]
        return pa.array(utc, pa.int64()).cast(pa.timestamp("us", tz="UTC"))
    return arr
