"""The reorder buffer: whole transactions, in commit order, from an interleaved log.

The log interleaves the records of concurrent transactions; consumers want each committed
transaction once, complete, when its commit record is read — the order PostgreSQL's
ReorderBuffer emits in. Aborted work (whole transactions, or subtransactions rolled back
to a savepoint) is dropped here. Prepared transactions are emitted at PREPARE with their
gid and their outcome follows separately, as in PostgreSQL's two-phase decoding.

With streaming on (a client that asked for it, past where it decodes from), a transaction
still in progress is handed out in blocks when the buffer outgrows
logical_decoding_work_mem, as PostgreSQL's ReorderBufferCheckMemoryLimit streams the
largest one; its end follows (commit, abort, or a subtransaction's abort).
"""

from __future__ import annotations

import os
import struct
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from decoding import records as R
from decoding.changelog import ChangeLog, LogEntry, _scan_frames
from decoding.records import decode_record


def _size(rec: R.Record) -> int:
    if isinstance(rec, R.Change):
        return _table_size(rec.new) + _table_size(rec.old) + 64
    if isinstance(rec, R.Message):
        return len(rec.payload) + 64
    return 64


def _table_size(t: Any) -> int:
    """Bytes of a change's rows. ``nbytes`` is exact for slices but costs a pass over the
    data even for one row (a large part of decoding a single-row transaction); a table
    decoded from the log is not a slice, so its buffers' total size is the same figure."""
    if t is None:
        return 0
    return t.get_total_buffer_size() if t.num_rows <= 1024 else t.nbytes


@dataclass(slots=True)
class DecodingStats:
    """What a slot's decoding did, as ``pg_stat_replication_slots`` counts it (PostgreSQL's
    ReorderBuffer counters, reported by UpdateDecodingStats): transactions spilled to disk,
    spills and bytes spilled; transactions streamed, blocks and bytes streamed; transactions
    decoded for the plugin and their bytes. Bytes are the changes' size in the log (what
    the buffer holds of them), where PostgreSQL counts decoded tuples."""

    spill_txns: int = 0
    spill_count: int = 0
    spill_bytes: int = 0
    stream_txns: int = 0
    stream_count: int = 0
    stream_bytes: int = 0
    total_txns: int = 0
    total_bytes: int = 0

    def take(self) -> dict[str, int]:
        """The counts so far (empty when all are 0), reset to 0."""
        out = {k: v for k in self.__slots__ if (v := getattr(self, k))}  # type: ignore[attr-defined]
        for k in out:
            setattr(self, k, 0)
        return out

    def add(self, counts: dict[str, int]) -> None:
        for k, v in counts.items():
            setattr(self, k, getattr(self, k) + int(v))

    def decoded(self, txn: DecodedTxn) -> None:
        """``txn`` went to the plugin whole (or its last block): counted once, with what it
        held (a streamed one was counted with its first block)."""
        if txn.streamed:
            self.total_bytes += txn.changes.appended
        elif txn.changes.appended:
            self.total_txns += 1
            self.total_bytes += txn.changes.appended


