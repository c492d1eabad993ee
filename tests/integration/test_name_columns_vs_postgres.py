"""Columns of type ``name`` and ``name[]`` beside PostgreSQL 15: values cut to 63 bytes at
a character's end by every way in (literals, text values, casts, COPY, arrays), PostgreSQL's
catalog rows, binary parameters and results, the pgoutput
stream and text and binary subscribers."""

from __future__ import annotations

import psycopg
import pytest

from tests.integration.test_subscriber import text_and_binary_subscribers, wait_identical
from tests.pgcluster import PgCluster
from tests.pgcompare import recorded_stream, same_answers, stream_shape
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

STATEMENTS = [
    "CREATE TABLE nt (id int, n name, na name[])",
    "INSERT INTO nt VALUES (1, repeat('x', 70), ARRAY[repeat('y', 70), 'b'])",
    "INSERT INTO nt VALUES (2, repeat('é', 40), '{a,b}')",
    "INSERT INTO nt VALUES (3, 'abc'::text, NULL), (4, 5, NULL)",
    "INSERT INTO nt SELECT 5, repeat('z', 65)::text",
    "SELECT id, n, length(n), octet_length(n), na, pg_typeof(n), pg_typeof(na) FROM nt ORDER BY id",
    "SELECT * FROM nt WHERE n = 'abc'",
    "SELECT id FROM nt WHERE n > 'x' ORDER BY n",
    "UPDATE nt SET n = repeat('q', 64) WHERE id = 3 RETURNING length(n)",
    "UPDATE nt SET na[3] = repeat('w', 64) WHERE id = 2 RETURNING na",
    "SELECT attname, atttypid::regtype, attlen, attalign FROM pg_attribute WHERE attrelid = 'nt'::regclass AND attnum > 0",
    "SELECT column_name, data_type, udt_name, character_maximum_length FROM information_schema.columns"
    " WHERE table_name = 'nt' ORDER BY ordinal_position",
    "SELECT length(name(repeat('w', 70))), name('ab  '::char(4)) || '|', 'ab  '::char(4)::name || '|', name(1)",
    "SELECT n || 'x' FROM nt WHERE id = 3",
    # an unknown literal beside a name is read by namein (cut), a text value is not
    "SELECT id FROM nt WHERE n = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'",
    "SELECT id FROM nt WHERE n IN ('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'b') AND n <> 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxz'",
    "SELECT id FROM nt WHERE n < 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' ORDER BY id",
    "SELECT id FROM nt WHERE n = repeat('x', 70)",
    "SELECT 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'::name = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxyz', 'abc'::name = 'abc '",
    # a text[] (or varchar[]) cast to name[]: each element cut (text_name)
    "SELECT array[repeat('x', 70), 'b']::name[], '{a,b}'::text[]::name[], (array[repeat('é', 40)]::varchar[])::name[]",
    # parse_ident: quoted parts as written, others lower-cased, never cut; strict or not
    "SELECT parse_ident('Schemax.Tabley'), parse_ident('\"SchemaX\".\"TableY\"'), parse_ident(' first . \"  second  \" .\"   third   \". \"  ' || repeat('x', 66) || '\"')",
    "SELECT parse_ident(' first . \"  second  \" .\"   third   \". \"  ' || repeat('x', 66) || '\"')::name[]",
    "SELECT parse_ident('foo.boo[]', strict => false), parse_ident('foo.boo[]', false)",
    "SELECT parse_ident('foo.boo[]')",
    "SELECT parse_ident(' .aaa')",
    "SELECT parse_ident('xxx.1020')",
    "SELECT parse_ident('\"c\".X XXXX')",
    "SELECT parse_ident('\"\"')",
    "SELECT parse_ident('\"unclosed')",
    "CREATE TABLE nt2 (n name PRIMARY KEY)",
    "INSERT INTO nt2 VALUES ('a'), ('a')",
    "INSERT INTO nt2 VALUES (repeat('k', 63) || 'a'), (repeat('k', 63) || 'b')",
    "DROP TABLE nt, nt2",
]


def test_name_columns_as_postgres(proxy: ProxyServer, pg15: PgCluster) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("names")), STATEMENTS).close()


