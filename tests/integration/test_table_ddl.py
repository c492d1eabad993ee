"""Table DDL as PostgreSQL 15 answers it: renames, schema moves and the NOTICEs of the
IF [NOT] EXISTS forms, each statement compared with a real PostgreSQL 15 (errors and
notices included)."""

from __future__ import annotations

from tests.pgcluster import PgCluster
from tests.pgcompare import same_answers
from tests.proxy import ProxyServer

RENAMES = [
    "CREATE TABLE r1 (id int PRIMARY KEY, v text)",
    "INSERT INTO r1 VALUES (1, 'a')",
    "ALTER TABLE r1 RENAME TO r2",
    "SELECT * FROM r2",
    "SELECT * FROM r1",
    "CREATE TABLE r3 (x int)",
    "ALTER TABLE r2 RENAME TO r3",
    "ALTER TABLE nope RENAME TO r9",
    "CREATE SCHEMA s2",
    "ALTER TABLE r2 SET SCHEMA s2",
    "SELECT * FROM s2.r2",
    "SELECT relname, relnamespace::regnamespace FROM pg_class WHERE relname IN ('r1', 'r2', 'r3') ORDER BY 1",
    "ALTER TABLE r3 SET SCHEMA nope",
    "CREATE TABLE r2 (z int)",
    "ALTER TABLE r2 SET SCHEMA s2",
    "CREATE TEMP TABLE tt (a int) ON COMMIT DELETE ROWS",
    "ALTER TABLE tt SET SCHEMA s2",
    "ALTER TABLE tt RENAME TO tt2",
    "BEGIN",
    "INSERT INTO tt2 VALUES (1)",
    "SELECT count(*) FROM tt2",
    "COMMIT",
    "SELECT count(*) FROM tt2",
    "ALTER TABLE s2.r2 RENAME COLUMN v TO w",
    "SELECT * FROM s2.r2",
    # array types' names: makeArrayTypeName adds underscores while a type has the name,
    # and a type (or a table renamed) taking an array type's name moves it out of the way
    "CREATE TABLE attmp_array (id int)",
    "CREATE TABLE attmp_array2 (id int)",
    "ALTER TABLE attmp_array2 RENAME TO _attmp_array",
    "SELECT typname FROM pg_type WHERE oid = 'attmp_array[]'::regtype",
    "SELECT typname FROM pg_type WHERE oid = '_attmp_array[]'::regtype",
    "CREATE TABLE _an_foo (id int)",
    "CREATE TABLE an_foo (id int)",
    "CREATE TYPE an_bar AS ENUM ('b')",
    "CREATE TYPE _an_bar AS ENUM ('a')",
    "CREATE DOMAIN _an_dd AS int",
    "CREATE DOMAIN an_dd AS int",
    "CREATE TYPE an_t3 AS (x int)",
    "CREATE TABLE _an_t3 (a int)",
    "SELECT typname, typtype, typelem::regtype FROM pg_type WHERE typname ~ '^_*(attmp_array|an_foo|an_bar|an_dd|an_t3)$' ORDER BY 1",
]

IF_EXISTS_NOTICES = [
    "DROP TABLE IF EXISTS nope",
    "CREATE TABLE IF NOT EXISTS x1 (a int)",
    "CREATE TABLE IF NOT EXISTS x1 (a int)",
    "DROP TABLE IF EXISTS nope, x1",
    "DROP TABLE IF EXISTS public.nope2",
    "CREATE SCHEMA IF NOT EXISTS public",
    "DROP SCHEMA IF EXISTS nos",
    "DROP PUBLICATION IF EXISTS nop",
    "CREATE TABLE x2 (a int)",
    "ALTER TABLE x2 ADD COLUMN IF NOT EXISTS a int",
    "ALTER TABLE x2 DROP COLUMN IF EXISTS zz",
    "ALTER TABLE IF EXISTS nope ADD COLUMN q int",
    "ALTER TABLE IF EXISTS nope SET SCHEMA public",
    "ALTER TABLE IF EXISTS nope RENAME TO nn",
    "ALTER TABLE IF EXISTS nope RENAME COLUMN a TO b",
]


def test_tables_rename_and_move_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("ddl")), RENAMES).close()


def test_if_exists_forms_say_what_they_skipped(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("ddl")), IF_EXISTS_NOTICES).close()


SYSTEM_COLUMN_NAMES = [
    "CREATE TABLE sc1 (a int, xmin int)",
    "CREATE TABLE sc2 (a int)",
    "ALTER TABLE sc2 ADD COLUMN ctid int",
    "ALTER TABLE sc2 RENAME COLUMN a TO cmin",
    "ALTER TABLE sc2 ADD COLUMN IF NOT EXISTS tableoid int",
    "SELECT attname FROM pg_attribute WHERE attrelid = 'sc2'::regclass AND attnum > 0",
]


