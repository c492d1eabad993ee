"""Declarative partitioning (RANGE and LIST) beside PostgreSQL 15: PARTITION BY /
PARTITION OF with their bound checks and errors, tuple routing of INSERT and COPY,
default and sub-partitions, partition constraints of direct writes, UPDATE with row
movement, DELETE, TRUNCATE and DROP through the parent, the catalog rows psql and clients
read, the pgoutput stream of a published partitioned table, and a subscriber syncing its
partitions. What is refused says so (0A000)."""

from __future__ import annotations

import psycopg
import pytest

from tests.integration.test_subscriber import text_and_binary_subscribers, wait_identical
from tests.pgcluster import PgCluster
from tests.pgcompare import recorded_stream, same_answers, stream_shape
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

STATEMENTS = [
    "CREATE TABLE pt_r (a int, b text, c int DEFAULT 7 CHECK (c > 0)) PARTITION BY RANGE (a)",
    "CREATE TABLE pt_r1 PARTITION OF pt_r FOR VALUES FROM (1) TO (10)",
    "CREATE TABLE pt_r2 PARTITION OF pt_r FOR VALUES FROM (10) TO (20)",
    "CREATE TABLE pt_r3 PARTITION OF pt_r FOR VALUES FROM (5) TO (15)",
    "CREATE TABLE pt_r4 PARTITION OF pt_r FOR VALUES FROM (30) TO (20)",
    "CREATE TABLE pt_r5 PARTITION OF pt_r FOR VALUES FROM (MINVALUE) TO (1)",
    "CREATE TABLE pt_r6 PARTITION OF pt_r FOR VALUES IN (1)",
    "CREATE TABLE pt_r7 PARTITION OF pt_r FOR VALUES FROM (NULL) TO (40)",
    "CREATE TABLE pt_r8 PARTITION OF pt_r FOR VALUES FROM ('x') TO (40)",
    "CREATE TABLE pt_r9 PARTITION OF pt_r FOR VALUES FROM (1, 2) TO (40, 3)",
    "INSERT INTO pt_r (a, b) VALUES (1, 'a'), (15, 'b'), (0, 'z')",
    "INSERT INTO pt_r VALUES (25, 'none', 1)",
    "INSERT INTO pt_r VALUES (NULL, 'none', 1)",
    "INSERT INTO pt_r VALUES (3, 'neg', -1)",
    "CREATE TABLE pt_rdef PARTITION OF pt_r DEFAULT",
    "CREATE TABLE pt_rdef2 PARTITION OF pt_r DEFAULT",
    "INSERT INTO pt_r VALUES (NULL, 'n', 4), (100, 'big', 5) RETURNING *",
    "CREATE TABLE pt_r30 PARTITION OF pt_r FOR VALUES FROM (90) TO (110)",
    "SELECT * FROM pt_r",
    "SELECT * FROM pt_r WHERE a > 0 ORDER BY a",
    "SELECT tableoid::regclass, * FROM pt_r ORDER BY a",
    "SELECT r.tableoid::regclass::text, r.b FROM pt_r r WHERE r.tableoid = 'pt_rdef'::regclass ORDER BY 2",
    "SELECT count(*), sum(a) FROM ONLY pt_r",
    "SELECT * FROM pt_rdef",
    "INSERT INTO pt_r1 VALUES (50, 'x', 1)",
    "INSERT INTO pt_r1 VALUES (NULL, 'x', 1)",
    "INSERT INTO pt_r1 VALUES (2, 'direct', 1)",
    "UPDATE pt_r SET a = a + 10 WHERE b = 'a' RETURNING *",
    "UPDATE pt_r SET a = 99 WHERE b = 'b'",
    "UPDATE pt_r1 SET a = 60",
    "UPDATE pt_r SET c = c + 1 RETURNING a, c",
    "SELECT * FROM pt_r ORDER BY b",
    "DELETE FROM pt_r WHERE a = 11 RETURNING a, b",
    "SELECT * FROM pt_r2",
    "TRUNCATE pt_r",
    "SELECT count(*) FROM pt_r",
    # list partitions, a NULL-taking one, a sub-partitioned one and its default
    "CREATE TABLE pt_l (a int, b text) PARTITION BY LIST (b)",
    "CREATE TABLE pt_l1 PARTITION OF pt_l FOR VALUES IN ('a', 'b')",
    "CREATE TABLE pt_l2 PARTITION OF pt_l FOR VALUES IN ('c', NULL)",
    "CREATE TABLE pt_l3 PARTITION OF pt_l FOR VALUES IN ('b')",
    "CREATE TABLE pt_l4 PARTITION OF pt_l FOR VALUES IN ('d', 'e') PARTITION BY RANGE (a)",
    "CREATE TABLE pt_l41 PARTITION OF pt_l4 FOR VALUES FROM (1) TO (10)",
    "CREATE TABLE pt_l4d PARTITION OF pt_l4 DEFAULT",
    "INSERT INTO pt_l VALUES (1, 'a'), (2, NULL), (3, 'c'), (4, 'd'), (40, 'e')",
    "INSERT INTO pt_l VALUES (5, 'zz')",
    "INSERT INTO pt_l4 VALUES (6, 'a')",
    "SELECT * FROM pt_l",
    "SELECT * FROM pt_l4",
    "SELECT tableoid::regclass, * FROM pt_l ORDER BY a",
    "SELECT x.tableoid::regclass, y FROM pt_l AS x(y, z) ORDER BY y",
    "SELECT tableoid::regclass::text AS t, count(*) FROM pt_l4 GROUP BY 1 ORDER BY 1",
    "UPDATE pt_l SET b = 'e' WHERE a = 1",
    "UPDATE pt_l SET b = 'q' WHERE a = 2",
    "SELECT * FROM pt_l ORDER BY a",
    # multi-column range bounds with MINVALUE / MAXVALUE
    "CREATE TABLE pt_m (a int, b int, c text) PARTITION BY RANGE (a, b)",
    "CREATE TABLE pt_m1 PARTITION OF pt_m FOR VALUES FROM (1, MINVALUE) TO (1, 10)",
    "CREATE TABLE pt_m2 PARTITION OF pt_m FOR VALUES FROM (1, 10) TO (2, 0)",
    "CREATE TABLE pt_m3 PARTITION OF pt_m FOR VALUES FROM (2, 0) TO (MAXVALUE, MAXVALUE)",
    "CREATE TABLE pt_m4 PARTITION OF pt_m FOR VALUES FROM (1, MAXVALUE) TO (2, 1)",
    "CREATE TABLE pt_m5 PARTITION OF pt_m FOR VALUES FROM (MINVALUE, 1) TO (0, 0)",
    "INSERT INTO pt_m VALUES (1, 5, 'x'), (1, 10, 'y'), (2, -1, 'z'), (5, 5, 'w')",
    "INSERT INTO pt_m VALUES (0, 5, 'q')",
    "SELECT * FROM pt_m",
    "SELECT tableoid::regclass, * FROM pt_m ORDER BY a, b",
    # keys of other types; values coerced and printed as pg_get_expr prints them
    "CREATE TABLE pt_t (d date, s varchar(5), n numeric, f bool) PARTITION BY RANGE (d, s)",
    "CREATE TABLE pt_t1 PARTITION OF pt_t FOR VALUES FROM ('2020-01-01', 'a') TO ('2021-01-01', 'it''s')",
    "CREATE TABLE pt_n (n numeric(5, 2), i bigint) PARTITION BY LIST (n)",
    "CREATE TABLE pt_n1 PARTITION OF pt_n FOR VALUES IN (1.50, -2, 3)",
    "CREATE TABLE pt_b (f bool) PARTITION BY LIST (f)",
    "CREATE TABLE pt_b1 PARTITION OF pt_b FOR VALUES IN (true)",
    "CREATE TABLE pt_b2 PARTITION OF pt_b FOR VALUES IN ('f', NULL)",
    "INSERT INTO pt_t VALUES ('2020-06-01', 'b', 1, true)",
    "INSERT INTO pt_n VALUES (1.5, 1), (-2, 2)",
    "INSERT INTO pt_n VALUES (2, 3)",
    "SELECT * FROM pt_n",
    # hash partitions: PostgreSQL's hash functions pick the same partition for each row
    "CREATE TABLE pt_h (a int, b text) PARTITION BY HASH (a)",
    "CREATE TABLE pt_h0 PARTITION OF pt_h FOR VALUES WITH (MODULUS 4, REMAINDER 0)",
    "CREATE TABLE pt_h1 PARTITION OF pt_h FOR VALUES WITH (MODULUS 4, REMAINDER 1)",
    "CREATE TABLE pt_h2 PARTITION OF pt_h FOR VALUES WITH (MODULUS 2, REMAINDER 1)",
    "CREATE TABLE pt_h3 PARTITION OF pt_h FOR VALUES WITH (MODULUS 8, REMAINDER 2)",
    "CREATE TABLE pt_h4 PARTITION OF pt_h FOR VALUES WITH (MODULUS 3, REMAINDER 2)",
    "CREATE TABLE pt_h5 PARTITION OF pt_h FOR VALUES WITH (MODULUS 0, REMAINDER 0)",
    "CREATE TABLE pt_h6 PARTITION OF pt_h FOR VALUES WITH (MODULUS 4, REMAINDER 4)",
    "CREATE TABLE pt_h7 PARTITION OF pt_h DEFAULT",
    "CREATE TABLE pt_h8 PARTITION OF pt_h FOR VALUES WITH (MODULUS 8, REMAINDER 5)",
    "INSERT INTO pt_h SELECT g, g::text FROM generate_series(-20, 40) g",
    "CREATE TABLE pt_h9 PARTITION OF pt_h FOR VALUES WITH (MODULUS 8, REMAINDER 6)",
    "CREATE TABLE pt_h10 PARTITION OF pt_h FOR VALUES WITH (MODULUS 4, REMAINDER 3)",
    "INSERT INTO pt_h SELECT g, g::text FROM generate_series(-20, 40) g",
    "INSERT INTO pt_h VALUES (NULL, 'n')",
    "SELECT * FROM pt_h0",
    "SELECT * FROM pt_h3",
    "SELECT * FROM pt_h10",
    "UPDATE pt_h SET a = a + 1 WHERE a BETWEEN 1 AND 5",
    "SELECT * FROM pt_h1",
    "CREATE TABLE pt_ht (a text, b bigint, c date, d bool, e timestamptz, f timestamp) PARTITION BY HASH (a, b, c, d, e, f)",
    "CREATE TABLE pt_ht0 PARTITION OF pt_ht FOR VALUES WITH (MODULUS 3, REMAINDER 0)",
    "CREATE TABLE pt_ht1 PARTITION OF pt_ht FOR VALUES WITH (MODULUS 3, REMAINDER 1)",
    "CREATE TABLE pt_ht2 PARTITION OF pt_ht FOR VALUES WITH (MODULUS 3, REMAINDER 2)",
    "INSERT INTO pt_ht SELECT 'v' || g, g * 1000000007, date '2000-01-01' + g * 37, g % 2 = 0, "
    "timestamptz '2020-01-01 00:00:00+00' + g * interval '7 hours', timestamp '1999-12-31 23:00:00' + g * interval '13 minutes' "
    "FROM generate_series(1, 60) g",
    "INSERT INTO pt_ht VALUES (NULL, NULL, NULL, NULL, NULL, NULL), ('x', NULL, NULL, true, NULL, NULL), ('é€', -5, '0044-03-15 BC', false, NULL, NULL)",
    "SELECT a FROM pt_ht0",
    "SELECT a FROM pt_ht1",
    "SELECT a FROM pt_ht2",
    # key expressions: (column op integer), abs(), lower(), upper()
    "CREATE TABLE pt_x1 (a text, b int, c int) PARTITION BY RANGE (a, (b + 0), abs(c))",
    "CREATE TABLE pt_x11 PARTITION OF pt_x1 FOR VALUES FROM ('a', 1, 1) TO ('b', 1, 1)",
    "INSERT INTO pt_x1 VALUES ('z', 1, 1)",
    "INSERT INTO pt_x1 VALUES ('a', 2147483647, 1)",
    "INSERT INTO pt_x1 VALUES ('a', 5, -2147483648)",
    "INSERT INTO pt_x1 VALUES ('a', 5, -7), ('a', -3, 8)",
    "SELECT tableoid::regclass, * FROM pt_x1 ORDER BY b",
    "CREATE TABLE pt_x2 (a text, b int) PARTITION BY LIST (lower(a))",
    "CREATE TABLE pt_x21 PARTITION OF pt_x2 FOR VALUES IN ('ab')",
    "CREATE TABLE pt_x2d PARTITION OF pt_x2 DEFAULT",
    "INSERT INTO pt_x2 VALUES ('AB', 1), ('Ab', 2), (NULL, 3), ('x', 4)",
    "UPDATE pt_x2 SET a = 'aB' WHERE b = 4",
    "SELECT tableoid::regclass, * FROM pt_x2 ORDER BY b",
    "CREATE TABLE pt_x3 (a int PRIMARY KEY) PARTITION BY LIST ((a + 0))",
    "CREATE TABLE pt_x4 (a int, b int) PARTITION BY LIST ((a - 1))",
    "CREATE TABLE pt_x41 PARTITION OF pt_x4 FOR VALUES IN (0, 1)",
    "INSERT INTO pt_x4 VALUES (1, 1), (2, 2), (3, 3)",
    "CREATE TABLE pt_x5 (a int, b text) PARTITION BY HASH ((a * 3), upper(b))",
    "CREATE TABLE pt_x50 PARTITION OF pt_x5 FOR VALUES WITH (MODULUS 2, REMAINDER 0)",
    "CREATE TABLE pt_x51 PARTITION OF pt_x5 FOR VALUES WITH (MODULUS 2, REMAINDER 1)",
    "INSERT INTO pt_x5 SELECT g, 'x' || g FROM generate_series(1, 30) g",
    "SELECT * FROM pt_x50",
    "SELECT pg_get_partkeydef(c.oid) FROM pg_class c WHERE c.relname IN ('pt_x1', 'pt_x2', 'pt_x4', 'pt_x5') ORDER BY c.relname",
    "DROP TABLE pt_x1, pt_x2, pt_x4, pt_x5",
    # what PostgreSQL refuses
    "CREATE TABLE pt_e1 (a int, b int) PARTITION BY LIST (a, b)",
    "CREATE TABLE pt_e2 (a int) PARTITION BY LIST (c)",
    "CREATE TABLE pt_e3 (a int, b int, PRIMARY KEY (a)) PARTITION BY RANGE (b)",
    "CREATE TABLE pt_e4 (a int)",
    "CREATE TABLE pt_e5 PARTITION OF pt_e4 FOR VALUES IN (1)",
    "CREATE TABLE pt_e6 PARTITION OF pt_l FOR VALUES FROM (1) TO (2)",
    "CREATE TABLE pt_e7 PARTITION OF pt_r FOR VALUES FROM (1, 2) TO (3, 4)",
    "COPY pt_r TO STDOUT",
    # a primary key: each partition has its own, keys unique across them by the key's columns
    "CREATE TABLE pt_k (a int, b int, v text, PRIMARY KEY (a, b)) PARTITION BY RANGE (b)",
    "CREATE TABLE pt_k1 PARTITION OF pt_k FOR VALUES FROM (1) TO (5)",
    "CREATE TABLE pt_k2 PARTITION OF pt_k FOR VALUES FROM (5) TO (10)",
    "INSERT INTO pt_k VALUES (1, 1, 'x'), (1, 6, 'y')",
    "INSERT INTO pt_k VALUES (1, 1, 'dup')",
    "UPDATE pt_k SET b = 2 WHERE v = 'y'",
    "SELECT * FROM pt_k ORDER BY b",
    # the catalog rows psql's \\d and clients read
    "SELECT c.relname, c.relkind, c.relispartition, c.relhassubclass, pg_get_expr(c.relpartbound, c.oid) FROM pg_class c "
    "WHERE c.relname LIKE 'pt\\_%' ESCAPE '\\' ORDER BY 1",
    "SELECT i.inhrelid::regclass::text, i.inhparent::regclass::text, i.inhseqno, i.inhdetachpending FROM pg_inherits i ORDER BY 1",
    "SELECT partrelid::regclass::text, partstrat, partnatts, partdefid::regclass::text, partattrs::text, partclass::text, "
    "partcollation::text, partexprs FROM pg_partitioned_table ORDER BY 1",
    "SELECT pg_get_partkeydef('pt_m'::regclass), pg_get_partkeydef('pt_m1'::regclass)",
    "CREATE PUBLICATION pt_pub FOR TABLE pt_r, pt_l",
    "SELECT * FROM pg_publication_tables WHERE pubname = 'pt_pub' ORDER BY tablename",
    "CREATE PUBLICATION pt_pub2 FOR TABLE pt_l, pt_l4 WITH (publish_via_partition_root = true)",
    "SELECT * FROM pg_publication_tables WHERE pubname = 'pt_pub2' ORDER BY tablename",
    "CREATE PUBLICATION pt_pub3 FOR ALL TABLES WITH (publish_via_partition_root = true)",
    "SELECT tablename FROM pg_publication_tables WHERE pubname = 'pt_pub3' AND tablename LIKE 'pt%' ORDER BY tablename",
    "CREATE PUBLICATION pt_pub4 FOR ALL TABLES",
    "SELECT tablename FROM pg_publication_tables WHERE pubname = 'pt_pub4' AND tablename LIKE 'pt%' ORDER BY tablename",
    "DROP PUBLICATION pt_pub2, pt_pub3, pt_pub4",
    "DROP TABLE pt_l4",
    "SELECT * FROM pt_l ORDER BY a",
    "DROP TABLE pt_l",
    "SELECT relname FROM pg_class WHERE relname LIKE 'pt\\_l%' ESCAPE '\\'",
    "DROP PUBLICATION pt_pub",
    "DROP TABLE pt_r, pt_m, pt_t, pt_n, pt_b, pt_k, pt_e4, pt_h, pt_ht",
]


