"""Plain views: CREATE [OR REPLACE] [TEMP] VIEW, DROP VIEW, ALTER VIEW … RENAME, and what
the rewriter needs to put a view's query in its place.

PostgreSQL binds the names a view's query uses when the view is created (its rule holds
relation OIDs), so a table made later of the same name elsewhere on the search path does
not change what the view reads. Here the view keeps its query as text with every relation
it reads qualified by the schema it resolved to at creation (:func:`bind`); what would make
that text read something else later (renaming or reshaping a table a view reads) is refused
by the lake (``view_ddl.no_dependent_views``). The rewriter expands a reference to a view
into its query as a subquery, named by the view's columns, as PostgreSQL's rewriter does.

Writing through a view (PostgreSQL's auto-updatable views), WITH CHECK OPTION, view options
(security_barrier, security_invoker), RECURSIVE and materialized views are refused.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import pglast
from pglast import ast, enums
from pglast.stream import RawStream

from decoding.catalog import Catalog, Column, Table, View, ViewColumn
from decoding.errors import PgError
from decoding.pgtypes import ColumnType, UnknownTypeError, type_by_oid
from walsender_proxy.backend.outcomes import Notice
from walsender_proxy.lake import view_ddl
from walsender_proxy.sql import pgcatalog_defs
from walsender_proxy.sql.ddl_names import cascaded, qualified
from walsender_proxy.sql.nodes import clear_locations
from walsender_proxy.sql.pgcatalog_defs import format_type

if TYPE_CHECKING:
    from walsender_proxy.lake import Transaction


class _SearchPath(Protocol):
    def search_path(self) -> list[str]: ...


class Describer(Protocol):
    """What CREATE VIEW needs of the engine: the result columns of the view's query, and
    the session whose search_path the query's names are bound in."""

    ex: _SearchPath

    def describe_text(self, tx: Transaction, sql: str) -> tuple[list[Any], tuple[int, ...]]: ...


#: PostgreSQL's type of an untyped literal; a view's column of it is text (PostgreSQL 10+).
UNKNOWN_OID = 705
TEXT_OID = 25


def unsupported(what: str) -> PgError:
    return PgError("0A000", f"{what} is not supported by walsender-proxy")


@dataclass(frozen=True, slots=True)
class ViewQuery:
    """What the rewriter's relation resolver returns for a view: its bound query and its
    columns' names (the view's, which ALTER VIEW … RENAME COLUMN may have changed)."""

    oid: int
    schema: str
    name: str
    sql: str
    columns: tuple[str, ...]


def as_query(v: View) -> ViewQuery:
    return ViewQuery(v.oid, v.schema, v.name, v.query, tuple(c.name for c in v.columns))


def as_table(v: View) -> Table:
    """A view's columns as a table's, for RowDescription (which names a view's column as
    PostgreSQL does: the view's OID and the column's number); a column of a type the lake
    does not know is left out (its origin is then not named)."""
    cols = []
    for num, vc in enumerate(v.columns, start=1):
        try:
            ct = type_by_oid(vc.type_oid)
        except UnknownTypeError:
            continue
        cols.append(Column(num, vc.name, ColumnType(ct.base, vc.typmod, ct.is_array)))
    return Table(v.oid, v.schema, v.name, tuple(cols))


def find(cat: Catalog, schema: str | None, name: str, search_path: Sequence[str]) -> View | None:
    """The view a relation reference means: the first schema holding any relation of that
    name decides (tables, sequences and views share one namespace)."""
    for s in [schema] if schema is not None else search_path:
        if cat.relation_exists(s, name):
            return cat.find_view(s, name)
    return None


def check_restricted(v: View, setting: str) -> None:
    """``restrict_nonsystem_relation_kind`` naming ``view``: a user view is not expanded."""
    if "view" in (part.strip().lower() for part in setting.split(",")):
        raise PgError("55000", f'access to non-system view "{v.name}" is restricted')


def parse_query(sql: str) -> ast.SelectStmt:
    """A view's stored query, its locations cleared: PostgreSQL reports no position inside
    a view's query (it is not the statement's text)."""
    stmt = pglast.parse_sql(sql)[0].stmt
    assert isinstance(stmt, ast.SelectStmt)
    clear_locations(stmt)
    return stmt


