"""psql, psycopg 3 and psycopg2 against the proxy, with PostgreSQL 15 as the reference:
the same script gives the same answers on both."""

from __future__ import annotations

import itertools
import subprocess
import time
from pathlib import Path

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import Client
from tests.proxy import ProxyServer

HERE = Path(__file__).parent
_db = itertools.count(1)



def psql(port: int, *args: str, dbname: str = "postgres", input: str | None = None) -> subprocess.CompletedProcess[str]:
    from tests.pgcluster import pg_bindir

    return subprocess.run(
        [str(pg_bindir() / "psql"), "-X", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", dbname, "-v", "ON_ERROR_STOP=1", *args],
        capture_output=True,
        text=True,
        timeout=120,
        input=input,
    )


def fresh_pg_db(pg15: PgCluster) -> str:
    name = f"ref{next(_db)}"
    pg15.psql(f"CREATE DATABASE {name}")
    return name


def test_psql_tour_matches_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    script = str(HERE / "sql" / "tour.sql")
    ref = psql(pg15.port, "-f", script, dbname=fresh_pg_db(pg15))
    assert ref.returncode == 0, ref.stderr
    got = psql(proxy.port, "-f", script)
    assert got.returncode == 0, got.stderr
    ref_lines, got_lines = ref.stdout.splitlines(), got.stdout.splitlines()
    for i, (a, b) in enumerate(zip(ref_lines, got_lines, strict=False)):
        assert a == b, f"line {i + 1} differs:\npostgres: {a!r}\nproxy:    {b!r}\ncontext:\n" + "\n".join(ref_lines[max(0, i - 5) : i + 3])
    assert len(ref_lines) == len(got_lines)


def _psycopg_tour(dsn: str) -> list[object]:
    import datetime as dt
    import decimal
    import uuid

    import psycopg
    from psycopg.types.json import Jsonb

    out: list[object] = []
    utc = dt.UTC
    with psycopg.connect(dsn) as c:
        c.execute(
            "CREATE TABLE p3 (id int PRIMARY KEY, t text, n numeric(10,2), d date, ts timestamptz, "
            "b bytea, f float8, arr int[], j jsonb, u uuid, flag bool, i8 bigint, tm time, iv interval)"
        )
        row = (1, "a'b", decimal.Decimal("1.50"), dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, 12, 30, tzinfo=utc), b"\x00\x01", 1.5, [1, None, 3], Jsonb({"a": [1, 2]}), uuid.UUID(int=7), True, 2**40, dt.time(1, 2, 3), dt.timedelta(days=1, seconds=5))
        c.execute("INSERT INTO p3 VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", row)
        with c.cursor() as cur:
            cur.executemany("INSERT INTO p3 (id, t, n) VALUES (%s, %s, %s)", [(i, f"t{i}", decimal.Decimal(i) / 4) for i in range(2, 6)])
        out.append(c.execute("SELECT * FROM p3 ORDER BY id").fetchall())
        with c.cursor(binary=True) as cur:
            cur.execute("SELECT * FROM p3 ORDER BY id")
            out.append(cur.fetchall())
            out.append([(d.name, d.type_code) for d in cur.description or []])
        out.append(c.execute("SELECT id FROM p3 WHERE t = %s OR n > %s ORDER BY id", ("a'b", 1)).fetchall())
        out.append(c.execute("SELECT %s::int + 1, %s::text || 'x', %s::date", (41, "y", dt.date(2020, 2, 29))).fetchall())
        # COPY out and back in
        with c.cursor() as cur:
            with cur.copy("COPY (SELECT id, t, n FROM p3 ORDER BY id) TO STDOUT") as cp:
                data = b"".join(bytes(b) for b in cp)
            out.append(data)
            c.execute("CREATE TABLE p3copy (id int, t text, n numeric(10,2))")
            with cur.copy("COPY p3copy FROM STDIN") as cp:
                cp.write(data)
            with cur.copy("COPY p3copy (id, t) FROM STDIN") as cp:
                cp.write_row((100, "row\twith\ttabs"))
                cp.write_row((101, None))
        out.append(c.execute("SELECT * FROM p3copy ORDER BY id").fetchall())
        with c.cursor(binary=True) as cur, cur.copy("COPY (SELECT id, t FROM p3copy ORDER BY id) TO STDOUT (FORMAT binary)") as cp:
            out.append(b"".join(bytes(b) for b in cp))
        c.commit()
        # transactions
        with c.transaction():
            c.execute("INSERT INTO p3 (id) VALUES (50)")
        try:
            with c.transaction():
                c.execute("INSERT INTO p3 (id) VALUES (51)")
                raise psycopg.Rollback()
        except psycopg.Rollback:
            pass
        with c.transaction(), c.transaction():  # a savepoint
            c.execute("INSERT INTO p3 (id) VALUES (52)")
        try:
            c.execute("INSERT INTO p3 (id) VALUES (50)")
        except psycopg.errors.UniqueViolation as e:
            out.append((e.sqlstate, e.diag.message_primary, e.diag.message_detail))
        c.rollback()
        out.append(c.execute("SELECT id FROM p3 WHERE id >= 50 ORDER BY id").fetchall())
        c.commit()
        # a server-side cursor
        with c.cursor(name="sc") as cur:
            cur.execute("SELECT id FROM p3 ORDER BY id")
            out.append(cur.fetchmany(2))
            out.append(cur.fetchall())
        c.commit()
        try:
            c.execute("SELECT nope FROM p3")
        except psycopg.errors.UndefinedColumn as e:
            out.append(e.sqlstate)
        c.rollback()
        c.execute("DROP TABLE p3")
        c.execute("DROP TABLE p3copy")
        c.commit()
    return out


