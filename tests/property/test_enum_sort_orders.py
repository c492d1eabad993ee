"""ALTER TYPE … ADD VALUE's sort orders (lake/enum_ddl.py): whatever the sequence of
BEFORE/AFTER additions, the labels stay in their order with strictly increasing float4
sort orders, and float4 running out between two neighbours renumbers the enum 1, 2, …
as PostgreSQL's RenumberEnumType does."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from decoding.catalog import Catalog, EnumType
from walsender_proxy.lake.enum_ddl import add_label, create_enum


def _catalog_with(labels: list[str]) -> tuple[Catalog, int]:
    oids = itertools.count(20000)
    ops, en = create_enum(Catalog(), lambda: next(oids), EnumType(0, 0, "public", "e"), labels)
    cat = Catalog()
    for op in ops:
        cat = cat.apply(op)
    return cat, en.oid


_steps = st.lists(st.tuples(st.integers(min_value=0, max_value=1000), st.sampled_from(["before", "after", "end"])), max_size=60)


@settings(max_examples=150, deadline=None)
@given(_steps)
def test_additions_keep_the_order_and_increasing_float4_sort_orders(steps: list[tuple[int, str]]) -> None:
    cat, oid = _catalog_with(["a", "b"])
    order = ["a", "b"]
    oids = itertools.count(30000)
    for n, (pick, where) in enumerate(steps):
        label = f"x{n}"
        neighbor = None if where == "end" else order[pick % len(order)]
        ops, added = add_label(cat, lambda: next(oids), oid, label, neighbor, where == "after", False)
        assert added
        for op in ops:
            cat = cat.apply(op)
        at = len(order) if neighbor is None else order.index(neighbor) + (where == "after")
        order.insert(at, label)
    en = cat.enums[oid]
    assert list(en.names) == order
    orders = [x.sortorder for x in en.labels]
    assert all(a < b for a, b in itertools.pairwise(orders))
    assert all(float(np.float32(x)) == x for x in orders)


def test_running_out_of_float4_between_two_labels_renumbers_them() -> None:
    cat, oid = _catalog_with(["L1", "L2"])
    oids = itertools.count(30000)
    for i in range(40):
        ops, _ = add_label(cat, lambda: next(oids), oid, f"i{i}", "L2", False, False)
        for op in ops:
            cat = cat.apply(op)
    en = cat.enums[oid]
    assert list(en.names) == ["L1", *(f"i{i}" for i in range(40)), "L2"]
    assert en.labels[-1].sortorder > 2.0  # (L2 began at 2: renumbered at least once)
    assert all(a < b for a, b in itertools.pairwise(x.sortorder for x in en.labels))