# ---------------------------------------------------------------------------------------------
# binding names at creation

#: Functions whose argument names a relation (a regclass PostgreSQL binds to an OID).
_REGCLASS_FUNCTIONS = frozenset({"nextval", "currval", "setval", "pg_get_serial_sequence", "pg_relation_size", "pg_total_relation_size", "pg_table_size"})


class _Binder:
    """Qualifies every relation a query reads by the schema it resolves to now, and records
    the OIDs read (``depends``)."""

    def __init__(self, cat: Catalog, search_path: Sequence[str], temp_schema: str | None) -> None:
        self.cat = cat
        self.search_path = search_path
        self.temp_schema = temp_schema
        self.depends: list[int] = []
        #: Relation names and aliases in the query (a bare one as a column is a whole row).
        self.range_names: set[str] = set()
        self.bare_refs: set[str] = set()
        self.star = False

    def visit(self, node: Any, ctes: frozenset[str]) -> None:
        if isinstance(node, tuple | list):
            for n in node:
                self.visit(n, ctes)
            return
        if not isinstance(node, ast.Node):
            return
        if isinstance(node, ast.SelectStmt):
            self._select(node, ctes)
            return
        if isinstance(node, ast.RangeVar):
            self.range_names.add(node.alias.aliasname if node.alias is not None else node.relname)
            self._range_var(node, ctes)
            return
        if isinstance(node, ast.RangeSubselect | ast.RangeFunction) and node.alias is not None:
            self.range_names.add(node.alias.aliasname)
        if isinstance(node, ast.JoinExpr):
            if node.alias is not None:
                self.range_names.add(node.alias.aliasname)
            if node.isNatural:  # (an added column could join too)
                self.star = True
        if isinstance(node, ast.ColumnRef):
            if isinstance(node.fields[-1], ast.A_Star):
                self.star = True
            elif len(node.fields) == 1 and isinstance(node.fields[0], ast.String):
                self.bare_refs.add(node.fields[0].sval)
        if isinstance(node, ast.FuncCall) and node.funcname[-1].sval.lower() in _REGCLASS_FUNCTIONS:
            raise unsupported(f"a view calling {node.funcname[-1].sval.lower()}()")
        if isinstance(node, ast.FuncCall) and any(f.name == node.funcname[-1].sval for f in self.cat.functions.values()):
            # (PostgreSQL binds it by OID: DROP FUNCTION would have to refuse, a later
            # function of the name earlier on the search path would not be called)
            raise unsupported("a view calling a user-defined function")
        if isinstance(node, ast.CollateClause):  # (a view column's collation is not kept)
            raise unsupported("COLLATE in a view")
        if isinstance(node, ast.TypeCast) and node.typeName.names[-1].sval.lower() == "regclass":
            raise unsupported("a regclass constant in a view")
        for attr in type(node).__slots__:
            self.visit(getattr(node, attr, None), ctes)

    def _select(self, s: ast.SelectStmt, ctes: frozenset[str]) -> None:
        if s.withClause is not None:
            names = [c.ctename for c in s.withClause.ctes]
            for i, cte in enumerate(s.withClause.ctes):
                if not isinstance(cte.ctequery, ast.SelectStmt):
                    raise PgError("0A000", "views must not contain data-modifying statements in WITH")
                seen = names if s.withClause.recursive else names[:i]
                self.visit(cte.ctequery, ctes | frozenset(seen))
            ctes = ctes | frozenset(names)
        for attr in type(s).__slots__:
            if attr != "withClause":
                self.visit(getattr(s, attr, None), ctes)

    def _range_var(self, rv: ast.RangeVar, ctes: frozenset[str]) -> None:

        if rv.schemaname is None and rv.relname in ctes:
            return
        d = pgcatalog_defs.relation(rv.schemaname, rv.relname)
        if d is not None:
            rv.schemaname = d.schema
            return
        schema = rv.schemaname
        if schema == "pg_temp" and self.temp_schema is not None:
            schema = self.temp_schema
        for s in [schema] if schema is not None else self.search_path:
            t = self.cat.find_table(s, rv.relname)
            v = self.cat.find_view(s, rv.relname)
            if t is not None or v is not None:
                rv.schemaname = s
                self.depends.append(t.oid if t is not None else v.oid)  # type: ignore[union-attr]
                return
            if self.cat.find_sequence(s, rv.relname) is not None:
                raise unsupported("a view reading a sequence")
        # (not found: the query's own analysis reports it, with its position)


