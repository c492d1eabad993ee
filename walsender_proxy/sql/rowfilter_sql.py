"""Publication row filters (``FOR TABLE t WHERE (…)``) cooked as PostgreSQL 15 cooks them:
``TransformPubWhereClauses`` (the expression analysed over the table alone, coerced to
boolean: 42703, 42P01, 42804, 42803, 42P20, 42P02 with its texts and positions) then
``check_simple_rowfilter_expr`` (only columns, constants, built-in operators and immutable
built-in functions: 0A000 "invalid publication WHERE expression" for a subquery, a system
column, a mutable function or an I/O conversion cast, as PostgreSQL words it).

What is kept (:class:`decoding.catalog.RowFilterExpr`) is what ``pg_get_expr(prqual,
prrelid)`` prints and a DuckDB form the decoder evaluates with PostgreSQL's verdict, both
naming columns by attnum. The forms taken are :mod:`walsender_proxy.sql.cooked_exprs`';
a filter PostgreSQL accepts outside them is refused with 0A000 naming it, never published
by an approximation.
"""

from __future__ import annotations

from collections.abc import Mapping

from pglast import ast

from decoding.catalog import EnumType, RowFilterExpr, Table
from decoding.errors import PgError
from walsender_proxy.sql import cooked_exprs as cx
from walsender_proxy.sql import default_exprs as dx


def cook(where: ast.Node, t: Table, user_enums: Mapping[int, EnumType] | None = None) -> RowFilterExpr:
    """The row filter ``where`` of table ``t``, cooked and checked (``user_enums``: the
    catalog's, for enum columns)."""
    try:
        tree = cx.Cooker(t, cx.ROW_FILTER, user_enums).boolean(where)
        duck = cx.duck(tree)
    except (cx.Unsupported, dx._Unsupported) as e:
        raise PgError("0A000", f"publication WHERE expression {e} is not supported by walsender-proxy") from None
    return RowFilterExpr(cx.deparse(tree, False), duck, tuple(cx.attnums(tree, [])))


def from_text(text: str, t: Table) -> RowFilterExpr:
    """A row filter written as SQL text (``region = 'eu'``), cooked for table ``t``: the
    form the lake's transaction API and a test script give ``WHERE (…)`` in."""
    from pglast import parse_sql

    stmt = parse_sql(f"SELECT WHERE ({text})")[0].stmt
    assert isinstance(stmt, ast.SelectStmt) and stmt.whereClause is not None
    return cook(stmt.whereClause, t)
