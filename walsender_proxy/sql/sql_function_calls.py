"""Calls of user functions (``LANGUAGE sql``) resolved and inlined by the rewriter.

PostgreSQL runs a SQL function's statements with its arguments bound to its parameters,
returning the first row of the last statement (every row for SETOF), coerced to the
declared result type. The proxy puts the last statement in the call's place, as the planner
does when it inlines a function (``inline_function``, ``inline_set_returning_function``),
and has the rewriter analyse it like any query, so it is translated by the same rules:

- **Resolution** follows ``func_get_detail``: the functions of that name visible on the
  search path (an earlier schema hides the same signature in a later one), matched by
  argument count, named arguments and defaults; an exact match of the argument types
  first, else the ones the arguments coerce to implicitly, narrowed by
  ``func_select_candidate``'s rules; 42883 or 42725 with PostgreSQL's texts.
- **Arguments** are coerced to the parameter types (the rewriter's cast) and evaluated
  once: constants (literals, ``$n``, operators over them) are put where the body names the
  parameter; any other argument is computed in a one-row derived table the body reads
  LATERAL, so a volatile argument is not evaluated once per use. A body that names no
  parameter by a name its own FROM hides reads the parameter; ``$n`` always does.
- **The first row**: the last statement with ``LIMIT 1``. Where the arguments come from
  the rows of the calling query, the body is correlated and DuckDB decorrelates it, which
  keeps no row order: a body that may return several rows without ORDER BY is refused
  there (0A000), rather than returning another row than PostgreSQL's first.
- **STRICT**: a NULL constant argument gives NULL (no row for SETOF) without the body; other
  arguments are filtered before the body runs.

The catalog and search path arrive through :data:`LOOKUP` (set by ``catalog_bridge``);
nothing here touches the server.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pglast
from pglast import ast
from pglast.enums import (
    A_Expr_Kind,
    BoolExprType,
    JoinType,
    LimitOption,
    NullTestType,
    SetOperation,
    SubLinkType,
)

from decoding.catalog import Catalog, Domain, EnumType, Function, is_temp_schema
from decoding.errors import PgError
from walsender_proxy.backend import coercion_data
from walsender_proxy.sql import pgcatalog_defs
from walsender_proxy.sql.expr_types import TEXT, UNKNOWN, T
from walsender_proxy.sql.nodes import SET_RETURNING, clear_locations
from walsender_proxy.sql.nodes import call as _call
from walsender_proxy.sql.nodes import colref as _colref
from walsender_proxy.sql.nodes import int_const as _int
from walsender_proxy.sql.nodes import name as _s
from walsender_proxy.sql.nodes import null_const as _null
from walsender_proxy.sql.scopes import NO_COLUMNS
from walsender_proxy.sql.scopes import Rel as _Rel
from walsender_proxy.sql.scopes import Scope as _Scope
from walsender_proxy.sql.sql_errors import SqlError

#: The table whose INSERT, UPDATE or DELETE rows the query being translated computes (the
#: engine sets it); None for a query that writes nothing.
WRITING: contextvars.ContextVar[str | None] = contextvars.ContextVar("wpx_sql_function_writing", default=None)

VOID_OID = 2278
RECORD_OID = 2249

NO_FUNCTION_HINT = "No function matches the given name and argument types. You might need to add explicit type casts."
NOT_UNIQUE_HINT = "Could not choose a best candidate function. You might need to add explicit type casts."

#: Aggregates (a last statement computing one without GROUP BY returns one row).
AGGREGATES = frozenset({
    "count", "sum", "avg", "min", "max", "array_agg", "string_agg", "bool_and", "bool_or", "every",
    "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg", "stddev", "stddev_pop",
    "stddev_samp", "variance", "var_pop", "var_samp", "bit_and", "bit_or", "bit_xor", "corr",
    "covar_pop", "covar_samp", "regr_avgx", "regr_avgy", "regr_count", "regr_intercept", "regr_r2",
    "regr_slope", "regr_sxx", "regr_sxy", "regr_syy", "mode", "percentile_cont", "percentile_disc",
    "xmlagg", "range_agg", "range_intersect_agg",
})  # fmt: skip


class _Rewriter(Protocol):
    """What inlining a call asks of the rewriter translating the statement around it: to
    translate an argument or the body's query in a scope, to word an error at a node, and
    the statement's state a call adds to (its parameters' uses, the user tables it reads,
    the frames of the SQL functions being inlined)."""

    nonce: str
    param_uses: dict[int, int]
    user_tables: list[tuple[str | None, str]]
    used_udfs: bool
    sql_fn_frames: list[Frame]

    def expr(self, node: Any, scope: _Scope) -> tuple[Any, T | None]: ...

    def select(self, stmt: ast.SelectStmt, parent: _Scope | None) -> tuple[ast.SelectStmt, list[tuple[str, T | None]] | None]: ...

    def fail(self, sqlstate: str, message: str, node: Any = None, **kw: Any) -> SqlError: ...


def unsupported(what: str, node: Any = None) -> PgError:

    loc = getattr(node, "location", None)
    return SqlError("0A000", f"{what} is not supported by walsender-proxy", loc + 1 if isinstance(loc, int) and loc >= 0 else None)


# ---------------------------------------------------------------------------------------------
# what the rewriter is told about the session


@dataclass(frozen=True, slots=True)
class Probe:
    """CREATE FUNCTION's check of a new body (``check_function_bodies``): the function's
    statements as parsed from the statement (their positions are the statement's), analysed
    whole (no STRICT shortcut, no row-order refusal: the call is made of constants)."""

    oid: int
    statements: tuple[ast.Node, ...]
    #: A refusal found while the body was analysed that DuckDB's own check of the body
    #: comes before (a result type the rewriter could not tell: DuckDB may find an error).
    pending: list[PgError] = field(default_factory=list)
    #: Whether the probe's own call was met (it resolves to the new function alone).
    called: list[bool] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Lookup:
    catalog: Catalog
    #: The schemas an unqualified function name is looked up in, in order.
    path: tuple[str, ...]
    probe: Probe | None = None
    #: Whether the current user may execute a function (EXECUTE, checked at each call as
    #: PostgreSQL's executor does); None: not checked.
    may_execute: Callable[[Function], bool] | None = None
    #: The labels of an enum that this transaction added and has not committed (which
    #: PostgreSQL 15 refuses to use: 55P04); None: none.
    unsafe_labels: Callable[[EnumType], frozenset[str]] | None = None


LOOKUP: contextvars.ContextVar[Lookup | None] = contextvars.ContextVar("sql_function_lookup", default=None)


def type_shown(t: Domain | EnumType) -> str:
    """A user type's name as format_type_be gives it: qualified when the search path the
    statement is rewritten under does not find it by its name alone."""
    lk = LOOKUP.get()
    if lk is not None:
        resolve = lk.catalog.resolve_domain if isinstance(t, Domain) else lk.catalog.resolve_enum
        if resolve([t.name], lk.path) == t:
            return t.name
    return t.qualified_name


@contextlib.contextmanager
def looking_up(
    catalog: Catalog,
    search_path: Sequence[str],
    probe: Probe | None = None,
    may_execute: Callable[[Function], bool] | None = None,
    unsafe_labels: Callable[[EnumType], frozenset[str]] | None = None,
) -> Iterator[None]:
    """The catalog and search path calls resolve in while a statement is rewritten. The
    session's temporary schema is not searched for functions (PostgreSQL never looks for
    functions there unless named), pg_catalog's are the built-in ones."""
    outer = LOOKUP.get()
    if probe is None and outer is not None and outer.probe is not None:
        probe = outer.probe
    path = tuple(s for s in search_path if not is_temp_schema(s) and s != "pg_catalog")
    if may_execute is None and outer is not None:
        may_execute = outer.may_execute
    if unsafe_labels is None and outer is not None:
        unsafe_labels = outer.unsafe_labels
    token = LOOKUP.set(Lookup(catalog, path, probe, may_execute, unsafe_labels))
    try:
        yield
    finally:
        LOOKUP.reset(token)


