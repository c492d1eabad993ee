"""PostgreSQL text output (typoutput) for whole Arrow arrays.

Settings assumed are PostgreSQL's defaults for a server started with TimeZone=UTC:
DateStyle ISO, MDY; IntervalStyle postgres; bytea_output hex. extra_float_digits is a
parameter (default 1: shortest exact floats, PostgreSQL 12+; 0 and below: ``%.{15+n}g``).

Each encoder maps an Arrow array to a binary array of the same length (null stays null).
Common values are formatted with Arrow kernels or numpy byte matrices; values whose text has
an unusual shape (years outside 1..9999, infinities, floats whose notation differs from
Arrow's) are formatted one by one and patched in, so the fast path never has to be general.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoding import pgtz
from decoding.pgtypes import ColumnType
from decoding.pgvalues import _calendar as cal
from decoding.pgvalues._arrow import (
    DIGITS2,
    HEX2,
    as_binary,
    binary_parts,
    combine,
    fixed_values,
    from_matrix,
    from_parts,
    patch,
    rows_with_bytes,
    valid_mask,
)
from decoding.pgvalues.record import field_type, quote_field

B = pa.binary()
ArrowEncoder = Callable[[pa.Array], pa.Array]


def _s(b: bytes) -> pa.Scalar:
    return pa.scalar(b, B)


def _empty_result(n: int) -> pa.Array:
    return pa.nulls(n, B)


# --------------------------------------------------------------------------- scalars


def _bool(arr: pa.Array) -> pa.Array:
    return pc.if_else(arr.cast(pa.bool_()), _s(b"t"), _s(b"f"))


def _integer(arr: pa.Array) -> pa.Array:
    return as_binary(pc.cast(arr, pa.string()))


def _plain_string(arr: pa.Array) -> pa.Array:
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        return as_binary(arr)
    if pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type):
        return arr
    if pa.types.is_null(arr.type):
        return _empty_result(len(arr))
    if pa.types.is_fixed_size_binary(arr.type) and arr.type.byte_width == 16:
        return _uuid_from_bytes(arr)
    return _duckdb_varchar(arr)


_duck_local = threading.local()


def _duckdb_varchar(arr: pa.Array) -> pa.Array:
    """Text of a type PostgreSQL has no counterpart for (STRUCT, MAP, ...): DuckDB's own cast."""
    import duckdb

    con = getattr(_duck_local, "con", None)
    if con is None:
        con = _duck_local.con = duckdb.connect()
    tbl = pa.table({"v": arr})  # noqa: F841  (read by DuckDB's replacement scan)
    out = con.sql("select v::varchar as v from tbl").to_arrow_table().column(0)
    return as_binary(combine(out))


def _uuid_from_bytes(arr: pa.Array) -> pa.Array:
    n = len(arr)
    raw = np.frombuffer(arr.buffers()[1], dtype=np.uint8, count=16 * n, offset=16 * arr.offset)
    hexm = HEX2[raw.reshape(n, 16)].reshape(n, 32)
    mat = np.empty((n, 36), dtype=np.uint8)
    mat[:, 0:8] = hexm[:, 0:8]
    mat[:, 9:13] = hexm[:, 8:12]
    mat[:, 14:18] = hexm[:, 12:16]
    mat[:, 19:23] = hexm[:, 16:20]
    mat[:, 24:36] = hexm[:, 20:32]
    mat[:, [8, 13, 18, 23]] = ord("-")
    return from_matrix(mat, None, valid_mask(arr))


def _bytea(arr: pa.Array) -> pa.Array:
    arr = as_binary(arr) if not pa.types.is_fixed_size_binary(arr.type) else arr.cast(B)
    offs, data = binary_parts(arr)
    n = len(arr)
    # Output element i is "\x" + hex: its start moves by 2 per byte and 2 per earlier prefix.
    out_offs = offs * 2 + np.arange(n + 1, dtype=np.int64) * 2
    out = np.empty(int(out_offs[-1]), dtype=np.uint8)
    starts = out_offs[:-1]
    out[starts] = ord("\\")
    out[starts + 1] = ord("x")
    if len(data):
        body = np.ones(len(out), dtype=bool)
        body[starts] = False
        body[starts + 1] = False
        out[body] = HEX2[data].reshape(-1)
    return from_parts(out_offs, out, valid_mask(arr))


def bytea_escape_one(b: bytes) -> bytes:
    """byteaout's escape format: a backslash doubled, a byte outside 0x20..0x7e as ``\\ooo``."""
    out = bytearray()
    for c in b:
        if c == 0x5C:
            out += b"\\\\"
        elif c < 0x20 or c > 0x7E:
            out += b"\\%03o" % c
        else:
            out.append(c)
    return bytes(out)


def bytea_escape_text(arr: pa.Array) -> pa.Array:
    """Every value's byteaout text under ``bytea_output = escape``."""
    arr = as_binary(arr) if not pa.types.is_fixed_size_binary(arr.type) else arr.cast(B)
    return pa.array([None if v is None else bytea_escape_one(v) for v in arr.to_pylist()], B)


# ---------------------------------------------------------------------------- floats


