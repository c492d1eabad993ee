"""The server's streams, made so that a session's thread can take the socket over.

Once a plain connection's session is set up, its thread reads and writes the socket itself
(no hop through the event loop per round trip, ``Session._hand_over``). Bytes the transport
had already read at that moment sit in the stream reader's buffer: :class:`HandoverReader`
gives them up through one method, the only place that touches asyncio's buffer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class HandoverReader(asyncio.StreamReader):
    """An asyncio StreamReader whose buffered bytes can be taken (and are then gone)."""

    def take_buffered(self) -> bytes:
        """The bytes read from the transport and not consumed yet; the buffer is emptied."""
        buffered = self._buffer  # (StreamReader keeps them there; it has no public way to hand them over)
        data = bytes(buffered)
        buffered.clear()
        return data


Accept = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def start_server(accept: Accept, host: str, port: int, *, limit: int) -> asyncio.Server:
    """asyncio.start_server with :class:`HandoverReader` streams."""
    loop = asyncio.get_running_loop()

    def protocol() -> asyncio.StreamReaderProtocol:
        return asyncio.StreamReaderProtocol(HandoverReader(limit=limit, loop=loop), accept, loop=loop)

    return await loop.create_server(protocol, host, port)
