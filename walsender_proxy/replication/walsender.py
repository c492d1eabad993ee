"""The WalSender: replication commands on a ``replication=database`` connection, and the
stream of START_REPLICATION.

A replication connection takes replication commands and plain SQL on the same simple-query
path (the seed's redesigned walsender): the command grammar decides which. The stream is one
asyncio loop fed by a change source — the log read incrementally from the slot's restart
LSN, whole transactions out of the reorder buffer, the CSN snapshot filter, the pgoutput
plugin — while a second task reads the client's standby status updates and moves the slot.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import inspect
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoding.errors import PgError
from decoding.lsn import format_lsn
from decoding.pgoutput.plugin import RowBatch, encode_together
from decoding.pgtypes import parse_type
from decoding.reorder import ChangeList, DecodedTxn, Ended, ReorderBuffer
from walsender_proxy.lake import Isolation
from walsender_proxy.protocol import messages as m
from walsender_proxy.protocol.replication import (
    StandbyStatusUpdate,
    decode_replication_message,
    encode_keepalive_message,
    encode_xlogdata_message,
    pg_now,
)
from walsender_proxy.replication import commands as C
from walsender_proxy.replication.slots import Slot
from walsender_proxy.server.machine import ConnectionClosed, MessageReceived, ProtocolError
from walsender_proxy.sql.outcomes import Column, Rows

if TYPE_CHECKING:
    from walsender_proxy.server.session import Session

log = logging.getLogger("walsender_proxy.walsender")
TEXT = parse_type("text")
INT4 = parse_type("int4")
#: Bytes of log read per step of the stream loop (a bigger record is read whole).
READ_WINDOW = 16 << 20
#: A transaction with less than this in memory (and no changeset) is sent in one piece.
SMALL_TXN_BYTES = 4 << 20
#: After sending this much of one transaction, freed memory goes back to the OS.
TRIM_AFTER_BYTES = 64 << 20
#: XLogData in CopyData: 'd', int32 length, 'w', dataStart, walEnd, sendTime.
_XLOG_FRAME = np.dtype(
    [("d", "S1"), ("len", ">i4"), ("w", "S1"), ("start", ">u8"), ("end", ">u8"), ("time", ">i8")]
)
_EMPTY = pa.scalar(b"", pa.binary())
_EMPTY_LARGE = pa.scalar(b"", pa.large_binary())


def xlogdata_headers(lengths: np.ndarray, lsn: int, now: int) -> np.ndarray:
    """The CopyData(XLogData) header of every message of the given lengths, all with
    dataStart = walEnd = ``lsn``: an (n, 30) byte matrix, built in numpy."""
    head = np.empty(len(lengths), dtype=_XLOG_FRAME)
    head["d"] = b"d"
    head["len"] = lengths + (_XLOG_FRAME.itemsize - 1)
    head["w"] = b"w"
    head["start"] = lsn
    head["end"] = lsn
    head["time"] = now
    return head.view(np.uint8).reshape(len(lengths), _XLOG_FRAME.itemsize)


def _data(arr: pa.Array) -> memoryview:
    """The bytes of a binary array's elements, back to back (no copy)."""
    otype = np.int64 if pa.types.is_large_binary(arr.type) else np.int32
    offs = np.frombuffer(
        arr.buffers()[1], dtype=otype, count=len(arr) + 1, offset=arr.offset * otype().itemsize
    )
    if arr.buffers()[2] is None:
        return memoryview(b"")
    return memoryview(arr.buffers()[2])[int(offs[0]) : int(offs[-1])]


