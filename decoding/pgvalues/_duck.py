"""The PostgreSQL type a client sees for a DuckDB result column."""

from __future__ import annotations

import re

from decoding.pgtypes import ColumnType, parse_type
from decoding.pgvalues._types import column_type

_SIMPLE: dict[str, str] = {
    "BOOLEAN": "bool",
    "BOOL": "bool",
    "TINYINT": "int2",
    "SMALLINT": "int2",
    "UTINYINT": "int2",
    "INTEGER": "int4",
    "INT": "int4",
    "USMALLINT": "int4",
    "BIGINT": "int8",
    "UINTEGER": "int8",
    "UBIGINT": "numeric",
    "HUGEINT": "numeric",
    "UHUGEINT": "numeric",
    "VARINT": "numeric",
    "BIGNUM": "numeric",
    "FLOAT": "float4",
    "REAL": "float4",
    "DOUBLE": "float8",
    "VARCHAR": "text",
    "STRING": "text",
    "TEXT": "text",
    "BLOB": "bytea",
    "BYTEA": "bytea",
    "DATE": "date",
    "TIME": "time",
    # DuckDB hands TIME WITH TIME ZONE to Arrow as a plain time of day
    "TIME WITH TIME ZONE": "time",
    "TIMETZ": "time",
    "TIMESTAMP": "timestamp",
    "DATETIME": "timestamp",
    "TIMESTAMP_S": "timestamp",
    "TIMESTAMP_MS": "timestamp",
    "TIMESTAMP_NS": "timestamp",
    "TIMESTAMP WITH TIME ZONE": "timestamptz",
    "TIMESTAMPTZ": "timestamptz",
    "INTERVAL": "interval",
    "UUID": "uuid",
    "JSON": "json",
    "NULL": "text",
}

_DECIMAL = re.compile(r"^(?:DECIMAL|NUMERIC)\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_ARRAY = re.compile(r"^(.*?)((?:\[\d*\])+)$")


def pg_type_for_duckdb(duck_type: object) -> ColumnType:
    """Map a DuckDB column type (name or DuckDBPyType) to the PostgreSQL type clients see.

    Integers widen to the next PostgreSQL integer that holds every value (TINYINT -> int2,
    UINTEGER -> int8); those wider than int8 become numeric; lists become arrays of the mapped
    element type (nested lists too: PostgreSQL arrays are multi-dimensional); anything without
    a counterpart (STRUCT, MAP, UNION, ENUM, BIT, ...) is text.
    """
    name = str(duck_type).strip()
    if len(name) >= 2 and name[0] == '"' and name[-1] == '"':
        name = name[1:-1]
    up = name.upper()
    m = _ARRAY.match(up)
    if m:
        inner = pg_type_for_duckdb(m.group(1))
        return ColumnType(inner.base, inner.typmod, True)
    if up in _SIMPLE:
        return column_type(_SIMPLE[up])
    m = _DECIMAL.match(up)
    if m:
        p, s = int(m.group(1)), int(m.group(2))
        return parse_type(f"numeric({p},{s})")
    if up.startswith(("DECIMAL", "NUMERIC")):
        return column_type("numeric")
    if up.startswith("VARCHAR"):
        return column_type("text")
    return column_type("text")
