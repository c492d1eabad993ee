"""Bounds-checked reading and writing of protocol fields (PostgreSQL's pqformat.c).

Every way a peer can get a field wrong ends in :class:`ProtocolViolation`, never in
``struct.error``, ``IndexError`` or ``UnicodeDecodeError``: the server turns that one
exception into an ErrorResponse, and any other exception type escaping the codec would be
a crash path reachable by a hostile client.  The error texts are PostgreSQL's own, so that
clients and tests that match on them see what a real server says.
"""

from __future__ import annotations

import struct

__all__ = [
    "SQLSTATE_CHARACTER_NOT_IN_REPERTOIRE",
    "SQLSTATE_FEATURE_NOT_SUPPORTED",
    "SQLSTATE_PROTOCOL_VIOLATION",
    "ProtocolViolation",
    "Reader",
    "Writer",
    "decode_text",
    "encode_cstring",
]

SQLSTATE_PROTOCOL_VIOLATION = "08P01"
SQLSTATE_FEATURE_NOT_SUPPORTED = "0A000"
SQLSTATE_CHARACTER_NOT_IN_REPERTOIRE = "22021"


class ProtocolViolation(Exception):
    """A peer sent bytes that do not follow the protocol.

    ``severity`` says whether the byte stream is still usable: ``"ERROR"`` means one
    message was malformed but framing is intact (PostgreSQL reports it and carries on, or
    skips to Sync in the extended protocol), ``"FATAL"`` means framing itself is lost and
    the connection has to be closed after reporting.
    """

    def __init__(
        self,
        message: str,
        *,
        sqlstate: str = SQLSTATE_PROTOCOL_VIOLATION,
        severity: str = "ERROR",
        detail: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.sqlstate = sqlstate
        self.severity = severity
        self.detail = detail
        self.hint = hint
        #: The type byte of the message that was malformed, when its frame was whole.
        self.message_type: int | None = None

    @property
    def fatal(self) -> bool:
        return self.severity in ("FATAL", "PANIC")

    def __repr__(self) -> str:
        return f"ProtocolViolation({self.message!r}, sqlstate={self.sqlstate!r}, severity={self.severity!r})"


def _insufficient() -> ProtocolViolation:
    return ProtocolViolation("insufficient data left in message")


def _invalid_encoding(data: bytes, exc: UnicodeDecodeError) -> ProtocolViolation:
    # Same text as PostgreSQL's report_invalid_encoding(): the offending bytes in hex.
    bad = data[exc.start : max(exc.end, exc.start + 1)]
    shown = " ".join(f"0x{b:02x}" for b in bad)
    return ProtocolViolation(
        f'invalid byte sequence for encoding "UTF8": {shown}',
        sqlstate=SQLSTATE_CHARACTER_NOT_IN_REPERTOIRE,
    )


def decode_text(data: bytes) -> str:
    """UTF-8 decode with PostgreSQL's verdict on bad input.

    Strict decoding is what makes ``encode(decode(b)) == b`` hold for every accepted
    message; PostgreSQL validates client strings the same way (pg_verify_mbstr) when
    client and server encoding are both UTF8, which is the only pairing the proxy offers.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _invalid_encoding(data, exc) from None


def encode_cstring(value: str) -> bytes:
    """Encode a str as a NUL-terminated field, refusing embedded NULs.

    An embedded NUL would silently truncate the field on the peer and desynchronise every
    field after it, so it is a programming error here rather than something to send.
    """
    if "\x00" in value:
        raise ValueError(f"string field contains a NUL byte: {value!r}")
    return value.encode("utf-8") + b"\x00"


_I8 = struct.Struct("!b")
_U8 = struct.Struct("!B")
_I16 = struct.Struct("!h")
_U16 = struct.Struct("!H")
_I32 = struct.Struct("!i")
_U32 = struct.Struct("!I")
_I64 = struct.Struct("!q")
_U64 = struct.Struct("!Q")


class Reader:
    """Cursor over one message payload, mirroring pq_getmsg*()."""

    __slots__ = ("_data", "_end", "_pos")

    def __init__(self, data: bytes, pos: int = 0) -> None:
        self._data = data
        self._pos = pos
        self._end = len(data)

    @property
    def pos(self) -> int:
        return self._pos

    @property
    def remaining(self) -> int:
        return self._end - self._pos

    def _fixed(self, st: struct.Struct) -> int:
        pos = self._pos
        if pos + st.size > self._end:
            raise _insufficient()
        self._pos = pos + st.size
        return st.unpack_from(self._data, pos)[0]

    def int8(self) -> int:
        return self._fixed(_I8)

    def uint8(self) -> int:
        return self._fixed(_U8)

    def int16(self) -> int:
        return self._fixed(_I16)

    def uint16(self) -> int:
        return self._fixed(_U16)

    def int32(self) -> int:
        return self._fixed(_I32)

    def uint32(self) -> int:
        return self._fixed(_U32)

    def int64(self) -> int:
        return self._fixed(_I64)

    def uint64(self) -> int:
        return self._fixed(_U64)

    def byte(self) -> bytes:
        """One byte as a length-1 bytes object (message subtypes, format letters)."""
        pos = self._pos
        if pos >= self._end:
            raise _insufficient()
        self._pos = pos + 1
        return self._data[pos : pos + 1]

    def read_bytes(self, n: int) -> bytes:
        # A negative count is the same complaint as too few bytes, as in pq_getmsgbytes().
        pos = self._pos
        if n < 0 or pos + n > self._end:
            raise _insufficient()
        self._pos = pos + n
        return self._data[pos : pos + n]

    def cstring_bytes(self) -> bytes:
        data = self._data
        pos = self._pos
        nul = data.find(b"\x00", pos, self._end)
        if nul < 0:
            raise ProtocolViolation("invalid string in message")
        self._pos = nul + 1
        return data[pos:nul]

    def cstring(self) -> str:
        return decode_text(self.cstring_bytes())

    def rest(self) -> bytes:
        pos = self._pos
        self._pos = self._end
        return self._data[pos:]

    def end(self) -> None:
        """Insist the payload is used up, as pq_getmsgend() does."""
        if self._pos != self._end:
            raise ProtocolViolation("invalid message format")


class Writer:
    """Accumulates fields and frames them; for the messages that are not on a hot path."""

    __slots__ = ("_parts", "_size")

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._size = 0

    def _add(self, b: bytes) -> Writer:
        self._parts.append(b)
        self._size += len(b)
        return self

    def int8(self, v: int) -> Writer:
        return self._add(_I8.pack(v))

    def uint8(self, v: int) -> Writer:
        return self._add(_U8.pack(v))

    def int16(self, v: int) -> Writer:
        return self._add(_I16.pack(v))

    def uint16(self, v: int) -> Writer:
        return self._add(_U16.pack(v))

    def int32(self, v: int) -> Writer:
        return self._add(_I32.pack(v))

    def uint32(self, v: int) -> Writer:
        return self._add(_U32.pack(v))

    def int64(self, v: int) -> Writer:
        return self._add(_I64.pack(v))

    def uint64(self, v: int) -> Writer:
        return self._add(_U64.pack(v))

    def raw(self, b: bytes) -> Writer:
        return self._add(bytes(b))

    def cstring(self, s: str) -> Writer:
        return self._add(encode_cstring(s))

    def cstring_bytes(self, b: bytes) -> Writer:
        if b"\x00" in b:
            raise ValueError(f"string field contains a NUL byte: {b!r}")
        return self._add(bytes(b) + b"\x00")

    def __len__(self) -> int:
        return self._size

    def payload(self) -> bytes:
        return b"".join(self._parts)

    def finish(self, type_code: bytes | None) -> bytes:
        """Prefix the length word (and the type byte, unless this is a startup packet)."""
        header = _I32.pack(self._size + 4)
        if type_code is not None:
            header = type_code + header
        return header + b"".join(self._parts)
