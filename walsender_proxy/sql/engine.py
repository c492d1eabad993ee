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
import dataclasses
import math
import re
import struct
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date as date_type
from datetime import datetime as datetime_type
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pglast import ast, enums
from pglast.stream import RawStream

from decoding import pgtz
from decoding.catalog import RID, Table
from decoding.errors import PgError
from decoding.pgtime import TRANSACTION_NOW
from decoding.pgtypes import ColumnType, type_by_oid
from walsender_proxy.backend.outcomes import (
    BINARY_AS_PG,
    OID_LIKE,
    Column,
    CopyIn,
    CopyOut,
    Done,
    Outcome,
    Rows,
)
from walsender_proxy.lake import Transaction
from walsender_proxy.lake.files import CHANGESET_ROW_GROUP
from walsender_proxy.lake.transaction import layout
from walsender_proxy.protocol.messages import encode_data_rows
from walsender_proxy.sql import (
    catalog_bridge,
    defaults,
    explain,
    float_math,
    identity,
    numeric_math,
    prepared_datestyle,
    sequences,
    session_zone,
    upsert,
    views,
)
from walsender_proxy.sql.ddl_sql import qualified, unsupported
from walsender_proxy.sql.literals import duckdb_cast_error
from walsender_proxy.sql.pgcatalog import CatalogBinding, translate_error
from walsender_proxy.sql.readahead import ReadAhead
from walsender_proxy.sql.rewrite import (
    CLOCK_VARIABLE_PREFIX,
    NO_COLUMNS,
    STATEMENT_CLOCK,
    TRANSACTION_CLOCK,
    Origin,
    Rewritten,
    UserTable,
)
from walsender_proxy.sql.udf_errors import udf_error

if TYPE_CHECKING:
    import duckdb

    from walsender_proxy.sql.portals import Portal, Prepared
    from walsender_proxy.sql.services import SessionState

BATCH_ROWS = 8192
#: Rows per batch of an INSERT … SELECT's result (a changeset row group).
INSERT_BATCH_ROWS = CHANGESET_ROW_GROUP
TARGET = "__wp_target__"


