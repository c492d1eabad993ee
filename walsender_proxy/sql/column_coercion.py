"""Values into a column's storage type as PostgreSQL assigns them.

Text that reaches a non-text column (an untyped literal, a parameter bound as text, a string
DuckDB computed) goes through the column type's input function; a numeric going into a float
column, or a float into a numeric one, goes through its text as PostgreSQL's casts do. Used
wherever rows enter the lake from SQL: INSERT, UPDATE, ON CONFLICT, column defaults, and the
INSERT fast path (:mod:`walsender_proxy.sql.insert_fast`).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from decoding.catalog import Table
from walsender_proxy.sql import numeric_math


def coerce_text(
    col: Any, arr: pa.Array | pa.ChunkedArray, date_order: str = "MDY"
) -> pa.Array | pa.ChunkedArray:
    """A text value bound for a non-text column goes through the column type's input
    function, as PostgreSQL resolves an untyped literal ('{a,b}' into text[], '\\x00' into
    bytea, '1 day' into interval) — DuckDB would only see a string. Dates and timestamps
    are read in the session's DateStyle order, ``date_order``."""
    from decoding.pgvalues import decode_text_arrow

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


def coerce_text_columns(t: Table, data: pa.Table, date_order: str = "MDY") -> pa.Table:
    for i, name in enumerate(data.column_names):
        col = t.column(name)
        if col is not None:
            data = data.set_column(i, name, coerce_text(col, data.column(i), date_order))
    return data
