"""Queries and DML on DuckDB: the bridge between a session's statements and the lake.

A statement's PostgreSQL text is rewritten (:mod:`walsender_proxy.sql.rewrite`) so catalog
names resolve to the emulated pg_catalog and user tables to their snapshot at the
statement's CSN (plus the transaction's own writes); DuckDB runs it over Parquet and Arrow.
UPDATE and DELETE are rewritten into a SELECT of the target rows (with their ``_rid``) and
their new values, and the lake writes those. Results leave as Arrow batches and are encoded
column by column (:mod:`decoding.pgvalues`), never row by row in Python.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pglast import ast
from pglast.stream import RawStream

from decoding.catalog import RID, Table
from decoding.errors import PgError
from decoding.pgtypes import ColumnType, type_by_oid
from walsender_proxy.lake import Transaction
from walsender_proxy.protocol.messages import encode_data_rows
from walsender_proxy.sql.ddl_sql import qualified, unsupported
from walsender_proxy.sql.outcomes import Column, CopyIn, CopyOut, Done, Outcome, Rows
from walsender_proxy.sql.rewrite import Rewritten

if TYPE_CHECKING:
    import duckdb

    from walsender_proxy.sql.executor import Executor, Portal, Prepared

BATCH_ROWS = 8192
TARGET = "__wp_target__"


class Engine:
    def __init__(self, ex: Executor) -> None:
        self.ex = ex
        self.lake = ex.lake
        self.con: duckdb.DuckDBPyConnection = ex.lake.store.cursor()
        self._registered: list[str] = []
        from walsender_proxy.sql.pgcatalog import CatalogBinding

        self.binding = CatalogBinding(self.con)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.close()

    def interrupt(self) -> None:
        with contextlib.suppress(Exception):
            self.con.interrupt()

    # -- rewriting -----------------------------------------------------------------------
    def _release(self) -> None:
        for name in self._registered:
            with contextlib.suppress(Exception):
                self.con.unregister(name)
        self._registered.clear()

    def _register(self, name: str, table: pa.Table) -> None:
        self.con.register(name, table)
        self._registered.append(name)

    def resolver(self, tx: Transaction, overrides: dict[tuple[str | None, str], str] | None = None) -> Callable[[str | None, str], str | None]:
        """(schema, name) → SQL reading that user table at the statement's snapshot."""

        def resolve(schema: str | None, name: str) -> str | None:
            if overrides:
                hit = overrides.get((schema, name)) or overrides.get((None, name))
                if hit is not None:
                    return hit
            cat = tx.catalog()
            t: Table | None = None
            if schema is not None:
                t = cat.find_table(schema, name)
            else:
                for s in self.ex.search_path():
                    t = cat.find_table(s, name)
                    if t is not None:
                        break
            if t is None:
                return None
            q = tx.snapshot_query(t, with_rid=False, sql_types=True)
            for n, tbl in q.arrow.items():
                self._register(n, tbl)
            return q.sql

        return resolve

    def rewrite(self, sql: str, tx: Transaction, overrides: dict[tuple[str | None, str], str] | None = None) -> str:
        return self.rewritten(sql, tx, overrides).sql

    def rewritten(self, sql: str, tx: Transaction, overrides: dict[tuple[str | None, str], str] | None = None) -> Rewritten:
        from walsender_proxy.sql import catalog_bridge

        return catalog_bridge.rewrite_and_register(self, sql, self.resolver(tx, overrides), tx)

    def relation(self, sql: str, params: Sequence[Any]) -> duckdb.DuckDBPyRelation:
        try:
            return self.con.sql(sql, params=list(params) if params else None)
        except PgError:
            raise
        except Exception as e:
            raise duck_error(e) from None

    def tables_of(self, tx: Transaction, rw: Rewritten) -> list[Table]:
        out = []
        for schema, name in rw.user_tables:
            with contextlib.suppress(PgError):
                out.append(tx.table(f"{schema}.{name}" if schema else name))
        return out

    # -- SELECT --------------------------------------------------------------------------
    def select(self, tx: Transaction, node: ast.SelectStmt, text: str, params: list[Any]) -> Rows:
        self._release()
        if node.intoClause is not None:
            raise unsupported("SELECT INTO")
        if node.lockingClause:
            # FOR UPDATE/SHARE: the rows are read at the snapshot; writers are caught by
            # first-updater-wins at write time.
            node.lockingClause = None
            text = RawStream()(node)
        rw = self.rewritten(text, tx)
        rel = self.relation(rw.sql, params)
        return Rows(result_columns(rel, rw, self.tables_of(tx, rw)), _batches(rel, self.ex))

    def describe_select(self, tx: Transaction, node: ast.SelectStmt, param_types: list[int]) -> list[Column]:
        self._release()
        text = RawStream()(_typed_nulls(node, param_types))
        rw = self.rewritten(text, tx)
        rel = self.relation(f"SELECT * FROM ({rw.sql}) LIMIT 0", [])
        return result_columns(rel, rw, self.tables_of(tx, rw))

    # -- INSERT --------------------------------------------------------------------------
    def insert(self, tx: Transaction, node: ast.InsertStmt, params: list[Any]) -> Iterator[Outcome]:
        self._release()
        if node.onConflictClause is not None:
            raise unsupported("INSERT … ON CONFLICT")
        t = tx.table(qualified(node.relation))
        cols = [c.name for c in node.cols] if node.cols else [c.name for c in t.columns]
        for c in cols:
            if t.column(c) is None:
                raise PgError("42703", f'column "{c}" of relation "{t.name}" does not exist')
        if node.selectStmt is None:  # DEFAULT VALUES
            data = pa.table({c: pa.nulls(1, t.column(c).type.arrow) for c in cols[:1]})  # type: ignore[union-attr]
        else:
            src = node.selectStmt
            _defaults_to_null(src)
            sql = self.rewrite(RawStream()(src), tx)
            rel = self.relation(sql, params)
            if len(rel.columns) > len(cols):
                raise PgError("42601", "INSERT has more expressions than target columns")
            if len(rel.columns) < len(cols) and node.cols:
                raise PgError("42601", "INSERT has more target columns than expressions")
            data = rel.to_arrow_table()
            data = data.rename_columns(cols[: data.num_columns])
            data = coerce_text_columns(t, data)
        n = tx.apply_insert(t, data) if data.num_rows else 0
        if returning(node):
            yield self._returning(tx, t, node.relation, returning(node), tx_rows_since(tx, t, n), params, f"INSERT 0 {n}")
        else:
            yield Done(f"INSERT 0 {n}")

    # -- UPDATE / DELETE -----------------------------------------------------------------
    def update(self, tx: Transaction, node: ast.UpdateStmt, params: list[Any]) -> Iterator[Outcome]:
        self._release()
        t = tx.table(qualified(node.relation))
        alias = node.relation.alias.aliasname if node.relation.alias else node.relation.relname
        sets: dict[str, str] = {}
        for target in node.targetList:
            if target.indirection:
                raise unsupported("UPDATE of array elements or fields")
            col = t.column(target.name)
            if col is None:
                raise PgError("42703", f'column "{target.name}" of relation "{t.name}" does not exist')
            expr = "NULL" if isinstance(target.val, ast.SetToDefault) else RawStream()(target.val)
            sets[col.name] = expr
        news = ", ".join(f'({e}) AS "__new_{n}"' for n, e in sets.items())
        sql = f'SELECT "{alias}".*, {news} FROM {TARGET} AS "{alias}"'
        if node.fromClause:
            sql += ", " + ", ".join(RawStream()(f) for f in node.fromClause)
        if node.whereClause is not None:
            sql += " WHERE " + RawStream()(node.whereClause)
        old = self._targets(tx, t, sql, params)
        new = old
        for name in sets:
            c = t.column(name)
            assert c is not None
            new = new.set_column(new.column_names.index(c.physical), c.physical, coerce_text(c, old.column(f"__new_{name}")))
        keep = [RID] + [c.physical for c in t.columns]
        n = tx.apply_update(t, old.select(keep), new.select(keep), changed=list(sets)) if old.num_rows else 0
        if returning(node):
            yield self._returning(tx, t, node.relation, returning(node), _named(t, new.select(keep)), params, f"UPDATE {n}")
        else:
            yield Done(f"UPDATE {n}")

    def delete(self, tx: Transaction, node: ast.DeleteStmt, params: list[Any]) -> Iterator[Outcome]:
        self._release()
        t = tx.table(qualified(node.relation))
        alias = node.relation.alias.aliasname if node.relation.alias else node.relation.relname
        sql = f'SELECT "{alias}".* FROM {TARGET} AS "{alias}"'
        if node.usingClause:
            sql += ", " + ", ".join(RawStream()(f) for f in node.usingClause)
        if node.whereClause is not None:
            sql += " WHERE " + RawStream()(node.whereClause)
        old = self._targets(tx, t, sql, params)
        keep = [RID] + [c.physical for c in t.columns]
        n = tx.apply_delete(t, old.select(keep)) if old.num_rows else 0
        if returning(node):
            yield self._returning(tx, t, node.relation, returning(node), _named(t, old.select(keep)), params, f"DELETE {n}")
        else:
            yield Done(f"DELETE {n}")

    def _targets(self, tx: Transaction, t: Table, pg_sql: str, params: list[Any]) -> pa.Table:
        """Target rows (``_rid`` + columns under physical names, ``__new_*`` values)."""
        q = tx.snapshot_query(t, with_rid=True, sql_types=True)
        for n, tbl in q.arrow.items():
            self._register(n, tbl)
        sql = self.rewrite(pg_sql, tx, {(None, TARGET): q.sql})
        data = self.relation(sql, params).to_arrow_table()
        # A row joined to several FROM rows is updated once, as in PostgreSQL.
        if data.num_rows and pc.count_distinct(data.column(RID)).as_py() != data.num_rows:
            first = pa.table({"r": data.column(RID), "i": pa.array(np.arange(data.num_rows))}).group_by("r").aggregate([("i", "min")])
            data = data.take(np.sort(first.column("i_min").to_numpy()))
        names = {c.name: c.physical for c in t.columns}
        return data.rename_columns([names.get(c, c) if not c.startswith("__new_") else c for c in data.column_names])

    def _returning(self, tx: Transaction, t: Table, rv: ast.RangeVar, targets: Any, rows: pa.Table, params: list[Any], tag: str) -> Rows:
        name = f"__wp_ret_{id(rows)}"
        if RID in rows.column_names:
            rows = rows.drop_columns([RID])
        self._register(name, rows)
        alias = rv.alias.aliasname if rv.alias else rv.relname
        sel = ", ".join(RawStream()(x) for x in targets)
        rw = self.rewritten(f'SELECT {sel} FROM {TARGET} AS "{alias}"', tx, {(None, TARGET): f"SELECT * FROM {name}"})
        rel = self.relation(rw.sql, params)
        return Rows(result_columns(rel, rw, [t]), iter(rel.to_arrow_table().to_batches(BATCH_ROWS)), fixed_tag=tag)

    def describe_returning(self, tx: Transaction, node: Any, param_types: list[int]) -> list[Column]:
        self._release()
        t = tx.table(qualified(node.relation))
        q = tx.snapshot_query(t, with_rid=False, sql_types=True)
        for n, tbl in q.arrow.items():
            self._register(n, tbl)
        alias = node.relation.alias.aliasname if node.relation.alias else node.relation.relname
        sel = ", ".join(RawStream()(x) for x in returning(node))
        rw = self.rewritten(f'SELECT {sel} FROM {TARGET} AS "{alias}" LIMIT 0', tx, {(None, TARGET): q.sql})
        return result_columns(self.relation(rw.sql, []), rw, [t])

    # -- COPY ----------------------------------------------------------------------------
    def copy(self, tx: Transaction, node: ast.CopyStmt, params: list[Any]) -> Outcome:
        from decoding.copyformat import CopyDecoder, encode_copy

        self._release()
        if node.filename is not None or node.is_program:
            raise PgError("42501", "COPY to or from a file is not supported by walsender-proxy", hint="Use COPY … TO STDOUT or FROM STDIN.")
        opts = _copy_options(node.options)
        fmt = opts.pop("format", "text")
        if node.is_from:
            if node.query is not None or node.relation is None:
                raise PgError("42601", "COPY FROM needs a table")
            t = tx.table(qualified(node.relation))
            cols = [c.sval for c in node.attlist] if node.attlist else [c.name for c in t.columns]
            ctypes = []
            for c in cols:
                col = t.column(c)
                if col is None:
                    raise PgError("42703", f'column "{c}" of relation "{t.name}" does not exist')
                ctypes.append(col.type)
            dec = CopyDecoder(ctypes, fmt, **opts)
            state: dict[str, Any] = {"rows": 0}

            def feed(data: bytes) -> None:
                dec.feed(data)

            def finish() -> str:
                table = dec.finish()
                table = table.rename_columns(cols)
                n = tx.apply_insert(t, table) if table.num_rows else 0
                state["rows"] = n
                return f"COPY {n}"

            def fail(_msg: str) -> None:
                self.ex.fail()

            return CopyIn(fmt == "binary", len(cols), feed, finish, fail)
        if node.query is not None:
            rw = self.rewritten(RawStream()(node.query), tx)
            rel = self.relation(rw.sql, params)
            columns = result_columns(rel, rw, self.tables_of(tx, rw))
        else:
            t = tx.table(qualified(node.relation))
            cols = [c.sval for c in node.attlist] if node.attlist else [c.name for c in t.columns]
            for c in cols:
                if t.column(c) is None:
                    raise PgError("42703", f'column "{c}" of relation "{t.name}" does not exist')
            q = tx.snapshot_query(t, sql_types=True)
            for n, tbl in q.arrow.items():
                self._register(n, tbl)
            col_sql = ", ".join(f'"{c}"' for c in cols)
            rel = self.relation(f"SELECT {col_sql} FROM ({q.sql})", [])
            columns = [Column(c, t.column(c).type) for c in cols]  # type: ignore[union-attr]
        counter = {"n": 0}
        ctypes = [c.type for c in columns]

        def chunks() -> Iterator[bytes]:
            # The result is materialised (Arrow, columnar) so header, binary signature
            # and trailer come out once; encode_copy then streams it in CopyData chunks.
            batches = list(_batches(rel, self.ex))
            table = pa.Table.from_batches(batches, schema=batches[0].schema) if batches else _empty(rel)
            table = table.rename_columns([c.name for c in columns])
            counter["n"] = table.num_rows
            yield from encode_copy(table, ctypes, fmt, **opts)

        return CopyOut(fmt == "binary", len(columns), chunks(), lambda: counter["n"])

    # -- parameters ----------------------------------------------------------------------
    def decode_params(self, st: Prepared, formats: Sequence[int], params: Sequence[bytes | None]) -> list[Any]:
        from decoding.pgvalues import binary_decoder, text_decoder

        out: list[Any] = []
        for i, raw in enumerate(params):
            fmt = formats[0] if len(formats) == 1 else formats[i] if i < len(formats) else 0
            oid = st.param_types[i] if i < len(st.param_types) else 0
            if raw is None:
                out.append(None)
                continue
            if not oid:
                if fmt == 1:
                    raise PgError("08P01", f"binary data for parameter ${i + 1} of unknown type")
                out.append(raw.decode("utf-8"))
                continue
            ctype = type_by_oid(oid)
            dec = binary_decoder(ctype) if fmt == 1 else text_decoder(ctype)
            out.append(dec([raw])[0].as_py())
        return out


