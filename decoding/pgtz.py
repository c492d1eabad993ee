"""The session TimeZone as PostgreSQL reads, shows and applies it (guc's check_timezone,
pgtz.c's pg_tzset / pg_tzset_offset, datetime.c's DetermineTimeZoneOffset and
EncodeTimezone).

A value is a zone of the tz database (found case-insensitively, shown with the file's
case: ``america/new_york`` is ``America/New_York``), a numeric offset in hours EAST
(``-8`` is shown ``<-08>+08``), ``INTERVAL '…'`` (from ``SET TIME ZONE INTERVAL …``), or a
POSIX-style name with an offset in hours WEST (``UTC+3`` is three hours behind UTC),
which PostgreSQL shows upper-cased. A POSIX rule with a daylight-saving part that is no
file of the tz database (``FOO5BAR``, ``EST5EDT4,M3.2.0,M11.1.0``) is refused: its
rules would come from ``posixrules``, which the proxy does not read.

The offsets come from Python's zoneinfo over the same tz files PostgreSQL's build reads
(``--with-system-tzdata``); instants outside zoneinfo's years 1..9999 use the 400-year
Gregorian cycle (the tz rules repeat with it) or, before year 1, the zone's first offset.
Nothing here depends on the session: a walsender's text is always UTC (its server's zone).
"""

from __future__ import annotations

import functools
import re
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from decoding.errors import PgError

_USECS = 1_000_000
_EPOCH = datetime(1970, 1, 1)
_EPOCH_UTC = datetime(1970, 1, 1, tzinfo=UTC)
#: 400 Gregorian years, in microseconds (146097 days; a whole number of weeks).
_CYCLE_US = 146097 * 86400 * _USECS
#: 0001-01-02 and 9999-12-30 as microseconds from 1970 (zoneinfo's safe range).
_LOW_US = (datetime(1, 1, 2) - _EPOCH) // timedelta(microseconds=1)
_HIGH_US = (datetime(9999, 12, 30) - _EPOCH) // timedelta(microseconds=1)


@dataclass(frozen=True)
class Zone:
    """A session time zone: ``name`` as SHOW gives it; ``fixed`` seconds EAST of UTC for a
    zone of one offset, else ``key`` the tz database zone."""

    name: str
    fixed: int | None = None
    key: str | None = None

    @property
    def is_utc(self) -> bool:
        return self.fixed == 0

    def utc_offset(self, utc_us: int) -> int:
        """Seconds east of UTC at the instant ``utc_us`` (microseconds from 1970 UTC)."""
        if self.fixed is not None:
            return self.fixed
        z = _zoneinfo(self.key or "UTC")
        us = _in_range(utc_us)
        off = (_EPOCH_UTC + timedelta(microseconds=us)).astimezone(z).utcoffset()
        return int(off.total_seconds()) if off is not None else 0

    def abbrev(self, utc_us: int) -> str:
        """The zone's abbreviation at ``utc_us`` (to_char's TZ): the tz database's (EST,
        EDT, LMT, -03), or a POSIX name's standard part (``UTC`` of ``UTC+3``, ``-08`` of
        ``<-08>+08``)."""
        if self.key is None:
            m = re.match(r"<([^>]*)>|[A-Za-z]+", self.name)
            return (m.group(1) or m.group(0)) if m is not None else self.name
        z = _zoneinfo(self.key)
        return (_EPOCH_UTC + timedelta(microseconds=_in_range(utc_us))).astimezone(z).tzname() or ""

    def local_offset(self, local_us: int) -> int:
        """Seconds east of UTC for the wall-clock time ``local_us`` (microseconds from
        1970-01-01 00:00 local), by DetermineTimeZoneOffset: a time in a spring-forward
        gap is read with the offset before the change, a time that happens twice (fall
        back) as its later occurrence; so the smaller of the two offsets, every time."""
        if self.fixed is not None:
            return self.fixed
        z = _zoneinfo(self.key or "UTC")
        dt = _EPOCH + timedelta(microseconds=_in_range(local_us))
        a = dt.replace(tzinfo=z, fold=0).utcoffset()
        b = dt.replace(tzinfo=z, fold=1).utcoffset()
        return int(min(a, b).total_seconds()) if a is not None and b is not None else 0

    def local_to_utc(self, local_us: int) -> int:
        return local_us - self.local_offset(local_us) * _USECS


UTC_ZONE = Zone("UTC", fixed=0)


