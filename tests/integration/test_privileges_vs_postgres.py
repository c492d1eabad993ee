"""Owners and privileges as PostgreSQL 15 enforces them: a superuser and two plain login
roles take turns on a real PostgreSQL 15 and on the proxy, and every statement's outcome —
rows, command tag, or SQLSTATE and message — is the same. Reads and writes of another's
table, DDL on it, CREATE in a schema, USAGE of one, views read as their owner, sequences
behind serial columns, GRANT/REVOKE with grant options and CASCADE, OWNER TO, the ACLs
and owners the catalog shows, has_*_privilege, SET ROLE and SET SESSION AUTHORIZATION, and
DROP ROLE of a role that still owns something."""

from __future__ import annotations

from typing import Any

import psycopg

from tests.pgcluster import PgCluster
from tests.pgcompare import same_answers
from tests.proxy import ProxyServer

SU, ALICE, BOB = "postgres", "pv_alice", "pv_bob"

#: (role, statement): run in order, each role on a connection of its own; a psql
#: meta-command, or a statement after ``psql:``, through the real psql (its output and
#: notices compared).
SCRIPT: list[tuple[str, str]] = [
    (SU, f"CREATE ROLE {ALICE} LOGIN"),
    (SU, f"CREATE ROLE {BOB} LOGIN"),
    (SU, "CREATE SCHEMA pv_s"),
    (SU, "CREATE TABLE pv_s.t (a int)"),
    (SU, "INSERT INTO pv_s.t VALUES (1)"),
    (SU, "CREATE TABLE pv_t (a int PRIMARY KEY, b text)"),
    (SU, "INSERT INTO pv_t VALUES (1, 'one'), (2, 'two')"),
    (SU, "CREATE VIEW pv_v AS SELECT a FROM pv_t"),
    (SU, "CREATE TABLE pv_serial (id serial PRIMARY KEY, v text)"),
    (SU, "CREATE TABLE pv_ident (id int GENERATED ALWAYS AS IDENTITY, v text)"),
    (SU, "CREATE SEQUENCE pv_seq"),
    # a plain role with no grants
    (ALICE, "SELECT * FROM pv_t"),
    (ALICE, "SELECT * FROM pv_v"),
    (ALICE, "SELECT * FROM pv_s.t"),
    (ALICE, "INSERT INTO pv_t VALUES (3, 'three')"),
    (ALICE, "UPDATE pv_t SET b = 'x'"),
    (ALICE, "DELETE FROM pv_t"),
    (ALICE, "TRUNCATE pv_t"),
    (ALICE, "COPY pv_t TO STDOUT"),
    (ALICE, "DROP TABLE pv_t"),
    (ALICE, "ALTER TABLE pv_t ADD COLUMN c int"),
    (ALICE, "ALTER TABLE pv_t RENAME TO pv_t2"),
    (ALICE, "CREATE INDEX ON pv_t (b)"),
    (ALICE, "COMMENT ON TABLE pv_t IS 'mine'"),
    (ALICE, "DROP VIEW pv_v"),
    (ALICE, "DROP SEQUENCE pv_seq"),
    (ALICE, "DROP SCHEMA pv_s"),
    (ALICE, "CREATE TABLE pv_mine (a int)"),
    (ALICE, "CREATE SCHEMA pv_alices"),
    (ALICE, "CREATE TEMP TABLE pv_tmp (a int)"),
    (ALICE, "INSERT INTO pv_tmp VALUES (1)"),
    (ALICE, "SELECT * FROM pv_tmp"),
    # the catalogs PostgreSQL revokes from PUBLIC (and pg_read_all_data reads)
    (ALICE, "SELECT count(*) > 0 FROM pg_authid"),
    (ALICE, "SELECT count(*) > 0 FROM pg_shadow"),
    (ALICE, "SELECT * FROM pg_user_mapping"),
    (ALICE, "SELECT count(*) FROM pg_file_settings"),
    (ALICE, "SELECT count(*) FROM pg_replication_origin_status"),
    (ALICE, "SELECT count(*) > 0 FROM pg_roles, pg_user WHERE rolname = usename"),
    (SU, f"GRANT pg_read_all_data TO {ALICE}"),
    (ALICE, "SELECT count(*) > 0 FROM pg_authid"),
    (ALICE, "SELECT count(*) > 0 FROM pg_shadow"),
    (ALICE, "SELECT count(*) FROM pg_replication_origin_status"),
    (SU, f"REVOKE pg_read_all_data FROM {ALICE}"),
    (ALICE, "SELECT nextval('pv_seq')"),
    (ALICE, "SELECT has_table_privilege('pv_t', 'select'), has_table_privilege('pv_t', 'select, insert')"),
    (ALICE, "SELECT has_schema_privilege('public', 'usage'), has_schema_privilege('public', 'create'), has_schema_privilege('pv_s', 'usage')"),
    (ALICE, f"SELECT has_table_privilege('{SU}', 'pv_t', 'delete'), has_table_privilege('pg_class', 'select')"),
    (ALICE, "GRANT SELECT ON pv_t TO public"),
    (ALICE, "SELECT pg_create_logical_replication_slot('pv_slot', 'pgoutput')"),
    (ALICE, "SELECT pg_drop_replication_slot('pv_slot')"),
    (ALICE, "SELECT pg_replication_slot_advance('pv_slot', '0/0')"),
    (ALICE, "SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE 'pv\\_%'"),
    (ALICE, "psql:VACUUM pv_t"),
    (ALICE, "psql:ANALYZE pv_t"),
    (ALICE, "SELECT has_database_privilege(current_database(), 'connect'), has_database_privilege(current_database(), 'create'), has_database_privilege(current_database(), 'temp, create')"),
    (ALICE, f"SELECT has_database_privilege('{SU}', current_database(), 'create with grant option'), has_database_privilege('pv_nodb', 'connect')"),
    (ALICE, f"SELECT pg_has_role('{ALICE}', 'member'), pg_has_role('{SU}', 'usage'), pg_has_role('{SU}', '{ALICE}', 'member')"),
    (ALICE, f"SELECT pg_has_role('pg_database_owner', 'member'), pg_has_role('{SU}', 'pg_database_owner', 'member'), pg_has_role('pg_monitor', 'usage')"),
    # grants
    (SU, f"GRANT SELECT, UPDATE ON pv_t TO {ALICE}"),
    (SU, f"GRANT INSERT ON pv_t TO {ALICE} WITH GRANT OPTION"),
    (SU, f"GRANT SELECT ON pv_v, pv_serial, pv_ident TO {ALICE}"),
    (SU, f"GRANT INSERT ON pv_serial, pv_ident TO {ALICE}"),
    (SU, f"GRANT USAGE ON SCHEMA pv_s TO {ALICE}"),
    (SU, f"GRANT CREATE ON SCHEMA public TO {ALICE}"),
    (SU, "SELECT relname, relowner::regrole::text, relacl::text FROM pg_class WHERE relname LIKE 'pv\\_%' ORDER BY relname"),
    (SU, "SELECT nspname, nspacl::text FROM pg_namespace WHERE nspname IN ('public', 'pv_s') ORDER BY nspname"),
    (SU, "\\dp pv_*"),
    (ALICE, "\\dn+ pv_s"),
    (ALICE, "SELECT * FROM pv_t ORDER BY a"),
    (ALICE, "SELECT * FROM pv_v ORDER BY a"),
    (ALICE, "SELECT * FROM pv_s.t"),
    (ALICE, "INSERT INTO pv_t VALUES (3, 'three')"),
    (ALICE, "UPDATE pv_t SET b = 'x' WHERE a = 3"),
    (ALICE, "DELETE FROM pv_t WHERE a = 3"),
    (ALICE, "INSERT INTO pv_serial (v) VALUES ('a')"),
    (ALICE, "INSERT INTO pv_ident (v) VALUES ('a')"),
    (ALICE, "SELECT has_table_privilege('pv_t', 'insert with grant option'), has_table_privilege('pv_t', 'select with grant option')"),
    (ALICE, "CREATE TABLE pv_mine (a int)"),
    (ALICE, "INSERT INTO pv_mine VALUES (7)"),
    (ALICE, "CREATE VIEW pv_mine_v AS SELECT * FROM pv_mine"),
    (ALICE, "CREATE VIEW pv_over_t AS SELECT b FROM pv_t"),
    (ALICE, "CREATE INDEX ON pv_mine (a)"),
    (ALICE, "COMMENT ON TABLE pv_mine IS 'mine'"),
    (ALICE, f"GRANT SELECT ON pv_mine, pv_mine_v TO {BOB}"),
    (ALICE, f"GRANT INSERT ON pv_t TO {BOB}"),
    (ALICE, f"GRANT DELETE ON pv_t TO {BOB}"),
    (ALICE, f"ALTER TABLE pv_mine OWNER TO {BOB}"),
    (ALICE, "SELECT tablename, tableowner FROM pg_tables WHERE tablename LIKE 'pv\\_%' ORDER BY 1"),
    (ALICE, "SELECT viewname, viewowner FROM pg_views WHERE viewname LIKE 'pv\\_%' ORDER BY 1"),
    (ALICE, "SELECT relname, relacl::text FROM pg_class WHERE relname IN ('pv_t', 'pv_mine', 'pv_mine_v') ORDER BY 1"),
    # a view is read with its owner's privileges
    (BOB, "SELECT * FROM pv_mine_v"),
    (BOB, "SELECT * FROM pv_mine"),
    (BOB, "SELECT * FROM pv_over_t"),
    (BOB, "INSERT INTO pv_t VALUES (4, 'four')"),
    (BOB, "SELECT * FROM pv_t"),
    (BOB, "DELETE FROM pv_t WHERE pv_t.a = 99"),
    (BOB, "DELETE FROM pv_t AS x WHERE x.a = 99"),
    (BOB, "DELETE FROM pv_t USING pv_mine WHERE pv_mine.a = 99"),
    (BOB, "DELETE FROM pv_t WHERE false"),
    # what other roles' sessions run: hidden without pg_read_all_stats' privileges
    (ALICE, f"SELECT usename, query, state, backend_type FROM pg_stat_activity WHERE usename = '{BOB}'"),
    (SU, f"GRANT pg_read_all_stats TO {ALICE}"),
    (ALICE, f"SELECT usename, query, state, backend_type FROM pg_stat_activity WHERE usename = '{BOB}'"),
    (SU, f"REVOKE pg_read_all_stats FROM {ALICE}"),
    (SU, f"REVOKE INSERT ON pv_t FROM {ALICE}"),
    (SU, f"REVOKE GRANT OPTION FOR INSERT ON pv_t FROM {ALICE}"),
    (SU, f"REVOKE GRANT OPTION FOR INSERT ON pv_t FROM {ALICE} CASCADE"),
    (SU, "SELECT relacl::text FROM pg_class WHERE relname = 'pv_t'"),
    (SU, f"GRANT ALL ON ALL TABLES IN SCHEMA pv_s TO {BOB}"),
    (SU, "SELECT relacl::text FROM pg_class WHERE relname = 't'"),
    (SU, f"REVOKE ALL ON ALL TABLES IN SCHEMA pv_s FROM {BOB}"),
    (SU, f"GRANT USAGE ON pv_t TO {ALICE}"),
    (SU, f"GRANT INSERT ON SEQUENCE pv_seq TO {ALICE}"),
    (SU, f"GRANT INSERT ON pv_seq TO {ALICE}"),
    (SU, "GRANT SELECT ON pv_t TO public WITH GRANT OPTION"),
    (SU, f"GRANT SELECT ON pv_nope TO {ALICE}"),
    (SU, "GRANT SELECT ON pv_t TO pv_nobody"),
    (SU, f"GRANT frobnicate ON pv_t TO {ALICE}"),
    (SU, f"GRANT USAGE ON SEQUENCE pv_seq TO {ALICE}"),
    (ALICE, "SELECT nextval('pv_seq'), currval('pv_seq')"),
    (ALICE, "SELECT setval('pv_seq', 5)"),
    # locks, FOR UPDATE, foreign keys, functions
    (ALICE, "BEGIN"),
    (ALICE, "LOCK TABLE pv_s.t IN ACCESS SHARE MODE"),
    (ALICE, "ROLLBACK"),
    (ALICE, "BEGIN"),
    (ALICE, "LOCK TABLE pv_v IN ACCESS EXCLUSIVE MODE"),
    (ALICE, "ROLLBACK"),
    (ALICE, "SELECT a FROM pv_t WHERE a = 1 FOR UPDATE"),
    (ALICE, "SELECT a FROM pv_v FOR SHARE"),
    (ALICE, "CREATE TABLE pv_fk (x int REFERENCES pv_t)"),
    (SU, "CREATE FUNCTION pv_f(int) RETURNS int LANGUAGE sql AS 'SELECT $1'"),
    (ALICE, "CREATE FUNCTION pv_g(int) RETURNS int LANGUAGE sql AS 'SELECT $1 + 1'"),
    (ALICE, "SELECT pv_f(1), pv_g(1)"),
    (ALICE, "DROP FUNCTION pv_f(int)"),
    (ALICE, "ALTER FUNCTION pv_f(int) RENAME TO pv_f2"),
    (ALICE, "CREATE OR REPLACE FUNCTION pv_f(int) RETURNS int LANGUAGE sql AS 'SELECT 2'"),
    (ALICE, "SELECT proname, proowner::regrole::text FROM pg_proc WHERE proname LIKE 'pv\\_%' ORDER BY 1"),
    (ALICE, "DROP FUNCTION pv_g(int)"),
    (SU, "DROP FUNCTION pv_f(int)"),
    (SU, "CREATE FUNCTION pv_h(int) RETURNS int LANGUAGE sql AS 'SELECT $1'"),
    (SU, f"ALTER FUNCTION pv_h(int) OWNER TO {ALICE}"),
    (SU, f"ALTER FUNCTION pv_nosuch(int) OWNER TO {ALICE}"),
    (ALICE, "ALTER FUNCTION pv_h(int) LEAKPROOF"),
    (ALICE, "ALTER FUNCTION pv_h(int) STABLE"),
    (ALICE, "CREATE FUNCTION pv_l(int) RETURNS bool LANGUAGE sql LEAKPROOF AS 'SELECT true'"),
    (ALICE, "DROP FUNCTION pv_h(int)"),
    (SU, f"GRANT REFERENCES ON pv_t TO {ALICE}"),
    (ALICE, "CREATE TABLE pv_fk (x int REFERENCES pv_t)"),
    (ALICE, "DROP TABLE pv_fk"),
    # SET ROLE and SET SESSION AUTHORIZATION
    (SU, f"SET ROLE {ALICE}"),
    (SU, "SELECT current_user, session_user, current_setting('is_superuser')"),
    (SU, "SELECT * FROM pv_s.t"),
    (SU, "DROP TABLE pv_t"),
    (SU, "RESET ROLE"),
    (SU, f"SET SESSION AUTHORIZATION {BOB}"),
    (SU, "SELECT current_user, session_user"),
    (SU, f"SET ROLE {ALICE}"),
    (SU, "RESET SESSION AUTHORIZATION"),
    (SU, "SELECT current_user, session_user"),
    (SU, f"SET SESSION AUTHORIZATION {BOB}"),
    (SU, "DISCARD ALL"),
    (SU, "SELECT current_user, session_user"),
    (ALICE, f"SET ROLE {SU}"),
    (ALICE, f"SET SESSION AUTHORIZATION {SU}"),
    (ALICE, "SET ROLE pv_nobody"),
    # ALTER DEFAULT PRIVILEGES: what a role creates starts with them
    (ALICE, f"ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO {BOB}"),
    (ALICE, f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT INSERT ON TABLES TO {BOB}"),
    (ALICE, f"ALTER DEFAULT PRIVILEGES REVOKE ALL ON SEQUENCES FROM {ALICE}"),
    (ALICE, f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE ON SCHEMAS TO {BOB}"),
    (ALICE, f"ALTER DEFAULT PRIVILEGES GRANT USAGE ON TABLES TO {BOB}"),
    (ALICE, f"ALTER DEFAULT PRIVILEGES FOR ROLE {SU} GRANT SELECT ON TABLES TO {BOB}"),
    (ALICE, f"ALTER DEFAULT PRIVILEGES IN SCHEMA pv_nosch GRANT SELECT ON TABLES TO {BOB}"),
    (SU, "SELECT defaclrole::regrole::text, defaclnamespace, defaclobjtype, defaclacl::text FROM pg_default_acl ORDER BY 1, 3"),
    (ALICE, "\\ddp"),
    (ALICE, "CREATE TABLE pv_dflt (a int)"),
    (ALICE, "CREATE SEQUENCE pv_dflt_seq"),
    (SU, "SELECT relname, relacl::text FROM pg_class WHERE relname IN ('pv_dflt', 'pv_dflt_seq') ORDER BY 1"),
    (BOB, "INSERT INTO pv_dflt VALUES (1)"),
    (BOB, "SELECT * FROM pv_dflt"),
    (SU, f"DROP ROLE {BOB}"),
    (ALICE, "DROP TABLE pv_dflt"),
    (ALICE, "DROP SEQUENCE pv_dflt_seq"),
    (ALICE, f"ALTER DEFAULT PRIVILEGES REVOKE SELECT ON TABLES FROM {BOB}"),
    (ALICE, f"ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE INSERT ON TABLES FROM {BOB}"),
    (ALICE, f"ALTER DEFAULT PRIVILEGES GRANT ALL ON SEQUENCES TO {ALICE}"),
    (SU, "SELECT count(*) FROM pg_default_acl"),
    # superuser-only settings
    (ALICE, "SHOW data_directory"),
    (ALICE, "SELECT current_setting('Hba_File', true)"),
    (ALICE, "SELECT current_setting('work_mem')"),
    (ALICE, "SELECT name FROM pg_settings WHERE name IN ('data_directory', 'work_mem', 'ssl_ciphers') ORDER BY 1"),
    (SU, f"GRANT pg_monitor TO {ALICE}"),
    (ALICE, "SELECT name FROM pg_settings WHERE name IN ('data_directory', 'work_mem', 'ssl_ciphers') ORDER BY 1"),
    (SU, f"REVOKE pg_monitor FROM {ALICE}"),
    # roles as groups: members use a group's privileges (through INHERIT roles), own what it
    # owns, may SET ROLE to it; predefined roles
    (SU, "CREATE ROLE pv_grp"),
    (SU, "CREATE ROLE pv_noinh LOGIN NOINHERIT IN ROLE pv_grp"),
    (SU, "GRANT SELECT ON pv_seq TO pv_grp"),
    (SU, f"GRANT pv_grp TO {BOB}"),
    (SU, f"GRANT pv_grp TO {BOB}"),
    (SU, f"GRANT {BOB} TO pv_grp"),
    (SU, "GRANT pv_grp TO pv_grp"),
    (SU, f"GRANT pg_database_owner TO {BOB}"),
    (SU, f"GRANT pv_nothere TO {BOB}"),
    (SU, "SELECT roleid::regrole::text, member::regrole::text, admin_option FROM pg_auth_members WHERE member::regrole::text LIKE 'pv\\_%' ORDER BY 1, 2"),
    (SU, f"\\du {BOB}"),
    (SU, "CREATE TABLE pv_grp_t (a int)"),
    (SU, "ALTER TABLE pv_grp_t OWNER TO pv_grp"),
    (BOB, "SELECT last_value FROM pv_seq"),
    (BOB, "SELECT pg_has_role('pv_grp', 'member'), pg_has_role('pv_grp', 'usage'), has_sequence_privilege('pv_seq', 'select')"),
    (BOB, "SET ROLE pv_grp"),
    (BOB, "SELECT current_user"),
    (BOB, "RESET ROLE"),
    (BOB, "ALTER TABLE pv_grp_t RENAME TO pv_grp_t2"),
    (BOB, "ALTER TABLE pv_grp_t2 RENAME TO pv_grp_t"),
    ("pv_noinh", "SELECT last_value FROM pv_seq"),
    ("pv_noinh", "SELECT pg_has_role('pv_grp', 'member'), pg_has_role('pv_grp', 'usage')"),
    ("pv_noinh", "SET ROLE pv_grp"),
    ("pv_noinh", "SELECT last_value FROM pv_seq"),
    ("pv_noinh", "RESET ROLE"),
    (SU, "GRANT pg_read_all_data TO pv_noinh"),
    ("pv_noinh", "SELECT * FROM pv_s.t"),
    ("pv_noinh", "INSERT INTO pv_s.t VALUES (2)"),
    (SU, f"REVOKE pv_grp FROM {BOB}"),
    (SU, f"REVOKE pv_grp FROM {BOB}"),
    (SU, f"GRANT pv_grp TO {ALICE} WITH ADMIN OPTION"),
    (ALICE, f"GRANT pv_grp TO {BOB}"),
    (ALICE, f"REVOKE pv_grp FROM {BOB}"),
    (ALICE, f"GRANT pv_grp TO {BOB} GRANTED BY {SU}"),
    (ALICE, f"GRANT pv_grp TO {BOB} GRANTED BY public"),
    (SU, f"GRANT pv_grp TO {BOB} GRANTED BY {ALICE}"),
    (SU, "SELECT roleid::regrole::text, member::regrole::text, grantor::regrole::text FROM pg_auth_members WHERE roleid::regrole::text = 'pv_grp' ORDER BY 2"),
    (SU, f"REVOKE pv_grp FROM {BOB} GRANTED BY {ALICE}"),
    (BOB, f"GRANT pv_grp TO {BOB}"),
    (SU, "DROP TABLE pv_grp_t"),
    (SU, "DROP ROLE pv_grp"),
    (SU, "SELECT count(*) FROM pg_auth_members WHERE roleid::regrole::text = 'pv_grp'"),
    # functions: EXECUTE, PUBLIC's unless revoked, checked at each call as the current user
    (ALICE, "CREATE FUNCTION pv_f(i int) RETURNS int LANGUAGE sql AS 'SELECT i + 1'"),
    (ALICE, "CREATE FUNCTION pv_g() RETURNS text LANGUAGE sql AS $$SELECT 'g'$$"),
    (ALICE, "CREATE FUNCTION pv_g(int) RETURNS text LANGUAGE sql AS $$SELECT 'g2'$$"),
    (BOB, "SELECT pv_f(1), pv_g()"),
    (ALICE, "REVOKE EXECUTE ON FUNCTION pv_f(int) FROM public"),
    (ALICE, "REVOKE EXECUTE ON FUNCTION pv_g FROM public"),
    (ALICE, "REVOKE EXECUTE ON FUNCTION pv_nope() FROM public"),
    (ALICE, "REVOKE EXECUTE ON FUNCTION pv_f(text) FROM public"),
    (ALICE, "GRANT SELECT ON FUNCTION pv_f(int) TO public"),
    (ALICE, "GRANT SELECT ON ROUTINE pv_f(int) TO public"),
    (ALICE, "GRANT EXECUTE ON PROCEDURE pv_f(int) TO public"),
    (ALICE, "GRANT EXECUTE ON FUNCTION pv_f(int) TO public GRANTED BY postgres"),
    (BOB, "SELECT pv_f(1)"),
    (BOB, "SELECT * FROM pv_f(1)"),
    (BOB, "SELECT a, pv_f(a) FROM pv_t ORDER BY a"),
    (BOB, "SELECT pv_g()"),
    (BOB, "SELECT has_function_privilege('pv_f(int)', 'execute'), has_function_privilege('pv_g()', 'execute'), has_function_privilege('pv_alice', 'pv_f(integer)', 'execute with grant option')"),
    (BOB, "SELECT has_function_privilege('now()', 'execute'), has_function_privilege('pg_read_file(text)', 'execute'), has_function_privilege('pv_f(int)'::regprocedure::oid, 'execute')"),
    (BOB, "SELECT has_function_privilege('pv_nope()', 'execute')"),
    (BOB, "SELECT has_function_privilege(999999, 'execute'), has_function_privilege('pv_alice', 'pv_g(int)', 'execute')"),
    (ALICE, f"GRANT EXECUTE ON FUNCTION pv_f(int) TO {BOB} GRANTED BY CURRENT_USER"),
    (BOB, "SELECT pv_f(1)"),
    (BOB, "psql:GRANT EXECUTE ON FUNCTION pv_f(int) TO public"),
    (BOB, "psql:REVOKE EXECUTE ON FUNCTION pv_g() FROM public"),
    (BOB, "ALTER FUNCTION pv_f(int) RENAME TO pv_f2"),
    (ALICE, "REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM public"),
    (ALICE, "ALTER DEFAULT PRIVILEGES REVOKE EXECUTE ON FUNCTIONS FROM public"),
    (ALICE, f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT EXECUTE ON ROUTINES TO {BOB}"),
    (ALICE, "ALTER DEFAULT PRIVILEGES GRANT SELECT ON FUNCTIONS TO public"),
    (ALICE, "CREATE FUNCTION pv_h() RETURNS int LANGUAGE sql AS 'SELECT 7'"),
    (SU, "SELECT proname, proacl::text FROM pg_proc WHERE proname LIKE 'pv\\_%' ORDER BY oid"),
    (SU, "SELECT defaclrole::regrole::text, defaclnamespace::regnamespace::text, defaclobjtype, defaclacl::text FROM pg_default_acl ORDER BY 1, 2, 3"),
    (SU, "\\ddp"),
    (BOB, "SELECT pv_h(), pv_f(2)"),
    (BOB, "SELECT pv_g()"),
    (ALICE, f"REVOKE EXECUTE ON FUNCTION pv_f(int) FROM {BOB}"),
    (BOB, "SELECT pv_f(2)"),
    (SU, f"DROP ROLE {ALICE}"),
    (ALICE, "ALTER DEFAULT PRIVILEGES GRANT EXECUTE ON FUNCTIONS TO public"),
    (ALICE, f"ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE EXECUTE ON ROUTINES FROM {BOB}"),
    (ALICE, "DROP FUNCTION pv_f(int), pv_g(), pv_g(int), pv_h()"),
    # column privileges
    (SU, "CREATE TABLE pv_ct (a int PRIMARY KEY, b text, c int)"),
    (SU, "INSERT INTO pv_ct VALUES (1, 'x', 3), (2, 'y', 4)"),
    (ALICE, f"GRANT SELECT (a) ON pv_ct TO {BOB}"),
    (SU, f"GRANT SELECT (a, b), UPDATE (c) ON pv_ct TO {ALICE} WITH GRANT OPTION"),
    (SU, f"GRANT INSERT (a), REFERENCES (a, b) ON pv_ct TO {BOB}"),
    (SU, f"GRANT ALL (c) ON pv_ct TO {BOB}"),
    (SU, f"GRANT DELETE (a) ON pv_ct TO {BOB}"),
    (SU, f"GRANT SELECT (zz) ON pv_ct TO {BOB}"),
    (SU, f"GRANT SELECT (a) ON SEQUENCE pv_ct TO {BOB}"),
    (SU, f"GRANT SELECT (a) ON SCHEMA public TO {BOB}"),
    (SU, "SELECT attname, attacl::text FROM pg_attribute WHERE attrelid = 'pv_ct'::regclass AND attnum > 0 ORDER BY attnum"),
    (SU, "\\dp pv_ct"),
    (ALICE, f"psql:GRANT SELECT (c) ON pv_ct TO {BOB}"),
    (ALICE, f"psql:GRANT UPDATE (a, c) ON pv_ct TO {BOB}"),
    (ALICE, "SELECT * FROM pv_ct"),
    (ALICE, "SELECT a FROM pv_ct ORDER BY a"),
    (ALICE, "SELECT a, b FROM pv_ct WHERE a > 0 ORDER BY b"),
    (ALICE, "SELECT a AS c FROM pv_ct ORDER BY c"),
    (ALICE, "SELECT count(*) FROM pv_ct"),
    (ALICE, "SELECT 1 FROM pv_ct LIMIT 1"),
    (ALICE, "SELECT pv_ct FROM pv_ct"),
    (ALICE, "SELECT pv_ct.* FROM pv_ct"),
    (ALICE, "SELECT c FROM pv_ct"),
    (ALICE, "SELECT x.a FROM pv_ct x JOIN pv_ct y USING (a) ORDER BY 1"),
    (ALICE, "SELECT x.a FROM pv_ct x JOIN pv_ct y USING (c)"),
    (ALICE, "SELECT a FROM pv_ct NATURAL JOIN (SELECT 1 AS a) y"),
    (ALICE, "SELECT a FROM pv_ct t1 WHERE a IN (SELECT a FROM pv_ct t2 WHERE t2.c > 0)"),
    (ALICE, "SELECT a FROM pv_ct t1 WHERE EXISTS (SELECT 1 FROM pv_ct t2 WHERE t2.a = t1.a) ORDER BY a"),
    (ALICE, "SELECT * FROM (SELECT a FROM pv_ct) s ORDER BY a"),
    (ALICE, "SELECT a FROM (SELECT * FROM pv_ct) s"),
    (ALICE, "WITH w AS (SELECT a, b FROM pv_ct) SELECT * FROM w ORDER BY a"),
    (ALICE, "SELECT z.x FROM pv_ct AS z (x, y) ORDER BY 1"),
    (ALICE, "SELECT z.y, z.c FROM pv_ct AS z (x, y)"),
    (ALICE, "SELECT has_column_privilege('pv_ct', 'a', 'select'), has_column_privilege('pv_ct', 'c', 'select'), has_column_privilege('pv_ct', 3::int2, 'update'), has_any_column_privilege('pv_ct', 'insert')"),
    (ALICE, "SELECT has_column_privilege('pv_ct', 'zz', 'select')"),
    (ALICE, "SELECT has_column_privilege('pv_ct', 9::int2, 'select'), has_column_privilege('pv_ct', 'b', 'select with grant option')"),
    (ALICE, "UPDATE pv_ct SET c = 5 WHERE a = 1"),
    (ALICE, "UPDATE pv_ct SET c = c + 1 WHERE a = 1"),
    (ALICE, "UPDATE pv_ct SET b = 'q' WHERE a = 1"),
    (BOB, "INSERT INTO pv_ct (a) VALUES (5)"),
    (BOB, "INSERT INTO pv_ct VALUES (6, 'w')"),
    (BOB, "INSERT INTO pv_ct (a, c) VALUES (7, 1)"),
    (BOB, "INSERT INTO pv_ct (a) VALUES (8) RETURNING a"),
    (BOB, "INSERT INTO pv_ct (a) VALUES (9) RETURNING c"),
    (BOB, "INSERT INTO pv_ct (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET c = 1"),
    (BOB, "SELECT c FROM pv_ct ORDER BY c"),
    (BOB, "COPY pv_ct (c) TO STDOUT"),
    (BOB, "COPY pv_ct TO STDOUT"),
    (BOB, "DELETE FROM pv_ct WHERE c = 1"),
    (SU, f"REVOKE UPDATE ON pv_ct FROM {ALICE}"),
    (SU, f"REVOKE ALL ON pv_ct FROM {BOB} CASCADE"),
    (SU, "SELECT attname, attacl::text FROM pg_attribute WHERE attrelid = 'pv_ct'::regclass AND attnum > 0 ORDER BY attnum"),
    (SU, f"DROP ROLE {BOB}"),
    (SU, f"REVOKE UPDATE ON pv_ct FROM {ALICE} CASCADE"),
    (SU, f"REVOKE SELECT ON pv_ct FROM {ALICE}"),
    (SU, "SELECT attname, attacl::text FROM pg_attribute WHERE attrelid = 'pv_ct'::regclass AND attnum > 0 ORDER BY attnum"),
    (SU, "DROP TABLE pv_ct"),
    # DROP ROLE of a role that owns or holds something
    (SU, f"DROP ROLE {BOB}"),
    (SU, f"ALTER TABLE pv_mine OWNER TO {ALICE}"),
    (SU, "SELECT tableowner FROM pg_tables WHERE tablename = 'pv_mine'"),
    # the database's privileges ({db}: its name)
    (SU, f"GRANT CREATE ON DATABASE {{db}} TO {ALICE}"),
    (SU, "REVOKE TEMPORARY ON DATABASE {db} FROM public"),
    (SU, "SELECT datacl::text FROM pg_database WHERE datname = current_database()"),
    (ALICE, "CREATE SCHEMA pv_alices"),
    (ALICE, "DROP SCHEMA pv_alices"),
    (BOB, "CREATE TEMP TABLE pv_tmp2 (a int)"),
    (BOB, "SELECT has_database_privilege(current_database(), 'temp'), has_database_privilege(current_database(), 'create')"),
    (SU, "GRANT TEMP ON TABLE pv_t TO public"),
    (SU, "GRANT CONNECT ON DATABASE pv_nodb TO public"),
    (SU, "GRANT ALL ON DATABASE {db} TO public"),
    (SU, "REVOKE CREATE ON DATABASE {db} FROM public"),
    (SU, f"REVOKE CREATE ON DATABASE {{db}} FROM {ALICE}"),
    (SU, "SELECT datacl::text FROM pg_database WHERE datname = current_database()"),
    # REASSIGN OWNED and DROP OWNED
    (SU, f"CREATE SCHEMA pv_os AUTHORIZATION {BOB}"),
    (BOB, "CREATE TABLE pv_os.t (a int PRIMARY KEY)"),
    (BOB, "CREATE VIEW pv_os.v AS SELECT * FROM pv_os.t"),
    (BOB, "CREATE FUNCTION pv_os.f(int, text) RETURNS int LANGUAGE sql AS 'SELECT $1'"),
    (ALICE, "REASSIGN OWNED BY pv_bob TO pv_alice"),
    (ALICE, "DROP OWNED BY pv_bob"),
    (SU, "REASSIGN OWNED BY postgres TO pv_bob"),
    (SU, "DROP OWNED BY postgres"),
    (SU, f"REASSIGN OWNED BY {BOB} TO {ALICE}"),
    (SU, "SELECT relname, relowner::regrole::text FROM pg_class WHERE relnamespace = 'pv_os'::regnamespace ORDER BY 1"),
    (SU, "SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'pv_os'"),
    (SU, f"REASSIGN OWNED BY {ALICE} TO {BOB}"),
    (SU, f"DROP OWNED BY {BOB}"),
    (SU, "SELECT count(*) FROM pg_namespace WHERE nspname = 'pv_os'"),
    (SU, "SELECT relname, relacl::text FROM pg_class WHERE relname LIKE 'pv\\_%' ORDER BY 1"),
]

CLEANUP = [
    "RESET SESSION AUTHORIZATION",
    "GRANT CONNECT, TEMPORARY ON DATABASE {db} TO public",
    f"REVOKE ALL ON DATABASE {{db}} FROM {ALICE}",
    "DROP VIEW IF EXISTS pv_over_t, pv_mine_v, pv_v",
    "DROP TABLE IF EXISTS pv_mine, pv_t, pv_serial, pv_ident, pv_s.t",
    "DROP SEQUENCE IF EXISTS pv_seq",
    "DROP SCHEMA IF EXISTS pv_s, pv_alices",
    "DROP SCHEMA IF EXISTS pv_os CASCADE",
    "DROP FUNCTION IF EXISTS pv_f(int), pv_f2(int), pv_g(), pv_g(int), pv_h()",
    f"ALTER DEFAULT PRIVILEGES FOR ROLE {ALICE} GRANT EXECUTE ON FUNCTIONS TO public",
    f"ALTER DEFAULT PRIVILEGES FOR ROLE {ALICE} IN SCHEMA public REVOKE EXECUTE ON ROUTINES FROM {BOB}",
    f"REVOKE ALL ON SCHEMA public FROM {ALICE}",
    "DROP TABLE IF EXISTS pv_grp_t, pv_ct",
    "DROP ROLE IF EXISTS pv_noinh",
    "DROP ROLE IF EXISTS pv_grp",
    f"DROP ROLE IF EXISTS {BOB}",
    f"DROP ROLE IF EXISTS {ALICE}",
]


def _psql(dsn: str, command: str) -> str:
    """A psql meta-command's output, as the real psql prints it."""
    import subprocess

    from tests.pgcluster import pg_bindir

    r = subprocess.run([str(pg_bindir() / "psql"), "-X", dsn, "-c", command], capture_output=True, text=True, timeout=60)
    return r.stdout + r.stderr


def _outcome(c: psycopg.Connection, sql: str) -> Any:
    try:
        cur = c.execute(sql)
    except psycopg.Error as e:
        return (str(e.sqlstate), str(e.diag.message_primary))
    if cur.description is None:
        return cur.statusmessage
    return [tuple(r) for r in cur.fetchall()]


def _run(dsn: Any, db: str) -> list[Any]:
    conns: dict[str, psycopg.Connection] = {}
    try:
        out = []
        for role, script_sql in SCRIPT:
            sql = script_sql.replace("{db}", db)
            if sql.startswith(("\\", "psql:")):  # (psql prints the notices too)
                out.append((role, script_sql, _psql(dsn(role), sql.removeprefix("psql:"))))
                continue
            if role not in conns:
                conns[role] = psycopg.connect(dsn(role), autocommit=True)
            out.append((role, script_sql, _outcome(conns[role], sql)))
        return out
    finally:
        for c in conns.values():
            c.close()
        with psycopg.connect(dsn(SU), autocommit=True) as su:
            for sql in CLEANUP:
                _outcome(su, sql.replace("{db}", db))


def _named(out: Any, db: str) -> Any:
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], str):
        return (out[0], out[1].replace(f"database {db}", "database postgres").replace(f'database "{db}"', 'database "postgres"'))
    return out


def test_privileges_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    db = pg15.new_database("privs")
    # (the database's name differs: PostgreSQL's is the test's own)
    want = [(r, sql, _named(out, db)) for r, sql, out in _run(lambda role: pg15.dsn(dbname=db, user=role), db)]
    got = _run(lambda role: proxy.dsn(user=role), "postgres")
    for w, g in zip(want, got, strict=True):
        assert g == w
    denied = [w for w in want if w[2] == ("42501", "permission denied for table pv_t")]
    assert len(denied) >= 6


def test_a_subscriber_needs_select_on_the_tables_it_copies(proxy: ProxyServer, pg15: PgCluster) -> None:
    """A subscription connecting as a REPLICATION role without SELECT on a published table
    cannot copy it (the publisher's 42501 ends each table sync attempt, as PostgreSQL 15's
    does); once SELECT is granted the next attempt copies it, and changes stream."""
    from tests.integration.test_subscriber import new_sub_db, wait_identical, wait_ready

    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE ROLE pv_repl REPLICATION LOGIN")
        c.execute("CREATE TABLE pv_pub (id int PRIMARY KEY, v text)")
        c.execute("INSERT INTO pv_pub VALUES (1, 'one'), (2, 'two')")
        c.execute("CREATE PUBLICATION pv_p FOR TABLE pv_pub")
    sub = new_sub_db(pg15)
    with psycopg.connect(sub, autocommit=True) as c:
        c.execute("CREATE TABLE pv_pub (id int PRIMARY KEY, v text)")
        c.execute("ALTER SYSTEM SET wal_retrieve_retry_interval = '500ms'")
        c.execute("SELECT pg_reload_conf()")
        c.execute(
            f"CREATE SUBSCRIPTION pv_s CONNECTION 'host=127.0.0.1 port={proxy.port} user=pv_repl dbname=postgres' PUBLICATION pv_p"
        )
    try:
        with psycopg.connect(proxy.dsn()) as c:
            assert _outcome(c, "SET ROLE pv_repl") == "SET"
            assert _outcome(c, "COPY public.pv_pub TO STDOUT") == ("42501", "permission denied for table pv_pub")
        import time

        time.sleep(3)
        with psycopg.connect(sub) as c:
            assert c.execute("SELECT srsubstate FROM pg_subscription_rel").fetchall() != [("r",)]
            assert c.execute("SELECT count(*) FROM pv_pub").fetchone() == (0,)
        with psycopg.connect(proxy.dsn(), autocommit=True) as c:
            c.execute("GRANT SELECT ON pv_pub TO pv_repl")
        wait_ready(sub)
        with psycopg.connect(proxy.dsn(), autocommit=True) as c:
            c.execute("INSERT INTO pv_pub VALUES (3, 'three')")
        wait_identical(proxy.dsn(), sub, ["pv_pub"])
    finally:
        with psycopg.connect(sub, autocommit=True) as c:
            c.execute("DROP SUBSCRIPTION pv_s")
            c.execute("ALTER SYSTEM RESET wal_retrieve_retry_interval")
            c.execute("SELECT pg_reload_conf()")
        with psycopg.connect(proxy.dsn(), autocommit=True) as c:
            for sql in ("DROP PUBLICATION pv_p", "DROP TABLE pv_pub", "DROP ROLE pv_repl"):
                _outcome(c, sql)


#: What the proxy refuses (0A000, naming the feature) where PostgreSQL 15 would act: it
#: keeps no ACLs of these objects (column privileges: of tables only).
REFUSED = [
    "GRANT SELECT (a) ON pv_r_v TO public",
    "GRANT EXECUTE ON FUNCTION now() TO public",
    "GRANT USAGE ON TYPE int4 TO public",
    "GRANT CONNECT ON DATABASE template1 TO public",
    "ALTER DEFAULT PRIVILEGES GRANT USAGE ON TYPES TO public",
]


def test_what_is_not_kept_is_refused(proxy: ProxyServer) -> None:
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE pv_r (a int)")
        c.execute("CREATE VIEW pv_r_v AS SELECT a FROM pv_r")
        c.execute("CREATE ROLE pv_r_grp")
        try:
            for sql in REFUSED:
                out = _outcome(c, sql)
                assert isinstance(out, tuple) and out[0] == "0A000" and "not supported by walsender-proxy" in out[1], (sql, out)
        finally:
            c.execute("DROP VIEW pv_r_v")
            c.execute("DROP TABLE pv_r")
            c.execute("DROP ROLE pv_r_grp")


#: Role changes roll back with their transaction: an explicit block, the implicit one of a
#: multi-statement query, a failed statement.
ROLE_ROLLBACK = [
    "CREATE ROLE rb_keep",
    "BEGIN",
    "CREATE ROLE rb_gone LOGIN",
    "ALTER ROLE rb_keep CREATEDB",
    "GRANT rb_keep TO rb_gone",
    "DROP ROLE rb_keep",
    "SELECT rolname FROM pg_roles WHERE rolname LIKE 'rb\\_%' ORDER BY 1",
    "ROLLBACK",
    "SELECT rolname, rolcreatedb FROM pg_roles WHERE rolname LIKE 'rb\\_%' ORDER BY 1",
    "CREATE ROLE rb_multi; SELECT 1/0",
    "SELECT count(*) FROM pg_roles WHERE rolname = 'rb_multi'",
    "BEGIN",
    "CREATE ROLE rb_failed",
    "SELECT 1/0",
    "COMMIT",
    "SELECT count(*) FROM pg_roles WHERE rolname = 'rb_failed'",
    "BEGIN",
    "CREATE ROLE rb_kept",
    "COMMIT",
    "SELECT count(*) FROM pg_roles WHERE rolname = 'rb_kept'",
    "CREATE ROLE rb_su SUPERUSER",
    "CREATE ROLE rb_in IN ROLE rb_su",
    "SET SESSION AUTHORIZATION rb_kept",
    "RESET SESSION AUTHORIZATION",
    "DROP ROLE rb_keep, rb_kept, rb_su",
]


def test_role_changes_roll_back_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("rolerb")), ROLE_ROLLBACK).close()