#: ATTACH / DETACH PARTITION: a table with the parent's columns (in its order) and primary key.
ATTACH = [
    'create table ap (a int not null, b text, primary key (a)) partition by range (a)',
    'create table ap1 partition of ap for values from (1) to (10)',
    'create table x1 (a int not null, b text, primary key (a))',
    "insert into x1 values (15, 'x')",
    'alter table ap attach partition x1 for values from (10) to (20)',
    'alter table ap attach partition x1 for values from (20) to (30)',
    'create table x2 (a int not null, b text, c int, primary key (a))',
    'alter table ap attach partition x2 for values from (20) to (30)',
    'create table x3 (a int not null, primary key (a))',
    'alter table ap attach partition x3 for values from (20) to (30)',
    'create table x5 (a bigint not null, b text, primary key (a))',
    'alter table ap attach partition x5 for values from (20) to (30)',
    'create table x7 (a int not null, b text, primary key (a))',
    "insert into x7 values (99, 'y')",
    'alter table ap attach partition x7 for values from (30) to (40)',
    'alter table x1 attach partition x7 for values from (30) to (40)',
    'alter table ap attach partition x7 for values from (5) to (8)',
    'delete from x7',
    'alter table ap attach partition x7 for values from (30) to (40)',
    "insert into ap values (35, 'routed'), (1, 'one')",
    'select * from ap order by a',
    'select * from x7',
    'alter table ap detach partition x1',
    'select * from ap order by a',
    'alter table ap detach partition x1',
    "insert into x1 values (500, 'free')",
    'select * from x1 order by a',
    'create table apd partition of ap default',
    'create table x8 (a int not null, b text, primary key (a))',
    "insert into apd values (45, 'd')",
    'alter table ap attach partition x8 for values from (40) to (50)',
    'create table cc (a int check (a > 0)) partition by list (a)',
    'create table cc1 (a int)',
    'alter table cc attach partition cc1 for values in (1)',
    'alter table cc1 add constraint cc_a_check check (a > 0)',
    'alter table cc attach partition cc1 for values in (1)',
    # a partition's columns, CHECKs and primary key are inherited (attislocal, coninhcount)
    "select attrelid::regclass::text, attname, attislocal, attinhcount from pg_attribute"
    " where attrelid in ('ap'::regclass, 'ap1'::regclass, 'x7'::regclass, 'x1'::regclass, 'cc1'::regclass) and attnum > 0 order by 1, attnum",
    "select conrelid::regclass::text, conname, contype, conislocal, coninhcount, connoinherit,"
    " (select p.conname from pg_constraint p where p.oid = c.conparentid) from pg_constraint c"
    " where conrelid in ('ap'::regclass, 'ap1'::regclass, 'x7'::regclass, 'x1'::regclass, 'cc1'::regclass) order by 1, 2",
    "DROP TABLE ap, x1, x2, x3, x5, cc",
]