def visible(names: Sequence[str]) -> list[Function]:
    """The user functions a (maybe qualified) name can call, in search-path order; a
    function hidden by one of the same argument types earlier on the path left out."""
    lk = LOOKUP.get()
    if lk is None or not lk.catalog.functions or not names or len(names) > 2:
        return []
    fns = sorted(lk.catalog.functions.values(), key=lambda f: f.oid)
    if len(names) == 2:
        return [f for f in fns if f.schema == names[0] and f.name == names[1]]
    out: list[Function] = []
    seen: set[tuple[int, ...]] = set()
    for schema in lk.path:
        for f in fns:
            if f.schema == schema and f.name == names[0] and f.input_types not in seen:
                out.append(f)
        seen |= {f.input_types for f in out}
    return out


def finder(catalog: Catalog, search_path: Sequence[str]) -> Callable[[Sequence[str]], list[Function]]:
    """:func:`visible` over a given catalog and path (Parse's inference of ``$n`` types)."""

    def find(names: Sequence[str]) -> list[Function]:
        if not catalog.functions:
            return []
        with looking_up(catalog, search_path):
            return visible(names)

    return find


def _names(call: ast.FuncCall) -> list[str]:
    return [n.sval for n in call.funcname]


def is_user_call(call: ast.FuncCall) -> bool:
    """Whether a call names a user function (the rewriter's built-in rules do not apply)."""
    return bool(visible(_names(call)))


# ---------------------------------------------------------------------------------------------
# types


def typname(oid: int) -> str:
    row = pgcatalog_defs.TYPES.rows.get(oid)
    return str(row["typname"]) if row else str(oid)


def shown(oid: int) -> str:
    """``format_type_be``."""
    return pgcatalog_defs.format_type(oid, None) or str(oid)


def _t(oid: int) -> T:

    return T(typname(oid))


def _base(name: str) -> str:
    """A rewriter type name as PostgreSQL's type (a nested list is one array type)."""
    return "_" + name.lstrip("_") if name.startswith("_") else name


def _category(name: str) -> str | None:
    if name.startswith("_"):
        return "A"
    return coercion_data.CATEGORIES.get(name)


_PREFERRED = frozenset({"bool", "text", "float8", "timestamptz", "interval"})


def coercible(source: str, target: str, context: str) -> bool | None:
    """can_coerce_type from ``source`` to ``target`` (pg_type names) in ``context``
    (``i`` implicit, ``a`` assignment); None when the pair is outside what the proxy
    knows of pg_cast (the caller refuses rather than guess)."""
    source, target = _base(source), _base(target)
    if source == "unknown" or source == target:
        return True
    if source.startswith("_") and target.startswith("_"):
        return coercible(source[1:], target[1:], context)
    known = coercion_data.CATEGORIES
    if source.lstrip("_") not in known or target.lstrip("_") not in known:
        return None
    entry = coercion_data.CASTS.get((source, target))
    if entry is not None:
        return entry[0] == "i" or (entry[0] == "a" and context == "a")
    return context == "a" and known.get(target) == "S"  # (I/O conversion to a string type)


# ---------------------------------------------------------------------------------------------
# resolution (func_get_detail)


@dataclass(slots=True)
class _Candidate:
    fn: Function
    #: For each argument of the call, the input parameter it fills.
    places: list[int]
    #: The declared type of each argument's parameter.
    types: list[str]


def _match_arity(fn: Function, nargs: int, names: list[str | None]) -> _Candidate | None:
    params = fn.input_args
    if nargs > len(params):
        return None
    places: list[int] = []
    filled: set[int] = set()
    for i, nm in enumerate(names):
        if nm is None:
            places.append(i)
            filled.add(i)
            continue
        at = next((j for j, p in enumerate(params) if p.name == nm), -1)
        if at < 0 or at in filled:
            return None
        places.append(at)
        filled.add(at)
    for j, p in enumerate(params):
        if j not in filled and p.default is None:
            return None
    return _Candidate(fn, places, [typname(params[j].type_oid) for j in places])


def _select(cands: list[_Candidate], given: list[str]) -> list[_Candidate]:
    """func_select_candidate's narrowing (exact matches, preferred types, the categories of
    unknown arguments); a list of one is the choice."""
    n = len(given)

    def keep_best(score: Any) -> list[_Candidate]:
        best = max(score(c) for c in cands)
        return [c for c in cands if score(c) == best]

    cands = keep_best(lambda c: sum(1 for i in range(n) if given[i] != "unknown" and _base(c.types[i]) == _base(given[i])))
    if len(cands) == 1:
        return cands
    cands = keep_best(
        lambda c: sum(
            1 for i in range(n)
            if given[i] != "unknown" and (_base(c.types[i]) == _base(given[i]) or c.types[i] in _PREFERRED)
        )
    )  # fmt: skip
    if len(cands) == 1:
        return cands
    unknowns = [i for i in range(n) if given[i] == "unknown"]
    if not unknowns:
        return cands
    for i in unknowns:
        cats = {_category(c.types[i]) for c in cands}
        if "S" in cats:
            cat = "S"
        elif len(cats) == 1:
            cat = next(iter(cats))
        else:
            return cands
        preferred = any(_category(c.types[i]) == cat and c.types[i] in _PREFERRED for c in cands)
        narrowed = [c for c in cands if _category(c.types[i]) == cat and (not preferred or c.types[i] in _PREFERRED)]
        if narrowed:
            cands = narrowed
    if len(cands) == 1:
        return cands
    known = {_base(g) for g in given if g != "unknown"}
    if len(known) == 1:
        the = next(iter(known))
        narrowed = [c for c in cands if all(coercible(the, c.types[i], "i") for i in unknowns)]
        if narrowed:
            return narrowed
    return cands


