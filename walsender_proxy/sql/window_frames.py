"""Window definitions checked and framed as PostgreSQL 15 checks and frames them.

DuckDB runs the window functions, but it does not check a window definition as
PostgreSQL's parser does (parse_clause.c, transformWindowDefinitions and
transformFrameOffset), and its frame offsets behave otherwise in corner cases:

- GROUPS without ORDER BY, RANGE with an offset and not exactly one ORDER BY column,
  variables in an offset, and an offset of a type the ORDER BY column has no ``in_range``
  support function for are PostgreSQL errors (42P20, 42P10, 0A000) that DuckDB answers or
  words otherwise.
- A negative or NULL offset is an error PostgreSQL raises when the frame is computed
  (nodeWindowAgg.c for ROWS and GROUPS, the ``in_range`` functions for RANGE, which also
  refuse a NaN offset); DuckDB answers a NaN offset and words the others in its own terms.
- RANGE over integers computes ``value ± offset`` without overflow in PostgreSQL (an
  overflowing sum is past every value); DuckDB raises 22003.
- RANGE over floats: ``-Infinity + Infinity`` and ``Infinity - Infinity`` are NaN for
  DuckDB, which then puts the frame boundary at the NaN rows; PostgreSQL's
  ``in_range_float8_float8`` counts every value in range there. Those rows are refused.
- RANGE over numeric(p,s) (a DECIMAL for DuckDB) takes literal offsets, as exact
  DECIMALs. Refused (0A000): RANGE over an unconstrained numeric (held as text), a numeric
  offset that is not a literal, a subquery in an offset (DuckDB's binder has none) and a
  volatile function in one (PostgreSQL evaluates an offset once, DuckDB for each row).
- Window names: a duplicate, a missing one, a copy that overrides PARTITION BY or ORDER BY
  or copies a frame (42P20, 42704); ``OVER w`` is written out in full, since DuckDB
  resolves no window name outside the SELECT list. The grammar's frame errors are 42P20.
- Calls: ``count()`` and OVER on a plain function (42809); nth_value's and ntile's
  counts below 1 (22016, 22014), checked as DuckDB computes them.

Offsets are rewritten into DuckDB expressions evaluated per row whose failing branch calls
``error('PGERR[…] …')``: DuckDB evaluates them only when it computes a frame, so an empty
input raises nothing, as in PostgreSQL.

The order within peers (rows of equal ORDER BY keys) is not reproduced: PostgreSQL's is
what its unstable quicksort makes of the scan order, DuckDB's what its sort makes of its
own; SQL leaves it undefined, and no stable order reproduces PostgreSQL's.
"""

from __future__ import annotations

import copy
import decimal
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pglast import ast
from pglast.enums.parsenodes import (
    FRAMEOPTION_END_CURRENT_ROW,
    FRAMEOPTION_END_OFFSET_FOLLOWING,
    FRAMEOPTION_END_OFFSET_PRECEDING,
    FRAMEOPTION_GROUPS,
    FRAMEOPTION_RANGE,
    FRAMEOPTION_ROWS,
    FRAMEOPTION_START_OFFSET_FOLLOWING,
    FRAMEOPTION_START_OFFSET_PRECEDING,
    FRAMEOPTION_START_UNBOUNDED_PRECEDING,
    SortByDir,
)
from pglast.enums.primnodes import BoolExprType, NullTestType

from decoding.errors import PgError
from walsender_proxy.sql.nodes import call, cast, int_const, op, str_const

#: (rewritten expression, its PostgreSQL type name or None when unknown)
Typed = tuple[Any, "str | None"]
#: Rewrites one expression of the statement; returns it with its type name.
RewriteExpr = Callable[[Any], Typed]

_START_OFFSET = FRAMEOPTION_START_OFFSET_PRECEDING | FRAMEOPTION_START_OFFSET_FOLLOWING
_END_OFFSET = FRAMEOPTION_END_OFFSET_PRECEDING | FRAMEOPTION_END_OFFSET_FOLLOWING
#: FRAMEOPTION_DEFAULTS: RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW.
_DEFAULTS = FRAMEOPTION_RANGE | FRAMEOPTION_START_UNBOUNDED_PRECEDING | FRAMEOPTION_END_CURRENT_ROW

