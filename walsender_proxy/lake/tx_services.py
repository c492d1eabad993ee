"""Where the lake and its transactions meet: what a transaction asks of the lake that runs
it, and what the lake's checks (its own, the CHECK constraints', the foreign keys') read
of a transaction.

A transaction is the lake's in all but its file: it takes row ids, xids and OIDs from the
lake, locks rows and tables among the other open transactions, has its keys checked
against everyone's, logs its statements and is committed, prepared and forgotten by the
lake. :class:`TransactionServices` is that surface, by public names; the :class:`Lake`
provides it and hands itself to each transaction it begins. The other way,
:class:`OpenTransaction` is what the services, ``checks.py`` and ``foreign_keys.py`` use
of a transaction (a cascading foreign key writes through it). With both here, below the
lake and the transaction, neither module imports the other's: the lake imports the
transaction, and nothing under it imports the lake.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa

from decoding import records as R
from decoding.catalog import Catalog, Index, Table
from decoding.changelog import ChangeLog
from walsender_proxy.lake.csn import CsnClock
from walsender_proxy.lake.deferred_keys import Deferrals
from walsender_proxy.lake.keyindex import SMALL, KeyIndex, OwnKeys, PendingWrites, keys_of
from walsender_proxy.lake.retention import HoldRegistry
from walsender_proxy.lake.sequences import SequenceStore
from walsender_proxy.lake.settings import LakeSettings
from walsender_proxy.lake.spill import FileRows, SpillDir
from walsender_proxy.lake.store import OwnRows, TableStore

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True, slots=True)
class CommitInfo:
    """What a commit produced; ``csn``/``lsn`` are None when there was nothing to write."""

    xid: int | None
    csn: int | None
    lsn: int | None
    end_lsn: int | None


@dataclass(slots=True)
class PendingTable:
    """What a transaction has pending for one table, for other transactions' checks."""

    truncated: bool = False
    chunks: list[pa.Table | FileRows] = field(default_factory=list)
    #: Some write chunks are in files: checks that want keys in memory take DuckDB's path.
    files: bool = False
    cols: tuple[str, ...] | None = None
    writes: PendingWrites | None = None
    done: int = 0  # chunks already in ``writes``

    def pending_writes(self, cols: tuple[str, ...]) -> PendingWrites:
        if self.writes is None or self.cols != cols:
            self.writes, self.cols, self.done = PendingWrites(set(), []), cols, 0
        for rows in self.chunks[self.done :]:  # write chunks (inserts, updates)
            if isinstance(rows, FileRows):
                continue  # (``files`` is set: the caller does not ask for these)
            if rows.num_rows <= SMALL:
                self.writes.keys.update(keys_of(rows, cols))
            else:
                self.writes.big.append(rows.select(list(cols)))
        self.done = len(self.chunks)
        return self.writes


class ChangesetRecord(Protocol):
    """A big statement's Changeset record, made when the log gives it its LSN; then
    ``written`` names the file holding the statement's delta rows (path, rows, columns),
    which the transaction reads instead of keeping the rows in memory."""

    written: tuple[Path, int, list[str]] | None

    def __call__(self, lsn: int) -> R.Record: ...


class OpenTransaction(Protocol):
    """What the lake's services and the write checks use of a transaction: its catalogs,
    its own pending rows, keys and row locks as other transactions' checks see them, and
    the writes a cascading foreign key makes inside the running statement."""

    @property
    def lake(self) -> TransactionServices: ...

    @property
    def snapshot_csn(self) -> int | None: ...

    @property
    def subxid(self) -> int: ...

    @property
    def deferrals(self) -> Deferrals: ...

    @property
    def changes_catalog(self) -> bool: ...

    @property
    def added_enum_labels(self) -> set[tuple[int, str]]: ...

    def catalog(self) -> Catalog: ...

    def ddl_catalog(self) -> Catalog: ...

    def own_parts(self, relid: int) -> list[pa.Table | FileRows] | None: ...

    def own_keys(self, relid: int) -> OwnKeys | None: ...

    def pending_by_table(self) -> dict[int, PendingTable]: ...

    def has_truncated(self, relid: int) -> bool: ...

    def locked_rids(self, relid: int) -> tuple[set[int], list[pa.Array]]: ...

    def delete_rows(self, t: Table, old: pa.Table) -> int: ...

    def update_rows(self, t: Table, old: pa.Table, new: pa.Table, changed: frozenset[str] | None) -> int: ...


