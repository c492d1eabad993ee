"""What all sessions of one server share: the lake, roles, authentication rules, server
settings, exported snapshots and the table of running backends (for CancelRequest)."""

from __future__ import annotations

import itertools
import secrets
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from decoding.lsn import format_lsn
from walsender_proxy.backend import logs
from walsender_proxy.backend.roles import RoleStore
from walsender_proxy.backend.settings import PG_SETTINGS
from walsender_proxy.backend.snapshots import SnapshotRegistry
from walsender_proxy.lake import Lake
from walsender_proxy.replication.sender_pool import SenderPool
from walsender_proxy.replication.services import ReplicationServices
from walsender_proxy.replication.slots import SlotStore
from walsender_proxy.server import system_config
from walsender_proxy.server.hba import DEFAULT_RULES, HbaRule
from walsender_proxy.server.tls import certificate_hash
from walsender_proxy.sql import ddl_sql, functions
from walsender_proxy.sql.advisory import AdvisoryLocks
from walsender_proxy.sql.services import ServerFacts, SqlServices
from walsender_proxy.sql.timeouts import Deadlines

if TYPE_CHECKING:
    import ssl

    from walsender_proxy.sql.executor import Executor


@dataclass(slots=True)
class ServerSettings:
    port: int = 5432
    listen_addresses: str = "127.0.0.1"
    max_connections: int = 100
    #: Largest frontend message accepted (PostgreSQL: 1 GB); a larger one is 08P01.
    max_message_length: int = 1 << 30
    databases: tuple[str, ...] = ("postgres",)
    server_version: str = "15.18"
    #: Every failed authentication is answered after this same delay (seconds).
    auth_failure_delay: float = 0.5
    authentication_timeout: float = 60.0
    max_wal_senders: int = 10
    #: START_REPLICATION streams in a walsender process of its own, forked from a template
    #: process started with the server (off: streams run in the server process, under its
    #: GIL).
    walsender_processes: bool = True
    max_replication_slots: int = 10
    #: A walsender whose client says nothing for this long is ended (seconds; 0: never).
    wal_sender_timeout: float = 60.0
    hba: tuple[HbaRule, ...] = DEFAULT_RULES
    ssl_cert_file: str | None = None
    ssl_key_file: str | None = None
    #: PostgreSQL's logging settings: the prefix of every log line, and the defaults of
    #: what a session logs (a superuser may SET the last two).
    log_line_prefix: str = "%m [%p] "
    log_statement: str = "none"
    log_min_error_statement: str = "error"
    log_connections: bool = False
    log_disconnections: bool = False
    #: PostgreSQL 15's TLS settings and defaults, applied to the TLS context (server/tls.py).
    ssl_min_protocol_version: str = "TLSv1.2"
    ssl_max_protocol_version: str = ""
    ssl_ciphers: str = "HIGH:MEDIUM:+3DES:!aNULL"
    #: Session settings the configuration gives (by PostgreSQL name, pg_settings' text).
    extra: dict[str, str] = field(default_factory=dict)
    #: The fields given on the command line: postgresql.auto.conf does not override them.
    command_line: frozenset[str] = frozenset()
    #: The fields the configuration file names (pg_settings.source ``configuration file``).
    configured: frozenset[str] = frozenset()

    def server_version_num(self) -> str:
        major, _, minor = self.server_version.partition(".")
        return f"{int(major) * 10000 + int(minor or 0)}"


class BackendTable:
    """The running backends: pid and secret key for CancelRequest, each one's executor once
    it has one, and which are walsenders. What SQL reads of it is ``sql.services.Backends``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._backends: dict[int, tuple[int, Executor | None]] = {}
        self._pids = itertools.count(10_000)
        self._leaving: set[int] = set()
        self.walsenders: set[int] = set()

    def register(self) -> tuple[int, int]:
        """A new backend's (pid, secret key), as BackendKeyData announces them."""
        with self._lock:
            pid = next(self._pids)
            key = secrets.randbits(32)
            self._backends[pid] = (key, None)
            return pid, key

    def attach(self, pid: int, executor: Executor) -> None:
        with self._lock:
            key, _ = self._backends[pid]
            self._backends[pid] = (key, executor)

    def unregister(self, pid: int) -> None:
        with self._lock:
            self._backends.pop(pid, None)
            self._leaving.discard(pid)
        self.walsenders.discard(pid)

    def cancel(self, pid: int, key: int) -> bool:
        """CancelRequest: cancels only if the key matches that backend's (else silently
        nothing, as PostgreSQL does)."""
        with self._lock:
            got = self._backends.get(pid)
        if got is None or got[0] != key or got[1] is None:
            return False
        got[1].cancel()
        return True

    def count(self) -> int:
        with self._lock:
            return len(self._backends)

    def leaving(self, pid: int) -> None:
        """The session is ending: it no longer counts against its role's CONNECTION LIMIT."""
        with self._lock:
            self._leaving.add(pid)

    def count_of(self, user: str) -> int:
        """Sessions its login role opened (CountUserBackends), walsenders among them."""
        with self._lock:
            return sum(
                1 for pid, (_, ex) in self._backends.items()
                if ex is not None and ex.login_user == user and pid not in self._leaving
            )  # fmt: skip

    def sessions(self) -> list[tuple[int, Executor]]:
        with self._lock:
            return [(pid, ex) for pid, (_, ex) in self._backends.items() if ex is not None]

    def executor(self, pid: int) -> Executor | None:
        with self._lock:
            got = self._backends.get(pid)
        return got[1] if got else None

    def is_walsender(self, pid: int) -> bool:
        return pid in self.walsenders


