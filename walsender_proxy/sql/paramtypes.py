"""The types PostgreSQL's parse analysis gives parameters a client left unspecified at
Parse (``parse_param.c``: an unknown ``$n`` takes the type it is first coerced to), for the
common shapes of statements drivers prepare:

- a cast, ``$1::int4`` → int4;
- an operator with a typed other side, ``col = $1``, ``$1 < col + 1`` → that side's type
  (operator resolution assumes an unknown argument has the other's type);
- ``col IN ($1, $2)``, ``col BETWEEN $1 AND $2`` → the column's type;
- ``col = ANY($1)`` → the array type of the column's type;
- ``INSERT … VALUES ($1, …)``, ``UPDATE … SET col = $1``, ``ON CONFLICT … SET`` → the
  target column's type;
- ``LIMIT $1``, ``OFFSET $1`` → int8;
- ``LIKE``/``ILIKE`` against text → text;
- json's ``->``/``->>`` key → text, ``#>``/``#>>`` path → text[].

What it cannot place stays 0; the executor reports those as text, which is what PostgreSQL
makes of an unknown parameter in a target list (``SELECT $1``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from pglast import ast, enums

from walsender_proxy.backend import pgcatalog_data as data

INT4, INT8, NUMERIC, TEXT, BOOL = 23, 20, 1700, 25, 16


def _type_oids() -> tuple[Mapping[str, int], Mapping[int, int]]:
    cols = data.PG_TYPE_COLUMNS
    i_oid, i_name, i_arr = cols.index("oid"), cols.index("typname"), cols.index("typarray")
    names = {r[i_name]: r[i_oid] for r in data.PG_TYPE_ROWS}
    arrays = {r[i_oid]: r[i_arr] for r in data.PG_TYPE_ROWS if r[i_arr]}
    return MappingProxyType(names), MappingProxyType(arrays)


#: pg_type.typname → oid (arrays as ``_elem``); element oid → array type oid.
TYPE_OIDS, ARRAY_OF = _type_oids()
_ALIASES = {"int": "int4", "integer": "int4", "smallint": "int2", "bigint": "int8", "float": "float8", "real": "float4", "boolean": "bool", "decimal": "numeric", "json": "json"}

#: Columns of the emulated catalog relations (``pg_class.relname`` is ``name``…).
_CATALOG: Mapping[str, Mapping[str, int]] = MappingProxyType(
    {rel: {c: TYPE_OIDS.get(t, 0) for c, t in cols} for rel, (_oid, _kind, cols) in data.CATALOG_COLUMNS.items()}
)

#: Operators whose unknown argument PostgreSQL resolves to the other argument's type.
_SAME_TYPE_OPS = frozenset({"=", "<>", "!=", "<", ">", "<=", ">=", "+", "-", "*", "/", "%"})
_TEXT_OPS = frozenset({"~~", "~~*", "!~~", "!~~*", "~", "~*", "!~", "!~*"})

#: Argument types of functions drivers call with parameters, as PostgreSQL 15 resolves
#: them for unknown arguments (by name and argument count: the one candidate, or the one
#: taking text where an unknown prefers the string category).
_ADVISORY = ("pg_advisory_lock", "pg_advisory_unlock", "pg_advisory_xact_lock", "pg_try_advisory_lock", "pg_try_advisory_xact_lock", "pg_advisory_lock_shared", "pg_advisory_unlock_shared", "pg_advisory_xact_lock_shared", "pg_try_advisory_lock_shared", "pg_try_advisory_xact_lock_shared")
JSON = 114
_JSON_ARG = ("json_array_length", "json_typeof", "json_strip_nulls", "json_object_keys", "json_each", "json_each_text",
             "json_array_elements", "json_array_elements_text")  # fmt: skip
_FUNC_ARGS: Mapping[tuple[str, int], tuple[int, ...]] = MappingProxyType(
    {
        **{(f, 1): (INT8,) for f in _ADVISORY},
        **{(f, 2): (INT4, INT4) for f in _ADVISORY},
        ("pg_sleep", 1): (701,),
        ("to_timestamp", 1): (701,),
        ("to_timestamp", 2): (TEXT, TEXT),
        ("to_date", 2): (TEXT, TEXT),
        ("current_setting", 1): (TEXT,),
        ("current_setting", 2): (TEXT, BOOL),
        ("set_config", 3): (TEXT, TEXT, BOOL),
        ("pg_cancel_backend", 1): (INT4,),
        ("pg_terminate_backend", 1): (INT4,),
        ("pg_terminate_backend", 2): (INT4, INT8),
        **{(f, 1): (JSON,) for f in _JSON_ARG},
        ("lower", 1): (TEXT,),
        ("upper", 1): (TEXT,),
        ("length", 1): (TEXT,),
        ("md5", 1): (TEXT,),
        ("left", 2): (TEXT, INT4),
        ("right", 2): (TEXT, INT4),
        ("substr", 2): (TEXT, INT4),
        ("substr", 3): (TEXT, INT4, INT4),
        ("replace", 3): (TEXT, TEXT, TEXT),
        ("strpos", 2): (TEXT, TEXT),
        ("starts_with", 2): (TEXT, TEXT),
        ("btrim", 1): (TEXT,),
        ("ltrim", 1): (TEXT,),
        ("rtrim", 1): (TEXT,),
        ("repeat", 2): (TEXT, INT4),
        ("make_date", 3): (INT4, INT4, INT4),
        ("date_trunc", 2): (TEXT, 0),  # (two unknowns: PostgreSQL's "not unique")
        ("date_part", 2): (TEXT, 0),
    }
)

ColumnsOf = Callable[[ast.RangeVar], Mapping[str, int] | None]


def type_name_oid(tn: ast.TypeName) -> int:
    """The oid of the type a TypeName names (``pg_catalog.int4``, ``oid[]``); 0 if it is
    not a built-in type."""
    names = [n.sval for n in tn.names if isinstance(n, ast.String)]
    if not names or len(names) > 2 or (len(names) == 2 and names[0] != "pg_catalog") or tn.pct_type or tn.setof:
        return 0
    name = names[-1].lower()
    oid = TYPE_OIDS.get(_ALIASES.get(name, name), 0)
    if oid and tn.arrayBounds:
        return ARRAY_OF.get(oid, 0)
    return oid


def type_name_of(oid: int) -> tuple[str, bool]:
    """(element type name, is an array) of a built-in type's oid; text for one unknown."""
    for name, o in TYPE_OIDS.items():
        if o == oid:
            if name.startswith("_"):
                return name[1:], True
            return name, False
    return "text", False


