"""The six scenarios. Each runs on one side (native or proxy) in a fresh RunEnv and returns its
metrics; anything that goes wrong is raised as RunFailed. The same SQL, data and subscriber
settings are used on both sides."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import struct
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from .env import Publisher, RunEnv, RunFailed, children, pg_recvlogical, sql, tail
from .profile import PySpy
from .rss import RssSampler, status_kb

TABLE = "bench"
PUB = "bench_pub"
SUB = "bench_sub"
DDL = (
    f"CREATE TABLE {TABLE} (id bigint PRIMARY KEY, a int NOT NULL, b int NOT NULL, c int NOT NULL, "
    "s text NOT NULL, ts timestamptz NOT NULL)"
)
#: ~110 bytes a row in PostgreSQL (24-byte tuple header + 88 bytes of data: a 52-char text).
GEN = (
    f"INSERT INTO {TABLE} SELECT i, i % 1000, (i * 7) % 100000, i % 13, md5(i::text) || repeat('x', 20), "
    "timestamptz '2024-01-01 00:00:00+00' + i * interval '1 second' FROM generate_series({lo}, {hi}) AS g(i)"
)
INSERT_ONE = f"INSERT INTO {TABLE} (id, a, b, c, s, ts) VALUES (%s, %s, %s, %s, %s, %s)"
#: count and an md5 over every row's text in key order, in 1000 groups (no 1 GB string for 10M rows).
FINGERPRINT = (
    "SELECT sum(n)::bigint, md5(string_agg(h, '' ORDER BY g)) FROM ("
    "SELECT id % 1000 AS g, count(*) AS n, "
    f"md5(string_agg(concat_ws('|', id, a, b, c, s, ts), ',' ORDER BY id)) AS h FROM {TABLE} GROUP BY 1) AS x"
)
LAST_ROW = f"SELECT 1 FROM {TABLE} WHERE id = %s"
EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def row(i: int) -> tuple[Any, ...]:
    """The row ``i`` exactly as GEN makes it."""
    return (i, i % 1000, (i * 7) % 100000, i % 13, hashlib.md5(str(i).encode()).hexdigest() + "x" * 20,
            EPOCH + dt.timedelta(seconds=i))


@dataclass
class Sizes:
    s1_rows: int = 1_000_000
    s2_rows: int = 1_000_000
    s3_txns: int = 100_000
    s3_clients: int = 8
    s3_max_seconds: float = 60.0
    s4_rows: int = 1_000_000
    s5_commits: int = 500
    s6_rows: int = 10_000_000
    batch: int = 1_000_000
    #: Scenario 6 fails a run whose publisher process grows beyond this (the machine is shared).
    rss_limit_mb: float = 8192.0

    @staticmethod
    def quick() -> Sizes:
        return Sizes(s1_rows=50_000, s2_rows=50_000, s3_txns=1_000, s3_max_seconds=3.0,
                     s4_rows=50_000, s5_commits=30, s6_rows=150_000)

    @staticmethod
    def timeout(rows: int) -> float:
        return 60.0 + 120.0 * rows / 1e6


class Probe:
    """Hook around a scenario's timed phase (the profiler attaches here)."""

    def start(self, pub: Publisher) -> None:
        pass

    def stop(self) -> None:
        pass


class SpyProbe(Probe):
    def __init__(self, out: Path) -> None:
        self.out = out
        self.spy: PySpy | None = None
        self.error = ""

    def start(self, pub: Publisher) -> None:
        if pub.proxy is not None and self.spy is None:
            self.out.unlink(missing_ok=True)
            self.spy = PySpy(pub.proxy.pid, self.out)
            time.sleep(1.0)  # attached and sampling before the timed phase (this run is untimed)

    def stop(self) -> None:
        if self.spy is not None:
            self.error = self.spy.stop()
            self.spy = None


# -- helpers ------------------------------------------------------------------------------


def load(conn: psycopg.Connection[Any], lo: int, hi: int, batch: int, where: str = "publisher: ") -> None:
    for a in range(lo, hi + 1, batch):
        sql(conn, GEN.format(lo=a, hi=min(hi, a + batch - 1)), where=where)


