"""The pgoutput output plugin: what PostgreSQL's ``pgoutput.c`` decides to send.

``proto`` knows how each message is laid out (and ``rows`` writes the row messages of a
whole slice at once); this module decides which messages a committed transaction becomes
for one replication connection, as PostgreSQL 15 does, and never writes a message's bytes
itself:

- **Lazy BEGIN.** Begin (and Origin) go out just before the first change that is actually
  sent; a transaction that touches nothing published produces nothing at all — no
  Begin/Commit pair (``pgoutput_send_begin``, ``pgoutput_commit_txn``).
- **Relation cache** (``RelationSyncEntry``). Per connection and relation: the publish
  actions, the column list, the row filters and whether the Relation message was sent.
  An entry is rebuilt, and its Relation sent again before the next change, whenever
  PostgreSQL would get an invalidation for it: any publication change (all entries), a
  change of the table's definition, a TRUNCATE of it (before the Truncate message, and
  again when the truncating transaction ends), and at the end of a transaction whose own
  DDL touched it.
- **Publication rules** of ``get_rel_sync_entry`` / ``pgoutput_row_filter_init`` /
  ``pgoutput_column_list_init``: a table is published if any subscribed publication
  includes it (FOR ALL TABLES, TABLES IN SCHEMA, FOR TABLE); actions are the union; a row
  filter per action is the OR of the filters of the publications publishing that action,
  and disappears if one of them has none (ALL TABLES and schema publications have none);
  column lists must agree across publications (PostgreSQL 15 raises 0A000 otherwise — it
  does not merge them), a list naming every column counts as none.
- **Rows.** Insert sends the new row; Update the new row, preceded by the old key ('K',
  other columns 'n') when a replica-identity column changed under DEFAULT/USING INDEX, or
  the whole old row ('O') under FULL; Delete the old key or old row, and nothing when the
  table has no replica identity (no old tuple is logged; PostgreSQL skips it). With a row
  filter an Update becomes Insert/Delete/nothing by the moves-in/moves-out rule of
  ``pgoutput_row_filter``, evaluated on the old tuple *as logged* (key columns only unless
  FULL). Column lists cut every tuple and the Relation message.
- **Values** in text, or binary when ``binary`` is set (every lake type has a send
  function). Type ('Y') messages are never needed: every lake type is built in (OID below
  FirstGenbkiObjectId), so PostgreSQL would not send one either.

The catalog of a transaction is the one at its commit CSN (``catalog_at(csn)``); when the
transaction runs DDL itself, decoding starts from the catalog just before it
(``catalog_at(csn - 1)``: the lake serialises DDL transactions, so that is exactly the
catalog the transaction started its DDL from) and applies its catalog ops where they stand
in the transaction, so a change is decoded with the definition valid at that point.

Rows are handled a slice of a statement at a time — at most ``chunk_rows`` rows and about
``chunk_bytes`` of input, read from a changeset's Parquet files a record batch at a time —
filtered with DuckDB and written by ``rows`` (values encoded by ``decoding.pgvalues``) into one binary
Arrow array of messages per slice (``iter_batches``; ``iter_transaction`` gives the same as
lists of bytes). With ``deferred`` the slices come as :class:`RowBatch`, their encoding left
to the caller (the walsender runs it on other threads, in parallel, framing included), so a
million-row statement neither builds a million Python objects nor holds the event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from decoding import records as R
from decoding.catalog import (
    FIRST_USER_OID,
    Catalog,
    CatalogOp,
    Column,
    Publication,
    RowFilterExpr,
    Table,
    is_temp_schema,
)
from decoding.change_rows import LATEST_CSN, catalog_csn, change_rows, key_changed
from decoding.errors import PgError
from decoding.pgoutput import rowfilter
from decoding.pgoutput.options import PgOutputOptions
from decoding.pgoutput.proto import (
    MESSAGE_TRANSACTIONAL,
    TRUNCATE_CASCADE,
    TRUNCATE_RESTART_IDENTITY,
    Begin,
    BeginPrepare,
    Commit,
    CommitPrepared,
    LogicalMessage,
    Origin,
    Prepare,
    Relation,
    RelationColumn,
    RollbackPrepared,
    StreamAbort,
    StreamCommit,
    StreamPrepare,
    StreamStart,
    StreamStop,
    Truncate,
    Type,
)
from decoding.pgoutput.rowfilter import RowFilter
from decoding.pgoutput.rows import DELETE, INSERT, UPDATE, ImageColumn, RelationRows, RowBatch
from decoding.pgtypes import ColumnType
from decoding.reorder import ChangeList, DecodedTxn, Ended, StreamAborted, StreamBlock, wire_xid

if TYPE_CHECKING:
    import duckdb

__all__ = ["CHUNK_BYTES", "CHUNK_ROWS", "Batch", "PgOutput", "PgOutputOptions", "RowBatch"]

#: Rows encoded per chunk of messages. With the stream's pipeline of chunks in flight, a
#: 10M-row transaction's walsender process peaked lower at 16,384 than at 32,768, with no
#: measurable change in decode + send rate (figures in docs/changelog/performance.md).
CHUNK_ROWS = 16384
#: Bytes of input rows (Arrow) per chunk, at most: wide rows make smaller chunks.
CHUNK_BYTES = 8 << 20


#: What :meth:`PgOutput.iter_batches` yields: a few messages, or row messages in bulk.
Batch = list[bytes] | pa.Array | RowBatch
#: Row action after the row filter: send nothing (the others are ``rows``' message kinds).
_SKIP = 0


def _xid32(xid: int) -> int:
    return xid & 0xFFFFFFFF


def _as_list(b: Batch) -> list[bytes]:
    if isinstance(b, list):
        return b
    return (b.encode() if isinstance(b, RowBatch) else b).to_pylist()


def _publishable(t: Table) -> bool:
    """is_publishable_relation: system catalogs are never published, not even by FOR ALL
    TABLES (the lake only makes user tables, but a catalog emulation might not)."""
    return t.oid >= FIRST_USER_OID and t.schema not in ("pg_catalog", "information_schema")


def type_named(cat: Catalog | None, ct: ColumnType) -> tuple[int, str, str] | None:
    """logicalrep_write_typ of a column's declared type when it is not built in (None for a
    built-in one): its OID, with the namespace ("" for pg_catalog) and name of its base
    type (a domain is named by the type it is over; an enum and its array type by their
    own)."""
    if not ct.domain and not ct.is_enum:
        return None
    en = cat.enum_of(ct) if cat is not None else None
    if en is not None:
        return ct.declared_oid, en.schema, ("_" if ct.is_array else "") + en.name
    return ct.declared_oid, "", ("_" if ct.is_array else "") + ct.base.name


@dataclass(slots=True, eq=False)
class _RelEntry:
    """PostgreSQL's RelationSyncEntry for one relation of this connection."""

    table: Table
    insert: bool
    update: bool
    delete: bool
    truncate: bool
    #: The columns sent (the column list applied), in attnum order.
    columns: tuple[Column, ...]
    #: Replica identity columns (all of them under FULL): the key flag, the 'K' tuple.
    key: frozenset[str]
    #: Row filter per action 'I', 'U', 'D'; absent means unfiltered.
    filters: dict[str, RowFilter]
    #: The writer of this relation's row messages, with the row images chosen here.
    rows: RelationRows
    #: The Type message of each sent column of a type that is not built in, in column
    #: order: (declared OID, namespace, name).
    types: tuple[tuple[int, str, str], ...] = ()
    schema_sent: bool = False
    #: Streamed transactions (top-level xids) whose blocks carried the schema
    #: (RelationSyncEntry.streamed_txns): those are applied later, in an order unknown here.
    streamed_txns: set[int] = field(default_factory=set)
    #: The relation the changes are sent as: the table, or the partitioned ancestor a
    #: publication with ``publish_via_partition_root`` publishes it through (None: the table).
    relation: Table | None = None

    def schema_messages(self, xid: int | None = None) -> list[bytes]:
        """maybe_send_schema: for a partition sent as its ancestor, the ancestor's
        messages and then the partition's own, as PostgreSQL 15 sends both; else the
        table's. ``xid``: the change's (sub)transaction, inside a stream block."""
        if self.relation is not None and self.relation.oid != self.table.oid:
            return self._relation_messages(self.relation, xid) + self._relation_messages(self.table, xid)
        return self._relation_messages(self.table, xid)

    def _relation_messages(self, t: Table, xid: int | None) -> list[bytes]:
        """send_relation_and_attrs: a Type message for each sent column of a type that is
        not built in, then the Relation (columns with their declared types)."""
        out = [Type(oid, namespace, name, xid).encode() for oid, namespace, name in self.types]
        cols = tuple(
            RelationColumn(c.name, c.type.declared_oid, c.type.typmod if not c.type.domain else -1, 1 if c.name in self.key else 0)
            for c in self.columns
        )
        namespace = "" if t.schema == "pg_catalog" else t.schema
        out.append(Relation(t.oid, namespace, t.name, t.replica_identity, cols, xid).encode())
        return out