def test_psycopg3_tour_matches_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    ref = _psycopg_tour(pg15.dsn(fresh_pg_db(pg15)))
    got = _psycopg_tour(proxy.dsn())
    for i, (a, b) in enumerate(zip(ref, got, strict=True)):
        assert a == b, f"step {i}:\npostgres: {a!r}\nproxy:    {b!r}"


def _psycopg2_tour(dsn: str) -> list[object]:
    import psycopg2
    import psycopg2.extras

    out: list[object] = []
    conn = psycopg2.connect(dsn)
    try:
        cur = conn.cursor()
        cur.execute("CREATE TABLE p2 (id serial4, v text)" if False else "CREATE TABLE p2 (id int PRIMARY KEY, v text, at timestamp)")
        psycopg2.extras.execute_values(cur, "INSERT INTO p2 VALUES %s", [(i, f"v{i}", None) for i in range(5)])
        cur.execute("SELECT * FROM p2 WHERE id > %(lo)s ORDER BY id", {"lo": 1})
        out.append(cur.fetchall())
        out.append([(d.name, d.type_code) for d in cur.description])
        conn.commit()
        cur.execute("UPDATE p2 SET v = %s WHERE id = %s", ("new", 3))
        out.append(cur.rowcount)
        conn.rollback()
        cur.execute("SELECT v FROM p2 WHERE id = 3")
        out.append(cur.fetchone())
        named = conn.cursor("n2")
        named.itersize = 2
        named.execute("SELECT id FROM p2 ORDER BY id")
        out.append(list(named))
        named.close()
        cur.execute("DROP TABLE p2")
        conn.commit()
    finally:
        conn.close()
    return out


def test_psycopg2_tour_matches_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    ref = _psycopg2_tour(pg15.dsn(fresh_pg_db(pg15)))
    got = _psycopg2_tour(proxy.dsn())
    assert got == ref


def test_exported_snapshot_is_shared_across_sessions(proxy: ProxyServer) -> None:
    import psycopg

    with psycopg.connect(proxy.dsn(), autocommit=True) as setup:
        setup.execute("CREATE TABLE snap_t (id int)")
        setup.execute("INSERT INTO snap_t VALUES (1), (2)")
    a = psycopg.connect(proxy.dsn(), autocommit=True)
    a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    name = a.execute("SELECT pg_export_snapshot()").fetchone()[0]  # type: ignore[index]
    with psycopg.connect(proxy.dsn(), autocommit=True) as w:
        w.execute("INSERT INTO snap_t VALUES (3)")
    b = psycopg.connect(proxy.dsn(), autocommit=True)
    b.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    b.execute(f"SET TRANSACTION SNAPSHOT '{name}'")
    assert b.execute("SELECT count(*) FROM snap_t").fetchone() == (2,)
    c = psycopg.connect(proxy.dsn(), autocommit=True)
    assert c.execute("SELECT count(*) FROM snap_t").fetchone() == (3,)
    c.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        c.execute("SET TRANSACTION SNAPSHOT 'nonsense'")
    for x in (a, b, c):
        x.close()


