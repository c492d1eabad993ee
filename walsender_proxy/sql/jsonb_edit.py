"""jsonb's editing functions: ``-`` (a key, keys or an index), ``#-`` (a path),
``jsonb_set`` and subscripted assignment (``SET j['a'][0] = …``), as PostgreSQL 15's
jsonfuncs.c does them (jsonb_delete, jsonb_delete_array, jsonb_delete_idx,
jsonb_delete_path, jsonb_set, jsonb_set_element and their setPath walk), over jsonb's text.

A value is parsed with its numbers kept as written (``1.50`` stays ``1.50``), edited, and
written back through jsonb's input, which orders keys as jsonb stores them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pyarrow as pa

from decoding.errors import PgError
from decoding.pgvalues.textin import jsonb_in
from walsender_proxy.sql.udf_errors import keep_errors

UDF_DELETE = "wpx_jsonb_delete"
UDF_DELETE_KEYS = "wpx_jsonb_delete_keys"
UDF_DELETE_INDEX = "wpx_jsonb_delete_index"
UDF_DELETE_PATH = "wpx_jsonb_delete_path"
UDF_SET = "wpx_jsonb_set"

_CREATE, _REPLACE, _DELETE = "create", "replace", "delete"
_INT_MIN = -(2**31)
_STRTOL = re.compile(r"[ \t\n\r\f\v]*[+-]?[0-9]+")


class _Num(str):
    """A number as its text (so its scale survives the edit)."""


def _load(text: str) -> Any:
    return json.loads(text, parse_float=_Num, parse_int=_Num)


def _dump(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, _Num):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(_dump(x) for x in v) + "]"
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _dump(x) for k, x in v.items()) + "}"


def _out(v: Any) -> str:
    return jsonb_in(_dump(v))


def _container(text: str, scalar_error: str) -> Any:
    v = _load(text)
    if not isinstance(v, dict | list):
        raise PgError("22023", scalar_error)
    return v


def delete_key(text: str, key: str) -> str:
    """``jsonb - text``: the object without that key, the array without string elements
    equal to it."""
    v = _container(text, "cannot delete from scalar")
    if isinstance(v, dict):
        return _out({k: x for k, x in v.items() if k != key})
    return _out([x for x in v if not (isinstance(x, str) and not isinstance(x, _Num) and x == key)])


def delete_keys(text: str, keys: list[str | None]) -> str:
    """``jsonb - text[]``: every key (NULLs skipped)."""
    v = _container(text, "cannot delete from scalar")
    drop = {k for k in keys if k is not None}
    if isinstance(v, dict):
        return _out({k: x for k, x in v.items() if k not in drop})
    return _out([x for x in v if not (isinstance(x, str) and not isinstance(x, _Num) and x in drop)])


def delete_index(text: str, idx: int) -> str:
    """``jsonb - integer``: the array without that element (negative: from the end)."""
    v = _container(text, "cannot delete from scalar")
    if isinstance(v, dict):
        raise PgError("22023", "cannot delete from object using integer index")
    n = len(v)
    if idx < 0:
        idx = n if -idx > n else n + idx
    if idx >= n:
        return _out(v)
    return _out(v[:idx] + v[idx + 1 :])


def delete_path(text: str, path: list[str | None]) -> str:
    """``jsonb #- text[]``."""
    v = _container(text, "cannot delete path in scalar")
    if not v or not path:
        return _out(v)
    return _out(_set_path(v, path, 0, None, _DELETE))


def set_path(text: str, path: list[str | None], new: str, create: bool) -> str:
    """jsonb_set(target, path, new_value, create_if_missing)."""
    v = _container(text, "cannot set path in scalar")
    if (not v and not create) or not path:
        return _out(v)
    return _out(_set_path(v, path, 0, _load(new), _CREATE if create else _REPLACE))


def _set_path(v: Any, path: list[str | None], level: int, new: Any, op: str) -> Any:
    if path[level] is None:
        raise PgError("22004", f"path element at position {level + 1} is null")
    if isinstance(v, dict):
        return _set_object(v, path, level, new, op)
    if isinstance(v, list):
        return _set_array(v, path, level, new, op)
    return v  # (a scalar where the path goes on: left as it is)


def _set_object(d: dict[str, Any], path: list[str | None], level: int, new: Any, op: str) -> dict[str, Any]:
    key = path[level]
    last = level == len(path) - 1
    if key not in d:
        out = dict(d)
        if op == _CREATE and last:
            out[key] = new  # type: ignore[index]
        return out
    out = {}
    for k, x in d.items():
        if k != key:
            out[k] = x
        elif not last:
            out[k] = _set_path(x, path, level + 1, new, op)
        elif op != _DELETE:
            out[k] = new
    return out


