"""Point statements by primary key, answered from the lake's key index and row cache.

``SELECT cols FROM t WHERE pk = $1``, ``UPDATE t SET c = expr WHERE pk = $1`` and
``DELETE FROM t WHERE pk = $1`` read their one row with ``Lake.point_read`` when it can vouch
for the statement's snapshot; whatever it cannot (own writes in the table, a row changed after
the snapshot, an expression beyond simple integer arithmetic, a type that needs a conversion)
goes the DuckDB way, which is the reference: every function here answers None then. A
session's plans (these and the INSERT fast path's, :mod:`walsender_proxy.sql.insert_fast`)
are kept by :class:`PointStatements`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pglast import ast, enums

from decoding.catalog import Table
from decoding.errors import PgError
from walsender_proxy.backend.outcomes import Column, Done, Rows
from walsender_proxy.lake.transaction import layout
from walsender_proxy.sql import insert_fast
from walsender_proxy.sql.ddl_names import qualified
from walsender_proxy.sql.insert_fast import NOT_SIMPLE, InsertPlan, const_value, direct_array
from walsender_proxy.sql.statement_nodes import returning

if TYPE_CHECKING:
    from walsender_proxy.lake import Transaction
    from walsender_proxy.sql.services import SessionState


class PointStatements:
    """One session's plans of point statements and INSERT … VALUES (SELECTs by text,
    INSERT/UPDATE/DELETE by id(node): a plan keeps its node alive), and their runs."""

    def __init__(self, ex: SessionState) -> None:
        self.ex = ex
        self.lake = ex.lake
        self._plans: dict[Any, Any] = {}

    def select_plan(self, node: Any, text: str) -> PointPlan | None:
        """The point plan of a SELECT's text, or None when it is not one (kept either way)."""
        key = ("S", text)
        plan = self._plans.get(key, NOT_SIMPLE)
        if plan is NOT_SIMPLE:
            plan = _select_plan(node)
            self._keep(key, plan)
        return plan  # type: ignore[return-value]

    def insert_plan(self, node: Any) -> InsertPlan | None:
        """The INSERT fast path's plan of a statement node, or None (kept either way)."""
        key = ("I", id(node))
        plan = self._plans.get(key, NOT_SIMPLE)
        if plan is NOT_SIMPLE or (plan is not None and plan.node is not node):  # type: ignore[union-attr]
            plan = insert_fast.insert_plan(node)
            self._keep(key, plan)  # type: ignore[arg-type]
        return plan  # type: ignore[return-value]

    def dml_plan(self, node: Any) -> PointPlan | None:
        """The point plan of an UPDATE's or DELETE's node, or None (kept either way)."""
        plan = self._plans.get(id(node), NOT_SIMPLE)
        if plan is NOT_SIMPLE or (plan is not None and plan.node is not node):  # type: ignore[union-attr]
            plan = _dml_plan(node)
            self._keep(id(node), plan)
        return plan  # type: ignore[return-value]

    def _keep(self, key: Any, plan: Any) -> None:
        if len(self._plans) >= 512:
            self._plans.clear()
        self._plans[key] = plan

    def _catalog_key(self, tx: Transaction) -> tuple[Any, tuple[str, ...], str, int]:
        """What a remembered SELECT holds for: the catalog (and so its ACLs), the search
        path, and who runs it with which memberships — the DuckDB run that remembered it
        passed the privilege checks for these, which the point read does not repeat."""
        return tx.catalog(), tuple(self.ex.search_path()), self.ex.user, self.ex.services.roles.version

    def columns_valid(self, tx: Transaction, plan: PointPlan) -> bool:
        """The plan's remembered result columns hold for this statement's catalog."""
        if plan.columns is None or plan.columns_for is None:
            return False
        key = self._catalog_key(tx)
        return plan.columns_for[0] is key[0] and plan.columns_for[1:] == key[1:]

    def remember_columns(self, tx: Transaction, plan: PointPlan, columns: list[Column]) -> None:
        plan.columns = columns
        plan.columns_for = self._catalog_key(tx)

    def select(self, tx: Transaction, plan: PointPlan, params: list[Any]) -> Rows | None:
        """A SELECT by primary key answered from the key index and row cache, with the
        result columns an earlier DuckDB run of the same text gave; None: run DuckDB."""
        if not self.columns_valid(tx, plan):
            return None
        cat, path = plan.columns_for[:2]
        t = (
            cat.find_table(plan.schema, plan.relname)
            if plan.schema
            else next(
                (
                    cat.find_table(s, plan.relname)
                    for s in path
                    if cat.relation_exists(s, plan.relname)
                ),
                None,
            )
        )
        if t is None:
            return None
        out: list[tuple[str, Any]] = []
        for name, colname in plan.targets:
            if colname is None:
                out.extend((c.name, c) for c in t.columns)
                continue
            c = t.column(colname)
            if c is None:
                return None
            out.append((name, c))
        if len(out) != len(plan.columns) or any(
            c.type.is_array or c.type.base.name not in _FAST_READ_TYPES for _, c in out
        ):
            return None
        key = _key_value(t, plan, params)
        if key is None:
            return None
        known, rid, values, rcols = self.lake.point_read(tx, t, key)
        if not known:
            return None
        try:
            if rid is None:
                arrays = [pa.array([], c.type.arrow) for _, c in out]
            else:
                row = dict(zip(rcols, values or (), strict=True))
                arrays = [pa.array([row[c.physical]], c.type.arrow) for _, c in out]
        except (pa.ArrowException, TypeError, ValueError, OverflowError, KeyError):
            return None
        batch = pa.RecordBatch.from_arrays(arrays, names=[n for n, _ in out])
        return Rows(plan.columns, iter([batch]))

    def write(self, tx: Transaction, node: Any, params: list[Any], verb: str) -> Done | None:
        """UPDATE/DELETE of one row by primary key, its row from the key index and row
        cache; None: run DuckDB (which also raises every error this does not)."""
        plan = self.dml_plan(node)
        if plan is None:
            return None
        try:
            t = tx.table(qualified(node.relation))
        except PgError:
            return None
        if not t.primary_key:
            return None
        sets = []
        for name, expr in plan.sets:
            col = t.column(name)
            if col is None or (isinstance(expr, ast.SetToDefault) and col.default is not None):
                return None
            sets.append((col, expr))
        key = _key_value(t, plan, params)
        if key is None:
            return None
        with tx.statement_section():  # the read and the write in one step, and see Engine.insert
            return self._write_locked(tx, t, key, sets, params, verb)

    def _write_locked(
        self,
        tx: Transaction,
        t: Table,
        key: Any,
        sets: list[tuple[Any, Any]],
        params: list[Any],
        verb: str,
    ) -> Done | None:
        known, rid, values, rcols = self.lake.point_read(tx, t, key)
        if not known:
            return None
        if rid is None:
            return Done(f"{verb} 0")
        row = dict(zip(rcols, values or (), strict=True))
        old = _row_table(t, rid, row)
        if old is None:
            return None
        if verb == "DELETE":
            return Done(f"DELETE {tx.apply_delete(t, old)}")
        new = old
        try:
            for col, expr in sets:
                if isinstance(expr, ast.SetToDefault):
                    v = None
                else:
                    r = _operand(expr, params, row, t)
                    if r is NOT_SIMPLE:
                        return None
                    v = None if r is None else r[0]
                arr = direct_array(col, [v], self.ex.settings.datetime_input())
                if arr is None:
                    return None
                i = new.schema.get_field_index(col.physical)
                new = new.set_column(i, new.schema.field(i), arr)
        except (PgError, pa.ArrowException, TypeError, ValueError, OverflowError):
            return None
        n = tx.apply_update(t, old, new, changed=[c.name for c, _ in sets])
        return Done(f"UPDATE {n}")


