"""Transactions: the public API for writing to the lake.

A :class:`Transaction` writes each statement's changes to the change log as it goes (so the
log interleaves open transactions as PostgreSQL's WAL does) and keeps them as delta rows for
reading its own writes; commit assigns a CSN and makes them visible at it. Scripts that test
subscribers use the same API to force any interleaving, including out-of-order commits via
:meth:`Transaction.start_commit`.
"""

from __future__ import annotations

import contextlib
import enum
import itertools
import struct
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from decoding import records as R
from decoding.catalog import (
    RID,
    AclItem,
    Catalog,
    CatalogOp,
    Check,
    Column,
    ColumnDefault,
    CompositeType,
    Domain,
    EnumType,
    Function,
    Generation,
    IndexExpr,
    Ownership,
    Table,
    View,
    ViewColumn,
    is_temp_schema,
)
from decoding.catalog import Sequence as CatalogSequence
from decoding.errors import PgError
from decoding.pgtime import pg_now
from decoding.pgtypes import ColumnType, parse_type
from decoding.pgvalues import text_encoder
from decoding.pgvalues.typmod import SUBSECOND_TYPES, round_times
from walsender_proxy.lake import (
    check_ddl,
    checks,
    composite_ddl,
    ddl,
    domain_ddl,
    domains,
    enum_ddl,
    enums,
    foreign_key_ddl,
    foreign_keys,
    function_ddl,
    generated,
    index_ddl,
    partition_ddl,
    partitions,
    sequence_ddl,
    view_ddl,
)
from walsender_proxy.lake.deferred_keys import Deferrals
from walsender_proxy.lake.errors import (
    LakeError,
    no_active_transaction,
    not_null_violation,
    transaction_aborted,
)
from walsender_proxy.lake.files import (
    CHANGESET_ROW_GROUP,
    CSN,
    OP,
    OP_DELETE,
    OP_TRUNCATE,
    OP_WRITE,
    OWN_CSN,
    PARQUET_OPTIONS,
    SEQ,
)
from walsender_proxy.lake.keyindex import SMALL, OwnKeys, key_columns, keys_of
from walsender_proxy.lake.spill import ROW_NUMBER, FileRows, SpillDir, release_memory, spill_grouped
from walsender_proxy.lake.store import SnapshotQuery, concat_rows, delta_rows, fsync_path, with_csn
from walsender_proxy.lake.tx_services import CommitInfo, PendingTable, TransactionServices

if TYPE_CHECKING:
    from walsender_proxy.lake.retention import Hold

class Isolation(enum.Enum):
    READ_COMMITTED = "read committed"
    REPEATABLE_READ = "repeatable read"
    SERIALIZABLE = "serializable"  # run as REPEATABLE READ, as PostgreSQL's docs permit


#: A commit with less than this in memory applies its rows while its record is written
#: (Lake._write_commit); a bigger one after the fsync, as applying it takes longer than
#: the fsync anyway.
SMALL_COMMIT_BYTES = 1 << 20


class State(enum.Enum):
    ACTIVE = "active"
    FAILED = "failed"  # an error happened: only ROLLBACK (TO SAVEPOINT) is accepted
    COMMITTING = "committing"
    PREPARED = "prepared"
    COMMITTED = "committed"
    ABORTED = "aborted"


class Sql(str):
    """A SQL expression (evaluated by DuckDB over the row) rather than a literal value."""


@dataclass(slots=True)
class _Pending:
    """One statement's delta rows (``_csn`` = OWN_CSN) — or, once spilled, several
    statements' of one table, subtransaction and operation — in memory or in a file."""

    subxid: int
    relid: int
    rows: pa.Table | FileRows
    op: int  # every row's _op
    #: An INSERT's fresh rids, lo..hi (lets the version map keep a range, not an array).
    rid_range: tuple[int, int] | None = None
    nbytes: int = 0  # memory held (0 once in a file)


