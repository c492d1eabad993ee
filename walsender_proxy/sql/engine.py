"""Queries and DML on DuckDB: the bridge between a session's statements and the lake.

A statement's PostgreSQL text is rewritten (:mod:`walsender_proxy.sql.rewrite`) so catalog
names resolve to the emulated pg_catalog and user tables to their snapshot at the
statement's CSN (plus the transaction's own writes); DuckDB runs it over Parquet and Arrow.
UPDATE and DELETE are rewritten into a SELECT of the target rows (with their ``_rid``) and
their new values, and the lake writes those. Results leave as Arrow batches and are encoded
column by column (:mod:`walsender_proxy.sql.result_rows`), never row by row in Python.

This module is the orchestration; the parts it calls live beside it:

- :mod:`~walsender_proxy.sql.point_path`: SELECT/UPDATE/DELETE by primary key from the
  lake's key index, and the session's plans of them;
- :mod:`~walsender_proxy.sql.insert_fast`: ``INSERT … VALUES`` of bound values without DuckDB;
- :mod:`~walsender_proxy.sql.param_recv`: Bind's parameter values;
- :mod:`~walsender_proxy.sql.result_rows`: result columns, batches and DataRows;
- :mod:`~walsender_proxy.sql.copy_statement`: COPY's options and data;
- :mod:`~walsender_proxy.sql.statement_nodes`: what is read from and reshaped in the
  statements' pglast trees;
- :mod:`~walsender_proxy.sql.column_coercion`: values into a column's storage type;
- :mod:`~walsender_proxy.sql.duck_errors`: DuckDB's exceptions as PostgreSQL's errors.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pglast import ast, enums, parse_sql
from pglast.stream import RawStream

from decoding import pgtz
from decoding.catalog import RID, Catalog, Table
from decoding.errors import PgError
from decoding.pgtime import TRANSACTION_NOW
from decoding.pgtypes import ColumnType, type_by_oid
from walsender_proxy.backend.outcomes import Column, Done, Outcome, Rows
from walsender_proxy.lake import Transaction, partitions
from walsender_proxy.lake.domains import shown as shown_type
from walsender_proxy.lake.files import CHANGESET_ROW_GROUP
from walsender_proxy.lake.transaction import conform, layout
from walsender_proxy.spark import serve as spark_serve
from walsender_proxy.sql import (
    alter_type,
    array_assign,
    catalog_bridge,
    copy_statement,
    defaults,
    explain,
    identity,
    jsonb_edit,
    param_recv,
    prepared_datestyle,
    privilege_checks,
    privileges,
    sequences,
    session_zone,
    sql_function_calls,
    upsert,
    views,
)
from walsender_proxy.sql.column_coercion import TextOut, coerce_text, coerce_text_columns
from walsender_proxy.sql.ddl_names import qualified, unsupported
from walsender_proxy.sql.duck_errors import (
    duck_error,
    locate_missing_column,
    locate_ungrouped_column,
)
from walsender_proxy.sql.insert_fast import ColumnInput, values_from_plan
from walsender_proxy.sql.nodes import all_nodes
from walsender_proxy.sql.param_recv import text_params
from walsender_proxy.sql.pgcatalog import CatalogBinding
from walsender_proxy.sql.pgcatalog_defs import format_type
from walsender_proxy.sql.point_path import PointStatements
from walsender_proxy.sql.result_rows import (
    BATCH_ROWS,
    bytea_output,
    float_digits,
    no_columns,
    result_batches,
    result_columns,
)
from walsender_proxy.sql.rewrite import (
    CLOCK_VARIABLE_PREFIX,
    STATEMENT_CLOCK,
    TRANSACTION_CLOCK,
    OutputColumn,
    Rewritten,
    UserTable,
)
from walsender_proxy.sql.statement_nodes import (
    assigned,
    attach_with,
    defaults_to_null,
    keeps_literal_scale,
    no_lateral,
    numeric_columns,
    returning,
    single_values_as_select,
    typed_nulls,
    values_cast_to_columns,
)

if TYPE_CHECKING:
    from walsender_proxy.sql.services import SessionState

#: Rows per batch of an INSERT … SELECT's result (a changeset row group).
INSERT_BATCH_ROWS = CHANGESET_ROW_GROUP
TARGET = "__wp_target__"


class Engine:
    def __init__(self, ex: SessionState) -> None:
        self.ex = ex
        self.lake = ex.lake
        self.con: duckdb.DuckDBPyConnection = ex.lake.store.cursor()
        self._registered: list[str] = []
        #: An INSERT's rows made beforehand (subscripted targets), as its source reads them.
        self._sources: dict[tuple[str | None, str], str | UserTable] | None = None
        #: Point statements and INSERT … VALUES without DuckDB, with their plans.
        self.points = PointStatements(ex)
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

    @property
    def text_out(self) -> TextOut:
        """The session's settings a value's output function reads when it goes into a
        text column (extra_float_digits, bytea_output, TimeZone)."""
        return TextOut(float_digits(self.ex), bytea_output(self.ex), self.ex.settings.zone())

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
            readable = self._check_read(cat, schema, name)
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
                if any(sq.schema == self.ex.temp_schema and sq.name == name for sq in cat.sequences.values()):
                    self.ex.temp_read = True
                self._register(*found[0])
                return UserTable(found[1], sequences.RELATION_TYPES)
            if t.schema == self.ex.temp_schema:
                self.ex.temp_read = True  # (PREPARE TRANSACTION refuses it then)
            q = tx.snapshot_query(t, with_rid=False, sql_types=True, heap_order=True)
            for n, tbl in q.arrow.items():
                self._register(n, tbl)
            typed = _typed(q.sql, t, cat)
            return typed if readable is None else dataclasses.replace(typed, readable=readable, name=t.name)

        return resolve

    def _check_read(self, cat: Catalog, schema: str | None, name: str) -> frozenset[str] | None:
        """SELECT on a relation the statement reads, for the current user or, inside a
        view's query, the view's owner (42501); the columns it may read where it holds
        SELECT on some columns only (None: on the table)."""
        if not privileges.CHECK_READS.get():
            return None
        view = privileges.READ_AS.get()
        if view is None:
            who = self.ex.who()
        else:
            owner = privileges.ownership(cat, view, privileges.PG_DATABASE_OWNER).owner
            role = next((r.name for r in self.ex.services.roles.all() if r.oid == owner), None)
            who = self.ex.who(role) if owner != privileges.PG_DATABASE_OWNER and role else self.ex.who(self._database_owner())
        if who.superuser:
            return None
        if schema is not None:
            privilege_checks.schema_usage(cat, who, schema)
        rel = privilege_checks.find(cat, schema, name, self.ex.search_path())
        if rel is not None and rel.kind != "index":
            return privilege_checks.check_read(cat, who, rel)
        return None

    def _database_owner(self) -> str:
        roles = self.ex.services.roles.all()
        return roles[0].name if roles else self.ex.user

    def rewrite(
        self, sql: str, tx: Transaction, overrides: dict[tuple[str | None, str], str | UserTable] | None = None, params: Sequence[Any] = (), *, writing: str | None = None
    ) -> str:
        return self.rewritten(sql, tx, overrides, params, writing=writing).sql

    def rewritten(
        self, sql: str, tx: Transaction, overrides: dict[tuple[str | None, str], str | UserTable] | None = None, params: Sequence[Any] = (), *,
        writing: str | None = None, param_types: tuple[tuple[int, ColumnType], ...] | None = None, infer_params: bool = False,
    ) -> Rewritten:
        """The statement for DuckDB; ``params`` (the bound values) tell which ``$n`` are
        text, whose casts go through the target type's input function. ``writing``: the
        table whose INSERT, UPDATE or DELETE rows the query computes (a user function
        reading it there would see the statement's own changes in PostgreSQL)."""
        self._sync_zone()
        token = TRANSACTION_NOW.set(self.ex.xact_start_us)
        writes = sql_function_calls.WRITING.set(writing)
        try:
            return catalog_bridge.rewrite_and_register(
                self.ex, self.binding, sql, self.resolver(tx, overrides), tx, text_params(params),
                getattr(params, "types", ()) if param_types is None else param_types, getattr(params, "literal_date_order", None), infer_params,
            )
        finally:
            sql_function_calls.WRITING.reset(writes)
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

    def _column_names(self, tx: Transaction, schema: str | None, name: str) -> set[str] | None:
        """A table's or a view's column names, None for what is neither."""
        try:
            v = views.find(tx.catalog(), schema, name, self.ex.search_path())
            t = views.as_table(v) if v is not None else tx.table(f"{schema}.{name}" if schema else name)
        except PgError:
            return None
        return {c.name for c in t.columns}

    # -- SELECT --------------------------------------------------------------------------
    def select(self, tx: Transaction, node: ast.SelectStmt, text: str, params: list[Any]) -> Rows:
        self._release()
        if node.intoClause is not None:
            raise unsupported("SELECT INTO")
        plan = self.points.select_plan(node, text)
        if plan is not None:
            fast = self.points.select(tx, plan, params)
            if fast is not None:
                return fast
        # FOR UPDATE/SHARE: the rows are read at the snapshot (the rewriter drops the clause,
        # keeping PostgreSQL's refusals); writers are caught by first-updater-wins at write time.
        rw = self.rewritten(text, tx, params=params)
        try:
            rel = self.relation(rw.sql, params, rw.dropped_params)
        except PgError as e:
            locate_missing_column(e, node)
            locate_ungrouped_column(e, node, lambda schema, name: self._column_names(tx, schema, name))
            raise
        rows = Rows(result_columns(rel, rw, self.tables_of(tx, rw)), result_batches(rel, self.ex))
        if no_columns(rows.columns):
            rows = Rows([], (b.select([]) for b in rows.batches))
        if plan is not None:
            self.points.remember_columns(tx, plan, rows.columns)
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
        plan = self.points.select_plan(node, text) if text is not None else None
        if plan is not None and self.points.columns_valid(tx, plan):
            return plan.columns  # type: ignore[return-value]
        rw = self.rewritten(RawStream()(typed_nulls(node, param_types)), tx)
        rel = self.relation(f"SELECT * FROM ({rw.sql}) LIMIT 0", [])
        cols = result_columns(rel, rw, self.tables_of(tx, rw))
        if no_columns(cols):
            cols = []
        if plan is not None:
            self.points.remember_columns(tx, plan, cols)
        return cols

    def analyzed_param_oids(self, tx: Transaction, sql: str, known: Sequence[int]) -> dict[int, int]:
        """The types parse analysis gives a query's (``sql``) unspecified ``$n`` (``known``: the
        OIDs of the parameters, 0 where unspecified), as PostgreSQL fixes them at Parse:
        the type of the first context that coerces each (``generate_series(1, $1)``:
        int4, ``$1 = ANY(ints)``: int4, ``WHERE $1``: bool). {} where the analysis fails:
        the statement's own error comes from Describe or Execute as before."""
        self._release()
        lake_types = []
        for i, oid in enumerate(known):
            if oid:
                with contextlib.suppress(PgError):
                    lake_types.append((i + 1, type_by_oid(oid)))
        try:
            rw = self.rewritten(sql, tx, param_types=tuple(lake_types), infer_params=True)
        except Exception:
            return {}
        return dict(rw.param_oids)

    def describe_text(self, tx: Transaction, sql: str) -> tuple[list[Column], tuple[int, ...]]:
        """The result columns of a query given as text (CREATE VIEW's, whose positions
        are the statement's), and the tables whose primary key its GROUP BY rests on."""
        self._release()
        rw = self.rewritten(sql, tx)
        try:
            rel = self.relation(f"SELECT * FROM ({rw.sql}) LIMIT 0", [], rw.dropped_params)
        except PgError as e:
            node = parse_sql(sql)[0].stmt
            locate_missing_column(e, node)
            locate_ungrouped_column(e, node, lambda schema, name: self._column_names(tx, schema, name))
            raise
        return result_columns(rel, rw, self.tables_of(tx, rw)), rw.key_dependencies

    # -- INSERT --------------------------------------------------------------------------
    def insert(self, tx: Transaction, node: ast.InsertStmt, params: list[Any], *, made: bool = False) -> Iterator[Outcome]:
        """``made``: the source's rows are registered already (a subscripted INSERT's)."""
        if not made:
            self._release()
        if any(c.indirection for c in node.cols or ()):
            node, self._sources = self._subscripted_insert(tx, node, params)
            try:
                yield from self.insert(tx, node, params, made=True)
            finally:
                self._sources = None
            return
        if getattr(params, "literal_date_order", None) is not None:
            prepared_datestyle.check_write(node, params, [c.type for c in tx.table(qualified(node.relation)).columns])
        if node.onConflictClause is not None:
            yield from self._upsert(tx, node, params)
            return
        attach_with(node)
        plan = self.points.insert_plan(node)
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
                plan.inputs = [ColumnInput(c) for c in colobjs]
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
                    data = values_from_plan(plan, params, self.date_order)
                    if data is not None:
                        data = omitted.add(data)
                        n = tx.apply_insert(t, data) if data.num_rows else 0
                if data is not None:
                    yield Done(f"INSERT 0 {n}")
                    return
            else:
                data = values_from_plan(plan, params, self.date_order)
                if data is not None:
                    data = omitted.add(data)
        if data is None and node.selectStmt is None:  # DEFAULT VALUES
            omitted = defaults.OmittedDefaults(self, tx, t, ())
            if omitted:
                data = omitted.add(pa.table({}), 1)
            else:
                data = pa.table({c: pa.nulls(1, t.column(c).type.arrow) for c in cols[:1]})  # type: ignore[union-attr]
        elif data is None:
            known = identity.targeted(node, cols)
            ignored = identity.ignored_on_insert(node, t, known) if known is not None else set()
            src = defaults.with_defaults(single_values_as_select(node.selectStmt), t, cols, tx.catalog(), ignored)
            src = values_cast_to_columns(src, t, cols)
            defaults_to_null(src, [i for i, c in enumerate(cols) if keeps_literal_scale(t.column(c))], numeric_columns(t, cols))
            rw = self.rewritten(RawStream()(src), tx, self._sources, params=params, writing=t.name)
            rel = self.relation(rw.sql, params)
            if len(rel.columns) > len(cols):
                raise PgError("42601", "INSERT has more expressions than target columns")
            if len(rel.columns) < len(cols) and node.cols:
                raise PgError("42601", "INSERT has more target columns than expressions")
            names = cols[: len(rel.columns)]
            if known is None:  # (the rows' width is known now)
                ignored = identity.ignored_on_insert(node, t, names)
            if not src.valuesLists:  # (a VALUES column of untyped literals is text there)
                _enum_assignments(tx.catalog(), t, list(zip(names, rw.columns or (), strict=False)))
            omitted = defaults.OmittedDefaults(self, tx, t, [n for n in names if n not in ignored])
            omitted.prepare()
            if not returning(node) and not omitted.queried_per_batch:  # the result streams into the table, a batch at a time
                source = result_batches(rel, self.ex, INSERT_BATCH_ROWS)
                out = self.text_out
                try:  # (closed even when a batch is refused: the connection's result must go)
                    n = tx.apply_insert_batches(
                        t,
                        (
                            omitted.add(coerce_text_columns(t, identity.without(pa.Table.from_batches([b]).rename_columns(names), ignored), self.date_order, out))
                            for b in source
                        ),
                    )
                finally:
                    source.close()
                yield Done(f"INSERT 0 {n}")
                return
            data = rel.to_arrow_table()
            data = identity.without(data.rename_columns(names), ignored)
            data = omitted.add(coerce_text_columns(t, data, self.date_order, self.text_out))
        n = tx.apply_insert(t, data) if data.num_rows else 0
        if returning(node):
            yield self._returning(tx, t, node.relation, returning(node), tx_rows_since(tx, t, n), params, f"INSERT 0 {n}")
        else:
            yield Done(f"INSERT 0 {n}")

    def _proposed(self, tx: Transaction, t: Table, node: ast.InsertStmt, params: list[Any]) -> pa.Table:
        """An INSERT's rows as a table of the columns it names (before storage coercion),
        the omitted columns' defaults added."""
        attach_with(node)
        cols = [c.name for c in node.cols] if node.cols else [c.name for c in t.columns]
        for c in cols:
            if t.column(c) is None:
                raise PgError("42703", f'column "{c}" of relation "{t.name}" does not exist')
        if node.selectStmt is None:  # DEFAULT VALUES
            omitted = defaults.OmittedDefaults(self, tx, t, ())
            if omitted:
                return omitted.add(pa.table({}), 1)
            return pa.table({c: pa.nulls(1, t.column(c).type.arrow) for c in cols[:1]})  # type: ignore[union-attr]
        known = identity.targeted(node, cols)
        ignored = identity.ignored_on_insert(node, t, known) if known is not None else set()
        src = defaults.with_defaults(node.selectStmt, t, cols, tx.catalog(), ignored)
        defaults_to_null(src, [i for i, c in enumerate(cols) if keeps_literal_scale(t.column(c))], numeric_columns(t, cols))
        rw = self.rewritten(RawStream()(src), tx, self._sources, params=params, writing=t.name)
        rel = self.relation(rw.sql, params)
        if not src.valuesLists:  # (a VALUES column of untyped literals is text there)
            _enum_assignments(tx.catalog(), t, list(zip(cols, rw.columns or (), strict=False)))
        if len(rel.columns) > len(cols):
            raise PgError("42601", "INSERT has more expressions than target columns")
        if len(rel.columns) < len(cols) and node.cols:
            raise PgError("42601", "INSERT has more target columns than expressions")
        data = rel.to_arrow_table()
        names = cols[: data.num_columns]
        if known is None:  # (the rows' width is known now)
            ignored = identity.ignored_on_insert(node, t, names)
        omitted = defaults.OmittedDefaults(self, tx, t, [n for n in names if n not in ignored])
        return omitted.add(coerce_text_columns(t, identity.without(data.rename_columns(names), ignored), self.date_order, self.text_out))

    def existing_keys(
        self, tx: Transaction, t: Table, key: Sequence[str], proposed: pa.Table, *, not_distinct: bool = False
    ) -> list[tuple[Any, ...]]:
        """The keys of ``proposed`` (physical column names) already in ``t`` at the
        statement's snapshot, this transaction's own writes included (``not_distinct``:
        NULLs match NULLs)."""
        q = tx.snapshot_query(t, with_rid=True, sql_types=True)
        for n, tbl in q.arrow.items():
            self._register(n, tbl)
        name = f"__wp_keys_{id(proposed)}"
        self._register(name, proposed.select(list(key)))
        eq = "IS NOT DISTINCT FROM" if not_distinct else "="
        on = " AND ".join(f'e."{k}" {eq} p."{k}"' for k in key)
        picked = ", ".join(f'e."{k}"' for k in key)
        sql = f"SELECT {picked} FROM ({q.sql}) e WHERE EXISTS (SELECT 1 FROM {name} p WHERE {on})"
        try:
            rows = self.con.sql(sql).fetchall()
        except Exception as e:
            raise duck_error(e) from None
        return [tuple(r) for r in rows]

    def _upsert(self, tx: Transaction, node: ast.InsertStmt, params: list[Any]) -> Iterator[Outcome]:
        """INSERT … ON CONFLICT (sql/upsert.py)."""
        if tx.table(qualified(node.relation)).partition_key is not None:
            raise unsupported("INSERT … ON CONFLICT into a partitioned table")
        clause = node.onConflictClause
        t = sequences.write_target(tx, node.relation, sequences.CHANGE)
        do_update = clause.action == enums.OnConflictAction.ONCONFLICT_UPDATE
        if do_update:  # (CheckValidResultRel: DO UPDATE needs what an UPDATE needs, rows or none)
            tx.check_publishable(t, "update")
        keys = upsert.arbiters(t, clause)
        proposed = _generated_named(tx, t, _conformed(t, self._proposed(tx, t, node, params)))
        proposed = proposed.append_column(upsert.POS, pa.array(np.arange(proposed.num_rows, dtype=np.int64)))
        inserts, conflicts = upsert.split(self, tx, t, keys, proposed, do_update)
        # (each row's place among the proposed ones: RETURNING lists them in that order)
        ins_pos = upsert.positions(inserts)
        inserts = inserts.drop_columns([upsert.POS])
        n_ins = tx.apply_insert(t, inserts) if inserts.num_rows else 0
        inserted = tx_rows_since(tx, t, n_ins) if n_ins and returning(node) else None
        updated = None
        n_upd = 0
        if do_update and conflicts.num_rows:
            alias = node.relation.alias.aliasname if node.relation.alias else node.relation.relname
            sql, changed = upsert.update_sql(t, alias, clause, keys[0], TARGET, tx.catalog())
            name = f"__wp_excluded_{id(conflicts)}"
            self._register(name, conflicts)
            old = self._targets(tx, t, sql, params, extra={(None, "excluded"): _typed(f"SELECT * FROM {name}", t)})
            old = old.filter(pc.fill_null(old.column("__ok"), False))
            new = old
            for cname in changed:
                c = t.column(cname)
                assert c is not None
                new = new.set_column(new.column_names.index(c.physical), c.physical, coerce_text(c, old.column(f"__new_{cname}"), self.date_order, self.text_out))
            keep = upsert.keep_columns(t)
            if returning(node):  # (the generated columns as the update stores them)
                new = tx.with_generated(t, new)
            n_upd = tx.apply_update(t, old.select(keep), new.select(keep), changed=changed) if old.num_rows else 0
            updated = _named(t, _stored(t, new, keep)) if returning(node) else None
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
        with_sql = _read_only_with(node.withClause, "UPDATE")
        if isinstance(node.whereClause, ast.CurrentOfExpr):
            raise unsupported("UPDATE … WHERE CURRENT OF")
        if node.fromClause and returning(node):  # (RETURNING * includes the FROM list's columns)
            raise unsupported("UPDATE … FROM … RETURNING")
        if getattr(params, "literal_date_order", None) is not None:
            prepared_datestyle.check_write(node, params, [c.type for c in tx.table(qualified(node.relation)).columns])
        target = sequences.write_target(tx, node.relation, sequences.CHANGE)
        identity.check_update(target, node.targetList)
        tx.check_publishable(target, "update")
        done = self.points.write(tx, node, params, "UPDATE") if not with_sql else None
        if done is not None:
            yield done
            return
        t = tx.table(qualified(node.relation))
        no_lateral(node.fromClause, "UPDATE … FROM")
        alias = node.relation.alias.aliasname if node.relation.alias else node.relation.relname
        sets: dict[str, str] = {}
        subs: list[array_assign.Subscript] = []
        selected: list[str] = []  # (a[i] = v: selected as __lo_k, __hi_k, __val_k)
        for target in node.targetList:
            col = t.column(target.name)
            if col is None:
                raise PgError("42703", f'column "{target.name}" of relation "{t.name}" does not exist')
            if target.indirection:
                if col.name in sets:
                    raise PgError("42601", f'multiple assignments to same column "{col.name}"')
                sub = array_assign.subscript(col.name, target.indirection, col.type.sql_name(), col.type.is_array, target.location)
                k = len(subs)
                subs.append(sub)
                selected += array_assign.selected(sub, k, RawStream()(assigned(target.val)))
                continue
            if col.name in sets or any(s.column == col.name for s in subs):
                raise PgError("42601", f'multiple assignments to same column "{col.name}"')
            if isinstance(assigned(target.val), ast.SetToDefault):  # (SET c = DEFAULT, SET (a, c) = (…, DEFAULT))
                expr = defaults.value_sql(col, tx.catalog())
            elif isinstance(target.val, ast.ColumnRef) and isinstance(target.val.fields[-1], ast.A_Star):
                # (v.* is a whole row, a record: a column takes no record)
                raise PgError("42804", f'column "{col.name}" is of type {col.type.sql_name()} but expression is of type record',
                              hint="You will need to rewrite or cast the expression.")
            else:
                expr = RawStream()(assigned(target.val))
            sets[col.name] = expr
        news = ", ".join([*(f'({e}) AS "__new_{n}"' for n, e in sets.items()), *selected])
        sql = f'{with_sql}SELECT "{alias}".*, {news} FROM {TARGET} AS "{alias}"'
        if node.fromClause:
            sql += ", " + ", ".join(RawStream()(f) for f in node.fromClause)
        if node.whereClause is not None:
            sql += " WHERE " + RawStream()(node.whereClause)
        old = self._targets(tx, t, sql, params)
        new = old
        for name in sets:
            c = t.column(name)
            assert c is not None
            new = new.set_column(new.column_names.index(c.physical), c.physical, coerce_text(c, old.column(f"__new_{name}"), self.date_order, self.text_out))
        for c, arr in self._subscripted(t, subs, old):
            new = new.set_column(new.column_names.index(c.physical), c.physical, arr)
        keep = [RID] + [c.physical for c in t.columns] + ([partitions.LEAF] if t.partition_key is not None else [])
        changed = [*sets, *(s.column for s in subs)]
        if returning(node):  # (the generated columns as the update stores them)
            new = tx.with_generated(t, new)
        n = tx.apply_update(t, old.select(keep), new.select(keep), changed=list(dict.fromkeys(changed))) if old.num_rows else 0
        if returning(node):
            yield self._returning(tx, t, node.relation, returning(node), _named(t, _stored(t, new, keep)), params, f"UPDATE {n}", with_sql)
        else:
            yield Done(f"UPDATE {n}")

    def _subscripted_insert(self, tx: Transaction, node: ast.InsertStmt, params: list[Any]) -> tuple[ast.InsertStmt, dict[tuple[str | None, str], str | UserTable]]:
        """``INSERT INTO t (a[1:3], b[2], c) …``: the source's rows are computed first and
        each subscripted column is assigned into a NULL array (PostgreSQL's INSERT does the
        same); the statement then inserts those rows into the columns as a whole, so
        defaults, RETURNING and ON CONFLICT work as for any INSERT."""
        t = sequences.write_target(tx, node.relation, sequences.CHANGE)
        names: list[str] = []
        subs: list[array_assign.Subscript] = []
        sources: list[int] = []  # (the source column of each subscripted target)
        plain: dict[str, int] = {}
        for j, rt in enumerate(node.cols):
            col = t.column(rt.name)
            if col is None:
                raise PgError("42703", f'column "{rt.name}" of relation "{t.name}" does not exist')
            if rt.name in plain or (not rt.indirection and rt.name in names):
                raise PgError("42701", f'column "{rt.name}" specified more than once')
            if rt.indirection:
                subs.append(array_assign.subscript(col.name, rt.indirection, col.type.sql_name(), col.type.is_array, rt.location))
                sources.append(j)
            else:
                plain[rt.name] = j
            if rt.name not in names:
                names.append(rt.name)
        if node.selectStmt is None:
            raise PgError("42601", "INSERT has more target columns than expressions")
        for row in node.selectStmt.valuesLists or ():
            if any(isinstance(row[j], ast.SetToDefault) for j in sources if j < len(row)):
                raise PgError("0A000", "cannot set an array element to DEFAULT")
        bounds = [part for k, sub in enumerate(subs) for part in array_assign.subscripts_selected(sub, k)]
        src = defaults.with_defaults(node.selectStmt, t, [rt.name for rt in node.cols], tx.catalog())
        rw = self.rewritten(f"SELECT __wp_s.*, {', '.join(bounds)} FROM ({RawStream()(src)}) AS __wp_s", tx, params=params, writing=t.name)
        data = self.relation(rw.sql, params).to_arrow_table()
        width = data.num_columns - len(bounds)
        if width > len(node.cols):
            raise PgError("42601", "INSERT has more expressions than target columns")
        if width < len(node.cols):
            raise PgError("42601", "INSERT has more target columns than expressions")
        rows = pa.table(
            {f"__val_{k}": data.column(j) for k, j in enumerate(sources)}
            | {n: data.column(n) for k, sub in enumerate(subs) for n in array_assign.subscript_columns(sub, k)}
        )
        out = {n: coerce_text(t.column(n), data.column(j), self.date_order, self.text_out) for n, j in plain.items()}  # type: ignore[arg-type]
        out |= {c.name: arr for c, arr in self._subscripted(t, subs, rows)}
        name = f"__wp_ins_{id(data)}"
        self._register(name, pa.table({n: out[n] for n in names}))
        new = copy.copy(node)
        new.cols = tuple(ast.ResTarget(name=n) for n in names)
        new.selectStmt = ast.SelectStmt(
            targetList=(ast.ResTarget(val=ast.ColumnRef(fields=(ast.A_Star(),))),),
            fromClause=(ast.RangeVar(relname=name, inh=True, relpersistence="p"),),
            op=enums.SetOperation.SETOP_NONE,
        )
        return new, {(None, name): UserTable(f"SELECT * FROM {name}", {n: t.column(n).type for n in names})}  # type: ignore[union-attr]

    def _subscripted(self, t: Table, subs: Sequence[array_assign.Subscript], rows: pa.Table, base: pa.Table | None = None) -> list[tuple[Column, pa.Array]]:
        """The new values of the columns assigned by subscript (in order of assignment),
        from ``rows``' selected subscripts and values; each column's old value from
        ``base`` (UPDATE: the target rows), else NULL (INSERT)."""
        out: dict[str, tuple[Column, list[Any]]] = {}
        for k, sub in enumerate(subs):
            c = t.column(sub.column)
            assert c is not None
            if sub.column not in out:
                old = (base or rows).column(c.physical).to_pylist() if base is not None or c.physical in rows.column_names else [None] * rows.num_rows
                out[sub.column] = (c, old)
            current = out[sub.column][1]
            if sub.path:
                paths, expect_array = array_assign.jsonb_path(sub, [rows.column(n) for n in array_assign.subscript_columns(sub, k)])
                values = coerce_text(c, rows.column(f"__val_{k}"), self.date_order, self.text_out).to_pylist()
                for i, path in enumerate(paths):
                    current[i] = jsonb_edit.set_element(current[i], path, values[i], expect_array)
                continue
            target = c if sub.is_slice else dataclasses.replace(c, type=dataclasses.replace(c.type, is_array=False))
            try:
                values = coerce_text(target, rows.column(f"__val_{k}"), self.date_order, self.text_out).to_pylist()
            except PgError as e:
                if e.sqlstate == "42804" and not sub.is_slice:
                    shown = e.message.partition(" but expression is of type ")[2]
                    raise PgError("42804", f'subscripted assignment to "{c.name}" requires type {target.type.sql_name()} but expression is of type {shown}', hint=e.hint) from None
                raise
            lows, highs = rows.column(f"__lo_{k}").to_pylist(), rows.column(f"__hi_{k}").to_pylist()
            for i in range(rows.num_rows):
                current[i] = array_assign.assign(current[i], sub, lows[i], highs[i], values[i])
        return [(c, pa.array(v, type=c.type.arrow)) for c, v in out.values()]

    def delete(self, tx: Transaction, node: ast.DeleteStmt, params: list[Any]) -> Iterator[Outcome]:
        self._release()
        with_sql = _read_only_with(node.withClause, "DELETE")
        if isinstance(node.whereClause, ast.CurrentOfExpr):
            raise unsupported("DELETE … WHERE CURRENT OF")
        if node.usingClause and returning(node):  # (RETURNING * includes the USING list's columns)
            raise unsupported("DELETE … USING … RETURNING")
        tx.check_publishable(sequences.write_target(tx, node.relation, sequences.CHANGE), "delete")
        if getattr(params, "literal_date_order", None) is not None:
            prepared_datestyle.check_write(node, params, [c.type for c in tx.table(qualified(node.relation)).columns])
        done = self.points.write(tx, node, params, "DELETE") if not with_sql else None
        if done is not None:
            yield done
            return
        t = sequences.write_target(tx, node.relation, sequences.CHANGE)
        alias = node.relation.alias.aliasname if node.relation.alias else node.relation.relname
        sql = f'{with_sql}SELECT "{alias}".* FROM {TARGET} AS "{alias}"'
        no_lateral(node.usingClause, "DELETE … USING")
        if node.usingClause:
            sql += ", " + ", ".join(RawStream()(f) for f in node.usingClause)
        if node.whereClause is not None:
            sql += " WHERE " + RawStream()(node.whereClause)
        old = self._targets(tx, t, sql, params)
        keep = [RID] + [c.physical for c in t.columns] + ([partitions.LEAF] if t.partition_key is not None else [])
        n = tx.apply_delete(t, old.select(keep)) if old.num_rows else 0
        if returning(node):
            yield self._returning(tx, t, node.relation, returning(node), _named(t, old.select(keep)), params, f"DELETE {n}", with_sql)
        else:
            yield Done(f"DELETE {n}")

    def _targets(self, tx: Transaction, t: Table, pg_sql: str, params: list[Any], extra: dict[tuple[str | None, str], str | UserTable] | None = None) -> pa.Table:
        """Target rows (``_rid`` + columns under physical names, ``__new_*`` values)."""
        q = tx.snapshot_query(t, with_rid=True, sql_types=True)
        for n, tbl in q.arrow.items():
            self._register(n, tbl)
        rw = self.rewritten(pg_sql, tx, {(None, TARGET): _typed(q.sql, t), **(extra or {})}, params, writing=t.name)
        _enum_assignments(tx.catalog(), t, [(oc.name.removeprefix("__new_"), oc) for oc in rw.columns or () if oc.name.startswith("__new_")])
        data = self.relation(rw.sql, params).to_arrow_table()
        # A row joined to several FROM rows is updated once, as in PostgreSQL.
        if data.num_rows and pc.count_distinct(data.column(RID)).as_py() != data.num_rows:
            first = pa.table({"r": data.column(RID), "i": pa.array(np.arange(data.num_rows))}).group_by("r").aggregate([("i", "min")])
            data = data.take(np.sort(first.column("i_min").to_numpy()))
        names = {c.name: c.physical for c in t.columns}
        if data.num_rows > 1 and t.partition_key is not None:  # (partition after partition, each a scan)
            pos = {leaf.oid: i for i, leaf in enumerate(partitions.leaves(tx.catalog(), t))}
            order = pa.array([pos[o] for o in data.column(partitions.LEAF).to_pylist()], pa.int64())
            data = data.take(pc.sort_indices(pa.table({"p": order, "r": data.column(RID)}), sort_keys=[("p", "ascending"), ("r", "ascending")]))
        elif data.num_rows > 1:  # (a sequential scan's order, as PostgreSQL writes and streams the rows)
            data = data.take(pc.sort_indices(data.column(RID)))
        return data.rename_columns([names.get(c, c) if not c.startswith("__new_") else c for c in data.column_names])

    def _returning(self, tx: Transaction, t: Table, rv: ast.RangeVar, targets: Any, rows: pa.Table, params: list[Any], tag: str, with_sql: str = "") -> Rows:
        _returning_reads_its_target(targets, t, with_sql)
        name = f"__wp_ret_{id(rows)}"
        rows = rows.drop_columns([c for c in (RID, partitions.LEAF) if c in rows.column_names])
        self._register(name, rows)
        alias = rv.alias.aliasname if rv.alias else rv.relname
        sel = ", ".join(RawStream()(x) for x in targets)
        rw = self.rewritten(f'{with_sql}SELECT {sel} FROM {TARGET} AS "{alias}"', tx, {(None, TARGET): _typed(f"SELECT * FROM {name}", t)}, params)
        # The statement's parameters only if the RETURNING list uses them (DuckDB refuses
        # arguments a query does not take: ``… WHERE id = $1 RETURNING a`` would fail).
        rel = self.relation(rw.sql, params if "$" in sel + with_sql else [])
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

    def target_source(self, tx: Transaction, t: Table) -> tuple[str, dict[tuple[str | None, str], str | UserTable]]:
        """The name a statement reads ``t``'s rows under (``_rid`` with its columns, at the
        snapshot), and that name's source for :meth:`rewritten`."""
        q = tx.snapshot_query(t, with_rid=True, sql_types=True)
        for n, tbl in q.arrow.items():
            self._register(n, tbl)
        return TARGET, {(None, TARGET): _typed(q.sql, t)}

    def alter_column_types(self, tx: Transaction, table: str, cmds: list[ast.AlterTableCmd], typer: Callable[[ast.TypeName], str]) -> None:
        """ALTER COLUMN … TYPE: the new values and the rewrite (sql/alter_type.py)."""
        self._release()
        alter_type.alter(self, tx, table, cmds, typer)

    # -- COPY (sql/copy_statement.py) ----------------------------------------------------
    def copy(self, tx: Transaction, node: ast.CopyStmt, params: list[Any]) -> Outcome:

        self._release()
        fmt, opts = copy_statement.format_and_options(node)
        if node.is_from:
            return copy_statement.copy_in(self, self.ex, tx, node, fmt, opts)
        if node.query is not None:
            rw = self.rewritten(RawStream()(node.query), tx, params=params)
            rel = self.relation(rw.sql, params, rw.dropped_params)
            columns = result_columns(rel, rw, self.tables_of(tx, rw))
        else:
            t = sequences.write_target(tx, node.relation, sequences.COPY_FROM)
            if t.partition_key is not None:
                raise PgError("42809", f'cannot copy from partitioned table "{t.name}"', hint="Try the COPY (SELECT ...) TO variant.")
            cols = copy_statement.copy_columns(t, node)
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
            source = result_batches(rel, self.ex)
        return copy_statement.copy_out(source, columns, fmt, opts, self.ex)

    # -- parameters (sql/param_recv.py: they need no engine state) -------------------------
    decode_params = staticmethod(param_recv.decode_params)


def _returning_reads_its_target(targets: Any, t: Table, with_sql: str) -> None:
    """A subquery in RETURNING that reads the statement's own table (or a CTE of its WITH)
    is 0A000: PostgreSQL's reads it as it was before the statement, the proxy's query would
    see the statement's own rows."""
    names = {t.name}
    if with_sql:
        names |= {cte.ctename for cte in parse_sql(with_sql + "SELECT 1")[0].stmt.withClause.ctes}
    for node in all_nodes(targets):
        if isinstance(node, ast.SubLink):
            for rv in all_nodes(node.subselect):
                if isinstance(rv, ast.RangeVar) and rv.relname in names:
                    raise unsupported(f'a subquery in RETURNING reading "{rv.relname}" (PostgreSQL\'s sees it as before the statement)')


def _read_only_with(clause: ast.WithClause | None, verb: str) -> str:
    """``WITH c AS (SELECT …) UPDATE/DELETE …``: the CTEs' text, put before the query that
    finds the target rows (and their new values). A CTE that writes (INSERT/UPDATE/DELETE
    … RETURNING) is 0A000, as is one the RETURNING list would need."""
    if clause is None:
        return ""
    for cte in clause.ctes or ():
        if not isinstance(cte.ctequery, ast.SelectStmt):
            raise unsupported(f"a data-modifying WITH in {verb}")
    return "WITH " + RawStream()(clause) + " "  # (the clause's text has no WITH, RECURSIVE if so)


def _typed(sql: str, t: Table, cat: Catalog | None = None) -> UserTable:
    """A user table's SQL with its columns' declared types, for the rewriter."""
    key = {"primary_key": t.primary_key, "key_table": t.oid} if t.primary_key else {}
    if t.partition_key is None:
        return UserTable(sql, {c.name: c.type for c in t.columns}, oid=t.oid, **key)
    return UserTable(
        sql,
        {c.name: c.type for c in t.columns},
        **key,
        partitioned=True,
        tableoid_sql=None if cat is None else lambda col: partitions.tableoid_sql(cat, t, col),
    )


def tx_rows_since(tx: Transaction, t: Table, n: int) -> pa.Table:
    """The last ``n`` rows this transaction wrote to ``t`` (for INSERT … RETURNING)."""
    if t.partition_key is not None:  # (its rows went to its partitions, in this order)
        rows = tx.routed_rows
        assert rows is not None and rows.num_rows == n
        return _named(t, rows.select([c.physical for c in t.columns]))
    rows = tx.own_tail(t.oid, n)
    return _named(t, rows.select([RID] + [c.physical for c in t.columns]))


def _stored(t: Table, rows: pa.Table, keep: list[str]) -> pa.Table:
    """Updated rows (``keep``: ``_rid`` and the columns' physical names) with each value as
    the lake stores it, which is what RETURNING shows: a float8 result assigned to a float4
    column is that float4."""
    cols = {c.physical: c for c in t.columns}
    return pa.table([conform(rows.column(k), cols[k]) if k in cols else rows.column(k) for k in keep], names=keep)


def _enum_assignments(cat: Catalog, t: Table, assigned: Sequence[tuple[str, OutputColumn]]) -> None:
    """42804 for a value assigned to an enum column (or from one to another column) that is
    not of that enum, nor an untyped literal the column's input reads: PostgreSQL has no
    assignment cast to or from an enum but the I/O conversion to a string type."""
    for name, oc in assigned:
        col = t.column(name)
        if col is None or oc.unknown or oc.type_oid is None:
            continue
        if col.type.is_enum and not col.type.domain:
            if oc.enum == col.type.bare:
                continue
        elif oc.enum is None or (col.type.base.name in ("text", "varchar", "bpchar") and not col.type.is_array and oc.enum is not None and not oc.enum.is_array):
            continue
        shown = format_type(oc.type_oid, None) if oc.enum is None else _enum_shown(cat, oc.enum)
        target = _enum_shown(cat, col.type) if col.type.is_enum else dataclasses.replace(col.type, typmod=-1).sql_name()
        raise PgError(
            "42804",
            f'column "{name}" is of type {target} but expression is of type {shown}',
            hint="You will need to rewrite or cast the expression.",
        )


def _enum_shown(cat: Catalog, ct: ColumnType) -> str:
    en = cat.enum_of(ct)
    return ct.sql_name() if en is None else shown_type(en) + ("[]" if ct.is_array else "")


def _conformed(t: Table, data: pa.Table) -> pa.Table:
    """Proposed rows in the table's storage form (missing columns NULL), under the columns'
    names, as the lake would store them: keys compare as stored."""
    arrays = []
    for c in t.columns:
        if c.name in data.column_names:
            arrays.append(conform(data.column(c.name), c))
        else:
            arrays.append(pa.nulls(data.num_rows, c.type.arrow))
    return pa.Table.from_arrays(arrays, names=[c.name for c in t.columns])


def _generated_named(tx: Transaction, t: Table, data: pa.Table) -> pa.Table:
    """Proposed rows under the columns' names with the generated columns computed (an
    ON CONFLICT arbiter may be one of them)."""
    if not any(c.generation is not None for c in t.columns):
        return data
    physical = {c.name: c.physical for c in t.columns}
    computed = tx.with_generated(t, data.rename_columns([physical.get(n, n) for n in data.column_names]))
    return _named(t, computed)


def _named(t: Table, rows: pa.Table) -> pa.Table:
    names = {c.physical: c.name for c in t.columns}
    return rows.rename_columns([names.get(c, c) for c in rows.column_names])
