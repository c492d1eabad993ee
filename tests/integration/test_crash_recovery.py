"""Kill -9 a writer at random moments, many times: every acknowledged commit survives,
nothing unacknowledged is half there, and the log reads cleanly."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from walsender_proxy.lake import Lake, LakeSettings

ROOT = Path(__file__).resolve().parents[2]


def run_and_kill(path: Path, start: int, seed: int, rnd: random.Random) -> set[int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "crash_writer.py"), str(path), str(start), str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert p.stdout is not None
    line = p.stdout.readline()
    assert line.strip() == "ready", p.stderr.read() if p.stderr else line
    time.sleep(rnd.uniform(0.0, 0.8))
    p.send_signal(signal.SIGKILL)
    out, _ = p.communicate()
    return {int(x.split()[1]) for x in out.splitlines() if x.startswith("ack ")}


def check(path: Path, acked: set[int]) -> int:
    lake = Lake(path, LakeSettings(background=False))
    try:
        # The whole retained log decodes: no corrupt record is read silently.
        for _ in lake.log.read():
            pass
        rows = lake.read("g").to_pylist()
    finally:
        lake.close()
    groups: dict[int, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["grp"], []).append(r)
    missing = acked - set(groups)
    assert not missing, f"acknowledged commits lost: {sorted(missing)[:10]}"
    for g, rs in groups.items():
        assert len({r["v"] for r in rs}) == 1, f"group {g} half-updated"
        idx = sorted(r["i"] for r in rs)
        assert len(idx) > 3 or 99 not in idx, f"group {g} kept a rolled-back savepoint"
        assert idx == list(range(len(idx))), f"group {g} half-present: {idx[:5]}…"
        assert len(idx) in (1, 3, 2000), f"group {g} has {len(idx)} rows"
    return max(groups, default=0)


def crash_loop(tmp_path: Path, rounds: int, seed: int) -> None:
    rnd = random.Random(seed)
    acked: set[int] = set()
    top = 0
    for k in range(rounds):
        acked |= run_and_kill(tmp_path, top + 1000, seed * 1000 + k, rnd)
        top = max(check(tmp_path, acked), top + 1000)


def test_sigkill_loop_quick(tmp_path: Path) -> None:
    crash_loop(tmp_path, rounds=6, seed=1)


@pytest.mark.slow
def test_sigkill_loop_many(tmp_path: Path) -> None:
    crash_loop(tmp_path, rounds=10, seed=2)
