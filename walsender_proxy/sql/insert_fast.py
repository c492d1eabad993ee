"""``INSERT … VALUES`` of bound values and literals, without DuckDB.

An INSERT whose VALUES items are parameters, literals, NULL or DEFAULT is planned once per
statement node (:func:`insert_plan`); its table and columns are resolved once per catalog
version, and each column decides once how bound values enter it (:class:`ColumnInput`). The
rows are then built straight from the bound values as Arrow arrays, untyped strings through
the column type's input function. Anything else, and any failure, takes the DuckDB path,
which is the reference and has PostgreSQL's errors.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date as date_type
from datetime import datetime as datetime_type
from datetime import timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa
from pglast import ast

from decoding.errors import PgError
from walsender_proxy.lake.transaction import layout
from walsender_proxy.sql import float_math
from walsender_proxy.sql.column_coercion import coerce_text, text_as_is

#: Python types of parameter and constant values that go into a column of these types as
#: they are (anything else, and any failure, takes the DuckDB path, which has the errors).
_DIRECT: dict[str, tuple[type, ...]] = {
    "int2": (int,),
    "int4": (int,),
    "int8": (int,),
    "float4": (float, int),
    "float8": (float, int),
    "bool": (bool,),
    "bytea": (bytes,),
    "date": (date_type,),
}
_MAX_FAST_ROWS = 64


@dataclass(slots=True)
class InsertPlan:
    """``INSERT … VALUES`` whose items are parameters, literals, NULL or DEFAULT: each
    column's items as (param number, 0) or (0, constant), found once per statement node; the
    table and its columns resolved once per catalog version."""

    node: Any
    width: int
    items: list[list[tuple[int, Any]]]  # per column, per row
    catalog: Any = None
    table: Any = None
    cols: list[str] = field(default_factory=list)
    colobjs: list[Any] | None = None
    inputs: list[ColumnInput] = field(default_factory=list)  # one per colobjs entry
    storage: bool = False  # the columns are the table's, in order: build in storage form
    defaults: bool = False  # a DEFAULT item falls in a column that has a default


def insert_plan(node: Any) -> InsertPlan | None:
    src = node.selectStmt
    if (
        node.withClause is not None
        or not isinstance(src, ast.SelectStmt)
        or not src.valuesLists
        or len(src.valuesLists) > _MAX_FAST_ROWS
        or src.withClause is not None
        or src.sortClause
        or src.limitCount is not None
        or src.limitOffset is not None
    ):
        return None
    width = len(src.valuesLists[0])
    items: list[list[tuple[int, Any]]] = [[] for _ in range(width)]
    for row in src.valuesLists:
        if len(row) != width:
            return None
        for i, item in enumerate(row):
            if isinstance(item, ast.ParamRef):
                items[i].append((item.number, None))
            elif isinstance(item, ast.A_Const):
                v = const_value(item)
                if v is NOT_SIMPLE:
                    return None
                items[i].append((0, v))
            elif isinstance(item, ast.SetToDefault):
                items[i].append((0, None))
            else:
                return None
    return InsertPlan(node, width, items)


def values_from_plan(
    plan: InsertPlan, params: list[Any], date_order: str = "MDY"
) -> pa.Table | None:
    """The rows of the planned VALUES, built straight from the bound values (no DuckDB):
    untyped strings go through the column type's input function, as :func:`coerce_text`
    does. None when a value needs DuckDB's conversions (which also has the errors)."""
    assert plan.colobjs is not None
    arrays = []
    nparams = len(params)
    try:
        for inp, items in zip(plan.inputs, plan.items, strict=True):
            values = []
            for num, const in items:
                if num:
                    if num > nparams:
                        return None
                    values.append(params[num - 1])
                else:
                    values.append(const)
            arr = inp.array(values, date_order)
            if arr is None:
                return None
            arrays.append(arr)
    except (PgError, pa.ArrowException, TypeError, ValueError, OverflowError):
        return None  # the DuckDB path raises the error PostgreSQL would
    if plan.storage:
        return pa.Table.from_arrays(arrays, schema=layout(plan.table).plain)
    return pa.Table.from_arrays(arrays, names=plan.cols)


