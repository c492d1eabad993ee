"""DuckDB's exceptions as PostgreSQL's errors.

Whatever DuckDB raises while running a rewritten statement leaves the proxy as the PgError
PostgreSQL would have raised: a UDF's own PgError (carried through DuckDB's message), a cast
error in PostgreSQL's words, a cancel, a binder's unknown column (with the position
PostgreSQL's parser reports), else :func:`~walsender_proxy.sql.pgcatalog.translate_error`.
"""

from __future__ import annotations

import re
from typing import Any

from pglast import ast

from decoding.errors import PgError
from walsender_proxy.sql.functional_grouping import is_aggregate
from walsender_proxy.sql.literals import duckdb_cast_error
from walsender_proxy.sql.pgcatalog import translate_error
from walsender_proxy.sql.udf_errors import udf_error


def duck_error(e: Exception) -> PgError:
    import duckdb

    original = udf_error(str(e))
    if original is not None:
        return original
    if isinstance(e, duckdb.ConversionException | duckdb.OutOfRangeException):
        worded = duckdb_cast_error(str(e))
        if worded is not None:
            return worded
    if isinstance(e, duckdb.InterruptException):
        return PgError("57014", "canceling statement due to user request")
    if isinstance(e, duckdb.BinderException):
        m = _DUCK_COLUMN.search(str(e))
        if m:
            return PgError("42703", f'column "{m.group(1)}" does not exist')
        m = _DUCK_QUALIFIED_COLUMN.search(str(e))
        if m:  # (PostgreSQL words a qualified one without quotes: column p.zz does not exist)
            return PgError("42703", f"column {m.group(1)}.{m.group(2)} does not exist")
        m = _DUCK_FIELD.search(str(e))
        if m:  # (a field of a record whose fields the analysis did not know)
            return PgError("0A000", f"selecting field {m.group(1)} of a record of unknown fields is not supported by walsender-proxy")
    return translate_error(e)


_DUCK_COLUMN = re.compile(r'(?:Referenced column|Column) "([^"]+)" (?:not found|referenced)')
_DUCK_FIELD = re.compile(r"Cannot extract field '([^']+)' from expression")
_DUCK_QUALIFIED_COLUMN = re.compile(
    r'(?:Table|Values list) "([^"]+)" does not have a column named "([^"]+)"'
)


def locate_missing_column(e: PgError, node: Any) -> None:
    """42703 found by DuckDB's binder: the position of the first reference to that column
    in the statement, as PostgreSQL reports it (its parser's location, 1-based)."""
    if e.sqlstate != "42703" or getattr(e, "position", None) is not None:
        return
    m = re.fullmatch(r'column "(.+)" does not exist|column (\S+) does not exist', e.message)
    if m is None:
        return
    name = m.group(1) or m.group(2)
    found: list[int] = []

    def visit(n: Any) -> None:
        if found:
            return
        if isinstance(n, ast.ColumnRef) and n.fields and isinstance(n.fields[-1], ast.String):
            shown = ".".join(f.sval for f in n.fields if isinstance(f, ast.String))
            if name in (n.fields[-1].sval, shown) and n.location is not None and n.location >= 0:
                found.append(n.location + 1)
                return
        if isinstance(n, ast.Node):
            for attr in n:
                visit(getattr(n, attr))
        elif isinstance(n, tuple | list):
            for x in n:
                visit(x)

    visit(node)
    if found:
        e.position = found[0]  # type: ignore[attr-defined]


_UNGROUPED = re.compile(r'column "(.+)" must appear in the GROUP BY clause or be used in an aggregate function')


def locate_ungrouped_column(e: PgError, node: Any, columns_of: Any) -> None:
    """42803 found by DuckDB's binder, which names the column alone: PostgreSQL names it
    with its table (``articles.id``, the alias if it has one) and points at the first
    reference outside an aggregate, in the SELECT list, then HAVING, then ORDER BY.
    ``columns_of(schema, name)``: a table's column names (None: not a table)."""
    if e.sqlstate != "42803" or getattr(e, "position", None) is not None:
        return
    m = _UNGROUPED.fullmatch(e.message)
    if m is None:
        return
    name = m.group(1)
    found: list[tuple[ast.ColumnRef, ast.SelectStmt]] = []

    def visit(n: Any, owner: ast.SelectStmt | None) -> None:
        if found:
            return
        if isinstance(n, ast.SelectStmt):
            for part in (n.targetList, n.havingClause, n.sortClause, n.larg, n.rarg):
                visit(part, n)
            return
        if isinstance(n, ast.FuncCall) and is_aggregate(n):
            return
        if isinstance(n, ast.SubLink):
            visit(n.subselect, owner)
            return
        if isinstance(n, ast.ColumnRef) and isinstance(n.fields[-1], ast.String) and n.fields[-1].sval == name:
            if owner is not None:
                found.append((n, owner))
            return
        if isinstance(n, ast.Node):
            for attr in n:
                visit(getattr(n, attr), owner)
        elif isinstance(n, tuple | list):
            for x in n:
                visit(x, owner)

    visit(node, None)
    if not found:
        return
    ref, owner = found[0]
    if ref.location is not None and ref.location >= 0:
        e.position = ref.location + 1  # type: ignore[attr-defined]
    items = owner.fromClause or ()
    if len(ref.fields) >= 2 and isinstance(ref.fields[-2], ast.String):
        table = ref.fields[-2].sval
    elif len(items) == 1 and isinstance(items[0], ast.RangeSubselect) and items[0].alias is not None:
        table = items[0].alias.aliasname
    else:
        owners = []
        for item in owner.fromClause or ():
            if isinstance(item, ast.RangeVar):
                cols = columns_of(item.schemaname, item.relname)
                if cols is None or name in cols:
                    owners.append(item.alias.aliasname if item.alias is not None else item.relname)
        if len(owners) != 1:
            return
        table = owners[0]
    e.message = f'column "{table}.{name}" must appear in the GROUP BY clause or be used in an aggregate function'
    e.args = (e.message,)
