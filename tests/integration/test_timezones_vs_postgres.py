"""The session TimeZone beyond UTC, against PostgreSQL 15: every value PostgreSQL accepts
(tz database names and their aliases, POSIX-style ``UTC+3`` read as hours west, numeric
offsets shown ``<-08>+08``, ``INTERVAL '+05:30' HOUR TO MINUTE``, ``LOCAL``/``DEFAULT``)
with its SHOW text and its errors; timestamptz printed in the zone (offsets with minutes
and seconds, LMT before the zone's standard time) and read in it (PostgreSQL's rules in
spring-forward gaps and fall-back overlaps); casts, date_trunc, extract, to_char, interval
arithmetic and generate_series across DST changes; the start-up parameter as psycopg and
pgjdbc send it. Everything is compared as the bytes each server sends (text and binary),
rows and SQLSTATEs; what the proxy cannot compute in a zone is refused with 0A000.
"""

from __future__ import annotations

import datetime
import itertools
import subprocess
import zoneinfo
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.pgcluster import PgCluster
from tests.pgcompare import raw_outcome
from tests.proxy import ProxyServer

_dbs = itertools.count(1)


def _pair(proxy: ProxyServer, pg15: PgCluster, **kw: str) -> tuple[psycopg.Connection, psycopg.Connection]:
    db = pg15.new_database(f"tzs{next(_dbs)}")
    return psycopg.connect(proxy.dsn(), autocommit=True, **kw), psycopg.connect(pg15.dsn(dbname=db), autocommit=True, **kw)


def _same(proxy: ProxyServer, pg15: PgCluster, statements: list[str], fmt: int = 0) -> None:
    px, pg = _pair(proxy, pg15)
    with px, pg:
        for sql in statements:
            assert raw_outcome(px, sql, fmt) == raw_outcome(pg, sql, fmt), sql


SETTINGS = [
    "SET TIME ZONE 'America/New_York'", "SHOW TimeZone",
    "SET TIME ZONE 'america/new_york'", "SHOW TimeZone",
    "SET TIME ZONE 'US/Eastern'", "SHOW TimeZone",
    "SET TIME ZONE 'Asia/Kolkata'", "SHOW TimeZone",
    "SET TIME ZONE 'utc+3'", "SHOW TimeZone",
    "SET TIME ZONE 'PST8PDT'", "SHOW TimeZone",
    "SET TIME ZONE 'EST5EDT'", "SHOW TimeZone",
    "SET TIME ZONE -8", "SHOW TimeZone",
    "SET TIME ZONE 10.5", "SHOW TimeZone",
    "SET TIME ZONE '+5'", "SHOW TimeZone",
    "SET TIME ZONE INTERVAL '+05:30' HOUR TO MINUTE", "SHOW TimeZone",
    "SET TIME ZONE INTERVAL '-08:00'", "SHOW TimeZone",
    "SET TimeZone = '<-08>+08'", "SHOW TimeZone",
    "SET TimeZone = '-04:15'", "SHOW TimeZone", "SET TimeZone = '+02:00:30'",
    "SET TimeZone = 'Etc/GMT+3'", "SHOW TimeZone",
    "SET TimeZone = '+02:00'", "SHOW TimeZone", "SELECT to_char(timestamptz '2020-06-01 08:00+00', 'OF TZH:TZM')",
    "SELECT set_config('TimeZone', 'Europe/London', false)", "SHOW TimeZone",
    "SELECT current_setting('TimeZone')",
    "SET TIME ZONE LOCAL", "SHOW TimeZone",
    "SET TIME ZONE 'Asia/Tokyo'", "SET TIME ZONE DEFAULT", "SHOW TimeZone",
    "SET TIME ZONE 'foo'", "SET TIME ZONE 'z'", "SET TIME ZONE '1e3'", "SET TIME ZONE 200",
    "SET TIME ZONE INTERVAL '1 day'", "SET TIME ZONE INTERVAL '1 month'",
    "SET TIME ZONE 'right/UTC'",
    "BEGIN", "SET LOCAL TIME ZONE 'Asia/Kolkata'", "SHOW TimeZone", "COMMIT", "SHOW TimeZone",
]  # fmt: skip