def test_role_changes_after_a_savepoint_are_refused(proxy: ProxyServer) -> None:
    """ROLLBACK TO would have to undo a part of them: refused (0A000), nothing changed."""
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("BEGIN")
        c.execute("SAVEPOINT s")
        assert _outcome(c, "CREATE ROLE rb_sp") == ("0A000", "CREATE ROLE after a SAVEPOINT is not supported by walsender-proxy")
        c.execute("ROLLBACK")
        assert _outcome(c, "SELECT count(*) FROM pg_roles WHERE rolname = 'rb_sp'") == [(0,)]

def test_the_superuser_only_settings_are_postgresqls(pg15: PgCluster) -> None:
    """The settings a role without pg_read_all_settings does not see, read off PostgreSQL
    15 itself."""
    from walsender_proxy.backend.settings import SUPERUSER_ONLY

    db = pg15.new_database("privset")
    with psycopg.connect(pg15.dsn(dbname=db), autocommit=True) as su:
        su.execute("CREATE ROLE pv_settings LOGIN")
        try:
            every = {r[0] for r in su.execute("SELECT name FROM pg_settings")}
            with psycopg.connect(pg15.dsn(dbname=db, user="pv_settings")) as c:
                seen = {r[0] for r in c.execute("SELECT name FROM pg_settings")}
        finally:
            su.execute("DROP ROLE pv_settings")
    assert every - seen == SUPERUSER_ONLY


