"""``ALTER TABLE t ALTER [COLUMN] c [SET DATA] TYPE type [USING expr], …`` as PostgreSQL 15's
ATPrepAlterColumnType and ATRewriteTable do it.

Each column's new values are the USING expression's (or the column's own) through the
assignment coercion to the new type, computed from the rows as they were before the
statement (every USING sees the old columns); what has no assignment cast is 42804 with
PostgreSQL's words. Then the column takes its new type and every row is rewritten with its
new value — a rewrite the log marks as such, which decoding skips, as PostgreSQL's table
rewrite is not decoded; the next change's Relation message carries the new type.

Where the stored values cannot change — varchar or text to text or a varchar of a length
they fit (Django's migrations lengthen CharFields) — nothing is rewritten: the values are
checked against the new length (22001) and the catalog changes, keys and indexes as they
were.

What PostgreSQL would have to carry through the change that the lake does not is refused
(0A000): a rewrite of a key column (primary key, unique index, foreign key on either side,
replica identity) or of a column with a DEFAULT other than a sequence's; an identity or
generated column; a column a CHECK constraint, an index expression or predicate or a
publication row filter reads (their texts name the old type); a table a view reads; a
partitioned table or partition; COLLATE. PostgreSQL's own refusals keep its words: a
column a generated column reads (0A000), the partition key (42P16), a system column, the
same column twice.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pglast import ast
from pglast.stream import RawStream

from decoding.catalog import RID, Column, Table
from decoding.errors import PgError
from decoding.pgtypes import ColumnType, UnknownTypeError, parse_type, type_by_oid
from walsender_proxy.backend import coercion_data
from walsender_proxy.lake import Transaction
from walsender_proxy.sql.column_coercion import coerce_text
from walsender_proxy.sql.ddl_names import unsupported
from walsender_proxy.sql.index_sql import PATTERN_OPCLASSES
from walsender_proxy.sql.pgcatalog_defs import quote_ident

_SYSTEM_COLUMNS = ("tableoid", "cmax", "xmax", "cmin", "xmin", "ctid")
_STRINGS = ("text", "varchar", "bpchar")


@dataclass(frozen=True, slots=True)
class Change:
    """One column's ALTER TYPE: the column as it was, its new type, the USING expression."""

    column: Column
    type_text: str
    using: ast.Node | None

    @property
    def new_type(self) -> ColumnType:
        return parse_type(self.type_text)


def _shown(ct: ColumnType) -> str:
    """format_type_be: the type without its modifier."""
    return replace(ct, typmod=-1).sql_name()


def _assignable(src: ColumnType, tgt: ColumnType) -> bool:
    """Whether PostgreSQL coerces a value of ``src`` to ``tgt`` in assignment: the same
    type, an implicit or assignment cast of pg_cast, or an I/O cast to a string type."""
    s, g = src.bare, tgt.bare
    if not g.is_array and g.base.name in _STRINGS:
        return True
    if s.is_array != g.is_array:
        return False
    if s.base.name == g.base.name:
        return s.base.name not in ("anyenum",) or s.base == g.base
    return coercion_data.CASTS.get((s.base.name, g.base.name), ("e",))[0] in ("a", "i")


def _keeps_values(old: ColumnType, new: ColumnType) -> bool:
    """A change the stored values survive as they are: among text and varchar, with no
    domain (a length limit is checked, nothing is converted)."""
    return (
        not old.domain and not new.domain and not old.is_array and not new.is_array
        and old.base.name in ("text", "varchar") and new.base.name in ("text", "varchar")
    )  # fmt: skip


