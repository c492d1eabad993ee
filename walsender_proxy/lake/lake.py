"""The lake: one data directory holding the change log, the table store and the catalog.

:class:`Lake` owns the directory (an exclusive lock, like a postmaster's), recovers it on
open — the log's torn tail is cut, commits that were not yet folded into Parquet are replayed
from the redo position, prepared transactions come back prepared — and runs the background
work: folding the memory tail into files, checkpointing tables, and removing what no holder
needs. Reads at a CSN and the transaction API both start here: each transaction it begins
is given the lake as its :class:`~walsender_proxy.lake.tx_services.TransactionServices`
(ids, row and table locks, key checks over every open transaction's rows, the records of
its statements, its commit), the one surface through which a transaction reaches it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from decoding import records as R
from decoding.catalog import RID, Catalog, CatalogHistory, Index, Table, fill_marks
from decoding.changelog import ChangeLog, LogFailedError
from decoding.errors import PgError, disk_full_error
from decoding.lsn import format_lsn
from decoding.pgtime import pg_now
from walsender_proxy.lake.catalog_horizon import CatalogHorizon
from walsender_proxy.lake.csn import CsnClock
from walsender_proxy.lake.errors import (
    LakeError,
    key_texts,
    serialization_failure,
    snapshot_too_old,
    unique_violation,
)
from walsender_proxy.lake.files import (
    CHANGESET_ROW_GROUP,
    OP,
    OP_DELETE,
    OP_TRUNCATE,
    OP_WRITE,
    OWN_CSN,
    PARQUET_OPTIONS,
)
from walsender_proxy.lake.keyindex import SMALL, KeyIndex, PointIndexes, keys_of
from walsender_proxy.lake.origins import ReplicationOrigins
from walsender_proxy.lake.retention import Hold, HoldRegistry, hold_saved_slots
from walsender_proxy.lake.sequences import SequenceStore
from walsender_proxy.lake.settings import LakeSettings
from walsender_proxy.lake.spill import (
    FileRows,
    SpillDir,
    release_memory,
    rid_bounds,
    spill_grouped,
    tune_allocator,
)
from walsender_proxy.lake.store import OwnRows, TableStore, delta_rows, fsync_path, with_csn
from walsender_proxy.lake.transaction import Isolation, State, Transaction
from walsender_proxy.lake.tx_services import CommitInfo

log = logging.getLogger(__name__)
#: Seconds a file dropped from the manifest stays on disk at least (see collect_garbage).
TRASH_GRACE = 1.0
#: How many transactions may be prepared at once (PostgreSQL's max_prepared_transactions,
#: which the proxy reports).
MAX_PREPARED_TRANSACTIONS = 100


_UNKNOWN: tuple[bool, None, None, tuple[str, ...]] = (False, None, None, ())


def _own_version(
    chunks: list[pa.Table | FileRows], rids: set[int]
) -> tuple[bool, int | None, tuple[Any, ...] | None, tuple[str, ...]]:
    """The newest own version of the one row in ``rids``, from a transaction's pending write
    chunks (newest last); unknown when that takes more than a short search."""
    if len(rids) != 1 or len(chunks) > 64:
        return _UNKNOWN
    (rid,) = rids
    for chunk in reversed(chunks):
        if isinstance(chunk, FileRows) or chunk.num_rows > 64:
            return _UNKNOWN
        found = chunk.column(RID).to_pylist()
        if rid in found:
            row = chunk.slice(len(found) - 1 - found[::-1].index(rid), 1)
            cols = tuple(row.schema.names[4:])  # after _csn, _seq, _op, _rid
            return True, rid, tuple(row.column(c)[0].as_py() for c in cols), cols
    return _UNKNOWN


@dataclass(frozen=True, slots=True)
class ConsistentPoint:
    """Where a slot starts: every commit before ``lsn`` has CSN ≤ ``csn`` and every
    transaction with CSN ≤ ``csn`` committed before ``lsn``."""

    lsn: int
    csn: int
    #: Where decoding must start to see every transaction still open at ``lsn`` whole.
    restart_lsn: int


class Lake:
    def __init__(
        self, data_dir: str | os.PathLike[str], settings: LakeSettings | None = None
    ) -> None:
        self.dir = Path(data_dir)
        self.settings = s = settings or LakeSettings()
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lockfile = open(self.dir / "lake.lock", "a+")  # noqa: SIM115 - held for life
        try:
            fcntl.flock(self._lockfile, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lockfile.close()
            raise LakeError(
                "55006",
                f'data directory "{self.dir}" is in use by another process',
                hint="Stop the proxy that holds it, or run against the proxy over the wire.",
            ) from None
        self._lockfile.seek(0)
        self._lockfile.truncate()
        self._lockfile.write(f"{os.getpid()}\n")
        self._lockfile.flush()

        self.search_path: tuple[str, ...] = ("public",)
        self.holds = HoldRegistry()
        #: The saved slots' holds, taken before anything may collect garbage; the server's
        #: slot store adopts them (``SlotStore``).
        self.saved_slot_holds: dict[str, Hold] = hold_saved_slots(self.holds, self.dir / "slots")
        self.changesets = self.dir / "changesets"
        self.changesets.mkdir(exist_ok=True)
        for stale in self.changesets.glob("*.parquet.tmp"):  # a statement cut off by a crash
            stale.unlink(missing_ok=True)
        # Spill files die with the process that wrote them: the log is the durable copy.
        self.spill = SpillDir(self.dir / "lake-spill")
        tune_allocator()
        self.store = TableStore(
            self.dir / "tables",
            fsync=s.fsync,
            maintenance_work_mem=s.maintenance_work_mem,
            temp_dir=self.spill.path / "duckdb",
        )
        self.log = ChangeLog(self.dir / "wal", segment_size=s.segment_size, fsync=s.fsync)

        st = self.store.state
        self.history = (
            CatalogHistory.from_json(st["catalog"]) if "catalog" in st else CatalogHistory()
        )
        self._folded_lsn: int = st.get("folded_lsn", 0)
        self._redo_lsn: int = st.get("redo_lsn", self.log.oldest_lsn)
        self._floor_csn: int = st.get("floor_csn", 0)
        self._next_xid: int = st.get("next_xid", 1)
        self._next_rid: int = st.get("next_rid", 1)
        self._next_oid: int = max(st.get("next_oid", 0), self.history.latest.next_oid)
        self._catalog_marks = CatalogHorizon(st.get("catalog_passed", ()))

        self._catalog_mutex = threading.Lock()
        self._dml_lock = threading.RLock()  # statement-level: checks + row locks + writes
        #: Each table's unique keys for the (own, newest) versions they were found for.
        self._unique_cache: dict[int, tuple[Table, Table | None, list[_Unique]]] = {}
        self._commit_lock = threading.Lock()  # commit record append vs. fold boundary
        self._catalog_owner: Transaction | None = None
        self._catalog_cond = threading.Condition(self._catalog_mutex)
        self._active: dict[int, Transaction] = {}
        #: The newest xid that ended (committed or aborted): a snapshot's xmax is one past it.
        self._latest_completed = 0
        self.prepared: dict[str, Transaction] = {}
        self._unapplied: dict[int, int] = {}  # commit lsn -> first lsn, written not applied
        self._unfolded: dict[int, int] = {}  # commit lsn -> first lsn, applied not folded
        self._fold_mutex = threading.Lock()
        self._trash: list[tuple[float, frozenset[int], list[str]]] = []
        self._closed = False
        #: Aborts a full disk kept out of the log, written by the background work later.
        self._unlogged_aborts: list[R.Abort] = []
        self._quiet_until = 0.0  # (a background failure from a full disk is said once a minute)

        #: Replication origins (read before the replay, which moves their progress).
        self.origins = ReplicationOrigins(self.dir / "replorigin.json", s.fsync)
        last_csn = self._recover(st.get("last_csn", 0))
        self._latest_completed = self._next_xid - 1  # (what is still open after recovery: prepared)
        self.clock = CsnClock(last_csn)
        #: Sequence counters (not transactional); those of sequences that are gone (dropped,
        #: or made by a transaction that did not commit) are forgotten here.
        self.sequences = SequenceStore(self.dir / "sequences.json", s.fsync)
        live = {(sq.oid, sq.generation) for sq in self.history.latest.sequences.values()}
        for ptx in self.prepared.values():
            for op in ptx.catalog_ops:
                if op.get("op") == "put_sequence":
                    live.add((int(op["sequence"]["oid"]), int(op["sequence"].get("generation", 0))))
        self.sequences.forget(live)
        self._note_catalog_passed()  # (versions replayed from the log: passed at its end)
        # Key indexes and row versions for point operations (keyindex.py): they follow
        # every commit applied from now on; anything older is looked up in the files.
        self._points = PointIndexes(last_csn, s.key_index_rows, s.row_cache_rows)
        self._commits_since_prune = 0
        self._stop = threading.Event()
        self._bg: threading.Thread | None = None
        if s.background:
            self._bg = threading.Thread(target=self._background, name="lake-fold", daemon=True)
            self._bg.start()

    # -- recovery ------------------------------------------------------------------------
    def _recover(self, last_csn: int) -> int:
        """Replay the log from the redo position: rebuild the memory tail of commits not yet
        folded, the catalog versions they made, and prepared transactions."""
        txs: dict[int, _Replay] = {}
        max_csn = last_csn
        started = time.monotonic()
        n = 0
        saved_catalog_csn = self.history.latest_csn
        for e in self.log.read(max(self._redo_lsn, self.log.oldest_lsn)):
            n += 1
            rec = e.record
            if isinstance(rec, R.Frontier):
                self._next_xid = max(self._next_xid, rec.next_xid)
                self._next_rid = max(self._next_rid, rec.next_rid)
                continue
            xid = rec.xid
            newest = max(xid, getattr(rec, "subxid", 0))  # (a subtransaction's xid too)
            if newest:
                self._next_xid = max(self._next_xid, newest + 1)
            if isinstance(
                rec, (R.Change, R.Changeset, R.Truncate, R.CatalogChange, R.Message, R.SubAbort)
            ):
                if isinstance(rec, R.Message) and not rec.transactional:
                    continue
                tx = txs.setdefault(xid, _Replay(e.lsn))
                tx.add(rec, self)
            elif isinstance(rec, R.Prepare):
                replay = txs.setdefault(xid, _Replay(e.lsn))
                replay.gid, replay.prepared_at = rec.gid, rec.prepare_ts
            elif isinstance(rec, (R.Commit, R.CommitPrepared)):
                max_csn = max(max_csn, rec.csn)
                if isinstance(rec, R.Commit) and rec.origin:
                    self.origins.replay_commit(rec.origin, rec.origin_lsn, e.end_lsn)
                tx = txs.pop(xid, None)
                if tx is not None and e.lsn < self._folded_lsn:
                    tx.discard()
                if tx is None or e.lsn < self._folded_lsn:
                    continue
                if tx.ops and rec.csn > saved_catalog_csn:
                    self.history.add(rec.csn, tx.ops)
                    self._next_oid = max(self._next_oid, self.history.latest.next_oid)
                rows, files = tx.committed_rows(rec.csn)
                if rows or files:
                    self.store.add_commit(e.lsn, rec.csn, rows, files)
                self._unfolded[e.lsn] = tx.first_lsn
            elif isinstance(rec, (R.Abort, R.RollbackPrepared)):
                gone = txs.pop(xid, None)
                if gone is not None:
                    gone.discard()
        for xid, tx in txs.items():
            if tx.gid is not None:
                self._restore_prepared(xid, tx)
            else:  # in progress at the crash: it never committed; say so for decoders
                tx.discard()
                self.log_abort(xid)
        self.log.flush()
        if n:
            log.info(
                "lake: replayed %d records from %s in %.2fs (%d prepared transactions)",
                n,
                format_lsn(self._redo_lsn),
                time.monotonic() - started,
                len(self.prepared),
            )
        return max_csn

    def _restore_prepared(self, xid: int, rp: _Replay) -> None:
        assert rp.gid is not None
        tx = Transaction(self)
        tx.restore_prepared(xid, rp.first_lsn, rp.gid, rp.seq, rp.pending, rp.ops)
        tx.prepared_at = rp.prepared_at
        self._active[xid] = tx
        self.prepared[rp.gid] = tx
        if rp.ops:
            self._catalog_owner = tx

    # -- basic services ------------------------------------------------------------------
    @property
    def frontier(self) -> int:
        """The CSN frontier: reads at or below it are stable."""
        return self.clock.frontier

    def wait_for_frontier(self, csn: int, timeout: float | None = None) -> bool:
        return self.clock.wait_for(csn, timeout)

    def catalog_at(self, csn: int) -> Catalog:
        with self._catalog_mutex:
            return self.history.at(csn)

    @property
    def catalog(self) -> Catalog:
        return self.catalog_at(self.frontier)

    def catalog_hold_at(self, lsn: int) -> int:
        """The catalog hold (a CSN, see ``catalog_horizon``) of a decoder that sends no
        commit before ``lsn`` again: a slot's ``catalog_xmin`` once it has confirmed ``lsn``."""
        self._note_catalog_passed()
        return self._catalog_marks.at(lsn)

    def _note_catalog_passed(self) -> None:
        """Note where in the log the catalog versions the frontier has reached are passed
        (the insert position read after the frontier). Cheap when there is nothing new."""
        marks = self._catalog_marks
        if self.history.latest_csn <= marks.noted_upto:
            return
        frontier = self.frontier
        lsn = self.log.insert_lsn
        with self._catalog_mutex:
            pending = [c for c, _ in self.history.versions() if c > marks.noted_upto]
        marks.note(pending, frontier, lsn)

    def catalog_history_json(self) -> list[Any]:
        """Every catalog version kept, for a decoder in another process to start from."""
        with self._catalog_mutex:
            return self.history.to_json()

    def begin(
        self,
        isolation: Isolation | str = Isolation.READ_COMMITTED,
        *,
        read_only: bool = False,
        snapshot_csn: int | None = None,
        origin: str = "",
    ) -> Transaction:
        """Start a transaction. ``snapshot_csn`` imports a snapshot (``SET TRANSACTION
        SNAPSHOT``): it waits until the frontier reaches it."""
        iso = isolation if isinstance(isolation, Isolation) else Isolation(isolation.lower())
        if snapshot_csn is not None:
            if snapshot_csn < self._floor_csn:
                raise snapshot_too_old(snapshot_csn, self._floor_csn)
            if not self.wait_for_frontier(snapshot_csn, self.settings.lock_timeout):
                raise LakeError("55P03", f"snapshot CSN {snapshot_csn} is not reached yet")
        return Transaction(self, iso, read_only=read_only, snapshot_csn=snapshot_csn, origin=origin)

    def read(
        self,
        table: str | Table,
        csn: int | None = None,
        *,
        where: str | None = None,
        params: Sequence[Any] | None = None,
        with_rid: bool = False,
        timeout: float | None = None,
    ) -> pa.Table:
        """The rows of ``table`` in the snapshot ``csn`` (default: the frontier). A CSN past
        the frontier waits for it, so the answer never misses an out-of-order commit."""
        if csn is None:
            csn = self.frontier
        elif not self.wait_for_frontier(
            csn, self.settings.lock_timeout if timeout is None else timeout
        ):
            raise LakeError("55P03", f"snapshot CSN {csn} is not reached yet")
        t = (
            table
            if isinstance(table, Table)
            else self.catalog_at(csn).resolve_table(table, self.search_path)
        )
        return self.read_at(t, csn, where=where, params=list(params or []), with_rid=with_rid)

    def read_at(
        self,
        t: Table,
        csn: int,
        *,
        own: OwnRows | None = None,
        with_rid: bool = False,
        where: str | None = None,
        params: list[Any] | None = None,
        physical: bool = False,
    ) -> pa.Table:
        if csn < self._floor_csn:
            raise snapshot_too_old(csn, self._floor_csn)
        with self.holds.hold("read", csn=csn):
            return self.store.read(
                t, csn, own=own, with_rid=with_rid, where=where, params=params, physical=physical
            )

    def clean_point(self, timeout: float | None = None) -> ConsistentPoint:
        """A clean consistent point (ARCHITECTURE §3): no commit in flight across it."""
        with self.clock.barrier(self.settings.lock_timeout if timeout is None else timeout) as csn:
            with self._commit_lock:
                lsn = self.log.insert_lsn
                firsts = [t.first_lsn for t in self._active.values() if t.first_lsn is not None]
            # The point must be durable: streams send only what is flushed, and a tablesync
            # worker reports the point as how far it got.
            self.log.flush(lsn)
            return ConsistentPoint(lsn, csn, min([lsn, *firsts]))

    def staging_dir(self) -> Path:
        """Where pipeline jobs on this machine stage changesets and checkpoints (the same
        filesystem as the table store, so adopting a file is a rename)."""
        d = self.dir / "staging"
        d.mkdir(exist_ok=True)
        return d

    def message(self, prefix: str, payload: bytes | str) -> int:
        """A non-transactional logical message, outside any transaction."""
        data = payload.encode() if isinstance(payload, str) else bytes(payload)
        lsn, end = self.log.append(R.Message(0, 0, False, prefix, data))
        self.log.flush(end)
        return lsn

    # -- services for transactions (tx_services.TransactionServices) ---------------------
    @property
    def dml_lock(self) -> threading.RLock:
        """The statement lock: a statement's checks, row locks and writes are one step
        among all transactions' (reentrant: a cascade runs inside its statement's)."""
        return self._dml_lock

    @property
    def catalog_owner(self) -> Transaction | None:
        """The transaction holding the catalog lock (its DDL in the making binds other
        transactions' writes: keys, checks, foreign keys); None when no DDL is open."""
        return self._catalog_owner

    def register_xid(self, tx: Transaction) -> int:
        with self._commit_lock:
            xid = self._next_xid
            self._next_xid += 1
            # Conservative first position: the redo computation may not miss it.
            tx.first_lsn = self.log.insert_lsn
            self._active[xid] = tx
            return xid

    def allocate_xid(self) -> int:
        """A fresh xid for a subtransaction (its transaction is registered by its own)."""
        with self._commit_lock:
            xid = self._next_xid
            self._next_xid += 1
            return xid

    def xid_snapshot(self, own: int | None = None) -> str:
        """The transaction-id snapshot ``txid_current_snapshot()`` / ``pg_current_snapshot()``
        show, as GetSnapshotData makes it: ``xmin:xmax:xip`` — xmax one past the newest
        xid that ended (a transaction given a later one is not yet seen), the running xids
        below it but ``own`` (left out), xmin the oldest of them with ``own``."""
        with self._commit_lock:
            xmax = self._latest_completed + 1
            running = sorted(x for x in self._active if x < xmax)
        xmin = min([*running, *([own] if own and own < xmax else [])], default=xmax)
        return f"{xmin}:{xmax}:" + ",".join(str(x) for x in running if x != own)

    def forget_transaction(self, tx: Transaction) -> None:
        with self._commit_lock:
            if tx.xid is not None:
                self._active.pop(tx.xid, None)
                self._latest_completed = max(self._latest_completed, tx.xid)
            if tx.gid is not None and self.prepared.get(tx.gid) is tx:
                del self.prepared[tx.gid]
        with self._catalog_cond:
            if self._catalog_owner is tx:
                self._catalog_owner = None
                self._catalog_cond.notify_all()

    def other_transactions(self, tx: Transaction) -> list[Transaction]:
        """The other live transactions (a copy: writers come and go concurrently)."""
        with self._commit_lock:
            return [t for t in self._active.values() if t is not tx]

    def allocate_rids(self, n: int) -> np.ndarray:
        with self._commit_lock:
            start = self._next_rid
            self._next_rid += n
        return np.arange(start, start + n, dtype=np.int64)

    def allocate_oid(self) -> int:
        with self._commit_lock:
            oid = self._next_oid
            self._next_oid += 1
            return oid

    def take_catalog_lock(self, tx: Transaction) -> None:
        """One transaction at a time changes the catalog, so catalog versions are made in
        CSN order. Others wait, up to lock_timeout (then 55P03, as with lock_timeout)."""
        with self._catalog_cond:
            if self._catalog_owner is tx:
                return
            ok = self._catalog_cond.wait_for(
                lambda: self._catalog_owner is None, self.settings.lock_timeout
            )
            if not ok:
                raise LakeError("55P03", "canceling statement due to lock timeout")
            self._catalog_owner = tx

    def change_record(
        self, xid: int, subxid: int, relid: int, op: str, new: pa.Table | None, old: pa.Table | None
    ) -> R.Record | Callable[[int], R.Record]:
        # The total buffer size bounds nbytes from above and costs nothing; nbytes (exact
        # for slices, but a pass over the data even for one row) only decides when the
        # bound is too big.
        size = sum(t.get_total_buffer_size() for t in (new, old) if t is not None)
        if size >= self.settings.changeset_bytes:
            size = sum(t.nbytes for t in (new, old) if t is not None)
        if size < self.settings.changeset_bytes:
            return R.Change(xid, subxid, relid, op, new, old)
        # Bulk: rows go to Parquet beside the log and the record names the files. The
        # files are renamed after the record's own LSN (inside the log's append lock), so log
        # truncation knows exactly when they can go.
        tmps: dict[str, Path] = {}
        for kind, tbl in (("new", new), ("old", old)):
            if tbl is not None:
                tmp = self.changeset_tmp(xid, kind)
                pq.write_table(
                    tbl.replace_schema_metadata(None),
                    tmp,
                    row_group_size=CHANGESET_ROW_GROUP,
                    **PARQUET_OPTIONS,
                )
                if self.settings.fsync:
                    fsync_path(tmp)
                tmps[kind] = tmp
        rows = new if new is not None else old
        assert rows is not None
        return _ChangesetAt(self, xid, subxid, relid, op, tmps, rows.num_rows, rows.column_names)

    def changeset_file_record(
        self, xid: int, subxid: int, relid: int, tmp: Path, num_rows: int, columns: list[str]
    ) -> _ChangesetAt:
        """The Changeset record of an INSERT whose rows were written to ``tmp`` as they
        came (:meth:`Transaction.apply_insert_batches`); ``tmp`` is already synced."""
        return _ChangesetAt(self, xid, subxid, relid, "I", {"new": tmp}, num_rows, columns)

    def changeset_tmp(self, xid: int, kind: str = "new") -> Path:
        """A fresh temporary name for a statement's changeset file (renamed after the
        record's LSN once logged; leftovers are removed when the lake opens)."""
        return self.changesets / f"{xid}-{time.time_ns()}-{kind}.parquet.tmp"

    def lock_rows(self, tx: Transaction, t: Table, rids: pa.Array, snapshot_csn: int) -> None:
        """First updater wins: a row written by another open transaction, or committed
        after this statement's snapshot, is a serialization failure (40001)."""
        with self._dml_lock:
            small = rids.to_pylist() if len(rids) <= SMALL else None
            for other in self.other_transactions(tx):
                if other.has_truncated(t.oid):
                    raise serialization_failure()
                held, big = other.locked_rids(t.oid)
                if held:
                    if small is not None:
                        if not held.isdisjoint(small):
                            raise serialization_failure()
                    elif pc.any(pc.is_in(rids, value_set=pa.array(held, pa.int64()))).as_py():
                        raise serialization_failure()
                for arr in big:
                    if pc.any(pc.is_in(rids, value_set=arr)).as_py():
                        raise serialization_failure()
            if self._changed_since(t, snapshot_csn, rids, small):
                raise serialization_failure()

    def lock_table(self, tx: Transaction, t: Table) -> None:
        with self._dml_lock:
            for other in self.other_transactions(tx):
                if other is not tx and other.touches(t.oid):
                    raise serialization_failure()

    def check_not_truncated(self, tx: Transaction, t: Table) -> None:
        """TRUNCATE holds the table exclusively until it ends (AccessExclusiveLock)."""
        with self._dml_lock:
            for other in self.other_transactions(tx):
                if other is not tx and other.has_truncated(t.oid):
                    raise serialization_failure()

    def _changed_since(
        self, t: Table, csn: int, rids: pa.Array, rid_list: list[int] | None = None
    ) -> bool:
        """Whether a commit after ``csn`` wrote one of ``rids`` or truncated the table: the
        version map knows for recent snapshots; older ones ask the files."""
        with self._dml_lock:
            known = self._points.changed_since(
                t.oid, csn, rid_list if rid_list is not None else rids.to_numpy()
            )
        if known is not None:
            return known
        q = self.store.changes_after(t, csn)
        if q is None:
            return False
        cur = self.store.cursor()
        try:
            q.register(cur)
            cur.register("_targets", pa.table({RID: rids}))
            sql = f"SELECT 1 FROM ({q.sql}) d WHERE _op = {OP_TRUNCATE} OR _rid IN (SELECT _rid FROM _targets) LIMIT 1"
            return bool(cur.execute(sql).fetchall())
        finally:
            cur.close()

    def key_index(self, t: Table) -> KeyIndex | None:
        """The table's key index (keyindex.py), built from the newest applied state the
        first time (caller holds the statement lock)."""

        def build(cols: tuple[str, ...], rcols: tuple[str, ...]) -> pa.Table | None:
            _, base, deltas = self.store.files_at(t.oid, OWN_CSN - 1)
            if base is not None and base.rows > self.settings.key_index_rows:
                return None  # its checkpoint alone is over the limit: do not read it all
            estimate = (base.rows if base is not None else 0) + sum(d.rows for d in deltas)
            estimate += self.store.mem_rows(t.oid)
            if estimate > 4 * self.settings.key_index_rows:
                return None  # (rows ever written, an upper bound): not worth reading them all
            if estimate > self.settings.row_cache_rows:
                rcols = ()  # too many rows to cache their values: the keys only
            q = self.store.snapshot_query(t, OWN_CSN - 1, with_rid=True, physical=True)
            sel = ", ".join(f'"{c}"' for c in dict.fromkeys([RID, *cols, *rcols]))
            cur = self.store.cursor()
            try:
                q.register(cur)
                return cur.sql(f"SELECT {sel} FROM ({q.sql})").to_arrow_table()
            finally:
                cur.close()

        return self._points.key_index(t, build, self.clock.last_assigned)

    def point_read(
        self, tx: Transaction, t: Table, key: tuple[Any, ...]
    ) -> tuple[bool, int | None, tuple[Any, ...] | None, tuple[str, ...]]:
        """The row whose primary key is ``key`` as ``tx``'s statement snapshot sees it, from
        the key index and row cache: ``(known, rid, values, physical columns)``; ``rid`` is
        None when no row has the key. ``known`` False: only the DuckDB path can tell (the
        transaction wrote the table, the row changed after the snapshot, no cache)."""
        csn = tx.statement_csn()
        k = key if len(key) > 1 else key[0]
        with self._dml_lock:
            idx = self.key_index(t)
            if idx is None or idx.rows is None:
                return _UNKNOWN
            mine = tx.pending_by_table().get(t.oid)
            if mine is not None:  # the transaction wrote the table: its own versions first
                own = tx.own_keys(t.oid)
                if own is None or mine.truncated:
                    return _UNKNOWN
                rids = own.live.get(k)
                if rids:
                    return _own_version(mine.chunks, rids)
            known, rid = idx.lookup(k, csn)
            if not known:
                return _UNKNOWN
            if rid is not None and mine is not None and rid in own.newest:
                rid = None  # deleted or moved to another key by this transaction
            if rid is None:
                return True, None, None, idx.row_cols
            if self._points.last_write(t.oid, rid, csn) != 0:
                return _UNKNOWN  # written after the snapshot (or not known since when)
            values = idx.row(rid)
            if values is None:
                return _UNKNOWN
            return True, rid, values, idx.row_cols

    def _check_unique_indexed(
        self,
        tx: Transaction,
        t: Table,
        new: pa.Table,
        exclude: pa.Array | pa.ChunkedArray | None,
    ) -> bool:
        """The key check by the key index; False when it cannot decide (then DuckDB does).
        Same rules as :meth:`check_unique`."""
        if new.num_rows > SMALL or tx.has_truncated(t.oid):
            return False  # (after its own TRUNCATE the committed keys are not its business)
        own = tx.own_keys(t.oid)
        if own is None:
            return False
        idx = self.key_index(t)
        if idx is None:
            return False
        keys = keys_of(new, idx.cols)
        excl = set(exclude.to_pylist()) if exclude is not None else ()
        hit = None
        seen: set[Any] = set()
        for k in keys:
            if k in seen:
                hit = k
                break
            seen.add(k)
        if hit is None:
            newest, live = own.newest, own.live
            for k in keys:
                r = idx.map.get(k)
                if r is not None and r not in excl and r not in newest:
                    hit = k  # a committed row holds it (and this transaction kept it)
                    break
                mine = live.get(k)
                if mine and any(r not in excl for r in mine):
                    hit = k
                    break
        if hit is None:
            for other in self.other_transactions(tx):
                rp = other.pending_by_table().get(t.oid)
                if rp is None or not rp.chunks:
                    continue
                if rp.files:
                    return False  # its keys are partly in files: DuckDB reads them there
                try:
                    hit = rp.pending_writes(idx.cols).hit(keys, idx.cols)
                except LookupError:
                    return False
                if hit is not None:
                    break
        if hit is not None:
            raise _duplicate_key(t, None, list(hit) if len(idx.cols) > 1 else [hit])
        return True

    def _unique_keys(self, tx: Transaction, t: Table) -> list[_Unique]:
        """The unique keys a write to ``t`` is checked against: those of ``tx``'s own view
        of the table, of the newest committed catalog (an index made since its snapshot
        binds it too, as PostgreSQL's relcache sees it) and of the catalog an open CREATE
        INDEX is making (PostgreSQL's writer would wait on that index's lock; here the
        index binds at once). By physical column names, which renames do not change."""
        versions = [t]
        newest = self.catalog_at(self.clock.last_assigned).tables.get(t.oid)
        if newest is not None and newest is not t and newest.indexes:
            versions.append(newest)
        owner = self._catalog_owner
        settled = owner is None or owner is tx  # (no other transaction's DDL in the making)
        if not settled:
            making = owner.ddl_catalog().tables.get(t.oid)  # type: ignore[union-attr]
            if making is not None and making.indexes:
                versions.append(making)
        elif (hit := self._unique_cache.get(t.oid)) is not None and hit[0] is t and hit[1] is newest:
            return hit[2]  # (the same table versions as last time: the same keys)
        keys = self._unique_keys_of(t, versions)
        if settled:
            self._unique_cache[t.oid] = (t, newest, keys)
        return keys

    @staticmethod
    def _unique_keys_of(t: Table, versions: list[Table]) -> list[_Unique]:
        if len(versions) == 1 and not t.indexes:  # (the usual case: the primary key alone)
            if not t.primary_key:
                return []
            phys = tuple(t.column(k).physical for k in t.primary_key)  # type: ignore[union-attr]
            return [_Unique(t.pkey_name, t.primary_key, phys, True, True)]
        # (one check per column set, NULL treatment and predicate: NULLS NOT DISTINCT
        # refuses what a plain unique index on the same columns accepts)
        out: dict[tuple[tuple[str, ...], bool, str], _Unique] = {}
        for v in versions:
            by_name = {c.name: c.physical for c in v.columns}
            by_num = {c.attnum: c.physical for c in v.columns}
            for k in v.unique_keys():
                phys = tuple(by_name[c] for c in k.columns)
                where = fill_marks(k.where, {n: f'"{p}"' for n, p in by_num.items()}) if k.where else ""
                if (phys, k.nulls_not_distinct, where) not in out or k.name == t.pkey_name:
                    out[phys, k.nulls_not_distinct, where] = _Unique(
                        k.name, k.columns, phys, k.nulls_not_distinct, k.name == t.pkey_name and bool(t.primary_key),
                        where, tuple(by_num[n] for n in k.where_attnums),
                        tuple(c.name for c in v.columns if c.attnum in k.where_attnums),
                    )  # fmt: skip
        return list(out.values())

    def unique_key_columns(self, tx: Transaction, t: Table) -> list[str]:
        """Physical names of every column some unique key of ``t`` has."""
        return list(dict.fromkeys(c for k in self._unique_keys(tx, t) for c in (*k.physical, *k.where_columns)))

    def check_unique(
        self,
        tx: Transaction,
        t: Table,
        new: pa.Table,
        exclude: pa.Array | pa.ChunkedArray | None,
        changed: frozenset[str] | None = None,
    ) -> None:
        """Refuse keys that another live row holds: committed (newest state, not just this
        snapshot's, as a unique index would), this transaction's own, or another open
        transaction's pending rows. Only rows that ever had one of the new keys are merged.
        Each unique key in turn: the primary key, then the unique indexes (rows with a null
        in one are not checked unless the index has NULLS NOT DISTINCT)."""
        with self._dml_lock:
            for key in self._unique_keys(tx, t):
                if changed is not None and not changed & {*key.columns, *key.where_names}:
                    continue
                rows = new if key.nulls_not_distinct else _with_no_null(new, key.physical)
                if key.where and rows.num_rows:
                    rows = self._rows_where(rows, key.where)  # (a partial index holds those alone)
                if rows.num_rows == 0:
                    continue
                if key.primary and self._check_unique_indexed(tx, t, rows, exclude):
                    continue
                self._check_unique_duckdb(tx, t, rows, exclude, key)

    def _rows_where(self, rows: pa.Table, where: str) -> pa.Table:
        """The rows ``where`` (a DuckDB predicate over physical names) holds for."""
        cur = self.store.cursor()
        try:
            cur.register("_rows", rows)
            return cur.sql(f"SELECT * FROM _rows WHERE {where}").to_arrow_table()
        finally:
            cur.close()

    def check_unique_build(self, tx: Transaction, t: Table, ix: Index) -> None:
        """CREATE UNIQUE INDEX over rows already there: the newest committed state with
        ``tx``'s own changes, and other transactions' pending rows (PostgreSQL's build
        waits for their writers to end; here their rows count as if they will commit).
        23505 ``could not create unique index`` with the first duplicated key."""
        by_name = {c.name: c.physical for c in t.columns}
        phys = [by_name[c] for c in ix.columns]
        key_list = ", ".join(f'"{k}"' for k in phys)
        not_null = "" if ix.nulls_not_distinct else " AND ".join(f'"{k}" IS NOT NULL' for k in phys)
        by_num = {c.attnum: c.physical for c in t.columns}
        where = ""
        reads = list(phys)
        if ix.predicate is not None:  # (a partial index: the rows it holds)
            where = fill_marks(ix.predicate.duck, {n: f'"{p}"' for n, p in by_num.items()})
            reads += [by_num[n] for n in ix.predicate.attnums if by_num[n] not in reads]
        with self._dml_lock:
            latest = self.store.snapshot_query(t, OWN_CSN - 1, own=tx.own_parts(t.oid), with_rid=True, physical=True)
            pool = f"SELECT _rid, {key_list} FROM ({latest.sql})" + (f" WHERE {where}" if where else "")
            others, other_files = self.others_pending(tx, t, reads, with_rid=True, where=where)
            cur = self.store.cursor()
            try:
                latest.register(cur)
                for i, o in enumerate(others):
                    cur.register(f"_oth{i}", o)
                    pool += f" UNION SELECT _rid, {key_list} FROM _oth{i}" + (f" WHERE {where}" if where else "")
                for f in other_files:
                    pool += f" UNION SELECT _rid, {key_list} FROM ({f})"
                nn = f"WHERE {not_null}" if not_null else ""
                sql = (
                    f"SELECT {key_list} FROM (SELECT DISTINCT * FROM ({pool})) {nn} "
                    f"GROUP BY ALL HAVING count(*) > 1 LIMIT 1"
                )
                hit = [tuple(r.values()) for r in cur.sql(sql).to_arrow_table().to_pylist()]
            finally:
                cur.close()
        if hit:
            vals = ", ".join("null" if v is None else v for v in key_texts(t, ix.columns, hit[0]))
            raise LakeError(
                "23505",
                f'could not create unique index "{ix.name}"',
                detail=f"Key ({', '.join(ix.columns)})=({vals}) is duplicated.",
            ).about(schema=t.schema, table=t.name, constraint=ix.name)

    def others_pending(
        self, tx: Transaction, t: Table, cols: Sequence[str], *, with_rid: bool = False, where: str = ""
    ) -> tuple[list[pa.Table], list[str]]:
        """Other open transactions' pending row versions of ``t`` with all of ``cols`` (a
        delete's chunk, ``_rid`` alone, has none): those in memory as tables of ``cols``
        (and ``_rid``), those in files as queries over them (rows matching ``where``)."""
        chunks: list[pa.Table] = []
        files: list[str] = []
        picked = ", ".join(f'"{c}"' for c in ([RID, *cols] if with_rid else cols))
        for o in self.other_transactions(tx):
            rp = o.pending_by_table().get(t.oid)
            for c in rp.chunks if rp is not None else ():
                if isinstance(c, FileRows):
                    if set(cols) <= set(c.columns):
                        files.append(f"SELECT {picked} FROM ({c.sql(OWN_CSN, list(cols))})" + (f" WHERE {where}" if where else ""))
                elif c.num_rows and set(cols) <= set(c.column_names):
                    chunks.append(c.select([RID, *cols] if with_rid else list(cols)))
        return chunks, files

    def check_no_nulls(self, tx: Transaction, t: Table, column: str) -> None:
        """SET NOT NULL over rows already there (newest committed, own, others' pending:
        PostgreSQL's ALTER waits for their writers): 23502 if one has a NULL."""
        col = t.column(column)
        assert col is not None
        phys = col.physical
        with self._dml_lock:
            latest = self.store.snapshot_query(t, OWN_CSN - 1, own=tx.own_parts(t.oid), with_rid=True, physical=True)
            chunks, files = self.others_pending(tx, t, [phys], where=f'"{phys}" IS NULL')
            found = any(c.column(phys).null_count for c in chunks)
            queries = [f'SELECT 1 FROM ({latest.sql}) WHERE "{phys}" IS NULL', *files]
            queries = [f"{q} LIMIT 1" for q in queries]
            cur = self.store.cursor()
            try:
                latest.register(cur)
                found = found or any(cur.sql(q).fetchall() for q in queries)
            finally:
                cur.close()
        if found:
            raise LakeError("23502", f'column "{column}" of relation "{t.name}" contains null values').about(
                schema=t.schema, table=t.name, column=column
            )

    def _check_unique_duckdb(
        self,
        tx: Transaction,
        t: Table,
        new: pa.Table,
        exclude: pa.Array | pa.ChunkedArray | None,
        key: _Unique,
    ) -> None:
        keys = list(key.physical)
        key_list = ", ".join(f'"{k}"' for k in keys)
        nnd = key.nulls_not_distinct and not key.primary  # (NULL keys compare equal)
        eq = "IS NOT DISTINCT FROM" if nnd else "="
        in_new = "TRUE" if nnd else f"({key_list}) IN (SELECT {key_list} FROM _new)"
        params: list[Any] = []
        # A single integer key (a bulk load's usual case) is checked against itself in
        # numpy (a sort: 8 bytes a row, where DuckDB's GROUP BY built a hash table), and
        # the other rows are read only within the new keys' range: Parquet statistics skip
        # every row group outside it, so each 1M-row INSERT of ascending keys no longer
        # reads every row the earlier ones wrote.
        one_int = (
            len(keys) == 1
            and new.num_rows > 256
            and pa.types.is_integer(new.schema.field(keys[0]).type)
            and not new.column(keys[0]).null_count
        )
        if one_int:
            ordered = np.sort(new.column(keys[0]).to_numpy())
            same = np.flatnonzero(ordered[1:] == ordered[:-1])
            if same.size:
                raise _duplicate_key(t, key, [int(ordered[same[0]])])
            params += [int(ordered[0]), int(ordered[-1])]
            in_new = f'"{keys[0]}" BETWEEN $1 AND $2 AND {in_new}'
            del ordered, same
        elif new.num_rows <= 256:
            # Few keys: spell them out, so the scans prune row groups by their statistics.
            cols = [new.column(k).to_pylist() for k in keys]
            terms = []
            for row in zip(*cols, strict=True):
                conj = []
                for k, v in zip(keys, row, strict=True):
                    params.append(v)
                    conj.append(f'"{k}" {eq} ${len(params)}')
                terms.append("(" + " AND ".join(conj) + ")")
            in_new = "(" + " OR ".join(terms) + ")"
        with self._dml_lock:
            latest = self.store.snapshot_query(
                t,
                OWN_CSN - 1,
                own=tx.own_parts(t.oid),
                with_rid=True,
                physical=True,
                prefilter=in_new,
            )
            # Other transactions' pending row versions (their write chunks: deletes carry
            # just _rid); the keys only, and from files only the rows with the new keys
            # (and, for a partial index, the rows it holds).
            partial = f" AND ({key.where})" if key.where else ""
            reads = [*keys, *(c for c in key.where_columns if c not in keys)]
            others, other_files = self.others_pending(tx, t, reads, where=f"({in_new}){partial}")
            cur = self.store.cursor()
            try:
                latest.register(cur)
                cur.register("_new", new.select([RID, *keys]))
                cur.register(
                    "_excl",
                    pa.table({RID: exclude if exclude is not None else pa.array([], pa.int64())}),
                )
                pool = (
                    f"SELECT {key_list} FROM ({latest.sql}) c "
                    f"WHERE {in_new}{partial} AND _rid NOT IN (SELECT _rid FROM _excl)"
                )
                for i, o in enumerate(others):
                    cur.register(f"_oth{i}", o)
                    pool += f" UNION ALL SELECT {key_list} FROM _oth{i}" + (f" WHERE {key.where}" if key.where else "")
                for f in other_files:
                    pool += f" UNION ALL SELECT {key_list} FROM ({f})"
                on = " AND ".join(f'_new."{k}" {eq} p."{k}"' for k in keys)
                sql = f"SELECT {key_list} FROM _new SEMI JOIN ({pool}) p ON {on} LIMIT 1"
                if not one_int:  # (else checked above)
                    sql = (
                        f"SELECT {key_list} FROM _new GROUP BY ALL HAVING count(*) > 1 "
                        f"UNION ALL ({sql})"
                    )
                hit = [
                    tuple(r.values())
                    for r in cur.sql(sql, params=params or None).to_arrow_table().to_pylist()
                ]
            finally:
                cur.close()
        if hit:
            raise _duplicate_key(t, key, list(hit[0]))

    # -- ending transactions -------------------------------------------------------------
    def commit_transaction(self, tx: Transaction, csn: int | None) -> CommitInfo:
        if csn is None:  # nothing written: nothing to log
            tx.end(State.COMMITTED)
            return CommitInfo(None, None, None, None)
        assert tx.xid is not None
        resolve = True
        try:
            # Under a replication origin the record carries the origin's LSN and time,
            # and decoding sends that time as the commit's (0 when none was given, as
            # PostgreSQL's DecodeCommit takes origin_timestamp).
            rec = R.Commit(tx.xid, csn, tx.origin_ts if tx.origin else pg_now(), tx.origin, tx.origin_lsn)
            if tx.gid is not None:
                rec = R.CommitPrepared(tx.xid, tx.gid, csn, pg_now())  # type: ignore[assignment]
            info = self._write_commit(tx, rec, csn)
            if tx.origin and info.end_lsn is not None:
                self.origins.committed(tx.origin, tx.origin_lsn, info.end_lsn)
            return info
        except LogFailedError:
            # Its rows may be in memory already (see _write_commit) but are not known to be
            # durable: the frontier stays below this CSN, so no snapshot ever shows them.
            resolve = False
            raise
        except PgError:
            # The commit record could not be appended (a full disk): nothing of the commit
            # exists, and the CSN resolves with nothing behind it. A prepared transaction
            # stays prepared, as after a failed COMMIT PREPARED in PostgreSQL; any other is
            # rolled back, and its committer hears why.
            if tx.gid is not None:
                tx.state = State.PREPARED
            else:
                self.log_abort(tx.xid)
                tx.end(State.ABORTED)
            raise
        finally:
            if resolve:
                self.clock.resolve(csn)
                self._note_catalog_passed()

    def log_abort(self, xid: int) -> None:
        """Log that ``xid`` aborted. On a full disk it is noted instead and logged by the
        background work once there is room: decoders hold the transaction open until then,
        and a restart before it treats a transaction without a commit record as aborted."""
        if self.log.failed:
            return
        rec = R.Abort(xid, pg_now())
        try:
            self.log.append(rec, release=True)
        except LogFailedError:
            pass
        except PgError:
            with self._commit_lock:
                self._unlogged_aborts.append(rec)

    def _log_noted_aborts(self) -> None:
        with self._commit_lock:
            recs, self._unlogged_aborts = self._unlogged_aborts, []
        for i, rec in enumerate(recs):
            try:
                self.log.append(rec, release=True)
            except PgError:
                with self._commit_lock:
                    self._unlogged_aborts[:0] = recs[i:]
                return

    def _write_commit(self, tx: Transaction, rec: R.Record, csn: int) -> CommitInfo:
        assert tx.xid is not None and tx.first_lsn is not None
        with self._commit_lock:
            lsn, end = self.log.append(rec)
            self._unapplied[lsn] = tx.first_lsn
        ops = tx.catalog_ops
        # A small commit's rows join the store and the point indexes while its record is on
        # its way to the disk (write_behind), and the fsync comes after: the disk works
        # while we do. Nobody can see the rows before clock.resolve(csn), which comes after
        # the flush (snapshots are the frontier, and every read keeps to its snapshot), and
        # fold keeps to LSNs below _unapplied. A catalog change is applied only once
        # durable: fold writes the newest catalog into the manifest. A big commit keeps
        # the plain order too: there the fsync is small beside the apply, and in S6 the
        # early order left the server bigger while the 10M rows streamed.
        early = tx.is_small
        if early:
            self.log.write_behind()
        else:
            self.log.flush(end)
        with self._dml_lock:
            if ops:
                with self._catalog_mutex:
                    self.history.add(csn, ops)
            rows, files = tx.committed_rows(csn)
            if rows or files:
                self.store.add_commit(lsn, csn, rows, files)
                self._points.on_commit(csn, rows, tx.key_events, tx.key_inexact, files)
            xid = tx.xid
            tx.end(State.COMMITTED)
            self._commits_since_prune += 1
            if self._commits_since_prune >= 4096:
                self._prune_points()
        if early:
            self.log.flush(end)
        with self._commit_lock:
            self._unfolded[lsn] = self._unapplied.pop(lsn)
        return CommitInfo(xid, csn, lsn, end)

    def _prune_points(self, live: set[int] | None = None) -> None:
        """Let the version maps forget what no snapshot in use can ask about (caller holds
        the statement lock)."""
        self._commits_since_prune = 0
        horizon = self.frontier
        for tx in self.other_transactions(None):  # type: ignore[arg-type]
            for c in tx.snapshot_csns:
                if c is not None:
                    horizon = min(horizon, c)
        self._points.prune(horizon, live)

    def prepare_transaction(self, tx: Transaction, gid: str) -> None:
        if gid in self.prepared:
            raise LakeError("42710", f'transaction identifier "{gid}" is already in use')
        if len(self.prepared) >= MAX_PREPARED_TRANSACTIONS:
            raise LakeError(
                "53200", "maximum number of prepared transactions reached",
                hint=f"Increase max_prepared_transactions (currently {MAX_PREPARED_TRANSACTIONS}).",
            )  # fmt: skip
        xid = tx.ensure_xid()
        tx.prepared_at = pg_now()
        _, end = self.log.append(R.Prepare(xid, gid, tx.prepared_at))
        tx.gid = gid
        self.log.flush(end)
        with self._commit_lock:
            self.prepared[gid] = tx
        tx.state = State.PREPARED

    def commit_prepared(self, gid: str) -> CommitInfo:
        tx = self._prepared(gid)
        tx.state = State.COMMITTING
        return self.commit_transaction(tx, self.clock.assign())

    def rollback_prepared(self, gid: str) -> None:
        tx = self._prepared(gid)
        assert tx.xid is not None
        _, end = self.log.append(R.RollbackPrepared(tx.xid, gid, pg_now()), release=True)
        self.log.flush(end)
        tx.end(State.ABORTED)

    def _prepared(self, gid: str) -> Transaction:
        tx = self.prepared.get(gid)
        if tx is None:
            raise LakeError("42704", f'prepared transaction with identifier "{gid}" does not exist')
        return tx

    # -- background: fold, checkpoint, retention -----------------------------------------
    def fold(self) -> int:
        """Write committed rows from memory to delta files and move the redo position.
        Runs beside writers: only two short critical sections."""
        with self._fold_mutex:
            with self._commit_lock:
                boundary = min(self._unapplied, default=self.log.insert_lsn)
                firsts = [t.first_lsn for t in self._active.values() if t.first_lsn is not None]
                firsts += list(self._unapplied.values())
                firsts += [f for c, f in self._unfolded.items() if c >= boundary]
                redo = min([boundary, *firsts])
                with self._catalog_mutex:
                    catalog = self.history.to_json()
                    catalog_csn = self.history.latest_csn
            rows = self.store.fold(boundary)
            # Catalog versions past the boundary are skipped on replay by their CSN.
            del catalog_csn
            self._folded_lsn, self._redo_lsn = boundary, redo
            self._write_manifest(catalog)
            spilled = self.store.forget_folded()
            if spilled:  # readers that listed them may still open them: the trash waits
                paths = [str(f.path) for f in spilled]
                self._trash.append((time.monotonic() + TRASH_GRACE, self.holds.live_keys(), paths))
            with self._commit_lock:
                for c in [c for c in self._unfolded if c < boundary]:
                    del self._unfolded[c]
            if rows >= self.settings.fold_rows:
                release_memory()
            _, end = self.log.append(
                R.Frontier(
                    self.frontier, self._next_xid, self._next_rid, tuple(self._active), pg_now()
                )
            )
            self.log.flush(end)  # so followers of the log see positions move when idle
            return rows

    def _write_manifest(self, catalog: list[Any] | None = None) -> None:
        # Origins' progress first: the manifest may move the redo position past commits
        # that moved it, and replay starts there.
        self.origins.save_if_dirty()
        if catalog is None:
            with self._catalog_mutex:
                catalog = self.history.to_json()
        self.store.write_manifest(
            {
                "folded_lsn": self._folded_lsn,
                "redo_lsn": self._redo_lsn,
                "floor_csn": self._floor_csn,
                "next_xid": self._next_xid,
                "next_rid": self._next_rid,
                "next_oid": self._next_oid,
                "last_csn": self.clock.last_assigned,
                "catalog": catalog,
                "catalog_passed": self._catalog_marks.to_json(),
            }
        )

    def checkpoint(self, force: bool = False) -> list[int]:
        """Fold, then give tables with many delta rows a new checkpoint at the newest CSN
        whose commits are all in files. Returns the tables checkpointed."""
        self.fold()
        done = []
        with self._fold_mutex:
            frontier = self.frontier
            mem_min = self.store.min_mem_csn()
            csn = frontier if mem_min is None else min(frontier, mem_min - 1)
            cat = self.catalog_at(csn)
            for t in cat.tables.values():
                files, rows = self.store.delta_rows_count(t.oid)
                if files and (
                    force
                    or rows >= self.settings.checkpoint_rows
                    or files >= self.settings.checkpoint_files
                ):
                    self.store.add_checkpoint(t, csn)
                    done.append(t.oid)
            if done:
                self._write_manifest()
        return done

    def collect_garbage(self) -> tuple[int, int]:
        """Remove table files, catalog versions and log segments no holder needs. Returns
        (files, segments). Catalog versions a slot still decodes with stay (its catalog
        hold), but not the files of the tables they describe: decoding reads the log."""
        with self._fold_mutex:
            frontier = self.frontier
            held = self.holds.oldest_csn()
            oldest = frontier if held is None else min(held, frontier)
            held_catalog = self.holds.oldest_catalog_csn()
            oldest_catalog = oldest if held_catalog is None else min(held_catalog, oldest)
            self._note_catalog_passed()
            with self._catalog_mutex:
                self.history.forget_before(oldest_catalog)
                live = self.history.table_oids_from(oldest)
            self._catalog_marks.forget_before(oldest_catalog)
            removed = self.store.remove_unneeded(oldest, live)
            if removed:
                self._floor_csn = max(self._floor_csn, self.store.readable_floor())
                self._write_manifest()
                # Not unlinked yet: a reader that listed its files before this (a Spark job,
                # a statement between planning and opening them) may still open them. They
                # go once every hold alive now is released and a short grace has passed.
                self._trash.append(
                    (time.monotonic() + TRASH_GRACE, self.holds.live_keys(), removed)
                )
            self._empty_trash()
            held_lsn = self.holds.oldest_lsn()
            cut = self._redo_lsn if held_lsn is None else min(self._redo_lsn, held_lsn)
            segments = self.log.truncate_before(cut)
            if segments:
                # A commit not yet folded reads its big statements from their changesets
                # (spill.py), so a read that listed one just before the fold may still open
                # it: through the trash, gone now unless such a read (a CSN hold) is alive.
                oldest_lsn = self.log.oldest_lsn
                gone = [
                    str(p)
                    for p in self.changesets.glob("*.parquet")
                    if int(p.name.split("-")[0], 16) < oldest_lsn
                ]
                if gone:
                    self._trash.append((time.monotonic(), self.holds.live_keys(), gone))
                    self._empty_trash()
            return len(removed), segments

    def _empty_trash(self, force: bool = False) -> None:
        now = time.monotonic()
        keep = []
        for due, keys, paths in self._trash:
            if force or (due <= now and not self.holds.any_alive(keys)):
                self.store.unlink(paths)
            else:
                keep.append((due, keys, paths))
        self._trash = keep

    def _background(self) -> None:
        s = self.settings
        last = time.monotonic()
        while not self._stop.wait(0.2):
            if self.log.failed:
                continue  # nothing is written again (it was reported to the committer)
            if self._unlogged_aborts:
                self._log_noted_aborts()
            # The WAL writer's part: records nobody flushed (aborts, messages) become
            # durable within a tick, so streams that follow the flushed end move on.
            if self.log.insert_lsn > self.log.flushed_lsn:
                try:
                    self.log.flush()
                except OSError:
                    log.exception("lake: background flush failed")
            try:
                self.log.preallocate()  # zeros ahead, so commits' fdatasyncs stay cheap
            except OSError:
                log.exception("lake: log preallocation failed")
            if self._trash:
                with self._fold_mutex:
                    self._empty_trash()
            chunks, rows = self.store.mem_stats()
            due = time.monotonic() - last >= s.fold_interval
            if rows >= s.fold_rows or chunks >= s.fold_commits or (due and chunks):
                try:
                    self.checkpoint()
                    self.collect_garbage()
                except Exception as e:  # keep serving; the next round retries
                    self._background_failed(e)
                last = time.monotonic()

    def _background_failed(self, e: Exception) -> None:
        """A fold or checkpoint failed; the next round retries. A full disk is said in one
        line at most once a minute (the rows stay in memory and in the log meanwhile),
        anything else with its traceback."""
        err = e if isinstance(e, PgError) else disk_full_error(e, "could not write a table file")
        if err is None:
            log.exception("lake: background fold failed")
            return
        now = time.monotonic()
        if now >= self._quiet_until:
            self._quiet_until = now + 60
            log.warning("lake: background fold failed: %s (%s); it is retried", err.message, err.hint or err.sqlstate)

    def close(self) -> None:
        """Stop background work, fold what is in memory, release the directory."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._bg is not None:
            self._bg.join()
        for tx in list(self._active.values()):
            if tx.state in (State.ACTIVE, State.FAILED):
                tx.abort()
        try:
            if not self.log.failed:  # (else recovery at the next start does this)
                self.fold()
                self.log.flush()
                self._empty_trash(force=True)
        except Exception as e:
            if disk_full_error(e, "") is None:
                raise
            # Everything committed is in the log already: the next start folds it.
            log.warning("lake: could not fold at shutdown (a full disk): %s", e)
        finally:
            self.log.close()
            self.store.close()
            self.sequences.close()
            fcntl.flock(self._lockfile, fcntl.LOCK_UN)
            self._lockfile.close()

    def __enter__(self) -> Lake:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ChangesetAt:
    """Makes a statement's Changeset record once the log gives it its LSN (inside the log's
    append lock): renames the files after it. Afterwards ``written`` says which file holds
    the statement's delta rows (``new`` for inserts and updates, ``old`` for deletes), with
    its row count and columns, so the transaction can read them there instead of keeping
    them in memory."""

    def __init__(
        self,
        lake: Lake,
        xid: int,
        subxid: int,
        relid: int,
        op: str,
        tmps: dict[str, Path],
        num_rows: int,
        columns: list[str],
    ) -> None:
        self.lake, self.xid, self.subxid, self.relid, self.op = lake, xid, subxid, relid, op
        self.tmps = tmps
        self.num_rows, self.columns = num_rows, columns
        self.written: tuple[Path, int, list[str]] | None = None

    def __call__(self, lsn: int) -> R.Record:
        names = {}
        d = self.lake.changesets
        for kind, tmp in self.tmps.items():
            names[kind] = f"{lsn:016X}-{kind}.parquet"
            os.replace(tmp, d / names[kind])
        if self.lake.settings.fsync:
            fsync_path(d)
        self.written = (d / names["new" if "new" in names else "old"], self.num_rows, self.columns)
        return R.Changeset(
            self.xid,
            self.subxid,
            self.relid,
            self.op,
            names.get("new", ""),
            names.get("old", ""),
            self.num_rows,
        )


class _Replay:
    """A transaction being rebuilt from the log during recovery."""

    def __init__(self, first_lsn: int) -> None:
        self.first_lsn = first_lsn
        #: Delta rows per statement: inline changes in memory (spilled above spill_bytes, as
        #: a live transaction's are), changesets by reference — a big transaction replays
        #: without loading its rows.
        self.pending: list[tuple[int, pa.Table | FileRows]] = []
        self.mem_bytes = 0
        self.subs: list[int] = []
        self.ops: list[Any] = []
        self.op_subs: list[int] = []
        self.seq = 0
        self.gid: str | None = None
        self.prepared_at = 0

    def add(self, rec: R.Record, lake: Lake) -> None:
        if isinstance(rec, R.SubAbort):
            dead = set(rec.subxids)
            keep = [i for i, s in enumerate(self.subs) if s not in dead]
            dropped = [r for (_, r), s in zip(self.pending, self.subs, strict=True) if s in dead]
            SpillDir.remove([r for r in dropped if isinstance(r, FileRows)])
            self.pending = [self.pending[i] for i in keep]
            self.subs = [self.subs[i] for i in keep]
            keep_ops = [i for i, s in enumerate(self.op_subs) if s not in dead]
            self.ops = [self.ops[i] for i in keep_ops]
            self.op_subs = [self.op_subs[i] for i in keep_ops]
            return
        if isinstance(rec, R.CatalogChange):
            self.ops.extend(rec.ops)
            self.op_subs.extend([rec.subxid] * len(rec.ops))
            return
        if isinstance(rec, R.Message):
            return
        if isinstance(rec, R.Truncate):
            for relid in rec.relids:
                self.pending.append((relid, delta_rows(OP_TRUNCATE, None, self.seq)))
                self.subs.append(rec.subxid)
                self.seq += 1
            return
        op = OP_DELETE if rec.op == "D" else OP_WRITE  # type: ignore[attr-defined]
        if isinstance(rec, R.Changeset):
            part = _changeset_part(rec, op, self.seq, lake.changesets)
            if part is not None:
                top = part.max_rid()
                if top is not None:
                    lake._next_rid = max(lake._next_rid, top + 1)
                self.pending.append((rec.relid, part))
                self.subs.append(rec.subxid)
                self.seq += part.num_rows
                return
        new, old = load_change(rec, lake.changesets)  # type: ignore[arg-type]
        rows = new if new is not None else old
        assert rows is not None
        if RID in rows.column_names and rows.num_rows:
            lake._next_rid = max(lake._next_rid, int(pc.max(rows.column(RID)).as_py()) + 1)
        delta = delta_rows(op, rows, self.seq)
        self.pending.append((rec.relid, delta))  # type: ignore[attr-defined]
        self.subs.append(rec.subxid)  # type: ignore[attr-defined]
        self.seq += rows.num_rows
        self.mem_bytes += delta.get_total_buffer_size()
        if self.mem_bytes > lake.settings.spill_bytes:
            self._spill(lake.spill)

    def _spill(self, spill: SpillDir) -> None:
        """Write the rows held in memory to spill files, as a live transaction does."""
        mem, parts = [], []
        for i, (relid, rows) in enumerate(self.pending):
            if isinstance(rows, pa.Table) and rows.num_rows:
                op = rows.column(OP)[0].as_py()
                if op != OP_TRUNCATE:
                    mem.append(i)
                    parts.append(((relid, self.subs[i], op), rows, None))
        place = dict(zip(mem, spill_grouped(spill, parts), strict=True))  # type: ignore[arg-type]
        pending, subs = [], []
        for i, (p, sub) in enumerate(zip(self.pending, self.subs, strict=True)):
            if i in place:
                f = place[i]
                if f is None:
                    continue  # (its rows are in the group's file)
                p = (p[0], f)
            pending.append(p)
            subs.append(sub)
        self.pending, self.subs, self.mem_bytes = pending, subs, 0

    def discard(self) -> None:
        """It aborted (or was folded already): its spill files go."""
        SpillDir.remove([r for _, r in self.pending if isinstance(r, FileRows)])

    def committed_rows(self, csn: int) -> tuple[dict[int, pa.Table], dict[int, list[FileRows]]]:
        per: dict[int, list[pa.Table]] = {}
        files: dict[int, list[FileRows]] = {}
        for relid, rows in self.pending:
            if isinstance(rows, FileRows):
                files.setdefault(relid, []).append(rows)
            else:
                per.setdefault(relid, []).append(with_csn(rows, csn))
        mem = {k: pa.concat_tables(v, promote_options="default") for k, v in per.items()}
        return mem, files


def _changeset_part(rec: R.Changeset, op: int, seq: int, changesets: Path) -> FileRows | None:
    """A replayed changeset's delta rows, read from its file when the lake needs them."""
    name = rec.old_path if op == OP_DELETE else rec.new_path
    if not name:
        return None
    path = changesets / name
    meta = pq.read_metadata(path)
    rid_range = None
    if rec.op == "I":  # an INSERT's rids are fresh and consecutive (Transaction._insert)
        bounds = rid_bounds(path)
        if bounds is not None and bounds[1] - bounds[0] + 1 == meta.num_rows:
            rid_range = bounds
    cols = meta.schema.to_arrow_schema().names
    return FileRows.changeset(path, op, seq, meta.num_rows, cols, rid_range)