def xlogdata_frames(messages: pa.Array, lsn: int, now: int) -> memoryview:
    """One CopyData(XLogData) frame per element of ``messages`` (a binary array of pgoutput
    messages), all with dataStart = walEnd = ``lsn``: the frames back to back in one buffer,
    built with two vectorized steps (header rows in numpy, one element-wise join) instead of
    a Python call per message. Byte for byte what ``encode_xlogdata_message`` gives.
    (Row batches are framed within their own encoding instead: ``RowBatch.encode``.)"""
    n = len(messages)
    large = pa.types.is_large_binary(messages.type)
    otype = np.int64 if large else np.int32
    offs = np.frombuffer(
        messages.buffers()[1], dtype=otype, count=n + 1, offset=messages.offset * otype().itemsize
    )
    heads = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(_XLOG_FRAME.itemsize), n, [None, pa.py_buffer(xlogdata_headers(np.diff(offs), lsn, now))]
    ).cast(messages.type)
    return _data(pc.binary_join_element_wise(heads, messages, _EMPTY_LARGE if large else _EMPTY))


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
    def __init__(self, session: Session) -> None:
        self.s = session
        self.ctx = session.ctx
        self.lake = session.ctx.lake
        self.slots = session.ctx.slots
        self.exported: object | None = None

    # -- dispatch ------------------------------------------------------------------------
    async def handle(self, text: str) -> bool:
        """Run ``text`` if it is a replication command; False means: run it as SQL."""
        try:
            cmd = C.parse_command(text)
        except PgError as e:
            from walsender_proxy.server.session import error_response

            self.s.send(error_response(e))
            self.s.send(m.ReadyForQuery(self.s.executor.status if self.s.executor else "I"))
            return True
        if cmd is None:
            return False
        self._release_export()
        try:
            await self.run(cmd)
        except PgError as e:
            from walsender_proxy.server.session import error_response

            self.s.send(error_response(e))
            if self.s.executor is not None:
                self.s.executor.fail()
        self.s.send(m.ReadyForQuery(self.s.executor.status if self.s.executor else "I"))
        return True

    def _release_export(self) -> None:
        if self.exported is not None:
            self.ctx.snapshots.release(self.exported)
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
            value = ex.settings.get(cmd.name)
            await self.rows([(cmd.name, TEXT)], [value], "SHOW")
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
        if cmd.plugin not in ("pgoutput",):
            raise PgError("58P01", f'could not access file "{cmd.plugin}": No such file or directory')
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
            if tx._savepoints:
                raise PgError("0A000", f"{what} must not be called in a subtransaction")
        elif in_block:
            raise PgError("25001", f"{what} must not be called inside a transaction")
        cp = await asyncio.to_thread(self.lake.clean_point)
        slot = Slot(
            cmd.slot_name,
            cmd.plugin or "pgoutput",
            self.s.database,
            restart_lsn=cp.restart_lsn,
            consistent_point=cp.lsn,
            snapshot_csn=cp.csn,
            confirmed_flush=cp.lsn,
            temporary=cmd.temporary,
            two_phase=cmd.two_phase,
            failover=cmd.failover,
        )
        await asyncio.to_thread(self.slots.create, slot)  # fsyncs: off the event loop
        if cmd.temporary:
            self.slots.acquire(slot.name, self.s.pid)
            self.slots.release(slot.name, self.s.pid)
            self.s.temporary_slots.add(slot.name)
        snapshot_name = None
        if cmd.snapshot == "use":
            tx = ex.tx
            assert tx is not None
            iso, ro = tx.isolation, tx.read_only
            tx.abort()
            ex.tx = self.lake.begin(iso, read_only=ro, snapshot_csn=cp.csn)
        elif cmd.snapshot == "export":
            self.exported = object()
            snapshot_name = self.ctx.snapshots.export(cp.csn, self.exported, self.s.pid)
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
        self.s.temporary_slots.discard(cmd.slot_name)
        self.s.send(m.CommandComplete("DROP_REPLICATION_SLOT"))

    # -- the stream ----------------------------------------------------------------------
    async def stream(self, cmd: C.StartReplication) -> None:
        from decoding.pgoutput.plugin import PgOutput, PgOutputOptions

        ex = self.s.executor
        assert ex is not None
        if ex.explicit:
            raise PgError("25001", "cannot execute START_REPLICATION inside a transaction block")
        assert cmd.slot_name is not None
        slot = self.slots.acquire(cmd.slot_name, self.s.pid)
        try:
            if slot.database != self.s.database:
                raise PgError("55000", f'replication slot "{slot.name}" was not created in this database')
            version_num = int(self.ctx.settings.server_version_num())
            options = PgOutputOptions.parse(list(cmd.options), version_num)
            plugin = PgOutput(options, self.lake.catalog_at, self.lake.changesets)
            start = max(cmd.start_lsn, slot.confirmed_flush)
            await self._stream(slot, plugin, start)
        finally:
            try:
                await asyncio.to_thread(self.slots.save_if_dirty, slot.name)
            finally:
                self.slots.release(slot.name, self.s.pid)

    async def _stream(self, slot: Slot, plugin: Any, start: int) -> None:
        s = self.s
        s.send(m.CopyBothResponse(0, ()))
        state = _StreamState(slot)
        # walEnd in keepalives is how far decoding has *sent* (PostgreSQL's sentPtr), never
        # the log's end: a tablesync worker takes it as "caught up to here", and marks its
        # table done at that LSN — claiming more than was sent would lose those changes.
        state.sent_lsn = start
        s.queue(encode_keepalive_message(state.sent_lsn, pg_now()))
        await s.flush()
        self.ctx.walsenders[s.pid] = state
        reader_task = asyncio.create_task(self._client_messages(state))
        ex = s.executor
        work_mem = int(ex.settings.get("logical_decoding_work_mem")) * 1024 if ex else 64 << 20
        # Transactions bigger than logical_decoding_work_mem wait for their commit on disk.
        rb = ReorderBuffer(work_mem=work_mem, spill_dir=self.lake.dir / "spill")
        log_reader = self.lake.log.reader(max(slot.restart_lsn, self.lake.log.oldest_lsn))
        try:
            wait_beyond: int | None = None
            while not state.done:
                # Waiting for the log, reading it, feeding the reorder buffer (which may spill
                # to disk) and framing the small transactions that lead what was read: one
                # worker-thread call, so a single-row commit reaches the client after one
                # hop off the event loop and back, not three.
                step = await asyncio.to_thread(
                    _read_step, self.lake.log, log_reader, rb, wait_beyond, plugin, start,
                    slot.snapshot_csn, state.stopped,
                )
                wait_beyond = None
                end, events, restart = step.end, step.events, step.restart
                if step.frames:
                    s.write(step.frames)
                    await self._drain(state)
                if step.last_end and (events or not end):  # (else the one below says more)
                    s.queue(encode_keepalive_message(step.last_end, pg_now()))
                small: list[DecodedTxn] = []
                for ev, entry in events:
                    if _small_to_send(ev, start, slot.snapshot_csn):
                        small.append(ev)
                        continue
                    if small:
                        await self._send_small(small, plugin, state)
                        small = []
                    await self._emit(ev, plugin, start, state, entry)
                    if state.done:
                        break
                if small and not state.done:
                    await self._send_small(small, plugin, state)
                if state.done:
                    break
                if end:
                    state.sent_lsn = max(state.sent_lsn, end)
                    s.queue(encode_keepalive_message(state.sent_lsn, pg_now()))
                    # Where decoding could restart once the client confirms this far.
                    state.candidates.append((end, restart or end))
                    await s.flush()
                    continue
                if await self._keepalive_if_necessary(state):
                    await s.flush()
                wait_beyond = step.flushed
        except _Timeout:
            from walsender_proxy.server.session import Disconnect

            raise Disconnect from None
        finally:
            if not reader_task.done():
                reader_task.cancel()
            log_reader.close()
            self.ctx.walsenders.pop(s.pid, None)
        if state.closed:
            from walsender_proxy.server.session import Disconnect

            raise Disconnect
        # The client ended the stream with CopyDone: answer in kind, as PostgreSQL does.
        s.machine.copy_both_done()
        s.send(m.CopyDone())
        s.send(m.CommandComplete("COPY 0"))
        s.send(m.CommandComplete("START_REPLICATION"))

    async def _send_small(self, txns: list[DecodedTxn], plugin: Any, state: _StreamState) -> None:
        """Many small transactions (single-row commits from OLTP clients) framed in one
        worker-thread call and written at once, with one keepalive after the last. A hop to
        a thread and a flush per transaction would cap the stream at a few thousand
        transactions a second, below what the write path commits."""

        data = await asyncio.to_thread(_frame_small, plugin, txns)
        if data:
            self.s.write(data)
            await self._drain(state)
        self.s.queue(encode_keepalive_message(txns[-1].end_lsn, pg_now()))

    async def _emit(self, ev: Any, plugin: Any, start: int, state: _StreamState, entry: Any) -> None:
        s = self.s
        if isinstance(ev, DecodedTxn):
            if ev.gid is not None:
                state.prepared[ev.xid] = ev  # no two-phase decoding: sent whole at COMMIT PREPARED
                return
            if ev.commit_lsn < start or ev.csn <= state.slot.snapshot_csn:
                return
            await self._send_txn(ev, plugin, state)
        elif isinstance(ev, Ended):
            if ev.committed:
                txn = state.prepared.pop(ev.xid, None)
                if txn is not None and ev.lsn >= start and ev.csn > state.slot.snapshot_csn:
                    txn.commit_lsn, txn.end_lsn, txn.csn, txn.commit_ts = ev.lsn, ev.end_lsn, ev.csn, ev.ts
                    await self._send_txn(txn, plugin, state)
            else:
                state.prepared.pop(ev.xid, None)
        elif isinstance(ev, tuple):
            e, rec = ev
            if e.lsn >= start:
                for payload in plugin.message(e.end_lsn, rec):
                    s.queue(encode_xlogdata_message(e.lsn, e.lsn, pg_now(), payload))

    async def _send_txn(self, txn: DecodedTxn, plugin: Any, state: _StreamState) -> None:
        """Decode and send one transaction. A small one (in memory, no changeset) is
        decoded and framed in one worker-thread call and written at once. A big one goes
        chunk by chunk through a :class:`_TxnPipeline`: worker threads encode and frame the
        next chunks while the event loop writes the current one with a single transport
        write and waits for the transport to drain. Flow control bounds memory (a few
        chunks however big the transaction); keepalives and timeouts are handled between
        chunks."""
        s = self.s
        if isinstance(txn.changes, ChangeList) and txn.changes.small(SMALL_TXN_BYTES):
            try:
                data = await asyncio.to_thread(_frame_all, plugin, txn)
            finally:
                txn.changes.close()
            if data:
                s.write(data)
                await s.flush()
            s.queue(encode_keepalive_message(txn.end_lsn, pg_now()))
            return
        pipe = _TxnPipeline(plugin, txn, asyncio.get_running_loop())
        sent = 0
        try:
            while True:
                data = await pipe.next()
                if data is None:
                    break
                sent += len(data)
                s.write(data)
                del data
                await self._drain(state)
                pipe.release()
                if await self._keepalive_if_necessary(state):
                    await s.flush()
                if state.done:
                    break
        finally:
            pipe.close()
        if sent >= TRIM_AFTER_BYTES:
            await asyncio.to_thread(_trim_memory)
        if not state.done:  # a stream ended mid-transaction has not sent it all
            s.queue(encode_keepalive_message(txn.end_lsn, pg_now()))

    async def _drain(self, state: _StreamState) -> None:
        """Wait for the transport to take what was written, as WalSndWriteData does: a
        client that stops reading is still checked for wal_sender_timeout meanwhile."""
        s = self.s
        if not s.out and s.writer.transport.get_write_buffer_size() == 0:
            return  # the socket took it all (the common case): no waiting task, no timer
        while True:
            try:
                await asyncio.wait_for(self.s.flush(), 1.0)
                return
            except TimeoutError:
                await self._keepalive_if_necessary(state)

    async def _keepalive_if_necessary(self, state: _StreamState) -> bool:
        """WalSndKeepaliveIfNecessary and WalSndCheckTimeOut: disconnect a client silent
        for wal_sender_timeout, ask it for a reply after half of that, answer a reply
        request. True when a keepalive was queued."""
        timeout = self.ctx.settings.wal_sender_timeout
        now = time.monotonic()
        if timeout > 0 and now - state.last_reply > timeout:
            log.info("terminating walsender process due to replication timeout")
            raise _Timeout
        if timeout > 0 and now - state.last_reply > timeout / 2 and now - state.last_ping > timeout / 2:
            self.s.queue(encode_keepalive_message(state.sent_lsn, pg_now(), True))
            state.last_ping = now
            return True
        if state.reply_now:
            state.reply_now = False
            self.s.queue(encode_keepalive_message(state.sent_lsn, pg_now()))
            return True
        return False

    async def _client_messages(self, state: _StreamState) -> None:
        """Standby status updates move the slot; CopyDone ends the stream."""
        s = self.s
        while True:
            ev = await s.next_event(flush=False)
            if isinstance(ev, (ConnectionClosed, ProtocolError)):
                state.closed = True
                state.done = True
                self.lake.log.wake_waiters()
                return
            assert isinstance(ev, MessageReceived)
            msg = ev.message
            if isinstance(msg, m.CopyDone):
                # A tablesync worker ends its catch-up stream so and waits for our CopyDone:
                # the stream loop must not sleep out its wait for the log first.
                state.done = True
                self.lake.log.wake_waiters()
                return
            if not isinstance(msg, m.CopyData):
                continue
            state.last_reply = time.monotonic()
            try:
                rep = decode_replication_message(msg.data)
            except Exception:
                continue
            if isinstance(rep, StandbyStatusUpdate):
                state.write_lsn, state.flush_lsn, state.apply_lsn = rep.write_lsn, rep.flush_lsn, rep.apply_lsn
                flush = rep.flush_lsn
                if flush:
                    restart = None
                    while state.candidates and state.candidates[0][0] <= flush:
                        restart = state.candidates.pop(0)[1]
                    if self.slots.move(state.slot.name, confirmed_flush=flush, restart_lsn=restart):
                        await asyncio.to_thread(self.slots.save_if_dirty, state.slot.name)
                if rep.reply_requested:
                    state.reply_now = True


