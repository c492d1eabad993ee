"""An INSERT … SELECT's rows streamed into the lake (Transaction.apply_insert_batches): a
statement past ``changeset_bytes / 4`` goes to its changeset file batch by batch instead of
being held whole. It must behave exactly as the one-table insert does: atomic, checked
(keys across batches, NOT NULL in any batch), logged as one Changeset, replayed on restart,
and read by the SQL layer and the decoder like any big statement."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from decoding import records as R
from tests.lakeutil import MakeLake
from walsender_proxy.lake import Lake, LakeError, LakeSettings
from walsender_proxy.lake.spill import FileRows

from .test_spill import crash

#: Batches of 100 rows are ~3 kB: a statement of two or more streams to its changeset.
SETTINGS = LakeSettings(fsync=True, background=False, changeset_bytes=16_000, spill_bytes=1 << 40)


def batches(lo: int, hi: int, step: int = 100, *, null_at: int | None = None) -> Iterator[pa.Table]:
    for a in range(lo, hi, step):
        ids = list(range(a, min(hi, a + step)))
        yield pa.table(
            {
                "id": pa.array(ids, pa.int64()),
                "v": pa.array([None if i == null_at else f"v{i}" for i in ids]),
                "n": pa.array([i % 7 for i in ids], pa.int32()),
            }
        )


@pytest.fixture
def lake(make_lake: MakeLake) -> Lake:
    return make_lake(SETTINGS, columns=[("id", "bigint"), ("v", "text", True), ("n", "int")])


def changesets(lake: Lake) -> list[R.Changeset]:
    return [e.record for e in lake.log.read() if isinstance(e.record, R.Changeset)]


def leftovers(lake: Lake) -> list[Path]:
    return sorted(lake.changesets.glob("*.tmp"))


def sqlstate(fn, *a) -> str:
    with pytest.raises(LakeError) as ei:
        fn(*a)
    return ei.value.sqlstate


def test_a_big_statement_is_one_changeset_read_and_replayed_like_any_other(
    tmp_path: Path, lake: Lake
) -> None:
    with lake.begin() as tx:
        assert tx.apply_insert_batches("t", batches(0, 5000)) == 5000
        (part,) = tx._pending
        assert isinstance(part.rows, FileRows)  # never an in-memory table
        own = tx.read("t")
        assert own.num_rows == 5000 and sorted(own.column("id").to_pylist()) == list(range(5000))
    (cs,) = changesets(lake)
    assert cs.rows == 5000 and cs.op == "I" and leftovers(lake) == []
    got = lake.read("t").sort_by("id")
    assert got.column("v").to_pylist() == [f"v{i}" for i in range(5000)]
    crash(lake)  # the next open replays the statement from its changeset
    with Lake(tmp_path / "d", SETTINGS) as again:
        assert again.read("t").num_rows == 5000
        with again.begin() as tx:
            tx.insert("t", [{"id": 5000, "v": "x", "n": 1}])
        assert again.read("t").num_rows == 5001


def test_a_small_statement_stays_in_memory(lake: Lake) -> None:
    with lake.begin() as tx:
        assert tx.apply_insert_batches("t", batches(0, 100)) == 100
        assert isinstance(tx._pending[0].rows, pa.Table)
        assert tx.apply_insert_batches("t", iter(())) == 0
    assert changesets(lake) == [] and lake.read("t").num_rows == 100


def test_a_key_repeated_in_a_later_batch_fails_the_whole_statement(lake: Lake) -> None:
    tx = lake.begin()
    dup = pa.table(
        {"id": pa.array([3], pa.int64()), "v": ["again"], "n": pa.array([0], pa.int32())}
    )
    assert sqlstate(tx.apply_insert_batches, "t", [*batches(0, 1000), dup]) == "23505"
    assert sqlstate(tx.read, "t") == "25P02"  # the transaction is failed, as in PostgreSQL
    tx.abort()
    assert lake.read("t").num_rows == 0 and leftovers(lake) == [] and changesets(lake) == []


def test_keys_already_committed_or_pending_elsewhere_are_refused(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", [{"id": 4321, "v": "old", "n": 0}])
    with lake.begin() as tx:
        assert sqlstate(tx.apply_insert_batches, "t", batches(0, 5000)) == "23505"
        tx.abort()
    other = lake.begin()
    other.insert("t", [{"id": 9000, "v": "theirs", "n": 0}])
    with lake.begin() as tx:
        assert sqlstate(tx.apply_insert_batches, "t", batches(5000, 10_000)) == "23505"
        tx.abort()
    other.commit()
    assert sorted(lake.read("t").column("id").to_pylist()) == [4321, 9000]
    assert leftovers(lake) == []


def detail(fn, *a) -> str:
    with pytest.raises(LakeError) as ei:
        fn(*a)
    assert ei.value.sqlstate == "23505"
    return str(ei.value.detail)


def test_a_big_insert_is_checked_within_its_keys_range_ends_included(lake: Lake) -> None:
    """A single integer key: duplicates among the new keys found by a sort, the other rows
    read only within the new keys' range (row groups outside it skipped)."""
    with lake.begin() as tx:  # committed rows 0..4999, in the changeset's file
        tx.apply_insert_batches("t", batches(0, 5000))
    dup = pa.table(
        {"id": pa.array([-7], pa.int64()), "v": ["again"], "n": pa.array([0], pa.int32())}
    )
    with lake.begin() as tx:
        assert (
            detail(tx.apply_insert_batches, "t", [*batches(-1000, 0), dup])
            == "Key (id)=(-7) already exists."
        )
        tx.abort()
    for lo, hi, hit in ((4999, 6000, 4999), (-1000, 1, 0)):  # one shared key, at either end
        with lake.begin() as tx:
            assert (
                detail(tx.apply_insert_batches, "t", batches(lo, hi))
                == f"Key (id)=({hit}) already exists."
            )
            tx.abort()
    other = lake.begin()  # pending rows of another transaction, in their file
    other.apply_insert_batches("t", batches(10_000, 12_000))
    with lake.begin() as tx:
        assert (
            detail(tx.apply_insert_batches, "t", batches(11_999, 13_000))
            == "Key (id)=(11999) already exists."
        )
        tx.abort()
    other.abort()
    with lake.begin() as tx:  # right beside both ends: no conflict
        assert tx.apply_insert_batches("t", batches(5000, 6000)) == 1000
        assert tx.apply_insert_batches("t", batches(-1000, 0)) == 1000
    assert lake.read("t").num_rows == 7000


