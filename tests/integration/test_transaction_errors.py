"""An error aborts the transaction it happens in, whatever raised it, as in PostgreSQL 15.

Every ERROR — a syntax error, a cast that fails while rows are being produced, a missing
table, bad COPY data, a failed commit — puts an explicit block into the failed state (25P02
for what follows, COMMIT answers ROLLBACK) and rolls an implicit one back. Each script runs
on a real PostgreSQL 15 and on the proxy; what a client sees must be the same, rows included.
"""

from __future__ import annotations

import itertools
import select
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import psycopg
import pytest
from psycopg import pq

from tests.pgcluster import PgCluster
from tests.pgcompare import Client
from tests.proxy import ProxyProcess, ProxyServer

HERE = Path(__file__).parent
_names = itertools.count(1)


def _fresh(pg15: PgCluster, proxy: ProxyServer | ProxyProcess) -> tuple[str, str]:
    """A new database on PostgreSQL and a new table name, so scripts do not meet."""
    db = f"txerr{next(_names)}"
    pg15.psql(f"CREATE DATABASE {db}")
    return pg15.dsn(dbname=db), proxy.dsn()


def _compare(pg15: PgCluster, proxy: ProxyServer, script: Sequence[str], *, code_only: str = "") -> None:
    """Run ``script`` on both servers, statement by statement; ``code_only`` is a statement
    whose outcome is compared as "an error" alone (its code and wording are not what these
    tests are about)."""
    ref_dsn, dsn = _fresh(pg15, proxy)
    with Client(ref_dsn) as ref, Client(dsn) as got:
        for sql in script:
            a, b = got(sql), ref(sql)
            if sql == code_only:
                a, b = a[:1], b[:1]
            assert a == b, sql


def _table() -> str:
    return f"te{next(_names)}"


@pytest.mark.parametrize(
    "failing",
    [
        "SELECT 1/0",
        "SELECT 'abc'::int",
        "SELECT 99999999999::int",
        "SELECT 1 +",
        "SELECT * FROM no_such_table",
        "SELECT no_such_function(1)",
        "SELECT 10/(i-3) FROM generate_series(1, 5) AS i",  # fails after rows were produced
    ],
)
def test_an_error_in_a_block_aborts_it(proxy: ProxyServer, pg15: PgCluster, failing: str) -> None:
    t = _table()
    _compare(pg15, proxy, [
        f"CREATE TABLE {t} (id int)",
        "BEGIN",
        f"INSERT INTO {t} VALUES (1)",
        failing,
        f"INSERT INTO {t} VALUES (2)",
        "SELECT 1",
        "SAVEPOINT s",
        "RELEASE s",
        "BEGIN",
        "COMMIT",
        f"SELECT count(*) FROM {t}",
    ], code_only=failing)  # fmt: skip


def test_an_error_in_an_implicit_transaction_rolls_back_the_whole_message(
    proxy: ProxyServer, pg15: PgCluster
) -> None:
    t = _table()
    _compare(pg15, proxy, [
        f"CREATE TABLE {t} (id int)",
        f"INSERT INTO {t} VALUES (1); SELECT 1/0; INSERT INTO {t} VALUES (2)",
        f"INSERT INTO {t} VALUES (3); SELECT 10/(i-3) FROM generate_series(1, 5) AS i",
        f"INSERT INTO {t} VALUES (4); SELECT 1 +",
        f"SELECT count(*) FROM {t}",
        f"BEGIN; INSERT INTO {t} VALUES (5); SELECT 1/0",
        "SELECT 1",
        "ROLLBACK",
        f"SELECT count(*) FROM {t}",
    ])  # fmt: skip


def test_rollback_to_savepoint_recovers_a_failed_block(proxy: ProxyServer, pg15: PgCluster) -> None:
    t = _table()
    _compare(pg15, proxy, [
        f"CREATE TABLE {t} (id int)",
        "BEGIN",
        f"INSERT INTO {t} VALUES (1)",
        "SAVEPOINT s",
        f"INSERT INTO {t} VALUES (2)",
        "SELECT 10/(i-3) FROM generate_series(1, 5) AS i",
        "ROLLBACK TO SAVEPOINT s",
        f"INSERT INTO {t} VALUES (3)",
        "COMMIT",
        f"SELECT id FROM {t} ORDER BY id",
    ])  # fmt: skip


