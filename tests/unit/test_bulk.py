"""The lake's side of the pipeline, without Spark: staged changesets committed through the
transaction API, conflicts with concurrent writers, exact transaction splitting, layouts and
adopted checkpoints."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from decoding import records as R
from decoding.errors import PgError
from tests.lakeutil import MakeLake
from walsender_proxy.lake import Lake
from walsender_proxy.lake.bulk import OLD, commit_changeset, install_checkpoint, table_layout


@pytest.fixture
def lake(make_lake: MakeLake) -> Lake:
    return make_lake(columns=[("id", "bigint"), ("v", "text")], rows=[{"id": i, "v": f"v{i}"} for i in range(10)])


def stage(lake: Lake, name: str, kinds: dict[str, pa.Table]) -> Path:
    d = lake.staging_dir() / name
    for kind, rows in kinds.items():
        (d / f"_kind={kind}").mkdir(parents=True)
        pq.write_table(rows, d / f"_kind={kind}" / "part-0.parquet")
    (d / "_SUCCESS").parent.mkdir(parents=True, exist_ok=True)
    (d / "_SUCCESS").touch()
    return d


def rid_of(lake: Lake, key: int) -> int:
    rows = lake.read("t", with_rid=True).to_pylist()
    return next(r["_rid"] for r in rows if r["id"] == key)


def changes(lake: Lake) -> pa.Table:
    d = {"_rid": [rid_of(lake, 1), rid_of(lake, 2)], "id": [1, 2], "v": ["one", "two"],
         OLD + "id": [1, 2], OLD + "v": ["v1", "v2"]}
    return pa.table(d)


def test_commit_applies_deletes_updates_inserts_in_one_transaction(lake: Lake) -> None:
    dels = pa.table({"_rid": [rid_of(lake, 9)], OLD + "id": [9], OLD + "v": ["v9"]})
    ins = pa.table({"id": [100, 101], "v": ["a", None]})
    d = stage(lake, "c1", {"D": dels, "U": changes(lake), "I": ins})
    csn = lake.frontier
    res = commit_changeset(lake, "t", d, based_on_csn=csn)
    assert (res.inserted, res.updated, res.deleted, res.transactions) == (2, 2, 1, 1)
    assert res.last_csn == csn + 1
    got = {r["id"]: r["v"] for r in lake.read("t").to_pylist()}
    assert got[1] == "one" and got[2] == "two" and 9 not in got and got[101] is None
    assert not d.exists()
    # One transaction in the log: its records, then one commit.
    kinds = [type(e.record).__name__ for e in lake.log.read(lake.log.oldest_lsn)]
    assert kinds.count("Commit") == 3  # create, insert, this one


def test_rows_per_transaction_splits_exactly(lake: Lake) -> None:
    ins = pa.table({"id": list(range(100, 125)), "v": ["x"] * 25})
    d = stage(lake, "c2", {"I": ins})
    res = commit_changeset(lake, "t", d, based_on_csn=lake.frontier, rows_per_transaction=10)
    assert (res.inserted, res.transactions) == (25, 3)
    commits = [e.record for e in lake.log.read(lake.log.oldest_lsn) if isinstance(e.record, R.Commit)]
    assert len(commits) == 2 + 3


def test_a_row_changed_since_the_job_read_is_a_serialization_failure(lake: Lake) -> None:
    read_at = lake.frontier
    d = stage(lake, "c3", {"U": changes(lake)})
    with lake.begin() as tx:  # someone else updates row 2 after the job read the table
        tx.update("t", {"v": "theirs"}, "id = 2")
    last = lake.clock.last_assigned
    with pytest.raises(PgError) as ei:
        commit_changeset(lake, "t", d, based_on_csn=read_at)
    assert ei.value.sqlstate == "40001"
    assert lake.clock.last_assigned == last
    assert {r["id"]: r["v"] for r in lake.read("t").to_pylist()}[2] == "theirs"


def test_an_inserted_key_that_exists_is_a_unique_violation(lake: Lake) -> None:
    d = stage(lake, "c4", {"I": pa.table({"id": [3], "v": ["dup"]})})
    with pytest.raises(PgError) as ei:
        commit_changeset(lake, "t", d, based_on_csn=lake.frontier)
    assert ei.value.sqlstate == "23505"


def test_empty_changeset_commits_nothing_and_missing_one_is_an_error(lake: Lake) -> None:
    d = lake.staging_dir() / "empty"
    d.mkdir()
    (d / "_SUCCESS").touch()
    last = lake.clock.last_assigned
    res = commit_changeset(lake, "t", d, based_on_csn=lake.frontier)
    assert res.transactions == 0 and lake.clock.last_assigned == last
    with pytest.raises(PgError) as ei:
        commit_changeset(lake, "t", lake.staging_dir() / "nope", based_on_csn=lake.frontier)
    assert ei.value.sqlstate == "58P01"


def test_layout_folds_first_and_adopted_checkpoint_replaces_old_files(lake: Lake) -> None:
    t = lake.catalog.resolve_table("t")
    csn = lake.frontier
    lay = table_layout(lake, t, csn)
    assert lay.checkpoint is None and lay.deltas and lay.rows == 10
    assert not lake.store.mem_csns(t.oid)
    # A checkpoint written elsewhere (here: by DuckDB's read) as a directory of parts.
    rows = lake.read(t, csn, with_rid=True)
    src = lake.staging_dir() / "ck"
    src.mkdir()
    pq.write_table(rows.slice(0, 5), src / "part-0.parquet")
    pq.write_table(rows.slice(5), src / "part-1.parquet")
    (src / "_SUCCESS").touch()
    out = install_checkpoint(lake, "t", csn, src)
    assert out["rows"] == 10
    lay2 = table_layout(lake, t, csn)
    assert lay2.checkpoint is not None and Path(lay2.checkpoint).is_dir() and not lay2.deltas
    assert sorted(lake.read(t, csn).to_pylist(), key=lambda r: r["id"]) == sorted(
        rows.drop_columns(["_rid"]).to_pylist(), key=lambda r: r["id"]
    )


def test_checkpoint_missing_columns_is_refused(lake: Lake) -> None:
    table_layout(lake, lake.catalog.resolve_table("t"), lake.frontier)  # folds
    src = lake.staging_dir() / "bad.parquet"
    pq.write_table(pa.table({"_rid": [1]}), src)
    with pytest.raises(PgError) as ei:
        install_checkpoint(lake, "t", lake.frontier, src)
    assert ei.value.sqlstate == "42804"