def fingerprint(conn: psycopg.Connection[Any], where: str) -> tuple[int, str]:
    r = sql(conn, FINGERPRINT, where=where)[0]
    return int(r[0] or 0), str(r[1])


def verify(env: RunEnv, expect_rows: int) -> None:
    """Untimed: the subscriber's table equals the publisher's (count + md5 of every row)."""
    with env.pub.connect() as p, env.sub_connect() as s:
        pub_fp = fingerprint(p, "publisher: ")
        sub_fp = fingerprint(s, "subscriber: ")
    if pub_fp[0] != expect_rows:
        raise RunFailed(f"the publisher holds {pub_fp[0]} rows, expected {expect_rows}")
    if pub_fp != sub_fp:
        raise RunFailed(f"the subscriber's table differs: publisher {pub_fp}, subscriber {sub_fp}")


def subscribed_empty(env: RunEnv, options: str = "") -> None:
    """Both tables empty, the publication, the subscription, its table ready."""
    with env.pub.connect() as p:
        sql(p, DDL, where="publisher: ")
        sql(p, f"CREATE PUBLICATION {PUB} FOR TABLE {TABLE}", where="publisher: ")
    with env.sub_connect() as s:
        s.execute(DDL)
    env.subscribe(SUB, PUB, options)
    env.wait_ready(SUB, 120)


def commit(conn: psycopg.Connection[Any], where: str = "publisher: ") -> None:
    try:
        conn.commit()
    except psycopg.Error as e:
        raise RunFailed(f"{where}COMMIT failed: [{e.sqlstate}] {str(e).strip()}") from None


def wait_row(env: RunEnv, s: psycopg.Connection[Any], key: int, timeout: float, interval: float) -> None:
    env.wait(lambda: s.execute(LAST_ROW, (key,), prepare=True).fetchone(), timeout,
             f"row id={key} on the subscriber", interval)


# -- 1: initial sync ----------------------------------------------------------------------


def s1_initial_sync(env: RunEnv, sz: Sizes, probe: Probe) -> dict[str, Any]:
    n = sz.s1_rows
    with env.pub.connect() as p:
        sql(p, DDL, where="publisher: ")
        load(p, 1, n, sz.batch)
        sql(p, f"CREATE PUBLICATION {PUB} FOR TABLE {TABLE}", where="publisher: ")
        if env.pub.proxy is None:
            p.execute(f"VACUUM ANALYZE {TABLE}")  # settle hint bits / visibility map, untimed
    with env.sub_connect() as s:
        s.execute(DDL)
    env.checkpoint()
    probe.start(env.pub)
    pub_root, sub_root = _publisher_root(env), _postmaster_pid(env.sub.datadir)
    cpu0 = _tree_cpu_s(pub_root), _tree_cpu_s(sub_root)
    t0 = time.perf_counter()
    env.subscribe(SUB, PUB)
    states = env.wait_ready(SUB, sz.timeout(n))
    took = time.perf_counter() - t0
    cpu1 = _tree_cpu_s(pub_root), _tree_cpu_s(sub_root)
    probe.stop()
    verify(env, n)
    floor = subscriber_copy_floor(env)
    return {"sync_s": took, "copy_from_floor_s": floor, "floor_of_sync": floor / took,
            "publisher_cpu_s": cpu1[0] - cpu0[0], "subscriber_cpu_s": cpu1[1] - cpu0[1], "rows": n,
            "first_seen_state_s": {k: round(v, 3) for k, v in states.items()}}


def _postmaster_pid(datadir: Path) -> int:
    return int((datadir / "postmaster.pid").read_text().split()[0])


def _publisher_root(env: RunEnv) -> int:
    """The process whose tree does the publisher's work: the proxy, or native's postmaster."""
    if env.pub.proxy is not None:
        return env.pub.proxy.pid
    native = env.side.publisher  # type: ignore[attr-defined]
    return _postmaster_pid(native.datadir)