#: format_type_be's names of the types these messages can name.
_DISPLAY = {
    "int2": "smallint",
    "int4": "integer",
    "int8": "bigint",
    "float4": "real",
    "float8": "double precision",
    "bool": "boolean",
    "varchar": "text",  # (varchar sorts by text's operator class)
    "bpchar": "character",
    "timestamp": "timestamp without time zone",
    "timestamptz": "timestamp with time zone",
    "time": "time without time zone",
    "timetz": "time with time zone",
}

#: The offset types of each ORDER BY column type's in_range support functions (pg_amproc,
#: BTINRANGE_PROC) as PostgreSQL 15 registers them, the column's own type's first.
_IN_RANGE: Mapping[str, tuple[str, ...]] = {
    "int2": ("int2", "int4", "int8"),
    "int4": ("int4", "int2", "int8"),
    "int8": ("int8",),
    "float4": ("float8",),
    "float8": ("float8",),
    "numeric": ("numeric",),
    "date": ("interval",),
    "timestamp": ("interval",),
    "timestamptz": ("interval",),
    "time": ("interval",),
    "timetz": ("interval",),
    "interval": ("interval",),
}

#: Implicit casts (can_coerce_type with COERCION_IMPLICIT) between the offset types.
_IMPLICIT: Mapping[str, frozenset[str]] = {
    "int2": frozenset({"int2", "int4", "int8", "float4", "float8", "numeric"}),
    "int4": frozenset({"int4", "int8", "float4", "float8", "numeric"}),
    "int8": frozenset({"int8", "float4", "float8", "numeric"}),
    "float4": frozenset({"float4", "float8"}),
    "float8": frozenset({"float8"}),
    "numeric": frozenset({"numeric", "float4", "float8"}),
    "interval": frozenset({"interval"}),
}

#: Window functions (pg_proc.prokind = 'w') and aggregates PostgreSQL 15 has: OVER on any
#: other function is 42809.
WINDOW_FUNCTIONS = frozenset({
    "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead",
    "first_value", "last_value", "nth_value",
})  # fmt: skip
#: Window functions that are also hypothetical-set aggregates (called with arguments).
AGGREGATES_TOO = frozenset({"rank", "dense_rank", "percent_rank", "cume_dist"})
AGGREGATES = frozenset({
    "avg", "bit_and", "bit_or", "bit_xor", "bool_and", "bool_or", "count", "every", "max",
    "min", "sum", "string_agg", "array_agg", "json_agg", "jsonb_agg", "json_object_agg",
    "jsonb_object_agg", "xmlagg", "stddev", "stddev_pop", "stddev_samp", "variance",
    "var_pop", "var_samp", "corr", "covar_pop", "covar_samp", "regr_avgx", "regr_avgy",
    "regr_count", "regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy",
    "regr_syy", "mode", "percentile_cont", "percentile_disc", "range_agg",
    "range_intersect_agg",
})  # fmt: skip


#: Frame errors PostgreSQL's grammar raises (gram.y) with ERRCODE_WINDOWING_ERROR, where
#: libpg_query's ParseError carries no SQLSTATE (every other one of them is a 42601).
_GRAMMAR_WINDOWING = frozenset({
    "frame start cannot be UNBOUNDED FOLLOWING",
    "frame starting from following row cannot end with current row",
    "frame end cannot be UNBOUNDED PRECEDING",
    "frame starting from current row cannot have preceding rows",
    "frame starting from following row cannot have preceding rows",
})  # fmt: skip


#: What PostgreSQL's grammar refuses with ERRCODE_FEATURE_NOT_SUPPORTED.
_GRAMMAR_UNSUPPORTED = frozenset({
    "MATCH PARTIAL not yet implemented",
    "a column list with SET NULL is only supported for ON DELETE actions",
    "a column list with SET DEFAULT is only supported for ON DELETE actions",
})  # fmt: skip


def parse_error_sqlstate(message: str) -> str:
    """The SQLSTATE of a parse error PostgreSQL's grammar raises with this message."""
    if message in _GRAMMAR_UNSUPPORTED:
        return "0A000"
    return "42P20" if message in _GRAMMAR_WINDOWING else "42601"


def display(type_name: str) -> str:
    """A type's name as PostgreSQL's format_type_be prints it."""
    return _DISPLAY.get(type_name, type_name)


def mode(options: int) -> str:
    """ROWS, RANGE or GROUPS: the frame's unit, as PostgreSQL's messages name it."""
    if options & FRAMEOPTION_ROWS:
        return "ROWS"
    if options & FRAMEOPTION_GROUPS:
        return "GROUPS"
    return "RANGE"


