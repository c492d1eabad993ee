"""``PARTITION BY`` / ``PARTITION OF`` read from pglast's tree for the lake
(:mod:`walsender_proxy.lake.partition_ddl` checks and keeps them), and what the proxy
refuses of them: a key expression, an operator class or collation, column definitions in
``PARTITION OF``, bound values other than constants (each 0A000 naming the form)."""

from __future__ import annotations

from typing import Any

from pglast import ast, enums

from decoding.errors import PgError
from walsender_proxy.lake import Transaction
from walsender_proxy.lake.partition_ddl import BoundSpec, BoundValue, KeyExpr
from walsender_proxy.sql.ddl_names import qualified, unsupported

_STRATEGY = {"r": "range", "l": "list", "h": "hash"}


def strategy_name(spec: ast.PartitionSpec) -> str:
    s = spec.strategy
    return _STRATEGY[getattr(s, "value", s)]


def partition_by(spec: ast.PartitionSpec) -> tuple[str, list[tuple[str, int] | KeyExpr]]:
    """``PARTITION BY strategy (columns or expressions)`` as the lake takes it."""
    cols: list[tuple[str, int] | KeyExpr] = []
    for el in spec.partParams or ():
        if el.collation or el.opclass:
            raise unsupported("COLLATE or an operator class in a partition key")
        loc = el.location if el.location is not None else -1
        cols.append(_key_expr(el.expr, loc) if el.expr is not None else (el.name, loc))
    return strategy_name(spec), cols


def _column(node: Any) -> str | None:
    if isinstance(node, ast.ColumnRef) and len(node.fields) == 1 and isinstance(node.fields[0], ast.String):
        return node.fields[0].sval
    return None


def _key_expr(e: Any, loc: int) -> KeyExpr:
    """``(column op integer)`` or ``abs/lower/upper(column)``; any other key expression is
    refused (its value would have to be computed as PostgreSQL computes it)."""
    if isinstance(e, ast.A_Expr) and e.kind == enums.A_Expr_Kind.AEXPR_OP and len(e.name) == 1:
        op, col = e.name[0].sval, _column(e.lexpr)
        const = e.rexpr.val if isinstance(e.rexpr, ast.A_Const) and not e.rexpr.isnull else None
        if op in ("+", "-", "*") and col is not None and isinstance(const, ast.Integer):
            return KeyExpr(op, col, const.ival, loc)
    if isinstance(e, ast.FuncCall) and len(e.args or ()) == 1 and not (e.agg_star or e.agg_distinct or e.over or e.agg_order):
        fname = [n.sval for n in e.funcname]
        col = _column(e.args[0])
        if fname[-1] in ("abs", "lower", "upper") and fname[:-1] in ([], ["pg_catalog"]) and col is not None:
            return KeyExpr(fname[-1], col, 0, loc)
    raise unsupported("a partition key expression other than (column + - * integer), abs(), lower() or upper() of a column")


def _value(node: Any) -> BoundValue:
    loc = getattr(node, "location", -1)
    loc = -1 if loc is None else loc
    if isinstance(node, ast.ColumnRef) and len(node.fields) == 1 and isinstance(node.fields[0], ast.String):
        word = node.fields[0].sval.lower()
        if word in ("minvalue", "maxvalue"):
            return BoundValue(word[:3], location=loc)
        raise PgError("42P16", "cannot use column reference in partition bound expression")
    if isinstance(node, ast.A_Const):
        if node.isnull:
            return BoundValue("n", location=loc)
        v = node.val
        if isinstance(v, ast.Integer):
            return BoundValue("i", str(v.ival), loc)
        if isinstance(v, ast.Float):
            return BoundValue("f", v.fval, loc)
        if isinstance(v, ast.String):
            return BoundValue("s", v.sval, loc)
        if isinstance(v, ast.Boolean):
            return BoundValue("s", "true" if v.boolval else "false", loc)
    raise unsupported("a partition bound value other than a constant")


def bound_spec(b: ast.PartitionBoundSpec) -> BoundSpec:
    loc = b.location if b.location is not None else -1
    if b.is_default:
        return BoundSpec("d", location=loc)
    kind = b.strategy
    if kind == "h":
        return BoundSpec("h", modulus=b.modulus, remainder=b.remainder, location=loc)
    if kind == "l":
        return BoundSpec("l", values=tuple(_value(v) for v in b.listdatums or ()), location=loc)
    return BoundSpec(
        "r", lower=tuple(_value(v) for v in b.lowerdatums or ()), upper=tuple(_value(v) for v in b.upperdatums or ()), location=loc
    )


def create_partition(tx: Transaction, s: ast.CreateStmt, name: str) -> str:
    """``CREATE TABLE name PARTITION OF parent [PARTITION BY …] FOR VALUES …``."""
    if len(s.inhRelations) != 1:
        raise unsupported("PARTITION OF more than one table")
    if s.tableElts:
        raise unsupported("column definitions or constraints in PARTITION OF")
    if s.options:
        raise unsupported("WITH options of a partition")
    parent = tx.table(qualified(s.inhRelations[0]))
    if parent.partition_key is None:
        raise PgError("42P17", f'"{parent.name}" is not partitioned')
    tx.create_partition(name, parent.qualified_name, bound_spec(s.partbound), partition_by=partition_by(s.partspec) if s.partspec else None)
    return "CREATE TABLE"


def attach_or_detach(tx: Transaction, parent: str, cmd: ast.AlterTableCmd) -> str:
    """``ALTER TABLE parent ATTACH PARTITION t FOR VALUES …`` / ``DETACH PARTITION t``."""
    pc: ast.PartitionCmd = cmd.def_
    name = qualified(pc.name)
    if cmd.subtype == enums.AlterTableType.AT_DetachPartition:
        if pc.concurrent:
            raise unsupported("DETACH PARTITION … CONCURRENTLY")
        tx.detach_partition(parent, name)
    elif cmd.subtype == enums.AlterTableType.AT_DetachPartitionFinalize:
        raise unsupported("DETACH PARTITION … FINALIZE")
    else:
        tx.attach_partition(parent, name, bound_spec(pc.bound))
    return "ALTER TABLE"
