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
from decoding.pgvalues.textin import jsonb_concat, jsonb_in
from walsender_proxy.sql.udf_errors import keep_errors

UDF_CONTAINS = "wpx_jsonb_contains"
UDF_CONCAT = "wpx_jsonb_concat"
UDF_SORT_KEY = "wpx_jsonb_sort_key"
UDF_GROUPED = "wpx_jsonb_grouped"
#: The same, volatile, for a GROUP BY key or a SELECT DISTINCT value: DuckDB computes a
#: pure function of a grouping key after grouping (on one value a group), or not at all.
UDF_GROUPED_KEY = "wpx_jsonb_grouped_key"
UDF_NUMBER = "wpx_jsonb_number"
UDF_EXISTS = "wpx_jsonb_exists"
UDF_EXISTS_ANY = "wpx_jsonb_exists_any"
UDF_EXISTS_ALL = "wpx_jsonb_exists_all"


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


# jsonb's btree order (compareJsonbContainers in jsonb_util.c), as bytes that sort the same
# way: a value's type first (null < string < number < boolean < array < object), then an
# array's element count and an object's pair count, then the elements (an object's pairs in
# its storage order: shorter key first, then bytewise). A top-level scalar is a one-element
# "raw scalar" array that sorts before a plain array of one element. Strings compare
# bytewise (the proxy's collation is C), numbers as numerics (1.0 equals 1.00).
_NULL, _STRING, _NUMBER, _BOOL, _ARRAY, _OBJECT = 0x00, 0x01, 0x02, 0x03, 0x10, 0x11


class _Pairs(list):  # type: ignore[type-arg]
    """An object's (key, value) pairs as written (json.loads' object_pairs_hook)."""


def _number_key(d: Decimal) -> bytes:
    sign, digits, exp = d.as_tuple()
    assert isinstance(exp, int)  # (JSON has no NaN or Infinity)
    ds = "".join(map(str, digits)).lstrip("0")
    if not ds:
        return b"\x02"
    stripped = ds.rstrip("0")
    exp += len(ds) - len(stripped)
    magnitude = (len(stripped) + exp + 2**31).to_bytes(4, "big") + stripped.encode() + b"\x00"
    return b"\x01" + bytes(255 - b for b in magnitude) if sign else b"\x03" + magnitude


def _value_key(v: Any, out: bytearray) -> None:
    if v is None:
        out.append(_NULL)
    elif isinstance(v, bool):
        out += bytes((_BOOL, int(v)))
    elif isinstance(v, Decimal):
        out.append(_NUMBER)
        out += _number_key(v)
    elif isinstance(v, str):
        out.append(_STRING)
        out += v.encode() + b"\x00"  # (jsonb holds no NUL character)
    elif isinstance(v, _Pairs):
        out.append(_OBJECT)
        out += len(v).to_bytes(4, "big")
        for k, x in sorted(v, key=lambda p: (len(p[0].encode()), p[0].encode())):
            _value_key(k, out)
            _value_key(x, out)
    else:
        out.append(_ARRAY)
        out += len(v).to_bytes(4, "big") + b"\x01"
        for x in v:
            _value_key(x, out)


def sort_key(text: str) -> bytes:
    """The bytes that order jsonb values as PostgreSQL's jsonb comparison operators do."""
    try:
        v = json.loads(text, parse_float=Decimal, parse_int=Decimal, object_pairs_hook=_Pairs)
    except ValueError:
        raise PgError("22P02", "invalid input syntax for type json") from None
    out = bytearray()
    if isinstance(v, list):
        _value_key(v, out)
    else:  # a raw scalar: before any plain array of one element
        out += bytes((_ARRAY,)) + (1).to_bytes(4, "big") + b"\x00"
        _value_key(v, out)
    return bytes(out)


def _sort_key_udf(a: pa.Array | pa.ChunkedArray) -> pa.Array:
    return pa.array([None if x is None else sort_key(x) for x in a.to_pylist()], pa.binary())


def _scale_free(number: str) -> Decimal:
    if "." in number and number.endswith("0"):  # (jsonb's text writes no exponent)
        raise PgError(
            "0A000",
            f"grouping or deduplicating jsonb values that hold a number written with trailing zeros ({number}) "
            "is not supported by walsender-proxy",
            hint="PostgreSQL takes 1.50 and 1.5 for one value; group by a cast of the value, or by its ->> text.",
        )
    return Decimal(number)


