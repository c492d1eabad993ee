"""Many clients running short read-modify-write transactions at once: the only errors are
serialization failures (40001) and no committed increment is ever lost."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from tests.proxy import ProxyServer
from walsender_proxy.lake import LakeSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from bench_sql_clients import run


def check(clients: int, seconds: float) -> None:
    with ProxyServer(lake_settings=LakeSettings(fsync=False), max_connections=clients + 10) as p:
        r = asyncio.run(run(p.dsn(), clients, seconds))
    assert set(r["errors"]) <= {"40001"}, r  # type: ignore[arg-type]
    assert r["committed"] > 0 and r["lost_updates"] == 0, r


def test_concurrent_clients_quick() -> None:
    check(20, 5)


@pytest.mark.slow
def test_fifty_clients_fifteen_seconds() -> None:
    check(50, 15)
