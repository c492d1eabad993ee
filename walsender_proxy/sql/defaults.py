"""Column defaults where DML uses them, as PostgreSQL 15 does.

PostgreSQL puts a column's cooked default expression wherever a row gets no value for the
column: an INSERT that leaves it out (``INSERT … (a) VALUES``, ``DEFAULT VALUES``, ``INSERT …
SELECT`` of fewer columns, COPY FROM with a column list), the ``DEFAULT`` keyword in VALUES,
``UPDATE … SET c = DEFAULT`` and ``ON CONFLICT DO UPDATE SET c = DEFAULT``; ``ALTER TABLE …
ADD COLUMN … DEFAULT`` gives the rows already there its value. The lake keeps the default
as the text ``pg_get_expr`` prints (:mod:`walsender_proxy.sql.default_exprs`), which is SQL
of the default's value: this module parses it and has it evaluated like any expression of
the statement — once per statement unless it is volatile (``random()``,
``gen_random_uuid()``, ``clock_timestamp()``), then once per row — and the result goes into
the column through the same assignment rules as a value the statement gave.
"""

from __future__ import annotations

import copy
import random
import threading
import uuid
from collections.abc import Collection, Iterable
from dataclasses import replace
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
from pglast import ast, parse_sql

from decoding.catalog import RID, SEQUENCE_MARK, TYPE_MARK, Catalog, Column, Table
from decoding.errors import PgError
from walsender_proxy.lake import Transaction, domains
from walsender_proxy.lake.transaction import conform, null_column_error
from walsender_proxy.sql import default_exprs
from walsender_proxy.sql.column_coercion import coerce_text_columns
from walsender_proxy.sql.pgcatalog_defs import quote_ident
from walsender_proxy.sql.sequences import sequence_for


class Clocks(Protocol):
    query_start: float | None
    xact_start_us: int
    sequences: Any  # (sql.sequences.SessionSequences)


class Evaluator(Protocol):
    """What evaluating a default needs of the engine: its statement rewriting and DuckDB,
    and the session's clocks."""

    ex: Clocks
    lake: Any

    @property
    def date_order(self) -> str: ...

    @property
    def text_out(self) -> Any: ...

    def rewrite(self, sql: str, tx: Transaction) -> str: ...

    def relation(self, sql: str, params: Any) -> Any: ...


_PARSED: dict[str, ast.Node] = {}
_PARSED_LOCK = threading.Lock()


def with_domain_default(col: Column, cat: Catalog) -> Column:
    """The column with the default a write uses: its own, else its domain's (PostgreSQL's
    ``build_column_default`` falls back to the type's default; pg_attrdef stays empty)."""
    if col.default is not None or not col.type.domain:
        return col
    for d in cat.domain_chain(col.type.domain):
        if d.default is not None:
            return replace(col, default=d.default)
    return col


def default_sql(col: Column, cat: Catalog) -> str:
    """The column's default as SQL to run: its sequence (if it names one) and its enum type
    (if it names that) by their qualified names now."""
    d = col.default
    assert d is not None
    if TYPE_MARK in d.expr:
        en = cat.enum_of(col.type)
        if en is None:
            raise PgError("XX000", f"cache lookup failed for type {col.type.base.oid}")
        name = f"{quote_ident(en.schema)}.{quote_ident(en.name)}" + ("[]" if col.type.is_array else "")
        return d.expr.replace(TYPE_MARK, name)
    if not d.sequence:
        return d.expr
    sq = cat.sequences.get(d.sequence)
    if sq is None:
        raise PgError("XX000", f"could not open relation with OID {d.sequence}")
    name = f"{quote_ident(sq.schema)}.{quote_ident(sq.name)}"
    return d.expr.replace(SEQUENCE_MARK, name.replace("'", "''"))


def expression(col: Column, cat: Catalog) -> ast.Node | None:
    """The column's default as a fresh syntax tree (the rewriter may change the one it is
    given), or None when the column has none."""
    col = with_domain_default(col, cat)
    if col.default is None:
        return None
    text = default_sql(col, cat)
    node = _PARSED.get(text)
    if node is None:
        stmt = parse_sql(f"SELECT {text}")[0].stmt
        assert isinstance(stmt, ast.SelectStmt) and stmt.targetList
        node = stmt.targetList[0].val
        with _PARSED_LOCK:
            if len(_PARSED) > 1024:
                _PARSED.clear()
            _PARSED[text] = node
    return copy.deepcopy(node)