class Engine:
    def __init__(self, ex: SessionState) -> None:
        self.ex = ex
        self.lake = ex.lake
        self.con: duckdb.DuckDBPyConnection = ex.lake.store.cursor()
        self._registered: list[str] = []
        #: Point-statement plans: SELECTs by text, UPDATE/DELETE by id(node) (see below).
        self._plans: dict[Any, Any] = {}
        self.binding = CatalogBinding(self.con)
        #: The session zone DuckDB's TimeZone was last set to (:meth:`_sync_zone`).
        self._zone: pgtz.Zone = pgtz.UTC_ZONE

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.close()

    @property
    def date_order(self) -> str:
        """The session's DateStyle field order: text going into date and timestamp columns
        is read in it."""
        return self.ex.settings.datetime_input()

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

    def resolver(self, tx: Transaction, overrides: dict[tuple[str | None, str], str | UserTable] | None = None) -> Callable[[str | None, str], str | UserTable | views.ViewQuery | None]:
        """(schema, name) → SQL reading that user table at the statement's snapshot, with
        its columns' declared types."""

        def resolve(schema: str | None, name: str) -> str | UserTable | views.ViewQuery | None:
            if overrides:
                hit = overrides.get((schema, name)) or overrides.get((None, name))
                if hit is not None:
                    return hit
            cat = tx.catalog()
            t: Table | None = None
            if schema == "pg_temp":
                schema = self.ex.temp_schema
            v = views.find(cat, schema, name, self.ex.search_path())
            if v is not None:
                views.check_restricted(v, self.ex.settings.get("restrict_nonsystem_relation_kind"))
                return views.as_query(v)
            if schema is not None:
                t = cat.find_table(schema, name)
            else:
                for s in self.ex.search_path():
                    t = cat.find_table(s, name)
                    if t is not None:
                        break
            if t is None:
                found = sequences.as_relation(self.lake, cat, [schema] if schema is not None else self.ex.search_path(), name)
                if found is None:
                    return None
                self._register(*found[0])
                return UserTable(found[1], sequences.RELATION_TYPES)
            if t.schema == self.ex.temp_schema:
                self.ex.temp_read = True  # (PREPARE TRANSACTION refuses it then)
            q = tx.snapshot_query(t, with_rid=False, sql_types=True, heap_order=True)
            for n, tbl in q.arrow.items():
                self._register(n, tbl)
            return _typed(q.sql, t)

        return resolve

    def rewrite(self, sql: str, tx: Transaction, overrides: dict[tuple[str | None, str], str | UserTable] | None = None, params: Sequence[Any] = ()) -> str:
        return self.rewritten(sql, tx, overrides, params).sql

    def rewritten(self, sql: str, tx: Transaction, overrides: dict[tuple[str | None, str], str | UserTable] | None = None, params: Sequence[Any] = ()) -> Rewritten:
        """The statement for DuckDB; ``params`` (the bound values) tell which ``$n`` are
        text, whose casts go through the target type's input function."""
        self._sync_zone()
        token = TRANSACTION_NOW.set(self.ex.xact_start_us)
        try:
            return catalog_bridge.rewrite_and_register(
                self.ex, self.binding, sql, self.resolver(tx, overrides), tx, text_params(params), getattr(params, "types", ()),
                getattr(params, "literal_date_order", None),
            )
        finally:
            TRANSACTION_NOW.reset(token)

    def _args(self, params: Sequence[Any], dropped: frozenset[int] = frozenset()) -> list[Any] | dict[str, Any] | None:
        unused = getattr(params, "unused", None)
        args: list[Any] | dict[str, Any] | None = list(params) if params else None
        if dropped and params:
            unused = frozenset(unused or ()) | dropped
        if unused:
            args = {str(n): v for n, v in enumerate(params, 1) if n not in unused} or None
        return args

    def relation(self, sql: str, params: Sequence[Any], dropped: frozenset[int] = frozenset()) -> duckdb.DuckDBPyRelation:
        """DuckDB's relation for ``sql`` with the bound values. A parameter Parse declared
        but the statement does not use is left out (DuckDB refuses a value it has no
        ``$n`` for; PostgreSQL takes and ignores it), as is one the translation dropped
        with the argument it was in (``dropped``)."""
        unused = getattr(params, "unused", None)
        args: list[Any] | dict[str, Any] | None = list(params) if params else None
        if dropped and params:
            unused = frozenset(unused or ()) | dropped
        if unused:
            args = {str(n): v for n, v in enumerate(params, 1) if n not in unused} or None
        try:
            if CLOCK_VARIABLE_PREFIX in sql:
                self._set_clocks()
            return self.con.sql(sql, params=args)
        except PgError:
            raise
        except Exception as e:
            raise duck_error(e) from None

    def _sync_zone(self) -> None:
        """DuckDB's TimeZone on the session's cursor made the session's, before a statement
        is translated: its ICU functions (casts between timestamptz and timestamp or date,
        date_trunc, interval arithmetic, generate_series) then compute in it."""
        zone = self.ex.settings.zone()
        if zone == self._zone:
            return
        name = session_zone.duck_zone(zone)
        if name is None:
            raise PgError("0A000", f'TimeZone "{zone.name}" is not supported by walsender-proxy')
        try:
            self.con.execute(f"SET TimeZone = '{name}'")
            agrees = session_zone.icu_agrees(self.con, zone)
        except duckdb.Error:
            agrees = False
        if not agrees:
            self.con.execute("SET TimeZone = 'UTC'")
            self._zone = pgtz.UTC_ZONE
            raise PgError("0A000", f'TimeZone "{zone.name}" is not supported by walsender-proxy')
        self._zone = zone

    def _set_clocks(self) -> None:
        """The transaction's and the statement's timestamps, which the rewritten statement
        reads as DuckDB variables (DuckDB's own now() is its transaction's start)."""
        xact = self.ex.xact_start_us
        stmt = int(self.ex.query_start * 1_000_000) if self.ex.query_start is not None else xact
        self.con.execute(
            f"SET VARIABLE {TRANSACTION_CLOCK} = timezone('UTC', make_timestamp({xact}));"
            f" SET VARIABLE {STATEMENT_CLOCK} = timezone('UTC', make_timestamp({stmt}))"
        )

    def tables_of(self, tx: Transaction, rw: Rewritten) -> list[Table]:
        out = []
        for schema, name in rw.user_tables:
            with contextlib.suppress(PgError):
                v = views.find(tx.catalog(), schema, name, self.ex.search_path())
                out.append(views.as_table(v) if v is not None else tx.table(f"{schema}.{name}" if schema else name))
        return out

    # -- SELECT --------------------------------------------------------------------------
    def select(self, tx: Transaction, node: ast.SelectStmt, text: str, params: list[Any]) -> Rows:
        self._release()
        if node.intoClause is not None:
            raise unsupported("SELECT INTO")
        plan = self._select_plan(node, text)
        if plan is not None:
            fast = self._point_select(tx, plan, params)
            if fast is not None:
                return fast
        # FOR UPDATE/SHARE: the rows are read at the snapshot (the rewriter drops the clause,
        # keeping PostgreSQL's refusals); writers are caught by first-updater-wins at write time.
        rw = self.rewritten(text, tx, params=params)
        try:
            rel = self.relation(rw.sql, params, rw.dropped_params)
        except PgError as e:
            _locate_missing_column(e, node)
            raise
        rows = Rows(result_columns(rel, rw, self.tables_of(tx, rw)), _batches(rel, self.ex))
        if _no_columns(rows.columns):
            rows = Rows([], (b.select([]) for b in rows.batches))
        if plan is not None:
            self._remember_columns(tx, plan, rows.columns)
        return rows

    def explain(self, tx: Transaction, node: ast.ExplainStmt, params: list[Any]) -> Rows:
        """EXPLAIN of a query: DuckDB's plan of the statement the proxy runs for it, one
        line a row in a ``QUERY PLAN`` column (``sql/explain.py``)."""
        query = explain.checked(node)
        rw = self.rewritten(RawStream()(query), tx, params=params)
        analyze = explain.analyze(node)
        try:
            plan = self.con.execute(("EXPLAIN ANALYZE " if analyze else "EXPLAIN ") + rw.sql, self._args(params, rw.dropped_params)).fetchall()
        except PgError:
            raise
        except Exception as e:
            raise duck_error(e) from None
        return explain.rows(plan)

    def describe_select(self, tx: Transaction, node: ast.SelectStmt, param_types: list[int], text: str | None = None) -> list[Column]:
        self._release()
        plan = self._select_plan(node, text) if text is not None else None
        if plan is not None and self._columns_valid(tx, plan):
            return plan.columns  # type: ignore[return-value]
        rw = self.rewritten(RawStream()(_typed_nulls(node, param_types)), tx)
        rel = self.relation(f"SELECT * FROM ({rw.sql}) LIMIT 0", [])
        cols = result_columns(rel, rw, self.tables_of(tx, rw))
        if _no_columns(cols):
            cols = []
        if plan is not None:
            self._remember_columns(tx, plan, cols)
        return cols

    def describe_text(self, tx: Transaction, sql: str) -> list[Column]:
        """The result columns of a query given as text (CREATE VIEW's, whose positions
        are the statement's)."""
        self._release()
        rw = self.rewritten(sql, tx)
        rel = self.relation(f"SELECT * FROM ({rw.sql}) LIMIT 0", [], rw.dropped_params)
        return result_columns(rel, rw, self.tables_of(tx, rw))

    # -- point statements (see _PointPlan) -----------------------------------------------
    def _select_plan(self, node: Any, text: str) -> _PointPlan | None:
        key = ("S", text)
        plan = self._plans.get(key, _NOT_SIMPLE)
        if plan is _NOT_SIMPLE:
            plan = _select_plan(node)
            self._keep_plan(key, plan)
        return plan  # type: ignore[return-value]

    def _insert_plan(self, node: Any) -> _InsertPlan | None:
        key = ("I", id(node))
        plan = self._plans.get(key, _NOT_SIMPLE)
        if plan is _NOT_SIMPLE or (plan is not None and plan.node is not node):  # type: ignore[union-attr]
            plan = _insert_plan(node)
            self._keep_plan(key, plan)  # type: ignore[arg-type]
        return plan  # type: ignore[return-value]

    def _dml_plan(self, node: Any) -> _PointPlan | None:
        plan = self._plans.get(id(node), _NOT_SIMPLE)
        if plan is _NOT_SIMPLE or (plan is not None and plan.node is not node):  # type: ignore[union-attr]
            plan = _dml_plan(node)
            self._keep_plan(id(node), plan)
        return plan  # type: ignore[return-value]

    def _keep_plan(self, key: Any, plan: Any) -> None:
        if len(self._plans) >= 512:
            self._plans.clear()
        self._plans[key] = plan

    def _catalog_key(self, tx: Transaction) -> tuple[Any, tuple[str, ...]]:
        return tx.catalog(), tuple(self.ex.search_path())

    def _columns_valid(self, tx: Transaction, plan: _PointPlan) -> bool:
        """The plan's remembered result columns hold for this statement's catalog."""
        if plan.columns is None or plan.columns_for is None:
            return False
        cat, path = self._catalog_key(tx)
        return plan.columns_for[0] is cat and plan.columns_for[1] == path

    def _remember_columns(self, tx: Transaction, plan: _PointPlan, columns: list[Column]) -> None:
        plan.columns = columns
        plan.columns_for = self._catalog_key(tx)

    def _point_select(self, tx: Transaction, plan: _PointPlan, params: list[Any]) -> Rows | None:
        """A SELECT by primary key answered from the key index and row cache, with the
        result columns an earlier DuckDB run of the same text gave; None: run DuckDB."""
        if not self._columns_valid(tx, plan):
            return None
        cat, path = plan.columns_for
        t = cat.find_table(plan.schema, plan.relname) if plan.schema else next(
            (cat.find_table(s, plan.relname) for s in path if cat.relation_exists(s, plan.relname)), None
        )
        if t is None:
            return None
        out: list[tuple[str, Any]] = []
        for name, colname in plan.targets:
            if colname is None:
                out.extend((c.name, c) for c in t.columns)
                continue
            c = t.column(colname)
            if c is None:
                return None
            out.append((name, c))
        if len(out) != len(plan.columns) or any(
            c.type.is_array or c.type.base.name not in _FAST_READ_TYPES for _, c in out
        ):
            return None
        key = _key_value(t, plan, params)
        if key is None:
            return None
        known, rid, values, rcols = self.lake.point_read(tx, t, key)
        if not known:
            return None
        try:
            if rid is None:
                arrays = [pa.array([], c.type.arrow) for _, c in out]
            else:
                row = dict(zip(rcols, values or (), strict=True))
                arrays = [pa.array([row[c.physical]], c.type.arrow) for _, c in out]
        except (pa.ArrowException, TypeError, ValueError, OverflowError, KeyError):
            return None
        batch = pa.RecordBatch.from_arrays(arrays, names=[n for n, _ in out])
        return Rows(plan.columns, iter([batch]))

    def _point_write(self, tx: Transaction, node: Any, params: list[Any], verb: str) -> Done | None:
        """UPDATE/DELETE of one row by primary key, its row from the key index and row
        cache; None: run DuckDB (which also raises every error this does not)."""
        plan = self._dml_plan(node)
        if plan is None:
            return None
        try:
            t = tx.table(qualified(node.relation))
        except PgError:
            return None
        if not t.primary_key:
            return None
        sets = []
        for name, expr in plan.sets:
            col = t.column(name)
            if col is None or (isinstance(expr, ast.SetToDefault) and col.default is not None):
                return None
            sets.append((col, expr))
        key = _key_value(t, plan, params)
        if key is None:
            return None
        with tx.statement_section():  # the read and the write in one step, and see Engine.insert
            return self._point_write_locked(tx, t, key, sets, params, verb)

    def _point_write_locked(
        self, tx: Transaction, t: Table, key: Any, sets: list[tuple[Any, Any]], params: list[Any], verb: str
    ) -> Done | None:
        known, rid, values, rcols = self.lake.point_read(tx, t, key)
        if not known:
            return None
        if rid is None:
            return Done(f"{verb} 0")
        row = dict(zip(rcols, values or (), strict=True))
        old = _row_table(t, rid, row)
        if old is None:
            return None
        if verb == "DELETE":
            return Done(f"DELETE {tx.apply_delete(t, old)}")
        new = old
        try:
            for col, expr in sets:
                if isinstance(expr, ast.SetToDefault):
                    v = None
                else:
                    r = _operand(expr, params, row, t)
                    if r is _NOT_SIMPLE:
                        return None
                    v = None if r is None else r[0]
                arr = _direct_array(col, [v], self.date_order)
                if arr is None:
                    return None
                i = new.schema.get_field_index(col.physical)
                new = new.set_column(i, new.schema.field(i), arr)
        except (PgError, pa.ArrowException, TypeError, ValueError, OverflowError):
            return None
        n = tx.apply_update(t, old, new, changed=[c.name for c, _ in sets])
        return Done(f"UPDATE {n}")

    # -- INSERT --------------------------------------------------------------------------
    def insert(self, tx: Transaction, node: ast.InsertStmt, params: list[Any]) -> Iterator[Outcome]:
        self._release()
        if any(c.indirection for c in node.cols or ()):  # (INSERT INTO t (a[1]) would store the whole value)
            raise unsupported("INSERT into array elements or fields")
        if getattr(params, "literal_date_order", None) is not None:
            prepared_datestyle.check_write(node, params, [c.type for c in tx.table(qualified(node.relation)).columns])
        if node.onConflictClause is not None:
            yield from self._upsert(tx, node, params)
            return
        _attach_with(node)
        plan = self._insert_plan(node)
        cat = tx.catalog()
        if plan is not None and plan.catalog is cat:
            t, cols, colobjs = plan.table, plan.cols, plan.colobjs  # resolved for this catalog
        else:
            t = sequences.write_target(tx, node.relation, sequences.CHANGE)
            cols = [c.name for c in node.cols] if node.cols else [c.name for c in t.columns]
            for c in cols:
                if t.column(c) is None:
                    raise PgError("42703", f'column "{c}" of relation "{t.name}" does not exist')
            colobjs = None
            if plan is not None and len(cols) >= plan.width and (len(cols) == plan.width or not node.cols):
                plan.catalog, plan.table, plan.cols = cat, t, cols[: plan.width]
                plan.colobjs = colobjs = [t.column(c) for c in plan.cols]
                plan.inputs = [_ColumnInput(c) for c in colobjs]
                plan.storage = plan.cols == layout(t).names
                plan.defaults = defaults.has_set_to_default(node.selectStmt, t, plan.cols) or identity.affects_insert(node, t, plan.cols)
        data = None
        if plan is not None and colobjs is not None and not plan.defaults:
            omitted = defaults.OmittedDefaults(self, tx, t, plan.cols)
            omitted.prepare()  # (the defaults' values, before the statement section)
            if not returning(node) and all(len(items) <= 16 for items in plan.items):
                # A few rows from bound values: building them and inserting them in one
                # section of the lake's statement lock (Transaction.statement_section).
                with tx.statement_section():
                    data = _values_from_plan(plan, params, self.date_order)
                    if data is not None:
                        data = omitted.add(data)
                        n = tx.apply_insert(t, data) if data.num_rows else 0
                if data is not None:
                    yield Done(f"INSERT 0 {n}")
                    return
            else:
                data = _values_from_plan(plan, params, self.date_order)
                if data is not None:
                    data = omitted.add(data)
        if data is None and node.selectStmt is None:  # DEFAULT VALUES
            omitted = defaults.OmittedDefaults(self, tx, t, ())
            if omitted:
                data = omitted.add(pa.table({}), 1)
            else:
                data = pa.table({c: pa.nulls(1, t.column(c).type.arrow) for c in cols[:1]})  # type: ignore[union-attr]
        elif data is None:
            ignored = identity.ignored_on_insert(node, t, cols)
            src = defaults.with_defaults(node.selectStmt, t, cols, tx.catalog())
            _defaults_to_null(src, [i for i, c in enumerate(cols) if _keeps_literal_scale(t.column(c))], _numeric_columns(t, cols))
            sql = self.rewrite(RawStream()(src), tx, params=params)
            rel = self.relation(sql, params)
            if len(rel.columns) > len(cols):
                raise PgError("42601", "INSERT has more expressions than target columns")
            if len(rel.columns) < len(cols) and node.cols:
                raise PgError("42601", "INSERT has more target columns than expressions")
            names = cols[: len(rel.columns)]
            omitted = defaults.OmittedDefaults(self, tx, t, [n for n in names if n not in ignored])
            omitted.prepare()
            if not returning(node) and not omitted.queried_per_batch:  # the result streams into the table, a batch at a time
                source = _batches(rel, self.ex, INSERT_BATCH_ROWS)
                try:  # (closed even when a batch is refused: the connection's result must go)
                    n = tx.apply_insert_batches(
                        t,
                        (
                            omitted.add(coerce_text_columns(t, identity.without(pa.Table.from_batches([b]).rename_columns(names), ignored), self.date_order))
                            for b in source
                        ),
                    )
                finally:
                    source.close()
                yield Done(f"INSERT 0 {n}")
                return
            data = rel.to_arrow_table()
            data = identity.without(data.rename_columns(names), ignored)
            data = omitted.add(coerce_text_columns(t, data, self.date_order))
        n = tx.apply_insert(t, data) if data.num_rows else 0
        if returning(node):
            yield self._returning(tx, t, node.relation, returning(node), tx_rows_since(tx, t, n), params, f"INSERT 0 {n}")
        else:
            yield Done(f"INSERT 0 {n}")

    def _proposed(self, tx: Transaction, t: Table, node: ast.InsertStmt, params: list[Any]) -> pa.Table:
        """An INSERT's rows as a table of the columns it names (before storage coercion),
        the omitted columns' defaults added."""
        _attach_with(node)
        cols = [c.name for c in node.cols] if node.cols else [c.name for c in t.columns]
        for c in cols:
            if t.column(c) is None:
                raise PgError("42703", f'column "{c}" of relation "{t.name}" does not exist')
        if node.selectStmt is None:  # DEFAULT VALUES
            omitted = defaults.OmittedDefaults(self, tx, t, ())
            if omitted:
                return omitted.add(pa.table({}), 1)
            return pa.table({c: pa.nulls(1, t.column(c).type.arrow) for c in cols[:1]})  # type: ignore[union-attr]
        ignored = identity.ignored_on_insert(node, t, cols)
        src = defaults.with_defaults(node.selectStmt, t, cols, tx.catalog())
        _defaults_to_null(src, [i for i, c in enumerate(cols) if _keeps_literal_scale(t.column(c))], _numeric_columns(t, cols))
        sql = self.rewrite(RawStream()(src), tx, params=params)
        rel = self.relation(sql, params)
        if len(rel.columns) > len(cols):
            raise PgError("42601", "INSERT has more expressions than target columns")
        if len(rel.columns) < len(cols) and node.cols:
            raise PgError("42601", "INSERT has more target columns than expressions")
        data = rel.to_arrow_table()
        names = cols[: data.num_columns]
        omitted = defaults.OmittedDefaults(self, tx, t, [n for n in names if n not in ignored])
        return omitted.add(coerce_text_columns(t, identity.without(data.rename_columns(names), ignored)))

    def existing_keys(self, tx: Transaction, t: Table, key: Sequence[str], proposed: pa.Table) -> list[tuple[Any, ...]]:
        """The keys of ``proposed`` (physical column names) already in ``t`` at the
        statement's snapshot, this transaction's own writes included."""
        q = tx.snapshot_query(t, with_rid=True, sql_types=True)
        for n, tbl in q.arrow.items():
            self._register(n, tbl)
        name = f"__wp_keys_{id(proposed)}"
        self._register(name, proposed.select(list(key)))
        on = " AND ".join(f'e."{k}" = p."{k}"' for k in key)
        picked = ", ".join(f'e."{k}"' for k in key)
        sql = f"SELECT {picked} FROM ({q.sql}) e WHERE EXISTS (SELECT 1 FROM {name} p WHERE {on})"
        try:
            rows = self.con.sql(sql).fetchall()
        except Exception as e:
            raise duck_error(e) from None
        return [tuple(r) for r in rows]

    def _upsert(self, tx: Transaction, node: ast.InsertStmt, params: list[Any]) -> Iterator[Outcome]:
        """INSERT … ON CONFLICT (sql/upsert.py)."""
        clause = node.onConflictClause
        t = sequences.write_target(tx, node.relation, sequences.CHANGE)
        key = upsert.arbiter(t, clause)
        proposed = _conformed(t, self._proposed(tx, t, node, params))
        proposed = proposed.append_column(upsert.POS, pa.array(np.arange(proposed.num_rows, dtype=np.int64)))
        do_update = clause.action == enums.OnConflictAction.ONCONFLICT_UPDATE
        inserts, conflicts = upsert.split(self, tx, t, key, proposed, do_update)
        # (each row's place among the proposed ones: RETURNING lists them in that order)
        ins_pos = upsert.positions(inserts)
        inserts = inserts.drop_columns([upsert.POS])
        n_ins = tx.apply_insert(t, inserts) if inserts.num_rows else 0
        inserted = tx_rows_since(tx, t, n_ins) if n_ins and returning(node) else None
        updated = None
        n_upd = 0
        if do_update and conflicts.num_rows:
            alias = node.relation.alias.aliasname if node.relation.alias else node.relation.relname
            sql, changed = upsert.update_sql(t, alias, clause, key, TARGET, tx.catalog())
            name = f"__wp_excluded_{id(conflicts)}"
            self._register(name, conflicts)
            old = self._targets(tx, t, sql, params, extra={(None, "excluded"): _typed(f"SELECT * FROM {name}", t)})
            old = old.filter(pc.fill_null(old.column("__ok"), False))
            new = old
            for cname in changed:
                c = t.column(cname)
                assert c is not None
                new = new.set_column(new.column_names.index(c.physical), c.physical, coerce_text(c, old.column(f"__new_{cname}")))
            keep = upsert.keep_columns(t)
            n_upd = tx.apply_update(t, old.select(keep), new.select(keep), changed=changed) if old.num_rows else 0
            updated = _named(t, new.select(keep)) if returning(node) else None
            upd_pos = old.column(upsert.POS).to_numpy() if returning(node) else None
        tag = f"INSERT 0 {n_ins + n_upd}"
        if returning(node):
            parts = [(p, pos) for p, pos in ((inserted, ins_pos), (updated, upd_pos if updated is not None else None)) if p is not None and p.num_rows]
            if parts:
                rows = pa.concat_tables([p.select(parts[0][0].column_names) for p, _ in parts])
                rows = rows.take(pa.array(np.argsort(np.concatenate([pos for _, pos in parts]), kind="stable")))
            else:
                rows = inserts.slice(0, 0)
            yield self._returning(tx, t, node.relation, returning(node), rows, params, tag)
        else:
            yield Done(tag)

    # -- UPDATE / DELETE -----------------------------------------------------------------
    def update(self, tx: Transaction, node: ast.UpdateStmt, params: list[Any]) -> Iterator[Outcome]:
        self._release()
        if node.withClause is not None:  # (the target rows' query is built without it)
            raise unsupported("WITH … UPDATE")
        if node.fromClause and returning(node):  # (RETURNING * includes the FROM list's columns)
            raise unsupported("UPDATE … FROM … RETURNING")
        if getattr(params, "literal_date_order", None) is not None:
            prepared_datestyle.check_write(node, params, [c.type for c in tx.table(qualified(node.relation)).columns])
        identity.check_update(sequences.write_target(tx, node.relation, sequences.CHANGE), node.targetList)
        done = self._point_write(tx, node, params, "UPDATE")
        if done is not None:
            yield done
            return
        t = tx.table(qualified(node.relation))
        _no_lateral(node.fromClause, "UPDATE … FROM")
        alias = node.relation.alias.aliasname if node.relation.alias else node.relation.relname
        sets: dict[str, str] = {}
        for target in node.targetList:
            if target.indirection:
                raise unsupported("UPDATE of array elements or fields")
            col = t.column(target.name)
            if col is None:
                raise PgError("42703", f'column "{target.name}" of relation "{t.name}" does not exist')
            if col.name in sets:
                raise PgError("42601", f'multiple assignments to same column "{col.name}"')
            if isinstance(target.val, ast.SetToDefault):
                expr = defaults.value_sql(col, tx.catalog())
            else:
                expr = RawStream()(_assigned(target.val))
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
            new = new.set_column(new.column_names.index(c.physical), c.physical, coerce_text(c, old.column(f"__new_{name}"), self.date_order))
        keep = [RID] + [c.physical for c in t.columns]
        n = tx.apply_update(t, old.select(keep), new.select(keep), changed=list(sets)) if old.num_rows else 0
        if returning(node):
            yield self._returning(tx, t, node.relation, returning(node), _named(t, new.select(keep)), params, f"UPDATE {n}")
        else:
            yield Done(f"UPDATE {n}")

    def delete(self, tx: Transaction, node: ast.DeleteStmt, params: list[Any]) -> Iterator[Outcome]:
        self._release()
        if node.withClause is not None:  # (the target rows' query is built without it)
            raise unsupported("WITH … DELETE")
        if node.usingClause and returning(node):  # (RETURNING * includes the USING list's columns)
            raise unsupported("DELETE … USING … RETURNING")
        sequences.write_target(tx, node.relation, sequences.CHANGE)
        if getattr(params, "literal_date_order", None) is not None:
            prepared_datestyle.check_write(node, params, [c.type for c in tx.table(qualified(node.relation)).columns])
        done = self._point_write(tx, node, params, "DELETE")
        if done is not None:
            yield done
            return
        t = sequences.write_target(tx, node.relation, sequences.CHANGE)
        alias = node.relation.alias.aliasname if node.relation.alias else node.relation.relname
        sql = f'SELECT "{alias}".* FROM {TARGET} AS "{alias}"'
        _no_lateral(node.usingClause, "DELETE … USING")
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

    def _targets(self, tx: Transaction, t: Table, pg_sql: str, params: list[Any], extra: dict[tuple[str | None, str], str | UserTable] | None = None) -> pa.Table:
        """Target rows (``_rid`` + columns under physical names, ``__new_*`` values)."""
        q = tx.snapshot_query(t, with_rid=True, sql_types=True)
        for n, tbl in q.arrow.items():
            self._register(n, tbl)
        sql = self.rewrite(pg_sql, tx, {(None, TARGET): _typed(q.sql, t), **(extra or {})}, params)
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
        rw = self.rewritten(f'SELECT {sel} FROM {TARGET} AS "{alias}"', tx, {(None, TARGET): _typed(f"SELECT * FROM {name}", t)}, params)
        # The statement's parameters only if the RETURNING list uses them (DuckDB refuses
        # arguments a query does not take: ``… WHERE id = $1 RETURNING a`` would fail).
        rel = self.relation(rw.sql, params if "$" in sel else [])
        return Rows(result_columns(rel, rw, [t]), iter(rel.to_arrow_table().to_batches(BATCH_ROWS)), fixed_tag=tag)

    def describe_returning(self, tx: Transaction, node: Any, param_types: list[int]) -> list[Column]:
        self._release()
        t = tx.table(qualified(node.relation))
        q = tx.snapshot_query(t, with_rid=False, sql_types=True)
        for n, tbl in q.arrow.items():
            self._register(n, tbl)
        alias = node.relation.alias.aliasname if node.relation.alias else node.relation.relname
        sel = ", ".join(RawStream()(x) for x in returning(node))
        rw = self.rewritten(f'SELECT {sel} FROM {TARGET} AS "{alias}" LIMIT 0', tx, {(None, TARGET): _typed(q.sql, t)})
        return result_columns(self.relation(rw.sql, []), rw, [t])

    def fill_added_column(self, tx: Transaction, table: str, name: str) -> int:
        """ADD COLUMN … DEFAULT: the rows already there get the default (sql/defaults.py)."""
        self._release()
        return defaults.fill_added_column(self, tx, table, name)

    # -- COPY ----------------------------------------------------------------------------
    def copy(self, tx: Transaction, node: ast.CopyStmt, params: list[Any]) -> Outcome:
        from decoding.copyformat import CopyDecoder, encode_copy
        from walsender_proxy.spark import serve as spark_serve

        self._release()
        if node.filename is not None or node.is_program:
            raise PgError("42501", "COPY to or from a file is not supported by walsender-proxy", hint="Use COPY … TO STDOUT or FROM STDIN.")
        opts = _copy_options(node.options)
        fmt = opts.pop("format", "text")
        if node.is_from:
            if node.query is not None or node.relation is None:
                raise PgError("42601", "COPY FROM needs a table")
            if node.whereClause is not None:  # (every row would be stored)
                raise PgError("0A000", "COPY FROM … WHERE is not supported by walsender-proxy")
            t = sequences.write_target(tx, node.relation, sequences.COPY_TO)
            cols = [c.sval for c in node.attlist] if node.attlist else [c.name for c in t.columns]
            ctypes = []
            for i, c in enumerate(cols):
                col = t.column(c)
                if col is None:
                    raise PgError("42703", f'column "{c}" of relation "{t.name}" does not exist')
                if c in cols[:i]:
                    raise PgError("42701", f'column "{c}" specified more than once')
                ctypes.append(col.type)
            dec = CopyDecoder(ctypes, fmt, date_order=self.date_order, **opts)
            state: dict[str, Any] = {"rows": 0}

            def feed(data: bytes) -> None:
                dec.feed(data)

            omitted = defaults.OmittedDefaults(self, tx, t, cols)

            def finish() -> str:
                table = dec.finish()
                table = omitted.add(table.rename_columns(cols))
                n = tx.apply_insert(t, table) if table.num_rows else 0
                state["rows"] = n
                return f"COPY {n}"

            def fail(_msg: str) -> None:
                self.ex.fail()

            return CopyIn(fmt == "binary", len(cols), feed, finish, fail)
        if node.query is not None:
            rw = self.rewritten(RawStream()(node.query), tx, params=params)
            rel = self.relation(rw.sql, params, rw.dropped_params)
            columns = result_columns(rel, rw, self.tables_of(tx, rw))
        else:
            t = sequences.write_target(tx, node.relation, sequences.COPY_FROM)
            cols = [c.sval for c in node.attlist] if node.attlist else [c.name for c in t.columns]
            for i, c in enumerate(cols):
                if t.column(c) is None:
                    raise PgError("42703", f'column "{c}" of relation "{t.name}" does not exist')
                if c in cols[:i]:
                    raise PgError("42701", f'column "{c}" specified more than once')
            columns = [Column(c, t.column(c).type) for c in cols]  # type: ignore[union-attr]
            if spark_serve.wants(tx, t):
                source: Iterator[pa.RecordBatch] = spark_serve.batches(tx, t, cols)
                rel = None
            else:
                q = tx.snapshot_query(t, sql_types=True, heap_order=True)
                for n, tbl in q.arrow.items():
                    self._register(n, tbl)
                col_sql = ", ".join(f'"{c}"' for c in cols)
                rel = self.relation(f"SELECT {col_sql} FROM ({q.sql})", [])
        if rel is not None:
            source = _batches(rel, self.ex)
        counter = {"n": 0}
        ctypes = [c.type for c in columns]

        def counted() -> Iterator[pa.RecordBatch]:
            for b in source:
                counter["n"] += b.num_rows
                yield b

        # Streamed batch by batch: memory stays bounded by a batch, whatever the row count;
        # the next chunks are made while the current ones are sent.
        chunks = ReadAhead(
            encode_copy(
                counted(), ctypes, fmt, names=[c.name for c in columns], extra_float_digits=float_digits(self.ex),
                bytea_output=bytea_output(self.ex), zone=self.ex.settings.zone(), **opts,
            )
        )
        return CopyOut(fmt == "binary", len(columns), chunks, lambda: counter["n"])

    # -- parameters ----------------------------------------------------------------------
    def decode_params(
        self, st: Prepared, formats: Sequence[int], params: Sequence[bytes | None], oids: Sequence[int] | None = None,
        date_order: str = "MDY",
    ) -> list[Any]:
        """Bind's parameter values as Python values. The receive function of each
        parameter depends only on the statement's types, Bind's formats and the session's
        DateStyle order (``date_order``, how a date in text is read), so it is chosen once
        and kept on the statement (``st.param_recv``) while a driver binds the same way
        round after round; a NULL is None whatever the type."""
        formats = tuple(formats)
        cached = st.param_recv
        if cached is None or cached[0] != formats or len(cached[1]) != len(params) or cached[4] != date_order:  # type: ignore[misc]
            if oids is None or len(oids) != len(params):
                oids = _inferred_param_types(st.node, st.param_types, len(params))
            recvs = _param_recvs(oids, formats, len(params), date_order)
            cached = (formats, recvs, _typed_params(st.param_types), _lake_params(oids), date_order)
            st.param_recv = cached  # type: ignore[assignment]
        out = BoundParams()
        out.typed, out.types = cached[2], cached[3]  # type: ignore[misc]
        append = out.append
        for (quick, general), raw in zip(cached[1], params, strict=True):
            if raw is None:
                append(None)
                continue
            v = quick(raw)
            append(general(raw) if v is _NOT_SIMPLE else v)
        return out


