"""Domains as PostgreSQL 15 makes, prints and enforces them: CREATE DOMAIN with NOT NULL,
DEFAULT and named and unnamed CHECK constraints, a domain over a domain and over an array;
columns of a domain written by INSERT, multi-row VALUES, INSERT … SELECT, UPDATE, DEFAULT
and COPY; casts to a domain in queries; ALTER DOMAIN (defaults, NOT NULL, ADD/DROP/VALIDATE
CONSTRAINT, RENAME); DROP DOMAIN and DROP TYPE with their dependents; the catalog rows
(``pg_type``, ``pg_constraint``, ``pg_attribute``, ``format_type``, ``pg_typeof``) — each
statement compared with a real PostgreSQL 15 — and a stock subscriber receiving a table
with domain columns (the Type message pgoutput sends for them), initial copy and stream."""

from __future__ import annotations

import json
import subprocess
import sys

import psycopg
import pytest

from tests.integration.test_subscriber import text_and_binary_subscribers, wait_identical
from tests.pgcluster import PgCluster
from tests.pgcompare import pgoutput_messages, recvlogical, same_answers
from tests.proxy import ProxyServer

_TYPES = (
    "select typname, typtype, typbasetype::regtype, typtypmod, typnotnull, typdefault, typndims, typcollation,"
    " typlen, typbyval, typcategory, typinput, typoutput, typreceive, typsend, typalign, typstorage,"
    " typelem::regtype, typarray::regtype from pg_type where typnamespace = 'public'::regnamespace"
    " and typname like '%dm\\_%' order by typname"
)
_CONSTRAINTS = (
    "select conname, contype, contypid::regtype, conrelid, pg_get_constraintdef(oid), pg_get_constraintdef(oid, true),"
    " convalidated, conkey from pg_constraint where contypid <> 0 and connamespace = 'public'::regnamespace order by conname"
)

CREATE = [
    "create domain dm_pos as int check (value > 0)",
    "create domain dm_short as text not null default 'x' constraint dm_short_len check (length(value) < 5)",
    "create domain dm_money as numeric(10,2) default 0 check (value >= 0) check (value < 1000)",
    "create domain dm_code varchar(4) null",
    "create domain dm_small as dm_pos check (value < 100)",
    "create domain dm_ints as int[]",
    "create domain dm_pos as int",
    "create domain dm_bad as nosuchtype",
    "create domain dm_bad as int not null null",
    "create domain dm_bad as int default 1 default 2",
    "create domain dm_bad as int unique",
    "create domain dm_bad as int primary key",
    "create domain dm_bad as int check (x > 0)",
    "create domain dm_bad as dm_pos(3)",
    "create domain dm_bad int4 collate \"C\"",
    "create domain dm_bad as anyelement",
    "create domain dm_bad as record",
    _TYPES,
    _CONSTRAINTS,
    "select format_type('dm_pos'::regtype, -1), 'dm_small'::regtype, 'dm_pos[]'::regtype::oid = 'dm_pos'::regtype::oid",
    "create table dm_t (id int primary key, p dm_pos, s dm_short, m dm_money, c dm_code, sm dm_small, a dm_ints)",
    "select attname, atttypid::regtype, atttypmod, attndims, attnotnull, atthasdef from pg_attribute"
    " where attrelid = 'dm_t'::regclass and attnum > 0 order by attnum",
    "select column_name, data_type from information_schema.columns where table_name = 'dm_t' order by ordinal_position",
]

