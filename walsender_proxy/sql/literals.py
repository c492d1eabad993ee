"""The input of unknown-type literals: ``'…'::T``, ``T '…'`` and ``CAST('…' AS T)``.

PostgreSQL gives a quoted literal the type ``unknown``; when it is cast or assigned to a type
T, parse analysis converts it on the spot with T's input function (``coerce_type`` of an
unknown Const: ``stringTypeDatum`` with typmod -1, interval excepted), then applies T's
length coercion (``varchar(n)``, ``numeric(p,s)``, ``timestamp(p)``) the way the context
wants it: an explicit cast truncates strings, an assignment raises 22001. So ``'\\xdead'``
is two bytes as bytea, ``'{"b":1,"a":2}'`` is ``{"a": 2, "b": 1}`` as jsonb and ``'x'``
is 22P02 as uuid, whatever DuckDB's own casts from VARCHAR would do.

This module does that with the project's one implementation of each type's input
(:mod:`decoding.pgvalues`) and turns the value into a DuckDB expression that yields exactly
it, in the DuckDB type the rewriter uses for T (:data:`DUCK_TYPES`): constants DuckDB folds,
so filters on them still reach Parquet statistics. Numeric constants cast to T follow
PostgreSQL's cast functions (``int8 → int4`` is 22003 "integer out of range", ``numeric →
int4`` rounds half away from zero, ``integer → date`` is 42846).

Casts of a text *expression* (``textcol::jsonb``, ``$1::bytea`` bound as text) are
PostgreSQL's I/O conversion: the same input function, per row. :func:`input_call` makes
them calls of vectorised Arrow UDFs (:func:`input_udfs`, installed once per server by
:mod:`walsender_proxy.sql.functions`) that run :func:`input_values` on whole columns.

Dates and timestamps are read in the session's DateStyle field order (``01/02/03`` is
2003-02-01 in DMY): the rewriter sets it for the statement it rewrites with
:func:`date_order`, and a text cast passes it to its UDF as an argument.

It depends on pglast nodes and the lake's types only, not on the rewriter, so the typed
analysis stage can call it as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pglast import ast

from decoding import pgtz
from decoding.errors import PgError
from decoding.pgtypes import ColumnType, base_types
from decoding.pgvalues import _calendar as cal
from decoding.pgvalues import decode_text_arrow, encode_text_arrow
from decoding.pgvalues.textin import Num, numeric_parse, numeric_round, numeric_typmod
from decoding.pgvalues.typmod import round_times
from walsender_proxy.sql import (
    bytea_text,
    datetime_bin,
    datetime_make,
    float_aggs,
    float_math,
    formatting_udfs,
    ident_funcs,
    json_exprs,
    jsonb_edit,
    jsonb_ops,
    numeric_exprs,
    numeric_math,
    numeric_text,
    regex_funcs,
    session_zone,
    width_bucket,
)
from walsender_proxy.sql.nodes import (
    bool_const,
    call,
    cast,
    int_const,
    null_const,
    op,
    str_const,
)
from walsender_proxy.sql.udf_errors import keep_errors

#: The DuckDB type each lake type computes as in rewritten SQL (the rewriter's casts use the
#: same names). numeric: DOUBLE without a typmod (docs/sql-server.md), DECIMAL(p,s) up to
#: 38 digits; the string-stored types are VARCHAR.
DUCK_TYPES: dict[str, str] = {
    "bool": "boolean",
    "int2": "smallint",
    "int4": "integer",
    "int8": "bigint",
    "float4": "real",
    "float8": "double",
    "numeric": "double",
    "text": "varchar",
    "varchar": "varchar",
    "bpchar": "varchar",
    "name": "varchar",
    "bytea": "blob",
    "date": "date",
    "time": "time",
    "timestamp": "timestamp",
    "timestamptz": "timestamptz",
    "interval": "interval",
    "uuid": "varchar",
    "json": "varchar",
    "jsonb": "varchar",
}

_BASES = {t.name: t for t in base_types()}
#: Type names the parser leaves as written that name another type.
TYPE_ALIASES = {"int": "int4", "integer": "int4", "float": "float8", "boolean": "bool", "decimal": "numeric"}


def cast_target(tn: ast.TypeName) -> ColumnType | None:
    """The lake type a cast's type name denotes, without its modifiers (what a parameter
    of unknown type becomes when cast: PostgreSQL infers its type from the first cast);
    None for other types."""
    names = [n.sval for n in tn.names if isinstance(n, ast.String)]
    if not names or len(names) > 2 or (len(names) == 2 and names[0] != "pg_catalog") or tn.pct_type or tn.setof:
        return None
    name = TYPE_ALIASES.get(names[-1].lower(), names[-1].lower())
    base = _BASES.get(name)
    return ColumnType(base, -1, bool(tn.arrayBounds)) if base is not None else None
_INT_NAMES = {"int2": "smallint", "int4": "integer", "int8": "bigint"}
_INT_BITS = {"int2": 16, "int4": 32, "int8": 64}
_TIME_TYPES = ("time", "timestamp", "timestamptz")
#: Widest DECIMAL DuckDB has.
_MAX_DECIMAL = 38


# ------------------------------------------------------------------------- target types


def target_type(name: str, typmods: Sequence[int], is_array: bool) -> ColumnType | None:
    """The lake type a cast names (``pg_type.typname`` as the parser resolves it: ``int4``,
    ``bpchar``), with PostgreSQL's typmod encoding; None for a type the lake does not store
    (``name``, ``oid``, ``regclass``, ``"char"``…), which the caller handles its own way.
    Invalid type modifiers raise PostgreSQL's errors."""
    base = _BASES.get(name)
    if base is None:
        return None
    typmod = -1
    if typmods:
        if name in ("varchar", "bpchar"):
            n = typmods[0]
            if n < 1:
                raise PgError("22023", f"length for type {name} must be at least 1")
            if n > 10485760:
                raise PgError("22023", f"length for type {name} cannot exceed 10485760")
            typmod = n + 4
        elif name == "numeric":
            p, s = typmods[0], typmods[1] if len(typmods) > 1 else 0
            if not 1 <= p <= 1000:
                raise PgError("22023", f"NUMERIC precision {p} must be between 1 and 1000")
            if not 0 <= s <= p:
                raise PgError(
                    "0A000",
                    f"numeric({p},{s}) is not supported: the lake's numeric scale is between 0 and the precision",
                )
            typmod = ((p << 16) | s) + 4
        elif name in _TIME_TYPES:
            p = typmods[0]
            if p < 0:
                label = "TIME" if name == "time" else "TIMESTAMP"
                tz = "" if name == "time" else (" WITH TIME ZONE" if name == "timestamptz" else "")
                raise PgError("22023", f"{label}({p}){tz} precision must not be negative")
            typmod = min(p, 6)
        elif name == "interval":
            raise PgError("0A000", "interval type modifiers (fields and precision) are not supported")
        else:
            raise PgError("42601", f'type modifier is not allowed for type "{name}"')
    return ColumnType(base, typmod, is_array)


