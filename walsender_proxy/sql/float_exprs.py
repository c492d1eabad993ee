"""How the rewriter writes float-typed expressions for DuckDB: PostgreSQL's operator and
function resolution for ``float8`` and ``float4``, with PostgreSQL's errors (``float.c``).

DuckDB's float arithmetic is IEEE 754's and never raises; PostgreSQL's raises 22003 when
finite operands overflow or underflow, 22012 for a zero divisor, 2201E/2201F outside the
domain of logarithms, roots and powers, 22003 "input is out of range" for trigonometry of an
infinity (see :mod:`walsender_proxy.sql.float_math`). Each operator or function becomes a
DuckDB ``CASE`` that computes the value and calls ``error()`` (a ``PGERR[…]`` text the
engine turns back into the SQLSTATE) for the rows PostgreSQL refuses — native DuckDB code,
so ``price * qty`` stays about as fast as it was.

A ``CASE`` names each operand several times. That is free for a column, a constant or a
parameter, and for small expressions of them; a bigger operand (a nested check, a
subquery, an aggregate, a call of a Python UDF, something volatile) would be computed again
for every mention, and nested checks would grow exponentially. Such operands go to the
equivalent ``wpx_float8_<name>`` UDF instead, which takes each operand once.

PostgreSQL's resolution, as :func:`operator` and :func:`function` apply it: ``float4 ⊕
float4`` and ``float4 ⊕ unknown`` are float4's operators, any other mix with a float
(integers, numeric, float8) is float8's; ``^``, ``|/`` and ``||/`` are float8's unless
numeric's ``^`` applies; float-only functions (``sin``, ``cbrt``…) take integers and numeric
as float8, and functions with a numeric version (``sqrt``, ``round``…) are float8's when no
argument is numeric. Floats have no ``%``, ``mod``, ``div`` or two-argument ``round``,
``trunc`` and ``log``: those are 42883, not DuckDB's answer."""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence

import pglast
from pglast import ast

from decoding.errors import PgError
from decoding.pgtypes import ColumnType, base_types
from walsender_proxy.sql import float_math, literals
from walsender_proxy.sql.nodes import call, str_const
from walsender_proxy.sql.nodes import cast as _cast
from walsender_proxy.sql.nodes import op as op_node
from walsender_proxy.sql.numeric_exprs import INTEGERS, Operand, decimal_text, is_numeric_operation

FLOATS = frozenset({"float4", "float8"})
#: Operand types a float operator or function takes (integers, numeric and untyped
#: literals convert to the float type).
_NUMBERS = frozenset({*INTEGERS, "numeric", "float4", "float8", "unknown"})
#: PostgreSQL's names of the types, in 42883's text.
_SHOWN = {
    "int2": "smallint", "int4": "integer", "int8": "bigint", "numeric": "numeric",
    "float4": "real", "float8": "double precision", "unknown": "unknown", "text": "text",
}  # fmt: skip

_E = "error('PGERR[{}] {}')".format
OVF, UNF = _E(*float_math.OVERFLOW), _E(*float_math.UNDERFLOW)
_RANGE = _E(*float_math.INPUT_RANGE)
_RPD = "CAST('0.017453292519943295' AS DOUBLE)"  # float_math.RADIANS_PER_DEGREE, exactly

