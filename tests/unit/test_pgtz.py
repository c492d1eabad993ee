"""The session TimeZone's parsing and offsets (decoding/pgtz.py), as PostgreSQL 15 shows
and applies them: SHOW's text for each form of value, its 22023 errors, the offset of a
wall-clock time in a gap or an overlap, and EncodeTimezone's text."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decoding import pgtz
from decoding.errors import PgError

SHOWN = {
    "america/new_york": "America/New_York",
    "US/Eastern": "US/Eastern",
    "utc+3": "UTC+3",
    "pst8pdt": "PST8PDT",
    "-8": "<-08>+08",
    "10.5": "<+10:30>-10:30",
    "+5": "<+05>-05",
    "100": "<+100>-100",
    "<-08>+08": "<-08>+08",
    "<+10:30>-10:30": "<+10:30>-10:30",
    "Etc/GMT+3": "Etc/GMT+3",
    "utc": "UTC",
}


@pytest.mark.parametrize(("value", "shown"), SHOWN.items())
def test_shown_as_postgresql_shows_it(value: str, shown: str) -> None:
    assert pgtz.parse_setting(value).name == shown
    assert pgtz.zone_of(shown).name == shown  # (a shown value reads back as itself)


@pytest.mark.parametrize(
    ("value", "detail"),
    [("foo", None), ("z", None), ("1e3", "UTC timezone offset is out of range."), ("200", "UTC timezone offset is out of range.")],
)
def test_invalid_values(value: str, detail: str | None) -> None:
    with pytest.raises(PgError) as e:
        pgtz.parse_setting(value)
    assert (e.value.sqlstate, str(e.value), e.value.detail) == ("22023", f'invalid value for parameter "TimeZone": "{value}"', detail)


def test_offsets_west_and_east() -> None:
    assert pgtz.parse_setting("UTC+3").fixed == -3 * 3600  # POSIX: hours west
    assert pgtz.parse_setting("-8").fixed == -8 * 3600  # a number: hours east
    assert pgtz.parse_setting("Etc/GMT+3").fixed == -3 * 3600


def _us(*a: int) -> int:
    return (datetime.datetime(*a) - datetime.datetime(1970, 1, 1)) // datetime.timedelta(microseconds=1)


def test_gap_and_overlap_as_determine_timezone_offset() -> None:
    ny = pgtz.parse_setting("America/New_York")
    assert ny.local_offset(_us(2020, 3, 8, 2, 30)) == -5 * 3600  # in the gap: the offset before it
    assert ny.local_offset(_us(2020, 11, 1, 1, 30)) == -5 * 3600  # twice: the later one
    assert ny.utc_offset(_us(1880, 1, 1)) == -(4 * 3600 + 56 * 60 + 2)  # LMT
    assert pgtz.encode_offset(ny.utc_offset(_us(1880, 1, 1))) == "-04:56:02"
    assert ny.abbrev(_us(2020, 7, 1)) == "EDT"
    assert pgtz.parse_setting("UTC+3").abbrev(0) == "UTC"
    assert pgtz.parse_setting("-8").abbrev(0) == "-08"


@given(st.integers(-(10**17), 9 * 10**17))
def test_offsets_far_from_today_repeat_or_hold(us: int) -> None:
    """Past zoneinfo's years the 400-year cycle repeats the rules, before them the first
    offset holds: no instant fails."""
    ny = pgtz.parse_setting("America/New_York")
    off = ny.utc_offset(us)
    assert -6 * 3600 < off < -3 * 3600
    assert ny.local_offset(us) in (-5 * 3600, -4 * 3600, -(4 * 3600 + 56 * 60 + 2))


@pytest.mark.parametrize(("east", "text"), [(0, "+00"), (-18000, "-05"), (19800, "+05:30"), (-17762, "-04:56:02")])
def test_encode_offset(east: int, text: str) -> None:
    assert pgtz.encode_offset(east) == text
