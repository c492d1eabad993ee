"""The streaming-replication sub-protocol: what travels inside CopyData after CopyBoth.

Each message's ``encode()`` returns the CopyData *payload* (starting with its one-letter
subtype) and ``decode(body)`` takes the bytes after that letter, mirroring the message
classes one level down.  ``encode_message()`` returns the complete 'd' frame; for
XLogData and keepalives there are module functions that build that frame with a single
``struct.pack`` because they run once per decoded change.

Timestamps are PostgreSQL's TimestampTz: signed microseconds since 2000-01-01 00:00 UTC.
LSNs are unsigned 64-bit integers.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import ClassVar, Self

from walsender_proxy.protocol.buffer import ProtocolViolation
from walsender_proxy.protocol.messages import CopyData, encode_copy_data

__all__ = [
    "BACKEND_REPLICATION_MESSAGES",
    "FRONTEND_REPLICATION_MESSAGES",
    "PG_EPOCH",
    "HotStandbyFeedback",
    "PrimaryKeepalive",
    "ReplicationMessage",
    "StandbyStatusUpdate",
    "XLogData",
    "datetime_to_pg",
    "decode_replication_message",
    "encode_keepalive_message",
    "encode_xlogdata_message",
    "pg_now",
    "pg_to_datetime",
    "pg_to_unix",
    "unix_to_pg",
]

# A copy of decoding.pgtime's epoch constants, on purpose: the wire codec may import only
# the standard library (the import-linter contract "The wire codec knows no I/O and no other
# layer" forbids ``decoding``), so it cannot import the one definition. A unit test
# (tests/unit/test_pg_epoch.py) asserts that the copy equals decoding.pgtime's values.
PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
# Seconds between the Unix epoch and the PostgreSQL epoch.
_PG_EPOCH_UNIX = 946_684_800
_PG_EPOCH_UNIX_US = _PG_EPOCH_UNIX * 1_000_000
_ONE_US = timedelta(microseconds=1)


def pg_now() -> int:
    """The current time as a PostgreSQL timestamp, exact to the microsecond."""
    return time.time_ns() // 1000 - _PG_EPOCH_UNIX_US


def unix_to_pg(seconds: float) -> int:
    return round(seconds * 1_000_000) - _PG_EPOCH_UNIX_US


def pg_to_unix(timestamp: int) -> float:
    return (timestamp + _PG_EPOCH_UNIX_US) / 1_000_000


def datetime_to_pg(value: datetime) -> int:
    """Aware datetime to PostgreSQL timestamp; naive ones are refused, not guessed at."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("a PostgreSQL timestamptz needs an aware datetime")
    return (value - PG_EPOCH) // _ONE_US


def pg_to_datetime(timestamp: int) -> datetime:
    """PostgreSQL timestamp to an aware UTC datetime.

    Raises ValueError for values datetime cannot hold, which includes the ±infinity
    sentinels (INT64 min/max): callers must decide what infinity means to them.
    """
    try:
        return PG_EPOCH + timedelta(microseconds=timestamp)
    except OverflowError as exc:
        raise ValueError(f"timestamp {timestamp} is outside the datetime range") from exc


_XLOG_HDR = struct.Struct("!QQq")  # dataStart, walEnd, sendTime
_XLOG_FRAME_HDR = struct.Struct("!cicQQq")  # 'd', length, 'w', header
_KEEPALIVE = struct.Struct("!Qq?")
_KEEPALIVE_FRAME = struct.Struct("!cicQqB")
_STATUS = struct.Struct("!QQQqB")
_FEEDBACK = struct.Struct("!qIIII")


class ReplicationMessage:
    __slots__ = ()
    subtype: ClassVar[bytes]

    def encode(self) -> bytes:
        """The CopyData payload: subtype letter and body."""
        raise NotImplementedError

    @classmethod
    def decode(cls, body: bytes) -> Self:
        """From the bytes after the subtype letter."""
        raise NotImplementedError

    def to_copy_data(self) -> CopyData:
        return CopyData(self.encode())

    def encode_message(self) -> bytes:
        """The complete CopyData frame, ready for the transport."""
        return encode_copy_data(self.encode())


def _short(kind: str) -> ProtocolViolation:
    return ProtocolViolation(f"invalid {kind} message: insufficient data")


@dataclass(frozen=True, slots=True)
class XLogData(ReplicationMessage):
    """One chunk of the WAL (or, for logical slots, one output-plugin message)."""

    subtype: ClassVar[bytes] = b"w"
    data_start: int
    wal_end: int
    send_time: int
    data: bytes

    def encode(self) -> bytes:
        return b"w" + _XLOG_HDR.pack(self.data_start, self.wal_end, self.send_time) + self.data

    def encode_message(self) -> bytes:
        return encode_xlogdata_message(self.data_start, self.wal_end, self.send_time, self.data)

    @classmethod
    def decode(cls, body: bytes) -> Self:
        # walreceiver.c refuses a header shorter than 24 bytes.
        if len(body) < _XLOG_HDR.size:
            raise ProtocolViolation("invalid WAL message received from primary")
        start, end, send_time = _XLOG_HDR.unpack_from(body, 0)
        return cls(start, end, send_time, body[_XLOG_HDR.size :])


