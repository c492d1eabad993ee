"""Typed frontend/backend protocol messages, version 3.0.

One frozen dataclass per message; ``encode()`` returns the complete message (type byte,
length word, payload) and ``decode(payload)`` takes the payload only, because framing is
the parsers' job (framing.py) and the type byte has already chosen the class by then.
Encoding and decoding sit side by side so a change to one cannot silently miss the other,
and both are checked byte-exactly against captures of a real PostgreSQL 15.

Decoders accept exactly what PostgreSQL accepts and complain in PostgreSQL's words through
:class:`ProtocolViolation`; where PostgreSQL ignores trailing bytes (Terminate, CopyDone)
so do we, everywhere else a payload must be consumed exactly (pq_getmsgend()).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, Self

from walsender_proxy.protocol.buffer import (
    SQLSTATE_FEATURE_NOT_SUPPORTED,
    ProtocolViolation,
    Reader,
    Writer,
    decode_text,
    encode_cstring,
)

__all__ = [
    "BACKEND_MESSAGES",
    "CANCEL_REQUEST_CODE",
    "FRONTEND_MESSAGES",
    "GSSENC_REQUEST_CODE",
    "MAX_STARTUP_PACKET_LENGTH",
    "PROTOCOL_3_0",
    "SSL_REQUEST_CODE",
    "AuthResponse",
    "Authentication",
    "AuthenticationCleartextPassword",
    "AuthenticationGSS",
    "AuthenticationGSSContinue",
    "AuthenticationMD5Password",
    "AuthenticationOk",
    "AuthenticationSASL",
    "AuthenticationSASLContinue",
    "AuthenticationSASLFinal",
    "AuthenticationSSPI",
    "BackendKeyData",
    "BackendMessage",
    "Bind",
    "BindComplete",
    "CancelRequest",
    "Close",
    "CloseComplete",
    "CommandComplete",
    "CopyBothResponse",
    "CopyData",
    "CopyDone",
    "CopyFail",
    "CopyInResponse",
    "CopyOutResponse",
    "DataRow",
    "Describe",
    "EmptyQueryResponse",
    "ErrorResponse",
    "Execute",
    "FieldDescription",
    "Flush",
    "FrontendMessage",
    "FunctionCall",
    "FunctionCallResponse",
    "GSSENCRequest",
    "GSSENCResponse",
    "Message",
    "NegotiateProtocolVersion",
    "NoData",
    "NoticeResponse",
    "NotificationResponse",
    "ParameterDescription",
    "ParameterStatus",
    "Parse",
    "ParseComplete",
    "PasswordMessage",
    "PortalSuspended",
    "Query",
    "ReadyForQuery",
    "RowDescription",
    "SASLInitialResponse",
    "SASLResponse",
    "SSLRequest",
    "SSLResponse",
    "StartupMessage",
    "StartupPacket",
    "Sync",
    "Terminate",
    "decode_startup_packet",
    "encode_copy_data",
    "encode_copy_data_many",
    "encode_data_row",
    "encode_data_rows",
]

PROTOCOL_3_0 = 3 << 16
CANCEL_REQUEST_CODE = (1234 << 16) | 5678
SSL_REQUEST_CODE = (1234 << 16) | 5679
GSSENC_REQUEST_CODE = (1234 << 16) | 5680
# postmaster.c: longer start-up packets are refused before being read.
MAX_STARTUP_PACKET_LENGTH = 10000

_HDR = struct.Struct("!ci")
_I16 = struct.Struct("!h")
_U16 = struct.Struct("!H")
_I32 = struct.Struct("!i")
_U32 = struct.Struct("!I")
_pack_hdr = _HDR.pack
_pack_i32 = _I32.pack
_pack_u16 = _U16.pack
_unpack_u16_from = _U16.unpack_from
_unpack_i32_from = _I32.unpack_from
_NULL_VALUE = b"\xff\xff\xff\xff"


def _frame(code: bytes, payload: bytes) -> bytes:
    return _pack_hdr(code, len(payload) + 4) + payload


def _empty(code: bytes) -> bytes:
    return _pack_hdr(code, 4)


def _expect_empty(payload: bytes) -> None:
    if payload:
        raise ProtocolViolation("invalid message format")


def _int16s(r: Reader, n: int) -> tuple[int, ...]:
    return tuple(r.int16() for _ in range(n))


def _pack_int16s(values: Sequence[int]) -> bytes:
    return struct.pack(f"!H{len(values)}h", len(values), *values)


def _read_values(r: Reader, n: int) -> tuple[bytes | None, ...]:
    out: list[bytes | None] = []
    for _ in range(n):
        length = r.int32()
        out.append(None if length == -1 else r.read_bytes(length))
    return tuple(out)


def _value_parts(values: Iterable[bytes | None], parts: list[bytes]) -> None:
    append = parts.append
    for v in values:
        if v is None:
            append(_NULL_VALUE)
        else:
            append(_pack_i32(len(v)))
            append(v)


class Message:
    """Common base; ``type_code`` is the message's type byte (None for startup packets)."""

    __slots__ = ()
    type_code: ClassVar[bytes | None] = None

    def encode(self) -> bytes:
        raise NotImplementedError

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        raise NotImplementedError


class FrontendMessage(Message):
    __slots__ = ()


class BackendMessage(Message):
    __slots__ = ()


