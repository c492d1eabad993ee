"""The reorder buffer: whole transactions, in commit order, from an interleaved log.

The log interleaves the records of concurrent transactions; consumers want each committed
transaction once, complete, when its commit record is read — the order PostgreSQL's
ReorderBuffer emits in. Aborted work (whole transactions, or subtransactions rolled back
to a savepoint) is dropped here. Prepared transactions are emitted at PREPARE with their
gid and their outcome follows separately, as in PostgreSQL's two-phase decoding.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from decoding import records as R
from decoding.changelog import LogEntry


@dataclass(slots=True)
class DecodedTxn:
    xid: int
    first_lsn: int
    changes: list[R.Record] = field(default_factory=list)
    #: Set when the transaction ends.
    commit_lsn: int = 0
    end_lsn: int = 0
    csn: int = 0
    commit_ts: int = 0
    origin: str = ""
    gid: str | None = None
    prepare_lsn: int = 0

    def add(self, rec: R.Record) -> None:
        if isinstance(rec, R.SubAbort):
            dead = set(rec.subxids)
            self.changes = [c for c in self.changes if getattr(c, "subxid", 0) not in dead]
        else:
            self.changes.append(rec)


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


Event = DecodedTxn | Ended | tuple[LogEntry, R.Message]


class ReorderBuffer:
    def __init__(self) -> None:
        self._open: dict[int, DecodedTxn] = {}
        self._prepared: dict[int, DecodedTxn] = {}

    def feed(self, entry: LogEntry) -> Iterator[Event]:
        rec = entry.record
        if isinstance(rec, R.Message) and not rec.transactional:
            yield entry, rec
            return
        if isinstance(rec, R.Frontier):
            return
        xid = rec.xid
        if isinstance(rec, R.Commit):
            tx = self._open.pop(xid, None) or DecodedTxn(xid, entry.lsn)
            tx.commit_lsn, tx.end_lsn, tx.csn = entry.lsn, entry.end_lsn, rec.csn
            tx.commit_ts, tx.origin = rec.commit_ts, rec.origin
            yield tx
        elif isinstance(rec, R.Abort):
            self._open.pop(xid, None)
        elif isinstance(rec, R.Prepare):
            tx = self._open.pop(xid, None) or DecodedTxn(xid, entry.lsn)
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
            yield Ended(xid, rec.gid, True, entry.lsn, entry.end_lsn, rec.csn, rec.commit_ts)
        elif isinstance(rec, R.RollbackPrepared):
            self._prepared.pop(xid, None)
            yield Ended(xid, rec.gid, False, entry.lsn, entry.end_lsn, 0, rec.rollback_ts)
        else:
            tx = self._open.get(xid)
            if tx is None:
                tx = self._open[xid] = DecodedTxn(xid, entry.lsn)
            tx.add(rec)

    def oldest_open_lsn(self) -> int | None:
        """Where decoding must restart to see every open transaction whole (restart_lsn)."""
        firsts = [t.first_lsn for t in self._open.values()]
        firsts += [t.first_lsn for t in self._prepared.values()]
        return min(firsts, default=None)


def committed_after(
    entries: Iterable[LogEntry], start_lsn: int, snapshot_csn: int
) -> Iterator[DecodedTxn]:
    """Committed transactions a slot with consistent point ``start_lsn`` and snapshot
    ``snapshot_csn`` streams: commit record at or past ``start_lsn`` and CSN above the
    snapshot (the copy at ``snapshot_csn`` holds the others). Prepared transactions are
    given whole at their COMMIT PREPARED, as to a subscriber without two_phase."""
    rb = ReorderBuffer()
    prepared: dict[int, DecodedTxn] = {}
    for entry in entries:
        for ev in rb.feed(entry):
            if isinstance(ev, DecodedTxn):
                if ev.gid is not None:
                    prepared[ev.xid] = ev
                elif ev.commit_lsn >= start_lsn and ev.csn > snapshot_csn:
                    yield ev
            elif isinstance(ev, Ended):
                tx = prepared.pop(ev.xid, None)
                if (
                    tx is not None
                    and ev.committed
                    and ev.lsn >= start_lsn
                    and ev.csn > snapshot_csn
                ):
                    tx.commit_lsn, tx.end_lsn, tx.csn, tx.commit_ts = (
                        ev.lsn,
                        ev.end_lsn,
                        ev.csn,
                        ev.ts,
                    )
                    yield tx
