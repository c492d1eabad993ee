"""Change-log records: one class per record kind, payload encode and decode side by side.

Row data travels as Arrow IPC (a schema plus one or more record batches) so that a
million-row statement is one record written and read without a Python loop over its rows;
very large statements go to a Parquet *changeset* file and the record only names it.
Everything else is packed with :mod:`struct`. The frame around a payload (length, kind, CRC)
belongs to :mod:`decoding.changelog`.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, ClassVar

import pyarrow as pa

from decoding.catalog import CatalogOp


class Kind(IntEnum):
    CHANGE = 1
    TRUNCATE = 2
    COMMIT = 3
    ABORT = 4
    SUBABORT = 5
    PREPARE = 6
    COMMIT_PREPARED = 7
    ROLLBACK_PREPARED = 8
    CATALOG = 9
    MESSAGE = 10
    FRONTIER = 11
    CHANGESET = 12
    XACT_ORIGIN = 13


class RecordFormatError(ValueError):
    """A payload that does not decode: the log is corrupt past its CRC (should not happen)."""


_Q = struct.Struct("<Q")
_q = struct.Struct("<q")
_I = struct.Struct("<I")
_H = struct.Struct("<H")
#: Change: xid, subxid, relid, op, length of the new rows' IPC.
_CHANGE_HEAD = struct.Struct("<QIIBI")
#: Commit: xid, csn, commit_ts, length of the origin name.
_COMMIT_HEAD = struct.Struct("<QQqI")


def _pack_str(s: str) -> bytes:
    b = s.encode()
    return _I.pack(len(b)) + b


def _pack_bytes(b: bytes) -> bytes:
    return _I.pack(len(b)) + b


class _Reader:
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes | memoryview) -> None:
        self.buf = memoryview(buf)
        self.pos = 0

    def take(self, n: int) -> memoryview:
        if self.pos + n > len(self.buf):
            raise RecordFormatError("record payload too short")
        v = self.buf[self.pos : self.pos + n]
        self.pos += n
        return v

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return _H.unpack(self.take(2))[0]

    def u32(self) -> int:
        return _I.unpack(self.take(4))[0]

    def u64(self) -> int:
        return _Q.unpack(self.take(8))[0]

    def i64(self) -> int:
        return struct.unpack("<q", self.take(8))[0]

    def bytes_(self) -> bytes:
        return bytes(self.take(self.u32()))

    def view(self) -> memoryview:
        return self.take(self.u32())

    def str_(self) -> str:
        return bytes(self.take(self.u32())).decode()


#: The end-of-stream marker of the Arrow IPC stream format.
_IPC_EOS = b"\xff\xff\xff\xff\x00\x00\x00\x00"


def table_to_ipc(table: pa.Table | None) -> bytes:
    """An Arrow IPC stream of ``table``: the bytes ``pa.ipc.new_stream`` writes, put
    together from the serialised schema and batches — cheaper for the one-row
    statements of an OLTP load (no writer object, no options looked up in the
    environment). Dictionary columns need the writer's dictionary batches."""
    if table is None:
        return b""
    schema = table.schema
    head = _schema_bytes(schema)
    if head is None:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, schema) as w:
            w.write_table(table)
        return sink.getvalue().to_pybytes()
    batches = table.to_batches()
    if len(batches) == 1:
        return b"".join((head, batches[0].serialize().to_pybytes(), _IPC_EOS))
    return b"".join((head, *(b.serialize().to_pybytes() for b in batches), _IPC_EOS))


#: Schemas recently serialised, newest first, with their IPC bytes (None: the schema has
#: dictionaries, which the writer handles). Found by equality: ``table.schema`` is a new
#: object at every call, so the tables of one table's statements never share one, but
#: comparing is far cheaper than serialising, once per logged statement.
_RECENT_SCHEMAS: list[tuple[pa.Schema, bytes | None]] = []
_RECENT_MAX = 16


