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
from decoding.reorder import DecodedTxn, Ended


class CatalogFollower:
    def __init__(self, history: CatalogHistory) -> None:
        self.history = history
        #: The DDL of prepared transactions, until COMMIT PREPARED gives it a CSN.
        self._prepared: dict[int, list[CatalogOp]] = {}

    def at(self, csn: int) -> Catalog:
        return self.history.at(csn)

    def observe(self, ev: Any) -> None:
        """See every event the reorder buffer gives, in log order, before it is decoded."""
        if isinstance(ev, DecodedTxn):
            if not ev.changes.has_catalog_changes:
                return
            ops = [op for rec in ev.changes if isinstance(rec, R.CatalogChange) for op in rec.ops]
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
