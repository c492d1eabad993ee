"""Row messages (Insert, Update, Delete) for a whole Arrow batch at once: the writer the
plugin sends with.

``proto`` is the reference codec, one message object to bytes and back; this module writes
the same bytes for every row of a slice of a statement, and is the only other place that
knows how a row message is laid out: the plugin says which rows, which relation, which row
images (new, old key, old row) and which xid, and never spells a byte. The heads come from
``proto`` (:func:`~decoding.pgoutput.proto.row_head`, the tuple tags); the TupleData layout is
proto.c's ``logicalrep_write_tuple``, and the tests check these writers against ``proto``'s
encoders and decoder.

A bulk statement reaches the plugin as an Arrow table of a million rows; building a
TupleData object per row, or even a Python list per column, costs more than the encoding.
So the row images are assembled in Arrow: each column becomes two pieces per row (its kind
byte and length prefix, then its bytes — or just ``n`` for NULL), and one
``binary_join_element_wise`` concatenates the message head and all the pieces into one
binary array, row by row in C++. Constant bytes (the message head, ``natts``, ``n`` of
key-only tuples) ride in the next column's prefix matrix, because that join is about twice
as fast over arrays alone as over arrays with scalars among them; a caller that frames the
messages (the walsender's XLogData headers) passes a ``prefix`` and gets them framed in the
same join. A few rows of common types in text mode are built value by value instead: a
vectorised pass has a fixed cost per column however few the rows.

Values are encoded by ``decoding.pgvalues`` (text: the type's output function; binary: its
send function), which already works column-at-a-time on Arrow.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoding.pgoutput.proto import TUPLE_KEY, TUPLE_NEW, TUPLE_OLD, row_head
from decoding.pgtypes import ColumnType
from decoding.pgvalues import encode_binary_fields, encode_text_arrow
from decoding.pgvalues.textout import SmallEncoder, small_text_encoder

__all__ = [
    "DELETE",
    "INSERT",
    "TINY_GROUP_ROWS",
    "TINY_ROWS",
    "UPDATE",
    "ImageColumn",
    "Piece",
    "Prefix",
    "RelationRows",
    "RowBatch",
    "TupleImage",
    "column_pieces",
    "encode_insert_batch",
    "encode_together",
    "from_messages",
    "join_rows",
]

B = pa.binary()
LB = pa.large_binary()
#: A piece is an Arrow binary array (one value per row; NULL means "nothing") or a
#: scalar (the same bytes in every row).
Piece: TypeAlias = pa.Array | pa.Scalar
#: Given the byte length of every row, the bytes to put in front of each: (n, w) uint8.
Prefix: TypeAlias = Callable[[np.ndarray], np.ndarray]
#: A column of a row image: its name in the rows' table and its type, or None for a column
#: sent as NULL whatever the row (the non-key columns of an old key image).
ImageColumn: TypeAlias = tuple[str, ColumnType] | None
_EMPTY = pa.scalar(b"", B)
_JOIN = pc.JoinOptions(null_handling="replace", null_replacement="")
#: Offsets of a binary array are int32: past this many bytes per batch use large_binary.
_LARGE = 1 << 30
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")

#: Row batches up to this size are encoded value by value when their types allow it.
TINY_ROWS = 8
#: Batches of one group (see :func:`encode_together`) with at most this many rows in all
#: are encoded value by value rather than concatenated for one vectorised pass.
TINY_GROUP_ROWS = 128
#: Per-row message of :meth:`RelationRows.changes`: an Update, an Insert, a Delete.
UPDATE: Final = 1
INSERT: Final = 2
DELETE: Final = 3
#: Per column sent: None (an 'n') or (its index in the rows' table, its text encoder).
_TinyPlan: TypeAlias = list[tuple[int, SmallEncoder] | None]


# ------------------------------------------------------------------ Arrow assembly


def _plain(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def _valid(arr: pa.Array) -> pa.Array | None:
    """Validity as a boolean array, or None when no element is NULL."""
    if pa.types.is_null(arr.type):
        return pa.array(np.zeros(len(arr), dtype=bool))
    if arr.null_count == 0:
        return None
    return pc.is_valid(arr)


def _fixed(mat: np.ndarray) -> pa.Array:
    """The rows of an (n, w) byte matrix as a binary array."""
    n, w = mat.shape
    fixed = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(w), n, [None, pa.py_buffer(np.ascontiguousarray(mat))]
    )
    return fixed.cast(B)


def _constant(value: bytes, n: int) -> pa.Array:
    """``value`` in every one of ``n`` rows, as an array (not a scalar: see join_rows)."""
    if not value:
        return pa.nulls(n, B)
    mat = np.empty((n, len(value)), dtype=np.uint8)
    mat[:] = np.frombuffer(value, dtype=np.uint8)
    return _fixed(mat)


def _length_prefix(values: pa.Array, kind: int, lead: bytes = b"") -> pa.Array:
    """``lead`` + ``kind`` + int32 big-endian length of each value."""
    n = len(values)
    offs = values.buffers()[1]
    if offs is not None and values.null_count == 0:
        otype = np.int64 if pa.types.is_large_binary(values.type) else np.int32
        o = np.frombuffer(offs, dtype=otype, count=n + 1, offset=values.offset * otype().itemsize)
        lens = np.diff(o)
    else:
        lens = pc.binary_length(values).fill_null(0).to_numpy(zero_copy_only=False)
    k = len(lead)
    mat = np.empty((n, k + 5), dtype=np.uint8)
    if k:
        mat[:, :k] = np.frombuffer(lead, dtype=np.uint8)
    mat[:, k] = kind
    mat[:, k + 1 :] = lens.astype(">i4").view(np.uint8).reshape(n, 4)
    return _fixed(mat)


def _sized_pieces(values: pa.Array, kind: int, lead: bytes) -> list[Piece]:
    """``lead`` + ``kind`` + int32 length + bytes of each encoded value, or ``lead`` + ``n``
    for a NULL element."""
    prefix = _length_prefix(values, kind, lead)
    if values.null_count:
        prefix = pc.if_else(pc.is_valid(values), prefix, pa.scalar(lead + b"n", B))
    return [prefix, values]


def column_pieces(
    ctype: ColumnType, arr: pa.Array | pa.ChunkedArray, binary: bool, lead: bytes = b""
) -> list[Piece]:
    """One column of TupleData for every row: ``t``/``b`` + length + bytes, or ``n``;
    ``lead`` (constant bytes) goes before it in every row."""
    arr = _plain(arr)
    n = len(arr)
    if pa.types.is_null(arr.type) or arr.null_count == n:
        return [pa.scalar(lead + b"n", B)]
    null = pa.scalar(lead + b"n", B)
    if binary:
        # Fields.prefixed is int32 length + payload, with length -1 and no payload for NULL.
        prefixed = _plain(encode_binary_fields(ctype, arr).prefixed)
        valid = _valid(arr)
        if valid is None:
            return [_constant(lead + b"b", n), prefixed]
        kind = pc.if_else(valid, pa.scalar(lead + b"b", B), null)
        return [kind, pc.if_else(valid, prefixed, pa.scalar(None, prefixed.type))]
    values = _plain(encode_text_arrow(ctype, arr))
    if values.type != B and values.type != LB:
        values = values.cast(B)
    return _sized_pieces(values, ord("t"), lead)


def _tuple_pieces(
    lead: bytes, columns: Iterable[Callable[[bytes], list[Piece]] | None]
) -> list[Piece]:
    """TupleData of every row after ``lead`` (constant bytes: the message head and
    ``natts``): each column's pieces, made given the constant bytes to carry in front
    (None: the column is ``n`` in every row). Constant bytes ride along with the next
    column's length prefix (Arrow joins arrays much faster than arrays interleaved with
    scalars)."""
    pieces: list[Piece] = []
    for make in columns:
        if make is None:
            lead += b"n"
        else:
            pieces.extend(make(lead))
            lead = b""
    if lead:
        pieces.append(pa.scalar(lead, B))
    return pieces


def _nbytes(pieces: Sequence[Piece], nrows: int) -> int:
    return sum(p.nbytes if isinstance(p, pa.Array) else nrows * len(p.as_py() or b"") for p in pieces)


def _lengths(p: Piece, nrows: int) -> np.ndarray | int:
    if isinstance(p, pa.Scalar):
        return len(p.as_py() or b"")
    offs = p.buffers()[1]
    if p.null_count == 0 and offs is not None:
        otype = np.int64 if pa.types.is_large_binary(p.type) else np.int32
        return np.diff(np.frombuffer(offs, otype, count=nrows + 1, offset=p.offset * otype().itemsize))
    return pc.binary_length(p).fill_null(0).to_numpy(zero_copy_only=False)


def join_rows(
    pieces: Sequence[Piece], nrows: int, prefix: Prefix | None = None
) -> pa.Array:
    """Concatenate the pieces row by row (NULL elements contribute nothing). ``prefix``,
    given the length of every row, returns an (n, w) byte matrix to put in front of the
    rows (a framing header) within the same join.

    Adjacent scalars are merged and the rest made arrays: Arrow's element-wise join is
    faster over arrays alone than with scalars among them."""
    if prefix is not None:
        total = np.zeros(nrows, dtype=np.int64)
        for p in pieces:
            total += _lengths(p, nrows)
        pieces = [_fixed(prefix(total)), *pieces]
    merged: list[Piece] = []
    for p in pieces:
        if isinstance(p, pa.Scalar) and merged and isinstance(merged[-1], pa.Scalar):
            merged[-1] = pa.scalar((merged[-1].as_py() or b"") + (p.as_py() or b""), B)
        else:
            merged.append(p)
    if not any(isinstance(p, pa.Array) for p in merged):
        one = b"".join(p.as_py() or b"" for p in merged)
        return _constant(one, nrows) if one else pa.array([b""] * nrows, B)
    arrays = [p if isinstance(p, pa.Array) else _constant(p.as_py() or b"", nrows) for p in merged]
    if len(arrays) == 1:
        return arrays[0].cast(B) if arrays[0].type not in (B, LB) else arrays[0]
    if _nbytes(arrays, nrows) >= _LARGE:
        arrays = [p.cast(LB) for p in arrays]
        sep = pa.scalar(b"", LB)
    else:
        arrays = [p.cast(B) if p.type != B else p for p in arrays]
        sep = _EMPTY
    return pc.binary_join_element_wise(*arrays, sep, options=_JOIN)


def from_messages(msgs: Sequence[bytes], prefix: Prefix | None = None) -> pa.Array:
    """Messages built one by one as the binary array :func:`join_rows` gives, each after
    its ``prefix`` bytes when one is given."""
    if prefix is not None:
        mat = prefix(np.fromiter((len(m) for m in msgs), dtype=np.int64, count=len(msgs)))
        msgs = [bytes(head) + m for head, m in zip(mat, msgs, strict=True)]
    return pa.array(msgs, B)


# ------------------------------------------------------------------------ row images


class TupleImage:
    """The TupleData of rows under one list of columns — a relation's published columns,
    or its old key image — in Arrow for a slice, or value by value for a few text rows.

    Not frozen: it keeps the value-by-value plan of the last schema it saw. It lives as
    long as the plugin's relation entry, so batches of one relation and image can be
    recognised (by identity) and encoded together."""

    __slots__ = ("_natts", "_tiny", "binary", "columns")

    def __init__(self, columns: Sequence[ImageColumn], binary: bool) -> None:
        self.columns: tuple[ImageColumn, ...] = tuple(columns)
        self.binary = binary
        self._natts = _U16.pack(len(self.columns))
        self._tiny: tuple[pa.Schema, _TinyPlan | None] | None = None

    def pieces(self, data: pa.Table, head: bytes = b"") -> list[Piece]:
        """``head`` and the TupleData of every row of ``data``, as pieces for
        :func:`join_rows`. A column missing from ``data`` is NULL ('n')."""
        names = data.column_names
        binary = self.binary

        def column(name: str, ctype: ColumnType) -> Callable[[bytes], list[Piece]]:
            return lambda lead: column_pieces(ctype, data.column(name), binary, lead)

        return _tuple_pieces(
            head + self._natts,
            (None if c is None or c[0] not in names else column(*c) for c in self.columns),
        )

    def _tiny_plan(self, schema: pa.Schema) -> _TinyPlan | None:
        """How :meth:`tiny` builds a column of rows with this schema, decided once per
        schema (None: some column needs the Arrow path)."""
        cached = self._tiny
        if cached is not None and cached[0].equals(schema):
            return cached[1]
        index = {name: i for i, name in enumerate(schema.names)}
        plan: _TinyPlan | None = []
        for c in self.columns:
            i = None if c is None else index.get(c[0])
            if c is None or i is None or pa.types.is_null(schema.field(i).type):
                plan.append(None)  # type: ignore[union-attr]
                continue
            enc = small_text_encoder(c[1], schema.field(i).type)
            if enc is None:
                plan = None
                break
            plan.append((i, enc))  # type: ignore[union-attr]
        self._tiny = (schema, plan)
        return plan

    def tiny(self, data: pa.Table, head: bytes = b"") -> list[bytes] | None:
        """The messages :meth:`pieces` gives, built value by value: for a few text-mode rows
        of common types (None: leave it to the Arrow path)."""
        plan = self._tiny_plan(data.schema)
        if plan is None:
            return None
        lead = head + self._natts
        columns: list[list[bytes | None] | None] = []
        for step in plan:
            if step is None:
                columns.append(None)
                continue
            i, enc = step
            col = data.column(i)
            columns.append(enc(col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()))
        out = []
        for r in range(data.num_rows):
            parts = [lead]
            for values in columns:
                v = None if values is None else values[r]
                parts.append(b"n" if v is None else b"t" + _U32.pack(len(v)) + v)
            out.append(b"".join(parts))
        return out

    def rows(self, data: pa.Table, head: bytes, prefix: Prefix | None = None) -> pa.Array:
        """One message per row of ``data``: ``head`` and the row's TupleData."""
        if data.num_rows <= TINY_ROWS and not self.binary:
            msgs = self.tiny(data, head)
            if msgs is not None:
                return from_messages(msgs, prefix)
        return join_rows(self.pieces(data, head), data.num_rows, prefix)