class BoundParams(list):  # type: ignore[type-arg]
    """Bind's values; which of them the client declared of a type that is not text (a
    numeric or uuid parameter arrives as a str too, but is not text to cast); the lake
    types of the parameters, declared or inferred from a cast; the numbers of declared
    parameters the statement does not use, if any, and the DateStyle order its literals
    were parsed in when that is not the session's now (both set by the executor's bind)."""

    __slots__ = ("literal_date_order", "typed", "types", "unused")  # set by decode_params (no __init__: Bind is a hot path)

    typed: frozenset[int]
    types: tuple[tuple[int, ColumnType], ...]
    unused: frozenset[int]
    literal_date_order: str | None


def check_result_formats(formats: Sequence[int], ncolumns: int) -> None:
    """Bind's result formats against the columns, as PostgreSQL's PortalSetResultFormat
    checks them: one format for every column, or one for all, or none (all text)."""
    if len(formats) > 1 and len(formats) != ncolumns:
        raise PgError("08P01", f"bind message has {len(formats)} result formats but query has {ncolumns} columns")


def _inferred_param_types(node: Any, declared: Sequence[int], n: int) -> list[int]:
    """Each parameter's type: as declared at Parse, or for one left unspecified, the lake
    type of the first cast applied to it (``$1::bytea``), as PostgreSQL's parse analysis
    gives an unknown parameter the type it is first coerced to; 0 when there is none."""
    oids = [declared[i] if i < len(declared) else 0 for i in range(n)]
    if all(oids):
        return oids
    from walsender_proxy.sql.literals import cast_target

    def visit(x: Any) -> None:
        if isinstance(x, ast.TypeCast) and isinstance(x.arg, ast.ParamRef):
            i = x.arg.number - 1
            if 0 <= i < n and not oids[i]:
                ctype = cast_target(x.typeName)
                if ctype is not None:
                    oids[i] = ctype.oid
        if isinstance(x, ast.Node):
            for name in x:
                visit(getattr(x, name))
        elif isinstance(x, tuple | list):
            for y in x:
                visit(y)

    visit(node)
    return oids


