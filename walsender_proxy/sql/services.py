"""What a SQL session is to the machinery below its executor, and what it gets from the
server: narrow services, not the server itself.

The executor (:mod:`walsender_proxy.sql.executor`) owns a session's state and dispatches
its statements; the engine that runs them, the catalog emulation and the SQL functions
read and set a few parts of that state — :class:`SessionState` names them — so none of them
imports the executor.

The executor, the SQL functions and the catalog emulation need a handful of things the
server owns — the lake, the roles, exported snapshots, advisory locks, statement timers,
replication slots, the table of running backends and a few facts about the server. They
receive exactly these, as :class:`SqlServices`; the server builds it (``server/context.py``)
and implements the two protocols below with its own objects. So ``sql`` never imports
``server`` or ``replication``, and a session needs nothing a process of its own could not be
given: every service here is a narrow interface a future out-of-process backend would
reach through a small channel instead.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from walsender_proxy.backend.outcomes import Notice
from walsender_proxy.backend.roles import RoleStore
from walsender_proxy.backend.settings import Settings
from walsender_proxy.backend.snapshots import SnapshotRegistry
from walsender_proxy.backend.system_settings import SystemSettings
from walsender_proxy.lake import Lake, Transaction
from walsender_proxy.sql.advisory import AdvisoryLocks
from walsender_proxy.sql.notifications import NotificationHub, PendingNotifies
from walsender_proxy.sql.timeouts import Deadlines

if TYPE_CHECKING:
    from walsender_proxy.lake.lake import ConsistentPoint
    from walsender_proxy.sql.privileges import Who
    from walsender_proxy.sql.sequences import SessionSequences


class SessionState(Protocol):
    # who and where
    #: the current user (SET ROLE changes it) and the session user
    user: str
    session_user: str
    database: str
    backend_pid: int
    settings: Settings
    lake: Lake
    services: SqlServices
    client_addr: str | None
    client_port: int | None
    server_addr: str | None
    backend_start: datetime.datetime
    #: (version, cipher, bits) of a TLS connection, as pg_stat_ssl shows them; None: no TLS
    ssl_info: tuple[str, str, int] | None
    # the transaction
    tx: Transaction | None
    explicit: bool
    #: The statement is one of several in one simple Query (an implicit transaction block).
    implicit_block: bool
    #: the transaction took an advisory lock of its own (released at its end)
    advisory_xact: bool
    # the running statement
    cancelled: threading.Event
    notices: list[Notice]
    query: str
    query_start: float | None
    #: the text an error's STATEMENT line in the log shows
    debug_query: str | None
    xact_start_us: int
    #: nextval's cache, currval and lastval (sql/sequences.py)
    sequences: SessionSequences
    #: the transaction's LISTEN, UNLISTEN and NOTIFY (sql/notifications.py)
    notifies: PendingNotifies

    @property
    def temp_schema(self) -> str:
        """The session's schema of temporary tables."""
        ...
    running: bool

    @property
    def status(self) -> str:
        """ReadyForQuery's transaction status: I, T or E."""
        ...

    def search_path(self) -> list[str]: ...

    def who(self, role: str | None = None) -> Who:
        """The role privilege checks are made for (the current user, or ``role``)."""
        ...

    def fail(self) -> None:
        """The statement failed: the transaction aborts (see Executor.fail)."""
        ...


class SlotState(Protocol):
    """What SQL reads of a replication slot."""

    @property
    def name(self) -> str: ...

    @property
    def confirmed_flush(self) -> int: ...


class SlotService(Protocol):
    """The replication slots, as the SQL slot functions use them (the walsender's
    ``SlotStore`` is one)."""

    def create_logical(
        self,
        name: str,
        plugin: str,
        database: str,
        *,
        owner: int,
        temporary: bool = False,
        two_phase: bool = False,
        failover: bool = False,
    ) -> tuple[SlotState, ConsistentPoint]: ...

    def advance_to(self, name: str, upto: int, pid: int) -> SlotState: ...

    def copy_logical(self, src: str, dst: str, pid: int, *, temporary: bool | None = None, plugin: str | None = None) -> SlotState: ...

    def changes(
        self, name: str, pid: int, database: str, options: Sequence[tuple[str, str | None]], *,
        upto_lsn: int | None, upto_nchanges: int | None, confirm: bool, function: str,
        version_num: int, search_path: Sequence[str] = (), work_mem: int | None = None,
    ) -> list[tuple[int, int, bytes]]: ...

    def drop(self, name: str, pid: int) -> None: ...

    def reset_stats(self, name: str | None) -> None: ...


class Backends(Protocol):
    """The server's table of running backends: for pg_stat_activity, and for functions
    that act on the calling session (DuckDB UDFs get its pid, not the session)."""

    def sessions(self) -> list[tuple[int, SessionState]]: ...

    def executor(self, pid: int) -> SessionState | None: ...

    def is_walsender(self, pid: int) -> bool: ...


@dataclass(frozen=True, slots=True)
class ServerFacts:
    """What the server is, as SQL shows it: its version and port, its configured settings
    (``pg_settings`` of the server's own values), and the rows of the views it owns
    (``pg_replication_slots``, ``pg_stat_replication``, ``pg_locks``), made when read."""

    version: str
    port: int
    parameters: Callable[[], Mapping[str, str]]
    catalog_rows: Mapping[str, Callable[[], list[dict[str, Any]]]]
    #: postgresql.auto.conf: ALTER SYSTEM writes it; None where no server runs (tests)
    system: SystemSettings | None = None
    #: pg_reload_conf(): the server reads its settings again
    reload: Callable[[], bool] | None = None
    #: pg_settings.source of each of ``parameters`` (None: all ``configuration file``)
    sources: Callable[[], Mapping[str, str]] | None = None


@dataclass(slots=True)
class SqlServices:
    lake: Lake
    roles: RoleStore
    snapshots: SnapshotRegistry
    advisory: AdvisoryLocks
    deadlines: Deadlines
    slots: SlotService
    backends: Backends
    server: ServerFacts
    #: The catalog emulation's view of the server (roles, settings), kept while it holds.
    catalog_cache: dict[str, Any] = field(default_factory=dict)
    #: LISTEN/NOTIFY: who listens on what, and each backend's notifications to send.
    notifications: NotificationHub = field(default_factory=NotificationHub)