class _Timeout(Exception):
    pass


def _small_to_send(ev: Any, start: int, snapshot_csn: int) -> bool:
    """A committed transaction to send that is small enough to frame with its neighbours in
    one worker-thread call."""
    return (
        isinstance(ev, DecodedTxn)
        and ev.gid is None
        and ev.commit_lsn >= start
        and ev.csn > snapshot_csn
        and isinstance(ev.changes, ChangeList)
        and ev.changes.small(SMALL_TXN_BYTES)
    )


@dataclass(slots=True)
class _Step:
    """What one :func:`_read_step` read: the frames of the small transactions that lead it
    (and the end LSN of the last of them), the events after those, still to be sent."""

    flushed: int
    end: int
    restart: int | None
    frames: bytes
    last_end: int
    events: list[tuple[Any, Any]]


def _read_step(
    log: Any, reader: Any, rb: ReorderBuffer, wait_beyond: int | None, plugin: Any, start: int,
    snapshot_csn: int, stop: Callable[[], bool] | None = None,
) -> _Step:
    """On a worker thread: wait for the log to pass ``wait_beyond`` (at most 0.2 s, less if
    ``stop()`` turns true: the client ended the stream and waits for our CopyDone), read
    it, and frame the leading run of small transactions. Only the *leading* run: the
    plugin's relation cache must see transactions in order, and the events after the first
    other one are sent from the event loop."""
    if wait_beyond is not None:
        log.wait_flushed(wait_beyond, 0.2, stop)
    flushed = log.flushed_lsn
    end, events, restart = _read_events(reader, rb, flushed)
    n = 0
    while n < len(events) and _small_to_send(events[n][0], start, snapshot_csn):
        n += 1
    lead = [ev for ev, _ in events[:n]]
    frames = _frame_small(plugin, lead) if lead else b""
    return _Step(flushed, end, restart, frames, lead[-1].end_lsn if lead else 0, events[n:])


