#!/usr/bin/env python3
"""pgoutput encoding rates, in process (no sockets, no PostgreSQL):

1. ``encode_insert_batch`` (``rows.py``: the production row writer over Python lists of
   already-encoded values): Insert messages for 1,000,000 rows of 5 text columns (one with
   NULLs), lists in, lists out.
2. The walsender's bulk path: one committed 1,000,000-row transaction (bigint key, three
   ints, ~50-byte text, timestamptz: ~110 bytes/row, as in ``bench_stream.py``) decoded by
   the pgoutput plugin from its changeset, text and binary, into CopyData(XLogData) frames
   — sequentially, and through the walsender's pipeline (chunks encoded in parallel).

.venv/bin/python scripts/bench_pgoutput.py [--rows N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pyarrow as pa

from decoding.pgoutput import Insert, TupleData, decode_message
from decoding.pgoutput.options import PgOutputOptions
from decoding.pgoutput.plugin import PgOutput
from decoding.pgoutput.rows import encode_insert_batch
from decoding.reorder import DecodedTxn, committed_after
from walsender_proxy.lake import Lake, LakeSettings
from walsender_proxy.replication import stream as W


def codec(n: int) -> None:
    columns = [
        [b"%d" % i for i in range(n)],
        [b"customer %d" % (i % 1000) for i in range(n)],
        [None if i % 10 == 0 else b"12.50" for i in range(n)],
        [b"2026-11-21 23:38:34.257037+00"] * n,
        [b"some longer text value for the row"] * n,
    ]
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        out = encode_insert_batch(16391, columns)
        best = min(best, time.perf_counter() - start)
    assert decode_message(out[10]) == Insert(
        16391, TupleData((b"10", b"customer 10", None, columns[3][0], columns[4][0]))
    )
    print(f"encode_insert_batch:        {n / best:>11,.0f} rows/s ({best:.3f} s for {n:,} rows)")


def rows(n: int) -> pa.Table:
    ids = np.arange(1, n + 1, dtype=np.int64)
    text = np.char.add(np.char.add("row ", ids.astype(str)), " some text about fifty chars long..")
    us = ids * 1_000_123 + 1_704_067_200_000_000
    return pa.table(
        {
            "id": ids,
            "a": (ids % 1000).astype(np.int32),
            "b": (ids % 7).astype(np.int32),
            "c": (ids * 3 % 2**31).astype(np.int32),
            "txt": pa.array(text.astype(object)),
            "ts": pa.array(us.astype("datetime64[us]")).cast(pa.timestamp("us", tz="UTC")),
        }
    )


def bulk(n: int) -> None:
    with tempfile.TemporaryDirectory(prefix="wpx-bench-pgoutput-") as d:
        lake = Lake(Path(d), LakeSettings(fsync=False, background=False))
        with lake.begin() as tx:
            tx.create_table(
                "t",
                [("id", "bigint"), ("a", "int"), ("b", "int"), ("c", "int"), ("txt", "text"),
                 ("ts", "timestamptz")],
                primary_key=["id"],
            )  # fmt: skip
            tx.create_publication("p", tables=["t"])
        start, csn = lake.log.insert_lsn, lake.frontier
        with lake.begin() as tx:
            tx.insert("t", rows(n))
        (txn,) = committed_after(lake.log.read(start), start, csn)
        for binary in (False, True):
            raw = [("proto_version", "1"), ("publication_names", "p")]
            options = PgOutputOptions.parse(raw + [("binary", "true")] * binary, 150000)
            plugin = PgOutput(options, lake.catalog_at, lake.changesets)
            mode = "binary" if binary else "text"

            def sequential(txn: DecodedTxn = txn, plugin: PgOutput = plugin) -> int:
                return len(W._frame_all(plugin, txn))

            async def pipelined(txn: DecodedTxn = txn, plugin: PgOutput = plugin) -> int:
                pipe = W._TxnPipeline(plugin, txn, asyncio.get_running_loop())
                size = 0
                while (data := await pipe.next()) is not None:
                    size += len(data)
                    pipe.release()
                pipe.close()
                return size

            for label, fn in (
                ("sequential", sequential),
                ("pipelined", lambda f=pipelined: asyncio.run(f())),
            ):
                best, size = float("inf"), 0
                for _ in range(3):
                    t0 = time.perf_counter()
                    size = fn()
                    best = min(best, time.perf_counter() - t0)
                print(
                    f"plugin → frames, {mode:6s} {label:10s} {n / best:>11,.0f} rows/s "
                    f"{size / best / 1e6:7.1f} MB/s ({best:.3f} s, {size / 1e6:.0f} MB)"
                )
        lake.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    n = ap.parse_args().rows
    codec(n)
    bulk(n)


if __name__ == "__main__":
    main()
