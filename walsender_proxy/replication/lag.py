"""Replication lag as PostgreSQL's walsender measures it for ``pg_stat_replication``
(walsender.c: ``LagTrackerWrite``, ``LagTrackerRead``, ``ProcessStandbyReplyMessage``).

The walsender notes when it sent the end of a transaction (at most one sample a second,
as ``WalSndUpdateProgress`` does); when the client reports a write, flush or apply
position that reaches a sample, that position's lag is the time since the sample was
taken. Until a sample is reached there is no lag (NULL), and two replies in a row that
have applied everything sent clear the lags, so an idle, caught-up client shows NULL
rather than the last burst's lag. Dashboards read these columns: a value the proxy made
up (``0/0`` for a position never reported, a lag where none was measured) reads as the
whole log being behind.
"""

from __future__ import annotations

import time

from decoding.lsn import format_lsn
from decoding.pgtime import pg_to_datetime

#: Samples kept (walsender.c's LAG_TRACKER_BUFFER_SIZE).
BUFFER_SIZE = 8192
#: Seconds between two samples (WALSND_LOGICAL_LAG_TRACK_INTERVAL_MS).
SAMPLE_EVERY = 1.0
WRITE, FLUSH, APPLY = range(3)


class LagTracker:
    """A ring of (LSN, monotonic time) samples with a read head per reported position."""

    def __init__(self) -> None:
        self.buffer: list[tuple[int, float]] = [(0, 0.0)] * BUFFER_SIZE
        self.last_lsn = 0
        self.write_head = 0
        self.read_heads = [0, 0, 0]
        self.last_read: list[tuple[int, float]] = [(0, 0.0)] * 3
        self._sampled_at = 0.0

    def sent(self, lsn: int, now: float | None = None) -> None:
        """The end of a transaction at ``lsn`` was sent (WalSndUpdateProgress)."""
        now = time.monotonic() if now is None else now
        if now - self._sampled_at >= SAMPLE_EVERY:
            self._write(lsn, now)
            self._sampled_at = now

    def _write(self, lsn: int, now: float) -> None:
        if lsn == self.last_lsn:
            return
        self.last_lsn = lsn
        new_head = (self.write_head + 1) % BUFFER_SIZE
        if new_head in self.read_heads:
            # Full: overwrite the last sample (the slowest reader frees space).
            new_head = self.write_head
            self.write_head = (self.write_head - 1) % BUFFER_SIZE
        self.buffer[self.write_head] = (lsn, now)
        self.write_head = new_head

    def read(self, head: int, lsn: int, now: float) -> float | None:
        """Seconds since the newest sample at or below ``lsn`` was taken, interpolated
        towards the next one while the position sits between two; None without a new
        sample to measure by."""
        t = 0.0
        while self.read_heads[head] != self.write_head and self.buffer[self.read_heads[head]][0] <= lsn:
            t = self.buffer[self.read_heads[head]][1]
            self.last_read[head] = self.buffer[self.read_heads[head]]
            self.read_heads[head] = (self.read_heads[head] + 1) % BUFFER_SIZE
        if self.read_heads[head] == self.write_head:
            self.last_read[head] = (self.last_read[head][0], 0.0)
        if t > now:
            return None
        if t == 0.0:
            if self.read_heads[head] == self.write_head:
                return None  # nothing sent past what was reported
            prev, nxt = self.last_read[head], self.buffer[self.read_heads[head]]
            if prev[1] != 0.0:
                if lsn < prev[0] or prev[1] > nxt[1]:
                    return None
                fraction = (lsn - prev[0]) / (nxt[0] - prev[0])
                t = prev[1] + (nxt[1] - prev[1]) * fraction
            else:
                t = nxt[1]  # only a future sample: the lag if it were reached now
        return now - t


class ReplyState:
    """What ``pg_stat_replication`` shows of a client's standby status updates: the
    positions (0 until reported: NULL), the lags and the client's own time of its last
    reply (``reply_time``, 0 until one came)."""

    def __init__(self) -> None:
        self.sent_lsn = 0
        self.write_lsn = self.flush_lsn = self.apply_lsn = 0
        self.write_lag: float | None = None
        self.flush_lag: float | None = None
        self.apply_lag: float | None = None
        self.reply_time = 0
        self.lag = LagTracker()
        self._fully_applied = False

    def replied(self, write: int, flush: int, apply: int, send_time: int) -> None:
        """A standby status update (ProcessStandbyReplyMessage)."""
        now = time.monotonic()
        lags = [self.lag.read(head, lsn, now) for head, lsn in ((WRITE, write), (FLUSH, flush), (APPLY, apply))]
        clear = False
        if apply == self.sent_lsn:
            clear = self._fully_applied
            self._fully_applied = True
        else:
            self._fully_applied = False
        self.write_lsn, self.flush_lsn, self.apply_lsn = write, flush, apply
        if lags[0] is not None or clear:
            self.write_lag = lags[0]
        if lags[1] is not None or clear:
            self.flush_lag = lags[1]
        if lags[2] is not None or clear:
            self.apply_lag = lags[2]
        self.reply_time = send_time

    def report(self) -> dict[str, int | float | None]:
        """The figures as the server keeps them for a stream in a walsender process."""
        return {
            "sent": self.sent_lsn, "write": self.write_lsn, "flush": self.flush_lsn, "apply": self.apply_lsn,
            "write_lag": self.write_lag, "flush_lag": self.flush_lag, "apply_lag": self.apply_lag,
            "reply_time": self.reply_time,
        }  # fmt: skip

    def take(self, report: dict[str, int | float | None]) -> None:
        """A walsender process's :meth:`report`, in the server."""
        self.sent_lsn = max(self.sent_lsn, int(report["sent"] or 0))
        self.write_lsn, self.flush_lsn, self.apply_lsn = (int(report[k] or 0) for k in ("write", "flush", "apply"))
        self.write_lag, self.flush_lag, self.apply_lag = (report.get(k) for k in ("write_lag", "flush_lag", "apply_lag"))
        self.reply_time = int(report.get("reply_time") or 0)

    def columns(self) -> dict[str, object]:
        """The positions, lags and reply time as pg_stat_get_wal_senders gives them: NULL
        for a position never reported, a lag never measured, no reply yet."""

        def lsn(v: int) -> str | None:

            return format_lsn(v) if v else None

        def lag(v: float | None) -> tuple[int, int, int] | None:
            return None if v is None else (0, 0, round(v * 1_000_000) * 1000)

        return {
            "sent_lsn": lsn(self.sent_lsn), "write_lsn": lsn(self.write_lsn),
            "flush_lsn": lsn(self.flush_lsn), "replay_lsn": lsn(self.apply_lsn),
            "write_lag": lag(self.write_lag), "flush_lag": lag(self.flush_lag), "replay_lag": lag(self.apply_lag),
            "reply_time": pg_to_datetime(self.reply_time) if self.reply_time else None,
        }  # fmt: skip
