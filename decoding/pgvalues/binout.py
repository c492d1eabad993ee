"""PostgreSQL binary send format (typsend) for whole Arrow arrays.

The result of every encoder is a :class:`Fields` value: the column's elements already
prefixed with their int32 length (-1 for NULL), which is what COPY BINARY, DataRow and
array bodies all embed.  Fixed-width types are built as one numpy byte matrix; variable ones
as an Arrow binary array.  ``payloads()`` strips the prefixes for callers that want bare values.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoding.errors import PgError
from decoding.pgtypes import ColumnType
from decoding.pgvalues import _calendar as cal
from decoding.pgvalues._arrow import (
    as_binary,
    binary_parts,
    combine,
    fixed_values,
    from_matrix,
    from_parts,
    valid_mask,
)
from decoding.pgvalues._types import column_type
from decoding.pgvalues.textout import (
    _date_days,
    _time_usecs,
    _ts_usecs,
    encode_text_arrow,
    interval_parts,
)

B = pa.binary()
NULL_LEN = b"\xff\xff\xff\xff"


@dataclass(frozen=True, slots=True)
class Fields:
    """Length-prefixed elements: ``prefixed[i]`` is int32 length + payload, or ff ff ff ff."""

    prefixed: pa.Array

    def payloads(self) -> list[bytes | None]:
        out: list[bytes | None] = []
        for v in self.prefixed.to_pylist():
            out.append(None if v[:4] == NULL_LEN else v[4:])
        return out


def _fixed(payload: np.ndarray, valid: np.ndarray) -> Fields:
    """Length-prefix a (n, w) payload matrix; null rows keep only their -1 length."""
    n, w = payload.shape
    mat = np.empty((n, 4 + w), dtype=np.uint8)
    mat[:, :4] = np.frombuffer(struct.pack(">i", w), dtype=np.uint8)
    mat[:, 4:] = payload
    keep = None
    if not valid.all():
        mat[~valid, :4] = 0xFF
        keep = np.ones((n, 4 + w), dtype=bool)
        keep[~valid, 4:] = False
    return Fields(from_matrix(mat, keep, None))


def _be(values: np.ndarray, dtype: str) -> np.ndarray:
    a = np.ascontiguousarray(values.astype(dtype))
    return a.view(np.uint8).reshape(len(values), np.dtype(dtype).itemsize)


def _variable(payload: pa.Array) -> Fields:
    """Length-prefix a binary array of payloads."""
    payload = as_binary(combine(payload))
    if pa.types.is_large_binary(payload.type):
        payload = payload.cast(B)
    offs, _ = binary_parts(payload)
    valid = valid_mask(payload)
    lens = np.where(valid, np.diff(offs), -1)
    prefix = from_matrix(_be(lens, ">i4"), None, None)
    if not valid.all():
        payload = payload.fill_null(b"")
    return Fields(pc.binary_join_element_wise(prefix, payload, pa.scalar(b"", B)))


# ---------------------------------------------------------------------------- types


def _bool(arr: pa.Array, valid: np.ndarray) -> Fields:
    v = np.asarray(arr.cast(pa.bool_()).fill_null(False), dtype=np.uint8)
    return _fixed(v.reshape(-1, 1), valid)


def _int(arr: pa.Array, valid: np.ndarray, width: int) -> Fields:
    t = arr.type
    if pa.types.is_decimal(t):
        arr = arr.cast(pa.int64())
        t = arr.type
    if not pa.types.is_integer(t):
        arr = arr.cast(pa.int64())
    v = np.asarray(arr.fill_null(0))
    return _fixed(_be(v, f">i{width}"), valid)


def _float(arr: pa.Array, valid: np.ndarray, width: int) -> Fields:
    want = pa.float32() if width == 4 else pa.float64()
    if arr.type != want:
        arr = arr.cast(want)
    v = fixed_values(arr, np.float32 if width == 4 else np.float64)
    return _fixed(_be(v, f">f{width}"), valid)


def _date(arr: pa.Array, valid: np.ndarray) -> Fields:
    z = _date_days(arr)
    out = z - cal.PG_EPOCH_DAYS
    out = np.where(z >= cal.DATE_POS_INF, cal.INT32_MAX, out)
    out = np.where(z <= cal.DATE_NEG_INF, -cal.INT32_MAX - 1, out)
    return _fixed(_be(out, ">i4"), valid)


def _time(arr: pa.Array, valid: np.ndarray) -> Fields:
    return _fixed(_be(_time_usecs(arr), ">i8"), valid)


def _timestamp(arr: pa.Array, valid: np.ndarray) -> Fields:
    us = _ts_usecs(arr)
    pos = us >= cal.TS_POS_INF
    neg = us <= cal.TS_NEG_INF
    with np.errstate(over="ignore"):
        out = np.where(pos | neg, 0, us) - cal.PG_EPOCH_USECS
    out = np.where(pos, cal.INT64_MAX, out)
    out = np.where(neg, cal.INT64_MIN, out)
    return _fixed(_be(out, ">i8"), valid)


def _interval(arr: pa.Array, valid: np.ndarray) -> Fields:
    months, days, us = interval_parts(arr)
    n = len(months)
    mat = np.empty((n, 16), dtype=np.uint8)
    mat[:, 0:8] = _be(us, ">i8")
    mat[:, 8:12] = _be(days, ">i4")
    mat[:, 12:16] = _be(months, ">i4")
    return _fixed(mat, valid)


_HEXVAL = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEXVAL[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _HEXVAL[_c] = 10 + _i


def _uuid(arr: pa.Array, valid: np.ndarray) -> Fields:
    if pa.types.is_fixed_size_binary(arr.type):
        raw = np.frombuffer(arr.buffers()[1], np.uint8, 16 * len(arr), 16 * arr.offset)
        return _fixed(raw.reshape(-1, 16), valid)
    s = as_binary(arr)
    offs, data = binary_parts(s)
    lens = np.diff(offs)
    n = len(arr)
    if n and np.all(np.where(valid, lens, 36) == 36):
        # canonical text: 36 chars with hyphens at 8, 13, 18, 23
        rows = np.where(valid, offs[:-1], 0)
        mat = (
            data[rows[:, None] + np.arange(36)[None, :]]
            if len(data)
            else np.zeros((n, 36), np.uint8)
        )
        hexcols = np.r_[0:8, 9:13, 14:18, 19:23, 24:36]
        h = _HEXVAL[mat[:, hexcols]]
        ok = (h != 255).all(axis=1) | ~valid
        if ok.all():
            out = (h[:, 0::2] << 4) | h[:, 1::2]
            return _fixed(out.astype(np.uint8), valid)
    import uuid as _uuidmod

    payload = [None if v is None else _uuidmod.UUID(v.decode()).bytes for v in s.to_pylist()]
    return _variable(pa.array(payload, B))


def _numeric_digits(unscaled: int, scale: int) -> bytes:
    """numeric_send of unscaled * 10^-scale (scale >= 0 is the dscale)."""
    neg = unscaled < 0
    a = -unscaled if neg else unscaled
    if a == 0:
        return struct.pack(">hhHh", 0, 0, 0, scale)
    ip, fp = divmod(a, 10**scale)
    nfrac = -(-scale // 4)
    fp *= 10 ** (nfrac * 4 - scale)
    groups: list[int] = []
    while ip:
        ip, g = divmod(ip, 10000)
        groups.append(g)
    groups.reverse()
    weight = len(groups) - 1
    fgroups = [(fp // 10000 ** (nfrac - 1 - k)) % 10000 for k in range(nfrac)]
    digits = groups + fgroups
    while digits and digits[0] == 0:
        digits.pop(0)
        weight -= 1
    while digits and digits[-1] == 0:
        digits.pop()
    return struct.pack(
        f">hhHh{len(digits)}h", len(digits), weight, 0x4000 if neg else 0, scale, *digits
    )


def numeric_send_text(text: str) -> bytes:
    """numeric_send of a numeric's canonical text (what the lake stores unconstrained).

    Works on the digit string: a numeric can have 131072 digits, more than Python converts
    between int and str by default.
    """
    if text == "NaN":
        return struct.pack(">hhHh", 0, 0, 0xC000, 0)
    # PostgreSQL's infinities report dscale 32: the short-header bits of 0xD000/0xF000
    if text == "Infinity":
        return struct.pack(">hhHh", 0, 0, 0xD000, 32)
    if text == "-Infinity":
        return struct.pack(">hhHh", 0, 0, 0xF000, 32)
    neg = text.startswith("-")
    body = text[1:] if neg else text
    ip, _, fp = body.partition(".")
    dscale = len(fp)
    ip = ip.lstrip("0")
    ipad = "0" * (-len(ip) % 4) + ip
    fpad = fp + "0" * (-len(fp) % 4)
    groups = [int(ipad[k : k + 4]) for k in range(0, len(ipad), 4)]
    weight = len(groups) - 1
    groups += [int(fpad[k : k + 4]) for k in range(0, len(fpad), 4)]
    lead = 0
    while lead < len(groups) and groups[lead] == 0:
        lead += 1
    groups = groups[lead:]
    weight -= lead
    while groups and groups[-1] == 0:
        groups.pop()
    if not groups:
        return struct.pack(">hhHh", 0, 0, 0, dscale)
    return struct.pack(
        f">hhHh{len(groups)}h", len(groups), weight, 0x4000 if neg else 0, dscale, *groups
    )


def _numeric(arr: pa.Array, valid: np.ndarray) -> Fields:
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        vals = arr.to_pylist()
        return _variable(pa.array([None if v is None else numeric_send_text(v) for v in vals], B))
    if pa.types.is_integer(t):
        if pa.types.is_uint64(t):
            vals = arr.to_pylist()
            return _variable(
                pa.array([None if v is None else _numeric_digits(v, 0) for v in vals], B)
            )
        return _numeric_int64(np.asarray(arr.cast(pa.int64()).fill_null(0)), 0, valid)
    if pa.types.is_decimal128(t):
        raw = fixed_values(arr, np.dtype([("lo", "<u8"), ("hi", "<i8")]))
        lo, hi = raw["lo"], raw["hi"]
        fits = ((hi == 0) & (lo < 2**63)) | ((hi == -1) & (lo >= 2**63))
        if t.scale >= 0 and t.scale <= 15 and (fits | ~valid).all():
            return _numeric_int64(lo.view(np.int64), t.scale, valid)
    if pa.types.is_decimal(t):
        scale = t.scale
        vals = arr.to_pylist()
        out = []
        for v in vals:
            if v is None:
                out.append(None)
                continue
            sign, digits, exp = v.as_tuple()
            unscaled = int("".join(map(str, digits)) or "0") * (10 ** (exp + scale))
            out.append(_numeric_digits(-unscaled if sign else unscaled, max(scale, 0)))
        return _variable(pa.array(out, B))
    if pa.types.is_floating(t):
        text = encode_text_arrow(ColumnType(_numeric_base()), arr)
        vals = text.to_pylist()
        return _variable(
            pa.array([None if v is None else numeric_send_text(v.decode()) for v in vals], B)
        )
    raise PgError("42804", f"cannot send {t} as numeric")


def _numeric_base():  # type: ignore[no-untyped-def]

    return column_type("numeric").base


def _numeric_int64(u: np.ndarray, scale: int, valid: np.ndarray) -> Fields:
    """Vectorized numeric_send for unscaled values that fit int64 and dscale <= 15."""
    n = len(u)
    neg = u < 0
    a = np.abs(u.astype(np.int64)).astype(np.uint64)  # |INT64_MIN| fits uint64
    p = np.uint64(10**scale)
    ip = a // p
    fp = a % p
    nfrac = -(-scale // 4)
    fp = fp * np.uint64(10 ** (nfrac * 4 - scale))
    ng = 5 + nfrac
    groups = np.empty((n, ng), dtype=np.int64)
    for k in range(5):
        groups[:, 4 - k] = ((ip // np.uint64(10000**k)) % np.uint64(10000)).astype(np.int64)
    for j in range(nfrac):
        groups[:, 5 + j] = ((fp // np.uint64(10000 ** (nfrac - 1 - j))) % np.uint64(10000)).astype(
            np.int64
        )
    nz = groups != 0
    anynz = nz.any(axis=1)
    first = np.where(anynz, nz.argmax(axis=1), 0)
    last = np.where(anynz, ng - 1 - nz[:, ::-1].argmax(axis=1), -1)
    ndig = np.where(anynz, last - first + 1, 0)
    weight = np.where(anynz, 4 - first, 0)
    sign = np.where(neg & anynz, 0x4000, 0)
    w = 4 + 8 + 2 * ng
    mat = np.empty((n, w), dtype=np.uint8)
    mat[:, 0:4] = _be(np.where(valid, 8 + 2 * ndig, -1), ">i4")
    mat[:, 4:6] = _be(ndig, ">i2")
    mat[:, 6:8] = _be(weight, ">i2")
    mat[:, 8:10] = _be(sign, ">u2")
    mat[:, 10:12] = np.frombuffer(struct.pack(">h", scale), np.uint8)
    mat[:, 12:] = _be(groups.reshape(-1), ">i2").reshape(n, 2 * ng)
    col = np.arange(ng)[None, :]
    keep = np.ones((n, w), dtype=bool)
    gkeep = (col >= first[:, None]) & (col <= last[:, None])
    keep[:, 12:] = np.repeat(gkeep, 2, axis=1)
    keep[~valid, 4:] = False
    return Fields(from_matrix(mat, keep, None))


def _text_like(arr: pa.Array, valid: np.ndarray) -> Fields:
    return _variable(encode_text_arrow(ColumnType(_text_base()), arr))


def _text_base():  # type: ignore[no-untyped-def]

    return column_type("text").base


def _jsonb(arr: pa.Array, valid: np.ndarray) -> Fields:
    text = encode_text_arrow(ColumnType(_text_base()), arr)
    body = pc.binary_join_element_wise(pa.scalar(b"\x01", B), text, pa.scalar(b"", B))
    return _variable(body)


def _bytea(arr: pa.Array, valid: np.ndarray) -> Fields:
    if pa.types.is_fixed_size_binary(arr.type):
        arr = arr.cast(B)
    return _variable(as_binary(arr))


def _array(arr: pa.Array, elem: ColumnType) -> Fields:
    """array_send for one-dimensional arrays (lower bound 1), multi-dimensional per value."""
    t = arr.type
    if pa.types.is_fixed_size_list(t):
        arr = arr.cast(pa.list_(t.value_type))
        t = arr.type
    valid = valid_mask(arr)
    vt = t.value_type
    if pa.types.is_list(vt) or pa.types.is_large_list(vt) or pa.types.is_fixed_size_list(vt):
        return _variable(pa.array([_nested_send(v, elem) for v in arr.to_pylist()], B))
    offs = np.asarray(arr.offsets, dtype=np.int64)
    values = arr.values
    lens = np.diff(offs)
    elems = encode_binary_fields(elem, values).prefixed
    evalid = valid_mask(values)
    nullcum = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(~evalid, out=nullcum[1:])
    hasnull = (nullcum[offs[1:]] - nullcum[offs[:-1]]) > 0
    n = len(arr)
    mat = np.empty((n, 20), dtype=np.uint8)
    mat[:, 0:4] = _be((lens > 0).astype(np.int64), ">i4")
    mat[:, 4:8] = _be(hasnull.astype(np.int64), ">i4")
    mat[:, 8:12] = np.frombuffer(struct.pack(">I", elem.base.oid), np.uint8)
    mat[:, 12:16] = _be(lens, ">i4")
    mat[:, 16:20] = np.frombuffer(struct.pack(">i", 1), np.uint8)
    keep = np.ones((n, 20), dtype=bool)
    keep[lens == 0, 12:] = False
    head = from_matrix(mat, keep, None)
    lists = pa.ListArray.from_arrays(pa.array(offs.astype(np.int32)), elems)
    body = pc.binary_join(
        lists.cast(pa.list_(pa.large_binary())), pa.scalar(b"", pa.large_binary())
    )
    body = body.cast(B)
    payload = pc.binary_join_element_wise(head, body, pa.scalar(b"", B))
    payload = pc.if_else(pa.array(valid), payload, pa.scalar(None, B))
    return _variable(payload)


def _nested_send(v: list | None, elem: ColumnType) -> bytes | None:
    if v is None:
        return None
    dims: list[int] = []
    cur: object = v
    while isinstance(cur, list):
        dims.append(len(cur))
        if not cur:
            break
        cur = cur[0]
    flat: list[object] = []

    def walk(x: object, depth: int) -> None:
        if depth == len(dims):
            flat.append(x)
            return
        if not isinstance(x, list) or len(x) != dims[depth]:
            raise PgError(
                "2202E",
                "multidimensional arrays must have array expressions with matching dimensions",
            )
        for y in x:
            walk(y, depth + 1)

    walk(v, 0)
    if 0 in dims:
        return struct.pack(">iiI", 0, 0, elem.base.oid)
    scalar_type = {
        "bool": pa.bool_(),
        "int2": pa.int16(),
        "int4": pa.int32(),
        "int8": pa.int64(),
        "float4": pa.float32(),
        "float8": pa.float64(),
    }.get(elem.base.name)
    arr = pa.array(flat, scalar_type) if scalar_type is not None else pa.array(flat)
    body = encode_binary_fields(elem, arr).prefixed.to_pylist()
    hasnull = any(x is None for x in flat)
    head = struct.pack(">iiI", len(dims), int(hasnull), elem.base.oid)
    head += b"".join(struct.pack(">ii", d, 1) for d in dims)
    return head + b"".join(body)


_SCALAR = {
    "bool": _bool,
    "int2": lambda a, v: _int(a, v, 2),
    "int4": lambda a, v: _int(a, v, 4),
    "int8": lambda a, v: _int(a, v, 8),
    "float4": lambda a, v: _float(a, v, 4),
    "float8": lambda a, v: _float(a, v, 8),
    "numeric": _numeric,
    "text": _text_like,
    "anyenum": _text_like,
    "varchar": _text_like,
    "name": _text_like,
    "bpchar": _text_like,
    "json": _text_like,
    "jsonb": _jsonb,
    "bytea": _bytea,
    "date": _date,
    "time": _time,
    "timestamp": _timestamp,
    "timestamptz": _timestamp,
    "interval": _interval,
    "uuid": _uuid,
}


def encode_binary_fields(ctype: ColumnType, arr: pa.Array | pa.ChunkedArray) -> Fields:
    """Length-prefixed binary send format of every element."""
    arr = combine(arr)
    n = len(arr)
    if pa.types.is_null(arr.type):
        return Fields(pa.array([NULL_LEN] * n, B) if n < 64 else _all_null(n))
    t = arr.type
    is_list = pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
    if ctype.is_array or is_list:
        if not is_list:
            raise TypeError(f"{ctype.sql_name()} needs a list array, got {t}")
        return _array(arr, ColumnType(ctype.base, ctype.typmod))
    name = ctype.base.name
    valid = valid_mask(arr)
    if name in ("date",) and pa.types.is_timestamp(t):
        arr = arr.cast(pa.timestamp("us")).cast(pa.date32())
    if name in ("timestamp", "timestamptz") and pa.types.is_date(t):
        arr = arr.cast(pa.timestamp("us"))
    if name in ("int2", "int4", "int8", "bool") and (
        pa.types.is_string(t) or pa.types.is_large_string(t)
    ):
        return _text_like(arr, valid)
    return _SCALAR[name](arr, valid)


def _all_null(n: int) -> pa.Array:
    data = np.tile(np.frombuffer(NULL_LEN, np.uint8), n)
    return from_parts(np.arange(0, 4 * n + 1, 4, dtype=np.int64), data, None)
