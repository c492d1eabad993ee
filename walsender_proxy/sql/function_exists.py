"""Whether PostgreSQL 15 has a pg_catalog function a call can mean, judged by its arguments'
types: ``length(ARRAY[1])``, ``to_hex(1.5)`` and ``md5('{}'::jsonb)`` are PostgreSQL's 42883
even where DuckDB has a function that would take them after a cast of its own.

The signatures are pg_proc's (``coercion_data.FUNCTIONS``). A call passes when one overload
takes its arguments: the same type, an implicit cast (pg_cast: ``common_type.implicit``
among the lake's types, ``IMPLICIT_OUT`` to others such as oid and regclass), an untyped
literal, or a polymorphic parameter of the right shape; defaults and VARIADIC as pg_proc
declares them. Only what can be vouched for is refused: an argument of a type outside
``coercion_data.CATEGORIES`` (or an array of one), or a name pg_catalog lacks, leaves the
call to the translation. Which overload PostgreSQL
would pick, and polymorphic consistency, are not decided here."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from walsender_proxy.backend.coercion_data import FUNCTIONS, IMPLICIT_OUT, TYPE_FUNCTIONS
from walsender_proxy.sql import common_type

_ANY = frozenset({"any", "anyelement", "anycompatible"})
_NONARRAY = frozenset({"anynonarray", "anycompatiblenonarray"})
_ARRAY = frozenset({"anyarray", "anycompatiblearray"})


def judged(type_name: str | None) -> bool:
    """Whether an argument's type is one this module can judge (or an untyped literal)."""
    return type_name is not None and (type_name == "unknown" or common_type.category(type_name.lstrip("_")) is not None)


def _accepts(param: str, arg: str) -> bool:
    if arg == "unknown" or param == arg or param in _ANY:
        return True
    is_array = arg.startswith("_")
    if param in _NONARRAY:
        return not is_array
    if param in _ARRAY:
        return is_array
    if common_type.category(param) is not None:
        return common_type.implicit(arg, param)
    return (arg, param) in IMPLICIT_OUT  # (int4 to oid or regclass, text to regclass…)


def exists(name: str, args: Sequence[str]) -> bool | None:
    """Whether some overload of pg_catalog's ``name`` takes arguments of types ``args``
    (type names, multidimensional arrays as one ``_elem``); None when pg_catalog has no
    function of that name."""
    overloads = FUNCTIONS.get(name)
    if overloads is None or (len(args) == 1 and name in TYPE_FUNCTIONS):
        return None  # (float8('1.5') is a cast when no overload matches exactly: func_get_detail)
    for params, variadic, defaults in overloads:
        if variadic is not None:
            fixed, elem = params[:-1], variadic
            if len(args) < len(params) - (1 if defaults else 0):  # (a defaulted VARIADIC may be left out)
                continue
            rest = args[len(fixed):]
            if all(map(_accepts, fixed, args)) and all(_accepts(elem, a) for a in rest):
                return True
        elif len(params) - defaults <= len(args) <= len(params) and all(map(_accepts, params, args)):
            return True
    return False


_POLYMORPHIC = (_ANY | _NONARRAY | _ARRAY) - {"any"}


def polymorphic_unknown(name: str, args: Sequence[str]) -> bool:
    """Whether the one function of that name is polymorphic and every argument at its
    polymorphic parameters is an untyped literal: PostgreSQL's 42804 ``could not determine
    polymorphic type because input has type unknown`` (``cardinality('a')``)."""
    overloads = FUNCTIONS.get(name)
    if overloads is None or len(overloads) != 1:
        return False
    params, variadic, _ = overloads[0]
    if variadic is not None:
        return False
    at = [a for p, a in zip(params, args, strict=False) if p in _POLYMORPHIC]
    return bool(at) and all(a == "unknown" for a in at)


