"""PostgreSQL's extended hash functions of the key types hash partitioning takes, and
``compute_partition_hash_value``: the row hash whose remainder picks a hash partition.

``hash_bytes_extended`` and ``hash_bytes_uint32_extended`` are Bob Jenkins' lookup3 as
``src/common/hashfn.c`` has them (little-endian reads); the per-type functions
(``hashint4extended``, ``hashint8extended``, ``hashtextextended`` under a deterministic
collation, …) feed them as ``utils/adt`` does. Integer keys are hashed as numpy arrays;
text keys value by value."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoding.pgtime import PG_EPOCH_UNIX_DAYS, PG_EPOCH_UNIX_US
from decoding.pgtypes import ColumnType

#: ``HASH_PARTITION_SEED``: the seed every partition key column is hashed with.
PARTITION_SEED = 0x7A5B22367996DCFD
_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF

#: Key types hashed here (by ``ColumnType.sql_name()`` without a typmod).
HASH_TYPES = frozenset(
    {"smallint", "integer", "bigint", "text", "character varying", "date", "boolean",
     "timestamp without time zone", "timestamp with time zone"}
)


def _rot(x: np.ndarray, k: int) -> np.ndarray:
    return (x << np.uint32(k)) | (x >> np.uint32(32 - k))


def _mix(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = a - c
    a = a ^ _rot(c, 4)
    c = c + b
    b = b - a
    b = b ^ _rot(a, 6)
    a = a + c
    c = c - b
    c = c ^ _rot(b, 8)
    b = b + a
    a = a - c
    a = a ^ _rot(c, 16)
    c = c + b
    b = b - a
    b = b ^ _rot(a, 19)
    a = a + c
    c = c - b
    c = c ^ _rot(b, 4)
    b = b + a
    return a, b, c


def _final(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    c = c ^ b
    c = c - _rot(b, 14)
    a = a ^ c
    a = a - _rot(c, 11)
    b = b ^ a
    b = b - _rot(a, 25)
    c = c ^ b
    c = c - _rot(b, 16)
    a = a ^ c
    a = a - _rot(c, 4)
    b = b ^ a
    b = b - _rot(a, 14)
    c = c ^ b
    c = c - _rot(b, 24)
    return a, b, c


def _seeded(init: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a, b, c = init.copy(), init.copy(), init.copy()
    if seed:
        a = a + np.uint32((seed >> 32) & _M32)
        b = b + np.uint32(seed & _M32)
        a, b, c = _mix(a, b, c)
    return a, b, c


def hash_uint32_extended(k: np.ndarray, seed: int = PARTITION_SEED) -> np.ndarray:
    """``hash_bytes_uint32_extended`` of each uint32 of ``k``."""
    with np.errstate(over="ignore"):
        init = np.full(len(k), (0x9E3779B9 + 4 + 3923095) & _M32, dtype=np.uint32)
        a, b, c = _seeded(init, seed)
        a = a + k.astype(np.uint32)
        a, b, c = _final(a, b, c)
    return (b.astype(np.uint64) << np.uint64(32)) | c.astype(np.uint64)


def _rot1(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _M32


def _mix1(a: int, b: int, c: int) -> tuple[int, int, int]:
    a = ((a - c) & _M32) ^ _rot1(c, 4)
    c = (c + b) & _M32
    b = ((b - a) & _M32) ^ _rot1(a, 6)
    a = (a + c) & _M32
    c = ((c - b) & _M32) ^ _rot1(b, 8)
    b = (b + a) & _M32
    a = ((a - c) & _M32) ^ _rot1(c, 16)
    c = (c + b) & _M32
    b = ((b - a) & _M32) ^ _rot1(a, 19)
    a = (a + c) & _M32
    c = ((c - b) & _M32) ^ _rot1(b, 4)
    b = (b + a) & _M32
    return a, b, c


def _final1(a: int, b: int, c: int) -> tuple[int, int, int]:
    c = ((c ^ b) - _rot1(b, 14)) & _M32
    a = ((a ^ c) - _rot1(c, 11)) & _M32
    b = ((b ^ a) - _rot1(a, 25)) & _M32
    c = ((c ^ b) - _rot1(b, 16)) & _M32
    a = ((a ^ c) - _rot1(c, 4)) & _M32
    b = ((b ^ a) - _rot1(a, 14)) & _M32
    c = ((c ^ b) - _rot1(b, 24)) & _M32
    return a, b, c


def hash_bytes_extended(data: bytes, seed: int = PARTITION_SEED) -> int:
    """``hash_bytes_extended`` of one byte string (in Python integers: one string's
    arithmetic is too short for numpy to pay)."""
    n = len(data)
    a = b = c = (0x9E3779B9 + n + 3923095) & _M32
    if seed:
        a = (a + (seed >> 32)) & _M32
        b = (b + (seed & _M32)) & _M32
        a, b, c = _mix1(a, b, c)
    k = 0
    while n - k >= 12:
        w0, w1, w2 = int.from_bytes(data[k : k + 4], "little"), int.from_bytes(data[k + 4 : k + 8], "little"), int.from_bytes(data[k + 8 : k + 12], "little")
        a, b, c = _mix1((a + w0) & _M32, (b + w1) & _M32, (c + w2) & _M32)
        k += 12
    tail = data[k:] + bytes(12 - (n - k))
    # (the lowest byte of c is the length's: the tail's bytes 8-10 go above it)
    a = (a + int.from_bytes(tail[0:4], "little")) & _M32
    b = (b + int.from_bytes(tail[4:8], "little")) & _M32
    c = (c + (int.from_bytes(tail[8:12], "little") << 8)) & _M32
    a, b, c = _final1(a, b, c)
    return (b << 32) | c


def column_hashes(ctype: ColumnType, arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Each value's extended hash (uint64) under the partition seed, and which are not
    NULL (a NULL key adds nothing to the row hash)."""
    name = ctype.sql_name().split("(")[0]
    valid = ~np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    n = len(arr)
    if name in ("text", "character varying"):
        out = np.zeros(n, dtype=np.uint64)
        for i, v in enumerate(arr.to_pylist()):
            if v is not None:
                out[i] = hash_bytes_extended(v.encode())
        return out, valid
    if name == "boolean":
        k = np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), dtype=np.uint32)
        return hash_uint32_extended(k), valid
    if name == "date":
        v = np.asarray(pc.fill_null(arr.cast(pa.int32()), 0).to_numpy(), dtype=np.int64) - PG_EPOCH_UNIX_DAYS
        return hash_uint32_extended(v.astype(np.int32).view(np.uint32)), valid
    if name.startswith("timestamp"):
        us = pc.fill_null(arr.cast(pa.timestamp("us", tz=getattr(arr.type, "tz", None))).cast(pa.int64()), 0)
        return _hash_int64(np.asarray(us.to_numpy(), dtype=np.int64) - PG_EPOCH_UNIX_US), valid
    v = np.asarray(pc.fill_null(arr, 0).to_numpy(), dtype=np.int64)
    if name == "bigint":
        return _hash_int64(v), valid
    return hash_uint32_extended(v.astype(np.int32).view(np.uint32)), valid


def _hash_int64(v: np.ndarray) -> np.ndarray:
    """``hashint8extended``: the low half xor the high half (complemented when negative)."""
    u = v.view(np.uint64)
    lo = (u & np.uint64(_M32)).astype(np.uint32)
    hi = (u >> np.uint64(32)).astype(np.uint32)
    lo = lo ^ np.where(v >= 0, hi, ~hi)
    return hash_uint32_extended(lo)


def row_hashes(columns: list[tuple[ColumnType, pa.Array]], n: int) -> np.ndarray:
    """``compute_partition_hash_value`` of each row: the key columns' hashes combined by
    ``hash_combine64``, NULLs skipped."""
    row = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for ctype, arr in columns:
            h, valid = column_hashes(ctype, arr)
            combined = row ^ (h + np.uint64(0x49A0F4DD15E5A8E3) + (row << np.uint64(54)) + (row >> np.uint64(7)))
            row = np.where(valid, combined, row)
    return row
