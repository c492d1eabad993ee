"""Expressions over one table's columns, analysed ("cooked") as PostgreSQL 15's
``transformExpr`` analyses them, printed as ``ruleutils.c`` prints them, and translated to a
DuckDB expression with PostgreSQL's verdict: the CHECK constraints of a table
(:mod:`walsender_proxy.sql.check_sql`) and the row filters of a publication
(:mod:`walsender_proxy.sql.rowfilter_sql`).

Columns are named by attnum in every text (:data:`decoding.catalog.CHECK_MARK`), as
PostgreSQL keeps a Var, so a renamed column prints under its new name. Only forms that can
be printed byte for byte as PostgreSQL prints them *and* evaluated in plain DuckDB as
PostgreSQL evaluates them are taken: columns of boolean, integer, floating-point,
``numeric(p,s)``, ``text``, ``varchar`` and ``date`` types compared (``= <> < > <= >=``,
``IS [NOT] DISTINCT FROM``) with one another or with constants, integer ``/`` and ``%`` by
a constant other than 0 and -1 (no form that can raise an error: see ``_duck_arithmetic``),
text ``||``, ``COALESCE``, ``AND``/``OR``/``NOT``, ``IS [NOT] NULL`` (of a
column of any type), ``[NOT] IN (constants)``, ``= ANY``/``<> ALL`` of an array literal or
``ARRAY[…]`` of constants, ``[NOT] BETWEEN``, ``[NOT] LIKE`` with a constant pattern,
``length()``/``char_length()``/``character_length()`` of a string column,
``array_length(col, n)`` (a constant ``n``) and ``cardinality(col)`` of an array column, and casts
between those types that DuckDB computes exactly (never a length coercion). Another form is refused with 0A000 by the
caller; PostgreSQL's own errors (another table, a subquery, an aggregate, a window
function, a set-returning function, a non-boolean expression, an unknown column) are
raised with its SQLSTATE, text and position. What differs between the two uses (the
messages naming the clause, what PostgreSQL itself refuses in a row filter) is an
:class:`ExprKind`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from pglast import ast, enums

from decoding.catalog import CHECK_MARK, EnumType, Table
from decoding.errors import PgError
from decoding.pgoutput.rowfilter import lazy_bool
from decoding.pgtypes import ENUM, parse_type
from decoding.pgvalues import decode_text_arrow
from walsender_proxy.backend import coercion_data
from walsender_proxy.sql import default_exprs as dx
from walsender_proxy.sql.ddl_names import type_text
from walsender_proxy.sql.default_exprs import Cast, Const, Func, Op, Ty
from walsender_proxy.sql.pgcatalog_defs import quote_ident
from walsender_proxy.sql.sql_errors import SqlError


class Unsupported(Exception):
    """A form the proxy does not take (the caller's 0A000 names it)."""


@dataclass(frozen=True, slots=True)
class ExprKind:
    """What differs between a CHECK constraint and a publication row filter: the clause
    PostgreSQL's messages name (``ParseExprKindName`` and ``coerce_to_boolean``'s
    construct), and what a row filter refuses beyond the parser
    (``check_simple_rowfilter_expr``)."""

    #: "X functions are not allowed in <clause>"
    clause: str
    #: "argument of <construct> must be type boolean"
    construct: str
    #: a publication row filter: PostgreSQL's "invalid publication WHERE expression"
    row_filter: bool = False
    #: a generated column's expression (EXPR_KIND_GENERATED_COLUMN)
    generated: bool = False
    #: an index's key expression or predicate ("index expression", "index predicate"):
    #: never run by the lake (a plain index is metadata), so lower() and upper() may be in it
    index: str = ""

    def subquery(self, location: int) -> PgError:
        if self.index:
            return SqlError("0A000", f"cannot use subquery in {self.index}", _at(location))
        if self.row_filter:
            return invalid_row_filter(location, _ONLY_SIMPLE)
        if self.generated:
            return SqlError("0A000", "cannot use subquery in column generation expression", _at(location))
        return PgError("0A000", "cannot use subquery in check constraint")

    def system_column(self, name: str, location: int) -> PgError:
        if self.row_filter:
            return invalid_row_filter(location, "System columns are not allowed.")
        if self.generated:
            return SqlError("42P10", f'cannot use system column "{name}" in column generation expression', _at(location))
        return PgError("42P10", f'system column "{name}" reference in check constraint is invalid')


CHECK = ExprKind("check constraints", "CHECK")
ROW_FILTER = ExprKind("WHERE", "PUBLICATION WHERE", row_filter=True)
GENERATED = ExprKind("column generation expressions", "GENERATED AS", generated=True)
INDEX_EXPRESSION = ExprKind("index expressions", "index expression", index="index expression")
INDEX_PREDICATE = ExprKind("index predicates", "WHERE", index="index predicate")

_ONLY_SIMPLE = (
    "Only columns, constants, built-in operators, built-in data types, built-in collations, "
    "and immutable built-in functions are allowed."
)
MUTABLE = "User-defined or built-in mutable functions are not allowed."


def _at(location: int | None) -> int | None:
    return location + 1 if isinstance(location, int) and location >= 0 else None


def invalid_row_filter(location: int | None, detail: str) -> PgError:
    """``check_simple_rowfilter_expr``'s error."""
    return SqlError("0A000", "invalid publication WHERE expression", _at(location), detail=detail)


def expr_location(raw: Any) -> int | None:
    """``exprLocation`` of a raw expression: its leftmost token."""
    found: list[int] = []

    def visit(n: Any) -> None:
        if isinstance(n, tuple | list):
            for x in n:
                visit(x)
        elif isinstance(n, ast.Node):
            loc = getattr(n, "location", None)
            if isinstance(loc, int) and loc >= 0:
                found.append(loc)
            for attr in n:
                if attr != "location":
                    visit(getattr(n, attr))

    visit(raw)
    return min(found) if found else None


# ---------------------------------------------------------------------------------------------
# the typed tree: default_exprs' nodes plus these


@dataclass(slots=True)
class Var:
    attnum: int
    name: str
    ty: Ty


@dataclass(slots=True)
class BoolX:
    """AND / OR (two or more arguments) or NOT (one)."""

    op: str
    args: list[Any]
    ty: Ty = field(default_factory=lambda: Ty("bool"))


@dataclass(slots=True)
class NullT:
    arg: Any
    is_null: bool
    ty: Ty = field(default_factory=lambda: Ty("bool"))


@dataclass(slots=True)
class ArrayE:
    elems: list[Any]
    ty: Ty


@dataclass(slots=True)
class Distinct:
    """``left IS DISTINCT FROM right`` (DistinctExpr: the ``=`` operator's arguments)."""

    left: Any
    right: Any
    ty: Ty = field(default_factory=lambda: Ty("bool"))


@dataclass(slots=True)
class Coalesce:
    """``COALESCE(args)`` (CoalesceExpr: the arguments coerced to their common type)."""

    args: list[Any]
    ty: Ty


@dataclass(slots=True)
class SAOp:
    """``left op ANY|ALL (array)`` (ScalarArrayOpExpr)."""

    op: str
    use_or: bool
    left: Any
    right: Any
    ty: Ty = field(default_factory=lambda: Ty("bool"))


#: The column types whose values DuckDB compares as PostgreSQL does (C collation for the
#: strings; numeric only with a precision DuckDB's DECIMAL holds).
_COMPARABLE = frozenset({"bool", "int2", "int4", "int8", "float4", "float8", "numeric", "text", "varchar", "date"})
_STRINGS = frozenset({"text", "varchar"})
_PREFERRED = frozenset({"bool", "float8", "text", "timestamptz", "interval"})
_DUCK_TYPES = {
    "bool": "BOOLEAN",
    "int2": "SMALLINT",
    "int4": "INTEGER",
    "int8": "BIGINT",
    "float4": "FLOAT",
    "float8": "DOUBLE",
    "text": "VARCHAR",
    "varchar": "VARCHAR",
    "date": "DATE",
}


@dataclass(frozen=True, slots=True)
class EnumTy(Ty):
    """A user enum's type (its name as format_type prints it), with its labels: compared
    for equality only (``=``, ``<>``, IN), where a label's text is its identity."""

    labels: tuple[str, ...] = ()


class Cooker:
    """transformExpr over one table's columns (its only range table entry); ``enums``: the
    catalog's, for columns of an enum."""

    def __init__(self, t: Table, kind: ExprKind, enums: Mapping[int, EnumType] | None = None) -> None:
        self.t = t
        self.kind = kind
        self.enums = enums or {}

    def column(self, ref: ast.ColumnRef) -> Var:
        fields = list(ref.fields)
        at = _at(ref.location)
        if any(isinstance(f, ast.A_Star) for f in fields):
            if self.kind.generated:
                raise SqlError(
                    "42P17", "cannot use whole-row variable in column generation expression", at,
                    detail="This would cause the generated column to depend on its own value.",
                )  # fmt: skip
            raise Unsupported("with a whole-row reference")
        names = [f.sval for f in fields]
        if len(names) > 1:
            qual = names[:-1]
            ok = qual[-1] == self.t.name and (len(qual) == 1 or (len(qual) == 2 and qual[0] == self.t.schema))
            if len(qual) > 2:
                raise Unsupported("with a column named by database")
            if not ok:
                raise SqlError("42P01", f'missing FROM-clause entry for table "{qual[-1]}"', at)
        col = self.t.column(names[-1])
        if col is None and self.kind.generated and names == [self.t.name]:  # (the table's row)
            raise SqlError(
                "42P17", "cannot use whole-row variable in column generation expression", at,
                detail="This would cause the generated column to depend on its own value.",
            )  # fmt: skip
        if col is None:
            if names[-1] in _SYSTEM_COLUMNS:
                if names[-1] == "tableoid" and self.kind.generated:
                    raise Unsupported("naming tableoid")
                if names[-1] == "tableoid" and not self.kind.row_filter:
                    raise Unsupported("naming tableoid")
                raise self.kind.system_column(names[-1], ref.location)
            shown = ".".join(names) if len(names) > 1 else f'"{names[-1]}"'
            raise SqlError("42703", f"column {shown} does not exist", at)
        ct = col.type
        if self.kind.generated and col.generation is not None:  # (check_nested_generated)
            raise SqlError(
                "42P17", f'cannot use generated column "{col.name}" in column generation expression', at,
                detail="A generated column cannot reference another generated column.",
            )  # fmt: skip
        if self.kind.row_filter and (ct.domain or ct.is_enum):  # (check_simple_rowfilter_expr)
            raise invalid_row_filter(ref.location, "User-defined types are not allowed.")
        en = self.enums.get(ct.base.oid) if ct.is_enum and not ct.is_array else None
        if en is not None:
            shown = quote_ident(en.name) if en.schema == "public" else f"{quote_ident(en.schema)}.{quote_ident(en.name)}"
            return Var(col.attnum, col.name, EnumTy(shown, labels=en.names))
        return Var(col.attnum, col.name, Ty(("_" if ct.is_array else "") + ct.base.name, ct.typmod))

    def _enum_label(self, ty: EnumTy, n: Any) -> Const:
        """An untyped literal beside an enum value, read by enum_in (22P02)."""
        if not (isinstance(n, Const) and n.ty == dx.UNKNOWN and n.text is not None):
            if isinstance(n, Var) and n.ty == ty:
                return n  # type: ignore[return-value]
            raise Unsupported("comparing a value of an enum type with another type")
        if n.text not in ty.labels:
            raise PgError("22P02", f'invalid input value for enum {ty.name}: "{n.text}"')
        return Const(ty, n.text)

    def _enum_operator(self, op: str, left: Any, right: Any) -> Op:
        if op not in ("=", "<>"):
            raise Unsupported(f"with operator {op} between enum values")
        ty = left.ty if isinstance(left.ty, EnumTy) else right.ty
        return Op(op, self._enum_label(ty, left), self._enum_label(ty, right), Ty("bool"))

    def expr(self, raw: Any) -> Any:
        if isinstance(raw, ast.ColumnRef):
            return self.column(raw)
        if isinstance(raw, ast.A_Const):
            if raw.isnull:
                return Const(dx.UNKNOWN, None)
            return dx._const(raw)
        if isinstance(raw, ast.TypeCast):
            if not isinstance(raw.arg, ast.A_Const):
                return self.cast(raw)
            try:
                return dx._type_cast(raw)
            except dx._Unsupported as e:
                raise Unsupported(str(e)) from None
        if isinstance(raw, ast.BoolExpr):
            op = {enums.BoolExprType.AND_EXPR: "AND", enums.BoolExprType.OR_EXPR: "OR", enums.BoolExprType.NOT_EXPR: "NOT"}[raw.boolop]
            return BoolX(op, [self.boolean(a, op) for a in raw.args])
        if isinstance(raw, ast.NullTest):
            if raw.argisrow:
                raise Unsupported("with a row IS NULL test")
            arg = self.expr(raw.arg)
            return NullT(arg, raw.nulltesttype == enums.NullTestType.IS_NULL)
        if isinstance(raw, ast.A_Expr):
            return self.a_expr(raw)
        if isinstance(raw, ast.CoalesceExpr):
            return self.coalesce(raw)
        if isinstance(raw, ast.SubLink):
            raise self.kind.subquery(raw.location)
        if isinstance(raw, ast.FuncCall):
            return self.func(raw)
        if isinstance(raw, ast.ParamRef):
            raise SqlError("42P02", f"there is no parameter ${raw.number}", _at(raw.location))
        raise Unsupported(f"with {type(raw).__name__}")

    def cast(self, tc: ast.TypeCast) -> Any:
        """An explicit cast of an expression: PostgreSQL's pathway (42846 if none); a row
        filter refuses an I/O conversion as PostgreSQL does."""

        if self.kind.row_filter and _system_column(tc.arg) and _string_type(tc.typeName):
            # (the walker meets the I/O conversion above the column first)
            raise invalid_row_filter(expr_location(tc), _ONLY_SIMPLE)
        arg = self.expr(tc.arg)
        try:
            target = dx._ty(parse_type(type_text(tc.typeName)))
        except PgError as e:
            if e.sqlstate == "0A000":
                raise Unsupported(f"with a cast to {'.'.join(n.sval for n in tc.typeName.names)}") from None
            raise
        source = arg.ty.name
        if source == target.name and target.typmod < 0:
            return arg  # (coerce_type: nothing to do, nothing printed)
        how = None if source.startswith("_") or target.name.startswith("_") else dx._pathway(source, target.name, True)
        if how is None:
            raise SqlError("42846", f"cannot cast type {dx._shown(source)} to {dx.format_type(target)}", _at(tc.location))
        if how == "io" and self.kind.row_filter:
            raise invalid_row_filter(expr_location(tc), _ONLY_SIMPLE)
        if self.kind.generated and _stable_cast(source, target.name, how):
            raise PgError("42P17", "generation expression is not immutable")
        try:
            return dx._coerce(arg, target, explicit=True)
        except dx._Unsupported as e:
            raise Unsupported(str(e)) from None

    def boolean(self, raw: Any, context: str | None = None) -> Any:
        """coerce_to_boolean of an argument of AND/OR/NOT (``context``), or of the whole
        expression (the kind's construct: ``CHECK``, ``PUBLICATION WHERE``)."""
        n = self.expr(raw)
        return _to_boolean(n, context or self.kind.construct, expr_location(raw))

    def func(self, fc: ast.FuncCall) -> Any:
        names = [n.sval for n in fc.funcname]
        if len(names) == 2 and names[0] == "pg_catalog":
            names = names[1:]
        name = names[-1]
        at = _at(fc.location)
        kinds = coercion_data.FUNCTION_KINDS.get(name, "") if len(names) == 1 else ""
        clause = self.kind.clause
        if fc.over is not None:
            raise SqlError("42P20", f"window functions are not allowed in {clause}", at)
        if kinds == "a":
            raise SqlError("42803", f"aggregate functions are not allowed in {clause}", at)
        if kinds == "w":
            raise SqlError("42809", f"window function {name} requires an OVER clause", at)
        if kinds == "r":
            raise SqlError("0A000", f"set-returning functions are not allowed in {clause}", at)
        if fc.agg_star or fc.agg_distinct or fc.agg_filter is not None or fc.agg_order or fc.func_variadic:
            raise Unsupported(f"calling {name}() so")
        if len(names) == 1 and name in ("length", "char_length", "character_length") and len(fc.args or ()) == 1:
            arg = self.expr(fc.args[0])
            if not (isinstance(arg, Var) and arg.ty.name in _STRINGS):
                raise Unsupported(f"calling {name}() of anything but a text or varchar column")
            if arg.ty.name != "text":
                arg = Cast(arg, Ty("text"), "relabel", False)
            return Func(name, [arg], Ty("int4"), False)
        if len(names) == 1 and name in ("array_length", "cardinality") and len(fc.args or ()) == (2 if name == "array_length" else 1):
            arr = self.expr(fc.args[0])
            if not arr.ty.name.startswith("_") and arr.ty.name != "unknown":  # (anyarray takes none of these)
                args = ", ".join(dx._shown(self.expr(x).ty.name) for x in fc.args or ())
                raise SqlError(
                    "42883", f"function {name}({args}) does not exist", at,
                    hint="No function matches the given name and argument types. You might need to add explicit type casts.",
                )  # fmt: skip
            if not (isinstance(arr, Var) and arr.ty.name.startswith("_")):
                raise Unsupported(f"calling {name}() of anything but an array column")
            if name == "cardinality":
                return Func(name, [arr], Ty("int4"), False)
            dim = self.expr(fc.args[1])
            if not (isinstance(dim, Const) and dim.ty.name == "int4" and dim.text is not None):
                raise Unsupported(f"calling {name}() with a dimension that is not an integer constant")
            return Func(name, [arr, dim], Ty("int4"), False)
        if self.kind.index and len(names) == 1 and name in ("lower", "upper") and len(fc.args or ()) == 1:
            arg = self.expr(fc.args[0])
            column = arg.arg if isinstance(arg, Cast) and arg.ty.name == "text" else arg  # (pg_dump's (c)::text)
            if not (isinstance(column, Var) and column.ty.name in _STRINGS):
                raise Unsupported(f"calling {name}() of anything but a text or varchar column")
            if arg.ty.name != "text":
                arg = Cast(arg, Ty("text"), "relabel", False)
            return Func(name, [arg], Ty("text"), False)
        if self.kind.index and kinds and "i" not in kinds:
            raise PgError("42P17", f"functions in {self.kind.index} must be marked IMMUTABLE")
        if self.kind.row_filter and kinds and "i" not in kinds:
            raise invalid_row_filter(fc.location, MUTABLE)  # (every overload stable or volatile)
        if self.kind.generated and kinds and "i" not in kinds:
            raise PgError("42P17", "generation expression is not immutable")
        if len(names) == 1 and name not in coercion_data.FUNCTIONS:
            args = ", ".join(dx._shown(self.expr(a).ty.name) for a in fc.args or ())
            raise SqlError(
                "42883",
                f"function {name}({args}) does not exist",
                at,
                hint="No function matches the given name and argument types. You might need to add explicit type casts.",
            )
        raise Unsupported(f"calling {'.'.join(names)}()")

    def a_expr(self, e: ast.A_Expr) -> Any:
        kind = e.kind
        K = enums.A_Expr_Kind
        op = e.name[-1].sval if e.name else ""
        if len(e.name or ()) != 1:
            raise Unsupported("with a qualified operator")
        if kind == K.AEXPR_OP:
            if e.lexpr is None or e.rexpr is None:
                raise Unsupported(f"with prefix operator {op}")
            return self.operator(op, self.expr(e.lexpr), self.expr(e.rexpr))
        if kind == K.AEXPR_LIKE:
            return self.operator(op, self.expr(e.lexpr), self.expr(e.rexpr))
        if kind in (K.AEXPR_DISTINCT, K.AEXPR_NOT_DISTINCT):
            eq = self.operator("=", self.expr(e.lexpr), self.expr(e.rexpr))
            distinct = Distinct(eq.left, eq.right)
            return distinct if kind == K.AEXPR_DISTINCT else BoolX("NOT", [distinct])
        if kind == K.AEXPR_IN:
            return self.in_list(op, e)
        if kind in (K.AEXPR_OP_ANY, K.AEXPR_OP_ALL):
            return self.any_all(op, e, kind == K.AEXPR_OP_ANY)
        if kind in (K.AEXPR_BETWEEN, K.AEXPR_NOT_BETWEEN):
            lo, hi = e.rexpr
            if kind == K.AEXPR_BETWEEN:
                return BoolX("AND", [self.operator(">=", self.expr(e.lexpr), self.expr(lo)), self.operator("<=", self.expr(e.lexpr), self.expr(hi))])
            return BoolX("OR", [self.operator("<", self.expr(e.lexpr), self.expr(lo)), self.operator(">", self.expr(e.lexpr), self.expr(hi))])
        raise Unsupported(f"with {kind.name.removeprefix('AEXPR_').replace('_', ' ')}")

    def operator(self, op: str, left: Any, right: Any) -> Op:
        """make_op for a comparison or LIKE: PostgreSQL's operator for the two types, its
        arguments coerced to its parameter types."""
        # (arithmetic is typed, so a non-boolean check is PostgreSQL's 42804, never run)
        if isinstance(left.ty, EnumTy) or isinstance(right.ty, EnumTy):
            return self._enum_operator(op, left, right)
        table = coercion_data.OPERATORS if op in _ARITHMETIC else coercion_data.COMPARISONS
        if op not in _ARITHMETIC and op not in ("=", "<>", "<", ">", "<=", ">=", "~~", "!~~"):
            raise Unsupported(f"with operator {op}")
        if op not in _ARITHMETIC:
            for side in (left, right):
                _comparable(side)
            _date_input(left, right)
            _date_input(right, left)
        if op == "||" and self.kind.row_filter:
            resolved = table.get((op, left.ty.name, right.ty.name))
            if resolved is not None and "anynonarray" in resolved[:2]:
                raise invalid_row_filter(None, MUTABLE)  # (textanycat and anytextcat are stable)
        try:
            return dx.make_op(op, left, right, table)
        except dx._Unsupported as e:
            raise Unsupported(str(e)) from None

    def in_list(self, op: str, e: ast.A_Expr) -> Any:
        """transformAExprIn: more than one constant is ``op ANY|ALL (ARRAY[…])`` over their
        common type; a single one is a plain comparison."""
        use_or = op == "="
        if op not in ("=", "<>"):
            raise Unsupported(f"with {op} IN")
        left = self.expr(e.lexpr)
        items = [self.expr(x) for x in e.rexpr]
        if any(not _constant(x) for x in items):
            raise Unsupported("with an IN list naming a column")
        if len(items) == 1:
            return self.operator(op, left, items[0])
        if isinstance(left.ty, EnumTy):  # (= ANY (ARRAY['a'::e, 'b'::e]))
            elems = [self._enum_label(left.ty, x) for x in items]
            return SAOp(op, use_or, left, ArrayE(elems, Ty("_" + left.ty.name)))
        _comparable(left)
        for x in items:
            _comparable(x)
            _date_input(x, left)
        common = _common_type([left, *items])
        if common is None:
            raise Unsupported("with an IN list of types without a common one")
        elems = [_element(x, common) for x in items]
        resolved = coercion_data.COMPARISONS.get((op, left.ty.name, common))
        if resolved is None or resolved[0] == "error":
            raise Unsupported(f"with {dx._shown(left.ty.name)} IN {dx._shown(common)}")
        lparam, rparam, _ = resolved
        array: Any = ArrayE(elems, Ty("_" + common))
        if rparam != common:
            if dx._pathway(common, rparam, False, True) is None:
                raise Unsupported(f"with {dx._shown(left.ty.name)} IN {dx._shown(common)}")
            array = Cast(array, Ty("_" + rparam), "relabel", False)
        return SAOp(op, use_or, _argument(left, lparam), array)


    def any_all(self, op: str, e: ast.A_Expr, use_or: bool) -> Any:
        """make_scalar_array_op: ``= ANY`` and ``<> ALL`` of a quoted array literal (read as
        an array of the operator's right type) or of an ARRAY[…] of constants."""
        which = "ANY" if use_or else "ALL"
        if (op, use_or) not in (("=", True), ("<>", False)):
            raise Unsupported(f"with {op} {which}")
        left = self.expr(e.lexpr)
        _comparable(left)
        raw = e.rexpr
        if isinstance(raw, ast.A_Const) and isinstance(raw.val, ast.String):
            resolved = coercion_data.COMPARISONS.get((op, left.ty.name, "unknown"))
            if resolved is None or resolved[0] == "error" or resolved[1] not in _ARRAY_ELEMENTS:
                raise Unsupported(f"with {dx._shown(left.ty.name)} {op} {which} of an array literal")
            lparam, rparam, _ = resolved
            right = Const(Ty("_" + rparam), dx._output(Ty("_" + rparam), raw.val.sval))
            return SAOp(op, use_or, _argument(left, lparam), right)
        cast_to: str | None = None
        if isinstance(raw, ast.TypeCast) and isinstance(raw.arg, ast.A_ArrayExpr) and raw.typeName.arrayBounds:
            # (ARRAY[…])::text[], as PostgreSQL prints the array its IN list made and as
            # pg_dump writes it back: a relabelling of the elements' array type
            from walsender_proxy.sql.ddl_names import type_text

            try:
                cast_to = parse_type(type_text(raw.typeName)).base.name
            except PgError:
                raise Unsupported(f"with {op} {which} of a cast array") from None
            raw = raw.arg
        if not isinstance(raw, ast.A_ArrayExpr):
            raise Unsupported(f"with {op} {which} of an expression")
        items = [self.expr(x) for x in raw.elements or ()]
        if not items or any(not _constant(x) for x in items):
            raise Unsupported(f"with {op} {which} of an array that is empty or names a column")
        for x in items:
            _comparable(x)
            _date_input(x, left)
        common = _common_type(items)
        elements = None if common is None else [_element(x, common) for x in items]
        if cast_to is not None and common is not None and elements is not None and cast_to != common:
            # (transformArrayExpr coerces each element to the cast's element type)
            if any(not isinstance(x, Const) or x.ty.name != "unknown" for x in items):
                if dx._pathway(common, cast_to, True) != "relabel":
                    raise Unsupported(f"with {op} {which} of an array cast from {dx._shown(common)}[] to {dx._shown(cast_to)}[]")
                elements = [Cast(x, Ty(cast_to), "relabel", True) for x in elements]
            else:
                elements = [_element(x, cast_to) for x in items]
            common = cast_to
        resolved = None if common is None else coercion_data.COMPARISONS.get((op, left.ty.name, common))
        if common is None or elements is None or resolved is None or resolved[0] == "error":
            raise Unsupported(f"with {dx._shown(left.ty.name)} {op} {which} of this array")
        lparam, rparam, _ = resolved
        array: Any = ArrayE(elements, Ty("_" + common))
        if rparam != common:
            if dx._pathway(common, rparam, False, True) is None:
                raise Unsupported(f"with {dx._shown(left.ty.name)} {op} {which} of this array")
            array = Cast(array, Ty("_" + rparam), "relabel", False)
        return SAOp(op, use_or, _argument(left, lparam), array)

    def coalesce(self, c: ast.CoalesceExpr) -> Coalesce:
        """transformCoalesceExpr: the arguments' common type (42804 when none), each
        coerced to it."""
        args = [self.expr(a) for a in c.args]
        for a in args:
            _comparable(a)
        common = _common_type(args)
        if common is None:
            known = [a.ty.name for a in args if a.ty.name != "unknown"]
            raise SqlError(
                "42804", f"COALESCE types {dx._shown(known[0])} and {dx._shown(known[1])} cannot be matched", _at(c.location)
            )
        return Coalesce([_element(a, common) for a in args], Ty(common))


#: Casts whose functions PostgreSQL 15 marks STABLE (pg_cast joined to pg_proc), and the
#: types whose input or output function is (an I/O conversion through it is stable too).
_STABLE_CASTS = frozenset({
    ("int8", "money"), ("int4", "money"), ("money", "numeric"), ("numeric", "money"),
    ("bpchar", "xml"), ("varchar", "xml"), ("text", "xml"), ("varchar", "regclass"), ("text", "regclass"),
    ("date", "timestamptz"), ("time", "timetz"), ("timestamptz", "date"), ("timestamptz", "timetz"),
    ("timestamptz", "time"), ("timestamptz", "timestamp"), ("timestamp", "timestamptz"),
})  # fmt: skip
_STABLE_INPUT = frozenset({"date", "time", "timestamp", "timestamptz", "interval", "timetz"})
_STABLE_OUTPUT = frozenset({"date", "timestamp", "timestamptz", "interval"})


def _stable_cast(source: str, target: str, how: str) -> bool:
    if (source, target) in _STABLE_CASTS:
        return True
    return how == "io" and (target in _STABLE_INPUT or source in _STABLE_OUTPUT)


#: Element types of an array literal an ``= ANY`` reads (DuckDB compares them as PostgreSQL).
_ARRAY_ELEMENTS = frozenset({"int2", "int4", "int8", "text", "varchar", "bool"})
_ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "||"})
_SYSTEM_COLUMNS = frozenset({"ctid", "xmin", "xmax", "cmin", "cmax", "tableoid"})


