"""json's operators and functions in rewritten SQL: DuckDB calls of the Arrow UDFs below,
which run :mod:`walsender_proxy.sql.json_text` (PostgreSQL 15's json parser and actions).

Why not DuckDB's own json functions: DuckDB's ``->`` and ``json_each`` re-serialise what
they extract (``{"b":"cc"}`` where the json text says ``{"b": "cc"}``), its ``to_json`` and
``row_to_json`` write a timestamp with a space, a NaN bare and a json field as a quoted
string, its json_array_length answers 0 for an object, and its json_object takes key/value
arguments where PostgreSQL's takes text arrays. Each of these would answer differently
without an error.

Values become JSON as PostgreSQL's datum_to_json writes them, from their output text
(the rewriter's ``printed``) and a kind per type (:data:`json_text.KINDS`); a type whose
JSON form is not known here is refused (0A000), never guessed. The rewriter reaches this
module through a small :class:`Host` (its expression rewriting, errors and scopes).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import pyarrow as pa
from pglast import ast
from pglast.enums import CoercionForm, SetOperation

from decoding.errors import PgError
from decoding.pgvalues.textin import json_in, jsonb_in
from walsender_proxy.sql import json_records, json_text
from walsender_proxy.sql.expr_types import T
from walsender_proxy.sql.nodes import bool_const, call, cast, name, null_const, str_const
from walsender_proxy.sql.udf_errors import keep_errors

# -- UDF names ---------------------------------------------------------------------------
GET_FIELD = "wpx_json_get_field"
GET_INDEX = "wpx_json_get_index"
GET_PATH = "wpx_json_get_path"
JSONB_GET_PATH = "wpx_jsonb_get_path"
JSONB_GET_FIELD = "wpx_jsonb_get_field"
JSONB_GET_INDEX = "wpx_jsonb_get_index"
ARRAY_LENGTH = "wpx_json_array_length"
TYPEOF = "wpx_json_typeof"
STRIP_NULLS = "wpx_json_strip_nulls"
OBJECT_KEYS = "wpx_json_object_keys"
ARRAY_ELEMENTS = "wpx_json_array_elements"
EACH = "wpx_json_each"
EACH_RECORDS = "wpx_json_each_records"
JSONB_SHAPE = "wpx_jsonb_shape"
VALUE = "wpx_json_value"
KEY = "wpx_json_key"
ARRAY = "wpx_json_array"
AGG = "wpx_json_agg_text"
ARRAY_OF_JSON = "wpx_json_array_of"
OBJECT_AGG = "wpx_json_object_agg_text"
PAIR = "wpx_json_pair"
BUILD_KEY = "wpx_json_build_key"
NOT_SCALAR = "wpx_json_not_scalar"
OBJECT1 = "wpx_json_object1"
OBJECT2 = "wpx_json_object2"
BUILD_VARIADIC = "wpx_json_build_variadic"

#: Operators on json and jsonb carried out here.
OPERATORS = frozenset({"->", "->>", "#>", "#>>"})
#: Functions carried out here, in a select list (set-returning ones unnested).
FUNCTIONS = frozenset({
    "to_json", "row_to_json", "array_to_json", "json_agg", "json_object_agg", "json_build_object",
    "json_build_array", "json_object", "json_array_length", "json_typeof", "json_strip_nulls",
    "json_extract_path", "json_extract_path_text", "json_object_keys", "json_array_elements",
    "json_array_elements_text", "json_each", "json_each_text",
})  # fmt: skip
#: jsonb's builders: the json builder's text read by jsonb's input (rewrite._jsonb_builder).
JSONB_BUILDERS = {
    "to_jsonb": "to_json", "jsonb_agg": "json_agg", "jsonb_object_agg": "json_object_agg",
    "jsonb_build_object": "json_build_object", "jsonb_build_array": "json_build_array", "jsonb_object": "json_object",
}  # fmt: skip


def jsonb_wording(message: str, hint: str | None, base: str, name: str) -> tuple[str, str | None]:
    """A json builder's error as its jsonb twin words it."""
    m = re.fullmatch(r"argument (\d+) cannot be null", message)
    if m and name == "jsonb_build_object":
        return f"argument {m.group(1)}: key must not be null", None
    return message.replace(f"{base}(", f"{name}("), hint.replace(f"{base}(", f"{name}(") if hint else hint


#: Set-returning functions carried out here in FROM.
TABLE_FUNCTIONS = frozenset({
    "json_object_keys", "json_array_elements", "json_array_elements_text", "json_each", "json_each_text",
})  # fmt: skip

_INTS = frozenset({"int2", "int4", "int8"})
_DUCK_INTS = {"int2": "smallint", "int4": "integer", "int8": "bigint"}
_NUMBERS = _INTS | {"float4", "float8", "numeric"}
#: Types whose output text the rewriter prints as PostgreSQL does and datum_to_json writes
#: as a JSON string.
_STRINGS = frozenset({
    "text", "varchar", "bpchar", "name", "char", "unknown", "uuid", "bytea", "time", "interval", "oid",
    "xid", "cid", "regclass", "regtype", "regnamespace", "regrole", "regproc", "regproc_text",
})  # fmt: skip
#: Element types of the arrays whose output text the rewriter prints as PostgreSQL does
#: (the lake's; numeric arrays of one display scale print as DuckDB's lists).
_ARRAY_ELEMS = frozenset({
    "text", "varchar", "bpchar", "int2", "int4", "int8", "float4", "float8", "bool", "date", "timestamp",
    "timestamptz", "time", "interval", "uuid", "bytea", "json", "jsonb",
})  # fmt: skip
_KINDS = {"bool": "b", "date": "d", "timestamp": "t", "timestamptz": "z", "json": "j", "jsonb": "j"}
NO_FUNCTION_HINT = "No function matches the given name and argument types. You might need to add explicit type casts."
_NO_OPERATOR_HINT = "No operator matches the given name and argument types. You might need to add explicit type casts."