def named_windows(defs: Sequence[ast.WindowDef] | None) -> dict[str, ast.WindowDef]:
    """A SELECT's WINDOW clause by name, as written (what a reference copies); a name
    defined twice is PostgreSQL's 42P20."""
    found: dict[str, ast.WindowDef] = {}
    for w in defs or ():
        if w.name in found:
            raise PgError("42P20", f'window "{w.name}" is already defined')
        found[w.name] = copy.deepcopy(w)  # (as written: the clause is rewritten in place)
    return found


def check_definition(
    wdef: ast.WindowDef, windows: Mapping[str, ast.WindowDef], in_clause: bool
) -> tuple[Any, ...]:
    """PostgreSQL's checks of one window definition (transformWindowDefinitions), in its
    order; returns the ORDER BY the window sorts by (its own, or the one it copies).
    ``in_clause``: the definition is an entry of the WINDOW clause (not an OVER)."""
    if wdef.name and not in_clause:  # OVER w: the named window, checked where defined
        if wdef.name not in windows:
            raise PgError("42704", f'window "{wdef.name}" does not exist')
        return tuple(windows[wdef.name].orderClause or ())
    if _has_window_call((wdef.partitionClause, wdef.orderClause)):
        raise PgError("42P20", "window functions are not allowed in window definitions")
    order = tuple(wdef.orderClause or ())
    ref = None
    if wdef.refname:
        ref = windows.get(wdef.refname)
        if ref is None:
            raise PgError("42704", f'window "{wdef.refname}" does not exist')
        if wdef.partitionClause:
            raise PgError(
                "42P20", f'cannot override PARTITION BY clause of window "{wdef.refname}"'
            )
        if order and ref.orderClause:
            raise PgError("42P20", f'cannot override ORDER BY clause of window "{wdef.refname}"')
        if ref.frameOptions != _DEFAULTS:
            hint = (
                None
                if (wdef.name or order or wdef.frameOptions != _DEFAULTS)
                else "Omit the parentheses in this OVER clause."
            )
            raise PgError(
                "42P20",
                f'cannot copy window "{wdef.refname}" because it has a frame clause',
                hint=hint,
            )
        order = order or tuple(ref.orderClause or ())
    options = wdef.frameOptions
    if options & FRAMEOPTION_RANGE and options & (_START_OFFSET | _END_OFFSET) and len(order) != 1:
        raise PgError(
            "42P20", "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column"
        )
    if options & FRAMEOPTION_GROUPS and not order:
        raise PgError("42P20", "GROUPS mode requires an ORDER BY clause")
    return order


def has_variables(node: Any) -> bool:
    """Whether an offset refers to a column of its query (PostgreSQL's checkExprIsVarFree;
    a subquery's own columns do not count)."""
    if isinstance(node, ast.ColumnRef):
        return True
    if isinstance(node, ast.SubLink):
        return False
    if isinstance(node, tuple | list):
        return any(has_variables(n) for n in node)
    if isinstance(node, ast.Node):
        return any(has_variables(getattr(node, a, None)) for a in type(node).__slots__)
    return False


def _has_window_call(node: Any) -> bool:
    """Whether an expression calls a window function (a subquery's own calls aside)."""
    if isinstance(node, ast.FuncCall) and node.over is not None:
        return True
    if isinstance(node, ast.SubLink):
        return False
    if isinstance(node, tuple | list):
        return any(_has_window_call(n) for n in node)
    if isinstance(node, ast.Node):
        return any(_has_window_call(getattr(node, a, None)) for a in type(node).__slots__)
    return False


#: Volatile functions: an offset calling one has the value of its first evaluation in
#: PostgreSQL (calculate_frame_offsets), a new one for each row in DuckDB.
_VOLATILE = frozenset({
    "random", "setseed", "clock_timestamp", "timeofday", "nextval", "currval", "setval",
    "gen_random_uuid", "uuid_generate_v4",
})  # fmt: skip


def _calls(node: Any, names: frozenset[str]) -> bool:
    """Whether an expression calls one of ``names``."""
    if isinstance(node, ast.FuncCall) and node.funcname[-1].sval.lower() in names:
        return True
    if isinstance(node, tuple | list):
        return any(_calls(n, names) for n in node)
    if isinstance(node, ast.Node):
        return any(_calls(getattr(node, a, None), names) for a in type(node).__slots__)
    return False


