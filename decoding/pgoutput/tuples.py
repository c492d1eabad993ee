"""Row messages (Insert, Update, Delete) for a whole Arrow batch at once.

A bulk statement reaches the plugin as an Arrow table of a million rows; building a
TupleData object per row, or even a Python list per column, costs more than the encoding.
So the row images are assembled in Arrow: each column becomes two pieces per row (its
kind byte and length prefix, then its bytes — or just ``n`` for NULL), and one
``binary_join_element_wise`` concatenates the message head and all the pieces into one
binary array, row by row in C++. The layout is TupleData's from ``proto`` (proto.c's
``logicalrep_write_tuple``); the tests check every message against ``proto``'s decoder.

Values are encoded by ``decoding.pgvalues`` (text: the type's output function; binary: its
send function), which already works column-at-a-time on Arrow.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoding.pgtypes import ColumnType
from decoding.pgvalues import encode_binary_fields, encode_text_arrow

__all__ = ["NULL_PIECE", "Piece", "column_pieces", "join_rows"]

B = pa.binary()
LB = pa.large_binary()
#: A piece is an Arrow binary array (one value per row; NULL means "nothing") or a
#: scalar (the same bytes in every row).
Piece = pa.Array | pa.Scalar
NULL_PIECE: pa.Scalar = pa.scalar(b"n", B)
_EMPTY = pa.scalar(b"", B)
_JOIN = pc.JoinOptions(null_handling="replace", null_replacement="")
_U16 = struct.Struct(">H")
#: Offsets of a binary array are int32: past this many bytes per batch use large_binary.
_LARGE = 1 << 30


def _plain(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def _valid(arr: pa.Array) -> pa.Array | None:
    """Validity as a boolean array, or None when no element is NULL."""
    if pa.types.is_null(arr.type):
        return pa.array(np.zeros(len(arr), dtype=bool))
    if arr.null_count == 0:
        return None
    return pc.is_valid(arr)


def _length_prefix(values: pa.Array, kind: int) -> pa.Array:
    """``kind`` + int32 big-endian length of each value (5 bytes per row)."""
    n = len(values)
    lens = pc.binary_length(values).fill_null(0).to_numpy(zero_copy_only=False)
    mat = np.empty((n, 5), dtype=np.uint8)
    mat[:, 0] = kind
    mat[:, 1:] = lens.astype(">i4").view(np.uint8).reshape(n, 4)
    fixed = pa.FixedSizeBinaryArray.from_buffers(pa.binary(5), n, [None, pa.py_buffer(mat)])
    return fixed.cast(B)


def column_pieces(ctype: ColumnType, arr: pa.Array | pa.ChunkedArray, binary: bool) -> list[Piece]:
    """One column of TupleData for every row: ``t``/``b`` + length + bytes, or ``n``."""
    arr = _plain(arr)
    n = len(arr)
    if pa.types.is_null(arr.type) or arr.null_count == n:
        return [NULL_PIECE]
    if binary:
        # Fields.prefixed is int32 length + payload, with length -1 and no payload for NULL.
        prefixed = _plain(encode_binary_fields(ctype, arr).prefixed)
        valid = _valid(arr)
        if valid is None:
            return [pa.scalar(b"b", B), prefixed]
        kind = pc.if_else(valid, pa.scalar(b"b", B), NULL_PIECE)
        return [kind, pc.if_else(valid, prefixed, pa.scalar(None, prefixed.type))]
    values = _plain(encode_text_arrow(ctype, arr))
    if values.type != B and values.type != LB:
        values = values.cast(B)
    prefix = _length_prefix(values, ord("t"))
    if values.null_count:
        prefix = pc.if_else(pc.is_valid(values), prefix, NULL_PIECE)
    return [prefix, values]


def _nbytes(pieces: Sequence[Piece]) -> int:
    return sum(p.nbytes for p in pieces if isinstance(p, pa.Array))


def join_rows(pieces: Sequence[Piece], nrows: int) -> pa.Array:
    """Concatenate the pieces row by row (NULL elements contribute nothing)."""
    if not any(isinstance(p, pa.Array) for p in pieces):
        one = b"".join(p.as_py() or b"" for p in pieces)
        return pa.array([one] * nrows, B)
    if _nbytes(pieces) >= _LARGE:
        pieces = [
            p.cast(LB) if isinstance(p, pa.Array) else pa.scalar(p.as_py(), LB) for p in pieces
        ]
        sep = pa.scalar(b"", LB)
    else:
        pieces = [p.cast(B) if isinstance(p, pa.Array) and p.type != B else p for p in pieces]
        sep = _EMPTY
    return pc.binary_join_element_wise(*pieces, sep, options=_JOIN)


def natts_piece(n: int) -> pa.Scalar:
    return pa.scalar(_U16.pack(n), B)
