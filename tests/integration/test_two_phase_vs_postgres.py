"""Two-phase decoding (pgoutput protocol 3, test_decoding on a two_phase slot, the SQL slot
functions, and a real subscriber with ``two_phase = true``), compared with a PostgreSQL 15
publisher doing the same: PREPARE TRANSACTION is decoded at PREPARE, then COMMIT PREPARED
or ROLLBACK PREPARED follow; a transaction prepared before two-phase decoding began is sent
whole at its COMMIT PREPARED (PostgreSQL's 021_twophase checks the subscriber's side)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from tests.integration.test_subscription_suite import _wait
from tests.pgcluster import PgCluster
from tests.pgcompare import pgoutput_messages, recvlogical
from tests.pgcompare import run_sql as _run
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

_PREPARED = {"max_prepared_transactions": "10"}


@pytest.fixture(scope="module")
def ref() -> Iterator[PgCluster]:
    """The reference publisher: PostgreSQL 15 with prepared transactions enabled."""
    pg = PgCluster(_PREPARED).start()
    try:
        yield pg
    finally:
        pg.stop(remove_later=True)


def _one(dsn: str, sql: str) -> Any:
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute(sql).fetchone()
        assert row is not None
        return row[0]


def _both(proxy: ProxyServer, ref: PgCluster, fn: Callable[[str], Any]) -> tuple[Any, Any]:
    return fn(proxy.dsn()), fn(ref.dsn())


def _shape(messages: list[Any]) -> list[tuple[object, ...]]:
    """A pgoutput stream with LSNs, xids and times left out, after checking how they
    relate: BEGIN PREPARE and PREPARE of one transaction carry the same positions, and a
    ROLLBACK PREPARED names the end of the PREPARE it undoes when that was sent."""
    from decoding.pgoutput import proto as P

    prepares: dict[str, tuple[int, int]] = {}
    out: list[tuple[object, ...]] = []
    for m in messages:
        if isinstance(m, P.BeginPrepare):
            assert m.prepare_lsn < m.end_lsn
            prepares[m.gid] = (m.prepare_lsn, m.end_lsn)
            out.append(("BEGIN PREPARE", m.gid))
        elif isinstance(m, P.Prepare):
            assert prepares[m.gid] == (m.prepare_lsn, m.end_lsn)
            out.append(("PREPARE", m.gid, m.flags))
        elif isinstance(m, P.CommitPrepared):
            assert m.commit_lsn < m.end_lsn
            out.append(("COMMIT PREPARED", m.gid, m.flags))
        elif isinstance(m, P.RollbackPrepared):
            if m.gid in prepares:
                assert m.prepare_end_lsn == prepares[m.gid][1]
            assert m.prepare_end_lsn < m.rollback_end_lsn
            out.append(("ROLLBACK PREPARED", m.gid, m.flags))
        elif isinstance(m, P.Begin):
            out.append(("BEGIN",))
        elif isinstance(m, P.Commit):
            out.append(("COMMIT",))
        elif isinstance(m, P.Relation):
            out.append(("RELATION", m.namespace, m.name, tuple((c.name, c.type_oid) for c in m.columns)))
        elif isinstance(m, P.Insert):
            out.append(("INSERT", m.new.values))
        elif isinstance(m, P.Delete):
            out.append(("DELETE", m.key.values if m.key is not None else None))
        else:
            out.append((type(m).__name__,))
    return out


def _endpos(dsn: str) -> str:
    return str(_one(dsn, "SELECT pg_current_wal_insert_lsn()"))


@pytest.mark.parametrize("processes", [True, False], ids=["walsender-process", "in-server"])
def test_pgoutput_protocol_3_sends_what_postgres_sends(proxy: ProxyServer, ref: PgCluster, processes: bool) -> None:
    """A slot made without two_phase, read once with protocol 1 past a PREPARE, then with
    ``two_phase 'on'``: the slot is marked from that start on; the earlier prepared
    transaction comes whole at its COMMIT PREPARED (BEGIN PREPARE … PREPARE, COMMIT
    PREPARED), later ones at their PREPARE, a ROLLBACK PREPARED after them, a plain commit
    as before, and a transaction still prepared at the end as far as its PREPARE. The
    proxy streams from a walsender process, and from the server process."""

    def run(dsn: str) -> tuple[list[Any], list[Any], tuple[bool, bool]]:
        _run(
            dsn,
            "DROP PUBLICATION IF EXISTS tp1_pub",
            "DROP TABLE IF EXISTS tp1, tp_other",
            "CREATE TABLE tp1 (id int PRIMARY KEY, v text)",
            "CREATE TABLE tp_other (id int)",
            "CREATE PUBLICATION tp1_pub FOR TABLE tp1",
        )
        recvlogical(dsn, "tp1_slot", "--create-slot", "-P", "pgoutput")
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("BEGIN")
            c.execute("INSERT INTO tp1 VALUES (1, 'early')")
            c.execute("PREPARE TRANSACTION 'early'")
            c.execute("INSERT INTO tp1 VALUES (2, 'plain')")
        opts = ["-o", "publication_names=tp1_pub"]
        first = recvlogical(dsn, "tp1_slot", "--start", "-f", "-", f"--endpos={_endpos(dsn)}", "--no-loop", "-o", "proto_version=1", *opts)
        before = _one(dsn, "SELECT two_phase FROM pg_replication_slots WHERE slot_name = 'tp1_slot'")
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("COMMIT PREPARED 'early'")
            for gid, sql in [
                ("g2", "INSERT INTO tp1 VALUES (3, 'two')"),
                ("g3", "INSERT INTO tp1 VALUES (4, 'rolled back')"),
                ("g_other", "INSERT INTO tp_other VALUES (1)"),  # nothing published: still sent
                ("g5", "DELETE FROM tp1 WHERE id = 2"),
            ]:
                c.execute("BEGIN")
                c.execute(sql)
                c.execute(f"PREPARE TRANSACTION '{gid}'")
            c.execute("COMMIT PREPARED 'g2'")
            c.execute("ROLLBACK PREPARED 'g3'")
            c.execute("COMMIT PREPARED 'g_other'")
            c.execute("INSERT INTO tp1 VALUES (6, 'six')")
        second = recvlogical(
            dsn, "tp1_slot", "--start", "-f", "-", f"--endpos={_endpos(dsn)}", "--no-loop",
            "-o", "proto_version=3", "-o", "two_phase=on", *opts,
        )  # fmt: skip
        after = _one(dsn, "SELECT two_phase FROM pg_replication_slots WHERE slot_name = 'tp1_slot'")
        _run(dsn, "ROLLBACK PREPARED 'g5'", "SELECT pg_drop_replication_slot('tp1_slot')")
        return pgoutput_messages(first), pgoutput_messages(second), (before, after)

    if processes:
        got, want = _both(proxy, ref, run)
    else:
        with ProxyServer(walsender_processes=False) as inproc:
            got, want = _both(inproc, ref, run)
    assert got[2] == want[2] == (False, True)
    assert _shape(got[0]) == _shape(want[0])
    assert _shape(got[1]) == _shape(want[1])
    kinds = [s[0] for s in _shape(want[1])]
    assert kinds.count("BEGIN PREPARE") == 5 and kinds.count("ROLLBACK PREPARED") == 1  # (the test means this)


def test_a_two_phase_slot_refuses_protocol_1_with_the_option(proxy: ProxyServer, ref: PgCluster) -> None:
    """``two_phase 'on'`` with protocol 1 is pgoutput's 22023, on the proxy as on PostgreSQL."""

    def run(dsn: str) -> str:
        _run(dsn, "CREATE PUBLICATION tp_refuse FOR ALL TABLES")
        recvlogical(dsn, "tp_refuse_slot", "--create-slot", "-P", "pgoutput")
        try:
            recvlogical(dsn, "tp_refuse_slot", "--start", "-f", "-", f"--endpos={_endpos(dsn)}", "--no-loop",
                        "-o", "proto_version=1", "-o", "two_phase=on", "-o", "publication_names=tp_refuse")  # fmt: skip
        except RuntimeError as e:
            message = str(e)
        else:
            message = ""
        two_phase = _one(dsn, "SELECT two_phase FROM pg_replication_slots WHERE slot_name = 'tp_refuse_slot'")
        _run(dsn, "SELECT pg_drop_replication_slot('tp_refuse_slot')")
        return re.sub(r"^.*?(requested proto_version)", r"\1", message.splitlines()[0]) + f" two_phase={two_phase}"

    got, want = _both(proxy, ref, run)
    assert got == want
    assert "does not support two-phase commit" in want and want.endswith("two_phase=False")