#: DuckDB expressions of PostgreSQL's float operations over ``$1`` (and ``$2``), DOUBLE or
#: REAL alike. DuckDB orders NaN above every number, so a ``>`` test guards against it.
_TEMPLATES: dict[str, str] = {
    "add": f"CASE WHEN isinf($1 + $2) AND NOT isinf($1) AND NOT isinf($2) THEN {OVF} ELSE $1 + $2 END",
    "sub": f"CASE WHEN isinf($1 - $2) AND NOT isinf($1) AND NOT isinf($2) THEN {OVF} ELSE $1 - $2 END",
    "mul": f"""CASE WHEN isinf($1 * $2) AND NOT isinf($1) AND NOT isinf($2) THEN {OVF}
        WHEN $1 * $2 = 0 AND $1 <> 0 AND $2 <> 0 THEN {UNF} ELSE $1 * $2 END""",
    "div": f"""CASE WHEN $2 = 0 THEN CASE WHEN isnan($1) THEN $1 ELSE {_E(*float_math.ZERO_DIVIDE)} END
        WHEN isinf($1 / $2) AND NOT isinf($1) THEN {OVF}
        WHEN $1 / $2 = 0 AND $1 <> 0 AND NOT isinf($2) THEN {UNF} ELSE $1 / $2 END""",
    "pow": f"""CASE WHEN $1 = 0 AND $2 < 0 THEN {_E(*float_math.POW_ZERO_NEGATIVE)}
        WHEN $1 < 0 AND NOT isnan($2) AND floor($2) <> $2 THEN {_E(*float_math.POW_COMPLEX)}
        WHEN isinf(pow($1, $2)) AND isfinite($1) AND isfinite($2) THEN {OVF}
        WHEN pow($1, $2) = 0 AND $1 <> 0 AND isfinite($1) AND isfinite($2) THEN {UNF}
        ELSE pow($1, $2) END""",
    "sqrt": f"CASE WHEN $1 < 0 THEN {_E(*float_math.SQRT_NEGATIVE)} ELSE sqrt($1) END",
    "cbrt": "cbrt($1)",
    "exp": f"""CASE WHEN isfinite($1) AND isinf(exp($1)) THEN {OVF}
        WHEN isfinite($1) AND exp($1) = 0 THEN {UNF} ELSE exp($1) END""",
    "ln": f"""CASE WHEN $1 = 0 THEN {_E(*float_math.LOG_ZERO)}
        WHEN $1 < 0 THEN {_E(*float_math.LOG_NEGATIVE)} ELSE ln($1) END""",
    "log10": f"""CASE WHEN $1 = 0 THEN {_E(*float_math.LOG_ZERO)}
        WHEN $1 < 0 THEN {_E(*float_math.LOG_NEGATIVE)} ELSE log10($1) END""",
    **{f: f"CASE WHEN isinf($1) THEN {_RANGE} ELSE {f}($1) END" for f in ("sin", "cos", "tan", "cot")},
    **{f: f"CASE WHEN NOT isnan($1) AND ($1 < -1 OR $1 > 1) THEN {_RANGE} ELSE {f}($1) END" for f in ("asin", "acos")},
    "atan": "atan($1)",
    "atan2": "atan2($1, $2)",
    "sinh": "sinh($1)",
    "cosh": "cosh($1)",
    "tanh": "tanh($1)",
    "asinh": "asinh($1)",
    "acosh": f"CASE WHEN $1 < 1 THEN {_RANGE} ELSE acosh($1) END",
    "atanh": f"CASE WHEN NOT isnan($1) AND ($1 < -1 OR $1 > 1) THEN {_RANGE} ELSE atanh($1) END",
    "degrees": f"""CASE WHEN isinf($1 / {_RPD}) AND NOT isinf($1) THEN {OVF}
        WHEN $1 / {_RPD} = 0 AND $1 <> 0 THEN {UNF} ELSE $1 / {_RPD} END""",
    "radians": f"""CASE WHEN isinf($1 * {_RPD}) AND NOT isinf($1) THEN {OVF}
        WHEN $1 * {_RPD} = 0 AND $1 <> 0 THEN {UNF} ELSE $1 * {_RPD} END""",
    "to_float4": f"""CASE WHEN isfinite($1) AND abs($1) >= {float_math.FLOAT4_OVERFLOW_AT!r} THEN {OVF}
        WHEN $1 <> 0 AND abs($1) <= {float_math.FLOAT4_UNDERFLOW_AT!r} THEN {UNF} ELSE CAST($1 AS REAL) END""",
    # no errors, and no UDF needed
    "round": "round_even($1, 0)",  # rint: halves to even
    "trunc": "trunc($1)",
    "ceil": "ceil($1)",
    "floor": "floor($1)",
    "sign": "CAST(sign($1) AS DOUBLE)",
}  # fmt: skip

