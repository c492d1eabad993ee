"""The invariant that matters most (ARCHITECTURE §3), over random interleavings.

For a snapshot S taken at a consistent point L: the rows read at S, plus the committed
transactions decoded from L with CSN > S, give exactly the final state — for *every* L,
including points where out-of-order commits straddle L. And points the lake hands out as
clean have no commit in flight across them, so two slots created at different clean points
hand over by LSN without duplicates.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoding.reorder import committed_after
from tests.lakeutil import apply_stream, by_rid, commit_points
from walsender_proxy.lake import Lake, LakeError, LakeSettings, PendingCommit, Transaction

SETTINGS = LakeSettings(fsync=False, background=False)
SLOTS = 4

slot = st.integers(0, SLOTS - 1)
op = st.one_of(
    st.tuples(st.just("write"), slot, st.sampled_from(["ins", "upd", "del"]), st.integers(0, 5)),
    st.tuples(st.just("savepoint"), slot),
    st.tuples(st.just("rollback_to"), slot),
    st.tuples(st.just("start_commit"), slot),
    st.tuples(st.just("finish"), slot),
    st.tuples(st.just("abort"), slot),
    st.tuples(st.just("prepare"), slot),
    st.tuples(st.just("end_prepared"), st.booleans()),
    st.tuples(st.just("truncate"), slot),
    st.tuples(st.just("fold")),
    st.tuples(st.just("clean_point")),
    st.tuples(st.just("restart")),
)


def make_lake(path: Path) -> Lake:
    lake = Lake(path, SETTINGS)
    with lake.begin() as tx:
        tx.create_table("t", [("k", "int"), ("v", "bigint")], primary_key=["k"])
    return lake


class Run:
    """Interprets an op list against a real lake; errors PostgreSQL would raise (40001,
    23505) fail the transaction, which the run then rolls back, like a client would."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lake = make_lake(path)
        self.txs: dict[int, Transaction] = {}
        self.pending: dict[int, PendingCommit] = {}
        self.gids: list[str] = []
        self.counter = itertools.count(1)
        self.clean: list[tuple[int, int]] = []

    def tx(self, i: int) -> Transaction | None:
        if i in self.pending:
            return None
        if i not in self.txs:
            self.txs[i] = self.lake.begin()
        return self.txs[i]

    def step(self, o: tuple) -> None:
        kind = o[0]
        if kind == "write":
            _, i, what, key = o
            tx = self.tx(i)
            if tx is None:
                return
            try:
                if what == "ins":
                    tx.insert("t", [{"k": key, "v": next(self.counter)}])
                elif what == "upd":
                    tx.update("t", {"v": next(self.counter)}, {"k": key})
                else:
                    tx.delete("t", {"k": key})
            except LakeError as e:
                assert e.sqlstate in ("40001", "23505"), e
                tx.abort()
                del self.txs[i]
        elif kind == "truncate":
            tx = self.tx(o[1])
            if tx is None:
                return
            try:
                tx.truncate("t")
            except LakeError as e:
                assert e.sqlstate == "40001"
                tx.abort()
                del self.txs[o[1]]
        elif kind == "savepoint" and o[1] in self.txs and o[1] not in self.pending:
            self.txs[o[1]].savepoint("s")
        elif kind == "rollback_to" and o[1] in self.txs and o[1] not in self.pending:
            try:
                self.txs[o[1]].rollback_to("s")
            except LakeError as e:
                assert e.sqlstate == "3B001"
        elif kind == "start_commit" and o[1] in self.txs and o[1] not in self.pending:
            self.pending[o[1]] = self.txs[o[1]].start_commit()
        elif kind == "finish" and o[1] in self.pending:
            self.pending.pop(o[1]).finish()
            del self.txs[o[1]]
        elif kind == "abort" and o[1] in self.txs and o[1] not in self.pending:
            self.txs.pop(o[1]).abort()
        elif kind == "prepare" and o[1] in self.txs and o[1] not in self.pending:
            gid = f"g{next(self.counter)}"
            tx = self.txs.pop(o[1])
            if tx.xid is None:
                tx.abort()
                return
            tx.prepare(gid)
            self.gids.append(gid)
        elif kind == "end_prepared" and self.gids:
            gid = self.gids.pop(0)
            if o[1]:
                self.lake.commit_prepared(gid)
            else:
                self.lake.rollback_prepared(gid)
        elif kind == "fold":
            self.lake.fold()
        elif kind == "clean_point":
            if any(p.csn is not None for p in self.pending.values()):
                with pytest.raises(LakeError) as ei:
                    self.lake.clean_point(timeout=0)
                assert ei.value.sqlstate == "55P03"
            else:
                cp = self.lake.clean_point(timeout=0)
                self.clean.append((cp.lsn, cp.csn))
        elif kind == "restart" and not self.pending:
            self.lake.close()  # open transactions are rolled back; prepared ones survive
            self.txs.clear()
            self.lake = Lake(self.path, SETTINGS)

    def finish_all(self) -> None:
        for i in sorted(self.pending, reverse=True):  # reverse: more out-of-order commits
            self.pending.pop(i).finish()
            del self.txs[i]
        for tx in self.txs.values():
            tx.abort()
        for gid in self.gids:
            self.lake.commit_prepared(gid)