def encode_xlogdata_message(data_start: int, wal_end: int, send_time: int, data: bytes) -> bytes:
    """XLogData as a complete CopyData frame with one pack: the walsender's per-change path."""
    return _XLOG_FRAME_HDR.pack(b"d", len(data) + 29, b"w", data_start, wal_end, send_time) + data


@dataclass(frozen=True, slots=True)
class PrimaryKeepalive(ReplicationMessage):
    subtype: ClassVar[bytes] = b"k"
    wal_end: int
    send_time: int
    reply_requested: bool = False

    def encode(self) -> bytes:
        return b"k" + _KEEPALIVE.pack(self.wal_end, self.send_time, self.reply_requested)

    def encode_message(self) -> bytes:
        return encode_keepalive_message(self.wal_end, self.send_time, self.reply_requested)

    @classmethod
    def decode(cls, body: bytes) -> Self:
        # walreceiver.c insists on the exact length here.
        if len(body) != _KEEPALIVE.size:
            raise ProtocolViolation("invalid keepalive message received from primary")
        wal_end, send_time, reply = _KEEPALIVE.unpack(body)
        return cls(wal_end, send_time, reply)


def encode_keepalive_message(wal_end: int, send_time: int, reply_requested: bool = False) -> bytes:
    return _KEEPALIVE_FRAME.pack(b"d", 22, b"k", wal_end, send_time, 1 if reply_requested else 0)


@dataclass(frozen=True, slots=True)
class StandbyStatusUpdate(ReplicationMessage):
    """The client's 'r': how far it has written, flushed and applied.

    Decoding ignores bytes after the last field, as the walsender does; only the fields
    themselves must be present.
    """

    subtype: ClassVar[bytes] = b"r"
    write_lsn: int
    flush_lsn: int
    apply_lsn: int
    send_time: int
    reply_requested: bool = False

    def encode(self) -> bytes:
        return b"r" + _STATUS.pack(
            self.write_lsn,
            self.flush_lsn,
            self.apply_lsn,
            self.send_time,
            1 if self.reply_requested else 0,
        )

    @classmethod
    def decode(cls, body: bytes) -> Self:
        if len(body) < _STATUS.size:
            raise ProtocolViolation("insufficient data left in message")
        write, flush, apply, send_time, reply = _STATUS.unpack_from(body, 0)
        return cls(write, flush, apply, send_time, reply != 0)


@dataclass(frozen=True, slots=True)
class HotStandbyFeedback(ReplicationMessage):
    """The client's 'h'; a logical subscriber never sends it, physical standbys may."""

    subtype: ClassVar[bytes] = b"h"
    send_time: int
    xmin: int
    xmin_epoch: int
    catalog_xmin: int
    catalog_xmin_epoch: int

    def encode(self) -> bytes:
        return b"h" + _FEEDBACK.pack(
            self.send_time, self.xmin, self.xmin_epoch, self.catalog_xmin, self.catalog_xmin_epoch
        )

    @classmethod
    def decode(cls, body: bytes) -> Self:
        if len(body) < _FEEDBACK.size:
            raise ProtocolViolation("insufficient data left in message")
        return cls(*_FEEDBACK.unpack_from(body, 0))


BACKEND_REPLICATION_MESSAGES: Mapping[bytes, type[ReplicationMessage]] = MappingProxyType(
    {b"w": XLogData, b"k": PrimaryKeepalive}
)
FRONTEND_REPLICATION_MESSAGES: Mapping[bytes, type[ReplicationMessage]] = MappingProxyType(
    {b"r": StandbyStatusUpdate, b"h": HotStandbyFeedback}
)
_ALL = {**BACKEND_REPLICATION_MESSAGES, **FRONTEND_REPLICATION_MESSAGES}


def decode_replication_message(
    data: bytes, registry: Mapping[bytes, type[ReplicationMessage]] | None = None
) -> ReplicationMessage:
    """Decode a CopyData payload of the replication stream.

    Pass FRONTEND_REPLICATION_MESSAGES on the server so a client cannot send server-only
    subtypes; the error text is the walsender's.
    """
    if not data:
        raise ProtocolViolation("insufficient data left in message")
    subtype = data[:1]
    cls = (_ALL if registry is None else registry).get(subtype)
    if cls is None:
        shown = subtype.decode("latin-1")
        raise ProtocolViolation(f'unexpected message type "{shown}"')
    return cls.decode(data[1:])