def duck_type(ctype: ColumnType) -> tuple[str, list[int]]:
    """The DuckDB type name and modifiers values of ``ctype`` compute as."""
    ps = ctype.numeric_precision_scale
    if ps is not None and ps[0] <= _MAX_DECIMAL:
        return "decimal", [ps[0], ps[1]]
    return DUCK_TYPES[ctype.base.name], []


# --------------------------------------------------------------------------- the values

#: DateStyle's field order for the literals converted now (see :func:`date_order`).
_DATE_ORDER: ContextVar[str] = ContextVar("date_order", default="MDY")


#: DateStyle's field order for text cast at run time (text columns, parameters bound as
#: text), when it is not the literals' (see :func:`date_order`).
_INPUT_ORDER: ContextVar[str | None] = ContextVar("input_date_order", default=None)


@contextmanager
def date_order(order: str, literal_order: str | None = None) -> Iterator[None]:
    """Within the block, literals and text casts read dates and timestamps in ``order``
    (``MDY``, ``DMY`` or ``YMD``), as ``decimal.localcontext`` sets a precision: the
    rewriter converts literals deep inside its walk, for one session's statement.
    ``literal_order``, when given, is the literals' own: a prepared statement's constants
    were read when PostgreSQL parsed it, in the DateStyle of that moment, while the text
    it casts when it runs is read in the session's ``order`` of then."""
    token = _DATE_ORDER.set(literal_order or order)
    itoken = _INPUT_ORDER.set(order if literal_order else None)
    try:
        yield
    finally:
        _INPUT_ORDER.reset(itoken)
        _DATE_ORDER.reset(token)


def current_date_order() -> str:
    """The field order literals are read in now (``MDY`` outside :func:`date_order`)."""
    return _DATE_ORDER.get()


def reads_datestyle(ctype: ColumnType | None) -> bool:
    """Whether a quoted literal compared with a value of ``ctype`` must go through its input
    function rather than DuckDB's cast from VARCHAR: dates, times and timestamps, whose
    text PostgreSQL reads in the DateStyle order and DuckDB in its own (``'01/02/03'`` is
    0001-02-03 there, 2003-01-02 in PostgreSQL's MDY)."""
    return ctype is not None and not ctype.is_array and ctype.base.name in ("date", "time", "timestamp", "timestamptz")


def reads_by_input(ctype: ColumnType | None) -> bool:
    """Whether a quoted literal resolved to ``ctype`` (the common type of CASE branches, a
    VALUES column, set operation arms) must go through the type's input function, as
    PostgreSQL coerces it at parse analysis, rather than DuckDB's cast from VARCHAR, which
    reads other text ('1.5' is 2 as an integer there, '1' an hour as an interval) and
    raises nothing where PostgreSQL refuses: every type but the string types (the literal
    is their value), json and jsonb (their own paths) and unconstrained numeric (held as
    its text)."""
    if ctype is None:
        return False
    name = ctype.base.name
    if name in ("text", "varchar", "bpchar", "name", "json", "jsonb"):
        return False
    return not (name == "numeric" and ctype.numeric_precision_scale is None)