class Transaction:
    def __init__(
        self,
        lake: TransactionServices,
        isolation: Isolation = Isolation.READ_COMMITTED,
        *,
        read_only: bool = False,
        snapshot_csn: int | None = None,
        origin: str = "",
    ) -> None:
        self.lake = lake
        self.isolation = isolation
        self.read_only = read_only
        #: The replication origin it commits under (its session's), with the remote LSN
        #: and time the session gave (pg_replication_origin_xact_setup).
        self.origin = origin
        self.origin_lsn = 0
        #: Whether a record of it was logged yet (the first is preceded by its origin's).
        self._logged = False
        self.origin_ts = 0
        self.state = State.ACTIVE
        self.xid: int | None = None
        self.first_lsn: int | None = None
        self.gid: str | None = None
        #: When PREPARE TRANSACTION made it prepared (PostgreSQL's TimestampTz; 0: not).
        self.prepared_at = 0
        self._snapshot_csn = snapshot_csn  # fixed snapshot (REPEATABLE READ or imported)
        self._hold: Hold | None = None
        if snapshot_csn is not None:
            self._hold = lake.holds.hold("transaction", csn=snapshot_csn)
        self._subxid = 0
        #: SET CONSTRAINTS modes and the foreign key checks waiting for commit
        self.deferrals = Deferrals()
        self._next_subxid = 1
        self._savepoints: list[tuple[str, int]] = []
        #: The xid of each subtransaction (by its number here) that wrote: what records name
        #: it by (see :meth:`_logged_subxid`).
        self._sub_xids: dict[int, int] = {}
        #: (enum OID, label) of each ALTER TYPE … ADD VALUE of this transaction: unusable
        #: until it commits (lake/enums.py).
        self.added_enum_labels: set[tuple[int, str]] = set()
        self._pending: list[_Pending] = []
        self._pending_bytes = 0  # memory held by the in-memory parts of _pending
        self._release_due = False  # rows went to files: give memory back after the statement
        self._in_section = 0  # inside statement_section(): spilling waits for its end
        self._ops: list[tuple[int, CatalogOp]] = []
        self._seq = 0
        self._rid_locks: dict[int, list[tuple[int, pa.Array]]] = {}  # relid -> (subxid, rids)
        self._stmt_csn: int | None = None
        #: A statement has read at a snapshot (PostgreSQL's FirstSnapshotSet): from then on
        #: the isolation level and read-write mode can no longer change.
        self.snapshot_taken = snapshot_csn is not None
        # Key events of small statements, for the lake's key index (see keyindex.py):
        # relid -> [(subxid, rid, old key, new key)], and the tables where some statement
        # was too big to track (relid -> subxids), with this transaction's own key state.
        self._key_events: dict[int, list[tuple[int, int, Any, Any]]] = {}
        self._key_inexact: dict[int, list[int]] = {}
        self._own_keys: dict[int, OwnKeys] = {}
        # Incremental digests of _pending and _rid_locks for other transactions' checks
        # (reset when the lists are replaced: rollback to savepoint, end).
        self._scan_src: list[_Pending] | None = None
        self._scan_pos = 0
        self._scan: dict[int, PendingTable] = {}
        self._lock_digest: dict[int, tuple[list[Any], int, set[int], list[pa.Array]]] = {}
        #: The rows the last INSERT into a partitioned table gave its partitions, in the
        #: statement's order (its RETURNING reads them).
        self.routed_rows: pa.Table | None = None
        #: The schemas an unqualified table name is looked up in (the session's search_path,
        #: its temporary schema first); None: the lake's.
        self.search_path: tuple[str, ...] | None = None
        #: The schemas of search_path as set, in order (``$user`` and ``pg_temp`` resolved,
        #: the implicit temporary schema not added): the first that exists is where an
        #: unqualified CREATE makes its object. None: the lake's search path.
        self.creation_path: tuple[str, ...] | None = None

    # -- snapshots -----------------------------------------------------------------------
    def begin_statement(self) -> None:
        """A new statement starts: READ COMMITTED takes a fresh snapshot now, which every
        read *and* every write check of this statement then uses (a write-conflict check at
        a later snapshot than the read would miss a commit in between: a lost update)."""
        self._stmt_csn = None

    def statement_csn(self) -> int:
        """The CSN a statement reads at: fixed for REPEATABLE READ from the first statement,
        the frontier at the statement's start for READ COMMITTED."""
        if self._snapshot_csn is not None:
            return self._snapshot_csn
        if self._stmt_csn is not None:
            return self._stmt_csn
        csn = self.lake.frontier
        self._stmt_csn = csn
        self.snapshot_taken = True
        if self.isolation is not Isolation.READ_COMMITTED:
            self._snapshot_csn = csn
            self._hold = self.lake.holds.hold("transaction", csn=csn)
        return csn

    @property
    def snapshot_csn(self) -> int | None:
        return self._snapshot_csn

    @property
    def snapshot_csns(self) -> tuple[int | None, int | None]:
        """The CSNs this transaction may still read at: its fixed snapshot and its
        statement's (None where not taken); the lake's version maps keep answering for them."""
        return self._snapshot_csn, self._stmt_csn

    def catalog(self) -> Catalog:
        cat = self.lake.catalog_at(self.statement_csn())
        for _, op in self._ops:
            cat = cat.apply(op)
        return cat

    def table(self, name: str | Table) -> Table:
        if isinstance(name, Table):
            return self.catalog().tables.get(name.oid) or self.catalog().resolve_table(
                name.qualified_name
            )
        return self.catalog().resolve_table(self._named(name), self._path())

    def own_parts(self, relid: int) -> list[pa.Table | FileRows] | None:
        """This transaction's delta rows for ``relid`` (``_csn`` OWN_CSN), in memory and in
        files, oldest first — what the table store's reads take as ``own``."""
        parts = [p.rows for p in self._pending if p.relid == relid]
        return parts or None

    def own_rows(self, relid: int) -> pa.Table | None:
        """All of this transaction's delta rows for ``relid`` as one table. Spilled parts
        are read back into memory: the lake's own reads use :meth:`own_parts` instead."""
        parts = self.own_parts(relid)
        if parts is None:
            return None
        return concat_rows([p if isinstance(p, pa.Table) else p.read(OWN_CSN) for p in parts])

    def own_tail(self, relid: int, n: int) -> pa.Table:
        """The last ``n`` delta rows written to ``relid`` (a statement's own rows, for
        RETURNING), reading only the parts they are in."""
        parts = self.own_parts(relid) or []
        need, picked = n, []
        for p in reversed(parts):
            if need <= 0:
                break
            picked.append(p)
            need -= p.num_rows
        if not picked:
            return pa.table({})
        rows = concat_rows([p if isinstance(p, pa.Table) else p.read(OWN_CSN) for p in reversed(picked)])
        return rows.slice(max(rows.num_rows - n, 0))

    # -- guards --------------------------------------------------------------------------
    def _check_active(self) -> None:
        if self.state is State.FAILED:
            raise transaction_aborted()
        if self.state is not State.ACTIVE:
            raise no_active_transaction()

    def _check_writable(self) -> None:
        self._check_active()
        if self.read_only:
            raise LakeError("25006", "cannot execute this statement in a read-only transaction")

    @property
    def subxid(self) -> int:
        """The running subtransaction (0: the top level)."""
        return self._subxid

    def set_constraints(self, oids: list[int] | None, deferred: bool) -> None:
        """SET CONSTRAINTS {ALL | names} {DEFERRED | IMMEDIATE} (the caller resolved the
        names to deferrable foreign keys): IMMEDIATE fires what waits for them now."""
        self._check_active()
        self.deferrals.set_mode(oids, deferred)
        if not deferred:
            self._guard(foreign_keys.fire_deferred, self, None if oids is None else set(oids))

    def _fire_deferred(self) -> None:
        """COMMIT's and PREPARE's deferred foreign key checks; one failing rolls the
        transaction back, as PostgreSQL's COMMIT does."""
        if not self.deferrals.events:
            return
        try:
            self._guard(foreign_keys.fire_deferred, self)
        except Exception:
            self.abort()
            raise

    def _guard(self, fn: Any, *args: Any, **kw: Any) -> Any:
        """Run a statement; any error puts the transaction in the failed state, as in PG.
        A statement that moved big rows to files gives the memory back when it is done
        (not before: its frames still hold the rows until then)."""
        try:
            return fn(*args, **kw)
        except Exception:
            if self.state is State.ACTIVE:
                self.state = State.FAILED
            raise
        finally:
            if self._release_due:
                self._release_due = False
                release_memory()

    @contextlib.contextmanager
    def statement_section(self) -> Iterator[None]:
        """Run a small statement's Arrow work and its checks in one section of the lake's
        statement lock (the SQL layer's single-row INSERT and point UPDATE/DELETE).

        pyarrow lets the GIL go inside nearly every call; outside the lock each release
        lets another session in, and this one waits for the GIL back (docs/decisions.md).
        Nothing run inside may wait for another transaction (conflicts raise at once).
        Spilling pending rows to files, which writes Parquet, waits for the section's end
        so other sessions are not held up by it."""
        with self.lake.dml_lock:
            self._in_section += 1
            try:
                yield
            finally:
                self._in_section -= 1
        if not self._in_section:
            self._guard(self._maybe_spill)

    def ensure_xid(self) -> int:
        """The transaction's xid, assigned now if it has none yet (PostgreSQL assigns one at
        the first write, or when txid_current() or PREPARE TRANSACTION asks)."""
        if self.xid is None:
            self.xid = self.lake.register_xid(self)
        return self.xid

    def _logged_subxid(self) -> int:
        """The current subtransaction as the log names it: 0 at the top level, else its own
        xid, assigned at its first write (its enclosing subtransactions' first, outermost
        first), as PostgreSQL assigns one. Decoders key a subtransaction's changes by it,
        and a streamed transaction's messages carry it."""
        if not self._subxid:
            return 0
        for _, sub in self._savepoints:
            if sub not in self._sub_xids:
                self._sub_xids[sub] = self.lake.allocate_xid() & 0xFFFFFFFF
        return self._sub_xids[self._subxid]

    def _log(self, record: R.Record | Callable[[int], R.Record], *, release: bool = False) -> tuple[int, int]:
        if not self._logged and self.origin and self.xid is not None:
            # (the origin its first write is made under, for decoding before the commit)
            self.lake.log.append(R.XactOrigin(self.xid, self.origin))
        self._logged = True
        lsn, end = self.lake.log.append(record, release=release)
        if self.first_lsn is None:
            self.first_lsn = lsn
        return lsn, end

    def _next_seq(self, n: int) -> int:
        s = self._seq
        self._seq += n
        return s

    # -- reading -------------------------------------------------------------------------
    def read(
        self,
        table: str | Table,
        where: str | None = None,
        params: Sequence[Any] | None = None,
        *,
        with_rid: bool = False,
    ) -> pa.Table:
        """Rows of ``table`` as this transaction sees them (its snapshot plus its writes)."""
        self._check_active()
        self.begin_statement()
        return self._guard(self._read, table, where, params, with_rid)

    def _read(
        self,
        table: str | Table,
        where: str | None,
        params: Sequence[Any] | None,
        with_rid: bool,
        physical: bool = False,
    ) -> pa.Table:
        t = self.table(table)
        csn = self.statement_csn()
        return self.lake.read_at(
            t,
            csn,
            own=self.own_parts(t.oid),
            with_rid=with_rid,
            where=where,
            params=list(params or []),
            physical=physical,
        )

    # -- DML -----------------------------------------------------------------------------
    def insert(
        self, table: str | Table, rows: pa.Table | pa.RecordBatch | Sequence[Mapping[str, Any]]
    ) -> int:
        """Insert rows (dicts, or an Arrow table with the table's column names)."""
        self._check_writable()
        self.begin_statement()
        return self._guard(self._insert, table, rows)

    def _insert(self, table: str | Table, rows: Any, *, routed: bool = False) -> int:
        """``routed``: rows tuple routing placed in this partition (its constraint holds)."""
        t = self.table(table)
        data = _to_arrow(t, rows)
        n = data.num_rows
        if n == 0:
            return 0
        if t.partition_key is not None:
            return self._insert_routed(t, data)
        data = generated.compute(self, t, data, conform)
        self._check_new_rows(t, data)
        if t.partition_bound is not None and not routed:  # (after NOT NULL and CHECK, as ExecInsert)
            partitions.check_rows(self.catalog(), t, data, _row_texts)
        # Check and register atomically: two inserts of one key cannot both pass. One
        # section for all of it: with many sessions, each entry into the statement lock is
        # a chance to queue behind another session's GIL slice.
        with self.lake.dml_lock:
            self.lake.check_not_truncated(self, t)
            rids = self.lake.allocate_rids(n)
            new = data.add_column(0, _RID_FIELD, one_int64(int(rids[0])) if n == 1 else pa.array(rids))
            self._check_unique(t, new)
            p = self._add_pending(t, "I", new, None, (int(rids[0]), int(rids[-1])))
            # A small statement is logged inside the section too; a big one's changeset
            # (Parquet beside the log) is written after it.
            small = n <= SMALL and new.get_total_buffer_size() < self.lake.settings.changeset_bytes
            if small:
                self._log_change(t, "I", new, None, p)
        if not small:
            self._log_change(t, "I", new, None, p)
        foreign_keys.after_write(self, t, new)
        self._maybe_spill()
        return n

    def _insert_routed(self, t: Table, data: pa.Table) -> int:
        """Rows inserted into a partitioned table go to the partitions tuple routing picks,
        in runs of consecutive rows bound for the same one (the log's order is the rows'
        order, as PostgreSQL writes them one by one); the first row no partition takes
        fails the statement after the rows before it."""
        cat = self.catalog()
        if t.partition_bound is not None:  # (a partition given rows: its own constraint first)
            partitions.check_rows(cat, t, data, _row_texts)
        leaf_of, bad, err = partitions.route(cat, t, data)
        end = data.num_rows if bad is None else bad
        self.routed_rows = data
        i = 0
        while i < end:
            j = i + 1
            while j < end and leaf_of[j] == leaf_of[i]:
                j += 1
            leaf = cat.tables[int(leaf_of[i])]
            self._insert(leaf, _as_table(leaf, t, data.slice(i, j - i)), routed=True)
            i = j
        if err is not None:
            raise err
        return data.num_rows

    def update(
        self,
        table: str | Table,
        set: Mapping[str, Any],
        where: str | Mapping[str, Any] | None = None,
        params: Sequence[Any] | None = None,
    ) -> int:
        """``UPDATE table SET … WHERE …``: values are literals, :class:`Sql` values are
        expressions over the old row; ``where`` is SQL text or ``{column: value}``."""
        self._check_writable()
        self.begin_statement()
        return self._guard(self._update, table, set, where, params)

    def _update(
        self,
        table: str | Table,
        assignments: Mapping[str, Any],
        where: Any,
        params: Sequence[Any] | None,
    ) -> int:
        t = self.table(table)
        args = list(params or [])
        exprs = []
        for name, value in assignments.items():
            col = t.column(name)
            if col is None:
                raise LakeError("42703", f'column "{name}" of relation "{t.name}" does not exist')
            if isinstance(value, Sql):
                exprs.append(f'CAST(({value}) AS {_duck_type(col)}) AS "__new_{col.physical}"')
            else:
                args.append(value)
                exprs.append(f'CAST(${len(args)} AS {_duck_type(col)}) AS "__new_{col.physical}"')
        where_sql, args = _where(where, args, t)
        old = self._select_targets(t, where_sql, args, extra=exprs)
        if old.num_rows == 0:
            return 0
        new_cols = {f"__new_{c.physical}": c.physical for c in t.columns}
        new = old.select([RID] + [c.physical for c in t.columns])
        for src, dst in new_cols.items():
            if src in old.column_names:
                new = new.set_column(new.column_names.index(dst), dst, old.column(src))
        old = old.select([RID] + [c.physical for c in t.columns])
        return self.update_rows(t, old, new, frozenset(assignments))

    def apply_insert(self, table: str | Table, rows: pa.Table) -> int:
        """Insert as part of the caller's current statement (no new snapshot)."""
        self._check_writable()
        return self._guard(self._insert, table, rows)

    def apply_insert_batches(self, table: str | Table, batches: Iterable[pa.Table]) -> int:
        """:meth:`apply_insert` for rows that arrive in batches (an INSERT … SELECT's result
        as DuckDB streams it). A statement still under ``changeset_bytes / 4`` at its end is
        inserted as one table; a bigger one goes to its changeset file batch by batch, so
        its rows are never all in memory at once."""
        self._check_writable()
        return self._guard(self._insert_batches, table, batches)

    def _insert_batches(self, table: str | Table, batches: Iterable[pa.Table]) -> int:
        t = self.table(table)
        if t.partition_key is not None:  # (routed batch by batch)
            return sum(self._insert(t, b) for b in batches)
        it = iter(batches)
        held: list[pa.Table] = []
        size = 0
        # (A column named like DuckDB's row-position column keeps a statement in memory.)
        streams = ROW_NUMBER not in layout(t).plain.names
        for b in it:
            held.append(b)
            size += b.get_total_buffer_size()
            if streams and size >= self.lake.settings.changeset_bytes // 4:
                first, held = held, []
                return self._insert_streamed(t, itertools.chain(first, it))
        return self._insert(t, concat_rows(held)) if held else 0

    def _insert_streamed(self, t: Table, batches: Iterator[pa.Table]) -> int:
        """Each batch is checked (types, NOT NULL), given rids and appended to a changeset
        file; at the end the whole statement's keys are checked and, in the same statement
        lock section, the file is logged and becomes the statement's pending rows (as a big
        INSERT's changeset does in :meth:`_log_change`)."""
        lake = self.lake
        xid = self.ensure_xid()
        tmp = lake.changeset_tmp(xid)
        cols = key_columns(t)
        writer: pq.ParquetWriter | None = None
        n, lo, hi, contiguous = 0, -1, -1, True
        try:
            for b in batches:
                data = _to_arrow(t, b)
                if not data.num_rows:
                    continue
                data = generated.compute(self, t, data, conform)
                self._check_new_rows(t, data)
                rids = lake.allocate_rids(data.num_rows)
                contiguous = contiguous and (n == 0 or int(rids[0]) == hi + 1)
                lo, hi = (int(rids[0]) if n == 0 else lo), int(rids[-1])
                new = data.add_column(0, _RID_FIELD, pa.array(rids)).replace_schema_metadata(None)
                del data, b
                if writer is None:
                    writer = pq.ParquetWriter(tmp, new.schema, **PARQUET_OPTIONS)
                writer.write_table(new, row_group_size=CHANGESET_ROW_GROUP)
                n += new.num_rows
                columns = new.column_names
                del new
            if writer is None:
                return 0
            writer.close()
            writer = None
            if lake.settings.fsync:
                fsync_path(tmp)
            rid_range = (lo, hi) if contiguous else None
            # The keys are read back from the file: kept from the batches, each would hold
            # its whole batch (DuckDB hands a batch over as one allocation).
            keys = None
            key_names = self.lake.unique_key_columns(self, t)
            if key_names:
                keys = pq.read_table(tmp, columns=[RID, *key_names], use_threads=False)
            refs = None  # (the referencing columns, for the foreign keys' check once logged)
            ref_names = [c for link in foreign_keys.referencing_links(self, t) for c in link.child_cols]
            if ref_names:
                refs = pq.read_table(tmp, columns=[RID, *dict.fromkeys(ref_names)], use_threads=False)
            with lake.dml_lock:
                lake.check_not_truncated(self, t)
                if keys is not None:
                    self._check_unique(t, keys)
                    del keys
                seq = self._next_seq(n)
                rec = lake.changeset_file_record(xid, self._logged_subxid(), t.oid, tmp, n, columns)
                self._log(rec)
                assert rec.written is not None
                part = FileRows.changeset(rec.written[0], OP_WRITE, seq, n, columns, rid_range)
                assert part is not None  # (ROW_NUMBER columns never come this way)
                self._pending.append(_Pending(self._subxid, t.oid, part, OP_WRITE, rid_range, 0))
                if cols is not None:
                    self._key_inexact.setdefault(t.oid, []).append(self._subxid)
            self._release_due = True
            if refs is not None:
                foreign_keys.after_write(self, t, refs)
            return n
        finally:
            if writer is not None:
                writer.close()
            tmp.unlink(missing_ok=True)  # (renamed away once logged)

    def apply_update(self, table: str | Table, old: pa.Table, new: pa.Table, *, changed: Iterable[str] | None = None) -> int:
        """Write rows already chosen and computed by the caller (the SQL layer): ``old`` and
        ``new`` have ``_rid`` plus every column under its physical name, row for row.
        ``changed``: the columns the statement assigns (None: any may have changed)."""
        self._check_writable()
        t = self.table(table)
        return self._guard(self.update_rows, t, old, new, None if changed is None else frozenset(changed))

    def check_publishable(self, table: str | Table, op: str) -> None:
        """PostgreSQL's check at executor start of an UPDATE or DELETE (``op``) of a
        published table, whether or not a row is then touched."""
        check_replica_identity(self.catalog(), self.table(table), op)

    def update_rows(self, t: Table, old: pa.Table, new: pa.Table, changed: frozenset[str] | None, *, routed: bool = False) -> int:
        """Write an UPDATE's rows to the table version ``t`` inside the running statement
        (the caller checked the transaction is writable and guards the statement), as
        :meth:`apply_update` and a cascading foreign key do. ``changed``: the columns the
        statement assigns (None: any)."""
        if t.partition_key is not None:
            return self._update_partitioned(t, old, new, changed)
        check_replica_identity(self.catalog(), t, "update")  # (at executor start: rows or none)
        if old.num_rows == 0:
            return 0
        if generated.columns(t):  # (computed before any constraint is checked)
            new = generated.compute(self, t, _conform_table(t, new), conform)
            changed = generated.changed_with(t, changed)
        if t.partition_bound is not None and not routed:  # (an UPDATE of the partition itself: no row moves)
            partitions.check_rows(self.catalog(), t, _conform_table(t, new), _row_texts)
        held = checks.any_held(self, t)
        if not held:
            enums.check_rows(self, t, new)
            domains.check_rows(self, t, new)
            self._check_not_null(t, new)
        try:
            new = _conform_table(t, new)
        except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as e:
            raise LakeError("22P02", f"invalid input value: {e}") from None
        if held:  # (the CHECKs evaluate the values as stored)
            self._check_new_rows(t, new.sort_by(RID))  # (the first failing row in rid order, as a heap scan)
        old = _conform_table(t, old)
        with self.lake.dml_lock:
            self._lock_rows(t, new.column(RID))
            self._check_unique(t, new, exclude=new.column(RID), changed=changed)
            p = self._add_pending(t, "U", new, old)
        self._log_change(t, "U", new, old, p)
        # (PostgreSQL fires the referenced side's action triggers before the checks)
        foreign_keys.after_change(self, t, old, new, changed)
        foreign_keys.after_write(self, t, new, old, changed)
        self._maybe_spill()
        return new.num_rows

    def _by_partition(self, t: Table, rows: pa.Table) -> Iterator[tuple[Table, pa.Table]]:
        """Rows of the partitioned table ``t`` (``_rid``, its physical columns and
        :data:`~walsender_proxy.lake.partitions.LEAF`, the partition each is in) split in
        runs by partition, each under that partition's physical names."""
        cat = self.catalog()
        if partitions.LEAF not in rows.column_names:
            raise LakeError("XX000", f'rows of partitioned table "{t.name}" without their partitions')
        leaf_of = rows.column(partitions.LEAF).to_numpy()
        i, n = 0, rows.num_rows
        while i < n:
            j = i + 1
            while j < n and leaf_of[j] == leaf_of[i]:
                j += 1
            leaf = cat.tables[int(leaf_of[i])]
            yield leaf, _as_table(leaf, t, rows.slice(i, j - i), with_rid=True)
            i = j

    def _update_partitioned(self, t: Table, old: pa.Table, new: pa.Table, changed: frozenset[str] | None) -> int:
        """An UPDATE through a partitioned table: each partition's rows in turn; a row
        whose new key leaves its partition is deleted there and routed again from ``t``
        (PostgreSQL's cross-partition update: a DELETE and an INSERT, row by row)."""
        cat = self.catalog()
        if partitions.LEAF not in new.column_names:
            new = new.append_column(partitions.LEAF, old.column(partitions.LEAF))
        n = 0
        offset = 0
        for leaf, old_rows in self._by_partition(t, old):
            k = old_rows.num_rows
            new_rows = _as_table(leaf, t, new.slice(offset, k), with_rid=True)
            offset += k
            stays = partitions.constraint_mask(cat, leaf, new_rows)
            i = 0
            while i < k:
                j = i + 1
                while j < k and stays[j] == stays[i]:
                    j += 1
                if stays[i]:
                    self.update_rows(leaf, old_rows.slice(i, j - i), new_rows.slice(i, j - i), changed, routed=True)
                else:
                    for r in range(i, j):
                        self.delete_rows(leaf, old_rows.slice(r, 1))
                        self._insert(t, _as_table(t, leaf, new_rows.slice(r, 1)))
                i = j
            n += k
        return n

    def apply_delete(self, table: str | Table, old: pa.Table) -> int:
        """Delete rows already chosen by the caller (``_rid`` plus physical columns)."""
        self._check_writable()
        t = self.table(table)
        return self._guard(self.delete_rows, t, old)

    def delete_rows(self, t: Table, old: pa.Table) -> int:
        """Delete rows of the table version ``t`` inside the running statement (the caller
        checked the transaction is writable and guards the statement), as
        :meth:`apply_delete` and a cascading foreign key do."""
        if t.partition_key is not None:
            return sum(self.delete_rows(leaf, rows) for leaf, rows in self._by_partition(t, old))
        check_replica_identity(self.catalog(), t, "delete")
        if old.num_rows == 0:
            return 0
        old = _conform_table(t, old)
        with self.lake.dml_lock:
            self._lock_rows(t, old.column(RID))
            p = self._add_pending(t, "D", None, old)
        self._log_change(t, "D", None, old, p)
        foreign_keys.after_change(self, t, old)
        self._maybe_spill()
        return old.num_rows

    def snapshot_query(
        self, table: str | Table, *, with_rid: bool = False, sql_types: bool = False, heap_order: bool = False
    ) -> SnapshotQuery:
        """SQL reading ``table`` as this statement sees it (snapshot plus own writes), for
        the SQL layer to embed in a larger query."""
        self._check_active()
        t = self.table(table)
        if t.partition_key is not None:
            return self._partitioned_query(t, with_rid=with_rid, sql_types=sql_types, heap_order=heap_order)
        enum_labels = None
        if sql_types and any(c.type.is_enum for c in t.columns):
            cat = self.catalog()
            enum_labels = {e.oid: e.names for c in t.columns if (e := cat.enum_of(c.type)) is not None}
        return self.lake.store.snapshot_query(
            t,
            self.statement_csn(),
            own=self.own_parts(t.oid),
            with_rid=with_rid,
            sql_types=sql_types,
            heap_order=heap_order,
            enum_labels=enum_labels,
        )

    def _partitioned_query(self, t: Table, *, with_rid: bool, sql_types: bool, heap_order: bool) -> SnapshotQuery:
        """A partitioned table read as its partitions' rows, partition after partition in
        their order (an Append's); with ``with_rid``, each row also names its partition
        (:data:`~walsender_proxy.lake.partitions.LEAF`)."""
        leaves = partitions.leaves(self.catalog(), t)
        if not leaves:  # (no partition yet: no row, with the columns' types)
            q = self.lake.store.snapshot_query(t, self.statement_csn(), with_rid=with_rid, sql_types=sql_types)
            return SnapshotQuery(f"SELECT *, NULL::BIGINT AS {partitions.LEAF} FROM ({q.sql})", q.arrow) if with_rid else q
        arrow: dict[str, pa.Table] = {}
        cols = ", ".join('"' + c.name.replace('"', '""') + '"' for c in t.columns)
        parts = []
        for i, leaf in enumerate(leaves):
            q = self.snapshot_query(leaf, with_rid=True, sql_types=sql_types, heap_order=heap_order)
            arrow.update(q.arrow)
            parts.append(f"SELECT {i} AS __wpx_pos, {leaf.oid}::BIGINT AS {partitions.LEAF}, {RID}, {cols} FROM ({q.sql})")
        sel = f"{RID}, {partitions.LEAF}, {cols}" if with_rid else cols
        order = f" ORDER BY __wpx_pos, {RID}" if heap_order or with_rid else ""
        return SnapshotQuery(f"SELECT {sel} FROM ({' UNION ALL '.join(parts)}){order}", arrow)

    def delete(
        self,
        table: str | Table,
        where: str | Mapping[str, Any] | None = None,
        params: Sequence[Any] | None = None,
    ) -> int:
        self._check_writable()
        self.begin_statement()
        return self._guard(self._delete, table, where, params)

    def _delete(self, table: str | Table, where: Any, params: Sequence[Any] | None) -> int:
        t = self.table(table)
        where_sql, args = _where(where, list(params or []), t)
        old = self._select_targets(t, where_sql, args)
        return self.delete_rows(t, old)

    def truncate(
        self,
        tables: str | Table | Iterable[str | Table],
        *,
        cascade: bool = False,
        restart_identity: bool = False,
    ) -> list[str]:
        """TRUNCATE; returns the tables CASCADE truncated besides (referencing ones)."""
        self._check_writable()
        self.begin_statement()
        return self._guard(self._truncate, tables, cascade, restart_identity)

    def _truncate(self, tables: Any, cascade: bool, restart_identity: bool) -> list[str]:
        if isinstance(tables, (str, Table)):
            tables = [tables]
        ts = [self.table(x) for x in tables]
        added = foreign_keys.truncate_targets(self, ts, cascade)
        ts += added
        ts = _with_partitions(self.catalog(), ts)
        for t in ts:
            self.lake.lock_table(self, t)
        xid = self.ensure_xid()
        self._log(
            R.Truncate(xid, self._logged_subxid(), tuple(t.oid for t in ts), cascade, restart_identity)
        )
        with self.lake.dml_lock:
            for t in ts:
                seq = self._next_seq(1)
                self._pending.append(
                    _Pending(self._subxid, t.oid, delta_rows(OP_TRUNCATE, None, seq), OP_TRUNCATE)
                )
        return [t.name for t in added]

    def _select_targets(
        self, t: Table, where_sql: str, args: list[Any], extra: list[str] | None = None
    ) -> pa.Table:
        """The current rows a statement touches, with their ``_rid``, in physical names."""
        csn = self.statement_csn()
        same_names = all(c.physical == c.name for c in t.columns)
        q = self.lake.store.snapshot_query(
            t,
            csn,
            own=self.own_parts(t.oid),
            with_rid=True,
            physical=True,
            prefilter=where_sql if where_sql != "true" and same_names else None,
        )
        cols = ", ".join(["*", *(extra or [])])
        # The WHERE clause speaks SQL names; expose both by aliasing physical → name.
        alias = ", ".join(
            f'"{c.physical}" AS "{c.name}"' for c in t.columns if c.physical != c.name
        )
        inner = f"SELECT *{', ' + alias if alias else ''} FROM ({q.sql})"
        sql = f"SELECT {cols} FROM ({inner}) AS t WHERE {where_sql}"
        cur = self.lake.store.cursor()
        try:
            q.register(cur)
            try:
                return cur.sql(sql, params=args).to_arrow_table()
            except Exception as e:  # DuckDB's binder/parser errors become PostgreSQL's
                raise _duck_error(e) from None
        finally:
            cur.close()

    def _add_pending(
        self,
        t: Table,
        op: str,
        new: pa.Table | None,
        old: pa.Table | None,
        rid_range: tuple[int, int] | None = None,
    ) -> _Pending:
        """A statement's rows become this transaction's pending delta rows (under the lake's
        statement lock, together with the checks that admitted them)."""
        src = new if new is not None else old
        assert src is not None
        n = src.num_rows
        seq = self._next_seq(n)
        code = OP_DELETE if op == "D" else OP_WRITE
        rows = _delta_rows(t, code, src, seq)
        size = rows.get_total_buffer_size()
        pending = _Pending(self._subxid, t.oid, rows, code, rid_range, size)
        self._pending.append(pending)
        self._pending_bytes += size
        cols = key_columns(t)
        if cols is None:
            return pending
        if n > SMALL or (
            new is not None and old is not None and new.column(RID) != old.column(RID)
        ):
            self._key_inexact.setdefault(t.oid, []).append(self._subxid)
            return pending
        rids = src.column(RID).to_pylist()
        nones = itertools.repeat(None, n)
        events = list(
            zip(
                itertools.repeat(self._subxid, n),
                rids,
                keys_of(old, cols) if old is not None else nones,
                keys_of(new, cols) if new is not None else nones,
                strict=False,
            )
        )
        self._key_events.setdefault(t.oid, []).extend(events)
        own = self._own_keys.get(t.oid)
        if own is None:
            self._own_keys[t.oid] = OwnKeys.build(events)
        else:
            own.add(events)
        return pending

    def _log_change(
        self, t: Table, op: str, new: pa.Table | None, old: pa.Table | None, pending: _Pending
    ) -> None:
        """Log the statement. A statement logged as a changeset has its rows in Parquet
        beside the log from now on: its pending part reads them there (spill.py) and lets
        the memory go."""
        xid = self.ensure_xid()
        rec = self.lake.change_record(xid, self._logged_subxid(), t.oid, op, new, old)
        self._log(rec)
        written = getattr(rec, "written", None)
        if written is None:
            return
        path, num_rows, columns = written
        assert isinstance(pending.rows, pa.Table)
        seq = pending.rows.column(SEQ)[0].as_py()
        part = FileRows.changeset(path, pending.op, seq, num_rows, columns, pending.rid_range)
        if part is not None:
            self._replace_parts({id(pending): part})
            self._release_due = True

    def _replace_parts(self, done: dict[int, FileRows | None]) -> None:
        """Swap in-memory parts (by id) for files (None: drop the part), under the statement
        lock. A new list, so other transactions' digests of the old one are rebuilt."""
        out: list[_Pending] = []
        for p in self._pending:
            if id(p) not in done:
                out.append(p)
                continue
            f = done[id(p)]
            if f is not None:
                out.append(_Pending(p.subxid, p.relid, f, p.op, f.rid_range, 0))
        with self.lake.dml_lock:
            self._pending = out
            self._pending_bytes = sum(p.nbytes for p in out)

    def _maybe_spill(self) -> None:
        """Over ``spill_bytes`` of pending rows in memory: write them out
        (:func:`~walsender_proxy.lake.spill.spill_grouped`); truncates (one row) stay."""
        if self._in_section or self._pending_bytes <= self.lake.settings.spill_bytes:
            return
        mem = [
            p
            for p in self._pending
            if isinstance(p.rows, pa.Table) and p.op != OP_TRUNCATE and p.rows.num_rows
        ]
        files = spill_grouped(
            self.lake.spill,
            [((p.relid, p.subxid, p.op), p.rows, p.rid_range) for p in mem],  # type: ignore[misc]
        )
        self._replace_parts({id(p): f for p, f in zip(mem, files, strict=True)})
        self._release_due = True

    # -- digests for the lake's checks (called under the lake's statement lock) ----------
    def pending_by_table(self) -> dict[int, PendingTable]:
        """Per table: truncated or not, and the delta-row chunks pending (incremental)."""
        if self._scan_src is not self._pending:
            self._scan_src, self._scan_pos, self._scan = self._pending, 0, {}
        pending = self._pending
        if self._scan_pos < len(pending):
            for p in pending[self._scan_pos :]:
                rp = self._scan.get(p.relid)
                if rp is None:
                    rp = self._scan[p.relid] = PendingTable()
                if p.op == OP_TRUNCATE:
                    rp.truncated = True
                elif p.op == OP_WRITE:  # a statement's chunk is all writes or all deletes
                    rp.chunks.append(p.rows)
                    rp.files = rp.files or isinstance(p.rows, FileRows)
            self._scan_pos = len(pending)
        return self._scan

    def own_keys(self, relid: int) -> OwnKeys | None:
        """This transaction's own key state for ``relid`` (None: not tracked exactly)."""
        if self._key_inexact.get(relid):
            return None
        return self._own_keys.get(relid) or _NO_OWN_KEYS

    def locked_rids(self, relid: int) -> tuple[set[int], list[pa.Array]]:
        """The rows this transaction holds in ``relid``: a set of small statements' rids and
        the arrays of big ones (incremental)."""
        locks = self._rid_locks.get(relid)
        if not locks:
            return _NO_LOCKS
        d = self._lock_digest.get(relid)
        if d is None or d[0] is not locks:
            d = (locks, 0, set(), [])
        src, pos, small, big = d
        for _, arr in locks[pos:]:
            if len(arr) <= SMALL:
                small.update(arr.to_pylist())
            else:
                big.append(arr)
        self._lock_digest[relid] = (src, len(locks), small, big)
        return small, big

    def _lock_rows(self, t: Table, rids: pa.ChunkedArray | pa.Array) -> None:
        """The lake refuses rows another transaction holds or a commit since the snapshot
        wrote (40001); then they are this transaction's. The caller holds the statement
        lock, so the check and the lock are one step."""
        arr = rids.combine_chunks() if isinstance(rids, pa.ChunkedArray) else rids
        self.lake.lock_rows(self, t, arr, self.statement_csn())
        self._rid_locks.setdefault(t.oid, []).append((self._subxid, arr))

    def _check_new_rows(self, t: Table, data: pa.Table) -> None:
        """NOT NULL and CHECK constraints of new row versions, as ExecConstraints checks
        each row in turn: NOT NULL then the checks of one row before the next row's (the
        values' enum labels and domains first: they were read and coerced before)."""
        enums.check_rows(self, t, data)
        domains.check_rows(self, t, data)
        bad = checks.first_violation(self, t, data)
        if bad is None:
            self._check_not_null(t, data)
            return
        i, check = bad
        self._check_not_null(t, data.slice(0, i + 1))
        raise checks.violation(t, check, _row_texts(t, data.slice(i, 1)))

    def _check_not_null(self, t: Table, data: pa.Table) -> None:
        """NOT NULL of the transaction's own view of the table and of the newest committed
        one (a SET NOT NULL made since its snapshot binds it, as PostgreSQL's relcache)."""
        _check_not_null(t, data)
        newest = self.lake.catalog_at(self.lake.clock.last_assigned).tables.get(t.oid)
        if newest is not None and newest is not t and layout(newest).not_null != layout(t).not_null:
            _check_not_null(newest, data)

    def set_not_null(self, table: str, column: str, not_null: bool) -> None:
        """ALTER COLUMN … SET / DROP NOT NULL; SET first checks the rows every transaction
        can see or still commit (23502 ``contains null values``)."""
        args = (table, column, not_null, self._path())
        self._check_writable()

        def go() -> None:
            ops, t = ddl.set_not_null(self.ddl_catalog(), self.lake.allocate_oid, *args)
            if not ops:
                return
            self.lake.take_catalog_lock(self)
            ops, t = ddl.set_not_null(self.ddl_catalog(), self.lake.allocate_oid, *args)
            if ops and not_null:
                self.lake.check_no_nulls(self, t, column)
            if ops:
                self._ddl(ops)

        self._guard(go)

    def _check_unique(
        self,
        t: Table,
        new: pa.Table,
        exclude: pa.Array | pa.ChunkedArray | None = None,
        changed: frozenset[str] | None = None,
    ) -> None:
        """``changed``: an UPDATE's assigned columns (a key none of them is in is kept)."""
        self.lake.check_unique(self, t, new, exclude, changed)

    # -- messages ------------------------------------------------------------------------
    def message(self, prefix: str, payload: bytes | str, *, transactional: bool = True) -> int:
        """``pg_logical_emit_message``; returns the message's LSN."""
        self._check_active()
        data = payload.encode() if isinstance(payload, str) else bytes(payload)
        xid = self.ensure_xid()
        lsn, _ = self._log(R.Message(xid, self._logged_subxid(), transactional, prefix, data))
        return lsn

    # -- DDL -----------------------------------------------------------------------------
    def ddl_catalog(self) -> Catalog:
        """The newest committed catalog plus this transaction's own DDL."""
        cat = self.lake.catalog_at(self.lake.clock.last_assigned)
        for _, op in self._ops:
            cat = cat.apply(op)
        return cat

    def _ddl(self, ops: list[CatalogOp]) -> None:
        xid = self.ensure_xid()
        self._log(R.CatalogChange(xid, self._logged_subxid(), tuple(ops)))
        self._ops.extend((self._subxid, o) for o in ops)

    def _run_ddl(self, build: Any, *args: Any, **kw: Any) -> Any:
        self._check_writable()

        def go() -> Any:
            # Validate first, so a refused statement takes no lock; then again under the
            # catalog lock, against the newest catalog, which is what the change applies to.
            ops, result = build(self.ddl_catalog(), self.lake.allocate_oid, *args, **kw)
            if not ops:
                return result
            self.lake.take_catalog_lock(self)
            ops, result = build(self.ddl_catalog(), self.lake.allocate_oid, *args, **kw)
            if ops:
                self._ddl(ops)
            return result

        return self._guard(go)

    def create_schema(self, name: str, *, if_not_exists: bool = False, system: bool = False) -> None:
        """``system``: a ``pg_`` name the server makes (a session's temporary schema)."""
        self._run_ddl(ddl.create_schema, name, if_not_exists, system)

    def _path(self) -> tuple[str, ...]:
        return self.search_path or self.lake.search_path

    def _named(self, name: str) -> str:
        """``pg_temp.x`` names the session's own temporary schema (the first ``pg_temp_``
        schema of its search path), as in PostgreSQL."""
        schema, dot, rel = name.rpartition(".")
        if dot and schema == "pg_temp":
            own = next((s for s in self._path() if is_temp_schema(s)), None)
            if own is not None:
                return f"{own}.{rel}"
        return name

    def drop_schema(self, name: str, *, if_exists: bool = False, cascade: bool = False) -> None:
        self._run_ddl(ddl.drop_schema, name, if_exists, cascade)

    def create_table(
        self,
        name: str,
        columns: Sequence[tuple[str, str] | tuple[str, str, bool]],
        *,
        primary_key: Sequence[str] = (),
        replica_identity: str = "d",
        if_not_exists: bool = False,
        pkey_name: str | None = None,
        partition_by: tuple[str, Sequence[tuple[str, int]]] | None = None,
    ) -> Table | None:
        """``columns``: ``(name, type)`` or ``(name, type, not_null)``; types are SQL names.
        ``pkey_name``: the primary key's name when not ``<name>_pkey``. ``partition_by``:
        a partitioned table's strategy (``range``/``list``/``hash``) and key columns."""
        return self._run_ddl(
            ddl.create_table,
            name,
            columns,
            tuple(primary_key),
            replica_identity,
            if_not_exists,
            (self.creation_schema(),) if "." not in name else self.lake.search_path,
            pkey_name,
            partition_by,
        )

    def create_partition(
        self,
        name: str,
        parent: str,
        spec: partition_ddl.BoundSpec,
        *,
        partition_by: tuple[str, Sequence[tuple[str, int]]] | None = None,
    ) -> Table:
        """``CREATE TABLE name PARTITION OF parent FOR VALUES …`` [``PARTITION BY …``].
        A default partition of ``parent`` must not hold rows the new bound takes (23514,
        as ``check_default_partition_contents``)."""
        p = self.table(parent)
        schema, _, rel = self._named(name).rpartition(".")
        schema = schema or self.creation_schema()

        def build(cat: Catalog, alloc: Any) -> tuple[list[CatalogOp], Table]:
            ops, t = partition_ddl.create_partition(cat, alloc, schema, rel, cat.tables.get(p.oid, p), spec)
            if partition_by is not None:
                t = replace(t, partition_key=partition_ddl.partition_key(t, *partition_by))
                ops = [{"op": "put_table", "table": t.to_json()}]
            return ops, t

        made: Table = self._run_ddl(build)
        self._guard(self._check_default_contents, made)
        return made

    def attach_partition(self, parent: str, table: str, spec: partition_ddl.BoundSpec) -> Table:
        """ALTER TABLE parent ATTACH PARTITION table FOR VALUES …: the table's rows must
        lie in the bound (23514, as PostgreSQL's scan of them), and a default partition's
        outside it."""
        p, t = self.table(parent), self.table(table)

        def build(cat: Catalog, alloc: Any) -> tuple[list[CatalogOp], Table]:
            return partition_ddl.attach_partition(cat, cat.tables.get(p.oid, p), cat.tables.get(t.oid, t), spec)

        made: Table = self._run_ddl(build)
        self._guard(self._check_attached_rows, made)
        self._guard(self._check_default_contents, made)
        return made

    def _check_attached_rows(self, made: Table) -> None:
        leaf = self._leaf_outside(made, made)
        if leaf is not None:
            raise LakeError("23514", f'partition constraint of relation "{leaf.name}" is violated by some row')

    def _leaf_outside(self, tree: Table, bounded: Table) -> Table | None:
        """The first partition under ``tree`` (or ``tree``) holding a row outside
        ``bounded``'s partition constraint, as this transaction sees the rows."""
        cat = self.catalog()
        for leaf in partitions.leaves(cat, tree):
            rows = self._read(leaf, None, None, False, physical=True)
            if rows.num_rows and not partitions.constraint_mask(cat, bounded, rows, {c.name: c.physical for c in leaf.columns}).all():
                return leaf
        return None

    def detach_partition(self, parent: str, table: str) -> Table:
        """ALTER TABLE parent DETACH PARTITION table."""
        p, t = self.table(parent), self.table(table)
        return self._run_ddl(lambda cat, alloc: partition_ddl.detach_partition(cat, cat.tables.get(p.oid, p), cat.tables.get(t.oid, t)))

    def _check_default_contents(self, made: Table) -> None:
        cat = self.catalog()
        assert made.partition_bound is not None
        parent = cat.tables[made.partition_bound.parent]
        default = next((t for t in cat.partitions(parent.oid) if t.partition_bound and t.partition_bound.kind == "d"), None)
        if default is not None and made.partition_bound.kind != "d" and self._leaf_outside(default, default) is not None:
            raise LakeError("23514", f'updated partition constraint for default partition "{default.name}" would be violated by some row')

    def drop_table(
        self, name: str, *, if_exists: bool = False, cascade: bool = False, also: Sequence[int] = ()
    ) -> list[str]:
        """DROP TABLE; returns the views and foreign keys CASCADE dropped besides (for the
        NOTICE). ``also``: the OIDs of the other tables the same statement drops."""
        return self._run_ddl(ddl.drop_table, self._named(name), if_exists, self._path(), cascade, tuple(also)) or []

    # -- views ---------------------------------------------------------------------------
    def view(self, name: str) -> View | None:
        """The view ``name`` resolves to (None: no relation of that name; 42809 for a table
        or a sequence)."""
        return view_ddl.resolve_view(self.catalog(), self._named(name), self._path())

    def create_view(
        self,
        name: str,
        query: str,
        definition: str,
        columns: Sequence[ViewColumn],
        depends: Sequence[int],
        *,
        or_replace: bool = False,
        format_type: view_ddl.FormatType = lambda oid, typmod: str(oid),
        expands: bool = True,
        key_depends: Sequence[int] = (),
    ) -> View:
        """CREATE [OR REPLACE] VIEW; ``name`` qualified by the caller; ``key_depends``: the
        tables whose primary key its GROUP BY rests on."""
        return self._run_ddl(
            view_ddl.create_view, name, query, definition, columns, depends, or_replace, self._path(), format_type, expands, key_depends
        )

    def drop_view(self, name: str, *, if_exists: bool = False, cascade: bool = False, also: Sequence[int] = ()) -> list[str]:
        """DROP VIEW; returns the views CASCADE dropped besides (for the NOTICE); ``also``:
        the other views the statement drops."""
        return self._run_ddl(view_ddl.drop_view, self._named(name), if_exists, cascade, self._path(), tuple(also)) or []

    def dependent_view_lines(self, oids: Sequence[int]) -> list[str]:
        """PostgreSQL's DETAIL lines for the views reading any of ``oids`` (not among them)."""
        return view_ddl.dependency_lines(self.catalog(), oids, self._path())[1]

    def rename_view(self, name: str, new_name: str) -> None:
        self._run_ddl(view_ddl.rename_view, self._named(name), new_name, self._path())

    def rename_view_column(self, name: str, column: str, new_name: str) -> None:
        self._run_ddl(view_ddl.rename_view_column, self._named(name), column, new_name, self._path())

    # -- functions -----------------------------------------------------------------------
    def create_function(self, fn: Function, *, or_replace: bool, describe: function_ddl.Describe) -> Function:
        """CREATE [OR REPLACE] FUNCTION of ``fn`` (its OID given here)."""
        return self._run_ddl(function_ddl.create_function, fn, or_replace, describe)

    def replace_function(self, fn: Function) -> None:
        """ALTER FUNCTION of its attributes: the same function, OID and body."""
        self._run_ddl(function_ddl.alter_function, fn)

    def drop_functions(self, oids: Sequence[int], *, cascade: bool) -> list[str]:
        """DROP FUNCTION; returns what CASCADE dropped besides (for the NOTICE)."""
        return self._run_ddl(function_ddl.drop_functions, tuple(oids), cascade, self._path()) or []

    def domain(self, name: str) -> Domain:
        """The domain ``name`` (qualified, or along the search path)."""
        schema, dot, rel = self._named(name).rpartition(".")
        d = self.catalog().resolve_domain([schema, rel] if dot else [rel], self._path())
        if d is None:
            raise LakeError("42704", f'type "{name}" does not exist')
        return d

    def create_domain(self, dom: Domain) -> Domain:
        """CREATE DOMAIN of ``dom`` (its OIDs given here)."""
        return self._run_ddl(domain_ddl.create_domain, dom)

    def alter_domain(self, dom: Domain, *, validate: Check | bool | None = False) -> Domain:
        """ALTER DOMAIN: ``dom`` as it becomes; ``validate`` a new check (or None: a new
        NOT NULL) the stored values of its columns must pass first."""
        if validate is not False:
            assert validate is None or isinstance(validate, Check)

            def go() -> None:
                self.lake.take_catalog_lock(self)
                domains.validate(self, self.ddl_catalog(), dom.oid, validate)

            self._check_writable()
            self._guard(go)
        return self._run_ddl(domain_ddl.alter_domain, dom)

    def drop_domains(self, oids: Sequence[int]) -> None:
        """DROP DOMAIN of domains nothing else uses any more (2BP01 otherwise)."""
        self._run_ddl(domain_ddl.drop_domains, tuple(oids))

    # -- enums ---------------------------------------------------------------------------
    def enum(self, name: str) -> EnumType | None:
        """The enum ``name`` (qualified, or along the search path); None: no enum."""
        schema, dot, rel = self._named(name).rpartition(".")
        return self.catalog().resolve_enum([schema, rel] if dot else [rel], self._path())

    def create_enum(self, en: EnumType, labels: Sequence[str]) -> EnumType:
        """CREATE TYPE … AS ENUM of ``en`` (its OIDs given here) with ``labels``."""
        return self._run_ddl(enum_ddl.create_enum, en, tuple(labels))

    def add_enum_label(self, oid: int, label: str, neighbor: str | None = None, *, after: bool = False, if_not_exists: bool = False) -> bool:
        """ALTER TYPE … ADD VALUE; False when IF NOT EXISTS found the label there."""
        added = self._run_ddl(enum_ddl.add_label, oid, label, neighbor, after, if_not_exists)
        if added:
            self.added_enum_labels.add((oid, label))
        return added

    def rename_enum(self, oid: int, new_name: str) -> None:
        self._run_ddl(enum_ddl.rename_enum, oid, new_name)

    def drop_enums(self, oids: Sequence[int]) -> None:
        """DROP TYPE of enums nothing else uses any more (2BP01 otherwise)."""
        self._run_ddl(enum_ddl.drop_enums, tuple(oids))

    # -- composite types -----------------------------------------------------------------
    def composite(self, name: str) -> CompositeType | None:
        """The composite type ``name`` (qualified, or along the search path); None: none."""
        schema, dot, rel = self._named(name).rpartition(".")
        return self.catalog().resolve_composite([schema, rel] if dot else [rel], self._path())

    def create_composite(self, ct: CompositeType) -> CompositeType:
        """CREATE TYPE … AS (…) of ``ct`` (its OIDs given here)."""
        return self._run_ddl(composite_ddl.create_composite, ct)

    def rename_composite(self, oid: int, new_name: str) -> None:
        self._run_ddl(composite_ddl.rename_composite, oid, new_name)

    def drop_composite_attribute(self, oid: int, name: str) -> None:
        self._run_ddl(composite_ddl.drop_attribute, oid, name)

    def drop_composites(self, oids: Sequence[int]) -> None:
        """DROP TYPE of composite types nothing else uses any more (2BP01 otherwise)."""
        self._run_ddl(composite_ddl.drop_composites, tuple(oids))

    def add_column(
        self,
        table: str,
        name: str,
        type_name: str,
        *,
        not_null: bool = False,
        default: ColumnDefault | None = None,
        identity: str = "",
    ) -> None:
        """``ADD COLUMN``. With a ``default``, the rows already in the table are the
        caller's to fill (:meth:`rewrite_rows`) and to check for NULLs."""

        def build(cat: Catalog, alloc: Any) -> tuple[list[CatalogOp], None]:
            t = cat.resolve_table(table, self._path())
            view_ddl.no_dependent_views(cat, t, "ALTER TABLE … ADD COLUMN", adding=True)
            if not_null and default is None and self._read(t, None, None, False).num_rows:
                raise null_column_error(t, name)
            return ddl.add_column(t, name, parse_type(type_name), not_null, default, alloc, identity), None

        self._run_ddl(build)

    # -- sequences -----------------------------------------------------------------------
    def sequence(self, name: str) -> CatalogSequence:
        """The sequence ``name`` resolves to (42P01; 42809 for a table of that name)."""
        return self.catalog().resolve_sequence(self._named(name), self._path())

    def creation_schema(self) -> str:
        """Where an unqualified CREATE puts its object: as PostgreSQL's namespace search,
        the first schema of search_path that exists (3F000 when none does). A temporary
        schema named first (``pg_temp``) would make a temporary object there: refused."""
        path = self.creation_path if self.creation_path is not None else self.lake.search_path
        schemas = self.catalog().schemas
        for schema in path:
            if is_temp_schema(schema):
                raise LakeError("0A000", "an unqualified CREATE with pg_temp first in search_path is not supported by walsender-proxy")
            if schema in schemas or schema in ("pg_catalog", "information_schema"):
                return schema
        raise LakeError("3F000", "no schema has been selected to create in")

    def create_sequence(
        self,
        name: str,
        options: Mapping[str, Any],
        *,
        owned_by: Sequence[str] | None = None,
        if_not_exists: bool = False,
        identity: bool = False,
    ) -> CatalogSequence | None:
        """CREATE SEQUENCE (``options``: see :func:`sequence_ddl.init_params`);
        ``identity``: an identity column's."""
        name = self._named(name)
        if "." not in name:
            name = f"{self.creation_schema()}.{name}"
        return self._run_ddl(sequence_ddl.create_sequence, name, options, owned_by, if_not_exists, self._path(), identity)

    def alter_sequence(self, name: str, options: Mapping[str, Any], *, owned_by: Sequence[str] | None = None) -> CatalogSequence:
        """ALTER SEQUENCE: the definition with the transaction; a RESTART starts the counter's
        next generation, which the transaction sees at once and others once it commits."""

        def build(cat: Catalog, alloc: Any) -> tuple[list[CatalogOp], Any]:
            sq = cat.resolve_sequence(self._named(name), self._path())
            current = self.lake.sequences.peek(sq)[0]
            return sequence_ddl.alter_sequence(cat, alloc, self._named(name), options, owned_by, current, self._path())

        sq, log_reset = self._run_ddl(build)
        if log_reset:
            self.lake.sequences.reset_log(sq)
        return sq

    def drop_sequence(self, name: str, *, if_exists: bool = False, cascade: bool = False) -> list[str]:
        """DROP SEQUENCE; returns the column defaults CASCADE dropped (for the NOTICE)."""
        return self._run_ddl(sequence_ddl.drop_sequence, self._named(name), if_exists, cascade, self._path()) or []

    def rename_sequence(self, name: str, new_name: str) -> None:
        self._run_ddl(sequence_ddl.rename_sequence, self._named(name), new_name, self._path())

    def set_column_storage(self, table: str, name: str, storage: str) -> None:
        """``ALTER COLUMN … SET STORAGE`` (``p``, ``e``, ``x`` or ``m``)."""
        self._run_ddl(ddl.set_column_storage, table, name, storage, self._path())

    def alter_column_types(self, table: str, changes: Sequence[tuple[str, str]], *, rewrite: bool) -> None:
        """``ALTER COLUMN … TYPE`` of each (column, type text); ``rewrite``: the caller then
        rewrites every row with the new values (:meth:`rewrite_rows`)."""
        self._run_ddl(ddl.alter_column_types, table, tuple(changes), rewrite, self._path())

    def set_column_default(self, table: str, name: str, default: ColumnDefault | None) -> None:
        """``ALTER COLUMN … SET DEFAULT`` / ``DROP DEFAULT`` (None)."""
        self._run_ddl(ddl.set_column_default, table, name, default, self._path())

    def set_identity(self, table: str, name: str, identity: str, default: ColumnDefault | None) -> None:
        """``ALTER COLUMN … ADD GENERATED … AS IDENTITY`` (``identity`` ``a`` or ``d``, its
        sequence's nextval as ``default``, the sequence made by the caller) or ``DROP
        IDENTITY`` ("" and None: the column's sequence is dropped with it). The rows keep
        their values."""

        def build(cat: Catalog, alloc: Any) -> tuple[list[CatalogOp], None]:
            t = cat.resolve_table(table, self._path())
            col = t.column(name)
            if col is None:
                raise LakeError("42703", f'column "{name}" of relation "{t.name}" does not exist')
            ops: list[CatalogOp] = []
            if not identity and col.default is not None and col.default.sequence in cat.sequences:
                ops.append({"op": "drop_sequence", "oid": col.default.sequence})
            new = replace(col, identity=identity, default=default, not_null=col.not_null or bool(identity))
            t2 = replace(t, columns=tuple(new if c is col else c for c in t.columns))
            return [{"op": "put_table", "table": t2.to_json()}, *ops], None

        self._run_ddl(build)

    def with_generated(self, table: str | Table, rows: pa.Table) -> pa.Table:
        """``rows`` (``_rid`` and the columns under their physical names) with the table's
        generated columns as a write of them will store them: what RETURNING shows."""
        t = self.table(table)
        if not generated.columns(t) or rows.num_rows == 0:
            return rows
        return generated.compute(self, t, rows, conform)

    def set_generation(self, table: str, name: str, generation: Generation | None) -> None:
        """A column's generation expression (``GENERATED ALWAYS AS (…) STORED`` of CREATE
        TABLE or ADD COLUMN, as cooked by the SQL layer; its rows are the caller's to
        fill), or None: ``ALTER COLUMN … DROP EXPRESSION``."""

        def build(cat: Catalog, alloc: Any) -> tuple[list[CatalogOp], None]:
            t = cat.resolve_table(table, self._path())
            return generated.set_generation(t, name, generation, iter([alloc()]) if generation is not None else None), None

        self._run_ddl(build)

    def rewrite_rows(self, table: str | Table, old: pa.Table, new: pa.Table) -> int:
        """Rows rewritten by DDL (ADD COLUMN filling its default): stored like an update
        (``_rid`` plus every physical column, row for row), logged with op ``R``, which
        decoding skips — PostgreSQL's table rewrite is not decoded either. The rows are
        locked as an update's are."""
        self._check_writable()
        t = self.table(table)
        return self._guard(self._rewrite_rows, t, old, new)

    def _rewrite_rows(self, t: Table, old: pa.Table, new: pa.Table) -> int:
        if old.num_rows == 0:
            return 0
        try:
            new = _conform_table(t, new)
        except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as e:
            raise LakeError("22P02", f"invalid input value: {e}") from None
        new = generated.compute(self, t, new, conform)
        old = _conform_table(t, old)
        with self.lake.dml_lock:
            self._lock_rows(t, new.column(RID))
            p = self._add_pending(t, "R", new, old)
        self._log_change(t, "R", new, old, p)
        self._maybe_spill()
        return new.num_rows

    def drop_column(self, table: str, name: str, *, if_exists: bool = False) -> None:
        self._run_ddl(ddl.drop_column, table, name, if_exists, self._path())

    def rename_column(self, table: str, name: str, new_name: str) -> None:
        self._run_ddl(ddl.rename_column, table, name, new_name, self._path())

    def rename_table(self, table: str, new_name: str) -> None:
        self._run_ddl(ddl.rename_table, table, new_name, self._path())

    def set_table_schema(self, table: str, schema: str) -> None:
        self._run_ddl(ddl.set_table_schema, table, schema, self._path())

    def set_replica_identity(
        self, table: str, identity: str, index_columns: Sequence[str] = (), index_name: str = ""
    ) -> None:
        """``identity``: 'default', 'full', 'nothing' or 'index' (with ``index_columns``,
        and the index's name: the primary key's when not given)."""
        self._run_ddl(
            ddl.set_replica_identity, table, identity, tuple(index_columns), self._path(), index_name
        )

    def create_index(
        self,
        table: str,
        name: str | None,
        columns: Sequence[str],
        *,
        unique: bool = False,
        options: Sequence[int] = (),
        include: Sequence[str] = (),
        method: str = "btree",
        nulls_not_distinct: bool = False,
        if_not_exists: bool = False,
        constraint: bool = False,
        opclasses: Sequence[str] = (),
        expressions: Sequence[IndexExpr | None] = (),
        predicate: IndexExpr | None = None,
    ) -> str | None:
        """CREATE [UNIQUE] INDEX (or a UNIQUE constraint's index, ``constraint``); returns
        the index's name, None when IF NOT EXISTS found one. A unique index is first
        checked against the rows every transaction can see or still commit (23505
        "could not create unique index")."""
        args = (
            table, name, tuple(columns), unique, tuple(options or (0,) * len(columns)), tuple(include),
            method, nulls_not_distinct, if_not_exists, constraint, self._path(), tuple(opclasses),
            tuple(expressions), predicate,
        )  # fmt: skip
        self._check_writable()

        def go() -> str | None:
            ops, made = index_ddl.create_index(self.ddl_catalog(), self.lake.allocate_oid, *args)
            if not ops:
                return None
            self.lake.take_catalog_lock(self)
            ops, made = index_ddl.create_index(self.ddl_catalog(), self.lake.allocate_oid, *args)
            if not ops:
                return None
            t, ix = made
            if ix.unique:
                self.lake.check_unique_build(self, t, ix)
            self._ddl(ops)
            return ix.name

        return self._guard(go)

    def add_primary_key(self, table: str, columns: Sequence[str], name: str | None = None) -> str:
        """ALTER TABLE … ADD PRIMARY KEY: the rows every transaction can see or still
        commit are checked first, as PostgreSQL builds the index (23505 ``could not create
        unique index``) and then verifies its columns' NOT NULL (23502 ``contains null
        values``). Returns the key's name."""
        args = (table, tuple(columns), name, self._path())
        self._check_writable()

        def go() -> str:
            index_ddl.add_primary_key(self.ddl_catalog(), self.lake.allocate_oid, *args)
            self.lake.take_catalog_lock(self)
            before = self.table(table)
            ops, (t, key) = index_ddl.add_primary_key(self.ddl_catalog(), self.lake.allocate_oid, *args)
            self.lake.lock_table(self, t)
            self.lake.check_unique_build(self, t, key)
            for c in key.columns:
                col = before.column(c)
                if col is not None and not col.not_null:
                    self.lake.check_no_nulls(self, t, c)
            self._ddl(ops)
            return key.name

        return self._guard(go)

    def drop_index(self, name: str, *, if_exists: bool = False, cascade: bool = False) -> list[str]:
        """DROP INDEX; returns the foreign keys CASCADE dropped with it (for the NOTICE)."""
        return self._run_ddl(index_ddl.drop_index, self._named(name), if_exists, self._path(), cascade) or []

    def drop_constraint(self, table: str, name: str, *, if_exists: bool = False, cascade: bool = False) -> list[str]:
        """ALTER TABLE … DROP CONSTRAINT; returns the foreign keys CASCADE dropped besides."""
        return self._run_ddl(check_ddl.drop_constraint, table, name, if_exists, self._path(), cascade) or []

    def add_checks(self, table: str, specs: Sequence[check_ddl.CheckSpec], *, in_create: bool = False) -> list[str]:
        """CHECK constraints of CREATE TABLE, ADD COLUMN or ADD CONSTRAINT, in order; the
        rows already there are checked unless NOT VALID (23514 ``… is violated by some
        row``). Writers of the table in other open transactions would have to end first in
        PostgreSQL (AccessExclusiveLock), so they make it 40001 here. Returns the names."""
        self._check_writable()

        def go() -> list[str]:
            cat, alloc, path = self.ddl_catalog(), self.lake.allocate_oid, self._path()
            ops, _ = check_ddl.add_checks(cat, alloc, table, specs, path, in_create=in_create)
            if not ops:
                return []
            self.lake.take_catalog_lock(self)
            ops, (t, made) = check_ddl.add_checks(self.ddl_catalog(), alloc, table, specs, path, in_create=in_create)
            for c in made:
                checks.binding(t, c)
            self.lake.lock_table(self, t)
            self._ddl(ops)
            due = [c for c in made if c.validated]
            if due:
                checks.validate(self, t, due)
            return [c.name for c in made]

        return self._guard(go)

    def add_foreign_key(self, table: str, spec: foreign_key_ddl.ForeignKeySpec) -> str:
        """ALTER TABLE … ADD FOREIGN KEY (and a CREATE TABLE's REFERENCES): the rows already
        there are checked first unless NOT VALID (23503 naming the first that has no
        referenced row); writers of either table in other open transactions would have
        to end first in PostgreSQL (ShareRowExclusiveLock), so they make it 40001 here.
        Returns the constraint's name."""
        self._check_writable()

        def go() -> str:
            cat, alloc, path = self.ddl_catalog(), self.lake.allocate_oid, self._path()
            ends = [self.table(table)]
            with contextlib.suppress(PgError):
                ends.append(self.table(spec.ref_table))
            if any(t.partition_key is not None for t in ends):
                raise LakeError("0A000", "a foreign key of or to a partitioned table is not supported by walsender-proxy")
            foreign_key_ddl.add_foreign_key(cat, alloc, table, spec, path)
            self.lake.take_catalog_lock(self)
            ops, (t, fk) = foreign_key_ddl.add_foreign_key(self.ddl_catalog(), alloc, table, spec, path)
            ref = t if fk.ref_oid == t.oid else self.ddl_catalog().tables[fk.ref_oid]
            self.lake.lock_table(self, t)
            self.lake.lock_table(self, ref)
            self._ddl(ops)
            if fk.validated:
                foreign_keys.validate(self, t, fk)
            return fk.name

        return self._guard(go)

    def validate_constraint(self, table: str, name: str) -> None:
        """ALTER TABLE … VALIDATE CONSTRAINT of a NOT VALID foreign key or check."""
        self._check_writable()

        def go() -> None:
            cat, alloc, path = self.ddl_catalog(), self.lake.allocate_oid, self._path()
            if check_ddl.find_check(cat.resolve_table(table, path), name) is not None:
                ops, made_check = check_ddl.validate_check(cat, alloc, table, name, path)
                if not ops:
                    return
                self.lake.take_catalog_lock(self)
                ops, made_check = check_ddl.validate_check(self.ddl_catalog(), alloc, table, name, path)
                if made_check is None:
                    return
                self.lake.lock_table(self, made_check[0])
                checks.validate(self, made_check[0], [made_check[1]])
                self._ddl(ops)
                return
            ops, made = foreign_key_ddl.validate_foreign_key(cat, alloc, table, name, path)
            if not ops:
                return
            self.lake.take_catalog_lock(self)
            ops, made = foreign_key_ddl.validate_foreign_key(self.ddl_catalog(), alloc, table, name, path)
            if made is None:
                return
            foreign_keys.validate(self, *made)
            self._ddl(ops)

        self._guard(go)

    def set_comment(self, classoid: int, objoid: int, subid: int, text: str | None) -> None:
        """COMMENT ON: the object's ``pg_description`` text (None or "": removed)."""

        def build(cat: Catalog, alloc: Any) -> tuple[list[CatalogOp], None]:
            key = f"{classoid}:{objoid}:{subid}"
            if cat.comments.get(key) == (text or None):
                return [], None
            return [{"op": "put_comment", "key": key, "text": text or None}], None

        self._run_ddl(build)

    def set_ownership(self, oid: int, ownership: Ownership) -> None:
        """The owner and ACL of relation or schema ``oid`` (ALTER … OWNER TO, GRANT,
        REVOKE, and the creator of a new object)."""

        def build(cat: Catalog, alloc: Any) -> tuple[list[CatalogOp], None]:
            if cat.owners.get(oid) == ownership:
                return [], None
            return [{"op": "put_ownership", "oid": oid, "ownership": ownership.to_json()}], None

        self._run_ddl(build)

    def set_default_acl(self, key: str, acl: tuple[AclItem, ...] | None) -> None:
        """ALTER DEFAULT PRIVILEGES: the entry ``role:namespace:objtype`` (None: gone)."""

        def build(cat: Catalog, alloc: Any) -> tuple[list[CatalogOp], None]:
            if cat.default_acls.get(key) == acl:
                return [], None
            return [{"op": "put_default_acl", "key": key, "acl": None if acl is None else [a.to_json() for a in acl]}], None

        self._run_ddl(build)

    def rename_constraint(self, table: str, name: str, new_name: str) -> None:
        self._run_ddl(check_ddl.rename_constraint, table, name, new_name, self._path())

    def rename_index(self, name: str, new_name: str) -> None:
        self._run_ddl(index_ddl.rename_index, self._named(name), new_name, self._path())

    def set_reloptions(self, table: str, options: Sequence[str]) -> None:
        """The table's storage parameters (``fillfactor=70``, …), as checked by the SQL layer."""
        self._run_ddl(ddl.set_reloptions, table, tuple(options), self._path())

    def create_publication(
        self,
        name: str,
        *,
        all_tables: bool = False,
        tables: Sequence[str | ddl.PubTable] = (),
        schemas: Sequence[str] = (),
        publish: str = "insert, update, delete, truncate",
        publish_via_partition_root: bool = False,
        owner: str = "postgres",
    ) -> None:
        """``owner``: the role that creates it (``pg_publication.pubowner``)."""
        self._run_ddl(
            ddl.create_publication,
            name,
            all_tables,
            tables,
            schemas,
            publish,
            publish_via_partition_root,
            self._path(),
            owner,
        )

    def alter_publication(
        self,
        name: str,
        *,
        add_tables: Sequence[str | ddl.PubTable] = (),
        drop_tables: Sequence[str] = (),
        set_tables: Sequence[str | ddl.PubTable] | None = None,
        add_schemas: Sequence[str] = (),
        drop_schemas: Sequence[str] = (),
        set_schemas: Sequence[str] | None = None,
        publish: str | None = None,
        publish_via_partition_root: bool | None = None,
    ) -> None:
        self._run_ddl(
            ddl.alter_publication,
            name,
            add_tables,
            drop_tables,
            set_tables,
            add_schemas,
            drop_schemas,
            set_schemas,
            publish,
            publish_via_partition_root,
            self._path(),
        )

    def drop_publication(self, name: str, *, if_exists: bool = False) -> None:
        self._run_ddl(ddl.drop_publication, name, if_exists)

    # -- savepoints ----------------------------------------------------------------------
    @property
    def in_subtransaction(self) -> bool:
        """A savepoint is open (PostgreSQL's IsSubTransaction)."""
        return bool(self._savepoints)

    def savepoint(self, name: str) -> None:
        self._check_active()
        sub = self._next_subxid
        self._next_subxid += 1
        self._savepoints.append((name, sub))
        self._subxid = sub

    def _find_savepoint(self, name: str) -> int:
        for i in range(len(self._savepoints) - 1, -1, -1):
            if self._savepoints[i][0] == name:
                return i
        raise LakeError("3B001", f'savepoint "{name}" does not exist')

    def rollback_to(self, name: str) -> None:
        """Discard everything since the savepoint (which stays), and leave the failed state."""
        if self.state not in (State.ACTIVE, State.FAILED):
            raise no_active_transaction()
        i = self._find_savepoint(name)
        first = self._savepoints[i][1]
        # Only subtransactions that wrote have an xid, and only those are in the log.
        dead = tuple(self._sub_xids.pop(s) for s in range(first, self._next_subxid) if s in self._sub_xids)
        if self.xid is not None and dead:
            self._log(R.SubAbort(self.xid, dead, pg_now()), release=True)
        with self.lake.dml_lock:
            dropped = [p.rows for p in self._pending if p.subxid >= first]
            SpillDir.remove([f for f in dropped if isinstance(f, FileRows)])
            self._pending = [p for p in self._pending if p.subxid < first]
            self._pending_bytes = sum(p.nbytes for p in self._pending)
            self._ops = [(s, o) for s, o in self._ops if s < first]
            for relid, locks in list(self._rid_locks.items()):
                self._rid_locks[relid] = [(s, a) for s, a in locks if s < first]
            for relid, events in list(self._key_events.items()):
                self._key_events[relid] = [e for e in events if e[0] < first]
                self._own_keys[relid] = OwnKeys.build(self._key_events[relid])
            for relid, subs in list(self._key_inexact.items()):
                self._key_inexact[relid] = [s for s in subs if s < first]
            self.deferrals.undo_since(first)
        del self._savepoints[i + 1 :]
        sub = self._next_subxid
        self._next_subxid += 1
        self._savepoints[i] = (name, sub)
        self._subxid = sub
        self.state = State.ACTIVE

    def release(self, name: str) -> None:
        self._check_active()
        i = self._find_savepoint(name)
        del self._savepoints[i:]
        self._subxid = self._savepoints[-1][1] if self._savepoints else 0

    # -- ending --------------------------------------------------------------------------
    def commit(self) -> CommitInfo:
        """Commit; durable when this returns. In the failed state this rolls back and
        raises 25P02-free PostgreSQL behaviour: the caller sees ROLLBACK's result."""
        return self.start_commit().finish()

    def start_commit(self) -> PendingCommit:
        """Take a CSN now, write the commit record later (:meth:`PendingCommit.finish`):
        the way to make commits reach the log out of CSN order."""
        if self.state is State.FAILED:
            self.abort()
            raise transaction_aborted()
        self._check_active()
        self._fire_deferred()
        self.state = State.COMMITTING
        if self.xid is None:
            return PendingCommit(self, None)
        return PendingCommit(self, self.lake.clock.assign())

    def abort(self) -> None:
        if self.state in (State.COMMITTED, State.ABORTED):
            return
        if self.state is State.PREPARED:
            raise LakeError("25000", "cannot abort a prepared transaction; use rollback_prepared")
        if self.xid is not None:  # (no commit record: aborted; the record tells decoders)
            self.lake.log_abort(self.xid)
        self.end(State.ABORTED)

    rollback = abort

    def written_relids(self) -> set[int]:
        """The tables this transaction wrote rows of (PREPARE TRANSACTION refuses temporary
        ones, as PostgreSQL)."""
        return {p.relid for p in self._pending} | set(self._rid_locks)

    def prepare(self, gid: str) -> None:
        """PREPARE TRANSACTION: durable, survives restarts, ends with commit/rollback
        prepared (on the :class:`~walsender_proxy.lake.lake.Lake`)."""
        if self.state is State.FAILED:
            self.abort()
            raise transaction_aborted()
        self._check_active()
        self._fire_deferred()
        try:
            self.lake.prepare_transaction(self, gid)
        except PgError:
            if self.state is State.ACTIVE:  # (its record never reached the log: PREPARE
                self.abort()  # fails, and the transaction is rolled back as in PostgreSQL)
            raise

    def end(self, state: State) -> None:
        """The transaction is over (the lake's commit, its abort or rollback of a prepared
        one): its pending rows, locks and hold go, and the lake forgets it."""
        with self.lake.dml_lock:
            self.state = state
            files = [p.rows for p in self._pending if isinstance(p.rows, FileRows)]
            big = bool(files) or self._pending_bytes >= self.lake.settings.spill_bytes // 4
            if state is not State.COMMITTED:  # (committed: the memory tail has them now)
                SpillDir.remove(files)
            self._pending = []
            self._pending_bytes = 0
            self._ops = []
            self._rid_locks = {}
            self._key_events = {}
            self._key_inexact = {}
            self._own_keys = {}
        self.lake.forget_transaction(self)
        if self._hold is not None:
            self._hold.release()
            self._hold = None
        if big:
            release_memory()

    def restore_prepared(
        self,
        xid: int,
        first_lsn: int,
        gid: str,
        seq: int,
        pending: Sequence[tuple[int, pa.Table | FileRows]],
        ops: Sequence[CatalogOp],
    ) -> None:
        """Recovery: become the prepared transaction ``gid`` the log holds, with its delta
        rows (``pending``, per table, in memory or in files) locked again and its DDL."""
        self.xid = xid
        self.first_lsn = first_lsn
        self.gid = gid
        self.state = State.PREPARED
        self._seq = seq
        for relid, rows in pending:
            if isinstance(rows, FileRows):
                self._pending.append(_Pending(0, relid, rows, rows.op))
                self._rid_locks.setdefault(relid, []).append((0, pa.array(rows.rids())))
                continue
            op = rows.column(OP)[0].as_py() if rows.num_rows else OP_DELETE
            self._pending.append(_Pending(0, relid, rows, op, None, rows.get_total_buffer_size()))
            if rows.num_rows and RID in rows.column_names:
                self._rid_locks.setdefault(relid, []).append((0, rows.column(RID).combine_chunks()))
        self._ops = [(0, o) for o in ops]

    # -- what the lake needs at commit ---------------------------------------------------
    def committed_rows(self, csn: int) -> tuple[dict[int, pa.Table], dict[int, list[FileRows]]]:
        """The delta rows to commit at ``csn``, per table: those in memory with their
        ``_csn`` set, and the files (read with ``_csn`` replaced by the tail)."""
        per: dict[int, list[pa.Table]] = {}
        files: dict[int, list[FileRows]] = {}
        one = one_int64(csn)
        for p in self._pending:
            rows = p.rows
            if isinstance(rows, FileRows):
                files.setdefault(p.relid, []).append(rows)
                continue
            rows = rows.set_column(0, _CSN_FIELD, one) if rows.num_rows == 1 else with_csn(rows, csn)
            per.setdefault(p.relid, []).append(rows)
        mem = {
            k: concat_rows(v)
            for k, v in per.items()
        }
        return mem, files

    @property
    def is_small(self) -> bool:
        """Whether the commit has only a little to apply: rows in memory under
        :data:`SMALL_COMMIT_BYTES`, none in files, no catalog change."""
        return (
            not self._ops
            and self._pending_bytes <= SMALL_COMMIT_BYTES
            and not any(isinstance(p.rows, FileRows) for p in self._pending)
        )

    @property
    def catalog_ops(self) -> list[CatalogOp]:
        return [o for _, o in self._ops]

    @property
    def changes_catalog(self) -> bool:
        """Whether the transaction has made DDL (its writes are held to its own catalog)."""
        return bool(self._ops)

    def touches(self, relid: int) -> bool:
        return relid in self.pending_by_table()

    def has_truncated(self, relid: int) -> bool:
        rp = self.pending_by_table().get(relid)
        return rp is not None and rp.truncated

    @property
    def key_events(self) -> dict[int, list[tuple[int, int, Any, Any]]]:
        return self._key_events

    @property
    def key_inexact(self) -> set[int]:
        return {r for r, subs in self._key_inexact.items() if subs}

    @property
    def row_locks(self) -> dict[int, list[pa.Array]]:
        return {k: [a for _, a in v] for k, v in self._rid_locks.items() if v}

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        if self.state in (State.ACTIVE, State.FAILED):
            if exc_type is None and self.state is State.ACTIVE:
                self.commit()
            else:
                self.abort()


