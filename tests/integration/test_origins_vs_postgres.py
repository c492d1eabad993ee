"""Replication origins compared with PostgreSQL 15: the functions' answers and errors, the
two catalog views, commits under an origin (their remote LSN and time) and what decoding
makes of them — pgoutput's Origin message and commit time, test_decoding's ``only-local``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import Client, pgoutput_messages, recvlogical, same_answers
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def ref() -> Iterator[PgCluster]:
    """A PostgreSQL 15 of its own: origins are the cluster's, numbered from 1."""
    pg = PgCluster().start()
    try:
        yield pg
    finally:
        pg.stop(remove_later=True)


def _both(proxy: ProxyServer, ref: PgCluster, sql: list[str]) -> None:
    for dsn in (proxy.dsn(), ref.dsn()):
        with psycopg.connect(dsn, autocommit=True) as c:
            for s in sql:
                c.execute(s)


SETUP = [
    "SELECT pg_replication_origin_create('regress_a')",
    "SELECT pg_replication_origin_create('regress_b')",
    "SELECT pg_replication_origin_create('regress_a')",
    "SELECT pg_replication_origin_create('pg_reserved')",
    "SELECT pg_replication_origin_create('none')",
    "SELECT pg_replication_origin_oid('regress_b'), pg_replication_origin_oid('nope'), pg_replication_origin_oid(NULL)",
    "SELECT pg_replication_origin_drop('nope')",
    "SELECT pg_replication_origin_drop('none')",
    "SELECT * FROM pg_replication_origin ORDER BY roident",
    "SELECT pg_replication_origin_session_is_setup()",
    "SELECT pg_replication_origin_session_reset()",
    "SELECT pg_replication_origin_session_progress(true)",
    "SELECT pg_replication_origin_xact_setup('0/1', now())",
    "SELECT pg_replication_origin_xact_reset()",
    "SELECT pg_replication_origin_session_setup('nope')",
    "SELECT pg_replication_origin_progress('regress_a', true)",
    "SELECT pg_replication_origin_progress('nope', true)",
    "SELECT pg_replication_origin_advance('regress_a', '0/AB')",
    "SELECT pg_replication_origin_progress('regress_a', false)::text",
    "SELECT pg_replication_origin_advance('regress_a', '0/AA')",
    "SELECT pg_replication_origin_progress('regress_a', true)::text",
    "SELECT pg_replication_origin_advance('regress_a', 'zz')",
    "SELECT local_id, external_id, remote_lsn::text, local_lsn::text FROM pg_replication_origin_status ORDER BY local_id",
]


def test_origin_functions_answer_as_postgres(proxy: ProxyServer, ref: PgCluster) -> None:
    """Each function's answer or error (23505 for a name taken, 42939 for ``pg_…``, 42704,
    55000 without a session origin), the catalog rows, advance (backwards too), and the
    refusals that name another session's PID."""
    same_answers(proxy.dsn(), ref.dsn(), SETUP).close()
    a = [Client(proxy.dsn()), Client(ref.dsn())]
    b = [Client(proxy.dsn()), Client(ref.dsn())]
    try:
        for sql, who in [
            ("SELECT pg_replication_origin_session_setup('regress_a')", a),
            ("SELECT pg_replication_origin_session_setup('regress_b')", a),
            ("SELECT pg_replication_origin_session_is_setup()", a),
            ("SELECT pg_replication_origin_session_setup('regress_a')", b),
            ("SELECT pg_replication_origin_advance('regress_a', '0/AC')", b),
            ("SELECT pg_replication_origin_drop('regress_a')", b),
            ("SELECT pg_replication_origin_session_is_setup()", b),
            ("SELECT pg_replication_origin_session_progress(false)::text", a),
            ("SELECT pg_replication_origin_session_reset()", a),
            ("SELECT pg_replication_origin_session_setup('regress_a')", b),
            ("SELECT pg_replication_origin_session_reset()", b),
            ("SELECT pg_replication_origin_session_reset()", b),
        ]:
            assert repr(who[0](sql)) == repr(who[1](sql)), sql
    finally:
        for c in (*a, *b):
            c.close()


def test_origin_functions_are_for_superusers(proxy: ProxyServer, ref: PgCluster) -> None:
    _both(proxy, ref, ["CREATE ROLE regress_ro_user LOGIN"])
    same_answers(
        proxy.dsn(user="regress_ro_user"),
        ref.dsn(user="regress_ro_user"),
        [
            "SELECT pg_replication_origin_create('regress_x')",
            "SELECT pg_replication_origin_session_is_setup()",
            "SELECT pg_replication_origin_progress('regress_a', true)",
            "SELECT roname FROM pg_replication_origin ORDER BY 1",
            "SELECT * FROM pg_replication_origin_status",
        ],
    ).close()


def _writes(c: psycopg.Connection[Any]) -> None:
    """Commits under an origin (with and without a remote LSN and time), then without."""
    c.execute("SELECT pg_replication_origin_session_setup('regress_w')")
    c.execute("BEGIN")
    c.execute("SELECT pg_replication_origin_xact_setup('0/1000', '2020-01-02 03:04:05.678+00')")
    c.execute("INSERT INTO ro_t VALUES (1)")
    c.execute("COMMIT")
    c.execute("INSERT INTO ro_t VALUES (2)")  # (the LSN and time stay until reset)
    c.execute("SELECT pg_replication_origin_xact_reset()")
    c.execute("INSERT INTO ro_t VALUES (3)")
    c.execute("SELECT pg_replication_origin_session_reset()")
    c.execute("INSERT INTO ro_t VALUES (4)")


