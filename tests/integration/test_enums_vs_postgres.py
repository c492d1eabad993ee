"""User enums as PostgreSQL 15 makes, orders and prints them: CREATE TYPE … AS ENUM,
ALTER TYPE … ADD VALUE [IF NOT EXISTS] [BEFORE | AFTER] and RENAME TO with their errors;
columns of an enum and of an array of one, written and read, compared and sorted by the
enum's order; casts, min/max, enum_first/enum_last/enum_range; the catalog rows
(``pg_enum``, ``pg_type``, ``format_type``, ``information_schema.columns``); a foreign key
between enum columns; a label added in an open transaction (55P04); DROP TYPE with its
dependents — each statement compared with a real PostgreSQL 15. Then COPY, a stock
subscriber (text and binary) receiving enum columns, the pgoutput Type messages that name
them, psql's ``\\dT+`` and ``\\d``, SQLAlchemy's native Enum and its reflection.

Not compared (the proxy refuses them with 0A000 by design, PostgreSQL accepts them):
``ALTER TYPE … RENAME VALUE`` of an existing label to a new one, and CHECK constraints (of
a table or a domain) that order enum values (``<``, ``>``…). PostgreSQL's own errors of
RENAME VALUE, which come first, are compared, and so are CHECKs that test for equality."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import psycopg
import pytest

from tests.integration.test_subscriber import text_and_binary_subscribers, wait_identical
from tests.pgcluster import PgCluster
from tests.pgcompare import Client, recorded_stream
from tests.proxy import ProxyServer

_LONG = "x" * 64  # one byte over NAMEDATALEN - 1

_LABELS = "select enumlabel, enumsortorder from pg_enum where enumtypid = 'e_mood'::regtype order by enumsortorder"
_TYPES = (
    "select typname, typtype, typcategory, typlen, typbyval, typinput, typoutput, typreceive, typsend,"
    " typalign, typstorage, typdelim, typelem::regtype, typarray <> 0, typbasetype, typnotnull, typndims,"
    " typcollation, format_type(oid, null) from pg_type where typnamespace = 'public'::regnamespace"
    " and typname in ('e_mood', '_e_mood') order by typname"
)

CREATE = [
    "create type e_mood as enum ('sad', 'ok', 'happy')",
    "create type e_mood as enum ('x')",
    "create type e_empty as enum ()",
    f"create type e_bad as enum ('{_LONG}')",
    "create type e_bad as enum ('a', 'b', 'a')",
    "select typname from pg_type where typname in ('e_empty', 'e_bad') order by 1",
    "select enum_range(null::e_empty), enum_first(null::e_empty)",
    _LABELS,
    "alter type e_mood add value 'meh' before 'ok'",
    "alter type e_mood add value 'ecstatic' after 'happy'",
    "alter type e_mood add value 'angry'",
    "alter type e_mood add value 'blue' after 'sad'",
    "alter type e_mood add value 'first' before 'sad'",
    _LABELS,
    "alter type e_mood add value 'meh'",
    "alter type e_mood add value 'meh' after 'sad'",
    "alter type e_mood add value if not exists 'meh'",
    "alter type e_mood add value if not exists 'meh' before 'ok'",
    "alter type e_mood add value 'x' before 'nosuch'",
    "alter type e_mood add value 'x' after 'nosuch'",
    f"alter type e_mood add value '{_LONG}'",
    "alter type e_mood add value ''",
    "alter type e_nosuch add value 'x'",
    # RENAME VALUE: PostgreSQL's own errors (a rename that would succeed is refused, 0A000)
    "alter type e_mood rename value 'nosuch' to 'x'",
    "alter type e_mood rename value 'sad' to 'ok'",
    _LABELS,
    _TYPES,
    "select format_type('e_mood'::regtype, null), format_type('e_mood[]'::regtype, -1), 'e_mood'::regtype,"
    " 'e_mood[]'::regtype, '_e_mood'::regtype, 'public.e_mood'::regtype",
    "select 'e_mood[]'::regtype::oid = (select typarray from pg_type where typname = 'e_mood'),"
    " (select typelem from pg_type where typname = '_e_mood') = 'e_mood'::regtype::oid",
    "select count(*), count(distinct oid), bool_and(enumtypid = 'e_mood'::regtype) from pg_enum"
    " where enumtypid = 'e_mood'::regtype",
]

WRITES = [
    "create table e_t (id int primary key, m e_mood, ms e_mood[])",
    "select attname, atttypid::regtype, attndims, attnotnull from pg_attribute"
    " where attrelid = 'e_t'::regclass and attnum > 0 order by attnum",
    "select column_name, data_type, udt_schema, udt_name, character_maximum_length from information_schema.columns"
    " where table_name = 'e_t' order by ordinal_position",
    "insert into e_t values (1, 'sad', '{sad,happy}'), (2, 'happy', '{}'), (3, 'meh', null),"
    " (4, null, '{ok,ok}'), (5, 'angry', '{angry,NULL}'), (6, 'ok', '{ecstatic,sad}')",
    "insert into e_t values (7, 'nope', null)",
    "insert into e_t values (7, 'Sad', null)",
    "insert into e_t values (7, 'sad', '{sad,nope}')",
    "insert into e_t values (7, '', null)",
    "insert into e_t (id, m) values (7, 'first'), (8, 'x')",
    "insert into e_t (id, m) select 10 + g, (array['blue', 'ecstatic', 'first'])[g]::e_mood from generate_series(1, 3) g",
    "insert into e_t (id, m) select 20, 'nope'::text::e_mood",
    "update e_t set m = 'ecstatic' where id = 2",
    "update e_t set m = 'bad' where id = 2",
    "update e_t set ms = array_append(ms, 'ok') where id = 1",
    "update e_t set ms = array_append(ms, 'nope') where id = 1",
    "select id, m, ms from e_t order by id",
    "select id, m::text, m::varchar, m::text::e_mood, ms::text from e_t order by id",
    "select id from e_t where m = 'sad'",
    "select id, m from e_t where m < 'ok' order by id",
    "select id, m from e_t where m >= 'happy' order by id",
    "select id, m from e_t where m > 'meh' and m <= 'ecstatic' order by id",
    "select id, m from e_t where m <> 'sad' order by id",
    "select id from e_t where m in ('sad', 'angry') order by id",
    "select id from e_t where m not in ('sad', 'angry') order by id",
    "select id from e_t where m = any('{sad,ok,blue}') order by id",
    "select id from e_t where ms @> '{ok}' order by id",
    "select id from e_t where m = any(ms) order by id",
    "select id from e_t where 'sad' = any(ms) order by id",
    "select id from e_t where m < 'nope'",
    "select m from e_t order by m",
    "select m from e_t order by m desc nulls last, id",
    "select id, m from e_t order by m::text, id",
    "select min(m), max(m), count(m), count(distinct m) from e_t",
    "select m, count(*) from e_t group by m order by m",
    "select distinct m from e_t order by m",
    "select ms from e_t order by ms, id",
    "select array_length(ms, 1), cardinality(ms), ms[1]::text, ms[2] is null from e_t order by id",
    "select 'sad'::e_mood, cast('ok' as e_mood), 'happy'::e_mood::text, 'meh'::text::e_mood,"
    " e_mood 'angry', '{sad,ok}'::e_mood[], '{}'::e_mood[]",
    "select 'nope'::e_mood",
    "select '{sad,nope}'::e_mood[]",
    "select 'sad'::e_mood < 'happy'::e_mood, 'angry'::e_mood > 'ecstatic', 'first'::e_mood < 'sad',"
    " 'blue'::e_mood between 'sad' and 'meh', greatest('sad'::e_mood, 'ok'), least('sad'::e_mood, 'first')",
    "select m || '!', upper(m::text), length(m::text) from e_t where id = 1",
    "select enum_first(null::e_mood), enum_last(null::e_mood), enum_range(null::e_mood)",
    "select enum_range('meh'::e_mood, 'happy'::e_mood), enum_range(null, 'ok'::e_mood),"
    " enum_range('happy'::e_mood, null), enum_range('happy'::e_mood, 'sad'::e_mood), enum_range(null::e_mood, null)",
    "select enum_range(m), enum_first(m) from e_t where id = 1",
    "select pg_typeof(m), pg_typeof(ms), pg_typeof(m::text), pg_typeof(enum_range(null::e_mood)),"
    " pg_typeof(enum_first(null::e_mood)) from e_t where id = 1",
    "select case when m > 'ok' then 'high' else 'low' end from e_t where m is not null order by id",
    "select coalesce(m, 'ok') from e_t order by id",
]

FOREIGN = [
    "create table e_parent (m e_mood primary key, note text)",
    "insert into e_parent values ('sad', 's'), ('ok', 'o'), ('happy', 'h')",
    "insert into e_parent values ('sad', 'again')",
    "create table e_child (id int primary key, m e_mood references e_parent)",
    "insert into e_child values (1, 'sad'), (2, 'ok'), (3, null)",
    "insert into e_child values (4, 'angry')",
    "update e_child set m = 'blue' where id = 1",
    "delete from e_parent where m = 'sad'",
    "delete from e_parent where m = 'happy'",
    "select c.id, c.m, p.note from e_child c left join e_parent p on p.m = c.m order by c.id",
    "select conname, contype, pg_get_constraintdef(oid) from pg_constraint"
    " where conrelid in ('e_parent'::regclass, 'e_child'::regclass) order by conname",
]

TRANSACTIONS = [
    "begin",
    "alter type e_mood add value 'new'",
    "select 'new'::e_mood",
    "rollback",
    "begin",
    "alter type e_mood add value 'new'",
    "insert into e_t (id, m) values (30, 'new')",
    "rollback",
    "begin",
    "alter type e_mood add value 'new'",
    "select 'sad'::e_mood, 'meh'::e_mood",
    "select count(*) from pg_enum where enumtypid = 'e_mood'::regtype",
    "rollback",
    _LABELS,
    "select 'new'::e_mood",
    "begin",
    "alter type e_mood add value 'new' after 'angry'",
    "commit",
    "select 'new'::e_mood, enum_last(null::e_mood)",
    "insert into e_t (id, m) values (30, 'new')",
    "select id, m from e_t where m > 'ecstatic' order by id",
    # a type made in the same transaction
    "begin",
    "create type e_fresh as enum ('a')",
    "alter type e_fresh add value 'b'",
    "select 'a'::e_fresh",
    "select 'b'::e_fresh",
    "rollback",
    "select count(*) from pg_type where typname = 'e_fresh'",
]

DROP = [
    "create type e_drop as enum ('p', 'q')",
    "create type e_other as enum ('z')",
    "create table e_d (id int, a e_drop, b e_drop[], c e_other)",
    "insert into e_d values (1, 'p', '{q,p}', 'z')",
    "drop type e_drop",
    "drop type e_drop, e_other",
    "drop type e_drop cascade",
    "select attname, atttypid::regtype from pg_attribute where attrelid = 'e_d'::regclass and attnum > 0 and not attisdropped order by attnum",
    "select * from e_d",
    "select count(*) from pg_type where typname in ('e_drop', '_e_drop')",
    "select count(*) from pg_enum where enumlabel in ('p', 'q')",
    "drop type e_nosuch",
    "drop type int4",
    "drop type if exists e_nosuch",
    "drop type if exists e_nosuch, e_other",
    "drop type e_other",
    "drop table e_d",
    "drop type if exists e_nosuch, e_other",
    "drop type e_mood",
    "drop table e_child, e_parent",
    "drop type e_mood",
    "drop table e_t",
    "drop type e_mood, e_empty",
    "select count(*) from pg_type where typnamespace = 'public'::regnamespace and typname ~ '^_?e_[a-z]+$'",
    "select count(*) from pg_enum where enumtypid in (select oid from pg_type where typname ~ '^e_[a-z]+$')",
]


_OID = re.compile(r"\b\d{5,}\b")


class _Named(Client):
    """A Client whose result columns of user types (OIDs that differ between servers) are
    named by the server's own pg_type — the RowDescription's OID must be the type's — and
    whose error details have OIDs masked (pg_enum's unique index names its enumtypid)."""

    def __init__(self, dsn: str) -> None:
        super().__init__(dsn)
        self.details: list[str | None] = []  # a NOTICE's DETAIL (DROP … CASCADE lists what goes)
        self.conn.add_notice_handler(lambda d: self.details.append(d.message_detail))

    def __call__(self, sql: str) -> tuple[object, ...]:
        got = super().__call__(sql)
        if self.details:
            got, self.details = (*got, self.details), []
        if got[0] == "error":
            return (*got[:3], _OID.sub("<oid>", got[3]) if isinstance(got[3], str) else got[3], *got[4:])
        if got[0] != "rows":
            return got
        cols = []
        for name, oid in got[1]:  # type: ignore[attr-defined]
            if oid >= 16384:
                row = self.conn.execute("select format_type(%s, null)", [oid]).fetchone()
                oid = f"user type {row[0] if row else None}"
            cols.append((name, oid))
        return (got[0], cols, *got[2:])


def _same_answers(proxy_dsn: str, reference_dsn: str, statements: list[str]) -> None:
    ref, got = _Named(reference_dsn), _Named(proxy_dsn)
    try:
        for sql in statements:
            assert repr(got(sql)) == repr(ref(sql)), sql
    finally:
        ref.close()
        got.close()


@pytest.mark.parametrize("statements", [CREATE + WRITES + FOREIGN + TRANSACTIONS + DROP], ids=["enums"])
def test_enums_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster, statements: list[str]) -> None:
    _same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("en")), statements)