def _system_column(raw: Any) -> bool:
    return (
        isinstance(raw, ast.ColumnRef)
        and len(raw.fields) == 1
        and isinstance(raw.fields[0], ast.String)
        and raw.fields[0].sval in _SYSTEM_COLUMNS
    )


def _string_type(tn: ast.TypeName) -> bool:
    name = tn.names[-1].sval if tn.names else ""
    return not tn.arrayBounds and coercion_data.CATEGORIES.get(name) == "S"




def _constant(n: Any) -> bool:
    if isinstance(n, Const):
        return True
    if isinstance(n, Cast):
        return _constant(n.arg)
    return False


def _comparable(n: Any) -> None:
    base = n.ty.name
    if base == "unknown":
        return
    if base.lstrip("_") == ENUM:
        raise Unsupported("comparing values of an enum type")
    if base not in _COMPARABLE:
        raise Unsupported(f"comparing a value of type {dx.format_type(n.ty)}")
    if isinstance(n, Var) and base == "numeric" and not (n.ty.typmod >= 0 and ((n.ty.typmod - 4) >> 16) <= 38):
        raise Unsupported("over a numeric column without a precision of at most 38")


def _date_input(n: Any, other: Any) -> None:
    """A quoted literal read as a date: only ``YYYY-MM-DD`` (another form is read by
    DateStyle's field order, which the catalog text could not follow)."""
    is_literal = isinstance(n, Const) and n.ty == dx.UNKNOWN and n.text is not None
    if is_literal and other.ty.name == "date" and not _ISO_DATE.fullmatch(n.text.strip()):
        raise Unsupported(f"with the date literal '{n.text}' (only YYYY-MM-DD)")


