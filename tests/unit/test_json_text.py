"""The json type's functions over its text (``sql/json_text.py``): the expected answers are
PostgreSQL 15's, taken from a server (the integration tests compare with one live)."""

from __future__ import annotations

import pytest

from decoding.errors import PgError
from walsender_proxy.sql import json_text as J


def test_tokens_cut_as_json_lex() -> None:
    toks = J.tokens(' {"a\\"b" : [1, -2.5e3, true, null]} ')
    assert [(t.kind, t.start, t.end) for t in toks] == [
        ("{", 1, 2), ("s", 2, 8), (":", 9, 10), ("[", 11, 12), ("n", 12, 13), (",", 13, 14),
        ("n", 15, 21), (",", 21, 22), ("t", 23, 27), (",", 27, 28), ("N", 29, 33), ("]", 33, 34), ("}", 34, 35),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("token", "text"),
    [('"plain"', "plain"), ('"a\\nb\\t\\"\\\\\\/"', 'a\nb\t"\\/'), ('"\\u00e9\\ud83d\\ude00"', "é😀")],
)
def test_strings_de_escaped(token: str, text: str) -> None:
    assert J.decode_string(token, J.tokens(token)[0]) == text


@pytest.mark.parametrize(
    ("token", "sqlstate", "detail"),
    [
        ('"\\u0000"', "22P05", "\\u0000 cannot be converted to text."),
        ('"\\ud800"', "22P02", "Unicode low surrogate must follow a high surrogate."),
        ('"\\ud800x"', "22P02", "Unicode low surrogate must follow a high surrogate."),
        ('"\\udc00"', "22P02", "Unicode low surrogate must follow a high surrogate."),
        ('"\\ud800\\ud800"', "22P02", "Unicode high surrogate must not follow a high surrogate."),
    ],
)
def test_bad_escapes_are_postgresql_errors(token: str, sqlstate: str, detail: str) -> None:
    with pytest.raises(PgError) as e:
        J.decode_string(token, J.tokens(token)[0])
    assert (e.value.sqlstate, e.value.detail) == (sqlstate, detail)


DOC = '{"a": [{"b": "c"}, {"b": "cc"}], "n" : null, "s": "x\\ty", "a2" : { "k" :1 } }'


@pytest.mark.parametrize(
    ("doc", "key", "as_text", "want"),
    [
        (DOC, "a", False, '[{"b": "c"}, {"b": "cc"}]'),  # the text as given, spaces and all
        (DOC, "a2", False, '{ "k" :1 }'),
        (DOC, "n", False, "null"),
        (DOC, "n", True, None),
        (DOC, "s", False, '"x\\ty"'),
        (DOC, "s", True, "x\ty"),
        (DOC, "", False, None),
        (DOC, "z", False, None),
        ('{"a":1,"a":2}', "a", False, "2"),  # the last duplicate
        ('[1, 2]', "a", False, None),
        ('"a"', "a", False, None),
    ],
)
def test_field(doc: str, key: str, as_text: bool, want: str | None) -> None:
    assert J.field(doc, key, as_text) == want


@pytest.mark.parametrize(
    ("doc", "index", "as_text", "want"),
    [
        ('[{"b": "c"}, {"b": "cc"}]', 1, False, '{"b": "cc"}'),
        ('[{"b": "c"}, {"b": "cc"}]', 1, True, '{"b": "cc"}'),
        ('[{"b": "c"}, {"b": "cc"}]', -1, False, '{"b": "cc"}'),
        ('[{"b": "c"}, {"b": "cc"}]', -2, False, '{"b": "c"}'),
        ('[{"b": "c"}, {"b": "cc"}]', -3, False, None),
        ('[{"b": "c"}, {"b": "cc"}]', 2, False, None),
        (' [ 1 , "a" , null ] ', 1, True, "a"),
        (' [ 1 , "a" , null ] ', 2, True, None),
        ('[1]', J.INT_MIN, False, None),
        ('{"0": 1}', 0, False, None),
    ],
)
def test_element(doc: str, index: int, as_text: bool, want: str | None) -> None:
    assert J.element(doc, index, as_text) == want