def _lake_params(oids: Sequence[int]) -> tuple[tuple[int, ColumnType], ...]:
    out = []
    for i, oid in enumerate(oids):
        if oid:
            with contextlib.suppress(PgError):
                out.append((i + 1, type_by_oid(oid)))
    return tuple(out)


#: Parameter types whose values are text to PostgreSQL (unknown included).
_TEXT_PARAM_OIDS = frozenset({0, 25, 1043, 1042, 19, 705})


def _typed_params(param_types: Sequence[int]) -> frozenset[int]:
    return frozenset(i + 1 for i, oid in enumerate(param_types) if oid not in _TEXT_PARAM_OIDS)


def text_params(params: Sequence[Any]) -> frozenset[int]:
    """The ``$n`` bound as text: a cast of one is an I/O conversion (the rewriter's
    ``text_params``). Only statements that go to DuckDB ask, not the point paths."""
    if not params:
        return frozenset()
    typed = getattr(params, "typed", frozenset())
    return frozenset(i + 1 for i, v in enumerate(params) if type(v) is str and i + 1 not in typed)


# -- results -------------------------------------------------------------------------------


_STRINGY = frozenset({"text", "varchar", "bpchar", "json", "jsonb", "uuid", "numeric"})


def _no_columns(cols: list[Column]) -> bool:
    """The result of ``SELECT FROM …``: the rewriter's placeholder column, dropped here."""
    return len(cols) == 1 and cols[0].name == NO_COLUMNS


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
        lake = _lake_result_type(oid, oc.typmod if oc is not None else -1, ctype)
        if lake is not None:
            # A lake type the rewriter knows ('x'::uuid, '1.50'::numeric, 'a'::char(3)):
            # its own encoders, whatever DuckDB computed it as (VARCHAR, DECIMAL, DOUBLE).
            cols.append(Column(out_name, lake))
            continue
        if oid is None or oid == ctype.oid:
            # A user column's declared type, by name, where the rewriter knows no type: it
            # knows one for an expression (`n::text` is text, whatever column n is).
            decl = declared.get(out_name) if oid is None else None
            if decl is not None and decl.is_array == ctype.is_array and decl.base.name in _STRINGY and ctype.base.name in _STRINGY:
                ctype = decl
            typmod = oc.typmod if oc is not None and oc.typmod != -1 else None
            cols.append(Column(out_name, ctype, pg_typmod=typmod))
            continue
        row = TYPES.rows.get(oid)
        typlen = row["typlen"] if row else -1
        cols.append(Column(out_name, ctype, pg_oid=oid, pg_typlen=typlen, pg_typmod=oc.typmod if oc else -1))
    origins = rw.origins if rw is not None else None
    if origins is not None and len(origins) == len(cols) and tables:
        cols = [_with_origin(c, o, tables) for c, o in zip(cols, origins, strict=True)]
    return cols


def _locate_missing_column(e: PgError, node: Any) -> None:
    """42703 found by DuckDB's binder: the position of the first reference to that column
    in the statement, as PostgreSQL reports it (its parser's location, 1-based)."""
    if e.sqlstate != "42703" or getattr(e, "position", None) is not None:
        return
    m = re.fullmatch(r'column "(.+)" does not exist|column (\S+) does not exist', e.message)
    if m is None:
        return
    name = m.group(1) or m.group(2)
    found: list[int] = []

    def visit(n: Any) -> None:
        if found:
            return
        if isinstance(n, ast.ColumnRef) and n.fields and isinstance(n.fields[-1], ast.String):
            shown = ".".join(f.sval for f in n.fields if isinstance(f, ast.String))
            if name in (n.fields[-1].sval, shown) and n.location is not None and n.location >= 0:
                found.append(n.location + 1)
                return
        if isinstance(n, ast.Node):
            for attr in n:
                visit(getattr(n, attr))
        elif isinstance(n, tuple | list):
            for x in n:
                visit(x)

    visit(node)
    if found:
        e.position = found[0]  # type: ignore[attr-defined]


def _with_origin(col: Column, origin: Origin | None, tables: list[Table]) -> Column:
    """A column selected as it is from a user table names the table and the column in
    RowDescription, as PostgreSQL's does (pgjdbc reads nullability and the table name of
    ResultSetMetaData from them)."""
    if origin is None:
        return col
    (schema, name), colname = origin
    for t in tables:
        if t.name == name and (schema is None or t.schema == schema):
            c = t.column(colname)
            if c is None:
                return col
            if c.type.base == col.type.base and c.type.is_array == col.type.is_array and col.pg_oid is None:
                # (the column as declared, its typmod too: timestamp(2), varchar(5))
                return dataclasses.replace(col, type=c.type, table_oid=t.oid, attnum=c.attnum, pg_typmod=None)
            return dataclasses.replace(col, table_oid=t.oid, attnum=c.attnum)
    return col


def _lake_result_type(oid: int | None, typmod: int, duck: ColumnType) -> ColumnType | None:
    """The lake type (with the rewriter's typmod) of a result column the rewriter typed as
    ``oid``, when DuckDB's value ``duck`` is that type's storage or computing form: text for
    the types stored as text, any number for numeric, the same type otherwise."""
    if oid is None:
        return None
    try:
        lake = type_by_oid(oid)
    except PgError:
        return None
    if lake.is_array != duck.is_array:
        return None
    name, got = lake.base.name, duck.base.name
    fits = (
        got == name
        or (got == "text" and name in _STRINGY and (name != "numeric" or typmod == -1))
        or (name == "numeric" and got in ("numeric", "float8", "int2", "int4", "int8"))
    )  # (an unconstrained numeric is stored as its text; numeric(p,s) as a decimal)
    return ColumnType(lake.base, typmod, lake.is_array) if fits else None


def duck_error(e: Exception) -> PgError:
    import duckdb

    original = udf_error(str(e))
    if original is not None:
        return original
    if isinstance(e, duckdb.ConversionException | duckdb.OutOfRangeException):
        worded = duckdb_cast_error(str(e))
        if worded is not None:
            return worded
    if isinstance(e, duckdb.InterruptException):
        return PgError("57014", "canceling statement due to user request")
    if isinstance(e, duckdb.BinderException):
        m = _DUCK_COLUMN.search(str(e))
        if m:
            return PgError("42703", f'column "{m.group(1)}" does not exist')
        m = _DUCK_QUALIFIED_COLUMN.search(str(e))
        if m:  # (PostgreSQL words a qualified one without quotes: column p.zz does not exist)
            return PgError("42703", f"column {m.group(1)}.{m.group(2)} does not exist")
    return translate_error(e)