def input_values(
    values: pa.Array | pa.ChunkedArray | Sequence[str | None],
    ctype: ColumnType,
    *,
    explicit: bool,
    date_order: str | None = None,
) -> pa.Array:
    """Text → ``ctype``'s storage form, as an unknown literal (or a text value's I/O cast)
    becomes T: the input function with typmod -1, then the length coercion of the context.
    Dates and timestamps are read in ``date_order`` (default: :func:`current_date_order`).
    Raises the input function's PgError (an ``InputError`` carrying the row)."""
    base_in = ctype
    if ctype.typmod >= 0 and ctype.base.name in ("varchar", "bpchar") and explicit:
        base_in = ColumnType(ctype.base, -1, ctype.is_array)
    if ctype.typmod >= 0 and ctype.base.name in _TIME_TYPES:
        base_in = ColumnType(ctype.base, -1, ctype.is_array)
    # numeric(p,s) and assignment to varchar(n)/char(n): the input function with the typmod
    # is the same as the input then the length coercion (the text parses exactly).
    arr = decode_text_arrow(base_in, values, date_order or _DATE_ORDER.get())
    if base_in is ctype:
        return arr
    return _apply_typmod(arr, ctype)


def _apply_typmod(arr: pa.Array, ctype: ColumnType) -> pa.Array:
    """An explicit cast's length coercion (``varchar(n)`` and ``char(n)`` truncate,
    ``char(n)`` pads, times round to the precision) on storage values."""
    if ctype.is_array:
        flat = _apply_typmod(arr.flatten(), ColumnType(ctype.base, ctype.typmod))
        return pa.ListArray.from_arrays(arr.offsets, flat, mask=arr.is_null()).cast(ctype.arrow)
    name = ctype.base.name
    if name in ("varchar", "bpchar"):
        n = ctype.typmod - 4
        out = pc.utf8_slice_codeunits(arr, 0, n)
        return pc.utf8_rpad(out, n, " ") if name == "bpchar" else out
    return round_times(arr, ctype)


# ------------------------------------------------------------------- DuckDB expressions


_HEX = frozenset("0123456789abcdefABCDEF")


def pg_lsn_in(text: str) -> str:
    """pg_lsn's input and output: one to eight hex digits, ``/``, one to eight more, nothing
    else (22P02); written back as PostgreSQL writes an LSN (``%X/%X``)."""
    hi, slash, lo = text.partition("/")
    if not slash or not 1 <= len(hi) <= 8 or not 1 <= len(lo) <= 8 or not set(hi) <= _HEX or not set(lo) <= _HEX:
        raise PgError("22P02", f'invalid input syntax for type pg_lsn: "{text}"')
    return f"{int(hi, 16):X}/{int(lo, 16):X}"


def xid_in(text: str, bits: int) -> int:
    """xidin and xid8in as PostgreSQL 15 has them: C's strtoul with base 0 and no error
    (leading spaces and a sign; ``0x`` hexadecimal, a leading ``0`` octal; digits up to
    the first that is not one; none is 0; past 2^64 it saturates; a minus negates modulo
    2^64), then the low ``bits`` bits (xid: 32)."""
    s = text.lstrip(" \t\n\r\f\v")
    negative = s[:1] == "-"
    if s[:1] in "+-" and s:
        s = s[1:]
    if s[:2].lower() == "0x" and s[2:3] and s[2].lower() in "0123456789abcdef":
        base, s = 16, s[2:]
    elif s[:1] == "0":
        base = 8
    else:
        base = 10
    digits = "0123456789abcdef"[:base]
    n = 0
    while n < len(s) and s[n].lower() in digits:
        n += 1
    value = min(int(s[:n], base), 2**64 - 1) if n else 0
    if negative:
        value = -value % 2**64
    return value & (2**bits - 1)


def unknown_literal(text: str, ctype: ColumnType, *, explicit: bool = True) -> ast.Node:
    """The DuckDB expression of the quoted literal ``text`` coerced to ``ctype``; raises
    PostgreSQL's error for input the type refuses."""
    ps = ctype.numeric_precision_scale
    if ps is not None and not ctype.is_array:
        # numeric(p,s) through its text, not its decimal128 storage: NaN is a value here
        return _numeric_expr(numeric_typmod(numeric_parse(text), *ps), duck_type(ctype))
    arr = input_values([text], ctype, explicit=explicit)
    return value_expr(arr, ctype)


