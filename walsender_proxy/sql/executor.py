"""One session's SQL: statements parsed by pglast, carried out on the lake and DuckDB.

Statements are dispatched on their syntax tree, never on their text: transaction control and
settings are handled here, DDL goes through :mod:`walsender_proxy.sql.ddl_sql`, DML through
the lake's transaction API (rows chosen and computed by DuckDB over the statement's
snapshot), and queries run in DuckDB after :mod:`walsender_proxy.sql.engine` has rewritten
them. Transactions follow PostgreSQL: implicit per simple-query message or per Sync, or an
explicit block with the failed state ('E') until ROLLBACK.

Everything here blocks (DuckDB, fsync): the session calls it from a worker thread.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa
from pglast import ast, enums, parse_sql
from pglast.parser import ParseError, scan
from pglast.stream import RawStream

from decoding.catalog import (
    FIRST_USER_OID,
    RID,
    TEMP_SCHEMA_PREFIX,
    Catalog,
    Ownership,
    Table,
    is_temp_schema,
)
from decoding.errors import PgError, disk_full_error
from decoding.lsn import format_lsn
from decoding.pgtime import TRANSACTION_NOW
from decoding.pgtypes import ColumnType, parse_type, type_by_oid
from walsender_proxy.backend import logs
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
from walsender_proxy.backend.settings import SUPERUSER_ONLY, Settings, hidden_setting
from walsender_proxy.lake import Isolation, Transaction
from walsender_proxy.lake.transaction import State
from walsender_proxy.sql import (
    comment_sql,
    composite_sql,
    ddl_names,
    ddl_sql,
    domain_casts,
    domain_sql,
    enum_sql,
    explain,
    foreign_key_sql,
    grant_sql,
    index_sql,
    pgcatalog,
    pgcatalog_defs,
    privilege_checks,
    privileges,
    reloptions,
    sequences,
    sql_function_calls,
    sql_functions,
    statement_log,
    system_sql,
    views,
    window_frames,
)
from walsender_proxy.sql.cursors import SqlCursor
from walsender_proxy.sql.engine import Engine
from walsender_proxy.sql.nodes import all_nodes
from walsender_proxy.sql.notifications import PendingNotifies
from walsender_proxy.sql.param_context import FindTable, context_param_types
from walsender_proxy.sql.param_recv import param_receivable
from walsender_proxy.sql.paramtypes import type_name_oid
from walsender_proxy.sql.portals import Portal, Prepared
from walsender_proxy.sql.result_rows import check_result_formats
from walsender_proxy.sql.role_sql import RoleStatements
from walsender_proxy.sql.sequences import SessionSequences
from walsender_proxy.sql.session_zone import timezone_interval
from walsender_proxy.sql.statement_nodes import (
    lasting_effect_call,
    returning,
    set_arg_text,
    set_value_text,
    writes_rows,
)
from walsender_proxy.sql.udf_errors import udf_error

USER_REQUEST = "user request"
STATEMENT_TIMEOUT = "statement timeout"

if TYPE_CHECKING:
    from walsender_proxy.sql.services import SqlServices

log = logging.getLogger("walsender_proxy.sql")

#: PostgreSQL 15's VACUUM and ANALYZE options.
_VACUUM_OPTIONS = frozenset({
    "verbose", "skip_locked", "analyze", "freeze", "full", "disable_page_skipping",
    "index_cleanup", "process_toast", "truncate", "parallel",
})  # fmt: skip
_ANALYZE_OPTIONS = frozenset({"verbose", "skip_locked"})
_ISOLATION = {
    "read uncommitted": Isolation.READ_COMMITTED,
    "read committed": Isolation.READ_COMMITTED,
    "repeatable read": Isolation.REPEATABLE_READ,
    "serializable": Isolation.SERIALIZABLE,
}


def parse(sql: str) -> list[tuple[Any, str]]:
    """(statement node, its text) for each statement; 42601 with PostgreSQL's wording."""
    try:
        raws = parse_sql(sql)
    except ParseError as e:
        msg, loc = (*e.args, "syntax error", None)[:2]
        if not isinstance(loc, int) and str(msg).endswith("at end of input"):
            loc = len(sql)  # (libpg_query leaves it out; PostgreSQL points past the end)
        if str(msg) in _UNPLACED:
            loc = None
        raise SyntaxErr(str(msg), loc if isinstance(loc, int) else None) from None
    if _NEWER_NUMBERS.search(sql):
        _no_newer_numbers(sql)
    if _GENERATED.search(sql):
        _only_stored_generation(sql, raws)
    if _SET_EXPRESSION.search(sql):
        _no_set_expression(sql, raws)
    out = []
    for r in raws:
        start = r.stmt_location or 0
        text = sql[start : start + r.stmt_len] if r.stmt_len else sql[start:]
        out.append((r.stmt, text.strip()))
    return out


#: Grammar errors PostgreSQL 15 reports without a cursor position (the parser here, a
#: later one's, places them).
_UNPLACED = frozenset({
    "WITH TIES cannot be specified without ORDER BY clause",
    "SKIP LOCKED and WITH TIES options cannot be used together",
})  # fmt: skip

#: Numeric literals PostgreSQL 16 reads and 15 does not: ``1_000``, ``0x1f``, ``0o17``, ``0b1``
#: (the parser here is 16's; 15 sees a number with trailing junk); and ``$1a``, which the
#: parser here reads as ``$1 AS a``.
_NEWER_NUMBERS = re.compile(r"[0-9]_[0-9]|\b0[xXoObB][0-9a-fA-F]|\$[0-9]+[A-Za-z_\u0080-\uffff]")


_GENERATED = re.compile(r"generated", re.IGNORECASE)


def _only_stored_generation(sql: str, raws: Any) -> None:
    """``GENERATED ALWAYS AS (…)`` without STORED, or VIRTUAL (the parser here is 18's):
    PostgreSQL 15's grammar stops at the token after the expression."""
    found = [
        n.location
        for n in all_nodes([r.stmt for r in raws])
        if isinstance(n, ast.Constraint) and n.contype == enums.ConstrType.CONSTR_GENERATED and getattr(n, "generated_kind", "s") != "s"
    ]
    if not found:
        return
    tokens = [t for t in scan(sql) if t.start >= min(found)]
    depth, opened = 0, False
    for i, tok in enumerate(tokens):
        text = sql[tok.start : tok.end + 1]
        if text == "(":
            depth, opened = depth + 1, True
        elif text == ")":
            depth -= 1
            if opened and depth == 0:
                if i + 1 < len(tokens):
                    after = tokens[i + 1]
                    raise SyntaxErr(f'syntax error at or near "{sql[after.start : after.end + 1]}"', after.start)
                raise SyntaxErr("syntax error at end of input", len(sql))


_SET_EXPRESSION = re.compile(r"\bexpression\b", re.IGNORECASE)


def _no_set_expression(sql: str, raws: Any) -> None:
    """``ALTER COLUMN … SET EXPRESSION AS (…)`` is PostgreSQL 17's: 15's grammar stops at
    ``expression``."""
    cmds = [c for r in raws if isinstance(r.stmt, ast.AlterTableStmt) for c in r.stmt.cmds or ()]
    if not any(c.subtype == enums.AlterTableType.AT_SetExpression for c in cmds):
        return
    for i, tok in enumerate(tokens := scan(sql)):
        if sql[tok.start : tok.end + 1].lower() == "set" and i + 1 < len(tokens):
            after = tokens[i + 1]
            if sql[after.start : after.end + 1].lower() == "expression":
                raise SyntaxErr(f'syntax error at or near "{sql[after.start : after.end + 1]}"', after.start)


_JUNK = re.compile(r"[0-9]*(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*")


def _no_newer_numbers(sql: str) -> None:
    try:
        tokens = scan(sql)
    except ParseError:  # (the parser took it: nothing to refuse here)
        return
    for i, tok in enumerate(tokens):
        text = sql[tok.start : tok.end + 1]
        if tok.name in ("ICONST", "FCONST") and ("_" in text or text[:2].lower() in ("0x", "0o", "0b")):
            m = _JUNK.match(sql, tok.start)  # (15's token: the number and the name after it)
            raise SyntaxErr(f'trailing junk after numeric literal at or near "{m.group() if m else text}"', tok.start)
        if tok.name == "PARAM" and i + 1 < len(tokens) and tokens[i + 1].start == tok.end + 1 and tokens[i + 1].name == "IDENT":
            junk = sql[tok.start : tokens[i + 1].end + 1]  # (15's param_junk: $1a)
            raise SyntaxErr(f'trailing junk after parameter at or near "{junk}"', tok.start)


class SyntaxErr(PgError):
    def __init__(self, message: str, position: int | None) -> None:
        super().__init__(window_frames.parse_error_sqlstate(message), message)
        self.position = position + 1 if position is not None else None


#: DECLARE's options (PostgreSQL's CURSOR_OPT_*).
_CURSOR_BINARY, _CURSOR_SCROLL, _CURSOR_NO_SCROLL, _CURSOR_HOLD = 0x0001, 0x0002, 0x0004, 0x0020


def _origin_and_two_phase(what: str) -> PgError:
    """Prepared transactions carry no replication origin in the proxy's log: refused in a
    session that set one up, where PostgreSQL would mark them (and a subscriber with
    ``origin = none`` leave them out)."""
    return PgError(
        "0A000", f"{what} in a session with a replication origin set up is not supported by walsender-proxy",
        hint="Call pg_replication_origin_session_reset() first.",
    )  # fmt: skip


