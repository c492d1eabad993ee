"""Dates and timestamps read in DateStyle's field order, and the make_* constructors, against
a real PostgreSQL 15: the same statements on both servers under ``SET DateStyle`` to each
order, full answers (values as their text) and errors (SQLSTATE, message, HINT) compared.

Every way a text becomes a date goes through the order: typed literals, casts of text at
run time, literals compared with a date column, INSERT/UPDATE values, COPY FROM, and Bind
parameters (unknown-typed and declared as date, a prepared statement re-bound after the
order changed)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import hypothesis.strategies as st
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from psycopg.adapt import Dumper
from psycopg.types.string import TextLoader

from tests.pgcluster import PgCluster
from tests.pgcompare import masked
from tests.proxy import ProxyServer

ORDERS = ("MDY", "DMY", "YMD")
_dbs = itertools.count(1)


def _connect(dsn: str) -> psycopg.Connection:
    """A connection that loads date/time values as their text (BC dates included) and does
    not prepare a repeated query by itself: PostgreSQL reads a prepared statement's
    literals once, at Parse, in the DateStyle of that moment, which the proxy does not
    follow (it reads them at each execution)."""
    conn = psycopg.connect(dsn, autocommit=True)
    conn.prepare_threshold = None
    for oid in (1082, 1083, 1114, 1184, 1182, 1115):  # date, time, the timestamps, date[], timestamp[]
        conn.adapters.register_loader(oid, TextLoader)
    return conn


def _outcome(conn: psycopg.Connection, sql: str, params: tuple[object, ...] | None = None) -> tuple[object, ...]:
    """What a client sees: rows with column names and types, the command tag, or the
    error's SQLSTATE, message and HINT; plus the DateStyle the server last reported."""
    try:
        cur = conn.execute(sql, params)
    except psycopg.Error as e:
        got: tuple[object, ...] = ("error", e.sqlstate, masked(e.diag.message_primary), e.diag.message_hint)
    else:
        if cur.description is None:
            got = ("done", cur.statusmessage)
        else:
            got = ("rows", [(d.name, d.type_code) for d in cur.description], cur.fetchall())
    return (*got, conn.info.parameter_status("DateStyle"))


