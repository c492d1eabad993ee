"""One client connection: start-up, authentication, then the query loop.

The protocol rules live in :class:`~walsender_proxy.protocol.machine.ConnectionMachine`; the
SQL in :class:`~walsender_proxy.sql.executor.Executor`, whose blocking work runs in a worker
thread so the event loop keeps serving every other connection. This module only sequences
them and moves bytes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import datetime
import logging
import os
import select
import shlex
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from decoding.errors import PgError
from walsender_proxy.backend import logs
from walsender_proxy.backend.conn import FLUSH_AT, Conn, Disconnect
from walsender_proxy.backend.outcomes import (
    Column,
    CopyIn,
    CopyOut,
    Done,
    Empty,
    Notice,
    Outcome,
    ParameterChanged,
    Rows,
)
from walsender_proxy.backend.roles import Role, Verifier
from walsender_proxy.backend.settings import Settings
from walsender_proxy.protocol import messages as m
from walsender_proxy.protocol.buffer import ProtocolViolation
from walsender_proxy.protocol.machine import (
    ConnectionClosed,
    ConnectionMachine,
    MessageReceived,
    Phase,
    ProtocolError,
)
from walsender_proxy.replication.walsender import WalSender
from walsender_proxy.server import tls
from walsender_proxy.server.context import ServerContext
from walsender_proxy.server.handover import HandoverReader
from walsender_proxy.server.hba import choose_method, replication_mode
from walsender_proxy.server.scram import SCRAM_SHA_256, SCRAM_SHA_256_PLUS, ScramError, ScramServer
from walsender_proxy.sql import privileges
from walsender_proxy.sql.executor import USER_REQUEST, Executor, SyntaxErr
from walsender_proxy.sql.result_rows import encode_rows, fetch_portal

log = logging.getLogger("walsender_proxy.session")
T = TypeVar("T")
_END = object()
#: COPY TO data is sent in bigger pieces: on a replication connection (a tablesync worker's
#: COPY) each send is a hop to the event loop, and 64 KB pieces made that 1,500 hops for a
#: 100 MB table.
COPY_FLUSH_AT = 1 << 20


# Replies that never change, made once: they go out on every extended-protocol round trip.
_PARSE_COMPLETE = m.ParseComplete()
_BIND_COMPLETE = m.BindComplete()
_CLOSE_COMPLETE = m.CloseComplete()
_NO_DATA = m.NoData()
_READY = {status: m.ReadyForQuery(status) for status in "ITE"}


def error_response(e: PgError, severity: str = "ERROR") -> m.ErrorResponse:
    return m.ErrorResponse.create(
        severity,
        e.sqlstate,
        e.message,
        detail=e.detail,
        hint=e.hint,
        position=getattr(e, "position", None),
        context=getattr(e, "where", None),
        schema=e.schema,
        table=e.table,
        column=e.column,
        constraint=e.constraint,
    )


class Session(Conn):
    def __init__(self, ctx: ServerContext, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        super().__init__(reader, writer, ConnectionMachine(max_message_length=ctx.settings.max_message_length))
        self.ctx = ctx
        peer = writer.get_extra_info("peername")
        self.address: str | None = peer[0] if isinstance(peer, tuple) else None
        self.port: int | None = peer[1] if isinstance(peer, tuple) else None
        self.started = datetime.datetime.now(datetime.UTC)
        self.ssl = False
        self.pid = 0
        self.executor: Executor | None = None
        self.user = ""
        self.database = ""
        self.walsender: WalSender | None = None
        self.loop: asyncio.AbstractEventLoop = asyncio.get_running_loop()
        self._thread: threading.Thread | None = None
        self._thread_done: asyncio.Future[None] | None = None
        self._closing = False
        self._fd: int | None = None  # set while the session thread does its own socket I/O
        #: The reported settings as the client last heard them (ParameterStatus), and the
        #: settings' change count then: set_config() changes them inside a query.
        self._reported: dict[str, str] = {}
        self._reported_at = -1
        #: The server's settings generation this session applied (see apply_reload).
        self._config_generation = 0
        #: ReadyForQuery("I") went out and nothing was read since: notifications may go
        #: to the client at once. The pipe wakes a session thread waiting for input; the
        #: thread makes and closes it (under the lock, which writers take too), so its
        #: numbers are never another connection's while anything may read or write them.
        self._idle = False
        #: A ReadyForQuery went out and no message was read since (reloads apply then).
        self._after_ready = True
        self._wake_r: int | None = None
        self._wake_w: int | None = None
        self._wake_lock = threading.Lock()
        self._notified = asyncio.Event()

    def send_error(self, e: PgError) -> None:
        """An ERROR for the client, and PostgreSQL's error recovery with it: whatever layer
        raised it (parse, bind, a row that fails to encode, COPY data, the commit itself),
        the transaction is aborted here — an explicit block enters the failed state, an
        implicit one is rolled back — and the session's temporary replication slots are
        dropped (``AbortCurrentTransaction``, ``ReplicationSlotCleanup``). A cancel is
        worded with its reason here, wherever in the statement it was noticed."""
        ex = self.executor
        if ex is not None:
            ex.fail()
        if (
            ex is not None
            and ex.cancel_reason != USER_REQUEST
            and e.sqlstate == "57014"
            and e.message.startswith("canceling statement due to")  # (not COPY's CopyFail)
        ):
            e = PgError("57014", f"canceling statement due to {ex.cancel_reason}")
        logs.log_error(
            log, e, backend_pid=self.pid, statement=ex.debug_query if ex is not None else None,
            min_error_statement=ex.settings.get("log_min_error_statement") if ex is not None else "error",
            session=ex.log_session if ex is not None else None,
        )  # fmt: skip
        self.send(error_response(e))
        if self.pid:
            self.ctx.slots.drop_temporary_of(self.pid)

    async def in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking work off the event loop. A bug surfaces to the client as XX000 and
        in the log with its traceback; it never takes the connection or server down."""
        try:
            return await asyncio.to_thread(fn, *args)
        except PgError:
            raise
        except Exception as e:
            log.exception("internal error in session %d", self.pid)
            raise PgError("XX000", f"internal error: {type(e).__name__}: {e}") from e

    # -- the connection ------------------------------------------------------------------
    async def run(self) -> None:
        try:
            if not await self.startup():
                return
            await self.query_loop()
        except Disconnect:
            pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                self.send(m.ErrorResponse.create("FATAL", "57P01", "terminating connection due to administrator command"))
            raise
        finally:
            if self.pid:  # (gone from the role's connection count at once, as a backend's PGPROC)
                self.ctx.backends.leaving(self.pid)
            await self._stop_session_thread()
            with contextlib.suppress(Exception):
                await self.flush()
            if self.pid:  # temporary slots and a set-up replication origin end with the session
                self.ctx.slots.drop_temporary_of(self.pid)
                self.ctx.lake.origins.release(self.pid)
            if self.walsender is not None:
                self.walsender.close()
            if self.executor is not None:
                ex = self.executor
                self._log_disconnection()
                self.ctx.snapshots.release(ex)
                await asyncio.to_thread(ex.close)
            if self.pid:
                self.ctx.backends.unregister(self.pid)
                self.ctx.sql.notifications.unregister(self.pid)
            self.writer.close()

    async def fatal(self, e: PgError) -> None:
        self.send(error_response(e, "FATAL"))
        await self.flush()
        raise Disconnect

    # -- start-up and authentication -----------------------------------------------------
    async def startup(self) -> bool:
        timeout = self.ctx.settings.authentication_timeout
        if self.ctx.settings.log_connections:
            port = f" port={self.port}" if self.port else ""
            log.info("connection received: host=%s%s", self.address or "[local]", port)
        while True:
            try:
                ev = await self.next_event(timeout)
            except TimeoutError:
                return False
            if isinstance(ev, ConnectionClosed):
                return False
            if isinstance(ev, ProtocolError):
                self.send(ev.error)
                return False
            msg = ev.message
            if isinstance(msg, m.SSLRequest):
                if self.ctx.ssl_context is not None and not self.ssl:
                    if not await self._start_tls(self.ctx.ssl_context, timeout):
                        return False
                    self.ssl = True
                else:
                    self.writer.write(b"N")
                continue
            if isinstance(msg, m.GSSENCRequest):
                self.writer.write(b"N")
                continue
            if isinstance(msg, m.CancelRequest):
                self.ctx.backends.cancel(msg.process_id, msg.secret_key)
                return False
            if isinstance(msg, m.StartupMessage):
                return await self.accept(msg)
            return False

    async def _start_tls(self, ctx: ssl.SSLContext, timeout: float) -> bool:
        """Answer an SSLRequest with ``S`` and the TLS handshake; False if the handshake
        fails. Then the client gets OpenSSL's alert, as from PostgreSQL (libpq: "tlsv1
        alert protocol version" for a TLS version outside ssl_min/max_protocol_version),
        and the log PostgreSQL's line."""
        transport = self.writer.transport
        transport.pause_reading()  # (the ClientHello stays in the socket, to be looked at)
        self.writer.write(b"S")
        await self.writer.drain()
        if transport.get_extra_info("socket") is None:  # (no socket to look at: TLS as is)
            await self.writer.start_tls(ctx)
            return True
        hello = await tls.peek_client_hello(transport, timeout)
        if hello is None:  # the client closed, or said nothing in time
            return False
        dup, client_hello = hello
        try:
            await self.writer.start_tls(ctx)
            return True
        except (ssl.SSLError, OSError) as e:
            log.info("could not accept SSL connection: %s", tls.ssl_error_text(e))
            with contextlib.suppress(OSError):
                dup.send(tls.handshake_alert(ctx, client_hello))
            return False
        finally:
            dup.close()

    async def accept(self, msg: m.StartupMessage) -> bool:
        params = dict(msg.parameters)
        user = params.get("user")
        if not user:
            await self.fatal(PgError("28000", "no PostgreSQL user name specified in startup packet"))
        database = params.get("database") or user
        try:
            replication = replication_mode(params.get("replication"))
        except PgError as e:
            await self.fatal(e)
        is_walsender = replication == "logical"
        s = self.ctx.settings
        if self.ctx.backends.count() >= s.max_connections:
            await self.fatal(PgError("53300", "sorry, too many clients already"))
        try:
            method = choose_method(s.hba, ssl=self.ssl, address=self.address, database=database, user=user, replication=replication, roles=self.ctx.roles)
        except PgError as e:
            await self.fatal(e)
        role = self.ctx.roles.get(user)
        await self.authenticate(method, user, role)
        self.send(m.AuthenticationOk())  # as PostgreSQL: the checks below fail after it
        # PostgreSQL 15's InitPostgres, in its order and words.
        if role is None:
            await self.fatal(PgError("28000", f'role "{user}" does not exist'))
        if not role.login:
            await self.fatal(PgError("28000", f'role "{user}" is not permitted to log in'))
        if role.connlimit >= 0 and not role.superuser and self.ctx.backends.count_of(user) >= role.connlimit:
            await self.fatal(PgError("53300", f'too many connections for role "{user}"'))
        if replication is not None and not (role.replication or role.superuser):
            await self.fatal(PgError("42501", "must be superuser or replication role to start walsender"))
        if replication == "physical":
            await self.fatal(PgError("0A000", "physical replication is not supported by walsender-proxy", hint='Connect with "replication=database" for logical replication.'))
        if database not in s.databases:
            await self.fatal(PgError("3D000", f'database "{database}" does not exist'))
        if is_walsender and len(self.ctx.backends.walsenders) >= s.max_wal_senders:
            await self.fatal(PgError("53300", f"number of requested standby connections exceeds max_wal_senders (currently {s.max_wal_senders})"))
        if not privileges.may_connect(self.ctx.lake.catalog, privileges.make_who(self.ctx.roles, user)):
            await self.fatal(PgError("42501", f'permission denied for database "{database}"', detail="User does not have CONNECT privilege."))
        self._system = self.ctx.system
        self._hub = self.ctx.sql.notifications
        self._config_generation = self._system.generation
        settings = Settings(self.ctx.server_parameters())
        settings.set("is_superuser", "on" if role.superuser else "off", force=True)
        settings.set("session_authorization", user, force=True)
        try:
            for name, value in _startup_settings(params):
                settings.set(name, value, startup=True)
        except PgError as e:
            await self.fatal(e)
        self.user, self.database = user, database
        self.pid, key = self.ctx.backends.register()
        self.executor = Executor(self.ctx.sql, user=user, database=database, settings=settings, backend_pid=self.pid)
        local = self.writer.get_extra_info("sockname")
        ex = self.executor
        ex.client_addr, ex.client_port, ex.backend_start = self.address, self.port, self.started
        ex.server_addr = local[0] if isinstance(local, tuple) else None
        ex.log_session = logs.LogSession(
            self.pid, user, database, self.address, self.port, self.started.timestamp(),
            "walsender" if is_walsender else "client backend",
            lambda: settings.get("application_name"),
        )  # fmt: skip
        tls = self.writer.get_extra_info("ssl_object") if self.ssl else None
        if tls is not None:  # pg_stat_ssl: SSL_get_version, SSL_get_cipher, its secret bits
            cipher = tls.cipher()
            ex.ssl_info = (tls.version() or "", cipher[0], cipher[2]) if cipher else None
        self.ctx.backends.attach(self.pid, self.executor)
        loop = asyncio.get_running_loop()
        self.ctx.sql.notifications.register(self.pid, lambda: self._wake(loop))
        if is_walsender:

            self.machine.replication = True
            self.walsender = WalSender(self, self.ctx.replication)
            self.ctx.backends.walsenders.add(self.pid)
        for name, value in settings.reported():
            self.send(m.ParameterStatus(name, value))
            self._reported[name] = value
        self._reported_at = settings.changes
        self.send(m.BackendKeyData(self.pid, key))
        self.send(m.ReadyForQuery("I"))
        if settings.get("log_connections") == "on":
            log.info("%s", self._authorized_line(is_walsender, params), extra={"session": ex.log_session})
        return True

    def _authorized_line(self, is_walsender: bool, params: dict[str, str]) -> str:
        """log_connections' second line, as PostgreSQL 15's PerformAuthentication words it."""
        if is_walsender:
            text = f"replication connection authorized: user={self.user}"
        else:
            text = f"connection authorized: user={self.user} database={self.database}"
        if "application_name" in params:
            text += f" application_name={params['application_name']}"
        tls = self.writer.get_extra_info("ssl_object")
        if self.ssl and tls is not None:
            cipher = tls.cipher()
            if cipher is not None:
                text += f" SSL enabled (protocol={tls.version()}, cipher={cipher[0]}, bits={cipher[2]})"
        return text

    def _log_disconnection(self) -> None:
        """log_disconnections' line at the end of an authenticated session."""
        ex = self.executor
        if ex is None or ex.settings.get("log_disconnections") != "on":
            return
        ms = int((datetime.datetime.now(datetime.UTC) - self.started).total_seconds() * 1000)
        h, rest = divmod(ms, 3_600_000)
        mi, rest = divmod(rest, 60_000)
        port = f" port={self.port}" if self.port else ""
        log.info(
            "disconnection: session time: %d:%02d:%02d.%03d user=%s database=%s host=%s%s",
            h, mi, rest // 1000, rest % 1000, self.user, self.database, self.address or "[local]", port,
            extra={"session": ex.log_session},
        )  # fmt: skip

    async def authenticate(self, method: str, user: str, role: Role | None) -> None:
        if method == "trust":
            return
        verifier = role.password_verifier() if role is not None else None
        self.machine.start_auth()
        ok = False
        if method == "password":
            self.send(m.AuthenticationCleartextPassword())
            resp = await self._auth_response()
            if not resp.as_password().password:  # PostgreSQL's recv_password_packet
                await self.fatal(PgError("28P01", "empty password returned by client"))
            password = resp.as_password().password.decode("utf-8", "replace")
            ok = verifier is not None and await self.in_thread(verifier.check, password)
        else:  # scram-sha-256 (and md5, which PostgreSQL also runs as SCRAM for SCRAM verifiers)
            ok = await self._scram(user, verifier)
        if not ok:
            await asyncio.sleep(self.ctx.settings.auth_failure_delay)
            await self.fatal(PgError("28P01", f'password authentication failed for user "{user}"'))

    async def _auth_response(self) -> m.AuthResponse:
        ev = await self.next_event(self.ctx.settings.authentication_timeout)
        if isinstance(ev, MessageReceived) and isinstance(ev.message, m.AuthResponse):
            return ev.message
        if isinstance(ev, ProtocolError):
            self.send(ev.error)
        raise Disconnect

    async def _scram(self, user: str, verifier: Verifier | None) -> bool:
        # An unknown user or one without a password still runs the exchange with a
        # made-up verifier, so the failure looks and times the same as a wrong password.
        v = verifier or self.ctx.roles.mock_verifier(user)
        # As PostgreSQL: over TLS, SCRAM-SHA-256-PLUS (channel binding tls-server-end-point)
        # first, then SCRAM-SHA-256.
        cbind = self.ctx.cbind_data if self.ssl else None
        offered = (SCRAM_SHA_256_PLUS, SCRAM_SHA_256) if cbind else (SCRAM_SHA_256,)
        self.send(m.AuthenticationSASL(offered))
        try:
            first = (await self._auth_response()).as_sasl_initial()
            server = ScramServer(v, first.mechanism, tls=self.ssl, cbind_data=cbind)
            data = first.data
            if data is None:  # no initial response: an empty challenge asks for it
                self.send(m.AuthenticationSASLContinue(b""))
                data = (await self._auth_response()).as_sasl_response().data
            self.send(m.AuthenticationSASLContinue(server.server_first(data)))
            final = (await self._auth_response()).as_sasl_response()
            answer = server.server_final(final.data)
        except ScramError as e:
            await self.fatal(e)
        except ProtocolViolation as e:  # a SASL message that does not decode
            await self.fatal(PgError("08P01", str(e)))
        if verifier is None or answer is None:
            return False
        self.send(m.AuthenticationSASLFinal(answer))
        return True

    # -- queries -------------------------------------------------------------------------
    # A normal session runs its whole query loop in a thread of its own (as a PostgreSQL
    # backend is a process of its own): statements block there (DuckDB, fsync) without
    # holding up the event loop, and a round trip costs one hop between that thread and the
    # event loop — which still does all socket I/O — instead of one per message or outcome.
    # A walsender session keeps its loop on the event loop and runs SQL in worker threads.

    async def query_loop(self) -> None:
        ex = self.executor
        assert ex is not None
        self.loop = asyncio.get_running_loop()
        if self.walsender is None:
            await self._in_session_thread(self._query_loop_sync)
            return
        while True:
            ev = await self.next_event()
            if isinstance(ev, ConnectionClosed):
                return
            if isinstance(ev, ProtocolError):
                if not ev.fatal:
                    ex.fail()  # an ERROR aborts the transaction (see send_error)
                self.send(ev.error)
                if ev.fatal:
                    return
                continue
            msg = ev.message
            self._idle = False
            self.apply_reload(ex)  # (a replication connection: each message)
            if isinstance(msg, m.Query):
                if await self.walsender.handle(msg.query):
                    continue
                await asyncio.to_thread(self.simple_query, ex, msg.query)
            elif isinstance(msg, m.Flush):
                await self.flush()
            else:
                await asyncio.to_thread(self.dispatch, ex, msg)

    async def _in_session_thread(self, fn: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def settle(exc: BaseException | None) -> None:
            if done.done():
                return
            if exc is None:
                done.set_result(None)
            else:
                done.set_exception(exc)

        def main() -> None:
            exc: BaseException | None = None
            try:
                fn()
            except BaseException as e:  # handed to the event loop
                exc = e
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                loop.call_soon_threadsafe(settle, exc)

        self._thread = threading.Thread(target=main, name=f"session-{self.pid}", daemon=True)
        self._thread_done = done
        self._thread.start()
        await done

    async def _stop_session_thread(self) -> None:
        """The session ends while its thread may still run (server shutdown): interrupt the
        statement, end the I/O it waits for, and give it a moment to leave (before the
        transport closes the socket it may be using)."""
        done = self._thread_done
        if done is None or done.done():
            return
        self._closing = True
        if self.executor is not None:
            self.executor.cancel()
        sock = self.writer.get_extra_info("socket")
        with contextlib.suppress(Exception):
            sock.shutdown(socket.SHUT_RD)  # its reads end; the FATAL can still go out
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(done), 10)

    # Direct socket I/O: a plain (non-TLS) connection's thread reads and writes the socket
    # itself once the session is set up — no hop through the event loop per round trip. The
    # transport stays paused (reading) and idle (writing) meanwhile, and closes the socket
    # after the thread has left.

    async def _hand_over(self) -> int | None:
        """On the event loop: stop the transport's reading and give the session thread the
        socket, with any bytes the transport had already read. None: keep the loop's I/O."""
        await self.flush()
        transport = self.writer.transport
        sock = self.writer.get_extra_info("socket")
        if self.ssl or sock is None or not isinstance(transport, asyncio.Transport) or not isinstance(self.reader, HandoverReader):
            return None
        transport.pause_reading()
        # A read the selector already reported may still be queued in this loop iteration:
        # let it land in the reader's buffer (taken below) before the thread owns the socket.
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        while transport.get_write_buffer_size():
            await asyncio.sleep(0.001)
        buffered = self._take_buffered()  # (read by the transport before it paused)
        if buffered:
            self.machine.receive_data(buffered)
        if self.reader.at_eof():
            self.machine.receive_data(b"")
        return int(sock.fileno())

    def _take_buffered(self) -> bytes:
        """What the transport read and nobody consumed (only a HandoverReader's session
        hands its socket over)."""
        reader = self.reader
        assert isinstance(reader, HandoverReader)
        return reader.take_buffered()

    def _wake(self, loop: asyncio.AbstractEventLoop) -> None:
        """Notifications arrived for this backend (any thread): wake its wait for input."""
        with self._wake_lock:
            if self._wake_w is not None:
                with contextlib.suppress(OSError):
                    os.write(self._wake_w, b"n")
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._notified.set)

    def send_notifications(self, ex: Executor) -> None:
        """NotificationResponse for each notification this backend has to send, outside a
        transaction block (PostgreSQL holds them until the block ends)."""
        hub = self._hub
        if not hub.has(self.pid) or ex.status != "I":
            return
        for pid, channel, payload in hub.take(self.pid):
            self.send(m.NotificationResponse(pid, channel, payload))

    def _notify_idle(self) -> None:
        """Woken while waiting for input: an idle session sends its notifications now."""
        if self._wake_r is not None:
            with contextlib.suppress(OSError):
                while os.read(self._wake_r, 512):
                    pass
        ex = self.executor
        if self._idle and ex is not None:
            self.send_notifications(ex)

    def _recv_direct(self) -> bytes:
        fd = self._fd
        assert fd is not None
        while not self._closing:
            ready = self._poll_in.poll(1000)
            if any(f == self._wake_r for f, _ in ready):
                self._notify_idle()
                self.flush_sync()
                if not any(f == fd for f, _ in ready):
                    continue
            if ready:
                try:
                    return os.read(fd, 1 << 16)
                except BlockingIOError:
                    continue
                except OSError:
                    return b""
            # Idle for a second: make sure no bytes went the transport's way instead.
            late = self._await(self._reclaim())
            if late:
                return late
        return b""

    async def _reclaim(self) -> bytes:
        """On the event loop: bytes the (paused) transport's reader holds, if any."""
        transport = self.writer.transport
        if transport.is_reading():
            transport.pause_reading()
        data = self._take_buffered()
        if not data:
            return b""
        log.warning("session %d: %d bytes reached the transport after the hand-over", self.pid, len(data))
        return data

    def _send_direct(self, data: bytes) -> None:
        fd = self._fd
        assert fd is not None
        view = memoryview(data)
        while view:
            if self._closing:
                raise Disconnect
            try:
                n = os.write(fd, view)
            except BlockingIOError:
                self._poll_out.poll(1000)
                continue
            view = view[n:]

    def _await(self, coro: Any) -> Any:
        """From the session thread: run ``coro`` on the event loop and wait for it."""
        loop = self.loop
        if not loop.is_running():  # (stopping: it would never run the coroutine)
            coro.close()
            raise Disconnect
        try:
            fut = asyncio.run_coroutine_threadsafe(coro, loop)
        except RuntimeError:  # the loop is closed
            coro.close()
            raise Disconnect from None
        while True:
            try:
                return fut.result(timeout=1.0)
            except TimeoutError:
                if not loop.is_running():
                    fut.cancel()
                    raise Disconnect from None
            except concurrent.futures.CancelledError:
                raise Disconnect from None

    async def _exchange(self) -> None:
        """Send what is queued, then wait for more bytes from the client (sending an idle
        session's notifications as they come)."""
        await self.flush()
        read = asyncio.ensure_future(self.reader.read(1 << 16))
        try:
            while True:
                self._notified.clear()
                woken = asyncio.ensure_future(self._notified.wait())
                await asyncio.wait((read, woken), return_when=asyncio.FIRST_COMPLETED)
                woken.cancel()
                if read.done():
                    break
                self._notify_idle()
                await self.flush()
            data = read.result()
        except (ConnectionError, asyncio.IncompleteReadError):
            data = b""
        finally:
            if not read.done():
                read.cancel()
        self.machine.receive_data(data)

    def next_event_sync(self) -> Any:
        while True:
            ev = self.machine.next_event()
            if ev is not None:
                return ev
            if self.machine.phase is Phase.CLOSED:  # (a FATAL went out: no more events)
                return ConnectionClosed()
            if self._fd is None:
                self._await(self._exchange())
            else:
                self.flush_sync()
                self.machine.receive_data(self._recv_direct())

    def flush_sync(self) -> None:
        if self._fd is None:
            self._await(self.flush())
        elif self.out:
            data = b"".join(self.out)
            self.out.clear()
            self.out_size = 0
            self._send_direct(data)

    def maybe_flush_sync(self) -> None:
        if self.out_size >= FLUSH_AT:
            self.flush_sync()

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run executor work. A bug surfaces to the client as XX000 and in the log with its
        traceback; it never takes the connection or server down."""
        try:
            return fn(*args)
        except (PgError, Disconnect):
            raise
        except Exception as e:
            raise self._internal_error(e) from e

    def _internal_error(self, e: Exception) -> PgError:
        """What :meth:`_call` makes of a bug; call it in the ``except`` clause (it logs the
        traceback being handled). The extended-protocol handlers catch inline instead of
        going through _call: one call layer less per message on the hot path."""
        log.exception("internal error in session %d", self.pid)
        return PgError("XX000", f"internal error: {type(e).__name__}: {e}")

    def _query_loop_sync(self) -> None:
        ex = self.executor
        assert ex is not None
        fd = self._await(self._hand_over())
        if fd is not None:
            # A descriptor of its own: only this thread closes it, so it can never be a
            # reused number pointing at another connection, whatever the transport does.
            fd = os.dup(fd)
            self._poll_in = select.poll()
            self._poll_in.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
            with self._wake_lock:
                self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
            self._poll_in.register(self._wake_r, select.POLLIN)
            self._poll_out = select.poll()
            self._poll_out.register(fd, select.POLLOUT | select.POLLHUP | select.POLLERR)
            self._fd = fd
        try:
            while True:
                ev = self.next_event_sync()
                if type(ev) is MessageReceived:
                    msg = ev.message
                    if self._after_ready:  # (the first message after ReadyForQuery)
                        self._after_ready = self._idle = False
                        self.apply_reload(ex)
                    handler = _HANDLERS.get(type(msg))
                    if handler is not None:
                        handler(self, ex, msg)
                    elif isinstance(msg, m.Query):
                        self.simple_query(ex, msg.query)
                    continue
                if isinstance(ev, ConnectionClosed):
                    return
                if isinstance(ev, ProtocolError):
                    if not ev.fatal:
                        ex.fail()  # an ERROR aborts the transaction (see send_error)
                    self.send(ev.error)
                    if ev.fatal:
                        self.flush_sync()
                        return
        finally:
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    self.flush_sync()  # what the loop would otherwise send after us
                fd, self._fd = self._fd, None
                os.close(fd)
            with self._wake_lock:  # (this thread polled them: it closes them, after)
                wake, self._wake_r, self._wake_w = (self._wake_r, self._wake_w), None, None
            for w in wake:
                if w is not None:
                    with contextlib.suppress(OSError):
                        os.close(w)

    def dispatch(self, ex: Executor, msg: Any) -> None:
        """One frontend message other than Query (session thread or worker thread)."""
        handler = _HANDLERS.get(type(msg))
        if handler is not None:
            handler(self, ex, msg)

    def _on_parse(self, ex: Executor, msg: m.Parse) -> None:
        self.extended(ex.parse_statement, msg.name, msg.query, msg.param_types, ok=_PARSE_COMPLETE)

    def _on_bind(self, ex: Executor, msg: m.Bind) -> None:
        try:
            ex.bind(msg.portal, msg.statement, msg.param_formats, msg.params, msg.result_formats)
        except PgError as e:
            self._extended_failed(e)
            return
        except Disconnect:
            raise
        except Exception as e:
            self._extended_failed(self._internal_error(e))
            return
        self.send(_BIND_COMPLETE)

    def _on_close(self, ex: Executor, msg: m.Close) -> None:
        self.extended(ex.close_object, msg.kind, msg.name, ok=_CLOSE_COMPLETE)

    def _on_sync(self, ex: Executor, msg: m.Sync) -> None:
        for o in self._sync(ex):
            self.outcome_message(o)
        self.report_changed_settings(ex)
        self.send_notifications(ex)
        status = ex.status
        self.send(_READY[status])
        self._idle, self._after_ready = status == "I", True

    def _on_flush(self, ex: Executor, msg: m.Flush) -> None:
        self.flush_sync()

    def _on_function_call(self, ex: Executor, msg: m.FunctionCall) -> None:
        self.send_error(PgError("0A000", "the function call protocol is not supported"))
        self.machine.extended_error()

    def _sync(self, ex: Executor) -> list[Outcome]:
        """Sync ends an implicit transaction: a commit that fails (a full disk, a failed
        fsync) reaches the client as an ErrorResponse before ReadyForQuery, never as
        silence after the statements' CommandComplete."""
        try:
            return ex.sync()
        except PgError as e:
            self.send_error(e)
        except Disconnect:
            raise
        except Exception as e:
            self.send_error(self._internal_error(e))
        return []

    def apply_reload(self, ex: Executor) -> None:
        """The server reloaded its settings since this session last looked: they apply
        before the message just read, as PostgreSQL's backends handle a SIGHUP after
        reading a command (a reported setting that changed is sent before ReadyForQuery)."""
        gen = self._system.generation
        if gen != self._config_generation:
            self._config_generation = gen
            ex.settings.reload(self.ctx.server_parameters())

    def report_changed_settings(self, ex: Executor) -> None:
        """ParameterStatus for each reported setting whose value the client has not heard,
        before ReadyForQuery, as PostgreSQL's ReportChangedGUCOptions sends them: a SET
        reports at once, ``set_config('DateStyle', 'DMY', false)`` in a query only here."""
        if ex.settings.changes == self._reported_at:
            return
        for name, value in ex.settings.reported():
            if self._reported.get(name) != value:
                self.send(m.ParameterStatus(name, value))
                self._reported[name] = value
        self._reported_at = ex.settings.changes

    def outcome_message(self, o: Outcome) -> None:
        if isinstance(o, Done):
            self.send(m.CommandComplete(o.tag))
        elif isinstance(o, Notice):
            self.send(m.NoticeResponse.create(o.severity, o.sqlstate, o.message, detail=o.detail, hint=o.hint))
        elif isinstance(o, ParameterChanged):
            self.send(m.ParameterStatus(o.name, o.value))
            self._reported[o.name] = o.value
        elif isinstance(o, Empty):
            self.send(m.EmptyQueryResponse())

    def drive(self, gen: Iterator[Outcome], *, describe: bool, formats: list[int] | None = None) -> bool:
        """Run outcomes until the generator ends; False if an error was sent."""
        while True:
            try:
                o = self._call(next, gen, _END)
            except PgError as e:
                self.send_error(e)
                return False
            if o is _END:
                return True
            if isinstance(o, Rows):
                if not self.send_rows(o, describe=describe, formats=formats or []):
                    return False
            elif isinstance(o, CopyOut):
                if not self.copy_out(o):
                    return False
            elif isinstance(o, CopyIn):
                if not self.copy_in(o):
                    return False
            else:
                self.outcome_message(o)
            self.maybe_flush_sync()

    def simple_query(self, ex: Executor, sql: str) -> None:
        try:
            gen = ex.simple_query(sql)
            self.drive(gen, describe=True)
        except SyntaxErr as e:
            self.send_error(e)
        # Errors in an implicit block roll it back (the executor did); the rest of the
        # message is skipped, as in PostgreSQL.
        try:
            for o in self._call(ex.end_implicit):
                self.outcome_message(o)
        except PgError as e:
            self.send_error(e)
        self.report_changed_settings(ex)
        self.send_notifications(ex)
        status = ex.status
        self.send(m.ReadyForQuery(status))
        self._idle, self._after_ready = status == "I", True

    def send_rows(self, rows: Rows, *, describe: bool, formats: list[int], limit: int = 0) -> bool:
        if describe:
            self.send(row_description(rows.columns, formats))
        count = 0
        it = encode_rows(rows, formats, self.executor)  # type: ignore[arg-type]
        while True:
            try:
                chunk = self._call(next, it, _END)
            except PgError as e:
                self.send_error(e)
                return False
            if chunk is _END:
                break
            data, n = chunk  # type: ignore[misc]
            count += n
            self.queue(data)
            self.maybe_flush_sync()
        self.send(m.CommandComplete(rows.fixed_tag or f"{rows.verb} {count}"))
        return True

    def copy_out(self, c: CopyOut) -> bool:
        self.send(m.CopyOutResponse(1 if c.binary else 0, tuple([1 if c.binary else 0] * c.ncols)))
        try:
            while True:
                try:
                    chunk = self._call(next, c.chunks, _END)
                except PgError as e:
                    self.send_error(e)
                    return False
                if chunk is _END:
                    break
                self.queue(m.encode_copy_data(chunk))  # type: ignore[arg-type]
                if self.out_size >= COPY_FLUSH_AT:
                    self.flush_sync()
        finally:
            close = getattr(c.chunks, "close", None)
            if close is not None:  # a producer reading ahead stops before the next statement
                close()
        self.send(m.CopyDone())
        self.send(m.CommandComplete(f"COPY {c.rows()}"))
        return True

    def copy_in(self, c: CopyIn) -> bool:
        self.send(m.CopyInResponse(1 if c.binary else 0, tuple([1 if c.binary else 0] * c.ncols)))
        self.flush_sync()
        failed: PgError | None = None
        while True:
            ev = self.next_event_sync()
            if isinstance(ev, ConnectionClosed):
                self._call(c.fail, "connection lost")
                raise Disconnect
            if isinstance(ev, ProtocolError):
                self._call(c.fail, "protocol violation")
                self.send(ev.error)
                raise Disconnect
            msg = ev.message
            if isinstance(msg, m.CopyData):
                if failed is None:
                    try:
                        self._call(c.feed, msg.data)
                    except PgError as e:
                        failed = e  # keep reading until CopyDone/CopyFail, then report
            elif isinstance(msg, m.CopyDone):
                self.machine.copy_in_done()
                if failed is not None:
                    self._call(c.fail, failed.message)
                    self.send_error(failed)
                    return False
                try:
                    tag = self._call(c.finish)
                except PgError as e:
                    self.send_error(e)
                    return False
                self.send(m.CommandComplete(tag))
                return True
            elif isinstance(msg, m.CopyFail):
                self.machine.copy_in_done()
                self._call(c.fail, msg.message)
                self.send_error(PgError("57014", f"COPY from stdin failed: {msg.message}"))
                return False

    # -- extended protocol ---------------------------------------------------------------
    def extended(self, fn: Callable[..., Any], *args: Any, ok: m.BackendMessage) -> None:
        try:
            fn(*args)
        except PgError as e:
            self._extended_failed(e)
            return
        except Disconnect:
            raise
        except Exception as e:
            self._extended_failed(self._internal_error(e))
            return
        self.send(ok)

    def _extended_failed(self, e: PgError) -> None:
        """An extended-protocol message failed: report it (which fails the transaction)
        and skip to Sync."""
        self.send_error(e)
        self.machine.extended_error()

    def describe(self, ex: Executor, msg: m.Describe) -> None:
        try:
            if msg.kind == "S":
                params, cols = ex.describe_statement(msg.name)
                self.send(m.ParameterDescription(tuple(params)))
                formats: list[int] = []
            else:
                cols = ex.describe_portal(msg.name)
                if cols is None:  # DML without RETURNING, utility statements
                    self.send(_NO_DATA)
                    return
                portal = ex.portals.get(msg.name)
                formats = portal.result_formats if portal else []
        except PgError as e:
            self._extended_failed(e)
            return
        except Disconnect:
            raise
        except Exception as e:
            self._extended_failed(self._internal_error(e))
            return
        self.send(row_description(cols, formats) if cols is not None else _NO_DATA)

    def execute(self, ex: Executor, msg: m.Execute) -> None:
        try:
            portal = ex.execute_portal(msg.portal)
        except PgError as e:
            self.send_error(e)
            self.machine.extended_error()
            return
        except Disconnect:
            raise
        except Exception as e:
            self.send_error(self._internal_error(e))
            self.machine.extended_error()
            return
        ok = True
        while True:
            try:
                step = fetch_portal(ex, portal, msg.max_rows)
            except PgError as e:
                self.send_error(e)
                ok = False
                break
            except Disconnect:
                raise
            except Exception as e:
                self.send_error(self._internal_error(e))
                ok = False
                break
            kind, payload = step
            if kind == "rows":
                self.queue(payload)
                self.maybe_flush_sync()
            elif kind == "suspended":
                self.send(m.PortalSuspended())
                break
            elif kind == "done":
                self.send(m.CommandComplete(payload))
                break
            elif kind == "outcome":
                o = payload
                if isinstance(o, CopyOut):
                    ok = self.copy_out(o)
                    if not ok:
                        break
                elif isinstance(o, CopyIn):
                    ok = self.copy_in(o)
                    if not ok:
                        break
                else:
                    self.outcome_message(o)
            elif kind == "end":
                break
        if not ok:
            self.machine.extended_error()


