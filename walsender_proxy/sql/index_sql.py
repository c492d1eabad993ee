"""Indexes and UNIQUE constraints from SQL: CREATE [UNIQUE] INDEX, DROP INDEX, ALTER INDEX …
RENAME, UNIQUE in CREATE TABLE and ALTER TABLE … ADD/DROP CONSTRAINT, read as PostgreSQL
15's ``transformIndexStmt``/``DefineIndex`` read them, with its errors.

What the lake keeps is an index over plain columns (btree, or hash over one column), in
any order, with INCLUDE columns and NULLS NOT DISTINCT: unique ones are enforced, others are
metadata (see lake/index_ddl.py). A key column's operator class may be its type's
default one or btree's pattern classes (``text_pattern_ops``, ``varchar_pattern_ops``,
``bpchar_pattern_ops``: Django indexes every CharField with one), whose equality is the
type's, so a unique index over one holds the same rows. A plain index's key may be an
expression and it may have a WHERE (both cooked as PostgreSQL cooks them,
``cooked_exprs``, and printed as pg_get_indexdef prints them); a unique one may not, as
the lake would have to compute them to check it. Other operator classes, collations,
storage parameters and tablespaces are refused (0A000): their catalog text and their
meaning would differ from PostgreSQL's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pglast import ast, enums

from decoding.catalog import IndexExpr
from decoding.errors import PgError
from walsender_proxy.backend import pgcatalog_data as data
from walsender_proxy.backend.outcomes import Notice
from walsender_proxy.lake import Transaction
from walsender_proxy.sql import cooked_exprs as cx
from walsender_proxy.sql import default_exprs as dx
from walsender_proxy.sql.ddl_names import qualified
from walsender_proxy.sql.pgcatalog_defs import TYPE_OIDS

_DESC, _NULLS_FIRST = 1, 2  # PostgreSQL's INDOPTION_DESC, INDOPTION_NULLS_FIRST


def unsupported(what: str) -> PgError:
    return PgError("0A000", f"{what} is not supported by walsender-proxy")


def _qualified(rv: ast.RangeVar) -> str:
    return f"{rv.schemaname}.{rv.relname}" if rv.schemaname else rv.relname


def _option(el: ast.IndexElem) -> int:
    """indoption bits of one key column: DESC implies NULLS FIRST unless told otherwise."""
    desc = el.ordering == enums.SortByDir.SORTBY_DESC
    if el.ordering == enums.SortByDir.SORTBY_USING:
        raise unsupported("an index column ordered with USING")
    nulls = el.nulls_ordering
    first = (
        desc
        if nulls == enums.SortByNulls.SORTBY_NULLS_DEFAULT
        else nulls == enums.SortByNulls.SORTBY_NULLS_FIRST
    )
    return (_DESC if desc else 0) | (_NULLS_FIRST if first else 0)


def _plain(el: Any, what: str = "index", opclass: bool = False) -> str:
    """A key or INCLUDE column's name (``opclass``: the caller reads its operator class)."""
    if not isinstance(el, ast.IndexElem) or el.name is None:
        raise unsupported("an index on an expression (expression indexes)")
    if el.collation:
        raise unsupported(f"COLLATE in an {what} column")
    if el.opclass and not opclass:
        raise unsupported("an operator class in an index column")
    return el.name


#: The pattern operator classes of btree and hash (pg_opclass, PostgreSQL 15): the types
#: each accepts (binary-coercibly: varchar is text to them)
PATTERN_OPCLASSES = {
    "text_pattern_ops": (25, 1043),
    "varchar_pattern_ops": (25, 1043),
    "bpchar_pattern_ops": (1042,),
}
#: btree's other operator classes that are no type's default
_OTHER_OPCLASSES = ("cidr_ops", "record_image_ops", "varchar_ops")
_TYPE_NAMES = {25: "text", 1043: "character varying", 1042: "character"}


