"""formatting.py (PostgreSQL 15's formatting.c) against answers PostgreSQL 15 gave for the
same calls: every expectation below was read from a real PostgreSQL 15.18 (TimeZone UTC,
lc_* C). The integration tests compare the same functions with the server through the proxy;
these pin the pure rules (and their quirks) without one."""

from __future__ import annotations

import math
from typing import Any

import pytest

from decoding.errors import PgError
from decoding.pgvalues import _calendar as cal
from decoding.pgvalues._dtin import date_in, timestamp_in
from walsender_proxy.sql import formatting as fm
from walsender_proxy.sql import numeric_math as nm

#: (kind, value, template, PostgreSQL's answer or ("error", SQLSTATE, message)).
CASES: list[tuple[str, Any, str, Any]] = [
    ('ts', '2020-05-03 13:04:05.123456', 'YYYY-MM-DD HH24:MI:SS.US AM Day Month DDD IW J Q CC RM W WW TZ', '2020-05-03 13:04:05.123456 PM Sunday    May       124 18 2458973 2 21 V    1 18 '),
    ('ts', '2020-05-03 13:04:05.123456', 'FMDay FMMonth FMDDth FMHH12 TMMon TMDAY Y,YYY IYYY-IW-ID IDDD FF1 FF3 MS SSSS', 'Sunday May 3rd 1 May SUNDAY 2,020 2020-18-7 126 1 123 123 47045'),
    ('tstz', '2020-05-03 13:04:05', 'TZ tz TZH:TZM OF FMOF', 'UTC utc +00:00 +00 +0'),
    ('ts', '0044-03-15 10:00:00 BC', 'YYYY BC B.C. bc CC Y,YYY YYY YY Y J', '0044 BC B.C. bc -01 0,044 044 44 4 1705428'),
    ('ts', '2008-12-29 00:00:00', 'IYYY IW ID IDDD YYYY WW D', '2009 01 1 001 2008 52 2'),
    ('ts', '2020-01-01 00:00:00', 'FMxyz "quoted Y" \\"YYYY\\" \\YYYY', 'x0z quoted Y "2020" \\2020'),
    ('ts', '2020-01-01 00:00:00', 'DDTHSP ddth HH12PM hh24am', '01STSP 01st 12AM 00am'),
    ('iv', (14, 3, 3723004005), 'YYYY MM DD HH24 MI SS MS US DDD WW Q RM', '0001 02 03 01 02 03 004 004005 423 61 1 II  '),
    ('iv', (-14, -3, -3723004005), 'YYYY MM DD HH HH24:MI:SS.FF3 AM CC Y,YYY J RM', '-0001 -02 -3 -01 -01:-02:-03.-04 AM 00 0,-01 1720599 XI  '),
    ('iv', (0, 0, 10000000000000), 'HH24 HH12 SSSS', '2777 05 10000000'),
    ('int4', 1234, '9,999.99', ' 1,234.00'),
    ('int4', -1234, 'S9999', '-1234'),
    ('int4', 12, 'RN SG MI PL', '            XII '),
    ('int4', 2147483647, '9V9', '-10'),
    ('int4', 5, '9V9999999999', ' -2147483648'),
    ('int4', 1234, '99', ' ##'),
    ('int4', 42, '99th', ' 42nd'),
    ('int4', 1234, '9.99EEEE', ' 1.23e+03'),
    ('int8', 4567890123456789, '9G999G999G999G999G999', ' 4,567,890,123,456,789'),
    ('int8', -4567890123456789, 'FM9,999,999,999,999,999.00PR', '<4,567,890,123,456,789.00>'),
    ('int8', 4567890123456789, '9.9EEEE', ' 4.6e+15'),
    ('int8', 123456789012, 'RN', ('error', '22003', 'integer out of range')),
    ('float8', -0.0, '9.9', ' -.0'),
    ('float8', 1e+300, '9.9', ' #.'),
    ('float8', 1000000000000000.0, '9999999999999999.99', ' 1000000000000000'),
    ('float8', math.nan, '9999', '  NaN'),
    ('float8', -math.inf, '99999', '-#####'),
    ('float8', 0.5, 'FM0.999', '0.5'),
    ('float8', 2.5, 'RN', '             II'),
    ('float8', 1.1, '9.99999999999999999999EEEE', ' 1.10000000000000008882e+00'),
    ('float4', 123.456, '999.999999', ' 123.456'),
    ('float4', 0.1, '9.9999999999', '  .10000'),
    ('float4', 3.0, '9V99', ' 300'),
    ('numeric', '12345678901234567890.123456789', '99999999999999999999.99999', ' 12345678901234567890.12346'),
    ('numeric', '-0.005', 'S0.99', '-0.01'),
    ('numeric', '99.999', '9.99EEEE', ' 10.00e+01'),
    ('numeric', '0.000049', 'FM9.99999EEEE', ('error', '42601', '"EEEE" is incompatible with other formats')),
    ('numeric', 'NaN', '9999', '  NaN'),
    ('numeric', '-Infinity', '99', '-##'),
    ('numeric', '3999.5', 'RN', '###############'),
    ('numeric', 'NaN', 'RN', ('error', '0A000', 'cannot convert NaN to integer')),
    ('numeric', '1.5', '"x"9.9EEEE', ' 1.5e+00'),
    ('numeric', '1234.5', 'L9999D99G', '  1234.50,'),
    ('numeric', '0.1', '9.9', '  .1'),
    ('numeric', '0.1', '0.9', ' 0.1'),
    ('numeric', '12', '9PR9', ('error', '42601', '"9" must be ahead of "PR"')),
    ('numeric', '12', '9.9V9', ('error', '42601', 'cannot use "V" and decimal point together')),
    ('tonum', '-34,338,492', '99G999G999', '-34338492'),
    ('tonum', '<564646.654564>', '999999.999999PR', '-564646.654564'),
    ('tonum', '5.01-', 'FM9.999999S', '-5.01'),
    ('tonum', '$1,234.56', 'L99,999.99', '1234.56'),
    ('tonum', '1234', '9999V99', '12.3400000000000000'),
    ('tonum', '12345', '99.99', ('error', '22003', 'numeric field overflow')),
    ('tonum', ' ', '999', ('error', '22P02', 'invalid input syntax for type numeric: " "')),
    ('tonum', '5', '.', ('error', '22003', 'numeric field overflow')),
    ('tonum', 'XIV', 'RN', ('error', '0A000', '"RN" not supported for input')),
    ('tonum', '1', '', None),
    ('tonum', '€5', 'L9', '5'),
    ('tonum', '42nd', '99th', '42'),
    ('tots', '2011-12-18 11:38 PM', 'YYYY-MM-DD HH12:MI PM', '2011-12-18 23:38:00+00'),
    ('tots', '97/Feb/16', 'FXYY:Mon:DD', '1997-02-16 00:00:00+00'),
    ('tots', '2000 -10', 'YYYY TZH', '2000-01-01 10:00:00+00'),
    ('tots', '2011-12-18 11:38 +05:20', 'YYYY-MM-DD HH12:MI TZH:TZM', '2011-12-18 06:18:00+00'),
    ('tots', '2018-11-02 12:34:56.123456', 'YYYY-MM-DD HH24:MI:SS.FF3', '2018-11-02 12:34:56.123+00'),
    ('tots', '10:30', 'HH24:MI', '0001-01-01 10:30:00+00 BC'),
    ('tots', '2147483647', 'CC', '0200-01-01 00:00:00+00 BC'),
    ('tots', '2005527', 'IYYYIWID', '2006-01-01 00:00:00+00'),
    ('tots', 'Monday Monday 2020', 'Day Day YYYY', ('error', '22007', 'conflicting values for "Day" field in formatting string')),
    ('tots', '2020 x', 'YYYY TZ', ('error', '0A000', 'formatting field "TZ" is only supported in to_char')),
    ('tots', '2016-06-13 25:00:00', 'YYYY-MM-DD HH24:MI:SS', ('error', '22008', 'date/time field value out of range: "2016-06-13 25:00:00"')),
    ('tots', '2020 +16', 'YYYY TZH', ('error', '22009', 'time zone displacement out of range: "2020 +16"')),
    ('tots', '20', 'YYYY', '0020-01-01 00:00:00+00'),
    ('tots', '2020 1', 'YYYY ID', ('error', '22007', 'invalid combination of date conventions')),
    ('tots', '1,582nd VIII 21', 'Y,YYYth FMRM DDth', '1582-08-21 00:00:00+00'),
    ('todate', '2451545', 'J', '2000-01-01'),
    ('todate', '2020 123', 'YYYY DDD', '2020-05-02'),
    ('todate', '123', 'DDD', ('error', '22007', 'cannot calculate day of year without year information')),
    ('todate', '5874898-01-01', 'YYYY-MM-DD', ('error', '22008', 'date out of range: "5874898-01-01"')),
    ('todate', '4714-11-23 BC', 'YYYY-MM-DD BC', ('error', '22008', 'date out of range: "4714-11-23 BC"')),
    ('todate', 'x', 'Y,YYY', ('error', '22007', 'invalid input string for "Y,YYY"')),
    ('todate', '2020-02-30', 'YYYY-MM-DD', ('error', '22008', 'date/time field value out of range: "2020-02-30"')),
]


