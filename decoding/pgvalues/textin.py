"""PostgreSQL text input (typinput) into the lake's Arrow types, for whole columns.

Each decoder has a vectorized path for the text PostgreSQL itself prints (what COPY data,
pg_dump output and most drivers send) and a per-value reference parser that implements the
type's input function for everything else.  A row goes to the reference parser when the fast
path cannot vouch for it; when the fast path fails outright, every row does, so the error
raised is always the one for the first bad row, with PostgreSQL's SQLSTATE and wording.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoding.errors import PgError
from decoding.pgtypes import ColumnType
from decoding.pgvalues import _calendar as cal
from decoding.pgvalues import _dtin
from decoding.pgvalues._arrow import (
    binary_parts,
    byte_mask,
    combine,
    from_parts,
    sorted_unique,
    valid_mask,
)
from decoding.pgvalues._utf8 import first_invalid, invalid_utf8_error

B = pa.binary()
_WS = " \t\n\r\v\f"


class InputError(PgError):
    """A value that failed its type's input function; ``index`` is its position."""

    def __init__(self, err: PgError, index: int) -> None:
        super().__init__(err.sqlstate, err.message, detail=err.detail, hint=err.hint)
        self.index = index
        self.where: str | None = getattr(err, "where", None)


class _FastFail(Exception):
    """The vectorized path cannot decide; fall back to per-value parsing."""


# ============================================================== per-value reference parsers

_INT_NAMES = {16: "smallint", 32: "integer", 64: "bigint"}


def int_in(s: str, bits: int) -> int:
    """pg_strtoint16/32/64 (PostgreSQL 15: decimal only, ASCII whitespace around)."""
    name = _INT_NAMES[bits]
    i, n = 0, len(s)
    while i < n and s[i] in _WS:
        i += 1
    neg = False
    if i < n and s[i] in "+-":
        neg = s[i] == "-"
        i += 1
    j = i
    while j < n and "0" <= s[j] <= "9":
        j += 1
    if j == i:
        raise PgError("22P02", f'invalid input syntax for type {name}: "{s}"')
    v = int(s[i:j])
    if neg:
        v = -v
    if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
        raise PgError("22003", f'value "{s}" is out of range for type {name}')
    while j < n and s[j] in _WS:
        j += 1
    if j != n:
        raise PgError("22P02", f'invalid input syntax for type {name}: "{s}"')
    return v


_DEC_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEX_FLOAT = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
)
_SPECIAL_FLOAT = re.compile(r"[+-]?(?:infinity|inf|nan)", re.IGNORECASE)


def _to_float32(text: str) -> float:
    """Correctly rounded decimal -> binary32 (as strtof), via Arrow's parser."""
    return float(pa.array([text]).cast(pa.float32())[0].as_py())


def float_in(s: str, float4: bool) -> float:
    """float8in / float4in: strtod/strtof syntax, NaN/Infinity, range errors."""
    name = "real" if float4 else "double precision"
    i, n = 0, len(s)
    while i < n and s[i] in _WS:
        i += 1
    if i == n:
        raise PgError("22P02", f'invalid input syntax for type {name}: "{s}"')
    num = s[i:]
    m = _HEX_FLOAT.match(num)
    if m and len(m.group()) > 2 + (num[0] in "+-"):
        text = m.group()
        v = float.fromhex(text)
        if float4:
            v = float(np.float32(v))
    else:
        m = _SPECIAL_FLOAT.match(num)
        if m:
            text = m.group()
            low = text.lstrip("+-").lower()
            if low == "nan":
                v = float("nan")
            else:
                v = float("-inf") if text.startswith("-") else float("inf")
        else:
            m = _DEC_FLOAT.match(num)
            if not m:
                raise PgError("22P02", f'invalid input syntax for type {name}: "{s}"')
            text = m.group()
            v = _to_float32(text) if float4 else float(text)
            mant = text.lower().split("e")[0]
            if v in (float("inf"), float("-inf")) or (v == 0.0 and re.search("[1-9]", mant)):
                raise PgError("22003", f'"{text}" is out of range for type {name}')
    rest = num[len(text) :]
    if rest.strip(_WS) != "" or (rest and rest[0] not in _WS):
        raise PgError("22P02", f'invalid input syntax for type {name}: "{s}"')
    return v


def bool_in(s: str) -> bool:
    """boolin / parse_bool_with_len."""
    t = s.strip(_WS)
    low = t.lower()
    n = len(low)
    if n:
        c = low[0]
        if c == "t" and "true".startswith(low):
            return True
        if c == "f" and "false".startswith(low):
            return False
        if c == "y" and "yes".startswith(low):
            return True
        if c == "n" and "no".startswith(low):
            return False
        if c == "o":
            if low == "on":
                return True
            if n >= 2 and "off".startswith(low):
                return False
        if low == "1":
            return True
        if low == "0":
            return False
    raise PgError("22P02", f'invalid input syntax for type boolean: "{s}"')


# ---------------------------------------------------------------------------- numeric

NUMERIC_MAX_DSCALE = 16383
NUMERIC_MAX_INT_DIGITS = 131072


class Num:
    """A parsed numeric: special ('nan', 'inf', '-inf') or sign, digits and scale.

    Digits are kept as a string: numerics reach 131072 integer digits, beyond what Python
    converts between int and str by default.  Value = int(digits) * 10^-scale.
    """

    __slots__ = ("digits", "neg", "scale", "special")

    def __init__(self, special: str | None, neg: bool = False, digits: str = "0", scale: int = 0):
        self.special = special
        self.digits = digits.lstrip("0") or "0"
        self.neg = neg and self.digits != "0"
        self.scale = scale

    @property
    def is_zero(self) -> bool:
        return self.digits == "0"

    def int_digits(self) -> int:
        """Digits before the decimal point (0 for values below 1)."""
        return max(len(self.digits) - self.scale, 0) if not self.is_zero else 0

    def decimal(self) -> Decimal:
        """Exact Decimal (arithmetic would round to the context's 28 digits)."""
        return Decimal((1 if self.neg else 0, tuple(int(c) for c in self.digits), -self.scale))

    def text(self) -> str:
        """numeric_out."""
        if self.special == "nan":
            return "NaN"
        if self.special == "inf":
            return "Infinity"
        if self.special == "-inf":
            return "-Infinity"
        ds = self.digits
        if self.scale:
            ds = ds.rjust(self.scale + 1, "0")
            body = ds[: -self.scale] + "." + ds[-self.scale :]
        else:
            body = ds
        return ("-" if self.neg and not self.is_zero else "") + body


def _increment(digits: str) -> str:
    """Decimal string + 1 without int conversion (digit strings can be very long)."""
    stripped = digits.rstrip("9")
    nines = len(digits) - len(stripped)
    if not stripped:
        return "1" + "0" * nines
    return stripped[:-1] + str(int(stripped[-1]) + 1) + "0" * nines


