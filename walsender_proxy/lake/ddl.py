"""DDL as pure functions: (catalog, OID allocator, arguments) → catalog ops.

Validation here gives PostgreSQL's SQLSTATEs and messages, so the SQL server and the Python
API refuse the same things in the same words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from decoding.catalog import (
    REPLICA_IDENTITIES,
    Catalog,
    CatalogOp,
    Column,
    ColumnDefault,
    Publication,
    PublicationTable,
    RowFilterExpr,
    Table,
    is_temp_schema,
    pkey_name,
)
from decoding.pgtypes import ColumnType, parse_type
from walsender_proxy.lake import check_ddl, foreign_key_ddl, index_ddl, partition_ddl
from walsender_proxy.lake.domains import dependents as domain_dependents
from walsender_proxy.lake.errors import LakeError
from walsender_proxy.lake.sequence_ddl import owned_sequences
from walsender_proxy.lake.view_ddl import (
    dependency_lines,
    dependents_error,
    described,
    drop_op,
    no_dependent_views,
    shown,
)

Alloc = Callable[[], int]
#: A new column: ``(name, type)``, ``(name, type, not_null)`` or ``(…, not_null, default)``.
ColumnSpec = (
    tuple[str, str]
    | tuple[str, str, bool]
    | tuple[str, str, bool, ColumnDefault | None]
    | tuple[str, str, bool, ColumnDefault | None, str]
)
PUBLISH_OPS = ("insert", "update", "delete", "truncate")


@dataclass(frozen=True, slots=True)
class PubTable:
    """A ``FOR TABLE`` entry: ``name [(columns)] [WHERE (row_filter)]``."""

    name: str
    columns: tuple[str, ...] | None = None
    row_filter: RowFilterExpr | None = None


def _split(name: str, search_path: Sequence[str]) -> tuple[str, str]:
    schema, dot, rel = name.rpartition(".")
    return (schema if dot else search_path[0]), rel


def create_schema(
    cat: Catalog, alloc: Alloc, name: str, if_not_exists: bool, system: bool = False
) -> tuple[list[CatalogOp], None]:
    if name in cat.schemas:
        if if_not_exists:
            return [], None
        raise LakeError("42P06", f'schema "{name}" already exists')
    if name.startswith("pg_") and not system:
        raise LakeError(
            "42939",
            f'unacceptable schema name "{name}"',
            detail='The prefix "pg_" is reserved for system schemas.',
        )
    return [{"op": "put_schema", "name": name, "oid": alloc()}], None


def drop_schema(
    cat: Catalog, alloc: Alloc, name: str, if_exists: bool, cascade: bool
) -> tuple[list[CatalogOp], None]:
    if name not in cat.schemas:
        if if_exists:
            return [], None
        raise LakeError("3F000", f'schema "{name}" does not exist')
    members = [t for t in cat.tables.values() if t.schema == name]
    seqs = [sq for sq in cat.sequences.values() if sq.schema == name]
    views = [v for v in cat.views.values() if v.schema == name]
    domains = [d for d in cat.domains.values() if d.schema == name]
    enums = [e for e in cat.enums.values() if e.schema == name]
    composites = [c for c in cat.composites.values() if c.schema == name]
    types = sorted([*domains, *enums, *composites], key=lambda x: x.oid)
    if (members or seqs or views or types) and not cascade:
        kinds = sorted(
            [((t.oid, 0), f"table {t.qualified_name} depends on schema {name}") for t in members]
            + [((d.oid, 0), f"type {d.qualified_name} depends on schema {name}") for d in types]
            + [
                ((d.oid, i), line)
                for d in types
                for i, line in enumerate(
                    domain_dependents(cat, d.oid, frozenset(x.oid for x in types), frozenset(t.oid for t in members)),
                    start=1,
                )
            ]
            + [((sq.oid, 0), f"sequence {sq.qualified_name} depends on schema {name}") for sq in seqs]
            + [((v.oid, 0), f"view {v.qualified_name} depends on schema {name}") for v in views]
            + [
                ((t.oid, fk.oid), f"{foreign_key_ddl.described(c, fk)} depends on table {t.qualified_name}")
                for t in members
                for c, fk in cat.referencing(t.oid)
                if c.schema != name
            ]
        )
        raise LakeError(
            "2BP01",
            f"cannot drop schema {name} because other objects depend on it",
            detail="\n".join(what for _, what in kinds),
            hint="Use DROP ... CASCADE to drop the dependent objects too.",
        )
    inside = {t.oid for t in members} | {v.oid for v in views}
    outside, _ = dependency_lines(cat, sorted(inside), (), inside)
    ops: list[CatalogOp] = [drop_op(v) for v in reversed(outside)]
    keys = [(c, fk) for t in members for c, fk in cat.referencing(t.oid) if c.oid not in inside]
    ops += foreign_key_ddl.drop_referencing(cat, keys, f"schema {name}", True, foreign_key_ddl.described)[0]
    ops += [{"op": "drop_view", "oid": v.oid} for v in sorted(views, key=lambda v: -v.oid)]
    ops += [{"op": "drop_table", "oid": t.oid} for t in members]
    ops += [{"op": "drop_sequence", "oid": sq.oid} for sq in seqs]
    # The schema's domains and enums go with it, and the domains elsewhere over them; the
    # columns outside the schema declared with any of them the caller dropped first (a type
    # never goes from under a column).
    gone_enums = {e.oid for e in enums}
    dropping = {d.oid for d in domains}
    for d in sorted(cat.domains.values(), key=lambda d: d.oid):
        chain = cat.domain_chain(d.oid)
        if any(x.oid in dropping for x in chain) or (chain[-1].base.is_enum and chain[-1].base.base.oid in gone_enums):
            dropping.add(d.oid)
    gone_composites = {c.oid for c in composites}

    def uses(ctype: ColumnType) -> bool:
        return (
            ctype.domain in dropping or (ctype.is_enum and ctype.base.oid in gone_enums)
            or (ctype.is_composite and ctype.base.oid in gone_composites)
        )  # fmt: skip

    if any(uses(c.type) for t in cat.tables.values() if t.schema != name for c in t.columns) or any(
        uses(ctype) for ct in cat.composites.values() if ct.schema != name for n, ctype in ct.live_attributes
    ):
        raise LakeError("2BP01", f"cannot drop schema {name} because columns outside it use its types")
    ops += [{"op": "drop_domain", "oid": oid} for oid in sorted(dropping, reverse=True)]
    ops += [{"op": "drop_enum", "oid": oid} for oid in sorted(gone_enums, reverse=True)]
    ops += [{"op": "drop_composite", "oid": oid} for oid in sorted(gone_composites, reverse=True)]
    ops.append({"op": "drop_schema", "name": name})
    return ops, None


def create_table(
    cat: Catalog,
    alloc: Alloc,
    name: str,
    columns: Sequence[ColumnSpec],
    primary_key: tuple[str, ...],
    replica_identity: str,
    if_not_exists: bool,
    search_path: Sequence[str],
    pkey: str | None = None,
    partition_by: tuple[str, Sequence[tuple[str, int]]] | None = None,
) -> tuple[list[CatalogOp], Table | None]:
    """``columns``: ``(name, type[, not_null[, default]])``; a default's pg_attrdef OID is
    allocated here. ``pkey``: the primary key's name (None: PostgreSQL's choice).
    ``partition_by``: ``PARTITION BY`` strategy and its columns (each with its location)."""
    schema, rel = _split(name, search_path)
    if schema == "pg_catalog":
        raise LakeError(
            "42501", f'permission denied to create "{schema}.{rel}"', detail="System catalog modifications are currently disallowed."
        )
    if schema not in cat.schemas:
        raise LakeError("3F000", f'schema "{schema}" does not exist')
    if cat.relation_exists(schema, rel):
        if if_not_exists:
            return [], None
        raise LakeError("42P07", f'relation "{rel}" already exists')
    cols: list[Column] = []
    seen: set[str] = set()
    for i, spec in enumerate(columns, start=1):
        cname, tname = spec[0], spec[1]
        not_null = bool(spec[2]) if len(spec) > 2 else False  # type: ignore[misc]
        default = spec[3] if len(spec) > 3 else None  # type: ignore[misc]
        identity = spec[4] if len(spec) > 4 else ""  # type: ignore[misc]
        if cname in seen:
            raise LakeError("42701", f'column "{cname}" specified more than once')
        _not_a_system_column(cname)
        seen.add(cname)
        ctype = tname if isinstance(tname, ColumnType) else parse_type(tname)
        if identity:  # (an identity column's nextval has no pg_attrdef row)
            cols.append(Column(i, cname, ctype, True, cname, default, False, identity))
        else:
            cols.append(Column(i, cname, ctype, not_null or cname in primary_key, cname, _with_oid(default, alloc)))
    for k in primary_key:
        if k not in seen:
            raise LakeError("42703", f'column "{k}" named in key does not exist')
        index_ddl.check_key_column(next(c for c in cols if c.name == k), unique=True)
    if replica_identity not in REPLICA_IDENTITIES:
        raise LakeError("22023", f"invalid replica identity {replica_identity!r}")
    t = Table(
        alloc(),
        schema,
        rel,
        tuple(cols),
        primary_key,
        replica_identity,
        (),
        frozenset(c.physical for c in cols),
        len(cols) + 1,
    )
    if primary_key:
        name = pkey if pkey is not None else index_ddl.choose_index_name(cat, t, (), "pkey")
        if pkey is not None and cat.relation_exists(schema, pkey):
            raise LakeError("42P07", f'relation "{pkey}" already exists')
        if name != t.pkey_name:
            t = replace(t, pkey_index=name)
    if partition_by is not None:
        t = replace(t, partition_key=partition_ddl.partition_key(t, *partition_by))
    return [{"op": "put_table", "table": t.to_json()}], t


def drop_table(
    cat: Catalog,
    alloc: Alloc,
    name: str,
    if_exists: bool,
    search_path: Sequence[str],
    cascade: bool = False,
    also: Sequence[int] = (),
) -> tuple[list[CatalogOp], list[str]]:
    """DROP TABLE; 2BP01 while a view reads it or another table's foreign key references
    it (CASCADE drops the views and those keys: returned, for the NOTICE). ``also``: the
    tables the same statement drops (their keys do not hold it)."""
    try:
        t = cat.resolve_table(name, search_path)
    except LakeError as e:
        if e.sqlstate == "42809":
            raise LakeError("42809", e.message, hint="Use DROP VIEW to remove a view.") from None
        if if_exists:
            return [], []
        raise LakeError("42P01", f'table "{name}" does not exist') from None
    family = [t, *cat.inheritors(t)]  # (a partitioned table goes with its partitions)
    views, lines = dependency_lines(cat, [x.oid for x in family], search_path)
    keys = [(c, fk) for c, fk in cat.referencing(t.oid) if c.oid != t.oid and c.oid not in also]
    what = f"table {shown(t.schema, t.name, search_path)}"
    lines += [f"{foreign_key_ddl.described(c, fk)} depends on {what}" for c, fk in keys]
    if (views or keys) and not cascade:
        raise dependents_error(what, lines)
    ops: list[CatalogOp] = [drop_op(v) for v in reversed(views)]
    key_ops, key_lines = foreign_key_ddl.drop_referencing(cat, keys, what, True, foreign_key_ddl.described)
    ops += key_ops
    for x in reversed(family):
        ops.append({"op": "drop_table", "oid": x.oid})
        ops += [{"op": "drop_sequence", "oid": sq.oid} for sq in owned_sequences(cat, x.oid)]
    return ops, [described(v, search_path) for v in views] + key_lines


#: PostgreSQL's system columns: every table has them, so no column may take their names.
SYSTEM_COLUMNS = frozenset({"tableoid", "cmax", "xmax", "cmin", "xmin", "ctid"})


def _not_a_system_column(name: str) -> None:
    if name in SYSTEM_COLUMNS:
        raise LakeError("42701", f'column name "{name}" conflicts with a system column name')


def _with_oid(default: ColumnDefault | None, alloc: Alloc) -> ColumnDefault | None:
    """The default with its pg_attrdef OID (one per default set, as PostgreSQL's)."""
    return None if default is None else replace(default, oid=alloc())


def add_column(
    t: Table,
    name: str,
    ctype: ColumnType,
    not_null: bool,
    default: ColumnDefault | None = None,
    alloc: Alloc | None = None,
    identity: str = "",
) -> list[CatalogOp]:
    """``ADD COLUMN``: a non-volatile default is the value of the rows already there
    (PostgreSQL's "missing" value, ``atthasmissing``); the caller writes them."""
    _not_a_system_column(name)
    if t.column(name) is not None:
        raise LakeError("42701", f'column "{name}" of relation "{t.name}" already exists')
    physical = name
    n = 2
    while physical in t.used_physical:
        physical = f"{name}__{n}"
        n += 1
    if default is not None and not identity:
        assert alloc is not None
        default = _with_oid(default, alloc)
    missing = default is not None and not default.volatile
    col = Column(t.next_attnum, name, ctype, not_null or bool(identity), physical, default, missing, identity)
    columns = t.columns
    if default is not None and default.volatile:
        # PostgreSQL rewrites the table for a volatile default: no column keeps a
        # "missing" value after that
        columns = tuple(replace(c, has_missing=False) for c in columns)
    t2 = replace(
        t,
        columns=(*columns, col),
        used_physical=t.used_physical | {physical},
        next_attnum=t.next_attnum + 1,
    )
    return [{"op": "put_table", "table": t2.to_json()}]


def alter_column_types(
    cat: Catalog,
    alloc: Alloc,
    table: str,
    changes: tuple[tuple[str, str], ...],
    rewrite: bool,
    search_path: Sequence[str],
) -> tuple[list[CatalogOp], Table]:
    """``ALTER COLUMN … TYPE`` of each ``(column, type text)``: the column keeps its number,
    name and constraints. ``rewrite``: its values change (the caller rewrites every row),
    so they go to a new physical column, and no column keeps a "missing" value after the
    rewrite (PostgreSQL's table rewrite); else the stored values stay as they are (a
    varchar's length limit, varchar to text)."""
    t = cat.resolve_table(table, search_path)
    columns = list(t.columns)
    used = set(t.used_physical)
    for name, type_text in changes:
        i = next((i for i, c in enumerate(columns) if c.name == name), None)
        if i is None:
            raise LakeError("42703", f'column "{name}" of relation "{t.name}" does not exist')
        col = columns[i]
        physical = col.physical
        if rewrite:
            n = 2
            physical = f"{name}__{n}"
            while physical in used:
                n += 1
                physical = f"{name}__{n}"
            used.add(physical)
        columns[i] = replace(col, type=parse_type(type_text), physical=physical, storage="")
    if rewrite:
        columns = [replace(c, has_missing=False) for c in columns]
    t2 = replace(t, columns=tuple(columns), used_physical=frozenset(used))
    return [{"op": "put_table", "table": t2.to_json()}], t2


def set_not_null(
    cat: Catalog, alloc: Alloc, table: str, name: str, not_null: bool, search_path: Sequence[str]
) -> tuple[list[CatalogOp], Table]:
    """ALTER COLUMN … SET / DROP NOT NULL (the rows are the caller's to check); DROP of a
    key, replica identity or identity column is PostgreSQL's 42P16."""
    t = cat.resolve_table(table, search_path)
    col = t.column(name)
    if col is None:
        if name in SYSTEM_COLUMNS:
            raise LakeError("0A000", f'cannot alter system column "{name}"')
        raise LakeError("42703", f'column "{name}" of relation "{t.name}" does not exist')
    if not not_null:
        if name in t.primary_key:
            raise LakeError("42P16", f'column "{name}" is in a primary key')
        if t.replica_identity == "i" and name in t.identity_index:
            raise LakeError("42P16", f'column "{name}" is in index used as replica identity')
        if col.identity:
            raise LakeError("42601", f'column "{name}" of relation "{t.name}" is an identity column')
    if col.not_null == not_null:
        return [], t
    new = replace(col, not_null=not_null)
    t2 = replace(t, columns=tuple(new if c is col else c for c in t.columns))
    return [{"op": "put_table", "table": t2.to_json()}], t2


def set_column_storage(
    cat: Catalog, alloc: Alloc, table: str, name: str, storage: str, search_path: Sequence[str]
) -> tuple[list[CatalogOp], None]:
    """``ALTER COLUMN … SET STORAGE`` (``storage``: attstorage's letter, checked by the SQL
    layer against the type): only the catalog changes."""
    t = cat.resolve_table(table, search_path)
    col = t.column(name)
    if col is None:
        raise LakeError("42703", f'column "{name}" of relation "{t.name}" does not exist')
    new = replace(col, storage=storage)
    t2 = replace(t, columns=tuple(new if c is col else c for c in t.columns))
    return [{"op": "put_table", "table": t2.to_json()}], None


def set_column_default(
    cat: Catalog,
    alloc: Alloc,
    table: str,
    name: str,
    default: ColumnDefault | None,
    search_path: Sequence[str],
) -> tuple[list[CatalogOp], None]:
    """``ALTER COLUMN … SET DEFAULT`` (``default``) or ``DROP DEFAULT`` (None): only the
    catalog changes (rows keep their values); a new default gets a new pg_attrdef row."""
    t = cat.resolve_table(table, search_path)
    col = t.column(name)
    if col is None:
        raise LakeError("42703", f'column "{name}" of relation "{t.name}" does not exist')
    if default is None and col.default is None:
        return [], None
    new = replace(col, default=_with_oid(default, alloc))
    t2 = replace(t, columns=tuple(new if c is col else c for c in t.columns))
    return [{"op": "put_table", "table": t2.to_json()}], None


def drop_column(
    cat: Catalog, alloc: Alloc, table: str, name: str, if_exists: bool, search_path: Sequence[str]
) -> tuple[list[CatalogOp], None]:
    t = cat.resolve_table(table, search_path)
    no_dependent_views(cat, t, "ALTER TABLE … DROP COLUMN")
    if t.column(name) is None:
        if if_exists:
            return [], None
        raise LakeError("42703", f'column "{name}" of relation "{t.name}" does not exist')
    if name in t.primary_key:
        raise LakeError(
            "2BP01",
            f"cannot drop column {name} of table {t.name} because other objects depend on it",
            detail=f"constraint {t.pkey_name} on table {t.name} depends on column {name}",
        )
    col = t.column(name)
    assert col is not None
    for c, fk in cat.referencing(t.oid):
        if col.attnum in fk.ref_attnums and not (c.oid == t.oid and name in fk.columns):
            raise LakeError(
                "2BP01",
                f"cannot drop column {name} of table {t.name} because other objects depend on it",
                detail=f"{foreign_key_ddl.described(c, fk)} depends on column {name} of table {t.name}",
                hint="Use DROP ... CASCADE to drop the dependent objects too.",
            )
    readers = [c for c in t.columns if c.generation is not None and c.name != name and col.attnum in c.generation.attnums]
    if readers:  # (a generated column's pg_depend entry on the columns it reads is NORMAL)
        raise LakeError(
            "2BP01",
            f"cannot drop column {name} of table {t.name} because other objects depend on it",
            detail="\n".join(f"column {c.name} of table {t.name} depends on column {name} of table {t.name}" for c in readers),
            hint="Use DROP ... CASCADE to drop the dependent objects too.",
        )
    t2 = replace(
        index_ddl.after_drop_column(t, name),
        columns=tuple(c for c in t.columns if c.name != name),
        # (a foreign key over the column goes with it, as its pg_depend entry is AUTO)
        foreign_keys=tuple(fk for fk in t.foreign_keys if name not in fk.columns),
        checks=check_ddl.after_drop_column(t, col.attnum),  # (AUTO too, whatever else it names)
    )
    if name in t.identity_index:
        t2 = replace(t2, identity_index=(), identity_index_name="")
    ops: list[CatalogOp] = [{"op": "put_table", "table": t2.to_json()}]
    ops += [{"op": "drop_sequence", "oid": sq.oid} for sq in owned_sequences(cat, t.oid, col.attnum)]
    for p in cat.publications.values():
        pt = p.entry(t.oid)
        in_filter = pt is not None and pt.row_filter is not None and col.attnum in pt.row_filter.attnums
        if pt is not None and (in_filter or (pt.columns and name in pt.columns)):
            raise LakeError(
                "2BP01",
                f"cannot drop column {name} of table {t.name} because other objects depend on it",
                detail=f"publication of table {t.name} in publication {p.name} depends on column {name} of table {t.name}",
                hint="Use DROP ... CASCADE to drop the dependent objects too.",
            )
    return ops, None


def rename_column(
    cat: Catalog, alloc: Alloc, table: str, name: str, new_name: str, search_path: Sequence[str]
) -> tuple[list[CatalogOp], None]:
    """``ALTER TABLE … RENAME COLUMN``: only the name changes. The data keeps its physical
    name, so transactions written before the rename still decode under the old one (their
    catalog version), as PostgreSQL sends them; key, identity and publication column lists
    follow the column, as PostgreSQL's attnums do."""
    t = cat.resolve_table(table, search_path)
    no_dependent_views(cat, t, "ALTER TABLE … RENAME COLUMN")
    if t.column(name) is None:
        raise LakeError("42703", f'column "{name}" does not exist')
    if t.column(new_name) is not None:
        raise LakeError("42701", f'column "{new_name}" of relation "{t.name}" already exists')
    _not_a_system_column(new_name)

    def renamed(names: Sequence[str]) -> tuple[str, ...]:
        return tuple(new_name if n == name else n for n in names)

    ops: list[CatalogOp] = []
    for p in cat.publications.values():
        pt = p.entry(t.oid)
        if pt is None:
            continue
        if pt.columns is not None and name in pt.columns:
            moved = replace(pt, columns=renamed(pt.columns))
            entries = tuple(moved if x is pt else x for x in p.tables)
            ops.append({"op": "put_publication", "publication": replace(p, tables=entries).to_json()})
    t2 = replace(
        t,
        columns=tuple(replace(c, name=new_name) if c.name == name else c for c in t.columns),
        primary_key=renamed(t.primary_key),
        identity_index=renamed(t.identity_index),
        indexes=index_ddl.after_rename_column(t, name, new_name),
        foreign_keys=foreign_key_ddl.after_rename_column(t.foreign_keys, name, new_name),
    )
    return [{"op": "put_table", "table": t2.to_json()}, *ops], None


def rename_table(
    cat: Catalog, alloc: Alloc, table: str, new_name: str, search_path: Sequence[str]
) -> tuple[list[CatalogOp], None]:
    """``ALTER TABLE … RENAME TO``: only the name changes (files, publications and slots
    follow the OID); the next Relation message carries the new name, as PostgreSQL's."""
    t = cat.resolve_table(table, search_path)
    no_dependent_views(cat, t, "ALTER TABLE … RENAME")
    if cat.relation_exists(t.schema, new_name):
        raise LakeError("42P07", f'relation "{new_name}" already exists')
    kept = t.pkey_name if t.primary_key and not t.pkey_index and t.pkey_name != pkey_name(new_name) else t.pkey_index
    return [{"op": "put_table", "table": replace(t, name=new_name, pkey_index=kept).to_json()}], None


def set_table_schema(
    cat: Catalog, alloc: Alloc, table: str, schema: str, search_path: Sequence[str]
) -> tuple[list[CatalogOp], None]:
    """``ALTER TABLE … SET SCHEMA``: the table moves (a publication of the schema's
    tables then includes it, as PostgreSQL's)."""
    t = cat.resolve_table(table, search_path)
    no_dependent_views(cat, t, "ALTER TABLE … SET SCHEMA")
    if schema not in cat.schemas:
        raise LakeError("3F000", f'schema "{schema}" does not exist')
    if is_temp_schema(schema) != is_temp_schema(t.schema):
        raise LakeError("0A000", "cannot move objects into or out of temporary schemas")
    if schema == t.schema:
        return [], None
    if cat.find_table(schema, t.name) is not None:
        raise LakeError("42P07", f'relation "{t.name}" already exists in schema "{schema}"')
    return [{"op": "put_table", "table": replace(t, schema=schema).to_json()}], None


def set_replica_identity(
    cat: Catalog,
    alloc: Alloc,
    table: str,
    identity: str,
    index_columns: tuple[str, ...],
    search_path: Sequence[str],
    index_name: str = "",
) -> tuple[list[CatalogOp], None]:
    t = cat.resolve_table(table, search_path)
    code = {"default": "d", "full": "f", "nothing": "n", "index": "i"}.get(identity.lower())
    if code is None:
        raise LakeError("42601", f'syntax error at or near "{identity}"')
    if code == "i":
        if not index_columns:
            raise LakeError("42704", "index for replica identity not given")
        for c in index_columns:
            col = t.column(c)
            if col is None:
                raise LakeError("42703", f'column "{c}" does not exist')
            if not col.not_null:
                raise LakeError(
                    "42809",
                    f'index "{index_name or (t.pkey_name if index_columns == t.primary_key else "")}" cannot be used as replica identity because column "{c}" is nullable',
                )
    t2 = replace(
        t,
        replica_identity=code,
        identity_index=index_columns if code == "i" else (),
        identity_index_name=(index_name or (t.pkey_name if index_columns == t.primary_key else "")) if code == "i" else "",
    )
    return [{"op": "put_table", "table": t2.to_json()}], None


def set_reloptions(
    cat: Catalog, alloc: Alloc, table: str, options: tuple[str, ...], search_path: Sequence[str]
) -> tuple[list[CatalogOp], None]:
    """A table's storage parameters replaced (checked by the caller)."""
    t = cat.resolve_table(table, search_path)
    return [{"op": "put_table", "table": replace(t, reloptions=options).to_json()}], None


def parse_publish(publish: str) -> dict[str, bool]:
    chosen = {o: False for o in PUBLISH_OPS}
    for part in publish.split(","):
        p = part.strip().lower()
        if not p:
            continue
        if p not in chosen:
            raise LakeError("42601", f'unrecognized value for publication option "publish": "{part.strip()}"')
        chosen[p] = True
    return chosen


def _pub_tables(
    cat: Catalog, entries: Sequence[str | PubTable], search_path: Sequence[str]
) -> list[PublicationTable]:
    out: list[PublicationTable] = []
    for e in entries:
        pt = PubTable(e) if isinstance(e, str) else e
        try:
            t = cat.resolve_table(pt.name, search_path)
        except LakeError as err:
            if err.sqlstate != "42809":
                raise
            raise LakeError(
                "22023",
                f'cannot add relation "{pt.name.rpartition(".")[2]}" to publication',
                detail="This operation is not supported for views.",
            ) from None
        if is_temp_schema(t.schema):
            raise LakeError(
                "22023",
                f'cannot add relation "{t.name}" to publication',
                detail="This operation is not supported for temporary tables.",
            )
        same = next((x for x in out if x.table_oid == t.oid), None)
        if same is not None:  # (OpenTableList: a table named twice counts once, unless qualified)
            if pt.row_filter is not None or same.row_filter is not None:
                raise LakeError("42710", f'conflicting or redundant WHERE clauses for table "{t.name}"')
            if pt.columns is not None or same.columns is not None:
                raise LakeError("42710", f'conflicting or redundant column lists for table "{t.name}"')
            continue
        for i, c in enumerate(pt.columns or ()):  # (publication_translate_columns, column by column)
            col = t.column(c)
            if col is None:
                raise LakeError("42703", f'column "{c}" of relation "{t.name}" does not exist')
            if col.generation is not None:
                raise LakeError("42P10", f'cannot use generated column "{c}" in publication column list')
            if c in (pt.columns or ())[:i]:
                raise LakeError("42710", f'duplicate column "{c}" in publication column list')
        if pt.row_filter is not None and not isinstance(pt.row_filter, RowFilterExpr):
            raise TypeError(
                "a row filter is given cooked: walsender_proxy.sql.rowfilter_sql.from_text(text, table)"
            )
        out.append(PublicationTable(t.oid, pt.columns, pt.row_filter))
    return out


def _schemas(cat: Catalog, names: Sequence[str], *, dropping: bool = False) -> list[str]:
    """A TABLES IN SCHEMA list as PostgreSQL takes it: each named once, each existing
    (3F000), none a system schema (22023)."""
    out: list[str] = []
    for s in names:
        if s in ("pg_catalog", "pg_toast") and not dropping:
            raise LakeError(
                "22023",
                f'cannot add schema "{s}" to publication',
                detail="This operation is not supported for system schemas.",
            )
        if s not in cat.schemas and s not in ("pg_catalog", "pg_toast", "information_schema"):
            raise LakeError("3F000", f'schema "{s}" does not exist')
        if s not in out:
            out.append(s)
    return out


def _no_column_lists_with_schemas(cat: Catalog, name: str, entries: Sequence[PublicationTable], schemas: bool) -> None:
    """CheckPubRelationColumnList: a publication with TABLES IN SCHEMA takes no column list."""
    for e in entries:
        if schemas and e.columns is not None:
            t = cat.tables[e.table_oid]
            raise LakeError(
                "22023",
                f'cannot use column list for relation "{t.schema}.{t.name}" in publication "{name}"',
                detail="Column lists cannot be specified in publications containing FOR TABLES IN SCHEMA elements.",
            )


def create_publication(
    cat: Catalog,
    alloc: Alloc,
    name: str,
    all_tables: bool,
    tables: Sequence[str | PubTable],
    schemas: Sequence[str],
    publish: str,
    via_root: bool,
    search_path: Sequence[str],
    owner: str = "postgres",
) -> tuple[list[CatalogOp], None]:
    if name in cat.publications:
        raise LakeError("42710", f'publication "{name}" already exists')
    schemas = _schemas(cat, schemas)
    ops = parse_publish(publish)
    entries = _pub_tables(cat, tables, search_path)
    _no_column_lists_with_schemas(cat, name, entries, bool(schemas))
    p = Publication(
        alloc(),
        name,
        all_tables,
        ops["insert"],
        ops["update"],
        ops["delete"],
        ops["truncate"],
        via_root,
        tuple(entries),
        tuple(schemas),
        owner,
    )
    return [{"op": "put_publication", "publication": p.to_json()}], None


def alter_publication(
    cat: Catalog,
    alloc: Alloc,
    name: str,
    add_tables: Sequence[str | PubTable],
    drop_tables: Sequence[str | PubTable],
    set_tables: Sequence[str | PubTable] | None,
    add_schemas: Sequence[str],
    drop_schemas: Sequence[str],
    set_schemas: Sequence[str] | None,
    publish: str | None,
    via_root: bool | None,
    search_path: Sequence[str],
) -> tuple[list[CatalogOp], None]:
    p = cat.publications.get(name)
    if p is None:
        raise LakeError("42704", f'publication "{name}" does not exist')
    if p.all_tables and (
        add_tables
        or drop_tables
        or set_tables is not None
        or add_schemas
        or drop_schemas
        or set_schemas is not None
    ):
        raise LakeError(
            "55000",
            f'publication "{name}" is defined as FOR ALL TABLES',
            detail="Tables cannot be added to or dropped from FOR ALL TABLES publications.",
        )
    tables = list(p.tables)
    if set_tables is not None:
        tables = _pub_tables(cat, set_tables, search_path)
        _no_column_lists_with_schemas(cat, name, tables, bool(set_schemas))
    added = _pub_tables(cat, add_tables, search_path)
    _no_column_lists_with_schemas(cat, name, added, bool(add_schemas or p.schemas))
    for e in added:
        if any(x.table_oid == e.table_oid for x in tables):
            t = cat.tables[e.table_oid]
            raise LakeError(
                "42710", f'relation "{t.name}" is already member of publication "{name}"'
            )
        tables.append(e)
    for d in drop_tables:
        entry = d if isinstance(d, PubTable) else PubTable(d)
        if entry.columns is not None:
            raise LakeError("42601", "column list must not be specified in ALTER PUBLICATION ... DROP")
        t = cat.resolve_table(entry.name, search_path)
        if not any(x.table_oid == t.oid for x in tables):
            raise LakeError("42704", f'relation "{t.name}" is not part of the publication')
        if entry.row_filter is not None:
            raise LakeError("42601", "cannot use a WHERE clause when removing a table from a publication")
        tables = [x for x in tables if x.table_oid != t.oid]
    add_schemas = _schemas(cat, add_schemas)
    drop_schemas = _schemas(cat, drop_schemas, dropping=True)
    set_schemas = None if set_schemas is None else _schemas(cat, set_schemas)
    schemas = list(p.schemas) if set_schemas is None else list(set_schemas)
    if add_schemas and any(x.columns is not None for x in tables):
        raise LakeError(
            "22023",
            f'cannot add schema to publication "{name}"',
            detail="Schemas cannot be added if any tables that specify a column list are already part of the publication.",
        )
    for s in add_schemas:
        if s in schemas:
            raise LakeError("42710", f'schema "{s}" is already member of publication "{name}"')
        schemas.append(s)
    for s in drop_schemas:
        if s not in schemas:
            raise LakeError("42704", f'tables from schema "{s}" are not part of the publication')
        schemas.remove(s)
    p2 = replace(p, tables=tuple(tables), schemas=tuple(schemas))
    if publish is not None:
        o = parse_publish(publish)
        p2 = replace(
            p2, insert=o["insert"], update=o["update"], delete=o["delete"], truncate=o["truncate"]
        )
    if via_root is not None:
        p2 = replace(p2, via_root=via_root)
    return [{"op": "put_publication", "publication": p2.to_json()}], None


def drop_publication(
    cat: Catalog, alloc: Alloc, name: str, if_exists: bool
) -> tuple[list[CatalogOp], None]:
    if name not in cat.publications:
        if if_exists:
            return [], None
        raise LakeError("42704", f'publication "{name}" does not exist')
    return [{"op": "drop_publication", "name": name}], None