def _walsender_view(dsn: Any) -> list[Any]:
    """pg_stat_replication as seen by a plain role, by the walsender's own role and with
    pg_read_all_stats, while a replication connection is open."""
    out = []
    with psycopg.connect(dsn("postgres"), autocommit=True) as su:
        su.execute("CREATE ROLE pv_rep LOGIN REPLICATION")
        su.execute("CREATE ROLE pv_watch LOGIN")
        try:
            with psycopg.connect(dsn("pv_rep") + " replication=database application_name=pv_app", autocommit=True) as rep:
                rep.execute("IDENTIFY_SYSTEM")
                q = (
                    "SELECT usename, application_name, client_addr IS NULL, backend_start IS NULL, state, "
                    "sent_lsn, sync_state FROM pg_stat_replication WHERE usename = 'pv_rep'"
                )
                for role in ("pv_watch", "pv_rep"):
                    with psycopg.connect(dsn(role)) as c:
                        out.append(c.execute(q).fetchall())
                su.execute("GRANT pg_read_all_stats TO pv_watch")
                with psycopg.connect(dsn("pv_watch")) as c:
                    out.append(c.execute(q).fetchall())
        finally:
            su.execute("DROP ROLE pv_rep")
            su.execute("DROP ROLE pv_watch")
    return out