@dataclass(slots=True)
class PointPlan:
    """What a point statement needs from its syntax tree (independent of the catalog)."""

    node: Any  # kept alive: plans are found by id(node)
    schema: str | None
    relname: str
    alias: str
    keys: dict[str, Any]  # column name → ParamRef / A_Const
    targets: list[tuple[str, str | None]] = field(default_factory=list)  # (output, column|None=*)
    sets: list[tuple[str, Any]] = field(default_factory=list)  # (column, expression)
    #: SELECT: result columns of an earlier DuckDB run, valid for catalog ``columns_for``.
    columns: list[Column] | None = None
    columns_for: Any = None


def _colname(n: Any, alias: str) -> str | None:
    if not isinstance(n, ast.ColumnRef):
        return None
    f = n.fields
    if len(f) == 1 and isinstance(f[0], ast.String):
        return f[0].sval
    if (
        len(f) == 2
        and isinstance(f[0], ast.String)
        and isinstance(f[1], ast.String)
        and f[0].sval == alias
    ):
        return f[1].sval
    return None


def _key_terms(where: Any, alias: str) -> dict[str, Any] | None:
    """``col = value [AND col = value …]`` as {column: value node}, or None."""
    if where is None:
        return None
    conj = (
        where.args
        if isinstance(where, ast.BoolExpr) and where.boolop == enums.BoolExprType.AND_EXPR
        else (where,)
    )
    out: dict[str, Any] = {}
    for e in conj:
        if not (
            isinstance(e, ast.A_Expr)
            and e.kind == enums.A_Expr_Kind.AEXPR_OP
            and len(e.name) == 1
            and e.name[0].sval == "="
        ):
            return None
        col, val = _colname(e.lexpr, alias), e.rexpr
        if col is None:
            col, val = _colname(e.rexpr, alias), e.lexpr
        if col is None or col in out or not isinstance(val, (ast.ParamRef, ast.A_Const)):
            return None
        out[col] = val
    return out


