"""View DDL as pure functions over the catalog: CREATE [OR REPLACE] VIEW (PostgreSQL 15's
``checkViewTupleDesc`` rules), DROP VIEW, the dependency checks that DROP TABLE, DROP
SCHEMA and ALTER TABLE make for the views reading a relation, and RENAME.

A view is kept as text (its bound query and the definition shown for it, see
:class:`decoding.catalog.View`): the lake knows no SQL, so what a view reads is handed in
by the SQL layer as ``depends`` (OIDs), and its columns as names with type OIDs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from decoding.catalog import Catalog, CatalogOp, Function, Table, View, ViewColumn, is_temp_schema
from decoding.pgtypes import UnknownTypeError, type_by_oid
from walsender_proxy.lake.errors import LakeError

Alloc = Callable[[], int]
#: Formats a type OID and modifier as PostgreSQL's format_type_with_typemod (the SQL
#: layer's catalog knows every type's name; the lake does not).
FormatType = Callable[[int, int], str]


def _split(name: str, search_path: Sequence[str]) -> tuple[str, str]:
    schema, dot, rel = name.rpartition(".")
    return (schema if dot else search_path[0]), rel


def shown(schema: str, name: str, search_path: Sequence[str]) -> str:
    """An object's name as PostgreSQL's messages print it: qualified when its schema is not
    on the search path (``getObjectDescription``)."""
    return name if schema in search_path else f"{schema}.{name}"


def resolve_view(cat: Catalog, name: str, search_path: Sequence[str]) -> View | None:
    """The view ``name`` resolves to; None for no relation of that name; 42809 for a
    table or a sequence there (with PostgreSQL's hint)."""
    schema, dot, rel = name.rpartition(".")
    for s in [schema] if dot else search_path:
        v = cat.find_view(s, rel)
        if v is not None:
            return v
        if cat.find_table(s, rel) is not None:
            raise LakeError("42809", f'"{rel}" is not a view', hint="Use DROP TABLE to remove a table.")
        if cat.find_sequence(s, rel) is not None:
            raise LakeError("42809", f'"{rel}" is not a view', hint="Use DROP SEQUENCE to remove a sequence.")
    return None


def create_view(
    cat: Catalog,
    alloc: Alloc,
    name: str,
    query: str,
    definition: str,
    columns: Sequence[ViewColumn],
    depends: Sequence[int],
    or_replace: bool,
    search_path: Sequence[str],
    format_type: FormatType,
    expands: bool = True,
    key_depends: Sequence[int] = (),
) -> tuple[list[CatalogOp], View]:
    """``name`` is qualified by the caller (the creation schema, or the session's
    temporary schema). OR REPLACE keeps the OID and may only append columns."""
    schema, rel = _split(name, search_path)
    if schema not in cat.schemas:
        raise LakeError("3F000", f'schema "{schema}" does not exist')
    seen: set[str] = set()
    for c in columns:
        if c.name in seen:
            raise LakeError("42701", f'column "{c.name}" specified more than once')
        seen.add(c.name)
    old = cat.find_view(schema, rel)
    if old is None and cat.relation_exists(schema, rel):
        if or_replace:
            raise LakeError("42809", f'"{rel}" is not a view')
        raise LakeError("42P07", f'relation "{rel}" already exists')
    if old is not None:
        if not or_replace:
            raise LakeError("42P07", f'relation "{rel}" already exists')
        if len(columns) < len(old.columns):
            raise LakeError("42P16", "cannot drop columns from view")
        for was, new in zip(old.columns, columns, strict=False):
            if was.name != new.name:
                raise LakeError(
                    "42P16",
                    f'cannot change name of view column "{was.name}" to "{new.name}"',
                    hint="Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead.",
                )
            if (was.type_oid, was.typmod) != (new.type_oid, new.typmod):
                raise LakeError(
                    "42P16",
                    f'cannot change data type of view column "{was.name}" from '
                    f"{format_type(was.type_oid, was.typmod)} to {format_type(new.type_oid, new.typmod)}",
                )
    oid = old.oid if old is not None else alloc()
    v = View(oid, schema, rel, query, definition, tuple(columns), tuple(dict.fromkeys(depends)), expands, tuple(sorted(set(key_depends))))
    return [{"op": "put_view", "view": v.to_json()}], v


def _kind(cat: Catalog, oid: int) -> str:
    return "view" if oid in cat.views else "table"


def _named(cat: Catalog, oid: int, search_path: Sequence[str]) -> str:
    fn = cat.functions.get(oid)
    if fn is not None:
        return described(fn, search_path)
    obj = cat.views.get(oid) or cat.tables.get(oid)
    assert obj is not None
    return f"{_kind(cat, oid)} {shown(obj.schema, obj.name, search_path)}"


def described(obj: View | Function, search_path: Sequence[str]) -> str:
    """A dependent as PostgreSQL's messages name it: ``view v``, ``function f(integer)``
    (format_procedure; a function's parameters are of types the lake stores)."""
    if isinstance(obj, View):
        return f"view {shown(obj.schema, obj.name, search_path)}"
    types = []
    for oid in obj.input_types:
        try:
            types.append(type_by_oid(oid).sql_name())
        except UnknownTypeError:
            types.append(str(oid))
    return f"function {shown(obj.schema, obj.name, search_path)}({','.join(types)})"


def drop_op(obj: View | Function) -> CatalogOp:
    return {"op": "drop_view" if isinstance(obj, View) else "drop_function", "oid": obj.oid}


def dependency_lines(
    cat: Catalog, oids: Sequence[int], search_path: Sequence[str], dropped: set[int] | None = None
) -> tuple[list[View | Function], list[str]]:
    """The views that read any of ``oids`` and the functions whose SQL-standard bodies use
    them (transitively), not themselves among what is dropped anyway, and PostgreSQL's
    DETAIL lines ("view v depends on table t", "function f() depends on view v")."""
    found: list[View | Function] = []
    lines: list[str] = []
    dropped = set(dropped or ()) | set(oids)
    users: list[View | Function] = sorted([*cat.views.values(), *cat.functions.values()], key=lambda u: u.oid)

    def visit(o: int, above: tuple[int, ...]) -> None:
        # depth first, each object's dependents by OID, as PostgreSQL reports them; a
        # dependent that also uses an object further up is reached from there
        for v in users:
            if o in v.depends and v.oid not in dropped and not any(a in v.depends for a in above):
                dropped.add(v.oid)
                found.append(v)
                lines.append(f"{described(v, search_path)} depends on {_named(cat, o, search_path)}")
                visit(v.oid, (*above, o))

    for o in oids:
        visit(o, ())
    return found, lines


def dependents_error(what: str, lines: Sequence[str]) -> LakeError:
    return LakeError(
        "2BP01",
        f"cannot drop {what} because other objects depend on it",
        detail="\n".join(lines),
        hint="Use DROP ... CASCADE to drop the dependent objects too.",
    )


def drop_view(
    cat: Catalog, alloc: Alloc, name: str, if_exists: bool, cascade: bool, search_path: Sequence[str], also: Sequence[int] = ()
) -> tuple[list[CatalogOp], list[str]]:
    """DROP VIEW; returns what CASCADE dropped besides (the NOTICE's lines). ``also``: the
    other views the same statement drops (a view among them that reads this one is no
    dependent to refuse for, as in PostgreSQL's performMultipleDeletions)."""
    v = resolve_view(cat, name, search_path)
    if v is None:
        if if_exists:
            return [], []
        raise LakeError("42P01", f'view "{name}" does not exist')
    deps, lines = dependency_lines(cat, [v.oid], search_path, set(also))
    if deps and not cascade:
        raise dependents_error(f"view {shown(v.schema, v.name, search_path)}", lines)
    ops: list[CatalogOp] = [drop_op(d) for d in reversed(deps)]
    ops.append({"op": "drop_view", "oid": v.oid})
    return ops, [described(d, search_path) for d in deps]


def no_dependent_views(cat: Catalog, t: Table, what: str, adding: bool = False) -> None:
    """Refuse a change of a table's shape or name while a view reads it: a view keeps its
    query as text, bound by name (PostgreSQL binds it by OID and column number). An added
    column changes only a view that expands the table's rows (``adding``)."""
    if any(t.oid in v.depends and (v.expands or not adding) for v in cat.views.values()):
        raise LakeError("0A000", f"{what} of a table a view depends on is not supported by walsender-proxy")
    if any(t.oid in fn.depends for fn in cat.functions.values()):  # (PostgreSQL's body is bound by OID and attnum)
        raise LakeError("0A000", f"{what} of a table an SQL-standard function body reads is not supported by walsender-proxy")


def rename_view(
    cat: Catalog, alloc: Alloc, name: str, new_name: str, search_path: Sequence[str]
) -> tuple[list[CatalogOp], None]:
    """``ALTER VIEW … RENAME TO``."""
    v = resolve_view(cat, name, search_path)
    if v is None:
        raise LakeError("42P01", f'relation "{name}" does not exist')
    if cat.relation_exists(v.schema, new_name):
        raise LakeError("42P07", f'relation "{new_name}" already exists')
    if cat.dependent_views(v.oid):
        raise LakeError("0A000", "renaming a view another view depends on is not supported by walsender-proxy")
    if any(v.oid in fn.depends for fn in cat.functions.values()):
        raise LakeError("0A000", "renaming a view an SQL-standard function body reads is not supported by walsender-proxy")
    return [{"op": "put_view", "view": replace(v, name=new_name).to_json()}], None


def rename_view_column(
    cat: Catalog, alloc: Alloc, name: str, column: str, new_name: str, search_path: Sequence[str]
) -> tuple[list[CatalogOp], None]:
    """``ALTER VIEW … RENAME COLUMN``: only the output name changes (the rewriter names the
    view's columns from the catalog, not from its query)."""
    v = resolve_view(cat, name, search_path)
    if v is None:
        raise LakeError("42P01", f'relation "{name}" does not exist')
    if not any(c.name == column for c in v.columns):
        raise LakeError("42703", f'column "{column}" does not exist')
    if any(c.name == new_name for c in v.columns):
        raise LakeError("42701", f'column "{new_name}" of relation "{v.name}" already exists')
    if cat.dependent_views(v.oid):
        raise LakeError("0A000", "renaming a column of a view another view depends on is not supported by walsender-proxy")
    if any(v.oid in fn.depends for fn in cat.functions.values()):
        raise LakeError("0A000", "renaming a column of a view an SQL-standard function body reads is not supported by walsender-proxy")
    cols = tuple(replace(c, name=new_name) if c.name == column else c for c in v.columns)
    return [{"op": "put_view", "view": replace(v, columns=cols).to_json()}], None


def temporary(cat: Catalog, depends: Sequence[int]) -> bool:
    """Whether a view reading ``depends`` is temporary (PostgreSQL makes a view over a
    temporary relation temporary itself)."""
    for o in depends:
        obj = cat.tables.get(o) or cat.views.get(o)
        if obj is not None and is_temp_schema(obj.schema):
            return True
    return False
