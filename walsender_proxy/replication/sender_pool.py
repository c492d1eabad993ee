"""The server's walsender processes: forked from a template, one per stream.

Starting a Python process that can decode (Arrow, numpy, DuckDB, the decoding code) takes
half a second of CPU, and a subscription's first minute is a burst of short streams (one
per table sync). So the server starts one *template* process with itself; the template has
imported everything and runs no thread, and forks a walsender process for each stream in a
few milliseconds — PostgreSQL's postmaster forks its walsenders the same way. A walsender
process's pages stay shared with the template until written. The process ends with its
stream (when the server closes its control socket); the template reaps it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from decoding.logview import FlushBeacon
from walsender_proxy.replication.sender_channel import Channel, ChannelClosed

log = logging.getLogger("walsender_proxy.walsender")

#: How long the template may take to start, and a fork to be ready.
START_TIMEOUT = 60.0
_MODULE = "walsender_proxy.replication.sender_process"


class SenderProcess:
    """One walsender process: the server's ends of its control socket and wake-up pipe."""

    def __init__(self, pid: int, channel: Channel, wake_w: int) -> None:
        self.pid = pid
        self.channel = channel
        self.wake_w = wake_w
        self.broken = False

    async def stream(
        self, fd: int, request: dict[str, Any], on_positions: Callable[[dict[str, Any]], Any]
    ) -> dict[str, Any]:
        """Lend the connection ``fd`` for one stream; its final message. Position reports
        go to ``on_positions`` (awaited when it returns an awaitable)."""
        try:
            await self.channel.asend({"t": "start", **request}, fd)
            while True:
                msg = await self.channel.arecv()
                if msg["t"] == "end":
                    return msg
                if msg["t"] == "pos":
                    res = on_positions(msg)
                    if asyncio.iscoroutine(res):
                        await res
        except asyncio.CancelledError:
            # The server stops: ask the stream to end, give it a moment, then insist.
            self.broken = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._stop(), 2.0)
            raise
        except (ChannelClosed, OSError):
            self.broken = True
            return {"t": "end", "outcome": "closed"}

    async def configure(self, work_mem: int, wal_sender_timeout: float) -> None:
        """The running stream's settings, reloaded."""
        await self.channel.asend({"t": "settings", "work_mem": work_mem, "wal_sender_timeout": wal_sender_timeout})

    async def _stop(self) -> None:
        await self.channel.asend({"t": "stop"})
        while (await self.channel.arecv())["t"] != "end":
            pass

    def close(self) -> None:
        """End the process: closing its control socket ends it after its stream; one that
        was broken off is killed."""
        with contextlib.suppress(OSError):
            self.channel.sock.close()
        with contextlib.suppress(OSError):
            os.close(self.wake_w)
        if self.broken:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)


class SenderPool:
    def __init__(self, log_dir: Path, flushed_lsn: int, limit: int) -> None:
        self.beacon = FlushBeacon(log_dir / "flushed.lsn", flushed_lsn)
        self.limit = limit
        self._busy: set[SenderProcess] = set()
        self._template: subprocess.Popen[bytes] | None = None
        self._channel: Channel | None = None
        self._ready: asyncio.Task[Channel | None] | None = None
        self._fork_lock = asyncio.Lock()
        self._closed = False

    def start(self) -> None:
        """Start the template in the background (on the event loop; again if it died)."""
        if self._closed or (self._ready is not None and not self._ready.done()):
            return
        if self._template is not None and self._template.poll() is None and self._channel is not None:
            return
        self._ready = asyncio.get_running_loop().create_task(self._start_template())

    async def _start_template(self) -> Channel | None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # No thread may run in a process that forks: numpy's OpenBLAS and Arrow's jemalloc
        # would each start one at import.
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   JE_ARROW_MALLOC_CONF="background_thread:false")
        try:
            proc = await asyncio.to_thread(
                subprocess.Popen,
                [sys.executable, "-m", _MODULE, "template", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, env=env,
            )
        except OSError as e:
            log.warning("could not start the walsender template process: %s", e)
            return None
        finally:
            theirs.close()
        ours.setblocking(False)
        channel = Channel(ours)
        try:
            msg = await asyncio.wait_for(channel.arecv(), START_TIMEOUT)
        except (TimeoutError, ChannelClosed):
            msg = {}
        if msg.get("t") != "ready" or self._closed:
            ours.close()
            _end(proc)
            if not self._closed:
                log.warning("the walsender template process did not start")
            return None
        self._template, self._channel = proc, channel
        return channel

    async def take(self) -> SenderProcess | None:
        """A new walsender process; None when ``limit`` are busy or none can start (the
        stream then runs in the server process)."""
        if self._closed or len(self._busy) >= self.limit:
            return None
        self.start()
        assert self._ready is not None
        async with self._fork_lock:
            channel = await self._ready
            if channel is None:
                return None
            p = await self._fork(channel)
        if p is None:
            self._channel = None  # the template is gone: the next take starts another
            self.start()
            return None
        self._busy.add(p)
        self.beacon.follow(p.wake_w)
        return p

    async def _fork(self, channel: Channel) -> SenderProcess | None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            await channel.asend({"t": "fork"}, theirs.fileno(), wake_r)
            forked = await asyncio.wait_for(channel.arecv(), START_TIMEOUT)
            ours.setblocking(False)
            p = SenderProcess(int(forked["pid"]), Channel(ours), wake_w)
            ready = await asyncio.wait_for(p.channel.arecv(), START_TIMEOUT)
            if ready.get("t") != "ready":
                raise ChannelClosed
            return p
        except (OSError, ChannelClosed, TimeoutError, KeyError) as e:
            log.warning("could not fork a walsender process: %s", e or type(e).__name__)
            ours.close()
            os.close(wake_w)
            return None
        finally:
            theirs.close()
            os.close(wake_r)

    def give_back(self, p: SenderProcess) -> None:
        self.beacon.unfollow(p.wake_w)
        self._busy.discard(p)
        p.close()

    def pids(self) -> list[int]:
        """The template's and the walsender processes' (for memory accounting)."""
        mine = [self._template.pid] if self._template is not None else []
        return mine + self.busy_pids()

    def busy_pids(self) -> list[int]:
        """The processes streaming now."""
        return [p.pid for p in self._busy]

    def close(self) -> None:
        self._closed = True
        if self._ready is not None:
            self._ready.cancel()
        for p in list(self._busy):
            self.beacon.unfollow(p.wake_w)
            p.broken = True
            p.close()
        self._busy.clear()
        if self._channel is not None:
            with contextlib.suppress(OSError):
                self._channel.sock.close()
        if self._template is not None:
            _end(self._template)
        self.beacon.close()


def _end(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
