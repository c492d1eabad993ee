"""PostgreSQL 15's data type formatting functions (``formatting.c``), in pure Python.

``to_char`` of timestamps, intervals and numbers, ``to_number``, ``to_date`` and
``to_timestamp`` follow a template language with many quirks that clients rely on (and
the regression tests pin down): fill mode, ordinal suffixes, the ``#`` overflow fill, a
sign written before the first digit, a NUL byte from ``SG`` in Roman mode that cuts the
result short, C integer division and int32 wrap-around on interval fields. A rewrite in
terms of DuckDB's ``strftime``/``format`` would answer differently for most templates, so
the functions are reimplemented here with formatting.c's algorithms, step for step:

* templates are parsed as ``parse_format`` does (keyword tables searched by first
  character, ``FM``/``TM`` prefixes and ``TH``/``th``/``SP`` suffixes, quoted text and the
  ``\\"`` escape), once per distinct template (:func:`functools.lru_cache`);
* a timestamp becomes a ``struct pg_tm`` and ``DCH_to_char`` prints each node;
* a number becomes the digit string each ``*_to_char`` prepares and ``NUM_processor``
  lays it over the template;
* ``to_number`` scans the input's UTF-8 bytes with ``NUM_processor``'s input side and
  ``to_timestamp``/``to_date`` with ``DCH_from_char`` and ``do_to_timestamp``.

The session's locale is C (``lc_numeric``, ``lc_monetary``, ``lc_time``): ``D`` is ``.``,
``G`` ``,``, ``L`` a blank, ``TM`` names are the English ones. The time zone is UTC.
Values arrive as the proxy holds them (microseconds and days from 1970-01-01, numeric
text) and errors are PostgreSQL's, as :class:`~decoding.errors.PgError`.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from decoding import pgtz
from decoding.errors import PgError
from decoding.pgtime import PG_EPOCH_JDATE as POSTGRES_EPOCH_JDATE
from decoding.pgvalues import _calendar as cal
from decoding.pgvalues.textin import numeric_text_in
from walsender_proxy.sql import numeric_math as nm

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
LONG_MIN, LONG_MAX = INT64_MIN, INT64_MAX

UNIX_EPOCH_JDATE = 2440588
USECS_PER_DAY = 86_400_000_000
#: MIN_TIMESTAMP / END_TIMESTAMP (datatype/timestamp.h), from 2000-01-01.
MIN_TIMESTAMP = -211813488000000000
END_TIMESTAMP = 9223371331200000000
DATE_END_JULIAN = 2147483494
TIMESTAMP_END_JULIAN = 109203528  # 294277-01-01
MAX_TZDISP_HOUR = 15


# ------------------------------------------------------------------ C arithmetic


def _i32(x: int) -> int:
    """``x`` wrapped to a C int (PostgreSQL is built with -fwrapv)."""
    return (x + 2**31) % 2**32 - 2**31


def _u32(x: int) -> int:
    return x % 2**32


def _cdiv(a: int, b: int) -> int:
    """C's ``/``: truncates towards zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _cmod(a: int, b: int) -> int:
    """C's ``%``: the sign of the dividend."""
    return a - b * _cdiv(a, b)