def value_expr(arr: pa.Array, ctype: ColumnType) -> ast.Node:
    """A DuckDB expression yielding the one value of ``arr`` (``ctype``'s storage form)."""
    duck, mods = duck_type(ctype)
    if not arr.is_valid()[0].as_py():
        return cast(null_const(), duck, array=ctype.is_array, typmods=mods)
    if not ctype.is_array:
        return _scalar_expr(arr[0].as_py() if ctype.base.name not in _RAW else _raw(arr), ctype)
    elem = ColumnType(ctype.base, ctype.typmod)
    items = arr.flatten()
    py = items.to_pylist() if elem.base.name not in _RAW else [_raw(items.slice(i, 1)) for i in range(len(items))]
    if elem.base.name == "numeric" and mods == []:
        duck, mods = _numeric_array_type(py)
    nodes = tuple(
        null_const() if v is None else _scalar_expr(v, elem, (duck, mods)) for v in py
    )
    return cast(ast.A_ArrayExpr(elements=nodes), duck, array=True, typmods=mods)


#: Types whose values are rendered from their integer storage, not Python objects (dates,
#: times and timestamps outside Python's datetime range, infinities).
_RAW = frozenset({"date", "time", "timestamp", "timestamptz", "interval"})


def _raw(arr: pa.Array) -> Any:
    t = arr.type
    if pa.types.is_date32(t):
        return arr.view(pa.int32())[0].as_py()
    if pa.types.is_struct(t):
        v = arr[0].as_py()
        return None if v is None else (v["months"], v["days"], v["microseconds"])
    return arr.view(pa.int64())[0].as_py()