class Executor:
    def __init__(self, services: SqlServices, *, user: str, database: str, settings: Settings, backend_pid: int) -> None:
        self.services = services
        self.lake = services.lake
        #: The role that logged in (what SET SESSION AUTHORIZATION may do depends on it).
        self.login_user = user
        self.database = database
        self.settings = settings
        self.backend_pid = backend_pid
        self.tx: Transaction | None = None
        self.explicit = False
        #: The open transaction's LISTEN, UNLISTEN and NOTIFY (applied at its commit).
        self.notifies = PendingNotifies()
        #: Running one of several statements of a simple Query (an implicit block).
        self.implicit_block = False
        #: The running transaction's role changes, their before-images (see _role_changes).
        self._role_undo: dict[str, Any] | None = None
        self._tx_isolation: Isolation | None = None
        self._tx_read_only: bool | None = None
        self._tx_deferrable: bool | None = None
        #: transaction_read_only as each open savepoint found it: a subtransaction's end
        #: (RELEASE or ROLLBACK TO) restores it, as xact.c restores prevXactReadOnly.
        self._savepoint_read_only: list[tuple[str, bool]] = []
        self._imported_csn: int | None = None
        self.statements: dict[str, Prepared] = {}
        self.portals: dict[str, Portal] = {}
        self.cursors: dict[str, SqlCursor] = {}
        #: A statement of the open transaction read a temporary table (PREPARE TRANSACTION refuses it).
        self.temp_read = False
        self.cancelled = threading.Event()
        #: Why the running statement was cancelled: "user request" or "statement timeout"
        #: (the session words the 57014 it sends with it).
        self.cancel_reason = USER_REQUEST
        #: Warnings raised inside a query's functions (DuckDB UDFs), sent before its rows.
        self.notices: list[Notice] = []
        #: The transaction took an advisory lock of its own (released at its end).
        self.advisory_xact = False
        #: The connection (set by the session): the client's address and port (None for a
        #: Unix socket), the server's address, when the client connected.
        self.client_addr: str | None = None
        self.client_port: int | None = None
        self.server_addr: str | None = None
        self.backend_start = datetime.datetime.now(datetime.UTC)
        self.ssl_info: tuple[str, str, int] | None = None
        #: For pg_stat_activity: the last statement, when it started, whether it runs.
        self.query = ""
        #: The text being run, for the log's STATEMENT line: a simple Query's whole string,
        #: or the prepared statement's (PostgreSQL's debug_query_string).
        self.debug_query: str | None = None
        #: What this session's log lines show of it (set by the session).
        self.log_session: logs.LogSession | None = None
        self.query_start: float | None = None
        #: When the current transaction began (Unix microseconds): now(), CURRENT_TIMESTAMP
        #: and 'now' read it, as PostgreSQL's transaction timestamp.
        self.xact_start_us: int = time.time_ns() // 1000
        #: ON COMMIT DROP / DELETE ROWS of this session's temporary tables, by qualified name
        self._on_commit: dict[str, enums.OnCommitAction] = {}
        self.running = False
        #: nextval's cache, currval and lastval of this session
        self.sequences = SessionSequences()
        self.sequences.check = self._sequence_allowed
        self._who_cache: dict[tuple[str, int], privileges.Who] = {}
        self.engine = Engine(self)
        self.roles = RoleStatements(self)

    @property
    def user(self) -> str:
        """The current user: SET ROLE's role, else the session user."""
        role = self.settings.get("role")
        return role if role and role != "none" else self.session_user

    @property
    def session_user(self) -> str:
        """The session user: the role that logged in, or SET SESSION AUTHORIZATION's."""
        return self.settings.get("session_authorization") or self.login_user

    # -- transaction state ---------------------------------------------------------------
    @property
    def status(self) -> str:
        """ReadyForQuery's transaction status: I, T or E."""
        if self.tx is None or not self.explicit:
            return "I"
        return "E" if self.tx.state is State.FAILED else "T"

    def _ensure_tx(self) -> Transaction:
        if self.tx is None or self.tx.state not in (State.ACTIVE, State.FAILED):
            iso = self._tx_isolation or _ISOLATION[self.settings.get("default_transaction_isolation")]
            ro = self._tx_read_only if self._tx_read_only is not None else self.settings.get("default_transaction_read_only") == "on"
            self.tx = self.lake.begin(iso, read_only=ro, snapshot_csn=self._imported_csn)
            self.lake.origins.stamp(self.backend_pid, self.tx)
            self.tx.search_path = tuple(self.search_path())
            self.tx.creation_path = tuple(self.creation_path())
            # (PostgreSQL's transaction timestamp is its first statement's start)
            self.xact_start_us = int(self.query_start * 1_000_000) if self.query_start is not None else time.time_ns() // 1000
            self.settings.begin()
        return self.tx

    def statement_tx(self) -> Transaction:
        """The transaction for a statement that reads or writes: its snapshot is taken now,
        at the statement's start, whether or not it reads a table (``SELECT 1`` fixes a
        REPEATABLE READ snapshot as in PostgreSQL, and the isolation level is settled)."""
        tx = self._ensure_tx()
        tx.statement_csn()
        tx.search_path = tuple(self.search_path())  # (a SET in the transaction moves it)
        tx.creation_path = tuple(self.creation_path())
        return tx

    def _end_tx(self, commit: bool) -> list[Outcome]:
        out: list[Outcome] = []
        tx = self.tx
        self.tx = None
        self.explicit = False
        self._tx_isolation = self._tx_read_only = self._tx_deferrable = self._imported_csn = None
        self._savepoint_read_only = []
        self.temp_read = False
        if self.cursors:  # usually none: no new dict per transaction
            self._keep_cursors(lambda _name, cur: cur.hold and (commit or not cur.pending))
        self.services.snapshots.release(self)
        if self.advisory_xact:
            self.advisory_xact = False
            self.services.advisory.release_all(self.backend_pid, xact=True)
        committed = commit and tx is None
        try:
            if tx is not None:
                if commit and tx.state is State.ACTIVE:
                    try:
                        self._temp_tables_at_commit(tx)
                        tx.commit()
                    except BaseException:
                        # (a COMMIT that fails rolls back: the transaction's locks go with it)
                        if tx.state in (State.ACTIVE, State.FAILED):
                            tx.abort()
                        raise
                    committed = True
                elif tx.state in (State.ACTIVE, State.FAILED):
                    tx.abort()
        finally:
            # (a failed commit is a rolled-back transaction: its SETs are undone too)
            changed = self.settings.end(committed)
            undo, self._role_undo = self._role_undo, None
            if undo and not committed:
                self.services.roles.undo(undo)
            if self.notifies:  # (LISTEN, UNLISTEN and NOTIFY take effect at commit)
                if committed:
                    self.services.notifications.commit(self.backend_pid, self.notifies)
                else:
                    self.notifies.clear()
        if self.cursors:
            if not committed:  # (a failed commit: the WITH HOLD cursors it declared go too)
                self._keep_cursors(lambda _name, cur: not cur.pending)
            for cur in self.cursors.values():
                cur.pending = False
        for name in changed:
            out.append(ParameterChanged(name, self.settings.get(name)))
        return out

    def end_implicit(self) -> list[Outcome]:
        """End of a simple-query message or Sync: an implicit transaction commits."""
        if self.tx is not None and not self.explicit:
            return self._end_tx(commit=True)
        return []

    def _failed(self) -> bool:
        return self.tx is not None and self.tx.state is State.FAILED

    def fail(self) -> None:
        """A statement failed: an implicit transaction is rolled back at once; an explicit
        one enters the failed state until ROLLBACK."""
        if self.tx is None:
            return
        if self.explicit:
            if self.tx.state is State.ACTIVE:
                self.tx.state = State.FAILED
        else:
            self._end_tx(commit=False)

    def _create_table_as(self, into: ast.IntoClause, query: ast.SelectStmt, params: list[Any], *, if_not_exists: bool = False) -> Iterator[Outcome]:
        """CREATE TABLE … AS / SELECT … INTO: a table of the query's columns (their types and
        typmods, the names given first), filled with its rows in the same transaction."""
        tx = self.statement_tx()
        name = ddl_sql.table_name(tx, into.rel, into.onCommit, self.temp_schema)
        options = reloptions.with_options(into.options)
        if if_not_exists:
            schema, _, rel = name.rpartition(".")
            cat = tx.catalog()
            found = cat.find_table(schema, rel) if schema else next((t for s in self.search_path() if (t := cat.find_table(s, rel))), None)
            if found is not None:
                yield Notice("NOTICE", "42P07", f'relation "{into.rel.relname}" already exists, skipping')
                yield Done("CREATE TABLE AS")
                return
        rows = self.engine.select(tx, query, RawStream()(query), params)
        batches = [] if into.skipData else list(rows.batches)
        if into.skipData:
            close = getattr(rows.batches, "close", None)
            if close is not None:
                close()
        names = [c.name for c in rows.columns]
        given = [n.sval for n in into.colNames or ()]
        if len(given) > len(names):
            raise PgError("42601", "too many column names were specified")
        names[: len(given)] = given
        columns = []
        for col_name, col in zip(names, rows.columns, strict=True):
            ctype = col.type
            if col.pg_oid is not None and col.pg_oid != ctype.oid:
                try:
                    ctype = type_by_oid(col.pg_oid)
                except PgError:
                    raise ddl_names.unsupported(f"a column of type {pgcatalog_defs.format_type(col.pg_oid, None) or col.pg_oid}") from None
            if col.pg_typmod is not None and col.pg_typmod >= 0 and ctype.typmod < 0:
                ctype = dataclasses.replace(ctype, typmod=col.pg_typmod)
            columns.append((col_name, ctype.type_text(), False))
        seen: set[str] = set()
        for col_name in names:
            if col_name in seen:
                raise PgError("42701", f'column "{col_name}" specified more than once')
            seen.add(col_name)
        tx.create_table(name, columns)
        if options:
            tx.set_reloptions(name, options)
        if into.onCommit in (enums.OnCommitAction.ONCOMMIT_DROP, enums.OnCommitAction.ONCOMMIT_DELETE_ROWS):
            self._on_commit[name] = into.onCommit
        if into.skipData:
            yield Done("CREATE TABLE AS")
            return
        data = pa.Table.from_batches(batches, schema=batches[0].schema) if batches else None
        n = 0
        if data is not None and data.num_rows:
            data = data.rename_columns(names)
            n = tx.insert(name, data)
        yield Done(f"SELECT {n}")

    def _keep_cursors(self, keep: Callable[[str, SqlCursor], bool]) -> None:
        """Drop the cursors ``keep`` refuses, giving their DuckDB results back."""
        dropped = [c for name, c in self.cursors.items() if not keep(name, c)]
        if dropped:
            self.cursors = {name: c for name, c in self.cursors.items() if keep(name, c)}
            for c in dropped:
                c.close()

    def _wrote_temp(self, tx: Transaction) -> bool:
        """Whether the transaction created, dropped or wrote rows of a temporary object (a
        table, view, sequence, function or type in the session's temporary schema)."""
        cat, done = tx.catalog(), self.lake.catalog_at(self.lake.frontier)

        def temporary(c: Catalog) -> set[int]:
            kinds = (c.tables, c.views, c.sequences, c.functions, c.domains, c.enums, c.composites)
            return {o.oid for kind in kinds for o in kind.values() if o.schema == self.temp_schema}

        temp = temporary(cat)
        return temp != temporary(done) or bool(temp & tx.written_relids())

    def _temp_tables_at_commit(self, tx: Transaction) -> None:
        """ON COMMIT DROP / DELETE ROWS of this session's temporary tables, in the committing
        transaction (rows are deleted only when it wrote: an empty table stays so)."""
        if not self._on_commit:
            return
        tables = tx.catalog().tables.values()
        live = {t.qualified_name for t in tables if t.schema == self.temp_schema}
        # (a partitioned table has no rows of its own: its DELETE ROWS leaves its partitions,
        # which keep their own ON COMMIT setting, as heap_truncate_one_rel skips it)
        parted = {t.qualified_name for t in tables if t.partition_key is not None}
        emptied: list[str] = []
        for name, action in list(self._on_commit.items()):
            if name not in live:
                del self._on_commit[name]  # (dropped, or its creation rolled back)
            elif action == enums.OnCommitAction.ONCOMMIT_DROP:
                tx.drop_table(name, cascade=True)
                del self._on_commit[name]
            elif tx.xid is not None and name not in parted:
                emptied.append(name)
        if emptied:  # (together, as PreCommit_on_commit_actions truncates them)
            try:
                tx.truncate(emptied)
            except PgError as e:
                if e.sqlstate != "0A000" or e.detail is None:
                    raise
                raise PgError(
                    "0A000", "unsupported ON COMMIT and foreign key combination",
                    detail=f"{e.detail[:-1]}, but they do not have the same ON COMMIT setting.",
                ) from None

    def _drop_temp_tables(self, tx: Transaction) -> None:
        """Every temporary table of this session (DISCARD TEMP, the session's end)."""
        for t in list(tx.catalog().tables.values()):
            if t.schema == self.temp_schema:
                tx.drop_table(t.qualified_name, if_exists=True, cascade=True)
        for v in list(tx.catalog().views.values()):
            if v.schema == self.temp_schema:
                tx.drop_view(v.qualified_name, if_exists=True, cascade=True)
        for sq in list(tx.catalog().sequences.values()):  # (and its temporary sequences)
            if sq.schema == self.temp_schema:
                tx.drop_sequence(sq.qualified_name, if_exists=True, cascade=True)
        self._on_commit.clear()

    def _has_temp_tables(self) -> bool:
        cat = self.tx.catalog() if self.tx is not None and self.tx.state is State.ACTIVE else self.lake.catalog_at(self.lake.frontier)
        return (
            any(t.schema == self.temp_schema for t in cat.tables.values())
            or any(sq.schema == self.temp_schema for sq in cat.sequences.values())
            or any(v.schema == self.temp_schema for v in cat.views.values())
        )

    def _discard(self, node: ast.DiscardStmt) -> Iterator[Outcome]:
        """DISCARD PLANS has nothing to drop here (DuckDB plans each statement); DISCARD
        SEQUENCES forgets currval, lastval and cached values; DISCARD ALL is PostgreSQL's
        list: SET SESSION AUTHORIZATION DEFAULT, RESET ALL, DEALLOCATE ALL, CLOSE ALL,
        DISCARD SEQUENCES, the session's advisory locks released."""
        target = {enums.DiscardMode.DISCARD_PLANS: "PLANS", enums.DiscardMode.DISCARD_SEQUENCES: "SEQUENCES", enums.DiscardMode.DISCARD_TEMP: "TEMP"}.get(node.target, "ALL")
        if target == "ALL":
            self._check_no_block("DISCARD ALL")
        if target in ("ALL", "TEMP") and self._has_temp_tables():
            self._drop_temp_tables(self.statement_tx())
        if target in ("ALL", "SEQUENCES"):
            self.sequences.discard()
        if target == "ALL":
            # (SET SESSION AUTHORIZATION DEFAULT first, then RESET ALL, as DISCARD ALL does)
            changed = self.settings.set_identity("session_authorization", self.login_user, local=False)
            changed += self.settings.set_identity("role", "none", local=False)
            me = self.services.roles.get(self.login_user)
            changed += self.settings.set_identity("is_superuser", "on" if me is not None and me.superuser else "off", local=False)
            for name in dict.fromkeys([*changed, *self.settings.reset_all()]):
                yield ParameterChanged(name, self.settings.get(name))
            self.statements = {k: v for k, v in self.statements.items() if not k}
            self.portals.clear()
            self.services.advisory.release_all(self.backend_pid, xact=False)
        yield Done(f"DISCARD {target}")

    def close(self) -> None:
        if self.tx is not None:
            self._end_tx(commit=False)
        if self._has_temp_tables():  # (a temporary table ends with its session)
            try:
                self._ensure_tx().read_only = False  # (default_transaction_read_only spares them)
                self._drop_temp_tables(self.statement_tx())
                self._end_tx(commit=True)
            except Exception:
                log.warning("could not drop the temporary tables of session %s", self.backend_pid, exc_info=True)
                if self.tx is not None:
                    self._end_tx(commit=False)
        self.services.advisory.release_all(self.backend_pid, xact=True)
        self.services.advisory.release_all(self.backend_pid, xact=False)
        self.engine.close()

    # -- simple query --------------------------------------------------------------------
    def simple_query(self, sql: str) -> Iterator[Outcome]:
        self.debug_query = sql
        stmts = parse(sql)
        if not stmts:
            yield Empty()
            return
        if self._logs([n for n, _ in stmts]):
            logs.log_statement(log, self.log_session, f"statement: {sql}")
        # several statements in one Query are an implicit transaction block (PostgreSQL's
        # TBLOCK_IMPLICIT_INPROGRESS): VACUUM and the like refuse to run in it
        self.implicit_block = len(stmts) > 1
        held: Done | None = None
        try:
            for i, (node, text) in enumerate(stmts):
                self.cancelled.clear()
                self.cancel_reason = USER_REQUEST
                if i < len(stmts) - 1:
                    yield from self.run(node, text, [], [])
                    continue
                for out in self.run(node, text, [], []):
                    if held is not None:
                        yield held
                        held = None
                    if isinstance(out, Done):
                        held = out
                    else:
                        yield out
        finally:
            self.implicit_block = False
        # (PostgreSQL commits an implicit transaction before the last statement's
        # CommandComplete: a deferred check failing at that commit replaces it)
        ends = self.end_implicit()
        if held is not None:
            yield held
        yield from ends

    # -- extended query ------------------------------------------------------------------
    def parse_statement(self, name: str, sql: str, param_types: Sequence[int]) -> None:
        self.debug_query = sql
        stmts = parse(sql)
        if len(stmts) > 1:
            raise PgError("42601", "cannot insert multiple commands into a prepared statement")
        if name and name in self.statements:
            raise PgError("42P05", f'prepared statement "{name}" already exists')
        node, text = stmts[0] if stmts else (None, "")
        if node is not None and self._failed() and not _ends_transaction(node):
            raise _aborted()
        used = _param_numbers(node)
        nparams = max(max(used, default=0), len(param_types))
        for n in range(1, nparams + 1):
            if n not in used and (n > len(param_types) or not param_types[n - 1]):
                raise PgError("42P18", f"could not determine data type of parameter ${n}")
        unused = frozenset(range(1, nparams + 1)) - used
        types = list(param_types)
        domains = self._parameter_domains(node, types, nparams)
        if (nparams and not all(types[:nparams])) or len(types) < nparams:
            types = context_param_types(node, types, nparams, self._table_finder(), self._function_finder())
        self.statements[name] = Prepared(name, text, node, types, nparams, unused, date_order=self.settings.datetime_input(), domains=domains)

    def _parameter_domains(self, node: Any, types: list[int], nparams: int) -> dict[int, int]:
        """The parameters ParameterDescription reports as a domain (see Prepared.domains);
        a domain declared at Parse is replaced in ``types`` by its base type, whose values
        it takes."""
        cat = self._parse_catalog()
        if not cat.domains:
            return {}
        out: dict[int, int] = {}
        for i, oid in enumerate(types):
            d = cat.domains.get(oid)
            if d is not None:
                out[i], types[i] = oid, d.base.oid
        path = self.search_path()
        inferred = domain_casts.parameter_domains(node, self._table_finder(), lambda names: cat.resolve_domain(names, path))
        out.update({i: oid for i, oid in inferred.items() if i < nparams and not (i < len(types) and types[i]) and i not in out})
        return out

    def _user_type_oid(self, tn: ast.TypeName) -> int:
        """The OID of a user enum (or its array type) a type name names; 0 for none."""
        names = [n.sval for n in tn.names]
        if len(names) > 2:
            return 0
        en = self._parse_catalog().resolve_enum(names, self.search_path())
        return 0 if en is None else en.array_oid if tn.arrayBounds else en.oid

    def _user_type_params(self, oids: Sequence[int]) -> dict[int, ColumnType]:
        """The lake types of parameters of a user enum or an array of one, by OID: a label
        is text in both formats (enum_recv reads text's bytes)."""
        cat = self._parse_catalog()
        out: dict[int, ColumnType] = {}
        for e in cat.enums.values():
            if e.oid in oids:
                out[e.oid] = e.column_type
            if e.array_oid in oids:
                out[e.array_oid] = dataclasses.replace(e.column_type, is_array=True)
        return out

    def _parse_catalog(self) -> Any:
        """The catalog a statement parsed now resolves its names in: the transaction's, else
        the newest."""
        tx = self.tx
        return tx.catalog() if tx is not None and tx.state in (State.ACTIVE, State.FAILED) else self.lake.catalog_at(self.lake.frontier)

    def _function_finder(self) -> Any:
        """User functions by name as a statement parsed now resolves them (sql_function_calls)."""
        return sql_function_calls.finder(self._parse_catalog(), self.search_path())

    def _table_finder(self) -> FindTable:
        """User tables by (schema, name) as a statement parsed now resolves them."""
        cat = self._parse_catalog()
        path = self.search_path()

        def find(schema: str | None, name: str) -> Table | None:
            for s in [schema] if schema else path:
                t = cat.find_table(s, name)
                if t is not None:
                    return t
            return None

        return find

    def bind(self, portal: str, statement: str, formats: Sequence[int], params: Sequence[bytes | None], result_formats: Sequence[int]) -> None:
        st = self.statements.get(statement)
        if st is None:
            raise PgError("26000", f'prepared statement "{statement}" does not exist')
        self.debug_query = st.text
        if portal and portal in self.portals:
            raise PgError("42P03", f'cursor "{portal}" already exists')
        nparams = st.nparams
        if len(params) != nparams:
            raise PgError(
                "08P01",
                f'bind message supplies {len(params)} parameters, but prepared statement "{statement}" requires {nparams}',
            )
        if self._failed() and (nparams or not _ends_transaction(st.node)):
            raise _aborted()  # (PostgreSQL lets a ROLLBACK or COMMIT through, unparameterised)
        for f in formats:
            if f != 0 and f != 1:
                raise PgError("22023", f"unsupported format code: {f}")
        oids = self.param_oids(st)
        if 1 in formats and 0 in oids:
            # Describe reported a parameter it could not place as text (PostgreSQL's type
            # for an unknown one): a driver that sends it in binary sends text's bytes.
            oids = [o or (25 if (formats[0] if len(formats) == 1 else formats[i] if i < len(formats) else 0) == 1 else 0) for i, o in enumerate(oids)]
        user = self._user_type_params(oids) if max(oids, default=0) >= FIRST_USER_OID else None
        order = self.settings.datetime_input()
        values = self.engine.decode_params(st, formats, params, oids, order, user, portal)
        if st.unused:
            values.unused = st.unused
        if st.date_order != order:
            values.literal_date_order = st.date_order
        p = self.portals[portal] = Portal(portal, st, values, list(result_formats))
        if params and self.settings.get("log_statement") != "none":
            p.extra["log_parameters"] = (tuple(formats), tuple(params))

    def describe_statement(self, name: str) -> tuple[list[int], list[Column] | None]:
        st = self.statements.get(name)
        if st is None:
            raise PgError("26000", f'prepared statement "{name}" does not exist')
        types = [t if t else 25 for t in self.param_oids(st)]
        cols = self.describe_node(st.node, st.text, types)
        if cols is not None and self._failed():
            raise _aborted()  # (a statement without rows is described even so)
        return [st.domains.get(i, t) for i, t in enumerate(types)], cols

    def param_oids(self, st: Prepared) -> list[int]:
        """The statement's parameter types, declared or inferred (``sql.paramtypes``), once
        per prepared statement as PostgreSQL fixes them at Parse; 0 where not known."""
        if st.inferred is None:
            declared = st.param_types
            if len(declared) >= st.nparams and all(declared):
                st.inferred = list(declared)
            else:
                from walsender_proxy.sql.paramtypes import infer_param_types

                def columns_of(rv: ast.RangeVar) -> dict[str, int]:
                    t = self._ensure_tx().table(ddl_names.qualified(rv))
                    return {c.name: c.type.oid for c in t.columns}

                known = [declared[i] if i < len(declared) else 0 for i in range(st.nparams)]
                if isinstance(st.node, ast.SelectStmt):
                    # a query's parameters as the analysis types them; what it cannot place,
                    # by the statement's shape (sql.paramtypes)
                    analyzed = self.engine.analyzed_param_oids(self._ensure_tx(), st.text, known)
                    known = [o or analyzed.get(i + 1, 0) for i, o in enumerate(known)]
                oids = infer_param_types(st.node, known, st.nparams, columns_of)
                st.inferred = [
                    o if (i < len(declared) and declared[i]) or param_receivable(o) else 0
                    for i, o in enumerate(oids)
                ]
        return st.inferred

    def describe_portal(self, name: str) -> list[Column] | None:
        cols = self._describe_portal(name)
        if cols is not None and self._failed():
            raise _aborted()
        p = self.portals.get(name)
        if cols is not None and p is not None:
            check_result_formats(p.result_formats, len(cols))
        return cols

    def _describe_portal(self, name: str) -> list[Column] | None:
        p = self.portals.get(name)
        if p is None:
            cur = self.cursors.get(name)  # DECLAREd cursors share the portal namespace
            if cur is not None:
                return cur.rows.columns
            raise PgError("34000", f'portal "{name}" does not exist')
        if p.pending_rows is not None:
            return p.pending_rows.columns
        st = p.stmt
        if st.may_describe_rows is None:
            st.may_describe_rows = _may_describe_rows(st.node)
        if not st.may_describe_rows:  # an INSERT per round trip: NoData without more work
            return None
        types = [t if t else 25 for t in self.param_oids(st)]
        return self.describe_node(st.node, st.text, types)

    def close_object(self, kind: str, name: str) -> None:
        if kind == "S":
            self.statements.pop(name, None)
        else:
            self.portals.pop(name, None)

    def execute_portal(self, name: str) -> Portal:
        p = self.portals.get(name)
        if p is None:
            raise PgError("34000", f'portal "{name}" does not exist')
        self.debug_query = p.stmt.text
        if p.stmt.node is not None and self.settings.get("log_statement") != "none" and self._logs([p.stmt.node]):
            self._log_execute(p)
        if p.outcomes is None:
            # A cancel aimed at an earlier statement must not stop this one. Event.clear()
            # takes the event's lock even when there is nothing to clear (most of the time).
            if self.cancelled.is_set():
                self.cancelled.clear()
                self.cancel_reason = USER_REQUEST
            if p.stmt.node is None:
                p.outcomes = iter([Empty()])
            else:
                p.outcomes = self.run(p.stmt.node, p.stmt.text, p.params, p.result_formats)
                if p.stmt.name:
                    p.outcomes = _fixed_result(p.stmt, p.outcomes)
        return p

    def _logs(self, nodes: list[Any]) -> bool:
        setting = self.settings.get("log_statement")
        if setting == "none":  # (the common case, before any look at the statements)
            return False

        def prepared(name: str) -> Any:
            st = self.statements.get(name)
            return st.node if st is not None else None

        return statement_log.logs(setting, nodes, prepared)

    def _log_execute(self, p: Portal) -> None:
        """``execute <name>[/portal]: text`` with the parameters, as exec_execute_message
        logs it (``execute fetch from`` when a suspended portal runs on)."""
        verb = "execute" if p.outcomes is None else "execute fetch from"
        name = p.stmt.name or "<unnamed>"
        portal = f"/{p.name}" if p.name else ""
        detail = None
        formats, raw = p.extra.get("log_parameters", ((), ()))
        if raw:
            texts = statement_log.parameter_texts(p.stmt.param_types, formats, raw, self.settings.datetime_input())
            detail = logs.parameters_detail(texts, self.settings.number("log_parameter_max_length"))
        logs.log_statement(log, self.log_session, f"{verb} {name}{portal}: {p.stmt.text}", detail)

    def _writing_tx(self, node: Any, command: str) -> Transaction:
        """The statement's transaction for a DML statement: in a read-only transaction
        PostgreSQL refuses one whose target is not a temporary table before it reads a row
        (ExecCheckXactReadOnly), whether or not any row would change."""
        tx = self.statement_tx()
        if tx.read_only and node.relation is not None:
            try:
                target = tx.table(ddl_names.qualified(node.relation))
            except PgError:
                return tx  # (the statement's own error follows)
            if not is_temp_schema(target.schema):
                raise PgError("25006", f"cannot execute {command} in a read-only transaction")
        return tx

    # -- SQL-level PREPARE / EXECUTE -------------------------------------------------------
    def _prepare(self, node: ast.PrepareStmt) -> Done:
        """``PREPARE name [(types)] AS statement``: a prepared statement in the namespace
        Parse fills (pg_prepared_statements shows both)."""

        types = []
        for tn in node.argtypes or ():
            oid = type_name_oid(tn) or self._user_type_oid(tn)
            if not oid:
                raise PgError("42704", f'type "{".".join(n.sval for n in tn.names)}" does not exist')
            types.append(oid)
        if node.name in self.statements:
            raise PgError("42P05", f'prepared statement "{node.name}" already exists')
        self.parse_statement(node.name, RawStream()(node.query), types)
        return Done("PREPARE")

    def _execute(self, node: ast.ExecuteStmt) -> Iterator[Outcome]:
        """``EXECUTE name (args)``: each argument's value as its parameter type's text
        (constants as written, an expression computed first), then the statement run with
        them, as Bind and Execute would."""
        st = self.statements.get(node.name)
        if st is None or not node.name:
            raise PgError("26000", f'prepared statement "{node.name}" does not exist')
        args = list(node.params or ())
        if len(args) != st.nparams:
            raise PgError(
                "42601", f"wrong number of parameters for prepared statement \"{node.name}\"",
                detail=f"Expected {st.nparams} parameters but got {len(args)}.",
            )  # fmt: skip
        oids = self.param_oids(st)
        texts: list[bytes | None] = []
        for arg, oid in zip(args, oids, strict=True):
            if isinstance(arg, ast.A_Const):
                v = arg.val
                texts.append(None if arg.isnull else str(v.sval if isinstance(v, ast.String) else v.fval if isinstance(v, ast.Float) else v.boolval if isinstance(v, ast.Boolean) else v.ival).encode())
                continue
            from walsender_proxy.sql.paramtypes import type_name_of

            tname, is_array = type_name_of(oid) if oid else ("text", False)
            en = next((e for e in self._parse_catalog().enums.values() if oid in (e.oid, e.array_oid)), None)
            if en is not None:  # (a user enum's: by its qualified name)
                tname, is_array = f"{pgcatalog_defs.quote_ident(en.schema)}.{pgcatalog_defs.quote_ident(en.name)}", oid == en.array_oid
            sql = f"SELECT ({RawStream()(arg)})::{tname}{'[]' if is_array else ''}::text"
            rows = self.engine.select(self.statement_tx(), parse(sql)[0][0], sql, [])
            values = [v for b in rows.batches for v in b.column(0).to_pylist()]
            texts.append(None if values[0] is None else str(values[0]).encode())
        user = self._user_type_params(oids) if max(oids, default=0) >= FIRST_USER_OID else None
        values = self.engine.decode_params(st, [0], texts, oids, self.settings.date_order(), user)
        if st.unused:
            values.unused = st.unused
        try:
            yield from _fixed_result(st, self._dispatch(st.node, st.text, values))
        except PgError as e:  # (a position would be in the PREPARE's text: PostgreSQL sends none)
            if getattr(e, "position", None) is not None:
                e.position = None  # type: ignore[attr-defined]
            raise

    def _lock(self, node: ast.LockStmt) -> Done:
        """``LOCK TABLE … IN ACCESS SHARE | ROW SHARE MODE`` (pg_dump takes ACCESS SHARE of
        every table it dumps): the tables must exist and a transaction block be open; a
        transaction's snapshot already keeps each table it reads, so these weakest modes
        add nothing to what the proxy guarantees. Modes that would block writers or DDL
        are refused."""
        if not self.explicit:
            raise PgError("25P01", "LOCK TABLE can only be used in transaction blocks")
        tx = self.statement_tx()
        for rv in node.relations:
            tx.table(ddl_names.qualified(rv))
        if node.mode not in (1, 2):  # AccessShareLock, RowShareLock
            raise ddl_names.unsupported("LOCK TABLE in a mode other than ACCESS SHARE or ROW SHARE")
        return Done("LOCK TABLE")

    def _set_constraints(self, node: ast.ConstraintsSetStmt) -> Iterator[Outcome]:
        """SET CONSTRAINTS {ALL | name, …} {DEFERRED | IMMEDIATE}: foreign keys are the
        deferrable constraints there are; a named one that is not is 42809, an unknown one
        42704 (AfterTriggerSetState). Outside a transaction block it only warns."""
        tx = self.statement_tx()
        oids = None if node.constraints is None else foreign_key_sql.deferrable_oids(tx, node.constraints)
        if not self.explicit:
            yield Notice("WARNING", "25P01", "SET CONSTRAINTS can only be used in transaction blocks")
        else:
            tx.set_constraints(oids, bool(node.deferred))
        yield Done("SET CONSTRAINTS")

    def sync(self) -> list[Outcome]:
        self.portals.pop("", None)
        return self.end_implicit()

    # -- dispatch ------------------------------------------------------------------------
    def run(self, node: Any, text: str, params: list[Any], formats: list[int]) -> Iterator[Outcome]:
        """Execute one statement. Errors propagate as PgError after the transaction state
        was updated (see :meth:`fail`)."""
        self.query, self.query_start, self.running = text, time.time(), True
        # value input ('now', 'today') in this statement reads the transaction's timestamp
        live = self.tx is not None and self.tx.state in (State.ACTIVE, State.FAILED)
        TRANSACTION_NOW.set(self.xact_start_us if live else int(self.query_start * 1_000_000))
        timeout = self.settings.get("statement_timeout")
        deadline = None
        if timeout != "0":
            deadline = self.services.deadlines.add(self.settings.number("statement_timeout") / 1000, self._timed_out)
        try:
            yield from self._dispatch(node, text, params)
        except PgError:
            self.fail()
            raise
        except Exception as e:
            self.fail()
            err = _internal(e)
            if err.sqlstate == "XX000":
                log.exception("internal error in statement: %s", text[:200])
            raise err from e
        finally:
            self.running = False
            if deadline is not None:
                deadline.cancel()

    def _timed_out(self) -> None:
        self.cancel(STATEMENT_TIMEOUT)

    def _dispatch(self, node: Any, text: str, params: list[Any]) -> Iterator[Outcome]:
        """Run one statement: its privilege checks first, and a new object made owned by
        the role that made it."""
        if not isinstance(node, _CHECKED) or (self.tx is not None and self.tx.state is State.FAILED):
            yield from self.run_node(node, text, params)
            return
        who = self.who()
        if self.tx is not None:
            self.tx.begin_statement()  # (the checks read this statement's catalog)
        tx = self.statement_tx()
        privilege_checks.check_statement(node, tx.catalog(), who, tx.search_path, self.database)
        creates = isinstance(node, _CREATES) and not (isinstance(node, ast.SelectStmt) and node.intoClause is None)
        owner = self._new_objects_owner(node, who) if creates else None
        if owner is None or (owner == who.database_owner and not tx.catalog().default_acls):
            yield from self.run_node(node, text, params)
            return
        before = _object_oids(tx.catalog())
        yield from self.run_node(node, text, params)
        if self.tx is not None and self.tx.state is State.ACTIVE:
            cat = self.tx.catalog()
            for oid in sorted(_object_oids(cat) - before):
                kind, namespace = _kind_of(cat, oid)
                acl = privileges.new_object_acl(cat, owner, namespace, kind)
                if owner != who.database_owner or acl is not None:
                    self.tx.set_ownership(oid, Ownership(owner, acl))

    def who(self, role: str | None = None) -> privileges.Who:
        """The role privilege checks are made for: the current user (or ``role``)."""
        name = role or self.user
        key = (name, self.services.roles.version)
        cached = self._who_cache.get(key)
        if cached is None:
            cached = self._who_cache[key] = self._make_who(name)
            if len(self._who_cache) > 16:
                self._who_cache = {key: cached}
        return cached

    def _make_who(self, name: str) -> privileges.Who:
        return privileges.make_who(self.services.roles, name)

    def catalog_now(self) -> Any:
        """The catalog a privilege check reads: the transaction's, once it has a snapshot
        (a check must not take one: CREATE_REPLICATION_SLOT … USE_SNAPSHOT wants none
        taken before it), else the newest."""
        tx = self.tx
        if tx is not None and tx.snapshot_taken and tx.state is State.ACTIVE:
            return tx.catalog()
        return self.lake.catalog

    def _sequence_allowed(self, sq: Any, letters: str) -> None:
        who = self.who()
        if not who.superuser:
            cat = self.catalog_now()
            privileges.require_any(cat, who, sq.oid, "sequence", sq.name, letters)

    def _new_objects_owner(self, node: Any, who: privileges.Who) -> int | None:
        """Who owns what the statement creates: the creating role, or CREATE SCHEMA's
        AUTHORIZATION."""
        owner = who.oid
        if isinstance(node, ast.CreateSchemaStmt) and node.authrole is not None:
            owner = grant_sql.role_of(node.authrole, who, self.roles.session_role(), self.roles.role_oid)
            if not who.is_member(owner):
                raise PgError("42501", f'must be member of role "{node.authrole.rolename}"')
        return owner

    def run_node(self, node: Any, text: str, params: list[Any]) -> Iterator[Outcome]:
        """Run one parsed statement (its privileges already checked, see :meth:`_dispatch`)."""
        if isinstance(node, ast.TransactionStmt):
            yield from self._transaction(node)
            return
        if self.tx is not None and self.tx.state is State.FAILED:
            raise _aborted()
        if self.tx is not None:
            self.tx.begin_statement()
        if self.cursors and not isinstance(node, (ast.FetchStmt, ast.ClosePortalStmt)):
            written = writes_rows(node)
            for cur in self.cursors.values():  # (their DuckDB results would block this one)
                cur.detach()
                cur.written = cur.written or written
        if isinstance(node, ast.VariableSetStmt):
            yield from self._set(node)
        elif isinstance(node, ast.VariableShowStmt):
            yield from self._show(node)
        elif isinstance(node, ast.ExplainStmt):
            yield self.engine.explain(self.statement_tx(), node, params)
        elif isinstance(node, ast.SelectStmt) and node.intoClause is not None:
            into, node.intoClause = node.intoClause, None  # SELECT … INTO t: CREATE TABLE t AS
            yield from self._create_table_as(into, node, params)
        elif isinstance(node, ast.SelectStmt):
            tx = self.statement_tx()
            yield self.engine.select(tx, node, text, params)
        elif isinstance(node, ast.CreateTableAsStmt):
            if node.objtype != enums.ObjectType.OBJECT_TABLE:
                raise ddl_names.unsupported("CREATE MATERIALIZED VIEW")
            if not isinstance(node.query, ast.SelectStmt):
                raise ddl_names.unsupported("CREATE TABLE AS EXECUTE")
            yield from self._create_table_as(node.into, node.query, params, if_not_exists=bool(node.if_not_exists))
        elif isinstance(node, ast.InsertStmt):
            yield from self.engine.insert(self._writing_tx(node, "INSERT"), node, params)
        elif isinstance(node, ast.UpdateStmt):
            yield from self.engine.update(self._writing_tx(node, "UPDATE"), node, params)
        elif isinstance(node, ast.DeleteStmt):
            yield from self.engine.delete(self._writing_tx(node, "DELETE"), node, params)
        elif isinstance(node, ast.TruncateStmt):
            tx = self.statement_tx()
            for r in node.relations:
                sequences.write_target(tx, r, '"{}" is not a table')
            _not_pending(tx, [ddl_names.qualified(r) for r in node.relations], "TRUNCATE")
            added = tx.truncate([ddl_names.qualified(r) for r in node.relations], cascade=node.behavior == enums.DropBehavior.DROP_CASCADE, restart_identity=bool(node.restart_seqs))
            for name in added:
                yield Notice("NOTICE", "00000", f'truncate cascades to table "{name}"')
            if node.restart_seqs:  # the sequences the tables' columns own start again
                sequences.restart_owned(tx, [tx.table(n).oid for n in [*(ddl_names.qualified(r) for r in node.relations), *added]], self.sequences)
            yield Done("TRUNCATE TABLE")
        elif isinstance(node, ast.CopyStmt):
            yield self.engine.copy(self.statement_tx(), node, params)
        elif isinstance(node, ast.CreateStmt):
            notices: list[Notice] = []
            tag = ddl_sql.create_table(self.statement_tx(), node, self.temp_schema, notices)
            if node.oncommit in (enums.OnCommitAction.ONCOMMIT_DROP, enums.OnCommitAction.ONCOMMIT_DELETE_ROWS):
                self._on_commit[f"{self.temp_schema}.{node.relation.relname}"] = node.oncommit
            yield from notices
            yield Done(tag)
        elif isinstance(node, (ast.CreateSchemaStmt, ast.DropStmt, ast.AlterTableStmt, ast.AlterObjectSchemaStmt)):
            if isinstance(node, ast.DropStmt) and node.removeType == enums.ObjectType.OBJECT_PUBLICATION:
                ddl_sql.check_publication_access(self.statement_tx(), node, self._actor())
            notices = []
            spec = _owner_change(node) if isinstance(node, ast.AlterTableStmt) else None
            if spec is not None:
                tag = self.roles.relation_owner(node, spec, notices)
                yield from notices
                yield Done(tag)
                return
            if isinstance(node, ast.AlterTableStmt) and node.objtype == enums.ObjectType.OBJECT_TYPE:
                composite_sql.refuse_alter(self.statement_tx(), node)
            if isinstance(node, ast.AlterTableStmt) and node.objtype == enums.ObjectType.OBJECT_TABLE:
                _not_pending(self.statement_tx(), [ddl_names.qualified(node.relation)], "ALTER TABLE")
            if isinstance(node, ast.DropStmt) and node.removeType == enums.ObjectType.OBJECT_TABLE:
                _not_pending(self.statement_tx(), [".".join(n.sval for n in obj) for obj in node.objects], "DROP TABLE")
            if isinstance(node, ast.AlterTableStmt):
                tag = ddl_sql.alter_table(self.statement_tx(), node, notices, self.engine.fill_added_column, retype=self.engine.alter_column_types)
            else:
                run = {
                    ast.CreateSchemaStmt: ddl_sql.create_schema,
                    ast.DropStmt: functools.partial(ddl_sql.drop, in_block=self.explicit or self.implicit_block),
                    ast.AlterObjectSchemaStmt: ddl_sql.set_schema,
                }[type(node)]
                try:
                    tag = run(self.statement_tx(), node, notices)
                finally:
                    yield from notices  # (PostgreSQL's NOTICEs come before its error too)
                yield Done(tag)
                return
            yield from notices
            yield Done(tag)
        elif isinstance(node, ast.CommentStmt) and node.objtype == enums.ObjectType.OBJECT_ROLE:
            with self._role_changes("COMMENT ON"):
                self.roles.comment(node)
            yield Done("COMMENT")
        elif isinstance(node, ast.CommentStmt):
            yield Done(comment_sql.comment(self.statement_tx(), node))
        elif isinstance(node, ast.IndexStmt):
            notices = []
            tag = index_sql.create_index(self.statement_tx(), node, self.explicit or self.implicit_block, notices)
            yield from notices
            yield Done(tag)
        elif isinstance(node, ast.RenameStmt):
            notices = []
            tag = ddl_sql.rename(self.statement_tx(), node, notices)
            old = f"{self.temp_schema}.{node.relation.relname}" if node.relation is not None else ""
            if node.renameType == enums.ObjectType.OBJECT_TABLE and old in self._on_commit:
                self._on_commit[f"{self.temp_schema}.{node.newname}"] = self._on_commit.pop(old)
            yield from notices
            yield Done(tag)
        elif isinstance(node, ast.ViewStmt):
            notices = []
            try:
                unchecked = privileges.CHECK_READS.set(False)  # (checked when it is used)
                try:
                    tag = views.create(self.statement_tx(), node, text, self.engine, self.temp_schema, notices)
                finally:
                    privileges.CHECK_READS.reset(unchecked)
            finally:
                yield from notices  # (PostgreSQL's NOTICEs come before its error too)
            yield Done(tag)
        elif isinstance(node, ast.CreateDomainStmt):
            yield Done(domain_sql.create(self.statement_tx(), node))
        elif isinstance(node, ast.CreateEnumStmt):
            yield Done(enum_sql.create(self.statement_tx(), node))
        elif isinstance(node, ast.CompositeTypeStmt):
            yield Done(composite_sql.create(self.statement_tx(), node))
        elif isinstance(node, ast.AlterEnumStmt):
            notices = []
            tag = enum_sql.alter(self.statement_tx(), node, notices)
            yield from notices
            yield Done(tag)
        elif isinstance(node, ast.AlterDomainStmt):
            notices = []
            tag = domain_sql.alter(self.statement_tx(), node, notices)
            yield from notices
            yield Done(tag)
        elif isinstance(node, ast.CreateFunctionStmt):
            yield Done(sql_functions.create(self.statement_tx(), node, text, self.engine))
        elif isinstance(node, ast.AlterFunctionStmt):
            yield Done(sql_functions.alter(self.statement_tx(), node, self.engine))
        elif isinstance(node, ast.CreateSeqStmt):
            notices = []
            tag = sequences.create(self.statement_tx(), node, self.temp_schema, notices)
            yield from notices
            yield Done(tag)
        elif isinstance(node, ast.AlterSeqStmt):
            notices = []
            tag = sequences.alter(self.statement_tx(), node, self.sequences, notices)
            yield from notices
            yield Done(tag)
        elif isinstance(node, ast.CreatePublicationStmt):
            ddl_sql.check_publication_access(self.statement_tx(), node, self._actor())
            privilege_checks.check_publication_tables(node, self.statement_tx().catalog(), self.who(), self.tx.search_path)
            yield Done(ddl_sql.create_publication(self.statement_tx(), node, owner=self.user))
        elif isinstance(node, ast.AlterPublicationStmt):
            ddl_sql.check_publication_access(self.statement_tx(), node, self._actor())
            privilege_checks.check_publication_tables(node, self.statement_tx().catalog(), self.who(), self.tx.search_path)
            yield Done(ddl_sql.alter_publication(self.statement_tx(), node))
        elif isinstance(node, ast.GrantStmt):
            notices = []
            tx = self.statement_tx()
            tag = grant_sql.grant(tx, node, self.who(), self.roles.session_role(), self.roles.role_oid, tx.search_path, notices, self.database)
            yield from notices
            yield Done(tag)
        elif isinstance(node, ast.GrantRoleStmt):
            notices = []
            with self._role_changes("GRANT" if node.is_grant else "REVOKE"):
                self.roles.grant_roles(node, notices)
            yield from notices
            yield Done("GRANT ROLE" if node.is_grant else "REVOKE ROLE")
        elif isinstance(node, ast.ReassignOwnedStmt):
            yield Done(self.roles.reassign_owned(node))
        elif isinstance(node, ast.DropOwnedStmt):
            yield from self.roles.drop_owned(node)
            yield Done("DROP OWNED")
        elif isinstance(node, ast.AlterDefaultPrivilegesStmt):
            grant_sql.alter_default_privileges(self.statement_tx(), node, self.who(), self.roles.session_role(), self.roles.role_oid)
            yield Done("ALTER DEFAULT PRIVILEGES")
        elif isinstance(node, ast.AlterOwnerStmt) and node.objectType == enums.ObjectType.OBJECT_SCHEMA:
            yield Done(self.roles.schema_owner(node))
        elif isinstance(node, ast.AlterOwnerStmt) and node.objectType in (enums.ObjectType.OBJECT_TYPE, enums.ObjectType.OBJECT_DOMAIN) and (
            (found := self.roles.user_type(node)) is not None
        ):
            yield Done(self.roles.type_owner(node, *found))
        elif isinstance(node, ast.AlterOwnerStmt) and node.objectType in (enums.ObjectType.OBJECT_FUNCTION, enums.ObjectType.OBJECT_PROCEDURE):
            yield Done(self.roles.function_owner(node))
        elif isinstance(node, (ast.CreateRoleStmt, ast.AlterRoleStmt, ast.DropRoleStmt)):
            with self._role_changes({ast.CreateRoleStmt: "CREATE", ast.AlterRoleStmt: "ALTER", ast.DropRoleStmt: "DROP"}[type(node)]):
                tag = self.roles.role(node)
            yield from self.notices
            self.notices.clear()
            yield Done(tag)
        elif isinstance(node, ast.DiscardStmt):
            yield from self._discard(node)
        elif isinstance(node, ast.PrepareStmt):
            yield self._prepare(node)
        elif isinstance(node, ast.ExecuteStmt):
            yield from self._execute(node)
        elif isinstance(node, ast.LockStmt):
            yield self._lock(node)
        elif isinstance(node, ast.ConstraintsSetStmt):
            yield from self._set_constraints(node)
        elif isinstance(node, ast.DeallocateStmt):
            if node.name is None:
                self.statements = {"": self.statements[""]} if "" in self.statements else {}
            elif self.statements.pop(node.name, None) is None:
                raise PgError("26000", f'prepared statement "{node.name}" does not exist')
            yield Done("DEALLOCATE ALL" if node.name is None else "DEALLOCATE")
        elif isinstance(node, ast.DeclareCursorStmt):
            yield self._declare(node, text, params)
        elif isinstance(node, ast.FetchStmt):
            yield self._fetch(node)
        elif isinstance(node, ast.ClosePortalStmt):
            if node.portalname is None:
                self._keep_cursors(lambda _name, _cur: False)
            elif node.portalname not in self.cursors:
                raise PgError("34000", f'cursor "{node.portalname}" does not exist')
            else:
                self._keep_cursors(lambda name, _cur: name != node.portalname)
            yield Done("CLOSE CURSOR" if node.portalname else "CLOSE CURSOR ALL")
        elif isinstance(node, ast.CheckPointStmt):
            self.lake.checkpoint()
            self.lake.sequences.checkpoint()  # (the next nextval logs anew, as after PostgreSQL's)
            yield Done("CHECKPOINT")
        elif isinstance(node, ast.VacuumStmt):
            yield from self._vacuum(node)
        elif isinstance(node, ast.AlterSystemStmt):
            yield system_sql.alter_system(self, node, in_block=self.explicit or self.implicit_block)
        elif isinstance(node, ast.ListenStmt):
            self._ensure_tx()
            self.notifies.actions.append(("listen", node.conditionname))
            yield Done("LISTEN")
        elif isinstance(node, ast.UnlistenStmt):  # (UNLISTEN *: conditionname None)
            self._ensure_tx()
            self.notifies.actions.append(("unlisten", node.conditionname))
            yield Done("UNLISTEN")
        elif isinstance(node, ast.NotifyStmt):
            self._ensure_tx()
            self.notifies.notify(node.conditionname, node.payload or "")
            yield Done("NOTIFY")
        else:
            raise ddl_names.unsupported(_command_name(node))

    def _vacuum(self, node: ast.VacuumStmt) -> Iterator[Outcome]:
        """VACUUM and ANALYZE, checked as PostgreSQL checks them (a named table neither
        the caller's nor the database's is skipped with a WARNING). The lake has no dead
        tuples to reclaim and no planner statistics: VACUUM removes the files and log
        segments nothing needs any more, VACUUM FULL also rewrites tables with many delta
        files into checkpoints, ANALYZE has nothing to do."""
        vacuum = bool(node.is_vacuumcmd)
        verb = "VACUUM" if vacuum else "ANALYZE"
        opts = {o.defname for o in node.options or ()}
        known = _VACUUM_OPTIONS if vacuum else _ANALYZE_OPTIONS
        for o in sorted(opts - known):
            raise PgError("42601", f'unrecognized {verb} option "{o}"')
        if vacuum and (self.explicit or self.implicit_block):
            raise PgError("25001", "VACUUM cannot run inside a transaction block")
        # Outside a block no transaction is opened: its snapshot would hold back the very
        # files VACUUM is there to remove.
        if self.explicit:
            resolve = self._ensure_tx().table
        else:
            cat = self.lake.catalog_at(self.lake.frontier)

            def resolve(name: str) -> Any:
                return cat.resolve_table(name, self.lake.search_path)

        who = self.who()
        for rel in node.rels or ():
            t = resolve(ddl_names.qualified(rel.relation))  # 42P01 as PostgreSQL words it
            for col in rel.va_cols or ():
                if t.column(col.sval) is None:
                    raise PgError("42703", f'column "{col.sval}" of relation "{t.name}" does not exist')
            if not who.uses(who.database_owner) and not privileges.is_owner(self.catalog_now(), who, t.oid):
                # (vacuum_is_relation_owner: the table's or the database's owner)
                yield Notice("WARNING", "01000", f'skipping "{t.name}" --- only table or database owner can {verb.lower()} it')
        if vacuum:
            if "full" in opts:
                self.lake.checkpoint(force=True)
            self.lake.collect_garbage()
        yield Done(verb)

    def _declare(self, node: ast.DeclareCursorStmt, text: str, params: list[Any]) -> Outcome:
        hold = bool(node.options & _CURSOR_HOLD)
        if node.options & _CURSOR_BINARY:
            raise ddl_names.unsupported("DECLARE … BINARY CURSOR")
        scroll = "scroll" if node.options & _CURSOR_SCROLL else "no scroll" if node.options & _CURSOR_NO_SCROLL else "default"
        if not self.explicit and not hold:
            raise PgError("25P01", "DECLARE CURSOR can only be used in transaction blocks")
        if node.portalname in self.cursors:
            raise PgError("42P03", f'cursor "{node.portalname}" already exists')
        if not isinstance(node.query, ast.SelectStmt):
            raise ddl_names.unsupported("DECLARE CURSOR for this statement")
        effect = lasting_effect_call(node.query)
        if effect is not None:
            # (computed whole here: PostgreSQL calls it only for the rows FETCH reads)
            raise ddl_names.unsupported(f"DECLARE CURSOR over a query that calls {effect}()")
        rows = self.engine.select(self.statement_tx(), node.query, RawStream()(node.query), params)
        if hold:
            batches = list(rows.batches)
            rows = Rows(rows.columns, iter(batches))
        locking = bool(node.query.lockingClause)
        self.cursors[node.portalname] = SqlCursor(rows, hold, scroll=scroll, depth=len(self._savepoint_read_only), locking=locking)
        return Done("DECLARE CURSOR")

    def _fetch(self, node: ast.FetchStmt) -> Outcome:
        cur = self.cursors.get(node.portalname)
        if cur is None:
            raise PgError("34000", f'cursor "{node.portalname}" does not exist')
        if cur.failed:
            raise PgError("55000", f'portal "{node.portalname}" cannot be run')
        if cur.locking and cur.written:
            raise ddl_names.unsupported("FETCH from a cursor declared FOR UPDATE or FOR SHARE after the transaction changed rows")
        try:
            batches, n = cur.fetch(node)
        except PgError as e:
            if e.sqlstate != "55000":
                cur.failed = True
            raise
        except Exception:
            cur.failed = True
            raise
        if node.ismove:
            return Done(f"MOVE {n}")
        return Rows(cur.rows.columns, iter(batches), verb="FETCH")

    def _role_changes(self, what: str) -> Any:
        """Roles and memberships are written at once; the transaction keeps their
        before-images so that a rollback (of the block, or of the implicit transaction of
        a multi-statement query) puts them back, as PostgreSQL's transactional catalog
        would. After a SAVEPOINT the statement is refused: ROLLBACK TO would have to undo
        a part of them."""
        tx = self.statement_tx()
        if tx.in_subtransaction:
            raise PgError("0A000", f"{what} ROLE after a SAVEPOINT is not supported by walsender-proxy")
        if self._role_undo is None:
            self._role_undo = {}
        return self.services.roles.journaling(self._role_undo)

    def _check_no_block(self, what: str) -> None:
        if self.explicit or self.implicit_block:
            raise PgError("25001", f"{what} cannot run inside a transaction block")

    # -- transaction control -------------------------------------------------------------
    def _transaction(self, s: ast.TransactionStmt) -> Iterator[Outcome]:
        K = enums.TransactionStmtKind
        kind = s.kind
        failed = self._failed()
        if failed and kind not in _EXIT_KINDS:
            raise _aborted()
        if kind in (K.TRANS_STMT_BEGIN, K.TRANS_STMT_START):
            if self.explicit:
                # PostgreSQL warns and keeps the block, then applies the options as SET
                # TRANSACTION would (25001 once a query has taken the snapshot).
                yield Notice("WARNING", "25001", "there is already a transaction in progress")
                self._apply_tx_options(s.options)
                yield Done("BEGIN" if kind == K.TRANS_STMT_BEGIN else "START TRANSACTION")
                return
            self._apply_tx_options(s.options)
            self._ensure_tx()
            self.explicit = True
            yield Done("BEGIN" if kind == K.TRANS_STMT_BEGIN else "START TRANSACTION")
            return
        if kind in (K.TRANS_STMT_COMMIT, K.TRANS_STMT_ROLLBACK) and s.chain:
            what = "COMMIT" if kind == K.TRANS_STMT_COMMIT else "ROLLBACK"
            yield from self._end_and_chain(what, commit=kind == K.TRANS_STMT_COMMIT and not failed)
            return
        if kind == K.TRANS_STMT_COMMIT:
            if not self.explicit:
                yield Notice("WARNING", "25P01", "there is no transaction in progress")
                yield from self._end_tx(commit=True)
                yield Done("COMMIT")
                return
            yield from self._end_tx(commit=not failed)
            yield Done("ROLLBACK" if failed else "COMMIT")
            return
        if kind == K.TRANS_STMT_ROLLBACK:
            if not self.explicit:
                yield Notice("WARNING", "25P01", "there is no transaction in progress")
            yield from self._end_tx(commit=False)
            yield Done("ROLLBACK")
            return
        if kind in (K.TRANS_STMT_SAVEPOINT, K.TRANS_STMT_RELEASE, K.TRANS_STMT_ROLLBACK_TO):
            name = s.savepoint_name
            if not self.explicit:
                what = {K.TRANS_STMT_SAVEPOINT: "SAVEPOINT", K.TRANS_STMT_RELEASE: "RELEASE SAVEPOINT", K.TRANS_STMT_ROLLBACK_TO: "ROLLBACK TO SAVEPOINT"}[kind]
                raise PgError("25P01", f"{what} can only be used in transaction blocks")
            tx = self._ensure_tx()
            if kind == K.TRANS_STMT_ROLLBACK_TO:
                tx.rollback_to(name)
                self.notifies.rollback_to(name)
                self._restore_read_only(tx, name, keep=True)
                for changed in self.settings.rollback_to(name):
                    yield ParameterChanged(changed, self.settings.get(changed))
                yield Done("ROLLBACK")
            elif kind == K.TRANS_STMT_SAVEPOINT:
                tx.savepoint(name)
                self._savepoint_read_only.append((name, tx.read_only))
                self.settings.savepoint(name)
                self.notifies.savepoint(name)
                yield Done("SAVEPOINT")
            else:
                tx.release(name)
                self._restore_read_only(tx, name, keep=False)
                self.settings.release(name)
                self.notifies.release(name)
                yield Done("RELEASE")
            return
        if kind == K.TRANS_STMT_PREPARE:
            if not self.explicit:
                yield Notice("WARNING", "25P01", "there is no transaction in progress")
                yield Done("PREPARE TRANSACTION")
                return
            tx = self.tx
            assert tx is not None
            self.tx = None
            self.explicit = False
            self.settings.end(commit=not failed)
            if failed:
                tx.abort()
                yield Done("ROLLBACK")
                return
            if self.temp_read or self._wrote_temp(tx):
                self.temp_read = False
                tx.abort()
                raise PgError("0A000", "cannot PREPARE a transaction that has operated on temporary objects")
            if self.notifies:
                self.notifies.clear()
                tx.abort()
                raise PgError("0A000", "cannot PREPARE a transaction that has executed LISTEN, UNLISTEN, or NOTIFY")
            if tx.origin:
                tx.abort()
                raise _origin_and_two_phase("PREPARE TRANSACTION")
            if tx.xid is None:
                tx.ensure_xid()
            tx.prepare(s.gid)
            yield Done("PREPARE TRANSACTION")
            return
        if kind in (K.TRANS_STMT_COMMIT_PREPARED, K.TRANS_STMT_ROLLBACK_PREPARED):
            what = "COMMIT PREPARED" if kind == K.TRANS_STMT_COMMIT_PREPARED else "ROLLBACK PREPARED"
            self._check_no_block(what)
            if self.lake.origins.session(self.backend_pid) is not None:
                raise _origin_and_two_phase(what)
            if kind == K.TRANS_STMT_COMMIT_PREPARED:
                self.lake.commit_prepared(s.gid)
            else:
                self.lake.rollback_prepared(s.gid)
            yield Done(what)
            return
        raise ddl_names.unsupported(f"transaction statement {kind.name}")

    def _end_and_chain(self, what: str, commit: bool) -> Iterator[Outcome]:
        """COMMIT/ROLLBACK AND CHAIN: the block ends and a new one starts at once with the
        same isolation level, access mode and deferrability; 25P01 outside a block (an
        implicit one included), as PostgreSQL's EndTransactionBlock."""
        if not self.explicit or self.tx is None:
            raise PgError("25P01", f"{what} AND CHAIN can only be used in transaction blocks")
        tx = self.tx
        iso, ro, deferrable = tx.isolation, tx.read_only, self._deferrable()
        yield from self._end_tx(commit=commit)
        self._tx_isolation, self._tx_read_only, self._tx_deferrable = iso, ro, deferrable
        self._ensure_tx()
        self.explicit = True
        yield Done("COMMIT" if commit else "ROLLBACK")

    def _deferrable(self) -> bool:
        if self._tx_deferrable is not None and self.tx is not None:
            return self._tx_deferrable
        return self.settings.get("default_transaction_deferrable") == "on"

    def _restore_read_only(self, tx: Transaction, name: str, *, keep: bool) -> None:
        """The access mode a savepoint found, back at its subtransaction's end (``keep``:
        ROLLBACK TO, which keeps the savepoint)."""
        for i in range(len(self._savepoint_read_only) - 1, -1, -1):
            if self._savepoint_read_only[i][0] == name:
                tx.read_only = self._savepoint_read_only[i][1]
                del self._savepoint_read_only[i + 1 if keep else i :]
                # cursors declared in the subtransaction: gone with its rollback, the
                # parent's on its release
                if keep:
                    self._keep_cursors(lambda _name, cur, depth=i: cur.depth <= depth)
                else:
                    for c in self.cursors.values():
                        c.depth = min(c.depth, i)
                return

    def _apply_tx_options(self, options: Any) -> None:
        for o in options or ():
            val = o.arg.val if isinstance(o.arg, ast.A_Const) else o.arg
            v = getattr(val, "sval", None)
            if v is None:
                v = getattr(val, "ival", None)
            if o.defname == "transaction_isolation":
                self._set_isolation(str(v))
            elif o.defname == "transaction_read_only":
                ro = bool(v)
                if not ro and self.tx is not None and self.tx.read_only and self.tx.snapshot_taken:
                    raise PgError("25001", "transaction read-write mode must be set before any query")
                self._tx_read_only = ro
                if self.tx is not None:
                    self.tx.read_only = ro
            elif o.defname == "transaction_deferrable":
                self._tx_deferrable = bool(v)
            else:
                raise ddl_names.unsupported(f"transaction option {o.defname}")

    def _set_isolation(self, level: str) -> None:
        iso = _ISOLATION.get(level.lower())
        if iso is None:
            raise PgError("22023", f'invalid value for parameter "transaction_isolation": "{level}"')
        if self.tx is not None and self.tx.snapshot_taken and self.tx.isolation is not iso:
            raise PgError("25001", "SET TRANSACTION ISOLATION LEVEL must be called before any query")
        self._tx_isolation = iso
        if self.tx is not None:
            self.tx.isolation = iso

    # -- settings ------------------------------------------------------------------------
    def _set(self, s: ast.VariableSetStmt) -> Iterator[Outcome]:
        K = enums.VariableSetKind
        if s.kind != K.VAR_SET_MULTI or s.name == "SESSION CHARACTERISTICS":
            self._ensure_tx()  # a SET is undone with the (implicit) transaction it runs in
        if s.kind == K.VAR_SET_MULTI:
            if s.name == "TRANSACTION":
                if not self.explicit:
                    yield Notice("WARNING", "25P01", "SET TRANSACTION can only be used in transaction blocks")
                else:
                    self._apply_tx_options(s.args)
            elif s.name == "SESSION CHARACTERISTICS":
                for o in s.args or ():
                    v = o.arg.val
                    if o.defname == "transaction_isolation":
                        self.settings.set("default_transaction_isolation", v.sval)
                    elif o.defname == "transaction_read_only":
                        self.settings.set("default_transaction_read_only", "on" if getattr(v, "ival", 0) else "off")
            elif s.name == "TRANSACTION SNAPSHOT":
                yield from self._import_snapshot(s.args[0].val.sval)
                return
            else:
                raise ddl_names.unsupported(f"SET {s.name}")
            yield Done("SET")
            return
        if s.kind == K.VAR_RESET_ALL:
            for name in self.settings.reset_all():
                yield ParameterChanged(name, self.settings.get(name))
            yield Done("RESET")
            return
        name = s.name
        if name == "transaction_isolation" and s.args:
            self._set_isolation(set_arg_text(s.args[0]))
            yield Done("SET")
            return
        if name in ("session_authorization", "role"):
            yield from self.roles.set_identity(s)
            return
        if s.kind in (K.VAR_RESET, K.VAR_SET_DEFAULT):
            value = None
        else:
            value = set_value_text(name, s.args or ())
        if name.lower() == "timezone" and s.kind == K.VAR_SET_CURRENT:
            value = None
        elif name.lower() == "timezone" and s.args and isinstance(s.args[0], ast.TypeCast):
            value = timezone_interval(s.args[0])
        local = bool(s.is_local)
        if local and not self.explicit:
            yield Notice("WARNING", "25P01", "SET LOCAL can only be used in transaction blocks")
            yield Done("SET")
            return
        changed = self.settings.set(name, value, local=local)
        if changed:
            canon = self.settings.canonical_name(name)
            yield ParameterChanged(canon, self.settings.get(canon))
        yield Done("RESET" if s.kind == K.VAR_RESET else "SET")

    def _show(self, s: ast.VariableShowStmt) -> Iterator[Outcome]:

        text = parse_type("text")
        readable = self.who().reads_all_settings()
        if s.name == "all":
            rows = [
                (n, pgcatalog.shown_setting(n, v), g.description) for n, v, g in self.settings.all()
                if readable or n.lower() not in SUPERUSER_ONLY
            ]
            cols = [Column("name", text), Column("setting", text), Column("description", text)]
            data = pa.table({"name": [r[0] for r in rows], "setting": [r[1] for r in rows], "description": [r[2] for r in rows]})
        else:
            if s.name == "transaction_isolation":
                value = (self.tx.isolation if self.tx else _ISOLATION[self.settings.get("default_transaction_isolation")]).value
            elif s.name == "transaction_read_only":
                value = "on" if (self.tx.read_only if self.tx else self.settings.get("default_transaction_read_only") == "on") else "off"
            elif s.name == "transaction_deferrable":
                value = "on" if self._deferrable() else "off"
            else:
                if not readable and s.name.lower() in SUPERUSER_ONLY:
                    raise hidden_setting(s.name)
                value = pgcatalog.shown_setting(s.name, self.settings.get(s.name))
            col = s.name if s.name.lower() not in ("timezone", "datestyle", "intervalstyle") else self.settings.canonical_name(s.name)
            cols = [Column(col, text)]
            data = pa.table({col: [value]})
        yield Rows(cols, iter(data.to_batches()), verb="SHOW", fixed_tag="SHOW")

    def _import_snapshot(self, name: str) -> Iterator[Outcome]:
        if not self.explicit or self.tx is None:
            raise PgError("25P01", "SET TRANSACTION SNAPSHOT can only be used in transaction blocks")
        if self.tx.isolation is Isolation.READ_COMMITTED:
            raise PgError("0A000", "a snapshot-importing transaction must have isolation level SERIALIZABLE or REPEATABLE READ")
        if self.tx.snapshot_csn is not None or self.tx.xid is not None:
            raise PgError("0A000", "SET TRANSACTION SNAPSHOT must be called before any query")
        csn = self.services.snapshots.lookup(name)
        iso, ro = self.tx.isolation, self.tx.read_only
        self.tx.abort()
        self.tx = self.lake.begin(iso, read_only=ro, snapshot_csn=csn)
        self.lake.origins.stamp(self.backend_pid, self.tx)
        yield Done("SET")

    # -- roles ---------------------------------------------------------------------------
    def _actor(self) -> ddl_sql.Actor:
        """The session's role as privilege checks see it (the first role is the database's
        owner, as ``pg_database.datdba`` shows it)."""
        me = self.services.roles.get(self.user)
        roles = self.services.roles.all()
        owner = roles[0].name if roles else self.user
        roles = frozenset(self.services.roles.member_closure(self.user, inheriting=True))
        creates = "C" in privileges.held(self.catalog_now(), self.who(), privileges.DATABASE_OID, "database")
        return ddl_sql.Actor(self.user, me is not None and me.superuser, self.database, owner, roles, creates)

    # -- describe ------------------------------------------------------------------------
    def describe_node(self, node: Any, text: str, param_types: list[int]) -> list[Column] | None:
        """Result columns of a statement; None for one that returns no rows (the statement
        kinds here must match :func:`_may_describe_rows`)."""
        if node is None:
            return None
        if isinstance(node, ast.SelectStmt) and node.intoClause is not None:
            return None  # (SELECT … INTO returns no rows)
        if isinstance(node, ast.SelectStmt):
            return self.engine.describe_select(self._ensure_tx(), node, param_types, text)
        if isinstance(node, (ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt)) and returning(node):
            return self.engine.describe_returning(self._ensure_tx(), node, param_types)
        if isinstance(node, ast.VariableShowStmt):
            from decoding.pgtypes import parse_type

            name = node.name if node.name.lower() not in ("timezone", "datestyle", "intervalstyle") else self.settings.canonical_name(node.name)
            return [Column(name, parse_type("text"))]
        if isinstance(node, ast.ExplainStmt):
            return explain.columns()
        return None

    # -- helpers for the engine ----------------------------------------------------------
    @property
    def temp_schema(self) -> str:
        """This session's schema of temporary tables (PostgreSQL's ``pg_temp_N``)."""
        return f"{TEMP_SCHEMA_PREFIX}{self.backend_pid}"

    def creation_path(self) -> list[str]:
        """search_path's schemas as set (``$user`` and ``pg_temp`` resolved), without the
        temporary schema PostgreSQL searches first implicitly: where CREATE looks."""
        out = []
        for part in self.settings.get("search_path").split(","):
            p = part.strip().strip('"')
            p = self.user if p == "$user" else self.temp_schema if p == "pg_temp" else p
            if p:
                out.append(p)
        return self._usable(out)

    def search_path(self) -> list[str]:
        """The schemas an unqualified table name is looked up in: the temporary schema
        first unless ``pg_temp`` is placed in search_path, as PostgreSQL searches them."""
        out = []
        for part in self.settings.get("search_path").split(","):
            p = part.strip().strip('"')
            if p == "$user":
                p = self.user
            if p == "pg_temp":
                p = self.temp_schema
            if p:
                out.append(p)
        if self.temp_schema not in out:
            out.insert(0, self.temp_schema)
        return self._usable(out)

    def _usable(self, path: list[str]) -> list[str]:
        """The schemas of ``path`` the current user may use (PostgreSQL's search path
        skips the others)."""
        who = self.who()
        if who.superuser:
            return path
        cat = self.catalog_now()
        return privilege_checks.visible_schemas(cat, who, path)

    def cancel(self, reason: str = USER_REQUEST) -> None:
        self.cancel_reason = reason
        self.cancelled.set()
        self.engine.interrupt()


