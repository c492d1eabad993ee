"""A progress bar for pipeline jobs: the phase, and the tasks of Spark's running stages.

Spark reports progress through its status tracker (not available over Spark Connect, where
only the phase is shown). A thread polls it; the bar goes to stderr and disappears when the
output is not a terminal unless asked for.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any


class Progress:
    def __init__(self, spark: Any, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self.timings: dict[str, float] = {}
        self._current: str | None = None
        self._since = time.monotonic()
        self._bar: Any = None
        self._tracker = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if not enabled:
            return
        from tqdm import tqdm

        self._bar = tqdm(total=0, unit="task", file=sys.stderr, leave=False, dynamic_ncols=True)
        try:
            self._tracker = spark.sparkContext.statusTracker()
        except Exception:  # Spark Connect: no SparkContext on the client
            self._tracker = None
        if self._tracker is not None:
            self._thread = threading.Thread(target=self._poll, daemon=True, name="spark-progress")
            self._thread.start()

    def phase(self, name: str) -> None:
        """Start a named phase; :attr:`timings` keeps each phase's seconds."""
        now = time.monotonic()
        if self._current is not None:
            self.timings[self._current] = round(now - self._since, 3)
        self._current, self._since = name, now
        if self._bar is not None:
            self._bar.set_description(name)

    def _poll(self) -> None:
        assert self._tracker is not None
        while not self._stop.wait(0.25):
            done = total = 0
            try:
                for sid in self._tracker.getActiveStageIds():
                    info = self._tracker.getStageInfo(sid)
                    if info is not None:
                        done += info.numCompletedTasks
                        total += info.numTasks
            except Exception:  # the JVM is shutting down
                return
            if total:
                self._bar.total = total
                self._bar.n = done
                self._bar.refresh()

    def close(self) -> None:
        self.phase("")
        self.timings.pop("", None)
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
        if self._bar is not None:
            self._bar.close()
