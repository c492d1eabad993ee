"""Column DEFAULT expressions analysed ("cooked") and printed as PostgreSQL 15 does.

PostgreSQL keeps a default as an analysed expression tree (``cookDefault``: the raw
expression transformed, then coerced to the column's type with assignment-cast rules) and
prints it back with ``ruleutils.c``: ``pg_get_expr(adbin, adrelid)`` for
``information_schema.columns.column_default`` and drivers, the same with ``pretty`` for psql's
``\\d``. Clients show those texts, so the proxy builds the same tree for the forms it supports
(constants, casts, the clock and user SQL value functions, argument-less functions such as
``now()`` and ``gen_random_uuid()``, and the binary operators ``+ - * / % ||``) and prints it
with ruleutils' rules: typed constants (``'x'::text``, ``'-5'::integer``), implicit casts
hidden except in operator arguments, and parentheses by node kind and operator precedence.
Operator resolution and cast pathways come from PostgreSQL itself
(:mod:`walsender_proxy.backend.coercion_data`). A form outside this set is refused with 0A000
rather than printed differently; errors PostgreSQL raises while cooking (an input error in a
literal, a type mismatch, a column reference) are raised with its SQLSTATE and text.

The printed (non-pretty) text is also what runs: it is valid SQL whose value is the
default's, the column's coercion aside (the INSERT applies it, as to any value).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pglast import ast, enums

from decoding.catalog import SEQUENCE_MARK, ColumnDefault
from decoding.errors import PgError
from decoding.pgtypes import ColumnType, UnknownTypeError, parse_type
from decoding.pgvalues import InputError, decode_text_arrow, encode_text_arrow
from walsender_proxy.backend import coercion_data
from walsender_proxy.sql.ddl_names import type_text
from walsender_proxy.sql.pg_functions import PG15_FUNCTIONS

# ---------------------------------------------------------------------------------------------
# the typed tree (the subset of PostgreSQL's primnodes a supported default is made of)


@dataclass(frozen=True, slots=True)
class Ty:
    """A type by ``pg_type.typname`` (``_text`` for text[]; ``unknown`` for a quoted
    literal not yet resolved) and type modifier."""

    name: str
    typmod: int = -1


UNKNOWN = Ty("unknown")


@dataclass(slots=True)
class Const:
    ty: Ty
    text: str | None  # the type's output of the value; None: NULL
    #: A regclass constant's relation (its text is SEQUENCE_MARK: the name is printed
    #: from the catalog when the expression is printed, as regclass's output does).
    oid: int = 0


@dataclass(slots=True)
class Func:
    """A function call ``name(args)`` (FuncExpr, COERCE_EXPLICIT_CALL)."""

    name: str
    args: list[Node]
    ty: Ty
    volatile: bool


@dataclass(slots=True)
class SqlValue:
    """CURRENT_TIMESTAMP and the other SQLValueFunctions, printed as their keyword."""

    word: str
    ty: Ty


@dataclass(slots=True)
class Op:
    op: str
    left: Node
    right: Node
    ty: Ty


@dataclass(slots=True)
class Cast:
    """A coercion node: a cast or length-coercion function (``func``: FuncExpr), a binary
    relabel (RelabelType) or I/O conversion (CoerceViaIO); ``explicit`` when the user
    wrote it (shown), else implicit (hidden outside operator arguments)."""

    arg: Node
    ty: Ty
    kind: str  # func | relabel | io
    explicit: bool


Node = Const | Func | SqlValue | Op | Cast


# ---------------------------------------------------------------------------------------------
# the functions and SQL value functions a default may call

#: name → (result type, volatile). Argument-less only (nextval comes with sequences).
_FUNCTIONS: dict[str, tuple[str, bool]] = {
    "now": ("timestamptz", False),
    "transaction_timestamp": ("timestamptz", False),
    "statement_timestamp": ("timestamptz", False),
    "clock_timestamp": ("timestamptz", True),
    "random": ("float8", True),
    "gen_random_uuid": ("uuid", True),
}

_SVF = enums.SQLValueFunctionOp
#: SQLValueFunction op → (keyword, result type); a typmod adds ``(n)``.
_SQL_VALUES: dict[_SVF, tuple[str, str]] = {
    _SVF.SVFOP_CURRENT_DATE: ("CURRENT_DATE", "date"),
    _SVF.SVFOP_CURRENT_TIMESTAMP: ("CURRENT_TIMESTAMP", "timestamptz"),
    _SVF.SVFOP_CURRENT_TIMESTAMP_N: ("CURRENT_TIMESTAMP", "timestamptz"),
    _SVF.SVFOP_LOCALTIME: ("LOCALTIME", "time"),
    _SVF.SVFOP_LOCALTIME_N: ("LOCALTIME", "time"),
    _SVF.SVFOP_LOCALTIMESTAMP: ("LOCALTIMESTAMP", "timestamp"),
    _SVF.SVFOP_LOCALTIMESTAMP_N: ("LOCALTIMESTAMP", "timestamp"),
    _SVF.SVFOP_CURRENT_ROLE: ("CURRENT_ROLE", "name"),
    _SVF.SVFOP_CURRENT_USER: ("CURRENT_USER", "name"),
    _SVF.SVFOP_USER: ("USER", "name"),
    _SVF.SVFOP_SESSION_USER: ("SESSION_USER", "name"),
    _SVF.SVFOP_CURRENT_CATALOG: ("CURRENT_CATALOG", "name"),
    _SVF.SVFOP_CURRENT_SCHEMA: ("CURRENT_SCHEMA", "name"),
}

#: Type names as format_type prints them without a modifier.
_TYPE_NAMES = {
    "bool": "boolean",
    "int2": "smallint",
    "int4": "integer",
    "int8": "bigint",
    "float4": "real",
    "float8": "double precision",
    "varchar": "character varying",
    "bpchar": "bpchar",
    "timestamp": "timestamp without time zone",
    "timestamptz": "timestamp with time zone",
    "time": "time without time zone",
}


def _lake_type(ty: Ty) -> ColumnType:
    name, arr = (ty.name[1:], True) if ty.name.startswith("_") else (ty.name, False)
    ct = parse_type(name + ("[]" if arr else ""))
    return ColumnType(ct.base, ty.typmod, arr)


def _ty(ct: ColumnType) -> Ty:
    return Ty(("_" if ct.is_array else "") + ct.base.name, ct.typmod)


def format_type(ty: Ty) -> str:
    """``format_type_with_typemod``: ``character varying(3)``, ``text[]``, ``bpchar``."""
    if ty.name == "name":
        return "name"
    if ty.typmod < 0:
        base = ty.name.lstrip("_")
        return _TYPE_NAMES.get(base, base) + ("[]" if ty.name.startswith("_") else "")
    return _lake_type(ty).sql_name()


# ---------------------------------------------------------------------------------------------
# cooking: transformExpr + coerce_to_target_type


class _Unsupported(Exception):
    """A form the proxy does not cook (0A000 with what it is)."""


@dataclass(slots=True)
class Cooked:
    """A cooked default: the tree and what it prints."""

    tree: Node
    volatile: bool = False
    styled: bool = False
    notes: list[str] = field(default_factory=list)

    def column_default(self, oid: int = 0) -> ColumnDefault:
        return ColumnDefault(
            deparse(self.tree, False), deparse(self.tree, True), self.volatile, oid, self.styled, _sequence(self.tree)
        )


#: Resolves a relation name as regclass input does: (oid, is a sequence); 42P01 if none.
Relations = Callable[[str], tuple[int, bool]]
_RELATIONS: contextvars.ContextVar[Relations | None] = contextvars.ContextVar("default_relations", default=None)


def cook(raw: ast.Node, column: ColumnType, colname: str, relations: Relations | None = None) -> Cooked | None:
    """PostgreSQL's ``cookDefault`` for ``raw`` as the default of ``colname``; None for a
    default that is a bare NULL constant (PostgreSQL stores no default then).
    ``relations`` resolves the sequence of a ``nextval('name')``."""
    if column.is_enum and not (isinstance(raw, ast.A_Const) and raw.isnull):
        raise PgError("0A000", "DEFAULT of a column of an enum type is not supported by walsender-proxy")
    token = _RELATIONS.set(relations)
    try:
        tree = _transform(raw)
        tree = _coerce(tree, _ty(column), explicit=False, colname=colname)
    except _Unsupported as e:
        raise PgError("0A000", f"DEFAULT expression {e} is not supported by walsender-proxy") from None
    finally:
        _RELATIONS.reset(token)
    if isinstance(tree, Const) and tree.text is None:
        return None
    if len(_consts_of(tree, "regclass")) > 1:
        raise PgError("0A000", "DEFAULT expression naming more than one sequence is not supported by walsender-proxy")
    return Cooked(tree, _volatile(tree), _styled(tree))


def _consts_of(n: Node, typname: str) -> list[Const]:
    if isinstance(n, Const):
        return [n] if n.ty.name == typname else []
    if isinstance(n, Func):
        return [c for a in n.args for c in _consts_of(a, typname)]
    if isinstance(n, Op):
        return _consts_of(n.left, typname) + _consts_of(n.right, typname)
    if isinstance(n, Cast):
        return _consts_of(n.arg, typname)
    return []


def _sequence(n: Node) -> int:
    """The sequence a ``nextval('s'::regclass)`` of the default names (0: none)."""
    found = [c.oid for c in _consts_of(n, "regclass") if c.oid]
    return found[0] if found else 0


def _volatile(n: Node) -> bool:
    if isinstance(n, Func):
        return n.volatile or any(_volatile(a) for a in n.args)
    if isinstance(n, Op):
        return _volatile(n.left) or _volatile(n.right)
    if isinstance(n, Cast):
        return _volatile(n.arg)
    return False


#: Types whose output follows DateStyle or IntervalStyle.
_STYLED = frozenset({"date", "time", "timestamp", "timestamptz", "interval"})


def _styled(n: Node) -> bool:
    if isinstance(n, Const):
        return n.text is not None and n.ty.name.lstrip("_") in _STYLED
    if isinstance(n, Func):
        return any(_styled(a) for a in n.args)
    if isinstance(n, Op):
        return _styled(n.left) or _styled(n.right)
    if isinstance(n, Cast):
        return _styled(n.arg)
    return False


def immutable(n: Node) -> bool:
    """Constants, casts and operators of constants: the same value whenever it runs."""
    if isinstance(n, Const):
        return True
    if isinstance(n, Op):
        return immutable(n.left) and immutable(n.right)
    if isinstance(n, Cast):
        return immutable(n.arg)
    return False


def _transform(raw: ast.Node) -> Node:
    if isinstance(raw, ast.A_Const):
        return _const(raw)
    if isinstance(raw, ast.TypeCast):
        return _type_cast(raw)
    if isinstance(raw, ast.SQLValueFunction):
        word, tname = _SQL_VALUES.get(raw.op, (None, None))
        if word is None or tname is None:
            raise _Unsupported(raw.op.name.removeprefix("SVFOP_"))
        if raw.typmod is not None and raw.typmod >= 0:
            return SqlValue(f"{word}({raw.typmod})", Ty(tname, raw.typmod))
        return SqlValue(word, Ty(tname))
    if isinstance(raw, ast.FuncCall):
        return _func(raw)
    if isinstance(raw, ast.A_Expr):
        return _operator(raw)
    if isinstance(raw, ast.ColumnRef):
        raise PgError("0A000", "cannot use column reference in DEFAULT expression")
    if isinstance(raw, ast.SubLink):
        raise PgError("0A000", "cannot use subquery in DEFAULT expression")
    if isinstance(raw, ast.ParamRef):
        raise PgError("42P02", f"there is no parameter ${raw.number}")
    raise _Unsupported(type(raw).__name__)


def _const(c: ast.A_Const) -> Const:
    """``make_const``: an integer is int4 (int8 past int4, from a Float node), another
    number numeric, a quoted literal unknown until coerced, a boolean bool."""
    if c.isnull:
        return Const(UNKNOWN, None)
    v = c.val
    if isinstance(v, ast.Integer):
        return Const(Ty("int4"), str(v.ival))
    if isinstance(v, ast.Float):
        text = v.fval
        try:
            n = int(text, 10)
        except ValueError:
            return Const(Ty("numeric"), _output(Ty("numeric"), text))
        if -(2**31) <= n < 2**31:
            return Const(Ty("int4"), str(n))
        if -(2**63) <= n < 2**63:
            return Const(Ty("int8"), str(n))
        return Const(Ty("numeric"), _output(Ty("numeric"), text))
    if isinstance(v, ast.String):
        return Const(UNKNOWN, v.sval)
    if isinstance(v, ast.Boolean):
        return Const(Ty("bool"), "t" if v.boolval else "f")
    raise _Unsupported("with a bit-string constant")


def _output(ty: Ty, text: str) -> str:
    """The type's input function then its output function (what a Const prints), with
    PostgreSQL's input errors."""
    try:
        ct = _lake_type(Ty(ty.name, ty.typmod if ty.name == "interval" else -1))
        arr = decode_text_arrow(ct, pa.array([text], pa.string()))
        out = encode_text_arrow(ct, arr).to_pylist()[0]
    except InputError as e:
        raise PgError(e.sqlstate, str(e)) from None
    return out.decode() if isinstance(out, bytes) else str(out)


