"""The proxy, started by tests: a real server on a free loopback port, in a thread of the
test process (so tests can reach into its lake), or as a separate process (crash tests)."""

from __future__ import annotations

import asyncio
import socket
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

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

            ssl_ctx = make_ssl_context(self.settings.ssl_cert_file, self.settings.ssl_key_file or "")
        self.ctx = ServerContext(self.lake, self.settings, ssl_context=ssl_ctx)
        self.server = Server(self.ctx)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(30)
        return self

    def dsn(self, user: str = "postgres", dbname: str = "postgres", **extra: str) -> str:
        parts = [f"host=127.0.0.1 port={self.port} user={user} dbname={dbname}"]
        parts += [f"{k}={v}" for k, v in extra.items()]
        return " ".join(parts)

    def stop(self) -> None:
        if self.server is not None:
            asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def __enter__(self) -> ProxyServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
