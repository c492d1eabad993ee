"""Composite-type DDL as pure functions over the catalog: CREATE TYPE … AS (…), DROP TYPE
and the attributes DROP … CASCADE takes away (PostgreSQL 15's ``DefineCompositeType``,
``RemoveTypeById`` and the column drops of ``findDependentObjects``).

The lake knows no SQL: a type arrives with its attributes' types resolved by the SQL layer.
A composite type's ``pg_class`` row shares the namespace of relations, its ``pg_type`` row
that of types: OIDs are given as PostgreSQL gives them (the relation's, then the array
type's, then the type's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from decoding.catalog import Catalog, CatalogOp, CompositeType, dropped_attribute
from walsender_proxy.lake import domains
from walsender_proxy.lake.domain_ddl import type_exists
from walsender_proxy.lake.errors import LakeError

Alloc = Callable[[], int]


def create_composite(cat: Catalog, alloc: Alloc, new: CompositeType) -> tuple[list[CatalogOp], CompositeType]:
    """``new`` with its OIDs still to give."""
    if new.schema not in cat.schemas:
        raise LakeError("3F000", f'schema "{new.schema}" does not exist')
    if type_exists(cat, new.schema, new.name):
        raise LakeError("42710", f'type "{new.name}" already exists')
    seen: set[str] = set()
    for name, _ in new.attributes:
        if name in seen:
            raise LakeError("42701", f'column "{name}" specified more than once')
        seen.add(name)
    relid = alloc()
    array_oid = alloc()
    ct = replace(new, relid=relid, array_oid=array_oid, oid=alloc())
    return [{"op": "put_composite", "composite": ct.to_json()}], ct


def rename_composite(cat: Catalog, alloc: Alloc, oid: int, new_name: str) -> tuple[list[CatalogOp], None]:
    """ALTER TYPE … RENAME TO (the pg_class row goes along: 42P07 if a relation has the
    name, 42710 if a type has)."""
    ct = cat.composites[oid]
    if cat.relation_exists(ct.schema, new_name):
        raise LakeError("42P07", f'relation "{new_name}" already exists')
    if type_exists(cat, ct.schema, new_name):
        raise LakeError("42710", f'type "{new_name}" already exists')
    return [{"op": "put_composite", "composite": replace(ct, name=new_name).to_json()}], None


def drop_attribute(cat: Catalog, alloc: Alloc, oid: int, name: str) -> tuple[list[CatalogOp], None]:
    """An attribute taken away by DROP … CASCADE of the type it is declared with."""
    ct = cat.composites[oid]
    attrs = tuple((dropped_attribute(i), t) if n == name else (n, t) for i, (n, t) in enumerate(ct.attributes, 1))
    ct = replace(ct, attributes=attrs)
    return [{"op": "put_composite", "composite": ct.to_json()}], None


def drop_composites(cat: Catalog, alloc: Alloc, oids: Sequence[int]) -> tuple[list[CatalogOp], None]:
    """DROP TYPE of composite types: 2BP01 while an attribute, a column or a domain not
    dropped with them uses one (the SQL layer drops those first for CASCADE)."""
    domains.refuse_if_used(cat, oids, domains.shown(cat.composites[oids[0]]))
    return [{"op": "drop_composite", "oid": oid} for oid in oids], None
