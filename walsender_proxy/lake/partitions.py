"""Declarative partitioning as the lake keeps it: which partition a row belongs to.

A partitioned table (``Table.partition_key``) holds no rows; its partitions are tables of
their own (``Table.partition_bound``), possibly partitioned again. This module answers,
over Arrow rows, what PostgreSQL's ``ExecFindPartition`` (tuple routing) and
``ExecPartitionCheck`` (a partition's constraint, its ancestors' included) answer, and
orders partitions as ``partition_bounds_create`` does (an Append over a partitioned table
scans them in that order).

Keys are plain columns whose values compare as PostgreSQL compares them under the
database's C collation: integers, numeric, text and varchar, date, timestamp(tz), boolean
(:data:`KEY_TYPES`). Bound values are kept in their type's output form and read back
through its input function.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoding.catalog import Catalog, Column, PartitionBound, PartitionExpr, Table
from decoding.pgtypes import ColumnType, parse_type
from decoding.pgvalues import decode_text_arrow, text_encoder
from walsender_proxy.lake import pghash
from walsender_proxy.lake.errors import LakeError, failing_row

#: The column naming each row's partition in a partitioned table's rows read for an UPDATE
#: or DELETE (the partition's OID).
LEAF = "__wpx_leaf"

#: Key column types routed here (by ``ColumnType.sql_name()`` without a typmod).
KEY_TYPES = frozenset(
    {"smallint", "integer", "bigint", "numeric", "text", "character varying", "date",
     "timestamp without time zone", "timestamp with time zone", "boolean"}
)


def key_type_ok(ctype: ColumnType) -> bool:
    """A key column whose stored values compare as PostgreSQL compares the type's (an
    unconstrained numeric is kept as text: not one)."""
    name = ctype.sql_name().split("(")[0]
    if ctype.is_array or name not in KEY_TYPES or ctype.domain or ctype.is_enum:
        return False
    return name != "numeric" or pa.types.is_decimal(ctype.arrow)


@functools.lru_cache(maxsize=4096)
def _datum(ctype: ColumnType, text: str) -> pa.Scalar:

    return decode_text_arrow(ctype, [text.encode()])[0]


def datum(ctype: ColumnType, text: str) -> pa.Scalar:
    """A bound value (output text) as a scalar of the column's storage type."""
    return _datum(ctype, text)


def sort_key(ctype: ColumnType, text: str) -> object:
    """A bound value as Python orders it the way PostgreSQL's comparison does."""
    v = _datum(ctype, text).as_py()
    return v.encode() if isinstance(v, str) else v


def key_parts(t: Table) -> list[tuple[Column, PartitionExpr | None]]:
    """Each key of ``t``: its column, or for an expression a column standing for it (named
    as PostgreSQL's DETAIL shows it, of the expression's type), with the expression."""
    assert t.partition_key is not None
    exprs = iter(t.partition_key.exprs)
    out: list[tuple[Column, PartitionExpr | None]] = []
    for n in t.partition_key.attnums:
        if n:
            out.append((t.column_by_attnum(n), None))
            continue
        e = next(exprs)
        out.append((Column(0, expr_text(t, e), parse_type(e.type)), e))
    return out


def key_columns(t: Table) -> list[Column]:
    return [c for c, _ in key_parts(t)]


def expr_text(t: Table, e: PartitionExpr, *, quote: bool = False) -> str:
    """The expression as ruleutils prints it: ``(b + 0)``, ``abs(c)``."""
    name = t.column_by_attnum(e.attnum).name
    if quote and not (name.isidentifier() and name.islower() and name.isascii()):
        name = '"' + name.replace('"', '""') + '"'
    if e.op in ("+", "-", "*"):
        const = str(e.const) if e.const >= 0 else f"'{e.const}'::integer"
        return f"({name} {e.op} {const})"
    return f"{e.op}({name})"


_INT_RANGES = {"smallint": (-(1 << 15), (1 << 15) - 1), "integer": (-(1 << 31), (1 << 31) - 1), "bigint": (-(1 << 63), (1 << 63) - 1)}