# ---------------------------------------------------------------------- row messages


class RowBatch:
    """Row messages (Insert/Update/Delete) of one slice of a statement, decided but not
    yet encoded: :meth:`encode` builds them (a binary array, one message per element).
    Encoding is a pure function of the rows and the relation's images, so it may run on
    any thread, and several batches at once: the walsender encodes in parallel this way."""

    __slots__ = ("_encode", "parts", "rows")

    def __init__(
        self, encode: Callable[[Prefix | None], pa.Array], rows: int, parts: _Parts | None = None
    ) -> None:
        self._encode = encode
        self.rows = rows
        #: What the messages are made of, when each row's message depends on that row
        #: alone: batches with equal parts but different rows can be encoded as one.
        self.parts = parts

    def encode(self, prefix: Prefix | None = None) -> pa.Array:
        """The messages; with ``prefix`` (see :func:`join_rows`), each preceded by the
        bytes it gives for the message's length, in the same pass (a framing header: no
        second copy of the messages to frame them)."""
        return self._encode(prefix)


@dataclass(frozen=True, slots=True)
class _Parts:
    """A :class:`RowBatch` of one message per row: ``head`` and the row's TupleData
    under ``image``."""

    image: TupleImage
    data: pa.Table
    head: bytes

    def group(self) -> tuple[int, bytes, tuple[str, ...]]:
        # Column names, not the schema: hashing a schema costs more than encoding a row.
        return (id(self.image), self.head, tuple(self.data.column_names))