def test_vacuum_and_analyze_errors_match_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    """Maintenance commands from tools and scripts: accepted where PostgreSQL accepts them,
    refused with its SQLSTATE and message where it refuses them."""
    import psycopg

    bad = [
        "VACUUM nosuch",
        "VACUUM (foo) vt",
        "ANALYZE (full) vt",
        "ANALYZE vt (zz)",
        "BEGIN; VACUUM vt",
    ]

    def errors(dsn: str) -> list[tuple[str | None, str]]:
        out = []
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("CREATE TABLE vt (id int PRIMARY KEY, a int)")
            for sql in bad:
                try:
                    c.execute(sql)
                    out.append((None, "ok"))
                except psycopg.Error as e:
                    out.append((e.sqlstate, e.diag.message_primary or ""))
                finally:
                    c.execute("ROLLBACK") if c.info.transaction_status else None
            c.execute("DROP TABLE vt")
        return out

    ref = errors(pg15.dsn(fresh_pg_db(pg15)))
    assert [s for s, _ in ref] == ["42P01", "42601", "42601", "42703", "25001"]
    assert errors(proxy.dsn()) == ref


def test_numeric_input_errors_match_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    """Bad numeric input and a value too big for numeric(p, s) are refused as PostgreSQL
    refuses them — not stored as given (an unconstrained numeric is kept as its text)."""
    import psycopg

    bad = [
        "INSERT INTO nt VALUES (1, 'abc', 1)",
        "INSERT INTO nt VALUES (2, '1.2.3', 1)",
        "INSERT INTO nt VALUES (3, 1, 12345.678)",
        "INSERT INTO nt VALUES (4, 1, 9999.995), (5, 2, 1)",
        "UPDATE nt SET n = 'x1' WHERE id = 9",
        "INSERT INTO nt VALUES (6, 1.50, 2.345), (7, 7, -2.345), (8, ' 007.10 ', 1e2)",
    ]

    def errors(dsn: str) -> list[tuple[str | None, str]]:
        out = []
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("CREATE TABLE nt (id int PRIMARY KEY, n numeric, m numeric(6,2))")
            c.execute("INSERT INTO nt VALUES (9, 1, 1)")
            for sql in bad:
                try:
                    c.execute(sql)
                    out.append((None, "ok"))
                except psycopg.Error as e:
                    out.append((e.sqlstate, e.diag.message_primary or ""))
            out.append(("rows", repr(c.execute("SELECT id, n, m, n::text, m::text FROM nt ORDER BY id").fetchall())))
            c.execute("DROP TABLE nt")
        return out

    ref = errors(pg15.dsn(fresh_pg_db(pg15)))
    assert [s for s, _ in ref][:6] == ["22P02", "22P02", "22003", "22003", "22P02", None]
    assert errors(proxy.dsn()) == ref


