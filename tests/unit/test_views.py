"""View logic without a server: the catalog's views and their JSON round trip, CREATE OR
REPLACE's rules (only appending columns), DROP with dependents (2BP01 and CASCADE's order),
the binder that qualifies what a view reads at creation, and PostgreSQL's rules for an
automatically updatable view as information_schema reports them."""

from __future__ import annotations

import itertools

import pytest
from pglast import parse_sql

from decoding.catalog import Catalog, View, ViewColumn
from decoding.errors import PgError
from walsender_proxy.lake import ddl, view_ddl
from walsender_proxy.sql import views

INT4, TEXT = 23, 25


def _apply(cat: Catalog, ops: list[dict[str, object]]) -> Catalog:
    for op in ops:
        cat = cat.apply(op)
    return cat


def _base() -> tuple[Catalog, itertools.count[int]]:
    oids = itertools.count(20000)
    cat = Catalog()
    ops, _ = ddl.create_table(cat, lambda: next(oids), "t", [("a", "int4"), ("b", "text")], (), "d", False, ["public"])
    return _apply(cat, ops), oids


def _view(cat: Catalog, oids: itertools.count[int], name: str, cols: list[tuple[str, int]], depends: list[int], replace: bool = False) -> Catalog:
    ops, _ = view_ddl.create_view(
        cat, lambda: next(oids), f"public.{name}", "SELECT 1", " SELECT 1;", [ViewColumn(n, o) for n, o in cols], depends,
        replace, ["public"], lambda oid, mod: {INT4: "integer", TEXT: "text"}[oid],
    )  # fmt: skip
    return _apply(cat, ops)


def test_a_view_round_trips_through_json() -> None:
    cat, oids = _base()
    t = cat.find_table("public", "t")
    assert t is not None
    cat = _view(cat, oids, "v", [("a", INT4)], [t.oid])
    again = Catalog.from_json(cat.to_json())
    assert again.views == cat.views
    assert again.relation_exists("public", "v")
    v = again.find_view("public", "v")
    assert isinstance(v, View) and v.depends == (t.oid,)


@pytest.mark.parametrize(
    ("cols", "sqlstate", "message"),
    [
        ([("a", INT4)], "42P16", "cannot drop columns from view"),
        ([("b", TEXT), ("a", INT4)], "42P16", 'cannot change name of view column "a" to "b"'),
        ([("a", TEXT), ("b", TEXT)], "42P16", 'cannot change data type of view column "a" from integer to text'),
    ],
)
def test_or_replace_only_appends_columns(cols: list[tuple[str, int]], sqlstate: str, message: str) -> None:
    cat, oids = _base()
    cat = _view(cat, oids, "v", [("a", INT4), ("b", TEXT)], [])
    with pytest.raises(PgError) as e:
        _view(cat, oids, "v", cols, [], replace=True)
    assert (e.value.sqlstate, e.value.message) == (sqlstate, message)
    cat2 = _view(cat, oids, "v", [("a", INT4), ("b", TEXT), ("c", INT4)], [], replace=True)
    assert cat2.find_view("public", "v").oid == cat.find_view("public", "v").oid  # type: ignore[union-attr]


def test_names_are_shared_with_tables() -> None:
    cat, oids = _base()
    with pytest.raises(PgError) as e:
        _view(cat, oids, "t", [("a", INT4)], [])
    assert (e.value.sqlstate, e.value.message) == ("42P07", 'relation "t" already exists')
    with pytest.raises(PgError) as e:
        _view(cat, oids, "t", [("a", INT4)], [], replace=True)
    assert (e.value.sqlstate, e.value.message) == ("42809", '"t" is not a view')
    with pytest.raises(PgError) as e:
        view_ddl.drop_view(cat, lambda: 0, "t", False, False, ["public"])
    assert e.value.hint == "Use DROP TABLE to remove a table."