def _opclass(el: ast.IndexElem, method: str, column_type: Any) -> str:
    """The operator class a key column names, "" for its type's default (named or not):
    ResolveOpClass's errors for a name it does not know (42704) or a type the class does
    not take (42804)."""
    if not el.opclass:
        return ""
    if len(el.opclass) > 1 and el.opclass[0].sval != "pg_catalog":
        raise unsupported("an operator class of a schema other than pg_catalog")
    name = el.opclass[-1].sval
    if el.opclassopts:
        raise unsupported("operator class options in an index column")
    oid = column_type.oid
    defaults = {n: intype for _oid, n, intype, _family in data.BTREE_OPCLASSES}
    shown = replace(column_type.bare, typmod=-1).sql_name()  # (format_type_be: no typmod)
    if name in PATTERN_OPCLASSES:
        if column_type.is_array or oid not in PATTERN_OPCLASSES[name]:
            raise PgError("42804", f'operator class "{name}" does not accept data type {shown}')
        return name
    if name in defaults and (method == "btree" or name not in _OTHER_OPCLASSES):
        want = defaults[name]
        if want == oid or (want == 25 and oid == 1043) or (want == 2277 and column_type.is_array):
            return ""  # (the type's default: PostgreSQL prints none)
        if method == "btree":
            raise PgError("42804", f'operator class "{name}" does not accept data type {shown}')
    if name in defaults or name in PATTERN_OPCLASSES or name in _OTHER_OPCLASSES:
        raise unsupported(f'the operator class "{name}"')
    raise PgError("42704", f'operator class "{name}" does not exist for access method "{method}"')


def create_index(tx: Transaction, s: ast.IndexStmt, in_block: bool, notices: list[Notice]) -> str:
    """CREATE [UNIQUE] INDEX [CONCURRENTLY] [IF NOT EXISTS] [name] ON table …"""
    if s.concurrent and in_block:
        raise PgError("25001", "CREATE INDEX CONCURRENTLY cannot run inside a transaction block")
    if s.options:
        raise unsupported("storage parameters of an index (CREATE INDEX … WITH)")
    if s.tableSpace is not None:
        raise unsupported("CREATE INDEX … TABLESPACE")
    if s.relation.schemaname is None and s.relation.relname and _is_view(tx, s.relation):
        raise PgError(
            "42809",
            f'cannot create index on relation "{s.relation.relname}"',
            detail="This operation is not supported for views.",
        )
    try:
        if tx.table(qualified(s.relation)).partition_key is not None:
            raise unsupported("CREATE INDEX on a partitioned table")
    except PgError as e:
        if e.sqlstate == "0A000":
            raise
    method = (s.accessMethod or "btree").lower()
    if method not in ("btree", "hash"):
        known = method in ("gin", "gist", "spgist", "brin")
        if not known:
            raise PgError("42704", f'access method "{method}" does not exist')
        raise unsupported(f"{method} indexes")
    expressions: tuple[IndexExpr | None, ...] = ()
    predicate: IndexExpr | None = None
    if any(el.expr is not None for el in s.indexParams or ()) or s.whereClause is not None:
        if any(el.expr is not None for el in s.indexParams or ()) and s.unique:
            raise unsupported("a unique index on an expression")
        t = tx.table(qualified(s.relation))
        expressions = tuple(_expression(el, t, tx) if el.expr is not None else None for el in s.indexParams or ())
        if s.whereClause is not None:
            predicate = _predicate(s.whereClause, t, tx, checked=bool(s.unique))
    columns = tuple("" if el.expr is not None else _plain(el, opclass=True) for el in s.indexParams or ())
    options = tuple(_option(el) for el in s.indexParams or ())
    include = tuple(_plain(el) for el in s.indexIncludingParams or ())
    opclasses: tuple[str, ...] = ()
    if any(el.opclass for el in s.indexParams or ()):
        t = tx.table(qualified(s.relation))
        types = {c.name: c.type for c in t.columns}
        opclasses = tuple(
            _opclass(el, method, types[el.name]) if el.name in types else "" for el in s.indexParams or ()
        )
    if method == "hash":
        if s.unique:
            raise PgError("0A000", 'access method "hash" does not support unique indexes')
        if len(columns) > 1:
            raise PgError("0A000", 'access method "hash" does not support multicolumn indexes')
        if include:
            raise PgError("0A000", 'access method "hash" does not support included columns')
        if any(options):
            raise PgError("0A000", 'access method "hash" does not support ASC/DESC options')
    if len(columns) + len(include) > 32:
        raise PgError("54011", "cannot use more than 32 columns in an index")
    made = tx.create_index(
        _qualified(s.relation),
        s.idxname,
        columns,
        unique=bool(s.unique),
        options=options,
        include=include,
        method=method,
        nulls_not_distinct=bool(s.nulls_not_distinct),
        if_not_exists=bool(s.if_not_exists),
        opclasses=opclasses,
        expressions=expressions,
        predicate=predicate,
    )
    if made is None:
        notices.append(
            Notice("NOTICE", "42P07", f'relation "{s.idxname}" already exists, skipping')
        )
    return "CREATE INDEX"