def value_sql(col: Column, cat: Catalog) -> str:
    """``SET c = DEFAULT`` as SQL: the default's text, or NULL."""
    col = with_domain_default(col, cat)
    return "NULL" if col.default is None else f"({default_sql(col, cat)})"


def _null() -> ast.A_Const:
    return ast.A_Const(isnull=True)


def with_defaults(src: Any, t: Table, cols: list[str], cat: Catalog, ignored: Collection[str] = ()) -> Any:
    """The INSERT's rows query with each ``DEFAULT`` of a VALUES list replaced by its
    column's default expression (NULL for a column without one). A copy: the statement's
    own tree stays as written, for its next execution under another catalog.

    ``ignored`` columns (identity ones under OVERRIDING USER VALUE) get NULL: their values
    are dropped and the default is taken once per row afterwards, so a ``nextval`` here
    would consume a second value of the sequence."""
    if not (isinstance(src, ast.SelectStmt) and src.valuesLists):
        return src
    if not any(isinstance(v, ast.SetToDefault) for row in src.valuesLists for v in row):
        return src

    def item(i: int, v: Any) -> Any:
        if not isinstance(v, ast.SetToDefault):
            return v
        col = t.column(cols[i]) if i < len(cols) and cols[i] not in ignored else None
        node = expression(col, cat) if col is not None else None
        return node if node is not None else _null()

    out = copy.copy(src)
    out.valuesLists = tuple(tuple(item(i, v) for i, v in enumerate(row)) for row in src.valuesLists)
    return out


def has_set_to_default(src: Any, t: Table, cols: list[str]) -> bool:
    """A DEFAULT item of the VALUES falls in a column that has a default."""
    if not (isinstance(src, ast.SelectStmt) and src.valuesLists):
        return False
    for row in src.valuesLists:
        for i, v in enumerate(row):
            if isinstance(v, ast.SetToDefault) and i < len(cols):
                col = t.column(cols[i])
                if col is not None and (col.default is not None or col.type.domain):
                    return True
    return False


# ---------------------------------------------------------------------------------------------
# values of the columns an INSERT leaves out

#: (default text, column type) → the value as one stored row, for immutable defaults.
_CONSTANTS: dict[tuple[str, str], pa.Array] = {}

#: Defaults that are the transaction's start (or the statement's), as the engine gives them
#: to DuckDB: computed here for columns of these types, without a query (the session's
#: TimeZone is UTC, so the local forms are the same instant's wall clock).
_CLOCKS = {
    "now()": False,
    "transaction_timestamp()": False,
    "CURRENT_TIMESTAMP": False,
    "LOCALTIMESTAMP": False,
    "CURRENT_DATE": False,
    "statement_timestamp()": True,
}
_CLOCK_TYPES = frozenset({"timestamptz", "timestamp", "date"})


def _clock(ev: Evaluator, c: Column) -> pa.Array | None:
    assert c.default is not None
    statement = _CLOCKS.get(c.default.expr)
    if statement is None or c.type.is_array or c.type.base.name not in _CLOCK_TYPES:
        return None
    us = ev.ex.xact_start_us
    if statement and ev.ex.query_start is not None:
        us = int(ev.ex.query_start * 1_000_000)
    return pa.array([us], pa.timestamp("us", tz="UTC")).cast(c.type.arrow)


