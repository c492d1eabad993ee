"""FOREIGN KEY DDL as pure functions over the catalog: ADD (its checks and its name as
PostgreSQL's ATAddForeignKeyConstraint makes them), DROP, VALIDATE, and what dropping
or renaming the objects a foreign key depends on does to it.

A foreign key is part of its referencing table's definition
(:attr:`decoding.catalog.Table.foreign_keys`); the rows are checked against it by
``foreign_keys.py`` on every write of either table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from decoding.catalog import (
    Catalog,
    CatalogOp,
    Column,
    ForeignKey,
    Table,
    choose_name,
    is_temp_schema,
    name_addition,
)
from walsender_proxy.lake.domains import shown
from walsender_proxy.lake.errors import LakeError

Alloc = Callable[[], int]

#: Types whose values DuckDB compares across as PostgreSQL's cross-type equality does
#: (integer_ops, float_ops, an implicit cast to the referenced column's type).
_INTEGERS = frozenset({"int2", "int4", "int8"})
_FLOATS = frozenset({"float4", "float8"})
_STRINGS = frozenset({"text", "varchar"})


@dataclass(frozen=True, slots=True)
class ForeignKeySpec:
    """A FOREIGN KEY as a statement wrote it (``ref_columns`` empty: the primary key's)."""

    name: str | None
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...] = ()
    on_update: str = "a"
    on_delete: str = "a"
    match_full: bool = False
    set_columns: tuple[str, ...] = ()
    not_valid: bool = False
    deferrable: bool = False
    initially_deferred: bool = False


def constraint_names(cat: Catalog, schema: str) -> set[str]:
    """Every constraint name of ``schema`` (ChooseConstraintName avoids them all)."""
    out: set[str] = set()
    for t in cat.tables.values():
        if t.schema != schema:
            continue
        if t.primary_key:
            out.add(t.pkey_name)
        out.update(ix.name for ix in t.indexes if ix.constraint)
        out.update(fk.name for fk in t.foreign_keys)
        out.update(c.name for c in t.checks)
    return out


def _constraint_name(cat: Catalog, t: Table, columns: Sequence[str]) -> str:
    """ChooseForeignKeyConstraintNameAddition + ChooseConstraintName: ``<table>_<cols>_fkey``,
    then ``…_fkey1``, ``2``… until no constraint of the schema has it."""
    addition = name_addition(columns)
    taken = constraint_names(cat, t.schema)
    n = 0
    while True:
        name = choose_name(t.name, addition, "fkey" if n == 0 else f"fkey{n}")
        if name not in taken:
            return name
        n += 1


def _columns(t: Table, names: Sequence[str]) -> list[Column]:
    out = []
    for n in names:
        col = t.column(n)
        if col is None:
            raise LakeError("42703", f'column "{n}" referenced in foreign key constraint does not exist')
        out.append(col)
    return out


def _sql_type(col: Column, cat: Catalog | None = None) -> str:
    """format_type_be: the type's name without its modifier (an enum's by the catalog)."""
    en = cat.enum_of(col.type) if cat is not None else None
    if en is not None:
        return shown(en) + ("[]" if col.type.is_array else "")
    return replace(col.type, typmod=-1).sql_name()


def check_types(name: str, fk: Column, pk: Column, cat: Catalog | None = None) -> None:
    """The referencing column's type against the referenced one's: PostgreSQL needs an
    equality operator of the key's B-tree family taking both, or an implicit cast to the
    key's type (42804 otherwise). Of the pairs PostgreSQL accepts, the lake takes those
    whose values DuckDB compares the same way; the others (character with padding, names,
    date/time types compared across time zones, arrays of two types) are refused rather
    than compared differently."""
    a, b = fk.type, pk.type
    if a.is_enum or b.is_enum:  # (one enum on both sides: the same type, no cast between two)
        if a.base != b.base or a.is_array != b.is_array:
            raise LakeError(
                "42804",
                f'foreign key constraint "{name}" cannot be implemented',
                detail=f'Key columns "{fk.name}" and "{pk.name}" are of incompatible types: {_sql_type(fk, cat)} and {_sql_type(pk, cat)}.',
            )
        return
    if a == b or (a.base.name == b.base.name and a.is_array == b.is_array and a.base.name != "bpchar"):
        return  # (character(n) keeps its padding: only the same length compares as PostgreSQL)
    fa, fb = a.base.name, b.base.name
    if not a.is_array and not b.is_array:
        if (fa in _INTEGERS and fb in _INTEGERS) or (fa in _FLOATS and fb in _FLOATS):
            return
        if fa in _INTEGERS and (fb in _FLOATS or (fb == "numeric" and b.typmod >= 0)):
            return
        if fa in _STRINGS and fb in _STRINGS:
            return
    if _pg_accepts(a, b):
        raise LakeError(
            "0A000",
            f"a foreign key from a column of type {_sql_type(fk)} to one of type {_sql_type(pk)} "
            "is not supported by walsender-proxy",
            hint="Give the referencing column the referenced column's type.",
        )
    raise LakeError(
        "42804",
        f'foreign key constraint "{name}" cannot be implemented',
        detail=f'Key columns "{fk.name}" and "{pk.name}" are of incompatible types: {_sql_type(fk)} and {_sql_type(pk)}.',
    )


