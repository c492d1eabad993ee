"""The stream of START_REPLICATION: one asyncio loop fed by a change source.

The log is read incrementally from the slot's restart LSN; whole transactions come out of
the reorder buffer, pass the CSN snapshot filter and the pgoutput plugin, and go out as
XLogData; a second task reads the client's standby status updates and moves the slot.
The same loop runs in the server process or in a walsender process of its own
(:mod:`walsender_proxy.replication.sender_process`): what differs is handed in — the
connection, the log (:class:`~decoding.changelog.ChangeLog` or a
:class:`~decoding.logview.LogView` of its files) and where slot positions go.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoding.allocator import release_memory
from decoding.change_rows import changeset_size
from decoding.changelog import LogReader
from decoding.logview import LogView
from decoding.pgoutput.rows import RowBatch, encode_together
from decoding.reorder import (
    ChangeList,
    DecodedTxn,
    DecodingStats,
    Finished,
    Prepared,
    ReorderBuffer,
    SlotFilter,
    StreamAborted,
    StreamBlock,
)
from walsender_proxy.backend.conn import Conn
from walsender_proxy.protocol import messages as m
from walsender_proxy.protocol.machine import ConnectionClosed, MessageReceived, ProtocolError
from walsender_proxy.protocol.replication import (
    StandbyStatusUpdate,
    decode_replication_message,
    encode_keepalive_message,
    encode_xlogdata_message,
    pg_now,
)
from walsender_proxy.replication.lag import ReplyState
from walsender_proxy.replication.slot import OutputPlugin, Slot, Streamed, streamed

log = logging.getLogger("walsender_proxy.walsender")
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


class ChangeSource(Protocol):
    """The change log a stream decodes: the server's :class:`~decoding.changelog.ChangeLog`,
    or a walsender process's :class:`~decoding.logview.LogView` of its files."""

    @property
    def flushed_lsn(self) -> int: ...

    @property
    def oldest_lsn(self) -> int: ...

    def reader(self, start: int) -> LogReader: ...

    def wait_flushed(self, beyond: int, timeout: float, stop: Callable[[], bool] | None = None) -> int: ...

    def wake_waiters(self) -> None: ...


class SlotSink(Protocol):
    """Where a stream's confirmations go: the server's
    :class:`~walsender_proxy.replication.slots.SlotStore`, or a walsender process's report
    to it."""

    def move(self, name: str, *, confirmed_flush: int | None = None, restart_lsn: int | None = None) -> bool: ...

    def save_if_dirty(self, name: str) -> None: ...

    def add_stats(self, name: str, counts: dict[str, int]) -> None: ...