_DUCK_COLUMN = re.compile(r'(?:Referenced column|Column) "([^"]+)" (?:not found|referenced)')
_DUCK_QUALIFIED_COLUMN = re.compile(r'(?:Table|Values list) "([^"]+)" does not have a column named "([^"]+)"')


def _batches(rel: duckdb.DuckDBPyRelation, ex: SessionState, batch_rows: int = BATCH_ROWS) -> Iterator[pa.RecordBatch]:
    try:
        reader = rel.to_arrow_reader(batch_size=batch_rows)
    except Exception as e:
        raise duck_error(e) from None
    try:
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
    finally:  # a reader left open keeps DuckDB's result, and the connection refuses queries
        reader.close()


def column_binary_encoder(c: Column) -> Callable[[Any], list[bytes | None]]:
    """The binary send function of a result column: its lake type's, or for a catalog type
    in ``BINARY_AS_PG`` PostgreSQL's (``oidsend``, ``namesend``, ``array_send`` of oids…)."""
    from decoding.pgvalues import binary_encoder

    oid = c.pg_oid
    if oid is None or oid == c.type.oid or oid not in BINARY_AS_PG:
        return binary_encoder(c.type)
    if oid in OID_LIKE:
        return lambda arr: [None if v is None else _U4.pack(v & 0xFFFFFFFF) for v in _pylist(arr)]
    if oid == 19:
        return lambda arr: [None if v is None else v.encode() for v in _pylist(arr)]
    if oid == 18:  # charsend: always one byte, \0 for the empty "char"
        return lambda arr: [None if v is None else (v.encode()[:1] or b"\x00") for v in _pylist(arr)]
    elem, lbound = {22: (21, 0), 30: (26, 0), 1028: (26, 1), 1003: (19, 1), 1002: (18, 1), 1011: (28, 1), 1012: (29, 1)}[oid]

    def items(v: Any) -> list[Any]:
        if isinstance(v, str):  # int2vector / oidvector as text: "1 2 3"
            return [int(x) for x in v.split()]
        return list(v)

    def one(v: Any) -> bytes:
        vals = items(v)
        head = struct.pack(">iiI", 1 if vals else 0, 1 if None in vals else 0, elem)
        if vals:
            head += struct.pack(">ii", len(vals), lbound)
        body = []
        for x in vals:
            if x is None:
                body.append(b"\xff\xff\xff\xff")
            elif elem == 21:
                body.append(b"\x00\x00\x00\x02" + struct.pack(">h", x))
            elif elem in (26, 28, 29):
                body.append(b"\x00\x00\x00\x04" + _U4.pack(x & 0xFFFFFFFF))
            else:
                b = str(x).encode()
                body.append(struct.pack(">i", len(b)) + b)
        return head + b"".join(body)

    return lambda arr: [None if v is None else one(v) for v in _pylist(arr)]


_U4 = struct.Struct(">I")


def _pylist(arr: Any) -> list[Any]:
    return arr.to_pylist() if hasattr(arr, "to_pylist") else list(arr)


def float_digits(ex: SessionState) -> int:
    """The session's extra_float_digits: how float4out and float8out print its floats."""
    return int(ex.settings.get("extra_float_digits"))


def bytea_output(ex: SessionState) -> str:
    """The session's bytea_output: how byteaout prints its bytea values (hex or escape)."""
    return str(ex.settings.get("bytea_output"))


def encode_rows(rows: Rows, formats: list[int], ex: SessionState) -> Iterator[tuple[bytes, int]]:
    """DataRow bytes, a batch at a time, encoded column by column."""
    from decoding.pgvalues import text_encoder

    encoders = []
    digits, byteas = float_digits(ex), bytea_output(ex)
    zone = ex.settings.zone()
    for i, c in enumerate(rows.columns):
        fmt = formats[0] if len(formats) == 1 else formats[i] if i < len(formats) else 0
        encoders.append(column_binary_encoder(c) if fmt == 1 else text_encoder(c.type, digits, byteas, zone))
    for batch in rows.batches:
        if ex.cancelled.is_set():
            raise PgError("57014", "canceling statement due to user request")
        if ex.notices:
            yield take_notices(ex), 0
        if batch.num_rows == 0:
            continue
        cols = [enc(batch.column(i)) for i, enc in enumerate(encoders)]
        yield encode_data_rows(zip(*cols, strict=True) if cols else [()] * batch.num_rows), batch.num_rows
    if ex.notices:
        yield take_notices(ex), 0


def take_notices(ex: SessionState) -> bytes:
    """NoticeResponses for the warnings a query's functions raised while its last batch was
    made: they go before that batch's rows, as PostgreSQL's go before the row that raised
    them."""
    from walsender_proxy.protocol import messages as m

    out = b"".join(
        m.NoticeResponse.create(n.severity, n.sqlstate, n.message, detail=n.detail, hint=n.hint).encode()
        for n in ex.notices
    )
    ex.notices.clear()
    return out


def fetch_portal(ex: SessionState, portal: Portal, max_rows: int) -> tuple[str, Any]:
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
        from decoding.pgvalues import text_encoder

        f = portal.result_formats
        check_result_formats(f, len(rows.columns))
        encs = []
        digits, byteas = float_digits(ex), bytea_output(ex)
        zone = ex.settings.zone()
        for i, c in enumerate(rows.columns):
            fmt = f[0] if len(f) == 1 else f[i] if i < len(f) else 0
            if fmt != 0 and fmt != 1:
                raise PgError("22023", f"unsupported format code: {fmt}")
            encs.append(column_binary_encoder(c) if fmt == 1 else text_encoder(c.type, digits, byteas, zone))
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
            if ex.notices:
                out.append(take_notices(ex))
            if batch is None:
                exhausted = True
                break
        if budget is not None and batch.num_rows > budget - got:
            portal.carry = batch.slice(budget - got)
            batch = batch.slice(0, budget - got)
        if batch.num_rows:
            cols = [enc(batch.column(i)) for i, enc in enumerate(encs)]
            out.append(encode_data_rows(zip(*cols, strict=True) if cols else [()] * batch.num_rows))
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


def _typed(sql: str, t: Table) -> UserTable:
    """A user table's SQL with its columns' declared types, for the rewriter."""
    return UserTable(sql, {c.name: c.type for c in t.columns})


def tx_rows_since(tx: Transaction, t: Table, n: int) -> pa.Table:
    """The last ``n`` rows this transaction wrote to ``t`` (for INSERT … RETURNING)."""
    rows = tx.own_tail(t.oid, n)
    return _named(t, rows.select([RID] + [c.physical for c in t.columns]))


def _attach_with(node: ast.InsertStmt) -> None:
    """``WITH c AS (…) INSERT INTO t SELECT … FROM c``: the CTEs belong to the rows'
    query, which is run on its own (a CTE named as the target table hides the table)."""
    if node.withClause is None:
        return
    src = node.selectStmt
    if src is None or not isinstance(src, ast.SelectStmt) or src.withClause is not None:
        raise unsupported("WITH … INSERT with this query")
    src.withClause, node.withClause = node.withClause, None


def _conformed(t: Table, data: pa.Table) -> pa.Table:
    """Proposed rows in the table's storage form (missing columns NULL), under the columns'
    names, as the lake would store them: keys compare as stored."""
    from walsender_proxy.lake.transaction import conform

    arrays = []
    for c in t.columns:
        if c.name in data.column_names:
            arrays.append(conform(data.column(c.name), c))
        else:
            arrays.append(pa.nulls(data.num_rows, c.type.arrow))
    return pa.Table.from_arrays(arrays, names=[c.name for c in t.columns])


def _named(t: Table, rows: pa.Table) -> pa.Table:
    names = {c.physical: c.name for c in t.columns}
    return rows.rename_columns([names.get(c, c) for c in rows.column_names])


def coerce_text(col: Any, arr: pa.Array | pa.ChunkedArray, date_order: str = "MDY") -> pa.Array | pa.ChunkedArray:
    """A text value bound for a non-text column goes through the column type's input
    function, as PostgreSQL resolves an untyped literal ('{a,b}' into text[], '\\x00' into
    bytea, '1 day' into interval) — DuckDB would only see a string. Dates and timestamps
    are read in the session's DateStyle order, ``date_order``."""
    from decoding.pgvalues import decode_text_arrow

    if pa.types.is_decimal(arr.type) and col.type.base.name in ("float4", "float8") and not col.type.is_array:
        # numeric → float through its text (float8in), as PostgreSQL's cast does: Arrow's
        # decimal → double is m·10^-s in double arithmetic (10.1 would be 10.100000000000001)
        return decode_text_arrow(col.type, arr.cast(pa.string()))
    if pa.types.is_floating(arr.type) and col.type.base.name == "numeric" and not col.type.is_array:
        # float → numeric through float4_numeric's / float8_numeric's text (6 or 15
        # significant digits), not the binary value's longer decimal expansion
        return decode_text_arrow(col.type, numeric_math.float_texts(arr))
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return arr
    if pa.types.is_string(col.type.arrow) and _text_as_is(col.type):
        return arr
    return decode_text_arrow(col.type, arr, date_order)


def _text_as_is(ctype: Any) -> bool:
    """A string goes into a column of this (string-stored) type without its input function:
    only where that function keeps every string as it is. Not numeric, uuid, json or jsonb,
    though stored as text: their input functions check the text and write it PostgreSQL's
    way (' 007.50 ' is 7.50, an uppercase uuid is lowered, 'not json' is 22P02, jsonb's
    keys are sorted and deduplicated)."""
    return ctype.base.name in ("text", "varchar", "bpchar") and not ctype.is_array and ctype.typmod < 0


def _keeps_literal_scale(col: Any) -> bool:
    """A column stored as the text of its values whose numeric literals must keep how they
    were written (an unconstrained numeric, which keeps each value's scale)."""
    ctype = col.type if col is not None else None
    return ctype is not None and ctype.base.name == "numeric" and not ctype.is_array and pa.types.is_string(ctype.arrow)


def coerce_text_columns(t: Table, data: pa.Table, date_order: str = "MDY") -> pa.Table:
    for i, name in enumerate(data.column_names):
        col = t.column(name)
        if col is not None:
            data = data.set_column(i, name, coerce_text(col, data.column(i), date_order))
    return data


def returning(node: Any) -> tuple[Any, ...] | None:
    """RETURNING targets (pglast follows PostgreSQL 18's ReturningClause node)."""
    rc = getattr(node, "returningClause", None)
    if rc is not None:
        return rc.exprs
    return getattr(node, "returningList", None)


def _assigned(val: ast.Node) -> ast.Node:
    """One column's value in ``SET (a, b) = (x, y)``: its item of the row (a subquery's
    row is refused: its columns are not one expression each)."""
    if not isinstance(val, ast.MultiAssignRef):
        return val
    if isinstance(val.source, ast.RowExpr) and len(val.source.args or ()) == val.ncolumns:
        return val.source.args[val.colno - 1]
    if isinstance(val.source, ast.RowExpr):
        raise PgError("42601", "number of columns does not match number of values")
    raise PgError("0A000", "UPDATE … SET (…) = (SELECT …) is not supported by walsender-proxy")