# -- results -------------------------------------------------------------------------------


_STRINGY = frozenset({"text", "varchar", "bpchar", "json", "jsonb", "uuid", "numeric"})


def result_columns(rel: duckdb.DuckDBPyRelation, rw: Rewritten | None, tables: list[Table] | None = None) -> list[Column]:
    """Result columns: PostgreSQL's names and types. The rewriter knows catalog types
    (name, oid, regclass …); a user table's column keeps its declared type (jsonb,
    varchar(10), uuid) where DuckDB only says VARCHAR or JSON; else DuckDB's type maps."""
    from decoding.pgvalues import pg_type_for_duckdb
    from walsender_proxy.sql.pgcatalog import TYPES

    declared: dict[str, ColumnType] = {}
    for t in tables or ():
        for c in t.columns:
            declared.setdefault(c.name, c.type)
    cols = []
    known = rw.columns if rw is not None and rw.columns is not None and len(rw.columns) == len(rel.columns) else None
    for i, (name, t) in enumerate(zip(rel.columns, rel.types, strict=True)):
        ctype = pg_type_for_duckdb(str(t))
        oc = known[i] if known is not None else None
        out_name = oc.name if oc is not None else name
        oid = oc.type_oid if oc is not None else None
        if oid is None or oid == ctype.oid:
            decl = declared.get(out_name)
            if decl is not None and decl.is_array == ctype.is_array and decl.base.name in _STRINGY and ctype.base.name in _STRINGY:
                ctype = decl
            typmod = oc.typmod if oc is not None and oc.typmod != -1 else None
            cols.append(Column(out_name, ctype, pg_typmod=typmod))
            continue
        row = TYPES.rows.get(oid)
        typlen = row["typlen"] if row else -1
        cols.append(Column(out_name, ctype, pg_oid=oid, pg_typlen=typlen, pg_typmod=oc.typmod if oc else -1))
    return cols


