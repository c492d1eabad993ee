"""The merged column of ``JOIN … USING (c)`` whose two sides have different types.

PostgreSQL's parser (``transformJoinUsingClause``, ``buildMergedJoinVar``) makes the
merged ``c`` of an inner or left join the left side's column itself when both sides have
one type, and a *new* expression — the left column coerced to the common type — when they
differ. ``GROUP BY c`` then groups by that expression, and a qualified ``l.c`` in the
SELECT list is not grouped: 42803. DuckDB takes ``c`` as ``l.c`` in every case and answers.
This module finds those columns (from the join's member relations, as the rewriter typed
them) and the qualified references that PostgreSQL would refuse; the rewriter holds the
scopes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pglast import ast
from pglast.enums import JoinType

from walsender_proxy.sql.agg_levels import is_aggregate_or_window
from walsender_proxy.sql.common_type import Mismatch, NoConversion, select_common
from walsender_proxy.sql.nodes import level_nodes

#: Join types whose merged column is the left side's (when no coercion is needed).
_LEFT_MERGED = (JoinType.JOIN_INNER, JoinType.JOIN_LEFT)


@dataclass(frozen=True)
class Merged:
    """A USING column whose sides' types differ, as PostgreSQL merges it: ``common`` is
    its type; ``left``/``right`` the aliases of the members holding it on each side (None
    where not exactly one); ``coerced``: PostgreSQL's merged column is a new expression
    (not one side's column itself), so it groups apart from both sides' columns."""

    common: str
    jointype: JoinType
    left: str | None
    right: str | None
    coerced: bool


#: Types whose merged column the rewriter types and casts as PostgreSQL does (the integer
#: and float family, and text beside varchar): DuckDB holds the others differently.
_CASTABLE = frozenset({"int2", "int4", "int8", "float4", "float8", "text", "varchar"})


def merged(
    join: ast.JoinExpr, left: Mapping[str, Sequence[tuple[str, str | None, int]]], right: Mapping[str, Sequence[tuple[str, str | None, int]]]
) -> dict[str, Merged]:
    """The USING columns of ``join`` whose sides' types differ, merged as PostgreSQL's
    ``buildMergedJoinVar`` does: the common type (``select_common_type``); an inner or left
    join's merged column is the left one (coerced if it is not of that type), a right
    join's the right one, a full join's the COALESCE of both. ``left``/``right``: each side's
    members (alias → (column, type name)) as the rewriter knows them. Only types the
    rewriter can cast as PostgreSQL does are judged: the others are left as they were."""
    out: dict[str, Merged] = {}
    for n in join.usingClause or ():
        name = n.sval
        lt, rt = _side_type(left, name), _side_type(right, name)
        if lt is None or rt is None or lt == rt or lt[0] not in _CASTABLE or rt[0] not in _CASTABLE:
            continue
        try:
            common = select_common([lt[0], rt[0]])
        except (Mismatch, NoConversion):
            continue  # (PostgreSQL's error comes from the join's comparison)
        if common is None:
            continue
        typmod = lt[1] if lt[1] == rt[1] else -1  # (select_common_typmod)
        kept = lt if join.jointype in _LEFT_MERGED else rt if join.jointype == JoinType.JOIN_RIGHT else None
        out[name] = Merged(common, join.jointype, _holder(left, name), _holder(right, name), kept != (common, typmod))
    return out


def _holder(members: Mapping[str, Sequence[tuple[str, str | None, int]]], name: str) -> str | None:
    holders = [a for a, cols in members.items() if any(c == name for c, _, _ in cols)]
    return holders[0] if len(holders) == 1 and not holders[0].startswith("*") else None


def _side_type(members: Mapping[str, Sequence[tuple[str, str | None, int]]], name: str) -> tuple[str, int] | None:
    for cols in members.values():
        for c, t, typmod in cols:
            if c == name:
                return (t, typmod) if t is not None else None
    return None


def ungrouped_reference(stmt: ast.SelectStmt, columns: Mapping[str, Merged]) -> ast.ColumnRef | None:
    """The first qualified reference (``l.c``) of the SELECT list, HAVING or ORDER BY,
    outside aggregates, to a member's column ``c`` that the statement groups only by the
    merged, coerced ``c``; None when there is none."""
    grouped_bare = set()
    grouped_qualified = set()
    for g in stmt.groupClause or ():
        names = _names(g)
        if names is None:
            continue
        if len(names) == 1:
            grouped_bare.add(names[0])
        else:
            grouped_qualified.add(tuple(names[-2:]))
    watched = {n: {m.left, m.right} for n, m in columns.items() if m.coerced and n in grouped_bare}
    if not watched:
        return None
    places: list[Any] = [rt.val for rt in stmt.targetList or ()]
    places.append(stmt.havingClause)
    places += [s.node for s in stmt.sortClause or ()]
    for place in places:
        for ref in _refs_outside_aggregates(place):
            names = _names(ref)
            if names is None or len(names) < 2:
                continue
            alias, col = names[-2], names[-1]
            if col in watched and alias in watched[col] and (alias, col) not in grouped_qualified:
                return ref
    return None


def _names(node: Any) -> list[str] | None:
    if not isinstance(node, ast.ColumnRef):
        return None
    fields = [f.sval for f in node.fields if isinstance(f, ast.String)]
    return fields if len(fields) == len(node.fields) else None


def _refs_outside_aggregates(node: Any) -> Iterator[ast.ColumnRef]:
    """Column references of ``node`` at its own query level, not inside an aggregate's
    arguments or a window function's (subqueries are not entered)."""
    for n in level_nodes(node, is_aggregate_or_window):
        if isinstance(n, ast.ColumnRef):
            yield n
