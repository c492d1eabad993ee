"""Unspecified parameters typed by their context (``sql/param_context.py``), as PostgreSQL
15's parse analysis types them, and jsonb containment (``sql/jsonb_ops.py``) by
PostgreSQL's rules. The expectations are PostgreSQL 15's (ParameterDescription of the
same statements, ``@>`` of the same values), except where a comment says otherwise."""

from __future__ import annotations

import pglast
import pytest

from decoding.catalog import Column, Table
from decoding.errors import PgError
from decoding.pgtypes import type_by_oid
from walsender_proxy.sql.jsonb_ops import _load, contains
from walsender_proxy.sql.param_context import context_param_types

T = Table(
    16384,
    "public",
    "t",
    (
        Column(1, "id", type_by_oid(23)),
        Column(2, "doc", type_by_oid(3802)),
        Column(3, "ts", type_by_oid(1114)),
        Column(4, "data", type_by_oid(17)),
        Column(5, "tags", type_by_oid(1009)),
        Column(6, "name", type_by_oid(25)),
    ),
)


def types(sql: str, declared: tuple[int, ...] = ()) -> list[int]:
    node = pglast.parse_sql(sql)[0].stmt
    n = sql.count("$")
    return context_param_types(node, list(declared), n, lambda s, name: T if name == "t" and s in (None, "public") else None)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("INSERT INTO t (id, doc, ts, data) VALUES ($1, $2, $3, $4)", [23, 3802, 1114, 17]),
        ("INSERT INTO t VALUES ($1, $2)", [23, 3802]),
        ("UPDATE t SET doc = $1, tags = $2 WHERE id = $3", [3802, 1009, 23]),
        ("SELECT * FROM t WHERE ts > $1 AND $2 >= id", [1114, 23]),
        ("SELECT * FROM t WHERE id = ANY($1)", [1007]),
        ("SELECT * FROM t x WHERE x.doc @> $1", [3802]),
        ("SELECT * FROM t WHERE id IN ($1, $2)", [23, 23]),
        ("DELETE FROM public.t WHERE data = $1", [17]),
        ("SELECT * FROM other WHERE id = $1", [0]),  # not a table of the lake: unspecified
        ("SELECT $1 + id FROM t", [0]),  # arithmetic is not inferred (PostgreSQL: int4)
        ("SELECT * FROM t WHERE id = $1", [20]),  # declared at Parse: kept
        # a CTE's column of the same name: not inferred (PostgreSQL: text)
        ("WITH x AS (SELECT id::text AS id FROM t) SELECT * FROM x WHERE id = $1", [0]),
        ("WITH t AS (SELECT 'a' AS id) SELECT * FROM t WHERE t.id = $1", [0]),
        ("SELECT * FROM t JOIN (SELECT 1 AS k) s ON true WHERE t.ts < $1", [1114]),
    ],
)
def test_context_types(sql: str, expected: list[int]) -> None:
    declared = (20,) if expected == [20] else ()
    assert types(sql, declared) == expected


@pytest.mark.parametrize(
    ("val", "tmpl", "expected"),
    [
        ('{"a": [1, "x"], "b": {"z": null}, "n": 2}', '{"a": [1]}', True),
        ('["foo", "bar"]', '"foo"', True),  # a top-level array contains a scalar
        ('"foo"', '["foo"]', False),  # a scalar contains no array
        ('{"a": [1, 2]}', '{"a": 1}', False),  # (DuckDB's json_contains says true)
        ("[[1, 2]]", "[1]", False),
        ("[1, [2, 3]]", "[[3]]", True),
        ('{"a": {"b": 1, "c": 2}}', '{"a": {"b": 1}}', True),
        ('{"a": 1}', '{"a": 1, "b": 2}', False),
        ("[1.0]", "[1]", True),  # numbers compare as numerics
        ("[true]", "[1]", False),
        ("{}", "{}", True),
    ],
)
def test_jsonb_contains(val: str, tmpl: str, expected: bool) -> None:
    assert contains(_load(val), _load(tmpl)) is expected


def test_jsonb_bad_text_is_22p02() -> None:
    with pytest.raises(PgError) as e:
        _load("[object Object]")
    assert e.value.sqlstate == "22P02"
