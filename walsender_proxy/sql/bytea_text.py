"""encode(), decode(), unistr() and bytea's string functions (substring, substr, trim,
btrim, ltrim, rtrim, overlay, get/set_byte, get/set_bit, sha224/384/512, LIKE): PostgreSQL's
encode.c and varlena.c rules, in Python.

DuckDB's ``encode``/``decode`` convert between VARCHAR and BLOB as UTF-8 (PostgreSQL's take a
format name: hex, base64, escape), DuckDB has no ``unistr`` and few BLOB functions. Each call
becomes a call of a ``wpx_str_*`` Arrow UDF doing what PostgreSQL's C code does byte for
byte, with its SQLSTATEs and messages."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from decoding.errors import PgError
from walsender_proxy.sql.udf_errors import keep_errors, strict_rows

PREFIX = "wpx_str_"

_B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_LOOKUP = {c: i for i, c in enumerate(_B64)}
_HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")
_SPACES = frozenset(b" \n\t\r")


def _format(name: str) -> str:
    """pg_find_encoding: the format's name, compared without regard to ASCII case."""
    low = name.translate(str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"))
    if low not in ("hex", "base64", "escape"):
        raise PgError("22023", f'unrecognized encoding: "{name}"')
    return low


def _char_at(data: bytes, i: int) -> str:
    """The character starting at byte ``i`` (pg_mblen's length), as messages quote it."""
    n = 1
    lead = data[i]
    if lead >= 0xF0:
        n = 4
    elif lead >= 0xE0:
        n = 3
    elif lead >= 0xC0:
        n = 2
    return data[i : i + n].decode("utf-8", "replace")


def encode(data: bytes, fmt: str) -> str:
    """binary_encode."""
    kind = _format(fmt)
    if kind == "hex":
        return data.hex()
    if kind == "escape":
        out = []
        for c in data:
            if c == 0 or c >= 0x80:
                out.append(f"\\{c:03o}")
            elif c == 0x5C:
                out.append("\\\\")
            else:
                out.append(chr(c))
        return "".join(out)
    return _b64_encode(data)


def _b64_encode(data: bytes) -> str:
    """pg_base64_encode: a newline after every 76 characters of output (even the last)."""
    out = bytearray()
    line = 0
    for i in range(0, len(data) - len(data) % 3, 3):
        buf = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2]
        out += bytes((_B64[buf >> 18 & 63], _B64[buf >> 12 & 63], _B64[buf >> 6 & 63], _B64[buf & 63]))
        line += 4
        if line >= 76:
            out += b"\n"
            line = 0
    rest = len(data) % 3
    if rest:
        tail = data[len(data) - rest :]
        buf = tail[0] << 16 | (tail[1] << 8 if rest == 2 else 0)
        out += bytes((_B64[buf >> 18 & 63], _B64[buf >> 12 & 63]))
        out += bytes((_B64[buf >> 6 & 63],)) if rest == 2 else b"="
        out += b"="
    return out.decode("ascii")


def decode(text: str, fmt: str) -> bytes:
    """binary_decode."""
    kind = _format(fmt)
    data = text.encode("utf-8")
    if kind == "hex":
        return _hex_decode(data)
    if kind == "escape":
        return _esc_decode(data)
    return _b64_decode(data)


def _hex_decode(data: bytes) -> bytes:
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        if data[i] in _SPACES:
            i += 1
            continue
        if data[i] not in _HEX_DIGITS:
            raise PgError("22023", f'invalid hexadecimal digit: "{_char_at(data, i)}"')
        if i + 1 >= n:
            raise PgError("22023", "invalid hexadecimal data: odd number of digits")
        if data[i + 1] not in _HEX_DIGITS:
            raise PgError("22023", f'invalid hexadecimal digit: "{_char_at(data, i + 1)}"')
        out.append(int(data[i : i + 2], 16))
        i += 2
    return bytes(out)