def numeric_parse(s: str) -> Num:
    """numeric_in without typmod."""
    bad = PgError("22P02", f'invalid input syntax for type numeric: "{s}"')
    i, n = 0, len(s)
    while i < n and s[i] in _WS:
        i += 1
    numstart = i
    neg = False
    if i < n and s[i] == "+":
        i += 1
    elif i < n and s[i] == "-":
        neg = True
        i += 1
    if i >= n or not ("0" <= s[i] <= "9" or s[i] == "."):
        low = s[numstart:].lower()
        if low.startswith("nan"):
            res, end = Num("nan"), numstart + 3
        else:
            low2 = s[i:].lower()
            if low2.startswith("infinity"):
                end = i + 8
            elif low2.startswith("inf"):
                end = i + 3
            else:
                raise bad
            res = Num("-inf" if neg else "inf")
        if s[end:].strip(_WS):
            raise bad
        return res
    have_dp = False
    if s[i] == ".":
        have_dp = True
        i += 1
    if i >= n or not ("0" <= s[i] <= "9"):
        raise bad
    digits: list[str] = []
    frac = 0
    while i < n:
        c = s[i]
        if "0" <= c <= "9":
            digits.append(c)
            if have_dp:
                frac += 1
            i += 1
        elif c == ".":
            if have_dp:
                raise bad
            have_dp = True
            i += 1
        else:
            break
    exponent = 0
    if i < n and s[i] in "eE":
        i += 1
        j = i
        while j < n and s[j] in _WS:
            j += 1
        k = j
        if k < n and s[k] in "+-":
            k += 1
        q = k
        while q < n and "0" <= s[q] <= "9":
            q += 1
        if q == k:
            raise bad
        exponent = int(s[j:q]) if q - k < 20 else (2**31 if s[k - 1 : k] != "-" else -(2**31))
        i = q
        if exponent >= 2**31 // 2 or exponent <= -(2**31 // 2):
            raise PgError("22003", "value overflows numeric format")
    if s[i:].strip(_WS):
        raise bad
    mag = "".join(digits).lstrip("0") or "0"
    scale = frac - exponent
    if mag != "0" and len(mag) - scale > NUMERIC_MAX_INT_DIGITS:
        raise PgError("22003", "value overflows numeric format")
    if scale < 0:
        if mag != "0":
            mag = mag + "0" * (-scale)
        scale = 0
    if scale > NUMERIC_MAX_DSCALE:
        raise PgError("22003", "value overflows numeric format")
    return Num(None, neg and mag != "0", mag, scale)


def numeric_round(num: Num, scale: int) -> Num:
    """round_var: half away from zero to ``scale`` digits (scale may exceed the current one)."""
    if num.special:
        return num
    if scale >= num.scale:
        d = num.digits + "0" * (scale - num.scale) if not num.is_zero else "0"
        return Num(None, num.neg, d, scale)
    cut = num.scale - scale
    padded = num.digits.rjust(cut + 1, "0")
    keep, first_dropped = padded[:-cut], padded[-cut]
    if first_dropped >= "5":
        keep = _increment(keep)
    r = Num(None, num.neg, keep, scale)
    r.neg = num.neg and not r.is_zero
    return r


def numeric_typmod(num: Num, precision: int, scale: int) -> Num:
    """apply_typmod / apply_typmod_special."""
    if num.special == "nan":
        return num
    if num.special:
        raise PgError(
            "22003",
            "numeric field overflow",
            detail=f"A field with precision {precision}, scale {scale} cannot hold an infinite value.",
        )
    r = numeric_round(num, scale)
    maxdigits = precision - scale
    if r.int_digits() > maxdigits:
        lim = f"10^{maxdigits}" if maxdigits else "1"
        raise PgError(
            "22003",
            "numeric field overflow",
            detail=f"A field with precision {precision}, scale {scale} must round to an absolute value less than {lim}.",
        )
    return r


def numeric_text_in(s: str, typmod: tuple[int, int] | None) -> str:
    num = numeric_parse(s)
    if typmod is not None:
        num = numeric_typmod(num, *typmod)
    return num.text()


def numeric_decimal_in(s: str, precision: int, scale: int) -> Decimal:
    num = numeric_typmod(numeric_parse(s), precision, scale)
    if num.special:
        raise PgError(
            "0A000",
            f"NaN cannot be stored in a numeric({precision},{scale}) column of the lake",
            detail="The lake keeps numeric(p,s) with p <= 38 as decimal128, which has no NaN.",
        )
    return num.decimal()


# ------------------------------------------------------------------------ strings/bytea


def _char_len(s: str) -> int:
    return len(s)


def varchar_in(s: str, maxlen: int, bpchar: bool) -> str:
    """varchar_input / bpchar_input length rules (explicit typmod)."""
    n = _char_len(s)
    if n > maxlen:
        if s[maxlen:].strip(" ") != "":
            name = "character" if bpchar else "character varying"
            raise PgError("22001", f"value too long for type {name}({maxlen})")
        s = s[:maxlen]
        n = maxlen
    if bpchar and n < maxlen:
        s = s + " " * (maxlen - n)
    return s


_HEXDIG = {c: int(c, 16) for c in "0123456789abcdefABCDEF"}


def bytea_in(s: str) -> bytes:
    """byteain: hex format or escape format."""
    if s.startswith("\\x"):
        out = bytearray()
        i, n = 2, len(s)
        while i < n:
            c = s[i]
            if c in " \n\t\r":
                i += 1
                continue
            if c not in _HEXDIG:
                raise PgError("22023", f'invalid hexadecimal digit: "{c}"')
            i += 1
            if i >= n:
                raise PgError("22023", "invalid hexadecimal data: odd number of digits")
            c2 = s[i]
            if c2 not in _HEXDIG:
                raise PgError("22023", f'invalid hexadecimal digit: "{c2}"')
            out.append(_HEXDIG[c] * 16 + _HEXDIG[c2])
            i += 1
        return bytes(out)
    raw = s.encode("utf-8")
    out = bytearray()
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c != 0x5C:
            out.append(c)
            i += 1
            continue
        if (
            i + 3 < n
            and 0x30 <= raw[i + 1] <= 0x33
            and 0x30 <= raw[i + 2] <= 0x37
            and 0x30 <= raw[i + 3] <= 0x37
        ):
            out.append((raw[i + 1] - 0x30) * 64 + (raw[i + 2] - 0x30) * 8 + (raw[i + 3] - 0x30))
            i += 4
        elif i + 1 < n and raw[i + 1] == 0x5C:
            out.append(0x5C)
            i += 2
        else:
            raise PgError("22P02", "invalid input syntax for type bytea")
    return bytes(out)


def uuid_in(s: str) -> str:
    """string_to_uuid: optional braces, hyphens after any group of four digits."""
    bad = PgError("22P02", f'invalid input syntax for type uuid: "{s}"')
    i = 0
    braces = s.startswith("{")
    if braces:
        i = 1
    hexs: list[str] = []
    for k in range(16):
        a, b = s[i : i + 1], s[i + 1 : i + 2]
        if not a or not b or a not in _HEXDIG or b not in _HEXDIG:
            raise bad
        hexs.append((a + b).lower())
        i += 2
        if i < len(s) and s[i] == "-" and k % 2 == 1 and k < 15:
            i += 1
    if braces:
        if i >= len(s) or s[i] != "}":
            raise bad
        i += 1
    if i != len(s):
        raise bad
    h = "".join(hexs)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


# ------------------------------------------------------------------------------ json