WRITES = [
    "insert into dm_t values (1, 5, 'ab', 12.5, 'abcd', 7, '{1,2}')",
    "insert into dm_t (id) values (2)",
    "insert into dm_t (id, p) values (3, 0)",
    "insert into dm_t (id, p) values (3, -1), (4, 1)",
    "insert into dm_t (id, s) values (3, null)",
    "insert into dm_t (id, s) values (3, 'abcdef')",
    "insert into dm_t (id, m) values (3, -0.01)",
    "insert into dm_t (id, m) values (3, 1000)",
    "insert into dm_t (id, m) values (3, 999.999)",
    "insert into dm_t (id, c) values (3, 'abcde')",
    "insert into dm_t (id, sm) values (3, 100)",
    "insert into dm_t (id, sm) values (3, 0)",
    "insert into dm_t (id, a) values (3, '{1,2,3}')",
    "insert into dm_t (id, p, s) values (3, default, default)",
    "insert into dm_t (id, p, s) select 10 + g, g, 'g' || g from generate_series(1, 3) g",
    "insert into dm_t (id, p) select 20 + g, g - 2 from generate_series(1, 3) g",
    "update dm_t set p = p - 1 where id = 11",
    "update dm_t set p = p + 1 where id = 11",
    "update dm_t set s = default where id = 12",
    "update dm_t set s = null where id = 12",
    "select id, p, s, m, c, sm, a from dm_t order by id",
    "select p + 1, p * 2, s || '!', pg_typeof(p), pg_typeof(p + 1), pg_typeof(s) from dm_t where id = 1",
    "select 5::dm_pos, '7'::dm_pos, cast(3 as dm_small), null::dm_pos, pg_typeof(5::dm_pos)",
    # a result of one domain throughout is of the domain; any other input smashes it
    "select pg_typeof(coalesce(4::dm_pos, 7::dm_pos)), pg_typeof(coalesce(4::dm_pos, 7)), pg_typeof(coalesce(p, p)),"
    " pg_typeof(greatest(p, p)), pg_typeof(case when true then p else p end), pg_typeof(case when true then p end),"
    " pg_typeof(coalesce(s, 'q')) from dm_t where id = 1",
    "select pg_typeof(x) from (select 1::dm_pos union select 2::dm_pos) s(x)",
    "select pg_typeof(x) from (select 1::dm_pos union all select 2) s(x)",
    "select (-5)::dm_pos",
    "select 100::dm_small",
    "select null::dm_short",
    "select 'toolong'::dm_short",
    "select '{1,2,3,4}'::dm_ints, pg_typeof('{1}'::dm_ints)",
    "select x::dm_pos from (values (1), (2), (0)) v(x)",
    "select 5::dm_pos(2)",
]

ALTER = [
    "alter domain dm_pos add constraint dm_pos_lt check (value < 50)",
    "alter domain dm_pos add constraint dm_pos_lt2 check (value < 3)",
    "alter domain dm_pos add constraint dm_pos_lt3 check (value < 3) not valid",
    _CONSTRAINTS,
    "insert into dm_t (id, p) values (40, 4)",
    "alter domain dm_pos validate constraint dm_pos_lt3",
    "alter domain dm_pos drop constraint dm_pos_lt3",
    "alter domain dm_pos drop constraint dm_pos_lt3",
    "alter domain dm_pos drop constraint if exists dm_pos_lt3",
    "alter domain dm_pos add constraint dm_pos_lt check (value < 60)",
    "insert into dm_t (id, p) values (40, 55)",
    "alter domain dm_code set not null",
    "update dm_t set c = 'z' where c is null",
    "alter domain dm_code set not null",
    "insert into dm_t (id) values (41)",
    "alter domain dm_code drop not null",
    "alter domain dm_code set default 'q'",
    "insert into dm_t (id) values (41)",
    "alter domain dm_code drop default",
    "insert into dm_t (id) values (42)",
    "alter domain dm_short rename constraint dm_short_len to dm_short_length",
    "alter domain dm_money rename to dm_amount",
    _TYPES,
    _CONSTRAINTS,
    "select id, p, s, m, c, sm, a from dm_t order by id",
    "create table dm_add (id int)",
    "insert into dm_add values (1), (2)",
    "alter table dm_add add column a dm_pos",
    "alter table dm_add add column s dm_short",
    "alter table dm_add add column c dm_code",
    "alter table dm_add add column d dm_pos default 0",
    "alter table dm_add add column e dm_pos default 4",
    "alter table dm_add add column f dm_small",
    "select * from dm_add order by id",
    "create table dm_add2 (id int)",
    "alter table dm_add2 add column s dm_short",
    "insert into dm_add2 (id) values (1)",
    "select * from dm_add2",
    "drop table dm_add, dm_add2",
    "alter domain nosuch set default 1",
    "alter domain int4 set default 1",
]

