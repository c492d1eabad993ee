"""Resident memory of a set of processes, sampled from /proc in a thread: the sum of their
RSS (a page shared by several counted in each), the sum of their PSS (a shared page divided
among all its sharers, this set's or not) and, where /proc shows physical frames (root), the
resident set of the processes taken together: each physical page any of them maps, once."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

import numpy as np

_PAGE = 4096
_PRESENT = np.uint64(1 << 63)
_PFN_MASK = np.uint64((1 << 55) - 1)


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


def resident_frames(pid: int) -> np.ndarray | None:
    """Physical frame numbers of the pages ``pid`` has resident (``/proc/PID/pagemap``; the
    kernel shows frame numbers to CAP_SYS_ADMIN only: None without it; none if it is gone)."""
    out = []
    try:
        with open(f"/proc/{pid}/maps") as m, open(f"/proc/{pid}/pagemap", "rb", buffering=0) as pm:
            for line in m:
                lo_s, _, hi_s = line.split(None, 1)[0].partition("-")
                lo, hi = int(lo_s, 16), int(hi_s, 16)
                if lo >= 1 << 47:  # [vsyscall]
                    continue
                pm.seek(lo // _PAGE * 8)
                v = np.frombuffer(pm.read((hi - lo) // _PAGE * 8), dtype=np.uint64)
                out.append(v[(v & _PRESENT) != 0] & _PFN_MASK)
    except OSError:  # it ended
        return np.empty(0, np.uint64)
    frames = np.concatenate(out) if out else np.empty(0, np.uint64)
    if frames.size and not frames.any():  # present pages, frame numbers hidden
        return None
    return frames


def resident_kb_together(pids: list[int]) -> int | None:
    """The resident set of ``pids`` taken together, each physical page once, in kB."""
    sets = []
    for pid in pids:
        f = resident_frames(pid)
        if f is None:
            return None
        sets.append(f)
    return int(np.unique(np.concatenate(sets)).size) * (_PAGE // 1024) if sets else 0


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
        #: Peak of the processes' resident set taken together (each page once), per phase;
        #: sampled less often (a pass reads every process's page map). Empty if unavailable.
        self.peak_union: dict[str, int] = {}
        self.union_interval = 0.25
        self._union_due = 0.0
        self._union_ok = True
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
                if self._union_ok and time.monotonic() >= self._union_due:
                    u = resident_kb_together(list(each))
                    self._union_ok = u is not None
                    if u is not None:
                        self.peak_union[ph] = max(self.peak_union.get(ph, 0), u)
                    self._union_due = time.monotonic() + self.union_interval
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

    def peak_mb(self, phase: str, anon: bool = False, pss: bool = False, union: bool = False) -> float | None:
        peaks = self.peak_union if union else self.peak_pss if pss else self.peak_anon if anon else self.peak_rss
        v = peaks.get(phase)
        return None if v is None else v / 1024.0