@dataclass(slots=True)
class _Bound:
    fn: Function
    #: Per input parameter, the raw expression it gets (an argument or its default).
    args: list[ast.Node]
    #: Per input parameter, whether the call gave it (not its default).
    given: list[bool]


def _display(given: list[str], names: list[str | None]) -> str:
    parts = []
    for t, nm in zip(given, names, strict=True):
        shown_t = "unknown" if t == "unknown" else (pgcatalog_defs.format_type(pgcatalog_defs.TYPE_OIDS.get(_base(t)), None) or t)
        parts.append(f"{nm} => {shown_t}" if nm is not None else shown_t)
    return ", ".join(parts)


def _resolve(rw: _Rewriter, node: ast.FuncCall, scope: _Scope, fns: list[Function]) -> _Bound:
    shown_name = ".".join(_names(node))
    if node.agg_star:
        raise rw.fail("42883", f"function {shown_name}() does not exist", node, hint=NO_FUNCTION_HINT)
    if node.over is not None:
        raise rw.fail("42809", f"OVER specified, but {shown_name} is not a window function nor an aggregate function", node)
    if node.agg_distinct:
        raise rw.fail("42809", f"DISTINCT specified, but {shown_name} is not an aggregate function", node)
    if node.agg_order:
        raise rw.fail("42809", f"ORDER BY specified, but {shown_name} is not an aggregate function", node)
    if node.agg_filter is not None:
        raise rw.fail("42809", f"FILTER specified, but {shown_name} is not an aggregate function", node)
    if node.agg_within_group:
        raise rw.fail("42809", f"WITHIN GROUP specified, but {shown_name} is not an aggregate function", node)
    if node.func_variadic:
        raise unsupported("VARIADIC in a call of a user function", node)
    raw = list(node.args or ())
    names = [a.name if isinstance(a, ast.NamedArgExpr) else None for a in raw]
    for i, a in enumerate(raw):
        if names[i] is None and any(n is not None for n in names[:i]):
            raise rw.fail("42601", "positional argument cannot follow named argument", a)
        if names[i] is not None and names[i] in names[:i]:
            raise rw.fail("42601", f'argument name "{names[i]}" used more than once', a)
    values = [a.arg if isinstance(a, ast.NamedArgExpr) else a for a in raw]
    given = [_probe_type(rw, v, scope) for v in values]
    cands = [c for c in (_match_arity(fn, len(values), names) for fn in fns) if c is not None]
    exact = [c for c in cands if all(_base(g) == _base(t) for g, t in zip(given, c.types, strict=True))]
    if len(exact) > 1:
        raise rw.fail("42725", f"function {shown_name}({_display(given, names)}) is not unique", node, hint=NOT_UNIQUE_HINT)
    if exact:
        chosen = exact[0]
    else:
        fits = []
        for c in cands:
            ok = [coercible(g, t, "i") for g, t in zip(given, c.types, strict=True)]
            if any(o is None for o in ok):
                raise unsupported(f"a call of {shown_name}() with an argument of a type the proxy cannot coerce", node)
            if all(ok):
                fits.append(c)
        if not fits:
            raise rw.fail("42883", f"function {shown_name}({_display(given, names)}) does not exist", node, hint=NO_FUNCTION_HINT)
        fits = _select(fits, given) if len(fits) > 1 else fits
        if len(fits) > 1:
            raise rw.fail("42725", f"function {shown_name}({_display(given, names)}) is not unique", node, hint=NOT_UNIQUE_HINT)
        chosen = fits[0]
    params = chosen.fn.input_args
    args: list[ast.Node | None] = [None] * len(params)
    gave = [False] * len(params)
    for v, at in zip(values, chosen.places, strict=True):
        args[at] = v
        gave[at] = True
    for j, p in enumerate(params):
        if args[j] is None:
            assert p.default is not None
            args[j] = parse_expression(p.default)
    return _Bound(chosen.fn, [a for a in args if a is not None], gave)


def parse_expression(text: str) -> ast.Node:
    stmt = pglast.parse_sql("SELECT " + text)[0].stmt
    assert isinstance(stmt, ast.SelectStmt) and stmt.targetList
    out = stmt.targetList[0].val
    clear_locations(out)
    return out


def _probe_type(rw: _Rewriter, raw: ast.Node, scope: _Scope) -> str:
    """An argument's type, from a rewrite of a copy (the rewriter's counts restored)."""
    if isinstance(raw, ast.A_Const) and raw.isnull:
        return "unknown"
    uses, tables = dict(rw.param_uses), list(rw.user_tables)
    try:
        _, t = rw.expr(copy.deepcopy(raw), scope)
    finally:
        rw.param_uses, rw.user_tables = uses, tables
    if t is None:
        if isinstance(raw, ast.ParamRef):  # (a parameter of no declared type takes the parameter's)
            return "unknown"
        raise unsupported("a call of a user function with an argument of a type the proxy cannot determine", raw)
    return "numeric" if t.text_numeric else t.name


# ---------------------------------------------------------------------------------------------
# the body


def statements(fn: Function) -> list[ast.Node]:
    """The body's statements, parsed (the probe's own when CREATE FUNCTION checks it)."""
    lk = LOOKUP.get()
    if lk is not None and lk.probe is not None and lk.probe.oid == fn.oid:
        return [copy.deepcopy(s) for s in lk.probe.statements]
    text = fn.query if fn.standard else fn.body
    try:
        out = [s.stmt for s in pglast.parse_sql(text)]
    except pglast.parser.ParseError as e:
        raise PgError("42601", str(e.args[0])) from None
    clear_locations(out)
    return out


def retval_error(fn: Function, detail: str) -> PgError:
    return PgError("42P13", f"return type mismatch in function declared to return {shown(fn.rettype)}", detail=detail)


def check_statements(fn: Function, stmts: list[ast.Node]) -> ast.SelectStmt | None:
    """The last statement (None: a void function's body without a SELECT), after PostgreSQL's
    checks of a body's statements and the proxy's refusals."""
    for s in stmts:
        if isinstance(s, ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt | ast.MergeStmt):
            raise unsupported("INSERT, UPDATE, DELETE or MERGE in an SQL function")
        if isinstance(s, ast.SelectStmt) and s.intoClause is not None:
            raise unsupported("SELECT INTO in an SQL function")
        if isinstance(s, ast.SelectStmt) and s.lockingClause:
            raise unsupported("FOR UPDATE/SHARE in an SQL function")
    last = stmts[-1] if stmts else None
    if not isinstance(last, ast.SelectStmt):
        if fn.rettype == VOID_OID and not fn.retset:
            if any(not isinstance(s, ast.SelectStmt) for s in stmts):
                raise unsupported("a statement other than SELECT in an SQL function")
            return None
        raise retval_error(fn, "Function's final statement must be SELECT or INSERT/UPDATE/DELETE RETURNING.")
    for s in stmts[:-1]:
        if not isinstance(s, ast.SelectStmt):
            raise unsupported("a statement other than SELECT in an SQL function")
        if not _constant_select(s):
            raise unsupported("an SQL function whose statements before its last one read or compute anything")
    return last


