"""PostgreSQL's epoch (2000-01-01) is defined once, in ``decoding.pgtime``: its constants
agree with each other, the modules that use them under their own names hold the same
values, and the wire codec's deliberate copy (``walsender_proxy.protocol.replication``,
which may import only the standard library) equals it."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from decoding import pgtime
from decoding.pgvalues import _calendar as cal
from walsender_proxy.protocol import replication
from walsender_proxy.sql import formatting

#: Julian day number of proleptic Gregorian ordinal 0 (date.toordinal() counts 0001-01-01 as 1).
_JDN_OF_ORDINAL_0 = 1_721_425


def test_constants_agree() -> None:
    unix = datetime(1970, 1, 1, tzinfo=UTC)
    assert pgtime.PG_EPOCH.tzinfo is UTC
    assert pgtime.PG_EPOCH.date() == date(2000, 1, 1)
    assert pgtime.PG_EPOCH.replace(tzinfo=None) == pgtime.PG_EPOCH_NAIVE
    assert pgtime.PG_EPOCH_NAIVE.tzinfo is None
    assert pgtime.PG_EPOCH - unix == timedelta(days=pgtime.PG_EPOCH_UNIX_DAYS)
    assert pgtime.PG_EPOCH_UNIX_S == int((pgtime.PG_EPOCH - unix).total_seconds()) == 946_684_800
    assert pgtime.PG_EPOCH_UNIX_US == pgtime.PG_EPOCH_UNIX_S * 1_000_000
    assert pgtime.PG_EPOCH_JDATE == pgtime.PG_EPOCH.date().toordinal() + _JDN_OF_ORDINAL_0 == 2_451_545


def test_users_hold_the_same_values() -> None:
    assert cal.PG_EPOCH_DAYS == pgtime.PG_EPOCH_UNIX_DAYS
    assert cal.PG_EPOCH_USECS == pgtime.PG_EPOCH_UNIX_US == cal.PG_EPOCH_DAYS * cal.USECS_PER_DAY
    assert cal.POSTGRES_EPOCH_JDATE == formatting.POSTGRES_EPOCH_JDATE == pgtime.PG_EPOCH_JDATE


def test_wire_codec_copy_equals_pgtime() -> None:
    assert replication.PG_EPOCH == pgtime.PG_EPOCH
    assert replication.PG_EPOCH.utcoffset() == timedelta(0)
    assert replication._PG_EPOCH_UNIX == pgtime.PG_EPOCH_UNIX_S
    assert replication._PG_EPOCH_UNIX_US == pgtime.PG_EPOCH_UNIX_US
    assert replication.unix_to_pg(pgtime.PG_EPOCH_UNIX_S) == 0
    assert replication.pg_to_unix(0) == pgtime.PG_EPOCH_UNIX_S


@pytest.mark.parametrize("ts", [0, -1, 1, 757_382_400_123_456, -63_082_281_600_000_000])
def test_both_conversions_agree(ts: int) -> None:
    dt = pgtime.pg_to_datetime(ts)
    assert replication.pg_to_datetime(ts) == dt
    assert replication.datetime_to_pg(dt) == pgtime.datetime_to_pg(dt) == ts


@pytest.mark.parametrize("ts", [2**63 - 1, -(2**63)])
def test_both_refuse_out_of_range_with_value_error(ts: int) -> None:
    """The ±infinity sentinels are beyond datetime: both raise ValueError, the same type."""
    with pytest.raises(ValueError, match="outside the datetime range"):
        pgtime.pg_to_datetime(ts)
    with pytest.raises(ValueError, match="outside the datetime range"):
        replication.pg_to_datetime(ts)
