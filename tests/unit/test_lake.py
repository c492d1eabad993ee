"""The transactions API and the table store, as a script that drives a publisher sees them."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pyarrow as pa
import pytest

from decoding import records as R
from decoding.catalog import fill_marks
from tests.lakeutil import FAST, T_COLUMNS, MakeLake, cooked, crash
from walsender_proxy.lake import Isolation, Lake, LakeError, LakeSettings, PubTable, Sql


@pytest.fixture
def lake(make_lake: MakeLake) -> Lake:
    return make_lake(FAST, columns=T_COLUMNS)


def rows(lake: Lake, table: str = "t", csn: int | None = None) -> list[dict]:
    return sorted(
        lake.read(table, csn).to_pylist(), key=lambda r: tuple(str(v) for v in r.values())
    )


def sqlstate(fn, *a, **kw) -> str:
    with pytest.raises(LakeError) as ei:
        fn(*a, **kw)
    return ei.value.sqlstate


def test_duckdb_spills_under_the_data_directory(tmp_path: Path, lake: Lake) -> None:
    """Both DuckDB instances (serving, maintenance) spill beside the lake's other spill
    files, never into DuckDB's default ``.tmp`` of whatever directory the server runs in."""
    data = tmp_path / "d"
    for con in (lake.store.cursor(), lake.store._maintenance()):
        try:
            spill = Path(con.execute("SELECT current_setting('temp_directory')").fetchone()[0])
        finally:
            con.close()
        assert spill.is_relative_to(data), spill


def test_a_fold_of_many_small_commits_writes_whole_row_groups_in_commit_order(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Single-row commits fold to one delta file whose row groups each hold up to
    ROW_GROUP rows (made one piece before writing, not one piece per commit), in commit
    order; the fold's trigger counts (chunks, rows) follow the tail both ways."""
    import pyarrow.parquet as pq

    from walsender_proxy.lake import store

    monkeypatch.setattr(store, "ROW_GROUP", 16)
    for i in range(40):
        with lake.begin() as tx:
            tx.insert("t", [{"id": i, "v": f"v{i}", "n": i}])
    with lake.begin() as tx:  # one commit of several rows among them
        tx.insert("t", [{"id": 100 + i, "n": i} for i in range(5)])
    assert lake.store.mem_stats() == (41, 45)
    lake.checkpoint()
    assert lake.store.mem_stats() == (0, 0)
    oid = lake.catalog_at(lake.frontier).resolve_table("t").oid
    (delta,) = [p for p in (lake.store.root / str(oid)).iterdir() if p.name.startswith("delta-")]
    meta = pq.ParquetFile(delta).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [16, 16, 13]
    assert pq.read_table(delta).column("id").to_pylist() == [*range(40), *range(100, 105)]
    assert [r["id"] for r in rows(lake)] == sorted([*range(40), *range(100, 105)], key=str)


def test_writes_are_visible_at_their_csn_and_not_before(lake: Lake) -> None:
    before = lake.frontier
    with lake.begin() as tx:
        assert tx.insert("t", [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]) == 2
    s1 = lake.frontier
    with lake.begin() as tx:
        assert tx.update("t", {"v": Sql("upper(v)"), "n": 7}, "id = 1") == 1
        assert tx.delete("t", {"id": 2}) == 1
        assert tx.update("t", {"v": "zzz"}, {"id": 99}) == 0
    assert rows(lake, csn=before) == []
    assert rows(lake, csn=s1) == [{"id": 1, "v": "a", "n": None}, {"id": 2, "v": "b", "n": None}]
    assert rows(lake) == [{"id": 1, "v": "A", "n": 7}]


def test_transaction_reads_its_own_writes_and_others_do_not(lake: Lake) -> None:
    tx = lake.begin()
    tx.insert("t", [{"id": 1, "v": "mine"}])
    tx.update("t", {"v": "changed"}, {"id": 1})
    assert tx.read("t").to_pylist() == [{"id": 1, "v": "changed", "n": None}]
    assert rows(lake) == []
    tx.commit()
    assert rows(lake) == [{"id": 1, "v": "changed", "n": None}]


def test_repeatable_read_keeps_its_snapshot_read_committed_moves(lake: Lake) -> None:
    rr = lake.begin(Isolation.REPEATABLE_READ)
    rc = lake.begin("read committed")
    assert rr.read("t").num_rows == 0 and rc.read("t").num_rows == 0
    with lake.begin() as w:
        w.insert("t", [{"id": 1}])
    assert rr.read("t").num_rows == 0
    assert rc.read("t").num_rows == 1
    # RR writing a row changed after its snapshot: serialization failure, as in PostgreSQL.
    rr2 = lake.begin("repeatable read")
    rr2.read("t")
    with lake.begin() as w:
        w.update("t", {"v": "x"}, {"id": 1})
    assert sqlstate(rr2.update, "t", {"v": "y"}, {"id": 1}) == "40001"
    assert sqlstate(rr2.read, "t") == "25P02"  # and the transaction is failed until rollback
    rr2.rollback()
    rr.commit()
    rc.commit()


def test_concurrent_writers_to_one_row_never_lose_an_update(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "n": 0}])
    a, b = lake.begin(), lake.begin()
    a.update("t", {"n": Sql("n + 1")}, {"id": 1})
    assert sqlstate(b.update, "t", {"n": Sql("n + 10")}, {"id": 1}) == "40001"
    b.rollback()
    a.commit()
    c = lake.begin()
    c.delete("t", {"id": 1})
    d = lake.begin()
    assert sqlstate(d.delete, "t", {"id": 1}) == "40001"
    c.rollback()
    d.rollback()
    assert rows(lake) == [{"id": 1, "v": None, "n": 1}]