def plan(tx: Transaction, t: Table, cmds: list[ast.AlterTableCmd], type_text: Any) -> list[Change]:
    """The statement's ALTER TYPE commands, checked in ATPrepAlterColumnType's order
    (``type_text``: a TypeName's lake type text, domains and enums resolved)."""
    out: list[Change] = []
    for cmd in cmds:
        d: ast.ColumnDef = cmd.def_
        col = t.column(cmd.name)
        if col is None:
            if cmd.name in _SYSTEM_COLUMNS:
                raise PgError("0A000", f'cannot alter system column "{cmd.name}"')
            raise PgError("42703", f'column "{cmd.name}" of relation "{t.name}" does not exist')
        if col.generation is not None and d.raw_default is not None:
            raise PgError(
                "42611", "cannot specify USING when altering type of generated column",
                detail=f'Column "{col.name}" is a generated column.',
            )  # fmt: skip
        key = t.partition_key
        if key is not None and (col.attnum in key.attnums or any(e.attnum == col.attnum for e in key.exprs)):
            raise PgError("42P16", f'cannot alter column "{col.name}" because it is part of the partition key of relation "{t.name}"')
        text = type_text(d.typeName)
        if d.collClause is not None:
            raise unsupported("COLLATE in ALTER COLUMN … TYPE")
        change = Change(col, text, d.raw_default)
        if d.raw_default is None and not _assignable(col.type, change.new_type):
            new = change.new_type
            raise PgError(
                "42804", f'column "{col.name}" cannot be cast automatically to type {_shown(new)}',
                hint=None if col.generation is not None else f'You might need to specify "USING {quote_ident(col.name)}::{new.sql_name()}".',
            )  # fmt: skip
        if any(c.column.name == col.name for c in out):
            raise PgError("0A000", f'cannot alter type of column "{col.name}" twice')
        out.append(change)
    return out


def _refusals(tx: Transaction, t: Table, changes: list[Change], rewrite: bool) -> None:
    """PostgreSQL's own refusals, then what the lake cannot carry through a rewrite."""
    for ch in changes:
        col = ch.column
        for other in t.columns:
            if other.generation is not None and other is not col and col.attnum in other.generation.attnums:
                raise PgError(
                    "0A000", "cannot alter type of a column used by a generated column",
                    detail=f'Column "{col.name}" is used by generated column "{other.name}".',
                )  # fmt: skip
    cat = tx.catalog()
    for v in sorted(cat.views.values(), key=lambda v: v.oid):
        if t.oid in v.depends:
            raise unsupported(f"ALTER COLUMN … TYPE of a table a view depends on (view {v.name})")
    if t.partition_key is not None or t.partition_bound is not None:
        raise unsupported("ALTER COLUMN … TYPE of a partitioned table or a partition")
    for ch in changes:
        col = ch.column
        if col.identity:
            raise unsupported("ALTER COLUMN … TYPE of an identity column")
        if col.generation is not None:
            raise unsupported("ALTER COLUMN … TYPE of a generated column")
        # (their texts would print the column with its old type's casts)
        if any(col.attnum in ix.attnums_read for ix in t.indexes):
            raise unsupported("ALTER COLUMN … TYPE of a column an index expression or predicate reads")
        if any(col.attnum in ck.attnums for ck in t.checks):
            raise unsupported(f'ALTER COLUMN … TYPE of column "{col.name}", which a CHECK constraint reads')
        if any(e.table_oid == t.oid and e.row_filter is not None for pub in cat.publications.values() for e in pub.tables):
            raise unsupported("ALTER COLUMN … TYPE of a table a publication filters rows of")
        for ix in t.indexes:  # (PostgreSQL rebuilds the index with its operator class)
            for name, opclass in zip(ix.columns, ix.opclasses, strict=False):
                if name == col.name and opclass and (ch.new_type.is_array or ch.new_type.oid not in PATTERN_OPCLASSES[opclass]):
                    raise PgError("42804", f'operator class "{opclass}" does not accept data type {_shown(ch.new_type)}')
        if not rewrite:
            continue
        what = f'ALTER COLUMN … TYPE that converts the values of column "{col.name}"'
        if col.default is not None and not col.default.sequence:
            if not _assignable(col.type, ch.new_type):
                raise PgError("42804", f'default for column "{col.name}" cannot be cast automatically to type {_shown(ch.new_type)}')
            raise unsupported(f"{what}, which has a DEFAULT")
        keyed = (
            col.name in t.primary_key
            or any(col.name in ix.columns and ix.unique for ix in t.indexes)
            or (t.replica_identity == "i" and col.name in t.identity_index)
            or any(col.name in fk.columns for fk in t.foreign_keys)
            or any(col.attnum in fk.ref_attnums for other in cat.tables.values() for fk in other.foreign_keys if fk.ref_oid == t.oid)
        )
        if keyed:
            raise unsupported(f"{what}, a key column (primary key, unique index, foreign key or replica identity)")