def _tree_cpu_s(pid: int) -> float:
    """CPU seconds of a process tree so far: each live process's own time plus what its
    exited, reaped children used (a table sync worker exits when its table is done)."""
    total = 0
    for p in (pid, *children(pid)):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15])
    return total / os.sysconf("SC_CLK_TCK")


def subscriber_copy_floor(env: RunEnv) -> float:
    """The subscriber's own share of S1, measured alone: ``COPY … FROM STDIN`` of the rows it
    just received (the same text, fed from memory in 1 MB writes) into an empty copy of the
    table with its primary key, after a checkpoint as before the timed sync. A table sync
    can take no less whatever the publisher; the ratio target S1 ≤ 0.8x is below this floor
    when the floor is above 0.8 of native's sync time."""
    with env.sub_connect() as s:
        buf = bytearray()
        with s.cursor().copy(f"COPY {TABLE} TO STDOUT") as cp:
            for block in cp:
                buf += block
        floor_table = f"{TABLE}_floor"
        s.execute(f"DROP TABLE IF EXISTS {floor_table}")
        s.execute(DDL.replace(f"TABLE {TABLE} ", f"TABLE {floor_table} ", 1))
        s.execute("CHECKPOINT")
        data = memoryview(buf)
        t0 = time.perf_counter()
        with s.cursor().copy(f"COPY {floor_table} FROM STDIN") as cp:
            for i in range(0, len(data), 1 << 20):
                cp.write(data[i : i + (1 << 20)])
        took = time.perf_counter() - t0
        s.execute(f"DROP TABLE {floor_table}")
    return took


# -- 2: one big transaction ---------------------------------------------------------------


def s2_big_transaction(env: RunEnv, sz: Sizes, probe: Probe) -> dict[str, Any]:
    n = sz.s2_rows
    subscribed_empty(env)
    env.checkpoint()
    with env.pub.connect(autocommit=False) as p, env.sub_connect() as s:
        t = time.perf_counter()
        load(p, 1, n, sz.batch)
        insert_s = time.perf_counter() - t
        probe.start(env.pub)
        t0 = time.perf_counter()
        commit(p)
        commit_s = time.perf_counter() - t0
        wait_row(env, s, n, sz.timeout(n), 0.01)
        took = time.perf_counter() - t0
        probe.stop()
    verify(env, n)
    return {"commit_to_apply_s": took, "insert_s": insert_s, "commit_s": commit_s, "rows": n}


# -- 3: many single-row transactions ------------------------------------------------------


