"""Stored generated columns computed on every write, as PostgreSQL's
``ExecComputeStoredGenerated`` computes them for each new row version before its
constraints are checked: INSERT, UPDATE, COPY, ON CONFLICT, a streamed insert, a Spark
changeset, a cascading foreign key — whatever reaches ``Transaction._insert``,
``_insert_streamed`` or ``update_rows``. Whatever value a writer put in such a column is
replaced (the SQL layer refuses one given by a statement, 428C9).

A column's expression is kept as a DuckDB expression the SQL layer translated from
PostgreSQL's when the column was made (:class:`decoding.catalog.Generation`), over the
row's columns named by their physical names, already of the column's type; the only
errors it can raise are an integer overflow and a division by zero (``cooked_exprs.duck``'s
``raising`` forms), reported as PostgreSQL reports them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

import pyarrow as pa

from decoding.catalog import CatalogOp, Column, Generation, Table, fill_marks
from walsender_proxy.lake.errors import LakeError

if TYPE_CHECKING:
    from walsender_proxy.lake.tx_services import OpenTransaction

_OVERFLOW = re.compile(r"Overflow in (?:addition|subtraction|multiplication) of (INT16|INT32|INT64)")
_NARROWING = re.compile(r"out of range for the destination type (INT16|INT32|INT64)")
#: DuckDB's MIN / -1 names the dividend, the smallest value of its type.
_DIVISION_OVERFLOW = re.compile(r"Overflow in division of (-[0-9]+) / -1")
_MINIMA = {"-32768": "INT16", "-2147483648": "INT32", "-9223372036854775808": "INT64"}
_RANGE_ERRORS = {"INT16": "smallint out of range", "INT32": "integer out of range", "INT64": "bigint out of range"}


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def columns(t: Table) -> list[Column]:
    return [c for c in t.columns if c.generation is not None]


#: A column's values in its storage type (``transaction.conform``).
Conform = Callable[[pa.ChunkedArray, Column], pa.Array | pa.ChunkedArray]


def compute(tx: OpenTransaction, t: Table, rows: pa.Table, conform: Conform) -> pa.Table:
    """``rows`` (the columns under their physical names, ``_rid`` or not) with each
    generated column of ``t`` computed from the others."""
    gen = columns(t)
    if not gen or rows.num_rows == 0:
        return rows
    physical = {c.attnum: _quoted(c.physical) for c in t.columns}
    exprs = []
    for c in gen:
        assert c.generation is not None
        exprs.append(f"({fill_marks(c.generation.duck, physical)}) AS {_quoted(c.physical)}")
    cur = tx.lake.store.cursor()
    try:
        cur.register("_wpx_gen_rows", rows)
        got = cur.sql(f"SELECT {', '.join(exprs)} FROM _wpx_gen_rows").to_arrow_table()
    except Exception as e:
        raise _evaluation_error(e) from None
    finally:
        cur.close()
    for c in gen:
        i = rows.schema.get_field_index(c.physical)
        value = conform(got.column(c.physical), c)
        field = pa.field(c.physical, value.type)
        rows = rows.set_column(i, field, value) if i >= 0 else rows.append_column(field, value)
    return rows


def _evaluation_error(e: Exception) -> LakeError:
    text = str(e)
    m = _OVERFLOW.search(text) or _NARROWING.search(text)
    if m is not None:
        return LakeError("22003", _RANGE_ERRORS[m.group(1)])
    if "Division by zero" in text:
        return LakeError("22012", "division by zero")
    m = _DIVISION_OVERFLOW.search(text)
    if m is not None and m.group(1) in _MINIMA:
        return LakeError("22003", _RANGE_ERRORS[_MINIMA[m.group(1)]])
    return LakeError("XX000", f"generated column evaluation failed: {text.splitlines()[0]}")


def changed_with(t: Table, changed: frozenset[str] | None) -> frozenset[str] | None:
    """The columns an UPDATE assigning ``changed`` changes, the generated columns that
    read one of them included (None: any)."""
    if changed is None or not columns(t):
        return changed
    attnums = {c.attnum for c in t.columns if c.name in changed}
    more = {c.name for c in columns(t) if c.generation is not None and attnums & set(c.generation.attnums)}
    return changed | more


def set_generation(
    t: Table, name: str, generation: Generation | None, alloc: Iterable[int] | None = None
) -> list[CatalogOp]:
    """The catalog op giving column ``name`` of ``t`` its generation expression (a new
    pg_attrdef OID from ``alloc``), or taking it away (None: ALTER COLUMN … DROP
    EXPRESSION, the column keeping its values)."""
    col = t.column(name)
    if col is None:
        raise LakeError("42703", f'column "{name}" of relation "{t.name}" does not exist')
    if generation is not None and alloc is not None:
        generation = replace(generation, oid=next(iter(alloc)))
    new = replace(col, generation=generation)
    t2 = replace(t, columns=tuple(new if c is col else c for c in t.columns))
    return [{"op": "put_table", "table": t2.to_json()}]
