"""The pure parts of SQL functions: the catalog's Function and its JSON, the lake's
CREATE/REPLACE/DROP checks (PostgreSQL's ProcedureCreate and dependency texts), the texts
pg_proc's readers print, implicit and assignment coercibility, which bodies are inlined or
refused, and where a body's error lands in the CREATE statement."""

from __future__ import annotations

from dataclasses import replace

import pglast
import pytest
from hypothesis import given
from hypothesis import strategies as st

from decoding.catalog import Catalog, CatalogHistory, Function, FunctionArg
from walsender_proxy.lake import function_ddl
from walsender_proxy.lake.errors import LakeError
from walsender_proxy.sql import sql_function_calls as calls
from walsender_proxy.sql import sql_functions

INT4, INT8, TEXT, NUMERIC, VOID, RECORD = 23, 20, 25, 1700, 2278, 2249


def _fn(name: str = "f", args: tuple[FunctionArg, ...] = (FunctionArg("a", INT4),), rettype: int = INT4, **kw: object) -> Function:
    return Function(0, "public", name, args, rettype, body="SELECT a", **kw)  # type: ignore[arg-type]


def _describe(fn: Function) -> str:
    return f"{fn.name}({','.join(calls.shown(o) for o in fn.input_types)})"


def _alloc() -> object:
    n = iter(range(16384, 20000))
    return lambda: next(n)


def _create(cat: Catalog, fn: Function, or_replace: bool = False, alloc: object = None) -> tuple[Catalog, Function]:
    ops, made = function_ddl.create_function(cat, alloc or _alloc(), fn, or_replace, _describe)  # type: ignore[arg-type]
    for op in ops:
        cat = cat.apply(op)
    return cat, made


def test_a_function_round_trips_through_the_catalog_json() -> None:
    fn = Function(
        16390, "s", "f", (FunctionArg("a", INT4), FunctionArg("", TEXT, "i", "'x'::text"), FunctionArg("o", INT8, "o")),
        RECORD, True, "i", True, "SELECT 1", False, "", True, 5.0, 20.0, "s", (16385,),
    )  # fmt: skip
    assert Function.from_json(fn.to_json()) == fn
    cat = Catalog(schemas={"public": 2200, "s": 16384}).apply({"op": "put_function", "function": fn.to_json()})
    again = Catalog.from_json(cat.to_json())
    assert again.functions[16390] == fn and again.next_oid == 16391
    history = CatalogHistory.from_json(CatalogHistory([(0, cat)]).to_json())
    assert history.latest.functions == cat.functions
    assert fn.input_types == (INT4, TEXT) and [a.name for a in fn.input_args] == ["a", ""]


def test_create_or_replace_follows_procedure_create() -> None:
    cat, made = _create(Catalog(), _fn(args=(FunctionArg("a", INT4), FunctionArg("b", TEXT, "i", "'x'::text"))))
    assert made.oid == 16384
    with pytest.raises(LakeError) as e:
        _create(cat, _fn(args=(FunctionArg("a", INT4), FunctionArg("b", TEXT))))
    assert (e.value.sqlstate, e.value.message) == ("42723", 'function "f" already exists with same argument types')
    cases = [
        (_fn(args=made.args, rettype=INT8), "cannot change return type of existing function"),
        (_fn(args=(FunctionArg("z", INT4), made.args[1])), 'cannot change name of input parameter "a"'),
        (_fn(args=(made.args[0], FunctionArg("b", TEXT))), "cannot remove parameter defaults from existing function"),
    ]
    for new, message in cases:
        with pytest.raises(LakeError) as e:
            _create(cat, new, or_replace=True)
        assert (e.value.sqlstate, e.value.message, e.value.hint) == ("42P13", message, "Use DROP FUNCTION f(integer,text) first.")
    cat, again = _create(cat, replace(made, oid=0, volatility="i", body="SELECT 2"), or_replace=True)
    assert again.oid == made.oid and cat.functions[made.oid].body == "SELECT 2"
    # an unnamed parameter may get a name; another signature is another function
    cat, other = _create(cat, _fn(args=(FunctionArg("", INT8),)), alloc=iter(range(17000, 17010)).__next__)
    assert other.oid == 17000 and len(function_ddl.overloads(cat, "public", "f")) == 2


def test_out_parameters_are_part_of_the_result_type() -> None:
    outs = (FunctionArg("a", INT4), FunctionArg("x", INT4, "o"), FunctionArg("y", TEXT, "o"))
    cat, _ = _create(Catalog(), _fn(args=outs, rettype=RECORD))
    changed = (outs[0], outs[1], FunctionArg("y", INT4, "o"))
    with pytest.raises(LakeError) as e:
        _create(cat, _fn(args=changed, rettype=RECORD), or_replace=True)
    assert e.value.detail == "Row type defined by OUT parameters is different."


def test_drop_refuses_for_a_dependent_body_and_cascades() -> None:
    cat, base = _create(Catalog(), _fn("base", args=()))
    cat, _ = _create(cat, _fn("user", args=(), standard=True, depends=(base.oid,)), alloc=iter(range(17000, 17010)).__next__)
    with pytest.raises(LakeError) as e:
        function_ddl.drop_functions(cat, _alloc(), [base.oid], False, ("public",))  # type: ignore[arg-type]
    assert (e.value.sqlstate, e.value.message, e.value.detail) == (
        "2BP01",
        "cannot drop function base() because other objects depend on it",
        "function user() depends on function base()",
    )
    ops, dropped = function_ddl.drop_functions(cat, _alloc(), [base.oid], True, ("public",))  # type: ignore[arg-type]
    assert dropped == ["function user()"]
    for op in ops:
        cat = cat.apply(op)
    assert not cat.functions


