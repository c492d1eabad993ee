"""Low-level Arrow/numpy plumbing shared by the encoders and decoders.

The codecs stay fast by never looking at values one at a time: they read Arrow buffers as
numpy arrays, format fixed-width fields into byte matrices, and hand the result back to
Arrow without copying where the layout allows.  Everything here is about layout, not about
PostgreSQL semantics.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

BINARY = pa.binary()

#: ``DIGITS2[v]`` is the two ASCII digits of ``v`` (0..99).
DIGITS2: np.ndarray = np.frombuffer(
    b"".join(b"%02d" % i for i in range(100)), dtype=np.uint8
).reshape(100, 2)
#: Lower-case hex pairs of every byte value, as PostgreSQL prints bytea and uuid.
HEX2: np.ndarray = np.frombuffer(b"".join(b"%02x" % i for i in range(256)), dtype=np.uint8).reshape(
    256, 2
)


def combine(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One contiguous array; dictionary-encoded input (DuckDB ENUM) is decoded."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    elif pa.types.is_list(arr.type) and pa.types.is_dictionary(arr.type.value_type):  # (ENUM[])
        arr = arr.cast(pa.list_(arr.type.value_type.value_type))
    if isinstance(arr, pa.ExtensionArray):
        arr = arr.storage
    t = arr.type
    # view layouts (newer Arrow producers) have no offsets buffer: use the classic ones
    if pa.types.is_string_view(t):
        arr = arr.cast(pa.string())
    elif pa.types.is_binary_view(t):
        arr = arr.cast(BINARY)
    elif hasattr(pa.types, "is_list_view") and pa.types.is_list_view(t):
        arr = arr.cast(pa.list_(t.value_type))
    elif hasattr(pa.types, "is_large_list_view") and pa.types.is_large_list_view(t):
        arr = arr.cast(pa.large_list(t.value_type))
    return arr


def valid_mask(arr: pa.Array) -> np.ndarray:
    """Boolean validity per element (True = not null)."""
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    if pa.types.is_null(arr.type):
        return np.zeros(len(arr), dtype=bool)
    return np.asarray(arr.is_valid())


def validity_buffer(valid: np.ndarray | None) -> pa.Buffer | None:
    if valid is None or valid.all():
        return None
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def fixed_values(arr: pa.Array, dtype: np.dtype | str) -> np.ndarray:
    """The values buffer of a primitive array as numpy (null slots hold whatever is there)."""
    dt = np.dtype(dtype)
    buf = arr.buffers()[1]
    if buf is None:
        return np.zeros(len(arr), dtype=dt)
    return np.frombuffer(buf, dtype=dt, count=len(arr), offset=arr.offset * dt.itemsize)


def binary_parts(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets as int64 rebased to 0, data as uint8) of a string/binary array."""
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    otype = np.int64 if large else np.int32
    n = len(arr)
    bufs = arr.buffers()
    if bufs[1] is None:
        return np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.uint8)
    offs = np.frombuffer(
        bufs[1], dtype=otype, count=n + 1, offset=arr.offset * np.dtype(otype).itemsize
    )
    start, end = int(offs[0]), int(offs[-1])
    data = (
        np.frombuffer(bufs[2], dtype=np.uint8)[start:end]
        if bufs[2] is not None and end > start
        else np.zeros(0, dtype=np.uint8)
    )
    return offs.astype(np.int64) - start, data


def as_binary(arr: pa.Array) -> pa.Array:
    """A string array seen as binary, zero-copy (text output is binary all the way)."""
    t = arr.type
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return arr
    if pa.types.is_string(t):
        return arr.view(BINARY)
    if pa.types.is_large_string(t):
        return arr.view(pa.large_binary())
    return arr.cast(BINARY)


def from_parts(
    offsets: np.ndarray, data: np.ndarray, valid: np.ndarray | None, large: bool = False
) -> pa.Array:
    """A binary array from numpy offsets (length n+1, from 0) and data."""
    n = len(offsets) - 1
    if large or offsets[-1] >= 2**31 - 1:
        typ = pa.large_binary()
        obuf = pa.py_buffer(np.ascontiguousarray(offsets, dtype=np.int64))
    else:
        typ = BINARY
        obuf = pa.py_buffer(np.ascontiguousarray(offsets, dtype=np.int32))
    vbuf = validity_buffer(valid)
    return pa.Array.from_buffers(
        typ,
        n,
        [vbuf, obuf, pa.py_buffer(np.ascontiguousarray(data))],
        null_count=-1 if vbuf is not None else 0,
    )


def from_matrix(
    mat: np.ndarray,
    keep: np.ndarray | None,
    valid: np.ndarray | None,
    lengths: np.ndarray | None = None,
) -> pa.Array:
    """Rows of a byte matrix as a binary array; ``keep`` masks bytes out (row-major compaction).

    Fixed-width formatting writes every field at a fixed column; dropping the unwanted bytes
    (trailing fraction zeros, padding) with one boolean mask is far cheaper than building
    variable-length strings.  ``lengths`` (kept bytes per row) saves recounting the mask.
    """
    n, w = mat.shape
    if keep is None:
        offsets = np.arange(0, (n + 1) * w, w, dtype=np.int64)
        data = mat.reshape(-1)
    else:
        if lengths is None:
            lengths = keep.sum(axis=1, dtype=np.int64)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        data = mat[keep]
    return from_parts(offsets, data, valid)


def byte_mask(data: np.ndarray, chars: bytes) -> np.ndarray:
    """Which bytes of ``data`` are in ``chars``: one comparison per run of consecutive byte
    values, several times cheaper than a 256-entry table gather."""
    mask: np.ndarray | None = None
    cs = sorted(set(chars))
    i = 0
    while i < len(cs):
        j = i
        while j + 1 < len(cs) and cs[j + 1] == cs[j] + 1:
            j += 1
        m = data == cs[i] if j == i else (data - np.uint8(cs[i])) <= np.uint8(cs[j] - cs[i])
        mask = m if mask is None else (mask | m)
        i = j + 1
    return mask if mask is not None else np.zeros(len(data), dtype=bool)


def sorted_unique(x: np.ndarray) -> np.ndarray:
    """np.unique for already sorted input, without its hashing or sorting."""
    if len(x) == 0:
        return x
    keep = np.empty(len(x), dtype=bool)
    keep[0] = True
    np.not_equal(x[1:], x[:-1], out=keep[1:])
    return x[keep]


def rows_with_bytes(arr: pa.Array, chars: bytes) -> np.ndarray:
    """Indices of elements containing any byte of ``chars`` (sorted, unique)."""
    offs, data = binary_parts(arr)
    if len(data) == 0:
        return np.zeros(0, dtype=np.int64)
    hits = np.flatnonzero(byte_mask(data, chars))
    if len(hits) == 0:
        return hits
    return sorted_unique(np.searchsorted(offs, hits, side="right") - 1)


def patch(result: pa.Array, rows: np.ndarray, values: Sequence[bytes | str | None]) -> pa.Array:
    """Replace ``result[rows]`` by ``values`` (the per-value fallback for rare elements)."""
    if len(rows) == 0:
        return result
    mask = np.zeros(len(result), dtype=bool)
    mask[rows] = True
    repl = pa.array(list(values), type=result.type)
    return pc.replace_with_mask(result, pa.array(mask), repl)
