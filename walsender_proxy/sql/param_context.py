"""Types of unspecified parameters from their context, as PostgreSQL's parse analysis
gives them at Parse: ``INSERT INTO t (c) VALUES ($1)`` and ``UPDATE t SET c = $1`` make
``$1`` the column's type, ``c = $1`` (and ``<``, ``IN``, …) the compared column's type,
``c = ANY($1)`` an array of it. Drivers read these types from ParameterDescription and
send values accordingly: postgres.js serialises an object as JSON only for a json/jsonb
parameter (else it sends the text ``[object Object]``), node-postgres sends a Buffer in
binary, pgjdbc sends timestamps untyped.

Only what can be vouched for is inferred: a column of a user table named by the statement
(unqualified names must belong to exactly one of its tables, and are not inferred at all
when a subquery, CTE or function in FROM could bring a column of that name); anything else
stays unspecified (0) and is taken as text, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pglast import ast
from pglast.enums import A_Expr_Kind

from decoding.catalog import Column, Function, Table
from decoding.pgtypes import ColumnType

#: (schema or None, name) → the user table, or None.
FindTable = Callable[[str | None, str], Table | None]

#: Operators whose operands PostgreSQL resolves to one type (an unknown operand takes the
#: other's): comparisons, and containment/overlap of jsonb and arrays.
_COMPARISONS = frozenset({"=", "<>", "!=", "<", ">", "<=", ">=", "@>", "<@", "&&"})
_SCALAR_COMPARISONS = frozenset({"=", "<>", "!=", "<", ">", "<=", ">="})


#: (function name parts) → the user functions a call of it can mean.
FindFunctions = Callable[[Sequence[str]], Sequence[Function]]


def assigned(n: ast.InsertStmt | ast.UpdateStmt, find: FindTable) -> Iterator[tuple[Any, Column | None]]:
    """The value items an INSERT … VALUES or an UPDATE's SET gives a column of a user
    table, each with that column (None: not one of the table's, or an element or field
    of it): where a parameter takes the column's type."""
    if isinstance(n, ast.InsertStmt):
        if not (isinstance(n.selectStmt, ast.SelectStmt) and n.selectStmt.valuesLists):
            return
        t = find(n.relation.schemaname, n.relation.relname)
        if t is not None:
            cols = [c.name for c in n.cols] if n.cols else [c.name for c in t.columns]
            for row in n.selectStmt.valuesLists:
                for name, v in zip(cols, row, strict=False):
                    yield v, t.column(name)
        return
    t = find(n.relation.schemaname, n.relation.relname)
    if t is not None:
        for target in n.targetList or ():
            yield target.val, t.column(target.name) if not target.indirection else None


