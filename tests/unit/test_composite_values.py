"""record_in's reading of a composite literal (no server needed): what record_out writes
reads back field for field, and malformed literals get record_in's DETAILs; the catalog
keeps a composite type and its dropped attributes across a restart (JSON round trip)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decoding.catalog import Catalog, CompositeType, dropped_attribute
from decoding.errors import PgError
from decoding.pgtypes import parse_type
from decoding.pgvalues.record import quote_field
from walsender_proxy.sql.composite_values import record_fields

_texts = st.lists(st.one_of(st.none(), st.text(alphabet=st.characters(blacklist_characters="\x00"))), min_size=1, max_size=6)


@given(_texts)
def test_what_record_out_writes_record_in_reads(fields: list[str | None]) -> None:
    literal = "(" + ",".join("" if f is None else quote_field(f) for f in fields) + ")"
    assert record_fields(literal, len(fields)) == fields


@pytest.mark.parametrize(
    ("literal", "n", "detail"),
    [
        ("x", 2, "Missing left parenthesis."),
        ("", 1, "Missing left parenthesis."),
        ("(1", 2, "Unexpected end of input."),
        ('(1,"ab', 2, "Unexpected end of input."),
        ("(1,a\\", 2, "Unexpected end of input."),
        ("(1)", 2, "Too few columns."),
        ("(1,2,3)", 2, "Too many columns."),
        ("(1,2) x", 2, "Junk after right parenthesis."),
    ],
)
def test_malformed_literals_are_22P02_with_record_in_detail(literal: str, n: int, detail: str) -> None:
    with pytest.raises(PgError) as e:
        record_fields(literal, n)
    assert (e.value.sqlstate, e.value.message, e.value.detail) == ("22P02", f'malformed record literal: "{literal}"', detail)


def test_record_in_keeps_white_space_and_reads_escapes() -> None:
    assert record_fields('  ( a ,"b""c",d\\,e,)  ', 4) == [" a ", 'b"c', "d,e", None]


def test_a_composite_type_survives_the_catalog_round_trip() -> None:
    ct = CompositeType(
        16390, 16389, 16388, "public", "pair",
        (("a", parse_type("numeric(5,2)")), (dropped_attribute(2), parse_type("text")), ("c", parse_type("int4[]"))),
    )  # fmt: skip
    nested = CompositeType(16393, 16392, 16391, "public", "outer", (("p", ct.column_type), ("ps", parse_type(ct.column_type.type_text() + "[]"))))
    cat = Catalog().apply({"op": "put_composite", "composite": ct.to_json()}).apply({"op": "put_composite", "composite": nested.to_json()})
    again = Catalog.from_json(cat.to_json())
    assert again.composites == cat.composites
    assert [n for n, _ in again.composites[16390].live_attributes] == ["a", "c"]
    assert again.composites[16393].attributes[1][1].is_composite and again.composites[16393].attributes[1][1].is_array
    assert again.next_oid == 16394
