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