class _EmptyMessage(Message):
    """Messages that are nothing but their type byte; the frame is a constant, made once
    per class (BindComplete, NoData and ParseComplete go out on every round trip)."""

    __slots__ = ()
    _constant_frame: ClassVar[bytes] = b""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.type_code is not None:
            cls._constant_frame = _empty(cls.type_code)

    def encode(self) -> bytes:
        return self._constant_frame

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        _expect_empty(payload)
        return cls()


# --------------------------------------------------------------------------------------
# Start-up phase (untyped packets: length word, then a 32-bit code)
# --------------------------------------------------------------------------------------


class StartupPacket(FrontendMessage):
    """A packet of the untyped start-up phase; ``decode`` takes the bytes after the length."""

    __slots__ = ()


def _startup_error(message: str, sqlstate: str = "08P01") -> ProtocolViolation:
    # Nothing is running yet that could survive an error, so start-up errors are fatal.
    return ProtocolViolation(message, sqlstate=sqlstate, severity="FATAL")


@dataclass(frozen=True, slots=True)
class StartupMessage(StartupPacket):
    """Protocol 3.x start-up; parameters keep wire order because dicts keep insertion order.

    A repeated key keeps its last value (as in PostgreSQL, where later settings win), the
    only case where re-encoding is not byte-identical.
    """

    parameters: dict[str, str]
    protocol_version: int = PROTOCOL_3_0

    @property
    def major(self) -> int:
        return self.protocol_version >> 16

    @property
    def minor(self) -> int:
        return self.protocol_version & 0xFFFF

    @property
    def protocol_options(self) -> dict[str, str]:
        """``_pq_.*`` keys: protocol extensions the server must list in NegotiateProtocolVersion."""
        return {k: v for k, v in self.parameters.items() if k.startswith("_pq_.")}

    def encode(self) -> bytes:
        w = Writer().uint32(self.protocol_version)
        for key, value in self.parameters.items():
            w.cstring(key).cstring(value)
        w.uint8(0)
        return w.finish(None)

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        if len(payload) < 4:
            raise _startup_error("invalid length of startup packet")
        (version,) = _U32.unpack_from(payload, 0)
        major, minor = version >> 16, version & 0xFFFF
        if major != 3:
            raise _startup_error(
                f"unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0",
                SQLSTATE_FEATURE_NOT_SUPPORTED,
            )
        # The walk below is ProcessStartupPacket()'s: a name without a value, or anything
        # but a single NUL after the last pair, is a layout error.
        size = len(payload)
        offset = 4
        params: dict[str, str] = {}
        try:
            while offset < size:
                nul = payload.find(b"\x00", offset)
                if nul < 0:
                    nul = size
                if nul == offset:
                    break
                value_offset = nul + 1
                if value_offset >= size:
                    break
                value_end = payload.find(b"\x00", value_offset)
                if value_end < 0:
                    value_end = size
                params[decode_text(payload[offset:nul])] = decode_text(
                    payload[value_offset:value_end]
                )
                offset = value_end + 1
        except ProtocolViolation as exc:
            exc.severity = "FATAL"
            raise
        if offset != size - 1:
            raise _startup_error("invalid startup packet layout: expected terminator as last byte")
        return cls(params, version)


def _request_code(payload: bytes, expected: int) -> None:
    if len(payload) < 4 or _U32.unpack_from(payload, 0)[0] != expected:
        raise _startup_error("invalid length of startup packet")


@dataclass(frozen=True, slots=True)
class SSLRequest(StartupPacket):
    def encode(self) -> bytes:
        return struct.pack("!iI", 8, SSL_REQUEST_CODE)

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        # PostgreSQL does not look past the code, so neither do we.
        _request_code(payload, SSL_REQUEST_CODE)
        return cls()


@dataclass(frozen=True, slots=True)
class GSSENCRequest(StartupPacket):
    def encode(self) -> bytes:
        return struct.pack("!iI", 8, GSSENC_REQUEST_CODE)

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        _request_code(payload, GSSENC_REQUEST_CODE)
        return cls()


@dataclass(frozen=True, slots=True)
class CancelRequest(StartupPacket):
    process_id: int
    secret_key: int

    def encode(self) -> bytes:
        return struct.pack("!iIII", 16, CANCEL_REQUEST_CODE, self.process_id, self.secret_key)

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        # Unlike the encryption requests, the length is checked exactly (postmaster.c).
        if len(payload) != 12:
            raise _startup_error("invalid length of startup packet")
        code, pid, key = struct.unpack("!III", payload)
        if code != CANCEL_REQUEST_CODE:
            raise _startup_error("invalid length of startup packet")
        return cls(pid, key)


def decode_startup_packet(payload: bytes) -> StartupPacket:
    """Pick the start-up packet kind by its code (payload = bytes after the length word)."""
    if len(payload) < 4:
        raise _startup_error("invalid length of startup packet")
    (code,) = _U32.unpack_from(payload, 0)
    if code == SSL_REQUEST_CODE:
        return SSLRequest.decode(payload)
    if code == GSSENC_REQUEST_CODE:
        return GSSENCRequest.decode(payload)
    if code == CANCEL_REQUEST_CODE:
        return CancelRequest.decode(payload)
    return StartupMessage.decode(payload)


@dataclass(frozen=True, slots=True)
class SSLResponse(BackendMessage):
    """The single untyped byte answering SSLRequest: ``S`` to start TLS, ``N`` to decline."""

    accepted: bool

    def encode(self) -> bytes:
        return b"S" if self.accepted else b"N"

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        if payload == b"S":
            return cls(True)
        if payload == b"N":
            return cls(False)
        raise ProtocolViolation(
            f"received invalid response to SSL negotiation: {payload[:1]!r}", severity="FATAL"
        )