DROP = [
    "drop domain dm_small, dm_pos",
    "drop domain dm_pos, dm_short",
    "comment on domain dm_pos is 'positive'",
    "comment on type dm_small is 'small'",
    "comment on constraint dm_pos_lt on domain dm_pos is 'below 60'",
    "comment on constraint nosuch on domain dm_pos is 'x'",
    "comment on domain int4 is 'x'",
    "select obj_description('dm_pos'::regtype, 'pg_type'), obj_description('dm_small'::regtype, 'pg_type'),"
    " (select obj_description(oid, 'pg_constraint') from pg_constraint where conname = 'dm_pos_lt')",
    "create domain dm_chain1 as int",
    "create domain dm_chain2 as dm_chain1 check (value > 0)",
    "create domain dm_chain3 as dm_chain2",
    "create table dm_c (id int, a dm_chain1, b dm_chain3)",
    "drop domain dm_chain1",
    "drop domain dm_chain1 cascade",
    "select attname, atttypid::regtype from pg_attribute where attrelid = 'dm_c'::regclass and attnum > 0 and not attisdropped",
    "select typname from pg_type where typname like 'dm\\_chain%' order by 1",
    "drop table dm_c",
    "drop domain dm_pos",
    "drop domain dm_small",
    "drop domain dm_pos",
    "drop type dm_short",
    "drop domain int4",
    "drop domain dm_t",
    "drop domain if exists dm_nosuch",
    "drop table dm_t",
    "drop domain dm_small, dm_pos",
    "drop type dm_short",
    "drop domain dm_amount, dm_code, dm_ints",
    # a schema's domains go with it; what uses them elsewhere goes with a CASCADE
    "create schema dm_s",
    "create domain dm_s.sd as int check (value > 0)",
    "create table dm_s.st (a dm_s.sd)",
    "create table dm_pt (id int, a dm_s.sd)",
    "create domain dm_s.sd2 as dm_s.sd",
    "create domain dm_d3 as dm_s.sd",
    "create table dm_s.st2 (id int, b dm_s.sd2, c dm_d3)",
    "drop schema dm_s",
    "drop schema dm_s cascade",
    "select attname, atttypid::regtype from pg_attribute where attrelid = 'dm_pt'::regclass and attnum > 0 and not attisdropped",
    "select count(*) from pg_type where typname in ('sd', 'sd2', 'dm_d3', '_sd')",
    "drop table dm_pt",
    _TYPES,
    _CONSTRAINTS,
]


@pytest.mark.parametrize("statements", [CREATE + WRITES + ALTER + DROP], ids=["domains"])
def test_domains_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster, statements: list[str]) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("dm")), statements).close()


def test_copy_into_domain_columns_is_checked(proxy: ProxyServer, pg15: PgCluster) -> None:
    setup = ["create domain dmc_pos as int check (value > 0)", "create table dmc (id int, v dmc_pos)"]
    answers = []
    for dsn in (proxy.dsn(), pg15.dsn(dbname=pg15.new_database("dmc"))):
        with psycopg.connect(dsn, autocommit=True) as c:
            for s in setup:
                c.execute(s)
            got: list[object] = []
            for data in ("1\t1\n2\t2\n", "3\t3\n4\t-4\n5\t5\n", "6\t\\N\n"):
                try:
                    with c.cursor().copy("COPY dmc FROM STDIN") as cp:
                        cp.write(data)
                    got.append("ok")
                except psycopg.Error as e:
                    got.append((e.sqlstate, str(e).splitlines()[0]))
            got.append(c.execute("select * from dmc order by id").fetchall())
            answers.append(got)
    assert answers[0] == answers[1]


def test_a_subscriber_receives_domain_columns(proxy: ProxyServer, pg15: PgCluster) -> None:
    ddl = (
        "CREATE DOMAIN dms_pos AS int CHECK (VALUE > 0);"
        "CREATE DOMAIN dms_label AS varchar(8) NOT NULL DEFAULT 'none';"
        "CREATE DOMAIN dms_ints AS int[];"
        "CREATE TABLE dms (id int PRIMARY KEY, p dms_pos, l dms_label, a dms_ints)"
    )
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(ddl)
        c.execute("INSERT INTO dms VALUES (1, 1, 'one', '{1}'), (2, 2, 'two', NULL)")  # copied
        c.execute("CREATE PUBLICATION pdms FOR TABLE dms")
    subs = text_and_binary_subscribers(proxy, pg15, ddl, "pdms", "sdms")
    for sub in subs:
        wait_identical(proxy.dsn(), sub, ["dms"])
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("INSERT INTO dms (id, p) VALUES (3, 3)")  # streamed, with the domain's default
        c.execute("UPDATE dms SET p = p + 10, a = '{4,5}' WHERE id = 1")
        c.execute("DELETE FROM dms WHERE id = 2")
    for i, sub in enumerate(subs):
        wait_identical(proxy.dsn(), sub, ["dms"])
        with psycopg.connect(sub, autocommit=True) as c:
            c.execute(f"DROP SUBSCRIPTION sdms{i}")


