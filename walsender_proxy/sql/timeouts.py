"""Deadlines for ``statement_timeout``: one timer thread for the whole server.

A statement with a timeout registers a deadline and drops it when it ends; a deadline that
passes cancels the statement as a CancelRequest would (the executor's cancel flag and
DuckDB's interrupt), naming the reason. A thread per statement would cost more than most
statements; statements without a timeout cost nothing here.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable


class Deadline:
    __slots__ = ("at", "fire", "live")

    def __init__(self, at: float, fire: Callable[[], None]) -> None:
        self.at = at
        self.fire = fire
        self.live = True

    def cancel(self) -> None:
        self.live = False


class Deadlines:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Deadline]] = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def add(self, seconds: float, fire: Callable[[], None]) -> Deadline:
        """Call ``fire`` (on the timer thread) in ``seconds`` unless cancelled first."""
        d = Deadline(time.monotonic() + seconds, fire)
        with self._cond:
            heapq.heappush(self._heap, (d.at, next(self._seq), d))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="statement-timeouts", daemon=True)
                self._thread.start()
            self._cond.notify()
        return d

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._heap and not self._heap[0][2].live:
                    heapq.heappop(self._heap)  # cancelled: forget
                if not self._heap:
                    self._cond.wait()
                    continue
                at, _, d = self._heap[0]
                now = time.monotonic()
                if at > now:
                    self._cond.wait(at - now)
                    continue
                heapq.heappop(self._heap)
            if d.live:
                d.fire()
