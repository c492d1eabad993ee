"""The json type and its functions answer as PostgreSQL 15 does, or refuse (0A000).

A json value is the text it was given: ``->``, ``#>``, json_each … return the sub-value's
original text (white space, duplicate keys); values become JSON as datum_to_json writes
them (ISO 8601 timestamps with ``T``, NaN and Infinity quoted, json embedded as it is);
json has no equality or ordering. Each statement runs on a real PostgreSQL 15 and on the
proxy and must give the same columns, rows or error (SQLSTATE, message, detail).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from psycopg.types.string import TextLoader

from tests.pgcluster import PgCluster
from tests.pgcompare import Client
from tests.proxy import ProxyServer

_dbs = itertools.count(1)

#: json, jsonb, numeric, floats, dates, booleans, records and arrays come back as their text,
#: compared as such (psycopg would parse json into dicts, where key order and spacing vanish).
_AS_TEXT = (114, 3802, 1700, 700, 701, 1082, 1114, 1184, 1083, 1186, 16, 2249, 1009, 1007, 199, 3807, 1022)


def _client(dsn: str) -> Client:
    c = Client(dsn)
    for oid in _AS_TEXT:
        c.conn.adapters.register_loader(oid, TextLoader)
    return c


@pytest.fixture(scope="module")
def clients(proxy: ProxyServer, pg15: PgCluster) -> Iterator[tuple[Client, Client]]:
    """(PostgreSQL, proxy) clients, on a fresh database of the PostgreSQL server."""
    db = f"js{next(_dbs)}"
    pg15.psql(f"CREATE DATABASE {db}")
    ref, got = _client(pg15.dsn(dbname=db)), _client(proxy.dsn())
    yield ref, got
    ref.close()
    got.close()


def _same(clients: tuple[Client, Client], statements: list[str]) -> None:
    ref, got = clients
    for sql in statements:
        assert repr(got(sql)) == repr(ref(sql)), sql


#: the regression file's table, with spacing, nesting and a scalar
TABLE = [
    "CREATE TABLE test_json (json_type text, test_json json)",
    "INSERT INTO test_json VALUES ('scalar','\"a scalar\"'),"
    " ('array','[\"zero\", \"one\",\"two\",null,\"four\",\"five\", [1,2,3],{\"f1\":9}]'),"
    " ('object','{\"field1\":\"val1\",\"field2\":\"val2\",\"field3\":null, \"field4\": 4, \"field5\": [1,2,3], \"field6\": {\"f1\":9}}'),"
    " ('dups', '{ \"a\" : 1, \"b\":{\"c\" : [ 1 ,2 ]}, \"a\" : {\"x\": \"y\"} }')",
]

#: ->, ->>, #>, #>> on json: the sub-value's text as given, the last of duplicate keys,
#: negative subscripts, NULL for no match, strings de-escaped by the text forms
OPERATORS = [
    "SELECT json_type, test_json -> 'x', test_json -> 'field2', test_json ->> 'field2', test_json -> 'a',"
    " test_json ->> 'a' FROM test_json ORDER BY json_type",
    "SELECT json_type, test_json -> 2, test_json ->> 2, test_json -> -1, test_json ->> 6, test_json -> 7,"
    " test_json -> 8, test_json -> -9 FROM test_json ORDER BY json_type",
    "SELECT json_type, test_json #> '{field6,f1}', test_json #>> '{6,1}', test_json #> '{b,c,-1}',"
    " test_json #>> '{b,c}', test_json #> '{}', test_json #>> '{}' FROM test_json ORDER BY json_type",
    "SELECT (test_json->'field3') IS NULL, (test_json->>'field3') IS NULL, (test_json->3) IS NULL,"
    " (test_json->>3) IS NULL FROM test_json ORDER BY json_type",
    "select '{\"a\": [{\"b\": \"c\"}, {\"b\": \"cc\"}]}'::json -> ''",
    "select '[{\"b\": \"c\"}, {\"b\": \"cc\"}]'::json -> 1, '[{\"b\": \"c\"}, {\"b\": \"cc\"}]'::json ->> 1",
    "select '{\"a\": [{\"b\": \"c\"}, {\"b\": \"cc\"}]}'::json ->> '', '{\"a\": \"c\", \"b\": null}'::json ->> 'b'",
    "select '{\"a\": [{\"b\": \"c\"}, {\"b\": \"cc\"}]}'::json -> null::text, '{\"a\":1}'::json -> null::int,"
    " '{\"a\":1}'::json -> null, '{\"a\":1}'::json #> null",
    "select '\"foo\"'::json -> 1, '\"foo\"'::json -> 'z', '[1,2]'::json -> 1::int2, '[1,2]'::json -> '1'",
    "select '  42  '::json #> '{}', '  \"x\\u0041\"  '::json #> '{}', '  \"x\\u0041\"  '::json #>> '{}',"
    " 'null'::json #>> '{}', '  [1, 2]  '::json #> '{}'",
    "select '{\"a\": {\"b\":{\"c\": \"foo\"}}}'::json #> array['a', null], '{\"a\": {\"b\":{\"c\": \"foo\"}}}'::json #> array['a', ''],"
    " '{\"a\": {\"b\":{\"c\": \"foo\"}}}'::json #>> array['a','b','c'], '[{\"b\": \"c\"}, {\"b\": null}]'::json #>> array['1','b']",
    "select '{\"x\":[1,2,3,4,5],\"a\":[1,2]}'::json #> '{a,-1}', '[[1,2],[3,4,5]]'::json #> '{-1,-1}',"
    " '{\"a\":[1,2]}'::json #> '{a,\" 1\"}', '{\"a\":[1,2]}'::json #> '{a,\"1 \"}', '{\"a\":{\"b\":1},\"a\":{\"c\":2}}'::json #> '{a,b}'",
    "select '{\"a\":\"\\u0000\",\"b\":1}'::json -> 'b'",
    "select '{\"a\":\"\\ud800\",\"b\":1}'::json ->> 'b'",
    "select '{\"a\":1}'::json -> 'a' -> 'b', ('{\"a\":{\"b\":[1]}}'::json -> 'a') #>> '{b,0}'",
    "select '[1,2]'::json -> 1::int8",
    "select '[1,2]'::json ->> 1.0",
    "select '[1,2]'::json #> array[1]",
    "select '{\"a\":1}' -> 'a'",
    "select '[1]' -> 0",
    "select 'x'::text -> 'a'",
    "select 'x'::text #> '{a}'",
    "select 1 -> 'a'",
    "select '{\"a\":1}'::jsonb #> '{a}', '{\"a\":[1,{\"b\":\"x\"}]}'::jsonb #>> '{a,-1,b}', '{\"a\":[1,2,3]}'::jsonb #> '{a,-4}',"
    " '\"x\"'::jsonb #>> '{}', '{\"a\":1}'::jsonb #> '{}', '{\"x\":[1,2,3,4,5],\"a\":[1,2]}'::jsonb #> '{a,-1}'",
]

#: the other json functions, with their errors
FUNCTIONS = [
    "SELECT json_type, json_typeof(test_json) FROM test_json ORDER BY json_type",
    "SELECT json_array_length(test_json) FROM test_json WHERE json_type = 'array'",
    "SELECT json_array_length(test_json) FROM test_json WHERE json_type = 'object'",
    "SELECT json_array_length('4')",
    "SELECT json_array_length('[]'), json_array_length(' [1, [2, 3]] '), json_array_length(null)",
    "SELECT json_array_length(' [1,2] '::text)",
    "SELECT json_object_keys(test_json) FROM test_json WHERE json_type = 'dups'",
    "SELECT json_object_keys(test_json) FROM test_json WHERE json_type = 'scalar'",
    "SELECT json_object_keys(test_json) FROM test_json WHERE json_type = 'array'",
    "SELECT json_type, k.* FROM test_json, json_each(test_json) k WHERE json_type IN ('object', 'dups') ORDER BY 1, 2, 3::text",
    "SELECT json_type, k.key, k.value FROM test_json, json_each_text(test_json) k WHERE json_type = 'object' ORDER BY 2",
    "SELECT json_type, e FROM test_json, json_array_elements_text(test_json) e WHERE json_type = 'array'",
    "SELECT e.value FROM test_json, json_array_elements(test_json) e WHERE json_type = 'array'",
    "select json_each('{\"f1\":[1,2,3],\"f2\":{\"f3\":1},\"f4\":null,\"f5\":\"x y\",\"f6\":\"\"}')",
    "select json_each_text('{\"f1\":[1,2,3],\"f2\":{\"f3\":1},\"f4\":null,\"f5\":\"null\"}')",
    "select * from json_each('{\"a\":1}') q(k, v)",
    "select json_each('[1]')",
    "select json_each_text('1')",
    "select json_array_elements('[1,true,[1,[2,3]],null,{\"f1\":1,\"f2\":[7,8,9]},false,\"stringy\"]')",
    "select * from json_array_elements_text('[1,true,[1,[2,3]],null,{\"f1\":1,\"f2\":[7,8,9]},false,\"stringy\"]') q",
    "select json_array_elements('{\"a\":1}')",
    "select json_array_elements_text('\"x\"')",
    "select json_array_elements('[1,\"\\u0000\"]')",
    "select json_array_elements_text('[1,\"\\u0000\"]')",
    "select * from json_object_keys('{\"a\":1,\"a\":2,\"b\":3}'), json_object_keys('{\"c\":1}') k",
    "select json_extract_path('{\"f2\":{\"f3\":1},\"f4\":{\"f5\":99,\"f6\":\"stringy\"}}','f4','f6'),"
    " json_extract_path_text('{\"f2\":[\"f3\",1]}','f2',1::text), json_extract_path('{\"a\":{\"b\":2}}', variadic array['a','b'])",
    "select json_extract_path('{\"a\":{\"b\":2}}')",
    "select json_strip_nulls('{ \"a\" : null , \"b\" : [ 1 , null ] , \"c\" : { \"d\" : null } }'),"
    " json_strip_nulls('  \"x\"  '), json_strip_nulls('{\"a\":\"\\u0041\"}'), json_strip_nulls(null)",
    "SELECT json_strip_nulls(test_json) FROM test_json ORDER BY json_type",
    "select json_typeof('{\"a\":\"\\u0000\"}'), json_typeof('\"\\ud800\"')",
    "select json_array_length('[1,')",
]

#: values as datum_to_json writes them, alone, in arrays and in records
TO_JSON = [
    "select to_json(timestamp '2014-05-28 12:22:35.614298'), to_json(timestamptz '2014-05-28 12:22:35.614298-04'),"
    " to_json(date '2014-05-28'), to_json(timestamp 'infinity'), to_json(date '-infinity')",
    "select to_json(x), to_json(array[x]) from (values (timestamp '0044-03-15 12:00 BC'), (timestamp '12345-01-01')) t(x)",
    "select to_json(date '0044-03-15 BC'), to_json(time '12:22:35'), to_json(interval '1 year 2 mons -3 days 04:05:06.7')",
    "SELECT row_to_json(q) FROM (SELECT 'NaN'::float8 AS \"float8field\") q",
    "SELECT row_to_json(q) FROM (SELECT 'Infinity'::float8 AS \"float8field\") q",
    "SELECT row_to_json(q) FROM (SELECT '-Infinity'::float8 AS \"float8field\") q",
    "SELECT row_to_json(q) FROM (SELECT 'NaN'::numeric AS a, 1.50::numeric AS b, 'Infinity'::numeric AS c) q",
    "SELECT row_to_json(q) FROM (SELECT '{\"a\":1,\"b\": [2,3,4,\"d\",\"e\",\"f\"],\"c\":{\"p\":1,\"q\":2}}'::json AS \"jsonfield\") q",
    "SELECT row_to_json(q) FROM (SELECT '{\"b\": 1, \"a\": [1,2]}'::jsonb AS j, 'x y'::text AS t, true AS b, null::int AS n) q",
    "select to_json(x), to_json(array[x]) from (values (1.5::float8), ('NaN'), ('-0'), (1e100), (0.1)) t(x)",
    "select to_json(x), to_json(array[x, null]) from (values ('a\"b\\c'||chr(10)||chr(1)||chr(27)||'é'), (''), (null)) t(x)",
    "select to_json(true), to_json('\\x00ff'::bytea), to_json('ab'::char(4)), to_json('a'::\"char\"), to_json(1::int2), to_json(2::int8)",
    "select to_json('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid), to_json(1.5::float4)",
    "select to_json(array[1,2,null]), to_json(array['a',null,'NULL']), to_json(array[]::int[]), to_json(array['{\"a\" : 1}'::json])",
    "select to_json('  {\"a\" : [1, 2]}  '::json), to_json('{\"b\":2, \"a\" : 1}'::jsonb)",
    "select to_json(null::int), to_json(null::int[]), row_to_json(null::record), to_json(null::record), row_to_json(null)",
    "select row_to_json(row(1,'foo')), to_json(row(1, 'a b', array[1]))",
    "select row_to_json(q, true) from (select 1 a, 'x' b) q",
    "SELECT array_to_json(array_agg(x),false), array_to_json(array_agg(x), true) from generate_series(5,10) x",
    "SELECT row_to_json(row((select array_agg(x) as d from generate_series(5,10) x)),false)",
    "select array_to_json(array['a b', null], true), array_to_json(array[1, 2], true), array_to_json(array['a b'])",
    "SELECT array_to_json(array_agg(q),false), array_to_json(array_agg(q ORDER BY b DESC),true)"
    " FROM (SELECT x AS b, x * 2 AS c FROM generate_series(1,3) x) q",
    "SELECT array_to_json(array_agg(x)) FROM generate_series(1,3) x WHERE false",
    "SELECT json_build_object('a', json_build_object('b',false,'c',99), 'd', json_build_object('e',array[9,8,7]::int[],"
    " 'f', (SELECT row_to_json(r) FROM (SELECT relkind, oid::regclass AS name FROM pg_class WHERE relname = 'pg_class') r)))",
    "select to_json('pg_class'::regclass), to_json('int4'::regtype), to_json(x::regclass) from (values (1259)) t(x)",
    "select to_json('x')",
    "select to_json(null)",
    "select array_to_json(null)",
    "select array_to_json(1)",
    "select row_to_json(1)",
    "select row_to_json('x')",
    "select array_to_json(null::record)",
    "select row_to_json(e) from json_array_elements_text('[1]') e",
    "SELECT row_to_json(t), to_json(t) FROM test_json t ORDER BY json_type",
]

#: json_agg, json_object_agg, json_build_object/array
AGGREGATES = [
    "CREATE TABLE foo (serial_num int, name text, type text)",
    "INSERT INTO foo VALUES (847001,'t15','GE1043'), (847002,'t16','GE1043'), (847003,'sub-alpha','GESS90')",
    "SELECT json_build_object('turbines',json_object_agg(serial_num,json_build_object('name',name,'type',type)"
    " ORDER BY serial_num)) FROM foo",
    "SELECT json_object_agg(name, type ORDER BY name) FROM foo",
    "SELECT json_agg(f ORDER BY serial_num), json_agg(f.name ORDER BY serial_num DESC) FILTER (WHERE serial_num > 847001) FROM foo f",
    "SELECT json_agg(f) FROM foo f WHERE false",
    "SELECT row_to_json(f, true) FROM foo f ORDER BY serial_num",
    "INSERT INTO foo VALUES (999999, NULL, 'bar')",
    "SELECT json_object_agg(name, type) FROM foo",
    "SELECT json_agg(q ORDER BY serial_num NULLS FIRST, name) FROM foo q",
    "select json_agg(x) from (values (1),(null),(3)) t(x)",
    "select json_agg(x) from (values (array[1]),(null),(array[3])) t(x)",
    "select json_agg(x) from (values (null::int[]),(array[1]),(array[3])) t(x)",
    "select json_agg(x ORDER BY x::text) from (values ('{\"a\" : 1}'::json), (null)) t(x)",
    "select json_agg('x')",
    "select json_object_agg(k, v) from (values ('a',1),('b',null)) t(k,v)",
    "select json_object_agg(k, v) from (values (1.5,array[1]),(2,null)) t(k,v)",
    "select json_object_agg(x, 1) from (values (array[1])) t(x)",
    "select json_object_agg(x, 1) from (values (array[1])) t(x) where false",
    "select json_object_agg(x, 1) from (values ('{\"a\":1}'::json)) t(x)",
    "select json_object_agg('a', null)",
    "SELECT json_build_array('a',1,'b',1.2,'c',true,'d',null,'e',json '{\"x\": 3, \"y\": [1,2,3]}')",
    "SELECT json_build_object('a',1,'b',1.2,'c',true,'d',null,'e',json '{\"x\": 3, \"y\": [1,2,3]}')",
    "select json_build_array(), json_build_object(), json_build_array(null), json_build_object('a', null), json_build_object('a', null::record)",
    "select json_build_object(1, 2, 1.5, 'x', true, date '2020-01-01', timestamp '2020-01-01 00:00', 'x'::text)",
    "select json_build_object('a', array[1,2], 'b', row(1, 'x'), 'c', array['a b', null], 'd', 'NaN'::float8)",
    "select json_build_object(x, 1) from (values (null::text)) t(x)",
    "select json_build_object(x, 1) from (values (array[1])) t(x)",
    "select json_build_object(x, 1) from (values (array[1])) t(x) where false",
    "select json_build_object(r, 1) from (select 1 a) r",
    "select json_build_object('{\"a\":1}'::json, 1)",
    "select json_build_object(null, 1)",
    "select json_build_object('a')",
    "SELECT json_build_array(VARIADIC NULL::text[]), json_build_array(VARIADIC '{}'::text[]),"
    " json_build_array(VARIADIC '{a,b,c}'::text[]), json_build_array(VARIADIC ARRAY['a', NULL]::text[]),"
    " json_build_array(VARIADIC '{1,2,3,4}'::int[])",
    "SELECT json_build_object(VARIADIC NULL::text[]), json_build_object(VARIADIC '{}'::text[]),"
    " json_build_object(VARIADIC ARRAY['a', NULL]::text[]), json_build_object(VARIADIC '{1,2,3,4}'::text[]),"
    " json_build_object(VARIADIC '{1,2,3,4}'::int[])",
    "SELECT json_build_object(VARIADIC '{a,b,c}'::text[])",
    "SELECT json_build_object(VARIADIC '{NULL,a}'::text[])",
]

#: json_object(text[]) and json_object(text[], text[])
JSON_OBJECT = [
    "SELECT json_object('{}'), json_object('{}', '{}')",
    "SELECT json_object('{a,1,b,2,3,NULL,\"d e f\",\"a b c\"}')",
    "SELECT json_object('{{a,1},{b,2},{3,NULL},{\"d e f\",\"a b c\"}}')",
    "SELECT json_object('{a,b,c}')",
    "SELECT json_object('{{a},{b}}')",
    "SELECT json_object('{{a,b,c},{b,c,d}}')",
    "SELECT json_object('{{{a,b},{c,d}},{{b,c},{d,e}}}')",
    "select json_object('{a,b,c,\"d e f\"}','{1,2,3,\"a b c\"}')",
    "SELECT json_object('{{a,1},{b,2},{3,NULL},{\"d e f\",\"a b c\"}}', '{{a,1},{b,2},{3,NULL},{\"d e f\",\"a b c\"}}')",
    "select json_object('{a,b,c,\"d e f\",g}','{1,2,3,\"a b c\"}')",
    "select json_object('{a,b,c,\"d e f\"}','{1,2,3,\"a b c\",g}')",
    "select json_object('{a,b,NULL,\"d e f\"}','{1,2,3,\"a b c\"}')",
    "select json_object('{a,b,\"\",\"d e f\"}','{1,2,3,\"a b c\"}')",
    "select json_object('{a,b}', '{}')",
    "select json_object(array['a','b'], array['1',null]), json_object(array['a'], null), json_object('{a,b}'::text[])",
    "SELECT json_object(array_agg(name ORDER BY name), array_agg(type ORDER BY name)) FROM foo WHERE name IS NOT NULL",
    "SELECT json_object(array_agg(name ORDER BY name)) FROM foo WHERE name IS NOT NULL",
    "select count(*) from (select json_object_keys(json_object(array_agg(g)))"
    " from (select unnest(array['f'||n,n::text]) as g from generate_series(1,300) as n) x) y",
]

#: json has no equality or ordering operator, and casts only to text and jsonb
NO_EQUALITY = [
    "select '{\"a\":1}'::json = '{\"a\":1}'::json",
    "select x <> x, x < x from (values ('1'::json)) t(x)",
    "select x = '1' from (values ('1'::json)) t(x)",
    "select x is distinct from '1' from (values ('1'::json)) t(x)",
    "select x in ('1'::json, '2'::json) from (values ('1'::json)) t(x)",
    "select x between x and x from (values ('1'::json)) t(x)",
    "select nullif(x, x) from (values ('1'::json)) t(x)",
    "select x = any(array['1'::json]) from (values ('1'::json)) t(x)",
    "select x in (select '1'::json) from (values ('1'::json)) t(x)",
    "select case x when '1'::json then 1 end from (values ('1'::json)) t(x)",
    "select greatest(x, x) from (values ('1'::json)) t(x)",
    "select x from (values ('1'::json)) t(x) group by x",
    "select distinct x from (values ('1'::json)) t(x)",
    "select distinct on (x) x from (values ('1'::json)) t(x)",
    "select x from (values ('1'::json)) t(x) union select '2'::json",
    "select x from (values ('1'::json)) t(x) union all select '2'::json",
    "select x from (values ('1'::json)) t(x) order by 1",
    "select x from (values ('1'::json)) t(x) order by x",
    "select * from (values ('1'::json)) t(x) join (values ('1'::json)) u(x) using (x)",
    "select row_number() over (partition by x) from (values ('1'::json)) t(x)",
    "select count(distinct x) from (values ('1'::json)) t(x)",
    "select max(x) from (values ('1'::json)) t(x)",
    "select array_agg(x order by x) from (values ('1'::json)) t(x)",
    "select ('1'::json)::int",
    "select ('true'::json)::bool",
    "select ('[1]'::json)::int[]",
    "select cast('1'::json as date)",
    "select ('\"x\"'::json)::varchar(2), ('\"x\"'::json)::char(6), ('\"x\"'::json)::text, ('{\"a\":1}'::json)::jsonb",
]

#: what the proxy refuses (0A000) rather than answer differently; PostgreSQL answers
REFUSED = [
    "select row_to_json(f) from foo f join foo g using (serial_num)",
    "select json_agg(distinct x) from (values (2),(1),(2)) t(x)",
    "select json_agg(x) over () from (values (2),(1)) t(x)",
    "select * from json_each('{\"a\":1}') with ordinality",
    "select array_to_json(array[array[1,2],array[3,4]], true)",
    "select to_json(array['pg_class'::regclass])",
    "select '$.a'::jsonpath",  # (no jsonpath input or output: it was the text as typed)
]


def test_json_operators_return_the_text_as_given(clients: tuple[Client, Client]) -> None:
    _same(clients, TABLE + OPERATORS)


def test_json_functions_as_postgresql(clients: tuple[Client, Client]) -> None:
    _same(clients, FUNCTIONS)


def test_values_become_json_as_datum_to_json_writes_them(clients: tuple[Client, Client]) -> None:
    _same(clients, TO_JSON)


def test_json_aggregates_and_builders(clients: tuple[Client, Client]) -> None:
    _same(clients, AGGREGATES)


def test_json_object_of_text_arrays(clients: tuple[Client, Client]) -> None:
    _same(clients, JSON_OBJECT)


def test_json_has_no_equality_and_few_casts(clients: tuple[Client, Client]) -> None:
    _same(clients, NO_EQUALITY)


def test_what_the_proxy_refuses(clients: tuple[Client, Client]) -> None:
    ref, got = clients
    for sql in REFUSED:
        assert got(sql)[:2] == ("error", "0A000"), sql
        assert ref(sql)[0] != "error", sql


#: json_to_record(set), their jsonb twins and json_populate_record(set) over null::record
#: with a column definition list: each column through its type's input function.
RECORDS = [
    "create table jr (k int, j json, b jsonb)",
    """insert into jr values (1, '{"a": 5, "t": "x"}', '{"a": 1.50, "t": [1, 2]}'), (2, '{"a": 6}', null)""",
    "select jr.k, r.* from jr, json_to_record(jr.j) as r(a int, t text) order by jr.k",
    "select jr.k, r.* from jr, jsonb_to_record(jr.b) as r(a numeric, t int[]) order by jr.k",
    'select * from json_to_record(\'{"a":1,"a":2}\') as x(a int)',
    'select * from jsonb_to_record(\'{"a":1,"a":2}\') as x(a int)',
    'select * from json_to_record(\'{"a":"  12 "}\') as x(a int)',
    'select * from json_to_record(\'{"a":1.5}\') as x(a int)',
    'select * from json_to_record(\'{"a":{"b":1}}\') as x(a text)',
    'select * from json_to_record(\'{"a":[1,2]}\') as x(a text)',
    'select * from json_to_record(\'{"a":true}\') as x(a text)',
    'select * from json_to_record(\'{"a":true}\') as x(a bool)',
    'select * from json_to_record(\'{"a":"x\\"y\\u00e9"}\') as x(a text)',
    'select * from json_to_record(\'{"a":null}\') as x(a text)',
    'select * from json_to_record(\'{"a":1e3}\') as x(a numeric)',
    'select * from json_to_record(\'{"a":1e3}\') as x(a float8)',
    'select * from json_to_record(\'{"a": 1 }\') as x(a json)',
    'select * from json_to_record(\'{"a": "s" }\') as x(a json)',
    'select * from json_to_record(\'{"a": {"k" : 1 } }\') as x(a json)',
    'select * from json_to_record(\'{"a": {"k" : 1 } }\') as x(a jsonb)',
    "select * from json_to_record('[1]') as x(a int)",
    "select * from json_to_record('1') as x(a int)",
    "select * from json_to_record('null') as x(a int)",
    'select * from json_to_recordset(\'{"a":1}\') as x(a int)',
    "select * from json_to_recordset('[1]') as x(a int)",
    "select * from json_to_recordset('[]') as x(a int)",
    "select * from json_to_recordset('[null]') as x(a int)",
    'select * from json_to_recordset(\'[{"a":1},{"b":2}]\') as x(a int, b int)',
    'select * from json_to_record(\'{"a":[1,"2",null]}\') as x(a int[])',
    'select * from json_to_record(\'{"a":"{1,2}"}\') as x(a int[])',
    'select * from json_to_record(\'{"a":5}\') as x(a int[])',
    'select * from json_to_record(\'{"a":{"b":1}}\') as x(a int[])',
    'select * from json_to_record(\'{"a":[]}\') as x(a int[])',
    'select * from json_to_record(\'{"a":["x y","\\"q"]}\') as x(a text[])',
    'select * from json_to_record(\'{"a":[{"b":1}]}\') as x(a text[])',
    'select * from json_to_record(\'{"a":"2020-01-01"}\') as x(a date)',
    'select * from json_to_record(\'{"A":1}\') as x(a int)',
    'select * from json_to_record(\'{"A":1}\') as x("A" int)',
    'select * from json_to_record(null) as x(a int)',
    'select * from json_to_recordset(null) as x(a int)',
    'select * from json_to_record(\'{"a":1}\') as x(a int, a text)',
    'select * from json_to_record(\'{"a":1}\')',
    'select * from json_to_record(\'{"a":1}\') as x',
    'select * from json_to_record(\'{"a":1}\') as (a int)',
    'select * from json_to_record(\'{"a":"abc"}\') as x(a varchar(2))',
    'select * from json_to_record(\'{"a":"abc"}\') as x(a char(5))',
    'select * from json_to_record(\'{"a":12.345}\') as x(a numeric(5,1))',
    'select * from json_populate_record(null::record, \'{"x": 776}\') AS (x int, y int)',
    'select * from jsonb_populate_recordset(null::record, \'[{"x": 776}]\') AS (x int, y int)',
    'select *, x.a from json_to_recordset(\'[{"a":1},{"a":2}]\') with ordinality as x(a int, n bigint)',
    'select t.k, r.* from (values (1, \'{"a":5}\'::json), (2, \'{"a":6}\')) t(k, j), json_to_record(t.j) as r(a int)',
    'select * from jsonb_to_record(\'{"a":"{1,2}"}\') as x(a int[])',
    'select * from jsonb_to_record(\'{"a":[1,"2",null]}\') as x(a int[])',
    'select * from json_to_record(\'{"a":[[1], 2]}\') as x(a int[])',
    'select * from json_to_record(\'{"a":[[1], [2, 3]]}\') as x(a int[])',
    'select * from jsonb_to_record(\'{"a":[[1], [2, 3]]}\') as x(a int[])',
    'select * from jsonb_to_record(\'{"a":[[1], 2]}\') as x(a int[])',
    'select * from json_to_record(\'{"a":[1.5]}\') as x(a int[])',
    'select * from json_to_record(\'{"a":[true, {"x":1}]}\') as x(a text[])',
    'select * from json_to_record(\'{"a":[[]]}\') as x(a int[])',
    'select * from json_to_record(\'{"a":[[], []]}\') as x(a int[])',
    'select * from json_to_record(\'{"a":[null, [1]]}\') as x(a int[])',
    'select * from json_to_record(\'{"a":[1, null]}\') as x(a int[])',
    'select * from json_to_record(\'{"a":"x"}\') as x(a int[])',
    'select * from jsonb_to_record(\'{"a":5}\') as x(a int[])',
    'select * from json_to_record(\'{"a":"\\u0000"}\') as x(a text)',
    'select * from jsonb_to_record(\'{"a":1e3}\') as x(a text)',
    'select * from json_to_record(\'{"a":1e3}\') as x(a text)',
    'select * from json_to_record(\'{"a": {"k" : 1 } }\') as x(a text)',
    'select * from jsonb_to_record(\'{"a": {"k" : 1 } }\') as x(a text)',
    'select * from json_to_record(\'{"a": "s" }\') as x(a jsonb)',
    'select * from jsonb_to_record(\'{"a": "s" }\') as x(a json)',
    'select * from json_to_record(\'{"a": "a\\"b" }\') as x(a json)',
    'select * from json_to_record(\'{"a": 1, "b": "2020-01-01 10:00"}\') as x(a int, b timestamptz)',
    'select * from json_to_record(\'{"a": 1, "b": "P1D"}\') as x(a int, b interval)',
    'select * from json_to_record(\'{"a": 1, "b": "ab"}\') as x(a int, b bytea)',
    "select * from json_to_record('not json') as x(a int)",
    'select * from json_to_record(\'{"a":1}\'::jsonb) as x(a int)',
    'select * from jsonb_to_record(\'{"a":1}\'::json) as x(a int)',
    'select * from json_to_record(\'{"a":1}\'::text) as x(a int)',
    'select x.* from json_to_recordset(\'[{"a":1},{"a":2}]\') as x(a int) where x.a > 1',
    'select count(*) from json_to_recordset(\'[{"a":1},{"a":2},{}]\') as x(a int)',
    'select * from json_to_recordset(\'[{"a":1},{"a":2},{}]\') as x(a int) order by a desc nulls last',
]


def test_json_to_record_with_a_column_definition_list(clients: tuple[Client, Client]) -> None:
    _same(clients, RECORDS)
    _, got = clients
    # a multidimensional array column: the lake holds none
    assert got("""select * from json_to_record('{"a":[[1,2],[3,4]]}') as x(a int[])""")[:2] == ("error", "0A000")


# ------------------------------------------------------------ random documents (hypothesis)

_WS = st.sampled_from(["", "", "", " ", "  ", "\n", "\t", " \r\n "])
#: string contents as JSON source text: escapes, one that is a key letter in disguise
_CHUNKS = st.sampled_from(["a", "b", "é", " ", "\\\"", "\\\\", "\\n", "\\u0061", "\\u00e9", "\\/", "x", "\\ud83d\\ude00"])
_KEYS = st.sampled_from(["a", "b", "", "a b", "\\u0061", "é", "1"])
_NUMBERS = st.sampled_from(["0", "1", "-2", "3.25", "1e2", "-0", "12345678901234567890"])


def _tree() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.tuples(st.just("s"), st.lists(_CHUNKS, max_size=4).map("".join)),
        st.tuples(st.just("n"), _NUMBERS),
        st.tuples(st.just("w"), st.sampled_from(["true", "false", "null"])),
    )
    return st.recursive(
        scalars,
        lambda kids: st.one_of(
            st.tuples(st.just("["), st.lists(kids, max_size=4)),
            st.tuples(st.just("{"), st.lists(st.tuples(_KEYS, kids), max_size=4)),
        ),
        max_leaves=12,
    )


def _render(node: Any, ws: Iterator[str]) -> str:
    """JSON source text of a generated tree, with white space drawn around each token."""
    kind, body = node
    if kind == "s":
        return f'"{body}"'
    if kind in ("n", "w"):
        return str(body)
    if kind == "[":
        inner = ",".join(next(ws) + _render(k, ws) + next(ws) for k in body)
        return "[" + (inner or next(ws)) + "]"
    inner = ",".join(f'{next(ws)}"{k}"{next(ws)}:{next(ws)}{_render(v, ws)}{next(ws)}' for k, v in body)
    return "{" + (inner or next(ws)) + "}"


def _path_into(node: Any, data: st.DataObject) -> list[str]:
    """A path that mostly follows the document (keys it has, indexes in and out of range,
    negative ones, spaced ones) and sometimes leaves it."""
    path: list[str] = []
    while data.draw(st.integers(0, 3)) and len(path) < 4:
        kind, body = node
        if kind == "{" and body:
            key, node = data.draw(st.sampled_from(body))
            path.append(key.replace("\\u0061", "a"))
        elif kind == "[" and body:
            i = data.draw(st.integers(-len(body) - 1, len(body)))
            path.append(data.draw(st.sampled_from([str(i), f" {i}", f"{i} "])))
            node = body[i] if -len(body) <= i < len(body) else ("w", "null")
        else:
            path.append(data.draw(st.sampled_from(["a", "0", "-1", ""])))
            break
    return path


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(_tree(), st.lists(_WS, min_size=1, max_size=7), st.data())
def test_random_documents_extract_as_postgresql(
    clients: tuple[Client, Client], tree: Any, spaces: list[str], data: st.DataObject
) -> None:
    doc = _lit(_render(tree, itertools.cycle(spaces)))
    key = _lit(data.draw(_KEYS).replace("\\u0061", "a"))
    index = data.draw(st.integers(-4, 4))
    path = "ARRAY[" + ", ".join(_lit(p) for p in _path_into(tree, data)) + "]::text[]"
    sql = (
        f"SELECT d -> {key}, d ->> {key}, d -> {index}, d ->> {index}, d #> {path}, d #>> {path}, json_typeof(d)"
        f" FROM (SELECT {doc}::json AS d) s"
    )
    ref, got = clients
    assert repr(got(sql)) == repr(ref(sql)), sql
    for fn in ("json_strip_nulls(d)", "json_array_length(d)", "json_object_keys(d)", "json_each(d)", "json_each_text(d)",
               "json_array_elements(d)", "json_array_elements_text(d)", "to_json(d)", "json_build_array(d, d #> {path})"):
        sql = f"SELECT {fn} FROM (SELECT {doc}::json AS d) s"
        assert repr(got(sql)) == repr(ref(sql)), sql


#: parameters a driver leaves untyped take PostgreSQL's types: a key text, a path text[],
#: a json function's argument json
PARAMETERS: list[tuple[str, tuple[Any, ...]]] = [
    ("SELECT %s::json -> %s, %s::json ->> %s", ('{"a": [1, 2]}', "a", '{"a": "x"}', "a")),
    ("SELECT %s::jsonb -> %s, %s::json -> %s", ('{"a": [1, 2.50]}', "a", "[1, 2]", 1)),
    ("SELECT %s::json #>> %s, %s::jsonb #> %s", ('{"a": [1, 2]}', ["a", "1"], '{"a": [1]}', ["a"])),
    ("SELECT json_array_length(%s), json_typeof(%s)", ("[1,2]", '"x"')),
    ("SELECT * FROM json_each_text(%s::json) ORDER BY 1", ('{"b": "x", "a": null}',)),
]


def test_parameters_take_postgresqls_types(proxy: ProxyServer, pg15: PgCluster) -> None:
    import psycopg

    def run(dsn: str) -> list[Any]:
        with psycopg.connect(dsn, autocommit=True) as conn:
            for oid in _AS_TEXT:
                conn.adapters.register_loader(oid, TextLoader)
            return [conn.execute(sql, args).fetchall() for sql, args in PARAMETERS]

    assert run(proxy.dsn()) == run(pg15.dsn())