def _constant_select(s: ast.SelectStmt) -> bool:
    """``SELECT 1`` and the like: a statement that can neither fail nor change anything."""
    if s.op != SetOperation.SETOP_NONE or s.fromClause or s.whereClause is not None or s.valuesLists or s.withClause:
        return False
    return all(isinstance(rt.val, ast.A_Const) for rt in s.targetList or ())


def _has(node: Any, pred: Any) -> bool:
    if isinstance(node, tuple | list):
        return any(_has(n, pred) for n in node)
    if not isinstance(node, ast.Node):
        return False
    if pred(node):
        return True
    return any(_has(getattr(node, a, None), pred) for a in type(node).__slots__)


def _is_srf(n: Any) -> bool:
    if not isinstance(n, ast.FuncCall):
        return False
    names = _names(n)
    if names[-1].lower() in SET_RETURNING:
        return True
    return any(f.retset for f in visible(names))


def _is_aggregate(n: Any) -> bool:
    return isinstance(n, ast.FuncCall) and n.over is None and (n.agg_star or _names(n)[-1].lower() in AGGREGATES)


def at_most_one_row(s: ast.SelectStmt) -> bool:
    """Whether a statement's first row is one PostgreSQL and DuckDB agree on whatever the
    row order: it returns at most one row, or orders its rows (ties aside)."""
    if s.sortClause:
        return True
    if s.op != SetOperation.SETOP_NONE:
        return False
    if s.valuesLists:
        return len(s.valuesLists) <= 1
    targets = s.targetList or ()
    if _has(targets, _is_srf):
        return False
    if not s.fromClause:
        return True
    windows = _has(targets, lambda n: isinstance(n, ast.FuncCall) and n.over is not None)
    return not s.groupClause and not windows and _has(targets, _is_aggregate)


#: Expression nodes that neither read a row nor call a function.
_CONSTANT_NODES = (
    ast.A_Const, ast.TypeCast, ast.TypeName, ast.ParamRef, ast.A_Expr, ast.BoolExpr, ast.NullTest,
    ast.BooleanTest, ast.CaseExpr, ast.CaseWhen, ast.CoalesceExpr, ast.A_ArrayExpr, ast.SQLValueFunction,
    ast.String, ast.Integer, ast.Float, ast.Boolean, ast.BitString, ast.MinMaxExpr, ast.NamedArgExpr,
)  # fmt: skip
_OPERATOR_KINDS = (A_Expr_Kind.AEXPR_OP, A_Expr_Kind.AEXPR_DISTINCT, A_Expr_Kind.AEXPR_NOT_DISTINCT, A_Expr_Kind.AEXPR_NULLIF)


def _made_of(raw: Any, nodes: tuple[type, ...]) -> bool:
    if isinstance(raw, tuple | list):
        return all(_made_of(n, nodes) for n in raw)
    if raw is None or not isinstance(raw, ast.Node):
        return True
    if not isinstance(raw, nodes) or (isinstance(raw, ast.A_Expr) and raw.kind not in _OPERATOR_KINDS):
        return False
    return all(_made_of(getattr(raw, a, None), nodes) for a in type(raw).__slots__ if a != "location")


def _constant_arg(raw: Any) -> bool:
    """An argument that is the same value wherever it is put: constants, ``$n``, casts and
    operators over them (no column, subquery or function call)."""
    return _made_of(raw, _CONSTANT_NODES)


def _duplicable(raw: Any) -> bool:
    """An argument PostgreSQL's inlining may put in several places or drop (no volatile
    function, no subquery): constants, columns, operators over them."""
    return _made_of(raw, (*_CONSTANT_NODES, ast.ColumnRef, ast.A_Indirection, ast.A_Indices, ast.A_Star))


def _simple_body(fn: Function, stmts: list[ast.Node]) -> ast.Node | None:
    """The one expression of a body PostgreSQL's ``inline_function`` puts in the call's
    place (``SELECT expr`` alone: no FROM, WHERE, GROUP BY, …, no subquery, aggregate,
    window or set-returning function); None for another body."""
    if len(stmts) != 1 or fn.retset or fn.rettype in (VOID_OID, RECORD_OID) or len(result_columns(fn)) != 1:
        return None
    s = stmts[0]
    if not isinstance(s, ast.SelectStmt) or s.op != SetOperation.SETOP_NONE or len(s.targetList or ()) != 1:
        return None
    if any(getattr(s, a) for a in ("valuesLists", "fromClause", "whereClause", "groupClause", "havingClause", "windowClause",
                                   "sortClause", "limitCount", "limitOffset", "distinctClause", "withClause", "intoClause", "lockingClause")):
        return None  # fmt: skip
    expr = s.targetList[0].val
    if isinstance(expr, ast.ColumnRef) and isinstance(expr.fields[-1], ast.A_Star):
        return None
    if _has(expr, lambda n: isinstance(n, ast.SubLink) or _is_aggregate(n) or _is_srf(n) or (isinstance(n, ast.FuncCall) and n.over is not None)):
        return None
    return expr


def _uses(fn: Function, expr: ast.Node) -> list[int] | None:
    """How many times a simple body names each parameter; None when it names anything
    else (a column: PostgreSQL reports it, the subquery form lets DuckDB do so)."""
    params = [a.name for a in fn.input_args]
    uses = [0] * len(params)
    other = False

    def visit(n: Any) -> None:
        nonlocal other
        if isinstance(n, tuple | list):
            for x in n:
                visit(x)
            return
        if not isinstance(n, ast.Node):
            return
        if isinstance(n, ast.ParamRef):
            if 1 <= n.number <= len(uses):
                uses[n.number - 1] += 1
            else:
                other = True
            return
        if isinstance(n, ast.ColumnRef):
            names = [f.sval if isinstance(f, ast.String) else None for f in n.fields]
            if len(names) == 1 and names[0] in params and names[0]:
                uses[params.index(names[0])] += 1
            elif len(names) == 2 and names[0] == fn.name and names[1] in params and names[1]:
                uses[params.index(names[1])] += 1
            else:
                other = True
            return
        for a in type(n).__slots__:
            visit(getattr(n, a, None))

    visit(expr)
    return None if other else uses


