"""DDL statements (parsed by pglast) carried out through the lake's transaction API.

The lake validates and versions the catalog; this module only reads PostgreSQL's syntax
tree — including the full PostgreSQL 15 publication grammar — and says "not supported"
(0A000) for clauses the lake does not model rather than ignoring them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pglast import ast, enums
from pglast.stream import RawStream

from decoding.catalog import ColumnDefault, Generation, RowFilterExpr, is_temp_schema
from decoding.errors import PgError
from decoding.pgtypes import parse_type
from walsender_proxy.backend.outcomes import Notice
from walsender_proxy.lake import Lake, PubTable, Transaction, partitions
from walsender_proxy.lake.foreign_key_ddl import ForeignKeySpec
from walsender_proxy.sql import (
    check_sql,
    column_defs,
    composite_sql,
    default_exprs,
    domain_sql,
    enum_sql,
    foreign_key_sql,
    generated_sql,
    index_sql,
    pgcatalog,
    pgcatalog_defs,
    reloptions,
    rowfilter_sql,
    sql_functions,
    table_like,
    views,
)
from walsender_proxy.sql.ddl_names import (
    cascaded,
    qualified,
    relation_oid,
    unsupported,
)
from walsender_proxy.sql.domain_sql import column_type_text
from walsender_proxy.sql.literals import TYPE_ALIASES
from walsender_proxy.sql.sql_errors import SqlError


def _skipping(notices: list[Notice] | None, sqlstate: str, message: str) -> None:
    """What an IF [NOT] EXISTS form skipped, as PostgreSQL's NOTICE says it."""
    if notices is not None:
        notices.append(Notice("NOTICE", sqlstate, f"{message}, skipping"))


def _is_sequence(tx: Transaction, name: str) -> bool:
    """``name`` resolves to a sequence, not a table (PostgreSQL's relations share names)."""
    try:
        tx.table(name)
    except PgError:
        try:
            tx.sequence(name)
        except PgError:
            return False
        return True
    return False


def _is_view(tx: Transaction, name: str) -> bool:
    try:
        return tx.view(name) is not None
    except PgError:  # (a table or a sequence)
        return False


def _missing(tx: Transaction, rel: ast.RangeVar) -> bool:
    try:
        tx.table(qualified(rel))
    except PgError:
        return True
    return False


def expr_text(node: Any) -> str:
    return RawStream()(node)


def _typer(tx: Transaction) -> Callable[[ast.TypeName], str]:
    """A column's type text, a domain's name resolved in ``tx``'s catalog."""

    return lambda tn: column_type_text(tx, tn)


def _constrained_domain(tx: Transaction, type_text: str) -> bool:
    """A column of this type added to rows that exist gets a value from its domain, or is
    held to its domain's constraints (PostgreSQL's ADD COLUMN rewrites the table then)."""
    domain = parse_type(type_text).domain
    chain = tx.catalog().domain_chain(domain) if domain else []
    return any(d.default is not None or d.not_null or d.checks for d in chain)


def _constraint_keys(c: ast.Constraint) -> list[str]:
    return [k.sval for k in c.keys or ()]


def _constraint_name(kind: enums.ConstrType) -> str:
    """A constraint as its SQL names it (``FOREIGN KEY``, not the parser's ``FOREIGN``)."""
    names = {"FOREIGN": "FOREIGN KEY (REFERENCES)", "ATTR_DEFERRABLE": "DEFERRABLE", "ATTR_NOT_DEFERRABLE": "NOT DEFERRABLE", "ATTR_DEFERRED": "INITIALLY DEFERRED", "ATTR_IMMEDIATE": "INITIALLY IMMEDIATE", "GENERATED": "GENERATED ALWAYS AS", "IDENTITY": "GENERATED AS IDENTITY"}
    name = kind.name.removeprefix("CONSTR_")
    return names.get(name, name)


def table_name(tx: Transaction, rel: ast.RangeVar, oncommit: Any, temp_schema: str | None) -> str:
    """The name a new table is made under; a temporary one (``TEMP``, or named in
    ``pg_temp``) goes to the session's ``temp_schema``, made on first use as PostgreSQL
    makes ``pg_temp_N``."""
    temporary = rel.relpersistence == "t" or rel.schemaname == "pg_temp"
    if rel.relpersistence == "u":
        raise unsupported("CREATE UNLOGGED TABLE")
    if temporary:
        if rel.schemaname not in (None, "pg_temp", temp_schema) or temp_schema is None:
            raise PgError("42P16", "cannot create temporary relation in non-temporary schema")
        tx.create_schema(temp_schema, if_not_exists=True, system=True)
        return f"{temp_schema}.{rel.relname}"
    if oncommit not in (None, enums.OnCommitAction.ONCOMMIT_NOOP):
        raise PgError("42P16", "ON COMMIT can only be used on temporary tables")
    return qualified(rel)


