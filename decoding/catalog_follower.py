"""A catalog history kept up to date from the log alone, for a decoder in another process.

The server keeps :class:`~decoding.catalog.CatalogHistory` in memory and adds a version at
every DDL commit. A walsender process starts from a copy of it and then learns each later
DDL commit from the records it decodes anyway — the transaction's ``CatalogChange`` ops at
its commit CSN — as PostgreSQL's decoding learns catalog changes from the WAL it reads.
DDL transactions commit one at a time (the lake's catalog lock), so they reach the log in
CSN order and the versions are added in the order ``CatalogHistory.add`` requires.
"""

from __future__ import annotations

from typing import Any

from decoding import records as R
from decoding.catalog import Catalog, CatalogHistory, CatalogOp
from decoding.reorder import DecodedTxn, Ended, StreamAborted, StreamBlock


class CatalogFollower:
    def __init__(self, history: CatalogHistory) -> None:
        self.history = history
        #: The DDL of prepared transactions, until COMMIT PREPARED gives it a CSN.
        self._prepared: dict[int, list[CatalogOp]] = {}
        #: The DDL in the blocks of streamed transactions in progress, by subtransaction.
        self._streamed: dict[int, list[tuple[int, tuple[CatalogOp, ...]]]] = {}

    def at(self, csn: int) -> Catalog:
        return self.history.at(csn)

    def observe(self, ev: Any) -> None:
        """See every event the reorder buffer gives, in log order, before it is decoded.
        A streamed transaction's DDL comes in its blocks (less what a Stream Abort voids)
        and what is left at its end."""
        if isinstance(ev, StreamBlock):
            if ev.changes.has_catalog_changes:
                self._streamed.setdefault(ev.txn.xid, []).extend(
                    (rec.subxid, rec.ops) for rec in ev.changes if isinstance(rec, R.CatalogChange)
                )
        elif isinstance(ev, StreamAborted):
            if ev.subxid == 0:
                self._streamed.pop(ev.txn.xid, None)
            elif ev.txn.xid in self._streamed:
                self._streamed[ev.txn.xid] = [(s, ops) for s, ops in self._streamed[ev.txn.xid] if s != ev.subxid]
        elif isinstance(ev, DecodedTxn):
            earlier = [op for _, ops in self._streamed.pop(ev.xid, ()) for op in ops]
            if not earlier and not ev.changes.has_catalog_changes:
                return
            ops = earlier + [op for rec in ev.changes if isinstance(rec, R.CatalogChange) for op in rec.ops]
            if ev.gid is not None:
                self._prepared[ev.xid] = ops
            else:
                self._add(ev.csn, ops)
        elif isinstance(ev, Ended):
            ops = self._prepared.pop(ev.xid, None)
            if ops is not None and ev.committed:
                self._add(ev.csn, ops)

    def _add(self, csn: int, ops: list[CatalogOp]) -> None:
        if csn > self.history.latest_csn:  # (else the copy it started from has it)
            self.history.add(csn, ops)