#: Functions whose float8 version PostgreSQL picks (the numeric hook had its chance):
#: name → template (float_math has the same under that name, for operands not repeatable).
_FUNCTIONS1 = {
    "sqrt": "sqrt", "cbrt": "cbrt", "exp": "exp", "ln": "ln", "log": "log10", "log10": "log10",
    "sin": "sin", "cos": "cos", "tan": "tan", "cot": "cot", "asin": "asin", "acos": "acos",
    "atan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh",
    "acosh": "acosh", "atanh": "atanh", "degrees": "degrees", "radians": "radians",
    "sind": "sind", "cosd": "cosd", "tand": "tand", "cotd": "cotd", "asind": "asind",
    "acosd": "acosd", "atand": "atand", "ceil": "ceil", "ceiling": "ceil", "floor": "floor",
    "round": "round", "trunc": "trunc", "sign": "sign",
}  # fmt: skip
_FUNCTIONS2 = {"atan2": "atan2", "atan2d": "atan2d", "power": "pow", "pow": "pow"}
#: Functions PostgreSQL has for numeric (and integers) only, with these argument counts.
_NO_FLOAT = {("round", 2), ("trunc", 2), ("log", 2), ("mod", 2), ("div", 2)}
#: Binary operators with a float version → template.
OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "^": "pow"}
_PREFIX = {"|/": "sqrt", "||/": "cbrt"}

#: Functions DuckDB computes as the C library does and that can be repeated freely.
_REPEATABLE_CALLS = frozenset({
    "isinf", "isfinite", "isnan", "error", "abs", "sqrt", "cbrt", "exp", "ln", "log10", "pow",
    "sin", "cos", "tan", "cot", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "round_even", "trunc", "ceil", "floor", "sign",
})  # fmt: skip
#: The most nodes an operand a template repeats may have (a nested check of two columns
#: fits once, so ``a * b + c`` stays native; a check of checks goes to the UDF).
_REPEAT_BUDGET = 80

_BASES = {t.name: t for t in base_types()}


def _shown(t: str | None) -> str | None:
    return _SHOWN.get(t or "")


@functools.cache
def _template(name: str) -> ast.Node:
    stmt = pglast.parse_sql(f"SELECT {_TEMPLATES[name]}")[0].stmt
    return stmt.targetList[0].val


def _substitute(node: object, args: Sequence[ast.Node]) -> object:
    """A copy of a template tree with ``$n`` replaced by copies of ``args[n - 1]``."""
    if isinstance(node, ast.ParamRef):
        return copy.deepcopy(args[node.number - 1])
    if isinstance(node, tuple):
        return tuple(_substitute(x, args) for x in node)
    if isinstance(node, ast.Node):
        fields = {k: _substitute(getattr(node, k), args) for k in node if getattr(node, k) is not None}
        return type(node)(**fields)
    return node


def _size(node: object, budget: int) -> int:
    """How many nodes ``node`` has (counting stops past ``budget``); past it as well when
    something in it must not be computed twice."""
    if isinstance(node, tuple):
        n = 0
        for x in node:
            n += _size(x, budget - n)
            if n > budget:
                break
        return n
    if not isinstance(node, ast.Node):
        return 0
    if isinstance(node, ast.SubLink):
        return budget + 1
    if isinstance(node, ast.FuncCall):
        fn = node.funcname[-1].sval.lower() if node.funcname else ""
        if fn not in _REPEATABLE_CALLS or node.over is not None or node.agg_star or node.agg_distinct:
            return budget + 1
    n = 1
    for k in node:
        n += _size(getattr(node, k), budget - n)
        if n > budget:
            break
    return n


def _repeatable(node: ast.Node) -> bool:
    return _size(node, _REPEAT_BUDGET) <= _REPEAT_BUDGET


def apply(name: str, args: Sequence[ast.Node], float4: bool = False) -> ast.Node:
    """PostgreSQL's float operation ``name`` over DuckDB expressions already of its type:
    the template when its operands can be repeated, else the UDF."""
    sql = _TEMPLATES.get(name)
    if sql is not None and all(sql.count(f"${i}") <= 1 or _repeatable(a) for i, a in enumerate(args, 1)):
        return _substitute(_template(name), args)  # type: ignore[return-value]
    return call(float_math.udf_name(name, float4), *args)


