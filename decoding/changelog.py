"""The change log: the proxy's WAL.

An append-only stream of CRC-checked records kept in segment files named by the LSN of their
first byte, so an LSN is a plain byte position and finding the segment of an LSN is a
bisect. Records never span segments; a segment is sealed (fsynced) before the next starts,
which is why only the newest segment can have a torn tail and recovery only scans that one.

Frame: ``u32 total length | u8 kind | payload | u32 crc32(length, kind, payload)``.
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
import logging
import os
import struct
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from decoding.durable import fsync_path
from decoding.errors import DISK_FULL_ERRNOS, PgError, file_access_error
from decoding.lsn import FIRST_LSN, format_lsn
from decoding.records import Record, decode_record


class FlushListener(Protocol):
    """Told each time the durable end moves (the walsender processes' beacon, logview.py)."""

    def publish(self, lsn: int) -> None: ...

log = logging.getLogger(__name__)

SUFFIX = ".wal"
_HEAD = struct.Struct("<IB")
_CRC = struct.Struct("<I")
FRAME_OVERHEAD = _HEAD.size + _CRC.size
MAX_RECORD = 1 << 31
#: Buffered record bytes that are written out without waiting for a flush.
WRITE_BEHIND = 1 << 20
#: How far ahead of its records the log claims disk space (fallocate). A record is given
#: its LSN only once the bytes it will occupy are the log's, so a full disk refuses the
#: record (53100) before anything about it exists, and a write never fails half-way for
#: want of space: records already appended are always written.
RESERVE_STEP = 1 << 20
#: Claimed space that only records ending a transaction may use (``append(release=True)``:
#: an abort, a rollback to a savepoint, a rollback of a prepared transaction): on a full
#: disk, giving up stays possible after going on no longer is.
RELEASE_SLACK = 64 << 10


class LogCorruptError(Exception):
    """A sealed part of the log fails its CRC: never read past it silently."""


class LogRemovedError(Exception):
    """The requested position was truncated away (PostgreSQL: 'requested WAL segment … has
    already been removed', SQLSTATE 58P01)."""


class LogFailedError(PgError, OSError):
    """A write or fsync of the log failed, so the log is not written again until a restart.

    After a failed fsync the kernel may have dropped the unwritten pages and reports the
    error once: a later fsync that succeeds proves nothing. A failed write leaves records
    that already have LSNs (and may have waiters) off the disk. PostgreSQL PANICs here and
    replays its WAL (data_sync_retry = off); the proxy refuses to append or flush from then
    on, and recovery at the next start keeps only the records that are whole on disk. (A
    full disk is not this: space is claimed before a record exists, see RESERVE_STEP.)"""

    def __init__(self, segment: str, error: str, action: str = "fdatasync") -> None:
        super().__init__(
            "58030",
            f'could not {action} file "{segment}": {error}',
            hint="The change log is not written to again until the proxy restarts.",
        )


@dataclass(frozen=True, slots=True)
class LogEntry:
    lsn: int
    end_lsn: int
    record: Record


def _writeback_starter() -> Callable[[int, int, int], object]:
    """``sync_file_range(fd, offset, n, SYNC_FILE_RANGE_WRITE)`` where the C library has it
    (Linux): it queues dirty pages for writing and returns without waiting for the disk.
    It lets the GIL go (``CDLL``), as ``os.pwrite`` does: it can still block while the
    device's request queue is full, and no other session should wait for that. Elsewhere
    a no-op."""
    try:
        fn = ctypes.CDLL(None).sync_file_range
    except (AttributeError, OSError):
        return lambda fd, offset, n: None
    fn.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    fn.restype = ctypes.c_int
    write = 2  # SYNC_FILE_RANGE_WRITE
    return lambda fd, offset, n: fn(fd, offset, n, write)


_start_writeback = _writeback_starter()


def _segment_name(start_lsn: int) -> str:
    return f"{start_lsn:016X}{SUFFIX}"


def _scan_frames(data: memoryview, start: int = 0) -> Iterator[tuple[int, int, int, memoryview]]:
    """Yield (offset, end, kind, payload) for each whole, CRC-valid frame; stop at the first
    frame that is torn or corrupt."""
    pos = start
    n = len(data)
    while pos + FRAME_OVERHEAD <= n:
        total, kind = _HEAD.unpack_from(data, pos)
        if total < FRAME_OVERHEAD or pos + total > n:
            return
        body_end = pos + total - _CRC.size
        (crc,) = _CRC.unpack_from(data, body_end)
        if zlib.crc32(data[pos:body_end]) != crc:
            return
        yield pos, pos + total, kind, data[pos + _HEAD.size : body_end]
        pos += total


class ChangeLog:
    """Single-writer, multi-reader log with group commit.

    ``append`` puts a record in the log's buffer, written to the file when it fills
    (:data:`WRITE_BEHIND`) or at the next flush — as PostgreSQL's WAL buffers: a one-row
    transaction then costs one ``pwrite`` for its change and commit records together, not
    one each, and every system call is a point where a session thread lets go of the GIL
    and may wait to get it back. ``flush(lsn)`` writes and makes everything up to ``lsn``
    durable; readers see what was flushed (or, for :meth:`read`, written). Concurrent flushers
    queue on one fsync: whoever gets the lock after an fsync finds its LSN already durable,
    which is group commit without a timer.
    """

    def __init__(
        self, directory: str | os.PathLike[str], *, segment_size: int = 64 << 20, fsync: bool = True
    ) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.segment_size = segment_size
        self.fsync_enabled = fsync
        self._lock = threading.Lock()
        self._flush_cond = threading.Condition()
        self._flushing = False  # a group-commit leader is in fsync
        self._closed = False
        #: (segment, error, action) of a failed write or fsync: every later append and
        #: flush fails too.
        self._failed: tuple[str, str, str] | None = None
        self._retired: list[int] = []
        #: Records appended but not yet written, the last ``_buf_bytes`` of the segment.
        self._buf: list[bytes] = []
        self._buf_bytes = 0
        #: Notified whenever the durable end of the log moves (walsenders wait on it).
        self._flushed_cond = threading.Condition()
        #: Tells readers in other processes where the durable end is (see LogView).
        self.beacon: FlushListener | None = None
        #: Bytes of torn or corrupt tail cut at start-up (0 after a clean shutdown).
        self.recovered_bytes_cut = 0
        self._starts: list[int] = sorted(
            int(p.name[: -len(SUFFIX)], 16) for p in self.dir.glob(f"*{SUFFIX}")
        )
        if not self._starts:
            self._create_segment(FIRST_LSN)
        else:
            self._recover_tail()
        last = self._starts[-1]
        path = self.dir / _segment_name(last)
        self._seg_start = last
        self._seg_len = path.stat().st_size
        # Records are written at explicit offsets (pwrite), not appended: the segment may
        # be zero-filled ahead of the insert position (see preallocate).
        self._fd = os.open(path, os.O_WRONLY)
        self._zeroed = self._seg_len  # zero-filled up to here (see preallocate)
        self._reserved = self._seg_len  # the segment's bytes the log owns on disk
        #: The current segment was sealed by a rollover whose new segment could not be made
        #: (a full disk): the next rollover only makes it.
        self._sealed = False
        self._insert = last + self._seg_len
        self._flushed = self._insert

    # -- start-up ------------------------------------------------------------------------
    def _create_segment(self, start: int) -> None:
        # (not O_EXCL: an attempt cut short by a full disk may have left the empty file)
        fd = os.open(self.dir / _segment_name(start), os.O_WRONLY | os.O_CREAT, 0o600)
        os.close(fd)
        if self.fsync_enabled:
            fsync_path(self.dir)
        self._starts.append(start)

    def _recover_tail(self) -> None:
        """Cut the newest segment back to its last whole record. A torn write leaves a short
        frame; a flipped bit, a CRC mismatch: either way nothing past it was acknowledged."""
        last = self._starts[-1]
        path = self.dir / _segment_name(last)
        data = path.read_bytes()
        good = 0
        for _, end, _, _ in _scan_frames(memoryview(data)):
            good = end
        # Zeros past the last record are preallocation, not damage.
        self.recovered_bytes_cut = len(data[good:].rstrip(b"\0"))
        if good < len(data):
            if self.recovered_bytes_cut:
                log.warning(
                    "change log: cutting %d bytes of torn or corrupt tail at %s",
                    self.recovered_bytes_cut,
                    format_lsn(last + good),
                )
            with open(path, "r+b") as f:
                f.truncate(good)
                f.flush()
                os.fsync(f.fileno())

    # -- writing -------------------------------------------------------------------------
    @staticmethod
    def frame(record: Record) -> bytes:
        payload = record.encode_payload()
        total = len(payload) + FRAME_OVERHEAD
        if total > MAX_RECORD:
            raise ValueError(f"record of {total} bytes is too large for the change log")
        head = _HEAD.pack(total, record.KIND)
        crc = zlib.crc32(payload, zlib.crc32(head))
        return b"".join((head, payload, _CRC.pack(crc)))

    def append(
        self, record: Record | Callable[[int], Record], *, release: bool = False
    ) -> tuple[int, int]:
        """Write one record; returns its (start, end) LSN. Not yet durable: see flush.

        ``record`` may be a function of the LSN the record will get (called under the
        append lock), for records that name files after their own position. A record that
        gives something up (``release``) may use the space held back for such records
        (RELEASE_SLACK). On a full disk this raises 53100 and nothing was appended."""
        frame = self.frame(record) if isinstance(record, Record) else b""
        with self._lock:
            if self._failed is not None:
                raise LogFailedError(*self._failed)
            if not frame:
                # Size is unknown until built; a rollover first keeps the name honest.
                if self._seg_len >= self.segment_size:
                    self._rollover()
                frame = self.frame(record(self._insert))  # type: ignore[operator]
            elif self._seg_len and self._seg_len + len(frame) > self.segment_size:
                self._rollover()
            end = self._seg_len + len(frame)
            self._reserve(end if release else end + RELEASE_SLACK)  # (53100: nothing assigned)
            self._sealed = False
            lsn = self._insert
            self._buf.append(frame)
            self._buf_bytes += len(frame)
            self._insert += len(frame)
            self._seg_len += len(frame)
            if self._buf_bytes >= WRITE_BEHIND:
                self._write_out()
            return lsn, self._insert

    def _reserve(self, end: int) -> None:
        """Own the current segment's bytes up to ``end`` on disk (caller holds the lock):
        a step ahead when the disk allows, else just ``end``; 53100 when not even that."""
        if end <= self._reserved:
            return
        ahead = max(end, min(self._reserved + RESERVE_STEP, self.segment_size))
        for want in (ahead, end) if ahead > end else (end,):
            try:
                os.posix_fallocate(self._fd, self._reserved, want - self._reserved)
            except OSError as e:
                if e.errno in DISK_FULL_ERRNOS and want > end:
                    continue  # the record alone may still fit
                raise file_access_error(e, f'could not extend file "{self._segment_path()}"') from None
            self._reserved = want
            return

    def _segment_path(self) -> str:
        """The current segment as the data directory names it (``wal/…``), for messages."""
        return f"{self.dir.name}/{_segment_name(self._seg_start)}"

    def _fail(self, e: OSError, action: str) -> LogFailedError:
        """A write to the log failed where it must not (see LogFailedError): from now on
        the log refuses every append and flush."""
        self._failed = (_segment_name(self._seg_start), e.strerror or str(e), action)
        return LogFailedError(*self._failed)

    def _write_out(self) -> None:
        """Write the buffered records to the current segment (caller holds the lock). The
        space is the log's already (_reserve), so any failure here is the device's."""
        if not self._buf:
            return
        data = self._buf[0] if len(self._buf) == 1 else b"".join(self._buf)
        view = memoryview(data)
        pos = self._seg_len - self._buf_bytes
        try:
            while view:
                written = os.pwrite(self._fd, view, pos)
                view = view[written:]
                pos += written
        except OSError as e:
            raise self._fail(e, "write to") from e
        self._buf.clear()
        self._buf_bytes = 0

    def _rollover(self) -> None:
        """Seal the current segment (its records whole and durable, the file cut at its
        last one), then start the next. Sealing comes first: recovery looks for a torn tail
        in the newest segment only. If the next segment cannot be made (a full disk), the
        error goes to the record's writer and the next append tries again."""
        if not self._sealed:
            self._write_out()
            try:
                if max(self._zeroed, self._reserved) > self._seg_len:
                    os.ftruncate(self._fd, self._seg_len)
                if self.fsync_enabled:
                    os.fsync(self._fd)
            except OSError as e:
                raise self._fail(e, "fsync") from e
            self._zeroed = self._reserved = self._seg_len
            self._sealed = True
        path = self.dir / _segment_name(self._insert)
        try:
            if self._starts[-1] != self._insert:
                self._create_segment(self._insert)
            fd = os.open(path, os.O_WRONLY)
        except OSError as e:
            raise file_access_error(e, f'could not create file "{self.dir.name}/{path.name}"') from None
        self._retired.append(self._fd)
        self._fd = fd
        self._seg_start = self._insert
        self._seg_len = 0
        self._zeroed = 0
        self._reserved = 0
        self._sealed = False

    def preallocate(self, ahead: int = 8 << 20, step: int = 1 << 20) -> int:
        """Zero-fill the current segment ahead of the insert position, as PostgreSQL
        zero-fills its WAL segments: a commit's fdatasync then writes data blocks only, no
        file-size metadata (a journal commit), which halves its cost on ext4. Called in the
        background; each step holds the append lock only to write one ``step`` of zeros.
        Returns the bytes written."""
        if not self.fsync_enabled:
            return 0
        done = 0
        fd = None
        while True:
            with self._lock:
                if fd is not None and fd != self._fd:
                    break  # rolled over meanwhile
                if self._failed is not None or self._sealed:
                    break
                fd = self._fd
                start = max(self._zeroed, self._seg_len)
                target = min(self._seg_len + ahead, self.segment_size)
                if done == 0 and self._zeroed >= min(self._seg_len + ahead // 2, self.segment_size):
                    return 0  # still far enough ahead
                if start >= target:
                    break
                n = min(step, target - start)
                try:  # claimed first: zeros written past the claim would take space unasked
                    self._reserve(start + n)
                except PgError:
                    break  # a full disk: appends report it; zeros are only an optimisation
                try:
                    os.pwrite(fd, bytes(n), start)
                except OSError as e:
                    raise self._fail(e, "write to") from e
                self._zeroed = start + n
                done += n
        if done and fd is not None:
            with contextlib.suppress(OSError):  # closed by a rollover: it was fsynced there
                os.fdatasync(fd)
        return done

    def flush(self, upto: int | None = None) -> int:
        """Make the log durable up to ``upto`` (default: everything written). Returns the
        flushed LSN.

        Group commit: one caller at a time fsyncs everything written so far; the others
        wait on a condition and all wake when it is done — those it covered return, one of
        the rest leads the next fsync. No timer, and no convoy through a lock."""
        if upto is not None and self._flushed >= upto:
            return self._flushed
        with self._flush_cond:
            while True:
                if self._closed:
                    raise OSError("the change log is closed")
                if upto is not None and self._flushed >= upto:
                    return self._flushed
                if self._failed is not None:
                    raise LogFailedError(*self._failed)
                if not self._flushing:
                    break
                self._flush_cond.wait()
            self._flushing = True
        done = None
        try:
            with self._lock:
                self._write_out()
                target = self._insert
                fd = self._fd
                retired, self._retired = self._retired, []
            if self.fsync_enabled and target > self._flushed:
                # fdatasync: the file size is included when it changed, the mtime is not.
                try:
                    os.fdatasync(fd)
                except OSError as e:
                    raise self._fail(e, "fdatasync") from e
            for r in retired:
                os.close(r)
            done = target
        finally:
            with self._flush_cond:
                if done is not None:
                    self._flushed = max(self._flushed, done)
                flushed = self._flushed
                self._flushing = False
                self._flush_cond.notify_all()
        beacon = self.beacon
        if done is not None and beacon is not None:
            beacon.publish(flushed)  # (it keeps the largest: flushers may get here out of order)
        with self._flushed_cond:
            self._flushed_cond.notify_all()
        return self._flushed

    @property
    def failed(self) -> bool:
        """An fsync failed: nothing is appended or flushed again (see LogFailedError)."""
        return self._failed is not None

    def write_behind(self) -> None:
        """Write the buffered records to the file and start their writeback now, without
        waiting for it. A committer calls this, does its in-memory work, then :meth:`flush`:
        by then the pages are on their way and the fsync waits less."""
        if not self.fsync_enabled:
            return
        with self._lock:
            n = self._buf_bytes
            if not n or self._failed is not None:
                return
            pos, fd = self._seg_len - n, self._fd
            self._write_out()
            _start_writeback(fd, pos, n)

    def wait_flushed(
        self, beyond: int, timeout: float, stop: Callable[[], bool] | None = None
    ) -> int:
        """Wait until the durable end passes ``beyond`` (or the timeout, or ``stop()`` is
        true after a :meth:`wake_waiters`); returns it."""
        with self._flushed_cond:
            if stop is None:
                self._flushed_cond.wait_for(lambda: self._flushed > beyond, timeout)
            else:
                self._flushed_cond.wait_for(lambda: self._flushed > beyond or stop(), timeout)
            return self._flushed

    def wake_waiters(self) -> None:
        """Make :meth:`wait_flushed` callers look at their ``stop`` condition now."""
        with self._flushed_cond:
            self._flushed_cond.notify_all()

    def segment_starts(self) -> list[int]:
        """The first LSN of every segment, oldest first."""
        with self._lock:
            return list(self._starts)

    def readable(self, stop: int) -> None:
        """Make the records before ``stop`` readable from the files (a reader of flushed
        records finds them written; one of :meth:`read` may ask for buffered ones)."""
        if stop > self._insert - self._buf_bytes:
            with self._lock:
                self._write_out()

    def reader(self, start: int) -> LogReader:
        """An incremental reader from ``start`` (a record boundary), for a walsender that
        follows the log as it grows."""
        return LogReader(self, start)

    @property
    def insert_lsn(self) -> int:
        """Where the next record will start (``pg_current_wal_insert_lsn``)."""
        return self._insert

    @property
    def flushed_lsn(self) -> int:
        return self._flushed

    @property
    def oldest_lsn(self) -> int:
        return self._starts[0]

    # -- reading -------------------------------------------------------------------------
    def read(self, start: int | None = None, stop: int | None = None) -> Iterator[LogEntry]:
        """Records with ``start <= lsn`` in log order, up to what was written when each
        segment is opened (or ``stop``). A start inside a record begins at the next one."""
        with self._lock:
            self._write_out()
            starts = list(self._starts)
            insert = self._insert
        stop = insert if stop is None else min(stop, insert)
        if start is None:
            start = starts[0]
        if start < starts[0]:
            raise LogRemovedError(
                f"requested WAL segment for {format_lsn(start)} has already been removed"
            )
        i = max(bisect.bisect_right(starts, start) - 1, 0)
        for j in range(i, len(starts)):
            seg = starts[j]
            if seg >= stop:
                break
            seg_end = starts[j + 1] if j + 1 < len(starts) else stop
            try:
                with open(self.dir / _segment_name(seg), "rb") as f:
                    data = f.read(min(seg_end, stop) - seg)
            except FileNotFoundError:
                raise LogRemovedError(
                    f"requested WAL segment for {format_lsn(seg)} has already been removed"
                ) from None
            view = memoryview(data)
            pos = 0
            for off, end, kind, payload in _scan_frames(view):
                pos = end
                if seg + off < start:
                    continue
                yield LogEntry(seg + off, seg + end, decode_record(kind, payload))
            if pos != len(data):
                raise LogCorruptError(
                    f"change log record at {format_lsn(seg + pos)} is corrupt (CRC or length)"
                )

    # -- retention -----------------------------------------------------------------------
    def truncate_before(self, lsn: int) -> int:
        """Remove whole segments that end at or below ``lsn``; returns how many went.
        The current segment always stays."""
        removed = 0
        with self._lock:
            while len(self._starts) > 1 and self._starts[1] <= lsn:
                seg = self._starts.pop(0)
                (self.dir / _segment_name(seg)).unlink(missing_ok=True)
                removed += 1
        return removed

    def close(self) -> None:
        with self._flush_cond:
            self._flush_cond.wait_for(lambda: not self._flushing)
            self._closed = True
            self._flush_cond.notify_all()
        with self._lock:
            with contextlib.suppress(OSError):
                self._write_out()
            if max(self._zeroed, self._reserved) > self._seg_len:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, self._seg_len)
            for fd in [*self._retired, self._fd]:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._retired = []


class LogReader:
    """Follows the log from a position, reading only new bytes each time (a walsender must
    not re-read a 64 MiB segment for every commit). ``log`` is the :class:`ChangeLog` or,
    in another process, a :class:`~decoding.logview.LogView` of its directory."""

    def __init__(self, log: Any, start: int) -> None:
        self.log = log
        if start < log.oldest_lsn:
            raise LogRemovedError(f"requested WAL segment for {format_lsn(start)} has already been removed")
        self.pos = start
        self._seg = -1
        self._f: Any = None
        self._skip_to = start  # a start inside a segment: scan from its beginning, skip
        #: The segments as last listed. In a walsender process that is a directory listing,
        #: a third of reading one small transaction's records; it is listed again only when
        #: the reader is stuck at the end of the last segment it knows while the flushed end
        #: lies beyond: the writer rolled over (a sealed segment ends at its last record).
        self._starts: list[int] | None = None

    def _segments(self) -> list[int]:
        if self._starts is None:
            self._starts = self.log.segment_starts()
        return self._starts

    def _open(self) -> bool:
        starts = self._segments()
        i = bisect.bisect_right(starts, self.pos) - 1
        if i < 0:
            raise LogRemovedError(f"requested WAL segment for {format_lsn(self.pos)} has already been removed")
        seg = starts[i]
        if seg != self._seg:
            if self._f is not None:
                self._f.close()
            try:
                # Unbuffered: the segment is zero-filled ahead of writes, and a buffered
                # reader could keep serving zeros for bytes written since it read them.
                self._f = open(self.log.dir / _segment_name(seg), "rb", buffering=0)  # noqa: SIM115
            except FileNotFoundError:
                raise LogRemovedError(f"requested WAL segment for {format_lsn(seg)} has already been removed") from None
            self._seg = seg
            if self.pos > seg and self._skip_to == self.pos and self.pos != seg:
                # Find the record boundary at or after pos by scanning from the start.
                self.pos = seg
        return True

    def read(self, stop: int, max_bytes: int = 8 << 20) -> list[LogEntry]:
        """Whole records from the current position up to ``stop`` (exclusive)."""
        self.log.readable(stop)
        out: list[LogEntry] = []
        relisted = False
        while self.pos < stop:
            self._open()
            starts = self._segments()
            j = starts.index(self._seg)
            seg_end = starts[j + 1] if j + 1 < len(starts) else stop
            end = min(stop, seg_end, self.pos + max_bytes)
            if end <= self.pos:
                if seg_end <= self.pos and j + 1 < len(starts):
                    self.pos = seg_end
                    continue
                break
            self._f.seek(self.pos - self._seg)
            data = self._f.read(end - self.pos)
            view = memoryview(data)
            consumed = 0
            for off, fend, kind, payload in _scan_frames(view):
                lsn = self.pos + off
                consumed = fend
                if lsn >= self._skip_to:
                    out.append(LogEntry(lsn, self.pos + fend, decode_record(kind, payload)))
            if consumed == 0:
                if end == seg_end and j + 1 < len(starts) and end - self.pos < FRAME_OVERHEAD:
                    self.pos = seg_end
                    continue
                if j + 1 == len(starts) and not relisted:
                    relisted, self._starts = True, None  # a segment may have begun since
                    continue
                if len(data) >= max_bytes:
                    max_bytes *= 2  # one record bigger than the window
                    continue
                break
            self.pos += consumed
            if out and len(out) >= 10_000:
                break
        return out

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None
