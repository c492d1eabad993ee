"""A walsender process: streams START_REPLICATION for the server, outside its GIL.

PostgreSQL gives every replication connection a process of its own. Here the server keeps
the connection until START_REPLICATION has been checked and answered, then hands the socket
to one of these processes (:mod:`walsender_proxy.replication.sender_pool`), which runs the
same stream loop as the server would (:class:`~walsender_proxy.replication.stream.
LogicalStream`) against the log's files (:class:`~decoding.logview.LogView`), following the
catalog from the log (:class:`~decoding.catalog_follower.CatalogFollower`). It reports the
client's confirmations back, and when the client ends the stream with CopyDone it gives the
connection back with whatever bytes it had read past it; the server answers the CopyDone.

The server starts one *template* (``python -m walsender_proxy.replication.sender_process
template CONTROL_FD``) and has it fork a walsender process per stream (:func:`template`);
``... sender_process CONTROL_FD WAKE_FD`` runs a walsender process directly.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ctypes
import gc
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from decoding.allocator import tune_allocator
from decoding.catalog import CatalogHistory
from decoding.catalog_follower import CatalogFollower
from decoding.errors import PgError
from decoding.logview import LogView
from walsender_proxy.backend.conn import Conn
from walsender_proxy.protocol.machine import ConnectionMachine
from walsender_proxy.replication.sender_channel import Channel, ChannelClosed
from walsender_proxy.replication.slot import Slot, output_plugin
from walsender_proxy.replication.stream import LogicalStream, StreamState

log = logging.getLogger("walsender_proxy.walsender")

#: How often the client's confirmations go to the server at most: its views and slot
#: saves need them, not every reply (a subscriber replies after every transaction).
REPORT_EVERY = 0.1


class SlotReport:
    """What the stream loop takes for the slot store: positions kept here, sent to the
    server every :data:`REPORT_EVERY` seconds and at the end (the server moves and saves
    the slot)."""

    def __init__(self, channel: Channel, state: StreamState) -> None:
        self.channel = channel
        self.state = state
        self.confirmed_flush = 0
        self.restart_lsn = 0
        self._last: tuple[int | float | None, ...] = ()
        #: Decoding's counts not yet sent (the slot's statistics).
        self.stats: dict[str, int] = {}

    def move(self, name: str, *, confirmed_flush: int | None = None, restart_lsn: int | None = None) -> bool:
        if confirmed_flush is not None:
            self.confirmed_flush = max(self.confirmed_flush, confirmed_flush)
        if restart_lsn is not None:
            self.restart_lsn = max(self.restart_lsn, restart_lsn)
        return False

    def save_if_dirty(self, name: str) -> None:
        """The server saves."""

    def add_stats(self, name: str, counts: dict[str, int]) -> None:
        for k, v in counts.items():
            self.stats[k] = self.stats.get(k, 0) + v

    def take_stats(self) -> dict[str, Any]:
        """The counts to send with a report (``stats``), if any."""
        if not self.stats:
            return {}
        out, self.stats = self.stats, {}
        return {"stats": out}

    def positions(self) -> dict[str, int | float | None]:
        return {"confirmed_flush": self.confirmed_flush, "restart_lsn": self.restart_lsn, **self.state.report()}

    async def report(self, force: bool = False) -> None:
        pos = self.positions()
        key = tuple(pos.values())
        if key != self._last or force or self.stats:
            self._last = key
            await self.channel.asend({"t": "pos", **pos, **self.take_stats()})

    async def run(self) -> None:
        with contextlib.suppress(ChannelClosed, OSError):
            while True:
                await asyncio.sleep(REPORT_EVERY)
                await self.report()


async def serve_stream(channel: Channel, fd: int, req: dict[str, Any]) -> dict[str, Any]:
    """One stream over the socket ``fd``; the message that ends it."""
    sock = socket.socket(fileno=fd)
    reader, writer = await asyncio.open_connection(sock=sock)
    conn = Conn(reader, writer, ConnectionMachine.streaming(max_message_length=req["max_message_length"]))
    unread = base64.b64decode(req["unread"])
    if unread:  # (no bytes would mean end of input)
        conn.machine.receive_data(unread)
    end: dict[str, Any] = {"t": "end"}
    view = LogView(Path(req["log_dir"]), Path(req["beacon"]), req["wake_fd"])
    tasks: list[asyncio.Task[None]] = []
    report: SlotReport | None = None
    stopping = asyncio.Event()
    try:
        slot = Slot(**req["slot"])
        follower = CatalogFollower(CatalogHistory.from_json(req["catalog"]))
        plugin = output_plugin(
            slot.plugin, [tuple(o) for o in req["options"]], req["version_num"], follower.at, Path(req["changesets"]),
            search_path=tuple(req.get("search_path", ())),
        )
        stream = LogicalStream(
            conn, view, None, slot, plugin, req["start"],
            work_mem=req["work_mem"], spill_dir=Path(req["spill_dir"]), changesets=Path(req["changesets"]),
            timeout=_fixed(float(req["wal_sender_timeout"])), observe=follower.observe,
        )
        report = stream.slots = SlotReport(channel, stream.state)
        tasks = [
            asyncio.create_task(report.run()),
            asyncio.create_task(_stop_on_request(channel, stream, view, stopping)),
        ]
        end["outcome"] = await stream.run()
    except PgError as e:
        end["outcome"] = "error"
        end["error"] = [e.sqlstate, e.message, e.detail, e.hint]
    except (ConnectionError, OSError):
        end["outcome"] = "closed"
    except Exception as e:  # a bug: the server reports it as XX000
        log.exception("walsender process: internal error")
        end["outcome"] = "error"
        end["error"] = ["XX000", f"internal error: {type(e).__name__}: {e}", None, None]
    finally:
        for t in tasks:
            t.cancel()
        view.close()
    if end["outcome"] == "done" or stopping.is_set():
        # Everything sent must be on the socket before the server writes after it (its
        # CopyDone, or the FATAL of a shutdown), or a message would be cut in two.
        with contextlib.suppress(ConnectionError, TimeoutError):
            async with asyncio.timeout(5):
                await conn.flush()
                while writer.transport.get_write_buffer_size():
                    await asyncio.sleep(0.001)
    if end["outcome"] == "done":
        end["unread"] = base64.b64encode(conn.take_unread()).decode()
    writer.transport.abort()  # closes this process's descriptor; the server keeps its own
    if report is not None:
        end.update(report.positions())
        end.update(report.take_stats())
    return end


async def _stop_on_request(
    channel: Channel, stream: LogicalStream, view: LogView, stopping: asyncio.Event
) -> None:
    """The server asks the stream to end (shutdown), or went away."""
    with contextlib.suppress(ChannelClosed):
        while (msg := await channel.arecv()).get("t") != "stop":
            if msg.get("t") == "settings":  # (the server's settings were reloaded)
                stream.configure(int(msg["work_mem"]), _fixed(float(msg["wal_sender_timeout"])))
        stopping.set()
    stream.state.closed = stream.state.done = True
    view.wake_waiters()


def _fixed(value: float) -> Callable[[], float]:
    return lambda: value


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def serve(ctl: socket.socket, wake_fd: int) -> int:
    """A walsender process: streams what the server sends it, one at a time, until the
    server closes the control socket."""
    channel = Channel(ctl)
    try:
        channel.send({"t": "ready"})
    except OSError:  # the server is gone already
        return 0
    while True:
        try:
            ctl.setblocking(True)
            req, fds = channel.recv()
        except (ChannelClosed, OSError):  # the server is done with this process
            return 0
        if req.get("t") != "start" or len(fds) != 1:
            _close_fds(fds)
            continue
        req["wake_fd"] = wake_fd
        ctl.setblocking(False)
        t0 = time.monotonic()
        end = asyncio.run(serve_stream(channel, fds[0], req))
        log.info("stream ended (%s) after %.1f s", end["outcome"], time.monotonic() - t0)
        ctl.setblocking(True)
        try:
            channel.send(end)
        except OSError:
            return 0


def template(ctl: socket.socket) -> int:
    """The template process: everything a walsender needs is imported, no thread runs, and
    each ``fork`` request becomes a walsender process (``os.fork``: ready in milliseconds,
    its pages shared with the template until written) — as PostgreSQL's postmaster forks
    a walsender. The request carries the new process's control socket and wake-up pipe."""
    signal.signal(signal.SIGCHLD, _reap)
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    if threads > 1:  # forking would copy locks that other threads may hold
        log.error("the walsender template runs %d threads; it will not fork", threads)
        return 1
    # What the template holds is shared with every process it forks until written: keep the
    # collector from writing to those objects' headers in the children (Python's advice
    # for pre-fork servers).
    gc.collect()
    gc.freeze()
    channel = Channel(ctl)
    try:
        channel.send({"t": "ready", "pid": os.getpid()})
    except OSError:
        return 0
    while True:
        try:
            req, fds = channel.recv()
        except (ChannelClosed, OSError):  # the server is gone
            return 0
        if req.get("t") != "fork" or len(fds) != 2:
            _close_fds(fds)
            continue
        pid = os.fork()
        if pid == 0:  # the walsender process
            code = 1
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                ctl.close()
                _die_with_parent()
                code = serve(socket.socket(fileno=fds[0]), fds[1])
            finally:
                logging.shutdown()
                os._exit(code)
        _close_fds(fds)
        try:
            channel.send({"t": "forked", "pid": pid})
        except OSError:
            return 0


def _reap(signum: int, frame: Any) -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _close_fds(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def main(argv: list[str]) -> int:
    _die_with_parent()
    tune_allocator()  # (inherited by the forked processes)
    logging.basicConfig(level=logging.WARNING, format="walsender %(process)d: %(levelname)s %(message)s")
    if argv[0] == "template":
        return template(socket.socket(fileno=int(argv[1])))
    return serve(socket.socket(fileno=int(argv[0])), int(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
