"""Writes prepared under one DateStyle and run under another.

PostgreSQL reads the date and timestamp literals of a statement when it parses it (the
Parse message): ``INSERT INTO t (d) VALUES ('01/02/03')`` parsed under MDY stores
2003-01-02 even if the session says ``SET DateStyle = DMY`` before Execute, while the
text bound to its parameters is read at Bind, in the DateStyle of then. The rewriter
keeps the two apart for queries (:func:`walsender_proxy.sql.literals.date_order`); the
engine's INSERT, UPDATE and DELETE read literals and bound text with one order (their
point paths and the columns they coerce), so such a write is refused rather than stored with its literals read in the wrong order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pglast import ast

from decoding.errors import PgError

#: Column types whose text input follows DateStyle's field order.
_ORDERED = frozenset({"date", "timestamp", "timestamptz"})


def _has_string_constant(node: Any) -> bool:
    """Whether a quoted literal occurs anywhere in ``node``."""
    if isinstance(node, ast.A_Const):
        return not node.isnull and isinstance(node.val, ast.String)
    if isinstance(node, (list, tuple)):
        return any(_has_string_constant(n) for n in node)
    if isinstance(node, ast.Node):
        return any(_has_string_constant(getattr(node, slot)) for slot in type(node).__slots__)
    return False


def check_write(node: ast.Node, params: Any, column_types: Iterable[Any]) -> None:
    """Refuse (0A000) an INSERT, UPDATE or DELETE whose literals were parsed under another
    DateStyle order than the session's now, when it writes a date or timestamp column
    and has a quoted literal: ``column_types`` are the lake types of the table's columns,
    ``params`` Bind's values (which carry the statement's order, see ``BoundParams``)."""
    if getattr(params, "literal_date_order", None) is None:  # (set only when the two differ)
        return
    if not any(getattr(getattr(t, "base", None), "name", None) in _ORDERED for t in column_types):
        return
    if _has_string_constant(node):
        raise PgError(
            "0A000",
            "a prepared INSERT, UPDATE or DELETE with date or timestamp literals, executed under another DateStyle "
            "than it was prepared under, is not supported by walsender-proxy",
            hint="Prepare the statement again, or bind the values as parameters.",
        )