def create_table(
    tx: Transaction, s: ast.CreateStmt, temp_schema: str | None = None, notices: list[Notice] | None = None
) -> str:
    name = table_name(tx, s.relation, s.oncommit, temp_schema)
    if s.if_not_exists and not _missing(tx, s.relation):
        _skipping(notices, "42P07", f'relation "{s.relation.relname}" already exists')
        return "CREATE TABLE"
    if s.partbound is not None:
        from walsender_proxy.sql import partition_sql

        return partition_sql.create_partition(tx, s, name)
    if s.inhRelations or s.ofTypename:
        raise unsupported("table inheritance")
    plans: list[column_defs.ColumnPlan] = []
    pk: list[str] = []
    pk_name: str | None = None
    uniques: list[dict[str, Any]] = []
    foreign: list[ForeignKeySpec] = []
    checks: list[ast.Constraint] = []  # (in the order written: transformCreateStmt's ckconstraints)
    likes: list[table_like.Copied] = []
    for el in s.tableElts or ():
        if isinstance(el, ast.ColumnDef):
            p = column_defs.plan(el, s.relation.relname, _typer(tx), unsupported, _constraint_name)
            if p.primary:
                if pk:
                    raise PgError("42P16", f'multiple primary keys for table "{s.relation.relname}" are not allowed')
                pk, pk_name = [el.colname], p.pkey_name
            uniques += [index_sql.unique_constraint(c, el.colname) for c in p.unique]
            foreign += [foreign_key_sql.spec(c, el.colname, new_table=True) for c in p.foreign]
            checks += p.checks
            plans.append(p)
        elif isinstance(el, ast.Constraint):
            if el.contype == enums.ConstrType.CONSTR_PRIMARY:
                if pk:
                    raise PgError(
                        "42P16",
                        f'multiple primary keys for table "{s.relation.relname}" are not allowed',
                    )
                if el.including or el.options or el.indexname or el.deferrable:
                    raise unsupported("PRIMARY KEY with INCLUDE, WITH, USING INDEX or DEFERRABLE")
                pk, pk_name = _constraint_keys(el), el.conname
            elif el.contype == enums.ConstrType.CONSTR_UNIQUE:
                uniques.append(index_sql.unique_constraint(el))
            elif el.contype == enums.ConstrType.CONSTR_FOREIGN:
                foreign.append(foreign_key_sql.spec(el, new_table=True))
            elif el.contype == enums.ConstrType.CONSTR_CHECK:
                checks.append(el)
            else:
                raise unsupported(f"table constraint {_constraint_name(el.contype)}")
        elif isinstance(el, ast.TableLikeClause):
            copied = table_like.expand(tx, el)
            likes.append(copied)
            plans += copied.columns
        else:
            raise unsupported(type(el).__name__)
    for copied in likes:  # (expandTableLikeClause: once the table's own elements are in)
        if copied.primary_key:
            if pk:
                raise PgError("42P16", f'multiple primary keys for table "{s.relation.relname}" are not allowed')
            pk = copied.primary_key
        uniques += copied.uniques
    if not plans:  # (the lake keeps a table's rows as its columns' values: none, no rows)
        raise unsupported("a table without columns")
    options = reloptions.with_options(s.options)
    schema, _, rel = name.rpartition(".")
    schema = schema or tx.creation_schema()
    owned = column_defs.make_sequences(tx, schema, rel, plans)
    # (cooked once the columns are known, as PostgreSQL cooks them after making the table)
    columns: list[Any] = []
    for p in plans:
        if p.name in owned:
            default, identity = column_defs.with_identity(p, column_defs.column_default(p, owned[p.name]))
        else:
            default = cook_default(p.raw_default, p.type_text, p.name, tx) if p.raw_default is not None else p.cooked_default
            identity = ""
        columns.append((p.name, p.type_text, p.not_null, default, identity))
    partition_by = None
    if s.partspec is not None:
        from walsender_proxy.sql import partition_sql

        if uniques or foreign:
            raise unsupported("UNIQUE or FOREIGN KEY constraints of a partitioned table")
        partition_by = partition_sql.partition_by(s.partspec)
    generating = [p for p in plans if p.raw_generated is not None]
    if generating and partition_by is not None:
        raise unsupported("a generated column of a partitioned table")
    tx.create_table(name, columns, primary_key=pk, if_not_exists=bool(s.if_not_exists), pkey_name=pk_name, partition_by=partition_by)
    if options:
        tx.set_reloptions(name, options)
    column_defs.own_sequences(tx, schema, rel, owned)
    if generating:  # (cooked with the defaults, before the checks: AddRelationNewConstraints)
        _generate(tx, name, generating)
    if checks:  # (AddRelationNewConstraints, as the table is made)
        made = tx.table(name)
        tx.add_checks(name, [check_sql.cook(c, made, new_table=True, user_enums=tx.catalog().enums) for c in checks], in_create=True)
    for copied in likes:  # (LIKE's checks come after, as an ALTER TABLE of the new table)
        if copied.checks:
            made = tx.table(name)
            tx.add_checks(name, [check_sql.cook(c, made, new_table=True, user_enums=tx.catalog().enums) for c in copied.checks])
    # (PostgreSQL's transformIndexConstraints: the primary key first, then each UNIQUE not
    # the same as one before it)
    made: list[tuple[Any, ...]] = [(tuple(pk), (), False)] if pk else []
    for u in uniques:
        same = (u["columns"], u["include"], u["nulls_not_distinct"])
        if same not in made:
            made.append(same)
            index_sql.add_unique(tx, name, u)
    for fk in foreign:  # (transformFKConstraints: after the table and its indexes)
        tx.add_foreign_key(name, fk)
    if likes:
        _like_extras(tx, name, likes)
    return "CREATE TABLE"


def _add_identity(tx: Transaction, table: str, name: str, c: ast.Constraint) -> None:
    """``ALTER COLUMN … ADD GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY [(options)]``, as
    pg_dump writes identity columns: a sequence of the column's type owned by it (named by
    ``SEQUENCE NAME`` or chosen), the rows keeping their values."""
    tbl = tx.table(table)
    col = tbl.column(name)
    if col is None:
        raise PgError("42703", f'column "{name}" of relation "{tbl.name}" does not exist')
    if col.type.is_array or col.type.domain or col.type.base.name not in ("int2", "int4", "int8"):
        raise PgError("22023", "identity column type must be smallint, integer, or bigint")
    where = f'column "{name}" of relation "{tbl.name}"'
    if not col.not_null:
        raise PgError("55000", f"{where} must be declared NOT NULL before identity can be added")
    if col.identity:
        raise PgError("55000", f"{where} is already an identity column")
    if col.default is not None:
        raise PgError("55000", f"{where} already has a default value")
    if tbl.partition_key is not None or tbl.partition_bound is not None:
        raise unsupported("ADD GENERATED AS IDENTITY in a partition tree")
    p = column_defs.ColumnPlan(name, col.type.type_text(), not_null=True, owns=c.generated_when, options=list(c.options or ()))
    owned = column_defs.make_sequences(tx, tbl.schema, tbl.name, [p])
    default, identity = column_defs.with_identity(p, column_defs.column_default(p, owned[name]))
    tx.set_identity(table, name, identity, default)
    column_defs.own_sequences(tx, tbl.schema, tbl.name, owned)


def _add_primary_key(tx: Transaction, table: str, c: ast.Constraint) -> None:
    """``ADD [CONSTRAINT name] PRIMARY KEY (columns)`` of a table that has rows or not."""
    if tx.table(table).primary_key:
        raise PgError("42P16", f'multiple primary keys for table "{tx.table(table).name}" are not allowed')
    if c.including or c.options or c.indexname or c.indexspace or c.deferrable or c.initdeferred:
        raise unsupported("PRIMARY KEY with INCLUDE, WITH, USING INDEX, a tablespace or DEFERRABLE")
    keys = _constraint_keys(c)
    twice = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
    if twice is not None:
        loc = c.location
        raise SqlError("42701", f'column "{twice}" appears twice in primary key constraint', loc + 1 if loc >= 0 else None)
    if tx.table(table).partition_key is not None:
        raise unsupported("ADD PRIMARY KEY of a partitioned table")
    tx.add_primary_key(table, keys, c.conname)


