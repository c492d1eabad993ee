"""Messages between the server and a walsender process: JSON objects, each behind a
4-byte length, on a Unix socket pair; a connection's socket travels with a message as an
``SCM_RIGHTS`` file descriptor.

Both ends use the same class: blocking calls where a side has nothing else to do (the
walsender process between streams), ``asyncio`` ones where an event loop runs.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from typing import Any

_LEN = struct.Struct("!I")


class ChannelClosed(Exception):
    """The other end went away."""


class Channel:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buf = bytearray()

    @staticmethod
    def _frame(msg: dict[str, Any]) -> bytes:
        body = json.dumps(msg, separators=(",", ":")).encode()
        return _LEN.pack(len(body)) + body

    def _take(self) -> dict[str, Any] | None:
        buf = self._buf
        if len(buf) < 4:
            return None
        (n,) = _LEN.unpack_from(buf)
        if len(buf) < 4 + n:
            return None
        msg = json.loads(bytes(buf[4 : 4 + n]))
        del buf[: 4 + n]
        return msg  # type: ignore[no-any-return]

    # -- blocking ------------------------------------------------------------------------
    def send(self, msg: dict[str, Any], *fds: int) -> None:
        """Send ``msg``, with the descriptors ``fds`` if any."""
        data = self._frame(msg)
        if fds:
            # The descriptors ride on the first byte; the rest follows as plain data.
            socket.send_fds(self.sock, [data[:1]], list(fds))
            data = data[1:]
        self.sock.sendall(data)

    def recv(self) -> tuple[dict[str, Any], list[int]]:
        """The next message, with the descriptors that came with it."""
        fds: list[int] = []
        while True:
            msg = self._take()
            if msg is not None:
                return msg, fds
            data, got, _, _ = socket.recv_fds(self.sock, 1 << 16, 4)
            if not data:
                raise ChannelClosed
            fds.extend(got)
            self._buf += data

    # -- asyncio -------------------------------------------------------------------------
    async def asend(self, msg: dict[str, Any], *fds: int) -> None:
        """Send ``msg``, with the descriptors ``fds`` if any."""
        loop = asyncio.get_running_loop()
        data = self._frame(msg)
        if fds:
            while True:
                try:
                    socket.send_fds(self.sock, [data[:1]], list(fds))
                    break
                except BlockingIOError:
                    await asyncio.sleep(0.001)
            data = data[1:]
        await loop.sock_sendall(self.sock, data)

    async def arecv(self) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        while True:
            msg = self._take()
            if msg is not None:
                return msg
            data = await loop.sock_recv(self.sock, 1 << 16)
            if not data:
                raise ChannelClosed
            self._buf += data