_XIDS = re.compile(rb"(BEGIN|COMMIT|txid) \d+")


def _masked_lines(out: bytes) -> list[bytes]:
    return [_XIDS.sub(rb"\1 N", line) for line in out.splitlines()]


_TD_WRITES = [
    ("g1", "INSERT INTO td2 VALUES (1, 'one')", "COMMIT PREPARED"),
    ("it's", "UPDATE td2 SET v = 'uno' WHERE id = 1", "ROLLBACK PREPARED"),
    ("back\\slash", "INSERT INTO td2 VALUES (2, 'two')", "COMMIT PREPARED"),
    ("skip_nodecode", "INSERT INTO td2 VALUES (3, 'three')", "COMMIT PREPARED"),
    ("nothing", "SELECT 1", "COMMIT PREPARED"),
]


def _td_writes(c: psycopg.Connection[Any]) -> None:
    c.execute("SET synchronous_commit = on")  # (the SQL functions read what is flushed)
    for gid, sql, end in _TD_WRITES:
        c.execute("BEGIN")
        c.execute(sql)
        quoted = "'" + gid.replace("'", "''") + "'"
        c.execute(f"PREPARE TRANSACTION {quoted}")
        c.execute(f"{end} {quoted}")
    c.execute("INSERT INTO td2 VALUES (4, 'four')")