def catalog_columns(rv: ast.RangeVar) -> Mapping[str, int] | None:
    if rv.schemaname not in (None, "pg_catalog"):
        return None
    return _CATALOG.get(rv.relname)


class _Scope:
    def __init__(self, parent: _Scope | None = None) -> None:
        self.parent = parent
        self.rels: list[tuple[str, Mapping[str, int]]] = []  # (alias, columns)

    def column(self, fields: Sequence[Any]) -> int:
        names = [f.sval for f in fields if isinstance(f, ast.String)]
        if len(names) != len(fields) or not names:
            return 0
        scope: _Scope | None = self
        while scope is not None:
            if len(names) == 1:
                hits = [cols[names[0]] for _a, cols in scope.rels if names[0] in cols]
                if len(hits) == 1:
                    return hits[0]
                if hits:
                    return 0  # ambiguous: PostgreSQL's error, not ours to guess
            else:
                for alias, cols in scope.rels:
                    if alias == names[-2] and names[-1] in cols:
                        return cols[names[-1]]
            scope = scope.parent
        return 0


class _Inference:
    def __init__(self, oids: list[int], columns_of: ColumnsOf) -> None:
        self.oids = oids
        self.columns_of = columns_of

    # -- helpers -------------------------------------------------------------------------
    def relation(self, rv: ast.RangeVar) -> Mapping[str, int] | None:
        try:
            cols = self.columns_of(rv)
        except Exception:
            cols = None
        return cols if cols is not None else catalog_columns(rv)

    def set(self, p: Any, oid: int) -> None:
        if isinstance(p, ast.ParamRef) and oid:
            i = p.number - 1
            if 0 <= i < len(self.oids) and not self.oids[i]:
                self.oids[i] = oid

    def type_of(self, x: Any, scope: _Scope) -> int:
        if isinstance(x, ast.ColumnRef):
            return scope.column(x.fields)
        if isinstance(x, ast.TypeCast):
            return type_name_oid(x.typeName)
        if isinstance(x, ast.ParamRef):
            i = x.number - 1
            return self.oids[i] if 0 <= i < len(self.oids) else 0
        if isinstance(x, ast.A_Const) and not x.isnull:
            v = x.val
            if isinstance(v, ast.Integer):
                return INT4
            if isinstance(v, ast.Float):
                return NUMERIC
            if isinstance(v, ast.Boolean):
                return BOOL
            return 0
        if isinstance(x, ast.A_Expr) and x.kind == enums.A_Expr_Kind.AEXPR_OP and _opname(x) in ("+", "-", "*", "/", "%"):
            lt = self.type_of(x.lexpr, scope) if x.lexpr is not None else 0
            rt = self.type_of(x.rexpr, scope)
            if lt and (lt == rt or not rt):
                return lt
            return rt if not lt else 0
        return 0

    def add_from(self, items: Sequence[Any] | None, scope: _Scope) -> None:
        for item in items or ():
            if isinstance(item, ast.RangeVar):
                cols = self.relation(item)
                if cols is not None:
                    alias = item.alias.aliasname if item.alias else item.relname
                    scope.rels.append((alias, cols))
            elif isinstance(item, ast.JoinExpr):
                self.add_from((item.larg, item.rarg), scope)
                if item.quals is not None:
                    self.expr(item.quals, scope)
            elif isinstance(item, ast.RangeSubselect):
                self.statement(item.subquery, scope)

    # -- statements ----------------------------------------------------------------------
    def statement(self, node: Any, parent: _Scope | None) -> None:
        if isinstance(node, ast.SelectStmt):
            self.select(node, parent)
        elif isinstance(node, ast.InsertStmt):
            self.insert(node, parent)
        elif isinstance(node, ast.UpdateStmt):
            scope = _Scope(parent)
            self.add_from((node.relation,), scope)
            self.add_from(node.fromClause, scope)
            cols = self.relation(node.relation) or {}
            for t in node.targetList or ():
                if isinstance(t, ast.ResTarget):
                    self.set(t.val, cols.get(t.name, 0))
                    self.expr(t.val, scope)
            self.expr(node.whereClause, scope)
            self.expr(node.returningClause, scope)
        elif isinstance(node, ast.DeleteStmt):
            scope = _Scope(parent)
            self.add_from((node.relation,), scope)
            self.add_from(node.usingClause, scope)
            self.expr(node.whereClause, scope)
            self.expr(node.returningClause, scope)
        elif node is not None:
            self.expr(node, parent or _Scope())

    def select(self, node: ast.SelectStmt, parent: _Scope | None) -> None:
        if node.withClause is not None:
            for cte in node.withClause.ctes or ():
                self.statement(cte.ctequery, parent)
        if node.op != enums.SetOperation.SETOP_NONE:
            self.statement(node.larg, parent)
            self.statement(node.rarg, parent)
        scope = _Scope(parent)
        self.add_from(node.fromClause, scope)
        self.expr(node.targetList, scope)
        self.expr(node.whereClause, scope)
        self.expr(node.groupClause, scope)
        self.expr(node.havingClause, scope)
        self.expr(node.sortClause, scope)
        self.expr(node.valuesLists, scope)
        self.set(node.limitCount, INT8)
        self.set(node.limitOffset, INT8)
        self.expr(node.limitCount, scope)
        self.expr(node.limitOffset, scope)

    def insert(self, node: ast.InsertStmt, parent: _Scope | None) -> None:
        cols = self.relation(node.relation) or {}
        names = [t.name for t in node.cols] if node.cols else list(cols)
        sel = node.selectStmt
        if isinstance(sel, ast.SelectStmt) and sel.valuesLists:
            for row in sel.valuesLists:
                for name, v in zip(names, row, strict=False):
                    self.set(v, cols.get(name, 0))
        if sel is not None:
            self.statement(sel, parent)
        scope = _Scope(parent)
        self.add_from((node.relation,), scope)
        occ = node.onConflictClause
        if occ is not None:
            for t in occ.targetList or ():
                if isinstance(t, ast.ResTarget):
                    self.set(t.val, cols.get(t.name, 0))
            self.expr(occ.targetList, scope)
            self.expr(occ.whereClause, scope)
        self.expr(node.returningClause, scope)

    # -- expressions ---------------------------------------------------------------------
    def expr(self, x: Any, scope: _Scope) -> None:
        if x is None:
            return
        if isinstance(x, tuple | list):
            for y in x:
                self.expr(y, scope)
            return
        if not isinstance(x, ast.Node):
            return
        if isinstance(x, ast.TypeCast) and isinstance(x.arg, ast.ParamRef):
            self.set(x.arg, type_name_oid(x.typeName))
            return
        if isinstance(x, ast.SubLink):
            if x.testexpr is not None:
                self.expr(x.testexpr, scope)
            sub = x.subselect
            if x.testexpr is not None and isinstance(sub, ast.SelectStmt) and sub.targetList and len(sub.targetList) == 1:
                # x IN (SELECT col …): the unknown side takes the other's type
                inner = _Scope(scope)
                self.add_from(sub.fromClause, inner)
                self._pair(x.testexpr, sub.targetList[0].val, scope, inner, operator=False)
            self.statement(sub, scope)
            return
        if isinstance(x, ast.FuncCall):
            names = [n.sval for n in x.funcname if isinstance(n, ast.String)]
            if names and (len(names) == 1 or names[0] == "pg_catalog"):
                args = list(x.args or ())
                sig = _FUNC_ARGS.get((names[-1].lower(), len(args)))
                if sig is not None:
                    for a, oid in zip(args, sig, strict=True):
                        self.set(a, oid)
        if isinstance(x, ast.A_Expr):
            self.a_expr(x, scope)
        elif isinstance(x, ast.CoalesceExpr | ast.MinMaxExpr):
            args = list(x.args or ())
            known = next((t for a in args if (t := self.type_of(a, scope))), 0)
            for a in args:
                self.set(a, known)
        elif isinstance(x, ast.CaseExpr):
            if x.arg is not None:
                at = self.type_of(x.arg, scope)
                for w in x.args or ():
                    self.set(w.expr, at)
            results = [w.result for w in x.args or ()] + [x.defresult]
            known = next((t for a in results if (t := self.type_of(a, scope))), 0)
            for a in results:
                self.set(a, known)
        elif isinstance(x, ast.SelectStmt | ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt):
            self.statement(x, scope)
            return
        for name in x:
            v = getattr(x, name)
            if isinstance(v, ast.Node | tuple | list):
                self.expr(v, scope)

    def _pair(self, left: Any, right: Any, lscope: _Scope, rscope: _Scope, *, operator: bool = True) -> None:
        lt, rt = self.type_of(left, lscope), self.type_of(right, rscope)
        self.set(left, _operand(rt) if operator else rt)
        self.set(right, _operand(lt) if operator else lt)

    def a_expr(self, x: ast.A_Expr, scope: _Scope) -> None:
        kind = x.kind
        op = _opname(x)
        K = enums.A_Expr_Kind
        if kind in (K.AEXPR_OP, K.AEXPR_DISTINCT, K.AEXPR_NOT_DISTINCT, K.AEXPR_NULLIF):
            if x.lexpr is None:  # prefix operator: -$1
                return
            if op in _SAME_TYPE_OPS or kind != K.AEXPR_OP:
                self._pair(x.lexpr, x.rexpr, scope, scope)
            elif op in _TEXT_OPS:
                self.set(x.rexpr, TEXT)
                self.set(x.lexpr, TEXT)
            elif op in ("->", "->>", "#>", "#>>"):  # json's: an unknown key is text, a path text[]
                self.set(x.rexpr, TEXT if op in ("->", "->>") else ARRAY_OF[TEXT])
        elif kind in (K.AEXPR_LIKE, K.AEXPR_ILIKE, K.AEXPR_SIMILAR):
            self.set(x.rexpr, TEXT)
            self.set(x.lexpr, TEXT)
        elif kind in (K.AEXPR_OP_ANY, K.AEXPR_OP_ALL):
            lt = _operand(self.type_of(x.lexpr, scope))
            self.set(x.rexpr, ARRAY_OF.get(lt, 0))
            rt = self.type_of(x.rexpr, scope)
            elem = next((e for e, a in ARRAY_OF.items() if a == rt), 0) if rt else 0
            self.set(x.lexpr, elem)
        elif kind == K.AEXPR_IN and isinstance(x.rexpr, tuple | list):
            items = list(x.rexpr)
            lt = self.type_of(x.lexpr, scope) or next((t for a in items if (t := self.type_of(a, scope))), 0)
            self.set(x.lexpr, lt)
            for a in items:
                self.set(a, lt)
        elif kind in (K.AEXPR_BETWEEN, K.AEXPR_NOT_BETWEEN, K.AEXPR_BETWEEN_SYM, K.AEXPR_NOT_BETWEEN_SYM) and isinstance(x.rexpr, tuple | list):
            items = [x.lexpr, *x.rexpr]
            known = _operand(next((t for a in items if (t := self.type_of(a, scope))), 0))
            for a in items:
                self.set(a, known)


def _operand(oid: int) -> int:
    """The type an operator gives an unknown argument facing ``oid``: its own, but varchar
    has no operators of its own (``varchar = $1`` is texteq, so $1 is text), where IN,
    COALESCE and assignment keep varchar (a common type, not an operator)."""
    return TEXT if oid == 1043 else oid


def _opname(x: ast.A_Expr) -> str:
    names = x.name or ()
    return names[-1].sval if names and isinstance(names[-1], ast.String) else ""


def infer_param_types(node: Any, declared: Sequence[int], n: int, columns_of: ColumnsOf) -> list[int]:
    """Each of the ``n`` parameters' type oids: as declared at Parse (non-zero), else as
    PostgreSQL would infer it from the statement; 0 where this cannot tell."""
    oids = [declared[i] if i < len(declared) else 0 for i in range(n)]
    if all(oids) or node is None:
        return oids
    _Inference(oids, columns_of).statement(node, None)
    return oids