_NO_OWN_KEYS = OwnKeys({}, {})
_NO_LOCKS: tuple[set[int], list[pa.Array]] = (set(), [])


class PendingCommit:
    """A commit between CSN assignment and its record reaching the log."""

    def __init__(self, tx: Transaction, csn: int | None) -> None:
        self.tx = tx
        self.csn = csn

    def finish(self) -> CommitInfo:
        return self.tx.lake.commit_transaction(self.tx, self.csn)


# -- helpers ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Layout:
    """Arrow schemas of one catalog version of a table (cached: tables are immutable)."""

    plain: pa.Schema  # the columns in storage form, physical names, all nullable
    with_rid: pa.Schema  # _rid, then plain
    writes: pa.Schema  # delta rows of writes: _csn, _seq, _op, _rid, plain
    deletes: pa.Schema  # delta rows of deletes: _csn, _seq, _op, _rid
    names: list[str]  # SQL names, in column order
    not_null: tuple[tuple[str, str], ...]  # (physical, SQL name) of NOT NULL columns


def layout(t: Table) -> _Layout:
    hit = _LAYOUTS.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    plain = pa.schema([pa.field(c.physical, c.type.arrow) for c in t.columns])
    rid = pa.field(RID, pa.int64())
    meta = [_CSN_FIELD, _SEQ_FIELD, _OP_FIELD]
    out = _Layout(
        plain,
        pa.schema([rid, *plain]),
        pa.schema([*meta, rid, *plain]),
        pa.schema([*meta, rid]),
        [c.name for c in t.columns],
        tuple((c.physical, c.name) for c in t.columns if c.not_null),
    )
    if len(_LAYOUTS) > 4096:
        _LAYOUTS.clear()
    _LAYOUTS[id(t)] = (t, out)
    return out