def _schema_bytes(schema: pa.Schema) -> bytes | None:
    recent = _RECENT_SCHEMAS
    for i, (known, head) in enumerate(recent):
        if known.equals(schema, check_metadata=True):
            if i:
                recent.insert(0, recent.pop(i))
            return head
    plain = not any(pa.types.is_dictionary(f.type) for f in schema)
    head = schema.serialize().to_pybytes() if plain else None
    recent.insert(0, (schema, head))
    del recent[_RECENT_MAX:]
    return head


#: Schemas by the bytes of their IPC message: a table's records all carry the same one.
_SCHEMAS: dict[bytes, pa.Schema] = {}
_SCHEMAS_MAX = 1024
_CONTINUATION = b"\xff\xff\xff\xff"
_EOS = _CONTINUATION + bytes(4)


def ipc_to_table(buf: bytes | memoryview) -> pa.Table | None:
    """The table of :func:`table_to_ipc`; None for an empty payload.

    A single-row statement's record is decoded for every transaction a walsender streams,
    and opening an IPC stream (parsing the schema again each time) costs about as much as
    everything else in decoding it. So the common shape — a schema seen before and one
    record batch — is read with the schema from a cache and the batch message alone;
    anything else (several batches, dictionaries, none) goes through the stream reader."""
    if len(buf) == 0:
        return None
    pb = pa.py_buffer(buf)
    if len(buf) >= 8 and buf[:4] == _CONTINUATION:
        head = 8 + int.from_bytes(buf[4:8], "little")
        key = bytes(buf[:head])
        schema = _SCHEMAS.get(key)
        if schema is None:
            schema = pa.ipc.read_schema(pb)
            if len(_SCHEMAS) >= _SCHEMAS_MAX:
                _SCHEMAS.clear()
            _SCHEMAS[key] = schema
        if len(buf) > head + 8:
            msg = pa.ipc.read_message(pb.slice(head))
            if msg.type == "record batch":
                body = msg.body
                end = head + 8 + msg.metadata.size + (body.size if body is not None else 0)
                if buf[end:] == _EOS:
                    return pa.Table.from_batches([pa.ipc.read_record_batch(msg, schema)], schema)
    return pa.ipc.open_stream(pb).read_all()


@dataclass(frozen=True, slots=True)
class Record:
    KIND: ClassVar[Kind]

    def encode_payload(self) -> bytes:
        raise NotImplementedError

    @classmethod
    def decode_payload(cls, r: _Reader) -> Record:
        raise NotImplementedError

    @property
    def xid(self) -> int:  # overridden by the transactional kinds
        return 0


@dataclass(frozen=True, slots=True)
class Change(Record):
    """Rows inserted, updated or deleted by one statement of a (sub)transaction.

    ``new`` holds the new row versions (insert, update), ``old`` the versions they replace
    (update, delete) — always the full old row with its ``_rid``: the decoder cuts it down to
    the replica identity, and row filters need the old values anyway.
    """

    KIND: ClassVar[Kind] = Kind.CHANGE
    xid_: int
    subxid: int
    relid: int
    op: str  # 'I', 'U', 'D'
    new: pa.Table | None = None
    old: pa.Table | None = None

    @property
    def xid(self) -> int:
        return self.xid_

    @property
    def nrows(self) -> int:
        t = self.new if self.new is not None else self.old
        return 0 if t is None else t.num_rows

    def encode_payload(self) -> bytes:
        return b"".join(
            (
                _Q.pack(self.xid_),
                _I.pack(self.subxid),
                _I.pack(self.relid),
                self.op.encode(),
                _pack_bytes(table_to_ipc(self.new)),
                _pack_bytes(table_to_ipc(self.old)),
            )
        )

    @classmethod
    def decode_payload(cls, r: _Reader) -> Change:
        # One unpack for the fixed head: decoded once per change streamed.
        buf, pos = r.buf, r.pos
        if pos + _CHANGE_HEAD.size + 4 > len(buf):
            raise RecordFormatError("record payload too short")
        xid, subxid, relid, op, n = _CHANGE_HEAD.unpack_from(buf, pos)
        r.pos = pos + _CHANGE_HEAD.size
        new = ipc_to_table(r.take(n))
        old = ipc_to_table(r.view())
        return cls(xid, subxid, relid, chr(op), new, old)