def _read_events(
    reader: Any, rb: ReorderBuffer, flushed: int
) -> tuple[int, list[tuple[Any, Any]], int | None]:
    """Read the next stretch of the log (about READ_WINDOW bytes, or one bigger record)
    and feed it to the reorder buffer: (end LSN of what was read or 0, the events with
    their log entries, the restart LSN for that end)."""
    window = READ_WINDOW
    while True:
        stop = min(flushed, reader.pos + window)
        entries = reader.read(stop)
        if entries or stop >= flushed:
            break
        window *= 2  # the next record is bigger than the window
    if not entries:
        return 0, [], None
    events = [(ev, entry) for entry in entries for ev in rb.feed(entry)]
    return entries[-1].end_lsn, events, rb.oldest_open_lsn()


_ARROW_POOL = pa.default_memory_pool()
try:
    _libc: Any = ctypes.CDLL("libc.so.6")
    _libc.malloc_trim.argtypes = [ctypes.c_size_t]
except (OSError, AttributeError):  # not glibc
    _libc = None


def _trim_memory() -> None:
    """Give the memory freed by a big transaction back to the operating system: glibc keeps
    freed blocks in per-thread arenas (numpy's large buffers come from malloc) and Arrow's
    allocator keeps its own; an idle walsender should not sit on either."""
    _ARROW_POOL.release_unused()
    if _libc is not None:
        _libc.malloc_trim(0)