@dataclass(slots=True)
class _TxnState:
    """PGOutputTxnData plus the invalidations the transaction causes when it ends."""

    begin: list[bytes]
    sent_begin: bool = False
    invalidated: set[int] = field(default_factory=set)
    invalidate_all: bool = False
    #: Inside a stream block: the transaction's top-level xid (None outside one) and the
    #: wire xid of the (sub)transaction of the change being decoded.
    stream_xid: int | None = None
    xid: int | None = None


class PgOutput:
    """The pgoutput plugin of one replication connection (state lives as long as it).

    ``catalog_at(csn)`` returns the catalog of snapshot ``csn`` (``Lake.catalog_at``);
    ``changesets_dir`` is where :class:`decoding.records.Changeset` files live.
    Not thread-safe: one connection, one caller at a time.
    """

    #: pgoutput's messages are binary (OUTPUT_PLUGIN_BINARY_OUTPUT).
    binary_output = True

    def __init__(
        self,
        options: PgOutputOptions,
        catalog_at: Callable[[int], Catalog],
        changesets_dir: str | Path,
        *,
        chunk_rows: int = CHUNK_ROWS,
        chunk_bytes: int = CHUNK_BYTES,
    ) -> None:
        self.options = options
        self._catalog_at = catalog_at
        self._changesets = Path(changesets_dir)
        self._chunk = max(1, chunk_rows)
        self._chunk_bytes = max(1, chunk_bytes)
        self._cat: Catalog | None = None
        self._pubs_cat: Catalog | None = None
        self._pubs: list[Publication] = []
        self._entries: dict[int, _RelEntry] = {}
        self._duck: duckdb.DuckDBPyConnection | None = None
        #: The largest commit CSN decoded: the catalog a prepared transaction is decoded
        #: with when the caller does not say (it has no CSN of its own yet).
        self._seen_csn = 0
        #: Streamed transactions in progress: the catalog changes of their blocks so far,
        #: by subtransaction (reapplied over the current catalog for the next block).
        self._stream_ddl: dict[int, list[tuple[int, tuple[CatalogOp, ...]]]] = {}

    def close(self) -> None:
        if self._duck is not None:
            self._duck.close()
            self._duck = None

    def __enter__(self) -> PgOutput:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public API ------------------------------------------------------------------
    def transaction(self, txn: DecodedTxn) -> list[bytes]:
        """All messages for one committed transaction; [] when nothing is published."""
        return [m for chunk in self.iter_transaction(txn) for m in chunk]

    def iter_transaction(self, txn: DecodedTxn) -> Iterator[list[bytes]]:
        """The messages of :meth:`transaction` in chunks (Begin with the first change,
        Commit last); yields nothing for a transaction that sends nothing."""
        for b in self.iter_batches(txn):
            yield _as_list(b)

    def iter_batches(self, txn: DecodedTxn, *, deferred: bool = False) -> Iterator[Batch]:
        """The messages of :meth:`transaction` as they are made, without a Python object
        per row: a ``list[bytes]`` of a few messages (Begin, Relation, Truncate, Commit,
        ...), or a binary Arrow array with one row message per element (Insert, Update,
        Delete of one relation; at most ``chunk_rows`` of them and about ``chunk_bytes``
        of input per array) whose offsets and data buffer are the messages back to back,
        ready to be framed in bulk. With ``deferred``, row messages come as
        :class:`RowBatch` instead, to be encoded by the caller (on other threads, in
        parallel, in order); everything else — which rows, the relation cache, row
        filters — is decided here, in order."""
        for b in self._iter_batches(txn):
            yield b.encode() if isinstance(b, RowBatch) and not deferred else b

    def _iter_batches(self, txn: DecodedTxn) -> Iterator[Batch]:
        st = _TxnState(self._begin_messages(txn))
        self._seen_csn = max(self._seen_csn, txn.csn)
        try:
            yield from self._decode(txn, st, self._start_catalog(txn, txn.csn))
            if st.sent_begin:
                yield [
                    Commit(txn.commit_lsn, txn.end_lsn, txn.commit_ts).encode()  # flags 0
                ]
        finally:
            self._end_invalidations(st)

    def message(self, message_lsn: int, rec: R.Message) -> list[bytes]:
        """A non-transactional ``pg_logical_emit_message``: one 'M' with flags 0, sent
        only with ``messages 'true'``. PostgreSQL puts the LSN just past the message's
        record in it (``buf->endptr``), so pass the log entry's ``end_lsn``."""
        if not self.options.messages:
            return []
        return [LogicalMessage(message_lsn, rec.prefix, rec.payload, 0).encode()]

    @property
    def two_phase_requested(self) -> bool:
        """START_REPLICATION's ``two_phase 'on'`` (protocol 3 or later): the slot is marked
        for two-phase decoding if it is not yet (PostgreSQL's twophase_opt_given)."""
        return self.options.two_phase

    @staticmethod
    def skip_prepare(gid: str) -> bool:
        """pgoutput has no filter_prepare: every prepared transaction is decoded at PREPARE."""
        return False

    def prepare(self, txn: DecodedTxn, catalog_csn: int | None = None) -> list[bytes]:
        """two_phase: BeginPrepare, the changes, Prepare — always sent, even when empty
        (PostgreSQL skips empty transactions only when not prepared).

        A prepared transaction has no CSN yet; its changes are decoded with the catalog
        of ``catalog_csn`` (default: the largest commit CSN this plugin has decoded, so a
        backlog is decoded with the catalog of its place in the log; the newest catalog
        before any commit) plus the transaction's own DDL."""
        return [m for chunk in self.iter_prepare(txn, catalog_csn) for m in chunk]

    def iter_prepare(
        self, txn: DecodedTxn, catalog_csn: int | None = None
    ) -> Iterator[list[bytes]]:
        gid = txn.gid or ""
        head = [
            BeginPrepare(txn.prepare_lsn, txn.end_lsn, txn.commit_ts, _xid32(txn.xid), gid).encode()
        ]
        if txn.origin:
            head.append(Origin(txn.origin_lsn, txn.origin).encode())
        st = _TxnState([], sent_begin=True)
        try:
            first = True
            csn = catalog_csn if catalog_csn is not None else self._seen_csn or LATEST_CSN
            for b in self._decode(txn, st, self._catalog_at(csn)):
                chunk = _as_list(b)
                yield head + chunk if first else chunk
                first = False
            tail = [
                Prepare(txn.prepare_lsn, txn.end_lsn, txn.commit_ts, _xid32(txn.xid), gid).encode()
            ]
            yield head + tail if first else tail
        finally:
            self._end_invalidations(st)

    def commit_prepared(self, txn: DecodedTxn, ended: Ended) -> list[bytes]:
        """two_phase: COMMIT PREPARED of a transaction sent by :meth:`prepare`."""
        self._seen_csn = max(self._seen_csn, ended.csn)
        return [
            CommitPrepared(
                ended.lsn, ended.end_lsn, ended.ts, _xid32(ended.xid), ended.gid
            ).encode()
        ]

    def rollback_prepared(self, txn: DecodedTxn, ended: Ended) -> list[bytes]:
        """two_phase: ROLLBACK PREPARED; carries the prepare's end LSN and time so the
        subscriber can tell whether it ever saw the prepare."""
        return [
            RollbackPrepared(
                txn.end_lsn, ended.end_lsn, txn.commit_ts, ended.ts, _xid32(ended.xid), ended.gid
            ).encode()
        ]

    def skips_origin(self, origin: str) -> bool:
        """pgoutput_origin_filter: with ``origin 'none'``, what came from any origin."""
        return self.options.origin == "none" and bool(origin)

    # -- streaming of in-progress transactions ---------------------------------------
    @property
    def streaming_requested(self) -> bool:
        """``streaming 'on'`` or ``'parallel'`` (protocol 2 or later): in-progress
        transactions are streamed once they outgrow logical_decoding_work_mem."""
        return self.options.streaming != "off"

    def iter_stream_block(self, block: StreamBlock) -> Iterator[Batch]:
        """pgoutput_stream_start … stop: Stream Start (with the Origin of a transaction
        that has one, in its first block), the block's changes, each carrying its
        (sub)transaction's xid, Stream Stop — sent even when nothing in the block is
        published, as PostgreSQL 15 does. Row messages come as :class:`RowBatch`."""
        yield from self._stream(block.txn, block.changes, block.first_segment)

    def iter_stream_commit(self, txn: DecodedTxn) -> Iterator[Batch]:
        """ReorderBufferStreamCommit: what is left of the transaction in a last block (if
        anything), then Stream Commit; or, for ``origin 'none'`` and a transaction that
        came from another origin, Stream Abort (DecodeTXNNeedSkip forgets it)."""
        top = _xid32(txn.xid)
        if self.options.origin == "none" and txn.origin:
            txn.changes.close()
            yield self.stream_abort(StreamAborted(txn, 0, txn.commit_lsn, txn.end_lsn, txn.commit_ts))
            return
        self._seen_csn = max(self._seen_csn, txn.csn)
        yield from self._stream(txn, txn.changes, False)
        self._stream_ddl.pop(txn.xid, None)
        yield [StreamCommit(top, txn.commit_lsn, txn.end_lsn, txn.commit_ts).encode()]
        self._cleanup_streamed(top, True)

    def iter_stream_prepare(self, txn: DecodedTxn) -> Iterator[Batch]:
        """Two-phase decoding of a streamed transaction at its PREPARE: a last block,
        then Stream Prepare (the relation cache keeps the xid, as pgoutput does)."""
        yield from self._stream(txn, txn.changes, False)
        self._stream_ddl.pop(txn.xid, None)
        yield [
            StreamPrepare(txn.prepare_lsn, txn.end_lsn, txn.commit_ts, _xid32(txn.xid), txn.gid or "").encode()
        ]

    def stream_abort(self, ab: StreamAborted) -> list[bytes]:
        """pgoutput_stream_abort: the transaction (``subxid`` 0) or a subtransaction is
        void; protocol 4 with ``streaming 'parallel'`` adds the abort's LSN and time."""
        top = _xid32(ab.txn.xid)
        info = (ab.end_lsn, ab.ts) if self.options.streaming == "parallel" else (None, None)
        msg = StreamAbort(top, wire_xid(ab.txn.xid, ab.subxid), *info).encode()
        ddl = self._stream_ddl.get(ab.txn.xid)
        if ab.subxid == 0:
            ddl = self._stream_ddl.pop(ab.txn.xid, None)
            if ddl:
                self._entries.clear()  # its catalog changes no longer hold
        elif ddl:
            kept = [(sub, ops) for sub, ops in ddl if sub != ab.subxid]
            if len(kept) != len(ddl):
                self._entries.clear()
            self._stream_ddl[ab.txn.xid] = kept
        self._cleanup_streamed(top, False)
        return [msg]

    @staticmethod
    def stream_place(message: bytes) -> str:
        """Which LSN a streamed message goes out at (the callback wrapper that wrote it):
        "end" (Stream Commit, Prepare, Abort: the end of their record), "last" (Stream
        Stop: the block's last record), "zero" (a Relation, as in any transaction), else
        "first" (Stream Start and the changes: the block's first record)."""
        kind = message[:1]
        return "end" if kind in (b"c", b"p", b"A") else "last" if kind == b"E" else "zero" if kind == b"R" else "first"

    def _stream(self, txn: DecodedTxn, changes: ChangeList, first_segment: bool) -> Iterator[Batch]:
        top = _xid32(txn.xid)
        try:
            if not any(True for _ in changes):
                return  # (stream_start is called with the first change only)
            head = [StreamStart(top, first_segment).encode()]
            if first_segment and txn.origin:
                head.append(Origin(0, txn.origin).encode())
            yield head
            st = _TxnState([], sent_begin=True, stream_xid=top)
            try:
                cat = self._catalog_at(self._seen_csn or LATEST_CSN)
                for _, ops in self._stream_ddl.get(txn.xid, ()):
                    for op in ops:
                        cat = cat.apply(op)
                ddl = self._stream_ddl.setdefault(txn.xid, [])
                yield from self._decode(txn, st, cat, changes, ddl)
            finally:
                self._end_invalidations(st)
            yield [StreamStop().encode()]
        finally:
            changes.close()

    def _cleanup_streamed(self, top: int, committed: bool) -> None:
        """cleanup_rel_sync_cache: a committed streamed transaction's schema counts as
        sent; either way the xid is forgotten."""
        for e in self._entries.values():
            if top in e.streamed_txns:
                e.streamed_txns.discard(top)
                if committed:
                    e.schema_sent = True

    # -- transactions ----------------------------------------------------------------
    def _begin_messages(self, txn: DecodedTxn) -> list[bytes]:
        out = [Begin(txn.commit_lsn, txn.commit_ts, _xid32(txn.xid)).encode()]
        if txn.origin:
            out.append(Origin(txn.origin_lsn, txn.origin).encode())
        return out

    def _start_catalog(self, txn: DecodedTxn, csn: int) -> Catalog:
        if csn <= 0:  # not committed (should not happen here): where the log is
            return self._catalog_at(self._seen_csn or LATEST_CSN)
        return self._catalog_at(catalog_csn(txn, csn))

    def _decode(
        self, txn: DecodedTxn, st: _TxnState, catalog: Catalog, changes: Iterable[R.Record] | None = None,
        ddl: list[tuple[int, tuple[CatalogOp, ...]]] | None = None,
    ) -> Iterator[Batch]:
        """The messages of ``changes`` (default: the transaction's) decoded from
        ``catalog``; inside a stream block (``st.stream_xid``) each carries its
        (sub)transaction's xid, and catalog changes are noted in ``ddl``."""
        self._set_catalog(catalog)
        # origin 'none' (PostgreSQL 16): changes that came from another origin are
        # filtered before the plugin sees them; DDL is still absorbed.
        foreign = self.options.origin == "none" and bool(txn.origin)
        streaming = st.stream_xid is not None
        for rec in txn.changes if changes is None else changes:
            if streaming:
                st.xid = wire_xid(txn.xid, getattr(rec, "subxid", 0))
            if isinstance(rec, R.CatalogChange):
                self._apply_ddl(rec.ops, st)
                if ddl is not None:
                    ddl.append((rec.subxid, tuple(rec.ops)))
            elif foreign:
                continue
            elif isinstance(rec, R.Change | R.Changeset):
                yield from self._change(st, rec)
            elif isinstance(rec, R.Truncate):
                out = self._truncate(st, rec)
                if out:
                    yield out
            elif isinstance(rec, R.Message) and rec.transactional and self.options.messages:
                out = self._begin(st)
                # DecodedTxn keeps no per-record LSN; PostgreSQL sends the end of the
                # message record, which is the commit LSN when the message is last.
                lsn = getattr(rec, "end_lsn", txn.commit_lsn or txn.prepare_lsn)
                out.append(
                    LogicalMessage(lsn, rec.prefix, rec.payload, MESSAGE_TRANSACTIONAL, st.stream_xid).encode()
                )
                yield out

    def _begin(self, st: _TxnState) -> list[bytes]:
        if st.sent_begin:
            return []
        st.sent_begin = True
        return list(st.begin)

    def _prologue(self, st: _TxnState, e: _RelEntry) -> list[bytes]:
        """Begin if not yet sent, then the Relation if not yet sent (maybe_send_schema;
        inside a stream block, once per streamed transaction)."""
        out = self._begin(st)
        if st.stream_xid is not None:
            if st.stream_xid not in e.streamed_txns:
                out += e.schema_messages(st.xid)
                e.streamed_txns.add(st.stream_xid)
        elif not e.schema_sent:
            out += e.schema_messages()
            e.schema_sent = True
        return out

    # -- catalog and invalidation ----------------------------------------------------
    def _set_catalog(self, cat: Catalog) -> None:
        old = self._cat
        if old is cat:
            return
        self._cat = cat
        if old is None:
            return
        if old.publications is not cat.publications and old.publications != cat.publications:
            self._entries.clear()  # publication_invalidation_cb: everything
            return
        for relid, e in list(self._entries.items()):
            t = cat.tables.get(relid)
            if t is not e.table and t != e.table:
                del self._entries[relid]  # rel_sync_cache_relation_cb

    def _apply_ddl(self, ops: Iterable[CatalogOp], st: _TxnState) -> None:
        assert self._cat is not None
        cat = self._cat
        relids: set[int] = set()
        every = False
        for op in ops:
            cat = cat.apply(op)
            kind = op.get("op")
            if kind in ("put_publication", "drop_publication"):
                every = True
            elif kind == "put_table":
                relids.add(int(op["table"]["oid"]))
            elif kind == "drop_table":
                relids.add(int(op["oid"]))
            # put_schema / drop_schema: no relcache invalidation of their own (tables
            # that go with a schema come as drop_table ops)
        self._invalidate(relids, every)
        st.invalidated |= relids
        st.invalidate_all |= every
        self._set_catalog(cat)

    def _invalidate(self, relids: Iterable[int], every: bool = False) -> None:
        if every:
            self._entries.clear()
            return
        for relid in relids:
            self._entries.pop(relid, None)

    def _end_invalidations(self, st: _TxnState) -> None:
        # The decoded transaction's invalidations run again when it ends.
        self._invalidate(st.invalidated, st.invalidate_all)

    def _publications(self) -> list[Publication]:
        """The subscribed publications in the current catalog (LoadPublications)."""
        cat = self._cat
        assert cat is not None
        if self._pubs_cat is not cat:
            pubs = []
            for name in self.options.publication_names:
                p = cat.publications.get(name)
                if p is None:
                    raise PgError("42704", f'publication "{name}" does not exist')
                pubs.append(p)
            self._pubs, self._pubs_cat = pubs, cat
        return self._pubs

    def _entry(self, t: Table) -> _RelEntry:
        e = self._entries.get(t.oid)
        if e is not None and (e.table is t or e.table == t):
            return e
        e = self._build_entry(t)
        self._entries[t.oid] = e
        return e

    def _build_entry(self, t: Table) -> _RelEntry:
        """get_rel_sync_entry: the actions published for ``t``, and, for a partition whose
        ancestor a publication with ``publish_via_partition_root`` publishes, the topmost
        such ancestor as the relation its changes are sent as (its row filters and column
        lists then apply)."""
        assert self._cat is not None
        up = self._cat.ancestors(t)  # (parent first)
        ins = upd = dele = trunc = False
        level, target = 0, t
        rel_pubs: list[Publication] = []
        for p in self._publications():
            if is_temp_schema(t.schema):
                continue
            pub_rel, at = t, 0
            if p.all_tables:
                publish = True
                if p.via_root and up:
                    pub_rel, at = up[-1], len(up)
            else:
                top = None
                for i, a in enumerate(up, start=1):
                    if a.schema in p.schemas or p.entry(a.oid) is not None:
                        top = (a, i)
                if top is not None and p.via_root:
                    pub_rel, at = top
                publish = top is not None or t.schema in p.schemas or p.entry(t.oid) is not None
            if not publish or (t.partition_key is not None and not p.via_root):
                continue
            ins, upd, dele, trunc = ins or p.insert, upd or p.update, dele or p.delete, trunc or p.truncate
            if level > at:
                continue
            if level < at:
                level, target, rel_pubs = at, pub_rel, []
            rel_pubs.append(p)
        if target is not t and (target.replica_identity != t.replica_identity or target.identity_columns() != t.identity_columns()):
            raise PgError(
                "0A000",
                f'publish_via_partition_root of partition "{t.name}" whose replica identity differs from "{target.name}"\'s '
                "is not supported by walsender-proxy",
            )
        filters: dict[str, RowFilter] = {}
        names: frozenset[str] | None = None
        if ins or upd or dele:
            filters = self._row_filters(t, rel_pubs, target)
            names = self._column_list(target, rel_pubs)
        # (PostgreSQL 15 publishes no generated column: the subscriber computes its own)
        cols = tuple(c for c in t.columns if (names is None or c.name in names) and c.generation is None)
        key = frozenset(t.identity_columns())
        image: list[ImageColumn] = [(c.physical, c.type) for c in cols]
        # The old row: whole under FULL ('O'), else its key with every other column NULL
        # ('K'), as PostgreSQL logs it; the column list cuts both.
        key_image = (
            None
            if t.replica_identity == "f"
            else [(c.physical, c.type) if c.name in key else None for c in cols]
        )
        rows = RelationRows(target.oid, image, key_image, binary=self.options.binary)
        types = tuple(named for c in cols if (named := type_named(self._cat, c.type)) is not None)
        return _RelEntry(t, ins, upd, dele, trunc, cols, key, filters, rows, types, relation=target)

    @staticmethod
    def _row_filters(t: Table, pubs: list[Publication], target: Table) -> dict[str, RowFilter]:
        no_filter = {"I": False, "U": False, "D": False}
        found: dict[str, list[RowFilterExpr]] = {"I": [], "U": [], "D": []}
        for p in pubs:
            flt = None
            if not p.all_tables and target.schema not in p.schemas:
                pt = p.entry(target.oid)
                flt = pt.row_filter if pt is not None else None
            acts = {"I": p.insert, "U": p.update, "D": p.delete}
            if flt is None:
                for a, on in acts.items():
                    no_filter[a] |= on
                if all(no_filter.values()):
                    return {}
                continue
            for a, on in acts.items():
                if on and not no_filter[a]:
                    found[a].append(flt)
        return {a: RowFilter(t, f) for a, f in found.items() if f and not no_filter[a]}

    @staticmethod
    def _column_list(t: Table, pubs: list[Publication]) -> frozenset[str] | None:
        live = {c.name for c in t.columns}
        first = True
        chosen: frozenset[str] | None = None
        for p in pubs:
            cols: frozenset[str] | None = None
            if not p.all_tables:
                pt = p.entry(t.oid)
                if pt is not None and pt.columns is not None:
                    cols = frozenset(pt.columns) & live
                    if len(cols) == len(live):
                        cols = None
            if first:
                chosen, first = cols, False
            elif cols != chosen:
                raise PgError(
                    "0A000",
                    f'cannot use different column lists for table "{t.schema}.{t.name}" '
                    "in different publications",
                )
        return chosen

    # -- changes ---------------------------------------------------------------------
    def _con(self) -> duckdb.DuckDBPyConnection:
        if self._duck is None:
            self._duck = rowfilter.connect()
        return self._duck

    def _batches(
        self, rec: R.Change | R.Changeset, columns: Iterable[str]
    ) -> Iterator[tuple[pa.Table | None, pa.Table | None]]:
        return change_rows(rec, columns, self._changesets, self._chunk, self._chunk_bytes)

    def _change(self, st: _TxnState, rec: R.Change | R.Changeset) -> Iterator[Batch]:
        assert self._cat is not None
        t = self._cat.tables.get(rec.relid)
        if t is None or not _publishable(t):
            return
        e = self._entry(t)
        op = rec.op
        if not {"I": e.insert, "U": e.update, "D": e.delete}.get(op, False):
            return
        for new, old in self._batches(rec, (c.physical for c in t.columns)):
            if op == "I" and new is not None:
                yield from self._inserts(st, e, new)
            elif op == "U" and new is not None and old is not None:
                yield from self._updates(st, e, old, new)
            elif op == "D" and old is not None:
                yield from self._deletes(st, e, old)

    @staticmethod
    def _select(data: pa.Table, mask: np.ndarray) -> pa.Table:
        return data if mask.all() else data.filter(pa.array(mask))

    def _key_only(self, e: _RelEntry, old: pa.Table) -> pa.Table:
        """The old tuple as PostgreSQL logs it under DEFAULT/USING INDEX: key columns,
        every other column NULL (what a row filter sees for it)."""
        n = old.num_rows
        cols = {}
        for c in e.table.columns:
            if c.name in e.key and c.physical in old.column_names:
                cols[c.physical] = old.column(c.physical)
            else:
                cols[c.physical] = pa.nulls(n, c.type.arrow)
        return pa.table(cols)

    def _inserts(self, st: _TxnState, e: _RelEntry, new: pa.Table) -> Iterator[Batch]:
        f = e.filters.get("I")
        if f is not None:
            mask = f.matches(self._con(), new)
            if not mask.any():
                return
            new = self._select(new, mask)
        if new.num_rows == 0:
            return
        out = self._prologue(st, e)
        if out:
            yield out
        yield e.rows.inserts(new, st.xid)

    def _identity_changed(self, e: _RelEntry, old: pa.Table, new: pa.Table) -> np.ndarray:
        """Rows whose replica identity changed: PostgreSQL logs the old key for those."""
        return key_changed([c.physical for c in e.table.columns if c.name in e.key], old, new)

    def _updates(
        self, st: _TxnState, e: _RelEntry, old: pa.Table, new: pa.Table
    ) -> Iterator[Batch]:
        n = new.num_rows
        if n == 0:
            return
        full = e.table.replica_identity == "f"
        if full:
            has_old = np.ones(n, dtype=bool)
        elif e.key and e.table.replica_identity in ("d", "i"):
            has_old = self._identity_changed(e, old, new)
        else:
            has_old = np.zeros(n, dtype=bool)
        action = np.full(n, UPDATE, dtype=np.int8)
        f = e.filters.get("U")
        if f is not None:
            con = self._con()
            new_ok = f.matches(con, new)
            old_ok = np.zeros(n, dtype=bool)
            if has_old.any():
                logged = old if full else self._key_only(e, old)
                old_ok = f.matches(con, logged) & has_old
            action[:] = _SKIP
            action[new_ok & (old_ok | ~has_old)] = UPDATE
            action[has_old & ~old_ok & new_ok] = INSERT
            action[has_old & old_ok & ~new_ok] = DELETE
            keep = action != _SKIP
            if not keep.any():
                return
            if not keep.all():
                old, new = self._select(old, keep), self._select(new, keep)
                action, has_old = action[keep], has_old[keep]
        out = self._prologue(st, e)
        if out:
            yield out
        # An Update carries its old image where it was logged (has_old); the filter's
        # Deletes carry it too, its Inserts only the new row.
        yield e.rows.changes(action, has_old, old, new, st.xid)

    def _deletes(self, st: _TxnState, e: _RelEntry, old: pa.Table) -> Iterator[Batch]:
        full = e.table.replica_identity == "f"
        if not full and not (e.key and e.table.replica_identity in ("d", "i")):
            return  # no old tuple logged: "didn't send DELETE change because of missing oldtuple"
        f = e.filters.get("D")
        if f is not None:
            mask = f.matches(self._con(), old if full else self._key_only(e, old))
            if not mask.any():
                return
            old = self._select(old, mask)
        if old.num_rows == 0:
            return
        out = self._prologue(st, e)
        if out:
            yield out
        yield e.rows.deletes(old, st.xid)

    def _truncate(self, st: _TxnState, rec: R.Truncate) -> list[bytes]:
        assert self._cat is not None
        # A truncated relation gets a new relfilenode, and that invalidation is decoded
        # before the truncate itself: PostgreSQL resends its Relation.
        self._invalidate(rec.relids)
        st.invalidated |= set(rec.relids)
        out: list[bytes] = []
        relids: list[int] = []
        for relid in rec.relids:
            t = self._cat.tables.get(relid)
            if t is None or not _publishable(t):
                continue
            e = self._entry(t)
            if not e.truncate or (e.relation is not None and e.relation.oid != relid):
                continue  # (a partition published as its ancestor: the ancestor's truncate, if any)
            relids.append(relid)
            out += self._prologue(st, e)
        if not relids:
            return []
        options = (TRUNCATE_CASCADE if rec.cascade else 0) | (
            TRUNCATE_RESTART_IDENTITY if rec.restart_identity else 0
        )
        out.append(Truncate(tuple(relids), options, st.xid).encode())
        return out
