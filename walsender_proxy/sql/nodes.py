"""Small pglast node builders for the DuckDB SQL the server generates.

The rewriter (:mod:`walsender_proxy.sql.rewrite`) and the input of literals
(:mod:`walsender_proxy.sql.literals`) both build DuckDB expressions as pglast trees that
pglast's deparser prints; they share these builders so that a cast or a constant is spelled
one way.
"""

from __future__ import annotations

from collections.abc import Sequence

from pglast import ast
from pglast.enums import A_Expr_Kind, CoercionForm


def name(v: str) -> ast.String:
    return ast.String(sval=v)


def call(fn: str, *args: ast.Node) -> ast.FuncCall:
    return ast.FuncCall(
        funcname=(name(fn),), args=tuple(args), funcformat=CoercionForm.COERCE_EXPLICIT_CALL
    )


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
    node: ast.Node, duck: str, *, array: bool = False, typmods: Sequence[int] = ()
) -> ast.TypeCast:
    tn = ast.TypeName(
        names=(name(duck),),
        typmods=tuple(int_const(m) for m in typmods) or None,
        typemod=-1,
        arrayBounds=(ast.Integer(ival=-1),) if array else None,
    )
    return ast.TypeCast(arg=node, typeName=tn)


def op(operator: str, left: ast.Node | None, right: ast.Node) -> ast.A_Expr:
    return ast.A_Expr(kind=A_Expr_Kind.AEXPR_OP, name=(name(operator),), lexpr=left, rexpr=right)
