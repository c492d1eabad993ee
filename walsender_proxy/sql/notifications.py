"""LISTEN, UNLISTEN and NOTIFY (and ``pg_notify``) as PostgreSQL 15's async.c behaves.

One :class:`NotificationHub` per server: which backend listens on which channel, and the
notifications each has yet to send its client. A session's own :class:`PendingNotifies`
holds what its transaction asked for; nothing happens before the transaction commits: then
its LISTEN/UNLISTEN take effect and its notifications (a duplicate of one already queued in
the same transaction dropped, as PostgreSQL drops them) go to every listener, in commit
order, the notifying backend included. A rollback, or a ROLLBACK TO SAVEPOINT before them,
discards them. The server sends a backend's notifications when it is idle: at once through
the ``wake`` callback it registered, or before its next ReadyForQuery outside a transaction
block.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from decoding.errors import PgError

#: PostgreSQL's NOTIFY_PAYLOAD_MAX_LENGTH (BLCKSZ - NAMEDATALEN - 128): a payload is shorter.
MAX_PAYLOAD = 8192 - 64 - 128
_NAMEDATALEN = 64


def check_notify(channel: str, payload: str) -> None:
    """Async_Notify's checks of a NOTIFY or pg_notify() (22023)."""
    if not channel:
        raise PgError("22023", "channel name cannot be empty")
    if len(channel.encode()) >= _NAMEDATALEN:
        raise PgError("22023", "channel name too long")
    if len(payload.encode()) >= MAX_PAYLOAD:
        raise PgError("22023", "payload string too long")


@dataclass(slots=True)
class PendingNotifies:
    """One session's transaction: its LISTEN/UNLISTEN actions (channel, or None: all) and
    its notifications, with marks for savepoints."""

    actions: list[tuple[str, str | None]] = field(default_factory=list)
    notifies: list[tuple[str, str]] = field(default_factory=list)
    marks: list[tuple[str, int, int]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.actions or self.notifies)

    def notify(self, channel: str, payload: str) -> None:
        check_notify(channel, payload)
        if (channel, payload) not in self.notifies:  # (AsyncExistsPendingNotify)
            self.notifies.append((channel, payload))

    def savepoint(self, name: str) -> None:
        self.marks.append((name, len(self.actions), len(self.notifies)))

    def rollback_to(self, name: str) -> None:
        for i in range(len(self.marks) - 1, -1, -1):
            if self.marks[i][0] == name:
                _, na, nn = self.marks[i]
                del self.actions[na:], self.notifies[nn:], self.marks[i + 1 :]
                return

    def release(self, name: str) -> None:
        for i in range(len(self.marks) - 1, -1, -1):
            if self.marks[i][0] == name:
                del self.marks[i:]
                return

    def clear(self) -> None:
        self.actions.clear()
        self.notifies.clear()
        self.marks.clear()


class NotificationHub:
    """The server's listeners and each backend's queue of notifications to send."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._channels: dict[int, dict[str, None]] = {}  # (a dict: the order listened in)
        self._queues: dict[int, list[tuple[int, str, str]]] = {}
        self._wake: dict[int, Callable[[], None]] = {}

    def register(self, pid: int, wake: Callable[[], None]) -> None:
        with self._lock:
            self._wake[pid] = wake

    def unregister(self, pid: int) -> None:
        """The backend ended: it listens no more (Async_UnlistenOnExit)."""
        with self._lock:
            self._wake.pop(pid, None)
            self._channels.pop(pid, None)
            self._queues.pop(pid, None)

    def channels(self, pid: int) -> list[str]:
        """pg_listening_channels(), in the order the channels were listened to."""
        with self._lock:
            return list(self._channels.get(pid, ()))

    def commit(self, pid: int, pending: PendingNotifies) -> None:
        """A transaction committed: its LISTEN/UNLISTEN apply, then its notifications go
        to every backend listening on their channels."""
        woken: list[Callable[[], None]] = []
        with self._lock:
            for action, channel in pending.actions:
                mine = self._channels.setdefault(pid, {})
                if action == "listen" and channel is not None:
                    mine[channel] = None
                elif channel is None:
                    mine.clear()
                else:
                    mine.pop(channel, None)
            for channel, payload in pending.notifies:
                for other, chans in self._channels.items():
                    if channel in chans:
                        self._queues.setdefault(other, []).append((pid, channel, payload))
                        wake = self._wake.get(other)
                        if other != pid and wake is not None and wake not in woken:
                            woken.append(wake)
        pending.clear()
        for wake in woken:
            wake()

    def take(self, pid: int) -> list[tuple[int, str, str]]:
        """The notifications this backend has yet to send its client, oldest first."""
        with self._lock:
            return self._queues.pop(pid, [])

    def has(self, pid: int) -> bool:
        """Whether notifications wait for ``pid`` (read without the lock: one that lands
        just after wakes the backend anyway)."""
        return pid in self._queues
