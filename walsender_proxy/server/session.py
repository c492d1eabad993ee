"""One client connection: start-up, authentication, then the query loop.

The protocol rules live in :class:`~walsender_proxy.server.machine.ConnectionMachine`; the
SQL in :class:`~walsender_proxy.sql.executor.Executor`, whose blocking work runs in a worker
thread so the event loop keeps serving every other connection. This module only sequences
them and moves bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shlex
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from decoding.errors import PgError
from walsender_proxy.protocol import messages as m
from walsender_proxy.server.context import ServerContext
from walsender_proxy.server.hba import choose_method
from walsender_proxy.server.machine import (
    ConnectionClosed,
    ConnectionMachine,
    MessageReceived,
    ProtocolError,
)
from walsender_proxy.server.roles import Role, Verifier
from walsender_proxy.server.scram import ScramError, ScramServer
from walsender_proxy.sql.executor import Executor, SyntaxErr
from walsender_proxy.sql.outcomes import (
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
from walsender_proxy.sql.settings import Settings

if TYPE_CHECKING:
    from walsender_proxy.replication.walsender import WalSender

log = logging.getLogger("walsender_proxy.session")
T = TypeVar("T")
_END = object()
FLUSH_AT = 1 << 16


_DUMMY_VERIFIER = Verifier.make("\x00no password\x00")


class Disconnect(Exception):
    """The connection ends here (after whatever was already queued is flushed)."""


def error_response(e: PgError, severity: str = "ERROR") -> m.ErrorResponse:
    return m.ErrorResponse.create(
        severity,
        e.sqlstate,
        e.message,
        detail=e.detail,
        hint=e.hint,
        position=getattr(e, "position", None),
    )


class Session:
    def __init__(self, ctx: ServerContext, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.ctx = ctx
        self.reader = reader
        self.writer = writer
        self.machine = ConnectionMachine(max_message_length=ctx.settings.max_message_length)
        self.out: list[bytes] = []
        self.out_size = 0
        peer = writer.get_extra_info("peername")
        self.address: str | None = peer[0] if isinstance(peer, tuple) else None
        self.ssl = False
        self.pid = 0
        self.executor: Executor | None = None
        self.user = ""
        self.database = ""
        self.walsender: WalSender | None = None
        self.temporary_slots: set[str] = set()

    # -- output --------------------------------------------------------------------------
    def send(self, msg: m.BackendMessage) -> None:
        self.queue(self.machine.send(msg))

    def queue(self, data: bytes) -> None:
        self.out.append(data)
        self.out_size += len(data)

    async def flush(self) -> None:
        if self.out:
            self.writer.write(b"".join(self.out))
            self.out.clear()
            self.out_size = 0
        await self.writer.drain()

    async def maybe_flush(self) -> None:
        if self.out_size >= FLUSH_AT:
            await self.flush()

    # -- input ---------------------------------------------------------------------------
    async def next_event(self, timeout: float | None = None, *, flush: bool = True) -> Any:
        while True:
            ev = self.machine.next_event()
            if ev is not None:
                return ev
            if flush:
                await self.flush()
            try:
                data = await asyncio.wait_for(self.reader.read(1 << 16), timeout)
            except (ConnectionError, asyncio.IncompleteReadError):
                data = b""
            self.machine.receive_data(data)

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
            with contextlib.suppress(Exception):
                await self.flush()
            for name in list(self.temporary_slots):
                with contextlib.suppress(PgError):
                    self.ctx.slots.drop(name, self.pid)
            if self.walsender is not None:
                self.walsender._release_export()
            if self.executor is not None:
                ex = self.executor
                self.ctx.snapshots.release(ex)
                await asyncio.to_thread(ex.close)
            if self.pid:
                self.ctx.unregister_backend(self.pid)
                self.ctx.walsender_sessions.discard(self.pid)
            self.writer.close()

    async def fatal(self, e: PgError) -> None:
        self.send(error_response(e, "FATAL"))
        await self.flush()
        raise Disconnect

    # -- start-up and authentication -----------------------------------------------------
    async def startup(self) -> bool:
        timeout = self.ctx.settings.authentication_timeout
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
                    self.writer.write(b"S")
                    await self.writer.drain()
                    await self.writer.start_tls(self.ctx.ssl_context)
                    self.ssl = True
                else:
                    self.writer.write(b"N")
                continue
            if isinstance(msg, m.GSSENCRequest):
                self.writer.write(b"N")
                continue
            if isinstance(msg, m.CancelRequest):
                self.ctx.cancel(msg.process_id, msg.secret_key)
                return False
            if isinstance(msg, m.StartupMessage):
                return await self.accept(msg)
            return False

    async def accept(self, msg: m.StartupMessage) -> bool:
        params = dict(msg.parameters)
        user = params.get("user")
        if not user:
            await self.fatal(PgError("28000", "no PostgreSQL user name specified in startup packet"))
        database = params.get("database") or user
        replication = params.get("replication", "").lower()
        if replication in ("true", "on", "yes", "1"):
            await self.fatal(PgError("0A000", "physical replication is not supported by walsender-proxy", hint='Connect with "replication=database" for logical replication.'))
        is_walsender = replication == "database"
        if replication not in ("", "false", "off", "no", "0", "database"):
            await self.fatal(PgError("22023", f'invalid value for parameter "replication": "{params["replication"]}"'))
        s = self.ctx.settings
        if self.ctx.backend_count() >= s.max_connections:
            await self.fatal(PgError("53300", "sorry, too many clients already"))
        try:
            method = choose_method(s.hba, ssl=self.ssl, address=self.address, database=database, user=user, replication=is_walsender)
        except PgError as e:
            await self.fatal(e)
        role = self.ctx.roles.get(user)
        await self.authenticate(method, user, role)
        assert role is not None
        if database not in s.databases:
            await self.fatal(PgError("3D000", f'database "{database}" does not exist'))
        if not role.login:
            await self.fatal(PgError("28000", f'role "{user}" is not permitted to log in'))
        if is_walsender:
            if not (role.replication or role.superuser):
                await self.fatal(
                    PgError(
                        "42501",
                        "permission denied to start WAL sender",
                        detail="Only roles with the REPLICATION attribute may start a WAL sender process.",
                    )
                )
            if len(self.ctx.walsender_sessions) >= s.max_wal_senders:
                await self.fatal(PgError("53300", f"number of requested standby connections exceeds max_wal_senders (currently {s.max_wal_senders})"))
        settings = Settings(self.ctx.server_parameters())
        settings.set("is_superuser", "on" if role.superuser else "off", force=True)
        settings.set("session_authorization", user, force=True)
        try:
            for name, value in _startup_settings(params):
                settings.set(name, value)
        except PgError as e:
            await self.fatal(e)
        self.user, self.database = user, database
        self.pid, key = self.ctx.register_backend()
        self.executor = Executor(self.ctx, user=user, database=database, settings=settings, backend_pid=self.pid)
        self.ctx.attach(self.pid, self.executor)
        if is_walsender:
            from walsender_proxy.replication.walsender import WalSender

            self.machine.replication = True
            self.walsender = WalSender(self)
            self.ctx.walsender_sessions.add(self.pid)
        self.send(m.AuthenticationOk())
        for name, value in settings.reported():
            self.send(m.ParameterStatus(name, value))
        self.send(m.BackendKeyData(self.pid, key))
        self.send(m.ReadyForQuery("I"))
        log.info("connection authorized: user=%s database=%s application_name=%s", user, database, settings.get("application_name"))
        return True

    async def authenticate(self, method: str, user: str, role: Role | None) -> None:
        if method == "trust":
            if role is None:
                await self.fatal(PgError("28000", f'role "{user}" does not exist'))
            return
        verifier = role.password_verifier() if role is not None else None
        self.machine.start_auth()
        ok = False
        if method == "password":
            self.send(m.AuthenticationCleartextPassword())
            resp = await self._auth_response()
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
        v = verifier or _DUMMY_VERIFIER
        server = ScramServer(v)
        self.send(m.AuthenticationSASL(("SCRAM-SHA-256",)))
        first = (await self._auth_response()).as_sasl_initial()
        if first.mechanism != "SCRAM-SHA-256":
            await self.fatal(PgError("08P01", "client selected an invalid SASL authentication mechanism"))
        try:
            self.send(m.AuthenticationSASLContinue(server.server_first(first.data or b"")))
            final = (await self._auth_response()).as_sasl_response()
            answer = server.server_final(final.data)
        except (ScramError, UnicodeDecodeError, ValueError) as e:
            await self.fatal(PgError("08P01", str(e) if isinstance(e, ScramError) else "malformed SCRAM message"))
        if verifier is None or answer is None:
            return False
        self.send(m.AuthenticationSASLFinal(answer))
        return True

    # -- queries -------------------------------------------------------------------------
    async def query_loop(self) -> None:
        ex = self.executor
        assert ex is not None
        while True:
            ev = await self.next_event()
            if isinstance(ev, ConnectionClosed):
                return
            if isinstance(ev, ProtocolError):
                self.send(ev.error)
                if ev.fatal:
                    return
                continue
            msg = ev.message
            if isinstance(msg, m.Query):
                if self.walsender is not None and await self.walsender.handle(msg.query):
                    continue
                await self.simple_query(ex, msg.query)
            elif isinstance(msg, m.Parse):
                await self.extended(ex.parse_statement, msg.name, msg.query, msg.param_types, ok=m.ParseComplete())
            elif isinstance(msg, m.Bind):
                await self.extended(ex.bind, msg.portal, msg.statement, msg.param_formats, msg.params, msg.result_formats, ok=m.BindComplete())
            elif isinstance(msg, m.Describe):
                await self.describe(ex, msg)
            elif isinstance(msg, m.Execute):
                await self.execute(ex, msg)
            elif isinstance(msg, m.Close):
                await self.extended(ex.close_object, msg.kind, msg.name, ok=m.CloseComplete())
            elif isinstance(msg, m.Sync):
                for o in await self.in_thread(self._sync, ex):
                    self.outcome_message(o)
                self.send(m.ReadyForQuery(ex.status))
            elif isinstance(msg, m.Flush):
                await self.flush()
            elif isinstance(msg, m.FunctionCall):
                self.send(error_response(PgError("0A000", "the function call protocol is not supported")))
                self.machine.extended_error()

    @staticmethod
    def _sync(ex: Executor) -> list[Outcome]:
        try:
            return ex.sync()
        except PgError:
            return []

    def outcome_message(self, o: Outcome) -> None:
        if isinstance(o, Done):
            self.send(m.CommandComplete(o.tag))
        elif isinstance(o, Notice):
            self.send(m.NoticeResponse.create(o.severity, o.sqlstate, o.message, detail=o.detail, hint=o.hint))
        elif isinstance(o, ParameterChanged):
            self.send(m.ParameterStatus(o.name, o.value))
        elif isinstance(o, Empty):
            self.send(m.EmptyQueryResponse())

    async def drive(self, gen: Iterator[Outcome], *, describe: bool, formats: list[int] | None = None, max_rows: int = 0) -> bool:
        """Run outcomes until the generator ends; False if an error was sent."""
        ex = self.executor
        assert ex is not None
        while True:
            try:
                o = await self.in_thread(next, gen, _END)
            except PgError as e:
                self.send(error_response(e))
                return False
            if o is _END:
                return True
            if isinstance(o, Rows):
                if not await self.send_rows(o, describe=describe, formats=formats or []):
                    return False
            elif isinstance(o, CopyOut):
                if not await self.copy_out(o):
                    return False
            elif isinstance(o, CopyIn):
                if not await self.copy_in(o):
                    return False
            else:
                self.outcome_message(o)
            await self.maybe_flush()

    async def simple_query(self, ex: Executor, sql: str) -> None:
        try:
            gen = ex.simple_query(sql)
            await self.drive(gen, describe=True)
        except SyntaxErr as e:
            self.send(error_response(e))
        # Errors in an implicit block roll it back (the executor did); the rest of the
        # message is skipped, as in PostgreSQL.
        try:
            for o in await self.in_thread(ex.end_implicit):
                self.outcome_message(o)
        except PgError as e:
            self.send(error_response(e))
        self.send(m.ReadyForQuery(ex.status))

    async def send_rows(self, rows: Rows, *, describe: bool, formats: list[int], limit: int = 0) -> bool:
        from walsender_proxy.sql.engine import encode_rows

        if describe:
            self.send(row_description(rows.columns, formats))
        count = 0
        it = encode_rows(rows, formats, self.executor)  # type: ignore[arg-type]
        while True:
            try:
                chunk = await self.in_thread(next, it, _END)
            except PgError as e:
                self.send(error_response(e))
                return False
            if chunk is _END:
                break
            data, n = chunk  # type: ignore[misc]
            count += n
            self.queue(data)
            await self.maybe_flush()
        self.send(m.CommandComplete(rows.fixed_tag or f"{rows.verb} {count}"))
        return True

    async def copy_out(self, c: CopyOut) -> bool:
        self.send(m.CopyOutResponse(1 if c.binary else 0, tuple([1 if c.binary else 0] * c.ncols)))
        while True:
            try:
                chunk = await self.in_thread(next, c.chunks, _END)
            except PgError as e:
                self.send(error_response(e))
                return False
            if chunk is _END:
                break
            self.queue(m.encode_copy_data(chunk))  # type: ignore[arg-type]
            await self.maybe_flush()
        self.send(m.CopyDone())
        self.send(m.CommandComplete(f"COPY {c.rows()}"))
        return True

    async def copy_in(self, c: CopyIn) -> bool:
        self.send(m.CopyInResponse(1 if c.binary else 0, tuple([1 if c.binary else 0] * c.ncols)))
        await self.flush()
        failed: PgError | None = None
        while True:
            ev = await self.next_event()
            if isinstance(ev, ConnectionClosed):
                await self.in_thread(c.fail, "connection lost")
                raise Disconnect
            if isinstance(ev, ProtocolError):
                await self.in_thread(c.fail, "protocol violation")
                self.send(ev.error)
                raise Disconnect
            msg = ev.message
            if isinstance(msg, m.CopyData):
                if failed is None:
                    try:
                        await self.in_thread(c.feed, msg.data)
                    except PgError as e:
                        failed = e  # keep reading until CopyDone/CopyFail, then report
            elif isinstance(msg, m.CopyDone):
                self.machine.copy_in_done()
                if failed is not None:
                    await self.in_thread(c.fail, failed.message)
                    self.send(error_response(failed))
                    return False
                try:
                    tag = await self.in_thread(c.finish)
                except PgError as e:
                    self.send(error_response(e))
                    return False
                self.send(m.CommandComplete(tag))
                return True
            elif isinstance(msg, m.CopyFail):
                self.machine.copy_in_done()
                await self.in_thread(c.fail, msg.message)
                self.send(error_response(PgError("57014", f"COPY from stdin failed: {msg.message}")))
                return False

    # -- extended protocol ---------------------------------------------------------------
    async def extended(self, fn: Callable[..., Any], *args: Any, ok: m.BackendMessage) -> None:
        try:
            await self.in_thread(fn, *args)
        except PgError as e:
            self.send(error_response(e))
            self.machine.extended_error()
            ex = self.executor
            if ex is not None:
                ex.fail()
            return
        self.send(ok)

    async def describe(self, ex: Executor, msg: m.Describe) -> None:
        try:
            if msg.kind == "S":
                params, cols = await self.in_thread(ex.describe_statement, msg.name)
                self.send(m.ParameterDescription(tuple(params)))
                formats: list[int] = []
            else:
                cols = await self.in_thread(ex.describe_portal, msg.name)
                portal = ex.portals.get(msg.name)
                formats = portal.result_formats if portal else []
        except PgError as e:
            self.send(error_response(e))
            self.machine.extended_error()
            ex.fail()
            return
        self.send(row_description(cols, formats) if cols is not None else m.NoData())

    async def execute(self, ex: Executor, msg: m.Execute) -> None:
        from walsender_proxy.sql.engine import fetch_portal

        try:
            portal = await self.in_thread(ex.execute_portal, msg.portal)
        except PgError as e:
            self.send(error_response(e))
            self.machine.extended_error()
            return
        ok = True
        while True:
            try:
                step = await self.in_thread(fetch_portal, ex, portal, msg.max_rows)
            except PgError as e:
                self.send(error_response(e))
                ok = False
                break
            kind, payload = step
            if kind == "rows":
                self.queue(payload)
                await self.maybe_flush()
            elif kind == "suspended":
                self.send(m.PortalSuspended())
                break
            elif kind == "done":
                self.send(m.CommandComplete(payload))
                break
            elif kind == "outcome":
                o = payload
                if isinstance(o, CopyOut):
                    ok = await self.copy_out(o)
                    if not ok:
                        break
                elif isinstance(o, CopyIn):
                    ok = await self.copy_in(o)
                    if not ok:
                        break
                else:
                    self.outcome_message(o)
            elif kind == "end":
                break
        if not ok:
            self.machine.extended_error()
            ex.fail()


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

