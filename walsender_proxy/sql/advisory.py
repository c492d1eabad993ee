"""Advisory locks: ``pg_advisory_lock`` and its family, as PostgreSQL's lock manager keeps
them for ``locktype = 'advisory'``.

Applications and migration tools (Flyway, golang-migrate, Rails…) take one to run a step
alone. Nothing in the lake is locked by them; they are a server-wide table of named locks:

- a key is a ``bigint`` or a pair of ``int4`` (two separate key spaces, as PostgreSQL's
  lock tag tells them apart), per database;
- a lock is exclusive or shared; a backend never conflicts with itself, and holds
  re-entrantly (as many unlocks as locks);
- session-level locks last until unlocked or the session ends; transaction-level ones
  until the transaction ends (``pg_advisory_unlock`` does not release them);
- a request waits behind earlier waiters it conflicts with (no starvation of an exclusive
  waiter), and a waiter gives up on a cancel (57014), at ``lock_timeout`` (55P03), or when
  it closes a cycle of waiting backends (40P01, checked after ``deadlock_timeout``, by the
  waiter that finds it, as PostgreSQL's deadlock detector does).

Blocking is on a condition variable polled every few milliseconds for the cancel flag:
the waiting thread is the session's (or a DuckDB worker running its UDF), never the
event loop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from decoding.errors import PgError

EXCLUSIVE = "ExclusiveLock"
SHARE = "ShareLock"
#: A PostgreSQL lock tag for an advisory lock: (database oid, classid, objid, objsubid):
#: a bigint key is (high 32 bits, low 32 bits, 1), two int4 keys are (key1, key2, 2).
Key = tuple[int, int, int, int]
_POLL = 0.005


def key_of(database_oid: int, a: int, b: int | None = None) -> Key:
    if b is None:
        return (database_oid, (a >> 32) & 0xFFFFFFFF, a & 0xFFFFFFFF, 1)
    return (database_oid, a & 0xFFFFFFFF, b & 0xFFFFFFFF, 2)


@dataclass
class _Holds:
    """One backend's holds on one key: counts by (mode, level)."""

    counts: dict[tuple[str, bool], int] = field(default_factory=dict)  # (mode, xact) -> n

    def modes(self) -> set[str]:
        return {mode for (mode, _), n in self.counts.items() if n}


@dataclass
class _Waiter:
    pid: int
    key: Key
    mode: str
    since: float


def _conflicts(a: str, b: str) -> bool:
    return a == EXCLUSIVE or b == EXCLUSIVE


