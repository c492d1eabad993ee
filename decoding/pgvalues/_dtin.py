"""Date/time text input, ported from PostgreSQL's datetime.c (ParseDateTime, DecodeDateTime,
DecodeTimeOnly, DecodeInterval) for IntervalStyle postgres, TimeZone UTC and any DateStyle
field order: ``date_order`` (``"MDY"``, ``"DMY"`` or ``"YMD"``, the session's DateOrder) is
how DecodeNumber reads the numeric fields of an ambiguous date such as ``01/02/03``; the
output style never matters to input.

It is per value and only used for text that the vectorized fast paths (canonical ISO forms)
do not take, so it favours fidelity over speed: field tokenizing, field-mask bookkeeping and
error codes follow the C code closely, which is what makes odd inputs ("Jan 8 99 4:05 PM PST",
"@ 1 hour ago", "P1Y2M") fail or succeed exactly where PostgreSQL's do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from decoding import pgtz
from decoding.errors import PgError
from decoding.pgtime import unix_now_us
from decoding.pgvalues import _calendar as cal

# field types (datetime.h)
DTK_NUMBER, DTK_STRING, DTK_DATE, DTK_TIME, DTK_TZ, DTK_SPECIAL = 0, 1, 2, 3, 4, 6

# error kinds
BAD_FORMAT, FIELD_OVERFLOW, MD_FIELD_OVERFLOW, INTERVAL_OVERFLOW, TZDISP_OVERFLOW = (
    -1,
    -2,
    -3,
    -4,
    -5,
)


class _DtErr(Exception):
    def __init__(self, kind: int) -> None:
        self.kind = kind


def _raise(kind: int, text: str, typename: str) -> PgError:
    if kind == FIELD_OVERFLOW:
        return PgError("22008", f'date/time field value out of range: "{text}"')
    if kind == MD_FIELD_OVERFLOW:
        return PgError(
            "22008",
            f'date/time field value out of range: "{text}"',
            hint='Perhaps you need a different "datestyle" setting.',
        )
    if kind == INTERVAL_OVERFLOW:
        return PgError("22015", f'interval field value out of range: "{text}"')
    if kind == TZDISP_OVERFLOW:
        return PgError("22009", f'time zone displacement out of range: "{text}"')
    return PgError("22007", f'invalid input syntax for type {typename}: "{text}"')


# field mask bits (datetime.h token types)
RESERV, MONTH, YEAR, DAY, JULIAN, TZ, DTZ, DYNTZ, IGNORE_DTF, AMPM, HOUR, MINUTE, SECOND = range(13)
MILLISECOND, MICROSECOND, DOY, DOW, UNITS, ADBC, AGO, ABS_BEFORE, ABS_AFTER, ISODATE = range(13, 23)
ISOTIME, WEEK, DECADE, CENTURY, MILLENNIUM, DTZMOD, UNKNOWN_FIELD = range(23, 30)


def M(t: int) -> int:
    return 1 << t


DTK_DATE_M = M(YEAR) | M(MONTH) | M(DAY)
DTK_TIME_M = M(HOUR) | M(MINUTE) | M(SECOND) | M(MILLISECOND) | M(MICROSECOND)
DTK_ALL_SECS_M = M(SECOND) | M(MILLISECOND) | M(MICROSECOND)

# RESERV values
DTK_EPOCH, DTK_LATE, DTK_EARLY, DTK_NOW, DTK_TODAY, DTK_TOMORROW, DTK_YESTERDAY, DTK_ZULU = range(8)
DTK_DATE_TYPE = 100
# UNITS values
U_MICROSEC, U_MILLISEC, U_SECOND, U_MINUTE, U_HOUR, U_DAY, U_WEEK, U_MONTH, U_YEAR = range(9)
U_DECADE, U_CENTURY, U_MILLENNIUM, U_JULIAN, U_TIME, U_DOW, U_DOY, U_ISODOW, U_ISOYEAR = range(
    9, 18
)
AM, PM, HR24 = 0, 1, 2
AD, BC = 0, 1

_DATETKTBL: dict[str, tuple[int, int]] = {
    "-infinity": (RESERV, DTK_EARLY),
    "ad": (ADBC, AD),
    "allballs": (RESERV, DTK_ZULU),
    "am": (AMPM, AM),
    "at": (IGNORE_DTF, 0),
    "bc": (ADBC, BC),
    "d": (UNITS, U_DAY),
    "dow": (UNITS, U_DOW),
    "doy": (UNITS, U_DOY),
    "dst": (DTZMOD, 3600),
    "epoch": (RESERV, DTK_EPOCH),
    "h": (UNITS, U_HOUR),
    "infinity": (RESERV, DTK_LATE),
    "isodow": (UNITS, U_ISODOW),
    "isoyear": (UNITS, U_ISOYEAR),
    "j": (UNITS, U_JULIAN),
    "jd": (UNITS, U_JULIAN),
    "julian": (UNITS, U_JULIAN),
    "m": (UNITS, U_MONTH),
    "mm": (UNITS, U_MINUTE),
    "now": (RESERV, DTK_NOW),
    "on": (IGNORE_DTF, 0),
    "pm": (AMPM, PM),
    "s": (UNITS, U_SECOND),
    "t": (ISOTIME, U_TIME),
    "today": (RESERV, DTK_TODAY),
    "tomorrow": (RESERV, DTK_TOMORROW),
    "y": (UNITS, U_YEAR),
    "yesterday": (RESERV, DTK_YESTERDAY),
}
for _i, _names in enumerate(
    (
        ("jan", "january"),
        ("feb", "february"),
        ("mar", "march"),
        ("apr", "april"),
        ("may",),
        ("jun", "june"),
        ("jul", "july"),
        ("aug", "august"),
        ("sep", "sept", "september"),
        ("oct", "october"),
        ("nov", "november"),
        ("dec", "december"),
    ),
    start=1,
):
    for _n in _names:
        _DATETKTBL[_n] = (MONTH, _i)
for _i, _names in enumerate(
    (
        ("sun", "sunday"),
        ("mon", "monday"),
        ("tue", "tues", "tuesday"),
        ("wed", "wednesday", "weds"),
        ("thu", "thur", "thurs", "thursday"),
        ("fri", "friday"),
        ("sat", "saturday"),
    )
):
    for _n in _names:
        _DATETKTBL[_n] = (DOW, _i)

_DELTATKTBL: dict[str, tuple[int, int]] = {
    "@": (IGNORE_DTF, 0),
    "ago": (AGO, 0),
    "c": (UNITS, U_CENTURY),
    "cent": (UNITS, U_CENTURY),
    "centuries": (UNITS, U_CENTURY),
    "century": (UNITS, U_CENTURY),
    "d": (UNITS, U_DAY),
    "day": (UNITS, U_DAY),
    "days": (UNITS, U_DAY),
    "dec": (UNITS, U_DECADE),
    "decade": (UNITS, U_DECADE),
    "decades": (UNITS, U_DECADE),
    "decs": (UNITS, U_DECADE),
    "h": (UNITS, U_HOUR),
    "hour": (UNITS, U_HOUR),
    "hours": (UNITS, U_HOUR),
    "hr": (UNITS, U_HOUR),
    "hrs": (UNITS, U_HOUR),
    "m": (UNITS, U_MINUTE),
    "microsecon": (UNITS, U_MICROSEC),
    "mil": (UNITS, U_MILLENNIUM),
    "millennia": (UNITS, U_MILLENNIUM),
    "millennium": (UNITS, U_MILLENNIUM),
    "millisecon": (UNITS, U_MILLISEC),
    "mils": (UNITS, U_MILLENNIUM),
    "min": (UNITS, U_MINUTE),
    "mins": (UNITS, U_MINUTE),
    "minute": (UNITS, U_MINUTE),
    "minutes": (UNITS, U_MINUTE),
    "mon": (UNITS, U_MONTH),
    "mons": (UNITS, U_MONTH),
    "month": (UNITS, U_MONTH),
    "months": (UNITS, U_MONTH),
    "ms": (UNITS, U_MILLISEC),
    "msec": (UNITS, U_MILLISEC),
    "msecond": (UNITS, U_MILLISEC),
    "mseconds": (UNITS, U_MILLISEC),
    "msecs": (UNITS, U_MILLISEC),
    "s": (UNITS, U_SECOND),
    "sec": (UNITS, U_SECOND),
    "second": (UNITS, U_SECOND),
    "seconds": (UNITS, U_SECOND),
    "secs": (UNITS, U_SECOND),
    "timezone": (UNITS, -1),
    "timezone_h": (UNITS, -1),
    "timezone_m": (UNITS, -1),
    "us": (UNITS, U_MICROSEC),
    "usec": (UNITS, U_MICROSEC),
    "usecond": (UNITS, U_MICROSEC),
    "useconds": (UNITS, U_MICROSEC),
    "usecs": (UNITS, U_MICROSEC),
    "w": (UNITS, U_WEEK),
    "week": (UNITS, U_WEEK),
    "weeks": (UNITS, U_WEEK),
    "y": (UNITS, U_YEAR),
    "year": (UNITS, U_YEAR),
    "years": (UNITS, U_YEAR),
    "yr": (UNITS, U_YEAR),
    "yrs": (UNITS, U_YEAR),
}

#: The fixed-offset abbreviations of PostgreSQL's "Default" timezone_abbreviations set that
#: matter in practice (seconds east of UTC; DTZ marks daylight-time abbreviations).
_TZ_ABBREV: dict[str, tuple[int, int]] = {
    "utc": (TZ, 0),
    "ut": (TZ, 0),
    "gmt": (TZ, 0),
    "z": (TZ, 0),
    "zulu": (TZ, 0),
    "wet": (TZ, 0),
    "west": (DTZ, 3600),
    "bst": (DTZ, 3600),
    "cet": (TZ, 3600),
    "cest": (DTZ, 7200),
    "met": (TZ, 3600),
    "mest": (DTZ, 7200),
    "eet": (TZ, 7200),
    "eest": (DTZ, 10800),
    "est": (TZ, -18000),
    "edt": (DTZ, -14400),
    "cst": (TZ, -21600),
    "cdt": (DTZ, -18000),
    "mst": (TZ, -25200),
    "mdt": (DTZ, -21600),
    "pst": (TZ, -28800),
    "pdt": (DTZ, -25200),
    "akst": (TZ, -32400),
    "akdt": (DTZ, -28800),
    "hst": (TZ, -36000),
    "ast": (TZ, -14400),
    "adt": (DTZ, -10800),
    "nst": (TZ, -12600),
    "ndt": (DTZ, -9000),
    "jst": (TZ, 32400),
    "kst": (TZ, 32400),
    "hkt": (TZ, 28800),
    "awst": (TZ, 28800),
    "acst": (TZ, 34200),
    "acdt": (DTZ, 37800),
    "aest": (TZ, 36000),
    "aedt": (DTZ, 39600),
    "nzst": (TZ, 43200),
    "nzdt": (DTZ, 46800),
    "ist": (TZ, 7200),
    "idt": (DTZ, 10800),
    "sast": (TZ, 7200),
    "cat": (TZ, 7200),
    "eat": (TZ, 10800),
    "wat": (TZ, 3600),
}


def _isspace(c: str) -> bool:
    return c in " \t\n\r\v\f"


def _isdigit(c: str) -> bool:
    return "0" <= c <= "9"


def _isalpha(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def _isalnum(c: str) -> bool:
    return _isdigit(c) or _isalpha(c)


def _ispunct(c: str) -> bool:
    return 33 <= ord(c) <= 126 and not _isalnum(c)


def parse_fields(s: str) -> list[tuple[str, int]]:
    """ParseDateTime: split into (field, type) pairs, lower-casing text."""
    out: list[tuple[str, int]] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if _isspace(c):
            i += 1
            continue
        buf: list[str] = []
        if _isdigit(c):
            while i < n and _isdigit(s[i]):
                buf.append(s[i])
                i += 1
            if i < n and s[i] == ":":
                ftype = DTK_TIME
                buf.append(s[i])
                i += 1
                while i < n and (_isdigit(s[i]) or s[i] in ":."):
                    buf.append(s[i])
                    i += 1
            elif i < n and s[i] in "-/.":
                delim = s[i]
                buf.append(delim)
                i += 1
                if i < n and _isdigit(s[i]):
                    ftype = DTK_NUMBER if delim == "." else DTK_DATE
                    while i < n and _isdigit(s[i]):
                        buf.append(s[i])
                        i += 1
                    if i < n and s[i] == delim:
                        ftype = DTK_DATE
                        buf.append(delim)
                        i += 1
                        while i < n and (_isdigit(s[i]) or s[i] == delim):
                            buf.append(s[i])
                            i += 1
                else:
                    ftype = DTK_DATE
                    while i < n and (_isalnum(s[i]) or s[i] == delim):
                        buf.append(s[i].lower())
                        i += 1
            else:
                ftype = DTK_NUMBER
        elif c == ".":
            buf.append(c)
            i += 1
            while i < n and _isdigit(s[i]):
                buf.append(s[i])
                i += 1
            ftype = DTK_NUMBER
        elif _isalpha(c):
            ftype = DTK_STRING
            while i < n and _isalpha(s[i]):
                buf.append(s[i].lower())
                i += 1
            is_date = False
            if i < n and s[i] in "-/.":
                is_date = True
            elif i < n and (s[i] == "+" or _isdigit(s[i])) and "".join(buf) not in _DATETKTBL:
                # not a known keyword: a zone name such as "utc+1" or "gmt8"
                is_date = True
            if is_date:
                ftype = DTK_DATE
                while True:
                    buf.append(s[i].lower())
                    i += 1
                    if not (i < n and (s[i] in "+-/_.:" or _isalnum(s[i]))):
                        break
        elif c in "+-":
            buf.append(c)
            i += 1
            while i < n and _isspace(s[i]):
                i += 1
            if i < n and _isdigit(s[i]):
                ftype = DTK_TZ
                buf.append(s[i])
                i += 1
                while i < n and (_isdigit(s[i]) or s[i] in ":.-"):
                    buf.append(s[i])
                    i += 1
            elif i < n and _isalpha(s[i]):
                ftype = DTK_SPECIAL
                while i < n and _isalpha(s[i]):
                    buf.append(s[i].lower())
                    i += 1
            else:
                raise _DtErr(BAD_FORMAT)
        elif _ispunct(c):
            i += 1
            continue
        else:
            raise _DtErr(BAD_FORMAT)
        out.append(("".join(buf), ftype))
    return out


def _strtoint(s: str, pos: int = 0, bits: int = 32) -> tuple[int, int]:
    """strtol: optional whitespace and sign, digits; returns (value, end). ERANGE -> overflow."""
    i = pos
    n = len(s)
    while i < n and _isspace(s[i]):
        i += 1
    j = i
    if j < n and s[j] in "+-":
        j += 1
    k = j
    while k < n and _isdigit(s[k]):
        k += 1
    if k == j:
        return 0, pos
    v = int(s[i:k])
    if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
        raise _DtErr(FIELD_OVERFLOW)
    return v, k


def _strtod_prefix(s: str) -> tuple[float, int]:
    """strtod of a decimal prefix (digits, point, exponent); returns (value, end)."""
    i, n = 0, len(s)
    j = i
    if j < n and s[j] in "+-":
        j += 1
    start_digits = j
    while j < n and _isdigit(s[j]):
        j += 1
    if j < n and s[j] == ".":
        j += 1
        while j < n and _isdigit(s[j]):
            j += 1
    if j == start_digits or s[start_digits:j] == ".":
        return 0.0, 0
    if j < n and s[j] in "eE":
        k = j + 1
        if k < n and s[k] in "+-":
            k += 1
        if k < n and _isdigit(s[k]):
            while k < n and _isdigit(s[k]):
                k += 1
            j = k
    return float(s[:j]), j


def _parse_fractional_second(s: str) -> int:
    """ParseFractionalSecond: '.ddd' -> rint(frac * 1e6); junk is a format error."""
    frac, end = _strtod_prefix(s)
    if end != len(s) or end == 0:
        raise _DtErr(BAD_FORMAT)
    return _rint(frac * 1000000)


def _rint(x: float) -> int:
    """C's rint in the default mode: round half to even (Python's round on floats)."""
    return round(x)


def _parse_fraction(s: str) -> float:
    """ParseFraction: '.' followed by digits only (or nothing)."""
    if s == ".":
        return 0.0
    if not all(_isdigit(c) for c in s[1:]):
        raise _DtErr(BAD_FORMAT)
    return float("0" + s)


@dataclass
class _Tm:
    year: int = 0
    mon: int = 0
    mday: int = 0
    hour: int = 0
    min: int = 0
    sec: int = 0
    fsec: int = 0
    yday: int = 0


def _decode_timezone(s: str) -> int:
    """DecodeTimezone: '+hh[:mm[:ss]]' or '+hhmm'; returns seconds EAST of UTC."""
    if not s or s[0] not in "+-":
        raise _DtErr(BAD_FORMAT)
    try:
        hr, cp = _strtoint(s, 1)
    except _DtErr:
        raise _DtErr(TZDISP_OVERFLOW) from None
    mn = sec = 0
    if cp < len(s) and s[cp] == ":":
        mn, cp = _strtoint(s, cp + 1)
        if cp < len(s) and s[cp] == ":":
            sec, cp = _strtoint(s, cp + 1)
    elif cp == len(s) and len(s) > 3:
        mn = hr % 100
        hr = hr // 100
    if not (0 <= hr <= 15) or not (0 <= mn < 60) or not (0 <= sec < 60):
        raise _DtErr(TZDISP_OVERFLOW)
    tz = (hr * 60 + mn) * 60 + sec
    if s[0] == "-":
        tz = -tz
    if cp != len(s):
        raise _DtErr(BAD_FORMAT)
    return tz


def _decode_time(s: str, fmask: int, tm: _Tm) -> int:
    """DecodeTime (timestamp flavour): 'hh:mm[:ss[.fff]]' or 'mm:ss.fff'."""
    hour, cp = _strtoint(s, 0, 64)
    if cp >= len(s) or s[cp] != ":":
        raise _DtErr(BAD_FORMAT)
    mn, cp = _strtoint(s, cp + 1)
    sec = 0
    fsec = 0
    if cp == len(s):
        pass
    elif s[cp] == ".":
        fsec = _parse_fractional_second(s[cp:])
        sec, mn, hour = mn, hour, 0
    elif s[cp] == ":":
        sec, cp = _strtoint(s, cp + 1)
        if cp < len(s) and s[cp] == ".":
            fsec = _parse_fractional_second(s[cp:])
        elif cp != len(s):
            raise _DtErr(BAD_FORMAT)
    else:
        raise _DtErr(BAD_FORMAT)
    if hour < 0 or not 0 <= mn <= 59 or not 0 <= sec <= 60 or not 0 <= fsec <= 1000000:
        raise _DtErr(FIELD_OVERFLOW)
    if hour > 2**31 - 1:
        raise _DtErr(FIELD_OVERFLOW)
    tm.hour, tm.min, tm.sec, tm.fsec = hour, mn, sec, fsec
    return DTK_TIME_M


def _time_overflows(h: int, m: int, s: int, fsec: int) -> bool:
    if h < 0 or h > 24 or m < 0 or m >= 60 or s < 0 or s > 60 or fsec < 0 or fsec > 1000000:
        return True
    return ((h * 60 + m) * 60 + s) * 1000000 + fsec > cal.USECS_PER_DAY


#: DateStyle's field orders (datestyle.h's DATEORDER_MDY, _DMY, _YMD).
DATE_ORDERS = ("MDY", "DMY", "YMD")


def input_zone(date_order: str) -> pgtz.Zone:
    """The session zone a ``date_order`` carries (``"MDY America/New_York"``; none: UTC):
    text naming no zone is read in it, and 'now' and 'today' are its wall clock."""
    _, _, name = date_order.partition(" ")
    return pgtz.zone_of(name) if name else pgtz.UTC_ZONE


def _local_now(zone: pgtz.Zone) -> tuple[int, int]:
    """The wall clock now in ``zone`` (microseconds from 1970 local) and its offset."""
    us = _now_usecs()
    off = zone.utc_offset(us)
    return us + off * cal.USECS_PER_SEC, off


class _State:
    def __init__(self, date_order: str = "MDY") -> None:
        date_order = date_order.partition(" ")[0]
        if date_order not in DATE_ORDERS:
            raise ValueError(f"date order {date_order!r} is not one of {DATE_ORDERS}")
        self.is2digits = False
        #: DateOrder: which field a leading one- or two-digit number is.
        self.date_order = date_order


def _decode_number_field(flen: int, s: str, fmask: int, tm: _Tm, st: _State) -> tuple[int, int]:
    """DecodeNumberField: run-together yyyymmdd / hhmmss[.fff]; returns (kind, tmask)."""
    dot = s.find(".")
    if dot >= 0:
        if dot + 1 == len(s):
            tm.fsec = 0
        else:
            try:
                frac = float(s[dot:])
            except ValueError:
                raise _DtErr(BAD_FORMAT) from None
            tm.fsec = _rint(frac * 1000000)
        s = s[:dot]
        flen = len(s)
    elif (fmask & DTK_DATE_M) != DTK_DATE_M and flen >= 6:
        tm.mday = int(s[flen - 2 :])
        tm.mon = int(s[flen - 4 : flen - 2])
        tm.year = int(s[: flen - 4] or "0")
        if flen - 4 == 2:
            st.is2digits = True
        return DTK_DATE, DTK_DATE_M
    if (fmask & DTK_TIME_M) != DTK_TIME_M:
        if flen == 6:
            tm.sec = int(s[4:6])
            tm.min = int(s[2:4])
            tm.hour = int(s[0:2])
            return DTK_TIME, DTK_TIME_M
        if flen == 4:
            tm.sec = 0
            tm.min = int(s[2:4])
            tm.hour = int(s[0:2])
            return DTK_TIME, DTK_TIME_M
    raise _DtErr(BAD_FORMAT)


def _decode_number(
    flen: int, s: str, have_text_month: bool, fmask: int, tm: _Tm, st: _State
) -> int:
    """DecodeNumber: a plain number read as a date field by what the fields before it were,
    and, for the first one of one or two digits, by the DateStyle order; returns tmask."""
    val, cp = _strtoint(s)
    if cp == 0:
        raise _DtErr(BAD_FORMAT)
    if cp < len(s) and s[cp] == ".":
        if cp > 2:
            _, tmask = _decode_number_field(flen, s, fmask | DTK_DATE_M, tm, st)
            return tmask
        tm.fsec = _parse_fractional_second(s[cp:])
    elif cp != len(s):
        raise _DtErr(BAD_FORMAT)
    if flen == 3 and (fmask & DTK_DATE_M) == M(YEAR) and 1 <= val <= 366:
        tm.yday = val
        return M(DOY) | M(MONTH) | M(DAY)
    sel = fmask & DTK_DATE_M
    if sel == 0:
        # the first field: a year if it has more than two digits, else what the order says
        if flen >= 3 or st.date_order == "YMD":
            tmask = M(YEAR)
            tm.year = val
        elif st.date_order == "DMY":
            tmask = M(DAY)
            tm.mday = val
        else:
            tmask = M(MONTH)
            tm.mon = val
    elif sel == M(YEAR):
        tmask = M(MONTH)
        tm.mon = val
    elif sel == M(MONTH):
        if have_text_month:
            # MON-DD-YY and DD-MON-YY in MDY and DMY order, YY-MON-DD in YMD
            if flen >= 3 or st.date_order == "YMD":
                tmask = M(YEAR)
                tm.year = val
            else:
                tmask = M(DAY)
                tm.mday = val
        else:
            tmask = M(DAY)
            tm.mday = val
    elif sel == M(YEAR) | M(MONTH):
        if have_text_month:
            if flen >= 3 and st.is2digits:
                tmask = M(DAY)
                tm.mday = tm.year
                tm.year = val
                st.is2digits = False
            else:
                tmask = M(DAY)
                tm.mday = val
        else:
            tmask = M(DAY)
            tm.mday = val
    elif sel == M(DAY):
        tmask = M(MONTH)
        tm.mon = val
    elif sel == M(MONTH) | M(DAY):
        tmask = M(YEAR)
        tm.year = val
    elif sel == DTK_DATE_M:
        _, tmask = _decode_number_field(flen, s, fmask, tm, st)
        return tmask
    else:
        raise _DtErr(BAD_FORMAT)
    if tmask == M(YEAR):
        st.is2digits = flen <= 2
    return tmask


def _decode_date(s: str, fmask: int, tm: _Tm, st: _State) -> tuple[int, bool]:
    """DecodeDate: a field with embedded separators; returns (tmask, have_text_month)."""
    parts: list[str | None] = []
    i, n = 0, len(s)
    while i < n:
        while i < n and not _isalnum(s[i]):
            i += 1
        if i >= n:
            raise _DtErr(BAD_FORMAT)
        j = i
        if _isdigit(s[i]):
            while j < n and _isdigit(s[j]):
                j += 1
        elif _isalpha(s[i]):
            while j < n and _isalpha(s[j]):
                j += 1
        parts.append(s[i:j])
        i = j
        if (i < n and _isalnum(s[i]) is False) or (i < n and not _isalnum(s[i])):
            i += 1
    tmask = 0
    have_text_month = False
    for k, p in enumerate(parts):
        if p and _isalpha(p[0]):
            tok = _DATETKTBL.get(p[:10])
            if tok is None:
                raise _DtErr(BAD_FORMAT)
            typ, val = tok
            if typ == IGNORE_DTF:
                parts[k] = None
                continue
            if typ != MONTH:
                raise _DtErr(BAD_FORMAT)
            tm.mon = val
            have_text_month = True
            if fmask & M(MONTH):
                raise _DtErr(BAD_FORMAT)
            fmask |= M(MONTH)
            tmask |= M(MONTH)
            parts[k] = None
    for p in parts:
        if p is None:
            continue
        if not p:
            raise _DtErr(BAD_FORMAT)
        dmask = _decode_number(len(p), p, have_text_month, fmask, tm, st)
        if fmask & dmask:
            raise _DtErr(BAD_FORMAT)
        fmask |= dmask
        tmask |= dmask
    if (fmask & ~(M(DOY) | M(TZ))) != DTK_DATE_M:
        raise _DtErr(BAD_FORMAT)
    return tmask, have_text_month


def _validate_date(fmask: int, isjulian: bool, is2digits: bool, bc: bool, tm: _Tm) -> None:
    if fmask & M(YEAR):
        if isjulian:
            pass
        elif bc:
            if tm.year <= 0:
                raise _DtErr(FIELD_OVERFLOW)
            tm.year = -(tm.year - 1)
        elif is2digits:
            if tm.year < 0:
                raise _DtErr(FIELD_OVERFLOW)
            if tm.year < 70:
                tm.year += 2000
            elif tm.year < 100:
                tm.year += 1900
        elif tm.year <= 0:
            raise _DtErr(FIELD_OVERFLOW)
    if fmask & M(DOY):
        y, m, d = cal.civil(cal.days(tm.year, 1, 1) + tm.yday - 1)
        tm.year, tm.mon, tm.mday = y, m, d
    if fmask & M(MONTH) and not 1 <= tm.mon <= 12:
        raise _DtErr(MD_FIELD_OVERFLOW)
    if fmask & M(DAY) and not 1 <= tm.mday <= 31:
        raise _DtErr(MD_FIELD_OVERFLOW)
    if (fmask & DTK_DATE_M) == DTK_DATE_M and tm.mday > cal.days_in_month(tm.year, tm.mon):
        raise _DtErr(FIELD_OVERFLOW)


def _j2days(jd: int) -> int:
    return jd - cal.UNIX_EPOCH_JDATE


def _now_usecs() -> int:
    return unix_now_us()


@dataclass
class _Decoded:
    dtype: int
    tm: _Tm
    tz: int | None  # seconds EAST of UTC (None: not given)
    named_tz: str | None


def _fixed_offset(zone: ZoneInfo) -> bool:
    """Whether a zone has one offset at every date (pg_get_timezone_offset): the UTC
    zones and Etc/GMT±n; a geographic zone has had other offsets at some time."""
    key = zone.key
    return key.startswith("Etc/") or key in ("UTC", "UCT", "GMT", "GMT0", "GMT+0", "GMT-0", "Greenwich", "Universal", "Zulu")


def _zone(name: str) -> ZoneInfo | None:
    if name in ("utc", "gmt", "z", "zulu", "ut"):
        return ZoneInfo("UTC")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        pass
    # PostgreSQL matches zone names case-insensitively
    import zoneinfo

    for z in zoneinfo.available_timezones():
        if z.lower() == name:
            return ZoneInfo(z)
    return None


def decode_datetime(s: str, with_tz: bool, date_order: str = "MDY") -> _Decoded:
    """DecodeDateTime: returns the broken-down value; raises _DtErr."""
    fields = parse_fields(s)
    tm = _Tm()
    st = _State(date_order)
    fmask = 0
    dtype = DTK_DATE_TYPE
    ptype = 0
    isjulian = False
    have_text_month = False
    bc = False
    mer = HR24
    tz: int | None = None
    named_tz: str | None = None
    for f, ft in fields:
        tmask = 0
        if ft == DTK_DATE:
            if ptype == U_JULIAN:
                raise _DtErr(BAD_FORMAT)
            if ptype != 0 or (fmask & (M(MONTH) | M(DAY))) == (M(MONTH) | M(DAY)):
                if _isdigit(f[0]) or ptype != 0:
                    if ptype != 0:
                        if ptype != U_TIME:
                            raise _DtErr(BAD_FORMAT)
                        ptype = 0
                    if (fmask & DTK_TIME_M) == DTK_TIME_M:
                        raise _DtErr(BAD_FORMAT)
                    cp = f.find("-")
                    if cp < 0:
                        raise _DtErr(BAD_FORMAT)
                    tz = _decode_timezone(f[cp:])
                    _, tmask = _decode_number_field(cp, f[:cp], fmask, tm, st)
                    tmask |= M(TZ)
                else:
                    if _zone(f) is None and pgtz.posix_zone(f) is None:
                        raise PgError("22023", f'time zone "{f}" not recognized')
                    named_tz = f
                    tmask = M(TZ)
            else:
                tmask, htm = _decode_date(f, fmask, tm, st)
                have_text_month = have_text_month or htm
        elif ft == DTK_TIME:
            if ptype != 0:
                if ptype != U_TIME:
                    raise _DtErr(BAD_FORMAT)
                ptype = 0
            tmask = _decode_time(f, fmask, tm)
            if _time_overflows(tm.hour, tm.min, tm.sec, tm.fsec):
                raise _DtErr(FIELD_OVERFLOW)
        elif ft == DTK_TZ:
            tz = _decode_timezone(f)
            tmask = M(TZ)
        elif ft == DTK_NUMBER:
            if ptype != 0:
                value, cp = _strtoint(f)
                if cp < len(f) and f[cp] != ".":
                    raise _DtErr(BAD_FORMAT)
                if ptype == U_JULIAN:
                    if value < 0:
                        raise _DtErr(FIELD_OVERFLOW)
                    tmask = DTK_DATE_M
                    tm.year, tm.mon, tm.mday = cal.civil(_j2days(value))
                    isjulian = True
                    if cp < len(f) and f[cp] == ".":
                        t = _parse_fraction(f[cp:]) * cal.USECS_PER_DAY
                        t = int(t)
                        tm.hour, rem = divmod(t, cal.USECS_PER_HOUR)
                        tm.min, rem = divmod(rem, cal.USECS_PER_MINUTE)
                        tm.sec, tm.fsec = divmod(rem, cal.USECS_PER_SEC)
                        tmask |= DTK_TIME_M
                elif ptype == U_TIME:
                    _, tmask = _decode_number_field(len(f), f, fmask | DTK_DATE_M, tm, st)
                    if tmask != DTK_TIME_M:
                        raise _DtErr(BAD_FORMAT)
                else:
                    raise _DtErr(BAD_FORMAT)
                ptype = 0
                dtype = DTK_DATE_TYPE
            else:
                flen = len(f)
                cp = f.find(".")
                if cp >= 0 and not (fmask & DTK_DATE_M):
                    tmask, htm = _decode_date(f, fmask, tm, st)
                    have_text_month = have_text_month or htm
                elif (cp >= 0 and cp > 2) or (
                    flen >= 6 and (not (fmask & DTK_DATE_M) or not (fmask & DTK_TIME_M))
                ):
                    _, tmask = _decode_number_field(flen, f, fmask, tm, st)
                else:
                    tmask = _decode_number(flen, f, have_text_month, fmask, tm, st)
        elif ft in (DTK_STRING, DTK_SPECIAL):
            key = f[:10] if f not in _TZ_ABBREV else f
            if f in _TZ_ABBREV:
                typ, val = _TZ_ABBREV[f]
            else:
                typ, val = _DATETKTBL.get(key, (UNKNOWN_FIELD, 0))
            if typ == IGNORE_DTF:
                continue
            tmask = M(typ)
            if typ == RESERV:
                if val == DTK_NOW:
                    tmask = DTK_DATE_M | DTK_TIME_M | M(TZ)
                    dtype = DTK_DATE_TYPE
                    us, tz = _local_now(input_zone(date_order))
                    day, tod = divmod(us, cal.USECS_PER_DAY)
                    tm.year, tm.mon, tm.mday = cal.civil(day)
                    tm.hour, rem = divmod(tod, cal.USECS_PER_HOUR)
                    tm.min, rem = divmod(rem, cal.USECS_PER_MINUTE)
                    tm.sec, tm.fsec = divmod(rem, cal.USECS_PER_SEC)
                elif val in (DTK_TODAY, DTK_TOMORROW, DTK_YESTERDAY):
                    tmask = DTK_DATE_M
                    dtype = DTK_DATE_TYPE
                    day = _local_now(input_zone(date_order))[0] // cal.USECS_PER_DAY
                    day += {DTK_TODAY: 0, DTK_TOMORROW: 1, DTK_YESTERDAY: -1}[val]
                    tm.year, tm.mon, tm.mday = cal.civil(day)  # (a time given stays: '10:30 today')
                elif val == DTK_ZULU:
                    tmask = DTK_TIME_M | M(TZ)
                    dtype = DTK_DATE_TYPE
                    tm.hour = tm.min = tm.sec = 0
                    tz = 0
                else:
                    tmask = DTK_DATE_M | DTK_TIME_M | M(TZ)
                    dtype = val
            elif typ == MONTH:
                if (
                    (fmask & M(MONTH))
                    and not have_text_month
                    and not (fmask & M(DAY))
                    and 1 <= tm.mon <= 31
                ):
                    tm.mday = tm.mon
                    tmask = M(DAY)
                have_text_month = True
                tm.mon = val
            elif typ == DTZMOD:
                tmask |= M(DTZ)
                tz = (tz or 0) + val
            elif typ == DTZ:
                tmask |= M(TZ)
                tz = val
            elif typ == TZ:
                tz = val
            elif typ == AMPM:
                mer = val
            elif typ == ADBC:
                bc = val == BC
            elif typ == DOW:
                pass
            elif typ == UNITS:
                tmask = 0
                if ptype != 0:
                    raise _DtErr(BAD_FORMAT)
                ptype = val
            elif typ == ISOTIME:
                tmask = 0
                if (fmask & DTK_DATE_M) != DTK_DATE_M:
                    raise _DtErr(BAD_FORMAT)
                if ptype != 0:
                    raise _DtErr(BAD_FORMAT)
                ptype = val
            elif typ == UNKNOWN_FIELD:
                if _zone(f) is None and pgtz.posix_zone(f) is None:
                    raise _DtErr(BAD_FORMAT)
                named_tz = f
                tmask = M(TZ)
            else:
                raise _DtErr(BAD_FORMAT)
        else:
            raise _DtErr(BAD_FORMAT)
        if tmask & fmask:
            raise _DtErr(BAD_FORMAT)
        fmask |= tmask
    if ptype != 0:
        raise _DtErr(BAD_FORMAT)
    if dtype == DTK_DATE_TYPE:
        _validate_date(fmask, isjulian, st.is2digits, bc, tm)
        if mer != HR24 and tm.hour > 12:
            raise _DtErr(FIELD_OVERFLOW)
        if mer == AM and tm.hour == 12:
            tm.hour = 0
        elif mer == PM and tm.hour != 12:
            tm.hour += 12
        if (fmask & DTK_DATE_M) != DTK_DATE_M:
            raise _DtErr(BAD_FORMAT)
        if fmask & M(DTZMOD) and named_tz is not None:
            raise _DtErr(BAD_FORMAT)
        if with_tz and not (fmask & M(TZ)) and (fmask & M(DTZMOD)):
            raise _DtErr(BAD_FORMAT)
    return _Decoded(dtype, tm, tz, named_tz)


def _local_offset(local: int, zone_name: str) -> int:
    """Seconds east of UTC for a local time in a named zone (DetermineTimeZoneOffset)."""
    z = _zone(zone_name)
    if z is None:  # a POSIX-style name: GMT+8 is eight hours west
        posix = pgtz.posix_zone(zone_name)
        assert posix is not None
        return posix.local_offset(local)
    return pgtz.Zone(z.key, key=z.key).local_offset(local)


def _date_from_tm(tm: _Tm, text: str, typename: str) -> int:
    if not (cal.DATE_MIN <= cal.days(tm.year, tm.mon, tm.mday) < cal.DATE_END):
        raise PgError("22008", f'{typename} out of range: "{text}"')
    return cal.days(tm.year, tm.mon, tm.mday)


def date_in(text: str, date_order: str = "MDY") -> int:
    """date_in: days since 1970-01-01 (DuckDB's ±INT32_MAX for ±infinity)."""
    try:
        d = decode_datetime(text, True, date_order)
    except _DtErr as e:
        raise _raise(e.kind, text, "date") from None
    if d.dtype == DTK_EPOCH:
        return 0
    if d.dtype == DTK_LATE:
        return cal.DATE_POS_INF
    if d.dtype == DTK_EARLY:
        return cal.DATE_NEG_INF
    if d.dtype != DTK_DATE_TYPE:
        raise _raise(BAD_FORMAT, text, "date")
    tm = d.tm
    if not _valid_julian(tm.year, tm.mon, tm.mday):
        raise PgError("22008", f'date out of range: "{text}"')
    z = cal.days(tm.year, tm.mon, tm.mday)
    if not cal.DATE_MIN <= z < cal.DATE_END:
        raise PgError("22008", f'date out of range: "{text}"')
    return z


def _valid_julian(y: int, m: int, d: int) -> bool:
    """IS_VALID_JULIAN: from 4714-11-24 BC (year -4713) to the end of 5874897."""
    if y < -4713 or (y == -4713 and (m < 11 or (m == 11 and d < 24))):
        return False
    return y <= 5874897


def timestamp_in(text: str, with_tz: bool, date_order: str = "MDY") -> int:
    """timestamp_in / timestamptz_in: microseconds since 1970-01-01 UTC."""
    typename = "timestamp with time zone" if with_tz else "timestamp"
    try:
        d = decode_datetime(text, with_tz, date_order)
    except _DtErr as e:
        raise _raise(e.kind, text, typename) from None
    if d.dtype == DTK_EPOCH:
        return 0
    if d.dtype == DTK_LATE:
        return cal.TS_POS_INF
    if d.dtype == DTK_EARLY:
        return cal.TS_NEG_INF
    if d.dtype != DTK_DATE_TYPE:
        raise _raise(BAD_FORMAT, text, typename)
    tm = d.tm
    if not _valid_julian(tm.year, tm.mon, tm.mday):
        raise PgError("22008", f'timestamp out of range: "{text}"')
    local = cal.days(tm.year, tm.mon, tm.mday) * cal.USECS_PER_DAY + (
        ((tm.hour * 60 + tm.min) * 60 + tm.sec) * cal.USECS_PER_SEC + tm.fsec
    )
    if with_tz:
        if d.named_tz is not None:
            off = _local_offset(local, d.named_tz)
        elif d.tz is not None:
            off = d.tz
        else:
            off = input_zone(date_order).local_offset(local)
        local -= off * cal.USECS_PER_SEC
    if not cal.TS_MIN <= local < cal.PG_TS_END:
        raise PgError("22008", f'timestamp out of range: "{text}"')
    if local > cal.TS_END:  # (PostgreSQL's value, past what the lake's int64 holds)
        raise cal.beyond_lake_timestamps()
    return local


def time_in(text: str, date_order: str = "MDY") -> int:
    """time_in (DecodeTimeOnly): microseconds since midnight; any zone is parsed and dropped.
    A date in the text is read (in ``date_order``) and checked, then dropped."""
    typename = "time"
    try:
        fields = parse_fields(text)
        tm = _Tm()
        st = _State(date_order)
        fmask = 0
        mer = HR24
        bc = False
        ptype = 0
        named: ZoneInfo | None = None  # (a full zone name: its offset may need the date)
        # a date is read only as the first field, followed by a time or with a date last
        date_first = len(fields) >= 2 and (fields[-1][1] == DTK_DATE or fields[1][1] == DTK_TIME)
        for i, (f, ft) in enumerate(fields):
            tmask = 0
            if ft == DTK_DATE:
                if i == 0 and date_first:
                    tmask, _ = _decode_date(f, fmask, tm, st)
                elif _isdigit(f[0]):  # a run-together time with a zone: 040506-08
                    cp = f.find("-")
                    if (fmask & DTK_TIME_M) == DTK_TIME_M or cp < 0:
                        raise _DtErr(BAD_FORMAT)
                    _decode_timezone(f[cp:])
                    _, tmask = _decode_number_field(cp, f[:cp], fmask | DTK_DATE_M, tm, st)
                    tmask |= M(TZ)
                else:
                    named = _zone(f) or pgtz.posix_zone(f)
                    if named is None:
                        raise PgError("22023", f'time zone "{f}" not recognized')
                    tmask = M(TZ)
            elif ft == DTK_TIME:
                if ptype != 0:
                    ptype = 0
                tmask = _decode_time(f, fmask, tm)
            elif ft == DTK_TZ:
                _decode_timezone(f)
                tmask = M(TZ)
            elif ft == DTK_NUMBER:
                if ptype != 0:
                    _, tmask = _decode_number_field(len(f), f, fmask | DTK_DATE_M, tm, st)
                    ptype = 0
                else:
                    # a plain number is a time field here (hhmm, hhmmss), never part of a
                    # date, but for yyyy.ddd first and a date last
                    flen = len(f)
                    cp = f.find(".")
                    if cp >= 0:
                        if i == 0 and len(fields) >= 2 and fields[-1][1] == DTK_DATE:
                            tmask, _ = _decode_date(f, fmask, tm, st)
                        elif cp > 2:
                            _, tmask = _decode_number_field(flen, f, fmask | DTK_DATE_M, tm, st)
                        else:
                            raise _DtErr(BAD_FORMAT)
                    elif flen > 4:
                        _, tmask = _decode_number_field(flen, f, fmask | DTK_DATE_M, tm, st)
                    else:
                        tmask = _decode_number(flen, f, False, fmask | DTK_DATE_M, tm, st)
            elif ft in (DTK_STRING, DTK_SPECIAL):
                if f in _TZ_ABBREV:
                    typ, val = _TZ_ABBREV[f]
                else:
                    typ, val = _DATETKTBL.get(f[:10], (UNKNOWN_FIELD, 0))
                if typ == IGNORE_DTF:
                    continue
                tmask = M(typ)
                if typ == RESERV:
                    if val == DTK_NOW:
                        us = _local_now(input_zone(date_order))[0] % cal.USECS_PER_DAY
                        tm.hour, rem = divmod(us, cal.USECS_PER_HOUR)
                        tm.min, rem = divmod(rem, cal.USECS_PER_MINUTE)
                        tm.sec, tm.fsec = divmod(rem, cal.USECS_PER_SEC)
                        tmask = DTK_TIME_M
                    elif val == DTK_ZULU:
                        tmask = DTK_TIME_M | M(TZ)
                        tm.hour = tm.min = tm.sec = tm.fsec = 0
                    else:
                        raise _DtErr(BAD_FORMAT)
                elif typ in (TZ, DTZ, DTZMOD):
                    pass
                elif typ == AMPM:
                    mer = val
                elif typ == ADBC:
                    bc = val == BC
                elif typ in (UNITS, ISOTIME):
                    if ptype != 0:
                        raise _DtErr(BAD_FORMAT)
                    tmask = 0
                    ptype = val
                elif typ == UNKNOWN_FIELD:
                    named = _zone(f) or pgtz.posix_zone(f)
                    if named is None:
                        raise _DtErr(BAD_FORMAT)
                    tmask = M(TZ)
                else:  # (a month or weekday name on its own is no part of a time)
                    raise _DtErr(BAD_FORMAT)
            else:
                raise _DtErr(BAD_FORMAT)
            if tmask & fmask:
                raise _DtErr(BAD_FORMAT)
            fmask |= tmask
        if ptype != 0:
            raise _DtErr(BAD_FORMAT)
        if fmask & DTK_DATE_M:
            _validate_date(fmask, False, st.is2digits, bc, tm)
        if mer != HR24 and tm.hour > 12:
            raise _DtErr(FIELD_OVERFLOW)
        if mer == AM and tm.hour == 12:
            tm.hour = 0
        elif mer == PM and tm.hour != 12:
            tm.hour += 12
        if tm.hour < 0 or tm.min < 0 or tm.min > 59 or tm.sec < 0 or tm.sec > 60:
            raise _DtErr(FIELD_OVERFLOW)
        if tm.hour > 24 or (tm.hour == 24 and (tm.min > 0 or tm.sec > 0 or tm.fsec > 0)):
            raise _DtErr(FIELD_OVERFLOW)
        if tm.fsec < 0 or tm.fsec > cal.USECS_PER_SEC:
            raise _DtErr(FIELD_OVERFLOW)
        if (fmask & DTK_TIME_M) == 0:
            raise _DtErr(BAD_FORMAT)
        if named is not None and not _fixed_offset(named) and (fmask & DTK_DATE_M) != DTK_DATE_M:
            raise _DtErr(BAD_FORMAT)  # (the zone's offset on which date?)
    except _DtErr as e:
        raise _raise(e.kind, text, typename) from None
    return ((tm.hour * 60 + tm.min) * 60 + tm.sec) * cal.USECS_PER_SEC + tm.fsec


# ------------------------------------------------------------------------- interval


class _Itm:
    __slots__ = ("mday", "mon", "usec", "year")

    def __init__(self) -> None:
        self.usec = 0
        self.mday = 0
        self.mon = 0
        self.year = 0


_I64 = 2**63
_I32 = 2**31


def _chk64(v: int) -> int:
    if not -_I64 <= v < _I64:
        raise _DtErr(FIELD_OVERFLOW)
    return v


def _chk32(v: int) -> int:
    if not -_I32 <= v < _I32:
        raise _DtErr(FIELD_OVERFLOW)
    return v


def _adjust_fract_usec(frac: float, scale: int, itm: _Itm) -> None:
    if frac == 0:
        return
    frac *= scale
    usec = int(frac)
    if math.isnan(frac) or abs(frac) >= 2**63:
        raise _DtErr(FIELD_OVERFLOW)
    frac -= usec
    usec += _rint(frac)
    itm.usec = _chk64(itm.usec + usec)


def _adjust_fract_days(frac: float, scale: int, itm: _Itm) -> None:
    if frac == 0:
        return
    frac *= scale
    extra = int(frac)
    itm.mday = _chk32(itm.mday + extra)
    frac -= extra
    _adjust_fract_usec(frac, cal.USECS_PER_DAY, itm)


def _adjust_fract_years(frac: float, scale: int, itm: _Itm) -> None:
    extra = _rint(frac * scale * 12)
    itm.mon = _chk32(itm.mon + extra)


def _adjust_usec(val: int, fval: float, scale: int, itm: _Itm) -> None:
    itm.usec = _chk64(itm.usec + _chk64(val * scale))
    _adjust_fract_usec(fval, scale, itm)


def _decode_time_for_interval(s: str, itm: _Itm) -> None:
    hour, cp = _strtoint(s, 0, 64)
    if cp >= len(s) or s[cp] != ":":
        raise _DtErr(BAD_FORMAT)
    mn, cp = _strtoint(s, cp + 1)
    sec = 0
    fsec = 0
    if cp == len(s):
        pass
    elif s[cp] == ".":
        fsec = _parse_fractional_second(s[cp:])
        if hour > (2**31 - 1) // 60:
            raise _DtErr(FIELD_OVERFLOW)
        sec, mn, hour = mn, hour, 0
    elif s[cp] == ":":
        sec, cp = _strtoint(s, cp + 1)
        if cp < len(s) and s[cp] == ".":
            fsec = _parse_fractional_second(s[cp:])
        elif cp != len(s):
            raise _DtErr(BAD_FORMAT)
    else:
        raise _DtErr(BAD_FORMAT)
    if hour < 0 or not 0 <= mn <= 59 or not 0 <= sec <= 60 or not 0 <= fsec <= 1000000:
        raise _DtErr(FIELD_OVERFLOW)
    t = _chk64(hour * cal.USECS_PER_HOUR)
    t = _chk64(t + mn * cal.USECS_PER_MINUTE)
    t = _chk64(t + sec * cal.USECS_PER_SEC + fsec)
    itm.usec = t


def _decode_interval(fields: list[tuple[str, int]]) -> _Itm:
    """DecodeInterval (IntervalStyle postgres, no typmod): fields right to left."""
    itm = _Itm()
    fmask = 0
    is_before = False
    parsing_unit_val = False
    typ = -1  # IGNORE_DTF: rightmost unitless number is seconds
    nf = len(fields)
    for i in range(nf - 1, -1, -1):
        f, ft = fields[i]
        tmask = 0
        if ft == DTK_TIME:
            sub = _Itm()
            _decode_time_for_interval(f, sub)
            tmask = DTK_TIME_M
            itm.usec = _chk64(itm.usec + sub.usec)
            typ = U_DAY
            parsing_unit_val = False
        elif ft in (DTK_TZ, DTK_DATE, DTK_NUMBER):
            done = False
            if ft == DTK_TZ and ":" in f[1:]:
                sub = _Itm()
                try:
                    _decode_time_for_interval(f[1:], sub)
                    ok = True
                except _DtErr:
                    ok = False
                if ok:
                    if f[0] == "-":
                        sub.usec = -sub.usec
                    itm.usec = _chk64(itm.usec + sub.usec)
                    tmask = DTK_TIME_M
                    typ = U_DAY
                    parsing_unit_val = False
                    done = True
            if not done:
                if typ == -1:
                    typ = U_SECOND
                sign_neg = f.startswith("-")
                j = 1 if f[:1] in "+-" else 0
                k = j
                while k < len(f) and _isdigit(f[k]):
                    k += 1
                if k == j:
                    raise _DtErr(BAD_FORMAT)
                val = int(f[:k])
                if not -_I64 <= val < _I64:
                    raise _DtErr(FIELD_OVERFLOW)
                cp = k
                fval = 0.0
                if cp < len(f) and f[cp] == "-":
                    m = cp + 1
                    q = m
                    while q < len(f) and _isdigit(f[q]):
                        q += 1
                    if q == m:
                        raise _DtErr(BAD_FORMAT)
                    val2 = int(f[m:q])
                    if val2 >= 12:
                        raise _DtErr(FIELD_OVERFLOW)
                    if q != len(f):
                        raise _DtErr(BAD_FORMAT)
                    typ = U_MONTH
                    if sign_neg:
                        val2 = -val2
                    val = _chk64(_chk64(val * 12) + val2)
                elif cp < len(f) and f[cp] == ".":
                    fval = _parse_fraction(f[cp:])
                    if sign_neg:
                        fval = -fval
                elif cp != len(f):
                    raise _DtErr(BAD_FORMAT)
                if typ == U_MICROSEC:
                    _adjust_usec(val, fval, 1, itm)
                    tmask = M(MICROSECOND)
                elif typ == U_MILLISEC:
                    _adjust_usec(val, fval, 1000, itm)
                    tmask = M(MILLISECOND)
                elif typ == U_SECOND:
                    _adjust_usec(val, fval, cal.USECS_PER_SEC, itm)
                    tmask = M(SECOND) if fval == 0 else DTK_ALL_SECS_M
                elif typ == U_MINUTE:
                    _adjust_usec(val, fval, cal.USECS_PER_MINUTE, itm)
                    tmask = M(MINUTE)
                elif typ == U_HOUR:
                    _adjust_usec(val, fval, cal.USECS_PER_HOUR, itm)
                    tmask = M(HOUR)
                    typ = U_DAY
                elif typ == U_DAY:
                    itm.mday = _chk32(itm.mday + _chk32(val))
                    _adjust_fract_usec(fval, cal.USECS_PER_DAY, itm)
                    tmask = M(DAY)
                elif typ == U_WEEK:
                    itm.mday = _chk32(itm.mday + _chk32(val * 7))
                    _adjust_fract_days(fval, 7, itm)
                    tmask = M(WEEK)
                elif typ == U_MONTH:
                    itm.mon = _chk32(itm.mon + _chk32(val))
                    _adjust_fract_days(fval, 30, itm)
                    tmask = M(MONTH)
                elif typ in (U_YEAR, U_DECADE, U_CENTURY, U_MILLENNIUM):
                    scale = {U_YEAR: 1, U_DECADE: 10, U_CENTURY: 100, U_MILLENNIUM: 1000}[typ]
                    itm.year = _chk32(itm.year + _chk32(val * scale))
                    _adjust_fract_years(fval, scale, itm)
                    tmask = {
                        U_YEAR: M(YEAR),
                        U_DECADE: M(DECADE),
                        U_CENTURY: M(CENTURY),
                        U_MILLENNIUM: M(MILLENNIUM),
                    }[typ]
                else:
                    raise _DtErr(BAD_FORMAT)
                parsing_unit_val = False
                typ = -1
        elif ft in (DTK_STRING, DTK_SPECIAL):
            if parsing_unit_val:
                raise _DtErr(BAD_FORMAT)
            tok = _DELTATKTBL.get(f[:10])
            if tok is None:
                if f in ("infinity", "-infinity", "+infinity"):
                    raise _DtErr(BAD_FORMAT)
                raise _DtErr(BAD_FORMAT)
            kind, uval = tok
            if kind == IGNORE_DTF:
                continue
            if kind == UNITS:
                if uval < 0:
                    raise _DtErr(BAD_FORMAT)
                typ = uval
                parsing_unit_val = True
            elif kind == AGO:
                if i != nf - 1:
                    raise _DtErr(BAD_FORMAT)
                is_before = True
                typ = -2  # a number right before "ago" has no unit
            else:
                raise _DtErr(BAD_FORMAT)
        else:
            raise _DtErr(BAD_FORMAT)
        if tmask & fmask:
            raise _DtErr(BAD_FORMAT)
        fmask |= tmask
    if fmask == 0:
        raise _DtErr(BAD_FORMAT)
    if parsing_unit_val:
        raise _DtErr(BAD_FORMAT)
    if is_before:
        itm.usec = _chk64(-itm.usec)
        itm.mday = _chk32(-itm.mday)
        itm.mon = _chk32(-itm.mon)
        itm.year = _chk32(-itm.year)
    return itm


def _iso8601_interval(s: str) -> _Itm:
    """DecodeISO8601Interval: P[nY][nM][nW][nD][T[nH][nM][nS]] or the alternative format."""
    if not s.startswith("P"):
        raise _DtErr(BAD_FORMAT)
    itm = _Itm()
    i = 1
    n = len(s)
    datepart = True
    havefield = False
    if i >= n:
        raise _DtErr(BAD_FORMAT)
    while i < n:
        if s[i] == "T":
            datepart = False
            havefield = False
            i += 1
            continue
        j = i
        if j < n and s[j] in "+-":
            j += 1
        k = j
        while k < n and _isdigit(s[k]):
            k += 1
        if k < n and s[k] == ".":
            k += 1
            while k < n and _isdigit(s[k]):
                k += 1
        if k == j or not any(_isdigit(c) for c in s[j:k]):  # (strtod reads no "." alone)
            raise _DtErr(BAD_FORMAT)
        num = s[i:k]
        try:
            ip = int(num.split(".")[0] or "0") if num.split(".")[0] not in ("+", "-") else 0
        except ValueError:
            raise _DtErr(BAD_FORMAT) from None
        fp = float("0." + num.split(".")[1]) if "." in num and num.split(".")[1] else 0.0
        if num.startswith("-"):
            fp = -fp
        if k >= n:
            raise _DtErr(BAD_FORMAT)
        unit = s[k]
        i = k + 1
        if datepart:
            if unit == "Y":
                itm.year = _chk32(itm.year + ip)
                _adjust_fract_years(fp, 1, itm)
            elif unit == "M":
                itm.mon = _chk32(itm.mon + ip)
                _adjust_fract_days(fp, 30, itm)
            elif unit == "W":
                itm.mday = _chk32(itm.mday + ip * 7)
                _adjust_fract_days(fp, 7, itm)
            elif unit == "D":
                itm.mday = _chk32(itm.mday + ip)
                _adjust_fract_usec(fp, cal.USECS_PER_DAY, itm)
            else:
                raise _DtErr(BAD_FORMAT)
        else:
            if unit == "H":
                _adjust_usec(ip, fp, cal.USECS_PER_HOUR, itm)
            elif unit == "M":
                _adjust_usec(ip, fp, cal.USECS_PER_MINUTE, itm)
            elif unit == "S":
                _adjust_usec(ip, fp, cal.USECS_PER_SEC, itm)
            else:
                raise _DtErr(BAD_FORMAT)
        havefield = True
    if not havefield and not datepart:
        raise _DtErr(BAD_FORMAT)
    return itm


def interval_in(text: str) -> tuple[int, int, int]:
    """interval_in: (months, days, microseconds)."""
    try:
        s = text.strip(" \t\n\r\v\f")
        itm = _iso8601_interval(s) if s.startswith("P") else _decode_interval(parse_fields(text))
    except _DtErr as e:
        kind = INTERVAL_OVERFLOW if e.kind == FIELD_OVERFLOW else e.kind
        raise _raise(kind, text, "interval") from None
    months = itm.year * 12 + itm.mon
    if not -_I32 <= months < _I32:
        raise PgError("22008", "interval out of range")
    return months, itm.mday, itm.usec