def test_constraint_errors_carry_postgresql_sqlstates(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1}])
    tx = lake.begin()
    with pytest.raises(LakeError) as ei:
        tx.insert("t", [{"id": 1}])
    assert ei.value.sqlstate == "23505"
    assert ei.value.detail == "Key (id)=(1) already exists."
    tx.rollback()
    assert sqlstate(lake.begin().insert, "t", [{"id": 5}, {"id": 5}]) == "23505"
    other = lake.begin()
    other.insert("t", [{"id": 7}])
    assert sqlstate(lake.begin().insert, "t", [{"id": 7}]) == "23505"  # pending elsewhere
    other.rollback()
    assert sqlstate(lake.begin().insert, "t", [{"v": "no id"}]) == "23502"
    assert sqlstate(lake.begin().insert, "t", [{"id": 2, "nope": 1}]) == "42703"
    assert sqlstate(lake.begin().insert, "t", [{"id": "x"}]) == "22P02"
    assert sqlstate(lake.begin().insert, "missing", [{"id": 1}]) == "42P01"
    assert sqlstate(lake.begin().update, "t", {"id": Sql("id + 1")}, "nonexistent = 1") == "42703"
    assert sqlstate(lake.begin(read_only=True).insert, "t", [{"id": 3}]) == "25006"
    assert sqlstate(lake.begin().update, "t", {"id": None}, {"id": 1}) == "23502"


def test_key_update_that_collides_is_refused(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1}, {"id": 2}])
    assert sqlstate(lake.begin().update, "t", {"id": 2}, {"id": 1}) == "23505"
    with lake.begin() as tx:
        tx.update("t", {"id": Sql("id + 10")}, None)
    assert [r["id"] for r in rows(lake)] == [11, 12]


