"""The privilege checks a statement needs before it runs, as PostgreSQL 15 makes them.

Reads are checked where the rewriter resolves each relation (:func:`check_read`: SELECT on
a table or view, a view's own relations as its owner); this module checks the rest from
the statement's tree: the target of INSERT, UPDATE, DELETE, TRUNCATE and COPY, ownership
for ALTER, DROP, CREATE INDEX, COMMENT and RENAME, CREATE on the schema an object is
created in, CREATE on the database for a schema. A name that resolves to nothing is left
to the statement, which reports it as PostgreSQL does (42P01, or IF EXISTS's NOTICE).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pglast import ast, enums

from decoding.catalog import Catalog, is_temp_schema
from decoding.errors import PgError
from walsender_proxy.sql import privileges
from walsender_proxy.sql.ddl_names import type_text
from walsender_proxy.sql.pgcatalog_defs import TYPE_OIDS, format_type
from walsender_proxy.sql.privileges import Who
from walsender_proxy.sql.sql_errors import SqlError

OT = enums.ObjectType


class SchemaDenied(PgError):
    """No USAGE on the schema a name reaches into: raised as the name is looked up, so the
    caller that holds the name places it (parse analysis reports it at the name)."""


@dataclass(frozen=True, slots=True)
class Rel:
    """A relation a statement names: its OID, kind (``table``, ``view``, ``sequence``,
    ``index`` — an index is its table's), schema and name."""

    oid: int
    kind: str
    schema: str
    name: str


def find(cat: Catalog, schema: str | None, name: str, path: Sequence[str]) -> Rel | None:
    for s in [schema] if schema is not None else path:
        t = cat.find_table(s, name)
        if t is not None:
            return Rel(t.oid, "table", s, name)
        v = cat.find_view(s, name)
        if v is not None:
            return Rel(v.oid, "view", s, name)
        sq = cat.find_sequence(s, name)
        if sq is not None:
            return Rel(sq.oid, "sequence", s, name)
        ix = cat.find_index(s, name)
        if ix is not None:
            return Rel(ix[0].oid, "index", s, name)
    return None


def schema_usage(cat: Catalog, who: Who, schema: str) -> None:
    """A qualified name reaches into its schema only with USAGE on it (42501)."""
    oid = cat.schemas.get(schema)
    if oid is not None and not is_temp_schema(schema) and "U" not in privileges.held(cat, who, oid, "schema"):
        raise SchemaDenied("42501", f"permission denied for schema {schema}")


def visible_schemas(cat: Catalog, who: Who, path: Sequence[str]) -> list[str]:
    """The search path as PostgreSQL searches it: schemas the role may not use are
    skipped (recomputeNamespacePath)."""
    if who.superuser:
        return list(path)
    out = []
    for s in path:
        oid = cat.schemas.get(s)
        if oid is None or is_temp_schema(s) or "U" in privileges.held(cat, who, oid, "schema"):
            out.append(s)
    return out


def _rel(cat: Catalog, who: Who, rv: ast.RangeVar, path: Sequence[str]) -> Rel | None:
    if rv.schemaname is not None:
        try:
            schema_usage(cat, who, rv.schemaname)
        except SchemaDenied as e:  # (placed at the name, as parse analysis places it)
            loc = getattr(rv, "location", None)
            raise SqlError(e.sqlstate, e.message, loc + 1 if isinstance(loc, int) and loc >= 0 else None) from None
    return find(cat, rv.schemaname, rv.relname, path)


def _names(parts: Sequence[Any]) -> tuple[str | None, str]:
    names = [p.sval for p in parts]
    return (names[-2] if len(names) > 1 else None), names[-1]


def check_read(cat: Catalog, who: Who, rel: Rel) -> frozenset[str] | None:
    """SELECT on a relation the statement reads (a view's own relations are checked as
    the view's owner: the caller passes that role): None when held on the relation, the
    columns it is held on when only on some of a table's (the statement may read those
    alone), else 42501."""
    if "r" in privileges.held(cat, who, rel.oid, rel.kind):
        return None
    table = cat.tables.get(rel.oid) if rel.kind == "table" else None
    readable = privileges.columns_with(cat, who, table, "r") if table is not None else frozenset()
    if not readable:
        raise PgError("42501", f"permission denied for {rel.kind} {rel.name}")
    return readable


def _owner(cat: Catalog, who: Who, rel: Rel | None) -> None:
    if rel is not None:
        privileges.require_owner(cat, who, rel.oid, rel.kind, rel.name)


def _reads_target(cat: Catalog, rel: Rel, rv: ast.RangeVar, *nodes: Any) -> bool:
    """A column of the statement's target is read (PostgreSQL then wants SELECT on it as
    well)."""
    return bool(_target_reads(cat, rel, rv, *nodes))


def _target_columns(cat: Catalog, rel: Rel) -> list[str]:
    table = cat.tables.get(rel.oid)
    if table is not None:
        return [c.name for c in table.columns]
    view = cat.views.get(rel.oid)
    return [c.name for c in view.columns] if view is not None else []


def _target_reads(cat: Catalog, rel: Rel, rv: ast.RangeVar, *nodes: Any, also: str | None = None) -> set[str]:
    """The columns of the statement's target its expressions read: a reference qualified
    by the target's name or alias (or ``also``: ON CONFLICT's ``excluded``), an
    unqualified one naming a column it has, ``*`` or the target's whole row (every
    column)."""
    from pglast.visitors import Visitor

    names = {rv.alias.aliasname if rv.alias is not None else rv.relname, *([also] if also else [])}
    columns = _target_columns(cat, rel)

    class _Find(Visitor):
        def __init__(self) -> None:
            self.found: set[str] = set()

        def visit_ColumnRef(self, ancestors: Any, node: Any) -> None:
            fields = [f.sval if isinstance(f, ast.String) else "*" for f in node.fields]
            if fields == ["*"] or (len(fields) == 1 and fields[0] in names and fields[0] not in columns):
                self.found |= set(columns)
            elif len(fields) == 1:
                self.found |= {fields[0]} & set(columns)
            elif fields[-2] in names:
                self.found |= set(columns) if fields[-1] == "*" else {fields[-1]}

    f = _Find()
    for n in nodes:
        if n is not None:
            f(n)
    return f.found


def _require(cat: Catalog, who: Who, rel: Rel, letter: str, columns: Sequence[str] | set[str] | None = None) -> None:
    """One privilege on a statement's target: on a table, held on the table or on each
    of ``columns`` (None: the table's alone; empty: on one column at least)."""
    table = cat.tables.get(rel.oid) if rel.kind == "table" else None
    if table is None or columns is None:
        privileges.require(cat, who, rel.oid, rel.kind, rel.name, letter)
    else:
        privileges.require_columns(cat, who, table, letter, columns)


def _inserted(node: ast.InsertStmt, columns: Sequence[str]) -> list[str]:
    """The columns an INSERT gives values (its column list, else as many leading columns
    as its rows have: every column where that is not known here)."""
    if node.cols:
        return [c.name for c in node.cols]
    sel = node.selectStmt
    if sel is None:  # (DEFAULT VALUES)
        return []
    if isinstance(sel, ast.SelectStmt) and sel.valuesLists:
        return list(columns[: len(sel.valuesLists[0])])
    if isinstance(sel, ast.SelectStmt) and sel.targetList and not any(
        isinstance(t.val, ast.ColumnRef) and isinstance(t.val.fields[-1], ast.A_Star) for t in sel.targetList
    ):
        return list(columns[: len(sel.targetList)])
    return list(columns)


def creation_schema(cat: Catalog, rv_schema: str | None, path: Sequence[str]) -> str | None:
    """The schema a new object goes to: the named one, else the first existing one on
    the search path (the temporary schema never: it is the session's own)."""
    if rv_schema is not None:
        return rv_schema
    return next((s for s in path if s in cat.schemas and not s.startswith("pg_temp")), None)


def _create_in(
    cat: Catalog, who: Who, rv: ast.RangeVar | None, path: Sequence[str], explicit_schema: str | None = None,
    database: str = "postgres",
) -> None:
    if rv is not None and rv.relpersistence == "t":  # (the database's TEMP privilege)
        if "T" not in privileges.held(cat, who, privileges.DATABASE_OID, "database"):
            loc = getattr(rv, "location", None)
            position = loc + 1 if isinstance(loc, int) and loc >= 0 else None
            raise SqlError("42501", f'permission denied to create temporary tables in database "{database}"', position)
        return
    schema = explicit_schema or creation_schema(cat, rv.schemaname if rv is not None else None, path)
    if schema is None or schema.startswith("pg_temp"):
        return
    oid = cat.schemas.get(schema)
    if oid is not None and "C" not in privileges.held(cat, who, oid, "schema"):
        loc = getattr(rv, "location", None)
        position = loc + 1 if isinstance(loc, int) and loc >= 0 and explicit_schema is None else None
        raise SqlError("42501", f"permission denied for schema {schema}", position)


def check_statement(node: Any, cat: Catalog, who: Who, path: Sequence[str], database: str) -> None:
    """Raise PostgreSQL's 42501 for what ``who`` may not do with ``node``."""
    if who.superuser:
        return
    if isinstance(node, ast.InsertStmt):
        rel = _rel(cat, who, node.relation, path)
        if rel is not None:
            _require(cat, who, rel, "a", _inserted(node, _target_columns(cat, rel)))
            conflict = node.onConflictClause
            if conflict is not None and conflict.action == enums.OnConflictAction.ONCONFLICT_UPDATE:
                _require(cat, who, rel, "w", [t.name for t in conflict.targetList or ()])
            if node.returningClause or (conflict is not None and (conflict.infer is not None or conflict.whereClause is not None)):
                reads = _target_reads(cat, rel, node.relation, node.returningClause, conflict.infer if conflict else None)
                if conflict is not None and conflict.infer is not None:  # (the arbiter's columns)
                    reads |= {e.name for e in conflict.infer.indexElems or () if isinstance(e, ast.IndexElem) and e.name}
                if conflict is not None:
                    reads |= _target_reads(cat, rel, node.relation, conflict.whereClause, *[t.val for t in conflict.targetList or ()], also="excluded")
                _require(cat, who, rel, "r", reads)
    elif isinstance(node, ast.UpdateStmt):
        rel = _rel(cat, who, node.relation, path)
        if rel is not None:
            _require(cat, who, rel, "w", [t.name for t in node.targetList or ()])
            values = [t.val for t in node.targetList or ()]
            reads = _target_reads(cat, rel, node.relation, node.whereClause, node.returningClause, *values)
            if reads or node.returningClause:
                _require(cat, who, rel, "r", reads)
    elif isinstance(node, ast.DeleteStmt):
        rel = _rel(cat, who, node.relation, path)
        if rel is not None:
            _require(cat, who, rel, "d")
            reads = _target_reads(cat, rel, node.relation, node.whereClause, node.returningClause)
            if reads or node.returningClause:
                _require(cat, who, rel, "r", reads)
    elif isinstance(node, ast.TruncateStmt):
        for rv in node.relations:
            rel = _rel(cat, who, rv, path)
            if rel is not None:
                privileges.require(cat, who, rel.oid, rel.kind, rel.name, "D")
    elif isinstance(node, ast.LockStmt):
        # LockTableAclCheck: SELECT for ACCESS SHARE, a write privilege for ROW EXCLUSIVE,
        # UPDATE, DELETE or TRUNCATE for the stronger modes
        letters = "r" if node.mode == 1 else "awdD" if node.mode == 3 else "wdD"
        for rv in node.relations:
            rel = _rel(cat, who, rv, path)
            if rel is not None and rel.kind in ("table", "view"):
                privileges.require_any(cat, who, rel.oid, rel.kind, rel.name, letters)
    elif isinstance(node, ast.SelectStmt) and node.lockingClause:
        for rel in _locked(node, cat, who, path):
            privileges.require(cat, who, rel.oid, rel.kind, rel.name, "w")
    elif isinstance(node, ast.CopyStmt) and node.relation is not None:
        rel = _rel(cat, who, node.relation, path)
        if rel is not None:
            named = [c.sval for c in node.attlist] if node.attlist else _target_columns(cat, rel)
            _require(cat, who, rel, "a" if node.is_from else "r", named)
    elif isinstance(node, (ast.AlterTableStmt, ast.AlterSeqStmt, ast.IndexStmt)):
        rv = node.sequence if isinstance(node, ast.AlterSeqStmt) else node.relation
        _owner(cat, who, _rel(cat, who, rv, path))
        if isinstance(node, ast.AlterTableStmt):
            defs = [c.def_ for c in node.cmds or () if c.subtype == enums.AlterTableType.AT_AddConstraint]
            cols = [c.def_ for c in node.cmds or () if c.subtype == enums.AlterTableType.AT_AddColumn]
            _references(cat, who, path, [*defs, *(k for col in cols for k in _constraints(col))])
    elif isinstance(node, ast.RenameStmt):
        if node.renameType in (OT.OBJECT_FUNCTION, OT.OBJECT_PROCEDURE, OT.OBJECT_ROUTINE):
            _function_owner(cat, who, path, *_names(node.object.objname), _nargs(node.object))
        elif node.relation is not None:
            rel = _rel(cat, who, node.relation, path)
            _owner(cat, who, rel)
            if rel is not None and node.renameType in (OT.OBJECT_TABLE, OT.OBJECT_VIEW, OT.OBJECT_SEQUENCE, OT.OBJECT_INDEX):
                _create_in(cat, who, None, path, rel.schema)  # (the new name goes into its schema)
        elif node.renameType == OT.OBJECT_SCHEMA:
            oid = cat.schemas.get(node.subname)
            if oid is not None:
                privileges.require_owner(cat, who, oid, "schema", node.subname)
    elif isinstance(node, ast.AlterObjectSchemaStmt) and node.relation is not None:
        _owner(cat, who, _rel(cat, who, node.relation, path))
        _create_in(cat, who, None, path, node.newschema)
    elif isinstance(node, ast.DropStmt):
        _check_drop(node, cat, who, path)
    elif isinstance(node, ast.CommentStmt):
        _check_comment(node, cat, who, path)
    elif isinstance(node, ast.CreateStmt):
        _create_in(cat, who, node.relation, path, database=database)
        _references(cat, who, path, [c for e in node.tableElts or () for c in _constraints(e)])
    elif isinstance(node, ast.CreateSeqStmt):
        _create_in(cat, who, node.sequence, path, database=database)
    elif isinstance(node, ast.ViewStmt):
        existing = _rel(cat, who, node.view, path) if node.replace else None
        if existing is not None:
            _owner(cat, who, existing)
        _create_in(cat, who, node.view, path, database=database)
    elif isinstance(node, ast.CreateTableAsStmt):
        _create_in(cat, who, node.into.rel, path, database=database)
    elif isinstance(node, ast.SelectStmt) and node.intoClause is not None:
        _create_in(cat, who, node.intoClause.rel, path, database=database)
    elif isinstance(node, ast.CreateDomainStmt):  # (the schema's CREATE; owners of types are not kept)
        _create_in(cat, who, None, path, _names(node.domainname)[0])
    elif isinstance(node, ast.CreateEnumStmt):
        _create_in(cat, who, None, path, _names(node.typeName)[0])
    elif isinstance(node, ast.CompositeTypeStmt):
        _create_in(cat, who, None, path, node.typevar.schemaname, database=database)
    elif isinstance(node, ast.AlterDomainStmt | ast.AlterEnumStmt):
        raise PgError("42501", f"must be owner of type {'.'.join(n.sval for n in node.typeName)}")
    elif isinstance(node, ast.CreateFunctionStmt):
        schema, name = _names(node.funcname)
        _create_in(cat, who, None, path, schema)
        if _leakproof(node.options):
            raise PgError("42501", "only superuser can define a leakproof function")
        if node.replace:
            nargs = sum(1 for p in node.parameters or () if p.mode not in (enums.FunctionParameterMode.FUNC_PARAM_OUT, enums.FunctionParameterMode.FUNC_PARAM_TABLE))
            _function_owner(cat, who, path, schema, name, nargs)
    elif isinstance(node, ast.AlterFunctionStmt):
        _function_owner(cat, who, path, *_names(node.func.objname), _nargs(node.func))
        if _leakproof(node.actions):
            raise PgError("42501", "only superuser can define a leakproof function")
    elif isinstance(node, ast.CreateSchemaStmt) and "C" not in privileges.held(cat, who, privileges.DATABASE_OID, "database"):
        raise PgError("42501", f"permission denied for database {database}")


def check_publication_tables(node: Any, cat: Catalog, who: Who, path: Sequence[str]) -> None:
    """A table goes into a publication only by its owner's hand (after the publication's
    own checks)."""
    if who.superuser:
        return
    for obj in node.pubobjects or ():
        pt = obj.pubtable
        if pt is not None and obj.pubobjtype == enums.PublicationObjSpecType.PUBLICATIONOBJ_TABLE:
            _owner(cat, who, _rel(cat, who, pt.relation, path))


def _check_drop(node: ast.DropStmt, cat: Catalog, who: Who, path: Sequence[str]) -> None:
    kinds = {OT.OBJECT_TABLE, OT.OBJECT_VIEW, OT.OBJECT_SEQUENCE, OT.OBJECT_INDEX}
    if node.removeType in kinds:
        for obj in node.objects:
            schema, name = _names(obj)
            if schema is not None:
                schema_usage(cat, who, schema)
            rel = find(cat, schema, name, path)
            if rel is not None:
                _owner(cat, who, rel)
    elif node.removeType in (OT.OBJECT_FUNCTION, OT.OBJECT_PROCEDURE, OT.OBJECT_ROUTINE):
        for obj in node.objects:
            _function_owner(cat, who, path, *_names(obj.objname), _nargs(obj))
    elif node.removeType == OT.OBJECT_SCHEMA:
        for obj in node.objects:
            name = obj.sval if isinstance(obj, ast.String) else obj[-1].sval
            oid = cat.schemas.get(name)
            if oid is not None:
                privileges.require_owner(cat, who, oid, "schema", name)


def _locked(node: ast.SelectStmt, cat: Catalog, who: Who, path: Sequence[str]) -> list[Rel]:
    """The tables a SELECT … FOR UPDATE/SHARE locks (those named in OF, else every table
    in its FROM): PostgreSQL wants UPDATE on each."""
    named: set[str] | None = set()
    for lc in node.lockingClause or ():
        if not lc.lockedRels:
            named = None
            break
        assert named is not None
        named.update(rv.relname for rv in lc.lockedRels)
    out = []

    def walk(item: Any) -> None:
        if isinstance(item, ast.RangeVar):
            alias = item.alias.aliasname if item.alias is not None else item.relname
            if named is None or alias in named:
                rel = find(cat, item.schemaname, item.relname, path)
                if rel is not None and rel.kind in ("table", "view"):
                    out.append(rel)
        elif isinstance(item, ast.JoinExpr):
            walk(item.larg)
            walk(item.rarg)

    for item in node.fromClause or ():
        walk(item)
    return out


def _constraints(elt: Any) -> list[Any]:
    if isinstance(elt, ast.Constraint):
        return [elt]
    if isinstance(elt, ast.ColumnDef):
        return list(elt.constraints or ())
    return []


def _references(cat: Catalog, who: Who, path: Sequence[str], constraints: Sequence[Any]) -> None:
    """A foreign key needs REFERENCES on the table it references."""
    for c in constraints:
        if isinstance(c, ast.Constraint) and c.contype == enums.ConstrType.CONSTR_FOREIGN and c.pktable is not None:
            rel = _rel(cat, who, c.pktable, path)
            table = cat.tables.get(rel.oid) if rel is not None else None
            if rel is not None and table is not None:
                named = [a.sval for a in c.pk_attrs] if c.pk_attrs else list(table.primary_key or ())
                privileges.require_columns(cat, who, table, "x", named or [col.name for col in table.columns])


def _nargs(obj: Any) -> int | None:
    if obj is None or getattr(obj, "args_unspecified", False):
        return None
    return len(obj.objargs or ())


def _functions(cat: Catalog, path: Sequence[str], schema: str | None, name: str, nargs: int | None) -> list[Any]:
    """The user functions of that name and number of arguments in the first schema that
    has one (where the call's types would pick among them)."""
    for s in [schema] if schema is not None else list(path):
        found = [
            fn for fn in cat.functions.values()
            if fn.schema == s and fn.name == name
            and (nargs is None or sum(1 for a in fn.args if a.mode in ("i", "b", "v")) == nargs)
        ]  # fmt: skip
        if found:
            return found
    return []


def functions_named(cat: Catalog, path: Sequence[str], obj: Any) -> list[Any]:
    """The functions an ObjectWithArgs names."""
    return _functions(cat, path, *_names(obj.objname), _nargs(obj))


def signature_text(obj: Any) -> str:
    """``f(integer)`` as PostgreSQL names a function that does not exist (the argument
    types as written)."""

    def shown(t: Any) -> str:
        text = type_text(t)
        return format_type(TYPE_OIDS[text], -1) or text if text in TYPE_OIDS else text

    name = ".".join(p.sval for p in obj.objname)
    if obj.args_unspecified:
        return name
    return f"{name}({', '.join(shown(t) for t in obj.objargs or ())})"


def _function_owner(cat: Catalog, who: Who, path: Sequence[str], schema: str | None, name: str, nargs: int | None) -> None:
    """ALTER, DROP and CREATE OR REPLACE of a function: its owner's."""
    for fn in _functions(cat, path, schema, name, nargs):
        if not privileges.is_owner(cat, who, fn.oid):
            raise PgError("42501", f"must be owner of function {name}")


def _leakproof(options: Any) -> bool:
    return any(o.defname == "leakproof" and bool(getattr(o.arg, "boolval", getattr(o.arg, "ival", 0))) for o in options or ())


def _check_comment(node: ast.CommentStmt, cat: Catalog, who: Who, path: Sequence[str]) -> None:
    rel_kinds = {OT.OBJECT_TABLE, OT.OBJECT_VIEW, OT.OBJECT_SEQUENCE, OT.OBJECT_INDEX}
    if node.objtype in rel_kinds:
        schema, name = _names(node.object)
        _owner(cat, who, find(cat, schema, name, path))
    elif node.objtype == OT.OBJECT_COLUMN:
        parts = [p.sval for p in node.object]
        _owner(cat, who, find(cat, parts[-3] if len(parts) > 2 else None, parts[-2], path))
    elif node.objtype == OT.OBJECT_SCHEMA:
        name = node.object.sval
        oid = cat.schemas.get(name)
        if oid is not None:
            privileges.require_owner(cat, who, oid, "schema", name)
    elif node.objtype == OT.OBJECT_PUBLICATION:
        p = cat.publications.get(node.object.sval)
        if p is not None and not who.uses(p.owner):
            raise PgError("42501", f"must be owner of publication {p.name}")