_LAYOUTS: dict[int, tuple[Table, _Layout]] = {}
_CSN_FIELD = pa.field(CSN, pa.int64())
_SEQ_FIELD = pa.field(SEQ, pa.int64())
_OP_FIELD = pa.field(OP, pa.int8())
_RID_FIELD = pa.field(RID, pa.int64())
_PACK_INT64 = struct.Struct("<q").pack
_INT64 = pa.int64()


def one_int64(v: int) -> pa.Array:
    """``pa.array([v], pa.int64())`` from its bytes, cheaper than pa.array (which reads the
    environment on every call), three times per single-row INSERT."""
    return pa.Array.from_buffers(_INT64, 1, [None, pa.py_buffer(_PACK_INT64(v))])


_ONE_OWN_CSN = pa.array([OWN_CSN], pa.int64())
_ONE_OP = {OP_WRITE: pa.array([OP_WRITE], pa.int8()), OP_DELETE: pa.array([OP_DELETE], pa.int8())}


def _delta_rows(t: Table, code: int, src: pa.Table, seq: int) -> pa.Table:
    """:func:`delta_rows` for a statement's rows in ``t``'s storage layout (the common
    case, without casts); anything else goes the general way."""
    lay = layout(t)
    n = src.num_rows
    if n == 1:
        csn, op, seqs = _ONE_OWN_CSN, _ONE_OP[code], one_int64(seq)
    else:
        csn = pa.array(np.full(n, OWN_CSN, dtype=np.int64))
        op = pa.array(np.full(n, code, dtype=np.int8))
        seqs = pa.array(np.arange(seq, seq + n, dtype=np.int64))
    try:
        if code == OP_DELETE:
            return pa.Table.from_arrays([csn, seqs, op, src.column(RID)], schema=lay.deletes)
        if src.schema.equals(lay.with_rid):
            out = src.add_column(0, _OP_FIELD, op).add_column(0, _SEQ_FIELD, seqs)
            return out.add_column(0, _CSN_FIELD, csn)
        if src.num_columns == len(lay.writes) - 3:
            return pa.Table.from_arrays([csn, seqs, op, *src.columns], schema=lay.writes)
    except (pa.ArrowInvalid, pa.ArrowTypeError, KeyError):
        pass
    return delta_rows(code, src, seq)