def _like_extras(tx: Transaction, table: str, likes: list[table_like.Copied]) -> None:
    """What LIKE copies besides columns, keys and checks: plain indexes, storage and
    comments."""
    for copied in likes:
        for ix in copied.indexes:
            tx.create_index(table, None, **ix)
        for column, letter in copied.storage.items():
            tx.set_column_storage(table, column, letter)
        made = tx.table(table)
        for column, text in copied.column_comments.items():
            col = made.column(column)
            if col is not None:
                tx.set_comment(1259, made.oid, col.attnum, text)
        for check, text in copied.check_comments.items():
            ck = next((c for c in made.checks if c.name == check), None)
            if ck is not None:
                tx.set_comment(2606, ck.oid, 0, text)


def _generate(tx: Transaction, table: str, plans: list[column_defs.ColumnPlan]) -> None:
    """The generation expressions of a table's new columns, each cooked against the table
    with all of them marked generated (one may not read another)."""
    made = tx.table(table)
    marked = {p.name for p in plans}
    placeholder = Generation("", "", "", ())
    seen = replace(made, columns=tuple(replace(c, generation=placeholder) if c.name in marked else c for c in made.columns))
    for p in plans:
        col = made.column(p.name)
        assert col is not None
        tx.set_generation(table, p.name, generated_sql.cook(p.raw_generated, seen, p.name, col.type, tx.catalog().enums))


def cook_default(raw: Any, ctype: str, colname: str, tx: Transaction) -> ColumnDefault | None:
    """A column's DEFAULT as the lake keeps it (None: no default, as for a bare NULL)."""

    if parse_type(ctype).is_enum:
        return enum_sql.cook_default(tx, raw, parse_type(ctype))
    cooked = default_exprs.cook(raw, parse_type(ctype), colname, lambda name: relation_oid(tx, name))
    return None if cooked is None else cooked.column_default()


def drop_orphan_temp_tables(lake: Lake) -> int:
    """The temporary tables of sessions that ended with a crash of the server (a session
    that ends drops its own): dropped at start-up, as PostgreSQL removes them; how many."""
    cat = lake.catalog_at(lake.frontier)
    temps = [t for t in cat.tables.values() if is_temp_schema(t.schema)]
    seqs = [sq for sq in cat.sequences.values() if is_temp_schema(sq.schema)]
    if temps or seqs or any(is_temp_schema(v.schema) for v in cat.views.values()):
        tx = lake.begin()
        for t in temps:
            tx.drop_table(t.qualified_name, if_exists=True, cascade=True)
        for v in cat.views.values():  # (those over no temporary table)
            if is_temp_schema(v.schema) and v.oid in tx.catalog().views:
                tx.drop_view(v.qualified_name, if_exists=True, cascade=True)
        for sq in seqs:
            if sq.oid in tx.catalog().sequences:  # (not one that went with its table)
                tx.drop_sequence(sq.qualified_name, if_exists=True, cascade=True)
        tx.commit()
    return len(temps)


def create_schema(tx: Transaction, s: ast.CreateSchemaStmt, notices: list[Notice] | None = None) -> str:
    if s.schemaElts:
        raise unsupported("CREATE SCHEMA with schema elements")
    if s.if_not_exists and s.schemaname in tx.catalog().schemas:
        _skipping(notices, "42P06", f'schema "{s.schemaname}" already exists')
    tx.create_schema(s.schemaname, if_not_exists=bool(s.if_not_exists))
    return "CREATE SCHEMA"


def drop(tx: Transaction, s: ast.DropStmt, notices: list[Notice] | None = None, in_block: bool = False) -> str:
    cascade = s.behavior == enums.DropBehavior.DROP_CASCADE
    kind = s.removeType
    if kind == enums.ObjectType.OBJECT_SEQUENCE:
        from walsender_proxy.sql import sequences

        out: list[Notice] = []
        tag = sequences.drop(tx, [[n.sval for n in obj] for obj in s.objects], bool(s.missing_ok), cascade, out)
        if notices is not None:
            notices.extend(out)
        return tag
    if kind == enums.ObjectType.OBJECT_VIEW:
        from walsender_proxy.sql import views

        return views.drop(tx, s, notices if notices is not None else [])
    if kind == enums.ObjectType.OBJECT_FUNCTION:
        from walsender_proxy.sql import sql_functions

        return sql_functions.drop(tx, s, tx.search_path, notices if notices is not None else [])
    if kind == enums.ObjectType.OBJECT_INDEX:
        return index_sql.drop(tx, s, in_block, notices if notices is not None else [])
    if kind in (enums.ObjectType.OBJECT_TYPE, enums.ObjectType.OBJECT_DOMAIN):
        return _drop_type(tx, s, notices)
    if kind not in _DROP_TAGS:  # (before reading the names: a type's is a TypeName)
        raise unsupported(f"DROP {kind.name.removeprefix('OBJECT_').replace('_', ' ')}")
    also = _dropped_tables(tx, s) if kind == enums.ObjectType.OBJECT_TABLE else []
    for obj in s.objects:
        names = [n.sval for n in obj] if isinstance(obj, tuple) else [obj.sval]
        name = ".".join(names)
        if kind == enums.ObjectType.OBJECT_TABLE:
            if _is_sequence(tx, name):
                raise PgError("42809", f'"{names[-1]}" is not a table', hint="Use DROP SEQUENCE to remove a sequence.")
            if _is_view(tx, name):
                raise PgError("42809", f'"{names[-1]}" is not a table', hint="Use DROP VIEW to remove a view.")
            if s.missing_ok and _missing(tx, ast.RangeVar(relname=names[-1], schemaname=names[-2] if len(names) > 1 else None)):
                _skipping(notices, "00000", f'table "{names[-1]}" does not exist')
            dropped = tx.drop_table(name, if_exists=bool(s.missing_ok), cascade=cascade, also=also)
            if notices is not None:
                cascaded(notices, dropped)
        elif kind == enums.ObjectType.OBJECT_SCHEMA:
            from walsender_proxy.sql import domain_sql, sql_functions

            cat = tx.catalog()
            if s.missing_ok and name not in cat.schemas:
                _skipping(notices, "00000", f'schema "{name}" does not exist')
            functions = sql_functions.drop_schema_functions(tx, name, cascade, tx.search_path)
            domains = domain_sql.drop_schema_domains(tx, name) if cascade and name in cat.schemas else []
            tx.drop_schema(name, if_exists=bool(s.missing_ok), cascade=cascade)
            if cascade and notices is not None and name in cat.schemas:
                cascaded(notices, _schema_members(cat, name, functions, domains))
        else:
            if s.missing_ok and name not in tx.catalog().publications:
                _skipping(notices, "00000", f'publication "{name}" does not exist')
            tx.drop_publication(name, if_exists=bool(s.missing_ok))
    return _DROP_TAGS[kind]