def _b64_decode(data: bytes) -> bytes:
    """pg_base64_decode, step by step (what follows a ``=`` still counts, as there)."""
    out = bytearray()
    buf = pos = end = 0
    for i, c in enumerate(data):
        if c in _SPACES:
            continue
        if c == 0x3D:  # '='
            if not end:
                if pos == 2:
                    end = 1
                elif pos == 3:
                    end = 2
                else:
                    raise PgError("22023", 'unexpected "=" while decoding base64 sequence')
            b = 0
        else:
            b = _B64_LOOKUP.get(c, -1)
            if b < 0:
                raise PgError("22023", f'invalid symbol "{_char_at(data, i)}" found while decoding base64 sequence')
        buf = ((buf << 6) + b) & 0xFFFFFFFF
        pos += 1
        if pos == 4:
            out.append(buf >> 16 & 255)
            if end == 0 or end > 1:
                out.append(buf >> 8 & 255)
            if end == 0 or end > 2:
                out.append(buf & 255)
            buf = pos = 0
    if pos != 0:
        raise PgError(
            "22023", "invalid base64 end sequence",
            hint="Input data is missing padding, is truncated, or is otherwise corrupted.",
        )  # fmt: skip
    return bytes(out)


def _esc_decode(data: bytes) -> bytes:
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        if data[i] != 0x5C:
            out.append(data[i])
            i += 1
        elif i + 3 < n and 0x30 <= data[i + 1] <= 0x33 and all(0x30 <= d <= 0x37 for d in data[i + 2 : i + 4]):
            out.append(int(data[i + 1 : i + 4], 8))
            i += 4
        elif i + 1 < n and data[i + 1] == 0x5C:
            out.append(0x5C)
            i += 2
        else:
            raise PgError("22P02", "invalid input syntax for type bytea")
    return bytes(out)


_HEX = frozenset("0123456789abcdefABCDEF")


def unistr(s: str) -> str:
    """varlena.c's unistr: ``\\XXXX``, ``\\+XXXXXX``, ``\\uXXXX``, ``\\UXXXXXXXX`` and ``\\\\``."""
    out: list[str] = []
    first = 0
    i, n = 0, len(s)

    def hexes(at: int, k: int) -> int | None:
        part = s[at : at + k]
        return int(part, 16) if len(part) == k and all(ch in _HEX for ch in part) else None

    while i < n:
        if s[i] != "\\":
            if first:
                raise _bad_pair()
            out.append(s[i])
            i += 1
            continue
        if i + 1 < n and s[i + 1] == "\\":
            if first:
                raise _bad_pair()
            out.append("\\")
            i += 2
            continue
        for lead, digits in (("", 4), ("+", 6), ("u", 4), ("U", 8)):
            if lead and (i + 1 >= n or s[i + 1] != lead):
                continue
            code = hexes(i + 1 + len(lead), digits)
            if code is not None:
                i += 1 + len(lead) + digits
                break
        else:
            raise PgError(
                "42601", "invalid Unicode escape", hint="Unicode escapes must be \\XXXX, \\+XXXXXX, \\uXXXX, or \\UXXXXXXXX."
            )
        if code == 0 or code > 0x10FFFF:
            raise PgError("22023", f"invalid Unicode code point: {code:04X}")
        if first:
            if not 0xDC00 <= code <= 0xDFFF:
                raise _bad_pair()
            code = 0x10000 + ((first - 0xD800) << 10) + (code - 0xDC00)
            first = 0
        elif 0xDC00 <= code <= 0xDFFF:
            raise _bad_pair()
        if 0xD800 <= code <= 0xDBFF:
            first = code
        else:
            out.append(chr(code))
    if first:
        raise _bad_pair()
    return "".join(out)


def _bad_pair() -> PgError:
    return PgError("42601", "invalid Unicode surrogate pair")


# ------------------------------------------------------------------------------- bytea


def bytea_substr(data: bytes, start: int, length: int | None = None) -> bytes:
    """bytea_substring: from ``start`` (1-based, may be below 1) for ``length`` bytes."""
    s1 = max(start, 1)
    if length is None:
        return data[s1 - 1 :]
    if length < 0:
        raise PgError("22011", "negative substring length not allowed")
    end = start + length
    return b"" if end < 1 else data[s1 - 1 : max(end - 1, s1 - 1)]


