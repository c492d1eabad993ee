"""Who may create, alter and drop publications, as PostgreSQL 15 decides it (42501): CREATE
on the database to create one (its owner's by default; the proxy keeps no grants), a
superuser for FOR ALL TABLES and TABLES IN SCHEMA, the owner to alter or drop one. Each
statement by a plain login role on a real PostgreSQL 15 and on the proxy, same outcome."""

from __future__ import annotations

import psycopg

from tests.pgcluster import PgCluster
from tests.pgcompare import same_answers
from tests.proxy import ProxyServer

SETUP = [
    "CREATE ROLE pa_plain LOGIN",
    "CREATE TABLE pat (id int PRIMARY KEY)",
    "CREATE PUBLICATION pa_by_su FOR TABLE pat",
]
AS_PLAIN = [
    "CREATE PUBLICATION pa_mine",
    "CREATE PUBLICATION pa_mine FOR ALL TABLES",
    "CREATE PUBLICATION pa_mine FOR TABLES IN SCHEMA public",
    "CREATE PUBLICATION pa_mine FOR TABLE pat",
    "ALTER PUBLICATION pa_by_su ADD TABLE pat",
    "ALTER PUBLICATION pa_by_su SET (publish = 'insert')",
    "ALTER PUBLICATION pa_by_su DROP TABLE pat",
    "DROP PUBLICATION pa_by_su",
    "DROP PUBLICATION IF EXISTS pa_nope",
    "DROP PUBLICATION pa_nope",
    "COMMENT ON PUBLICATION pa_by_su IS 'not mine'",
]
CLEANUP = ["DROP PUBLICATION IF EXISTS pa_by_su, pa_mine", "DROP TABLE IF EXISTS pat", "DROP ROLE IF EXISTS pa_plain"]


def _fate(c: psycopg.Connection, sql: str) -> tuple[str, str]:
    try:
        c.execute(sql)
    except psycopg.Error as e:
        return str(e.sqlstate), str(e.diag.message_primary)
    return "ok", ""


def _outcomes(su_dsn: str, plain_dsn: str) -> list[tuple[str, str]]:
    with psycopg.connect(su_dsn, autocommit=True) as su:
        for sql in SETUP:
            assert _fate(su, sql)[0] == "ok", sql
        try:
            with psycopg.connect(plain_dsn, autocommit=True) as me:
                return [_fate(me, sql) for sql in AS_PLAIN]
        finally:
            for sql in CLEANUP:
                _fate(su, sql)


def test_publication_privileges_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    db = pg15.new_database("pubaccess")
    want = _outcomes(pg15.dsn(dbname=db), pg15.dsn(dbname=db, user="pa_plain"))
    got = _outcomes(proxy.dsn(), proxy.dsn(user="pa_plain"))
    assert [w[0] for w in want][:5] == ["42501"] * 5
    # (the database's name differs: PostgreSQL's is the test's own)
    assert got == [(c, m.replace(f"database {db}", "database postgres")) for c, m in want]


def test_a_member_of_the_owner_acts_as_the_owner(proxy: ProxyServer, pg15: PgCluster) -> None:
    """CREATE on the database and a publication's ownership reach the roles that have the
    owner's privileges (a member of the database's owner here)."""

    def outcomes(su_dsn: str, plain_dsn: str) -> list[tuple[str, str]]:
        with psycopg.connect(su_dsn, autocommit=True) as su:
            for sql in [*SETUP, "GRANT postgres TO pa_plain"]:
                assert _fate(su, sql)[0] == "ok", sql
            try:
                with psycopg.connect(plain_dsn, autocommit=True) as me:
                    return [_fate(me, sql) for sql in (
                        "CREATE PUBLICATION pa_mine", "ALTER PUBLICATION pa_by_su SET (publish = 'insert')",
                        "CREATE PUBLICATION pa_all FOR ALL TABLES", "DROP PUBLICATION pa_by_su",
                    )]
            finally:
                for sql in ["REVOKE postgres FROM pa_plain", "DROP PUBLICATION IF EXISTS pa_all", *CLEANUP]:
                    _fate(su, sql)

    db = pg15.new_database("pubmember")
    want = outcomes(pg15.dsn(dbname=db), pg15.dsn(dbname=db, user="pa_plain"))
    got = outcomes(proxy.dsn(), proxy.dsn(user="pa_plain"))
    assert got == want
    assert want[0] == ("ok", "")


#: INSERT … ON CONFLICT DO UPDATE of a table published for updates without a replica
#: identity is refused before any row is written (CheckValidResultRel), conflict or not;
#: DO NOTHING is an insert only.
ON_CONFLICT = [
    "CREATE TABLE pa_no_ri (a int UNIQUE, b int)",
    "CREATE PUBLICATION pa_all_upd FOR TABLE pa_no_ri",
    "INSERT INTO pa_no_ri VALUES (1, 1) ON CONFLICT (a) DO UPDATE SET b = 2",
    "INSERT INTO pa_no_ri VALUES (1, 1) ON CONFLICT (a) DO NOTHING",
    "INSERT INTO pa_no_ri VALUES (1, 1) ON CONFLICT (a) DO UPDATE SET b = 2",
    "SELECT * FROM pa_no_ri",
    "ALTER PUBLICATION pa_all_upd SET (publish = 'insert')",
    "INSERT INTO pa_no_ri VALUES (1, 1) ON CONFLICT (a) DO UPDATE SET b = 2",
    "SELECT * FROM pa_no_ri",
    "COMMENT ON PUBLICATION pa_all_upd IS 'upserts'",
    "COMMENT ON PUBLICATION pa_nope IS 'x'",
    "SELECT p.pubname, d.description FROM pg_description d JOIN pg_publication p ON p.oid = d.objoid",
    "DROP PUBLICATION pa_all_upd",
    "SELECT count(*) FROM pg_description WHERE classoid = 'pg_publication'::regclass",
    "DROP TABLE pa_no_ri",
]


def test_upsert_and_comments_of_a_publication_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("pubupsert")), ON_CONFLICT).close()