def test_walsenders_are_shown_as_postgresql_shows_them(proxy: ProxyServer, pg15: PgCluster) -> None:
    db = pg15.new_database("privrep")
    want = _walsender_view(lambda role: pg15.dsn(dbname=db, user=role))
    got = _walsender_view(lambda role: proxy.dsn(user=role))
    assert got == want
    assert want[0] == [("pv_rep", "pv_app", True, True, None, None, None)]


def _connect_outcomes(dsn: Any, db: str) -> list[Any]:
    out = []
    with psycopg.connect(dsn("postgres"), autocommit=True) as su:
        su.execute("CREATE ROLE pv_conn LOGIN")
        try:
            su.execute(f"REVOKE CONNECT ON DATABASE {db} FROM public")
            for _ in range(2):
                try:
                    psycopg.connect(dsn("pv_conn")).close()
                    out.append("connected")
                except psycopg.OperationalError as e:
                    out.append(str(e).split("FATAL:  ", 1)[-1].strip().replace(f'"{db}"', '"postgres"'))
                su.execute(f"GRANT CONNECT ON DATABASE {db} TO pv_conn")
        finally:
            su.execute(f"GRANT CONNECT ON DATABASE {db} TO public")
            su.execute(f"REVOKE ALL ON DATABASE {db} FROM pv_conn")
            su.execute("DROP ROLE pv_conn")
    return out


