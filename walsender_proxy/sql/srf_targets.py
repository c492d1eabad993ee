"""A set-returning function's columns in a SELECT list, ``(f(args)).*`` or ``(f(args)).col``,
as PostgreSQL evaluates them: after the rest of the query (FROM, WHERE, GROUP BY and the
aggregates, HAVING), once per row it yields, each row repeated for every row of the
function's set (the planner's ProjectSet above the Agg).

DuckDB has no such node, so the query is turned inside out: the rest of the query becomes
a subquery yielding the other SELECT-list items and the function's arguments, and the
function is called on each of its rows in a LATERAL join, which drops a row whose set is
empty as ProjectSet does. PostgreSQL 16's subscribers need this for their table list
(``SELECT (pg_get_publication_tables(VARIADIC array_agg(pubname::text))).* FROM
pg_publication WHERE …``).

Only one such call per SELECT list is taken (written once or several times, as in
``(f(x)).a, (f(x)).b``): several different ones run in lockstep in PostgreSQL (the longest
set decides the rows, the others padded with NULLs), which a join does not do.
DISTINCT, LIMIT, OFFSET and an ORDER BY of output columns (by position or name) act on the
expanded rows (PostgreSQL may sort below the expansion when the keys are not the function's,
which orders the same rows the same way up to ties); an ORDER BY of other expressions,
DISTINCT ON and window clauses are refused rather than placed by guesswork.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from pglast import ast
from pglast.enums import SetOperation
from pglast.stream import RawStream
from pglast.visitors import Skip, Visitor

from walsender_proxy.sql.agg_levels import AGGREGATES
from walsender_proxy.sql.nodes import name as _s
from walsender_proxy.sql.nodes import set_returning_call
from walsender_proxy.sql.sql_errors import SqlError

_INNER = "pgc_ps_in"
_FUNC = "pgc_ps_fn"


#: Set-returning functions the rewriter evaluates in a SELECT list itself (DuckDB's unnest,
#: which runs several in lockstep as PostgreSQL does): left where they are.
IN_LIST = frozenset({"_pg_expandarray", "generate_series", "generate_subscripts", "unnest", "pg_partition_ancestors"})


def _srf_fields(val: Any) -> tuple[ast.FuncCall, tuple[Any, ...]] | None:
    """``(f(args)).*`` or ``(f(args)).col`` of a set-returning ``f``: the call and the fields."""
    if not (isinstance(val, ast.A_Indirection) and isinstance(val.arg, ast.FuncCall) and val.indirection):
        return None
    if set_returning_call([val.arg]) is not val.arg or val.arg.funcname[-1].sval.lower() in IN_LIST:
        return None
    if not all(isinstance(i, ast.String | ast.A_Star) for i in val.indirection) or len(val.indirection) != 1:
        return None
    return val.arg, tuple(val.indirection)


class _FieldsInside(Visitor):  # type: ignore[misc]
    """The ``(f(args)).col`` of set-returning calls inside an expression (not inside its
    subqueries), each replaced by ``replacement(col)`` when one is given."""

    def __init__(self, replacement: Callable[[str], ast.Node] | None = None) -> None:
        super().__init__()
        self.found: list[tuple[ast.FuncCall, tuple[Any, ...]]] = []
        self.replacement = replacement

    def visit_SubLink(self, ancestors: Any, node: ast.SubLink) -> Any:
        return Skip

    def visit_A_Indirection(self, ancestors: Any, node: ast.A_Indirection) -> Any:
        fields = _srf_fields(node)
        if fields is None or isinstance(fields[1][0], ast.A_Star):
            return None
        self.found.append(fields)
        return self.replacement(fields[1][0].sval) if self.replacement is not None else Skip


class _ReadsMore(Visitor):  # type: ignore[misc]
    """Whether an expression reads a column other than the lowered call's, or aggregates."""

    def __init__(self) -> None:
        super().__init__()
        self.more = False

    def visit_ColumnRef(self, ancestors: Any, node: ast.ColumnRef) -> Any:
        first = node.fields[0]
        self.more |= not (isinstance(first, ast.String) and first.sval == _FUNC)

    def visit_FuncCall(self, ancestors: Any, node: ast.FuncCall) -> Any:
        self.more |= node.funcname[-1].sval.lower() in AGGREGATES or node.over is not None or bool(node.agg_star)


def _reads_more(val: Any) -> bool:
    v = _ReadsMore()
    v(ast.ResTarget(val=val))
    return v.more


def _inside(val: Any) -> list[tuple[ast.FuncCall, tuple[Any, ...]]]:
    v = _FieldsInside()
    v(ast.ResTarget(val=val))
    return v.found


def _constant(node: Any) -> bool:
    """A literal (maybe cast): kept in the call itself, so an untyped literal still takes its
    type from the function's parameter, as it would in PostgreSQL."""
    while isinstance(node, ast.TypeCast):
        node = node.arg
    return isinstance(node, ast.A_Const)


def _output_key(node: Any, names: set[str]) -> bool:
    """An ORDER BY key naming an output column: its position, or one of ``names``."""
    if isinstance(node, ast.A_Const) and isinstance(node.val, ast.Integer):
        return True
    return isinstance(node, ast.ColumnRef) and len(node.fields) == 1 and isinstance(node.fields[0], ast.String) and node.fields[0].sval in names