def _params_named(rw: _Rewriter, raw: Any) -> list[int] | None:
    """The parameters of the body being analysed that an argument names (``$n``, a
    parameter's name or ``fname.name``); None outside a body."""
    frames = rw.sql_fn_frames
    if not frames:
        return None
    frame = frames[-1]
    names = [a.name for a in frame.fn.input_args]
    out: list[int] = []

    def visit(n: Any) -> None:
        if isinstance(n, tuple | list):
            for x in n:
                visit(x)
        elif isinstance(n, ast.ParamRef):
            if 1 <= n.number <= len(names):
                out.append(n.number - 1)
        elif isinstance(n, ast.ColumnRef):
            parts = [f.sval for f in n.fields if isinstance(f, ast.String)]
            if len(parts) == 1 and parts[0] and parts[0] in names:
                out.append(names.index(parts[0]))
            elif len(parts) == 2 and parts[0] == frame.fn.name and parts[1] in names:
                out.append(names.index(parts[1]))
        elif isinstance(n, ast.Node):
            for a in type(n).__slots__:
                visit(getattr(n, a, None))

    visit(raw)
    return out


def _is_constant(rw: _Rewriter, raw: Any) -> bool:
    """_constant_arg, for an argument of a call inside a body: a parameter it names is a
    constant only if what the parameter stands for is."""
    named = _params_named(rw, raw)
    return _constant_arg(raw) and (named is None or all(rw.sql_fn_frames[-1].constant[i] for i in named))


def _is_duplicable(rw: _Rewriter, raw: Any) -> bool:
    """_duplicable, for an argument of a call inside a body: a parameter it names stands
    for an argument that may itself be repeated (not a volatile call put in once)."""
    named = _params_named(rw, raw)
    return _duplicable(raw) and (named is None or all(rw.sql_fn_frames[-1].duplicable[i] for i in named))


def _null_arg(raw: Any) -> bool:
    while isinstance(raw, ast.TypeCast):
        raw = raw.arg
    return isinstance(raw, ast.A_Const) and bool(raw.isnull)


# ---------------------------------------------------------------------------------------------
# parameters, as the rewriter meets them in a body


@dataclass(slots=True)
class Frame:
    fn: Function
    #: The named parameters, as a relation of the scope the body is analysed in.
    rel: _Rel
    #: Per input parameter: what a reference to it becomes, and its type.
    values: list[tuple[ast.Node, T | None]]
    #: Per input parameter: how many times it was put in.
    uses: list[int] = field(default_factory=list)
    #: Per input parameter: what it stands for is a constant / may be put in several places
    #: (what an argument naming it, in a call inside the body, is).
    constant: list[bool] = field(default_factory=list)
    duplicable: list[bool] = field(default_factory=list)




def _value(frame: Frame, i: int) -> tuple[ast.Node, T | None]:
    frame.uses[i] += 1
    node, t = frame.values[i]
    return copy.deepcopy(node), t


def column_ref(rw: _Rewriter, node: ast.ColumnRef, scope: _Scope) -> tuple[ast.Node, T | None] | None:
    """A name in a body that is one of its parameters (``a`` when no column of the body's
    FROM is so named, or ``fname.a``): what the parameter stands for; None otherwise."""
    frames = rw.sql_fn_frames
    if not frames or not all(isinstance(f, ast.String) for f in node.fields):
        return None
    frame = frames[-1]
    names = [f.sval for f in node.fields]
    params = [a.name for a in frame.fn.input_args]
    if len(names) == 1:
        s: _Scope | None = scope
        while s is not None:
            for alias in s.order:
                rel = s.rels[alias]
                if rel.columns is None:
                    if names[0] in params:  # (DuckDB would bind it, maybe to a column of the caller's)
                        raise unsupported(f"parameter {names[0]} of SQL function {frame.fn.name}() beside a relation of unknown columns", node)
                    return None
                if any(n == names[0] for n, _ in rel.columns):
                    return _value(frame, params.index(names[0])) if rel is frame.rel else None
            s = s.parent
        return None
    if len(names) == 2 and scope.rel(names[0]) is frame.rel and names[1] in params:
        return _value(frame, params.index(names[1]))
    return None


def param_ref(rw: _Rewriter, node: ast.ParamRef) -> tuple[ast.Node, T | None] | None:
    """``$n`` in a body: its parameter (42P02 past the last)."""
    frames = rw.sql_fn_frames
    if not frames:
        return None
    frame = frames[-1]
    if not 1 <= node.number <= len(frame.values):
        raise rw.fail("42P02", f"there is no parameter ${node.number}", node)
    return _value(frame, node.number - 1)


# ---------------------------------------------------------------------------------------------
# inlining

_COUNTER = itertools.count()


@dataclass(slots=True)
class _Inlined:
    """A call's body, rewritten: ``query`` reads the derived tables below it; its columns
    (``columns``) are the declared result's, typed."""

    query: ast.SelectStmt
    columns: list[tuple[str, T | None]]
    #: False: every argument was a constant, the query stands alone; True: it reads the
    #: arguments' derived table (``args``), aliased ``alias``.
    correlated: bool
    args: ast.SelectStmt | None = None
    alias: str = ""
    strict_filter: ast.Node | None = None
    #: A STRICT call with a NULL constant argument: no body, NULL or no row.
    null: bool = False


def _typename(oid: int) -> ast.TypeName:
    name = typname(oid)
    if name.startswith("_"):
        return ast.TypeName(names=(_s("pg_catalog"), _s(name[1:])), typemod=-1, arrayBounds=(ast.Integer(ival=-1),))
    return ast.TypeName(names=(_s("pg_catalog"), _s(name)), typemod=-1)


def result_columns(fn: Function) -> list[tuple[str, int]]:
    """The declared result's columns: OUT/INOUT/TABLE parameters, else one of the result
    type (named ``""``: the caller names it)."""
    outs = [(a.name, a.type_oid) for a in fn.args if a.mode in ("o", "b", "t")]
    if len(outs) > 1:  # (a row's unnamed column is columnN, as the record type names it)
        outs = [(n or f"column{i}", t) for i, (n, t) in enumerate(outs, start=1)]
    return outs if outs else [("", fn.rettype)]


def _check_result(fn: Function, cols: list[tuple[str, T | None]] | None, probe: Probe | None = None) -> bool:
    """check_sql_fn_retval: the last statement's columns against the declared result.
    False when a column's type is not known (CREATE FUNCTION's check: DuckDB's analysis
    of the body comes first, the refusal after it)."""
    try:
        _check_columns(fn, cols)
    except _Undetermined as e:
        if probe is None:
            raise
        probe.pending.append(e)
        return False
    return True


class _Undetermined(PgError):
    pass