def _category(name: str) -> str:
    return coercion_data.CATEGORIES.get(name, "U")


def _implicit(source: str, target: str) -> bool:
    if source == target or source == "unknown":
        return True
    entry = coercion_data.CASTS.get((source, target))
    return entry is not None and entry[0] == "i"


def _common_type(nodes: list[Any]) -> str | None:
    """select_common_type (NULL context: None where PostgreSQL gives up) and
    verify_common_type."""
    known = [n.ty.name for n in nodes if n.ty.name != "unknown"]
    if not known:
        return "text"
    ptype = known[0]
    for ntype in known[1:]:
        if ntype == ptype:
            continue
        if _category(ntype) != _category(ptype):
            return None
        if ptype not in _PREFERRED and _implicit(ptype, ntype) and not _implicit(ntype, ptype):
            ptype = ntype
    if not all(_implicit(n.ty.name, ptype) for n in nodes):
        return None
    return ptype


def _element(n: Any, common: str) -> Any:
    """coerce_to_common_type of an IN item."""
    try:
        return dx._coerce(n, Ty(common), explicit=False, implicit_only=True)
    except dx._Unsupported as e:
        raise Unsupported(str(e)) from None


def _argument(n: Any, param: str) -> Any:
    try:
        return dx._argument(n, param)
    except dx._Unsupported as e:
        raise Unsupported(str(e)) from None