@pytest.mark.parametrize("options", [[], ["-o", "skip-empty-xacts=1", "-o", "include-xids=0"]])
def test_test_decoding_on_a_two_phase_slot_writes_postgres_lines(proxy: ProxyServer, ref: PgCluster, options: list[str]) -> None:
    """pg_recvlogical --two-phase: BEGIN, the changes and PREPARE TRANSACTION 'gid' at
    PREPARE, COMMIT PREPARED / ROLLBACK PREPARED later, a gid holding ``_nodecode`` decoded
    at its COMMIT PREPARED as a plain transaction, gids quoted as quote_literal quotes
    them, compared line by line."""
    slot = f"td2_slot{len(options)}"

    def run(dsn: str) -> bytes:
        _run(dsn, "CREATE TABLE IF NOT EXISTS td2 (id int PRIMARY KEY, v text)", "TRUNCATE td2")
        recvlogical(dsn, slot, "--create-slot", "-P", "test_decoding", "--two-phase")
        with psycopg.connect(dsn, autocommit=True) as c:
            _td_writes(c)
        out = recvlogical(dsn, slot, "--start", "-f", "-", f"--endpos={_endpos(dsn)}", "--no-loop", *options)
        _run(dsn, f"SELECT pg_drop_replication_slot('{slot}')")
        return out

    got, want = _both(proxy, ref, run)
    assert _masked_lines(got) == _masked_lines(want)
    assert b"PREPARE TRANSACTION E'back\\\\slash'" in want


def test_sql_slot_functions_decode_prepared_transactions_as_postgres(proxy: ProxyServer, ref: PgCluster) -> None:
    """pg_create_logical_replication_slot(…, twophase => true) with test_decoding, read by
    peek and get; a pgoutput slot marked by ``two_phase 'on'`` given to
    pg_logical_slot_get_binary_changes; pg_replication_slots.two_phase of both, and of a
    copy (PostgreSQL makes it without two_phase)."""

    def run(dsn: str) -> tuple[object, ...]:
        _run(
            dsn,
            "CREATE TABLE IF NOT EXISTS td2 (id int PRIMARY KEY, v text)",
            "TRUNCATE td2",
            "CREATE PUBLICATION td2_pub FOR TABLE td2",
            "SELECT pg_create_logical_replication_slot('sql_td', 'test_decoding', false, true)",
            "SELECT pg_create_logical_replication_slot('sql_po', 'pgoutput')",
        )
        with psycopg.connect(dsn, autocommit=True) as c:
            _td_writes(c)
            peek = [r[0] for r in c.execute("SELECT data FROM pg_logical_slot_peek_changes('sql_td', NULL, NULL)")]
            got = [r[0] for r in c.execute("SELECT data FROM pg_logical_slot_get_changes('sql_td', NULL, NULL, 'include-xids', '0')")]
            lsns = [r[0] for r in c.execute("SELECT lsn FROM pg_logical_slot_peek_changes('sql_td', NULL, NULL)")]
            binary = [
                bytes(r[0])
                for r in c.execute(
                    "SELECT data FROM pg_logical_slot_get_binary_changes('sql_po', NULL, NULL, "
                    "'proto_version', '3', 'two_phase', 'on', 'publication_names', 'td2_pub')"
                )
            ]
            c.execute("SELECT pg_copy_logical_replication_slot('sql_td', 'sql_td_copy')")
            flags = c.execute("SELECT slot_name, two_phase FROM pg_replication_slots ORDER BY slot_name").fetchall()
            for s in ("sql_td", "sql_po", "sql_td_copy"):
                c.execute(f"SELECT pg_drop_replication_slot('{s}')")
        messages = [m for b in binary for m in pgoutput_messages(b + b"\n")]
        return [re.sub(r"(BEGIN|COMMIT|txid) \d+", r"\1 N", x) for x in peek], got, lsns, _shape(messages), flags

    got, want = _both(proxy, ref, run)
    assert got[0] == want[0], (got[0], want[0])
    assert got[1] == want[1]
    assert got[3] == want[3]
    assert got[4] == want[4]
    assert got[2] == [], want[2] == []  # (get moved the slot past everything)


