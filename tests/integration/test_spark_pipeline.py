"""The Spark pipeline with real local Spark (one session for the module), a running proxy and a
real PostgreSQL 15 subscriber subscribed beforehand: append, upsert and mirror of data with
every supported type, NULLs and a two-column key end with the subscriber identical to the
proxy; bad sources commit nothing; Spark and DuckDB read the same rows at the same CSNs;
compaction under a live subscription loses and repeats nothing."""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from decoding.errors import PgError
from tests.integration.test_subscriber import new_sub_db, subscribe, wait_identical, wait_ready
from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer

pyspark = pytest.importorskip("pyspark")

from walsender_proxy.lake import Lake, LakeSettings  # noqa: E402
from walsender_proxy.lake.bulk import table_layout  # noqa: E402
from walsender_proxy.lake.transaction import Isolation  # noqa: E402
from walsender_proxy.spark.access import LocalLake, RemoteLake  # noqa: E402
from walsender_proxy.spark.compact import run_compact  # noqa: E402
from walsender_proxy.spark.ingest import IngestOptions, run_ingest  # noqa: E402
from walsender_proxy.spark.session import SparkSettings, get_session  # noqa: E402
from walsender_proxy.spark.snapshot import read_snapshot  # noqa: E402

_n = itertools.count(1)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    s = get_session(SparkSettings(master="local[2]", conf={"spark.sql.shuffle.partitions": "4"}))
    yield s



ALL_TYPES = """(
    k1 bigint, k2 text, b boolean, i2 smallint, i4 integer, f4 real, f8 double precision,
    n numeric(12,3), nu numeric, v varchar(20), by bytea, d date, tm time, ts timestamp,
    tz timestamptz, iv interval, u uuid, j jsonb, ai integer[], at text[],
    PRIMARY KEY (k1, k2))"""

IV = pa.struct([("months", pa.int32()), ("days", pa.int32()), ("microseconds", pa.int64())])


def typed_rows(keys: range, version: int) -> pa.Table:
    """Rows with every type; every 5th row has NULLs in every non-key column; ``version``
    changes the values of every 3rd row."""
    rows: dict[str, list[Any]] = {c: [] for c in (
        ["k1", "k2", "b", "i2", "i4", "f4", "f8", "n", "nu", "v", "by", "d", "tm", "ts", "tz", "iv", "u", "j", "ai", "at"])}
    for k in keys:
        bump = version if k % 3 == 0 else 0
        null = k % 5 == 0
        vals = {
            "k1": k, "k2": f"key-{k % 4}",
            "b": (k + bump) % 2 == 0, "i2": -32768 + k + bump, "i4": 2**31 - 1 - k - bump,
            "f4": 1.5 + k + bump, "f8": float("nan") if k == 7 else -1e300 * (k + bump),
            "n": decimal.Decimal(f"{k + bump}.125"), "nu": f"{k + bump}1234567890.000000001",
            "v": f"v{k + bump}'\"\\", "by": bytes([k % 256, 0, 255, bump % 256]),
            "d": dt.date(2000, 1, 1) + dt.timedelta(days=k + bump),
            "tm": dt.time(k % 24, bump % 60, 59, 999999),
            "ts": dt.datetime(1999, 12, 31, 23, 59, 59) + dt.timedelta(hours=k + bump),
            "tz": dt.datetime(2024, 2, 29, tzinfo=dt.UTC) + dt.timedelta(minutes=k + bump),
            "iv": {"months": k + bump, "days": -k, "microseconds": 1_000_001 * k},
            "u": str(uuid.UUID(int=k * 7919 + bump)),
            "j": json.dumps({"k": k, "s": "ü", "v": bump}),
            "ai": [k, None, bump], "at": ["a,b", None, f"x{bump}"],
        }
        for c, v in vals.items():
            rows[c].append(None if null and c not in ("k1", "k2") else v)
    schema = pa.schema([
        ("k1", pa.int64()), ("k2", pa.string()), ("b", pa.bool_()), ("i2", pa.int16()),
        ("i4", pa.int32()), ("f4", pa.float32()), ("f8", pa.float64()),
        ("n", pa.decimal128(12, 3)), ("nu", pa.string()), ("v", pa.string()), ("by", pa.binary()),
        ("d", pa.date32()), ("tm", pa.time64("us")), ("ts", pa.timestamp("us")),
        ("tz", pa.timestamp("us", tz="UTC")), ("iv", IV), ("u", pa.string()), ("j", pa.string()),
        ("ai", pa.list_(pa.int32())), ("at", pa.list_(pa.string())),
    ])
    return pa.table(rows, schema=schema)