def _to_boolean(n: Any, context: str, location: int | None = None) -> Any:
    """coerce_to_boolean: an unknown literal is read as boolean; another type is 42804."""
    if isinstance(n, Const) and n.ty == dx.UNKNOWN:
        if n.text is None:
            return Const(Ty("bool"), None)
        return dx._coerce(n, Ty("bool"), explicit=False)
    if n.ty.name != "bool":
        raise SqlError(
            "42804", f"argument of {context} must be type boolean, not type {dx.format_type(Ty(n.ty.name))}", _at(location)
        )
    return n


# ---------------------------------------------------------------------------------------------
# printing: ruleutils' get_rule_expr for these nodes


def _mark(v: Var) -> str:
    return f"{CHECK_MARK}{v.attnum}{CHECK_MARK}"


class _Printer(dx._Printer):
    def expr(self, n: Any, showimplicit: bool) -> str:
        pretty = self.pretty
        if isinstance(n, Var):
            return _mark(n)
        if isinstance(n, BoolX):
            if n.op == "NOT":
                inner = "NOT " + self.paren(n.args[0], False, n)
            else:
                inner = f" {n.op} ".join(self.paren(a, False, n) for a in n.args)
            return inner if pretty else f"({inner})"
        if isinstance(n, NullT):
            inner = self.paren(n.arg, True, n) + (" IS NULL" if n.is_null else " IS NOT NULL")
            return inner if pretty else f"({inner})"
        if isinstance(n, Distinct):
            inner = f"{self.paren(n.left, True, n)} IS DISTINCT FROM {self.paren(n.right, True, n)}"
            return inner if pretty else f"({inner})"
        if isinstance(n, SAOp):
            which = "ANY" if n.use_or else "ALL"
            inner = f"{self.paren(n.left, True, n)} {n.op} {which} ({self.paren(n.right, True, n)})"
            return inner if pretty else f"({inner})"
        if isinstance(n, ArrayE):
            return "ARRAY[" + ", ".join(self.expr(e, True) for e in n.elems) + "]"
        if isinstance(n, Coalesce):
            return "COALESCE(" + ", ".join(self.expr(a, True) for a in n.args) + ")"
        return super().expr(n, showimplicit)

    def paren(self, n: Any, showimplicit: bool, parent: Any) -> str:
        text = self.expr(n, showimplicit)
        if self.pretty and not _simple(n, parent):
            return f"({text})"
        return text


