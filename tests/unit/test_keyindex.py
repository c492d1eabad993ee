"""The in-memory key index, version map and row cache (walsender_proxy/lake/keyindex.py):
every answer they give must be the one the DuckDB path gives, and they must step aside
whenever they cannot be sure. Each scenario runs with the index on and with it off (limit 0),
so the two paths are checked against each other."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest

from decoding import records as R
from decoding.changelog import ChangeLog
from tests.lakeutil import T_COLUMNS, MakeLake
from walsender_proxy.lake import Isolation, Lake, LakeError, LakeSettings, Sql

FAST = LakeSettings(fsync=False, background=False)
SETTINGS = {"index": FAST, "no-index": replace(FAST, key_index_rows=0, row_cache_rows=0)}


@pytest.fixture(params=sorted(SETTINGS))
def settings(request: pytest.FixtureRequest) -> LakeSettings:
    return SETTINGS[request.param]


@pytest.fixture
def lake(make_lake: MakeLake, settings: LakeSettings) -> Lake:
    return make_lake(settings, columns=T_COLUMNS)


def err(fn, *a, **kw) -> LakeError:
    with pytest.raises(LakeError) as ei:
        fn(*a, **kw)
    return ei.value


def ids(lake: Lake, table: str = "t") -> list[int]:
    return sorted(r["id"] for r in lake.read(table).to_pylist())


def indexed(lake: Lake) -> bool:
    return lake.settings.key_index_rows > 0


def test_committed_key_is_refused_with_postgresqls_message(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "v": "a"}])
    e = err(lake.begin().insert, "t", [{"id": 1, "v": "b"}])
    assert (e.sqlstate, e.message, e.detail) == (
        "23505",
        'duplicate key value violates unique constraint "t_pkey"',
        "Key (id)=(1) already exists.",
    )
    assert err(lake.begin().insert, "t", [{"id": 9}, {"id": 9}]).sqlstate == "23505"
    if indexed(lake):
        assert lake._points.keys  # the check above went through the index


def test_pending_keys_of_open_transactions_block_until_they_end(lake: Lake) -> None:
    a = lake.begin()
    a.insert("t", [{"id": 1}])
    b = lake.begin()
    assert err(b.insert, "t", [{"id": 1}]).detail == "Key (id)=(1) already exists."
    b.rollback()
    a.rollback()  # its key is free again
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1}])
    c = lake.begin()
    c.insert("t", [{"id": 2}])
    c.commit()
    assert ids(lake) == [1, 2]


def test_rollback_to_savepoint_frees_pending_keys(lake: Lake) -> None:
    a = lake.begin()
    a.insert("t", [{"id": 1}])
    a.savepoint("s")
    a.insert("t", [{"id": 2}])
    assert err(lake.begin().insert, "t", [{"id": 2}]).sqlstate == "23505"
    a.rollback_to("s")
    with lake.begin() as other:  # 2 is free for others now, 1 is not
        other.insert("t", [{"id": 2}])
    assert err(lake.begin().insert, "t", [{"id": 1}]).sqlstate == "23505"
    assert err(a.insert, "t", [{"id": 2}]).sqlstate == "23505"  # committed by the other
    a.rollback_to("s")
    a.insert("t", [{"id": 3}])
    a.savepoint("s2")
    a.insert("t", [{"id": 4}])
    a.rollback_to("s2")
    a.insert("t", [{"id": 4}])  # its own rolled-back key is free to it again
    a.commit()
    assert ids(lake) == [1, 2, 3, 4]


def test_key_update_moves_the_key(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "v": "one"}, {"id": 2, "v": "two"}])
    a = lake.begin()
    a.update("t", {"id": 5}, {"id": 1})
    # pending: 5 is taken by a, and 1 stays taken until a commits (it may roll back)
    assert err(lake.begin().insert, "t", [{"id": 5}]).sqlstate == "23505"
    assert err(lake.begin().insert, "t", [{"id": 1}]).sqlstate == "23505"
    a.insert("t", [{"id": 1, "v": "new one"}])  # but a itself freed 1
    assert err(a.insert, "t", [{"id": 5}]).sqlstate == "23505"
    a.rollback()
    a = lake.begin()
    a.update("t", {"id": 5}, {"id": 1})
    a.commit()
    assert err(lake.begin().insert, "t", [{"id": 5}]).sqlstate == "23505"
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "v": "again"}])
    assert err(lake.begin().update, "t", {"id": 2}, {"id": 5}).sqlstate == "23505"
    with lake.begin() as tx:  # a permutation of keys in one statement is fine
        tx.update("t", {"id": Sql("id + 1")}, "id IN (1, 2)")
    assert ids(lake) == [2, 3, 5]
    assert [r["v"] for r in sorted(lake.read("t").to_pylist(), key=lambda r: r["id"])] == [
        "again",
        "two",
        "one",
    ]


def test_delete_and_reinsert_of_a_key_in_one_transaction(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "v": "old"}])
    a = lake.begin()
    a.delete("t", {"id": 1})
    assert err(lake.begin().insert, "t", [{"id": 1}]).sqlstate == "23505"  # not yet free
    a.insert("t", [{"id": 1, "v": "new"}])
    a.savepoint("s")
    assert err(a.insert, "t", [{"id": 1}]).sqlstate == "23505"
    a.rollback_to("s")
    a.commit()
    assert lake.read("t").to_pylist() == [{"id": 1, "v": "new", "n": None}]
    assert err(lake.begin().insert, "t", [{"id": 1}]).sqlstate == "23505"
    with lake.begin() as tx:
        tx.delete("t", {"id": 1})
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "v": "third"}])
    assert ids(lake) == [1]


def test_first_updater_wins(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "n": 0}, {"id": 2, "n": 0}])
    a = lake.begin()
    b = lake.begin()
    a.update("t", {"n": Sql("n + 1")}, {"id": 1})
    assert err(b.update, "t", {"n": Sql("n + 1")}, {"id": 1}).sqlstate == "40001"
    b.rollback()
    b = lake.begin(Isolation.REPEATABLE_READ)
    b.read("t")  # fixes b's snapshot before a commits
    a.commit()
    assert err(b.update, "t", {"n": 7}, {"id": 1}).sqlstate == "40001"  # changed since
    assert err(b.delete, "t", {"id": 1}).sqlstate in ("40001", "25P02")
    b.rollback()
    b = lake.begin(Isolation.REPEATABLE_READ)
    b.read("t")
    b.update("t", {"n": 7}, {"id": 2})  # not changed since: fine
    b.commit()
    got = {r["id"]: r["n"] for r in lake.read("t").to_pylist()}
    assert got == {1: 1, 2: 7}


def test_old_snapshots_fall_back_to_the_files(tmp_path: Path, settings: LakeSettings) -> None:
    """A snapshot older than what the version map reaches still gets its 40001: after a
    prune, and after a restart (the map starts empty at the recovered CSN)."""
    with Lake(tmp_path, settings) as lake:
        with lake.begin() as tx:
            tx.create_table("t", [("id", "bigint"), ("n", "int")], primary_key=["id"])
            tx.insert("t", [{"id": 1, "n": 0}])
        old = lake.begin(Isolation.REPEATABLE_READ)
        old.read("t")
        with lake.begin() as tx:
            tx.update("t", {"n": 1}, {"id": 1})
        with lake._dml_lock:
            lake._points.prune(lake.frontier)  # as if no snapshot needed it any more
        assert err(old.update, "t", {"n": 2}, {"id": 1}).sqlstate == "40001"
        old.rollback()


def test_restart_rebuilds_from_the_table(tmp_path: Path, settings: LakeSettings) -> None:
    with Lake(tmp_path, settings) as lake:
        with lake.begin() as tx:
            tx.create_table("t", [("id", "bigint"), ("v", "text")], primary_key=["id"])
            tx.insert("t", [{"id": i, "v": str(i)} for i in range(10)])
        lake.fold()  # part in files ...
        with lake.begin() as tx:
            tx.insert("t", [{"id": 10, "v": "10"}])  # ... part only in the log
            tx.delete("t", {"id": 3})
    with Lake(tmp_path, settings) as lake:
        for k in (0, 9, 10):
            assert err(lake.begin().insert, "t", [{"id": k}]).sqlstate == "23505"
        with lake.begin() as tx:
            tx.insert("t", [{"id": 3, "v": "back"}])
        assert ids(lake) == list(range(11))


def test_prepared_transactions_keep_their_keys_across_restart(tmp_path: Path, settings: LakeSettings) -> None:
    with Lake(tmp_path, settings) as lake:
        with lake.begin() as tx:
            tx.create_table("t", [("id", "bigint")], primary_key=["id"])
            tx.insert("t", [{"id": 1}])
        assert err(lake.begin().insert, "t", [{"id": 1}]).sqlstate == "23505"  # index built
        tx = lake.begin()
        tx.insert("t", [{"id": 2}])
        tx.delete("t", {"id": 1})
        tx.prepare("g")
    with Lake(tmp_path, settings) as lake:
        assert err(lake.begin().insert, "t", [{"id": 2}]).sqlstate == "23505"
        assert err(lake.begin().insert, "t", [{"id": 1}]).sqlstate == "23505"
        lake.commit_prepared("g")
        assert err(lake.begin().insert, "t", [{"id": 2}]).sqlstate == "23505"
        with lake.begin() as tx:
            tx.insert("t", [{"id": 1}])
        assert ids(lake) == [1, 2]


def test_truncate_empties_the_index(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", [{"id": i} for i in range(5)])
    assert err(lake.begin().insert, "t", [{"id": 4}]).sqlstate == "23505"
    with lake.begin() as tx:
        tx.truncate("t")
        tx.insert("t", [{"id": 4}])
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1}])
    assert ids(lake) == [1, 4]


def test_composite_and_text_keys(tmp_path: Path, settings: LakeSettings) -> None:
    with Lake(tmp_path, settings) as lake:
        with lake.begin() as tx:
            tx.create_table("c", [("a", "int"), ("b", "text"), ("v", "int")], primary_key=["a", "b"])
            tx.insert("c", [{"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}])
        e = err(lake.begin().insert, "c", [{"a": 1, "b": "y"}])
        assert (e.message, e.detail) == (
            'duplicate key value violates unique constraint "c_pkey"',
            "Key (a, b)=(1, y) already exists.",
        )
        with lake.begin() as tx:
            tx.insert("c", [{"a": 2, "b": "y"}, {"a": 1, "b": "X"}])
        assert lake.read("c").num_rows == 5


def test_big_statements_take_the_duckdb_path_and_stay_exact(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", [{"id": i} for i in range(3000)])  # more than one statement tracks
    a = lake.begin()
    a.insert("t", [{"id": i} for i in range(3000, 5000)])  # pending, big
    assert err(lake.begin().insert, "t", [{"id": 4500}]).sqlstate == "23505"
    assert err(lake.begin().insert, "t", [{"id": 10}]).sqlstate == "23505"
    a.commit()
    with lake.begin() as tx:
        tx.insert("t", [{"id": 5000}])
    assert err(lake.begin().insert, "t", [{"id": 4999}]).sqlstate == "23505"
    assert len(ids(lake)) == 5001


def test_point_read_answers_only_what_it_knows(lake: Lake) -> None:
    if not indexed(lake):
        pytest.skip("the row cache is off")
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "v": "a", "n": 1}])
    t = lake.catalog.resolve_table("t", lake.search_path)
    r = lake.begin()
    known, rid, values, cols = lake.point_read(r, t, (1,))
    assert known and rid is not None and dict(zip(cols, values, strict=True))["v"] == "a"
    assert lake.point_read(r, t, (2,))[:2] == (True, None)
    rr = lake.begin(Isolation.REPEATABLE_READ)
    rr.read("t")
    with lake.begin() as tx:
        tx.update("t", {"v": "b"}, {"id": 1})
    assert lake.point_read(rr, t, (1,))[0] is False  # changed after its snapshot
    assert rr.read("t", "id = 1").to_pylist()[0]["v"] == "a"
    w = lake.begin()
    w.insert("t", [{"id": 2, "v": "mine"}])
    w.update("t", {"v": "mine too"}, {"id": 1})
    known, rid, values, cols = lake.point_read(w, t, (2,))  # its own versions
    assert known and dict(zip(cols, values, strict=True))["v"] == "mine"
    known, rid, values, cols = lake.point_read(w, t, (1,))
    assert known and dict(zip(cols, values, strict=True))["v"] == "mine too"
    w.delete("t", {"id": 1})
    assert lake.point_read(w, t, (1,))[:2] == (True, None)
    assert lake.point_read(lake.begin(), t, (1,))[0]  # others still see the committed row
    w.truncate("t")
    assert lake.point_read(w, t, (2,))[0] is False  # after its TRUNCATE: the merge knows
    w.rollback()
    fresh = lake.begin()
    known, rid, values, cols = lake.point_read(fresh, t, (1,))
    assert known and dict(zip(cols, values, strict=True))["v"] == "b"


def test_limits_keep_big_tables_out(tmp_path: Path) -> None:
    s = replace(FAST, key_index_rows=100, row_cache_rows=10)
    with Lake(tmp_path, s) as lake:
        with lake.begin() as tx:
            tx.create_table("t", [("id", "bigint")], primary_key=["id"])
            tx.insert("t", [{"id": i} for i in range(50)])
        assert err(lake.begin().insert, "t", [{"id": 7}]).sqlstate == "23505"
        idx = lake._points.keys[lake.catalog.resolve_table("t").oid]
        assert idx.rows is None  # over the row-cache limit: keys only
        with lake.begin() as tx:
            tx.insert("t", [{"id": i} for i in range(50, 120)])
        with lake.begin() as tx:
            tx.insert("t", [{"id": 500}])
        assert err(lake.begin().insert, "t", [{"id": 119}]).sqlstate == "23505"
        assert len(ids(lake)) == 121


def test_zero_filled_log_tail_is_not_damage(tmp_path: Path) -> None:
    log = ChangeLog(tmp_path, fsync=True)
    ends = [log.append(R.Message(i, 0, True, "p", b"x" * 100))[1] for i in range(1, 4)]
    log.flush()
    assert log.preallocate(ahead=1 << 20) > 0
    seg = next(tmp_path.glob("*.wal"))
    assert seg.stat().st_size > ends[-1] - ends[0]
    log.append(R.Message(4, 0, True, "p", b"y"))
    log.flush()
    # "crash": no close, the zeros stay
    log2 = ChangeLog(tmp_path, fsync=True)
    assert log2.recovered_bytes_cut == 0
    assert [e.record.xid for e in log2.read()] == [1, 2, 3, 4]
    log2.append(R.Message(5, 0, True, "p", b"z"))
    assert [e.record.xid for e in log2.read()] == [1, 2, 3, 4, 5]
    log2.close()
    log.close()


def test_rows_written_by_sql_types_round_trip_through_the_row_cache(tmp_path: Path) -> None:
    with Lake(tmp_path, FAST) as lake:
        with lake.begin() as tx:
            tx.create_table(
                "r",
                [("id", "int"), ("f", "float8"), ("b", "bool"), ("d", "date"), ("ts", "timestamptz"),
                 ("by", "bytea"), ("n", "numeric(10,2)")],
                primary_key=["id"],
            )
            tx.insert(
                "r",
                pa.table(
                    {
                        "id": pa.array([1], pa.int32()),
                        "f": [1.5],
                        "b": [True],
                        "d": [dt.date(2024, 2, 29)],
                        "ts": pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.UTC)], pa.timestamp("us", tz="UTC")),
                        "by": [b"\x00\xff"],
                        "n": pa.array([None], pa.decimal128(10, 2)),
                    }
                ),
            )
        t = lake.catalog.resolve_table("r", lake.search_path)
        known, _, values, cols = lake.point_read(lake.begin(), t, (1,))
        assert known
        cached = dict(zip(cols, values, strict=True))
        assert cached == {k: v for k, v in lake.read("r").to_pylist()[0].items()}