def test_columns_cannot_take_system_column_names(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(
        proxy.dsn(), pg15.dsn(dbname=pg15.new_database("syscol")), SYSTEM_COLUMN_NAMES
    ).close()


#: Storage parameters: checked by PostgreSQL's rules, kept in pg_class.reloptions.
STORAGE_PARAMETERS = [
    "create table sp1 (a int) with (fillfactor = 70, autovacuum_enabled = off, autovacuum_vacuum_scale_factor = 0.5, vacuum_index_cleanup = auto, user_catalog_table)",
    "select reloptions from pg_class where relname = 'sp1'",
    "create table sp2 (a int) with (fillfactor = '70', autovacuum_enabled = 'OFF', parallel_workers = 1e1)",
    "select reloptions from pg_class where relname = 'sp2'",
    "create table sp3 (a int) with (fillfactor = 70.5)",
    "create table sp4 (a int) with (autovacuum_enabled = maybe)",
    "create table sp5 (a int) with (vacuum_index_cleanup = sometimes)",
    "create table sp6 (a int) with (autovacuum_vacuum_scale_factor = 200)",
    "create table sp7 (a int) with (fillfactor = 70, fillfactor = 80)",
    "create table sp8 (a int) with (foo.bar = 1)",
    "create table sp9 (a int) with (fillfactor)",
    "alter table sp1 set (fillfactor = 50, parallel_workers = 2)",
    "select reloptions from pg_class where relname = 'sp1'",
    "alter table sp1 reset (fillfactor, nonsense)",
    "select reloptions from pg_class where relname = 'sp1'",
    "alter table sp1 reset (autovacuum_enabled)",
    "select reloptions from pg_class where relname = 'sp1'",
    "alter table sp1 set (nonsense = 1)",
    "create table sp11 with (fillfactor = 60) as select 1 a",
    "select reloptions from pg_class where relname = 'sp11'",
    "create table sp12 (a int) with (oids = true)",
    "create table sp13 (a int) with (autovacuum_freeze_max_age = 5)",
    "SELECT relname, reloptions FROM pg_class WHERE relname ~ '^sp[0-9]+$' ORDER BY 1",
]


def test_storage_parameters_are_checked_and_kept(proxy: ProxyServer, pg15: PgCluster) -> None:
    got = same_answers(
        proxy.dsn(), pg15.dsn(dbname=pg15.new_database("relopt")), STORAGE_PARAMETERS
    )
    with got:
        # a TOAST table's parameters: the proxy has no TOAST tables
        assert got("CREATE TABLE rt (a int) WITH (toast.autovacuum_enabled = false)")[:2] == (
            "error",
            "0A000",
        )


#: The proxy makes no types: DROP TYPE / DROP DOMAIN meet PostgreSQL's own, a table's row
#: type or nothing; SET STORAGE is kept for pg_attribute (the lake stores values one way).
STORAGE_AND_TYPES = [
    "DROP TYPE IF EXISTS xyz",
    "DROP TYPE IF EXISTS xyz, abc",
    "DROP TYPE xyz",
    "DROP TYPE integer",
    "DROP TYPE int4",
    "DROP TYPE pg_catalog.text",
    "DROP TYPE varchar",
    "create table st (a int, b text, c numeric(5,2), d int[])",
    "DROP TYPE st",
    "DROP DOMAIN IF EXISTS dd",
    "DROP DOMAIN st",
    "DROP DOMAIN int4",
    "create view stv as select 1 as x",
    "DROP TYPE stv",
    "alter table st alter column b set storage external",
    "alter table st alter column a set storage external",
    "alter table st alter column a set storage plain",
    "alter table st alter column c set storage main",
    "alter table st alter column d set storage bogus",
    "alter table st alter column zz set storage plain",
    "alter table st alter column xmin set storage plain",
    "select attname, attstorage from pg_attribute where attrelid = 'st'::regclass and attnum > 0 order by attnum",
]


def test_drop_type_and_set_storage_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("ddl")), STORAGE_AND_TYPES).close()


#: SET NOT NULL checks the rows; DROP NOT NULL of a key, replica identity or identity
#: column is refused; RENAME CONSTRAINT renames a key's or UNIQUE constraint's index too.
NOT_NULL_AND_CONSTRAINT_RENAMES = [
    "create table nn (id int primary key, a int, b text, c int generated always as identity)",
    "insert into nn (id, a, b) values (1, 1, null), (2, null, 'x')",
    "alter table nn alter column a set not null",
    "alter table nn alter column b set not null",
    "delete from nn where id = 2",
    "alter table nn alter column a set not null",
    "insert into nn (id, a, b) values (3, null, 'y')",
    "alter table nn alter column a set not null",
    "alter table nn alter column a drop not null",
    "alter table nn alter column id drop not null",
    "alter table nn alter column c drop not null",
    "alter table nn alter column zz set not null",
    "alter table nn alter column xmin drop not null",
    "select attname, attnotnull from pg_attribute where attrelid = 'nn'::regclass and attnum > 0 order by attnum",
    "create unique index nn_b on nn (b)",
    "alter table nn alter column b set not null",
    "update nn set b = 'z' where id = 1",
    "alter table nn alter column b set not null",
    "alter table nn replica identity using index nn_b",
    "alter table nn alter column b drop not null",
    "insert into nn (id, a, b) values (4, 4, null)",
    "create table rc (id int primary key, a int unique, b int)",
    "alter table rc rename constraint rc_a_key to rc_a_uq",
    "alter table rc rename constraint rc_pkey to rc_pk",
    "alter table rc rename constraint nope to nope2",
    "alter table rc rename constraint rc_pk to rc_a_uq",
    "alter table if exists nope rename constraint a to b",
    "select conname, conindid::regclass from pg_constraint where conrelid = 'rc'::regclass order by 1",
    "select indexname from pg_indexes where tablename = 'rc' order by 1",
    "insert into rc values (1, 1, 1), (1, 2, 2)",
    "insert into rc values (2, 1, 2)",
    "alter index rc_pk rename to rc_pk2",
    "select conname from pg_constraint where conrelid = 'rc'::regclass order by 1",
    "alter table rc rename to rc2",
    "insert into rc2 values (5, 5, 5), (5, 6, 6)",
]