def _simple(n: Any, parent: Any) -> bool:
    """isSimpleNode (PRETTYFLAG_PAREN) for the node kinds above."""
    if isinstance(n, Var | Const | Func | ArrayE | Coalesce):
        return True
    if isinstance(n, Cast):
        return True if n.kind == "func" else _simple(n.arg, n)
    if isinstance(n, Op) and isinstance(parent, Op):
        return dx._simple(n, parent)
    if isinstance(n, Op | NullT | Distinct):
        return not isinstance(parent, Cast) and isinstance(parent, Func | BoolX | ArrayE)
    if isinstance(n, BoolX):
        if isinstance(parent, BoolX):
            if n.op in ("NOT", "AND"):
                return parent.op in ("AND", "OR")
            return parent.op == "OR"
        return isinstance(parent, Func | ArrayE)
    return False  # (a ScalarArrayOpExpr: never)


def deparse(n: Any, pretty: bool) -> str:
    """``pg_get_expr`` of the cooked tree, columns marked by attnum."""
    return _Printer(pretty).expr(n, False)


# ---------------------------------------------------------------------------------------------
# DuckDB


_NUMBER = re.compile(r"-?\d+(\.\d+)?")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _duck_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _duck_const(c: Const, target: str | None = None) -> str:
    """A constant as DuckDB reads it, of PostgreSQL type ``target`` (its own by default)."""
    name = target or c.ty.name
    if c.text is None:
        if name in _DUCK_TYPES:
            return f"CAST(NULL AS {_DUCK_TYPES[name]})"
        raise Unsupported(f"with a NULL of type {dx._shown(name)}")
    src = c.ty.name
    if isinstance(c.ty, EnumTy) and target is None:  # (a label: the stored text)
        return _duck_literal(c.text)
    if name in ("int2", "int4", "int8"):
        if src not in ("int2", "int4", "int8"):
            raise Unsupported(f"with a {dx._shown(src)} constant as {dx._shown(name)}")
        return f"CAST({int(c.text)} AS {_DUCK_TYPES[name]})"
    if name == "numeric":
        if not _NUMBER.fullmatch(c.text):
            raise Unsupported(f"with the numeric constant {c.text}")
        try:
            d = Decimal(c.text)
        except InvalidOperation:
            raise Unsupported(f"with the numeric constant {c.text}") from None
        _sign, digits, exp = d.as_tuple()
        scale = max(0, -int(exp))
        precision = max(len(digits), scale + 1)
        if precision > 38:
            raise Unsupported("with a numeric constant of more than 38 digits")
        return f"CAST({_duck_literal(c.text)} AS DECIMAL({precision},{scale}))"
    if name in ("float4", "float8"):
        if src not in ("int2", "int4", "int8", "numeric", "float4", "float8") or not re.fullmatch(r"-?[\d.]+(e[-+]?\d+)?|-?Infinity|NaN", c.text):
            raise Unsupported(f"with the constant {c.text} as {dx._shown(name)}")
        return f"CAST({_duck_literal(c.text.replace('Infinity', 'inf'))} AS {_DUCK_TYPES[name]})"
    if name in _STRINGS:
        if src not in (*_STRINGS, "unknown"):
            raise Unsupported(f"with a {dx._shown(src)} constant as {dx._shown(name)}")
        return _duck_literal(c.text)
    if name == "bool":
        return "TRUE" if c.text == "t" else "FALSE"
    if name == "date":
        if src != "date" or not _ISO_DATE.fullmatch(c.text):
            raise Unsupported(f"with the date constant {c.text}")
        return f"CAST({_duck_literal(c.text)} AS DATE)"
    raise Unsupported(f"with a constant of type {dx._shown(name)}")