def _may_describe_rows(node: Any) -> bool:
    """Whether :meth:`Executor.describe_node` can return columns for ``node``: False means
    it always returns None, whatever the catalog and the parameter types."""
    if node is None:
        return False
    if isinstance(node, ast.SelectStmt) and node.intoClause is not None:
        return False
    if isinstance(node, (ast.SelectStmt, ast.VariableShowStmt, ast.ExplainStmt)):
        return True
    return isinstance(node, (ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt)) and bool(returning(node))


def _param_numbers(node: Any) -> frozenset[int]:
    """The ``$n`` a statement uses."""
    if node is None:
        return frozenset()
    used: set[int] = set()

    def visit(n: Any) -> None:
        if isinstance(n, ast.ParamRef):
            used.add(n.number)
        if isinstance(n, ast.Node):
            for name in n:
                visit(getattr(n, name))
        elif isinstance(n, tuple):
            for x in n:
                visit(x)

    visit(node)
    return frozenset(used)


_EXIT_KINDS = frozenset({
    enums.TransactionStmtKind.TRANS_STMT_COMMIT,
    enums.TransactionStmtKind.TRANS_STMT_PREPARE,
    enums.TransactionStmtKind.TRANS_STMT_ROLLBACK,
    enums.TransactionStmtKind.TRANS_STMT_ROLLBACK_TO,
})  # fmt: skip