def _frame_xlogdata(b: Any, txn: DecodedTxn, now: int) -> bytes | memoryview:
    """A batch of the plugin's messages as CopyData(XLogData) frames: Relation at 0/0,
    Commit at the end LSN, Begin and changes at the transaction's first LSN.

    PostgreSQL 15 puts each change at its own LSN, always below the commit. A subscriber
    reports the highest walEnd it has seen as flushed while it has nothing pending, so a
    change sent at the commit LSN would let the slot's confirmed position reach the commit
    while the transaction is still being applied. The first LSN is never above a change's
    own, so it keeps that report where PostgreSQL's would be or below it."""
    first = txn.first_lsn or txn.commit_lsn
    if isinstance(b, list):
        out = []
        for p in b:
            kind = p[:1]
            pos = 0 if kind == b"R" else txn.end_lsn if kind == b"C" else first
            out.append(encode_xlogdata_message(pos, pos, now, p))
        return b"".join(out)
    if isinstance(b, RowBatch):
        return _data(b.encode(lambda lengths: xlogdata_headers(lengths, first, now)))
    return xlogdata_frames(b, first, now)


def _frame_all(plugin: Any, txn: DecodedTxn) -> bytes:
    now = pg_now()
    return b"".join(_frame_xlogdata(b, txn, now) for b in plugin.iter_batches(txn))