@pytest.fixture(scope="module")
def pair(pg15: PgCluster, proxy: ProxyServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    """(PostgreSQL, proxy) connections, each in a database of its own."""
    db = f"dates{next(_dbs)}"
    pg15.psql(f"CREATE DATABASE {db}")
    ref, got = _connect(pg15.dsn(dbname=db)), _connect(proxy.dsn())
    try:
        yield ref, got
    finally:
        ref.close()
        got.close()


def _same(pair: tuple[psycopg.Connection, psycopg.Connection], statements: list[str]) -> None:
    ref, got = pair
    for sql in statements:
        assert _outcome(got, sql) == _outcome(ref, sql), sql


#: The input forms of PostgreSQL's date.sql regression test, which it runs in each order.
DATE_FORMS = [
    "January 8, 1999", "1999-01-08", "1999-01-18", "1/8/1999", "1/18/1999", "18/1/1999",
    "01/02/03", "19990108", "990108", "1999.008", "J2451187", "January 8, 99 BC",
    "99-Jan-08", "1999-Jan-08", "08-Jan-99", "08-Jan-1999", "Jan-08-99", "Jan-08-1999",
    "99-08-Jan", "1999-08-Jan",
    "99 Jan 08", "1999 Jan 08", "08 Jan 99", "08 Jan 1999", "Jan 08 99", "Jan 08 1999",
    "99 08 Jan", "1999 08 Jan",
    "99-01-08", "1999-01-08", "08-01-99", "08-01-1999", "01-08-99", "01-08-1999", "99-08-01",
    "1999-08-01",
    "99 01 08", "1999 01 08", "08 01 99", "08 01 1999", "01 08 99", "01 08 1999", "99 08 01",
    "1999 08 01",
]  # fmt: skip


@pytest.mark.parametrize("order", ORDERS)
def test_date_sql_input_forms_in_each_order(pair: tuple[psycopg.Connection, psycopg.Connection], order: str) -> None:
    """date.sql's forms: '01/02/03' is 2003-01-02, 2003-02-01 or 2001-02-03; '1/18/1999' in
    DMY and 'January 8, 99 BC' in YMD are 22008 with the datestyle HINT."""
    _same(pair, [f"SET DateStyle TO {order}", "SHOW DateStyle"])
    _same(pair, [f"SELECT date '{text}'" for text in DATE_FORMS])
    _same(pair, [f"SELECT timestamp '{text} 04:05:06.5', timestamptz '{text} 04:05+02'" for text in DATE_FORMS])
    _same(pair, [f"SELECT '{text}'::text::date, '{text} 04:05'::text::timestamp" for text in DATE_FORMS])
    # (a time reads and checks a date before it; not Julian days: the proxy refuses those)
    _same(pair, [f"SELECT time '{text} 04:05', time '04:05 {text}'" for text in DATE_FORMS if text[0] != "J"])
    _same(pair, ["RESET DateStyle"])


#: Settings as PostgreSQL reads them: an order alone keeps the ISO style, a style alone the
#: order; other styles are refused by the proxy (PostgreSQL accepts them: not compared).
SETTING_SCRIPT = [
    "SHOW DateStyle", "SET DateStyle = 'DMY'", "SHOW DateStyle", "SET DateStyle = 'ISO'", "SHOW DateStyle",
    "SET DateStyle = 'ISO, YMD'", "SELECT current_setting('DateStyle')", "SET DateStyle = ymd, iso",
    "SET DateStyle = 'Euro'", "SET DateStyle = 'US'", "SET DateStyle = 'ISO, DMY, MDY'", "SET DateStyle = 'foo'",
    "SET DateStyle = 'ISO,'", "SET DateStyle = 'ISO, German'", "SELECT set_config('DateStyle', 'DMY', false)",
    "SELECT set_config('DateStyle', 'ISO', false)", "SELECT setting FROM pg_settings WHERE name = 'DateStyle'",
    "BEGIN", "SET LOCAL DateStyle = 'YMD'", "SELECT date '01/02/03'", "COMMIT", "SELECT date '01/02/03'",
    "BEGIN", "SET DateStyle = 'MDY'", "ROLLBACK", "SHOW DateStyle", "SET DateStyle TO DEFAULT", "SHOW DateStyle",
]  # fmt: skip


def test_datestyle_is_set_shown_and_reported_as_postgresql_does(pair: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """SHOW, current_setting, set_config, pg_settings and the ParameterStatus after each
    statement (the last element of each outcome) match; errors carry PostgreSQL's words."""
    _same(pair, SETTING_SCRIPT)
    _same(pair, ["RESET DateStyle"])


@pytest.mark.parametrize("order", ORDERS)
def test_stored_compared_and_copied_dates_follow_the_order(pair: tuple[psycopg.Connection, psycopg.Connection], order: str) -> None:
    """INSERT (one row, several rows, from a SELECT), UPDATE, WHERE with literals, a text
    column cast at run time and COPY FROM all read '01/02/03' in the session's order."""
    table = f"dt_{order.lower()}"
    _same(pair, [
        f"SET DateStyle = '{order}'",
        f"CREATE TABLE {table} (id int PRIMARY KEY, d date, ts timestamp, tz timestamptz, t text)",
        f"INSERT INTO {table} VALUES (1, '01/02/03', '01/02/03 04:05', '01/02/03 04:05+01', '04/05/06')",
        f"INSERT INTO {table} VALUES (2, '2003-01-02', '03/04/05 10:00', '2001-02-03 00:00', '10/11/12'), (3, '08 01 99', NULL, NULL, '01/13/03')",
        f"INSERT INTO {table} SELECT 4, '10/11/12', '10/11/12', '10/11/12', '2003-02-01'",
        f"UPDATE {table} SET ts = '12/11/10 01:02' WHERE id = 3",
        f"SELECT id, d, ts, tz FROM {table} ORDER BY id",
        f"SELECT id FROM {table} WHERE d = '01/02/03' ORDER BY id",
        f"SELECT id FROM {table} WHERE d < '02/01/03' ORDER BY id",
        f"SELECT id FROM {table} WHERE d IN ('01/02/03', '10/11/12') ORDER BY id",
        f"SELECT id FROM {table} WHERE ts BETWEEN '01/01/01' AND '05/05/05' ORDER BY id",
        f"SELECT id, t::date FROM {table} WHERE id IN (1, 2, 4) ORDER BY id",
        f"SELECT id, t::date FROM {table} ORDER BY id",
        f"SELECT id FROM {table} WHERE d = '13/13/13'",
        f"INSERT INTO {table} VALUES (9, '01/13/03')",
        "SELECT '{01/02/03,04/05/06}'::date[]",
    ])  # fmt: skip
    for conn in pair:
        with conn.cursor().copy(f"COPY {table} (id, d, ts) FROM STDIN") as cp:
            cp.write("5\t01/02/03\t04/05/06 07:08\n6\t1999-01-08\t\\N\n")
    _same(pair, [f"SELECT id, d, ts FROM {table} WHERE id >= 5 ORDER BY id", "RESET DateStyle"])


class _DateText(str):
    """A text value bound with the date type's oid (declared at Parse as a date)."""


class _DateTextDumper(Dumper):
    oid = 1082

    def dump(self, obj: object) -> bytes:
        return str(obj).encode()


@pytest.mark.parametrize("order", ORDERS)
def test_text_parameters_read_dates_in_the_order(pair: tuple[psycopg.Connection, psycopg.Connection], order: str) -> None:
    """Bind parameters in text: unknown-typed ones cast or compared, ones declared date,
    a prepared statement bound again after DateStyle changed, and an INSERT's values."""
    table = f"dp_{order.lower()}"
    for conn in pair:
        conn.adapters.register_dumper(_DateText, _DateTextDumper)
    ref, got = pair
    _same(pair, [f"SET DateStyle = '{order}'", f"CREATE TABLE {table} (id int PRIMARY KEY, d date, ts timestamp)"])
    cases: list[tuple[str, tuple[object, ...]]] = [
        ("SELECT %s::date, %s::timestamp", ("01/02/03", "01/02/03 04:05")),
        ("SELECT %s::date", ("1/18/1999",)),
        ("SELECT %s AS d", (_DateText("01/02/03"),)),
        ("SELECT %s AS d", (_DateText("18/1/1999"),)),
        (f"INSERT INTO {table} VALUES (%s, %s, %s)", (1, "01/02/03", "04/05/06 07:08")),
        (f"INSERT INTO {table} VALUES (%s, %s, %s)", (2, _DateText("10/11/12"), None)),
        (f"SELECT id, d, ts FROM {table} ORDER BY id", ()),
        (f"SELECT id FROM {table} WHERE d = %s ORDER BY id", ("01/02/03",)),
        (f"SELECT id FROM {table} WHERE d > %s ORDER BY id", (_DateText("01/01/01"),)),
    ]
    for sql, params in cases:
        assert _outcome(got, sql, params) == _outcome(ref, sql, params), (sql, params)
    for conn in pair:  # the same prepared statement, bound again under another order
        conn.execute("SELECT %s::date", ("01/02/03",), prepare=True)
    other = "DMY" if order != "DMY" else "YMD"
    _same(pair, [f"SET DateStyle = '{other}'"])
    for params in (("01/02/03",), (_DateText("01/02/03"),)):
        assert _outcome(got, "SELECT %s::date", params) == _outcome(ref, "SELECT %s::date", params), params
    _same(pair, ["RESET DateStyle"])


# -- generated date texts ----------------------------------------------------------------------

_MONTHS = ["jan", "Feb", "MARCH", "apr", "May", "june", "Sep", "oct", "Nov", "december"]
_num = st.integers(0, 2100).map(str) | st.integers(0, 99).map(lambda n: f"{n:02d}") | st.sampled_from(["0", "00", "1", "12", "13", "31", "32", "366"])
_sep = st.sampled_from(["/", "-", ".", " "])
_month = st.sampled_from(_MONTHS)
_era = st.sampled_from(["", "", " BC", " AD"])
_numeric_date = st.tuples(_num, _sep, _num, _num, _era).map(lambda t: f"{t[0]}{t[1]}{t[2]}{t[1]}{t[3]}{t[4]}")
_named_date = st.tuples(_num, _month, _num, st.sampled_from(["-", " ", "/"]), st.integers(0, 2)).map(
    lambda t: [f"{t[1]}{t[3]}{t[0]}{t[3]}{t[2]}", f"{t[0]}{t[3]}{t[1]}{t[3]}{t[2]}", f"{t[0]}{t[3]}{t[2]}{t[3]}{t[1]}"][t[4]]
)
_run_together = st.integers(0, 99991231).map(lambda n: f"{n:06d}") | st.integers(1900, 2100).map(lambda y: f"{y}.{y % 367:03d}")
_phrase = st.tuples(_month, _num, _num).map(lambda t: f"{t[0]} {t[1]}, {t[2]}")
DATE_TEXTS = _numeric_date | _named_date | _run_together | _phrase


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(texts=st.lists(DATE_TEXTS, min_size=1, max_size=6))
def test_generated_date_texts_read_alike_in_every_order(pair: tuple[psycopg.Connection, psycopg.Connection], texts: list[str]) -> None:
    """Dates of the shapes DecodeDateTime takes (numbers with one separator, month names
    before, between or after, run-together digits, day of year, 'Month d, y', BC/AD), each
    as a date and as a timestamp, in each order: the same value or the same error."""
    ref, got = pair
    for order in ORDERS:
        ref.execute(f"SET DateStyle = '{order}'")
        got.execute(f"SET DateStyle = '{order}'")
        for text in texts:
            for sql in (f"SELECT date '{text}'", f"SELECT timestamp '{text} 12:34'"):
                assert _outcome(got, sql) == _outcome(ref, sql), (order, sql)
    ref.execute("RESET DateStyle")
    got.execute("RESET DateStyle")


# -- make_date, make_time, make_timestamp, make_timestamptz -----------------------------------

MAKE = [
    "SELECT make_date(2013, 7, 15), make_date(-44, 3, 15), make_date(-1, 1, 1), make_date(-4714, 11, 24)",
    "SELECT make_date(0, 7, 15)", "SELECT make_date(2013, 2, 30)", "SELECT make_date(2013, 13, 1)",
    "SELECT make_date(2013, 11, -1)", "SELECT make_date(-5, 13, 1)", "SELECT make_date(-4714, 11, 23)",
    "SELECT make_date(5874897, 12, 31)", "SELECT make_date(5874898, 1, 1)", "SELECT make_date(NULL, 1, 1)",
    "SELECT make_date('2000', '1', '1')", "SELECT make_date('x', 1, 1)", "SELECT make_date(2000::bigint, 1, 1)",
    "SELECT make_date(2000, 1)", "SELECT make_date(1.5, 1, 1)",
    "SELECT make_date(y, 1, 1) FROM generate_series(-3, -1) y ORDER BY 1",
    "SELECT make_date(y, 1, 1) FROM generate_series(-1, 1) y",
    "SELECT make_time(8, 20, 0.0), make_time(24, 0, 0), make_time(23, 59, 60), make_time(1, 2, 3.25)",
    "SELECT make_time(10, 55, 100.1)", "SELECT make_time(24, 0, 0.5)", "SELECT make_time(-1, 0, 0)",
    "SELECT make_time(1, 60, 0)", "SELECT make_time(1, 2, 'NaN')", "SELECT make_time(25, 0, '-0'::float8)",
    "SELECT make_time(25, 0, 1e-7)", "SELECT make_time(25, 0, 1234567.5)", "SELECT make_time(25, 0, 'Infinity')",
    "SELECT make_timestamp(2014, 12, 28, 6, 30, 45.887), make_timestamp(-44, 3, 15, 12, 30, 15)",
    "SELECT make_timestamp(2014, 12, 28, 6, 30, 60), make_timestamp(2014, 12, 28, 24, 0, 0)",
    "SELECT make_timestamp(2014, 12, 28, 6, 59, 59.9999999), make_timestamp(-4714, 11, 24, 0, 0, 0)",
    "SELECT make_timestamp(0, 7, 15, 12, 30, 15)", "SELECT make_timestamp(2014, 13, 28, 6, 30, 45.887)",
    "SELECT make_timestamp(2014, 12, 28, 6, 30, 60.5)", "SELECT make_timestamp(2014, 12, 28, 25, 0, 0)",
    "SELECT make_timestamp(2014, 2, 30, 1, 0, 0)", "SELECT make_timestamp(-4714, 11, 23, 0, 0, 0)",
    "SELECT make_timestamp(-4714, 10, 23, 0, 0, 0)", "SELECT make_timestamp(294277, 1, 1, 0, 0, 0)",
    "SELECT make_timestamp(2014, 12, 28, 6, 30, -1)", "SELECT make_timestamp(2014, 12, 28, 6, 60, 0)",
    "SELECT make_timestamptz(2014, 12, 28, 6, 30, 45.887), make_timestamptz(-44, 3, 15, 12, 30, 15)",
    "SELECT make_timestamptz(2014, 12, 28, 6, 30, 45.887, 'Europe/Paris'), make_timestamptz(2014, 12, 28, 6, 30, 45.887, 'EST')",
    "SELECT make_timestamptz(-44, 12, 28, 6, 30, 45.887, 'Europe/Paris')",
    "SELECT make_timestamptz(0, 7, 15, 12, 30, 15)", "SELECT make_timestamptz(2014, 12, 28, 6, 30, 60.5)",
    "SELECT pg_typeof(make_date(1, 1, 1)), pg_typeof(make_time(1, 1, 1)), pg_typeof(make_timestamptz(1, 1, 1, 1, 1, 1))",
]  # fmt: skip


def test_make_functions_answer_as_postgresql(pair: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """Negative years are BC with no year 0 (DuckDB's make_date(-44, 3, 15) is 45 BC), and
    every field, time and range error is 22008 with PostgreSQL's wording."""
    _same(pair, MAKE)


DATE_BIN = [
    "SELECT date_bin('15 minutes', timestamp '2020-02-11 15:44:17', timestamp '2001-01-01'),"
    " date_bin('15 minutes', timestamp '2020-02-11 15:44:17', timestamp '2001-01-01 00:02:30')",
    "SELECT date_bin('5 min', timestamp '2020-01-01', timestamp '2020-01-01 00:02:30'),"
    " date_bin('5 min', timestamp '2020-02-01 00:00', timestamp '2020-02-01 00:10'),"
    " date_bin('1 microsecond', timestamp '2020-02-01 00:00:00.123456', timestamp '2030-01-01')",
    "SELECT date_bin('2 days 3 hours', timestamp '1970-01-01', timestamp '2020-05-05 05:05:05.5'),"
    " date_bin('1 week', date '2024-03-07', timestamp '2024-03-04'), date_bin('1 day', timestamp '0044-03-15 BC 12:00', timestamp '2000-01-01')",
    "SELECT date_bin('1 hour', timestamptz '2020-02-11 15:44:17+05', timestamptz '2001-01-01 00:30+00'),"
    " date_bin('7 days', '2020-02-11 15:44:17', '2001-01-01'), date_bin('1 hour', timestamp 'infinity', timestamp '2001-01-01')",
    "SELECT pg_typeof(date_bin('5 min', '2020-01-01', '2020-01-01')), pg_typeof(date_bin('5 min', date '2020-01-01', timestamp '2020-01-01')),"
    " pg_typeof(date_bin('5 min', timestamp '2020-01-01', timestamptz '2020-01-01'))",
    "SELECT date_bin(NULL, timestamp '2020-01-01', timestamp '2020-01-01') IS NULL, date_bin('1 min', NULL::timestamp, timestamp '2020-01-01') IS NULL",
    "SELECT date_bin('5 min', timestamp '2020-01-01', timestamp 'infinity')",
    "SELECT date_bin('1 month', timestamp '2020-01-01', timestamp '2020-01-01')",
    "SELECT date_bin('-1 min', timestamp '2020-01-01', timestamp '2020-01-01')",
    "SELECT date_bin('1 min -60 sec', timestamp '2020-01-01', timestamp '2020-01-01')",
    "SELECT date_bin(x * interval '10 min', timestamp '2020-01-01 01:01:01', timestamp '2020-01-01') FROM generate_series(1, 4) x ORDER BY 1",
    "SELECT date_bin('5 min', 1, 2)",
]  # fmt: skip


def test_date_bin_answers_as_postgresql(pair: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """date_bin floors to the bin's start whatever side the origin is on, keeps an infinite
    source, and refuses months, a stride not above zero and an infinite origin as PostgreSQL."""
    _same(pair, DATE_BIN)


#: special words keep a time given beside them; a zone whose offset depends on the date
#: needs a date, which a time of day has not.
SPECIAL_INPUTS = [
    "SELECT timestamp '10:30 today' = timestamp 'yesterday' + interval '1 day 10 hr 30 min'",
    "SELECT timestamp 'tomorrow 10:00' - timestamp 'today', timestamp '10:30 yesterday' < timestamp 'today'",
    "SELECT '15:36:39 America/New_York'::time",
    "SELECT '15:36:39 UTC'::time, '15:36:39-04'::time, '15:36:39 EST'::time",
    "SELECT '2003-04-12 04:05:06 America/New_York'::time",
    "SELECT interval 'P.Y0M3DT4H5M6S'",
    "SELECT interval 'P.5Y', interval 'P5.Y', interval 'PT.5S'",
    "SELECT timestamp '2024-01-01 00:00' AT TIME ZONE 'Etc/GMT+3', timestamp '2024-01-01 00:00' AT TIME ZONE 'est5edt'",
    "SELECT timestamp '2024-03-10 02:30' AT TIME ZONE 'America/New_York'",
    "SELECT timestamp '2024-01-01 00:00' AT TIME ZONE 'Foo/Bar'",
]


def test_special_words_and_zones_in_time_input(pair: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    _same(pair, SPECIAL_INPUTS)
