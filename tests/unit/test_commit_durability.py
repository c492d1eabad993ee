"""A commit's in-memory work overlaps the writeback of its record, yet nobody sees
its rows before they are durable; and a failed fsync is final, as PostgreSQL's PANIC is."""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable

import pytest

import decoding.changelog as changelog
from decoding import records as R
from tests.lakeutil import MakeLake
from walsender_proxy.lake import Lake, LakeError, LakeSettings
from walsender_proxy.lake.transaction import State, Transaction

SETTINGS = LakeSettings(fsync=True, background=False)


@pytest.fixture
def lake(make_lake: MakeLake) -> Lake:
    return make_lake(SETTINGS, columns=[("id", "bigint"), ("v", "text")], rows=[{"id": 1, "v": "old"}])


def rows(lake: Lake) -> list[tuple[int, str]]:
    return sorted((r["id"], r["v"]) for r in lake.read("t").to_pylist())


def wait_until(cond: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 10
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.001)


def hold_fsyncs(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """From now on the log's fdatasync sets the first event and waits for the second."""
    fsyncing, release = threading.Event(), threading.Event()
    real = os.fdatasync

    def slow_fdatasync(fd: int) -> None:
        fsyncing.set()
        release.wait(10)
        real(fd)

    monkeypatch.setattr(changelog.os, "fdatasync", slow_fdatasync)
    return fsyncing, release


def test_rows_of_a_commit_stay_invisible_until_its_fsync_returns(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = lake.begin()
    writer.update("t", {"v": "new"}, {"id": 1})
    writer.insert("t", [{"id": 2, "v": "new"}])
    fsyncing, release = hold_fsyncs(monkeypatch)
    returned = threading.Event()
    committer = threading.Thread(target=lambda: (writer.commit(), returned.set()))
    committer.start()
    try:
        fsyncing.wait(10)
        # The commit's rows are in the store and the key index while the disk works...
        wait_until(lambda: writer.state is State.COMMITTED, "the commit was not applied during its fsync")
        assert not returned.is_set()
        # ...and no reader sees them: not a scan, not a point read through the key index.
        assert rows(lake) == [(1, "old")]
        t = lake.catalog.resolve_table("t", lake.search_path)
        reader = lake.begin()
        known, rid, values, cols = lake.point_read(reader, t, (1,))
        assert not known or dict(zip(cols, values or (), strict=True)).get("v") == "old"
        known, rid, _, _ = lake.point_read(reader, t, (2,))
        assert not known or rid is None
        assert reader.read("t", "id = 2").num_rows == 0
    finally:
        release.set()
        committer.join(10)
    assert returned.is_set()
    assert rows(lake) == [(1, "new"), (2, "new")]


def test_a_failed_fsync_fails_the_commit_and_every_later_write(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_fdatasync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(changelog.os, "fdatasync", failing_fdatasync)
    tx: Transaction = lake.begin()
    tx.insert("t", [{"id": 2, "v": "lost?"}])
    with pytest.raises(LakeError) as ei:
        tx.commit()
    assert ei.value.sqlstate == "58030"
    assert "could not fdatasync file" in ei.value.message
    frontier = lake.frontier
    # The fsync would succeed now, but the pages it failed to write may be gone: the log
    # takes no more writes, and the failed commit never becomes visible.
    monkeypatch.undo()
    assert rows(lake) == [(1, "old")]
    later = lake.begin()
    with pytest.raises(LakeError) as ei:
        later.insert("t", [{"id": 3, "v": "x"}])
        later.commit()
    assert ei.value.sqlstate == "58030"
    later.abort()
    assert lake.frontier == frontier
    assert rows(lake) == [(1, "old")]


def test_a_big_commit_is_applied_only_after_its_fsync(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above SMALL_COMMIT_BYTES the rows join memory after the fsync, as before (applying
    them first held ~25 MB more in the server in S6, for nothing: the fsync is short beside
    such an apply)."""
    writer = lake.begin()
    writer.insert("t", [{"id": i, "v": "x" * 100} for i in range(2, 20_002)])
    assert not writer.is_small
    fsyncing, release = hold_fsyncs(monkeypatch)
    committer = threading.Thread(target=writer.commit)
    committer.start()
    try:
        assert fsyncing.wait(10)
        time.sleep(0.05)
        assert writer.state is State.COMMITTING
    finally:
        release.set()
        committer.join(10)
    assert writer.state is State.COMMITTED
    assert len(rows(lake)) == 20_001


def fill_log(lake: Lake) -> None:
    """Use up the space the log has claimed, to the last few bytes, with the smallest
    records there are (logical messages): the next record of any size is refused."""
    for size in (100_000, 1000, 0):
        with pytest.raises(LakeError, match="could not extend file"):
            for _ in range(10_000):
                lake.log.append(R.Message(0, 0, False, "", b"x" * size))


def test_a_commit_refused_by_a_full_disk_is_rolled_back_and_the_lake_goes_on(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No commit record fits: the committer hears 53100, nothing of the transaction is ever
    visible, its abort reaches the log once there is room, and later commits are seen."""
    from tests.unit.test_changelog import FullDisk

    tx = lake.begin()
    tx.insert("t", [{"id": 2, "v": "x" * 200_000}])  # logged now, within the claimed space
    disk = FullDisk(monkeypatch)
    disk.full = True
    fill_log(lake)
    with pytest.raises(LakeError) as ei:
        tx.commit()
    assert ei.value.sqlstate == "53100" and tx.state is State.ABORTED
    assert rows(lake) == [(1, "old")]
    disk.full = False
    lake._log_noted_aborts()  # (the background work does this every tick)
    aborted = {e.record.xid for e in lake.log.read() if isinstance(e.record, R.Abort)}
    assert tx.xid in aborted
    with lake.begin() as later:
        later.insert("t", [{"id": 3, "v": "z"}])
    assert rows(lake) == [(1, "old"), (3, "z")]


def test_commit_prepared_refused_by_a_full_disk_stays_prepared(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.unit.test_changelog import FullDisk

    tx = lake.begin()
    tx.insert("t", [{"id": 2, "v": "p"}])
    tx.prepare("g1")
    disk = FullDisk(monkeypatch)
    disk.full = True
    fill_log(lake)
    with pytest.raises(LakeError) as ei:
        lake.commit_prepared("g1")
    assert ei.value.sqlstate == "53100"
    assert "g1" in lake.prepared and rows(lake) == [(1, "old")]
    disk.full = False
    lake.commit_prepared("g1")
    assert rows(lake) == [(1, "old"), (2, "p")]