class ServerContext:
    """The server's shared state, and the wiring of the services each kind of backend is
    lent: SQL sessions get :attr:`sql` (``sql.services.SqlServices``), walsenders the slot
    store and the lake; nothing below the server imports this module."""

    def __init__(self, lake: Lake, settings: ServerSettings, *, ssl_context: ssl.SSLContext | None = None) -> None:
        self.lake = lake
        #: The configuration file's and command line's settings; ``settings`` adds
        #: postgresql.auto.conf (ALTER SYSTEM) on top, as the server last applied it.
        self.configured = settings
        self.system = system_config.system_settings(lake.dir, fsync=lake.settings.fsync)
        self.system.command_line = settings.command_line
        settings = self.settings = system_config.with_file(settings, self.system.values)
        #: Called on the event loop after each reload (the walsenders apply it).
        self.on_reload: list[Callable[[], None]] = []
        self.roles = RoleStore(lake.dir / "roles.json")
        self.snapshots = SnapshotRegistry(lake)
        self.ssl_context = ssl_context
        #: tls-server-end-point data for SCRAM-SHA-256-PLUS (None: -PLUS is not offered).
        self.cbind_data = (
            certificate_hash(settings.ssl_cert_file)
            if ssl_context is not None and settings.ssl_cert_file
            else None
        )
        self.backends = BackendTable()
        self.connections = 0
        shutil.rmtree(lake.dir / "spill", ignore_errors=True)  # a crash's leftover spill files
        ddl_sql.drop_orphan_temp_tables(lake)  # (and a crash's temporary tables)
        self.slots = SlotStore(lake, settings.max_replication_slots)
        #: Walsender processes (see sender_pool()).
        self.senders: SenderPool | None = None
        self.advisory = AdvisoryLocks()
        self.deadlines = Deadlines()  # statement_timeout
        #: pg_catalog view name → rows the server owns (slots, walsenders, locks).
        self.injectors: dict[str, Callable[[], list[dict[str, Any]]]] = {
            "pg_replication_slots": self._slot_rows,
            "pg_stat_replication_slots": self.slots.stats_rows,
            "pg_locks": self.advisory.rows,
            "pg_stat_replication": self._walsender_rows,
        }
        self.sql = SqlServices(
            lake=lake, roles=self.roles, snapshots=self.snapshots, advisory=self.advisory,
            deadlines=self.deadlines, slots=self.slots, backends=self.backends,
            server=ServerFacts(
                settings.server_version, settings.port, self.server_parameters, self.injectors,
                system=self.system, reload=self.reload, sources=self.parameter_sources,
            ),
        )  # fmt: skip
        self.replication = ReplicationServices(
            lake=lake, slots=self.slots, snapshots=self.snapshots,
            version_num=int(settings.server_version_num()),
            max_message_length=settings.max_message_length, sender_pool=self.sender_pool,
        )  # fmt: skip
        #: The replication connections by pid (pg_stat_replication lists them).
        self.walsenders = self.replication.walsenders
        con = lake.store.cursor()
        functions.install(con, self.sql)
        self._udf_con = con  # keeps the functions' connection alive

    def reload(self) -> bool:
        """pg_reload_conf() and SIGHUP: postgresql.auto.conf read again; what may change
        without a restart applies to the server now, to each session at its next message
        and to each running stream (``on_reload``). Any thread."""
        if not self.system.reload(self.server_parameters()):
            return True  # (as PostgreSQL: the signal was sent; the errors are in the log)
        self.settings = system_config.with_file(self.configured, self.system.values, running=self.settings)
        logs.set_line_prefix(self.settings.log_line_prefix)
        for fn in list(self.on_reload):
            fn()
        return True

    def parameter_sources(self) -> dict[str, str]:
        """pg_settings.source of each of :meth:`server_parameters`, as PostgreSQL would
        give it: ``command line``, ``configuration file`` (the TOML file named it, or
        postgresql.auto.conf), ``default`` for an unnamed value equal to PostgreSQL's."""
        s = self.settings
        out = {}
        for name, value in self.server_parameters().items():
            key = name.lower()
            meta = PG_SETTINGS.get(key)
            if key in s.command_line:
                out[key] = "command line"
            elif key in self.system.values or key in s.configured:
                out[key] = "configuration file"
            elif meta is not None and value == (meta.boot_val or ""):
                out[key] = "default"
            else:
                out[key] = "configuration file"
        return out

    def sender_pool(self) -> SenderPool | None:
        """The walsender processes (on the event loop; None when streams stay in the
        server process). The first call (the server's start) starts their template, in
        the background."""
        if not self.settings.walsender_processes:
            return None
        if self.senders is None:
            log = self.lake.log
            self.senders = SenderPool(log.dir, log.flushed_lsn, self.settings.max_wal_senders)
            log.beacon = self.senders.beacon
            self.senders.beacon.publish(log.flushed_lsn)  # (a flush may have slipped in)
        self.senders.start()
        return self.senders

    def close_senders(self) -> None:
        if self.senders is not None:
            self.lake.log.beacon = None
            self.senders.close()
            self.senders = None

    def _slot_rows(self) -> list[dict[str, Any]]:

        rows = []
        for sl in self.slots.all():
            pid = self.slots.active_pid(sl.name)
            rows.append(
                {
                    "slot_name": sl.name,
                    "plugin": sl.plugin,
                    "slot_type": sl.kind,
                    "datoid": 5,
                    "database": sl.database,
                    "temporary": sl.temporary,
                    "active": pid is not None,
                    "active_pid": pid,
                    # The slot's catalog hold: a CSN where PostgreSQL shows an xid (the
                    # proxy orders commits by CSN); NULL as for InvalidTransactionId.
                    "catalog_xmin": (sl.catalog_csn & 0xFFFFFFFF) or None,
                    "restart_lsn": format_lsn(sl.restart_lsn),
                    "confirmed_flush_lsn": format_lsn(sl.confirmed_flush),
                    "wal_status": "reserved",
                    "two_phase": sl.two_phase,
                    # 16 and 17 (shown when the server claims them): no standby, so no
                    # conflict, no invalidation and no synchronised slot
                    "conflicting": False if sl.kind == "logical" else None,
                    "inactive_since": self.slots.inactive_since(sl.name),
                    "invalidation_reason": None,
                    "failover": sl.failover,
                    "synced": False,
                }
            )
        return rows

    def _walsender_rows(self) -> list[dict[str, Any]]:
        """pg_stat_replication: every replication connection, as pg_stat_get_wal_senders
        shows it — NULL for what the client has not reported (no position before its
        first standby status update, no lag before one was measured), never 0/0."""
        rows = []
        for pid, ws in list(self.walsenders.items()):
            ex = self.backends.executor(pid)
            st = ws.state
            rows.append(
                {
                    "pid": pid,
                    "usename": ex.user if ex else None,
                    "application_name": ex.settings.get("application_name") if ex else None,
                    "client_addr": ex.client_addr if ex else None,
                    "client_port": (ex.client_port or -1) if ex else None,  # (-1: a Unix socket)
                    "backend_start": ex.backend_start if ex else None,
                    "state": "streaming" if ws.streaming else "startup",
                    **(st.columns() if st is not None else {}),
                    "sync_state": "async",
                    "sync_priority": 0,
                }
            )
        return rows

    def server_parameters(self) -> dict[str, str]:
        """The server's configured settings by PostgreSQL name, as pg_settings holds them
        (in the setting's base unit): what SHOW, current_setting() and pg_settings show.
        Every configuration value PostgreSQL has a setting for is here, or SHOW would give
        PostgreSQL's default while the server runs with another (max_wal_senders 10 with
        20 configured)."""
        s, lake = self.settings, self.lake.settings
        out = {
            "server_version": s.server_version, "server_version_num": s.server_version_num(),
            "port": str(s.port), "listen_addresses": s.listen_addresses,
            "max_connections": str(s.max_connections), "max_wal_senders": str(s.max_wal_senders),
            "max_replication_slots": str(s.max_replication_slots),
            "log_line_prefix": s.log_line_prefix, "log_statement": s.log_statement,
            "log_min_error_statement": s.log_min_error_statement,
            "log_connections": "on" if s.log_connections else "off",
            "log_disconnections": "on" if s.log_disconnections else "off",
            "wal_sender_timeout": str(round(s.wal_sender_timeout * 1000)),
            "authentication_timeout": str(round(s.authentication_timeout)),
            "ssl": "on" if self.ssl_context is not None else "off",
            "fsync": "on" if lake.fsync else "off", "wal_segment_size": str(lake.segment_size),
            "maintenance_work_mem": str(lake.maintenance_work_mem // 1024),
        }  # fmt: skip
        base = ServerSettings()
        for name in ("ssl_min_protocol_version", "ssl_max_protocol_version", "ssl_ciphers"):
            if getattr(s, name) != getattr(base, name):  # (else pg_settings' source: default)
                out[name] = getattr(s, name)
        if s.ssl_cert_file:
            out["ssl_cert_file"] = s.ssl_cert_file
        if s.ssl_key_file:
            out["ssl_key_file"] = s.ssl_key_file
        return {**out, **s.extra}