def _pg_float_text(short: str, float4: bool) -> str:
    """Re-lay a shortest round-trip decimal into PostgreSQL's notation (Ryu, d2s.c/f2s.c)."""
    if short in ("nan", "-nan", "NaN"):
        return "NaN"
    if short in ("inf", "Infinity"):
        return "Infinity"
    if short in ("-inf", "-Infinity"):
        return "-Infinity"
    neg = short.startswith("-")
    if neg:
        short = short[1:]
    mant, _, exp_s = short.partition("e")
    exp = int(exp_s) if exp_s else 0
    ip, _, fp = mant.partition(".")
    digits = (ip + fp).lstrip("0")
    if not digits:
        return "-0" if neg else "0"
    # decimal exponent of the first significant digit
    lead_zeros = len(ip + fp) - len((ip + fp).lstrip("0"))
    e10 = len(ip) - 1 - lead_zeros + exp
    digits = digits.rstrip("0")
    sign = "-" if neg else ""
    limit = 6 if float4 else 15
    if -4 <= e10 < limit:
        if e10 >= 0:
            if len(digits) <= e10 + 1:
                return sign + digits + "0" * (e10 + 1 - len(digits))
            return sign + digits[: e10 + 1] + "." + digits[e10 + 1 :]
        return sign + "0." + "0" * (-e10 - 1) + digits
    m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{m}e{'-' if e10 < 0 else '+'}{abs(e10):02d}"


def _shortest_exclusive(v: float, float4: bool) -> str | None:
    """PostgreSQL's shortest digits when they differ from round-half-even shortest.

    PostgreSQL's Ryu never accepts the bounds of the rounding interval, whereas Arrow and
    Python (like Ryu upstream) accept them for even mantissas; so when the shortest decimal
    lies exactly on a midpoint between v and a neighbour, PostgreSQL prints a longer one
    (1e23 -> 9.999999999999999e+22).  Returns a decimal string for _pg_float_text, or None
    when the usual shortest string is already right.
    """
    a = abs(v)
    if float4:
        f = np.float32(a)
        with np.errstate(over="ignore"):
            up = float(np.nextafter(f, np.float32(np.inf)))
        dn = float(np.nextafter(f, np.float32(0)))
    else:
        up = math.nextafter(a, math.inf)
        dn = math.nextafter(a, 0.0)
    va = Fraction(a)
    lo = (va + Fraction(dn)) / 2
    hi = (va + Fraction(up)) / 2 if math.isfinite(up) else va + (va - Fraction(dn)) / 2
    e10 = _decimal_exponent(va)
    # the shortest decimal strictly inside (lo, hi); among equally short ones the closest
    for n in range(1, (9 if float4 else 17) + 1):
        exp = e10 - n + 1
        scale = Fraction(10) ** exp
        q = va / scale
        fl = q.numerator // q.denominator
        best: tuple[Fraction, int] | None = None
        for d in (fl, fl + 1):
            val = d * scale
            if lo < val < hi:
                dist = abs(val - va)
                if best is None or dist < best[0] or (dist == best[0] and d % 2 == 0):
                    best = (dist, d)
        if best is not None:
            return f"{'-' if v < 0 else ''}{best[1]}e{exp}"
    return None


def _decimal_exponent(x: Fraction) -> int:
    """Decimal exponent of the first significant digit of a positive rational."""
    e = len(str(x.numerator)) - len(str(x.denominator))
    while Fraction(10) ** e > x:
        e -= 1
    while Fraction(10) ** (e + 1) <= x:
        e += 1
    return e


def _midpoint_candidates(x: np.ndarray, short: pa.Array, float4: bool) -> np.ndarray:
    """Rows whose shortest string may sit exactly on a rounding-interval bound.

    Such a decimal is a dyadic rational with 54 (25 for float4) significant bits and at most
    17 (9) digits, which bounds the magnitude: 2^52 <= |v| < 2^134 for doubles, |v| >= 2^23
    for floats.  For floats the midpoints are exact in float64, so a parse-and-compare narrows
    the rows further; the survivors are checked exactly, one by one.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        ax = np.abs(x.astype(np.float64))
        if not float4:
            return np.flatnonzero(np.isfinite(ax) & (ax >= 2.0**52) & (ax < 2.0**134))
        cand = np.isfinite(ax) & (ax >= 2.0**23)
        if not cand.any():
            return np.flatnonzero(cand)
        rows = np.flatnonzero(cand)
        f = np.abs(x[rows]).astype(np.float32)
        up = np.nextafter(f, np.float32(np.inf)).astype(np.float64)
        dn = np.nextafter(f, np.float32(0)).astype(np.float64)
        v = f.astype(np.float64)
        s64 = np.abs(np.asarray(pc.cast(short.take(pa.array(rows)), pa.float64())))
        hit = (s64 == (v + up) / 2) | (s64 == (v + dn) / 2) | ~np.isfinite(up)
        return rows[hit]


def pg_float_text(value: float, float4: bool = False, extra_float_digits: int = 1) -> str:
    """One float's PostgreSQL text (float4out/float8out under ``extra_float_digits``)."""
    arr = pa.array([value], pa.float32() if float4 else pa.float64())
    return _float(arr, float4, extra_float_digits)[0].as_py().decode()


def _float_digits_text(v: float, ndig: int) -> str:
    """pg_strfromd's ``%.*g``: C's notation (Python's ``%g`` rounds the exact binary
    value as glibc's printf does), with PostgreSQL's words for NaN and the infinities."""
    if v != v:
        return "NaN"
    if v in (math.inf, -math.inf):
        return "Infinity" if v > 0 else "-Infinity"
    return f"{v:.{ndig}g}"