def test_begin_inside_a_block_warns_and_applies_its_options(proxy: ProxyServer, pg15: PgCluster) -> None:
    _compare(pg15, proxy, [
        "BEGIN",
        "BEGIN ISOLATION LEVEL REPEATABLE READ",
        "SHOW transaction_isolation",
        "COMMIT",
        "BEGIN READ ONLY",
        "START TRANSACTION READ WRITE",
        "SHOW transaction_read_only",
        "COMMIT",
        "BEGIN",
        "SELECT 1",
        "BEGIN ISOLATION LEVEL SERIALIZABLE",
        "SHOW transaction_isolation",
        "ROLLBACK",
        "BEGIN",
        "SELECT 1",
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        "ROLLBACK",
        "BEGIN READ ONLY",
        "SELECT 1",
        "SET TRANSACTION READ WRITE",
        "ROLLBACK",
    ])  # fmt: skip


def test_bad_copy_data_aborts_the_block(proxy: ProxyServer, pg15: PgCluster) -> None:
    def run(dsn: str) -> list[object]:
        t = "copy_target"
        out: list[object] = []
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {t}")
            conn.execute(f"CREATE TABLE {t} (id int, v text)")
            conn.execute("BEGIN")
            conn.execute(f"INSERT INTO {t} VALUES (1, 'a')")
            try:
                with conn.cursor().copy(f"COPY {t} FROM STDIN") as cp:
                    cp.write("2\tb\nthree\tc\n")
            except psycopg.Error as e:
                out.append(e.sqlstate)
            out.append(conn.info.transaction_status.name)
            try:
                conn.execute(f"INSERT INTO {t} VALUES (4, 'd')")
            except psycopg.Error as e:
                out.append(e.sqlstate)
            out.append(conn.execute("COMMIT").statusmessage)
            out.append(conn.execute(f"SELECT count(*) FROM {t}").fetchall())
        return out

    ref_dsn, dsn = _fresh(pg15, proxy)
    assert run(dsn) == run(ref_dsn) == ["22P02", "INERROR", "25P02", "ROLLBACK", [(0,)]]


# -- the extended protocol, message by message (libpq) ---------------------------------------


def _outcome(res: pq.PGresult) -> tuple[object, ...]:
    status = pq.ExecStatus(res.status).name
    if res.status == pq.ExecStatus.FATAL_ERROR:
        return (status, (res.error_field(pq.DiagnosticField.SQLSTATE) or b"").decode())
    rows = [tuple(res.get_value(r, c) for c in range(res.nfields)) for r in range(res.ntuples)]
    return (status, (res.command_status or b"").decode(), rows)


Step = Callable[[pq.PGconn], pq.PGresult]


def _libpq(dsn: str) -> psycopg.Connection[object]:
    """A connection to drive through libpq's own calls (``.pgconn``). Some of them hold the
    GIL while they wait: the proxy they talk to runs in a process of its own."""
    return psycopg.connect(dsn, autocommit=True)


def _extended(dsn: str, steps: Sequence[Step]) -> list[tuple[object, ...]]:
    with _libpq(dsn) as c:
        conn = c.pgconn
        out = []
        for step in steps:
            out.append((*_outcome(step(conn)), pq.TransactionStatus(conn.transaction_status).name))
        return out


def _params(sql: str, *params: bytes | None) -> Step:
    return lambda c: c.exec_params(sql.encode(), list(params))


def _simple(sql: str) -> Step:
    return lambda c: c.exec_(sql.encode())


