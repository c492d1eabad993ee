"""Files written so that a crash leaves either the old version or the new one, whole: a
temporary name, fsync, rename, then fsync of the directory that holds the name. One
implementation for the change log's directory, the lake's JSON state files and
``postgresql.auto.conf``."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


def fsync_path(path: Path) -> None:
    """fsync a file or directory by its path."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def removed_on_failure(tmp: Path) -> Iterator[Path]:
    """A file written under a temporary name and renamed when whole: if its writing fails
    (a full disk), it goes at once rather than hold the space until the next start."""
    try:
        yield tmp
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(path: Path, text: str, *, fsync: bool, tmp: Path | None = None) -> None:
    """Replace ``path`` with ``text`` (written as ``tmp``, by default ``path`` with the
    suffix ``.tmp``); with ``fsync``, durably."""
    tmp = tmp or path.with_suffix(".tmp")
    with removed_on_failure(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    if fsync:
        fsync_path(path.parent)
