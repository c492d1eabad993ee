"""PostgreSQL's clock: its epoch (2000-01-01 UTC) and the conversions every layer needs.

PostgreSQL's ``TimestampTz`` is a count of microseconds since its epoch; commit times in
the change log, pgoutput's Begin/Commit, replication keepalives and pg_stat_replication's
reply times are all such counts.  One definition here; the wire codec
(``walsender_proxy.protocol.replication``) keeps its own copy because it knows no other
layer.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from typing import Final

__all__ = [
    "PG_EPOCH",
    "PG_EPOCH_JDATE",
    "PG_EPOCH_NAIVE",
    "PG_EPOCH_UNIX_DAYS",
    "PG_EPOCH_UNIX_S",
    "PG_EPOCH_UNIX_US",
    "TRANSACTION_NOW",
    "datetime_to_pg",
    "pg_now",
    "pg_to_datetime",
    "unix_now_us",
]

#: PostgreSQL's epoch, 2000-01-01 00:00 UTC, as an aware datetime (timestamptz's zero).
PG_EPOCH: Final = datetime(2000, 1, 1, tzinfo=UTC)
#: The same instant as a naive datetime (timestamp without time zone's zero).
PG_EPOCH_NAIVE: Final = PG_EPOCH.replace(tzinfo=None)
#: Julian day number of PostgreSQL's epoch (``POSTGRES_EPOCH_JDATE``, datatype/timestamp.h).
PG_EPOCH_JDATE: Final = 2_451_545
#: Days from the Unix epoch (Arrow's and the lake's day 0) to PostgreSQL's.
PG_EPOCH_UNIX_DAYS: Final = 10_957
#: Seconds from the Unix epoch to PostgreSQL's.
PG_EPOCH_UNIX_S: Final = PG_EPOCH_UNIX_DAYS * 86_400
#: Microseconds from the Unix epoch to PostgreSQL's.
PG_EPOCH_UNIX_US: Final = PG_EPOCH_UNIX_S * 1_000_000
_ONE_US: Final = timedelta(microseconds=1)


#: The current transaction's start (Unix microseconds) while a session converts its
#: statement's values: PostgreSQL's 'now', 'today', … read the transaction's timestamp,
#: not the wall clock. Unset: the wall clock.
TRANSACTION_NOW: ContextVar[int | None] = ContextVar("transaction_now", default=None)


def unix_now_us() -> int:
    """'now' for value input: the transaction's timestamp when one is set, else the clock."""
    us = TRANSACTION_NOW.get()
    return time.time_ns() // 1000 if us is None else us


def pg_now() -> int:
    """Now as PostgreSQL's TimestampTz, exact to the microsecond."""
    return time.time_ns() // 1000 - PG_EPOCH_UNIX_US


def datetime_to_pg(value: datetime) -> int:
    """An aware datetime as a TimestampTz (integer arithmetic: microseconds survive far
    from the epoch); a naive one is refused, not guessed at."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("a PostgreSQL timestamptz needs an aware datetime")
    return (value - PG_EPOCH) // _ONE_US


def pg_to_datetime(value: int) -> datetime:
    """A TimestampTz as an aware UTC datetime; ValueError outside datetime's range
    (which includes the ±infinity sentinels), as the wire codec's copy raises."""
    try:
        return PG_EPOCH + timedelta(microseconds=value)
    except OverflowError as exc:
        raise ValueError(f"timestamp {value} is outside the datetime range") from exc