def _f32(x: float) -> float:
    """``x`` rounded to a C float."""
    try:
        return float(struct.unpack("f", struct.pack("f", x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def _pad(value: int, width: int) -> str:
    """``sprintf("%0*d", width, value)``."""
    return f"{value:0{width}d}" if width else str(value)


#: PostgreSQL's snprintf prints at most this many fraction digits, then zeros.
_PG_MAX_PREC = 350


def _fmt_float(value: float, prec: int, conv: str, *, force_sign: bool = False) -> str:
    """PostgreSQL's own ``snprintf`` (src/port/snprintf.c) of ``%.*f`` / ``%.*e``: NaN and
    infinities spelled ``NaN``/``Infinity``, a minus for -0, and precision beyond 350
    digits padded with zeros (before the exponent for ``e``)."""
    if math.isnan(value):
        return "NaN"
    neg = value < 0 or (value == 0 and math.copysign(1.0, value) < 0)
    sign = "-" if neg else ("+" if force_sign else "")
    value = abs(value)
    if math.isinf(value):
        return sign + "Infinity"
    p = min(prec, _PG_MAX_PREC)
    text = f"%.{p}{conv}" % value
    if prec > p:
        zeros = "0" * (prec - p)
        e = text.rfind("e")
        text = text[:e] + zeros + text[e:] if e >= 0 else text + zeros
    return sign + text


# ----------------------------------------------------------------- calendar (int32)


def date2j(year: int, month: int, day: int) -> int:
    """date2j in C int arithmetic (interval fields can be anything)."""
    if month > 2:
        month += 1
        year = _i32(year + 4800)
    else:
        month += 13
        year = _i32(year + 4799)
    century = _cdiv(year, 100)
    julian = _i32(_i32(year * 365) - 32167)
    julian = _i32(julian + _i32(_cdiv(year, 4) - century + _cdiv(century, 4)))
    julian = _i32(julian + _i32(_cdiv(_i32(7834 * month), 256) + day))
    return julian


def j2date(jd: int) -> tuple[int, int, int]:
    """j2date in C unsigned arithmetic."""
    julian = _u32(jd)
    julian = _u32(julian + 32044)
    quad = julian // 146097
    extra = _u32(_u32(julian - quad * 146097) * 4 + 3)
    julian = _u32(julian + 60 + quad * 3 + extra // 146097)
    quad = julian // 1461
    julian = _u32(julian - quad * 1461)
    y = _u32(julian * 4) // 1461
    julian = ((julian + 305) % 365 if y != 0 else (julian + 306) % 366) + 123
    y = _u32(y + quad * 4)
    year = _i32(y - 4800)
    quad = _u32(julian * 2141) // 65536
    day = _i32(_u32(julian - _u32(7834 * quad) // 256))
    month = (quad + 10) % 12 + 1
    return year, month, day


def j2day(date: int) -> int:
    date = _cmod(_i32(date + 1), 7)
    return date + 7 if date < 0 else date


def isoweek2j(year: int, week: int) -> int:
    day4 = date2j(year, 1, 4)
    day0 = j2day(day4 - 1)
    return _i32(_i32((week - 1) * 7) + _i32(day4 - day0))


def date2isoweek(year: int, mon: int, mday: int) -> int:
    dayn = date2j(year, mon, mday)
    day4 = date2j(year, 1, 4)
    day0 = j2day(day4 - 1)
    if dayn < _i32(day4 - day0):
        day4 = date2j(_i32(year - 1), 1, 4)
        day0 = j2day(day4 - 1)
    result = _cdiv(_i32(dayn - _i32(day4 - day0)), 7) + 1
    if result >= 52:
        day4 = date2j(_i32(year + 1), 1, 4)
        day0 = j2day(day4 - 1)
        if dayn >= _i32(day4 - day0):
            result = _cdiv(_i32(dayn - _i32(day4 - day0)), 7) + 1
    return result


def date2isoyear(year: int, mon: int, mday: int) -> int:
    dayn = date2j(year, mon, mday)
    day4 = date2j(year, 1, 4)
    day0 = j2day(day4 - 1)
    if dayn < _i32(day4 - day0):
        day4 = date2j(_i32(year - 1), 1, 4)
        day0 = j2day(day4 - 1)
        year = _i32(year - 1)
    result = _cdiv(_i32(dayn - _i32(day4 - day0)), 7) + 1
    if result >= 52:
        day4 = date2j(_i32(year + 1), 1, 4)
        day0 = j2day(day4 - 1)
        if dayn >= _i32(day4 - day0):
            year = _i32(year + 1)
    return year


def date2isoyearday(year: int, mon: int, mday: int) -> int:
    return _i32(date2j(year, mon, mday) - isoweek2j(date2isoyear(year, mon, mday), 1) + 1)


def _isleap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def _valid_julian(y: int, m: int) -> bool:
    """IS_VALID_JULIAN (the day is not looked at)."""
    return (y > -4713 or (y == -4713 and m >= 11)) and (y < 5874898 or (y == 5874898 and m < 6))


# ------------------------------------------------------------------------ templates

#: Node kinds (NODE_TYPE_*).
ACTION, CHAR, SEPARATOR, SPACE = "action", "char", "separator", "space"

#: Suffixes (DCH_S_*).
S_FM, S_TH, S_th, S_SP, S_TM = 0x01, 0x02, 0x04, 0x08, 0x10
_PREFIXES = (("FM", S_FM), ("fm", S_FM), ("TM", S_TM), ("tm", S_TM))
_POSTFIXES = (("TH", S_TH), ("th", S_th), ("SP", S_SP))

#: FromCharDateMode.
_NONE, _GREG, _ISO = 0, 1, 2


class Keyword(NamedTuple):
    name: str
    id: str
    is_digit: bool = False
    mode: int = _NONE


class Node(NamedTuple):
    kind: str
    key: Keyword | None = None
    suffix: int = 0
    char: str = ""


def _kw(spec: str) -> list[Keyword]:
    """Keywords from ``name:id:flags`` lines (flags: d digit, g Gregorian, i ISO week)."""
    out = []
    for line in spec.split():
        name, kid, flags = line.split("|")
        mode = _GREG if "g" in flags else _ISO if "i" in flags else _NONE
        out.append(Keyword(name, kid, "d" in flags, mode))
    return out


#: DCH_keywords, in formatting.c's order (longer spellings first within a first letter).
DCH_KEYWORDS = _kw("""
A.D.|A_D|- A.M.|A_M|- AD|AD|- AM|AM|- B.C.|B_C|- BC|BC|- CC|CC|d DAY|DAY|- DDD|DDD|dg
DD|DD|dg DY|DY|- Day|Day|- Dy|Dy|- D|D|dg FF1|FF1|d FF2|FF2|d FF3|FF3|d FF4|FF4|d
FF5|FF5|d FF6|FF6|d FX|FX|- HH24|HH24|d HH12|HH12|d HH|HH|d IDDD|IDDD|di ID|ID|di
IW|IW|di IYYY|IYYY|di IYY|IYY|di IY|IY|di I|I|di J|J|d MI|MI|d MM|MM|dg MONTH|MONTH|g
MON|MON|g MS|MS|d Month|Month|g Mon|Mon|g OF|OF|- P.M.|P_M|- PM|PM|- Q|Q|d RM|RM|g
SSSSS|SSSS|d SSSS|SSSS|d SS|SS|d TZH|TZH|- TZM|TZM|d TZ|TZ|- US|US|d WW|WW|dg W|W|dg
Y,YYY|Y_YYY|dg YYYY|YYYY|dg YYY|YYY|dg YY|YY|dg Y|Y|dg
a.d.|a_d|- a.m.|a_m|- ad|ad|- am|am|- b.c.|b_c|- bc|bc|- cc|CC|d day|day|- ddd|DDD|dg
dd|DD|dg dy|dy|- d|D|dg ff1|FF1|d ff2|FF2|d ff3|FF3|d ff4|FF4|d ff5|FF5|d ff6|FF6|d
fx|FX|- hh24|HH24|d hh12|HH12|d hh|HH|d iddd|IDDD|di id|ID|di iw|IW|di iyyy|IYYY|di
iyy|IYY|di iy|IY|di i|I|di j|J|d mi|MI|d mm|MM|dg month|month|g mon|mon|g ms|MS|d
of|OF|- p.m.|p_m|- pm|pm|- q|Q|d rm|rm|g sssss|SSSS|d ssss|SSSS|d ss|SS|d tzh|TZH|-
tzm|TZM|d tz|tz|- us|US|d ww|WW|dg w|W|dg y,yyy|Y_YYY|dg yyyy|YYYY|dg yyy|YYY|dg
yy|YY|dg y|Y|dg
""")

#: NUM_keywords.
NUM_KEYWORDS = _kw("""
,|COMMA|- .|DEC|- 0|0|- 9|9|- B|B|- C|C|- D|D|- EEEE|E|- FM|FM|- G|G|- L|L|- MI|MI|-
PL|PL|- PR|PR|- RN|RN|- SG|SG|- SP|SP|- S|S|- TH|TH|- V|V|- b|B|- c|C|- d|D|- eeee|E|-
fm|FM|- g|G|- l|L|- mi|MI|- pl|PL|- pr|PR|- rn|rn|- sg|SG|- sp|SP|- s|S|- th|th|- v|V|-
""")


def _index(keywords: Sequence[Keyword]) -> dict[str, list[Keyword]]:
    out: dict[str, list[Keyword]] = {}
    for k in keywords:
        out.setdefault(k.name[0], []).append(k)
    return out


_DCH_INDEX = _index(DCH_KEYWORDS)
_NUM_INDEX = _index(NUM_KEYWORDS)


def _kw_search(fmt: str, i: int, index: dict[str, list[Keyword]]) -> Keyword | None:
    """index_seq_search: the first keyword of the group of ``fmt[i]`` that ``fmt`` has at
    ``i`` (only printable ASCII starts one)."""
    c = fmt[i]
    if not " " < c < "~":
        return None
    for k in index.get(c, ()):
        if fmt.startswith(k.name, i):
            return k
    return None


_C_SPACE = " \t\n\v\f\r"


def _is_separator(c: str) -> bool:
    """is_separator_char: printable ASCII that is neither a letter nor a digit."""
    return " " < c < "\x7f" and not c.isalnum()


# ------------------------------------------------------------------ number templates

F_DECIMAL, F_LDECIMAL, F_ZERO, F_BLANK, F_FILLMODE = 1 << 1, 1 << 2, 1 << 3, 1 << 4, 1 << 5
F_LSIGN, F_BRACKET, F_MINUS, F_PLUS, F_ROMAN = 1 << 6, 1 << 7, 1 << 8, 1 << 9, 1 << 10
F_MULTI, F_PLUS_POST, F_MINUS_POST, F_EEEE = 1 << 11, 1 << 12, 1 << 13, 1 << 14
LSIGN_PRE, LSIGN_POST, LSIGN_NONE = -1, 1, 0


@dataclass
class NumDesc:
    """NUMDesc: what a number template asks for (counts of digits, flags)."""

    pre: int = 0
    post: int = 0
    lsign: int = LSIGN_NONE
    flag: int = 0
    pre_lsign_num: int = 0
    multi: int = 0
    zero_start: int = 0
    zero_end: int = 0
    need_locale: bool = False

    def has(self, f: int) -> bool:
        return bool(self.flag & f)


def _syntax(msg: str, detail: str | None = None) -> PgError:
    return PgError("42601", msg, detail=detail)


def _num_prepare(num: NumDesc, kid: str) -> None:
    """NUMDesc_prepare: one keyword's effect on the description, and the template errors."""
    if num.has(F_EEEE) and kid != "E":
        raise _syntax('"EEEE" must be the last pattern used')
    if kid == "9":
        if num.has(F_BRACKET):
            raise _syntax('"9" must be ahead of "PR"')
        if num.has(F_MULTI):
            num.multi += 1
        elif num.has(F_DECIMAL):
            num.post += 1
        else:
            num.pre += 1
    elif kid == "0":
        if num.has(F_BRACKET):
            raise _syntax('"0" must be ahead of "PR"')
        if not num.has(F_ZERO) and not num.has(F_DECIMAL):
            num.flag |= F_ZERO
            num.zero_start = num.pre + 1
        if not num.has(F_DECIMAL):
            num.pre += 1
        else:
            num.post += 1
        num.zero_end = num.pre + num.post
    elif kid == "B":
        if num.pre == 0 and num.post == 0 and not num.has(F_ZERO):
            num.flag |= F_BLANK
    elif kid in ("D", "DEC"):
        if kid == "D":
            num.flag |= F_LDECIMAL
            num.need_locale = True
        if num.has(F_DECIMAL):
            raise _syntax("multiple decimal points")
        if num.has(F_MULTI):
            raise _syntax('cannot use "V" and decimal point together')
        num.flag |= F_DECIMAL
    elif kid == "FM":
        num.flag |= F_FILLMODE
    elif kid == "S":
        if num.has(F_LSIGN):
            raise _syntax('cannot use "S" twice')
        if num.has(F_PLUS) or num.has(F_MINUS) or num.has(F_BRACKET):
            raise _syntax('cannot use "S" and "PL"/"MI"/"SG"/"PR" together')
        if not num.has(F_DECIMAL):
            num.lsign = LSIGN_PRE
            num.pre_lsign_num = num.pre
            num.need_locale = True
            num.flag |= F_LSIGN
        elif num.lsign == LSIGN_NONE:
            num.lsign = LSIGN_POST
            num.need_locale = True
            num.flag |= F_LSIGN
    elif kid == "MI":
        if num.has(F_LSIGN):
            raise _syntax('cannot use "S" and "MI" together')
        num.flag |= F_MINUS
        if num.has(F_DECIMAL):
            num.flag |= F_MINUS_POST
    elif kid == "PL":
        if num.has(F_LSIGN):
            raise _syntax('cannot use "S" and "PL" together')
        num.flag |= F_PLUS
        if num.has(F_DECIMAL):
            num.flag |= F_PLUS_POST
    elif kid == "SG":
        if num.has(F_LSIGN):
            raise _syntax('cannot use "S" and "SG" together')
        num.flag |= F_MINUS | F_PLUS
    elif kid == "PR":
        if num.has(F_LSIGN) or num.has(F_PLUS) or num.has(F_MINUS):
            raise _syntax('cannot use "PR" and "S"/"PL"/"MI"/"SG" together')
        num.flag |= F_BRACKET
    elif kid in ("RN", "rn"):
        num.flag |= F_ROMAN
    elif kid in ("L", "G"):
        num.need_locale = True
    elif kid == "V":
        if num.has(F_DECIMAL):
            raise _syntax('cannot use "V" and decimal point together')
        num.flag |= F_MULTI
    elif kid == "E":
        if num.has(F_EEEE):
            raise _syntax('cannot use "EEEE" twice')
        if num.flag & (F_BLANK | F_FILLMODE | F_LSIGN | F_BRACKET | F_MINUS | F_PLUS | F_ROMAN | F_MULTI):
            raise _syntax(
                '"EEEE" is incompatible with other formats',
                '"EEEE" may only be used together with digit and decimal point patterns.',
            )
        num.flag |= F_EEEE


def _parse(fmt: str, *, dch: bool, num: NumDesc | None = None) -> tuple[Node, ...]:
    """parse_format (not in the standard mode of the SQL/JSON datetime methods)."""
    index = _DCH_INDEX if dch else _NUM_INDEX
    nodes: list[Node] = []
    i, n = 0, len(fmt)
    while i < n:
        suffix = 0
        if dch:
            for name, sid in _PREFIXES:
                if fmt.startswith(name, i):
                    suffix |= sid
                    i += len(name)
                    break
        key = _kw_search(fmt, i, index) if i < n else None
        if key is not None:
            i += len(key.name)
            if num is not None:
                _num_prepare(num, key.id)
            if dch and i < n:
                for name, sid in _POSTFIXES:
                    if fmt.startswith(name, i):
                        suffix |= sid
                        i += len(name)
                        break
            nodes.append(Node(ACTION, key, suffix))
        elif i < n:
            c = fmt[i]
            if c == '"':
                i += 1
                while i < n:
                    if fmt[i] == '"':
                        i += 1
                        break
                    if fmt[i] == "\\" and i + 1 < n:
                        i += 1
                    nodes.append(Node(CHAR, char=fmt[i]))
                    i += 1
            else:
                if c == "\\" and i + 1 < n and fmt[i + 1] == '"':
                    i += 1
                    c = '"'
                if dch and _is_separator(c):
                    kind = SEPARATOR
                elif c in _C_SPACE:
                    kind = SPACE
                else:
                    kind = CHAR
                nodes.append(Node(kind, char=c))
                i += 1
    return tuple(nodes)


@functools.lru_cache(maxsize=256)
def parse_datetime_template(fmt: str) -> tuple[Node, ...]:
    """The nodes of a to_char/to_timestamp/to_date template (cached per template)."""
    return _parse(fmt, dch=True)


@functools.lru_cache(maxsize=256)
def _num_template(fmt: str) -> tuple[tuple[Node, ...], NumDesc]:
    num = NumDesc()
    return _parse(fmt, dch=False, num=num), num


def parse_number_template(fmt: str) -> tuple[tuple[Node, ...], NumDesc]:
    """The nodes and description of a number template (a fresh description each call:
    the processor changes it, as formatting.c changes its copy of the cached one)."""
    nodes, num = _num_template(fmt)
    return nodes, replace(num)


# ---------------------------------------------------------------- ordinal suffixes


def _get_th(num: str, upper: bool) -> str:
    """get_th: ST/ND/RD/TH for the last digit of ``num`` (teens take TH)."""
    if not num or not num[-1].isdigit() or not num[-1].isascii():
        raise PgError("22P02", f'"{num}" is not a number')
    last = num[-1]
    if len(num) > 1 and num[-2] == "1":
        last = "0"
    th = {"1": "st", "2": "nd", "3": "rd"}.get(last, "th")
    return th.upper() if upper else th


def _numth(s: str, suffix: int) -> str:
    if suffix & (S_TH | S_th):
        return s + _get_th(s, bool(suffix & S_TH))
    return s


# ------------------------------------------------------------------- to_char (time)

_MONTHS_FULL = ("January", "February", "March", "April", "May", "June", "July", "August",
                "September", "October", "November", "December")  # fmt: skip
_MONTHS = tuple(m[:3] for m in _MONTHS_FULL)
_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_DAYS_SHORT = tuple(d[:3] for d in _DAYS)
_RM_UPPER = ("XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I")
_RM_LOWER = tuple(r.lower() for r in _RM_UPPER)


@dataclass
class Tm:
    """formatting.c's ``struct fmt_tm`` with the fraction and zone name (TmToChar)."""

    year: int = 0
    mon: int = 1
    mday: int = 1
    hour: int = 0
    min: int = 0
    sec: int = 0
    wday: int = 0
    yday: int = 0
    gmtoff: int = 0
    fsec: int = 0
    tzn: str | None = None


def timestamp_tm(us: int, *, tz: bool) -> Tm:
    """timestamp2tm of a finite value in the proxy's units (microseconds from 1970-01-01),
    with the weekday and day of year to_char computes; timestamptz is in UTC."""
    day, tod = divmod(us, USECS_PER_DAY)
    jd = day + UNIX_EPOCH_JDATE
    y, m, d = cal.civil(day)
    sec, fsec = divmod(tod, 1_000_000)
    return Tm(
        year=y, mon=m, mday=d, hour=sec // 3600, min=sec // 60 % 60, sec=sec % 60,
        wday=(jd + 1) % 7, yday=jd - date2j(y, 1, 1) + 1, fsec=fsec, tzn="UTC" if tz else None,
    )  # fmt: skip


def interval_tm(months: int, days: int, us: int) -> Tm:
    """interval2itm, and the approximate day count interval_to_char puts in tm_yday."""
    year, mon = _cdiv(months, 12), _cmod(months, 12)
    hour = _cdiv(us, 3_600_000_000)
    us -= hour * 3_600_000_000
    minute = _cdiv(us, 60_000_000)
    us -= minute * 60_000_000
    sec = _cdiv(us, 1_000_000)
    us -= sec * 1_000_000
    yday = _i32(_i32(_i32(_i32(year * 12) + mon) * 30) + days)
    return Tm(year=year, mon=mon, mday=days, hour=hour, min=minute, sec=sec, yday=yday, fsec=us)


def _adjust_year(year: int, is_interval: bool) -> int:
    """ADJUST_YEAR: no year 0 (1 BC prints as 1); an interval's years as they are."""
    if is_interval:
        return year
    return -(year - 1) if year <= 0 else year


def _invalid_for_interval() -> PgError:
    return PgError(
        "22007", "invalid format specification for an interval value",
        hint="Intervals are not tied to specific calendar dates.",
    )  # fmt: skip


_INTERVAL_INVALID = frozenset(
    ["tz", "TZ", "TZH", "TZM", "OF", "A_D", "B_C", "AD", "BC", "a_d", "b_c", "ad", "bc", "MONTH", "Month", "month", "MON", "Mon", "mon", "DAY", "Day", "day", "DY", "Dy", "dy", "D", "ID"]
)


def _name(text: str, kid: str, suffix: int, upper: bool | None) -> str:
    """A month or day name: cased by the keyword, padded to 9 unless FM or TM (full names
    only; ``upper`` None is initial capital)."""
    out = text.upper() if upper else text.lower() if upper is False else text
    if kid in ("MONTH", "Month", "month", "DAY", "Day", "day") and not suffix & (S_FM | S_TM):
        out = out.ljust(9)
    return out


_CASE = {"MONTH": True, "Month": None, "month": False, "MON": True, "Mon": None, "mon": False,
         "DAY": True, "Day": None, "day": False, "DY": True, "Dy": None, "dy": False}  # fmt: skip


def dch_to_char(nodes: Sequence[Node], tm: Tm, is_interval: bool) -> str:
    """DCH_to_char: each node of a datetime template printed from ``tm``."""
    out: list[str] = []
    for n in nodes:
        if n.kind != ACTION:
            out.append(n.char)
            continue
        assert n.key is not None
        k, suf = n.key.id, n.suffix
        fm = bool(suf & S_FM)
        if is_interval and k in _INTERVAL_INVALID:
            raise _invalid_for_interval()
        pm = _cmod(tm.hour, 24) >= 12
        s: str
        if k in ("A_M", "P_M"):
            out.append("P.M." if pm else "A.M.")
        elif k in ("AM", "PM"):
            out.append("PM" if pm else "AM")
        elif k in ("a_m", "p_m"):
            out.append("p.m." if pm else "a.m.")
        elif k in ("am", "pm"):
            out.append("pm" if pm else "am")
        elif k in ("HH", "HH12"):
            h = _cmod(tm.hour, 12)
            s = _pad(12 if h == 0 else h, 0 if fm else 2 if tm.hour >= 0 else 3)
            out.append(_numth(s, suf))
        elif k == "HH24":
            out.append(_numth(_pad(tm.hour, 0 if fm else 2 if tm.hour >= 0 else 3), suf))
        elif k == "MI":
            out.append(_numth(_pad(tm.min, 0 if fm else 2 if tm.min >= 0 else 3), suf))
        elif k == "SS":
            out.append(_numth(_pad(tm.sec, 0 if fm else 2 if tm.sec >= 0 else 3), suf))
        elif k in ("FF1", "FF2", "FF3", "MS", "FF4", "FF5", "FF6", "US"):
            digits = {"FF1": 1, "FF2": 2, "FF3": 3, "MS": 3, "FF4": 4, "FF5": 5, "FF6": 6, "US": 6}[k]
            out.append(_numth(_pad(_cdiv(tm.fsec, 10 ** (6 - digits)), digits), suf))
        elif k == "SSSS":
            out.append(_numth(str(tm.hour * 3600 + tm.min * 60 + tm.sec), suf))
        elif k == "tz":
            if tm.tzn:
                out.append(tm.tzn.lower())
        elif k == "TZ":
            if tm.tzn:
                out.append(tm.tzn)
        elif k == "TZH":
            out.append(("+" if tm.gmtoff >= 0 else "-") + f"{abs(tm.gmtoff) // 3600:02d}")
        elif k == "TZM":
            out.append(f"{abs(tm.gmtoff) % 3600 // 60:02d}")
        elif k == "OF":
            s = ("+" if tm.gmtoff >= 0 else "-") + _pad(abs(tm.gmtoff) // 3600, 0 if fm else 2)
            if abs(tm.gmtoff) % 3600:
                s += f":{abs(tm.gmtoff) % 3600 // 60:02d}"
            out.append(s)
        elif k in ("A_D", "B_C"):
            out.append("B.C." if tm.year <= 0 else "A.D.")
        elif k in ("AD", "BC"):
            out.append("BC" if tm.year <= 0 else "AD")
        elif k in ("a_d", "b_c"):
            out.append("b.c." if tm.year <= 0 else "a.d.")
        elif k in ("ad", "bc"):
            out.append("bc" if tm.year <= 0 else "ad")
        elif k in ("MONTH", "Month", "month", "MON", "Mon", "mon"):
            if tm.mon:
                names = _MONTHS_FULL if len(k) == 5 else _MONTHS
                out.append(_name(names[tm.mon - 1], k, suf, _CASE[k]))
        elif k == "MM":
            out.append(_numth(_pad(tm.mon, 0 if fm else 2 if tm.mon >= 0 else 3), suf))
        elif k in ("DAY", "Day", "day", "DY", "Dy", "dy"):
            names = _DAYS if len(k) == 3 else _DAYS_SHORT
            out.append(_name(names[tm.wday], k, suf, _CASE[k]))
        elif k in ("DDD", "IDDD"):
            v = tm.yday if k == "DDD" else date2isoyearday(tm.year, tm.mon, tm.mday)
            out.append(_numth(_pad(v, 0 if fm else 3), suf))
        elif k == "DD":
            out.append(_numth(_pad(tm.mday, 0 if fm else 2), suf))
        elif k == "D":
            out.append(_numth(str(tm.wday + 1), suf))
        elif k == "ID":
            out.append(_numth(str(7 if tm.wday == 0 else tm.wday), suf))
        elif k == "WW":
            out.append(_numth(_pad(_cdiv(_i32(tm.yday - 1), 7) + 1, 0 if fm else 2), suf))
        elif k == "IW":
            out.append(_numth(_pad(date2isoweek(tm.year, tm.mon, tm.mday), 0 if fm else 2), suf))
        elif k == "Q":
            if tm.mon:
                out.append(_numth(str(_cdiv(tm.mon - 1, 3) + 1), suf))
        elif k == "CC":
            if is_interval:
                i = _cdiv(tm.year, 100)
            elif tm.year > 0:
                i = _cdiv(tm.year - 1, 100) + 1
            else:
                i = _cdiv(tm.year, 100) - 1
            s = _pad(i, 0 if fm else 2 if i >= 0 else 3) if -99 <= i <= 99 else str(i)
            out.append(_numth(s, suf))
        elif k == "Y_YYY":
            y = _adjust_year(tm.year, is_interval)
            i = _cdiv(y, 1000)
            out.append(_numth(f"{i},{_pad(y - i * 1000, 3)}", suf))
        elif k in ("YYYY", "IYYY", "YYY", "IYY", "YY", "IY", "Y", "I"):
            year = tm.year if k[0] == "Y" else date2isoyear(tm.year, tm.mon, tm.mday)
            y = _adjust_year(year, is_interval)
            digits = len(k)
            w_width = _adjust_year(tm.year, is_interval) >= 0
            if digits == 4:
                s = _pad(y, 0 if fm else 4 if w_width else 5)
            elif digits == 3:
                s = _pad(_cmod(y, 1000), 0 if fm else 3 if w_width else 4)
            elif digits == 2:
                s = _pad(_cmod(y, 100), 0 if fm else 2 if w_width else 3)
            else:
                s = str(_cmod(y, 10))
            out.append(_numth(s, suf))
        elif k in ("RM", "rm"):
            if tm.mon or tm.year:
                if tm.mon == 0:
                    mon = 0 if tm.year >= 0 else 11
                elif tm.mon < 0:
                    mon = -(tm.mon + 1)
                else:
                    mon = 12 - tm.mon
                name = (_RM_UPPER if k == "RM" else _RM_LOWER)[mon]
                out.append(name if fm else name.ljust(4))
        elif k == "W":
            out.append(_numth(str(_cdiv(_i32(tm.mday - 1), 7) + 1), suf))
        elif k == "J":
            out.append(_numth(str(date2j(tm.year, tm.mon, tm.mday)), suf))
        # FX (and anything else) prints nothing
    return "".join(out)


def timestamp_to_char(us: int, fmt: str, *, tz: bool, zone: pgtz.Zone | None = None) -> str | None:
    """to_char(timestamp[tz], text): NULL for an empty template or an infinite value; a
    timestamptz in the session's ``zone`` (None: UTC), whose offset and abbreviation at
    that instant OF, TZH, TZM and TZ print."""
    if not fmt or us >= cal.TS_POS_INF or us <= cal.TS_NEG_INF:
        return None
    if zone is None or not tz:
        return dch_to_char(parse_datetime_template(fmt), timestamp_tm(us, tz=tz), False)
    off = zone.utc_offset(us)
    tm = timestamp_tm(us + off * 1_000_000, tz=True)
    tm.gmtoff, tm.tzn = off, zone.abbrev(us)
    return dch_to_char(parse_datetime_template(fmt), tm, False)


def date_to_char_in_zone(days: int, fmt: str, zone: pgtz.Zone) -> str | None:
    """to_char(date, text) in a session zone other than UTC: the date's local midnight
    as a timestamptz (DetermineTimeZoneOffset's reading of it)."""
    if not fmt or days >= cal.DATE_POS_INF or days <= cal.DATE_NEG_INF:
        return None
    if days >= TIMESTAMP_END_JULIAN - UNIX_EPOCH_JDATE:
        raise PgError("22008", "date out of range for timestamp")
    return timestamp_to_char(zone.local_to_utc(days * USECS_PER_DAY), fmt, tz=True, zone=zone)


def date_to_char(days: int, fmt: str) -> str | None:
    """to_char(date, text), which PostgreSQL resolves to the timestamptz version (so a date
    past the timestamps' end, 294277-01-01, fails its cast)."""
    if not fmt or days >= cal.DATE_POS_INF or days <= cal.DATE_NEG_INF:
        return None
    if days >= TIMESTAMP_END_JULIAN - UNIX_EPOCH_JDATE:
        raise PgError("22008", "date out of range for timestamp")
    return dch_to_char(parse_datetime_template(fmt), timestamp_tm(days * USECS_PER_DAY, tz=True), False)


def interval_to_char(months: int, days: int, us: int, fmt: str) -> str | None:
    """to_char(interval, text) (and of time, which becomes an interval)."""
    if not fmt:
        return None
    return dch_to_char(parse_datetime_template(fmt), interval_tm(months, days, us), True)


# ---------------------------------------------------------------- to_char (numbers)


def _overflow_fill(pre: int, post: int) -> str:
    """The ``#`` string of a number too wide for its template, a ``.`` after ``pre``."""
    s = ["#"] * (pre + post + 1)
    s[pre] = "."
    return "".join(s)


def _eeee_fill(pre: int, post: int) -> str:
    """NaN or infinity under EEEE: ``#`` for sign, digits, point and exponent."""
    s = ["#"] * (pre + post + 6)
    s[0] = " "
    s[pre + 1] = "."
    return "".join(s)


_RN1 = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX")
_RN10 = ("X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC")
_RN100 = ("C", "CC", "CCC", "CD", "D", "DC", "DCC", "DCCC", "CM")


def int_to_roman(number: int) -> str:
    """int_to_roman: 1..3999 in upper-case Roman numerals, else fifteen ``#``."""
    if number > 3999 or number < 1:
        return "#" * 15
    th, rest = divmod(number, 1000)
    h, rest = divmod(rest, 100)
    t, u = divmod(rest, 10)
    return "M" * th + (_RN100[h - 1] if h else "") + (_RN10[t - 1] if t else "") + (_RN1[u - 1] if u else "")


def numeric_out_sci(v: nm.N, scale: int) -> str:
    """numeric_out_sci: one digit before the point, ``scale`` after (rounded half away
    from zero; a carry gives ``10.00e+01`` as PostgreSQL prints it), ``e±NN``."""
    if v.special:
        return nm.text(v)
    scale = max(scale, 0)
    exponent = 0 if v.m == 0 else nm._msd(v)
    sig = nm.round_to(nm.N(v.m, v.dscale + exponent), scale)
    return f"{nm.text(sig)}e{exponent:+03d}"


class _NumProc:
    """NUMProc, to_char side: lays a prepared digit string over the template."""

    def __init__(self, num: NumDesc, number: str, out_pre_spaces: int, sign: str) -> None:
        self.num = num
        self.number = number
        self.number_p = 0
        self.out: list[str] = []
        self.sign = sign
        self.sign_wrote = False
        self.num_in = False
        self.num_curr = 0
        self.num_count = 0
        self.out_pre_spaces = out_pre_spaces
        self.last_relevant: int | None = None

    def cur(self) -> str:
        return self.number[self.number_p] if self.number_p < len(self.number) else "\0"

    def predec_space(self) -> bool:
        """IS_PREDEC_SPACE: at a lone leading 0 before the point (``0.1`` as `` .1``)."""
        n = self.num
        return not n.has(F_ZERO) and self.number_p == 0 and self.number[:1] == "0" and n.post != 0

    def last_is_point(self) -> bool:
        return self.last_relevant is not None and self.number[self.last_relevant] == "."

    def numpart(self, kid: str) -> None:
        """NUM_numpart_to_char: a digit, blank, zero or point, with the sign where the
        first digit goes and the closing bracket or trailing sign after the last."""
        n = self.num
        if n.has(F_ROMAN):
            return
        self.num_in = False
        if (
            not self.sign_wrote
            and (self.num_curr >= self.out_pre_spaces or (n.has(F_ZERO) and n.zero_start == self.num_curr))
            and (not self.predec_space() or self.last_is_point())
        ):
            if n.has(F_LSIGN):
                if n.lsign == LSIGN_PRE:
                    self.out.append("-" if self.sign == "-" else "+")
                    self.sign_wrote = True
            elif n.has(F_BRACKET):
                self.out.append(" " if self.sign == "+" else "<")
                self.sign_wrote = True
            elif self.sign == "+":
                if not n.has(F_FILLMODE):
                    self.out.append(" ")
                self.sign_wrote = True
            elif self.sign == "-":
                self.out.append("-")
                self.sign_wrote = True
        if kid in ("9", "0", "D", "DEC"):
            if self.num_curr < self.out_pre_spaces and (n.zero_start > self.num_curr or not n.has(F_ZERO)):
                if not n.has(F_FILLMODE):
                    self.out.append(" ")
            elif n.has(F_ZERO) and self.num_curr < self.out_pre_spaces and n.zero_start <= self.num_curr:
                self.out.append("0")
                self.num_in = True
            else:
                c = self.cur()
                if c == ".":
                    if not self.last_is_point() or n.has(F_FILLMODE):
                        self.out.append(".")
                elif self.last_relevant is not None and self.number_p > self.last_relevant and kid != "0":
                    pass
                elif self.predec_space():
                    if not n.has(F_FILLMODE):
                        self.out.append(" ")
                    elif self.last_is_point():
                        self.out.append("0")
                else:
                    self.out.append(c)
                    self.num_in = True
                if self.number_p < len(self.number):
                    self.number_p += 1
            end = self.num_count + (1 if self.out_pre_spaces else 0) + (1 if n.has(F_DECIMAL) else 0)
            if self.last_relevant is not None and self.last_relevant == self.number_p:
                end = self.num_curr
            if self.num_curr + 1 == end:
                if self.sign_wrote and n.has(F_BRACKET):
                    self.out.append(" " if self.sign == "+" else ">")
                elif n.has(F_LSIGN) and n.lsign == LSIGN_POST:
                    self.out.append("-" if self.sign == "-" else "+")
        self.num_curr += 1


def _last_relevant_decnum(num: str) -> int | None:
    """get_last_relevant_decnum: the last non-zero digit after the point (or the point)."""
    p = num.find(".")
    if p < 0:
        return None
    result = p
    for i in range(p + 1, len(num)):
        if num[i] != "0":
            result = i
    return result


def _num_to_char(nodes: Sequence[Node], num: NumDesc, number: str, out_pre_spaces: int, sign: str) -> str:
    """NUM_processor for to_char; the result ends at the first NUL, as the C string does."""
    if num.zero_start:
        num.zero_start -= 1
    if num.has(F_EEEE):
        return number
    if num.has(F_ROMAN):
        num.lsign = num.pre_lsign_num = num.post = num.pre = 0
        num.flag = (F_FILLMODE if num.has(F_FILLMODE) else 0) | F_ROMAN
    np = _NumProc(num, number, out_pre_spaces, sign)
    if num.has(F_PLUS) or num.has(F_MINUS):
        np.sign_wrote = not (num.has(F_PLUS) and not num.has(F_MINUS))
    else:
        if sign != "-" and num.has(F_FILLMODE):
            num.flag &= ~F_BRACKET
        np.sign_wrote = sign == "+" and num.has(F_FILLMODE) and not num.has(F_LSIGN)
        if num.lsign == LSIGN_PRE and num.pre == num.pre_lsign_num:
            num.lsign = LSIGN_POST
    np.num_count = num.post + num.pre - 1
    if num.has(F_FILLMODE) and num.has(F_DECIMAL):
        np.last_relevant = _last_relevant_decnum(number)
        if np.last_relevant is not None and num.zero_end > out_pre_spaces:
            last_zero = min(len(number) - 1, num.zero_end - out_pre_spaces)
            if np.last_relevant < last_zero:
                np.last_relevant = last_zero
    if not np.sign_wrote and out_pre_spaces == 0:
        np.num_count += 1
    out = np.out
    for n in nodes:
        if n.kind != ACTION:
            out.append(n.char)
            continue
        assert n.key is not None
        k = n.key.id
        fill = num.has(F_FILLMODE)
        if k in ("9", "0", "DEC", "D"):
            np.numpart(k)
        elif k in ("COMMA", "G"):
            if not np.num_in:
                if not fill:
                    out.append(" ")
            else:
                out.append(",")
        elif k == "L":
            out.append(" ")
        elif k in ("RN", "rn"):
            r = number[np.number_p :]
            r = r if k == "RN" else r.lower()
            out.append(r if fill else r.rjust(15))
        elif k in ("TH", "th"):
            if num.has(F_ROMAN) or number[:1] == "#" or np.sign == "-" or num.has(F_DECIMAL):
                continue
            out.append(_get_th(number, k == "TH"))
        elif k == "MI":
            if np.sign == "-":
                out.append("-")
            elif not fill:
                out.append(" ")
        elif k == "PL":
            if np.sign == "+":
                out.append("+")
            elif not fill:
                out.append(" ")
        elif k == "SG":
            out.append(np.sign or "\0")
    text = "".join(out)
    nul = text.find("\0")
    return text if nul < 0 else text[:nul]


def _digits_layout(digits: str, post: int, pre: int, *, pre_len: int | None = None) -> tuple[str, int]:
    """The digit string and the blanks before it, or the ``#`` fill when the integer part
    has more digits than the template."""
    p = pre_len if pre_len is not None else (digits.find(".") if "." in digits else len(digits))
    if p < pre:
        return digits, pre - p
    if p > pre:
        return _overflow_fill(pre, post), 0
    return digits, 0


def int_to_char(value: int, fmt: str, *, bits: int) -> str:
    """to_char(int4|int8, text) (int2 arrives as int4)."""
    if not fmt:
        return ""
    nodes, num = parse_number_template(fmt)
    sign, pre_spaces = "", 0
    if num.has(F_ROMAN):
        if bits == 64 and not INT32_MIN <= value <= INT32_MAX:
            raise PgError("22003", "integer out of range")
        numstr = int_to_roman(value)
    elif num.has(F_EEEE):
        if bits == 32:
            numstr = _fmt_float(float(value), num.post, "e", force_sign=True)
            if numstr[0] == "+":
                numstr = " " + numstr[1:]
        else:
            numstr = numeric_out_sci(nm.N(value), num.post)
            if numstr[0] != "-":
                numstr = " " + numstr
    else:
        if num.has(F_MULTI):
            if bits == 32:
                factor = 10**num.multi if num.multi <= 9 else INT32_MIN  # (int32) pow(10, n) on x86
                value = _i32(value * factor)
            else:
                if num.multi > 18:  # dtoi8 of pow(10, n)
                    raise PgError("22003", "bigint out of range")
                value *= 10**num.multi
                if not INT64_MIN <= value <= INT64_MAX:
                    raise PgError("22003", "bigint out of range")
            num.pre += num.multi
        sign = "-" if value < 0 else "+"
        org = str(abs(value))
        digits = org + "." + "0" * num.post if num.post else org
        numstr, pre_spaces = _digits_layout(digits, num.post, num.pre, pre_len=len(org))
    return _num_to_char(nodes, num, numstr, pre_spaces, sign)


def float_to_char(value: float, fmt: str, *, float4: bool) -> str:
    """to_char(float4|float8, text): ``%.*f`` digits, at most FLT_DIG/DBL_DIG of them."""
    if not fmt:
        return ""
    nodes, num = parse_number_template(fmt)
    sign, pre_spaces = "", 0
    if num.has(F_ROMAN):
        r = float(round(value)) if math.isfinite(value) else value  # rint: half to even
        fits = not math.isnan(r) and -(2.0**31) <= r < 2.0**31
        numstr = int_to_roman(int(r) if fits else INT32_MAX)
    elif num.has(F_EEEE):
        if math.isnan(value) or math.isinf(value):
            numstr = _eeee_fill(num.pre, num.post)
        else:
            numstr = _fmt_float(value, num.post, "e", force_sign=True)
            if numstr[0] == "+":
                numstr = " " + numstr[1:]
    else:
        val = value
        if num.has(F_MULTI):
            if float4:
                val = _f32(value * _f32(math.pow(10, num.multi)))
            else:
                try:
                    val = value * math.pow(10, num.multi)
                except OverflowError:
                    val = math.copysign(math.inf, value) if value else math.nan
            num.pre += num.multi
        dig = 6 if float4 else 15
        pre_len = len(_fmt_float(abs(val), 0, "f"))
        if pre_len >= dig:
            num.post = 0
        elif pre_len + num.post > dig:
            num.post = dig - pre_len
        org = _fmt_float(val, num.post, "f")
        if org[0] == "-":
            sign, digits = "-", org[1:]
        else:
            sign, digits = "+", org
        numstr, pre_spaces = _digits_layout(digits, num.post, num.pre)
    return _num_to_char(nodes, num, numstr, pre_spaces, sign)


def numeric_to_char(value: nm.N, fmt: str) -> str:
    """to_char(numeric, text): the value rounded half away from zero to the template's
    fraction digits, every digit exact."""
    if not fmt:
        return ""
    nodes, num = parse_number_template(fmt)
    sign, pre_spaces = "", 0
    if num.has(F_ROMAN):
        x = nm.round_to(value, 0)
        if x.special == "nan":
            raise PgError("0A000", "cannot convert NaN to integer")
        if x.special:
            raise PgError("0A000", "cannot convert infinity to integer")
        if not INT32_MIN <= x.m <= INT32_MAX:
            raise PgError("22003", "integer out of range")
        numstr = int_to_roman(x.m)
    elif num.has(F_EEEE):
        org = numeric_out_sci(value, num.post)
        if org in ("NaN", "Infinity", "-Infinity"):
            numstr = _eeee_fill(num.pre, num.post)
        else:
            numstr = org if org[0] == "-" else " " + org
    else:
        val = value
        if num.has(F_MULTI):
            val = nm.mul(value, nm.power(nm.N(10), nm.N(num.multi)))
            num.pre += num.multi
        org = nm.text(nm.round_to(val, num.post))
        if org[0] == "-":
            sign, digits = "-", org[1:]
        else:
            sign, digits = "+", org
        numstr, pre_spaces = _digits_layout(digits, num.post, num.pre)
    return _num_to_char(nodes, num, numstr, pre_spaces, sign)


# ------------------------------------------------------------------------ to_number


def _mblen(data: bytes, i: int) -> int:
    """pg_mblen of UTF-8 at ``i`` (1 past the end, as for the terminating NUL)."""
    if i >= len(data):
        return 1
    c = data[i]
    if c < 0x80:
        return 1
    if c & 0xE0 == 0xC0:
        return 2
    if c & 0xF0 == 0xE0:
        return 3
    if c & 0xF8 == 0xF0:
        return 4
    return 1


_DIGITS = b"0123456789"


class _NumReader:
    """NUMProc, to_number side: reads a number out of the input's bytes."""

    def __init__(self, num: NumDesc, data: bytes) -> None:
        self.num = num
        self.data = data
        self.p = 0
        self.number = [" "]
        self.read_dec = False
        self.read_post = 0
        self.read_pre = 0

    def at(self, i: int) -> int:
        return self.data[i] if i < len(self.data) else 0

    def overload(self) -> bool:
        return self.p >= len(self.data)

    def amount(self, s: int) -> bool:
        return self.p <= len(self.data) - s

    def numpart(self, kid: str) -> None:
        """NUM_numpart_from_char: a sign before the first digit, a digit or the point,
        and a sign right after the last digit."""
        n = self.num
        if self.overload():
            return
        if self.at(self.p) == 0x20:
            self.p += 1
        if self.overload():
            return
        if self.number[0] == " " and kid in ("0", "9") and self.read_pre + self.read_post == 0:
            c = self.at(self.p)
            if n.has(F_LSIGN) and n.lsign == LSIGN_PRE:
                if self.amount(1) and c == 0x2D:
                    self.p += 1
                    self.number[0] = "-"
                elif self.amount(1) and c == 0x2B:
                    self.p += 1
                    self.number[0] = "+"
            elif c == 0x2D or (n.has(F_BRACKET) and c == 0x3C):
                self.number[0] = "-"
                self.p += 1
            elif c == 0x2B:
                self.number[0] = "+"
                self.p += 1
        if self.overload():
            return
        isread = False
        c = self.at(self.p)
        if c in _DIGITS:
            if self.read_dec and self.read_post == n.post:
                return
            self.number.append(chr(c))
            if self.read_dec:
                self.read_post += 1
            else:
                self.read_pre += 1
            isread = True
        elif n.has(F_DECIMAL) and not self.read_dec and self.amount(1) and c == 0x2E:
            self.number.append(".")
            self.read_dec = True
            isread = True
        if self.overload():
            return
        if self.number[0] == " " and self.read_pre + self.read_post > 0:
            if n.has(F_LSIGN) and isread and self.p + 1 < len(self.data) and self.at(self.p + 1) not in _DIGITS:
                tmp = self.p
                self.p += 1
                if self.amount(1) and self.at(self.p) == 0x2D:
                    self.number[0] = "-"
                elif self.amount(1) and self.at(self.p) == 0x2B:
                    self.number[0] = "+"
                if self.number[0] == " ":
                    self.p = tmp
            elif not isread and not n.has(F_LSIGN) and (n.has(F_PLUS) or n.has(F_MINUS)):
                c = self.at(self.p)
                if c in (0x2D, 0x2B):
                    self.number[0] = chr(c)

    def eat_non_data(self, count: int) -> None:
        """NUM_eat_non_data_chars: skip up to ``count`` characters that are not digits,
        points, commas or signs."""
        for _ in range(count):
            if self.overload() or self.at(self.p) in b"0123456789.,+-":
                break
            self.p += _mblen(self.data, self.p)


def to_number(text: str, fmt: str) -> str | None:
    """to_number(text, text): the numeric read as the template says, as numeric text."""
    if not fmt:
        return None
    nodes, num = parse_number_template(fmt)
    if num.zero_start:
        num.zero_start -= 1
    if num.has(F_EEEE):
        raise PgError("0A000", '"EEEE" not supported for input')
    if num.has(F_ROMAN):
        raise PgError("0A000", '"RN" not supported for input')
    r = _NumReader(num, text.encode())
    for n in nodes:
        if r.overload():
            break
        if n.kind != ACTION:
            r.p += _mblen(r.data, r.p)
            continue
        assert n.key is not None
        k = n.key.id
        if k in ("9", "0", "DEC", "D"):
            r.numpart(k)
        elif k == "COMMA":
            if num.has(F_FILLMODE) or r.at(r.p) != 0x2C:
                continue
        elif k == "G":
            if num.has(F_FILLMODE) or not (r.amount(1) and r.at(r.p) == 0x2C):
                continue
        elif k == "L":
            r.eat_non_data(1)
            continue
        elif k in ("TH", "th"):
            if num.has(F_DECIMAL):
                continue
            r.eat_non_data(2)
            continue
        elif k == "MI":
            if r.at(r.p) == 0x2D:
                r.number[0] = "-"
            else:
                r.eat_non_data(1)
                continue
        elif k == "PL":
            if r.at(r.p) == 0x2B:
                r.number[0] = "+"
            else:
                r.eat_non_data(1)
                continue
        elif k == "SG":
            c = r.at(r.p)
            if c in (0x2D, 0x2B):
                r.number[0] = chr(c)
            else:
                r.eat_non_data(1)
                continue
        else:
            continue
        r.p += 1
    digits = r.number
    if len(digits) > 1 and digits[-1] == ".":
        digits = digits[:-1]
    numstr = "".join(digits)
    scale = r.read_post
    precision = num.pre + num.multi + scale
    if scale > 1000 or precision > 0xFFFF:
        raise PgError("0A000", "to_number() with more than 1000 fraction digits is not supported by walsender-proxy")
    out = numeric_text_in(numstr, (precision, scale))
    if num.has(F_MULTI):
        out = nm.text(nm.mul(nm.parse(out), nm.power(nm.N(10), nm.N(-num.multi))))
    return out


# ------------------------------------------------------- to_timestamp and to_date


@dataclass
class _FromChar:
    """TmFromChar: the fields a datetime template reads."""

    mode: int = _NONE
    hh: int = 0
    pm: int = 0
    mi: int = 0
    ss: int = 0
    ssss: int = 0
    d: int = 0
    dd: int = 0
    ddd: int = 0
    mm: int = 0
    ms: int = 0
    year: int = 0
    bc: int = 0
    ww: int = 0
    w: int = 0
    cc: int = 0
    j: int = 0
    us: int = 0
    yysz: int = 0
    clock12: bool = False
    tzsign: int = 0
    tzh: int = 0
    tzm: int = 0
    ff: int = 0


def _dt_format(msg: str, *, detail: str | None = None, hint: str | None = None) -> PgError:
    return PgError("22007", msg, detail=detail, hint=hint)


def _field_overflow(text: str) -> PgError:
    return PgError("22008", f'date/time field value out of range: "{text}"')


_FM_HINT = 'If your source string is not fixed-width, try using the "FM" modifier.'


def _bstr(b: bytes) -> str:
    return b.decode("utf-8", errors="replace")


class _DateReader:
    """DCH_from_char over the input's bytes."""

    def __init__(self, nodes: Sequence[Node], data: bytes) -> None:
        self.nodes = nodes
        self.data = data
        self.s = 0
        self.out = _FromChar()
        #: characters skipped beyond what the template's separators account for
        self.extra_skip = 0

    def at(self, i: int) -> int:
        return self.data[i] if 0 <= i < len(self.data) else 0

    def is_next_separator(self, idx: int) -> bool:
        n = self.nodes[idx]
        if n.kind == ACTION and n.suffix & (S_TH | S_th):
            return True
        if idx + 1 >= len(self.nodes):
            return True
        nxt = self.nodes[idx + 1]
        if nxt.kind == ACTION:
            assert nxt.key is not None
            return not nxt.key.is_digit
        return not (len(nxt.char) == 1 and "0" <= nxt.char <= "9")

    def strtol(self, data: bytes, i: int) -> tuple[int, int, bool]:
        """strtol(…, 10): value, end position (``i`` when no digits), overflow."""
        j = i
        while j < len(data) and data[j] in b" \t\n\v\f\r":
            j += 1
        neg = False
        if j < len(data) and data[j] in b"+-":
            neg = data[j] == 0x2D
            j += 1
        k = j
        while k < len(data) and data[k] in _DIGITS:
            k += 1
        if k == j:
            return 0, i, False
        v = -int(data[j:k]) if neg else int(data[j:k])
        if v > LONG_MAX:
            return LONG_MAX, k, True
        if v < LONG_MIN:
            return LONG_MIN, k, True
        return v, k, False

    def set_int(self, attr: str, value: int, node: Node) -> None:
        """from_char_set_int: a field read twice must read the same."""
        cur = getattr(self.out, attr)
        if cur != 0 and cur != value:
            assert node.key is not None
            raise _dt_format(
                f'conflicting values for "{node.key.name}" field in formatting string',
                detail="This value contradicts a previous setting for the same field type.",
            )
        setattr(self.out, attr, value)

    def parse_int(self, attr: str | None, length: int, idx: int) -> int:
        """from_char_parse_int_len: a fixed-width integer, or as many digits as there
        are under FM or before a non-digit node; the characters consumed."""
        node = self.nodes[idx]
        assert node.key is not None
        name = node.key.name
        init = self.s
        while self.s < len(self.data) and self.data[self.s] in b" \t\n\v\f\r":
            self.s += 1
        copy = self.data[self.s : self.s + length]
        used = len(self.data) - self.s
        if node.suffix & S_FM or self.is_next_separator(idx):
            result, end, ovf = self.strtol(self.data, init)
            self.s = end
        else:
            if used < length:
                raise _dt_format(
                    f'source string too short for "{name}" formatting field',
                    detail=f"Field requires {length} characters, but only {used} remain.", hint=_FM_HINT,
                )  # fmt: skip
            result, last, ovf = self.strtol(copy, 0)
            if 0 < last < length:
                raise _dt_format(
                    f'invalid value "{_bstr(copy)}" for "{name}"',
                    detail=f"Field requires {length} characters, but only {last} could be parsed.", hint=_FM_HINT,
                )  # fmt: skip
            self.s += last
        if self.s == init:
            raise _dt_format(f'invalid value "{_bstr(copy)}" for "{name}"', detail="Value must be an integer.")
        if ovf or not INT32_MIN <= result <= INT32_MAX:
            raise PgError(
                "22008", f'value for "{name}" in source string is out of range',
                detail=f"Value must be in the range {INT32_MIN} to {INT32_MAX}.",
            )  # fmt: skip
        if attr is not None:
            self.set_int(attr, result, node)
        return self.s - init

    def seq_search(self, array: Sequence[str], idx: int) -> int:
        """from_char_seq_search: the first entry the input starts with, ignoring case."""
        rest = self.data[self.s :]
        low = rest.lower()
        for i, cand in enumerate(array):
            c = cand.encode().lower()
            if low.startswith(c):
                self.s += len(c)
                return i
        cut = len(rest)
        for j, b in enumerate(rest):
            if b in b" \t\n\r\f":
                cut = j
                break
        key = self.nodes[idx].key
        assert key is not None
        raise _dt_format(
            f'invalid value "{_bstr(rest[:cut])}" for "{key.name}"',
            detail="The given value did not match any of the allowed values for this field.",
        )

    def skip_th(self, suffix: int) -> None:
        if suffix & (S_TH | S_th):
            for _ in range(2):
                if self.s < len(self.data):
                    self.s += _mblen(self.data, self.s)

    def run(self) -> _FromChar:
        out = self.out
        data = self.data
        fx = False
        for idx, n in enumerate(self.nodes):
            if self.s >= len(data):
                break
            if not fx and (n.kind != ACTION or (n.key is not None and n.key.id != "FX")) and (n.kind == ACTION or idx == 0):
                while self.s < len(data) and data[self.s] in b" \t\n\v\f\r":
                    self.s += 1
                    self.extra_skip += 1
            if n.kind in (SPACE, SEPARATOR):
                if not fx:
                    self.extra_skip -= 1
                    c = self.at(self.s)
                    if c and (c in b" \t\n\v\f\r" or (0x20 < c < 0x7F and not chr(c).isalnum())):
                        self.s += 1
                        self.extra_skip += 1
                else:
                    self.s += _mblen(data, self.s)
                continue
            if n.kind != ACTION:
                if not fx and self.extra_skip > 0:
                    self.extra_skip -= 1
                else:
                    self.s += _mblen(data, self.s)
                continue
            key = n.key
            assert key is not None
            if key.mode != _NONE:
                if out.mode == _NONE:
                    out.mode = key.mode
                elif out.mode != key.mode:
                    raise _dt_format(
                        "invalid combination of date conventions",
                        hint="Do not mix Gregorian and ISO week date conventions in a formatting template.",
                    )
            self.field(key.id, idx, n)
            if key.id == "FX":
                fx = True
            if not fx:
                self.extra_skip = 0
                while self.s < len(data) and data[self.s] in b" \t\n\v\f\r":
                    self.s += 1
                    self.extra_skip += 1
        return out

    def field(self, k: str, idx: int, n: Node) -> None:
        """One keyword of DCH_from_char's switch."""
        out = self.out
        assert n.key is not None
        if k == "FX":
            return
        if k in ("A_M", "P_M", "a_m", "p_m", "AM", "PM", "am", "pm"):
            longs = "_" in k
            value = self.seq_search(("a.m.", "p.m.", "A.M.", "P.M.") if longs else ("am", "pm", "AM", "PM"), idx)
            self.set_int("pm", value % 2, n)
            out.clock12 = True
        elif k in ("HH", "HH12", "HH24"):
            self.parse_int("hh", 2, idx)
            if k != "HH24":
                out.clock12 = True
            self.skip_th(n.suffix)
        elif k in ("MI", "SS"):
            self.parse_int(k.lower(), 2, idx)
            self.skip_th(n.suffix)
        elif k == "MS":
            length = self.parse_int("ms", 3, idx)
            out.ms = _i32(out.ms * (100 if length == 1 else 10 if length == 2 else 1))
            self.skip_th(n.suffix)
        elif k in ("FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "US"):
            if k != "US":
                out.ff = int(k[2])
            length = self.parse_int("us", 6 if k == "US" else out.ff, idx)
            mult = {1: 100000, 2: 10000, 3: 1000, 4: 100, 5: 10}.get(length, 1)
            out.us = _i32(out.us * mult)
            self.skip_th(n.suffix)
        elif k == "SSSS":
            self.parse_int("ssss", len(n.key.name), idx)
            self.skip_th(n.suffix)
        elif k in ("tz", "TZ", "OF"):
            raise PgError("0A000", f'formatting field "{n.key.name}" is only supported in to_char')
        elif k == "TZH":
            c = self.at(self.s)
            if c in (0x2B, 0x2D, 0x20):
                out.tzsign = -1 if c == 0x2D else 1
                self.s += 1
            elif self.extra_skip > 0 and self.at(self.s - 1) == 0x2D:
                out.tzsign = -1  # the minus the skipping took for a separator
            else:
                out.tzsign = 1
            self.parse_int("tzh", 2, idx)
        elif k == "TZM":
            if not out.tzsign:
                out.tzsign = 1
            self.parse_int("tzm", 2, idx)
        elif k in ("A_D", "B_C", "a_d", "b_c", "AD", "BC", "ad", "bc"):
            longs = "_" in k
            value = self.seq_search(("a.d.", "b.c.", "A.D.", "B.C.") if longs else ("ad", "bc", "AD", "BC"), idx)
            self.set_int("bc", value % 2, n)
        elif k in ("MONTH", "Month", "month"):
            self.set_int("mm", self.seq_search(_MONTHS_FULL, idx) + 1, n)
        elif k in ("MON", "Mon", "mon"):
            self.set_int("mm", self.seq_search(_MONTHS, idx) + 1, n)
        elif k == "MM":
            self.parse_int("mm", 2, idx)
            self.skip_th(n.suffix)
        elif k in ("DAY", "Day", "day", "DY", "Dy", "dy"):
            value = self.seq_search(_DAYS if len(k) == 3 else _DAYS_SHORT, idx)
            self.set_int("d", value, n)
            out.d += 1
        elif k in ("DDD", "IDDD"):
            self.parse_int("ddd", 3, idx)
            self.skip_th(n.suffix)
        elif k == "DD":
            self.parse_int("dd", 2, idx)
            self.skip_th(n.suffix)
        elif k == "D":
            self.parse_int("d", 1, idx)
            self.skip_th(n.suffix)
        elif k == "ID":
            self.parse_int("d", 1, idx)
            out.d = _i32(out.d + 1)
            if out.d > 7:
                out.d = 1
            self.skip_th(n.suffix)
        elif k in ("WW", "IW"):
            self.parse_int("ww", 2, idx)
            self.skip_th(n.suffix)
        elif k == "Q":
            self.parse_int(None, 1, idx)
            self.skip_th(n.suffix)
        elif k == "CC":
            self.parse_int("cc", 2, idx)
            self.skip_th(n.suffix)
        elif k == "Y_YYY":
            self._y_yyy(n)
            self.skip_th(n.suffix)
        elif k in ("YYYY", "IYYY"):
            self.parse_int("year", 4, idx)
            out.yysz = 4
            self.skip_th(n.suffix)
        elif k in ("YYY", "IYY", "YY", "IY", "Y", "I"):
            size = len(k)
            length = self.parse_int("year", size, idx)
            if length < 4:
                out.year = _adjust_partial_year(out.year)
            out.yysz = size
            self.skip_th(n.suffix)
        elif k in ("RM", "rm"):
            self.set_int("mm", 12 - self.seq_search(_RM_LOWER, idx), n)
        elif k == "W":
            self.parse_int("w", 1, idx)
            self.skip_th(n.suffix)
        elif k == "J":
            self.parse_int("j", 1, idx)
            self.skip_th(n.suffix)

    def _y_yyy(self, n: Node) -> None:
        """``sscanf(s, "%d,%03d%n")``: thousands, a comma, then up to three characters."""
        data, i = self.data, self.s
        millennia, i1, ok1 = _scanf_int(data, i, None)
        matched = 0
        years = 0
        end = i
        if ok1:
            matched = 1
            if i1 < len(data) and data[i1] == 0x2C:
                years, i2, ok2 = _scanf_int(data, i1 + 1, 3)
                if ok2:
                    matched, end = 2, i2
        if matched < 2:
            raise _dt_format('invalid input string for "Y,YYY"')
        years = _i32(years + _i32(millennia * 1000))
        self.set_int("year", years, n)
        self.out.yysz = 4
        self.s = end


def _scanf_int(data: bytes, i: int, width: int | None) -> tuple[int, int, bool]:
    """scanf's ``%d`` (``%03d`` with a width): blanks, a sign, digits; the value as an int."""
    while i < len(data) and data[i] in b" \t\n\v\f\r":
        i += 1
    j = i
    limit = len(data) if width is None else min(len(data), i + width)
    if j < limit and data[j] in b"+-":
        j += 1
    k = j
    while k < limit and data[k] in _DIGITS:
        k += 1
    if k == j:
        return 0, i, False
    v = int(data[j:k])
    if data[i] == 0x2D:
        v = -v
    v = max(LONG_MIN, min(LONG_MAX, v))
    return _i32(v), k, True


def _adjust_partial_year(year: int) -> int:
    """adjust_partial_year_to_2020: two- and three-digit years near 2020."""
    if year < 70:
        return year + 2000
    if year < 100:
        return year + 1900
    if year < 520:
        return year + 2000
    if year < 1000:
        return year + 1000
    return year


_YSUM = (
    (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365),
    (0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366),
)
_DAY_TAB = (
    (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31),
    (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31),
)


@dataclass
class _Parsed:
    """do_to_timestamp's results: a pg_tm, the fraction, the zone offset, FFn."""

    year: int = 0
    mon: int = 1
    mday: int = 1
    hour: int = 0
    min: int = 0
    sec: int = 0
    fsec: int = 0
    gmtoff: int | None = None
    fprec: int = 0
    fields: dict[str, int] = field(default_factory=dict)


def do_to_timestamp(text: str, fmt: str) -> _Parsed:
    """do_to_timestamp: the template's fields read from ``text`` and combined into a date
    and time as PostgreSQL 15 combines them (C int arithmetic included)."""
    tm = _Parsed()
    tmfc = _DateReader(parse_datetime_template(fmt), text.encode()).run() if fmt else _FromChar()
    fmask_year = fmask_mon = fmask_day = False
    if tmfc.ssss:
        x = tmfc.ssss
        tm.hour = _cdiv(x, 3600)
        x = _cmod(x, 3600)
        tm.min = _cdiv(x, 60)
        tm.sec = _cmod(x, 60)
    if tmfc.ss:
        tm.sec = tmfc.ss
    if tmfc.mi:
        tm.min = tmfc.mi
    if tmfc.hh:
        tm.hour = tmfc.hh
    if tmfc.clock12:
        if tm.hour < 1 or tm.hour > 12:
            raise _dt_format(
                f'hour "{tm.hour}" is invalid for the 12-hour clock',
                hint="Use the 24-hour clock, or give an hour between 1 and 12.",
            )
        if tmfc.pm and tm.hour < 12:
            tm.hour += 12
        elif not tmfc.pm and tm.hour == 12:
            tm.hour = 0
    if tmfc.year:
        if tmfc.cc and tmfc.yysz <= 2:
            if tmfc.bc:
                tmfc.cc = _i32(-tmfc.cc)
            tm.year = _cmod(tmfc.year, 100)
            if tm.year:
                if tmfc.cc >= 0:
                    tm.year = _i32(tm.year + _i32((tmfc.cc - 1) * 100))
                else:
                    tm.year = _i32(_i32(_i32((tmfc.cc + 1) * 100) - tm.year) + 1)
            else:
                tm.year = _i32(_i32(tmfc.cc * 100) + (0 if tmfc.cc >= 0 else 1))
        else:
            tm.year = tmfc.year
            if tmfc.bc:
                tm.year = _i32(-tm.year)
            if tm.year < 0:
                tm.year += 1
        fmask_year = True
    elif tmfc.cc:
        if tmfc.bc:
            tmfc.cc = _i32(-tmfc.cc)
        if tmfc.cc >= 0:
            tm.year = _i32(_i32((tmfc.cc - 1) * 100) + 1)
        else:
            tm.year = _i32(_i32(tmfc.cc * 100) + 1)
        fmask_year = True
    if tmfc.j:
        tm.year, tm.mon, tm.mday = j2date(tmfc.j)
        fmask_year = fmask_mon = fmask_day = True
    if tmfc.ww:
        if tmfc.mode == _ISO:
            jday = isoweek2j(tm.year, tmfc.ww)
            if tmfc.d:
                jday = _i32(jday + (tmfc.d - 2 if tmfc.d > 1 else 6))
            tm.year, tm.mon, tm.mday = j2date(jday)
            fmask_year = fmask_mon = fmask_day = True
        else:
            tmfc.ddd = _i32(_i32(_i32(tmfc.ww - 1) * 7) + 1)
    if tmfc.w:
        tmfc.dd = _i32(_i32(_i32(tmfc.w - 1) * 7) + 1)
    if tmfc.dd:
        tm.mday = tmfc.dd
        fmask_day = True
    if tmfc.mm:
        tm.mon = tmfc.mm
        fmask_mon = True
    if tmfc.ddd and (tm.mon <= 1 or tm.mday <= 1):
        if not tm.year and not tmfc.bc:
            raise _dt_format("cannot calculate day of year without year information")
        if tmfc.mode == _ISO:
            j0 = _i32(isoweek2j(tm.year, 1) - 1)
            tm.year, tm.mon, tm.mday = j2date(_i32(j0 + tmfc.ddd))
            fmask_year = fmask_mon = fmask_day = True
        else:
            y = _YSUM[_isleap(tm.year)]
            i = 1
            while i <= 12:
                if tmfc.ddd <= y[i]:
                    break
                i += 1
            if tm.mon <= 1:
                tm.mon = i
            if tm.mday <= 1:
                tm.mday = _i32(tmfc.ddd - y[i - 1])
            fmask_mon = fmask_day = True
    if tmfc.ms:
        tm.fsec = _i32(tm.fsec + _i32(tmfc.ms * 1000))
    if tmfc.us:
        tm.fsec = _i32(tm.fsec + tmfc.us)
    tm.fprec = tmfc.ff
    if fmask_year or fmask_mon or fmask_day:
        if fmask_mon and not 1 <= tm.mon <= 12:
            raise _field_overflow(text)
        if fmask_day and not 1 <= tm.mday <= 31:
            raise _field_overflow(text)
        if fmask_year and fmask_mon and fmask_day and tm.mday > _DAY_TAB[_isleap(tm.year)][tm.mon - 1]:
            raise _field_overflow(text)
    if not (0 <= tm.hour < 24 and 0 <= tm.min < 60 and 0 <= tm.sec < 60 and 0 <= tm.fsec < 1_000_000):
        raise _field_overflow(text)
    if tmfc.tzsign:
        if not (0 <= tmfc.tzh <= MAX_TZDISP_HOUR and 0 <= tmfc.tzm < 60):
            raise PgError("22009", f'time zone displacement out of range: "{text}"')
        off = (tmfc.tzh * 60 + tmfc.tzm) * 60
        tm.gmtoff = off if tmfc.tzsign > 0 else -off
    return tm


_TS_SCALES = (1_000_000, 100_000, 10_000, 1000, 100, 10, 1)


def to_timestamp(text: str, fmt: str) -> int:
    """to_timestamp(text, text): microseconds from 1970-01-01 UTC (the session zone is UTC
    unless the template reads TZH/TZM)."""
    tm = do_to_timestamp(text, fmt)
    out_of_range = PgError("22008", "timestamp out of range")
    if not _valid_julian(tm.year, tm.mon):
        raise out_of_range
    date = date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE
    time = ((tm.hour * 60 + tm.min) * 60 + tm.sec) * 1_000_000 + tm.fsec
    result = date * USECS_PER_DAY + time
    if not INT64_MIN <= result <= INT64_MAX:
        raise out_of_range
    if (result < 0 < date) or (result > 0 and date < -1):
        raise out_of_range
    if tm.gmtoff is not None:
        result -= tm.gmtoff * 1_000_000
    if not MIN_TIMESTAMP <= result < END_TIMESTAMP:
        raise out_of_range
    if tm.fprec and tm.fprec != 6:
        scale = _TS_SCALES[tm.fprec]
        half = scale // 2
        result = (result + half) // scale * scale if result >= 0 else -((-result + half) // scale * scale)
        if not MIN_TIMESTAMP <= result < END_TIMESTAMP:
            raise out_of_range
    us = result + cal.PG_EPOCH_USECS
    if us > cal.TS_END:
        raise PgError("0A000", "to_timestamp() results after 294246 AD are not supported by walsender-proxy")
    return us


def to_date(text: str, fmt: str) -> int:
    """to_date(text, text): days from 1970-01-01."""
    tm = do_to_timestamp(text, fmt)
    if not _valid_julian(tm.year, tm.mon):
        raise PgError("22008", f'date out of range: "{text}"')
    result = date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE
    if not -POSTGRES_EPOCH_JDATE <= result < DATE_END_JULIAN - POSTGRES_EPOCH_JDATE:
        raise PgError("22008", f'date out of range: "{text}"')
    return result + POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE
