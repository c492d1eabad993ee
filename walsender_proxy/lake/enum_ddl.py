"""Enum DDL as pure functions over the catalog: CREATE TYPE … AS ENUM, ALTER TYPE … ADD
VALUE and RENAME TO, DROP TYPE (PostgreSQL 15's ``pg_enum.c`` and ``typecmds.c``).

A label's place in its enum is a float4 ``enumsortorder``, as PostgreSQL keeps it: a new
label goes after the last, or halfway between two neighbours; when float4 has no value
left between them, the enum's labels are renumbered 1, 2, … first (``RenumberEnumType``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from decoding.catalog import Catalog, CatalogOp, EnumLabel, EnumType
from walsender_proxy.lake import domains
from walsender_proxy.lake.domain_ddl import type_exists
from walsender_proxy.lake.errors import LakeError

Alloc = Callable[[], int]

#: NAMEDATALEN - 1: the most bytes a label may have.
MAX_LABEL_BYTES = 63


def check_label(label: str) -> None:
    """42602 for a label longer than a ``name`` holds."""
    if len(label.encode()) > MAX_LABEL_BYTES:
        raise LakeError(
            "42602", f'invalid enum label "{label}"', detail=f"Labels must be {MAX_LABEL_BYTES} bytes or less."
        )


def create_enum(cat: Catalog, alloc: Alloc, new: EnumType, labels: Sequence[str]) -> tuple[list[CatalogOp], EnumType]:
    """``new`` (OIDs still to give) with ``labels`` in order, sort orders 1, 2, …"""
    if new.schema not in cat.schemas:
        raise LakeError("3F000", f'schema "{new.schema}" does not exist')
    if type_exists(cat, new.schema, new.name):
        raise LakeError("42710", f'type "{new.name}" already exists')
    for label in labels:
        check_label(label)
    en = replace(new, oid=alloc(), array_oid=alloc())
    seen: set[str] = set()
    for label in labels:
        if label in seen:  # (pg_enum's unique index refuses the second row)
            raise LakeError(
                "23505",
                'duplicate key value violates unique constraint "pg_enum_typid_label_index"',
                detail=f"Key (enumtypid, enumlabel)=({en.oid}, {label}) already exists.",
            )
        seen.add(label)
    en = replace(en, labels=tuple(EnumLabel(alloc(), label, float(i + 1)) for i, label in enumerate(labels)))
    return [{"op": "put_enum", "enum": en.to_json()}], en


def _f4(x: float) -> float:
    return float(np.float32(x))


def _renumbered(labels: tuple[EnumLabel, ...]) -> tuple[EnumLabel, ...]:
    return tuple(replace(x, sortorder=float(i + 1)) for i, x in enumerate(labels))


def add_label(
    cat: Catalog, alloc: Alloc, oid: int, label: str, neighbor: str | None, after: bool, if_not_exists: bool
) -> tuple[list[CatalogOp], bool]:
    """ALTER TYPE … ADD VALUE; returns whether a label was added (False: IF NOT EXISTS
    found it there)."""
    en = cat.enums.get(oid)
    if en is None:
        raise LakeError("42704", f"type with OID {oid} does not exist")
    check_label(label)
    if label in en.names:
        if if_not_exists:
            return [], False
        raise LakeError("42710", f'enum label "{label}" already exists')
    labels = en.labels
    while True:
        if neighbor is None:
            order = labels[-1].sortorder + 1 if labels else 1.0
            at = len(labels)
            break
        nbr = next((i for i, x in enumerate(labels) if x.label == neighbor), None)
        if nbr is None:
            raise LakeError("22023", f'"{neighbor}" is not an existing enum label')
        other = nbr + 1 if after else nbr - 1
        at = nbr + 1 if after else nbr
        if other < 0:
            order = labels[nbr].sortorder - 1
        elif other >= len(labels):
            order = labels[nbr].sortorder + 1
        else:
            a, b = np.float32(labels[nbr].sortorder), np.float32(labels[other].sortorder)
            mid = (a + b) / np.float32(2)
            if mid in (a, b):  # (no float4 left between them: renumber, then again)
                labels = _renumbered(labels)
                continue
            order = float(mid)
        break
    new = EnumLabel(alloc(), label, _f4(order))
    en = replace(en, labels=(*labels[:at], new, *labels[at:]))
    return [{"op": "put_enum", "enum": en.to_json()}], True


def rename_enum(cat: Catalog, alloc: Alloc, oid: int, new_name: str) -> tuple[list[CatalogOp], None]:
    en = cat.enums[oid]
    if type_exists(cat, en.schema, new_name):
        raise LakeError("42710", f'type "{new_name}" already exists')
    return [{"op": "put_enum", "enum": replace(en, name=new_name).to_json()}], None


def drop_enums(cat: Catalog, alloc: Alloc, oids: Sequence[int]) -> tuple[list[CatalogOp], None]:
    """DROP TYPE of enums: 2BP01 while a column or a domain not dropped with them uses one
    (the SQL layer drops those first for CASCADE)."""
    domains.refuse_if_used(cat, oids, cat.enums[oids[0]].name)
    return [{"op": "drop_enum", "oid": oid} for oid in oids], None
