#!/usr/bin/env python3
"""Lake figures: a 1,000,000-row table written, changed, folded and read at an old and at the
newest CSN, with rows/s and peak memory; and commit latency of a writer while folding runs.

    .venv/bin/python scripts/bench_lake.py [--rows N] [--dir DIR] [--json OUT]

Each read runs in a fresh process so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pyarrow as pa

from walsender_proxy.lake import Lake, LakeSettings


def peak_rss_mb() -> float:
    """VmHWM: unlike ru_maxrss it starts afresh at exec, so a child's figure is its own."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make_rows(start: int, n: int) -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64)
    text = pa.array(
        np.char.add("payload-row-with-some-text-to-be-realistic-", ids.astype(str)).astype(object)
    )
    return pa.table(
        {
            "id": ids,
            "a": (ids % 1000).astype(np.int32),
            "b": (ids * 7 % 100_000).astype(np.int32),
            "c": text,
            "ts": pa.array((ids * 1_000_000 + 1_700_000_000_000_000).astype("datetime64[us]")).cast(
                pa.timestamp("us", tz="UTC")
            ),
        }
    )


def read_phase(path: str, csn: int) -> None:
    t0 = time.perf_counter()
    lake = Lake(path, LakeSettings(background=False))
    opened = time.perf_counter() - t0
    t0 = time.perf_counter()
    table = lake.read("bench", csn)
    secs = time.perf_counter() - t0
    out = {
        "csn": csn,
        "rows": table.num_rows,
        "seconds": secs,
        "rows_per_s": table.num_rows / secs,
        "open_seconds": opened,
        "peak_rss_mb": peak_rss_mb(),
        "checksum": int(np.sum(table.column("b").to_numpy())),
    }
    lake.close()
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dir")
    ap.add_argument("--json")
    ap.add_argument("--read", nargs=2, metavar=("DIR", "CSN"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.read:
        read_phase(args.read[0], int(args.read[1]))
        return
    path = Path(args.dir or tempfile.mkdtemp(prefix="bench-lake-"))
    if path.exists():
        shutil.rmtree(path)
    n = args.rows
    res: dict[str, object] = {"rows": n}
    lake = Lake(path, LakeSettings(background=False))
    with lake.begin() as tx:
        tx.create_table(
            "bench",
            [("id", "bigint"), ("a", "int"), ("b", "int"), ("c", "text"), ("ts", "timestamptz")],
            primary_key=["id"],
        )
    data = make_rows(0, n)
    t0 = time.perf_counter()
    with lake.begin() as tx:
        tx.insert("bench", data)
    res["insert_seconds"] = time.perf_counter() - t0
    res["insert_rows_per_s"] = n / res["insert_seconds"]  # type: ignore[operator]
    s_old = lake.frontier
    lake.holds.hold("bench old snapshot", csn=s_old)
    t0 = time.perf_counter()
    lake.fold()
    lake.checkpoint(force=True)
    res["first_fold_checkpoint_seconds"] = time.perf_counter() - t0

    k = n // 100
    t0 = time.perf_counter()
    with lake.begin() as tx:
        tx.update("bench", {"b": -1}, f"id % 100 = 1 AND id < {n}")
    with lake.begin() as tx:
        tx.delete("bench", f"id % 100 = 2 AND id < {n}")
    with lake.begin() as tx:
        tx.insert("bench", make_rows(n, k))
    res["change_1pct_seconds"] = time.perf_counter() - t0
    s_new = lake.frontier

    # Writers during a fold + checkpoint: single-row commits keep going.
    latencies: list[float] = []
    stop = threading.Event()

    def writer() -> None:
        i = 10 * n
        while not stop.is_set():
            t = time.perf_counter()
            with lake.begin() as tx:
                tx.insert("bench", make_rows(i, 1))
            latencies.append(time.perf_counter() - t)
            i += 1

    th = threading.Thread(target=writer)
    th.start()
    time.sleep(0.5)
    before = len(latencies)
    t0 = time.perf_counter()
    lake.fold()
    lake.checkpoint(force=True)
    fold_secs = time.perf_counter() - t0
    during = latencies[before:]
    stop.set()
    th.join()
    res["fold_checkpoint_seconds_with_writer"] = fold_secs
    res["commits_during_fold"] = len(during)
    if during:
        res["commit_ms_during_fold_p50"] = statistics.median(during) * 1000
        res["commit_ms_during_fold_max"] = max(during) * 1000
    res["commit_ms_idle_p50"] = statistics.median(latencies[:before]) * 1000 if before else None
    res["writer_peak_rss_mb"] = peak_rss_mb()
    s_newest = lake.frontier
    lake.close()

    reads = {}
    for name, csn in (("old", s_old), ("new", s_new), ("newest", s_newest)):
        out = subprocess.run(
            [sys.executable, __file__, "--read", str(path), str(csn)],
            capture_output=True,
            text=True,
            check=True,
        )
        reads[name] = json.loads(out.stdout.strip().splitlines()[-1])
    res["reads"] = reads
    res["data_dir_mb"] = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6
    print(json.dumps(res, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    if not args.dir:
        shutil.rmtree(path)


if __name__ == "__main__":
    main()
