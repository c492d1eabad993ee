"""Sequence counters: ``last_value``, ``is_called`` and ``log_cnt`` of each sequence, outside
transactions, as PostgreSQL keeps them (a rolled-back ``nextval`` stays consumed).

PostgreSQL WAL-logs a sequence 32 values ahead of what it hands out (``SEQ_LOG_VALS``) and
shows how many logged values are left in ``log_cnt``: after a crash it resumes past every
value it could have handed out, after a clean shutdown where it stopped. Here the logged
state is ``DATA/sequences.json``, written and fsynced (atomically) before a value beyond the
logged window is handed out — once per 32 ``nextval`` calls at most — and the exact state
when the lake closes. A counter belongs to a generation of its sequence (a RESTART starts a
new one, see :class:`decoding.catalog.Sequence`): the transaction that restarts it counts
in the new one while others count on in the old, which is what remains if it rolls back.
The file holds an entry per sequence and generation: last value, is_called, log_cnt.

The definition (increment, bounds, cache, cycle) is the caller's: it comes from the
catalog the calling transaction sees.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from decoding.catalog import Sequence
from walsender_proxy.lake.errors import LakeError
from walsender_proxy.lake.store import _atomic_write_json

#: Values logged ahead of the last one handed out (PostgreSQL's SEQ_LOG_VALS).
LOG_AHEAD = 32


@dataclass(slots=True)
class Counter:
    generation: int
    last_value: int
    is_called: bool
    log_cnt: int = 0


def _initial(sq: Sequence) -> Counter:
    return Counter(sq.generation, sq.restart if sq.restart is not None else sq.start, False, 0)


class SequenceStore:
    """The counters of one lake, shared by its sessions (one lock: a nextval is short)."""

    def __init__(self, path: Path, fsync: bool) -> None:
        self.path = path
        self.fsync = fsync
        self._lock = threading.Lock()
        self._counters: dict[tuple[int, int], Counter] = {}
        #: The durable form: what the file says (the logged-ahead values).
        self._logged: dict[tuple[int, int], Counter] = {}
        #: A checkpoint happened since a sequence was last logged: log again at the next
        #: nextval (PostgreSQL compares the page's LSN with the redo pointer).
        self._checkpointed: set[tuple[int, int]] = set()
        if path.exists():
            data = json.loads(path.read_text())
            for key, (last, called, log) in data.items():
                oid, gen = (int(x) for x in key.split(":"))
                c = Counter(gen, int(last), bool(called), int(log))
                self._counters[(oid, gen)] = c
                self._logged[(oid, gen)] = Counter(gen, c.last_value, c.is_called, c.log_cnt)

    # -- reading -------------------------------------------------------------------------
    def _counter(self, sq: Sequence) -> Counter:
        c = self._counters.get((sq.oid, sq.generation))
        if c is None:
            c = self._counters[(sq.oid, sq.generation)] = _initial(sq)
        return c

    def peek(self, sq: Sequence) -> tuple[int, int, bool]:
        """``SELECT last_value, log_cnt, is_called FROM seq``."""
        with self._lock:
            c = self._counter(sq)
            return c.last_value, c.log_cnt, c.is_called

    # -- nextval -------------------------------------------------------------------------
    def fetch(self, sq: Sequence) -> tuple[int, int]:
        """``nextval_internal`` past the session's cache: the first value to return and the
        last one fetched into the session's cache (``cache`` values, fewer at a bound of a
        non-cycling sequence). 2200H at a bound."""
        with self._lock:
            c = self._counter(sq)
            incby, maxv, minv, cache = sq.increment, sq.max, sq.min, sq.cache
            last = nxt = result = c.last_value
            fetch = cache
            log = c.log_cnt
            rescnt = 0
            logit = False
            if not c.is_called:
                rescnt += 1  # return the current last_value, and count it
                fetch -= 1
            if log < fetch or not c.is_called or (sq.oid, sq.generation) in self._checkpointed:
                fetch = log = fetch + LOG_AHEAD
                logit = True
            while fetch:
                if incby > 0:
                    if (maxv >= 0 and nxt > maxv - incby) or (maxv < 0 and nxt + incby > maxv):
                        if rescnt > 0:
                            break  # stop fetching: we have what we need
                        if not sq.cycle:
                            raise LakeError("2200H", f'nextval: reached maximum value of sequence "{sq.name}" ({maxv})')
                        nxt = minv
                    else:
                        nxt += incby
                else:
                    if (minv < 0 and nxt < minv - incby) or (minv >= 0 and nxt + incby < minv):
                        if rescnt > 0:
                            break
                        if not sq.cycle:
                            raise LakeError("2200H", f'nextval: reached minimum value of sequence "{sq.name}" ({minv})')
                        nxt = maxv
                    else:
                        nxt += incby
                fetch -= 1
                if rescnt < cache:
                    log -= 1
                    rescnt += 1
                    last = nxt
                    if rescnt == 1:
                        result = nxt
            log -= fetch  # the numbers not fetched
            if logit:
                self._log((sq.oid, sq.generation), Counter(c.generation, nxt, True, 0))
            c.last_value, c.is_called, c.log_cnt = last, True, log
            return result, last

    def _log(self, key: tuple[int, int], logged: Counter) -> None:
        """The logged-ahead state is durable before any value of the window is handed out."""
        self._logged[key] = logged
        self._checkpointed.discard(key)
        self._write(self._logged)

    def _write(self, counters: dict[tuple[int, int], Counter]) -> None:
        data: dict[str, Any] = {
            f"{oid}:{gen}": [c.last_value, c.is_called, c.log_cnt] for (oid, gen), c in counters.items()
        }
        _atomic_write_json(self.path, data, self.fsync)

    # -- setval, RESTART -----------------------------------------------------------------
    def setval(self, sq: Sequence, value: int, is_called: bool) -> None:
        """``do_setval``: 22003 outside the bounds; logged at once (log_cnt 0)."""
        if value < sq.min or value > sq.max:
            raise LakeError(
                "22003",
                f'setval: value {value} is out of bounds for sequence "{sq.name}" ({sq.min}..{sq.max})',
            )
        with self._lock:
            c = self._counter(sq)
            c.last_value, c.is_called, c.log_cnt = value, is_called, 0
            self._log((sq.oid, sq.generation), Counter(c.generation, value, is_called, 0))

    def reset_log(self, sq: Sequence) -> None:
        """An ALTER SEQUENCE that changes how values are made: the next nextval logs anew
        (PostgreSQL sets log_cnt to 0)."""
        with self._lock:
            self._counter(sq).log_cnt = 0

    def checkpoint(self) -> None:
        with self._lock:
            self._checkpointed = set(self._counters)

    # -- life ----------------------------------------------------------------------------
    def forget(self, live: set[tuple[int, int]]) -> None:
        """Counters other than the ``live`` (sequence, generation) go: of sequences
        dropped, made by a transaction that did not commit, or restarted since."""
        with self._lock:
            gone = [key for key in self._counters if key not in live]
            for key in gone:
                self._counters.pop(key, None)
                self._logged.pop(key, None)
            if gone:
                self._write(self._logged)

    def close(self) -> None:
        """A clean shutdown keeps the exact state: no values are skipped after it."""
        with self._lock:
            if self._counters:
                self._write(self._counters)
