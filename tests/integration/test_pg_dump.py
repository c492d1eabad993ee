"""pg_dump against the proxy and a real PostgreSQL 15 holding the same schema and rows:
the dumps are the same text (but for the random ``\\restrict`` key and the server's
version string, which names Debian's build on the reference). Views are left out: the
proxy's pg_get_viewdef prints pglast's deparse, not ruleutils' (docs/sql-server.md)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import Client
from tests.proxy import ProxyServer

SCHEMA = [
    "CREATE SCHEMA app",
    "CREATE TABLE app.orders (id bigint PRIMARY KEY, customer text NOT NULL DEFAULT 'nobody', "
    "total numeric(10,2), placed timestamptz, tags text[], doc jsonb) WITH (fillfactor = 80)",
    "CREATE TABLE items (order_id bigint, sku varchar(12), qty int DEFAULT 1, price numeric, ok boolean)",
    "CREATE SEQUENCE item_seq START 5 INCREMENT 2",
    "CREATE TABLE counters (id serial PRIMARY KEY, n int GENERATED ALWAYS AS IDENTITY)",
    "CREATE INDEX items_sku ON items (sku DESC NULLS LAST) INCLUDE (qty)",
    "CREATE UNIQUE INDEX ON app.orders (customer, placed) NULLS NOT DISTINCT",
    "ALTER TABLE items ADD CONSTRAINT items_order_sku UNIQUE (order_id, sku)",
    "CREATE INDEX ON items USING hash (ok)",
    "CREATE INDEX items_lower_sku ON items (lower(sku))",
    "CREATE INDEX items_open ON items (order_id) WHERE ok AND qty > 0",
    "CREATE INDEX items_sku_like ON items (sku varchar_pattern_ops)",
    "COMMENT ON TABLE items IS 'what was ordered'",
    "COMMENT ON COLUMN app.orders.doc IS 'the order''s document'",
    "COMMENT ON SCHEMA app IS 'the application'",
    "COMMENT ON INDEX items_sku IS 'by sku'",
    "COMMENT ON CONSTRAINT items_order_sku ON items IS 'one line a sku'",
    "CREATE TABLE app.lines (id int PRIMARY KEY, order_id bigint REFERENCES app.orders ON DELETE CASCADE, sku varchar(12), "
    "CONSTRAINT lines_item FOREIGN KEY (order_id, sku) REFERENCES items (order_id, sku) MATCH FULL ON UPDATE CASCADE "
    "ON DELETE SET NULL (sku))",
    "ALTER TABLE items ADD CONSTRAINT items_order FOREIGN KEY (order_id) REFERENCES app.orders NOT VALID",
    "COMMENT ON CONSTRAINT lines_item ON app.lines IS 'the line''s item'",
    "INSERT INTO app.orders VALUES (1, 'ann', 12.50, '2024-01-02 03:04:05+00', '{a,\"b c\"}', '{\"k\": [1, 2]}'), "
    "(2, 'bob', NULL, NULL, NULL, NULL)",
    "INSERT INTO items VALUES (1, 'X-1', 3, 1.005, true), (2, NULL, NULL, NULL, NULL)",
    "INSERT INTO app.lines VALUES (1, 1, 'X-1'), (2, NULL, NULL)",
    "CREATE TABLE app.checked (id int PRIMARY KEY, qty int CHECK (qty > 0), status varchar(8) "
    "CHECK (status IN ('new', 'done')), lo int, hi int, \"Odd\" numeric(6,2) CHECK (\"Odd\" BETWEEN 0 AND 9.5), "
    "CONSTRAINT ordered CHECK (lo <= hi OR lo IS NULL) NO INHERIT)",
    "ALTER TABLE app.checked ADD CONSTRAINT late CHECK (id <> 13) NOT VALID",
    "COMMENT ON CONSTRAINT ordered ON app.checked IS 'low first'",
    "INSERT INTO app.checked VALUES (1, 2, 'new', 1, 2, 9.5), (2, NULL, NULL, NULL, NULL, NULL)",
    "CREATE DOMAIN app.amount AS numeric(10,2) NOT NULL DEFAULT 1 CONSTRAINT amount_pos CHECK (VALUE > 0)",
    "CREATE DOMAIN app.small_amount AS app.amount CHECK (VALUE < 100)",
    "CREATE DOMAIN label AS varchar(8) DEFAULT 'none'",
    "CREATE TABLE app.priced (id int PRIMARY KEY, a app.amount, s app.small_amount, l label DEFAULT 'x', ls label)",
    "INSERT INTO app.priced (id, a, s) VALUES (1, 2.5, 3)",
]


def _dump(dsn: str, *args: str) -> str:
    out = subprocess.run(["pg_dump", *args, "-d", dsn], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = re.sub(r"^\\(un)?restrict \S+$", r"\\\1restrict KEY", out.stdout, flags=re.M)
    return re.sub(r"^-- Dumped from database version .*$", "-- Dumped from database version", text, flags=re.M)


@pytest.mark.skipif(shutil.which("pg_dump") is None, reason="pg_dump is PostgreSQL's client; scripts/setup installs it")
@pytest.mark.parametrize("args", [("--schema-only",), ()], ids=["schema", "schema-and-data"])
def test_pg_dump_writes_what_postgresql_writes(proxy: ProxyServer, pg15: PgCluster, args: tuple[str, ...]) -> None:
    db = pg15.new_database("dump")
    px = proxy.dsn()
    with Client(px) as c:
        if c("SELECT to_regclass('app.checked')")[2] == [(None,)]:
            for sql in SCHEMA:
                assert c(sql)[0] != "error", sql
    with Client(pg15.dsn(dbname=db)) as c:
        for sql in SCHEMA:
            assert c(sql)[0] != "error", sql
    want, have = _dump(pg15.dsn(dbname=db), *args), _dump(px, *args)
    assert have.splitlines() == want.splitlines()


#: What a PostgreSQL database holds besides SCHEMA that its dump writes as statements the
#: proxy must take back: generated columns and a table made LIKE another.
RESTORED = [
    *SCHEMA,
    "CREATE TABLE app.measured (id int PRIMARY KEY, w int, h int, area int GENERATED ALWAYS AS (w * h) STORED)",
    "INSERT INTO app.measured (id, w, h) VALUES (1, 2, 3), (2, NULL, 4)",
    "CREATE TABLE app.orders_copy (LIKE app.orders INCLUDING ALL)",
    "INSERT INTO app.orders_copy SELECT * FROM app.orders",
    "CREATE TYPE app.mood AS ENUM ('sad', 'ok', 'happy')",
    "CREATE TYPE app.pair AS (x int, y text)",
    "CREATE TABLE app.people (id bigserial PRIMARY KEY, name text NOT NULL, mood app.mood DEFAULT 'ok', born date)",
    "INSERT INTO app.people (name, mood, born) VALUES ('ann', 'happy', '2000-01-02'), ('bob', NULL, NULL)",
    "CREATE VIEW app.happy AS SELECT id, name FROM app.people WHERE mood = 'happy'",
    "CREATE TABLE app.events (id int, at date NOT NULL, what text) PARTITION BY RANGE (at)",
    "CREATE TABLE app.events_2024 PARTITION OF app.events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')",
    "CREATE TABLE app.events_rest PARTITION OF app.events DEFAULT",
    "INSERT INTO app.events VALUES (1, '2024-05-06', 'x'), (2, '2030-01-01', 'y')",
    "GRANT SELECT ON app.people TO dump_reader",
    "GRANT USAGE ON SCHEMA app TO dump_reader",
]


@pytest.mark.skipif(shutil.which("pg_dump") is None, reason="pg_dump is PostgreSQL's client; scripts/setup installs it")
def test_a_postgresql_dump_restores_into_the_proxy(pg15: PgCluster) -> None:
    """pg_dump of a PostgreSQL 15 database (schema and data, plain SQL) run by psql with
    ON_ERROR_STOP into a fresh proxy and into a fresh PostgreSQL database: every statement
    is taken, and the two then dump the same (a restore is PostgreSQL's own round trip:
    ``(ARRAY[…])::text[]`` comes back with the cast on each element)."""

    def restore(dump: str, dsn: str) -> None:
        out = subprocess.run(
            [str(pg15.bindir / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dsn],
            input=dump, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr

    db = pg15.new_database("restore")
    with Client(pg15.dsn(dbname=db)) as c:
        c("CREATE ROLE dump_reader")  # (roles are the cluster's, not in a database's dump)
        for sql in RESTORED:
            assert c(sql)[0] != "error", sql
    dump = _dump(pg15.dsn(dbname=db))
    again = pg15.dsn(dbname=pg15.new_database("restored"))
    restore(dump, again)
    want = _dump(again)
    with ProxyServer() as fresh:
        with Client(fresh.dsn()) as c:
            c("CREATE ROLE dump_reader")  # (as pg_dumpall --globals-only would make it)
        restore(dump, fresh.dsn())
        have = _dump(fresh.dsn())
    # (a view's body is pg_get_viewdef's text, which the proxy prints its own way; where the
    # view comes in the dump, after what it reads, is compared)
    assert _VIEW_BODY.sub(r"\1", have).splitlines() == _VIEW_BODY.sub(r"\1", want).splitlines()


_VIEW_BODY = re.compile(r"^(CREATE VIEW \S+ AS)\n(?:.+\n)+", flags=re.M)
