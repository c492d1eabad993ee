"""Indexes and UNIQUE constraints as PostgreSQL 15 has them: CREATE [UNIQUE] INDEX, DROP
INDEX, ALTER INDEX … RENAME, UNIQUE in CREATE TABLE and ALTER TABLE, NULLS NOT DISTINCT,
ON CONFLICT over a unique index and REPLICA IDENTITY USING INDEX — every statement
compared with a real PostgreSQL 15 (rows, errors with their detail, notices, catalog rows)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from tests.integration.test_catalog_history import end_lsn, read_slot
from tests.integration.test_subscriber import new_sub_db
from tests.pgcluster import PgCluster
from tests.pgcompare import Client, recvlogical, same_answers
from tests.proxy import ProxyServer

INDEX_CATALOG = """SELECT c.relname, c.relkind, am.amname, i.indisunique, i.indisprimary,
  i.indnullsnotdistinct, i.indisreplident, i.indnatts, i.indnkeyatts,
  array_to_string(i.indkey::int2[], ' '), array_to_string(i.indoption::int2[], ' '),
  pg_get_indexdef(c.oid), pg_get_indexdef(c.oid, 1, true)
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
WHERE i.indrelid = '{t}'::regclass ORDER BY 1"""

CONSTRAINTS = """SELECT conname, contype, pg_get_constraintdef(oid), conindid::regclass
FROM pg_constraint WHERE conrelid = '{t}'::regclass ORDER BY 1"""

INDEXES = [
    "CREATE TABLE ix (id int PRIMARY KEY, email text, a int, b int, c text)",
    "CREATE UNIQUE INDEX ON ix (email)",
    "CREATE INDEX ON ix (a DESC, b)",
    "CREATE INDEX ON ix (a)",
    "CREATE INDEX ix_b_hash ON ix USING hash (b)",
    "CREATE INDEX ix_a_nf ON ix (a NULLS FIRST, b DESC NULLS LAST) INCLUDE (c)",
    "CREATE INDEX IF NOT EXISTS ix_b_hash ON ix (b)",
    "CREATE INDEX ix_b_hash ON ix (b)",
    "CREATE INDEX ix ON ix (b)",
    INDEX_CATALOG.format(t="ix"),
    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'ix' ORDER BY 1",
    "SELECT relname, relkind, relnatts FROM pg_class WHERE relname LIKE 'ix%' ORDER BY 1",
    "SELECT attname, attnum FROM pg_attribute WHERE attrelid = 'ix_a_nf'::regclass ORDER BY attnum",
    "INSERT INTO ix VALUES (1, 'x', 1, 1, 'p'), (2, 'y', 2, 2, 'q')",
    "INSERT INTO ix VALUES (3, 'x', 3, 3, 'r')",
    "INSERT INTO ix VALUES (3, NULL, 3, 3, 'r'), (4, NULL, 4, 4, 's')",
    "INSERT INTO ix VALUES (5, 'z', 5, 5, 't'), (6, 'z', 6, 6, 'u')",
    "UPDATE ix SET email = 'y' WHERE id = 1",
    "UPDATE ix SET a = 10 WHERE id = 1",
    "UPDATE ix SET email = NULL WHERE id = 1",
    "UPDATE ix SET email = 'x' WHERE id = 2",
    "SELECT * FROM ix ORDER BY id",
    "CREATE UNIQUE INDEX ix_a_b ON ix (a, b)",
    "INSERT INTO ix VALUES (9, 'w', 10, 1, 'v')",
    "INSERT INTO ix VALUES (9, 'w', 10, NULL, 'v'), (10, 'w2', 10, NULL, 'v')",
    "CREATE UNIQUE INDEX ix_c ON ix (c)",
    "CREATE UNIQUE INDEX ix_c2 ON ix (c) NULLS NOT DISTINCT",
    "ALTER INDEX ix_a_b RENAME TO ix_ab",
    "ALTER INDEX ix_ab RENAME TO ix_b_hash",
    "ALTER INDEX IF EXISTS nope RENAME TO nope2",
    "ALTER INDEX nope RENAME TO nope2",
    "INSERT INTO ix VALUES (11, 'w3', 10, 1, 'v')",
    "DROP INDEX ix_email_idx",
    "INSERT INTO ix VALUES (12, 'x', 12, 12, 'w')",
    "DROP INDEX ix_pkey",
    "DROP INDEX ix",
    "DROP INDEX IF EXISTS nope, ix_a_idx",
    "DROP INDEX nope",
    "CREATE INDEX ON ix (nope)",
    "CREATE INDEX ON nope (a)",
    "ALTER TABLE ix DROP COLUMN b",
    INDEX_CATALOG.format(t="ix"),
    "ALTER TABLE ix RENAME COLUMN a TO a2",
    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'ix' ORDER BY 1",
    "ALTER TABLE ix RENAME TO ix2",
    "SELECT indexname FROM pg_indexes WHERE tablename = 'ix2' ORDER BY 1",
    "INSERT INTO ix2 VALUES (1, 'q', 0, 'q')",
    "CREATE TABLE ix_a2_idx (x int)",
    "CREATE VIEW ixv AS SELECT 1 AS one",
    "CREATE INDEX ON ixv (one)",
    "DROP INDEX ixv",
    "CREATE TABLE ixj (j json, n numeric(10,2))",
    "CREATE INDEX ON ixj (j)",
    "CREATE UNIQUE INDEX ON ixj (n)",
    "INSERT INTO ixj VALUES (NULL, 1.5), (NULL, 1.50)",
    "CREATE INDEX ON ixj USING hash (n, j)",
    "CREATE UNIQUE INDEX ON ixj USING hash (n)",
    "CREATE INDEX ON ixj USING nope (n)",
    # two unique indexes on one column, the second one NULLS NOT DISTINCT: both hold
    "CREATE TABLE nd (i int, t text)",
    "CREATE UNIQUE INDEX nd_1 ON nd (i) NULLS DISTINCT",
    "CREATE UNIQUE INDEX nd_2 ON nd (i) NULLS NOT DISTINCT",
    "INSERT INTO nd (t) VALUES ('six')",
    "INSERT INTO nd (t) VALUES ('seven')",
    "INSERT INTO nd VALUES (1, 'a')",
    "INSERT INTO nd VALUES (1, 'b')",
    "DROP INDEX nd_2",
    "INSERT INTO nd (t) VALUES ('seven')",
    "CREATE UNIQUE INDEX nd_3 ON nd (i) NULLS NOT DISTINCT",
    "SELECT * FROM nd ORDER BY t",
    # operator classes: a type's default (printed as none) and the pattern classes
    "CREATE TABLE oc (id int PRIMARY KEY, name varchar(50), t text, c char(3), n int, a text[])",
    "CREATE INDEX oc_name_like ON oc (name varchar_pattern_ops)",
    "CREATE INDEX oc_t_like ON oc (t text_pattern_ops DESC, n)",
    "CREATE UNIQUE INDEX oc_c_like ON oc (c bpchar_pattern_ops)",
    "CREATE INDEX oc_t2 ON oc (t varchar_pattern_ops)",
    "CREATE INDEX oc_n ON oc (n int4_ops)",
    "CREATE INDEX oc_t3 ON oc (t text_ops)",
    "CREATE INDEX oc_nm ON oc (name text_ops)",
    "CREATE INDEX ON oc (c text_pattern_ops)",
    "CREATE INDEX ON oc (n text_pattern_ops)",
    "CREATE INDEX ON oc (n text_ops)",
    "CREATE INDEX ON oc (n nosuch_ops)",
    "CREATE INDEX ON oc (a text_pattern_ops)",
    "CREATE INDEX ON oc (t pg_catalog.text_pattern_ops)",
    "CREATE INDEX ON oc USING hash (t text_pattern_ops)",
    INDEX_CATALOG.format(t="oc"),
    "SELECT indexrelid::regclass::text, indclass::oid[] FROM pg_index WHERE indrelid = 'oc'::regclass ORDER BY 1",
    "SELECT opcname, opcmethod, opcdefault FROM pg_opclass WHERE opcname LIKE '%pattern%' ORDER BY 1, 2",
    "INSERT INTO oc VALUES (1, 'a', 'a', 'x', 1)",
    "INSERT INTO oc VALUES (2, 'b', 'b', 'x', 2)",
    "CREATE TABLE oc2 (LIKE oc INCLUDING INDEXES)",
    INDEX_CATALOG.format(t="oc2"),
    # expression and partial indexes (metadata: never unique here)
    "CREATE TABLE ex (id int PRIMARY KEY, name varchar(50), t text, n int, deleted_at timestamptz, active bool)",
    "CREATE INDEX ON ex (lower(name))",
    "CREATE INDEX ex_t_upper ON ex (upper(t) DESC, n)",
    "CREATE INDEX ON ex ((n + 1))",
    "CREATE INDEX ex_partial ON ex (n) WHERE deleted_at IS NULL",
    "CREATE INDEX ex_partial2 ON ex (name) WHERE active AND n > 5",
    "CREATE INDEX ON ex (lower(t)) WHERE n <> 0",
    "CREATE INDEX ON ex (now())",
    "CREATE INDEX ON ex (n) WHERE random() > 0.5",
    "CREATE INDEX ON ex ((SELECT 1))",
    "CREATE INDEX ON ex (count(n))",
    "CREATE INDEX ON ex (nope(n))",
    "CREATE INDEX ON ex (n) WHERE n",
    INDEX_CATALOG.format(t="ex"),
    "SELECT indexrelid::regclass::text, indexprs IS NOT NULL, indpred IS NOT NULL, pg_get_expr(indpred, indrelid),"
    " pg_get_expr(indpred, indrelid, true), pg_get_expr(indexprs, indrelid) FROM pg_index WHERE indrelid = 'ex'::regclass ORDER BY 1",
    "SELECT pg_get_indexdef('ex_t_upper'::regclass, 1, true), pg_get_indexdef('ex_t_upper'::regclass, 2, true)",
    "SELECT attname, atttypid::regtype::text FROM pg_attribute WHERE attrelid = 'ex_lower_idx'::regclass",
    "ALTER TABLE ex RENAME COLUMN name TO nm",
    "SELECT indexdef FROM pg_indexes WHERE indexname = 'ex_lower_idx'",
    "ALTER TABLE ex DROP COLUMN t",
    "SELECT indexname FROM pg_indexes WHERE tablename = 'ex' ORDER BY 1",
    "INSERT INTO ex VALUES (1, 'A', 2, NULL, true)",
    # a partial unique index: the rows its WHERE holds for are unique
    "CREATE TABLE pu (id int PRIMARY KEY, email text, deleted_at timestamptz, n int)",
    "CREATE UNIQUE INDEX pu_email_live ON pu (email) WHERE deleted_at IS NULL",
    "INSERT INTO pu VALUES (1, 'a', NULL, 1), (2, 'a', now(), 2), (3, 'a', now(), 3)",
    "INSERT INTO pu VALUES (4, 'a', NULL, 4)",
    "INSERT INTO pu VALUES (5, 'b', NULL, 5), (6, 'b', NULL, 6)",
    "UPDATE pu SET deleted_at = NULL WHERE id = 2",
    "UPDATE pu SET deleted_at = now() WHERE id = 1",
    "UPDATE pu SET deleted_at = NULL WHERE id = 2",
    "SELECT id, email, deleted_at IS NULL FROM pu ORDER BY id",
    "CREATE UNIQUE INDEX pu_n_pos ON pu (n) WHERE n > 2",
    "INSERT INTO pu VALUES (7, 'c', now(), 1), (8, 'd', now(), 1)",
    "INSERT INTO pu VALUES (9, 'e', now(), 3)",
    "CREATE UNIQUE INDEX pu_bad ON pu (email) WHERE deleted_at IS NOT NULL",
    "ALTER TABLE pu REPLICA IDENTITY USING INDEX pu_email_live",
    "INSERT INTO pu VALUES (12, 'z', NULL, 100) ON CONFLICT (email) DO NOTHING",
    "CREATE TABLE pf (e text REFERENCES pu (email))",
    INDEX_CATALOG.format(t="pu"),
]

UNIQUE_CONSTRAINTS = [
    "CREATE TABLE uq (id int, code text UNIQUE, k int, CONSTRAINT uq_k UNIQUE NULLS NOT DISTINCT (k), UNIQUE (code, k))",
    CONSTRAINTS.format(t="uq"),
    INDEX_CATALOG.format(t="uq"),
    "SELECT constraint_name, constraint_type, nulls_distinct FROM information_schema.table_constraints WHERE table_name = 'uq' ORDER BY 1",
    "SELECT constraint_name, column_name, ordinal_position FROM information_schema.key_column_usage WHERE table_name = 'uq' ORDER BY 1, 3",
    "INSERT INTO uq VALUES (1, 'a', NULL)",
    "INSERT INTO uq VALUES (2, 'b', NULL)",
    "INSERT INTO uq VALUES (2, 'a', 2)",
    "INSERT INTO uq VALUES (2, 'b', 2)",
    "ALTER TABLE uq ADD CONSTRAINT uq_id UNIQUE (id)",
    "ALTER TABLE uq ADD UNIQUE (id, code) INCLUDE (k)",
    "ALTER TABLE uq ADD CONSTRAINT uq_id UNIQUE (code)",
    "INSERT INTO uq VALUES (1, 'c', 3)",
    CONSTRAINTS.format(t="uq"),
    "DROP INDEX uq_id",
    "ALTER TABLE uq DROP CONSTRAINT uq_id",
    "ALTER TABLE uq DROP CONSTRAINT uq_id",
    "ALTER TABLE uq DROP CONSTRAINT IF EXISTS uq_id",
    "INSERT INTO uq VALUES (1, 'c', 3)",
    "ALTER TABLE uq ADD CONSTRAINT uq_id UNIQUE (id)",
    "CREATE TABLE uq2 (id int PRIMARY KEY UNIQUE, v int UNIQUE UNIQUE, CONSTRAINT uq2_named PRIMARY KEY (v))",
    "CREATE TABLE uq2 (id int CONSTRAINT uq2_id_named PRIMARY KEY, v int UNIQUE, w int, UNIQUE (v))",
    CONSTRAINTS.format(t="uq2"),
    "ALTER TABLE uq2 RENAME TO uq3",
    CONSTRAINTS.format(t="uq3"),
    "INSERT INTO uq3 VALUES (1, 1, 1), (2, 1, 2)",
    "CREATE TABLE uq_pk (a int, CONSTRAINT my_pk PRIMARY KEY (a))",
    "INSERT INTO uq_pk VALUES (1), (1)",
    "CREATE TABLE uq_pk_pkey (a int)",
    "CREATE TABLE uq_pk2 (a int PRIMARY KEY)",
    "CREATE TABLE uq_pk2_pkey (a int)",
    "CREATE TABLE uq_pk3_pkey (a int)",
    "CREATE TABLE uq_pk3 (a int PRIMARY KEY)",
    CONSTRAINTS.format(t="uq_pk3"),
    "CREATE TABLE ac (id int PRIMARY KEY)",
    'create table ac (id int primary key)',
    'insert into ac values (1), (2)',
    'alter table ac add column e int unique',
    'alter table ac add column f int default 5 unique',
    'alter table ac add column g int default 5',
    'alter table ac add column h serial unique',
    "select indexname, indexdef from pg_indexes where tablename = 'ac' order by 1",
    'insert into ac (id, e) values (3, null), (4, null)',
    'insert into ac (id, e) values (5, 1), (6, 1)',
]

BUILDS_AND_CONFLICTS = [
    "CREATE TABLE bd (id int, k int, v text)",
    "INSERT INTO bd VALUES (1, NULL, 'a'), (2, NULL, 'b'), (3, 1, 'c'), (4, 1, 'd')",
    "CREATE UNIQUE INDEX bd_k ON bd (k)",
    "DELETE FROM bd WHERE id = 4",
    "CREATE UNIQUE INDEX bd_k ON bd (k)",
    "CREATE UNIQUE INDEX bd_k_nnd ON bd (k) NULLS NOT DISTINCT",
    "BEGIN",
    "INSERT INTO bd VALUES (5, 5, 'e')",
    "CREATE UNIQUE INDEX bd_id ON bd (id)",
    "INSERT INTO bd VALUES (5, 6, 'f')",
    "COMMIT",
    "SELECT * FROM bd ORDER BY id",
    "BEGIN",
    "CREATE INDEX CONCURRENTLY ON bd (v)",
    "ROLLBACK",
    "CREATE INDEX CONCURRENTLY ON bd (v)",
    "DROP INDEX CONCURRENTLY bd_v_idx",
    "INSERT INTO bd VALUES (6, 6, 'g') ON CONFLICT (k) DO NOTHING",
    "INSERT INTO bd VALUES (7, 6, 'h') ON CONFLICT (k) DO NOTHING",
    "INSERT INTO bd VALUES (8, 6, 'i') ON CONFLICT (k) DO UPDATE SET v = excluded.v",
    "INSERT INTO bd VALUES (9, NULL, 'j') ON CONFLICT (k) DO UPDATE SET v = excluded.v",
    "INSERT INTO bd VALUES (10, 6, 'k') ON CONFLICT ON CONSTRAINT bd_k DO NOTHING",
    "ALTER TABLE bd ADD CONSTRAINT bd_v UNIQUE (v)",
    "INSERT INTO bd VALUES (11, 11, 'k') ON CONFLICT ON CONSTRAINT bd_v DO UPDATE SET k = 12",
    "INSERT INTO bd VALUES (12, 13, 'k') ON CONFLICT ON CONSTRAINT bd_v DO UPDATE SET k = 13",
    "INSERT INTO bd VALUES (13, 14, 'l') ON CONFLICT (v, k) DO NOTHING",
    "SELECT * FROM bd ORDER BY id",
    # DO NOTHING without a target: every unique index is an arbiter (Django's M2M add)
    "CREATE TABLE m2m (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, a int NOT NULL, b int NOT NULL, UNIQUE (a, b))",
    "INSERT INTO m2m (a, b) VALUES (1, 1), (1, 2) ON CONFLICT DO NOTHING",
    "INSERT INTO m2m (a, b) VALUES (1, 1), (2, 2), (2, 2), (1, 3) ON CONFLICT DO NOTHING RETURNING a, b",
    "INSERT INTO m2m (id, a, b) VALUES (1, 9, 9), (100, 1, 2), (101, 7, 7) ON CONFLICT DO NOTHING RETURNING *",
    "SELECT * FROM m2m ORDER BY id",
    "CREATE TABLE u2 (x int UNIQUE, y int UNIQUE, z text)",
    "INSERT INTO u2 VALUES (1, 1, 'a'), (2, 2, 'b')",
    "INSERT INTO u2 VALUES (1, 5, 'c'), (5, 2, 'd'), (6, 6, 'e'), (NULL, NULL, 'f'), (NULL, NULL, 'g'), (6, 7, 'h') ON CONFLICT DO NOTHING",
    "SELECT * FROM u2 ORDER BY z",
    # an arbiter NULLS NOT DISTINCT: NULLs conflict
    "CREATE TABLE u4 (x int UNIQUE NULLS NOT DISTINCT, v text)",
    "INSERT INTO u4 VALUES (NULL, 'a'), (NULL, 'b') ON CONFLICT DO NOTHING",
    "INSERT INTO u4 VALUES (NULL, 'c') ON CONFLICT (x) DO NOTHING",
    "INSERT INTO u4 VALUES (NULL, 'd') ON CONFLICT (x) DO UPDATE SET v = excluded.v RETURNING *",
    "INSERT INTO u4 VALUES (NULL, 'g'), (NULL, 'h') ON CONFLICT (x) DO UPDATE SET v = excluded.v",
    "SELECT * FROM u4 ORDER BY v",
    "CREATE TABLE u5 (x int, y int, UNIQUE NULLS NOT DISTINCT (x, y))",
    "INSERT INTO u5 VALUES (1, NULL), (1, NULL), (NULL, NULL), (NULL, NULL), (1, 2) ON CONFLICT DO NOTHING",
    "SELECT * FROM u5 ORDER BY 1, 2",
]

REPLICA_IDENTITY = [
    "CREATE TABLE ri (a int NOT NULL, b int, c int NOT NULL)",
    "CREATE UNIQUE INDEX ri_a ON ri (a)",
    "CREATE UNIQUE INDEX ri_b ON ri (b)",
    "CREATE INDEX ri_c ON ri (c)",
    "ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_b",
    "ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_c",
    "ALTER TABLE ri REPLICA IDENTITY USING INDEX nope",
    "ALTER TABLE ri REPLICA IDENTITY USING INDEX ri_a",
    "SELECT relreplident FROM pg_class WHERE relname = 'ri'",
    INDEX_CATALOG.format(t="ri"),
    "SELECT pg_get_replica_identity_index('ri')",
    "ALTER INDEX ri_a RENAME TO ri_a2",
    "SELECT pg_get_replica_identity_index('ri')",
    "DROP INDEX ri_a2",
    "SELECT relreplident FROM pg_class WHERE relname = 'ri'",
    INDEX_CATALOG.format(t="ri"),
    "CREATE TABLE ri2 (x int PRIMARY KEY)",
    "ALTER TABLE ri REPLICA IDENTITY USING INDEX ri2_pkey",
]


#: Keys of each stored type: equality as PostgreSQL's (char padding, NaN = NaN, -0 = 0,
#: uuid spellings) and the DETAIL printing the key as the type's output function does.
KEY_TYPES = [
    "create table k1 (c char(3) primary key)",
    "insert into k1 values ('a')",
    "insert into k1 values ('a  ')",
    "insert into k1 values ('a ')",
    "select c, length(c), c = 'a' from k1",
    "create table k2 (f float8 primary key)",
    "insert into k2 values ('NaN')",
    "insert into k2 values ('NaN')",
    "insert into k2 values (0.0)",
    "insert into k2 values (-0.0)",
    "create table k3 (u uuid primary key)",
    "insert into k3 values ('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11')",
    "insert into k3 values ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')",
    "insert into k3 values ('{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}')",
    "select * from k3 where u = 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'",
    "create table k4 (t text primary key, v int)",
    "insert into k4 values ('x', 1)",
    "update k4 set v = 2 where t = 'x'",
    "select * from k4 where t = 'x'",
    "create table k5 (a int[] primary key)",
    "insert into k5 values ('{1,2}')",
    "insert into k5 values (array[1,2])",
    "create table k6 (b bytea primary key)",
    "insert into k6 values ('\\x00')",
    "insert into k6 values ('\\000'::bytea)",
    "create table k7 (f float4 primary key)",
    "insert into k7 values ('NaN'), ('nan')",
]


#: int2vector/oidvector columns print and cast as PostgreSQL's (``1 2``, zero-based).
VECTORS = [
    "create table iv (a int, b int, c int)",
    "create unique index iv_ab on iv (b desc, a)",
    "select indkey::text, indoption::text, indclass::text = '', indcollation::text from pg_index where indexrelid = 'iv_ab'::regclass",
    "select indkey, indkey[0], indkey::int2[] from pg_index where indexrelid = 'iv_ab'::regclass",
]


@pytest.mark.parametrize(
    "statements",
    [INDEXES, UNIQUE_CONSTRAINTS, BUILDS_AND_CONFLICTS, REPLICA_IDENTITY, KEY_TYPES, VECTORS],
    ids=[
        "indexes",
        "unique-constraints",
        "builds-and-conflicts",
        "replica-identity",
        "key-types",
        "vectors",
    ],
)
def test_indexes_as_in_postgresql(
    proxy: ProxyServer, pg15: PgCluster, statements: list[str]
) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("ix")), statements).close()


REFUSED = [
    ("CREATE INDEX ON rf (md5(t))", "an index expression calling md5"),
    ("CREATE UNIQUE INDEX rf_np ON rf (t) WHERE n > 0; INSERT INTO rf (n, t) VALUES (1, 'x') ON CONFLICT DO NOTHING",
     "a partial unique index"),
    ("INSERT INTO rf (n, t) VALUES (1, 'x') ON CONFLICT (t) WHERE n > 0 DO NOTHING",
     "a partial unique index as the arbiter"),
    ("CREATE UNIQUE INDEX ON rf (lower(t))", "a unique index on an expression"),
    ('CREATE INDEX ON rf (t COLLATE "C")', "COLLATE in an index column"),
    ("CREATE INDEX ON rf (t varchar_ops)", "the operator class \"varchar_ops\""),
    ("CREATE INDEX ON rf (n) WITH (fillfactor = 70)", "storage parameters of an index"),
    ("CREATE INDEX ON rf USING gin (a)", "gin indexes"),
    ("CREATE UNIQUE INDEX ON rf (u)", "numeric without a precision and scale"),
    ("CREATE UNIQUE INDEX ON rf (i)", "a unique key over a column of type interval"),
    ("CREATE TABLE rf2 (u numeric PRIMARY KEY)", "numeric without a precision and scale"),
    ("ALTER TABLE rf ADD CONSTRAINT rf_d UNIQUE (n) DEFERRABLE", "a DEFERRABLE unique constraint"),
]


def test_what_the_lake_cannot_do_exactly_is_refused(proxy: ProxyServer, pg15: PgCluster) -> None:
    """PostgreSQL runs each of these; the proxy refuses them (0A000) rather than differ."""
    setup = "CREATE TABLE rf (n int, t text, u numeric, i interval, a int[]); CREATE UNIQUE INDEX rf_n ON rf (n) NULLS NOT DISTINCT"
    ref_db = pg15.new_database("rf")
    with (
        psycopg.connect(pg15.dsn(dbname=ref_db), autocommit=True) as ref,
        psycopg.connect(proxy.dsn(), autocommit=True) as got,
    ):
        ref.execute(setup)
        got.execute(setup)
        for sql, words in REFUSED:
            ref.execute(sql)
            with pytest.raises(psycopg.errors.FeatureNotSupported, match=words):
                got.execute(sql)


def test_indexes_survive_a_restart_and_still_bind(tmp_path: Path) -> None:
    with ProxyServer(tmp_path / "d") as p, Client(p.dsn()) as c:
        c("CREATE TABLE rs (id int PRIMARY KEY, email text UNIQUE, a int)")
        c("CREATE INDEX rs_a ON rs (a DESC)")
        c("INSERT INTO rs VALUES (1, 'x', 1)")
        before = c("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'rs' ORDER BY 1")
    with ProxyServer(tmp_path / "d") as p, Client(p.dsn()) as c:
        assert (
            c("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'rs' ORDER BY 1")
            == before
        )
        assert c("INSERT INTO rs VALUES (2, 'x', 2)")[:2] == ("error", "23505")


def test_an_index_made_after_a_snapshot_binds_the_transactions_writing_under_it(
    proxy: ProxyServer,
) -> None:
    """A REPEATABLE READ transaction that began before CREATE UNIQUE INDEX committed is
    still checked against the index, as PostgreSQL's relcache sees the new index."""
    with Client(proxy.dsn()) as a, Client(proxy.dsn()) as b:
        a("CREATE TABLE late (id int, k int)")
        b("BEGIN ISOLATION LEVEL REPEATABLE READ")
        assert b("SELECT count(*) FROM late")[0] == "rows"
        a("INSERT INTO late VALUES (1, 1)")
        assert a("CREATE UNIQUE INDEX late_k ON late (k)") == ("done", "CREATE INDEX")
        got = b("INSERT INTO late VALUES (2, 1)")
        assert got[:3] == (
            "error",
            "23505",
            'duplicate key value violates unique constraint "late_k"',
        )
        b("ROLLBACK")