@dataclass(frozen=True, slots=True)
class Changeset(Record):
    """A bulk change whose rows live in Parquet files beside the log (written and fsynced
    before this record), in the same layout as :class:`Change`'s tables."""

    KIND: ClassVar[Kind] = Kind.CHANGESET
    xid_: int
    subxid: int
    relid: int
    op: str
    new_path: str = ""
    old_path: str = ""
    rows: int = 0

    @property
    def xid(self) -> int:
        return self.xid_

    def encode_payload(self) -> bytes:
        return b"".join(
            (
                _Q.pack(self.xid_),
                _I.pack(self.subxid),
                _I.pack(self.relid),
                self.op.encode(),
                _pack_str(self.new_path),
                _pack_str(self.old_path),
                _Q.pack(self.rows),
            )
        )

    @classmethod
    def decode_payload(cls, r: _Reader) -> Changeset:
        return cls(r.u64(), r.u32(), r.u32(), chr(r.u8()), r.str_(), r.str_(), r.u64())


@dataclass(frozen=True, slots=True)
class Truncate(Record):
    KIND: ClassVar[Kind] = Kind.TRUNCATE
    xid_: int
    subxid: int
    relids: tuple[int, ...]
    cascade: bool = False
    restart_identity: bool = False

    @property
    def xid(self) -> int:
        return self.xid_

    def encode_payload(self) -> bytes:
        flags = int(self.cascade) | (int(self.restart_identity) << 1)
        return b"".join(
            (
                _Q.pack(self.xid_),
                _I.pack(self.subxid),
                bytes([flags]),
                _I.pack(len(self.relids)),
                *(_I.pack(r) for r in self.relids),
            )
        )

    @classmethod
    def decode_payload(cls, r: _Reader) -> Truncate:
        xid, subxid, flags, n = r.u64(), r.u32(), r.u8(), r.u32()
        relids = tuple(r.u32() for _ in range(n))
        return cls(xid, subxid, relids, bool(flags & 1), bool(flags & 2))


@dataclass(frozen=True, slots=True)
class Commit(Record):
    """Makes a transaction visible at ``csn``. Commit records may reach the log out of CSN
    order; visibility is decided by CSN, streaming order by this record's LSN."""

    KIND: ClassVar[Kind] = Kind.COMMIT
    xid_: int
    csn: int
    commit_ts: int  # microseconds since 2000-01-01 UTC, as PostgreSQL's TimestampTz
    origin: str = ""
    origin_lsn: int = 0

    @property
    def xid(self) -> int:
        return self.xid_

    def encode_payload(self) -> bytes:
        return b"".join(
            (
                _Q.pack(self.xid_),
                _Q.pack(self.csn),
                struct.pack("<q", self.commit_ts),
                _pack_str(self.origin),
                _Q.pack(self.origin_lsn),
            )
        )

    @classmethod
    def decode_payload(cls, r: _Reader) -> Commit:
        buf, pos = r.buf, r.pos
        if pos + _COMMIT_HEAD.size > len(buf):
            raise RecordFormatError("record payload too short")
        xid, csn, ts, n = _COMMIT_HEAD.unpack_from(buf, pos)
        r.pos = pos + _COMMIT_HEAD.size
        origin = bytes(r.take(n)).decode() if n else ""
        return cls(xid, csn, ts, origin, r.u64())


@dataclass(frozen=True, slots=True)
class Abort(Record):
    """A transaction rolled back; ``abort_ts`` (PostgreSQL epoch µs; 0 in records written
    before it was kept) is what protocol 4's Stream Abort carries."""

    KIND: ClassVar[Kind] = Kind.ABORT
    xid_: int
    abort_ts: int = 0

    @property
    def xid(self) -> int:
        return self.xid_

    def encode_payload(self) -> bytes:
        return _Q.pack(self.xid_) + _q.pack(self.abort_ts)

    @classmethod
    def decode_payload(cls, r: _Reader) -> Abort:
        xid = r.u64()
        return cls(xid, r.i64() if r.pos + 8 <= len(r.buf) else 0)