def _batch(image: TupleImage, data: pa.Table, head: bytes) -> RowBatch:
    return RowBatch(
        lambda prefix: image.rows(data, head, prefix), data.num_rows, _Parts(image, data, head)
    )


class RelationRows:
    """The row messages of one relation for one connection: Insert, Update and Delete of
    given rows, with the row images the caller chose.

    ``columns`` is the new row's image (the published columns, in order); ``key`` the old
    key image sent as 'K' (the replica-identity columns, every other one None), or None
    when the old row is sent whole as 'O' (REPLICA IDENTITY FULL). ``binary`` selects the
    types' send format over their text output."""

    __slots__ = ("new", "old", "old_tag", "relid")

    def __init__(
        self,
        relid: int,
        columns: Sequence[ImageColumn],
        key: Sequence[ImageColumn] | None,
        *,
        binary: bool,
    ) -> None:
        self.relid = relid
        self.new = TupleImage(columns, binary)
        # Under FULL the old row has the new row's image: one plan cache for both.
        self.old = self.new if key is None else TupleImage(key, binary)
        self.old_tag = TUPLE_OLD if key is None else TUPLE_KEY

    def inserts(self, new: pa.Table, xid: int | None = None) -> RowBatch:
        """An Insert per row of ``new``."""
        return _batch(self.new, new, row_head(b"I", self.relid, xid) + TUPLE_NEW)

    def updates(self, new: pa.Table, xid: int | None = None) -> RowBatch:
        """An Update per row of ``new``, without old key or row (the key did not change)."""
        return _batch(self.new, new, row_head(b"U", self.relid, xid) + TUPLE_NEW)

    def deletes(self, old: pa.Table, xid: int | None = None) -> RowBatch:
        """A Delete per row of ``old``, with its old key or old row image."""
        return _batch(self.old, old, row_head(b"D", self.relid, xid) + self.old_tag)

    def changes(
        self,
        action: np.ndarray,
        has_old: np.ndarray,
        old: pa.Table,
        new: pa.Table,
        xid: int | None = None,
    ) -> RowBatch:
        """One message per row of an UPDATE statement: ``action[i]`` says which
        (:data:`UPDATE`, :data:`INSERT`, :data:`DELETE` — a row filter turns an update into
        an insert or a delete); ``has_old[i]`` whether an Update carries its old image.
        A Delete carries the old image, an Insert the new row, an Update both or the new
        row only. ``old`` and ``new`` are aligned row by row."""
        n = new.num_rows
        with_old = (has_old & (action == UPDATE)) | (action == DELETE)
        if not with_old.any() and (action == UPDATE).all():
            # The common case: plain updates, new tuple only.
            return self.updates(new, xid)
        with_new = action != DELETE
        relid, old_image, new_image, tag = self.relid, self.old, self.new, self.old_tag

        def encode(prefix: Prefix | None = None) -> pa.Array:
            heads = pa.array(
                [b"", row_head(b"U", relid, xid), row_head(b"I", relid, xid), row_head(b"D", relid, xid)],
                B,
            )
            pieces: list[Piece] = [heads.take(pa.array(action))]
            if with_old.any():
                old_tuple = join_rows(old_image.pieces(old, tag), n)
                pieces.append(
                    pc.if_else(pa.array(with_old), old_tuple, pa.scalar(None, old_tuple.type))
                )
            if with_new.any():
                new_tuple = join_rows(new_image.pieces(new, TUPLE_NEW), n)
                pieces.append(
                    pc.if_else(pa.array(with_new), new_tuple, pa.scalar(None, new_tuple.type))
                )
            return join_rows(pieces, n, prefix)

        return RowBatch(encode, n)