@dataclass(frozen=True, slots=True)
class GSSENCResponse(BackendMessage):
    """The single untyped byte answering GSSENCRequest: ``G`` to start GSSAPI, ``N`` not."""

    accepted: bool

    def encode(self) -> bytes:
        return b"G" if self.accepted else b"N"

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        if payload == b"G":
            return cls(True)
        if payload == b"N":
            return cls(False)
        raise ProtocolViolation(
            f"received invalid response to GSSAPI negotiation: {payload[:1]!r}",
            severity="FATAL",
        )


# --------------------------------------------------------------------------------------
# Authentication responses ('p'): one type byte, meaning fixed by the server's auth state
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuthResponse(FrontendMessage):
    """Any 'p' message, undecoded.

    The wire does not say whether a 'p' carries a password, a SASLInitialResponse or a
    SASLResponse; only the server's authentication state does. The parser therefore
    yields this, and the authenticator picks ``as_password()`` / ``as_sasl_initial()``
    / ``as_sasl_response()``.
    """

    type_code: ClassVar[bytes] = b"p"
    data: bytes

    def encode(self) -> bytes:
        return _frame(b"p", self.data)

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        return cls(bytes(payload))

    def as_password(self) -> PasswordMessage:
        return PasswordMessage.decode(self.data)

    def as_sasl_initial(self) -> SASLInitialResponse:
        return SASLInitialResponse.decode(self.data)

    def as_sasl_response(self) -> SASLResponse:
        return SASLResponse.decode(self.data)


@dataclass(frozen=True, slots=True)
class PasswordMessage(FrontendMessage):
    """Cleartext or MD5 password; bytes because PostgreSQL compares them without decoding."""

    type_code: ClassVar[bytes] = b"p"
    password: bytes

    def encode(self) -> bytes:
        if b"\x00" in self.password:
            raise ValueError("password contains a NUL byte")
        return _frame(b"p", self.password + b"\x00")

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        # auth.c: exactly one string filling the whole message.
        nul = payload.find(b"\x00")
        if nul != len(payload) - 1:
            raise ProtocolViolation("invalid password packet size")
        return cls(bytes(payload[:nul]))


@dataclass(frozen=True, slots=True)
class SASLInitialResponse(FrontendMessage):
    type_code: ClassVar[bytes] = b"p"
    mechanism: str
    data: bytes | None  # None = length -1: no initial response

    def encode(self) -> bytes:
        w = Writer().cstring(self.mechanism)
        if self.data is None:
            w.int32(-1)
        else:
            w.int32(len(self.data)).raw(self.data)
        return w.finish(b"p")

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        r = Reader(payload)
        mechanism = r.cstring()
        length = r.int32()
        data = None if length == -1 else r.read_bytes(length)
        r.end()
        return cls(mechanism, data)


@dataclass(frozen=True, slots=True)
class SASLResponse(FrontendMessage):
    type_code: ClassVar[bytes] = b"p"
    data: bytes

    def encode(self) -> bytes:
        return _frame(b"p", self.data)

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        return cls(bytes(payload))


# --------------------------------------------------------------------------------------
# Frontend messages
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Query(FrontendMessage):
    type_code: ClassVar[bytes] = b"Q"
    query: str

    def encode(self) -> bytes:
        return _frame(b"Q", encode_cstring(self.query))

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        r = Reader(payload)
        query = r.cstring()
        r.end()
        return cls(query)


@dataclass(frozen=True, slots=True)
class Parse(FrontendMessage):
    type_code: ClassVar[bytes] = b"P"
    name: str
    query: str
    param_types: tuple[int, ...] = ()

    def encode(self) -> bytes:
        n = len(self.param_types)
        payload = b"".join(
            (
                encode_cstring(self.name),
                encode_cstring(self.query),
                struct.pack(f"!H{n}I", n, *self.param_types),
            )
        )
        return _frame(b"P", payload)

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        r = Reader(payload)
        name = r.cstring()
        query = r.cstring()
        n = r.uint16()
        types = tuple(r.uint32() for _ in range(n))
        r.end()
        return cls(name, query, types)


@dataclass(frozen=True, slots=True)
class Bind(FrontendMessage):
    type_code: ClassVar[bytes] = b"B"
    portal: str
    statement: str
    param_formats: tuple[int, ...] = ()
    params: tuple[bytes | None, ...] = ()
    result_formats: tuple[int, ...] = ()

    def param_format(self, index: int) -> int:
        """Format of parameter ``index``: none given = text, one given = applies to all."""
        formats = self.param_formats
        if not formats:
            return 0
        if len(formats) == 1:
            return formats[0]
        return formats[index]

    def encode(self) -> bytes:
        parts = [
            encode_cstring(self.portal),
            encode_cstring(self.statement),
            _pack_int16s(self.param_formats),
            _pack_u16(len(self.params)),
        ]
        _value_parts(self.params, parts)
        parts.append(_pack_int16s(self.result_formats))
        return _frame(b"B", b"".join(parts))

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        # Bind is on every round trip of a prepared statement: try the straight-line
        # unpacking first. It gives up (None) on anything it would have to complain about,
        # and the field-by-field reader below, the reference, then words the complaint.
        try:
            message = _decode_bind_fast(cls, payload)
        except (struct.error, UnicodeDecodeError):
            message = None
        if message is not None:
            return message
        return cls.decode_checked(payload)

    @classmethod
    def decode_checked(cls, payload: bytes) -> Self:
        """The reference decoder: field by field, each complaint as PostgreSQL words it."""
        r = Reader(payload)
        portal = r.cstring()
        statement = r.cstring()
        formats = _int16s(r, r.uint16())
        nparams = r.uint16()
        if len(formats) > 1 and len(formats) != nparams:
            raise ProtocolViolation(
                f"bind message has {len(formats)} parameter formats but {nparams} parameters"
            )
        params = _read_values(r, nparams)
        result_formats = _int16s(r, r.uint16())
        r.end()
        return cls(portal, statement, formats, params, result_formats)


