"""Foreign keys as PostgreSQL 15 enforces them: REFERENCES and FOREIGN KEY in CREATE
TABLE and ALTER TABLE, NOT VALID and VALIDATE, MATCH SIMPLE and FULL, every referential
action the proxy takes (NO ACTION, RESTRICT, CASCADE, SET NULL with and without a column
list), self-references, TRUNCATE and DROP with their dependents — each statement compared
with a real PostgreSQL 15 (rows, errors with their detail, notices) — and what the lake
does where PostgreSQL would wait for another transaction."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from tests.integration.test_catalog_history import end_lsn, read_slot
from tests.integration.test_subscriber import new_sub_db
from tests.pgcluster import PgCluster
from tests.pgcompare import Client, recvlogical, same_answers
from tests.proxy import ProxyServer

ACTIONS = [
    "create table p (id int primary key, u int unique, x text)",
    "create table c (id int primary key, pid int references p, pu int references p(u) on delete cascade on update cascade, n int references p(id) on delete set null)",
    "insert into p values (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c')",
    "insert into c values (1, 1, 10, 1)",
    "insert into c values (2, 5, 10, 1)",
    "insert into c values (3, null, 10, 2)",
    "insert into c values (4, 2, 99, null)",
    "delete from p where id = 1",
    "update p set id = 11 where id = 1",
    "update p set x = 'z' where id = 1",
    "update p set u = 11 where id = 1",
    "select * from c order by id",
    "delete from p where id = 2",
    "select * from c order by id",
    "delete from c where id = 3",
    "delete from p where id = 2",
    "update c set pid = 3 where id = 1",
    "update c set pid = 7 where id = 1",
    "update c set pid = pid where id = 1",
    "select * from c order by id",
    "truncate p",
    "truncate p, c",
    "insert into p values (1, 10, 'a')",
    "insert into c values (1, 1, 10, 1)",
    "truncate p cascade",
    "select count(*) from c",
    "alter table c drop column n",
    "alter table p drop column u",
    "drop table p",
    "drop table p, c",
    # a referenced key compares bytewise for its actions: 0 after -0 cascades, NaN is itself
    "create table pkf (a float8, b float8, primary key (a, b))",
    "create table fkf (x float8, y float8, foreign key (x, y) references pkf (a, b) on update cascade)",
    "insert into pkf values ('-0', '-0'), ('NaN', 1)",
    "insert into fkf values ('-0', '-0'), ('NaN', 1)",
    "update pkf set a = '0' where a = '-0'",
    "update pkf set a = a where b = 1",
    "select x::text, y::text from fkf order by 1",
    "create table pkf4 (a float4 primary key)",
    "create table fkf4 (x float4 references pkf4 on update restrict)",
    "insert into pkf4 values ('-0'), ('NaN')",
    "insert into fkf4 values ('-0'), ('NaN')",
    "update pkf4 set a = '0' where a = '-0'",
    "update pkf4 set a = 'NaN' where a = 'NaN'",
]

CHAINS = [
    "create table a3 (id int primary key, v text)",
    "create table b3 (id int primary key, aid int references a3 on update cascade on delete cascade)",
    "create table cc3 (id int primary key, bid int references b3 on delete set null)",
    "insert into a3 values (1, 'x'), (2, 'y')",
    "insert into b3 values (10, 1), (20, 2), (30, 1)",
    "insert into cc3 values (100, 10), (200, 20), (300, 30)",
    "delete from a3 where id = 1",
    "select * from b3 order by id",
    "select * from cc3 order by id",
    "update a3 set id = 5 where id = 2",
    "select * from b3 order by id",
    "begin",
    "insert into a3 values (7, 'z')",
    "insert into b3 values (70, 7)",
    "savepoint s",
    "delete from a3 where id = 7",
    "rollback to s",
    "select * from b3 order by id",
    "update b3 set aid = 99 where id = 70",
    "rollback",
    "select * from b3 order by id",
    "insert into b3 select g, 5 from generate_series(1000, 1200) g",
    "update a3 set id = 6",
    "select aid, count(*) from b3 group by 1 order by 1",
    "delete from a3",
    "select count(*) from b3",
    "select * from cc3 order by id",
    "create table s3 (id int primary key, up int)",
    "alter table s3 add constraint s3f foreign key (up) references s3 (id) on delete cascade",
    "insert into s3 values (1, null), (2, 1), (3, 2), (4, 3), (5, 4)",
    "delete from s3 where id = 2",
    "select * from s3 order by id",
    "insert into s3 values (10, 11), (11, 10)",
    "insert into s3 values (12, 13)",
    "update s3 set up = id where id = 1",
    "update s3 set id = 20 where id = 1",
    "select * from s3 order by id",
    "delete from s3",
]

MATCHES_AND_LISTS = [
    "create table p2 (a int, b text, primary key (a, b))",
    "create table m (x int, y text, foreign key (x, y) references p2 match full on delete set null)",
    "insert into p2 values (1, 'one'), (2, 'two')",
    "insert into m values (1, 'one'), (null, null)",
    "insert into m values (1, null)",
    "insert into m values (3, 'three')",
    "create table c2 (x int, y text, z int, constraint fk_xy foreign key (x, y) references p2 (a, b) on delete set null (y))",
    "insert into c2 values (1, 'one', 1), (2, 'two', 2), (2, null, 3), (9, null, 4)",
    "delete from p2 where a = 1",
    "select * from m order by 1, 2",
    "select * from c2 order by z",
    "update c2 set y = 'two' where z = 3",
    "update c2 set y = 'nine' where z = 4",
    "create table c4 (x int not null, y text references p2 (b))",
    "create table c5 (x int not null, y int, foreign key (x, y) references p2 on delete set null)",
    "create table c6 (x int8 references p2 (a, b))",
    "create table c7 (x int8, y text, foreign key (x, y) references p2)",
    "insert into c7 values (2, 'two')",
    "insert into c7 values (2147483649, 'two')",
]

VALIDATION = [
    "create table r1 (id int primary key)",
    "create table r2 (rid int references r1 on delete restrict, k int)",
    "insert into r1 values (1), (2), (3)",
    "insert into r2 values (1, 1), (2, 2)",
    "update r1 set id = 10 where id = 3",
    "delete from r1 where id = 1",
    "begin",
    "alter table r2 drop constraint r2_rid_fkey",
    "alter table r2 add constraint r2_rid_fkey foreign key (rid) references r1 not valid",
    "insert into r2 values (99, 5)",
    "rollback",
    "alter table r2 add foreign key (k) references r1",
    "insert into r1 values (11)",
    "alter table r2 add constraint kk foreign key (k) references r1 not valid",
    "insert into r2 values (1, 77)",
    "insert into r2 values (null, null)",
    "alter table r2 validate constraint kk",
    "update r2 set k = 1 where k = 2",
    "alter table r2 validate constraint kk",
    "alter table r2 validate constraint r2_rid_fkey",
    "alter table r2 validate constraint nope",
    "alter table r2 drop constraint kk",
    "alter table r2 drop constraint if exists kk",
    "alter table r2 drop constraint kk",
    "alter table r2 add column z int references r1",
    "insert into r2 values (1, 1, 2)",
    "insert into r2 values (1, 1, 4)",
    "alter table r2 rename column z to z2",
    "insert into r2 values (1, 1, 5)",
    "alter table r1 rename column id to ident",
    "insert into r2 values (1, 1, 6)",
    "alter table r1 rename to r1b",
    "insert into r2 values (1, 1, 7)",
    "delete from r1b where ident = 2",
    "create table r3 (a int primary key, b int unique)",
    "create table r4 (x int references r3 (b))",
    "drop index r3_b_key",
    "alter table r3 drop constraint r3_b_key",
    "alter table r3 drop constraint r3_b_key cascade",
    "insert into r4 values (42)",
    "create unique index r3_b_ix on r3 (b)",
    "alter table r4 add foreign key (x) references r3 (b)",
    "drop index r3_b_ix",
    "drop index r3_b_ix cascade",
    "drop table r1b",
    "drop table r1b cascade",
    "insert into r2 values (5, 5, 5)",
    "create schema s9",
    "create table s9.p (id int primary key)",
    "create table out9 (a int references s9.p)",
    "create table s9.c (a int references s9.p)",
    "drop schema s9",
    "drop schema s9 cascade",
    "insert into out9 values (5)",
]

DDL_ERRORS = [
    "create table e1 (id int primary key, u int unique, t text unique, v varchar(5) unique, f float8 unique, bi int8 unique, d date unique)",
    "create table e2 (a int references nope)",
    "create view ev as select 1 as one",
    "create table e2 (a int references ev)",
    "create table e2 (a int references e1 (nope))",
    "create table e2 (nope2 int, foreign key (nope) references e1)",
    "create table e2 (a int, b int, foreign key (a, b) references e1)",
    "create table e2 (a text references e1 (u))",
    "create table e2 (a numeric references e1 (u))",
    "create table e2 (a date references e1 (u))",
    "create table e2 (a int references e1 (u, u))",
    "create table e2 (a int references e1 (id, u))",
    "create table e2 (a int, b int, foreign key (a) references e1 on delete set null (b))",
    "create table e2 (a int references e1 on delete set null (nope))",
    "create table e2 (a int, constraint dup foreign key (a) references e1, constraint dup foreign key (a) references e1)",
    "create table e3 (a int8 references e1, b int2 references e1 (u), c float4 references e1 (f), d text references e1 (v), e varchar references e1 (t), g int references e1 (bi), h int references e1 (f))",
    "insert into e1 values (1, 1, 'x', 'x', 1.5, 1, '2020-01-01')",
    "insert into e3 values (1, 1, 1.5, 'x', 'x', 1, 1)",
    "insert into e3 values (1, 1, 1.5, 'x', 'x', 1, 2)",
    "insert into e3 values (1, 1, 2.5, 'x', 'x', 1, null)",
    "insert into e3 values (1, 1, 1.5, 'y', 'x', 1, null)",
    "create table e4 (a int references e1 match partial)",
    "create table e4 (a int references e1 on update set null (a))",
    "create temp table e5 (a int references e1)",
    "create table e6 (a int, b int, foreign key (b, a) references e1 (u, id))",
]


@pytest.mark.parametrize(
    "statements",
    [ACTIONS, CHAINS, MATCHES_AND_LISTS, VALIDATION, DDL_ERRORS],
    ids=["actions", "chains", "matches-and-lists", "validation", "ddl-errors"],
)
def test_foreign_keys_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster, statements: list[str]) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("fk")), statements).close()


REFUSED = [
    ("create table rf2 (a int primary key deferrable)", "DEFERRABLE"),
    ("create table rf2 (a int unique deferrable initially deferred)", "DEFERRABLE"),
    ("create table rf2 (a int references rf on delete set default)", "SET DEFAULT"),
    ("create table rf2 (a int references rf on update set default)", "SET DEFAULT"),
    ("create table rf2 (a char(2) references rf (c))", "character"),
    ("create table rf2 (a timestamptz references rf (d))", "timestamp with time zone"),
    ("create table rf2 (a numeric(5,1) references rf (f))", "numeric"),
]


def test_what_the_lake_cannot_do_exactly_is_refused(proxy: ProxyServer, pg15: PgCluster) -> None:
    """PostgreSQL makes each of these keys; the proxy refuses them (0A000) rather than
    differ: deferred key checks (deferred foreign keys are taken), SET DEFAULT (a default is an SQL expression the lake does
    not evaluate), and type pairs DuckDB would compare otherwise (char padding, dates
    across time zones)."""
    setup = "CREATE TABLE rf (id int PRIMARY KEY, c char(3) UNIQUE, d timestamp UNIQUE, f float8 UNIQUE); CREATE TABLE rfc (a int)"
    with (
        psycopg.connect(pg15.dsn(dbname=pg15.new_database("rf")), autocommit=True) as ref,
        psycopg.connect(proxy.dsn(), autocommit=True) as got,
    ):
        ref.execute(setup)
        got.execute(setup)
        for sql, words in REFUSED:
            ref.execute(sql)
            ref.execute("DROP TABLE IF EXISTS rf2")
            with pytest.raises(psycopg.errors.FeatureNotSupported, match=words):
                got.execute(sql)


def test_foreign_keys_survive_a_restart_and_still_bind(tmp_path: Path) -> None:
    with ProxyServer(tmp_path / "d") as p, Client(p.dsn()) as c:
        c("CREATE TABLE fp (id int PRIMARY KEY)")
        c("CREATE TABLE fc (id int PRIMARY KEY, p int REFERENCES fp ON DELETE CASCADE)")
        c("INSERT INTO fp VALUES (1), (2)")
        c("INSERT INTO fc VALUES (1, 1), (2, 2)")
    with ProxyServer(tmp_path / "d") as p, Client(p.dsn()) as c:
        assert c("INSERT INTO fc VALUES (3, 3)")[:2] == ("error", "23503")
        c("DELETE FROM fp WHERE id = 1")
        assert c("SELECT * FROM fc")[2] == [(2, 2)]


def _error(c: Client, sql: str) -> str | None:
    got = c(sql)
    return got[1] if got[0] == "error" else None


def test_where_postgresql_would_wait_the_lake_answers_40001(proxy: ProxyServer) -> None:
    """PostgreSQL's referencing INSERT waits on the row lock of a referenced row another
    transaction is deleting, and a DELETE of a referenced key waits on the FOR KEY SHARE
    lock a referencing INSERT took; the lake does not wait (as with its other write
    conflicts): the second writer gets 40001. An update of other columns of the
    referenced row does not conflict (FOR KEY SHARE), and a REPEATABLE READ transaction
    whose referenced row was deleted by a commit since its snapshot gets 40001."""
    with Client(proxy.dsn()) as a, Client(proxy.dsn()) as b:
        a("CREATE TABLE wp (id int PRIMARY KEY, v text)")
        a("CREATE TABLE wc (id int PRIMARY KEY, p int REFERENCES wp)")
        a("INSERT INTO wp VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
        # a deletes a referenced row; b's INSERT referencing it
        a("BEGIN")
        a("DELETE FROM wp WHERE id = 1")
        assert _error(b, "INSERT INTO wc VALUES (1, 1)") == "40001"
        a("ROLLBACK")
        assert _error(b, "INSERT INTO wc VALUES (1, 1)") is None
        # b's open INSERT references 2; a's DELETE of 2
        b("BEGIN")
        b("INSERT INTO wc VALUES (2, 2)")
        assert _error(a, "DELETE FROM wp WHERE id = 2") == "40001"
        b("COMMIT")
        assert _error(a, "DELETE FROM wp WHERE id = 2") == "23503"
        # an update of another column: no conflict
        a("BEGIN")
        a("UPDATE wp SET v = 'x' WHERE id = 3")
        assert _error(b, "INSERT INTO wc VALUES (3, 3)") is None
        a("COMMIT")
        # a key update is a conflict
        a("BEGIN")
        a("UPDATE wp SET id = 40 WHERE id = 4")
        assert _error(b, "INSERT INTO wc VALUES (4, 4)") == "40001"
        a("ROLLBACK")
        # REPEATABLE READ: deleted since the snapshot
        a("INSERT INTO wp VALUES (5, 'e')")
        b("BEGIN ISOLATION LEVEL REPEATABLE READ")
        b("SELECT count(*) FROM wp")
        a("DELETE FROM wp WHERE id = 5")
        assert _error(b, "INSERT INTO wc VALUES (5, 5)") == "40001"
        b("ROLLBACK")
        # ADD FOREIGN KEY while another transaction writes the table
        a("CREATE TABLE wd (p int)")
        b("BEGIN")
        b("INSERT INTO wd VALUES (99)")
        assert _error(a, "ALTER TABLE wd ADD FOREIGN KEY (p) REFERENCES wp") == "40001"
        b("ROLLBACK")
        assert _error(a, "ALTER TABLE wd ADD FOREIGN KEY (p) REFERENCES wp") is None


STREAM_SETUP = [
    "CREATE TABLE sp (id int PRIMARY KEY, v text)",
    "CREATE TABLE sc (id int PRIMARY KEY, p int REFERENCES sp ON DELETE CASCADE ON UPDATE CASCADE)",
    "CREATE TABLE sn (id int PRIMARY KEY, c int REFERENCES sc ON DELETE SET NULL)",
    "CREATE PUBLICATION p FOR TABLE sp, sc, sn",
]

STREAM = [
    "INSERT INTO sp VALUES (1, 'a'), (2, 'b')",
    "INSERT INTO sc VALUES (10, 1), (20, 2), (30, 1)",
    "INSERT INTO sn VALUES (100, 10), (200, 30)",
    "UPDATE sp SET id = 3 WHERE id = 2",
    "DELETE FROM sp WHERE id = 1",
    "INSERT INTO sp VALUES (5, 'e'), (6, 'f')",
    "INSERT INTO sc VALUES (60, 6), (50, 5), (40, 5), (45, 6)",
    "DELETE FROM sp WHERE id IN (6, 5)",
    "TRUNCATE sp CASCADE",
]


def test_cascaded_changes_stream_as_from_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    """pg_recvlogical over pgoutput: a cascaded DELETE/UPDATE/SET NULL comes after the
    statement's own change in the same transaction, and TRUNCATE … CASCADE names every
    table it truncated, as PostgreSQL 15 sends them."""
    streams = []
    for dsn in (new_sub_db(pg15), proxy.dsn()):
        with psycopg.connect(dsn, autocommit=True) as c:
            for sql in STREAM_SETUP:
                c.execute(sql)
        recvlogical(dsn, "fk", "--create-slot", "-P", "pgoutput")
        with Client(dsn) as c:
            outcomes = [c(sql) for sql in STREAM]
        streams.append((outcomes, read_slot(dsn, "fk", end_lsn(dsn))))
    assert streams[1] == streams[0]