_INT_DIGITS = {"int2": 5, "int4": 10, "int8": 19}


def _decimal_shape(n: Any) -> tuple[int, int] | None:
    """(integer digits, scale) of a value DuckDB compares as a DECIMAL or an integer."""
    while isinstance(n, Cast) and n.ty.name == "numeric":
        n = n.arg
    name = n.ty.name
    if name in _INT_DIGITS:
        return _INT_DIGITS[name], 0
    if name != "numeric":
        return None
    if isinstance(n, Var):
        p, s = (n.ty.typmod - 4) >> 16, (n.ty.typmod - 4) & 0xFFFF
        return p - s, s
    if isinstance(n, Const) and n.text is not None and _NUMBER.fullmatch(n.text):
        whole, _, frac = n.text.lstrip("-").partition(".")
        return len(whole), len(frac)
    return None


def _fits(*nodes: Any) -> None:
    """DuckDB compares a DECIMAL with another (or an integer) at their common type, which
    must hold both: past 38 digits the comparison is an error PostgreSQL does not raise."""
    shapes = [s for s in map(_decimal_shape, nodes) if s is not None]
    numeric = any(n.ty.name == "numeric" for n in nodes)
    if numeric and shapes and max(w for w, _ in shapes) + max(s for _, s in shapes) > 38:
        raise Unsupported("comparing numerics of more than 38 digits together")