def duck_error(e: Exception) -> PgError:
    import duckdb

    from walsender_proxy.sql.pgcatalog import translate_error

    if isinstance(e, duckdb.InterruptException):
        return PgError("57014", "canceling statement due to user request")
    if isinstance(e, duckdb.BinderException):
        m = _DUCK_COLUMN.search(str(e))
        if m:
            return PgError("42703", f'column "{m.group(1)}" does not exist')
    return translate_error(e)


_DUCK_COLUMN = re.compile(r'(?:Referenced column|Column) "([^"]+)" (?:not found|referenced)')


def _batches(rel: duckdb.DuckDBPyRelation, ex: Executor) -> Iterator[pa.RecordBatch]:
    try:
        reader = rel.to_arrow_reader(batch_size=BATCH_ROWS)
    except Exception as e:
        raise duck_error(e) from None
    while True:
        if ex.cancelled.is_set():
            raise PgError("57014", "canceling statement due to user request")
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except Exception as e:
            raise duck_error(e) from None
        yield batch


def encode_rows(rows: Rows, formats: list[int], ex: Executor) -> Iterator[tuple[bytes, int]]:
    """DataRow bytes, a batch at a time, encoded column by column."""
    from decoding.pgvalues import binary_encoder, text_encoder

    encoders = []
    for i, c in enumerate(rows.columns):
        fmt = formats[0] if len(formats) == 1 else formats[i] if i < len(formats) else 0
        encoders.append(binary_encoder(c.type) if fmt == 1 else text_encoder(c.type))
    for batch in rows.batches:
        if ex.cancelled.is_set():
            raise PgError("57014", "canceling statement due to user request")
        if batch.num_rows == 0:
            continue
        cols = [enc(batch.column(i)) for i, enc in enumerate(encoders)]
        yield encode_data_rows(zip(*cols, strict=True)) if cols else b"", batch.num_rows


