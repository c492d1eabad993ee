"""Incremental framing: feed bytes as they arrive, take typed messages out.

No I/O happens here (the h11 model): the transport calls ``feed()`` with whatever a read
returned and drains ``next_message()`` until it returns None.  Messages may be split
across reads at any byte, and one read may hold many messages.

Two kinds of failure, both :class:`ProtocolViolation`:

* ``severity == "FATAL"`` — framing is lost (bad length, unknown type byte, bad start-up
  packet).  The parser is dead from then on and re-raises the same exception; the server
  sends the error and closes, as PostgreSQL does.
* ``severity == "ERROR"`` — one message was well framed but its content was malformed.
  It has been consumed, the stream is still in sync, and the next call carries on.

Length limits follow PostgreSQL 15's ``SocketBackend()``: types that never carry much
(Sync, Execute, Close, CopyDone, ...) are capped at 10 000 bytes, authentication
responses at 65 535, the rest at ``max_message_length``.  A length is checked as soon
as its header arrives, so an oversized message is refused before it is buffered.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterator, Mapping

from walsender_proxy.protocol.buffer import ProtocolViolation
from walsender_proxy.protocol.messages import (
    BACKEND_MESSAGES,
    CANCEL_REQUEST_CODE,
    FRONTEND_MESSAGES,
    GSSENC_REQUEST_CODE,
    MAX_STARTUP_PACKET_LENGTH,
    SSL_REQUEST_CODE,
    BackendMessage,
    CancelRequest,
    FrontendMessage,
    GSSENCRequest,
    GSSENCResponse,
    Message,
    SSLRequest,
    SSLResponse,
    StartupMessage,
    Terminate,
)

__all__ = [
    "PQ_LARGE_MESSAGE_LIMIT",
    "PQ_SMALL_MESSAGE_LIMIT",
    "BackendParser",
    "FrontendParser",
    "ParserState",
]

# pqcomm.h: MaxAllocSize - 1, and the limit for messages that are never long.
PQ_LARGE_MESSAGE_LIMIT = 0x3FFFFFFF - 1
PQ_SMALL_MESSAGE_LIMIT = 10000
# auth.c: PG_MAX_AUTH_TOKEN_LENGTH, the cap on every 'p' message.
PG_MAX_AUTH_TOKEN_LENGTH = 65535
# libpq (pqParseInput3): above this only data-carrying types are believed.
_LIBPQ_SANE_LENGTH = 30000

_FRONTEND_SMALL_TYPES = b"XCDEHScf"
_BACKEND_LONG_TYPES = b"TDdVENA"

_I32 = struct.Struct("!i")
_U32 = struct.Struct("!I")
_unpack_i32 = _I32.unpack_from

# Anything a decoder raises besides ProtocolViolation would be a codec bug; converting it
# keeps one bad message from taking the connection's task down with a traceback.
_DECODE_BUGS = (struct.error, ValueError, IndexError, TypeError, OverflowError, KeyError)

_COMPACT_THRESHOLD = 1 << 16


class ParserState(enum.Enum):
    STARTUP = "startup"  # untyped packets: SSLRequest, GSSENCRequest, CancelRequest, StartupMessage
    MESSAGES = "messages"  # typed messages
    CLOSED = "closed"  # after Terminate or CancelRequest; further input is ignored
    FAILED = "failed"  # a fatal violation was raised; it is raised again on every call


# Looking up an enum member costs a class-attribute search through the enum machinery;
# the per-message paths compare with these instead.
_MESSAGES = ParserState.MESSAGES
_CLOSED = ParserState.CLOSED


class _Parser:
    __slots__ = ("_buf", "_classes", "_failure", "_limits", "_pos", "_state")

    def __init__(self) -> None:
        # _buf is the caller's bytes while nothing is left over (no copy on the common
        # path where a read holds whole messages), and a bytearray while a partial
        # message is being accumulated.
        self._buf: bytes | bytearray = b""
        self._pos = 0
        self._state = ParserState.MESSAGES
        self._failure: ProtocolViolation | None = None
        self._classes: list[type[Message] | None] = [None] * 256
        self._limits: list[int] = [0] * 256

    @property
    def state(self) -> ParserState:
        return self._state

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as messages."""
        return len(self._buf) - self._pos

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        # After close or a fatal error the bytes mean nothing; do not let them pile up.
        if self._state is _CLOSED or self._failure is not None or not data:
            return
        if type(data) is not bytes:
            data = bytes(data)
        buf = self._buf
        if self._pos >= len(buf):
            self._buf = data
            self._pos = 0
        elif type(buf) is bytes:
            grown = bytearray(memoryview(buf)[self._pos :])
            grown += data
            self._buf = grown
            self._pos = 0
        else:
            buf += data  # type: ignore[operator]

    def take_unread(self) -> bytes:
        """The bytes fed and not yet returned as messages, taken out of the parser."""
        rest = bytes(memoryview(self._buf)[self._pos :])
        self._buf = b""
        self._pos = 0
        return rest

    def _take(self, start: int, end: int) -> bytes:
        buf = self._buf
        payload = buf[start:end]
        if type(payload) is not bytes:
            payload = bytes(payload)
        if end >= len(buf):
            self._buf = b""
            self._pos = 0
        elif type(buf) is bytearray and end > _COMPACT_THRESHOLD and end * 2 > len(buf):
            del buf[:end]
            self._pos = 0
        else:
            self._pos = end
        return payload

    def _fail(self, exc: ProtocolViolation) -> ProtocolViolation:
        exc.severity = "FATAL"
        self._failure = exc
        self._state = ParserState.FAILED
        self._buf = b""
        self._pos = 0
        return exc

    def _decode(self, cls: type[Message], payload: bytes) -> Message:
        try:
            return cls.decode(payload)
        except ProtocolViolation as e:
            e.message_type = cls.type_code[0] if cls.type_code else None
            raise
        except _DECODE_BUGS as exc:
            raise ProtocolViolation("invalid message format") from exc

    def _unknown_type(self, code: int) -> ProtocolViolation:
        raise NotImplementedError

    def _bad_length(self, code: int, length: int) -> ProtocolViolation:
        raise NotImplementedError

    def _typed(self) -> Message | None:
        buf = self._buf
        pos = self._pos
        avail = len(buf) - pos
        if avail <= 0:
            return None
        code = buf[pos]
        cls = self._classes[code]
        if cls is None:
            raise self._fail(self._unknown_type(code))
        if avail < 5:
            return None
        (length,) = _unpack_i32(buf, pos + 1)
        if length < 4 or length > self._limits[code]:
            raise self._fail(self._bad_length(code, length))
        end = pos + 1 + length
        size = len(buf)
        if end > size:
            return None
        if type(buf) is bytes:
            # The usual case, whole messages from one read: _take() and _decode() inline
            # (this runs for every message of every round trip).
            payload = buf[pos + 5 : end]
            if end >= size:
                self._buf = b""
                self._pos = 0
            else:
                self._pos = end
            try:
                return cls.decode(payload)
            except ProtocolViolation as e:
                e.message_type = code
                raise
            except _DECODE_BUGS as exc:
                raise ProtocolViolation("invalid message format") from exc
        return self._decode(cls, self._take(pos + 5, end))

    def __iter__(self) -> Iterator[Message]:
        while True:
            message = self.next_message()
            if message is None:
                return
            yield message

    def next_message(self) -> Message | None:
        raise NotImplementedError


