"""``SELECT *`` over joins with USING or NATURAL, in PostgreSQL's column order.

PostgreSQL expands ``*`` over ``a JOIN b USING (k)`` as the merged USING columns first (in
the USING list's order; NATURAL: the common names in the left input's order), then the left
input's other columns, then the right input's. DuckDB keeps the left input's order, the
merged column where the left had it, so a client reading columns by position got other
values. The rewriter writes ``*`` out as PostgreSQL's list: a merged column is the left
input's (INNER, LEFT), the right's (RIGHT) or COALESCE of both (FULL), as PostgreSQL's
join alias variables are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pglast import ast
from pglast.enums import JoinType

from decoding.errors import PgError


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a FROM item as ``*`` lists it: the expression that reads it, its
    name and its type (the rewriter's T, None when unknown)."""

    node: ast.Node
    name: str
    type: Any


def has_using(items: Sequence[ast.Node] | None) -> bool:
    """Whether a FROM list holds a join with USING or NATURAL (at any depth of its joins)."""

    def walk(item: ast.Node) -> bool:
        if isinstance(item, ast.JoinExpr):
            return bool(item.usingClause or item.isNatural) or walk(item.larg) or walk(item.rarg)
        return False

    return any(walk(i) for i in items or ())


def _unsupported(what: str) -> PgError:
    return PgError("0A000", f"SELECT * over {what} is not supported by walsender-proxy")


def columns(
    items: Sequence[ast.Node], leaf: Callable[[ast.Node], list[Column] | None]
) -> list[Column]:
    """The columns ``*`` stands for over a FROM list (rewritten items), PostgreSQL's order.
    ``leaf`` gives a table's, subquery's or function's columns (None: not known)."""
    out: list[Column] = []
    for item in items:
        out.extend(_item(item, leaf))
    return out


def _item(item: ast.Node, leaf: Callable[[ast.Node], list[Column] | None]) -> list[Column]:
    if not isinstance(item, ast.JoinExpr):
        found = leaf(item)
        if found is None:
            raise _unsupported("a join with USING where a joined item's columns are not known")
        return found
    if item.alias is not None and has_using([item]):  # (its alias hides the items it joins)
        raise _unsupported("an aliased join with USING")
    left, right = _item(item.larg, leaf), _item(item.rarg, leaf)
    if not (item.usingClause or item.isNatural):
        return left + right
    lnames, rnames = [c.name for c in left], [c.name for c in right]
    if item.isNatural:
        using = [n for n in dict.fromkeys(lnames) if n in rnames]
    else:
        using = [s.sval for s in item.usingClause]
    merged = []
    for name in using:
        for side, names in (("left", lnames), ("right", rnames)):
            if names.count(name) == 0:
                raise PgError("42703", f'column "{name}" specified in USING clause does not exist in {side} table')
            if names.count(name) > 1:
                raise PgError("42702", f'common column name "{name}" appears more than once in {side} table')
        lc, rc = left[lnames.index(name)], right[rnames.index(name)]
        if lc.type != rc.type or lc.type is None:
            # (PostgreSQL's merged column takes both sides' common type)
            raise _unsupported(f'a join USING "{name}" of columns of different or unknown types')
        if item.jointype == JoinType.JOIN_FULL:
            node: ast.Node = ast.CoalesceExpr(args=(lc.node, rc.node))
        elif item.jointype == JoinType.JOIN_RIGHT:
            node = rc.node
        else:
            node = lc.node
        merged.append(Column(node, name, lc.type))
    return merged + [c for c in left if c.name not in using] + [c for c in right if c.name not in using]