def _has_subquery(node: Any) -> bool:
    if isinstance(node, ast.SubLink):
        return True
    if isinstance(node, tuple | list):
        return any(_has_subquery(n) for n in node)
    if isinstance(node, ast.Node):
        return any(_has_subquery(getattr(node, a, None)) for a in type(node).__slots__)
    return False


def _constant(node: Any) -> int | float | str | None:
    """A literal offset's value: an int or float, None for NULL, "?" when not a literal."""
    if isinstance(node, ast.A_Const):
        if node.isnull:
            return None
        if isinstance(node.val, ast.Integer):
            return node.val.ival
        if isinstance(node.val, ast.Float):
            return float(node.val.fval)
        return "?"
    if (
        isinstance(node, ast.A_Expr)
        and node.lexpr is None
        and node.name
        and node.name[-1].sval in ("-", "+")
    ):
        inner = _constant(node.rexpr)
        if isinstance(inner, int | float) and not isinstance(inner, bool):
            return -inner if node.name[-1].sval == "-" else inner
    return "?"


def _offset_type(order_type: str, offset_type: str | None) -> str:
    """The type PostgreSQL coerces a RANGE offset to (transformFrameOffset's choice of
    in_range function), or its 0A000 when there is none."""
    rights = _IN_RANGE.get(order_type)
    if rights is None:
        raise PgError(
            "0A000",
            f"RANGE with offset PRECEDING/FOLLOWING is not supported for column type {display(order_type)}",
        )
    if offset_type in (None, "unknown"):
        return rights[0]
    if offset_type in rights:
        return offset_type
    matches = [r for r in rights if r in _IMPLICIT.get(offset_type, frozenset())]
    if not matches:
        raise PgError(
            "0A000",
            f"RANGE with offset PRECEDING/FOLLOWING is not supported for column type {display(order_type)} "
            f"and offset type {display(offset_type)}",
            hint="Cast the offset value to an appropriate type.",
        )
    return matches[0]


def _fails(sqlstate: str, message: str) -> ast.FuncCall:
    """DuckDB's error() carrying a PostgreSQL error the executor gives back whole."""
    return call("error", str_const(f"PGERR[{sqlstate}] {message}"))


def _guarded(value: Any, cases: Sequence[tuple[Any, ast.Node]]) -> ast.CaseExpr:
    """``CASE WHEN cond THEN error(…) … ELSE value END``."""
    return ast.CaseExpr(
        args=tuple(ast.CaseWhen(expr=cond, result=err) for cond, err in cases), defresult=value
    )


def _or(*conds: ast.Node) -> ast.Node:
    return conds[0] if len(conds) == 1 else ast.BoolExpr(boolop=BoolExprType.OR_EXPR, args=conds)


