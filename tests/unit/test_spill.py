"""Pending and committed rows kept in files (walsender_proxy/lake/spill.py): a transaction's
big statements are read from their changesets, the rest spilled above ``spill_bytes``; the
memory tail reads them from there until the fold streams them into a delta file. Every test
runs against the in-memory path as the reference, with tiny thresholds so each statement
goes to a file."""

from __future__ import annotations

import fcntl
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from walsender_proxy.lake import Isolation, Lake, LakeError, LakeSettings, Sql
from walsender_proxy.lake.spill import FileRows

MEMORY = LakeSettings(fsync=False, background=False, changeset_bytes=1 << 40, spill_bytes=1 << 40)
#: Every statement is logged as a changeset, and read from it.
CHANGESET = replace(MEMORY, changeset_bytes=1)
#: Statements stay inline in the log; every one is spilled to a file right away.
SPILLED = replace(MEMORY, spill_bytes=1)
MODES = {"changeset": CHANGESET, "spill": SPILLED}


@pytest.fixture(params=list(MODES))
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


def open_lake(path: Path, settings: LakeSettings) -> Lake:
    lake = Lake(path, settings)
    if "t" not in {t.name for t in lake.catalog.tables.values()}:
        with lake.begin() as tx:
            tx.create_table(
                "t", [("id", "bigint"), ("v", "text"), ("n", "int")], primary_key=["id"]
            )
    return lake


@pytest.fixture
def lake(tmp_path: Path, mode: str):
    with open_lake(tmp_path / "d", MODES[mode]) as lk:
        yield lk


def batch(lo: int, hi: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(lo, hi), pa.int64()),
            "v": pa.array([f"v{i}" for i in range(lo, hi)]),
            "n": pa.array([i % 7 for i in range(lo, hi)], pa.int32()),
        }
    )


def rows(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda r: r["id"])


def sqlstate(fn, *a, **kw) -> str:
    with pytest.raises(LakeError) as ei:
        fn(*a, **kw)
    return ei.value.sqlstate


def spill_files(lake: Lake) -> list[Path]:
    return sorted(lake.spill.path.glob("*.parquet"))


def in_files(tx) -> bool:
    return bool(tx._pending) and all(isinstance(p.rows, FileRows) for p in tx._pending)


def crash(lake: Lake) -> None:
    """Drop the lake without closing it (no fold): the next open replays the log."""
    lake.log.flush()
    lake.log.close()
    lake.store.close()
    fcntl.flock(lake._lockfile, fcntl.LOCK_UN)
    lake._closed = True


def workload(lake: Lake) -> list[int]:
    """Inserts, updates, deletes over several transactions; returns the CSNs after each."""
    csns = []
    with lake.begin() as tx:
        tx.insert("t", batch(0, 300))
        tx.insert("t", batch(300, 600))
        tx.update("t", {"v": Sql("v || '!'"), "n": 99}, "id % 5 = 0")
    csns.append(lake.frontier)
    with lake.begin() as tx:
        tx.delete("t", "id % 3 = 0")
        tx.insert("t", batch(1000, 1100))
        tx.update("t", {"id": Sql("id + 5000")}, "id >= 1090")
    csns.append(lake.frontier)
    return csns


# -- reading one's own writes ------------------------------------------------------------


def test_own_reads_updates_and_deletes_see_rows_in_files(lake: Lake) -> None:
    tx = lake.begin()
    tx.insert("t", batch(0, 100))
    tx.insert("t", batch(100, 200))
    assert in_files(tx)
    assert tx.read("t").num_rows == 200
    assert tx.read("t", "id BETWEEN 95 AND 104").num_rows == 10
    assert tx.update("t", {"v": "x"}, "id % 10 = 0") == 20  # rows of both statements
    assert tx.delete("t", "id >= 190") == 10
    assert in_files(tx)
    got = rows(tx.read("t"))
    assert len(got) == 190
    assert got[0] == {"id": 0, "v": "x", "n": 0} and got[1] == {"id": 1, "v": "v1", "n": 1}
    assert lake.read("t").num_rows == 0  # nobody else sees them
    before = lake.frontier
    tx.commit()
    assert lake.read("t", before).num_rows == 0
    assert rows(lake.read("t")) == got


def test_insert_returning_tail_and_own_rows(lake: Lake) -> None:
    tx = lake.begin()
    tx.insert("t", batch(0, 50))
    tx.insert("t", batch(50, 80))
    tail = tx.own_tail(tx.table("t").oid, 30)
    assert tail.column("id").to_pylist() == list(range(50, 80))
    own = tx.own_rows(tx.table("t").oid)
    assert own is not None and own.num_rows == 80
    tx.abort()