def _pg_accepts(a: object, b: object) -> bool:
    """Whether PostgreSQL 15 would make the key (a cross-type equality operator of the
    referenced type's B-tree family, or an implicit cast to it) for the pairs the lake
    does not take."""
    if getattr(a, "is_array", False) or getattr(b, "is_array", False):
        return bool(getattr(a, "is_array", False) and getattr(b, "is_array", False))  # (anyarray's array_ops)
    fa, fb = a.base.name, b.base.name  # type: ignore[attr-defined]
    numeric = _INTEGERS | _FLOATS | {"numeric"}
    if fa in numeric and fb in numeric:
        # integer_ops/float_ops cover their own; numeric takes ints implicitly, float8
        # takes ints and numeric; nothing casts implicitly down to an integer
        return fb == "float8" or (fb == "float4" and fa != "numeric") or (fb == "numeric" and fa in _INTEGERS)
    strings = _STRINGS | {"bpchar", "name"}
    if fa == fb:
        return True
    if fa in strings and fb in strings:
        return True
    datetimes = {"date", "timestamp", "timestamptz"}
    if fa in datetimes and fb in datetimes:
        return True
    return fa == "time" and fb == "timetz"


def _same_temp(t: Table, ref: Table) -> None:
    if is_temp_schema(t.schema) and not is_temp_schema(ref.schema):
        raise LakeError("42P16", "constraints on temporary tables may reference only temporary tables")
    if not is_temp_schema(t.schema) and is_temp_schema(ref.schema):
        raise LakeError("42P16", "constraints on permanent tables may reference only permanent tables")
    if is_temp_schema(t.schema) and t.schema != ref.schema:
        raise LakeError("42P16", "constraints on temporary tables must involve temporary tables of this session")


def _referenced(cat: Catalog, spec: ForeignKeySpec, search_path: Sequence[str]) -> Table:
    schema, dot, rel = spec.ref_table.rpartition(".")
    for s in [schema] if dot else search_path:
        t = cat.find_table(s, rel)
        if t is not None:
            return t
        if cat.find_view(s, rel) is not None or cat.find_sequence(s, rel) is not None:
            raise LakeError("42809", f'referenced relation "{rel}" is not a table')
    raise LakeError("42P01", f'relation "{spec.ref_table}" does not exist')


def _ref_key(ref: Table, spec: ForeignKeySpec) -> tuple[list[Column], int]:
    """The referenced columns and the unique index they match (0: the primary key's):
    transformFkeyGetPrimaryKey / transformFkeyCheckAttrs."""
    if not spec.ref_columns:
        if not ref.primary_key:
            raise LakeError("42704", f'there is no primary key for referenced table "{ref.name}"')
        return _columns(ref, ref.primary_key), 0
    cols = _columns(ref, spec.ref_columns)
    if len(set(spec.ref_columns)) != len(spec.ref_columns):
        raise LakeError("42830", "foreign key referenced-columns list must not contain duplicates")
    want = set(spec.ref_columns)
    if ref.primary_key and set(ref.primary_key) == want and len(ref.primary_key) == len(want):
        return cols, 0
    for ix in ref.indexes:
        if ix.unique and set(ix.columns) == want and len(ix.columns) == len(want) and not ix.nulls_not_distinct and ix.predicate is None:
            return cols, ix.oid
    raise LakeError("42830", f'there is no unique constraint matching given keys for referenced table "{ref.name}"')