_INT16_ARRAYS = tuple(struct.Struct(f"!{n}h") for n in range(17))


def _unpack_int16s(data: bytes, pos: int, n: int) -> tuple[int, ...]:
    """``n`` int16 at ``pos``; struct.error if the data is too short."""
    st = _INT16_ARRAYS[n] if n < len(_INT16_ARRAYS) else struct.Struct(f"!{n}h")
    return st.unpack_from(data, pos)


def _decode_bind_fast(cls: type[Bind], payload: bytes) -> Bind | None:
    """Bind without a Reader: None (or struct.error / UnicodeDecodeError) wherever the
    message is not well formed, so that the caller can let the reference decoder say why.
    Accepts exactly what :meth:`Bind.decode_checked` accepts, with the same result."""
    size = len(payload)
    nul = payload.find(b"\x00")
    if nul < 0:
        return None
    nul2 = payload.find(b"\x00", nul + 1)
    if nul2 < 0:
        return None
    portal = payload[:nul].decode("utf-8") if nul else ""
    statement = payload[nul + 1 : nul2].decode("utf-8")
    pos = nul2 + 1
    (nformats,) = _unpack_u16_from(payload, pos)
    formats = _unpack_int16s(payload, pos + 2, nformats) if nformats else ()
    pos += 2 + 2 * nformats
    (nparams,) = _unpack_u16_from(payload, pos)
    pos += 2
    if nformats > 1 and nformats != nparams:
        return None
    values: list[bytes | None] = []
    append = values.append
    for _ in range(nparams):
        (length,) = _unpack_i32_from(payload, pos)
        pos += 4
        if length == -1:
            append(None)
            continue
        end = pos + length
        if length < 0 or end > size:
            return None
        append(payload[pos:end])
        pos = end
    (nresults,) = _unpack_u16_from(payload, pos)
    results = _unpack_int16s(payload, pos + 2, nresults) if nresults else ()
    if pos + 2 + 2 * nresults != size:
        return None
    return cls(portal, statement, formats, tuple(values), results)


def _kind_and_name(payload: bytes, what: str) -> tuple[str, str]:
    r = Reader(payload)
    kind = r.uint8()
    name = r.cstring()
    r.end()
    if kind not in (0x53, 0x50):  # 'S' statement, 'P' portal
        raise ProtocolViolation(f"invalid {what} message subtype {kind}")
    return chr(kind), name


@dataclass(frozen=True, slots=True)
class Describe(FrontendMessage):
    type_code: ClassVar[bytes] = b"D"
    kind: str  # 'S' prepared statement, 'P' portal
    name: str = ""

    def encode(self) -> bytes:
        return _frame(b"D", self.kind.encode("latin-1") + encode_cstring(self.name))

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        # The unnamed portal is what drivers describe on every round trip;
        # the messages are immutable, so the same instance serves every time.
        if payload == b"P\x00" and cls is Describe:
            return _DESCRIBE_UNNAMED_PORTAL  # type: ignore[return-value]
        return cls(*_kind_and_name(payload, "DESCRIBE"))


@dataclass(frozen=True, slots=True)
class Close(FrontendMessage):
    type_code: ClassVar[bytes] = b"C"
    kind: str  # 'S' prepared statement, 'P' portal
    name: str = ""

    def encode(self) -> bytes:
        return _frame(b"C", self.kind.encode("latin-1") + encode_cstring(self.name))

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        return cls(*_kind_and_name(payload, "CLOSE"))


@dataclass(frozen=True, slots=True)
class Execute(FrontendMessage):
    type_code: ClassVar[bytes] = b"E"
    portal: str = ""
    max_rows: int = 0  # <= 0: all rows

    def encode(self) -> bytes:
        return _frame(b"E", encode_cstring(self.portal) + _pack_i32(self.max_rows))

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        if payload == _EXECUTE_UNNAMED_ALL and cls is Execute:  # most drivers, every round trip
            return _EXECUTE_UNNAMED  # type: ignore[return-value]
        return cls.decode_checked(payload)

    @classmethod
    def decode_checked(cls, payload: bytes) -> Self:
        r = Reader(payload)
        portal = r.cstring()
        max_rows = r.int32()
        r.end()
        return cls(portal, max_rows)


_DESCRIBE_UNNAMED_PORTAL = Describe("P", "")
_EXECUTE_UNNAMED_ALL = b"\x00\x00\x00\x00\x00"
_EXECUTE_UNNAMED = Execute("", 0)


@dataclass(frozen=True, slots=True)
class Sync(_EmptyMessage, FrontendMessage):
    type_code: ClassVar[bytes] = b"S"


@dataclass(frozen=True, slots=True)
class Flush(_EmptyMessage, FrontendMessage):
    type_code: ClassVar[bytes] = b"H"


@dataclass(frozen=True, slots=True)
class Terminate(_EmptyMessage, FrontendMessage):
    type_code: ClassVar[bytes] = b"X"

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        # PostgreSQL exits on 'X' without looking at the body.
        return cls()


