"""Replication origins (``pg_replication_origin``): named sources of changes replayed into
this server, each with its progress, PostgreSQL's ``origin.c``.

A session that set up an origin (``pg_replication_origin_session_setup``) commits its
transactions under it: the commit record names the origin and carries the remote LSN and
time the session gave with ``pg_replication_origin_xact_setup``, decoding sends them as an
Origin message, and subscribers with ``origin = none`` (PostgreSQL 16) or test_decoding's
``only-local`` leave those transactions out — what keeps two servers replicating to each
other from looping. The origin's progress (``remote_lsn``, ``local_lsn``) moves with each
such commit.

Durable as PostgreSQL's: the origins and their progress are written to ``replorigin.json``
when one is made, dropped or advanced, and before the lake's manifest moves its redo
position; progress committed after that is read back from the commit records the lake
replays at start-up (PostgreSQL's replorigin checkpoint plus WAL replay).
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from decoding.durable import atomic_write
from decoding.errors import PgError

if TYPE_CHECKING:
    from walsender_proxy.lake.transaction import Transaction

#: roident is an oid below PG_UINT16_MAX (replorigin_create's search).
_MAX_ROIDENT = 0xFFFF


@dataclass(slots=True)
class Origin:
    roident: int
    name: str
    remote_lsn: int = 0
    local_lsn: int = 0
    #: It has a replication state (PostgreSQL's ReplicationState slot): taken by the first
    #: session setup or advance, kept until the origin is dropped. Only these show in
    #: pg_replication_origin_status.
    tracked: bool = False


@dataclass(slots=True)
class SessionOrigin:
    """A session's ``replorigin_session_origin`` with the LSN and time
    ``pg_replication_origin_xact_setup`` gave (kept until reset, as PostgreSQL 15 keeps
    them across the session's transactions)."""

    name: str
    origin_lsn: int = 0
    origin_ts: int = 0


@dataclass
class ReplicationOrigins:
    path: Path
    fsync: bool = True
    _by_name: dict[str, Origin] = field(default_factory=dict)
    _sessions: dict[int, SessionOrigin] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    #: Progress moved by commits since the last save.
    _dirty: bool = False

    def __post_init__(self) -> None:
        if self.path.exists():
            for o in json.loads(self.path.read_text()):
                self._by_name[o["name"]] = Origin(**o)

    # -- persistence ---------------------------------------------------------------------
    def save(self) -> None:
        with self._lock:
            text = json.dumps([asdict(o) for o in sorted(self._by_name.values(), key=lambda o: o.roident)])
            self._dirty = False
        atomic_write(self.path, text, fsync=self.fsync)

    def save_if_dirty(self) -> None:
        """Before the lake's redo position moves past commits that moved progress."""
        if self._dirty:
            self.save()

    def replay_commit(self, name: str, origin_lsn: int, end_lsn: int) -> None:
        """Start-up: a commit record made under ``name`` (gone since: ignored)."""
        self._advance_progress(name, origin_lsn, end_lsn)

    # -- the catalog ---------------------------------------------------------------------
    def create(self, name: str) -> int:
        if name.startswith("pg_"):
            raise PgError(
                "42939", f'replication origin name "{name}" is reserved',
                detail='Origin names starting with "pg_" are reserved.',
            )  # fmt: skip
        with self._lock:
            if name in self._by_name:
                raise PgError(
                    "23505", 'duplicate key value violates unique constraint "pg_replication_origin_roname_index"',
                    detail=f"Key (roname)=({name}) already exists.",
                ).about("pg_catalog", "pg_replication_origin", constraint="pg_replication_origin_roname_index")  # fmt: skip
            used = {o.roident for o in self._by_name.values()}
            roident = next((i for i in range(1, _MAX_ROIDENT) if i not in used), None)
            if roident is None:
                raise PgError("54000", "could not find free replication origin ID")
            self._by_name[name] = Origin(roident, name)
        self.save()
        return roident

    def get(self, name: str) -> Origin:
        o = self._by_name.get(name)
        if o is None:
            raise PgError("42704", f'replication origin "{name}" does not exist')
        return o

    def oid(self, name: str) -> int | None:
        o = self._by_name.get(name)
        return o.roident if o is not None else None

    def drop(self, name: str) -> None:
        with self._lock:
            o = self.get(name)
            holder = self._holder(name)
            if holder is not None:
                raise PgError("55006", f"could not drop replication origin with ID {o.roident}, in use by PID {holder}")
            del self._by_name[name]
        self.save()

    def rows(self) -> list[Origin]:
        """``pg_replication_origin`` and ``pg_replication_origin_status``, by roident."""
        with self._lock:
            return [Origin(o.roident, o.name, o.remote_lsn, o.local_lsn, o.tracked) for o in sorted(self._by_name.values(), key=lambda o: o.roident)]

    # -- sessions ------------------------------------------------------------------------
    def _holder(self, name: str) -> int | None:
        return next((pid for pid, s in self._sessions.items() if s.name == name), None)

    def setup(self, pid: int, name: str) -> None:
        with self._lock:
            o = self.get(name)
            if pid in self._sessions:
                raise PgError("55000", "cannot setup replication origin when one is already setup")
            holder = self._holder(name)
            if holder is not None:
                raise PgError("55006", f"replication origin with ID {o.roident} is already active for PID {holder}")
            self._sessions[pid] = SessionOrigin(name)
            if not o.tracked:
                o.tracked = True
                self.save()

    def session(self, pid: int) -> SessionOrigin | None:
        return self._sessions.get(pid)

    def configured(self, pid: int) -> SessionOrigin:
        s = self._sessions.get(pid)
        if s is None:
            raise PgError("55000", "no replication origin is configured")
        return s

    def stamp(self, pid: int, tx: Transaction | None) -> None:
        """Give ``tx`` (the session's running transaction, if any) the session's origin as
        it is now: the commit record is made with it."""
        if tx is None:
            return
        s = self._sessions.get(pid)
        tx.origin, tx.origin_lsn, tx.origin_ts = (s.name, s.origin_lsn, s.origin_ts) if s is not None else ("", 0, 0)

    def reset(self, pid: int) -> None:
        with self._lock:
            self.configured(pid)
            del self._sessions[pid]

    def release(self, pid: int) -> None:
        """The session ended (ReplicationOriginExitCleanup)."""
        with self._lock:
            self._sessions.pop(pid, None)

    # -- progress ------------------------------------------------------------------------
    def _advance_progress(self, name: str, remote_lsn: int, local_lsn: int) -> None:
        """replorigin_session_advance: each moves forward only."""
        with self._lock:
            o = self._by_name.get(name)
            if o is not None:
                o.tracked = self._dirty = True
                o.remote_lsn = max(o.remote_lsn, remote_lsn)
                o.local_lsn = max(o.local_lsn, local_lsn)

    def committed(self, name: str, origin_lsn: int, end_lsn: int) -> None:
        """A transaction committed under ``name`` with its record ending at ``end_lsn``."""
        self._advance_progress(name, origin_lsn, end_lsn)

    def advance(self, name: str, remote_lsn: int) -> None:
        """pg_replication_origin_advance: set the remote LSN, backwards too (the local one
        stays), durably."""
        with self._lock:
            o = self.get(name)
            holder = self._holder(name)
            if holder is not None:
                raise PgError("55006", f"replication origin with ID {o.roident} is already active for PID {holder}")
            o.remote_lsn, o.tracked = remote_lsn, True
        self.save()

    def progress(self, name: str) -> int | None:
        lsn = self.get(name).remote_lsn
        return lsn or None