def test_savepoints_nest_and_roll_back(lake: Lake) -> None:
    tx = lake.begin()
    tx.insert("t", [{"id": 1}])
    tx.savepoint("a")
    tx.insert("t", [{"id": 2}])
    tx.savepoint("b")
    tx.insert("t", [{"id": 3}])
    tx.rollback_to("a")
    assert [r["id"] for r in tx.read("t").to_pylist()] == [1]
    tx.insert("t", [{"id": 4}])
    tx.savepoint("c")
    tx.insert("t", [{"id": 5}])
    tx.release("c")
    assert sqlstate(tx.rollback_to, "c") == "3B001"
    # an error inside a savepoint is undone by rolling back to it
    tx.savepoint("d")
    with pytest.raises(LakeError):
        tx.insert("t", [{"id": 1}])
    tx.rollback_to("d")
    tx.commit()
    assert [r["id"] for r in rows(lake)] == [1, 4, 5]
    ends = [e.record for e in lake.log.read() if isinstance(e.record, R.SubAbort)]
    assert ends, "rollback to savepoint must be in the log for decoders"


def test_truncate_and_restart_identity_flags_are_logged(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", [{"id": i} for i in range(5)])
    s = lake.frontier
    with lake.begin() as tx:
        tx.truncate("t", restart_identity=True)
        tx.insert("t", [{"id": 100}])
    assert [r["id"] for r in rows(lake)] == [100]
    assert len(rows(lake, csn=s)) == 5
    rec = next(e.record for e in lake.log.read() if isinstance(e.record, R.Truncate))
    assert rec.restart_identity and not rec.cascade
    other = lake.begin()
    other.insert("t", [{"id": 200}])
    assert sqlstate(lake.begin().truncate, "t") == "40001"
    other.rollback()


def test_prepared_transactions_survive_restart(tmp_path: Path) -> None:
    with Lake(tmp_path, FAST) as lake:
        with lake.begin() as tx:
            tx.create_table("t", [("id", "int")], primary_key=["id"])
        tx = lake.begin()
        tx.insert("t", [{"id": 1}])
        tx.prepare("g1")
        tx2 = lake.begin()
        tx2.insert("t", [{"id": 2}])
        tx2.prepare("g2")
        assert sqlstate(lake.begin().prepare, "g1") in ("42710", "25P01")
        assert rows(lake) == []
    with Lake(tmp_path, FAST) as lake:
        assert set(lake.prepared) == {"g1", "g2"}
        assert sqlstate(lake.begin().insert, "t", [{"id": 1}]) == "23505"  # still locked
        info = lake.commit_prepared("g1")
        assert info.csn is not None
        lake.rollback_prepared("g2")
        assert sqlstate(lake.commit_prepared, "g2") == "42704"
        assert rows(lake) == [{"id": 1}]
    with Lake(tmp_path, FAST) as lake:
        assert not lake.prepared and rows(lake) == [{"id": 1}]


def test_open_transactions_at_a_crash_are_aborted_in_the_log(tmp_path: Path) -> None:
    lake = Lake(tmp_path, FAST)
    with lake.begin() as tx:
        tx.create_table("t", [("id", "int")])
    tx = lake.begin()
    tx.insert("t", [{"id": 1}])
    xid = tx.xid
    crash(lake)
    with Lake(tmp_path, FAST) as again:
        assert rows(again) == []
        aborts = [e.record.xid for e in again.log.read() if isinstance(e.record, R.Abort)]
        assert xid in aborts


def test_messages_are_logged_transactional_or_not(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.message("pfx", b"\x01payload")
        tx.message("other", "text", transactional=False)
    lake.message("outside", "hello")
    msgs = [e.record for e in lake.log.read() if isinstance(e.record, R.Message)]
    assert [(m.prefix, m.transactional, m.payload) for m in msgs] == [
        ("pfx", True, b"\x01payload"),
        ("other", False, b"text"),
        ("outside", False, b"hello"),
    ]
    assert msgs[-1].xid == 0


def test_schema_changes_are_versioned_by_csn(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "v": "old"}])
    s_old = lake.frontier
    with lake.begin() as tx:
        tx.drop_column("t", "v")
        tx.add_column("t", "w", "numeric(8,2)")
        tx.insert("t", [{"id": 2, "w": decimal.Decimal("1.25")}])
    with lake.begin() as tx:
        tx.add_column("t", "v", "text")  # a new v: must not resurrect the dropped one's data
    assert rows(lake, csn=s_old) == [{"id": 1, "v": "old", "n": None}]
    assert rows(lake) == [
        {"id": 1, "n": None, "w": None, "v": None},
        {"id": 2, "n": None, "w": decimal.Decimal("1.25"), "v": None},
    ]
    assert lake.catalog_at(s_old).resolve_table("t").column_names == ["id", "v", "n"]
    lake.checkpoint(force=True)
    assert rows(lake, csn=s_old) == [{"id": 1, "v": "old", "n": None}]
    assert sqlstate(lake.begin().drop_column, "t", "id") == "2BP01"
    assert sqlstate(lake.begin().add_column, "t", "n", "int") == "42701"
    assert sqlstate(lake.begin().add_column, "t", "z", "nosuchtype") == "42704"
    assert sqlstate(lake.begin().add_column, "t", "z", "int", not_null=True) == "23502"