class AdvisoryLocks:
    """The server's advisory lock table (one per server, shared by all sessions)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._held: dict[Key, dict[int, _Holds]] = {}
        self._queue: dict[Key, list[_Waiter]] = {}

    # -- taking --------------------------------------------------------------------------
    def acquire(
        self,
        pid: int,
        key: Key,
        mode: str,
        *,
        xact: bool,
        wait: bool,
        lock_timeout: float = 0.0,
        deadlock_timeout: float = 1.0,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> bool:
        """Take the lock; False only when ``wait`` is false and it is taken elsewhere.
        Timeouts in seconds (0: none)."""
        with self._cond:
            if self._grantable(pid, key, mode, None):
                self._grant(pid, key, mode, xact)
                return True
            if not wait:
                return False
            me = _Waiter(pid, key, mode, time.monotonic())
            self._queue.setdefault(key, []).append(me)
            checked = False
            try:
                while not self._grantable(pid, key, mode, me):
                    if cancelled():
                        raise PgError("57014", "canceling statement due to user request")
                    waited = time.monotonic() - me.since
                    if lock_timeout and waited >= lock_timeout:
                        raise PgError("55P03", "canceling statement due to lock timeout")
                    if not checked and waited >= deadlock_timeout:
                        checked = True
                        cycle = self._cycle(me)
                        if cycle:
                            raise PgError(
                                "40P01", "deadlock detected", detail=cycle,
                                hint="See server log for query details.",
                            )  # fmt: skip
                    self._cond.wait(_POLL)
                self._grant(pid, key, mode, xact)
                return True
            finally:
                q = self._queue.get(key)
                if q is not None and me in q:
                    q.remove(me)
                    if not q:
                        del self._queue[key]
                    self._cond.notify_all()  # a waiter behind this one may go now

    def _grantable(self, pid: int, key: Key, mode: str, me: _Waiter | None) -> bool:
        """No other backend holds a conflicting mode, and (unless this backend holds the
        key already) no earlier waiter wants a conflicting one."""
        holders = self._held.get(key, {})
        for other, holds in holders.items():
            if other != pid and any(_conflicts(mode, m) for m in holds.modes()):
                return False
        if pid in holders:
            return True
        for w in self._queue.get(key, ()):
            if w is me:
                break
            if w.pid != pid and _conflicts(mode, w.mode):
                return False
        return True

    def _grant(self, pid: int, key: Key, mode: str, xact: bool) -> None:
        holds = self._held.setdefault(key, {}).setdefault(pid, _Holds())
        holds.counts[(mode, xact)] = holds.counts.get((mode, xact), 0) + 1

    def _blockers(self, w: _Waiter) -> list[int]:
        out = [
            other
            for other, holds in self._held.get(w.key, {}).items()
            if other != w.pid and any(_conflicts(w.mode, m) for m in holds.modes())
        ]
        if w.pid not in self._held.get(w.key, {}):
            for ahead in self._queue.get(w.key, ()):
                if ahead is w:
                    break
                if ahead.pid != w.pid and _conflicts(w.mode, ahead.mode) and ahead.pid not in out:
                    out.append(ahead.pid)
        return out

    def _cycle(self, me: _Waiter) -> str | None:
        """PostgreSQL's deadlock DETAIL when ``me`` closes a cycle of waits, else None."""
        waiting = {w.pid: w for q in self._queue.values() for w in q}
        path: list[tuple[_Waiter, int]] = []

        def visit(w: _Waiter, seen: set[int]) -> bool:
            for b in self._blockers(w):
                path.append((w, b))
                if b == me.pid:
                    return True
                nxt = waiting.get(b)
                if nxt is not None and b not in seen:
                    seen.add(b)
                    if visit(nxt, seen):
                        return True
                path.pop()
            return False

        if not visit(me, {me.pid}):
            return None
        return "\n".join(
            f"Process {w.pid} waits for {w.mode} on advisory lock "
            f"[{w.key[0]},{w.key[1]},{w.key[2]},{w.key[3]}]; blocked by process {b}."
            for w, b in path
        )

    # -- letting go ----------------------------------------------------------------------
    def release(self, pid: int, key: Key, mode: str) -> bool:
        """One session-level hold of ``mode``; False when there is none (PostgreSQL warns)."""
        with self._cond:
            holds = self._held.get(key, {}).get(pid)
            n = holds.counts.get((mode, False), 0) if holds is not None else 0
            if not n:
                return False
            assert holds is not None
            holds.counts[(mode, False)] = n - 1
            self._forget_empty(pid, key)
            self._cond.notify_all()
            return True

    def release_all(self, pid: int, *, xact: bool) -> None:
        """Every session-level (``xact`` false: pg_advisory_unlock_all) or transaction-level
        (the transaction's end) hold of ``pid``."""
        with self._cond:
            for key in [k for k, h in self._held.items() if pid in h]:
                counts = self._held[key][pid].counts
                for mk in [mk for mk in counts if mk[1] == xact]:
                    del counts[mk]
                self._forget_empty(pid, key)
            self._cond.notify_all()

    def _forget_empty(self, pid: int, key: Key) -> None:
        holders = self._held[key]
        if not any(holders[pid].counts.values()):
            del holders[pid]
            if not holders:
                del self._held[key]

    # -- pg_locks ------------------------------------------------------------------------
    def rows(self) -> list[dict[str, object]]:
        """``pg_locks`` rows: every hold (granted) and every waiter (not granted)."""
        out: list[dict[str, object]] = []
        with self._cond:
            for key, holders in self._held.items():
                for pid, holds in holders.items():
                    for mode in sorted(holds.modes()):
                        out.append(_lock_row(key, pid, mode, True))
            for q in self._queue.values():
                for w in q:
                    out.append(_lock_row(w.key, w.pid, w.mode, False))
        return out


def _lock_row(key: Key, pid: int, mode: str, granted: bool) -> dict[str, object]:
    return {
        "locktype": "advisory", "database": key[0], "classid": key[1], "objid": key[2],
        "objsubid": key[3], "virtualtransaction": f"{pid % 1000}/1", "pid": pid, "mode": mode,
        "granted": granted, "fastpath": False,
    }  # fmt: skip