def load_change(
    rec: R.Change | R.Changeset, changesets: Path
) -> tuple[pa.Table | None, pa.Table | None]:
    """The (new, old) rows of a change record, reading a changeset's files if need be."""
    if isinstance(rec, R.Change):
        return rec.new, rec.old
    new = pq.read_table(changesets / rec.new_path) if rec.new_path else None
    old = pq.read_table(changesets / rec.old_path) if rec.old_path else None
    return new, old


@dataclass(frozen=True, slots=True)
class _Unique:
    """A unique key as the lake checks it: the index's name and SQL column names (for the
    23505), the columns' physical names (for the rows)."""

    name: str
    columns: tuple[str, ...]
    physical: tuple[str, ...]
    nulls_not_distinct: bool
    primary: bool
    #: A partial unique index's WHERE over physical column names ("" for none), and the
    #: physical columns it reads.
    where: str = ""
    where_columns: tuple[str, ...] = ()
    #: The SQL names of those columns (an UPDATE of one may move a row into the index).
    where_names: tuple[str, ...] = ()


def _with_no_null(rows: pa.Table, cols: Sequence[str]) -> pa.Table:
    """The rows with a value in every one of ``cols`` (a unique index does not compare a
    null with anything)."""
    if not any(rows.column(c).null_count for c in cols):
        return rows
    mask = pc.is_valid(rows.column(cols[0]))
    for c in cols[1:]:
        mask = pc.and_(mask, pc.is_valid(rows.column(c)))
    return rows.filter(mask)


def _duplicate_key(t: Table, key: _Unique | None, key_vals: list[Any]) -> LakeError:
    """23505 for a key that a live row of ``t`` holds, worded as PostgreSQL's index
    reports it (every unique check ends here; None: the primary key)."""
    name, cols = (t.pkey_name, list(t.primary_key or ())) if key is None else (key.name, list(key.columns))
    return unique_violation(name, cols, key_texts(t, cols, key_vals), t.schema, t.name)
