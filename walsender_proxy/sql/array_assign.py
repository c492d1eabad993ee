"""Subscripted assignment: ``UPDATE t SET a[i] = v, a[l:u] = arr`` and ``INSERT INTO t
(a[i], a[l:u]) …``, as PostgreSQL's array_set_element and array_set_slice do it for the
one-dimensional arrays the lake holds.

The engine selects each subscript and each assigned value beside the target rows (the
values go through the column's assignment coercion: an element as the element type, a
slice as the array type), then :func:`assign` builds each row's new array in order of the
assignments, so ``SET a[1] = 1, a[2] = 2`` applies both. PostgreSQL's errors come with its
words: a NULL subscript (22004), ``source array too small`` and ``upper bound cannot be
less than lower bound`` (2202E). What would give an array a lower bound other than 1 (an
assignment below the first element, or into an empty or NULL array anywhere but at 1) is
refused with 0A000, as the lake refuses such arrays wherever they come from; so are
several subscripts (a multidimensional array) and field assignments (composite types).

A jsonb column takes a chain of subscripts (``SET j['a'][0] = v``), each an integer or a
text as PostgreSQL's jsonb_subscript_transform coerces them, assigned by
:func:`jsonb_edit.set_element`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pglast import ast
from pglast.stream import RawStream

from decoding.errors import PgError
from walsender_proxy.sql.array_exprs import MAX_ARRAY_SIZE
from walsender_proxy.sql.cooked_exprs import expr_location
from walsender_proxy.sql.ddl_names import unsupported
from walsender_proxy.sql.sql_errors import SqlError


def _lower_bound() -> PgError:
    return PgError("0A000", "array lower bounds other than 1 are not supported by walsender-proxy")


@dataclass(frozen=True, slots=True)
class Subscript:
    """One subscripted target: ``lower``/``upper`` as PostgreSQL SQL text (None: omitted,
    ``a[:3]``), and whether it is a slice."""

    column: str
    lower: str | None
    upper: str | None
    is_slice: bool
    #: a jsonb column's subscripts, as SQL text (``j['a'][0]``: ``'a'``, ``0``), and where
    #: each stands in the statement (for the error positions)
    path: tuple[str, ...] = ()
    locations: tuple[int | None, ...] = ()


def subscript(
    column: str, indirection: Sequence[Any], type_name: str, is_array: bool, location: int | None = None
) -> Subscript:
    """The target ``column[…]`` of an UPDATE's SET or an INSERT's column list (``location``:
    the target's, in the statement)."""
    if not all(isinstance(i, ast.A_Indices) for i in indirection):
        if is_array:
            raise unsupported("assignment to a field of an array element")
        raise SqlError(
            "42804", f'cannot assign to field "{_field(indirection)}" of column "{column}" because its type {type_name} is not a composite type',
            _at(location),
        )
    if type_name == "jsonb" and not is_array:
        for i in indirection:
            if i.is_slice:
                raise SqlError("42804", "jsonb subscript does not support slices", _at(expr_location(i.uidx or i.lidx)))
        return Subscript(
            column, None, None, False,
            tuple(RawStream()(i.uidx) for i in indirection),
            tuple(expr_location(i.uidx) for i in indirection),
        )  # fmt: skip
    if not is_array:
        raise PgError(
            "42804", f'cannot subscript type {type_name} because it does not support subscripting'
        )
    if len(indirection) > 1:
        raise unsupported("assignment to an element of a multidimensional array")
    ind = indirection[0]
    return Subscript(
        column,
        RawStream()(ind.lidx) if ind.lidx is not None else None,
        RawStream()(ind.uidx) if ind.uidx is not None else None,
        bool(ind.is_slice),
    )


def selected(sub: Subscript, k: int, value_sql: str) -> list[str]:
    """The select-list items that give the ``k``-th assignment's subscripts and value."""
    return [*subscripts_selected(sub, k), f'({value_sql}) AS "__val_{k}"']


def subscripts_selected(sub: Subscript, k: int) -> list[str]:
    """The select-list items that give the ``k``-th assignment's subscripts."""
    if sub.path:
        return [f'({p}) AS "__p{j}_{k}"' for j, p in enumerate(sub.path)]
    lower = f"({sub.lower})::int4" if sub.lower else "NULL::int4"
    upper = f"({sub.upper})::int4" if sub.upper else "NULL::int4"
    return [f'{lower} AS "__lo_{k}"', f'{upper} AS "__hi_{k}"']


def subscript_columns(sub: Subscript, k: int) -> list[str]:
    """The names :func:`subscripts_selected` gives its items."""
    if sub.path:
        return [f"__p{j}_{k}" for j in range(len(sub.path))]
    return [f"__lo_{k}", f"__hi_{k}"]


#: the Arrow types of subscripts that PostgreSQL coerces to integer (int2, int4)
_INTEGER_SUBSCRIPTS = (pa.int8(), pa.int16(), pa.int32())
#: other types' names, for jsonb_subscript_transform's error
_SUBSCRIPT_TYPE_NAMES = {
    pa.int64(): "bigint", pa.float32(): "real", pa.float64(): "double precision",
    pa.bool_(): "boolean", pa.date32(): "date", pa.binary(): "bytea",
}  # fmt: skip


def _at(location: int | None) -> int | None:
    return location + 1 if location is not None and location >= 0 else None


def jsonb_path(sub: Subscript, subscripts: Sequence[pa.ChunkedArray | pa.Array]) -> tuple[list[list[str]], bool]:
    """Each row's jsonb path from its selected subscripts (integers printed as int4out
    prints them), and whether the first is an integer (a NULL jsonb then starts as an
    array). A subscript type other than integer or text is PostgreSQL's 42804."""
    kinds = []
    for col, location in zip(subscripts, sub.locations, strict=True):
        t = col.type
        if t in _INTEGER_SUBSCRIPTS:
            kinds.append(True)
        elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t):
            kinds.append(False)
        elif pa.types.is_decimal(t) or t in _SUBSCRIPT_TYPE_NAMES:
            name = "numeric" if pa.types.is_decimal(t) else _SUBSCRIPT_TYPE_NAMES[t]
            raise SqlError("42804", f"subscript type {name} is not supported", _at(location),
                           hint="jsonb subscript must be coercible to either integer or text.")  # fmt: skip
        else:
            raise unsupported(f"a jsonb subscript of type {t}")
    rows: list[list[str]] = []
    for values in zip(*(c.to_pylist() for c in subscripts), strict=True):
        if None in values:
            raise PgError("22004", "jsonb subscript in assignment must not be null")
        rows.append([str(v) for v in values])
    return rows, kinds[0]