def bind(cat: Catalog, query: ast.SelectStmt, search_path: Sequence[str], temp_schema: str | None) -> tuple[list[int], bool]:
    """Qualify the relations ``query`` reads (in place); the OIDs it reads, and whether it
    expands rows of them (``*``, or a relation's name used as a whole-row value)."""
    b = _Binder(cat, search_path, temp_schema)
    b.visit(query, frozenset())
    return list(dict.fromkeys(b.depends)), b.star or bool(b.bare_refs & b.range_names)


# ---------------------------------------------------------------------------------------------
# statements


def _query_start(text: str) -> int | None:
    """Where the query of ``CREATE VIEW … AS query`` starts in the statement's text (the
    first top-level AS after VIEW), so that its analysis reports PostgreSQL's positions."""
    try:
        tokens = pglast.parser.scan(text)
    except pglast.parser.ParseError:
        return None
    depth = 0
    seen_view = False
    for tok in tokens:
        if tok.name == "VIEW":
            seen_view = True
        elif tok.name == "(":
            depth += 1
        elif tok.name == ")":
            depth -= 1
        elif tok.name == "AS" and seen_view and depth == 0:
            return tok.end + 1
    return None


def _check_options(s: ast.ViewStmt, text: str) -> None:
    if s.withCheckOption not in (None, enums.ViewCheckOption.NO_CHECK_OPTION):
        raise unsupported("WITH CHECK OPTION")
    for opt in s.options or ():
        raise unsupported(f'the view option "{opt.defname}"')
    try:
        names = [t.name for t in pglast.parser.scan(text)]
    except pglast.parser.ParseError:
        names = []
    if "RECURSIVE" in names[: names.index("VIEW")] if "VIEW" in names else False:
        raise unsupported("CREATE RECURSIVE VIEW")
    if s.view.relpersistence == "u":
        raise PgError("42601", "views cannot be unlogged because they do not have storage")
    q = s.query
    if not isinstance(q, ast.SelectStmt):
        raise unsupported("a view of this statement")
    if q.intoClause is not None:
        raise PgError("0A000", "views must not contain SELECT INTO")


def create(
    tx: Transaction, s: ast.ViewStmt, text: str, engine: Describer, temp_schema: str | None, notices: list[Notice]
) -> str:
    """CREATE [OR REPLACE] [TEMP] VIEW: the query is analysed as PostgreSQL's DefineView
    does (its errors first), then the view is made; a view reading a temporary relation is
    temporary itself (with PostgreSQL's NOTICE)."""

    _check_options(s, text)
    rel: ast.RangeVar = s.view
    query: ast.SelectStmt = s.query
    shown = definition(query)
    start = _query_start(text)
    sql = " " * start + text[start:] if start is not None else RawStream()(query)
    cols, key_depends = engine.describe_text(tx, sql)
    if not cols:
        raise PgError("42P16", "view must have at least one column")
    columns = _columns(cols, [a.sval for a in s.aliases or ()])
    cat = tx.catalog()
    bound = copy.deepcopy(query)
    depends, expands = bind(cat, bound, engine.ex.search_path(), temp_schema)
    temporary = rel.relpersistence == "t" or rel.schemaname == "pg_temp"
    if not temporary and view_ddl.temporary(cat, depends):
        notices.append(Notice("NOTICE", "00000", f'view "{rel.relname}" will be a temporary view'))
        if rel.schemaname is not None:
            raise PgError("42P16", "cannot create temporary relation in non-temporary schema")
        temporary = True
    if temporary:
        if rel.schemaname not in (None, "pg_temp", temp_schema) or temp_schema is None:
            raise PgError("42P16", "cannot create temporary relation in non-temporary schema")
        tx.create_schema(temp_schema, if_not_exists=True, system=True)
        name = f"{temp_schema}.{rel.relname}"
    else:
        name = qualified(rel) if rel.schemaname else f"{tx.creation_schema()}.{rel.relname}"
    tx.create_view(
        name, RawStream()(bound), shown, columns, depends, or_replace=bool(s.replace), format_type=type_formatter(), expands=expands,
        key_depends=key_depends,
    )
    return "CREATE VIEW"