def test_a_two_phase_subscriber_prepares_and_finishes_as_from_postgres(proxy: ProxyServer, ref: PgCluster, pg15_subscriber: PgCluster) -> None:
    """021_twophase's scenario: a PostgreSQL 15 subscriber with ``two_phase = true`` on
    each publisher. Its state goes from pending to enabled once the tables are synced; a
    prepared transaction shows in the subscriber's pg_prepared_xacts with its rows
    invisible until COMMIT PREPARED; ROLLBACK PREPARED leaves nothing; the subscriber's
    tables equal on both sides at each step. (No transaction is left prepared while a
    slot is made: PostgreSQL's CREATE_REPLICATION_SLOT waits for it to end.)"""
    ddl = "CREATE TABLE tab_full (a int PRIMARY KEY); CREATE TABLE tab_two (k int PRIMARY KEY, t text)"
    publishers = {"proxy": proxy.dsn(), "pg": ref.dsn()}
    subs: dict[str, str] = {}
    for name, dsn in publishers.items():
        _run(dsn, ddl, "INSERT INTO tab_full SELECT generate_series(1, 10)", "CREATE PUBLICATION tap_pub FOR TABLE tab_full, tab_two")
        db = f"tp_{name}"
        pg15_subscriber.psql(f"CREATE DATABASE {db}")
        subs[name] = pg15_subscriber.dsn(db)
        _run(subs[name], ddl)
        m = re.search(r"port=(\d+)", dsn)
        assert m
        _run(
            subs[name],
            f"CREATE SUBSCRIPTION tap_sub_{name} CONNECTION 'host=127.0.0.1 port={m.group(1)} user=postgres dbname=postgres' "
            "PUBLICATION tap_pub WITH (two_phase = true)",
        )

    def state(name: str) -> str:
        return str(_one(subs[name], "SELECT subtwophasestate FROM pg_subscription"))

    for name in subs:
        _wait(lambda name=name: state(name) == "e")  # type: ignore[misc]

    def contents() -> dict[str, list[tuple[object, ...]]]:
        out = {}
        for name, dsn in subs.items():
            with psycopg.connect(dsn) as c:
                out[name] = c.execute("SELECT a FROM tab_full ORDER BY a").fetchall() + c.execute("SELECT k, t FROM tab_two ORDER BY k").fetchall()
        return out

    def prepared() -> dict[str, int]:
        return {name: int(_one(dsn, "SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database()")) for name, dsn in subs.items()}

    def settle(expect_rows: int, expect_prepared: int) -> None:
        _wait(lambda: all(len(r) == expect_rows for r in contents().values()) and set(prepared().values()) == {expect_prepared})
        c = contents()
        assert c["proxy"] == c["pg"]

    def prepare(gid: str, *statements: str) -> None:
        for dsn in publishers.values():
            with psycopg.connect(dsn, autocommit=True) as c:
                c.execute("BEGIN")
                for sql in statements:
                    c.execute(sql)
                c.execute(f"PREPARE TRANSACTION '{gid}'")

    settle(10, 0)
    prepare("test_prepared_tab_full", "INSERT INTO tab_full VALUES (11)", "UPDATE tab_full SET a = 100 WHERE a = 1", "INSERT INTO tab_two VALUES (1, 'x')")
    settle(10, 1)  # prepared on the subscriber, not visible
    assert all(str(_one(dsn, "SELECT gid FROM pg_prepared_xacts WHERE database = current_database()")).startswith("pg_gid_") for dsn in subs.values())
    for dsn in publishers.values():
        _run(dsn, "COMMIT PREPARED 'test_prepared_tab_full'")
    settle(12, 0)
    assert contents()["proxy"][10] == (100,)  # (tab_full: 2…11, 100; then tab_two)

    prepare("test_rollback", "INSERT INTO tab_full VALUES (13)", "DELETE FROM tab_two")
    settle(12, 1)
    for dsn in publishers.values():
        _run(dsn, "ROLLBACK PREPARED 'test_rollback'")
    settle(12, 0)

    # Two open at once, finished in the other order, with a plain commit between.
    prepare("first", "INSERT INTO tab_full VALUES (20)")
    prepare("second", "INSERT INTO tab_two VALUES (2, 'y')")
    for dsn in publishers.values():
        _run(dsn, "INSERT INTO tab_full VALUES (21)")
    settle(13, 2)
    for dsn in publishers.values():
        _run(dsn, "COMMIT PREPARED 'second'", "ROLLBACK PREPARED 'first'")
    settle(14, 0)
    for name, dsn in subs.items():
        _run(dsn, f"DROP SUBSCRIPTION tap_sub_{name}")