class Host(Protocol):
    """What this module needs of the rewriter, for one expression in one scope."""

    def expr(self, node: Any) -> tuple[Any, Any]:
        """``node`` rewritten, and its inferred type (``.name``, ``.is_array``, ``.elem``)."""

    def generic(self, node: Any) -> Any:
        """A clause (ORDER BY items, FILTER) rewritten."""

    def fail(self, sqlstate: str, message: str, node: Any = None, **kw: Any) -> Exception:
        """The error to raise, placed at ``node``."""

    def printed(self, node: Any, t: Any) -> ast.Node:
        """``node`` as text, as its type's output function prints it."""

    def json_type(self, node: Any, t: Any) -> str | None:
        """The type's name for a json or jsonb value, else None."""

    def row_fields(self, node: Any) -> list[tuple[str, Any, Any]] | None:
        """(name, rewritten node, type) of each field of a row value (ROW(…) or a whole-row
        reference), None when ``node`` is not one."""

    def display(self, t: Any) -> str:
        """A type as PostgreSQL's messages name it (``integer``, ``text[]``)."""

    def text_array(self, lit: str, at: Any) -> ast.Node:
        """An untyped literal read as text[] (22P02 when malformed)."""


# -- rewriting ---------------------------------------------------------------------------


def _udf(fn: str, *args: ast.Node) -> ast.FuncCall:
    return call(fn, *args)


def _unsupported(host: Host, what: str, node: Any) -> Exception:
    return host.fail("0A000", f"{what} is not supported by walsender-proxy", node)


def kind_of(t: Any) -> str | None:
    """The datum_to_json kind of a scalar type (json_text.KINDS), None when unknown here."""
    if t is None or t.is_array:
        return None
    if t.name in _NUMBERS:
        return "n"
    if t.name in _STRINGS:
        return "s"
    return _KINDS.get(t.name)


def value_json(host: Host, node: Any, t: Any, fn: str, at: Any, pretty: bool = False) -> ast.Node:
    """``node`` (of type ``t``) as datum_to_json writes it; NULL stays NULL."""
    if t is not None and getattr(t, "enum_oid", 0):  # (an enum's labels are JSON strings)
        node, t = cast(node, "varchar", array=t.is_array), T("_text" if t.is_array else "text")
    if t is not None and t.is_array:
        elem = t.elem
        k = kind_of(elem)
        if k is None or t.name in ("int2vector", "oidvector") or elem.name not in _ARRAY_ELEMS:
            raise _unsupported(host, f"{fn}() of a value of type {host.display(t)}", at)
        if elem.name in _DUCK_INTS:  # (DuckDB may hold an int4 array as BIGINT[]: generate_series)
            node = cast(node, _DUCK_INTS[elem.name], array=True)
        return _udf(ARRAY, host.printed(node, t), str_const(k), bool_const(pretty))
    k = kind_of(t)
    if k is None and t is not None and t.name == "record" and _is_null(_uncast(node)):
        return cast(null_const(), "varchar")
    if k is None:
        shown = host.display(t) if t is not None else "unknown type"
        raise _unsupported(host, f"{fn}() of a value of type {shown}", at)
    if t.name in _INTS or k == "j":
        return cast(node, "varchar")
    return _udf(VALUE, host.printed(node, t), str_const(k))


def _composite(host: Host, fields: Sequence[tuple[str, Any, Any]], fn: str, at: Any, pretty: bool) -> ast.Node:
    """composite_to_json: ``{"f1":v1,"f2":v2}`` (``,\\n `` between fields when pretty)."""
    parts: list[ast.Node] = []
    for i, (field, node, t) in enumerate(fields):
        head = ("" if i == 0 else ",\n " if pretty else ",") + json_text.escape_json(field) + ":"
        parts.append(str_const(("{" if i == 0 else "") + head))
        parts.append(ast.CoalesceExpr(args=(value_json(host, node, t, fn, at), str_const("null"))))
    if not parts:
        return str_const("{}")
    parts.append(str_const("}"))
    return call("concat", *parts)


def _any_json(host: Host, raw: Any, fn: str, at: Any, any_type: bool = False) -> tuple[ast.Node, bool]:
    """A value (a row or a datum) as JSON text; (expression, whether it is an array or a
    record, which json_agg sets on a line of its own). ``any_type``: an argument declared
    "any", which takes an untyped literal as text (anyelement ones cannot)."""
    fields = host.row_fields(raw)
    if fields is not None:
        return _composite(host, fields, fn, at, False), True
    node, t = host.expr(raw)
    if t is not None and t.name == "unknown":
        if not any_type:
            raise host.fail("42804", "could not determine polymorphic type because input has type unknown", at)
        t = type(t)("text")
    return value_json(host, node, t, fn, at), bool(t is not None and t.is_array)


def _is_null(node: Any) -> bool:
    return isinstance(node, ast.A_Const) and node.isnull


def _uncast(node: Any) -> Any:
    """``node`` without the casts around it (``NULL::record``)."""
    while isinstance(node, ast.TypeCast):
        node = node.arg
    return node


def _const_text(node: Any) -> str | None:
    if isinstance(node, ast.A_Const) and not node.isnull and isinstance(node.val, ast.String):
        return node.val.sval
    return None


