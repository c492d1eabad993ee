#!/usr/bin/env python3
"""In-process CPU cost of the extended-protocol path for one autocommit INSERT.

    .venv/bin/python scripts/bench_proto.py [--n 20000] [--repeat 5] [--full]

Feeds the bytes psycopg 3 sends for a prepared single-row INSERT (Bind, Describe portal,
Execute, Sync, one read) through a real Session's query loop — parser, connection machine,
dispatch, Executor.bind/describe/execute/sync, replies — with the socket replaced by
in-memory reads and writes. By default the statement itself is stubbed (it yields
``INSERT 0 1`` and opens no transaction), so the figure is the protocol/session/executor
plumbing alone; ``--full`` runs the real insert and commit into a lake (fsync off).
Prints microseconds per transaction, best of ``--repeat`` runs; the bench_oltp.py figure
(a real socket, a real client, a separate process) is the one that counts.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from walsender_proxy.backend.outcomes import Done  # noqa: E402
from walsender_proxy.backend.settings import Settings  # noqa: E402
from walsender_proxy.lake import Lake, LakeSettings  # noqa: E402
from walsender_proxy.protocol import messages as m  # noqa: E402
from walsender_proxy.protocol.machine import ConnectionMachine, Phase  # noqa: E402
from walsender_proxy.server.context import ServerContext, ServerSettings  # noqa: E402
from walsender_proxy.server.session import Session  # noqa: E402
from walsender_proxy.sql.executor import Executor  # noqa: E402

INSERT = "INSERT INTO t (id, a, b, txt, ts) VALUES ($1, $2, $3, $4, $5)"
TXT = b"the quick brown fox jumps over the lazy dog 0123456"
TS = struct.pack("!q", 757_382_400_000_000)  # 2024-01-01 00:00 UTC


def round_trip(k: int) -> bytes:
    """What psycopg 3 sends per execute() once the statement is prepared (one read)."""
    params = (struct.pack("!q", k), struct.pack("!h", k % 1000), struct.pack("!h", k % 7), TXT, TS)
    return b"".join((
        m.Bind("", "_pg3_0", (1, 1, 1, 0, 1), params, (0,)).encode(),
        m.Describe("P", "").encode(),
        m.Execute("", 0).encode(),
        m.Sync().encode(),
    ))  # fmt: skip


def setup(full: bool) -> tuple[Session, Executor]:
    lake = Lake(tempfile.mkdtemp(prefix="wpx-bench-proto-"), LakeSettings(fsync=False))
    ctx = ServerContext(lake, ServerSettings(port=5432))  # (no listener: bytes are fed to a session)
    ex = Executor(ctx.sql, user="postgres", database="postgres", settings=Settings(ctx.server_parameters()), backend_pid=1)
    for _ in ex.simple_query("CREATE TABLE t (id bigint PRIMARY KEY, a int, b int, txt text, ts timestamptz)"):
        pass
    ex.parse_statement("_pg3_0", INSERT, (20, 21, 21, 0, 1184))  # keys never repeat, whatever --n
    if not full:
        ex.run = lambda node, text, params, formats: iter((Done("INSERT 0 1"),))  # type: ignore[method-assign]
    s = Session.__new__(Session)
    s.machine = ConnectionMachine()
    s.machine.phase = Phase.READY
    s.machine.parser._state = s.machine.parser._state.__class__.MESSAGES
    s.out, s.out_size, s.executor, s.pid, s._closing = [], 0, ex, 1, False
    s._fd = None
    s._reported, s._reported_at = {}, -1  # (the ParameterStatus values already reported)
    s._idle, s._wake_r, s._wake_w, s._wake_lock = False, None, None, threading.Lock()  # (LISTEN's wake pipe)
    s.ctx, s._system, s._hub = ctx, ctx.system, ctx.sql.notifications  # (reloads and notifications)
    s._config_generation, s._after_ready = ctx.system.generation, True
    return s, ex


def run(n: int, full: bool, start: int) -> tuple[float, int]:
    s, ex = setup(full)
    reads = [round_trip(start + k) for k in range(n)]
    it = iter(reads)
    sent = [0]
    null = os.open(os.devnull, os.O_RDWR)

    def recv() -> bytes:
        return next(it, b"")

    def send(data: bytes) -> None:
        sent[0] += len(data)

    s._recv_direct = recv  # type: ignore[method-assign]
    s._send_direct = send  # type: ignore[method-assign]

    def hand_over(coro: Any) -> int:
        coro.close()
        return null

    s._await = hand_over  # type: ignore[method-assign]
    t0 = time.perf_counter()
    s._query_loop_sync()
    dt = time.perf_counter() - t0
    os.close(null)
    ex.close()
    return dt / n * 1e6, sent[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--full", action="store_true")
    a = ap.parse_args()
    results = []
    for r in range(a.repeat):
        us, nbytes = run(a.n, a.full, r * a.n)
        results.append(us)
        print(f"run {r}: {us:.1f} us/tx ({nbytes / a.n:.0f} bytes/tx out)")
    print(f"best {min(results):.1f} us/tx, median {sorted(results)[len(results) // 2]:.1f}")


if __name__ == "__main__":
    main()