def _reject_constant(name: str) -> Any:
    raise ValueError(f'Token "{name}" is invalid.')


def json_in(s: str) -> str:
    """json_in: validate, keep the text as given."""
    try:
        json.loads(s, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        raise json_error(s, jsonb=False) from None
    return s


# PostgreSQL's JSON lexer and parser (src/common/jsonapi.c), run only to word an error:
# valid input takes Python's json module; invalid input gets the error PostgreSQL reports
# first in text order, with its DETAIL.

_JSON_WS = " \t\n\r"
_JSON_HEX = "0123456789abcdefABCDEF"


class _JsonFail(Exception):
    def __init__(self, err: PgError) -> None:
        self.err = err


def _json_alnum(c: str) -> bool:
    return "a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9" or c == "_" or ord(c) >= 0x80


def _json_syntax(detail: str) -> _JsonFail:
    return _JsonFail(PgError("22P02", "invalid input syntax for type json", detail=detail))


class _JsonLexer:
    """json_lex over a str (one character stands for one multibyte character)."""

    def __init__(self, s: str, need_escapes: bool) -> None:
        self.s = s
        self.n = len(s)
        self.need_escapes = need_escapes
        self.pos = 0
        self.kind = ""  # the current token: "{", "}", "[", "]", ",", ":", "s", "n", "w", "end"
        self.start = 0
        self.stop = 0

    def token(self) -> str:
        return self.s[self.start : self.stop]

    def invalid(self, start: int, stop: int) -> _JsonFail:
        return _json_syntax(f'Token "{self.s[start:stop]}" is invalid.')

    def next(self) -> None:
        s, n, i = self.s, self.n, self.pos
        while i < n and s[i] in _JSON_WS:
            i += 1
        self.start = i
        if i >= n:
            self.kind, self.stop = "end", i
            return
        c = s[i]
        if c in "{}[],:":
            self.kind, self.stop = c, i + 1
        elif c == '"':
            self.stop = self._string(i)
            self.kind = "s"
        elif c == "-" or "0" <= c <= "9":
            self.stop = self._number(i + 1 if c == "-" else i, i)
            self.kind = "n"
        else:
            j = i
            while j < n and _json_alnum(s[j]):
                j += 1
            if j == i:
                raise self.invalid(i, i + 1)
            if s[i:j] not in ("true", "false", "null"):
                raise self.invalid(i, j)
            self.kind, self.stop = "w", j
        self.pos = self.stop

    def _number(self, i: int, start: int) -> int:
        s, n = self.s, self.n
        error = False
        if i < n and s[i] == "0":
            i += 1
        elif i < n and "1" <= s[i] <= "9":
            while i < n and "0" <= s[i] <= "9":
                i += 1
        else:
            error = True
        if i < n and s[i] == ".":
            i, ok = self._digits(i + 1)
            error |= not ok
        if i < n and s[i] in "eE":
            i += 1
            if i < n and s[i] in "+-":
                i += 1
            i, ok = self._digits(i)
            error |= not ok
        while i < n and _json_alnum(s[i]):
            i += 1
            error = True
        if error:
            raise self.invalid(start, i)
        return i

    def _digits(self, i: int) -> tuple[int, bool]:
        """Past a run of digits at ``i``; False when there is none."""
        s, n, j = self.s, self.n, i
        while j < n and "0" <= s[j] <= "9":
            j += 1
        return j, j > i

    def _string(self, start: int) -> int:
        s, n = self.s, self.n
        i = start
        hi = -1
        low_missing = _json_syntax("Unicode low surrogate must follow a high surrogate.")
        while True:
            i += 1
            if i >= n:
                raise self.invalid(start, i)
            c = s[i]
            if c == '"':
                break
            if ord(c) < 32:
                raise _json_syntax(f"Character with value 0x{ord(c):02x} must be escaped.")
            if c == "\\":
                i += 1
                if i >= n:
                    raise self.invalid(start, i)
                if s[i] == "u":
                    ch = 0
                    for _ in range(4):
                        i += 1
                        if i >= n:
                            raise self.invalid(start, i)
                        if s[i] not in _JSON_HEX:
                            raise _json_syntax('"\\u" must be followed by four hexadecimal digits.')
                        ch = ch * 16 + int(s[i], 16)
                    if self.need_escapes:
                        if 0xD800 <= ch <= 0xDBFF:
                            if hi != -1:
                                raise _json_syntax("Unicode high surrogate must not follow a high surrogate.")
                            hi = ch
                            continue
                        if 0xDC00 <= ch <= 0xDFFF:
                            if hi == -1:
                                raise low_missing
                            hi = -1
                        elif hi != -1:
                            raise low_missing
                        elif ch == 0:
                            raise _JsonFail(
                                PgError(
                                    "22P05",
                                    "unsupported Unicode escape sequence",
                                    detail="\\u0000 cannot be converted to text.",
                                )
                            )
                elif self.need_escapes and hi != -1:
                    raise low_missing
                elif s[i] not in '"\\/bfnrt':
                    raise _json_syntax(f'Escape sequence "\\{s[i]}" is invalid.')
            elif self.need_escapes and hi != -1:
                raise low_missing
        if hi != -1:
            raise low_missing
        return i + 1


_PARSE_ERRORS = {
    "end": 'Expected end of input, but found "{}".',
    "value": 'Expected JSON value, but found "{}".',
    "string": 'Expected string, but found "{}".',
    "array_next": 'Expected "," or "]", but found "{}".',
    "object_start": 'Expected string or "}}", but found "{}".',
    "label": 'Expected ":", but found "{}".',
    "object_next": 'Expected "," or "}}", but found "{}".',
}


def _parse_error(lex: _JsonLexer, ctx: str) -> _JsonFail:
    if lex.kind == "end":
        return _json_syntax("The input string ended unexpectedly.")
    return _json_syntax(_PARSE_ERRORS[ctx].format(lex.token()))


def _json_members(lex: _JsonLexer, item: Callable[[_JsonLexer], None], close: str, next_ctx: str) -> None:
    """parse_object / parse_array: items separated by commas up to ``close``."""
    lex.next()
    if lex.kind != close:
        if close == "}" and lex.kind != "s":
            raise _parse_error(lex, "object_start")
        item(lex)
        while lex.kind == ",":
            lex.next()
            item(lex)
    if lex.kind != close:
        raise _parse_error(lex, next_ctx)
    lex.next()


def _json_value(lex: _JsonLexer) -> None:
    if lex.kind == "{":
        _json_members(lex, _json_field, "}", "object_next")
    elif lex.kind == "[":
        _json_members(lex, _json_value, "]", "array_next")
    elif lex.kind in ("s", "n", "w"):
        lex.next()
    else:
        raise _parse_error(lex, "value")


def _json_field(lex: _JsonLexer) -> None:
    if lex.kind != "s":
        raise _parse_error(lex, "string")
    lex.next()
    if lex.kind != ":":
        raise _parse_error(lex, "label")
    lex.next()
    _json_value(lex)


def json_error(s: str, jsonb: bool) -> PgError:
    """The error PostgreSQL's json_in (``jsonb``: jsonb_in, which also de-escapes strings,
    refusing lone surrogates and \\u0000) reports for ``s``."""
    lex = _JsonLexer(s, need_escapes=jsonb)
    try:
        lex.next()
        _json_value(lex)
        if lex.kind != "end":
            raise _parse_error(lex, "end")
    except _JsonFail as e:
        return e.err
    except RecursionError:
        return PgError("54001", "stack depth limit exceeded")
    return PgError("22P02", "invalid input syntax for type json")


def _escape_json(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20:
            out.append(
                {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(
                    ch, f"\\u{o:04x}"
                )
            )
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


class _JNum(str):
    """A JSON number already in numeric_out form."""


class _NotText(Exception):
    """A jsonb string PostgreSQL cannot de-escape (NUL, a lone surrogate)."""


def _check_jsonb_string(s: str) -> str:
    for ch in s:
        o = ord(ch)
        if o == 0 or 0xD800 <= o <= 0xDFFF:
            raise _NotText
    return s


def _jsonb_out(v: Any) -> str:
    if isinstance(v, _JNum):
        return str(v)
    if isinstance(v, str):
        return _escape_json(_check_jsonb_string(v))
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, list) and (not v or not isinstance(v[0], _Pair)):
        return "[" + ", ".join(_jsonb_out(x) for x in v) + "]"
    if isinstance(v, _Obj):
        items: dict[bytes, tuple[str, Any]] = {}
        for k, val in v.pairs:
            _check_jsonb_string(k)
            items[k.encode("utf-8", "surrogatepass")] = (k, val)  # last duplicate wins
        keys = sorted(items, key=lambda kb: (len(kb), kb))
        return (
            "{"
            + ", ".join(f"{_escape_json(items[kb][0])}: {_jsonb_out(items[kb][1])}" for kb in keys)
            + "}"
        )
    raise TypeError(type(v))


class _Pair(tuple):
    pass


class _Obj:
    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs


def _jnum(text: str) -> _JNum:
    return _JNum(numeric_parse(text).text())


def _jsonb_load(s: str) -> Any:
    return json.loads(s, object_pairs_hook=_Obj, parse_float=_jnum, parse_int=_jnum, parse_constant=_reject_constant)


def jsonb_in(s: str) -> str:
    """jsonb_in: parse, then print as jsonb_out does (sorted unique keys, ', ' and ': ')."""
    try:
        return _jsonb_out(_jsonb_load(s))
    except (ValueError, RecursionError, _NotText):
        raise json_error(s, jsonb=True) from None


def jsonb_concat(a: str, b: str) -> str:
    """jsonb ``||`` of two jsonb texts (PostgreSQL's jsonb_concat): two objects merge, the
    right one's keys winning; anything else concatenates as arrays, an object or a scalar
    counting as a one-element array."""
    left, right = _jsonb_load(a), _jsonb_load(b)
    if isinstance(left, _Obj) and isinstance(right, _Obj):
        return _jsonb_out(_Obj(left.pairs + right.pairs))

    def elements(v: Any) -> list[Any]:
        return v if isinstance(v, list) and (not v or not isinstance(v[0], _Pair)) else [v]

    return _jsonb_out(elements(left) + elements(right))


# ---------------------------------------------------------------------------- arrays


def _malformed(s: str, detail: str) -> PgError:
    return PgError("22P02", f'malformed array literal: "{s}"', detail=detail)


def array_in_elements(s: str) -> list[str | None]:
    """array_in's parser (ArrayCount + ReadArrayStr) for one-dimensional arrays.

    Dimension decorations are accepted when the lower bound is 1 ("[1:2]={...}").
    """
    n = len(s)
    i = 0
    while i < n and s[i] in _WS:
        i += 1
    dims_given: list[tuple[int, int]] = []
    if i < n and s[i] == "[":
        while i < n and s[i] == "[":
            m = re.match(r"\[\s*([+-]?\d+)\s*(?::\s*([+-]?\d+)\s*)?\]", s[i:])
            if not m:
                raise _malformed(s, 'Missing "]" after array dimensions.')
            lo, hi = (int(m.group(1)), int(m.group(2))) if m.group(2) else (1, int(m.group(1)))
            if hi < lo:
                raise PgError("2202E", "upper bound cannot be less than lower bound")
            dims_given.append((lo, hi))
            i += m.end()
            while i < n and s[i] in _WS:
                i += 1
        if not s.startswith("=", i):
            raise _malformed(s, 'Missing "=" after array dimensions.')
        i += 1
        while i < n and s[i] in _WS:
            i += 1
    if i >= n or s[i] != "{":
        raise _malformed(s, 'Array value must start with "{" or dimension information.')
    i += 1
    elems: list[str | None] = []
    depth = 1
    expect_elem = True
    saw_any = False
    while True:
        while i < n and s[i] in _WS:
            i += 1
        if i >= n:
            raise _malformed(s, "Unexpected end of input.")
        c = s[i]
        if c == "{":
            raise PgError("0A000", "multidimensional arrays are not supported by the lake")
        if c == "}":
            if expect_elem and saw_any:
                raise _malformed(s, 'Unexpected "}" character.')
            i += 1
            depth -= 1
            break
        if c == ",":
            if expect_elem:
                raise _malformed(s, 'Unexpected "," character.')
            expect_elem = True
            i += 1
            continue
        if not expect_elem:
            raise _malformed(s, "Unexpected array element.")
        saw_any = True
        expect_elem = False
        if c == '"':
            i += 1
            buf: list[str] = []
            while True:
                if i >= n:
                    raise _malformed(s, "Unexpected end of input.")
                ch = s[i]
                if ch == "\\":
                    if i + 1 >= n:
                        raise _malformed(s, "Unexpected end of input.")
                    buf.append(s[i + 1])
                    i += 2
                elif ch == '"':
                    i += 1
                    break
                else:
                    buf.append(ch)
                    i += 1
            # only whitespace may follow a quoted element
            while i < n and s[i] in _WS:
                i += 1
            if i < n and s[i] not in ",}":
                what = 'Unexpected "{" character.' if s[i] == "{" else "Unexpected array element."
                raise _malformed(s, what)
            elems.append("".join(buf))
        else:
            buf = []
            last_nonspace = 0
            escaped_any = False
            while i < n and s[i] not in ",}":
                ch = s[i]
                if ch == "\\":
                    if i + 1 >= n:
                        raise _malformed(s, "Unexpected end of input.")
                    buf.append(s[i + 1])
                    escaped_any = True
                    last_nonspace = len(buf)
                    i += 2
                    continue
                if ch == '"':  # a quote inside an unquoted element (ArrayCount)
                    raise _malformed(s, "Unexpected array element.")
                if ch == "{":
                    raise _malformed(s, 'Unexpected "{" character.')
                buf.append(ch)
                if ch not in _WS:
                    last_nonspace = len(buf)
                i += 1
            val = "".join(buf[:last_nonspace])
            if not escaped_any and val.lower() == "null":
                elems.append(None)
            else:
                elems.append(val)
    while i < n and s[i] in _WS:
        i += 1
    if i != n:
        raise _malformed(s, "Junk after closing right brace.")
    if dims_given:
        if len(dims_given) != 1 or dims_given[0][1] - dims_given[0][0] + 1 != len(elems):
            raise _malformed(s, "Specified array dimensions do not match array contents.")
        if dims_given[0][0] != 1:
            raise _LBOUND_ERROR
    return elems


#: The lake's arrays are Arrow lists: lower bound 1, one dimension.
_LBOUND_ERROR = PgError("0A000", "array lower bounds other than 1 are not supported by the lake")


# ============================================================== vectorized column decoding


def _strings(values: pa.Array | Sequence[bytes | str | None]) -> pa.Array:
    """Input as a validated Arrow string array (PostgreSQL rejects bad UTF-8 and NUL)."""
    if isinstance(values, pa.ChunkedArray | pa.Array):
        arr = combine(values)
    else:
        vals = list(values)
        if any(isinstance(v, str) for v in vals):
            vals = [v.encode("utf-8", "surrogatepass") if isinstance(v, str) else v for v in vals]
        arr = pa.array(vals, B)
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        arr = arr.view(B if pa.types.is_string(arr.type) else pa.large_binary())
    if pa.types.is_large_binary(arr.type):
        arr = arr.cast(B)
    _, data = binary_parts(arr)
    if not (data == 0).any():
        try:
            return arr.cast(pa.string())  # Arrow validates UTF-8 on the way
        except pa.ArrowInvalid:
            pass
    # find the first bad element, as PostgreSQL verifies values in order
    for idx, v in enumerate(arr.to_pylist()):
        if v is None:
            continue
        pos = first_invalid(v)
        if pos is not None:
            raise InputError(invalid_utf8_error(v, pos), idx)
    raise AssertionError("unreachable")


def _other_byte_rows(arr: pa.Array, allowed: bytes) -> np.ndarray:
    offs, data = binary_parts(arr)
    if len(data) == 0:
        return np.zeros(0, dtype=np.int64)
    bad = np.flatnonzero(~byte_mask(data, allowed))
    if len(bad) == 0:
        return bad
    return sorted_unique(np.searchsorted(offs, bad, side="right") - 1)


def _per_value(s: pa.Array, rows: np.ndarray, fn: Callable[[str], Any]) -> list[Any]:
    out = []
    sub = s.take(pa.array(rows, pa.int64())).to_pylist() if len(rows) != len(s) else s.to_pylist()
    for r, v in zip(rows.tolist(), sub, strict=True):
        if v is None:
            out.append(None)
            continue
        try:
            out.append(fn(v))
        except PgError as e:
            raise InputError(e, r) from None
    return out


def _hybrid(
    s: pa.Array,
    out_type: pa.DataType,
    slow_fn: Callable[[str], Any],
    fast_fn: Callable[[pa.Array], pa.Array] | None = None,
    slow_rows: np.ndarray | None = None,
    placeholder: str = "0",
) -> pa.Array:
    """Vectorized ``fast_fn`` for most rows, ``slow_fn`` per value for ``slow_rows``."""
    n = len(s)
    valid = valid_mask(s)
    if fast_fn is None:
        rows = np.flatnonzero(valid)
        vals = _per_value(s, rows, slow_fn)
        return _scatter(n, rows, vals, out_type)
    if slow_rows is None:
        slow_rows = np.zeros(0, dtype=np.int64)
    slow_rows = slow_rows[valid[slow_rows]] if len(slow_rows) else slow_rows
    if len(slow_rows) == int(valid.sum()):
        return _hybrid(s, out_type, slow_fn)
    fixed = s
    if len(slow_rows):
        mask = np.zeros(n, dtype=bool)
        mask[slow_rows] = True
        fixed = pc.replace_with_mask(
            s, pa.array(mask), pa.array([placeholder] * len(slow_rows), pa.string())
        )
    try:
        res = fast_fn(fixed)
    except (_FastFail, pa.ArrowInvalid, pa.ArrowNotImplementedError, OverflowError):
        return _hybrid(s, out_type, slow_fn)
    if len(slow_rows):
        vals = _per_value(s, slow_rows, slow_fn)
        mask = np.zeros(n, dtype=bool)
        mask[slow_rows] = True
        res = pc.replace_with_mask(res, pa.array(mask), pa.array(vals, out_type))
    return res


def _scatter(n: int, rows: np.ndarray, vals: list[Any], out_type: pa.DataType) -> pa.Array:
    if len(rows) == n:
        return pa.array(vals, out_type)
    full: list[Any] = [None] * n
    for r, v in zip(rows.tolist(), vals, strict=True):
        full[r] = v
    return pa.array(full, out_type)


# -------------------------------------------------------------------------------- types


def _dec_bool(s: pa.Array, ct: ColumnType) -> pa.Array:
    lens = np.diff(binary_parts(s)[0])
    slow = np.flatnonzero(lens != 1)
    slow = np.union1d(slow, _other_byte_rows(s, b"tf")).astype(np.int64)

    def fast(a: pa.Array) -> pa.Array:
        return pc.equal(a, "t")

    return _hybrid(s, pa.bool_(), bool_in, fast, slow, "t")


def _dec_int(bits: int) -> Callable[[pa.Array, ColumnType], pa.Array]:
    out_type = {16: pa.int16(), 32: pa.int32(), 64: pa.int64()}[bits]

    def dec(s: pa.Array, ct: ColumnType) -> pa.Array:
        slow = _other_byte_rows(s, b"0123456789-")

        def fast(a: pa.Array) -> pa.Array:
            v = pc.cast(a, pa.int64())
            if bits < 64:
                lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
                x = np.asarray(v.fill_null(0))
                if ((x < lo) | (x > hi)).any():
                    raise _FastFail
                return v.cast(out_type)
            return v

        return _hybrid(s, out_type, lambda t: int_in(t, bits), fast, slow)

    return dec


def _dec_float(float4: bool) -> Callable[[pa.Array, ColumnType], pa.Array]:
    out_type = pa.float32() if float4 else pa.float64()

    def dec(s: pa.Array, ct: ColumnType) -> pa.Array:
        slow = _other_byte_rows(s, b"0123456789.eE+-")

        def fast(a: pa.Array) -> pa.Array:
            v = pc.cast(a, out_type)
            x = np.asarray(v.fill_null(1.0))
            if not np.isfinite(x).all():
                raise _FastFail  # overflow to infinity: PostgreSQL reports it
            zeros = np.flatnonzero(x == 0)
            if len(zeros):
                sub = a.take(pa.array(zeros))
                if pc.any(pc.match_substring_regex(sub, r"^[^eE]*[1-9]")).as_py():
                    raise _FastFail  # underflow to zero
            return v

        return _hybrid(s, out_type, lambda t: float_in(t, float4), fast, slow)

    return dec


_CANON_NUMERIC = r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?$"
#: The longest text Arrow's cast to decimal128 is trusted with (38 digits, a sign, a point
#: and leading zeros fit well below the lengths it wraps at).
_DECIMAL_FAST_MAX = 60


def _dec_numeric(s: pa.Array, ct: ColumnType) -> pa.Array:
    ps = ct.numeric_precision_scale
    out_type = ColumnType(ct.base, ct.typmod).arrow
    if pa.types.is_decimal(out_type):
        p, sc = ps  # type: ignore[misc]
        slow = _other_byte_rows(s, b"0123456789.-")

        def fast(a: pa.Array) -> pa.Array:
            # Arrow's text → decimal128 wraps a number of 77 digits or more around 2^256
            # (10^300 becomes 0.00) where it should fail: long texts take the slow path
            if len(a) and pc.max(pc.utf8_length(a)).as_py() > _DECIMAL_FAST_MAX:
                raise _FastFail
            return pc.cast(a, out_type)

        return _hybrid(s, out_type, lambda t: numeric_decimal_in(t, p, sc), fast, slow)
    if ps is not None:
        return _hybrid(s, pa.string(), lambda t: numeric_text_in(t, ps))

    def fast_text(a: pa.Array) -> pa.Array:
        ok = pc.match_substring_regex(a, _CANON_NUMERIC)
        negzero = pc.match_substring_regex(a, r"^-0(\.0*)?$")
        good = pc.and_(ok, pc.invert(negzero))
        if not pc.all(good.fill_null(True)).as_py():
            raise _FastFail
        return a

    return _hybrid(s, pa.string(), lambda t: numeric_text_in(t, None), fast_text)


#: PostgreSQL's NAMEDATALEN - 1: the most bytes a ``name`` holds.
NAME_BYTES = 63


def name_in(text: str) -> str:
    """namein: the text cut to at most 63 bytes, at a character's end (pg_mbcliplen)."""
    data = text.encode()
    if len(data) <= NAME_BYTES:
        return text
    return data[:NAME_BYTES].decode(errors="ignore")


def _dec_name(s: pa.Array, ct: ColumnType) -> pa.Array:
    long = np.flatnonzero(np.asarray(pc.binary_length(s).fill_null(0)) > NAME_BYTES).astype(np.int64)
    if not len(long):
        return s
    values = s.to_pylist()
    for i in long:
        values[i] = name_in(values[i])
    return pa.array(values, pa.string())


def _dec_text(s: pa.Array, ct: ColumnType) -> pa.Array:
    name = ct.base.name
    if name in ("varchar", "bpchar") and ct.typmod >= 4:
        maxlen = ct.typmod - 4
        bp = name == "bpchar"
        lens = np.asarray(pc.utf8_length(s).fill_null(0))
        slow = np.flatnonzero(lens > maxlen).astype(np.int64)

        def fast(a: pa.Array) -> pa.Array:
            return pc.utf8_rpad(a, maxlen, " ") if bp else a

        return _hybrid(s, pa.string(), lambda t: varchar_in(t, maxlen, bp), fast, slow, "")
    return s


_HEXVAL = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEXVAL[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _HEXVAL[_c] = 10 + _i


def _dec_bytea(s: pa.Array, ct: ColumnType) -> pa.Array:
    offs, data = binary_parts(s)
    n = len(s)
    valid = valid_mask(s)
    lens = np.diff(offs)
    starts = offs[:-1]
    good = valid & (lens >= 2) & ((lens % 2) == 0)
    st = np.where(good, starts, 0)
    if len(data):
        good &= (data[np.minimum(st, len(data) - 1)] == 0x5C) & (
            data[np.minimum(st + 1, len(data) - 1)] == ord("x")
        )
    else:
        good &= False
    slow = np.flatnonzero(valid & ~good)
    body_mask = np.ones(len(data), dtype=bool)
    gs = starts[good]
    body_mask[gs] = False
    body_mask[gs + 1] = False
    # rows not on the fast path keep their bytes out of the body stream
    if len(slow):
        drop = np.repeat(~good, lens)
        body_mask &= ~drop
    body = data[body_mask]
    hv = _HEXVAL[body]
    if (hv == 255).any():
        bad_at = np.flatnonzero(body_mask)[np.flatnonzero(hv == 255)]
        bad_rows = sorted_unique(np.searchsorted(offs, bad_at, side="right") - 1)
        slow = np.union1d(slow, bad_rows).astype(np.int64)
        good[bad_rows] = False
        body_mask = np.ones(len(data), dtype=bool)
        drop = np.repeat(~good, lens)
        body_mask &= ~drop
        gs = starts[good]
        body_mask[gs] = False
        body_mask[gs + 1] = False
        body = data[body_mask]
        hv = _HEXVAL[body]
    out_bytes = ((hv[0::2] << 4) | hv[1::2]).astype(np.uint8)
    out_lens = np.where(good, (lens - 2) // 2, 0)
    out_offs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(out_lens, out=out_offs[1:])
    res = from_parts(out_offs, out_bytes, valid)
    if len(slow):
        vals = _per_value(s, slow, bytea_in)
        mask = np.zeros(n, dtype=bool)
        mask[slow] = True
        res = pc.replace_with_mask(res, pa.array(mask), pa.array(vals, B))
    return res


def _fixed_rows(
    s: pa.Array, length: int, lens: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(row indices, byte matrix) of the elements exactly ``length`` bytes long."""
    offs, data = binary_parts(s)
    if lens is None:
        lens = np.diff(offs)
    rows = np.flatnonzero(lens == length)
    if len(rows) == 0:
        return rows, np.zeros((0, length), dtype=np.uint8)
    if len(rows) == len(s) and len(data) == length * len(s):
        return rows, data.reshape(-1, length)
    mat = data[offs[rows][:, None] + np.arange(length)[None, :]]
    return rows, mat


def _digits(mat: np.ndarray, cols: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Decimal value of the digit columns and whether they all are digits."""
    cols = list(cols)
    if cols == list(range(cols[0], cols[-1] + 1)):
        m = mat[:, cols[0] : cols[-1] + 1].astype(np.int16) - 48
    else:
        m = mat[:, cols].astype(np.int16) - 48
    ok = ((m >= 0) & (m <= 9)).all(axis=1)
    pow10 = 10 ** np.arange(len(cols) - 1, -1, -1, dtype=np.int64)
    return m.astype(np.int64) @ pow10, ok


_MDAYS_NP = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)


def _padded(s: pa.Array, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Each element's first ``width`` bytes as a matrix row (zeros past its end), and lengths.

    Rows are cut from a sliding-window view of the data, so numpy copies whole rows rather
    than gathering bytes one index at a time.
    """
    offs, data = binary_parts(s)
    lens = np.diff(offs)
    padded = np.zeros(len(data) + width, dtype=np.uint8)
    padded[: len(data)] = data
    windows = np.lib.stride_tricks.sliding_window_view(padded, width)
    mat = windows[offs[:-1]]
    short = np.flatnonzero(lens < width)
    if len(short):
        sub = mat[short]
        sub[np.arange(width)[None, :] >= lens[short, None]] = 0
        mat[short] = sub
    return mat, lens


#: Value of two ASCII digits read as one little-endian uint16, -1 for anything else.
_PAIR = np.full(65536, -1, dtype=np.int16)
for _a in range(10):
    for _b in range(10):
        _PAIR[(48 + _a) | ((48 + _b) << 8)] = 10 * _a + _b


def _pair(mat: np.ndarray, col: int) -> np.ndarray:
    """Two-digit value at byte ``col`` of every row (-1 when not two digits)."""
    if mat.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    view = np.ndarray(
        (mat.shape[0],), dtype="<u2", buffer=mat, offset=col, strides=(mat.strides[0],)
    )
    return _PAIR[view].astype(np.int64)


def _ymd(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Days since 1970 of 'YYYY-MM-DD' rows, and which rows were valid dates (years 1..9999)."""
    mat = np.ascontiguousarray(mat)
    y1, y2, m, d = _pair(mat, 0), _pair(mat, 2), _pair(mat, 5), _pair(mat, 8)
    ok = (y1 >= 0) & (y2 >= 0) & (m >= 0) & (d >= 0) & (mat[:, 4] == 45) & (mat[:, 7] == 45)
    y = y1 * 100 + y2
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    mc = np.clip(m, 0, 12)
    dim = _MDAYS_NP[mc] + ((mc == 2) & leap)
    ok &= (y >= 1) & (m >= 1) & (m <= 12) & (d >= 1) & (d <= dim)
    days = cal.days_from_civil(np.where(ok, y, 2000), np.where(ok, m, 1), np.where(ok, d, 1))
    return days, ok


_FRAC_POW = np.array([10000, 100, 1], dtype=np.int64)


def _clock(mat: np.ndarray, col: int, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Microseconds of 'HH:MM:SS[.f{1,6}]' starting at ``col`` and ``length`` bytes long."""
    mat = np.ascontiguousarray(mat)
    h, mi, sec = _pair(mat, col), _pair(mat, col + 3), _pair(mat, col + 6)
    ok = (h >= 0) & (mi >= 0) & (sec >= 0) & (mat[:, col + 2] == 58) & (mat[:, col + 5] == 58)
    nfrac = length - 9  # digits after the point
    ok &= (length == 8) | ((nfrac >= 1) & (nfrac <= 6) & (mat[:, col + 8] == 46))
    region = mat[:, col + 9 : col + 15]
    unused = np.arange(6)[None, :] >= nfrac[:, None]
    if unused.any():
        region = np.where(unused, np.uint8(48), region)
    fmat = np.ascontiguousarray(region)
    f1, f2, f3 = _pair(fmat, 0), _pair(fmat, 2), _pair(fmat, 4)
    ok &= (f1 >= 0) & (f2 >= 0) & (f3 >= 0)
    frac = f1 * 10000 + f2 * 100 + f3
    us = ((h * 60 + mi) * 60 + sec) * cal.USECS_PER_SEC + frac
    ok &= (mi <= 59) & (sec <= 59) & ((h < 24) | ((h == 24) & (mi == 0) & (sec == 0) & (frac == 0)))
    return us, ok


def _dec_datetime(kind: str, date_order: str = "MDY") -> Callable[[pa.Array, ColumnType], pa.Array]:
    """The decoder of a date/time type for one DateStyle field order: the fast path takes
    only ISO text (year first, the same in every order), the rest reads in ``date_order``."""
    out_type = {
        "date": pa.date32(),
        "time": pa.time64("us"),
        "timestamp": pa.timestamp("us"),
        "timestamptz": pa.timestamp("us", tz="UTC"),
    }[kind]
    slow_fn: Callable[[str], int] = {
        "date": lambda t: _dtin.date_in(t, date_order),
        "time": lambda t: _dtin.time_in(t, date_order),
        "timestamp": lambda t: _dtin.timestamp_in(t, False, date_order),
        "timestamptz": lambda t: _dtin.timestamp_in(t, True, date_order),
    }[kind]

    def dec(s: pa.Array, ct: ColumnType) -> pa.Array:
        n = len(s)
        valid = valid_mask(s)
        if kind == "date":
            mat, lens = _padded(s, 10)
            vals, done = _ymd(mat)
            done &= lens == 10
        elif kind == "time":
            mat, lens = _padded(s, 15)
            vals, done = _clock(mat, 0, lens)
        else:
            # 'YYYY-MM-DD HH:MM:SS[.f{1,6}]', optionally followed by '+00' (what we print)
            mat, lens = _padded(s, 29)
            rows = np.arange(n)
            at = np.clip(lens[:, None] - np.arange(3, 0, -1)[None, :], 0, 28)
            tail = mat[rows[:, None], at]
            has_tz = (lens >= 22) & (tail[:, 0] == 43) & (tail[:, 1] == 48) & (tail[:, 2] == 48)
            core = lens - 3 * has_tz
            days, okd = _ymd(mat[:, :10])
            t, okt = _clock(mat, 11, core - 11)
            vals = days * cal.USECS_PER_DAY + t
            done = okd & okt & (mat[:, 10] == 32)
            if kind == "timestamptz" and " " in date_order:
                done &= has_tz  # (no offset: the session zone's local time, read one by one)
        done &= valid
        slow = np.flatnonzero(valid & ~done)
        if kind == "date":
            arr = pa.array(vals.astype(np.int32), pa.int32(), mask=~valid).view(pa.date32())
        elif kind == "time":
            arr = pa.array(vals, pa.int64(), mask=~valid).view(pa.time64("us"))
        else:
            arr = pa.array(vals, pa.int64(), mask=~valid).view(out_type)
        if len(slow):
            got = _per_value(s, slow, slow_fn)
            mask = np.zeros(n, dtype=bool)
            mask[slow] = True
            if kind == "date":
                repl = pa.array(got, pa.int32()).view(pa.date32())
            else:
                repl = pa.array(got, pa.int64()).view(out_type)
            arr = pc.replace_with_mask(arr, pa.array(mask), repl)
        return arr

    return dec


_INTERVAL_TYPE = pa.struct(
    [("months", pa.int32()), ("days", pa.int32()), ("microseconds", pa.int64())]
)


def _dec_interval(s: pa.Array, ct: ColumnType) -> pa.Array:
    cache: dict[str, tuple[int, int, int]] = {}

    def one(t: str) -> dict[str, int]:
        r = cache.get(t)
        if r is None:
            r = cache[t] = _dtin.interval_in(t)
        return {"months": r[0], "days": r[1], "microseconds": r[2]}

    out_type = ColumnType(ct.base).arrow
    return _hybrid(s, out_type, one)


def _dec_uuid(s: pa.Array, ct: ColumnType) -> pa.Array:
    valid = valid_mask(s)
    rows, mat = _fixed_rows(s, 36)
    ok = np.zeros(len(rows), dtype=bool)
    if len(rows):
        hexcols = np.r_[0:8, 9:13, 14:18, 19:23, 24:36]
        ok = (_HEXVAL[mat[:, hexcols]] != 255).all(axis=1)
        ok &= (mat[:, [8, 13, 18, 23]] == 45).all(axis=1)
    good = np.zeros(len(s), dtype=bool)
    good[rows[ok]] = True
    slow = np.flatnonzero(valid & ~good)

    def fast(a: pa.Array) -> pa.Array:
        return pc.ascii_lower(a)

    return _hybrid(s, pa.string(), uuid_in, fast, slow, "00000000-0000-0000-0000-000000000000")


def _dec_json(s: pa.Array, ct: ColumnType) -> pa.Array:
    return _hybrid(s, pa.string(), json_in)


def _dec_jsonb(s: pa.Array, ct: ColumnType) -> pa.Array:
    return _hybrid(s, pa.string(), jsonb_in)


_WS_CHARS = " \t\n\r\v\f"


def _simple_array_elements(
    s: pa.Array, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, pa.Array, np.ndarray]:
    """Vectorized array_in for literals without quotes, escapes or nesting ("{1, 2,NULL}").

    Returns (rows handled, their element counts, the elements (NULL as null), rows left for
    the full parser).
    """
    sub = s.take(pa.array(rows, pa.int64()))
    t = pc.ascii_trim(sub, _WS_CHARS)
    simple = np.asarray(pc.match_substring_regex(t, r'^\{[^{}"\\]*\}$').fill_null(False))
    inner = pc.utf8_slice_codeunits(t, 1, -1)
    empty = np.asarray(pc.equal(pc.ascii_trim(inner, _WS_CHARS), "").fill_null(False))
    parts = pc.split_pattern(inner, ",")
    counts = np.asarray(pc.list_value_length(parts).fill_null(0)).astype(np.int64)
    elems = pc.ascii_trim(parts.flatten(), _WS_CHARS)
    owner = np.repeat(np.arange(len(rows)), counts)
    blank = np.asarray(pc.equal(elems, "").fill_null(False))
    # an empty element outside "{}" is a syntax error: leave the row to the full parser
    bad = np.zeros(len(rows), dtype=bool)
    bad[owner[blank]] = True
    simple &= ~(bad & ~empty)
    take_elem = simple[owner] & ~empty[owner]
    elems = elems.filter(pa.array(take_elem))
    counts = np.where(simple & ~empty, counts, 0)
    is_null = pc.equal(pc.ascii_upper(elems), "NULL")
    elems = pc.if_else(is_null, pa.scalar(None, pa.string()), elems)
    return rows[simple], counts[simple], elems, rows[~simple]


def _dec_array(s: pa.Array, ct: ColumnType, date_order: str = "MDY") -> pa.Array:
    elem = ColumnType(ct.base, ct.typmod)
    valid = valid_mask(s)
    n = len(s)
    rows = np.flatnonzero(valid)
    fast_rows, fast_counts, fast_elems, slow_rows = _simple_array_elements(s, rows)
    lengths = np.zeros(n, dtype=np.int64)
    lengths[fast_rows] = fast_counts
    slow_flat: list[str | None] = []
    structure_error: InputError | None = None
    if len(slow_rows):
        try:
            parsed = _per_value(s, slow_rows, array_in_elements)
        except InputError as e:
            # rows before a malformed literal are converted (and may fail) first, as
            # PostgreSQL reads values one by one
            structure_error = e
            keep = slow_rows < e.index
            slow_rows = slow_rows[keep]
            parsed = _per_value(s, slow_rows, array_in_elements)
            cut = fast_rows < e.index
            fast_elems = fast_elems.slice(0, int(fast_counts[cut].sum()))
            fast_rows, fast_counts = fast_rows[cut], fast_counts[cut]
            lengths[:] = 0
            lengths[fast_rows] = fast_counts
        for r, elems in zip(slow_rows.tolist(), parsed, strict=True):
            lengths[r] = len(elems)
            slow_flat.extend(elems)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # place fast and slow elements in row order: index into concat(fast, slow)
    is_fast = np.zeros(n, dtype=bool)
    is_fast[fast_rows] = True
    per_elem_fast = np.repeat(is_fast, lengths)
    order = np.empty(int(offsets[-1]), dtype=np.int64)
    order[per_elem_fast] = np.arange(int(per_elem_fast.sum()))
    order[~per_elem_fast] = len(fast_elems) + np.arange(int((~per_elem_fast).sum()))
    combined = pa.concat_arrays([fast_elems.cast(pa.string()), pa.array(slow_flat, pa.string())])
    flat = combined.take(pa.array(order)) if len(order) else pa.array([], pa.string())
    owner = np.repeat(np.arange(n), lengths)
    try:
        values = decode_text_arrow(elem, flat, date_order)
    except InputError as e:
        raise InputError(e, int(owner[e.index])) from None
    if structure_error is not None:
        raise structure_error
    return pa.ListArray.from_arrays(
        pa.array(offsets.astype(np.int32)), values, mask=pa.array(~valid)
    ).cast(ct.arrow)


_DECODERS: dict[str, Callable[[pa.Array, ColumnType], pa.Array]] = {
    "bool": _dec_bool,
    "int2": _dec_int(16),
    "int4": _dec_int(32),
    "int8": _dec_int(64),
    "float4": _dec_float(True),
    "float8": _dec_float(False),
    "numeric": _dec_numeric,
    "text": _dec_text,
    "anyenum": _dec_text,
    "varchar": _dec_text,
    "bpchar": _dec_text,
    "name": _dec_name,
    "bytea": _dec_bytea,
    "date": _dec_datetime("date"),
    "time": _dec_datetime("time"),
    "timestamp": _dec_datetime("timestamp"),
    "timestamptz": _dec_datetime("timestamptz"),
    "interval": _dec_interval,
    "uuid": _dec_uuid,
    "json": _dec_json,
    "jsonb": _dec_jsonb,
}


@functools.lru_cache(maxsize=64)
def _zoned_decoder(kind: str, date_order: str) -> Callable[[pa.Array, ColumnType], pa.Array]:
    """The date/time decoder for a field order and a session zone other than UTC
    (``"MDY America/New_York"``): 'now' and 'today' are the zone's, and timestamptz
    text without an offset is the zone's local time."""
    return _dec_datetime(kind, date_order)


#: The date/time decoders for each DateStyle field order but MDY (in _DECODERS).
_ORDERED_DECODERS: dict[tuple[str, str], Callable[[pa.Array, ColumnType], pa.Array]] = {
    (kind, order): _dec_datetime(kind, order)
    for kind in ("date", "time", "timestamp", "timestamptz")
    for order in _dtin.DATE_ORDERS
    if order != "MDY"
}


def decode_text_arrow(
    ctype: ColumnType,
    values: pa.Array | pa.ChunkedArray | Sequence[bytes | str | None],
    date_order: str = "MDY",
) -> pa.Array:
    """Parse text values (None = SQL NULL) into an Arrow array of ``ctype.arrow``.
    ``date_order`` is the session's DateStyle field order (``MDY``, ``DMY`` or ``YMD``):
    dates, times and timestamps read ``01/02/03`` by it, as PostgreSQL's input does."""
    if date_order.partition(" ")[0] not in _dtin.DATE_ORDERS:
        raise ValueError(f"date order {date_order!r} is not one of {_dtin.DATE_ORDERS}")
    s = _strings(values)
    dec: Callable[[pa.Array, ColumnType], pa.Array]
    if ctype.is_array:
        dec = functools.partial(_dec_array, date_order=date_order)
    elif " " in date_order and ctype.base.name in ("date", "time", "timestamp", "timestamptz"):
        dec = _zoned_decoder(ctype.base.name, date_order)
    else:
        dec = _ORDERED_DECODERS.get((ctype.base.name, date_order)) or _DECODERS[ctype.base.name]
    if len(s) <= _SLICE:
        return dec(s, ctype)
    # byte matrices and index arrays scale with the input: keep them cache-sized
    parts = []
    for start in range(0, len(s), _SLICE):
        try:
            parts.append(dec(s.slice(start, _SLICE), ctype))
        except InputError as e:
            raise InputError(e, e.index + start) from None
    return pa.concat_arrays(parts)


_SLICE = 65536