def bytea_substr2(data: bytes, start: int) -> bytes:
    return bytea_substr(data, start)


def bytea_overlay(data: bytes, placing: bytes, start: int, length: int) -> bytes:
    """bytea_overlay: the bytes before ``start``, ``placing``, the bytes from start + length."""
    if not -(2**31) <= start + length < 2**31:
        raise PgError("22003", "integer out of range")
    return bytea_substr(data, 1, start - 1) + placing + bytea_substr(data, start + length)


def bytea_overlay3(data: bytes, placing: bytes, start: int) -> bytes:
    return bytea_overlay(data, placing, start, len(placing))


def bytea_btrim(data: bytes, chars: bytes) -> bytes:
    return data.strip(chars) if chars else data


def bytea_ltrim(data: bytes, chars: bytes) -> bytes:
    return data.lstrip(chars) if chars else data


def bytea_rtrim(data: bytes, chars: bytes) -> bytes:
    return data.rstrip(chars) if chars else data


def _out_of_range(n: int, last: int) -> PgError:
    return PgError("2202E", f"index {n} out of valid range, 0..{last}")


def get_byte(data: bytes, n: int) -> int:
    if not 0 <= n < len(data):
        raise _out_of_range(n, len(data) - 1)
    return data[n]


def set_byte(data: bytes, n: int, value: int) -> bytes:
    if not 0 <= n < len(data):
        raise _out_of_range(n, len(data) - 1)
    return data[:n] + bytes((value & 0xFF,)) + data[n + 1 :]


