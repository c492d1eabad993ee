"""Foreign keys as the lake enforces them, whoever writes: the transaction API, a big
insert streamed to a changeset file, rows spilled to files, a rolled-back savepoint;
and the DDL refusing what it must (tests against PostgreSQL itself are in
tests/integration/test_foreign_keys_vs_postgres.py)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.lakeutil import FAST, MakeLake
from walsender_proxy.lake import Lake, LakeError, LakeSettings
from walsender_proxy.lake.foreign_key_ddl import ForeignKeySpec


def _error(fn, *a, **kw) -> tuple[str, str | None]:
    with pytest.raises(LakeError) as ei:
        fn(*a, **kw)
    return ei.value.sqlstate, ei.value.detail


def _lake(make_lake: MakeLake, settings: LakeSettings = FAST, on_delete: str = "a") -> Lake:
    lk = make_lake(settings)
    with lk.begin() as tx:
        tx.create_table("p", [("id", "bigint"), ("v", "text")], primary_key=["id"])
        tx.create_table("c", [("id", "bigint"), ("p", "bigint")], primary_key=["id"])
        assert tx.add_foreign_key("c", ForeignKeySpec(None, ("p",), "p", on_delete=on_delete)) == "c_p_fkey"
        tx.insert("p", [{"id": i, "v": str(i)} for i in range(10)])
    return lk


def test_a_big_streamed_insert_is_checked_once_its_rows_are_in(make_lake: MakeLake) -> None:
    lk = _lake(make_lake, LakeSettings(fsync=False, background=False, changeset_bytes=1 << 16))
    n = 60_000
    ids = pa.array(range(n), pa.int64())
    good = pa.table({"id": ids, "p": pa.array([i % 10 for i in range(n)], pa.int64())})
    bad = good.set_column(1, "p", pa.array([i % 10 if i != 45_678 else 99 for i in range(n)], pa.int64()))
    with lk.begin() as tx:
        got = _error(tx.apply_insert_batches, "c", [bad.slice(i, 10_000) for i in range(0, n, 10_000)])
        assert got == ("23503", 'Key (p)=(99) is not present in table "p".')
        tx.rollback()
    with lk.begin() as tx:
        assert tx.apply_insert_batches("c", [good.slice(i, 10_000) for i in range(0, n, 10_000)]) == n
    with lk.begin() as tx:  # every one of them still holds its key
        assert _error(tx.delete, "p", {"id": 3})[0] == "23503"
        tx.rollback()


def test_a_cascade_reaches_rows_spilled_to_files(make_lake: MakeLake) -> None:
    lk = _lake(make_lake, LakeSettings(fsync=False, background=False, spill_bytes=1), on_delete="c")
    with lk.begin() as tx:
        tx.insert("c", [{"id": i, "p": i % 10} for i in range(1000)])
        assert tx.delete("p", {"id": 4}) == 1
        assert tx.read("c", where="p = 4").num_rows == 0
    with lk.begin() as tx:
        assert tx.read("c").num_rows == 900


def test_a_rolled_back_savepoint_takes_its_cascade_with_it(make_lake: MakeLake) -> None:
    lk = _lake(make_lake, on_delete="c")
    with lk.begin() as tx:
        tx.insert("c", [{"id": 1, "p": 1}, {"id": 2, "p": 2}])
    with lk.begin() as tx:
        tx.savepoint("s")
        tx.delete("p", {"id": 1})
        assert tx.read("c").num_rows == 1
        tx.rollback_to("s")
        assert tx.read("c").num_rows == 2


def test_a_key_made_after_a_snapshot_binds_the_transactions_writing_under_it(make_lake: MakeLake) -> None:
    """A REPEATABLE READ writer whose snapshot (and catalog) predates the key is held to
    it, as PostgreSQL's relcache sees the new constraint; one that had written the table
    already makes the ADD wait in PostgreSQL: 40001 here."""
    lk = _lake(make_lake)
    with lk.begin() as tx:
        tx.create_table("d", [("id", "bigint"), ("p", "bigint")], primary_key=["id"])
    writer = lk.begin("repeatable read")
    assert writer.read("d").num_rows == 0  # (its snapshot: no key yet)
    with lk.begin() as tx:
        assert tx.add_foreign_key("d", ForeignKeySpec("d_fk", ("p",), "p")) == "d_fk"
    assert writer.table("d").foreign_keys == ()
    assert _error(writer.insert, "d", [{"id": 1, "p": 77}])[0] == "23503"
    writer.rollback()
    writer = lk.begin()
    writer.insert("d", [{"id": 0, "p": 1}])
    with lk.begin() as tx:
        assert _error(tx.add_foreign_key, "d", ForeignKeySpec("d_fk2", ("p",), "p"))[0] == "40001"
        tx.rollback()
    writer.rollback()


def test_dropping_a_referenced_table_or_key_needs_cascade(make_lake: MakeLake) -> None:
    lk = _lake(make_lake)
    with lk.begin() as tx:
        assert _error(tx.drop_table, "p") == ("2BP01", "constraint c_p_fkey on table c depends on table p")
        tx.rollback()
    with lk.begin() as tx:
        assert tx.drop_table("p", cascade=True) == ["constraint c_p_fkey on table c"]
        assert tx.table("c").foreign_keys == ()
    with lk.begin() as tx:
        tx.insert("c", [{"id": 1, "p": 12345}])