def _fixed_result(st: Prepared, outcomes: Iterator[Outcome]) -> Iterator[Outcome]:
    """A prepared statement's outcomes, its rows checked to have the columns of its first
    run: after DDL changed them (``SELECT *`` of a table that gained a column) PostgreSQL's
    plan cache refuses to run it."""
    for o in outcomes:
        if isinstance(o, Rows):
            shape = tuple((c.name, c.type_oid) for c in o.columns)
            if st.result_shape is None:
                st.result_shape = shape
            elif st.result_shape != shape:
                raise PgError("0A000", "cached plan must not change result type")
        yield o


def _ends_transaction(node: Any) -> bool:
    """The statements a failed transaction still accepts (PostgreSQL's
    IsTransactionExitStmt): COMMIT, PREPARE TRANSACTION, ROLLBACK, ROLLBACK TO."""
    return isinstance(node, ast.TransactionStmt) and node.kind in _EXIT_KINDS


def _aborted() -> PgError:
    return PgError("25P02", "current transaction is aborted, commands ignored until end of transaction block")


def _write_failed(e: BaseException) -> str:
    """What a statement could not write, as PostgreSQL words it for a temporary file."""
    name = getattr(e, "filename", None)
    return f'could not write to file "{name}"' if name else "could not write to temporary file"