def get_bit(data: bytes, n: int) -> int:
    if not 0 <= n < len(data) * 8:
        raise _out_of_range(n, len(data) * 8 - 1)
    return (data[n // 8] >> (n % 8)) & 1


def set_bit(data: bytes, n: int, bit: int) -> bytes:
    if not 0 <= n < len(data) * 8:
        raise _out_of_range(n, len(data) * 8 - 1)
    if bit not in (0, 1):
        raise PgError("22023", "new bit must be 0 or 1")
    byte = data[n // 8] & ~(1 << (n % 8)) | (bit << (n % 8))
    return data[: n // 8] + bytes((byte,)) + data[n // 8 + 1 :]


def sha224(data: bytes) -> bytes:
    return hashlib.sha224(data).digest()


def sha384(data: bytes) -> bytes:
    return hashlib.sha384(data).digest()


def sha512(data: bytes) -> bytes:
    return hashlib.sha512(data).digest()


def bytea_like(data: bytes, pattern: bytes, escape: bytes) -> bool:
    """bytealike with ``ESCAPE``: ``%`` any bytes, ``_`` one byte, the escape byte (none when
    empty) taking the next byte literally (like_match.c's MatchBytea)."""
    if len(escape) > 1:
        raise PgError("22019", "invalid escape string", hint="Escape string must be empty or one character.")
    esc = escape[0] if escape else None
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == esc:
            if i + 1 >= len(pattern):
                raise PgError("22025", "LIKE pattern must not end with escape character")
            out.append(re.escape(chr(pattern[i + 1])))
            i += 2
            continue
        out.append(".*" if c == 0x25 else "." if c == 0x5F else re.escape(chr(c)))
        i += 1
    return re.fullmatch("".join(out), data.decode("latin-1"), re.DOTALL) is not None


# -------------------------------------------------------------------------------- text


def _pad_size(s: str, length: int, fill: str) -> int:
    """oracle_compat.c's size checks, on the length the result may take (4 bytes a character)."""
    length = max(length, 0)
    if not fill:
        length = min(len(s), length)
    if 4 * length + 4 > 0x3FFFFFFF:  # (MaxAllocSize)
        raise PgError("54000", "requested length too large")
    return length


def lpad(s: str, length: int, fill: str = " ") -> str:
    """lpad: cut to ``length`` characters, or filled on the left (an empty fill: as is)."""
    length = _pad_size(s, length, fill)
    if len(s) >= length or not fill:
        return s[:length]
    need = length - len(s)
    return (fill * (need // len(fill) + 1))[:need] + s


def lpad2(s: str, length: int) -> str:
    return lpad(s, length)


def rpad(s: str, length: int, fill: str = " ") -> str:
    length = _pad_size(s, length, fill)
    if len(s) >= length or not fill:
        return s[:length]
    need = length - len(s)
    return s + (fill * (need // len(fill) + 1))[:need]


def rpad2(s: str, length: int) -> str:
    return rpad(s, length)


def initcap(s: str) -> str:
    """initcap under the C locale: a letter after an ASCII letter or digit lower-cased, any
    other upper-cased; ASCII letters only have a case."""
    out = []
    after_alnum = False
    for ch in s:
        if ch.isascii():
            out.append(ch.lower() if after_alnum else ch.upper())
            after_alnum = ch.isalnum()
        else:
            out.append(ch)
            after_alnum = False
    return "".join(out)




_DUCK = {"bytea": "BLOB", "text": "VARCHAR", "int4": "INTEGER", "int8": "BIGINT", "bool": "BOOLEAN"}
_ARROW = {"bytea": pa.binary(), "text": pa.string(), "int4": pa.int32(), "bool": pa.bool_()}

#: PostgreSQL's signatures: name → [(parameter types, result type, Python function)].
SIGNATURES: dict[str, list[tuple[tuple[str, ...], str, Callable[..., Any]]]] = {
    "encode": [(("bytea", "text"), "text", encode)],
    "decode": [(("text", "text"), "bytea", decode)],
    "unistr": [(("text",), "text", unistr)],
    "substring": [(("bytea", "int4"), "bytea", bytea_substr2), (("bytea", "int4", "int4"), "bytea", bytea_substr)],
    "substr": [(("bytea", "int4"), "bytea", bytea_substr2), (("bytea", "int4", "int4"), "bytea", bytea_substr)],
    "btrim": [(("bytea", "bytea"), "bytea", bytea_btrim)],
    "ltrim": [(("bytea", "bytea"), "bytea", bytea_ltrim)],
    "rtrim": [(("bytea", "bytea"), "bytea", bytea_rtrim)],
    "overlay": [
        (("bytea", "bytea", "int4"), "bytea", bytea_overlay3), (("bytea", "bytea", "int4", "int4"), "bytea", bytea_overlay),
    ],
    "get_byte": [(("bytea", "int4"), "int4", get_byte)],
    "set_byte": [(("bytea", "int4", "int4"), "bytea", set_byte)],
    "get_bit": [(("bytea", "int8"), "int4", get_bit)],
    "set_bit": [(("bytea", "int8", "int4"), "bytea", set_bit)],
    "sha224": [(("bytea",), "bytea", sha224)],
    "sha384": [(("bytea",), "bytea", sha384)],
    "sha512": [(("bytea",), "bytea", sha512)],
    "lpad": [(("text", "int4"), "text", lpad2), (("text", "int4", "text"), "text", lpad)],
    "rpad": [(("text", "int4"), "text", rpad2), (("text", "int4", "text"), "text", rpad)],
    "initcap": [(("text",), "text", initcap)],
}
#: Names of text functions as well: this module answers them for a bytea first argument.
SHARED = frozenset({"substring", "substr", "btrim", "ltrim", "rtrim", "overlay"})
LIKE_UDF = PREFIX + "bytea_like"


def udf_name(fn: Callable[..., Any]) -> str:
    return PREFIX + fn.__name__


def _udfs() -> dict[str, tuple[Callable[..., Any], list[str], str, pa.DataType]]:
    out = {udf_name(bytea_like): (bytea_like, ["BLOB", "BLOB", "BLOB"], "BOOLEAN", pa.bool_())}
    for sigs in SIGNATURES.values():
        for params, result, fn in sigs:
            out[udf_name(fn)] = (fn, [_DUCK[p] for p in params], _DUCK[result], _ARROW[result])
    return out


def install(con: Any, have: frozenset[str] | set[str] = frozenset()) -> None:
    """Create the UDFs in ``con``'s database (those not in ``have`` already)."""
    for name, (fn, args, ret, arrow) in _udfs().items():
        if name not in have:
            con.create_function(name, keep_errors(strict_rows(fn, arrow, len(args))), args, ret, type="arrow", null_handling="special")
