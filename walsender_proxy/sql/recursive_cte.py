"""PostgreSQL's rules for the form of a recursive CTE (``checkWellFormedRecursion`` in
``parse_cte.c``), checked before DuckDB sees the query: DuckDB runs forms PostgreSQL
refuses (a self-reference twice, under an outer join or EXCEPT) and answers with rows.

A CTE of ``WITH RECURSIVE`` is recursive when its query names itself. It must then be
``non-recursive term UNION [ALL] recursive term``, name itself exactly once, in the
recursive term, outside subqueries in expressions, outside the nullable side of an outer
join and outside EXCEPT (and INTERSECT ALL); it takes no ORDER BY, LIMIT, OFFSET or
FOR UPDATE.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pglast import ast
from pglast.enums import JoinType, SetOperation

#: Where a self-reference is, as PostgreSQL's RecursionContext, with the words of its error.
_OK, _NONRECURSIVE, _SUBLINK, _OUTERJOIN, _INTERSECT, _EXCEPT = (
    None,
    "within its non-recursive term",
    "within a subquery",
    "within an outer join",
    "within INTERSECT",
    "within EXCEPT",
)


@dataclass(frozen=True)
class Violation:
    sqlstate: str
    message: str
    node: Any


class _Found(Exception):
    def __init__(self, violation: Violation) -> None:
        self.violation = violation


def _shadows(stmt: ast.SelectStmt, name: str) -> bool:
    """Whether a query's own WITH defines ``name`` (its body then reads that one)."""
    return stmt.withClause is not None and any(c.ctename == name for c in stmt.withClause.ctes or ())


def _names_self(node: Any, name: str) -> bool:
    if isinstance(node, tuple | list):
        return any(_names_self(n, name) for n in node)
    if not isinstance(node, ast.Node):
        return False
    if isinstance(node, ast.RangeVar):
        return node.schemaname is None and node.relname == name
    if isinstance(node, ast.SelectStmt) and _shadows(node, name):
        return _names_self(node.withClause, name)
    return any(_names_self(getattr(node, a, None), name) for a in type(node).__slots__)


def is_recursive(cte: ast.CommonTableExpr) -> bool:
    """Whether a CTE of ``WITH RECURSIVE`` names itself (and has the form checked above)."""
    query = cte.ctequery
    return isinstance(query, ast.SelectStmt) and query.op == SetOperation.SETOP_UNION and _names_self(query, cte.ctename)


def check(cte: ast.CommonTableExpr) -> Violation | None:
    """The first rule a CTE of ``WITH RECURSIVE`` breaks, or None."""
    name, query = cte.ctename, cte.ctequery
    if not isinstance(query, ast.SelectStmt) or not _names_self(query, name):
        return None
    if query.op != SetOperation.SETOP_UNION:
        return Violation(
            "42P19",
            f'recursive query "{name}" does not have the form non-recursive-term UNION [ALL] recursive-term',
            cte,
        )
    for clause, words in (
        (query.sortClause, "ORDER BY"),
        (query.limitOffset, "OFFSET"),
        (query.limitCount, "LIMIT"),
        (query.lockingClause, "FOR UPDATE/SHARE"),
    ):
        if clause:
            return Violation("0A000", f"{words} in a recursive query is not implemented", clause)
    walker = _Walker(name)
    try:
        walker.walk(query.larg, _NONRECURSIVE)
        walker.walk(query.rarg, _OK)
    except _Found as f:
        return f.violation
    return None


class _Walker:
    def __init__(self, name: str) -> None:
        self.name = name
        self.refs = 0

    def walk(self, node: Any, context: str | None) -> None:
        if isinstance(node, tuple | list):
            for n in node:
                self.walk(n, context)
            return
        if not isinstance(node, ast.Node):
            return
        if isinstance(node, ast.RangeVar):
            self._reference(node, context)
        elif isinstance(node, ast.SelectStmt):
            self._select(node, context)
        elif isinstance(node, ast.JoinExpr):
            left = right = context
            if node.jointype in (JoinType.JOIN_LEFT, JoinType.JOIN_FULL):
                right = _OUTERJOIN
            if node.jointype in (JoinType.JOIN_RIGHT, JoinType.JOIN_FULL):
                left = _OUTERJOIN
            self.walk(node.larg, left)
            self.walk(node.rarg, right)
            self.walk(node.quals, context)
        elif isinstance(node, ast.SubLink):
            self.walk(node.testexpr, context)
            self.walk(node.subselect, _SUBLINK)
        else:
            for attr in type(node).__slots__:
                self.walk(getattr(node, attr, None), context)

    def _select(self, stmt: ast.SelectStmt, context: str | None) -> None:
        if _shadows(stmt, self.name):  # (an inner CTE of the same name hides this one)
            self.walk(stmt.withClause, context)
            return
        if stmt.op == SetOperation.SETOP_NONE:
            for attr in type(stmt).__slots__:
                self.walk(getattr(stmt, attr, None), context)
            return
        self.walk(stmt.withClause, context)
        if stmt.op == SetOperation.SETOP_UNION:
            self.walk((stmt.larg, stmt.rarg), context)
        elif stmt.op == SetOperation.SETOP_INTERSECT:
            inner = _INTERSECT if stmt.all else context
            self.walk((stmt.larg, stmt.rarg), inner)
        else:
            self.walk(stmt.larg, _EXCEPT if stmt.all else context)
            self.walk(stmt.rarg, _EXCEPT)
        self.walk((stmt.sortClause, stmt.limitOffset, stmt.limitCount), context)

    def _reference(self, rv: ast.RangeVar, context: str | None) -> None:
        if rv.schemaname is not None or rv.relname != self.name:
            return
        if context is not None:
            raise _Found(
                Violation("42P19", f'recursive reference to query "{self.name}" must not appear {context}', rv)
            )
        self.refs += 1
        if self.refs > 1:
            raise _Found(
                Violation("42P19", f'recursive reference to query "{self.name}" must not appear more than once', rv)
            )
