"""The change log: framing, LSNs, segments, group commit, and recovery of a damaged tail."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pyarrow as pa
import pytest

from decoding import records as R
from decoding.changelog import (
    FRAME_OVERHEAD,
    RESERVE_STEP,
    ChangeLog,
    LogCorruptError,
    LogFailedError,
    LogRemovedError,
)
from decoding.errors import PgError
from decoding.lsn import FIRST_LSN, format_lsn, parse_lsn


def msg(i: int, size: int = 10) -> R.Message:
    return R.Message(i, 0, True, "p", b"x" * size)


def test_lsn_text_form_matches_postgresql() -> None:
    assert format_lsn(0x16_B374_D848) == "16/B374D848"
    assert format_lsn(0) == "0/0"
    assert parse_lsn("16/B374D848") == 0x16_B374_D848
    for bad in ("", "1", "x/1", "1/", "123456789/0"):
        with pytest.raises(ValueError, match="pg_lsn"):
            parse_lsn(bad)


def test_lsns_are_byte_positions_and_survive_reopen(tmp_path: Path) -> None:
    log = ChangeLog(tmp_path, fsync=False)
    a = log.append(msg(1))
    b = log.append(msg(2, 100))
    assert a[0] == FIRST_LSN and b[0] == a[1]
    assert b[1] - b[0] == len(ChangeLog.frame(msg(2, 100)))
    log.close()
    log = ChangeLog(tmp_path, fsync=False)
    assert [(e.lsn, e.end_lsn, e.record) for e in log.read()] == [
        (a[0], a[1], msg(1)),
        (b[0], b[1], msg(2, 100)),
    ]
    assert log.insert_lsn == b[1]
    assert [e.record.xid for e in log.read(b[0])] == [2]
    assert [e.record.xid for e in log.read(a[0] + 1)] == [2]  # mid-record start: next one


def test_segments_roll_over_and_truncate(tmp_path: Path) -> None:
    log = ChangeLog(tmp_path, segment_size=1000, fsync=False)
    ends = [log.append(msg(i, 200))[1] for i in range(1, 21)]
    segs = sorted(tmp_path.glob("*.wal"))
    assert len(segs) > 3
    assert [e.record.xid for e in log.read()] == list(range(1, 21))
    removed = log.truncate_before(ends[10])
    assert removed and log.oldest_lsn <= ends[10]
    with pytest.raises(LogRemovedError, match="already been removed"):
        list(log.read(FIRST_LSN))
    assert [e.record.xid for e in log.read(log.oldest_lsn)][-1] == 20


@pytest.mark.parametrize("damage", ["truncate", "bitflip", "garbage"])
def test_damaged_tail_is_cut_back_to_last_whole_record(tmp_path: Path, damage: str) -> None:
    log = ChangeLog(tmp_path, fsync=False)
    for i in range(1, 6):
        log.append(msg(i, 50))
    last_good = log.append(msg(6, 50))[0]
    log.close()
    seg = next(tmp_path.glob("*.wal"))
    data = bytearray(seg.read_bytes())
    if damage == "truncate":
        data = data[:-7]
    elif damage == "bitflip":
        data[-FRAME_OVERHEAD - 3] ^= 0x10
    else:
        data += b"\x00\x10\x00\x00garbage"
    seg.write_bytes(bytes(data))
    log = ChangeLog(tmp_path, fsync=False)
    xids = [e.record.xid for e in log.read()]
    assert xids == ([1, 2, 3, 4, 5, 6] if damage == "garbage" else [1, 2, 3, 4, 5])
    assert log.recovered_bytes_cut > 0
    assert log.insert_lsn == (last_good if damage != "garbage" else log.insert_lsn)
    log.append(msg(7))  # and it goes on from there
    assert [e.record.xid for e in log.read()][-1] == 7


def test_corrupt_sealed_segment_is_an_error_not_silence(tmp_path: Path) -> None:
    log = ChangeLog(tmp_path, segment_size=500, fsync=False)
    for i in range(1, 10):
        log.append(msg(i, 200))
    log.close()
    first = sorted(tmp_path.glob("*.wal"))[0]
    data = bytearray(first.read_bytes())
    data[20] ^= 0xFF
    first.write_bytes(bytes(data))
    log = ChangeLog(tmp_path, segment_size=500, fsync=False)
    with pytest.raises(LogCorruptError, match="corrupt"):
        list(log.read())


def test_group_commit_flushes_concurrent_writers(tmp_path: Path) -> None:
    log = ChangeLog(tmp_path, fsync=True)
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        try:
            for i in range(50):
                _, end = log.append(msg(k * 1000 + i))
                assert log.flush(end) >= end
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert log.flushed_lsn == log.insert_lsn
    assert len(list(log.read())) == 200


def test_length_field_is_covered_by_crc(tmp_path: Path) -> None:
    """A frame whose length word is damaged must not be taken for a shorter, valid one."""
    frame = bytearray(ChangeLog.frame(msg(1, 40)))
    frame[0] -= 4
    (tmp_path / "0000000001000000.wal").write_bytes(bytes(frame))
    log = ChangeLog(tmp_path, fsync=False)
    assert list(log.read()) == []


def test_records_round_trip_every_kind() -> None:
    t = pa.table({"_rid": pa.array([1, 2], pa.int64()), "v": ["a", None]})
    samples: list[R.Record] = [
        R.Change(7, 1, 16384, "U", t, t),
        R.Change(7, 0, 16384, "D", None, t),
        R.Changeset(7, 0, 16384, "I", "0000000001000000-new.parquet", "", 5),
        R.Truncate(7, 0, (16384, 16390), True, False),
        R.Commit(7, 42, 123456, "origin1", 99),
        R.Abort(8),
        R.SubAbort(7, (1, 2, 3)),
        R.Prepare(9, "gid-ü", 5),
        R.CommitPrepared(9, "gid-ü", 43, 6),
        R.RollbackPrepared(10, "g", 7),
        R.CatalogChange(7, 0, ({"op": "drop_table", "oid": 1},)),
        R.Message(0, 0, False, "prefix", b"\x00\xff"),
        R.Frontier(42, 11, 1000, (9, 10), 77),
        R.XactOrigin(7, "origin-ü"),
    ]
    assert {type(s) for s in samples} == set(R.RECORD_CLASSES.values())
    for rec in samples:
        back = R.decode_record(rec.KIND, rec.encode_payload())
        assert back == rec


def test_commit_record_bytes_are_stable() -> None:
    """A byte fixture: the on-disk format is a compatibility promise across versions."""
    frame = ChangeLog.frame(R.Commit(7, 42, 1000, "", 0))
    assert (
        frame.hex()
        == (
            "2d000000"
            "03"  # length 45, kind COMMIT
            "0700000000000000"
            "2a00000000000000"
            "e803000000000000"  # xid, csn, commit_ts
            "00000000"
            "0000000000000000"  # origin "", origin_lsn
            + frame[-4:].hex()
        )
    )
    with pytest.raises(R.RecordFormatError):
        R.decode_record(R.Kind.COMMIT, R.Commit(7, 42, 1000).encode_payload() + b"x")
    with pytest.raises(R.RecordFormatError):
        R.decode_record(99, b"")


def test_reader_follows_the_log_across_segments(tmp_path: Path) -> None:
    log = ChangeLog(tmp_path, segment_size=600, fsync=False)
    first = log.append(msg(1, 100))[0]
    rd = log.reader(first)
    assert [e.record.xid for e in rd.read(log.insert_lsn)] == [1]
    for i in range(2, 12):
        log.append(msg(i, 150))
    assert [e.record.xid for e in rd.read(log.insert_lsn)] == list(range(2, 12))
    assert rd.read(log.insert_lsn) == []
    mid = [e for e in log.read()][5]
    rd2 = log.reader(mid.lsn)
    assert [e.record.xid for e in rd2.read(log.insert_lsn)] == list(range(6, 12))
    end = log.flush()
    assert log.wait_flushed(end - 1, 0.01) == end


def test_reorder_buffer_spills_big_transactions_and_reads_them_back(tmp_path: Path) -> None:
    from decoding.reorder import DecodedTxn, ReorderBuffer

    log = ChangeLog(tmp_path / "wal", fsync=False)
    t = pa.table({"_rid": pa.array(range(1000), pa.int64()), "v": pa.array(["x" * 20] * 1000)})
    for i in range(30):
        log.append(R.Change(7, i % 3, 16384, "I", t, None))
        log.append(R.Change(8, 0, 16384, "I", t.slice(0, 1), None))
    log.append(R.SubAbort(7, (2,)))
    log.append(R.Commit(8, 2, 0))
    log.append(R.Commit(7, 1, 0))
    entries = list(log.read())
    rb0 = ReorderBuffer()
    plain = [ev for e in entries for ev in rb0.feed(e)]
    rb = ReorderBuffer(work_mem=50_000, spill_dir=tmp_path / "spill")
    peak = 0
    spilled: list[DecodedTxn] = []
    for e in entries:
        for ev in rb.feed(e):
            spilled.append(ev)  # type: ignore[arg-type]
        peak = max(peak, rb.memory())
    assert peak <= 50_000 + t.nbytes + 64, peak  # never more than the budget plus one record
    assert [tx.xid for tx in spilled] == [tx.xid for tx in plain] == [8, 7]  # type: ignore[union-attr]
    big = spilled[1]
    assert big.changes.spilled > 0
    got = [(c.subxid, c.new.num_rows) for c in big.changes]  # type: ignore[attr-defined]
    want = [(c.subxid, c.new.num_rows) for c in plain[1].changes]  # type: ignore[union-attr]
    assert got == want and all(s != 2 for s, _ in got) and len(got) == 20
    assert list(big.changes) == list(big.changes)  # re-iterable
    big.changes.close()
    assert not list((tmp_path / "spill").iterdir())


class FullDisk:
    """The kernel's answer on a full disk, at the one call where the log asks for space:
    ``posix_fallocate`` fails with ENOSPC while ``full`` is set (the integration tests fill
    a real tmpfs; this drives the log's side exactly)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import decoding.changelog as changelog

        self.full = False
        real = os.posix_fallocate

        def fallocate(fd: int, offset: int, length: int) -> None:
            if self.full:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            real(fd, offset, length)

        monkeypatch.setattr(changelog.os, "posix_fallocate", fallocate)


def test_a_full_disk_refuses_a_record_before_it_has_an_lsn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    disk = FullDisk(monkeypatch)
    log = ChangeLog(tmp_path, fsync=True)
    log.append(msg(1))
    end = log.insert_lsn
    disk.full = True
    big = msg(2, RESERVE_STEP)  # past what the log claimed ahead
    with pytest.raises(PgError) as ei:
        log.append(big)
    assert (ei.value.sqlstate, ei.value.hint) == ("53100", "Check free disk space.")
    segment = f"{tmp_path.name}/{log.segment_starts()[-1]:016X}.wal"
    assert ei.value.message == f'could not extend file "{segment}": No space left on device'
    assert log.insert_lsn == end and not log.failed
    log.append(msg(3))  # within the space already claimed: still written
    disk.full = False  # space freed: the same record goes in, no restart needed
    b = log.append(big)
    log.flush()
    log.close()
    log = ChangeLog(tmp_path, fsync=True)
    assert [e.record for e in log.read()] == [msg(1), msg(3), big]
    assert b[1] == log.insert_lsn


def test_only_records_that_give_up_use_the_held_back_space(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    disk = FullDisk(monkeypatch)
    log = ChangeLog(tmp_path, fsync=False)
    log.append(msg(1))
    disk.full = True
    with pytest.raises(PgError, match="could not extend file"):
        while True:  # goes on until the claimed space, less what is held back, is used
            log.append(msg(2, 1000))
    abort = R.Abort(7)
    log.append(abort, release=True)  # an abort still fits
    log.flush()
    assert list(log.read())[-1].record == abort


def test_a_segment_that_cannot_be_created_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import decoding.changelog as changelog

    log = ChangeLog(tmp_path, fsync=False, segment_size=4096)
    log.append(msg(1, 3000))
    real_open, refuse = os.open, [True]

    def open_(path: object, flags: int, *a: object) -> int:
        if flags & os.O_CREAT and refuse[0]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_open(path, flags, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(changelog.os, "open", open_)
    end = log.insert_lsn
    with pytest.raises(PgError, match="could not create file") as ei:
        log.append(msg(2, 3000))
    assert ei.value.sqlstate == "53100" and log.insert_lsn == end
    refuse[0] = False
    log.append(msg(3, 3000))
    monkeypatch.undo()
    log.flush()
    log.close()
    log = ChangeLog(tmp_path, fsync=False, segment_size=4096)
    assert [e.record for e in log.read()] == [msg(1, 3000), msg(3, 3000)]
    assert len(log.segment_starts()) == 2


def test_a_failed_write_fails_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import decoding.changelog as changelog

    log = ChangeLog(tmp_path, fsync=False)
    log.append(msg(1))

    def pwrite(fd: int, data: object, pos: int) -> int:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(changelog.os, "pwrite", pwrite)
    with pytest.raises(LogFailedError, match=r'could not write to file ".*": Input/output error'):
        log.flush()
    monkeypatch.undo()
    assert log.failed
    with pytest.raises(LogFailedError):
        log.append(msg(2))
