"""User functions in LANGUAGE sql: CREATE [OR REPLACE] FUNCTION and DROP FUNCTION as
PostgreSQL 15 does them (``CreateFunction``, ``ProcedureCreate``, ``fmgr_sql_validator``,
``RemoveObjects``), and the texts the catalog shows of them (``pg_get_functiondef``,
``pg_get_function_arguments`` / ``_identity_arguments`` / ``_result``).

A function is kept in the lake's catalog (:class:`decoding.catalog.Function`) as text: an
``AS '…'`` body as written, analysed at each call with the search path of the call, as
PostgreSQL analyses it; an SQL-standard body (``RETURN …``, ``BEGIN ATOMIC … END``) with the
functions it calls qualified as they resolved at creation, as PostgreSQL binds it. Calls
are inlined by the rewriter (:mod:`walsender_proxy.sql.sql_function_calls`); CREATE FUNCTION
checks a body by rewriting and describing a call of the new function with NULL arguments,
so a body is checked by the same analysis that runs it.

Refused (0A000): other languages, procedures, SECURITY DEFINER, SET, SUPPORT, TRANSFORM,
WINDOW, VARIADIC, polymorphic and row types, ``RETURNS record`` without OUT parameters,
names of built-in functions, temporary functions, and SQL-standard bodies reading tables
or views (PostgreSQL records what they read, and DROP TABLE would have to refuse).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import pglast
from pglast import ast, enums
from pglast.stream import RawStream

from decoding.catalog import Catalog, Function, FunctionArg, is_temp_schema
from decoding.errors import PgError
from decoding.pgtypes import UnknownTypeError, parse_type
from walsender_proxy.backend.outcomes import Notice
from walsender_proxy.lake import function_ddl, view_ddl
from walsender_proxy.sql import default_exprs, pgcatalog_defs, sql_function_calls
from walsender_proxy.sql.ddl_names import cascaded, relation_oid
from walsender_proxy.sql.nodes import clear_locations
from walsender_proxy.sql.pg_functions import PG15_FUNCTIONS
from walsender_proxy.sql.sql_errors import SqlError

if TYPE_CHECKING:
    from walsender_proxy.lake import Transaction


class _Session(Protocol):
    user: str
    services: Any
    settings: Any

    def search_path(self) -> list[str]: ...


class Engine(Protocol):
    """What CREATE/ALTER FUNCTION need of the engine (a narrow view, as views.Describer):
    the session, and the result columns of a query given as text."""

    ex: _Session

    def describe_text(self, tx: Transaction, sql: str) -> tuple[list[Any], tuple[int, ...]]: ...

SQL_LANGUAGE_OID = 14
VOID_OID = 2278
RECORD_OID = 2249
_POLYMORPHIC = frozenset({
    "anyelement", "anyarray", "anynonarray", "anyenum", "anyrange", "anymultirange", "anycompatible",
    "anycompatiblearray", "anycompatiblenonarray", "anycompatiblerange", "anycompatiblemultirange",
})  # fmt: skip
_ALIASES = {"int": "int4", "integer": "int4", "smallint": "int2", "bigint": "int8", "real": "float4", "float": "float8",
            "boolean": "bool", "decimal": "numeric", "char": "bpchar", "character": "bpchar"}  # fmt: skip


def unsupported(what: str) -> PgError:
    return PgError("0A000", f"{what} is not supported by walsender-proxy")


def _error(sqlstate: str, message: str, location: int | None = None, **kw: Any) -> PgError:
    return SqlError(sqlstate, message, location + 1 if isinstance(location, int) and location >= 0 else None, **kw)


# ---------------------------------------------------------------------------------------------
# names and types


def type_name_text(tn: ast.TypeName) -> str:
    """``TypeNameToString``: the name as written (``pg_catalog.int4``, ``text[]``)."""
    text = ".".join(n.sval for n in tn.names)
    return ("SETOF " if tn.setof else "") + text + "[]" * len(tn.arrayBounds or ())


def type_oid(tn: ast.TypeName, cat: Catalog, search_path: Sequence[str], *, quoted: bool, sql_body: bool = False) -> int:
    """A parameter's or result's type (its modifier dropped, as PostgreSQL drops it): a
    type the proxy computes with, or ``void``; 42704 for no such type (``quoted``: the
    result's wording), 0A000 for a type PostgreSQL has that functions here cannot take."""
    names = [n.sval for n in tn.names]
    if tn.pct_type:
        raise unsupported("%TYPE in a function's declaration")
    name = names[-1]
    schema = names[0] if len(names) == 2 else None
    if len(names) > 2:
        raise PgError("42601", f"improper qualified name (too many dotted names): {'.'.join(names)}")
    if any(d.name == name and (d.schema == schema if schema else d.schema in search_path) for d in cat.domains.values()):
        raise unsupported("a function taking or returning a domain")
    if cat.resolve_enum(names, search_path) is not None:
        raise unsupported("a function taking or returning an enum")
    if schema not in (None, "pg_catalog"):
        if schema in cat.schemas and any(t.name == name for t in cat.tables.values() if t.schema == schema):
            raise unsupported("a function taking or returning a table's row type")
        missing = type_name_text(tn)
        raise PgError("42704", f'type "{missing}" does not exist' if quoted else f"type {missing} does not exist")
    base = _ALIASES.get(name, name)
    if base.startswith("_") and base[1:] in pgcatalog_defs.TYPE_OIDS and not tn.arrayBounds:
        base, arrays = base[1:], 1
    else:
        arrays = len(tn.arrayBounds or ())
    if base in _POLYMORPHIC:
        if sql_body:
            raise PgError("42P13", "SQL function with unquoted function body cannot have polymorphic arguments")
        raise unsupported(f"polymorphic type {base} in an SQL function")
    if base == "void" and not arrays:
        return VOID_OID
    if base == "record" and not arrays:
        return RECORD_OID
    try:
        ct = parse_type(base + "[]" * min(arrays, 1))
    except (UnknownTypeError, PgError):
        if schema is None and any(r.name == name and r.schema in search_path for r in (*cat.tables.values(), *cat.views.values())):
            raise unsupported("a function taking or returning a table's row type") from None
        if base in pgcatalog_defs.TYPE_OIDS:
            raise unsupported(f"type {pgcatalog_defs.format_type(pgcatalog_defs.TYPE_OIDS[base], None)} in an SQL function") from None
        missing = type_name_text(tn)
        raise PgError("42704", f'type "{missing}" does not exist' if quoted else f"type {missing} does not exist") from None
    return ct.oid


def _visible(fn: Function, cat: Catalog, search_path: Sequence[str]) -> bool:
    """FunctionIsVisible: its schema on the path and no function of the same name and
    argument types earlier on it."""
    path = [s for s in search_path if not is_temp_schema(s)]
    if fn.schema not in path:
        return False
    for s in path[: path.index(fn.schema)]:
        if any(f.name == fn.name and f.input_types == fn.input_types for f in cat.functions.values() if f.schema == s):
            return False
    return True


def _ident(name: str) -> str:
    return pgcatalog_defs.quote_ident(name)


def describe(cat: Catalog, search_path: Sequence[str]) -> Callable[[Function], str]:
    """``format_procedure``: ``f(integer,text)``, schema-qualified when not visible."""

    def fmt(fn: Function) -> str:
        name = _ident(fn.name) if _visible(fn, cat, search_path) else f"{_ident(fn.schema)}.{_ident(fn.name)}"
        return f"{name}({','.join(sql_function_calls.shown(o) for o in fn.input_types)})"

    return fmt


# ---------------------------------------------------------------------------------------------
# the texts pg_proc's readers show


def _arg_text(a: FunctionArg, defaults: bool) -> str:
    mode = {"o": "OUT ", "b": "INOUT ", "v": "VARIADIC "}.get(a.mode, "")
    name = f"{_ident(a.name)} " if a.name else ""
    text = f"{mode}{name}{sql_function_calls.shown(a.type_oid)}"
    if defaults and a.default is not None:
        text += f" DEFAULT {a.default}"
    return text


def arguments_text(fn: Function) -> str:
    """``pg_get_function_arguments``."""
    return ", ".join(_arg_text(a, True) for a in fn.args if a.mode != "t")


def identity_arguments_text(fn: Function) -> str:
    """``pg_get_function_identity_arguments``."""
    return ", ".join(_arg_text(a, False) for a in fn.args if a.mode != "t")


def result_text(fn: Function) -> str:
    """``pg_get_function_result``."""
    table = [a for a in fn.args if a.mode == "t"]
    if table:
        return "TABLE(" + ", ".join(f"{_ident(a.name)} {sql_function_calls.shown(a.type_oid)}" for a in table) + ")"
    return ("SETOF " if fn.retset else "") + sql_function_calls.shown(fn.rettype)


def functiondef(fn: Function) -> str | None:
    """``pg_get_functiondef``; None for an SQL-standard body (ruleutils deparses the
    analysed tree, which the proxy does not keep)."""
    if fn.standard:
        return None
    attrs = ""
    attrs += {"i": " IMMUTABLE", "s": " STABLE"}.get(fn.volatility, "")
    attrs += {"s": " PARALLEL SAFE", "r": " PARALLEL RESTRICTED"}.get(fn.parallel, "")
    attrs += " STRICT" if fn.strict else ""
    attrs += " LEAKPROOF" if fn.leakproof else ""
    if fn.cost != 100:
        attrs += f" COST {fn.cost:g}"
    if fn.rows > 0 and fn.rows != 1000:
        attrs += f" ROWS {fn.rows:g}"
    quote = "$function"
    while quote + "$" in fn.body or quote in fn.body:
        quote += "x"
    quote += "$"
    return (
        f"CREATE OR REPLACE FUNCTION {_ident(fn.schema)}.{_ident(fn.name)}({arguments_text(fn)})\n"
        f" RETURNS {result_text(fn)}\n"
        f" LANGUAGE sql\n"
        + (attrs + "\n" if attrs else "")
        + f"AS {quote}{fn.body}{quote}\n"
    )


def pg_proc_row(fn: Function, namespace: int, owner: int, acl: list[str] | None = None) -> dict[str, Any]:
    """The function's ``pg_proc`` row. ``proargdefaults`` and ``prosqlbody`` hold
    PostgreSQL's node trees, which the proxy does not build: an opaque text stands there
    (as for ``pg_attrdef.adbin``); what clients print of them comes from
    ``pg_get_function_arguments`` and ``pg_get_functiondef``."""
    inputs = fn.input_args
    plain = all(a.mode == "i" for a in fn.args)
    defaults = [a for a in inputs if a.default is not None]
    return {
        "oid": fn.oid,
        "proname": fn.name,
        "pronamespace": namespace,
        "proowner": owner,
        "prolang": SQL_LANGUAGE_OID,
        "procost": fn.cost,
        "prorows": fn.rows,
        "provariadic": 0,
        "prosupport": "-",
        "prokind": "f",
        "prosecdef": False,
        "proleakproof": fn.leakproof,
        "proisstrict": fn.strict,
        "proretset": fn.retset,
        "provolatile": fn.volatility,
        "proparallel": fn.parallel,
        "pronargs": len(inputs),
        "pronargdefaults": len(defaults),
        "prorettype": fn.rettype,
        "proargtypes": list(fn.input_types),
        "proallargtypes": None if plain else [a.type_oid for a in fn.args],
        "proargmodes": None if plain else [a.mode for a in fn.args],
        "proargnames": [a.name for a in fn.args] if any(a.name for a in fn.args) else None,
        "proargdefaults": f"({' '.join(f'{{DEFAULT :proc {fn.oid} :arg {i}}}' for i in range(len(defaults)))})" if defaults else None,
        "protrftypes": None,
        "prosrc": fn.body,
        "probin": None,
        "prosqlbody": f"{{SQLBODY :proc {fn.oid}}}" if fn.standard else None,
        "proconfig": None,
        "proacl": acl,
    }


# ---------------------------------------------------------------------------------------------
# CREATE FUNCTION

_OPTION_NAMES = frozenset({"as", "language", "transform", "window", "volatility", "strict", "security", "leakproof", "set", "cost", "rows", "support", "parallel"})


def _options(s: ast.CreateFunctionStmt) -> dict[str, ast.DefElem]:
    """compute_function_attributes: each option once (42601 for a repeated one)."""
    out: dict[str, ast.DefElem] = {}
    for d in s.options or ():
        key = d.defname
        if key == "set":
            out.setdefault("set", d)
            continue
        if key in out:
            raise _error("42601", "conflicting or redundant options", d.location)
        out[key] = d
    return out


def _number(d: ast.DefElem) -> float:
    arg = d.arg
    if isinstance(arg, ast.Integer):
        return float(arg.ival)
    if isinstance(arg, ast.Float):
        return float(arg.fval)
    raise PgError("42601", f"{d.defname} requires a numeric value")


def _body_map(text: str, location: int | None) -> Callable[[int], int | None] | None:
    """How a position inside an ``AS '…'`` body maps to the statement's text (PostgreSQL
    reports a body's errors at their place in the statement when it can find the body)."""
    if location is None or location < 0:
        return None
    rest = text[location:]
    if rest.startswith("$"):
        end = rest.find("$", 1)
        if end < 0:
            return None
        start = location + end + 1
        return lambda i: start + i
    if not rest.startswith("'"):
        return None
    places: list[int] = []
    j = location + 1
    while j < len(text):
        if text[j] == "'":
            if j + 1 < len(text) and text[j + 1] == "'":
                places.append(j)
                j += 2
                continue
            break
        places.append(j)
        j += 1
    places.append(j)
    return lambda i: places[i] if 0 <= i < len(places) else None


def _shift(node: Any, where: Callable[[int], int | None]) -> None:
    if isinstance(node, tuple | list):
        for n in node:
            _shift(n, where)
        return
    if not isinstance(node, ast.Node):
        return
    for attr in type(node).__slots__:
        value = getattr(node, attr, None)
        if attr == "location" and isinstance(value, int) and value >= 0:
            moved = where(value)
            setattr(node, attr, moved if moved is not None else -1)
        elif isinstance(value, ast.Node | tuple | list):
            _shift(value, where)


def creation_schema(tx: Transaction, search_path: Sequence[str]) -> str:
    """The first schema of the search path that exists (not the temporary one)."""
    cat = tx.catalog()
    for s in search_path:
        if not is_temp_schema(s) and s in cat.schemas:
            return s
    raise PgError("3F000", "no schema has been selected to create in")


def _body_statements(sql_body: Any) -> list[ast.Node]:
    if isinstance(sql_body, ast.ReturnStmt):
        return [ast.SelectStmt(targetList=(ast.ResTarget(val=sql_body.returnval),), op=enums.SetOperation.SETOP_NONE)]
    parts = sql_body[0] if isinstance(sql_body, tuple) and sql_body and isinstance(sql_body[0], tuple) else sql_body
    return [p for p in parts or () if p is not None]


def _bind_standard(stmts: list[ast.Node], cat: Catalog, search_path: Sequence[str]) -> tuple[list[ast.Node], list[int]]:
    """An SQL-standard body as PostgreSQL binds it at creation: the user functions it calls
    qualified by the schema they resolve to now, and their OIDs (what it depends on)."""
    bound = copy.deepcopy(stmts)
    depends: list[int] = []
    token = sql_function_calls.LOOKUP.set(sql_function_calls.Lookup(cat, tuple(s for s in search_path if not is_temp_schema(s))))
    try:

        def visit(node: Any) -> None:
            if isinstance(node, tuple | list):
                for n in node:
                    visit(n)
                return
            if not isinstance(node, ast.Node):
                return
            if isinstance(node, ast.FuncCall) and [n.sval for n in node.funcname][-1] in _REGCLASS_FUNCTIONS:
                raise unsupported("an SQL-standard function body (RETURN or BEGIN ATOMIC) naming a sequence")
            if isinstance(node, ast.RangeVar):
                _bind_relation(node, cat, search_path, ctes, depends)
                return
            if isinstance(node, ast.TypeCast) and [n.sval for n in node.typeName.names][-1] in ("regclass", "regproc", "regprocedure", "regtype"):
                raise unsupported("a reg* constant in an SQL-standard function body")
            if isinstance(node, ast.WithClause):
                ctes.update(c.ctename for c in node.ctes)
            if isinstance(node, ast.FuncCall):
                fns = sql_function_calls.visible([n.sval for n in node.funcname])
                if fns:
                    depends.extend(f.oid for f in fns)
                    if len(node.funcname) == 1:
                        node.funcname = (ast.String(sval=fns[0].schema), *node.funcname)
                    if len({f.schema for f in fns}) > 1:
                        raise unsupported("an SQL-standard function body calling a function overloaded across schemas")
            for attr in type(node).__slots__:
                visit(getattr(node, attr, None))

        ctes: set[str] = set()
        visit(bound)
    finally:
        sql_function_calls.LOOKUP.reset(token)
    return bound, list(dict.fromkeys(depends))


_REGCLASS_FUNCTIONS = frozenset({"nextval", "currval", "setval"})


def _bind_relation(rv: ast.RangeVar, cat: Catalog, search_path: Sequence[str], ctes: set[str], depends: list[int]) -> None:
    """A relation an SQL-standard body reads, qualified by the schema it resolves to now
    (PostgreSQL keeps its OID), and recorded among what the function depends on."""
    if rv.schemaname is None and rv.relname in ctes:
        return
    if pgcatalog_defs.relation(rv.schemaname, rv.relname) is not None:
        rv.schemaname = rv.schemaname or ("pg_catalog" if rv.relname in pgcatalog_defs.PG_CATALOG else "information_schema")
        return
    for s in [rv.schemaname] if rv.schemaname is not None else search_path:
        t, v = cat.find_table(s, rv.relname), cat.find_view(s, rv.relname)
        if t is not None or v is not None:
            if is_temp_schema(s):
                raise unsupported("an SQL-standard function body reading a temporary table")
            rv.schemaname = s
            depends.append(t.oid if t is not None else v.oid)  # type: ignore[union-attr]
            return
        if cat.find_sequence(s, rv.relname) is not None:
            raise unsupported("an SQL-standard function body (RETURN or BEGIN ATOMIC) reading a sequence")
    # (not found: the body's analysis reports it)


def create(tx: Transaction, s: ast.CreateFunctionStmt, text: str, engine: Engine) -> str:
    """CREATE [OR REPLACE] FUNCTION, in PostgreSQL's order of checks; the body is checked
    (when ``check_function_bodies`` is on, and always for an SQL-standard body) after the
    function is made, as PostgreSQL's validator runs after ProcedureCreate."""
    if s.is_procedure:
        raise unsupported("CREATE PROCEDURE")
    search_path = engine.ex.search_path()
    cat = tx.catalog()
    names = [n.sval for n in s.funcname]
    if len(names) > 2:
        raise PgError("0A000", f"cross-database references are not implemented: {'.'.join(names)}")
    if len(names) == 2:
        schema = names[0]
        if schema == "pg_temp" or is_temp_schema(schema):
            raise unsupported("a temporary function")
        if schema not in cat.schemas:
            raise PgError("3F000", f'schema "{schema}" does not exist')
    else:
        schema = creation_schema(tx, search_path)
    name = names[-1]
    opts = _options(s)
    sql_body = s.sql_body
    lang = opts["language"].arg.sval if "language" in opts else ("sql" if sql_body is not None else None)
    if lang is None:
        raise PgError("42P13", "no language specified")
    if lang.lower() in ("plpgsql", "c", "internal", "plperl", "plpython3u", "pltcl", "plperlu", "pltclu"):
        if lang.lower() == "plpgsql" or lang.lower() in ("c", "internal"):
            raise unsupported(f"LANGUAGE {lang.lower()}")
        raise PgError("42704", f'language "{lang}" does not exist', hint="Use CREATE EXTENSION to load the language into the database.")
    if lang.lower() != "sql":
        raise PgError("42704", f'language "{lang}" does not exist')
    if sql_body is not None and "as" in opts:
        raise PgError("42P13", "duplicate function body specified")
    if "transform" in opts:
        raise unsupported("TRANSFORM FOR TYPE")
    if "window" in opts and opts["window"].arg is not None and getattr(opts["window"].arg, "boolval", True):
        raise unsupported("CREATE FUNCTION … WINDOW")
    if "security" in opts and getattr(opts["security"].arg, "boolval", False):
        raise unsupported("SECURITY DEFINER")
    if "set" in opts:
        raise unsupported("SET in CREATE FUNCTION")
    if "support" in opts:
        raise unsupported("SUPPORT in CREATE FUNCTION")
    volatility = {"immutable": "i", "stable": "s", "volatile": "v"}[opts["volatility"].arg.sval] if "volatility" in opts else "v"
    strict = bool(opts["strict"].arg.boolval) if "strict" in opts else False
    leakproof = bool(opts["leakproof"].arg.boolval) if "leakproof" in opts else False
    if leakproof:
        _superuser_for_leakproof(engine)
    parallel = "u"
    if "parallel" in opts:
        word = opts["parallel"].arg.sval.lower()
        if word not in ("safe", "restricted", "unsafe"):
            raise PgError("42601", 'parameter "parallel" must be SAFE, RESTRICTED, or UNSAFE')
        parallel = word[0]
    cost = 100.0
    if "cost" in opts:
        cost = _number(opts["cost"])
        if cost <= 0:
            raise PgError("22023", "COST must be positive")
    # the parameters (interpret_function_parameter_list)
    args: list[FunctionArg] = []
    raw_defaults: list[ast.Node | None] = []
    seen_default = False
    for p in s.parameters or ():
        mode = p.mode.value if hasattr(p.mode, "value") else str(p.mode)
        mode = {"d": "i"}.get(mode, mode)
        if p.argType.setof:
            if mode == "t":
                raise PgError("42P13", "functions cannot return set arguments")
            raise PgError("42P13", "functions cannot accept set arguments")
        oid = type_oid(p.argType, cat, search_path, quoted=False, sql_body=sql_body is not None)
        if oid in (VOID_OID, RECORD_OID):
            raise unsupported(f"a parameter of type {sql_function_calls.shown(oid)}")
        if mode == "v":
            raise unsupported("VARIADIC parameters")
        if p.name:
            for prev in args:
                if prev.name == p.name and not ({prev.mode, mode} <= {"i", "o", "t"} and (prev.mode == "i") != (mode == "i")):
                    raise PgError("42P13", f'parameter name "{p.name}" used more than once')
        if p.defexpr is not None:
            if mode not in ("i", "b"):
                raise PgError("42P13", "only input parameters can have default values")
            seen_default = True
        elif seen_default and mode in ("i", "b"):
            raise PgError("42P13", "input parameters after one with a default value must also have defaults")
        args.append(FunctionArg(p.name or "", oid, mode))
        raw_defaults.append(p.defexpr)
    args = [FunctionArg(a.name, a.type_oid, a.mode, _default(d, a.type_oid, tx)) if d is not None else a for a, d in zip(args, raw_defaults, strict=True)]
    # the result (compute_return_type)
    outs = [a for a in args if a.mode in ("o", "b")]
    table = [a for a in args if a.mode == "t"]
    retset = False
    if s.returnType is not None:
        retset = bool(s.returnType.setof)
        rettype = RECORD_OID if table else type_oid(s.returnType, cat, search_path, quoted=True, sql_body=sql_body is not None)
        if outs:
            want = outs[0].type_oid if len(outs) == 1 else RECORD_OID
            if rettype != want:
                raise PgError("42P13", f"function result type must be {sql_function_calls.shown(want)} because of OUT parameters")
    elif outs:
        rettype = outs[0].type_oid if len(outs) == 1 else RECORD_OID
    else:
        raise PgError("42P13", "function result type must be specified")
    if rettype == RECORD_OID and not outs and not table:
        raise unsupported("an SQL function returning record without OUT parameters")
    rows = 1000.0 if retset else 0.0
    if "rows" in opts:
        rows = _number(opts["rows"])
        if rows <= 0:
            raise PgError("22023", "ROWS must be positive")
        if not retset:
            raise PgError("22023", "ROWS is not applicable when function does not return a set")
    # the body (interpret_AS_clause)
    if sql_body is None:
        if "as" not in opts:
            raise PgError("42P13", "no function body specified")
        items = opts["as"].arg
        if len(items) > 1:
            raise PgError("42P13", f'only one AS item needed for language "{lang.lower()}"')
        body = items[0].sval
    if name in PG15_FUNCTIONS:
        raise unsupported(f"a function named as PostgreSQL's built-in function {name}()")
    standard = sql_body is not None
    query = ""
    depends: list[int] = []
    if standard:
        stmts = _body_statements(sql_body)
        bound, depends = _bind_standard(stmts, cat, search_path)
        query = ";\n".join(RawStream()(st) for st in bound)
        body = ""
        probe_stmts = stmts
    else:
        probe_stmts = []
    new = Function(
        0, schema, name, tuple(args), rettype, retset, volatility, strict, body, standard, query,
        leakproof, cost, rows, parallel, tuple(depends),
    )  # fmt: skip
    fn = tx.create_function(new, or_replace=bool(s.replace), describe=describe(cat, search_path))
    if standard or str(engine.ex.settings.get("check_function_bodies")) == "on":
        if not standard:
            where = _body_map(text, opts["as"].arg_location if "as" in opts else None)
            try:
                probe_stmts = [r.stmt for r in pglast.parse_sql(body)]
            except pglast.parser.ParseError as e:
                msg, loc = (*e.args, None)[:2]
                at = where(loc) if where is not None and isinstance(loc, int) else None
                raise _error("42601", str(msg), at) from None
            if where is not None:
                _shift(probe_stmts, where)
            else:
                clear_locations(probe_stmts)
        _check_body(tx, fn, probe_stmts, engine)
    return "CREATE FUNCTION"


def _superuser_for_leakproof(engine: Engine) -> None:
    role = engine.ex.services.roles.get(engine.ex.user)
    if role is None or not role.superuser:
        raise PgError("42501", "only superuser can define a leakproof function")


def alter(tx: Transaction, s: ast.AlterFunctionStmt, engine: Engine) -> str:
    """ALTER FUNCTION … [IMMUTABLE | STABLE | VOLATILE] [[NOT] LEAKPROOF] [STRICT | CALLED
    ON NULL INPUT] [COST n] [ROWS n] [PARALLEL …] (PostgreSQL's AlterFunction)."""
    from dataclasses import replace

    if s.objtype != enums.ObjectType.OBJECT_FUNCTION:
        raise unsupported(f"ALTER {s.objtype.name.removeprefix('OBJECT_')}")
    search_path = engine.ex.search_path()
    token = sql_function_calls.LOOKUP.set(None)
    try:
        fn = _lookup(tx, s.func, search_path, False, [])
    finally:
        sql_function_calls.LOOKUP.reset(token)
    assert fn is not None
    seen: dict[str, ast.DefElem] = {}
    for d in s.actions or ():
        if d.defname in seen:
            raise _error("42601", "conflicting or redundant options", d.location)
        seen[d.defname] = d
    changes: dict[str, Any] = {}
    if "volatility" in seen:
        changes["volatility"] = {"immutable": "i", "stable": "s", "volatile": "v"}[seen["volatility"].arg.sval]
    if "strict" in seen:
        changes["strict"] = bool(seen["strict"].arg.boolval)
    if "security" in seen and bool(seen["security"].arg.boolval):
        raise unsupported("SECURITY DEFINER")
    if "leakproof" in seen:
        changes["leakproof"] = bool(seen["leakproof"].arg.boolval)
        if changes["leakproof"]:
            _superuser_for_leakproof(engine)
    if "cost" in seen:
        changes["cost"] = _number(seen["cost"])
        if changes["cost"] <= 0:
            raise PgError("22023", "COST must be positive")
    if "rows" in seen:
        changes["rows"] = _number(seen["rows"])
        if changes["rows"] <= 0:
            raise PgError("22023", "ROWS must be positive")
        if not fn.retset:
            raise PgError("22023", "ROWS is not applicable when function does not return a set")
    if "support" in seen:
        raise unsupported("SUPPORT in ALTER FUNCTION")
    if "parallel" in seen:
        word = seen["parallel"].arg.sval.lower()
        if word not in ("safe", "restricted", "unsafe"):
            raise PgError("42601", 'parameter "parallel" must be SAFE, RESTRICTED, or UNSAFE')
        changes["parallel"] = word[0]
    if "set" in seen:
        raise unsupported("SET in ALTER FUNCTION")
    tx.replace_function(replace(fn, **changes))
    return "ALTER FUNCTION"


def _default(raw: ast.Node, oid: int, tx: Transaction) -> str:
    """A parameter's DEFAULT cooked as PostgreSQL cooks it (coerce_to_specific_type) and
    printed as ``pg_get_function_arguments`` prints it."""

    shown_type = sql_function_calls.shown(oid)
    if isinstance(raw, ast.A_Const) and raw.isnull:
        return f"NULL::{shown_type}"
    try:
        from decoding.pgtypes import type_by_oid

        ctype = type_by_oid(oid)
    except UnknownTypeError:
        raise unsupported(f"a parameter default of type {shown_type}") from None
    try:
        cooked = default_exprs.cook(raw, ctype, "", lambda n: relation_oid(tx, n))
    except PgError as e:
        if e.sqlstate == "42804":
            got = e.message.rpartition(" of type ")[2]
            raise _error("42804", f"argument of DEFAULT must be type {shown_type}, not type {got}", getattr(raw, "location", None)) from None
        if e.sqlstate == "0A000" and e.message.startswith("DEFAULT expression"):
            raise unsupported("a parameter " + e.message.removesuffix(" is not supported by walsender-proxy")) from None
        raise
    if cooked is None:
        return f"NULL::{shown_type}"
    if cooked.volatile or cooked.styled:
        raise unsupported("a parameter default that is volatile or prints a date/time constant")
    return cooked.column_default().expr


def _check_body(tx: Transaction, fn: Function, stmts: list[ast.Node], engine: Engine) -> None:
    """fmgr_sql_validator: the body analysed as a call of the function with NULL
    arguments would analyse it (describe, not run)."""
    args = ", ".join(f"NULL::{_cast_name(a.type_oid)}" for a in fn.input_args)
    call = f"{_ident(fn.schema)}.{_ident(fn.name)}({args})"
    many = fn.retset or len(sql_function_calls.result_columns(fn)) > 1
    probe = sql_function_calls.Probe(fn.oid, tuple(stmts))
    with sql_function_calls.looking_up(tx.catalog(), engine.ex.search_path(), probe):
        engine.describe_text(tx, f"SELECT * FROM {call}" if many else f"SELECT {call}")
    if probe.pending:
        raise probe.pending[0]


def _cast_name(oid: int) -> str:
    name = sql_function_calls.typname(oid)
    return f"pg_catalog.{name[1:]}[]" if name.startswith("_") else f"pg_catalog.{name}"


# ---------------------------------------------------------------------------------------------
# DROP FUNCTION


def lookup(tx: Transaction, obj: ast.ObjectWithArgs, search_path: Sequence[str]) -> Function:
    """The function an ObjectWithArgs names (GRANT, ALTER FUNCTION): 42883 or 42725
    when none or several are."""
    fn = _lookup(tx, obj, search_path, False, [])
    assert fn is not None
    return fn


def _lookup(tx: Transaction, obj: ast.ObjectWithArgs, search_path: Sequence[str], missing_ok: bool, notices: list[Notice]) -> Function | None:
    """LookupFuncWithArgs: the function an ObjectWithArgs names (None: missing, skipped)."""
    cat = tx.catalog()
    names = [n.sval for n in obj.objname]
    if len(names) > 2:
        raise PgError("0A000", f"cross-database references are not implemented: {'.'.join(names)}")
    if len(names) == 2 and names[0] not in cat.schemas:
        if missing_ok:
            notices.append(Notice("NOTICE", "00000", f'schema "{names[0]}" does not exist, skipping'))
            return None
        raise PgError("3F000", f'schema "{names[0]}" does not exist')
    token = sql_function_calls.LOOKUP.set(sql_function_calls.Lookup(cat, tuple(s for s in search_path if not is_temp_schema(s))))
    try:
        fns = sql_function_calls.visible(names)
    finally:
        sql_function_calls.LOOKUP.reset(token)
    shown_name = ".".join(names)
    if obj.args_unspecified:
        if not fns:
            if missing_ok:
                notices.append(Notice("NOTICE", "00000", f"function {shown_name}() does not exist, skipping"))
                return None
            raise PgError("42883", f'could not find a function named "{shown_name}"')
        if len(fns) > 1:
            raise PgError("42725", f'function name "{shown_name}" is not unique', hint="Specify the argument list to select the function unambiguously.")
        return fns[0]
    types: list[int] = []
    params = obj.objfuncargs if obj.objfuncargs is not None else tuple(ast.FunctionParameter(argType=t) for t in obj.objargs or ())
    for p in params:
        mode = p.mode.value if hasattr(p.mode, "value") else str(p.mode or "d")
        if mode in ("o", "t"):
            continue
        try:
            types.append(type_oid(p.argType, cat, search_path, quoted=True))
        except PgError as e:
            if e.sqlstate == "42704" and missing_ok:
                notices.append(Notice("NOTICE", "00000", f'type "{type_name_text(p.argType)}" does not exist, skipping'))
                return None
            if e.sqlstate == "0A000":  # (no user function takes it: none is named)
                types.append(-1)
                continue
            raise
    for fn in fns:
        if list(fn.input_types) == types:
            return fn
    if missing_ok:
        written = ",".join(type_name_text(p.argType) for p in params if (p.mode.value if hasattr(p.mode, "value") else "d") not in ("o", "t"))
        notices.append(Notice("NOTICE", "00000", f"function {shown_name}({written}) does not exist, skipping"))
        return None
    shown_types = ", ".join(sql_function_calls.shown(t) if t > 0 else type_name_text(p.argType) for t, p in zip(types, params, strict=False))
    raise PgError("42883", f"function {shown_name}({shown_types}) does not exist")


def drop(tx: Transaction, s: ast.DropStmt, search_path: Sequence[str], notices: list[Notice]) -> str:
    """DROP FUNCTION [IF EXISTS] name[(argtypes)], … [CASCADE | RESTRICT]: every name
    resolved first, then all dropped together."""

    token = sql_function_calls.LOOKUP.set(None)
    try:
        found = [_lookup(tx, obj, search_path, bool(s.missing_ok), notices) for obj in s.objects]
    finally:
        sql_function_calls.LOOKUP.reset(token)
    oids = list(dict.fromkeys(fn.oid for fn in found if fn is not None))
    if oids:
        dropped = tx.drop_functions(oids, cascade=s.behavior == enums.DropBehavior.DROP_CASCADE)
        cascaded(notices, dropped)
    return "DROP FUNCTION"


def drop_schema_functions(tx: Transaction, schema: str, cascade: bool, search_path: Sequence[str]) -> list[tuple[int, str]]:
    """DROP SCHEMA's part for the functions in the schema: without CASCADE, PostgreSQL's
    2BP01 naming them among the schema's other members; with it, they are dropped (with
    the functions whose bodies use them) before the schema. Returns (OID, description) of
    each dropped, for the NOTICE."""
    cat = tx.catalog()
    fns = [fn for fn in sorted(cat.functions.values(), key=lambda f: f.oid) if fn.schema == schema]
    if schema not in cat.schemas or not cat.functions:
        return []
    fmt = describe(cat, search_path)
    inside = sorted(o for o, r in (*cat.tables.items(), *cat.views.items()) if r.schema == schema)
    outside, lines = view_ddl.dependency_lines(cat, inside, search_path, set(inside))
    if not cascade and (fns or any(isinstance(o, Function) for o in outside)):
        found = [(t.oid, f"table {t.qualified_name}") for t in cat.tables.values() if t.schema == schema]
        found += [(sq.oid, f"sequence {sq.qualified_name}") for sq in cat.sequences.values() if sq.schema == schema]
        found += [(v.oid, f"view {v.qualified_name}") for v in cat.views.values() if v.schema == schema]
        found += [(fn.oid, f"function {fmt(fn)}") for fn in fns]
        raise PgError(
            "2BP01",
            f"cannot drop schema {schema} because other objects depend on it",
            detail="\n".join([*(f"{what} depends on schema {schema}" for _, what in sorted(found)), *lines]),
            hint="Use DROP ... CASCADE to drop the dependent objects too.",
        )
    if not cascade:
        return []
    gone = {fn.oid for fn in fns}
    others = [fn for fn in sorted(cat.functions.values(), key=lambda f: f.oid) if fn.oid not in gone]
    out = [(fn.oid, f"function {fmt(fn)}") for fn in fns]
    if fns:
        tx.drop_functions([fn.oid for fn in fns], cascade=True)
    after = tx.catalog()
    out += [(fn.oid, f"function {fmt(fn)}") for fn in others if fn.oid not in after.functions]
    inside = [o for o, r in (*after.tables.items(), *after.views.items()) if r.schema == schema]
    readers = function_ddl.dependents(after, inside)  # (the lake drops them with what they read)
    out += [(fn.oid, f"function {fmt(fn)}") for fn in readers if fn.schema != schema]
    return out


def no_user_functions_in_row_filters(tx: Transaction, objects: Any) -> None:
    """A publication's row filter calling a user function is PostgreSQL's 0A000 (it allows
    only immutable built-in functions there)."""
    cat = tx.catalog()
    if not cat.functions:
        return
    token = sql_function_calls.LOOKUP.set(sql_function_calls.Lookup(cat, tuple(s for s in tx.search_path if not is_temp_schema(s))))
    try:

        def visit(node: Any) -> None:
            if isinstance(node, tuple | list):
                for n in node:
                    visit(n)
                return
            if not isinstance(node, ast.Node):
                return
            if isinstance(node, ast.FuncCall) and sql_function_calls.visible([n.sval for n in node.funcname]):
                raise _error(
                    "0A000", "invalid publication WHERE expression", node.location,
                    detail="User-defined or built-in mutable functions are not allowed.",
                )  # fmt: skip
            for attr in type(node).__slots__:
                visit(getattr(node, attr, None))

        for o in objects or ():
            if o.pubtable is not None and o.pubtable.whereClause is not None:
                visit(o.pubtable.whereClause)
    finally:
        sql_function_calls.LOOKUP.reset(token)