def test_a_renamed_column_keeps_its_data_and_its_old_name_in_old_snapshots(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "v": "old"}])
        tx.create_publication("pc", tables=[PubTable("t", ("id", "v"))])
        tx.create_publication("pf", tables=cooked(tx, [PubTable("t", row_filter="n > 0")]))
    s_old = lake.frontier
    with lake.begin() as tx:
        tx.rename_column("t", "v", "w")
        tx.rename_column("t", "id", "key")
        tx.insert("t", [{"key": 2, "w": "new"}])
    assert rows(lake, csn=s_old) == [{"id": 1, "v": "old", "n": None}]
    assert rows(lake) == [{"key": 1, "w": "old", "n": None}, {"key": 2, "w": "new", "n": None}]
    t = lake.catalog.resolve_table("t")
    assert (t.primary_key, lake.catalog.publications["pc"].tables[0].columns) == (("key",), ("key", "w"))
    with lake.begin() as tx:
        tx.add_column("t", "v", "text")  # the old name again: a new column, no old data
    assert [r["v"] for r in rows(lake)] == [None, None]
    assert sqlstate(lake.begin().rename_column, "t", "zz", "y") == "42703"
    assert sqlstate(lake.begin().rename_column, "t", "w", "key") == "42701"
    with lake.begin() as tx:  # (in pf's row filter, kept by attnum: the filter follows)
        tx.rename_column("t", "n", "m")
    t = lake.catalog.resolve_table("t")
    flt = lake.catalog.publications["pf"].tables[0].row_filter
    assert flt is not None and fill_marks(flt.expr, {c.attnum: c.name for c in t.columns}) == "(m > 0)"


def test_ddl_errors_match_postgresql(lake: Lake) -> None:
    assert sqlstate(lake.begin().create_table, "t", [("a", "int")]) == "42P07"
    assert sqlstate(lake.begin().create_table, "nope.x", [("a", "int")]) == "3F000"
    assert sqlstate(lake.begin().create_table, "x", [("a", "int"), ("a", "int")]) == "42701"
    assert sqlstate(lake.begin().create_table, "x", [("a", "int")], primary_key=["b"]) == "42703"
    with lake.begin() as tx:
        tx.create_schema("s")
        tx.create_table("s.x", [("a", "int")])
    assert sqlstate(lake.begin().create_schema, "s") == "42P06"
    assert sqlstate(lake.begin().drop_schema, "s") == "2BP01"
    with lake.begin() as tx:
        tx.drop_schema("s", cascade=True)
        tx.drop_table("nothere", if_exists=True)
    assert "s" not in lake.catalog.schemas
    assert sqlstate(lake.begin().drop_table, "nothere") == "42P01"


