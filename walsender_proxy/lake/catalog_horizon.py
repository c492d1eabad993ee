"""Where in the log each catalog version stops being needed by a decoder that starts there.

A decoder sends a transaction with the catalog of its CSN (``CatalogHistory.at``), and a
DDL transaction with the one before it. So the versions older than version ``d`` (made by
the DDL commit of CSN ``d``) are needed exactly by the transactions with CSN ≤ ``d``. A
slot never sends a commit before its confirmed position again; once that position is past
every commit with CSN ≤ ``d``, the slot needs nothing older than ``d``. Commits reach the log
out of CSN order, so the DDL's own commit LSN is not that point: a smaller CSN may commit
after it. The frontier is: once it reaches ``d``, every commit with CSN ≤ ``d`` is in the log,
so the log's insert position read *after* the frontier is such a point. This is the
proxy's ``catalog_xmin``: a slot's catalog hold is the newest ``d`` whose point it has
confirmed past (PostgreSQL's snapshot builder finds the same from running-xacts records).

The points are noted when a DDL commit resolves (or later, if out-of-order commits kept the
frontier below it: later is only more cautious) and saved in the manifest, so a restart
keeps them exact.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable
from typing import Any


class CatalogHorizon:
    def __init__(self, saved: Iterable[Any] = ()) -> None:
        self._lock = threading.Lock()
        pairs = sorted((int(c), int(lsn)) for c, lsn in saved)
        #: Catalog version CSNs and their points, both ascending.
        self._csns = [c for c, _ in pairs]
        self._lsns = [lsn for _, lsn in pairs]

    @property
    def noted_upto(self) -> int:
        """The newest version with a point (-1: none)."""
        return self._csns[-1] if self._csns else -1

    def note(self, versions: Iterable[int], frontier: int, lsn: int) -> None:
        """Versions ``versions`` (CSNs) with CSN ≤ ``frontier`` are passed at ``lsn``: the log's
        insert position read after ``frontier`` was."""
        with self._lock:
            last = self._csns[-1] if self._csns else -1
            for c in sorted(versions):
                if last < c <= frontier:
                    self._csns.append(c)
                    self._lsns.append(max(lsn, self._lsns[-1] if self._lsns else 0))
                    last = c

    def at(self, lsn: int) -> int:
        """The catalog hold of a decoder that sends nothing committed before ``lsn``: the
        newest version all of whose predecessors it no longer needs (0: any may be needed)."""
        with self._lock:
            i = bisect.bisect_right(self._lsns, lsn) - 1
            return self._csns[i] if i >= 0 else 0

    def forget_before(self, csn: int) -> None:
        """Versions older than the newest one ≤ ``csn`` are gone from the history."""
        with self._lock:
            i = bisect.bisect_right(self._csns, csn) - 1
            if i > 0:
                del self._csns[:i]
                del self._lsns[:i]

    def to_json(self) -> list[list[int]]:
        with self._lock:
            return [[c, lsn] for c, lsn in zip(self._csns, self._lsns, strict=True)]