def frame(
    wdef: ast.WindowDef,
    order: Sequence[Any],
    order_type: str | None,
    text_numeric: bool,
    rewrite: RewriteExpr,
) -> None:
    """Rewrite the frame offsets of ``wdef`` (a window defining its own frame), checking
    them as PostgreSQL does. ``order`` is the rewritten ORDER BY the window sorts by;
    ``order_type`` the type of its only key (RANGE), None when unknown; ``text_numeric``
    that key is a numeric DuckDB holds as text. Widens an integer RANGE key in place."""
    options = wdef.frameOptions
    unit = mode(options)
    offsets = [
        (which, off, preceding)
        for which, off, preceding in (
            ("starting", wdef.startOffset, bool(options & FRAMEOPTION_START_OFFSET_PRECEDING)),
            ("ending", wdef.endOffset, bool(options & FRAMEOPTION_END_OFFSET_PRECEDING)),
        )
        if off is not None
    ]
    new: dict[str, Any] = {}
    for which, off, preceding in offsets:  # (transformFrameOffset: start, then end)
        literal = isinstance(off, ast.A_Const) and (off.isnull or isinstance(off.val, ast.String))
        # (a copy: a cast of the offset as written may need rewriting below)
        expr, t = (off, "unknown") if literal else rewrite(copy.deepcopy(off))
        target = "int8"
        if unit == "RANGE" and order_type is not None:
            target = _offset_type(order_type, t)
        elif unit != "RANGE" and t not in (None, "int2", "int4", "int8", "unknown"):
            if t not in ("numeric", "float4", "float8"):  # (assignment casts to bigint)
                raise PgError(
                    "42804", f"argument of {unit} must be type bigint, not type {display(t)}"
                )
            expr, t = rewrite(ast.TypeCast(arg=off, typeName=_type_name("int8")))
        if has_variables(off):
            raise PgError("42P10", f"argument of {unit} must not contain variables")
        if _calls(off, _VOLATILE):  # (PostgreSQL computes it once, DuckDB for each row)
            raise PgError(
                "0A000",
                "a volatile function in a window frame offset is not supported by walsender-proxy",
            )
        if _has_subquery(off):  # (DuckDB's binder refuses one there)
            raise PgError(
                "0A000", "a subquery in a window frame offset is not supported by walsender-proxy"
            )
        value = _constant(off)
        if value is None:  # nodeWindowAgg's calculate_frame_offsets, before any row
            raise PgError("22004", f"frame {which} offset must not be null")
        if literal and (unit != "RANGE" or order_type is not None):
            expr, t = rewrite(ast.TypeCast(arg=off, typeName=_type_name(target)))
        if unit != "RANGE":
            if isinstance(value, int | float) and value <= -0.5:  # (rounded to a bigint)
                raise PgError("22013", f"frame {which} offset must not be negative")
            if value == "?":  # a parameter or an expression: checked as the frame is computed
                expr = _guarded(expr, [
                    (_is_null(expr), _fails("22004", f"frame {which} offset must not be null")),
                    (op("<", expr, int_const(0)), _fails("22013", f"frame {which} offset must not be negative")),
                ])  # fmt: skip
        elif order_type is not None and target == "numeric":
            expr = _numeric_offset(off, text_numeric, which)
        elif order_type is not None and not (isinstance(value, int | float) and value >= 0):
            expr = _range_offset(expr, target, order, preceding, which)  # (else nothing to check)
        new[which] = expr
    if unit == "RANGE" and order_type in ("int2", "int4", "int8") and new:
        # (PostgreSQL's in_range sums never overflow: an overflowing one is past every value)
        wide = "hugeint" if order_type == "int8" else "bigint"
        key = order[0]
        key.node = cast(key.node, wide)
        new = {which: cast(e, wide) for which, e in new.items()}
    if "starting" in new:
        wdef.startOffset = new["starting"]
    if "ending" in new:
        wdef.endOffset = new["ending"]


#: DuckDB's type of a numeric RANGE offset: exact for every literal of at most 18
#: fractional and 20 integral digits (the sum with a DECIMAL key is computed exactly).
_OFFSET_DECIMAL = (38, 18)


def _numeric_offset(off: Any, text_numeric: bool, which: str) -> ast.Node:
    """A numeric RANGE offset for a key DuckDB holds as a DECIMAL: a literal, as an exact
    DECIMAL; a negative or NaN one raises in_range_numeric_numeric's 22013 as the frame is
    computed. Any other offset, and a key held as text, is refused."""
    refused = PgError(
        "0A000",
        "RANGE with offset PRECEDING/FOLLOWING over an unconstrained numeric column, or with "
        "a numeric offset that is not a literal, is not supported by walsender-proxy",
    )
    if text_numeric:
        raise refused
    sign, lit = "", off
    if isinstance(off, ast.A_Expr) and off.lexpr is None and off.name[-1].sval == "-":
        sign, lit = "-", off.rexpr
    text = None
    if isinstance(lit, ast.A_Const) and isinstance(lit.val, ast.Integer):
        text = str(lit.val.ival)
    elif isinstance(lit, ast.A_Const) and isinstance(lit.val, ast.Float):
        text = lit.val.fval
    elif isinstance(lit, ast.A_Const) and isinstance(lit.val, ast.String) and not sign:
        text = lit.val.sval.strip()
    try:
        number = decimal.Decimal(sign + text) if text is not None else None
    except decimal.InvalidOperation:
        number = None
    if number is None:
        raise refused
    if number.is_nan() or number < 0:
        invalid = _fails("22013", "invalid preceding or following size in window function")
        always = ast.A_Const(isnull=False, val=ast.Boolean(boolval=True))
        return _guarded(_decimal("0"), [(always, invalid)])
    digits, scale = _OFFSET_DECIMAL
    exponent = number.as_tuple().exponent
    if number.is_infinite() or not isinstance(exponent, int) or exponent < -scale:
        raise refused
    if number.adjusted() >= digits - scale:
        raise refused
    return _decimal(str(number))


