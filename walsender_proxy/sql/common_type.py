"""PostgreSQL's ``select_common_type`` (parse_coerce.c): the one type the branches of CASE,
COALESCE, GREATEST/LEAST, ARRAY[…], VALUES and the arms of a set operation resolve to, and
the 42804 PostgreSQL raises when their type categories differ.

PostgreSQL walks the branches in order (CASE puts its ELSE first) and moves to a branch's
type only when the current one casts to it implicitly and not back, and the current one is
not its category's preferred type. Known here are the types of ``coercion_data`` (pg_type's
categories, pg_cast's implicit casts) and arrays of them; a branch of any other type leaves
the decision to the caller (``None``), so the answer is PostgreSQL's or no answer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from decoding.pgtypes import ENUM
from walsender_proxy.backend.coercion_data import CASTS, CATEGORIES

#: pg_type.typispreferred among the types known here.
PREFERRED = frozenset({"bool", "text", "float8", "timestamptz", "interval"})


@dataclass(frozen=True, slots=True)
class Mismatch(Exception):
    """Two branches whose categories differ: ``first`` is the type resolved so far,
    ``second`` the branch at ``index`` (PostgreSQL's error points there)."""

    first: str
    second: str
    index: int


@dataclass(frozen=True, slots=True)
class NoConversion(Exception):
    """A branch of type ``source`` (at ``index``) with no implicit cast to the common type
    ``target`` (coerce_to_common_type's 42846)."""

    source: str
    target: str
    index: int


def _element(name: str) -> str:
    return name[1:] if name.startswith("_") else name


def category(name: str) -> str | None:
    """pg_type.typcategory ('A' for an array of a known type), None if not known here. A
    user enum (``anyenum`` here) is 'E', with no implicit cast to or from any other type."""
    if name.startswith("_"):
        return "A" if name[1:] in CATEGORIES or name[1:] == ENUM else None
    return "E" if name == ENUM else CATEGORIES.get(name)


def implicit(source: str, target: str) -> bool:
    """Whether ``source`` casts to ``target`` implicitly (can_coerce_type, COERCION_IMPLICIT);
    arrays cast as their elements do (array_coerce)."""
    if source == target:
        return True
    if source.startswith("_") != target.startswith("_"):
        return False
    s, t = _element(source), _element(target)
    return s == t or CASTS.get((s, t), ("",))[0] == "i"


def select_common(names: Sequence[str | None]) -> str | None:
    """The common type of branches typed ``names`` ('unknown' for an untyped literal or
    NULL), in PostgreSQL's order. None when a branch's type is not known here; all-unknown
    branches resolve to text. Raises :class:`Mismatch` when two categories differ and
    :class:`NoConversion` when a branch cannot be cast to the type chosen."""
    if any(n is None or (n != "unknown" and category(n) is None) for n in names):
        return None
    current: str | None = None
    preferred = False
    for i, n in enumerate(names):
        assert n is not None
        if n == "unknown" or n == current:
            continue
        if current is None:
            current, preferred = n, n in PREFERRED
            continue
        if category(n) != category(current):
            raise Mismatch(current, n, i)
        if not preferred and implicit(current, n) and not implicit(n, current):
            current, preferred = n, n in PREFERRED
    if current is None:
        return "text"
    for i, n in enumerate(names):
        if n != "unknown" and not implicit(n, current):  # type: ignore[arg-type]
            raise NoConversion(n, current, i)  # type: ignore[arg-type]
    return current