#: Run in a process of its own: libpq's blocking calls hold the GIL, which the proxy the
#: tests run in this process needs.
_DESCRIBE = r"""
import json, sys
import psycopg
out = []
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    c.execute("create domain dmp_pos as int check (value > 0)")
    c.execute("create table dmp (id int, p dmp_pos)")
    name = dict(c.execute("select oid, typname from pg_type where typname in ('int4', 'dmp_pos')").fetchall())
    pg = c.pgconn
    for q in (b"insert into dmp values ($1, $2)", b"select $1::dmp_pos", b"select p from dmp where p = $1",
              b"update dmp set p = $1 where id = $2"):
        pg.prepare(b"", q)
        d = pg.describe_prepared(b"")
        out.append([[name.get(d.param_type(i)) for i in range(d.nparams)], [name.get(d.ftype(i)) for i in range(d.nfields)]])
    oid = c.execute("select 'dmp_pos'::regtype::oid").fetchone()[0]
    pg.prepare(b"declared", b"insert into dmp values ($1, $2)", [23, oid])
    d = pg.describe_prepared(b"declared")
    out.append([name.get(d.param_type(i)) for i in range(d.nparams)])
    for v in (5, -5):
        r = pg.exec_prepared(b"declared", [(1).to_bytes(4, "big"), v.to_bytes(4, "big", signed=True)], [1, 1])
        sqlstate = r.error_field(psycopg.pq.DiagnosticField.SQLSTATE)
        out.append(sqlstate.decode() if sqlstate else None)
    out.append([list(r) for r in c.execute("select * from dmp").fetchall()])
print(json.dumps(out))
"""


def _described(dsn: str) -> list[object]:
    """ParameterDescription and RowDescription of statements over a domain column (OIDs by
    name: the domain's differs between servers), and a Parse that declares the domain,
    bound in binary."""
    done = subprocess.run([sys.executable, "-c", _DESCRIBE, dsn], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def test_parameters_are_described_as_their_domain(proxy: ProxyServer, pg15: PgCluster) -> None:
    ref = _described(pg15.dsn(dbname=pg15.new_database("dmp")))
    assert ref[0] == [["int4", "dmp_pos"], []]
    assert _described(proxy.dsn()) == ref


def _sa_domains(dsn: str) -> list[object]:
    """What SQLAlchemy's inspector and MetaData.reflect() make of domain columns (its
    domain query reads pg_type, pg_constraint and format_type of the base)."""
    import sqlalchemy as sa

    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(
            "create domain dsa_amount as numeric(10,2) not null default 1 check (value > 0);"
            " create domain dsa_amount2 as dsa_amount; create domain dsa_tags as text[];"
            " create table dsa (id int primary key, p dsa_amount, q dsa_amount2, t dsa_tags)"
        )
    parts = dict(part.split("=", 1) for part in dsn.split())
    engine = sa.create_engine(f"postgresql+psycopg://{parts['user']}@{parts['host']}:{parts['port']}/{parts['dbname']}")
    try:
        insp = sa.inspect(engine)
        meta = sa.MetaData()
        meta.reflect(engine, only=["dsa"])
        return [
            repr(insp.get_columns("dsa")),
            [d for d in insp.get_domains() if d["name"].startswith("dsa_")],
            [(c.name, repr(c.type)) for c in meta.tables["dsa"].columns],
        ]
    finally:
        engine.dispose()


def test_sqlalchemy_reflects_domains_as_from_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    ref = _sa_domains(pg15.dsn(dbname=pg15.new_database("dsa")))
    assert "DOMAIN('dsa_amount2', DOMAIN('dsa_amount', NUMERIC" in ref[0]
    assert _sa_domains(proxy.dsn()) == ref


def _pgoutput(dsn: str) -> list[tuple[object, ...]]:
    """pg_recvlogical's pgoutput stream of writes to a table with domain columns, the
    domains' OIDs (which differ between servers) named through the Type messages."""
    from decoding.pgoutput import proto as P

    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(
            "CREATE DOMAIN dmo_pos AS int CHECK (VALUE > 0); CREATE DOMAIN dmo_ints AS int[];"
            " CREATE DOMAIN dmo_small AS dmo_pos; CREATE TABLE dmo (id int PRIMARY KEY, p dmo_pos, a dmo_ints, s dmo_small);"
            " CREATE PUBLICATION pdmo FOR TABLE dmo"
        )
    recvlogical(dsn, "dmo", "--create-slot", "-P", "pgoutput")
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("INSERT INTO dmo VALUES (1, 1, '{1,2}', 3), (2, 2, NULL, NULL)")
        c.execute("UPDATE dmo SET p = 5 WHERE id = 1")
        end = str(c.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0])  # type: ignore[index]
    out = recvlogical(dsn, "dmo", "--start", "-f", "-", f"--endpos={end}", "--no-loop", "-o", "proto_version=1", "-o", "publication_names=pdmo")
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("SELECT pg_drop_replication_slot('dmo')")
    names: dict[int, str] = {}
    shape: list[tuple[object, ...]] = []
    for m in pgoutput_messages(out):
        if isinstance(m, P.Type):
            names[m.type_oid] = f"domain over {m.namespace}.{m.name}"
            shape.append(("TYPE", names[m.type_oid]))
        elif isinstance(m, P.Relation):
            shape.append(("RELATION", m.name, tuple((c.name, names.get(c.type_oid, c.type_oid), c.type_modifier, c.flags) for c in m.columns)))
        elif isinstance(m, P.Insert | P.Update):
            shape.append((type(m).__name__, m.new.values))
        else:
            shape.append((type(m).__name__,))
    return shape