def _range(rv: Any) -> tuple[str | None, str, str] | None:
    if not isinstance(rv, ast.RangeVar) or rv.catalogname:
        return None
    schema = rv.schemaname
    if schema in ("pg_catalog", "information_schema") or rv.relname.startswith("pg_"):
        return None  # catalog names resolve elsewhere
    return schema, rv.relname, rv.alias.aliasname if rv.alias else rv.relname


def _select_plan(node: Any) -> PointPlan | None:
    if not isinstance(node, ast.SelectStmt) or node.op != enums.SetOperation.SETOP_NONE:
        return None
    if (
        node.distinctClause
        or node.intoClause
        or node.groupClause
        or node.havingClause
        or node.windowClause
        or node.valuesLists
        or node.sortClause
        or node.limitOffset
        or node.limitCount
        or node.lockingClause
        or node.withClause
        or not node.fromClause
        or len(node.fromClause) != 1
        or not node.targetList
    ):
        return None
    r = _range(node.fromClause[0])
    if r is None:
        return None
    keys = _key_terms(node.whereClause, r[2])
    if not keys:
        return None
    plan = PointPlan(node, r[0], r[1], r[2], keys)
    for rt in node.targetList:
        v = rt.val
        if isinstance(v, ast.ColumnRef) and isinstance(v.fields[-1], ast.A_Star):
            if rt.name is not None or not (
                len(v.fields) == 1
                or (len(v.fields) == 2 and getattr(v.fields[0], "sval", None) == r[2])
            ):
                return None
            plan.targets.append(("*", None))
            continue
        col = _colname(v, r[2])
        if col is None:
            return None
        plan.targets.append((rt.name or col, col))
    return plan


def _dml_plan(node: Any) -> PointPlan | None:
    if getattr(node, "withClause", None) is not None or returning(node):
        return None
    if isinstance(node, ast.UpdateStmt) and node.fromClause:
        return None
    if isinstance(node, ast.DeleteStmt) and node.usingClause:
        return None
    r = _range(node.relation)
    if r is None:
        return None
    keys = _key_terms(node.whereClause, r[2])
    if not keys:
        return None
    plan = PointPlan(node, r[0], r[1], r[2], keys)
    if isinstance(node, ast.UpdateStmt):
        for rt in node.targetList:
            if (
                rt.indirection
                or rt.name in dict(plan.sets)
                or isinstance(rt.val, ast.MultiAssignRef)
            ):
                return None
            plan.sets.append((rt.name, rt.val))
    return plan


