"""The benchmark's memory measures (scripts/benchlib/rss.py): S6's figures are only as good
as these."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from scripts.benchlib.rss import pss_kb, resident_kb_together, status_kb


def test_pages_two_processes_share_count_once_together_and_in_each_summed() -> None:
    if resident_kb_together([os.getpid()]) is None:
        pytest.skip("physical frame numbers are shown to CAP_SYS_ADMIN only")
    # A second Python that touches 64 MB of its own, then waits: the interpreter's and the
    # libraries' file pages are the same physical pages in both processes.
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; b = bytearray(64 << 20); b[::4096] = b'x' * (16 << 10); "
         "print(1, flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == b"1"
        pids = [os.getpid(), child.pid]
        rss = [status_kb(p)["VmRSS"] for p in pids]
        together = resident_kb_together(pids)
        alone = [resident_kb_together([p]) for p in pids]
        assert together is not None and None not in alone
        assert resident_kb_together([child.pid, child.pid]) == alone[1]  # each page once
        assert max(alone) <= together <= sum(alone)  # type: ignore[operator]
        assert together < sum(rss)  # the libraries' pages are shared, counted once
        assert alone[1] >= 64 << 10  # the child's own 64 MB are there
        assert abs(alone[1] - rss[1]) <= rss[1] * 0.1  # one process: its RSS
        assert pss_kb(child.pid) > 0
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)