# ------------------------------------------------------------------------- operands


def _as_float(o: Operand, float4: bool) -> ast.Node:
    """An operand as a DuckDB DOUBLE (REAL for float4's operators), converted as
    PostgreSQL's implicit casts convert it."""
    target = "float4" if float4 else "float8"
    duck = "real" if float4 else "double"
    if o.type == target:
        return o.node
    if o.type == "unknown":
        from walsender_proxy.sql import literals

        ctype = ColumnType(_BASES[target])
        if isinstance(o.node, ast.A_Const) and not o.node.isnull and isinstance(o.node.val, ast.String):
            return literals.unknown_literal(o.node.val.sval, ctype)
        if isinstance(o.node, ast.A_Const) and o.node.isnull:
            return _cast(o.node, duck)
        return literals.input_call(_cast(o.node, "varchar"), ctype)
    if o.type == "numeric":
        if isinstance(o.node, ast.A_Const) and isinstance(o.node.val, ast.Float):
            return _cast(str_const(o.node.val.fval), duck)  # (DuckDB's text input rounds once)
        # through the numeric's text: DuckDB's DECIMAL → DOUBLE divides, rounding twice
        return _cast(o.node if o.text else _cast(decimal_text(o.node), "varchar"), duck)
    return _cast(o.node, duck)  # integers (rounded to nearest, as C converts), float4 → float8


def as_float8(o: Operand) -> ast.Node:
    """An operand as a DuckDB DOUBLE, converted as PostgreSQL's implicit cast to float8."""
    return _as_float(o, False)


def as_float(o: Operand, target: str) -> ast.Node:
    """An operand converted as PostgreSQL's implicit cast to ``target`` (float4 or float8)."""
    return _as_float(o, target == "float4")


def _typed(operands: Sequence[Operand]) -> bool:
    return all(o.type in _NUMBERS for o in operands)


def _no_operator(op: str, left: Operand | None, right: Operand) -> PgError | None:
    shown = [_shown(o.type) for o in (left, right) if o is not None]
    if any(s is None for s in shown):
        return None
    text = f"{shown[0]} {op} {shown[1]}" if left is not None else f"{op} {shown[0]}"
    return PgError(
        "42883", f"operator does not exist: {text}",
        hint="No operator matches the given name and argument types. You might need to add explicit type casts.",
    )  # fmt: skip


def operator(op: str, left: Operand | None, right: Operand) -> tuple[ast.Node, str] | None:
    """``left op right`` (``op right`` when prefix) as PostgreSQL's float operator, with the
    result's type name; None when it is not a float operator. Raises 42883 for ``%`` of a
    float, 22P02 for an untyped literal that is not a number."""
    operands = [right] if left is None else [left, right]
    has_float = any(o.type in FLOATS for o in operands)
    if not _typed(operands):
        return None
    if op in _COMPARISONS and left is not None:
        return _comparison(op, left, right)
    if op == "%" and has_float:
        err = _no_operator(op, left, right)
        if err is not None:
            raise err
        return None
    if left is None:
        name = _PREFIX.get(op)
        if name is None:
            return None  # (- and @ keep their operand's type; DuckDB's are PostgreSQL's)
        return apply(name, [_as_float(right, False)]), "float8"
    name = OPERATORS.get(op)
    if name is None or not (has_float or (op == "^" and not is_numeric_operation(operands))):
        return None
    float4 = name != "pow" and all(o.type in ("float4", "unknown") for o in operands) and has_float
    args = [_as_float(o, float4) for o in operands]
    return apply(name, args, float4), "float4" if float4 else "float8"


_COMPARISONS = frozenset({"=", "<>", "!=", "<", ">", "<=", ">="})


