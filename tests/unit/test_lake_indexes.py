"""Unique indexes as the lake enforces them, whoever writes (the transaction API, a big
streamed insert, a Spark changeset goes the same way): the primary key and each unique
index checked against committed rows, the transaction's own and other open transactions'
pending rows; NULLs distinct unless NULLS NOT DISTINCT; kept across a restart."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from decoding.catalog import choose_name
from tests.lakeutil import FAST, MakeLake
from walsender_proxy.lake import Lake, LakeError


def _violation(fn, *a, **kw) -> tuple[str, str, str | None]:
    with pytest.raises(LakeError) as ei:
        fn(*a, **kw)
    return ei.value.sqlstate, ei.value.message, ei.value.detail


def _lake(make_lake: MakeLake, nnd: bool = False) -> Lake:
    lk = make_lake(columns=[("id", "bigint"), ("code", "text"), ("n", "int")])
    with lk.begin() as tx:
        assert (
            tx.create_index("t", None, ["code"], unique=True, nulls_not_distinct=nnd)
            == "t_code_idx"
        )
    return lk


def test_a_unique_index_refuses_a_committed_own_or_pending_key(make_lake: MakeLake) -> None:
    lk = _lake(make_lake)
    with lk.begin() as tx:
        tx.insert("t", [{"id": 1, "code": "a", "n": 1}])
    dup = (
        "23505",
        'duplicate key value violates unique constraint "t_code_idx"',
        "Key (code)=(a) already exists.",
    )
    with lk.begin() as tx:
        assert _violation(tx.insert, "t", [{"id": 2, "code": "a", "n": 2}]) == dup
        tx.rollback()
    with lk.begin() as tx:
        tx.insert("t", [{"id": 3, "code": "b", "n": 3}])
        assert _violation(tx.insert, "t", [{"id": 4, "code": "b", "n": 4}])[0] == "23505"
        tx.rollback()
    other = lk.begin()
    other.insert("t", [{"id": 5, "code": "c", "n": 5}])
    with lk.begin() as tx:
        assert _violation(tx.insert, "t", [{"id": 6, "code": "c", "n": 6}])[0] == "23505"
        tx.rollback()
    other.rollback()
    with lk.begin() as tx:  # (its row is gone with it)
        tx.insert("t", [{"id": 6, "code": "c", "n": 6}])


def test_an_update_is_checked_only_when_it_assigns_a_key_column(make_lake: MakeLake) -> None:
    lk = _lake(make_lake)
    with lk.begin() as tx:
        tx.insert("t", [{"id": 1, "code": "a", "n": 1}, {"id": 2, "code": "b", "n": 2}])
    with lk.begin() as tx:
        assert tx.update("t", {"n": 9}, {"id": 1}) == 1
        assert (
            _violation(tx.update, "t", {"code": "b"}, {"id": 1})[2]
            == "Key (code)=(b) already exists."
        )
        tx.rollback()
    with lk.begin() as tx:  # (a row keeps its own key)
        assert tx.update("t", {"code": "a"}, {"id": 1}) == 1


@pytest.mark.parametrize("nnd", [False, True])
def test_nulls_are_distinct_unless_the_index_says_not(make_lake: MakeLake, nnd: bool) -> None:
    lk = _lake(make_lake, nnd)
    with lk.begin() as tx:
        tx.insert("t", [{"id": 1, "code": None, "n": 1}])
    with lk.begin() as tx:
        if nnd:
            assert (
                _violation(tx.insert, "t", [{"id": 2, "code": None, "n": 2}])[2]
                == "Key (code)=(null) already exists."
            )
            tx.rollback()
        else:
            tx.insert("t", [{"id": 2, "code": None, "n": 2}, {"id": 3, "code": None, "n": 3}])


def test_a_big_streamed_insert_is_checked_against_every_unique_key(make_lake: MakeLake) -> None:
    lk = _lake(make_lake)
    n = 50_000
    rows = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "code": [f"k{i}" for i in range(n)],
            "n": pa.array(range(n), pa.int32()),
        }
    )
    with lk.begin() as tx:
        tx.insert("t", [{"id": -1, "code": "k77", "n": 0}])
    batches = [rows.slice(i, 10_000) for i in range(0, n, 10_000)]
    with lk.begin() as tx:
        assert (
            _violation(tx.apply_insert_batches, "t", batches)[2]
            == "Key (code)=(k77) already exists."
        )
        tx.rollback()


def test_building_a_unique_index_over_duplicates_names_one(make_lake: MakeLake) -> None:
    lk = make_lake(
        columns=[("id", "bigint"), ("code", "text")],
        rows=[
            {"id": 1, "code": "a"},
            {"id": 2, "code": "a"},
            {"id": 3, "code": None},
            {"id": 4, "code": None},
        ],
    )
    with lk.begin() as tx:
        assert _violation(tx.create_index, "t", "t_u", ["code"], unique=True) == (
            "23505",
            'could not create unique index "t_u"',
            "Key (code)=(a) is duplicated.",
        )
        tx.rollback()
    with lk.begin() as tx:
        tx.delete("t", {"id": 2})
    with lk.begin() as tx:  # (two NULLs are no duplicate, unless NULLS NOT DISTINCT)
        assert (
            _violation(tx.create_index, "t", "t_u", ["code"], unique=True, nulls_not_distinct=True)[
                2
            ]
            == "Key (code)=(null) is duplicated."
        )
        tx.rollback()
    with lk.begin() as tx:
        assert tx.create_index("t", "t_u", ["code"], unique=True) == "t_u"


def test_indexes_survive_a_restart(tmp_path: Path) -> None:
    lk = Lake(tmp_path / "d", FAST)
    with lk.begin() as tx:
        tx.create_table("t", [("id", "bigint"), ("code", "text")], primary_key=["id"])
        tx.create_index("t", None, ["code"], unique=True, constraint=True)
        tx.insert("t", [{"id": 1, "code": "a"}])
    lk.close()
    lk = Lake(tmp_path / "d", FAST)
    try:
        t = lk.catalog.resolve_table("t")
        assert [(ix.name, ix.unique, ix.constraint > 0) for ix in t.indexes] == [
            ("t_code_key", True, True)
        ]
        with lk.begin() as tx:
            assert (
                _violation(tx.insert, "t", [{"id": 2, "code": "a"}])[1]
                == 'duplicate key value violates unique constraint "t_code_key"'
            )
            tx.rollback()
    finally:
        lk.close()


def test_dropping_or_renaming_a_column_follows_its_indexes(make_lake: MakeLake) -> None:
    lk = _lake(make_lake)
    with lk.begin() as tx:
        tx.create_index("t", "t_code_n", ["code", "n"])
        tx.rename_column("t", "code", "c2")
    assert [ix.columns for ix in lk.catalog.resolve_table("t").indexes] == [("c2",), ("c2", "n")]
    with lk.begin() as tx:
        tx.drop_column("t", "c2")
    assert lk.catalog.resolve_table("t").indexes == ()


def test_names_are_cut_as_postgresql_cuts_them() -> None:
    assert choose_name("t", "a_b", "idx") == "t_a_b_idx"
    long = "x" * 40
    assert choose_name(long, "y" * 40, "key") == "x" * 29 + "_" + "y" * 29 + "_key"
    assert len(choose_name(long, "y" * 40, "key").encode()) == 63
    assert choose_name("t", "", "pkey") == "t_pkey"
