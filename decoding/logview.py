"""The change log seen from another process: a walsender process follows the log's files
while the server process writes them.

The server publishes the durable end of the log (the flushed LSN) in a small shared file
and pokes each follower's wake-up pipe when it moves — the role of PostgreSQL's shared
``LogwrtResult`` and of the latch a walsender sleeps on. A follower reads only up to that
end, so it never sends what a crash could take back.
"""

from __future__ import annotations

import asyncio
import contextlib
import mmap
import os
import select
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path

from decoding.changelog import SUFFIX, LogReader

#: The flushed LSN, twice: a reader takes it when both copies agree (the writer updates
#: the first, then the second), so a torn 8-byte read can never be taken for a position.
_PAIR = struct.Struct("<QQ")


class FlushBeacon:
    """The server's side: the shared flushed LSN and the followers to wake."""

    def __init__(self, path: Path, lsn: int) -> None:
        self.path = path
        with open(path, "wb") as f:
            f.write(_PAIR.pack(lsn, lsn))
        fd = os.open(path, os.O_RDWR)
        try:
            self._map = mmap.mmap(fd, _PAIR.size)
        finally:
            os.close(fd)
        self._lock = threading.Lock()
        self._wake: set[int] = set()
        self._lsn = lsn

    def publish(self, lsn: int) -> None:
        """The durable end moved to ``lsn``. Under the beacon's lock: two flushers cannot
        put an older end over a newer one, and a follower's pipe is not closed (and its
        descriptor number reused) while a wake-up is being written to it. Never raises: a
        flush must not fail for a follower's sake."""
        with self._lock:
            if lsn <= self._lsn:
                return
            self._lsn = lsn
            m = self._map
            try:
                struct.pack_into("<Q", m, 0, lsn)
                struct.pack_into("<Q", m, 8, lsn)
            except (ValueError, TypeError):  # closed: the server is stopping
                return
            for fd in self._wake:
                with contextlib.suppress(OSError):  # full (it says "look again" already) or gone
                    os.write(fd, b"\x01")

    def follow(self, wake_fd: int) -> None:
        """Wake ``wake_fd`` (a non-blocking pipe's write end) at every move from now on."""
        with self._lock:
            self._wake.add(wake_fd)

    def unfollow(self, wake_fd: int) -> None:
        """Stop waking ``wake_fd``; once this returns, the caller may close it."""
        with self._lock:
            self._wake.discard(wake_fd)

    def close(self) -> None:
        with self._lock:
            self._map.close()


class LogView:
    """The change log's directory, read-only, up to the durable end the server publishes:
    what :class:`~decoding.changelog.LogReader` and the stream loop need of a log."""

    def __init__(self, directory: Path, beacon_path: Path, wake_fd: int) -> None:
        self.dir = Path(directory)
        fd = os.open(beacon_path, os.O_RDONLY)
        try:
            self._map = mmap.mmap(fd, _PAIR.size, prot=mmap.PROT_READ)
        finally:
            os.close(fd)
        self._wake_fd = wake_fd
        self._self_r, self._self_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._poll = select.poll()
        self._poll.register(wake_fd, select.POLLIN)
        self._poll.register(self._self_r, select.POLLIN)
        self._woken: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def flushed_lsn(self) -> int:
        while True:
            second, first = _PAIR.unpack_from(self._map)[::-1]
            if first == second:
                return first

    def segment_starts(self) -> list[int]:
        return sorted(int(n[: -len(SUFFIX)], 16) for n in os.listdir(self.dir) if n.endswith(SUFFIX))

    @property
    def oldest_lsn(self) -> int:
        return self.segment_starts()[0]

    def readable(self, stop: int) -> None:
        """Records below the flushed LSN are in the files already."""

    def reader(self, start: int) -> LogReader:
        return LogReader(self, start)

    def wait_flushed(
        self, beyond: int, timeout: float, stop: Callable[[], bool] | None = None
    ) -> int:
        """Wait until the durable end passes ``beyond`` (or the timeout, or ``stop()`` is
        true after a :meth:`wake_waiters`); returns it."""
        deadline = time.monotonic() + timeout
        while True:
            flushed = self.flushed_lsn
            if flushed > beyond or (stop is not None and stop()):
                return flushed
            left = deadline - time.monotonic()
            if left <= 0:
                return flushed
            for fd, _ in self._poll.poll(left * 1000):
                _drain(fd)

    async def wait_flushed_async(
        self, beyond: int, timeout: float, stop: Callable[[], bool] | None = None
    ) -> int:
        """:meth:`wait_flushed` on an event loop (the process's stream loop reads the log
        itself): the wake-up pipes are watched by the loop while the stream lasts."""
        loop = asyncio.get_running_loop()
        if self._woken is None:
            self._woken = asyncio.Event()
            for fd in (self._wake_fd, self._self_r):
                loop.add_reader(fd, self._on_wake, fd)
            self._loop = loop
        deadline = loop.time() + timeout
        while True:
            self._woken.clear()
            flushed = self.flushed_lsn
            if flushed > beyond or (stop is not None and stop()):
                return flushed
            left = deadline - loop.time()
            if left <= 0:
                return flushed
            try:
                async with asyncio.timeout(left):
                    await self._woken.wait()
            except TimeoutError:
                pass

    def _on_wake(self, fd: int) -> None:
        _drain(fd)
        assert self._woken is not None
        self._woken.set()

    def wake_waiters(self) -> None:
        with contextlib.suppress(BlockingIOError):
            os.write(self._self_w, b"\x01")

    def close(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            for fd in (self._wake_fd, self._self_r):
                self._loop.remove_reader(fd)
        self._map.close()
        os.close(self._self_r)
        os.close(self._self_w)


def _drain(fd: int) -> None:
    """Empty a wake-up pipe: only the descriptor that woke us, and a short read is the end
    (no read that fails with EAGAIN). A stream wakes at every commit, so a walsender
    serving single-row transactions made four reads per transaction here instead of one."""
    with contextlib.suppress(BlockingIOError):
        while len(os.read(fd, 4096)) == 4096:
            pass