def _const_bool(host: Host, raw: Any, fn: str) -> bool:
    """A ``pretty`` argument: a boolean constant (a computed one is not supported)."""
    node, t = host.expr(raw)
    if isinstance(node, ast.A_Const) and isinstance(node.val, ast.Boolean):
        return bool(node.val.boolval)
    if t is not None and t.name == "bool":
        raise _unsupported(host, f"{fn}() with a computed pretty flag", raw)
    raise host.fail("42883", f"function {fn}(…, {host.display(t)}) does not exist", raw, hint=NO_FUNCTION_HINT)


def document(host: Host, fn: str, node: Any, t: Any, at: Any, want: str = "json") -> ast.Node:
    """The json argument of a json function: a json value as it is, an untyped literal
    through json's input function (its 22P02), anything else 42883."""
    if host.json_type(node, t) == want:
        return node
    if t is not None and t.name == "unknown":
        if _is_null(node):
            return cast(null_const(), "varchar")
        lit = _const_text(node)
        if lit is not None:
            try:
                if want == "jsonb":
                    lit = jsonb_in(lit)
                else:
                    json_in(lit)
            except PgError as e:
                raise host.fail(e.sqlstate, e.message, at, detail=e.detail, hint=e.hint) from None
            return str_const(lit)
    if t is None:
        raise _unsupported(host, f"{fn}() of a value of unknown type", at)
    raise host.fail("42883", f"function {fn}({host.display(t)}) does not exist", at, hint=NO_FUNCTION_HINT)


def operator(host: Host, op: str, at: Any, left: Any, lt: Any, right: Any, rt: Any) -> tuple[ast.Node, str] | None:
    """``left op right`` for json's and jsonb's ``->``, ``->>``, ``#>``, ``#>>`` (and the
    result's type name); other left operands raise PostgreSQL's 42883/42725."""
    kind = host.json_type(left, lt)
    as_text = op in ("->>", "#>>")
    result = "text" if as_text else (kind or "json")
    rname = host.display(rt) if rt is not None else "unknown"
    if kind is None:
        if lt is not None and lt.name == "unknown":
            raise host.fail(
                "42725", f"operator is not unique: unknown {op} {rname}", at,
                hint="Could not choose a best candidate operator. You might need to add explicit type casts.",
            )  # fmt: skip
        if lt is None:
            raise _unsupported(host, f"operator {op} on a value of unknown type", at)
        raise host.fail("42883", f"operator does not exist: {host.display(lt)} {op} {rname}", at, hint=_NO_OPERATOR_HINT)
    no_operator = host.fail("42883", f"operator does not exist: {kind} {op} {rname}", at, hint=_NO_OPERATOR_HINT)
    if op in ("->", "->>"):
        index, field = (JSONB_GET_INDEX, JSONB_GET_FIELD) if kind == "jsonb" else (GET_INDEX, GET_FIELD)
        if rt is not None and rt.name in ("int2", "int4") and not rt.is_array:
            return _udf(index, left, cast(right, "integer"), bool_const(as_text)), result
        if rt is not None and (rt.name in ("text", "varchar", "bpchar", "name", "unknown")) and not rt.is_array:
            return _udf(field, left, cast(right, "varchar"), bool_const(as_text)), result
        if rt is None:
            raise _unsupported(host, f"operator {op} with a key of unknown type", at)
        raise no_operator
    if rt is not None and rt.name == "unknown":
        lit = _const_text(right)
        path = host.text_array(lit, right) if lit is not None else cast(null_const(), "varchar", array=True)
    elif rt is not None and rt.name in ("_text", "_varchar", "_bpchar", "_name"):
        path = cast(right, "varchar", array=True)
    elif rt is None:
        raise _unsupported(host, f"operator {op} with a path of unknown type", at)
    else:
        raise no_operator
    return _udf(JSONB_GET_PATH if kind == "jsonb" else GET_PATH, left, path, bool_const(as_text)), result


def function(host: Host, fname: str, node: ast.FuncCall, *, jsonb: bool = False) -> tuple[ast.Node, str] | None:
    """``fname(…)`` (one of :data:`FUNCTIONS`) and its result type name (``jsonb``: for its
    jsonb twin, whose run-time errors are worded its way)."""
    raw = list(node.args or ())
    is_agg = fname in ("json_agg", "json_object_agg")
    if node.over is not None:
        raise _unsupported(host, f"{fname}() as a window function", node)
    if not is_agg and (node.agg_order or node.agg_filter is not None or node.agg_distinct or node.agg_star):
        return None  # (PostgreSQL's error for a non-aggregate with ORDER BY: let it come)
    if node.agg_distinct:
        raise _unsupported(host, f"{fname}(DISTINCT …)", node)
    if fname in ("to_json", "row_to_json", "array_to_json"):
        return _to_json(host, fname, node, raw)
    if is_agg:
        return _aggregate(host, fname, node, raw)
    if fname in ("json_build_object", "json_build_array"):
        return _build(host, fname, node, raw, jsonb=jsonb)
    if fname == "json_object":
        return _object(host, node, raw)
    pairs = [host.expr(a) for a in raw]
    types = [t for _, t in pairs]

    def no_function() -> Exception:
        shown = ", ".join(host.display(t) if t is not None else "unknown" for t in types)
        return host.fail("42883", f"function {fname}({shown}) does not exist", node, hint=NO_FUNCTION_HINT)

    if fname in ("json_extract_path", "json_extract_path_text"):
        if len(pairs) < 2 and not node.func_variadic:
            raise no_function()
        doc = document(host, fname, *pairs[0], raw[0])
        if node.func_variadic:
            path = _text_array_arg(host, fname, *pairs[-1], raw[-1])
        else:
            path = cast(ast.A_ArrayExpr(elements=tuple(cast(p, "varchar") for p, _ in pairs[1:])), "varchar", array=True)
            if any(t is None or t.name not in ("text", "varchar", "bpchar", "name", "unknown") for t in types[1:]):
                raise no_function()
        return _udf(GET_PATH, doc, path, bool_const(fname.endswith("_text"))), "text" if fname.endswith("_text") else "json"
    if len(pairs) != 1:
        raise no_function()
    doc = document(host, fname, *pairs[0], raw[0], want="jsonb" if jsonb else "json")
    if jsonb:  # (jsonb_each … : the jsonb function's errors for a value of the wrong shape)
        doc = _udf(JSONB_SHAPE, doc, str_const("jsonb" + fname[4:]))
    if fname == "json_array_length":
        return _udf(ARRAY_LENGTH, doc), "int4"
    if fname == "json_typeof":
        return _udf(TYPEOF, doc), "text"
    if fname == "json_strip_nulls":
        return _udf(STRIP_NULLS, doc), "json"
    if fname == "json_object_keys":
        return call("unnest", _udf(OBJECT_KEYS, doc)), "text"
    if fname in ("json_array_elements", "json_array_elements_text"):
        as_text = fname.endswith("_text")
        return call("unnest", _udf(ARRAY_ELEMENTS, doc, bool_const(as_text))), "text" if as_text else "json"
    if fname in ("json_each", "json_each_text"):
        return call("unnest", _udf(EACH_RECORDS, doc, bool_const(fname.endswith("_text")))), "record"
    return None


