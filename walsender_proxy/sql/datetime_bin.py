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

import numpy as np
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


_MONTH_DAY_NANO = np.dtype([("months", "<i4"), ("days", "<i4"), ("nanos", "<i8")])
#: Rows whose arithmetic could leave int64 are computed in Python integers.
_SAFE = 2**62
_ERRORS = {
    1: ("22008", "origin out of range"),
    2: ("0A000", "timestamps cannot be binned into intervals containing months or years"),
    3: ("22008", "stride must be greater than zero"),
    4: ("22008", "timestamp out of range"),
}


def _interval_parts(stride: pa.Array) -> np.ndarray:
    """An Arrow month_day_nano interval array as (months, days, nanos) records."""
    stride = stride.combine_chunks() if isinstance(stride, pa.ChunkedArray) else stride
    data = np.frombuffer(stride.buffers()[1], dtype=_MONTH_DAY_NANO, count=stride.offset + len(stride))
    return data[stride.offset :]


def _bin_one(months: int, days: int, nanos: int, ts: int, o: int) -> tuple[int, int]:
    """One row in Python integers: (error code, result)."""
    if o in (_INFINITY, _NEG_INFINITY):
        return 1, 0
    if months:
        return 2, 0
    usecs = days * _USECS_PER_DAY + nanos // 1000
    if usecs <= 0:
        return 3, 0
    result = o + (ts - o) // usecs * usecs
    return (0, result) if _MIN_US <= result < _INFINITY else (4, 0)


def _bin(stride: pa.Array, source: pa.Array, origin: pa.Array) -> pa.Array:
    """The bins, vectorised; the first failing row (in row order) raises its error, as
    PostgreSQL's row-by-row evaluation would."""
    n = len(source)
    parts = _interval_parts(stride)
    null = (stride.is_null().to_numpy(zero_copy_only=False) | source.is_null().to_numpy(zero_copy_only=False)
            | origin.is_null().to_numpy(zero_copy_only=False))  # fmt: skip
    ts = source.cast(pa.int64()).fill_null(0).to_numpy()
    o = origin.cast(pa.int64()).fill_null(0).to_numpy()
    months, days, nanos = parts["months"], parts["days"].astype(np.int64), parts["nanos"]
    keep = null | (ts == _INFINITY) | (ts == _NEG_INFINITY)  # (an infinite source is returned as it is)
    big = ~keep & ((np.abs(ts) >= _SAFE) | (np.abs(o) >= _SAFE) | (np.abs(days) >= 100_000_000)) & (o != _INFINITY) & (o != _NEG_INFINITY)
    err = np.zeros(n, dtype=np.int8)
    err[~keep & ((o == _INFINITY) | (o == _NEG_INFINITY))] = 1
    err[(err == 0) & ~keep & (months != 0)] = 2
    usecs = days * _USECS_PER_DAY + nanos // 1000
    err[(err == 0) & ~keep & ~big & (usecs <= 0)] = 3
    calc = ~keep & ~big & (err == 0)
    safe_usecs = np.where(calc, usecs, 1)
    result = np.where(calc, o + np.floor_divide(ts - o, safe_usecs) * safe_usecs, ts)
    err[calc & (result < _MIN_US)] = 4
    for i in np.flatnonzero(big & (err == 0)):
        err[i], r = _bin_one(int(months[i]), int(days[i]), int(nanos[i]), int(ts[i]), int(o[i]))
        result[i] = r
    if err.any():
        raise PgError(*_ERRORS[int(err[np.argmax(err > 0)])])
    return pa.array(result, pa.int64(), mask=null).cast(source.type)


def udfs() -> list[tuple[str, Callable[..., pa.Array], list[str], str]]:
    """(name, Arrow function, DuckDB argument types, DuckDB result type); NULL in, NULL
    out (date_bin is strict)."""
    return [
        (NAME, _bin, ["INTERVAL", "TIMESTAMP", "TIMESTAMP"], "TIMESTAMP"),
        (NAME + "_tz", _bin, ["INTERVAL", "TIMESTAMPTZ", "TIMESTAMPTZ"], "TIMESTAMPTZ"),
    ]