def _dropped_tables(tx: Transaction, s: ast.DropStmt) -> list[int]:
    """The OIDs of the tables a DROP TABLE names (their foreign keys to one another do
    not hold the drop)."""
    out = []
    for obj in s.objects:
        try:
            out.append(tx.table(".".join(n.sval for n in obj)).oid)
        except PgError:
            continue
    return out


def _drop_type(tx: Transaction, s: ast.DropStmt, notices: list[Notice] | None) -> str:
    """DROP TYPE / DROP DOMAIN: a domain is dropped (:mod:`walsender_proxy.sql.domain_sql`);
    any other name is PostgreSQL's own type (2BP01: the system requires it), a table's or
    view's row type (2BP01, its hint), or none (42704, or the IF EXISTS notice)."""

    what = "type" if s.removeType == enums.ObjectType.OBJECT_TYPE else "domain"
    dropped = []
    dropped_enums = []
    dropped_composites = []
    for tn in s.objects:
        names = [n.sval for n in tn.names]
        shown = ".".join(names)
        base = TYPE_ALIASES.get(names[-1], names[-1])
        if len(names) == 1 or names[0] == "pg_catalog":
            oid = pgcatalog_defs.TYPE_OIDS.get(base)
            if oid is not None:
                if what == "domain":
                    raise PgError("42809", f'"{shown}" is not a domain')
                raise PgError(
                    "2BP01",
                    f"cannot drop type {pgcatalog_defs.format_type(oid, None)} because it is required by the database system",
                )
        dom = domain_sql.lookup(tx, names)
        if dom is not None:
            if dom not in dropped:
                dropped.append(dom)
            continue
        found = [(x, into) for x, into in ((enum_sql.lookup(tx, names), dropped_enums), (composite_sql.lookup(tx, names), dropped_composites)) if x is not None]
        if found:
            if what == "domain":
                raise PgError("42809", f'"{shown}" is not a domain')
            x, into = found[0]
            if x not in into:
                into.append(x)  # type: ignore[arg-type]
            continue
        cat = tx.catalog()
        schema = names[-2] if len(names) > 1 else None
        for sch in [schema] if schema else tx.search_path or tx.lake.search_path:
            rel = cat.find_table(sch, names[-1]) or cat.find_view(sch, names[-1])
            if rel is not None:
                if what == "domain":
                    raise PgError("42809", f'"{names[-1]}" is not a domain')
                kind = "table" if cat.find_table(sch, names[-1]) is not None else "view"
                raise PgError(
                    "2BP01",
                    f"cannot drop type {shown} because {kind} {shown} requires it",
                    hint=f"You can drop {kind} {shown} instead.",
                )
        if not s.missing_ok:
            raise PgError("42704", f'type "{shown}" does not exist')
        _skipping(notices, "00000", f'type "{shown}" does not exist')
    cascade = s.behavior == enums.DropBehavior.DROP_CASCADE
    if dropped_composites:
        composite_sql.drop(tx, dropped_composites, cascade, notices)
    if dropped_enums:
        enum_sql.drop(tx, dropped_enums, cascade, notices)
    if dropped:
        domain_sql.drop(tx, dropped, cascade, notices)
    return "DROP TYPE" if what == "type" else "DROP DOMAIN"


def _schema_members(
    cat: Any, schema: str, functions: Sequence[tuple[int, str]] = (), domains: Sequence[tuple[int, str]] = ()
) -> list[str]:
    """What DROP SCHEMA … CASCADE drops, as its NOTICE names them (a sequence owned by a
    table of the schema goes with the table, unnamed), in PostgreSQL's order (creation;
    ``domains``: each domain followed by what outside the schema depended on it)."""
    tables = {t.oid for t in cat.tables.values() if t.schema == schema}
    found = [(t.oid, f"table {t.qualified_name}") for t in cat.tables.values() if t.schema == schema]
    found += [
        (sq.oid, f"sequence {sq.qualified_name}")
        for sq in cat.sequences.values()
        if sq.schema == schema and (sq.owned_by is None or sq.owned_by[0] not in tables)
    ]
    found += [(v.oid, f"view {v.qualified_name}") for v in cat.views.values() if v.schema == schema]
    inside = tables | {v.oid for v in cat.views.values() if v.schema == schema}
    found += [(v.oid, f"view {v.qualified_name}") for v in cat.views.values() if v.schema != schema and v.oid not in inside and any(o in inside for o in _reads(cat, v))]
    # (a foreign key of a table outside, right after the table it references)
    keys = [
        ((t.oid, fk.oid), f"constraint {fk.name} on table {c.name}")
        for t in cat.tables.values()
        if t.schema == schema
        for c, fk in cat.referencing(t.oid)
        if c.oid not in tables
    ]
    ordered = [((oid, 0), what) for oid, what in [*found, *functions]] + keys
    ordered += [((oid, i), what) for i, (oid, what) in enumerate(domains)]
    return [what for _, what in sorted(ordered)]


def _reads(cat: Any, v: Any) -> set[int]:
    """What a view reads, through the views it reads."""
    out: set[int] = set()
    todo = list(v.depends)
    while todo:
        o = todo.pop()
        if o not in out:
            out.add(o)
            if o in cat.views:
                todo.extend(cat.views[o].depends)
    return out


_DROP_TAGS = {
    enums.ObjectType.OBJECT_TABLE: "DROP TABLE",
    enums.ObjectType.OBJECT_SCHEMA: "DROP SCHEMA",
    enums.ObjectType.OBJECT_PUBLICATION: "DROP PUBLICATION",
}


