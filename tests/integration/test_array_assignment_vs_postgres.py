"""UPDATE … SET a[i] = v and a[l:u] = array, and INSERT INTO t (a[i], …), beside PostgreSQL 15: the arrays each
statement leaves, extension with NULLs, several assignments in one SET, slices with
omitted bounds, NULL sources and subscripts, PostgreSQL's errors, and the refusal of what
would give an array a lower bound other than 1. Values assigned to integer elements or
columns round as PostgreSQL's casts round (numeric half away from zero, float to even).
jsonb's subscripted assignment (``SET j['a'][0] = v``) beside PostgreSQL's too."""

from __future__ import annotations

import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import same_answers
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

STATEMENTS = [
    "CREATE TABLE aa_t (id int, a int[], t text[], n numeric(5,1)[])",
    "INSERT INTO aa_t VALUES (1, '{1,2,3}', '{a,b}', '{1.5}'), (2, NULL, NULL, NULL), (3, '{}', '{}', '{}')",
    "UPDATE aa_t SET a[2] = 20 WHERE id = 1",
    "UPDATE aa_t SET a[5] = 50 WHERE id = 1",
    "SELECT * FROM aa_t ORDER BY id",
    "UPDATE aa_t SET a[1] = 7 WHERE id = 2",
    "UPDATE aa_t SET a[1] = 7 WHERE id = 3",
    "UPDATE aa_t SET a[NULL] = 1 WHERE id = 1",
    "UPDATE aa_t SET a[2:3] = '{8,9}' WHERE id = 1",
    "UPDATE aa_t SET a[2:3] = '{8}' WHERE id = 1",
    "UPDATE aa_t SET a[3:2] = '{8}' WHERE id = 1",
    "UPDATE aa_t SET a[2:3] = NULL WHERE id = 1",
    "UPDATE aa_t SET a[2] = NULL WHERE id = 3",
    "SELECT id, a FROM aa_t ORDER BY id",
    "UPDATE aa_t SET a[:2] = '{5,6}' WHERE id = 2",
    "UPDATE aa_t SET a[1] = 3, a[2] = 4 WHERE id = 2",
    "UPDATE aa_t SET a = '{1}', a[2] = 4 WHERE id = 2",
    "UPDATE aa_t SET t[3] = 'c', t[1] = upper(t[1]) WHERE id = 1",
    "UPDATE aa_t SET a[id] = id * 10",
    "UPDATE aa_t SET id[1] = 3",
    "SELECT * FROM aa_t ORDER BY id",
    "UPDATE aa_t SET a[2:] = '{9,9,9,9,9,9}' WHERE id = 1",
    "UPDATE aa_t SET a[:] = '{0,0,0,0,0,0,0}' WHERE id = 1",
    "UPDATE aa_t SET a[7] = 1.5, n[2] = 2.25 WHERE id = 1",
    "UPDATE aa_t SET a[8] = 2.5::float8 WHERE id = 1",
    "UPDATE aa_t SET a[9] = 3000000000 WHERE id = 1",
    "UPDATE aa_t SET a[9] = '12' WHERE id = 1 RETURNING a, n",
    "UPDATE aa_t SET a[0] = 1 WHERE id = 1",  # (a lower bound of 0: refused here)
    "UPDATE aa_t SET a[3] = 1 WHERE id = 3",
    "SELECT * FROM aa_t ORDER BY id",
    "INSERT INTO aa_t (id, a) VALUES (4, ARRAY[1.5, 2.5, -2.5]), (5, ARRAY[0.5::float8, 1.5::float8, 2.5::float8])",
    "SELECT id, a FROM aa_t WHERE id > 3 ORDER BY id",
    # INSERT into subscripted targets: assigned into a NULL array, then inserted whole
    "INSERT INTO aa_t (id, a[1:3]) VALUES (6, '{1,2,3}')",
    "INSERT INTO aa_t (id, a[1], a[2], n[1]) VALUES (7, 1.5, '7', 2.25), (8, NULL, 3, NULL)",
    "INSERT INTO aa_t (id, a[1:2]) VALUES (9, '{1,2,3}') RETURNING *",
    "INSERT INTO aa_t (id, a[1:3]) VALUES (10, '{1,2}')",
    "INSERT INTO aa_t (a[1], id) SELECT g, g FROM generate_series(11, 13) g",
    "INSERT INTO aa_t (id, a[1], a) VALUES (14, 1, '{2}')",
    "INSERT INTO aa_t (id, a[1]) VALUES (15, 1, 2)",
    "INSERT INTO aa_t (id, a[1], a[1]) VALUES (16, 1, 2)",
    "INSERT INTO aa_t (id, a[NULL]) VALUES (17, 1)",
    "INSERT INTO aa_t (a[1], t) VALUES (1, DEFAULT) RETURNING a, t",
    "INSERT INTO aa_t (a[1], t) VALUES (DEFAULT, '{y}')",
    "SELECT * FROM aa_t WHERE id > 5 ORDER BY id",
    "DROP TABLE aa_t",
]

