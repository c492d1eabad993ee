"""PgErrors raised inside DuckDB UDFs, carried back whole.

DuckDB re-raises an exception from a Python UDF as InvalidInputException with its text
only; the SQLSTATE, DETAIL and HINT would be lost. A UDF wrapped in :func:`keep_errors`
remembers each PgError by its message, and :func:`udf_error` gives it back to whoever
translates DuckDB's exception (the executor, the engine, the literal casts)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from decoding.errors import PgError

#: PgErrors raised inside UDFs, by message: DuckDB re-raises them as InvalidInputException
#: with the text only, and the executor turns them back into the original (with SQLSTATE).
_udf_errors: dict[str, PgError] = {}
_UDF_PREFIX = "Python exception occurred while executing the UDF: PgError: "


def udf_error(message: str) -> PgError | None:
    i = message.find(_UDF_PREFIX)
    if i < 0:
        return None
    return _udf_errors.pop(message[i + len(_UDF_PREFIX) :].strip(), None)


def keep_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except PgError as e:
            if len(_udf_errors) > 100:
                _udf_errors.clear()
            _udf_errors[str(e.message).strip()] = e
            raise

    return call


def strict_rows(fn: Callable[..., Any], out_type: pa.DataType, nargs: int) -> Callable[..., pa.Array]:
    """An Arrow UDF applying ``fn`` to each row of its ``nargs`` arguments; NULL where an
    argument is NULL (a strict function's rule)."""

    def udf(*cols: pa.Array | pa.ChunkedArray) -> pa.Array:
        rows = zip(*(c.to_pylist() for c in cols), strict=True)
        return pa.array([None if any(v is None for v in row) else fn(*row) for row in rows], out_type)

    # (DuckDB counts the function's parameters: one per argument)
    udf.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(f"a{i}", inspect.Parameter.POSITIONAL_ONLY) for i in range(nargs)]
    )
    udf.__name__ = fn.__name__
    return udf