class LogicalStream:
    """One START_REPLICATION stream over ``conn`` (already answered with CopyBothResponse).

    ``slots`` is where the client's confirmations go: ``move(name, confirmed_flush=,
    restart_lsn=)`` (True when a save is due) and ``save_if_dirty(name)`` — the server's
    :class:`~walsender_proxy.replication.slots.SlotStore`, or a walsender process's report
    to it. ``observe`` sees every decoded event before it is sent (see
    :func:`_read_events`).

    In the server process, reading and framing run in worker threads (the event loop
    serves every session). In a walsender process the loop serves this stream alone, and
    follows the log through a :class:`~decoding.logview.LogView`, which waits on the loop:
    the small work then runs ``inline`` on it, without two thread hops per transaction
    (those hops were a large part of the process's CPU per single-row transaction)."""

    def __init__(
        self, conn: Conn, log: ChangeSource, slots: SlotSink | None, slot: Slot, plugin: OutputPlugin, start: int, *,
        work_mem: int, spill_dir: Path, timeout: Callable[[], float], changesets: Path | None = None,
        observe: Callable[[Any], None] | None = None,
    ) -> None:
        self.s = conn
        self.log = log
        self.slots = slots
        self.slot = slot
        self.plugin = plugin
        self.start = start
        self.work_mem = work_mem
        self.spill_dir = spill_dir
        #: Where changesets live: their rows count for their decoded size.
        self.changesets = changesets
        self.timeout = timeout
        self.observe = observe
        self.state = StreamState(slot)
        #: What is sent of each transaction: two-phase decoding when the slot has it.
        self.routes = SlotFilter(
            start, slot.snapshot_csn, slot.two_phase_at if slot.two_phase else None, plugin.skip_prepare
        )
        #: The log followed from a walsender process (read on this loop), else None.
        self.follower = log if isinstance(log, LogView) else None
        self.inline = self.follower is not None
        self._rb: ReorderBuffer | None = None

    def configure(self, work_mem: int, timeout: Callable[[], float]) -> None:
        """The server's settings were reloaded while streaming: a new
        logical_decoding_work_mem (for transactions that start from now on) and
        wal_sender_timeout, as PostgreSQL's walsender applies a SIGHUP."""
        self.work_mem, self.timeout = work_mem, timeout
        if self._rb is not None:
            self._rb.work_mem = work_mem

    async def run(self) -> str:
        """Stream until the client ends it: "done" (CopyDone: the caller answers in kind),
        "closed" (the connection went away) or "timeout" (wal_sender_timeout)."""
        s, slot, plugin, start, state = self.s, self.slot, self.plugin, self.start, self.state
        # walEnd in keepalives is how far decoding has *sent* (PostgreSQL's sentPtr), never
        # the log's end: a tablesync worker takes it as "caught up to here", and marks its
        # table done at that LSN — claiming more than was sent would lose those changes.
        state.sent_lsn = start
        s.queue(encode_keepalive_message(state.sent_lsn, pg_now()))
        await self._drain(state)
        reader_task = asyncio.create_task(self._client_messages(state))
        # Beyond logical_decoding_work_mem, transactions are streamed in progress (a client
        # that asked for it) or wait for their commit on disk.
        rb = self._rb = ReorderBuffer(
            work_mem=self.work_mem, spill_dir=self.spill_dir,
            stream_from=start if plugin.streaming_requested else None, skip_origin=plugin.skips_origin,
            changeset_size=None if self.changesets is None else functools.partial(changeset_size, changesets=self.changesets),
        )
        log_reader = self.log.reader(max(slot.restart_lsn, self.log.oldest_lsn))
        try:
            wait_beyond: int | None = None
            while not state.done:
                self._report_stats(rb)
                # Waiting for the log, reading it, feeding the reorder buffer (which may spill
                # to disk) and framing the small transactions that lead what was read: one
                # worker-thread call, so a single-row commit reaches the client after one
                # hop off the event loop and back, not three.
                if self.follower is not None:
                    if wait_beyond is not None:
                        await self.follower.wait_flushed_async(wait_beyond, 0.2, state.stopped)
                    step = _read_step(
                        self.log, log_reader, rb, None, plugin, start, slot.snapshot_csn,
                        state.stopped, self.observe,
                    )
                else:
                    step = await asyncio.to_thread(
                        _read_step, self.log, log_reader, rb, wait_beyond, plugin, start,
                        slot.snapshot_csn, state.stopped, self.observe,
                    )
                wait_beyond = None
                end, events, restart = step.end, step.events, step.restart
                if step.frames:
                    if events or not end:
                        s.write(step.frames)
                        await self._drain(state)
                    else:  # (the common case) sent with the keepalive below, in one write
                        s.queue(step.frames)
                if step.last_end:
                    state.lag.sent(step.last_end)
                if step.last_end and (events or not end):  # (else the one below says more)
                    s.queue(encode_keepalive_message(step.last_end, pg_now()))
                small: list[DecodedTxn] = []
                for ev, _ in events:
                    if _small_to_send(ev, start, slot.snapshot_csn):
                        small.append(ev)
                        continue
                    if small:
                        await self._send_small(small, plugin, state)
                        small = []
                    await self._emit(ev, plugin, state)
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
                    await self._drain(state)
                    continue
                if await self._keepalive_if_necessary(state):
                    await self._drain(state)
                wait_beyond = step.flushed
        except _Timeout:
            return "timeout"
        finally:
            if not reader_task.done():
                reader_task.cancel()
            log_reader.close()
            self._report_stats(rb)
        return "closed" if state.closed else "done"

    def _report_stats(self, rb: ReorderBuffer) -> None:
        """What decoding counted since the last report goes to the slot's statistics."""
        counts = rb.stats.take()
        if counts and self.slots is not None:
            self.slots.add_stats(self.slot.name, counts)

    async def _send_small(self, txns: list[DecodedTxn], plugin: OutputPlugin, state: StreamState) -> None:
        """Many small transactions (single-row commits from OLTP clients) framed in one
        worker-thread call and written at once, with one keepalive after the last. A hop to
        a thread and a flush per transaction would cap the stream at a few thousand
        transactions a second, below what the write path commits."""

        data = _frame_small(plugin, txns) if self.inline else await asyncio.to_thread(_frame_small, plugin, txns)
        for t in txns:
            self.stats.decoded(t)
        if data:
            self.s.write(data)
            await self._drain(state)
        state.lag.sent(txns[-1].end_lsn)
        self.s.queue(encode_keepalive_message(txns[-1].end_lsn, pg_now()))

    @property
    def stats(self) -> DecodingStats:
        assert self._rb is not None
        return self._rb.stats

    async def _emit(self, ev: Any, plugin: OutputPlugin, state: StreamState) -> None:
        routed = self.routes.route(ev)
        if routed is None:
            return
        if isinstance(routed, DecodedTxn) or (isinstance(routed, Finished) and routed.replay):
            self.stats.decoded(routed if isinstance(routed, DecodedTxn) else routed.txn)
        elif isinstance(routed, Prepared):
            self.stats.decoded(routed.txn)
        if isinstance(routed, DecodedTxn) and not routed.streamed:
            await self._send_txn(routed, plugin, state)
        elif isinstance(routed, DecodedTxn | StreamBlock | StreamAborted) or (
            isinstance(routed, Prepared) and routed.txn.streamed
        ):
            await self._send_streamed(routed, plugin, state)
        elif isinstance(routed, Prepared | Finished):
            data = _frame_two_phase(plugin, routed) if self.inline else await asyncio.to_thread(_frame_two_phase, plugin, routed)
            if data:
                self.s.write(data)
                await self._drain(state)
            end = routed.txn.end_lsn if isinstance(routed, Prepared) else routed.ended.end_lsn
            state.lag.sent(end)
            self.s.queue(encode_keepalive_message(end, pg_now()))
        else:
            e, rec = routed
            for payload in plugin.message(e.end_lsn, rec):
                self.s.queue(encode_xlogdata_message(e.lsn, e.lsn, pg_now(), payload))

    async def _send_streamed(
        self, routed: DecodedTxn | StreamBlock | StreamAborted | Prepared, plugin: OutputPlugin, state: StreamState
    ) -> None:
        """A block of an in-progress transaction, or the end of a streamed one (a last
        block and Stream Commit or Stream Prepare; Stream Abort), through the same chunk
        pipeline as a big transaction. Each message at the LSN PostgreSQL's callback
        wrappers give it: Stream Start at the block's first record, Stream Stop at its
        last, the changes at the first, the end at the end of its record."""
        if isinstance(routed, StreamAborted):
            frames = b"".join(encode_xlogdata_message(routed.end_lsn, routed.end_lsn, pg_now(), p) for p in plugin.stream_abort(routed))
            self.s.write(frames)
            await self._drain(state)
            state.lag.sent(routed.end_lsn)
            return
        out = streamed(plugin, routed)
        await self._pipe(_StreamPipeline(plugin, out, asyncio.get_running_loop()), state)
        if isinstance(routed, StreamBlock):
            state.lag.sent(out.last)
        elif not state.done:
            state.lag.sent(out.end)
            self.s.queue(encode_keepalive_message(out.end, pg_now()))

    async def _pipe(self, pipe: _TxnPipeline, state: StreamState) -> int:
        """Write a pipeline's chunks as they come, draining each (flow control), with
        keepalives and timeouts between them; the bytes written."""
        s = self.s
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
                    await self._drain(state)
                if state.done:
                    break
        finally:
            pipe.close()
        if sent >= TRIM_AFTER_BYTES:
            await asyncio.to_thread(release_memory)
        return sent

    async def _send_txn(self, txn: DecodedTxn, plugin: OutputPlugin, state: StreamState) -> None:
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
                data = _frame_all(plugin, txn) if self.inline else await asyncio.to_thread(_frame_all, plugin, txn)
            finally:
                txn.changes.close()
            if data:
                s.write(data)
                await self._drain(state)
            state.lag.sent(txn.end_lsn)
            s.queue(encode_keepalive_message(txn.end_lsn, pg_now()))
            return
        await self._pipe(_TxnPipeline(plugin, txn, asyncio.get_running_loop()), state)
        if not state.done:  # a stream ended mid-transaction has not sent it all
            state.lag.sent(txn.end_lsn)
            s.queue(encode_keepalive_message(txn.end_lsn, pg_now()))

    async def _drain(self, state: StreamState) -> None:
        """Write what is queued and wait for the transport to take it, as WalSndWriteData
        does: a client that stops reading is still checked for wal_sender_timeout
        meanwhile (WalSndCheckTimeOut), and asked for a reply at half of it. Every wait
        for the socket in the stream goes through here: one plain ``flush`` waited for
        good on a client that read nothing, and its slot stayed active."""
        s = self.s
        if not s.out and s.writer.transport.get_write_buffer_size() == 0:
            return  # the socket took it all (the common case): no waiting task, no timer
        while True:
            try:
                await asyncio.wait_for(self.s.flush(), self._until_next_check(state))
                return
            except TimeoutError:
                await self._keepalive_if_necessary(state)

    def _until_next_check(self, state: StreamState) -> float:
        """Seconds until the reply request or the timeout is due (at most one)."""
        timeout = self.timeout()
        if timeout <= 0:
            return 1.0
        silent = time.monotonic() - state.last_reply
        due = [timeout - silent]
        if silent < timeout / 2:
            due.append(timeout / 2 - silent)
        return min(1.0, max(0.01, min(due)))

    async def _keepalive_if_necessary(self, state: StreamState) -> bool:
        """WalSndKeepaliveIfNecessary and WalSndCheckTimeOut: disconnect a client silent
        for wal_sender_timeout, ask it for a reply after half of that, answer a reply
        request. True when a keepalive was queued."""
        timeout = self.timeout()
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

    async def _client_messages(self, state: StreamState) -> None:
        """Standby status updates move the slot; CopyDone ends the stream."""
        s = self.s
        while True:
            ev = await s.next_event(flush=False)
            if isinstance(ev, (ConnectionClosed, ProtocolError)):
                state.closed = True
                state.done = True
                self.log.wake_waiters()
                return
            assert isinstance(ev, MessageReceived)
            msg = ev.message
            if isinstance(msg, m.CopyDone):
                # A tablesync worker ends its catch-up stream so and waits for our CopyDone:
                # the stream loop must not sleep out its wait for the log first.
                state.done = True
                self.log.wake_waiters()
                return
            if not isinstance(msg, m.CopyData):
                continue
            state.last_reply = time.monotonic()
            try:
                rep = decode_replication_message(msg.data)
            except Exception:
                continue
            if isinstance(rep, StandbyStatusUpdate):
                state.replied(rep.write_lsn, rep.flush_lsn, rep.apply_lsn, rep.send_time)
                flush = rep.flush_lsn
                if flush:
                    restart = None
                    while state.candidates and state.candidates[0][0] <= flush:
                        restart = state.candidates.pop(0)[1]
                    if self.slots is not None and self.slots.move(state.slot.name, confirmed_flush=flush, restart_lsn=restart):
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
        and not ev.streamed
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
    log: ChangeSource, reader: LogReader, rb: ReorderBuffer, wait_beyond: int | None, plugin: OutputPlugin, start: int,
    snapshot_csn: int, stop: Callable[[], bool] | None = None,
    observe: Callable[[Any], None] | None = None,
) -> _Step:
    """On a worker thread: wait for the log to pass ``wait_beyond`` (at most 0.2 s, less if
    ``stop()`` turns true: the client ended the stream and waits for our CopyDone), read
    it, and frame the leading run of small transactions. Only the *leading* run: the
    plugin's relation cache must see transactions in order, and the events after the first
    other one are sent from the event loop."""
    if wait_beyond is not None:
        log.wait_flushed(wait_beyond, 0.2, stop)
    flushed = log.flushed_lsn
    end, events, restart = _read_events(reader, rb, flushed, observe)
    n = 0
    while n < len(events) and _small_to_send(events[n][0], start, snapshot_csn):
        n += 1
    lead = [ev for ev, _ in events[:n]]
    frames = _frame_small(plugin, lead) if lead else b""
    for t in lead:
        rb.stats.decoded(t)
    return _Step(flushed, end, restart, frames, lead[-1].end_lsn if lead else 0, events[n:])