_SETUP = [
    "create type {p}_mood as enum ('sad', 'ok', 'happy')",
    "create table {p}_t (id int primary key, m {p}_mood, ms {p}_mood[])",
    "insert into {p}_t values (1, 'sad', '{{sad,happy}}'), (2, 'happy', '{{ok,NULL}}'), (3, null, '{{NULL}}'), (4, 'ok', null)",
]

#: Each case on a type and table of its own (the proxy's database is shared by the module).
CASES = {
    # ALTER TYPE … RENAME TO: the columns follow, the old name is gone, 42710 for a taken name
    "rename_to": [
        "alter type {p}_mood rename to {p}_feeling",
        "select pg_typeof(m), pg_typeof(ms) from {p}_t where id = 1",
        "select attname, atttypid::regtype from pg_attribute where attrelid = '{p}_t'::regclass and attnum > 0 order by attnum",
        "select typname from pg_type where typname in ('{p}_mood', '_{p}_mood', '{p}_feeling', '_{p}_feeling') order by 1",
        "select 'sad'::{p}_mood",
        "select 'sad'::{p}_feeling, enum_range(null::{p}_feeling)",
        "create type {p}_other as enum ('z')",
        "alter type {p}_feeling rename to {p}_other",
        "alter type public.{p}_feeling rename to {p}_mood",
        "alter type {p}_nosuch rename to {p}_x",
        "select id, m from {p}_t where m > 'sad' order by id",
    ],
    # an enum[]'s NULL elements in its cast to text and in array_to_string
    "array_with_null_to_text": [
        "select id, ms::text from {p}_t order by id",
        "select '{{sad,NULL}}'::{p}_mood[]::text, '{{NULL}}'::{p}_mood[]::text",
        "select array_to_string(ms, ',', '*') from {p}_t order by id",
    ],
    "any_of_enum_array": [
        "select id from {p}_t where m = any(ms) order by id",
        "select id from {p}_t where 'ok' = any(ms) order by id",
        "select id from {p}_t where m <> all(ms) order by id",
    ],
    "array_constructor_and_casts": [
        "select array['sad', 'ok']::{p}_mood[]",
        "select array['sad', 'ok']::text[]::{p}_mood[]",
        "select array['sad'::{p}_mood, 'ok'], pg_typeof(array['sad'::{p}_mood])",
        "select array[m] from {p}_t order by id",
        "select '{{sad,ok}}'::{p}_mood[]::text[]",
    ],
    # a subscript of an enum[] is the enum (RowDescription and pg_typeof), never anyenum
    "result_column_types": [
        "select ms[1], ms[2] from {p}_t order by id",
        "select ms[1:1] from {p}_t order by id",
        "select unnest(ms) from {p}_t order by id",
        "select array_agg(m order by id) from {p}_t",
        "select pg_typeof(ms[1]), pg_typeof(array_agg(m)) from {p}_t group by ms[1] order by 1",
    ],
    # DEFAULTs of enum and enum[] columns (a bad label is 22P02 when the table is made)
    "column_default": [
        "create table {p}_def (id int, m {p}_mood default 'ok', m2 {p}_mood default 'happy'::{p}_mood, m3 {p}_mood default null)",
        "insert into {p}_def (id) values (1)",
        "alter table {p}_def add column ms {p}_mood[] default '{{sad}}'",
        "insert into {p}_def (id) values (2)",
        "select * from {p}_def order by id",
        "select column_name, column_default from information_schema.columns where table_name = '{p}_def' order by ordinal_position",
        "alter table {p}_t add column m2 {p}_mood default 'happy'",
        "alter table {p}_t alter column m set default 'sad'",
        "insert into {p}_t (id) values (5)",
        "select * from {p}_t order by id",
        "create table {p}_def2 (id int, m {p}_mood default 'nope')",
    ],
    # PREPARE with an enum parameter declared, and one inferred from the comparison
    "prepare_with_enum_parameter": [
        "prepare {p}_q({p}_mood) as select id from {p}_t where m = $1",
        "execute {p}_q('ok')",
        "execute {p}_q('nope')",
        "prepare {p}_r as select id from {p}_t where m >= $1 order by id",
        "execute {p}_r('ok')",
    ],
    # an enum in JSON is its label
    "json_of_enums": [
        "select to_json('sad'::{p}_mood), to_json(m), to_jsonb(ms) from {p}_t order by id",
        "select row_to_json({p}_t) from {p}_t order by id",
        "select json_build_object('m', m), jsonb_build_array(m, ms) from {p}_t order by id",
        "select jsonb_agg(m order by id), json_agg(ms order by id) from {p}_t",
    ],
    "pg_attribute_of_enum_columns": [
        # an enum is 4 bytes by value, plain; an array of one varlena, extended (psql's \\d+ shows the storage)
        "select attname, attlen, attbyval, attstorage, attalign from pg_attribute"
        " where attrelid = '{p}_t'::regclass and attnum > 0 order by attnum",
    ],
    # CHECK constraints that test enum values for equality (those that order them are refused by design)
    "check_by_equality": [
        "create table {p}_c (id int, m {p}_mood check (m <> 'sad'), n {p}_mood, check (n = 'ok' or n in ('happy')))",
        "insert into {p}_c values (1, 'ok', 'ok'), (2, 'happy', null)",
        "insert into {p}_c values (3, 'sad', 'ok')",
        "insert into {p}_c values (3, 'ok', 'sad')",
        "create domain {p}_notsad as {p}_mood check (value <> 'sad')",
        "select 'ok'::{p}_notsad, pg_typeof('ok'::{p}_notsad)",
        "select 'sad'::{p}_notsad",
        "select conname, pg_get_constraintdef(oid) from pg_constraint where conrelid = '{p}_c'::regclass order by conname",
        "select * from {p}_c order by id",
    ],
    # a domain over an enum, and DROP TYPE of the enum with the domain's column among its dependents
    "domain_over_enum": [
        "create domain {p}_dom as {p}_mood",
        "create table {p}_d (id int, c {p}_dom)",
        "insert into {p}_d values (1, 'ok')",
        "insert into {p}_d values (2, 'nope')",
        "select c, pg_typeof(c) from {p}_d",
        "drop type {p}_mood",
        "drop type {p}_mood cascade",
    ],
}