def test_many_small_statements_spill_into_few_files(tmp_path: Path) -> None:
    with open_lake(tmp_path, replace(MEMORY, spill_bytes=4096)) as lake:
        tx = lake.begin()
        for i in range(60):
            tx.insert("t", [{"id": i, "v": f"r{i}"}])
            assert tx.own_tail(tx.table("t").oid, 1).column("id").to_pylist() == [i]
        tx.update("t", {"n": 1}, "id < 30")
        files = spill_files(lake)
        assert 0 < len(files) < 20
        assert tx.read("t", "n = 1").num_rows == 30
        assert sqlstate(tx.insert, "t", [{"id": 59}]) == "23505"
        tx.rollback()  # (the failed statement ends the transaction's use)
        assert spill_files(lake) == []


def test_a_statement_section_spills_after_it_not_inside_it(tmp_path: Path) -> None:
    """The SQL layer's single-row statements run in one section of the statement lock;
    the Parquet write of a due spill waits for the section's end (other sessions are not
    held up by it), and the rows are the same either way."""
    with open_lake(tmp_path, replace(MEMORY, spill_bytes=1)) as lake:
        tx = lake.begin()
        for i in range(20):
            with tx.statement_section():
                tx.apply_insert("t", pa.table({"id": [i], "v": [f"r{i}"]}))
                inside = len(spill_files(lake))
            assert len(spill_files(lake)) > inside  # spilled once the section ended
        assert not lake._dml_lock._is_owned()
        tx.commit()
        assert sorted(r["id"] for r in lake.read("t").to_pylist()) == list(range(20))


# -- other transactions: 23505 and 40001 -------------------------------------------------


def test_unique_checks_see_other_transactions_rows_in_files(lake: Lake) -> None:
    a = lake.begin()
    a.insert("t", batch(0, 100))
    assert in_files(a)
    b = lake.begin()
    assert sqlstate(b.insert, "t", [{"id": 42}]) == "23505"  # a's pending row
    b.rollback()
    c = lake.begin()
    assert sqlstate(c.insert, "t", batch(95, 105)) == "23505"  # a big statement too
    c.rollback()
    assert sqlstate(a.insert, "t", [{"id": 7}]) == "23505"  # and a's own check
    a.rollback()
    with lake.begin() as d:
        d.insert("t", [{"id": 42}])  # a rolled back: free again


