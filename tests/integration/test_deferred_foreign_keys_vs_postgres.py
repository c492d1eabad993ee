"""Deferred foreign keys beside PostgreSQL 15 — ``DEFERRABLE [INITIALLY DEFERRED]`` of a
column's REFERENCES, of a table's FOREIGN KEY and of ALTER TABLE … ADD CONSTRAINT (as
Django makes every foreign key): checked at COMMIT (a failing one rolls the transaction
back), at PREPARE TRANSACTION and at ``SET CONSTRAINTS … IMMEDIATE``; a row or a key that
is gone by then is not checked; ROLLBACK TO SAVEPOINT takes its checks away; the catalog
rows (``condeferrable``, ``condeferred``, ``pg_get_constraintdef``, information_schema)
and the errors of SET CONSTRAINTS and of the DEFERRABLE clauses. Through psycopg
(extended protocol) and psql (simple protocol, where an implicit transaction's failed
commit replaces the statement's CommandComplete)."""

from __future__ import annotations

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import psql_outputs, same_answers
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

STATEMENTS = [
    'CREATE TABLE dp (id int PRIMARY KEY)',
    'CREATE TABLE dc (id int PRIMARY KEY, p int REFERENCES dp DEFERRABLE INITIALLY DEFERRED)',
    'CREATE TABLE dc2 (id int, p int, CONSTRAINT dc2_p FOREIGN KEY (p) REFERENCES dp DEFERRABLE)',
    "SELECT conname, condeferrable, condeferred, pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'f' ORDER BY 1",
    "SELECT constraint_name, is_deferrable, initially_deferred FROM information_schema.table_constraints WHERE constraint_type = 'FOREIGN KEY' ORDER BY 1",
    'BEGIN',
    'INSERT INTO dc VALUES (1, 10)',
    'INSERT INTO dp VALUES (10)',
    'COMMIT',
    'BEGIN',
    'INSERT INTO dc VALUES (2, 20)',
    "SELECT 'inside'",
    'COMMIT',
    'SELECT * FROM dc ORDER BY id',
    'INSERT INTO dc VALUES (3, 30)',
    'BEGIN',
    'DELETE FROM dp WHERE id = 10',
    'INSERT INTO dp VALUES (10)',
    'COMMIT',
    'BEGIN',
    'DELETE FROM dp WHERE id = 10',
    'COMMIT',
    'BEGIN',
    'INSERT INTO dc VALUES (4, 40)',
    'DELETE FROM dc WHERE id = 4',
    'COMMIT',
    'BEGIN',
    'SET CONSTRAINTS ALL IMMEDIATE',
    'INSERT INTO dc VALUES (5, 50)',
    'ROLLBACK',
    'BEGIN',
    'INSERT INTO dc VALUES (5, 50)',
    'SET CONSTRAINTS dc_p_fkey IMMEDIATE',
    'ROLLBACK',
    'BEGIN',
    'SET CONSTRAINTS dc2_p DEFERRED',
    'INSERT INTO dc2 VALUES (1, 60)',
    'INSERT INTO dp VALUES (60)',
    'COMMIT',
    'BEGIN',
    'INSERT INTO dc2 VALUES (2, 70)',
    'ROLLBACK',
    'SET CONSTRAINTS ALL DEFERRED',
    'BEGIN',
    'SET CONSTRAINTS nosuch DEFERRED',
    'ROLLBACK',
    'BEGIN',
    'SET CONSTRAINTS dp_pkey DEFERRED',
    'ROLLBACK',
    'BEGIN',
    'SAVEPOINT s1',
    'INSERT INTO dc VALUES (6, 80)',
    'ROLLBACK TO s1',
    'COMMIT',
    'BEGIN',
    'INSERT INTO dc VALUES (7, 90)',
    "PREPARE TRANSACTION 'dtx'",
    'SELECT * FROM dc ORDER BY id',
    'SELECT * FROM dc2 ORDER BY id',
    'CREATE TABLE dc3 (p int REFERENCES dp INITIALLY DEFERRED)',
    'CREATE TABLE dc4 (p int REFERENCES dp NOT DEFERRABLE INITIALLY DEFERRED)',
    'ALTER TABLE dc3 ADD CONSTRAINT dc3_x FOREIGN KEY (p) REFERENCES dp (id) DEFERRABLE INITIALLY DEFERRED',
    "SELECT conname, condeferrable, condeferred FROM pg_constraint WHERE conrelid = 'dc3'::regclass ORDER BY 1",
    "ROLLBACK PREPARED 'dtx'",
    # a table with checks queued for commit is not altered, truncated nor dropped (55006)
    'BEGIN',
    'INSERT INTO dc VALUES (20, 999)',
    'ALTER TABLE dc DROP CONSTRAINT dc_p_fkey',
    'ROLLBACK',
    'BEGIN',
    'INSERT INTO dc VALUES (20, 999)',
    'TRUNCATE dc',
    'ROLLBACK',
    'BEGIN',
    'INSERT INTO dc VALUES (20, 999)',
    'DROP TABLE dc',
    'ROLLBACK',
    'BEGIN',
    'INSERT INTO dc VALUES (20, 999)',
    'ALTER TABLE dp ADD COLUMN x int',
    'ROLLBACK',
]


def test_deferred_foreign_keys_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("dfk")), STATEMENTS).close()


PSQL_SCRIPT = r"""
create table dfp (id int primary key);
create table dfc (p int references dfp deferrable initially deferred);
insert into dfc values (1);
insert into dfc values (2); insert into dfp values (2);
begin;
insert into dfc values (3);
commit;
select * from dfc;
"""


def test_psql_sees_the_commit_fail_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    ours, ref = psql_outputs(str(pg15.bindir / "psql"), PSQL_SCRIPT, proxy.dsn(), pg15.dsn(dbname=pg15.new_database("dfkp")))
    assert ours == ref
    assert ref[1].count("violates foreign key constraint") == 3


def test_a_prepared_transaction_is_checked_at_prepare(proxy: ProxyServer, pg15: PgCluster) -> None:
    for dsn in (proxy.dsn(), pg15.dsn(dbname=pg15.new_database("dfk2"))):
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("create table dfq (id int primary key)")
            c.execute("create table dfr (p int references dfq deferrable initially deferred)")
            c.execute("begin")
            c.execute("insert into dfr values (9)")
            with pytest.raises(psycopg.errors.ForeignKeyViolation):
                c.execute("prepare transaction 'dfk_gid'")
            assert c.execute("select count(*) from pg_prepared_xacts where gid = 'dfk_gid'").fetchone() == (0,)
