"""``date_bin(stride, source, origin)`` as PostgreSQL 15's ``timestamp_bin`` and
``timestamptz_bin`` compute it: ``source`` floored to the start of its bin of width
``stride`` counted from ``origin``, in microseconds of the timestamps' own values (a
timestamptz bins its UTC instant), with PostgreSQL's errors: 0A000 for a stride with months
or years, 22008 for a stride not above zero, an infinite origin or a result out of range;
an infinite source is returned as it is.

DuckDB's ``time_bucket`` is not this function (other origins, other errors), so a UDF over
Arrow arrays computes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa
from pglast import ast

from decoding.errors import PgError
from walsender_proxy.sql.nodes import call, cast

NAME = "wpx_date_bin"
_USECS_PER_DAY = 86_400_000_000
#: DuckDB's infinite timestamps, as Arrow gives their microseconds.
_INFINITY, _NEG_INFINITY = 2**63 - 1, -(2**63 - 1)
#: PostgreSQL's first timestamp (4713 BC) in microseconds from 1970; the last the lake
#: holds is below DuckDB's infinity.
_MIN_US = -210866803200000000
_TIMESTAMPISH = frozenset({None, "unknown", "date", "timestamp", "timestamptz"})


def call_of(args: Sequence[ast.Node], types: Sequence[str | None]) -> tuple[ast.Node, str] | None:
    """The UDF call for PostgreSQL's ``date_bin(args)`` and its result type; None when no
    date_bin takes these argument types."""
    if len(args) != 3 or types[0] not in (None, "unknown", "interval") or any(t not in _TIMESTAMPISH for t in types[1:]):
        return None
    # (func_select_candidate: an exact timestamptz or timestamp argument decides; else the
    # preferred type of the category, timestamptz)
    kinds = set(types[1:])
    result = "timestamp" if "timestamp" in kinds and "timestamptz" not in kinds else "timestamptz"
    duck = "TIMESTAMP" if result == "timestamp" else "TIMESTAMPTZ"
    stride = cast(args[0], "INTERVAL") if types[0] == "unknown" else args[0]
    return call(NAME + ("" if result == "timestamp" else "_tz"), stride, cast(args[1], duck), cast(args[2], duck)), result


def _bin(stride: pa.Array, source: pa.Array, origin: pa.Array) -> pa.Array:
    strides = stride.to_pylist()
    src = source.cast(pa.int64()).to_pylist()
    org = origin.cast(pa.int64()).to_pylist()
    out: list[int | None] = []
    for iv, ts, o in zip(strides, src, org, strict=True):
        if iv is None or ts is None or o is None:
            out.append(None)
            continue
        if ts in (_INFINITY, _NEG_INFINITY):
            out.append(ts)
            continue
        if o in (_INFINITY, _NEG_INFINITY):
            raise PgError("22008", "origin out of range")
        if iv.months:
            raise PgError("0A000", "timestamps cannot be binned into intervals containing months or years")
        usecs = iv.days * _USECS_PER_DAY + iv.nanoseconds // 1000
        if usecs <= 0:
            raise PgError("22008", "stride must be greater than zero")
        result = o + (ts - o) // usecs * usecs
        if not _MIN_US <= result < _INFINITY:
            raise PgError("22008", "timestamp out of range")
        out.append(result)
    return pa.array(out, pa.int64()).cast(source.type)


def udfs() -> list[tuple[str, Callable[..., pa.Array], list[str], str]]:
    """(name, Arrow function, DuckDB argument types, DuckDB result type); NULL in, NULL
    out (date_bin is strict)."""
    return [
        (NAME, _bin, ["INTERVAL", "TIMESTAMP", "TIMESTAMP"], "TIMESTAMP"),
        (NAME + "_tz", _bin, ["INTERVAL", "TIMESTAMPTZ", "TIMESTAMPTZ"], "TIMESTAMPTZ"),
    ]
