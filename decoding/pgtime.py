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

__all__ = ["PG_EPOCH", "PG_EPOCH_UNIX_US", "TRANSACTION_NOW", "datetime_to_pg", "pg_now", "pg_to_datetime", "unix_now_us"]

PG_EPOCH: Final = datetime(2000, 1, 1, tzinfo=UTC)
#: Microseconds from the Unix epoch to PostgreSQL's.
PG_EPOCH_UNIX_US: Final = 946_684_800_000_000
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
    """A TimestampTz as an aware UTC datetime; OverflowError outside datetime's range
    (which includes the ±infinity sentinels)."""
    return PG_EPOCH + timedelta(microseconds=value)