def _internal(e: Exception) -> PgError:
    full = disk_full_error(e, _write_failed(e))
    if full is not None:
        return full
    msg = str(e).split("\n")[0]
    original = udf_error(msg)
    if original is not None:
        return original
    if isinstance(e, duckdb.InterruptException):
        return PgError("57014", "canceling statement due to user request")
    if isinstance(e, duckdb.ConversionException):
        return PgError("22P02", msg)
    if isinstance(e, duckdb.OutOfRangeException):
        return PgError("22003", msg)
    if isinstance(e, duckdb.BinderException):
        worded = pgcatalog.no_such_function(msg)
        if worded is not None:
            return worded
        return PgError("42703" if "column" in msg.lower() else "42883", msg)
    if isinstance(e, duckdb.CatalogException):
        return PgError("42P01", msg)
    if isinstance(e, duckdb.ParserException):
        return PgError("42601", msg)
    if isinstance(e, (ZeroDivisionError,)) or "division by zero" in msg.lower():
        return PgError("22012", "division by zero")
    return PgError("XX000", f"internal error: {msg}")


__all__ = ["RID", "CopyIn", "CopyOut", "Executor", "Portal", "Prepared", "Table", "format_lsn"]


#: PostgreSQL's command names of statements the proxy refuses (a refusal names the
#: feature as a user wrote it, not the parser's node).
_COMMANDS = {
    "IndexStmt": "CREATE INDEX",
    "CreateSeqStmt": "CREATE SEQUENCE",
    "AlterSeqStmt": "ALTER SEQUENCE",
    "CreateRangeStmt": "CREATE TYPE … AS RANGE",
    "CreateFunctionStmt": "CREATE FUNCTION",
    "AlterFunctionStmt": "ALTER FUNCTION",
    "CreateTrigStmt": "CREATE TRIGGER",
    "CreateEventTrigStmt": "CREATE EVENT TRIGGER",
    "RuleStmt": "CREATE RULE",
    "DoStmt": "DO",
    "CallStmt": "CALL",
    "CreateExtensionStmt": "CREATE EXTENSION",
    "CreateTableAsStmt": "CREATE TABLE AS",
    "CreateForeignTableStmt": "CREATE FOREIGN TABLE",
    "CreatePolicyStmt": "CREATE POLICY",
    "GrantStmt": "GRANT",
    "GrantRoleStmt": "GRANT",
    "CommentStmt": "COMMENT",
    "ClusterStmt": "CLUSTER",
    "ReindexStmt": "REINDEX",
    "LockStmt": "LOCK",
    "TruncateStmt": "TRUNCATE",
    "MergeStmt": "MERGE",
    "LoadStmt": "LOAD",
    "CreateStatsStmt": "CREATE STATISTICS",
    "CreateConversionStmt": "CREATE CONVERSION",
    "CreateCastStmt": "CREATE CAST",
    "CreateOpClassStmt": "CREATE OPERATOR CLASS",
    "CreateTableSpaceStmt": "CREATE TABLESPACE",
    "CreatedbStmt": "CREATE DATABASE",
    "DropdbStmt": "DROP DATABASE",
    "RefreshMatViewStmt": "REFRESH MATERIALIZED VIEW",
    "SecLabelStmt": "SECURITY LABEL",
}