def _io(dsn: str) -> list[object]:
    """COPY in and out, and binary parameters and results."""
    got: list[object] = []
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("CREATE TABLE nio (id int, n name, na name[])")
        with c.cursor().copy("COPY nio FROM STDIN") as cp:
            cp.write(f"1\t{'r' * 70}\t{{{'s' * 70},t}}\n2\t\\N\t{{}}\n")
        with c.cursor().copy("COPY nio TO STDOUT") as cp:
            got.append(b"".join(bytes(b) for b in cp).decode())
        cur = c.cursor(binary=True)
        got.append(cur.execute("SELECT n, na FROM nio ORDER BY id").fetchall())
        got.append(cur.execute("SELECT %b::name", ["p" * 63]).fetchall())
        try:
            cur.execute("INSERT INTO nio (id, n) VALUES (3, %b::name)", ["p" * 64])
            got.append("ok")
        except psycopg.Error as e:
            got.append((e.sqlstate, e.diag.message_primary))
        got.append(c.execute("SELECT id, octet_length(n) FROM nio ORDER BY id").fetchall())
        c.execute("DROP TABLE nio")
    return got


def test_copy_and_binary_values_of_names(proxy: ProxyServer, pg15: PgCluster) -> None:
    ref = _io(pg15.dsn(dbname=pg15.new_database("nio")))
    assert ref[-1][-1] == (3, 63)  # (a text parameter cast to name is cut)
    assert _io(proxy.dsn()) == ref


def _params(dsn: str) -> list[object]:
    """Parameters compared with a name column: an unspecified one and one of type name
    in text are cut by namein; one of type name in binary is refused past 63 bytes."""
    got: list[object] = []
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("CREATE TABLE npar (n name)")
        c.execute("INSERT INTO npar VALUES (repeat('v', 70))")
        long = "v" * 70
        got.append(c.execute("SELECT count(*) FROM npar WHERE n = %s", [long]).fetchall())
        got.append(c.execute("SELECT count(*) FROM npar WHERE n = %s", [long], prepare=True).fetchall())
        got.append(c.execute("SELECT count(*) FROM npar WHERE n = %s::text", [long]).fetchall())
        for fmt in (0, 1):
            res = c.pgconn.exec_params(b"SELECT count(*) FROM npar WHERE n = $1", [long.encode()], [19], [fmt])
            got.append((res.get_value(0, 0) if res.nfields else None, res.error_message))
        c.execute("DROP TABLE npar")
    return got


def test_name_parameters(proxy: ProxyServer, pg15: PgCluster) -> None:
    ref = _params(pg15.dsn(dbname=pg15.new_database("npar")))
    assert ref[0] == [(1,)] and b"CONTEXT:  unnamed portal parameter $1" in ref[-1][1]
    assert _params(proxy.dsn()) == ref


def _pgoutput(dsn: str, binary: bool) -> list[tuple[object, ...]]:
    t = f"npo{int(binary)}"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, n name, na name[]); CREATE PUBLICATION p{t} FOR TABLE {t}")

    def write(c: psycopg.Connection) -> None:
        c.execute(f"INSERT INTO {t} VALUES (1, repeat('n', 70), ARRAY['a', repeat('b', 64)]), (2, NULL, NULL)")
        c.execute(f"UPDATE {t} SET n = 'm' WHERE id = 1")
        c.execute(f"DELETE FROM {t} WHERE id = 2")

    return stream_shape(recorded_stream(dsn, t, f"p{t}", write, binary=binary))


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_pgoutput_sends_names_as_postgresql(proxy: ProxyServer, pg15: PgCluster, binary: bool) -> None:
    theirs = _pgoutput(pg15.dsn(dbname=pg15.new_database("npo")), binary)
    assert [e[5] for e in theirs if e[0] == "RELATION"] == [(("id", 23, -1, 1), ("n", 19, -1, 0), ("na", 1003, -1, 0))]
    assert _pgoutput(proxy.dsn(), binary) == theirs


def test_a_subscriber_receives_name_columns(proxy: ProxyServer, pg15: PgCluster) -> None:
    ddl = "CREATE TABLE nsub (id int PRIMARY KEY, n name, na name[])"
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute(ddl)
        c.execute("INSERT INTO nsub VALUES (1, repeat('c', 70), '{a,b}'), (2, NULL, NULL)")  # copied
        c.execute("CREATE PUBLICATION pnsub FOR TABLE nsub")
    subs = text_and_binary_subscribers(proxy, pg15, ddl, "pnsub", "snsub")
    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("INSERT INTO nsub VALUES (3, repeat('é', 40), ARRAY[repeat('d', 66)])")  # streamed
        c.execute("UPDATE nsub SET n = 'x' WHERE id = 1")
    for i, sub in enumerate(subs):
        wait_identical(proxy.dsn(), sub, ["nsub"])
        with psycopg.connect(sub, autocommit=True) as c:
            assert c.execute("SELECT id, octet_length(n), octet_length(na[1]) FROM nsub ORDER BY id").fetchall() == [
                (1, 1, 1), (2, None, None), (3, 62, 63),
            ]
            c.execute(f"DROP SUBSCRIPTION snsub{i}")