def evaluate(t: Table, e: PartitionExpr, arr: pa.Array) -> pa.Array:
    """The expression over the column's values, with PostgreSQL's errors (22003 out of
    range); ``lower``/``upper`` only of ASCII text (libc's case mapping is PostgreSQL's)."""
    if e.op in ("lower", "upper"):
        if not pc.all(pc.fill_null(pc.string_is_ascii(arr), True)).as_py():
            raise LakeError("0A000", f"{e.op}() of non-ASCII text in a partition key is not supported by walsender-proxy")
        return pc.utf8_lower(arr) if e.op == "lower" else pc.utf8_upper(arr)
    wide = arr.cast(pa.int64())
    try:
        if e.op == "abs":
            out = pc.abs_checked(wide)
        else:
            fn = {"+": pc.add_checked, "-": pc.subtract_checked, "*": pc.multiply_checked}[e.op]
            out = fn(wide, pa.scalar(e.const, pa.int64()))
    except pa.ArrowInvalid:  # (overflow of bigint)
        raise LakeError("22003", f"{e.type} out of range") from None
    lo, hi = _INT_RANGES[e.type]
    bounds = pc.min_max(out)
    if bounds["min"].is_valid and (bounds["min"].as_py() < lo or bounds["max"].as_py() > hi):
        raise LakeError("22003", f"{e.type} out of range")
    return out.cast(parse_type(e.type).arrow)


def expr_sql(e: PartitionExpr, col: str) -> str:
    """The expression in DuckDB over ``col`` (rows already in the table: no overflow)."""
    if e.op in ("+", "-", "*"):
        return f"({col} {e.op} {e.const})"
    return f"{e.op}({col})"


def _range_key(t: Table, datums: Sequence[tuple[str, ...]]) -> tuple[object, ...]:
    out: list[object] = []
    for c, d in zip(key_columns(t), datums, strict=True):
        out.append((0,) if d[0] == "min" else (2,) if d[0] == "max" else (1, sort_key(c.type, d[1])))
    return tuple(out)


def ordered(cat: Catalog, parent: Table) -> list[Table]:
    """The partitions of ``parent`` in PostgreSQL's order: range by lower bound, list by
    smallest value (a NULL-only partition after those), hash by (modulus, remainder),
    the default partition last."""
    parts = cat.partitions(parent.oid)
    if not parts:
        return []
    assert parent.partition_key is not None

    def key(t: Table) -> tuple[object, ...]:
        b = t.partition_bound
        assert b is not None
        if b.kind == "d":
            return (3,)
        if b.kind == "r":
            return (1, _range_key(parent, b.lower))
        if b.kind == "h":
            return (1, b.modulus, b.remainder)
        col = key_columns(parent)[0]
        vals = [sort_key(col.type, v) for v in b.values if v is not None]
        return (1, min(vals)) if vals else (2,)

    return sorted(parts, key=key)


def leaves(cat: Catalog, t: Table) -> list[Table]:
    """The tables holding ``t``'s rows, in scan order: ``t`` itself unless partitioned."""
    if t.partition_key is None:
        return [t]
    return [leaf for p in ordered(cat, t) for leaf in leaves(cat, p)]


def _keys(parent: Table, rows: pa.Table, names: dict[str, str]) -> list[tuple[Column, pa.Array]]:
    """The key columns of ``parent`` and their values in ``rows`` (its columns named as
    ``names[column name]`` says)."""
    out = []
    for c, e in key_parts(parent):
        src = c if e is None else parent.column_by_attnum(e.attnum)
        arr = rows.column(names[src.name])
        arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
        out.append((c, arr if e is None else evaluate(parent, e, arr)))
    return out


