"""The relations in reach at a point of a statement, as parse analysis keeps them
(PostgreSQL's ParseState namespace): each FROM item's columns and types (:class:`Rel`),
nested by query level and FROM list (:class:`Scope`), with the WITH queries, WINDOW clauses
and merged USING columns of each level. The rewriter builds them; the modules it calls
(SQL functions' inlining, USING columns) read them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pglast import ast

from decoding.errors import PgError
from decoding.pgtypes import ColumnType
from walsender_proxy.sql import agg_levels, using_columns
from walsender_proxy.sql.expr_types import T

#: The one column of a SELECT that has none (``SELECT FROM t``, ``EXISTS (SELECT FROM …)``):
#: DuckDB needs a column, so the rewriter puts this one there and the engine drops it from
#: the rows a client sees.
NO_COLUMNS = "?no columns?"


@dataclass(frozen=True)
class ColumnGuard:
    """A table the current user may read some columns of only (SELECT granted on them,
    not on the table): a reference to another of its columns — by name, by ``t.*``,
    ``*`` or the whole row — is PostgreSQL's 42501 (ExecCheckRTEPerms)."""

    table: str
    readable: frozenset[str]
    #: Every column of the table, by its own name.
    columns: tuple[str, ...]
    #: The names FROM gave its columns (``t(x, y)``) → their own names.
    renamed: Mapping[str, str] | None = None

    def read(self, name: str) -> None:
        real = self.renamed.get(name, name) if self.renamed else name
        if real in self.columns and real not in self.readable:
            raise PgError("42501", f"permission denied for table {self.table}")

    def read_all(self) -> None:
        if any(c not in self.readable for c in self.columns):
            raise PgError("42501", f"permission denied for table {self.table}")


@dataclass
class Rel:
    #: (name, type) per column, None when unknown (a user table: the server knows them).
    columns: list[tuple[str, T | None]] | None
    #: A user table's declared column types, when the server gave them (casts use them).
    declared: Mapping[str, ColumnType] | None = None
    #: The user table (schema as written, name) whose columns these are, under their own
    #: names: RowDescription names it for a column selected as it is.
    source: tuple[str | None, str] | None = None
    #: A function in FROM returning a scalar under its own column name (json_array_elements'
    #: "value"): the relation's bare name stands for that column, not for a row.
    scalar_column: str | None = None
    #: An emulated catalog's own pg_class oid: its ``tableoid`` system column.
    tableoid: int | None = None
    #: A partitioned table's ``tableoid``: DuckDB SQL from its key columns, given how to
    #: refer to a column (see :func:`walsender_proxy.lake.partitions.tableoid_sql`).
    tableoid_sql: Callable[[Callable[[str], str]], str] | None = None
    #: A table's own column names where FROM renamed them (``t(x, y)``): its row type's
    #: field names, which ``row_to_json(t)`` prints.
    row_names: list[str] | None = None
    #: A view's columns (under ``source``): RowDescription names the view for a column
    #: selected as it is, though no declared type is known for it.
    view: bool = False
    #: Column privileges to check each reference against (None: the table's SELECT holds).
    guard: ColumnGuard | None = None
    #: A user table's primary key columns (under the names FROM gives them): GROUP BY all
    #: of them groups its other columns too (functional_grouping).
    primary_key: tuple[str, ...] = ()
    #: The OID of the table that key is of.
    key_table: int = 0

    def origin_names(self) -> Sequence[str] | None:
        """The columns RowDescription can name the source of (None: none)."""
        if self.source is None:
            return None
        if self.declared is not None:
            return list(self.declared)
        if self.view and self.columns is not None:
            return [n for n, _ in self.columns]
        return None