@pytest.mark.parametrize(
    ("doc", "path", "as_text", "want"),
    [
        ('{"a": {"b":{"c": "foo"}}}', [], False, '{"a": {"b":{"c": "foo"}}}'),
        ("  42  ", [], False, "  42"),  # a top-level scalar keeps the white space before it
        ('  "x\\u0041"  ', [], False, '  "x\\u0041"'),
        ('  "x\\u0041"  ', [], True, "xA"),
        ("null", [], True, None),
        ('{"a": {"b":{"c": "foo"}}}', ["a", "b"], False, '{"c": "foo"}'),
        ('{"a": {"b":{"c": "foo"}}}', ["a", None], False, None),
        ('{"a": {"b":{"c": "foo"}}}', ["a", ""], False, None),
        ('{"a": [{"b": "c"}, {"b": "cc"}]}', ["a", "1", "b"], True, "cc"),
        ('{"a":[1,2]}', ["a", " 1"], False, "2"),  # strtol: white space and a sign
        ('{"a":[1,2]}', ["a", "+1"], False, "2"),
        ('{"a":[1,2]}', ["a", "1 "], False, None),
        ('{"a":[1,2]}', ["a", "2147483648"], False, None),
        ('{"1": "one"}', ["1"], True, "one"),
        # with duplicate keys every matching path counts, the last match wins
        ('{"a":{"b":1},"a":{"c":2}}', ["a", "b"], False, "1"),
        # a negative subscript is made positive by the first array at its level
        ('{"x":[1,2,3,4,5],"a":[1,2]}', ["a", "-1"], False, None),
        ("[[1,2],[3,4,5]]", ["-1", "-1"], False, "4"),
        ("[[1,2,3],[4,5]]", ["-1", "-1"], False, None),
        ('{"a":[1,2,3],"a":[4,5]}', ["a", "-1"], False, "3"),
        ("42", ["0"], False, None),
    ],
)
def test_path(doc: str, path: list[str | None], as_text: bool, want: str | None) -> None:
    assert J.path(doc, path, as_text) == want


def test_getters_de_escape_the_whole_text() -> None:
    with pytest.raises(PgError) as e:
        J.field('{"a":"\\u0000","b":1}', "b", False)
    assert e.value.sqlstate == "22P05"
    assert J.array_length('[1,"\\u0000"]') == 2  # (json_array_length does not de-escape)
    assert J.array_elements('[1,"\\u0000"]', as_text=False) == ["1", '"\\u0000"']
    assert J.typeof('"\\ud800"') == "string"


@pytest.mark.parametrize(
    ("doc", "want"),
    [("[]", 0), ('[1,[2,3],{"a":[4]}]', 3), (" [ 1 ] ", 1)],
)
def test_array_length(doc: str, want: int) -> None:
    assert J.array_length(doc) == want


@pytest.mark.parametrize(
    ("doc", "message"),
    [('{"f1":1}', "cannot get array length of a non-array"), ("4", "cannot get array length of a scalar")],
)
def test_array_length_errors(doc: str, message: str) -> None:
    with pytest.raises(PgError) as e:
        J.array_length(doc)
    assert (e.value.sqlstate, e.value.message) == ("22023", message)


def test_typeof() -> None:
    assert [J.typeof(d) for d in [" 1 ", '"x"', "true", "false", "null", "[]", "{}"]] == [
        "number", "string", "boolean", "boolean", "null", "array", "object",
    ]  # fmt: skip


def test_each_elements_keys() -> None:
    doc = '{"f1":[1, 2],"f2":{"f3":1},"f4":null,"f5":"a\\"b","f1":0}'
    assert J.each(doc, as_text=False) == [
        ("f1", "[1, 2]"), ("f2", '{"f3":1}'), ("f4", "null"), ("f5", '"a\\"b"'), ("f1", "0"),
    ]  # fmt: skip
    assert J.each(doc, as_text=True)[2:4] == [("f4", None), ("f5", 'a"b')]
    assert J.object_keys(doc) == ["f1", "f2", "f4", "f5", "f1"]
    arr = '[ "a", null , {"x" : 1} ]'
    assert J.array_elements(arr, as_text=False) == ['"a"', "null", '{"x" : 1}']
    assert J.array_elements(arr, as_text=True) == ["a", None, '{"x" : 1}']


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: J.object_keys("[1]"), "cannot call json_object_keys on an array"),
        (lambda: J.object_keys("1"), "cannot call json_object_keys on a scalar"),
        (lambda: J.each("[1]", False), "cannot deconstruct an array as an object"),
        (lambda: J.each('"x"', True), "cannot deconstruct a scalar"),
        (lambda: J.array_elements('{"a":1}', False), "cannot call json_array_elements on a non-array"),
        (lambda: J.array_elements("1", True), "cannot call json_array_elements_text on a scalar"),
    ],
)
def test_structure_errors(call: object, message: str) -> None:
    with pytest.raises(PgError) as e:
        call()  # type: ignore[operator]
    assert (e.value.sqlstate, e.value.message) == ("22023", message)


def test_strip_nulls() -> None:
    assert J.strip_nulls('{ "a" : null , "b" : [ 1 , null ] , "c" : { "d" : null } }') == '{"b":[1,null],"c":{}}'
    assert J.strip_nulls('{"a":null,"b":"\\u0041"}') == '{"b":"A"}'
    assert J.strip_nulls('  "x"  ') == '"x"'


def test_strtoint() -> None:
    assert [J.strtoint(s) for s in ["1", " -2", "+3", "1 ", "", "x", "2147483647", "-2147483649"]] == [
        1, -2, 3, J.INT_MIN, J.INT_MIN, J.INT_MIN, 2147483647, J.INT_MIN,
    ]  # fmt: skip


def test_escape_json() -> None:
    assert J.escape_json('a"b\\c\n\x01\x1b\x7fé') == '"a\\"b\\\\c\\n\\u0001\\u001b\x7fé"'


