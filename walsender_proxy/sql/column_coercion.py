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

from decoding.catalog import Table
from decoding.pgtypes import ColumnType, parse_type
from walsender_proxy.sql import numeric_math


@dataclass(frozen=True, slots=True)
class TextOut:
    """The session settings an output function reads: a value of another type assigned
    to a text, varchar or character column is converted by its output function (an I/O
    conversion cast, as PostgreSQL's assignment of any type to a string type)."""

    extra_float_digits: int = 1
    bytea_output: str = "hex"
    zone: Any = None


_STRING_TYPES = ("text", "varchar", "bpchar")

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
    from decoding.pgvalues import encode_text_arrow

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
    from decoding.pgvalues import decode_text_arrow

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

    if (
        pa.types.is_decimal(arr.type)
        and col.type.base.name in ("float4", "float8")
        and not col.type.is_array
    ):
        # numeric → float through its text (float8in), as PostgreSQL's cast does: Arrow's
        # decimal → double is m·10^-s in double arithmetic (10.1 would be 10.100000000000001)
        return decode_text_arrow(col.type, arr.cast(pa.string()))
    if pa.types.is_floating(arr.type) and col.type.base.name == "numeric" and not col.type.is_array:
        # float → numeric through float4_numeric's / float8_numeric's text (6 or 15
        # significant digits), not the binary value's longer decimal expansion
        return decode_text_arrow(col.type, numeric_math.float_texts(arr))
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return arr
    if pa.types.is_string(col.type.arrow) and text_as_is(col.type):
        return arr
    return decode_text_arrow(col.type, arr, date_order)


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