def test_connect_needs_the_connect_privilege(proxy: ProxyServer, pg15: PgCluster) -> None:
    db = pg15.new_database("privconn")
    want = _connect_outcomes(lambda role: pg15.dsn(dbname=db, user=role), db)
    got = _connect_outcomes(lambda role: proxy.dsn(user=role), "postgres")
    assert got == want
    assert want[1] == "connected" and "permission denied for database" in want[0]


def _point_reads(dsn: Any) -> list[Any]:
    """A SELECT by primary key, run often enough to be answered from the key index,
    before and after its reader loses the membership that let it read; one remembered
    by a superuser, run again after SET ROLE to a role that may read one column."""
    out: list[Any] = []
    with psycopg.connect(dsn("postgres"), autocommit=True) as su:
        for sql in (
            "CREATE TABLE pv_pt (id int PRIMARY KEY, v text)", "INSERT INTO pv_pt VALUES (1, 'secret')",
            "CREATE ROLE pv_pg", "CREATE ROLE pv_pm LOGIN", "GRANT SELECT ON pv_pt TO pv_pg", "GRANT pv_pg TO pv_pm",
        ):  # fmt: skip
            su.execute(sql)
        try:
            with psycopg.connect(dsn("pv_pm"), autocommit=True) as m:
                out += [_outcome(m, "SELECT * FROM pv_pt WHERE id = 1") for _ in range(3)]
                su.execute("REVOKE pv_pg FROM pv_pm")
                out.append(_outcome(m, "SELECT * FROM pv_pt WHERE id = 1"))
            su.execute("GRANT SELECT (id) ON pv_pt TO pv_pm")
            for _ in range(3):
                out.append(_outcome(su, "SELECT v FROM pv_pt WHERE id = 1"))
                out.append(_outcome(su, "SELECT id FROM pv_pt WHERE id = 1"))
            su.execute("SET ROLE pv_pm")
            out += [_outcome(su, "SELECT v FROM pv_pt WHERE id = 1"), _outcome(su, "SELECT id FROM pv_pt WHERE id = 1")]
        finally:
            for sql in ("RESET ROLE", "DROP TABLE pv_pt", "DROP ROLE pv_pm", "DROP ROLE pv_pg"):
                _outcome(su, sql)
    return out