def _float(arr: pa.Array, float4: bool, extra_float_digits: int = 1) -> pa.Array:
    if float4 and not pa.types.is_float32(arr.type):
        arr = arr.cast(pa.float32())
    elif not float4 and not pa.types.is_float64(arr.type):
        arr = arr.cast(pa.float64())
    if extra_float_digits <= 0:
        # PostgreSQL 12+ prints the shortest exact text only above 0; at 0 and below it
        # prints FLT_DIG (6) or DBL_DIG (15) + extra_float_digits significant digits (≥ 1)
        ndig = max(1, (6 if float4 else 15) + extra_float_digits)
        return pa.array(
            [None if v is None else _float_digits_text(v, ndig).encode() for v in arr.to_pylist()], B
        )
    s = pc.cast(arr, pa.string())
    x = fixed_values(arr, np.float32 if float4 else np.float64)
    valid = valid_mask(arr)
    with np.errstate(invalid="ignore"):
        ax = np.abs(x)
        lo = np.float32(1e-4) if float4 else 1e-4
        hi = np.float32(1e6) if float4 else 1e15
        finite = np.isfinite(x)
        want_sci = finite & (ax != 0) & ((ax < lo) | (ax >= hi))
    offs, data = binary_parts(s)
    has_e = np.zeros(len(arr), dtype=bool)
    e_at = np.flatnonzero(data == ord("e"))
    if len(e_at):
        has_e[np.searchsorted(offs, e_at, side="right") - 1] = True
    # Arrow already writes the shortest digits; only the notation may differ from PostgreSQL's.
    fix = valid & (~finite | (want_sci != has_e))
    sci_ok = valid & want_sci & has_e
    out = s
    if sci_ok.any():
        out = pc.replace_substring_regex(out, r"e([+-])(\d)$", r"e\1" + "0" + r"\2")
    rows = np.flatnonzero(fix)
    repl: dict[int, str] = {}
    if len(rows):
        sub = s.take(pa.array(rows)).to_pylist()
        repl = {int(r): _pg_float_text(v, float4) for r, v in zip(rows, sub, strict=True)}
    mids = _midpoint_candidates(x, s, float4)
    if len(mids):
        vals = x[mids].tolist()
        for r, v in zip(mids.tolist(), vals, strict=True):
            if valid[r]:
                alt = _shortest_exclusive(float(v), float4)
                if alt is not None:
                    repl[r] = _pg_float_text(alt, float4)
    if repl:
        keys = np.array(sorted(repl), dtype=np.int64)
        out = patch(out, keys, [repl[int(k)].encode() for k in keys])
    return as_binary(out)


# --------------------------------------------------------------------------- numeric


def _numeric(arr: pa.Array) -> pa.Array:
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return as_binary(arr)
    if pa.types.is_floating(t):
        return _float(arr, False)
    if pa.types.is_decimal128(t) and t.scale > 0:
        return _decimal128(arr)
    return as_binary(pc.cast(arr, pa.string()))


def _decimal128(arr: pa.Array) -> pa.Array:
    """numeric_out of decimal128 values: Arrow's own cast switches to 1E-10 style for small
    magnitudes, so values that fit int64 are laid out here and the rest fixed one by one."""
    scale = arr.type.scale
    raw = fixed_values(arr, np.dtype([("lo", "<u8"), ("hi", "<i8")]))
    lo, hi = raw["lo"], raw["hi"]
    valid = valid_mask(arr)
    u = lo.view(np.int64)
    fits = (((hi == 0) & (lo < 2**63)) | ((hi == -1) & (lo >= 2**63))) & (u != -(2**63))
    neg = u < 0
    mag = pc.cast(pa.array(np.where(fits, np.abs(u), 0)), pa.string())
    mag = pc.utf8_lpad(mag, scale + 1, "0")
    ip = pc.utf8_slice_codeunits(mag, 0, -scale)
    fp = pc.utf8_slice_codeunits(mag, -scale)
    sign = pc.if_else(pa.array(neg), "-", "")
    out = pc.binary_join_element_wise(sign, ip, ".", fp, "").view(B)
    if not valid.all():
        out = pc.if_else(pa.array(valid), out, pa.scalar(None, B))
    rows = np.flatnonzero(valid & ~fits)
    if len(rows):
        vals = arr.take(pa.array(rows)).to_pylist()
        out = patch(out, rows, [format(v, "f").encode() for v in vals])
    return out


# ------------------------------------------------------------------------- date/time


def _date_days(arr: pa.Array) -> np.ndarray:
    if pa.types.is_date64(arr.type):
        ms = fixed_values(arr, np.int64)
        return np.floor_divide(ms, 86_400_000)
    return fixed_values(arr, np.int32).astype(np.int64)


def _ts_usecs(arr: pa.Array) -> np.ndarray:
    unit = arr.type.unit
    v = fixed_values(arr, np.int64)
    if unit == "us":
        return v
    if unit == "ns":
        # Infinities keep their marker; other values lose nanoseconds as PostgreSQL can't hold them.
        return np.where(np.abs(v) >= cal.INT64_MAX, v, np.floor_divide(v, 1000))
    mult = 1_000_000 if unit == "s" else 1000
    with np.errstate(over="ignore"):
        return np.where(np.abs(v) >= cal.INT64_MAX, v, v * mult)


