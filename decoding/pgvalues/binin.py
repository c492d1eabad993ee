"""PostgreSQL binary input (typreceive) into the lake's Arrow types, for whole columns.

Fixed-width types are checked and converted with numpy in one go; variable ones (numeric,
text, arrays) go value by value, as their layout must be read sequentially anyway.  Errors
carry PostgreSQL's SQLSTATE and wording; the caller adds "in bind parameter N" or the COPY
context as PostgreSQL does.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoding.errors import PgError
from decoding.pgtypes import ColumnType, UnknownTypeError, type_by_oid
from decoding.pgvalues import _calendar as cal
from decoding.pgvalues._arrow import binary_parts, combine, valid_mask
from decoding.pgvalues._utf8 import decode_utf8
from decoding.pgvalues.textin import (
    InputError,
    Num,
    decode_text_arrow,
    json_in,
    jsonb_in,
    numeric_typmod,
)

B = pa.binary()


def _short() -> PgError:
    return PgError("08P01", "insufficient data left in message")


def _format_error() -> PgError:
    return PgError("22P03", "incorrect binary data format")


def _as_binary(values: pa.Array | pa.ChunkedArray | Sequence[bytes | None]) -> pa.Array:
    if isinstance(values, pa.ChunkedArray | pa.Array):
        arr = combine(values)
        if not pa.types.is_binary(arr.type):
            arr = arr.cast(B)
        return arr
    return pa.array(list(values), B)


def _fixed(arr: pa.Array, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, width) byte matrix of the values (zeros for nulls) and the validity mask."""
    offs, data = binary_parts(arr)
    valid = valid_mask(arr)
    lens = np.diff(offs)
    bad = np.flatnonzero(valid & (lens != width))
    if len(bad):
        r = int(bad[0])
        raise InputError(_short() if lens[r] < width else _format_error(), r)
    mat = np.zeros((len(arr), width), dtype=np.uint8)
    if valid.all():
        mat[:] = data.reshape(-1, width)
    else:
        rows = np.flatnonzero(valid)
        mat[rows] = data[offs[rows][:, None] + np.arange(width)[None, :]]
    return mat, valid


def _be(mat: np.ndarray, dtype: str) -> np.ndarray:
    return np.ascontiguousarray(mat).view(dtype).reshape(-1).astype(dtype.replace(">", "<"))


def _recv_bool(arr: pa.Array, ct: ColumnType) -> pa.Array:
    mat, valid = _fixed(arr, 1)
    return pa.array(mat[:, 0] != 0, pa.bool_(), mask=~valid)


def _recv_int(width: int) -> Callable[[pa.Array, ColumnType], pa.Array]:
    typ = {2: pa.int16(), 4: pa.int32(), 8: pa.int64()}[width]

    def recv(arr: pa.Array, ct: ColumnType) -> pa.Array:
        mat, valid = _fixed(arr, width)
        return pa.array(_be(mat, f">i{width}"), typ, mask=~valid)

    return recv


def _recv_float(width: int) -> Callable[[pa.Array, ColumnType], pa.Array]:
    typ = pa.float32() if width == 4 else pa.float64()

    def recv(arr: pa.Array, ct: ColumnType) -> pa.Array:
        mat, valid = _fixed(arr, width)
        return pa.array(_be(mat, f">f{width}"), typ, mask=~valid)

    return recv


def _recv_date(arr: pa.Array, ct: ColumnType) -> pa.Array:
    mat, valid = _fixed(arr, 4)
    v = _be(mat, ">i4").astype(np.int64)
    pos = v == cal.INT32_MAX
    neg = v == -cal.INT32_MAX - 1
    z = v + cal.PG_EPOCH_DAYS
    bad = valid & ~pos & ~neg & ((z < cal.DATE_MIN) | (z >= cal.DATE_END))
    if bad.any():
        raise InputError(PgError("22008", "date out of range"), int(np.flatnonzero(bad)[0]))
    z = np.where(pos, cal.DATE_POS_INF, np.where(neg, cal.DATE_NEG_INF, z))
    return pa.array(z.astype(np.int32), pa.int32(), mask=~valid).view(pa.date32())


def _recv_time(arr: pa.Array, ct: ColumnType) -> pa.Array:
    mat, valid = _fixed(arr, 8)
    v = _be(mat, ">i8")
    bad = valid & ((v < 0) | (v > cal.USECS_PER_DAY))
    if bad.any():
        raise InputError(PgError("22008", "time out of range"), int(np.flatnonzero(bad)[0]))
    return pa.array(v, pa.int64(), mask=~valid).view(pa.time64("us"))


_PG_TS_MIN = -211813488000000000
_PG_TS_END = 9223371331200000000