def test_first_updater_wins_with_rows_in_files(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", batch(0, 100))
    a = lake.begin()
    assert a.update("t", {"n": 1}, "id < 50") == 50
    assert in_files(a)
    b = lake.begin()
    assert sqlstate(b.update, "t", {"n": 2}, {"id": 10}) == "40001"
    b.rollback()
    rr = lake.begin(Isolation.REPEATABLE_READ)
    rr.read("t")
    a.commit()  # the committed update is in a file; its rids are in the version map
    assert sqlstate(rr.update, "t", {"n": 3}, {"id": 10}) == "40001"
    rr.rollback()
    with lake.begin() as c:  # a fresh snapshot may
        assert c.update("t", {"n": 3}, {"id": 10}) == 1


def test_committed_rows_in_files_answer_write_conflict_checks_from_the_files(
    tmp_path: Path, mode: str
) -> None:
    """A snapshot older than the version map goes to ``changes_after`` (memory tail in
    files, then delta files)."""
    with open_lake(tmp_path / "d", MODES[mode]) as lake:
        with lake.begin() as tx:
            tx.insert("t", batch(0, 100))
        rr = lake.begin(Isolation.REPEATABLE_READ)
        rr.read("t")
        with lake.begin() as tx:
            tx.update("t", {"n": 5}, "id < 10")
        lake._points.base = lake.frontier + 1  # forget: force the files' answer
        assert sqlstate(rr.update, "t", {"n": 6}, {"id": 3}) == "40001"
        rr.rollback()


# -- savepoints, aborts ------------------------------------------------------------------


def test_rollback_to_savepoint_drops_the_parts_and_their_files(lake: Lake) -> None:
    tx = lake.begin()
    tx.insert("t", batch(0, 10))
    tx.savepoint("s")
    tx.insert("t", batch(10, 20))
    tx.update("t", {"v": "gone"}, "id < 5")
    kept = spill_files(lake)
    tx.rollback_to("s")
    assert rows(tx.read("t")) == rows(batch(0, 10))
    if lake.settings is SPILLED:
        assert len(spill_files(lake)) == 1 < len(kept)
    tx.insert("t", batch(10, 12))  # the savepoint stays usable
    tx.commit()
    assert rows(lake.read("t")) == rows(batch(0, 12))


def test_abort_leaves_no_files(lake: Lake) -> None:
    tx = lake.begin()
    tx.insert("t", batch(0, 100))
    tx.delete("t", "id < 10")
    assert in_files(tx)
    tx.abort()
    assert spill_files(lake) == []
    assert lake.read("t").num_rows == 0


def test_leftover_spill_files_are_removed_on_start(tmp_path: Path) -> None:
    lake = open_lake(tmp_path, SPILLED)
    tx = lake.begin()
    tx.insert("t", batch(0, 10))
    assert spill_files(lake)
    crash(lake)
    with Lake(tmp_path, SPILLED) as again:
        assert spill_files(again) == []
        assert again.read("t").num_rows == 0


# -- commit, snapshots, fold -------------------------------------------------------------


def test_snapshots_before_and_after_the_commit_and_the_fold(lake: Lake) -> None:
    before = lake.frontier
    tx = lake.begin()
    tx.insert("t", batch(0, 100))
    tx.insert("t", batch(100, 150))
    info = tx.commit()
    chunk = lake.store._mem[tx.table("t").oid][0]
    assert chunk.files and chunk.rows is None
    assert lake.read("t", before).num_rows == 0
    assert lake.read("t", info.csn).num_rows == 150
    assert lake.read("t", info.csn, where="id = 120").num_rows == 1
    lake.fold()
    assert not lake.store._mem
    assert lake.read("t", before).num_rows == 0
    assert rows(lake.read("t", info.csn)) == rows(
        pa.concat_tables([batch(0, 100), batch(100, 150)])
    )
    lake._empty_trash(force=True)
    assert spill_files(lake) == []


def versions(t: pa.Table) -> dict[tuple[int, int], list[dict]]:
    """Delta rows by (CSN, rid), each rid's versions in ``_seq`` order without the number:
    the order DuckDB returns a statement's target rows in (hence their ``_seq``) is not
    fixed, the order of one row's versions is."""
    out: dict[tuple[int, int], list[dict]] = {}
    for r in t.sort_by([("_csn", "ascending"), ("_seq", "ascending")]).to_pylist():
        out.setdefault((r["_csn"], r["_rid"]), []).append(
            {k: v for k, v in r.items() if k != "_seq"}
        )
    return out


def delta_file(lake: Lake) -> pa.Table:
    relid = lake.catalog.resolve_table("t").oid
    files = lake.store._files[relid].deltas
    t = pa.concat_tables(
        [pq.read_table(lake.store.path_of(f)) for f in files], promote_options="default"
    )
    return t.sort_by([("_csn", "ascending"), ("_seq", "ascending")])


def test_fold_writes_what_the_in_memory_path_writes(tmp_path: Path, mode: str) -> None:
    with open_lake(tmp_path / "m", MEMORY) as ref, open_lake(tmp_path / "f", MODES[mode]) as lake:
        csns = workload(ref)
        assert workload(lake) == csns
        ref.fold()
        lake.fold()
        want, got = delta_file(ref), delta_file(lake)
        assert got.schema.names == want.schema.names
        assert versions(got) == versions(want)
        # The same rows; in more files, as each big statement's part is copied on its own.
        assert sum(
            f.rows for f in lake.store._files[lake.catalog.resolve_table("t").oid].deltas
        ) == sum(f.rows for f in ref.store._files[ref.catalog.resolve_table("t").oid].deltas)
        for csn in csns:  # and reads agree, before and after checkpoints
            assert rows(lake.read("t", csn)) == rows(ref.read("t", csn))
        lake.checkpoint(force=True)
        ref.checkpoint(force=True)
        assert rows(lake.read("t")) == rows(ref.read("t"))


def test_mixed_schemas_fold_with_nulls(tmp_path: Path, mode: str) -> None:
    with open_lake(tmp_path / "m", MEMORY) as ref, open_lake(tmp_path / "f", MODES[mode]) as lake:
        for lk in (ref, lake):
            with lk.begin() as tx:
                tx.insert("t", batch(0, 20))
                tx.add_column("t", "extra", "text")
                tx.insert("t", [{"id": 100 + i, "extra": f"e{i}"} for i in range(5)])
                tx.drop_column("t", "n")
                tx.insert("t", [{"id": 200, "v": "last", "extra": "z"}])
                assert tx.read("t").num_rows == 26
            lk.fold()
        want, got = delta_file(ref), delta_file(lake)
        assert versions(got) == versions(want)
        # Names and types; not nullability: DuckDB writes the folded file and marks columns
        # it knows are never null there (the meta columns) as required.
        assert [(f.name, f.type) for f in got.schema] == [(f.name, f.type) for f in want.schema]
        assert rows(lake.read("t")) == rows(ref.read("t"))
        assert {r["id"]: r["extra"] for r in lake.read("t").to_pylist()}[101] == "e1"


def test_fresh_inserts_checkpoint_and_read_without_merging(tmp_path: Path) -> None:
    with open_lake(tmp_path / "m", MEMORY) as ref, open_lake(tmp_path / "f", CHANGESET) as lake:
        for lk in (ref, lake):
            for lo in (0, 500):
                with lk.begin() as tx:
                    tx.insert("t", batch(lo, lo + 500))
            lk.fold()
        relid = lake.catalog.resolve_table("t").oid
        assert all(f.fresh for f in lake.store._files[relid].deltas)
        q = lake.store.snapshot_query(lake.catalog.tables[relid], lake.frontier)
        assert "row_number" not in q.sql  # the union path
        assert rows(lake.read("t")) == rows(ref.read("t"))
        with lake.begin() as tx:  # an update makes the next fold's file not fresh
            tx.update("t", {"n": -1}, "id = 3")
        lake.fold()
        assert not lake.store._files[relid].deltas[-1].fresh
        assert lake.checkpoint(force=True) == [relid]
        got = rows(lake.read("t"))
        assert len(got) == 1000 and got[3]["n"] == -1
        ck = lake.store._files[relid].checkpoints[-1][1]
        ids = pq.read_table(lake.store.path_of(ck), columns=["id"]).column("id").to_pylist()
        assert ids == sorted(ids)


@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_a_checkpoint_of_bulk_inserts_is_in_key_order(tmp_path: Path, order: str) -> None:
    """Rows that only big INSERTs wrote are checkpointed as read when they are already in key
    order (no sort: a bulk load of ascending keys), and sorted when they are not; either way
    the checkpoint is in key order, so point lookups prune its row groups."""
    with open_lake(tmp_path / "f", CHANGESET) as lake:
        for lo in (0, 2000, 4000) if order == "ascending" else (4000, 2000, 0):
            data = batch(lo, lo + 2000)
            if order == "descending":
                data = data.take(pa.array(range(1999, -1, -1)))
            with lake.begin() as tx:
                tx.insert("t", data)
        relid = lake.catalog.resolve_table("t").oid
        assert lake.checkpoint(force=True) == [relid]
        assert all(f.fresh for f in lake.store._files[relid].deltas)
        ck = lake.store._files[relid].checkpoints[-1][1]
        ids = pq.read_table(lake.store.path_of(ck), columns=["id"]).column("id").to_pylist()
        assert ids == list(range(6000))
        assert rows(lake.read("t")) == rows(pa.concat_tables([batch(0, 6000)]))


# -- restart ------------------------------------------------------------------------------


def test_restart_replays_committed_rows_from_the_log(tmp_path: Path, mode: str) -> None:
    lake = open_lake(tmp_path, MODES[mode])
    csns = workload(lake)
    want = [rows(lake.read("t", c)) for c in csns]
    open_tx = lake.begin()
    open_tx.insert("t", batch(7000, 7010))  # in progress at the crash: never committed
    crash(lake)
    with Lake(tmp_path, MODES[mode]) as again:
        relid = again.catalog.resolve_table("t").oid
        # Replayed by reference (changesets) or spilled again: not held in memory.
        assert all(c.files for c in again.store._mem[relid])
        assert all(c.rows is None for c in again.store._mem[relid][:1])
        assert [rows(again.read("t", c)) for c in csns] == want
        with again.begin() as tx:  # the next rids do not collide with replayed ones
            tx.insert("t", batch(8000, 8010))
        again.fold()
        again._empty_trash(force=True)
        assert spill_files(again) == []  # (the open transaction's went at replay)
        assert [rows(again.read("t", c)) for c in csns] == want
        assert again.read("t").num_rows == len(want[-1]) + 10
    with Lake(tmp_path, MODES[mode]) as third:
        assert third.read("t").num_rows == len(want[-1]) + 10


def test_prepared_transaction_with_rows_in_files_survives_restart(
    tmp_path: Path, mode: str
) -> None:
    with open_lake(tmp_path, MODES[mode]) as lake:
        with lake.begin() as tx:
            tx.insert("t", batch(0, 10))
        tx = lake.begin()
        tx.update("t", {"n": 0}, "id < 5")
        tx.insert("t", batch(10, 20))
        tx.prepare("g")
    with Lake(tmp_path, MODES[mode]) as lake:
        other = lake.begin()
        assert sqlstate(other.update, "t", {"n": 1}, {"id": 2}) == "40001"  # still locked
        other.rollback()
        lake.commit_prepared("g")
        got = rows(lake.read("t"))
        assert len(got) == 20 and got[2]["n"] == 0


def test_a_replayed_insert_stays_fresh(tmp_path: Path) -> None:
    """Replayed from its changeset by reference, with its rid range from the file's
    statistics: the fold's file is fresh, so reads and checkpoints need no merge."""
    lake = open_lake(tmp_path, CHANGESET)
    with lake.begin() as tx:
        tx.insert("t", batch(0, 300))
    want = rows(lake.read("t"))
    crash(lake)
    with Lake(tmp_path, CHANGESET) as again:
        relid = again.catalog.resolve_table("t").oid
        (chunk,) = again.store._mem[relid]
        assert chunk.fresh and chunk.files[0].rid_range == (1, 300)
        again.fold()
        assert again.store._files[relid].deltas[-1].fresh
        assert rows(again.read("t")) == want
        with again.begin() as tx:
            tx.insert("t", batch(300, 310))
        assert again.read("t").num_rows == 310


def test_file_row_number_column_stays_in_memory(tmp_path: Path) -> None:
    """A column named like DuckDB's row-position column cannot be read by reference."""
    with Lake(tmp_path, CHANGESET) as lake:
        with lake.begin() as tx:
            tx.create_table("w", [("id", "int"), ("file_row_number", "int")], primary_key=["id"])
        with lake.begin() as tx:
            tx.insert("w", [{"id": i, "file_row_number": -i} for i in range(5)])
            assert not in_files(tx)
        assert sorted(r["file_row_number"] for r in lake.read("w").to_pylist()) == [
            -4,
            -3,
            -2,
            -1,
            0,
        ]


@pytest.mark.parametrize("mode", list(MODES))
def test_sql_over_the_wire_with_rows_in_files(tmp_path: Path, mode: str) -> None:
    """The SQL layer embeds the snapshot query (read_parquet of the parts) in its own."""
    import psycopg

    from tests.proxy import ProxyServer

    gen = "INSERT INTO t SELECT i, 'v' || i, i % 7 FROM generate_series({}, {}) AS g(i)"
    with ProxyServer(tmp_path, lake_settings=MODES[mode]) as px, psycopg.connect(px.dsn()) as c:
        c.execute("CREATE TABLE t (id bigint PRIMARY KEY, v text, n int)")
        c.commit()
        c.execute(gen.format(1, 1000))
        c.execute(gen.format(1001, 2000))
        assert c.execute("SELECT count(*), sum(id) FROM t").fetchone() == (2000, 2001000)
        got = c.execute(gen.format(2001, 2003) + " RETURNING id").fetchall()
        assert got == [(2001,), (2002,), (2003,)]
        c.execute("SAVEPOINT s")
        assert c.execute("UPDATE t SET n = -1 WHERE id % 100 = 0").rowcount == 20
        assert c.execute("DELETE FROM t WHERE id > 1990").rowcount == 13
        c.execute("ROLLBACK TO SAVEPOINT s")
        assert c.execute("DELETE FROM t WHERE id <= 10").rowcount == 10
        # c's pending row, in a file, holds the key for everyone else.
        with psycopg.connect(px.dsn()) as other, pytest.raises(psycopg.errors.UniqueViolation):
            other.execute("INSERT INTO t VALUES (1500, 'x', 0)")
        c.commit()
        assert c.execute("SELECT count(*), min(id), max(n) FROM t").fetchone() == (1993, 11, 6)
        assert px.lake is not None
        px.lake.fold()
        px.lake._empty_trash(force=True)
        assert spill_files(px.lake) == []
        assert c.execute("SELECT count(*) FROM t WHERE n = -1").fetchone() == (0,)