def _in_range(us: int) -> int:
    """``us`` moved by whole 400-year cycles into zoneinfo's years (before year 1: the
    start of year 1, where every zone still has its first offset)."""
    if us < _LOW_US:
        return _LOW_US
    if us > _HIGH_US:
        return us - -(-(us - _HIGH_US) // _CYCLE_US) * _CYCLE_US
    return us


@functools.cache
def _zoneinfo(key: str) -> ZoneInfo:
    return ZoneInfo(key)


@functools.cache
def _zone_files() -> dict[str, str]:
    """The tz database's zone names by their upper-case form (PostgreSQL looks names up
    case-insensitively and keeps the file's spelling)."""
    return {name.upper(): name for name in zoneinfo.available_timezones()}


@functools.cache
def transitions(key: str) -> tuple[int, ...]:
    """The instants (seconds from 1970 UTC) where the tz file of ``key`` changes offset
    (its TZif v2 64-bit transition list; empty for a file without one)."""
    import struct
    from pathlib import Path

    for root in zoneinfo.TZPATH:
        path = Path(root) / key
        if path.is_file():
            data = path.read_bytes()
            break
    else:
        return ()
    if data[:4] != b"TZif":
        return ()
    counts = struct.unpack(">6l", data[20:44])
    isut, isstd, leap, timecnt, typecnt, charcnt = counts
    if data[4:5] < b"2":
        return tuple(struct.unpack(f">{timecnt}l", data[44 : 44 + 4 * timecnt]))
    skip = 44 + timecnt * 5 + typecnt * 6 + charcnt + leap * 8 + isstd + isut
    counts2 = struct.unpack(">6l", data[skip + 20 : skip + 44])
    n = counts2[3]
    return tuple(struct.unpack(f">{n}q", data[skip + 44 : skip + 44 + 8 * n]))


def encode_offset(east: int) -> str:
    """EncodeTimezone (ISO): ``+05``, ``+05:30``, ``-04:56:02``."""
    sign = "-" if east < 0 else "+"
    s = abs(east)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    if sec:
        return f"{sign}{h:02d}:{m:02d}:{sec:02d}"
    if m:
        return f"{sign}{h:02d}:{m:02d}"
    return f"{sign}{h:02d}"


def _invalid(value: str, detail: str | None = None) -> PgError:
    return PgError("22023", f'invalid value for parameter "TimeZone": "{value}"', detail=detail)


def _out_of_range(value: str) -> PgError:
    return _invalid(value, "UTC timezone offset is out of range.")


def _offset_zone(value: str, west: int) -> Zone:
    """pg_tzset_offset: ``west`` seconds west of UTC, named as PostgreSQL names it."""
    if abs(west) >= 168 * 3600:  # (tzparse takes hours up to 24 * 7 - 1)
        raise _out_of_range(value)
    a = abs(west)
    text = f"{a // 3600:02d}"
    if a % 3600:
        text += f":{a % 3600 // 60:02d}"
        if a % 60:
            text += f":{a % 60:02d}"
    name = f"<-{text}>+{text}" if west > 0 else f"<+{text}>-{text}"
    return Zone(name, fixed=-west)


_NUMBER = re.compile(r"\s*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
#: tzparse's "std offset" with no daylight-saving part: a name of three or more letters
#: (or ``<…>`` quoted) and hours west [:minutes[:seconds]].
_POSIX = re.compile(
    r"(?P<name>[A-Z]{3,}|<[A-Z0-9:+-]{3,}>)(?P<sign>[+-]?)(?P<h>[0-9]{1,3})(?::(?P<m>[0-9]{1,2})(?::(?P<s>[0-9]{1,2}))?)?"
)
#: An offset with no name (``+02:00``, ``2:00``): tzparse takes it, hours west.
_BARE_OFFSET = re.compile(r"(?P<sign>[+-]?)(?P<h>[0-9]{1,3}):(?P<m>[0-9]{1,2})(?::(?P<s>[0-9]{1,2}))?")
#: The same, followed by anything (a daylight-saving part): refused.
_POSIX_DST = re.compile(r"(?:[A-Z]{3,}|<[A-Z0-9:+-]{3,}>)[+-]?[0-9].*[A-Z<,]")


def parse_setting(value: str, interval_seconds: int | None = None) -> Zone:
    """check_timezone: the zone a TimeZone value names, or PostgreSQL's 22023.

    ``interval_seconds``: for ``INTERVAL '…'`` values, the interval's time part in seconds
    (the caller parses the interval; days and months were refused there)."""
    if value[:8].lower() == "interval":
        if interval_seconds is None:
            raise PgError("0A000", f'TimeZone "{value}" is not supported by walsender-proxy')
        return _offset_zone(value, -interval_seconds)
    m = _NUMBER.fullmatch(value)
    if m is not None:
        hours = float(m.group(1))
        if not abs(hours) < 1e6:
            raise _out_of_range(value)
        return _offset_zone(value, int(-hours * 3600))
    if len(value) > 255:
        raise _invalid(value)
    upper = value.upper()
    if upper == "GMT":
        return Zone("GMT", fixed=0)
    name = _zone_files().get(upper)
    if name is not None:
        fixed = _fixed(name)
        return Zone(name, fixed=fixed, key=name)
    if upper.startswith("RIGHT/") and _zone_files().get(upper[6:]) is not None:
        raise PgError(
            "22023", f'time zone "{value}" appears to use leap seconds', detail="PostgreSQL does not support leap seconds."
        )
    bare = _BARE_OFFSET.fullmatch(upper)
    if bare is not None:  # tzparse of an offset without a name: hours west, as POSIX has them
        if bare["s"] is not None:
            raise PgError(
                "22023", f'time zone "{value}" appears to use leap seconds', detail="PostgreSQL does not support leap seconds."
            )
        h, mi = int(bare["h"]), int(bare["m"])
        if h > 167 or mi > 59:
            raise _invalid(value)
        west = (h * 3600 + mi * 60) * (-1 if bare["sign"] == "-" else 1)
        return Zone(upper, fixed=-west)
    if _POSIX.fullmatch(upper) is not None:
        posix = posix_zone(upper)
        if posix is None:
            raise _invalid(value)
        return posix
    if _POSIX_DST.match(upper):
        raise PgError(
            "0A000",
            f'time zone "{value}" (a POSIX time zone rule with daylight-saving time) is not supported by walsender-proxy',
        )
    raise _invalid(value)


def posix_zone(name: str) -> Zone | None:
    """A POSIX-style zone of a standard name and an offset in hours west (``GMT+8``,
    ``UTC-3``, ``<+05>-5``) as a time zone name in date/time input reads it (pg_tzset's
    tzparse), or None."""
    upper = name.upper()
    p = _POSIX.fullmatch(upper)
    if p is None:
        return None
    h, mi, s = int(p["h"]), int(p["m"] or 0), int(p["s"] or 0)
    if h > 167 or mi > 59 or s > 60:
        return None
    west = (h * 3600 + mi * 60 + s) * (-1 if p["sign"] == "-" else 1)
    return Zone(upper, fixed=-west)


def posix_offset(text: str) -> int | None:
    """Seconds EAST of UTC of a POSIX-style zone as ``AT TIME ZONE`` and date/time input
    read it (``UTC+3``, ``GMT-8``, ``+03:00``: hours west), or None for any other text."""
    zone = posix_zone(text)
    if zone is not None:
        return zone.fixed
    bare = _BARE_OFFSET.fullmatch(text)
    if bare is None or bare["s"] is not None or int(bare["h"]) > 167 or int(bare["m"]) > 59:
        return None
    return (int(bare["h"]) * 3600 + int(bare["m"]) * 60) * (1 if bare["sign"] == "-" else -1)


def _fixed(name: str) -> int | None:
    """The offset of a zone that has had one offset at every time (UTC, Etc/GMT+3), else
    None."""
    z = _zoneinfo(name)
    offs = {z.utcoffset(datetime(y, mo, 1)) for y in (1, 1800, 1900, 1950, 2000, 2024, 2100) for mo in (1, 7)}
    if len(offs) == 1 and (name.startswith("Etc/") or name.upper() in _UTC_NAMES):
        off = offs.pop()
        return int(off.total_seconds()) if off is not None else 0
    return None


_UTC_NAMES = frozenset({"UTC", "UCT", "GMT", "GMT0", "GMT+0", "GMT-0", "GREENWICH", "UNIVERSAL", "ZULU"})


@functools.lru_cache(maxsize=64)
def zone_of(shown: str) -> Zone:
    """The zone of a TimeZone value as SHOW gives it (parsing it again gives the same
    zone: a canonical name is its own canonical name)."""
    return UTC_ZONE if shown == "UTC" else parse_setting(shown)