def _expression(el: ast.IndexElem, t: Any, tx: Transaction) -> IndexExpr:
    """A key column's expression, cooked as DefineIndex's ComputeIndexAttrs does (IMMUTABLE
    functions only), printed as pg_get_indexdef prints it."""
    if el.collation:
        raise unsupported("COLLATE in an index column")
    if el.opclass:
        raise unsupported("an operator class in an index column")
    try:
        tree = cx.Cooker(t, cx.INDEX_EXPRESSION, tx.catalog().enums).expr(el.expr)
    except (cx.Unsupported, dx._Unsupported) as e:
        raise unsupported(f"an index expression {e}") from None
    if isinstance(tree, cx.Var):  # (PostgreSQL takes ((a)) as the column a)
        raise unsupported("an index expression that is a column alone")
    name = el.expr.funcname[-1].sval if isinstance(el.expr, ast.FuncCall) else "expr"  # (FigureColname)
    type_oid = TYPE_OIDS.get(tree.ty.name, 0)
    if not type_oid:
        raise unsupported(f"an index expression of type {tree.ty.name}")
    return IndexExpr(cx.deparse(tree, False), cx.deparse(tree, True), tuple(cx.attnums(tree, [])), name, type_oid)


def _predicate(raw: Any, t: Any, tx: Transaction, *, checked: bool) -> IndexExpr:
    """A partial index's WHERE, cooked as a boolean (IMMUTABLE functions only); with
    ``checked`` (a unique index) also as the DuckDB expression the lake filters rows with."""
    try:
        tree = cx.Cooker(t, cx.INDEX_PREDICATE, tx.catalog().enums).boolean(raw)
        duck = cx.duck(tree) if checked else ""
    except (cx.Unsupported, dx._Unsupported) as e:
        raise unsupported(f"an index predicate {e}") from None
    if checked and not duck:
        raise unsupported("this predicate of a partial unique index")
    return IndexExpr(cx.deparse(tree, False), cx.deparse(tree, True), tuple(cx.attnums(tree, [])), "", 16, duck)


def _is_view(tx: Transaction, rel: ast.RangeVar) -> bool:
    cat = tx.catalog()
    for schema in [rel.schemaname] if rel.schemaname else tx.search_path or tx.lake.search_path:
        if cat.find_table(schema, rel.relname) is not None:
            return False
        if cat.find_view(schema, rel.relname) is not None:
            return True
    return False