def alter(ev: Any, tx: Transaction, table: str, cmds: list[ast.AlterTableCmd], type_text: Any) -> None:
    """Run the statement's ALTER TYPE commands (``ev``: the engine, for the USING
    expressions and the coercions)."""
    t = tx.table(table)
    changes = plan(tx, t, cmds, type_text)
    rewrite = not all(_keeps_values(ch.column.type, ch.new_type) for ch in changes)
    _refusals(tx, t, changes, rewrite)
    if not rewrite:
        rows = _values(ev, tx, t, changes, with_rows=False)
        for ch in changes:
            coerce_text(replace(ch.column, type=ch.new_type), rows.column(f"__new_{ch.column.name}"), ev.date_order, ev.text_out)
        tx.alter_column_types(table, [(ch.column.name, ch.type_text) for ch in changes], rewrite=False)
        return
    rows = _values(ev, tx, t, changes, with_rows=True)
    news: dict[str, pa.Array | pa.ChunkedArray] = {}
    for ch in changes:
        target = replace(ch.column, type=ch.new_type)
        values = rows.column(f"__new_{ch.column.name}")
        try:
            news[ch.column.name] = coerce_text(target, values, ev.date_order, ev.text_out)
        except PgError as e:
            if e.sqlstate != "42804":
                raise
            raise PgError(
                "42804", f'result of USING clause for column "{ch.column.name}" cannot be cast automatically to type {_shown(ch.new_type)}',
                hint="You might need to add an explicit cast.",
            ) from None  # fmt: skip
        if ch.column.not_null and news[ch.column.name].null_count:
            raise PgError("23502", f'column "{ch.column.name}" of relation "{t.name}" contains null values').about(
                t.schema, t.name, ch.column.name
            )
    tx.alter_column_types(table, [(ch.column.name, ch.type_text) for ch in changes], rewrite=True)
    if not rows.num_rows:
        return
    t2 = tx.table(table)
    old_phys = {c.name: c.physical for c in t.columns}
    new: dict[str, pa.Array | pa.ChunkedArray] = {RID: rows.column(RID)}
    old: dict[str, pa.Array | pa.ChunkedArray] = {RID: rows.column(RID)}
    for c in t2.columns:  # (the lake conforms each value to its column's storage)
        if c.name in news:
            new[c.physical] = news[c.name]
            old[c.physical] = pa.nulls(rows.num_rows, c.type.arrow)  # (the new column, as the files read now)
        else:
            new[c.physical] = old[c.physical] = rows.column(old_phys[c.name])
    tx.rewrite_rows(t2, pa.table(old), pa.table(new))


def _values(ev: Any, tx: Transaction, t: Table, changes: list[Change], *, with_rows: bool) -> pa.Table:
    """The rows (``_rid`` and the columns under their physical names, with ``with_rows``)
    and each change's new value (``__new_<column>``) before the coercion, with a USING
    expression's result checked for an assignment cast to the new type."""
    items = [
        f'({RawStream()(ch.using) if ch.using is not None else quote_ident(ch.column.name)}) AS "__new_{ch.column.name}"'
        for ch in changes
    ]
    target, source = ev.target_source(tx, t)
    sql = f'SELECT {f"{quote_ident(t.name)}.*, " if with_rows else ""}{", ".join(items)} FROM {target} AS {quote_ident(t.name)}'
    try:
        rw = ev.rewritten(sql, tx, source, [], writing=t.name)
    except PgError as e:  # (a position in the query made here, not in the statement)
        if getattr(e, "position", None) is not None:
            e.position = None  # type: ignore[attr-defined]
        raise
    for oc in rw.columns or ():
        if not oc.name.startswith("__new_"):
            continue
        name = oc.name.removeprefix("__new_")
        ch = next((c for c in changes if c.column.name == name and c.using is not None), None)
        if ch is None or oc.type_oid is None or oc.unknown:
            continue
        try:
            src = oc.enum or type_by_oid(oc.type_oid)
        except UnknownTypeError:
            continue
        if not _assignable(src, ch.new_type):
            raise PgError(
                "42804", f'result of USING clause for column "{name}" cannot be cast automatically to type {_shown(ch.new_type)}',
                hint="You might need to add an explicit cast.",
            )  # fmt: skip
    data = ev.relation(rw.sql, []).to_arrow_table()
    names = {c.name: c.physical for c in t.columns}
    if data.num_rows > 1 and with_rows:
        data = data.take(pc.sort_indices(data.column(RID)))
    return data.rename_columns([names.get(c, c) if not c.startswith("__new_") else c for c in data.column_names])