#: ADD / DROP COLUMN of a partitioned table, carried to its partitions.
COLUMNS = [
    'create table ac (a int, b text) partition by list (a)',
    'create table ac1 partition of ac for values in (1) partition by list (b)',
    "create table ac1x partition of ac1 for values in ('x')",
    'create table ac2 partition of ac for values in (2)',
    "insert into ac values (1, 'x'), (2, 'y')",
    'alter table ac add column c int',
    'alter table ac1 add column d int',
    'alter table ac2 drop column b',
    'alter table ac drop column a',
    'alter table ac1 drop column b',
    'alter table ac drop column b',
    'alter table ac add column e text not null',
    "alter table ac add column f text default 'q'",
    'select * from ac order by a',
    'alter table ac drop column c',
    'select * from ac order by a',
    "insert into ac values (2, 'z', 'w')",
    'select * from ac2',
    'create table ac3 partition of ac for values in (3)',
    "insert into ac values (3, 'm')",
    'alter table ac add column g int check (g > 0)',
    "insert into ac values (3, 'm', 'n', -1)",
    'select * from ac order by a, b',
    'alter table ac add column if not exists g int',
    'alter table ac drop column if exists zz',
    'drop table ac',
]


#: pg_get_partition_constraintdef (psql's \\d+ "Partition constraint:") as ruleutils prints it.
CONSTRAINTS = [
    'create table pc_r (a int, b text, c int) partition by range (a)',
    'create table pc_r1 partition of pc_r for values from (1) to (10)',
    'create table pc_r2 partition of pc_r for values from (10) to (20)',
    'create table pc_r5 partition of pc_r for values from (minvalue) to (1)',
    'create table pc_r6 partition of pc_r for values from (50) to (maxvalue)',
    'create table pc_rdef partition of pc_r default',
    'create table pc_l (a int, b text) partition by list (b)',
    "create table pc_l1 partition of pc_l for values in ('b', 'a')",
    "create table pc_l2 partition of pc_l for values in ('c', null)",
    "create table pc_l3 partition of pc_l for values in ('it''s') partition by range (a)",
    'create table pc_l31 partition of pc_l3 for values from (-5) to (5)',
    'create table pc_ld partition of pc_l default',
    'create table pc_lb (f bool) partition by list (f)',
    'create table pc_lb1 partition of pc_lb for values in (true)',
    'create table pc_lbd partition of pc_lb default',
    'create table pc_ln (n numeric(5,2), d date) partition by list (n)',
    'create table pc_ln1 partition of pc_ln for values in (1.50, -2, 3)',
    'create table pc_ld2 (d date, i bigint) partition by range (d)',
    "create table pc_ld21 partition of pc_ld2 for values from ('2020-01-01') to ('2021-01-01')",
    'create table pc_ldi (i bigint) partition by list (i)',
    'create table pc_ldi1 partition of pc_ldi for values in (5, -7)',
    'create table pc_lh (a int) partition by hash (a)',
    'create table pc_lh0 partition of pc_lh for values with (modulus 2, remainder 0)',
    'create table pc_lx (a int) partition by list (a)',
    'create table pc_lxd partition of pc_lx default',
    "select c.relname, pg_get_partition_constraintdef(c.oid) from pg_class c where c.relkind = 'r' and c.relispartition and c.relname like 'pc#_%' escape '#' and c.relname not like 'pc#_lh%' escape '#' order by 1",
    "select pg_get_partition_constraintdef('pc_r'::regclass), pg_get_partition_constraintdef('pc_lh0'::regclass) like 'satisfies_hash_partition(%, 2, 0, a)'",
    "drop table pc_r, pc_l, pc_lb, pc_ln, pc_ld2, pc_ldi, pc_lh, pc_lx",
]