class OmittedDefaults:
    """The defaults of the columns an INSERT (or COPY FROM) gives no value: computed once
    per statement (:meth:`prepare`, before the statement's own rows query runs on the same
    DuckDB connection) unless volatile, added to each batch of rows (:meth:`add`)."""

    def __init__(self, ev: Evaluator, tx: Transaction, t: Table, present: Iterable[str]) -> None:
        given = set(present)
        self.ev, self.tx, self.t = ev, tx, t
        cat = tx.catalog()
        columns = [with_domain_default(c, cat) for c in t.columns if c.name not in given]
        self.columns = [c for c in columns if c.default is not None]
        self.stable = [c for c in self.columns if not c.default.volatile]  # type: ignore[union-attr]
        self.volatile = [c for c in self.columns if c.default.volatile]  # type: ignore[union-attr]
        #: a volatile default DuckDB must evaluate for each batch (the others are made here)
        self.queried_per_batch = any(_per_row_here(c) is None for c in self.volatile)
        self._once: dict[str, pa.Array] | None = None

    def __bool__(self) -> bool:
        return bool(self.columns)

    def prepare(self) -> None:
        if self._once is None:
            self._once = self._stable_values()

    def add(self, data: pa.Table, n: int | None = None) -> pa.Table:
        """``data`` (rows under column names; ``n`` rows when it has no columns) with the
        omitted columns' defaults added."""
        rows = data.num_rows if n is None else n
        if not self.columns:
            return data
        if self.volatile and data.num_columns:
            data = _checked(self.t, data)
        self.prepare()
        assert self._once is not None
        out = data if data.num_columns else pa.table({"__n": pa.nulls(rows, pa.null())})
        for c in self.stable:
            one = self._once[c.name]
            out = out.append_column(c.name, one if rows == 1 else _repeat(one, rows))
        if self.volatile and rows:
            for name, arr in _evaluate(self.ev, self.tx, self.t, self.volatile, rows).items():
                out = out.append_column(name, arr)
        elif self.volatile:
            for c in self.volatile:
                out = out.append_column(c.name, pa.nulls(0, c.type.arrow))
        return out.drop_columns(["__n"]) if not data.num_columns else out

    def _stable_values(self) -> dict[str, pa.Array]:
        out: dict[str, pa.Array] = {}
        todo = []
        for c in self.stable:
            key = (c.default.expr, c.type.to_json())  # type: ignore[union-attr]
            hit = _CONSTANTS.get(key)
            if hit is None:
                hit = _clock(self.ev, c)
            if hit is not None:
                out[c.name] = hit
            else:
                todo.append(c)
        if todo:
            values = _evaluate(self.ev, self.tx, self.t, todo, 1)
            for c in todo:
                arr = values[c.name]
                out[c.name] = arr
                if _immutable(c):
                    if len(_CONSTANTS) > 1024:
                        _CONSTANTS.clear()
                    _CONSTANTS[(c.default.expr, c.type.to_json())] = arr  # type: ignore[union-attr]
        return out


def _checked(t: Table, data: pa.Table) -> pa.Table:
    """The given values in their columns' storage types before a volatile default runs:
    a value that cannot go into its column (PostgreSQL finds a constant's at planning) is
    refused before any ``nextval`` is spent on the row."""

    out = data
    for i, name in enumerate(data.column_names):
        col = t.column(name)
        if col is not None:
            out = out.set_column(i, name, conform(data.column(i), col))
    return out


def _repeat(one: pa.Array, n: int) -> pa.Array:
    """A one-value array ``n`` times."""
    return one.take(pa.array(np.zeros(n, dtype=np.int64)))


def _immutable(c: Column) -> bool:

    if c.default is None or c.default.sequence:
        return False
    if TYPE_MARK in c.default.expr:
        return True  # (an enum's label)
    node = parse_sql(f"SELECT {c.default.expr}")[0].stmt.targetList[0].val
    try:
        tree = default_exprs.cook(node, c.type, c.name) if node is not None else None
    except Exception:
        return False
    return tree is not None and default_exprs.immutable(tree.tree)


def _evaluate(ev: Evaluator, tx: Transaction, t: Table, cols: list[Column], n: int) -> dict[str, pa.Array]:
    """The columns' defaults for ``n`` rows (``n`` evaluations: volatile ones differ per
    row), in the columns' storage types, through the assignment rules of an INSERT."""

    cat = tx.catalog()
    out: dict[str, pa.Array] = {}
    queried = []
    for c in cols:
        made = _per_row_here(c)
        if made is None:
            queried.append(c)
        else:
            out[c.name] = conform(made(ev, cat, n), c)
    if queried:
        exprs = ", ".join(f'{default_sql(c, cat)} AS "{i}"' for i, c in enumerate(queried))
        sql = f"SELECT {exprs}" if n == 1 else f"SELECT {exprs} FROM generate_series(1, {int(n)})"
        try:
            data = ev.relation(ev.rewrite(sql, tx), []).to_arrow_table()
        except PgError:
            raise
        except Exception as e:  # (raised while DuckDB runs it: a UDF's PGERR, an overflow)
            from walsender_proxy.sql.duck_errors import duck_error

            raise duck_error(e) from None
        data = data.rename_columns([c.name for c in queried])
        data = coerce_text_columns(t, data, ev.date_order, ev.text_out)
        for c in queried:
            out[c.name] = conform(data.column(c.name), c)
    return {name: arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr for name, arr in out.items()}