def _check_columns(fn: Function, cols: list[tuple[str, T | None]] | None) -> None:

    if fn.rettype == VOID_OID:
        return
    if cols is None:
        raise _Undetermined("0A000", f'SQL function "{fn.name}" whose last statement\'s columns the proxy cannot list is not supported by walsender-proxy')
    if len(cols) == 1 and cols[0][0] == NO_COLUMNS:
        cols = []
    want = result_columns(fn)
    record = fn.rettype == RECORD_OID
    if not record and len(cols) != 1:
        raise retval_error(fn, "Final statement must return exactly one column.")
    if record and len(cols) < len(want):
        raise retval_error(fn, "Final statement returns too few columns.")
    if record and len(cols) > len(want):
        raise retval_error(fn, "Final statement returns too many columns.")
    for i, ((_, t), (_, oid)) in enumerate(zip(cols, want, strict=False), start=1):
        if t is None:
            raise _Undetermined("0A000", f'SQL function "{fn.name}" whose result type the proxy cannot determine is not supported by walsender-proxy')
        source = "text" if t.name == "unknown" else ("numeric" if t.text_numeric else t.name)
        ok = coercible(source, typname(oid), "a")
        if ok is None:
            raise unsupported(f'SQL function "{fn.name}" returning {shown(pgcatalog_defs.TYPE_OIDS.get(_base(source), 0)) if _base(source) in pgcatalog_defs.TYPE_OIDS else source} as {shown(oid)}')
        if not ok:
            actual = shown(pgcatalog_defs.TYPE_OIDS[_base(source)])
            if record:
                raise retval_error(fn, f"Final statement returns {actual} instead of {shown(oid)} at column {i}.")
            raise retval_error(fn, f"Actual return type is {actual}.")


def _inline(rw: _Rewriter, node: ast.FuncCall, scope: _Scope, fn: Function, bound: _Bound, *, rows: str) -> _Inlined:
    """``rows``: ``one`` (the first row: a scalar or a row in FROM), ``all`` (SETOF)."""

    lk = LOOKUP.get()
    probe = lk is not None and lk.probe is not None and lk.probe.oid == fn.oid
    frames = rw.sql_fn_frames
    if any(f.fn.oid == fn.oid for f in frames):
        raise unsupported(f'recursive SQL function "{fn.name}"', node)
    params = fn.input_args
    for raw in bound.args:
        if _has(raw, lambda n: isinstance(n, ast.FuncCall) and n.over is not None):
            raise unsupported(f"a window function in an argument of SQL function {fn.name}()", raw)
        if _has(raw, _is_srf):
            raise unsupported(f"a set-returning function in an argument of SQL function {fn.name}()", raw)
    constant = all(_is_constant(rw, raw) for raw in bound.args)
    if fn.strict and not probe and any(_null_arg(raw) for raw in bound.args):
        return _Inlined(ast.SelectStmt(op=SetOperation.SETOP_NONE), [], False, null=True)
    if fn.strict and not probe and not all(isinstance(raw, ast.A_Const) or _null_arg(raw) for raw in bound.args):
        constant = False  # (a STRICT call's NULLs are filtered before the body runs)
    # the arguments, coerced to the parameter types, in the caller's scope
    values: list[tuple[ast.Node, T | None]] = []
    for raw, p in zip(bound.args, params, strict=True):
        want = typname(p.type_oid)
        t_given = _probe_type(rw, raw, scope) if not (isinstance(raw, ast.A_Const) and raw.isnull) else "unknown"
        arg = raw if _base(t_given) == _base(want) else ast.TypeCast(arg=raw, typeName=_typename(p.type_oid))
        values.append(rw.expr(arg, scope))
    stmts = statements(fn)
    written = WRITING.get()
    if written is not None and fn.volatility == "v" and _has(stmts, lambda n: isinstance(n, ast.RangeVar) and n.relname == written):
        raise unsupported(
            f'a call of VOLATILE SQL function {fn.name}(), which reads table "{written}", in an INSERT, UPDATE or'
            " DELETE of it (PostgreSQL's call sees the rows the statement changed before it)",
            node,
        )
    last = check_statements(fn, stmts)
    if last is not None and rows == "one" and not probe and not constant and fn.rettype != VOID_OID and not at_most_one_row(last):
        raise unsupported(
            f"a call of SQL function {fn.name}() with arguments from the query's rows, whose last statement may return"
            " several rows in no defined order (PostgreSQL returns the first)",
            node,
        )
    alias = f"wpx_fa_{rw.nonce}_{next(_COUNTER)}"
    if constant:
        subst = values
    else:
        subst = [(_colref(alias, f"wpx_p{i}"), t) for i, (_, t) in enumerate(values, start=1)]
    rel = _Rel([(p.name, t) for p, (_, t) in zip(params, subst, strict=True) if p.name])
    params_scope = _Scope(None)
    params_scope.add(fn.name, rel)
    frame = Frame(
        fn, rel, subst, [0] * len(subst),
        [constant and _is_constant(rw, raw) for raw in bound.args],
        [not constant or _is_duplicable(rw, raw) for raw in bound.args],
    )  # fmt: skip
    if last is None:  # (a void function whose body has no SELECT: nothing to run)
        last = ast.SelectStmt(targetList=(ast.ResTarget(val=_null()),), op=SetOperation.SETOP_NONE)
    if rows == "one" and fn.rettype != VOID_OID:
        if last.limitCount is None and last.limitOffset is None:
            last.limitCount = _int(1)
            last.limitOption = LimitOption.LIMIT_OPTION_COUNT
        else:
            star = ast.ResTarget(val=ast.ColumnRef(fields=(ast.A_Star(),)))
            last = ast.SelectStmt(
                targetList=(star,), fromClause=(ast.RangeSubselect(lateral=False, subquery=last, alias=ast.Alias(aliasname="wpx_l")),),
                limitCount=_int(1), limitOption=LimitOption.LIMIT_OPTION_COUNT, op=SetOperation.SETOP_NONE,
            )  # fmt: skip
    frames.append(frame)
    try:
        body, cols = rw.select(last, params_scope)
    finally:
        frames.pop()
    checked = _check_result(fn, cols, lk.probe if probe and lk is not None else None)
    if constant:  # ($n of the caller put in more or fewer times than it was rewritten)
        for (val, _), used in zip(values, frame.uses, strict=True):
            for n in _params_in(val):
                rw.param_uses[n] = rw.param_uses.get(n, 0) + used - 1
    ncols = len(cols or ())
    inner_names = [f"wpx_c{i}" for i in range(1, ncols + 1)]
    body_ref = f"wpx_b_{rw.nonce}_{next(_COUNTER)}"
    out_scope = _Scope(None)
    out_scope.add(body_ref, _Rel([(n, TEXT if t == UNKNOWN else t) for n, (_, t) in zip(inner_names, cols or (), strict=True)]))
    targets: list[ast.ResTarget] = []
    columns: list[tuple[str, T | None]] = []
    if fn.rettype == VOID_OID:
        # every row computed, as PostgreSQL runs a void function's statement to its end;
        # one row of NULL (SETOF void: the caller keeps none of it)
        # (NULLIF(m, m): a NULL DuckDB does not fold away with the aggregate under it)
        check = _call("max", _call("hash", *(_colref(body_ref, n) for n in inner_names) if inner_names else [_int(0)]))
        val: ast.Node = ast.A_Expr(kind=A_Expr_Kind.AEXPR_NULLIF, name=(_s("="),), lexpr=check, rexpr=copy.deepcopy(check))
        targets.append(ast.ResTarget(name="wpx_r1", val=val))
        columns.append(("", T("void")))
    else:
        for i, ((name, oid), inner) in enumerate(zip(result_columns(fn), inner_names, strict=False), start=1):
            t_in = dict(out_scope.rels[body_ref].columns or ()).get(inner)
            same = not checked or (t_in is not None and _base("numeric" if t_in.text_numeric else t_in.name) == typname(oid))
            ref = _colref(body_ref, inner)
            val, t_out = (ref, t_in) if same else rw.expr(ast.TypeCast(arg=ref, typeName=_typename(oid)), out_scope)
            targets.append(ast.ResTarget(name=f"wpx_r{i}", val=val))
            columns.append((name, t_out))
    query = ast.SelectStmt(
        targetList=tuple(targets),
        fromClause=(ast.RangeSubselect(lateral=not constant, subquery=body, alias=ast.Alias(aliasname=body_ref, colnames=tuple(_s(n) for n in inner_names) or None)),),
        op=SetOperation.SETOP_NONE,
    )
    if constant:
        return _Inlined(query, columns, False)
    args = ast.SelectStmt(
        targetList=tuple(ast.ResTarget(name=f"wpx_p{i}", val=v) for i, (v, _) in enumerate(values, start=1)) or (ast.ResTarget(name="wpx_p0", val=_int(0)),),
        op=SetOperation.SETOP_NONE,
    )
    strict: ast.Node | None = None
    if fn.strict and values:
        tests = [ast.NullTest(arg=_colref(alias, f"wpx_p{i}"), nulltesttype=NullTestType.IS_NOT_NULL) for i in range(1, len(values) + 1)]
        strict = tests[0] if len(tests) == 1 else ast.BoolExpr(boolop=BoolExprType.AND_EXPR, args=tuple(tests))
    return _Inlined(query, columns, True, args, alias, strict)