def _copy(dsn: str, rows: list[tuple[object, ...]]) -> tuple[object, ...]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            with conn.cursor() as cur, cur.copy("COPY cp FROM STDIN") as copy:
                for r in rows:
                    copy.write_row(r)
        except psycopg.Error as e:
            return ("error", e.sqlstate, e.diag.message_primary, e.diag.message_detail)
        return ("rows", conn.execute("SELECT * FROM cp ORDER BY id").fetchall())


def test_copy_is_checked_against_unique_indexes(proxy: ProxyServer, pg15: PgCluster) -> None:
    """COPY FROM, small and streamed in batches, as PostgreSQL checks it."""
    ref = pg15.dsn(dbname=pg15.new_database("cp"))
    for dsn in (ref, proxy.dsn()):
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE cp (id int, code text, CONSTRAINT cp_code UNIQUE (code))")
    for rows in (
        [(1, "a"), (2, "b")],
        [(3, "c"), (4, "a")],
        [(5, None), (6, None)],
        [(i, f"k{i}") for i in range(10, 60_000)] + [(70_000, "k11")],
        [(i, f"k{i}") for i in range(10, 60_000)],
    ):
        assert _copy(proxy.dsn(), rows) == _copy(ref, rows)


STREAM_SETUP = [
    "CREATE TABLE rs_ri (id int PRIMARY KEY, code text NOT NULL, v text)",
    "CREATE UNIQUE INDEX rs_ri_code ON rs_ri (code)",
    "ALTER TABLE rs_ri REPLICA IDENTITY USING INDEX rs_ri_code",
    "CREATE PUBLICATION p FOR TABLE rs_ri",
]
STREAM = [
    "INSERT INTO rs_ri VALUES (1, 'a', 'one'), (2, 'b', 'two')",
    "UPDATE rs_ri SET v = 'uno' WHERE id = 1",
    "UPDATE rs_ri SET code = 'bb' WHERE id = 2",
    "DELETE FROM rs_ri WHERE id = 1",
    "ALTER TABLE rs_ri REPLICA IDENTITY DEFAULT",
    "UPDATE rs_ri SET code = 'b' WHERE id = 2",
    "ALTER TABLE rs_ri REPLICA IDENTITY USING INDEX rs_ri_code",
    "DROP INDEX rs_ri_code",
    "INSERT INTO rs_ri VALUES (3, 'c', 'three')",
    "UPDATE rs_ri SET v = 'x' WHERE id = 3",
]


def test_replica_identity_using_a_unique_index_streams_as_from_postgresql(
    proxy: ProxyServer, pg15: PgCluster
) -> None:
    """pg_recvlogical over pgoutput: the Relation message flags the index's columns as the
    key, Update and Delete carry its old key ('K'); after DROP INDEX of the identity index
    the table identifies no row (PostgreSQL: as NOTHING) and an UPDATE is refused."""
    streams = []
    for dsn in (new_sub_db(pg15), proxy.dsn()):
        with psycopg.connect(dsn, autocommit=True) as c:
            for sql in STREAM_SETUP:
                c.execute(sql)
        recvlogical(dsn, "ri", "--create-slot", "-P", "pgoutput")
        outcomes = []
        with Client(dsn) as c:
            outcomes = [c(sql) for sql in STREAM]
        streams.append((outcomes, read_slot(dsn, "ri", end_lsn(dsn))))
    assert streams[1] == streams[0]