def _to_arrow(t: Table, rows: Any) -> pa.Table:
    """Coerce input rows to the table's physical schema (without ``_rid``), times rounded
    to their columns' precision."""
    return _rounded(t, _to_arrow_schema(t, rows))


#: DuckDB hands an interval's time over in nanoseconds (Arrow's month_day_nano): more than
#: this many microseconds would wrap on the way out, so they are not stored.
_MAX_INTERVAL_US = (2**63 - 1) // 1000


def _rounded(t: Table, data: pa.Table) -> pa.Table:
    """``data`` with its time(p)/timestamp(p) columns rounded to p digits (a value computed
    by DuckDB, or bound in binary, carries all six)."""
    for c in t.columns:
        if c.type.base.name == "interval" and not c.type.is_array:
            i = data.schema.get_field_index(c.physical)
            if i >= 0 and pa.types.is_struct(data.schema.field(i).type) and data.num_rows:
                us = pc.abs(data.column(i).combine_chunks().field("microseconds"))
                if (pc.max(us).as_py() or 0) > _MAX_INTERVAL_US:
                    raise LakeError("0A000", "intervals with more than 2562047 hours are not supported by walsender-proxy")
        if c.type.base.name in SUBSECOND_TYPES and 0 <= c.type.typmod < 6 and not c.type.is_array:
            i = data.schema.get_field_index(c.physical)
            if i >= 0:
                data = data.set_column(i, data.schema.field(i), _round_times(data.column(i), c.type))
    return data