def _direct(rw: _Rewriter, node: ast.FuncCall, scope: _Scope, fn: Function, bound: _Bound) -> tuple[ast.Node, T | None] | None:
    """PostgreSQL's ``inline_function`` for a body that is one expression: the expression in
    the call's place, each parameter replaced by its argument (coerced), when no argument
    that is used more than once, or not at all, could change by being so (a volatile
    function, a subquery); a STRICT function's NULL arguments give NULL first. None when
    the body is not of that form (the subquery forms do the rest)."""

    stmts = statements(fn)
    expr = _simple_body(fn, stmts)
    if expr is None:
        return None
    uses = _uses(fn, expr)
    if uses is None:
        return None
    if any(n != 1 and not _is_duplicable(rw, raw) for n, raw in zip(uses, bound.args, strict=True)):
        return None
    if fn.strict and not all(_is_duplicable(rw, raw) for raw in bound.args):
        return None
    params = fn.input_args
    values: list[tuple[ast.Node, T | None]] = []
    for raw, p in zip(bound.args, params, strict=True):
        given = _probe_type(rw, raw, scope) if not (isinstance(raw, ast.A_Const) and raw.isnull) else "unknown"
        arg = raw if _base(given) == _base(typname(p.type_oid)) else ast.TypeCast(arg=raw, typeName=_typename(p.type_oid))
        values.append(rw.expr(arg, scope))
    rel = _Rel([(p.name, t) for p, (_, t) in zip(params, values, strict=True) if p.name])
    params_scope = _Scope(None)
    params_scope.add(fn.name, rel)
    frame = Frame(
        fn, rel, values, [0] * len(values),
        [_is_constant(rw, raw) for raw in bound.args], [_is_duplicable(rw, raw) for raw in bound.args],
    )  # fmt: skip
    frames = rw.sql_fn_frames
    frames.append(frame)
    try:
        uses_before, tables = dict(rw.param_uses), list(rw.user_tables)
        _, t = rw.expr(copy.deepcopy(expr), params_scope)
        rw.param_uses, rw.user_tables = uses_before, tables
        lk = LOOKUP.get()
        probe = lk.probe if lk is not None and lk.probe is not None and lk.probe.oid == fn.oid else None
        checked = _check_result(fn, [("?column?", t)], probe)
        frame.uses = [0] * len(values)
        same = not checked or (t is not None and _base("numeric" if t.text_numeric else t.name) == typname(fn.rettype))
        out, t_out = rw.expr(expr if same else ast.TypeCast(arg=expr, typeName=_typename(fn.rettype)), params_scope)
    finally:
        frames.pop()
    for (val, _), used in zip(values, frame.uses, strict=True):
        for n in _params_in(val):
            rw.param_uses[n] = rw.param_uses.get(n, 0) + used - 1
    if fn.strict and values:
        tests = [ast.NullTest(arg=copy.deepcopy(v), nulltesttype=NullTestType.IS_NULL) for v, _ in values]
        for v, _ in values:
            for n in _params_in(v):
                rw.param_uses[n] = rw.param_uses.get(n, 0) + 1
        test = tests[0] if len(tests) == 1 else ast.BoolExpr(boolop=BoolExprType.OR_EXPR, args=tuple(tests))
        out = ast.CaseExpr(args=(ast.CaseWhen(expr=test, result=_null()),), defresult=out)
    return out, t_out


def _params_in(node: Any) -> list[int]:
    out: list[int] = []
    if isinstance(node, ast.ParamRef):
        return [node.number]
    if isinstance(node, tuple | list):
        for n in node:
            out += _params_in(n)
    elif isinstance(node, ast.Node):
        for a in type(node).__slots__:
            out += _params_in(getattr(node, a, None))
    return out


def _with_args(inl: _Inlined) -> ast.SelectStmt:
    """The inlined query over its arguments' derived table (filtered for a STRICT call):
    ``SELECT … FROM (args) AS a, LATERAL (body) AS b``."""
    if not inl.correlated:
        return inl.query
    assert inl.args is not None
    source: ast.Node = ast.RangeSubselect(lateral=False, subquery=inl.args, alias=ast.Alias(aliasname=inl.alias))
    if inl.strict_filter is not None:
        filtered = ast.SelectStmt(
            targetList=(ast.ResTarget(val=ast.ColumnRef(fields=(ast.A_Star(),))),),
            fromClause=(source,),
            whereClause=inl.strict_filter,
            op=SetOperation.SETOP_NONE,
        )
        source = ast.RangeSubselect(lateral=False, subquery=filtered, alias=ast.Alias(aliasname=inl.alias))
    q = inl.query
    return ast.SelectStmt(targetList=q.targetList, fromClause=(source, *q.fromClause), op=SetOperation.SETOP_NONE)


# ---------------------------------------------------------------------------------------------
# entry points from the rewriter