#: pg_partition_root and pg_partition_tree (partition_info.sql's tables, a primary key's
#: partitioned index among the members).
TREE = [
    "create table pi (a int, b int) partition by range (a)",
    "create table pi0 partition of pi for values from (minvalue) to (0) partition by list (b)",
    "create table pi01 partition of pi0 for values in (1)",
    "create table pi1 partition of pi for values from (0) to (100) partition by list (b)",
    "create table pi11 partition of pi1 for values in (1)",
    "create table pi2 partition of pi for values from (100) to (200)",
    "create table pi3 partition of pi for values from (200) to (maxvalue) partition by list (b)",
    "create table pi_plain (a int)",
    "select pg_partition_root('pi'), pg_partition_root('pi0'), pg_partition_root('pi01'), pg_partition_root('pi3')",
    "select pg_partition_root('pi_plain'), pg_partition_root(0), pg_partition_root(null)",
    "select pg_partition_root('nope')",
    "select relid, parentrelid, level, isleaf from pg_partition_tree('pi')",
    "select relid, parentrelid, level, isleaf from pg_partition_tree('pi0')",
    "select relid, parentrelid, level, isleaf from pg_partition_tree('pi01')",
    "select * from pg_partition_tree('pi3') with ordinality",
    "select * from pg_partition_tree('pi_plain')",
    "select * from pg_partition_tree(0)",
    "select * from pg_partition_tree(null)",
    "select relid, level from pg_partition_tree(pg_partition_root('pi11')) order by 1",
    "select count(*) from pg_partition_tree('pi') where isleaf",
    "create table pk (a int primary key) partition by range (a)",
    "create table pk1 partition of pk for values from (0) to (10)",
    "select relid, parentrelid, level, isleaf from pg_partition_tree('pk_pkey')",
    "select pg_partition_root('pk1_pkey')",
    "drop table pi, pi_plain, pk",
]