def _writers(env: RunEnv, clients: int, ids: list[list[int]], until: float) -> tuple[int, float, float, list[int]]:
    """Autocommit single-row INSERTs, one thread and connection per client; stops at ``until``.
    Returns (committed, start, end of the last commit, each client's last committed id)."""
    conns = [env.pub.connect() for _ in range(clients)]
    done = [0] * clients
    last_id = [0] * clients
    last_t = [0.0] * clients
    errors: list[str] = []
    start = [0.0]
    barrier = threading.Barrier(clients, action=lambda: start.__setitem__(0, time.perf_counter()))

    def work(k: int) -> None:
        c = conns[k]
        try:
            barrier.wait()
            for i in ids[k]:
                if errors or time.monotonic() > until:
                    return
                c.execute(INSERT_ONE, row(i))
                last_t[k] = time.perf_counter()
                last_id[k] = i
                done[k] += 1
        except psycopg.Error as e:
            errors.append(f"client {k}: INSERT id={i} failed: [{e.sqlstate}] {str(e).strip()}")
        except threading.BrokenBarrierError:
            pass

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(clients)]
    try:
        for th in threads:
            th.start()
        while any(th.is_alive() for th in threads):
            for th in threads:
                th.join(0.5)
            try:
                env.health()
            except RunFailed:
                errors.append("(stopped)")
                raise
    finally:
        for c in conns:
            c.close()
    if errors:
        raise RunFailed(errors[0], "\n".join(errors[1:6]) + env.proxy_log_excerpt())
    return sum(done), start[0], max(last_t), [x for x in last_id if x]


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system, all threads) of a process so far (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _walsender_cpu_s(env: RunEnv) -> dict[int, float]:
    """CPU seconds so far of each of the proxy's child processes (its walsenders)."""
    if env.pub.proxy is None:
        return {}
    return {pid: _cpu_s(pid) for pid in env.pub.server_pids()[1:]}


def _proxy_cpu_s(env: RunEnv) -> tuple[float, int] | None:
    """CPU seconds (user + system, all threads) of the proxy process so far, and its
    threads' voluntary context switches (each a sleep and a wake-up); None natively."""
    if env.pub.proxy is None:
        return None
    pid = env.pub.proxy.pid
    switches = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        switches += int(line.split()[1])
        except OSError:
            pass  # a thread that ended meanwhile
    return _cpu_s(pid), switches


def s3_single_row_txns(env: RunEnv, sz: Sizes, probe: Probe) -> dict[str, Any]:
    subscribed_empty(env)
    env.checkpoint()
    out: dict[str, Any] = {}
    total = 0
    q = f"SELECT count(*) FROM {TABLE} WHERE id = ANY(%s)"
    probe.start(env.pub)
    with env.sub_connect() as s:
        for clients, base in ((1, 0), (sz.s3_clients, 10_000_000)):
            per = sz.s3_txns // clients
            ids = [[base + 1 + k + j * clients for j in range(per)] for k in range(clients)]
            until = time.monotonic() + sz.s3_max_seconds
            cpu0, ws0 = _proxy_cpu_s(env), _walsender_cpu_s(env)
            committed, t_start, t_end, lasts = _writers(env, clients, ids, until)
            cpu1, ws1 = _proxy_cpu_s(env), _walsender_cpu_s(env)
            total += committed
            env.wait(lambda lasts=lasts: s.execute(q, (lasts,)).fetchone()[0] == len(lasts),
                     sz.timeout(committed * 10), "the last commits on the subscriber", 0.002)
            lag = time.perf_counter() - t_end
            out[f"tps_{clients}c"] = committed / (t_end - t_start)
            out[f"lag_{clients}c_s"] = lag
            out[f"txns_{clients}c"] = committed
            out[f"capped_{clients}c"] = committed < per * clients
            if cpu0 is not None and cpu1 is not None and committed:
                out[f"proxy_cpu_us_per_tx_{clients}c"] = round(1e6 * (cpu1[0] - cpu0[0]) / committed)
                out[f"proxy_sleeps_per_tx_{clients}c"] = round((cpu1[1] - cpu0[1]) / committed, 2)
                # The walsender processes (a process alive at both ends of the phase).
                ws = sum(ws1[p] - ws0[p] for p in ws1.keys() & ws0.keys())
                out[f"walsender_cpu_us_per_tx_{clients}c"] = round(1e6 * ws / committed)
    probe.stop()
    verify(env, total)
    return out


# -- 4: decode and send to a minimal consumer ----------------------------------------------


def parse_pgoutput_file(path: Path) -> tuple[Counter[str], int]:
    """pg_recvlogical's output of pgoutput v1: each message followed by a newline.
    Returns message counts by type and the payload bytes (newlines excluded)."""
    data = path.read_bytes()
    mv = memoryview(data)
    counts: Counter[str] = Counter()
    pos = 0
    payload = 0
    unpack_i = struct.Struct("!i").unpack_from
    unpack_h = struct.Struct("!h").unpack_from
    end = len(data)

    def cstr(p: int) -> int:
        return data.index(b"\0", p) + 1

    def tuple_end(p: int) -> int:
        natts = unpack_h(mv, p)[0]
        p += 2
        for _ in range(natts):
            kind = data[p]
            p += 1
            if kind in (0x74, 0x62):  # 't', 'b'
                p += 4 + unpack_i(mv, p)[0]
        return p

    while pos < end:
        start = pos
        kind = chr(data[pos])
        p = pos + 1
        if kind == "B":
            p += 20
        elif kind == "C":
            p += 25
        elif kind == "I":
            p = tuple_end(p + 5)
        elif kind == "R":
            p = cstr(cstr(p + 4)) + 1
            natts = unpack_h(mv, p)[0]
            p += 2
            for _ in range(natts):
                p = cstr(p + 1) + 8
        elif kind == "Y":
            p = cstr(cstr(p + 4))
        elif kind == "O":
            p = cstr(p + 8)
        elif kind == "M":
            p = cstr(p + 9)
            p += 4 + unpack_i(mv, p)[0]
        elif kind in ("U", "D"):
            p += 4
            while chr(data[p]) in ("K", "O"):
                p = tuple_end(p + 1)
            if chr(data[p]) == "N":
                p = tuple_end(p + 1)
        elif kind == "T":
            p += 4 + 1 + 4 * unpack_i(mv, p)[0]
        else:
            raise RunFailed(f"pg_recvlogical output: unknown pgoutput message {kind!r} at byte {pos}")
        if p >= end or data[p] != 0x0A:
            raise RunFailed(f"pg_recvlogical output: message {kind!r} at byte {start} is not followed by a newline")
        counts[kind] += 1
        payload += p - start
        pos = p + 1
    return counts, payload


def s4_decode_send(env: RunEnv, sz: Sizes, probe: Probe) -> dict[str, Any]:
    n = sz.s4_rows
    pub = env.pub
    with pub.connect() as p:
        sql(p, DDL, where="publisher: ")
        sql(p, f"CREATE PUBLICATION {PUB} FOR TABLE {TABLE}", where="publisher: ")
    base = [pg_recvlogical(), "-h", pub.host, "-p", str(pub.port), "-U", "postgres", "-d", pub.dbname, "-S", "bench_s4"]
    r = subprocess.run([*base, "--create-slot", "-P", "pgoutput"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RunFailed(f"`pg_recvlogical --create-slot -P pgoutput` exited {r.returncode}: {r.stderr.strip()}",
                        env.proxy_log_excerpt())
    with pub.connect(autocommit=False) as p:
        load(p, 1, n, sz.batch)
        commit(p)
        end_lsn = pub.lsn(p)
        p.rollback()
    env.checkpoint()
    shm = Path("/dev/shm")
    out = (shm if shm.is_dir() and os.access(shm, os.W_OK) else env.side.workdir) / f"wpx-bench-s4-{env.tag}.bin"
    cmd = [*base, "--start", "--no-loop", "-f", str(out), "-F", "0", "-s", "10",
           "-o", "proto_version=1", "-o", f"publication_names={PUB}", "-E", end_lsn]
    try:
        probe.start(pub)
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            env.wait(lambda: proc.poll() is not None, sz.timeout(n),
                     f"`pg_recvlogical --start -E {end_lsn}` to reach the commit's end LSN", 0.005)
        finally:
            if proc.poll() is None:
                proc.kill()
        took = time.perf_counter() - t0
        probe.stop()
        err = proc.stderr.read() if proc.stderr else ""
        if proc.returncode != 0:
            raise RunFailed(f"`pg_recvlogical --start ... -E {end_lsn}` exited {proc.returncode}: {err.strip()}",
                            env.proxy_log_excerpt())
        counts, payload = parse_pgoutput_file(out)
    finally:
        out.unlink(missing_ok=True)
    if counts["I"] != n or counts["C"] < 1:
        raise RunFailed(f"pg_recvlogical received {counts['I']} Insert and {counts['C']} Commit messages, expected {n} and 1",
                        f"message counts {dict(counts)}")
    return {"stream_s": took, "rows_per_s": n / took, "mb_per_s": payload / took / 1e6,
            "payload_bytes": payload, "messages": dict(counts), "end_lsn": end_lsn}


# -- 5: commit-to-apply latency -----------------------------------------------------------


def s5_latency(env: RunEnv, sz: Sizes, probe: Probe) -> dict[str, Any]:
    subscribed_empty(env)
    env.checkpoint()
    warm = 10
    lat: list[float] = []
    commit_lat: list[float] = []
    with env.pub.connect() as p, env.sub_connect() as s:
        for i in range(1, sz.s5_commits + warm + 1):
            t0 = time.perf_counter()
            try:
                p.execute(INSERT_ONE, row(i))
            except psycopg.Error as e:
                raise RunFailed(f"publisher: INSERT id={i} failed: [{e.sqlstate}] {str(e).strip()}") from None
            t1 = time.perf_counter()
            wait_row(env, s, i, 60, 0.0005)
            t2 = time.perf_counter()
            if i > warm:
                lat.append(t2 - t0)
                commit_lat.append(t1 - t0)
            time.sleep(0.005)
    verify(env, sz.s5_commits + warm)
    return {"p50_ms": pct(lat, 50) * 1e3, "p99_ms": pct(lat, 99) * 1e3, "max_ms": max(lat) * 1e3,
            "commit_p50_ms": pct(commit_lat, 50) * 1e3, "commit_p99_ms": pct(commit_lat, 99) * 1e3,
            "commits": len(lat)}


def pct(xs: list[float], q: float) -> float:
    ys = sorted(xs)
    k = (len(ys) - 1) * q / 100.0
    lo = int(k)
    hi = min(lo + 1, len(ys) - 1)
    return ys[lo] + (ys[hi] - ys[lo]) * (k - lo)


# -- 6: memory while a huge transaction streams ---------------------------------------------


def s6_memory(streaming: str) -> Callable[[RunEnv, Sizes, Probe], dict[str, Any]]:
    def run(env: RunEnv, sz: Sizes, probe: Probe) -> dict[str, Any]:
        n = sz.s6_rows
        subscribed_empty(env, f"WITH (streaming = {streaming})")
        env.checkpoint()
        native = env.pub.proxy is None
        pids = env.pub.server_pids(SUB)
        if not pids:
            raise RunFailed("no walsender for the subscription in pg_stat_replication")
        with RssSampler(lambda: env.pub.server_pids(SUB), limit_mb=sz.rss_limit_mb) as rs, env.sub_connect() as s:
            env.checks.append(rs.check)
            with env.pub.connect(autocommit=False) as p:
                rs.mark("load")
                t = time.perf_counter()
                for lo in range(1, n + 1, sz.batch):
                    load(p, lo, min(n, lo + sz.batch - 1), sz.batch)
                    env.health(force=True)
                insert_s = time.perf_counter() - t
                rs.mark("stream")
                t0 = time.perf_counter()
                commit(p)
            wait_row(env, s, n, sz.timeout(n), 0.05)
            took = time.perf_counter() - t0
            rs.mark("done")
            time.sleep(0.1)
        hwm = None if native else max((status_kb(x).get("VmHWM", 0) for x in env.pub.server_pids()), default=0) / 1024
        verify(env, n)
        peak = max(filter(None, (rs.peak_mb("load"), rs.peak_mb("stream"))), default=None)
        return {"peak_rss_mb": peak, "peak_rss_stream_phase_mb": rs.peak_mb("stream"),
                "peak_rss_load_phase_mb": rs.peak_mb("load"),
                "peak_anon_mb": max(filter(None, (rs.peak_mb("load", True), rs.peak_mb("stream", True))), default=None),
                "peak_pss_mb": max(filter(None, (rs.peak_mb("load", pss=True), rs.peak_mb("stream", pss=True))), default=None),
                "peak_union_mb": max(filter(None, (rs.peak_mb("load", union=True), rs.peak_mb("stream", union=True))), default=None),
                "vm_hwm_mb": hwm, "vm_hwm_by_process_mb": {str(k): round(v / 1024) for k, v in rs.hwm.items()},
                "rss_by_process_at_peak_mb": {ph: {str(k): round(v / 1024) for k, v in d.items()} for ph, d in rs.at_peak.items()},
                "insert_s": insert_s, "commit_to_apply_s": took, "rows": n,
                "rss_of": "walsender (VmRSS incl. touched shared_buffers)" if native
                else "proxy process and its walsender processes (sum)"}

    return run


__all__ = ["Probe", "RunFailed", "Sizes", "SpyProbe", "s1_initial_sync", "s2_big_transaction",
           "s3_single_row_txns", "s4_decode_send", "s5_latency", "s6_memory", "tail"]
