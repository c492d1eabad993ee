"""to_char, to_number, to_date and to_timestamp(text, text) as DuckDB calls of Arrow UDFs
over :mod:`formatting`'s rules.

DuckDB's own ``to_char``-like functions (``strftime``, ``format``) speak another template
language, so every call PostgreSQL would make to one of formatting.c's functions becomes a
call of a ``wpx_fmt_*`` UDF here, chosen by the argument's PostgreSQL type the way
PostgreSQL resolves the overload: ``int2``, which has no version of its own, goes to
``float8``'s (the preferred type of its category), ``date`` to ``timestamptz``'s (likewise),
``time`` to ``interval``'s (its only implicit cast to one). A numeric goes as its exact text
(never through a double). Types PostgreSQL has no version for give its 42883 (the rewriter
words it), an untyped literal its 42725.

The UDFs take whole Arrow arrays; each value is formatted in Python, the template parsed
once per distinct string (formatting's caches)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
from pglast import ast

from decoding import pgtz
from decoding.errors import PgError
from walsender_proxy.sql import formatting as fm
from walsender_proxy.sql import numeric_math, session_zone
from walsender_proxy.sql.nodes import call, cast, str_const
from walsender_proxy.sql.numeric_exprs import Operand, as_text
from walsender_proxy.sql.udf_errors import keep_errors

PREFIX = "wpx_fmt_"
#: The functions this module answers (with two arguments).
FUNCTIONS = frozenset({"to_char", "to_number", "to_date", "to_timestamp"})

_TEXT_TYPES = frozenset({"text", "varchar", "bpchar", "name", "char", "unknown"})
#: to_char's first argument: PostgreSQL type → (UDF suffix, DuckDB type of the argument).
_TO_CHAR = {
    "int2": ("float8", "double"),  # (float8 is the preferred type of the numeric category)
    "int4": ("int4", "bigint"),
    "int8": ("int8", "bigint"),
    "float4": ("float4", "real"),
    "float8": ("float8", "double"),
    "numeric": ("numeric", None),
    "timestamp": ("timestamp", "timestamp"),
    "timestamptz": ("timestamptz", "timestamptz"),
    "date": ("date", "date"),
    "interval": ("interval", "interval"),
    "time": ("time", "time"),
}


#: How PostgreSQL names a template's type in its errors.
_SHOWN = {"unknown": "unknown", "text": "text", "varchar": "character varying", "name": "name", "char": '"char"'}


def _not_unique(name: str, template: str) -> PgError:
    return PgError(
        "42725", f"function {name}(unknown, {_SHOWN[template]}) is not unique",
        hint="Could not choose a best candidate function. You might need to add explicit type casts.",
    )  # fmt: skip


def rewrite(name: str, args: Sequence[Operand]) -> tuple[ast.Node, str] | None:
    """The DuckDB call for ``name(value, template)`` and its PostgreSQL result type; None
    when PostgreSQL has no such function for these argument types (42883)."""
    value, template = args
    if template.type is not None and template.type not in _TEXT_TYPES:
        return None
    fmt = cast(template.node, "varchar")
    if name != "to_char":
        if value.type is not None and value.type not in _TEXT_TYPES:
            return None
        ret = {"to_number": "numeric", "to_date": "date", "to_timestamp": "timestamptz"}[name]
        if name == "to_timestamp":
            session_zone.refuse_outside_utc("to_timestamp(text, text)")  # (it reads in UTC)
        return call(PREFIX + name, cast(value.node, "varchar"), fmt), ret
    if value.type == "unknown" and (template.type or "unknown") in _SHOWN:
        raise _not_unique(name, template.type or "unknown")
    if value.type is None or value.type == "unknown":
        raise PgError("0A000", "to_char() of a value of unknown type is not supported by walsender-proxy")
    spec = _TO_CHAR.get(value.type)
    if spec is None:
        return None
    suffix, duck = spec
    node = as_text(value) if duck is None else cast(value.node, duck)
    zone = session_zone.ZONE.get()
    if suffix in ("timestamptz", "date") and zone:
        return call(PREFIX + "to_char_" + suffix + "_zone", node, fmt, str_const(zone)), "text"
    return call(PREFIX + "to_char_" + suffix, node, fmt), "text"


# ------------------------------------------------------------------------- the UDFs


def _pylist(arr: pa.Array | pa.ChunkedArray) -> list[Any]:
    return arr.to_pylist()


def _ints(arr: pa.Array | pa.ChunkedArray) -> list[int | None]:
    """Timestamps, dates and times as their integers (microseconds, days): the infinities
    of the lake are integers no Python datetime holds."""
    t = arr.type
    if pa.types.is_date32(t):
        return arr.cast(pa.int32()).to_pylist()
    return arr.cast(pa.int64()).to_pylist()


def _intervals(arr: pa.Array | pa.ChunkedArray) -> list[tuple[int, int, int] | None]:
    return [None if v is None else (v.months, v.days, v.nanoseconds // 1000) for v in arr.to_pylist()]


def _map(values: list[Any], fmts: list[Any], fn: Callable[[Any, str], Any]) -> list[Any]:
    """``fn(value, template)`` row by row (NULL in either gives NULL: the functions are
    strict)."""
    return [None if v is None or f is None else fn(v, f) for v, f in zip(values, fmts, strict=True)]


def _to_char(read: Callable[[Any], list[Any]], fn: Callable[[Any, str], str | None]) -> Callable[..., pa.Array]:
    def udf(values: pa.Array | pa.ChunkedArray, fmts: pa.Array | pa.ChunkedArray) -> pa.Array:
        return pa.array(_map(read(values), _pylist(fmts), fn), pa.string())

    return udf


def _zoned(read: Callable[[Any], list[Any]], fn: Callable[[Any, str, pgtz.Zone], str | None]) -> Callable[..., pa.Array]:
    """A to_char UDF whose third argument names the session's zone (a constant)."""

    def udf(values: pa.Array | pa.ChunkedArray, fmts: pa.Array | pa.ChunkedArray, zones: pa.Array | pa.ChunkedArray) -> pa.Array:
        names = _pylist(zones)
        zone = pgtz.zone_of(names[0]) if names and names[0] else pgtz.UTC_ZONE
        return pa.array(_map(read(values), _pylist(fmts), lambda v, f: fn(v, f, zone)), pa.string())

    return udf


