"""The engine's statements as pglast trees: what it reads from them and how it reshapes
them before DuckDB runs them.

Read: an INSERT/UPDATE/DELETE's RETURNING list, one column's item of ``SET (a, b) = (…)``.
Refused: a LATERAL subquery beside an UPDATE's or DELETE's target. Reshaped: an INSERT's
WITH moved into its rows' query, its VALUES list typed as PostgreSQL types it (by the target
column), and for Describe, the statement with each ``$n`` a typed NULL.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterator, Sequence
from typing import Any

import pyarrow as pa
from pglast import ast, enums
from pglast.stream import RawStream

from decoding.catalog import FIRST_USER_OID
from decoding.errors import PgError
from decoding.pgtypes import type_by_oid
from walsender_proxy.sql.ddl_names import unsupported
from walsender_proxy.sql.nodes import all_nodes, set_returning_call
from walsender_proxy.sql.pgcatalog_defs import quote_ident


def returning(node: Any) -> tuple[Any, ...] | None:
    """RETURNING targets (pglast follows PostgreSQL 18's ReturningClause node)."""
    rc = getattr(node, "returningClause", None)
    if rc is not None:
        return rc.exprs
    return getattr(node, "returningList", None)


def assigned(val: ast.Node) -> ast.Node:
    """One column's value in ``SET (a, b) = (x, y)``: its item of the row (a subquery's
    row is refused: its columns are not one expression each)."""
    if not isinstance(val, ast.MultiAssignRef):
        return val
    if isinstance(val.source, ast.RowExpr) and len(val.source.args or ()) == val.ncolumns:
        return val.source.args[val.colno - 1]
    if isinstance(val.source, ast.RowExpr):
        raise PgError("42601", "number of columns does not match number of values")
    raise PgError("0A000", "UPDATE … SET (…) = (SELECT …) is not supported by walsender-proxy")


def no_lateral(items: Sequence[ast.Node] | None, where: str) -> None:
    """0A000 for a LATERAL subquery beside the target table: the statement's query would
    let it see the target, which PostgreSQL hides from it (42P10)."""
    if any(isinstance(i, ast.RangeSubselect) and i.lateral for i in items or ()):
        raise PgError("0A000", f"LATERAL in {where} is not supported by walsender-proxy")


def attach_with(node: ast.InsertStmt) -> None:
    """``WITH c AS (…) INSERT INTO t SELECT … FROM c``: the CTEs belong to the rows'
    query, which is run on its own (a CTE named as the target table hides the table)."""
    if node.withClause is None:
        return
    src = node.selectStmt
    if src is None or not isinstance(src, ast.SelectStmt) or src.withClause is not None:
        raise unsupported("WITH … INSERT with this query")
    src.withClause, node.withClause = node.withClause, None


def keeps_literal_scale(col: Any) -> bool:
    """A column stored as the text of its values whose numeric literals must keep how they
    were written (an unconstrained numeric, which keeps each value's scale)."""
    ctype = col.type if col is not None else None
    return (
        ctype is not None
        and ctype.base.name == "numeric"
        and not ctype.is_array
        and pa.types.is_string(ctype.arrow)
    )


def defaults_to_null(
    node: Any, as_text: Collection[int] = (), numeric: Collection[int] = ()
) -> None:
    """DEFAULT → NULL (what is left of it after :func:`defaults.with_defaults`: columns
    without a default), and literals of a VALUES column that mixes
    quoted and bare literals all become text: PostgreSQL resolves a quoted literal by the
    target column's input function ('NaN' into real next to 1.5), which
    :func:`coerce_text_columns` does — DuckDB would force the column to the bare literal's
    type and fail. The numeric literals of the ``as_text`` columns become text too: a
    numeric keeps the scale it was written with (1.50 next to 7 stays 7), where DuckDB
    gives the VALUES column one DECIMAL type (7.00). A float cast bound for a ``numeric``
    column of a multi-row VALUES becomes numeric in its own row, as PostgreSQL coerces each
    row's value to the column (DuckDB would widen 0.1::float4 next to a float8 to DOUBLE,
    whose numeric is 0.100000001490116, not 0.1)."""
    if not (isinstance(node, ast.SelectStmt) and node.valuesLists):
        return
    rows = [
        [ast.A_Const(isnull=True) if isinstance(v, ast.SetToDefault) else v for v in row]
        for row in node.valuesLists
    ]
    width = max(len(r) for r in rows)
    for col in range(width):
        vals = [r[col] for r in rows if col < len(r)]
        if col in as_text or any(
            isinstance(v, ast.A_Const) and isinstance(v.val, ast.String) for v in vals
        ):
            for r in rows:
                v = r[col] if col < len(r) else None
                if isinstance(v, ast.A_Const) and isinstance(v.val, (ast.Integer, ast.Float)):
                    text = str(v.val.ival) if isinstance(v.val, ast.Integer) else v.val.fval
                    r[col] = ast.A_Const(isnull=False, val=ast.String(sval=text))
    if len(rows) > 1:
        for col in numeric:
            for r in rows:
                if col < len(r) and _float_cast(r[col]):
                    r[col] = ast.TypeCast(
                        arg=r[col],
                        typeName=ast.TypeName(names=(ast.String(sval="numeric"),), typemod=-1),
                    )
    node.valuesLists = tuple(tuple(r) for r in rows)


_FLOAT_TYPE_NAMES = frozenset({"float4", "float8", "real", "double precision"})


def _float_cast(node: Any) -> bool:
    """An explicit cast to float4 or float8 (``0.1::float4``, ``real '0.1'``)."""
    if not isinstance(node, ast.TypeCast) or node.typeName is None:
        return False
    names = node.typeName.names or ()
    return bool(names) and not node.typeName.arrayBounds and names[-1].sval in _FLOAT_TYPE_NAMES


def numeric_columns(t: Any, cols: Sequence[str]) -> list[int]:
    """The positions of the (non-array) numeric columns among ``cols``."""
    out = []
    for i, c in enumerate(cols):
        col = t.column(c)
        if col is not None and col.type.base.name == "numeric" and not col.type.is_array:
            out.append(i)
    return out


_COMPARISON_OPS = frozenset({"=", "<>", "!=", "<", ">", "<=", ">="})


def _nodes(node: Any) -> Iterator[Any]:
    """Every pglast node in ``node`` (a node, or a tuple or list of them), depth first."""
    if isinstance(node, ast.Node):
        yield node
        for name in node:
            yield from _nodes(getattr(node, name))
    elif isinstance(node, tuple | list):
        for x in node:
            yield from _nodes(x)


def _compared_params(node: Any) -> set[int]:
    """The ids of the ``$n`` nodes that are an operand of a comparison (``x > $1``,
    ``x = ANY($1)``) whose other operand is not a parameter."""
    out: set[int] = set()
    kinds = (enums.A_Expr_Kind.AEXPR_OP, enums.A_Expr_Kind.AEXPR_OP_ANY, enums.A_Expr_Kind.AEXPR_OP_ALL)
    for n in _nodes(node):
        if not (isinstance(n, ast.A_Expr) and n.kind in kinds and n.name and n.name[-1].sval in _COMPARISON_OPS):
            continue
        left, right = n.lexpr, n.rexpr
        if isinstance(right, ast.ParamRef) and left is not None and not isinstance(left, ast.ParamRef):
            out.add(id(right))
        if (
            isinstance(left, ast.ParamRef)
            and right is not None
            and not isinstance(right, ast.ParamRef | tuple | list)
            and n.kind == enums.A_Expr_Kind.AEXPR_OP
        ):
            out.add(id(left))
    return out


def _branch_params(node: Any) -> set[int]:
    """The ids of the ``$n`` nodes that are one branch of a result resolved to a common
    type (CASE, COALESCE, GREATEST/LEAST, ARRAY[…], set operation arms) beside a branch
    that is not a parameter: PostgreSQL gives them that type at Parse."""
    out: set[int] = set()

    def mark(branches: Any) -> None:
        items = [b for b in branches or () if b is not None]
        if any(not isinstance(b, ast.ParamRef) for b in items):
            out.update(id(b) for b in items if isinstance(b, ast.ParamRef))

    def arm_items(stmt: Any) -> list[Any] | None:
        if not isinstance(stmt, ast.SelectStmt) or stmt.op != enums.SetOperation.SETOP_NONE or not stmt.targetList:
            return None
        return [rt.val for rt in stmt.targetList]

    for n in _nodes(node):
        if isinstance(n, ast.CaseExpr):
            mark([w.result for w in n.args or ()] + [n.defresult])
        elif isinstance(n, ast.CoalesceExpr | ast.MinMaxExpr):
            mark(n.args)
        elif isinstance(n, ast.A_ArrayExpr):
            mark(n.elements)
        elif isinstance(n, ast.SelectStmt) and n.op != enums.SetOperation.SETOP_NONE:
            left, right = arm_items(n.larg), arm_items(n.rarg)
            if left is not None and right is not None and len(left) == len(right):
                for pair in zip(left, right, strict=True):
                    mark(pair)
    return out


def typed_nulls(node: Any, param_types: list[int]) -> Any:
    """A copy of the statement with ``$n`` replaced by ``NULL::type`` (for Describe); a
    cast parameter (``$2::numeric(5,2)``) by ``NULL::text``, so the cast alone decides the
    column (its typmod included) whatever type the parameter was given."""
    import copy

    node = copy.deepcopy(node)
    compared = _compared_params(node) | _branch_params(node)

    def user_type(n: ast.ParamRef) -> bool:
        return n.number - 1 < len(param_types) and param_types[n.number - 1] >= FIRST_USER_OID

    def visit(n: Any) -> Any:
        if isinstance(n, ast.ParamRef) and user_type(n):
            # (a user type's $n, an enum's, as its context makes it: an untyped NULL)
            return ast.A_Const(isnull=True)
        if (
            isinstance(n, ast.ParamRef)
            and id(n) in compared
            and (param_types[n.number - 1] if n.number - 1 < len(param_types) else 25) in (0, 25)
        ):
            # an untyped $n compared with a value, or a branch beside one, takes that value's
            # type (the rewriter's _param_as at Execute): an untyped NULL here, which DuckDB
            # compares with anything and unifies with any branch
            return ast.A_Const(isnull=True)
        if isinstance(n, ast.TypeCast) and isinstance(n.arg, ast.ParamRef):
            # (to a user type, a domain's or an enum's, from an untyped NULL: text may not
            # cast to it)
            from walsender_proxy.sql.literals import TYPE_ALIASES
            from walsender_proxy.sql.pgcatalog_defs import TYPE_OIDS

            names = [x.sval for x in n.typeName.names]
            builtin = (len(names) == 1 or names[0] == "pg_catalog") and TYPE_ALIASES.get(names[-1], names[-1]) in TYPE_OIDS
            n.arg = typed_nulls(n.arg, []) if builtin and not user_type(n.arg) else ast.A_Const(isnull=True)
            return n
        if isinstance(n, ast.ParamRef):
            oid = param_types[n.number - 1] if n.number - 1 < len(param_types) else 25
            try:
                ct = type_by_oid(oid or 25)
                name, is_array = ct.base.name, ct.is_array
            except PgError:  # a catalog type (oid, name, regclass…): PostgreSQL's name
                from walsender_proxy.sql.paramtypes import type_name_of

                name, is_array = type_name_of(oid)
            return ast.TypeCast(
                arg=ast.A_Const(isnull=True),
                typeName=ast.TypeName(
                    names=(ast.String(sval=name),),
                    arrayBounds=(ast.Integer(ival=-1),) if is_array else None,
                ),
            )
        if isinstance(n, ast.Node):
            for name in n:
                v = getattr(n, name)
                nv = visit(v)
                if nv is not v:
                    setattr(n, name, nv)
            return n
        if isinstance(n, tuple):
            return tuple(visit(x) for x in n)
        return n

    return visit(node)


def single_values_as_select(src: Any) -> Any:
    """An INSERT's single VALUES row that calls a set-returning function read as a SELECT
    list, as PostgreSQL's transformInsertStmt reads it (EXPR_KIND_VALUES_SINGLE): one row
    per value the function returns, several such functions zipped. Other VALUES lists are
    left as they are (a set-returning function there is refused as in PostgreSQL)."""
    if not (isinstance(src, ast.SelectStmt) and src.valuesLists):
        return src
    if len(src.valuesLists) > 1:
        for r in src.valuesLists:  # (refused here: the statement's own text places the cursor)
            srf = set_returning_call(r)
            if srf is not None:
                err = PgError("0A000", "set-returning functions are not allowed in VALUES")
                err.position = srf.location + 1 if srf.location is not None and srf.location >= 0 else None  # type: ignore[attr-defined]
                raise err
        return src
    row = src.valuesLists[0]
    if any(isinstance(v, ast.SetToDefault) for v in row) or set_returning_call(row) is None:
        return src
    return ast.SelectStmt(
        targetList=tuple(ast.ResTarget(val=v) for v in row),
        withClause=src.withClause,
        op=enums.SetOperation.SETOP_NONE,
    )


#: Column types whose rows a multi-row VALUES must convert item by item: a VALUES column
#: unified first (2.5::float8 and 2.5 become float8) would round 2.5 as float8 → int4
#: does (to even), where PostgreSQL converts the numeric 2.5 to the column (away from 0).
_ITEM_CAST_TYPES = {"int2": "int2", "int4": "int4", "int8": "int8", "float4": "float4", "float8": "float8"}
_STRING_TYPES = frozenset({"text", "varchar", "bpchar", "name"})


def values_cast_to_columns(src: Any, t: Any, cols: Sequence[str]) -> Any:
    """An INSERT's multi-row VALUES with each item of a number column cast to the column's
    type, as PostgreSQL's transformInsertStmt coerces every row's items to the target
    columns before anything else (there is no common type of the VALUES column). Number
    columns take the cast to their type (an unconstrained numeric column keeps its
    literals' scale); string columns take each typed item's text (its output function, as
    the assignment I/O cast prints it; the column's length is checked on the way in), so
    ``(12345), ('x')`` or ``(1.5), (true)`` never meet in one VALUES type; untyped literals,
    parameters and NULLs stay as they are."""
    if not (isinstance(src, ast.SelectStmt) and src.valuesLists and len(src.valuesLists) > 1):
        return src
    targets: dict[int, ast.TypeName] = {}
    for i, name in enumerate(cols):
        col = t.column(name)
        if col is None:
            continue
        base = col.type.base.name
        if col.type.is_array:
            if base in _ITEM_CAST_TYPES:  # (ARRAY[…] items only: see item())
                targets[i] = ast.TypeName(
                    names=(ast.String(sval="pg_catalog"), ast.String(sval=_ITEM_CAST_TYPES[base])),
                    arrayBounds=(ast.Integer(ival=-1),), typemod=-1,
                )
            continue
        if base in _ITEM_CAST_TYPES:
            targets[i] = ast.TypeName(names=(ast.String(sval="pg_catalog"), ast.String(sval=_ITEM_CAST_TYPES[base])), typemod=-1)
        elif base in _STRING_TYPES:
            targets[i] = ast.TypeName(names=(ast.String(sval="pg_catalog"), ast.String(sval="text")), typemod=-1)
        elif base == "numeric" and col.type.numeric_precision_scale is not None:
            p, sc = col.type.numeric_precision_scale
            targets[i] = ast.TypeName(
                names=(ast.String(sval="pg_catalog"), ast.String(sval="numeric")),
                typmods=(ast.A_Const(val=ast.Integer(ival=p)), ast.A_Const(val=ast.Integer(ival=sc))),
                typemod=-1,
            )
    if not targets:
        return src

    def item(i: int, v: Any) -> Any:
        tn = targets.get(i)
        if tn is None or isinstance(v, ast.SetToDefault):
            return v
        if isinstance(v, ast.A_Const) and getattr(v, "isnull", False):
            return v
        if tn.arrayBounds and not isinstance(v, ast.A_ArrayExpr):
            return v  # (a number array column: its ARRAY[…] rows, each converted as the column's)
        if tn.names[-1].sval == "text" and (isinstance(v, ast.ParamRef) or (isinstance(v, ast.A_Const) and isinstance(v.val, ast.String))):
            return v  # (an untyped literal or parameter is the column's value as written)
        return ast.TypeCast(arg=v, typeName=tn, location=-1)

    out = copy.copy(src)
    out.valuesLists = tuple(tuple(item(i, v) for i, v in enumerate(row)) for row in src.valuesLists)
    return out


#: The built-in functions whose effect outlasts the statement (a sequence advances).
_SEQUENCE_EFFECTS = frozenset({"nextval", "setval"})


def lasting_effect_call(query: ast.Node) -> str | None:
    """The first call in ``query`` whose effect outlasts the statement and which
    PostgreSQL's executor makes row by row, as the rows are fetched: nextval or setval (an
    SQL function can call neither here). None when there is none. A cursor over such a query
    is computed whole at DECLARE here; PostgreSQL makes only the calls of the rows FETCH
    reads."""
    for node in all_nodes(query):
        if isinstance(node, ast.FuncCall):
            names = [n.sval for n in node.funcname]
            if names[-1] in _SEQUENCE_EFFECTS and (len(names) == 1 or names[0] == "pg_catalog"):
                return names[-1]
    return None


def writes_rows(node: ast.Node) -> bool:
    """Whether a statement changes rows of tables (what a cursor declared FOR UPDATE or
    FOR SHARE would see at its next FETCH in PostgreSQL)."""
    if isinstance(node, ast.CopyStmt):
        return bool(node.is_from)
    return isinstance(node, ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt | ast.MergeStmt | ast.TruncateStmt)


#: guc.c's GUC_LIST_INPUT settings: the ones a SET may give several values (the rest: 22023).
_LIST_INPUT = frozenset({
    "datestyle", "search_path", "temp_tablespaces", "session_preload_libraries",
    "shared_preload_libraries", "local_preload_libraries", "log_destination",
    "listen_addresses", "unix_socket_directories", "wal_consistency_checking",
})  # fmt: skip
#: ... and of those the GUC_LIST_QUOTE ones, whose values are identifiers, quoted as needed.
_LIST_QUOTE = frozenset({
    "search_path", "temp_tablespaces", "session_preload_libraries", "shared_preload_libraries",
    "local_preload_libraries",
})  # fmt: skip


def set_value_text(name: str, args: Sequence[Any]) -> str:
    """The value ``SET name = args`` (or ALTER SYSTEM SET) gives the setting, as guc.c's
    flatten_set_variable_args makes it: one value, or a comma list for a list setting,
    whose names are quoted as identifiers where needed (``a, "B c"``)."""
    key = name.lower()
    if len(args) > 1 and key not in _LIST_INPUT:
        raise PgError("22023", f"SET {name} takes only one argument")
    parts = []
    for a in args:
        text = set_arg_text(a)
        if key in _LIST_QUOTE and isinstance(a, ast.A_Const) and hasattr(a.val, "sval"):
            text = quote_ident(text)
        parts.append(text)
    return ", ".join(parts)


def set_arg_text(a: Any) -> str:
    """A SET argument as its value's text (``on``/``off`` for a boolean)."""
    if isinstance(a, ast.A_Const):
        v = a.val
        for attr in ("sval", "ival", "fval", "boolval"):
            if hasattr(v, attr):
                x = getattr(v, attr)
                if attr == "boolval":
                    return "on" if x else "off"
                return str(x)
    if isinstance(a, ast.TypeCast):
        return set_arg_text(a.arg)
    return RawStream()(a)