Maker = Any  # (Evaluator, Catalog, rows) -> pa.Array


def _per_row_here(c: Column) -> Maker | None:
    """A volatile default made here, value by value in row order, as PostgreSQL evaluates it
    (no DuckDB query): ``nextval`` of its sequence (SERIAL, identity), and
    ``gen_random_uuid()`` / ``random()`` into a column of their own type."""
    d = c.default
    if d is None or not d.volatile or c.type.is_array:
        return None
    if d.sequence and d.expr == _NEXTVAL:
        return _nextvals(d.sequence)
    if d.expr == "gen_random_uuid()" and c.type.base.name == "uuid":
        return lambda ev, cat, n: pa.array([str(uuid.uuid4()) for _ in range(n)], pa.string())
    if d.expr == "random()" and c.type.base.name == "float8":
        return lambda ev, cat, n: pa.array([_RANDOM.random() for _ in range(n)], pa.float64())
    return None


_NEXTVAL = f"nextval('{SEQUENCE_MARK}'::regclass)"
_RANDOM = random.Random()


def _nextvals(oid: int) -> Maker:
    def make(ev: Evaluator, cat: Catalog, n: int) -> pa.Array:

        sq = sequence_for(cat, oid)
        lake, own = ev.lake, ev.ex.sequences
        return pa.array([own.nextval(lake, sq) for _ in range(n)], pa.int64())

    return make


def fill_added_column(ev: Evaluator, tx: Transaction, table: str, name: str) -> int:
    """After ``ADD COLUMN name … DEFAULT`` (or ``GENERATED ALWAYS AS … STORED``): the rows
    already in the table get the default (each its own value when it is volatile, as
    PostgreSQL's table rewrite gives them; a generated column's from each row) —
    or its domain's, or NULL held to its domain's constraints; NULLs in a NOT NULL column
    are 23502, as there. Returns the rows rewritten."""

    t = tx.table(table)
    col = t.column(name)
    assert col is not None
    col = with_domain_default(col, tx.catalog())
    assert col.default is not None or col.type.domain or col.generation is not None
    q = tx.snapshot_query(t, with_rid=True, heap_order=True)
    rows = _read(ev, q)  # (_rid, then the columns in order, in their storage types)
    rows = rows.rename_columns([RID, *(c.physical for c in t.columns)])
    if not rows.num_rows:
        return 0
    if col.generation is not None:  # (computed from each row, as the lake computes it)
        values = tx.with_generated(t, rows).column(col.physical).combine_chunks()
    elif col.default is None:  # (a domain without a default: NULL, held to the domain)
        values: pa.Array = pa.nulls(rows.num_rows, col.type.arrow)
    else:
        values = _evaluate(ev, tx, t, [col], 1 if not col.default.volatile else rows.num_rows)[name]
    if len(values) != rows.num_rows:
        values = _repeat(values, rows.num_rows)
    domains.check_rows(tx, t, pa.table({col.physical: values}))
    if col.not_null and values.null_count:
        raise null_column_error(t, name)
    old = rows.select([RID, *(c.physical for c in t.columns if c.name != name)])
    new = old.append_column(pa.field(col.physical, col.type.arrow), values)
    old = old.append_column(pa.field(col.physical, col.type.arrow), pa.nulls(rows.num_rows, col.type.arrow))
    keep = [RID, *(c.physical for c in t.columns)]
    return tx.rewrite_rows(t, old.select(keep), new.select(keep))


def _read(ev: Any, q: Any) -> pa.Table:
    for n, tbl in q.arrow.items():
        ev._register(n, tbl)
    return ev.relation(q.sql, []).to_arrow_table()