def test_replica_identity_and_publications(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.create_table("u", [("a", "int", True), ("b", "text")])
        tx.set_replica_identity("u", "full")
        tx.create_publication(
            "p1", tables=cooked(tx, ["t", PubTable("u", ("a",), "a > 1")]), publish="insert, update"
        )
        tx.create_publication("p2", all_tables=True)
        tx.create_publication("p3", schemas=["public"])
    cat = lake.catalog
    u = cat.resolve_table("u")
    assert u.replica_identity == "f" and u.identity_columns() == ("a", "b")
    p1 = cat.publications["p1"]
    assert (p1.insert, p1.update, p1.delete, p1.truncate) == (True, True, False, False)
    assert p1.entry(u.oid).columns == ("a",) and p1.entry(u.oid).row_filter.columns(u) == {"a"}
    assert [p.name for p in cat.publications_for(u)] == ["p1", "p2", "p3"]
    assert sqlstate(lake.begin().create_publication, "p1") == "42710"
    assert sqlstate(lake.begin().create_publication, "px", publish="insert, upsert") == "42601"
    assert sqlstate(lake.begin().alter_publication, "p2", add_tables=["t"]) == "55000"
    assert sqlstate(lake.begin().alter_publication, "p1", add_tables=["t"]) == "42710"
    assert sqlstate(lake.begin().alter_publication, "nope", publish="insert") == "42704"
    assert sqlstate(lake.begin().set_replica_identity, "u", "index", ["b"]) == "42809"
    with lake.begin() as tx:
        tx.alter_publication("p1", drop_tables=["t"], publish="insert, update, delete, truncate")
        tx.set_replica_identity("u", "index", ["a"])
        tx.drop_publication("p3")
    cat = lake.catalog
    assert [pt.table_oid for pt in cat.publications["p1"].tables] == [u.oid]
    assert cat.publications["p1"].delete and "p3" not in cat.publications
    assert cat.resolve_table("u").identity_columns() == ("a",)


def test_types_round_trip(lake: Lake) -> None:
    cols = [
        ("id", "int"),
        ("b", "boolean"),
        ("s", "smallint"),
        ("f4", "real"),
        ("f8", "double precision"),
        ("num", "numeric"),
        ("nn", "numeric(12,3)"),
        ("vc", "varchar(10)"),
        ("ch", "char(3)"),
        ("by", "bytea"),
        ("d", "date"),
        ("tm", "time"),
        ("ts", "timestamp"),
        ("tz", "timestamptz"),
        ("iv", "interval"),
        ("u", "uuid"),
        ("j", "json"),
        ("jb", "jsonb"),
        ("arr", "int[]"),
        ("tarr", "text[]"),
    ]
    row = {
        "id": 1,
        "b": True,
        "s": -3,
        "f4": 1.5,
        "f8": 2.25,
        "num": "12345678901234567890.123456789",
        "nn": decimal.Decimal("1.500"),
        "vc": "hello",
        "ch": "ab ",
        "by": b"\x00\xff",
        "d": dt.date(2024, 2, 29),
        "tm": dt.time(12, 30, 1, 5),
        "ts": dt.datetime(2024, 1, 1, 1, 2, 3, 4),
        "tz": dt.datetime(2024, 1, 1, 1, 2, 3, tzinfo=dt.UTC),
        "iv": {"months": 1, "days": 2, "microseconds": 3},
        "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "j": '{"a": 1}',
        "jb": '{"b": [1, 2]}',
        "arr": [1, None, 3],
        "tarr": ["x", "y"],
    }
    with lake.begin() as tx:
        tx.create_table("ty", cols, primary_key=["id"])
    with lake.begin() as tx:
        tx.insert("ty", [row, {"id": 2}])
    lake.checkpoint(force=True)
    got = sorted(lake.read("ty").to_pylist(), key=lambda r: r["id"])
    assert got[0] == row
    assert all(v is None for k, v in got[1].items() if k != "id")
    t = lake.catalog.resolve_table("ty")
    assert [c.type.oid for c in t.columns] == [
        23,
        16,
        21,
        700,
        701,
        1700,
        1700,
        1043,
        1042,
        17,
        1082,
        1083,
        1114,
        1184,
        1186,
        2950,
        114,
        3802,
        1007,
        1009,
    ]
    assert t.column("nn").type.sql_name() == "numeric(12,3)"
    assert t.column("vc").type.sql_name() == "character varying(10)"


def test_arrow_input_and_bulk_changesets(tmp_path: Path) -> None:
    settings = LakeSettings(fsync=False, background=False, changeset_bytes=1000, segment_size=4096)
    with Lake(tmp_path, settings) as lake:
        with lake.begin() as tx:
            tx.create_table("big", [("id", "bigint"), ("v", "text")], primary_key=["id"])
        data = pa.table(
            {"id": pa.array(range(5000), pa.int64()), "v": pa.array([f"v{i}" for i in range(5000)])}
        )
        with lake.begin() as tx:
            assert tx.insert("big", data) == 5000
        with lake.begin() as tx:
            assert tx.delete("big", "id % 2 = 0") == 2500
        kinds = [type(e.record).__name__ for e in lake.log.read()]
        assert kinds.count("Changeset") == 2 and "Change" not in kinds
        assert len(list(lake.changesets.glob("*.parquet"))) == 2
    with Lake(tmp_path, settings) as lake:  # replayed from the changeset files
        assert lake.read("big").num_rows == 2500
        lake.checkpoint(force=True)
        for _ in range(3):  # move the log past them
            lake.message("pad", "x" * 5000)
            lake.fold()
        lake.collect_garbage()
        assert list(lake.changesets.glob("*.parquet")) == []
        assert lake.read("big").num_rows == 2500


def test_retention_keeps_what_holders_need_and_refuses_the_rest(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.insert("t", [{"id": i} for i in range(10)])
    s_held = lake.frontier
    hold = lake.holds.hold("exported snapshot", csn=s_held)
    with lake.begin() as tx:
        tx.delete("t", "id < 5")
    s_unheld = lake.frontier
    with lake.begin() as tx:
        tx.delete("t", "id < 8")
    lake.checkpoint(force=True)
    lake.collect_garbage()
    assert len(rows(lake, csn=s_held)) == 10
    assert len(rows(lake)) == 2
    hold.release()
    with lake.begin() as tx:
        tx.insert("t", [{"id": 100}])
    lake.checkpoint(force=True)
    files, _ = lake.collect_garbage()
    assert files > 0
    assert sqlstate(lake.read, "t", s_unheld) == "72000"
    assert len(rows(lake)) == 3


def test_the_data_directory_has_one_owner(tmp_path: Path) -> None:
    with Lake(tmp_path, FAST):
        assert sqlstate(Lake, tmp_path, FAST) == "55006"


def test_reads_wait_for_the_frontier(lake: Lake) -> None:
    tx = lake.begin()
    tx.insert("t", [{"id": 1}])
    pending = tx.start_commit()
    assert pending.csn is not None
    assert lake.frontier < pending.csn
    assert sqlstate(lake.read, "t", pending.csn, timeout=0.05) == "55P03"
    pending.finish()
    assert lake.read("t", pending.csn).num_rows == 1


def test_catalog_json_round_trip(lake: Lake) -> None:
    from decoding.catalog import Catalog, CatalogHistory

    with lake.begin() as tx:
        tx.create_publication("p", tables=cooked(tx, [PubTable("t", ("id", "v"), "id > 3")]))
    cat = lake.catalog
    assert Catalog.from_json(cat.to_json()) == cat
    h = CatalogHistory.from_json(lake.history.to_json())
    assert h.at(lake.frontier) == cat and h.at(0) == Catalog()


def test_a_statement_checks_writes_against_the_snapshot_it_read(lake: Lake) -> None:
    """READ COMMITTED: rows read at the statement's snapshot, then a concurrent commit to
    one of them, then the write — must be 40001, never a lost update."""
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "n": 0}])
    b = lake.begin()
    b.begin_statement()
    old = lake.read("t", b.statement_csn(), with_rid=True)
    with lake.begin() as a:
        a.update("t", {"n": Sql("n + 1")}, {"id": 1})
    new = old.set_column(old.column_names.index("n"), "n", pa.array([1], pa.int32()))
    assert sqlstate(b.apply_update, "t", old, new, changed=["n"]) == "40001"
    b.rollback()
    assert rows(lake) == [{"id": 1, "v": None, "n": 1}]