def _scalar_expr(v: Any, ctype: ColumnType, numeric_as: tuple[str, list[int]] | None = None) -> ast.Node:
    name = ctype.base.name
    if name == "bool":
        return bool_const(bool(v))
    if name in _INT_NAMES:
        return cast(int_const(int(v)), DUCK_TYPES[name])
    if name in ("float4", "float8"):
        return _float_expr(float(v), name == "float4")
    if name == "numeric":
        text = v if isinstance(v, str) else format(v, "f")
        return _numeric_expr(numeric_parse(text), numeric_as or duck_type(ctype))
    if name == "bytea":
        return cast(str_const("".join(f"\\x{b:02X}" for b in v)), "blob")
    if name == "date":
        if abs(v) >= cal.INT32_MAX:
            return cast(str_const("infinity" if v > 0 else "-infinity"), "date")
        return op("+", cast(str_const("1970-01-01"), "date"), int_const(v))
    if name == "time":
        s, us = divmod(v, 10**6)
        return cast(str_const(f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{us:06d}"), "time")
    if name in ("timestamp", "timestamptz"):
        if abs(v) >= cal.INT64_MAX:
            return cast(str_const("infinity" if v > 0 else "-infinity"), name)
        return call("make_" + name, cast(int_const(v), "bigint"))
    if name == "interval":
        months, days, us = v
        if abs(us) > (2**63 - 1) // 1000:  # (DuckDB hands intervals over in nanoseconds)
            raise PgError("0A000", "intervals with more than 2562047 hours are not supported by walsender-proxy")
        return op(
            "+",
            op("+", call("to_months", int_const(months)), call("to_days", int_const(days))),
            call("to_microseconds", cast(int_const(us), "bigint")),
        )
    return cast(str_const(str(v)), "varchar")  # text, varchar, bpchar, uuid, json, jsonb


def _float_expr(v: float, float4: bool) -> ast.Node:
    """Through DOUBLE: the shortest text of a double parses back to it exactly, and a
    float4 value converts to REAL without rounding."""
    text = "nan" if v != v else ("inf" if v > 0 else "-inf") if v in (float("inf"), float("-inf")) else repr(v)
    node: ast.Node = cast(str_const(text), "double")
    return cast(node, "real") if float4 else node


def _numeric_digits(num: Num) -> tuple[int, int]:
    """(precision, scale) a DECIMAL needs to hold ``num`` exactly."""
    return max(num.int_digits() + num.scale, num.scale, 1), num.scale


def _numeric_expr(num: Num, duck: tuple[str, list[int]]) -> ast.Node:
    name, mods = duck
    if name == "decimal" and mods and not num.special:
        return cast(str_const(num.text()), "decimal", typmods=mods)
    # no typmod: DuckDB's DECIMAL keeps the literal's scale (1.50 stays 1.50); DOUBLE holds
    # NaN and the infinities exactly (a numeric(p,s) NaN too, in an expression)
    if num.special:
        return cast(str_const(num.text()), "double")
    p, s = _numeric_digits(num)
    if p > _MAX_DECIMAL:
        raise _numeric_too_wide(num.text())
    return cast(str_const(num.text()), "decimal", typmods=[p, s])


def _numeric_array_type(values: Sequence[Any]) -> tuple[str, list[int]]:
    """One DuckDB element type that holds every element of a numeric[] exactly: DECIMAL
    when they share a scale, DOUBLE when all are NaN or infinite."""
    nums = [numeric_parse(v) for v in values if v is not None]
    finite = [n for n in nums if not n.special]
    if not finite:
        return "double", []
    if len(finite) != len(nums) or len({n.scale for n in finite}) > 1:
        raise PgError(
            "0A000",
            "numeric arrays whose elements differ in scale or mix NaN or infinity with numbers are not supported in expressions",
        )
    p = max(_numeric_digits(n)[0] for n in finite)
    if p > _MAX_DECIMAL:
        raise _numeric_too_wide(max(finite, key=lambda n: len(n.digits)).text())
    return "decimal", [p, finite[0].scale]


def _numeric_too_wide(text: str) -> PgError:
    return PgError(
        "0A000",
        f"numeric value {text} is not supported in expressions: it has more than {_MAX_DECIMAL} digits",
        hint="Insert it as an untyped literal or a parameter; the lake stores it exactly.",
    )


# ------------------------------------------------------------- numeric constants cast


_SOURCE_NAMES = {"int4": "integer", "int8": "bigint", "numeric": "numeric"}


def constant_cast(const: ast.A_Const, ctype: ColumnType) -> ast.Node | None:
    """``1::T``, ``99999999999::T``, ``1.50::T``: PostgreSQL's cast function from the
    constant's type (integer, bigint beyond int4, numeric for the rest) to ``ctype``.
    None for constants that are not numbers."""
    val = const.val
    if const.isnull or not isinstance(val, ast.Integer | ast.Float):
        return None
    if isinstance(val, ast.Integer):
        src, num = "int4", Num(None, val.ival < 0, str(abs(val.ival)), 0)
    else:
        num = numeric_parse(val.fval)
        src = "int8" if re.fullmatch(r"[0-9]+", val.fval) and int(val.fval) < 2**63 else "numeric"
    name = ctype.base.name
    if ctype.is_array:
        raise _cannot_cast(src, ctype)
    if name in _INT_NAMES:
        if src == "numeric":
            num = _round_to_int(num)
        v = int(num.text())
        bits = _INT_BITS[name]
        if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
            raise PgError("22003", f"{_INT_NAMES[name]} out of range")
        return cast(int_const(v), DUCK_TYPES[name])
    if name == "numeric":
        ps = ctype.numeric_precision_scale
        if ps is not None:
            num = numeric_typmod(num, *ps)
        return _numeric_expr(num, duck_type(ctype))
    if name in ("float4", "float8"):
        if src == "numeric":
            arr = decode_text_arrow(ColumnType(ctype.base), [num.text()])
            return _float_expr(arr[0].as_py(), name == "float4")
        v = float(np.float32(int(num.text()))) if name == "float4" else float(int(num.text()))
        return _float_expr(v, name == "float4")
    if name == "bool":
        if src != "int4":
            raise _cannot_cast(src, ctype)
        return bool_const(not num.is_zero)
    if name in ("text", "varchar", "bpchar"):
        return unknown_literal(num.text(), ctype)
    raise _cannot_cast(src, ctype)


def _round_to_int(num: Num) -> Num:
    """numeric → integer rounds half away from zero (numeric_int4's round_var)."""
    if num.special:
        raise PgError("0A000", f"cannot convert {'NaN' if num.special == 'nan' else 'infinity'} to integer")
    if num.scale == 0:
        return num

    return numeric_round(num, 0)


def _cannot_cast(src: str, ctype: ColumnType) -> PgError:
    target = ColumnType(ctype.base, -1, ctype.is_array).sql_name()
    return PgError("42846", f"cannot cast type {_SOURCE_NAMES[src]} to {target}")


# ------------------------------------------------------- DuckDB's conversion errors

#: DuckDB's names of the types its implicit conversions target → the lake type whose
#: input function words the error.
_DUCK_NAMES = {
    "INT16": "int2", "INT32": "int4", "INT64": "int8", "DOUBLE": "float8", "FLOAT": "float4",
    "BOOL": "bool", "DATE": "date", "TIMESTAMP": "timestamp", "TIME": "time",
    "INTERVAL": "interval", "UUID": "uuid", "BLOB": "bytea",
}
_DUCK_FORMATS = {"date": "date", "timestamp": "timestamp", "time": "time"}
_CONVERT = re.compile(
    r"""Could not convert string ['"](.*)['"] to ([A-Z0-9]+)(?:\((\d+),(\d+)\))?(?: when casting from source column \S+)?$""", re.S
)
_FIELD = re.compile(r'invalid (date|timestamp) field format: "(.*)", expected format', re.S)
_TIME = re.compile(r'time field value out of range: "(.*)", expected format', re.S)
_RANGE = re.compile(r"can't be cast because the value is out of range for the destination type (INT16|INT32|INT64|UINT32)")
_DECIMAL_RANGE = re.compile(r'Casting value "(.*)" to type DECIMAL\((\d+),(\d+)\) failed: value is out of range')


def duckdb_cast_error(text: str) -> PgError | None:
    """PostgreSQL's error for a conversion DuckDB refused (a string compared with or
    assigned to a typed value outside the literal input above): the input function of the
    same type run on the same string words it; an integer out of range is 22003."""
    first = text.splitlines()[0] if text else ""
    first = re.sub(r"^[A-Za-z ]+ Error: ", "", first)
    m = _RANGE.search(first)
    if m:
        if m.group(1) == "UINT32":  # (int8 → oid: i8tooid)
            return PgError("22003", "OID out of range")
        return PgError("22003", f"{_INT_NAMES[_DUCK_NAMES[m.group(1)]]} out of range")
    m = _DECIMAL_RANGE.search(first)
    if m:
        p, sc = int(m.group(2)), int(m.group(3))
        try:
            numeric_typmod(numeric_parse(m.group(1)), p, sc)
        except PgError as e:
            return e
        return None
    name = value = None
    typmods: list[int] = []
    m = _CONVERT.search(first)
    if m:
        value, duck = m.group(1), m.group(2)
        if duck == "DECIMAL" and m.group(3):
            name, typmods = "numeric", [int(m.group(3)), int(m.group(4))]
        else:
            name = _DUCK_NAMES.get(duck)
    elif (m := _FIELD.search(first)) is not None:
        name, value = _DUCK_FORMATS[m.group(1)], m.group(2)
    elif (m := _TIME.search(first)) is not None:
        name, value = "time", m.group(1)
    if name is None or value is None:
        return None
    try:
        input_values([value], ColumnType(_BASES[name], -1 if not typmods else ((typmods[0] << 16) | typmods[1]) + 4), explicit=False)
    except PgError as e:
        return PgError(e.sqlstate, e.message, detail=e.detail, hint=e.hint)
    # PostgreSQL's input takes what DuckDB's conversion refused: say so rather than guess
    return PgError(
        "0A000",
        f'the value "{value}" of type {ColumnType(_BASES[name]).sql_name()} is not supported here',
        hint="Write it as a typed literal or cast it explicitly.",
    )


# ------------------------------------------------------------- text expressions cast


UDF_PREFIX = "wpx_input_"


def udf_name(ctype: ColumnType) -> str:
    return UDF_PREFIX + ctype.base.name + ("_array" if ctype.is_array else "")


def input_call(arg: ast.Node, ctype: ColumnType, *, explicit: bool = True, as_text: bool = False) -> ast.Node:
    """``arg`` (a text expression) through ``ctype``'s input function, row by row — as
    PostgreSQL's I/O conversion cast does — in the DuckDB type values of ``ctype`` compute
    as. numeric comes back as its text and DuckDB casts that exact text (``as_text``: it
    stays that text, as the lake keeps a numeric DuckDB's DECIMAL cannot hold). Dates and
    timestamps are read in the DateStyle order of :func:`current_date_order`."""
    order = str_const(_INPUT_ORDER.get() or _DATE_ORDER.get())
    node: ast.Node = call(udf_name(ctype), arg, int_const(ctype.typmod), bool_const(explicit), order)
    if ctype.base.name == "numeric" and not as_text:
        duck, mods = duck_type(ctype)
        node = cast(node, duck, array=ctype.is_array, typmods=mods)
    return node


#: DuckDB types of the UDFs' results (storage forms, except: numeric as text, interval as
#: DuckDB's INTERVAL).
_UDF_RESULT: dict[str, str] = {
    **{k: v.upper() for k, v in DUCK_TYPES.items()},
    "numeric": "VARCHAR",
    "float4": "FLOAT",
}


def _udf_arrow(values: pa.Array, ctype: ColumnType) -> pa.Array:
    """Storage values as the UDF's DuckDB result type takes them from Arrow."""
    name = ctype.base.name
    if ctype.is_array:
        flat = _udf_arrow(values.flatten(), ColumnType(ctype.base, ctype.typmod))
        return pa.ListArray.from_arrays(values.offsets, flat, mask=values.is_null())
    if name == "numeric" and pa.types.is_decimal(values.type):
        return values.cast(pa.string())
    if name == "interval":
        us = np.asarray(values.field("microseconds").fill_null(0), dtype=np.int64)
        if (np.abs(us) > (2**63 - 1) // 1000).any():
            raise PgError(
                "0A000",
                "intervals with more than 2562047 hours are not supported in expressions",
            )
        parts = [values.field("months").to_pylist(), values.field("days").to_pylist(), values.field("microseconds").to_pylist()]
        return pa.array(
            [None if m is None else (m, d, u * 1000) for m, d, u in zip(*parts, strict=True)],
            pa.month_day_nano_interval(),
        )
    return values


OUTPUT_PREFIX = "wpx_output_"
#: Types whose text DuckDB's cast to VARCHAR does not print as PostgreSQL's output function
#: does (bytea as escapes, floats and times in its own notation); the rest print the same
#: (integers, booleans as bool→text's 'true') or are stored as their text already. numeric
#: (below) only needs DECIMAL(p,p)'s leading zero back.
_OUTPUT_SCALARS = frozenset({"bytea", "float4", "float8", "date", "time", "timestamp", "timestamptz", "interval"})


#: Scalars other than floats (printed their own way) whose cast to text is their output function.
PRINTED_BY_OUTPUT = _OUTPUT_SCALARS - {"float4", "float8"}


def needs_output_call(ctype: ColumnType) -> bool:
    """Whether a cast of values of ``ctype`` to text must use the output function."""
    if ctype.is_array:
        return ctype.base.name != "numeric"
    return ctype.base.name in _OUTPUT_SCALARS or ctype.base.name == "numeric"


#: The extra_float_digits of the session whose statement is being rewritten (set by
#: ``rewrite`` for each statement): a float's cast to text prints as float8out prints it
#: then. 1 to 3 all print the shortest exact text, as 1.
FLOAT_DIGITS: ContextVar[int] = ContextVar("float_digits", default=1)
_DIGITS_SUFFIX = "_digits"
#: The bytea_output of the session whose statement is being rewritten (set by ``rewrite``):
#: a bytea's cast to text prints as byteaout prints it then.
BYTEA_OUTPUT: ContextVar[str] = ContextVar("bytea_output", default="hex")
_ESCAPE_SUFFIX = "_escape"
#: timestamptz_out in a session zone other than UTC, named by the UDF's second argument.
_ZONE_SUFFIX = "_zone"


def output_call(arg: ast.Node, ctype: ColumnType) -> ast.Node:
    """``arg`` (values of ``ctype``) as text, through ``ctype``'s output function — what
    PostgreSQL's cast to text is for every type but bool and the string types."""
    if ctype.base.name == "numeric" and not ctype.is_array:
        return numeric_exprs.decimal_text(arg)  # (a DuckDB expression, no UDF)
    fn = OUTPUT_PREFIX + ctype.base.name + ("_array" if ctype.is_array else "")
    digits = FLOAT_DIGITS.get()
    zone = session_zone.ZONE.get()
    if ctype.base.name == "timestamptz" and zone:
        return call(fn + _ZONE_SUFFIX, arg, str_const(zone))  # (the session's TimeZone, not UTC)
    if ctype.base.name in ("float4", "float8") and digits <= 0:
        return call(fn + _DIGITS_SUFFIX, arg, int_const(digits))
    if ctype.base.name == "bytea" and BYTEA_OUTPUT.get() == "escape":
        return call(fn + _ESCAPE_SUFFIX, arg)
    return call(fn, arg)


ELEMENTS_SUFFIX = "_elements"


def elements_call(arg: ast.Node, float_type: str) -> ast.Node:
    """A float array as the text of each element (``array_to_string`` joins its elements'
    output-function text, where DuckDB's would read ``100000000000000.0``)."""
    return call(OUTPUT_PREFIX + float_type + ELEMENTS_SUFFIX, arg, int_const(FLOAT_DIGITS.get()))


def _elements(base: str) -> Callable[..., pa.Array]:

    elem = ColumnType(_BASES[base])

    def fn(values: pa.Array | pa.ChunkedArray, digits: pa.Array) -> pa.Array:
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        n = int(digits[0].as_py()) if len(digits) else 1
        texts = encode_text_arrow(elem, values.flatten(), extra_float_digits=n).cast(pa.string())
        return pa.ListArray.from_arrays(values.offsets, texts, mask=values.is_null())

    fn.__name__ = f"output_{base}{ELEMENTS_SUFFIX}"
    return fn


def output_udfs() -> list[tuple[str, Callable[..., pa.Array], list[str], str]]:
    """(name, function, argument types, result type) of ``wpx_output_<type>[_array](x)``."""

    def make(ct: ColumnType) -> Callable[..., pa.Array]:
        def fn(values: pa.Array | pa.ChunkedArray) -> pa.Array:
            return encode_text_arrow(ct, values).cast(pa.string())

        fn.__name__ = f"output_{ct.base.name}{'_array' if ct.is_array else ''}"
        return fn

    def make_digits(ct: ColumnType) -> Callable[..., pa.Array]:
        def fn(values: pa.Array | pa.ChunkedArray, digits: pa.Array) -> pa.Array:
            n = int(digits[0].as_py()) if len(digits) else 1  # (a constant: one value)
            return encode_text_arrow(ct, values, extra_float_digits=n).cast(pa.string())

        fn.__name__ = f"output_{ct.base.name}{'_array' if ct.is_array else ''}{_DIGITS_SUFFIX}"
        return fn

    def make_escape(ct: ColumnType) -> Callable[..., pa.Array]:
        def fn(values: pa.Array | pa.ChunkedArray) -> pa.Array:
            return encode_text_arrow(ct, values, bytea_output="escape").cast(pa.string())

        fn.__name__ = f"output_{ct.base.name}{'_array' if ct.is_array else ''}{_ESCAPE_SUFFIX}"
        return fn

    def make_zone(ct: ColumnType) -> Callable[..., pa.Array]:
        def fn(values: pa.Array | pa.ChunkedArray, zone: pa.Array) -> pa.Array:
            z = pgtz.zone_of(str(zone[0].as_py())) if len(zone) else pgtz.UTC_ZONE  # (a constant)
            return encode_text_arrow(ct, values, zone=z).cast(pa.string())

        fn.__name__ = f"output_{ct.base.name}{'_array' if ct.is_array else ''}{_ZONE_SUFFIX}"
        return fn

    out = []
    for base in _BASES.values():
        for is_array in (False, True):
            ct = ColumnType(base, -1, is_array)
            if not needs_output_call(ct) or (base.name == "numeric" and not is_array):
                continue  # (numeric's is a DuckDB expression)
            arg = _UDF_RESULT[base.name] + ("[]" if is_array else "")
            name = OUTPUT_PREFIX + base.name + ("_array" if is_array else "")
            out.append((name, make(ct), [arg], "VARCHAR"))
            if base.name == "bytea":
                out.append((name + _ESCAPE_SUFFIX, make_escape(ct), [arg], "VARCHAR"))
            if base.name == "timestamptz":
                out.append((name + _ZONE_SUFFIX, make_zone(ct), [arg, "VARCHAR"], "VARCHAR"))
            if base.name in ("float4", "float8"):
                out.append((name + _DIGITS_SUFFIX, make_digits(ct), [arg, "INTEGER"], "VARCHAR"))
                if is_array:
                    out.append((OUTPUT_PREFIX + base.name + ELEMENTS_SUFFIX, _elements(base.name), [arg, "INTEGER"], "VARCHAR[]"))
    return out


def install(con: Any) -> None:
    """Create the input and output UDFs in ``con``'s database, once. DuckDB keeps a Python
    UDF only while the connection that created it is open: the server passes its own
    long-lived connection (and tests that run rewritten SQL on a bare connection, theirs)."""
    have = {r[0] for r in con.execute(
        "SELECT function_name FROM duckdb_functions() WHERE function_name LIKE 'wpx_%'"
    ).fetchall()}
    numeric_key = (numeric_text.KEY_UDF, numeric_text.key_udf, ["VARCHAR"], "VARCHAR")
    numeric_grouped = (numeric_text.GROUPED_UDF, numeric_text.grouped_udf, ["VARCHAR"], "VARCHAR")
    for name, fn, args, ret in [*input_udfs(), *output_udfs(), numeric_key, numeric_grouped, *datetime_make.udfs(), *datetime_bin.udfs()]:
        if name not in have:
            con.create_function(name, keep_errors(fn), args, ret, type="arrow")
    if numeric_text.GROUPED_KEY_UDF not in have:  # (volatile: DuckDB moves a pure key past GROUP BY)
        con.create_function(numeric_text.GROUPED_KEY_UDF, keep_errors(numeric_text.grouped_udf), ["VARCHAR"], "VARCHAR", type="arrow", side_effects=True)
    for name, fn, args, ret in [*numeric_math.udfs(), *float_math.udfs(), *float_aggs.udfs(), *width_bucket.udfs()]:  # (NULL handled by each)
        if name not in have:
            con.create_function(name, keep_errors(fn), args, ret, type="arrow", null_handling="special")
    formatting_udfs.install(con, have)
    bytea_text.install(con, have)
    regex_funcs.install(con, have)
    ident_funcs.install(con, have)

    jsonb_ops.install(con)
    jsonb_edit.install(con)
    json_exprs.install(con)


def input_udfs() -> list[tuple[str, Callable[..., pa.Array], list[str], str]]:
    """(name, function, DuckDB argument types, DuckDB result type) of the input UDFs:
    ``wpx_input_<type>[_array](text VARCHAR, typmod INTEGER, explicit BOOLEAN, date_order
    VARCHAR)``, vectorised over Arrow arrays. The functions raise plain PgErrors (see
    functions.keep_errors)."""
    out = []
    for base in _BASES.values():
        for is_array in (False, True):
            ct = ColumnType(base, -1, is_array)
            result = _UDF_RESULT[base.name] + ("[]" if is_array else "")
            out.append((udf_name(ct), _udf(base.name, is_array), ["VARCHAR", "INTEGER", "BOOLEAN", "VARCHAR"], result))
    return out


def _udf(base: str, is_array: bool) -> Callable[..., pa.Array]:
    def fn(text: pa.Array | pa.ChunkedArray, typmod: pa.Array, explicit: pa.Array, order: pa.Array) -> pa.Array:
        if isinstance(text, pa.ChunkedArray):
            text = text.combine_chunks()
        if len(text) == 0:
            ct = ColumnType(_BASES[base], -1, is_array)
            return _udf_arrow(pa.array([], ct.arrow), ct)
        ct = ColumnType(_BASES[base], int(typmod[0].as_py()), is_array)
        try:
            values = input_values(text, ct, explicit=bool(explicit[0].as_py()), date_order=str(order[0].as_py()))
        except PgError as e:
            raise PgError(e.sqlstate, e.message, detail=e.detail, hint=e.hint) from None
        return _udf_arrow(values, ct)

    fn.__name__ = f"input_{base}{'_array' if is_array else ''}"
    return fn