@dataclass(frozen=True, slots=True)
class SubAbort(Record):
    """ROLLBACK TO SAVEPOINT: the changes of these subtransactions are void."""

    KIND: ClassVar[Kind] = Kind.SUBABORT
    xid_: int
    subxids: tuple[int, ...]
    #: When (PostgreSQL epoch µs; 0 in records written before it was kept).
    abort_ts: int = 0

    @property
    def xid(self) -> int:
        return self.xid_

    def encode_payload(self) -> bytes:
        return (
            _Q.pack(self.xid_)
            + _I.pack(len(self.subxids))
            + b"".join(_I.pack(s) for s in self.subxids)
            + _q.pack(self.abort_ts)
        )

    @classmethod
    def decode_payload(cls, r: _Reader) -> SubAbort:
        xid, n = r.u64(), r.u32()
        subxids = tuple(r.u32() for _ in range(n))
        return cls(xid, subxids, r.i64() if r.pos + 8 <= len(r.buf) else 0)


@dataclass(frozen=True, slots=True)
class XactOrigin(Record):
    """The replication origin a transaction's session had at the transaction's first
    write, logged just before it. PostgreSQL's WAL records each carry their origin, so its
    decoding knows a transaction's origin before the commit: a block of one streamed in
    progress starts with an Origin message, and ``origin 'none'`` / ``only-local`` filter
    its changes as they are decoded (FilterByOrigin), so it is never streamed."""

    KIND: ClassVar[Kind] = Kind.XACT_ORIGIN
    xid_: int
    origin: str

    @property
    def xid(self) -> int:
        return self.xid_

    def encode_payload(self) -> bytes:
        return _Q.pack(self.xid_) + _pack_str(self.origin)

    @classmethod
    def decode_payload(cls, r: _Reader) -> XactOrigin:
        xid = r.u64()
        n = r.u32()
        return cls(xid, bytes(r.take(n)).decode())


@dataclass(frozen=True, slots=True)
class Prepare(Record):
    KIND: ClassVar[Kind] = Kind.PREPARE
    xid_: int
    gid: str
    prepare_ts: int

    @property
    def xid(self) -> int:
        return self.xid_

    def encode_payload(self) -> bytes:
        return _Q.pack(self.xid_) + _pack_str(self.gid) + struct.pack("<q", self.prepare_ts)

    @classmethod
    def decode_payload(cls, r: _Reader) -> Prepare:
        return cls(r.u64(), r.str_(), r.i64())


@dataclass(frozen=True, slots=True)
class CommitPrepared(Record):
    KIND: ClassVar[Kind] = Kind.COMMIT_PREPARED
    xid_: int
    gid: str
    csn: int
    commit_ts: int

    @property
    def xid(self) -> int:
        return self.xid_

    def encode_payload(self) -> bytes:
        return b"".join(
            (
                _Q.pack(self.xid_),
                _pack_str(self.gid),
                _Q.pack(self.csn),
                struct.pack("<q", self.commit_ts),
            )
        )

    @classmethod
    def decode_payload(cls, r: _Reader) -> CommitPrepared:
        return cls(r.u64(), r.str_(), r.u64(), r.i64())


@dataclass(frozen=True, slots=True)
class RollbackPrepared(Record):
    KIND: ClassVar[Kind] = Kind.ROLLBACK_PREPARED
    xid_: int
    gid: str
    rollback_ts: int

    @property
    def xid(self) -> int:
        return self.xid_

    def encode_payload(self) -> bytes:
        return _Q.pack(self.xid_) + _pack_str(self.gid) + struct.pack("<q", self.rollback_ts)

    @classmethod
    def decode_payload(cls, r: _Reader) -> RollbackPrepared:
        return cls(r.u64(), r.str_(), r.i64())


