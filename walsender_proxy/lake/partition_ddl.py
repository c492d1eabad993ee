"""``PARTITION BY`` and ``PARTITION OF`` as catalog ops, with PostgreSQL's checks
(``transformPartitionSpec``, ``transformPartitionBound``, ``check_new_partition_bound``)
and its words. Values reach here as constant texts with their parser kind and are kept in
their type's output form (``transformPartitionBoundValue``'s coercion, then
``get_const_expr``'s printing for ``pg_get_expr``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from decoding.catalog import (
    Catalog,
    CatalogOp,
    Column,
    PartitionBound,
    PartitionExpr,
    PartitionKey,
    Table,
    is_temp_schema,
)
from decoding.pgtypes import ColumnType, parse_type
from decoding.pgvalues import decode_text_arrow, encode_text_arrow
from walsender_proxy.lake import index_ddl, partitions, pghash
from walsender_proxy.lake.errors import LakeError

Alloc = Callable[[], int]
_STRATEGIES = {"range": "r", "list": "l", "hash": "h"}
_INTEGERS = {"smallint", "integer", "bigint"}
_NUMBERS = _INTEGERS | {"numeric"}


def _at(e: LakeError, location: int) -> LakeError:
    """``e`` pointing at ``location`` (the ErrorResponse's position, 1-based)."""
    if location >= 0:
        e.position = location + 1  # type: ignore[attr-defined]
    return e


@dataclass(frozen=True, slots=True)
class BoundValue:
    """One constant of a ``FOR VALUES`` clause as the parser gave it: ``kind`` ``s`` a
    string literal, ``i`` an integer, ``f`` a decimal number, ``n`` NULL, ``min`` /
    ``max`` MINVALUE / MAXVALUE; ``location`` its offset in the statement."""

    kind: str
    text: str = ""
    location: int = -1


@dataclass(frozen=True, slots=True)
class BoundSpec:
    """``FOR VALUES IN (…)`` (``l``), ``FROM (…) TO (…)`` (``r``), ``WITH (MODULUS m,
    REMAINDER r)`` (``h``) or ``DEFAULT`` (``d``), with the clause's ``location``."""

    kind: str
    values: tuple[BoundValue, ...] = ()
    lower: tuple[BoundValue, ...] = ()
    upper: tuple[BoundValue, ...] = ()
    modulus: int = 0
    remainder: int = 0
    location: int = -1


def _type_name(ctype: ColumnType) -> str:
    return ctype.sql_name().split("(")[0]


@dataclass(frozen=True, slots=True)
class KeyExpr:
    """A partition key expression as the statement wrote it: ``column op const`` or
    ``fn(column)`` (see :class:`decoding.catalog.PartitionExpr`)."""

    op: str
    column: str
    const: int = 0
    location: int = -1


_INT_RESULT = {"smallint": "integer", "integer": "integer", "bigint": "bigint"}


def _key_expr(t: Table, k: KeyExpr) -> PartitionExpr:
    c = t.column(k.column)
    if c is None:
        raise _at(LakeError("42703", f'column "{k.column}" does not exist'), k.location)
    name = _type_name(c.type) if not c.type.is_array and not c.type.domain else ""
    if k.op in ("+", "-", "*") and name in _INT_RESULT:
        return PartitionExpr(k.op, c.attnum, _INT_RESULT[name], k.const)
    if k.op == "abs" and name in _INT_RESULT:
        return PartitionExpr("abs", c.attnum, name)
    if k.op in ("lower", "upper") and name in ("text", "character varying"):
        return PartitionExpr(k.op, c.attnum, "text")
    raise _at(LakeError("0A000", f"a partition key expression {k.op} of {c.type.sql_name()} is not supported by walsender-proxy"), k.location)


def partition_key(t: Table, strategy: str, names: Sequence[tuple[str, int] | KeyExpr]) -> PartitionKey:
    """``PARTITION BY strategy (keys)`` of the new table ``t``: columns (each name with its
    location) or expressions."""
    s = _STRATEGIES[strategy]
    if s == "l" and len(names) > 1:
        raise LakeError("42P17", 'cannot use "list" partition strategy with more than one column')
    attnums: list[int] = []
    exprs: list[PartitionExpr] = []
    for item in names:
        if isinstance(item, KeyExpr):
            e = _key_expr(t, item)
            ctype, loc = parse_type(e.type), item.location
            exprs.append(e)
            attnums.append(0)
        else:
            name, loc = item
            c = t.column(name)
            if c is None:
                raise _at(LakeError("42703", f'column "{name}" named in partition key does not exist'), loc)
            ctype = c.type
            attnums.append(c.attnum)
        hashable = _type_name(ctype) in pghash.HASH_TYPES and not ctype.is_array and not ctype.domain
        if not (hashable if s == "h" else partitions.key_type_ok(ctype)):
            raise _at(LakeError("0A000", f"a partition key column of type {ctype.sql_name()} is not supported by walsender-proxy"), loc)
    key = PartitionKey(s, tuple(attnums), tuple(exprs))
    if t.primary_key and exprs:
        raise LakeError(
            "0A000",
            "unsupported PRIMARY KEY constraint with partition key definition",
            detail="PRIMARY KEY constraints cannot be used when partition keys include expressions.",
        )
    if t.primary_key:
        for n in attnums:
            col = t.column_by_attnum(n)
            if col.name not in t.primary_key:
                raise LakeError(
                    "0A000",
                    "unique constraint on partitioned table must include all partitioning columns",
                    detail=f'PRIMARY KEY constraint on table "{t.name}" lacks column "{col.name}" which is part of the partition key.',
                )
    return key


def _value(c: Column, v: BoundValue) -> str:
    """A bound constant coerced to the key column's type, in that type's output form."""

    tname = _type_name(c.type)
    text = v.text
    if v.kind in ("i", "f"):
        if tname not in _NUMBERS | {"text", "character varying"}:
            raise _at(LakeError("42804", f'specified value cannot be cast to type {c.type.sql_name()} for column "{c.name}"'), v.location)
        if v.kind == "f" and tname in _INTEGERS:
            try:  # (numeric → integer: rounded half away from zero)
                text = str(Decimal(text).quantize(Decimal(1), rounding=ROUND_HALF_UP))
            except InvalidOperation:
                raise LakeError("22P02", f'invalid input syntax for type {c.type.sql_name()}: "{text}"') from None
    try:
        arr = decode_text_arrow(c.type, [text.encode()])
    except LakeError as e:  # (the input function's error, at the constant)
        raise _at(e, v.location) from None
    out = encode_text_arrow(c.type, arr).to_pylist()[0]
    return out.decode() if isinstance(out, bytes) else str(out)


def _range_datums(parent: Table, vals: Sequence[BoundValue], what: str) -> tuple[tuple[str, ...], ...]:
    cols = partitions.key_columns(parent)
    if len(vals) != len(cols):
        raise LakeError("42P16", f"{what} must specify exactly one value per partitioning column")
    out: list[tuple[str, ...]] = []
    for c, v in zip(cols, vals, strict=True):
        if v.kind == "n":
            raise _at(LakeError("42P17", "cannot specify NULL in range bound"), v.location)
        out.append((v.kind,) if v.kind in ("min", "max") else ("v", _value(c, v)))
    # (validateInfiniteBounds: after MINVALUE/MAXVALUE only the same)
    for i, d in enumerate(out):
        if d[0] in ("min", "max"):
            for later, v in zip(out[i + 1 :], vals[i + 1 :], strict=True):
                if later[0] != d[0]:
                    word = "MINVALUE" if d[0] == "min" else "MAXVALUE"
                    raise _at(LakeError("42804", f"every bound following {word} must also be {word}"), v.location)
            break
    return tuple(out)


def bound_text(parent: Table, b: PartitionBound) -> str:
    """``pg_get_expr(relpartbound)``: the bound as ``get_rule_expr`` prints it."""
    if b.kind == "d":
        return "DEFAULT"
    if b.kind == "h":
        return f"FOR VALUES WITH (modulus {b.modulus}, remainder {b.remainder})"
    cols = partitions.key_columns(parent)
    if b.kind == "l":
        return "FOR VALUES IN (" + ", ".join(const_text(cols[0].type, v) for v in b.values) + ")"
    return f"FOR VALUES FROM ({range_text(cols, b.lower)}) TO ({range_text(cols, b.upper)})"


def range_text(cols: Sequence[Column], datums: Sequence[tuple[str, ...]]) -> str:
    return ", ".join(
        "MINVALUE" if d[0] == "min" else "MAXVALUE" if d[0] == "max" else const_text(c.type, d[1])
        for c, d in zip(cols, datums, strict=True)
    )


def const_text(ctype: ColumnType, value: str | None) -> str:
    """A constant as ``get_const_expr`` prints it with no type label."""
    if value is None:
        return "NULL"
    tname = _type_name(ctype)
    if tname == "integer" and not value.startswith("-"):
        return value
    if tname == "numeric" and value[:1].isdigit() and any(ch in value for ch in ".eE"):
        return value
    if tname == "boolean":
        return "true" if value == "t" else "false"
    return "'" + value.replace("'", "''") + "'"


def make_bound(cat: Catalog, parent: Table, name: str, spec: BoundSpec) -> PartitionBound:
    """``spec`` checked against ``parent``'s key and its partitions' bounds."""
    key = parent.partition_key
    if key is None:
        raise LakeError("42P17", f'"{parent.name}" is not partitioned')
    siblings = [t for t in cat.partitions(parent.oid) if t.name != name or t.schema != parent.schema]
    if spec.kind == "d":
        if key.strategy == "h":
            raise LakeError("42P16", "a hash-partitioned table may not have a default partition")
        for t in siblings:
            if t.partition_bound is not None and t.partition_bound.kind == "d":
                raise _at(LakeError("42P17", f'partition "{name}" conflicts with existing default partition "{t.name}"'), spec.location)
        return PartitionBound(parent.oid, "d")
    strategy = {"r": "range", "l": "list", "h": "hash"}[key.strategy]
    if spec.kind != key.strategy:
        raise _at(LakeError("42P16", f"invalid bound specification for a {strategy} partition"), spec.location)
    if spec.kind == "h":
        return _hash_bound(parent, name, spec, siblings)
    if spec.kind == "l":
        col = partitions.key_columns(parent)[0]
        values: list[str | None] = []
        for v in spec.values:
            val = None if v.kind == "n" else _value(col, v)
            if val not in values:
                values.append(val)
        b = PartitionBound(parent.oid, "l", tuple(values))
        for t in siblings:
            ob = t.partition_bound
            if ob is None or ob.kind != "l":
                continue
            for v, raw in zip(values, spec.values, strict=False):
                if (v is None and None in ob.values) or (v is not None and any(
                    o is not None and partitions.sort_key(col.type, o) == partitions.sort_key(col.type, v) for o in ob.values
                )):
                    raise _at(LakeError("42P17", f'partition "{name}" would overlap partition "{t.name}"'), raw.location)
        return b
    lower = _range_datums(parent, spec.lower, "FROM")
    upper = _range_datums(parent, spec.upper, "TO")
    lo, hi = partitions._range_key(parent, lower), partitions._range_key(parent, upper)
    first = spec.lower[0].location if spec.lower else spec.location
    cols = partitions.key_columns(parent)
    if lo >= hi:
        raise _at(
            LakeError(
                "42P17",
                f'empty range bound specified for partition "{name}"',
                detail=f"Specified lower bound ({range_text(cols, lower)}) is greater than or equal to upper bound ({range_text(cols, upper)}).",
            ),
            first,
        )
    for t in partitions.ordered(cat, parent):
        ob = t.partition_bound
        if t in siblings and ob is not None and ob.kind == "r":
            olo, ohi = partitions._range_key(parent, ob.lower), partitions._range_key(parent, ob.upper)
            if lo < ohi and olo < hi:
                raise _at(LakeError("42P17", f'partition "{name}" would overlap partition "{t.name}"'), first)
    return PartitionBound(parent.oid, "r", lower=lower, upper=upper)


def _hash_bound(parent: Table, name: str, spec: BoundSpec, siblings: Sequence[Table]) -> PartitionBound:
    """transformPartitionBound's and check_new_partition_bound's checks of ``WITH
    (MODULUS m, REMAINDER r)``, with PostgreSQL's choice of the partition it names."""
    m, r = spec.modulus, spec.remainder
    if m <= 0:
        raise LakeError("42P16", "modulus for hash partition must be an integer value greater than zero")
    if r < 0:
        raise LakeError("42P16", "remainder for hash partition must be an integer value greater than or equal to zero")
    if r >= m:
        raise LakeError("42P16", "remainder for hash partition must be less than modulus")
    bounds = sorted((t.partition_bound.modulus, t.partition_bound.remainder, t) for t in siblings if t.partition_bound is not None)
    if bounds:
        greatest = bounds[-1][0]
        slots: list[Table | None] = [None] * greatest
        for bm, br, t in bounds:
            for slot in range(br, greatest, bm):
                slots[slot] = t

        def slot_name(i: int) -> str:
            t = slots[i] if i < greatest else None
            return t.name if t is not None else ""

        below = [i for i, (bm, br, _) in enumerate(bounds) if (bm, br) <= (m, r)]
        detail = None
        if not below:
            nxt = bounds[0][0]
            if nxt % m:
                detail = f'The new modulus {m} is not a factor of {nxt}, the modulus of existing partition "{slot_name(0)}".'
        else:
            off = below[-1]
            prev = bounds[off][0]
            if m % prev:
                detail = f'The new modulus {m} is not divisible by {prev}, the modulus of existing partition "{slot_name(off)}".'
            elif off + 1 < len(bounds) and bounds[off + 1][0] % m:
                detail = (
                    f"The new modulus {m} is not a factor of {bounds[off + 1][0]}, "
                    f'the modulus of existing partition "{slot_name(off + 1)}".'
                )
        if detail is not None:
            raise LakeError("42P17", "every hash partition modulus must be a factor of the next larger modulus", detail=detail)
        rem = r % greatest
        while rem < greatest:
            if slots[rem] is not None:
                raise _at(LakeError("42P17", f'partition "{name}" would overlap partition "{slots[rem].name}"'), spec.location)  # type: ignore[union-attr]
            rem += m
    return PartitionBound(parent.oid, "h", modulus=m, remainder=r)


def create_partition(
    cat: Catalog, alloc: Alloc, schema: str, name: str, parent: Table, spec: BoundSpec
) -> tuple[list[CatalogOp], Table]:
    """``CREATE TABLE name PARTITION OF parent spec``: the parent's columns (with their
    NOT NULL, defaults and inheritable CHECKs), its primary key, and the bound."""
    if is_temp_schema(schema) != is_temp_schema(parent.schema):  # (MergeAttributes)
        made = "temporary" if is_temp_schema(schema) else "permanent"
        its = "permanent" if is_temp_schema(schema) else "temporary"
        raise LakeError("42809", f'cannot create a {made} relation as partition of {its} relation "{parent.name}"')
    if cat.relation_exists(schema, name):
        raise LakeError("42P07", f'relation "{name}" already exists')
    bound = make_bound(cat, parent, name, spec)
    cols = tuple(
        replace(c, physical=c.name, default=None if c.default is None else replace(c.default, oid=alloc()), has_missing=False, identity="")
        for c in parent.columns
    )
    t = Table(alloc(), schema, name, cols, parent.primary_key, "d", (), frozenset(c.physical for c in cols), parent.next_attnum)
    t = replace(t, partition_bound=bound, checks=tuple(replace(ck, oid=alloc()) for ck in parent.checks if not ck.no_inherit))
    if parent.primary_key:
        pk = index_ddl.choose_index_name(cat, t, (), "pkey")
        if pk != t.pkey_name:
            t = replace(t, pkey_index=pk)
    return [{"op": "put_table", "table": t.to_json()}], t


def attach_partition(cat: Catalog, parent: Table, t: Table, spec: BoundSpec) -> tuple[list[CatalogOp], Table]:
    """``ALTER TABLE parent ATTACH PARTITION t FOR VALUES …``, checked in
    ``ATExecAttachPartition``'s order: a table of another's, columns the parent lacks,
    the bound, then the parent's columns (types, NOT NULL) and CHECK constraints. The
    rows of ``t`` are checked by the caller."""
    if parent.partition_key is None:
        raise LakeError("42P17", f'table "{parent.name}" is not partitioned')
    if t.partition_bound is not None:
        raise LakeError("42809", f'"{t.name}" is already a partition')
    if t.oid == parent.oid or any(a.oid == t.oid for a in cat.ancestors(parent)):
        raise LakeError("42P17", 'circular inheritance not allowed', detail=f'"{parent.name}" is already a child of "{t.name}".')
    if is_temp_schema(t.schema) != is_temp_schema(parent.schema):
        made = "temporary" if is_temp_schema(t.schema) else "permanent"
        its = "permanent" if is_temp_schema(t.schema) else "temporary"
        raise LakeError("42809", f'cannot attach a {made} relation as partition of {its} relation "{parent.name}"')
    for c in t.columns:
        if parent.column(c.name) is None:
            raise LakeError(
                "42804",
                f'table "{t.name}" contains column "{c.name}" not found in parent "{parent.name}"',
                detail="The new partition may contain only the columns present in parent.",
            )
    bound = make_bound(cat, parent, t.name, spec)
    for pc_ in parent.columns:
        c = t.column(pc_.name)
        if c is None:
            raise LakeError("42804", f'child table is missing column "{pc_.name}"')
        if c.type != pc_.type:
            raise LakeError("42804", f'child table "{t.name}" has different type for column "{c.name}"')
        if pc_.not_null and not c.not_null:
            raise LakeError("42804", f'column "{c.name}" in child table must be marked NOT NULL')
    for ck in parent.checks:
        if ck.no_inherit:
            continue
        if not any(o.name == ck.name for o in t.checks):
            raise LakeError("42804", f'child table is missing constraint "{ck.name}"')
    if [c.name for c in t.columns] != [c.name for c in parent.columns]:
        raise LakeError("0A000", "ATTACH PARTITION of a table whose columns are in another order than its parent's is not supported by walsender-proxy")
    if tuple(t.primary_key) != tuple(parent.primary_key):
        raise LakeError("0A000", "ATTACH PARTITION of a table whose primary key is not its parent's is not supported by walsender-proxy")
    if any(ix.unique for ix in parent.indexes):
        raise LakeError("0A000", "ATTACH PARTITION to a table with unique indexes is not supported by walsender-proxy")
    made = replace(t, partition_bound=replace(bound, attached=True))
    return [{"op": "put_table", "table": made.to_json()}], made


def detach_partition(cat: Catalog, parent: Table, t: Table) -> tuple[list[CatalogOp], Table]:
    """``ALTER TABLE parent DETACH PARTITION t``: ``t`` stays, a table of its own."""
    if t.partition_bound is None or t.partition_bound.parent != parent.oid:
        raise LakeError("42P01", f'relation "{t.name}" is not a partition of relation "{parent.name}"')
    made = replace(t, partition_bound=None)
    return [{"op": "put_table", "table": made.to_json()}], made


#: ``pg_get_partition_constraintdef`` of a form this module does not print.
UNPRINTED = "\x00"


def constraint_text(cat: Catalog, t: Table, type_label: Callable[[ColumnType], str]) -> str | None:
    """``pg_get_partition_constraintdef``: the partition constraint of ``t`` and of its
    ancestors as ruleutils prints ``get_qual_from_partbound``'s quals ANDed together (None
    for no partition; :data:`UNPRINTED` for a multi-column range key or a key
    expression). ``type_label(type)``: ``format_type`` of a constant's type."""
    if t.partition_bound is None:
        return None
    quals: list[str] = []
    for child in reversed([t, *cat.ancestors(t)]):
        b = child.partition_bound
        if b is None:
            continue
        parent = cat.tables.get(b.parent)
        if parent is None:
            return None
        got = _quals(cat, parent, child, type_label)
        if got is None:
            return UNPRINTED
        quals += got
    if not quals:
        return None
    return quals[0] if len(quals) == 1 else "(" + " AND ".join(quals) + ")"


def _quals(cat: Catalog, parent: Table, child: Table, type_label: Callable[[ColumnType], str]) -> list[str] | None:
    parts = partitions.key_parts(parent)
    if any(e is not None for _, e in parts):
        return None
    b = child.partition_bound
    assert b is not None
    cols = [c for c, _ in parts]
    names = [_ident(c.name) for c in cols]

    def const(c: Column, v: str) -> str:
        text = const_text(c.type, v)
        if text.startswith("'") or c.type.typmod >= 0:  # (a typmod is always shown)
            text += "::" + type_label(c.type)
        return text

    if b.kind == "h":
        return [f"satisfies_hash_partition('{parent.oid}'::oid, {b.modulus}, {b.remainder}, {', '.join(names)})"]
    if (parent.partition_key is not None and parent.partition_key.strategy == "l") or b.kind == "l":
        c, k = cols[0], names[0]
        if b.kind == "l":
            return _list_quals(k, [const(c, v) for v in b.values if v is not None], None in b.values)
        sib = [p.partition_bound for p in partitions.ordered(cat, parent) if p.partition_bound is not None and p.partition_bound.kind == "l"]
        if not sib:
            return []
        values = sorted({v for s in sib for v in s.values if v is not None}, key=lambda v: partitions.sort_key(c.type, v))
        inner = _list_quals(k, [const(c, v) for v in values], any(None in s.values for s in sib))
        return [f"(NOT {_and(inner)})"]
    if len(cols) != 1:
        return None
    c, k = cols[0], names[0]
    if b.kind == "r":
        return [f"({k} IS NOT NULL)", *_range_terms(k, c, b.lower[0], b.upper[0], const)]
    sib = [p.partition_bound for p in partitions.ordered(cat, parent) if p.partition_bound is not None and p.partition_bound.kind == "r"]
    if not sib:
        return []
    ranges = [_and(_range_terms(k, c, s.lower[0], s.upper[0], const)) for s in sib]
    ors = ranges[0] if len(ranges) == 1 else "(" + " OR ".join(ranges) + ")"
    return [f"(NOT (({k} IS NOT NULL) AND {ors}))"]


def _range_terms(k: str, c: Column, lo: tuple[str, ...], hi: tuple[str, ...], const: Callable[[Column, str], str]) -> list[str]:
    out = []
    if lo[0] == "v":
        out.append(f"({k} >= {const(c, lo[1])})")
    if hi[0] == "v":
        out.append(f"({k} < {const(c, hi[1])})")
    return out


def _list_quals(k: str, values: list[str], nulls: bool) -> list[str]:
    if not values:
        return [f"({k} IS NULL)"] if nulls else []
    test = f"({k} = {values[0]})" if len(values) == 1 else f"({k} = ANY (ARRAY[{', '.join(values)}]))"
    return [f"(({k} IS NULL) OR {test})"] if nulls else [f"({k} IS NOT NULL)", test]


def _and(quals: list[str]) -> str:
    return quals[0] if len(quals) == 1 else "(" + " AND ".join(quals) + ")"


def _ident(name: str) -> str:
    if name.isidentifier() and name.islower() and name.isascii():
        return name
    return '"' + name.replace('"', '""') + '"'