def test_set_and_show_timezone(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same(proxy, pg15, SETTINGS)


def _zone_statements(zone: str, tzt: str = "tzt") -> list[str]:
    return [s.replace("tzt", tzt) for s in _ZONE_STATEMENTS(zone)]


def _ZONE_STATEMENTS(zone: str) -> list[str]:
    return [
        f"SET TIME ZONE {zone}",
        "CREATE TABLE tzt (id int, ts timestamptz, t timestamp, d date)",
        "INSERT INTO tzt VALUES (1, '2020-03-08 01:30:00', '2020-03-08 02:30:00', '2020-03-08'),"
        " (2, '2020-11-01 01:30:00+00', '2020-11-01 01:30:00', '2020-11-01'),"
        " (3, '1883-11-18 12:00:00', '1883-11-18 12:00:00', '1883-11-18'),"
        " (4, '2021-06-30 23:59:59.5', '2021-06-30 23:59:59.5', '2021-06-30'),"
        " (5, '2020-10-04 01:45', '2020-10-04 02:10', '2020-04-05'),"
        " (6, '2020-03-29 01:30', '2020-10-25 01:30', '2020-03-29'),"
        " (7, 'infinity', '-infinity', 'infinity')",
        "SELECT id, ts, ts::text, t::timestamptz, d::timestamptz, ts::date, ts::time, ts::timestamp FROM tzt ORDER BY id",
        "SELECT id, ts AT TIME ZONE 'UTC', t AT TIME ZONE 'America/Chicago', timezone('Asia/Tokyo', ts) FROM tzt ORDER BY id",
        "SELECT id, ts AT TIME ZONE 'UTC+3', t AT TIME ZONE '-04:30', timezone('GMT-8', ts), timezone('utc+3', t) FROM tzt ORDER BY id",
        "SELECT id, date_trunc('day', ts), date_trunc('month', ts), date_trunc('hour', ts), date_trunc('week', ts) FROM tzt ORDER BY id",
        "SELECT id, extract(hour FROM ts), extract(day FROM ts), extract(epoch FROM ts), extract(timezone FROM ts),"
        " extract(timezone_hour FROM ts), extract(timezone_minute FROM ts), date_part('dow', ts) FROM tzt WHERE id < 7 ORDER BY id",
        "SELECT id, to_char(ts, 'YYYY-MM-DD HH24:MI:SS TZ tz OF TZH TZM'), to_char(d, 'YYYY-MM-DD HH24 OF') FROM tzt ORDER BY id",
        "SELECT id, ts + interval '1 day', ts + interval '1 month', ts - interval '1 day', ts + interval '24 hours' FROM tzt ORDER BY id",
        # the interval's months, then its days, then its time (timestamptz_pl_interval's order)
        "SELECT id, ts + interval '1 month -1 second', ts - interval '-1 month 1 second', ts + interval '1 month 2 days -30 hours',"
        " interval '1 mon -1 sec' + ts, ts + i FROM tzt, (VALUES (interval '-2 years 5 days -4 hours')) v(i) ORDER BY id",
        "SELECT * FROM generate_series(timestamptz '2020-03-07', timestamptz '2020-03-10', interval '1 day')",
        "SELECT * FROM generate_series(timestamptz '2020-10-03', timestamptz '2020-10-06', interval '1 day')",
        "SELECT * FROM generate_series(timestamptz '2020-01-31', timestamptz '2020-06-01', interval '1 month')",
        # a wall time a fall-back change repeats, reached by days or months: the later instant
        "SELECT timestamptz '2020-10-31 01:30' + interval '1 day', timestamptz '2020-10-01 01:30' + interval '1 month',"
        " timestamptz '2020-10-24 01:30' + interval '1 day', timestamptz '2020-11-02 01:30' - interval '1 day'",
        "SELECT * FROM generate_series(timestamptz '2020-10-31 01:30', timestamptz '2020-11-03', interval '1 day')",
        "SELECT generate_series(timestamptz '2020-11-03 01:30', timestamptz '2020-11-01 01:30-05', interval '-1 day')",
        "SELECT generate_series(timestamptz '2020-10-30 01:30', timestamptz '2020-11-01 01:30-04', interval '1 day')",
        "SELECT x, n FROM generate_series(timestamptz '2020-10-24 01:30', timestamptz '2020-10-26', interval '1 day') WITH ORDINALITY g(x, n)",
        "SELECT generate_series('2020-03-07 02:30', '2020-03-10', interval '1 day')",
        "SELECT generate_series(timestamptz '2020-03-07', timestamptz '2020-03-08', interval '0 days')",
        "SELECT make_timestamptz(2020, 3, 8, 2, 30, 0), make_timestamptz(2020, 11, 1, 1, 30, 0), make_timestamptz(2020, 10, 4, 2, 15, 0)",
        "SELECT make_timestamptz(2020, 6, 1, 12, 0, 0, 'UTC')",
        "SELECT to_json(ts), json_build_object('a', ts), row_to_json(row(ts)) FROM tzt ORDER BY id",
        "SELECT array_agg(ts ORDER BY id)::text FROM tzt",
        "SELECT id, ts = '2020-03-08 01:30:00', ts::varchar, 'x' || ts, format('%s', ts), concat(ts, '') FROM tzt ORDER BY id",
        "SELECT id, ts::timestamptz(0), t::timestamp(0) FROM tzt ORDER BY id",
        "SELECT timestamptz '2020-06-01 12:00:00' - timestamptz '2020-01-01 12:00:00'",
        "SELECT '2000-03-15 08:14:01 GMT+8'::timestamptz, '2000-03-15 08:14:01 America/New_York'::timestamptz,"
        " '2020-11-01 01:30 America/New_York'::timestamptz, '2020-03-08 02:30 America/New_York'::timestamptz",
        "SELECT timestamptz 'today' = current_date::timestamptz, 'now'::timestamptz <= now() + interval '1 minute',"
        " localtimestamp - now()::timestamp < interval '1 second', current_date = now()::date, localtime IS NOT NULL",
        "COPY tzt TO STDOUT",
        "COPY (SELECT ts, d FROM tzt ORDER BY id) TO STDOUT (FORMAT csv)",
        "SELECT max(ts), min(ts::date) FROM tzt",
        "DROP TABLE tzt",
    ]


ZONES = ["'America/New_York'", "'Asia/Kolkata'", "'Australia/Lord_Howe'", "'UTC+3'", "-8", "'Europe/London'", "'PST8PDT'"]


@pytest.mark.parametrize("zone", ZONES)
def test_timestamptz_in_a_session_zone(proxy: ProxyServer, pg15: PgCluster, zone: str) -> None:
    _same(proxy, pg15, _zone_statements(zone, f"tzt{next(_dbs)}"))


def test_binary_output_stays_utc_microseconds(proxy: ProxyServer, pg15: PgCluster) -> None:
    _same(proxy, pg15, [
        "SET TIME ZONE 'Asia/Kolkata'",
        "SELECT timestamptz '2020-06-01 08:00:00+00', '2020-06-01 08:00'::timestamptz, timestamp '2020-06-01 08:00'",
    ], fmt=1)  # fmt: skip


#: What the proxy computes in UTC only: refused under another zone (PostgreSQL answers).
REFUSED = [
    "SELECT to_timestamp('2020-06-01 12:00', 'YYYY-MM-DD HH24:MI')",
    "SELECT now()::timetz IS NOT NULL",
    "SELECT current_time IS NOT NULL",
    "SELECT generate_series(timestamptz '2020-10-31 01:30', timestamptz '2020-11-03', interval '1 day 1 hour')",
    "SET TIME ZONE 10.5",  # (ICU has no zone of a fixed +10:30: the next statement is refused)
]


def test_what_is_refused_outside_utc(proxy: ProxyServer) -> None:
    with psycopg.connect(proxy.dsn(), autocommit=True) as px:
        px.execute("SET TIME ZONE 'America/New_York'")
        for sql in REFUSED[:-1]:
            out = raw_outcome(px, sql)
            assert out[:2] == ("error", "0A000"), (sql, out)
        px.execute(REFUSED[-1])
        out = raw_outcome(px, "SELECT timestamptz '2020-06-01 08:00:00+00'")
        assert out[:2] == ("error", "0A000"), out
        px.execute("SET TIME ZONE 'Europe/Dublin'")  # (DuckDB's ICU has other rules for it than the tz files)
        out = raw_outcome(px, "SELECT timestamptz '2020-06-01 08:00:00+00'")
        assert out[:2] == ("error", "0A000"), out
        px.execute("SET TIME ZONE 'UTC'")
        assert raw_outcome(px, "SELECT timestamptz '2020-06-01 08:00:00+00'")[2] == [(b"2020-06-01 08:00:00+00",)]


def test_startup_parameter_psycopg(proxy: ProxyServer, pg15: PgCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """``options='-c TimeZone=…'``, and libpq's PGTZ, which it sends as the start-up
    packet's ``timezone`` parameter."""
    for kw in ({"options": "-c TimeZone=America/New_York"}, {"options": "-c timezone=-8"}, {}):
        if not kw:
            monkeypatch.setenv("PGTZ", "Asia/Kolkata")
        px, pg = _pair(proxy, pg15, **kw)
        with px, pg:
            assert px.info.parameter_status("TimeZone") == pg.info.parameter_status("TimeZone")
            for sql in ("SHOW TimeZone", "SELECT timestamptz '2020-06-01 08:00:00+00', '2020-01-01 00:00'::timestamptz", "RESET TimeZone", "SHOW TimeZone"):
                assert raw_outcome(px, sql) == raw_outcome(pg, sql), (kw, sql)


_JDBC = r"""
import java.sql.*;
public class TzClient {
  public static void main(String[] a) throws Exception {
    try (Connection c = DriverManager.getConnection(a[0])) {
      try (Statement s = c.createStatement()) {
        ResultSet r = s.executeQuery("SHOW TimeZone"); r.next(); System.out.println("zone " + r.getString(1));
        r = s.executeQuery("SELECT timestamptz '2020-06-01 08:00:00+00', '2020-03-08 02:30'::timestamptz, timestamp '2020-06-01 08:00'");
        r.next();
        for (int i = 1; i <= 3; i++) System.out.println(r.getString(i) + " | " + r.getTimestamp(i).getTime());
      }
      try (PreparedStatement p = c.prepareStatement("SELECT ?::timestamptz, ?::timestamptz::text")) {
        Timestamp t = Timestamp.valueOf("2020-11-01 01:30:00");
        p.setTimestamp(1, t); p.setTimestamp(2, t);
        ResultSet r = p.executeQuery(); r.next();
        System.out.println(r.getTimestamp(1).getTime() + " | " + r.getString(2));
      }
    }
  }
}
"""


def test_pgjdbc_sends_its_jvm_zone(proxy: ProxyServer, pg15: PgCluster, tmp_path: Path) -> None:
    jar = Path("/usr/share/java/postgresql.jar")
    if not jar.exists():
        pytest.skip("pgjdbc is missing (Debian's libpostgresql-jdbc-java)")
    src = tmp_path / "TzClient.java"
    src.write_text(_JDBC)
    db = pg15.new_database(f"tzj{next(_dbs)}")

    def run(port: int, dbname: str) -> str:
        url = f"jdbc:postgresql://127.0.0.1:{port}/{dbname}?user=postgres"
        cmd = ["java", "-Duser.timezone=America/New_York", "-cp", str(jar), str(src), url]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout

    got, want = run(proxy.port, "postgres"), run(pg15.port, db)
    assert "zone America/New_York" in want
    assert got == want


# -- instants near DST changes -------------------------------------------------------------------

_HYPO_ZONES = ["America/New_York", "Australia/Lord_Howe", "Europe/London", "Australia/Sydney", "America/Santiago", "Asia/Beirut"]


def _transitions(zone: str) -> list[datetime.datetime]:
    """UTC instants where ``zone``'s offset changes, 1900 to 2040 (hour by hour scan)."""
    z = zoneinfo.ZoneInfo(zone)
    out = []
    t = datetime.datetime(1900, 1, 1, tzinfo=datetime.UTC)
    prev = t.astimezone(z).utcoffset()
    step = datetime.timedelta(hours=6)
    while t.year < 2040:
        t2 = t + step
        off = t2.astimezone(z).utcoffset()
        if off != prev:
            lo, hi = t, t2
            while hi - lo > datetime.timedelta(minutes=1):
                mid = lo + (hi - lo) / 2
                if mid.astimezone(z).utcoffset() == prev:
                    lo = mid
                else:
                    hi = mid
            out.append(hi)
            prev = off
        t = t2
    return out


_TRANSITIONS = {z: _transitions(z) for z in _HYPO_ZONES}


@st.composite
def _near_change(draw: st.DrawFn) -> tuple[str, datetime.datetime]:
    zone = draw(st.sampled_from(_HYPO_ZONES))
    at = draw(st.sampled_from(_TRANSITIONS[zone]))
    return zone, at + datetime.timedelta(seconds=draw(st.integers(-3 * 3600, 3 * 3600)))


@pytest.fixture(scope="module")
def hypo_pair(proxy: ProxyServer, pg15: PgCluster) -> tuple[psycopg.Connection, psycopg.Connection]:
    return _pair(proxy, pg15)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_near_change())
def test_instants_near_dst_changes(hypo_pair: tuple[psycopg.Connection, psycopg.Connection], case: tuple[str, datetime.datetime]) -> None:
    """An instant and the wall-clock text around a zone's offset change: printed, read back
    without an offset (gaps and overlaps by PostgreSQL's rule), cast and truncated."""
    zone, at = case
    utc = at.strftime("%Y-%m-%d %H:%M:%S+00")
    wall = (at + (at.astimezone(zoneinfo.ZoneInfo(zone)).utcoffset() or datetime.timedelta())).strftime("%Y-%m-%d %H:%M:%S")
    sql = (
        f"SELECT '{utc}'::timestamptz, '{wall}'::timestamptz, '{utc}'::timestamptz::timestamp,"
        f" timestamp '{wall}'::timestamptz, date_trunc('day', '{utc}'::timestamptz), date_trunc('hour', '{utc}'::timestamptz),"
        f" '{utc}'::timestamptz + interval '1 day', to_char('{utc}'::timestamptz, 'HH24:MI:SS TZ OF'),"
        # (the wall clock of a day and of a month before, carried back: a repeated hour's later instant)
        f" '{utc}'::timestamptz - interval '1 day' + interval '1 day', '{utc}'::timestamptz - interval '1 month' + interval '1 month',"
        f" (SELECT array_agg(x) FROM generate_series('{utc}'::timestamptz - interval '2 days', '{utc}'::timestamptz + interval '1 day', interval '1 day') x)"
    )
    px, pg = hypo_pair
    for c in (px, pg):
        c.execute(f"SET TIME ZONE '{zone}'")
    assert raw_outcome(px, sql) == raw_outcome(pg, sql), (zone, sql)


def test_first_instant_east_of_greenwich(proxy: ProxyServer, pg15: PgCluster) -> None:
    """Local midnight of 4714-11-24 BC two hours east is before PostgreSQL's first instant."""
    _same(proxy, pg15, [
        "SET TimeZone = 'UTC-2'",
        "SELECT '4714-11-24 BC'::date::timestamptz", "SELECT '4714-11-25 BC'::date::timestamptz",
        "SELECT timestamp '4714-11-24 01:00 BC'::timestamptz", "SELECT 'infinity'::date::timestamptz",
    ])  # fmt: skip
