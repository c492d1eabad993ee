"""Column references that leave a subquery in FROM written without LATERAL.

PostgreSQL analyses such a subquery with the FROM items beside it out of sight: a name the
subquery does not define resolves in the enclosing query levels, or is an error (42703 or
42P01, with a hint naming the item it cannot see). DuckDB binds every subquery in FROM as if
it were LATERAL, so the same name would reach the item beside it and answer silently, with
other rows (or, under ``UPDATE … FROM``, change other rows).

The rewriter analyses such a subquery under a *barrier* scope: one that stands for the query
level it is in, holds the items beside it in ``hidden`` and resolves nothing through them.
:func:`outside_reference` judges one column reference that leaves the subquery: PostgreSQL's
error, the outer alias that makes DuckDB bind what PostgreSQL binds, or 0A000 where the
proxy cannot tell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from decoding.errors import PgError


class Rel(Protocol):
    columns: Sequence[tuple[str, Any]] | None
    declared: Mapping[str, Any] | None


class Scope(Protocol):
    parent: Scope | None
    rels: dict[str, Any]
    #: The FROM items beside a non-LATERAL subquery, when this scope is its barrier.
    hidden: dict[str, Any] | None


def _has(rel: Rel, name: str) -> bool | None:
    """Whether a relation has a column of that name (None: its columns are unknown)."""
    if rel.declared is not None:
        return name in rel.declared
    if rel.columns is not None:
        return any(n == name for n, _ in rel.columns)
    return None


def _unsure(name: str) -> PgError:
    return PgError(
        "0A000",
        f'a reference to "{name}" from a subquery in FROM without LATERAL, where an item beside '
        "the subquery could hold it, is not supported by walsender-proxy",
        hint="Qualify the column with its table's alias.",
    )


def outside_reference(names: Sequence[str], scope: Scope) -> str | None:
    """For a column reference (``col`` or ``alias.col``) seen in ``scope``: None when DuckDB
    binds it as PostgreSQL does; an alias of an enclosing query level to qualify a bare name
    with, when DuckDB would bind it to an item PostgreSQL hides; PgError when PostgreSQL
    refuses the reference (or the proxy cannot tell which relation it names)."""
    name = names[-1]
    unknown_inside = False
    s: Scope | None = scope
    while s is not None and s.hidden is None:
        if len(names) > 1:
            if names[-2] in s.rels:
                return None
        else:
            for rel in s.rels.values():
                has = _has(rel, name)
                if has:
                    return None
                unknown_inside = unknown_inside or has is None
        s = s.parent
    if s is None:
        return None
    barrier, hidden = s, s.hidden
    assert hidden is not None
    if len(names) > 1:
        alias = names[-2]
        if alias not in hidden:
            return outside_reference(names, barrier.parent) if barrier.parent is not None else None
        if _alias_outside(alias, barrier.parent):
            raise _unsure(".".join(names))
        raise PgError(
            "42P01",
            f'invalid reference to FROM-clause entry for table "{alias}"',
            hint=f'There is an entry for table "{alias}", but it cannot be referenced from this part of the query.',
        )
    seen = {alias: _has(rel, name) for alias, rel in hidden.items()}
    holders = [alias for alias, has in seen.items() if has is not False]
    if not holders:
        return outside_reference(names, barrier.parent) if barrier.parent is not None else None
    if unknown_inside or any(seen[a] is None for a in holders):
        raise _unsure(name)
    outer = _outer_holder(name, barrier.parent)
    if outer is None:
        raise PgError(
            "42703",
            f'column "{name}" does not exist',
            hint=f'There is a column named "{name}" in table "{holders[0]}", but it cannot be referenced from this part of the query.',
        )
    if outer in hidden:
        raise _unsure(name)
    return outer


def _alias_outside(alias: str, scope: Scope | None) -> bool:
    while scope is not None:
        if alias in scope.rels or (scope.hidden is not None and alias in scope.hidden):
            return True
        scope = scope.parent
    return False


def _outer_holder(name: str, scope: Scope | None) -> str | None:
    """The alias an enclosing query level resolves a bare name to (PostgreSQL's nearest
    level first); PgError where that level's columns are not all known."""
    while scope is not None:
        if scope.hidden is not None and any(_has(rel, name) is not False for rel in scope.hidden.values()):
            raise _unsure(name)  # (DuckDB would bind the item that level hides)
        found = [alias for alias, rel in scope.rels.items() if _has(rel, name) is not False]
        if found:
            if len(found) > 1 or _has(scope.rels[found[0]], name) is None:
                raise _unsure(name)
            return found[0]
        scope = scope.parent
    return None
