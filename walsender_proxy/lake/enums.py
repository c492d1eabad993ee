"""Enum labels held to their type on every write of an enum column (or an array of enum
values): an INSERT's or UPDATE's new value, a COPY field, a Spark changeset. A value is
kept as its label, so this is where ``enum_in``'s refusal of any other text happens for
values that did not come through a cast the SQL layer checked.

A label that this transaction added (ALTER TYPE … ADD VALUE) cannot be used until the
transaction commits, as in PostgreSQL 15 (55P04), even in an enum the transaction created
(its CREATE TYPE's own labels can): a transaction that rolled back the label would leave
rows holding one that no longer exists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoding.catalog import EnumType, Table
from walsender_proxy.lake.domains import newest, shown
from walsender_proxy.lake.errors import LakeError

if TYPE_CHECKING:
    from walsender_proxy.lake.tx_services import OpenTransaction


def label_error(en: EnumType, label: str) -> LakeError:
    return LakeError("22P02", f'invalid input value for enum {shown(en)}: "{label}"')


def unsafe_error(en: EnumType, label: str) -> LakeError:
    return LakeError(
        "55P04",
        f'unsafe use of new value "{label}" of enum type {shown(en)}',
        hint="New enum values must be committed before they can be used.",
    )


def unsafe_labels(tx: OpenTransaction, en: EnumType) -> frozenset[str]:
    """The labels of ``en`` this transaction added."""
    return frozenset(label for oid, label in tx.added_enum_labels if oid == en.oid and label in en.names)


def check_rows(tx: OpenTransaction, t: Table, data: pa.Table) -> None:
    """Raise the error of the first written value (row by row, column by column) that is no
    label of its column's enum, or one not yet committed."""
    cols = [(pos, c) for pos, c in enumerate(t.columns) if c.type.is_enum and c.physical in data.column_names]
    if not data.num_rows or not cols:
        return
    cat = newest(tx)
    first: tuple[int, int, LakeError] | None = None
    for pos, col in cols:
        en = cat.enum_of(col.type)
        if en is None:
            raise LakeError("42704", f"type with OID {col.type.base.oid} does not exist")
        unsafe = unsafe_labels(tx, en) if tx.added_enum_labels else frozenset()
        found = first_invalid(data.column(col.physical), frozenset(en.names) - unsafe)
        if found is None:
            continue
        row, label = found
        error = unsafe_error(en, label) if label in unsafe else label_error(en, label)
        if first is None or (row, pos) < first[:2]:
            first = (row, pos, error)
    if first is not None:
        raise first[2]


def first_invalid(arr: pa.Array | pa.ChunkedArray, labels: frozenset[str]) -> tuple[int, str] | None:
    """The first value (its row, and the label) of a column of labels, or of arrays of
    them, that is none of ``labels``; None when every one is."""
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    rows: np.ndarray | None = None
    if pa.types.is_list(arr.type):
        rows = pc.list_parent_indices(arr).to_numpy()
        arr = pc.list_flatten(arr)
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    allowed = pa.array(sorted(labels), pa.string())
    bad = pc.and_(pc.is_valid(arr), pc.invert(pc.is_in(arr, value_set=allowed)))
    hits = np.flatnonzero(bad.to_numpy(zero_copy_only=False))
    if not len(hits):
        return None
    i = int(hits[0])
    return (int(rows[i]) if rows is not None else i), arr[i].as_py()