def _comparison(op: str, left: Operand, right: Operand) -> tuple[ast.Node, str] | None:
    """A comparison PostgreSQL makes in float8 where DuckDB would not: float4 with an
    integer, a numeric or a float8 (float48eq and the others widen the float4; DuckDB
    rounds the other side to REAL, so ``0.1::float4 = 0.1`` would be true), and float8 with a
    numeric (converted from its text, rounded once)."""
    types = {left.type, right.type}
    if not (("float4" in types and types & {*INTEGERS, "numeric", "float8"}) or types == {"float8", "numeric"}):
        return None
    return op_node(op, _as_float(left, False), _as_float(right, False)), "bool"


def _no_function(name: str, args: Sequence[Operand]) -> PgError | None:
    shown = [_shown(a.type) for a in args]
    if any(s is None for s in shown):
        return None
    return PgError(
        "42883", f"function {name}({', '.join(s or '' for s in shown)}) does not exist",
        hint="No function matches the given name and argument types. You might need to add explicit type casts.",
    )  # fmt: skip


def function(node: ast.FuncCall, name: str, args: Sequence[Operand]) -> tuple[ast.Node, str] | None:
    """``name(args)`` (the call ``node``) as PostgreSQL's float8 function, with its result
    type; None when PostgreSQL would not pick one (called after the numeric versions were
    considered) or the call is an aggregate's or a window's. Raises 42883 for numeric-only
    functions given a float."""
    if node.agg_star or node.agg_distinct or node.over is not None or node.agg_filter is not None or node.func_variadic:
        return None
    if not args or not _typed(args):
        return None
    if (name, len(args)) in _NO_FLOAT:
        if any(a.type in FLOATS for a in args):
            err = _no_function(name, args)
            if err is not None:
                raise err
        return None
    if name in FLOATS and len(args) == 1:  # float8(x), float4(x): the casts, called as functions
        if name == "float4" and args[0].type in ("float8", "numeric"):
            return cast(args[0], "float4")
        return _as_float(args[0], name == "float4"), name
    if name in ("float4send", "float8send") and len(args) == 1:
        float4 = name == "float4send"
        if float4 and args[0].type in ("float8", "numeric"):  # (no implicit cast to float4)
            raise _no_function(name, args) or PgError("42883", f"function {name} does not exist")
        return call(float_math.udf_name("send", float4), _as_float(args[0], float4)), "bytea"
    if name == "width_bucket" and len(args) == 4 and any(a.type in FLOATS for a in args[:3]):
        if args[3].type not in ("int2", "int4"):
            return None
        bounds = [_as_float(a, False) for a in args[:3]]
        return call(float_math.udf_name("width_bucket"), *bounds, _cast(args[3].node, "integer")), "int4"
    fn = _FUNCTIONS1.get(name) if len(args) == 1 else _FUNCTIONS2.get(name) if len(args) == 2 else None
    if fn is None:
        return None
    return apply(fn, [_as_float(a, False) for a in args]), "float8"


def cast(arg: Operand, target: str) -> tuple[ast.Node, str] | None:
    """``arg::target`` when PostgreSQL's cast can fail where DuckDB's answers (or fails
    otherwise): float8 → float4 overflows and underflows (22003), numeric → float4 goes
    through float4's input (22003 naming the number). None for the other casts."""
    if target != "float4" or arg.type not in ("float8", "numeric"):
        return None
    if arg.type == "float8":
        return apply("to_float4", [arg.node]), "float4"

    text = arg.node if arg.text else decimal_text(arg.node)
    return literals.input_call(text, ColumnType(_BASES["float4"])), "float4"


def printed(node: ast.Node, type_name: str | None) -> ast.Node:
    """A value as text where PostgreSQL prints it with its output function (``||``,
    ``concat``): a float (or float array) as float8out prints it — DuckDB's own text of a
    DOUBLE is ``100000000000000.0`` — anything else as it is."""
    if type_name is None or type_name.lstrip("_") not in FLOATS:
        return node

    return literals.output_call(node, ColumnType(_BASES[type_name.lstrip("_")], -1, type_name.startswith("_")))


def element_texts(node: ast.Node, type_name: str | None) -> ast.Node:
    """A float array as its elements' text (for ``array_to_string``), anything else as it is."""
    if type_name not in ("_float4", "_float8"):
        return node

    return literals.elements_call(node, type_name[1:])
