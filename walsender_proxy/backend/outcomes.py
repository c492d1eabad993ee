"""What executing a statement produces, for the session to put on the wire."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pyarrow as pa

from decoding.pgtypes import ColumnType

#: Catalog types whose binary form the proxy sends as PostgreSQL does (the oid family as
#: 4-byte unsigned integers, name and "char" as their bytes, their arrays, int2vector and
#: oidvector): drivers that describe a statement and then ask for binary results (asyncpg)
#: decode them by the type RowDescription names.
OID_LIKE = frozenset({26, 28, 29})
BINARY_AS_PG = frozenset({*OID_LIKE, 18, 19, 22, 30, 1028, 1003, 1002, 1011, 1012})


@dataclass(frozen=True, slots=True)
class Column:
    """A result column as RowDescription describes it. ``type`` is what the values are
    encoded as; ``pg_oid`` (with its typlen/typmod) is the type clients are told when it is
    one the lake does not store (name, oid, regclass, "char" … from the catalog)."""

    name: str
    type: ColumnType
    table_oid: int = 0
    attnum: int = 0
    pg_oid: int | None = None
    pg_typlen: int | None = None
    pg_typmod: int | None = None
    #: A composite type's attributes (the OID each is declared with, its type): its
    #: values are STRUCTs, sent in binary by record_send.
    fields: tuple[tuple[int, ColumnType], ...] | None = None

    @property
    def type_oid(self) -> int:
        return self.pg_oid if self.pg_oid is not None else self.type.oid

    @property
    def typlen(self) -> int:
        return self.pg_typlen if self.pg_typlen is not None else self.type.typlen

    @property
    def typmod(self) -> int:
        return self.pg_typmod if self.pg_typmod is not None else self.type.typmod

    def for_binary(self) -> Column:
        """In binary format a foreign type (say regclass) is sent as what it is encoded as,
        unless the proxy sends PostgreSQL's own binary form of it (``BINARY_AS_PG``)."""
        if self.pg_oid is None or self.pg_oid == self.type.oid or self.pg_oid in BINARY_AS_PG or self.fields is not None:
            return self
        return Column(self.name, self.type, self.table_oid, self.attnum)


@dataclass(slots=True)
class Rows:
    """A row-returning statement: columns, then Arrow batches; ``tag`` is built from the
    row count (``SELECT n``) unless ``fixed_tag`` (e.g. ``INSERT 0 n`` for RETURNING)."""

    columns: list[Column]
    batches: Iterator[pa.RecordBatch]
    verb: str = "SELECT"
    fixed_tag: str | None = None


@dataclass(frozen=True, slots=True)
class Done:
    tag: str


@dataclass(frozen=True, slots=True)
class Empty:
    pass


@dataclass(frozen=True, slots=True)
class Notice:
    severity: str  # WARNING, NOTICE, INFO
    sqlstate: str
    message: str
    detail: str | None = None
    hint: str | None = None


@dataclass(frozen=True, slots=True)
class ParameterChanged:
    name: str
    value: str


@dataclass(slots=True)
class CopyOut:
    """COPY … TO STDOUT: CopyOutResponse, the chunks as CopyData, CopyDone, then ``tag``
    (the generator returns the row count)."""

    binary: bool
    ncols: int
    chunks: Iterator[bytes]
    rows: Callable[[], int]


@dataclass(slots=True)
class CopyIn:
    """COPY … FROM STDIN: the session feeds CopyData to ``feed`` and ends with ``finish``
    (returning the tag) or ``fail``."""

    binary: bool
    ncols: int
    feed: Callable[[bytes], None]
    finish: Callable[[], str]
    fail: Callable[[str], None]
    extra: dict[str, object] = field(default_factory=dict)


Outcome = Rows | Done | Empty | Notice | ParameterChanged | CopyOut | CopyIn
