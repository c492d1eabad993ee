#!/usr/bin/env python3
"""The Spark pipeline at size: ``mirror`` of a 10,000,000-row table with 1% changed.

Starts a proxy (``walsender-proxy serve``, fsync on) and a PostgreSQL 15 subscriber, loads
the table with ``ingest append`` (through Spark), lets the subscriber copy it, then runs
``walsender-proxy ingest --mode mirror`` on a source with 1% of the rows changed (updates,
deletes and new rows) on ``local[2]`` and reports: rows/s, seconds, peak RSS of the Spark
driver (the JVM and the Python process) and of the proxy, and the time from the job's commit
until the subscriber has applied every change (its confirmed position passes the commit)
— then checks the subscriber's table equals the proxy's.

    .venv/bin/python scripts/bench_ingest.py [--rows 10000000] [--changed 0.01] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.pgcluster import PgCluster, free_port  # noqa: E402

BIN = ROOT / ".venv" / "bin" / "walsender-proxy"


def make_source(path: Path, ids: np.ndarray, version: np.ndarray, parts: int = 8) -> None:
    """~110 bytes/row: bigint key, two ints, a bigint, text, timestamptz."""
    path.mkdir(parents=True)
    n = len(ids)
    step = -(-n // parts)
    base_ts = np.datetime64("2024-01-01T00:00:00", "us").astype(np.int64)
    for i in range(parts):
        sl = slice(i * step, min(n, (i + 1) * step))
        k = ids[sl]
        v = version[sl]
        txt = pc.binary_join_element_wise(
            pa.array(np.char.mod("row-%010d-", k)), pa.array(np.char.mod("v%03d", v)),
            pa.scalar("-padding-padding-padding-padding-pad"), "",
        )
        t = pa.table({
            "id": pa.array(k, pa.int64()),
            "a": pa.array((k % 1000).astype(np.int32)),
            "b": pa.array((k * 7 + v).astype(np.int32)),
            "c": pa.array(k * 3, pa.int64()),
            "txt": txt,
            "ts": pa.array(base_ts + k * 1_000_000 + v, pa.timestamp("us", tz="UTC")),
        })
        pq.write_table(t, path / f"part-{i:03d}.parquet", compression="snappy")


class PeakRss:
    """Peak resident memory of a process and its children, sampled every 50 ms."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak = pid, 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    @staticmethod
    def _tree(pid: int) -> list[int]:
        out, todo = [], [pid]
        while todo:
            p = todo.pop()
            out.append(p)
            try:
                kids = Path(f"/proc/{p}/task/{p}/children").read_text().split()
            except OSError:
                kids = []
            todo += [int(c) for c in kids]
        return out

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            total = 0
            for p in self._tree(self.pid):
                try:
                    for line in Path(f"/proc/{p}/status").read_text().splitlines():
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1]) * 1024
                except OSError:
                    pass
            self.peak = max(self.peak, total)

    def stop(self) -> int:
        self._stop.set()
        self._t.join()
        return self.peak


def run_ingest(dsn: str, source: Path, mode: str, extra: list[str]) -> tuple[dict, float, float, int]:
    """Run the CLI; returns (summary, seconds, time the summary arrived, driver peak RSS)."""
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    cmd = [str(BIN), "ingest", "--dsn", dsn, str(source), "-t", "big", "-m", mode,
           "--master", "local[2]", "--json", "--no-progress", *extra]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    rss = PeakRss(p.pid)
    summary, arrived = None, 0.0
    assert p.stdout is not None
    for line in p.stdout:
        if line.startswith("{"):
            arrived = time.monotonic()
            summary = json.loads(line)
    err = p.stderr.read() if p.stderr else ""
    p.wait()
    peak = rss.stop()
    if p.returncode != 0 or summary is None:
        raise SystemExit(f"ingest failed ({p.returncode}):\n{err[-3000:]}")
    return summary, arrived - t0, arrived, peak


