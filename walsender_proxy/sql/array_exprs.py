"""PostgreSQL's array functions over DuckDB lists, with PostgreSQL's answers and errors.

A PostgreSQL array value has dimensions (up to 6) whatever its declared type; the proxy
holds one as a DuckDB list nested once per dimension, so the rewriter knows an expression's
number of dimensions from its inferred type (``__int4`` is a two-dimensional int4 array).
An empty array has no dimensions in PostgreSQL (``array_ndims('{}')`` is NULL): here that
is a list whose innermost levels hold no element. Lower bounds are always 1 (other bounds
are refused where a value is read). The functions below answer from the list's shape:
``array_length(a, d)`` is the length of level ``d``, NULL past the last level or for an
empty array, where DuckDB's own ``array_length`` raised an internal error.

The element functions (``array_positions``, ``array_remove``, ``array_replace``) compare
with ``IS NOT DISTINCT FROM`` as PostgreSQL's do (a NULL element matches NULL), and refuse
a multidimensional array with PostgreSQL's own 0A000 where PostgreSQL does; ``array_fill``
builds the nested list for a dimension array whose length is known when the statement is
rewritten (an ``ARRAY[…]`` or ``'{…}'`` constant), as its result type needs it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pglast import ast

from decoding.errors import PgError
from walsender_proxy.sql.json_text import parse_array_in
from walsender_proxy.sql.nodes import call, cast, null_const

#: PostgreSQL's MAXDIM.
MAX_DIMS = 6
#: PostgreSQL's MaxArraySize (MaxAllocSize / sizeof(Datum)).
MAX_ARRAY_SIZE = 134217727


def depth(type_name: str | None) -> int:
    """How many list levels an array type name has (``__int4``: 2; not an array: 0)."""
    if type_name is None:
        return 0
    return len(type_name) - len(type_name.lstrip("_"))


def _flat(a: str, levels: int) -> str:
    """``a`` flattened ``levels`` times (its elements, whatever the nesting)."""
    for _ in range(levels):
        a = f"flatten({a})"
    return a


def _empty(a: str, k: int) -> str:
    return f"len({_flat(a, k - 1)}) = 0"


def _level_len(a: str, d: int) -> str:
    """The length of level ``d`` (1-based) of a rectangular nested list."""
    return f"len({a}{'[1]' * (d - 1)})"


def _shape_macros(k: int) -> dict[str, str]:
    """The bound functions of a ``k``-level list (macro names end in ``k``)."""
    lens = "[" + ", ".join(_level_len("a", d) for d in range(1, k + 1)) + "]"
    empty = _empty("a", k)
    dims = " || ".join(f"'[1:' || {_level_len('a', d)} || ']'" for d in range(1, k + 1))
    return {
        f"pgc_arr_length{k}": f"""MACRO pgc_arr_length{k}(a, d) AS (CASE
            WHEN a IS NULL OR {empty} THEN NULL
            WHEN d BETWEEN 1 AND {k} THEN list_extract({lens}, d)::INTEGER END)""",
        f"pgc_arr_lower{k}": f"""MACRO pgc_arr_lower{k}(a, d) AS (CASE
            WHEN a IS NULL OR {empty} THEN NULL
            WHEN d BETWEEN 1 AND {k} THEN 1::INTEGER END)""",
        f"pgc_arr_ndims{k}": f"""MACRO pgc_arr_ndims{k}(a) AS (CASE
            WHEN a IS NULL OR {empty} THEN NULL ELSE {k}::INTEGER END)""",
        f"pgc_arr_dims{k}": f"""MACRO pgc_arr_dims{k}(a) AS (CASE
            WHEN a IS NULL OR {empty} THEN NULL ELSE {dims} END)""",
        f"pgc_arr_cardinality{k}": f"""MACRO pgc_arr_cardinality{k}(a) AS (
            len({_flat("a", k - 1)})::INTEGER)""",
    }


def _fill_macro(k: int) -> str:
    """array_fill(v, dims) for ``k`` dimensions: the nested list, '{}' when a length is 0
    (PostgreSQL has no empty dimension), PostgreSQL's errors for NULLs, a negative length
    or more than MaxArraySize elements."""
    body = "v"  # (list_resize copies: a lambda may not capture v, which can be a subquery)
    for d in range(k, 0, -1):
        body = f"list_resize(list_filter([{body}], lambda pgc_q: false), d[{d}], {body})"
    product = " * ".join(f"d[{d}]::HUGEINT" for d in range(1, k + 1))
    negative = " OR ".join(f"d[{d}] < 0" for d in range(1, k + 1))
    return f"""MACRO pgc_array_fill{k}(v, d) AS (CASE
        WHEN d IS NULL THEN error('PGERR[22004] dimension array or low bound array cannot be null')
        WHEN len(d) <> {k} THEN error('PGERR[0A000] array_fill() with a dimension array whose length varies is not supported by walsender-proxy')
        WHEN list_position(d, NULL) IS NOT NULL THEN error('PGERR[22004] dimension values cannot be null')
        WHEN {negative} OR {product} > {MAX_ARRAY_SIZE}
            THEN error('PGERR[54000] array size exceeds the maximum allowed ({MAX_ARRAY_SIZE})')
        WHEN {product} = 0 THEN list_filter({body}, lambda pgc_x: false)
        ELSE {body} END)"""


def _fill_bounds_macro() -> str:
    """array_fill's lower-bound array: NULL, another length, NULL elements are
    PostgreSQL's errors; bounds other than 1 are refused (the lake's arrays start at 1)."""
    return """MACRO pgc_array_fill_lbounds(d, lb) AS (CASE
        WHEN d IS NULL OR lb IS NULL THEN error('PGERR[22004] dimension array or low bound array cannot be null')
        WHEN list_position(d, NULL) IS NOT NULL OR list_position(lb, NULL) IS NOT NULL
            THEN error('PGERR[22004] dimension values cannot be null')
        WHEN len(d) <> len(lb) THEN error('PGERR[2202E] wrong number of array subscripts')
        WHEN len(d) > 0 AND list_bool_and(list_transform(d, lambda pgc_n: pgc_n > 0))
            AND NOT list_bool_and(list_transform(lb, lambda pgc_b: pgc_b = 1))
            THEN error('PGERR[0A000] array lower bounds other than 1 are not supported by walsender-proxy')
        ELSE d END)"""


#: A list of DECIMALs as numeric_out prints each (numeric_exprs.decimal_text's rule).
DECIMAL_TEXTS = "pgc_decimal_texts"

def _nest_macro(k: int) -> str:
    """ARRAY[…] of arrays, ``k`` levels in all (ExecEvalArrayExpr, applied to the outermost
    constructor only: the inner ones are checked with it): no element at all gives '{}'
    (NULL and empty sub-arrays only); otherwise every sub-array at each level is there and
    has one length, else 2202E."""
    mismatch = "error('PGERR[2202E] multidimensional arrays must have array expressions with matching dimensions')"
    checks = []
    for d in range(2, k + 1):
        level = _flat("r", d - 2)
        checks.append(f"list_position({level}, NULL) IS NOT NULL")
        checks.append(f"len(list_distinct(list_transform({level}, lambda pgc_e: len(pgc_e)))) > 1")
    return f"""MACRO pgc_array_nest{k}(r) AS (CASE
        WHEN len({_flat("r", k - 1)}) = 0 THEN list_filter(r, lambda pgc_e: false)
        WHEN {" OR ".join(checks)} THEN {mismatch}
        ELSE r END)"""


def _shape(a: str, k: int) -> str:
    return "[" + ", ".join(_level_len(a, d) for d in range(1, k + 1)) + "]"


_INCOMPATIBLE = "error('PGERR[2202E] cannot concatenate incompatible arrays')"
_OTHER_DIMS = (
    "error('PGERR[0A000] array_cat() of a NULL or empty array and an array of fewer dimensions"
    " is not supported by walsender-proxy')"
)


def _cat_macro(k: int, j: int, first_deeper: bool) -> str:
    """array_cat of a ``k``-level and a ``j``-level list (k ≥ j; the deeper one first when
    ``first_deeper``), as array_cat does: a NULL or empty operand gives the other one —
    refused when that one has fewer dimensions than the result type —, equal dimensions
    join along the first (the others must match), one fewer becomes one more element."""
    a, b = ("a", "b") if first_deeper else ("b", "a")  # a: the deeper one
    deep_empty = f"({a} IS NULL OR {_empty(a, k)})"
    shallow_empty = f"({b} IS NULL OR {_empty(b, j)})"
    if k == j:
        joined = "list_concat(a, b)"
        check = f"{_shape('a[1]', k - 1)} <> {_shape('b[1]', k - 1)}" if k > 1 else "false"
        return f"""MACRO pgc_array_cat{k}_{j}(a, b) AS (CASE
            WHEN a IS NULL AND b IS NULL THEN NULL
            WHEN a IS NULL OR {_empty('a', k)} THEN b
            WHEN b IS NULL OR {_empty('b', k)} THEN a
            WHEN {check} THEN {_INCOMPATIBLE}
            ELSE {joined} END)"""
    if k == j + 1:
        joined = "list_append(a, b)" if first_deeper else "list_prepend(a, b)"
        check = f"{_shape(a + '[1]', j)} <> {_shape(b, j)}"
    else:
        joined, check = "NULL", "true"
    name = f"pgc_array_cat{k}_{j}" if first_deeper else f"pgc_array_cat{j}_{k}"
    return f"""MACRO {name}(a, b) AS (CASE
        WHEN a IS NULL AND b IS NULL THEN NULL
        WHEN {shallow_empty} THEN {a}
        WHEN {deep_empty} THEN {_OTHER_DIMS}
        WHEN {check} THEN {_INCOMPATIBLE}
        ELSE {joined} END)"""


def _sortkey_macro(k: int) -> str:
    """array_cmp's order as a DuckDB struct: the elements in storage order (a NULL element
    above the others, a shorter list below a longer one it starts), then the dimensions."""
    return f"""MACRO pgc_arr_sortkey{k}(a) AS (CASE WHEN a IS NULL THEN NULL
        ELSE {{'e': {_flat('a', k - 1)}, 'd': {_shape('a', k)}}} END)"""


def _agg_shapes_macro(k: int) -> str:
    """array_agg of ``k - 1``-dimensional arrays: one shape for all (after
    pgc_array_agg_arrays's checks of NULL and empty inputs)."""
    return f"""MACRO pgc_array_agg_shapes{k}(r) AS (CASE
        WHEN len(list_distinct(list_transform(r, lambda pgc_e: {_shape('pgc_e', k - 1)}))) > 1
            THEN error('PGERR[2202E] cannot accumulate arrays of different dimensionality')
        ELSE r END)"""


_HEADER = re.compile(r"MACRO (\w+)\(([^)]*)\) AS \((.*)\)\s*$", re.S)
_QUOTED = re.compile(r"('(?:[^']|'')*')")


def _once(body: str) -> str:
    """A macro whose parameters its expression reads once each: DuckDB expands a macro's
    text, so a parameter named five times in a macro applied to itself six deep (ARRAY of
    ARRAY…, a || b || c…) would bind 5^6 copies. The parameters go into one struct, read
    in a lambda (which may capture its own variable but not a subquery)."""
    m = _HEADER.match(body)
    assert m is not None, body
    name, params, expr = m.group(1), [p.strip() for p in m.group(2).split(",")], m.group(3)
    parts = _QUOTED.split(expr)
    code = " ".join(parts[::2])
    if all(len(re.findall(rf"\b{p}\b", code)) <= 1 for p in params):
        return body
    for i in range(0, len(parts), 2):
        for p in params:
            parts[i] = re.sub(rf"\b{p}\b", f"pgc_s.{p}", parts[i])
    packed = ", ".join(f"'{p}': {p}" for p in params)
    return f"MACRO {name}({', '.join(params)}) AS (list_transform([{{{packed}}}], lambda pgc_s: {''.join(parts)})[1])"


_RAW_MACROS: dict[str, str] = {
    # subscripts with PostgreSQL's bounds (DuckDB counts negative ones from the end)
    "pgc_sub_index": "MACRO pgc_sub_index(i) AS (CASE WHEN i < 1 THEN NULL ELSE i END)",
    "pgc_sub_lower": "MACRO pgc_sub_lower(i) AS (CASE WHEN i < 1 THEN 1 ELSE i END)",
    "pgc_sub_upper": "MACRO pgc_sub_upper(i) AS (CASE WHEN i < 0 THEN 0 ELSE i END)",
    **{f"pgc_arr_sortkey{k}": _sortkey_macro(k) for k in range(2, MAX_DIMS + 1)},
    **{f"pgc_array_agg_shapes{k}": _agg_shapes_macro(k) for k in range(3, MAX_DIMS + 1)},
    **{
        (f"pgc_array_cat{k}_{j}" if first else f"pgc_array_cat{j}_{k}"): _cat_macro(k, j, first)
        for k in range(1, MAX_DIMS + 1)
        for j in range(1, k + 1)
        for first in (True, False)
    },
    "pgc_array_append_nested": """MACRO pgc_array_append_nested(a) AS (CASE
        WHEN a IS NULL OR len(a) = 0 THEN error('PGERR[0A000] array_append() of a NULL or empty multidimensional array is not supported by walsender-proxy')
        ELSE error('PGERR[22000] argument must be empty or one-dimensional array') END)""",
    **{f"pgc_array_nest{k}": _nest_macro(k) for k in range(2, MAX_DIMS + 1)},
    DECIMAL_TEXTS: """MACRO pgc_decimal_texts(a) AS (
        list_transform(a, lambda pgc_t: regexp_replace(pgc_t::VARCHAR, '^(-?)\\.', '\\10.')))""",
    **{name: body for k in range(1, MAX_DIMS + 1) for name, body in _shape_macros(k).items()},
    **{f"pgc_array_fill{k}": _fill_macro(k) for k in range(1, MAX_DIMS + 1)},
    "pgc_array_fill_lbounds": _fill_bounds_macro(),
    "pgc_array_fill0": """MACRO pgc_array_fill0(v, d) AS (CASE
        WHEN d IS NULL THEN error('PGERR[22004] dimension array or low bound array cannot be null')
        WHEN len(d) <> 0 THEN error('PGERR[0A000] array_fill() with a dimension array whose length varies is not supported by walsender-proxy')
        ELSE list_filter([v], lambda pgc_x: false) END)""",
    # the 1-based positions of the elements not distinct from x
    "pgc_array_positions": """MACRO pgc_array_positions(a, x) AS (CASE WHEN a IS NULL THEN NULL
        ELSE list_transform(list_filter(list_zip(a, list_resize([x], len(a), x), range(1, len(a) + 1)),
            lambda pgc_p: pgc_p[1] IS NOT DISTINCT FROM pgc_p[2]), lambda pgc_p: pgc_p[3]::INTEGER) END)""",
    "pgc_array_remove": """MACRO pgc_array_remove(a, x) AS (CASE WHEN a IS NULL THEN NULL
        ELSE list_transform(list_filter(list_zip(a, list_resize([x], len(a), x)),
            lambda pgc_p: pgc_p[1] IS DISTINCT FROM pgc_p[2]), lambda pgc_p: pgc_p[1]) END)""",
    # trim_array: the last n elements gone (2202E beyond the length, as array_trim's check)
    "pgc_array_trim": """MACRO pgc_array_trim(a, n) AS (CASE WHEN a IS NULL OR n IS NULL THEN NULL
        WHEN n < 0 OR n > len(a)
            THEN error('PGERR[2202E] number of elements to trim must be between 0 and ' || len(a))
        ELSE a[1:len(a) - n] END)""",
    "pgc_array_replace": """MACRO pgc_array_replace(a, x, y) AS (CASE WHEN a IS NULL THEN NULL
        ELSE list_transform(list_zip(a, list_resize([x], len(a), x), list_resize([y], len(a), y)),
            lambda pgc_p: CASE WHEN pgc_p[1] IS NOT DISTINCT FROM pgc_p[2] THEN pgc_p[3] ELSE pgc_p[1] END) END)""",
}
#: The macros whose result can be their own argument (a || b || c…): their parameters bound once.
_CHAINED = re.compile(r"pgc_array_(cat|remove|replace|positions|trim)")
MACROS: dict[str, str] = {name: _once(body) if _CHAINED.match(name) else body for name, body in _RAW_MACROS.items()}


@dataclass
class Result:
    """A rewritten call: its DuckDB node, its PostgreSQL type name, the macros it needs."""

    node: ast.Node
    type: str
    needs: set[str] = field(default_factory=set)


_SHAPE_FUNCTIONS = {
    "array_length": ("pgc_arr_length", 2),
    "array_upper": ("pgc_arr_length", 2),
    "array_lower": ("pgc_arr_lower", 2),
    "array_ndims": ("pgc_arr_ndims", 1),
    "array_dims": ("pgc_arr_dims", 1),
    "cardinality": ("pgc_arr_cardinality", 1),
}
_SHAPE_RESULT = {"array_dims": "text"}
_INTEGERS = ("int2", "int4", "int8")

#: Functions this module answers for (given a one-based array argument).
FUNCTIONS = frozenset({
    *_SHAPE_FUNCTIONS, "array_positions", "array_remove", "array_replace", "array_fill", "array_position",
    "array_append", "array_prepend", "array_cat", "trim_array",
})  # fmt: skip


def function(
    name: str,
    args: Sequence[ast.Node],
    types: Sequence[str | None],
    no_function: Callable[[], PgError],
    dims_of: Callable[[ast.Node], int | None],
) -> Result | None:
    """``name(args)`` with PostgreSQL's answers, or None to leave it to the rewriter's
    general path. ``types`` are the arguments' PostgreSQL type names (None when not
    inferred, ``unknown`` for a quoted literal); ``no_function`` makes the 42883 of a call
    no signature matches; ``dims_of`` the length of a constant dimension array."""
    if name in _SHAPE_FUNCTIONS:
        macro, arity = _SHAPE_FUNCTIONS[name]
        k = depth(types[0]) if types else 0
        if len(args) != arity or k == 0:
            if len(args) == arity and types[0] in (None, "unknown"):
                return None
            raise no_function()
        if arity == 2 and types[1] not in (*_INTEGERS, "unknown", None):
            raise no_function()
        rest = [cast(args[1], "integer")] if arity == 2 else []
        return Result(call(f"{macro}{k}", args[0], *rest), _SHAPE_RESULT.get(name, "int4"), {f"{macro}{k}"})
    if name in ("array_position", "array_append", "array_prepend", "array_cat"):
        at = 1 if name == "array_prepend" else 0
        if len(args) < 2 or (depth(types[at]) < 2 and name != "array_cat"):
            return None  # (DuckDB's list functions, as before)
        if name == "array_position":
            raise PgError("0A000", "searching for elements in multidimensional arrays is not supported")
        if name == "array_cat":
            ka, kb = depth(types[0]), depth(types[1])
            if len(args) != 2 or not ka or not kb or (types[0] or "").lstrip("_") != (types[1] or "").lstrip("_"):
                return None
            node, macro = concat(args[0], args[1], ka, kb)
            return Result(node, types[0] if ka >= kb else types[1] or "", {macro})
        node, macro = append_nested(args[at])
        return Result(node, types[at] or "", {macro})
    if name == "array_fill":
        return _array_fill(args, types, no_function, dims_of)
    if name == "trim_array":
        k = depth(types[0]) if args else 0
        if len(args) != 2 or (k == 0 and types[0] not in (None, "unknown")) or types[1] not in (*_INTEGERS, "unknown", None):
            raise no_function()
        if k == 0:
            return None
        if k > 1:
            raise PgError("0A000", "trim_array() of a multidimensional array is not supported by walsender-proxy")
        return Result(call("pgc_array_trim", args[0], cast(args[1], "integer")), types[0] or "", {"pgc_array_trim"})
    if name in ("array_positions", "array_remove", "array_replace"):
        arity = 3 if name == "array_replace" else 2
        if len(args) != arity:
            raise no_function()
        k = depth(types[0])
        if k == 0:
            if types[0] in (None, "unknown") and isinstance(args[0], ast.A_Const) and args[0].isnull:
                return _null_array(name, types)
            if types[0] in (None, "unknown"):
                return None
            raise no_function()
        elem = (types[0] or "")[k:]
        for t in types[1:]:
            if t not in (None, "unknown", elem) and not _widens(t, elem):  # (anycompatible: another type promotes)
                raise PgError("0A000", f"{name}() with a value of another type than the array's elements is not supported by walsender-proxy")
        if k > 1:
            if name == "array_positions":
                raise PgError("0A000", "searching for elements in multidimensional arrays is not supported")
            if name == "array_remove":
                raise PgError("0A000", "removing elements from multidimensional arrays is not supported")
            raise PgError("0A000", "array_replace() of a multidimensional array is not supported by walsender-proxy")
        macro = f"pgc_{name}"
        return Result(call(macro, *args), "_int4" if name == "array_positions" else types[0] or "", {macro})
    return None


#: Types whose values convert to a later one implicitly (anycompatible's common type is
#: the array's own element type when the other value's comes before it).
_LADDER = ("int2", "int4", "int8", "numeric", "float4", "float8")


def _widens(value_type: str, elem: str) -> bool:
    """Whether anycompatible's common type of ``value_type`` and ``elem`` is ``elem``."""
    if elem == "text" and value_type == "varchar":
        return True
    if value_type not in _LADDER or elem not in _LADDER:
        return False
    if elem == "float4":  # (DuckDB would compare a numeric with a float4 in double)
        return False
    return _LADDER.index(value_type) <= _LADDER.index(elem)


def _null_array(name: str, types: Sequence[str | None]) -> Result | None:
    """``array_positions(NULL, 1)``: PostgreSQL types the NULL as the value's array type;
    the answer is NULL."""
    if name == "array_positions":
        return Result(cast(null_const(), "integer", array=True), "_int4")
    elem = next((t for t in types[1:] if t not in (None, "unknown")), None)
    if elem is None or depth(elem) > 0:
        return None
    return Result(cast(null_const(), "varchar", array=True) if elem == "text" else null_const(), "_" + elem)


def _array_fill(
    args: Sequence[ast.Node],
    types: Sequence[str | None],
    no_function: Callable[[], PgError],
    dims_of: Callable[[ast.Node], int | None],
) -> Result:
    if len(args) not in (2, 3):
        raise no_function()
    value_t = types[0]
    if any(depth(t) > 1 and t.lstrip("_") == "int4" for t in types[1:] if t is not None):
        raise PgError("2202E", "wrong number of array subscripts")
    if any(t not in ("_int4", "unknown", None) for t in types[1:]):
        raise no_function()
    if value_t == "unknown":
        raise PgError("42804", "could not determine polymorphic type because input has type unknown")
    if value_t is None or depth(value_t) > 0:
        raise PgError("0A000", "array_fill() of an array value is not supported by walsender-proxy")
    k = dims_of(args[1])
    if k is None:
        raise PgError("0A000", "array_fill() with a dimension array that is not a constant is not supported by walsender-proxy")
    if k > MAX_DIMS:
        raise PgError("54000", f"number of array dimensions ({k}) exceeds the maximum allowed ({MAX_DIMS})")
    dims: ast.Node = cast(args[1], "integer", array=True)
    needs = {f"pgc_array_fill{k}"}
    if len(args) == 3:
        dims = call("pgc_array_fill_lbounds", dims, cast(args[2], "integer", array=True))
        needs.add("pgc_array_fill_lbounds")
    return Result(call(f"pgc_array_fill{k}", args[0], dims), "_" * max(k, 1) + value_t, needs)


def constant_length(node: ast.Node) -> int | None:
    """The length of an ``ARRAY[…]`` constructor (as the rewriter leaves it: possibly
    under casts); None for anything else."""
    while isinstance(node, ast.TypeCast):
        node = node.arg
    if isinstance(node, ast.A_ArrayExpr):
        return len(node.elements or ())
    if isinstance(node, ast.A_Const) and node.isnull:
        return 0
    return None



#: Operators whose result is not boolean: ``x op ANY (array)`` is PostgreSQL's 42809.
NON_BOOLEAN_OPERATORS = frozenset({"+", "-", "*", "/", "%", "^", "||", "&", "|", "#", "<<", ">>", "|/", "||/", "@"})


def elements(node: ast.Node, k: int) -> ast.Node:
    """A ``k``-level list as the list of its elements (``x = ANY(a)`` and ``unnest(a)`` see
    a multidimensional array's elements in storage order)."""
    for _ in range(k - 1):
        node = call("flatten", node)
    return node


def nested(node: ast.Node, k: int) -> tuple[ast.Node, str | None]:
    """An ``ARRAY[…]`` of ``k`` levels with PostgreSQL's checks of its sub-arrays (and the
    macro it needs); a one-level one as it is. Elements that are ARRAY[…] constructors lose
    their own check: this one covers every level."""
    if k < 2:
        return node, None
    if isinstance(node, ast.A_ArrayExpr):
        node.elements = tuple(unchecked(e) for e in node.elements or ())
    if k > MAX_DIMS:
        raise PgError("54000", f"number of array dimensions ({k}) exceeds the maximum allowed ({MAX_DIMS})")
    return call(f"pgc_array_nest{k}", node), f"pgc_array_nest{k}"


def concat(left: ast.Node, right: ast.Node, ka: int, kb: int) -> tuple[ast.Node, str]:
    """``left || right`` of two arrays (array_cat): its node and the macro it needs
    (pgcatalog's for one dimension: it binds no lambda)."""
    macro = "pgc_array_cat" if ka == kb == 1 else f"pgc_array_cat{ka}_{kb}"
    return call(macro, left, right), macro


def append_nested(array: ast.Node) -> tuple[ast.Node, str]:
    """array_append/array_prepend of a multidimensional array: PostgreSQL's 22000."""
    return call("pgc_array_append_nested", array), "pgc_array_append_nested"


def is_multidimensional_literal(text: str) -> bool:
    """``'{{…}}'``: an array literal whose first element is a sub-array."""
    s = text.lstrip(" \t\n\r\v\f")
    return s.startswith("{") and s[1:].lstrip(" \t\n\r\v\f").startswith("{")


def _quoted(v: object) -> str:
    if v is None:
        return "NULL"
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


def literal_rows(text: str) -> tuple[object, int, list[str | None]]:
    """A multidimensional array literal as nested lists whose leaves are one-dimensional
    literals (``'{"1","2"}'``, each read by the element type's input), and its number of
    dimensions and its elements; array_in's 22P02 for a malformed one, 54000 past six
    dimensions."""

    items = parse_array_in(text)

    def levels(node: object) -> int:
        return 1 + levels(node[0]) if isinstance(node, list) and node and isinstance(node[0], list) else 1

    k = levels(items)
    if k > MAX_DIMS:
        raise PgError("54000", f"number of array dimensions ({k}) exceeds the maximum allowed ({MAX_DIMS})")

    flat: list[str | None] = []

    def rows(node: object, level: int) -> object:
        assert isinstance(node, list)
        if not node:
            raise PgError("22P02", f'malformed array literal: "{text}"', detail='Unexpected "}" character.')
        if level == k:
            flat.extend(None if v is None else str(v) for v in node)
            return "{" + ",".join(_quoted(v) for v in node) + "}"
        return [rows(child, level + 1) for child in node]

    return rows(items, 1), k, flat


def sort_key(node: ast.Node, k: int) -> ast.Node:
    """A ``k``-level list's key in PostgreSQL's array order (pgc_arr_sortkey)."""
    return call(f"pgc_arr_sortkey{k}", node)


def unchecked(node: ast.Node) -> ast.Node:
    """An inner ARRAY[…] without its pgc_array_nest check."""
    if isinstance(node, ast.FuncCall) and node.funcname[-1].sval.startswith("pgc_array_nest") and node.args:
        return node.args[0]
    return node