class ChangeList:
    """One transaction's changes: in memory up to ``budget`` bytes, beyond that spilled to a
    file in the change log's own frame format (PostgreSQL's reorder buffer spills above
    logical_decoding_work_mem the same way). Iterable any number of times, in order, with
    rolled-back subtransactions left out."""

    def __init__(
        self, budget: int | None = None, spill_dir: Path | None = None, stats: DecodingStats | None = None
    ) -> None:
        self._mem: list[R.Record] = []
        self._mem_bytes = 0
        #: Bytes of every change added (spilled or not).
        self.appended = 0
        self._stats = stats
        self._spilled_subxids: set[int] = set()
        self._budget = budget
        self._dir = spill_dir
        self._path: Path | None = None
        self._file: Any = None
        self._dead: set[int] = set()
        self.spilled = 0
        #: Changeset records (bulk statements in Parquet files) were added.
        self.bulk = False
        #: Subtransaction of every CatalogChange added (0: the top level).
        self._ddl_subxids: list[int] = []
        #: Subtransactions with a record here (0: the top level).
        self.subxids: set[int] = set()

    @property
    def mem_bytes(self) -> int:
        return self._mem_bytes

    @property
    def has_catalog_changes(self) -> bool:
        """Whether a CatalogChange not rolled back is among the changes (known without
        reading spilled changes back)."""
        return any(s not in self._dead for s in self._ddl_subxids)

    def small(self, limit: int) -> bool:
        """All in memory, under ``limit`` bytes, and no bulk changeset."""
        return self._file is None and not self.bulk and self._mem_bytes < limit

    def append(self, rec: R.Record, size: int | None = None) -> None:
        """Add a change; ``size``: the memory it holds, when the caller knows it (default
        :func:`_size`)."""
        if isinstance(rec, R.Changeset):
            self.bulk = True
        elif isinstance(rec, R.CatalogChange):
            self._ddl_subxids.append(getattr(rec, "subxid", 0))
        self.subxids.add(getattr(rec, "subxid", 0))
        self._mem.append(rec)
        size = _size(rec) if size is None else size
        self._mem_bytes += size
        self.appended += size
        if self._budget is not None and self._dir is not None and self._mem_bytes > self._budget:
            self.spill()

    def spill(self) -> None:
        """Move what is in memory to the spill file."""
        if not self._mem:
            return
        if self._file is None:
            assert self._dir is not None
            self._dir.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix="txn-", suffix=".spill", dir=self._dir)
            self._path = Path(name)
            self._file = os.fdopen(fd, "w+b")
        self._file.write(b"".join(ChangeLog.frame(r) for r in self._mem))
        if self._stats is not None:
            # (PostgreSQL spills each (sub)transaction on its own and counts each once)
            subxids = {getattr(r, "subxid", 0) for r in self._mem} - self._spilled_subxids
            self._spilled_subxids |= subxids
            self._stats.spill_txns += len(subxids)
            self._stats.spill_count += 1
            self._stats.spill_bytes += self._mem_bytes
        self.spilled += len(self._mem)
        self._mem = []
        self._mem_bytes = 0

    def abort_subxids(self, subxids: Iterable[int]) -> None:
        dead = set(subxids)
        self._dead |= dead
        self.subxids -= dead
        self._mem = [c for c in self._mem if getattr(c, "subxid", 0) not in dead]
        self._mem_bytes = sum(_size(c) for c in self._mem)

    def __iter__(self) -> Iterator[R.Record]:
        if self._file is not None:
            self._file.flush()
            with open(self._path, "rb") as f:  # type: ignore[arg-type]
                while True:
                    head = f.read(4)
                    if len(head) < 4:
                        break
                    (total,) = struct.unpack("<I", head)
                    frame = head + f.read(total - 4)
                    for _, _, kind, payload in _scan_frames(memoryview(frame)):
                        rec = decode_record(kind, payload)
                        if getattr(rec, "subxid", 0) not in self._dead:
                            yield rec
        for rec in self._mem:
            if getattr(rec, "subxid", 0) not in self._dead:
                yield rec

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._path is not None:
            self._path.unlink(missing_ok=True)
            self._path = None

    def __del__(self) -> None:
        self.close()