def _type_cast(tc: ast.TypeCast) -> Node:

    try:
        target = _ty(parse_type(type_text(tc.typeName)))
    except UnknownTypeError:
        raise
    except PgError as e:
        if e.sqlstate == "0A000":
            raise _Unsupported(f"with a cast to {'.'.join(n.sval for n in tc.typeName.names)}") from None
        raise
    return _coerce(_transform(tc.arg), target, explicit=True)


def _func(fc: ast.FuncCall) -> Node:

    names = [n.sval for n in fc.funcname]
    if len(names) == 2 and names[0] == "pg_catalog":
        names = names[1:]
    name = names[-1]
    if fc.agg_star or fc.agg_distinct or fc.over is not None or fc.agg_filter is not None or fc.agg_order:
        raise _Unsupported(f"calling {name} as an aggregate or window function")
    known = _FUNCTIONS.get(name)
    if len(names) == 1 and known is not None and not fc.args:
        return Func(name, [], Ty(known[0]), known[1])
    if len(names) == 1 and name == "nextval" and len(fc.args or ()) == 1:
        return Func(name, [_nextval_arg(fc.args[0])], Ty("int8"), True)
    if len(names) == 1 and name not in PG15_FUNCTIONS and not fc.args:
        raise PgError(
            "42883",
            f"function {name}() does not exist",
            hint="No function matches the given name and argument types. You might need to add explicit type casts.",
        )
    raise _Unsupported(f"calling {'.'.join(names)}()")


