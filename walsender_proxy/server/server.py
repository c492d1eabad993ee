"""The asyncio listener: accepts connections, runs a Session for each, shuts down cleanly.

Shutdown follows PostgreSQL's *fast* mode: stop accepting, end every session with FATAL
57P01, then fold the lake's memory tail to Parquet and release the data directory.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import signal
from contextlib import suppress

from walsender_proxy.backend import logs
from walsender_proxy.backend.settings import Settings
from walsender_proxy.server import handover
from walsender_proxy.server.context import ServerContext
from walsender_proxy.server.session import Session
from walsender_proxy.server.tls import make_ssl_context

__all__ = ["Server", "make_ssl_context"]

log = logging.getLogger("walsender_proxy.server")

#: Modules that statements import when first needed (value codecs, COPY, the pg_catalog
#: bridge, the walsender): imported before the server listens, so no client's first
#: statement pays for them — a fresh server's first COPY, a subscriber's table sync, was
#: slower than the next.
PRELOAD = (
    "decoding.copyformat",
    "decoding.pgvalues",
    "walsender_proxy.replication.walsender",
    "walsender_proxy.spark.serve",
    "walsender_proxy.sql.catalog_bridge",
)


class Server:
    def __init__(self, ctx: ServerContext, *, freeze_startup_objects: bool = False) -> None:
        """``freeze_startup_objects``: once listening, move every object alive so far (the
        modules, the pg_catalog tables, the lake as opened) out of the cyclic collector's
        reach, as the walsender template does before it forks. A full collection then walks
        only what came after, so its pauses are shorter (measured with
        `scripts/bench_oltp.py`; figures in docs/changelog/performance.md). Only for a process
        that is the server (the CLI): in a test process it would keep cyclic garbage."""
        self.ctx = ctx
        self._freeze = freeze_startup_objects
        self._servers: list[asyncio.base_events.Server] = []
        self._sessions: set[asyncio.Task[None]] = set()
        self._stopped = asyncio.Event()

    @property
    def ports(self) -> list[int]:
        return [s.sockets[0].getsockname()[1] for s in self._servers if s.sockets]

    async def start(self) -> None:
        s = self.ctx.settings
        Settings(self.ctx.server_parameters())  # every configured setting checked, as at a start
        logs.set_line_prefix(s.log_line_prefix)
        for name in PRELOAD:
            importlib.import_module(name)
        hosts = [h.strip() for h in s.listen_addresses.split(",") if h.strip()]
        hosts = ["0.0.0.0" if h == "*" else "127.0.0.1" if h == "localhost" else h for h in hosts]
        for host in hosts:
            srv = await handover.start_server(self._accept, host, s.port, limit=1 << 20)
            self._servers.append(srv)
            for sock in srv.sockets:
                addr = sock.getsockname()
                fam = "IPv6" if ":" in addr[0] else "IPv4"
                log.info('listening on %s address "%s", port %d', fam, addr[0], addr[1])
        self.ctx.sender_pool()  # walsender processes get ready in the background
        loop = asyncio.get_running_loop()
        self.ctx.on_reload.append(lambda: loop.call_soon_threadsafe(self._reloaded))
        if self._freeze:
            gc.collect()
            gc.freeze()
        log.info("database system is ready to accept connections")

    def _reloaded(self) -> None:
        """After a reload (on the loop): running streams apply the new settings."""
        params = self.ctx.server_parameters()
        for ws in list(self.ctx.walsenders.values()):
            ws.reloaded(params)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._sessions.add(task)
        try:
            await Session(self.ctx, reader, writer).run()
        except asyncio.CancelledError:
            pass  # shutdown: the session already told its client (57P01)
        except Exception:  # a bug in one session must never take the server down
            log.exception("session ended by an internal error")
            with suppress(Exception):
                writer.close()
        finally:
            self._sessions.discard(task)

    async def stop(self) -> None:
        log.info("received fast shutdown request")
        for srv in self._servers:
            srv.close()
        for t in list(self._sessions):
            t.cancel()
        if self._sessions:
            await asyncio.wait(self._sessions, timeout=10)
        for srv in self._servers:
            with suppress(Exception):
                await srv.wait_closed()
        self.ctx.close_senders()
        await asyncio.to_thread(self.ctx.slots.save_all)
        await asyncio.to_thread(self.ctx.lake.close)
        log.info("database system is shut down")
        self._stopped.set()

    def _sighup(self) -> None:
        log.info("received SIGHUP, reloading configuration files")
        fut = asyncio.get_running_loop().run_in_executor(None, self.ctx.reload)
        fut.add_done_callback(lambda f: f.cancelled() or f.exception())

    async def serve_until_signalled(self) -> None:
        loop = asyncio.get_running_loop()
        stopping: list[asyncio.Task[None]] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, lambda: stopping.append(asyncio.ensure_future(self.stop())) if not stopping else None)
        # SIGHUP (pg_ctl reload's signal): the configuration read again, as pg_reload_conf()
        loop.add_signal_handler(signal.SIGHUP, self._sighup)
        await self.start()
        await self._stopped.wait()