def test_a_point_select_is_checked_again_when_privileges_change(proxy: ProxyServer, pg15: PgCluster) -> None:
    db = pg15.new_database("points")
    want = _point_reads(lambda role: pg15.dsn(dbname=db, user=role))
    denied = ("42501", "permission denied for table pv_pt")
    assert want[3] == denied and want[-2:] == [denied, [(1,)]]
    assert _point_reads(lambda role: proxy.dsn(user=role)) == want


#: CREATE/ALTER/DROP ROLE by a CREATEROLE role, a plain role and a superuser: PostgreSQL
#: 15's rules (user.c), BYPASSRLS and CONNECTION LIMIT kept, SYSID's NOTICE; a CREATE ROLE
#: whose IN ROLE is refused leaves no role behind.
ROLE_ADMIN = [
    "CREATE ROLE rr_admin CREATEROLE LOGIN",
    "CREATE ROLE rr_plain LOGIN",
    "CREATE ROLE rr_su SUPERUSER",
    "SET SESSION AUTHORIZATION rr_admin",
    "CREATE ROLE rr_new",
    "CREATE ROLE rr_new2 SUPERUSER",
    "CREATE ROLE rr_new3 REPLICATION",
    "CREATE ROLE rr_new4 BYPASSRLS",
    "CREATE ROLE rr_new5 IN ROLE rr_su",
    "SELECT count(*) FROM pg_roles WHERE rolname = 'rr_new5'",
    "CREATE ROLE rr_lim CONNECTION LIMIT 3 SYSID 77",
    "COMMENT ON ROLE rr_lim IS 'limited'",
    "COMMENT ON ROLE rr_su IS 'x'",
    "COMMENT ON ROLE rr_nope IS 'x'",
    "SELECT shobj_description('rr_lim'::regrole, 'pg_authid'), shobj_description('rr_su'::regrole, 'pg_authid')",
    "BEGIN",
    "COMMENT ON ROLE rr_lim IS 'rolled back'",
    "ROLLBACK",
    "SELECT d.description FROM pg_shdescription d JOIN pg_roles r ON r.oid = d.objoid WHERE r.rolname LIKE 'rr\\_%'",
    "SELECT rolname, rolconnlimit, rolbypassrls, rolcreatedb FROM pg_roles WHERE rolname LIKE 'rr\\_%' ORDER BY 1",
    "ALTER ROLE rr_new CREATEDB",
    "ALTER ROLE rr_su NOSUPERUSER",
    "ALTER ROLE rr_new BYPASSRLS",
    "ALTER ROLE rr_new REPLICATION",
    "ALTER ROLE rr_nope CREATEDB",
    "DROP ROLE rr_su",
    "DROP ROLE rr_admin",
    "DROP ROLE rr_new",
    "SET SESSION AUTHORIZATION rr_plain",
    "CREATE ROLE rr_x",
    "ALTER ROLE rr_lim CREATEDB",
    "ALTER ROLE rr_plain PASSWORD 'secret'",
    "ALTER ROLE rr_plain CONNECTION LIMIT 2",
    "DROP ROLE rr_lim",
    "COMMENT ON ROLE rr_lim IS 'no'",
    "DROP ROLE IF EXISTS rr_nope",
    "RESET SESSION AUTHORIZATION",
    "CREATE ROLE rr_bad CONNECTION LIMIT -5",
    "CREATE ROLE rr_byp BYPASSRLS",
    "ALTER ROLE rr_byp NOBYPASSRLS",
    "SELECT rolname, rolbypassrls, rolconnlimit FROM pg_authid WHERE rolname IN ('rr_byp', 'rr_lim') ORDER BY 1",
    "COMMENT ON ROLE rr_lim IS ''",
    "SELECT count(*) FROM pg_shdescription d JOIN pg_roles r ON r.oid = d.objoid WHERE r.rolname LIKE 'rr\\_%'",
    "DROP ROLE rr_admin, rr_plain, rr_su, rr_lim, rr_byp",
]