def add_foreign_key(
    cat: Catalog, alloc: Alloc, table: str | Table, spec: ForeignKeySpec, search_path: Sequence[str]
) -> tuple[list[CatalogOp], tuple[Table, ForeignKey]]:
    """The referencing table with its new foreign key, after PostgreSQL's checks in its
    order; the rows are validated by the caller (unless ``not_valid``)."""
    t = table if isinstance(table, Table) else cat.resolve_table(table, search_path)
    t = cat.tables.get(t.oid, t)
    ref = _referenced(cat, spec, search_path)
    if ref.oid == t.oid:
        ref = t
    _same_temp(t, ref)
    fk_cols = _columns(t, spec.columns)
    pk_cols, index = _ref_key(ref, spec)
    for c in spec.set_columns:
        if c not in spec.columns:
            _columns(t, [c])
            raise LakeError("42P10", f'column "{c}" referenced in ON DELETE SET action must be part of foreign key')
    if len(fk_cols) != len(pk_cols):
        raise LakeError("42830", "number of referencing and referenced columns for foreign key disagree")
    if any(c.generation is not None for c in fk_cols):  # (the SQL standard's restrictions)
        if spec.on_update in ("n", "d", "c"):
            raise LakeError("42601", "invalid ON UPDATE action for foreign key constraint containing generated column")
        if spec.on_delete in ("n", "d"):
            raise LakeError("42601", "invalid ON DELETE action for foreign key constraint containing generated column")
    taken = {fk.name for fk in t.foreign_keys} | ({t.pkey_name} if t.primary_key else set())
    taken |= {ix.name for ix in t.indexes if ix.constraint} | {c.name for c in t.checks}
    if spec.name is not None and spec.name in taken:
        raise LakeError("42710", f'constraint "{spec.name}" for relation "{t.name}" already exists')
    name = spec.name if spec.name is not None else _constraint_name(cat, t, spec.columns)
    for a, b in zip(fk_cols, pk_cols, strict=True):
        check_types(name, a, b, cat)
    for action in (spec.on_update, spec.on_delete):
        if action == "d":
            raise LakeError(
                "0A000",
                "ON DELETE/ON UPDATE SET DEFAULT of a foreign key is not supported by walsender-proxy",
                hint="Use SET NULL, CASCADE, RESTRICT or NO ACTION.",
            )
    fk = ForeignKey(
        oid=alloc(),
        name=name,
        columns=tuple(spec.columns),
        ref_oid=ref.oid,
        ref_attnums=tuple(c.attnum for c in pk_cols),
        ref_index=index,
        on_update=spec.on_update,
        on_delete=spec.on_delete,
        match_full=spec.match_full,
        set_columns=tuple(spec.set_columns),
        validated=not spec.not_valid,
        deferrable=spec.deferrable,
        initially_deferred=spec.initially_deferred,
    )
    t2 = replace(t, foreign_keys=(*t.foreign_keys, fk))
    return [{"op": "put_table", "table": t2.to_json()}], (t2, fk)


def validate_foreign_key(
    cat: Catalog, alloc: Alloc, table: str, name: str, search_path: Sequence[str]
) -> tuple[list[CatalogOp], tuple[Table, ForeignKey] | None]:
    """ALTER TABLE … VALIDATE CONSTRAINT: the key marked valid (the caller checks the rows
    first); None when it already was."""
    t = cat.resolve_table(table, search_path)
    fk = next((f for f in t.foreign_keys if f.name == name), None)
    if fk is None:
        if (t.primary_key and t.pkey_name == name) or any(ix.constraint and ix.name == name for ix in t.indexes):
            raise LakeError(
                "42809",
                f'constraint "{name}" of relation "{t.name}" is not a foreign key or check constraint',
            )
        raise LakeError("42704", f'constraint "{name}" of relation "{t.name}" does not exist')
    if fk.validated:
        return [], None
    moved = replace(fk, validated=True)
    t2 = replace(t, foreign_keys=tuple(moved if f is fk else f for f in t.foreign_keys))
    return [{"op": "put_table", "table": t2.to_json()}], (t2, moved)


def without(t: Table, fk: ForeignKey) -> Table:
    return replace(t, foreign_keys=tuple(f for f in t.foreign_keys if f.oid != fk.oid))


def described(t: Table, fk: ForeignKey) -> str:
    """The constraint as PostgreSQL's dependency messages name it."""
    return f"constraint {fk.name} on table {t.name}"


def referencing_index(cat: Catalog, ref: Table, index: int) -> list[tuple[Table, ForeignKey]]:
    """The foreign keys made against ``ref``'s unique index ``index`` (0: its primary key)."""
    return [(t, fk) for t, fk in cat.referencing(ref.oid) if fk.ref_index == index]


def drop_referencing(
    cat: Catalog, found: Sequence[tuple[Table, ForeignKey]], what: str, cascade: bool, lines_of: Callable[[Table, ForeignKey], str]
) -> tuple[list[CatalogOp], list[str]]:
    """The ops removing ``found`` foreign keys (CASCADE), or 2BP01 naming them; the
    NOTICE lines ("drop cascades to constraint … on table …")."""
    if not found:
        return [], []
    if not cascade:
        raise LakeError(
            "2BP01",
            f"cannot drop {what} because other objects depend on it",
            detail="\n".join(lines_of(t, fk) for t, fk in found),
            hint="Use DROP ... CASCADE to drop the dependent objects too.",
        )
    tables: dict[int, Table] = {}
    for t, fk in found:
        tables[t.oid] = without(tables.get(t.oid, t), fk)
    return [{"op": "put_table", "table": t.to_json()} for t in tables.values()], [described(t, fk) for t, fk in found]


def after_rename_column(fks: Sequence[ForeignKey], name: str, new_name: str) -> tuple[ForeignKey, ...]:
    def renamed(names: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(new_name if n == name else n for n in names)

    return tuple(replace(fk, columns=renamed(fk.columns), set_columns=renamed(fk.set_columns)) for fk in fks)
