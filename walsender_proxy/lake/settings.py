"""The lake's settings, in a module of their own: what runs under the lake (a transaction,
through the services the lake gives it) reads them without importing the lake."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LakeSettings:
    fsync: bool = True
    segment_size: int = 64 << 20
    #: A statement whose rows exceed this many bytes goes to a Parquet changeset file (and
    #: the transaction then reads its rows there instead of keeping them in memory).
    changeset_bytes: int = 64 << 20
    #: A transaction's pending rows held in memory beyond this many bytes are written to
    #: spill files (DATA/lake-spill), so a huge transaction of smaller statements stays bounded.
    spill_bytes: int = 64 << 20
    #: Memory DuckDB may use for background work (a checkpoint's merge and sort), beyond
    #: which it spills to DATA/lake-spill; it runs on one thread beside the serving.
    #: PostgreSQL's default; at least store.MIN_MAINTENANCE_MB.
    maintenance_work_mem: int = 64 << 20
    #: Fold the memory tail when it holds this many rows or commits (or every interval).
    fold_rows: int = 1_000_000
    fold_commits: int = 20_000
    fold_interval: float = 5.0
    #: Checkpoint a table when this many delta rows lie past its newest checkpoint.
    checkpoint_rows: int = 2_000_000
    checkpoint_files: int = 32
    lock_timeout: float = 10.0
    background: bool = True
    #: Tables with a primary key of up to this many rows get an in-memory key index
    #: (about 100 bytes a row), so point writes check keys without DuckDB.
    key_index_rows: int = 1_000_000
    #: ... and up to this many rows also a cache of their newest row values (about
    #: 100 bytes plus the values a row), for UPDATE/DELETE/SELECT by key without DuckDB.
    row_cache_rows: int = 200_000