def _recv_timestamp(arr: pa.Array, ct: ColumnType) -> pa.Array:
    mat, valid = _fixed(arr, 8)
    v = _be(mat, ">i8")
    pos = v == cal.INT64_MAX
    neg = v == cal.INT64_MIN
    finite = valid & ~pos & ~neg
    bad = finite & ((v < _PG_TS_MIN) | (v >= _PG_TS_END))
    if bad.any():
        raise InputError(PgError("22008", "timestamp out of range"), int(np.flatnonzero(bad)[0]))
    # the lake counts from 1970 in int64: the last ~30 years of PostgreSQL's range don't fit
    beyond = finite & (v > cal.TS_END - cal.PG_EPOCH_USECS)
    if beyond.any():
        raise InputError(cal.beyond_lake_timestamps(), int(np.flatnonzero(beyond)[0]))
    out = np.where(finite, v, 0) + cal.PG_EPOCH_USECS
    out = np.where(pos, cal.TS_POS_INF, np.where(neg, cal.TS_NEG_INF, out))
    return pa.array(out, pa.int64(), mask=~valid).view(ct.arrow)


def _recv_interval(arr: pa.Array, ct: ColumnType) -> pa.Array:
    mat, valid = _fixed(arr, 16)
    us = _be(mat[:, 0:8], ">i8")
    days = _be(mat[:, 8:12], ">i4")
    months = _be(mat[:, 12:16], ">i4")
    return pa.StructArray.from_arrays(
        [pa.array(months, pa.int32()), pa.array(days, pa.int32()), pa.array(us, pa.int64())],
        names=["months", "days", "microseconds"],
        mask=pa.array(~valid),
    )


def _recv_uuid(arr: pa.Array, ct: ColumnType) -> pa.Array:
    mat, valid = _fixed(arr, 16)
    hexs = [bytes(r).hex() for r in mat]
    return pa.array(
        [
            f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}" if ok else None
            for h, ok in zip(hexs, valid, strict=True)
        ],
        pa.string(),
    )


def numeric_recv(b: bytes) -> Num:
    if len(b) < 8:
        raise _short()
    ndigits, weight, sign, dscale = struct.unpack_from(">HhHH", b)
    if sign not in (0x0000, 0x4000, 0xC000, 0xD000, 0xF000):
        raise PgError("22P03", 'invalid sign in external "numeric" value')
    if dscale & 0x3FFF != dscale:
        raise PgError("22P03", 'invalid scale in external "numeric" value')
    if len(b) < 8 + 2 * ndigits:
        raise _short()
    if len(b) > 8 + 2 * ndigits:
        raise _format_error()
    digits = struct.unpack_from(f">{ndigits}h", b, 8)
    for d in digits:
        if d < 0 or d >= 10000:
            raise PgError("22P03", 'invalid digit in external "numeric" value')
    if sign == 0xC000:
        return Num("nan")
    if sign == 0xD000:
        return Num("inf")
    if sign == 0xF000:
        return Num("-inf")
    # value = sum(d * 10000^(weight - i)), truncated to dscale decimal places
    if not digits:
        return Num(None, False, "0", dscale)
    ds = "".join(f"{d:04d}" for d in digits)
    point = 4 * (weight + 1)  # decimal digits before the point within ds
    if point < 0:
        ds = "0" * (-point) + ds
        point = 0
    elif point > len(ds):
        ds = ds + "0" * (point - len(ds))
    ip, fp = ds[:point], ds[point:]
    fp = (fp + "0" * dscale)[:dscale]
    return Num(None, sign == 0x4000, ip + fp, dscale)


def _recv_numeric(arr: pa.Array, ct: ColumnType) -> pa.Array:
    ps = ct.numeric_precision_scale
    out_type = ColumnType(ct.base, ct.typmod).arrow

    def one(b: bytes) -> Any:
        num = numeric_recv(b)
        if ps is not None:
            num = numeric_typmod(num, *ps)
        if pa.types.is_decimal(out_type):
            if num.special:
                raise PgError(
                    "0A000",
                    f"NaN cannot be stored in a numeric({ps[0]},{ps[1]}) column of the lake",  # type: ignore[index]
                )
            return num.decimal()
        return num.text()

    return _each(arr, one, out_type)


def _each(arr: pa.Array, fn: Callable[[bytes], Any], out_type: pa.DataType) -> pa.Array:
    out = []
    for i, v in enumerate(arr.to_pylist()):
        if v is None:
            out.append(None)
            continue
        try:
            out.append(fn(v))
        except PgError as e:
            raise InputError(e, i) from None
    return pa.array(out, out_type)


def _recv_text(arr: pa.Array, ct: ColumnType) -> pa.Array:
    # validation and length rules are those of text input
    return decode_text_arrow(ColumnType(ct.base, ct.typmod), arr)


def _recv_name(arr: pa.Array, ct: ColumnType) -> pa.Array:
    """namerecv: the bytes as text, 42622 for 64 bytes or more (not cut, as namein cuts)."""
    longest = pc.max(pc.binary_length(arr)).as_py() if len(arr) else None
    if longest is not None and longest >= 64:
        raise PgError("42622", "identifier too long", detail="Identifier must be less than 64 characters.")
    return _recv_text(arr, ct)


