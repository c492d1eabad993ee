"""Replication slots: durable consumer state, one JSON file per slot.

A slot is written by atomic replace + fsync (write a temporary file, fsync it, rename it
over the old one, fsync the directory), so a crash leaves the old or the new state, never a
torn one. Each slot holds its restart LSN *as saved* in the lake's retention registry,
which is what keeps the change log from being truncated under it, and its catalog hold
(``catalog_csn``, PostgreSQL's ``catalog_xmin``), which keeps the catalog versions of the
transactions it may still send. Positions only move forward.

As in PostgreSQL, a client's flush confirmations move the slot in memory at once but reach
disk at most every ``SAVE_INTERVAL`` (and when the stream ends and at shutdown): a save per
confirmation would put two fsyncs beside every small commit. After a crash the slot may be
a little behind; the subscriber asks for its own position, and the log from the saved
restart LSN on is still there.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from decoding.change_rows import changeset_size
from decoding.changelog import LogEntry
from decoding.errors import PgError, file_access_error
from decoding.lsn import format_lsn
from decoding.pgoutput.rows import RowBatch
from decoding.pgtime import pg_now, pg_to_datetime
from decoding.records import Abort, Commit, CommitPrepared, RollbackPrepared
from decoding.reorder import (
    DecodedTxn,
    DecodingStats,
    Finished,
    Prepared,
    ReorderBuffer,
    StreamAborted,
    StreamBlock,
    decoded_after,
    wire_xid,
)
from walsender_proxy.replication.slot import (
    PLUGINS,
    OutputPlugin,
    Slot,
    check_slot_name,
    output_plugin,
    streamed,
)

if TYPE_CHECKING:  # (a walsender process uses Slot without loading the lake)
    from walsender_proxy.lake import Lake
    from walsender_proxy.lake.lake import ConsistentPoint
    from walsender_proxy.lake.retention import Hold

log = logging.getLogger("walsender_proxy.slots")

#: Seconds between saves of a slot moved by flush confirmations.
SAVE_INTERVAL = 1.0


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class SlotStore:
    def __init__(self, lake: Lake, max_slots: int = 10) -> None:
        self.lake = lake
        self.dir = lake.dir / "slots"
        self.dir.mkdir(exist_ok=True)
        self.max_slots = max_slots
        self._lock = threading.Lock()
        self._slots: dict[str, Slot] = {}
        self._holds: dict[str, Hold] = {}
        self._active: dict[str, int] = {}  # name -> pid using it
        #: When each slot was last let go (pg_replication_slots.inactive_since, PostgreSQL
        #: 17): at its creation and each release, and for every slot read at start-up;
        #: none while a stream has it.
        self._inactive_since: dict[str, datetime.datetime] = {}
        self._dirty: set[str] = set()  # moved in memory since the last save
        self._saved_at: dict[str, float] = {}
        self._save_lock = threading.Lock()  # one writer of the slot files at a time
        #: pg_stat_replication_slots: each logical slot's counts and when they were reset
        #: (PostgreSQL epoch µs; 0: never). Saved at shutdown, as PostgreSQL saves its
        #: statistics (and forgets them after a crash).
        self._stats: dict[str, DecodingStats] = {}
        self._stats_reset: dict[str, int] = {}
        self._stats_file = lake.dir / "pg_stat" / "replslot.json"
        saved_stats = self._load_stats()
        for p in sorted(self.dir.glob("*.json")):
            slot = Slot(**json.loads(p.read_text()))
            if slot.temporary:  # temporary slots do not survive a restart
                p.unlink()
                continue
            self._slots[slot.name] = slot
            self._inactive_since[slot.name] = _now()
            counts, reset = saved_stats.get(slot.name, ({}, 0))
            self._stats[slot.name] = DecodingStats(**counts)
            self._stats_reset[slot.name] = reset
            # (the lake took this hold when it opened, before its background work started)
            hold = lake.saved_slot_holds.pop(slot.name, None) or lake.holds.hold(f"slot {slot.name}")
            hold.update(lsn=slot.restart_lsn, catalog_csn=slot.catalog_csn)
            self._holds[slot.name] = hold
        for hold in lake.saved_slot_holds.values():  # (files the lake read that are gone now)
            hold.release()
        lake.saved_slot_holds.clear()
        for p in self.dir.glob("*.tmp"):
            p.unlink()

    # -- persistence ---------------------------------------------------------------------
    def _save(self, slot: Slot) -> None:
        with self._save_lock:
            if slot.name not in self._slots:  # dropped meanwhile: no file to bring back
                return
            self._write(slot)
        hold = self._holds.get(slot.name)
        if hold is not None:
            hold.update(lsn=slot.restart_lsn, catalog_csn=slot.catalog_csn)

    def _write(self, slot: Slot) -> None:
        if slot.temporary:
            return
        path = self.dir / f"{slot.name}.json"
        tmp = path.with_suffix(".tmp")
        try:
            with open(tmp, "w") as f:
                json.dump(asdict(slot), f)
                f.flush()
                if self.lake.settings.fsync:
                    os.fsync(f.fileno())
            os.replace(tmp, path)
        except OSError as e:  # (a full disk: the saved state stays the old one, whole)
            tmp.unlink(missing_ok=True)
            raise file_access_error(e, f'could not write to file "{self.dir.name}/{tmp.name}"') from e
        if self.lake.settings.fsync:
            fd = os.open(self.dir, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    # -- lifecycle -----------------------------------------------------------------------
    def create_logical(
        self,
        name: str,
        plugin: str,
        database: str,
        *,
        owner: int,
        temporary: bool = False,
        two_phase: bool = False,
        failover: bool = False,
    ) -> tuple[Slot, ConsistentPoint]:
        """A new logical slot at a clean consistent point, for ``CREATE_REPLICATION_SLOT``
        and ``pg_create_logical_replication_slot()`` alike. Checked in PostgreSQL's order:
        the name, a slot of that name, then the plugin (58P01, as a missing library). A
        temporary slot stays held by ``owner`` until :meth:`drop_temporary_of`. Blocking
        (the point waits for commits in flight, the save fsyncs)."""
        check_slot_name(name)
        if self.find(name) is not None:
            raise PgError("42710", f'replication slot "{name}" already exists')
        if plugin not in PLUGINS:
            raise missing_plugin(plugin)
        cp = self.lake.clean_point()
        slot = Slot(
            name, plugin, database,
            restart_lsn=cp.restart_lsn, consistent_point=cp.lsn, snapshot_csn=cp.csn,
            confirmed_flush=cp.lsn, temporary=temporary, two_phase=two_phase, failover=failover,
            catalog_csn=cp.csn, two_phase_at=cp.lsn if two_phase else 0,
        )  # fmt: skip
        self.create(slot, owner=owner if temporary else None)
        return slot, cp

    def copy_logical(self, src: str, dst: str, pid: int, *, temporary: bool | None = None, plugin: str | None = None) -> Slot:
        """``pg_copy_logical_replication_slot``: a new slot at the source's positions (its
        restart LSN, confirmed position, snapshot and catalog hold), with the source's
        plugin and persistence unless given, checked in PostgreSQL's order."""
        check_slot_name(dst)
        source = self.find(src)
        if source is None:
            raise PgError("42704", f'replication slot "{src}" does not exist')
        if plugin is not None and plugin not in PLUGINS:
            raise missing_plugin(plugin)
        temp = source.temporary if temporary is None else bool(temporary)
        # (PostgreSQL makes the copy without two_phase, whatever the source's)
        slot = replace(source, name=dst, plugin=plugin or source.plugin, temporary=temp, two_phase=False, two_phase_at=0)
        return self.create(slot, owner=pid if temp else None)

    def create(self, slot: Slot, owner: int | None = None) -> Slot:
        check_slot_name(slot.name)
        with self._lock:
            if slot.name in self._slots:
                raise PgError("42710", f'replication slot "{slot.name}" already exists')
            if len(self._slots) >= self.max_slots:
                raise PgError("53400", "all replication slots are in use", hint="Free one or increase max_replication_slots.")
            self._slots[slot.name] = slot
            self._stats[slot.name], self._stats_reset[slot.name] = DecodingStats(), 0
            self._holds[slot.name] = self.lake.holds.hold(
                f"slot {slot.name}", lsn=slot.restart_lsn, catalog_csn=slot.catalog_csn
            )
            if owner is not None:
                self._active[slot.name] = owner
            self._inactive_since[slot.name] = _now()  # (the command creating it lets it go)
            self._save(slot)
            return slot

    def get(self, name: str) -> Slot:
        with self._lock:
            return self._existing(name)

    def find(self, name: str) -> Slot | None:
        with self._lock:
            return self._slots.get(name)

    def all(self) -> list[Slot]:
        with self._lock:
            return list(self._slots.values())

    def active_pid(self, name: str) -> int | None:
        with self._lock:
            return self._active.get(name)

    def inactive_since(self, name: str) -> datetime.datetime | None:
        """When the slot was last let go (None while one streams from it): as
        PostgreSQL 17's ReplicationSlotRelease sets it, also for a temporary slot, which
        stays with its session."""
        with self._lock:
            return self._inactive_since.get(name)

    def _existing(self, name: str) -> Slot:
        """The slot (caller holds the lock), or 42704."""
        slot = self._slots.get(name)
        if slot is None:
            raise PgError("42704", f'replication slot "{name}" does not exist')
        return slot

    def _free_for(self, name: str, pid: int) -> Slot:
        """The slot if nobody but ``pid`` uses it (caller holds the lock), else 55006."""
        slot = self._existing(name)
        holder = self._active.get(name)
        if holder is not None and holder != pid:
            raise PgError("55006", f'replication slot "{name}" is active for PID {holder}')
        return slot

    def acquire(self, name: str, pid: int) -> Slot:
        """One slot, one consumer: a second gets 55006, as in PostgreSQL."""
        with self._lock:
            slot = self._free_for(name, pid)
            self._active[name] = pid
            self._inactive_since.pop(name, None)
            return slot

    def release(self, name: str, pid: int) -> None:
        """A temporary slot stays with its session until the session ends (PostgreSQL
        keeps its ``active_pid``): nobody else may use or drop it meanwhile."""
        with self._lock:
            slot = self._slots.get(name)
            if self._active.get(name) == pid:
                self._inactive_since[name] = _now()
                if slot is None or not slot.temporary:
                    del self._active[name]

    def drop(self, name: str, pid: int) -> None:
        with self._lock:
            self._free_for(name, pid)
            del self._slots[name]
            self._stats.pop(name, None)
            self._stats_reset.pop(name, None)
            self._active.pop(name, None)
            self._inactive_since.pop(name, None)
            self._dirty.discard(name)
            hold = self._holds.pop(name, None)
        if hold is not None:
            hold.release()
        with self._save_lock:
            (self.dir / f"{name}.json").unlink(missing_ok=True)

    def drop_temporary_of(self, pid: int) -> list[str]:
        """Temporary slots end with the session that made them."""
        with self._lock:
            names = [n for n, s in self._slots.items() if s.temporary and self._active.get(n) == pid]
        for n in names:
            self.drop(n, pid)
        return names

    def advance_to(self, name: str, upto: int, pid: int) -> Slot:
        """``pg_replication_slot_advance``: confirm a logical slot up to ``upto`` (at most
        the durable end of the log) without sending anything, as if a client had received
        and flushed it all. Its restart LSN follows: the first record of any transaction
        still open there, found by reading the log from the old restart LSN (a transaction
        open at the new point began after it)."""
        if upto == 0:
            raise PgError("XX000", "invalid target WAL LSN")  # (PostgreSQL 15: a bare elog)

        moveto = min(upto, self.lake.log.flushed_lsn)
        slot = self.acquire(name, pid)
        try:
            if moveto < slot.confirmed_flush:
                raise PgError(
                    "55000",
                    f"cannot advance replication slot to {format_lsn(moveto)}, "
                    f"minimum is {format_lsn(slot.confirmed_flush)}",
                )
            if moveto == slot.confirmed_flush:
                return slot
            opened: dict[int, int] = {}
            for entry in self.lake.log.read(slot.restart_lsn, moveto):
                rec = entry.record
                xid = rec.xid
                if not xid:
                    continue
                if isinstance(rec, (Commit, Abort, CommitPrepared, RollbackPrepared)):
                    opened.pop(xid, None)
                else:
                    opened.setdefault(xid, entry.lsn)
            self.move(name, confirmed_flush=moveto, restart_lsn=min(opened.values(), default=moveto))
            with self._lock:  # saved now, as PostgreSQL does (SQL users cannot name a start)
                self._dirty.discard(name)
                slot = self._existing(name)
            self._save(slot)
            return slot
        finally:
            self.release(name, pid)

    def changes(
        self, name: str, pid: int, database: str, options: Sequence[tuple[str, str | None]], *,
        upto_lsn: int | None, upto_nchanges: int | None, confirm: bool, function: str,
        version_num: int, search_path: Sequence[str] = (), work_mem: int | None = None,
    ) -> list[tuple[int, int, bytes]]:
        """``pg_logical_slot_get_changes`` and kin: what the slot's plugin writes of the
        transactions committed since its confirmed position, up to ``upto_lsn`` (at most
        the durable end of the log) or until ``upto_nchanges`` rows were written (a
        transaction always whole), as (lsn, xid, data) rows; with ``confirm`` the slot then
        moves past the last record decoded, as its ``get`` form does. ``function``: the
        SQL function called (a textual one refuses a plugin writing binary). The log is read
        and decoded in the calling thread (a SQL session's worker thread); past ``work_mem``
        bytes (logical_decoding_work_mem) transactions spill to disk, or are streamed in
        progress when the plugin's options ask for streaming, as a walsender's are."""
        slot = self.acquire(name, pid)
        try:
            if slot.database != database:
                raise PgError("55000", f'replication slot "{name}" was not created in this database')
            plugin = output_plugin(
                slot.plugin, options, version_num, self.lake.catalog_at, self.lake.changesets,
                search_path=search_path, slot_name=name,
            )
            try:
                if "binary" not in function and plugin.binary_output:
                    raise PgError(
                        "0A000",
                        f'logical decoding output plugin "{slot.plugin}" produces binary output, but function '
                        f'"{function}(name,pg_lsn,integer,text[])" expects textual data',
                    )
                end = self.lake.log.flushed_lsn if upto_lsn is None else min(upto_lsn, self.lake.log.flushed_lsn)
                start = slot.confirmed_flush
                if plugin.two_phase_requested and not slot.two_phase:
                    slot = self.enable_two_phase(name, start)
                rows: list[tuple[int, int, bytes]] = []
                reached = end

                def records() -> Iterator[LogEntry]:
                    """The log up to ``end``, stopping once ``upto_nchanges`` rows were
                    made: checked after each record, as PostgreSQL's loop checks it."""
                    nonlocal reached
                    for entry in self.lake.log.read(max(slot.restart_lsn, self.lake.log.oldest_lsn), end):
                        yield entry  # (back here once its events were made into rows)
                        if upto_nchanges and len(rows) >= upto_nchanges:
                            reached = entry.end_lsn
                            return

                two_phase_at = slot.two_phase_at if slot.two_phase else None
                rb = ReorderBuffer(
                    work_mem, self.lake.dir / "spill", stream_from=start if plugin.streaming_requested else None,
                    skip_origin=plugin.skips_origin,
                    changeset_size=functools.partial(changeset_size, changesets=Path(self.lake.changesets)),
                )
                for entry, ev in decoded_after(
                    records(), start, slot.snapshot_csn, two_phase_at, plugin.skip_prepare, reorder=rb
                ):
                    if isinstance(ev, DecodedTxn | Prepared) or (isinstance(ev, Finished) and ev.replay):
                        rb.stats.decoded(ev if isinstance(ev, DecodedTxn) else ev.txn)
                    if isinstance(ev, tuple):
                        rows += [(entry.lsn, 0, m) for m in plugin.message(entry.end_lsn, ev[1])]
                    elif isinstance(ev, StreamBlock | StreamAborted) or (
                        isinstance(ev, DecodedTxn | Prepared) and _txn_of(ev).streamed
                    ):
                        rows += _streamed_rows(plugin, ev)
                    elif isinstance(ev, Prepared | Finished):
                        rows += _two_phase_rows(plugin, ev)
                    else:
                        lines = [m for b in plugin.iter_batches(ev) for m in (b if isinstance(b, list) else b.to_pylist())]
                        first = ev.first_lsn or ev.commit_lsn
                        rows += [(ev.end_lsn if i == len(lines) - 1 else first, ev.xid & 0xFFFFFFFF, m) for i, m in enumerate(lines)]
                self.add_stats(name, rb.stats.take())
            finally:
                plugin.close()
        finally:
            self.release(name, pid)
        if confirm and reached > slot.confirmed_flush:
            self.advance_to(name, reached, pid)
        return rows

    def advance(self, name: str, *, confirmed_flush: int | None = None, restart_lsn: int | None = None) -> Slot:
        """Move the slot forward; a position that would move it backwards is ignored."""
        if self.move(name, confirmed_flush=confirmed_flush, restart_lsn=restart_lsn):
            self.save_if_dirty(name)
        return self.get(name)

    def move(self, name: str, *, confirmed_flush: int | None = None, restart_lsn: int | None = None) -> bool:
        """:meth:`advance` in memory only (no I/O: a walsender calls it on the event loop for
        every reply); True when the slot is due to be written (:meth:`save_if_dirty`).
        The catalog hold follows the confirmed position: nothing committed before it is
        sent again, so the catalog versions only those commits used can go."""
        with self._lock:
            slot = self._existing(name)
            new = slot
            if confirmed_flush is not None and confirmed_flush > slot.confirmed_flush:
                new = replace(new, confirmed_flush=confirmed_flush)
            if confirmed_flush is not None:
                catalog = self.lake.catalog_hold_at(new.confirmed_flush)
                if catalog > slot.catalog_csn:
                    new = replace(new, catalog_csn=catalog)
            if restart_lsn is not None and restart_lsn > slot.restart_lsn:
                new = replace(new, restart_lsn=restart_lsn)
            if new is slot:
                return False
            self._slots[name] = new
            self._dirty.add(name)
            now = time.monotonic()
            due = now - self._saved_at.get(name, 0.0) >= SAVE_INTERVAL
            if due:
                self._saved_at[name] = now
            return due

    def save_if_dirty(self, name: str) -> None:
        """Write the slot if it moved since it was last written (and let the log go up to
        its restart LSN only then)."""
        with self._lock:
            if name not in self._dirty:
                return
            self._dirty.discard(name)
            slot = self._slots.get(name)
        if slot is not None:
            try:
                self._save(slot)
            except PgError:
                with self._lock:  # (tried again at the next save)
                    self._dirty.add(name)
                raise

    def save_all(self) -> None:
        """Every slot moved since its last save, and the slots' statistics: at shutdown."""
        with self._lock:
            names = list(self._dirty)
        for name in names:
            self.save_if_dirty(name)
        self._save_stats()

    # -- statistics (pg_stat_replication_slots) ------------------------------------------
    def add_stats(self, name: str, counts: dict[str, int]) -> None:
        """What a decoding session of slot ``name`` counted since it last reported
        (UpdateDecodingStats); nothing for a slot dropped meanwhile."""
        with self._lock:
            stats = self._stats.get(name)
            if stats is not None:
                stats.add(counts)

    def stats_rows(self) -> list[dict[str, Any]]:
        """pg_stat_replication_slots: a row per logical slot."""
        with self._lock:
            return [
                {
                    "slot_name": name, **dataclasses.asdict(self._stats[name]),
                    "stats_reset": pg_to_datetime(self._stats_reset[name]) if self._stats_reset.get(name) else None,
                }
                for name, sl in self._slots.items()
                if sl.kind == "logical" and name in self._stats
            ]  # fmt: skip

    def reset_stats(self, name: str | None) -> None:
        """pg_stat_reset_replication_slot: one slot's counts (a physical slot has none), or
        every slot's with None."""
        now = pg_now()
        with self._lock:
            if name is not None and name not in self._slots:
                raise PgError("22023", f'replication slot "{name}" does not exist')
            for n in [name] if name is not None else list(self._stats):
                if n in self._stats:
                    self._stats[n] = DecodingStats()
                    self._stats_reset[n] = now

    def _load_stats(self) -> dict[str, tuple[dict[str, int], int]]:
        try:
            saved = json.loads(self._stats_file.read_text())
            self._stats_file.unlink()  # (a crash before the next shutdown forgets them)
        except (OSError, ValueError):
            return {}
        return {name: (dict(v["counts"]), int(v.get("reset", 0))) for name, v in saved.items()}

    def _save_stats(self) -> None:
        with self._lock:
            saved = {
                n: {"counts": dataclasses.asdict(st), "reset": self._stats_reset.get(n, 0)} for n, st in self._stats.items()
            }
        try:
            self._stats_file.parent.mkdir(exist_ok=True)
            self._stats_file.write_text(json.dumps(saved))
        except OSError:
            log.warning("could not write %s", self._stats_file)

    def enable_two_phase(self, name: str, at: int) -> Slot:
        """A decoding session asked for ``two_phase`` on a slot without it: two-phase
        decoding from ``at`` (where that session starts) on, saved at once, as
        CreateDecodingContext marks and saves the slot."""
        with self._lock:
            slot = self._existing(name)
            if not slot.two_phase:
                slot = self._slots[name] = replace(slot, two_phase=True, two_phase_at=at)
        self._save(slot)
        return slot

    def alter(self, name: str, *, two_phase: bool | None = None, failover: bool | None = None) -> Slot:
        with self._lock:
            slot = self._existing(name)
            if two_phase is not None:
                slot = replace(slot, two_phase=two_phase)
            if failover is not None:
                slot = replace(slot, failover=failover)
            self._slots[name] = slot
        self._save(slot)
        return slot