#: jsonb's set-returning functions: the json ones over jsonb's text, after a check of the
#: value's shape that words the error as the jsonb function does (JSONB_SHAPE).
JSONB_SETS = {
    "jsonb_object_keys": "json_object_keys", "jsonb_each": "json_each", "jsonb_each_text": "json_each_text",
    "jsonb_array_elements": "json_array_elements", "jsonb_array_elements_text": "json_array_elements_text",
}  # fmt: skip

#: jsonb functions answered by the json UDFs over jsonb's text (the same answers, the jsonb
#: function's name in errors).
JSONB_FUNCTIONS = frozenset({"jsonb_typeof", "jsonb_array_length", "jsonb_strip_nulls", "jsonb_extract_path", "jsonb_extract_path_text"})


def jsonb_function(host: Host, fname: str, node: ast.FuncCall) -> tuple[ast.Node, str] | None:
    """``fname(…)`` (one of :data:`JSONB_FUNCTIONS`) and its result type name ("json" for a
    jsonb result still to be read by jsonb's input)."""
    if node.over is not None or node.agg_order or node.agg_filter is not None or node.agg_distinct or node.agg_star:
        return None
    raw = list(node.args or ())
    pairs = [host.expr(a) for a in raw]
    types = [t for _, t in pairs]

    def no_function() -> Exception:
        shown = ", ".join(host.display(t) if t is not None else "unknown" for t in types)
        return host.fail("42883", f"function {fname}({shown}) does not exist", node, hint=NO_FUNCTION_HINT)

    def doc(value: Any, t: Any, at: Any) -> ast.Node:
        if host.json_type(value, t) == "jsonb":
            return value
        if t is not None and t.name == "unknown":
            if _is_null(value):
                return cast(null_const(), "varchar")
            lit = _const_text(value)
            if lit is not None:
                try:
                    return str_const(jsonb_in(lit))
                except PgError as e:
                    raise host.fail(e.sqlstate, e.message, at, detail=e.detail, hint=e.hint) from None
        if t is None:
            raise _unsupported(host, f"{fname}() of a value of unknown type", at)
        raise no_function()

    if fname in ("jsonb_extract_path", "jsonb_extract_path_text"):
        if len(pairs) < 2 and not node.func_variadic:
            raise no_function()
        value = doc(*pairs[0], raw[0])
        if node.func_variadic:
            path = _text_array_arg(host, fname, *pairs[-1], raw[-1])
        else:
            if any(t is None or t.name not in ("text", "varchar", "bpchar", "name", "unknown") for t in types[1:]):
                raise no_function()
            path = cast(ast.A_ArrayExpr(elements=tuple(cast(p, "varchar") for p, _ in pairs[1:])), "varchar", array=True)
        as_text = fname.endswith("_text")
        return _udf(JSONB_GET_PATH, value, path, bool_const(as_text)), "text" if as_text else "jsonb"
    if len(pairs) != 1:
        raise no_function()
    value = doc(*pairs[0], raw[0])
    if fname == "jsonb_array_length":
        return _udf(ARRAY_LENGTH, value), "int4"
    if fname == "jsonb_typeof":
        return _udf(TYPEOF, value), "text"
    return _udf(STRIP_NULLS, value), "json"


def table_function(
    host: Host, fname: str, at: Any, args: Sequence[Any], types: Sequence[Any], alias: str, *, jsonb: bool = False
) -> tuple[ast.SelectStmt, list[tuple[str, str]]] | None:
    """A set-returning json function in FROM (args already rewritten): the subquery whose
    rows it returns, and its columns (name, type name). ``jsonb``: its jsonb twin's."""
    if len(args) != 1:
        shown = ", ".join(host.display(t) if t is not None else "unknown" for t in types)
        raise host.fail("42883", f"function {fname}({shown}) does not exist", at, hint=NO_FUNCTION_HINT)
    doc = document(host, fname, args[0], types[0], at, want="jsonb" if jsonb else "json")
    if jsonb:
        doc = _udf(JSONB_SHAPE, doc, str_const("jsonb" + fname[4:]))
    as_text = fname.endswith("_text")
    if fname == "json_object_keys":
        sel = _select([(alias, call("unnest", _udf(OBJECT_KEYS, doc)))])
        return sel, [(alias, "text")]
    if fname in ("json_array_elements", "json_array_elements_text"):
        sel = _select([("value", call("unnest", _udf(ARRAY_ELEMENTS, doc, bool_const(as_text))))])
        return sel, [("value", "text" if as_text else "json")]
    inner = _select([("wpx_e", call("unnest", _udf(EACH, doc, bool_const(as_text))))])
    e = ast.ColumnRef(fields=(name("wpx_e"),))
    sel = _select(
        [("key", call("struct_extract", e, str_const("key"))), ("value", call("struct_extract", e, str_const("value")))],
        ast.RangeSubselect(subquery=inner, alias=ast.Alias(aliasname="wpx_each")),
    )
    return sel, [("key", "text"), ("value", "text" if as_text else "json")]


