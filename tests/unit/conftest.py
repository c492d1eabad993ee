"""Fixtures shared by the unit tests: lakes in the test's own directory."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.lakeutil import FAST, MakeLake
from walsender_proxy.lake import Lake, LakeSettings


@pytest.fixture
def make_lake(tmp_path: Path) -> Iterator[MakeLake]:
    """``make_lake(settings, columns=…, rows=…, path="d")``: a lake under the test's
    directory, closed at the test's end; with ``columns``, a table ``t`` keyed on ``id``
    (``rows`` inserted in a second transaction)."""
    opened: list[Lake] = []

    def make(
        settings: LakeSettings = FAST,
        columns: Sequence[tuple[Any, ...]] | None = None,
        rows: Iterable[dict[str, Any]] = (),
        path: str = "d",
    ) -> Lake:
        lk = Lake(tmp_path / path, settings)
        opened.append(lk)
        if columns:
            with lk.begin() as tx:
                tx.create_table("t", list(columns), primary_key=["id"])
        rows = list(rows)
        if rows:
            with lk.begin() as tx:
                tx.insert("t", rows)
        return lk

    yield make
    for lk in opened:
        lk.close()