@dataclass(frozen=True, slots=True)
class CopyData(FrontendMessage, BackendMessage):
    """Both directions: COPY rows, and the carrier of the replication sub-protocol."""

    type_code: ClassVar[bytes] = b"d"
    data: bytes

    def encode(self) -> bytes:
        data = self.data
        return _pack_hdr(b"d", len(data) + 4) + data

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        return cls(payload)


def encode_copy_data(data: bytes) -> bytes:
    """CopyData frame without building a message object (COPY OUT / XLogData hot path)."""
    return _pack_hdr(b"d", len(data) + 4) + data


def encode_copy_data_many(chunks: Iterable[bytes]) -> bytes:
    """Many CopyData frames in one buffer, so a COPY batch costs one transport write."""
    parts: list[bytes] = []
    append = parts.append
    for chunk in chunks:
        append(_pack_hdr(b"d", len(chunk) + 4))
        append(chunk)
    return b"".join(parts)


@dataclass(frozen=True, slots=True)
class CopyDone(_EmptyMessage, FrontendMessage, BackendMessage):
    type_code: ClassVar[bytes] = b"c"

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        # Neither COPY FROM nor the walsender checks the body of 'c'.
        return cls()


@dataclass(frozen=True, slots=True)
class CopyFail(FrontendMessage):
    type_code: ClassVar[bytes] = b"f"
    message: str

    def encode(self) -> bytes:
        return _frame(b"f", encode_cstring(self.message))

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        r = Reader(payload)
        message = r.cstring()
        r.end()
        return cls(message)


@dataclass(frozen=True, slots=True)
class FunctionCall(FrontendMessage):
    """The fast-path call; decoded only so the server can name what it refuses."""

    type_code: ClassVar[bytes] = b"F"
    function_oid: int
    arg_formats: tuple[int, ...] = ()
    args: tuple[bytes | None, ...] = ()
    result_format: int = 0

    def encode(self) -> bytes:
        parts = [
            _U32.pack(self.function_oid),
            _pack_int16s(self.arg_formats),
            _pack_u16(len(self.args)),
        ]
        _value_parts(self.args, parts)
        parts.append(_I16.pack(self.result_format))
        return _frame(b"F", b"".join(parts))

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        r = Reader(payload)
        oid = r.uint32()
        formats = _int16s(r, r.uint16())
        args = _read_values(r, r.uint16())
        result_format = r.int16()
        r.end()
        return cls(oid, formats, args, result_format)


# --------------------------------------------------------------------------------------
# Backend messages
# --------------------------------------------------------------------------------------


class Authentication(BackendMessage):
    """All 'R' messages; ``Authentication.decode`` dispatches on the 32-bit subcode."""

    __slots__ = ()
    type_code: ClassVar[bytes] = b"R"
    code: ClassVar[int] = -1

    @classmethod
    def decode(cls, payload: bytes) -> Authentication:  # type: ignore[override]
        if len(payload) < 4:
            raise ProtocolViolation("insufficient data left in message")
        (code,) = _I32.unpack_from(payload, 0)
        sub = _AUTH_BY_CODE.get(code)
        if sub is None:
            raise ProtocolViolation(f"authentication method {code} not supported")
        if cls is not Authentication and sub is not cls:
            raise ProtocolViolation(f"expected authentication request {cls.code}, got {code}")
        return sub._decode_body(payload[4:])

    @classmethod
    def _decode_body(cls, body: bytes) -> Authentication:
        _expect_empty(body)
        return cls()

    def _body(self) -> bytes:
        return b""

    def encode(self) -> bytes:
        body = self._body()
        return _pack_hdr(b"R", len(body) + 8) + _pack_i32(self.code) + body


@dataclass(frozen=True, slots=True)
class AuthenticationOk(Authentication):
    code: ClassVar[int] = 0


@dataclass(frozen=True, slots=True)
class AuthenticationCleartextPassword(Authentication):
    code: ClassVar[int] = 3


@dataclass(frozen=True, slots=True)
class AuthenticationMD5Password(Authentication):
    code: ClassVar[int] = 5
    salt: bytes

    def _body(self) -> bytes:
        if len(self.salt) != 4:
            raise ValueError("MD5 salt must be 4 bytes")
        return self.salt

    @classmethod
    def _decode_body(cls, body: bytes) -> Authentication:
        if len(body) != 4:
            raise ProtocolViolation("invalid message format")
        return cls(bytes(body))


@dataclass(frozen=True, slots=True)
class AuthenticationGSS(Authentication):
    code: ClassVar[int] = 7


@dataclass(frozen=True, slots=True)
class AuthenticationGSSContinue(Authentication):
    code: ClassVar[int] = 8
    data: bytes

    def _body(self) -> bytes:
        return self.data

    @classmethod
    def _decode_body(cls, body: bytes) -> Authentication:
        return cls(bytes(body))


@dataclass(frozen=True, slots=True)
class AuthenticationSSPI(Authentication):
    code: ClassVar[int] = 9


@dataclass(frozen=True, slots=True)
class AuthenticationSASL(Authentication):
    code: ClassVar[int] = 10
    mechanisms: tuple[str, ...]

    def _body(self) -> bytes:
        return b"".join(encode_cstring(m) for m in self.mechanisms) + b"\x00"

    @classmethod
    def _decode_body(cls, body: bytes) -> Authentication:
        r = Reader(body)
        mechanisms = []
        while True:
            name = r.cstring()
            if not name:
                break
            mechanisms.append(name)
        r.end()
        return cls(tuple(mechanisms))


