"""Answers that must be PostgreSQL's, not merely plausible: statements where DuckDB's own
semantics would give a different result without an error. Each statement runs on a real
PostgreSQL 15 and on the proxy, over the same small tables, and must answer the same.
"""

from __future__ import annotations

import itertools

from tests.pgcluster import PgCluster
from tests.pgcompare import Client
from tests.proxy import ProxyServer

_dbs = itertools.count(1)

#: character(n): stored with its padding, which bpchar's comparisons and its cast to text
#: (what every text function and operator receives) ignore, and pattern matching sees.
CHARACTER_N = [
    "CREATE TABLE c (x char(5), y varchar(5), z text)",
    "INSERT INTO c VALUES ('ab', 'ab', 'ab '), ('cd', 'cd ', 'cd')",
    "SELECT x, y, z FROM c ORDER BY x",
    "SELECT x || '|', y || '|', z || '|' FROM c ORDER BY 1",
    "SELECT x = 'ab', x = 'ab   ', x < 'ab ', x > 'ab' FROM c ORDER BY x",
    "SELECT count(*) FROM c WHERE x = 'ab'",
    "SELECT x FROM c WHERE x = 'ab  '::char(5)",
    "SELECT x FROM c WHERE x = y ORDER BY x",
    "SELECT x FROM c WHERE x = z ORDER BY x",
    "SELECT x FROM c WHERE x IN ('ab', 'zz')",
    "SELECT x FROM c WHERE x BETWEEN 'aa' AND 'ab'",
    "SELECT x = ANY('{ab,cd}'), x = ANY('{\"ab  \"}'), x = ANY(ARRAY['ab']) FROM c ORDER BY x",
    "SELECT x IN (SELECT y FROM c), y IN (SELECT x FROM c) FROM c ORDER BY x",
    "SELECT CASE x WHEN 'ab' THEN 1 ELSE 0 END FROM c ORDER BY x",
    "SELECT upper(x) || '|', length(x), x::text || '|', x::varchar || '|' FROM c ORDER BY x",
    "SELECT x LIKE 'ab', x LIKE 'ab%', x ~ 'b$', x NOT LIKE 'ab' FROM c ORDER BY x",
    "SELECT concat(x, '|'), format('%s|', x) FROM c ORDER BY x",
    "SELECT string_agg(x, ',' ORDER BY x) || '|', max(x) || '|' FROM c",
    "SELECT coalesce(x, 'q') || '|' FROM c ORDER BY x",
    "SELECT char(20) 'characters' || ' and text', text 'text' || char(20) ' and characters'",
    "SELECT 'ab'::char(5) IN ('ab', 'x'), 'ab'::char(5) = 'ab'::varchar, 'ab'::char(5) = 'ab '::text",
]


def test_character_n_compares_and_converts_as_postgresql_does(proxy: ProxyServer, pg15: PgCluster) -> None:
    db = f"sem{next(_dbs)}"
    pg15.psql(f"CREATE DATABASE {db}")
    with Client(pg15.dsn(dbname=db)) as ref, Client(proxy.dsn()) as got:
        for sql in CHARACTER_N:
            assert got(sql) == ref(sql), sql


#: format(): NULL prints as nothing, values by their output function (bool as t), positions
#: and widths as PostgreSQL reads them, and its errors.
FORMAT = [
    "SELECT format('%s%s%s', 'Hello', NULL, 'World')",
    "SELECT format('%s|%s|%s|%s|%s', true, 1.5::float8, '2020-01-01'::date, ARRAY[1, 2], 'ab'::char(5))",
    "SELECT format('%-6s|%6s|', 'ab', 'cd'), format('%2$s %1$s', 'a', 'b'), format('100%% %s', 3)",
    "SELECT format('x'), format('%s', 'x'::text, 'unused')",
    "SELECT format('%s %s', 'a')",
    "SELECT format('%d', 1)",
    "SELECT format('%0$s', 1)",
]


def test_format_prints_as_postgresql_does(proxy: ProxyServer, pg15: PgCluster) -> None:
    with Client(pg15.dsn()) as ref, Client(proxy.dsn()) as got:
        for sql in FORMAT:
            assert got(sql) == ref(sql), sql
