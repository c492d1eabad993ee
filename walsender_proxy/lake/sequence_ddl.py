"""Sequence DDL as pure functions over the catalog: CREATE, ALTER (PostgreSQL 15's
``init_params`` checks, in its order and words), DROP (with what depends on the sequence),
OWNED BY. The counter itself is not transactional and lives in
:mod:`walsender_proxy.lake.sequences`; a RESTART starts a new generation of it, so that it
takes effect with the transaction that made it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Sequence as Seq
from dataclasses import dataclass, replace
from typing import Any

from decoding.catalog import SEQUENCE_TYPES, Catalog, CatalogOp, Sequence, Table
from walsender_proxy.lake.errors import LakeError

Alloc = Callable[[], int]
_TYPE_NAMES = {"int2": "smallint", "int4": "integer", "int8": "bigint"}


@dataclass(frozen=True, slots=True)
class Restart:
    """The counter a RESTART (or CREATE) sets: the next nextval returns ``value``."""

    value: int


def init_params(
    old: Sequence | None, current: int | None, options: Mapping[str, Any], oid: int, schema: str, name: str
) -> tuple[Sequence, Restart | None, bool]:
    """``init_params`` (PostgreSQL 15): the new definition from ``options`` over ``old``
    (None: CREATE), checked as PostgreSQL checks it; ``current`` is the counter's
    last_value (ALTER), checked against new bounds. Returns the definition, the restart
    it asks for, and whether the counter's log_cnt goes to 0."""
    init = old is None
    sq = old or Sequence(oid, schema, name)
    reset_max = reset_min = False
    log_reset = init
    typ = sq.type
    if "as" in options:
        new = options["as"]
        if not init:
            lo, hi = SEQUENCE_TYPES[sq.type]
            reset_max = sq.max == hi
            reset_min = sq.min == lo
        typ = new
    lo, hi = SEQUENCE_TYPES[typ]
    increment = sq.increment
    if "increment" in options:
        increment = options["increment"]
        if increment == 0:
            raise LakeError("22023", "INCREMENT must not be zero")
        log_reset = True
    cycle = sq.cycle
    if "cycle" in options:
        cycle = bool(options["cycle"])
        log_reset = True
    maxv = sq.max
    if options.get("maxvalue") is not None:
        maxv = options["maxvalue"]
        log_reset = True
    elif init or "maxvalue" in options or reset_max:
        maxv = hi if increment > 0 or reset_max else -1
        log_reset = True
    if typ != "int8" and not lo <= maxv <= hi:
        raise LakeError("22023", f"MAXVALUE ({maxv}) is out of range for sequence data type {_TYPE_NAMES[typ]}")
    minv = sq.min
    if options.get("minvalue") is not None:
        minv = options["minvalue"]
        log_reset = True
    elif init or "minvalue" in options or reset_min:
        minv = lo if increment < 0 or reset_min else 1
        log_reset = True
    if typ != "int8" and not lo <= minv <= hi:
        raise LakeError("22023", f"MINVALUE ({minv}) is out of range for sequence data type {_TYPE_NAMES[typ]}")
    if minv >= maxv:
        raise LakeError("22023", f"MINVALUE ({minv}) must be less than MAXVALUE ({maxv})")
    start = sq.start
    if "start" in options:
        start = options["start"]
    elif init:
        start = minv if increment > 0 else maxv
    if start < minv:
        raise LakeError("22023", f"START value ({start}) cannot be less than MINVALUE ({minv})")
    if start > maxv:
        raise LakeError("22023", f"START value ({start}) cannot be greater than MAXVALUE ({maxv})")
    restart: Restart | None = None
    last = current if current is not None else start
    if "restart" in options:
        last = options["restart"] if options["restart"] is not None else start
        restart = Restart(last)
        log_reset = True
    elif init:
        last = start
        restart = Restart(start)
    if last < minv:
        raise LakeError("22023", f"RESTART value ({last}) cannot be less than MINVALUE ({minv})")
    if last > maxv:
        raise LakeError("22023", f"RESTART value ({last}) cannot be greater than MAXVALUE ({maxv})")
    cache = sq.cache
    if "cache" in options:
        cache = options["cache"]
        if cache <= 0:
            raise LakeError("22023", f"CACHE ({cache}) must be greater than zero")
        log_reset = True
    out = replace(sq, type=typ, start=start, increment=increment, min=minv, max=maxv, cache=cache, cycle=cycle)
    if restart is not None and not init:
        out = replace(out, generation=sq.generation + 1, restart=restart.value)
    return out, restart, log_reset


def owner_of(cat: Catalog, sq: Sequence, owned_by: Seq[str], search_path: Seq[str]) -> tuple[int, int] | None:
    """``process_owned_by``: OWNED BY NONE, or a column of a table in the sequence's
    schema."""
    if len(owned_by) == 1:
        if owned_by[0] != "none":
            raise LakeError("42601", "invalid OWNED BY option", hint="Specify OWNED BY table.column or OWNED BY NONE.")
        return None
    t = cat.resolve_table(".".join(owned_by[:-1]), search_path)
    if t.schema != sq.schema:
        raise LakeError("55000", "sequence must be in same schema as table it is linked to")
    col = t.column(owned_by[-1])
    if col is None:
        raise LakeError("42703", f'column "{owned_by[-1]}" of relation "{t.name}" does not exist')
    return t.oid, col.attnum