def _read_events(
    reader: LogReader, rb: ReorderBuffer, flushed: int, observe: Callable[[Any], None] | None = None
) -> tuple[int, list[tuple[Any, Any]], int | None]:
    """Read the next stretch of the log (about READ_WINDOW bytes, or one bigger record)
    and feed it to the reorder buffer: (end LSN of what was read or 0, the events with
    their log entries, the restart LSN for that end). ``observe`` sees every event first
    (a walsender process follows the catalog so)."""
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
    if observe is not None:
        for ev, _ in events:
            observe(ev)
    return entries[-1].end_lsn, events, rb.oldest_open_lsn()


_ARROW_POOL = pa.default_memory_pool()


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


def _frame_two_phase(plugin: OutputPlugin, routed: Prepared | Finished) -> bytes:
    """A prepared transaction's messages as XLogData frames, each at the LSN PostgreSQL's
    callback wrappers give it: BEGIN PREPARE and the changes at the transaction's first
    LSN, PREPARE at the end of its record, COMMIT/ROLLBACK PREPARED at the end of theirs."""
    txn, now = routed.txn, pg_now()
    out: list[bytes] = []
    if isinstance(routed, Prepared) or routed.replay:
        chunks = [m for chunk in plugin.iter_prepare(txn, txn.catalog_csn or None) for m in chunk]
        first = txn.first_lsn or txn.prepare_lsn
        for i, p in enumerate(chunks):
            pos = txn.end_lsn if i == len(chunks) - 1 else first
            out.append(encode_xlogdata_message(pos, pos, now, p))
    if isinstance(routed, Finished):
        ended = routed.ended
        finish = plugin.commit_prepared if ended.committed else plugin.rollback_prepared
        out += [encode_xlogdata_message(ended.end_lsn, ended.end_lsn, now, p) for p in finish(txn, ended)]
    return b"".join(out)