def _nextval_arg(raw: ast.Node) -> Node:
    """nextval's regclass: a quoted name (or one cast to regclass) is resolved now, and the
    default depends on the sequence (PostgreSQL keeps its OID); a name cast to text is
    resolved each time it runs (``nextval('s'::text)``), as PostgreSQL's implicit cast."""
    lit = raw
    cast_to = None
    if isinstance(raw, ast.TypeCast):
        cast_to = ".".join(n.sval for n in raw.typeName.names if n.sval != "pg_catalog")
        lit = raw.arg
    if not (isinstance(lit, ast.A_Const) and isinstance(lit.val, ast.String)) or cast_to not in (None, "regclass", "text"):
        raise _Unsupported("calling nextval() of an expression")
    name = lit.val.sval
    if cast_to == "text":
        return Cast(Const(Ty("text"), name), Ty("regclass"), "func", False)
    relations = _RELATIONS.get()
    if relations is None:
        raise _Unsupported("calling nextval() here")
    oid, is_sequence = relations(name)
    if not is_sequence:
        raise _Unsupported("calling nextval() of a relation that is not a sequence")
    return Const(Ty("regclass"), SEQUENCE_MARK, oid)


def _operator(e: ast.A_Expr) -> Node:
    op = e.name[-1].sval if e.name else ""
    if e.kind != enums.A_Expr_Kind.AEXPR_OP or len(e.name) != 1 or e.lexpr is None or e.rexpr is None:
        raise _Unsupported(f"with operator {op}" if op else "with this operator form")
    return make_op(op, _transform(e.lexpr), _transform(e.rexpr))


