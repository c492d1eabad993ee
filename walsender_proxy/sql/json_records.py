"""json_to_record, json_to_recordset and their jsonb twins (and json_populate_record(set)
over ``null::record``) with a column definition list: PostgreSQL's populate_record rules.

Each column's value is the text PostgreSQL hands to the column type's input function — a
string de-escaped, any other value as written (jsonb's as jsonb prints it), a json/jsonb
column's value as JSON text, an array column's JSON array as an array literal — so the
rewriter puts that text through the same input function (``literals.input_call``) and a
row's errors are the type's own. A missing key and JSON null are NULL; of duplicate keys
the last counts.

The UDFs return every column's text of a row as one list, so a document is parsed once a
row (a set: a list of such lists).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from decoding.errors import PgError
from walsender_proxy.sql import json_text

#: The functions handled here: name → (whether it returns a set, whether it reads jsonb,
#: whether its document is its second argument after a ``null::record`` base).
FUNCTIONS: dict[str, tuple[bool, bool, bool]] = {
    "json_to_record": (False, False, False),
    "jsonb_to_record": (False, True, False),
    "json_to_recordset": (True, False, False),
    "jsonb_to_recordset": (True, True, False),
    "json_populate_record": (False, False, True),
    "jsonb_populate_record": (False, True, True),
    "json_populate_recordset": (True, False, True),
    "jsonb_populate_recordset": (True, True, True),
}

UDF_RECORD = "wpx_json_record_texts"
UDF_RECORDSET = "wpx_json_recordset_texts"

#: Column kinds, one letter a column in the UDFs' ``kinds`` argument.
SCALAR, JSON, ARRAY = "s", "j", "a"
#: Leading ``kinds``, asks for :data:`MISSING` as the text of a key the object lacks (where
#: a base row gives the column's value): json_populate_record(base, …) keeps the base's
#: value for a key not there, and takes NULL for a key that is there with null.
BASE = "+"
#: The text of a missing key under :data:`BASE`: a NUL, which no JSON value's text holds
#: (PostgreSQL's json refuses ``\u0000`` as text).
MISSING = "\x00"


@dataclass(slots=True)
class _Value:
    """One parsed JSON value: its token kind (``{``, ``[``, or a scalar's), where its text
    lies, and its members (an object's as (key, value) in order, an array's elements)."""

    kind: str
    start: int
    end: int
    tok: json_text.Token | None = None
    items: list[Any] = field(default_factory=list)


def _parse(text: str) -> _Value:
    toks = json_text.tokens(text)
    pos = 0

    def value() -> _Value:
        nonlocal pos
        tok = toks[pos]
        pos += 1
        if tok.kind == "{":
            v = _Value("{", tok.start, tok.end)
            while toks[pos].kind != "}":
                key = json_text.decode_string(text, toks[pos])
                pos += 1  # the key, then ":"
                pos += 1
                v.items.append((key, value()))
                if toks[pos].kind == ",":
                    pos += 1
            v.end = toks[pos].end
            pos += 1
            return v
        if tok.kind == "[":
            v = _Value("[", tok.start, tok.end)
            while toks[pos].kind != "]":
                v.items.append(value())
                if toks[pos].kind == ",":
                    pos += 1
            v.end = toks[pos].end
            pos += 1
            return v
        return _Value(tok.kind, tok.start, tok.end, tok)

    return value()


def _scalar_text(text: str, v: _Value) -> str | None:
    """What populate_scalar gives a type's input function: None for null, a string's
    de-escaped text, any other value's text as written."""
    if v.kind == "N":
        return None
    if v.kind == "s":
        assert v.tok is not None
        return json_text.decode_string(text, v.tok)
    return text[v.start : v.end]


def _quoted(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _array_literal(text: str, v: _Value) -> str:
    """A JSON array as the array literal whose input makes PostgreSQL's array of it: the
    dimensions the first element at each depth sets, sub-arrays of matching lengths, an
    array where the dimensions put an element taken as that element's text."""
    ndims = 1
    probe = v
    while probe.items and probe.items[0].kind == "[":
        ndims += 1
        probe = probe.items[0]
    lengths: list[int | None] = [None] * ndims

    def build(node: _Value, depth: int) -> str:
        n = len(node.items)
        if lengths[depth] is None:
            lengths[depth] = n
        elif lengths[depth] != n:
            raise PgError("22P02", "malformed JSON array", detail="Multidimensional arrays must have sub-arrays with matching dimensions.")
        parts = []
        for item in node.items:
            if depth + 1 < ndims:
                if item.kind != "[":
                    raise PgError("22P02", "expected JSON array")
                parts.append(build(item, depth + 1))
            else:
                s = _scalar_text(text, item) if item.kind not in "{[" else text[item.start : item.end]
                parts.append("NULL" if s is None else _quoted(s))
        return "{" + ",".join(parts) + "}"

    out = build(v, 0)
    return "{}" if 0 in lengths else out


def _column_text(text: str, v: _Value | None, kind: str, key: str) -> str | None:
    if v is None or v.kind == "N":
        return None
    if kind == JSON:
        return text[v.start : v.end]
    if kind == ARRAY:
        if v.kind == "s":
            return _scalar_text(text, v)  # (an array literal in a string)
        if v.kind != "[":
            raise PgError("22P02", "expected JSON array", hint=f'See the value of key "{key}".')
        return _array_literal(text, v)
    if v.kind in "{[":
        return text[v.start : v.end]
    return _scalar_text(text, v)


def _row(text: str, obj: _Value, keys: Sequence[str], kinds: str) -> list[str | None]:
    fields = dict(obj.items)  # (the last of duplicate keys)
    if kinds.startswith(BASE):
        kinds = kinds[1:]
        return [MISSING if k not in fields else _column_text(text, fields[k], kind, k) for k, kind in zip(keys, kinds, strict=True)]
    return [_column_text(text, fields.get(k), kind, k) for k, kind in zip(keys, kinds, strict=True)]


def record_texts(doc: str, keys: Sequence[str], kinds: str, fname: str) -> list[str | None]:
    """json_to_record(doc): each column's input text."""
    top = _parse(doc)
    if top.kind != "{":
        shape = "an array" if top.kind == "[" else "a scalar"
        raise PgError("22023", f"cannot call populate_composite on {shape}")
    return _row(doc, top, keys, kinds)


def recordset_texts(doc: str, keys: Sequence[str], kinds: str, fname: str) -> list[list[str | None]]:
    """json_to_recordset(doc): each element's row of input texts."""
    top = _parse(doc)
    if top.kind != "[":
        shape = "an object" if top.kind == "{" else "a scalar"
        raise PgError("22023", f"cannot call {fname} on {shape}")
    rows = []
    for item in top.items:
        if item.kind != "{":
            raise PgError("22023", f"argument of {fname} must be an array of objects")
        rows.append(_row(doc, item, keys, kinds))
    return rows


def _columnwise(fn: Any, out_type: pa.DataType) -> Any:
    def run(docs: pa.Array, keys: pa.Array, kinds: pa.Array, fnames: pa.Array) -> pa.Array:
        out = []
        for d, k, kd, f in zip(docs.to_pylist(), keys.to_pylist(), kinds.to_pylist(), fnames.to_pylist(), strict=True):
            out.append(None if d is None else fn(d, k, kd, f))
        return pa.array(out, out_type)

    run.__name__ = fn.__name__
    return run


def udfs() -> list[tuple[str, Any, list[str], str, bool]]:
    """(name, function, argument types, result type, raises for a row) as json_exprs installs them."""
    args = ["VARCHAR", "VARCHAR[]", "VARCHAR", "VARCHAR"]
    return [
        (UDF_RECORD, _columnwise(record_texts, pa.list_(pa.string())), args, "VARCHAR[]", True),
        (UDF_RECORDSET, _columnwise(recordset_texts, pa.list_(pa.list_(pa.string()))), args, "VARCHAR[][]", True),
    ]
