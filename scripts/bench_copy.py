#!/usr/bin/env python3
"""COPY TO encoding rate: 1,000,000 rows (bigint, int, int, ~50-char text, timestamptz) in
text, csv and binary.

    .venv/bin/python scripts/bench_copy.py [--rows N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pyarrow as pa

from decoding.copyformat import encode_copy
from decoding.pgtypes import parse_type


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    n = ap.parse_args().rows
    rng = np.random.default_rng(0)
    t = pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64) * 7919),
            "a": pa.array(rng.integers(-(2**31), 2**31, n).astype(np.int32)),
            "b": pa.array(rng.integers(0, 1000, n).astype(np.int32)),
            "t": pa.array([f"row {i} some text that is about fifty chars long.." for i in range(n)]),
            "ts": pa.array(rng.integers(1_500_000_000_000_000, 1_800_000_000_000_000, n), pa.timestamp("us", tz="UTC")),
        }
    )
    cts = [parse_type(x) for x in ("int8", "int4", "int4", "text", "timestamptz")]
    for fmt in ("text", "csv", "binary"):
        t0 = time.perf_counter()
        total = sum(len(c) for c in encode_copy(t, cts, fmt))  # type: ignore[arg-type]
        took = time.perf_counter() - t0
        print(f"COPY {fmt:6s}: {n / took:>12,.0f} rows/s  {total / took / 1e6:8.1f} MB/s  ({took:.2f} s)")


if __name__ == "__main__":
    main()
