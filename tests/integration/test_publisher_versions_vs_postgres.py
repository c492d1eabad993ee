"""The catalog calls whose meaning changed with PostgreSQL 16, as the proxy answers them
when it claims 16, compared with a real PostgreSQL 16 holding the same schema:
``pg_get_publication_tables(VARIADIC text[])`` (pubid, relid, attrs, qual; every column
listed when a table has no column list; partitions left out when a publication publishes
via the root), the table list a 16+ subscriber asks for (an aggregate inside a set-returning
call in a SELECT list, ``(f(…)).*``), the tablesync queries, and the errors. A proxy
claiming 15 keeps 15's signature."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.pgcluster import PgCluster, major_cluster
from tests.proxy import ProxyServer

SCHEMA = [
    "CREATE TABLE a (id int PRIMARY KEY, x text, gen int GENERATED ALWAYS AS (id * 2) STORED, y int)",
    "ALTER TABLE a DROP COLUMN y",
    "CREATE TABLE b (id int PRIMARY KEY, v int, w text)",
    "CREATE SCHEMA s1",
    "CREATE TABLE s1.c (id int PRIMARY KEY, z text)",
    "CREATE TABLE parted (id int PRIMARY KEY, k int) PARTITION BY RANGE (id)",
    "CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (100)",
    "CREATE TABLE parted_2 PARTITION OF parted FOR VALUES FROM (100) TO (200)",
    "CREATE PUBLICATION p_cols FOR TABLE b (id, v) WHERE (v > 1), a",
    "CREATE PUBLICATION p_root FOR TABLE parted WITH (publish_via_partition_root = true)",
    "CREATE PUBLICATION p_leaf FOR TABLE parted_1",
    "CREATE PUBLICATION p_schema FOR TABLES IN SCHEMA s1",
    "CREATE PUBLICATION p_all FOR ALL TABLES",
]

_GPT = "SELECT p.pubname, g.relid::regclass, g.attrs, pg_get_expr(g.qual, g.relid) FROM {call} g JOIN pg_publication p ON p.oid = g.pubid"

QUERIES = {
    "variadic_array": _GPT.format(call="pg_get_publication_tables(VARIADIC ARRAY['p_cols', 'p_schema', 'p_leaf'])"),
    "names_one_by_one": _GPT.format(call="pg_get_publication_tables('p_cols', 'p_leaf')"),
    "one_name": _GPT.format(call="pg_get_publication_tables('p_schema')"),
    "via_root_wins": _GPT.format(call="pg_get_publication_tables('p_root', 'p_leaf')"),
    "leaf_alone": _GPT.format(call="pg_get_publication_tables('p_leaf')"),
    "all_tables": _GPT.format(call="pg_get_publication_tables(VARIADIC ARRAY['p_all'])"),
    "null_array": "SELECT * FROM pg_get_publication_tables(VARIADIC NULL::text[])",
    "star_of_call": "SELECT (pg_get_publication_tables('p_cols')).relid::regclass",
    # fetch_table_list of a 16+ subscriber (subscriptioncmds.c), verbatim
    "fetch_table_list": "SELECT DISTINCT n.nspname, c.relname, gpt.attrs\n"
    "   FROM pg_class c\n         JOIN pg_namespace n ON n.oid = c.relnamespace\n"
    "         JOIN ( SELECT (pg_get_publication_tables(VARIADIC array_agg(pubname::text))).*\n"
    "                FROM pg_publication\n                WHERE pubname IN ( 'p_cols', 'p_root', 'p_leaf', 'p_schema' )) AS gpt\n"
    "             ON gpt.relid = c.oid\n",
    # tablesync.c's column list and row filter queries (16), per table
    "column_list": "SELECT DISTINCT  (CASE WHEN (array_length(gpt.attrs, 1) = c.relnatts)   THEN NULL ELSE gpt.attrs END)"
    "  FROM pg_publication p,  LATERAL pg_get_publication_tables(p.pubname) gpt,  pg_class c"
    " WHERE gpt.relid = 'b'::regclass AND c.oid = gpt.relid   AND p.pubname IN ( 'p_cols' )",
    "column_list_all": "SELECT DISTINCT  (CASE WHEN (array_length(gpt.attrs, 1) = c.relnatts)   THEN NULL ELSE gpt.attrs END)"
    "  FROM pg_publication p,  LATERAL pg_get_publication_tables(p.pubname) gpt,  pg_class c"
    " WHERE gpt.relid = 'a'::regclass AND c.oid = gpt.relid   AND p.pubname IN ( 'p_cols', 'p_all' )",
    "row_filter": "SELECT DISTINCT pg_get_expr(gpt.qual, gpt.relid)  FROM pg_publication p,"
    "  LATERAL pg_get_publication_tables(p.pubname) gpt WHERE gpt.relid = 'b'::regclass   AND p.pubname IN ( 'p_cols' )",
    # (f(…)).* of other set-returning functions, evaluated after the aggregation
    "json_each_star": """SELECT (json_each('{"a": 1, "b": [2]}')).*""",
    "json_each_field": """SELECT (json_each('{"a": 1, "b": [2]}')).key AS k, 'x' AS other""",
    "after_group_by": "SELECT k, (jsonb_each(jsonb_object_agg(id::text, k))).* FROM (VALUES (1, 1), (2, 1), (3, 2)) v(id, k) GROUP BY k",
    "per_row": "SELECT id, (jsonb_each(jsonb_build_object('n', id))).value FROM (VALUES (1), (2)) v(id)",
    "with_having": "SELECT k, (jsonb_each(jsonb_object_agg(id::text, k))).key FROM (VALUES (1, 1), (2, 1), (3, 2)) v(id, k) GROUP BY k HAVING count(*) > 1",
    "over_a_cte": """WITH w AS (SELECT '{"x": 10}'::jsonb AS j) SELECT (jsonb_each(j)).* FROM w""",
    "in_an_expression": """SELECT (json_each_text(x)).value::int + 1 FROM (VALUES ('{"a": "5"}'::json)) v(x)""",
    "distinct": """SELECT DISTINCT (jsonb_each(j)).key FROM (VALUES ('{"a": 1, "b": 2}'::jsonb), ('{"a": 3}'::jsonb)) v(j)""",
    "limit_offset": """SELECT count(*) FROM (SELECT (jsonb_each(j)).key FROM (VALUES ('{"a": 1, "b": 2}'::jsonb), ('{"a": 3}'::jsonb)) v(j) LIMIT 2 OFFSET 1) s""",
    "null_input": """SELECT (json_each(j)).value, id FROM (VALUES (1, '{"a": 1}'::json), (2, '{}'::json), (3, null)) v(id, j)""",
}

ERRORS = [
    "SELECT * FROM pg_get_publication_tables('nope')",
    "SELECT * FROM pg_get_publication_tables(VARIADIC ARRAY['p_cols', 'nope'])",
    "SELECT * FROM pg_get_publication_tables(1)",
    "SELECT * FROM pg_get_publication_tables(VARIADIC ARRAY[1])",
    "SELECT * FROM pg_get_publication_tables(VARIADIC ARRAY['p_cols', NULL])",
    "SELECT * FROM pg_get_publication_tables()",
    "SELECT (json_each('{}')).* ORDER BY random()",
]


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[ProxyServer, PgCluster]]:
    """A proxy claiming 16 and a PostgreSQL 16, each holding :data:`SCHEMA`."""
    with major_cluster(16, {"wal_level": "logical"}) as pg16, ProxyServer(server_version="16.10") as proxy:
        for dsn in (proxy.dsn(), pg16.dsn()):
            with psycopg.connect(dsn, autocommit=True) as c:
                for sql in SCHEMA:
                    c.execute(sql)
        yield proxy, pg16


def _answer(dsn: str, sql: str) -> Any:
    with psycopg.connect(dsn, autocommit=True) as c:
        try:
            cur = c.execute(sql)
        except psycopg.Error as e:
            return ("error", e.sqlstate, str(e.diag.message_primary))
        return [d.name for d in cur.description or ()], sorted(cur.fetchall(), key=repr)


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_a_16_publishers_catalog_calls(pair: tuple[ProxyServer, PgCluster], name: str) -> None:
    proxy, pg16 = pair
    want = _answer(pg16.dsn(), QUERIES[name])
    assert want[0] != "error", want
    assert _answer(proxy.dsn(), QUERIES[name]) == want


@pytest.mark.parametrize("sql", ERRORS)
def test_a_16_publishers_errors(pair: tuple[ProxyServer, PgCluster], sql: str) -> None:
    proxy, pg16 = pair
    want = _answer(pg16.dsn(), sql)
    got = _answer(proxy.dsn(), sql)
    if sql.endswith("ORDER BY random()"):  # (refused by name: the proxy does not place such a sort)
        assert want[0] != "error" and got[:2] == ("error", "0A000"), got
        return
    assert got == want


def test_a_15_publisher_keeps_15s_signature(proxy: ProxyServer, pg15: PgCluster) -> None:
    """Claiming 15: one name, (relid, attrs, qual), 42704 for an unknown publication (it
    was an empty set), and 16's forms refused as PostgreSQL 15 refuses them."""
    for sql in (
        "SELECT * FROM pg_get_publication_tables('nope')",
        "SELECT * FROM pg_get_publication_tables('a', 'b')",
        "SELECT * FROM pg_get_publication_tables(VARIADIC ARRAY['a'])",
        "SELECT * FROM pg_get_publication_tables(NULL)",
        "SELECT (pg_get_publication_tables(NULL)).*",
    ):
        assert _answer(proxy.dsn(), sql) == _answer(pg15.dsn(), sql), sql


