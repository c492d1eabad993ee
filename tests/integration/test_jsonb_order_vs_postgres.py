"""jsonb compares, sorts, groups and subscripts as PostgreSQL 15 does, or refuses (0A000).

The lake keeps a jsonb value as PostgreSQL's output text; that text orders ``{"b": 1}``
after ``{"a": 1, "b": 2}`` and tells ``1.0`` from ``1.00``, where jsonb's btree order puts
the object with fewer pairs first and takes the numbers for one. Comparisons and sorts use
jsonb's order (jsonb_ops.sort_key); grouping keeps the texts when each is its equality
class's only one and refuses otherwise. Each statement runs on a real PostgreSQL 15 and on
the proxy, with full answers compared.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator

import pytest
from psycopg.types.string import TextLoader

from tests.pgcluster import PgCluster
from tests.pgcompare import Client
from tests.proxy import ProxyServer

_dbs = itertools.count(1)


def _client(dsn: str) -> Client:
    c = Client(dsn)
    c.conn.adapters.register_loader(3802, TextLoader)  # (jsonb's text, as the server wrote it)
    return c


@pytest.fixture(scope="module")
def clients(proxy: ProxyServer, pg15: PgCluster) -> Iterator[tuple[Client, Client]]:
    db = f"jsonbord{next(_dbs)}"
    pg15.psql(f"CREATE DATABASE {db}")
    ref, got = _client(pg15.dsn(dbname=db)), _client(proxy.dsn())
    yield ref, got
    ref.close()
    got.close()


def _same(clients: tuple[Client, Client], statements: list[str]) -> None:
    ref, got = clients
    for sql in statements:
        assert repr(got(sql)) == repr(ref(sql)), sql


def _documents(n: int, seed: int) -> list[str]:
    """Varied jsonb texts: every type, nesting, keys of several lengths, numbers whose
    texts differ where their values do not (1, 1.0 and 1.00 never in one document set)."""
    rnd = random.Random(seed)
    numbers = ["0", "1", "-1", "-1.5", "10", "1e2", "0.001", "-0.25", "123456789012345678901234567890", "2.5", "-100", "99.9"]

    def value(depth: int) -> str:
        r = rnd.random()
        if depth > 2 or r < 0.5:
            return rnd.choice(["null", "true", "false", rnd.choice(numbers), json.dumps(rnd.choice(["", "a", "b", "ab", "ba", "é", "aa"]))])
        if r < 0.75:
            return "[" + ", ".join(value(depth + 1) for _ in range(rnd.randint(0, 3))) + "]"
        keys = rnd.sample(["a", "b", "ab", "bb", "c", "abc"], rnd.randint(0, 3))
        return "{" + ", ".join(f"{json.dumps(k)}: {value(depth + 1)}" for k in keys) + "}"

    return sorted({value(0) for _ in range(n)})


def test_random_documents_order_compare_and_group_as_postgresql(clients: tuple[Client, Client]) -> None:
    jo_docs = _documents(400, seed=11)
    rows = ", ".join(f"({i}, '{d}')" for i, d in enumerate(jo_docs))
    _same(clients, [
        "CREATE TABLE jo_docs (id int, j jsonb)",
        f"INSERT INTO jo_docs VALUES {rows}, (9999, NULL)",
        "SELECT id, j FROM jo_docs ORDER BY j, id",
        "SELECT id FROM jo_docs ORDER BY j DESC NULLS LAST, id",
        "SELECT a.id, b.id FROM jo_docs a JOIN jo_docs b ON a.j = b.j AND a.id < b.id ORDER BY 1, 2",
        "SELECT count(*) FROM jo_docs a, jo_docs b WHERE a.j < b.j",
        "SELECT count(*) FROM jo_docs a, jo_docs b WHERE a.j <> b.j",
        "SELECT count(DISTINCT j) FROM jo_docs",
        "SELECT j, count(*) FROM jo_docs GROUP BY j ORDER BY j",
        "SELECT DISTINCT j FROM jo_docs ORDER BY j",
        "SELECT j FROM jo_docs UNION SELECT j FROM jo_docs ORDER BY 1",
        "SELECT DISTINCT ON (j) j, id FROM jo_docs ORDER BY j, id DESC",
        "SELECT id, rank() OVER (ORDER BY j), count(*) OVER (PARTITION BY j) FROM jo_docs ORDER BY id",
    ])  # fmt: skip


def test_literals_compare_as_jsonb(clients: tuple[Client, Client]) -> None:
    _same(clients, [
        "CREATE TABLE jo_lit (id int, j jsonb)",
        """INSERT INTO jo_lit VALUES (1, '{"pos": 98, "line": 371, "node": "CBA"}'), (2, '{"a": 1.0}'), (3, '[1, 2]'), (4, '5')""",
        """SELECT id FROM jo_lit WHERE j = '{"node":"CBA", "pos":98, "line":371}'""",
        """SELECT id FROM jo_lit WHERE j = '{"a": 1}' OR j = '[1,2]' ORDER BY id""",
        """SELECT id, j > '{"p":1}', j <= '5', j != '5' FROM jo_lit ORDER BY id""",
        """SELECT id FROM jo_lit WHERE j IN ('{"a": 1.00}', '5') ORDER BY id""",
        """SELECT '{"a":1, "b":2}'::jsonb = '{"b":2, "a":1.0}'""",
        "SELECT j = 5 FROM jo_lit",
        "SELECT j = 'x'::text FROM jo_lit",
        "SELECT max(j) FROM jo_lit",
    ])  # fmt: skip


def test_subscripts_and_numeric_casts(clients: tuple[Client, Client]) -> None:
    _same(clients, [
        "SELECT ('123'::jsonb)[0], ('{\"a\": 1}'::jsonb)[0], ('[1, \"2\", null]'::jsonb)[0]",
        "SELECT ('[1, \"2\", null]'::jsonb)['1'], ('[1, \"2\", null]'::jsonb)[2], ('[1, \"2\", null]'::jsonb)[3]",
        "SELECT ('[1, \"2\", null]'::jsonb)[-2], ('[1, \"2\", null]'::jsonb)[1][0]",
        "SELECT ('{\"a\": {\"b\": [1, 2]}}'::jsonb)['a']['b'][1], ('{\"a\": 1}'::jsonb)[NULL]",
        "SELECT ('[1, \"2\", null]'::jsonb)[1:2]",
        "SELECT ('[1, \"2\", null]'::jsonb)[1.0]",
        "SELECT '12345.0000000000000000000000000000000000000000000005'::jsonb::numeric",
        "SELECT '12345.0000000000000000000000000000000000000000000005'::jsonb::numeric + 1",
        "SELECT '1e3'::jsonb::numeric(10,2), '-0.5e-3'::jsonb::numeric",
        "SELECT '\"x\"'::jsonb::numeric",
        "SELECT 'null'::jsonb::numeric",
        "SELECT '[1]'::jsonb::numeric",
    ])  # fmt: skip


def test_what_would_compare_by_text_is_refused(clients: tuple[Client, Client]) -> None:
    """Grouping values whose texts differ for one jsonb value (1.0 and 1.00), JOIN USING,
    CASE … WHEN and = ANY over jsonb: PostgreSQL answers, the proxy says it cannot."""
    ref, got = clients
    for c in clients:
        c("CREATE TABLE jo_scaled (id int, j jsonb)")
        c("""INSERT INTO jo_scaled VALUES (1, '{"a": 1.0}'), (2, '{"a": 1.00}'), (3, '{"a": 1}')""")
    for sql in [
        "SELECT j, count(*) FROM jo_scaled GROUP BY j",
        "SELECT DISTINCT j FROM jo_scaled",
        "SELECT j FROM jo_scaled UNION SELECT j FROM jo_scaled",
        "SELECT array_agg(DISTINCT j) FROM jo_scaled",
        "SELECT * FROM jo_scaled a JOIN jo_scaled b USING (j)",
        "SELECT CASE j WHEN '1' THEN 1 END FROM jo_scaled",
        "SELECT j = ANY (ARRAY['1'::jsonb]) FROM jo_scaled",
    ]:
        assert ref(sql)[0] == "rows", sql
        answer = got(sql)
        assert answer[0] == "error" and answer[1] == "0A000", (sql, answer)
    _same(clients, ["SELECT count(DISTINCT j) FROM jo_scaled", "SELECT id FROM jo_scaled WHERE j = '{\"a\": 1}' ORDER BY id"])


def test_builders_and_key_operators(clients: tuple[Client, Client]) -> None:
    """to_jsonb, jsonb_agg, jsonb_build_object … write jsonb's text (keys sorted by length,
    then bytes; the last of a duplicate key); ``?``, ``?|`` and ``?&`` find keys and string
    elements."""
    _same(clients, [
        "CREATE TABLE jo_b (id int PRIMARY KEY, cat text, amt numeric(10,2), ts timestamptz, tags text[], meta jsonb)",
        "INSERT INTO jo_b VALUES (1, 'a', 10.50, '2024-01-01 10:00+00', '{x,y}', '{\"k\": 1}'),"
        " (2, 'b', 20.00, '2024-01-02 11:30+02', '{y}', '{\"k\": 2, \"z\": [1, 2]}'), (3, 'a', NULL, NULL, NULL, NULL),"
        " (4, 'c', 1, NULL, NULL, '[\"z\", \"y\", 1]'), (5, 'c', 2, NULL, NULL, '\"z\"')",
        "SELECT jsonb_agg(meta ORDER BY id), jsonb_agg(id ORDER BY id) FROM jo_b",
        "SELECT jsonb_build_object('id', id, 'amt', amt, 'ts', ts, 'tags', tags, 'meta', meta) FROM jo_b ORDER BY id",
        "SELECT to_jsonb(ts), to_jsonb(amt), to_jsonb(tags), to_jsonb(cat), to_jsonb(meta) FROM jo_b ORDER BY id",
        "SELECT jsonb_build_array(1, 'a', NULL, 2.50, true), jsonb_build_object('b', 1, 'a', 2, 'b', 3)",
        "SELECT jsonb_object_agg(cat, id ORDER BY id) FROM jo_b",
        "SELECT jsonb_object('{a,1,b,2}'), jsonb_object('{a,b}', '{1,2}')",
        "SELECT jsonb_agg(x) FROM (VALUES ('{\"b\":1,\"a\":2}'::json)) v(x)",
        "SELECT jsonb_build_object('a')",
        "SELECT jsonb_build_object(NULL, 1)",
        "SELECT jsonb_build_object(cat, 1) FROM (VALUES (NULL::text)) v(cat)",
        "SELECT to_jsonb(1, 2)",
        "SELECT id, meta ? 'z', meta ?| '{z,q}', meta ?& '{z,k}', meta ?& ARRAY['z'], meta ?| ARRAY[NULL, 'k'] FROM jo_b ORDER BY id",
        "SELECT count(*) FROM jo_b WHERE meta ? 'k'",
        "SELECT '{\"a\":1}'::jsonb ? 1",
        "SELECT id, jsonb_typeof(meta), jsonb_typeof(meta->'z'), jsonb_strip_nulls(meta) FROM jo_b ORDER BY id",
        "SELECT jsonb_array_length('[1,2]'::jsonb), jsonb_array_length('[]')",
        "SELECT jsonb_array_length('{\"a\":1}'::jsonb)",
        "SELECT jsonb_array_length('5'::jsonb)",
        "SELECT jsonb_strip_nulls('{\"a\":null,\"b\":{\"c\":null,\"d\":1.50},\"e\":[null]}'::jsonb)",
        "SELECT jsonb_extract_path(meta, 'z', '-1'), jsonb_extract_path_text(meta, 'k') FROM jo_b ORDER BY id",
        "SELECT jsonb_typeof('{\"a\":1}'::json)",
    ])  # fmt: skip


def test_set_returning_functions(clients: tuple[Client, Client]) -> None:
    """jsonb_each, jsonb_array_elements and jsonb_object_keys: keys in jsonb's order (shorter
    first), values as jsonb; a value of the wrong shape is the jsonb function's error."""
    _same(clients, [
        "SELECT * FROM jsonb_each('{\"b\":1,\"a\":\"x\",\"cc\":{\"d\":[1, 2.50]}}'::jsonb)",
        "SELECT * FROM jsonb_each_text('{\"a\":1,\"b\":\"x\",\"n\":null}')",
        "SELECT jsonb_each('{\"a\":1}'::jsonb)",
        "SELECT * FROM jsonb_array_elements('[1,{\"a\":2},\"x\"]'::jsonb)",
        "SELECT jsonb_array_elements_text('[1,\"x\",null]'::jsonb)",
        "SELECT jsonb_object_keys('{\"bb\":1,\"a\":2,\"c\":3}'::jsonb)",
        "SELECT * FROM jsonb_object_keys('{\"bb\":1,\"a\":2}') k",
        "SELECT * FROM jsonb_each('[1]'::jsonb)",
        "SELECT * FROM jsonb_array_elements('{\"a\":1}'::jsonb)",
        "SELECT * FROM jsonb_array_elements('1'::jsonb)",
        "SELECT jsonb_object_keys('[1]'::jsonb)",
        "SELECT * FROM jsonb_each_text('5')",
        "SELECT e.value->>'a', pg_typeof(e.value) FROM jsonb_array_elements('[{\"a\":1},{\"a\":2}]'::jsonb) e",
        "SELECT jsonb_each('{\"a\":1}'::json)",
    ])  # fmt: skip


