"""Every test in this folder starts real components (PostgreSQL, psql, Spark, a proxy in
a process of its own, outside clients): all are marked ``integration``, so
``pytest -m "not integration"`` runs with none of them."""

from __future__ import annotations

from pathlib import Path

import pytest

_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.integration)