def _fill(m: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(pc.fill_null(m, False).to_numpy(zero_copy_only=False), dtype=bool)


def bound_mask(
    parent: Table, b: PartitionBound, keys: list[tuple[Column, pa.Array]], n: int, memo: dict[str, np.ndarray] | None = None
) -> np.ndarray:
    """The rows whose key satisfies bound ``b`` (not a DEFAULT bound) of ``parent``
    (``memo``: the rows' hashes, computed once for all of a parent's hash partitions)."""
    if b.kind == "h":
        memo = {} if memo is None else memo
        if "h" not in memo:
            memo["h"] = pghash.row_hashes([(c.type, arr) for c, arr in keys], n)
        return memo["h"] % np.uint64(b.modulus) == np.uint64(b.remainder)
    if b.kind == "l":
        c, arr = keys[0]
        vals = [v for v in b.values if v is not None]
        m = np.zeros(n, dtype=bool)
        if vals:
            m |= _fill(pc.is_in(arr, value_set=pa.array([datum(c.type, v).as_py() for v in vals], arr.type)))
        if None in b.values:
            m |= np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        return m
    if b.kind == "r":
        notnull = np.ones(n, dtype=bool)
        for _, arr in keys:
            notnull &= ~np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        return notnull & _lex(keys, b.lower, n, lower=True) & _lex(keys, b.upper, n, lower=False)
    raise AssertionError(b.kind)


def _lex(keys: list[tuple[Column, pa.Array]], datums: Sequence[tuple[str, ...]], n: int, *, lower: bool) -> np.ndarray:
    """Rows at or above a lower bound (``lower``) or below an upper bound, compared
    column by column as ``partition_rbound_datum_cmp`` does."""
    tail = np.full(n, lower, dtype=bool)  # (all equal: inside a lower bound, outside an upper)
    for (c, arr), d in reversed(list(zip(keys, datums, strict=True))):
        if d[0] in ("min", "max"):  # (every row is above MINVALUE and below MAXVALUE)
            tail = np.full(n, lower == (d[0] == "min"), dtype=bool)
            continue
        v = datum(c.type, d[1])
        if v.type != arr.type:
            v = v.cast(arr.type)
        strict = _fill(pc.greater(arr, v) if lower else pc.less(arr, v))
        eq = _fill(pc.equal(arr, v))
        tail = strict | (eq & tail)
    return tail


def _key_text(keys: list[tuple[Column, pa.Array]], i: int) -> str:

    vals = []
    for c, arr in keys:
        raw = text_encoder(c.type)(arr.slice(i, 1))[0]
        vals.append("null" if raw is None else raw.decode())
    names = ", ".join(c.name for c, _ in keys)
    return f"Partition key of the failing row contains ({names}) = ({', '.join(vals)})."


def route(cat: Catalog, t: Table, rows: pa.Table, names: dict[str, str] | None = None) -> tuple[np.ndarray, int | None, LakeError | None]:
    """The leaf each row of ``rows`` goes to (OIDs; ``t`` itself unless partitioned), as
    tuple routing from ``t`` finds it. ``names``: column name → its column in ``rows``
    (default: ``t``'s physical names). Returns the leaves, and the first row no
    partition takes with PostgreSQL's error for it (23514 ``no partition … found``)."""
    n = rows.num_rows
    names = names or {c.name: c.physical for c in t.columns}
    out = np.zeros(n, dtype=np.int64)
    failed: tuple[int, LakeError] | None = None

    def walk(parent: Table, idx: np.ndarray) -> None:
        nonlocal failed
        if parent.partition_key is None:
            out[idx] = parent.oid
            return
        sub = rows.take(pa.array(idx)) if len(idx) != n else rows
        keys = _keys(parent, sub, names)
        taken = np.zeros(len(idx), dtype=bool)
        default: Table | None = None
        memo: dict[str, np.ndarray] = {}
        for p in ordered(cat, parent):
            b = p.partition_bound
            assert b is not None
            if b.kind == "d":
                default = p
                continue
            m = bound_mask(parent, b, keys, len(idx), memo) & ~taken
            if m.any():
                taken |= m
                walk(p, idx[m])
        if default is not None and (~taken).any():
            walk(default, idx[~taken])
            taken[:] = True
        if (~taken).any():
            j = int(np.flatnonzero(~taken)[0])
            err = LakeError("23514", f'no partition of relation "{parent.name}" found for row', detail=_key_text(keys, j))
            err = err.about(schema=parent.schema, table=parent.name)
            if failed is None or int(idx[j]) < failed[0]:
                failed = (int(idx[j]), err)

    walk(t, np.arange(n, dtype=np.int64))
    if failed is None:
        return out, None, None
    return out, failed[0], failed[1]


def constraint_mask(cat: Catalog, leaf: Table, rows: pa.Table, names: dict[str, str] | None = None) -> np.ndarray:
    """The rows that satisfy ``leaf``'s partition constraint and its ancestors'
    (``ExecPartitionCheck``); all rows when ``leaf`` is no partition."""
    n = rows.num_rows
    names = names or {c.name: c.physical for c in leaf.columns}
    ok = np.ones(n, dtype=bool)
    t = leaf
    while t.partition_bound is not None:
        parent = cat.tables.get(t.partition_bound.parent)
        if parent is None:
            break
        keys = _keys(parent, rows, names)
        memo: dict[str, np.ndarray] = {}
        b = t.partition_bound
        if b.kind == "d":
            others = np.zeros(n, dtype=bool)
            for p in cat.partitions(parent.oid):
                if p.partition_bound is not None and p.partition_bound.kind != "d":
                    others |= bound_mask(parent, p.partition_bound, keys, n, memo)
            ok &= ~others
        else:
            ok &= bound_mask(parent, b, keys, n, memo)
        t = parent
    return ok


def check_rows(cat: Catalog, leaf: Table, rows: pa.Table, row_texts: object) -> None:
    """23514 ``new row for relation … violates partition constraint`` for the first row
    of ``rows`` (``leaf``'s physical names) outside ``leaf``'s partition."""
    if leaf.partition_bound is None or not rows.num_rows:
        return
    ok = constraint_mask(cat, leaf, rows)
    if ok.all():
        return
    i = int(np.flatnonzero(~ok)[0])
    texts = row_texts(leaf, rows.slice(i, 1))  # type: ignore[operator]
    raise LakeError(
        "23514", f'new row for relation "{leaf.name}" violates partition constraint', detail=failing_row(texts)
    ).about(schema=leaf.schema, table=leaf.name)


def _duck_literal(c: Column, text: str) -> str:
    """A bound value as a DuckDB literal of the column's SQL type."""
    name = c.type.sql_name().split("(")[0]
    if name in ("smallint", "integer", "bigint", "numeric"):
        return text
    if name == "boolean":
        return "true" if text == "t" else "false"
    quoted = "'" + text.replace("'", "''") + "'"
    prefix = {"date": "DATE ", "timestamp without time zone": "TIMESTAMP ", "timestamp with time zone": "TIMESTAMPTZ "}
    return prefix.get(name, "") + quoted


def tableoid_sql(cat: Catalog, t: Table, column: Callable[[str], str]) -> str:
    """DuckDB SQL giving the OID of the partition a row of the partitioned table ``t``
    lies in (its ``tableoid``), from its key columns (``column(name)``: the reference to
    a column): the bounds as :func:`route` applies them, as a CASE."""

    def cond(parent: Table, b: PartitionBound) -> str:
        parts = key_parts(parent)
        keys = [c for c, _ in parts]
        exprs = {c.name: (e, parent.column_by_attnum(e.attnum).name) for c, e in parts if e is not None}

        def col(name: str) -> str:  # (a key's SQL: its column, or its expression over one)
            if name in exprs:
                e, src = exprs[name]
                return expr_sql(e, column(src))
            return column(name)

        if b.kind == "h":
            raise LakeError("0A000", "tableoid of a hash-partitioned table's rows is not supported by walsender-proxy")
        if b.kind == "l":
            k = col(keys[0].name)
            alts = []
            vals = [_duck_literal(keys[0], v) for v in b.values if v is not None]
            if vals:
                alts.append(f"{k} IN ({', '.join(vals)})")
            if None in b.values:
                alts.append(f"{k} IS NULL")
            return "(" + " OR ".join(alts) + ")"
        notnull = " AND ".join(f"{col(c.name)} IS NOT NULL" for c in keys)
        return f"({notnull} AND {lex(col, keys, b.lower, True)} AND {lex(col, keys, b.upper, False)})"

    def lex(col: Callable[[str], str], keys: list[Column], datums: Sequence[tuple[str, ...]], lower: bool) -> str:
        tail = "true" if lower else "false"
        for c, d in reversed(list(zip(keys, datums, strict=True))):
            if d[0] in ("min", "max"):
                tail = "true" if lower == (d[0] == "min") else "false"
                continue
            k, v = col(c.name), _duck_literal(c, d[1])
            tail = f"({k} {'>' if lower else '<'} {v} OR ({k} = {v} AND {tail}))"
        return tail

    def walk(parent: Table) -> str:
        if parent.partition_key is None:
            return str(parent.oid)
        whens, default = [], None
        for p in ordered(cat, parent):
            b = p.partition_bound
            assert b is not None
            if b.kind == "d":
                default = p
            else:
                whens.append(f"WHEN {cond(parent, b)} THEN {walk(p)}")
        other = walk(default) if default is not None else "NULL"
        return f"CASE {' '.join(whens)} ELSE {other} END" if whens else other

    return walk(t)
