"""The catalog retention rule (PostgreSQL's ``catalog_xmin``), over random interleavings:
after any garbage collection, every transaction a slot may still send — committed at or
after its saved confirmed position, with a CSN past its snapshot — is still decoded with
the catalog it was written under, including commits that reach the log out of CSN order
across a DDL commit, and across restarts; once the slot has confirmed everything, only the
newest catalog version is left."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoding.catalog import Catalog, CatalogHistory
from walsender_proxy.lake import Lake, LakeError, LakeSettings, PendingCommit, Transaction
from walsender_proxy.replication.slots import SlotStore

SETTINGS = LakeSettings(fsync=False, background=False)
WRITERS = 3

writer = st.integers(0, WRITERS - 1)
op = st.one_of(
    st.tuples(st.just("write"), writer, st.integers(0, 5)),
    st.tuples(st.just("start_commit"), writer),
    st.tuples(st.just("finish"), writer),
    st.tuples(st.just("ddl")),
    st.tuples(st.just("confirm"), st.integers(0, 1 << 16)),
    st.tuples(st.just("fold")),
    st.tuples(st.just("gc")),
    st.tuples(st.just("restart")),
)


@dataclass
class Commit:
    lsn: int
    csn: int
    ddl: bool


@dataclass
class Run:
    path: Path
    lake: Lake = field(init=False)
    slots: SlotStore = field(init=False)
    txs: dict[int, Transaction] = field(default_factory=dict)
    pending: dict[int, PendingCommit] = field(default_factory=dict)
    commits: list[Commit] = field(default_factory=list)
    #: Every catalog version ever made, never pruned: what decoding must still see.
    versions: list[tuple[int, Catalog]] = field(init=False)
    added: list[str] = field(default_factory=list)
    counter: Any = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self.lake = Lake(self.path, SETTINGS)
        with self.lake.begin() as tx:
            tx.create_table("t", [("k", "int"), ("v", "bigint")], primary_key=["k"])
            tx.create_publication("p", tables=["t"])
        self.slots = SlotStore(self.lake)
        self.slots.create_logical("s", "pgoutput", "postgres", owner=1)
        self.versions = self.lake.history.versions()

    def step(self, o: tuple[Any, ...]) -> None:
        kind = o[0]
        if kind == "write" and o[1] not in self.pending:
            tx = self.txs.setdefault(o[1], self.lake.begin())
            try:
                tx.insert("t", [{"k": o[2] * 100 + next(self.counter), "v": o[2]}])
            except LakeError as e:
                assert e.sqlstate in ("40001", "23505"), e
                self.txs.pop(o[1]).abort()
        elif kind == "start_commit" and o[1] in self.txs and o[1] not in self.pending:
            self.pending[o[1]] = self.txs[o[1]].start_commit()
        elif kind == "finish" and o[1] in self.pending:
            self._finish(o[1])
        elif kind == "ddl":
            # A whole DDL transaction, while other commits may hold smaller CSNs in flight.
            with self.lake.begin() as tx:
                if self.added:
                    tx.drop_column("t", self.added.pop())
                else:
                    self.added.append(f"c{next(self.counter)}")
                    tx.add_column("t", self.added[-1], "int")
                pending = tx.start_commit()
                info = pending.finish()
            assert info.csn is not None and info.lsn is not None
            self.versions.append((info.csn, self.lake.catalog_at(info.csn)))  # (no GC between)
            self.commits.append(Commit(info.lsn, info.csn, True))
        elif kind == "confirm":
            slot = self.slots.get("s")
            end = self.lake.log.flushed_lsn
            lsn = min(end, slot.confirmed_flush + o[1])
            self.slots.advance("s", confirmed_flush=lsn)
            self.slots.save_all()
        elif kind == "fold":
            self.lake.fold()
        elif kind == "gc":
            self.lake.collect_garbage()
            self.check()
        elif kind == "restart" and not self.pending:
            self.slots.save_all()
            for tx in self.txs.values():
                tx.abort()
            self.txs.clear()
            self.lake.close()
            self.lake = Lake(self.path, SETTINGS)
            self.slots = SlotStore(self.lake)
            self.check()

    def _finish(self, i: int) -> None:
        info = self.pending.pop(i).finish()
        del self.txs[i]
        if info.csn is not None and info.lsn is not None:
            self.commits.append(Commit(info.lsn, info.csn, False))

    def check(self) -> None:
        slot = self.slots.get("s")
        for c in self.commits:
            if c.lsn < slot.confirmed_flush or c.csn <= slot.snapshot_csn:
                continue  # never sent again
            for csn in (c.csn - 1, c.csn) if c.ddl else (c.csn,):
                assert self.lake.catalog_at(csn) == CatalogHistory(self.versions).at(csn), (
                    f"the catalog of CSN {csn} (commit at {c.lsn:X}) is gone; "
                    f"slot confirmed {slot.confirmed_flush:X}, hold {slot.catalog_csn}"
                )

    def finish_all(self) -> None:
        for i in sorted(self.pending, reverse=True):
            self._finish(i)
        for tx in self.txs.values():
            tx.abort()
        self.txs.clear()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(op, max_size=40))
def test_a_slot_keeps_the_catalog_of_every_transaction_it_may_still_send(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[Any, ...]]
) -> None:
    run = Run(tmp_path_factory.mktemp("lake"))
    try:
        for o in ops:
            run.step(o)
        run.finish_all()
        run.lake.collect_garbage()
        run.check()
        # Confirmed to the end: only the newest version stays (no unbounded retention).
        run.lake.log.flush()
        run.slots.advance("s", confirmed_flush=run.lake.log.flushed_lsn)
        run.slots.save_all()
        run.lake.collect_garbage()
        assert len(run.lake.history.versions()) == 1
    finally:
        run.lake.close()
