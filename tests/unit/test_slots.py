"""Slots are durable, move only forward, and have one consumer at a time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from decoding.errors import PgError
from walsender_proxy.lake import Lake, LakeSettings
from walsender_proxy.replication.slot import Slot
from walsender_proxy.replication.slots import SlotStore

FAST = LakeSettings(fsync=False, background=False)


def slot(name: str, **kw: object) -> Slot:
    base = dict(name=name, plugin="pgoutput", database="postgres", restart_lsn=100, consistent_point=100, snapshot_csn=3, confirmed_flush=100)
    base.update(kw)
    return Slot(**base)  # type: ignore[arg-type]


def code(fn, *a, **kw) -> str:
    with pytest.raises(PgError) as ei:
        fn(*a, **kw)
    return ei.value.sqlstate


def test_slots_survive_restart_and_never_move_back(tmp_path: Path) -> None:
    with Lake(tmp_path, FAST) as lake:
        store = SlotStore(lake)
        store.create(slot("s1"))
        store.create(slot("tmp1", temporary=True))
        store.advance("s1", confirmed_flush=500, restart_lsn=300)
        store.advance("s1", confirmed_flush=200, restart_lsn=150)  # ignored: backwards
        assert lake.holds.oldest_lsn() == 100  # the temporary slot still holds 100
    with Lake(tmp_path, FAST) as lake:
        store = SlotStore(lake)
        assert [s.name for s in store.all()] == ["s1"]
        s1 = store.get("s1")
        assert (s1.confirmed_flush, s1.restart_lsn) == (500, 300)
        assert lake.holds.oldest_lsn() == 300


def test_slot_errors_match_postgresql(tmp_path: Path) -> None:
    with Lake(tmp_path, FAST) as lake:
        store = SlotStore(lake, max_slots=2)
        store.create(slot("a"))
        assert code(store.create, slot("a")) == "42710"
        assert code(store.create, slot("Bad-Name")) == "42602"
        assert code(store.create, slot("x" * 64)) == "42622"
        store.create(slot("b"))
        assert code(store.create, slot("c")) == "53400"
        assert code(store.get, "zzz") == "42704"
        store.acquire("a", pid=1)
        with pytest.raises(PgError) as ei:
            store.acquire("a", pid=2)
        assert ei.value.sqlstate == "55006" and "is active for PID 1" in ei.value.message
        assert code(store.drop, "a", 2) == "55006"
        store.release("a", 1)
        store.drop("a", 2)
        assert code(store.drop, "a", 2) == "42704"


def test_temporary_slots_go_with_their_session(tmp_path: Path) -> None:
    with Lake(tmp_path, FAST) as lake:
        store = SlotStore(lake)
        store.create(slot("t", temporary=True))
        store.acquire("t", pid=7)
        assert store.drop_temporary_of(7) == ["t"]
        assert store.find("t") is None


def test_a_temporary_slot_is_held_by_its_session_until_the_session_ends(tmp_path: Path) -> None:
    """As PostgreSQL keeps a temporary slot's active_pid: a stream on it ending does not
    free it for others; the session's end drops it. Checked in PostgreSQL's order: name,
    then existence, then plugin."""
    with Lake(tmp_path, FAST) as lake:
        store = SlotStore(lake)
        made, cp = store.create_logical("t", "pgoutput", "postgres", owner=7, temporary=True)
        assert (made.consistent_point, made.confirmed_flush, made.snapshot_csn) == (cp.lsn, cp.lsn, cp.csn)
        assert store.active_pid("t") == 7
        store.acquire("t", 7)  # its session streams from it
        store.release("t", 7)
        assert store.active_pid("t") == 7
        assert code(store.acquire, "t", 8) == "55006"
        assert code(store.drop, "t", 8) == "55006"
        store.create_logical("p", "pgoutput", "postgres", owner=7)  # a persistent one is not held
        assert store.active_pid("p") is None
        assert code(store.create_logical, "Bad", "nope", "postgres", owner=7) == "42602"
        assert code(store.create_logical, "p", "nope", "postgres", owner=7) == "42710"
        assert code(store.create_logical, "q", "nope", "postgres", owner=7) == "58P01"
        with pytest.raises(PgError) as ei:  # (wal2json is not built in: the hint says what is)
            store.create_logical("q", "wal2json", "postgres", owner=7)
        assert ei.value.hint == "The output plugins walsender-proxy has are pgoutput and test_decoding."
        assert store.drop_temporary_of(7) == ["t"]
        assert [s.name for s in store.all()] == ["p"]


def test_flush_confirmations_reach_disk_at_most_every_interval(tmp_path: Path) -> None:
    """As in PostgreSQL, confirmations move the slot in memory and are saved now and
    then, not with two fsyncs each; the log is only let go up to what was saved."""
    with Lake(tmp_path, FAST) as lake:
        store = SlotStore(lake)
        store.create(slot("s1"))
        store.advance("s1", confirmed_flush=500, restart_lsn=300)  # the first is saved
        store.advance("s1", confirmed_flush=900, restart_lsn=800)  # within the interval
        assert store.get("s1").confirmed_flush == 900  # what pg_replication_slots shows
        assert lake.holds.oldest_lsn() == 300  # the log from the saved restart LSN stays
        on_disk = json.loads((tmp_path / "slots" / "s1.json").read_text())  # what a crash leaves
        assert (on_disk["confirmed_flush"], on_disk["restart_lsn"]) == (500, 300)
        store.save_all()  # end of the stream, shutdown
        assert lake.holds.oldest_lsn() == 800
        store.advance("s1", confirmed_flush=1000)
        store.drop("s1", pid=1)
        store.save_all()  # a dirty slot dropped meanwhile is not written back
    with Lake(tmp_path, FAST) as lake:
        assert SlotStore(lake).all() == []


def test_the_lake_holds_saved_slots_before_the_server_loads_them(tmp_path: Path) -> None:
    """A Spark job on a stopped proxy's directory (``ingest -D``, ``compact -D``) opens the
    lake alone, and folds and collects garbage: the log and the catalog versions a saved
    slot still needs stay, as they do for the server (whose background work may also run
    before its slot store has loaded)."""
    settings = LakeSettings(fsync=False, background=False, segment_size=4096)
    with Lake(tmp_path, settings) as lake:
        with lake.begin() as tx:
            tx.create_table("t", [("id", "int"), ("a", "text")], primary_key=["id"])
        made, _ = SlotStore(lake).create_logical("s", "pgoutput", "postgres", owner=1)
        tx = lake.begin()
        tx.insert("t", [{"id": 1, "a": "before"}])
        csn = tx.commit().csn
        assert csn is not None
        with lake.begin() as tx:
            tx.drop_column("t", "a")
    with Lake(tmp_path, settings) as lake:  # no slot store
        for _ in range(3):
            lake.message("pad", "x" * 5000)
            lake.fold()
        lake.checkpoint(force=True)
        lake.collect_garbage()
        assert lake.catalog_at(csn).resolve_table("t").column_names == ["id", "a"]
        assert lake.log.oldest_lsn <= made.restart_lsn
    with Lake(tmp_path, settings) as lake:
        store = SlotStore(lake)  # takes the holds over; confirmed to the end, they go
        lake.log.flush()
        store.advance("s", confirmed_flush=lake.log.flushed_lsn, restart_lsn=lake.log.flushed_lsn)
        store.save_all()
        lake.collect_garbage()
        assert len(lake.history.versions()) == 1
        assert lake.log.oldest_lsn > made.restart_lsn
        assert [h[0] for h in lake.holds.describe()] == ["slot s"]
