"""Domain DDL as pure functions over the catalog: CREATE DOMAIN, ALTER DOMAIN (the changed
domain whole) and DROP DOMAIN with the objects that depend on a domain.

The lake knows no SQL: a domain arrives analysed by the SQL layer (its base type resolved,
its DEFAULT and CHECK constraints cooked) as a :class:`decoding.catalog.Domain`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from decoding.catalog import Catalog, CatalogOp, Domain
from walsender_proxy.lake import domains
from walsender_proxy.lake.errors import LakeError

Alloc = Callable[[], int]


def type_exists(cat: Catalog, schema: str, name: str) -> bool:
    """A type of that name in that schema: a domain, an enum, or the row type of a relation."""
    return (
        cat.find_domain(schema, name) is not None
        or cat.find_enum(schema, name) is not None
        or cat.relation_exists(schema, name)
    )


def create_domain(cat: Catalog, alloc: Alloc, new: Domain) -> tuple[list[CatalogOp], Domain]:
    """``new`` with its OIDs (the domain's and its array type's) still to give."""
    if new.schema not in cat.schemas:
        raise LakeError("3F000", f'schema "{new.schema}" does not exist')
    if type_exists(cat, new.schema, new.name):
        raise LakeError("42710", f'type "{new.name}" already exists')
    dom = replace(new, oid=alloc(), array_oid=alloc())
    dom = replace(dom, checks=tuple(replace(c, oid=alloc()) if not c.oid else c for c in dom.checks))
    return [{"op": "put_domain", "domain": dom.to_json()}], dom


def alter_domain(cat: Catalog, alloc: Alloc, dom: Domain) -> tuple[list[CatalogOp], Domain]:
    """The domain as ALTER DOMAIN leaves it (a new check's OID still 0)."""
    if dom.oid not in cat.domains:
        raise LakeError("42704", f"type with OID {dom.oid} does not exist")
    dom = replace(dom, checks=tuple(replace(c, oid=alloc()) if not c.oid else c for c in dom.checks))
    return [{"op": "put_domain", "domain": dom.to_json()}], dom


def drop_domains(cat: Catalog, alloc: Alloc, oids: Sequence[int]) -> tuple[list[CatalogOp], None]:
    """DROP DOMAIN: 2BP01 while a column or a domain not dropped with them uses one (the
    SQL layer drops those first for CASCADE)."""
    domains.refuse_if_used(cat, oids, cat.domains[oids[0]].name)
    return [{"op": "drop_domain", "oid": oid} for oid in oids], None
