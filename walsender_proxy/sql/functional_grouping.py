"""GROUP BY a table's primary key groups its other columns too, as PostgreSQL's
``check_functional_grouping`` allows: ``SELECT id, title FROM articles GROUP BY id`` is valid
because each group holds one row of ``articles`` (or none, NULL-extended by an outer join).
DuckDB knows no keys, so the columns that follow from a key are added to its GROUP BY; the
groups stay the same, since each is fixed by the key.

Only PostgreSQL's case is taken: a plain GROUP BY (no grouping sets) naming, as plain
column references, every primary key column of a table read at this query level (not a
view, a subquery or a function); positions (``GROUP BY 1``) and output names count when
they stand for such a reference. Anything else leaves DuckDB's own check, which refuses
an ungrouped column as PostgreSQL does (42803).
"""

from __future__ import annotations

from pglast import ast
from pglast.enums import JoinType

from walsender_proxy.sql.nodes import level_nodes
from walsender_proxy.sql.scopes import Scope


def _reference(g: ast.Node, stmt: ast.SelectStmt, inputs: set[str]) -> ast.Node:
    """The expression a GROUP BY item stands for: a position or an output column's name
    (which an input column of the same name shadows, as in PostgreSQL) means its target."""
    targets = stmt.targetList or ()
    if isinstance(g, ast.A_Const) and isinstance(g.val, ast.Integer) and 0 < g.val.ival <= len(targets):
        return targets[g.val.ival - 1].val
    if isinstance(g, ast.ColumnRef) and len(g.fields) == 1 and isinstance(g.fields[0], ast.String):
        name = g.fields[0].sval
        if name not in inputs:
            named = [rt.val for rt in targets if rt.name == name]
            if len(named) == 1:
                return named[0]
    return g


def _using_owner(items: tuple[ast.Node, ...], name: str) -> str | None:
    """The table a bare ``name`` merged by ``JOIN … USING (name)`` is the column of: the
    left one of an inner or left join, the right one of a right join (a full join's is a
    COALESCE, of no table), when that side is a table."""
    for item in items:
        if not isinstance(item, ast.JoinExpr):
            continue
        if any(isinstance(u, ast.String) and u.sval == name for u in item.usingClause or ()):
            side = {JoinType.JOIN_INNER: item.larg, JoinType.JOIN_LEFT: item.larg, JoinType.JOIN_RIGHT: item.rarg}.get(item.jointype)
            if isinstance(side, ast.RangeVar):
                return side.alias.aliasname if side.alias is not None else side.relname
            return None
        found = _using_owner((item.larg, item.rarg), name)
        if found is not None:
            return found
    return None


def dependent_columns(stmt: ast.SelectStmt, scope: Scope) -> tuple[tuple[ast.ColumnRef, ...], tuple[int, ...]]:
    """The column references to add to ``stmt``'s GROUP BY (taken before its target list
    is rewritten), and the tables whose primary key they rest on (a view made of the
    query depends on those keys, as PostgreSQL records in pg_depend)."""
    group = stmt.groupClause
    if not group or stmt.groupDistinct or any(isinstance(g, ast.GroupingSet) for g in group):
        return (), ()
    keyed = {alias: rel for alias, rel in scope.rels.items() if rel.primary_key and rel.columns and not alias.startswith("*")}
    if not keyed:
        return (), ()
    owners: dict[str, list[str]] = {}
    for alias, rel in scope.rels.items():
        for name, _t in rel.columns or ():
            owners.setdefault(name, []).append(alias)
    grouped: set[tuple[str, str]] = set()
    for g in group:
        ref = _reference(g, stmt, set(owners))
        if not isinstance(ref, ast.ColumnRef) or not all(isinstance(f, ast.String) for f in ref.fields):
            continue
        names = [f.sval for f in ref.fields]
        if len(names) == 2:
            grouped.add((names[0], names[1]))
        elif len(names) == 1 and len(owners.get(names[0], ())) == 1:
            grouped.add((owners[names[0]][0], names[0]))
        elif len(names) == 1:
            merged = _using_owner(tuple(stmt.fromClause or ()), names[0])
            if merged is not None:
                grouped.add((merged, names[0]))
    extra: list[ast.ColumnRef] = []
    tables: list[int] = []
    used = _referenced(stmt, owners)
    for alias, rel in keyed.items():
        if all((alias, k) in grouped for k in rel.primary_key):
            others = [name for name, _t in rel.columns or () if (alias, name) not in grouped]
            extra += [ast.ColumnRef(fields=(ast.String(sval=alias), ast.String(sval=name))) for name in others]
            if any((alias, name) in used or (alias, "*") in used for name in others):
                tables.append(rel.key_table)  # (PostgreSQL records the key only where it is needed)
    return tuple(extra), tuple(tables)


def _referenced(stmt: ast.SelectStmt, owners: dict[str, list[str]]) -> set[tuple[str, str]]:
    """The (table, column) pairs the SELECT list, HAVING and ORDER BY read outside
    aggregates (``(table, "*")`` for a whole row), as far as names tell."""
    out: set[tuple[str, str]] = set()
    aliases = {a for names in owners.values() for a in names}
    parts = (stmt.targetList, stmt.havingClause, stmt.sortClause)
    for n in level_nodes(parts, prune=lambda x: isinstance(x, ast.FuncCall) and is_aggregate(x)):
        if not isinstance(n, ast.ColumnRef):
            continue
        names = [f.sval if isinstance(f, ast.String) else "*" for f in n.fields]
        if len(names) >= 2:
            out.add((names[-2], names[-1]))
        elif names == ["*"]:
            out.update((a, "*") for a in aliases)
        else:
            out.update((a, names[0]) for a in owners.get(names[0], ()))
    return out


#: Aggregates whose arguments are not references to grouped columns (PostgreSQL's check
#: looks at the columns outside them); a call with DISTINCT, FILTER, ORDER BY or ``*`` is
#: one anyway.
AGGREGATES = frozenset({
    "count", "sum", "avg", "min", "max", "array_agg", "string_agg", "bool_and", "bool_or",
    "every", "bit_and", "bit_or", "bit_xor", "json_agg", "jsonb_agg", "json_object_agg",
    "jsonb_object_agg", "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop",
    "var_samp", "corr", "covar_pop", "covar_samp", "regr_count", "percentile_cont",
    "percentile_disc", "mode", "xmlagg", "range_agg", "range_intersect_agg", "any_value",
})  # fmt: skip


def is_aggregate(n: ast.FuncCall) -> bool:
    """Whether a call is (as far as its name and form tell) an aggregate, not a window call."""
    name = n.funcname[-1].sval if n.funcname and isinstance(n.funcname[-1], ast.String) else ""
    return n.over is None and bool(n.agg_star or n.agg_distinct or n.agg_filter is not None or n.agg_order or name in AGGREGATES)
