"""Streaming in the reorder buffer (``decoding.reorder``), as an invariant over random
interleavings of transactions with savepoints rolled back to, aborts and commits: what a
subscriber applies of the streamed events — each block's changes kept by (sub)transaction
until Stream Commit, a Stream Abort of a subtransaction dropping its changes (and those of
the subtransactions under it), one of the whole transaction dropping all of it — is
exactly what the buffer gives without streaming: every committed transaction's changes,
in commit order. Memory stays under the limit between records, and nothing is streamed
before the position decoding may stream from."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from decoding import records as R
from decoding.changelog import LogEntry
from decoding.reorder import DecodedTxn, ReorderBuffer, StreamAborted, StreamBlock

#: Each record is sized by its log span; 100 bytes a record, the limit a few records.
SPAN = 100


def _change(xid: int, subxid: int, n: int) -> R.Change:
    return R.Change(xid, subxid, 16384, "I", pa.table({"v": [n]}), None)


@st.composite
def scripts(draw: st.DrawFn) -> list[R.Record]:
    """Records of up to four concurrent transactions: inserts at the current
    (sub)transaction, savepoints (a new subxid under the current one), ROLLBACK TO (the
    savepoint's subtransaction and everything opened under it since), then COMMIT or
    ROLLBACK."""
    out: list[R.Record] = []
    open_: dict[int, list[int]] = {}  # xid -> savepoint stack of subxids
    next_xid, next_sub, n = 100, 1000, 0
    for _ in range(draw(st.integers(5, 60))):
        step = draw(st.sampled_from(["begin", "insert", "insert", "insert", "savepoint", "rollback_to", "end"]))
        if step == "begin" or not open_:
            open_[next_xid] = []
            next_xid += 1
            continue
        xid = draw(st.sampled_from(sorted(open_)))
        stack = open_[xid]
        if step == "insert":
            n += 1
            out.append(_change(xid, stack[-1] if stack else 0, n))
        elif step == "savepoint":
            stack.append(next_sub)
            next_sub += 1
        elif step == "rollback_to" and stack:
            i = draw(st.integers(0, len(stack) - 1))
            dead = tuple(s for s in range(stack[i], next_sub))
            out.append(R.SubAbort(xid, dead, 7))
            del stack[i:]
            stack.append(next_sub)  # (the savepoint stays, as a new subtransaction)
            next_sub += 1
        elif step == "end":
            out.append(R.Commit(xid, xid, 1, "", 0) if draw(st.booleans()) else R.Abort(xid, 9))
            del open_[xid]
    for xid in sorted(open_):
        out.append(R.Commit(xid, xid, 1, "", 0))
    return out


def _entries(records: list[R.Record]) -> list[LogEntry]:
    return [LogEntry(i * SPAN, (i + 1) * SPAN, r) for i, r in enumerate(records)]


def _values(changes: Any) -> list[tuple[int, int]]:
    return [(r.subxid, r.new.column("v")[0].as_py()) for r in changes if isinstance(r, R.Change)]


def _whole(entries: list[LogEntry]) -> list[tuple[int, list[int]]]:
    rb = ReorderBuffer()
    return [(ev.xid, [v for _, v in _values(ev.changes)]) for e in entries for ev in rb.feed(e) if isinstance(ev, DecodedTxn)]


@settings(max_examples=300, deadline=None)
@given(scripts(), st.integers(1, 6), st.integers(0, 40))
def test_streamed_events_apply_to_what_whole_transactions_are(records: list[R.Record], limit: int, start: int) -> None:
    entries = _entries(records)
    stream_from = start * SPAN
    with tempfile.TemporaryDirectory() as spill:
        rb = ReorderBuffer(work_mem=limit * (SPAN + 64), spill_dir=Path(spill), stream_from=stream_from)
        applied = _apply(rb, entries, stream_from)
    assert applied == _whole(entries)


def _apply(rb: ReorderBuffer, entries: list[LogEntry], stream_from: int) -> list[tuple[int, list[int]]]:
    applied: list[tuple[int, list[int]]] = []
    kept: dict[int, list[tuple[int, int]]] = {}
    for e in entries:
        for ev in rb.feed(e):
            if isinstance(ev, StreamBlock):
                assert e.end_lsn >= stream_from
                assert ev.first_segment == (ev.txn.xid not in kept)
                kept.setdefault(ev.txn.xid, []).extend(_values(ev.changes))
            elif isinstance(ev, StreamAborted):
                if ev.subxid == 0:
                    kept.pop(ev.txn.xid)
                else:  # (as PostgreSQL's apply worker: from the subtransaction's first change on)
                    got = kept[ev.txn.xid]
                    first = next((i for i, (s, _) in enumerate(got) if s == ev.subxid), len(got))
                    del got[first:]
            elif isinstance(ev, DecodedTxn):
                streamed = kept.pop(ev.xid, [])
                assert bool(streamed) <= ev.streamed
                applied.append((ev.xid, [v for _, v in streamed + _values(ev.changes)]))
        assert rb.work_mem is not None and rb._held < rb.work_mem  # (back under the limit: streamed or spilled)
    assert not kept
    return applied


@settings(max_examples=200, deadline=None)
@given(scripts(), st.integers(1, 6), st.data())
def test_changes_made_under_a_skipped_origin_are_never_streamed(records: list[R.Record], limit: int, data: st.DataObject) -> None:
    """Transactions whose first write was made under an origin the plugin filters
    (``XactOrigin`` before their first record): none of them is streamed, nor holds
    memory; each reaches its commit with no changes; the others are as before."""
    xids = sorted({r.xid for r in records})
    foreign = set(data.draw(st.lists(st.sampled_from(xids), unique=True))) if xids else set()
    marked: list[R.Record] = []
    seen: set[int] = set()
    for r in records:
        if r.xid in foreign and r.xid not in seen:
            marked.append(R.XactOrigin(r.xid, "elsewhere"))
        seen.add(r.xid)
        marked.append(r)
    entries = _entries(marked)
    with tempfile.TemporaryDirectory() as spill:
        rb = ReorderBuffer(work_mem=limit * (SPAN + 64), spill_dir=Path(spill), stream_from=0, skip_origin=lambda o: o == "elsewhere")
        for e in entries:
            for ev in rb.feed(e):
                if isinstance(ev, StreamBlock):
                    assert ev.txn.xid not in foreign
                elif isinstance(ev, DecodedTxn) and ev.xid in foreign:
                    assert not ev.streamed and _values(ev.changes) == []
            assert all(t.changes.mem_bytes == 0 for t in rb._open.values() if t.xid in foreign)