def _numeric_to_char(v: str, f: str) -> str:
    return fm.numeric_to_char(numeric_math.parse(v), f)


def _to_number(values: pa.Array | pa.ChunkedArray, fmts: pa.Array | pa.ChunkedArray) -> pa.Array:
    return pa.array(_map(_pylist(values), _pylist(fmts), fm.to_number), pa.string())


def _to_date(values: pa.Array | pa.ChunkedArray, fmts: pa.Array | pa.ChunkedArray) -> pa.Array:
    return pa.array(_map(_pylist(values), _pylist(fmts), fm.to_date), pa.date32())


def _to_timestamp(values: pa.Array | pa.ChunkedArray, fmts: pa.Array | pa.ChunkedArray) -> pa.Array:
    return pa.array(_map(_pylist(values), _pylist(fmts), fm.to_timestamp), pa.timestamp("us", tz="UTC"))


def udfs() -> list[tuple[str, Callable[..., pa.Array], list[str], str]]:
    """(name, Arrow function, DuckDB argument types, DuckDB result type) of every UDF."""
    to_char: dict[str, tuple[Callable[..., pa.Array], str]] = {
        "int4": (_to_char(_pylist, lambda v, f: fm.int_to_char(v, f, bits=32)), "BIGINT"),
        "int8": (_to_char(_pylist, lambda v, f: fm.int_to_char(v, f, bits=64)), "BIGINT"),
        "float4": (_to_char(_pylist, lambda v, f: fm.float_to_char(v, f, float4=True)), "FLOAT"),
        "float8": (_to_char(_pylist, lambda v, f: fm.float_to_char(v, f, float4=False)), "DOUBLE"),
        "numeric": (_to_char(_pylist, _numeric_to_char), "VARCHAR"),
        "timestamp": (_to_char(_ints, lambda v, f: fm.timestamp_to_char(v, f, tz=False)), "TIMESTAMP"),
        "timestamptz": (_to_char(_ints, lambda v, f: fm.timestamp_to_char(v, f, tz=True)), "TIMESTAMPTZ"),
        "date": (_to_char(_ints, fm.date_to_char), "DATE"),
        "interval": (_to_char(_intervals, lambda v, f: fm.interval_to_char(*v, f)), "INTERVAL"),
        "time": (_to_char(_ints, lambda v, f: fm.interval_to_char(0, 0, v, f)), "TIME"),
    }
    out = [(PREFIX + "to_char_" + k, fn, [arg, "VARCHAR"], "VARCHAR") for k, (fn, arg) in to_char.items()]
    out += [
        (PREFIX + "to_char_timestamptz_zone", _zoned(_ints, lambda v, f, z: fm.timestamp_to_char(v, f, tz=True, zone=z)), ["TIMESTAMPTZ", "VARCHAR", "VARCHAR"], "VARCHAR"),
        (PREFIX + "to_char_date_zone", _zoned(_ints, fm.date_to_char_in_zone), ["DATE", "VARCHAR", "VARCHAR"], "VARCHAR"),
    ]  # fmt: skip
    out += [
        (PREFIX + "to_number", _to_number, ["VARCHAR", "VARCHAR"], "VARCHAR"),
        (PREFIX + "to_date", _to_date, ["VARCHAR", "VARCHAR"], "DATE"),
        (PREFIX + "to_timestamp", _to_timestamp, ["VARCHAR", "VARCHAR"], "TIMESTAMPTZ"),
    ]
    return out


def install(con: Any, have: frozenset[str] | set[str] = frozenset()) -> None:
    """Create the UDFs in ``con``'s database (those not in ``have`` already)."""
    for name, fn, args, ret in udfs():
        if name not in have:
            con.create_function(name, keep_errors(fn), args, ret, type="arrow", null_handling="special")
