"""The connection state machine: which frontend message is legal when, with no I/O.

Like h11, it is fed bytes and hands out events; it is handed backend messages and returns
bytes, tracking the phase they move the connection to. The session (which does the work)
and the transport (which moves bytes) stay free of protocol rules; tests drive the machine
with byte strings alone.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from walsender_proxy.protocol import messages as m
from walsender_proxy.protocol.buffer import ProtocolViolation
from walsender_proxy.protocol.framing import FrontendParser


class Phase(enum.Enum):
    STARTUP = "startup"  # untyped packets: SSLRequest, GSSENCRequest, StartupMessage, CancelRequest
    AUTH = "auth"  # waiting for a 'p' message
    READY = "ready"  # normal message flow
    COPY_IN = "copy_in"  # COPY FROM STDIN: CopyData / CopyDone / CopyFail
    COPY_BOTH = "copy_both"  # START_REPLICATION: CopyData / CopyDone both ways
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class MessageReceived:
    """A frontend message the session must act on now."""

    message: m.FrontendMessage


@dataclass(frozen=True, slots=True)
class ProtocolError:
    """The client broke the protocol: send ``error``; close if ``fatal``."""

    error: m.ErrorResponse
    fatal: bool


@dataclass(frozen=True, slots=True)
class ConnectionClosed:
    """The client went away (EOF or Terminate)."""


Event = MessageReceived | ProtocolError | ConnectionClosed

# An enum member lookup searches the enum machinery each time: next_event() compares with
# these instead.
_READY = Phase.READY
_CLOSED = Phase.CLOSED

# CopyData, CopyDone and CopyFail are legal anywhere and ignored outside COPY, as
# PostgreSQL's SocketBackend does: a client still sends its COPY data after the COPY
# failed (a pipelined COPY … FROM STDIN whose statement fails is followed by its data).
_NORMAL = frozenset(b"QPBDESHCXFdcf")
_EXTENDED = frozenset(b"PBDECH")  # PostgreSQL's doing_extended_query_message
_COPY_IN = frozenset(b"dcfSHX")
_COPY_BOTH = frozenset(b"dcX")
_REPLICATION_NORMAL = frozenset(b"QSHXdcf")  # the seed's redesigned walsender (§4.3.5)
_NOT_IN_WALSENDER = {
    **{c: "extended query protocol not supported in a replication connection" for c in b"PBDEC"},
    ord("F"): "fastpath function calls not supported in a replication connection",
}
# READY and not skipping to Sync: the types that are simply handed on, i.e. the allowed
# ones less Terminate (closes) and stray COPY messages (ignored). See _admit().
_PASS_NORMAL = _NORMAL - frozenset(b"Xdcf")
_PASS_REPLICATION = _REPLICATION_NORMAL - frozenset(b"Xdcf")

# Backend messages that move the connection to another phase (see send()).
_PHASE_AFTER: dict[type[m.BackendMessage], Phase] = {
    m.ReadyForQuery: Phase.READY,
    m.CopyInResponse: Phase.COPY_IN,
    m.CopyBothResponse: Phase.COPY_BOTH,
    m.AuthenticationOk: Phase.READY,
}


class ConnectionMachine:
    def __init__(self, *, max_message_length: int = 1 << 30) -> None:
        self.parser = FrontendParser(max_message_length=max_message_length)
        self.phase = Phase.STARTUP
        #: A replication connection accepts only simple query and copy messages.
        self.replication = False
        #: After an error in an extended-query message, skip everything up to Sync.
        self.skipping = False
        self._eof = False

    # -- input ---------------------------------------------------------------------------
    def receive_data(self, data: bytes) -> None:
        if data:
            self.parser.feed(data)
        else:
            self._eof = True

    def next_event(self) -> Event | None:
        """The next event, or None when more bytes are needed."""
        if self.phase is _CLOSED:
            return None
        while True:
            try:
                msg = self.parser.next_message()
            except ProtocolViolation as e:
                fatal = e.severity == "FATAL"
                if fatal:
                    self.phase = Phase.CLOSED
                elif self.phase is _READY and e.message_type in _EXTENDED:
                    # A malformed extended-query message (a Bind whose parameter formats
                    # do not match its parameters) is an error like any in that message:
                    # what follows up to Sync is skipped, as PostgreSQL does.
                    self.skipping = True
                return ProtocolError(m.ErrorResponse.from_violation(e), fatal)
            if msg is None:
                if self._eof:
                    try:
                        self.parser.eof()
                    except ProtocolViolation as e:
                        self.phase = Phase.CLOSED
                        return ProtocolError(m.ErrorResponse.from_violation(e), True)
                    self.phase = Phase.CLOSED
                    return ConnectionClosed()
                return None
            # The common case first: normal flow, a type that is passed on as it is.
            if self.phase is _READY and not self.skipping:
                code = msg.type_code
                passed = _PASS_REPLICATION if self.replication else _PASS_NORMAL
                if code is not None and code[0] in passed:
                    return MessageReceived(msg)
            ev = self._admit(msg)
            if ev is not None:
                return ev

    def _admit(self, msg: m.FrontendMessage) -> Event | None:
        code = msg.type_code[0] if msg.type_code else 0
        if isinstance(msg, m.Terminate):
            self.phase = Phase.CLOSED
            return ConnectionClosed()
        if self.phase is Phase.STARTUP:
            return MessageReceived(msg)
        if self.phase is Phase.AUTH:
            if isinstance(msg, m.AuthResponse):
                return MessageReceived(msg)
            return self._fatal(f"expected password response, got message type {code}")
        if self.phase is Phase.COPY_IN:
            if code not in _COPY_IN:
                return self._fatal(f"unexpected message type 0x{code:02X} during COPY from stdin")
            if code in b"SH":
                return None  # PostgreSQL ignores Sync/Flush during COPY FROM STDIN
            return MessageReceived(msg)
        if self.phase is Phase.COPY_BOTH:
            if code not in _COPY_BOTH:
                return self._fatal(f'unexpected message type "{chr(code)}"')
            return MessageReceived(msg)
        # READY
        allowed = _REPLICATION_NORMAL if self.replication else _NORMAL
        if code not in allowed:
            if self.replication and code in _NOT_IN_WALSENDER:
                # PostgreSQL's forbidden_in_wal_sender: an ERROR, and an extended-query
                # message starts the skip to Sync like any error in one.
                if self.skipping:
                    return None
                self.skipping = code in _EXTENDED
                text = _NOT_IN_WALSENDER[code]
                return ProtocolError(m.ErrorResponse.create("ERROR", "08P01", text), False)
            return self._fatal(f"invalid frontend message type {code}")
        if code in b"dcf":
            return None  # stray COPY messages (after a failed COPY): ignored
        if self.skipping:
            if isinstance(msg, m.Sync):
                self.skipping = False
                return MessageReceived(msg)
            return None
        return MessageReceived(msg)

    def _fatal(self, text: str, sqlstate: str = "08P01") -> ProtocolError:
        self.phase = Phase.CLOSED
        return ProtocolError(m.ErrorResponse.create("FATAL", sqlstate, text), True)

    # -- output --------------------------------------------------------------------------
    def send(self, msg: m.BackendMessage) -> bytes:
        """Encode a backend message and move to the phase it implies (looked up by exact
        type: the messages in _PHASE_AFTER and ErrorResponse have no subclasses)."""
        cls = type(msg)
        phase = _PHASE_AFTER.get(cls)
        if phase is not None:
            self.phase = phase
        elif cls is m.ErrorResponse and msg.fields.get("S") == "FATAL":  # type: ignore[attr-defined]
            self.phase = Phase.CLOSED
        return msg.encode()

    def start_auth(self) -> None:
        """The startup packet was accepted and an authentication request is going out."""
        self.phase = Phase.AUTH

    def copy_in_done(self) -> None:
        """COPY FROM STDIN ended (CopyDone or CopyFail handled): back to normal flow."""
        self.phase = Phase.READY

    def copy_both_done(self) -> None:
        self.phase = Phase.READY

    @classmethod
    def streaming(cls, *, max_message_length: int = 1 << 30) -> ConnectionMachine:
        """A replication connection already in COPY_BOTH (START_REPLICATION was answered):
        what a walsender process takes over."""
        machine = cls(max_message_length=max_message_length)
        machine.parser = FrontendParser(max_message_length=max_message_length, startup=False)
        machine.phase = Phase.COPY_BOTH
        machine.replication = True
        return machine

    def take_unread(self) -> bytes:
        """The bytes received and not yet made into messages, taken out (a hand-over of the
        connection to another owner)."""
        return self.parser.take_unread()

    def extended_error(self) -> None:
        """An extended-query message failed: discard messages until the next Sync."""
        self.skipping = True