#: The handler of each frontend message type but Query (dispatch, _query_loop_sync).
_HANDLERS: dict[type[m.FrontendMessage], Callable[[Session, Executor, Any], None]] = {
    m.Parse: Session._on_parse,
    m.Bind: Session._on_bind,
    m.Describe: Session.describe,
    m.Execute: Session.execute,
    m.Close: Session._on_close,
    m.Sync: Session._on_sync,
    m.Flush: Session._on_flush,
    m.FunctionCall: Session._on_function_call,
}


def row_description(columns: list[Column], formats: list[int]) -> m.RowDescription:
    fields = []
    for i, c in enumerate(columns):
        fmt = formats[0] if len(formats) == 1 else formats[i] if i < len(formats) else 0
        if fmt == 1:
            c = c.for_binary()
        fields.append(m.FieldDescription(c.name, c.table_oid, c.attnum, c.type_oid, c.typlen, c.typmod, fmt))
    return m.RowDescription(tuple(fields))


def _startup_settings(params: dict[str, str]) -> list[tuple[str, str]]:
    """Start-up packet settings: plain parameters and ``options`` (``-c name=value``,
    ``--name=value``), in the order PostgreSQL applies them."""
    out: list[tuple[str, str]] = []
    opts = params.get("options", "")
    if opts:
        try:
            words = shlex.split(opts.replace("\\ ", "\x00"))
        except ValueError:
            words = opts.split()
        words = [w.replace("\x00", " ") for w in words]
        i = 0
        while i < len(words):
            w = words[i]
            if w == "-c" and i + 1 < len(words):
                name, _, value = words[i + 1].partition("=")
                out.append((name.replace("-", "_"), value))
                i += 2
                continue
            if w.startswith("--") and "=" in w:
                name, _, value = w[2:].partition("=")
                out.append((name.replace("-", "_"), value))
            elif w.startswith("-c") and "=" in w:
                name, _, value = w[2:].partition("=")
                out.append((name, value))
            else:
                raise PgError("42601", f"invalid command-line argument for server process: {w}", hint='Try "postgres --help" for more information.')
            i += 1
    for k, v in params.items():
        if k in ("user", "database", "options", "replication"):
            continue
        if k.startswith("_pq_."):
            continue
        out.append((k, v))
    return out

