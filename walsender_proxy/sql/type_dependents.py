"""What depends on a user type (a domain, an enum or a composite type), dropped before the type goes by
DROP … CASCADE or DROP SCHEMA … CASCADE: the columns declared with it (or with its array
type) and the domains over it. Shared by ``domain_sql`` and ``enum_sql``."""

from __future__ import annotations

from decoding.catalog import Domain
from walsender_proxy.lake import Transaction
from walsender_proxy.lake.domains import dependent_objects
from walsender_proxy.sql.ddl_names import unsupported


def drop_dependents(
    tx: Transaction, oids: list[int], tables_going: frozenset[int] = frozenset(), *, domains_too: bool = True
) -> list[tuple[int, str]]:
    """Drop what depends on the user types ``oids`` (domains, enums) before they go: the
    columns declared with them (but those of ``tables_going``, which go whole) and,
    ``domains_too``, the domains over them. Returns each with the
    named type it hangs from, as the NOTICE names them."""
    cat = tx.catalog()
    gone: list[tuple[int, str]] = []
    over: list[Domain] = []
    for oid in oids:
        for dep in dependent_objects(cat, oid, frozenset(oids), tables_going):
            gone.append((oid, dep.describe()))
            if dep.domain is not None:
                over.append(dep.domain)
                continue
            if dep.composite is not None:
                tx.drop_composite_attribute(dep.composite.oid, dep.column)
                continue
            assert dep.table is not None
            if len(tx.table(dep.table.qualified_name).columns) == 1:
                raise unsupported("a table without columns (DROP … CASCADE of its last column's type)")
            tx.drop_column(dep.table.qualified_name, dep.column)
    if over and domains_too:
        tx.drop_domains([d.oid for d in reversed(over)])
    return gone