def lsn(text: str) -> int:
    hi, lo = text.split("/")
    return (int(hi, 16) << 32) | int(lo, 16)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--changed", type=float, default=0.01)
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    n = args.rows
    work = Path(tempfile.mkdtemp(prefix="wpx-bench-ingest-"))
    data = work / "data"
    subprocess.run([str(BIN), "init", "-D", str(data)], check=True, capture_output=True)
    port = free_port()
    proxy = subprocess.Popen([str(BIN), "serve", "-D", str(data), "-p", str(port), "-h", "127.0.0.1"],
                             stdout=subprocess.DEVNULL, stderr=open(work / "proxy.log", "w"))  # noqa: SIM115
    proxy_rss = PeakRss(proxy.pid)
    dsn = f"host=127.0.0.1 port={port} user=postgres dbname=postgres"
    pg = PgCluster().start()
    try:
        for _ in range(100):
            try:
                psycopg.connect(dsn).close()
                break
            except psycopg.OperationalError:
                time.sleep(0.1)
        rng = np.random.default_rng(42)
        ids = np.arange(n, dtype=np.int64)
        print(f"generating {n:,} rows…", flush=True)
        make_source(work / "v0", ids, np.zeros(n, np.int64))
        ddl = "CREATE TABLE big (id bigint PRIMARY KEY, a integer, b integer, c bigint, txt text, ts timestamptz)"
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(ddl)
            c.execute("CREATE PUBLICATION p FOR TABLE big")
        print("initial load (ingest append)…", flush=True)
        load, load_s, _, load_rss = run_ingest(dsn, work / "v0", "append", ["--rows-per-transaction", "1000000"])
        print(f"  {load['inserted']:,} rows in {load_s:.1f} s", flush=True)
        with psycopg.connect(pg.dsn(), autocommit=True) as c:
            c.execute(ddl)
            t0 = time.monotonic()
            c.execute(f"CREATE SUBSCRIPTION s CONNECTION '{dsn}' PUBLICATION p")
        while True:
            with psycopg.connect(pg.dsn()) as c:
                st = c.execute("SELECT srsubstate FROM pg_subscription_rel").fetchall()
            if st and all(s == "r" for (s,) in st):
                break
            time.sleep(0.5)
        sync_s = time.monotonic() - t0
        print(f"  subscriber synced in {sync_s:.1f} s", flush=True)

        # 1% changed: mostly updates, some deletes, some new rows.
        k = int(n * args.changed)
        upd = rng.choice(n, size=int(k * 0.8), replace=False)
        rest = np.setdiff1d(ids, upd)
        dels = rng.choice(rest, size=k - len(upd) - k // 10, replace=False)
        version = np.zeros(n, np.int64)
        version[upd] = 1
        keep = np.ones(n, bool)
        keep[dels] = False
        new_ids = np.arange(n, n + k // 10, dtype=np.int64)
        make_source(work / "v1", np.concatenate([ids[keep], new_ids]),
                    np.concatenate([version[keep], np.full(len(new_ids), 2)]))
        print("mirror (1% changed)…", flush=True)
        load_proxy_rss = proxy_rss.stop()
        proxy_rss = PeakRss(proxy.pid)  # the mirror's own peak, apart from the initial load's
        res, secs, committed_at, driver_rss = run_ingest(dsn, work / "v1", "mirror", [])
        target = lsn(res["commit_lsn"])
        while True:
            with psycopg.connect(dsn) as c:
                row = c.execute("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 's'").fetchone()
            if row and row[0] and lsn(str(row[0])) >= target:
                break
            time.sleep(0.05)
        apply_s = time.monotonic() - committed_at
        # No text ordering (collations differ): sums of values and lengths.
        q = "SELECT count(*), sum(b::bigint), sum(c), sum(length(txt)), min(id), max(id), sum(a::bigint) FROM big"
        # Then the contents: late (applied after the confirmed position moved) or lost?
        with psycopg.connect(dsn) as a:
            fa = a.execute(q).fetchone()
        same, identical_s = False, None
        while time.monotonic() - committed_at < apply_s + 120:
            with psycopg.connect(pg.dsn()) as b:
                fb = b.execute(q).fetchone()
            if fa == fb:
                same, identical_s = True, time.monotonic() - committed_at
                break
            time.sleep(0.5)
        if not same:
            print(f"proxy:      {fa}\nsubscriber: {fb}", flush=True)
        figures = {
            "rows_source": int(keep.sum()) + len(new_ids),
            "inserted": res["inserted"], "updated": res["updated"], "deleted": res["deleted"],
            "mirror_seconds": round(secs, 2),
            "mirror_rows_per_s": round((int(keep.sum()) + len(new_ids)) / secs),
            "driver_peak_rss_mb": round(driver_rss / 2**20),
            "proxy_peak_rss_mb_mirror": round(proxy_rss.peak / 2**20),
            "proxy_peak_rss_mb_initial_load_and_sync": round(load_proxy_rss / 2**20),
            "commit_to_applied_s": round(apply_s, 2),
            "subscriber_identical": same,
            "commit_to_identical_s": None if identical_s is None else round(identical_s, 2),
            "initial_load_seconds": round(load_s, 2), "initial_load_driver_rss_mb": round(load_rss / 2**20),
            "initial_sync_seconds": round(sync_s, 2),
        }
        print(json.dumps(figures, indent=2))
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=2))
    finally:
        try:
            with psycopg.connect(pg.dsn(), autocommit=True) as c:
                c.execute("DROP SUBSCRIPTION IF EXISTS s")
        except Exception:
            pass
        pg.stop()
        proxy.send_signal(signal.SIGINT)
        proxy.wait(30)
        proxy_rss.stop()


if __name__ == "__main__":
    main()