def _duck_var(v: Var) -> str:
    return _mark(v)


def duck(n: Any, *, raising: bool = False) -> str:
    """The cooked tree as a DuckDB expression, columns marked by attnum (0A000 through
    :class:`Unsupported` where DuckDB would not give PostgreSQL's verdict).

    ``raising``: integer ``+ - *`` may raise their overflow error (a generated column's
    value): DuckDB raises it for the same operands as PostgreSQL, so it is taken where
    both evaluate the operation for every row — outside AND/OR and COALESCE, whose
    arguments DuckDB may evaluate where PostgreSQL stops early."""
    if isinstance(n, Op) and n.op in _ARITHMETIC:
        return _duck_arithmetic(n, duck(n.left, raising=raising), duck(n.right, raising=raising), raising=raising)
    if isinstance(n, Cast) and raising:
        return _duck_cast(n, raising=True)
    if isinstance(n, Op) and n.op not in _ARITHMETIC and n.op not in ("~~", "!~~") and raising:
        _fits(n.left, n.right)
        return f"({duck(n.left, raising=True)} {n.op} {duck(n.right, raising=True)})"
    if isinstance(n, Var):
        return _duck_var(n)
    if isinstance(n, Const):
        return _duck_const(n)
    if isinstance(n, BoolX):
        if n.op == "NOT":
            return f"(NOT {duck(n.args[0])})"
        return lazy_bool(n.op, [duck(a) for a in n.args])
    if isinstance(n, NullT):
        return f"({duck(n.arg)} IS {'' if n.is_null else 'NOT '}NULL)"
    if isinstance(n, Func):
        if n.name == "cardinality":  # (the lake's arrays have one dimension: its length, 0 when empty)
            return f"len({duck(n.args[0])})"
        if n.name == "array_length":  # (NULL for an empty array and for a dimension it lacks)
            arr = duck(n.args[0])
            return f"(CASE WHEN {int(n.args[1].text)} = 1 AND len({arr}) > 0 THEN len({arr}) END)"
        return f"length({duck(n.args[0])})"
    if isinstance(n, Distinct):
        _fits(n.left, n.right)
        return f"({duck(n.left)} IS DISTINCT FROM {duck(n.right)})"
    if isinstance(n, Op):
        left, right = duck(n.left), duck(n.right)
        if n.op in _ARITHMETIC:
            return _duck_arithmetic(n, left, right)
        if n.op in ("~~", "!~~"):
            pattern = n.right.arg if isinstance(n.right, Cast) else n.right
            if not isinstance(pattern, Const) or pattern.text is None or pattern.ty.name not in (*_STRINGS, "unknown"):
                raise Unsupported("with a LIKE pattern that is not a constant")
            body = pattern.text
            if (len(body) - len(body.rstrip("\\"))) % 2 == 1:
                raise Unsupported("with a LIKE pattern ending in an escape character")
            word = "LIKE" if n.op == "~~" else "NOT LIKE"
            return f"({left} {word} {_duck_literal(body)} ESCAPE '\\')"
        _fits(n.left, n.right)
        return f"({left} {n.op} {right})"
    if isinstance(n, SAOp):
        arr = n.right.arg if isinstance(n.right, Cast) else n.right
        elems = _array_elements(arr) if isinstance(arr, Const) else arr.elems
        if not elems:  # (= ANY of no element is false, <> ALL true, whatever the left)
            return "FALSE" if n.use_or else "TRUE"
        _fits(n.left, *elems)
        items = ", ".join(duck(e) for e in elems)
        word = "IN" if n.use_or else "NOT IN"
        return f"({duck(n.left)} {word} ({items}))"
    if isinstance(n, Coalesce):
        return "COALESCE(" + ", ".join(duck(a) for a in n.args) + ")"
    if isinstance(n, Cast):
        return _duck_cast(n)
    raise Unsupported(f"with {type(n).__name__}")


def _array_elements(c: Const) -> list[Const]:
    """The elements of an array constant, each a constant of the element type."""
    import pyarrow as pa


    elem = c.ty.name[1:]
    if c.text is None:
        raise Unsupported("with a NULL array")
    values = decode_text_arrow(dx._lake_type(c.ty), pa.array([c.text])).to_pylist()[0]
    out = []
    for v in values:
        if isinstance(v, list):
            raise Unsupported("with a multidimensional array")
        text = None if v is None else ("t" if v else "f") if elem == "bool" else str(v)
        out.append(Const(Ty(elem), text))
    return out