def _no_lateral(items: Sequence[ast.Node] | None, where: str) -> None:
    """0A000 for a LATERAL subquery beside the target table: the statement's query would
    let it see the target, which PostgreSQL hides from it (42P10)."""
    if any(isinstance(i, ast.RangeSubselect) and i.lateral for i in items or ()):
        raise PgError("0A000", f"LATERAL in {where} is not supported by walsender-proxy")


def _defaults_to_null(node: Any, as_text: Collection[int] = (), numeric: Collection[int] = ()) -> None:
    """DEFAULT → NULL (what is left of it after :func:`defaults.with_defaults`: columns
    without a default), and literals of a VALUES column that mixes
    quoted and bare literals all become text: PostgreSQL resolves a quoted literal by the
    target column's input function ('NaN' into real next to 1.5), which
    :func:`coerce_text_columns` does — DuckDB would force the column to the bare literal's
    type and fail. The numeric literals of the ``as_text`` columns become text too: a
    numeric keeps the scale it was written with (1.50 next to 7 stays 7), where DuckDB
    gives the VALUES column one DECIMAL type (7.00). A float cast bound for a ``numeric``
    column of a multi-row VALUES becomes numeric in its own row, as PostgreSQL coerces each
    row's value to the column (DuckDB would widen 0.1::float4 next to a float8 to DOUBLE,
    whose numeric is 0.100000001490116, not 0.1)."""
    if not (isinstance(node, ast.SelectStmt) and node.valuesLists):
        return
    rows = [[ast.A_Const(isnull=True) if isinstance(v, ast.SetToDefault) else v for v in row] for row in node.valuesLists]
    width = max(len(r) for r in rows)
    for col in range(width):
        vals = [r[col] for r in rows if col < len(r)]
        if col in as_text or any(isinstance(v, ast.A_Const) and isinstance(v.val, ast.String) for v in vals):
            for r in rows:
                v = r[col] if col < len(r) else None
                if isinstance(v, ast.A_Const) and isinstance(v.val, (ast.Integer, ast.Float)):
                    text = str(v.val.ival) if isinstance(v.val, ast.Integer) else v.val.fval
                    r[col] = ast.A_Const(isnull=False, val=ast.String(sval=text))
    if len(rows) > 1:
        for col in numeric:
            for r in rows:
                if col < len(r) and _float_cast(r[col]):
                    r[col] = ast.TypeCast(arg=r[col], typeName=ast.TypeName(names=(ast.String(sval="numeric"),), typemod=-1))
    node.valuesLists = tuple(tuple(r) for r in rows)


_FLOAT_TYPE_NAMES = frozenset({"float4", "float8", "real", "double precision"})


def _float_cast(node: Any) -> bool:
    """An explicit cast to float4 or float8 (``0.1::float4``, ``real '0.1'``)."""
    if not isinstance(node, ast.TypeCast) or node.typeName is None:
        return False
    names = node.typeName.names or ()
    return bool(names) and not node.typeName.arrayBounds and names[-1].sval in _FLOAT_TYPE_NAMES


def _numeric_columns(t: Any, cols: Sequence[str]) -> list[int]:
    """The positions of the (non-array) numeric columns among ``cols``."""
    out = []
    for i, c in enumerate(cols):
        col = t.column(c)
        if col is not None and col.type.base.name == "numeric" and not col.type.is_array:
            out.append(i)
    return out


_COMPARISON_OPS = frozenset({"=", "<>", "!=", "<", ">", "<=", ">="})


def _compared_params(node: Any) -> set[int]:
    """The ids of the ``$n`` nodes that are an operand of a comparison (``x > $1``,
    ``x = ANY($1)``) whose other operand is not a parameter."""
    out: set[int] = set()

    def visit(n: Any) -> None:
        if isinstance(n, ast.A_Expr) and n.kind in (enums.A_Expr_Kind.AEXPR_OP, enums.A_Expr_Kind.AEXPR_OP_ANY, enums.A_Expr_Kind.AEXPR_OP_ALL) and n.name and n.name[-1].sval in _COMPARISON_OPS:
            left, right = n.lexpr, n.rexpr
            if isinstance(right, ast.ParamRef) and left is not None and not isinstance(left, ast.ParamRef):
                out.add(id(right))
            if isinstance(left, ast.ParamRef) and right is not None and not isinstance(right, ast.ParamRef | tuple | list) and n.kind == enums.A_Expr_Kind.AEXPR_OP:
                out.add(id(left))
        if isinstance(n, ast.Node):
            for name in n:
                visit(getattr(n, name))
        elif isinstance(n, tuple | list):
            for x in n:
                visit(x)

    visit(node)
    return out


def _typed_nulls(node: Any, param_types: list[int]) -> Any:
    """A copy of the statement with ``$n`` replaced by ``NULL::type`` (for Describe); a
    cast parameter (``$2::numeric(5,2)``) by ``NULL::text``, so the cast alone decides the
    column (its typmod included) whatever type the parameter was given."""
    import copy

    node = copy.deepcopy(node)
    compared = _compared_params(node)

    def visit(n: Any) -> Any:
        if isinstance(n, ast.ParamRef) and id(n) in compared and (param_types[n.number - 1] if n.number - 1 < len(param_types) else 25) in (0, 25):
            # an untyped $n compared with a value takes that value's type (the rewriter's
            # _param_as at Execute): an untyped NULL here, which DuckDB compares with anything
            return ast.A_Const(isnull=True)
        if isinstance(n, ast.TypeCast) and isinstance(n.arg, ast.ParamRef):
            n.arg = _typed_nulls(n.arg, [])
            return n
        if isinstance(n, ast.ParamRef):
            oid = param_types[n.number - 1] if n.number - 1 < len(param_types) else 25
            try:
                ct = type_by_oid(oid or 25)
                name, is_array = ct.base.name, ct.is_array
            except PgError:  # a catalog type (oid, name, regclass…): PostgreSQL's name
                from walsender_proxy.sql.paramtypes import type_name_of

                name, is_array = type_name_of(oid)
            return ast.TypeCast(arg=ast.A_Const(isnull=True), typeName=ast.TypeName(names=(ast.String(sval=name),), arrayBounds=(ast.Integer(ival=-1),) if is_array else None))
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
    seen: set[str] = set()
    for o in options or ():
        name = o.defname
        if name in seen:
            raise PgError("42601", "conflicting or redundant options")
        seen.add(name)
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



# -- INSERT … VALUES without DuckDB -------------------------------------------------------

#: Python types of parameter and constant values that go into a column of these types as
#: they are (anything else, and any failure, takes the DuckDB path, which has the errors).
_DIRECT: dict[str, tuple[type, ...]] = {
    "int2": (int,),
    "int4": (int,),
    "int8": (int,),
    "float4": (float, int),
    "float8": (float, int),
    "bool": (bool,),
    "bytea": (bytes,),
    "date": (date_type,),
}
_MAX_FAST_ROWS = 64


@dataclass(slots=True)
class _InsertPlan:
    """``INSERT … VALUES`` whose items are parameters, literals, NULL or DEFAULT: each
    column's items as (param number, 0) or (0, constant), found once per statement node; the
    table and its columns resolved once per catalog version."""

    node: Any
    width: int
    items: list[list[tuple[int, Any]]]  # per column, per row
    catalog: Any = None
    table: Any = None
    cols: list[str] = field(default_factory=list)
    colobjs: list[Any] | None = None
    inputs: list[_ColumnInput] = field(default_factory=list)  # one per colobjs entry
    storage: bool = False  # the columns are the table's, in order: build in storage form
    defaults: bool = False  # a DEFAULT item falls in a column that has a default


def _insert_plan(node: Any) -> _InsertPlan | None:
    src = node.selectStmt
    if (
        node.withClause is not None
        or not isinstance(src, ast.SelectStmt)
        or not src.valuesLists
        or len(src.valuesLists) > _MAX_FAST_ROWS
        or src.withClause is not None
        or src.sortClause
        or src.limitCount is not None
        or src.limitOffset is not None
    ):
        return None
    width = len(src.valuesLists[0])
    items: list[list[tuple[int, Any]]] = [[] for _ in range(width)]
    for row in src.valuesLists:
        if len(row) != width:
            return None
        for i, item in enumerate(row):
            if isinstance(item, ast.ParamRef):
                items[i].append((item.number, None))
            elif isinstance(item, ast.A_Const):
                v = _const_value(item)
                if v is _NOT_SIMPLE:
                    return None
                items[i].append((0, v))
            elif isinstance(item, ast.SetToDefault):
                items[i].append((0, None))
            else:
                return None
    return _InsertPlan(node, width, items)


def _values_from_plan(plan: _InsertPlan, params: list[Any], date_order: str = "MDY") -> pa.Table | None:
    """The rows of the planned VALUES, built straight from the bound values (no DuckDB):
    untyped strings go through the column type's input function, as :func:`coerce_text`
    does. None when a value needs DuckDB's conversions (which also has the errors)."""
    assert plan.colobjs is not None
    arrays = []
    nparams = len(params)
    try:
        for inp, items in zip(plan.inputs, plan.items, strict=True):
            values = []
            for num, const in items:
                if num:
                    if num > nparams:
                        return None
                    values.append(params[num - 1])
                else:
                    values.append(const)
            arr = inp.array(values, date_order)
            if arr is None:
                return None
            arrays.append(arr)
    except (PgError, pa.ArrowException, TypeError, ValueError, OverflowError):
        return None  # the DuckDB path raises the error PostgreSQL would
    if plan.storage:
        return pa.Table.from_arrays(arrays, schema=layout(plan.table).plain)
    return pa.Table.from_arrays(arrays, names=plan.cols)


class _ColumnInput:
    """How bound values enter one column, decided once per plan rather than per value: a
    single-row INSERT is the OLTP case, where these checks cost more than the row itself.
    Gives what :func:`_direct_array` gives."""

    __slots__ = ("_accepts", "base", "col", "is_array", "null", "numeric", "pack", "target", "text_as_is", "tz")

    def __init__(self, col: Any) -> None:
        ctype = col.type
        self.col = col
        self.target = ctype.arrow
        self.base = ctype.base.name
        self.is_array = ctype.is_array
        #: coerce_text leaves a string as it is for this column.
        self.text_as_is = pa.types.is_string(self.target) and _text_as_is(ctype)
        self.tz = self.base == "timestamptz" if self.base in ("timestamp", "timestamptz") else None
        #: ints and Decimals go in through numeric's input function (scale, rounding, 22003).
        self.numeric = self.base == "numeric" and not self.is_array
        self.null = pa.nulls(1, self.target)
        self._accepts: dict[type, bool] = {}
        #: (Python type, fixed-width packer) when one value can be laid out as the column's
        #: buffer directly: pa.array reads the environment at every call, and a single-row
        #: INSERT makes five such arrays.
        self.pack = _ONE_VALUE_PACK.get(self.target) if not self.is_array else None
        if self.tz is not None and not self.is_array and self.target.unit == "us":
            self.pack = (datetime_type, _timestamptz_buffer if self.tz else _timestamp_buffer)

    def array(self, values: list[Any], date_order: str = "MDY") -> pa.Array | None:
        if len(values) != 1:
            return _direct_array(self.col, values, date_order)
        v = values[0]
        if v is None:
            return self.null
        kind = type(v)
        if kind in _STR_KINDS:
            if self.text_as_is:
                data = v.encode()
                return pa.Array.from_buffers(
                    pa.string(), 1, [None, pa.py_buffer(_OFFSETS.pack(0, len(data))), pa.py_buffer(data)]
                )
            return _direct_array(self.col, values, date_order)
        if self.is_array:
            return None
        if self.numeric and (kind is int or kind is Decimal):
            return _direct_array(self.col, [str(v) if kind is int else format(v, "f")])
        ok = self._accepts.get(kind)
        if ok is None:
            ok = self._accepts[kind] = _accepts(self.base, kind)
        if not ok or (self.tz is not None and (v.tzinfo is not None) != self.tz):
            return None
        if self.base == "float4" and not _fits_float4(v):
            return None  # (the DuckDB path raises dtof's 22003)
        pack = self.pack
        if pack is not None and kind is pack[0]:
            try:
                raw = pack[1](v)
            except struct.error:
                return None  # out of the type's range: the DuckDB path raises 22003
            return pa.Array.from_buffers(self.target, 1, [None, pa.py_buffer(raw)])
        return pa.array(values, self.target)