@pytest.mark.parametrize("case", list(CASES))
def test_enum_cases_as_in_postgresql(proxy: ProxyServer, pg15: PgCluster, case: str) -> None:
    """Smaller cases, each on an enum of its own (one that fails leaves the others and the
    long sequence above to run)."""
    p = f"ec_{case}"
    statements = [s.format(p=p) for s in _SETUP + CASES[case]]
    _same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("enc")), statements)


#: Run in a process of its own: libpq's blocking calls hold the GIL, which the proxy the
#: tests run in this process needs.
_PARAMETERS = r"""
import json, struct, sys
import psycopg
from psycopg import pq
out = []
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    c.execute("create type epd_mood as enum ('sad', 'ok', 'happy'); create table epd (id int, m epd_mood, ms epd_mood[])")
    name = dict(c.execute("select oid, typname from pg_type where typname in"
                          " ('int4', 'int8', 'text', 'bool', 'epd_mood', '_epd_mood')").fetchall())
    pg = c.pgconn

    def error(r):
        return [r.error_field(f).decode() for f in (pq.DiagnosticField.SQLSTATE, pq.DiagnosticField.MESSAGE_PRIMARY)]

    # ParameterDescription and RowDescription, the OIDs by name
    for q in (b"insert into epd values ($1, $2, $3)", b"select $1::epd_mood", b"select $1::epd_mood[]",
              b"select id, m, ms from epd where m = $1", b"select id from epd where m > $1 and id < $2",
              b"select m from epd where m = any($1)", b"update epd set m = $1 where id = $2",
              b"select enum_range($1::epd_mood, null), enum_first(m) from epd",
              b"select ms[1], array_agg(m), m::text, min(m) from epd group by ms[1], m"):
        r = pg.prepare(b"", q)
        if r.status != pq.ExecStatus.COMMAND_OK:
            out.append(["prepare", q.decode(), error(r)])
            continue
        d = pg.describe_prepared(b"")
        if d.status != pq.ExecStatus.COMMAND_OK:
            out.append(["describe", q.decode(), error(d)])
            continue
        out.append([q.decode(), [name.get(d.param_type(i)) for i in range(d.nparams)],
                    [name.get(d.ftype(i)) for i in range(d.nfields)]])
    # psycopg's binds (text; a str is sent untyped, a list of str as text[])
    for q, params in (
        ("insert into epd values (%s, %s, %s)", [1, "ok", ["sad", "happy"]]),
        ("insert into epd values (%s, %s, %s::epd_mood[])", [2, "sad", ["ok"]]),
        ("insert into epd values (%s, %s, %s)", [3, "nope", None]),
        ("insert into epd values (%s, %s::epd_mood, %s)", [3, "happy", None]),
        ("select id, m, ms from epd where m = %s order by id", ["ok"]),
        ("select id from epd where m < %s and id <> 2 order by id", ["happy"]),
        ("select id from epd where m = any(%s) and id <> 2 order by id", [["sad", "happy"]]),
        ("select %s::epd_mood[]", [["sad", "ok"]]),
        ("select %s::epd_mood", ["nope"]),
    ):
        try:
            cur = c.execute(q, params)
            out.append([q, cur.statusmessage, cur.fetchall() if cur.description else None])
        except psycopg.Error as e:
            out.append([q, e.sqlstate, e.diag.message_primary])
    # binary: an enum is its label's bytes; an array's header names the element type's OID
    oid, arr = c.execute("select 'epd_mood'::regtype::oid, 'epd_mood[]'::regtype::oid").fetchone()
    pg.prepare(b"declared", b"insert into epd (id, m) values ($1, $2)", [23, oid])
    for i, label in enumerate((b"ok", b"nope")):
        r = pg.exec_prepared(b"declared", [(10 + i).to_bytes(4, "big"), label], [1, 1])
        out.append(error(r) if r.status == pq.ExecStatus.FATAL_ERROR else r.command_status.decode())
    pg.prepare(b"declared_array", b"insert into epd (id, ms) values ($1, $2)", [23, arr])
    for i, label in enumerate((b"happy", b"nope")):
        elems = [b"sad", label]
        body = struct.pack("!iiiii", 1, 0, oid, len(elems), 1) + b"".join(struct.pack("!i", len(e)) + e for e in elems)
        r = pg.exec_prepared(b"declared_array", [(20 + i).to_bytes(4, "big"), body], [1, 1])
        out.append(error(r) if r.status == pq.ExecStatus.FATAL_ERROR else r.command_status.decode())
    r = pg.exec_params(b"select m, ms, enum_range(m) from epd where id = 1", [], result_format=1)
    for row in range(r.ntuples):
        m, ms, rng = (r.get_value(row, j) for j in range(3))
        out.append([m.hex(), struct.unpack("!iii", ms[:12])[:2], name.get(struct.unpack("!iii", ms[:12])[2]), ms[12:].hex(),
                    name.get(struct.unpack("!iii", rng[:12])[2]), rng[12:].hex()])
    out.append(c.execute("select id, m::text, ms::text from epd order by id").fetchall())
print(json.dumps(out))
"""


