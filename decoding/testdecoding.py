"""The test_decoding output plugin: PostgreSQL's contrib/test_decoding as its text lines.

The plugin most tools and tutorials use with ``pg_recvlogical`` and the SQL slot
functions: one line per event, ``BEGIN 735``, ``table public.t: INSERT: id[integer]:1
name[text]:'x'``, ``COMMIT 735``. The lines follow ``test_decoding.c`` of PostgreSQL 15:

- every user table's changes (no publication), columns in attnum order as
  ``name[format_type_be]:value``, the value by its type's output function, unquoted for
  the integer, float, oid and numeric types, ``true``/``false`` for boolean, quoted (a
  quote doubled) for every other type — a domain's included — and ``null``;
- an UPDATE carries ``old-key:`` and ``new-tuple:`` where PostgreSQL logs the old row (its
  key changed, or REPLICA IDENTITY FULL), a DELETE the old key or row (NULLs left out), or
  ``(no-tuple-data)`` without one;
- TRUNCATE lists its tables (partitioned ones have no storage, and are not listed) and
  ``restart_seqs``/``cascade`` or ``(no-flags)``;
- ``pg_logical_emit_message`` as ``message: transactional: 1 prefix: p, sz: 5 content:…``.

On a slot with two_phase, a prepared transaction is written at its PREPARE (``BEGIN``, the
changes, ``PREPARE TRANSACTION 'gid'``) and finished by ``COMMIT PREPARED 'gid'`` or
``ROLLBACK PREPARED 'gid'``; a gid holding ``_nodecode`` is left to its COMMIT PREPARED.

With ``stream-changes`` a transaction past logical_decoding_work_mem is streamed in
progress, in test_decoding's streaming lines: ``opening a streamed block for transaction
TXN 735``, a ``streaming change for TXN 735`` per row changed (no contents: the transaction
may still abort), ``closing a streamed block …``, then ``committing streamed transaction``,
``aborting streamed (sub)transaction`` or ``preparing streamed transaction 'gid'``.

Options as ``pg_decode_startup`` reads them (PostgreSQL's ``parse_bool``): include-xids
(default on), include-timestamp, skip-empty-xacts, only-local, include-rewrites,
force-binary and stream-changes.

It offers what :class:`~walsender_proxy.replication.stream.LogicalStream` asks of an
output plugin: ``iter_batches`` (each item a list of lines, one XLogData message each),
``message`` and ``close``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from decoding import records as R
from decoding.booleans import parse_bool
from decoding.catalog import Catalog, Column, Table
from decoding.change_rows import LATEST_CSN, catalog_csn, change_rows, key_changed
from decoding.errors import PgError
from decoding.identifiers import quote_identifier, quote_qualified_identifier
from decoding.pgtime import PG_EPOCH_UNIX_US
from decoding.pgtypes import ColumnType
from decoding.pgvalues import text_encoder
from decoding.pgvalues._types import column_type
from decoding.reorder import ChangeList, DecodedTxn, Ended, StreamAborted, StreamBlock, wire_xid

__all__ = ["TestDecoding", "TestDecodingOptions"]

#: Types print_literal writes bare: int2, int4, int8, oid, float4, float8, numeric.
_BARE = frozenset({21, 23, 20, 26, 700, 701, 1700})
_BOOL = 16
_CHUNK_ROWS = 8192
_CHUNK_BYTES = 16 << 20
_TIMESTAMPTZ = text_encoder(column_type("timestamptz"))


@dataclass(frozen=True, slots=True)
class TestDecodingOptions:
    include_xids: bool = True
    include_timestamp: bool = False
    skip_empty_xacts: bool = False
    only_local: bool = False
    #: Output declared binary: the SQL functions that read text refuse the slot.
    force_binary: bool = False
    stream_changes: bool = False

    __test__ = False  # (not a pytest test class)

    @classmethod
    def parse(cls, options: Sequence[tuple[str, str | None]]) -> TestDecodingOptions:
        """``pg_decode_startup``'s reading of the raw ``(name, value)`` pairs (value None:
        given without one, which means on), with its 22023 errors."""
        flags = {
            "include-xids": True, "include-timestamp": False, "skip-empty-xacts": False, "only-local": False,
            "include-rewrites": False, "force-binary": False, "stream-changes": False,
        }  # fmt: skip
        for name, value in options:
            if name not in flags:
                raise PgError("22023", f'option "{name}" = "{"(null)" if value is None else value}" is unknown')
            b = True if value is None else parse_bool(value)
            if b is None:
                raise PgError("22023", f'could not parse value "{value}" for parameter "{name}"')
            flags[name] = b
        return cls(
            flags["include-xids"], flags["include-timestamp"], flags["skip-empty-xacts"], flags["only-local"],
            flags["force-binary"], flags["stream-changes"],
        )  # fmt: skip


def _type_name(cat: Catalog, ct: ColumnType, search_path: Sequence[str]) -> str:
    """format_type_be of a column's declared type (no typmod): a domain or an enum by its
    name, schema-qualified when the session's search path does not hold its schema
    (pg_recvlogical empties it, so it sees every user type qualified)."""
    user = None
    if ct.domain:
        user = cat.domains.get(ct.domain)
    elif ct.is_enum:
        user = cat.enums.get(ct.base.oid)
    if user is not None:
        name = quote_identifier(user.name) if user.schema in search_path else quote_qualified_identifier(user.schema, user.name)
        return name + ("[]" if ct.is_array and not ct.domain else "")
    return ColumnType(ct.base, -1, ct.is_array).sql_name()


def _quote_literal(text: str) -> bytes:
    """quote_literal_cstr: quotes doubled; a backslash doubled too, with an ``E`` before
    the literal."""
    body = text.replace("'", "''")
    if "\\" in text:
        return ("E'" + body.replace("\\", "\\\\") + "'").encode()
    return ("'" + body + "'").encode()


def _literal(oid: int, text: bytes) -> bytes:
    """print_literal: how a value's output text is written."""
    if oid in _BARE:
        return text
    if oid == _BOOL:
        return b"true" if text == b"t" else b"false"
    return b"'" + text.replace(b"'", b"''") + b"'"


