"""The walsender's bulk path: row messages framed as CopyData(XLogData) in bulk, chunks
encoded in parallel and handed over in order, changesets read in aligned record batches.
Every byte must be what the per-message path (and so PostgreSQL 15) gives."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pyarrow as pa
import pytest

from decoding import records as R
from decoding.change_rows import _rebatch
from decoding.pgoutput import decode_message
from decoding.pgoutput.options import PgOutputOptions
from decoding.pgoutput.plugin import PgOutput, RowBatch
from decoding.reorder import ChangeList, DecodedTxn, committed_after
from tests.lakeutil import MakeLake, cooked
from walsender_proxy.lake import Lake, LakeSettings, PubTable, Sql
from walsender_proxy.protocol.replication import encode_xlogdata_message
from walsender_proxy.replication import stream as W


def opts(*pubs: str, **kw: str) -> PgOutputOptions:
    names = ",".join(f'"{p}"' for p in pubs)
    return PgOutputOptions.parse([("proto_version", "1"), ("publication_names", names), *kw.items()], 150000)


@pytest.fixture(params=[False, True], ids=["inline", "changeset"])
def lake(request: pytest.FixtureRequest, make_lake: MakeLake) -> Lake:
    return make_lake(LakeSettings(fsync=False, background=False, changeset_bytes=1 if request.param else 1 << 30), path="lake")


def txns_of(lake: Lake, start: int, csn: int) -> list[DecodedTxn]:
    return list(committed_after(lake.log.read(start), start, csn))


def mixed_workload(lake: Lake, n: int = 300) -> tuple[int, int]:
    with lake.begin() as tx:
        tx.create_table(
            "t",
            [("id", "bigint", True), ("region", "text"), ("n", "int"), ("ts", "timestamptz")],
            primary_key=["id"],
        )
        tx.set_replica_identity("t", "full")
        tx.create_table("u", [("id", "int", True), ("v", "text")], primary_key=["id"])
        tx.create_publication("p", tables=cooked(tx, [PubTable("t", None, "region <> 'xx'"), "u"]))
    start, csn = lake.log.insert_lsn, lake.frontier
    rows = [
        {"id": i, "region": None if i % 11 == 0 else ("eu" if i % 3 else "xx"), "n": i,
         "ts": None if i % 7 == 0 else 1_700_000_000_000_000 + i * 1_234_567}
        for i in range(n)
    ]  # fmt: skip
    with lake.begin() as tx:
        tx.insert("t", rows)
        tx.insert("u", [{"id": i, "v": f"v{i}" * (i % 5)} for i in range(n)])
    with lake.begin() as tx:
        tx.update("t", {"region": Sql("CASE WHEN id % 2 = 0 THEN 'xx' ELSE 'eu' END")}, "true")
        tx.update("u", {"v": Sql("v || '!'")}, "id % 3 = 0")
        tx.update("u", {"id": Sql("id + 100000")}, "id % 10 = 1")  # key changes: 'K'

    with lake.begin() as tx:
        tx.delete("t", "id < 100")
        tx.delete("u", "id % 2 = 1")
    return start, csn


def framed_per_message(plugin: PgOutput, txn: DecodedTxn, now: int) -> bytes:
    out = []
    for p in plugin.transaction(txn):
        kind = p[:1]
        pos = 0 if kind == b"R" else txn.end_lsn if kind == b"C" else txn.first_lsn or txn.commit_lsn
        out.append(encode_xlogdata_message(pos, pos, now, p))
    return b"".join(out)


def test_xlogdata_frames_match_the_per_message_encoder() -> None:
    msgs = [b"I" + bytes(range(i % 256)) * (i % 3) for i in range(1000)] + [b""]
    for typ in (pa.binary(), pa.large_binary()):
        arr = pa.array(msgs, typ)
        for part in (arr, arr.slice(17, 500)):
            want = b"".join(
                encode_xlogdata_message(0x1234_5678_9ABC, 0x1234_5678_9ABC, -5, m)
                for m in part.to_pylist()
            )
            assert bytes(W.xlogdata_frames(part, 0x1234_5678_9ABC, -5)) == want


def test_batches_and_deferred_batches_give_the_same_bytes(lake: Lake) -> None:
    start, csn = mixed_workload(lake)
    txns = txns_of(lake, start, csn)
    assert len(txns) == 3
    reference = PgOutput(opts("p"), lake.catalog_at, lake.changesets, chunk_rows=64)
    bulk = PgOutput(opts("p"), lake.catalog_at, lake.changesets, chunk_rows=64)
    for txn in txns:
        want = framed_per_message(reference, txn, 42)
        got = []
        for b in bulk.iter_batches(txn, deferred=True):
            got.append(W._frame_xlogdata(b, txn, 42))
        assert b"".join(got) == want
        assert any(isinstance(b, RowBatch) for b in bulk.iter_batches(txn, deferred=True))
        decoded = [decode_message(m) for m in reference.transaction(txn)]
        assert decoded  # every transaction publishes something


def test_pipeline_sends_chunks_in_order_and_stops_early(lake: Lake) -> None:
    start, csn = mixed_workload(lake, 2000)
    txns = txns_of(lake, start, csn)

    async def run(txn: DecodedTxn, plugin: PgOutput, stop_after: int | None = None) -> bytes:
        pipe = W._TxnPipeline(plugin, txn, asyncio.get_running_loop())
        out = []
        try:
            while (data := await pipe.next()) is not None:
                out.append(bytes(data))
                pipe.release()
                if stop_after is not None and len(out) >= stop_after:
                    break
        finally:
            pipe.close()
        pipe.thread.join(10)
        assert not pipe.thread.is_alive()
        return b"".join(out)

    reference = PgOutput(opts("p"), lake.catalog_at, lake.changesets, chunk_rows=50)
    plugin = PgOutput(opts("p"), lake.catalog_at, lake.changesets, chunk_rows=50)
    for txn in txns:
        data = asyncio.run(run(txn, plugin))
        # The pipeline stamps its own send time: compare with that.
        now = int.from_bytes(data[22:30], "big")
        assert data == framed_per_message(reference, txn, now)
    # A stream that ends mid-transaction stops the producer (and closes the changes).
    txn = txns_of(lake, start, csn)[0]
    other = PgOutput(opts("p"), lake.catalog_at, lake.changesets, chunk_rows=50)
    assert asyncio.run(run(txn, other, stop_after=2))


def test_rebatch_aligns_batches_of_any_size() -> None:
    t = pa.table({"x": list(range(100))})
    uneven = [t.slice(0, 3), t.slice(3, 40), t.slice(43, 1), t.slice(44, 56)]
    out = list(_rebatch((b.to_batches()[0] for b in uneven), 16))
    assert [o.num_rows for o in out] == [16] * 6 + [4]
    assert pa.concat_tables(out).column("x").to_pylist() == list(range(100))


def test_change_list_knows_its_size_ddl_and_bulk(tmp_path: Path) -> None:
    cl = ChangeList(budget=1 << 20, spill_dir=tmp_path)
    assert cl.small(1 << 20) and not cl.has_catalog_changes
    cl.append(R.CatalogChange(7, 3, ({"op": "put_schema", "schema": {"name": "s"}},)))
    assert cl.has_catalog_changes
    cl.abort_subxids([3])
    assert not cl.has_catalog_changes  # rolled back with its savepoint
    cl.append(R.Changeset(7, 0, 16384, "I", "x-new.parquet", "", 10))
    assert cl.bulk and not cl.small(1 << 20)
    cl.close()


def test_mixed_workload_covers_every_row_message_shape(tmp_path: Path) -> None:
    with Lake(tmp_path / "l", LakeSettings(fsync=False, background=False)) as lk:
        start, csn = mixed_workload(lk)
        plugin = PgOutput(opts("p"), lk.catalog_at, lk.changesets)
        shapes = set()
        for txn in txns_of(lk, start, csn):
            for m in map(decode_message, plugin.transaction(txn)):
                tag = "K" if getattr(m, "key", None) else "O" if getattr(m, "old", None) else ""
                shapes.add(type(m).__name__[0] + tag)
    assert shapes >= {"B", "R", "I", "U", "UK", "UO", "DK", "DO", "C"}


def test_no_frame_before_the_commit_claims_the_commit_position(lake: Lake) -> None:
    """A subscriber reports the highest walEnd it has received as flushed while nothing is
    pending: a change stamped at the commit LSN would move the slot's confirmed position to
    the commit while the transaction is still being applied (PostgreSQL stamps each change
    at its own, lower LSN)."""
    start, csn = mixed_workload(lake, 300)
    plugin = PgOutput(opts("p"), lake.catalog_at, lake.changesets, chunk_rows=64)
    for txn in txns_of(lake, start, csn):
        data = b"".join(bytes(W._frame_xlogdata(b, txn, 0)) for b in plugin.iter_batches(txn))
        pos, ends = 0, []
        while pos < len(data):
            length = int.from_bytes(data[pos + 1 : pos + 5], "big")
            assert data[pos + 5 : pos + 6] == b"w"
            ends.append((data[pos + 30 : pos + 31], int.from_bytes(data[pos + 14 : pos + 22], "big")))
            pos += 1 + length
        assert ends[-1] == (b"C", txn.end_lsn)
        assert all(0 < end < txn.commit_lsn for kind, end in ends[:-1] if kind != b"R")


@pytest.mark.parametrize("tiny_group_rows", [0, 128])
def test_small_transactions_framed_together_match_one_by_one(
    lake: Lake, tiny_group_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Single-row commits (an OLTP client's stream) are framed together, their row
    messages encoded value by value (groups of up to TINY_GROUP_ROWS rows) or in shared
    Arrow passes (0: always): the bytes must be those of framing each transaction alone,
    through inserts, updates (old key, full old row), deletes, a row filter that drops
    some, and a column added in the middle."""
    from decoding.pgoutput import rows as rows_module

    monkeypatch.setattr(rows_module, "TINY_GROUP_ROWS", tiny_group_rows)
    start, csn = mixed_workload(lake, 40)
    for i in range(40, 48):
        with lake.begin() as tx:
            region = "xx" if i % 4 == 0 else "eu"
            tx.insert("t", [{"id": i, "region": region, "n": i, "ts": None}])
            tx.insert("u", [{"id": i, "v": f"w{i}"}])
        with lake.begin() as tx:
            tx.update("u", {"v": Sql("v || '+'")}, f"id = {i}")
            tx.update("t", {"n": Sql("n + 1")}, f"id = {i - 1}")
        if i == 44:
            with lake.begin() as tx:
                tx.add_column("u", "extra", "int")
        with lake.begin() as tx:
            tx.update("u", {"id": Sql("id + 1000")}, f"id = {i - 2}")
            tx.delete("t", f"id = {i - 3}")
    txns = txns_of(lake, start, csn)
    assert len(txns) > 24
    reference = PgOutput(opts("p"), lake.catalog_at, lake.changesets)
    want = b"".join(framed_per_message(reference, t, 7) for t in txns)
    together = PgOutput(opts("p"), lake.catalog_at, lake.changesets)
    assert W._frame_small(together, txns, 7) == want
    commit_frames = want.count((7).to_bytes(8, "big") + b"C")  # sendTime 7, then a Commit
    assert commit_frames == len(txns) - 1  # the ADD COLUMN alone publishes nothing