def _frame_small(plugin: Any, txns: Sequence[DecodedTxn], now: int | None = None) -> bytes:
    """:func:`_frame_all` of each transaction, back to back, with their row messages
    encoded together (see :func:`encode_together`). The transactions' changes are closed
    (they are sent, or the stream is over)."""
    now = pg_now() if now is None else now
    try:
        items = [(t, b) for t in txns for b in plugin.iter_batches(t, deferred=True)]
    finally:
        for t in txns:
            t.changes.close()
    rows = [b for _, b in items if isinstance(b, RowBatch)]
    encoded = iter(encode_together(plugin, rows))
    out: list[bytes | memoryview] = []
    for t, b in items:
        if isinstance(b, RowBatch):
            arr = next(encoded)
            if len(arr) <= 4:  # a few messages: framing each beats a vectorised pass
                pos = t.first_lsn or t.commit_lsn
                out.extend(encode_xlogdata_message(pos, pos, now, p) for p in arr.to_pylist())
            else:
                out.append(_frame_xlogdata(arr, t, now))
        else:
            out.append(_frame_xlogdata(b, t, now))
    return b"".join(out)


#: Chunks of a transaction decoded ahead of the one being written (the memory bound).
PIPELINE_DEPTH = 3
_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _encode_pool() -> concurrent.futures.ThreadPoolExecutor:
    """Threads that encode row batches, shared by all walsenders (Arrow and numpy release
    the GIL, so these use every core)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(
                max(2, os.cpu_count() or 2), thread_name_prefix="pgoutput-encode"
            )
        return _pool


class _TxnPipeline:
    """One transaction's messages as CopyData frames, made ahead of the writer.

    A producer thread runs the plugin's generator — sequential by nature: the relation
    cache, row filters, reading Parquet — and hands each chunk of row messages
    (:class:`~decoding.pgoutput.plugin.RowBatch`) to the encode pool, so consecutive
    chunks are encoded in parallel; the event loop gets the frames back in order. At most
    ``PIPELINE_DEPTH`` chunks are in flight: the producer waits for the writer to
    :meth:`release` one (once the transport has drained it) before it takes another.
    The generator lives and ends on the producer thread; :meth:`close` stops it early.
    """

    def __init__(self, plugin: Any, txn: DecodedTxn, loop: asyncio.AbstractEventLoop) -> None:
        self.txn = txn
        self.now = pg_now()
        self.loop = loop
        self.ready: asyncio.Queue[concurrent.futures.Future[Any] | None] = asyncio.Queue()
        self.slots = threading.Semaphore(PIPELINE_DEPTH)
        self.stop = threading.Event()
        self.batches = plugin.iter_batches(txn, deferred=True)
        self.thread = threading.Thread(target=self._produce, name="pgoutput-decode", daemon=True)
        self.thread.start()

    def _frame(self, b: Any) -> bytes | memoryview:
        return _frame_xlogdata(b, self.txn, self.now)

    def _hand_over(self, fut: concurrent.futures.Future[Any] | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            self.loop.call_soon_threadsafe(self.ready.put_nowait, fut)

    def _produce(self) -> None:
        pool = _encode_pool()
        try:
            for b in self.batches:
                while not self.slots.acquire(timeout=0.2):
                    if self.stop.is_set():
                        return
                if self.stop.is_set():
                    return
                fut: concurrent.futures.Future[Any]
                if isinstance(b, RowBatch):
                    fut = pool.submit(self._frame, b)
                else:
                    fut = concurrent.futures.Future()
                    fut.set_result(self._frame(b))
                self._hand_over(fut)
            self._hand_over(None)
        except BaseException as e:
            fut = concurrent.futures.Future()
            fut.set_exception(e)
            self._hand_over(fut)
        finally:
            self.batches.close()
            self.txn.changes.close()

    async def next(self) -> bytes | memoryview | None:
        """The next chunk of frames, in order; None after the last."""
        fut = await self.ready.get()
        if fut is None:
            return None
        return await asyncio.wrap_future(fut)

    def release(self) -> None:
        """A chunk was written and drained: the producer may take another. Arrow's
        allocator is asked to return what the chunk freed (mimalloc otherwise keeps it:
        a quarter less peak RSS on a big transaction, at under a microsecond a call)."""
        self.slots.release()
        _ARROW_POOL.release_unused()

    def close(self) -> None:
        self.stop.set()


class _StreamState:
    def stopped(self) -> bool:
        return self.done

    def __init__(self, slot: Slot) -> None:
        self.slot = slot
        self.done = False
        self.closed = False
        self.reply_now = False
        self.last_reply = time.monotonic()
        self.last_ping = self.last_reply
        self.sent_lsn = 0
        self.write_lsn = self.flush_lsn = self.apply_lsn = 0
        self.candidates: list[tuple[int, int]] = []
        self.prepared: dict[int, DecodedTxn] = {}
        self.started = time.time()