@pytest.mark.parametrize(
    "statements",
    [STATEMENTS, ATTACH, COLUMNS, CONSTRAINTS, TREE],
    ids=["tables", "attach-detach", "columns-through-the-tree", "partition-constraints", "partition-tree"],
)
def test_answers_as_postgres(proxy: ProxyServer, pg15: PgCluster, statements: list[str]) -> None:
    """Each list statement by statement on the proxy and on a PostgreSQL 15 database."""
    db = pg15.new_database("parts")
    same_answers(proxy.dsn(), pg15.dsn(dbname=db), statements).close()


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE pt_x (a int) PARTITION BY RANGE ((a + a))",
        "CREATE TABLE pt_x (a int) PARTITION BY RANGE (length(a::text))",
        "CREATE TABLE pt_x (a numeric) PARTITION BY HASH (a)",
        "CREATE TABLE pt_x (a int) INHERITS (pt_base)",
        "CREATE TABLE pt_x (a numeric) PARTITION BY LIST (a)",
        "CREATE INDEX ON pt_base (a)",
        "ALTER TABLE pt_base ADD COLUMN z serial",
        "ALTER TABLE pt_base ALTER COLUMN b TYPE bigint",
        "ALTER TABLE pt_base ATTACH PARTITION pt_other FOR VALUES FROM (1) TO (2)",  # (its columns in another order)
        "ALTER TABLE pt_base DETACH PARTITION pt_other CONCURRENTLY",
        "CREATE TABLE pt_x PARTITION OF pt_base (a NOT NULL) FOR VALUES FROM (1) TO (2)",
        "UPDATE pt_base SET b = 1 RETURNING tableoid",
        "INSERT INTO pt_low VALUES ('É')",
    ],
)
def test_what_partitioning_refuses_names_it(proxy: ProxyServer, sql: str) -> None:
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE IF NOT EXISTS pt_base (a int, b int) PARTITION BY RANGE (a)")
        c.execute("CREATE TABLE IF NOT EXISTS pt_other (b int, a int)")
        c.execute("CREATE TABLE IF NOT EXISTS pt_low (a text) PARTITION BY LIST (lower(a))")
        c.execute("CREATE TABLE IF NOT EXISTS pt_low1 PARTITION OF pt_low DEFAULT")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="not supported by walsender-proxy"):
            c.execute(sql)