class TransactionServices(Protocol):
    """What a transaction asks of the lake: its parts (settings, table store, log, spill
    files, holds, CSN clock, sequences), the statement lock, and the services that span
    transactions — ids, row and table locks, key checks over everyone's rows, the records
    of its statements, and its commit, prepare and end."""

    settings: LakeSettings
    store: TableStore
    log: ChangeLog
    spill: SpillDir
    holds: HoldRegistry
    clock: CsnClock
    sequences: SequenceStore
    search_path: tuple[str, ...]

    @property
    def frontier(self) -> int: ...

    @property
    def dml_lock(self) -> threading.RLock: ...

    @property
    def catalog_owner(self) -> OpenTransaction | None: ...

    def catalog_at(self, csn: int) -> Catalog: ...

    def read_at(
        self,
        t: Table,
        csn: int,
        *,
        own: OwnRows | None = None,
        with_rid: bool = False,
        where: str | None = None,
        params: list[Any] | None = None,
        physical: bool = False,
    ) -> pa.Table: ...

    def register_xid(self, tx: OpenTransaction) -> int: ...

    def allocate_xid(self) -> int: ...

    def forget_transaction(self, tx: OpenTransaction) -> None: ...

    def other_transactions(self, tx: OpenTransaction) -> list[OpenTransaction]: ...

    def allocate_rids(self, n: int) -> np.ndarray: ...

    def allocate_oid(self) -> int: ...

    def take_catalog_lock(self, tx: OpenTransaction) -> None: ...

    def change_record(
        self, xid: int, subxid: int, relid: int, op: str, new: pa.Table | None, old: pa.Table | None
    ) -> R.Record | Callable[[int], R.Record]: ...

    def changeset_file_record(
        self, xid: int, subxid: int, relid: int, tmp: Path, num_rows: int, columns: list[str]
    ) -> ChangesetRecord: ...

    def changeset_tmp(self, xid: int, kind: str = "new") -> Path: ...

    def lock_rows(self, tx: OpenTransaction, t: Table, rids: pa.Array, snapshot_csn: int) -> None: ...

    def lock_table(self, tx: OpenTransaction, t: Table) -> None: ...

    def check_not_truncated(self, tx: OpenTransaction, t: Table) -> None: ...

    def key_index(self, t: Table) -> KeyIndex | None: ...

    def unique_key_columns(self, tx: OpenTransaction, t: Table) -> list[str]: ...

    def check_unique(
        self,
        tx: OpenTransaction,
        t: Table,
        new: pa.Table,
        exclude: pa.Array | pa.ChunkedArray | None,
        changed: frozenset[str] | None = None,
    ) -> None: ...

    def check_unique_build(self, tx: OpenTransaction, t: Table, ix: Index) -> None: ...

    def check_no_nulls(self, tx: OpenTransaction, t: Table, column: str) -> None: ...

    def others_pending(
        self, tx: OpenTransaction, t: Table, cols: Sequence[str], *, with_rid: bool = False, where: str = ""
    ) -> tuple[list[pa.Table], list[str]]: ...

    def commit_transaction(self, tx: OpenTransaction, csn: int | None) -> CommitInfo: ...

    def prepare_transaction(self, tx: OpenTransaction, gid: str) -> None: ...

    def log_abort(self, xid: int) -> None: ...