@dataclass(frozen=True, slots=True)
class CatalogChange(Record):
    """DDL of a transaction, as catalog ops; applied to the catalog at the commit's CSN."""

    KIND: ClassVar[Kind] = Kind.CATALOG
    xid_: int
    subxid: int
    ops: tuple[CatalogOp, ...] = field(default_factory=tuple)

    @property
    def xid(self) -> int:
        return self.xid_

    def encode_payload(self) -> bytes:
        return _Q.pack(self.xid_) + _I.pack(self.subxid) + _pack_str(json.dumps(list(self.ops)))

    @classmethod
    def decode_payload(cls, r: _Reader) -> CatalogChange:
        return cls(r.u64(), r.u32(), tuple(json.loads(r.str_())))


@dataclass(frozen=True, slots=True)
class Message(Record):
    """``pg_logical_emit_message``: transactional ones follow their transaction, the others
    are decoded where they stand (xid 0 if emitted outside a transaction)."""

    KIND: ClassVar[Kind] = Kind.MESSAGE
    xid_: int
    subxid: int
    transactional: bool
    prefix: str
    payload: bytes

    @property
    def xid(self) -> int:
        return self.xid_

    def encode_payload(self) -> bytes:
        return b"".join(
            (
                _Q.pack(self.xid_),
                _I.pack(self.subxid),
                bytes([int(self.transactional)]),
                _pack_str(self.prefix),
                _pack_bytes(self.payload),
            )
        )

    @classmethod
    def decode_payload(cls, r: _Reader) -> Message:
        return cls(r.u64(), r.u32(), bool(r.u8()), r.str_(), r.bytes_())


@dataclass(frozen=True, slots=True)
class Frontier(Record):
    """Periodic state, PostgreSQL's ``xl_running_xacts`` for this log: the CSN frontier and
    counters, so a reader starting here knows what is committed and what is in flight."""

    KIND: ClassVar[Kind] = Kind.FRONTIER
    frontier_csn: int
    next_xid: int
    next_rid: int
    running_xids: tuple[int, ...] = ()
    ts: int = 0

    def encode_payload(self) -> bytes:
        return b"".join(
            (
                _Q.pack(self.frontier_csn),
                _Q.pack(self.next_xid),
                _Q.pack(self.next_rid),
                struct.pack("<q", self.ts),
                _I.pack(len(self.running_xids)),
                *(_Q.pack(x) for x in self.running_xids),
            )
        )

    @classmethod
    def decode_payload(cls, r: _Reader) -> Frontier:
        csn, nx, nr, ts, n = r.u64(), r.u64(), r.u64(), r.i64(), r.u32()
        return cls(csn, nx, nr, tuple(r.u64() for _ in range(n)), ts)


RECORD_CLASSES: dict[int, type[Record]] = {
    cls.KIND: cls
    for cls in (
        Change,
        Changeset,
        Truncate,
        Commit,
        Abort,
        SubAbort,
        Prepare,
        CommitPrepared,
        RollbackPrepared,
        CatalogChange,
        Message,
        Frontier,
        XactOrigin,
    )
}


def decode_record(kind: int, payload: bytes | memoryview) -> Record:
    cls = RECORD_CLASSES.get(kind)
    if cls is None:
        raise RecordFormatError(f"unknown record kind {kind}")
    r = _Reader(payload)
    rec = cls.decode_payload(r)
    if r.pos != len(r.buf):
        raise RecordFormatError(f"{cls.__name__} payload has {len(r.buf) - r.pos} trailing bytes")
    return rec


def describe(rec: Record) -> dict[str, Any]:
    """A small dict for logs and tools (no row data)."""
    d: dict[str, Any] = {"kind": rec.KIND.name}
    for name in getattr(rec, "__dataclass_fields__", {}):
        if name == "KIND":
            continue
        v = getattr(rec, name)
        if isinstance(v, pa.Table):
            v = f"<{v.num_rows} rows>"
        elif isinstance(v, bytes):
            v = v[:32]
        d[name.rstrip("_")] = v
    return d
