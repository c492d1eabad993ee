"""Who still needs old log positions, old snapshots or old catalog versions.

Slots, exported snapshots, open transactions and running reads each *hold* an LSN (the log
must keep everything from there), a CSN (table files must still answer a read at it) and/or
a catalog CSN (the catalog versions from the one of that CSN on must stay: a slot decodes
each transaction with the catalog it was written under, so it holds the catalog of the
oldest transaction it may still send — PostgreSQL's ``catalog_xmin``). The log is truncated
below the smallest held LSN, table files go only when no held CSN needs them, and catalog
versions only when no held CSN or catalog CSN needs them. A catalog hold keeps no table
file: decoding reads rows from the log and its changesets, never from the table store.
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass
from pathlib import Path


@dataclass(slots=True)
class Hold:
    """One holder's claim; ``update`` moves it (slots advance), ``release`` ends it."""

    registry: HoldRegistry
    key: int
    name: str
    lsn: int | None
    csn: int | None
    catalog_csn: int | None = None

    def update(
        self, *, lsn: int | None = None, csn: int | None = None, catalog_csn: int | None = None
    ) -> None:
        with self.registry._lock:
            if lsn is not None:
                self.lsn = lsn
            if csn is not None:
                self.csn = csn
            if catalog_csn is not None:
                self.catalog_csn = catalog_csn

    def release(self) -> None:
        self.registry._release(self.key)

    def __enter__(self) -> Hold:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class HoldRegistry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holds: dict[int, Hold] = {}
        self._keys = itertools.count(1)

    def hold(
        self, name: str, *, lsn: int | None = None, csn: int | None = None,
        catalog_csn: int | None = None,
    ) -> Hold:  # fmt: skip
        with self._lock:
            h = Hold(self, next(self._keys), name, lsn, csn, catalog_csn)
            self._holds[h.key] = h
            return h

    def _release(self, key: int) -> None:
        with self._lock:
            self._holds.pop(key, None)

    def oldest_lsn(self) -> int | None:
        with self._lock:
            return min((h.lsn for h in self._holds.values() if h.lsn is not None), default=None)

    def oldest_csn(self) -> int | None:
        """The oldest snapshot a holder reads table files at."""
        with self._lock:
            return min((h.csn for h in self._holds.values() if h.csn is not None), default=None)

    def oldest_catalog_csn(self) -> int | None:
        """The oldest catalog a holder needs: a reader's snapshot, or a decoder's hold."""
        with self._lock:
            return min(
                (c for h in self._holds.values() for c in (h.csn, h.catalog_csn) if c is not None),
                default=None,
            )

    def live_keys(self) -> frozenset[int]:
        """The holds that may be reading table files now (those holding a CSN)."""
        with self._lock:
            return frozenset(k for k, h in self._holds.items() if h.csn is not None)

    def any_alive(self, keys: frozenset[int]) -> bool:
        with self._lock:
            return any(k in self._holds for k in keys)

    def describe(self) -> list[tuple[str, int | None, int | None, int | None]]:
        with self._lock:
            return [(h.name, h.lsn, h.csn, h.catalog_csn) for h in self._holds.values()]


def hold_saved_slots(registry: HoldRegistry, slots_dir: Path) -> dict[str, Hold]:
    """Hold what the slots saved in ``slots_dir`` need, by slot name, as the lake opens.

    Whoever opens the data directory — the server, or a Spark job on a stopped proxy's
    directory (``ingest -D``, ``compact -D``, which collect garbage) — must not truncate
    the log or drop catalog versions under a slot it knows nothing about, and the lake's
    background work may start before the server has loaded its slots: PostgreSQL too
    restores its slots at start-up before a checkpoint may remove WAL. Reads only the
    fields that say what is held (the slot file is :mod:`walsender_proxy.replication.slots`'s);
    a temporary slot does not survive a restart and holds nothing."""
    held: dict[str, Hold] = {}
    for p in sorted(slots_dir.glob("*.json")) if slots_dir.is_dir() else ():
        try:
            d = json.loads(p.read_text())
            if d.get("temporary"):
                continue
            name, lsn = str(d["name"]), int(d["restart_lsn"])
            catalog = int(d.get("catalog_csn", 0))  # (0 in slots saved before it existed)
        except (OSError, ValueError, KeyError, TypeError):
            continue  # (the slot store refuses it when the server loads its slots)
        held[name] = registry.hold(f"slot {name}", lsn=lsn, catalog_csn=catalog)
    return held