def _field(indirection: Sequence[Any]) -> str:
    for i in indirection:
        if isinstance(i, ast.String):
            return i.sval
    return "?"


def _index(value: Any) -> int:
    if value is None:
        raise PgError("22004", "array subscript in assignment must not be null")
    return int(value)


def assign(old: list[Any] | None, sub: Subscript, lower: Any, upper: Any, value: Any) -> list[Any] | None:
    """``old`` with ``value`` assigned at the subscript (``lower``/``upper`` its values;
    for an element, ``upper`` is the index)."""
    if not sub.is_slice:
        i = _index(upper)
        if not old:  # (NULL or '{}': PostgreSQL makes a one-element array with its bound there)
            if i != 1:
                raise _lower_bound()
            return [value]
        if i < 1:
            raise _lower_bound()
        if i > MAX_ARRAY_SIZE:
            raise PgError("54000", f"array size exceeds the maximum allowed ({MAX_ARRAY_SIZE})")
        out = list(old)
        if i > len(out):
            out.extend([None] * (i - len(out)))
        out[i - 1] = value
        return out
    if value is None:  # (a NULL source leaves the array as it was)
        return old
    if not old:
        if sub.upper is None:
            raise PgError("2202E", "array slice subscript must provide both boundaries",
                          detail="When assigning to a slice of an empty array value, slice boundaries must be fully specified.")  # fmt: skip
        lo = 1 if sub.lower is None else _index(lower)
        hi = _index(upper)
    else:
        lo = 1 if sub.lower is None else _index(lower)
        hi = len(old) if sub.upper is None else _index(upper)
    if hi < lo:
        raise PgError("2202E", "upper bound cannot be less than lower bound")
    if lo < 1 or (not old and lo != 1):
        raise _lower_bound()
    if hi > MAX_ARRAY_SIZE:
        raise PgError("54000", f"array size exceeds the maximum allowed ({MAX_ARRAY_SIZE})")
    n = hi - lo + 1
    if len(value) < n:
        raise PgError("2202E", "source array too small")
    out = list(old or [])
    if hi > len(out):
        out.extend([None] * (hi - len(out)))
    out[lo - 1 : hi] = value[:n]
    return out