@dataclass(frozen=True, slots=True)
class AuthenticationSASLContinue(Authentication):
    code: ClassVar[int] = 11
    data: bytes

    def _body(self) -> bytes:
        return self.data

    @classmethod
    def _decode_body(cls, body: bytes) -> Authentication:
        return cls(bytes(body))


@dataclass(frozen=True, slots=True)
class AuthenticationSASLFinal(Authentication):
    code: ClassVar[int] = 12
    data: bytes

    def _body(self) -> bytes:
        return self.data

    @classmethod
    def _decode_body(cls, body: bytes) -> Authentication:
        return cls(bytes(body))


_AUTH_BY_CODE: dict[int, type[Authentication]] = {
    c.code: c
    for c in (
        AuthenticationOk,
        AuthenticationCleartextPassword,
        AuthenticationMD5Password,
        AuthenticationGSS,
        AuthenticationGSSContinue,
        AuthenticationSSPI,
        AuthenticationSASL,
        AuthenticationSASLContinue,
        AuthenticationSASLFinal,
    )
}


@dataclass(frozen=True, slots=True)
class ParameterStatus(BackendMessage):
    type_code: ClassVar[bytes] = b"S"
    name: str
    value: str

    def encode(self) -> bytes:
        return _frame(b"S", encode_cstring(self.name) + encode_cstring(self.value))

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        r = Reader(payload)
        name = r.cstring()
        value = r.cstring()
        r.end()
        return cls(name, value)


@dataclass(frozen=True, slots=True)
class BackendKeyData(BackendMessage):
    type_code: ClassVar[bytes] = b"K"
    process_id: int
    secret_key: int

    def encode(self) -> bytes:
        return struct.pack("!ciII", b"K", 12, self.process_id, self.secret_key)

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        if len(payload) != 8:
            raise ProtocolViolation("invalid message format")
        return cls(*struct.unpack("!II", payload))


@dataclass(frozen=True, slots=True)
class ReadyForQuery(BackendMessage):
    """``status`` is 'I' idle, 'T' in a transaction block, 'E' in a failed one."""

    type_code: ClassVar[bytes] = b"Z"
    status: str = "I"

    def encode(self) -> bytes:
        frame = _READY_FRAMES.get(self.status)
        if frame is None:
            status = self.status.encode("latin-1")
            if len(status) != 1:
                raise ValueError(f"transaction status must be one character: {self.status!r}")
            frame = _pack_hdr(b"Z", 5) + status
        return frame

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        if len(payload) != 1:
            raise ProtocolViolation("invalid message format")
        return cls(chr(payload[0]))


_READY_FRAMES = {s: _pack_hdr(b"Z", 5) + s.encode() for s in "ITE"}


@dataclass(frozen=True, slots=True)
class FieldDescription:
    """One RowDescription column; defaults describe a computed text column (no table)."""

    name: str
    table_oid: int = 0
    column_number: int = 0
    type_oid: int = 25
    type_size: int = -1
    type_modifier: int = -1
    format: int = 0


_FIELD = struct.Struct("!IhIhih")


@dataclass(frozen=True, slots=True)
class RowDescription(BackendMessage):
    type_code: ClassVar[bytes] = b"T"
    fields: tuple[FieldDescription, ...]

    def encode(self) -> bytes:
        parts = [_pack_u16(len(self.fields))]
        pack = _FIELD.pack
        for f in self.fields:
            parts.append(encode_cstring(f.name))
            parts.append(
                pack(
                    f.table_oid, f.column_number, f.type_oid, f.type_size, f.type_modifier, f.format
                )
            )
        return _frame(b"T", b"".join(parts))

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        r = Reader(payload)
        fields = []
        for _ in range(r.uint16()):
            name = r.cstring()
            raw = r.read_bytes(_FIELD.size)
            fields.append(FieldDescription(name, *_FIELD.unpack(raw)))
        r.end()
        return cls(tuple(fields))


@dataclass(frozen=True, slots=True)
class DataRow(BackendMessage):
    """One result row; values are already in their wire format (text or binary), NULL = None."""

    type_code: ClassVar[bytes] = b"D"
    values: tuple[bytes | None, ...]

    def encode(self) -> bytes:
        return encode_data_row(self.values)

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        end = len(payload)
        if end < 2:
            raise ProtocolViolation("insufficient data left in message")
        (n,) = _U16.unpack_from(payload, 0)
        pos = 2
        values: list[bytes | None] = []
        append = values.append
        unpack = _I32.unpack_from
        for _ in range(n):
            if pos + 4 > end:
                raise ProtocolViolation("insufficient data left in message")
            (length,) = unpack(payload, pos)
            pos += 4
            if length == -1:
                append(None)
                continue
            if length < 0 or pos + length > end:
                raise ProtocolViolation("insufficient data left in message")
            append(payload[pos : pos + length])
            pos += length
        if pos != end:
            raise ProtocolViolation("invalid message format")
        return cls(tuple(values))


_ROW_HDR = struct.Struct("!ciH")
_pack_row_hdr = _ROW_HDR.pack
# Length words of short values, prebuilt: indexing a list beats a struct.pack call, and
# most column values are short.
_LENGTH_WORDS = tuple(_pack_i32(n) for n in range(1024))
_N_LENGTH_WORDS = len(_LENGTH_WORDS)


def encode_data_row(values: Sequence[bytes | None]) -> bytes:
    """One DataRow frame from already-encoded column values, without a message object."""
    parts: list[bytes] = [b""]
    append = parts.append
    words = _LENGTH_WORDS
    size = 6
    for v in values:
        if v is None:
            append(_NULL_VALUE)
            size += 4
        else:
            n = len(v)
            append(words[n] if n < _N_LENGTH_WORDS else _pack_i32(n))
            append(v)
            size += 4 + n
    parts[0] = _pack_row_hdr(b"D", size, len(values))
    return b"".join(parts)