def _decimal(text: str) -> ast.TypeCast:
    return cast(str_const(text), "decimal", typmods=_OFFSET_DECIMAL)


def _is_null(expr: Any) -> ast.NullTest:
    return ast.NullTest(arg=expr, nulltesttype=NullTestType.IS_NULL)


def _range_offset(
    expr: Any, target: str, order: Sequence[Any], preceding: bool, which: str
) -> ast.Node:
    """A RANGE offset that raises what PostgreSQL's in_range functions raise for it (a
    negative size, a NaN one) and refuses the rows where DuckDB's sum is NaN."""
    invalid = _fails("22013", "invalid preceding or following size in window function")
    null = (_is_null(expr), _fails("22004", f"frame {which} offset must not be null"))
    if target == "interval":
        zero = cast(str_const("0 seconds"), "interval")
        return _guarded(expr, [null, (op("<", expr, zero), invalid)])
    if target in ("float4", "float8"):
        key = order[0]
        descending = key.sortby_dir == SortByDir.SORTBY_DESC
        # value - offset (PRECEDING ascending, FOLLOWING descending) is NaN at +Infinity,
        # value + offset at -Infinity: PostgreSQL counts every row in range there.
        worst = "inf" if preceding != descending else "-inf"
        return _guarded(expr, [
            null,
            (_or(call("isnan", expr), op("<", expr, int_const(0))), invalid),
            (
                ast.BoolExpr(
                    boolop=BoolExprType.AND_EXPR,
                    args=(call("isinf", expr), op("=", key.node, cast(str_const(worst), "double"))),
                ),
                _fails("0A000", "RANGE with an infinite offset PRECEDING/FOLLOWING from an infinite value is not supported by walsender-proxy"),
            ),
        ])  # fmt: skip
    return _guarded(expr, [null, (op("<", expr, int_const(0)), invalid)])


def _type_name(pg_name: str) -> ast.TypeName:
    return ast.TypeName(names=(ast.String(sval=pg_name),), typemod=-1)


def window_call(name: str, node: ast.FuncCall, known: bool) -> None:
    """PostgreSQL's checks of a call with OVER, of a window function's call, and of
    ``count()`` (ParseFuncOrColumn): ``known`` says PostgreSQL 15 has a function of that
    name. DuckDB has DISTINCT and ORDER BY for window aggregates: PostgreSQL has not."""
    if name == "count" and not node.args and not node.agg_star:
        raise PgError("42809", "count(*) must be used to call a parameterless aggregate function")
    window = name in WINDOW_FUNCTIONS and (name not in AGGREGATES_TOO or not node.args)
    if node.over is None:
        if window and known and not node.agg_within_group:
            raise PgError("42809", f"window function {name} requires an OVER clause")
        return
    if known and name not in WINDOW_FUNCTIONS and name not in AGGREGATES:
        raise PgError(
            "42809",
            f"OVER specified, but {name} is not a window function nor an aggregate function",
        )
    if node.agg_distinct:
        raise PgError("0A000", "DISTINCT is not implemented for window functions")
    if node.agg_order:
        raise PgError("0A000", "aggregate ORDER BY is not implemented for window functions")
    if node.agg_filter is not None and window:
        raise PgError("0A000", "FILTER is not implemented for non-aggregate window functions")


def guard_arguments(name: str, args: list[Any]) -> list[Any]:
    """nth_value's and ntile's argument checks (windowfuncs.c), made as DuckDB computes
    them: a count below 1 is 22016 / 22014 (DuckDB answers NULL, or raises XX000)."""
    if name == "nth_value" and len(args) == 2:
        n = args[1]
        return [
            args[0],
            _guarded(
                n,
                [
                    (
                        op("<=", n, int_const(0)),
                        _fails("22016", "argument of nth_value must be greater than zero"),
                    )
                ],
            ),
        ]
    if name == "ntile" and len(args) == 1:
        n = args[0]
        return [
            _guarded(
                n,
                [
                    (
                        op("<=", n, int_const(0)),
                        _fails("22014", "argument of ntile must be greater than zero"),
                    )
                ],
            )
        ]
    return args


__all__ = [
    "AGGREGATES",
    "AGGREGATES_TOO",
    "WINDOW_FUNCTIONS",
    "check_definition",
    "frame",
    "guard_arguments",
    "named_windows",
    "parse_error_sqlstate",
    "window_call",
]