def context_param_types(
    node: Any, declared: Sequence[int], nparams: int, find: FindTable, functions: FindFunctions | None = None
) -> list[int]:
    """``declared`` (Parse's types) completed to ``nparams``, each 0 replaced by the OID
    of the type its context gives, where there is one."""
    oids = [declared[i] if i < len(declared) else 0 for i in range(nparams)]
    if all(oids) or node is None:
        return oids
    if functions is not None:
        _function_arguments(node, oids, functions)
        if all(oids):
            return oids
    tables: dict[str, Table] = {}  # alias or name → table
    ctes: set[str] = set()
    opaque = False  # subqueries, CTEs or functions in FROM: their columns are not known here

    def collect_ctes(n: Any) -> None:
        nonlocal opaque
        if isinstance(n, ast.CommonTableExpr):
            ctes.add(n.ctename)
        if isinstance(n, ast.RangeSubselect | ast.CommonTableExpr | ast.RangeFunction):
            opaque = True
        if isinstance(n, ast.Node):
            for name in n:
                collect_ctes(getattr(n, name))
        elif isinstance(n, tuple | list):
            for x in n:
                collect_ctes(x)

    def collect(n: Any) -> None:
        if isinstance(n, ast.RangeVar):
            if n.schemaname is None and n.relname in ctes:
                return
            t = find(n.schemaname, n.relname)
            if t is not None:
                tables[n.alias.aliasname if n.alias is not None else n.relname] = t
            return
        if isinstance(n, ast.Node):
            for name in n:
                collect(getattr(n, name))
        elif isinstance(n, tuple | list):
            for x in n:
                collect(x)

    collect_ctes(node)
    collect(node)
    if not tables:
        return oids

    def column_type(ref: Any) -> ColumnType | None:
        if not isinstance(ref, ast.ColumnRef) or not all(isinstance(f, ast.String) for f in ref.fields):
            return None
        names = [f.sval for f in ref.fields]
        if len(names) == 2:
            t = tables.get(names[0])
            c = t.column(names[1]) if t is not None else None
            return c.type if c is not None else None
        if len(names) != 1 or opaque:
            return None
        hits = [c.type for t in tables.values() if (c := t.column(names[0])) is not None]
        return hits[0] if len(hits) == 1 else None

    def give(p: Any, ctype: ColumnType | None, *, array: bool = False) -> None:
        if not isinstance(p, ast.ParamRef) or ctype is None:
            return
        i = p.number - 1
        if not 0 <= i < nparams or oids[i]:
            return
        if array:
            if ctype.is_array:
                return
            oids[i] = ctype.base.array_oid
        else:
            oids[i] = ctype.oid

    def visit(n: Any) -> None:
        if isinstance(n, ast.InsertStmt | ast.UpdateStmt):
            for v, c in assigned(n, find):
                give(v, c.type if c is not None else None)
        elif isinstance(n, ast.A_Expr) and n.name and isinstance(n.name[-1], ast.String):
            op = n.name[-1].sval
            if n.kind == A_Expr_Kind.AEXPR_OP and op in _COMPARISONS:
                give(n.rexpr, column_type(n.lexpr))
                give(n.lexpr, column_type(n.rexpr))
            elif n.kind in (A_Expr_Kind.AEXPR_OP_ANY, A_Expr_Kind.AEXPR_OP_ALL) and op in _SCALAR_COMPARISONS:
                give(n.rexpr, column_type(n.lexpr), array=True)
            elif n.kind == A_Expr_Kind.AEXPR_IN and isinstance(n.rexpr, tuple | list):
                ct = column_type(n.lexpr)
                for x in n.rexpr:
                    give(x, ct)
        if isinstance(n, ast.Node):
            for name in n:
                visit(getattr(n, name))
        elif isinstance(n, tuple | list):
            for x in n:
                visit(x)

    visit(node)
    return oids


def _function_arguments(node: Any, oids: list[int], functions: FindFunctions) -> None:
    """``f($1)`` of a user function: ``$1`` takes the parameter's type when every function
    the call can mean (by name and argument count) has the same type there, as
    PostgreSQL's resolution gives an unknown parameter the chosen function's type."""
    if isinstance(node, tuple | list):
        for x in node:
            _function_arguments(x, oids, functions)
        return
    if not isinstance(node, ast.Node):
        return
    if isinstance(node, ast.FuncCall) and node.args and not node.func_variadic:
        fns = functions([n.sval for n in node.funcname])
        args = list(node.args)
        for i, a in enumerate(args):
            named = a.name if isinstance(a, ast.NamedArgExpr) else None
            p = a.arg if isinstance(a, ast.NamedArgExpr) else a
            if not isinstance(p, ast.ParamRef) or not 0 < p.number <= len(oids) or oids[p.number - 1]:
                continue
            types = set()
            for fn in fns:
                params = fn.input_args
                if len(args) > len(params) or sum(1 for x in params if x.default is None) > len(args):
                    continue
                at = next((j for j, x in enumerate(params) if x.name == named), -1) if named else i
                if at >= 0:
                    types.add(params[at].type_oid)
            if len(types) == 1:
                oids[p.number - 1] = types.pop()
    for name in node:
        _function_arguments(getattr(node, name), oids, functions)