def drop(tx: Transaction, s: ast.DropStmt, notices: list[Notice]) -> str:
    """DROP VIEW [IF EXISTS] name, … [CASCADE | RESTRICT]."""

    cascade = s.behavior == enums.DropBehavior.DROP_CASCADE
    named = [[n.sval for n in obj] for obj in s.objects]
    found = [tx.view(".".join(names)) for names in named]  # (every name checked first)
    every = [v.oid for v in found if v is not None]
    for names, v in zip(named, found, strict=True):
        if v is None:
            if not s.missing_ok:
                raise PgError("42P01", f'view "{".".join(names)}" does not exist')
            notices.append(Notice("NOTICE", "00000", f'view "{names[-1]}" does not exist, skipping'))
    if len(every) > 1 and not cascade:
        lines = tx.dependent_view_lines(every)
        if lines:
            raise PgError(
                "2BP01",
                "cannot drop desired object(s) because other objects depend on them",
                detail="\n".join(lines),
                hint="Use DROP ... CASCADE to drop the dependent objects too.",
            )
    for names, v in zip(named, found, strict=True):
        if v is None or v.oid not in tx.catalog().views:
            continue  # (went with an earlier one's CASCADE)
        dropped = tx.drop_view(".".join(names), cascade=cascade, also=[o for o in every if o != v.oid])
        cascaded(notices, dropped)
    return "DROP VIEW"


def rename(tx: Transaction, s: ast.RenameStmt, notices: list[Notice]) -> str | None:
    """``ALTER VIEW|TABLE v RENAME TO w`` and ``ALTER VIEW v RENAME COLUMN a TO b`` of a
    view; None when ``s`` does not name a view."""

    rel = s.relation
    if rel is None:
        return None
    on_view = s.renameType == enums.ObjectType.OBJECT_VIEW or (
        s.renameType == enums.ObjectType.OBJECT_COLUMN and s.relationType == enums.ObjectType.OBJECT_VIEW
    )
    try:
        v = tx.view(qualified(rel))
    except PgError:
        if on_view:
            raise PgError("42809", f'"{rel.relname}" is not a view', hint="Use ALTER TABLE instead.") from None
        return None
    if v is None:
        if not on_view:
            return None
        if s.missing_ok:
            notices.append(Notice("NOTICE", "00000", f'relation "{rel.relname}" does not exist, skipping'))
            return "ALTER VIEW"
        raise PgError("42P01", f'relation "{qualified(rel)}" does not exist')
    tag = "ALTER VIEW" if s.relationType == enums.ObjectType.OBJECT_VIEW or s.renameType == enums.ObjectType.OBJECT_VIEW else "ALTER TABLE"
    if s.renameType == enums.ObjectType.OBJECT_COLUMN:
        tx.rename_view_column(qualified(rel), s.subname, s.newname)
    elif s.renameType in (enums.ObjectType.OBJECT_VIEW, enums.ObjectType.OBJECT_TABLE):
        tx.rename_view(qualified(rel), s.newname)
    else:
        return None
    return tag


def type_formatter() -> Callable[[int, int], str]:

    return lambda oid, typmod: format_type(oid, typmod) or str(oid)


def _columns(cols: Sequence[Any], aliases: Sequence[str]) -> list[ViewColumn]:
    if len(aliases) > len(cols):
        raise PgError("42601", "CREATE VIEW specifies more column names than columns")
    out = []
    for i, c in enumerate(cols):
        oid, typmod = c.type_oid, c.typmod
        if oid == UNKNOWN_OID:
            oid, typmod = TEXT_OID, -1
        out.append(ViewColumn(aliases[i] if i < len(aliases) else c.name, oid, typmod))
    return out


def definition(query: ast.SelectStmt) -> str:
    """The text ``pg_get_viewdef`` shows: pglast's deparse of the query as written (not
    PostgreSQL's ruleutils form, which qualifies every column)."""
    return " " + RawStream()(query) + ";"


