#!/usr/bin/env python3
"""Single-row OLTP through SQL: the proxy against PostgreSQL 15, same machine, same run.

    .venv/bin/python scripts/bench_oltp.py [--rows 100000] [--clients 1,8] [--mix 20000]
                                           [--seconds 120] [--only proxy|native]
                                           [--profile OUT.txt] [--json OUT]

Scenarios (psycopg 3, autocommit, parameters, one connection per client process):

- ``insert``: ``--rows`` single-row INSERT transactions into
  ``t (id bigint PRIMARY KEY, a int, b int, txt text, ts timestamptz)``, the keys split
  among the clients; each client count gets a fresh table.
- ``mix``: ``--mix`` autocommit statements, half ``UPDATE t SET a = a + 1 WHERE id = $1``,
  half ``SELECT a, txt FROM t WHERE id = $1``, random keys among the inserted rows.
  ``--untyped-keys``: the keys go as ``str`` (psycopg sends them with no type, so the server
  infers it at each Parse) and nothing is prepared: every statement is parsed and analysed,
  as for a driver that never prepares (pgbouncer's transaction mode, ``prepare_threshold=None``).

Each phase stops early after ``--seconds`` (then the rate is what was done in that time).
Both servers run with fsync on, side by side, and take turns phase by phase (``--rounds``
repeats the whole sequence) so both see the same load on a shared machine; the ratio per
round and its median are printed. The proxy runs in its own process (``LakeSettings(fsync=
True)``), so clients and server do not share a GIL; its CPU time per transaction is reported
(``server_cpu_us_per_tx``). ``--profile`` records py-spy's raw stacks of the proxy process
(``WPX_SPY=--gil`` in the environment: only the thread holding the GIL).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DDL = "CREATE TABLE t (id bigint PRIMARY KEY, a int, b int, txt text, ts timestamptz)"
INSERT = "INSERT INTO t (id, a, b, txt, ts) VALUES (%s, %s, %s, %s, %s)"
UPDATE = "UPDATE t SET a = a + 1 WHERE id = %s"
SELECT = "SELECT a, txt FROM t WHERE id = %s"
TXT = "the quick brown fox jumps over the lazy dog 0123456"  # ~50 bytes


# -- the proxy in its own process ----------------------------------------------------------
def serve(data_dir: str, port: int) -> None:
    from walsender_proxy.lake import Lake, LakeSettings
    from walsender_proxy.server.context import ServerContext, ServerSettings
    from walsender_proxy.server.server import Server

    lake = Lake(data_dir, LakeSettings(fsync=True))
    ctx = ServerContext(lake, ServerSettings(port=port, max_connections=200))
    asyncio.run(Server(ctx, freeze_startup_objects=True).serve_until_signalled())  # as the CLI


class ProxyProcess:
    def __init__(self) -> None:
        from tests.proxy import free_port

        self.dir = tempfile.mkdtemp(prefix="wpx-bench-oltp-")
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> ProxyProcess:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", self.dir, str(self.port)], cwd=ROOT
        )
        import psycopg

        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(self.dsn(), connect_timeout=2).close()
                return self
            except psycopg.OperationalError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise
                time.sleep(0.2)

    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)


# -- clients -------------------------------------------------------------------------------
def _insert_client(dsn: str, keys: range, until: float, start: float, q: mp.Queue) -> None:
    import psycopg

    lat: list[float] = []
    errors: dict[str, int] = {}
    ts = datetime(2024, 1, 1, tzinfo=UTC)
    with psycopg.connect(dsn, autocommit=True) as conn:
        _wait_until(start)
        cur = conn.cursor()
        for k in keys:
            t0 = time.perf_counter()
            try:
                cur.execute(INSERT, (k, k % 1000, k % 7, TXT, ts))
            except psycopg.Error as e:
                errors[e.sqlstate or "?"] = errors.get(e.sqlstate or "?", 0) + 1
                continue
            lat.append(time.perf_counter() - t0)
            if time.monotonic() > until:
                break
    q.put((lat, errors, time.monotonic()))


def _mix_client(
    dsn: str, n: int, nkeys: int, until: float, start: float, seed: int, untyped: bool, q: mp.Queue
) -> None:
    import psycopg

    rnd = random.Random(seed)
    lat: list[float] = []
    errors: dict[str, int] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        if untyped:
            conn.prepare_threshold = None
        _wait_until(start)
        cur = conn.cursor()
        for i in range(n):
            k: int | str = rnd.randrange(nkeys)
            if untyped:
                k = str(k)
            t0 = time.perf_counter()
            try:
                if i % 2:
                    cur.execute(UPDATE, (k,))
                else:
                    cur.execute(SELECT, (k,))
                    cur.fetchall()
            except psycopg.Error as e:
                errors[e.sqlstate or "?"] = errors.get(e.sqlstate or "?", 0) + 1
                continue
            lat.append(time.perf_counter() - t0)
            if time.monotonic() > until:
                break
    q.put((lat, errors, time.monotonic()))


def _wait_until(t: float) -> None:
    d = t - time.monotonic()
    if d > 0:
        time.sleep(d)


def _run_clients(targets: list[tuple]) -> dict[str, object]:
    ctx = mp.get_context("fork")
    q: mp.Queue = ctx.Queue()
    procs = [ctx.Process(target=fn, args=(*args, q)) for fn, args in targets]
    for p in procs:
        p.start()
    results = [q.get() for _ in procs]
    for p in procs:
        p.join()
    return results


def phase(
    kind: str, dsn: str, clients: int, n: int, seconds: float, nkeys: int = 0, base: int = 0,
    untyped: bool = False,
) -> dict[str, object]:
    start = time.monotonic() + 1.5  # every client connected before the clock starts
    until = start + seconds
    if kind == "insert":
        per = n // clients
        targets = [
            (_insert_client, (dsn, range(base + i * per, base + (i + 1) * per), until, start))
            for i in range(clients)
        ]
    else:
        targets = [
            (_mix_client, (dsn, n // clients, nkeys, until, start, 1000 + i, untyped))
            for i in range(clients)
        ]
    res = _run_clients(targets)
    lat = sorted(x for r in res for x in r[0])
    errors: dict[str, int] = {}
    for r in res:
        for k, v in r[1].items():
            errors[k] = errors.get(k, 0) + v
    took = max(r[2] for r in res) - start
    return {
        "clients": clients,
        "done": len(lat),
        "seconds": round(took, 2),
        "tps": round(len(lat) / took, 1),
        "p50_ms": round(statistics.median(lat) * 1000, 2) if lat else None,
        "p99_ms": round(lat[int(len(lat) * 0.99)] * 1000, 2) if lat else None,
        "errors": errors,
    }


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU of a process (and its threads) so far; 0 if unknown."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_phase(name: str, dsn: str, kind: str, c: int, args: argparse.Namespace, pid: int | None) -> dict[str, object]:
    """One phase on one server. ``pid``: the server process, whose CPU time per transaction
    is reported too (a figure the machine's other load hardly distorts)."""
    import psycopg

    if kind == "insert":
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS t")
            conn.execute(DDL)
        nkeys = 0
    else:
        with psycopg.connect(dsn, autocommit=True) as conn:
            nkeys = conn.execute("SELECT count(*) FROM t").fetchone()[0]  # type: ignore[index]
    cpu = cpu_seconds(pid)
    n = args.rows if kind == "insert" else args.mix
    r = phase(kind, dsn, c, n, args.seconds, nkeys=max(nkeys, 1), untyped=args.untyped_keys)
    if pid is not None:
        r["server_cpu_us_per_tx"] = round((cpu_seconds(pid) - cpu) / max(r["done"], 1) * 1e6)  # type: ignore[operator]
    print(f"{name:8} {kind:6} clients={c}: {r}", flush=True)
    return r


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        serve(sys.argv[2], int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--mix", type=int, default=20_000, help="0: no mix phase")
    ap.add_argument("--clients", default="1,8")
    ap.add_argument("--rounds", type=int, default=1, help="repeat, alternating the servers")
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--only", choices=["proxy", "native"])
    ap.add_argument("--untyped-keys", action="store_true",
                    help="mix phase: keys as str, nothing prepared (every statement analysed)")
    ap.add_argument("--profile", help="py-spy the proxy; write its raw stacks here")
    ap.add_argument("--json")
    args = ap.parse_args()
    args.clients = [int(x) for x in args.clients.split(",")]
    kinds = ["insert", "mix"] if args.mix else ["insert"]
    with contextlib.ExitStack() as stack:
        servers: list[tuple[str, str, int | None]] = []
        if args.only != "proxy":
            from tests.pgcluster import PgCluster

            pg = stack.enter_context(
                PgCluster({"max_connections": "200", "fsync": "on", "synchronous_commit": "on"})
            )
            servers.append(("postgresql", pg.dsn(), None))
        if args.only != "native":
            px = stack.enter_context(ProxyProcess())
            assert px.proc is not None
            servers.append(("proxy", px.dsn(), px.proc.pid))
            if args.profile:
                spy = subprocess.Popen(
                    [str(Path(sys.executable).with_name("py-spy")), "record", "--format", "raw",
                     *([os.environ["WPX_SPY"]] if os.environ.get("WPX_SPY") else ["--idle"]),
                     "--threads", "-r", "200", "-o", args.profile, "--pid", str(px.proc.pid)],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )
                stack.callback(lambda: (spy.send_signal(signal.SIGINT), spy.wait(60)))
                time.sleep(1)
        # Native and proxy take turns phase by phase, so both see the same machine load.
        rounds: list[dict[str, dict[str, object]]] = []
        for _ in range(args.rounds):
            got: dict[str, dict[str, object]] = {name: {} for name, _, _ in servers}
            for c in args.clients:
                for kind in kinds:
                    for name, dsn, pid in servers:
                        got[name][f"{kind}_{c}"] = run_phase(name, dsn, kind, c, args, pid)
            rounds.append(got)
    results: dict[str, object] = {"rounds": rounds}
    if len(servers) == 2:
        ratios: dict[str, list[float]] = {}
        for got in rounds:
            for k, v in got["proxy"].items():
                nat = got["postgresql"][k]["tps"]  # type: ignore[index]
                ratios.setdefault(k, []).append(round(v["tps"] / nat, 3) if nat else 0.0)  # type: ignore[index]
        results["proxy_over_native_tps"] = ratios
        results["median_ratio"] = {k: statistics.median(v) for k, v in ratios.items()}
        print("proxy/native tps per round:", ratios)
        print("median:", results["median_ratio"])
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