def fetch_portal(ex: Executor, portal: Portal, max_rows: int) -> tuple[str, Any]:
    """One step of an Execute: ('rows', bytes), ('suspended', None), ('done', tag),
    ('outcome', Outcome) or ('end', None). The session calls it until it gets one of the
    last three kinds (or 'suspended'). As in PostgreSQL, a portal that stops exactly at
    ``max_rows`` is suspended; the next Execute then completes it with no rows."""
    if portal.done:
        return "done", portal.extra.get("tag", "SELECT 0")
    if portal.extra.pop("suspend_now", False):
        return "suspended", None
    if portal.pending_rows is None:
        assert portal.outcomes is not None
        try:
            o = next(portal.outcomes)
        except StopIteration:
            portal.done = True
            return "end", None
        if not isinstance(o, Rows):
            if isinstance(o, Done):
                portal.done = True
                portal.extra["tag"] = o.tag
                return "done", o.tag
            return "outcome", o
        portal.pending_rows = o
    rows = portal.pending_rows
    encs = portal.extra.get("encoders")
    if encs is None:
        from decoding.pgvalues import binary_encoder, text_encoder

        f = portal.result_formats
        encs = []
        for i, c in enumerate(rows.columns):
            fmt = f[0] if len(f) == 1 else f[i] if i < len(f) else 0
            encs.append(binary_encoder(c.type) if fmt == 1 else text_encoder(c.type))
        portal.extra["encoders"] = encs
    budget = max_rows - portal.sent if max_rows > 0 else None
    out: list[bytes] = []
    got = 0
    exhausted = False
    while budget is None or got < budget:
        if ex.cancelled.is_set():
            raise PgError("57014", "canceling statement due to user request")
        batch = portal.carry
        portal.carry = None
        if batch is None:
            batch = next(rows.batches, None)
            if batch is None:
                exhausted = True
                break
        if budget is not None and batch.num_rows > budget - got:
            portal.carry = batch.slice(budget - got)
            batch = batch.slice(0, budget - got)
        if batch.num_rows:
            cols = [enc(batch.column(i)) for i, enc in enumerate(encs)]
            out.append(encode_data_rows(zip(*cols, strict=True)))
            got += batch.num_rows
        if budget is None and len(out) >= 16:
            break
    portal.sent += got
    if exhausted:
        tag = rows.fixed_tag or f"{rows.verb} {portal.sent}"
        portal.done = True
        portal.extra["tag"] = tag
        if out:
            return "rows", b"".join(out)
        return "done", tag
    if budget is not None and got >= budget:
        portal.sent = 0  # counts per Execute, like PostgreSQL's completion tag
        portal.extra["suspend_now"] = True
    return "rows", b"".join(out)


