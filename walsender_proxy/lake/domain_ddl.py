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
    """A type of that name in that schema: a domain, or the row type of a relation."""
    return cat.find_domain(schema, name) is not None or cat.relation_exists(schema, name)


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


def drop_domains(cat: Catalog, alloc: Alloc, oids: Sequence[int], cascade: bool) -> tuple[list[CatalogOp], None]:
    """DROP DOMAIN: 2BP01 while a column or another domain uses one (CASCADE, which would
    drop those columns, is refused by name)."""
    for oid in oids:
        deps = [d for d in domains.dependents(cat, oid) if not any(f"type {cat.domains[o].name} depends" in d for o in oids if o != oid)]
        if deps and cascade:
            raise LakeError("0A000", "DROP DOMAIN … CASCADE of a domain in use is not supported by walsender-proxy")
        if deps:
            several = len(oids) > 1  # (findDependentObjects' message for a list of objects)
            raise LakeError(
                "2BP01",
                "cannot drop desired object(s) because other objects depend on them"
                if several
                else f"cannot drop type {cat.domains[oid].name} because other objects depend on it",
                detail="\n".join(deps),
                hint="Use DROP ... CASCADE to drop the dependent objects too.",
            )
    return [{"op": "drop_domain", "oid": oid} for oid in oids], None