def encode_data_rows(rows: Iterable[Sequence[bytes | None]]) -> bytes:
    """Many DataRow frames in one buffer: a result set costs one join and one write."""
    out: list[bytes] = []
    out_append = out.append
    null = _NULL_VALUE
    words = _LENGTH_WORDS
    limit = _N_LENGTH_WORDS
    pack_len = _pack_i32
    pack_hdr = _pack_row_hdr
    join = b"".join
    for values in rows:
        parts: list[bytes] = []
        append = parts.append
        for v in values:
            if v is None:
                append(null)
            else:
                n = len(v)
                append(words[n] if n < limit else pack_len(n))
                append(v)
        body = join(parts)
        out_append(pack_hdr(b"D", len(body) + 6, len(values)))
        out_append(body)
    return join(out)


@dataclass(frozen=True, slots=True)
class CommandComplete(BackendMessage):
    type_code: ClassVar[bytes] = b"C"
    tag: str

    def encode(self) -> bytes:
        # The same few tags ("INSERT 0 1", "UPDATE 1") end most statements: their frames
        # are kept, in a table emptied whenever it fills up so that it stays small.
        frame = _COMMAND_COMPLETE_FRAMES.get(self.tag)
        if frame is None:
            frame = _frame(b"C", encode_cstring(self.tag))
            if len(_COMMAND_COMPLETE_FRAMES) >= 256:
                _COMMAND_COMPLETE_FRAMES.clear()
            _COMMAND_COMPLETE_FRAMES[self.tag] = frame
        return frame

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        r = Reader(payload)
        tag = r.cstring()
        r.end()
        return cls(tag)


_COMMAND_COMPLETE_FRAMES: dict[str, bytes] = {}


@dataclass(frozen=True, slots=True)
class EmptyQueryResponse(_EmptyMessage, BackendMessage):
    type_code: ClassVar[bytes] = b"I"


# Field codes of ErrorResponse/NoticeResponse, in the order elog.c sends them.
_FIELD_ORDER = "SVCMDHWstcdnPpqFLR"


class _ReportMessage(BackendMessage):
    """ErrorResponse and NoticeResponse: a dict of one-letter field codes to strings."""

    __slots__ = ()
    fields: dict[str, str]

    @classmethod
    def create(
        cls,
        severity: str,
        sqlstate: str,
        message: str,
        *,
        detail: str | None = None,
        hint: str | None = None,
        position: int | None = None,
        context: str | None = None,
        schema: str | None = None,
        table: str | None = None,
        column: str | None = None,
        datatype: str | None = None,
        constraint: str | None = None,
        internal_position: int | None = None,
        internal_query: str | None = None,
        file: str | None = None,
        line: int | None = None,
        routine: str | None = None,
    ) -> Self:
        """Fields in the order PostgreSQL sends them, with both S and V severities.

        Clients since 9.6 prefer V (never translated) over S; sending both is what a real
        server does and keeps older clients working.
        """
        candidates = {
            "S": severity,
            "V": severity,
            "C": sqlstate,
            "M": message,
            "D": detail,
            "H": hint,
            "W": context,
            "s": schema,
            "t": table,
            "c": column,
            "d": datatype,
            "n": constraint,
            "P": str(position) if position else None,
            "p": str(internal_position) if internal_position else None,
            "q": internal_query,
            "F": file,
            "L": str(line) if line else None,
            "R": routine,
        }
        return cls({k: v for k, v in candidates.items() if v is not None})  # type: ignore[call-arg]

    @property
    def severity(self) -> str | None:
        return self.fields.get("V") or self.fields.get("S")

    @property
    def sqlstate(self) -> str | None:
        return self.fields.get("C")

    @property
    def message(self) -> str | None:
        return self.fields.get("M")

    @property
    def detail(self) -> str | None:
        return self.fields.get("D")

    @property
    def hint(self) -> str | None:
        return self.fields.get("H")

    @property
    def position(self) -> int | None:
        value = self.fields.get("P")
        return int(value) if value and value.isdigit() else None

    def encode(self) -> bytes:
        parts = []
        for code, value in self.fields.items():
            if len(code) != 1 or code == "\x00":
                raise ValueError(f"invalid field code {code!r}")
            parts.append(code.encode("latin-1"))
            parts.append(encode_cstring(value))
        parts.append(b"\x00")
        return _frame(self.type_code, b"".join(parts))  # type: ignore[arg-type]

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        r = Reader(payload)
        fields: dict[str, str] = {}
        while True:
            code = r.uint8()
            if code == 0:
                break
            fields[chr(code)] = r.cstring()
        r.end()
        return cls(fields)  # type: ignore[call-arg]


@dataclass(frozen=True, slots=True)
class ErrorResponse(_ReportMessage):
    type_code: ClassVar[bytes] = b"E"
    fields: dict[str, str]

    @classmethod
    def from_violation(cls, v: ProtocolViolation) -> ErrorResponse:
        """What a client is told of a frame or message it sent malformed."""
        return cls.create(v.severity, v.sqlstate, v.message, detail=v.detail, hint=v.hint)


@dataclass(frozen=True, slots=True)
class NoticeResponse(_ReportMessage):
    type_code: ClassVar[bytes] = b"N"
    fields: dict[str, str]


