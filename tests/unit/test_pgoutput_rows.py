"""The vectorised row writers of ``decoding.pgoutput.rows`` give, row for row, the bytes of
``proto``'s per-message encoders: Insert, Update (plain, with old key 'K', with old row
'O'), Delete ('K' or 'O'), the row filter's mixed Update/Insert/Delete, text and binary,
with and without a stream xid, NULLs, few rows (value by value) and many (Arrow), framed
or not, and batches encoded together. Unchanged-TOAST ('u') is not modelled: the lake
stores every value, so the plugin never sends one."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from decoding.pgoutput import Delete, Insert, TupleData, Update, decode_message
from decoding.pgoutput import rows as R
from decoding.pgtypes import parse_type

# type name -> (Arrow type, value strategy, text bytes, binary bytes): references written
# from the types' output and send functions, independently of decoding.pgvalues.
TYPES = {
    "int4": (pa.int32(), st.integers(-(2**31), 2**31 - 1), b"%d".__mod__, struct.Struct(">i").pack),
    "int8": (pa.int64(), st.integers(-(2**63), 2**63 - 1), b"%d".__mod__, struct.Struct(">q").pack),
    "bool": (pa.bool_(), st.booleans(), lambda v: b"t" if v else b"f", lambda v: bytes((v,))),
    "text": (
        pa.string(),
        st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\0"), max_size=12),
        str.encode,
        str.encode,
    ),
}
RELID = 16391


@st.composite
def relations(draw):
    """A relation's columns, a key among them, and aligned old and new rows."""
    ncols = draw(st.integers(1, 5))
    names = [f"c{i}" for i in range(ncols)]
    types = [draw(st.sampled_from(sorted(TYPES))) for _ in names]
    key = {n for n in names if draw(st.booleans())}
    nrows = draw(st.integers(0, 20))
    tables = []
    for _ in range(2):
        cols = {}
        for name, tname in zip(names, types, strict=True):
            arrow, values = TYPES[tname][:2]
            cols[name] = pa.array(
                draw(st.lists(st.none() | values, min_size=nrows, max_size=nrows)), arrow
            )
        tables.append(pa.table(cols))
    missing = draw(st.sampled_from([None, *names]))  # a column the rows' table lacks
    return names, types, key, tables[0], tables[1], missing


def image(names, types, key=None):
    return [
        None if key is not None and n not in key else (n, parse_type(t))
        for n, t in zip(names, types, strict=True)
    ]


def tuple_of(table, r, names, types, binary, key=None):
    """The reference TupleData of row ``r`` (key: other columns NULL)."""
    values = []
    for n, t in zip(names, types, strict=True):
        v = table.column(n)[r].as_py() if n in table.column_names else None
        if key is not None and n not in key:
            v = None
        values.append(None if v is None else TYPES[t][3 if binary else 2](v))
    return TupleData.of(values, binary=binary)


def drop(table, missing):
    return table.drop_columns([missing]) if missing else table


@settings(max_examples=60, deadline=None)
@given(relations(), st.booleans(), st.none() | st.integers(0, 2**32 - 1), st.booleans())
def test_row_writers_match_per_message_encoders(rel, binary, xid, full):
    names, types, key, old, new, missing = rel
    old, new = drop(old, missing), drop(new, missing)
    writer = R.RelationRows(
        RELID, image(names, types), None if full else image(names, types, key), binary=binary
    )
    n = new.num_rows

    def old_image(r):
        t = tuple_of(old, r, names, types, binary, None if full else key)
        return {"old": t} if full else {"key": t}

    def new_image(r):
        return tuple_of(new, r, names, types, binary)

    want_ins = [Insert(RELID, new_image(r), xid).encode() for r in range(n)]
    want_upd = [Update(RELID, new_image(r), xid=xid).encode() for r in range(n)]
    want_del = [Delete(RELID, xid=xid, **old_image(r)).encode() for r in range(n)]
    assert writer.inserts(new, xid).encode().to_pylist() == want_ins
    assert writer.updates(new, xid).encode().to_pylist() == want_upd
    assert writer.deletes(old, xid).encode().to_pylist() == want_del

    rng = np.random.default_rng(n)
    action = rng.choice([R.UPDATE, R.INSERT, R.DELETE], n).astype(np.int8)
    has_old = rng.random(n) < 0.5
    want = []
    for r in range(n):
        if action[r] == R.INSERT:
            want.append(Insert(RELID, new_image(r), xid).encode())
        elif action[r] == R.DELETE:
            want.append(Delete(RELID, xid=xid, **old_image(r)).encode())
        else:
            extra = old_image(r) if has_old[r] else {}
            want.append(Update(RELID, new_image(r), xid=xid, **extra).encode())
    batch = writer.changes(action, has_old, old, new, xid)
    assert batch.encode().to_pylist() == want
    for m, w in zip(batch.encode().to_pylist(), want, strict=True):
        assert decode_message(m, in_stream=xid is not None).encode() == w

    # Framed: each message after the bytes the prefix gives for its length.
    framed = batch.encode(lambda lengths: np.asarray(lengths, ">u4").view(np.uint8).reshape(-1, 4))
    assert framed.to_pylist() == [len(w).to_bytes(4, "big") + w for w in want]


@settings(max_examples=30, deadline=None)
@given(relations(), st.booleans(), st.integers(1, 4))
def test_batches_encoded_together_match_alone(rel, binary, parts):
    names, types, key, old, new, _ = rel
    writer = R.RelationRows(RELID, image(names, types), image(names, types, key), binary=binary)
    step = max(1, new.num_rows // parts)
    batches = []
    for start in range(0, new.num_rows, step):
        batches.append(writer.inserts(new.slice(start, step)))
        batches.append(writer.deletes(old.slice(start, step)))
    together = R.encode_together(batches)
    for b, got in zip(batches, together, strict=True):
        got = got if isinstance(got, list) else got.to_pylist()
        assert got == b.encode().to_pylist()


def test_encode_insert_batch_is_the_row_writer():
    """The list-in, list-out wrapper and the plugin's writer agree on typed columns."""
    names, types = ["a", "b", "c"], ["int4", "text", "bool"]
    table = pa.table(
        {
            "a": pa.array([1, None, -7] * 5, pa.int32()),
            "b": pa.array(["x", "", None] * 5),
            "c": pa.array([None] * 15, pa.bool_()),
        }
    )
    for binary in (False, True):
        cols = [
            [None if v is None else TYPES[t][3 if binary else 2](v) for v in table.column(n).to_pylist()]
            for n, t in zip(names, types, strict=True)
        ]
        writer = R.RelationRows(RELID, image(names, types), None, binary=binary)
        want = writer.inserts(table, 9).encode().to_pylist()
        assert R.encode_insert_batch(RELID, cols, xid=9, binary=binary) == want