def _alter_tree(
    tx: Transaction, s: ast.AlterTableStmt, target: Any, notices: list[Notice] | None, fill: Callable[[Transaction, str, str], int] | None
) -> str:
    """ADD / DROP COLUMN of a partitioned table, carried to each of its partitions as
    PostgreSQL recurses (ATExecAddColumn / ATExecDropColumn): not of a partition itself,
    not of a key column; the rows are the partitions', so only theirs are filled."""

    cat = tx.catalog()
    tree = [target, *cat.inheritors(target, depth_first=True)]
    for cmd in s.cmds:
        if cmd.subtype == enums.AlterTableType.AT_AddColumn:
            if target.partition_bound is not None:
                raise PgError("42809", "cannot add column to a partition")
            d: ast.ColumnDef = cmd.def_
            p = column_defs.plan(d, s.relation.relname, _typer(tx), unsupported, _constraint_name)
            if p.unique or p.foreign or p.primary or p.owns or p.raw_generated is not None:
                raise unsupported("ADD COLUMN with UNIQUE, a key, REFERENCES, SERIAL, identity or GENERATED to a partitioned table")
        elif cmd.subtype == enums.AlterTableType.AT_DropColumn:
            if target.partition_bound is not None and target.column(cmd.name) is not None:
                raise PgError("42P16", f'cannot drop inherited column "{cmd.name}"')
            for t in tree:
                if t.partition_key is not None and cmd.name in {c.name for c in partitions.key_columns(t)} | {
                    t.column_by_attnum(e.attnum).name for e in t.partition_key.exprs
                }:
                    raise PgError("42P16", f'cannot drop column "{cmd.name}" because it is part of the partition key of relation "{t.name}"')

    def fill_rows(tx2: Transaction, table: str, column: str) -> int:  # (a partitioned table has none)
        return 0 if tx2.table(table).partition_key is not None or fill is None else fill(tx2, table, column)

    before = {c.name for c in target.checks}
    for t in tree:
        one = ast.AlterTableStmt(
            relation=ast.RangeVar(relname=t.name, schemaname=t.schema, inh=True, relpersistence="p"),
            cmds=s.cmds, objtype=s.objtype, missing_ok=s.missing_ok,
        )
        alter_table(tx, one, notices if t is target else None, fill_rows, in_tree=True)
        if t is target:  # (the partitions' CHECKs take the names chosen for the parent's)
            named = iter([c.name for c in tx.table(target.qualified_name).checks if c.name not in before])
            for cmd in s.cmds:
                if cmd.subtype == enums.AlterTableType.AT_AddColumn:
                    for c in cmd.def_.constraints or ():
                        if c.contype == enums.ConstrType.CONSTR_CHECK and not c.conname:
                            c.conname = next(named, None)
    return "ALTER TABLE"


#: ALTER TABLE actions on a partitioned table or a partition that PostgreSQL does not carry
#: to the other tables of the tree (the rest would have to be, or attach/detach: refused).
_PARTITION_ALTERS = frozenset({enums.AlterTableType.AT_ChangeOwner, enums.AlterTableType.AT_ReplicaIdentity})
_PARTITION_CMDS = frozenset(
    {enums.AlterTableType.AT_AttachPartition, enums.AlterTableType.AT_DetachPartition, enums.AlterTableType.AT_DetachPartitionFinalize}
)