# -- replication slots through SQL -----------------------------------------------------------
SLOT_LISTING = (
    "SELECT slot_name, plugin, slot_type, database = current_database() AS here, temporary, active, two_phase "
    "FROM pg_replication_slots WHERE slot_name LIKE 'sqlfn%' ORDER BY 1"
)
SLOT_SESSION = [
    "SELECT * FROM pg_create_logical_replication_slot('sqlfn_a', 'pgoutput')",
    SLOT_LISTING,
    "SELECT pg_create_logical_replication_slot('sqlfn_a', 'pgoutput')",  # exists
    "SELECT pg_create_logical_replication_slot('sqlfn_t', 'pgoutput', true)",  # the record's text
    SLOT_LISTING,  # a temporary slot is its session's (active)...
    "SELECT slot_name, lsn FROM pg_create_logical_replication_slot('sqlfn_2pc', 'pgoutput', twophase => true)",
    "SELECT 'init' FROM pg_create_logical_replication_slot('sqlfn_b', 'pgoutput', false)",  # made though unread
    "SELECT * FROM pg_create_logical_replication_slot('sqlfn_c', 'no_such_plugin')",
    SLOT_LISTING,  # ... and an error in the session drops it
    "SELECT * FROM pg_create_logical_replication_slot('Bad-Name', 'pgoutput')",
    "SELECT pg_create_logical_replication_slot('sqlfn_d')",
    "SELECT pg_create_logical_replication_slot('sqlfn_d', 'pgoutput', nonsense => true)",
    "SELECT pg_create_logical_replication_slot(NULL, 'pgoutput')",  # strict: NULL in, NULL out
    SLOT_LISTING,
    "SELECT slot_name FROM pg_replication_slot_advance('sqlfn_a', pg_current_wal_lsn())",
    "SELECT pg_replication_slot_advance('sqlfn_a', '0/1')",  # behind the slot
    "SELECT pg_replication_slot_advance('sqlfn_a', '0/0')",
    "SELECT * FROM pg_replication_slot_advance('sqlfn_nope', '0/1')",
    "SELECT * FROM pg_replication_slot_advance('sqlfn_a', 'xyz')",
    "SELECT pg_drop_replication_slot('sqlfn_a')",
    "SELECT * FROM pg_drop_replication_slot('sqlfn_b')",
    "SELECT pg_drop_replication_slot('sqlfn_a')",  # gone
    "CREATE TABLE sqlfn_w (id int)",
    "BEGIN",
    "INSERT INTO sqlfn_w VALUES (1)",
    "SELECT pg_create_logical_replication_slot('sqlfn_e', 'pgoutput')",  # after a write
    "ROLLBACK",
    "BEGIN ISOLATION LEVEL REPEATABLE READ",
    "SELECT count(*) FROM sqlfn_w",
    "SELECT slot_name FROM pg_create_logical_replication_slot('sqlfn_e', 'pgoutput')",  # reads only: fine
    "COMMIT",
    "SELECT slot_name FROM pg_create_logical_replication_slot('sqlfn_t', 'pgoutput', temporary => true)",
    SLOT_LISTING,
]
SLOT_OTHER_SESSION = [
    "SELECT pg_drop_replication_slot('sqlfn_t')",  # the temporary slot is its session's
    "SELECT pg_replication_slot_advance('sqlfn_t', '0/1')",
    "SELECT pg_drop_replication_slot('sqlfn_2pc')",
]


def _slot_functions(dsn: str) -> list[tuple[object, ...]]:
    seen = []
    with Client(dsn) as maker:
        seen += [maker(s) for s in SLOT_SESSION]
        with Client(dsn) as other:
            seen += [other(s) for s in SLOT_OTHER_SESSION]
    with Client(dsn) as after:  # the temporary slot went with its session
        deadline = time.monotonic() + 10
        temporary = SLOT_LISTING.replace("WHERE", "WHERE temporary AND")
        while after.conn.execute(temporary).fetchall() != [] and time.monotonic() < deadline:
            time.sleep(0.05)
        seen.append(after("SELECT pg_drop_replication_slot('sqlfn_e')"))
        seen.append(after(SLOT_LISTING))
        after("DROP TABLE sqlfn_w")
    return seen


def test_replication_slot_functions_match_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    """pg_create_logical_replication_slot() / pg_replication_slot_advance() /
    pg_drop_replication_slot() as a CDC tool or a test suite calls them: the same columns, types, values and errors as PostgreSQL 15."""
    ours = _slot_functions(proxy.dsn())
    theirs = _slot_functions(pg15.dsn(fresh_pg_db(pg15)))
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a == b, f"statement {i}: proxy {a!r} != PostgreSQL {b!r}"
    # (what it covered)
    assert ("error", "42710", 'replication slot "sqlfn_a" already exists', None) in ours
    assert ("error", "55006", 'replication slot "sqlfn_t" is active for PID n', None) in ours
    assert ours[-1][0] == "rows" and ours[-1][2] == []  # every slot dropped or gone


def test_replication_slot_functions_need_the_replication_attribute(proxy: ProxyServer, pg15: PgCluster) -> None:
    seen = []
    for admin, plain in ((proxy.dsn(), proxy.dsn(user="sqlfn_plain")), (pg15.dsn(), pg15.dsn(user="sqlfn_plain"))):
        with psycopg.connect(admin, autocommit=True) as c:
            c.execute("CREATE ROLE sqlfn_plain LOGIN")
        try:
            with Client(plain) as c:
                seen.append([
                    c("SELECT * FROM pg_create_logical_replication_slot('sqlfn_x', 'pgoutput')"),
                    c("SELECT pg_drop_replication_slot('sqlfn_x')"),
                ])  # fmt: skip
        finally:
            with psycopg.connect(admin, autocommit=True) as c:
                c.execute("DROP ROLE sqlfn_plain")
    assert seen[0] == seen[1]
    assert seen[0][0] == ("error", "42501", "must be superuser or replication role to use replication slots", None)
