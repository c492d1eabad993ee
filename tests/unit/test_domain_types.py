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


def test_a_relation_with_domain_columns_is_preceded_by_their_type_messages() -> None:
    """send_relation_and_attrs: a Type message per domain column (the domain's OID, named by
    its base type, pg_catalog as "") and per enum column (the enum, or its array type, by
    its own schema and name), then the Relation with the declared types' OIDs."""
    from decoding.catalog import Catalog, Column, EnumLabel, EnumType, Table
    from decoding.pgoutput.plugin import _RelEntry, type_named
    from decoding.pgoutput.proto import Relation, decode_message

    mood = EnumType(16410, 16409, "public", "mood", (EnumLabel(16411, "sad", 1.0),))
    cat = Catalog().apply({"op": "put_enum", "enum": mood.to_json()})
    cols = (
        Column(1, "id", parse_type("int4")),
        Column(2, "p", parse_type("int4%16385")),
        Column(3, "a", parse_type("int4[]%16390")),
        Column(4, "v", parse_type("varchar(8)%16395")),
        Column(5, "m", mood.column_type),
        Column(6, "ms", parse_type(mood.column_type.type_text() + "[]")),
    )
    t = Table(16400, "public", "t", cols, ("id",))
    types = tuple(n for c in cols if (n := type_named(cat, c.type)) is not None)
    entry = _RelEntry(t, True, True, True, True, cols, frozenset({"id"}), {}, None, types)  # type: ignore[arg-type]
    got = [decode_message(m) for m in entry.schema_messages()]
    assert got[:5] == [
        Type(16385, "", "int4"), Type(16390, "", "_int4"), Type(16395, "", "varchar"),
        Type(16410, "public", "mood"), Type(16409, "public", "_mood"),
    ]  # fmt: skip
    rel = got[5]
    assert isinstance(rel, Relation) and len(got) == 6
    assert [(c.name, c.type_oid, c.type_modifier) for c in rel.columns] == [
        ("id", 23, -1), ("p", 16385, -1), ("a", 16390, -1), ("v", 16395, -1), ("m", 16410, -1), ("ms", 16409, -1),
    ]  # fmt: skip