def _stream(dsn: str, name: str, publication: str) -> list[tuple[object, ...]]:
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(
            f"CREATE TABLE {name} (id int, v text, PRIMARY KEY (id)) PARTITION BY RANGE (id);"
            f"CREATE TABLE {name}1 PARTITION OF {name} FOR VALUES FROM (0) TO (10);"
            f"CREATE TABLE {name}2 PARTITION OF {name} FOR VALUES FROM (10) TO (20) PARTITION BY LIST (id);"
            f"CREATE TABLE {name}2a PARTITION OF {name}2 FOR VALUES IN (11, 12);"
            f"CREATE TABLE {name}2d PARTITION OF {name}2 DEFAULT;"
            f"CREATE TABLE {name}d PARTITION OF {name} DEFAULT;"
            f"CREATE PUBLICATION p{name} {publication.format(name=name)}"
        )

    def write(c: psycopg.Connection) -> None:
        c.execute(f"INSERT INTO {name} VALUES (1, 'a'), (11, 'b'), (2, 'c'), (50, 'd'), (12, 'x')")
        c.execute(f"UPDATE {name} SET v = 'aa' WHERE id = 1")
        c.execute(f"UPDATE {name} SET id = 13 WHERE id = 2")  # (a DELETE and an INSERT)
        c.execute(f"UPDATE {name}2 SET v = 'c' WHERE id = 12")
        c.execute(f"DELETE FROM {name} WHERE id = 50")
        c.execute(f"TRUNCATE {name}1")
        c.execute(f"TRUNCATE {name}")

    return stream_shape(recorded_stream(dsn, name, f"p{name}", write))


