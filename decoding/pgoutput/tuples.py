"""Row messages (Insert, Update, Delete) for a whole Arrow batch at once.

A bulk statement reaches the plugin as an Arrow table of a million rows; building a
TupleData object per row, or even a Python list per column, costs more than the encoding.
So the row images are assembled in Arrow: each column becomes two pieces per row (its
kind byte and length prefix, then its bytes — or just ``n`` for NULL), and one
``binary_join_element_wise`` concatenates the message head and all the pieces into one
binary array, row by row in C++. Constant bytes (the message head, ``natts``, ``n`` of
key-only tuples) ride in the next column's prefix matrix, because that join is about twice
as fast over arrays alone as over arrays with scalars among them; a caller that frames the
messages (the walsender's XLogData headers) passes a ``prefix`` and gets them framed in the
same join. The layout is TupleData's from ``proto`` (proto.c's
``logicalrep_write_tuple``); the tests check every message against ``proto``'s decoder.

Values are encoded by ``decoding.pgvalues`` (text: the type's output function; binary: its
send function), which already works column-at-a-time on Arrow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoding.pgtypes import ColumnType
from decoding.pgvalues import encode_binary_fields, encode_text_arrow

__all__ = ["Piece", "Prefix", "column_pieces", "from_messages", "join_rows"]

B = pa.binary()
LB = pa.large_binary()
#: A piece is an Arrow binary array (one value per row; NULL means "nothing") or a
#: scalar (the same bytes in every row).
Piece = pa.Array | pa.Scalar
#: Given the byte length of every row, the bytes to put in front of each: (n, w) uint8.
Prefix = Callable[[np.ndarray], np.ndarray]
_EMPTY = pa.scalar(b"", B)
_JOIN = pc.JoinOptions(null_handling="replace", null_replacement="")
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


def _fixed(mat: np.ndarray) -> pa.Array:
    """The rows of an (n, w) byte matrix as a binary array."""
    n, w = mat.shape
    fixed = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(w), n, [None, pa.py_buffer(np.ascontiguousarray(mat))]
    )
    return fixed.cast(B)


def _constant(value: bytes, n: int) -> pa.Array:
    """``value`` in every one of ``n`` rows, as an array (not a scalar: see join_rows)."""
    if not value:
        return pa.nulls(n, B)
    mat = np.empty((n, len(value)), dtype=np.uint8)
    mat[:] = np.frombuffer(value, dtype=np.uint8)
    return _fixed(mat)


def _length_prefix(values: pa.Array, kind: int, lead: bytes = b"") -> pa.Array:
    """``lead`` + ``kind`` + int32 big-endian length of each value."""
    n = len(values)
    offs = values.buffers()[1]
    if offs is not None and values.null_count == 0:
        otype = np.int64 if pa.types.is_large_binary(values.type) else np.int32
        o = np.frombuffer(offs, dtype=otype, count=n + 1, offset=values.offset * otype().itemsize)
        lens = np.diff(o)
    else:
        lens = pc.binary_length(values).fill_null(0).to_numpy(zero_copy_only=False)
    k = len(lead)
    mat = np.empty((n, k + 5), dtype=np.uint8)
    if k:
        mat[:, :k] = np.frombuffer(lead, dtype=np.uint8)
    mat[:, k] = kind
    mat[:, k + 1 :] = lens.astype(">i4").view(np.uint8).reshape(n, 4)
    return _fixed(mat)


def column_pieces(
    ctype: ColumnType, arr: pa.Array | pa.ChunkedArray, binary: bool, lead: bytes = b""
) -> list[Piece]:
    """One column of TupleData for every row: ``t``/``b`` + length + bytes, or ``n``;
    ``lead`` (constant bytes) goes before it in every row."""
    arr = _plain(arr)
    n = len(arr)
    if pa.types.is_null(arr.type) or arr.null_count == n:
        return [pa.scalar(lead + b"n", B)]
    null = pa.scalar(lead + b"n", B)
    if binary:
        # Fields.prefixed is int32 length + payload, with length -1 and no payload for NULL.
        prefixed = _plain(encode_binary_fields(ctype, arr).prefixed)
        valid = _valid(arr)
        if valid is None:
            return [_constant(lead + b"b", n), prefixed]
        kind = pc.if_else(valid, pa.scalar(lead + b"b", B), null)
        return [kind, pc.if_else(valid, prefixed, pa.scalar(None, prefixed.type))]
    values = _plain(encode_text_arrow(ctype, arr))
    if values.type != B and values.type != LB:
        values = values.cast(B)
    prefix = _length_prefix(values, ord("t"), lead)
    if values.null_count:
        prefix = pc.if_else(pc.is_valid(values), prefix, null)
    return [prefix, values]


def _nbytes(pieces: Sequence[Piece], nrows: int) -> int:
    return sum(p.nbytes if isinstance(p, pa.Array) else nrows * len(p.as_py() or b"") for p in pieces)


def _lengths(p: Piece, nrows: int) -> np.ndarray | int:
    if isinstance(p, pa.Scalar):
        return len(p.as_py() or b"")
    offs = p.buffers()[1]
    if p.null_count == 0 and offs is not None:
        otype = np.int64 if pa.types.is_large_binary(p.type) else np.int32
        return np.diff(np.frombuffer(offs, otype, count=nrows + 1, offset=p.offset * otype().itemsize))
    return pc.binary_length(p).fill_null(0).to_numpy(zero_copy_only=False)


def join_rows(
    pieces: Sequence[Piece], nrows: int, prefix: Prefix | None = None
) -> pa.Array:
    """Concatenate the pieces row by row (NULL elements contribute nothing). ``prefix``,
    given the length of every row, returns an (n, w) byte matrix to put in front of the
    rows (a framing header) within the same join.

    Adjacent scalars are merged and the rest made arrays: Arrow's element-wise join is
    faster over arrays alone than with scalars among them."""
    if prefix is not None:
        total = np.zeros(nrows, dtype=np.int64)
        for p in pieces:
            total += _lengths(p, nrows)
        pieces = [_fixed(prefix(total)), *pieces]
    merged: list[Piece] = []
    for p in pieces:
        if isinstance(p, pa.Scalar) and merged and isinstance(merged[-1], pa.Scalar):
            merged[-1] = pa.scalar((merged[-1].as_py() or b"") + (p.as_py() or b""), B)
        else:
            merged.append(p)
    if not any(isinstance(p, pa.Array) for p in merged):
        one = b"".join(p.as_py() or b"" for p in merged)
        return _constant(one, nrows) if one else pa.array([b""] * nrows, B)
    arrays = [p if isinstance(p, pa.Array) else _constant(p.as_py() or b"", nrows) for p in merged]
    if len(arrays) == 1:
        return arrays[0].cast(B) if arrays[0].type not in (B, LB) else arrays[0]
    if _nbytes(arrays, nrows) >= _LARGE:
        arrays = [p.cast(LB) for p in arrays]
        sep = pa.scalar(b"", LB)
    else:
        arrays = [p.cast(B) if p.type != B else p for p in arrays]
        sep = _EMPTY
    return pc.binary_join_element_wise(*arrays, sep, options=_JOIN)


def from_messages(msgs: Sequence[bytes], prefix: Prefix | None = None) -> pa.Array:
    """Messages built one by one as the binary array :func:`join_rows` gives, each after
    its ``prefix`` bytes when one is given."""
    if prefix is not None:
        mat = prefix(np.fromiter((len(m) for m in msgs), dtype=np.int64, count=len(msgs)))
        msgs = [bytes(head) + m for head, m in zip(mat, msgs, strict=True)]
    return pa.array(msgs, B)