def _frame_all(plugin: OutputPlugin, txn: DecodedTxn) -> bytes:
    now = pg_now()
    return b"".join(_frame_xlogdata(b, txn, now) for b in plugin.iter_batches(txn))


def _frame_small(plugin: OutputPlugin, txns: Sequence[DecodedTxn], now: int | None = None) -> bytes:
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
    encoded = iter(encode_together(rows))
    out: list[bytes | memoryview] = []
    for t, b in items:
        if isinstance(b, RowBatch):
            msgs = next(encoded)
            if isinstance(msgs, pa.Array) and len(msgs) <= 4:
                msgs = msgs.to_pylist()  # a few messages: framing each beats a vectorised pass
            if isinstance(msgs, list):
                pos = t.first_lsn or t.commit_lsn
                out.extend(encode_xlogdata_message(pos, pos, now, p) for p in msgs)
            else:
                out.append(_frame_xlogdata(msgs, t, now))
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
    (:class:`~decoding.pgoutput.rows.RowBatch`) to the encode pool, so consecutive
    chunks are encoded in parallel; the event loop gets the frames back in order. At most
    ``PIPELINE_DEPTH`` chunks are in flight: the producer waits for the writer to
    :meth:`release` one (once the transport has drained it) before it takes another.
    The generator lives and ends on the producer thread; :meth:`close` stops it early.
    """

    def __init__(
        self, plugin: OutputPlugin | None, txn: DecodedTxn | None, loop: asyncio.AbstractEventLoop,
        batches: Iterator[Any] | None = None,
    ) -> None:
        self.txn = txn
        self.now = pg_now()
        self.loop = loop
        self.ready: asyncio.Queue[concurrent.futures.Future[Any] | None] = asyncio.Queue()
        self.slots = threading.Semaphore(PIPELINE_DEPTH)
        self.stop = threading.Event()
        if batches is None:
            assert plugin is not None and txn is not None
            batches = plugin.iter_batches(txn, deferred=True)
        self.batches = batches
        self.thread = threading.Thread(target=self._produce, name="pgoutput-decode", daemon=True)
        self.thread.start()

    def _frame(self, b: Any) -> bytes | memoryview:
        assert self.txn is not None
        return _frame_xlogdata(b, self.txn, self.now)

    def _closed(self) -> None:
        if self.txn is not None:
            self.txn.changes.close()

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
            self.batches.close()  # type: ignore[attr-defined]
            self._closed()

    async def next(self) -> bytes | memoryview | None:
        """The next chunk of frames, in order; None after the last."""
        fut = await self.ready.get()
        if fut is None:
            return None
        return await asyncio.wrap_future(fut)

    def release(self) -> None:
        """A chunk was written and drained: the producer may take another. Arrow's
        allocator is asked to return what the chunk freed (a pool that caches freed memory
        would otherwise keep it, raising a big transaction's peak RSS; the call is cheap)."""
        self.slots.release()
        _ARROW_POOL.release_unused()

    def close(self) -> None:
        self.stop.set()


class _StreamPipeline(_TxnPipeline):
    """The messages of a stream block or a streamed transaction's end, made ahead of the
    writer as a big transaction's are, each at the LSN the plugin's ``stream_place`` says:
    Stream Start and the changes at ``first`` (the block's first record), Stream Stop at
    ``last`` (its last record), a Stream Commit, Stream Prepare or Stream Abort at ``end``
    (the end of its record), a Relation at 0 (as in a transaction)."""

    def __init__(self, plugin: OutputPlugin, out: Streamed, loop: asyncio.AbstractEventLoop) -> None:
        self.place = plugin.stream_place
        self.out = out
        self.first = out.first
        super().__init__(None, None, loop, out.batches)

    def _frame(self, b: Any) -> bytes | memoryview:
        if isinstance(b, RowBatch):
            return _data(b.encode(lambda lengths: xlogdata_headers(lengths, self.first, self.now)))
        if not isinstance(b, list):
            return xlogdata_frames(b, self.first, self.now)
        out = []
        for p in b:
            pos = self.out.lsn(self.place(p))
            out.append(encode_xlogdata_message(pos, pos, self.now, p))
        return b"".join(out)


class StreamState(ReplyState):
    def stopped(self) -> bool:
        return self.done

    def __init__(self, slot: Slot) -> None:
        super().__init__()
        self.slot = slot
        self.done = False
        self.closed = False
        self.reply_now = False
        self.last_reply = time.monotonic()
        self.last_ping = self.last_reply
        self.candidates: list[tuple[int, int]] = []
        self.started = time.time()

