"""The byte side of one client connection: a sans-IO :class:`ConnectionMachine` over an
asyncio stream, with the output queued and written in few pieces.

Shared by the server's sessions and by a walsender process, which takes a replication connection over for the length of one stream and needs
the same framing and flushing, but none of a session's SQL.
"""

from __future__ import annotations

import asyncio
from typing import Any

from walsender_proxy.protocol import messages as m
from walsender_proxy.protocol.machine import ConnectionClosed, ConnectionMachine, Phase

#: Queued output is written once it passes this (see :meth:`Conn.maybe_flush`).
FLUSH_AT = 1 << 16


class Disconnect(Exception):
    """The connection ends here (after whatever was already queued is flushed)."""


class Conn:
    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, machine: ConnectionMachine
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.machine = machine
        self.out: list[bytes] = []
        self.out_size = 0

    # -- output --------------------------------------------------------------------------
    def send(self, msg: m.BackendMessage) -> None:
        self.queue(self.machine.send(msg))

    def queue(self, data: bytes) -> None:
        self.out.append(data)
        self.out_size += len(data)

    def write(self, data: bytes | memoryview) -> None:
        """What is queued, then ``data`` (a large buffer of whole messages, such as the
        walsender's bulk XLogData frames) straight to the transport: no join, no copy
        unless the socket cannot take it at once. ``flush`` then waits for the drain."""
        if self.out:
            self.writer.write(b"".join(self.out))
            self.out.clear()
            self.out_size = 0
        self.writer.write(data)

    async def flush(self) -> None:
        if self.out:
            self.writer.write(b"".join(self.out))
            self.out.clear()
            self.out_size = 0
        await self.writer.drain()

    async def maybe_flush(self) -> None:
        if self.out_size >= FLUSH_AT:
            await self.flush()

    # -- input ---------------------------------------------------------------------------
    async def next_event(self, timeout: float | None = None, *, flush: bool = True) -> Any:
        while True:
            ev = self.machine.next_event()
            if ev is not None:
                return ev
            if self.machine.phase is Phase.CLOSED:  # (a FATAL went out: no more events)
                return ConnectionClosed()
            if flush:
                await self.flush()
            try:
                data = await asyncio.wait_for(self.reader.read(1 << 16), timeout)
            except (ConnectionError, asyncio.IncompleteReadError):
                data = b""
            self.machine.receive_data(data)

    def take_unread(self) -> bytes:
        """Stop reading, and take every byte received but not yet made into a message:
        what the transport read ahead and what the machine holds. Another owner of the
        socket carries on from there (the kernel keeps the rest)."""
        transport = self.writer.transport
        if transport.is_reading():  # type: ignore[attr-defined]
            transport.pause_reading()  # type: ignore[attr-defined]
        buffered = getattr(self.reader, "_buffer", None)  # read by the transport, not by us
        if buffered:
            self.machine.receive_data(bytes(buffered))
            buffered.clear()
        return self.machine.take_unread()