def encode_together(batches: Sequence[RowBatch]) -> list[pa.Array | list[bytes]]:
    """The messages of each batch — a binary array as :meth:`RowBatch.encode` gives it,
    or a list of the messages' bytes — with the batches that share a relation image,
    message head and schema encoded together.

    A stream of single-row transactions yields one tiny batch per transaction. A group of
    at most ``TINY_GROUP_ROWS`` rows in all is built value by value, batch by batch
    (:meth:`TupleImage.tiny`); a bigger group is encoded in one vectorised pass, whose
    fixed cost per column is then shared by all."""
    out: list[pa.Array | list[bytes] | None] = [None] * len(batches)
    groups: dict[tuple[int, bytes, tuple[str, ...]], list[int]] = {}
    for i, b in enumerate(batches):
        if b.parts is None:
            out[i] = b.encode()
        else:
            groups.setdefault(b.parts.group(), []).append(i)
    for idx in groups.values():
        first = batches[idx[0]].parts
        assert first is not None
        if sum(batches[i].rows for i in idx) <= TINY_GROUP_ROWS and not first.image.binary:
            for i in idx:
                p = batches[i].parts
                assert p is not None
                out[i] = p.image.tiny(p.data, p.head)
            if all(out[i] is not None for i in idx):
                continue
        try:
            if len(idx) == 1:
                raise pa.ArrowInvalid("nothing to share")
            data = pa.concat_tables([batches[i].parts.data for i in idx])  # type: ignore[union-attr]
        except pa.ArrowInvalid:  # one batch, or the same names with different types
            for i in idx:
                if out[i] is None:
                    out[i] = batches[i].encode()
            continue
        merged = join_rows(first.image.pieces(data, first.head), data.num_rows)
        pos = 0
        for i in idx:
            n = batches[i].rows
            out[i] = merged.slice(pos, n)
            pos += n
    return out  # type: ignore[return-value]