def test_a_null_in_a_later_batch_fails_the_statement(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.create_table(
            "nn", [("id", "bigint"), ("v", "text", True), ("n", "int")], primary_key=["id"]
        )
    with lake.begin() as tx:
        assert sqlstate(tx.apply_insert_batches, "nn", batches(0, 3000, null_at=2500)) == "23502"
        tx.abort()
    assert lake.read("nn").num_rows == 0 and leftovers(lake) == []


def test_rollback_to_a_savepoint_drops_a_streamed_statement(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.apply_insert_batches("t", batches(0, 2000))
        tx.savepoint("s")
        tx.apply_insert_batches("t", batches(2000, 6000))
        assert tx.read("t").num_rows == 6000
        tx.rollback_to("s")
        assert tx.read("t").num_rows == 2000
        tx.apply_insert_batches("t", batches(2000, 3000))  # the keys are free again
    assert lake.read("t").num_rows == 3000


def test_the_decoder_sends_every_row_in_order(lake: Lake) -> None:
    from decoding.pgoutput import Insert, decode_message
    from decoding.pgoutput.options import PgOutputOptions
    from decoding.pgoutput.plugin import PgOutput
    from decoding.reorder import committed_after

    with lake.begin() as tx:
        tx.create_publication("p", tables=["t"])
    start, csn = lake.log.insert_lsn, lake.frontier
    with lake.begin() as tx:
        tx.apply_insert_batches("t", batches(0, 4000))
    (txn,) = committed_after(lake.log.read(start), start, csn)
    options = PgOutputOptions.parse([("proto_version", "1"), ("publication_names", "p")], 150000)
    plugin = PgOutput(options, lake.catalog_at, lake.changesets)
    inserts = [m for m in map(decode_message, plugin.transaction(txn)) if isinstance(m, Insert)]
    assert [int(m.new.values[0]) for m in inserts] == list(range(4000))
    assert inserts[7].new.values[1:] == (b"v7", b"0")


def test_sql_insert_select_streams_and_stays_atomic(tmp_path: Path) -> None:
    """Over the wire: INSERT … SELECT (from generate_series, and from the target table itself,
    which must read the statement's snapshot only), and an error raised by DuckDB in a later
    batch (division by zero), which leaves nothing behind."""
    import psycopg

    from tests.proxy import ProxyServer

    gen = "INSERT INTO t SELECT i, 'v' || i, i % 7 FROM generate_series({}, {}) AS g(i)"
    with ProxyServer(tmp_path / "p", lake_settings=SETTINGS) as px, psycopg.connect(px.dsn()) as c:
        c.execute("CREATE TABLE t (id bigint PRIMARY KEY, v text, n int)")
        c.commit()
        assert c.execute(gen.format(1, 300_000)).rowcount == 300_000
        assert c.execute("INSERT INTO t SELECT id + 300000, v, n FROM t").rowcount == 300_000
        assert c.execute("SELECT count(*), sum(id) FROM t").fetchone() == (600_000, 180_000_300_000)
        c.commit()
        assert px.lake is not None
        assert len(changesets(px.lake)) == 2
        with pytest.raises(psycopg.errors.DivisionByZero):
            c.execute(
                "INSERT INTO t SELECT i, 'x', (1 / (i - 900000))::int FROM generate_series(600001, 1000000) AS g(i)"
            )
        c.rollback()
        with pytest.raises(psycopg.errors.UniqueViolation):
            c.execute(gen.format(600_001, 900_000) + " UNION ALL SELECT 5, 'dup', 0")
        c.rollback()
        assert c.execute("SELECT count(*) FROM t").fetchone() == (600_000,)
        assert leftovers(px.lake) == []


def test_a_refused_insert_select_leaves_the_connection_usable(tmp_path: Path) -> None:
    """The statement's DuckDB result is closed when the lake refuses a batch (a key taken,
    text that is no number): the session's next statement runs (it got XX000 "connection
    has an open result" when the result was left open)."""
    import psycopg

    from tests.proxy import ProxyServer

    with (
        ProxyServer(tmp_path / "p", lake_settings=SETTINGS) as px,
        psycopg.connect(px.dsn(), autocommit=True) as c,
    ):
        c.execute("CREATE TABLE t (id bigint PRIMARY KEY, v text, n numeric)")
        c.execute("INSERT INTO t VALUES (1, 'one', 1)")
        for bad, state in (
            ("INSERT INTO t SELECT i, 'v', 0 FROM generate_series(1, 200000) AS g(i)", "23505"),
            ("INSERT INTO t VALUES (2, 'two', '1.2.3')", "22P02"),
        ):
            with pytest.raises(psycopg.Error) as ei:
                c.execute(bad)
            assert ei.value.sqlstate == state
            assert c.execute("SELECT count(*) FROM t").fetchone() == (1,)


def test_a_cancelled_insert_select_leaves_nothing_behind(tmp_path: Path) -> None:
    """A cancel request (57014) in the middle of a streamed statement: its changeset file
    is removed, no record names it, the table is as before and the session goes on."""
    import threading
    import time

    import psycopg

    from tests.proxy import ProxyServer

    with (
        ProxyServer(tmp_path / "p", lake_settings=SETTINGS) as px,
        psycopg.connect(px.dsn(), autocommit=True) as c,
    ):
        c.execute("CREATE TABLE t (id bigint PRIMARY KEY, v text, n int)")
        c.execute("INSERT INTO t VALUES (0, 'zero', 0)")
        errors: list[BaseException] = []

        def big() -> None:
            try:
                c.execute(
                    "INSERT INTO t SELECT i, 'v' || i, i % 7 FROM generate_series(1, 200000000) AS g(i)"
                )
            except BaseException as e:
                errors.append(e)

        th = threading.Thread(target=big)
        th.start()
        assert px.lake is not None
        deadline = time.monotonic() + 30
        while not leftovers(px.lake) and time.monotonic() < deadline:
            time.sleep(0.02)  # until rows are being streamed to the changeset file
        assert leftovers(px.lake), "the statement never started its changeset"
        c.cancel_safe(timeout=10)
        th.join(60)
        assert not th.is_alive()
        assert errors and isinstance(errors[0], psycopg.errors.QueryCanceled), errors
        assert errors[0].sqlstate == "57014"
        assert leftovers(px.lake) == []
        assert changesets(px.lake) == []
        assert c.execute("SELECT count(*), sum(id) FROM t").fetchone() == (1, 0)
        c.execute("INSERT INTO t SELECT i, 'w', 1 FROM generate_series(1, 1000) AS g(i)")
        assert c.execute("SELECT count(*) FROM t").fetchone() == (1001,)