def create_sequence(
    cat: Catalog,
    alloc: Alloc,
    name: str,
    options: Mapping[str, Any],
    owned_by: Seq[str] | None,
    if_not_exists: bool,
    search_path: Seq[str],
    identity: bool = False,
) -> tuple[list[CatalogOp], Sequence | None]:
    schema, dot, rel = name.rpartition(".")
    schema = schema if dot else search_path[0]
    if schema not in cat.schemas:
        raise LakeError("3F000", f'schema "{schema}" does not exist')
    if cat.relation_exists(schema, rel):
        if if_not_exists:
            return [], None
        raise LakeError("42P07", f'relation "{rel}" already exists')
    sq, _restart, _ = init_params(None, None, options, 0, schema, rel)
    sq = replace(sq, oid=alloc(), identity=identity)
    if owned_by:
        sq = replace(sq, owned_by=owner_of(cat, sq, owned_by, search_path))
    return [{"op": "put_sequence", "sequence": sq.to_json()}], sq


def alter_sequence(
    cat: Catalog,
    alloc: Alloc,
    name: str,
    options: Mapping[str, Any],
    owned_by: Seq[str] | None,
    current: int,
    search_path: Seq[str],
) -> tuple[list[CatalogOp], tuple[Sequence, bool]]:
    """``current``: the counter's last_value, for the bounds check."""
    old = cat.resolve_sequence(name, search_path)
    sq, _restart, log_reset = init_params(old, current, options, old.oid, old.schema, old.name)
    if owned_by:
        sq = replace(sq, owned_by=owner_of(cat, sq, owned_by, search_path))
    return [{"op": "put_sequence", "sequence": sq.to_json()}], (sq, log_reset)


def dependents(cat: Catalog, oid: int) -> list[tuple[Table, str]]:
    """The column defaults that name the sequence (PostgreSQL's normal dependencies)."""
    out = []
    for t in sorted(cat.tables.values(), key=lambda t: t.oid):
        for c in t.columns:
            if c.default is not None and c.default.sequence == oid:
                out.append((t, c.name))
    return out


def drop_sequence(
    cat: Catalog, alloc: Alloc, name: str, if_exists: bool, cascade: bool, search_path: Seq[str]
) -> tuple[list[CatalogOp], list[str]]:
    """DROP SEQUENCE: 2BP01 while a column default names it (CASCADE drops the defaults,
    and returns what it dropped, for the NOTICE)."""
    try:
        sq = cat.resolve_sequence(name, search_path)
    except LakeError as e:
        if if_exists and e.sqlstate == "42P01":
            return [], []
        if e.sqlstate == "42P01":
            raise LakeError("42P01", f'sequence "{name}" does not exist') from None
        raise
    if sq.identity and sq.owned_by is not None and sq.owned_by[0] in cat.tables:
        t = cat.tables[sq.owned_by[0]]
        col = next((c.name for c in t.columns if c.attnum == sq.owned_by[1]), "?")
        raise LakeError(
            "2BP01",
            f"cannot drop sequence {sq.name} because column {col} of table {t.name} requires it",
            hint=f"You can drop column {col} of table {t.name} instead.",
        )
    deps = dependents(cat, sq.oid)
    what = [f"default value for column {col} of table {t.name}" for t, col in deps]
    if deps and not cascade:
        raise LakeError(
            "2BP01",
            f"cannot drop sequence {sq.name} because other objects depend on it",
            detail="\n".join(f"{w} depends on sequence {sq.name}" for w in what),
            hint="Use DROP ... CASCADE to drop the dependent objects too.",
        )
    ops: list[CatalogOp] = []
    for t in {t.oid: t for t, _ in deps}.values():
        cols = tuple(
            replace(c, default=None) if c.default is not None and c.default.sequence == sq.oid else c for c in t.columns
        )
        ops.append({"op": "put_table", "table": replace(t, columns=cols).to_json()})
    ops.append({"op": "drop_sequence", "oid": sq.oid})
    return ops, what


def owned_sequences(cat: Catalog, table_oid: int, attnum: int | None = None) -> list[Sequence]:
    """The sequences OWNED BY the table (a column of it): dropped with it."""
    return [
        sq
        for sq in cat.sequences.values()
        if sq.owned_by is not None and sq.owned_by[0] == table_oid and (attnum is None or sq.owned_by[1] == attnum)
    ]


def rename_sequence(
    cat: Catalog, alloc: Alloc, name: str, new_name: str, search_path: Seq[str]
) -> tuple[list[CatalogOp], None]:
    sq = cat.resolve_sequence(name, search_path)
    if cat.relation_exists(sq.schema, new_name):
        raise LakeError("42P07", f'relation "{new_name}" already exists')
    return [{"op": "put_sequence", "sequence": replace(sq, name=new_name).to_json()}], None