def _bind(rw: _Rewriter, node: ast.FuncCall, scope: _Scope) -> _Bound:
    fns = visible(_names(node))
    lk = LOOKUP.get()
    if lk is not None and lk.probe is not None and not lk.probe.called and any(f.oid == lk.probe.oid for f in fns):
        lk.probe.called.append(True)  # (CREATE FUNCTION's call of the new function, whatever its overloads)
        fns = [f for f in fns if f.oid == lk.probe.oid]
    rw.used_udfs = True  # (never cached by text: the catalog decides what it means)
    bound = _resolve(rw, node, scope, fns)
    if lk is not None and lk.probe is None and lk.may_execute is not None and not lk.may_execute(bound.fn):
        raise PgError("42501", f"permission denied for function {bound.fn.name}")
    return bound


def scalar_call(rw: _Rewriter, node: ast.FuncCall, scope: _Scope) -> tuple[ast.Node, T | None]:
    """A call in an expression: a scalar subquery (SETOF: its rows unnested, as a
    set-returning function in a SELECT list gives them)."""

    bound = _bind(rw, node, scope)
    fn = bound.fn
    cols = result_columns(fn)
    if len(cols) > 1 or fn.rettype == RECORD_OID:
        raise unsupported(f"a call of SQL function {fn.name}() returning a row outside FROM", node)
    t_decl = T("void") if fn.rettype == VOID_OID else _t(fn.rettype)
    if fn.retset:
        inl = _inline(rw, node, scope, fn, bound, rows="all")
        if inl.null:
            return _call("unnest", ast.A_ArrayExpr(elements=())), t_decl
        if inl.correlated:
            raise unsupported(f"set-returning SQL function {fn.name}() in a SELECT list with arguments from the query's rows", node)
        q = inl.query
        if fn.rettype == VOID_OID:  # (SETOF void: no row, PostgreSQL keeps none of a void function's)
            ran = ast.NullTest(arg=ast.SubLink(subLinkType=SubLinkType.EXPR_SUBLINK, subLinkId=0, subselect=q), nulltesttype=NullTestType.IS_NULL)
            return _call("unnest", ast.CaseExpr(args=(ast.CaseWhen(expr=ran, result=ast.A_ArrayExpr(elements=())),))), t_decl
        listed = ast.SelectStmt(
            targetList=(ast.ResTarget(val=_call("list", q.targetList[0].val)),), fromClause=q.fromClause, op=SetOperation.SETOP_NONE
        )
        return _call("unnest", ast.SubLink(subLinkType=SubLinkType.EXPR_SUBLINK, subLinkId=0, subselect=listed)), inl.columns[0][1]
    if not (fn.strict and any(_null_arg(raw) for raw in bound.args)):
        direct = _direct(rw, node, scope, fn, bound)
        if direct is not None:
            return direct
    inl = _inline(rw, node, scope, fn, bound, rows="one")
    if inl.null:
        return rw.expr(ast.TypeCast(arg=_null(), typeName=_typename(fn.rettype)), scope) if fn.rettype != VOID_OID else (_null(), t_decl)
    sub = ast.SubLink(subLinkType=SubLinkType.EXPR_SUBLINK, subLinkId=0, subselect=_with_args(inl))
    return sub, inl.columns[0][1]


def from_call(rw: _Rewriter, rf: ast.RangeFunction, call: ast.FuncCall, scope: _Scope) -> ast.Node:
    """A call in FROM: its rows as a LATERAL subquery, named as PostgreSQL names a
    function's columns (the OUT/TABLE parameters; else the alias, else the function)."""

    if rf.ordinality:
        raise unsupported("WITH ORDINALITY over an SQL function", rf)
    if rf.coldeflist or any(cd for _, cd in rf.functions):
        raise rw.fail("42601", "a column definition list is only allowed for functions returning \"record\"", rf)
    bound = _bind(rw, call, scope)
    fn = bound.fn
    alias = rf.alias.aliasname if rf.alias is not None else fn.name
    given = [c.sval for c in (rf.alias.colnames or ())] if rf.alias is not None else []
    decl = result_columns(fn)
    names = [n or alias for n, _ in decl]
    if len(decl) == 1 and not any(a.mode in ("o", "b", "t") for a in fn.args):
        names = [alias]
    if len(given) > len(names):
        raise rw.fail("42601", f'too many column aliases specified for function {fn.name}', rf)
    names = given + names[len(given):]
    inl = _inline(rw, call, scope, fn, bound, rows="all" if fn.retset else "one")
    if fn.rettype == VOID_OID:
        types: list[T | None] = [T("void")]
    else:
        types = [c[1] for c in inl.columns] if not inl.null else [_t(oid) for _, oid in decl]
    if inl.null:
        nulls = tuple(ast.ResTarget(name=n, val=rw.expr(ast.TypeCast(arg=_null(), typeName=_typename(oid)), scope)[0] if oid != VOID_OID else _null()) for n, (_, oid) in zip(names, decl, strict=True))
        q = ast.SelectStmt(targetList=nulls, op=SetOperation.SETOP_NONE)
        if fn.retset:
            q.whereClause = ast.A_Const(isnull=False, val=ast.Boolean(boolval=False))
    elif fn.retset and fn.rettype == VOID_OID:  # (run, no row kept)
        ran = ast.NullTest(arg=_colref("wpx_v", "wpx_r1"), nulltesttype=NullTestType.IS_NOT_NULL)
        q = ast.SelectStmt(
            targetList=(ast.ResTarget(val=_colref("wpx_v", "wpx_r1")),),
            fromClause=(ast.RangeSubselect(lateral=False, subquery=_with_args(inl), alias=ast.Alias(aliasname="wpx_v")),),
            whereClause=ran,
            op=SetOperation.SETOP_NONE,
        )
    elif fn.retset:
        q = _with_args(inl)
    else:  # (one row whatever the body returns: NULLs when it returns none)
        body = _with_args(inl)
        inner_alias = f"wpx_r_{rw.nonce}_{next(_COUNTER)}"
        outs = [f"wpx_r{i}" for i in range(1, len(names) + 1)]
        q = ast.SelectStmt(
            targetList=tuple(ast.ResTarget(val=ast.ColumnRef(fields=(_s(inner_alias), _s(o)))) for o in outs),
            fromClause=(
                ast.JoinExpr(
                    jointype=JoinType.JOIN_LEFT,
                    larg=ast.RangeSubselect(lateral=False, subquery=ast.SelectStmt(targetList=(ast.ResTarget(val=_int(1)),), op=SetOperation.SETOP_NONE), alias=ast.Alias(aliasname="wpx_one")),
                    rarg=ast.RangeSubselect(lateral=True, subquery=body, alias=ast.Alias(aliasname=inner_alias)),
                    quals=ast.A_Const(isnull=False, val=ast.Boolean(boolval=True)),
                ),
            ),
            op=SetOperation.SETOP_NONE,
        )  # fmt: skip
    scope.add(alias, _Rel(list(zip(names, types, strict=True))))
    return ast.RangeSubselect(lateral=True, subquery=q, alias=ast.Alias(aliasname=alias, colnames=tuple(_s(n) for n in names)))