def _txn_of(ev: DecodedTxn | Prepared) -> DecodedTxn:
    return ev.txn if isinstance(ev, Prepared) else ev


def _streamed_rows(
    plugin: OutputPlugin, ev: StreamBlock | StreamAborted | DecodedTxn | Prepared
) -> list[tuple[int, int, bytes]]:
    """A streamed transaction's rows for the SQL slot functions, at the LSNs its stream
    frames carry (see ``replication.stream``), all with its top-level xid."""
    if isinstance(ev, StreamAborted):  # (its row: the (sub)transaction aborted)
        return [(ev.end_lsn, wire_xid(ev.txn.xid, ev.subxid), m) for m in plugin.stream_abort(ev)]
    out = streamed(plugin, ev)
    xid = out.txn.xid & 0xFFFFFFFF
    rows: list[tuple[int, int, bytes]] = []
    for b in out.batches:
        for m in b if isinstance(b, list) else (b.encode() if isinstance(b, RowBatch) else b).to_pylist():
            rows.append((out.lsn(plugin.stream_place(m), zero=out.first), xid, m))  # (a Relation: with the changes)
    return rows


def _two_phase_rows(plugin: OutputPlugin, ev: Prepared | Finished) -> list[tuple[int, int, bytes]]:
    """A prepared transaction's rows for the SQL slot functions, at the LSNs its stream
    frames carry (the PREPARE at the end of its record, COMMIT/ROLLBACK PREPARED at the end
    of theirs, everything else at the transaction's first LSN)."""
    txn = ev.txn
    xid = txn.xid & 0xFFFFFFFF
    rows: list[tuple[int, int, bytes]] = []
    if isinstance(ev, Prepared) or ev.replay:
        lines = [m for chunk in plugin.iter_prepare(txn, txn.catalog_csn or None) for m in chunk]
        first = txn.first_lsn or txn.prepare_lsn
        rows += [(txn.end_lsn if i == len(lines) - 1 else first, xid, m) for i, m in enumerate(lines)]
    if isinstance(ev, Finished):
        finish = plugin.commit_prepared if ev.ended.committed else plugin.rollback_prepared
        rows += [(ev.ended.end_lsn, xid, m) for m in finish(txn, ev.ended)]
    return rows


def missing_plugin(name: str) -> PgError:
    """PostgreSQL's error for an output plugin it cannot load, with a hint naming the
    plugins the proxy has (wal2json and the others are not built in)."""
    return PgError(
        "58P01", f'could not access file "{name}": No such file or directory',
        hint="The output plugins walsender-proxy has are " + " and ".join(PLUGINS) + ".",
    )  # fmt: skip