def _candidates(name: str, args: Sequence[str]) -> list[tuple[str, ...]]:
    """The overloads of ``name`` that take ``args``, each as its parameter types expanded
    to one per argument (VARIADIC's element repeated, defaults cut off)."""
    out = []
    for params, variadic, defaults in FUNCTIONS.get(name, ()):
        if variadic is not None:
            if len(args) < len(params) - (1 if defaults else 0):
                continue
            expanded = (*params[:-1], *[variadic] * (len(args) - len(params) + 1))
        elif len(params) - defaults <= len(args) <= len(params):
            expanded = params[: len(args)]
        else:
            continue
        if all(map(_accepts, expanded, args)):
            out.append(expanded)
    return out


def _keep_most(cands: list[tuple[str, ...]], score: Callable[[tuple[str, ...]], int]) -> list[tuple[str, ...]]:
    best = max(map(score, cands))
    return [c for c in cands if score(c) == best]


def ambiguous(name: str, args: Sequence[str]) -> bool:
    """Whether PostgreSQL's func_select_candidate leaves more than one overload for these
    argument types (its 42725 ``function … is not unique``): exact matches first, then
    preferred types where a cast is needed, then the categories of untyped literals.
    False whenever a surviving overload has a parameter type this module cannot place in
    a category (the choice is then left undecided, never refused)."""
    cands = _selected(name, args)
    if cands is None or len(cands) < 2:
        return False
    return all(common_type.category(p) is not None for c in cands for p in c)


def chosen(name: str, args: Sequence[str]) -> tuple[str, ...] | None:
    """The one overload PostgreSQL's resolution picks for these argument types, as its
    parameter types (one per argument), or None when there is not exactly one."""
    cands = _selected(name, args)
    return cands[0] if cands is not None and len(cands) == 1 else None


def _selected(name: str, args: Sequence[str]) -> list[tuple[str, ...]] | None:
    """func_select_candidate's survivors, or None when left undecided here."""
    if len(args) == 1 and name in TYPE_FUNCTIONS:
        return None
    cands = _candidates(name, args)
    exact = [c for c in cands if tuple(args) == c]
    if len(cands) < 2 or exact:
        return exact or cands
    known = [i for i, a in enumerate(args) if a != "unknown"]
    cands = _keep_most(cands, lambda c: sum(c[i] == args[i] for i in known))
    if len(cands) > 1:
        cands = _keep_most(cands, lambda c: sum(c[i] == args[i] or _preferred_in(c[i], common_type.category(args[i])) for i in known))
    unknowns = [i for i, a in enumerate(args) if a == "unknown"]
    if len(cands) > 1 and unknowns:
        for i in unknowns:
            cats = {common_type.category(c[i]) for c in cands if c[i] not in _ANY | _NONARRAY | _ARRAY}
            if None in cats:
                return None
            cat = "S" if "S" in cats else cats.pop() if len(cats) == 1 else None
            if cat is None:  # (categories conflict: PostgreSQL resolves nothing from them)
                if known:
                    return None  # (its last step may still pick by the typed arguments: undecided)
                break
            kept = [c for c in cands if common_type.category(c[i]) == cat]
            if any(c[i] in common_type.PREFERRED for c in kept):
                kept = [c for c in kept if c[i] in common_type.PREFERRED]
            cands = kept or cands
    return cands


def resolved_unknowns(name: str, args: Sequence[str]) -> dict[int, str]:
    """The types the chosen overload gives the untyped arguments (by position): its
    parameter's type, or for a polymorphic one the type the typed arguments fix
    (``array_append($1, 1)``: int4[]); positions it leaves open are absent."""
    picked = chosen(name, args)
    if picked is None:
        return {}
    elem: str | None = None
    for p, a in zip(picked, args, strict=True):
        if a == "unknown" or p not in _POLYMORPHIC:
            continue
        elem = a.lstrip("_") if p in _ARRAY else a
    out = {}
    for i, (p, a) in enumerate(zip(picked, args, strict=True)):
        if a != "unknown" or p == "any":
            continue
        if p in _POLYMORPHIC:
            if elem is not None:
                out[i] = "_" + elem if p in _ARRAY else elem
        elif common_type.category(p) is not None or p in ("bytea",):
            out[i] = p
    return out


def _preferred_in(param: str, category: str | None) -> bool:
    return param in common_type.PREFERRED and common_type.category(param) == category