@pytest.mark.parametrize(
    "publication",
    [
        "FOR TABLE {name}",
        "FOR TABLE {name} WITH (publish_via_partition_root = true)",
        "FOR TABLE {name}2 WITH (publish_via_partition_root = true)",
        "FOR TABLE {name}2, {name}1",
        "FOR TABLE {name}, {name}2 WITH (publish_via_partition_root = true)",
        "FOR ALL TABLES WITH (publish_via_partition_root = true)",
        "FOR TABLE {name} WHERE (id > 5) WITH (publish_via_partition_root = true)",
    ],
    ids=["root", "via-root", "sub-root", "leaves", "both", "all-tables", "filtered"],
)
def test_pgoutput_of_a_partitioned_table_as_postgres(proxy: ProxyServer, pg15: PgCluster, publication: str) -> None:
    name = f"pts{abs(hash(publication)) % 10000}"
    theirs = _stream(pg15.dsn(dbname=pg15.new_database("pts")), name, publication)
    assert _stream(proxy.dsn(), name, publication) == theirs


def test_a_subscriber_syncs_and_streams_partitions(proxy: ProxyServer, pg15: PgCluster) -> None:
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(
            "CREATE TABLE psub (id int PRIMARY KEY, v text) PARTITION BY LIST (id);"
            "CREATE TABLE psub1 PARTITION OF psub FOR VALUES IN (1, 2, 3);"
            "CREATE TABLE psubd PARTITION OF psub DEFAULT;"
            "INSERT INTO psub VALUES (1, 'copied'), (7, 'copied');"
            "CREATE PUBLICATION ppsub FOR TABLE psub"
        )
    ddl = "CREATE TABLE psub1 (id int PRIMARY KEY, v text); CREATE TABLE psubd (id int PRIMARY KEY, v text)"
    subs = text_and_binary_subscribers(proxy, pg15, ddl, "ppsub", "spsub")
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("INSERT INTO psub VALUES (2, 'streamed'), (8, 'streamed')")
        c.execute("UPDATE psub SET id = 3 WHERE id = 7")
    for i, sub in enumerate(subs):
        wait_identical(proxy.dsn(), sub, ["psub1", "psubd"])
        with psycopg.connect(sub, autocommit=True) as c:
            assert c.execute("SELECT id, v FROM psub1 ORDER BY id").fetchall() == [(1, "copied"), (2, "streamed"), (3, "copied")]
            c.execute(f"DROP SUBSCRIPTION spsub{i}")