def alter_table(
    tx: Transaction,
    s: ast.AlterTableStmt,
    notices: list[Notice] | None = None,
    fill: Callable[[Transaction, str, str], int] | None = None,
    *,
    in_tree: bool = False,
    retype: Callable[..., None] | None = None,
) -> str:
    """``fill(tx, table, column)``: gives the rows of ``table`` the default of the column
    just added (see :func:`walsender_proxy.sql.defaults.fill_added_column`). ``in_tree``:
    one table of a partition tree an ADD or DROP COLUMN of its root is carried to.
    ``retype(tx, table, cmds, typer)``: runs ALTER COLUMN … TYPE commands (see
    :mod:`walsender_proxy.sql.alter_type`)."""
    if s.objtype != enums.ObjectType.OBJECT_TABLE:
        raise unsupported(f"ALTER {s.objtype.name.removeprefix('OBJECT_')}")
    table = qualified(s.relation)
    if s.missing_ok and _missing(tx, s.relation):
        _skipping(notices, "00000", f'relation "{s.relation.relname}" does not exist')
        return "ALTER TABLE"
    if _is_view(tx, table):
        cmd = s.cmds[0]
        action = {
            enums.AlterTableType.AT_AddColumn: "ADD COLUMN",
            enums.AlterTableType.AT_DropColumn: "DROP COLUMN",
            enums.AlterTableType.AT_ReplicaIdentity: "REPLICA IDENTITY",
        }.get(cmd.subtype)
        if action is None:
            raise unsupported(f"ALTER TABLE {cmd.subtype.name.removeprefix('AT_')} of a view")
        raise PgError(
            "42809",
            f'ALTER action {action} cannot be performed on relation "{s.relation.relname}"',
            detail="This operation is not supported for views.",
        )
    target = tx.table(table)
    partition_cmds = [c for c in s.cmds if c.subtype in _PARTITION_CMDS]
    if partition_cmds:
        from walsender_proxy.sql import partition_sql

        if len(s.cmds) > 1:
            raise unsupported("ATTACH or DETACH PARTITION with other actions")
        return partition_sql.attach_or_detach(tx, table, partition_cmds[0])
    if (target.partition_key is not None or target.partition_bound is not None) and not in_tree:
        columns = [c for c in s.cmds if c.subtype in (enums.AlterTableType.AT_AddColumn, enums.AlterTableType.AT_DropColumn)]
        for cmd in s.cmds:
            if cmd.subtype not in _PARTITION_ALTERS and cmd not in columns:
                what = "a partitioned table" if target.partition_key is not None else "a partition"
                raise unsupported(f"ALTER TABLE {cmd.subtype.name.removeprefix('AT_')} of {what}")
        if columns:
            return _alter_tree(tx, s, target, notices, fill)
    retyped = [c for c in s.cmds if c.subtype == enums.AlterTableType.AT_AlterColumnType]
    if retyped:  # (PostgreSQL rewrites once, every USING reading the rows as they were)
        if len(retyped) != len(s.cmds):
            raise unsupported("ALTER COLUMN … TYPE beside other actions in one ALTER TABLE")
        if retype is None:
            raise unsupported("ALTER COLUMN … TYPE here")
        retype(tx, table, retyped, _typer(tx))
        return "ALTER TABLE"
    for cmd in s.cmds:
        t = cmd.subtype
        if t == enums.AlterTableType.AT_AddColumn:
            d: ast.ColumnDef = cmd.def_
            if cmd.missing_ok and tx.table(table).column(d.colname) is not None:
                _skipping(notices, "42701", f'column "{d.colname}" of relation "{s.relation.relname}" already exists')
                continue
            p = column_defs.plan(d, s.relation.relname, _typer(tx), unsupported, _constraint_name)
            if p.primary:
                raise unsupported("PRIMARY KEY in ADD COLUMN")
            uniques = [index_sql.unique_constraint(c, d.colname) for c in p.unique]
            tbl = tx.table(table)
            if tbl.column(d.colname) is not None:  # (before the default: PostgreSQL's order)
                raise PgError("42701", f'column "{d.colname}" of relation "{s.relation.relname}" already exists')
            owned = column_defs.make_sequences(tx, tbl.schema, tbl.name, [p])
            identity = ""
            if owned:
                default, identity = column_defs.with_identity(p, column_defs.column_default(p, owned[p.name]))
            else:
                default = cook_default(p.raw_default, p.type_text, d.colname, tx) if p.raw_default is not None else None
            tx.add_column(table, d.colname, p.type_text, not_null=p.not_null, default=default, identity=identity)
            column_defs.own_sequences(tx, tbl.schema, tbl.name, owned)
            if p.raw_generated is not None:
                try:
                    _generate(tx, table, [p])
                except SqlError as e:  # (ALTER TABLE cooks it without the statement's text: no position)
                    raise PgError(e.sqlstate, e.message, detail=e.detail, hint=e.hint) from None
            if default is not None or p.raw_generated is not None or _constrained_domain(tx, p.type_text):
                if fill is None:
                    raise unsupported("ADD COLUMN … DEFAULT here")
                fill(tx, table, d.colname)
            for u in uniques:  # (after the rows have the column's values, as PostgreSQL builds it)
                index_sql.add_unique(tx, table, u)
            if p.checks:
                tx.add_checks(table, [check_sql.cook(c, tx.table(table), user_enums=tx.catalog().enums) for c in p.checks])
            for c in p.foreign:
                tx.add_foreign_key(table, foreign_key_sql.spec(c, d.colname))
        elif t == enums.AlterTableType.AT_ColumnDefault:
            tbl = tx.table(table)
            col = tbl.column(cmd.name)
            if col is None:
                raise PgError("42703", f'column "{cmd.name}" of relation "{tbl.name}" does not exist')
            if col.identity:
                raise PgError(
                    "42601",
                    f'column "{col.name}" of relation "{tbl.name}" is an identity column',
                    hint="Use ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY instead." if cmd.def_ is None else None,
                )
            if col.generation is not None:
                raise PgError(
                    "42601",
                    f'column "{col.name}" of relation "{tbl.name}" is a generated column',
                    hint="Use ALTER TABLE ... ALTER COLUMN ... DROP EXPRESSION instead." if cmd.def_ is None else None,
                )
            default = cook_default(cmd.def_, col.type.type_text(), col.name, tx) if cmd.def_ is not None else None
            tx.set_column_default(table, cmd.name, default)
        elif t == enums.AlterTableType.AT_DropColumn:
            if cmd.missing_ok and tx.table(table).column(cmd.name) is None:
                _skipping(notices, "00000", f'column "{cmd.name}" of relation "{s.relation.relname}" does not exist')
            elif [c.name for c in tx.table(table).columns] == [cmd.name]:
                raise unsupported("a table without columns (dropping its last column)")
            tbl = tx.table(table)
            dropped = tbl.column(cmd.name)
            readers = [
                c for c in tbl.columns
                if dropped is not None and c.generation is not None and c is not dropped and dropped.attnum in c.generation.attnums
            ]  # fmt: skip
            if readers and cmd.behavior == enums.DropBehavior.DROP_CASCADE:  # (the generated columns that read it go first)
                if len(readers) == len(tbl.columns) - 1:
                    raise unsupported("a table without columns (dropping its last column)")
                for c in readers:
                    tx.drop_column(table, c.name)
                if notices is not None:
                    cascaded(notices, [f"column {c.name} of table {tbl.name}" for c in readers])
            tx.drop_column(table, cmd.name, if_exists=bool(cmd.missing_ok))
        elif t == enums.AlterTableType.AT_AddIdentity:
            _add_identity(tx, table, cmd.name, cmd.def_)
        elif t == enums.AlterTableType.AT_DropIdentity:
            tbl = tx.table(table)
            col = tbl.column(cmd.name)
            if col is None:
                raise PgError("42703", f'column "{cmd.name}" of relation "{tbl.name}" does not exist')
            if not col.identity:
                if cmd.missing_ok:
                    _skipping(notices, "00000", f'column "{cmd.name}" of relation "{tbl.name}" is not an identity column')
                    continue
                raise PgError("55000", f'column "{cmd.name}" of relation "{tbl.name}" is not an identity column')
            tx.set_identity(table, cmd.name, "", None)
        elif t == enums.AlterTableType.AT_DropExpression:
            tbl = tx.table(table)
            col = tbl.column(cmd.name)
            if col is None:
                raise PgError("42703", f'column "{cmd.name}" of relation "{tbl.name}" does not exist')
            if col.generation is None:
                if cmd.missing_ok:
                    _skipping(notices, "00000", f'column "{cmd.name}" of relation "{tbl.name}" is not a stored generated column')
                    continue
                raise PgError("55000", f'column "{cmd.name}" of relation "{tbl.name}" is not a stored generated column')
            tx.set_generation(table, cmd.name, None)
        elif t in (enums.AlterTableType.AT_SetRelOptions, enums.AlterTableType.AT_ResetRelOptions):
            current = tx.table(table).reloptions
            options = (
                reloptions.set_options(current, cmd.def_)
                if t == enums.AlterTableType.AT_SetRelOptions
                else reloptions.reset_options(current, cmd.def_)
            )
            tx.set_reloptions(table, options)
        elif t in (enums.AlterTableType.AT_SetNotNull, enums.AlterTableType.AT_DropNotNull):
            tx.set_not_null(table, cmd.name, t == enums.AlterTableType.AT_SetNotNull)
        elif t == enums.AlterTableType.AT_SetStorage:
            _set_storage(tx, table, cmd.name, cmd.def_.sval)
        elif t == enums.AlterTableType.AT_AddConstraint and cmd.def_.contype == enums.ConstrType.CONSTR_PRIMARY:
            _add_primary_key(tx, table, cmd.def_)
        elif t == enums.AlterTableType.AT_AddConstraint and cmd.def_.contype == enums.ConstrType.CONSTR_UNIQUE:
            index_sql.add_unique(tx, table, index_sql.unique_constraint(cmd.def_))
        elif t == enums.AlterTableType.AT_AddConstraint and cmd.def_.contype == enums.ConstrType.CONSTR_FOREIGN:
            tx.add_foreign_key(table, foreign_key_sql.spec(cmd.def_))
        elif t == enums.AlterTableType.AT_AddConstraint and check_sql.is_check(cmd.def_):
            tx.add_checks(table, [check_sql.cook(cmd.def_, tx.table(table), user_enums=tx.catalog().enums)])
        elif t == enums.AlterTableType.AT_ValidateConstraint:
            tx.validate_constraint(table, cmd.name)
        elif t == enums.AlterTableType.AT_DropConstraint:
            tbl = tx.table(table)
            known = tbl.index(cmd.name) is not None or any(fk.name == cmd.name for fk in tbl.foreign_keys)
            known = known or any(c.name == cmd.name for c in tbl.checks)
            if cmd.missing_ok and not known and not (tbl.primary_key and tbl.pkey_name == cmd.name):
                _skipping(notices, "00000", f'constraint "{cmd.name}" of relation "{tbl.name}" does not exist')
                continue
            dropped = tx.drop_constraint(table, cmd.name, cascade=cmd.behavior == enums.DropBehavior.DROP_CASCADE)
            if notices is not None:
                cascaded(notices, dropped)
        elif t == enums.AlterTableType.AT_ReplicaIdentity:
            ri: ast.ReplicaIdentityStmt = cmd.def_
            if ri.identity_type == "i":
                tbl = tx.table(table)
                tx.set_replica_identity(table, "index", index_sql.identity_columns(tx, tbl, ri.name), index_name=ri.name)
            else:
                tx.set_replica_identity(
                    table, {"d": "default", "f": "full", "n": "nothing"}[ri.identity_type]
                )
        elif t in _ROW_SECURITY:
            raise unsupported(f"row-level security (ALTER TABLE … {_ROW_SECURITY[t]})")
        else:
            raise unsupported(f"ALTER TABLE {t.name.removeprefix('AT_')}")
    return "ALTER TABLE"