def _select(targets: Sequence[tuple[str, ast.Node]], source: ast.Node | None = None) -> ast.SelectStmt:
    return ast.SelectStmt(
        targetList=tuple(ast.ResTarget(name=n, val=v) for n, v in targets),
        fromClause=(source,) if source is not None else None,
        op=SetOperation.SETOP_NONE,
    )


def _to_json(host: Host, fname: str, node: ast.FuncCall, raw: list[Any]) -> tuple[ast.Node, str]:
    """to_json(anyelement), row_to_json(record[, pretty]), array_to_json(anyarray[, pretty])."""
    limit = 1 if fname == "to_json" else 2
    if not 1 <= len(raw) <= limit:
        types = [host.expr(a)[1] for a in raw]
        shown = ", ".join(host.display(t) if t is not None else "unknown" for t in types)
        raise host.fail("42883", f"function {fname}({shown}) does not exist", node, hint=NO_FUNCTION_HINT)
    if fname == "to_json":
        return _any_json(host, raw[0], fname, node)[0], "json"
    agg = raw[0]
    if (
        fname == "array_to_json" and isinstance(agg, ast.FuncCall) and [n.sval for n in agg.funcname] == ["array_agg"]
        and len(agg.args or ()) == 1 and not agg.agg_distinct and agg.over is None
    ):  # fmt: skip
        # array_to_json(array_agg(x)): the aggregate of each row's JSON (x may be a row,
        # whose array the lake cannot hold)
        pretty = _const_bool(host, raw[1], fname) if len(raw) == 2 else False
        value, nested = _any_json(host, agg.args[0], fname, node)
        if nested and host.row_fields(agg.args[0]) is None:  # (array_agg's checks of arrays)
            raise _unsupported(host, f"{fname}() of an array_agg() of arrays", node)
        items = _list_of(host, agg, ast.CoalesceExpr(args=(value, str_const("null"))))
        return _udf(ARRAY_OF_JSON, items, bool_const(pretty)), "json"
    fields = host.row_fields(raw[0])
    value, t = (None, None) if fields is not None else host.expr(raw[0])
    pretty = _const_bool(host, raw[1], fname) if len(raw) == 2 else False
    if fields is not None:
        if fname == "array_to_json":
            raise host.fail("42883", f"function {fname}(record) does not exist", node, hint=NO_FUNCTION_HINT)
        return _composite(host, fields, fname, node, pretty), "json"
    if fname == "row_to_json" and t is not None and t.name in ("unknown", "record") and _is_null(_uncast(value)):
        return cast(null_const(), "varchar"), "json"
    if t is not None and t.name == "unknown":
        if fname == "row_to_json":
            raise host.fail("0A000", "input of anonymous composite types is not implemented", node)
        raise host.fail("42804", "could not determine polymorphic type because input has type unknown", node)
    if fname == "array_to_json" and t is not None and t.name == "record":
        raise host.fail("42883", f"function {fname}(record) does not exist", node, hint=NO_FUNCTION_HINT)
    if t is not None and t.name == "record":
        raise _unsupported(host, f"{fname}() of a record of unknown fields", node)
    if fname == "array_to_json" and t is not None and t.is_array:
        return value_json(host, value, t, fname, node, pretty), "json"
    if t is None:
        raise _unsupported(host, f"{fname}() of a value of unknown type", node)
    raise host.fail("42883", f"function {fname}({host.display(t)}) does not exist", node, hint=NO_FUNCTION_HINT)


def _aggregate(host: Host, fname: str, node: ast.FuncCall, raw: list[Any]) -> tuple[ast.Node, str]:
    """json_agg(x) and json_object_agg(k, v): a DuckDB list() of each row's JSON text (with
    the call's ORDER BY and FILTER), made into PostgreSQL's text by a UDF."""
    want = 1 if fname == "json_agg" else 2
    if len(raw) != want or node.agg_star:
        types = [host.expr(a)[1] for a in raw]
        shown = ", ".join(host.display(t) if t is not None else "unknown" for t in types)
        raise host.fail("42883", f"function {fname}({shown}) does not exist", node, hint=NO_FUNCTION_HINT)
    if fname == "json_agg":
        value, structured = _any_json(host, raw[0], fname, node)
        piece: ast.Node = value
    else:
        key = _key_json(host, raw[0], fname, node, runtime_null=False)
        value = _any_json(host, raw[1], fname, node, any_type=True)[0]
        piece = _udf(PAIR, key, ast.CoalesceExpr(args=(value, str_const("null"))))
        structured = False
    lst = _list_of(host, node, piece)
    if fname == "json_agg":
        return _udf(AGG, lst, bool_const(structured)), "json"
    return _udf(OBJECT_AGG, lst), "json"


def _list_of(host: Host, agg: ast.FuncCall, piece: ast.Node) -> ast.FuncCall:
    """DuckDB's list() of ``piece`` with the aggregate call's ORDER BY and FILTER."""
    order = tuple(host.generic(s) for s in agg.agg_order) if agg.agg_order else None
    filt = host.generic(agg.agg_filter) if agg.agg_filter is not None else None
    return ast.FuncCall(
        funcname=(name("list"),), args=(piece,), agg_order=order, agg_filter=filt,
        funcformat=CoercionForm.COERCE_EXPLICIT_CALL,
    )  # fmt: skip