def make_op(op: str, left: Node, right: Node, table: dict[Any, Any] | None = None) -> Op:
    """make_op: PostgreSQL's operator for the two argument types (``table``: a dump of
    PostgreSQL's resolutions, its arithmetic by default), the arguments coerced to its
    parameter types; its error where PostgreSQL has one, 0A000 for a pair not dumped."""
    resolved = (table or coercion_data.OPERATORS).get((op, left.ty.name, right.ty.name))
    if resolved is None:
        raise _Unsupported(f"with {_shown(left.ty.name)} {op} {_shown(right.ty.name)}")
    if resolved[0] == "error":
        _, sqlstate, message, hint = resolved
        raise PgError(sqlstate, message, hint=hint)
    lparam, rparam, result = resolved
    return Op(op, _argument(left, lparam), _argument(right, rparam), Ty(result))


def _typname(n: Node) -> str:
    return n.ty.name


def _shown(typname: str) -> str:
    return format_type(Ty(typname))


def _argument(n: Node, param: str) -> Node:
    """An operator argument coerced to the operator's declared argument type (implicit;
    polymorphic parameters take the argument as it is)."""
    if param.startswith("any") or param == n.ty.name:
        return n
    return _coerce(n, Ty(param), explicit=False, implicit_only=True)


def _pathway(source: str, target: str, explicit: bool, implicit_only: bool = False) -> str | None:
    """How ``source`` becomes ``target`` (find_coercion_pathway): a pg_cast entry usable
    in this context, else I/O conversion to a string type (assignment) or between a
    string type and another (explicit)."""
    entry = coercion_data.CASTS.get((source, target))
    if entry is not None:
        context, how = entry
        if context == "i" or (context == "a" and not implicit_only) or explicit:
            return how
        return None
    if implicit_only:
        return None
    cats = coercion_data.CATEGORIES
    if cats.get(target) == "S":
        return "io"
    if explicit and cats.get(source) == "S":
        return "io"
    return None


