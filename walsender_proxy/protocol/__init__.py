"""Sans-IO PostgreSQL wire codec: bytes in and out, typed messages in between.

Nothing in this package touches a socket or an event loop, so the same code serves the
asyncio server, the test suite and offline tools, and every byte path can be tested
without a network.  Layout:

* ``buffer``      — field reader/writer and :class:`ProtocolViolation`
* ``messages``    — one dataclass per frontend/backend message, and the registries
* ``framing``     — :class:`FrontendParser` (server side) and :class:`BackendParser`
* ``replication`` — XLogData, keepalive, standby status and feedback inside CopyData
"""

from walsender_proxy.protocol.buffer import ProtocolViolation, Reader, Writer
from walsender_proxy.protocol.framing import (
    PQ_LARGE_MESSAGE_LIMIT,
    PQ_SMALL_MESSAGE_LIMIT,
    BackendParser,
    FrontendParser,
    ParserState,
)
from walsender_proxy.protocol.messages import *  # noqa: F403
from walsender_proxy.protocol.messages import __all__ as _messages_all
from walsender_proxy.protocol.replication import (
    BACKEND_REPLICATION_MESSAGES,
    FRONTEND_REPLICATION_MESSAGES,
    PG_EPOCH,
    HotStandbyFeedback,
    PrimaryKeepalive,
    ReplicationMessage,
    StandbyStatusUpdate,
    XLogData,
    datetime_to_pg,
    decode_replication_message,
    encode_keepalive_message,
    encode_xlogdata_message,
    pg_now,
    pg_to_datetime,
    pg_to_unix,
    unix_to_pg,
)

__all__ = [
    "BACKEND_REPLICATION_MESSAGES",
    "FRONTEND_REPLICATION_MESSAGES",
    "PG_EPOCH",
    "PQ_LARGE_MESSAGE_LIMIT",
    "PQ_SMALL_MESSAGE_LIMIT",
    "BackendParser",
    "FrontendParser",
    "HotStandbyFeedback",
    "ParserState",
    "PrimaryKeepalive",
    "ProtocolViolation",
    "Reader",
    "ReplicationMessage",
    "StandbyStatusUpdate",
    "Writer",
    "XLogData",
    "datetime_to_pg",
    "decode_replication_message",
    "encode_keepalive_message",
    "encode_xlogdata_message",
    "pg_now",
    "pg_to_datetime",
    "pg_to_unix",
    "unix_to_pg",
    *_messages_all,
]