def test_not_null_and_constraint_renames_as_in_postgresql(
    proxy: ProxyServer, pg15: PgCluster
) -> None:
    same_answers(
        proxy.dsn(), pg15.dsn(dbname=pg15.new_database("ddl")), NOT_NULL_AND_CONSTRAINT_RENAMES
    ).close()


#: COMMENT ON: pg_description rows, obj_description/col_description, transactional,
#: following their object through a rename.
COMMENTS = [
    "create schema cs",
    "create table cs.ct (id int primary key, a text, constraint ct_a unique (a))",
    "create view cv as select 1 as one, 2 as two",
    "create sequence csq",
    "create index ct_idx on cs.ct (a)",
    "comment on table cs.ct is 'a table'",
    "comment on column cs.ct.a is 'a column'",
    "comment on view cv is 'a view'",
    "comment on column cv.two is 'view col'",
    "comment on sequence csq is 'a seq'",
    "comment on index cs.ct_idx is 'an index'",
    "comment on schema cs is 'a schema'",
    "comment on schema public is 'mine'",
    "comment on constraint ct_a on cs.ct is 'uq'",
    "comment on constraint ct_pkey on cs.ct is 'pk'",
    "comment on table cv is 'x'",
    "comment on view cs.ct is 'x'",
    "comment on table nope is 'x'",
    "comment on column cs.ct.zz is 'x'",
    "comment on schema nope is 'x'",
    "comment on constraint nope on cs.ct is 'x'",
    "select obj_description('cs.ct'::regclass, 'pg_class'), col_description('cs.ct'::regclass, 2), obj_description('cv'::regclass), col_description('cv'::regclass, 2)",
    "select obj_description('cs'::regnamespace, 'pg_namespace'), obj_description('public'::regnamespace, 'pg_namespace')",
    "select c.relname, d.objsubid, d.description from pg_description d join pg_class c on c.oid = d.objoid where d.classoid = 'pg_class'::regclass order by 1, 2",
    "select conname, d.description from pg_description d join pg_constraint c on c.oid = d.objoid order by 1",
    "comment on column cs.ct.a is null",
    "comment on table cs.ct is ''",
    "alter table cs.ct rename to ct2",
    "select c.relname, d.objsubid, d.description from pg_description d join pg_class c on c.oid = d.objoid where d.classoid = 'pg_class'::regclass order by 1, 2",
    "begin",
    "comment on table csq is 'rolled back'",
    "rollback",
    "select obj_description('csq'::regclass, 'pg_class')",
]


def test_comments_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("ddl")), COMMENTS).close()


#: An unqualified CREATE makes its object in the first schema of search_path that exists
#: (it went to public whatever search_path said).
CREATION_SCHEMA = [
    'create schema cps1',
    'set search_path = cps1, public',
    'create table cpx1 (a int)',
    'create view cpv1 as select 1 as one',
    'create sequence cpq1',
    'create index on cpx1 (a)',
    "select relname, relnamespace::regnamespace from pg_class where relname in ('cpx1', 'cpv1', 'cpq1', 'cpx1_a_idx') order by 1",
    'set search_path = nope, cps1',
    'create table cpx2 (a int)',
    "select relname, relnamespace::regnamespace from pg_class where relname = 'cpx2'",
    'set search_path = nope',
    'create table cpx3 (a int)',
    'reset search_path',
    'create schema cps2',
    'set search_path = cps2, public',
    'create table cpc1 as select 1 as a',
    'select 2 as b into cpc2',
    "create function cpf1() returns int as 'select 1' language sql",
    'create table cpc3 (id serial primary key)',
    "select relname, relnamespace::regnamespace from pg_class where relname in ('cpc1', 'cpc2', 'cpc3', 'cpc3_id_seq', 'cpc3_pkey') order by 1",
    "select proname, pronamespace::regnamespace from pg_proc where proname = 'cpf1'",
    'set search_path = "$user", public',
    'create table cpc4 (a int)',
    "select relnamespace::regnamespace from pg_class where relname = 'cpc4'",
    'set search_path = pg_catalog, public',
    'create table cpc5 (a int)',
    'reset search_path',
]


def test_unqualified_creates_follow_search_path(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("ddl")), CREATION_SCHEMA).close()