class TestDecoding:
    """The test_decoding plugin of one replication connection.

    ``catalog_at(csn)`` returns the catalog of snapshot ``csn``; ``changesets_dir`` is
    where :class:`decoding.records.Changeset` files live."""

    __test__ = False  # (not a pytest test class)

    def __init__(
        self, options: TestDecodingOptions, catalog_at: Callable[[int], Catalog], changesets_dir: str | Path, *,
        search_path: Sequence[str] = (),
    ) -> None:
        self.options = options
        self.search_path = tuple(search_path)
        self._catalog_at = catalog_at
        self._changesets = Path(changesets_dir)
        #: Streamed transactions in progress: whether a change of theirs was written
        #: (TestDecodingTxnData.xact_wrote_changes).
        self._streamed: dict[int, bool] = {}

    @property
    def binary_output(self) -> bool:
        """force-binary declares the (text) lines binary, as pg_decode_startup does."""
        return self.options.force_binary

    def close(self) -> None:
        pass

    def message(self, message_lsn: int, rec: R.Message) -> list[bytes]:
        """A non-transactional ``pg_logical_emit_message`` (always written)."""
        return [self._message_line(rec)]

    def transaction(self, txn: DecodedTxn) -> list[bytes]:
        return [line for b in self.iter_batches(txn) for line in b]

    def iter_batches(self, txn: DecodedTxn, *, deferred: bool = False) -> Iterator[list[bytes]]:
        """The lines of one committed transaction, a few at a time: BEGIN, its changes,
        COMMIT (none for a transaction of another origin under only-local, or an empty
        one under skip-empty-xacts)."""
        if self.options.only_local and txn.origin:
            return
        end = b"COMMIT" + self._xid(txn)
        if self.options.include_timestamp:
            end += self._at(txn.commit_ts)
        yield from self._lines(txn, self._catalog_at(catalog_csn(txn, txn.csn)), end)

    # -- two-phase decoding (a slot made with two_phase) -----------------------------------
    two_phase_requested = False  # (no option asks for it: the slot's two_phase does)

    @staticmethod
    def skip_prepare(gid: str) -> bool:
        """pg_decode_filter_prepare: a gid holding ``_nodecode`` is decoded at its
        COMMIT PREPARED, as a plain transaction."""
        return "_nodecode" in gid

    def iter_prepare(self, txn: DecodedTxn, catalog_csn: int | None = None) -> Iterator[list[bytes]]:
        """BEGIN, the changes and ``PREPARE TRANSACTION 'gid'`` (under skip-empty-xacts,
        nothing for a transaction that wrote no change)."""
        end = b"PREPARE TRANSACTION " + _quote_literal(txn.gid or "")
        if self.options.include_xids:
            end += f", txid {txn.xid & 0xFFFFFFFF}".encode()
        if self.options.include_timestamp:
            end += self._at(txn.commit_ts)
        yield from self._lines(txn, self._catalog_at(catalog_csn or LATEST_CSN), end)

    def commit_prepared(self, txn: DecodedTxn, ended: Ended) -> list[bytes]:
        return [self._finish_line(b"COMMIT PREPARED ", ended)]

    def rollback_prepared(self, txn: DecodedTxn, ended: Ended) -> list[bytes]:
        return [self._finish_line(b"ROLLBACK PREPARED ", ended)]

    def _finish_line(self, head: bytes, ended: Ended) -> bytes:
        line = head + _quote_literal(ended.gid)
        if self.options.include_xids:
            line += f", txid {ended.xid & 0xFFFFFFFF}".encode()
        if self.options.include_timestamp:
            line += self._at(ended.ts)
        return line

    def skips_origin(self, origin: str) -> bool:
        """pg_decode_filter: with ``only-local``, what came from any origin."""
        return self.options.only_local and bool(origin)

    # -- streaming (stream-changes) ----------------------------------------------------------
    @property
    def streaming_requested(self) -> bool:
        return self.options.stream_changes

    def iter_stream_block(self, block: StreamBlock) -> Iterator[list[bytes]]:
        yield from self._stream_lines(block.txn, block.changes)

    def iter_stream_commit(self, txn: DecodedTxn) -> Iterator[list[bytes]]:
        """A last block, then ``committing streamed transaction`` (under skip-empty-xacts,
        only if a change of it was written)."""
        yield from self._stream_lines(txn, txn.changes)
        if self._streamed.pop(txn.xid, False) or not self.options.skip_empty_xacts:
            line = b"committing streamed transaction" + self._txn(txn.xid)
            yield [line + (self._at(txn.commit_ts) if self.options.include_timestamp else b"")]

    def iter_stream_prepare(self, txn: DecodedTxn) -> Iterator[list[bytes]]:
        yield from self._stream_lines(txn, txn.changes)
        if self._streamed.get(txn.xid, False) or not self.options.skip_empty_xacts:
            gid = _quote_literal(txn.gid or "")
            if self.options.include_xids:
                line = b"preparing streamed transaction TXN " + gid + f", txid {txn.xid & 0xFFFFFFFF}".encode()
            else:
                line = b"preparing streamed transaction " + gid
            yield [line + (self._at(txn.commit_ts) if self.options.include_timestamp else b"")]

    def stream_abort(self, ab: StreamAborted) -> list[bytes]:
        wrote = self._streamed.pop(ab.txn.xid, False) if ab.subxid == 0 else self._streamed.get(ab.txn.xid, False)
        if self.options.skip_empty_xacts and not wrote:
            return []
        return [b"aborting streamed (sub)transaction" + self._txn(wire_xid(ab.txn.xid, ab.subxid))]

    @staticmethod
    def stream_place(line: bytes) -> str:
        """Which LSN a streamed line goes out at (see ``PgOutput.stream_place``)."""
        if line.startswith((b"committing", b"preparing", b"aborting")):
            return "end"
        return "last" if line.startswith(b"closing") else "first"

    def _txn(self, xid: int) -> bytes:
        return f" TXN {xid & 0xFFFFFFFF}".encode() if self.options.include_xids else b""

    def _stream_lines(self, txn: DecodedTxn, changes: ChangeList) -> Iterator[list[bytes]]:
        """pg_decode_stream_start … stop over one block: a line per row changed and per
        TRUNCATE, a transactional message's head; under skip-empty-xacts the opening line
        waits for the first change, and a block without one has no closing line."""
        opts = self.options
        try:
            if not any(True for _ in changes):
                return  # (stream_start is called with the first change only)
            xid = self._txn(txn.xid)
            of = xid.replace(b" TXN", b" for TXN") if opts.include_xids else b" for transaction"
            opening = b"opening a streamed block for transaction" + xid
            wrote = self._streamed.setdefault(txn.xid, False)
            block_wrote = False
            if not opts.skip_empty_xacts:
                yield [opening]
            cat = self._catalog_at(LATEST_CSN)
            for rec in changes:
                if isinstance(rec, R.Change | R.Changeset):
                    n = rec.nrows if isinstance(rec, R.Change) else rec.rows
                    lines = [b"streaming change" + of] * n
                elif isinstance(rec, R.Truncate):
                    parents = [oid for oid in rec.relids if (t := cat.tables.get(oid)) is not None and t.partition_key is not None]
                    lines = [b"streaming truncate" + of] if len(parents) < len(rec.relids) else []
                elif isinstance(rec, R.Message) and rec.transactional:
                    yield [f"streaming message: transactional: 1 prefix: {rec.prefix}, sz: {len(rec.payload)}".encode()]
                    continue
                else:
                    continue
                if not lines:
                    continue
                if opts.skip_empty_xacts and not block_wrote:
                    lines = [opening, *lines]
                block_wrote = wrote = True
                yield lines
            self._streamed[txn.xid] = wrote
            if block_wrote or not opts.skip_empty_xacts:
                yield [b"closing a streamed block for transaction" + xid]
        finally:
            changes.close()

    def _xid(self, txn: DecodedTxn) -> bytes:
        return f" {txn.xid & 0xFFFFFFFF}".encode() if self.options.include_xids else b""

    @staticmethod
    def _at(ts: int) -> bytes:
        at = _TIMESTAMPTZ(pa.array([ts + PG_EPOCH_UNIX_US], pa.timestamp("us", tz="UTC")))[0]
        return b" (at " + (at or b"") + b")"

    def _lines(self, txn: DecodedTxn, cat: Catalog, end: bytes) -> Iterator[list[bytes]]:
        """BEGIN, the changes' lines, then ``end`` (the COMMIT or PREPARE line)."""
        opts = self.options
        begin = [b"BEGIN" + self._xid(txn)]
        wrote = False
        if not opts.skip_empty_xacts:
            yield begin
        for rec in txn.changes:
            if isinstance(rec, R.CatalogChange):
                for op in rec.ops:
                    cat = cat.apply(op)
                continue
            if isinstance(rec, R.Change | R.Changeset):
                lines = self._change_lines(cat, rec)
            elif isinstance(rec, R.Truncate):
                lines = self._truncate_lines(cat, rec)
            elif isinstance(rec, R.Message) and rec.transactional:
                # (pg_decode_message writes no BEGIN and counts for no change)
                yield [self._message_line(rec)]
                continue
            else:
                continue
            for chunk in lines:
                if not chunk:
                    continue
                if opts.skip_empty_xacts and not wrote:
                    chunk = begin + chunk
                wrote = True
                yield chunk
        if opts.skip_empty_xacts and not wrote:
            return
        yield [end]

    # -- lines ---------------------------------------------------------------------------
    @staticmethod
    def _message_line(rec: R.Message) -> bytes:
        head = f"message: transactional: {int(rec.transactional)} prefix: {rec.prefix}, sz: {len(rec.payload)} content:"
        return head.encode() + rec.payload

    def _truncate_lines(self, cat: Catalog, rec: R.Truncate) -> Iterator[list[bytes]]:
        tables = [t for oid in rec.relids if (t := cat.tables.get(oid)) is not None and t.partition_key is None]
        if not tables:
            return
        names = ", ".join(quote_qualified_identifier(t.schema, t.name) for t in tables)
        flags = (" restart_seqs" if rec.restart_identity else "") + (" cascade" if rec.cascade else "")
        yield [f"table {names}: TRUNCATE:{flags or ' (no-flags)'}".encode()]

    def _change_lines(self, cat: Catalog, rec: R.Change | R.Changeset) -> Iterator[list[bytes]]:
        t = cat.tables.get(rec.relid)
        if t is None:
            return
        head = f"table {quote_qualified_identifier(t.schema, t.name)}: ".encode()
        cols = list(t.columns)
        key = set(t.identity_columns())
        for new, old in change_rows(rec, [c.physical for c in cols], self._changesets, _CHUNK_ROWS, _CHUNK_BYTES):
            if rec.op == "I" and new is not None:
                yield [head + b"INSERT:" + row for row in self._tuples(cat, cols, new, skip_nulls=False)]
            elif rec.op == "U" and new is not None:
                yield list(self._updates(cat, t, cols, key, head, old, new))
            elif rec.op == "D" and old is not None:
                yield list(self._deletes(cat, t, cols, key, head, old))

    def _updates(
        self, cat: Catalog, t: Table, cols: list[Column], key: set[str], head: bytes, old: pa.Table | None, new: pa.Table
    ) -> Iterator[bytes]:
        n = new.num_rows
        if t.replica_identity == "f" and old is not None:
            logged, has_old = cols, np.ones(n, dtype=bool)
        elif key and old is not None and t.replica_identity in ("d", "i"):
            logged = [c for c in cols if c.name in key]
            has_old = key_changed([c.physical for c in logged], old, new)
        else:
            logged, has_old = [], np.zeros(n, dtype=bool)
        news = self._tuples(cat, cols, new, skip_nulls=False)
        olds = self._tuples(cat, logged, old, skip_nulls=True) if has_old.any() and old is not None else [b""] * n
        for i in range(n):
            if has_old[i]:
                yield head + b"UPDATE: old-key:" + olds[i] + b" new-tuple:" + news[i]
            else:
                yield head + b"UPDATE:" + news[i]

    def _deletes(self, cat: Catalog, t: Table, cols: list[Column], key: set[str], head: bytes, old: pa.Table) -> Iterator[bytes]:
        if t.replica_identity == "f":
            logged = cols
        elif key and t.replica_identity in ("d", "i"):
            logged = [c for c in cols if c.name in key]
        else:
            yield from [head + b"DELETE: (no-tuple-data)"] * old.num_rows
            return
        for row in self._tuples(cat, logged, old, skip_nulls=True):
            yield head + b"DELETE:" + row

    def _tuples(self, cat: Catalog, cols: list[Column], data: pa.Table, *, skip_nulls: bool) -> list[bytes]:
        """tuple_to_stringinfo of every row: `` name[type]:value`` per column."""
        n = data.num_rows
        parts: list[list[bytes]] = [[] for _ in range(n)]
        for c in cols:
            label = f" {quote_identifier(c.name)}[{_type_name(cat, c.type, self.search_path)}]:".encode()
            arr = data.column(c.physical) if c.physical in data.column_names else pa.nulls(n)
            texts = text_encoder(c.type.bare)(arr) if arr.null_count < n else [None] * n
            oid = c.type.declared_oid
            for i, v in enumerate(texts):
                if v is None:
                    if not skip_nulls:
                        parts[i].append(label + b"null")
                else:
                    parts[i].append(label + _literal(oid, v))
        return [b"".join(p) for p in parts]