_OFFSETS = struct.Struct("<ii")
#: Column types whose single value is one little-endian field, with the Python type that
#: goes in as it is (a bool is not an int here, nor an int a float).
_ONE_VALUE_PACK: dict[pa.DataType, tuple[type, Callable[[Any], bytes]]] = {
    pa.int16(): (int, struct.Struct("<h").pack),
    pa.int32(): (int, struct.Struct("<i").pack),
    pa.int64(): (int, struct.Struct("<q").pack),
    pa.float64(): (float, struct.Struct("<d").pack),
}

_UNIX_EPOCH_TZ = datetime_type(1970, 1, 1, tzinfo=ZoneInfo("UTC"))
_UNIX_EPOCH = datetime_type(1970, 1, 1)
_ONE_US = timedelta(microseconds=1)
_PACK_Q = struct.Struct("<q").pack


def _timestamptz_buffer(v: datetime_type) -> bytes:
    return _PACK_Q((v - _UNIX_EPOCH_TZ) // _ONE_US)


def _timestamp_buffer(v: datetime_type) -> bytes:
    return _PACK_Q((v - _UNIX_EPOCH) // _ONE_US)


class _NotSimple:
    pass


_NOT_SIMPLE = _NotSimple()


def _const_value(c: ast.A_Const) -> Any:
    if c.isnull:
        return None
    v = c.val
    if isinstance(v, ast.Integer):
        return v.ival
    if isinstance(v, ast.String):
        return _Untyped(v.sval)
    if isinstance(v, ast.Boolean):
        return v.boolval
    return _NOT_SIMPLE  # Float literals are numeric, bit strings: DuckDB decides


class _Untyped(str):
    """A quoted literal: its type comes from the target column."""


def _direct_array(col: Any, values: list[Any], date_order: str = "MDY") -> pa.Array | None:
    ctype = col.type
    target = ctype.arrow
    base = ctype.base.name
    present = [v for v in values if v is not None]
    if not present:
        return pa.nulls(len(values), target)
    kinds = {type(v) for v in present}
    if kinds <= _STR_KINDS:
        arr = coerce_text(col, pa.array(values, pa.string()), date_order)
        return arr if arr.type == target else arr.cast(target)
    if ctype.is_array:
        return None
    for k in kinds:
        ok = _ACCEPTS.get((base, k))
        if ok is None:
            ok = _ACCEPTS[(base, k)] = _accepts(base, k)
        if not ok:
            return None
    if base in ("timestamp", "timestamptz"):
        tz = base == "timestamptz"
        if any((v.tzinfo is not None) != tz for v in present):
            return None
    if base == "float4" and not all(map(_fits_float4, present)):
        return None  # (the DuckDB path raises dtof's 22003)
    return pa.array(values, target)


def _fits_float4(v: float) -> bool:
    """A float8 rounds to a float4 without overflow or underflow (Arrow and struct would
    give Infinity or 0 where PostgreSQL's dtof raises 22003)."""
    a = abs(v)
    return a == 0 or a != a or a == math.inf or float_math.FLOAT4_UNDERFLOW_AT < a < float_math.FLOAT4_OVERFLOW_AT


_STR_KINDS = frozenset({str, _Untyped})
_ACCEPTS: dict[tuple[str, type], bool] = {}


def _accepts(base: str, kind: type) -> bool:
    """Whether a Python value of ``kind`` goes into a column of type ``base`` as it is."""
    if base in ("timestamp", "timestamptz"):
        return kind is datetime_type
    allowed = _DIRECT.get(base)
    if allowed is None:
        return False
    if kind is bool:
        return bool in allowed
    if kind is datetime_type:
        return False  # not a date, whatever isinstance says
    return any(issubclass(kind, a) for a in allowed)


# -- parameters the common way, without Arrow ------------------------------------------------
# Each returns the value the Arrow decoders would give, or _NOT_SIMPLE to let them decide
# (and raise PostgreSQL's error for bad input).

_PG_EPOCH = datetime_type(2000, 1, 1)
_PG_EPOCH_TZ = datetime_type(2000, 1, 1, tzinfo=ZoneInfo("UTC"))
#: Microseconds from 2000-01-01 that stay inside Python's datetime (years 1..9999).
_TS_LOW, _TS_HIGH = -63_082_281_600_000_000, 252_455_615_999_999_999


def _int_recv(width: int) -> Callable[[bytes], Any]:
    unpack = struct.Struct({2: "!h", 4: "!i", 8: "!q"}[width]).unpack

    def recv(raw: bytes) -> Any:
        return unpack(raw)[0] if len(raw) == width else _NOT_SIMPLE

    return recv


def _float_recv(fmt: str) -> Callable[[bytes], Any]:
    unpack = struct.Struct(fmt).unpack
    size = struct.calcsize(fmt)

    def recv(raw: bytes) -> Any:
        return unpack(raw)[0] if len(raw) == size else _NOT_SIMPLE

    return recv


def _bool_recv(raw: bytes) -> Any:
    return raw[0] != 0 if len(raw) == 1 else _NOT_SIMPLE


def _ts_recv(epoch: datetime_type) -> Callable[[bytes], Any]:
    unpack = struct.Struct("!q").unpack

    def recv(raw: bytes) -> Any:
        if len(raw) != 8:
            return _NOT_SIMPLE
        (us,) = unpack(raw)
        if not _TS_LOW <= us <= _TS_HIGH:
            return _NOT_SIMPLE  # infinity and the far ends: the Arrow decoders know
        return epoch + timedelta(0, 0, us)  # positional: no keyword parsing per value

    return recv


def _plain_text(raw: bytes) -> Any:
    if b"\x00" in raw:
        return _NOT_SIMPLE
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return _NOT_SIMPLE


_QUICK_BINARY: dict[int, Callable[[bytes], Any]] = {
    16: _bool_recv,
    20: _int_recv(8),
    21: _int_recv(2),
    23: _int_recv(4),
    700: _float_recv(">f"),
    701: _float_recv(">d"),
    25: _plain_text,
    1043: _plain_text,
    1114: _ts_recv(_PG_EPOCH),
    1184: _ts_recv(_PG_EPOCH_TZ),
}
_QUICK_TEXT: dict[int, Callable[[bytes], Any]] = {25: _plain_text, 1043: _plain_text}


def _not_simple(raw: bytes) -> Any:
    return _NOT_SIMPLE


def _utf8_recv(raw: bytes) -> Any:
    """A parameter of unspecified type sent as text: the string, as PostgreSQL's unknown."""
    return raw.decode("utf-8")


#: Parameter types the lake does not store but drivers bind (asyncpg's type introspection
#: sends ``$1::oid[]``): as the lake type whose values are the same (an oid is an unsigned
#: 32-bit integer, a name is text), with their own binary layout.
_OID_LIKE = frozenset({26, 28, 24, 2202, 2203, 2204, 2205, 2206, 4089, 4096, 3734, 3769})
_NAME_LIKE = frozenset({19, 18})
_ARRAY_OF_OID_LIKE = {1028: 26, 1011: 28, 1008: 24, 2207: 2202, 2208: 2203, 2209: 2204, 2210: 2205, 2211: 2206}
_ARRAY_OF_NAME_LIKE = {1003: 19, 1002: 18}


def _catalog_type_recv(oid: int, fmt: int) -> Callable[[bytes], Any] | None:
    from decoding.pgvalues import text_decoder
    from decoding.pgvalues.binin import array_recv_elements

    if oid in _OID_LIKE:
        if fmt == 1:
            return lambda raw: _uint4(raw)
        if oid in _REG_TYPES:  # 'pg_catalog.pg_class'::regclass: the cast looks it up
            return lambda raw: raw.decode()
        return lambda raw: _oid_in(raw.decode(), oid)
    if oid in _NAME_LIKE:
        return lambda raw: raw.decode()
    if oid in _ARRAY_OF_OID_LIKE or oid in _ARRAY_OF_NAME_LIKE:
        is_oid = oid in _ARRAY_OF_OID_LIKE
        if fmt == 0:
            dec = text_decoder(type_by_oid(1016 if is_oid else 1009))
            return lambda raw: dec([raw])[0].as_py()
        elem_oid = _ARRAY_OF_OID_LIKE.get(oid) or _ARRAY_OF_NAME_LIKE[oid]
        # array_recv_elements checks the element type against a lake type's oid; these
        # carry their own (26, 19…), which it lets through only above 10000: check here.

        def recv(raw: bytes) -> Any:
            if len(raw) >= 12 and struct.unpack_from(">I", raw, 8)[0] != elem_oid:
                raise PgError("42804", f"binary data has array element type {struct.unpack_from('>I', raw, 8)[0]} instead of expected {elem_oid}")
            fixed = raw[:8] + struct.pack(">I", 20 if is_oid else 25) + raw[12:]
            elems = array_recv_elements(fixed, type_by_oid(20 if is_oid else 25))
            if is_oid:
                return [None if e is None else _uint4(e) for e in elems]
            return [None if e is None else e.decode() for e in elems]

        return recv
    return None


def _interval_recv(fmt: int) -> Callable[[bytes], Any]:
    """An interval parameter as ``'m months d days u microseconds'``: DuckDB binds a Python
    value of the lake's interval struct as a STRUCT (no cast to INTERVAL), a timedelta
    loses months and folds a negative time into the days; this text is exact in DuckDB's
    and PostgreSQL's interval input alike."""
    from decoding.pgvalues import binary_decoder, text_decoder

    ctype = type_by_oid(1186)
    dec = binary_decoder(ctype) if fmt == 1 else text_decoder(ctype)

    def recv(raw: bytes) -> Any:
        v = dec([raw])[0].as_py()
        if isinstance(v, dict):
            return f"{v['months']} months {v['days']} days {v['microseconds']} microseconds"
        return v

    return recv


_REG_TYPES = frozenset({24, 2202, 2203, 2204, 2205, 2206, 4089, 4096, 3734, 3769})


def _oid_in(text: str, oid: int) -> int:
    """oidin / xidin: a decimal number of 32 bits (a negative one wraps, as in oidin)."""
    try:
        v = int(text.strip())
    except ValueError:
        v = None
    if v is None or not -(2**31) <= v < 2**32:
        name = {26: "oid", 28: "xid", 29: "cid"}.get(oid, "oid")
        raise PgError("22P02" if v is None else "22003", f'invalid input syntax for type {name}: "{text}"' if v is None else f'value "{text}" is out of range for type {name}')
    return v & 0xFFFFFFFF


def param_receivable(oid: int) -> bool:
    """Whether Bind can take a parameter of type ``oid`` (a lake type, or a catalog type
    with a receive function here): an inferred type that is not stays unknown (text)."""
    if oid in _OID_LIKE or oid in _NAME_LIKE or oid in _ARRAY_OF_OID_LIKE or oid in _ARRAY_OF_NAME_LIKE:
        return True
    try:
        type_by_oid(oid)
    except PgError:
        return False
    return True


def _uint4(raw: bytes) -> int:
    if len(raw) != 4:
        raise PgError("08P01", f"incorrect binary data format in bind parameter (oid of {len(raw)} bytes)")
    return int(struct.unpack(">I", raw)[0])


def _general_recv(oid: int, fmt: int, date_order: str = "MDY") -> Callable[[bytes], Any]:
    """The Arrow decoders, for whatever the quick ones leave (a date in text read in
    ``date_order``). The type is looked up at the first non-NULL value, as before the
    receive functions were cached."""
    special = _catalog_type_recv(oid, fmt)
    if special is not None:
        return special
    if oid == 1186:
        return _interval_recv(fmt)

    def recv(raw: bytes) -> Any:
        from decoding.pgvalues import binary_decoder, text_decoder

        ctype = type_by_oid(oid)
        dec = binary_decoder(ctype) if fmt == 1 else text_decoder(ctype, date_order)
        return dec([raw])[0].as_py()

    return recv


def _unknown_binary_recv(number: int) -> Callable[[bytes], Any]:
    def recv(raw: bytes) -> Any:
        raise PgError("08P01", f"binary data for parameter ${number} of unknown type")

    return recv


_ParamRecv = tuple[Callable[[bytes], Any], Callable[[bytes], Any]]


def _param_recvs(param_types: Sequence[int], formats: tuple[int, ...], n: int, date_order: str = "MDY") -> list[_ParamRecv]:
    """(quick, general) receive functions of each of ``n`` parameters: ``quick`` answers or
    returns _NOT_SIMPLE, then ``general`` decides. Formats as Bind gives them: none = all
    text, one = for all, else one each."""
    out: list[_ParamRecv] = []
    for i in range(n):
        fmt = formats[0] if len(formats) == 1 else formats[i] if i < len(formats) else 0
        oid = param_types[i] if i < len(param_types) else 0
        if not oid:
            quick = _unknown_binary_recv(i + 1) if fmt == 1 else _utf8_recv
            out.append((quick, _not_simple))
            continue
        quick = (_QUICK_BINARY if fmt == 1 else _QUICK_TEXT).get(oid, _not_simple)
        out.append((quick, _general_recv(oid, fmt, date_order)))
    return out


# -- point statements by primary key, without DuckDB ---------------------------------------
#
# ``SELECT cols FROM t WHERE pk = $1``, ``UPDATE t SET c = expr WHERE pk = $1`` and
# ``DELETE FROM t WHERE pk = $1`` read their one row from the lake's key index and row cache
# (``Lake.point_read``) when it can vouch for the statement's snapshot; anything it cannot
# (own writes in the table, a row changed after the snapshot, an expression beyond simple
# arithmetic, a type that needs a conversion) goes the DuckDB way, which is the reference.


@dataclass(slots=True)
class _PointPlan:
    """What a point statement needs from its syntax tree (independent of the catalog)."""

    node: Any  # kept alive: plans are found by id(node)
    schema: str | None
    relname: str
    alias: str
    keys: dict[str, Any]  # column name → ParamRef / A_Const
    targets: list[tuple[str, str | None]] = field(default_factory=list)  # (output, column|None=*)
    sets: list[tuple[str, Any]] = field(default_factory=list)  # (column, expression)
    #: SELECT: result columns of an earlier DuckDB run, valid for catalog ``columns_for``.
    columns: list[Column] | None = None
    columns_for: Any = None


def _colname(n: Any, alias: str) -> str | None:
    if not isinstance(n, ast.ColumnRef):
        return None
    f = n.fields
    if len(f) == 1 and isinstance(f[0], ast.String):
        return f[0].sval
    if len(f) == 2 and isinstance(f[0], ast.String) and isinstance(f[1], ast.String) and f[0].sval == alias:
        return f[1].sval
    return None


def _key_terms(where: Any, alias: str) -> dict[str, Any] | None:
    """``col = value [AND col = value …]`` as {column: value node}, or None."""
    if where is None:
        return None
    conj = where.args if isinstance(where, ast.BoolExpr) and where.boolop == enums.BoolExprType.AND_EXPR else (where,)
    out: dict[str, Any] = {}
    for e in conj:
        if not (
            isinstance(e, ast.A_Expr)
            and e.kind == enums.A_Expr_Kind.AEXPR_OP
            and len(e.name) == 1
            and e.name[0].sval == "="
        ):
            return None
        col, val = _colname(e.lexpr, alias), e.rexpr
        if col is None:
            col, val = _colname(e.rexpr, alias), e.lexpr
        if col is None or col in out or not isinstance(val, (ast.ParamRef, ast.A_Const)):
            return None
        out[col] = val
    return out


def _range(rv: Any) -> tuple[str | None, str, str] | None:
    if not isinstance(rv, ast.RangeVar) or rv.catalogname:
        return None
    schema = rv.schemaname
    if schema in ("pg_catalog", "information_schema") or rv.relname.startswith("pg_"):
        return None  # catalog names resolve elsewhere
    return schema, rv.relname, rv.alias.aliasname if rv.alias else rv.relname


def _select_plan(node: Any) -> _PointPlan | None:
    if not isinstance(node, ast.SelectStmt) or node.op != enums.SetOperation.SETOP_NONE:
        return None
    if (
        node.distinctClause or node.intoClause or node.groupClause or node.havingClause
        or node.windowClause or node.valuesLists or node.sortClause or node.limitOffset
        or node.limitCount or node.lockingClause or node.withClause
        or not node.fromClause or len(node.fromClause) != 1 or not node.targetList
    ):
        return None
    r = _range(node.fromClause[0])
    if r is None:
        return None
    keys = _key_terms(node.whereClause, r[2])
    if not keys:
        return None
    plan = _PointPlan(node, r[0], r[1], r[2], keys)
    for rt in node.targetList:
        v = rt.val
        if isinstance(v, ast.ColumnRef) and isinstance(v.fields[-1], ast.A_Star):
            if rt.name is not None or not (len(v.fields) == 1 or (len(v.fields) == 2 and getattr(v.fields[0], "sval", None) == r[2])):
                return None
            plan.targets.append(("*", None))
            continue
        col = _colname(v, r[2])
        if col is None:
            return None
        plan.targets.append((rt.name or col, col))
    return plan


def _dml_plan(node: Any) -> _PointPlan | None:
    if getattr(node, "withClause", None) is not None or returning(node):
        return None
    if isinstance(node, ast.UpdateStmt) and node.fromClause:
        return None
    if isinstance(node, ast.DeleteStmt) and node.usingClause:
        return None
    r = _range(node.relation)
    if r is None:
        return None
    keys = _key_terms(node.whereClause, r[2])
    if not keys:
        return None
    plan = _PointPlan(node, r[0], r[1], r[2], keys)
    if isinstance(node, ast.UpdateStmt):
        for rt in node.targetList:
            if rt.indirection or rt.name in dict(plan.sets) or isinstance(rt.val, ast.MultiAssignRef):
                return None
            plan.sets.append((rt.name, rt.val))
    return plan


_INT_WIDTH = {"int2": 2, "int4": 4, "int8": 8}
_INT_RANGE = {2: (-(1 << 15), (1 << 15) - 1), 4: (-(1 << 31), (1 << 31) - 1), 8: (-(1 << 63), (1 << 63) - 1)}


def _key_value(t: Table, plan: _PointPlan, params: list[Any]) -> tuple[Any, ...] | None:
    """The statement's key, in primary-key order, when its values need no conversion."""
    if set(plan.keys) != set(t.primary_key):
        return None
    out = []
    for name in t.primary_key:
        col = t.column(name)
        v = _operand(plan.keys[name], params, None, t)
        if v is _NOT_SIMPLE or v is None or col is None:
            return None
        val = v[0]
        base = col.type.base.name
        if base in _INT_WIDTH:
            if type(val) is not int:
                return None
        elif base in ("text", "varchar"):
            if not isinstance(val, str):
                return None
            val = str(val)
        else:
            return None
        out.append(val)
    return tuple(out)


def _operand(n: Any, params: list[Any], row: dict[str, Any] | None, t: Table) -> Any:
    """(value, integer width or 0) of a simple expression, None for NULL, or _NOT_SIMPLE."""
    if isinstance(n, ast.ParamRef):
        if not 0 < n.number <= len(params):
            return _NOT_SIMPLE
        v = params[n.number - 1]
        if v is None:
            return None
        if type(v) is int:
            return v, 2 if -32768 <= v < 32768 else 4 if -(1 << 31) <= v < (1 << 31) else 8
        return v, 0
    if isinstance(n, ast.A_Const):
        v = _const_value(n)
        if v is _NOT_SIMPLE or v is None:
            return v
        if type(v) is int:
            return v, 4 if -(1 << 31) <= v < (1 << 31) else 8
        return v, 0
    if row is not None and isinstance(n, ast.ColumnRef):
        name = _colname(n, "")
        col = t.column(name) if name is not None else None
        if col is None or col.physical not in row:
            return _NOT_SIMPLE
        v = row[col.physical]
        if v is None:
            return None
        return v, _INT_WIDTH.get(col.type.base.name, 0) if type(v) is int else 0
    if (
        row is not None
        and isinstance(n, ast.A_Expr)
        and n.kind == enums.A_Expr_Kind.AEXPR_OP
        and len(n.name) == 1
        and n.name[0].sval in ("+", "-", "*")
        and n.lexpr is not None
    ):
        a = _operand(n.lexpr, params, row, t)
        b = _operand(n.rexpr, params, row, t)
        if a is _NOT_SIMPLE or b is _NOT_SIMPLE:
            return _NOT_SIMPLE
        if a is None or b is None:
            return None
        (x, wx), (y, wy) = a, b
        if type(x) is not int or type(y) is not int or not wx or not wy:
            return _NOT_SIMPLE  # integers only: other arithmetic is DuckDB's to define
        op = n.name[0].sval
        v = x + y if op == "+" else x - y if op == "-" else x * y
        w = max(wx, wy)
        lo, hi = _INT_RANGE[w]
        if not lo <= v <= hi:
            return _NOT_SIMPLE  # "integer out of range": the DuckDB path says so
        return v, w
    return _NOT_SIMPLE


def _row_table(t: Table, rid: int, row: dict[str, Any]) -> pa.Table | None:
    """One row in storage form (``_rid`` plus every column), or None if a value does not
    convert as it is."""
    arrays = [pa.array([rid], pa.int64())]
    try:
        for c in t.columns:
            arrays.append(pa.array([row[c.physical]], c.type.arrow))
    except (pa.ArrowException, TypeError, ValueError, OverflowError, KeyError):
        return None
    return pa.Table.from_arrays(arrays, schema=layout(t).with_rid)


#: Column types a point SELECT returns from the row cache (their storage form is what DuckDB
#: would hand the encoders).
_FAST_READ_TYPES = frozenset(
    {"int2", "int4", "int8", "float4", "float8", "bool", "text", "varchar", "date",
     "timestamp", "timestamptz", "bytea"}
)
