#!/usr/bin/env python3
"""Side by side: the proxy and native PostgreSQL 15 as logical-replication publishers, each
feeding a PostgreSQL 15 subscriber, on the same data with the same settings (fsync on).

    .venv/bin/python scripts/bench.py [--quick] [--repeat N] [--scenarios 1,3,5]
                                      [--json bench-results.json] [--profile [--profile-dir /tmp]]

Scenarios (docs/performance.md explains each):
  1  initial sync of a 1,000,000-row table
  2  one 1,000,000-row transaction: COMMIT → applied on the subscriber
  3  100,000 single-row transactions from 1 and from 8 clients: rate, and lag after the last
  4  decode + send of the 1,000,000-row transaction to pg_recvlogical (rows/s, MB/s)
  5  commit → apply latency of single-row transactions (p50, p99)
  6  peak RSS while a 10,000,000-row transaction streams (streaming=off and on)

Every run gets a fresh publisher (proxy data directory / PostgreSQL database) and a fresh
subscriber database; runs alternate native, proxy. A failed run is reported and the benchmark
goes on. Medians, proxy/native ratios and targets are printed and written as JSON.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from benchlib import report  # noqa: E402
from benchlib.env import RunEnv, RunFailed, Side, pg_recvlogical, sides  # noqa: E402
from benchlib.profile import summarise  # noqa: E402
from benchlib.scenarios import Probe, Sizes, SpyProbe  # noqa: E402

SIDES = ("native", "proxy")


def log(msg: str) -> None:
    print(f"{dt.datetime.now():%H:%M:%S} {msg}", flush=True)


def meta(args: argparse.Namespace, sizes: Sizes) -> dict[str, Any]:
    def out(*cmd: str) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=30).stdout.rstrip()
        except (OSError, subprocess.SubprocessError):
            return ""

    dirty = [ln[3:] for ln in out("git", "status", "--porcelain").splitlines()]
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "mem_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "python": platform.python_version(),
        "postgresql": out(str(Path(pg_recvlogical()).with_name("pg_config")), "--version"),
        "git_commit": out("git", "rev-parse", "HEAD"),
        "git_dirty_files": dirty,
        "proxy_source": f"git archive {args.proxy_rev} ({out('git', 'rev-parse', args.proxy_rev)})"
        if args.proxy_rev else "working tree (.venv/bin/walsender-proxy)",
        "quick": args.quick,
        "smoke": args.smoke,
        "repeat": args.repeat,
        "sizes": sizes.__dict__,
        "settings": "PostgreSQL defaults (fsync, synchronous_commit, full_page_writes on; "
                    "logical_decoding_work_mem 64MB) on publisher and subscribers; proxy default "
                    "configuration ([lake] fsync = true)",
    }


def run_once(side: Side, scn: report.Scenario, sizes: Sizes, probe: Probe, tag: str) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for suffix, fn in scn.parts:
        with RunEnv(side, f"{tag}{suffix}") as env:
            merged.update(report.part_metrics(suffix, fn(env, sizes, probe)))
    return merged


def brief(scn: report.Scenario, m: dict[str, Any]) -> str:
    keys = [x.key for x in scn.metrics]
    parts = []
    for k in keys:
        v = m.get(k)
        if isinstance(v, (int, float)):
            unit = next(x.unit for x in scn.metrics if x.key == k)
            parts.append(f"{k}={report.fmt(v, unit)}")
    return ", ".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes for a smoke run (~1.5 minutes)")
    ap.add_argument("--smoke", action="store_true",
                    help="--quick at the least sizes that still run every step (the test suite's check; "
                         "the figures mean little)")
    ap.add_argument("--repeat", type=int, default=None, help="runs per scenario and side (default 3; 1 with --quick)")
    ap.add_argument("--scenarios", default="1,2,3,4,5,6", help="comma-separated scenario numbers")
    ap.add_argument("--json", default="bench-results.json", help="where to write the results")
    ap.add_argument("--sides", default="native,proxy", help="native,proxy (either alone works too)")
    ap.add_argument("--profile", action="store_true",
                    help="one extra, untimed proxy run of scenarios 1, 2, 3, 4 under py-spy")
    ap.add_argument("--profile-dir", default="/tmp", help="where the py-spy profiles go (prof-sN.txt)")
    ap.add_argument("--s3-max-seconds", type=float, help="cap on each writing phase of scenario 3")
    ap.add_argument("--proxy-rev", metavar="REV",
                    help="run the proxy from `git archive REV` (e.g. HEAD) instead of the working tree")
    ap.add_argument("--rss-limit-mb", type=float, default=8192,
                    help="scenario 6: fail a run whose publisher process grows beyond this (default 8192)")
    args = ap.parse_args()
    args.quick = args.quick or args.smoke
    sizes = Sizes.quick() if args.quick else Sizes()
    if args.smoke:  # every step of every scenario still runs, on the least data
        # (scenario 6 keeps --quick's rows: its stream phase must last long enough for an RSS sample)
        sizes = Sizes(s1_rows=5_000, s2_rows=5_000, s3_txns=200, s3_max_seconds=1.0,
                      s4_rows=5_000, s5_commits=10, s6_rows=150_000)
    sizes.rss_limit_mb = args.rss_limit_mb
    if args.s3_max_seconds:
        sizes.s3_max_seconds = args.s3_max_seconds
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    wanted = [int(x) for x in args.scenarios.split(",") if x.strip()]
    unknown = [w for w in wanted if w not in report.SCENARIOS]
    if unknown:
        ap.error(f"unknown scenarios {unknown}; choose from {sorted(report.SCENARIOS)}")
    side_names = [s for s in args.sides.split(",") if s]
    if any(s not in SIDES for s in side_names):
        ap.error("--sides takes native and/or proxy")

    out_path = Path(args.json)
    results: dict[str, Any] = {"meta": meta(args, sizes), "scenarios": {}, "table": []}
    status: dict[int, dict[str, str]] = {}
    table: list[dict[str, Any]] = []

    def save() -> None:
        results["table"] = table
        out_path.write_text(json.dumps(results, indent=2, default=str) + "\n")

    t_all = time.monotonic()
    interrupted = False
    log(f"starting PostgreSQL clusters ({', '.join(side_names)}); repeat {args.repeat}; scenarios {wanted}")
    try:
        with sides(side_names, args.proxy_rev) as S:
            for sid in wanted:
                scn = report.SCENARIOS[sid]
                res: dict[str, Any] = {"title": scn.title, "size": scn.sizes(sizes), "runs": {s: [] for s in side_names},
                                       "failures": {s: [] for s in side_names}, "notes": scn.notes}
                results["scenarios"][str(sid)] = res
                log(f"S{sid} {scn.title}: {scn.sizes(sizes)}")
                failed: set[str] = set()
                for rep in range(args.repeat):
                    for side in side_names:
                        if side in failed:
                            continue
                        t0 = time.monotonic()
                        try:
                            m = run_once(S[side], scn, sizes, Probe(), f"s{sid}r{rep}{side[0]}")
                        except RunFailed as e:
                            failed.add(side)
                            res["failures"][side].append({"run": rep + 1, "error": e.message, "details": e.details})
                            log(f"  S{sid} {side} run {rep + 1}/{args.repeat}: FAILED: {e.message}")
                            if e.details:
                                print("    " + e.details.strip().replace("\n", "\n    ")[-3000:], flush=True)
                            continue
                        except Exception as e:
                            failed.add(side)
                            tb = traceback.format_exc()
                            res["failures"][side].append({"run": rep + 1, "error": f"{type(e).__name__}: {e}", "details": tb})
                            log(f"  S{sid} {side} run {rep + 1}/{args.repeat}: FAILED (harness): {type(e).__name__}: {e}")
                            print(tb, flush=True)
                            continue
                        res["runs"][side].append(m)
                        log(f"  S{sid} {side} run {rep + 1}/{args.repeat} ({time.monotonic() - t0:.0f} s): {brief(scn, m)}")
                    save()
                status[sid] = {}
                for side in side_names:
                    ok, bad = len(res["runs"][side]), len(res["failures"][side])
                    status[sid][side] = "ok" if not bad else (
                        f"FAILED ({res['failures'][side][0]['error']})" + (f"; {ok} run(s) ok before" if ok else ""))
                res["status"] = status[sid]
                if args.profile and scn.profiled and "proxy" in side_names and "proxy" not in failed:
                    Path(args.profile_dir).mkdir(parents=True, exist_ok=True)
                    prof = Path(args.profile_dir) / f"prof-s{sid}.txt"
                    log(f"  S{sid} proxy: extra run under py-spy → {prof} (not counted)")
                    probe = SpyProbe(prof)
                    try:
                        run_once(S["proxy"], scn, sizes, probe, f"s{sid}prof")
                    except Exception as e:
                        log(f"  S{sid} profile run failed: {e}")
                    finally:
                        probe.stop()
                    if prof.exists():
                        summ = summarise(prof)
                        res["profile"] = {"file": str(prof), **summ.as_dict()}
                        print(summ.render(), flush=True)
                    else:
                        log(f"  S{sid} no profile: {probe.error}")
                rows = report.summarise(scn, res)
                res["summary"] = rows
                table.extend(rows)
                save()
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted; cleaned up")
    results["meta"]["elapsed_s"] = round(time.monotonic() - t_all, 1)
    results["markdown_table"] = report.markdown_table(table)
    save()
    print()
    print(report.render_table(table, status))
    print(f"\n{len(table)} metrics; results in {out_path} ({results['meta']['elapsed_s']:.0f} s)")
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
