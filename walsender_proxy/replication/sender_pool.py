"""The server's walsender processes: started ahead of need, lent to one stream at a time.

A process costs a second or so to start (Python, Arrow, the decoding code), so the server
keeps ``walsender_processes`` of them idle and ready; a stream takes one at once and a
replacement starts behind it. Up to ``max_wal_senders`` streams run in processes; a process
that dies takes only its stream with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from decoding.logview import FlushBeacon
from walsender_proxy.replication.sender_channel import Channel, ChannelClosed

log = logging.getLogger("walsender_proxy.walsender")

#: How long a new process may take to be ready.
START_TIMEOUT = 60.0


class SenderProcess:
    """One walsender process and the server's ends of its control socket and wake pipe."""

    def __init__(self, proc: subprocess.Popen[bytes], channel: Channel, wake_w: int) -> None:
        self.proc = proc
        self.channel = channel
        self.wake_w = wake_w
        self.broken = False

    @classmethod
    async def start(cls) -> SenderProcess:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            proc = await asyncio.to_thread(
                subprocess.Popen,
                [sys.executable, "-m", "walsender_proxy.replication.sender_process",
                 str(theirs.fileno()), str(wake_r)],
                pass_fds=(theirs.fileno(), wake_r),
                stdin=subprocess.DEVNULL,
            )
        finally:
            theirs.close()
            os.close(wake_r)
        ours.setblocking(False)
        sender = cls(proc, Channel(ours), wake_w)
        try:
            msg = await asyncio.wait_for(sender.channel.arecv(), START_TIMEOUT)
        except (TimeoutError, ChannelClosed):
            sender.close()
            raise OSError("a walsender process did not start") from None
        if msg.get("t") != "ready":
            sender.close()
            raise OSError(f"a walsender process said {msg!r} instead of ready")
        return sender

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

    async def _stop(self) -> None:
        await self.channel.asend({"t": "stop"})
        while (await self.channel.arecv())["t"] != "end":
            pass

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.channel.sock.close()
        with contextlib.suppress(OSError):
            os.close(self.wake_w)
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class SenderPool:
    def __init__(self, log_dir: Path, flushed_lsn: int, idle: int, limit: int) -> None:
        self.beacon = FlushBeacon(log_dir / "flushed.lsn", flushed_lsn)
        self.idle_target = idle
        self.limit = limit
        self._idle: list[SenderProcess] = []
        self._busy: set[SenderProcess] = set()
        self._starting = 0
        self._closed = False
        self._tasks: set[asyncio.Task[None]] = set()

    def fill(self) -> None:
        """Start processes in the background until ``idle_target`` are idle or starting."""
        while not self._closed and len(self._idle) + self._starting < self.idle_target:
            self._starting += 1
            task = asyncio.get_running_loop().create_task(self._start_one())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _start_one(self) -> None:
        try:
            p = await SenderProcess.start()
        except OSError as e:
            log.warning("%s", e)
            return
        finally:
            self._starting -= 1
        if self._closed:
            p.close()
        else:
            self._idle.append(p)

    async def take(self) -> SenderProcess | None:
        """An idle process (one starts if none is ready); None when ``limit`` are busy."""
        if self._closed or len(self._busy) >= self.limit:
            return None
        p = self._idle.pop() if self._idle else None
        if p is None:
            try:
                p = await SenderProcess.start()
            except OSError as e:
                log.warning("%s", e)
                return None
        self._busy.add(p)
        self.beacon.follow(p.wake_w)
        self.fill()
        return p

    def give_back(self, p: SenderProcess) -> None:
        self.beacon.unfollow(p.wake_w)
        self._busy.discard(p)
        if p.broken or p.proc.poll() is not None or self._closed or len(self._idle) >= self.idle_target:
            p.close()
        else:
            self._idle.append(p)

    def pids(self) -> list[int]:
        return [p.proc.pid for p in (*self._idle, *self._busy)]

    def busy_pids(self) -> list[int]:
        """The processes streaming now."""
        return [p.proc.pid for p in self._busy]

    def close(self) -> None:
        self._closed = True
        for t in list(self._tasks):
            t.cancel()
        for p in [*self._idle, *self._busy]:
            p.close()
        self._idle.clear()
        self._busy.clear()