def _command_name(node: Any) -> str:
    kind = type(node).__name__
    if kind == "DefineStmt":
        return f"CREATE {node.kind.name.removeprefix('OBJECT_').replace('_', ' ')}"
    if kind == "AlterOwnerStmt":
        return f"ALTER {node.objectType.name.removeprefix('OBJECT_').replace('_', ' ')} … OWNER TO"
    if kind in _COMMANDS:
        return _COMMANDS[kind]
    return f"statement {kind.removesuffix('Stmt')}"


#: Statements privilege checks look at (privilege_checks.check_statement) or that create
#: objects their role then owns.
_CREATES = (
    ast.CreateStmt, ast.CreateSeqStmt, ast.ViewStmt, ast.CreateTableAsStmt, ast.CreateSchemaStmt,
    ast.SelectStmt, ast.CreateFunctionStmt, ast.CompositeTypeStmt,
)  # fmt: skip
_CHECKED = (
    *_CREATES, ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt, ast.TruncateStmt, ast.CopyStmt,
    ast.AlterTableStmt, ast.AlterSeqStmt, ast.IndexStmt, ast.RenameStmt, ast.AlterObjectSchemaStmt,
    ast.DropStmt, ast.CommentStmt, ast.CreateFunctionStmt, ast.AlterFunctionStmt, ast.LockStmt,
    ast.CreateDomainStmt, ast.AlterDomainStmt, ast.CreateEnumStmt, ast.AlterEnumStmt, ast.CompositeTypeStmt,
)  # fmt: skip


