#!/usr/bin/env python3
"""Rate of pgoutput Insert batch encoding: 1,000,000 rows of 5 text columns (one with NULLs).

.venv/bin/python scripts/bench_pgoutput.py [--rows N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from decoding.pgoutput import Insert, TupleData, decode_message, encode_insert_batch


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    n = ap.parse_args().rows
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
    print(f"encode_insert_batch: {n / best:,.0f} rows/s ({best:.3f} s for {n:,} rows)")


if __name__ == "__main__":
    main()
