"""py-spy profiles of the proxy: record one with ``py-spy record --format raw`` (collapsed
stacks, one ``frame;frame;... count`` line per stack) and summarise its hot spots."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

_FRAME = re.compile(r"^(?P<fn>.*?) \((?P<file>[^:()]*)(?::\d+)?\)$")
PY_SPY = Path(sys.executable).with_name("py-spy")


def frame_key(frame: str) -> str:
    """``Cls.fn (path/file.py:123)`` → ``path/file.py:Cls.fn`` (line numbers dropped)."""
    m = _FRAME.match(frame.strip())
    if not m:
        return frame.strip()
    path = m["file"]
    for ours in ("/walsender_proxy/", "/decoding/"):
        if ours in path:
            path = ours[1:] + path.split(ours, 1)[1]
    for marker in ("site-packages/", "lib/python3."):
        if marker in path:
            path = path.split(marker, 1)[1]
            if marker.startswith("lib/"):
                path = path.split("/", 1)[-1]
    return f"{path}:{m['fn']}"


@dataclass
class ProfileSummary:
    samples: int
    self_top: list[tuple[str, int]]
    inclusive_top: list[tuple[str, int]]

    def as_dict(self) -> dict[str, object]:
        def pct(rows: list[tuple[str, int]]) -> list[dict[str, object]]:
            return [
                {"frame": k, "samples": n, "pct": round(100.0 * n / max(self.samples, 1), 1)}
                for k, n in rows
            ]

        return {"samples": self.samples, "self": pct(self.self_top), "inclusive": pct(self.inclusive_top)}

    def render(self, limit: int = 12) -> str:
        out = [f"  {self.samples} samples (non-idle threads)", "  self time:"]
        for k, n in self.self_top[:limit]:
            out.append(f"    {100.0 * n / max(self.samples, 1):5.1f}%  {k}")
        out.append("  inclusive (project code):")
        for k, n in self.inclusive_top[:limit]:
            out.append(f"    {100.0 * n / max(self.samples, 1):5.1f}%  {k}")
        return "\n".join(out)


_OURS = ("walsender_proxy/", "decoding/")
_PLUMBING = ("_WorkItem.run", "_worker", "Thread.run", "Thread._bootstrap")


def summarise(path: Path, top: int = 25) -> ProfileSummary:
    self_c: Counter[str] = Counter()
    incl: Counter[str] = Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        # --subprocesses puts a "process PID:cmdline" frame at the root of every stack
        frames = [frame_key(f) for f in stack.split(";") if f.strip() and not f.startswith("process ")]
        if not frames:
            continue
        self_c[frames[-1]] += n
        for k in set(frames):
            if k.startswith(_OURS) and not k.endswith(_PLUMBING):
                incl[k] += n
    return ProfileSummary(total, self_c.most_common(top), incl.most_common(top))


class PySpy:
    """``py-spy record`` attached to a running process until stopped."""

    def __init__(self, pid: int, out: Path, rate: int = 200) -> None:
        self.out = out
        self.proc = subprocess.Popen(
            [str(PY_SPY), "record", "--pid", str(pid), "-o", str(out), "--format", "raw",
             "--rate", str(rate), "--nonblocking", "--subprocesses",
             *os.environ.get("WPX_SPY", "").split()],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def stop(self) -> str:
        """Stop recording (SIGINT makes py-spy write its output); the error text if any."""
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return "" if self.out.exists() else (err or "py-spy wrote nothing")


if __name__ == "__main__":
    print(summarise(Path(sys.argv[1])).render(int(sys.argv[2]) if len(sys.argv) > 2 else 15))
