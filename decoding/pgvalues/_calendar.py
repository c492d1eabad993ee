"""Proleptic Gregorian calendar arithmetic, vectorized and scalar, plus PostgreSQL's limits.

PostgreSQL counts days and microseconds from 2000-01-01; Arrow (and so the lake) from
1970-01-01.  Both use the proleptic Gregorian calendar with a year 0 (printed as 1 BC), so
Howard Hinnant's branch-free civil algorithms are exact over the whole range of both.
"""

from __future__ import annotations

import numpy as np

from decoding.errors import PgError
from decoding.pgtime import PG_EPOCH_JDATE, PG_EPOCH_UNIX_DAYS, PG_EPOCH_UNIX_US

USECS_PER_SEC = 1_000_000
USECS_PER_MINUTE = 60 * USECS_PER_SEC
USECS_PER_HOUR = 60 * USECS_PER_MINUTE
USECS_PER_DAY = 24 * USECS_PER_HOUR

#: Days and microseconds from the Unix epoch to PostgreSQL's (2000-01-01): decoding.pgtime's,
#: under the names this package's modules use.
PG_EPOCH_DAYS = PG_EPOCH_UNIX_DAYS
PG_EPOCH_USECS = PG_EPOCH_UNIX_US

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

# The lake keeps DuckDB's encoding of the infinities: +max for infinity, -max for -infinity
# (the type minimum is read as -infinity too: other writers use it).
DATE_POS_INF = INT32_MAX
DATE_NEG_INF = -INT32_MAX
TS_POS_INF = INT64_MAX
TS_NEG_INF = -INT64_MAX

# PostgreSQL's valid ranges (datatype/timestamp.h), in lake units (from 1970-01-01).
POSTGRES_EPOCH_JDATE = PG_EPOCH_JDATE
UNIX_EPOCH_JDATE = 2440588
DATE_MIN = 0 - UNIX_EPOCH_JDATE  # 4714-11-24 BC, Julian day 0
DATE_END = 2147483494 - UNIX_EPOCH_JDATE  # 5874898-01-01, exclusive
TS_MIN = -211813488000000000 + PG_EPOCH_USECS  # 4714-11-24 00:00 BC
#: PostgreSQL's END_TIMESTAMP (294277-01-01) does not fit int64 microseconds from 1970;
#: the lake's last representable instant is one below the infinity marker.
TS_END = INT64_MAX - 1
#: PostgreSQL's END_TIMESTAMP (294277-01-01, exclusive) in lake units: past TS_END.
PG_TS_END = (109203528 - UNIX_EPOCH_JDATE) * 86_400_000_000


def beyond_lake_timestamps() -> PgError:
    """The refusal of a timestamp PostgreSQL has but the lake cannot hold (after TS_END,
    294247-01-10 04:00:54.775806 UTC, up to PostgreSQL's end in 294276): 0A000 rather than
    PostgreSQL's 22008, which would claim the value does not exist."""
    return PgError(
        "0A000",
        "timestamps after 294247-01-10 04:00:54.775806 are not supported by walsender-proxy",
    )


def civil_from_days(z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(year, month, day) of day numbers counted from 1970-01-01; year 0 is 1 BC."""
    z = z.astype(np.int64) + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = np.where(mp < 10, mp + 3, mp - 9)
    y = yoe + era * 400 + (m <= 2)
    return y, m, d


def days_from_civil(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    y = y.astype(np.int64) - (m <= 2)
    era = y // 400
    yoe = y - era * 400
    mp = np.where(m > 2, m - 3, m + 9)
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil(z: int) -> tuple[int, int, int]:
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


def days(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    mp = m - 3 if m > 2 else m + 9
    doy = (153 * mp + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def is_leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


_MDAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def days_in_month(y: int, m: int) -> int:
    return 29 if m == 2 and is_leap(y) else _MDAYS[m - 1]


def year_text(y: int) -> tuple[str, bool]:
    """PostgreSQL's printed year (at least 4 digits) and whether it is BC."""
    if y > 0:
        return f"{y:04d}", False
    return f"{1 - y:04d}", True


def format_date(z: int) -> str:
    if z >= DATE_POS_INF:
        return "infinity"
    if z <= DATE_NEG_INF:
        return "-infinity"
    y, m, d = civil(z)
    ys, bc = year_text(y)
    return f"{ys}-{m:02d}-{d:02d}{' BC' if bc else ''}"


def format_time_of_day(us: int) -> str:
    h, rem = divmod(us, USECS_PER_HOUR)
    mi, rem = divmod(rem, USECS_PER_MINUTE)
    s, frac = divmod(rem, USECS_PER_SEC)
    out = f"{h:02d}:{mi:02d}:{s:02d}"
    if frac:
        out += ("." + f"{frac:06d}").rstrip("0")
    return out


def format_timestamp(us: int, tz: bool, offset: str = "+00") -> str:
    """timestamp_out / timestamptz_out (ISO) of ``us``, the wall clock; ``offset`` the
    zone's offset then as EncodeTimezone prints it (``+00`` in UTC)."""
    if us >= TS_POS_INF:
        return "infinity"
    if us <= TS_NEG_INF:
        return "-infinity"
    day, tod = divmod(us, USECS_PER_DAY)
    y, m, d = civil(day)
    ys, bc = year_text(y)
    return (
        f"{ys}-{m:02d}-{d:02d} {format_time_of_day(tod)}{offset if tz else ''}{' BC' if bc else ''}"
    )