def test_the_texts_psql_and_pg_dump_print() -> None:
    fn = Function(
        16384, "public", "f", (FunctionArg("a", INT4), FunctionArg("Select", TEXT, "i", "'x'::text"), FunctionArg("", INT8, "o")),
        INT8, False, "s", True, "SELECT $function$", False, "", True, 5.0, 0.0, "r",
    )  # fmt: skip
    assert sql_functions.arguments_text(fn) == "a integer, \"Select\" text DEFAULT 'x'::text, OUT bigint"
    assert sql_functions.identity_arguments_text(fn) == 'a integer, "Select" text, OUT bigint'
    assert sql_functions.result_text(fn) == "bigint"
    assert sql_functions.functiondef(fn) == (
        "CREATE OR REPLACE FUNCTION public.f(a integer, \"Select\" text DEFAULT 'x'::text, OUT bigint)\n"
        " RETURNS bigint\n LANGUAGE sql\n STABLE PARALLEL RESTRICTED STRICT LEAKPROOF COST 5\n"
        "AS $functionx$SELECT $function$$functionx$\n"
    )
    table = replace(fn, args=(FunctionArg("n", INT4), FunctionArg("i", INT4, "t")), rettype=RECORD, retset=True, rows=1000.0)
    assert sql_functions.result_text(table) == "TABLE(i integer)"
    assert sql_functions.functiondef(replace(fn, standard=True)) is None
    row = sql_functions.pg_proc_row(fn, 2200, 10)
    assert row["proargtypes"] == [INT4, TEXT] and row["proallargtypes"] == [INT4, TEXT, INT8]
    assert row["proargmodes"] == ["i", "i", "o"] and row["pronargdefaults"] == 1 and row["prolang"] == 14


def test_coercion_contexts() -> None:
    assert calls.coercible("int4", "int8", "i") and calls.coercible("int4", "numeric", "i")
    assert not calls.coercible("numeric", "int4", "i") and calls.coercible("numeric", "int4", "a")
    assert calls.coercible("int4", "text", "a") and not calls.coercible("int4", "text", "i")
    assert not calls.coercible("text", "int4", "a")
    assert calls.coercible("unknown", "date", "i") and calls.coercible("_int4", "_int8", "i")
    assert calls.coercible("__int4", "_int4", "i")
    assert calls.coercible("oid", "int8", "i") is None  # (outside what the proxy knows of pg_cast)


def _select(sql: str) -> object:
    return pglast.parse_sql(sql)[0].stmt


@pytest.mark.parametrize(
    ("body", "one"),
    [
        ("SELECT 1", True),
        ("SELECT a FROM t WHERE b = 1", False),
        ("SELECT a FROM t ORDER BY a", True),
        ("SELECT count(*) FROM t", True),
        ("SELECT count(*) FROM t GROUP BY a", False),
        ("SELECT generate_series(1, 3)", False),
        ("SELECT 1 UNION ALL SELECT 2", False),
        ("VALUES (1), (2)", False),
    ],
)
def test_which_last_statements_have_one_first_row(body: str, one: bool) -> None:
    assert calls.at_most_one_row(_select(body)) is one  # type: ignore[arg-type]


def test_which_bodies_are_one_expression() -> None:
    fn = _fn(args=(FunctionArg("a", INT4), FunctionArg("", INT4)))
    assert calls._simple_body(fn, [_select("SELECT a + $2 + f.a")]) is not None  # type: ignore[list-item]
    assert calls._uses(fn, _select("SELECT a + $2 + f.a").targetList[0].val) == [2, 1]  # type: ignore[attr-defined]
    assert calls._uses(fn, _select("SELECT a + b").targetList[0].val) is None  # type: ignore[attr-defined]
    for body in ("SELECT a FROM t", "SELECT (SELECT a)", "SELECT sum(a)", "SELECT 1; SELECT 2"):
        assert calls._simple_body(fn, [s.stmt for s in pglast.parse_sql(body)]) is None, body
    assert calls._simple_body(replace(fn, retset=True), [_select("SELECT a")]) is None  # type: ignore[list-item]


def _arg(sql: str) -> object:
    return _select(f"SELECT {sql}").targetList[0].val  # type: ignore[attr-defined]


def test_which_arguments_may_be_put_in_several_places() -> None:
    assert calls._constant_arg(_arg("-1::int + $1")) and not calls._constant_arg(_arg("x"))
    assert calls._duplicable(_arg("x + 1")) and calls._duplicable(_arg("a[1]"))
    assert not calls._duplicable(_arg("random()")) and not calls._duplicable(_arg("(SELECT 1)"))


@given(st.text(alphabet="ab' $\n", max_size=30), st.sampled_from(["'", "$$", "$q$"]))
def test_a_body_position_maps_into_the_statement(body: str, quote: str) -> None:
    if quote == "'":
        literal = "'" + body.replace("'", "''") + "'"
    elif quote in body:
        return
    else:
        literal = quote + body + quote
    text = f"CREATE FUNCTION f() RETURNS int LANGUAGE sql AS {literal}"
    where = sql_functions._body_map(text, text.index(literal))
    assert where is not None
    for i, ch in enumerate(body):
        at = where(i)
        assert at is not None and text[at] == ch