def _fail(message: str, node: Any) -> SqlError:
    loc = getattr(node, "location", None)
    return SqlError("0A000", message, loc + 1 if isinstance(loc, int) and loc >= 0 else None)


def lower(stmt: ast.SelectStmt, colname: Callable[[Any], str]) -> ast.SelectStmt | None:
    """``stmt`` with its SELECT list's set-returning call moved to a LATERAL FROM item, or
    None when its SELECT list has no ``(f(…)).…`` of a set-returning function.
    ``colname(expr)`` is the name PostgreSQL gives an unnamed SELECT-list item."""
    if stmt.op != SetOperation.SETOP_NONE or stmt.valuesLists:
        return None
    targets = list(stmt.targetList or ())
    found = []
    for i, rt in enumerate(targets):
        top = _srf_fields(rt.val)
        found += [(i, top)] if top is not None else [(i, f) for f in _inside(rt.val)]
    if not found:
        return None
    call = found[0][1][0]
    # (the same call written twice, (f(x)).a and (f(x)).b, runs in lockstep with itself:
    # one call's rows)
    calls = {RawStream()(f[0]) for _, f in found}
    if len(calls) > 1 or set_returning_call([rt.val for i, rt in enumerate(targets) if i not in {j for j, _ in found}]) is not None:
        raise _fail("more than one set-returning function in a SELECT list with (f(…)).* is not supported by walsender-proxy", call)
    distinct_on = bool(stmt.distinctClause) and any(d is not None for d in stmt.distinctClause)
    names = {rt.name or colname(rt.val) for i, rt in enumerate(targets) if _srf_fields(rt.val) is None or rt.name}
    names |= {f[1][0].sval for _, f in found if isinstance(f[1][0], ast.String)}
    by_output = all(_output_key(s.node, names) for s in stmt.sortClause or ())
    for clause, what in (
        (not by_output, "ORDER BY other than output columns"), (distinct_on, "DISTINCT ON"), (stmt.windowClause, "WINDOW"),
        (stmt.lockingClause, "FOR UPDATE/SHARE"),
    ):  # fmt: skip
        if clause:
            raise _fail(f"a set-returning function's (f(…)).* in a SELECT list with {what} is not supported by walsender-proxy", call)
    inner_targets: list[ast.ResTarget] = []
    outer_targets: list[ast.ResTarget] = []
    args = []
    for n, a in enumerate(call.args or ()):
        if _constant(a):
            args.append(a)
            continue
        inner_targets.append(ast.ResTarget(name=f"pgc_a{n}", val=a))
        args.append(ast.ColumnRef(fields=(_s(_INNER), _s(f"pgc_a{n}"))))
    new_call = copy.copy(call)
    new_call.args = tuple(args) if args else None
    at = {j for j, _ in found}
    for i, rt in enumerate(targets):
        top = _srf_fields(rt.val)
        if top is not None:
            field = top[1][0]
            last = ast.A_Star() if isinstance(field, ast.A_Star) else _s(field.sval)
            outer_targets.append(ast.ResTarget(name=None if isinstance(field, ast.A_Star) else rt.name, val=ast.ColumnRef(fields=(_s(_FUNC), last))))
            continue
        if i in at:  # (an expression over the call's fields: evaluated over the joined rows)
            name = rt.name or colname(rt.val)
            _FieldsInside(lambda col: ast.ColumnRef(fields=(_s(_FUNC), _s(col))))(rt)
            if _reads_more(rt.val):
                raise _fail("an expression over a set-returning function's field and other columns or aggregates is not supported by walsender-proxy", call)
            outer_targets.append(ast.ResTarget(name=name, val=rt.val))
            continue
        inner_targets.append(ast.ResTarget(name=f"pgc_t{i}", val=rt.val))
        outer_targets.append(ast.ResTarget(name=rt.name or colname(rt.val), val=ast.ColumnRef(fields=(_s(_INNER), _s(f"pgc_t{i}")))))
    function = ast.RangeFunction(lateral=True, functions=((new_call, None),), alias=ast.Alias(aliasname=_FUNC))
    if not inner_targets and not stmt.fromClause and stmt.whereClause is None and not stmt.groupClause and stmt.havingClause is None:
        from_items: tuple[Any, ...] = (function,)  # (a call of constants, nothing around it)
    else:
        inner = ast.SelectStmt(
            targetList=tuple(inner_targets) or None, fromClause=stmt.fromClause, whereClause=stmt.whereClause,
            groupClause=stmt.groupClause, groupDistinct=stmt.groupDistinct, havingClause=stmt.havingClause,
            op=SetOperation.SETOP_NONE,
        )  # fmt: skip
        from_items = (ast.RangeSubselect(subquery=inner, alias=ast.Alias(aliasname=_INNER)), function)
    # (DISTINCT, ORDER BY output columns and LIMIT/OFFSET act on the expanded rows)
    return ast.SelectStmt(
        targetList=tuple(outer_targets), fromClause=from_items, withClause=stmt.withClause, distinctClause=stmt.distinctClause,
        sortClause=stmt.sortClause,
        limitCount=stmt.limitCount, limitOffset=stmt.limitOffset, limitOption=stmt.limitOption, op=SetOperation.SETOP_NONE,
    )
