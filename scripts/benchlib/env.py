"""The two sides of the benchmark and one run's fresh environment.

native: one PostgreSQL 15 publisher cluster (wal_level=logical) and one PostgreSQL 15
subscriber cluster; every run gets a fresh publisher database and a fresh subscriber database.
proxy: the proxy as its own process (``walsender-proxy init`` + ``serve``) and one PostgreSQL 15
subscriber cluster; every run gets a fresh proxy data directory and subscriber database.

Both PostgreSQL clusters run with PostgreSQL's durable defaults (fsync, synchronous_commit,
full_page_writes on); the proxy runs its default configuration (``[lake] fsync = true``).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg

from tests.pgcluster import PgCluster, free_port, pg_bindir

REPO = Path(__file__).resolve().parents[2]

#: PostgreSQL's own defaults where tests/pgcluster.py turns durability off for speed.
DURABLE = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}
#: Applied to every cluster (publisher and subscribers alike).
COMMON = {"max_connections": "100", "log_min_messages": "warning"}


class RunFailed(Exception):
    """One side failed one run of a scenario: what was being done, and what was seen."""

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.details = details


def proxy_exe() -> Path:
    for cand in (REPO / ".venv" / "bin" / "walsender-proxy", Path(sys.executable).with_name("walsender-proxy")):
        if cand.exists():
            return cand
    found = shutil.which("walsender-proxy")
    if not found:
        raise SystemExit("walsender-proxy not found (run scripts/setup, or use .venv/bin/python)")
    return Path(found)


def tail(path: Path, n: int = 40) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-n:])


def sql(conn: psycopg.Connection[Any], query: str, params: Any = None, *, where: str = "") -> Any:
    """Execute; a failure becomes RunFailed naming the statement and the server's answer."""
    try:
        cur = conn.execute(query, params)  # type: ignore[arg-type]
        return cur.fetchall() if cur.description else None
    except psycopg.Error as e:
        short = " ".join(query.split())
        short = short if len(short) < 200 else short[:200] + "…"
        raise RunFailed(f"{where}{short!r} failed: [{e.sqlstate}] {str(e).strip()}") from None


def venv_python() -> str:
    p = REPO / ".venv" / "bin" / "python"
    return str(p) if p.exists() else sys.executable


