"""Which query level an aggregate belongs to.

PostgreSQL assigns an aggregate call to the query level of the outermost-but-nearest column
its arguments refer to (``check_agg_arguments`` in ``parse_agg.c``): in
``SELECT (SELECT max(o.x)) FROM t o`` the ``max`` aggregates ``t``'s rows in the *outer*
query, which then returns one row. DuckDB, like most engines, evaluates the aggregate in
the subquery it is written in, once per outer row, and so answers with one row per row of
``t`` when the outer column is only inside a subquery of the arguments. The rewriter cannot
move an aggregate between query levels, so such a call is
refused where DuckDB would place it elsewhere; this module holds the reading of the
arguments, the rewriter the scopes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Literal

from pglast import ast

#: PostgreSQL 15's aggregate functions (``pg_aggregate``), by name.
AGGREGATES = frozenset({
    "array_agg", "avg", "bit_and", "bit_or", "bit_xor", "bool_and", "bool_or", "corr", "count",
    "covar_pop", "covar_samp", "cume_dist", "dense_rank", "every", "json_agg", "json_object_agg",
    "jsonb_agg", "jsonb_object_agg", "max", "min", "mode", "percent_rank", "percentile_cont",
    "percentile_disc", "range_agg", "range_intersect_agg", "rank", "regr_avgx", "regr_avgy",
    "regr_count", "regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy",
    "stddev", "stddev_pop", "stddev_samp", "string_agg", "sum", "var_pop", "var_samp",
    "variance", "xmlagg",
})  # fmt: skip

def is_aggregate_or_window(node: Any) -> bool:
    """A call of an aggregate (PostgreSQL's, ``count(*)``, or WITHIN GROUP) or of any
    function OVER a window."""
    return isinstance(node, ast.FuncCall) and (
        node.over is not None or node.agg_star or node.agg_within_group or node.funcname[-1].sval in AGGREGATES
    )


#: Where a column reference resolves: in the aggregate's own query, in an outer one, or
#: not known (a relation whose columns the rewriter does not know).
Level = Literal["local", "outer", "unknown"]


def _names(ref: ast.ColumnRef) -> list[str] | None:
    fields = [f.sval for f in ref.fields if isinstance(f, ast.String)]
    return fields if len(fields) == len(ref.fields) else None


def _from_aliases(items: Any) -> set[str]:
    """The names a FROM list makes visible (aliases, else the relations' own names)."""
    out: set[str] = set()
    for item in items or ():
        if isinstance(item, ast.JoinExpr):
            out |= _from_aliases((item.larg, item.rarg))
            if item.alias is not None:
                out.add(item.alias.aliasname)
        elif isinstance(item, ast.RangeVar):
            out.add(item.alias.aliasname if item.alias is not None else item.relname)
        elif getattr(item, "alias", None) is not None:
            out.add(item.alias.aliasname)
    return out


def _refs(node: Any, inner: frozenset[str]) -> Iterator[tuple[list[str], bool]]:
    """Column references in an aggregate's arguments, as (names, nested): ``nested`` for one
    inside a subquery of the arguments. A nested reference qualified by one of the
    subquery's own relations belongs to a deeper level and is left out; so is a nested
    unqualified one (taken to be the subquery's own)."""
    if isinstance(node, tuple | list):
        for n in node:
            yield from _refs(n, inner)
        return
    if not isinstance(node, ast.Node):
        return
    if isinstance(node, ast.ColumnRef):
        names = _names(node)
        if names is not None and not (inner and (len(names) == 1 or names[-2] in inner)):
            yield names, bool(inner)
        return
    if isinstance(node, ast.SelectStmt):
        inner = inner | _from_aliases(node.fromClause)
    for attr in type(node).__slots__:
        yield from _refs(getattr(node, attr, None), inner)


def misplaced(call: ast.FuncCall, resolve: Callable[[list[str]], Level]) -> bool:
    """Whether PostgreSQL and DuckDB would evaluate this aggregate call in different query
    levels. PostgreSQL counts every column its arguments (with FILTER and ORDER BY) refer
    to, those inside a subquery of the arguments too; DuckDB binds a call to an outer
    query only from the references written directly in the arguments. A reference whose
    level is not known leaves the call as it is."""
    if call.over is not None or call.funcname[-1].sval not in AGGREGATES:
        return False
    direct: list[Level] = []
    nested: list[Level] = []
    for names, inside in _refs((call.args, call.agg_filter, call.agg_order), frozenset()):
        level = resolve(names)
        if level == "unknown":
            return False
        (nested if inside else direct).append(level)
    postgresql = bool(direct or nested) and all(lv == "outer" for lv in direct + nested)
    duckdb = bool(direct) and all(lv == "outer" for lv in direct)
    return postgresql != duckdb
