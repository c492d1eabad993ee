"""CHECK constraint DDL as pure functions over the catalog: ADD (named as PostgreSQL's
AddRelationNewConstraints and ChooseConstraintName name it), DROP, VALIDATE, RENAME, and
what DROP COLUMN does to a check that names the column.

The lake cannot analyse SQL: the SQL layer cooks the expression and hands over a
:class:`CheckSpec` holding PostgreSQL's printed texts and the DuckDB expression the lake
evaluates (``checks.py``), all naming columns by attnum (:data:`decoding.catalog.CHECK_MARK`),
so a renamed column needs no rewriting here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from decoding.catalog import Catalog, CatalogOp, Check, Table, choose_name
from walsender_proxy.lake import index_ddl
from walsender_proxy.lake.errors import LakeError
from walsender_proxy.lake.foreign_key_ddl import constraint_names

Alloc = Callable[[], int]


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """A cooked CHECK constraint as a statement wrote it (``name`` None: to be chosen)."""

    name: str | None
    expr: str
    pretty: str
    duck: str
    attnums: tuple[int, ...]
    not_valid: bool = False
    no_inherit: bool = False


def _relation_constraints(t: Table) -> set[str]:
    """The names of ``t``'s constraints (MergeWithExistingConstraint and
    ConstraintNameIsUsed look at the relation's)."""
    out = {c.name for c in t.checks} | {fk.name for fk in t.foreign_keys}
    out |= {ix.name for ix in t.indexes if ix.constraint}
    if t.primary_key:
        out.add(t.pkey_name)
    return out


def choose_check_name(cat: Catalog, t: Table, attnums: Sequence[int], chosen: Sequence[str] = ()) -> str:
    """``<table>_<column>_check`` when the expression names exactly one column, else
    ``<table>_check``; then ``…_check1``, ``2``… until no constraint of the schema (nor one
    ``chosen`` earlier in the same statement) has it."""
    by_num = {c.attnum: c.name for c in t.columns}
    column = by_num.get(attnums[0], "") if len(set(attnums)) == 1 else ""
    taken = constraint_names(cat, t.schema) | set(chosen)
    n = 0
    while True:
        name = choose_name(t.name, column, "check" if n == 0 else f"check{n}")
        if name not in taken:
            return name
        n += 1


def add_checks(
    cat: Catalog, alloc: Alloc, table: str | Table, specs: Sequence[CheckSpec], search_path: Sequence[str], *, in_create: bool = False
) -> tuple[list[CatalogOp], tuple[Table, list[Check]]]:
    """The table with its new checks, named in order as AddRelationNewConstraints names
    them (``in_create``: CREATE TABLE's, whose duplicate names are ``check constraint "c"
    already exists``); the caller checks the rows unless NOT VALID."""
    t = table if isinstance(table, Table) else cat.resolve_table(table, search_path)
    t = cat.tables.get(t.oid, t)
    existing = _relation_constraints(t)
    chosen: list[str] = []
    made: list[Check] = []
    for spec in specs:
        if spec.name is not None:
            if spec.name in chosen:
                raise LakeError("42710", f'check constraint "{spec.name}" already exists')
            chosen.append(spec.name)
            if spec.name in existing:
                raise LakeError("42710", f'constraint "{spec.name}" for relation "{t.name}" already exists')
            name = spec.name
        else:
            t_now = replace(t, checks=(*t.checks, *made))
            name = choose_check_name(cat, t_now, spec.attnums, chosen)
            chosen.append(name)
        made.append(
            Check(
                oid=alloc(),
                name=name,
                expr=spec.expr,
                pretty=spec.pretty,
                duck=spec.duck,
                attnums=tuple(spec.attnums),
                validated=not spec.not_valid or in_create,
                no_inherit=spec.no_inherit,
            )
        )
        if spec.no_inherit and t.partition_key is not None:  # (StoreRelCheck)
            raise LakeError("42P16", f'cannot add NO INHERIT constraint to partitioned table "{t.name}"')
    if not made:
        return [], (t, [])
    t2 = replace(t, checks=(*t.checks, *made))
    return [{"op": "put_table", "table": t2.to_json()}], (t2, made)


def find_check(t: Table, name: str) -> Check | None:
    return next((c for c in t.checks if c.name == name), None)


def validate_check(
    cat: Catalog, alloc: Alloc, table: str, name: str, search_path: Sequence[str]
) -> tuple[list[CatalogOp], tuple[Table, Check] | None]:
    """VALIDATE CONSTRAINT of a check: marked valid (the caller checks the rows first);
    None when it already was."""
    t = cat.resolve_table(table, search_path)
    c = find_check(t, name)
    assert c is not None
    if c.validated:
        return [], None
    moved = replace(c, validated=True)
    t2 = replace(t, checks=tuple(moved if x is c else x for x in t.checks))
    return [{"op": "put_table", "table": t2.to_json()}], (t2, moved)


def drop_check(cat: Catalog, table: str, name: str, search_path: Sequence[str]) -> tuple[list[CatalogOp], None]:
    t = cat.resolve_table(table, search_path)
    t2 = replace(t, checks=tuple(c for c in t.checks if c.name != name))
    return [{"op": "put_table", "table": t2.to_json()}], None


def rename_check(
    cat: Catalog, alloc: Alloc, table: str, name: str, new_name: str, search_path: Sequence[str]
) -> tuple[list[CatalogOp], None]:
    """RENAME CONSTRAINT of a check (RenameConstraintById: 42710 when the relation has a
    constraint of that name)."""
    t = cat.resolve_table(table, search_path)
    if new_name in _relation_constraints(t):
        raise LakeError("42710", f'constraint "{new_name}" for relation "{t.name}" already exists')
    t2 = replace(t, checks=tuple(replace(c, name=new_name) if c.name == name else c for c in t.checks))
    return [{"op": "put_table", "table": t2.to_json()}], None


def after_drop_column(t: Table, attnum: int) -> tuple[Check, ...]:
    """DROP COLUMN drops every check naming the column (PostgreSQL records an AUTO
    dependency of the constraint on each column it references)."""
    return tuple(c for c in t.checks if attnum not in c.attnums)


def drop_constraint(
    cat: Catalog, alloc: Alloc, table: str, name: str, if_exists: bool, search_path: Sequence[str], cascade: bool = False
) -> tuple[list[CatalogOp], list[str]]:
    """ALTER TABLE … DROP CONSTRAINT: a check (nothing depends on one), else a key's."""
    t = cat.resolve_table(table, search_path)
    if find_check(t, name) is not None:
        return drop_check(cat, table, name, search_path)[0], []
    return index_ddl.drop_constraint(cat, alloc, table, name, if_exists, search_path, cascade)


def rename_constraint(
    cat: Catalog, alloc: Alloc, table: str, name: str, new_name: str, search_path: Sequence[str]
) -> tuple[list[CatalogOp], None]:
    t = cat.resolve_table(table, search_path)
    if find_check(t, name) is not None:
        return rename_check(cat, alloc, table, name, new_name, search_path)
    return index_ddl.rename_constraint(cat, alloc, table, name, new_name, search_path)
