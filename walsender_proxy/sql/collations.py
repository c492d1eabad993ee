"""COLLATE: the collations there are and the types that take one.

The proxy compares and orders text by code point. Every collation in its pg_collation
(PostgreSQL 15's built-in ones: ``default``, ``C``, ``POSIX``, ``ucs_basic``, ``C.utf8``)
orders so, which is why a COLLATE naming one of them changes nothing and is accepted. Any
other name does not exist here — PostgreSQL's 42704, as it says for a collation its
catalog lacks — and a COLLATE on a value of a type without collations is its 42804.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from decoding.errors import PgError
from walsender_proxy.backend import pgcatalog_data as data

#: Every collation's name, and the one schema they live in.
NAMES = frozenset(r[1] for r in data.PG_COLLATION_ROWS)
_SCHEMA = "pg_catalog"


@functools.cache
def _collatable() -> frozenset[str]:
    """pg_type names with a collation (typcollation): text, varchar, bpchar, name, their
    arrays."""
    cols = data.PG_TYPE_COLUMNS
    i_name, i_coll = cols.index("typname"), cols.index("typcollation")
    return frozenset(r[i_name] for r in data.PG_TYPE_ROWS if r[i_coll])


def check_name(names: Sequence[str]) -> None:
    """A COLLATE's (possibly qualified) name: 42704 unless it is one there is."""
    known = names[-1] in NAMES and (len(names) == 1 or (len(names) == 2 and names[0] == _SCHEMA))
    if not known:
        raise PgError("42704", f'collation "{".".join(names)}" for encoding "UTF8" does not exist')


def collatable(typname: str) -> bool:
    """Whether a value of this type (by its pg_type name, a domain by its base's) takes a
    COLLATE."""
    return typname in _collatable()


def not_collatable(shown: str) -> PgError:
    return PgError("42804", f"collations are not supported by type {shown}")