def _key_json(host: Host, raw: Any, fname: str, at: Any, runtime_null: bool, position: int = 1) -> ast.Node:
    """An object key as datum_to_json writes one (key_scalar): a scalar's text as a JSON
    string; arrays, records and json fail with 22023 when a row reaches them (and a NULL
    key with json_build_object's 22023 when ``runtime_null``)."""
    where = ast.A_Const(isnull=False, val=ast.Integer(ival=position if runtime_null else 0))
    fields = host.row_fields(raw)
    if fields is not None:
        return _udf(NOT_SCALAR, str_const(""), where)
    node, t = host.expr(raw)
    if t is not None and (t.is_array or t.name in ("json", "jsonb", "record")):
        return _udf(NOT_SCALAR, cast(host.printed(node, t), "varchar"), where)
    k = kind_of(t)
    if k is None:
        shown = host.display(t) if t is not None else "unknown type"
        raise _unsupported(host, f"{fname}() with a key of type {shown}", at)
    if runtime_null:
        return _udf(BUILD_KEY, host.printed(node, t), str_const(k), where)
    return _udf(KEY, host.printed(node, t), str_const(k))


def _build(host: Host, fname: str, node: ast.FuncCall, raw: list[Any], *, jsonb: bool = False) -> tuple[ast.Node, str]:
    """json_build_object / json_build_array: ``{"k" : v, …}`` and ``[v, …]``."""
    is_object = fname == "json_build_object"
    if node.func_variadic:
        arr, t = host.expr(raw[-1])
        if t is None or not t.is_array:
            raise _unsupported(host, f"{fname}(VARIADIC …) of this value", node)
        k = kind_of(t.elem)
        if k is None or t.elem.name not in _ARRAY_ELEMS:
            raise _unsupported(host, f"{fname}(VARIADIC …) of type {host.display(t)}", node)
        return _udf(BUILD_VARIADIC, host.printed(arr, t), str_const(k), bool_const(is_object)), "json"
    if is_object and len(raw) % 2:
        raise host.fail(
            "22023", "argument list must have even number of elements", node,
            hint="The arguments of json_build_object() must consist of alternating keys and values.",
        )  # fmt: skip
    parts: list[ast.Node] = [str_const("{" if is_object else "[")]
    for i, a in enumerate(raw):
        is_key = is_object and i % 2 == 0
        if i:
            parts.append(str_const(" : " if is_object and not is_key else ", "))
        if is_key:
            if _is_null(a):
                raise host.fail("22023", f"argument {i + 1} cannot be null", node, hint="Object keys should be text.")
            # (a negative position: jsonb_build_object's wording of a NULL key)
            parts.append(_key_json(host, a, fname, node, runtime_null=True, position=-(i + 1) if jsonb else i + 1))
            continue
        value = _any_json(host, a, fname, node, any_type=True)[0]
        parts.append(ast.CoalesceExpr(args=(value, str_const("null"))))
    parts.append(str_const("}" if is_object else "]"))
    return call("concat", *parts), "json"


def _text_array_arg(host: Host, fname: str, node: Any, t: Any, at: Any) -> ast.Node:
    """A text[] argument: a text array value, or an untyped literal read as one."""
    if t is not None and t.name == "unknown":
        lit = _const_text(node)
        return host.text_array(lit, at) if lit is not None else cast(null_const(), "varchar", array=True)
    if t is not None and t.name in ("_text", "_varchar", "_bpchar", "_name"):
        return cast(node, "varchar", array=True)
    if t is None:
        raise _unsupported(host, f"{fname}() of a value of unknown type", at)
    raise host.fail("42883", f"function {fname}({host.display(t)}) does not exist", at, hint=NO_FUNCTION_HINT)


def _object(host: Host, node: ast.FuncCall, raw: list[Any]) -> tuple[ast.Node, str]:
    """json_object(text[]) and json_object(text[], text[]). Untyped literals (which may have
    two dimensions, the lake's arrays have one) are read and the answer made here."""
    pairs = [host.expr(a) for a in raw]
    if len(pairs) not in (1, 2):
        shown = ", ".join(host.display(t) if t is not None else "unknown" for _, t in pairs)
        raise host.fail("42883", f"function json_object({shown}) does not exist", node, hint=NO_FUNCTION_HINT)
    if any(_is_null(n) for n, _ in pairs):
        return cast(null_const(), "varchar"), "json"
    lits = [_const_text(n) if t is not None and t.name == "unknown" else None for n, t in pairs]
    if all(lit is not None for lit in lits):
        try:
            parsed = [json_text.parse_array_in(lit) for lit in lits if lit is not None]
            text = json_text.json_object(*parsed, two=len(parsed) == 2)
        except PgError as e:
            raise host.fail(e.sqlstate, e.message, node, detail=e.detail, hint=e.hint) from None
        return str_const(text), "json"
    arrays = [_text_array_arg(host, "json_object", n, t, a) for (n, t), a in zip(pairs, raw, strict=True)]
    return _udf(OBJECT2 if len(arrays) == 2 else OBJECT1, *arrays), "json"


# -- UDFs --------------------------------------------------------------------------------


def _rows(*cols: pa.Array | pa.ChunkedArray) -> list[tuple[Any, ...]]:
    return list(zip(*(c.to_pylist() for c in cols), strict=True))


