"""How the rewriter writes numeric-typed expressions for DuckDB: PostgreSQL's operator and
function resolution for ``numeric``, and calls of :mod:`numeric_math`'s UDFs over the
operands' exact text.

PostgreSQL resolves ``numeric ⊕ integer`` and ``numeric ⊕ unknown`` to the numeric
operator, ``numeric ⊕ float8`` to the float8 one, and a function such as ``sqrt`` or
``round`` to its numeric version only when an argument is numeric (``sqrt(2)`` is float8's);
``div``, ``scale``, two-argument ``log``/``round``/``trunc`` exist for numeric alone. The
rewriter gives each operand's inferred type name (and whether DuckDB holds it as text); this
module answers with the DuckDB expression, or None when DuckDB's own operator is
PostgreSQL's (integers, floats)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from pglast import ast

from decoding.errors import PgError
from walsender_proxy.sql import numeric_math
from walsender_proxy.sql.nodes import call, cast, null_const, str_const

INTEGERS = frozenset({"int2", "int4", "int8"})
FLOATS = frozenset({"float4", "float8"})

#: Binary operators with a numeric version → UDF.
OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "^": "pow"}

#: (function name, argument count) → UDF, when an argument is numeric.
_FUNCTIONS = {
    ("sqrt", 1): "sqrt", ("exp", 1): "exp", ("ln", 1): "ln", ("log", 1): "log10",
    ("log10", 1): "log10", ("log", 2): "log", ("power", 2): "pow", ("pow", 2): "pow",
    ("abs", 1): "abs", ("sign", 1): "sign", ("ceil", 1): "ceil", ("ceiling", 1): "ceil",
    ("floor", 1): "floor", ("round", 1): "round", ("round", 2): "round_to",
    ("trunc", 1): "trunc", ("trunc", 2): "trunc_to", ("div", 2): "div_trunc",
    ("mod", 2): "mod", ("scale", 1): "scale", ("min_scale", 1): "min_scale",
    ("trim_scale", 1): "trim_scale",
}  # fmt: skip
#: Functions PostgreSQL has for numeric only: integer arguments come to them too.
_NUMERIC_ONLY = frozenset({("log", 2), ("round", 2), ("trunc", 2), ("div", 2), ("scale", 1), ("min_scale", 1), ("trim_scale", 1)})
#: The second argument is an int4 (a scale), not a numeric.
_SCALE_ARG = frozenset({"round_to", "trunc_to"})
INT_RESULTS = frozenset({"scale", "min_scale"})


class Operand(NamedTuple):
    """An argument as the rewriter typed it: DuckDB node, PostgreSQL type name (None when
    not inferred), and whether DuckDB holds the (numeric) value as its text."""

    node: ast.Node
    type: str | None
    text: bool = False

    @property
    def is_numeric(self) -> bool:
        return self.type == "numeric"


def is_numeric_operation(operands: Sequence[Operand]) -> bool:
    """PostgreSQL's resolution picks the numeric operator: one operand numeric, the others
    numeric, integers or untyped literals (a float8 makes it float8's)."""
    if not any(o.is_numeric for o in operands):
        return False
    return all(o.type in INTEGERS or o.type in ("numeric", "unknown") for o in operands)


def as_text(o: Operand) -> ast.Node:
    """An operand as the exact numeric text the UDFs take (untyped literals through
    numeric's input function, raising its 22P02)."""
    if o.text:
        return o.node
    node = o.node
    if isinstance(node, ast.A_Const):
        if node.isnull:
            return cast(null_const(), "varchar")
        v = node.val
        if isinstance(v, ast.Integer):
            return str_const(str(v.ival))
        if isinstance(v, ast.Float):
            return str_const(numeric_math.text(numeric_math.parse(v.fval)))
        if isinstance(v, ast.String):
            return str_const(numeric_math.text(numeric_math.parse(v.sval)))
    if o.type == "float4":  # (float4_numeric prints 6 digits of the float4, not 15 of a double)
        return call(numeric_math.udf_name("from_float4"), cast(node, "real"))
    if o.type in FLOATS:
        return call(numeric_math.udf_name("from_float8"), cast(node, "double"))
    if o.type == "numeric":
        return decimal_text(node)
    return cast(node, "varchar")


def decimal_text(node: ast.Node) -> ast.Node:
    """A DuckDB DECIMAL as numeric_out prints it: DuckDB writes DECIMAL(1,1) 0.5 as ``.5``."""
    # (RE2's replacement "\\10.": group 1, then "0.")
    return call("regexp_replace", cast(node, "varchar"), str_const("^(-?)\\."), str_const("\\10."))


def operator(op: str, left: Operand | None, right: Operand) -> ast.Node:
    """``left op right`` (``op right`` when unary) over numeric operands."""
    if left is None:
        if op == "+":
            return as_text(right)
        if op != "-":
            raise PgError("42883", f"operator does not exist: {op} numeric")
        return call(numeric_math.udf_name("neg"), as_text(right))
    return call(numeric_math.udf_name(OPERATORS[op]), as_text(left), as_text(right))


def function(name: str, args: Sequence[Operand]) -> tuple[ast.Node, str] | None:
    """The numeric version of ``name(args)`` and its result type, or None when
    PostgreSQL would not pick one (no numeric argument, or a float8 one)."""
    key = (name, len(args))
    udf = _FUNCTIONS.get(key)
    if udf is None:
        return None
    if udf in _SCALE_ARG:
        value, digits = args
        if not (value.is_numeric or key in _NUMERIC_ONLY) or value.type not in ("numeric", *INTEGERS, "unknown"):
            return None
        if digits.type not in INTEGERS and digits.type != "unknown":
            return None
        return call(numeric_math.udf_name(udf), as_text(value), cast(digits.node, "bigint")), "numeric"
    if key in _NUMERIC_ONLY:
        if not all(a.type in ("numeric", "unknown", *INTEGERS) for a in args):
            return None
    elif not is_numeric_operation(args):
        return None
    out = call(numeric_math.udf_name(udf), *(as_text(a) for a in args))
    return out, "int4" if udf in INT_RESULTS else "numeric"


#: Aggregates whose numeric results DuckDB computes in double (or not at all for numeric
#: held as text): PostgreSQL's name → numeric_math's list aggregate.
AGGREGATES = numeric_math.LIST_AGGREGATES


def aggregate(name: str, arg: Operand) -> str | None:
    """The list aggregate that computes ``name(arg)`` exactly, or None when DuckDB's own
    is PostgreSQL's: sum of integers or of DECIMAL-held numeric is exact in DuckDB."""
    agg = AGGREGATES.get(name)
    if agg is None or arg.type not in ("numeric", *INTEGERS):
        return None
    if agg == "sum" and not arg.text:
        return None
    return numeric_math.list_udf_name(agg)
