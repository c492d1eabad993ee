"""Who still needs old log positions or old snapshots.

Slots, exported snapshots, open transactions and running reads each *hold* an LSN (the log
must keep everything from there) and/or a CSN (table files must still answer a read at it).
The log is truncated below the smallest held LSN, table files only when no held CSN needs them.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass


@dataclass(slots=True)
class Hold:
    """One holder's claim; ``update`` moves it (slots advance), ``release`` ends it."""

    registry: HoldRegistry
    key: int
    name: str
    lsn: int | None
    csn: int | None

    def update(self, *, lsn: int | None = None, csn: int | None = None) -> None:
        with self.registry._lock:
            if lsn is not None:
                self.lsn = lsn
            if csn is not None:
                self.csn = csn

    def release(self) -> None:
        self.registry._release(self.key)

    def __enter__(self) -> Hold:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class HoldRegistry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holds: dict[int, Hold] = {}
        self._keys = itertools.count(1)

    def hold(self, name: str, *, lsn: int | None = None, csn: int | None = None) -> Hold:
        with self._lock:
            h = Hold(self, next(self._keys), name, lsn, csn)
            self._holds[h.key] = h
            return h

    def _release(self, key: int) -> None:
        with self._lock:
            self._holds.pop(key, None)

    def oldest_lsn(self) -> int | None:
        with self._lock:
            return min((h.lsn for h in self._holds.values() if h.lsn is not None), default=None)

    def oldest_csn(self) -> int | None:
        with self._lock:
            return min((h.csn for h in self._holds.values() if h.csn is not None), default=None)

    def live_keys(self) -> frozenset[int]:
        """The holds that may be reading table files now (those holding a CSN)."""
        with self._lock:
            return frozenset(k for k, h in self._holds.items() if h.csn is not None)

    def any_alive(self, keys: frozenset[int]) -> bool:
        with self._lock:
            return any(k in self._holds for k in keys)

    def describe(self) -> list[tuple[str, int | None, int | None]]:
        with self._lock:
            return [(h.name, h.lsn, h.csn) for h in self._holds.values()]
