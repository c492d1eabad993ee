"""The CLI's server moves its start-up objects out of the cyclic collector's reach once it
listens (``Server(freeze_startup_objects=True)``), so its full collections walk only what
sessions made since; servers started inside another process (the tests') leave it alone."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

from tests.proxy import free_port
from walsender_proxy.lake import Lake, LakeSettings
from walsender_proxy.server.context import ServerContext, ServerSettings
from walsender_proxy.server.server import Server


def frozen_while_listening(tmp_path: Path, freeze: bool) -> int:
    lake = Lake(tmp_path / "d", LakeSettings(fsync=False))
    server = Server(ServerContext(lake, ServerSettings(port=free_port())), freeze_startup_objects=freeze)

    async def run() -> int:
        await server.start()
        try:
            return gc.get_freeze_count()
        finally:
            await server.stop()

    try:
        return asyncio.run(run())
    finally:
        gc.unfreeze()


def test_the_cli_server_freezes_what_it_started_with(tmp_path: Path) -> None:
    assert frozen_while_listening(tmp_path, True) > 10_000  # modules, catalog tables, the lake


def test_an_embedded_server_leaves_the_collector_alone(tmp_path: Path) -> None:
    assert frozen_while_listening(tmp_path, False) == 0