def write_source(tmp: Path, table: pa.Table, name: str, parts: int = 2) -> str:
    d = tmp / name
    d.mkdir()
    step = max(1, -(-table.num_rows // parts))
    for i in range(parts):
        pq.write_table(table.slice(i * step, step), d / f"part-{i}.parquet")
    return str(d)


def ingest(spark: Any, proxy: ProxyServer, source: str | list[str], table: str, mode: str, **kw: Any) -> Any:
    access = RemoteLake(proxy.dsn())
    try:
        opts = IngestOptions(source=[source] if isinstance(source, str) else source, table=table, mode=mode, **kw)
        return run_ingest(spark, access, opts, show_progress=False)
    finally:
        access.close()


def test_append_upsert_mirror_reach_the_subscriber(spark: Any, proxy: ProxyServer, pg15: PgCluster, tmp_path: Path) -> None:
    sub = new_sub_db(pg15)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(f"CREATE TABLE typed {ALL_TYPES}")
        c.execute("CREATE PUBLICATION p_typed FOR TABLE typed")
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute(f"CREATE TABLE typed {ALL_TYPES}")
    subscribe(sub, proxy, "s_typed", "p_typed")
    wait_ready(sub)
    key = "k1, k2"

    def identical() -> None:
        _identical(proxy, sub, key)

    s = ingest(spark, proxy, write_source(tmp_path, typed_rows(range(1, 301), 0), "v0"), "typed", "append")
    assert (s.rows_read, s.inserted, s.updated, s.deleted, s.transactions) == (300, 300, 0, 0, 1)
    assert_table_is(proxy, "typed", typed_rows(range(1, 301), 0))
    identical()

    # upsert: rows 200..400 at version 1 → 101..300 of them exist (every 3rd changed, NULL rows
    # unchanged), 301..400 are new.
    s = ingest(spark, proxy, write_source(tmp_path, typed_rows(range(200, 401), 1), "v1"), "typed", "upsert")
    changed = sum(1 for k in range(200, 301) if k % 3 == 0 and k % 5 != 0)
    assert (s.inserted, s.updated, s.deleted) == (100, changed, 0)
    identical()

    # mirror: the table becomes rows 50..350 at version 2, in transactions of 40 rows.
    src = write_source(tmp_path, typed_rows(range(50, 351), 2), "v2", parts=3)
    s = ingest(spark, proxy, src, "typed", "mirror", rows_per_transaction=40)
    assert s.deleted == 49 + 50 and s.inserted == 0 and s.updated > 0
    assert s.transactions == -(-(s.deleted + s.updated) // 40)
    identical()
    with psycopg.connect(sub) as c:
        assert c.execute("SELECT min(k1), max(k1), count(*) FROM typed").fetchone() == (50, 350, 301)

    assert_table_is(proxy, "typed", typed_rows(range(50, 351), 2))

    # the same source again: nothing changed, nothing committed
    lsn_before = proxy.lake.log.insert_lsn  # type: ignore[union-attr]
    csn_before = proxy.lake.clock.last_assigned  # type: ignore[union-attr]
    s = ingest(spark, proxy, src, "typed", "mirror")
    assert (s.inserted, s.updated, s.deleted, s.transactions, s.csn) == (0, 0, 0, 0, None)
    assert proxy.lake.clock.last_assigned == csn_before  # type: ignore[union-attr]
    assert proxy.lake.log.insert_lsn >= lsn_before  # type: ignore[union-attr]
    identical()


def assert_table_is(proxy: ProxyServer, name: str, expected: pa.Table) -> None:
    """The proxy's table holds exactly ``expected`` (storage types, any order; a jsonb
    source text as jsonb_in and jsonb_out make it)."""
    from decoding.pgvalues import column_type, decode_text_arrow

    lake = proxy.lake
    assert lake is not None
    if "j" in expected.column_names:
        j = expected.column_names.index("j")
        expected = expected.set_column(j, "j", decode_text_arrow(column_type("jsonb"), expected.column(j)))
    got = lake.read(name).select(expected.column_names)

    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        return (r["k1"], r["k2"])

    want_rows = sorted(expected.to_pylist(), key=key)
    got_rows = sorted(got.to_pylist(), key=key)
    assert len(got_rows) == len(want_rows)
    def norm(r: dict[str, Any]) -> dict[str, Any]:  # NaN == NaN here
        return {k: "NaN" if isinstance(v, float) and v != v else v for k, v in r.items()}

    for g, w in zip(got_rows, want_rows, strict=True):
        assert norm(g) == norm(w), (g, w)


def _identical(proxy: ProxyServer, sub: str, key: str) -> None:
    def rows(dsn: str) -> list[str]:
        with psycopg.connect(dsn) as c:
            return [repr(r) for r in c.execute(f"SELECT * FROM typed ORDER BY {key}").fetchall()]

    deadline = time.monotonic() + 60
    while (a := rows(proxy.dsn())) != (b := rows(sub)):
        if time.monotonic() > deadline:
            diff = next((x, y) for x, y in itertools.zip_longest(a, b) if x != y)
            raise AssertionError(f"subscriber differs ({len(a)} vs {len(b)} rows):\n{diff[0]}\n{diff[1]}")
        time.sleep(0.3)


def test_create_from_csv_and_json(spark: Any, proxy: ProxyServer, tmp_path: Path) -> None:
    csv = tmp_path / "people.csv"
    csv.write_text("id,name,score,born\n1,Ann,1.5,2001-02-03\n2,Bob,,1999-12-31\n3,\"C, D\",7,\n")
    s = ingest(spark, proxy, str(csv), "people", "mirror", create=True, key=["id"])
    assert s.created and s.inserted == 3
    with psycopg.connect(proxy.dsn()) as c:
        got = c.execute("SELECT id, name, score, born FROM people ORDER BY id").fetchall()
        types = c.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'people' ORDER BY ordinal_position"
        ).fetchall()
    assert got == [(1, "Ann", 1.5, dt.date(2001, 2, 3)), (2, "Bob", None, dt.date(1999, 12, 31)), (3, "C, D", 7.0, None)]
    assert types == [("id", "integer"), ("name", "text"), ("score", "double precision"), ("born", "date")]
    js = tmp_path / "people.json"
    js.write_text('{"id": 2, "name": "Bobby", "score": 2.5}\n{"id": 4, "name": "Eve"}\n')
    s = ingest(spark, proxy, str(js), "people", "upsert")
    assert (s.inserted, s.updated) == (1, 1)
    with psycopg.connect(proxy.dsn()) as c:
        assert c.execute("SELECT name, score, born FROM people WHERE id = 2").fetchone() == ("Bobby", 2.5, None)


TEXT_DDL = (
    "CREATE TABLE texts (id int PRIMARY KEY, b bytea, jb jsonb, j json, u uuid, d date, f boolean,"
    " n numeric(5,2), nu numeric, v varchar(3), ts timestamptz, ai int[])"
)
TEXT_CSV = (
    "id,b,jb,j,u,d,f,n,nu,v,ts,ai\n"
    '1,\\x0001feff,"{""bb"":1,""a"":2,""a"":3, ""c"": 1.50}","{""x"" :  1}",A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11,'
    '"January 8, 1999",yes,1.005, 007.50 ,ab ,2024-01-02 03:04:05+02,"{1,NULL}"\n'
    "2,\\000\\001,[1e3],[],{a0eebc999c0b4ef8bb6d6bb9bd380a11},epoch,off,-1.005,NaN,x,infinity,{}\n"
)


def test_text_sources_go_through_postgres_input(spark: Any, proxy: ProxyServer, pg15: PgCluster, tmp_path: Path) -> None:
    """A CSV's text enters each column through the column type's input function, as
    PostgreSQL's COPY FROM of the same file does: bytea hex and escapes, jsonb normalised,
    uuid lowered, PostgreSQL's date and boolean forms, numeric rounding — and a subscriber
    receives those values."""
    csv = tmp_path / "texts.csv"
    csv.write_text(TEXT_CSV)
    sub = new_sub_db(pg15)
    ref = new_sub_db(pg15)
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(TEXT_DDL)
        c.execute("CREATE PUBLICATION p_texts FOR TABLE texts")
    for dsn in (sub, ref):
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(TEXT_DDL)
    with psycopg.connect(ref, autocommit=True) as c, c.cursor().copy("COPY texts FROM STDIN (FORMAT csv, HEADER)") as cp:
        cp.write(TEXT_CSV.encode())
    subscribe(sub, proxy, "s_texts", "p_texts")
    wait_ready(sub)
    s = ingest(spark, proxy, str(csv), "texts", "append", options={"escape": '"'})
    assert s.inserted == 2

    def texts(dsn: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(dsn) as c:
            return c.execute(
                "SELECT id, b::text, jb::text, j::text, u::text, d::text, f::text, n::text, nu::text,"
                " v::text, ts::text, ai::text FROM texts ORDER BY id"
            ).fetchall()

    want = texts(ref)
    assert texts(proxy.dsn()) == want
    deadline = time.monotonic() + 60
    while texts(sub) != want:
        assert time.monotonic() < deadline, texts(sub)
        time.sleep(0.3)
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("DROP SUBSCRIPTION s_texts")


@pytest.mark.parametrize(
    ("case", "sqlstate", "words"),
    [
        ("missing", "58P01", "could not read source"),
        ("broken_file", "22P04", "is not a Parquet file"),
        ("extra_column", "42703", 'column "zzz" of relation "bad" does not exist'),
        ("bad_value", "22P02", 'invalid input syntax for type integer: "abc"'),
        ("null_key", "23502", 'null value in column "id"'),
        ("duplicate_keys", "21000", "duplicate keys"),
        ("append_existing", "23505", "duplicate key value violates unique constraint"),
    ],
)
def test_bad_source_commits_nothing(spark: Any, proxy: ProxyServer, tmp_path: Path, case: str, sqlstate: str, words: str) -> None:
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE IF NOT EXISTS bad (id int PRIMARY KEY, v text, n integer)")
        c.execute("DELETE FROM bad")
        c.execute("INSERT INTO bad VALUES (1, 'one', 1), (2, 'two', 2)")
    mode = "mirror"
    src = tmp_path / "src.csv"
    if case == "missing":
        src = tmp_path / "nope.parquet"
    elif case == "broken_file":
        src = tmp_path / "broken.parquet"
        src.write_bytes(b"PAR1 this is not parquet")
    elif case == "extra_column":
        src.write_text("id,v,n,zzz\n1,a,1,x\n")
    elif case == "bad_value":
        src.write_text("id,v,n\n1,a,1\n3,c,abc\n")
    elif case == "null_key":
        src.write_text("id,v,n\n1,a,1\n,b,2\n")
    elif case == "duplicate_keys":
        src.write_text("id,v,n\n1,a,1\n1,b,2\n")
    elif case == "append_existing":
        src.write_text("id,v,n\n5,e,5\n2,b,2\n")
        mode = "append"
    lake = proxy.lake
    assert lake is not None
    csn = lake.clock.last_assigned
    with pytest.raises(PgError) as ei:
        ingest(spark, proxy, str(src), "bad", mode)
    assert ei.value.sqlstate == sqlstate, ei.value
    assert words in ei.value.message + (ei.value.detail or ""), ei.value
    assert lake.clock.last_assigned == csn
    assert list(lake.staging_dir().iterdir()) == []
    with psycopg.connect(proxy.dsn()) as c:
        assert c.execute("SELECT * FROM bad ORDER BY id").fetchall() == [(1, "one", 1), (2, "two", 2)]


def test_spark_and_duckdb_read_the_same_rows_at_three_csns(spark: Any, tmp_path: Path) -> None:
    with Lake(tmp_path / "lake", LakeSettings(fsync=False, background=False)) as lake:
        with lake.begin() as tx:
            tx.create_table("r", [("id", "bigint"), ("v", "text"), ("iv", "interval"), ("a", "int[]")], primary_key=["id"])
        with lake.begin() as tx:
            tx.insert("r", [{"id": i, "v": f"v{i}", "a": [i, None]} for i in range(1000)])
        lake.checkpoint(force=True)
        csns = []
        holds = []
        for step in range(3):
            with lake.begin() as tx:
                tx.update("r", {"v": f"s{step}"}, where=f"id % 7 = {step}")
                tx.delete("r", where=f"id % 11 = {step}")
                tx.insert("r", [{"id": 5000 + step * 10 + j, "v": "new"} for j in range(5)])
            if step == 1:
                lake.fold()
                with lake.begin() as tx:
                    tx.truncate(["r"])
                    tx.insert("r", [{"id": i, "v": "after truncate"} for i in range(0, 2000, 3)])
            if step == 2:
                with lake.begin() as tx:
                    tx.add_column("r", "extra", "integer")
                    tx.update("r", {"extra": 42}, where="id < 100")
            tx_hold = lake.begin(Isolation.REPEATABLE_READ, read_only=True)
            csns.append(tx_hold.statement_csn())
            holds.append(tx_hold)
        for csn in csns:
            t = lake.catalog_at(csn).resolve_table("r")
            layout = table_layout(lake, t, csn)
            duck = lake.read(t, csn, with_rid=True).sort_by("_rid")
            sp = read_snapshot(spark, layout, with_rid=True).toArrow().sort_by("_rid")
            assert duck.num_rows > 0
            assert sp.to_pylist() == duck.to_pylist(), csn
        for h in holds:
            h.abort()


def test_compact_under_live_subscription(spark: Any, proxy: ProxyServer, pg15: PgCluster) -> None:
    sub = new_sub_db(pg15)
    ddl = "CREATE TABLE busy (id int PRIMARY KEY, v text, n bigint)"
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(ddl)
        c.execute("INSERT INTO busy SELECT i, 'v' || i, i FROM generate_series(1, 20000) g(i)")
        c.execute("CREATE PUBLICATION p_busy FOR TABLE busy")
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute(ddl)
    subscribe(sub, proxy, "s_busy", "p_busy")
    wait_ready(sub)
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        i = 0
        try:
            with psycopg.connect(proxy.dsn(), autocommit=True) as c:
                while not stop.is_set():
                    i += 1
                    c.execute("INSERT INTO busy VALUES (%s, 'w', %s)", (100000 + i, i))
                    c.execute("UPDATE busy SET n = n + 1 WHERE id = %s", (i % 20000 + 1,))
                    if i % 5 == 0:
                        c.execute("DELETE FROM busy WHERE id = %s", (100000 + i - 2,))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    th = threading.Thread(target=writer)
    th.start()
    lake = proxy.lake
    assert lake is not None
    oid = lake.catalog.resolve_table("busy").oid
    try:
        for _ in range(2):
            time.sleep(1.0)
            access = RemoteLake(proxy.dsn())
            try:
                s = run_compact(spark, access, "busy", show_progress=False)
            finally:
                access.close()
            assert s.rows >= 20000
    finally:
        stop.set()
        th.join()
    assert not errors, errors
    wait_identical(proxy.dsn(), sub, ["busy"])
    # Files no holder needs are gone: what is on disk is what the manifest lists (dropped
    # files linger for a short grace, for readers that listed them just before).
    time.sleep(1.5)
    lake.collect_garbage()
    table_dir = lake.store.root / str(oid)
    listed = {Path(f.path).name for f in lake.store._all_refs(lake.store._files[oid])}
    on_disk = {p.name for p in table_dir.iterdir()}
    assert on_disk == listed
    assert len(lake.store._files[oid].checkpoints) == 1


def test_offline_data_directory(spark: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"
    Lake(data, LakeSettings(fsync=False)).close()
    src = tmp_path / "src.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3], "v": ["a", "b", None]}), src)
    access = LocalLake(data, {"lake": {"fsync": False}})
    try:
        s = run_ingest(spark, access, IngestOptions([str(src)], "off", "mirror", create=True, key=["id"]), show_progress=False)
        assert s.inserted == 3
        # While the job holds the directory, a proxy cannot open it.
        with pytest.raises(PgError) as ei:
            Lake(data)
        assert ei.value.sqlstate == "55006"
        s2 = run_compact(spark, access, "off", show_progress=False)
        assert s2.rows == 3
    finally:
        access.close()
    with Lake(data, LakeSettings(fsync=False)) as lake:
        assert lake.read("off").sort_by("id").to_pylist() == [
            {"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": None}
        ]


def test_big_copy_is_served_by_spark(spark: Any, proxy: ProxyServer) -> None:
    """Above the threshold COPY … TO STDOUT reads through Spark; the bytes are the same."""
    from walsender_proxy.spark import serve

    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(f"CREATE TABLE big {ALL_TYPES}")
    src = tempfile_dir()
    ingest(spark, proxy, write_source(src, typed_rows(range(1, 2001), 0), "big"), "big", "append")
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("UPDATE big SET v = 'changed' WHERE k1 % 10 = 0")
        c.execute("DELETE FROM big WHERE k1 % 13 = 0")

    def copy_out(sql: str) -> bytes:
        with psycopg.connect(proxy.dsn()) as c, c.cursor().copy(sql) as cp:
            return b"".join(bytes(b) for b in cp)

    queries = ["COPY big TO STDOUT", "COPY big (k1, iv, tz) TO STDOUT (FORMAT csv, HEADER)",
               "COPY big TO STDOUT (FORMAT binary)"]
    duck = [copy_out(q) for q in queries]
    serve.configure(SparkSettings(master="local[2]", read_rows_threshold=1000))
    try:
        staged_before = set(proxy.lake.staging_dir().iterdir())  # type: ignore[union-attr]
        via_spark = [copy_out(q) for q in queries]
        assert set(proxy.lake.staging_dir().iterdir()) == staged_before  # type: ignore[union-attr]
    finally:
        serve.configure(None)

    def lines(b: bytes) -> list[bytes]:
        return sorted(b.split(b"\n"))

    assert lines(via_spark[0]) == lines(duck[0]) and len(lines(duck[0])) > 1800
    assert via_spark[1].split(b"\n")[0] == b"k1,iv,tz"
    assert lines(via_spark[1]) == lines(duck[1])
    assert len(via_spark[2]) == len(duck[2])  # row order may differ: same size, same rows


def tempfile_dir() -> Path:
    import tempfile

    return Path(tempfile.mkdtemp(prefix="wpx-spark-src-"))


@pytest.mark.slow
def test_cli_prints_summary_and_fails_cleanly(
    spark: Any, proxy: ProxyServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``walsender-proxy ingest`` prints its summary; a source it cannot read ends the
    command with status 1 and PostgreSQL's FATAL wording on standard error. Both run the
    console script's ``main`` in this process, on the module's Spark session (a JVM of
    their own would only add its start-up; the installed script is run by
    test_cli_serve)."""
    from walsender_proxy import cli
    from walsender_proxy.backend import logs

    src = tmp_path / "cli.csv"
    src.write_text("id,name\n1,a\n2,b\n")
    args = ["ingest", "--dsn", proxy.dsn(), "--master", "local[1]", "--no-progress"]
    monkeypatch.setattr(logs, "configure", lambda *a, **k: None)  # (pytest's logging stays)
    capsys.readouterr()
    assert cli.main([*args, str(src), "-t", "cli_t", "--create", "--key", "id", "-m", "mirror"]) == 0
    out = capsys.readouterr().out
    for word in ("rows read", "inserted", "updated", "deleted", "CSN", "commit LSN", "seconds"):
        assert word in out, out
    assert cli.main([*args, str(tmp_path / "missing.csv"), "-t", "cli_t"]) == 1
    err = capsys.readouterr().err
    assert "FATAL:  could not read source" in err and "PATH_NOT_FOUND" in err, err
