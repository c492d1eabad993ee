"""``ALTER TABLE … ADD [CONSTRAINT name] PRIMARY KEY (…)`` and ``DROP CONSTRAINT <pkey>``
beside PostgreSQL 15, as pg_dump's restore scripts and migrations write them: over rows
already there (duplicates are 23505 ``could not create unique index``, NULLs 23502 once the
key's columns are NOT NULL), the key enforced afterwards, its catalog rows, foreign keys
made against it (2BP01 on DROP, CASCADE dropping them), and what a logical decoding slot
sees of a table before and after it has a key (test_decoding's old-key lines)."""

from __future__ import annotations

import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import same_answers
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

STATEMENTS = [
    "create table pkd (id int not null, v text)",
    "insert into pkd values (1, 'a'), (2, 'b')",
    "alter table only pkd add constraint pkd_pkey primary key (id)",
    "select conname, contype, pg_get_constraintdef(oid) from pg_constraint where conrelid = 'pkd'::regclass",
    "select indexrelid::regclass::text, indisprimary, indisunique from pg_index where indrelid = 'pkd'::regclass",
    "insert into pkd values (1, 'c')",
    "alter table pkd add primary key (v)",
    "alter table pkd drop constraint pkd_pkey",
    "insert into pkd values (1, 'c')",
    "alter table pkd add primary key (id)",
    "delete from pkd where v = 'c'",
    "alter table pkd add constraint pkd_named primary key (id)",
    "select indexrelid::regclass::text from pg_index where indrelid = 'pkd'::regclass",
    "drop index pkd_named",
    # a NULL, then duplicates: the index build comes first
    "create table pkn (id int, v text)",
    "insert into pkn values (null, 'n')",
    "alter table pkn add primary key (id)",
    "insert into pkn values (1, 'a'), (1, 'b')",
    "alter table pkn add primary key (id)",
    "select attname, attnotnull from pg_attribute where attrelid = 'pkn'::regclass and attnum > 0",
    # errors in PostgreSQL's order
    "alter table pkn add primary key (nosuch)",
    "alter table pkn add constraint pkn primary key (v)",
    "alter table pkn add primary key (v, v)",
    # foreign keys made against the key
    "create table pkr (id int primary key, v text)",
    "create table pkf (r int references pkr)",
    "alter table pkr drop constraint pkr_pkey",
    "alter table pkr drop constraint pkr_pkey cascade",
    "select conname from pg_constraint where conrelid = 'pkf'::regclass",
    "select attname, attnotnull from pg_attribute where attrelid = 'pkr'::regclass and attnum > 0",
    "alter table pkr add primary key (id)",
    "alter table pkf add foreign key (r) references pkr",
    "insert into pkf values (7)",
]


def test_primary_key_ddl_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("pkd")), STATEMENTS).close()


DECODED = [
    "set synchronous_commit = on",  # (the slot functions read up to what is flushed)
    "create table pkl (id int not null, v text)",
    "select 'init' from pg_create_logical_replication_slot('pkl_slot', 'test_decoding')",
    "insert into pkl values (1, 'a')",
    "update pkl set v = 'b'",
    "alter table pkl add primary key (id)",
    "update pkl set id = 2, v = 'c'",
    "delete from pkl",
    "insert into pkl values (3, 'd')",
    "alter table pkl drop constraint pkl_pkey",
    "update pkl set v = 'e'",
    "select data from pg_logical_slot_get_changes('pkl_slot', null, null, 'include-xids', '0')",
    "select pg_drop_replication_slot('pkl_slot')",
]


def test_decoding_sees_the_key_come_and_go(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("pkl")), DECODED).close()
