"""Outside drivers on the JVM and on Node.js run their ordinary work against PostgreSQL 15
and the proxy; everything they print must be the same.

- pgjdbc (Debian's ``/usr/share/java/postgresql.jar``): DatabaseMetaData (getTables,
  getColumns, getPrimaryKeys, getIndexInfo, getSchemas, getTypeInfo), PreparedStatement
  round trips (setInt/setString/setObject of jsonb, setTimestamp, setBigDecimal, arrays with
  ``= ANY(?)``, bytea) and ResultSetMetaData — ``clients/JdbcDriver.java``.
- node-postgres (``pg``) and postgres.js (``postgres``), installed by ``scripts/setup`` from
  ``clients/package-lock.json``: parameters of every common type, ``= ANY($1)`` with a JS
  array, jsonb objects both ways, bytea Buffers, a transaction, a named prepared statement
  — ``clients/node_pg.js``, ``clients/postgres_js.js``.

Each run on PostgreSQL gets a database of its own; the proxy's tables get unique names.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

import psycopg

from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer

CLIENTS = Path(__file__).parent / "clients"
PGJDBC = Path("/usr/share/java/postgresql.jar")
_names = itertools.count(1)


def _fresh(pg15: PgCluster) -> tuple[str, str]:
    """A new database on PostgreSQL and a table name unique on the proxy."""
    n = next(_names)
    db = f"jsdrv{n}"
    pg15.psql(f"CREATE DATABASE {db}")
    return db, f"drv{n}_{os.getpid()}"


def _run(cmd: list[str]) -> str:
    env = {**os.environ, "TZ": "UTC"}
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


def _java(port: int, db: str, table: str) -> str:
    assert PGJDBC.exists(), "pgjdbc is missing: run scripts/setup (Debian's libpostgresql-jdbc-java)"
    url = f"jdbc:postgresql://127.0.0.1:{port}/{db}?user=postgres"
    return _run(["java", "-Duser.timezone=UTC", "-cp", str(PGJDBC), str(CLIENTS / "JdbcDriver.java"), url, table])


def _node(script: str, port: int, db: str, table: str) -> str:
    assert (CLIENTS / "node_modules" / "pg").is_dir() and (CLIENTS / "node_modules" / "postgres").is_dir(), (
        "the Node.js drivers are missing: run scripts/setup (npm ci in tests/integration/clients)"
    )
    return _run(["node", str(CLIENTS / script), f"postgres://postgres@127.0.0.1:{port}/{db}", table])


def _sections(out: str) -> dict[str, list[str]]:
    """The client's output by ``== title`` section (a failed step prints ``!! …``)."""
    sections: dict[str, list[str]] = {}
    cur = ""
    for line in out.splitlines():
        if line.startswith("== "):
            cur = line.split(" [")[0]
        sections.setdefault(cur, []).append(line)
    return sections


def _type_rows(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    """getTypeInfo's rows by type name, and the section's other lines."""
    rows = {line.split(" | ")[0].removeprefix("String:"): line for line in lines if line.startswith("String:")}
    return rows, [line for line in lines if not line.startswith("String:")]


# -- pgjdbc --------------------------------------------------------------------------------

#: getTypeInfo's rows the proxy's pg_type does not have: the array types of the system
#: catalogs' and information_schema views' row types, and information_schema's domains
#: (cardinal_number, character_data, …) with their arrays.
_CATALOG_ROW_AND_DOMAIN_TYPES = """
    SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE n.nspname IN ('pg_catalog', 'information_schema')
      AND (t.typtype = 'd' OR EXISTS (SELECT 1 FROM pg_type e
                                      WHERE e.oid = t.typelem AND e.typtype IN ('c', 'd')))"""


def test_pgjdbc_metadata_and_prepared_statements(proxy: ProxyServer, pg15: PgCluster) -> None:
    db, table = _fresh(pg15)
    ref, got = _java(pg15.port, db, table), _java(proxy.port, "postgres", table)
    errors = [line for line in ref.splitlines() if line.startswith("!!")]
    assert errors == [f'!! duplicate key: 23505 ERROR: duplicate key value violates unique constraint "{table}_pkey"'], ref
    ref_s, got_s = _sections(ref), _sections(got)
    # getTypeInfo: pgjdbc's query has no ORDER BY (rows come in heap order), so compare
    # the rows as sets; the proxy lacks exactly the catalog row types' arrays and
    # information_schema's domains.
    with psycopg.connect(pg15.dsn(dbname=db)) as c:
        known_gap = {r[0] for r in c.execute(_CATALOG_ROW_AND_DOMAIN_TYPES)}
    ref_types, ref_rest = _type_rows(ref_s.pop("== getTypeInfo"))
    got_types, got_rest = _type_rows(got_s.pop("== getTypeInfo"))
    assert ref_types.keys() - got_types.keys() == known_gap
    assert got_types.keys() <= ref_types.keys()
    assert {n: r for n, r in ref_types.items() if n not in known_gap} == got_types
    assert got_rest[0] == ref_rest[0]  # the header
    assert (ref_rest[1], got_rest[1]) == (f"({len(ref_types)} rows)", f"({len(got_types)} rows)")
    assert got_rest[2:] == ref_rest[2:]  # what the next steps printed
    for title in ref_s:
        assert got_s.get(title) == ref_s[title], title
    assert got_s.keys() == ref_s.keys()


# -- Node.js -------------------------------------------------------------------------------


def test_node_postgres(proxy: ProxyServer, pg15: PgCluster) -> None:
    db, table = _fresh(pg15)
    ref = _node("node_pg.js", pg15.port, db, table)
    assert "SELECT 4" in ref and "!! error: 22P02" in ref, ref
    assert f"constraint={table}_pkey" in ref and "detail=Failing row contains (null, name 2," in ref, ref
    # known difference: a missing column has no "Perhaps you meant" hint (PostgreSQL's
    # fuzzy match of column names)
    expected = ref.replace(f'hint=Perhaps you meant to reference the column "{table}.name". ', "hint=- ")
    assert expected != ref
    assert _node("node_pg.js", proxy.port, "postgres", table) == expected


def test_postgres_js(proxy: ProxyServer, pg15: PgCluster) -> None:
    """postgres.js serialises by the types of ParameterDescription: a jsonb column's
    parameter must be reported as jsonb, or an object is stored as ``[object Object]``."""
    db, table = _fresh(pg15)
    ref = _node("postgres_js.js", pg15.port, db, table)
    assert '"via":"sql.json"' in ref and "[object Object]" not in ref, ref
    # what the proxy cannot do it refuses, naming the feature: a column of a type the lake
    # does not store
    assert "listen -> hello\n" in ref
    expected = ref.replace(
        "xml column -> created\n", "!! xml column: 0A000 a column of type xml is not supported by walsender-proxy\n"
    )
    assert _node("postgres_js.js", proxy.port, "postgres", table) == expected