def _coerce(n: Node, target: Ty, explicit: bool, colname: str | None = None, implicit_only: bool = False) -> Node:
    """coerce_to_target_type: an unknown literal becomes a constant of the target type
    (through its input function); another type gets its cast node, then a length
    coercion when the target has a type modifier."""
    if isinstance(n, Const) and n.ty == UNKNOWN:
        text = None if n.text is None else _output(target, n.text)
        const_ty = Ty(target.name, target.typmod if target.name == "interval" else -1)
        out: Node = Const(const_ty, text)
        return _length(out, target, explicit)
    source = n.ty.name
    if source == target.name:
        return _length(n, target, explicit)
    if source.startswith("_") or target.name.startswith("_"):
        raise _Unsupported(f"of type {_shown(source)} for a column of type {format_type(target)}")
    how = _pathway(source, target.name, explicit, implicit_only)
    if how is None:
        if colname is not None:
            raise PgError(
                "42804",
                f'column "{colname}" is of type {format_type(target)} but default expression is of type {_shown(source)}',
                hint="You will need to rewrite or cast the expression.",
            )
        if explicit:
            raise PgError("42846", f"cannot cast type {_shown(source)} to {format_type(target)}")
        raise _Unsupported(f"with an implicit cast from {_shown(source)} to {format_type(target)}")
    if target.typmod >= 0 and target.name in coercion_data.TYPMOD_TYPES:
        # the cast itself is hidden under the length coercion (hideInputCoercion)
        inner = Cast(n, Ty(target.name), how, False)
        return Cast(inner, target, "func", explicit)
    return Cast(n, Ty(target.name, -1), how, explicit)