class FrontendParser(_Parser):
    """Server side: frontend bytes in, frontend messages out.

    Starts in the untyped start-up phase unless ``startup=False``.  After an SSLRequest or
    GSSENCRequest it stays there for the real StartupMessage; a second request of the same
    kind is read as a start-up packet of protocol 1234.5679 and refused, as in PostgreSQL.
    With ``check_unencrypted_data`` (the default) bytes that arrived together with an
    encryption request are a fatal violation on the next call: the client cannot have
    seen the server's answer yet, so they may have been injected (CVE-2021-23214).
    """

    __slots__ = ("_check_unencrypted", "_gss_done", "_pending", "_ssl_done", "max_message_length")

    def __init__(
        self,
        *,
        max_message_length: int = PQ_LARGE_MESSAGE_LIMIT,
        startup: bool = True,
        check_unencrypted_data: bool = True,
        registry: Mapping[bytes, type[FrontendMessage]] = FRONTEND_MESSAGES,
    ) -> None:
        super().__init__()
        self.max_message_length = max_message_length
        self._state = ParserState.STARTUP if startup else ParserState.MESSAGES
        self._ssl_done = False
        self._gss_done = False
        self._check_unencrypted = check_unencrypted_data
        self._pending: ProtocolViolation | None = None
        for key, cls in registry.items():
            code = key[0]
            self._classes[code] = cls
            if key in _FRONTEND_SMALL_TYPES:
                limit = PQ_SMALL_MESSAGE_LIMIT
            elif key == b"p":
                limit = PG_MAX_AUTH_TOKEN_LENGTH
            else:
                limit = PQ_LARGE_MESSAGE_LIMIT
            self._limits[code] = min(limit, max_message_length)

    def _unknown_type(self, code: int) -> ProtocolViolation:
        return ProtocolViolation(f"invalid frontend message type {code}")

    def _bad_length(self, code: int, length: int) -> ProtocolViolation:
        return ProtocolViolation("invalid message length")

    def next_message(self) -> FrontendMessage | None:  # type: ignore[override]
        """The next complete message, or None until more bytes are fed."""
        if self._failure is not None:
            raise self._failure
        state = self._state
        if state is _MESSAGES:
            message = self._typed()
            if type(message) is Terminate:
                self._close()
            return message  # type: ignore[return-value]
        if state is ParserState.STARTUP:
            if self._pending is not None:
                raise self._fail(self._pending)
            return self._startup()
        return None

    def eof(self) -> None:
        """Call when the peer closed; complains only about a message cut off in the middle."""
        if self._failure is not None or self._state is ParserState.CLOSED or not self.buffered:
            return
        text = (
            "incomplete startup packet"
            if self._state is ParserState.STARTUP
            else "incomplete message from client"
        )
        raise self._fail(ProtocolViolation(text))

    def _close(self) -> None:
        self._state = ParserState.CLOSED
        self._buf = b""
        self._pos = 0

    def _startup(self) -> FrontendMessage | None:
        buf = self._buf
        pos = self._pos
        if len(buf) - pos < 4:
            return None
        (length,) = _unpack_i32(buf, pos)
        # postmaster.c measures without the length word.
        if not 4 <= length - 4 <= MAX_STARTUP_PACKET_LENGTH:
            raise self._fail(ProtocolViolation("invalid length of startup packet"))
        end = pos + length
        if end > len(buf):
            return None
        payload = self._take(pos + 4, end)
        (code,) = _U32.unpack_from(payload, 0)
        try:
            if code == CANCEL_REQUEST_CODE:
                cancel = CancelRequest.decode(payload)
                self._close()
                return cancel
            if code == SSL_REQUEST_CODE and not self._ssl_done:
                self._ssl_done = True
                self._note_leftover("received unencrypted data after SSL request")
                return SSLRequest.decode(payload)
            if code == GSSENC_REQUEST_CODE and not self._gss_done:
                self._gss_done = True
                self._note_leftover("received unencrypted data after GSSAPI encryption request")
                return GSSENCRequest.decode(payload)
            message = StartupMessage.decode(payload)
        except ProtocolViolation as exc:
            raise self._fail(exc) from None
        except _DECODE_BUGS as exc:
            raise self._fail(ProtocolViolation("invalid startup packet layout")) from exc
        self._state = ParserState.MESSAGES
        return message

    def _note_leftover(self, text: str) -> None:
        if self._check_unencrypted and self.buffered:
            self._pending = ProtocolViolation(
                text,
                severity="FATAL",
                detail="This could be either a client-software bug or evidence of an "
                "attempted man-in-the-middle attack.",
            )