# ------------------------------------------------------------ already-encoded values


def _encoded(col: Sequence[bytes | None]) -> pa.Array:
    """A column of encoded values as a binary array. Arrow would take str as UTF-8 bytes;
    a column it reads as text is refused instead, as any non-bytes value."""
    arr = _plain(pa.array(col))
    if pa.types.is_null(arr.type):
        return arr
    if not (pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)):
        raise TypeError(f"column values must be bytes or None, not {arr.type} values")
    return arr


def encode_insert_batch(
    relid: int,
    columns: Sequence[Sequence[bytes | None]],
    *,
    xid: int | None = None,
    binary: bool | Sequence[bool] = False,
    nrows: int | None = None,
) -> list[bytes]:
    """One Insert message per row, for rows given column by column as already-encoded
    values: the production writer's assembly (:func:`join_rows` of the message head and
    each column's pieces) over Python lists, for tests, benchmarks and tools that hold
    encoded values rather than typed Arrow columns.

    ``columns[i][j]`` is the already-encoded value of column i in row j, or None for NULL.
    ``binary`` says whether the bytes are the types' send format ('b') rather than text
    ('t'), for all columns or per column. ``xid`` is set inside a stream block. ``nrows``
    is only needed for a relation with no columns."""
    ncols = len(columns)
    if ncols:
        n = len(columns[0])
        for col in columns:
            if len(col) != n:
                raise ValueError("all columns of a batch must have the same number of rows")
        if nrows is not None and nrows != n:
            raise ValueError(f"nrows={nrows} but the columns hold {n} rows")
    elif nrows is None:
        raise ValueError("a batch without columns needs nrows")
    else:
        n = nrows
    if isinstance(binary, bool):
        kinds = [ord("b" if binary else "t")] * ncols
    else:
        if len(binary) != ncols:
            raise ValueError(f"{len(binary)} binary flags for {ncols} columns")
        kinds = [ord("b" if flag else "t") for flag in binary]

    def column(values: pa.Array, kind: int) -> Callable[[bytes], list[Piece]] | None:
        if values.null_count == len(values):
            return None
        return lambda lead: _sized_pieces(values, kind, lead)

    head = row_head(b"I", relid, xid) + TUPLE_NEW + _U16.pack(ncols)
    makers = [column(_encoded(col), kind) for col, kind in zip(columns, kinds, strict=True)]
    return join_rows(_tuple_pieces(head, makers), n).to_pylist()