def test_a_failed_block_accepts_rollback_by_the_extended_protocol(proxy_process: ProxyProcess, pg15: PgCluster) -> None:
    """pgjdbc and psycopg with autocommit off send ROLLBACK through Parse/Bind/Execute."""
    t = _table()
    steps: list[Step] = [
        _simple(f"CREATE TABLE {t} (id int)"),
        lambda c: c.prepare(b"ins", f"INSERT INTO {t} VALUES ($1)".encode()),
        lambda c: c.prepare(b"sel", b"SELECT $1::int + 1"),
        _params("BEGIN"),
        lambda c: c.exec_prepared(b"ins", [b"1"]),
        _params("SELECT 1/0"),
        lambda c: c.exec_prepared(b"ins", [b"2"]),  # 25P02 at Bind
        _params("SELECT $1::int", b"1"),  # 25P02 at Parse
        lambda c: c.describe_prepared(b"sel"),  # a statement with rows: 25P02
        lambda c: c.describe_prepared(b"ins"),  # one without: described
        lambda c: c.prepare(b"rb", b"ROLLBACK"),  # a transaction's end may be parsed
        lambda c: c.exec_prepared(b"rb", []),
        _params(f"SELECT count(*) FROM {t}"),
        _params("BEGIN"),
        _params("SELECT 'abc'::int"),
        _params("COMMIT"),  # answers ROLLBACK
        _params("BEGIN"),
        _params(f"INSERT INTO {t} VALUES ($1)", b"7"),
        _params("COMMIT"),
        _params(f"SELECT count(*) FROM {t}"),
    ]
    ref_dsn, dsn = _fresh(pg15, proxy_process)
    assert _extended(dsn, steps) == _extended(ref_dsn, steps)


def _pipeline(dsn: str, sqls: Sequence[str]) -> list[object]:
    """Statements pipelined under one Sync: after the first error, the rest are skipped."""
    with _libpq(dsn) as c:
        conn = c.pgconn
        conn.enter_pipeline_mode()
        for sql in sqls:
            conn.send_query_params(sql.encode(), None)
        conn.pipeline_sync()
        out: list[object] = []
        while True:
            if conn.is_busy():
                select.select([conn.socket], [], [], 5)
                conn.consume_input()
                continue
            res = conn.get_result()
            if res is None:
                continue
            if res.status == pq.ExecStatus.PIPELINE_SYNC:
                break
            out.append(_outcome(res))
        out.append(pq.TransactionStatus(conn.transaction_status).name)
        conn.exit_pipeline_mode()
        out.append(_outcome(conn.exec_params(b"SELECT count(*) FROM pipe", None)))
        return out


def test_an_error_in_a_pipeline_rolls_back_its_implicit_transaction(proxy_process: ProxyProcess, pg15: PgCluster) -> None:
    ref_dsn, dsn = _fresh(pg15, proxy_process)
    for d in (ref_dsn, dsn):
        with psycopg.connect(d, autocommit=True) as c:
            c.execute("DROP TABLE IF EXISTS pipe")
            c.execute("CREATE TABLE pipe (id int)")
    sqls = ["INSERT INTO pipe VALUES (1)", "SELECT 10/(i-3) FROM generate_series(1, 5) AS i", "INSERT INTO pipe VALUES (2)"]
    assert _pipeline(dsn, sqls) == _pipeline(ref_dsn, sqls)


# -- an outside client: pgjdbc with autocommit off ------------------------------------------

PGJDBC = Path("/usr/share/java/postgresql.jar")


@pytest.mark.skipif(not PGJDBC.exists(), reason="pgjdbc (Debian's libpostgresql-jdbc-java) is not installed")
def test_pgjdbc_with_autocommit_off_recovers_after_an_error(proxy: ProxyServer, pg15: PgCluster) -> None:
    def run(port: int, db: str) -> str:
        out = subprocess.run(
            ["java", "-cp", str(PGJDBC), str(HERE / "clients" / "TxErrors.java"), f"jdbc:postgresql://127.0.0.1:{port}/{db}?user=postgres"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        return out.stdout

    db = f"jdbc{next(_names)}"
    pg15.psql(f"CREATE DATABASE {db}")
    ref = run(pg15.port, db)
    assert "rows=3" in ref, ref
    assert run(proxy.port, "postgres") == ref