def test_pgoutput_names_domain_columns_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    """A Type message for each domain column before the Relation (logicalrep_write_typ:
    the domain's OID, named by its base type), the columns typed by the domains' OIDs."""
    theirs = _pgoutput(pg15.dsn(dbname=pg15.new_database("dmo")))
    assert ("TYPE", "domain over .int4") in theirs and ("TYPE", "domain over ._int4") in theirs
    assert _pgoutput(proxy.dsn()) == theirs


PSQL_SCRIPT = r"""
create domain dps_amount as numeric(10,2) not null default 1 constraint dps_amount_pos check (value > 0);
create schema dps;
create domain dps.code as varchar(4);
create table dps_t (id int primary key, a dps_amount, c dps.code);
comment on domain dps_amount is 'money';
\dD dps*
\dD+ dps_amount
\dD dps.*
\dT dps*
\d dps_t
set search_path = dps, public;
\d dps_t
"""


def test_psql_describes_domains_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    """psql's \\dD, \\dT and \\d of domains and domain columns (a domain off the search path
    qualified)."""
    outs = [
        subprocess.run([str(pg15.bindir / "psql"), "-X", "-d", dsn], input=PSQL_SCRIPT, capture_output=True, text=True, timeout=60)
        for dsn in (proxy.dsn(), pg15.dsn(dbname=pg15.new_database("dps")))
    ]
    assert (outs[0].stdout, outs[0].stderr) == (outs[1].stdout, outs[1].stderr)
    assert "List of domains" in outs[0].stdout and "dps.code" in outs[0].stdout and "ERROR" not in outs[0].stderr


OWNERS = [
    "create domain dm_owned as int",
    "create type dm_owned_enum as enum ('a')",
    "alter domain dm_owned owner to dm_owner_role",
    "alter type dm_owned_enum owner to dm_owner_role",
    "alter type dm_owned owner to postgres",
    "alter domain dm_owned_enum owner to dm_owner_role",
    "alter domain dm_nosuch owner to dm_owner_role",
    "select typname, typowner::regrole::text from pg_type where typname in ('dm_owned', '_dm_owned', 'dm_owned_enum', '_dm_owned_enum') order by 1",
    "drop domain dm_owned",
    "drop type dm_owned_enum",
]


def test_domain_and_enum_owners_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    """ALTER DOMAIN/TYPE … OWNER TO, as pg_dump's scripts write it for every domain."""
    ref = pg15.dsn(dbname=pg15.new_database("dmown"))
    for dsn in (proxy.dsn(), ref):
        with psycopg.connect(dsn, autocommit=True) as c:
            if c.execute("select count(*) from pg_roles where rolname = 'dm_owner_role'").fetchone() == (0,):
                c.execute("create role dm_owner_role")
    same_answers(proxy.dsn(), ref, OWNERS).close()
