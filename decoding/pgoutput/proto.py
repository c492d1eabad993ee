"""The pgoutput logical replication message codec: typed messages to bytes and back.

This is the counterpart of PostgreSQL's ``src/backend/replication/logical/proto.c``
and nothing more: it knows the byte layout of every message of protocol versions
1-4, but not when a message should be sent (that is the plugin's job, as in
``pgoutput.c``) nor how a row value becomes text or binary (a type-output concern
that lives elsewhere).  Keeping it free of that logic lets the same classes serve
the publisher side (encode), test harnesses and CDC clients (decode), and lets the
round-trip tests pin it byte for byte against captures from a real PostgreSQL.

A message here is the pgoutput payload of one XLogData ('w') message, starting
with its type byte.  Integers are big-endian.  LSNs are uint64, transaction ids
and OIDs uint32, timestamps int64 microseconds since 2000-01-01 00:00 UTC.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, Final, TypeAlias

__all__ = [
    "MESSAGE_CLASSES",
    "MESSAGE_TRANSACTIONAL",
    "PROTO_VERSION_MAX",
    "PROTO_VERSION_MIN",
    "RELATION_COLUMN_KEY",
    "REPLICA_IDENTITY_DEFAULT",
    "REPLICA_IDENTITY_FULL",
    "REPLICA_IDENTITY_INDEX",
    "REPLICA_IDENTITY_NOTHING",
    "STREAMABLE_TYPES",
    "TRUNCATE_CASCADE",
    "TRUNCATE_RESTART_IDENTITY",
    "TUPLE_KEY",
    "TUPLE_NEW",
    "TUPLE_OLD",
    "UNCHANGED",
    "Begin",
    "BeginPrepare",
    "ColumnValue",
    "Commit",
    "CommitPrepared",
    "DecodeError",
    "Delete",
    "Insert",
    "LogicalMessage",
    "Origin",
    "PgOutputMessage",
    "Prepare",
    "Relation",
    "RelationColumn",
    "RollbackPrepared",
    "StreamAbort",
    "StreamCommit",
    "StreamPrepare",
    "StreamStart",
    "StreamStop",
    "StreamTracker",
    "Truncate",
    "TupleData",
    "Type",
    "Unchanged",
    "Update",
    "decode_message",
    "row_head",
]

PROTO_VERSION_MIN: Final = 1
PROTO_VERSION_MAX: Final = 4

#: Relation column flag: the column is part of the replica identity.
RELATION_COLUMN_KEY: Final = 1
#: LogicalMessage flag: emitted with ``transactional => true``.
MESSAGE_TRANSACTIONAL: Final = 1
TRUNCATE_CASCADE: Final = 1
TRUNCATE_RESTART_IDENTITY: Final = 2
#: The tag before each TupleData of a row message: the new row, the old replica-identity
#: key (other columns 'n'), the whole old row (REPLICA IDENTITY FULL).
TUPLE_NEW: Final = b"N"
TUPLE_KEY: Final = b"K"
TUPLE_OLD: Final = b"O"

REPLICA_IDENTITY_DEFAULT: Final = "d"
REPLICA_IDENTITY_NOTHING: Final = "n"
REPLICA_IDENTITY_FULL: Final = "f"
REPLICA_IDENTITY_INDEX: Final = "i"

# Precompiled layouts; ">" because the wire is network order.  Encoders pack the
# type byte with the fixed fields; decoders read the body after it.
_U8 = struct.Struct(">B")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
_BEGIN = struct.Struct(">cQqI")
_BEGIN_BODY = struct.Struct(">QqI")
_COMMIT = struct.Struct(">cBQQq")
_COMMIT_BODY = struct.Struct(">BQQq")
_ORIGIN = struct.Struct(">cQ")
_ROW_HEAD = struct.Struct(">cI")
_ROW_HEAD_XID = struct.Struct(">cII")
_ATTR_TAIL = struct.Struct(">Ii")
_STREAM_START = struct.Struct(">cIB")
_STREAM_COMMIT = struct.Struct(">cIBQQq")
_STREAM_COMMIT_BODY = struct.Struct(">IBQQq")
_STREAM_ABORT = struct.Struct(">cII")
_STREAM_ABORT_BODY = struct.Struct(">II")
_STREAM_ABORT_INFO = struct.Struct(">cIIQq")
_STREAM_ABORT_INFO_BODY = struct.Struct(">IIQq")
_BEGIN_PREPARE = struct.Struct(">cQQqI")
_BEGIN_PREPARE_BODY = struct.Struct(">QQqI")
_PREPARE = struct.Struct(">cBQQqI")  # also Stream Prepare and Commit Prepared
_PREPARE_BODY = struct.Struct(">BQQqI")
_ROLLBACK_PREPARED = struct.Struct(">cBQQqqI")
_ROLLBACK_PREPARED_BODY = struct.Struct(">BQQqqI")
_KIND_LEN = struct.Struct(">ci")


class DecodeError(ValueError):
    """The bytes are not a well-formed pgoutput message.

    A ValueError so callers can map it to a protocol-violation ErrorResponse
    without knowing this module; the codec never lets struct.error or
    IndexError escape for bad input.
    """


class Unchanged:
    """Marker for an unchanged TOASTed column ('u'): PostgreSQL does not resend it.

    A dedicated singleton rather than a magic bytes value, so an empty string, a
    NULL and "not sent" can never be confused.
    """

    __slots__ = ()
    _instance: ClassVar[Unchanged | None] = None

    def __new__(cls) -> Unchanged:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNCHANGED"

    def __reduce__(self) -> str:
        return "UNCHANGED"


UNCHANGED: Final = Unchanged()

#: One column of a TupleData: encoded bytes ('t' or 'b'), None (NULL), or UNCHANGED.
ColumnValue: TypeAlias = bytes | Unchanged | None


# --------------------------------------------------------------------------- reading


class _Reader:
    """Cursor over one message; every failure becomes DecodeError."""

    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes, pos: int) -> None:
        self.buf = buf
        self.pos = pos

    def unpack(self, layout: struct.Struct) -> tuple:
        try:
            values = layout.unpack_from(self.buf, self.pos)
        except struct.error:
            raise DecodeError(
                f"message truncated: need {layout.size} bytes at offset {self.pos}, "
                f"have {len(self.buf) - self.pos}"
            ) from None
        self.pos += layout.size
        return values

    def u8(self) -> int:
        return self.unpack(_U8)[0]

    def u16(self) -> int:
        return self.unpack(_U16)[0]

    def u32(self) -> int:
        return self.unpack(_U32)[0]

    def byte(self) -> bytes:
        pos = self.pos
        if pos >= len(self.buf):
            raise DecodeError(f"message truncated at offset {pos}")
        self.pos = pos + 1
        return self.buf[pos : pos + 1]

    def take(self, n: int) -> bytes:
        pos = self.pos
        end = pos + n
        if n < 0 or end > len(self.buf):
            raise DecodeError(f"length {n} at offset {pos} overruns the message")
        self.pos = end
        return self.buf[pos:end]

    def cstring(self) -> str:
        end = self.buf.find(b"\0", self.pos)
        if end < 0:
            raise DecodeError(f"unterminated string at offset {self.pos}")
        raw = self.buf[self.pos : end]
        self.pos = end + 1
        # surrogateescape: names in a non-UTF-8 server encoding still round-trip.
        return raw.decode("utf-8", "surrogateescape")

    def finish(self) -> None:
        if self.pos != len(self.buf):
            raise DecodeError(f"{len(self.buf) - self.pos} trailing bytes after message")


def _start(buf: bytes | bytearray | memoryview, cls: type) -> _Reader:
    if not isinstance(buf, bytes):
        buf = bytes(buf)
    if buf[:1] != cls.TYPE:
        raise DecodeError(f"expected {cls.__name__} message {cls.TYPE!r}, got {buf[:1]!r}")
    return _Reader(buf, 1)


def _cstring(value: str) -> bytes:
    raw = value.encode("utf-8", "surrogateescape")
    if b"\0" in raw:
        raise ValueError(f"string {value!r} contains NUL, which the protocol cannot carry")
    return raw + b"\0"


def _xid_prefix(xid: int | None) -> bytes:
    return b"" if xid is None else _U32.pack(xid)


def _read_xid(r: _Reader, in_stream: bool) -> int | None:
    return r.u32() if in_stream else None


# ------------------------------------------------------------------------ TupleData

_KIND_OF_NONBYTES = {None: b"n", UNCHANGED: b"u"}
_KIND_NULL = ord("n")
_KIND_UNCHANGED = ord("u")


def _bad_value(value: object) -> str:
    return f"column values must be bytes, None or UNCHANGED, not {type(value).__name__}"


@dataclass(frozen=True, slots=True)
class TupleData:
    """A row image: the per-column values of an Insert, Update or Delete.

    ``kinds`` keeps the wire kind of each column ('n', 'u', 't', 'b') because in
    binary mode PostgreSQL falls back to text per column for types without a send
    function, so text and binary can mix inside one tuple.  Leave it empty to
    mean "bytes are text"; ``TupleData.of(values, binary=True)`` builds binary.
    """

    values: tuple[ColumnValue, ...]
    kinds: bytes = b""

    def __post_init__(self) -> None:
        values = self.values
        if not isinstance(values, tuple):
            values = tuple(values)
            object.__setattr__(self, "values", values)
        if not self.kinds:
            if values:
                object.__setattr__(self, "kinds", _kinds_for(values, b"t"))
            return
        if len(self.kinds) != len(values):
            raise ValueError(f"{len(self.kinds)} kinds for {len(values)} values")
        for value, kind in zip(values, self.kinds, strict=True):
            if isinstance(value, bytes):
                ok = kind in b"tb"
            elif value is None:
                ok = kind == _KIND_NULL
            elif value is UNCHANGED:
                ok = kind == _KIND_UNCHANGED
            else:
                raise TypeError(_bad_value(value))
            if not ok:
                raise ValueError(f"kind {chr(kind)!r} does not fit value {value!r}")

    @classmethod
    def of(cls, values: Iterable[ColumnValue], *, binary: bool = False) -> TupleData:
        values = tuple(values)
        return cls(values, _kinds_for(values, b"b" if binary else b"t"))

    @property
    def binary(self) -> bool:
        return b"b" in self.kinds

    def encode(self) -> bytes:
        parts = [_U16.pack(len(self.values))]
        append = parts.append
        for value, kind in zip(self.values, self.kinds, strict=True):
            if value is None:
                append(b"n")
            elif value is UNCHANGED:
                append(b"u")
            else:
                append(_KIND_LEN.pack(bytes((kind,)), len(value)))
                append(value)
        return b"".join(parts)

    @classmethod
    def decode(cls, buf: bytes) -> TupleData:
        r = _Reader(bytes(buf), 0)
        tup = cls._read(r)
        r.finish()
        return tup

    @classmethod
    def _read(cls, r: _Reader) -> TupleData:
        natts = r.u16()
        values: list[ColumnValue] = []
        kinds = bytearray()
        for _ in range(natts):
            kind = r.byte()
            if kind == b"n":
                values.append(None)
            elif kind == b"u":
                values.append(UNCHANGED)
            elif kind in (b"t", b"b"):
                (length,) = r.unpack(_I32)
                values.append(r.take(length))
            else:
                raise DecodeError(f"unknown tuple column kind {kind!r} at offset {r.pos - 1}")
            kinds += kind
        return cls(tuple(values), bytes(kinds))


def _kinds_for(values: tuple[ColumnValue, ...], data_kind: bytes) -> bytes:
    try:
        return b"".join(data_kind if isinstance(v, bytes) else _KIND_OF_NONBYTES[v] for v in values)
    except (KeyError, TypeError):
        bad = next(v for v in values if not isinstance(v, bytes) and v not in (None, UNCHANGED))
        raise TypeError(_bad_value(bad)) from None


# ------------------------------------------------------------------- message classes


@dataclass(frozen=True, slots=True)
class Begin:
    """'B': start of a (non-streamed) transaction, sent just before its first change."""

    TYPE: ClassVar[bytes] = b"B"
    MIN_VERSION: ClassVar[int] = 1

    final_lsn: int
    commit_time: int
    xid: int

    def encode(self) -> bytes:
        return _BEGIN.pack(b"B", self.final_lsn, self.commit_time, self.xid)

    @classmethod
    def decode(cls, buf: bytes) -> Begin:
        r = _start(buf, cls)
        final_lsn, commit_time, xid = r.unpack(_BEGIN_BODY)
        r.finish()
        return cls(final_lsn, commit_time, xid)


@dataclass(frozen=True, slots=True)
class Commit:
    """'C': end of a non-streamed transaction.  ``flags`` is reserved and always 0."""

    TYPE: ClassVar[bytes] = b"C"
    MIN_VERSION: ClassVar[int] = 1

    commit_lsn: int
    end_lsn: int
    commit_time: int
    flags: int = 0

    def encode(self) -> bytes:
        return _COMMIT.pack(b"C", self.flags, self.commit_lsn, self.end_lsn, self.commit_time)

    @classmethod
    def decode(cls, buf: bytes) -> Commit:
        r = _start(buf, cls)
        flags, commit_lsn, end_lsn, commit_time = r.unpack(_COMMIT_BODY)
        r.finish()
        return cls(commit_lsn, end_lsn, commit_time, flags)


@dataclass(frozen=True, slots=True)
class Origin:
    """'O': the replication origin a transaction came from (lets subscribers avoid loops)."""

    TYPE: ClassVar[bytes] = b"O"
    MIN_VERSION: ClassVar[int] = 1

    origin_lsn: int
    name: str

    def encode(self) -> bytes:
        return _ORIGIN.pack(b"O", self.origin_lsn) + _cstring(self.name)

    @classmethod
    def decode(cls, buf: bytes) -> Origin:
        r = _start(buf, cls)
        (origin_lsn,) = r.unpack(_U64)
        name = r.cstring()
        r.finish()
        return cls(origin_lsn, name)


@dataclass(frozen=True, slots=True)
class RelationColumn:
    """One published column of a Relation message.

    ``flags`` rather than a bool so unknown future bits survive a round trip;
    ``is_key`` reads the only bit PostgreSQL defines.
    """

    name: str
    type_oid: int
    type_modifier: int = -1
    flags: int = 0

    @property
    def is_key(self) -> bool:
        return bool(self.flags & RELATION_COLUMN_KEY)


@dataclass(frozen=True, slots=True)
class Relation:
    """'R': the schema of a relation, sent before its first row in a session (and
    again whenever it may have changed).

    ``namespace`` is as on the wire: PostgreSQL sends '' for pg_catalog.
    ``replica_identity`` is pg_class.relreplident: 'd', 'n', 'f' or 'i'.
    """

    TYPE: ClassVar[bytes] = b"R"
    MIN_VERSION: ClassVar[int] = 1

    relid: int
    namespace: str
    name: str
    replica_identity: str
    columns: tuple[RelationColumn, ...]
    xid: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.columns, tuple):
            object.__setattr__(self, "columns", tuple(self.columns))

    def encode(self) -> bytes:
        ident = self.replica_identity.encode("latin-1")
        if len(ident) != 1:
            raise ValueError(f"replica identity must be one character, not {ident!r}")
        parts = [
            b"R",
            _xid_prefix(self.xid),
            _U32.pack(self.relid),
            _cstring(self.namespace),
            _cstring(self.name),
            ident,
            _U16.pack(len(self.columns)),
        ]
        for col in self.columns:
            parts.append(_U8.pack(col.flags))
            parts.append(_cstring(col.name))
            parts.append(_ATTR_TAIL.pack(col.type_oid, col.type_modifier))
        return b"".join(parts)

    @classmethod
    def decode(cls, buf: bytes, *, in_stream: bool = False) -> Relation:
        r = _start(buf, cls)
        xid = _read_xid(r, in_stream)
        relid = r.u32()
        namespace = r.cstring()
        name = r.cstring()
        ident = r.byte().decode("latin-1")
        columns = []
        for _ in range(r.u16()):
            flags = r.u8()
            col_name = r.cstring()
            type_oid, type_modifier = r.unpack(_ATTR_TAIL)
            columns.append(RelationColumn(col_name, type_oid, type_modifier, flags))
        r.finish()
        return cls(relid, namespace, name, ident, tuple(columns), xid)


@dataclass(frozen=True, slots=True)
class Type:
    """'Y': name of a non-built-in column type, so the subscriber can map its OID.

    ``namespace`` is '' for pg_catalog, as for Relation.
    """

    TYPE: ClassVar[bytes] = b"Y"
    MIN_VERSION: ClassVar[int] = 1

    type_oid: int
    namespace: str
    name: str
    xid: int | None = None

    def encode(self) -> bytes:
        return b"".join(
            (
                b"Y",
                _xid_prefix(self.xid),
                _U32.pack(self.type_oid),
                _cstring(self.namespace),
                _cstring(self.name),
            )
        )

    @classmethod
    def decode(cls, buf: bytes, *, in_stream: bool = False) -> Type:
        r = _start(buf, cls)
        xid = _read_xid(r, in_stream)
        type_oid = r.u32()
        namespace = r.cstring()
        name = r.cstring()
        r.finish()
        return cls(type_oid, namespace, name, xid)


@dataclass(frozen=True, slots=True)
class Insert:
    """'I': a new row.  The reference form: many rows of one relation are written in
    one vectorised pass by ``decoding.pgoutput.rows``, which must give these bytes."""

    TYPE: ClassVar[bytes] = b"I"
    MIN_VERSION: ClassVar[int] = 1

    relid: int
    new: TupleData
    xid: int | None = None

    def encode(self) -> bytes:
        return b"".join((row_head(b"I", self.relid, self.xid), TUPLE_NEW, self.new.encode()))

    @classmethod
    def decode(cls, buf: bytes, *, in_stream: bool = False) -> Insert:
        r = _start(buf, cls)
        xid = _read_xid(r, in_stream)
        relid = r.u32()
        _expect(r, b"N", "Insert")
        new = TupleData._read(r)
        r.finish()
        return cls(relid, new, xid)


def row_head(kind: bytes, relid: int, xid: int | None = None) -> bytes:
    """The bytes of an Insert, Update or Delete before its first tuple tag: the type byte,
    the xid inside a stream block, the relation OID.  Public because the vectorised
    writers of ``rows`` put the same head in front of every row of a batch."""
    if xid is None:
        return _ROW_HEAD.pack(kind, relid)
    return _ROW_HEAD_XID.pack(kind, xid, relid)


def _expect(r: _Reader, tag: bytes, what: str) -> None:
    got = r.byte()
    if got != tag:
        raise DecodeError(f"{what}: expected tuple tag {tag!r}, got {got!r}")


def _check_old(key: TupleData | None, old: TupleData | None, what: str) -> None:
    if key is not None and old is not None:
        raise ValueError(f"{what} carries either a key ('K') or an old row ('O'), not both")


@dataclass(frozen=True, slots=True)
class Update:
    """'U': a changed row.

    ``key`` ('K') holds the old replica-identity columns when they changed (other
    columns NULL); ``old`` ('O') the whole old row under REPLICA IDENTITY FULL.
    At most one is present; with neither, the key did not change.
    """

    TYPE: ClassVar[bytes] = b"U"
    MIN_VERSION: ClassVar[int] = 1

    relid: int
    new: TupleData
    key: TupleData | None = None
    old: TupleData | None = None
    xid: int | None = None

    def __post_init__(self) -> None:
        _check_old(self.key, self.old, "Update")

    def encode(self) -> bytes:
        parts = [row_head(b"U", self.relid, self.xid)]
        if self.key is not None:
            parts += (TUPLE_KEY, self.key.encode())
        elif self.old is not None:
            parts += (TUPLE_OLD, self.old.encode())
        parts += (TUPLE_NEW, self.new.encode())
        return b"".join(parts)

    @classmethod
    def decode(cls, buf: bytes, *, in_stream: bool = False) -> Update:
        r = _start(buf, cls)
        xid = _read_xid(r, in_stream)
        relid = r.u32()
        key = old = None
        tag = r.byte()
        if tag == b"K":
            key = TupleData._read(r)
            tag = r.byte()
        elif tag == b"O":
            old = TupleData._read(r)
            tag = r.byte()
        if tag != b"N":
            raise DecodeError(f"Update: expected tuple tag b'N', got {tag!r}")
        new = TupleData._read(r)
        r.finish()
        return cls(relid, new, key, old, xid)


@dataclass(frozen=True, slots=True)
class Delete:
    """'D': a removed row, identified by ``key`` ('K') or, under REPLICA IDENTITY
    FULL, by the whole ``old`` row ('O').  Exactly one is present."""

    TYPE: ClassVar[bytes] = b"D"
    MIN_VERSION: ClassVar[int] = 1

    relid: int
    key: TupleData | None = None
    old: TupleData | None = None
    xid: int | None = None

    def __post_init__(self) -> None:
        _check_old(self.key, self.old, "Delete")
        if self.key is None and self.old is None:
            raise ValueError("Delete needs a key ('K') or an old row ('O')")

    def encode(self) -> bytes:
        if self.key is not None:
            tag, tup = TUPLE_KEY, self.key
        else:
            tag, tup = TUPLE_OLD, self.old
        assert tup is not None
        return b"".join((row_head(b"D", self.relid, self.xid), tag, tup.encode()))

    @classmethod
    def decode(cls, buf: bytes, *, in_stream: bool = False) -> Delete:
        r = _start(buf, cls)
        xid = _read_xid(r, in_stream)
        relid = r.u32()
        tag = r.byte()
        if tag not in (b"K", b"O"):
            raise DecodeError(f"Delete: expected tuple tag b'K' or b'O', got {tag!r}")
        tup = TupleData._read(r)
        r.finish()
        if tag == b"K":
            return cls(relid, key=tup, xid=xid)
        return cls(relid, old=tup, xid=xid)


@dataclass(frozen=True, slots=True)
class Truncate:
    """'T': one TRUNCATE statement, all its published relations in one message.

    ``options`` is the bit set TRUNCATE_CASCADE | TRUNCATE_RESTART_IDENTITY.
    """

    TYPE: ClassVar[bytes] = b"T"
    MIN_VERSION: ClassVar[int] = 1

    relids: tuple[int, ...]
    options: int = 0
    xid: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.relids, tuple):
            object.__setattr__(self, "relids", tuple(self.relids))

    @property
    def cascade(self) -> bool:
        return bool(self.options & TRUNCATE_CASCADE)

    @property
    def restart_identity(self) -> bool:
        return bool(self.options & TRUNCATE_RESTART_IDENTITY)

    def encode(self) -> bytes:
        n = len(self.relids)
        return b"".join(
            (
                b"T",
                _xid_prefix(self.xid),
                _U32.pack(n),
                _U8.pack(self.options),
                struct.pack(f">{n}I", *self.relids),
            )
        )

    @classmethod
    def decode(cls, buf: bytes, *, in_stream: bool = False) -> Truncate:
        r = _start(buf, cls)
        xid = _read_xid(r, in_stream)
        nrels = r.u32()
        options = r.u8()
        if nrels * 4 != len(r.buf) - r.pos:
            raise DecodeError(f"Truncate: {nrels} relids do not match {len(r.buf) - r.pos} bytes")
        relids = struct.unpack_from(f">{nrels}I", r.buf, r.pos)
        r.pos += nrels * 4
        return cls(relids, options, xid)


@dataclass(frozen=True, slots=True)
class LogicalMessage:
    """'M': a pg_logical_emit_message() payload (only sent with ``messages 'true'``).

    ``flags`` bit MESSAGE_TRANSACTIONAL distinguishes messages inside a
    transaction (between Begin and Commit) from ones sent on their own.
    """

    TYPE: ClassVar[bytes] = b"M"
    MIN_VERSION: ClassVar[int] = 1

    lsn: int
    prefix: str
    content: bytes
    flags: int = 0
    xid: int | None = None

    @property
    def transactional(self) -> bool:
        return bool(self.flags & MESSAGE_TRANSACTIONAL)

    def encode(self) -> bytes:
        return b"".join(
            (
                b"M",
                _xid_prefix(self.xid),
                _U8.pack(self.flags),
                _U64.pack(self.lsn),
                _cstring(self.prefix),
                _U32.pack(len(self.content)),
                self.content,
            )
        )

    @classmethod
    def decode(cls, buf: bytes, *, in_stream: bool = False) -> LogicalMessage:
        r = _start(buf, cls)
        xid = _read_xid(r, in_stream)
        flags = r.u8()
        (lsn,) = r.unpack(_U64)
        prefix = r.cstring()
        content = r.take(r.u32())
        r.finish()
        return cls(lsn, prefix, content, flags, xid)


@dataclass(frozen=True, slots=True)
class StreamStart:
    """'S': opens a block of changes of in-progress transaction ``xid`` (v2+).

    Until the matching StreamStop every row, relation, type and logical message
    carries that xid after its type byte.
    """

    TYPE: ClassVar[bytes] = b"S"
    MIN_VERSION: ClassVar[int] = 2

    xid: int
    first_segment: bool

    def encode(self) -> bytes:
        return _STREAM_START.pack(b"S", self.xid, 1 if self.first_segment else 0)

    @classmethod
    def decode(cls, buf: bytes) -> StreamStart:
        r = _start(buf, cls)
        xid = r.u32()
        first = r.u8()
        r.finish()
        if first > 1:
            # PostgreSQL reads "== 1"; anything else would not round-trip.
            raise DecodeError(f"StreamStart: first_segment byte {first} is not 0 or 1")
        return cls(xid, first == 1)


@dataclass(frozen=True, slots=True)
class StreamStop:
    """'E': closes the current stream block (v2+)."""

    TYPE: ClassVar[bytes] = b"E"
    MIN_VERSION: ClassVar[int] = 2

    def encode(self) -> bytes:
        return b"E"

    @classmethod
    def decode(cls, buf: bytes) -> StreamStop:
        r = _start(buf, cls)
        r.finish()
        return cls()


@dataclass(frozen=True, slots=True)
class StreamCommit:
    """'c': a streamed transaction committed (v2+).  ``flags`` is reserved (0)."""

    TYPE: ClassVar[bytes] = b"c"
    MIN_VERSION: ClassVar[int] = 2

    xid: int
    commit_lsn: int
    end_lsn: int
    commit_time: int
    flags: int = 0

    def encode(self) -> bytes:
        return _STREAM_COMMIT.pack(
            b"c", self.xid, self.flags, self.commit_lsn, self.end_lsn, self.commit_time
        )

    @classmethod
    def decode(cls, buf: bytes) -> StreamCommit:
        r = _start(buf, cls)
        xid, flags, commit_lsn, end_lsn, commit_time = r.unpack(_STREAM_COMMIT_BODY)
        r.finish()
        return cls(xid, commit_lsn, end_lsn, commit_time, flags)


@dataclass(frozen=True, slots=True)
class StreamAbort:
    """'A': a streamed (sub)transaction aborted (v2+); ``subxid == xid`` for the top level.

    Protocol 4 with ``streaming 'parallel'`` appends abort_lsn and abort_time so
    a parallel apply worker can order the abort.  Both are None otherwise; the
    layout is recognised by length, so decoding needs no version argument.
    """

    TYPE: ClassVar[bytes] = b"A"
    MIN_VERSION: ClassVar[int] = 2

    xid: int
    subxid: int
    abort_lsn: int | None = None
    abort_time: int | None = None

    def __post_init__(self) -> None:
        if (self.abort_lsn is None) != (self.abort_time is None):
            raise ValueError("StreamAbort: abort_lsn and abort_time go together")

    @property
    def has_abort_info(self) -> bool:
        return self.abort_lsn is not None

    def encode(self) -> bytes:
        if self.abort_lsn is None:
            return _STREAM_ABORT.pack(b"A", self.xid, self.subxid)
        return _STREAM_ABORT_INFO.pack(b"A", self.xid, self.subxid, self.abort_lsn, self.abort_time)

    @classmethod
    def decode(cls, buf: bytes) -> StreamAbort:
        r = _start(buf, cls)
        if len(r.buf) - r.pos == _STREAM_ABORT_INFO_BODY.size:
            xid, subxid, abort_lsn, abort_time = r.unpack(_STREAM_ABORT_INFO_BODY)
            return cls(xid, subxid, abort_lsn, abort_time)
        xid, subxid = r.unpack(_STREAM_ABORT_BODY)
        r.finish()
        return cls(xid, subxid)


@dataclass(frozen=True, slots=True)
class BeginPrepare:
    """'b': start of a transaction that will be prepared (two_phase, v3+)."""

    TYPE: ClassVar[bytes] = b"b"
    MIN_VERSION: ClassVar[int] = 3

    prepare_lsn: int
    end_lsn: int
    prepare_time: int
    xid: int
    gid: str

    def encode(self) -> bytes:
        head = _BEGIN_PREPARE.pack(
            b"b", self.prepare_lsn, self.end_lsn, self.prepare_time, self.xid
        )
        return head + _cstring(self.gid)

    @classmethod
    def decode(cls, buf: bytes) -> BeginPrepare:
        r = _start(buf, cls)
        prepare_lsn, end_lsn, prepare_time, xid = r.unpack(_BEGIN_PREPARE_BODY)
        gid = r.cstring()
        r.finish()
        return cls(prepare_lsn, end_lsn, prepare_time, xid, gid)


def _encode_prepare_shaped(
    kind: bytes, flags: int, lsn: int, end_lsn: int, time: int, xid: int, gid: str
) -> bytes:
    # Prepare, Stream Prepare and Commit Prepared share one layout (proto.c
    # writes the first two with the same function).
    return _PREPARE.pack(kind, flags, lsn, end_lsn, time, xid) + _cstring(gid)


def _decode_prepare_shaped(buf: bytes, cls: type) -> tuple[int, int, int, int, int, str]:
    r = _start(buf, cls)
    flags, lsn, end_lsn, time, xid = r.unpack(_PREPARE_BODY)
    gid = r.cstring()
    r.finish()
    return flags, lsn, end_lsn, time, xid, gid


@dataclass(frozen=True, slots=True)
class Prepare:
    """'P': PREPARE TRANSACTION of a non-streamed transaction (v3+)."""

    TYPE: ClassVar[bytes] = b"P"
    MIN_VERSION: ClassVar[int] = 3

    prepare_lsn: int
    end_lsn: int
    prepare_time: int
    xid: int
    gid: str
    flags: int = 0

    def encode(self) -> bytes:
        return _encode_prepare_shaped(
            b"P", self.flags, self.prepare_lsn, self.end_lsn, self.prepare_time, self.xid, self.gid
        )

    @classmethod
    def decode(cls, buf: bytes) -> Prepare:
        flags, prepare_lsn, end_lsn, prepare_time, xid, gid = _decode_prepare_shaped(buf, cls)
        return cls(prepare_lsn, end_lsn, prepare_time, xid, gid, flags)


@dataclass(frozen=True, slots=True)
class StreamPrepare:
    """'p': PREPARE TRANSACTION of a streamed transaction (v3+); same layout as 'P'."""

    TYPE: ClassVar[bytes] = b"p"
    MIN_VERSION: ClassVar[int] = 3

    prepare_lsn: int
    end_lsn: int
    prepare_time: int
    xid: int
    gid: str
    flags: int = 0

    def encode(self) -> bytes:
        return _encode_prepare_shaped(
            b"p", self.flags, self.prepare_lsn, self.end_lsn, self.prepare_time, self.xid, self.gid
        )

    @classmethod
    def decode(cls, buf: bytes) -> StreamPrepare:
        flags, prepare_lsn, end_lsn, prepare_time, xid, gid = _decode_prepare_shaped(buf, cls)
        return cls(prepare_lsn, end_lsn, prepare_time, xid, gid, flags)


@dataclass(frozen=True, slots=True)
class CommitPrepared:
    """'K': COMMIT PREPARED (v3+)."""

    TYPE: ClassVar[bytes] = b"K"
    MIN_VERSION: ClassVar[int] = 3

    commit_lsn: int
    end_lsn: int
    commit_time: int
    xid: int
    gid: str
    flags: int = 0

    def encode(self) -> bytes:
        return _encode_prepare_shaped(
            b"K", self.flags, self.commit_lsn, self.end_lsn, self.commit_time, self.xid, self.gid
        )

    @classmethod
    def decode(cls, buf: bytes) -> CommitPrepared:
        flags, commit_lsn, end_lsn, commit_time, xid, gid = _decode_prepare_shaped(buf, cls)
        return cls(commit_lsn, end_lsn, commit_time, xid, gid, flags)


@dataclass(frozen=True, slots=True)
class RollbackPrepared:
    """'r': ROLLBACK PREPARED (v3+).

    Carries the prepare's end LSN and time so a subscriber that never saw the
    prepare (it was before its start point) can tell it has nothing to roll back.
    """

    TYPE: ClassVar[bytes] = b"r"
    MIN_VERSION: ClassVar[int] = 3

    prepare_end_lsn: int
    rollback_end_lsn: int
    prepare_time: int
    rollback_time: int
    xid: int
    gid: str
    flags: int = 0

    def encode(self) -> bytes:
        head = _ROLLBACK_PREPARED.pack(
            b"r",
            self.flags,
            self.prepare_end_lsn,
            self.rollback_end_lsn,
            self.prepare_time,
            self.rollback_time,
            self.xid,
        )
        return head + _cstring(self.gid)

    @classmethod
    def decode(cls, buf: bytes) -> RollbackPrepared:
        r = _start(buf, cls)
        flags, prepare_end, rollback_end, prepare_time, rollback_time, xid = r.unpack(
            _ROLLBACK_PREPARED_BODY
        )
        gid = r.cstring()
        r.finish()
        return cls(prepare_end, rollback_end, prepare_time, rollback_time, xid, gid, flags)


PgOutputMessage: TypeAlias = (
    Begin
    | Commit
    | Origin
    | Relation
    | Type
    | Insert
    | Update
    | Delete
    | Truncate
    | LogicalMessage
    | StreamStart
    | StreamStop
    | StreamCommit
    | StreamAbort
    | BeginPrepare
    | Prepare
    | CommitPrepared
    | RollbackPrepared
    | StreamPrepare
)

MESSAGE_CLASSES: Final[dict[bytes, type]] = {
    cls.TYPE: cls
    for cls in (
        Begin,
        Commit,
        Origin,
        Relation,
        Type,
        Insert,
        Update,
        Delete,
        Truncate,
        LogicalMessage,
        StreamStart,
        StreamStop,
        StreamCommit,
        StreamAbort,
        BeginPrepare,
        Prepare,
        CommitPrepared,
        RollbackPrepared,
        StreamPrepare,
    )
}

#: Types whose layout gains an xid inside a StreamStart/StreamStop block.
STREAMABLE_TYPES: Final = frozenset((b"R", b"Y", b"I", b"U", b"D", b"T", b"M"))


def decode_message(
    buf: bytes | bytearray | memoryview, *, in_stream: bool = False
) -> PgOutputMessage:
    """Decode one pgoutput message.

    ``in_stream`` must say whether the message sits between StreamStart and
    StreamStop: the bytes alone cannot tell, since the streamed layout only
    inserts an xid.  StreamTracker keeps that state for a whole stream.
    """
    if not isinstance(buf, bytes):
        buf = bytes(buf)
    kind = buf[:1]
    cls = MESSAGE_CLASSES.get(kind)
    if cls is None:
        raise DecodeError(f"unknown pgoutput message type {kind!r}")
    if kind in STREAMABLE_TYPES:
        return cls.decode(buf, in_stream=in_stream)
    return cls.decode(buf)


class StreamTracker:
    """Decodes a sequence of messages, following StreamStart/StreamStop itself.

    For consumers (tests, CDC clients) that read a whole stream and should not
    have to thread the in-stream flag through by hand.
    """

    __slots__ = ("stream_xid",)

    def __init__(self) -> None:
        self.stream_xid: int | None = None

    @property
    def in_stream(self) -> bool:
        return self.stream_xid is not None

    def decode(self, buf: bytes | bytearray | memoryview) -> PgOutputMessage:
        msg = decode_message(buf, in_stream=self.in_stream)
        if isinstance(msg, StreamStart):
            if self.stream_xid is not None:
                raise DecodeError(
                    f"StreamStart for xid {msg.xid} inside the block of xid {self.stream_xid}"
                )
            self.stream_xid = msg.xid
        elif isinstance(msg, StreamStop):
            if self.stream_xid is None:
                raise DecodeError("StreamStop outside a stream block")
            self.stream_xid = None
        return msg
