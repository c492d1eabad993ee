"""jsonb operators DuckDB has no equivalent of, as UDFs over jsonb's text (the lake keeps a
jsonb value as PostgreSQL's output text).

``@>`` / ``<@`` follow PostgreSQL 15's ``JsonbDeepContains`` (src/backend/utils/adt/
jsonb_util.c): an object contains another when every key of the other is present with a
contained value; an array contains another when each of the other's elements is equal to
(scalars) or contained in (containers) some element of it; a top-level scalar is a
one-element "raw scalar" array, which a plain array may contain but which contains no plain
array. Numbers compare as numerics (``1`` equals ``1.0``). DuckDB's ``json_contains`` has
other rules (``{"a": [1, 2]}`` contains ``{"a": 1}`` there), so it is not used.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pyarrow as pa

from decoding.errors import PgError
from decoding.pgvalues.textin import jsonb_concat
from walsender_proxy.sql.udf_errors import keep_errors

UDF_CONTAINS = "wpx_jsonb_contains"
UDF_CONCAT = "wpx_jsonb_concat"


class _Raw(list):  # type: ignore[type-arg]
    """A top-level scalar, as PostgreSQL stores it: a one-element raw-scalar array."""


def _load(text: str) -> Any:
    try:
        v = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    except ValueError:
        raise PgError("22P02", "invalid input syntax for type json") from None
    return v if isinstance(v, dict | list) else _Raw([v])


def _scalar_key(v: Any) -> tuple[int, Any]:
    if v is None:
        return (0, None)
    if isinstance(v, bool):
        return (1, v)
    if isinstance(v, Decimal):
        return (2, v)
    return (3, v)


def _is_container(v: Any) -> bool:
    return isinstance(v, dict | list)


def contains(val: Any, tmpl: Any) -> bool:
    """Whether jsonb ``val`` contains ``tmpl`` (both parsed by ``_load`` at top level)."""
    if isinstance(val, dict):
        if not isinstance(tmpl, dict):
            return False
        for k, tv in tmpl.items():
            if k not in val:
                return False
            vv = val[k]
            if _is_container(tv) or _is_container(vv):
                if isinstance(tv, dict) != isinstance(vv, dict) or not _is_container(vv) or not _is_container(tv):
                    return False
                if not contains(vv, tv):
                    return False
            elif _scalar_key(vv) != _scalar_key(tv):
                return False
        return True
    if isinstance(val, list):
        if not isinstance(tmpl, list) or isinstance(tmpl, dict):
            return False
        if isinstance(val, _Raw) and not isinstance(tmpl, _Raw):
            return False
        scalars = {_scalar_key(e) for e in val if not _is_container(e)}
        nested = [e for e in val if _is_container(e)]
        for e in tmpl:
            if not _is_container(e):
                if _scalar_key(e) not in scalars:
                    return False
            elif not any(isinstance(n, dict) == isinstance(e, dict) and contains(n, e) for n in nested):
                return False
        return True
    return False


def _contains_udf(a: pa.Array | pa.ChunkedArray, b: pa.Array | pa.ChunkedArray) -> pa.Array:
    out = []
    for x, y in zip(a.to_pylist(), b.to_pylist(), strict=True):
        out.append(None if x is None or y is None else contains(_load(x), _load(y)))
    return pa.array(out, pa.bool_())


def _concat_udf(a: pa.Array | pa.ChunkedArray, b: pa.Array | pa.ChunkedArray) -> pa.Array:
    return pa.array(
        [None if x is None or y is None else jsonb_concat(x, y) for x, y in zip(a.to_pylist(), b.to_pylist(), strict=True)],
        pa.string(),
    )


def install(con: Any) -> None:
    """Create the jsonb operator UDFs in ``con``'s database, once."""
    have = {r[0] for r in con.execute(
        "SELECT function_name FROM duckdb_functions() WHERE function_name IN (?, ?)", [UDF_CONTAINS, UDF_CONCAT]
    ).fetchall()}
    if UDF_CONTAINS not in have:
        con.create_function(UDF_CONTAINS, keep_errors(_contains_udf), ["VARCHAR", "VARCHAR"], "BOOLEAN", type="arrow")
    if UDF_CONCAT not in have:
        con.create_function(UDF_CONCAT, keep_errors(_concat_udf), ["VARCHAR", "VARCHAR"], "VARCHAR", type="arrow")
