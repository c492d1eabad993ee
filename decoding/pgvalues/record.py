"""record_out: a row value (DuckDB's STRUCT) as PostgreSQL prints a record: ``(1,"a b",)``.

A whole-row reference (``SELECT t FROM t``) or ``ROW(…)`` comes out of DuckDB as a STRUCT,
which has no PostgreSQL type of its own here; printed by Python it would read
``{'a': 1}``. Each field is printed by its own type's output function, then quoted as
record_out quotes: double quotes around an empty string or one holding ``"``, ``\\``,
parentheses, a comma or white space (``"`` and ``\\`` doubled inside), nothing for NULL."""

from __future__ import annotations

import pyarrow as pa

from decoding import pgtz
from decoding.pgtypes import ColumnType
from decoding.pgvalues._types import column_type

_QUOTE = frozenset('"\\(),') | frozenset(" \t\n\r\v\f")


def _field_type(t: pa.DataType) -> ColumnType:
    """The PostgreSQL type a field of Arrow type ``t`` prints as."""
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        inner = _field_type(t.value_type)
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


def _quoted(text: str) -> str:
    if text and not any(c in _QUOTE for c in text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '""') + '"'


def record_text(
    arr: pa.StructArray, extra_float_digits: int = 1, bytea_output: str = "hex", zone: pgtz.Zone | None = None
) -> pa.Array:
    """record_out of every row of ``arr`` (binary, NULL where the row is NULL); float fields
    as ``extra_float_digits`` has them printed."""
    from decoding.pgvalues.textout import encode_text_arrow

    fields = arr.flatten()  # (the row's NULL is each field's)
    texts = [
        encode_text_arrow(
            _field_type(f.type), f, extra_float_digits=extra_float_digits, bytea_output=bytea_output, zone=zone
        ).to_pylist()
        for f in fields
    ]
    valid = arr.is_valid().to_pylist()
    out: list[bytes | None] = []
    for i, ok in enumerate(valid):
        if not ok:
            out.append(None)
            continue
        parts = ["" if col[i] is None else _quoted(col[i].decode()) for col in texts]
        out.append(("(" + ",".join(parts) + ")").encode())
    return pa.array(out, pa.binary())