def _to_arrow_schema(t: Table, rows: Any) -> pa.Table:
    lay = layout(t)
    schema = lay.plain
    if isinstance(rows, pa.Table):
        if rows.schema.equals(schema):
            return rows  # already in storage form (the SQL layer builds it so)
        if rows.schema.names == lay.names and all(
            a == b for a, b in zip(rows.schema.types, schema.types, strict=True)
        ):
            return pa.Table.from_arrays(rows.columns, schema=schema)
    by_name = {c.name: c for c in t.columns}
    try:
        if isinstance(rows, pa.RecordBatch):
            rows = pa.Table.from_batches([rows])
        if isinstance(rows, pa.Table):
            for n in rows.column_names:
                if n not in by_name:
                    raise LakeError("42703", f'column "{n}" of relation "{t.name}" does not exist')
            arrays = []
            for c in t.columns:
                if c.name in rows.column_names:
                    arrays.append(conform(rows.column(c.name), c))
                else:
                    arrays.append(pa.nulls(rows.num_rows, c.type.arrow))
            return pa.Table.from_arrays(arrays, schema=schema) if t.columns else pa.table({})
        rows = list(rows)
        for r in rows:
            for n in r:
                if n not in by_name:
                    raise LakeError("42703", f'column "{n}" of relation "{t.name}" does not exist')
        phys = [{by_name[k].physical: v for k, v in r.items()} for r in rows]
        try:
            return pa.Table.from_pylist(phys, schema=schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            # Values of another Python type (a float for numeric, a str for a date…):
            # let Arrow infer each column, then cast as PostgreSQL's input functions would.
            cols = []
            for c in t.columns:
                vals = [r.get(c.physical) for r in phys]
                cols.append(pa.array(vals).cast(c.type.arrow))
            return pa.Table.from_arrays(cols, schema=schema)
    except LakeError:
        raise
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError) as e:
        raise LakeError("22P02", f"invalid input value: {e}") from None


