"""PostgreSQL value codecs over Arrow arrays: text and binary, output and input.

Every path that turns lake values into PostgreSQL bytes, or back, goes through here: DataRow
results in text or binary, COPY TO/FROM (see ``decoding.copyformat``), pgoutput tuple data and
Bind parameters.  One implementation keeps them byte-identical to each other and to
PostgreSQL (default settings, TimeZone UTC; text input of dates and timestamps takes the
session's DateStyle field order as a ``date_order`` argument).

Two layers:

- ``text_encoder`` / ``binary_encoder`` / ``text_decoder`` / ``binary_decoder`` take and give
  Python ``bytes`` lists, for per-message callers (Bind parameters, pgoutput).
- ``encode_text_arrow`` / ``encode_binary_fields`` / ``decode_text_arrow`` /
  ``decode_binary_arrow`` stay in Arrow end to end, for bulk callers (COPY, DataRow batches).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence

import pyarrow as pa

from decoding import pgtz
from decoding.pgtypes import ColumnType
from decoding.pgvalues._duck import pg_type_for_duckdb
from decoding.pgvalues._types import column_type
from decoding.pgvalues.binin import decode_binary_arrow
from decoding.pgvalues.binout import Fields, encode_binary_fields, numeric_send_text
from decoding.pgvalues.textin import InputError, decode_text_arrow
from decoding.pgvalues.textout import encode_text_arrow, format_interval, pg_float_text

__all__ = [
    "Fields",
    "InputError",
    "binary_decoder",
    "binary_encoder",
    "column_type",
    "decode_binary_arrow",
    "decode_text_arrow",
    "encode_binary_fields",
    "encode_text_arrow",
    "format_interval",
    "numeric_send_text",
    "pg_float_text",
    "pg_type_for_duckdb",
    "text_decoder",
    "text_encoder",
]

ArrayLike = pa.Array | pa.ChunkedArray
Encoder = Callable[[ArrayLike], list[bytes | None]]
Decoder = Callable[[Sequence[bytes | None] | pa.Array], pa.Array]


def _chunks(arr: ArrayLike) -> list[pa.Array]:
    if isinstance(arr, pa.ChunkedArray):
        return list(arr.chunks) or [pa.array([], arr.type)]
    return [arr]


def text_encoder(
    ctype: ColumnType, extra_float_digits: int = 1, bytea_output: str = "hex", zone: pgtz.Zone | None = None
) -> Encoder:
    """PostgreSQL's text output (typoutput) of every element; None for NULL. Floats as
    float4out and float8out print them under the session's ``extra_float_digits``, bytea
    as byteaout under its ``bytea_output``, timestamptz in its ``zone`` (None: UTC)."""

    def encode(arr: ArrayLike) -> list[bytes | None]:
        out: list[bytes | None] = []
        for chunk in _chunks(arr):
            out.extend(
                encode_text_arrow(
                    ctype, chunk, extra_float_digits=extra_float_digits, bytea_output=bytea_output, zone=zone
                ).to_pylist()
            )
        return out

    return encode


def binary_encoder(ctype: ColumnType) -> Encoder:
    """PostgreSQL's binary send format (typsend) of every element; None for NULL."""

    def encode(arr: ArrayLike) -> list[bytes | None]:
        out: list[bytes | None] = []
        for chunk in _chunks(arr):
            out.extend(encode_binary_fields(ctype, chunk).payloads())
        return out

    return encode


def record_binary_encoder(fields: Sequence[tuple[int, ColumnType]]) -> Encoder:
    """record_send of every row value (a STRUCT whose fields are ``fields``' types, given
    with the OIDs their attributes are declared with): the number of fields, then each
    field's type OID, length (-1: NULL) and binary form; None for a NULL row."""
    encoders = [binary_encoder(ct) for _, ct in fields]
    head = struct.pack(">i", len(fields))
    oids = [struct.pack(">I", oid) for oid, _ in fields]

    def encode(arr: ArrayLike) -> list[bytes | None]:
        out: list[bytes | None] = []
        for chunk in _chunks(arr):
            assert isinstance(chunk, pa.StructArray)
            children = [enc(chunk.field(i)) for i, enc in enumerate(encoders)]
            for r, ok in enumerate(chunk.is_valid().to_pylist()):
                if not ok:
                    out.append(None)
                    continue
                parts = [head]
                for oid, col in zip(oids, children, strict=True):
                    v = col[r]
                    parts.append(oid + (b"\xff\xff\xff\xff" if v is None else struct.pack(">i", len(v)) + v))
                out.append(b"".join(parts))
        return out

    return encode


def text_decoder(ctype: ColumnType, date_order: str = "MDY") -> Decoder:
    """typinput for every value into ``ctype.arrow``; raises InputError (a PgError).
    ``date_order``: the session's DateStyle field order, for dates and timestamps."""

    def decode(values: Sequence[bytes | None] | pa.Array) -> pa.Array:
        return decode_text_arrow(ctype, values, date_order)

    return decode


def binary_decoder(ctype: ColumnType) -> Decoder:
    """typreceive for every value into ``ctype.arrow``; raises InputError (a PgError)."""

    def decode(values: Sequence[bytes | None] | pa.Array) -> pa.Array:
        return decode_binary_arrow(ctype, values)

    return decode
