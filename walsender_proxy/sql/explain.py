"""EXPLAIN: the plan of the statement the proxy runs for a query, as DuckDB prints it.

PostgreSQL's plan shapes (Seq Scan, Hash Join, costs) do not exist here: DuckDB plans the
rewritten statement, and that plan is what EXPLAIN shows, one line a row in PostgreSQL's
``QUERY PLAN`` text column, so psql, drivers and tools that run EXPLAIN get a plan text,
not an error. What cannot be shown that way is refused with 0A000: another FORMAT than
TEXT, and EXPLAIN of a statement other than a query (EXPLAIN ANALYZE would run it).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pglast import ast

from decoding.errors import PgError
from decoding.pgtypes import parse_type
from walsender_proxy.backend.outcomes import Column, Rows

__all__ = ["analyze", "checked", "columns", "rows"]

#: PostgreSQL's EXPLAIN options (boolean unless noted); others are 42601 as in explain.c.
_OPTIONS = frozenset({"analyze", "verbose", "costs", "settings", "buffers", "wal", "timing", "summary", "format"})


def _flag(opt: ast.DefElem) -> bool:
    arg = opt.arg
    if arg is None:
        return True
    value = getattr(arg, "sval", None) or getattr(arg, "boolval", None)
    if isinstance(arg, ast.Integer):
        return arg.ival != 0
    text = str(value).lower() if value is not None else ""
    if text in ("true", "on", "1", "yes"):
        return True
    if text in ("false", "off", "0", "no"):
        return False
    raise PgError("22023", f'{opt.defname} requires a Boolean value')


def checked(node: ast.ExplainStmt) -> ast.Node:
    """The query EXPLAIN explains, its options checked as PostgreSQL checks them."""
    for opt in node.options or ():
        name = opt.defname
        if name not in _OPTIONS:
            raise PgError("42601", f'unrecognized EXPLAIN option "{name}"')
        if name == "format":
            fmt = str(getattr(opt.arg, "sval", "")).lower()
            if fmt not in ("text", "xml", "json", "yaml"):
                raise PgError("22023", f'unrecognized value for EXPLAIN option "format": "{fmt}"')
            if fmt != "text":
                raise PgError("0A000", f"EXPLAIN (FORMAT {fmt.upper()}) is not supported by walsender-proxy")
        else:
            _flag(opt)
    query = node.query
    if not isinstance(query, ast.SelectStmt):
        kind = type(query).__name__.removesuffix("Stmt").upper()
        raise PgError("0A000", f"EXPLAIN of {kind} is not supported by walsender-proxy")
    if query.intoClause is not None:
        raise PgError("0A000", "EXPLAIN of SELECT INTO is not supported by walsender-proxy")
    return query


def analyze(node: ast.ExplainStmt) -> bool:
    """EXPLAIN ANALYZE (or the ANALYZE option): the query is run and timed."""
    return any(opt.defname == "analyze" and _flag(opt) for opt in node.options or ())


def columns() -> list[Column]:
    return [Column("QUERY PLAN", parse_type("text"))]


def rows(plan: list[tuple[Any, ...]]) -> Rows:
    """DuckDB's EXPLAIN result (key, plan text) as one row a line."""
    lines: list[str] = []
    for row in plan:
        lines.extend(str(row[-1]).rstrip("\n").splitlines())
    data = pa.table({"QUERY PLAN": pa.array(lines, pa.string())})
    return Rows(columns(), iter(data.to_batches()), verb="EXPLAIN", fixed_tag="EXPLAIN")
