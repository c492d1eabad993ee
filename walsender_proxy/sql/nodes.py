"""Small pglast node builders for the DuckDB SQL the server generates.

The rewriter (:mod:`walsender_proxy.sql.rewrite`) and the input of literals
(:mod:`walsender_proxy.sql.literals`) both build DuckDB expressions as pglast trees that
pglast's deparser prints; they share these builders so that a cast or a constant is spelled
one way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pglast import ast
from pglast.enums import A_Expr_Kind, CoercionForm
from pglast.stream import RawStream
from pglast.visitors import Skip, Visitor

#: Words DuckDB's parser reserves that PostgreSQL's does not (``duckdb_keywords()``'s
#: reserved and type_function categories less PostgreSQL's): a table or column named
#: ``at`` or ``map`` is an ordinary name to PostgreSQL, so DuckDB must see it quoted.
_DUCKDB_ONLY_KEYWORDS = frozenset(
    ["anti", "asof", "at", "by", "columns", "describe", "generated", "glob", "lambda", "map", "pivot", "pivot_longer", "pivot_wider", "positional", "qualify", "semi", "show", "struct", "summarize", "try_cast", "tuple", "unpack", "unpivot"]
)


class DuckStream(RawStream):
    """pglast's deparser, quoting the names DuckDB would read as keywords."""

    def _print_scalar(self, value: object, is_name: bool, is_symbol: bool) -> None:
        if is_name and not is_symbol and isinstance(value, str) and value in _DUCKDB_ONLY_KEYWORDS:
            self.write(f'"{value}"')
        else:
            super()._print_scalar(value, is_name, is_symbol)


def deparse(node: ast.Node) -> str:
    """``node`` as DuckDB SQL text."""
    return DuckStream()(node)


def name(v: str) -> ast.String:
    return ast.String(sval=v)


def call(fn: str, *args: ast.Node) -> ast.FuncCall:
    return ast.FuncCall(
        funcname=(name(fn),), args=tuple(args), funcformat=CoercionForm.COERCE_EXPLICIT_CALL
    )


def colref(*names: str) -> ast.ColumnRef:
    return ast.ColumnRef(fields=tuple(name(n) for n in names))


def int_const(v: int) -> ast.A_Const:
    """An integer constant. pglast's Integer holds a C int: wider values print from a Float
    node, which deparses to the same digits."""
    if -(2**31) <= v < 2**31:
        return ast.A_Const(isnull=False, val=ast.Integer(ival=v))
    return ast.A_Const(isnull=False, val=ast.Float(fval=str(v)))


def str_const(v: str) -> ast.A_Const:
    return ast.A_Const(isnull=False, val=ast.String(sval=v))


def bool_const(v: bool) -> ast.A_Const:
    return ast.A_Const(isnull=False, val=ast.Boolean(boolval=v))


def null_const() -> ast.A_Const:
    return ast.A_Const(isnull=True)


def cast(
    node: ast.Node, duck: str, *, array: bool | int = False, typmods: Sequence[int] = ()
) -> ast.TypeCast:
    """``node::duck``; ``array`` a bool or the number of list levels (``[][]`` for 2)."""
    tn = ast.TypeName(
        names=(name(duck),),
        typmods=tuple(int_const(m) for m in typmods) or None,
        typemod=-1,
        arrayBounds=tuple(ast.Integer(ival=-1) for _ in range(int(array))) or None,
    )
    return ast.TypeCast(arg=node, typeName=tn)


def op(operator: str, left: ast.Node | None, right: ast.Node) -> ast.A_Expr:
    return ast.A_Expr(kind=A_Expr_Kind.AEXPR_OP, name=(name(operator),), lexpr=left, rexpr=right)


def clear_locations(node: object) -> None:
    """Every ``location`` in the tree set to -1: a statement made from stored text (a
    view's query, a function's body) reports no position in the query that uses it, as
    PostgreSQL reports none there."""
    if isinstance(node, tuple | list):
        for n in node:
            clear_locations(n)
        return
    if not isinstance(node, ast.Node):
        return
    for attr in type(node).__slots__:
        value = getattr(node, attr, None)
        if attr == "location" and isinstance(value, int):
            setattr(node, attr, -1)
        elif isinstance(value, ast.Node | tuple | list):
            clear_locations(value)


def all_nodes(node: Any) -> Iterator[ast.Node]:
    """Every node of a tree, parents before their children (subqueries included)."""
    if isinstance(node, tuple | list):
        for x in node:
            yield from all_nodes(x)
    elif isinstance(node, ast.Node):
        yield node
        for name in node:
            yield from all_nodes(getattr(node, name))


def level_nodes(node: Any, prune: Callable[[Any], bool] | None = None) -> Iterator[Any]:
    """Every node of ``node``'s query level, ``node`` included: subqueries are not entered,
    nor the nodes ``prune`` picks (they are yielded, their insides are not)."""
    if node is None or isinstance(node, ast.SubLink | ast.SelectStmt | ast.RangeSubselect):
        return
    if isinstance(node, tuple | list):
        for x in node:
            yield from level_nodes(x, prune)
        return
    if not isinstance(node, ast.Node):
        return
    yield node
    if prune is not None and prune(node):
        return
    for attr in node:
        yield from level_nodes(getattr(node, attr), prune)


#: PostgreSQL's set-returning built-in functions (in a SELECT list or FROM; refused where
#: PostgreSQL refuses a set, as in VALUES or as a function's argument).
SET_RETURNING = frozenset({
    "generate_series", "generate_subscripts", "unnest", "regexp_matches", "regexp_split_to_table",
    "string_to_table", "json_array_elements", "json_array_elements_text", "jsonb_array_elements",
    "jsonb_array_elements_text", "json_each", "json_each_text", "jsonb_each", "jsonb_each_text",
    "json_object_keys", "jsonb_object_keys", "json_populate_recordset", "jsonb_populate_recordset",
    "json_to_recordset", "jsonb_to_recordset", "jsonb_path_query", "pg_get_keywords",
    "pg_options_to_table", "_pg_expandarray", "aclexplode", "pg_listening_channels",
    "txid_snapshot_xip", "pg_snapshot_xip", "pg_get_publication_tables", "ts_stat", "ts_parse",
    "ts_token_type", "pg_logical_slot_get_changes", "pg_logical_slot_peek_changes",
})  # fmt: skip


class _SetReturning(Visitor):  # type: ignore[misc]
    """Finds the first call of a set-returning function, not looking into subqueries."""

    def __init__(self) -> None:
        super().__init__()
        self.found: ast.FuncCall | None = None

    def visit_SubLink(self, ancestors: Any, node: ast.SubLink) -> Any:
        return Skip

    def visit_FuncCall(self, ancestors: Any, node: ast.FuncCall) -> Any:
        if self.found is None and node.funcname[-1].sval.lower() in SET_RETURNING:
            self.found = node
        return None


def set_returning_call(nodes: Sequence[Any]) -> ast.FuncCall | None:
    """The first set-returning function call among ``nodes`` (outside subqueries)."""
    v = _SetReturning()
    for n in nodes:
        if n is not None and not isinstance(n, ast.SetToDefault):
            v(n)
        if v.found is not None:
            return v.found
    return None