def tx_rows_since(tx: Transaction, t: Table, n: int) -> pa.Table:
    """The last ``n`` rows this transaction wrote to ``t`` (for INSERT … RETURNING)."""
    own = tx.own_rows(t.oid)
    assert own is not None
    rows = own.slice(own.num_rows - n)
    return _named(t, rows.select([RID] + [c.physical for c in t.columns]))


def _named(t: Table, rows: pa.Table) -> pa.Table:
    names = {c.physical: c.name for c in t.columns}
    return rows.rename_columns([names.get(c, c) for c in rows.column_names])


def _empty(rel: duckdb.DuckDBPyRelation) -> pa.Table:
    return rel.limit(0).to_arrow_table()


def coerce_text(col: Any, arr: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A text value bound for a non-text column goes through the column type's input
    function, as PostgreSQL resolves an untyped literal ('{a,b}' into text[], '\\x00' into
    bytea, '1 day' into interval) — DuckDB would only see a string."""
    from decoding.pgvalues import decode_text_arrow

    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return arr
    if (
        pa.types.is_string(col.type.arrow)
        and col.type.base.name in ("text", "varchar", "bpchar", "numeric", "json", "jsonb")
        and not col.type.is_array
        and col.type.typmod < 0
    ):
        return arr
    return decode_text_arrow(col.type, arr)


def coerce_text_columns(t: Table, data: pa.Table) -> pa.Table:
    for i, name in enumerate(data.column_names):
        col = t.column(name)
        if col is not None:
            data = data.set_column(i, name, coerce_text(col, data.column(i)))
    return data


def returning(node: Any) -> tuple[Any, ...] | None:
    """RETURNING targets (pglast follows PostgreSQL 18's ReturningClause node)."""
    rc = getattr(node, "returningClause", None)
    if rc is not None:
        return rc.exprs
    return getattr(node, "returningList", None)


def _defaults_to_null(node: Any) -> None:
    """DEFAULT → NULL (no column defaults), and literals of a VALUES column that mixes
    quoted and bare literals all become text: PostgreSQL resolves a quoted literal by the
    target column's input function ('NaN' into real next to 1.5), which
    :func:`coerce_text_columns` does — DuckDB would force the column to the bare literal's
    type and fail."""
    if not (isinstance(node, ast.SelectStmt) and node.valuesLists):
        return
    rows = [[ast.A_Const(isnull=True) if isinstance(v, ast.SetToDefault) else v for v in row] for row in node.valuesLists]
    width = max(len(r) for r in rows)
    for col in range(width):
        vals = [r[col] for r in rows if col < len(r)]
        if any(isinstance(v, ast.A_Const) and isinstance(v.val, ast.String) for v in vals):
            for r in rows:
                v = r[col] if col < len(r) else None
                if isinstance(v, ast.A_Const) and isinstance(v.val, (ast.Integer, ast.Float)):
                    text = str(v.val.ival) if isinstance(v.val, ast.Integer) else v.val.fval
                    r[col] = ast.A_Const(isnull=False, val=ast.String(sval=text))
    node.valuesLists = tuple(tuple(r) for r in rows)


def _typed_nulls(node: Any, param_types: list[int]) -> Any:
    """A copy of the statement with ``$n`` replaced by ``NULL::type`` (for Describe)."""
    import copy

    node = copy.deepcopy(node)

    def visit(n: Any) -> Any:
        if isinstance(n, ast.ParamRef):
            oid = param_types[n.number - 1] if n.number - 1 < len(param_types) else 25
            ct = type_by_oid(oid or 25)
            return ast.TypeCast(arg=ast.A_Const(isnull=True), typeName=ast.TypeName(names=(ast.String(sval=ct.base.name),), arrayBounds=(ast.Integer(ival=-1),) if ct.is_array else None))
        if isinstance(n, ast.Node):
            for name in n:
                v = getattr(n, name)
                nv = visit(v)
                if nv is not v:
                    setattr(n, name, nv)
            return n
        if isinstance(n, tuple):
            return tuple(visit(x) for x in n)
        return n

    return visit(node)


def _copy_options(options: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for o in options or ():
        name = o.defname
        arg = o.arg
        if isinstance(arg, ast.String):
            val: Any = arg.sval
        elif isinstance(arg, ast.Integer):
            val = arg.ival
        elif isinstance(arg, ast.Boolean):
            val = arg.boolval
        elif isinstance(arg, tuple):
            val = tuple(a.sval for a in arg)
        elif arg is None:
            val = True
        else:
            val = RawStream()(arg)
        if name == "format":
            val = str(val).lower()
            if val not in ("text", "csv", "binary"):
                raise PgError("22023", f'COPY format "{val}" not recognized')
        elif name not in ("delimiter", "null", "header", "quote", "escape", "force_quote", "encoding", "force_not_null", "force_null", "freeze"):
            raise PgError("42601", f'option "{name}" not recognized')
        if name in ("encoding", "freeze"):
            continue
        out[name] = val
    return out