def _columnwise(fn: Callable[..., Any], out_type: pa.DataType) -> Callable[..., pa.Array]:
    """A UDF over Arrow columns that calls ``fn`` row by row, NULL for a row with a NULL
    argument (the functions are strict), with ``fn``'s arity: DuckDB counts a UDF's
    parameters by its signature."""

    def run(*cols: pa.Array | pa.ChunkedArray) -> pa.Array:
        rows = _rows(*cols)
        return pa.array([None if None in row else fn(*row) for row in rows], out_type)

    run.__name__ = fn.__name__
    params = list(inspect.signature(fn).parameters.values())
    run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params]
    )
    return run


def _strings(fn: Callable[..., str | None]) -> Callable[..., pa.Array]:
    return _columnwise(fn, pa.string())




def _lists(fn: Callable[..., list[Any]], item: pa.DataType) -> Callable[..., pa.Array]:
    return _columnwise(fn, pa.list_(item))


def _each(doc: str, as_text: bool) -> list[dict[str, str | None]]:
    return [{"key": k, "value": v} for k, v in json_text.each(doc, as_text)]


def _each_records(doc: str, as_text: bool) -> list[str]:
    return [json_text.record_text([k, v]) for k, v in json_text.each(doc, as_text)]


def _value(printed: str, kind: str) -> str:
    return json_text.value_json(printed, kind)


def _key(printed: str, kind: str) -> str:
    return json_text.value_json(printed, kind, key=True)


def _build_key(
    printed_col: pa.Array | pa.ChunkedArray, kind_col: pa.Array | pa.ChunkedArray, position_col: pa.Array | pa.ChunkedArray
) -> pa.Array:
    out = []
    for printed, kind, position in _rows(printed_col, kind_col, position_col):
        if printed is None:
            raise _null_key(position)
        out.append(json_text.value_json(printed, kind, key=True))
    return pa.array(out, pa.string())


def jsonb_shape(doc: str, fname: str) -> str:
    """``doc`` when it is of the shape jsonb function ``fname`` takes, else its error."""
    top = doc.lstrip()[:1]
    kind = "object" if top == "{" else "array" if top == "[" else "scalar"
    if fname == "jsonb_object_keys" and kind != "object":
        raise PgError("22023", f"cannot call jsonb_object_keys on {'a scalar' if kind == 'scalar' else 'an array'}")
    if fname.startswith("jsonb_each") and kind != "object":
        raise PgError("22023", f"cannot call {fname} on a non-object")
    if fname.startswith("jsonb_array_elements") and kind != "array":
        raise PgError("22023", f"cannot extract elements from {'a scalar' if kind == 'scalar' else 'an object'}")
    return doc


def _null_key(position: int) -> PgError:
    """json_build_object's error for a NULL key (jsonb_build_object's: a negative position)."""
    if position < 0:
        return PgError("22023", f"argument {-position}: key must not be null")
    return PgError("22023", f"argument {position} cannot be null", hint="Object keys should be text.")


def _not_scalar(col: pa.Array | pa.ChunkedArray, position: pa.Array | pa.ChunkedArray) -> pa.Array:
    for v, at in _rows(col, position):
        if v is None and at:
            raise _null_key(at)
        if v is not None:
            raise PgError("22023", "key value must be scalar, not array, composite, or json")
    return pa.nulls(len(col), pa.string())


def _pair(key: pa.Array | pa.ChunkedArray, value: pa.Array | pa.ChunkedArray) -> pa.Array:
    out = []
    for k, v in _rows(key, value):
        if k is None:
            raise PgError("22023", "field name must not be null")
        out.append(f"{k} : {v}")
    return pa.array(out, pa.string())


def _array(printed: str, kind: str, pretty: bool) -> str:
    return json_text.array_json(printed, kind, pretty)


def _agg(items: list[str | None], structured: bool) -> str:
    return json_text.agg_json(items, structured)


def _array_of(items: list[str], pretty: bool) -> str:
    return "[" + (",\n " if pretty else ",").join(items) + "]"


def _object_agg(items: list[str]) -> str:
    return json_text.object_agg_json(items)


def _object1(items: list[str | None]) -> str:
    return json_text.json_object(items)


def _object2(keys: list[str | None], values: list[str | None]) -> str:
    return json_text.json_object(keys, values, two=True)


def _build_variadic(printed: str, kind: str, is_object: bool) -> str:
    items = json_text.parse_array_out(printed)
    flat = json_text.flatten(items)
    if not is_object:
        return "[" + ", ".join("null" if v is None else json_text.value_json(str(v), kind) for v in flat) + "]"
    if len(flat) % 2:
        raise PgError(
            "22023", "argument list must have even number of elements",
            hint="The arguments of json_build_object() must consist of alternating keys and values.",
        )  # fmt: skip
    parts = []
    for i in range(0, len(flat), 2):
        k, v = flat[i], flat[i + 1]
        if k is None:
            raise PgError("22023", f"argument {i + 1} cannot be null", hint="Object keys should be text.")
        value = "null" if v is None else json_text.value_json(str(v), kind)
        parts.append(f"{json_text.value_json(str(k), kind, key=True)} : {value}")
    return "{" + ", ".join(parts) + "}"


