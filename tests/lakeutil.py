"""Helpers shared by the lake tests: model a subscriber that takes the copy at S and applies
the decoded stream by row identity."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow as pa

from decoding import records as R
from decoding.catalog import RID
from decoding.reorder import DecodedTxn
from walsender_proxy.lake import Lake, LakeSettings, PubTable, Transaction
from walsender_proxy.lake.lake import load_change

#: No fsync, no background thread: what most lake tests run under.
FAST = LakeSettings(fsync=False, background=False)

#: The table most lake tests write: t (id bigint primary key, v text, n int).
T_COLUMNS: Sequence[tuple[Any, ...]] = (("id", "bigint"), ("v", "text"), ("n", "int"))

#: The ``make_lake`` fixture's factory (tests/unit/conftest.py).
MakeLake = Callable[..., Lake]


def by_rid(table: pa.Table) -> dict[int, tuple[Any, ...]]:
    rows = table.to_pylist()
    return {r[RID]: tuple((k, v) for k, v in sorted(r.items()) if k != RID) for r in rows}


def apply_stream(
    lake: Lake,
    state: dict[int, tuple[Any, ...]],
    txns: Iterable[DecodedTxn],
    relid: int,
    names: dict[str, str],
) -> None:
    """Apply decoded transactions to ``state`` (rid → row) as a subscriber would."""
    for tx in txns:
        for ch in tx.changes:
            if isinstance(ch, R.Truncate):
                if relid in ch.relids:
                    state.clear()
                continue
            if not isinstance(ch, (R.Change, R.Changeset)) or ch.relid != relid:
                continue
            new, old = load_change(ch, lake.changesets)
            if ch.op == "D":
                assert old is not None
                for rid in old.column(RID).to_pylist():
                    del state[rid]
            else:
                assert new is not None
                renamed = new.rename_columns([names.get(c, c) for c in new.column_names])
                state.update(by_rid(renamed))


def commit_points(lake: Lake) -> list[tuple[int, int]]:
    """(LSN, CSN) of every commit record in log order."""
    return [
        (e.lsn, e.record.csn)
        for e in lake.log.read()
        if isinstance(e.record, (R.Commit, R.CommitPrepared))
    ]


def cooked(tx: Transaction, tables: Sequence[str | PubTable]) -> list[str | PubTable]:
    """``tables`` with each row filter written as SQL text cooked for its table, as
    ``CREATE PUBLICATION … WHERE (…)`` cooks it (the tables must exist in ``tx``)."""
    from dataclasses import replace

    from walsender_proxy.sql import rowfilter_sql

    out: list[str | PubTable] = []
    for pt in tables:
        if isinstance(pt, PubTable) and isinstance(pt.row_filter, str):
            pt = replace(pt, row_filter=rowfilter_sql.from_text(pt.row_filter, tx.table(pt.name)))
        out.append(pt)
    return out


def crash(lake: Lake) -> None:
    """Drop ``lake`` as a crash would: its log flushed but nothing closed cleanly (no
    manifest, no saved state), its data directory free for the next open."""
    import fcntl

    lake.log.flush()
    lake.log.close()
    lake.store.close()
    fcntl.flock(lake._lockfile, fcntl.LOCK_UN)
    lake._closed = True