def test_updates_of_published_tables_need_a_usable_replica_identity(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.create_table("nokey", [("a", "int"), ("b", "text")])
        tx.create_table("filt", [("id", "int"), ("region", "text")], primary_key=["id"])
        tx.create_table("cols", [("id", "int"), ("x", "text")], primary_key=["id"])
        tx.create_publication("pn", tables=cooked(tx, ["nokey", PubTable("filt", None, "region = 'eu'"), PubTable("cols", ("x",), None)]))
        tx.insert("nokey", [{"a": 1}])
        tx.insert("filt", [{"id": 1, "region": "eu"}])
        tx.insert("cols", [{"id": 1, "x": "y"}])
    with pytest.raises(LakeError) as ei:
        lake.begin().update("nokey", {"b": "x"})
    assert ei.value.sqlstate == "55000" and "does not have a replica identity and publishes updates" in ei.value.message
    with pytest.raises(LakeError) as ei:
        lake.begin().delete("filt", {"id": 1})
    assert ei.value.sqlstate == "42P10" and "WHERE expression" in (ei.value.detail or "")
    with pytest.raises(LakeError) as ei:
        lake.begin().update("cols", {"x": "z"})
    assert ei.value.sqlstate == "42P10" and "does not cover the replica identity" in (ei.value.detail or "")
    with lake.begin() as tx:
        tx.set_replica_identity("nokey", "full")
        tx.set_replica_identity("filt", "full")
    with lake.begin() as tx:
        assert tx.update("nokey", {"b": "x"}) == 1
        assert tx.delete("filt", {"id": 1}) == 1


def test_group_committed_writes_are_visible_when_each_commit_returns(tmp_path: Path) -> None:
    """Concurrent committers share fsyncs (group commit): a snapshot at each commit's CSN
    holds its row as soon as the commit returns, and nothing is lost or published twice."""
    import threading

    with Lake(tmp_path / "d", LakeSettings(fsync=True)) as lk:
        with lk.begin() as tx:
            tx.create_table("t", [("id", "bigint"), ("w", "int")], primary_key=["id"])
        errors: list[str] = []
        start = threading.Barrier(6)

        def writer(w: int) -> None:
            start.wait()
            for i in range(40):
                key = w * 1000 + i
                tx = lk.begin()
                tx.insert("t", [{"id": key, "w": w}])
                csn = tx.commit().csn
                assert csn is not None
                seen = lk.read("t", csn, where="id = $1", params=[key]).to_pylist()
                if seen != [{"id": key, "w": w}]:
                    errors.append(f"writer {w}: row {key} not visible at its CSN {csn}: {seen}")

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert errors == []
        got = lk.read("t").to_pylist()
        assert len(got) == 240
        assert sorted(r["id"] for r in got) == sorted(w * 1000 + i for w in range(6) for i in range(40))


def test_prepared_transactions_are_limited_as_max_prepared_transactions_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import walsender_proxy.lake.lake as lake_module

    monkeypatch.setattr(lake_module, "MAX_PREPARED_TRANSACTIONS", 1)
    with Lake(tmp_path, FAST) as lake:
        with lake.begin() as tx:
            tx.create_table("t", [("id", "int")])
        first = lake.begin()
        first.insert("t", [{"id": 1}])
        first.prepare("g1")
        second = lake.begin()
        second.insert("t", [{"id": 2}])
        assert sqlstate(second.prepare, "g2") == "53200"
        lake.commit_prepared("g1")
        assert rows(lake) == [{"id": 1}]  # (the refused one was rolled back)
