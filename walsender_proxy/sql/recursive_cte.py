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


def _output_names(stmt: Any) -> list[str] | None:
    """A plain SELECT's column names where each is written (``a``, ``t.a``, ``x AS a``)."""
    if not isinstance(stmt, ast.SelectStmt) or stmt.op != SetOperation.SETOP_NONE or stmt.valuesLists:
        return None
    names = []
    for rt in stmt.targetList or ():
        if rt.name:
            names.append(rt.name)
        elif isinstance(rt.val, ast.ColumnRef) and isinstance(rt.val.fields[-1], ast.String):
            names.append(rt.val.fields[-1].sval)
        else:
            return None
    return names


def search_cycle_violation(cte: ast.CommonTableExpr) -> Violation | None:
    """analyzeCTE's checks of a SEARCH or CYCLE clause (the WITH query's column names are
    its own list, else those of its non-recursive term, when they can be read off it)."""
    search, cycle = cte.search_clause, cte.cycle_clause
    if search is None and cycle is None:
        return None
    if not is_recursive(cte):
        return Violation("42601", "WITH query is not recursive", cte)
    query = cte.ctequery
    if isinstance(query, ast.SelectStmt) and query.op != SetOperation.SETOP_NONE:
        if query.larg.op != SetOperation.SETOP_NONE:
            return Violation("0A000", "with a SEARCH or CYCLE clause, the left side of the UNION must be a SELECT", None)
        if query.rarg.op != SetOperation.SETOP_NONE:
            return Violation("42601", "with a SEARCH or CYCLE clause, the right side of the UNION must be a SELECT", None)
    given = [c.sval for c in cte.aliascolnames or ()]
    columns = given or (_output_names(query.larg) if isinstance(query, ast.SelectStmt) and query.op != SetOperation.SETOP_NONE else None)
    if columns is None:
        return None
    for clause, kind, cols in ((search, "search", search and search.search_col_list), (cycle, "cycle", cycle and cycle.cycle_col_list)):
        if clause is None:
            continue
        seen: set[str] = set()
        for c in cols or ():
            if c.sval not in columns:
                return Violation("42601", f'{kind} column "{c.sval}" not in WITH query column list', clause)
            if c.sval in seen:
                return Violation("42701", f'{kind} column "{c.sval}" specified more than once', clause)
            seen.add(c.sval)
        if kind == "search" and search.search_seq_column in columns:
            return Violation("42601", f'search sequence column name "{search.search_seq_column}" already used in WITH query column list', clause)
        if kind == "cycle":
            for what, name in (("cycle mark", cycle.cycle_mark_column), ("cycle path", cycle.cycle_path_column)):
                if name in columns:
                    return Violation("42601", f'{what} column name "{name}" already used in WITH query column list', clause)
            if cycle.cycle_mark_column == cycle.cycle_path_column:
                return Violation("42601", "cycle mark column name and cycle path column name are the same", clause)
    if search is not None and cycle is not None:
        if search.search_seq_column == cycle.cycle_mark_column:
            return Violation("42601", "search sequence column name and cycle mark column name are the same", search)
        if search.search_seq_column == cycle.cycle_path_column:
            return Violation("42601", "search sequence column name and cycle path column name are the same", search)
    return None