def test_drop_checks_and_cascades_through_dependent_views() -> None:
    cat, oids = _base()
    t = cat.find_table("public", "t")
    assert t is not None
    cat = _view(cat, oids, "v1", [("a", INT4)], [t.oid])
    v1 = cat.find_view("public", "v1")
    assert v1 is not None
    cat = _view(cat, oids, "v2", [("a", INT4)], [v1.oid])
    with pytest.raises(PgError) as e:
        ddl.drop_table(cat, lambda: 0, "t", False, ["public"])
    assert e.value.sqlstate == "2BP01"
    assert e.value.message == "cannot drop table t because other objects depend on it"
    assert e.value.detail == "view v1 depends on table t\nview v2 depends on view v1"
    ops, dropped = ddl.drop_table(cat, lambda: 0, "t", False, ["public"], cascade=True)
    assert dropped == ["view v1", "view v2"]
    after = _apply(cat, ops)
    assert not after.views and not after.tables
    with pytest.raises(PgError) as e:
        ddl.drop_table(cat, lambda: 0, "v1", False, ["public"])
    assert (e.value.sqlstate, e.value.hint) == ("42809", "Use DROP VIEW to remove a view.")


def test_a_table_a_view_reads_keeps_its_shape() -> None:
    cat, oids = _base()
    t = cat.find_table("public", "t")
    assert t is not None
    cat = _view(cat, oids, "v", [("a", INT4)], [t.oid])
    with pytest.raises(PgError) as e:
        ddl.rename_column(cat, lambda: 0, "t", "a", "z", ["public"])
    assert e.value.sqlstate == "0A000"
    with pytest.raises(PgError):
        ddl.drop_column(cat, lambda: 0, "t", "b", False, ["public"])


def test_binding_qualifies_relations_but_not_ctes() -> None:
    cat, _ = _base()
    q = parse_sql("WITH c AS (SELECT a FROM t) SELECT * FROM c, t AS x, pg_class WHERE EXISTS (SELECT 1 FROM t)")[0].stmt
    t = cat.find_table("public", "t")
    assert t is not None
    assert views.bind(cat, q, ["public"], None) == ([t.oid], True)
    from pglast.stream import RawStream

    text = RawStream()(q)
    assert "public.t AS x" in text and "FROM c," in text and "pg_catalog.pg_class" in text


@pytest.mark.parametrize(
    ("sql", "expands"),
    [
        ("SELECT a FROM t", False),
        ("SELECT count(*) FROM t", False),
        ("SELECT t.* FROM t", True),
        ("SELECT row_to_json(x) FROM t AS x", True),
        ("SELECT a FROM t NATURAL JOIN t AS u", True),
        ("SELECT a FROM (SELECT * FROM t) s", True),
    ],
)
def test_binding_tells_whether_an_added_column_would_change_the_view(sql: str, expands: bool) -> None:
    cat, _ = _base()
    assert views.bind(cat, parse_sql(sql)[0].stmt, ["public"], None)[1] is expands


def test_automatically_updatable_as_postgresql_says() -> None:
    cat, _ = _base()
    t = cat.find_table("public", "t")
    assert t is not None

    def check(sql: str, cols: list[str]) -> views.Updatability:
        v = View(99999, "public", "v", sql, "", tuple(ViewColumn(c, INT4) for c in cols), (t.oid,))
        return views.view_updatability(cat, v)

    assert check("SELECT a, b FROM public.t WHERE a > 1", ["a", "b"]) == views.Updatability(True, True, frozenset({"a", "b"}))
    assert check("SELECT a, a + 1 AS c FROM public.t", ["a", "c"]).columns == frozenset({"a"})
    assert not check("SELECT count(*) FROM public.t", ["count"]).updatable
    assert not check("SELECT DISTINCT a FROM public.t", ["a"]).updatable
    assert not check("SELECT a FROM public.t LIMIT 1", ["a"]).updatable
    assert not check("SELECT a + 1 AS c FROM public.t", ["c"]).insertable


