"""Publication row filters (``FOR TABLE t WHERE (...)``), evaluated a batch at a time.

PostgreSQL evaluates the filter once per row with its executor. Here a statement's rows
arrive as one Arrow table, so the filter runs as one DuckDB query over the whole batch and
gives back a boolean mask. The filter is the DuckDB form the SQL layer cooked when the
publication was made (:class:`decoding.catalog.RowFilterExpr`: only forms DuckDB evaluates
with PostgreSQL's verdict are accepted there), its columns marked by attnum and named here by
their physical names in the change records.

Semantics kept from ``pgoutput_row_filter_exec_expr``: NULL counts as false. A filter
DuckDB cannot run, or one kept uncooked by an older version, raises rather than publishing
rows that might not match (no cooked form can raise an error of its own).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from decoding.catalog import RowFilterExpr, Table, fill_marks
from decoding.errors import PgError

if TYPE_CHECKING:  # imported where a filter runs: a walsender process without row filters
    import duckdb  # never loads DuckDB

__all__ = ["RowFilter", "connect", "lazy_bool"]

_ROW = "__pg_row"
_INPUT = "__pg_rowfilter_input"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def lazy_bool(op: str, args: list[str]) -> str:
    """AND / OR as PostgreSQL evaluates them: left to right, an argument evaluated only
    while the result is still open (``ExecEvalBoolExpr``), so an error an argument would
    raise (a division by zero, an overflow) is raised only where PostgreSQL reaches it.
    DuckDB evaluates AND and OR eagerly but a CASE's branches lazily. Used for the
    cooked expressions' AND/OR and for the OR of several publications' filters, which
    pgoutput evaluates in order too."""
    if len(args) == 1:
        return args[0]
    stop, value = ("FALSE", "FALSE") if op == "AND" else ("TRUE", "TRUE")
    whens = " ".join(f"WHEN ({a}) IS {stop} THEN {value}" for a in args)
    unknown = " OR ".join(f"({a}) IS NULL" for a in args)
    other = "TRUE" if op == "AND" else "FALSE"
    return f"(CASE {whens} WHEN {unknown} THEN NULL ELSE {other} END)"


class RowFilter:
    """The OR of one or more row filters of a table, for one publication action."""

    __slots__ = ("filters", "sql_expression", "table")

    def __init__(self, table: Table, filters: Sequence[RowFilterExpr]) -> None:
        self.table = table
        self.filters = tuple(filters)
        for f in self.filters:
            if not f.duck:
                raise PgError(
                    "0A000",
                    f'row filter {f.expr} of table "{table.schema}.{table.name}" was made by an older '
                    "walsender-proxy and is not evaluated",
                    hint="Set the table's row filter again with ALTER PUBLICATION … SET TABLE.",
                )
        names = {c.attnum: _quote(c.physical) for c in table.columns}
        self.sql_expression = lazy_bool("OR", [fill_marks(f.duck, names) for f in self.filters])

    def matches(self, con: duckdb.DuckDBPyConnection, data: pa.Table) -> np.ndarray:
        """Boolean mask over ``data``'s rows (physical column names, as in change records):
        True where the filter is true (NULL and false are both false)."""
        n = data.num_rows
        if n == 0:
            return np.zeros(0, dtype=bool)
        cols: dict[str, pa.Array] = {}
        for c in self.table.columns:
            if c.physical in data.column_names:
                cols[c.physical] = data.column(c.physical)
            else:  # added after these rows were written
                cols[c.physical] = pa.nulls(n, c.type.arrow)
        cols[_ROW] = pa.array(np.arange(n, dtype=np.int64))
        batch = pa.table(cols)
        sql = f"SELECT {_ROW} FROM {_INPUT} WHERE {self.sql_expression}"
        import duckdb

        con.register(_INPUT, batch)
        try:
            rows = con.execute(sql).fetchnumpy()[_ROW]
        except duckdb.Error as e:
            detail = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise PgError(
                "XX000",
                f'row filter of table "{self.table.schema}.{self.table.name}" could not be evaluated',
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
