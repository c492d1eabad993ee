"""A stock PostgreSQL 15 subscriber against the proxy: initial copy, then the live stream,
then a table added to the publication — compared row for row, not by counts."""

from __future__ import annotations

import itertools
import time

import psycopg
import pytest

from decoding.lsn import parse_lsn
from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer

_n = itertools.count(1)



def rows(dsn: str, table: str, key: str = "id") -> list[tuple]:
    with psycopg.connect(dsn) as c:
        return c.execute(f"SELECT * FROM {table} ORDER BY {key}").fetchall()


def wait_identical(proxy_dsn: str, sub_dsn: str, tables: list[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        # repr: NaN must equal NaN here
        diffs = [t for t in tables if repr(rows(proxy_dsn, t)) != repr(rows(sub_dsn, t))]
        if not diffs:
            return
        if time.monotonic() > deadline:
            t = diffs[0]
            raise AssertionError(f"{t} differs:\nproxy: {rows(proxy_dsn, t)[:5]}\nsub:   {rows(sub_dsn, t)[:5]}")
        time.sleep(0.3)


def wait_ready(sub_dsn: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with psycopg.connect(sub_dsn) as c:
            states = [r[0] for r in c.execute("SELECT srsubstate FROM pg_subscription_rel").fetchall()]
        if states and all(s == "r" for s in states):
            return
        time.sleep(0.3)
    raise AssertionError(f"tables not ready: {states}")


DDL = """
CREATE TABLE t1 (id int PRIMARY KEY, v text, n numeric(10,2), ts timestamptz, tags text[], b bytea, j jsonb);
CREATE TABLE t2 (id bigint PRIMARY KEY, flag boolean, d date);
"""


def test_seed_self_test(proxy: ProxyServer, pg15: PgCluster) -> None:
    """Seed 000 §4.8: copy, writes, a table added with REFRESH PUBLICATION, more writes."""
    db = f"sub{next(_n)}"
    pg15.psql(f"CREATE DATABASE {db}")
    sub = pg15.dsn(db)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(DDL)
        c.execute("CREATE TABLE t3 (id int PRIMARY KEY, v text)")
        c.execute(
            "INSERT INTO t1 SELECT i, 'v' || i, i / 4.0, '2024-01-01'::timestamptz + i * interval '1 hour', "
            "ARRAY['a', 'b'], '\\x00ff'::bytea, '{\"k\": 1}'::jsonb FROM generate_series(1, 500) AS g(i)"
        )
        c.execute("INSERT INTO t2 SELECT i, i % 2 = 0, (DATE '2024-01-01' + i * interval '1 day')::date FROM generate_series(1, 300) AS g(i)")
        c.execute("INSERT INTO t3 VALUES (1, 'late')")
        c.execute("CREATE PUBLICATION p FOR TABLE t1, t2")
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute(DDL)
        c.execute("CREATE TABLE t3 (id int PRIMARY KEY, v text)")
        c.execute(f"CREATE SUBSCRIPTION s CONNECTION 'host=127.0.0.1 port={proxy.port} user=postgres dbname=postgres' PUBLICATION p")
    wait_ready(sub)
    wait_identical(proxy.dsn(), sub, ["t1", "t2"])

    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("INSERT INTO t1 (id, v) VALUES (1001, 'new'), (1002, 'newer')")
        c.execute("UPDATE t1 SET v = 'changed', n = n + 1 WHERE id <= 10")
        c.execute("DELETE FROM t2 WHERE id > 250")
        with c.transaction():
            c.execute("INSERT INTO t2 VALUES (9999, true, '2030-01-01')")
            c.execute("UPDATE t2 SET flag = NOT flag WHERE id = 1")
    wait_identical(proxy.dsn(), sub, ["t1", "t2"])

    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("ALTER PUBLICATION p ADD TABLE t3")
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("ALTER SUBSCRIPTION s REFRESH PUBLICATION")
    wait_ready(sub)
    wait_identical(proxy.dsn(), sub, ["t1", "t2", "t3"])

    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("INSERT INTO t3 VALUES (2, 'after refresh')")
        c.execute("INSERT INTO t1 (id, v) VALUES (2001, 'x')")
    wait_identical(proxy.dsn(), sub, ["t1", "t2", "t3"])

    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("DROP SUBSCRIPTION s")
    with psycopg.connect(proxy.dsn()) as c:
        left = c.execute("SELECT slot_name FROM pg_replication_slots").fetchall()
    assert left == [], left


def new_sub_db(pg15: PgCluster) -> str:
    db = f"sub{next(_n)}"
    pg15.psql(f"CREATE DATABASE {db}")
    return pg15.dsn(db)


def subscribe(sub: str, proxy: ProxyServer, name: str, pubs: str, extra: str = "") -> None:
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute(
            f"CREATE SUBSCRIPTION {name} CONNECTION 'host=127.0.0.1 port={proxy.port} user=postgres dbname=postgres' PUBLICATION {pubs} {extra}"
        )


def text_and_binary_subscribers(proxy: ProxyServer, pg15: PgCluster, ddl: str, pub: str, name: str) -> list[str]:
    """Two new subscriber databases made with ``ddl``, subscribed to ``pub`` as ``name0``
    (text) and ``name1`` (binary), their tables synchronised."""
    subs = [new_sub_db(pg15), new_sub_db(pg15)]
    for i, sub in enumerate(subs):
        with psycopg.connect(sub, autocommit=True) as c:
            c.execute(ddl)
        subscribe(sub, proxy, f"{name}{i}", pub, "WITH (binary = true)" if i else "")
    for sub in subs:
        wait_ready(sub)
    return subs


def test_many_tables_with_writes_during_initial_sync(proxy: ProxyServer, pg15: PgCluster) -> None:
    import threading

    pg15.psql("ALTER SYSTEM SET max_sync_workers_per_subscription = 4")
    pg15.psql("SELECT pg_reload_conf()")
    sub = new_sub_db(pg15)
    names = [f"m{i:02d}" for i in range(20)]
    ddl = ";".join(f"CREATE TABLE {n} (id int PRIMARY KEY, v int)" for n in names)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(ddl)
        for n in names:
            c.execute(f"INSERT INTO {n} SELECT i, 0 FROM generate_series(1, 200) AS g(i)")
        c.execute(f"CREATE PUBLICATION pm FOR TABLE {', '.join(names)}")
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute(ddl)
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        i = 1000
        try:
            with psycopg.connect(proxy.dsn(), autocommit=True) as c:
                while not stop.is_set():
                    n = names[i % len(names)]
                    c.execute(f"INSERT INTO {n} VALUES ({i}, {i})")
                    c.execute(f"UPDATE {n} SET v = v + 1 WHERE id = {1 + i % 200}")
                    i += 1
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    th = threading.Thread(target=writer)
    th.start()
    subscribe(sub, proxy, "sm", "pm")
    time.sleep(3)
    wait_ready(sub, timeout=120)
    stop.set()
    th.join()
    assert not errors, errors
    wait_identical(proxy.dsn(), sub, names, timeout=120)
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("DROP SUBSCRIPTION sm")


def test_out_of_order_commits_while_tables_sync(proxy: ProxyServer, pg15: PgCluster) -> None:
    """Commits reach the log out of CSN order while tablesync slots are being created and
    copied: every row arrives exactly once."""
    import threading

    assert proxy.lake is not None
    lake = proxy.lake
    log_start = len(pg15.log_text)
    sub = new_sub_db(pg15)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE oo1 (id int PRIMARY KEY, v text); CREATE TABLE oo2 (id int PRIMARY KEY, v text)")
        c.execute("INSERT INTO oo1 SELECT i, 'base' FROM generate_series(1, 100) AS g(i)")
        c.execute("INSERT INTO oo2 SELECT i, 'base' FROM generate_series(1, 100) AS g(i)")
        c.execute("CREATE PUBLICATION poo FOR TABLE oo1, oo2")
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("CREATE TABLE oo1 (id int PRIMARY KEY, v text); CREATE TABLE oo2 (id int PRIMARY KEY, v text)")
    stop = threading.Event()

    def out_of_order() -> None:
        k = 1000
        while not stop.is_set():
            t1, t2 = lake.begin(), lake.begin()
            t1.insert("oo1", [{"id": k, "v": "smaller csn, later commit"}])
            t2.insert("oo2", [{"id": k, "v": "larger csn, earlier commit"}])
            c1 = t1.start_commit()
            c2 = t2.start_commit()
            c2.finish()
            time.sleep(0.05)  # the smaller CSN is in flight across whatever happens now
            c1.finish()
            k += 1

    th = threading.Thread(target=out_of_order)
    th.start()
    subscribe(sub, proxy, "soo", "poo")
    wait_ready(sub, timeout=120)
    time.sleep(1)
    stop.set()
    th.join()
    wait_identical(proxy.dsn(), sub, ["oo1", "oo2"])
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("DROP SUBSCRIPTION soo")
    assert "duplicate key" not in pg15.log_text[log_start:]


def test_filters_identities_truncate_and_two_subscriptions(proxy: ProxyServer, pg15: PgCluster) -> None:
    # As PostgreSQL requires: the row filter's columns are in the replica identity (FULL),
    # and a column list covers the replica identity (the key).
    ddl = (
        "CREATE TABLE f_rows (id int PRIMARY KEY, region text, amount int);"
        "CREATE TABLE f_cols (id int PRIMARY KEY, a text, secret text);"
        "CREATE TABLE f_full (id int, v text);"
        "CREATE TABLE f_trunc (id int PRIMARY KEY, v text);"
    )
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(ddl)
        c.execute("ALTER TABLE f_full REPLICA IDENTITY FULL")
        c.execute("ALTER TABLE f_rows REPLICA IDENTITY FULL")
        c.execute("INSERT INTO f_rows VALUES (1, 'eu', 5), (2, 'us', 50), (3, 'eu', 500)")
        c.execute("INSERT INTO f_cols VALUES (1, 'a', 'hidden')")
        c.execute("INSERT INTO f_full VALUES (1, 'a'), (2, 'b')")
        c.execute("INSERT INTO f_trunc VALUES (1, 'x')")
        c.execute("CREATE PUBLICATION pf FOR TABLE f_rows WHERE (region = 'eu'), f_cols (id, a), f_full, f_trunc")
    sub_ddl = (
        "CREATE TABLE f_rows (id int PRIMARY KEY, region text, amount int); CREATE TABLE f_cols (id int PRIMARY KEY, a text, secret text);"
        "CREATE TABLE f_full (id int, v text); CREATE TABLE f_trunc (id int PRIMARY KEY, v text);"
    )
    subs = [new_sub_db(pg15), new_sub_db(pg15)]
    for i, sub in enumerate(subs):
        with psycopg.connect(sub, autocommit=True) as c:
            c.execute(sub_ddl)
            c.execute("ALTER TABLE f_full REPLICA IDENTITY FULL")
            c.execute("ALTER TABLE f_rows REPLICA IDENTITY FULL")
        subscribe(sub, proxy, f"sf{i}", "pf", "WITH (binary = true)" if i else "")
    for sub in subs:
        wait_ready(sub)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("UPDATE f_rows SET region = 'eu' WHERE id = 2")  # moves into the filter: INSERT
        c.execute("UPDATE f_rows SET region = 'us' WHERE id = 1")  # moves out: DELETE
        c.execute("INSERT INTO f_rows VALUES (4, 'eu', 7), (5, 'us', 8)")
        c.execute("UPDATE f_cols SET a = 'b', secret = 'still hidden'")
        c.execute("UPDATE f_full SET v = 'bb' WHERE id = 2")
        c.execute("DELETE FROM f_full WHERE id = 1")
        c.execute("TRUNCATE f_trunc")
        c.execute("INSERT INTO f_trunc VALUES (2, 'after truncate')")
    expected_rows = [(2, "eu", 50), (3, "eu", 500), (4, "eu", 7)]
    for sub in subs:
        deadline = time.monotonic() + 60
        while rows(sub, "f_rows") != expected_rows and time.monotonic() < deadline:
            time.sleep(0.3)
        assert rows(sub, "f_rows") == expected_rows
        wait_identical(proxy.dsn(), sub, ["f_trunc"])
        assert sorted(rows(sub, "f_full", "id")) == [(2, "bb")]
        assert rows(sub, "f_cols") == [(1, "b", None)]
    # DISABLE / ENABLE: changes made while disabled arrive after enabling.
    with psycopg.connect(subs[0], autocommit=True) as c:
        c.execute("ALTER SUBSCRIPTION sf0 DISABLE")
    time.sleep(1)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("INSERT INTO f_trunc VALUES (3, 'while disabled')")
    with psycopg.connect(subs[0], autocommit=True) as c:
        c.execute("ALTER SUBSCRIPTION sf0 ENABLE")
    wait_identical(proxy.dsn(), subs[0], ["f_trunc"])
    for i, sub in enumerate(subs):
        with psycopg.connect(sub, autocommit=True) as c:
            c.execute(f"DROP SUBSCRIPTION sf{i}")


@pytest.mark.parametrize(
    "flt",
    [
        "(n / 2 = 1 OR n % 4 = -1 OR (n > 6 AND n IS DISTINCT FROM 9))",
        "(t || 'x' = 'bx' OR n = ANY ('{4,NULL,-9}') OR coalesce(n, 100) > 99 OR t <> ALL (ARRAY['a', 'b', 'c']))",
    ],
    ids=["arithmetic", "any-coalesce-concat"],
)
def test_row_filter_is_postgresqls(proxy: ProxyServer, pg15: PgCluster, flt: str) -> None:
    """The subscriber ends with the rows PostgreSQL's own WHERE selects from the same rows
    (DuckDB's ``/`` divides exactly, its rewriter may move constants: neither may decide
    what is published); rows arrive by the initial copy and by the stream."""
    n = next(_n)
    table = f"CREATE TABLE f_div{n} (id int PRIMARY KEY, n int, t text)"
    first = f"INSERT INTO f_div{n} VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, NULL), (4, -5, 'c'), (5, 7, 'd'), (6, NULL, 'a')"
    later = (
        f"INSERT INTO f_div{n} VALUES (7, 9, 'b'), (8, -1, NULL), (9, 10, 'c'), (10, -4, 'e'), (11, 0, 'a'),"
        " (12, -9, 'b'), (13, 3, 'c'), (14, 2, NULL), (15, 4, 'a'), (16, NULL, NULL)"
    )
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(table)
        c.execute(first)
        c.execute(f"CREATE PUBLICATION pdiv{n} FOR TABLE f_div{n} WHERE {flt}")
    sub = new_sub_db(pg15)
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute(table)
    subscribe(sub, proxy, f"sdiv{n}", f"pdiv{n}")
    wait_ready(sub)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(later)
    oracle = new_sub_db(pg15)  # (PostgreSQL's own WHERE over the same rows)
    with psycopg.connect(oracle, autocommit=True) as c:
        c.execute(table)
        c.execute(first)
        c.execute(later)
        expected = c.execute(f"SELECT * FROM f_div{n} WHERE {flt} ORDER BY id").fetchall()
    assert 3 < len(expected) < 13  # (the filter keeps some rows of each kind, not all)
    deadline = time.monotonic() + 60
    while rows(sub, f"f_div{n}") != expected and time.monotonic() < deadline:
        time.sleep(0.3)
    assert rows(sub, f"f_div{n}") == expected
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute(f"DROP SUBSCRIPTION sdiv{n}")


def test_pg_recvlogical_streams_pgoutput(proxy: ProxyServer, tmp_path) -> None:
    import subprocess

    from tests.pgcluster import pg_bindir

    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE rl (id int PRIMARY KEY, v text)")
        c.execute("CREATE PUBLICATION prl FOR TABLE rl")
    base = [str(pg_bindir() / "pg_recvlogical"), "-h", "127.0.0.1", "-p", str(proxy.port), "-U", "postgres", "-d", "postgres", "-S", "rl_slot"]
    r = subprocess.run([*base, "--create-slot", "-P", "pgoutput"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out.bin"
    proc = subprocess.Popen(
        [*base, "--start", "-f", str(out), "-F", "1", "-o", "proto_version=1", "-o", "publication_names=prl", "-o", "messages=true"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.5)
        with psycopg.connect(proxy.dsn(), autocommit=True) as c:
            c.execute("INSERT INTO rl VALUES (1, 'hello'), (2, 'world')")
            c.execute("SELECT pg_logical_emit_message(false, 'rlprefix', 'hello pgoutput')")
        deadline = time.monotonic() + 30
        # (the message follows the INSERT's rows, and pg_recvlogical writes its file once a
        # second: wait for all of it, not for the rows alone)
        wanted = (b"hello", b"world", b"rlprefix")
        while time.monotonic() < deadline and (not out.exists() or not all(w in out.read_bytes() for w in wanted)):
            time.sleep(0.2)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    data = out.read_bytes()
    assert b"hello" in data and b"world" in data and b"rlprefix" in data, (data[:200], err)
    with psycopg.connect(proxy.dsn()) as c:
        confirmed = c.execute("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'rl_slot'").fetchone()
    assert confirmed is not None and confirmed[0] != "0/0"
    for _ in range(50):  # the server notices the client's exit within a poll interval
        r = subprocess.run([*base, "--drop-slot"], capture_output=True, text=True, timeout=60)
        if r.returncode == 0 or "is active" not in r.stderr:
            break
        time.sleep(0.1)
    assert r.returncode == 0, r.stderr


@pytest.mark.slow
def test_idle_subscriber_stays_connected(pg15: PgCluster) -> None:
    """Three times wal_sender_timeout (3 s; the 9 s idle stay below the subscriber's 10 s
    status interval, so only its answers to keepalives can keep it) idle: the connection
    survives on the walsender's keepalives asking for a reply and the subscriber's answers,
    and changes still flow after."""
    with ProxyServer(wal_sender_timeout=3.0) as p:
        sub = new_sub_db(pg15)
        with psycopg.connect(p.dsn(), autocommit=True) as c:
            c.execute("CREATE TABLE idle_t (id int PRIMARY KEY)")
            c.execute("CREATE PUBLICATION pidle FOR TABLE idle_t")
        with psycopg.connect(sub, autocommit=True) as c:
            c.execute("CREATE TABLE idle_t (id int PRIMARY KEY)")
        subscribe(sub, p, "sidle", "pidle")
        wait_ready(sub)
        with psycopg.connect(p.dsn()) as c:
            before = c.execute("SELECT pid FROM pg_stat_replication").fetchall()
        time.sleep(9)
        with psycopg.connect(p.dsn()) as c:
            after = c.execute("SELECT pid FROM pg_stat_replication").fetchall()
        assert before == after and before, (before, after)
        with psycopg.connect(p.dsn(), autocommit=True) as c:
            c.execute("INSERT INTO idle_t VALUES (1)")
        wait_identical(p.dsn(), sub, ["idle_t"])
        with psycopg.connect(sub, autocommit=True) as c:
            c.execute("DROP SUBSCRIPTION sidle")


TYPES_DDL = (
    "CREATE TABLE ty (id int PRIMARY KEY, b boolean, i2 smallint, i8 bigint, f4 real, f8 double precision,"
    " n numeric, np numeric(12,3), t text, vc varchar(10), c char(3), by bytea, d date, tm time,"
    " ts timestamp, tz timestamptz, iv interval, u uuid, j json, jb jsonb, ia int[], ta text[])"
)
TYPES_ROWS = (
    "INSERT INTO ty VALUES "
    "(1, true, -32768, 9223372036854775807, 1.5, -2.25e-300, '12345678901234567890.123456789', 1.500,"
    " E'tab\\there \"q\" \\\\ nl\\nend', 'short', 'ab', '\\x00ff10', '2024-02-29', '23:59:59.999999',"
    " '2000-01-01 00:00:00', '1999-12-31 18:29:59.999999+00', '1 year 2 mons -3 days 04:05:06.7',"
    " 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{\"a\": [1, 2.5, null]}', '{\"k\": {\"x\": 1}}',"
    " '{1,NULL,3}', '{\"x y\",NULL,\"a,b\"}'),"
    "(2, NULL, NULL, NULL, 'NaN', 'Infinity', NULL, NULL, '', NULL, NULL, '\\x', NULL, NULL, NULL, NULL,"
    " NULL, NULL, NULL, NULL, '{}', '{}')"
)


def test_every_type_round_trips_in_copy_and_stream_text_and_binary(proxy: ProxyServer, pg15: PgCluster) -> None:
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(TYPES_DDL)
        c.execute(TYPES_ROWS)  # copied
        c.execute("CREATE PUBLICATION pty FOR TABLE ty")
    subs = text_and_binary_subscribers(proxy, pg15, TYPES_DDL, "pty", "sty")
    for sub in subs:
        wait_identical(proxy.dsn(), sub, ["ty"])
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(TYPES_ROWS.replace("(1, true", "(11, true").replace("(2, NULL", "(12, NULL"))  # streamed
        c.execute("UPDATE ty SET t = t || '!', ia = '{7}', iv = '-1 day' WHERE id = 1")
    for i, sub in enumerate(subs):
        wait_identical(proxy.dsn(), sub, ["ty"])
        with psycopg.connect(sub, autocommit=True) as c:
            c.execute(f"DROP SUBSCRIPTION sty{i}")


def test_transaction_bigger_than_work_mem_is_spilled_and_arrives_whole(pg15: PgCluster) -> None:
    """logical_decoding_work_mem = 64kB: a transaction of many statements goes to disk in the
    walsender's reorder buffer and still reaches the subscriber whole, in order."""
    with ProxyServer(extra={"logical_decoding_work_mem": "64"}) as p:
        sub = new_sub_db(pg15)
        with psycopg.connect(p.dsn(), autocommit=True) as c:
            c.execute("CREATE TABLE big (id int PRIMARY KEY, v text)")
            c.execute("CREATE PUBLICATION pbig FOR TABLE big")
        with psycopg.connect(sub, autocommit=True) as c:
            c.execute("CREATE TABLE big (id int PRIMARY KEY, v text)")
        subscribe(sub, p, "sbig", "pbig")
        wait_ready(sub)
        with psycopg.connect(p.dsn()) as c, c.transaction():
            for i in range(40):
                c.execute(f"INSERT INTO big SELECT g, repeat('x', 100) FROM generate_series({i * 100}, {i * 100 + 99}) AS g")
            c.execute("UPDATE big SET v = 'last' WHERE id < 50")
        wait_identical(p.dsn(), sub, ["big"])
        assert p.lake is not None
        spill = p.lake.dir / "spill"
        assert spill.exists()  # made at the first spill (the server starts without it)
        assert not list(spill.glob("*.spill"))  # spill files go with the transaction
        with psycopg.connect(sub, autocommit=True) as c:
            c.execute("DROP SUBSCRIPTION sbig")


def test_identity_using_index_and_the_monitoring_views(proxy: ProxyServer, pg15: PgCluster) -> None:
    sub = new_sub_db(pg15)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE ui (id int PRIMARY KEY, v text)")
        c.execute("ALTER TABLE ui REPLICA IDENTITY USING INDEX ui_pkey")
        c.execute("INSERT INTO ui VALUES (1, 'a'), (2, 'b')")
        c.execute("CREATE PUBLICATION pui FOR TABLE ui")
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("CREATE TABLE ui (id int PRIMARY KEY, v text)")
    subscribe(sub, proxy, "sui", "pui")
    wait_ready(sub)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("UPDATE ui SET id = 10, v = 'moved' WHERE id = 1")
        c.execute("DELETE FROM ui WHERE id = 2")
    wait_identical(proxy.dsn(), sub, ["ui"])
    with psycopg.connect(proxy.dsn()) as c:
        slots = c.execute("SELECT slot_name, plugin, slot_type, active, temporary FROM pg_replication_slots WHERE slot_name = 'sui'").fetchall()
        senders = c.execute("SELECT application_name, state FROM pg_stat_replication WHERE application_name = 'sui'").fetchall()
    assert slots == [("sui", "pgoutput", "logical", True, False)]
    assert senders == [("sui", "streaming")]
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("DROP SUBSCRIPTION sui")


def test_a_subscription_streams_from_a_slot_made_with_sql(proxy: ProxyServer, pg15: PgCluster) -> None:
    """A slot made beforehand with pg_create_logical_replication_slot() (as CDC set-up guides
    have users do), then a subscription on it without a copy: it gets exactly what
    committed after the slot, and DROP SUBSCRIPTION drops the slot."""
    sub = new_sub_db(pg15)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE sqlslot (id int PRIMARY KEY, v text)")
        c.execute("CREATE PUBLICATION psqlslot FOR TABLE sqlslot")
        c.execute("INSERT INTO sqlslot VALUES (1, 'before the slot')")
        name, lsn = c.execute("SELECT * FROM pg_create_logical_replication_slot('ssqlslot', 'pgoutput')").fetchone()  # type: ignore[misc]
        c.execute("INSERT INTO sqlslot VALUES (2, 'after the slot')")
        c.execute("UPDATE sqlslot SET v = 'updated after' WHERE id = 2")
    assert name == "ssqlslot"
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("CREATE TABLE sqlslot (id int PRIMARY KEY, v text)")
    subscribe(sub, proxy, "ssqlslot", "psqlslot", "WITH (create_slot = false, copy_data = false)")
    deadline = time.monotonic() + 60
    while rows(sub, "sqlslot") != [(2, "updated after")]:
        assert time.monotonic() < deadline, rows(sub, "sqlslot")
        time.sleep(0.05)
    with psycopg.connect(proxy.dsn()) as c:
        slot = c.execute(
            "SELECT plugin, active, confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = 'ssqlslot'"
        ).fetchall()
    assert [s[:2] for s in slot] == [("pgoutput", True)]  # the subscription streams from it
    assert parse_lsn(slot[0][2]) >= parse_lsn(lsn)
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("DROP SUBSCRIPTION ssqlslot")
    with psycopg.connect(proxy.dsn()) as c:
        assert c.execute("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'ssqlslot'").fetchone() == (0,)


def test_a_slot_advanced_with_sql_skips_what_it_passed(proxy: ProxyServer, pg15: PgCluster) -> None:
    """pg_replication_slot_advance() confirms the slot without sending: a subscription on it
    gets only what commits after the new position, including a transaction that was open
    across it (the restart LSN stays at that transaction's start)."""
    sub = new_sub_db(pg15)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE advslot (id int PRIMARY KEY, v text)")
        c.execute("CREATE PUBLICATION padvslot FOR TABLE advslot")
        c.execute("SELECT pg_create_logical_replication_slot('sadvslot', 'pgoutput')")
        with psycopg.connect(proxy.dsn()) as open_tx:  # open across the new position
            open_tx.execute("INSERT INTO advslot VALUES (2, 'open across')")
            c.execute("INSERT INTO advslot VALUES (1, 'skipped')")  # (its commit flushes both)
            end = c.execute("SELECT end_lsn FROM pg_replication_slot_advance('sadvslot', pg_current_wal_lsn())").fetchone()[0]  # type: ignore[index]
            open_tx.commit()
        c.execute("INSERT INTO advslot VALUES (3, 'after')")
        slot = c.execute("SELECT confirmed_flush_lsn::text, restart_lsn::text FROM pg_replication_slots WHERE slot_name = 'sadvslot'").fetchone()
    assert slot is not None and slot[0] == end and parse_lsn(slot[1]) < parse_lsn(end)
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("CREATE TABLE advslot (id int PRIMARY KEY, v text)")
    subscribe(sub, proxy, "sadvslot", "padvslot", "WITH (create_slot = false, copy_data = false)")
    deadline = time.monotonic() + 60
    while rows(sub, "advslot") != [(2, "open across"), (3, "after")]:
        assert time.monotonic() < deadline, rows(sub, "advslot")
        time.sleep(0.05)
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("DROP SUBSCRIPTION sadvslot")


@pytest.mark.parametrize(
    ("server_timeout", "startup"),
    [(2.0, {}), (60.0, {"wal_sender_timeout": "2s"})],
    ids=["the server's setting", "the client's start-up parameter"],
)
def test_a_silent_client_is_ended_after_wal_sender_timeout(pg15: PgCluster, server_timeout: float, startup: dict[str, str]) -> None:
    """The walsender asks for a reply (keepalive with replyRequested) before the timeout and
    ends the connection when none comes; the slot is free again afterwards. The timeout is
    the connection's own when the client sets it (PeerDB sends 120s at start-up)."""
    import socket

    from walsender_proxy.protocol import BackendParser
    from walsender_proxy.protocol import messages as m
    from walsender_proxy.protocol.replication import PrimaryKeepalive, decode_replication_message

    with ProxyServer(wal_sender_timeout=server_timeout) as p:
        with psycopg.connect(p.dsn(replication="database"), autocommit=True) as c:
            c.execute('CREATE_REPLICATION_SLOT "quiet" LOGICAL pgoutput (SNAPSHOT \'nothing\')')
        with psycopg.connect(p.dsn(), autocommit=True) as c:
            c.execute("CREATE PUBLICATION pq FOR ALL TABLES")
        s = socket.create_connection(("127.0.0.1", p.port), timeout=10)
        parser = BackendParser()
        s.sendall(m.StartupMessage({"user": "postgres", "database": "postgres", "replication": "database", **startup}).encode())
        s.sendall(m.Query("START_REPLICATION SLOT quiet LOGICAL 0/0 (proto_version '1', publication_names 'pq')").encode())
        keepalives = []
        t0 = time.monotonic()
        closed_after = None
        while time.monotonic() - t0 < 15:
            data = s.recv(65536)
            if not data:
                closed_after = time.monotonic() - t0
                break
            parser.feed(data)
            for msg in parser:
                if isinstance(msg, m.CopyData):
                    rep = decode_replication_message(msg.data)
                    if isinstance(rep, PrimaryKeepalive):
                        keepalives.append(rep.reply_requested)
        s.close()
        assert closed_after is not None and 1.5 < closed_after < 10, closed_after
        assert True in keepalives  # asked for a reply before giving up
        time.sleep(0.5)
        with psycopg.connect(p.dsn()) as c:
            assert c.execute("SELECT active FROM pg_replication_slots WHERE slot_name = 'quiet'").fetchone() == (False,)


def test_copydone_from_an_idle_stream_is_answered_at_once(proxy: ProxyServer) -> None:
    """A tablesync worker ends its catch-up stream with CopyDone and waits for ours before it
    marks the table synced: the walsender answers while it waits for the log, not when that
    wait runs out (which made every table sync 0.2 s slower)."""
    import socket

    from walsender_proxy.protocol import BackendParser
    from walsender_proxy.protocol import messages as m

    with psycopg.connect(proxy.dsn(replication="database"), autocommit=True) as c:
        c.execute('CREATE_REPLICATION_SLOT "idle_end" LOGICAL pgoutput (SNAPSHOT \'nothing\')')
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE PUBLICATION p_idle_end FOR ALL TABLES")
    answered = []
    for _ in range(3):
        s = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
        parser = BackendParser()
        s.sendall(m.StartupMessage({"user": "postgres", "database": "postgres", "replication": "database"}).encode())
        s.sendall(m.Query("START_REPLICATION SLOT idle_end LOGICAL 0/0 (proto_version '1', publication_names 'p_idle_end')").encode())

        def until(kind: type, s: socket.socket = s, parser: BackendParser = parser) -> None:
            while True:
                for msg in parser:
                    if isinstance(msg, kind):
                        return
                data = s.recv(65536)
                assert data, "connection closed"
                parser.feed(data)

        until(m.CopyData)  # the first keepalive: streaming, and idle
        time.sleep(0.02)  # inside its wait for the log
        t0 = time.monotonic()
        s.sendall(m.CopyDone().encode())
        until(m.CopyDone)
        answered.append(time.monotonic() - t0)
        until(m.ReadyForQuery)
        s.close()
    assert min(answered) < 0.1, answered  # (the wait for the log is 0.2 s)


def test_replication_commands_refuse_bad_input_with_postgresql_codes(proxy: ProxyServer) -> None:
    """Wrong slots, options and commands get PostgreSQL's SQLSTATEs; the connection stays
    usable; a normal connection cannot replicate; a non-replication role cannot connect."""
    rep = psycopg.connect(proxy.dsn(replication="database"), autocommit=True)
    cases = [
        ("START_REPLICATION SLOT nope LOGICAL 0/0 (proto_version '1', publication_names 'p')", "42704"),
        ('CREATE_REPLICATION_SLOT "Bad" LOGICAL pgoutput', "42602"),
        ("CREATE_REPLICATION_SLOT s_bad LOGICAL no_such_plugin", "58P01"),
        ("CREATE_REPLICATION_SLOT s_bad LOGICAL pgoutput (SNAPSHOT 'sometimes')", "22023"),
        ("CREATE_REPLICATION_SLOT s_use LOGICAL pgoutput (SNAPSHOT 'use')", "25001"),
        ("DROP_REPLICATION_SLOT nope", "42704"),
        ("BASE_BACKUP", "0A000"),
        ("START_REPLICATION 0/0", "0A000"),
    ]
    for cmd, state in cases:
        with pytest.raises(psycopg.Error) as ei:
            rep.execute(cmd)
        assert ei.value.sqlstate == state, (cmd, ei.value.sqlstate, str(ei.value))
    rep.execute('CREATE_REPLICATION_SLOT "s_opts" LOGICAL pgoutput (SNAPSHOT \'nothing\')')
    with pytest.raises(psycopg.Error) as ei:
        rep.execute("START_REPLICATION SLOT s_opts LOGICAL 0/0 (publication_names 'p')")
    # PostgreSQL 15 reads a missing proto_version as 0, and refuses that
    assert ei.value.sqlstate == "0A000" and "proto_version=0" in str(ei.value)
    with pytest.raises(psycopg.Error) as ei:
        rep.execute('CREATE_REPLICATION_SLOT "s_opts" LOGICAL pgoutput')
    assert ei.value.sqlstate == "42710"
    assert rep.execute("SELECT 1").fetchone() == (1,)  # SQL on the same connection still works
    rep.execute("DROP_REPLICATION_SLOT s_opts")
    rep.close()
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        with pytest.raises(psycopg.Error) as ei:
            c.execute("IDENTIFY_SYSTEM")
        assert ei.value.sqlstate == "42601"  # on a normal connection it is just bad SQL
        c.execute("CREATE ROLE plain_user LOGIN")
    with pytest.raises(psycopg.OperationalError) as oi:
        psycopg.connect(proxy.dsn(user="plain_user", replication="database"))
    assert "must be superuser or replication role to start walsender" in str(oi.value)


P2_DDL = "CREATE TABLE p2vals (id int PRIMARY KEY, b bytea, jb jsonb, j json, u uuid, n numeric, d date)"


def _psycopg2_rows() -> list[tuple[object, ...]]:
    """Values as psycopg2 interpolates them into the statement text itself: bytes as
    '\\x…'::bytea, a dict through Json (its own text, duplicate keys and spacing kept), a
    UUID as '…'::uuid, a Decimal bare, a date as '…'::date."""
    import datetime as dt
    import decimal
    import uuid

    from psycopg2.extras import Json, register_uuid

    register_uuid()  # (psycopg2 adapts UUIDs only when asked)

    def raw(text: str) -> Json:
        return Json(None, dumps=lambda _: text)

    return [
        (1, b"\x00\x01\xfe\xff'\\\"", Json({"b": 1, "a": [1.5, "x\u00e9", None]}), Json({"k": "v"}),
         uuid.UUID("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"), decimal.Decimal("1.50"), dt.date(2024, 2, 29)),
        (2, b"", raw('{"bb":1,"a":2,"a":3, "c": 1.50, "e": 1e3, "z": -0}'), raw('{"x" :  1, "x": 2}'),
         uuid.UUID(int=0), decimal.Decimal("-0.001"), dt.date(1, 1, 1)),
        (3, bytes(range(256)), raw('["\\u00e9\\ud83d\\ude00", {"": null}]'), raw("[]"), None, decimal.Decimal("NaN"), None),
    ]


def _texts(dsn: str) -> list[tuple[object, ...]]:
    """The rows as PostgreSQL's text output (the same SQL on the proxy or a real server)."""
    with psycopg.connect(dsn) as c:
        return c.execute(
            "SELECT id, b::text, jb::text, j::text, u::text, n::text, d::text FROM p2vals ORDER BY id"
        ).fetchall()


def test_psycopg2_values_replicate_as_from_postgres(proxy: ProxyServer, pg15: PgCluster) -> None:
    """psycopg2 writes bytea, jsonb, json and uuid values through its client-side literal
    interpolation into the proxy and into a real PostgreSQL 15 publisher; each reads its
    own values back equal, and a stock subscriber of each ends with the same rows — the
    initial copy and the stream (binary and text protocol)."""
    import psycopg2

    pub = new_sub_db(pg15)  # the real publisher: a database of its own
    subs = {"proxy": new_sub_db(pg15), "pg": new_sub_db(pg15), "proxy_bin": new_sub_db(pg15)}
    first, later = _psycopg2_rows()[:1], _psycopg2_rows()[1:]

    def write(dsn: str, rows: list[tuple[object, ...]]) -> None:
        conn = psycopg2.connect(dsn)
        try:
            with conn, conn.cursor() as cur:
                for r in rows:
                    cur.execute("INSERT INTO p2vals VALUES (%s, %s, %s, %s, %s, %s, %s)", r)
        finally:
            conn.close()

    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(P2_DDL)
        c.execute("CREATE PUBLICATION pp2 FOR TABLE p2vals")
    with psycopg.connect(pub, autocommit=True) as c:
        c.execute(P2_DDL)
        c.execute("CREATE PUBLICATION pp2 FOR TABLE p2vals")
        # a subscription into the same cluster needs its slot made beforehand
        c.execute("SELECT pg_create_logical_replication_slot('sp2pg', 'pgoutput')")
    for dsn in (proxy.dsn(), pub):
        write(dsn, first)  # copied at the subscription's start
    for name, sub in subs.items():
        with psycopg.connect(sub, autocommit=True) as c:
            c.execute(P2_DDL)
        if name == "pg":
            with psycopg.connect(sub, autocommit=True) as c:
                c.execute(
                    f"CREATE SUBSCRIPTION sp2pg CONNECTION '{pub}' PUBLICATION pp2 "
                    "WITH (create_slot = false, slot_name = 'sp2pg')"
                )
        else:
            subscribe(sub, proxy, f"sp2{name}", "pp2", "WITH (binary = true)" if name == "proxy_bin" else "")
    for sub in subs.values():
        wait_ready(sub)
    for dsn in (proxy.dsn(), pub):
        write(dsn, later)  # streamed
    want = _texts(pub)
    assert len(want) == 3
    assert _texts(proxy.dsn()) == want
    conn = psycopg2.connect(proxy.dsn())
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT b, u, jb FROM p2vals ORDER BY id")
            got = [(None if b is None else bytes(b), u, jb) for b, u, jb in cur.fetchall()]
    finally:
        conn.close()
    sent = _psycopg2_rows()
    assert [g[:2] for g in got] == [(r[1], r[4]) for r in sent]
    assert got[0][2] == sent[0][2].adapted  # the dict, read back equal
    deadline = time.monotonic() + 60
    for name, sub in subs.items():
        while _texts(sub) != want:
            assert time.monotonic() < deadline, (name, _texts(sub), want)
            time.sleep(0.2)
    for name, sub in subs.items():
        with psycopg.connect(sub, autocommit=True) as c:
            c.execute(f"DROP SUBSCRIPTION sp2{name}")
