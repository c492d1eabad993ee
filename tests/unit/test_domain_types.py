"""Domains in the type and catalog layers: a column's type text and JSON keep the domain
(``int4%16385``) while values, Arrow storage and RowDescription stay the base type's; a
catalog keeps its domains through JSON and resolves a chain of them; pgoutput's Type
message for a domain names the base type, as logicalrep_write_typ does."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from decoding.catalog import DOMAIN_VALUE, Catalog, Check, Domain
from decoding.pgoutput.proto import Type
from decoding.pgtypes import ColumnType, base_types, parse_type


@given(st.sampled_from(base_types()), st.booleans(), st.integers(min_value=16384, max_value=2**31 - 1))
def test_a_domain_column_type_round_trips_and_stores_as_its_base(base, is_array, oid) -> None:
    ct = ColumnType(base, is_array=is_array, domain=oid)
    assert parse_type(ct.type_text()) == ct
    assert ColumnType.from_json(ct.to_json()) == ct
    assert ct.oid == ColumnType(base, is_array=is_array).oid  # values, RowDescription
    assert ct.declared_oid == oid  # atttypid, Relation message
    assert ct.arrow == ct.bare.arrow and ct.bare.domain == 0


def _catalog() -> Catalog:
    check = Check(16390, "pos_check", f"(\x02{DOMAIN_VALUE}\x02 > 0)", f"\x02{DOMAIN_VALUE}\x02 > 0", f"(\x02{DOMAIN_VALUE}\x02 > 0)", (DOMAIN_VALUE,))
    pos = Domain(16385, 16386, "public", "pos", parse_type("int4"), checks=(check,))
    small = Domain(16387, 16388, "public", "small", parse_type("int4"), parent=16385, not_null=True)
    cat = Catalog()
    for d in (pos, small):
        cat = cat.apply({"op": "put_domain", "domain": d.to_json()})
    return cat


def test_a_catalog_keeps_its_domains_and_their_chains() -> None:
    cat = _catalog()
    again = Catalog.from_json(cat.to_json())
    assert again.domains == cat.domains
    assert [d.name for d in again.domain_chain(16387)] == ["small", "pos"]
    assert again.find_domain("public", "pos").column_type.type_text() == "int4%16385"
    assert again.next_oid > 16388
    dropped = again.apply({"op": "drop_domain", "oid": 16387})
    assert 16387 not in dropped.domains and 16385 in dropped.domains


def test_the_type_message_of_a_domain_names_its_base_type() -> None:
    # ('Y', the domain's OID, pg_catalog as "", the base type's name: logicalrep_write_typ)
    raw = Type(16385, "", "int4").encode()
    assert raw == b"Y" + (16385).to_bytes(4, "big") + b"\x00" + b"int4\x00"
    assert Type.decode(raw) == Type(16385, "", "int4")