@dataclass(slots=True)
class DecodedTxn:
    xid: int
    first_lsn: int
    changes: ChangeList = field(default_factory=ChangeList)
    #: Set when the transaction ends.
    commit_lsn: int = 0
    end_lsn: int = 0
    csn: int = 0
    commit_ts: int = 0
    origin: str = ""
    #: The remote LSN the origin's session gave its commit (pg_replication_origin_xact_setup).
    origin_lsn: int = 0
    gid: str | None = None
    prepare_lsn: int = 0
    #: Whether the log held a record of the transaction before its end: PostgreSQL's
    #: reorder buffer knows only those, and a prepared transaction it does not know is
    #: neither decoded at PREPARE nor finished (ReorderBufferRememberPrepareInfo).
    known: bool = True
    #: A prepared transaction: the largest commit CSN the reorder buffer had read before
    #: its PREPARE (0: none), the catalog it is decoded with while it has no CSN.
    catalog_csn: int = 0
    #: Streaming: blocks of it were handed out (its changes hold what came since).
    streamed: bool = False
    #: Streaming: subtransactions with a change in a block handed out (PostgreSQL's
    #: RBTXN_IS_STREAMED of a subtransaction: only those get a Stream Abort).
    streamed_subxids: set[int] = field(default_factory=set)
    #: LSNs of the first record in ``changes`` and of the last record added.
    changes_lsn: int = 0
    last_lsn: int = 0
    #: Its first write was made under an origin the plugin filters: only its DDL is kept.
    skipped: bool = False

    def add(self, rec: R.Record, size: int | None = None) -> None:
        if isinstance(rec, R.SubAbort):
            self.changes.abort_subxids(rec.subxids)
        else:
            self.changes.append(rec, size)


def wire_xid(xid: int, subxid: int = 0) -> int:
    """The 32-bit xid a (sub)transaction goes by in protocol messages: a record's
    ``subxid`` is its subtransaction's own xid (0 at the top level)."""
    return (subxid or xid) & 0xFFFFFFFF


@dataclass(frozen=True, slots=True)
class Ended:
    """A prepared transaction's outcome (COMMIT PREPARED or ROLLBACK PREPARED)."""

    xid: int
    gid: str
    committed: bool
    lsn: int
    end_lsn: int
    csn: int
    ts: int


@dataclass(frozen=True, slots=True)
class StreamBlock:
    """Streaming: a block of an in-progress transaction, its changes since the last block
    (Stream Start, the changes, Stream Stop). ``first_lsn`` and ``last_lsn``: its first and
    last record's LSNs."""

    txn: DecodedTxn
    changes: ChangeList
    first_lsn: int
    last_lsn: int
    first_segment: bool


@dataclass(frozen=True, slots=True)
class StreamAborted:
    """Streaming: a streamed transaction (``subxid`` 0) or one of its streamed
    subtransactions aborted at ``lsn`` (Stream Abort)."""

    txn: DecodedTxn
    subxid: int
    lsn: int
    end_lsn: int
    ts: int


Event = DecodedTxn | Ended | StreamBlock | StreamAborted | tuple[LogEntry, R.Message]


