"""CHECK constraints as the lake enforces them, whoever writes: the transaction API, a big
insert streamed to a changeset file, an update, a savepoint; ADD and VALIDATE over the
rows there; what DROP COLUMN and a restart do to them (tests against PostgreSQL itself are
in tests/integration/test_check_constraints_vs_postgres.py)."""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa
import pytest

from decoding.catalog import CHECK_MARK, Catalog, Check
from tests.lakeutil import FAST, MakeLake
from walsender_proxy.lake import Lake, LakeError, LakeSettings
from walsender_proxy.lake.check_ddl import CheckSpec


def _col(attnum: int) -> str:
    return f"{CHECK_MARK}{attnum}{CHECK_MARK}"


#: ``v > 0`` over column 2, as the SQL layer hands it over
POSITIVE = CheckSpec(None, f"({_col(2)} > 0)", f"{_col(2)} > 0", f"({_col(2)} > CAST(0 AS BIGINT))", (2,))


def _error(fn, *a, **kw) -> tuple[str, str, str | None]:
    with pytest.raises(LakeError) as ei:
        fn(*a, **kw)
    return ei.value.sqlstate, ei.value.message, ei.value.detail


def _lake(make_lake: MakeLake, settings: LakeSettings = FAST) -> Lake:
    lk = make_lake(settings)
    with lk.begin() as tx:
        tx.create_table("c", [("id", "bigint"), ("v", "bigint")], primary_key=["id"])
        assert tx.add_checks("c", [POSITIVE]) == ["c_v_check"]
    return lk


def test_a_big_streamed_insert_is_checked_batch_by_batch(make_lake: MakeLake) -> None:
    lk = _lake(make_lake, LakeSettings(fsync=False, background=False, changeset_bytes=1 << 16))
    n = 60_000
    good = pa.table({"id": pa.array(range(n), pa.int64()), "v": pa.array([1 + i % 10 for i in range(n)], pa.int64())})
    bad = good.set_column(1, "v", pa.array([1 + i % 10 if i not in (45_678, 50_000) else -3 for i in range(n)], pa.int64()))
    with lk.begin() as tx:
        got = _error(tx.apply_insert_batches, "c", [bad.slice(i, 10_000) for i in range(0, n, 10_000)])
        assert got == ("23514", 'new row for relation "c" violates check constraint "c_v_check"', "Failing row contains (45678, -3).")
        tx.rollback()
    with lk.begin() as tx:
        assert tx.apply_insert_batches("c", [good.slice(i, 10_000) for i in range(0, n, 10_000)]) == n


def test_every_write_path_is_checked_and_null_passes(make_lake: MakeLake) -> None:
    lk = _lake(make_lake)
    with lk.begin() as tx:
        assert tx.insert("c", [{"id": 1, "v": 1}, {"id": 2, "v": None}]) == 2
    with lk.begin() as tx:
        assert _error(tx.insert, "c", pa.table({"id": pa.array([3], pa.int64()), "v": pa.array([0], pa.int64())}))[0] == "23514"
        tx.rollback()
    with lk.begin() as tx:
        assert _error(tx.update, "c", {"v": 0}, {"id": 1})[2] == "Failing row contains (1, 0)."
        tx.rollback()
    with lk.begin() as tx:
        tx.savepoint("s")
        assert _error(tx.insert, "c", [{"id": 5, "v": -1}])[0] == "23514"
        tx.rollback_to("s")
        tx.insert("c", [{"id": 5, "v": 5}])
    with lk.begin() as tx:
        assert sorted(tx.read("c").column("id").to_pylist()) == [1, 2, 5]


def test_add_checks_the_rows_unless_not_valid_and_validate_does(make_lake: MakeLake) -> None:
    lk = make_lake(FAST)
    with lk.begin() as tx:
        tx.create_table("t", [("id", "bigint"), ("v", "bigint")])
        tx.insert("t", [{"id": 1, "v": -1}])
    with lk.begin() as tx:
        assert _error(tx.add_checks, "t", [POSITIVE])[:2] == ("23514", 'check constraint "t_v_check" of relation "t" is violated by some row')
        tx.rollback()
    with lk.begin() as tx:
        assert tx.add_checks("t", [replace(POSITIVE, name="pos", not_valid=True)]) == ["pos"]
        assert _error(tx.insert, "t", [{"id": 2, "v": 0}])[1] == 'new row for relation "t" violates check constraint "pos"'
        tx.rollback()
    with lk.begin() as tx:
        tx.add_checks("t", [replace(POSITIVE, name="pos", not_valid=True)])
    with lk.begin() as tx:
        assert _error(tx.validate_constraint, "t", "pos")[0] == "23514"
        tx.rollback()
    with lk.begin() as tx:
        tx.delete("t", {"id": 1})
        tx.validate_constraint("t", "pos")
    assert lk.catalog_at(lk.frontier).find_table("public", "t").checks[0].validated  # type: ignore[union-attr]


def test_names_drop_column_rename_and_the_json_round_trip(make_lake: MakeLake) -> None:
    lk = _lake(make_lake)
    both = CheckSpec(None, f"({_col(1)} < {_col(2)})", f"{_col(1)} < {_col(2)}", f"({_col(1)} < {_col(2)})", (1, 2))
    with lk.begin() as tx:
        tx.add_column("c", "w", "bigint")
        assert tx.add_checks("c", [both, POSITIVE, both]) == ["c_check", "c_v_check1", "c_check1"]
    with lk.begin() as tx:
        assert _error(tx.add_checks, "c", [replace(POSITIVE, name="c_pkey")])[0] == "42710"
        tx.rollback()
    cat = lk.catalog_at(lk.frontier)
    assert Catalog.from_json(cat.to_json()).find_table("public", "c") == cat.find_table("public", "c")
    with lk.begin() as tx:
        tx.rename_column("c", "v", "value")
        tx.rename_constraint("c", "c_check1", "ordered")
        tx.drop_column("c", "value")  # (every check naming it goes: PostgreSQL's AUTO dependency)
    t = lk.catalog_at(lk.frontier).find_table("public", "c")
    assert t is not None and t.checks == ()
    assert Check.fill(f"a {_col(3)} b", {3: '"x"'}) == 'a "x" b'