def _udfs() -> list[tuple[str, Callable[..., pa.Array], list[str], str, bool]]:
    """(name, function, argument types, result type, whether it raises for a row (so
    must not be folded into an error for a query without rows))."""
    each_type = "STRUCT(key VARCHAR, value VARCHAR)[]"
    each_arrow = pa.struct([("key", pa.string()), ("value", pa.string())])
    return [
        (GET_FIELD, _strings(json_text.field), ["VARCHAR", "VARCHAR", "BOOLEAN"], "VARCHAR", False),
        (GET_INDEX, _strings(json_text.element), ["VARCHAR", "INTEGER", "BOOLEAN"], "VARCHAR", False),
        (GET_PATH, _strings(json_text.path), ["VARCHAR", "VARCHAR[]", "BOOLEAN"], "VARCHAR", False),
        (JSONB_GET_PATH, _strings(json_text.jsonb_path), ["VARCHAR", "VARCHAR[]", "BOOLEAN"], "VARCHAR", False),
        (JSONB_GET_FIELD, _strings(json_text.jsonb_field), ["VARCHAR", "VARCHAR", "BOOLEAN"], "VARCHAR", False),
        (JSONB_GET_INDEX, _strings(json_text.jsonb_element), ["VARCHAR", "INTEGER", "BOOLEAN"], "VARCHAR", False),
        (ARRAY_LENGTH, _columnwise(json_text.array_length, pa.int32()), ["VARCHAR"], "INTEGER", False),
        (TYPEOF, _strings(json_text.typeof), ["VARCHAR"], "VARCHAR", False),
        (STRIP_NULLS, _strings(json_text.strip_nulls), ["VARCHAR"], "VARCHAR", False),
        (OBJECT_KEYS, _lists(json_text.object_keys, pa.string()), ["VARCHAR"], "VARCHAR[]", False),
        (ARRAY_ELEMENTS, _lists(json_text.array_elements, pa.string()), ["VARCHAR", "BOOLEAN"], "VARCHAR[]", False),
        (EACH, _lists(_each, each_arrow), ["VARCHAR", "BOOLEAN"], each_type, False),
        (EACH_RECORDS, _lists(_each_records, pa.string()), ["VARCHAR", "BOOLEAN"], "VARCHAR[]", False),
        (JSONB_SHAPE, _strings(jsonb_shape), ["VARCHAR", "VARCHAR"], "VARCHAR", True),
        (VALUE, _strings(_value), ["VARCHAR", "VARCHAR"], "VARCHAR", False),
        (KEY, _strings(_key), ["VARCHAR", "VARCHAR"], "VARCHAR", False),
        (BUILD_KEY, _build_key, ["VARCHAR", "VARCHAR", "INTEGER"], "VARCHAR", True),
        (NOT_SCALAR, _not_scalar, ["VARCHAR", "INTEGER"], "VARCHAR", True),
        (PAIR, _pair, ["VARCHAR", "VARCHAR"], "VARCHAR", True),
        (ARRAY, _strings(_array), ["VARCHAR", "VARCHAR", "BOOLEAN"], "VARCHAR", False),
        (AGG, _strings(_agg), ["VARCHAR[]", "BOOLEAN"], "VARCHAR", False),
        (OBJECT_AGG, _strings(_object_agg), ["VARCHAR[]"], "VARCHAR", False),
        (ARRAY_OF_JSON, _strings(_array_of), ["VARCHAR[]", "BOOLEAN"], "VARCHAR", False),
        (OBJECT1, _strings(_object1), ["VARCHAR[]"], "VARCHAR", False),
        (OBJECT2, _strings(_object2), ["VARCHAR[]", "VARCHAR[]"], "VARCHAR", False),
        (BUILD_VARIADIC, _strings(_build_variadic), ["VARCHAR", "VARCHAR", "BOOLEAN"], "VARCHAR", False),
        *json_records.udfs(),
    ]


def install(con: Any) -> None:
    """Create the json UDFs in ``con``'s database, once. They see NULLs (DuckDB's default
    handling would refuse a NULL result, which "no such key" is). Those that raise for a
    row that reaches them (a NULL or non-scalar key) are marked as having side effects,
    so DuckDB does not fold them into an error for a query that has no such row."""
    have = {r[0] for r in con.execute(
        "SELECT function_name FROM duckdb_functions() WHERE function_name LIKE 'wpx_json%'"
    ).fetchall()}
    for fname, fn, args, ret, raises in _udfs():
        if fname in have:
            continue
        con.create_function(
            fname, keep_errors(fn), args, ret, type="arrow",
            null_handling="special", side_effects=raises,
        )  # fmt: skip


# -- json has no equality or ordering ------------------------------------------------------

_SORTS = "could not identify an ordering operator for type json"


def incomparable(what: str, types: Sequence[Any]) -> PgError | None:
    """PostgreSQL's error where ``what`` would compare, sort or group a json value (json
    has no equality or ordering operator, DuckDB would compare its text); None when no
    type in ``types`` is json. ``what`` is the rewriter's wording of the use: ``GROUP BY``,
    ``ORDER BY …``, ``operator =``, ``= ANY/ALL``, ``GREATEST/LEAST``, ``max()`` …"""
    if not any(t is not None and t.name == "json" for t in types):
        return None
    shown = [t.name if t is not None else "unknown" for t in types]
    if what.startswith("ORDER BY"):
        return PgError("42883", _SORTS, hint="Use an explicit ordering operator or modify the query.")
    if what == "GREATEST/LEAST":
        return PgError("42883", "could not identify a comparison function for type json")
    if what in ("min()", "max()"):
        return PgError("42883", f"function {what[:-2]}(json) does not exist", hint=NO_FUNCTION_HINT)
    op = None
    if what.startswith("operator "):
        op = what.split(" ", 1)[1]
    elif what.endswith(" ANY/ALL"):
        op = what.split(" ", 1)[0]
    elif what in ("JOIN USING", "NATURAL JOIN", "CASE … WHEN", "IN/ANY/ALL (subquery)"):
        op = "="
    if op is not None:
        left, right = (shown + shown)[:2] if len(shown) == 1 else shown[:2]
        return PgError("42883", f"operator does not exist: {left} {op} {right}", hint=_NO_OPERATOR_HINT)
    return PgError("42883", "could not identify an equality operator for type json")