class BackendParser(_Parser):
    """Client side (tests, tools): backend bytes in, backend messages out.

    Call ``expect_ssl_response()`` / ``expect_gssenc_response()`` after sending the
    matching request: the answer is one untyped byte, not a message.  Length sanity
    follows libpq: only data-carrying types may exceed 30 000 bytes.
    """

    __slots__ = ("_expect", "max_message_length")

    def __init__(
        self,
        *,
        max_message_length: int = PQ_LARGE_MESSAGE_LIMIT,
        registry: Mapping[bytes, type[BackendMessage]] = BACKEND_MESSAGES,
    ) -> None:
        super().__init__()
        self.max_message_length = max_message_length
        self._expect: type[SSLResponse] | type[GSSENCResponse] | None = None
        for key, cls in registry.items():
            code = key[0]
            self._classes[code] = cls
            limit = max_message_length if key in _BACKEND_LONG_TYPES else _LIBPQ_SANE_LENGTH
            self._limits[code] = min(limit, max_message_length)

    def expect_ssl_response(self) -> None:
        self._expect = SSLResponse

    def expect_gssenc_response(self) -> None:
        self._expect = GSSENCResponse

    def _unknown_type(self, code: int) -> ProtocolViolation:
        shown = chr(code) if 0x20 <= code < 0x7F else f"\\x{code:02x}"
        return ProtocolViolation(
            f'unexpected response from server; first received character was "{shown}"'
        )

    def _bad_length(self, code: int, length: int) -> ProtocolViolation:
        shown = chr(code) if 0x20 <= code < 0x7F else f"\\x{code:02x}"
        return ProtocolViolation(
            f'lost synchronization with server: got message type "{shown}", length {length}'
        )

    def next_message(self) -> BackendMessage | None:  # type: ignore[override]
        if self._failure is not None:
            raise self._failure
        if self._state is not ParserState.MESSAGES:
            return None
        expect = self._expect
        if expect is not None:
            if self.buffered == 0:
                return None
            first = self._buf[self._pos : self._pos + 1]
            # A server that cannot even parse the request answers with an ErrorResponse.
            if first != b"E":
                self._expect = None
                payload = self._take(self._pos, self._pos + 1)
                try:
                    return expect.decode(payload)
                except ProtocolViolation as exc:
                    raise self._fail(exc) from None
            message = self._typed()
            if message is not None:
                self._expect = None
            return message  # type: ignore[return-value]
        return self._typed()  # type: ignore[return-value]

    def eof(self) -> None:
        if self._failure is not None or not self.buffered:
            return
        raise self._fail(ProtocolViolation("server closed the connection unexpectedly"))
