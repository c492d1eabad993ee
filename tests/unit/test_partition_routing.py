"""Tuple routing and partition constraints in the lake (no SQL layer): rows inserted into
a partitioned table land in the partitions PostgreSQL would pick, in runs that keep the
rows' order; a row no partition takes fails the statement; a row written to a partition
directly is held to its constraint; a restart replays the tree as it was."""

from __future__ import annotations

import pyarrow as pa
import pytest

from decoding.errors import PgError
from tests.unit.conftest import MakeLake
from walsender_proxy.lake import Lake, partitions
from walsender_proxy.lake.partition_ddl import BoundSpec, BoundValue


def _v(x: int | str) -> BoundValue:
    return BoundValue("i", str(x)) if isinstance(x, int) else BoundValue("s", x)


def _tree(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.create_table("p", [("a", "integer"), ("b", "text")], partition_by=("range", [("a", -1)]))
        tx.create_partition("p1", "p", BoundSpec("r", lower=(_v(0),), upper=(_v(10),)))
        tx.create_partition("p2", "p", BoundSpec("r", lower=(_v(10),), upper=(BoundValue("max"),)), partition_by=("list", [("b", -1)]))
        tx.create_partition("p2x", "p2", BoundSpec("l", values=(_v("x"), BoundValue("n"))))
        tx.create_partition("p2d", "p2", BoundSpec("d"))


def test_rows_go_where_their_bounds_say(make_lake: MakeLake) -> None:
    lake = make_lake()
    _tree(lake)
    with lake.begin() as tx:
        assert tx.insert("p", [{"a": 1, "b": "x"}, {"a": 11, "b": "x"}, {"a": 12, "b": None}, {"a": 13, "b": "y"}, {"a": 2, "b": "z"}]) == 5
    with lake.begin() as tx:
        assert sorted(tx.read("p1").column("a").to_pylist()) == [1, 2]
        assert sorted(tx.read("p2x").column("a").to_pylist()) == [11, 12]
        assert tx.read("p2d").column("a").to_pylist() == [13]
    cat = lake.catalog_at(lake.frontier)
    assert [t.name for t in partitions.leaves(cat, cat.resolve_table("p"))] == ["p1", "p2x", "p2d"]


def test_a_row_no_partition_takes_fails_with_its_key(make_lake: MakeLake) -> None:
    lake = make_lake()
    _tree(lake)
    with lake.begin() as tx, pytest.raises(PgError) as e:
        tx.insert("p", [{"a": 1, "b": "x"}, {"a": -5, "b": "x"}])
    assert (e.value.sqlstate, e.value.message, e.value.detail) == (
        "23514", 'no partition of relation "p" found for row', "Partition key of the failing row contains (a) = (-5).",
    )


def test_a_partition_written_directly_holds_to_its_bounds_and_its_parents(make_lake: MakeLake) -> None:
    lake = make_lake()
    _tree(lake)
    for table, row in [("p1", {"a": 10, "b": "x"}), ("p2x", {"a": 5, "b": "x"}), ("p2d", {"a": 15, "b": "x"})]:
        with lake.begin() as tx, pytest.raises(PgError, match=f'new row for relation "{table}" violates partition constraint'):
            tx.insert(table, [row])


def test_the_tree_survives_a_restart(make_lake: MakeLake) -> None:
    lake = make_lake()
    _tree(lake)
    with lake.begin() as tx:
        tx.insert("p", pa.table({"a": pa.array([3, 30], pa.int32()), "b": ["q", "x"]}))
    lake.close()
    again = make_lake()
    cat = again.catalog_at(again.frontier)
    p2 = cat.resolve_table("p2")
    assert p2.partition_key is not None and p2.partition_bound is not None and p2.partition_bound.upper == (("max",),)
    with again.begin() as tx:
        assert tx.read("p2x").column("a").to_pylist() == [30]
