"""A 1,000,000-row table read at an old and at the newest CSN, with writers running while
the table store folds and checkpoints."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from walsender_proxy.lake import Lake, LakeSettings

N = 1_000_000


def rows(start: int, n: int) -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.table({"id": ids, "b": (ids % 1000).astype(np.int32), "c": pa.array(ids.astype(str))})


@pytest.mark.slow
def test_million_rows_old_and_new_snapshots(tmp_path: Path) -> None:
    with Lake(tmp_path, LakeSettings(background=False)) as lake:
        with lake.begin() as tx:
            tx.create_table(
                "m", [("id", "bigint"), ("b", "int"), ("c", "text")], primary_key=["id"]
            )
        with lake.begin() as tx:
            tx.insert("m", rows(0, N))
        old = lake.frontier
        hold = lake.holds.hold("test", csn=old)
        lake.checkpoint(force=True)
        with lake.begin() as tx:
            assert tx.update("m", {"b": -1}, "id % 100 = 1") == N // 100
        with lake.begin() as tx:
            assert tx.delete("m", "id % 100 = 2") == N // 100

        # A writer keeps committing while fold + checkpoint + GC run.
        done = threading.Event()
        commits: list[int] = []

        def writer() -> None:
            i = 0
            while not done.is_set():
                with lake.begin() as tx:
                    tx.insert("m", rows(10 * N + i, 1))
                commits.append(i)
                i += 1

        th = threading.Thread(target=writer)
        th.start()
        fold_started = len(commits)
        lake.checkpoint(force=True)
        lake.collect_garbage()
        during = len(commits) - fold_started
        done.set()
        th.join()
        assert during > 0, "writers were blocked while folding"

        at_old = lake.read("m", old)
        assert at_old.num_rows == N
        assert pc.sum(at_old.column("b")).as_py() == int(np.sum(np.arange(N) % 1000))
        newest = lake.read("m")
        assert newest.num_rows == N - N // 100 + len(commits)
        assert pc.sum(pc.equal(newest.column("b"), -1)).as_py() == N // 100
        hold.release()
