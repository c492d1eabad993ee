"""Identity and generated columns in DML, as PostgreSQL 15's rewriter treats them (``rewriteTargetListIU``):
a GENERATED ALWAYS column takes only DEFAULT unless the INSERT says ``OVERRIDING SYSTEM
VALUE`` (428C9 otherwise, for INSERT and UPDATE alike); ``OVERRIDING USER VALUE`` puts the
default (the sequence's next value) in place of the values given for any identity
column. COPY FROM is not held to it, as in PostgreSQL. A generated column takes DEFAULT only,
whatever OVERRIDING says (428C9)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import pyarrow as pa
from pglast import ast, enums

from decoding.catalog import Table
from decoding.errors import PgError
from walsender_proxy.sql import generated_sql

_OVERRIDE = enums.OverridingKind


def _always(name: str) -> str:
    return f'Column "{name}" is an identity column defined as GENERATED ALWAYS.'


def ignored_on_insert(node: ast.InsertStmt, t: Table, cols: list[str]) -> set[str]:
    """The identity columns whose given values the INSERT ignores (they get their
    default); 428C9 for a value given to a GENERATED ALWAYS column without OVERRIDING
    SYSTEM VALUE."""
    override = node.override
    out: set[str] = set()
    src = node.selectStmt
    values = src.valuesLists if isinstance(src, ast.SelectStmt) and src.valuesLists else None
    for i, name in enumerate(cols):
        col = t.column(name)
        if col is not None and col.generation is not None:
            # (DEFAULT only, whatever OVERRIDING says; the lake computes it)
            if not (values is not None and all(i < len(row) and isinstance(row[i], ast.SetToDefault) for row in values)):
                raise generated_sql.not_assignable(name, update=False)
            out.add(name)
            continue
        if col is None or not col.identity:
            continue
        if override == _OVERRIDE.OVERRIDING_USER_VALUE:
            out.add(name)
        elif col.identity == "a" and override != _OVERRIDE.OVERRIDING_SYSTEM_VALUE:
            all_default = values is not None and all(i < len(row) and isinstance(row[i], ast.SetToDefault) for row in values)
            if not all_default:
                raise PgError(
                    "428C9",
                    f'cannot insert a non-DEFAULT value into column "{name}"',
                    detail=_always(name),
                    hint="Use OVERRIDING SYSTEM VALUE to override.",
                )
    return out


def source_width(node: ast.InsertStmt) -> int | None:
    """How many columns the INSERT's rows give, when the statement says it without running
    (a VALUES list, or a select list without ``*``); None otherwise."""
    src = node.selectStmt
    if not isinstance(src, ast.SelectStmt):
        return None
    if src.valuesLists:
        return len(src.valuesLists[0])
    if src.op != enums.SetOperation.SETOP_NONE or not src.targetList:
        return None
    for target in src.targetList:
        v = target.val
        if isinstance(v, ast.ColumnRef) and isinstance(v.fields[-1], ast.A_Star):
            return None
    return len(src.targetList)


def targeted(node: ast.InsertStmt, cols: list[str]) -> list[str] | None:
    """The columns the INSERT's rows fill (an INSERT without a column list fills the
    first as many as its rows give); None until the rows' width is known."""
    if node.cols:
        return cols
    width = source_width(node)
    return None if width is None else cols[:width]


def check_update(t: Table, targets: Any) -> None:
    """UPDATE (or ON CONFLICT DO UPDATE) SET of a GENERATED ALWAYS column: DEFAULT only."""
    for target in targets or ():
        name = getattr(target, "name", None)
        col = t.column(name) if name else None
        if col is not None and col.identity == "a" and not _is_default(target.val):
            raise PgError("428C9", f'column "{name}" can only be updated to DEFAULT', detail=_always(name))
        if col is not None and col.generation is not None and not _is_default(target.val):
            raise generated_sql.not_assignable(name, update=True)


def _is_default(value: Any) -> bool:
    """``SET c = DEFAULT``, or DEFAULT in its place of ``SET (a, c) = (…, DEFAULT)``."""
    if isinstance(value, ast.MultiAssignRef) and isinstance(value.source, ast.RowExpr):
        args = value.source.args or ()
        return 0 < value.colno <= len(args) and isinstance(args[value.colno - 1], ast.SetToDefault)
    return isinstance(value, ast.SetToDefault)


def affects_insert(node: ast.InsertStmt, t: Table, cols: list[str]) -> bool:
    """The INSERT has identity rules to apply (the fast path leaves it to the full one)."""
    return any((c := t.column(n)) is not None and (c.identity or c.generation is not None) for n in cols) or (
        node.override != _OVERRIDE.OVERRIDING_NOT_SET and any(c.identity for c in t.columns)
    )


def without(data: pa.Table, names: Collection[str]) -> pa.Table:
    """``data`` less the columns whose given values the INSERT ignores."""
    drop = [n for n in names if n in data.column_names]
    return data.drop_columns(drop) if drop else data
