"""Shared fixtures: a real PostgreSQL 15 per test session (the reference and, later, the
subscriber), started by the tests themselves."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.pgcluster import PgCluster
from tests.proxy import ProxyProcess, ProxyServer


@pytest.fixture(scope="session")
def pg15() -> Iterator[PgCluster]:
    pg = PgCluster().start()
    try:
        yield pg
    finally:
        pg.stop(remove_later=True)


@pytest.fixture(scope="module")
def pg15_subscriber() -> Iterator[PgCluster]:
    """A PostgreSQL 15 for one module's subscribers, with prepared transactions on: a
    subscription ``WITH (two_phase = true)`` prepares there what it applies."""
    pg = PgCluster({"max_prepared_transactions": "10"}).start()
    try:
        yield pg
    finally:
        pg.stop(remove_later=True)


@pytest.fixture(scope="module")
def proxy() -> Iterator[ProxyServer]:
    """A proxy for the tests of one module, on a free port over a fresh data directory."""
    with ProxyServer() as p:
        yield p


@pytest.fixture(scope="module")
def proxy_process() -> Iterator[ProxyProcess]:
    """A proxy in a process of its own, for the tests of one module."""
    with ProxyProcess() as p:
        yield p