def _object_oids(cat: Any) -> set[int]:
    """OIDs of the relations and schemas a catalog holds."""
    return {
        *cat.tables, *cat.sequences, *cat.views, *cat.functions, *(c.relid for c in cat.composites.values()),
        *(o for n, o in cat.schemas.items() if not is_temp_schema(n)),
    }  # fmt: skip


def _kind_of(cat: Any, oid: int) -> tuple[str, int]:
    """What a new object is and the OID of its schema (0 for a schema)."""
    for kind, objs in (("table", cat.tables), ("view", cat.views), ("sequence", cat.sequences), ("function", cat.functions)):
        obj = objs.get(oid)
        if obj is not None:
            return kind, cat.schemas.get(obj.schema, 0)
    for ct in cat.composites.values():
        if ct.relid == oid:
            return "type", cat.schemas.get(ct.schema, 0)
    return "schema", 0


def _not_pending(tx: Transaction, names: Sequence[str], verb: str) -> None:
    """CheckTableNotInUse: a table with foreign key checks the transaction has queued for
    commit (deferred) may not be altered, dropped or truncated (55006)."""
    if not tx.deferrals.events:
        return
    for name in names:
        try:
            t = tx.table(name)
        except PgError:
            continue  # (the statement's own error comes later)
        if tx.deferrals.pending_on(t.oid):
            raise PgError("55006", f'cannot {verb} "{t.name}" because it has pending trigger events')


def _owner_change(node: ast.AlterTableStmt) -> ast.RoleSpec | None:
    """ALTER TABLE … OWNER TO's new owner, when that is the statement's only command."""
    cmds = node.cmds or ()
    if len(cmds) == 1 and cmds[0].subtype == enums.AlterTableType.AT_ChangeOwner:
        return cmds[0].newowner
    if any(c.subtype == enums.AlterTableType.AT_ChangeOwner for c in cmds):
        raise ddl_names.unsupported("OWNER TO combined with other ALTER TABLE actions")
    return None