# ---------------------------------------------------------------------------------------------
# updatability, as information_schema reports it


@dataclass(frozen=True, slots=True)
class Updatability:
    """``pg_relation_is_updatable`` and ``pg_column_is_updatable`` of a view, by
    PostgreSQL's rules for automatically updatable views (the proxy itself refuses writing
    through a view; information_schema reports what PostgreSQL would)."""

    updatable: bool
    insertable: bool
    columns: frozenset[str]


_NOT_UPDATABLE = Updatability(False, False, frozenset())
#: Aggregate and window functions: a view calling one is not automatically updatable.
_AGGREGATES = frozenset({"count", "sum", "avg", "min", "max", "array_agg", "string_agg", "bool_and", "bool_or", "every", "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg", "stddev", "variance", "bit_and", "bit_or", "xmlagg", "row_number", "rank", "dense_rank", "ntile", "lag", "lead", "first_value", "last_value", "nth_value", "percent_rank", "cume_dist", "generate_series", "unnest", "jsonb_array_elements", "json_array_elements", "regexp_matches"})


def _calls_any(node: Any, names: frozenset[str]) -> bool:
    if isinstance(node, tuple | list):
        return any(_calls_any(n, names) for n in node)
    if isinstance(node, ast.SubLink) or not isinstance(node, ast.Node):
        return False
    if isinstance(node, ast.FuncCall) and (node.funcname[-1].sval.lower() in names or node.over is not None or node.agg_star):
        return True
    return any(_calls_any(getattr(node, a, None), names) for a in type(node).__slots__)


def view_updatability(cat: Catalog, v: View, depth: int = 0) -> Updatability:
    """``view_query_is_auto_updatable`` and ``view_cols_are_auto_updatable``: one table
    (or automatically updatable view) in FROM, no WITH, DISTINCT, GROUP BY, HAVING, window,
    LIMIT/OFFSET, set operation, aggregate, window or set-returning function; a column is
    updatable when it is a plain column of that relation."""
    try:
        q = parse_query(v.query)
    except Exception:
        return _NOT_UPDATABLE
    if (
        depth > 32
        or q.op != enums.SetOperation.SETOP_NONE
        or q.valuesLists
        or q.withClause is not None
        or q.distinctClause
        or q.groupClause
        or q.havingClause is not None
        or q.windowClause
        or q.limitCount is not None
        or q.limitOffset is not None
        or len(q.fromClause or ()) != 1
        or not isinstance(q.fromClause[0], ast.RangeVar)
        or _calls_any(q.targetList, _AGGREGATES)
    ):
        return _NOT_UPDATABLE
    rv: ast.RangeVar = q.fromClause[0]
    base_cols: list[str]
    t = cat.find_table(rv.schemaname or "", rv.relname)
    if t is not None:
        base_cols = [c.name for c in sorted(t.columns, key=lambda c: c.attnum)]
    else:
        inner = cat.find_view(rv.schemaname or "", rv.relname)
        if inner is None:
            return _NOT_UPDATABLE
        u = view_updatability(cat, inner, depth + 1)
        if not (u.updatable or u.insertable):
            return _NOT_UPDATABLE
        base_cols = sorted(u.columns)
    alias = rv.alias.aliasname if rv.alias is not None else rv.relname
    renamed = [c.sval for c in rv.alias.colnames] if rv.alias is not None and rv.alias.colnames else []
    visible = renamed + base_cols[len(renamed):]
    updatable: set[str] = set()
    i = 0
    for rt in q.targetList or ():
        val = rt.val
        if isinstance(val, ast.ColumnRef) and isinstance(val.fields[-1], ast.A_Star):
            for _ in visible:
                if i < len(v.columns):
                    updatable.add(v.columns[i].name)
                i += 1
            continue
        if isinstance(val, ast.ColumnRef) and all(isinstance(f, ast.String) for f in val.fields):
            names = [f.sval for f in val.fields]
            if names[-1] in visible and (len(names) == 1 or names[-2] == alias) and i < len(v.columns):
                updatable.add(v.columns[i].name)
        i += 1
    if not updatable:  # (only DELETE is possible then)
        return Updatability(False, False, frozenset())
    return Updatability(True, True, frozenset(updatable))