def _run(kind: str, v: Any, f: str) -> Any:
    if kind in ("ts", "tstz"):
        return fm.timestamp_to_char(timestamp_in(v, kind == "tstz"), f, tz=kind == "tstz")
    if kind == "iv":
        return fm.interval_to_char(*v, f)
    if kind in ("int4", "int8"):
        return fm.int_to_char(v, f, bits=32 if kind == "int4" else 64)
    if kind in ("float4", "float8"):
        return fm.float_to_char(fm._f32(v) if kind == "float4" else v, f, float4=kind == "float4")
    if kind == "numeric":
        return fm.numeric_to_char(nm.parse(v), f)
    if kind == "tonum":
        return fm.to_number(v, f)
    if kind == "tots":
        return cal.format_timestamp(fm.to_timestamp(v, f), True)
    return cal.format_date(fm.to_date(v, f))


@pytest.mark.parametrize(("kind", "value", "template", "expected"), CASES)
def test_postgresql_15_answers(kind: str, value: Any, template: str, expected: Any) -> None:
    if isinstance(expected, tuple):
        with pytest.raises(PgError) as e:
            _run(kind, value, template)
        assert (e.value.sqlstate, e.value.message) == expected[1:]
    else:
        assert _run(kind, value, template) == expected


def test_empty_templates_and_infinities() -> None:
    """to_char of a datetime with '' is NULL, of a number ''; infinities are NULL;
    to_number with '' is NULL."""
    assert fm.timestamp_to_char(0, "", tz=False) is None
    assert fm.timestamp_to_char(cal.TS_POS_INF, "YYYY", tz=True) is None
    assert fm.date_to_char(cal.DATE_NEG_INF, "YYYY") is None
    assert fm.date_to_char(date_in("2020-05-03"), "TZ FMDay") == "UTC Sunday"
    assert fm.int_to_char(5, "", bits=32) == ""
    assert fm.to_number("5", "") is None