class ReorderBuffer:
    """``work_mem`` (bytes) and ``spill_dir``: a transaction holding more than that in
    memory is spilled to a file there (None: never spill)."""

    def __init__(
        self, work_mem: int | None = None, spill_dir: Path | None = None, stream_from: int | None = None,
        skip_origin: Callable[[str], bool] | None = None, changeset_size: Callable[[R.Changeset], int] | None = None,
    ) -> None:
        self._open: dict[int, DecodedTxn] = {}
        self._prepared: dict[int, DecodedTxn] = {}
        self._work_mem = work_mem
        self._spill_dir = spill_dir
        #: The largest commit CSN read so far (commits may come out of CSN order).
        self.max_csn = 0
        #: Streaming: None (off), else the LSN from which transactions may be streamed
        #: (where the session decodes from: a transaction open past it ends past it).
        self.stream_from = stream_from
        #: Streaming: bytes of changes held in memory by open transactions.
        self._held = 0
        #: What pg_stat_replication_slots counts of this decoding.
        self.stats = DecodingStats()
        #: The plugin's filter_by_origin: changes of a transaction whose first write was
        #: made under an origin it skips are not kept (its DDL is), as FilterByOrigin
        #: drops them while decoding.
        self.skip_origin = skip_origin
        #: The memory a changeset's rows count for (change_rows.changeset_size); without
        #: it, the record's own.
        self.changeset_size = changeset_size

    @property
    def work_mem(self) -> int | None:
        return self._work_mem

    @work_mem.setter
    def work_mem(self, value: int | None) -> None:
        """A new limit (logical_decoding_work_mem reloaded): for the transactions that
        start from now on."""
        self._work_mem = value

    def _new(self, xid: int, lsn: int) -> DecodedTxn:
        # Streaming: the buffer as a whole is held to the limit (below), not each list.
        budget = None if self.stream_from is not None else self._work_mem
        return DecodedTxn(xid, lsn, ChangeList(budget, self._spill_dir, self.stats))

    def memory(self) -> int:
        """Bytes of changes held in memory by open transactions."""
        return sum(t.changes.mem_bytes for t in self._open.values())

    def feed(self, entry: LogEntry) -> Iterator[Event]:
        rec = entry.record
        if isinstance(rec, R.Message) and not rec.transactional:
            yield entry, rec
            return
        if isinstance(rec, R.Frontier):
            return
        xid = rec.xid
        if isinstance(rec, R.Commit):
            tx = self._close(xid) or self._new(xid, entry.lsn)
            tx.commit_lsn, tx.end_lsn, tx.csn = entry.lsn, entry.end_lsn, rec.csn
            tx.commit_ts, tx.origin, tx.origin_lsn = rec.commit_ts, rec.origin, rec.origin_lsn
            self.max_csn = max(self.max_csn, rec.csn)
            yield tx
        elif isinstance(rec, R.Abort):
            tx = self._close(xid)
            if tx is not None and tx.streamed:
                tx.changes.close()
                yield StreamAborted(tx, 0, entry.lsn, entry.end_lsn, rec.abort_ts)
        elif isinstance(rec, R.Prepare):
            tx = self._close(xid)
            if tx is None:
                tx = self._new(xid, entry.lsn)
                tx.known = False
            tx.catalog_csn = self.max_csn
            tx.gid, tx.prepare_lsn, tx.end_lsn, tx.commit_ts = (
                rec.gid,
                entry.lsn,
                entry.end_lsn,
                rec.prepare_ts,
            )
            self._prepared[xid] = tx
            yield tx
        elif isinstance(rec, R.CommitPrepared):
            self._prepared.pop(xid, None)
            self.max_csn = max(self.max_csn, rec.csn)
            yield Ended(xid, rec.gid, True, entry.lsn, entry.end_lsn, rec.csn, rec.commit_ts)
        elif isinstance(rec, R.RollbackPrepared):
            self._prepared.pop(xid, None)
            yield Ended(xid, rec.gid, False, entry.lsn, entry.end_lsn, 0, rec.rollback_ts)
        else:
            tx = self._open.get(xid)
            if tx is None:
                tx = self._open[xid] = self._new(xid, entry.lsn)
            if isinstance(rec, R.XactOrigin):
                tx.origin = rec.origin
                tx.skipped = self.skip_origin is not None and self.skip_origin(rec.origin)
                return
            if tx.skipped and not isinstance(rec, R.CatalogChange | R.SubAbort):
                return
            before = tx.changes.mem_bytes
            if isinstance(rec, R.SubAbort) and tx.streamed:
                # DecodeAbort of a subtransaction: its streamed children first, then it.
                for sub in (*rec.subxids[1:], rec.subxids[0]):
                    if sub in tx.streamed_subxids:
                        tx.streamed_subxids.discard(sub)
                        yield StreamAborted(tx, sub, entry.lsn, entry.end_lsn, rec.abort_ts)
            # A record read from the log holds about its own length in memory (its tables
            # are zero-copy views of what was read): known for free, where measuring the
            # tables costs work per change.
            if isinstance(rec, R.Changeset) and self.changeset_size is not None:
                tx.add(rec, self.changeset_size(rec))
            else:
                tx.add(rec, entry.end_lsn - entry.lsn + 64)
            if not isinstance(rec, R.SubAbort):
                tx.changes_lsn = tx.changes_lsn or entry.lsn
                tx.last_lsn = entry.lsn
            if self.stream_from is not None:
                self._held += tx.changes.mem_bytes - before
                if self._work_mem is not None and self._held >= self._work_mem:
                    yield from self._evict(entry)

    def _close(self, xid: int) -> DecodedTxn | None:
        tx = self._open.pop(xid, None)
        if tx is not None and self.stream_from is not None:
            self._held -= tx.changes.mem_bytes
        return tx

    def _evict(self, entry: LogEntry) -> Iterator[StreamBlock]:
        """ReorderBufferCheckMemoryLimit with streaming: until the buffer is under the
        limit, stream the largest open transaction — once decoding is past
        ``stream_from`` (ReorderBufferCanStartStreaming); before that, spill it."""
        assert self._work_mem is not None
        while self._held >= self._work_mem:
            largest = max(self._open.values(), key=lambda t: t.changes.mem_bytes, default=None)
            if largest is None or largest.changes.mem_bytes == 0:
                self._held = 0
                return
            held = largest.changes.mem_bytes
            self._held -= held
            if self.stream_from is not None and entry.end_lsn >= self.stream_from:
                yield self.stream(largest, held)
            elif self._spill_dir is not None:
                largest.changes.spill()
            else:
                return  # (nowhere to spill: held in memory)

    def stream(self, tx: DecodedTxn, held: int | None = None) -> StreamBlock:
        """Hand out ``tx``'s changes so far as a block; it keeps collecting what follows."""
        changes = tx.changes
        block = StreamBlock(tx, changes, tx.changes_lsn, tx.last_lsn, not tx.streamed)
        stats = self.stats
        stats.stream_count += 1
        stats.stream_bytes += changes.mem_bytes if held is None else held
        stats.stream_txns += 0 if tx.streamed else 1
        stats.total_txns += 0 if tx.streamed else 1  # (decoded for the plugin: counted once)
        stats.total_bytes += changes.appended
        tx.streamed = True
        tx.streamed_subxids |= changes.subxids
        tx.changes = ChangeList(None, self._spill_dir, stats)
        tx.changes_lsn = 0
        return block

    def oldest_open_lsn(self) -> int | None:
        """Where decoding must restart to see every open transaction whole (restart_lsn)."""
        firsts = [t.first_lsn for t in self._open.values()]
        firsts += [t.first_lsn for t in self._prepared.values()]
        return min(firsts, default=None)


