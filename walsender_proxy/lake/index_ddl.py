"""Index DDL as pure functions over the catalog: CREATE INDEX (its name chosen as
PostgreSQL's ChooseIndexName chooses it), DROP INDEX, UNIQUE constraints, and what
DROP COLUMN and RENAME COLUMN do to the indexes over a column.

An index is part of its table's definition (:attr:`decoding.catalog.Table.indexes`): a
unique one is a rule every write is checked against (lake.py), a plain one is metadata
only: the lake's scans gain nothing from a B-tree, so none is built.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import pyarrow as pa

from decoding.catalog import (
    Catalog,
    CatalogOp,
    Column,
    Index,
    IndexExpr,
    Table,
    choose_name,
    name_addition,
    pkey_name,
)
from walsender_proxy.lake import foreign_key_ddl, view_ddl
from walsender_proxy.lake.errors import LakeError

Alloc = Callable[[], int]


def _split(name: str, search_path: Sequence[str]) -> tuple[str | None, str]:
    schema, dot, rel = name.rpartition(".")
    return (schema if dot else None), rel


def choose_index_name(cat: Catalog, t: Table, columns: Sequence[str], label: str) -> str:
    """ChooseIndexName: ``<table>_<col>_<col>_<label>``, then ``…_<label>1``, ``2``… until no
    relation of the table's schema has it (``label``: ``idx``, ``key`` for a UNIQUE
    constraint)."""
    addition = name_addition(columns)
    n = 0
    while True:
        name = choose_name(t.name, addition, label if n == 0 else f"{label}{n}")
        if not cat.relation_exists(t.schema, name):
            return name
        n += 1


def check_key_column(col: Column, unique: bool) -> None:
    """A column an index may have: json has no B-tree operator class (PostgreSQL's 42704);
    a unique key is compared by the stored value, so a type whose stored form is not its
    equality (numeric without a scale kept as its text, ``1.0`` vs ``1.00``; interval's
    ``1 day`` = ``24 hours``; jsonb's numbers) is refused rather than checked wrongly."""
    base = col.type.base.name
    if base == "json":
        raise LakeError(
            "42704",
            f'data type {"json[]" if col.type.is_array else "json"} has no default operator class for access method "btree"',
            hint="You must specify an operator class for the index or define a default operator class for the data type.",
        )
    if not unique:
        return
    scalar = col.type.arrow.value_type if col.type.is_array else col.type.arrow
    if (base == "numeric" and pa.types.is_string(scalar)) or base in ("interval", "jsonb"):
        what = "numeric without a precision and scale" if base == "numeric" else base
        raise LakeError(
            "0A000",
            f'a unique key over a column of type {what} ("{col.name}") is not supported by walsender-proxy',
            hint="The lake compares keys by their stored form, which for this type differs from PostgreSQL's equality."
            + (
                " Give the column a precision and scale, as numeric(30,6)."
                if base == "numeric"
                else ""
            ),
        )


def create_index(
    cat: Catalog,
    alloc: Alloc,
    table: str,
    name: str | None,
    columns: tuple[str, ...],
    unique: bool,
    options: tuple[int, ...],
    include: tuple[str, ...],
    method: str,
    nulls_not_distinct: bool,
    if_not_exists: bool,
    constraint: bool,
    search_path: Sequence[str],
    opclasses: tuple[str, ...] = (),
    expressions: tuple[IndexExpr | None, ...] = (),
    predicate: IndexExpr | None = None,
) -> tuple[list[CatalogOp], tuple[Table, Index] | None]:
    """The table with its new index (None: IF NOT EXISTS found one of that name).
    ``constraint``: made by a UNIQUE constraint (named ``…_key`` and given a
    pg_constraint row). ``expressions``: per key column, its expression where it is one
    (its ``columns`` entry ""); ``predicate``: a partial index's WHERE."""
    t = cat.resolve_table(table, search_path)
    for c in (*columns, *include):
        if not c:
            continue  # (an expression)
        col = t.column(c)
        if col is None:
            raise LakeError("42703", f'column "{c}" does not exist')
        if c in columns:
            check_key_column(col, unique)
    if name is None:
        named = tuple(c or (e.name if e is not None else "expr") for c, e in zip(columns, expressions or (None,) * len(columns), strict=True))
        name = choose_index_name(cat, t, (*named, *include), "key" if constraint else "idx")
    elif cat.relation_exists(t.schema, name):
        if if_not_exists:
            return [], None
        raise LakeError("42P07", f'relation "{name}" already exists')
    ix = Index(
        oid=alloc(),
        name=name,
        columns=columns,
        unique=unique,
        nulls_not_distinct=nulls_not_distinct,
        method=method,
        options=options,
        include=include,
        constraint=alloc() if constraint else 0,
        opclasses=opclasses if any(opclasses) else (),
        expressions=expressions if any(expressions) else (),
        predicate=predicate,
    )
    t2 = replace(t, indexes=(*t.indexes, ix))
    return [{"op": "put_table", "table": t2.to_json()}], (t2, ix)


def drop_index(
    cat: Catalog, alloc: Alloc, name: str, if_exists: bool, search_path: Sequence[str], cascade: bool = False
) -> tuple[list[CatalogOp], list[str]]:
    """DROP INDEX; an index behind a constraint (the primary key, a UNIQUE constraint) is
    2BP01 with PostgreSQL's hint."""
    schema, rel = _split(name, search_path)
    found = None
    for s in [schema] if schema else search_path:
        found = cat.find_index(s, rel)
        if found is not None:
            break
        kind = (
            "TABLE" if cat.find_table(s, rel) else "VIEW" if cat.find_view(s, rel)
            else "SEQUENCE" if cat.find_sequence(s, rel) else None
        )  # fmt: skip
        if kind is not None:
            raise LakeError(
                "42809",
                f'"{rel}" is not an index',
                hint=f"Use DROP {kind} to remove a {kind.lower()}.",
            )
    if found is None:
        if if_exists:
            return [], []
        raise LakeError("42704", f'index "{rel}" does not exist')
    t, ix = found
    if ix is None or ix.constraint:
        raise LakeError(
            "2BP01",
            f"cannot drop index {rel} because constraint {rel} on table {t.name} requires it",
            hint=f"You can drop constraint {rel} on table {t.name} instead.",
        )
    keys, lines = _dependent_keys(cat, t, ix, f"index {rel}", cascade)
    return [*keys, {"op": "put_table", "table": without_index(_latest(keys, t), ix).to_json()}], lines


def _dependent_keys(cat: Catalog, t: Table, ix: Index, what: str, cascade: bool) -> tuple[list[CatalogOp], list[str]]:
    """The foreign keys made against ``ix``: 2BP01, or (CASCADE) the ops dropping them."""
    found = foreign_key_ddl.referencing_index(cat, t, ix.oid)
    return foreign_key_ddl.drop_referencing(
        cat, found, what, cascade, lambda c, fk: f"{foreign_key_ddl.described(c, fk)} depends on index {ix.name}"
    )


def _latest(ops: list[CatalogOp], t: Table) -> Table:
    """``t`` as ``ops`` leave it (a self-referencing key dropped with its index)."""
    for op in ops:
        if op["table"]["oid"] == t.oid:
            return Table.from_json(op["table"])
    return t


def drop_constraint(
    cat: Catalog, alloc: Alloc, table: str, name: str, if_exists: bool, search_path: Sequence[str], cascade: bool = False
) -> tuple[list[CatalogOp], list[str]]:
    """ALTER TABLE … DROP CONSTRAINT of a UNIQUE constraint (its index goes with it) or a
    FOREIGN KEY."""
    t = cat.resolve_table(table, search_path)
    fk = next((f for f in t.foreign_keys if f.name == name), None)
    if fk is not None:
        return [{"op": "put_table", "table": foreign_key_ddl.without(t, fk).to_json()}], []
    ix = t.index(name)
    if ix is None or not ix.constraint:
        if t.primary_key and t.pkey_name == name:
            return drop_primary_key(cat, t, cascade)
        if if_exists:
            return [], []
        raise LakeError("42704", f'constraint "{name}" of relation "{t.name}" does not exist')
    keys, lines = _dependent_keys(cat, t, ix, f"constraint {name} on table {t.name}", cascade)
    return [*keys, {"op": "put_table", "table": without_index(_latest(keys, t), ix).to_json()}], lines


def add_primary_key(
    cat: Catalog, alloc: Alloc, table: str, columns: tuple[str, ...], name: str | None, search_path: Sequence[str]
) -> tuple[list[CatalogOp], tuple[Table, Index]]:
    """``ALTER TABLE … ADD [CONSTRAINT name] PRIMARY KEY (columns)``: the table with its key
    and the key's columns NOT NULL, and the key as an index (for the caller's checks of the
    rows already there), after PostgreSQL's checks in its order."""
    t = cat.resolve_table(table, search_path)
    cols = []
    for c in columns:
        col = t.column(c)
        if col is None:
            raise LakeError("42703", f'column "{c}" of relation "{t.name}" does not exist')
        cols.append(col)
    if name is not None and cat.relation_exists(t.schema, name):
        raise LakeError("42P07", f'relation "{name}" already exists')
    if t.primary_key:
        raise LakeError("42P16", f'multiple primary keys for table "{t.name}" are not allowed')
    for col in cols:
        check_key_column(col, unique=True)
    chosen = name if name is not None else choose_index_name(cat, t, (), "pkey")
    t2 = replace(
        t,
        columns=tuple(replace(c, not_null=True) if c.name in columns else c for c in t.columns),
        primary_key=columns,
        pkey_index="" if chosen == pkey_name(t.name) else chosen,
    )
    key = Index(oid=0, name=chosen, columns=columns, unique=True)
    return [{"op": "put_table", "table": t2.to_json()}], (t2, key)


def drop_primary_key(cat: Catalog, t: Table, cascade: bool) -> tuple[list[CatalogOp], list[str]]:
    """``DROP CONSTRAINT <table>_pkey``: the key goes, its columns stay NOT NULL (as in
    PostgreSQL 15); the foreign keys made against it are 2BP01, or go with CASCADE."""
    found = foreign_key_ddl.referencing_index(cat, t, 0)
    what = f"constraint {t.pkey_name} on table {t.name}"
    views = [v for v in sorted(cat.views.values(), key=lambda v: v.oid) if t.oid in v.key_depends]
    if views and not cascade:  # (a view whose GROUP BY rests on the key)
        path = [v.schema for v in views]
        more = view_ddl.dependency_lines(cat, [v.oid for v in views], path)[1]
        raise view_ddl.dependents_error(what, [
            *(f"{foreign_key_ddl.described(c, fk)} depends on index {t.pkey_name}" for c, fk in found),
            *(f"{view_ddl.described(v, path)} depends on {what}" for v in views), *more,
        ])  # fmt: skip
    keys, lines = foreign_key_ddl.drop_referencing(
        cat, found, what, cascade, lambda c, fk: f"{foreign_key_ddl.described(c, fk)} depends on index {t.pkey_name}",
    )  # fmt: skip
    dropped: list[CatalogOp] = []
    for v in views:
        if {"op": "drop_view", "oid": v.oid} in dropped:  # (it reads another view dropped here)
            continue
        ops, also = view_ddl.drop_view(cat, lambda: 0, v.qualified_name, True, True, [v.schema])
        dropped += [op for op in ops if op not in dropped]
        lines += [view_ddl.described(v, [v.schema]), *also]
    latest = _latest(keys, t)
    return [*dropped, *keys, {"op": "put_table", "table": replace(latest, primary_key=(), pkey_index="").to_json()}], lines


def without_index(t: Table, ix: Index) -> Table:
    """The table without ``ix``; a replica identity using it then identifies no row
    (PostgreSQL: "the same as NOTHING")."""
    ident = t.identity_index
    if t.replica_identity == "i" and t.identity_index_name == ix.name:
        ident = ()
    return replace(t, indexes=tuple(x for x in t.indexes if x is not ix), identity_index=ident)


def after_drop_column(t: Table, name: str) -> Table:
    """DROP COLUMN drops every index over the column (and a UNIQUE constraint's with it),
    one whose expression or predicate reads it too."""
    out = t
    col = t.column(name)
    attnum = col.attnum if col is not None else -1
    for ix in t.indexes:
        if name in ix.columns or name in ix.include or attnum in ix.attnums_read:
            out = without_index(out, out.index(ix.name))  # type: ignore[arg-type]
    return out


def after_rename_column(t: Table, name: str, new_name: str) -> tuple[Index, ...]:
    def renamed(names: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(new_name if n == name else n for n in names)

    return tuple(
        replace(ix, columns=renamed(ix.columns), include=renamed(ix.include)) for ix in t.indexes
    )


def rename_index(
    cat: Catalog, alloc: Alloc, name: str, new_name: str, search_path: Sequence[str]
) -> tuple[list[CatalogOp], None]:
    """ALTER INDEX … RENAME TO (a UNIQUE constraint's index renames its constraint too)."""
    schema, rel = _split(name, search_path)
    for s in [schema] if schema else search_path:
        found = cat.find_index(s, rel)
        if found is None:
            continue
        t, ix = found
        return [{"op": "put_table", "table": _renamed(cat, t, ix, new_name).to_json()}], None
    raise LakeError("42P01", f'relation "{name}" does not exist')


def _renamed(cat: Catalog, t: Table, ix: Index | None, new_name: str) -> Table:
    """``t`` with its index ``ix`` (None: the primary key's) named ``new_name``, with the
    constraint it backs and a replica identity naming it."""
    if cat.relation_exists(t.schema, new_name):
        raise LakeError("42P07", f'relation "{new_name}" already exists')
    old = t.pkey_name if ix is None else ix.name
    ident = new_name if t.identity_index_name == old else t.identity_index_name
    if ix is None:
        return replace(t, pkey_index=new_name, identity_index_name=ident)
    moved = replace(ix, name=new_name)
    return replace(
        t, indexes=tuple(moved if x is ix else x for x in t.indexes), identity_index_name=ident
    )


def rename_constraint(
    cat: Catalog, alloc: Alloc, table: str, name: str, new_name: str, search_path: Sequence[str]
) -> tuple[list[CatalogOp], None]:
    """ALTER TABLE … RENAME CONSTRAINT of the primary key or a UNIQUE constraint (its
    index is renamed with it, as in PostgreSQL)."""
    t = cat.resolve_table(table, search_path)
    if t.primary_key and t.pkey_name == name:
        return [{"op": "put_table", "table": _renamed(cat, t, None, new_name).to_json()}], None
    ix = t.index(name)
    if ix is None or not ix.constraint:
        raise LakeError("42704", f'constraint "{name}" for table "{t.name}" does not exist')
    return [{"op": "put_table", "table": _renamed(cat, t, ix, new_name).to_json()}], None
