"""Resident memory of a set of processes, sampled from /proc every 50 ms in a thread: the sum
of their RSS (shared pages counted in every process) and of their PSS (counted once)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable


def status_kb(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM, RssAnon, RssFile, RssShmem of /proc/PID/status, in kB (missing: absent)."""
    out: dict[str, int] = {}
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"):
                out[key] = int(rest.split()[0])
    return out


def pss_kb(pid: int) -> int:
    """Proportional set size: shared pages divided among the processes sharing them (a
    forked process's pages shared with its template count once in a sum); 0 if gone."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


class RssSampler:
    """Sum of VmRSS (and of RssAnon) over ``pids()`` every ``interval`` seconds, with the peak
    per phase (``mark('stream')`` starts a phase)."""

    def __init__(self, pids: Callable[[], list[int]], interval: float = 0.05,
                 limit_mb: float | None = None) -> None:
        self.pids = pids
        #: A guard for a shared machine: above this the run is failed (see RunEnv.checks).
        self.limit_kb = None if limit_mb is None else int(limit_mb * 1024)
        self.exceeded_kb = 0
        self.interval = interval
        self.phase = "start"
        self.peak_rss: dict[str, int] = {}
        self.peak_anon: dict[str, int] = {}
        self.peak_pss: dict[str, int] = {}
        #: Each process's RSS at the moment the sum peaked, per phase.
        self.at_peak: dict[str, dict[int, int]] = {}
        self.hwm: dict[int, int] = {}
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="rss-sampler")
        self._pid_cache: list[int] = []
        self._pid_refresh = 0.0

    def _current_pids(self) -> list[int]:
        now = time.monotonic()
        if now >= self._pid_refresh:
            with contextlib.suppress(Exception):
                self._pid_cache = self.pids()
            self._pid_refresh = now + 1.0
        return self._pid_cache

    def _run(self) -> None:
        while not self._stop.is_set():
            rss = anon = pss = 0
            each: dict[int, int] = {}
            for pid in self._current_pids():
                st = status_kb(pid)
                each[pid] = st.get("VmRSS", 0)
                rss += st.get("VmRSS", 0)
                anon += st.get("RssAnon", 0)
                pss += pss_kb(pid)
                if "VmHWM" in st:
                    self.hwm[pid] = max(self.hwm.get(pid, 0), st["VmHWM"])
            if rss:
                if self.limit_kb is not None and rss > self.limit_kb:
                    self.exceeded_kb = max(self.exceeded_kb, rss)
                self.samples += 1
                ph = self.phase
                if rss > self.peak_rss.get(ph, 0):
                    self.peak_rss[ph] = rss
                    self.at_peak[ph] = each
                self.peak_anon[ph] = max(self.peak_anon.get(ph, 0), anon)
                self.peak_pss[ph] = max(self.peak_pss.get(ph, 0), pss)
            self._stop.wait(self.interval)

    def mark(self, phase: str) -> None:
        self.phase = phase

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def check(self) -> str | None:
        """The failure text once the guard was crossed."""
        if self.exceeded_kb:
            return (f"RSS {self.exceeded_kb / 1024:,.0f} MB exceeded the benchmark's guard of "
                    f"{self.limit_kb / 1024:,.0f} MB (--rss-limit-mb)")  # type: ignore[operator]
        return None

    def peak_mb(self, phase: str, anon: bool = False, pss: bool = False) -> float | None:
        v = (self.peak_pss if pss else self.peak_anon if anon else self.peak_rss).get(phase)
        return None if v is None else v / 1024.0
