"""Row filters printed the way PostgreSQL 15's ``pg_get_expr`` prints them.

The lake keeps a publication row filter as the SQL text the user wrote. PostgreSQL keeps the
parsed expression and prints it back fully parenthesised with typed constants, e.g.
``(region = 'eu'::text)``; psql's ``\\dRp+`` and ``\\d`` show that text and a subscriber pastes
it into its initial ``COPY (SELECT ... WHERE <filter>)``. Printing the same form keeps those
outputs identical to PostgreSQL's for the common filters (comparisons, AND/OR/NOT, IS [NOT]
NULL, IN, BETWEEN, LIKE, simple function calls); anything else falls back to the stored text
in parentheses, which is still valid SQL for the copy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pglast import ast, parse_sql
from pglast.enums import A_Expr_Kind, BoolExprType, NullTestType

from decoding.pgtypes import ColumnType

#: Functions whose result type decides how a literal compared with them is typed.
_TEXT_FUNCS = frozenset(
    {"lower", "upper", "btrim", "ltrim", "rtrim", "substr", "substring", "left", "right"}
)


class _Unsupported(Exception):
    pass


def deparse_row_filter(
    text: str, columns: Mapping[str, ColumnType], quote_ident: Callable[[str], str]
) -> str:
    """``text`` as ``pg_get_expr(prqual, prrelid)`` would print it, best effort."""
    try:
        stmt = parse_sql(f"SELECT ({text})")[0].stmt
        assert isinstance(stmt, ast.SelectStmt) and stmt.targetList
        expr = stmt.targetList[0].val
        return _Printer(columns, quote_ident).expr(expr, top=True)
    except Exception:
        stripped = text.strip()
        return stripped if _wrapped(stripped) else f"({stripped})"


def _wrapped(s: str) -> bool:
    if not (s.startswith("(") and s.endswith(")")):
        return False
    depth = 0
    quote = False
    for i, ch in enumerate(s):
        if ch == "'":
            quote = not quote
        elif not quote and ch == "(":
            depth += 1
        elif not quote and ch == ")":
            depth -= 1
            if depth == 0 and i != len(s) - 1:
                return False
    return True


def _literal(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


class _Printer:
    def __init__(self, columns: Mapping[str, ColumnType], quote_ident: Callable[[str], str]):
        self.columns = columns
        self.quote_ident = quote_ident

    # The type PostgreSQL would resolve an operand to, as a format_type name (None: unknown).
    def type_of(self, node: ast.Node) -> str | None:
        if isinstance(node, ast.ColumnRef):
            name = node.fields[-1]
            if isinstance(name, ast.String) and name.sval in self.columns:
                return self.columns[name.sval].sql_name()
            return None
        if isinstance(node, ast.FuncCall):
            fname = node.funcname[-1].sval
            return "text" if fname in _TEXT_FUNCS else None
        if isinstance(node, ast.TypeCast):
            return None
        return None

    def const(self, node: ast.A_Const, other: str | None) -> str:
        if node.isnull:
            return "NULL"
        v = node.val
        if isinstance(v, ast.String):
            typ = _cast_name(other or "text")
            return f"{_literal(v.sval)}::{typ}"
        if isinstance(v, ast.Integer):
            if other == "numeric" or (other or "").startswith("numeric("):
                return f"({v.ival})::numeric"
            if v.ival < 0:
                return f"'{v.ival}'::integer"
            return str(v.ival)
        if isinstance(v, ast.Float):
            if v.fval.startswith("-"):
                return f"'{v.fval}'::numeric"
            return v.fval
        if isinstance(v, ast.Boolean):
            return "true" if v.boolval else "false"
        raise _Unsupported

    def operand(self, node: ast.Node, other: str | None) -> str:
        if isinstance(node, ast.A_Const):
            return self.const(node, other)
        if isinstance(node, ast.A_Expr) and node.kind == A_Expr_Kind.AEXPR_OP and node.lexpr:
            # unary minus on a constant folds into the constant, as the parser does
            op = node.name[-1].sval
            if op == "-" and node.lexpr is None:
                raise _Unsupported
        return self.expr(node)

    def expr(self, node: ast.Node, top: bool = False) -> str:
        if isinstance(node, ast.ColumnRef):
            f = node.fields[-1]
            if not isinstance(f, ast.String):
                raise _Unsupported
            return self.quote_ident(f.sval)
        if isinstance(node, ast.A_Const):
            return self.const(node, None)
        if isinstance(node, ast.BoolExpr):
            if node.boolop == BoolExprType.NOT_EXPR:
                return f"(NOT {self.expr(node.args[0])})"
            word = " AND " if node.boolop == BoolExprType.AND_EXPR else " OR "
            return "(" + word.join(self.expr(a) for a in node.args) + ")"
        if isinstance(node, ast.NullTest):
            what = "IS NULL" if node.nulltesttype == NullTestType.IS_NULL else "IS NOT NULL"
            return f"({self.expr(node.arg)} {what})"
        if isinstance(node, ast.FuncCall):
            if node.agg_star or node.over or node.agg_distinct:
                raise _Unsupported
            fname = ".".join(n.sval for n in node.funcname if n.sval != "pg_catalog")
            args = ", ".join(self.expr(a) for a in node.args or ())
            return f"{fname}({args})"
        if isinstance(node, ast.A_Expr):
            return self.a_expr(node)
        if isinstance(node, ast.TypeCast):
            raise _Unsupported
        raise _Unsupported

    def side(self, node: ast.Node, other: str | None) -> tuple[str, str | None]:
        t = self.type_of(node)
        if t is not None and t.startswith("character varying"):
            # varchar has no operators of its own: PostgreSQL compares it as text
            return f"({self.expr(node)})::text", "text"
        return self.operand(node, other), t

    def binary(self, op: str, left: ast.Node, right: ast.Node) -> str:
        lt, rt = self.type_of(left), self.type_of(right)
        lt_text = "text" if lt and lt.startswith("character varying") else lt
        rt_text = "text" if rt and rt.startswith("character varying") else rt
        ls, _ = self.side(left, rt_text)
        rs, _ = self.side(right, lt_text)
        return f"({ls} {op} {rs})"

    def a_expr(self, node: ast.A_Expr) -> str:
        kind = node.kind
        op = node.name[-1].sval if node.name else ""
        if kind == A_Expr_Kind.AEXPR_OP:
            if node.lexpr is None:
                raise _Unsupported
            return self.binary(op, node.lexpr, node.rexpr)
        if kind == A_Expr_Kind.AEXPR_LIKE:
            return self.binary("~~" if op == "~~" else "!~~", node.lexpr, node.rexpr)
        if kind == A_Expr_Kind.AEXPR_ILIKE:
            return self.binary("~~*" if op == "~~*" else "!~~*", node.lexpr, node.rexpr)
        if kind == A_Expr_Kind.AEXPR_IN and isinstance(node.rexpr, list | tuple):
            lt = self.type_of(node.lexpr)
            lt = "text" if lt and lt.startswith("character varying") else lt
            left, _ = self.side(node.lexpr, None)
            items = ", ".join(self.operand(x, lt) for x in node.rexpr)
            if op == "=":
                return f"({left} = ANY (ARRAY[{items}]))"
            return f"({left} <> ALL (ARRAY[{items}]))"
        if kind == A_Expr_Kind.AEXPR_BETWEEN and isinstance(node.rexpr, list | tuple):
            lo, hi = node.rexpr
            return f"({self.binary('>=', node.lexpr, lo)} AND {self.binary('<=', node.lexpr, hi)})"
        raise _Unsupported


def _cast_name(t: str) -> str:
    """How ruleutils names a constant's type after ``::`` (bpchar keeps its internal name)."""
    if t.startswith("character varying"):
        return "character varying"
    if t.startswith("character"):
        return "bpchar"
    if t.startswith("numeric"):
        return "numeric"
    return t