_ROW_SECURITY = {
    enums.AlterTableType.AT_EnableRowSecurity: "ENABLE ROW LEVEL SECURITY",
    enums.AlterTableType.AT_DisableRowSecurity: "DISABLE ROW LEVEL SECURITY",
    enums.AlterTableType.AT_ForceRowSecurity: "FORCE ROW LEVEL SECURITY",
    enums.AlterTableType.AT_NoForceRowSecurity: "NO FORCE ROW LEVEL SECURITY",
}


_STORAGE = {"plain": "p", "external": "e", "extended": "x", "main": "m"}


def _set_storage(tx: Transaction, table: str, column: str, mode: str) -> None:
    r"""ALTER COLUMN … SET STORAGE as PostgreSQL 15 checks it (a type that cannot be TOASTed
    takes PLAIN only); the lake keeps the setting for pg_attribute and psql's ``\d+``."""

    letter = _STORAGE.get(mode.lower())
    if letter is None:
        raise PgError("22023", f'invalid storage type "{mode}"')
    tbl = tx.table(table)
    col = tbl.column(column)
    if col is None:
        if column in ("tableoid", "cmax", "xmax", "cmin", "xmin", "ctid"):
            raise PgError("0A000", f'cannot alter system column "{column}"')
        raise PgError("42703", f'column "{column}" of relation "{tbl.name}" does not exist')
    if letter != "p" and pgcatalog.type_storage(col.type.oid) == "p":
        raise PgError("0A000", f"column data type {pgcatalog_defs.format_type(col.type.oid, None)} can only have storage PLAIN")
    tx.set_column_storage(table, column, letter)


def rename(tx: Transaction, s: ast.RenameStmt, notices: list[Notice] | None = None) -> str:
    """``ALTER TABLE … RENAME [COLUMN] a TO b`` and ``ALTER TABLE … RENAME TO b``; other
    renames are not supported (yet)."""

    if s.renameType == enums.ObjectType.OBJECT_TYPE and enum_sql.lookup(tx, enum_sql.object_names(s.object)) is not None:
        return enum_sql.rename(tx, s)
    if s.renameType == enums.ObjectType.OBJECT_TYPE and (ct := composite_sql.lookup(tx, enum_sql.object_names(s.object))) is not None:
        tx.rename_composite(ct.oid, s.newname)
        return "ALTER TYPE"
    if s.renameType == enums.ObjectType.OBJECT_ATTRIBUTE:
        raise unsupported("ALTER TYPE … RENAME ATTRIBUTE")
    if s.renameType in (enums.ObjectType.OBJECT_DOMAIN, enums.ObjectType.OBJECT_DOMCONSTRAINT, enums.ObjectType.OBJECT_TYPE):
        return domain_sql.rename(tx, s)
    viewed = views.rename(tx, s, notices if notices is not None else [])
    if viewed is not None:
        return viewed
    if s.renameType == enums.ObjectType.OBJECT_INDEX:
        return index_sql.rename(tx, s, notices if notices is not None else [])
    if s.renameType == enums.ObjectType.OBJECT_TABCONSTRAINT:
        if s.missing_ok and _missing(tx, s.relation):
            _skipping(notices, "00000", f'relation "{s.relation.relname}" does not exist')
        else:
            tx.rename_constraint(qualified(s.relation), s.subname, s.newname)
        return "ALTER TABLE"
    table = s.renameType == enums.ObjectType.OBJECT_TABLE
    column = s.renameType == enums.ObjectType.OBJECT_COLUMN and s.relationType == enums.ObjectType.OBJECT_TABLE
    if s.renameType == enums.ObjectType.OBJECT_SEQUENCE or (table and _is_sequence(tx, qualified(s.relation))):
        # (ALTER TABLE … RENAME TO works on a sequence too, as in PostgreSQL)
        if s.missing_ok and not _is_sequence(tx, qualified(s.relation)):
            _skipping(notices, "00000", f'relation "{s.relation.relname}" does not exist')
            return "ALTER SEQUENCE" if not table else "ALTER TABLE"
        tx.rename_sequence(qualified(s.relation), s.newname)
        return "ALTER TABLE" if table else "ALTER SEQUENCE"
    if not (table or column):
        raise unsupported(f"RENAME of {s.renameType.name.removeprefix('OBJECT_').lower()}")
    if s.missing_ok and _missing(tx, s.relation):
        _skipping(notices, "00000", f'relation "{s.relation.relname}" does not exist')
        return "ALTER TABLE"
    if table:
        tx.rename_table(qualified(s.relation), s.newname)
    else:
        t = tx.table(qualified(s.relation))
        if t.partition_bound is not None and t.column(s.subname) is not None:  # (renameatt's check)
            raise PgError("42P16", f'cannot rename inherited column "{s.subname}"')
        if t.partition_key is not None:
            raise unsupported("RENAME COLUMN of a partitioned table")
        tx.rename_column(qualified(s.relation), s.subname, s.newname)
    return "ALTER TABLE"


def set_schema(tx: Transaction, s: ast.AlterObjectSchemaStmt, notices: list[Notice] | None = None) -> str:
    """``ALTER TABLE … SET SCHEMA s``."""
    if s.objectType != enums.ObjectType.OBJECT_TABLE:
        raise unsupported(f"ALTER {s.objectType.name.removeprefix('OBJECT_').replace('_', ' ')} … SET SCHEMA")
    if s.missing_ok and _missing(tx, s.relation):
        _skipping(notices, "00000", f'relation "{s.relation.relname}" does not exist')
        return "ALTER TABLE"
    tx.set_table_schema(qualified(s.relation), s.newschema)
    return "ALTER TABLE"