def check_replica_identity(cat: Catalog, t: Table, op: str) -> None:
    """What PostgreSQL checks before an UPDATE/DELETE of a published table
    (``CheckCmdReplicaIdentity``): first, over every publication publishing the action,
    that row-filter columns are part of the replica identity (any under FULL) and a column
    list covers it; then that a replica identity exists."""
    verb = "update" if op == "update" else "delete from"
    ident = set(t.identity_columns())
    pubs = [p for p in cat.publications_for(t) if (p.update if op == "update" else p.delete)]
    entries = [e for e in (p.entry(t.oid) for p in pubs) if e is not None]
    for e in entries:
        if e.row_filter is not None and t.replica_identity != "f" and not e.row_filter.columns(t) <= ident:
            raise LakeError(
                "42P10",
                f'cannot {verb} table "{t.name}"',
                detail="Column used in the publication WHERE expression is not part of the replica identity.",
            )
    for e in entries:  # (under FULL no column list is allowed, even one naming every column)
        if e.columns is not None and (t.replica_identity == "f" or not ident <= set(e.columns)):
            raise LakeError(
                "42P10",
                f'cannot {verb} table "{t.name}"',
                detail="Column list used by the publication does not cover the replica identity.",
            )
    if pubs and not ident:
        raise LakeError(
            "55000",
            f'cannot {verb} table "{t.name}" because it does not have a replica identity and publishes {op}s',
            hint=f"To enable {'updating' if op == 'update' else 'deleting from'} the table, set REPLICA IDENTITY using ALTER TABLE.",
        )