@pytest.mark.parametrize(
    ("printed", "kind", "want"),
    [
        ("1.50", "n", "1.50"),
        ("1e+100", "n", "1e+100"),
        ("NaN", "n", '"NaN"'),
        ("-Infinity", "n", '"-Infinity"'),
        ("t", "b", "true"),
        ("0044-03-15 BC", "d", '"0044-03-15 BC"'),
        ("2014-05-28 12:22:35.614298", "t", '"2014-05-28T12:22:35.614298"'),
        ("0044-03-15 12:00:00 BC", "t", '"0044-03-15T12:00:00 BC"'),
        ("2014-05-28 12:22:35.6+00", "z", '"2014-05-28T12:22:35.6+00:00"'),
        ("infinity", "z", '"infinity"'),
        ('{"a" : 1}', "j", '{"a" : 1}'),
        ("1 day 02:00:00", "s", '"1 day 02:00:00"'),
    ],
)
def test_value_json(printed: str, kind: str, want: str) -> None:
    assert J.value_json(printed, kind) == want


def test_keys_are_strings() -> None:
    assert J.value_json("1.5", "n", key=True) == '"1.5"'
    assert J.value_json("t", "b", key=True) == '"true"'
    with pytest.raises(PgError, match="key value must be scalar"):
        J.value_json("{}", "j", key=True)


def test_arrays() -> None:
    assert J.parse_array_out('{1,"a b",NULL,"NULL",{2,"\\"q"}}') == ["1", "a b", None, "NULL", ["2", '"q']]
    assert J.array_json('{{1,2},{3,NULL}}', "n") == "[[1,2],[3,null]]"
    assert J.array_json('{{1,2},{3,4}}', "n", pretty=True) == "[[1,2],\n [3,4]]"
    assert J.array_json('{NaN,1.5}', "n") == '["NaN",1.5]'
    assert J.array_json("{}", "s") == "[]"


def test_aggregates() -> None:
    assert J.agg_json(["1", None, "3"], structured=False) == "[1, null, 3]"
    assert J.agg_json([None, "[1]", "[3]"], structured=True) == "[null, \n [1], \n [3]]"
    assert J.object_agg_json(['"a" : 1', '"b" : null']) == '{ "a" : 1, "b" : null }'
    assert J.record_text(["f1", '"x y"', None, ""]) == '(f1,"""x y""",,"")'


def test_json_object() -> None:
    assert J.json_object([]) == "{}"
    assert J.json_object([], [], two=True) == "{}"
    assert J.json_object(["a", "1", "b", None]) == '{"a" : "1", "b" : null}'
    assert J.json_object([["a", "1"], ["d e f", "a b c"]]) == '{"a" : "1", "d e f" : "a b c"}'
    assert J.json_object(["a", "b"], ["1", "2"], two=True) == '{"a" : "1", "b" : "2"}'
    assert J.json_object(["a", "1", "b", "2", "a", "3"], jsonb=True) == '{"a": "3", "b": "2"}'


@pytest.mark.parametrize(
    ("args", "sqlstate", "message"),
    [
        ((["a", "b", "c"],), "2202E", "array must have even number of elements"),
        (([["a"], ["b"]],), "2202E", "array must have two columns"),
        (([[["a", "b"]]],), "2202E", "wrong number of array subscripts"),
        (([None, "1"],), "22004", "null value not allowed for object key"),
        ((["a"], ["1", "2"]), "2202E", "mismatched array dimensions"),
        ((["a"], []), "2202E", "wrong number of array subscripts"),
        (([["a", "b"]], [["a", "b"]]), "2202E", "wrong number of array subscripts"),
    ],
)
def test_json_object_errors(args: tuple[object, ...], sqlstate: str, message: str) -> None:
    with pytest.raises(PgError) as e:
        J.json_object(*args, two=len(args) == 2)
    assert (e.value.sqlstate, e.value.message) == (sqlstate, message)


def test_parse_array_in_keeps_dimensions() -> None:
    assert J.parse_array_in('{a,"b c",NULL}') == ["a", "b c", None]
    assert J.parse_array_in('{{a,1},{"d e f", NULL}}') == [["a", "1"], ["d e f", None]]
    assert J.parse_array_in("{}") == []
    with pytest.raises(PgError) as e:
        J.parse_array_in("{{a},{b,c}}")
    assert e.value.sqlstate == "22P02"


@pytest.mark.parametrize(
    ("doc", "path", "as_text", "want"),
    [
        ('{"a": [1, {"b": "x"}]}', ["a", "-1", "b"], True, "x"),
        ('{"a": [1, {"b": "x"}]}', ["a", "1"], False, '{"b": "x"}'),
        ('{"a": [1, {"b": "x"}]}', [], False, '{"a": [1, {"b": "x"}]}'),
        ('{"a": [1, 2, 3]}', ["a", "-4"], False, None),
        ('{"a": [1, 2], "x": [1, 2, 3, 4, 5]}', ["a", "-1"], False, "2"),  # (each array on its own)
        ('"x"', [], True, "x"),
        ("null", [], True, None),
        ('{"a": 1}', ["a", "b"], False, None),
    ],
)
def test_jsonb_path(doc: str, path: list[str | None], as_text: bool, want: str | None) -> None:
    assert J.jsonb_path(doc, path, as_text) == want