def _duck_arithmetic(n: Op, left: str, right: str, *, raising: bool = False) -> str:
    """Text ``||``, and integer ``/`` and ``%`` by a constant other than 0 and -1: forms
    that cannot raise. DuckDB keeps PostgreSQL's result types (int2 op int4 is int4),
    truncates integer division toward zero and signs ``mod`` by the dividend as PostgreSQL
    does. An operation that can raise (``+ - *`` overflow, a division by a column) is
    refused: PostgreSQL raises its error wherever it evaluates it, and DuckDB does not
    evaluate an argument next to a NULL the same way, so the same row could pass or be
    published where PostgreSQL raises. Arithmetic of constants alone is refused too
    (PostgreSQL folds it when the expression is prepared)."""
    ints = ("int2", "int4", "int8")
    if n.op == "||" and all(x.ty.name in _STRINGS for x in (n.left, n.right)):
        return f"({left} || {right})"  # (textcat: NULL if either is)
    if raising and n.op == "||" and n.ty.name == "text" and {x.ty.name in _STRINGS for x in (n.left, n.right)} == {True, False}:
        other = n.right if n.left.ty.name in _STRINGS else n.left
        if other.ty.name in ("int2", "int4", "int8", "bool"):  # (textanycat: its output function's text)
            left, right = (left, f"CAST({right} AS VARCHAR)") if other is n.right else (f"CAST({left} AS VARCHAR)", right)
            return f"({left} || {right})"
    if n.op == "||" or not all(x.ty.name in ints for x in (n.left, n.right, n)):
        raise Unsupported(f"with {dx._shown(n.left.ty.name)} {n.op} {dx._shown(n.right.ty.name)}")
    if _constant(n.left) and _constant(n.right):
        raise Unsupported(f"with arithmetic of constants ({n.op})")
    if raising and n.op in ("+", "-", "*"):  # (DuckDB's overflow error for these operands)
        return f"{_DUCK_ARITHMETIC[n.op]}({left}, {right})"
    divisor = n.right
    while isinstance(divisor, Cast):
        divisor = divisor.arg
    if raising and n.op in ("/", "%") and not (isinstance(divisor, Const) and divisor.text in (None, "0")):
        # (DuckDB raises division by zero and the overflow of MIN / -1 for the same rows,
        # NULL where an operand is; a constant 0 it refuses whatever the row)
        return f"{_DUCK_ARITHMETIC[n.op]}({left}, {right})"
    if n.op not in ("/", "%") or not isinstance(divisor, Const) or divisor.text in (None, "0", "-1"):
        raise Unsupported(f"with {n.op} of a column (PostgreSQL raises on overflow or division by zero)")
    # (as function calls: DuckDB's rewriter moves a constant across a comparison written
    # with the operators)
    return f"{_DUCK_ARITHMETIC[n.op]}({left}, {right})"


_DUCK_ARITHMETIC = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "%": "mod"}


def _duck_cast(n: Cast, *, raising: bool = False) -> str:
    target, arg = n.ty.name, n.arg
    source = arg.ty.name
    if raising and not isinstance(arg, Const) and n.ty.typmod < 0 and target in ("int2", "int4", "int8") and source in ("int2", "int4", "int8"):
        # (a narrowing cast raises out of range in both, for the same values)
        return f"CAST({duck(arg, raising=True)} AS {_DUCK_TYPES[target]})"
    if raising and not isinstance(arg, Const) and (target == source or (target in _STRINGS and source in _STRINGS)) and n.ty.typmod < 0:
        return duck(arg, raising=True)
    if raising and not isinstance(arg, Const) and n.ty.typmod < 0 and target in ("text", "varchar") and source in ("int2", "int4", "int8", "bool"):
        # (int4out, boolout: the digits, true/false — DuckDB's text of them is the same)
        return f"CAST({duck(arg, raising=True)} AS VARCHAR)"
    if n.ty.typmod >= 0 and n.ty.typmod != arg.ty.typmod:
        # (a length coercion rounds a numeric and cuts a string: DuckDB's CAST would not)
        raise Unsupported(f"with a cast to {dx.format_type(n.ty)}")
    if isinstance(arg, Const):
        return _duck_const(arg, target)
    if target == source or (target in _STRINGS and source in _STRINGS):
        return duck(arg)
    if target == "numeric" and source in ("int2", "int4", "int8", "numeric"):
        return duck(arg)  # (DuckDB compares integers and DECIMALs exactly)
    if target in ("int2", "int4", "int8") and source in ("int2", "int4", "int8") and _INT_DIGITS[target] >= _INT_DIGITS[source]:
        # (a narrowing cast raises out of range in PostgreSQL; DuckDB's optimizer may move
        # or drop the cast next to a NULL, so the error would not be raised where it is)
        return f"CAST({duck(arg)} AS {_DUCK_TYPES[target]})"
    if target == "float8" and source in ("int2", "int4", "int8", "float4"):
        return f"CAST({duck(arg)} AS DOUBLE)"
    if target == "float8" and source == "numeric" and isinstance(arg, Var) and ((arg.ty.typmod - 4) >> 16) <= 15:
        return f"CAST({duck(arg)} AS DOUBLE)"  # (exact: at most 15 digits, one rounding)
    if target == "float4" and source in ("int2",):
        return f"CAST({duck(arg)} AS FLOAT)"
    raise Unsupported(f"with a cast from {dx._shown(source)} to {dx._shown(target)}")


# ---------------------------------------------------------------------------------------------
# the columns an expression reads


def attnums(n: Any, out: list[int]) -> list[int]:
    """pull_var_clause's order, each attnum once: conkey."""
    if isinstance(n, Var):
        if n.attnum not in out:
            out.append(n.attnum)
    elif isinstance(n, BoolX | ArrayE | Coalesce):
        for a in n.elems if isinstance(n, ArrayE) else n.args:
            attnums(a, out)
    elif isinstance(n, NullT | Cast):
        attnums(n.arg, out)
    elif isinstance(n, Op | SAOp | Distinct):
        attnums(n.left, out)
        attnums(n.right, out)
    elif isinstance(n, Func):
        for a in n.args:
            attnums(a, out)
    return out