def _decode(out: bytes) -> list[tuple[object, ...]]:
    from decoding.pgoutput import proto as P

    shape: list[tuple[object, ...]] = []
    origin = False
    begin: Any = None
    for m in pgoutput_messages(out):
        if isinstance(m, P.Begin):
            begin, origin = m, False
            shape.append(("BEGIN",))
        elif isinstance(m, P.Origin):
            origin = True
            shape.append(("ORIGIN", m.name, m.origin_lsn, begin.commit_time))  # (the origin's time)
        elif isinstance(m, P.Insert):
            shape.append(("INSERT", m.new.values))
        elif isinstance(m, P.Commit):
            shape.append(("COMMIT", m.commit_time if origin else None))
        elif isinstance(m, P.Relation):
            shape.append(("RELATION", m.name))
    return shape


def test_commits_under_an_origin_decode_as_on_postgres(proxy: ProxyServer, ref: PgCluster) -> None:
    """pgoutput sends an Origin message (name and remote LSN) after BEGIN, and the origin's
    time as the commit time (2000-01-01 when none was given); test_decoding's only-local
    leaves those transactions out; the origin's progress moved with the commits."""
    _both(proxy, ref, [
        "SELECT pg_replication_origin_create('regress_w')",
        "CREATE TABLE ro_t (id int PRIMARY KEY)",
        "CREATE PUBLICATION ro_pub FOR TABLE ro_t",
    ])  # fmt: skip
    results = []
    for dsn in (proxy.dsn(), ref.dsn()):
        recvlogical(dsn, "ro_po", "--create-slot", "-P", "pgoutput")
        recvlogical(dsn, "ro_td", "--create-slot", "-P", "test_decoding")
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("SET synchronous_commit = on")
            _writes(c)
            end = str(c.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0])  # type: ignore[index]
            status = c.execute(
                "SELECT external_id, remote_lsn::text, local_lsn > '0/0' FROM pg_replication_origin_status WHERE external_id = 'regress_w'"
            ).fetchall()
        po = recvlogical(dsn, "ro_po", "--start", "-f", "-", f"--endpos={end}", "--no-loop", "-o", "proto_version=1", "-o", "publication_names=ro_pub")
        td = recvlogical(dsn, "ro_td", "--start", "-f", "-", f"--endpos={end}", "--no-loop", "-o", "only-local=1", "-o", "include-xids=0")
        td_all = recvlogical(dsn, "ro_td", "--start", "-f", "-", f"--endpos={end}", "--no-loop", "-o", "include-xids=0")
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("SELECT pg_drop_replication_slot('ro_po')")
            c.execute("SELECT pg_drop_replication_slot('ro_td')")
        results.append((_decode(po), td.splitlines(), td_all.splitlines(), status))
    got, want = results
    assert got == want
    assert next(s for s in want[0] if s[0] == "ORIGIN")[1:3] == ("regress_w", 0x1000)
    assert want[1] == [b"BEGIN", b"table public.ro_t: INSERT: id[integer]:4", b"COMMIT"]


def test_prepared_transactions_under_an_origin_are_refused(proxy: ProxyServer) -> None:
    """The proxy's prepared transactions carry no origin: under one, PREPARE TRANSACTION
    and COMMIT/ROLLBACK PREPARED are 0A000 rather than lose the mark; origins are made and
    dropped outside transaction blocks only."""
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("SELECT pg_replication_origin_create('regress_p')")
        c.execute("CREATE TABLE IF NOT EXISTS ro_p (id int)")
        c.execute("SELECT pg_replication_origin_session_setup('regress_p')")
        c.execute("BEGIN")
        c.execute("INSERT INTO ro_p VALUES (1)")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="PREPARE TRANSACTION in a session with a replication origin"):
            c.execute("PREPARE TRANSACTION 'p1'")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="COMMIT PREPARED"):
            c.execute("COMMIT PREPARED 'p1'")
        c.execute("SELECT pg_replication_origin_session_reset()")
        assert c.execute("SELECT count(*) FROM ro_p").fetchone() == (0,)
        c.execute("BEGIN")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match=re.escape("pg_replication_origin_create() inside a transaction block")):
            c.execute("SELECT pg_replication_origin_create('regress_q')")
        c.execute("ROLLBACK")
        c.execute("SELECT pg_replication_origin_drop('regress_p')")


def test_origin_progress_survives_a_restart(tmp_path: Any) -> None:
    """An origin and the progress its commits made are there after the proxy restarts on
    its data (read back from replorigin.json and the commit records replayed)."""
    with ProxyServer(tmp_path) as p:
        with psycopg.connect(p.dsn(), autocommit=True) as c:
            c.execute("SELECT pg_replication_origin_create('regress_r')")
            c.execute("CREATE TABLE rr (id int)")
            c.execute("SELECT pg_replication_origin_session_setup('regress_r')")
            c.execute("SELECT pg_replication_origin_xact_setup('0/5000', now())")
            c.execute("INSERT INTO rr VALUES (1)")
            before = c.execute("SELECT remote_lsn::text, local_lsn::text FROM pg_replication_origin_status").fetchall()
        port = p.port
    with ProxyServer(tmp_path, port=port) as p, psycopg.connect(p.dsn(), autocommit=True) as c:
        after = c.execute("SELECT remote_lsn::text, local_lsn::text FROM pg_replication_origin_status").fetchall()
    assert before == after and before[0][0] == "0/5000"