@dataclass(frozen=True, slots=True)
class Prepared:
    """Two-phase decoding: a transaction to send at its PREPARE (BEGIN PREPARE, its
    changes, PREPARE)."""

    txn: DecodedTxn


@dataclass(frozen=True, slots=True)
class Finished:
    """Two-phase decoding: COMMIT PREPARED or ROLLBACK PREPARED of ``txn`` (whose
    ``end_lsn`` and ``commit_ts`` are still its PREPARE's). With ``replay`` the
    transaction was prepared before two-phase decoding began (``two_phase_at``): it is
    sent whole first, as at its PREPARE, then committed."""

    txn: DecodedTxn
    ended: Ended
    replay: bool = False


Routed = DecodedTxn | Prepared | Finished | StreamBlock | StreamAborted | tuple[LogEntry, R.Message]


class SlotFilter:
    """What a slot sends of the reorder buffer's events, and as what: decode.c's choices
    (DecodeCommit, DecodePrepare, DecodeAbort, ReorderBufferFinishPrepared) with the CSN
    rule of the proxy's snapshots. Feed it every event, in log order.

    ``start``: where the session decodes from (nothing ending before it is sent);
    ``snapshot_csn``: the slot's snapshot (a transaction committed at or below it is in
    the copy); ``two_phase_at``: None without two-phase decoding (a prepared transaction
    is sent whole at COMMIT PREPARED, nothing at ROLLBACK PREPARED), else the LSN from
    which prepares are decoded at PREPARE. ``skip_prepare(gid)``: the plugin's
    filter_prepare (test_decoding skips gids holding ``_nodecode``).

    A transaction PREPAREd at or past ``start`` is sent before its CSN is known. A slot
    made at a clean consistent point (every slot the proxy makes) cannot see such a
    transaction commit at or below its snapshot; were it to, the copy would hold it too,
    as PostgreSQL's own snapshot rules would."""

    def __init__(
        self, start: int, snapshot_csn: int, two_phase_at: int | None = None,
        skip_prepare: Callable[[str], bool] | None = None,
    ) -> None:
        self.start = start
        self.snapshot_csn = snapshot_csn
        self.two_phase_at = two_phase_at
        self.skip_prepare = skip_prepare
        self.prepared: dict[int, DecodedTxn] = {}

    def _two_phase(self, gid: str) -> bool:
        return self.two_phase_at is not None and not (self.skip_prepare is not None and self.skip_prepare(gid))

    def route(self, ev: Event) -> Routed | None:
        if isinstance(ev, StreamBlock | StreamAborted):
            return ev  # (the reorder buffer streams only past ``start``)
        if isinstance(ev, DecodedTxn):
            if ev.gid is None:
                if ev.commit_lsn >= self.start and ev.csn > self.snapshot_csn:
                    return ev
                return self._forget(ev, ev.commit_lsn, ev.end_lsn, ev.commit_ts)
            self.prepared[ev.xid] = ev
            if self._two_phase(ev.gid) and ev.known and ev.prepare_lsn >= self.start:
                return Prepared(ev)
            return None
        if isinstance(ev, Ended):
            tx = self.prepared.pop(ev.xid, None)
            if tx is None or ev.lsn < self.start:
                return None
            if self._two_phase(ev.gid):
                if not tx.known:
                    return None
                assert self.two_phase_at is not None
                if ev.committed:
                    replay = tx.prepare_lsn < self.two_phase_at
                    if replay and ev.csn <= self.snapshot_csn:
                        return None  # (never sent, and the copy holds it)
                    return Finished(tx, ev, replay)
                return Finished(tx, ev)
            if ev.committed and ev.csn > self.snapshot_csn:
                tx.commit_lsn, tx.end_lsn, tx.csn, tx.commit_ts = ev.lsn, ev.end_lsn, ev.csn, ev.ts
                return tx
            return self._forget(tx, ev.lsn, ev.end_lsn, ev.ts)
        entry, _ = ev
        return ev if entry.lsn >= self.start else None

    @staticmethod
    def _forget(tx: DecodedTxn, lsn: int, end_lsn: int, ts: int) -> StreamAborted | None:
        """ReorderBufferForget: a transaction not sent after all (rolled back, or in the
        copy) that was streamed is aborted on the client."""
        if tx.streamed:
            tx.changes.close()
            return StreamAborted(tx, 0, lsn, end_lsn, ts)
        return None


def decoded_after(
    entries: Iterable[LogEntry], start_lsn: int, snapshot_csn: int, two_phase_at: int | None = None,
    skip_prepare: Callable[[str], bool] | None = None, *, reorder: ReorderBuffer | None = None,
) -> Iterator[tuple[LogEntry, Routed]]:
    """What a slot decoding from ``start_lsn`` with snapshot ``snapshot_csn`` sends of
    ``entries`` (see :class:`SlotFilter`), each with the log entry it was decoded at.
    ``reorder``: the reorder buffer to use (its memory limit, streaming); default one that
    holds everything in memory."""
    rb = reorder if reorder is not None else ReorderBuffer()
    routes = SlotFilter(start_lsn, snapshot_csn, two_phase_at, skip_prepare)
    for entry in entries:
        for ev in rb.feed(entry):
            out = routes.route(ev)
            if out is not None:
                yield entry, out


def committed_after(
    entries: Iterable[LogEntry], start_lsn: int, snapshot_csn: int
) -> Iterator[DecodedTxn]:
    """The committed transactions of :func:`decoded_after`."""
    for _, ev in decoded_after(entries, start_lsn, snapshot_csn):
        if isinstance(ev, DecodedTxn):
            yield ev