def test_role_administration_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("roles")), ROLE_ADMIN).close()


def test_a_connection_limit_holds_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    """CONNECTION LIMIT: one more session than the limit is FATAL 53300; a superuser is
    not held to it."""
    outcomes = []
    for dsn in (proxy.dsn, pg15.dsn):
        with psycopg.connect(dsn(), autocommit=True) as su:
            su.execute("CREATE ROLE rr_one LOGIN CONNECTION LIMIT 1")
            su.execute("CREATE ROLE rr_zero SUPERUSER LOGIN CONNECTION LIMIT 0")
        try:
            with psycopg.connect(dsn(user="rr_one")):
                try:
                    psycopg.connect(dsn(user="rr_one")).close()
                    second = "ok"
                except psycopg.OperationalError as e:
                    second = str(e).strip().splitlines()[-1].split(" failed: ")[-1]
            with psycopg.connect(dsn(user="rr_one")):  # (the first one is gone)
                pass
            with psycopg.connect(dsn(user="rr_zero")):
                pass
            outcomes.append(second)
        finally:
            with psycopg.connect(dsn(), autocommit=True) as su:
                su.execute("DROP ROLE rr_one, rr_zero")
    assert outcomes[0] == outcomes[1]
    assert outcomes[0] == 'FATAL:  too many connections for role "rr_one"'