class ColumnInput:
    """How bound values enter one column, decided once per plan rather than per value: a
    single-row INSERT is the OLTP case, where these checks cost more than the row itself.
    Gives what :func:`direct_array` gives."""

    __slots__ = (
        "_accepts",
        "base",
        "col",
        "is_array",
        "null",
        "numeric",
        "pack",
        "target",
        "text_as_is",
        "tz",
    )

    def __init__(self, col: Any) -> None:
        ctype = col.type
        self.col = col
        self.target = ctype.arrow
        self.base = ctype.base.name
        self.is_array = ctype.is_array
        #: coerce_text leaves a string as it is for this column.
        self.text_as_is = pa.types.is_string(self.target) and text_as_is(ctype)
        self.tz = self.base == "timestamptz" if self.base in ("timestamp", "timestamptz") else None
        #: ints and Decimals go in through numeric's input function (scale, rounding, 22003).
        self.numeric = self.base == "numeric" and not self.is_array
        self.null = pa.nulls(1, self.target)
        self._accepts: dict[type, bool] = {}
        #: (Python type, fixed-width packer) when one value can be laid out as the column's
        #: buffer directly: pa.array reads the environment at every call, and a single-row
        #: INSERT makes five such arrays.
        self.pack = _ONE_VALUE_PACK.get(self.target) if not self.is_array else None
        if self.tz is not None and not self.is_array and self.target.unit == "us":
            self.pack = (datetime_type, _timestamptz_buffer if self.tz else _timestamp_buffer)

    def array(self, values: list[Any], date_order: str = "MDY") -> pa.Array | None:
        if len(values) != 1:
            return direct_array(self.col, values, date_order)
        v = values[0]
        if v is None:
            return self.null
        kind = type(v)
        if kind in _STR_KINDS:
            if self.text_as_is:
                data = v.encode()
                return pa.Array.from_buffers(
                    pa.string(),
                    1,
                    [None, pa.py_buffer(_OFFSETS.pack(0, len(data))), pa.py_buffer(data)],
                )
            return direct_array(self.col, values, date_order)
        if self.is_array:
            return None
        if self.numeric and (kind is int or kind is Decimal):
            return direct_array(self.col, [str(v) if kind is int else format(v, "f")])
        ok = self._accepts.get(kind)
        if ok is None:
            ok = self._accepts[kind] = _accepts(self.base, kind)
        if not ok or (self.tz is not None and (v.tzinfo is not None) != self.tz):
            return None
        if self.base == "float4" and not _fits_float4(v):
            return None  # (the DuckDB path raises dtof's 22003)
        pack = self.pack
        if pack is not None and kind is pack[0]:
            try:
                raw = pack[1](v)
            except struct.error:
                return None  # out of the type's range: the DuckDB path raises 22003
            return pa.Array.from_buffers(self.target, 1, [None, pa.py_buffer(raw)])
        return pa.array(values, self.target)


_OFFSETS = struct.Struct("<ii")
#: Column types whose single value is one little-endian field, with the Python type that
#: goes in as it is (a bool is not an int here, nor an int a float).
_ONE_VALUE_PACK: dict[pa.DataType, tuple[type, Callable[[Any], bytes]]] = {
    pa.int16(): (int, struct.Struct("<h").pack),
    pa.int32(): (int, struct.Struct("<i").pack),
    pa.int64(): (int, struct.Struct("<q").pack),
    pa.float64(): (float, struct.Struct("<d").pack),
}

_UNIX_EPOCH_TZ = datetime_type(1970, 1, 1, tzinfo=ZoneInfo("UTC"))
_UNIX_EPOCH = datetime_type(1970, 1, 1)
_ONE_US = timedelta(microseconds=1)
_PACK_Q = struct.Struct("<q").pack


def _timestamptz_buffer(v: datetime_type) -> bytes:
    return _PACK_Q((v - _UNIX_EPOCH_TZ) // _ONE_US)


def _timestamp_buffer(v: datetime_type) -> bytes:
    return _PACK_Q((v - _UNIX_EPOCH) // _ONE_US)


class _NotSimple:
    pass


NOT_SIMPLE = _NotSimple()


def const_value(c: ast.A_Const) -> Any:
    if c.isnull:
        return None
    v = c.val
    if isinstance(v, ast.Integer):
        return v.ival
    if isinstance(v, ast.String):
        return _Untyped(v.sval)
    if isinstance(v, ast.Boolean):
        return v.boolval
    return NOT_SIMPLE  # Float literals are numeric, bit strings: DuckDB decides


class _Untyped(str):
    """A quoted literal: its type comes from the target column."""


def direct_array(col: Any, values: list[Any], date_order: str = "MDY") -> pa.Array | None:
    ctype = col.type
    target = ctype.arrow
    base = ctype.base.name
    present = [v for v in values if v is not None]
    if not present:
        return pa.nulls(len(values), target)
    kinds = {type(v) for v in present}
    if kinds <= _STR_KINDS:
        arr = coerce_text(col, pa.array(values, pa.string()), date_order)
        return arr if arr.type == target else arr.cast(target)
    if ctype.is_array:
        return None
    for k in kinds:
        ok = _ACCEPTS.get((base, k))
        if ok is None:
            ok = _ACCEPTS[(base, k)] = _accepts(base, k)
        if not ok:
            return None
    if base in ("timestamp", "timestamptz"):
        tz = base == "timestamptz"
        if any((v.tzinfo is not None) != tz for v in present):
            return None
    if base == "float4" and not all(map(_fits_float4, present)):
        return None  # (the DuckDB path raises dtof's 22003)
    return pa.array(values, target)


def _fits_float4(v: float) -> bool:
    """A float8 rounds to a float4 without overflow or underflow (Arrow and struct would
    give Infinity or 0 where PostgreSQL's dtof raises 22003)."""
    a = abs(v)
    return (
        a == 0
        or a != a
        or a == math.inf
        or float_math.FLOAT4_UNDERFLOW_AT < a < float_math.FLOAT4_OVERFLOW_AT
    )


_STR_KINDS = frozenset({str, _Untyped})
_ACCEPTS: dict[tuple[str, type], bool] = {}


def _accepts(base: str, kind: type) -> bool:
    """Whether a Python value of ``kind`` goes into a column of type ``base`` as it is."""
    if base in ("timestamp", "timestamptz"):
        return kind is datetime_type
    allowed = _DIRECT.get(base)
    if allowed is None:
        return False
    if kind is bool:
        return bool in allowed
    if kind is datetime_type:
        return False  # not a date, whatever isinstance says
    return any(issubclass(kind, a) for a in allowed)