@dataclass(frozen=True, slots=True)
class ParseComplete(_EmptyMessage, BackendMessage):
    type_code: ClassVar[bytes] = b"1"


@dataclass(frozen=True, slots=True)
class BindComplete(_EmptyMessage, BackendMessage):
    type_code: ClassVar[bytes] = b"2"


@dataclass(frozen=True, slots=True)
class CloseComplete(_EmptyMessage, BackendMessage):
    type_code: ClassVar[bytes] = b"3"


@dataclass(frozen=True, slots=True)
class NoData(_EmptyMessage, BackendMessage):
    type_code: ClassVar[bytes] = b"n"


@dataclass(frozen=True, slots=True)
class PortalSuspended(_EmptyMessage, BackendMessage):
    type_code: ClassVar[bytes] = b"s"


@dataclass(frozen=True, slots=True)
class ParameterDescription(BackendMessage):
    type_code: ClassVar[bytes] = b"t"
    type_oids: tuple[int, ...]

    def encode(self) -> bytes:
        n = len(self.type_oids)
        return _frame(b"t", struct.pack(f"!H{n}I", n, *self.type_oids))

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        r = Reader(payload)
        oids = tuple(r.uint32() for _ in range(r.uint16()))
        r.end()
        return cls(oids)


class _CopyResponse(BackendMessage):
    """CopyIn/CopyOut/CopyBothResponse share one layout: overall format, per-column formats."""

    __slots__ = ()
    format: int
    column_formats: tuple[int, ...]

    def encode(self) -> bytes:
        n = len(self.column_formats)
        payload = struct.pack(f"!bH{n}h", self.format, n, *self.column_formats)
        return _frame(self.type_code, payload)  # type: ignore[arg-type]

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        r = Reader(payload)
        fmt = r.int8()
        formats = _int16s(r, r.uint16())
        r.end()
        return cls(fmt, formats)  # type: ignore[call-arg]


@dataclass(frozen=True, slots=True)
class CopyInResponse(_CopyResponse):
    type_code: ClassVar[bytes] = b"G"
    format: int = 0
    column_formats: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class CopyOutResponse(_CopyResponse):
    type_code: ClassVar[bytes] = b"H"
    format: int = 0
    column_formats: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class CopyBothResponse(_CopyResponse):
    """Opens the replication stream; PostgreSQL sends format 0 and no columns."""

    type_code: ClassVar[bytes] = b"W"
    format: int = 0
    column_formats: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class NegotiateProtocolVersion(BackendMessage):
    type_code: ClassVar[bytes] = b"v"
    newest_minor: int
    unrecognized_options: tuple[str, ...] = ()

    def encode(self) -> bytes:
        parts = [struct.pack("!iI", self.newest_minor, len(self.unrecognized_options))]
        parts.extend(encode_cstring(o) for o in self.unrecognized_options)
        return _frame(b"v", b"".join(parts))

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        r = Reader(payload)
        minor = r.int32()
        count = r.uint32()
        if count > r.remaining:  # each option needs at least its NUL
            raise ProtocolViolation("insufficient data left in message")
        options = tuple(r.cstring() for _ in range(count))
        r.end()
        return cls(minor, options)


@dataclass(frozen=True, slots=True)
class NotificationResponse(BackendMessage):
    type_code: ClassVar[bytes] = b"A"
    process_id: int
    channel: str
    payload: str = ""

    def encode(self) -> bytes:
        return _frame(
            b"A",
            _U32.pack(self.process_id)
            + encode_cstring(self.channel)
            + encode_cstring(self.payload),
        )

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        r = Reader(payload)
        pid = r.uint32()
        channel = r.cstring()
        text = r.cstring()
        r.end()
        return cls(pid, channel, text)


@dataclass(frozen=True, slots=True)
class FunctionCallResponse(BackendMessage):
    type_code: ClassVar[bytes] = b"V"
    result: bytes | None

    def encode(self) -> bytes:
        if self.result is None:
            return _frame(b"V", _NULL_VALUE)
        return _frame(b"V", _pack_i32(len(self.result)) + self.result)

    @classmethod
    def decode(cls, payload: bytes) -> Self:
        r = Reader(payload)
        (value,) = _read_values(r, 1)
        r.end()
        return cls(value)


# --------------------------------------------------------------------------------------
# Registries: type byte -> class, per direction ('d' and 'c' are in both)
# --------------------------------------------------------------------------------------

FRONTEND_MESSAGES: Mapping[bytes, type[FrontendMessage]] = MappingProxyType(
    {
        c.type_code: c  # type: ignore[misc]
        for c in (
            Query,
            Parse,
            Bind,
            Describe,
            Execute,
            Sync,
            Flush,
            Close,
            Terminate,
            CopyData,
            CopyDone,
            CopyFail,
            FunctionCall,
            AuthResponse,
        )
    }
)

BACKEND_MESSAGES: Mapping[bytes, type[BackendMessage]] = MappingProxyType(
    {
        c.type_code: c  # type: ignore[misc]
        for c in (
            Authentication,
            ParameterStatus,
            BackendKeyData,
            ReadyForQuery,
            RowDescription,
            DataRow,
            CommandComplete,
            EmptyQueryResponse,
            ErrorResponse,
            NoticeResponse,
            ParseComplete,
            BindComplete,
            CloseComplete,
            NoData,
            ParameterDescription,
            PortalSuspended,
            CopyInResponse,
            CopyOutResponse,
            CopyBothResponse,
            CopyData,
            CopyDone,
            NegotiateProtocolVersion,
            NotificationResponse,
            FunctionCallResponse,
        )
    }
)