def _length(n: Node, target: Ty, explicit: bool) -> Node:
    """coerce_type_typmod: a length coercion when the target has a modifier and the value
    is not already of it."""
    if target.typmod < 0 or target.name.lstrip("_") not in coercion_data.TYPMOD_TYPES or n.ty.typmod == target.typmod:
        return n
    return Cast(n, target, "func", explicit)


# ---------------------------------------------------------------------------------------------
# printing: ruleutils.c's get_rule_expr for these nodes


def deparse(n: Node, pretty: bool) -> str:
    """``pg_get_expr(adbin, adrelid[, pretty])``."""
    return _Printer(pretty).expr(n, showimplicit=False)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class _Printer:
    def __init__(self, pretty: bool) -> None:
        self.pretty = pretty

    def expr(self, n: Node, showimplicit: bool) -> str:
        if isinstance(n, Const):
            return self.const(n, 0)
        if isinstance(n, SqlValue):
            return n.word
        if isinstance(n, Func):
            return f"{n.name}({', '.join(self.expr(a, True) for a in n.args)})"
        if isinstance(n, Op):
            inner = f"{self.paren(n.left, True, n)} {n.op} {self.paren(n.right, True, n)}"
            return inner if self.pretty else f"({inner})"
        if not n.explicit and not showimplicit:
            return self.paren(n.arg, False, n)
        return self.coercion(n)

    def paren(self, n: Node, showimplicit: bool, parent: Node) -> str:
        """get_rule_expr_paren: parentheses in pretty mode where the child is not simple."""
        text = self.expr(n, showimplicit)
        if self.pretty and not _simple(n, parent):
            return f"({text})"
        return text

    def coercion(self, n: Cast) -> str:
        arg = n.arg
        if isinstance(arg, Const) and arg.ty.name == n.ty.name and arg.ty.typmod == -1:
            text = self.const(arg, -1)
        else:
            inner = self.paren(arg, False, n)
            text = inner if self.pretty else f"({inner})"
        return f"{text}::{format_type(n.ty)}"

    def const(self, c: Const, showtype: int) -> str:
        """get_const_expr."""
        if c.text is None:
            return "NULL" if showtype < 0 else f"NULL::{format_type(c.ty)}"
        name, text = c.ty.name, c.text
        need = False
        if name == "int4":
            if text.startswith("-"):
                out, need = _quote(text), True
            else:
                out = text
        elif name == "numeric":
            if text[:1].isdigit() and any(ch in text for ch in "eE."):
                out = text
            else:
                out, need = _quote(text), True
        elif name == "bool":
            out = "true" if text == "t" else "false"
        else:
            out = _quote(text)
        if showtype < 0:
            return out
        if name in ("bool", "unknown"):
            need = False
        elif name == "numeric":
            need = need or c.ty.typmod >= 0
        elif name != "int4":
            need = True
        return f"{out}::{format_type(c.ty)}" if need else out


_LOW = "+-"
_HIGH = "*/%"


def _simple(n: Node, parent: Node) -> bool:
    """isSimpleNode, for the node kinds above."""
    if isinstance(n, Const | SqlValue | Func):
        return True
    if isinstance(n, Cast):
        return True if n.kind == "func" else _simple(n.arg, n)
    # an operator
    if isinstance(parent, Op):
        op, parent_op = n.op[:1], parent.op[:1]
        lo, hi = op in _LOW, op in _HIGH
        plo, phi = parent_op in _LOW, parent_op in _HIGH
        if not (lo or hi) or not (plo or phi):
            return False
        if hi and plo:
            return True
        if lo and phi:
            return False
        return n is parent.left
    # a function call has its own parentheses; under a cast of any kind, it needs them
    return isinstance(parent, Func)