def _pub_options(options: Any) -> tuple[str | None, bool | None]:
    publish = None
    via_root = None
    seen = set()
    for o in options or ():
        if o.defname in seen:
            raise PgError("42601", "conflicting or redundant options")
        seen.add(o.defname)
        val = (
            o.arg.sval
            if isinstance(o.arg, ast.String)
            else expr_text(o.arg)
            if o.arg is not None
            else "true"
        )
        if o.defname == "publish":
            publish = val
        elif o.defname == "publish_via_partition_root":
            v = str(val).lower()
            if v not in ("true", "false", "on", "off", "1", "0"):
                raise PgError("22023", "publish_via_partition_root requires a Boolean value")
            via_root = v in ("true", "on", "1")
        else:
            raise PgError("42601", f'unrecognized publication parameter: "{o.defname}"')
    return publish, via_root


def _pub_objects(tx: Transaction, objs: Any, *, cook: bool = True) -> tuple[list[PubTable], list[str]]:
    """The tables (their row filters cooked, once every table named exists: PostgreSQL
    opens them all first) and schemas of a publication's object list."""
    tables: list[PubTable] = []
    wheres: list[Any] = []
    schemas: list[str] = []
    last_kind = None
    for o in objs or ():
        kind = o.pubobjtype
        if kind == enums.PublicationObjSpecType.PUBLICATIONOBJ_CONTINUATION:
            kind = last_kind
        last_kind = kind
        if kind == enums.PublicationObjSpecType.PUBLICATIONOBJ_TABLE or (
            o.pubtable is not None and kind is None
        ):
            pt = o.pubtable
            cols = tuple(c.sval for c in pt.columns) if pt.columns else None
            tables.append(PubTable(qualified(pt.relation), cols))
            wheres.append(pt.whereClause)
        elif kind == enums.PublicationObjSpecType.PUBLICATIONOBJ_TABLES_IN_SCHEMA:
            schemas.append(o.name)
        elif kind == enums.PublicationObjSpecType.PUBLICATIONOBJ_TABLES_IN_CUR_SCHEMA:
            schemas.append(_current_schema(tx))
        else:
            raise unsupported("this publication object")
    if any(w is not None for w in wheres):
        try:
            found = [tx.table(t.name) for t in tables]
        except PgError:  # (the lake raises its error for the missing one)
            found = []
        if found:
            tables = [
                replace(t, row_filter=rowfilter_sql.cook(w, f, tx.catalog().enums) if cook else RowFilterExpr("", "", ()))
                if w is not None else t
                for t, w, f in zip(tables, wheres, found, strict=True)
            ]  # fmt: skip
    return tables, schemas


def _current_schema(tx: Transaction) -> str:
    """``TABLES IN SCHEMA CURRENT_SCHEMA``: the first schema of search_path that exists."""
    try:
        return tx.creation_schema()
    except PgError as e:
        if e.sqlstate == "3F000":
            raise PgError("3F000", "no schema has been selected for CURRENT_SCHEMA") from None
        raise


@dataclass(frozen=True, slots=True)
class Actor:
    """Who runs a statement, as PostgreSQL's privilege checks see them: the role, whether it
    is a superuser, and the database's owner (the only role holding CREATE on it: the proxy
    keeps no grants, so PostgreSQL's defaults hold)."""

    user: str
    superuser: bool
    database: str
    database_owner: str
    #: The roles whose privileges it has, by name (itself among them): their
    #: publications are its to alter, the database's owner's CREATE its own.
    roles: frozenset[str] = frozenset()
    #: It holds CREATE on the database (its owner's by default, or granted).
    creates_in_database: bool = False

    def uses(self, role: str) -> bool:
        return role == self.user or role in self.roles


def _schema_objects(objs: Any) -> bool:
    kinds = (
        enums.PublicationObjSpecType.PUBLICATIONOBJ_TABLES_IN_SCHEMA,
        enums.PublicationObjSpecType.PUBLICATIONOBJ_TABLES_IN_CUR_SCHEMA,
    )
    return any(o.pubobjtype in kinds for o in objs or ())


def check_publication_access(tx: Transaction, s: Any, who: Actor) -> None:
    """PostgreSQL 15's checks of CREATE, ALTER and DROP PUBLICATION (42501): CREATE on the
    database to create one, a superuser for FOR ALL TABLES and TABLES IN SCHEMA, the owner
    to alter or drop one."""
    if who.superuser:
        return
    if isinstance(s, ast.CreatePublicationStmt):
        if not who.creates_in_database:
            raise PgError("42501", f"permission denied for database {who.database}")
        if s.for_all_tables:
            raise PgError("42501", "must be superuser to create FOR ALL TABLES publication")
        if _schema_objects(s.pubobjects):
            raise PgError("42501", "must be superuser to create FOR TABLES IN SCHEMA publication")
        return
    names = [s.pubname] if isinstance(s, ast.AlterPublicationStmt) else [n.sval for n in s.objects]  # (or DROP)
    pubs = tx.catalog().publications
    for name in names:
        p = pubs.get(name)
        if p is not None and not who.uses(p.owner):
            raise PgError("42501", f"must be owner of publication {name}")
    if (
        isinstance(s, ast.AlterPublicationStmt)
        and s.action != enums.AlterPublicationAction.AP_DropObjects
        and _schema_objects(s.pubobjects)
    ):
        raise PgError("42501", "must be superuser to add or set schemas")


def create_publication(tx: Transaction, s: ast.CreatePublicationStmt, owner: str = "postgres") -> str:

    publish, via_root = _pub_options(s.options)
    sql_functions.no_user_functions_in_row_filters(tx, s.pubobjects)
    tables, schemas = _pub_objects(tx, s.pubobjects)
    tx.create_publication(
        s.pubname,
        all_tables=bool(s.for_all_tables),
        tables=tables,
        schemas=schemas,
        publish=publish if publish is not None else "insert, update, delete, truncate",
        publish_via_partition_root=bool(via_root),
        owner=owner,
    )
    return "CREATE PUBLICATION"


def alter_publication(tx: Transaction, s: ast.AlterPublicationStmt) -> str:

    publish, via_root = _pub_options(s.options)
    action = s.action
    dropping = action == enums.AlterPublicationAction.AP_DropObjects
    if not dropping:
        sql_functions.no_user_functions_in_row_filters(tx, s.pubobjects)
    # (a WHERE on a table being dropped is only PostgreSQL's 42601, never analysed)
    tables, schemas = _pub_objects(tx, s.pubobjects, cook=not dropping)
    kw: dict[str, Any] = {"publish": publish, "publish_via_partition_root": via_root}
    if s.pubobjects:
        if action == enums.AlterPublicationAction.AP_AddObjects:
            kw.update(add_tables=tables, add_schemas=schemas)
        elif action == enums.AlterPublicationAction.AP_DropObjects:
            kw.update(drop_tables=tables, drop_schemas=schemas)
        else:
            kw.update(set_tables=tables, set_schemas=schemas)
    tx.alter_publication(s.pubname, **kw)
    return "ALTER PUBLICATION"
