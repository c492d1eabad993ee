"""CSN assignment and the CSN frontier.

A CSN is handed out when a transaction starts to commit and *resolved* once its commit is
durable and visible in the table store (or abandoned). Commits can finish out of CSN order,
so the frontier — the largest S with every CSN ≤ S resolved — is what a read at S waits for.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from walsender_proxy.lake.errors import LakeError


class CsnClock:
    def __init__(self, last_csn: int = 0) -> None:
        self._cond = threading.Condition()
        self._next = last_csn + 1
        self._inflight: set[int] = set()
        self._frontier = last_csn
        self._barriers = 0

    @property
    def frontier(self) -> int:
        return self._frontier

    @property
    def last_assigned(self) -> int:
        return self._next - 1

    def assign(self) -> int:
        """A new CSN; waits while a clean-point barrier is up."""
        with self._cond:
            while self._barriers:
                self._cond.wait()
            csn = self._next
            self._next += 1
            self._inflight.add(csn)
            return csn

    def resolve(self, csn: int) -> None:
        with self._cond:
            self._inflight.discard(csn)
            self._frontier = (min(self._inflight) - 1) if self._inflight else self._next - 1
            self._cond.notify_all()

    def wait_for(self, csn: int, timeout: float | None = None) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._frontier >= csn, timeout)

    @contextmanager
    def barrier(self, timeout: float | None = None) -> Iterator[int]:
        """Hold new CSN assignment and wait for in-flight commits to finish: inside, no
        commit is in flight, so the log's current end is a *clean* consistent point and the
        yielded frontier is its snapshot CSN (ARCHITECTURE §3)."""
        with self._cond:
            self._barriers += 1
            try:
                if not self._cond.wait_for(lambda: not self._inflight, timeout):
                    raise LakeError(
                        "55P03",
                        "could not obtain a consistent point: commits are still in flight",
                        detail=f"In-flight commit sequence numbers: {sorted(self._inflight)}.",
                    )
                yield self._frontier
            finally:
                self._barriers -= 1
                self._cond.notify_all()