JSONB = [
    "CREATE TABLE js_t (id int, j jsonb)",
    """INSERT INTO js_t VALUES (1, NULL), (2, NULL), (3, '5'), (4, '{"a": 1}'), (5, '[1,2]'), (6, '"s"')""",
    "UPDATE js_t SET j[0] = '\"x\"' WHERE id = 1",  # (a NULL jsonb: an array for an integer)
    "UPDATE js_t SET j['0'] = '\"x\"' WHERE id = 2",  # (… an object for a text)
    "UPDATE js_t SET j['a'] = '1' WHERE id = 3",
    "UPDATE js_t SET j[0] = '1' WHERE id = 6",
    "UPDATE js_t SET j['a']['b'] = '1' WHERE id = 4",
    "UPDATE js_t SET j[1]['b'] = '1' WHERE id = 5",
    """UPDATE js_t SET j['x'][2]['y'] = '{"q": [1]}', j['z'] = 'null' WHERE id = 4 RETURNING *""",
    "UPDATE js_t SET j[-1] = '9' WHERE id = 5 RETURNING *",
    "UPDATE js_t SET j[-3] = '9' WHERE id = 5",
    "UPDATE js_t SET j['a'] = '9' WHERE id = 5",
    "UPDATE js_t SET j[1::bigint] = '9' WHERE id = 5",
    "UPDATE js_t SET j[1.5] = '9' WHERE id = 5",
    "UPDATE js_t SET j[true] = '9' WHERE id = 5",
    "UPDATE js_t SET j[1:2] = '9' WHERE id = 5",
    "UPDATE js_t SET j.a = '9' WHERE id = 5",
    "UPDATE js_t SET j[NULL] = '9' WHERE id = 5",
    "UPDATE js_t SET j[id] = to_jsonb(id) WHERE id = 5 RETURNING j",
    "UPDATE js_t SET j[id::text] = to_jsonb(id) WHERE id = 4 RETURNING j",
    "UPDATE js_t SET j[' 1'] = '7' WHERE id = 5 RETURNING j",
    "UPDATE js_t SET j['1x'] = '7' WHERE id = 5",
    "UPDATE js_t SET j[1] = NULL WHERE id = 5 RETURNING j",
    """UPDATE js_t SET j['k'] = '"v"', j['k'] = '"w"' WHERE id = 4 RETURNING j""",
    "UPDATE js_t SET j[0] = '1' WHERE id = 99",
    """INSERT INTO js_t (id, j['a'][1]) VALUES (7, '"new"') RETURNING *""",
    """INSERT INTO js_t (id, j[2]) VALUES (8, '"new"') RETURNING *""",
    "SELECT * FROM js_t ORDER BY id",
    "DROP TABLE js_t",
]

#: Where the proxy answers otherwise, on purpose: a lower bound other than 1 is refused.
REFUSED = {
    "INSERT INTO aa_t (id, a[2]) VALUES (18, 2)",
    "UPDATE aa_t SET a[0] = 1 WHERE id = 1",
    "UPDATE aa_t SET a[3] = 1 WHERE id = 3",
}


def test_subscripted_assignment_as_postgres(proxy: ProxyServer, pg15: PgCluster) -> None:
    db = pg15.new_database("arrassign")
    same_answers(proxy.dsn(), pg15.dsn(dbname=db), [s for s in STATEMENTS if s not in REFUSED]).close()


def test_jsonb_subscripted_assignment_as_postgres(proxy: ProxyServer, pg15: PgCluster) -> None:
    db = pg15.new_database("jsonassign")
    same_answers(proxy.dsn(), pg15.dsn(dbname=db), JSONB).close()


def test_what_would_move_a_lower_bound_is_refused(proxy: ProxyServer) -> None:
    import psycopg

    with psycopg.connect(proxy.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE aa_lb (a int[])")
        c.execute("INSERT INTO aa_lb VALUES ('{1}'), (NULL)")
        for sql in sorted(REFUSED):
            sql = sql.replace("aa_t", "aa_lb").replace(" WHERE id = 1", " WHERE a IS NOT NULL").replace(" WHERE id = 3", " WHERE a IS NULL")
            with pytest.raises(psycopg.errors.FeatureNotSupported, match="array lower bounds other than 1"):
                c.execute(sql.replace("(id, a[2]) VALUES (18, 2)", "(a[2]) VALUES (2)"))
        assert c.execute("SELECT a FROM aa_lb ORDER BY 1").fetchall() == [([1],), (None,)]
        c.execute("DROP TABLE aa_lb")