def _recv_bytea(arr: pa.Array, ct: ColumnType) -> pa.Array:
    return arr


def _recv_json(arr: pa.Array, ct: ColumnType) -> pa.Array:
    return _each(arr, lambda b: json_in(decode_utf8(b)), pa.string())


def _recv_jsonb(arr: pa.Array, ct: ColumnType) -> pa.Array:
    def one(b: bytes) -> str:
        if not b:
            raise _short()
        if b[0] != 1:
            raise PgError("XX000", f"unsupported jsonb version number {b[0]}")
        return jsonb_in(decode_utf8(b[1:]))

    return _each(arr, one, pa.string())


def _type_name(oid: int) -> str:
    try:
        return type_by_oid(oid).sql_name()
    except UnknownTypeError:
        return "???"


def array_recv_elements(b: bytes, elem: ColumnType) -> list[bytes | None]:
    if len(b) < 12:
        raise _short()
    ndim, flags, eoid = struct.unpack_from(">iiI", b)
    if ndim < 0:
        raise PgError("22P03", f"invalid number of dimensions: {ndim}")
    if ndim > 6:
        raise PgError(
            "54000", f"number of array dimensions ({ndim}) exceeds the maximum allowed (6)"
        )
    if flags not in (0, 1):
        raise PgError("22P03", "invalid array flags")
    if eoid != elem.base.oid and eoid < 10000:
        raise PgError(
            "42804",
            f"binary data has array element type {eoid} ({_type_name(eoid)}) instead of expected "
            f"{elem.base.oid} ({_type_name(elem.base.oid)})",
        )
    pos = 12
    dims: list[int] = []
    lbs: list[int] = []
    for _ in range(ndim):
        if len(b) < pos + 8:
            raise _short()
        d, lb = struct.unpack_from(">ii", b, pos)
        dims.append(d)
        lbs.append(lb)
        pos += 8
    if ndim > 1:
        raise PgError("0A000", "multidimensional arrays are not supported by the lake")
    nitems = dims[0] if dims else 0
    if lbs and lbs[0] != 1 and nitems > 0:
        raise PgError("0A000", "array lower bounds other than 1 are not supported by the lake")
    if nitems < 0:
        raise PgError("54000", "array size exceeds the maximum allowed (134217727)")
    out: list[bytes | None] = []
    for _ in range(nitems):
        if len(b) < pos + 4:
            raise _short()
        (ln,) = struct.unpack_from(">i", b, pos)
        pos += 4
        if ln == -1:
            out.append(None)
            continue
        if ln < -1 or ln > len(b) - pos:
            raise PgError("22P03", "insufficient data left in message")
        out.append(b[pos : pos + ln])
        pos += ln
    if pos != len(b):
        raise _format_error()
    return out


def _recv_array(arr: pa.Array, ct: ColumnType) -> pa.Array:
    elem = ColumnType(ct.base, ct.typmod)
    n = len(arr)
    lengths = np.zeros(n, dtype=np.int64)
    flat: list[bytes | None] = []
    owner: list[int] = []
    for i, v in enumerate(arr.to_pylist()):
        if v is None:
            continue
        try:
            elems = array_recv_elements(v, elem)
        except PgError as e:
            raise InputError(e, i) from None
        lengths[i] = len(elems)
        flat.extend(elems)
        owner.extend([i] * len(elems))
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    try:
        values = decode_binary_arrow(elem, pa.array(flat, B))
    except InputError as e:
        raise InputError(e, owner[e.index]) from None
    return pa.ListArray.from_arrays(
        pa.array(offsets.astype(np.int32)), values, mask=pa.array(~valid_mask(arr))
    ).cast(ct.arrow)


_RECV: dict[str, Callable[[pa.Array, ColumnType], pa.Array]] = {
    "bool": _recv_bool,
    "int2": _recv_int(2),
    "int4": _recv_int(4),
    "int8": _recv_int(8),
    "float4": _recv_float(4),
    "float8": _recv_float(8),
    "numeric": _recv_numeric,
    "text": _recv_text,
    "anyenum": _recv_text,
    "varchar": _recv_text,
    "bpchar": _recv_text,
    "name": _recv_name,
    "bytea": _recv_bytea,
    "date": _recv_date,
    "time": _recv_time,
    "timestamp": _recv_timestamp,
    "timestamptz": _recv_timestamp,
    "interval": _recv_interval,
    "uuid": _recv_uuid,
    "json": _recv_json,
    "jsonb": _recv_jsonb,
}


def decode_binary_arrow(
    ctype: ColumnType, values: pa.Array | pa.ChunkedArray | Sequence[bytes | None]
) -> pa.Array:
    """Parse binary-format values (None = SQL NULL) into an Arrow array of ``ctype.arrow``."""
    arr = _as_binary(values)
    if ctype.is_array:
        return _recv_array(arr, ctype)
    return _RECV[ctype.base.name](arr, ctype)