def _time_usecs(arr: pa.Array) -> np.ndarray:
    t = arr.type
    if pa.types.is_time64(t):
        v = fixed_values(arr, np.int64)
        return v // 1000 if t.unit == "ns" else v
    v = fixed_values(arr, np.int32).astype(np.int64)
    return v * (1_000_000 if t.unit == "s" else 1000)


_Y1 = cal.days(1, 1, 1)
_Y10000 = cal.days(10000, 1, 1)
#: Two ASCII digits of 0..99 as one native uint16, written straight into record fields.
_D16: np.ndarray = np.ascontiguousarray(DIGITS2).view("=u2").reshape(100)


_TAB_FIRST_DAY = cal.days(1900, 1, 1)
_TAB_END_DAY = cal.days(2100, 1, 1)


@functools.cache
def _date_table() -> np.ndarray:
    """'YYYY-MM-DD' of every day of 1900..2099: one gather instead of calendar arithmetic."""
    z = np.arange(_TAB_FIRST_DAY, _TAB_END_DAY, dtype=np.int32)
    buf, rec = _record(len(z), b"0000-00-00", {"y1": 0, "y2": 2, "mo": 5, "d": 8})
    _put_ymd_arith(rec, z)
    return buf.view("V10").reshape(-1)


@functools.cache
def _hms_table() -> np.ndarray:
    """'HH:MM:SS' of every second of a day, plus 24:00:00."""
    sod = np.arange(86401, dtype=np.int32)
    buf = np.empty((len(sod), 8), dtype=np.uint8)
    h = sod // 3600
    mi = (sod // 60) % 60
    buf[:, 0:2] = DIGITS2[h]
    buf[:, 2] = ord(":")
    buf[:, 3:5] = DIGITS2[mi]
    buf[:, 5] = ord(":")
    buf[:, 6:8] = DIGITS2[sod % 60]
    return buf.view("V8").reshape(-1)


_DIG3 = np.frombuffer(b"".join(b"%03d" % i for i in range(1000)), dtype="V3")
#: digits of a 3-digit group left after trimming trailing zeros (0 for 000)
_TRIM3 = np.array([0 if i == 0 else len(f"{i:03d}".rstrip("0")) for i in range(1000)], np.int8)


def _put_ymd_arith(rec: np.ndarray, day: np.ndarray) -> None:
    y, m, d = cal.civil_from_days(day.astype(np.int32))
    rec["y1"] = _D16[y // 100]
    rec["y2"] = _D16[y % 100]
    rec["mo"] = _D16[m]
    rec["d"] = _D16[d]


def _put_date(rec: np.ndarray, day: np.ndarray) -> None:
    """'YYYY-MM-DD' into field ``date`` (V10) for days of years 1..9999."""
    idx = day - _TAB_FIRST_DAY
    inside = (idx >= 0) & (idx < _TAB_END_DAY - _TAB_FIRST_DAY)
    table = _date_table()
    if inside.all():
        rec["date"] = table[idx]
        return
    rec["date"] = table[np.where(inside, idx, 0)]
    out = np.flatnonzero(~inside)
    buf, sub = _record(len(out), b"0000-00-00", {"y1": 0, "y2": 2, "mo": 5, "d": 8})
    _put_ymd_arith(sub, day[out])
    rec["date"][out] = buf.view("V10").reshape(-1)


def _put_hms(rec: np.ndarray, tod: np.ndarray) -> np.ndarray:
    """HH:MM:SS into ``hms`` and six fraction digits into ``f1``/``f2``; returns how many
    fraction digits AppendSeconds keeps (trailing zeros trimmed)."""
    sod = (tod // cal.USECS_PER_SEC).astype(np.int32)
    frac = (tod - sod.astype(np.int64) * cal.USECS_PER_SEC).astype(np.int32)
    hi = frac // 1000
    lo = frac - hi * 1000
    rec["hms"] = _hms_table()[sod]
    rec["f1"] = _DIG3[hi]
    rec["f2"] = _DIG3[lo]
    return np.where(lo != 0, 3 + _TRIM3[lo], _TRIM3[hi])


def _trim_fraction(w: int, dot: int, flen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Byte mask dropping the '.' and fraction digits AppendSeconds trims, and row lengths."""
    kept = flen + (flen > 0)
    keep = np.ones((len(flen), w), dtype=bool)
    keep[:, dot : dot + 7] = np.arange(7, dtype=np.int8)[None, :] < kept[:, None]
    return keep, (w - 7) + kept.astype(np.int64)


def _record(
    n: int, template: bytes, fields: dict[str, int | tuple[str, int]]
) -> tuple[np.ndarray, np.ndarray]:
    """An (n, w) byte matrix initialized to ``template`` and a record view of its fields."""
    w = len(template)
    buf = np.empty((n, w), dtype=np.uint8)
    buf[:] = np.frombuffer(template, dtype=np.uint8)
    names = list(fields)
    fmts = [f[0] if isinstance(f, tuple) else "=u2" for f in fields.values()]
    offs = [f[1] if isinstance(f, tuple) else f for f in fields.values()]
    dt = np.dtype({"names": names, "formats": fmts, "offsets": offs, "itemsize": w})
    return buf, buf.view(dt).reshape(n)


_DATE_FIELDS: dict[str, int | tuple[str, int]] = {"date": ("V10", 0)}
_TIME_FIELDS: dict[str, int | tuple[str, int]] = {
    "hms": ("V8", 0),
    "f1": ("V3", 9),
    "f2": ("V3", 12),
}


def _date(arr: pa.Array) -> pa.Array:
    z = _date_days(arr)
    valid = valid_mask(arr)
    special = valid & ((z < _Y1) | (z >= _Y10000))
    zz = np.where(special | ~valid, 0, z)
    buf, rec = _record(len(z), b"0000-00-00", _DATE_FIELDS)
    _put_date(rec, zz)
    out = from_matrix(buf, None, valid)
    rows = np.flatnonzero(special)
    return patch(out, rows, [cal.format_date(int(z[r])).encode() for r in rows])


def _time(arr: pa.Array) -> pa.Array:
    us = _time_usecs(arr)
    valid = valid_mask(arr)
    special = valid & ((us < 0) | (us > cal.USECS_PER_DAY))
    uu = np.where(special | ~valid, 0, us)
    buf, rec = _record(len(us), b"00:00:00.000000", _TIME_FIELDS)
    flen = _put_hms(rec, uu)
    keep, lengths = _trim_fraction(15, 8, flen)
    out = from_matrix(buf, keep, valid, lengths=lengths)
    rows = np.flatnonzero(special)
    return patch(out, rows, [_time_text(int(us[r])).encode() for r in rows])


def _time_text(us: int) -> str:
    sign = "-" if us < 0 else ""
    return sign + cal.format_time_of_day(abs(us))


@functools.cache
def _date_space_table() -> np.ndarray:
    """'YYYY-MM-DD ' of every day of 1900..2099 as an (n, 11) byte matrix."""
    t = np.empty((_TAB_END_DAY - _TAB_FIRST_DAY, 11), dtype=np.uint8)
    t[:, :10] = _date_table().view(np.uint8).reshape(-1, 10)
    t[:, 10] = ord(" ")
    return t


@functools.cache
def _fraction_tables(tz: bool) -> tuple[pa.Array, pa.Array]:
    """AppendSeconds' fraction (trailing zeros trimmed, no dot for none), then '+00' for
    timestamptz, in two pieces from two small tables: the first is indexed by the
    milliseconds, plus 1000 when microseconds follow (then it is just '.ddd'); the second
    by the microseconds within the millisecond (0: nothing)."""
    suffix = b"+00" if tz else b""
    first = [b"." + (b"%03d" % i).rstrip(b"0") + suffix if i else suffix for i in range(1000)]
    first += [b".%03d" % i for i in range(1000)]
    second = [b""] + [(b"%03d" % i).rstrip(b"0") + suffix for i in range(1, 1000)]
    return pa.array(first, B), pa.array(second, B)


def _timestamp(arr: pa.Array, tz: bool) -> pa.Array:
    """'YYYY-MM-DD HH:MM:SS' from two table gathers into a fixed-width matrix, then the
    trimmed fraction (and '+00') from two small tables, joined in Arrow."""
    us = _ts_usecs(arr)
    valid = valid_mask(arr)
    lo = _Y1 * cal.USECS_PER_DAY
    hi = _Y10000 * cal.USECS_PER_DAY
    special = valid & ((us < lo) | (us >= hi))
    all_valid = bool(valid.all())
    uu = us if all_valid and not special.any() else np.where(special | ~valid, 0, us)
    day = uu // cal.USECS_PER_DAY
    tod = uu - day * cal.USECS_PER_DAY
    sod = tod // cal.USECS_PER_SEC
    frac = (tod - sod * cal.USECS_PER_SEC).astype(np.int32)
    n = len(us)
    mat = np.empty((n, 19), dtype=np.uint8)
    idx = day - _TAB_FIRST_DAY
    inside = (idx >= 0) & (idx < _TAB_END_DAY - _TAB_FIRST_DAY)
    table = _date_space_table()
    if inside.all():
        mat[:, :11] = table[idx]
    else:
        mat[:, :11] = table[np.where(inside, idx, 0)]
        out = np.flatnonzero(~inside)
        buf, sub = _record(len(out), b"0000-00-00", {"y1": 0, "y2": 2, "mo": 5, "d": 8})
        _put_ymd_arith(sub, day[out])
        mat[out, :10] = buf
    mat[:, 11:] = _hms_table().view(np.uint8).reshape(-1, 8)[sod]
    head = from_matrix(mat, None, None if all_valid else valid)
    ms = frac // 1000
    us_ = frac - ms * 1000
    first, second = _fraction_tables(tz)
    if not us_.any():
        out = pc.binary_join_element_wise(head, first.take(pa.array(ms)), _s(b""))
    else:
        tail1 = first.take(pa.array(ms + np.where(us_ != 0, 1000, 0).astype(np.int32)))
        out = pc.binary_join_element_wise(head, tail1, second.take(pa.array(us_)), _s(b""))
    rows = np.flatnonzero(special)
    return patch(out, rows, [cal.format_timestamp(int(us[r]), tz).encode() for r in rows])


# -------------------------------------------------------------------------- interval


def interval_parts(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(months int64, days int64, microseconds int64) of a struct or month_day_nano array."""
    if pa.types.is_interval(arr.type):
        dt = np.dtype([("m", "<i4"), ("d", "<i4"), ("ns", "<i8")])
        raw = fixed_values(arr, dt)
        return raw["m"].astype(np.int64), raw["d"].astype(np.int64), raw["ns"] // 1000
    if pa.types.is_duration(arr.type):
        v = fixed_values(arr, np.int64)
        per = {"s": 1_000_000, "ms": 1000, "us": 1, "ns": 1}[arr.type.unit]
        us = v // 1000 if arr.type.unit == "ns" else v * per
        z = np.zeros(len(arr), dtype=np.int64)
        return z, z.copy(), us
    fields = arr.flatten()
    names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
    cols = dict(zip(names, fields, strict=True))

    def get(name: str) -> np.ndarray:
        c = cols[name]
        return np.asarray(c.fill_null(0), dtype=np.int64)

    return get("months"), get("days"), get("microseconds")


def format_interval(months: int, days: int, us: int) -> str:
    """One interval in IntervalStyle postgres (EncodeInterval, INTSTYLE_POSTGRES)."""
    year = int(months / 12) if months >= 0 else -((-months) // 12)
    mon = months - year * 12
    out: list[str] = []
    is_zero = True
    is_before = False
    for value, unit in ((year, "year"), (mon, "mon"), (days, "day")):
        if value == 0:
            continue
        out.append(
            f"{'' if is_zero else ' '}{'+' if is_before and value > 0 else ''}{value} {unit}"
            f"{'' if value == 1 else 's'}"
        )
        is_before = value < 0
        is_zero = False
    if is_zero or us != 0:
        minus = us < 0
        a = -us if minus else us
        h, rem = divmod(a, cal.USECS_PER_HOUR)
        mi, rem = divmod(rem, cal.USECS_PER_MINUTE)
        s, frac = divmod(rem, cal.USECS_PER_SEC)
        t = f"{'' if is_zero else ' '}{'-' if minus else ('+' if is_before else '')}{h:02d}:{mi:02d}:{s:02d}"
        if frac:
            t += ("." + f"{frac:06d}").rstrip("0")
        out.append(t)
    return "".join(out)


def _interval(arr: pa.Array) -> pa.Array:
    months, days, us = interval_parts(arr)
    valid = valid_mask(arr)
    n = len(months)
    special = valid & (us == cal.INT64_MIN)
    us = np.where(special, 0, us)
    year = np.sign(months) * (np.abs(months) // 12)
    mon = months - year * 12

    def num(v: np.ndarray) -> pa.Array:
        return pc.cast(pa.array(v), pa.string()).view(B)

    def choose(cond: np.ndarray, a: bytes, b: bytes) -> pa.Array:
        return pc.if_else(pa.array(cond), _s(a), _s(b))

    pieces: list[pa.Array | pa.Scalar] = []
    is_zero = np.ones(n, dtype=bool)
    is_before = np.zeros(n, dtype=bool)
    for value, unit in ((year, b"year"), (mon, b"mon"), (days, b"day")):
        nz = value != 0
        if not nz.any():
            continue
        text = pc.binary_join_element_wise(
            choose(is_zero, b"", b" "),
            choose(is_before & (value > 0), b"+", b""),
            num(value),
            _s(b" " + unit),
            choose(value == 1, b"", b"s"),
            _s(b""),
        )
        pieces.append(pc.if_else(pa.array(nz), text, _s(b"")))
        is_before = np.where(nz, value < 0, is_before)
        is_zero &= ~nz
    show_time = is_zero | (us != 0)
    minus = us < 0
    a = np.abs(us)
    h = a // cal.USECS_PER_HOUR
    buf, rec = _record(n, b"00:00:00.000000", _TIME_FIELDS)
    flen = _put_hms(rec, a - h * cal.USECS_PER_HOUR)
    keep, _ = _trim_fraction(15, 8, flen)
    keep[:, 0:2] = False  # the hours field is written separately, unbounded
    minsec = from_matrix(buf, keep, None)
    hours = pc.utf8_lpad(pc.cast(pa.array(h), pa.string()), 2, "0").view(B)
    ttext = pc.binary_join_element_wise(
        choose(is_zero, b"", b" "),
        pc.if_else(pa.array(minus), _s(b"-"), choose(is_before, b"+", b"")),
        hours,
        minsec,
        _s(b""),
    )
    pieces.append(pc.if_else(pa.array(show_time), ttext, _s(b"")))
    out = pc.binary_join_element_wise(*pieces, _s(b"")) if len(pieces) > 1 else pieces[0]
    out = pc.if_else(pa.array(valid), out, pa.nulls(1, B)[0])
    rows = np.flatnonzero(special)
    if len(rows):
        out = patch(
            out,
            rows,
            [format_interval(int(months[r]), int(days[r]), cal.INT64_MIN).encode() for r in rows],
        )
    return out


# ---------------------------------------------------------------------------- arrays

_ARRAY_QUOTE = b'{}," \\\t\n\r\v\f'


def quote_array_elements(vals: pa.Array) -> pa.Array:
    """Quote elements as array_out does: empty, NULL-alike, or holding {},"\\ or whitespace."""
    n = len(vals)
    lengths = np.diff(binary_parts(vals)[0])
    need = np.zeros(n, dtype=bool)
    need[rows_with_bytes(vals, _ARRAY_QUOTE)] = True
    need |= lengths == 0
    four = np.flatnonzero(lengths == 4)
    if len(four):
        sub = pc.ascii_upper(vals.take(pa.array(four)).view(pa.string()))
        need[four[np.asarray(pc.equal(sub, "NULL").fill_null(False))]] = True
    need &= valid_mask(vals)
    if not need.any():
        return vals
    rows = np.flatnonzero(need)
    sub = vals.take(pa.array(rows))
    esc = pc.replace_substring(sub.view(pa.string()), "\\", "\\\\")
    esc = pc.replace_substring(esc, '"', '\\"')
    quoted = pc.binary_join_element_wise(_s(b'"'), esc.view(B), _s(b'"'), _s(b""))
    mask = np.zeros(n, dtype=bool)
    mask[rows] = True
    return pc.replace_with_mask(vals, pa.array(mask), quoted)


def _array(
    arr: pa.Array, elem: ColumnType, extra_float_digits: int = 1, bytea_output: str = "hex", zone: pgtz.Zone | None = None
) -> pa.Array:
    t = arr.type
    if pa.types.is_fixed_size_list(t):
        arr = arr.cast(pa.list_(t.value_type))
        t = arr.type
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        offs = np.asarray(arr.offsets, dtype=np.int64)
    else:
        raise TypeError(f"not a list array: {t}")
    values = arr.values
    vt = values.type
    if pa.types.is_list(vt) or pa.types.is_large_list(vt) or pa.types.is_fixed_size_list(vt):
        enc = _array(values, elem, extra_float_digits, bytea_output, zone)  # a multi-dimensional array: sub-arrays are never quoted
    else:
        enc = quote_array_elements(
            encode_text_arrow(elem, values, extra_float_digits=extra_float_digits, bytea_output=bytea_output, zone=zone)
        )
    enc = enc.fill_null(_s(b"NULL"))
    lists = pa.ListArray.from_arrays(
        pa.array(offs.astype(np.int32)), enc.view(pa.string()), mask=pa.array(~valid_mask(arr))
    )
    joined = pc.binary_join(lists, ",").view(B)
    return pc.binary_join_element_wise(_s(b"{"), joined, _s(b"}"), _s(b""))


# -------------------------------------------------------------------------- dispatch

_DIGITS = b"0123456789"
#: Every byte the text output of a type can contain (None: anything).  COPY uses this to
#: skip scanning columns for delimiters and quotes that cannot occur in them.
OUTPUT_ALPHABET: dict[str, bytes | None] = {
    "bool": b"tf",
    "int2": _DIGITS + b"-",
    "int4": _DIGITS + b"-",
    "int8": _DIGITS + b"-",
    "float4": _DIGITS + b".-+eNaInfity",
    "float8": _DIGITS + b".-+eNaInfity",
    "numeric": _DIGITS + b".-+eNaInfity",
    "date": _DIGITS + b"- BCinfty",
    "time": _DIGITS + b":.-",
    "timestamp": _DIGITS + b"-:. +BCinfty",
    "timestamptz": _DIGITS + b"-:. +BCinfty",
    "interval": _DIGITS + b" -+:.yearsmonday",
    "uuid": _DIGITS + b"abcdef-",
    "bytea": _DIGITS + b"abcdef\\x",
}


def output_alphabet(ctype: ColumnType, arrow_type: pa.DataType) -> bytes | None:
    """The bytes a column's text can contain, or None when anything is possible.

    Text passed through as stored (numeric, json, values of unknown DuckDB types) is not
    vouched for; uuid strings are, as every writer stores the canonical form.
    """
    if ctype.is_array or not (
        ctype.base.name == "uuid"
        or not (pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type))
    ):
        return None
    return OUTPUT_ALPHABET.get(ctype.base.name)


_SCALAR: dict[str, ArrowEncoder] = {
    "bool": _bool,
    "int2": _integer,
    "int4": _integer,
    "int8": _integer,
    "float4": lambda a: _float(a, True),
    "float8": lambda a: _float(a, False),
    "numeric": _numeric,
    "text": _plain_string,
    "anyenum": _plain_string,
    "varchar": _plain_string,
    "name": _plain_string,
    "bpchar": _plain_string,
    "bytea": _bytea,
    "date": _date,
    "time": _time,
    "timestamp": lambda a: _timestamp(a, False),
    "timestamptz": lambda a: _timestamp(a, True),
    "interval": _interval,
    "uuid": _plain_string,
    "json": _plain_string,
    "jsonb": _plain_string,
}


_PASS_THROUGH = frozenset({"text", "varchar", "bpchar", "name", "uuid", "json", "jsonb", "anyenum"})


#: Text of a few values of one column, value by value (see :func:`small_text_encoder`).
SmallEncoder = Callable[[pa.Array], list[bytes | None]]
_I64, _I32 = pa.int64(), pa.int32()


def _small_integer(arr: pa.Array) -> list[bytes | None]:
    return [None if v is None else b"%d" % v for v in arr.to_pylist()]


def _small_string(arr: pa.Array) -> list[bytes | None]:
    return [None if v is None else v.encode() for v in arr.to_pylist()]


def _small_bool(arr: pa.Array) -> list[bytes | None]:
    return [None if v is None else b"t" if v else b"f" for v in arr.to_pylist()]


def _small_timestamp(arr: pa.Array) -> list[bytes | None]:
    return [None if v is None else cal.format_timestamp(v, False).encode() for v in arr.view(_I64).to_pylist()]


def _small_timestamptz(arr: pa.Array) -> list[bytes | None]:
    return [None if v is None else cal.format_timestamp(v, True).encode() for v in arr.view(_I64).to_pylist()]


def _small_date(arr: pa.Array) -> list[bytes | None]:
    return [None if v is None else cal.format_date(v).encode() for v in arr.view(_I32).to_pylist()]


def small_text_encoder(ctype: ColumnType, t: pa.DataType) -> SmallEncoder | None:
    """The value-by-value text output for a column of type ``ctype`` stored as ``t``, or
    None for the types and storage forms it leaves to the Arrow path.

    A vectorised pass has a fixed cost per column however few the rows, which is most of
    the work for a single-row transaction; this path costs far less. Chosen once per column and
    schema (the caller may keep it): for a single-row transaction the type checks cost
    about as much as encoding the value. Only the common forms are taken, each giving
    exactly the bytes the Arrow path gives (tests/property/test_text_small.py)."""
    if ctype.is_array:
        return None
    name = ctype.base.name
    if name in ("int2", "int4", "int8") and pa.types.is_integer(t):
        return _small_integer
    if name in _PASS_THROUGH and pa.types.is_string(t):
        return _small_string
    if name == "bool" and pa.types.is_boolean(t):
        return _small_bool
    if name in ("timestamp", "timestamptz") and pa.types.is_timestamp(t) and t.unit == "us":
        return _small_timestamptz if name == "timestamptz" else _small_timestamp
    if name == "date" and pa.types.is_date32(t):
        return _small_date
    return None


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def encode_text_arrow(
    ctype: ColumnType,
    arr: pa.Array | pa.ChunkedArray,
    *,
    extra_float_digits: int = 1,
    bytea_output: str = "hex",
    zone: pgtz.Zone | None = None,
) -> pa.Array:
    """Text of every element as a binary array (null where the input is null); floats as
    the session's ``extra_float_digits`` has float4out and float8out print them, bytea as
    its ``bytea_output`` (``hex`` or ``escape``) has byteaout print them, timestamptz in
    the session's ``zone`` (None: UTC, as a walsender prints it)."""
    arr = combine(arr)
    if pa.types.is_null(arr.type):
        return _empty_result(len(arr))
    name = ctype.base.name
    if name == "text" and pa.types.is_struct(arr.type) and not ctype.is_array:
        return record_text(arr, extra_float_digits, bytea_output, zone)  # a row value: record_out
    if ctype.is_array or _is_list(arr.type):
        if not _is_list(arr.type):
            raise TypeError(f"{ctype.sql_name()} needs a list array, got {arr.type}")
        return _array(arr, ColumnType(ctype.base, ctype.typmod), extra_float_digits, bytea_output, zone)
    if name == "bool" and not pa.types.is_boolean(arr.type):
        return _integer(arr)
    if name in ("int2", "int4", "int8") and not (
        pa.types.is_integer(arr.type) or pa.types.is_decimal(arr.type)
    ):
        return _plain_string(arr)
    if name == "uuid" and pa.types.is_fixed_size_binary(arr.type):
        return _uuid_from_bytes(arr)
    if name in ("date",) and pa.types.is_timestamp(arr.type):
        arr = arr.cast(pa.timestamp("us")).cast(pa.date32())
    if name in ("timestamp", "timestamptz") and pa.types.is_date(arr.type):
        arr = arr.cast(pa.timestamp("us"))
    if name == "bytea" and bytea_output == "escape":
        return bytea_escape_text(arr)
    if name in ("float4", "float8") and extra_float_digits != 1:
        return _float(arr, name == "float4", extra_float_digits)
    if name == "timestamptz" and zone is not None and not zone.is_utc:
        return _timestamptz_in_zone(arr, zone)
    return _SCALAR[name](arr)


def record_text(
    arr: pa.StructArray, extra_float_digits: int = 1, bytea_output: str = "hex", zone: pgtz.Zone | None = None
) -> pa.Array:
    """record_out of every row of ``arr`` (binary, NULL where the row is NULL); float fields
    as ``extra_float_digits`` has them printed."""
    fields = arr.flatten()  # (the row's NULL is each field's)
    texts = [
        encode_text_arrow(
            field_type(f.type), f, extra_float_digits=extra_float_digits, bytea_output=bytea_output, zone=zone
        ).to_pylist()
        for f in fields
    ]
    valid = arr.is_valid().to_pylist()
    out: list[bytes | None] = []
    for i, ok in enumerate(valid):
        if not ok:
            out.append(None)
            continue
        parts = ["" if col[i] is None else quote_field(col[i].decode()) for col in texts]
        out.append(("(" + ",".join(parts) + ")").encode())
    return pa.array(out, pa.binary())


def _timestamptz_in_zone(arr: pa.Array, zone: pgtz.Zone) -> pa.Array:
    """timestamptz_out in a session zone other than UTC: the wall clock there and the
    offset of that instant (``2020-06-01 04:00:00-04``, ``1883-11-18 12:03:57-04:56:02``)."""
    us = _ts_usecs(arr)
    valid = valid_mask(arr)
    out: list[bytes | None] = []
    for v, ok in zip(us.tolist(), valid.tolist(), strict=True):
        if not ok:
            out.append(None)
        elif v >= cal.TS_POS_INF or v <= cal.TS_NEG_INF:
            out.append(cal.format_timestamp(v, False).encode())
        else:
            off = zone.utc_offset(v)
            out.append(cal.format_timestamp(v + off * cal.USECS_PER_SEC, True, pgtz.encode_offset(off)).encode())
    return pa.array(out, B)
