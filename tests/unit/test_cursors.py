"""SqlCursor's positions over a stream of batches, without a server: what a cursor keeps to
scroll back, and how one declared without SCROLL turns forward-only past KEEP_BYTES."""

from __future__ import annotations

import pglast
import pyarrow as pa
import pytest

from decoding.errors import PgError
from decoding.pgtypes import parse_type
from walsender_proxy.backend.outcomes import Column, Rows
from walsender_proxy.sql import cursors
from walsender_proxy.sql.cursors import SqlCursor


def _cursor(n: int, scroll: str, batch: int = 3) -> SqlCursor:
    values = list(range(1, n + 1))
    batches = [pa.record_batch({"i": values[k : k + batch]}) for k in range(0, n, batch)]
    return SqlCursor(Rows([Column("i", parse_type("int4"))], iter(batches)), hold=False, scroll=scroll)


def _fetch(cur: SqlCursor, sql: str) -> list[int]:
    node = pglast.parse_sql(sql)[0].stmt
    batches, n = cur.fetch(node)
    out = [v for b in batches for v in b.column(0).to_pylist()]
    assert len(out) == n
    return out


def test_scroll_cursor_moves_as_postgresql() -> None:
    cur = _cursor(10, "scroll")
    assert _fetch(cur, "FETCH 4 FROM c") == [1, 2, 3, 4]
    assert _fetch(cur, "FETCH BACKWARD 2 FROM c") == [3, 2]
    assert _fetch(cur, "FETCH LAST FROM c") == [10]
    assert _fetch(cur, "FETCH NEXT FROM c") == []
    assert _fetch(cur, "FETCH PRIOR FROM c") == [10]
    assert _fetch(cur, "FETCH ABSOLUTE -3 FROM c") == [8]
    assert _fetch(cur, "FETCH RELATIVE -20 FROM c") == []
    assert _fetch(cur, "FETCH NEXT FROM c") == [1]


def test_no_scroll_cursor_goes_forward_only() -> None:
    cur = _cursor(10, "no scroll")
    assert _fetch(cur, "FETCH 2 FROM c") == [1, 2]
    assert _fetch(cur, "FETCH ABSOLUTE 5 FROM c") == [5]
    with pytest.raises(PgError) as e:
        _fetch(cur, "FETCH PRIOR FROM c")
    assert e.value.sqlstate == "55000"
    assert _fetch(cur, "FETCH ALL FROM c") == [6, 7, 8, 9, 10]


def test_default_cursor_stops_keeping_past_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cursors, "KEEP_BYTES", 1)
    cur = _cursor(10, "default", batch=4)
    assert _fetch(cur, "FETCH 2 FROM c") == [1, 2]  # (a batch of 4 read: over budget)
    assert _fetch(cur, "FETCH 3 FROM c") == [3, 4, 5]  # the rows read ahead are not lost
    with pytest.raises(PgError):
        _fetch(cur, "FETCH BACKWARD 1 FROM c")
    assert _fetch(cur, "FETCH ALL FROM c") == [6, 7, 8, 9, 10]
    assert _fetch(cur, "FETCH NEXT FROM c") == []


def test_detached_cursor_keeps_its_place() -> None:
    for scroll in ("scroll", "no scroll", "default"):
        cur = _cursor(7, scroll)
        assert _fetch(cur, "FETCH 2 FROM c") == [1, 2]
        cur.detach()
        assert _fetch(cur, "FETCH 3 FROM c") == [3, 4, 5], scroll
        assert _fetch(cur, "FETCH ALL FROM c") == [6, 7], scroll