def _parameters(dsn: str) -> list[object]:
    done = subprocess.run([sys.executable, "-c", _PARAMETERS, dsn], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_parameters_and_binary_values_of_enums(proxy: ProxyServer, pg15: PgCluster) -> None:
    """ParameterDescription and RowDescription name the enum and its array type; psycopg's
    text binds and libpq's binary ones (an enum is its label, an array's header names the
    enum's OID) as PostgreSQL takes and returns them."""
    ref = _parameters(pg15.dsn(dbname=pg15.new_database("epd")))
    assert ref[0] == ["insert into epd values ($1, $2, $3)", ["int4", "epd_mood", "_epd_mood"], []]
    got = _parameters(proxy.dsn())
    for a, b in zip(ref, got, strict=True):
        assert b == a


def _copy(dsn: str) -> list[object]:
    """COPY FROM of enum and enum[] columns (a bad label and a bad array element among
    them), then COPY TO in text and CSV."""
    got: list[object] = []
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("create type ecp_mood as enum ('sad', 'ok', 'happy'); create table ecp (id int, m ecp_mood, ms ecp_mood[])")
        for cmd, data in (
            ("COPY ecp FROM STDIN", "1\tsad\t{sad,ok}\n2\thappy\t{}\n"),
            ("COPY ecp FROM STDIN", "3\tok\t\\N\n4\tnope\t{sad}\n5\tsad\t\\N\n"),
            ("COPY ecp FROM STDIN", "6\tsad\t{sad,nope}\n"),
            ("COPY ecp FROM STDIN", "7\t\\N\t{NULL,happy}\n8\tSad\t\\N\n"),
            ("COPY ecp (id, m) FROM STDIN", "9\tok\n10\thappy\n"),
            ("COPY ecp FROM STDIN (FORMAT csv)", '11,happy,"{happy,sad}"\n12,,\n'),
            ("COPY ecp FROM STDIN (FORMAT csv)", "13,unhappy,\n"),
        ):
            try:
                with c.cursor().copy(cmd) as cp:
                    cp.write(data)
                got.append("ok")
            except psycopg.Error as e:  # (CONTEXT: "COPY ecp, line 2, column m: "nope"")
                got.append((e.sqlstate, e.diag.message_primary, e.diag.message_detail, e.diag.context))
        got.append(c.execute("select id, m::text, ms::text from ecp order by id").fetchall())
        for cmd in (
            "COPY ecp TO STDOUT",
            "COPY (select id, m, ms from ecp where m is not null order by m, id) TO STDOUT",
            "COPY ecp (m, ms) TO STDOUT (FORMAT csv, HEADER)",
        ):
            with c.cursor().copy(cmd) as cp:
                got.append(b"".join(bytes(b) for b in cp).decode())
    return got


def test_copy_of_enum_columns(proxy: ProxyServer, pg15: PgCluster) -> None:
    ref = _copy(pg15.dsn(dbname=pg15.new_database("ecp")))
    assert ref[1] == ("22P02", 'invalid input value for enum ecp_mood: "nope"', None, 'COPY ecp, line 2, column m: "nope"')
    got = _copy(proxy.dsn())
    for i, (a, b) in enumerate(zip(ref, got, strict=True)):
        assert b == a, f"step {i}"


def test_a_subscriber_receives_enum_columns(proxy: ProxyServer, pg15: PgCluster) -> None:
    """Text and binary subscribers of a table with enum and enum[] columns: the
    subscriber's enum has the labels (its OIDs its own), initial copy and stream."""
    ddl = (
        "CREATE TYPE ens_mood AS ENUM ('sad', 'ok', 'happy');"
        "CREATE TABLE ens (id int PRIMARY KEY, m ens_mood, ms ens_mood[], n text)"
    )
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(ddl)
        c.execute("INSERT INTO ens VALUES (1, 'sad', '{sad,happy}', 'one'), (2, 'ok', NULL, 'two'),"
                  " (3, NULL, '{}', 'three'), (4, 'happy', '{ok,NULL}', 'four')")  # copied
        c.execute("CREATE PUBLICATION pens FOR TABLE ens")
    subs = text_and_binary_subscribers(proxy, pg15, ddl, "pens", "sens")
    for sub in subs:
        wait_identical(proxy.dsn(), sub, ["ens"])
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("INSERT INTO ens VALUES (5, 'happy', '{happy,ok,sad}', 'five')")  # streamed
        c.execute("UPDATE ens SET m = 'ok', ms = '{ok}' WHERE id = 1")
        c.execute("UPDATE ens SET n = 'TWO' WHERE id = 2")
        c.execute("DELETE FROM ens WHERE id = 3")
        with c.transaction():
            c.execute("INSERT INTO ens VALUES (6, 'sad', '{sad}', 'six')")
            c.execute("UPDATE ens SET ms = array_append(ms, 'sad') WHERE id = 5")
    for sub in subs:
        wait_identical(proxy.dsn(), sub, ["ens"])
    # a label added on both sides, then used
    for dsn in (proxy.dsn(), *subs):
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("ALTER TYPE ens_mood ADD VALUE 'meh' BEFORE 'ok'")
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("INSERT INTO ens VALUES (7, 'meh', '{meh,happy}', 'seven')")
        c.execute("UPDATE ens SET m = 'meh' WHERE m < 'ok'")
    for i, sub in enumerate(subs):
        wait_identical(proxy.dsn(), sub, ["ens"])
        with psycopg.connect(sub, autocommit=True) as c:
            assert c.execute("SELECT id, m::text, ms::text FROM ens ORDER BY id").fetchall() == [
                (1, "ok", "{ok}"), (2, "ok", None), (4, "happy", "{ok,NULL}"), (5, "happy", "{happy,ok,sad,sad}"),
                (6, "meh", "{sad}"), (7, "meh", "{meh,happy}"),
            ]
            c.execute(f"DROP SUBSCRIPTION sens{i}")


def _pgoutput(dsn: str, binary: bool) -> list[tuple[object, ...]]:
    """pg_recvlogical's pgoutput stream of writes to a table with enum and enum[] columns,
    the types' OIDs (which differ between servers) named through the Type messages; in
    binary mode each tuple's kinds too (PostgreSQL sends a user type's array as text)."""
    from decoding.pgoutput import proto as P

    t = f"eno{int(binary)}"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(
            f"CREATE TYPE {t}_mood AS ENUM ('sad', 'ok', 'happy');"
            f" CREATE TABLE {t} (id int PRIMARY KEY, m {t}_mood, ms {t}_mood[], n text);"
            f" CREATE PUBLICATION p{t} FOR TABLE {t}"
        )

    def write(c: psycopg.Connection) -> None:
        c.execute(f"INSERT INTO {t} VALUES (1, 'sad', '{{sad,happy}}', 'x'), (2, NULL, NULL, NULL), (3, 'ok', '{{NULL,ok}}', 'y')")
        c.execute(f"UPDATE {t} SET m = 'happy' WHERE id = 1")
        c.execute(f"DELETE FROM {t} WHERE id = 2")

    names: dict[int, str] = {}
    shape: list[tuple[object, ...]] = []
    columns: tuple[tuple[object, ...], ...] = ()
    for m in recorded_stream(dsn, t, f"p{t}", write, binary=binary):
        if isinstance(m, P.Type):
            names[m.type_oid] = f"{m.namespace}.{m.name}"
            shape.append(("TYPE", names[m.type_oid]))
        elif isinstance(m, P.Relation):
            columns = tuple((c.name, names.get(c.type_oid, c.type_oid), c.type_modifier, c.flags) for c in m.columns)
            shape.append(("RELATION", m.namespace, m.name, m.replica_identity, columns))
        elif isinstance(m, P.Insert | P.Update):
            values = list(m.new.values)
            for i, (kind, col) in enumerate(zip(m.new.kinds, columns, strict=True)):
                if kind == ord("b") and str(col[1]).startswith("public._"):  # a binary array: the element type by name
                    elem = int.from_bytes(values[i][8:12], "big")
                    values[i] = (values[i][:8], names.get(elem, elem), values[i][12:])
            shape.append((type(m).__name__, m.new.kinds, tuple(values)))
        elif isinstance(m, P.Delete):
            shape.append(("Delete", m.key.values if m.key is not None else None))
        else:
            shape.append((type(m).__name__,))
    return shape


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_pgoutput_names_enum_columns_as_postgresql(proxy: ProxyServer, pg15: PgCluster, binary: bool) -> None:
    """A Type message for the enum column and one for the enum[] column before the
    Relation (logicalrep_write_typ: the type's namespace and name), the columns typed by
    those OIDs; the values as PostgreSQL sends them."""
    theirs = _pgoutput(pg15.dsn(dbname=pg15.new_database("eno")), binary)
    t = f"eno{int(binary)}"
    assert theirs[1:3] == [("TYPE", f"public.{t}_mood"), ("TYPE", f"public._{t}_mood")], theirs
    assert _pgoutput(proxy.dsn(), binary) == theirs


PSQL_SCRIPT = r"""
create type eps_mood as enum ('sad', 'ok', 'happy');
alter type eps_mood add value 'meh' before 'ok';
create schema eps;
create type eps.level as enum ('low', 'high');
create type eps_empty as enum ();
comment on type eps_mood is 'feelings';
create table eps_t (id int primary key, m eps_mood not null, ms eps_mood[], l eps.level);
\dT eps*
\dT+ eps*
\dT+ eps_mood
\dT eps.*
\dT+ eps.level
\d eps_t
\d+ eps_t
set search_path = eps, public;
\dT+ level
\d eps_t
"""


def test_psql_describes_enums_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    """psql's \\dT (its Elements column lists the labels in their order), \\dT+ and \\d of a
    table with enum columns (a type off the search path qualified); \\d+ shows each column's
    storage (pg_attribute.attstorage: an enum plain, an enum[] extended)."""
    outs = [
        subprocess.run([str(pg15.bindir / "psql"), "-X", "-d", dsn], input=PSQL_SCRIPT, capture_output=True, text=True, timeout=60)
        for dsn in (proxy.dsn(), pg15.dsn(dbname=pg15.new_database("eps")))
    ]
    assert (outs[0].stdout, outs[0].stderr) == (outs[1].stdout, outs[1].stderr)
    assert "List of data types" in outs[1].stdout and "meh" in outs[1].stdout and "ERROR" not in outs[1].stderr


def _sa_enums(dsn: str) -> list[object]:
    """SQLAlchemy's native Enum: create_all (its CREATE TYPE after a has_type query), rows
    written and read, then what the inspector and MetaData.reflect() make of the type."""
    import sqlalchemy as sa

    parts = dict(part.split("=", 1) for part in dsn.split())
    engine = sa.create_engine(f"postgresql+psycopg://{parts['user']}@{parts['host']}:{parts['port']}/{parts['dbname']}")
    try:
        meta = sa.MetaData()
        mood = sa.Enum("sad", "ok", "happy", name="esa_mood")
        table = sa.Table(
            "esa", meta,
            sa.Column("id", sa.Integer, primary_key=True),
            sa.Column("m", mood, nullable=False),
            sa.Column("ms", sa.ARRAY(mood)),
        )  # fmt: skip
        meta.create_all(engine)
        meta.create_all(engine)  # the type and table are found, nothing is made
        out: list[object] = []
        with engine.begin() as conn:
            conn.execute(table.insert(), [{"id": 1, "m": "ok"}, {"id": 2, "m": "happy"}])
            for stmt, rows in (
                (table.insert(), [{"id": 3, "m": "nope"}]),
                (table.insert(), [{"id": 4, "m": "sad", "ms": ["sad", "happy"]}]),  # bound as %(ms)s::esa_mood[]
                (table.update().where(table.c.id == 1).values(ms=sa.bindparam("v")), [{"v": ["ok"]}]),
            ):
                try:
                    with conn.begin_nested():
                        conn.execute(stmt, rows)
                    out.append("ok")
                except sa.exc.SQLAlchemyError as e:
                    out.append((type(e).__name__, str(e.orig).splitlines()[0]))  # type: ignore[attr-defined]
            out.append([tuple(r) for r in conn.execute(sa.select(table).order_by(table.c.id))])
            out.append([tuple(r) for r in conn.execute(sa.select(table.c.id, table.c.m).where(table.c.m > "sad").order_by(table.c.m))])
        insp = sa.inspect(engine)
        out.append([e for e in insp.get_enums() if e["name"].startswith("esa_")])
        out.append(repr(insp.get_columns("esa")))
        reflected = sa.MetaData()
        reflected.reflect(engine, only=["esa"])
        cols = reflected.tables["esa"].columns
        out.append([(c.name, repr(c.type), c.nullable) for c in cols])
        out.append(list(cols["m"].type.enums))
        with engine.begin() as conn:
            out.append([tuple(r) for r in conn.execute(sa.select(reflected.tables["esa"]).order_by(cols["id"]))])
        meta.drop_all(engine)
        out.append([e for e in sa.inspect(engine).get_enums() if e["name"].startswith("esa_")])
        return out
    finally:
        engine.dispose()


def test_sqlalchemy_native_enum_as_with_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    """create_all, writes (the enum[] column bound as ``%(ms)s::esa_mood[]`` with a list),
    reads, inspector.get_enums()/get_columns() and MetaData.reflect() as with PostgreSQL."""
    ref = _sa_enums(pg15.dsn(dbname=pg15.new_database("esa")))
    assert ref[5] == [{"name": "esa_mood", "schema": "public", "visible": True, "labels": ["sad", "ok", "happy"]}], ref
    got = _sa_enums(proxy.dsn())
    for i, (a, b) in enumerate(zip(ref, got, strict=True)):
        assert b == a, f"step {i}"


def test_what_the_proxy_refuses_is_named(proxy: ProxyServer) -> None:
    """Where the proxy does not do what PostgreSQL does with an enum it says so (0A000,
    the feature named) after PostgreSQL's own checks, never an approximation."""
    refused = {
        "alter type erf_mood rename value 'sad' to 'blue'": "ALTER TYPE … RENAME VALUE",
        "alter type erf_mood set schema erf": "ALTER TYPE … SET SCHEMA",
        "create table erf_c (m erf_mood check (m < 'ok'))": "with operator < between enum values",
        "create table erf_d (m erf_mood default 'o' || 'k')": "a DEFAULT of an enum column",
        "create function erf_f(erf_mood) returns int language sql as 'select 1'": "a function taking or returning an enum",
    }
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("create schema erf; create type erf_mood as enum ('sad', 'ok')")
        for sql, named in refused.items():
            with pytest.raises(psycopg.Error) as e:
                c.execute(sql)
            assert e.value.sqlstate == "0A000" and named in (e.value.diag.message_primary or ""), sql
        with pytest.raises(psycopg.Error) as e:  # (PostgreSQL's check comes first)
            c.execute("alter type erf_mood rename value 'nosuch' to 'x'")
        assert e.value.sqlstate == "22023"
