"""The pieces a walsender process runs on: the log seen from another process, the catalog
followed from the log, the control channel."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from decoding import records as R
from decoding.catalog import CatalogHistory
from decoding.catalog_follower import CatalogFollower
from decoding.changelog import ChangeLog
from decoding.logview import FlushBeacon, LogView
from decoding.reorder import ReorderBuffer
from walsender_proxy.replication.sender_channel import Channel, ChannelClosed


@pytest.fixture
def log_and_view(tmp_path: Path):  # type: ignore[no-untyped-def]
    log = ChangeLog(tmp_path / "log", segment_size=4096, fsync=False)
    log.beacon = FlushBeacon(tmp_path / "flushed.lsn", log.flushed_lsn)
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK)
    log.beacon.follow(wake_w)
    view = LogView(tmp_path / "log", tmp_path / "flushed.lsn", wake_r)
    yield log, view
    view.close()
    log.close()
    os.close(wake_r)
    os.close(wake_w)


def _commit(log: ChangeLog, xid: int, csn: int) -> int:
    log.append(R.Message(xid, 0, True, "p", b"x" * 300))
    _, end = log.append(R.Commit(xid, csn, 0, "", 0))
    log.flush(end)
    return end


def test_a_log_view_reads_what_was_flushed_and_nothing_more(log_and_view) -> None:  # type: ignore[no-untyped-def]
    log, view = log_and_view
    start = log.flushed_lsn
    assert view.flushed_lsn == start
    ends = [_commit(log, xid, xid) for xid in range(1, 30)]  # several 4 KiB segments
    log.append(R.Commit(99, 99, 0, "", 0))  # appended, not flushed: not for readers
    assert view.flushed_lsn == ends[-1] == log.flushed_lsn
    assert len(view.segment_starts()) > 1 and view.segment_starts() == log.segment_starts()
    mine = view.reader(start).read(view.flushed_lsn)
    theirs = log.reader(start).read(log.flushed_lsn)
    assert [(e.lsn, e.end_lsn, e.record) for e in mine] == [(e.lsn, e.end_lsn, e.record) for e in theirs]
    assert len(mine) == 2 * 29


def test_a_log_view_reader_follows_commit_by_commit_across_rollovers(log_and_view) -> None:  # type: ignore[no-untyped-def]
    """The reader lists the directory again only when a rollover leaves it at the end of
    the last segment it knew; it never stalls there."""
    log, view = log_and_view
    listings = 0
    list_segments = view.segment_starts

    def counted() -> list[int]:
        nonlocal listings
        listings += 1
        return list_segments()

    view.segment_starts = counted
    rd = view.reader(log.flushed_lsn)
    got = []
    for xid in range(1, 80):
        end = _commit(log, xid, xid)
        entries = rd.read(view.flushed_lsn)
        assert entries and entries[-1].end_lsn == end  # caught up at every commit
        got += [e.record.xid for e in entries if isinstance(e.record, R.Commit)]
    assert got == list(range(1, 80))
    rollovers = len(log.segment_starts()) - 1
    assert rollovers >= 5
    assert listings <= 1 + 2 * rollovers  # not one per read (79 reads)


def test_a_log_view_wakes_at_a_flush_and_at_wake_waiters(log_and_view) -> None:  # type: ignore[no-untyped-def]
    log, view = log_and_view
    beyond = log.flushed_lsn
    got: list[tuple[int, float]] = []

    def wait(stop: object = None) -> None:
        t0 = time.monotonic()
        got.append((view.wait_flushed(beyond, 5.0, stop), time.monotonic() - t0))  # type: ignore[arg-type]

    t = threading.Thread(target=wait)
    t.start()
    time.sleep(0.05)
    end = _commit(log, 1, 1)
    t.join(5)
    assert got[0][0] == end and got[0][1] < 1.0
    # Nothing new, but the stream is asked to stop: the wait ends at once.
    beyond = end
    stopped = threading.Event()
    t = threading.Thread(target=wait, args=(stopped.is_set,))
    t.start()
    time.sleep(0.05)
    stopped.set()
    view.wake_waiters()
    t.join(5)
    assert got[1][0] == end and got[1][1] < 1.0
    # And with neither, it waits out its timeout.
    t0 = time.monotonic()
    assert view.wait_flushed(end, 0.1) == end
    assert time.monotonic() - t0 >= 0.1


def _ddl(xid: int, *ops: dict) -> R.CatalogChange:
    return R.CatalogChange(xid, 0, tuple(ops))


SCHEMA = {"op": "put_schema", "name": "s1", "oid": 17001}


def test_the_catalog_follower_adds_each_later_ddl_commit_at_its_csn(tmp_path: Path) -> None:
    log = ChangeLog(tmp_path / "log", fsync=False)
    history = CatalogHistory()
    follower = CatalogFollower(CatalogHistory.from_json(history.to_json()))
    rb = ReorderBuffer()
    start = log.flushed_lsn
    log.append(_ddl(5, SCHEMA))
    log.append(R.Commit(5, 10, 0, "", 0))
    log.append(_ddl(6, {"op": "put_schema", "name": "s2", "oid": 17002}))
    log.append(R.Prepare(6, "g", 0))
    log.append(R.Message(7, 0, True, "p", b"no ddl"))
    log.append(R.Commit(7, 11, 0, "", 0))
    log.append(R.CommitPrepared(6, "g", 12, 0))
    log.flush()
    for entry in log.reader(start).read(log.flushed_lsn):
        for ev in rb.feed(entry):
            follower.observe(ev)
    assert "s1" not in follower.at(9).schemas
    assert "s1" in follower.at(10).schemas and "s2" not in follower.at(11).schemas
    assert "s2" in follower.at(12).schemas
    # A DDL commit the starting copy already holds is not added twice.
    again = CatalogFollower(CatalogHistory.from_json(follower.history.to_json()))
    rb = ReorderBuffer()
    for entry in log.reader(start).read(log.flushed_lsn):
        for ev in rb.feed(entry):
            again.observe(ev)
    assert again.history.to_json() == follower.history.to_json()
    log.close()


def test_the_channel_carries_messages_and_a_socket() -> None:
    a, b = socket.socketpair()
    left, right = Channel(a), Channel(b)
    conn_a, conn_b = socket.socketpair()
    big = {"t": "start", "catalog": "x" * 300_000}
    sender = threading.Thread(target=left.send, args=(big, conn_a.fileno()))
    sender.start()
    msg, fds = right.recv()
    sender.join()
    assert msg == big and len(fds) == 1
    passed = socket.socket(fileno=fds[0])
    passed.sendall(b"through the passed socket")
    assert conn_b.recv(100) == b"through the passed socket"
    left.send({"t": "pos", "n": 1})
    left.send({"t": "end"})
    assert right.recv()[0] == {"t": "pos", "n": 1} and right.recv()[0] == {"t": "end"}
    a.close()
    with pytest.raises(ChannelClosed):
        right.recv()
    for s in (b, conn_a, conn_b, passed):
        s.close()


def test_a_follower_gone_wrong_never_stops_the_log(log_and_view) -> None:  # type: ignore[no-untyped-def]
    """A flush publishes its LSN while the server lets followers come and go; a publish
    that fails must not leave the log's group commit stuck (a flush once raised EBADF from
    a follower's closed pipe, and every later commit waited forever)."""
    log, view = log_and_view
    r, w = os.pipe2(os.O_NONBLOCK)
    log.beacon.follow(w)
    os.close(w)  # gone without unfollow
    os.close(r)
    errors: list[BaseException] = []

    def churn() -> None:
        try:
            for _ in range(300):
                r2, w2 = os.pipe2(os.O_NONBLOCK)
                log.beacon.follow(w2)
                log.beacon.unfollow(w2)
                os.close(w2)
                os.close(r2)
        except BaseException as e:
            errors.append(e)

    t = threading.Thread(target=churn)
    t.start()
    ends = [_commit(log, xid, xid) for xid in range(1, 200)]
    t.join(10)
    assert not errors
    assert view.flushed_lsn == ends[-1] == log.flushed_lsn
    log.beacon.close()
    assert _commit(log, 500, 500) > ends[-1]  # a closed beacon (server stopping) is no error
