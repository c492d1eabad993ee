"""The proxy, started by tests: a real server on a free loopback port, in a thread of the
test process (so tests can reach into its lake), or as a separate process (crash tests, and
clients that hold the GIL while they wait for an answer, as some libpq calls do)."""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg

from walsender_proxy.lake import Lake, LakeSettings
from walsender_proxy.server.context import ServerContext, ServerSettings
from walsender_proxy.server.server import Server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ProxyServer:
    def __init__(self, data_dir: Path | None = None, *, lake_settings: LakeSettings | None = None, **settings: Any) -> None:
        self.dir = data_dir or Path(tempfile.mkdtemp(prefix="wpx-proxy-"))
        self.port = int(settings.pop("port", 0)) or free_port()  # (a restart keeps its port)
        base = ServerSettings(port=self.port, auth_failure_delay=0.05)
        self.settings = replace(base, **settings)
        self.lake_settings = lake_settings or LakeSettings(fsync=False)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="proxy")
        self.lake: Lake | None = None
        self.server: Server | None = None
        self.ctx: ServerContext | None = None

    def start(self) -> ProxyServer:
        self.lake = Lake(self.dir, self.lake_settings)
        ssl_ctx = None
        if self.settings.ssl_cert_file:
            from walsender_proxy.server.server import make_ssl_context

            s = self.settings
            ssl_ctx = make_ssl_context(
                s.ssl_cert_file, s.ssl_key_file or "",
                min_protocol_version=s.ssl_min_protocol_version,
                max_protocol_version=s.ssl_max_protocol_version,
                ciphers=s.ssl_ciphers,
            )  # fmt: skip
        self.ctx = ServerContext(self.lake, self.settings, ssl_context=ssl_ctx)
        self.server = Server(self.ctx)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(30)
        return self

    def dsn(self, user: str = "postgres", dbname: str = "postgres", **extra: str) -> str:
        parts = [f"host=127.0.0.1 port={self.port} user={user} dbname={dbname}"]
        parts += [f"{k}={v}" for k, v in extra.items()]
        return " ".join(parts)

    def reload(self, **settings: Any) -> None:
        """New settings for the connections that start from now on, as PostgreSQL's reload
        of pg_hba.conf applies to new connections."""
        assert self.ctx is not None
        self.ctx.settings = replace(self.ctx.settings, **settings)
        self.ctx.configured = replace(self.ctx.configured, **settings)

    def stop(self) -> None:
        if self.server is not None:
            asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def __enter__(self) -> ProxyServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ProxyProcess:
    """``walsender-proxy serve`` in a process of its own, over ``data_dir`` (made with
    ``init`` when missing). ``config`` is TOML text appended to the default configuration."""

    def __init__(self, data_dir: Path | None = None, *, config: str = "", server: str = "") -> None:
        """``server``: TOML lines for the configuration's ``[server]`` table."""
        self.dir = data_dir or Path(tempfile.mkdtemp(prefix="wpx-proxy-")) / "data"
        self.port = free_port()
        self.config: Path | None = None
        if config or server:
            default = Path(__file__).parents[1] / "conf" / "walsender-proxy.toml"
            self.config = self.dir.parent / f"proxy-{self.port}.toml"
            text = default.read_text()
            for line in filter(None, server.splitlines()):
                key = line.split("=", 1)[0].strip()
                text, n = re.subn(rf"(?m)^{re.escape(key)}\s*=.*$", lambda _, line=line: line, text, count=1)
                if not n:
                    text = text.replace("[server]\n", f"[server]\n{line}\n", 1)
            self.config.write_text(text + "\n" + config)
        self.proc: subprocess.Popen[str] | None = None
        self.output = ""

    def _cli(self, *args: str) -> list[str]:
        cmd = [sys.executable, "-m", "walsender_proxy.cli", *args, "-D", str(self.dir)]
        return cmd + (["-c", str(self.config)] if self.config else [])

    def start(self) -> ProxyProcess:
        assert self.proc is None, "already running"
        if not self.dir.exists():
            subprocess.run(self._cli("init"), check=True, capture_output=True, timeout=120)
        self.proc = subprocess.Popen(
            [*self._cli("serve"), "-p", str(self.port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(self.dsn(), connect_timeout=2).close()
                return self
            except psycopg.OperationalError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise RuntimeError(f"the proxy did not start:\n{self.output}") from None
                time.sleep(0.1)

    def dsn(self, user: str = "postgres", dbname: str = "postgres", **extra: str) -> str:
        parts = [f"host=127.0.0.1 port={self.port} user={user} dbname={dbname}"]
        parts += [f"{k}={v}" for k, v in extra.items()]
        return " ".join(parts)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop the server (SIGKILL: as a crash would) and keep what it printed."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            out, _ = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        self.output += out or ""
        self.proc = None

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def restart(self) -> ProxyProcess:
        self.stop()
        return self.start()

    def __enter__(self) -> ProxyProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
