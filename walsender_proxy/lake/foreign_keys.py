"""Foreign keys enforced on every write, as PostgreSQL's RI triggers do after each
statement (``ri_triggers.c``): a written row's key must be in the referenced table
(``RI_FKey_check``), and a referenced row that goes or changes its key takes the
constraint's action on the rows that reference it (NO ACTION, RESTRICT, CASCADE,
SET NULL).

The checks run when a statement's rows are in the transaction (its own writes are
seen: a self-referencing INSERT of a parent and its child in one statement passes)
and, as PostgreSQL's triggers query, against the newest committed state, not the
statement's snapshot; REPEATABLE READ transactions are held to their snapshot too (a
referenced row gone since is 40001, as ``FOR KEY SHARE`` fails there). Where
PostgreSQL would wait for another open transaction (its row lock on the referenced
row, its pending rows referencing a key being deleted), the lake answers 40001 at
once, as its other write conflicts do. A cascaded change is written after the
statement's own change, so the log and the pgoutput stream have them in PostgreSQL's
order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from decoding.catalog import RID, Catalog, ForeignKey, Table
from walsender_proxy.lake.errors import LakeError, key_texts, serialization_failure
from walsender_proxy.lake.files import OWN_CSN
from walsender_proxy.lake.keyindex import SMALL, key_columns
from walsender_proxy.lake.spill import FileRows

if TYPE_CHECKING:
    from walsender_proxy.lake.tx_services import OpenTransaction

#: Keys spelled out in the scan's prefilter up to this many (row groups pruned by their
#: statistics); more are joined.
_SPELLED = 64


@dataclass(frozen=True, slots=True)
class _Link:
    """A foreign key with both tables' physical column names, as one catalog version has
    them (``child`` references ``parent``)."""

    fk: ForeignKey
    child: Table
    parent: Table
    child_cols: tuple[str, ...]
    parent_cols: tuple[str, ...]
    parent_names: tuple[str, ...]


def _versions(tx: OpenTransaction) -> list[Catalog]:
    """The catalogs a write is held to: the newest committed one (PostgreSQL's triggers
    are the relcache's, current at each statement, whatever the snapshot), the
    transaction's own view when it changed the catalog, and the one another
    transaction's DDL is making (its table locks would keep the writer waiting)."""
    lake = tx.lake
    out = [tx.ddl_catalog()]
    owner = lake.catalog_owner
    if owner is not None and owner is not tx:
        out.append(owner.ddl_catalog())
    return out


def _link(cat: Catalog, child: Table, fk: ForeignKey) -> _Link | None:
    parent = child if fk.ref_oid == child.oid else cat.tables.get(fk.ref_oid)
    if parent is None:
        return None
    by_name = {c.name: c.physical for c in child.columns}
    by_num = {c.attnum: c for c in parent.columns}
    if any(c not in by_name for c in fk.columns) or any(n not in by_num for n in fk.ref_attnums):
        return None
    return _Link(
        fk,
        child,
        parent,
        tuple(by_name[c] for c in fk.columns),
        tuple(by_num[n].physical for n in fk.ref_attnums),
        tuple(by_num[n].name for n in fk.ref_attnums),
    )


def referencing_links(tx: OpenTransaction, t: Table) -> list[_Link]:
    """The foreign keys of ``t`` (as the referencing table), one per constraint."""
    out: dict[int, _Link] = {}
    for cat in _versions(tx):
        child = cat.tables.get(t.oid)
        for fk in child.foreign_keys if child is not None else ():
            if fk.oid not in out and (link := _link(cat, child, fk)) is not None:
                out[fk.oid] = link
    return list(out.values())


def referenced_links(tx: OpenTransaction, t: Table) -> list[_Link]:
    """The foreign keys that reference ``t``, one per constraint."""
    out: dict[int, _Link] = {}
    for cat in _versions(tx):
        if not any(x.foreign_keys for x in cat.tables.values()):
            continue
        for child, fk in cat.referencing(t.oid):
            if fk.oid not in out and (link := _link(cat, child, fk)) is not None:
                out[fk.oid] = link
    return list(out.values())


def _has_keys(tx: OpenTransaction) -> bool:
    """Whether any table of the catalogs a write is held to has a foreign key (the usual
    answer, no, costs a scan of the table list once per catalog version)."""
    return any(_catalog_has_keys(cat) for cat in _versions(tx))


_HAS_KEYS: dict[int, tuple[Catalog, bool]] = {}


def _catalog_has_keys(cat: Catalog) -> bool:
    hit = _HAS_KEYS.get(id(cat))
    if hit is not None and hit[0] is cat:
        return hit[1]
    found = any(t.foreign_keys for t in cat.tables.values())
    if len(_HAS_KEYS) > 64:
        _HAS_KEYS.clear()
    _HAS_KEYS[id(cat)] = (cat, found)
    return found


# -- the referencing side ------------------------------------------------------------------


def after_write(
    tx: OpenTransaction, t: Table, new: pa.Table, old: pa.Table | None = None, changed: frozenset[str] | None = None
) -> None:
    """RI_FKey_check for the rows a statement wrote to ``t`` (``new``: ``_rid`` and
    physical columns; ``old``: an UPDATE's rows before, row for row; ``changed``: the
    columns it assigns, None for any)."""
    if not t.foreign_keys and not _has_keys(tx):
        return
    for link in referencing_links(tx, t):
        fk = link.fk
        if changed is not None and not changed & set(fk.columns):
            continue
        if not set(link.child_cols) <= set(new.column_names):
            continue
        deferred = tx.deferrals.deferred(fk)
        if not deferred and new.num_rows <= _SPELLED and _check_few(tx, link, new, old):
            continue
        keys = new.select(list(link.child_cols))
        if old is not None:  # (RI_FKey_fk_upd_check_required: an unchanged key is not checked)
            same = None
            for c in link.child_cols:
                eq = pc.fill_null(pc.equal(new.column(c), old.column(c)), False)
                both = pc.and_(pc.is_null(new.column(c)), pc.is_null(old.column(c)))
                eq = pc.or_(eq, both)
                same = eq if same is None else pc.and_(same, eq)
            keys = keys.filter(pc.invert(same))
        keys = _complete_keys(link, keys)
        if keys.num_rows and deferred:  # (checked at commit: deferred_keys)
            tx.deferrals.queue(fk, link.child.oid, True, keys, tx.subxid)
        elif keys.num_rows:
            _check_present(tx, link, keys)


def _check_few(tx: OpenTransaction, link: _Link, new: pa.Table, old: pa.Table | None) -> bool:
    """:func:`after_write` for a few rows in Python values (a single-row INSERT's usual
    case): True when the key index found every key's row; False leaves the rows to the
    Arrow path (it words the errors)."""
    values = list(zip(*(new.column(c).to_pylist() for c in link.child_cols), strict=True))
    if old is not None:
        olds = zip(*(old.column(c).to_pylist() for c in link.child_cols), strict=True)
        values = [v for v, o in zip(values, olds, strict=True) if v != o]
    if link.fk.match_full and any(None in v and any(x is not None for x in v) for v in values):
        return False
    values = [v for v in values if None not in v]
    if not values:
        return True
    with tx.lake.dml_lock:
        rids = _holders(tx, link.parent, link.parent_cols, values)
        if rids is None or None in rids:
            return False
        cols = {c: [v[i] for v in values] for i, c in enumerate(link.parent_cols)}
        _check_not_taken(tx, link, pa.table({RID: pa.array(rids, pa.int64()), **cols}))
    return True


def _complete_keys(link: _Link, keys: pa.Table) -> pa.Table:
    """The keys to look up: MATCH SIMPLE skips a key with any null, MATCH FULL one of
    only nulls and refuses one that mixes them."""
    valid = [pc.is_valid(keys.column(c)) for c in link.child_cols]
    every = valid[0]
    for v in valid[1:]:
        every = pc.and_(every, v)
    if link.fk.match_full and len(valid) > 1:
        some = valid[0]
        for v in valid[1:]:
            some = pc.or_(some, v)
        if pc.any(pc.and_(some, pc.invert(every))).as_py():
            raise _violation(link, detail="MATCH FULL does not allow mixing of null and nonnull key values.")
    return keys.filter(every)


def _violation(link: _Link, *, detail: str) -> LakeError:
    return LakeError(
        "23503",
        f'insert or update on table "{link.child.name}" violates foreign key constraint "{link.fk.name}"',
        detail=detail,
    ).about(schema=link.child.schema, table=link.child.name, constraint=link.fk.name)


def _not_present(link: _Link, values: Sequence[Any]) -> LakeError:
    texts = key_texts(link.child, link.fk.columns, values)
    shown = ", ".join("null" if v is None else v for v in texts)
    return _violation(
        link, detail=f'Key ({", ".join(link.fk.columns)})=({shown}) is not present in table "{link.parent.name}".'
    )


def _distinct(keys: pa.Table) -> pa.Table:
    """The distinct keys in the order they first come, each with its first row number."""
    numbered = keys.append_column("_i", pa.array(range(keys.num_rows), pa.int64()))
    return numbered.group_by(keys.column_names, use_threads=False).aggregate([("_i", "min")]).sort_by("_i_min")


def _matches(
    tx: OpenTransaction, t: Table, csn: int, cols: Sequence[str], keys: pa.Table, key_cols: Sequence[str], extra: str = ""
) -> pa.Table:
    """The rows of ``t`` (at ``csn``, with the transaction's own changes) whose ``cols``
    equal one of ``keys`` (columns ``key_cols``, in order): ``_rid``, ``cols`` and the
    key row number ``_i`` it matched; ``extra``: more columns to select (``c.*``)."""
    lake = tx.lake
    params: list[Any] = []
    prefilter = None
    if keys.num_rows <= _SPELLED:
        terms = []
        for row in zip(*(keys.column(k).to_pylist() for k in key_cols), strict=True):
            conj = []
            for c, v in zip(cols, row, strict=True):
                params.append(v)
                conj.append(f'"{c}" = ${len(params)}')
            terms.append("(" + " AND ".join(conj) + ")")
        prefilter = "(" + " OR ".join(terms) + ")"
    q = lake.store.snapshot_query(t, csn, own=tx.own_parts(t.oid), with_rid=True, physical=True, prefilter=prefilter)
    on = " AND ".join(f'c."{c}" = k."{k}"' for c, k in zip(cols, key_cols, strict=True))
    picked = extra or ", ".join(f'c."{c}"' for c in dict.fromkeys([RID, *cols]))
    sql = f"SELECT {picked}, k._i_min AS _i FROM ({q.sql}) c JOIN _keys k ON {on}"
    if prefilter is not None:
        sql += f" WHERE {prefilter}"
    cur = lake.store.cursor()
    try:
        q.register(cur)
        cur.register("_keys", keys)
        return cur.sql(sql, params=params or None).to_arrow_table()
    finally:
        cur.close()


def _holders(tx: OpenTransaction, t: Table, cols: Sequence[str], values: list[tuple[Any, ...]]) -> list[int | None] | None:
    """The ``_rid`` holding each key (``cols`` of ``t``, its primary key's in any order)
    in the newest committed state with the transaction's own changes, by the key index
    (keyindex.py); under REPEATABLE READ the holder must have held it at the snapshot
    too. None when the index cannot tell (no index, too many keys, float keys whose NaN
    a dict does not find, a mapping changed since the snapshot). Caller holds the
    statement lock."""
    if len(values) > SMALL or tx.has_truncated(t.oid):
        return None
    kcols = key_columns(t)
    if kcols is None or sorted(kcols) != sorted(cols):
        return None
    if any(c.physical in kcols and c.type.base.name in ("float4", "float8") for c in t.columns):
        return None
    own = tx.own_keys(t.oid)
    if own is None:
        return None
    idx = tx.lake.key_index(t)
    if idx is None:
        return None
    order = [list(cols).index(c) for c in idx.cols]
    snap = tx.snapshot_csn
    out: list[int | None] = []
    for row in values:
        k: Any = tuple(row[i] for i in order)
        if len(k) == 1:
            k = k[0]
        mine = own.live.get(k)
        if mine:
            out.append(next(iter(mine)))
            continue
        r = idx.map.get(k)
        if r is not None and r in own.newest:
            r = None  # (deleted or re-keyed by this transaction)
        if snap is not None and r is not None:
            known, at = idx.lookup(k, snap)
            if not known or at != r:
                return None
        out.append(r)
    return out


def _check_present(tx: OpenTransaction, link: _Link, keys: pa.Table) -> None:
    """Each key must be a referenced row's: in the newest committed state (as the RI
    trigger's query sees it) and, under REPEATABLE READ, in the transaction's snapshot
    too; and no other open transaction may be deleting that row or changing its key.
    The key index answers for a primary key when it can; DuckDB otherwise (and for the
    error, which it words)."""
    lake = tx.lake
    with lake.dml_lock:
        values = list(zip(*(keys.column(c).to_pylist() for c in link.child_cols), strict=True))
        rids = _holders(tx, link.parent, link.parent_cols, values)
        if rids is not None and None not in rids:
            cols = {c: [v[i] for v in values] for i, c in enumerate(link.parent_cols)}
            _check_not_taken(tx, link, pa.table({RID: pa.array(rids, pa.int64()), **cols}))
            return
    wanted = _distinct(keys)
    names = [f"k{i}" for i in range(len(link.child_cols))]
    wanted = wanted.rename_columns([*names, "_i_min"])
    with lake.dml_lock:
        newest = _matches(tx, link.parent, OWN_CSN - 1, link.parent_cols, wanted, names)
        found = set(newest.column("_i").to_pylist())
        snap = tx.snapshot_csn
        if snap is not None:
            seen = _matches(tx, link.parent, snap, link.parent_cols, wanted, names)
            seen_i = set(seen.column("_i").to_pylist())
            missing = [i for i in wanted.column("_i_min").to_pylist() if i not in seen_i]
            if missing:
                raise _not_present(link, [keys.column(c)[missing[0]].as_py() for c in link.child_cols])
            if seen_i - found:
                raise serialization_failure()  # (deleted or re-keyed by a commit since)
        missing = [i for i in wanted.column("_i_min").to_pylist() if i not in found]
        if missing:
            raise _not_present(link, [keys.column(c)[missing[0]].as_py() for c in link.child_cols])
        _check_not_taken(tx, link, newest)


def _check_not_taken(tx: OpenTransaction, link: _Link, rows: pa.Table) -> None:
    """40001 when another open transaction truncated the referenced table, deleted one of
    ``rows`` or changed its key (PostgreSQL's check would wait on the row lock it holds);
    its update of other columns does not conflict (FOR KEY SHARE)."""
    rids = rows.column(RID).combine_chunks()
    for other in tx.lake.other_transactions(tx):
        if other.has_truncated(link.parent.oid):
            raise serialization_failure()
        held, big = other.locked_rids(link.parent.oid)
        if not held and not big:
            continue
        mask = pc.is_in(rids, value_set=pa.array(held, pa.int64())) if held else pa.array([False] * len(rids))
        for arr in big:
            mask = pc.or_(mask, pc.is_in(rids, value_set=arr))
        taken = rows.filter(mask)
        if taken.num_rows and not _same_keys_pending(other, link, taken):
            raise serialization_failure()


def _same_keys_pending(other: OpenTransaction, link: _Link, rows: pa.Table) -> bool:
    """Whether ``other``'s newest pending versions of ``rows`` (by ``_rid``) keep their
    keys (an update of other columns); a delete, a changed key or versions in files: no."""
    rp = other.pending_by_table().get(link.parent.oid)
    if rp is None or rp.files:
        return False
    latest: dict[int, tuple[Any, ...]] = {}
    for chunk in rp.chunks:
        if isinstance(chunk, FileRows) or not set(link.parent_cols) <= set(chunk.column_names):
            continue
        hit = chunk.filter(pc.is_in(chunk.column(RID), value_set=rows.column(RID).combine_chunks()))
        for r in hit.select([RID, *link.parent_cols]).to_pylist():
            latest[r[RID]] = tuple(r[c] for c in link.parent_cols)
    for r in rows.select([RID, *link.parent_cols]).to_pylist():
        if latest.get(r[RID]) != tuple(r[c] for c in link.parent_cols):
            return False  # (a pending delete leaves no write of it: not there)
    return True


def validate(tx: OpenTransaction, t: Table, fk: ForeignKey) -> None:
    """ADD FOREIGN KEY / VALIDATE CONSTRAINT over the rows already there (RI_Initial_Check):
    the newest committed state with the transaction's own changes (other writers were
    refused by the caller's table locks)."""
    cat = tx.ddl_catalog()
    child = cat.tables.get(t.oid, t)
    link = _link(cat, child, fk)
    if link is None:
        return
    lake = tx.lake
    q = lake.store.snapshot_query(child, OWN_CSN - 1, own=tx.own_parts(child.oid), with_rid=True, physical=True)
    cols = ", ".join(f'"{c}"' for c in link.child_cols)
    cur = lake.store.cursor()
    try:
        q.register(cur)
        keys = cur.sql(f"SELECT {cols} FROM ({q.sql})").to_arrow_table()
    finally:
        cur.close()
    keys = _complete_keys(link, keys)
    if keys.num_rows:
        _check_present(tx, link, keys)


# -- the referenced side -------------------------------------------------------------------


def after_change(
    tx: OpenTransaction, t: Table, old: pa.Table, new: pa.Table | None = None, changed: frozenset[str] | None = None
) -> None:
    """The actions of the foreign keys referencing ``t`` for rows a statement deleted
    (``new`` None) or updated (``old``/``new`` row for row; ``changed``: the columns it
    assigns): RI_FKey_noaction/restrict/cascade/setnull."""
    if not _has_keys(tx):
        return
    for link in referenced_links(tx, t):
        if new is not None and changed is not None and not changed & set(link.parent_names):
            continue
        if not set(link.parent_cols) <= set(old.column_names):
            continue
        olds = old.select(list(link.parent_cols))
        news = new.select(list(link.parent_cols)) if new is not None else None
        if news is not None:  # (RI_FKey_pk_upd_check_required: an unchanged key is not checked)
            diff = None
            for c in link.parent_cols:
                ne = pc.fill_null(pc.not_equal(*_images(olds.column(c), news.column(c))), True)
                both = pc.and_(pc.is_null(olds.column(c)), pc.is_null(news.column(c)))
                ne = pc.and_(ne, pc.invert(both))
                diff = ne if diff is None else pc.or_(diff, ne)
            olds, news = olds.filter(diff), news.filter(diff)
        every = None
        for c in link.parent_cols:  # (a key with a null is never referenced)
            v = pc.is_valid(olds.column(c))
            every = v if every is None else pc.and_(every, v)
        olds = olds.filter(every)
        news = news.filter(every) if news is not None else None
        if olds.num_rows:
            _act(tx, link, olds, news)


def _images(*cols: pa.ChunkedArray) -> list[pa.Array | pa.ChunkedArray]:
    """Columns compared as ri_KeysEqual compares a referenced key's old and new values:
    bytewise (datum_image_eq), so 0 and -0 differ and an update from one to the other
    cascades; NaN equals itself."""
    t = cols[0].type
    if not pa.types.is_floating(t):
        return list(cols)
    bits = pa.int64() if t.bit_width == 64 else pa.int32()
    return [c.combine_chunks().view(bits) if isinstance(c, pa.ChunkedArray) else c.view(bits) for c in cols]


def _act(tx: OpenTransaction, link: _Link, olds: pa.Table, news: pa.Table | None) -> None:
    fk = link.fk
    action = fk.on_delete if news is None else fk.on_update
    if action == "a" and tx.deferrals.deferred(fk):  # (NO ACTION waits for commit: deferred_keys)
        tx.deferrals.queue(fk, link.parent.oid, False, olds, tx.subxid)
        return
    names = [f"k{i}" for i in range(len(link.parent_cols))]
    keys = olds.rename_columns(names)
    lake = tx.lake
    with lake.dml_lock:
        if action == "a":  # NO ACTION: a key another row now has is still there
            keys = _still_gone(tx, link, keys, names)
            if not keys.num_rows:
                return
        wanted = keys.append_column("_i_min", pa.array(range(keys.num_rows), pa.int64()))
        referencing = _matches(tx, link.child, OWN_CSN - 1, link.child_cols, wanted, names, extra="c.*")
        _check_others_referencing(tx, link, wanted, names)
        if not referencing.num_rows:
            return
        # PostgreSQL fires the action per referenced row, in the statement's order, and
        # its query finds the referencing rows in heap order: by key, then by _rid.
        referencing = referencing.sort_by([("_i", "ascending"), (RID, "ascending")])
        if action in ("a", "r"):
            raise _still_referenced(link, keys, names, min(referencing.column("_i").to_pylist()))
    rows = referencing.drop_columns(["_i"])
    if action == "c" and news is None:
        tx.delete_rows(link.child, rows)
        return
    child_names = [c.name for c in link.child.columns]
    if action == "c":  # ON UPDATE CASCADE: the referencing columns take the new key
        at = referencing.column("_i").to_pylist()
        values = {c: news.column(p).take(pa.array(at)) for c, p in zip(link.child_cols, link.parent_cols, strict=True)}
        assigned = list(fk.columns)
    else:  # SET NULL (the listed columns of ON DELETE SET NULL (…), else all of them)
        assigned = list(fk.set_columns if news is None and fk.set_columns else fk.columns)
        phys = {c.name: c.physical for c in link.child.columns}
        values = {phys[c]: pa.nulls(rows.num_rows, rows.schema.field(phys[c]).type) for c in assigned}
    out = rows
    for c, arr in values.items():
        out = out.set_column(out.column_names.index(c), rows.schema.field(c), arr.cast(rows.schema.field(c).type))
    assert set(assigned) <= set(child_names)
    tx.update_rows(link.child, rows, out, frozenset(assigned))


def _still_referenced(link: _Link, keys: pa.Table, names: list[str], first: int) -> LakeError:
    """NO ACTION's and RESTRICT's error for the ``first`` of ``keys`` a row references."""
    values = [keys.column(n)[first].as_py() for n in names]
    texts = key_texts(link.parent, link.parent_names, values)
    shown = ", ".join("null" if v is None else v for v in texts)
    return LakeError(
        "23503",
        f'update or delete on table "{link.parent.name}" violates foreign key constraint '
        f'"{link.fk.name}" on table "{link.child.name}"',
        detail=f'Key ({", ".join(link.parent_names)})=({shown}) is still referenced from table "{link.child.name}".',
    ).about(schema=link.child.schema, table=link.child.name, constraint=link.fk.name)


def fire_deferred(tx: OpenTransaction, only: set[int] | None = None) -> None:
    """The deferred checks queued in the transaction (``only``: of those constraints), in
    the order they were queued: at COMMIT, PREPARE, or SET CONSTRAINTS … IMMEDIATE."""
    for ev in tx.deferrals.take(only):
        cat = tx.ddl_catalog()
        t = cat.tables.get(ev.relid)
        if t is None:
            continue
        links = referencing_links(tx, t) if ev.referencing else referenced_links(tx, t)
        link = next((lk for lk in links if lk.fk.oid == ev.fk_oid), None)
        if link is None:  # (the constraint or its table went since)
            continue
        names = [f"k{i}" for i in range(len(link.parent_cols))]
        keys = _distinct(ev.keys).select(list(ev.keys.column_names)).rename_columns(names)
        keys = keys.append_column("_i_min", pa.array(range(keys.num_rows), pa.int64()))
        with tx.lake.dml_lock:
            if ev.referencing:  # (a key no row of the transaction's view holds any more is not checked)
                held = _matches(tx, link.child, OWN_CSN - 1, link.child_cols, keys, names)
                alive = sorted(set(held.column("_i").to_pylist()))
                keys = keys.take(pa.array(alive, pa.int64())) if alive else keys.slice(0, 0)
            else:
                keys = _still_gone(tx, link, keys, names)
                if keys.num_rows:
                    wanted = keys.select(names).append_column("_i_min", pa.array(range(keys.num_rows), pa.int64()))
                    referencing = _matches(tx, link.child, OWN_CSN - 1, link.child_cols, wanted, names)
                    if referencing.num_rows:
                        raise _still_referenced(link, keys, names, min(referencing.column("_i").to_pylist()))
        if ev.referencing and keys.num_rows:
            _check_present(tx, link, keys.select(names).rename_columns(list(link.child_cols)))


def _still_gone(tx: OpenTransaction, link: _Link, keys: pa.Table, names: list[str]) -> pa.Table:
    """NO ACTION's ri_Check_Pk_Match: the old keys no row of the referenced table has now."""
    values = list(zip(*(keys.column(n).to_pylist() for n in names), strict=True))
    held = _holders(tx, link.parent, link.parent_cols, values)
    if held is not None and tx.snapshot_csn is None:
        return keys.filter(pa.array([r is None for r in held]))
    wanted = keys.select(names).append_column("_i_min", pa.array(range(keys.num_rows), pa.int64()))
    still = _matches(tx, link.parent, OWN_CSN - 1, link.parent_cols, wanted, names)
    there = set(still.column("_i").to_pylist())
    if not there:
        return keys
    return keys.filter(pa.array([i not in there for i in range(keys.num_rows)]))


def _check_others_referencing(tx: OpenTransaction, link: _Link, keys: pa.Table, names: list[str]) -> None:
    """40001 when another open transaction has pending rows referencing one of ``keys``
    (PostgreSQL's delete would wait on their FOR KEY SHARE lock)."""
    chunks, files = tx.lake.others_pending(tx, link.child, list(link.child_cols))
    if not chunks and not files:
        return
    on = " AND ".join(f'p."{c}" = k."{n}"' for c, n in zip(link.child_cols, names, strict=True))
    cur = tx.lake.store.cursor()
    try:
        cur.register("_keys", keys)
        pool = []
        for i, c in enumerate(chunks):
            cur.register(f"_oth{i}", c)
            pool.append(f"SELECT * FROM _oth{i}")
        pool += files
        sql = f"SELECT 1 FROM ({' UNION ALL '.join(pool)}) p JOIN _keys k ON {on} LIMIT 1"
        if cur.sql(sql).fetchall():
            raise serialization_failure()
    finally:
        cur.close()


def truncate_targets(tx: OpenTransaction, tables: Sequence[Table], cascade: bool) -> list[Table]:
    """TRUNCATE of tables others reference: 0A000 (PostgreSQL's heap_truncate_check_FKs)
    unless they are truncated too; CASCADE adds them (returned, for the NOTICE)."""
    if not _has_keys(tx):
        return []
    cat = tx.catalog()
    oids = {t.oid for t in tables}
    added: list[Table] = []
    todo = list(tables)
    while todo:
        t = todo.pop(0)
        for child, _fk in cat.referencing(t.oid):
            if child.oid in oids:
                continue
            if not cascade:
                raise LakeError(
                    "0A000",
                    "cannot truncate a table referenced in a foreign key constraint",
                    detail=f'Table "{child.name}" references "{t.name}".',
                    hint=f'Truncate table "{child.name}" at the same time, or use TRUNCATE ... CASCADE.',
                )
            oids.add(child.oid)
            added.append(child)
            todo.append(child)
    return added