def unique_constraint(c: ast.Constraint, column: str | None = None) -> dict[str, Any]:
    """A UNIQUE constraint as :meth:`Transaction.create_index` arguments (``column``: a
    column constraint's own column)."""
    if c.deferrable or c.initdeferred:
        raise unsupported("a DEFERRABLE unique constraint")
    if c.options:
        raise unsupported("storage parameters of a unique constraint (WITH)")
    if c.indexname:
        raise unsupported("ADD CONSTRAINT … UNIQUE USING INDEX")
    if c.indexspace:
        raise unsupported("USING INDEX TABLESPACE")
    keys = (column,) if column is not None else tuple(k.sval for k in c.keys or ())
    return {
        "name": c.conname,
        "columns": keys,
        "include": tuple(k.sval for k in c.including or ()),
        "nulls_not_distinct": bool(c.nulls_not_distinct),
    }


def add_unique(tx: Transaction, table: str, spec: dict[str, Any]) -> None:
    t = tx.table(table)
    if spec["name"] is not None and t.index(spec["name"]) is not None:
        raise PgError("42P07", f'relation "{spec["name"]}" already exists')
    tx.create_index(
        table,
        spec["name"],
        spec["columns"],
        unique=True,
        include=spec["include"],
        nulls_not_distinct=spec["nulls_not_distinct"],
        constraint=True,
    )


def drop(tx: Transaction, s: ast.DropStmt, in_block: bool, notices: list[Notice]) -> str:
    """DROP INDEX [CONCURRENTLY] [IF EXISTS] name [, …] [CASCADE | RESTRICT]."""
    if s.concurrent:
        if in_block:
            raise PgError("25001", "DROP INDEX CONCURRENTLY cannot run inside a transaction block")
        if len(s.objects) > 1:
            raise PgError(
                "0A000", "DROP INDEX CONCURRENTLY does not support dropping multiple objects"
            )
        if s.behavior == enums.DropBehavior.DROP_CASCADE:
            raise PgError("0A000", "DROP INDEX CONCURRENTLY does not support CASCADE")
    for obj in s.objects:
        names = [n.sval for n in obj]
        if s.missing_ok and _find(tx, names) is None:
            notices.append(
                Notice("NOTICE", "00000", f'index "{names[-1]}" does not exist, skipping')
            )
            continue
        dropped = tx.drop_index(".".join(names), cascade=s.behavior == enums.DropBehavior.DROP_CASCADE)
        if dropped:
            from walsender_proxy.sql.ddl_names import cascaded

            cascaded(notices, dropped)
    return "DROP INDEX"


def _find(tx: Transaction, names: list[str]) -> Any:
    cat = tx.catalog()
    for schema in names[:-1] or tx.search_path or tx.lake.search_path:
        if cat.relation_exists(schema, names[-1]):
            return schema
    return None


def rename(tx: Transaction, s: ast.RenameStmt, notices: list[Notice]) -> str:
    """ALTER INDEX [IF EXISTS] name RENAME TO new."""
    names = [x for x in (s.relation.schemaname, s.relation.relname) if x]
    if s.missing_ok and _find(tx, names) is None:
        notices.append(
            Notice("NOTICE", "00000", f'relation "{names[-1]}" does not exist, skipping')
        )
        return "ALTER INDEX"
    tx.rename_index(_qualified(s.relation), s.newname)
    return "ALTER INDEX"


def identity_columns(tx: Transaction, t: Any, name: str) -> tuple[str, ...]:
    """The columns of the index REPLICA IDENTITY USING INDEX names, checked as
    PostgreSQL's ATExecReplicaIdentity checks it (NOT NULL columns are the lake's check)."""
    if t.primary_key and name == t.pkey_name:
        return tuple(t.primary_key)
    ix = t.index(name)
    if ix is None:
        found = tx.catalog().find_index(t.schema, name)
        if found is not None:
            raise PgError("42809", f'"{name}" is not an index for table "{t.name}"')
        raise PgError("42704", f'index "{name}" for table "{t.name}" does not exist')
    if not ix.unique:
        raise PgError("42809", f'cannot use non-unique index "{name}" as replica identity')
    if ix.predicate is not None:
        raise PgError("0A000", f'cannot use partial index "{name}" as replica identity')
    return tuple(ix.columns)