def export_revision(rev: str, dest: Path) -> Path:
    """``git archive REV`` of the repository into ``dest`` (no change to the repository)."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=REPO, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


class ProxyProcess:
    """``walsender-proxy init -D DIR`` then ``serve -D DIR -p PORT -h 127.0.0.1``; with
    ``source`` (an exported revision), the same commands run from that source tree."""

    def __init__(self, root: Path, source: Path | None = None) -> None:
        self.source = source
        self.root = root
        self.data = root / "data"
        self.log = root / "proxy.log"
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def _cmd(self, *args: str) -> tuple[list[str], dict[str, str], Path]:
        if self.source is None:
            return [str(proxy_exe()), *args], dict(os.environ), REPO
        env = {**os.environ, "PYTHONPATH": str(self.source)}
        return [venv_python(), "-m", "walsender_proxy.cli", *args], env, self.source

    def start(self, timeout: float = 60) -> ProxyProcess:
        self.root.mkdir(parents=True, exist_ok=True)
        init, env, cwd = self._cmd("init", "-D", str(self.data))
        r = subprocess.run(init, capture_output=True, text=True, timeout=120, cwd=cwd, env=env)
        if r.returncode != 0:
            raise RunFailed(f"`{' '.join(init)}` exited {r.returncode}", r.stderr[-2000:])
        serve, env, cwd = self._cmd("serve", "-D", str(self.data), "-p", str(self.port), "-h", "127.0.0.1")
        with open(self.log, "wb") as log:
            # own session: a Ctrl-C of the benchmark does not reach it; cleanup stops it.
            self.proc = subprocess.Popen(serve, stdout=log, stderr=subprocess.STDOUT, cwd=cwd, env=env,
                                         start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            try:
                psycopg.connect(self.dsn(), connect_timeout=2).close()
                return self
            except psycopg.OperationalError as e:
                if self.proc.poll() is not None:
                    raise RunFailed(f"`{' '.join(serve)}` exited {self.proc.returncode} at start", tail(self.log)) from None
                if time.monotonic() > deadline:
                    raise RunFailed(f"`{' '.join(serve)}` not accepting connections after {timeout:.0f} s: {e}", tail(self.log)) from None
                time.sleep(0.1)

    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def children(pid: int) -> list[int]:
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(x) for x in f.read().split()]
    return out + [g for c in out for g in children(c)]


class Publisher:
    """What a scenario needs to know of the publisher side of a run."""

    def __init__(self, side: str, host: str, port: int, dbname: str, proxy: ProxyProcess | None,
                 admin_dsn: str | None = None) -> None:
        self.side = side
        self.host = host
        self.port = port
        self.dbname = dbname
        self.proxy = proxy
        self.admin_dsn = admin_dsn

    def dsn(self) -> str:
        return f"host={self.host} port={self.port} user=postgres dbname={self.dbname}"

    def connect(self, autocommit: bool = True) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self.dsn(), autocommit=autocommit, connect_timeout=10)
        except psycopg.Error as e:
            raise RunFailed(f"connecting to the {self.side} publisher ({self.dsn()}) failed: {e}") from None

    def server_pids(self, application_name: str | None = None) -> list[int]:
        """proxy: the proxy process and its children; native: the walsender(s) of the
        subscription ``application_name`` (PostgreSQL's walsender for a subscription's apply
        worker reports the subscription name)."""
        if self.proxy is not None:
            return [self.proxy.pid, *children(self.proxy.pid)]
        with psycopg.connect(self.dsn(), autocommit=True) as c:
            q = "SELECT pid FROM pg_stat_replication"
            rows = c.execute(q + " WHERE application_name = %s", (application_name,)).fetchall() if application_name else c.execute(q).fetchall()
        return [r[0] for r in rows]

    def lsn(self, conn: psycopg.Connection[Any]) -> str:
        return sql(conn, "SELECT pg_current_wal_insert_lsn()" if self.proxy is None else "SELECT pg_current_wal_lsn()")[0][0]


_run_no = itertools.count(1)


class RunEnv:
    """A fresh publisher (database or proxy) and a fresh subscriber database for one run."""

    def __init__(self, side: Side, tag: str) -> None:
        self.side = side
        self.n = next(_run_no)
        self.tag = f"{tag}_{self.n}"
        self.subdb = f"sub_{self.tag}"
        self.sub = side.subscriber
        self.pub: Publisher
        self._sub_log_start = 0
        self._next_health = 0.0
        self._cleanups: list[Callable[[], None]] = []
        #: More health checks for this run: each returns a failure text or None.
        self.checks: list[Callable[[], str | None]] = []

    # -- set up / tear down ------------------------------------------------------------
    def __enter__(self) -> RunEnv:
        try:
            self._sub_log_start = len(self.sub.log_text)
            with psycopg.connect(self.sub.dsn(), autocommit=True) as c:
                c.execute(f"CREATE DATABASE {self.subdb}")
            self._cleanups.append(self._drop_subscriber_db)
            self.pub = self.side.new_publisher(self.tag, self._cleanups)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        while self._cleanups:
            fn = self._cleanups.pop()
            try:
                fn()
            except Exception as e:  # cleanup goes on; report and continue
                print(f"    (cleanup of {self.tag}: {type(e).__name__}: {e})", flush=True)

    def _drop_subscriber_db(self) -> None:
        # Never contact the publisher here (it may be the thing that broke): detach the
        # subscriptions from their slots, then drop; the publisher's cleanup drops the slots.
        with psycopg.connect(self.sub.dsn(self.subdb), autocommit=True, connect_timeout=10) as c:
            for (name,) in c.execute("SELECT subname FROM pg_subscription WHERE subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())").fetchall():
                c.execute(f"ALTER SUBSCRIPTION {name} DISABLE")
                c.execute(f"ALTER SUBSCRIPTION {name} SET (slot_name = NONE)")
                c.execute(f"DROP SUBSCRIPTION {name}")
        with psycopg.connect(self.sub.dsn(), autocommit=True, connect_timeout=10) as c:
            c.execute(f"DROP DATABASE IF EXISTS {self.subdb} WITH (FORCE)")

    # -- helpers -----------------------------------------------------------------------
    def sub_connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.sub.dsn(self.subdb), autocommit=True, connect_timeout=10)

    def checkpoint(self) -> None:
        """Untimed: flush dirty state on every server of the run before a timed phase."""
        with self.sub_connect() as c:
            c.execute("CHECKPOINT")
        with self.pub.connect() as c:
            sql(c, "CHECKPOINT", where="publisher: ")

    def subscribe(self, name: str, publication: str, options: str = "") -> None:
        conninfo = f"host=127.0.0.1 port={self.pub.port} user=postgres dbname={self.pub.dbname}"
        with self.sub_connect() as c:
            sql(c, f"CREATE SUBSCRIPTION {name} CONNECTION '{conninfo}' PUBLICATION {publication} {options}", where="subscriber: ")

    def sub_errors(self) -> list[str]:
        text = self.sub.log_text[self._sub_log_start:]
        return [ln for ln in text.splitlines() if "ERROR:" in ln]

    def health(self, force: bool = False) -> None:
        """Raise RunFailed if the proxy died or the subscriber logged an error."""
        now = time.monotonic()
        if not force and now < self._next_health:
            return
        self._next_health = now + 0.5
        if self.pub.proxy is not None and not self.pub.proxy.alive():
            raise RunFailed(f"the proxy process exited with code {self.pub.proxy.proc.returncode}",  # type: ignore[union-attr]
                            tail(self.pub.proxy.log))
        for check in self.checks:
            msg = check()
            if msg:
                if self.pub.proxy is not None:
                    self.pub.proxy.stop()
                raise RunFailed(msg, self.proxy_log_excerpt())
        errs = self.sub_errors()
        if errs:
            raise RunFailed(f"the subscriber logged: {errs[0].split('ERROR:', 1)[1].strip()}",
                            "\n".join(errs[:10]) + self.proxy_log_excerpt())

    def proxy_log_excerpt(self) -> str:
        if self.pub.proxy is None:
            return ""
        return "\n--- proxy log (tail) ---\n" + tail(self.pub.proxy.log, 25)

    def wait(self, pred: Callable[[], Any], timeout: float, what: str, interval: float = 0.01) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            v = pred()
            if v:
                return v
            self.health()
            if time.monotonic() > deadline:
                self.health(force=True)
                raise RunFailed(f"timed out after {timeout:.0f} s waiting for {what}", self.proxy_log_excerpt())
            if interval:
                time.sleep(interval)

    def wait_ready(self, subname: str, timeout: float, interval: float = 0.02) -> dict[str, float]:
        """Wait until every table of the subscription is 'r'; the first time each state was seen."""
        seen: dict[str, float] = {}
        t0 = time.perf_counter()
        with self.sub_connect() as c:
            q = ("SELECT r.srsubstate FROM pg_subscription_rel r JOIN pg_subscription s ON s.oid = r.srsubid "
                 "WHERE s.subname = %s")

            def ready() -> bool:
                states = [r[0] for r in c.execute(q, (subname,)).fetchall()]
                for s in states:
                    seen.setdefault(s, time.perf_counter() - t0)
                return bool(states) and all(s == "r" for s in states)

            self.wait(ready, timeout, f"the subscription {subname}'s tables to reach state 'r'", interval)
        return seen


def stop_cluster(cluster: PgCluster) -> None:
    """A fast shutdown first (PostgreSQL then removes its /dev/shm segments), then PgCluster's
    own immediate stop and removal of its directory."""
    if cluster.datadir.exists():
        with contextlib.suppress(Exception):
            cluster._run([str(cluster.bindir / "pg_ctl"), "-D", str(cluster.datadir), "-m", "fast", "-w", "-t", "30", "stop"])
    cluster.stop()


class Side:
    """A publisher kind plus its subscriber cluster, for the whole benchmark."""

    name = "?"

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.subscriber = PgCluster({**COMMON, **DURABLE})

    def start(self) -> Side:
        self.subscriber.start()
        return self

    def stop(self) -> None:
        stop_cluster(self.subscriber)

    def new_publisher(self, tag: str, cleanups: list[Callable[[], None]]) -> Publisher:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {"subscriber_port": self.subscriber.port}


class NativeSide(Side):
    name = "native"

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        self.publisher = PgCluster({**COMMON, **DURABLE, "wal_level": "logical"})

    def start(self) -> NativeSide:
        super().start()
        self.publisher.start()
        return self

    def stop(self) -> None:
        stop_cluster(self.publisher)
        super().stop()

    def new_publisher(self, tag: str, cleanups: list[Callable[[], None]]) -> Publisher:
        db = f"pub_{tag}"
        with psycopg.connect(self.publisher.dsn(), autocommit=True) as c:
            c.execute(f"CREATE DATABASE {db}")

        def drop() -> None:
            with psycopg.connect(self.publisher.dsn(), autocommit=True) as c:
                for _ in range(100):
                    c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (db,))
                    slots = c.execute("SELECT slot_name, active FROM pg_replication_slots WHERE database = %s", (db,)).fetchall()
                    for name, active in slots:
                        if not active:
                            with contextlib.suppress(psycopg.Error):
                                c.execute("SELECT pg_drop_replication_slot(%s)", (name,))
                    if not c.execute("SELECT 1 FROM pg_replication_slots WHERE database = %s", (db,)).fetchall():
                        break
                    time.sleep(0.1)
                c.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")

        cleanups.append(drop)
        return Publisher("native", "127.0.0.1", self.publisher.port, db, None, self.publisher.dsn())

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "publisher_port": self.publisher.port}


class ProxySide(Side):
    name = "proxy"

    def __init__(self, workdir: Path, rev: str | None = None) -> None:
        super().__init__(workdir)
        self.rev = rev
        self.source = export_revision(rev, workdir / "proxy-source") if rev else None

    def new_publisher(self, tag: str, cleanups: list[Callable[[], None]]) -> Publisher:
        px = ProxyProcess(self.workdir / f"proxy_{tag}", self.source)
        cleanups.append(px.remove)
        px.start()
        return Publisher("proxy", "127.0.0.1", px.port, "postgres", px)


@contextlib.contextmanager
def sides(sides_wanted: list[str], proxy_rev: str | None = None) -> Iterator[dict[str, Side]]:
    """Start the clusters; stop them and remove every temporary directory at the end, also
    on Ctrl-C (SIGTERM is turned into KeyboardInterrupt for the same path)."""

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, on_term)
    workdir = Path(tempfile.mkdtemp(prefix="wpx-sbs-"))
    started: dict[str, Side] = {}
    try:
        for name in sides_wanted:
            s: Side = NativeSide(workdir) if name == "native" else ProxySide(workdir, proxy_rev)
            started[name] = s
            s.start()
        yield started
    finally:
        for s in started.values():
            with contextlib.suppress(Exception):
                s.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        signal.signal(signal.SIGTERM, old)


def pg_recvlogical() -> str:
    return str(pg_bindir() / "pg_recvlogical")