def _set_array(a: list[Any], path: list[str | None], level: int, new: Any, op: str) -> list[Any]:
    text = path[level] or ""
    if not _STRTOL.fullmatch(text) or not _INT_MIN <= int(text) < 2**31:
        raise PgError("22P02", f'path element at position {level + 1} is not an integer: "{text}"')
    n = len(a)
    idx = int(text)
    if idx < 0:
        idx = _INT_MIN if -idx > n else n + idx
    if idx > n:
        idx = n
    last = level == len(path) - 1
    out: list[Any] = []
    done = False
    if (idx == _INT_MIN or n == 0) and last and op == _CREATE:
        out.append(new)
        done = True
    for i, x in enumerate(a):
        if i != idx:
            out.append(x)
            continue
        done = True
        if not last:
            out.append(_set_path(x, path, level + 1, new, op))
        elif op != _DELETE:
            out.append(new)
    if op == _CREATE and not done and last:
        out.append(new)
    return out


def set_element(text: str | None, path: list[str], new: str | None, expect_array: bool) -> str:
    """``j[p1][p2]… = new`` (jsonb_set_element): setPath with JB_PATH_CREATE, FILL_GAPS and
    CONSISTENT_POSITION. A NULL ``text`` starts as an empty array when the first subscript
    is an integer (``expect_array``), else as an empty object; a NULL ``new`` is JSON null;
    missing keys and positions are created, with nulls filling the gaps."""
    v = ([] if expect_array else {}) if text is None else _load(text)
    return _out(_assign(v, path, 0, None if new is None else _load(new)))


def _assign(v: Any, path: list[str], level: int, new: Any) -> Any:
    if isinstance(v, dict):
        key, last = path[level], level == len(path) - 1
        out = dict(v)
        if key in v and not last:
            out[key] = _assign(v[key], path, level + 1, new)
        else:
            out[key] = new if last else _chain(path, level + 1, new)
        return out
    if isinstance(v, list):
        return _assign_array(v, path, level, new)
    raise PgError(
        "22023", "cannot replace existing key",
        detail="The path assumes key is a composite object, but it is a scalar value.",
    )  # fmt: skip


def _assign_array(a: list[Any], path: list[str], level: int, new: Any) -> list[Any]:
    text = path[level]
    if not _STRTOL.fullmatch(text) or not _INT_MIN <= int(text) < 2**31:
        raise PgError("22P02", f'path element at position {level + 1} is not an integer: "{text}"')
    n, idx = len(a), int(text)
    if idx < 0:
        if -idx > n:  # (prepending would move the elements: CONSISTENT_POSITION refuses)
            raise PgError("22023", f"path element at position {level + 1} is out of range: {idx}")
        idx += n
    last = level == len(path) - 1
    if idx < n:
        out = list(a)
        out[idx] = new if last else _assign(a[idx], path, level + 1, new)
        return out
    return [*a, *[None] * (idx - n), new if last else _chain(path, level + 1, new)]


def _chain(path: list[str], level: int, new: Any) -> Any:
    """push_path: the containers the rest of the path names (an array, with nulls before
    the position, for an integer; an object for a key), holding ``new`` at its end."""
    if level == len(path):
        return new
    text = path[level]
    inner = _chain(path, level + 1, new)
    if _STRTOL.fullmatch(text) and _INT_MIN <= int(text) < 2**31:
        return [*[None] * max(int(text), 0), inner]
    return {text: inner}


def _rowwise(fn: Any, *cols: pa.Array | pa.ChunkedArray) -> pa.Array:
    rows = zip(*(c.to_pylist() for c in cols), strict=True)
    return pa.array([None if None in row else fn(*row) for row in rows], pa.string())


def _arrow2(fn: Any) -> Any:
    def run(a: pa.Array, b: pa.Array) -> pa.Array:  # (DuckDB counts a UDF's parameters)
        return _rowwise(fn, a, b)

    return run


def _arrow4(fn: Any) -> Any:
    def run(a: pa.Array, b: pa.Array, c: pa.Array, d: pa.Array) -> pa.Array:
        return _rowwise(fn, a, b, c, d)

    return run


def install(con: Any) -> None:
    """Create the editing UDFs in ``con``'s database, once."""
    have = {r[0] for r in con.execute("SELECT function_name FROM duckdb_functions() WHERE function_name = ?", [UDF_SET]).fetchall()}
    if UDF_SET in have:
        return
    for name, run, params in (
        (UDF_DELETE, _arrow2(delete_key), ["VARCHAR", "VARCHAR"]),
        (UDF_DELETE_KEYS, _arrow2(delete_keys), ["VARCHAR", "VARCHAR[]"]),
        (UDF_DELETE_INDEX, _arrow2(delete_index), ["VARCHAR", "INTEGER"]),
        (UDF_DELETE_PATH, _arrow2(delete_path), ["VARCHAR", "VARCHAR[]"]),
        (UDF_SET, _arrow4(set_path), ["VARCHAR", "VARCHAR[]", "VARCHAR", "BOOLEAN"]),
    ):
        con.create_function(name, keep_errors(run), params, "VARCHAR", type="arrow")
