"""One replication slot's durable state, as a value: what a slot file holds, and what a
walsender process is handed with its stream — without the slot store, which needs the
lake (``slots.py``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from decoding import records as R
from decoding.catalog import Catalog
from decoding.errors import PgError
from decoding.reorder import DecodedTxn, Ended, Prepared, StreamAborted, StreamBlock

_NAME = re.compile(r"^[a-z0-9_]{1,63}$")
#: Output plugins a logical slot can name.
PLUGINS = ("pgoutput", "test_decoding")


class OutputPlugin(Protocol):
    """What a stream asks of an output plugin (pgoutput, test_decoding): a committed
    transaction's messages in batches (a list of messages, or pgoutput's row batches), a
    message outside a transaction, and an end."""

    #: Whether its output is declared binary (the SQL functions reading text refuse it).
    binary_output: bool

    def iter_batches(self, txn: DecodedTxn, *, deferred: bool = False) -> Iterator[Any]: ...

    def message(self, message_lsn: int, rec: R.Message) -> list[bytes]: ...

    def close(self) -> None: ...

    def skips_origin(self, origin: str) -> bool: ...

    # Two-phase decoding: what a prepared transaction sends at PREPARE (chunks of
    # messages, the PREPARE message last), at COMMIT PREPARED and at ROLLBACK PREPARED.
    @property
    def two_phase_requested(self) -> bool: ...

    def skip_prepare(self, gid: str) -> bool: ...

    def iter_prepare(self, txn: DecodedTxn, catalog_csn: int | None = None) -> Iterator[list[bytes]]: ...

    def commit_prepared(self, txn: DecodedTxn, ended: Ended) -> list[bytes]: ...

    def rollback_prepared(self, txn: DecodedTxn, ended: Ended) -> list[bytes]: ...

    # Streaming of in-progress transactions: a block of one (Stream Start, changes,
    # Stream Stop), its end (a last block and Stream Commit or Stream Prepare), an abort.
    @property
    def streaming_requested(self) -> bool: ...

    def iter_stream_block(self, block: StreamBlock) -> Iterator[Any]: ...

    def iter_stream_commit(self, txn: DecodedTxn) -> Iterator[Any]: ...

    def iter_stream_prepare(self, txn: DecodedTxn) -> Iterator[Any]: ...

    def stream_abort(self, ab: StreamAborted) -> list[bytes]: ...

    def stream_place(self, message: bytes) -> str: ...


@dataclass(frozen=True, slots=True)
class Streamed:
    """What a stream block or a streamed transaction's end sends (the plugin's batches)
    and the LSNs its messages go out at, by the plugin's ``stream_place``: the block's
    first record (Stream Start, the changes), its last (Stream Stop), the end of the
    ending record (Stream Commit, Prepare) — PostgreSQL's callback wrappers' positions."""

    txn: DecodedTxn
    batches: Iterator[Any]
    first: int
    last: int
    end: int

    def lsn(self, place: str, zero: int = 0) -> int:
        """The LSN of a message at ``place``; a Relation ("zero") at ``zero``."""
        return {"zero": zero, "first": self.first, "last": self.last, "end": self.end}[place]


def streamed(plugin: OutputPlugin, ev: StreamBlock | DecodedTxn | Prepared) -> Streamed:
    """A stream block, or the end of a streamed transaction (a last block and Stream
    Commit, or Stream Prepare), as :class:`Streamed`."""
    if isinstance(ev, StreamBlock):
        return Streamed(ev.txn, plugin.iter_stream_block(ev), ev.first_lsn, ev.last_lsn, ev.last_lsn)
    txn = ev.txn if isinstance(ev, Prepared) else ev
    batches = plugin.iter_stream_prepare(txn) if isinstance(ev, Prepared) else plugin.iter_stream_commit(txn)
    last = txn.last_lsn or txn.first_lsn
    return Streamed(txn, batches, txn.changes_lsn or last, last, txn.end_lsn)


def output_plugin(
    name: str, options: Sequence[tuple[str, str | None]], version_num: int,
    catalog_at: Callable[[int], Catalog], changesets: str | Path, *, search_path: Sequence[str] = (),
    slot_name: str | None = None,
) -> OutputPlugin:
    """The slot's output plugin with START_REPLICATION's options, checked as its startup
    callback checks them (PgError with PostgreSQL's SQLSTATE, and its CONTEXT naming the
    slot when ``slot_name`` is given). ``search_path``: the session's schemas
    (test_decoding names a type off it schema-qualified)."""
    try:
        if name == "test_decoding":
            from decoding.testdecoding import TestDecoding, TestDecodingOptions

            return TestDecoding(TestDecodingOptions.parse(options), catalog_at, changesets, search_path=search_path)
        from decoding.pgoutput.plugin import PgOutput, PgOutputOptions

        return PgOutput(PgOutputOptions.parse(list(options), version_num), catalog_at, changesets)
    except PgError as e:
        if slot_name is not None:
            e.where = f'slot "{slot_name}", output plugin "{name}", in the startup callback'  # type: ignore[attr-defined]
        raise


@dataclass(frozen=True, slots=True)
class Slot:
    name: str
    plugin: str
    database: str
    #: Where decoding starts to see every transaction committing at or after
    #: ``consistent_point`` whole; moves forward with the client's flush position.
    restart_lsn: int
    #: The consistent point: the LSN at which the slot was created.
    consistent_point: int
    #: The CSN the slot's snapshot shows (copy side of the CSN rule).
    snapshot_csn: int
    #: What the client confirmed as flushed; streaming resumes from here.
    confirmed_flush: int
    temporary: bool = False
    #: Prepared transactions are decoded at PREPARE (two-phase decoding), from
    #: ``two_phase_at`` on: one prepared before it is sent whole at its COMMIT PREPARED
    #: (BEGIN PREPARE … PREPARE, then COMMIT PREPARED), as ReorderBufferFinishPrepared
    #: replays it. Set at creation (the consistent point) or by the first START_REPLICATION
    #: asking for ``two_phase`` (its start), as PostgreSQL's CreateDecodingContext does.
    two_phase: bool = False
    failover: bool = False
    kind: str = "logical"
    #: The oldest catalog the slot may still decode with (a CSN: the lake keeps every
    #: catalog version from the one of this CSN on) — PostgreSQL's ``catalog_xmin``. It
    #: moves with ``confirmed_flush`` (``Lake.catalog_hold_at``); 0 in slots saved before it
    #: existed (everything kept until the slot moves).
    catalog_csn: int = 0
    two_phase_at: int = 0


def check_slot_name(name: str) -> None:
    if len(name) > 63:
        raise PgError("42622", f'replication slot name "{name}" is too long')
    if not _NAME.match(name):
        raise PgError(
            "42602",
            f'replication slot name "{name}" contains invalid character',
            hint="Replication slot names may only contain lower case letters, numbers, and the underscore character.",
        )
