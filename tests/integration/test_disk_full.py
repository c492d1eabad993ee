"""A full disk, as PostgreSQL meets it: writes are refused with 53100 and nothing that was
acknowledged is lost, reads go on, and writes resume once space is freed — no restart.

The proxy's data directory is on a real 64 MB tmpfs that the test fills (mounting one needs
root). Every statement a client was told succeeded is counted, and compared with what the
proxy shows before and after a restart.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

import decoding.changelog as changelog
from tests.proxy import ProxyProcess, ProxyServer
from walsender_proxy.lake import LakeSettings

_REFUSED = re.compile(r'could not (extend file|write to file) "[^"]+": No space left on device|could not write to temporary file: No space left on device')


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 MB tmpfs of the test's own."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "disk"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(disk: Path, leave: int) -> Path:
    """A ballast file that leaves at most ``leave`` bytes free. The proxy may claim space
    on the same disk meanwhile (its log preallocates ahead), so the ballast is written in
    chunks, stops at a full disk, and then gives back what would leave less than ``leave``."""
    ballast = disk / "ballast"
    want = max(shutil.disk_usage(disk).free - leave, 0)
    chunk = b"\1" * (1 << 20)
    with open(ballast, "wb", buffering=0) as f:
        written = 0
        try:
            while written < want:
                written += f.write(chunk[: min(len(chunk), want - written)]) or 0
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
    free = shutil.disk_usage(disk).free
    if free < leave:
        os.truncate(ballast, max(ballast.stat().st_size - (leave - free), 0))
    return ballast


def _assert_disk_full(e: psycopg.Error) -> None:
    assert e.sqlstate == "53100", (e.sqlstate, str(e))
    assert _REFUSED.fullmatch(e.diag.message_primary or ""), e.diag.message_primary
    assert e.diag.message_hint == "Check free disk space."


def _count(conn: psycopg.Connection[object]) -> int:
    row = conn.execute("SELECT count(*) FROM t").fetchone()
    assert row is not None
    return int(row[0])


def test_a_full_disk_refuses_writes_serves_reads_and_recovers_without_a_restart(small_disk: Path) -> None:
    proxy = ProxyProcess(small_disk / "data")
    with proxy, psycopg.connect(proxy.dsn(), autocommit=True) as conn:
        conn.execute("CREATE TABLE t (id int PRIMARY KEY, v text)")
        ballast = _fill(small_disk, 6 << 20)
        acked, refused, i = 0, 0, 0
        # Statements by the extended protocol (psycopg binds parameters), each committed at
        # its Sync: 100 rows, then single rows, until the disk refuses them several times.
        while refused < 5 and i < 2000:
            n = 100 if i < 1000 else 1
            try:
                conn.execute(
                    "INSERT INTO t SELECT g, repeat('x', 1000) FROM generate_series(%s::int, %s::int) AS g",
                    (i * 100, i * 100 + n - 1),
                )
                acked += n
            except psycopg.Error as e:
                _assert_disk_full(e)
                refused += 1
            i += 1
        assert refused == 5 and acked > 0
        assert _count(conn) == acked  # reads are served on a full disk
        # A big statement (its rows go to a file beside the log) is refused the same way.
        with pytest.raises(psycopg.Error) as ei:
            conn.execute("INSERT INTO t SELECT g, repeat('y', 1000) FROM generate_series(1000000, 1100000) AS g")
        _assert_disk_full(ei.value)
        # So are COPY and the simple protocol; a refused statement fails its block.
        with pytest.raises(psycopg.Error) as ei, conn.cursor().copy("COPY t FROM STDIN") as cp:
            cp.write("".join(f"{k}\t{'z' * 1000}\n" for k in range(2_000_000, 2_010_000)))
        _assert_disk_full(ei.value)
        conn.execute("BEGIN")
        with pytest.raises(psycopg.Error) as ei:
            conn.execute("INSERT INTO t SELECT g, repeat('w', 1000) FROM generate_series(3000000, 3010000) AS g", prepare=False)
        _assert_disk_full(ei.value)
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.execute("ROLLBACK")
        assert _count(conn) == acked

        ballast.unlink()  # space is back: writes go on, with no restart
        conn.execute("INSERT INTO t SELECT g, 'after' FROM generate_series(-1000, -1) AS g")
        acked += 1000
        assert _count(conn) == acked
    proxy.start()  # (a restart: the data directory as the full disk left it)
    try:
        with psycopg.connect(proxy.dsn(), autocommit=True) as conn:
            assert _count(conn) == acked
    finally:
        proxy.stop()
    assert "Traceback" not in proxy.output, proxy.output[-3000:]


def test_a_commit_that_fails_at_sync_reaches_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """The implicit commit of an extended-protocol statement happens at Sync, after its
    CommandComplete: a failure there is an ErrorResponse, never silence. The failure is the
    kernel's answer to the log's fdatasync (EIO), which no test can provoke for real."""
    with ProxyServer(lake_settings=LakeSettings(fsync=True)) as proxy, psycopg.connect(proxy.dsn(), autocommit=True) as conn:
        conn.execute("CREATE TABLE s (id int)")

        def failing(fd: int) -> None:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

        monkeypatch.setattr(changelog.os, "fdatasync", failing)
        with pytest.raises(psycopg.Error) as ei:
            conn.execute("INSERT INTO s VALUES (%s)", (1,))
        assert ei.value.sqlstate == "58030"
        assert "could not fdatasync file" in (ei.value.diag.message_primary or "")
        monkeypatch.undo()
        assert conn.execute("SELECT count(*) FROM s").fetchone() == (0,)
