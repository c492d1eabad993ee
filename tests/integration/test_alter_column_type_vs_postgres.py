"""ALTER TABLE … ALTER COLUMN … TYPE [USING …] beside a real PostgreSQL 15, run through psql:
the values each conversion leaves (assignment casts, USING expressions read from the rows
as they were, several columns in one statement), PostgreSQL's errors (no assignment cast,
with its HINT; a USING result of the wrong type; a value too long or out of range; NULL in
a NOT NULL column; the same column twice; a column a generated column reads), the
catalog (``\\d``, pg_attribute), varchar lengthened under a unique index with Django's
``varchar_pattern_ops``, and what the proxy refuses instead of differing."""

from __future__ import annotations

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import psql_outputs
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

SCRIPT = r"""
create table at1 (id int primary key, name varchar(50) unique, n int, t text, d date, b bool not null default true, f float8);
insert into at1 values (1, 'alpha', 10, '42', '2020-01-02', true, 1.5), (2, 'beta', NULL, 'x', NULL, false, -0.5),
  (3, 'a much longer name here', 3, '7', '2021-12-31', true, 2.5);
create index at1_name_like on at1 (name varchar_pattern_ops);
alter table at1 alter column name type varchar(255);
alter table at1 alter column name type varchar(10);
alter table at1 alter column name type text;
alter table at1 alter column name set data type varchar(30);
\d at1
alter table at1 alter column n type bigint;
alter table at1 alter column n type text;
alter table at1 alter column t type int;
alter table at1 alter column t type int using t::int;
alter table at1 alter column t type int using nullif(t, 'x')::int;
alter table at1 alter column t type smallint using t * 1000;
alter table at1 alter column d type timestamp;
alter table at1 alter column d type int;
alter table at1 alter column b type int;
alter table at1 alter column b type int using b::int;
alter table at1 alter column f type int;
alter table at1 alter column f type numeric(4,1);
alter table at1 alter column n type numeric(10,2) using n::numeric / 3, alter column t type text using t || '!';
alter table at1 alter column n type int, alter column n type bigint;
alter table at1 alter column nope type int;
alter table at1 alter column xmin type int;
alter table at1 alter column n type nosuchtype;
alter table at1 alter column n type int using 'x';
alter table at1 alter column n type int using 1.5;
select * from at1 order by id;
\d at1
select attname, atttypid::regtype, atttypmod, attnotnull, atthasmissing from pg_attribute
  where attrelid = 'at1'::regclass and attnum > 0 order by attnum;
insert into at1 (id, name, n, t, d, f) values (4, 'x', 1.555, 5, '2020-01-01', 7.25);
update at1 set n = n + 1 where id = 1;
select * from at1 order by id;
create table at2 (a int, g int generated always as (a * 2) stored);
alter table at2 alter column a type bigint;
create table at3 (a int not null, b int);
insert into at3 values (1, 2);
alter table at3 alter column a type int using null;
alter table at3 alter column a type text using a || '', alter column b type text using a::text;
select * from at3;
create table at4 (a int);
insert into at4 values (2);
alter table at4 alter column a type interval using a * interval '1 day';
insert into at4 values ('1 day');
select * from at4;
"""


def test_alter_column_type_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    ours, ref = psql_outputs(str(pg15.bindir / "psql"), SCRIPT, proxy.dsn(), pg15.dsn(dbname=pg15.new_database("altty")))
    assert ours == ref
    assert ref[1].count("ERROR") == 14


#: PostgreSQL runs each of these (after the setup); the proxy refuses them, naming why.
REFUSED = [
    ("alter table ar alter column id type bigint", "a key column"),
    ("alter table ar alter column u type bigint", "a key column"),
    ("alter table ar alter column c type bigint", "which a CHECK constraint reads"),
    ("alter table ar alter column dflt type bigint", "which has a DEFAULT"),
    ("alter table ar alter column s type text", "which a CHECK constraint reads"),
    ("alter table ar alter column m type bigint, add column z int", "beside other actions"),
    ("alter table ar alter column m type text collate \"C\"", "COLLATE"),
    ("alter table ar alter column g type bigint", "a generated column"),
    ("create index on ar ((m + 1)); alter table ar alter column m type bigint", "an index expression or predicate"),
]


def test_what_a_rewrite_cannot_carry_is_refused(proxy: ProxyServer, pg15: PgCluster) -> None:
    setup = (
        "create table ar (id int primary key, u int unique, c int check (c > 0), dflt int default 5, n int,"
        " g int generated always as (n + 1) stored, m int, s varchar(5) check (s <> ''))"
    )
    for dsn, refused in ((pg15.dsn(dbname=pg15.new_database("altref")), False), (proxy.dsn(), True)):
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(setup)
            c.execute("insert into ar (id, u, c, n) values (1, 1, 1, 1)")
            for sql, why in REFUSED:
                c.execute("begin")
                if refused:
                    with pytest.raises(psycopg.errors.FeatureNotSupported, match=why):
                        c.execute(sql)
                else:
                    c.execute(sql)
                c.execute("rollback")
