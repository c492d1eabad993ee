"""json_records: the text each column's input function receives (PostgreSQL's populate
rules), checked without a server; the integration tests compare whole rows with
PostgreSQL 15."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decoding.errors import PgError
from walsender_proxy.sql.json_records import ARRAY, JSON, SCALAR, record_texts, recordset_texts


def test_scalars_strings_and_nested_values() -> None:
    doc = '{"a": 1e3, "b": "x\\"y", "c": {"k" : 1 }, "d": null, "a": 2}'
    assert record_texts(doc, ["a", "b", "c", "d", "e"], SCALAR * 5, "json_to_record") == ["2", 'x"y', '{"k" : 1 }', None, None]
    assert record_texts(doc, ["b", "c"], JSON * 2, "json_to_record") == ['"x\\"y"', '{"k" : 1 }']


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        ('[1, "2", null]', '{"1","2",NULL}'),
        ("[[1, 2], [3, 4]]", '{{"1","2"},{"3","4"}}'),
        ("[[], []]", "{}"),
        ('[true, {"x": 1}]', '{"true","{\\"x\\": 1}"}'),
        ('"{1,2}"', "{1,2}"),
    ],
)
def test_arrays_become_array_literals(value: str, literal: str) -> None:
    assert record_texts(f'{{"a": {value}}}', ["a"], ARRAY, "json_to_record") == [literal]


@pytest.mark.parametrize(
    ("value", "message"),
    [("5", "expected JSON array"), ("[[1], 2]", "expected JSON array"), ("[[1], [2, 3]]", "malformed JSON array")],
)
def test_array_shape_errors(value: str, message: str) -> None:
    with pytest.raises(PgError) as e:
        record_texts(f'{{"a": {value}}}', ["a"], ARRAY, "json_to_record")
    assert (e.value.sqlstate, e.value.message) == ("22P02", message)


def test_shape_errors_name_the_function() -> None:
    with pytest.raises(PgError, match="cannot call populate_composite on an array"):
        record_texts("[1]", ["a"], SCALAR, "json_to_record")
    with pytest.raises(PgError, match="cannot call jsonb_to_recordset on an object"):
        recordset_texts('{"a": 1}', ["a"], SCALAR, "jsonb_to_recordset")
    with pytest.raises(PgError, match="argument of json_to_recordset must be an array of objects"):
        recordset_texts("[{}, 1]", ["a"], SCALAR, "json_to_recordset")


@given(st.lists(st.dictionaries(st.sampled_from("abc"), st.one_of(st.none(), st.integers(), st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=5)))))
def test_recordset_rows_follow_the_elements(rows: list[dict[str, object]]) -> None:
    got = recordset_texts(json.dumps(rows), ["a", "b", "c"], SCALAR * 3, "json_to_recordset")
    want = [[None if r.get(k) is None else str(r[k]) for k in "abc"] for r in rows]
    assert got == want
