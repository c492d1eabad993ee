"""to_char, to_number, to_date and to_timestamp against a real PostgreSQL 15: every template
pattern and modifier over values of every type the proxy holds (BC years, infinities,
numerics held as text and as DECIMAL), then generated values and templates. The proxy must
answer exactly as PostgreSQL does, or fail with PostgreSQL's error.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from psycopg.types.string import TextLoader

from tests.pgcluster import PgCluster
from tests.pgcompare import Client
from tests.proxy import ProxyServer

_tables = itertools.count(1)

#: Every datetime pattern (upper- and lower-case spellings where they differ).
PATTERNS = [
    "HH", "HH12", "HH24", "MI", "SS", "MS", "US", "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "SSSS",
    "SSSSS", "AM", "PM", "am", "pm", "A.M.", "P.M.", "a.m.", "p.m.", "Y,YYY", "YYYY", "YYY", "YY",
    "Y", "IYYY", "IYY", "IY", "I", "BC", "AD", "bc", "ad", "B.C.", "A.D.", "b.c.", "a.d.", "MONTH",
    "Month", "month", "MON", "Mon", "mon", "MM", "DAY", "Day", "day", "DY", "Dy", "dy", "DDD",
    "IDDD", "DD", "D", "ID", "W", "WW", "IW", "CC", "J", "Q", "RM", "rm", "TZ", "tz", "TZH", "TZM", "OF",
]  # fmt: skip
#: The modifiers, around a pattern.
MODIFIERS = ["{}", "FM{}", "{}TH", "{}th", "FM{}th", "TM{}", "{}SP", "FX{}"]
#: Patterns an interval has (the others raise 22007).
INTERVAL_PATTERNS = [p for p in PATTERNS if p not in {"BC", "AD", "bc", "ad", "B.C.", "A.D.", "b.c.", "a.d.", "MONTH", "Month", "month", "MON", "Mon", "mon", "DAY", "Day", "day", "DY", "Dy", "dy", "D", "ID", "TZ", "tz", "TZH", "TZM", "OF"}]  # fmt: skip

SETUP = [
    "CREATE TABLE ts (id int, ts timestamp, tz timestamptz, d date)",
    """INSERT INTO ts VALUES
      (1, '2020-05-03 13:04:05.123456', '2020-05-03 13:04:05.123456+00', '2020-05-03'),
      (2, '1999-12-31 23:59:59.999999', '1999-12-31 23:59:59.999999+00', '1999-12-31'),
      (3, '2008-12-29 00:00:00', '2008-12-29 00:00:00+00', '2008-12-29'),
      (4, '0044-03-15 10:00:00 BC', '0044-03-15 10:00:00+00 BC', '0044-03-15 BC'),
      (5, '4713-11-24 00:00:00 BC', '4713-11-24 00:00:00+00 BC', '4713-11-24 BC'),
      (6, '294246-12-31 23:59:59', '294246-12-31 23:59:59+00', '5874897-12-31'),
      (7, 'infinity', '-infinity', 'infinity'),
      (8, '0001-01-01 00:00:00 BC', '0001-01-01 12:00:00+00', '0001-01-01 BC'),
      (9, NULL, NULL, NULL)""",
    "CREATE TABLE iv (id int, iv interval, t time)",
    """INSERT INTO iv VALUES (1, '1 year 2 mons 3 days 04:05:06.789', '13:04:05.5'),
      (2, '-1 year -2 mons -3 days -04:05:06.789', '00:00:00'), (3, '0', '23:59:59.999999'),
      (4, '300000 hours', '12:00'), (5, '-13 mons', '00:00:00.000001'), (6, '12 mons', NULL)""",
    "CREATE TABLE nums (id int, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, n numeric, nd numeric(20,6))",
    """INSERT INTO nums VALUES
      (1, 0, 0, 0, 0, 0, 0, 0), (2, 1, 1, 1, 1, 1, 1, 1), (3, -12, -1234, -4567890123456789, -1.5, -123.456, -0.005, -1234.5678),
      (4, 3999, 2147483647, 9223372036854775807, 1e10, 1e15, '12345678901234567890.123456789', 99999999999999.999999),
      (5, -32768, -2147483648, -9223372036854775808, 'NaN', 'NaN', 'NaN', 0.000001),
      (6, 42, 112, 13, 'Infinity', '-Infinity', 'Infinity', 0.5),
      (7, 11, 4000, 3999, 0.1, 0.5, '0.000049', 42.42),
      (8, NULL, NULL, NULL, NULL, NULL, NULL, NULL)""",
]

NUMBER_TEMPLATES = [
    "9999", "0000", "9,999", "9G999", "9999.99", "9999D99", "FM9999.99", "FM0000.0000", "S9999",
    "9999S", "9999MI", "MI9999", "PL9999", "SG9999", "9999PR", "FM9999PR", "L9999", "RN", "rn",
    "FMRN", "9999TH", "9999th", "FM9999th", "9.99EEEE", "9EEEE", "99V99", "FM99V9", '"pre"9999"post"',
    "9 9 9 9", "B9999", "00.00", "FM9.", ".99", "99SG99", "9,999,999,999,999,999.999", "S0.9",
    "FM9990.99", "999.99PR", "L9G999D99", "9.99999999999999999999", "99999999999999999999.99",
    "RN SG MI PL", "",
]  # fmt: skip

TO_NUMBER = [
    ("-34,338,492", "99G999G999"), ("-34,338,492.654,878", "99G999G999D999G999"),
    ("<564646.654564>", "999999.999999PR"), ("0.00001-", "9.999999S"), ("5.01-", "FM9.999999MI"),
    ("5 4 4 4 4 8 . 7 8", "9 9 9 9 9 9 . 9 9"), (".01", "FM9.99"), (".-01", "S99.99"),
    (" . 0 1-", " 9 9 . 9 9 S"), ("34,50", "999,99"), ("123,000", "999G"), ("$1,234.56", "L99,999.99"),
    ("42nd", "99th"), ("1234", "9999V99"), ("12345", "99.99"), ("-", "9"), (" ", "999"), ("5", "."),
    ("1,2", "FM9,9"), ("€5", "L9"), ("XIV", "RN"), ("1e5", "9EEEE"), ("<12>", "99PR"), ("12", ""),
    ("99999999999999999999999999999999999999999.5", "99999999999999999999999999999999999999999.9"),
]  # fmt: skip

TO_TIMESTAMP = [
    ("2011-12-18 11:38 AM", "YYYY-MM-DD HH12:MI AM"), ("2011-12-18 11:38 P.M.", "YYYY-MM-DD HH12:MI P.M."),
    ("0097/Feb/16 --> 08:14:30", "YYYY/Mon/DD --> HH:MI:SS"), ("97/2/16 8:14:30", "FMYYYY/FMMM/FMDD FMHH:FMMI:FMSS"),
    ("1985 January 12", "YYYY FMMonth DD"), ("1,582nd VIII 21", "Y,YYYth FMRM DDth"),
    ("15 \"text between quote marks\" 98 54 45", 'HH24 "\\"text between quote marks\\"" YY MI SS'),
    ("05121445482000", "MMDDHH24MISSYYYY"), ("2000January09Sunday", "YYYYFMMonthDDFMDay"),
    ("97/Feb/16", "FXYY:Mon:DD"), ("19971116", "YYYYMMDD"), ("1997 BC 11 16", "YYYY BC MM DD"),
    ("9-1116", "Y-MMDD"), ("995-1116", "YYY-MMDD"), ("2005426", "YYYYWWD"), ("2005527", "IYYYIWID"),
    ("2005364", "IYYYIDDD"), ("2011-12-18 11:38 -05:20", "YYYY-MM-DD HH12:MI TZH:TZM"), ("2000 -10", "YYYY TZH"),
    ("2018-11-02 12:34:56.123456", "YYYY-MM-DD HH24:MI:SS.FF3"), ("2018-11-02 12:34:56.025", "YYYY-MM-DD HH24:MI:SS.MS"),
    ("2015-02-11 86000", "YYYY-MM-DD SSSSS"), ("10:30", "HH24:MI"), ("", ""), ("21 05", "CC YY"),
    ("2451545", "J"), ("2020 2020", "YYYY IYYY"), ("Monday Monday 2020", "Day Day YYYY"),
    ("2020 PM 13", "YYYY AM HH"), ("2016-02-30 15:50:55", "YYYY-MM-DD HH24:MI:SS"),
    ("2016-06-13 25:00:00", "YYYY-MM-DD HH24:MI:SS"), ("2020 +16", "YYYY TZH"), ("2020 UTC", "YYYY TZ"),
    ("123", "DDD"), ("x", "Y,YYY"), ("2147483647", "CC"), ("294277-01-01", "YYYY-MM-DD"),
    ("20", "YYYY-MM"), ("4714-11-23 BC", "YYYY-MM-DD BC"), ("5874897-12-31", "YYYY-MM-DD"),
]  # fmt: skip

ERRORS = [
    "SELECT to_char('2020-01-01', 'YYYY')",
    "SELECT to_char(NULL, 'YYYY')",
    "SELECT to_char('2020-01-01', 'YYYY'::text)",
    "SELECT to_char('1', 'YYYY'::varchar)",
    "SELECT to_char(true, 'x')",
    "SELECT to_char('10:00'::timetz, 'HH')",
    "SELECT to_number(12, '99')",
    "SELECT to_char(12, '9PR9'), to_char(1, '9.9.9'), to_char(1, 'EEEE9')",
    "SELECT to_char(1, '9V9.9')",
    "SELECT to_char(1, 'S9S')",
    "SELECT to_char(interval '1 day', 'Day')",
    "SELECT to_char(1.5::numeric, '9.9EEEEPR')",
    "SELECT to_char('NaN'::numeric, '9TH')",
    "SELECT to_char(12345678901234::numeric, 'RN')",
    "SELECT to_char(5::int8, '9V9999999999999999999')",
]


@pytest.fixture(scope="module")
def clients(proxy: ProxyServer, pg15: PgCluster) -> Iterator[tuple[Client, Client]]:
    pg15.psql("CREATE DATABASE formatting_vs")
    with Client(pg15.dsn(dbname="formatting_vs")) as ref, Client(proxy.dsn()) as got:
        for c in (ref, got):  # (psycopg's own loaders refuse BC years)
            for t in ("date", "timestamp", "timestamptz", "interval"):
                c.conn.adapters.register_loader(t, TextLoader)
        for sql in SETUP:
            assert got(sql) == ref(sql), sql
        yield ref, got


def _same(clients: tuple[Client, Client], statements: list[str]) -> None:
    ref, got = clients
    for sql in statements:
        assert repr(got(sql)) == repr(ref(sql)), sql


def _lit(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def test_to_char_of_timestamps_every_pattern_and_modifier(clients: tuple[Client, Client]) -> None:
    stmts = []
    for mod in MODIFIERS:
        tmpl = _lit(" ".join(mod.format(p) for p in PATTERNS))
        stmts.append(f"SELECT id, to_char(ts, {tmpl}), to_char(tz, {tmpl}), to_char(d, {tmpl}) FROM ts ORDER BY id")
    stmts += [
        """SELECT to_char(ts, '"quoted YYYY" \\"YYYY\\" \\YYYY FMxyz é€ ''q''') FROM ts ORDER BY id""",
        "SELECT to_char(ts, ''), to_char(tz, 'FM'), to_char(d, 'FX') FROM ts ORDER BY id",
        "SELECT to_char(timestamp '2020-01-01 10:00', 'HH12 AM'), to_char(date '2020-05-03', 'TZ TMDay')",
        "SELECT to_char(ts, 'DDTHSP ddth HH12PM hh24am Y,YYYth') FROM ts ORDER BY id",
    ]
    _same(clients, stmts)


def test_to_char_of_intervals_and_times(clients: tuple[Client, Client]) -> None:
    stmts = []
    for mod in MODIFIERS:
        tmpl = _lit(" ".join(mod.format(p) for p in INTERVAL_PATTERNS))
        stmts.append(f"SELECT id, to_char(iv, {tmpl}), to_char(t, {tmpl}) FROM iv ORDER BY id")
    for p in ("Day", "MON", "BC", "TZ", "D", "ID", "OF"):
        stmts.append(f"SELECT to_char(iv, '{p}') FROM iv WHERE id = 1")
    _same(clients, stmts)


def test_to_char_of_numbers_every_pattern(clients: tuple[Client, Client]) -> None:
    for tmpl in NUMBER_TEMPLATES:
        t = _lit(tmpl)
        for col in ("i2", "i4", "i8", "f4", "f8", "n", "nd"):
            per_row = [f"SELECT to_char({col}, {t}) FROM nums WHERE id = {i}" for i in range(1, 9)]
            _same_or_one_of(clients, f"SELECT id, to_char({col}, {t}) FROM nums ORDER BY id", per_row)
    stmts = [
        "SELECT to_char(1234.5, 'L9999D99G'), to_char(12, 'RN SG MI PL'), to_char(-0.0::float8, '9.9')",
        "SELECT to_char(1e300::float8, '9.9'), to_char(1e-300::float8, '9.' || repeat('9', 400) || 'EEEE')",
        "SELECT to_char(n * 3, '9999999999999999999999.9999'), to_char(nd / 7, 'FM999.99999') FROM nums ORDER BY id",
        "SELECT to_char(sum(i8), '999,999,999,999,999,999,999'), to_char(avg(i4), '9999999999.999') FROM nums",
    ]
    _same(clients, stmts)


def test_to_number_to_date_to_timestamp(clients: tuple[Client, Client]) -> None:
    stmts = [f"SELECT to_number({_lit(t)}, {_lit(f)})" for t, f in TO_NUMBER]
    for t, f in TO_TIMESTAMP:
        stmts += [f"SELECT to_timestamp({_lit(t)}, {_lit(f)})", f"SELECT to_date({_lit(t)}, {_lit(f)})"]
    stmts += [
        "SELECT to_number('12', '99') + 1, to_date('2020-01-01', 'YYYY-MM-DD') + 1, to_timestamp('2020', 'YYYY') + interval '1 day'",
        "SELECT pg_typeof(to_number('1', '9')), pg_typeof(to_date('1', 'Y')), pg_typeof(to_timestamp('1', 'Y'))",
        "SELECT to_char(to_timestamp('2020-05-03 10:11', 'YYYY-MM-DD HH24:MI'), 'Day DD Month YYYY HH12:MI AM')",
        "SELECT to_number(to_char(n, '99999999999999999999.999999999'), '99999999999999999999.999999999') FROM nums ORDER BY id",
    ]
    _same(clients, stmts)


def test_errors_are_postgresqls(clients: tuple[Client, Client]) -> None:
    _same(clients, ERRORS)


# -------------------------------------------------------------------------- generated

_DCH_TOKENS = [*PATTERNS, "SSSSS", "FF6", "I", "IY", "y,yyy", "hh24", "iddd", "fx", "rm", "tzh"]
_LITERALS = [" ", "-", "/", ":", ",", ".", "x", '"ab"', '"a\\"b"', '\\"', "5", "é", "  ", "T", "\\", "'"]


@st.composite
def datetime_templates(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 7))):
        if draw(st.integers(0, 9)) < 6:
            p = draw(st.sampled_from(_DCH_TOKENS))
            p = draw(st.sampled_from(["", "", "", "FM", "TM", "fm", "FX"])) + p
            p += draw(st.sampled_from(["", "", "", "", "TH", "th", "SP"]))
            parts.append(p)
        else:
            parts.append(draw(st.sampled_from(_LITERALS)))
    return "".join(parts)


_NUM_TOKENS = ["9", "9", "99", "0", "0", ".", "D", ",", "G", "PR", "S", "L", "MI", "PL", "SG", "RN", "rn", "TH", "th", "V", "EEEE", "FM", "B", "C", " ", "x", '"ab"', "-", "€", "SP"]  # fmt: skip
number_templates = st.lists(st.sampled_from(_NUM_TOKENS), max_size=8).map("".join)

timestamps = st.one_of(
    st.builds(
        lambda y, bc, mo, d, h, mi, s, us: f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}.{us:06d}{' BC' if bc else ''}",
        st.integers(1, 9999), st.booleans(), st.integers(1, 12), st.integers(1, 28), st.integers(0, 23),
        st.integers(0, 59), st.integers(0, 59), st.integers(0, 999999),
    ),
    st.sampled_from(["infinity", "-infinity", "4713-11-24 00:00:00 BC", "294246-12-31 23:59:59.999999"]),
)  # fmt: skip
_digits = st.text("0123456789", min_size=1, max_size=30)
numerics = st.one_of(
    st.builds(lambda neg, i, f: ("-" if neg else "") + i + ("." + f if f else ""), st.booleans(), _digits, st.one_of(st.just(""), _digits)),
    st.sampled_from(["0", "0.5", "-0.5", "9.995", "3999.5", "NaN", "Infinity", "-Infinity"]),
)  # fmt: skip
_SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _same_or_one_of(clients: tuple[Client, Client], sql: str, per_row: list[str]) -> None:
    """The answer, or an error PostgreSQL raises for one of the rows: which row fails
    first is not part of the answer."""
    ref, got = clients
    expected, answer = ref(sql), got(sql)
    if expected[0] == "error":
        raised = {r[:4] for r in map(ref, per_row) if r[0] == "error"}
        assert answer[:4] in raised, (sql, answer)
    else:
        assert repr(answer) == repr(expected), sql


@_SETTINGS
@given(st.lists(timestamps, min_size=1, max_size=5), datetime_templates())
def test_generated_timestamps_and_templates(clients: tuple[Client, Client], values: list[str], template: str) -> None:
    ref, got = clients
    t = f"gts{next(_tables)}"
    rows = ", ".join(f"({i}, {_lit(v)}, {_lit(v + ('' if 'inf' in v else '+00'))})" for i, v in enumerate(values))
    for sql in (f"CREATE TABLE {t} (id int, a timestamp, b timestamptz)", f"INSERT INTO {t} VALUES {rows}"):
        assert got(sql) == ref(sql), sql
    tmpl = _lit(template)
    sql = f"SELECT id, to_char(a, {tmpl}), to_char(b, {tmpl}), to_char(a::date, {tmpl}) FROM {t} ORDER BY id"
    _same_or_one_of(clients, sql, [sql])


@_SETTINGS
@given(
    st.lists(st.tuples(st.integers(-1000, 1000), st.integers(-400, 400), st.integers(-(10**12), 10**12)), min_size=1, max_size=5),
    datetime_templates(),
)  # fmt: skip
def test_generated_intervals_and_templates(clients: tuple[Client, Client], values: list[tuple[int, int, int]], template: str) -> None:
    vals = ", ".join(f"({i}, '{m} mons {d} days {us} microseconds'::interval)" for i, (m, d, us) in enumerate(values))
    sql = f"SELECT id, to_char(v, {_lit(template)}) FROM (VALUES {vals}) t(id, v) ORDER BY id"
    _same_or_one_of(clients, sql, [sql])


def _fits_decimal(n: str) -> bool:
    """A value numeric(38,10) holds (the lake keeps it as a DECIMAL, which has no NaN)."""
    return n not in ("NaN", "Infinity", "-Infinity") and len(n.lstrip("-").split(".")[0].lstrip("0")) <= 28


@_SETTINGS
@given(
    st.lists(st.tuples(numerics, st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=True, allow_infinity=True)), min_size=1, max_size=4),
    number_templates,
)  # fmt: skip
def test_generated_numbers_and_templates(clients: tuple[Client, Client], values: list[tuple[str, int, float]], template: str) -> None:
    ref, got = clients
    t = f"gnum{next(_tables)}"
    rows = ", ".join(
        f"({i}, {_lit(n)}, {_lit(n) if _fits_decimal(n) else 'NULL'}, {i8}, {i8 % 2**31 - 2**30}, {_lit(repr(f))}, {_lit(repr(f))})"
        for i, (n, i8, f) in enumerate(values)
    )  # fmt: skip
    create = f"CREATE TABLE {t} (id int, n numeric, nd numeric(38,10), i8 int8, i4 int4, f8 float8, f4 float4)"
    for sql in (create, f"INSERT INTO {t} VALUES {rows}"):
        expected = ref(sql)
        assert got(sql)[:2] == expected[:2], sql
        if expected[0] == "error":  # a float4 out of range
            return
    tmpl = _lit(template)
    for col in ("n", "nd", "i8", "i4", "f8", "f4"):
        sql = f"SELECT id, to_char({col}, {tmpl}) FROM {t} ORDER BY id"
        per_row = [f"SELECT to_char({col}, {tmpl}) FROM {t} WHERE id = {i}" for i in range(len(values))]
        _same_or_one_of(clients, sql, per_row)


@_SETTINGS
@given(st.text("0123456789.,-+ <>$abcTHth€", max_size=12), number_templates)
def test_generated_to_number(clients: tuple[Client, Client], text: str, template: str) -> None:
    _same(clients, [f"SELECT to_number({_lit(text)}, {_lit(template)})"])


@_SETTINGS
@given(timestamps, datetime_templates(), datetime_templates(), st.text("0123456789 -/:.,JanMonPMADbc+", max_size=14))
def test_generated_to_timestamp(clients: tuple[Client, Client], value: str, out_template: str, in_template: str, noise: str) -> None:
    """Text to_char wrote back through to_timestamp/to_date with the same template, and
    arbitrary text through another."""
    ref = clients[0]
    printed = ref(f"SELECT to_char({_lit(value)}::timestamp, {_lit(out_template)})")
    stmts = [f"SELECT to_timestamp({_lit(noise)}, {_lit(in_template)})", f"SELECT to_date({_lit(noise)}, {_lit(in_template)})"]
    if printed[0] == "rows" and printed[2][0][0] is not None:
        text = _lit(printed[2][0][0])
        stmts += [f"SELECT to_timestamp({text}, {_lit(out_template)})", f"SELECT to_date({text}, {_lit(out_template)})"]
    _same(clients, stmts)