_SLOTS = (
    "SELECT slot_name, plugin, slot_type, database, temporary, active, active_pid IS NULL AS idle, wal_status, "
    "two_phase, {later} FROM pg_replication_slots ORDER BY slot_name"
)
_LATER = {16: "conflicting", 17: "inactive_since IS NOT NULL AS let_go, conflicting, invalidation_reason, failover, synced"}


@pytest.mark.parametrize("major", [16, 17])
def test_pg_replication_slots_has_the_claimed_versions_columns(major: int) -> None:
    """``pg_replication_slots`` of a proxy claiming 16 has ``conflicting``; claiming 17,
    ``inactive_since``, ``conflicting``, ``invalidation_reason``, ``failover`` and
    ``synced`` too, in PostgreSQL's order and types; a slot made with 17's ``FAILOVER``
    shows it, and ``inactive_since`` is set while nobody streams from a slot, NULL while
    one does."""
    with major_cluster(major, {"wal_level": "logical"}) as pg, ProxyServer(server_version=f"{major}.6") as proxy:
        answers = []
        for dsn in (proxy.dsn(), pg.dsn()):
            with psycopg.connect(dsn, autocommit=True) as c:
                cur = c.execute("SELECT * FROM pg_replication_slots")
                shape = [(d.name, d.type_code) for d in cur.description or ()]
            with psycopg.connect(dsn + " replication=database", autocommit=True) as r:
                r.execute("CREATE_REPLICATION_SLOT s_plain LOGICAL pgoutput (SNAPSHOT 'nothing')")
                if major >= 17:
                    r.execute("CREATE_REPLICATION_SLOT s_failover LOGICAL pgoutput (SNAPSHOT 'nothing', FAILOVER)")
                r.execute("CREATE_REPLICATION_SLOT s_temp TEMPORARY LOGICAL pgoutput (SNAPSHOT 'nothing')")
                slots = _answer(dsn, _SLOTS.format(later=_LATER[major]))
            after = _answer(dsn, _SLOTS.format(later=_LATER[major]))
            answers.append((shape, slots, after))
        assert answers[0] == answers[1]
