"""record_out's rules for the fields of a row value (DuckDB's STRUCT): ``(1,"a b",)``.

A whole-row reference (``SELECT t FROM t``) or ``ROW(…)`` comes out of DuckDB as a STRUCT,
which has no PostgreSQL type of its own here; printed by Python it would read
``{'a': 1}``. Each field is printed by its own type's output function (which type:
:func:`field_type`), then quoted as record_out quotes (:func:`quote_field`): double quotes
around an empty string or one holding ``"``, ``\\``, parentheses, a comma or white space
(``"`` and ``\\`` doubled inside), nothing for NULL. The output itself,
:func:`decoding.pgvalues.textout.record_text`, lives with the other output functions (it
prints each field through them, and they print a STRUCT through it) and takes these
rules from here."""

from __future__ import annotations

import pyarrow as pa

from decoding.pgtypes import ColumnType
from decoding.pgvalues._types import column_type

_QUOTE = frozenset('"\\(),') | frozenset(" \t\n\r\v\f")


def field_type(t: pa.DataType) -> ColumnType:
    """The PostgreSQL type a field of Arrow type ``t`` prints as."""
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        inner = field_type(t.value_type)
        return ColumnType(inner.base, inner.typmod, True)
    for test, name in (
        (pa.types.is_boolean, "bool"), (pa.types.is_int16, "int2"), (pa.types.is_int8, "int2"),
        (pa.types.is_int32, "int4"), (pa.types.is_int64, "int8"), (pa.types.is_float32, "float4"),
        (pa.types.is_float64, "float8"), (pa.types.is_decimal, "numeric"), (pa.types.is_date, "date"),
        (pa.types.is_binary, "bytea"), (pa.types.is_time, "time"),
    ):  # fmt: skip
        if test(t):
            return column_type(name)
    if pa.types.is_timestamp(t):
        return column_type("timestamptz" if t.tz else "timestamp")
    return column_type("text")


def quote_field(text: str) -> str:
    """A field's output text as record_out puts it between the parentheses."""
    if text and not any(c in _QUOTE for c in text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '""') + '"'