def _path_into(doc: object, rnd: random.Random) -> list[str]:
    """A path that walks a document as jsonb_set would: indices into arrays (in range or
    not, negative too), keys of objects (present or not), anything past a scalar."""
    path: list[str] = []
    while rnd.random() < 0.75:
        if isinstance(doc, list):
            i = rnd.randint(-len(doc) - 2, len(doc) + 1)
            path.append(str(i))
            doc = doc[i] if -len(doc) <= i < len(doc) else None
        elif isinstance(doc, dict):
            key = rnd.choice([*doc, "new"]) if doc else "new"
            path.append(key)
            doc = doc.get(key)
        else:
            path.append(rnd.choice(["a", "0"]))
            doc = None
    return path


def test_editing_functions(clients: tuple[Client, Client]) -> None:
    """``-``, ``#-`` and jsonb_set as jsonfuncs.c edits: fixed cases with their errors, and
    random paths through random documents."""
    _same(clients, [
        "SELECT '{\"a\":1,\"b\":2.50}'::jsonb - 'a', '[\"a\",\"b\",1,\"a\"]'::jsonb - 'a', '[1,2,3]'::jsonb - 1, '[1,2,3]'::jsonb - -1",
        "SELECT '[1,2,3]'::jsonb - 5, '[1,2,3]'::jsonb - -5, '{}'::jsonb - 'a', '[]'::jsonb - 0",
        "SELECT '{\"a\":1,\"b\":2,\"c\":3}'::jsonb - '{a,c}'::text[], '{\"a\":1}'::jsonb - ARRAY['a', NULL]",
        "SELECT '{\"a\":{\"b\":[1,2,{\"c\":3}]}}'::jsonb #- '{a,b,2,c}', '{\"a\":{\"b\":[1,2]}}'::jsonb #- '{a,b,-1}'",
        "SELECT '5'::jsonb - 'a'",
        "SELECT '{\"a\":1}'::jsonb - 1",
        "SELECT '5'::jsonb #- '{a}'",
        "SELECT '[1]'::jsonb #- '{x}'",
        "SELECT '{\"a\":[1]}'::jsonb #- '{a,null}'",
        "SELECT '{\"a\":1}'::jsonb - 1.5",
        "SELECT jsonb_set('{\"a\":1}', '{b}', '2'), jsonb_set('{\"a\":{\"b\":1}}', '{a,c}', '[1, 2.50]')",
        "SELECT jsonb_set('[1,2,3]', '{-1}', '9'), jsonb_set('[1,2,3]', '{10}', '9'), jsonb_set('[1,2,3]', '{-10}', '9')",
        "SELECT jsonb_set('{\"a\":1}', '{b}', '2', false), jsonb_set('[]', '{0}', '1'), jsonb_set('{}', '{a}', '1', false)",
        "SELECT jsonb_set('5', '{a}', '1')",
        "SELECT jsonb_set('[1]', '{x}', '1')",
        "SELECT jsonb_set('{\"a\":1}', '{null}', '1')",
        "SELECT jsonb_set('{\"a\":1}', '{}', '1'), jsonb_set('{\"a\":1}', '{a}', NULL)",
        "SELECT jsonb_set('{\"a\":1}', '{a}', 1)",
    ])  # fmt: skip
    rnd = random.Random(5)
    docs = [d for d in _documents(300, seed=23) if d.startswith(("{", "["))]
    rows = []
    for i, d in enumerate(docs):
        path = _path_into(json.loads(d), rnd)
        literal = "{" + ",".join('"' + p.replace('"', '\\"') + '"' for p in path) + "}"
        rows.append(f"({i}, '{d}', '{literal}')")
    _same(clients, [
        "CREATE TABLE jo_e (id int, doc jsonb, path text[])",
        f"INSERT INTO jo_e VALUES {', '.join(rows)}",
        "SELECT id, jsonb_set(doc, path, '{\"n\": 1.50}'), jsonb_set(doc, path, '\"N\"', false), doc #- path FROM jo_e ORDER BY id",
    ])  # fmt: skip