def check_invariant(lake: Lake, clean: list[tuple[int, int]]) -> None:
    table = lake.catalog.resolve_table("t")
    names = {c.physical: c.name for c in table.columns}
    final = by_rid(lake.read("t", with_rid=True))
    commits = commit_points(lake)
    entries = list(lake.log.read())
    points = sorted({e.lsn for e in entries} | {lake.log.insert_lsn})
    for lsn in points:
        snapshot = max((c for lc, c in commits if lc < lsn), default=0)
        state = by_rid(lake.read(table, snapshot, with_rid=True))
        apply_stream(lake, state, committed_after(entries, lsn, snapshot), table.oid, names)
        assert state == final, f"copy+stream differs at L={lsn:X} S={snapshot}"
    for lsn, csn in clean:
        assert all(c <= csn for lc, c in commits if lc < lsn), "a later CSN committed before L"
        assert all(lc < lsn for lc, c in commits if c <= csn), "an old CSN committed after L"


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(op, max_size=40))
def test_copy_plus_stream_is_exact_under_any_interleaving(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple]
) -> None:
    run = Run(tmp_path_factory.mktemp("lake"))
    try:
        for o in ops:
            run.step(o)
        run.finish_all()
        check_invariant(run.lake, run.clean)
    finally:
        run.lake.close()


def test_seed_example_csn2_csn1_csn3_csn4(tmp_path: Path) -> None:
    """Seed 000 §4.3.1: log order csn2, csn1, csn3, csn4, snapshot at csn2 — the copy holds
    csn1 and csn2, the stream must carry only csn3 and csn4."""
    with make_lake(tmp_path) as lake:
        base = lake.frontier
        t1, t2 = lake.begin(), lake.begin()
        t1.insert("t", [{"k": 1, "v": 1}])
        t2.insert("t", [{"k": 2, "v": 2}])
        c1 = t1.start_commit()  # gets the smaller CSN ...
        c2 = t2.start_commit()
        start = lake.log.insert_lsn
        c2.finish()  # ... but the larger one reaches the log first
        snapshot_point = lake.log.insert_lsn  # L: after csn2's commit, before csn1's
        c1.finish()
        for k in (3, 4):
            with lake.begin() as tx:
                tx.insert("t", [{"k": k, "v": k}])
        assert [c - base for _, c in commit_points(lake) if _ >= start] == [2, 1, 3, 4]

        snapshot = base + 2  # the largest CSN committed before L
        copy = lake.read("t", snapshot)
        assert sorted(copy.column("k").to_pylist()) == [1, 2]
        streamed = list(committed_after(lake.log.read(), snapshot_point, snapshot))
        assert [tx.csn - base for tx in streamed] == [3, 4]


def test_clean_point_waits_for_in_flight_commit(tmp_path: Path) -> None:
    """A consistent point is only handed out once no commit is in flight across it."""
    import threading

    with make_lake(tmp_path) as lake:
        tx = lake.begin()
        tx.insert("t", [{"k": 1, "v": 1}])
        pending = tx.start_commit()
        got: list = []
        th = threading.Thread(target=lambda: got.append(lake.clean_point(timeout=5)))
        th.start()
        th.join(0.3)
        assert th.is_alive(), "clean_point returned while a commit was in flight"
        info = pending.finish()
        th.join(5)
        cp = got[0]
        assert cp.csn == info.csn and cp.lsn >= info.end_lsn