class Scope:
    def __init__(self, parent: Scope | None) -> None:
        self.parent = parent
        self.rels: dict[str, Rel] = {}
        self.order: list[str] = []
        self.ctes: dict[str, Rel] = {}
        #: The scope of a query level's FROM list (the scopes inside it add output columns).
        self.query = False
        #: The SELECT's aggregates see its rows in PostgreSQL's order (see _rows_in_order).
        self.rows_in_order = False
        #: The SELECT's WINDOW clause by name (what OVER w and OVER (w …) refer to).
        self.windows: dict[str, ast.WindowDef] = {}
        #: A barrier's FROM items beside the subquery it encloses (see lateral_refs).
        self.hidden: dict[str, Rel] | None = None
        #: The alias each (rewritten) FROM item was added under, by the item's id.
        self.item_alias: dict[int, str] = {}
        #: JOIN … USING columns whose sides' types differ, as PostgreSQL merges them.
        self.merged: dict[str, using_columns.Merged] = {}

    def windows_in_reach(self) -> dict[str, ast.WindowDef]:
        """The nearest WINDOW clause (a SELECT's ORDER BY sees its SELECT's windows from
        a scope of its own)."""
        s: Scope | None = self
        while s is not None and not s.windows:
            s = s.parent
        return s.windows if s is not None else {}

    def add(self, alias: str, rel: Rel) -> None:
        if alias in self.rels and not alias.startswith("*"):
            raise PgError("42712", f'table name "{alias}" specified more than once')
        self.rels[alias] = rel
        self.order.append(alias)

    def hide(self, aliases: Sequence[str], by: str) -> None:
        """Take the names of a join's items out of reach (their columns stay visible)."""
        for alias in aliases:
            if not alias.startswith("*"):
                hidden = f"*{by}*{alias}"
                self.rels[hidden] = self.rels.pop(alias)
                self.order[self.order.index(alias)] = hidden

    def cte(self, name: str) -> Rel | None:
        s: Scope | None = self
        while s is not None:
            if name in s.ctes:
                return s.ctes[name]
            s = s.parent
        return None

    def rel(self, alias: str) -> Rel | None:
        s: Scope | None = self
        while s is not None:
            if alias in s.rels:
                return s.rels[alias]
            s = s.parent
        return None

    def column(self, name: str) -> T | None:
        found = self.find(name)
        return found[1] if found else None

    def declared(self, names: Sequence[str]) -> ColumnType | None:
        """A user table column's declared type, by ``col`` or ``alias.col`` (None when the
        name is not one, or is ambiguous at its level)."""
        if len(names) == 2:
            rel = self.rel(names[0])
            return rel.declared.get(names[1]) if rel is not None and rel.declared else None
        s: Scope | None = self
        while s is not None:
            hits = []
            for alias in s.order:
                rel = s.rels[alias]
                if rel.declared is not None and names[0] in rel.declared:
                    hits.append(rel.declared[names[0]])
                elif rel.columns is not None and any(n == names[0] for n, _ in rel.columns):
                    return None
            if hits:
                return hits[0] if len(hits) == 1 else None
            s = s.parent
        return None

    def level(self, names: list[str]) -> agg_levels.Level:
        """Whether a column reference resolves in this query level or an outer one."""
        local = True
        s: Scope | None = self
        while s is not None:
            for alias in s.order:
                rel = s.rels[alias]
                if len(names) > 1:
                    hit = alias == names[-2]
                elif rel.declared is not None:
                    hit = names[0] in rel.declared
                elif rel.columns is not None:
                    hit = any(n == names[0] for n, _ in rel.columns)
                else:
                    return "unknown"
                if hit:
                    return "local" if local else "outer"
            if s.query:
                local = False
            s = s.parent
        return "unknown"

    def merged_column(self, name: str) -> using_columns.Merged | None:
        """The merged USING column an unqualified ``name`` refers to, when its join's sides
        have different types (using_columns.merged)."""
        s: Scope | None = self
        while s is not None:
            if name in s.merged:
                return s.merged[name]
            if any(s.rels[a].columns is None or any(n == name for n, _ in s.rels[a].columns or ()) for a in s.order):
                return None
            s = s.parent
        return None

    def guards(self) -> list[ColumnGuard]:
        """The column privileges of every relation in reach read by them."""
        out = []
        s: Scope | None = self
        while s is not None:
            out += [r.guard for r in s.rels.values() if r.guard is not None]
            s = s.parent
        return out

    def find_rel(self, name: str) -> Rel | None:
        """The relation an unqualified column name belongs to (as :meth:`find`)."""
        s: Scope | None = self
        while s is not None:
            for alias in s.order:
                rel = s.rels[alias]
                if rel.columns is not None and any(n == name for n, _ in rel.columns):
                    return rel
            if any(s.rels[a].columns is None for a in s.order):
                return None
            s = s.parent
        return None

    def find(self, name: str) -> tuple[str, T | None] | None:
        """(alias, type) of the relation an unqualified column name belongs to."""
        s: Scope | None = self
        while s is not None:
            for alias in s.order:
                cols = s.rels[alias].columns
                if cols is None:
                    continue
                for n, t in cols:
                    if n == name:
                        return alias, t
            if any(s.rels[a].columns is None for a in s.order):
                return None
            s = s.parent
        return None
