"""Shared fixtures: a real PostgreSQL 15 per test session (the reference and, later, the
subscriber), started by the tests themselves."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.pgcluster import PgCluster


@pytest.fixture(scope="session")
def pg15() -> Iterator[PgCluster]:
    with PgCluster() as pg:
        yield pg
