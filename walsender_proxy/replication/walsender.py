"""The WalSender: replication commands on a ``replication=database`` connection, and the
stream of START_REPLICATION.

A replication connection takes replication commands and plain SQL on the same simple-query
path (the seed's redesigned walsender): the command grammar decides which. The stream is one
asyncio loop fed by a change source — the log read incrementally from the slot's restart
LSN, whole transactions out of the reorder buffer, the CSN snapshot filter, the pgoutput
plugin — while a second task reads the client's standby status updates and moves the slot
(:mod:`walsender_proxy.replication.stream`).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import functools
import inspect
import logging
import os
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from decoding.errors import PgError
from decoding.lsn import format_lsn
from decoding.pgtypes import parse_type
from walsender_proxy.backend.conn import Disconnect
from walsender_proxy.backend.outcomes import Column, Rows
from walsender_proxy.backend.settings import shown_setting
from walsender_proxy.lake import Isolation
from walsender_proxy.protocol import messages as m
from walsender_proxy.replication import commands as C
from walsender_proxy.replication.slot import Slot, output_plugin
from walsender_proxy.replication.stream import LogicalStream, StreamState

if TYPE_CHECKING:
    from walsender_proxy.replication.sender_pool import SenderPool, SenderProcess
    from walsender_proxy.replication.services import ReplicationServices, ReplicationSession

log = logging.getLogger("walsender_proxy.walsender")
TEXT = parse_type("text")
INT4 = parse_type("int4")


def system_identifier(data_dir: Path) -> str:
    """A stable 64-bit identifier per data directory (IDENTIFY_SYSTEM's systemid)."""
    p = data_dir / "system_identifier"
    if not p.exists():
        ident = str((int(time.time()) << 32) | secrets.randbits(32))
        tmp = p.with_suffix(".tmp")
        tmp.write_text(ident)
        os.replace(tmp, p)
    return p.read_text().strip()


def _rows(cols: Sequence[tuple[str, Any]], values: Sequence[Any]) -> Rows:
    columns = [Column(name, ctype) for name, ctype in cols]
    data = pa.table({name: pa.array([v], ctype.arrow) for (name, ctype), v in zip(cols, values, strict=True)})
    return Rows(columns, iter(data.to_batches()))


class WalSender:
    def __init__(self, session: ReplicationSession, services: ReplicationServices) -> None:
        self.s = session
        self.services = services
        self.lake = services.lake
        self.slots = services.slots
        self.exported: object | None = None
        #: For pg_stat_replication, which lists every replication connection (state
        #: "startup" until START_REPLICATION, as PostgreSQL's InitWalSenderSlot does).
        #: The last stream's (its positions stay shown after it ended, as PostgreSQL's do).
        self.state: StreamState | None = None
        self.streaming = False
        #: What reconfigures the running stream when the server reloads its settings.
        self._configure: Callable[[], Any] | None = None
        services.walsenders[session.pid] = self

    def reloaded(self, server: Mapping[str, str]) -> None:
        """The server reloaded its settings (on the event loop). A stream applies them at
        once, as PostgreSQL's walsender loop does on SIGHUP; otherwise the session applies
        them at its next message."""
        ex = self.s.executor
        if not self.streaming or ex is None or self._configure is None:
            return
        ex.settings.reload(server)
        res = self._configure()
        if asyncio.iscoroutine(res):
            task = asyncio.ensure_future(res)
            task.add_done_callback(lambda t: t.cancelled() or t.exception())

    def close(self) -> None:
        """The connection ended."""
        self._release_export()
        self.services.walsenders.pop(self.s.pid, None)

    # -- dispatch ------------------------------------------------------------------------
    async def handle(self, text: str) -> bool:
        """Run ``text`` if it is a replication command; False means: run it as SQL."""
        try:
            cmd = C.parse_command(text)
        except PgError as e:
            self.s.send_error(e)
            self.s.send(m.ReadyForQuery(self.s.executor.status if self.s.executor else "I"))
            return True
        if cmd is None:
            return False
        self._release_export()
        ex = self.s.executor
        if ex is not None:  # (pg_stat_activity shows the command, active while it runs;
            # an error's STATEMENT line in the log names it)
            ex.query, ex.query_start, ex.running = text, time.time(), True
            ex.debug_query = text
        try:
            await self.run(cmd)
        except PgError as e:
            self.s.send_error(e)
            if self.s.executor is not None:
                self.s.executor.fail()
        finally:
            if ex is not None:
                ex.running = False
        self.s.send(m.ReadyForQuery(self.s.executor.status if self.s.executor else "I"))
        return True

    def _release_export(self) -> None:
        if self.exported is not None:
            self.services.snapshots.release(self.exported)
            self.exported = None

    async def run(self, cmd: Any) -> None:
        ex = self.s.executor
        assert ex is not None
        if ex.tx is not None and ex.explicit and ex.status == "E":
            raise PgError("25P02", "current transaction is aborted, commands ignored until end of transaction block")
        if isinstance(cmd, C.IdentifySystem):
            await self.rows(
                [("systemid", TEXT), ("timeline", INT4), ("xlogpos", TEXT), ("dbname", TEXT)],
                [system_identifier(self.lake.dir), 1, format_lsn(self.lake.log.flushed_lsn), self.s.database],
                "IDENTIFY_SYSTEM",
            )
        elif isinstance(cmd, C.Show):
            value = shown_setting(cmd.name, ex.settings.get(cmd.name))  # (as SQL's SHOW words it)
            await self.rows([(ex.settings.canonical_name(cmd.name), TEXT)], [value], "SHOW")
        elif isinstance(cmd, C.CreateReplicationSlot):
            await self.create_slot(cmd)
        elif isinstance(cmd, C.DropReplicationSlot):
            await self.drop_slot(cmd)
        elif isinstance(cmd, C.ReadReplicationSlot):
            slot = self.slots.find(cmd.slot_name)
            vals: list[Any] = [None, None, None]
            if slot is not None and slot.kind != "physical":
                raise PgError("0A000", "cannot use READ_REPLICATION_SLOT with a logical replication slot")
            await self.rows([("slot_type", TEXT), ("restart_lsn", TEXT), ("restart_tli", INT4)], vals, "READ_REPLICATION_SLOT")
        elif isinstance(cmd, C.AlterReplicationSlot):
            await asyncio.to_thread(self.slots.alter, cmd.slot_name, two_phase=cmd.two_phase, failover=cmd.failover)
            self.s.send(m.CommandComplete("ALTER_REPLICATION_SLOT"))
        elif isinstance(cmd, C.StartReplication):
            if cmd.kind != "logical":
                raise PgError("0A000", "physical replication is not supported by walsender-proxy")
            await self.stream(cmd)
        elif isinstance(cmd, (C.TimelineHistory, C.BaseBackup, C.UploadManifest)):
            raise PgError("0A000", f"{type(cmd).__name__} is not supported by walsender-proxy (no physical replication)")
        else:
            raise PgError("0A000", f"replication command {type(cmd).__name__} is not supported")

    async def rows(self, cols: Sequence[tuple[str, Any]], values: Sequence[Any], tag: str) -> None:
        r = _rows(cols, values)
        r.fixed_tag = tag
        # One small row: sent from the event loop (Session.send_rows is a plain function
        # now that SQL sessions run in threads of their own; a coroutine before).
        res = self.s.send_rows(r, describe=True, formats=[])
        if inspect.isawaitable(res):
            await res

    # -- slots ---------------------------------------------------------------------------
    async def create_slot(self, cmd: C.CreateReplicationSlot) -> None:
        ex = self.s.executor
        assert ex is not None
        what = f"CREATE_REPLICATION_SLOT ... (SNAPSHOT '{cmd.snapshot}')"
        if cmd.kind != "logical":
            raise PgError("0A000", "physical replication slots are not supported by walsender-proxy")
        in_block = ex.explicit and ex.tx is not None
        if cmd.snapshot == "use":
            if not in_block:
                raise PgError("25001", f"{what} must be called inside a transaction")
            tx = ex.tx
            assert tx is not None
            if tx.isolation is not Isolation.REPEATABLE_READ:
                raise PgError("0A000", f"{what} must be called in REPEATABLE READ isolation mode transaction")
            if not tx.read_only:
                raise PgError("0A000", f"{what} must be called in a read-only transaction")
            if tx.snapshot_csn is not None or tx.xid is not None:
                raise PgError("0A000", f"{what} must be called before any query")
            if tx.in_subtransaction:
                raise PgError("0A000", f"{what} must not be called in a subtransaction")
        elif in_block:
            raise PgError("25001", f"{what} must not be called inside a transaction")
        slot, cp = await asyncio.to_thread(  # waits for commits in flight, fsyncs
            functools.partial(
                self.slots.create_logical, cmd.slot_name, cmd.plugin or "pgoutput", self.s.database,
                owner=self.s.pid, temporary=cmd.temporary, two_phase=cmd.two_phase, failover=cmd.failover,
            )
        )  # fmt: skip
        snapshot_name = None
        if cmd.snapshot == "use":
            tx = ex.tx
            assert tx is not None
            iso, ro = tx.isolation, tx.read_only
            tx.abort()
            ex.tx = self.lake.begin(iso, read_only=ro, snapshot_csn=cp.csn)
        elif cmd.snapshot == "export":
            self.exported = object()
            snapshot_name = self.services.snapshots.export(cp.csn, self.exported, self.s.pid)
        log.info('logical decoding found consistent point at %s (slot "%s", snapshot CSN %d)', format_lsn(cp.lsn), slot.name, cp.csn)
        await self.rows(
            [("slot_name", TEXT), ("consistent_point", TEXT), ("snapshot_name", TEXT), ("output_plugin", TEXT)],
            [slot.name, format_lsn(cp.lsn), snapshot_name, slot.plugin],
            "CREATE_REPLICATION_SLOT",
        )

    async def drop_slot(self, cmd: C.DropReplicationSlot) -> None:
        deadline = time.monotonic() + (60 if cmd.wait else 0)
        while True:
            try:
                await asyncio.to_thread(self.slots.drop, cmd.slot_name, self.s.pid)
                break
            except PgError as e:
                if e.sqlstate != "55006" or time.monotonic() >= deadline:
                    raise
                await asyncio.sleep(0.1)
        self.s.send(m.CommandComplete("DROP_REPLICATION_SLOT"))

    # -- the stream ----------------------------------------------------------------------
    def _work_mem(self) -> int:
        """This connection's logical_decoding_work_mem, in bytes."""
        ex = self.s.executor
        assert ex is not None
        return ex.settings.number("logical_decoding_work_mem") * 1024

    def _timeout(self) -> float:
        """This connection's wal_sender_timeout in seconds (0: none): the server's, or what
        the client set at start-up or with SET, as PeerDB and others do."""
        ex = self.s.executor
        assert ex is not None
        return ex.settings.number("wal_sender_timeout") / 1000

    def _can_hand_over(self) -> bool:
        """A plain TCP or Unix socket can go to a walsender process; a TLS one cannot (its
        session keys live in this process)."""
        return not self.s.ssl and self.s.writer.get_extra_info("socket") is not None

    async def _stream_elsewhere(
        self, pool: SenderPool, sender: SenderProcess, slot: Slot,
        options: Sequence[tuple[str, str | None]], start: int, work_mem: int,
    ) -> str:
        """Run the stream in ``sender``: the connection goes there (with the bytes read
        past START_REPLICATION) and comes back after the stream, with the bytes read past
        the client's CopyDone. Meanwhile this process only takes the position reports."""
        s = self.s
        await s.flush()
        transport = s.writer.transport
        while transport.get_write_buffer_size():  # what we sent goes first
            await asyncio.sleep(0.001)
        unread = s.take_unread()
        sock = s.writer.get_extra_info("socket")
        lake = self.lake
        request = {
            "slot": dataclasses.asdict(slot),
            "start": start,
            "options": [list(o) for o in options],
            "search_path": list(ex.search_path()) if (ex := self.s.executor) is not None else [],
            "version_num": self.services.version_num,
            "work_mem": work_mem,
            "wal_sender_timeout": self._timeout(),
            "max_message_length": self.services.max_message_length,
            "catalog": await asyncio.to_thread(lake.catalog_history_json),
            "log_dir": str(lake.log.dir),
            "beacon": str(pool.beacon.path),
            "changesets": str(lake.changesets),
            "spill_dir": str(lake.dir / "spill"),
            "unread": base64.b64encode(unread).decode(),
        }
        state = StreamState(slot)
        state.sent_lsn = start
        self.state, self.streaming = state, True

        async def positions(p: dict[str, Any]) -> None:
            state.take(p)
            if p.get("stats"):
                self.slots.add_stats(slot.name, p["stats"])
            due = self.slots.move(
                slot.name, confirmed_flush=p["confirmed_flush"] or None, restart_lsn=p["restart_lsn"] or None
            )
            if due:
                await asyncio.to_thread(self.slots.save_if_dirty, slot.name)

        self._configure = lambda: sender.configure(self._work_mem(), self._timeout())
        try:
            end = await sender.stream(sock.fileno(), request, positions)
            if "confirmed_flush" in end:
                await positions(end)
        finally:
            self.streaming, self._configure = False, None
        if end["outcome"] == "error":
            sqlstate, message, detail, hint = end["error"]
            raise PgError(sqlstate, message, detail=detail, hint=hint)
        if end["outcome"] == "done":
            transport.resume_reading()  # type: ignore[attr-defined]
            unread = base64.b64decode(end.get("unread", ""))
            if unread:  # (no bytes would mean end of input)
                s.machine.receive_data(unread)
        return str(end["outcome"])

    def _end_stream(self, outcome: str) -> None:
        if outcome != "done":  # the client went away, or wal_sender_timeout
            # Closed at once, whatever is still unsent: a client that stopped reading would
            # otherwise hold the connection (and its place among max_wal_senders) while
            # the session's last flush waits for it.
            self.s.writer.transport.abort()
            raise Disconnect
        # The client ended the stream with CopyDone: answer in kind, as PostgreSQL does.
        self.s.machine.copy_both_done()
        self.s.send(m.CopyDone())
        self.s.send(m.CommandComplete("COPY 0"))
        self.s.send(m.CommandComplete("START_REPLICATION"))

    async def stream(self, cmd: C.StartReplication) -> None:
        ex = self.s.executor
        assert ex is not None
        if ex.explicit:
            raise PgError("25001", "cannot execute START_REPLICATION inside a transaction block")
        assert cmd.slot_name is not None
        slot = self.slots.acquire(cmd.slot_name, self.s.pid)
        try:
            if slot.database != self.s.database:
                raise PgError("55000", f'replication slot "{slot.name}" was not created in this database')
            plugin = output_plugin(
                slot.plugin, cmd.options, self.services.version_num, self.lake.catalog_at, self.lake.changesets,
                search_path=tuple(ex.search_path()),
            )
            start = max(cmd.start_lsn, slot.confirmed_flush)
            if plugin.two_phase_requested and not slot.two_phase:
                slot = await asyncio.to_thread(self.slots.enable_two_phase, slot.name, start)
            work_mem = self._work_mem()
            self.s.send(m.CopyBothResponse(0, ()))
            pool = self.services.sender_pool()
            sender = await pool.take() if pool is not None and self._can_hand_over() else None
            if sender is not None:  # (the plugin above checked the options; the process makes its own)
                plugin.close()
                assert pool is not None
                try:
                    outcome = await self._stream_elsewhere(pool, sender, slot, cmd.options, start, work_mem)
                finally:
                    pool.give_back(sender)
            else:
                timeout = self._timeout()  # (no SET while streaming; a reload sets it again)
                stream = LogicalStream(
                    self.s, self.lake.log, self.slots, slot, plugin, start,
                    work_mem=work_mem, spill_dir=self.lake.dir / "spill", changesets=Path(self.lake.changesets),
                    timeout=lambda: timeout,
                )

                def configure(stream: LogicalStream = stream) -> None:
                    t = self._timeout()
                    stream.configure(self._work_mem(), lambda: t)

                self._configure = configure
                self.state, self.streaming = stream.state, True
                try:
                    outcome = await stream.run()
                finally:
                    self.streaming, self._configure = False, None
            self._end_stream(outcome)
        finally:
            # Let go first, as ReplicationSlotRelease does (a client reconnecting at once
            # finds the slot free), then save what moved (the save does not need it held).
            self.slots.release(slot.name, self.s.pid)
            await asyncio.to_thread(self.slots.save_if_dirty, slot.name)