def conform(arr: pa.Array | pa.ChunkedArray, c: Column) -> pa.Array | pa.ChunkedArray:
    """Cast a column to its storage type, including the SQL forms DuckDB computes in
    (INTERVAL as month-day-nano → the lake's interval struct; UUID text)."""
    target = c.type.arrow
    if _is_list(arr.type) and _is_list(arr.type.value_type):  # (a SQL value of nested lists)
        raise LakeError("0A000", "multidimensional arrays are not supported by the lake")
    if pa.types.is_interval(arr.type) and pa.types.is_struct(target):
        vals = [
            None
            if v is None
            else {"months": v.months, "days": v.days, "microseconds": v.nanoseconds // 1000}
            for v in arr.to_pylist()
        ]
        return pa.array(vals, target)
    if pa.types.is_decimal(target) and (pa.types.is_decimal(arr.type) or pa.types.is_integer(arr.type)):
        if pa.types.is_integer(arr.type):  # (Arrow wants room for any int: int32 → (12, 2))
            arr = arr.cast(pa.int64()).cast(pa.decimal128(38, 0))
        return _conform_decimal(arr, target)
    if pa.types.is_integer(target) and not c.type.is_array and (
        pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type) or pa.types.is_decimal(arr.type)
    ) and arr.type != target:
        return _conform_integer(arr, target, c.type.base.name)
    if pa.types.is_float32(target) and pa.types.is_float64(arr.type):
        return _conform_float4(arr)
    if c.type.base.name == "numeric" and not c.type.is_array and (
        pa.types.is_floating(arr.type) or (pa.types.is_decimal(arr.type) and pa.types.is_string(target))
    ):
        # a numeric DuckDB computed as DOUBLE (or DECIMAL) into a column that keeps its
        # text: numeric_out's text of the value ('NaN', not Arrow's 'nan'; no 1E-10
        # notation), through numeric's input with the column's typmod
        from decoding.pgvalues import decode_text_arrow, encode_text_arrow

        return decode_text_arrow(c.type, encode_text_arrow(ColumnType(c.type.base), arr))
    return _round_times(arr.cast(target), c.type)


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def _round_times(arr: pa.Array | pa.ChunkedArray, ctype: ColumnType) -> pa.Array | pa.ChunkedArray:
    """A time/timestamp column's precision typmod on the values stored into it."""
    if ctype.base.name not in SUBSECOND_TYPES or not 0 <= ctype.typmod < 6:
        return arr
    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array([round_times(ch, ctype) for ch in arr.chunks], type=arr.type)
    return round_times(arr, ctype)


_INT_OUT_OF_RANGE = {"int2": "smallint out of range", "int4": "integer out of range", "int8": "bigint out of range"}


def _conform_float4(arr: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A float8 into a real column as PostgreSQL's assignment cast (dtof) rounds it: a finite
    value that rounds to an infinity is 22003 "value out of range: overflow", a non-zero one
    that rounds to zero "underflow" (Arrow would store Infinity or 0)."""
    out = arr.cast(pa.float32(), safe=False)
    a = np.asarray(arr.fill_null(0.0).to_numpy(zero_copy_only=False), dtype=np.float64)
    r = np.asarray(out.fill_null(0.0).to_numpy(zero_copy_only=False), dtype=np.float32)
    if (np.isinf(r) & ~np.isinf(a)).any():
        raise LakeError("22003", "value out of range: overflow")
    if ((r == 0) & (a != 0)).any():
        raise LakeError("22003", "value out of range: underflow")
    return out


def _conform_integer(arr: pa.Array | pa.ChunkedArray, target: pa.DataType, base: str) -> pa.Array | pa.ChunkedArray:
    """A number into an integer column as PostgreSQL's assignment casts do: a numeric
    rounds half away from zero, a float to even (rint), and a value past the type is 22003
    "integer out of range" (Arrow would call it invalid input, or truncate a fraction)."""
    if pa.types.is_decimal(arr.type):
        arr = pc.round(arr, ndigits=0, round_mode="half_towards_infinity")
    elif pa.types.is_floating(arr.type):
        arr = pc.round(arr, ndigits=0, round_mode="half_to_even")
        if not pc.all(pc.is_finite(arr).fill_null(True)).as_py():
            raise LakeError("22003", _INT_OUT_OF_RANGE[base])
    bits = target.bit_width
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    mm = pc.min_max(arr)
    low, high = mm["min"].as_py(), mm["max"].as_py()
    if low is not None and (low < lo or high > hi):
        raise LakeError("22003", _INT_OUT_OF_RANGE[base])
    return arr.cast(target)


def _conform_decimal(arr: pa.Array | pa.ChunkedArray, target: pa.Decimal128Type) -> pa.Array | pa.ChunkedArray:
    """A numeric into ``numeric(p, s)`` as PostgreSQL stores it: rounded half away from
    zero to the scale (-2.345 is -2.35; Arrow's cast refuses to drop digits), and 22003
    when it then needs more than ``p - s`` integer digits."""
    if arr.type.scale > target.scale:
        if arr.type.precision < 38:  # room for the carry (9.95 rounds to 10.0)
            arr = arr.cast(pa.decimal128(arr.type.precision + 1, arr.type.scale))
        arr = pc.round(arr, ndigits=target.scale, round_mode="half_towards_infinity")
    try:
        return arr.cast(target)
    except pa.ArrowInvalid:
        raise LakeError(
            "22003",
            "numeric field overflow",
            detail=f"A field with precision {target.precision}, scale {target.scale} must round "
            f"to an absolute value less than 10^{target.precision - target.scale}.",
        ) from None


def _conform_table(t: Table, rows: pa.Table) -> pa.Table:
    """``_rid`` plus every column in its storage type (see :func:`conform`)."""
    lay = layout(t)
    if rows.schema.equals(lay.with_rid):
        return _rounded(t, rows)  # (the SQL layer's point statements build it that way)
    return pa.Table.from_arrays(
        [rows.column(RID).cast(pa.int64())] + [conform(rows.column(c.physical), c) for c in t.columns],
        schema=t.arrow_schema(with_rid=True),
    )


def null_column_error(t: Table, name: str) -> LakeError:
    """ADD COLUMN … NOT NULL (or SET NOT NULL) over rows that have no value for it."""
    return LakeError("23502", f'column "{name}" of relation "{t.name}" contains null values').about(
        schema=t.schema, table=t.name, column=name
    )


def _check_not_null(t: Table, data: pa.Table) -> None:
    nn = layout(t).not_null
    if not nn:
        return
    names = set(data.schema.names)
    for phys, name in nn:
        if phys in names and data.column(phys).null_count:
            i = data.column(phys).is_null().index(True).as_py()
            raise not_null_violation(name, t.name, t.schema, _row_texts(t, data.slice(i, 1)))


def _with_partitions(cat: Catalog, ts: list[Table]) -> list[Table]:
    """A TRUNCATE's tables with every partition of the partitioned ones, as
    ``find_all_inheritors`` adds them. The partitioned tables stay in the list, as in
    PostgreSQL's WAL record: a stream that publishes partitions as their root sends the
    root's truncate only when it was truncated."""
    out: dict[int, Table] = {}
    for t in ts:
        for x in (t, *cat.inheritors(t)):
            out.setdefault(x.oid, x)
    return list(out.values())


def _as_table(dst: Table, src: Table, rows: pa.Table, *, with_rid: bool = False) -> pa.Table:
    """Rows of ``src`` (its physical names) under ``dst``'s physical names, matched by
    column name (a partition and its parent have the same columns)."""
    names = {c.name: c.physical for c in src.columns}
    cols = [pa.field(c.physical, c.type.arrow) for c in dst.columns]
    arrays = [rows.column(names[c.name]) for c in dst.columns]
    if with_rid:
        cols.insert(0, pa.field(RID, pa.int64()))
        arrays.insert(0, rows.column(RID))
    return pa.Table.from_arrays(arrays, schema=pa.schema(cols))


def _row_texts(t: Table, row: pa.Table) -> list[str | None]:
    """One row's values as their output texts, in column order (None for NULL)."""

    out: list[str | None] = []
    names = set(row.schema.names)
    for c in t.columns:
        phys = c.physical or c.name
        raw = text_encoder(c.type)(row.column(phys))[0] if phys in names else None
        out.append(None if raw is None else raw.decode())
    return out


def _where(where: Any, args: list[Any], t: Table) -> tuple[str, list[Any]]:
    if where is None:
        return "true", args
    if isinstance(where, str):
        return f"({where})", args
    parts = []
    for k, v in where.items():
        if t.column(k) is None:
            raise LakeError("42703", f'column "{k}" does not exist')
        if v is None:
            parts.append(f'"{k}" IS NULL')
        else:
            args.append(v)
            parts.append(f'"{k}" = ${len(args)}')
    return " AND ".join(parts) or "true", args


_DUCK = {
    "bool": "BOOLEAN",
    "int2": "SMALLINT",
    "int4": "INTEGER",
    "int8": "BIGINT",
    "float4": "FLOAT",
    "float8": "DOUBLE",
    "bytea": "BLOB",
    "date": "DATE",
    "time": "TIME",
    "timestamp": "TIMESTAMP",
    "timestamptz": "TIMESTAMPTZ",
    "interval": "STRUCT(months INTEGER, days INTEGER, microseconds BIGINT)",
}


def _duck_type(col: Column) -> str:
    """The DuckDB type that holds ``col`` as the lake stores it."""
    ps = col.type.numeric_precision_scale
    if ps is not None and ps[0] <= 38:
        base = f"DECIMAL({ps[0]},{ps[1]})"
    else:
        base = _DUCK.get(col.type.base.name, "VARCHAR")
    return base + ("[]" if col.type.is_array else "")


def _duck_error(e: Exception) -> LakeError:
    import duckdb

    msg = str(e).split("\n")[0]
    if isinstance(e, duckdb.BinderException):
        return LakeError("42703", msg)
    if isinstance(e, duckdb.ParserException):
        return LakeError("42601", msg)
    if isinstance(e, duckdb.ConversionException):
        return LakeError("22P02", msg)
    if isinstance(e, (duckdb.OutOfRangeException,)):
        return LakeError("22003", msg)
    return LakeError("XX000", msg)