_INT_WIDTH = {"int2": 2, "int4": 4, "int8": 8}
_INT_RANGE = {
    2: (-(1 << 15), (1 << 15) - 1),
    4: (-(1 << 31), (1 << 31) - 1),
    8: (-(1 << 63), (1 << 63) - 1),
}


def _key_value(t: Table, plan: PointPlan, params: list[Any]) -> tuple[Any, ...] | None:
    """The statement's key, in primary-key order, when its values need no conversion."""
    if set(plan.keys) != set(t.primary_key) or t.partition_key is not None:  # (a partitioned table: no key index)
        return None
    out = []
    for name in t.primary_key:
        col = t.column(name)
        v = _operand(plan.keys[name], params, None, t)
        if v is NOT_SIMPLE or v is None or col is None:
            return None
        val = v[0]
        base = col.type.base.name
        if base in _INT_WIDTH:
            if type(val) is not int:
                return None
        elif base in ("text", "varchar"):
            if not isinstance(val, str):
                return None
            val = str(val)
        else:
            return None
        out.append(val)
    return tuple(out)


def _operand(n: Any, params: list[Any], row: dict[str, Any] | None, t: Table) -> Any:
    """(value, integer width or 0) of a simple expression, None for NULL, or NOT_SIMPLE."""
    if isinstance(n, ast.ParamRef):
        if not 0 < n.number <= len(params):
            return NOT_SIMPLE
        v = params[n.number - 1]
        if v is None:
            return None
        if type(v) is int:
            return v, 2 if -32768 <= v < 32768 else 4 if -(1 << 31) <= v < (1 << 31) else 8
        return v, 0
    if isinstance(n, ast.A_Const):
        v = const_value(n)
        if v is NOT_SIMPLE or v is None:
            return v
        if type(v) is int:
            return v, 4 if -(1 << 31) <= v < (1 << 31) else 8
        return v, 0
    if row is not None and isinstance(n, ast.ColumnRef):
        name = _colname(n, "")
        col = t.column(name) if name is not None else None
        if col is None or col.physical not in row:
            return NOT_SIMPLE
        v = row[col.physical]
        if v is None:
            return None
        return v, _INT_WIDTH.get(col.type.base.name, 0) if type(v) is int else 0
    if (
        row is not None
        and isinstance(n, ast.A_Expr)
        and n.kind == enums.A_Expr_Kind.AEXPR_OP
        and len(n.name) == 1
        and n.name[0].sval in ("+", "-", "*")
        and n.lexpr is not None
    ):
        a = _operand(n.lexpr, params, row, t)
        b = _operand(n.rexpr, params, row, t)
        if a is NOT_SIMPLE or b is NOT_SIMPLE:
            return NOT_SIMPLE
        if a is None or b is None:
            return None
        (x, wx), (y, wy) = a, b
        if type(x) is not int or type(y) is not int or not wx or not wy:
            return NOT_SIMPLE  # integers only: other arithmetic is DuckDB's to define
        op = n.name[0].sval
        v = x + y if op == "+" else x - y if op == "-" else x * y
        w = max(wx, wy)
        lo, hi = _INT_RANGE[w]
        if not lo <= v <= hi:
            return NOT_SIMPLE  # "integer out of range": the DuckDB path says so
        return v, w
    return NOT_SIMPLE


def _row_table(t: Table, rid: int, row: dict[str, Any]) -> pa.Table | None:
    """One row in storage form (``_rid`` plus every column), or None if a value does not
    convert as it is."""
    arrays = [pa.array([rid], pa.int64())]
    try:
        for c in t.columns:
            arrays.append(pa.array([row[c.physical]], c.type.arrow))
    except (pa.ArrowException, TypeError, ValueError, OverflowError, KeyError):
        return None
    return pa.Table.from_arrays(arrays, schema=layout(t).with_rid)


#: Column types a point SELECT returns from the row cache (their storage form is what DuckDB
#: would hand the encoders).
_FAST_READ_TYPES = frozenset(
    {
        "int2",
        "int4",
        "int8",
        "float4",
        "float8",
        "bool",
        "text",
        "varchar",
        "date",
        "timestamp",
        "timestamptz",
        "bytea",
    }
)