def grouped(text: str) -> str:
    """``text`` when jsonb values equal to it all have its text (so grouping by the text
    is grouping by jsonb's equality): it holds no number with trailing fractional zeros,
    the only way two equal jsonb values are written differently. 0A000 otherwise."""
    json.loads(text, parse_float=_scale_free)
    return jsonb_in(text)  # (as jsonb prints it: a value from another source may be another text)


def _grouped_udf(a: pa.Array | pa.ChunkedArray) -> pa.Array:
    return pa.array([None if x is None else grouped(x) for x in a.to_pylist()], pa.string())


_KIND = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}


def number_text(text: str) -> str:
    """jsonb::numeric (jsonb_numeric): a top-level number's text as written, every digit
    kept; 22023 for any other value."""
    v = json.loads(text, parse_float=str, parse_int=str)
    if isinstance(v, str) and text.lstrip()[:1] != '"':
        return v
    raise PgError("22023", f"cannot cast jsonb {_KIND[type(v)]} to type numeric")


def _number_udf(a: pa.Array | pa.ChunkedArray) -> pa.Array:
    return pa.array([None if x is None else number_text(x) for x in a.to_pylist()], pa.string())


def exists(text: str, key: str) -> bool:
    """jsonb ``?``: a top-level object key, or a string element of a top-level array (a
    scalar string counting as a one-element array)."""
    v = _load(text)
    if isinstance(v, dict):
        return key in v
    return any(isinstance(e, str) and e == key for e in v)


def _exists_udf(a: pa.Array | pa.ChunkedArray, b: pa.Array | pa.ChunkedArray) -> pa.Array:
    return pa.array([None if x is None or k is None else exists(x, k) for x, k in zip(a.to_pylist(), b.to_pylist(), strict=True)], pa.bool_())


def _exists_keys(every: bool) -> Any:
    def udf(a: pa.Array | pa.ChunkedArray, b: pa.Array | pa.ChunkedArray) -> pa.Array:
        out: list[bool | None] = []
        for x, keys in zip(a.to_pylist(), b.to_pylist(), strict=True):
            if x is None or keys is None:
                out.append(None)
                continue
            found = (exists(x, k) for k in keys if k is not None)  # (NULL keys are skipped)
            out.append(all(found) if every else any(found))
        return pa.array(out, pa.bool_())

    return udf


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
        "SELECT function_name FROM duckdb_functions() WHERE function_name IN (?, ?, ?, ?, ?, ?)",
        [UDF_CONTAINS, UDF_CONCAT, UDF_SORT_KEY, UDF_GROUPED, UDF_NUMBER, UDF_EXISTS],
    ).fetchall()}
    if UDF_CONTAINS not in have:
        con.create_function(UDF_CONTAINS, keep_errors(_contains_udf), ["VARCHAR", "VARCHAR"], "BOOLEAN", type="arrow")
    if UDF_SORT_KEY not in have:
        con.create_function(UDF_SORT_KEY, keep_errors(_sort_key_udf), ["VARCHAR"], "BLOB", type="arrow")
    if UDF_GROUPED not in have:
        con.create_function(UDF_GROUPED, keep_errors(_grouped_udf), ["VARCHAR"], "VARCHAR", type="arrow")
        con.create_function(UDF_GROUPED_KEY, keep_errors(_grouped_udf), ["VARCHAR"], "VARCHAR", type="arrow", side_effects=True)
    if UDF_NUMBER not in have:
        con.create_function(UDF_NUMBER, keep_errors(_number_udf), ["VARCHAR"], "VARCHAR", type="arrow")
    if UDF_EXISTS not in have:
        con.create_function(UDF_EXISTS, keep_errors(_exists_udf), ["VARCHAR", "VARCHAR"], "BOOLEAN", type="arrow")
        con.create_function(UDF_EXISTS_ANY, keep_errors(_exists_keys(False)), ["VARCHAR", "VARCHAR[]"], "BOOLEAN", type="arrow")
        con.create_function(UDF_EXISTS_ALL, keep_errors(_exists_keys(True)), ["VARCHAR", "VARCHAR[]"], "BOOLEAN", type="arrow")
    if UDF_CONCAT not in have:
        con.create_function(UDF_CONCAT, keep_errors(_concat_udf), ["VARCHAR", "VARCHAR"], "VARCHAR", type="arrow")
