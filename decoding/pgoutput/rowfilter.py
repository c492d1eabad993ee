"""Publication row filters (``FOR TABLE t WHERE (...)``), evaluated a batch at a time.

PostgreSQL evaluates the filter once per row with its executor. Here a statement's rows
arrive as one Arrow table, so the filter runs as one DuckDB query over the whole batch and
gives back a boolean mask. DuckDB's parser descends from PostgreSQL's, so the filter text
(as the user wrote it, or as ``pg_get_expr`` prints it: ``((region = 'eu'::text) AND
(amount > (10)::numeric))``) runs almost unchanged; the two adjustments are the columns'
types (the lake keeps unconstrained numeric and uuid as text, intervals as a struct) and
casts to types DuckDB lacks or means differently (bare ``numeric`` is DECIMAL(18,3) there,
which would round; ``jsonb``).

Semantics kept from ``pgoutput_row_filter_exec_expr``: NULL counts as false. A filter
DuckDB cannot run raises 0A000 rather than publishing rows that might not match.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from decoding.catalog import Table
from decoding.errors import PgError

if TYPE_CHECKING:  # imported where a filter runs: a walsender process without row filters
    import duckdb  # never loads DuckDB

__all__ = ["RowFilter", "connect", "duckdb_expression"]

_ROW = "__pg_row"
_INPUT = "__pg_rowfilter_input"

# Outside string literals and quoted identifiers only.
_REWRITES = (
    # Bare numeric is DECIMAL(18,3) in DuckDB and would round the constant; the lake's
    # unconstrained numeric is compared as DOUBLE as well (see _projection).
    (re.compile(r"::\s*(?:numeric|decimal)\b(?!\s*\()", re.I), "::DOUBLE"),
    (re.compile(r"\bAS\s+(?:numeric|decimal)\b(?!\s*\()", re.I), "AS DOUBLE"),
    (re.compile(r"::\s*(?:jsonb|json|name|bpchar)\b", re.I), "::VARCHAR"),
    (re.compile(r"\bAS\s+(?:jsonb|json|name|bpchar)\b", re.I), "AS VARCHAR"),
)
_LITERAL = re.compile(r"""('(?:[^']|'')*'|"(?:[^"]|"")*")""")


def duckdb_expression(text: str) -> str:
    """The filter text with PostgreSQL-only casts mapped to DuckDB's."""
    out = []
    for i, part in enumerate(_LITERAL.split(text)):
        if i % 2 == 0:
            for pattern, repl in _REWRITES:
                part = pattern.sub(repl, part)
        out.append(part)
    return "".join(out)


def filter_columns(expr: str) -> set[str]:
    """The column names a row filter's text refers to (the lake's replica identity and
    rename checks ask). pglast is imported here: a walsender process never asks."""
    from pglast import ast, parse_sql

    names: set[str] = set()

    def visit(n: Any) -> None:
        if isinstance(n, ast.ColumnRef):
            last = n.fields[-1]
            if isinstance(last, ast.String):
                names.add(last.sval)
        if isinstance(n, ast.Node):
            for attr in n:
                visit(getattr(n, attr))
        elif isinstance(n, tuple):
            for x in n:
                visit(x)

    visit(parse_sql(f"SELECT {expr}")[0].stmt)
    return names


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _projection(t: Table, data: pa.Table) -> tuple[str, dict[str, pa.Array]]:
    """SQL exposing every column under its SQL name with a type DuckDB compares like
    PostgreSQL, plus the Arrow columns it reads (by physical name, nulls if absent)."""
    cols: dict[str, pa.Array] = {}
    exprs: list[str] = []
    n = data.num_rows
    for i, c in enumerate(t.columns):
        key = f"c{i}"
        if c.physical in data.column_names:
            arr = data.column(c.physical)
        else:  # added after these rows were written
            arr = pa.nulls(n, c.type.arrow)
        cols[key] = arr
        src = _quote(key)
        typ = arr.type
        base = c.type.base.name
        if pa.types.is_dictionary(typ):
            typ = typ.value_type
        if pa.types.is_struct(typ) and base == "interval":
            e = (
                f"CASE WHEN {src} IS NULL THEN NULL ELSE to_months({src}.months) + "
                f"to_days({src}.days) + to_microseconds({src}.microseconds) END"
            )
        elif base == "numeric" and not c.type.is_array and pa.types.is_string(typ):
            e = f"TRY_CAST({src} AS DOUBLE)"
        elif base == "uuid" and not c.type.is_array and pa.types.is_string(typ):
            e = f"TRY_CAST({src} AS UUID)"
        else:
            e = src
        exprs.append(f"{e} AS {_quote(c.name)}")
    return ", ".join(exprs), cols


class RowFilter:
    """The OR of one or more row filters of a table, for one publication action."""

    __slots__ = ("expressions", "sql_expression", "table")

    def __init__(self, table: Table, expressions: Sequence[str]) -> None:
        self.table = table
        self.expressions = tuple(expressions)
        parts = [f"({duckdb_expression(e)})" for e in self.expressions]
        self.sql_expression = " OR ".join(parts)

    def matches(self, con: duckdb.DuckDBPyConnection, data: pa.Table) -> np.ndarray:
        """Boolean mask over ``data``'s rows (physical column names, as in change records):
        True where the filter is true (NULL and false are both false)."""
        n = data.num_rows
        if n == 0:
            return np.zeros(0, dtype=bool)
        proj, cols = _projection(self.table, data)
        cols[_ROW] = pa.array(np.arange(n, dtype=np.int64))
        batch = pa.table(cols)
        sql = (
            f"SELECT {_ROW} FROM (SELECT {proj}, {_ROW} FROM {_INPUT}) AS "
            f"{_quote(self.table.name)} WHERE {self.sql_expression}"
        )
        import duckdb

        con.register(_INPUT, batch)
        try:
            rows = con.execute(sql).fetchnumpy()[_ROW]
        except duckdb.Error as e:
            detail = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise PgError(
                "0A000",
                f'row filter of table "{self.table.schema}.{self.table.name}" cannot be '
                f"evaluated: {self.expressions!r}",
                detail=detail,
            ) from None
        finally:
            con.unregister(_INPUT)
        mask = np.zeros(n, dtype=bool)
        mask[np.asarray(rows, dtype=np.int64)] = True
        return mask


def connect() -> duckdb.DuckDBPyConnection:
    """A private in-memory DuckDB for filter evaluation, with PostgreSQL's session
    defaults that change results (a literal timestamptz without offset is UTC).

    Filters are text from the catalog, so the connection can reach nothing but the batch
    it is handed: no files, no extensions, and the settings are locked."""
    import duckdb

    con = duckdb.connect(
        config={
            "enable_external_access": False,
            "autoload_known_extensions": False,
            "autoinstall_known_extensions": False,
        }
    )
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET lock_configuration = true")
    return con
