#!/usr/bin/env python3
"""Decode-and-send of one big transaction, the proxy next to native PostgreSQL 15.

    .venv/bin/python scripts/bench_stream.py [--rows N] [--reps K] [--subscriber]
                                             [--only-subscriber] [--no-native]

In one run: a native PostgreSQL 15 publisher (``tests.pgcluster``, wal_level=logical) and
the proxy (a ``walsender-proxy serve`` subprocess, fsync off like the test cluster) each get
a table (bigint key, three ints, ~50-byte text, timestamptz: ~110 bytes/row), a
publication and K logical slots; then one N-row transaction is committed on each.

- Scenario 4 (decode and send): ``pg_recvlogical --plugin pgoutput -o proto_version=1 -f
  /dev/null --endpos <LSN after the commit>`` per slot, timed from start to exit. Prints
  rows/s, MB/s of pgoutput payload (measured once more into a file) and the proxy/native
  ratio, with the CPU time of the sending process (the walsender backend; the proxy) and the
  proxy's RSS while streaming.
- Scenario 2 (``--subscriber``): a PostgreSQL 15 subscriber (copy_data = false) per
  publisher; timed from the commit's return until the subscriber's origin has applied it.

Before the proxy's stream starts, the bench waits for the proxy to go idle (the lake folds
the new rows into Parquet in the background), so the figures are decoding's own.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.pgcluster import PgCluster, pg_bindir  # noqa: E402

BIN = pg_bindir()
TABLE = (
    "create table t (id bigint primary key, a int, b int, c int, txt text, ts timestamptz)"
)


def insert_sql(first: int, n: int) -> str:
    return (
        "insert into t select g, g % 1000, g % 7, g * 3, "
        "'row ' || g || ' some text that is about fifty characters long....', "
        "'2024-01-01 00:00:00+00'::timestamptz + g * interval '1 second' "
        f"from generate_series({first}, {first + n - 1}) g"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def psql(port: int, sql: str, *, replication: bool = False, timeout: float = 600) -> str:
    dsn = f"host=127.0.0.1 port={port} user=postgres dbname=postgres"
    if replication:
        dsn += " replication=database"
    out = subprocess.run(
        [str(BIN / "psql"), "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", sql],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if out.returncode != 0:
        raise RuntimeError(f"psql on port {port} failed: {out.stderr}")
    return out.stdout.strip()


def lsn_int(text: str) -> int:
    hi, lo = text.split("/")
    return (int(hi, 16) << 32) | int(lo, 16)


def recvlogical(port: int, slot: str, *extra: str) -> list[str]:
    return [
        str(BIN / "pg_recvlogical"),
        "-d",
        f"dbname=postgres replication=database host=127.0.0.1 port={port} user=postgres",
        "--slot",
        slot,
        *extra,
    ]


# -- process figures --------------------------------------------------------------------
_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0.0


def children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(d.name))
    return out


class Monitor:
    """Samples a process (found by ``find``) every 20 ms: CPU seconds used, peak RSS."""

    def __init__(self, find: Callable[[], int | None]) -> None:
        self.find = find
        self.pid: int | None = None
        self.cpu0 = 0.0
        self.cpu = 0.0
        self.peak_rss = 0.0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Monitor:
        self.pid = self.find()
        if self.pid is not None:
            self.cpu0 = self.cpu = cpu_seconds(self.pid)
        self._t.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            if self.pid is None:
                self.pid = self.find()
                if self.pid is not None:
                    self.cpu0 = 0.0  # a new backend: all its CPU is this stream's
            if self.pid is not None:
                c = cpu_seconds(self.pid)
                if c:
                    self.cpu = c
                self.peak_rss = max(self.peak_rss, rss_mb(self.pid))
            time.sleep(0.02)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()

    @property
    def used(self) -> float:
        return self.cpu - self.cpu0


# -- publishers -------------------------------------------------------------------------
class Native:
    name = "native"

    def __init__(self) -> None:
        self.pg = PgCluster({"logical_decoding_work_mem": "'64MB'"}).start()
        self.port = self.pg.port
        self.postmaster = int((self.pg.datadir / "postmaster.pid").read_text().split()[0])

    def end_lsn(self) -> int:
        return lsn_int(psql(self.port, "select pg_current_wal_lsn()"))

    def sender(self) -> int | None:
        for pid in children(self.postmaster):
            with contextlib.suppress(OSError):
                if b"walsender" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return pid
        return None

    def stop(self) -> None:
        self.pg.stop()


class Proxy:
    name = "proxy"

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="wpx-bench-stream-"))
        self.port = free_port()
        conf = (ROOT / "conf" / "walsender-proxy.toml").read_text()
        conf = conf.replace("fsync = true", "fsync = false")
        (self.dir / "conf.toml").write_text(conf)
        exe = str(ROOT / ".venv" / "bin" / "walsender-proxy")
        subprocess.run([exe, "init", "-D", str(self.dir / "data")], check=True, capture_output=True)
        self.log = open(self.dir / "log", "w")  # noqa: SIM115
        self._start()

    def _start(self) -> None:
        exe = str(ROOT / ".venv" / "bin" / "walsender-proxy")
        self.proc = subprocess.Popen(
            [exe, "serve", "-D", str(self.dir / "data"), "-p", str(self.port), "-c",
             str(self.dir / "conf.toml")],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 600
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                break
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the proxy did not start: " + (self.dir / "log").read_text())
            time.sleep(0.1)

    def end_lsn(self) -> int:
        return lsn_int(psql(self.port, "IDENTIFY_SYSTEM", replication=True).split("|")[2])

    def restart(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(120)
        self._start()

    def sender(self) -> int | None:
        return self.proc.pid

    def settle(self, quiet: float = 1.0, timeout: float = 120) -> None:
        """Wait until the proxy has used (almost) no CPU for ``quiet`` seconds."""
        deadline = time.monotonic() + timeout
        last, since = cpu_seconds(self.proc.pid), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.2)
            c = cpu_seconds(self.proc.pid)
            if c - last > 0.02:
                last, since = c, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return

    def stop(self) -> None:
        if self.proc.poll() is not None:
            tail = (self.dir / "log").read_text().splitlines()[-20:]
            print(f"the proxy exited with status {self.proc.returncode}:", *tail, sep="\n  ")
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
        if os.environ.get("BENCH_STREAM_KEEP"):
            print(f"proxy data and log kept in {self.dir}")
            return
        shutil.rmtree(self.dir, ignore_errors=True)


def fmt_rate(rows: int, nbytes: int, secs: float) -> str:
    return f"{rows / secs:>11,.0f} rows/s {nbytes / secs / 1e6:7.1f} MB/s ({secs:.2f} s)"


def scenario4(pub: Native | Proxy, rows: int, reps: int, first_id: int) -> dict[str, float]:
    slots = [f"bench_{i}" for i in range(reps + 1)]
    for s in slots:
        subprocess.run(
            recvlogical(pub.port, s, "--create-slot", "--plugin", "pgoutput"),
            check=True,
            capture_output=True,
        )
    t0 = time.perf_counter()
    psql(pub.port, insert_sql(first_id, rows))
    commit_s = time.perf_counter() - t0
    end = pub.end_lsn()
    endpos = f"{end >> 32:X}/{end & 0xFFFFFFFF:X}"
    if isinstance(pub, Proxy):
        pub.settle()
    times, cpus, rss = [], [], []
    pid0 = pub.sender()
    rss0 = rss_mb(pid0) if isinstance(pub, Proxy) and pid0 else 0.0
    opts = ["-o", "proto_version=1", "-o", "publication_names=p", "--plugin", "pgoutput"]
    out_file = Path(tempfile.mkdtemp(prefix="wpx-bench-", dir="/dev/shm")) / "out"
    for i, s in enumerate(slots):
        target = str(out_file) if i == len(slots) - 1 else "/dev/null"
        cmd = recvlogical(pub.port, s, "--start", *opts, "-f", target, "--endpos", endpos)
        with Monitor(pub.sender) as mon:
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, timeout=3600)
            took = time.perf_counter() - t0
        if i < len(slots) - 1:
            times.append(took)
            cpus.append(mon.used)
            rss.append(mon.peak_rss)
        subprocess.run(recvlogical(pub.port, s, "--drop-slot"), check=True, capture_output=True)
    # pg_recvlogical writes each message plus a newline.
    size = out_file.stat().st_size
    nmsgs = rows + 3
    payload = size - nmsgs
    shutil.rmtree(out_file.parent, ignore_errors=True)
    best = min(times)
    print(
        f"  {pub.name:6s} commit {commit_s:5.2f} s | stream best {fmt_rate(rows, payload, best)}"
        f" | all runs {', '.join(f'{t:.2f}' for t in times)} s"
        f" | sender CPU {min(cpus):.2f} s | sender peak RSS {max(rss):.0f} MB"
        + (f" (before the stream {rss0:.0f} MB)" if rss0 else "")
    )
    return {"time": best, "bytes": payload, "cpu": min(cpus), "rss": max(rss)}


def scenario2(pub: Native | Proxy, sub: PgCluster, rows: int, first_id: int) -> float:
    db = f"sub_{pub.name}"
    sub.psql(f"create database {db}")
    sub.psql(TABLE, dbname=db)
    conn = f"host=127.0.0.1 port={pub.port} user=postgres dbname=postgres"
    sub.psql(
        f"create subscription s_{pub.name} connection '{conn}' publication p "
        "with (copy_data = false)",
        dbname=db,
    )
    sub.wait_for(
        f"select count(*) from pg_stat_subscription where subname = 's_{pub.name}' "
        "and received_lsn is not null",
        "1",
    )
    before = pub.end_lsn()
    sub_postmaster = int((sub.datadir / "postmaster.pid").read_text().split()[0])

    def apply_worker() -> int | None:
        for pid in children(sub_postmaster):
            with contextlib.suppress(OSError):
                if b"logical replication worker" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return pid
        return None

    with Monitor(pub.sender) as sender, Monitor(apply_worker) as applier:
        t0 = time.perf_counter()
        psql(pub.port, insert_sql(first_id, rows))
        t1 = time.perf_counter()
        c0, a0 = sender.cpu, applier.cpu
        while True:
            out = sub.psql(
                "select coalesce(max(remote_lsn)::text, '0/0') from pg_replication_origin_status",
                dbname=db,
            ).strip()
            if lsn_int(out) > before:
                break
            if isinstance(pub, Proxy) and pub.proc.poll() is not None:
                raise RuntimeError(f"the proxy exited with status {pub.proc.returncode}")
            if time.perf_counter() - t1 > 1800:
                raise TimeoutError("the subscriber did not apply the transaction in 30 min")
            time.sleep(0.05)
        t2 = time.perf_counter()
        time.sleep(0.05)
        c1, a1 = sender.cpu, applier.cpu
    n = int(sub.psql(f"select count(*) from t where id >= {first_id}", dbname=db))
    assert n == rows, (n, rows)
    sub.psql(f"drop subscription s_{pub.name}", dbname=db)
    print(
        f"  {pub.name:6s} commit {t1 - t0:5.2f} s | commit → applied {t2 - t1:5.2f} s "
        f"({rows / (t2 - t1):,.0f} rows/s) | CPU after the commit: sender {c1 - c0:.2f} s, "
        f"subscriber apply worker {a1 - a0:.2f} s"
    )
    return t2 - t1


def scenario6(rows: int, restart: bool, subscriber: bool) -> None:
    """Proxy RSS while one ``rows``-row transaction streams: to pg_recvlogical with
    proto_version 1, and with proto_version 2 + streaming on; with ``subscriber``, to PG15
    subscribers with streaming off and on as well. ``restart``: restart the proxy between
    the commit and the streams, so the figure is not the writer's leftover memory."""
    proxy = Proxy()
    sub: PgCluster | None = None
    try:
        psql(proxy.port, TABLE)
        psql(proxy.port, "create publication p for table t")
        kinds = [
            ("pg_recvlogical, proto 1", ["-o", "proto_version=1"]),
            ("pg_recvlogical, proto 2, streaming on", ["-o", "proto_version=2", "-o", "streaming=on"]),
        ]
        for i in range(len(kinds)):
            subprocess.run(
                recvlogical(proxy.port, f"mem_{i}", "--create-slot", "--plugin", "pgoutput"),
                check=True,
                capture_output=True,
            )
        subs = []
        if subscriber:
            sub = PgCluster().start()
            for mode in ("off", "on"):
                db = f"sub_stream_{mode}"
                sub.psql(f"create database {db}")
                sub.psql(TABLE, dbname=db)
                conn = f"host=127.0.0.1 port={proxy.port} user=postgres dbname=postgres"
                sub.psql(
                    f"create subscription s_{mode} connection '{conn}' publication p "
                    f"with (copy_data = false, streaming = {mode}, enabled = false)",
                    dbname=db,
                )
                subs.append((mode, db))
        before_commit = proxy.end_lsn()
        t0 = time.perf_counter()
        psql(proxy.port, insert_sql(1, rows), timeout=3600)
        print(f"  commit of {rows:,} rows: {time.perf_counter() - t0:.1f} s, proxy RSS "
              f"{rss_mb(proxy.proc.pid):.0f} MB")
        end = proxy.end_lsn()
        endpos = f"{end >> 32:X}/{end & 0xFFFFFFFF:X}"
        proxy.settle(quiet=2.0, timeout=600)
        if restart:
            proxy.restart()
            proxy.settle(quiet=1.0)
        for i, (label, opts) in enumerate(kinds):
            before = rss_mb(proxy.proc.pid)
            cmd = recvlogical(
                proxy.port, f"mem_{i}", "--start", *opts, "-o", "publication_names=p",
                "--plugin", "pgoutput", "-f", "/dev/null", "--endpos", endpos,
            )
            with Monitor(proxy.sender) as mon:
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True, timeout=3600)
                took = time.perf_counter() - t0
            print(f"  {label}: {rows / took:,.0f} rows/s ({took:.1f} s), proxy RSS before "
                  f"{before:.0f} MB, peak {mon.peak_rss:.0f} MB")
        for mode, db in subs:
            assert sub is not None
            before = rss_mb(proxy.proc.pid)
            with Monitor(proxy.sender) as mon:
                t0 = time.perf_counter()
                sub.psql(f"alter subscription s_{mode} enable", dbname=db)
                while True:
                    out = sub.psql(
                        "select coalesce(max(remote_lsn)::text, '0/0') "
                        "from pg_replication_origin_status",
                        dbname=db,
                    )
                    if lsn_int(out.strip()) > before_commit:  # the only commit since
                        break
                    if proxy.proc.poll() is not None:
                        raise RuntimeError(f"the proxy exited with {proxy.proc.returncode}")
                    time.sleep(0.5)
                took = time.perf_counter() - t0
            n = int(sub.psql("select count(*) from t", dbname=db))
            print(f"  PG15 subscriber, streaming = {mode}: {n:,} rows applied in {took:.1f} s, "
                  f"proxy RSS before {before:.0f} MB, peak {mon.peak_rss:.0f} MB")
            sub.psql(f"drop subscription s_{mode}", dbname=db)
    finally:
        if sub is not None:
            sub.stop()
        proxy.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--subscriber", action="store_true", help="also time scenario 2")
    ap.add_argument("--only-subscriber", action="store_true", help="time scenario 2 alone")
    ap.add_argument("--no-native", action="store_true")
    ap.add_argument(
        "--memory", action="store_true",
        help="scenario 6 alone: proxy RSS while a big transaction (--rows, e.g. 10000000) streams",
    )
    ap.add_argument("--restart", action="store_true", help="--memory: restart the proxy first")
    ap.add_argument("--memory-subscriber", action="store_true", help="--memory: PG15 subscribers too")
    args = ap.parse_args()
    if args.memory:
        print(f"scenario 6: proxy memory while one {args.rows:,}-row transaction streams")
        scenario6(args.rows, args.restart, args.memory_subscriber)
        return
    pubs: list[Native | Proxy] = []
    sub: PgCluster | None = None
    try:
        if not args.no_native:
            pubs.append(Native())
        pubs.append(Proxy())
        for p in pubs:
            psql(p.port, TABLE)
            psql(p.port, "create publication p for table t")
        s4 = {}
        if not args.only_subscriber:
            print(f"scenario 4: decode and send one {args.rows:,}-row transaction to pg_recvlogical")
            s4 = {p.name: scenario4(p, args.rows, args.reps, 1) for p in pubs}
        if "native" in s4:
            n, x = s4["native"], s4["proxy"]
            print(
                f"  proxy/native throughput: {n['time'] / x['time']:.2f}x "
                f"(CPU native {n['cpu']:.2f} s, proxy {x['cpu']:.2f} s)"
            )
        if args.subscriber or args.only_subscriber:
            sub = PgCluster().start()
            print(f"scenario 2: one {args.rows:,}-row transaction, commit → applied on PG15")
            s2 = {p.name: scenario2(p, sub, args.rows, 1 + 2 * args.rows) for p in pubs}
            if "native" in s2:
                print(f"  proxy/native speed: {s2['native'] / s2['proxy']:.2f}x")
    finally:
        if sub is not None:
            sub.stop()
        for p in pubs:
            p.stop()


if __name__ == "__main__":
    main()
