"""Real PostgreSQL servers for tests: ``initdb`` + ``pg_ctl`` from the local install, on a free
loopback port, as an unprivileged OS user when the tests run as root (PostgreSQL refuses
root). Used as a subscriber, and as the reference the proxy's answers are compared with."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

RUN_AS = "wpx_pg"


def pg_bindir() -> Path:
    env = os.environ.get("PG_BINDIR")
    if env:
        return Path(env)
    out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ensure_user() -> pwd.struct_passwd | None:
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(RUN_AS)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", RUN_AS],
            check=True,
        )
        return pwd.getpwnam(RUN_AS)


class PgCluster:
    """One PostgreSQL instance in a temporary directory."""

    def __init__(self, settings: dict[str, str] | None = None, bindir: Path | None = None) -> None:
        self.bindir = bindir or pg_bindir()
        self.port = free_port()
        self.user = _ensure_user()
        self.root = Path(tempfile.mkdtemp(prefix="wpx-pg-"))
        self.datadir = self.root / "data"
        self.settings = {
            "listen_addresses": "'127.0.0.1'",
            "port": str(self.port),
            "unix_socket_directories": f"'{self.root}'",
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "wal_level": "logical",
            "max_wal_senders": "20",
            "max_replication_slots": "20",
            "max_logical_replication_workers": "20",
            "max_worker_processes": "40",
            "logging_collector": "off",
            "log_min_messages": "warning",
            "timezone": "'UTC'",
            "log_timezone": "'UTC'",
            **(settings or {}),
        }
        if self.user is not None:
            os.chown(self.root, self.user.pw_uid, self.user.pw_gid)

    def _run(self, args: Sequence[str], **kw: object) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if self.user is not None:
            cmd = [
                "setpriv",
                f"--reuid={self.user.pw_uid}",
                f"--regid={self.user.pw_gid}",
                "--init-groups",
                *cmd,
            ]
        return subprocess.run(cmd, capture_output=True, text=True, check=True, **kw)  # type: ignore[call-overload]

    def start(self) -> PgCluster:
        self._run(
            [
                str(self.bindir / "initdb"),
                "-D",
                str(self.datadir),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
            ]
        )
        with open(self.datadir / "postgresql.conf", "a") as f:
            for k, v in self.settings.items():
                f.write(f"{k} = {v}\n")
        with open(self.datadir / "pg_hba.conf", "a") as f:
            f.write("host replication all 127.0.0.1/32 trust\n")
        self._run(
            [
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.datadir),
                "-l",
                str(self.root / "log"),
                "-w",
                "-t",
                "60",
                "start",
            ]
        )
        return self

    @property
    def log_text(self) -> str:
        p = self.root / "log"
        return p.read_text(errors="replace") if p.exists() else ""

    def dsn(self, dbname: str = "postgres", **extra: str) -> str:
        parts = [f"host=127.0.0.1 port={self.port} user=postgres dbname={dbname}"]
        parts += [f"{k}={v}" for k, v in extra.items()]
        return " ".join(parts)

    def psql(self, sql: str, *, dbname: str = "postgres", timeout: float = 60) -> str:
        """Run SQL with the real psql (unaligned, tuples only) and return its output."""
        out = subprocess.run(
            [
                str(self.bindir / "psql"),
                "-X",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                dbname,
                "-c",
                sql,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if out.returncode != 0:
            raise RuntimeError(f"psql failed: {out.stderr}")
        return out.stdout

    def wait_for(self, sql: str, expected: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            last = self.psql(sql).strip()
            if last == expected:
                return
            time.sleep(0.2)
        raise TimeoutError(f"{sql!r} gave {last!r}, expected {expected!r}")

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run(
                [
                    str(self.bindir / "pg_ctl"),
                    "-D",
                    str(self.datadir),
                    "-m",
                    "immediate",
                    "-w",
                    "stop",
                ]
            )
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PgCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