def test_a_subscriber_gets_partitions_as_their_root(proxy: ProxyServer, pg15: PgCluster) -> None:
    """``publish_via_partition_root``: one table on the subscriber, copied through the
    root and fed every partition's changes."""
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(
            "CREATE TABLE proot (id int PRIMARY KEY, v text) PARTITION BY RANGE (id);"
            "CREATE TABLE proot1 PARTITION OF proot FOR VALUES FROM (0) TO (10);"
            "CREATE TABLE proot2 PARTITION OF proot FOR VALUES FROM (10) TO (100);"
            "INSERT INTO proot VALUES (1, 'copied'), (20, 'copied');"
            "CREATE PUBLICATION pproot FOR TABLE proot WITH (publish_via_partition_root = true)"
        )
        assert c.execute("SELECT tablename FROM pg_publication_tables WHERE pubname = 'pproot'").fetchall() == [("proot",)]
    subs = text_and_binary_subscribers(proxy, pg15, "CREATE TABLE proot (id int PRIMARY KEY, v text)", "pproot", "sproot")
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("INSERT INTO proot VALUES (2, 'streamed'), (30, 'streamed')")
        c.execute("UPDATE proot SET id = 40 WHERE id = 1")
        c.execute("DELETE FROM proot WHERE id = 20")
    for i, sub in enumerate(subs):
        wait_identical(proxy.dsn(), sub, ["proot"])
        with psycopg.connect(sub, autocommit=True) as c:
            assert c.execute("SELECT id, v FROM proot ORDER BY id").fetchall() == [(2, "streamed"), (30, "streamed"), (40, "copied")]
            c.execute(f"DROP SUBSCRIPTION sproot{i}")
