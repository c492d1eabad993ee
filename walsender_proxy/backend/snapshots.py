"""Exported snapshots: ``pg_export_snapshot()`` and ``CREATE_REPLICATION_SLOT … EXPORT_SNAPSHOT``
name a CSN that any session may import with ``SET TRANSACTION SNAPSHOT``."""

from __future__ import annotations

import itertools
import threading
from typing import TYPE_CHECKING

from decoding.errors import PgError

if TYPE_CHECKING:
    from walsender_proxy.lake import Lake
    from walsender_proxy.lake.retention import Hold


class SnapshotRegistry:
    """``pg_export_snapshot()`` names → CSN. A CSN snapshot is one number, so any session
    can import it; it stays importable until the exporting transaction ends."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        self._lock = threading.Lock()
        self._by_name: dict[str, tuple[int, Hold, object]] = {}
        self._seq = itertools.count(1)

    def export(self, csn: int, owner: object, pid: int) -> str:
        name = f"{pid:08X}-{csn:08X}-{next(self._seq)}"
        hold = self.lake.holds.hold(f"exported snapshot {name}", csn=csn)
        with self._lock:
            self._by_name[name] = (csn, hold, owner)
        return name

    def lookup(self, name: str) -> int:
        with self._lock:
            got = self._by_name.get(name)
        if got is None:
            raise PgError("22023", f'invalid snapshot identifier: "{name}"')
        return got[0]

    def release(self, owner: object) -> None:
        with self._lock:
            for name in [n for n, (_, _, o) in self._by_name.items() if o is owner]:
                _, hold, _ = self._by_name.pop(name)
                hold.release()
