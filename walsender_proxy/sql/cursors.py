"""Cursors made by DECLARE, with PostgreSQL's positions and FETCH/MOVE directions.

A cursor stands before its first row, on a row, or after its last (PostgreSQL's portal
position). FETCH NEXT/PRIOR/FIRST/LAST/ABSOLUTE/RELATIVE/FORWARD/BACKWARD [ALL] move it as
``DoPortalRunFetch`` does. Rows come from the query's batches as they are needed; a cursor
that may scroll keeps the rows read so far, so that backward and absolute fetches can
return them. ``SCROLL`` keeps them all; a cursor declared with neither SCROLL nor NO SCROLL
keeps them up to :data:`KEEP_BYTES` and then can only go forward (55000, as PostgreSQL
says for a plan it cannot run backward); ``NO SCROLL`` never keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa
from pglast import ast, enums

from decoding.errors import PgError
from walsender_proxy.backend.outcomes import Rows

__all__ = ["KEEP_BYTES", "SqlCursor"]

#: What a cursor declared without SCROLL keeps of the rows it has read, to scroll back.
KEEP_BYTES = 64 << 20
#: PostgreSQL's FETCH ALL (FETCH_ALL, LONG_MAX).
_ALL = 2**63 - 1
_FORWARD_ONLY = PgError("55000", "cursor can only scan forward", hint="Declare it with SCROLL option to enable backward scan.")


@dataclass(slots=True)
class SqlCursor:
    """A cursor made by DECLARE: FETCH and MOVE read and move it; WITH HOLD ones outlive the
    transaction (their rows are materialised at DECLARE)."""

    rows: Rows
    hold: bool
    #: "scroll", "no scroll" or "default" (neither said)
    scroll: str = "default"
    #: Savepoints open at DECLARE: rolling back to one of them drops the cursor.
    depth: int = 0
    #: Declared in the transaction still open: a WITH HOLD cursor outlives it only when
    #: it commits (a rollback closes it, as PostgreSQL's).
    pending: bool = True
    #: A FETCH failed: the portal cannot be run any more (55000), as PostgreSQL's.
    failed: bool = False
    #: 0: before the first row; n: on row n; read + 1 once past the last (1-based).
    pos: int = 0
    #: Rows read from the query so far (kept ones: all of them while ``keeping``).
    read: int = 0
    kept: list[pa.RecordBatch] = field(default_factory=list)
    kept_bytes: int = 0
    keeping: bool = True
    exhausted: bool = False
    #: Streaming (not keeping): the rows of a batch not returned yet, and whether the
    #: position is past the last row.
    carry: pa.RecordBatch | None = None
    past_end: bool = False
    #: Declared FOR UPDATE/SHARE: PostgreSQL's FETCH reads the rows' latest versions (and
    #: skips those the transaction changed since), where this cursor's rows were computed
    #: at DECLARE. ``written``: the transaction has changed rows since.
    locking: bool = False
    written: bool = False

    def __post_init__(self) -> None:
        self.keeping = self.scroll != "no scroll"

    # -- reading the query ---------------------------------------------------------------
    def _load(self, upto: int) -> None:
        """Keeping: read until ``upto`` rows are kept (or the query ends)."""
        while self.read < upto and not self.exhausted:
            batch = next(self.rows.batches, None)
            if batch is None:
                self.exhausted = True
                break
            self.kept.append(batch)
            self.kept_bytes += batch.nbytes
            self.read += batch.num_rows

    def _size(self) -> int:
        self._load(_ALL)
        return self.read

    def _slice(self, first: int, last: int) -> list[pa.RecordBatch]:
        """Kept rows ``first``..``last`` (1-based, inclusive; last < first: none)."""
        if last < first or not self.kept:
            return []
        table = pa.Table.from_batches(self.kept, schema=self.kept[0].schema)
        return table.slice(first - 1, last - first + 1).to_batches()

    def _settle(self) -> None:
        """A cursor declared without SCROLL that has kept more than KEEP_BYTES stops keeping:
        the rows it has read but not returned yet are carried over, and from now on it
        goes forward only."""
        if not (self.keeping and self.scroll == "default" and self.kept_bytes > KEEP_BYTES):
            return
        ahead = self._slice(self.pos + 1, self.read) if self.pos < self.read else []
        self.carry = pa.Table.from_batches(ahead).combine_chunks().to_batches()[0] if ahead else None
        self.past_end = self.pos > self.read
        self.kept, self.kept_bytes, self.keeping = [], 0, False

    def _stream(self, n: int) -> list[pa.RecordBatch]:
        """Streaming: the next ``n`` rows (the position counts them)."""
        out: list[pa.RecordBatch] = []
        got = 0
        if self.past_end:
            return out
        while got < n:
            batch, self.carry = self.carry, None
            if batch is None and not self.exhausted:
                batch = next(self.rows.batches, None)
                self.exhausted = batch is None
            if batch is None:
                break
            if batch.num_rows > n - got:
                self.carry = batch.slice(n - got)
                batch = batch.slice(0, n - got)
            out.append(batch)
            got += batch.num_rows
        self.pos += got
        if got < n:
            self.past_end = True
            self.pos += 1
        return out

    def _forward(self, n: int) -> list[pa.RecordBatch]:
        """The next ``n`` rows after the position (PostgreSQL's forward run)."""
        if n <= 0:
            return []
        if not self.keeping:
            return self._stream(n)
        start = self.pos + 1
        self._load(start + n - 1 if n < _ALL else _ALL)
        end = min(self.read, start + n - 1)
        out = self._slice(start, end)
        got = max(0, end - start + 1)
        self.pos = self.pos + got if got == n else self.read + 1
        return out

    def _backward(self, n: int) -> list[pa.RecordBatch]:
        """The ``n`` rows before the position, nearest first."""
        if n <= 0:
            return []
        if not self.keeping:
            raise _FORWARD_ONLY
        if self.pos > self.read:
            self._size()
            self.pos = self.read + 1
        first = max(1, self.pos - n)
        got = max(0, self.pos - first)
        rows = self._slice(first, self.pos - 1)
        self.pos = self.pos - got if got == n else 0
        if not rows:
            return []
        return pa.Table.from_batches(rows).take(pa.array(range(got - 1, -1, -1))).to_batches()

    def _absolute(self, n: int) -> list[pa.RecordBatch]:
        if not self.keeping:
            if n <= self.pos or n < 0:
                raise _FORWARD_ONLY
            self._stream(n - self.pos - 1)
            return self._stream(1)
        if n == 0:
            self.pos = 0
            return []
        if n > 0:
            self._load(n)
            if n > self.read:
                self.pos = self.read + 1
                return []
            self.pos = n
            return self._slice(n, n)
        size = self._size()
        if -n > size:
            self.pos = 0
            return []
        self.pos = size + 1 + n
        return self._slice(self.pos, self.pos)

    def close(self) -> None:
        """Give the query's result back to DuckDB (an open one blocks the connection)."""
        close = getattr(self.rows.batches, "close", None)
        if close is not None:
            close()
        self.exhausted = True

    def detach(self) -> None:
        """Read the rest of the query into memory: its DuckDB result is given back, so that
        the session's other statements can run while this cursor stays open."""
        if self.exhausted:
            return
        rest = list(self.rows.batches)
        self.exhausted = True
        if self.keeping:
            for b in rest:
                self.kept.append(b)
                self.kept_bytes += b.nbytes
                self.read += b.num_rows
            self.rows = Rows(self.rows.columns, iter(()), self.rows.verb, self.rows.fixed_tag)
        else:
            self.rows = Rows(self.rows.columns, iter(rest), self.rows.verb, self.rows.fixed_tag)
            self.exhausted = False

    # -- FETCH / MOVE --------------------------------------------------------------------
    def fetch(self, node: ast.FetchStmt) -> tuple[list[pa.RecordBatch], int]:
        """The rows FETCH returns (MOVE: the rows it passes over), and their count."""
        D = enums.FetchDirection
        direction, count = node.direction, node.howMany
        if direction in (D.FETCH_FORWARD, D.FETCH_BACKWARD):
            backward = direction == D.FETCH_BACKWARD
            if count < 0:
                backward, count = not backward, -count
            if count == 0:  # FETCH 0 / BACKWARD 0: the current row again
                return self._current(node)
            if backward and self.scroll == "no scroll":
                raise _FORWARD_ONLY
            out = self._backward(count) if backward else self._forward(count)
        elif direction == D.FETCH_ABSOLUTE:
            if self.scroll == "no scroll" and (count < 0 or count < self.pos or (count == self.pos and count > 0)):
                raise _FORWARD_ONLY
            out = self._absolute(count)
        else:  # RELATIVE: the count'th row from the current one
            if count == 0:
                return self._current(node)
            if count < 0 and self.scroll == "no scroll":
                raise _FORWARD_ONLY
            target = self.pos + count
            out = self._absolute(max(target, 0))
        self._settle()
        n = sum(b.num_rows for b in out)
        return out, n

    def _current(self, node: ast.FetchStmt) -> tuple[list[pa.RecordBatch], int]:
        if self.scroll == "no scroll" and self.pos > 0:
            raise _FORWARD_ONLY
        if self.keeping and 1 <= self.pos <= self.read:
            rows = self._slice(self.pos, self.pos)
            return rows, sum(b.num_rows for b in rows)
        if not self.keeping and self.pos > 0 and not self.past_end:
            raise _FORWARD_ONLY
        return [], 0
