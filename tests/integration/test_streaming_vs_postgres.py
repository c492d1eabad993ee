"""Streaming of in-progress transactions (pgoutput protocol 2, ``streaming 'on'``),
compared with a PostgreSQL 15 publisher doing the same with the same
``logical_decoding_work_mem``: a transaction that outgrows it goes out in blocks (Stream
Start … Stream Stop) before it ends, then Stream Commit, Stream Abort (of the transaction
or of a subtransaction rolled back to a savepoint) or, with two-phase decoding, Stream
Prepare. PostgreSQL's 015_stream, 016_stream_subxact, 018_stream_subxact_abort and
023_twophase_stream check the subscriber's side; they are re-expressed here with the
proxy as the publisher.

Where the blocks are cut differs: PostgreSQL counts the memory of each decoded row, the
proxy the size of each statement's record in its log (a changeset's rows by their decoded
size), so the number of blocks and of
changes in each is not compared — what a subscriber ends up applying is, in full."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from tests.integration.test_subscriber import new_sub_db, wait_ready
from tests.integration.test_subscription_suite import _wait
from tests.pgcluster import PgCluster
from tests.pgcompare import pgoutput_messages, recvlogical
from tests.pgcompare import run_sql as _run
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

_STREAMING = {"logical_decoding_work_mem": "64kB"}


@pytest.fixture(scope="module")
def streaming_proxy() -> Iterator[ProxyServer]:
    """A proxy whose walsenders stream past 64kB (PostgreSQL's smallest setting)."""
    with ProxyServer(extra=dict(_STREAMING)) as p:
        yield p


@pytest.fixture(scope="module")
def ref() -> Iterator[PgCluster]:
    """The reference publisher: PostgreSQL 15 with the same limit, prepared transactions on,
    and commits flushed before they return (so what the SQL slot functions read, up to the
    flushed end of the WAL, holds every transaction written before)."""
    with PgCluster({**_STREAMING, "max_prepared_transactions": "10", "synchronous_commit": "on"}) as pg:
        yield pg


def _rows(dsn: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn, autocommit=True) as c:
        return c.execute(sql).fetchall()


def _ins(lo: int, hi: int) -> str:
    return f"INSERT INTO st_tab SELECT i, md5(i::text) FROM generate_series({lo}, {hi}) s(i)"


#: 016_stream_subxact and 018_stream_subxact_abort: savepoints rolled back to, released,
#: and a whole streamed transaction rolled back; then 015_stream's updates and deletes.
_SCRIPT: list[list[str]] = [
    ["BEGIN", _ins(3, 500), "SAVEPOINT s1", _ins(501, 1000), "SAVEPOINT s2", _ins(1001, 1500),
     "SAVEPOINT s3", _ins(1501, 2000), "ROLLBACK TO s2", _ins(2001, 2500), "ROLLBACK TO s1",
     _ins(2501, 3000), "SAVEPOINT s4", _ins(3001, 3500), "SAVEPOINT s5", _ins(3501, 4000), "COMMIT"],
    ["BEGIN", _ins(4001, 4500), "SAVEPOINT s1", _ins(5001, 5500), "SAVEPOINT s2", _ins(6001, 6500),
     "SAVEPOINT s3", _ins(7001, 7500), "RELEASE s2", _ins(8001, 8500), "ROLLBACK TO s1", "COMMIT"],
    ["BEGIN", _ins(8501, 9000), "SAVEPOINT s1", _ins(9001, 9500), "SAVEPOINT s2", _ins(9501, 10000),
     "ROLLBACK"],
    ["INSERT INTO st_tab VALUES (-1, 'small, between')"],
    ["BEGIN", _ins(10001, 12000), "UPDATE st_tab SET b = md5(b) WHERE a > 0", "DELETE FROM st_tab WHERE a % 3 = 0",
     "COMMIT"],
]  # fmt: skip


def _write(dsn: str, script: list[list[str]]) -> None:
    with psycopg.connect(dsn, autocommit=True) as c:
        for txn in script:
            for sql in txn:
                c.execute(sql)


def _applied(messages: list[Any]) -> list[list[tuple[Any, ...]]]:
    """What a subscriber applies of a pgoutput stream, transaction by transaction, as
    PostgreSQL 15's apply worker does with streamed ones: a streamed transaction's changes
    are kept by xid until its Stream Commit; a Stream Abort of a subtransaction discards
    from that subtransaction's first change on, one of the whole transaction all of it.
    Checks what holds in any stream on the way: every change in a block carries an xid,
    the first block of a transaction says so, Stream Commit names the blocks' xid."""
    from decoding.pgoutput import proto as P

    done: list[list[tuple[Any, ...]]] = []
    streamed: dict[int, list[tuple[int, tuple[Any, ...]]]] = {}
    current: list[tuple[Any, ...]] | None = None
    block: int | None = None
    width: dict[int, int] = {}
    for m in messages:
        if isinstance(m, P.StreamStart):
            assert block is None
            assert m.first_segment == (m.xid not in streamed), m
            streamed.setdefault(m.xid, [])
            block = m.xid
        elif isinstance(m, P.StreamStop):
            assert block is not None
            block = None
        elif isinstance(m, P.StreamCommit):
            assert block is None and m.commit_lsn < m.end_lsn
            done.append([c for _, c in streamed.pop(m.xid)])
        elif isinstance(m, P.StreamAbort):
            assert block is None
            if m.subxid == m.xid:
                streamed.pop(m.xid)
            else:
                changes = streamed[m.xid]
                first = next((i for i, (x, _) in enumerate(changes) if x == m.subxid), len(changes))
                del changes[first:]
        elif isinstance(m, P.Begin):
            current = []
        elif isinstance(m, P.Commit):
            assert current is not None
            done.append(current)
            current = None
        elif isinstance(m, P.Insert | P.Update | P.Delete):
            if isinstance(m, P.Insert | P.Update):
                assert len(m.new.values) == width[m.relid], m  # (as the last Relation said)
            row = (type(m).__name__, getattr(m, "new", None) and m.new.values,
                   getattr(m, "key", None) and m.key.values, getattr(m, "old", None) and m.old.values)  # fmt: skip
            if block is not None:
                assert m.xid is not None
                streamed[block].append((m.xid, row))
            else:
                assert m.xid is None and current is not None
                current.append(row)
        elif isinstance(m, P.Relation):
            assert (m.xid is not None) == (block is not None)
            width[m.relid] = len(m.columns)
    assert not streamed and block is None and current is None
    return done


def _stream_of(dsn: str, script: list[list[str]], *options: str, two_phase: bool = False) -> list[Any]:
    """The pgoutput messages pg_recvlogical receives of ``script`` on a new slot (made
    with ``--two-phase`` when asked), with ``options``."""
    _publisher(dsn)
    recvlogical(dsn, "st_slot", "--create-slot", "-P", "pgoutput", *(["--two-phase"] if two_phase else []))
    try:
        _write(dsn, script)
        end = str(_rows(dsn, "SELECT pg_current_wal_insert_lsn()")[0][0])
        out = recvlogical(dsn, "st_slot", "--start", "-f", "-", f"--endpos={end}", "--no-loop",
                          "-o", "publication_names=st_pub", *options)  # fmt: skip
    finally:
        _run(dsn, "SELECT pg_drop_replication_slot('st_slot')")
    return pgoutput_messages(out)


def _kinds(messages: list[Any]) -> list[str]:
    return [type(m).__name__ for m in messages]


@pytest.mark.parametrize("processes", [True, False], ids=["walsender-process", "in-server"])
def test_protocol_2_streams_what_postgres_streams(streaming_proxy: ProxyServer, ref: PgCluster, processes: bool) -> None:
    """pg_recvlogical with ``proto_version 2, streaming 'on'``: the savepoint scripts,
    a rolled-back transaction and updates and deletes come in blocks on both; what a
    subscriber applies of them is the same, row for row. The transaction rolled back is
    streamed and then aborted on both, its subtransactions' aborts too."""
    options = ("-o", "proto_version=2", "-o", "streaming=on")
    want = _stream_of(ref.dsn(), _SCRIPT, *options)
    if processes:
        got = _stream_of(streaming_proxy.dsn(), _SCRIPT, *options)
    else:
        with ProxyServer(extra=dict(_STREAMING), walsender_processes=False) as inproc:
            got = _stream_of(inproc.dsn(), _SCRIPT, *options)
    assert _applied(got) == _applied(want)
    for messages in (got, want):
        kinds = _kinds(messages)
        assert kinds.count("StreamCommit") == 3 and kinds.count("Begin") == 1  # the small one alone is whole
        assert kinds.count("StreamStart") > 6
        aborts = [m for m in messages if type(m).__name__ == "StreamAbort"]
        assert any(a.subxid == a.xid for a in aborts) and any(a.subxid != a.xid for a in aborts)
        assert all(a.abort_lsn is None for a in aborts)  # (protocol 4's fields only with 'parallel')
    # Without the option, the same transactions come whole at their commit.
    whole = _stream_of(streaming_proxy.dsn(), _SCRIPT, "-o", "proto_version=2")
    assert "StreamStart" not in _kinds(whole)
    assert _applied(whole) == _applied(want)


def test_a_small_transaction_is_not_streamed(streaming_proxy: ProxyServer, ref: PgCluster) -> None:
    """Under the limit nothing is streamed, with the option or without: the same
    Begin … Commit as PostgreSQL's."""
    script = [["BEGIN", _ins(3, 20), "UPDATE st_tab SET b = 'x' WHERE a = 3", "COMMIT"]]
    options = ("-o", "proto_version=2", "-o", "streaming=on")
    got, want = (_stream_of(d, script, *options) for d in (streaming_proxy.dsn(), ref.dsn()))
    assert _kinds(got) == _kinds(want) == ["Begin", "Relation", *["Insert"] * 18, "Update", "Commit"]
    assert _applied(got) == _applied(want)


def _table(dsn: str) -> list[tuple[Any, ...]]:
    return _rows(dsn, "SELECT a, b FROM st_tab ORDER BY a")


def _publisher(pub: str) -> None:
    _run(pub, "DROP PUBLICATION IF EXISTS st_pub", "DROP TABLE IF EXISTS st_tab",
         "CREATE TABLE st_tab (a int PRIMARY KEY, b varchar)",
         "INSERT INTO st_tab VALUES (1, 'foo'), (2, 'bar')", "CREATE PUBLICATION st_pub FOR TABLE st_tab")  # fmt: skip


def _subscriber(sub: PgCluster, pub: str, name: str, extra: str, columns: str = "c int, d int, e int") -> str:
    """A new subscriber database with the table (and extra columns of its own),
    subscribed to ``pub`` ``WITH (extra)``, its table synchronised."""
    db = new_sub_db(sub)
    _run(db, f"CREATE TABLE st_tab (a int PRIMARY KEY, b text, {columns})")
    _run(db, f"CREATE SUBSCRIPTION {name} CONNECTION '{pub}' PUBLICATION st_pub WITH ({extra})")
    wait_ready(db)
    return db


def _caught_up(pub: str, db: str) -> Callable[[], bool]:
    return lambda: _table(db) == _table(pub)


def test_a_subscriber_with_streaming_on_applies_what_it_applies_from_postgres(
    streaming_proxy: ProxyServer, ref: PgCluster, pg15_subscriber: PgCluster
) -> None:
    """A PostgreSQL 15 subscriber ``WITH (streaming = on)`` (016, 018, 015): after each
    transaction its table is the publisher's, on the proxy as on PostgreSQL, and it
    holds no column it should not (its extra columns keep their defaults)."""

    def run(i: int, pub: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        _publisher(pub)
        db = _subscriber(pg15_subscriber, pub, f"st_sub{i}", "streaming = on")
        seen = []
        for txn in _SCRIPT:
            _write(pub, [txn])
            _wait(_caught_up(pub, db))
            seen.append(_rows(db, "SELECT count(*), count(c) FROM st_tab")[0])
        _run(db, f"DROP SUBSCRIPTION st_sub{i}")
        return seen, _table(db)

    results = [run(i, pub) for i, pub in enumerate((streaming_proxy.dsn(), ref.dsn()))]
    assert results[0] == results[1]
    assert results[0][0][:3] == [(2000, 0), (2500, 0), (2500, 0)]  # (018's figures)


def test_two_phase_with_streaming_prepares_a_streamed_transaction(
    streaming_proxy: ProxyServer, ref: PgCluster, pg15_subscriber: PgCluster
) -> None:
    """023_twophase_stream: a subscriber with ``two_phase = true, streaming = on``; a big
    transaction PREPAREd is streamed and then Stream Prepare'd — prepared on the
    subscriber, its rows invisible — then COMMIT PREPARED; another ROLLBACK PREPARED.
    pg_recvlogical's protocol-3 stream has Stream Prepare where PostgreSQL's has it."""
    big = ["BEGIN", _ins(3, 5000), "UPDATE st_tab SET b = md5(b)", "DELETE FROM st_tab WHERE a % 2 = 0"]

    def run(i: int, pub: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        _publisher(pub)
        db = _subscriber(pg15_subscriber, pub, f"st_tp{i}", "two_phase = true, streaming = on")
        _wait(lambda: _rows(db, "SELECT subtwophasestate FROM pg_subscription")[0][0] == "e")

        def prepared(n: int) -> Callable[[], bool]:
            return lambda: _rows(db, "SELECT count(*) FROM pg_prepared_xacts") == [(n,)]

        steps = []
        _write(pub, [[*big, "PREPARE TRANSACTION 'st_g1'"]])
        _wait(prepared(1))
        steps.append(_rows(db, "SELECT count(*) FROM st_tab")[0])
        _write(pub, [["COMMIT PREPARED 'st_g1'"]])
        _wait(lambda: prepared(0)() and _caught_up(pub, db)())
        steps.append(_rows(db, "SELECT count(*) FROM st_tab")[0])
        _write(pub, [["BEGIN", _ins(6001, 9000), "PREPARE TRANSACTION 'st_g2'"]])
        _wait(prepared(1))
        _write(pub, [["ROLLBACK PREPARED 'st_g2'"]])
        _wait(prepared(0))
        steps.append(_rows(db, "SELECT count(*) FROM st_tab")[0])
        _run(db, f"DROP SUBSCRIPTION st_tp{i}")
        return steps, _table(db)

    results = [run(i, pub) for i, pub in enumerate((streaming_proxy.dsn(), ref.dsn()))]
    assert results[0] == results[1]
    assert results[0][0] == [(2,), (2500,), (2500,)]

    script = [[*big, "PREPARE TRANSACTION 'st_g3'"], ["COMMIT PREPARED 'st_g3'"],
              ["BEGIN", _ins(6001, 9000), "PREPARE TRANSACTION 'st_g4'"], ["ROLLBACK PREPARED 'st_g4'"]]  # fmt: skip
    options = ("-o", "proto_version=3", "-o", "streaming=on", "-o", "two_phase=on")
    shapes = [_blocks(_kinds(_stream_of(dsn, script, *options, two_phase=True))) for dsn in (streaming_proxy.dsn(), ref.dsn())]
    assert shapes[0] == shapes[1]
    assert shapes[1] == ["blocks", "StreamPrepare", "CommitPrepared", "blocks", "StreamPrepare", "RollbackPrepared"]


def _blocks(kinds: list[str]) -> list[str]:
    """Message kinds with each run of stream blocks as one "blocks" (how many there are
    depends on how memory is counted) and the changes inside them left out."""
    out: list[str] = []
    for k in kinds:
        if k in ("StreamStart", "StreamStop", "Insert", "Update", "Delete", "Relation"):
            if not out or out[-1] != "blocks":
                out.append("blocks")
        else:
            out.append(k)
    return out


#: 017_stream_ddl and 019_stream_subxact_ddl_abort: columns added (and one dropped) inside
#: streamed transactions, some in subtransactions rolled back.
_DDL_SCRIPT: list[list[str]] = [
    ["BEGIN", "INSERT INTO st_tab VALUES (3, md5(3::text))", "ALTER TABLE st_tab ADD COLUMN c INT", "SAVEPOINT s1",
     "INSERT INTO st_tab VALUES (4, md5(4::text), -4)", "COMMIT"],
    ["BEGIN", "INSERT INTO st_tab SELECT i, md5(i::text), -i FROM generate_series(5, 1000) s(i)",
     "ALTER TABLE st_tab ADD COLUMN d INT", "SAVEPOINT s1",
     "INSERT INTO st_tab SELECT i, md5(i::text), -i, 2*i FROM generate_series(1001, 2000) s(i)", "COMMIT"],
    ["BEGIN", "INSERT INTO st_tab SELECT i, md5(i::text), -i, 2*i FROM generate_series(2001, 3000) s(i)",
     "SAVEPOINT s1", "ALTER TABLE st_tab ADD COLUMN e INT",
     "INSERT INTO st_tab SELECT i, md5(i::text), -i, 2*i, -3*i FROM generate_series(3001, 4000) s(i)",
     "SAVEPOINT s2", "ALTER TABLE st_tab DROP COLUMN c",
     "INSERT INTO st_tab SELECT i, md5(i::text), 2*i, -3*i FROM generate_series(4001, 5000) s(i)",
     "ROLLBACK TO s1", "INSERT INTO st_tab SELECT i, md5(i::text), i, i FROM generate_series(3001, 3500) s(i)", "COMMIT"],
    ["BEGIN", "INSERT INTO st_tab SELECT i, md5(i::text), -i, 2*i FROM generate_series(6001, 8000) s(i)",
     "ALTER TABLE st_tab ADD COLUMN f INT", "COMMIT"],
    ["INSERT INTO st_tab SELECT i, md5(i::text), -i, 2*i, 4*i FROM generate_series(8001, 8005) s(i)"],
]  # fmt: skip


def test_catalog_changes_inside_streamed_transactions(streaming_proxy: ProxyServer, ref: PgCluster, pg15_subscriber: PgCluster) -> None:
    """017 and 019: a column added inside a streamed transaction is in the Relation of the
    blocks after it (with the block's xid); one added in a subtransaction rolled back is
    not in what follows. pg_recvlogical's stream applies to the same rows as
    PostgreSQL's, and a PostgreSQL 15 subscriber ends with the same table (its extra
    columns at their defaults where nothing was sent for them)."""
    options = ("-o", "proto_version=2", "-o", "streaming=on")
    got, want = (_stream_of(d, _DDL_SCRIPT, *options) for d in (streaming_proxy.dsn(), ref.dsn()))
    assert _applied(got) == _applied(want)
    columns = [[tuple(c.name for c in m.columns) for m in ms if type(m).__name__ == "Relation"] for ms in (got, want)]
    assert columns[0][-1] == columns[1][-1] == ("a", "b", "c", "d", "f")
    # (Which Relations come between depends on where blocks are cut: the proxy may stream
    # rows with column e before the subtransaction that added it is rolled back.)
    assert {("a", "b", "c"), ("a", "b", "c", "d")} <= set(columns[0]) & set(columns[1])


    def run(i: int, pub: str) -> list[tuple[Any, ...]]:
        _publisher(pub)
        db = _subscriber(pg15_subscriber, pub, f"st_ddl{i}", "streaming = on", "c int, d int, e int, f int")
        _write(pub, _DDL_SCRIPT)
        _wait(lambda: _rows(db, "SELECT count(*) FROM st_tab") == _rows(pub, "SELECT count(*) FROM st_tab"))
        _run(db, f"DROP SUBSCRIPTION st_ddl{i}")
        return _rows(db, "SELECT a, b, c, d, e, f FROM st_tab ORDER BY a")

    tables = [run(i, pub) for i, pub in enumerate((streaming_proxy.dsn(), ref.dsn()))]
    assert tables[0] == tables[1]
    assert len(tables[0]) == 2 + 2 + 1996 + 1500 + 2000 + 5



def test_the_sql_slot_functions_stream_as_a_walsender_does(streaming_proxy: ProxyServer, ref: PgCluster) -> None:
    """``pg_logical_slot_peek_binary_changes`` with ``streaming 'on'``: the same blocks as
    a walsender's stream (what they apply to is PostgreSQL's), each row with its
    transaction's top-level xid; ``get`` then consumes them."""
    from decoding.pgoutput import proto as P

    def run(dsn: str) -> tuple[list[Any], set[int], int, bool]:
        _publisher(dsn)
        _run(dsn, "SELECT pg_create_logical_replication_slot('st_sql', 'pgoutput')")
        try:
            _write(dsn, _SCRIPT[:4])  # (the last commits: the log is flushed past the abort before it)
            opts = "'proto_version', '2', 'streaming', 'on', 'publication_names', 'st_pub'"
            rows = _rows(dsn, f"SELECT lsn, xid, data FROM pg_logical_slot_peek_binary_changes('st_sql', NULL, NULL, {opts})")
            got = _rows(dsn, f"SELECT count(*) FROM pg_logical_slot_get_binary_changes('st_sql', NULL, NULL, {opts})")
            left = _rows(dsn, f"SELECT lsn, xid, substr(data, 1, 1) FROM pg_logical_slot_get_binary_changes('st_sql', NULL, NULL, {opts})")
        finally:
            _run(dsn, "SELECT pg_drop_replication_slot('st_sql')")
        messages, in_stream = [], False
        for _, _, data in rows:
            m = P.decode_message(bytes(data), in_stream=in_stream)
            in_stream = isinstance(m, P.StreamStart) or (in_stream and not isinstance(m, P.StreamStop))
            messages.append(m)
        starts = {m.xid for m in messages if isinstance(m, P.StreamStart)}
        begins = {m.xid for m in messages if isinstance(m, P.Begin)}
        # A streamed transaction's rows carry its top-level xid; a Stream Abort's, the
        # (sub)transaction it aborts.
        xids = {int(xid) for (_, xid, _), m in zip(rows, messages, strict=True) if not isinstance(m, P.StreamAbort)}
        assert xids == starts | begins
        assert all(int(xid) == m.subxid for (_, xid, _), m in zip(rows, messages, strict=True) if isinstance(m, P.StreamAbort))
        return messages, starts, _kinds(messages).count("StreamStart"), got[0][0] == len(rows) and not left

    got, want = run(streaming_proxy.dsn()), run(ref.dsn())
    assert got[3] and want[3]  # (get consumes what peek showed)
    assert _applied(got[0]) == _applied(want[0])
    assert len(got[1]) == len(want[1]) == 3 and got[2] > 3 and want[2] > 3


def test_protocol_4_parallel_streaming_carries_the_abort_position(streaming_proxy: ProxyServer) -> None:
    """``proto_version 4, streaming 'parallel'`` (a proxy saying it is 16, against
    PostgreSQL 16): every Stream Abort carries the abort's LSN and time, which a parallel
    apply worker orders by; what is applied is PostgreSQL 16's. Saying it is 15, the
    proxy refuses protocol 4 as PostgreSQL 15 does."""
    from tests.pgcluster import major_cluster

    options = ("-o", "proto_version=4", "-o", "streaming=parallel")
    with major_cluster(16, {**_STREAMING, "synchronous_commit": "on"}) as pg16, ProxyServer(extra=dict(_STREAMING), server_version="16.4") as proxy16:
        got, want = (_stream_of(d, _SCRIPT, *options) for d in (proxy16.dsn(), pg16.dsn()))
    with pytest.raises(RuntimeError, match="proto_version=4 but we only support protocol 3 or lower"):
        _stream_of(streaming_proxy.dsn(), _SCRIPT[:1], "-o", "proto_version=4", "-o", "streaming=on")
    with pytest.raises(RuntimeError, match="streaming requires a Boolean value"):
        _stream_of(streaming_proxy.dsn(), _SCRIPT[:1], *options)
    assert _applied(got) == _applied(want)
    for messages in (got, want):
        aborts = [m for m in messages if type(m).__name__ == "StreamAbort"]
        commit = next(m for m in messages if type(m).__name__ == "StreamCommit")
        assert aborts and all(a.abort_lsn is not None and a.abort_time > 0 for a in aborts)
        assert aborts[0].abort_lsn < commit.commit_lsn  # (the first: a savepoint of the first transaction)


_TD_XID = re.compile(rb"(TXN|BEGIN|COMMIT|txid) \d+")


def _td_transactions(out: bytes) -> list[tuple[str, int, list[bytes]]]:
    """test_decoding's lines per transaction, xids masked: ("streamed", number of
    ``streaming change`` lines, [its last line]) for a streamed one — blocks opened and
    closed in pairs — or ("whole", 0, its lines) for one sent at its commit."""
    out_txns: list[tuple[str, int, list[bytes]]] = []
    streamed: dict[bytes, int] = {}
    whole: list[bytes] | None = None
    open_block: bytes | None = None
    for raw in out.splitlines():
        xid = re.search(rb"TXN (\d+)", raw)
        line = _TD_XID.sub(rb"\1 N", raw)
        if line.startswith(b"opening a streamed block"):
            assert open_block is None and xid is not None
            open_block = xid.group(1)
            streamed.setdefault(open_block, 0)
        elif line.startswith(b"closing a streamed block"):
            assert xid is not None and open_block == xid.group(1)
            open_block = None
        elif line.startswith(b"streaming change"):
            assert xid is not None and open_block == xid.group(1)
            streamed[open_block] += 1
        elif line.startswith((b"committing streamed", b"aborting streamed")):
            assert open_block is None and xid is not None
            if xid.group(1) in streamed:  # (a subtransaction's abort names the subtransaction)
                out_txns.append(("streamed", streamed.pop(xid.group(1)), [line]))
        elif line.startswith(b"BEGIN"):
            whole = [line]
        elif whole is not None:
            whole.append(line)
            if line.startswith(b"COMMIT"):
                out_txns.append(("whole", 0, whole))
                whole = None
    assert not streamed and open_block is None and whole is None
    return out_txns


def _test_decoding_stream(dsn: str, script: list[list[str]], *options: str) -> bytes:
    """What pg_recvlogical writes with test_decoding's ``stream-changes`` (and ``options``)
    of ``script`` on a new slot."""
    _publisher(dsn)
    recvlogical(dsn, "st_td", "--create-slot", "-P", "test_decoding")
    try:
        _write(dsn, script)
        end = str(_rows(dsn, "SELECT pg_current_wal_insert_lsn()")[0][0])
        return recvlogical(dsn, "st_td", "--start", "-f", "-", f"--endpos={end}", "--no-loop",
                           "-o", "stream-changes=1", *options)  # fmt: skip
    finally:
        _run(dsn, "SELECT pg_drop_replication_slot('st_td')")


def test_test_decoding_streams_what_postgres_streams(streaming_proxy: ProxyServer, ref: PgCluster) -> None:
    """test_decoding with ``stream-changes``: a big committed transaction in blocks with a
    line per row changed, then ``committing streamed transaction TXN n``; one rolled back
    ends ``aborting streamed (sub)transaction TXN n``; a small one comes whole, its lines
    PostgreSQL's. With skip-empty-xacts and include-timestamp as well."""
    script = [
        ["BEGIN", _ins(3, 1000), "UPDATE st_tab SET b = 'u' WHERE a <= 500", "DELETE FROM st_tab WHERE a > 900", "COMMIT"],
        ["BEGIN", _ins(2001, 4000), "ROLLBACK"],
        ["INSERT INTO st_tab VALUES (-1, 'small')"],
    ]

    for options in [(), ("-o", "skip-empty-xacts=1", "-o", "include-timestamp=1")]:
        got, want = (_test_decoding_stream(d, script, *options) for d in (streaming_proxy.dsn(), ref.dsn()))
        assert b"opening a streamed block" in got and b"opening a streamed block" in want
        if options:
            got, want = (re.sub(rb" \(at [^)]*\)", b" (at T)", o) for o in (got, want))
            assert b"(at T)" in got
        g, w = _td_transactions(got), _td_transactions(want)
        assert [(k, c, lines) for k, c, lines in g if lines[0].startswith((b"BEGIN", b"committing"))] == [
            (k, c, lines) for k, c, lines in w if lines[0].startswith((b"BEGIN", b"committing"))
        ]
        assert [t[0] for t in g] == [t[0] for t in w] == ["streamed", "streamed", "whole"]
        assert g[0][1] == 998 + 500 + 100  # (a line per row: the inserts, updates, deletes)


_STATS = ("SELECT slot_name, spill_txns, spill_count, spill_bytes, stream_txns, stream_count, stream_bytes, "
          "total_txns, total_bytes, stats_reset FROM pg_stat_replication_slots ORDER BY slot_name")  # fmt: skip


def test_pg_stat_replication_slots_counts_what_was_streamed_and_spilled(streaming_proxy: ProxyServer, ref: PgCluster) -> None:
    """pg_stat_replication_slots after the scripts went to one slot streamed and to one
    not: the streamed slot counts three transactions streamed (in blocks) and four
    decoded, nothing spilled; the other counts the three big ones spilled, nothing
    streamed, as PostgreSQL's. Bytes and block counts are the proxy's own measure (of the
    log, not of decoded tuples) and only said to be there. pg_stat_reset_replication_slot
    zeroes one slot (or all, with NULL) and stamps stats_reset; a slot it does not know is
    22023; a role that is not superuser is 42501."""

    def run(dsn: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[str]]:
        _publisher(dsn)
        for slot in ("st_a_streamed", "st_b_whole"):
            recvlogical(dsn, slot, "--create-slot", "-P", "pgoutput")
        try:
            _write(dsn, _SCRIPT[:4])
            end = str(_rows(dsn, "SELECT pg_current_wal_insert_lsn()")[0][0])
            for slot, extra in (("st_a_streamed", ("-o", "streaming=on")), ("st_b_whole", ())):
                recvlogical(dsn, slot, "--start", "-f", "/dev/null", f"--endpos={end}", "--no-loop",
                            "-o", "publication_names=st_pub", "-o", "proto_version=2", *extra)  # fmt: skip
            counted = _rows(dsn, _STATS)
            _run(dsn, "SELECT pg_stat_reset_replication_slot('st_a_streamed')")
            reset_one = _rows(dsn, _STATS)
            _run(dsn, "SELECT pg_stat_reset_replication_slot(NULL)")
            errors = []
            for sql in ("SELECT pg_stat_reset_replication_slot('st_nosuch')",):
                try:
                    _run(dsn, sql)
                except psycopg.Error as e:
                    errors.append(f"{e.sqlstate} {e.diag.message_primary}")
            _run(dsn, "DROP ROLE IF EXISTS st_plain", "CREATE ROLE st_plain LOGIN")
            with psycopg.connect(dsn.replace("user=postgres", "user=st_plain"), autocommit=True) as c:
                try:
                    c.execute("SELECT pg_stat_reset_replication_slot(NULL)")
                except psycopg.Error as e:
                    errors.append(f"{e.sqlstate} {e.diag.message_primary}")
            _run(dsn, "DROP ROLE st_plain")
            assert all(r[9] is not None for r in _rows(dsn, _STATS))
        finally:
            for slot in ("st_a_streamed", "st_b_whole"):
                _run(dsn, f"SELECT pg_drop_replication_slot('{slot}')")
        assert _rows(dsn, "SELECT count(*) FROM pg_stat_replication_slots WHERE slot_name LIKE 'st\\_%'") == [(0,)]
        return counted, reset_one, errors

    got, want = run(streaming_proxy.dsn()), run(ref.dsn())
    assert got[2] == want[2] == [
        '22023 replication slot "st_nosuch" does not exist',
        "42501 permission denied for function pg_stat_reset_replication_slot",
    ]

    def shape(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        # (name, spilled?, spills?, bytes?, streamed txns, blocks?, bytes?, decoded txns, bytes?, reset?)
        return [(r[0], r[1] > 0, r[2] > 0, r[3] > 0, r[4], r[5] > 0, r[6] > 0, r[7], r[8] > 0, r[9] is not None) for r in rows]

    # (Which (sub)transactions reach the disk depends on how memory is counted: PostgreSQL
    # spilled 15 of the 15 (sub)transactions with changes here, the proxy 12.)
    assert shape(got[0]) == shape(want[0]) == [
        ("st_a_streamed", False, False, False, 3, True, True, 4, True, False),  # (the rolled back one too)
        ("st_b_whole", True, True, True, 0, False, False, 3, True, False),
    ]
    assert shape(got[1]) == shape(want[1])
    assert shape(got[1])[0] == ("st_a_streamed", False, False, False, 0, False, False, 0, False, True)


def test_slot_statistics_outlive_a_clean_restart_and_not_a_crash() -> None:
    """As PostgreSQL's statistics: kept across a shutdown, forgotten after a crash (the
    slot itself stays)."""
    from tests.proxy import ProxyProcess

    def counts(p: ProxyProcess) -> list[tuple[Any, ...]]:
        return _rows(p.dsn(), "SELECT slot_name, total_txns FROM pg_stat_replication_slots")

    with ProxyProcess() as p:
        _run(p.dsn(), "CREATE TABLE st_r (a int)", "SELECT pg_create_logical_replication_slot('st_r', 'test_decoding')",
             "INSERT INTO st_r VALUES (1)", "INSERT INTO st_r VALUES (2)")  # fmt: skip
        _run(p.dsn(), "SELECT count(*) FROM pg_logical_slot_get_changes('st_r', NULL, NULL)")
        assert counts(p) == [("st_r", 2)]
        p.restart()
        assert counts(p) == [("st_r", 2)]
        p.kill()
        p.start()
        assert counts(p) == [("st_r", 0)]


def test_a_client_gone_mid_transaction_gets_it_again_whole(streaming_proxy: ProxyServer, ref: PgCluster) -> None:
    """A client that read and confirmed blocks of a transaction still open, then went away
    (pg_recvlogical stops at an end position inside it and confirms that far), gets the
    whole transaction again when it comes back, then its commit: nothing of it is lost for
    having been confirmed past its start, as with PostgreSQL."""
    options = ("-o", "proto_version=2", "-o", "streaming=on", "-o", "publication_names=st_pub")

    def run(dsn: str) -> tuple[list[Any], list[Any], int]:
        _publisher(dsn)
        recvlogical(dsn, "st_gone", "--create-slot", "-P", "pgoutput")
        try:
            with psycopg.connect(dsn) as open_tx:  # (a transaction left open meanwhile)
                for lo in range(3, 3000, 500):
                    open_tx.execute(_ins(lo, lo + 499))
                mid = str(_rows(dsn, "SELECT pg_current_wal_insert_lsn()")[0][0])
                # (a commit elsewhere flushes the log past the open transaction's records,
                # where PostgreSQL's WAL writer would take its time)
                _run(dsn, "DROP TABLE IF EXISTS st_flush", "CREATE TABLE st_flush (a int)")
                first = recvlogical(dsn, "st_gone", "--start", "-f", "-", f"--endpos={mid}", "--no-loop", *options)
                confirmed = _rows(dsn, "SELECT confirmed_flush_lsn >= %s::pg_lsn FROM pg_replication_slots WHERE slot_name = 'st_gone'".replace("%s", f"'{mid}'"))
                open_tx.execute(_ins(3003, 3500))
                open_tx.commit()
            end = str(_rows(dsn, "SELECT pg_current_wal_insert_lsn()")[0][0])
            second = recvlogical(dsn, "st_gone", "--start", "-f", "-", f"--endpos={end}", "--no-loop", *options)
        finally:
            _run(dsn, "SELECT pg_drop_replication_slot('st_gone')")
        assert confirmed == [(True,)]
        return pgoutput_messages(first), pgoutput_messages(second), len(_rows(dsn, "SELECT * FROM st_tab"))

    got, want = run(streaming_proxy.dsn()), run(ref.dsn())
    for first, second, rows in (got, want):
        kinds = _kinds(first)
        assert "StreamStart" in kinds and "StreamCommit" not in kinds  # (blocks of it, no end)
        # Again from its start: streamed from a first block, or whole (the proxy spills what
        # it read before the position it resumes from, as PostgreSQL does, and what came
        # after was under the limit here; PostgreSQL, counting tuples, streamed).
        starts = [m for m in second if type(m).__name__ == "StreamStart"]
        assert starts[0].first_segment if starts else _kinds(second)[0] == "Begin"
        assert [len(t) for t in _applied(second)] == [3498] and rows == 3500
    assert _applied(got[1]) == _applied(want[1])


def test_a_streamed_transaction_made_under_an_origin(streaming_proxy: ProxyServer, ref: PgCluster) -> None:
    """A big transaction written by a session with a replication origin set up: its first
    block starts with an Origin message (the origin's name, no LSN: pgoutput_stream_start);
    test_decoding's ``only-local`` leaves it out before it grows, so nothing of it is
    streamed (FilterByOrigin drops its changes as they are decoded), as in PostgreSQL."""
    script = [
        ["SELECT pg_replication_origin_session_setup('st_origin')", "BEGIN",
         _ins(3, 2000), "UPDATE st_tab SET b = 'u' WHERE a <= 500", "COMMIT",
         "SELECT pg_replication_origin_session_reset()"],
        ["INSERT INTO st_tab VALUES (-1, 'local')"],
    ]  # fmt: skip

    def with_origin(dsn: str, run: Callable[[], Any]) -> Any:
        _run(dsn, "SELECT pg_replication_origin_create('st_origin')")
        try:
            return run()
        finally:
            _run(dsn, "SELECT pg_replication_origin_drop('st_origin')")

    options = ("-o", "proto_version=2", "-o", "streaming=on")
    got, want = (with_origin(d, lambda d=d: _stream_of(d, script, *options)) for d in (streaming_proxy.dsn(), ref.dsn()))
    assert _applied(got) == _applied(want)
    for messages in (got, want):
        first = _kinds(messages).index("StreamStart")
        assert _kinds(messages)[first + 1] == "Origin" and messages[first + 1].name == "st_origin"
        assert messages[first + 1].origin_lsn == 0
        assert _kinds(messages).count("Origin") == 1  # (the later blocks carry none)

    for opts in [("-o", "only-local=1"), ()]:
        g, w = (
            _td_transactions(with_origin(d, lambda d=d, o=opts: _test_decoding_stream(d, script, *o))) for d in (streaming_proxy.dsn(), ref.dsn())
        )
        assert g == w
        assert [t[0] for t in g] == (["whole"] if opts else ["streamed", "whole"])


def test_statements_written_as_changesets_stream_by_their_rows(ref: PgCluster) -> None:
    """A statement whose rows went to a changeset (Parquet beside the log; here every
    statement past 4 kB) counts for its rows' decoded size, as PostgreSQL's reorder
    buffer counts the rows it holds: the scripts stream as on PostgreSQL, and what a
    subscriber applies of them is the same."""
    from decoding import records as R
    from walsender_proxy.lake import LakeSettings

    options = ("-o", "proto_version=2", "-o", "streaming=on")
    with ProxyServer(extra=dict(_STREAMING), lake_settings=LakeSettings(fsync=False, changeset_bytes=4096)) as bulk:
        dsn = bulk.dsn()
        _publisher(dsn)
        recvlogical(dsn, "st_slot", "--create-slot", "-P", "pgoutput")
        try:
            _write(dsn, _SCRIPT)
            end = str(_rows(dsn, "SELECT pg_current_wal_insert_lsn()")[0][0])
            log = bulk.lake.log  # (held from the slot's restart LSN on)
            kinds = {type(e.record) for e in log.reader(log.oldest_lsn).read(log.flushed_lsn)}
            assert R.Changeset in kinds
            out = recvlogical(dsn, "st_slot", "--start", "-f", "-", f"--endpos={end}", "--no-loop",
                              "-o", "publication_names=st_pub", *options)  # fmt: skip
        finally:
            _run(dsn, "SELECT pg_drop_replication_slot('st_slot')")
        got = pgoutput_messages(out)
    want = _stream_of(ref.dsn(), _SCRIPT, *options)
    assert _applied(got) == _applied(want)
    assert _kinds(got).count("StreamCommit") == _kinds(want).count("StreamCommit") == 3
