"""What a walsender gets from the server, and what it needs of its connection.

The walsender runs replication commands on a session the server made; it needs the lake,
the slot store, exported snapshots, where walsender processes are, and a few of the
server's settings — :class:`ReplicationServices`, built by the server — and of the session
only what :class:`ReplicationSession` lists. So ``replication`` never imports ``server``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from decoding.errors import PgError
from walsender_proxy.backend.outcomes import Rows
from walsender_proxy.backend.snapshots import SnapshotRegistry
from walsender_proxy.lake import Lake
from walsender_proxy.protocol import messages as m
from walsender_proxy.protocol.machine import ConnectionMachine
from walsender_proxy.replication.sender_pool import SenderPool
from walsender_proxy.replication.slots import SlotStore

if TYPE_CHECKING:
    from walsender_proxy.replication.stream import StreamState
    from walsender_proxy.sql.services import SessionState


class ReplicationSession(Protocol):
    """The session a walsender serves: its identity, its SQL side (replication connections
    run SQL too, and CREATE_REPLICATION_SLOT … USE_SNAPSHOT sets its transaction's
    snapshot), and its connection's I/O."""

    pid: int
    database: str
    ssl: bool
    executor: SessionState | None
    writer: asyncio.StreamWriter
    machine: ConnectionMachine

    def send(self, msg: m.BackendMessage) -> None: ...

    def send_error(self, e: PgError) -> None: ...

    def send_rows(self, rows: Rows, *, describe: bool, formats: list[int]) -> Any: ...

    async def flush(self) -> None: ...

    def take_unread(self) -> bytes: ...


class WalSenderView(Protocol):
    """A replication connection as pg_stat_replication shows it."""

    #: The last stream's state (its positions stay shown after it ended).
    state: StreamState | None
    streaming: bool

    def reloaded(self, server: Mapping[str, str]) -> None:
        """The server reloaded its settings: a running stream applies them."""
        ...


@dataclass(slots=True)
class ReplicationServices:
    lake: Lake
    slots: SlotStore
    snapshots: SnapshotRegistry
    #: ``server_version_num``: the pgoutput protocol versions a client may ask for.
    version_num: int
    max_message_length: int
    #: The walsender processes (None: streams run in the server process).
    sender_pool: Callable[[], SenderPool | None]
    #: The replication connections by pid (pg_stat_replication lists them).
    walsenders: dict[int, WalSenderView] = field(default_factory=dict)
