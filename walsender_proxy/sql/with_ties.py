"""``FETCH FIRST n ROWS WITH TIES`` as window functions DuckDB runs (it has no WITH TIES).

PostgreSQL's Limit node returns the rows after OFFSET m, the first n of them, and every
row after those that sorts equal to the n-th. In window terms, with the query's ORDER BY
as each window's order: a row is returned when its ``row_number()`` is past m and its
``rank()`` is at most m + n (the rank of every row sorting equal to the (m + n)-th is that
row's, at most m + n; a row sorting after it has a rank past m + n). A NULL count is no
limit and a count of 0 returns nothing, as in PostgreSQL; a negative one is 2201W.

The query becomes ``SELECT c1 AS …, … FROM (query, its ORDER BY moved into the two
windows) AS t(c1, …, rn, rk) WHERE … ORDER BY rn``: the inner query is analysed as any
other (ORDER BY's output positions and names are first replaced by the expressions they
name, as a window's ORDER BY cannot name an output column), the outer one is built
already translated.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from pglast import ast
from pglast.enums import BoolExprType, LimitOption, SetOperation

from decoding.errors import PgError
from walsender_proxy.sql.nodes import colref as _colref
from walsender_proxy.sql.nodes import int_const as _int
from walsender_proxy.sql.nodes import name as _s
from walsender_proxy.sql.nodes import op as _op

#: A window's default frame (RANGE UNBOUNDED PRECEDING, as the parser leaves it).
_DEFAULT_FRAME = 0x2 | 0x20 | 0x400
ROW_NUMBER = "wpx_ties_rn"
RANK = "wpx_ties_rk"
ALIAS = "wpx_ties"


def applies(stmt: ast.SelectStmt) -> bool:
    return stmt.limitOption == LimitOption.LIMIT_OPTION_WITH_TIES


def check(stmt: ast.SelectStmt) -> None:
    """PostgreSQL's refusals of WITH TIES, and the proxy's (0A000)."""
    if not stmt.sortClause:
        raise PgError("42601", "WITH TIES cannot be specified without ORDER BY clause")
    if isinstance(stmt.limitCount, ast.A_Const) and stmt.limitCount.isnull:  # (transformLimitClause)
        raise PgError("2201W", "row count cannot be null in FETCH FIRST ... WITH TIES clause")
    if any(getattr(lc, "waitPolicy", None) is not None and int(lc.waitPolicy) == 1 for lc in stmt.lockingClause or ()):
        raise PgError("0A000", "SKIP LOCKED and WITH TIES options cannot be used together")
    if stmt.op != SetOperation.SETOP_NONE:
        raise PgError("0A000", "FETCH FIRST … WITH TIES of a UNION, INTERSECT or EXCEPT is not supported by walsender-proxy")
    if stmt.distinctClause is not None:
        raise PgError("0A000", "FETCH FIRST … WITH TIES with DISTINCT is not supported by walsender-proxy")


def _sort_keys(stmt: ast.SelectStmt) -> list[ast.SortBy]:
    """ORDER BY's items with an output position or output column name replaced by the
    expression it names (a window's ORDER BY knows neither)."""
    targets = list(stmt.targetList or ())
    out = []
    for s in stmt.sortClause:
        node = s.node
        expr = None
        if isinstance(node, ast.A_Const) and isinstance(node.val, ast.Integer):
            n = node.val.ival
            if not 1 <= n <= len(targets):
                raise PgError("42P10", f"ORDER BY position {n} is not in select list")
            expr = targets[n - 1].val
        elif isinstance(node, ast.ColumnRef) and len(node.fields) == 1 and isinstance(node.fields[0], ast.String):
            named = [t for t in targets if t.name == node.fields[0].sval]
            if len(named) == 1:
                expr = named[0].val
        if expr is not None and isinstance(expr, ast.ColumnRef) and isinstance(expr.fields[-1], ast.A_Star):
            raise PgError("0A000", "FETCH FIRST … WITH TIES ordered by a position of * is not supported by walsender-proxy")
        key = copy.deepcopy(s)
        if expr is not None:
            key.node = copy.deepcopy(expr)
        out.append(key)
    return out


def inner_query(stmt: ast.SelectStmt) -> ast.SelectStmt:
    """The query without its ORDER BY, OFFSET and FETCH, with the two window columns."""
    check(stmt)
    keys = _sort_keys(stmt)

    def window(fn: str, name: str) -> ast.ResTarget:
        over = ast.WindowDef(orderClause=tuple(copy.deepcopy(k) for k in keys), frameOptions=_DEFAULT_FRAME)
        return ast.ResTarget(name=name, val=ast.FuncCall(funcname=(_s(fn),), over=over))

    inner = copy.copy(stmt)
    inner.sortClause = None
    inner.limitCount = None
    inner.limitOffset = None
    inner.limitOption = LimitOption.LIMIT_OPTION_DEFAULT
    inner.lockingClause = None
    inner.targetList = (*(stmt.targetList or ()), window("row_number", ROW_NUMBER), window("rank", RANK))
    return inner


def outer_query(
    inner: ast.SelectStmt, names: list[str], offset: Any, count: Any, guard: Callable[[str, Any], Any]
) -> ast.SelectStmt:
    """The translated query over the analysed inner one (``names``: its output columns,
    the two window columns last); ``offset`` and ``count`` translated, or None;
    ``guard(kind, expr)`` wraps one in its negative-value check."""
    shown = names[:-2]
    cols = [f"c{i}" for i in range(len(shown))]
    rn, rk = _colref(ALIAS, ROW_NUMBER), _colref(ALIAS, RANK)
    start: Any = ast.CoalesceExpr(args=(guard("offset", offset), _int(0))) if offset is not None else _int(0)
    conds: list[Any] = [_op(">", rn, start)]
    if count is not None:
        n = guard("count", count)
        # (a NULL count is no limit; 0 returns nothing)
        conds.append(
            ast.BoolExpr(boolop=BoolExprType.OR_EXPR, args=(
                ast.NullTest(arg=copy.deepcopy(n), nulltesttype=0),
                ast.BoolExpr(boolop=BoolExprType.AND_EXPR, args=(
                    _op(">", copy.deepcopy(n), _int(0)),
                    _op("<=", copy.deepcopy(rk), _op("+", copy.deepcopy(start), copy.deepcopy(n))),
                )),
            ))
        )  # fmt: skip
    return ast.SelectStmt(
        targetList=tuple(ast.ResTarget(name=shown[i], val=_colref(ALIAS, c)) for i, c in enumerate(cols)),
        fromClause=(
            ast.RangeSubselect(
                subquery=inner,
                alias=ast.Alias(aliasname=ALIAS, colnames=tuple(_s(c) for c in (*cols, ROW_NUMBER, RANK))),
            ),
        ),
        whereClause=ast.BoolExpr(boolop=BoolExprType.AND_EXPR, args=tuple(conds)) if len(conds) > 1 else conds[0],
        sortClause=(ast.SortBy(node=copy.deepcopy(rn), sortby_dir=0, sortby_nulls=0),),
        op=SetOperation.SETOP_NONE,
    )