def test_interval_refuses_calendar_patterns() -> None:
    for p in ("Day", "Mon", "BC", "TZ", "D", "ID", "OF"):
        with pytest.raises(PgError) as e:
            fm.interval_to_char(1, 1, 1, p)
        assert e.value.sqlstate == "22007"


def test_template_parsing() -> None:
    """Prefixes bind to the keyword after them (and vanish before anything else), one suffix
    at most, quoted text and the backslash-quote escape are literal."""
    nodes = fm.parse_datetime_template('FMDDth"Y"\\"x')
    assert [(n.kind, n.key.name if n.key else n.char, n.suffix) for n in nodes] == [
        ("action", "DD", fm.S_FM | fm.S_th), ("char", "Y", 0), ("separator", '"', 0), ("char", "x", 0),
    ]
    assert fm.parse_datetime_template("FMé") == (fm.Node("char", char="é"),)


def test_number_template_descriptions_are_fresh_copies() -> None:
    """The processor changes its description (Roman mode, V, float digits): each call gets
    its own copy of the cached one."""
    _, a = fm.parse_number_template("FM9V99")
    a.pre = 99
    _, b = fm.parse_number_template("FM9V99")
    assert (b.pre, b.multi) == (1, 2)
    with pytest.raises(PgError) as e:
        fm.parse_number_template("9.9.9")
    assert (e.value.sqlstate, e.value.message) == ("42601", "multiple decimal points")


def test_c_arithmetic_helpers() -> None:
    assert (fm._cdiv(-7, 2), fm._cmod(-7, 2)) == (-3, -1)
    assert fm._i32(2**31) == -(2**31)
    assert fm.date2j(2000, 1, 1) == fm.POSTGRES_EPOCH_JDATE
    assert fm.j2date(fm.POSTGRES_EPOCH_JDATE) == (2000, 1, 1)
    assert fm._fmt_float(math.nan, 2, "f") == "NaN"
    assert fm._fmt_float(-0.0, 1, "f") == "-0.0"
    assert fm._fmt_float(1.5, 400, "e").endswith("0" * 50 + "e+00")
