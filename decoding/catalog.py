"""The catalog: schemas, tables, publications — immutable values, versioned by CSN.

Decoding needs the table definition that was valid where a change sits in the log, and a
snapshot read at CSN ``S`` needs the schema of ``S``. So the catalog is an immutable value and
every committed DDL produces a new version keyed by its CSN; :class:`CatalogHistory` answers
"the catalog at S". DDL travels through the change log as :data:`CatalogOp` dicts, the same
ops the live server applies, so replaying the log rebuilds exactly the same history.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from collections.abc import Sequence as Seq
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, TypeVar

import pyarrow as pa

from decoding.errors import PgError
from decoding.pgtypes import ColumnType, composite_type, enum_type

#: Hidden row id: the identity of a row across updates (PostgreSQL's ctid plays this part).
#: Every table has one, so tables with no primary key are stored and versioned the same way.
RID = "_rid"

#: First OID handed to user objects, as in PostgreSQL (FirstNormalObjectId).
FIRST_USER_OID = 16384
PUBLIC_SCHEMA_OID = 2200
REPLICA_IDENTITIES = ("d", "f", "i", "n")  # DEFAULT, FULL, USING INDEX, NOTHING

CatalogOp = dict[str, Any]
#: Ops that drop the object their ``oid`` names (its ownership goes with it).
_DROPS = frozenset({"drop_table", "drop_sequence", "drop_view", "drop_function", "drop_domain", "drop_enum", "drop_composite"})


#: The types a sequence counts in, and their ranges.
SEQUENCE_TYPES = {"int2": (-(2**15), 2**15 - 1), "int4": (-(2**31), 2**31 - 1), "int8": (-(2**63), 2**63 - 1)}


@dataclass(frozen=True, slots=True)
class Sequence:
    """A sequence's definition (``pg_sequence`` plus its ``pg_class`` row and OWNED BY).
    Its counter is not here: it is not transactional (lake/sequences.py). ``generation``
    counts the RESTARTs: a counter of an older one is superseded, at ``restart`` (None:
    ``start``) unused — so a rolled-back RESTART leaves the counter as it was."""

    oid: int
    schema: str
    name: str
    type: str = "int8"
    start: int = 1
    increment: int = 1
    min: int = 1
    max: int = 2**63 - 1
    cache: int = 1
    cycle: bool = False
    #: OWNED BY: (table oid, attnum), dropped with the column or the table.
    owned_by: tuple[int, int] | None = None
    generation: int = 0
    restart: int | None = None
    #: The sequence of an identity column (PostgreSQL's internal dependency, ``i``).
    identity: bool = False

    @property
    def qualified_name(self) -> str:
        return f"{self.schema}.{self.name}"

    def to_json(self) -> dict[str, Any]:
        return {
            "oid": self.oid,
            "schema": self.schema,
            "name": self.name,
            "type": self.type,
            "start": self.start,
            "increment": self.increment,
            "min": self.min,
            "max": self.max,
            "cache": self.cache,
            "cycle": self.cycle,
            "owned_by": list(self.owned_by) if self.owned_by is not None else None,
            "generation": self.generation,
            "restart": self.restart,
            "identity": self.identity,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Sequence:
        owned = d.get("owned_by")
        return cls(
            d["oid"], d["schema"], d["name"], d["type"], d["start"], d["increment"], d["min"],
            d["max"], d["cache"], d["cycle"], (owned[0], owned[1]) if owned else None,
            d.get("generation", 0), d.get("restart"), d.get("identity", False),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class ColumnDefault:
    """A column's DEFAULT expression (PostgreSQL's ``pg_attrdef`` row), kept as the text
    PostgreSQL prints for it: ``expr`` is ``pg_get_expr(adbin, adrelid)``, ``pretty`` the
    same with ``pretty`` true (psql's ``\\d``). ``expr`` is also what the SQL layer runs: it
    is valid SQL of the column's type (the coercion to the column is implicit in it, as in
    PostgreSQL's cooked expression). ``volatile``: evaluated once per row (random(),
    clock_timestamp(), nextval()) rather than once per statement. ``oid``: the pg_attrdef
    row's. ``styled``: its text prints a date/time constant, whose form follows DateStyle
    and IntervalStyle in PostgreSQL."""

    expr: str
    pretty: str
    volatile: bool = False
    oid: int = 0
    styled: bool = False
    #: The sequence a ``nextval('s'::regclass)`` in it names (PostgreSQL keeps its OID: the
    #: texts hold :data:`SEQUENCE_MARK` where the sequence's name is printed, as regclass
    #: prints it when the expression is printed or run).
    sequence: int = 0

    def to_json(self) -> dict[str, Any]:
        d = {
            "expr": self.expr,
            "pretty": self.pretty,
            "volatile": self.volatile,
            "oid": self.oid,
            "styled": self.styled,
        }
        if self.sequence:
            d["sequence"] = self.sequence
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ColumnDefault:
        return cls(d["expr"], d["pretty"], d["volatile"], d["oid"], d.get("styled", False), d.get("sequence", 0))


@dataclass(frozen=True, slots=True)
class Generation:
    """A stored generated column's expression (``GENERATED ALWAYS AS (…) STORED``), kept
    as a CHECK constraint is (:class:`Check`): ``expr`` and ``pretty`` are what
    ``pg_get_expr(adbin, adrelid)`` prints, ``duck`` the DuckDB expression the lake
    computes the column with (of the column's type), all three naming columns by
    :data:`CHECK_MARK`-delimited attnums; ``attnums`` the columns it reads; ``oid`` its
    pg_attrdef row's."""

    expr: str
    pretty: str
    duck: str
    attnums: tuple[int, ...]
    oid: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"expr": self.expr, "pretty": self.pretty, "duck": self.duck, "attnums": list(self.attnums), "oid": self.oid}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Generation:
        return cls(d["expr"], d["pretty"], d["duck"], tuple(d["attnums"]), d["oid"])


#: Where a default's text names its sequence (see :attr:`ColumnDefault.sequence`).
SEQUENCE_MARK = "\x01"
#: Where a column default's text names the column's own type, an enum (or an array of
#: one): printed as format_type prints it in the session (pg_dump's empty search_path
#: qualifies it), run by its qualified name (``'sad'::`` + TYPE_MARK).
TYPE_MARK = "\x03"


@dataclass(frozen=True, slots=True)
class Column:
    attnum: int
    name: str
    type: ColumnType
    not_null: bool = False
    #: Name in Parquet/Arrow; differs from ``name`` only when a dropped column of the same
    #: name still has data in old files.
    physical: str = ""
    default: ColumnDefault | None = None
    #: Added by ADD COLUMN with a non-volatile default (``pg_attribute.atthasmissing``:
    #: PostgreSQL keeps that value for the rows that existed, instead of rewriting them).
    has_missing: bool = False
    #: ``a`` GENERATED ALWAYS / ``d`` BY DEFAULT AS IDENTITY (``pg_attribute.attidentity``);
    #: ``default`` is then its sequence's nextval, which PostgreSQL keeps out of pg_attrdef.
    identity: str = ""
    #: ``pg_attribute.attstorage`` set by ALTER COLUMN … SET STORAGE ("": the type's own).
    #: The lake stores every value the same way; the setting is kept for clients.
    storage: str = ""
    #: A stored generated column's expression (``attgenerated = 's'``; its pg_attrdef
    #: row): the lake computes the column on every write from the row's other columns.
    generation: Generation | None = None

    @property
    def generated(self) -> str:
        """``pg_attribute.attgenerated``: ``s`` for a stored generated column, else ""."""
        return "s" if self.generation is not None else ""

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "attnum": self.attnum,
            "name": self.name,
            "type": self.type.to_json(),
            "not_null": self.not_null,
            "physical": self.physical,
        }
        if self.default is not None:
            d["default"] = self.default.to_json()
        if self.has_missing:
            d["has_missing"] = True
        if self.identity:
            d["identity"] = self.identity
        if self.storage:
            d["storage"] = self.storage
        if self.generation is not None:
            d["generation"] = self.generation.to_json()
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Column:
        dflt = d.get("default")
        return cls(
            d["attnum"],
            d["name"],
            ColumnType.from_json(d["type"]),
            d["not_null"],
            d["physical"],
            ColumnDefault.from_json(dflt) if dflt is not None else None,
            d.get("has_missing", False),
            d.get("identity", ""),
            d.get("storage", ""),
            Generation.from_json(d["generation"]) if "generation" in d else None,
        )


@dataclass(frozen=True, slots=True)
class IndexExpr:
    """An index's key expression (``lower(name)``) or its WHERE predicate, as
    pg_get_indexdef prints it: ``expr`` plain and ``pretty``, columns named by
    :data:`CHECK_MARK`-delimited attnums (renames follow them); ``attnums`` the columns it
    reads; ``name`` the index column's (``lower``, or ``expr``, as FigureColname gives it)."""

    expr: str
    pretty: str
    attnums: tuple[int, ...]
    name: str = "expr"
    #: The expression's type (``pg_attribute.atttypid`` of the index column).
    type_oid: int = 25
    #: A unique index's predicate as the DuckDB expression the lake filters rows with
    #: (marked as ``expr``); "" where the lake never computes it.
    duck: str = ""

    def to_json(self) -> list[Any]:
        return [self.expr, self.pretty, list(self.attnums), self.name, self.type_oid, self.duck]

    @classmethod
    def from_json(cls, d: Seq[Any]) -> IndexExpr:
        return cls(d[0], d[1], tuple(d[2]), d[3], d[4], d[5] if len(d) > 5 else "")


@dataclass(frozen=True, slots=True)
class Index:
    """An index other than the primary key's (``pg_class`` relkind ``i`` and its
    ``pg_index`` row): btree or hash over plain columns, kept by their names (renamed with
    them). ``unique`` ones are enforced by the lake (23505 naming the index);
    ``constraint`` is the OID of the UNIQUE constraint it was made for (``pg_constraint``
    contype ``u``), 0 for a plain CREATE INDEX. ``options`` holds PostgreSQL's ``indoption``
    bits per key column (1 DESC, 2 NULLS FIRST); ``include`` the INCLUDE columns."""

    oid: int
    name: str
    columns: tuple[str, ...]
    unique: bool = False
    nulls_not_distinct: bool = False
    method: str = "btree"
    options: tuple[int, ...] = ()
    include: tuple[str, ...] = ()
    constraint: int = 0
    #: Per key column, the operator class named where it is not the type's default
    #: (``varchar_pattern_ops``; "" for the default); empty when every one is.
    opclasses: tuple[str, ...] = ()
    #: Per key column, its expression where it is one (its entry in ``columns`` is then
    #: ""); empty when every key column is a plain column.
    expressions: tuple[IndexExpr | None, ...] = ()
    #: A partial index's WHERE.
    predicate: IndexExpr | None = None

    def to_json(self) -> dict[str, Any]:
        d = {
            "oid": self.oid,
            "name": self.name,
            "columns": list(self.columns),
            "unique": self.unique,
            "nulls_not_distinct": self.nulls_not_distinct,
            "method": self.method,
            "options": list(self.options),
            "include": list(self.include),
            "constraint": self.constraint,
        }
        if any(self.opclasses):
            d["opclasses"] = list(self.opclasses)
        if any(self.expressions):
            d["expressions"] = [None if e is None else e.to_json() for e in self.expressions]
        if self.predicate is not None:
            d["predicate"] = self.predicate.to_json()
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Index:
        return cls(
            d["oid"], d["name"], tuple(d["columns"]), d["unique"], d["nulls_not_distinct"],
            d["method"], tuple(d["options"]), tuple(d["include"]), d["constraint"], tuple(d.get("opclasses", ())),
            tuple(None if e is None else IndexExpr.from_json(e) for e in d.get("expressions", ())),
            None if d.get("predicate") is None else IndexExpr.from_json(d["predicate"]),
        )  # fmt: skip

    @property
    def attnums_read(self) -> frozenset[int]:
        """The columns its expressions and predicate read."""
        exprs = [e for e in (*self.expressions, self.predicate) if e is not None]
        return frozenset(a for e in exprs for a in e.attnums)


#: ``pg_constraint.confupdtype``/``confdeltype`` letters and the SQL they stand for.
FK_ACTIONS = {"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}


@dataclass(frozen=True, slots=True)
class ForeignKey:
    """A FOREIGN KEY constraint, kept by its referencing table (``pg_constraint`` contype
    ``f``). The referencing ``columns`` are names (renamed with them, as indexes' are);
    the referenced side is the table's OID and its columns' attnums, so renaming the
    referenced table or its columns changes nothing here. ``ref_index`` is the referenced
    unique index the constraint was made against (``conindid``; 0: the primary key's).
    ``on_update``/``on_delete`` are :data:`FK_ACTIONS` letters; ``set_columns`` the
    column list of ``ON DELETE SET NULL/SET DEFAULT (…)`` (empty: all of ``columns``).
    ``validated`` is False after ``ADD CONSTRAINT … NOT VALID`` until VALIDATE.
    ``deferrable`` / ``initially_deferred``: ``condeferrable`` / ``condeferred`` (its
    check then runs at commit, or at SET CONSTRAINTS … IMMEDIATE)."""

    oid: int
    name: str
    columns: tuple[str, ...]
    ref_oid: int
    ref_attnums: tuple[int, ...]
    ref_index: int = 0
    on_update: str = "a"
    on_delete: str = "a"
    match_full: bool = False
    set_columns: tuple[str, ...] = ()
    validated: bool = True
    deferrable: bool = False
    initially_deferred: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "oid": self.oid,
            "name": self.name,
            "columns": list(self.columns),
            "ref_oid": self.ref_oid,
            "ref_attnums": list(self.ref_attnums),
            "ref_index": self.ref_index,
            "on_update": self.on_update,
            "on_delete": self.on_delete,
            "match_full": self.match_full,
            "set_columns": list(self.set_columns),
            "validated": self.validated,
            **({"deferrable": True, "initially_deferred": self.initially_deferred} if self.deferrable else {}),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ForeignKey:
        return cls(
            d["oid"], d["name"], tuple(d["columns"]), d["ref_oid"], tuple(d["ref_attnums"]),
            d["ref_index"], d["on_update"], d["on_delete"], d["match_full"],
            tuple(d["set_columns"]), d["validated"], d.get("deferrable", False),
            d.get("initially_deferred", False),
        )  # fmt: skip

    def ref_columns(self, ref: Table) -> tuple[str, ...]:
        """The referenced columns' current names in ``ref`` (the referenced table)."""
        by_num = {c.attnum: c.name for c in ref.columns}
        return tuple(by_num[n] for n in self.ref_attnums)


#: Where a CHECK constraint's texts name a column: ``CHECK_MARK + attnum + CHECK_MARK``
#: (PostgreSQL keeps a Var by attnum, so a renamed column prints under its new name).
CHECK_MARK = "\x02"


@dataclass(frozen=True, slots=True)
class Check:
    """A CHECK constraint (``pg_constraint`` contype ``c``), kept by its table. ``expr`` and
    ``pretty`` are what ``pg_get_constraintdef`` prints inside ``CHECK (…)`` (plain and
    pretty, PostgreSQL's cooked and deparsed form); ``duck`` the same condition as a DuckDB
    expression the lake evaluates over written rows. All three name columns by
    :data:`CHECK_MARK`-delimited attnums, filled in with the current (quoted) names or
    physical names when used. ``attnums`` is ``conkey`` (first appearance order);
    ``validated`` is False after ``ADD … NOT VALID`` until VALIDATE; ``no_inherit`` is
    ``connoinherit``."""

    oid: int
    name: str
    expr: str
    pretty: str
    duck: str
    attnums: tuple[int, ...]
    validated: bool = True
    no_inherit: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "oid": self.oid,
            "name": self.name,
            "expr": self.expr,
            "pretty": self.pretty,
            "duck": self.duck,
            "attnums": list(self.attnums),
            "validated": self.validated,
            "no_inherit": self.no_inherit,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Check:
        return cls(
            d["oid"], d["name"], d["expr"], d["pretty"], d["duck"], tuple(d["attnums"]),
            d["validated"], d["no_inherit"],
        )  # fmt: skip

    @staticmethod
    def fill(text: str, names: Mapping[int, str]) -> str:
        return fill_marks(text, names)


@dataclass(frozen=True, slots=True)
class Domain:
    """A domain (``pg_type`` typtype ``d``): a base type with constraints, checked wherever a
    value is coerced to it (a cast, a write to a column of the domain). ``base`` is the
    underlying base type (a domain over a domain has that one's base here and its OID in
    ``parent``: PostgreSQL checks the constraints of the whole chain). ``checks`` name the
    value by the :data:`CHECK_MARK` mark of attnum 0 (``VALUE``). ``array_oid`` is the
    array type PostgreSQL makes with it (``_name``)."""

    oid: int
    array_oid: int
    schema: str
    name: str
    base: ColumnType
    parent: int = 0
    not_null: bool = False
    default: ColumnDefault | None = None
    checks: tuple[Check, ...] = ()

    @property
    def qualified_name(self) -> str:
        return f"{self.schema}.{self.name}"

    @property
    def column_type(self) -> ColumnType:
        """The type of a column declared with this domain."""
        return replace(self.base, domain=self.oid)

    def to_json(self) -> dict[str, Any]:
        return {
            "oid": self.oid,
            "array_oid": self.array_oid,
            "schema": self.schema,
            "name": self.name,
            "base": self.base.to_json(),
            "parent": self.parent,
            "not_null": self.not_null,
            "default": None if self.default is None else self.default.to_json(),
            "checks": [c.to_json() for c in self.checks],
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Domain:
        return cls(
            d["oid"], d["array_oid"], d["schema"], d["name"], ColumnType.from_json(d["base"]), d["parent"],
            d["not_null"], None if d["default"] is None else ColumnDefault.from_json(d["default"]),
            tuple(Check.from_json(c) for c in d["checks"]),
        )  # fmt: skip


#: A domain's checks name the value as the column of attnum 0 (``VALUE``).
DOMAIN_VALUE = 0


@dataclass(frozen=True, slots=True)
class EnumLabel:
    """A ``pg_enum`` row: the label, its place in the enum's order (a float4, as
    ``ALTER TYPE … ADD VALUE … BEFORE`` puts a label between two), and its OID."""

    oid: int
    label: str
    sortorder: float


@dataclass(frozen=True, slots=True)
class EnumType:
    """A user enum (``pg_type`` typtype ``e``, CREATE TYPE … AS ENUM). Its values are
    stored as their labels (:func:`decoding.pgtypes.enum_type`): a label once added is
    never renamed or removed while the type exists (the proxy refuses RENAME VALUE), so a
    stored label is valid under every later version of the type. ``labels`` are in sort
    order."""

    oid: int
    array_oid: int
    schema: str
    name: str
    labels: tuple[EnumLabel, ...] = ()

    @property
    def qualified_name(self) -> str:
        return f"{self.schema}.{self.name}"

    @property
    def column_type(self) -> ColumnType:
        """The type of a column declared with this enum."""
        return ColumnType(enum_type(self.oid, self.array_oid))

    @property
    def names(self) -> tuple[str, ...]:
        """The labels in the enum's order."""
        return tuple(x.label for x in self.labels)

    def to_json(self) -> dict[str, Any]:
        return {
            "oid": self.oid,
            "array_oid": self.array_oid,
            "schema": self.schema,
            "name": self.name,
            "labels": [[x.oid, x.label, x.sortorder] for x in self.labels],
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> EnumType:
        labels = tuple(EnumLabel(o, lab, so) for o, lab, so in d["labels"])
        return cls(d["oid"], d["array_oid"], d["schema"], d["name"], labels)


@dataclass(frozen=True, slots=True)
class CompositeType:
    """A stand-alone composite type (``CREATE TYPE … AS (…)``: ``pg_type`` typtype ``c``
    with a ``pg_class`` row of relkind ``c`` at ``relid``). Its values are rows in a
    query; no lake column stores one. ``attributes`` are (name, type) in attnum order; a
    nested composite's type is :func:`decoding.pgtypes.composite_type`'s."""

    oid: int
    array_oid: int
    relid: int
    schema: str
    name: str
    attributes: tuple[tuple[str, ColumnType], ...] = ()

    @property
    def qualified_name(self) -> str:
        return f"{self.schema}.{self.name}"

    @property
    def column_type(self) -> ColumnType:
        return ColumnType(composite_type(self.oid, self.array_oid))

    @property
    def live_attributes(self) -> tuple[tuple[str, ColumnType], ...]:
        """The attributes not dropped (a dropped one keeps its attnum, named as
        PostgreSQL names it: ``........pg.dropped.N........``)."""
        return tuple(a for a in self.attributes if not is_dropped_attribute(a[0]))

    def to_json(self) -> dict[str, Any]:
        return {
            "oid": self.oid,
            "array_oid": self.array_oid,
            "relid": self.relid,
            "schema": self.schema,
            "name": self.name,
            "attributes": [[n, t.to_json()] for n, t in self.attributes],
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CompositeType:
        attrs = tuple((n, ColumnType.from_json(t)) for n, t in d["attributes"])
        return cls(d["oid"], d["array_oid"], d["relid"], d["schema"], d["name"], attrs)


def dropped_attribute(attnum: int) -> str:
    """The name a dropped attribute keeps (pg_attribute's, for its attnum)."""
    return f"........pg.dropped.{attnum}........"


def is_dropped_attribute(name: str) -> bool:
    return name.startswith("........pg.dropped.")


def fill_marks(text: str, names: Mapping[int, str]) -> str:
    """``text`` with each :data:`CHECK_MARK` column mark replaced by ``names[attnum]``."""
    parts = text.split(CHECK_MARK)
    return "".join(names[int(p)] if i % 2 else p for i, p in enumerate(parts))


#: A range bound's datum: ``("v", text)`` a value in its type's output form, ``("min",)`` /
#: ``("max",)`` MINVALUE / MAXVALUE.
RangeDatum = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PartitionExpr:
    """A partition key expression of one column: ``op`` ``+``/``-``/``*`` with an integer
    ``const``, or the function ``abs``/``lower``/``upper``; ``type`` its result's SQL type."""

    op: str
    attnum: int
    type: str
    const: int = 0

    def to_json(self) -> list[Any]:
        return [self.op, self.attnum, self.type, self.const]

    @classmethod
    def from_json(cls, d: Seq[Any]) -> PartitionExpr:
        return cls(d[0], d[1], d[2], d[3])


@dataclass(frozen=True, slots=True)
class PartitionKey:
    """``PARTITION BY`` of a partitioned table (``pg_partitioned_table``): ``strategy``
    ``r`` range, ``l`` list, ``h`` hash; ``attnums`` the key's columns, in order, 0 for
    an expression (the next of ``exprs``, as ``partattrs`` and ``partexprs``)."""

    strategy: str
    attnums: tuple[int, ...]
    exprs: tuple[PartitionExpr, ...] = ()

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"strategy": self.strategy, "attnums": list(self.attnums)}
        if self.exprs:
            d["exprs"] = [e.to_json() for e in self.exprs]
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> PartitionKey:
        return cls(d["strategy"], tuple(d["attnums"]), tuple(PartitionExpr.from_json(e) for e in d.get("exprs", ())))


@dataclass(frozen=True, slots=True)
class PartitionBound:
    """``PARTITION OF parent FOR VALUES …`` (``pg_class.relpartbound``, ``pg_inherits``):
    ``kind`` ``l`` list (``values``: each in its type's output form, None for NULL),
    ``r`` range (``lower``/``upper``: :data:`RangeDatum`), ``h`` hash, ``d`` DEFAULT."""

    parent: int
    kind: str
    values: tuple[str | None, ...] = ()
    lower: tuple[RangeDatum, ...] = ()
    upper: tuple[RangeDatum, ...] = ()
    modulus: int = 0
    remainder: int = 0
    #: Made a partition by ATTACH PARTITION (its own primary key constraint then stays
    #: ``connoinherit``, as PostgreSQL leaves it), not created by PARTITION OF.
    attached: bool = False

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"parent": self.parent, "kind": self.kind}
        if self.attached:
            d["attached"] = True
        if self.kind == "l":
            d["values"] = list(self.values)
        elif self.kind == "r":
            d["lower"], d["upper"] = [list(x) for x in self.lower], [list(x) for x in self.upper]
        elif self.kind == "h":
            d["modulus"], d["remainder"] = self.modulus, self.remainder
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> PartitionBound:
        return cls(
            d["parent"],
            d["kind"],
            tuple(d.get("values", ())),
            tuple(tuple(x) for x in d.get("lower", ())),
            tuple(tuple(x) for x in d.get("upper", ())),
            d.get("modulus", 0),
            d.get("remainder", 0),
            d.get("attached", False),
        )


@dataclass(frozen=True, slots=True)
class UniqueKey:
    """A set of columns no two live rows of a table may share (the primary key or a unique
    index), as the lake checks it: ``name`` is the index 23505 names."""

    name: str
    columns: tuple[str, ...]
    nulls_not_distinct: bool = True  # (a primary key's columns are never null)
    #: A partial unique index's WHERE: only rows it holds for are checked (its DuckDB form,
    #: columns by :data:`CHECK_MARK`-delimited attnums; "" for none).
    where: str = ""
    where_attnums: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Table:
    oid: int
    schema: str
    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    replica_identity: str = "d"
    identity_index: tuple[str, ...] = ()
    #: Physical names ever used, so a re-added column never reads a dropped one's data.
    used_physical: frozenset[str] = frozenset()
    next_attnum: int = 1
    #: Storage parameters (``fillfactor=70``) as pg_class.reloptions shows them.
    reloptions: tuple[str, ...] = ()
    #: Indexes besides the primary key's, in creation order.
    indexes: tuple[Index, ...] = ()
    #: The index REPLICA IDENTITY USING INDEX names (its columns: ``identity_index``).
    identity_index_name: str = ""
    #: The primary key's index name once it is no longer ``<name>_pkey`` (a RENAME of the
    #: table keeps it, as in PostgreSQL); "" while it is.
    pkey_index: str = ""
    #: FOREIGN KEY constraints of this table (as the referencing side), in creation order.
    foreign_keys: tuple[ForeignKey, ...] = ()
    #: CHECK constraints, in creation order.
    checks: tuple[Check, ...] = ()
    #: ``PARTITION BY``: a partitioned table (relkind ``p``) holds no rows of its own.
    partition_key: PartitionKey | None = None
    #: ``PARTITION OF``: this table is a partition of ``partition_bound.parent``.
    partition_bound: PartitionBound | None = None

    @property
    def qualified_name(self) -> str:
        return f"{self.schema}.{self.name}"

    @property
    def relkind(self) -> str:
        return "p" if self.partition_key is not None else "r"

    def column_by_attnum(self, attnum: int) -> Column:
        return next(c for c in self.columns if c.attnum == attnum)

    def column(self, name: str) -> Column | None:
        for c in self.columns:
            if c.name == name:
                return c
        return None

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def pkey_name(self) -> str:
        """The primary key's index (and constraint) name, as PostgreSQL chooses it."""
        return self.pkey_index or pkey_name(self.name)

    def unique_keys(self) -> list[UniqueKey]:
        """What the lake checks on every write: the primary key, then each unique index."""
        out = [UniqueKey(self.pkey_name, self.primary_key)] if self.primary_key else []
        out += [
            UniqueKey(ix.name, ix.columns, ix.nulls_not_distinct, *((ix.predicate.duck, ix.predicate.attnums) if ix.predicate else ()))
            for ix in self.indexes
            if ix.unique
        ]
        return out

    def index(self, name: str) -> Index | None:
        return next((ix for ix in self.indexes if ix.name == name), None)

    def identity_columns(self) -> tuple[str, ...]:
        """Columns that identify a row to a subscriber (the old-key of Update/Delete)."""
        if self.replica_identity == "d":
            return self.primary_key
        if self.replica_identity == "i":
            return self.identity_index
        if self.replica_identity == "f":
            return tuple(self.column_names)
        return ()

    def arrow_schema(self, with_rid: bool = True) -> pa.Schema:
        fields = [pa.field(c.physical, c.type.arrow, nullable=not c.not_null) for c in self.columns]
        if with_rid:
            fields.insert(0, pa.field(RID, pa.int64(), nullable=False))
        return pa.schema(fields)

    def to_json(self) -> dict[str, Any]:
        return {
            "oid": self.oid,
            "schema": self.schema,
            "name": self.name,
            "columns": [c.to_json() for c in self.columns],
            "primary_key": list(self.primary_key),
            "replica_identity": self.replica_identity,
            "identity_index": list(self.identity_index),
            "used_physical": sorted(self.used_physical),
            "next_attnum": self.next_attnum,
            **({"reloptions": list(self.reloptions)} if self.reloptions else {}),
            **({"indexes": [ix.to_json() for ix in self.indexes]} if self.indexes else {}),
            **({"identity_index_name": self.identity_index_name} if self.identity_index_name else {}),
            **({"pkey_index": self.pkey_index} if self.pkey_index else {}),
            **({"foreign_keys": [fk.to_json() for fk in self.foreign_keys]} if self.foreign_keys else {}),
            **({"checks": [c.to_json() for c in self.checks]} if self.checks else {}),
            **({"partition_key": self.partition_key.to_json()} if self.partition_key else {}),
            **({"partition_bound": self.partition_bound.to_json()} if self.partition_bound else {}),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Table:
        return cls(
            d["oid"],
            d["schema"],
            d["name"],
            tuple(Column.from_json(c) for c in d["columns"]),
            tuple(d["primary_key"]),
            d["replica_identity"],
            tuple(d["identity_index"]),
            frozenset(d["used_physical"]),
            d["next_attnum"],
            tuple(d.get("reloptions", ())),
            tuple(Index.from_json(ix) for ix in d.get("indexes", ())),
            d.get("identity_index_name", ""),
            d.get("pkey_index", ""),
            tuple(ForeignKey.from_json(fk) for fk in d.get("foreign_keys", ())),
            tuple(Check.from_json(c) for c in d.get("checks", ())),
            PartitionKey.from_json(d["partition_key"]) if "partition_key" in d else None,
            PartitionBound.from_json(d["partition_bound"]) if "partition_bound" in d else None,
        )


def pkey_name(table: str) -> str:
    """``<table>_pkey``, cut to 63 bytes as PostgreSQL's ChooseRelationName cuts it."""
    return choose_name(table, "", "pkey")


def choose_name(name1: str, name2: str, label: str) -> str:
    """PostgreSQL's makeObjectName: ``name1_name2_label`` within NAMEDATALEN-1 bytes, the
    longer of the two names cut first."""
    overhead = len(label.encode()) + 1 + (1 if name2 else 0)
    n1, n2 = name1.encode(), name2.encode()
    while len(n1) + len(n2) + overhead > 63:
        if len(n1) > len(n2):
            n1 = n1[:-1]
        else:
            n2 = n2[:-1]
    a, b = n1.decode(errors="ignore"), n2.decode(errors="ignore")
    return "_".join(x for x in (a, b, label) if x)


def name_addition(columns: Iterable[str]) -> str:
    """ChooseIndexNameAddition / ChooseForeignKeyConstraintNameAddition: the column names
    joined by ``_``, stopping before the text reaches NAMEDATALEN-1 bytes."""
    addition = ""
    for c in columns:
        part = c if not addition else f"_{c}"
        if len((addition + part).encode()) >= 63:
            break
        addition += part
    return addition


@dataclass(frozen=True, slots=True)
class ViewColumn:
    """A view's output column as ``pg_attribute`` shows it: any PostgreSQL type (a view's
    columns need not be of a type the lake stores), by OID and modifier."""

    name: str
    type_oid: int
    typmod: int = -1


@dataclass(frozen=True, slots=True)
class View:
    """A plain view (``pg_class`` relkind ``v`` and its ``_RETURN`` rule). ``query`` is the
    SELECT the rewriter puts in its place, with every relation it reads named as it was
    bound at creation (schema-qualified), so a later object of the same name elsewhere on
    the search path does not change it; ``definition`` is the text shown for it
    (``pg_get_viewdef``). The SQL layer parses both; the catalog only keeps them.
    ``depends``: OIDs of the tables and views it reads (what DROP … RESTRICT checks)."""

    oid: int
    schema: str
    name: str
    query: str
    definition: str
    columns: tuple[ViewColumn, ...]
    depends: tuple[int, ...] = ()
    #: Its query expands rows of what it reads (``*``, ``t.*``, a whole-row ``t``): a
    #: column added to one of them would change its text's meaning (PostgreSQL expanded
    #: them at creation).
    expands: bool = True
    #: The tables whose primary key its query's GROUP BY rests on (a column grouped by
    #: functional dependency): PostgreSQL's pg_depend entry on the key's constraint.
    key_depends: tuple[int, ...] = ()

    @property
    def qualified_name(self) -> str:
        return f"{self.schema}.{self.name}"

    def to_json(self) -> dict[str, Any]:
        d = {
            "oid": self.oid,
            "schema": self.schema,
            "name": self.name,
            "query": self.query,
            "definition": self.definition,
            "columns": [[c.name, c.type_oid, c.typmod] for c in self.columns],
            "depends": list(self.depends),
            "expands": self.expands,
        }
        if self.key_depends:
            d["key_depends"] = list(self.key_depends)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> View:
        return cls(
            d["oid"], d["schema"], d["name"], d["query"], d["definition"],
            tuple(ViewColumn(n, o, m) for n, o, m in d["columns"]), tuple(d.get("depends", ())),
            d.get("expands", True), tuple(d.get("key_depends", ())),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class FunctionArg:
    """One parameter of a function (a ``pg_proc`` array slot): ``name`` '' when unnamed;
    ``mode`` as ``proargmodes`` (``i`` in, ``o`` out, ``b`` inout, ``v`` variadic, ``t``
    a RETURNS TABLE column); ``default`` the default's text as ``pg_get_expr`` prints it
    (also what runs for an omitted argument)."""

    name: str
    type_oid: int
    mode: str = "i"
    default: str | None = None

    @property
    def is_input(self) -> bool:
        return self.mode in ("i", "b", "v")


@dataclass(frozen=True, slots=True)
class Function:
    """A user function (``pg_proc``), LANGUAGE sql only. The catalog keeps its text: ``body``
    is ``prosrc`` (an ``AS '…'`` body, analysed when called, with the search path then);
    ``standard`` marks an SQL-standard body (``RETURN …`` / ``BEGIN ATOMIC … END``), kept in
    ``query`` as its statements with the names they read bound at creation, ``;``-separated,
    ``RETURN x`` as ``SELECT x``. The SQL layer parses both. ``depends``: the relations and
    functions an SQL-standard body uses (what DROP … RESTRICT checks; PostgreSQL tracks no
    dependencies of a quoted body)."""

    oid: int
    schema: str
    name: str
    args: tuple[FunctionArg, ...]
    rettype: int
    retset: bool = False
    volatility: str = "v"
    strict: bool = False
    body: str = ""
    standard: bool = False
    query: str = ""
    leakproof: bool = False
    cost: float = 100.0
    rows: float = 0.0
    parallel: str = "u"
    depends: tuple[int, ...] = ()

    @property
    def qualified_name(self) -> str:
        return f"{self.schema}.{self.name}"

    @property
    def input_args(self) -> tuple[FunctionArg, ...]:
        return tuple(a for a in self.args if a.is_input)

    @property
    def input_types(self) -> tuple[int, ...]:
        """``proargtypes``: what identifies the function beside its name."""
        return tuple(a.type_oid for a in self.args if a.is_input)

    def to_json(self) -> dict[str, Any]:
        return {
            "oid": self.oid,
            "schema": self.schema,
            "name": self.name,
            "args": [[a.name, a.type_oid, a.mode, a.default] for a in self.args],
            "rettype": self.rettype,
            "retset": self.retset,
            "volatility": self.volatility,
            "strict": self.strict,
            "body": self.body,
            "standard": self.standard,
            "query": self.query,
            "leakproof": self.leakproof,
            "cost": self.cost,
            "rows": self.rows,
            "parallel": self.parallel,
            "depends": list(self.depends),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Function:
        return cls(
            d["oid"], d["schema"], d["name"], tuple(FunctionArg(n, t, m, df) for n, t, m, df in d["args"]),
            d["rettype"], d["retset"], d["volatility"], d["strict"], d["body"], d["standard"], d["query"],
            d["leakproof"], d["cost"], d["rows"], d["parallel"], tuple(d["depends"]),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class RowFilterExpr:
    """A publication's row filter for one table (``pg_publication_rel.prqual``) as the SQL
    layer cooked it: ``expr`` is what ``pg_get_expr`` prints, ``duck`` the same condition
    as a DuckDB expression the decoder evaluates over a change's rows, both naming columns
    by :data:`CHECK_MARK`-delimited attnums (so a renamed column follows); ``attnums`` the
    columns it reads. A filter kept before filters were cooked (a bare text in the catalog)
    has that text in ``expr`` and no ``duck``: decoding refuses it rather than guess."""

    expr: str
    duck: str
    attnums: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"expr": self.expr, "duck": self.duck, "attnums": list(self.attnums)}

    @classmethod
    def from_json(cls, d: str | Mapping[str, Any]) -> RowFilterExpr:
        if isinstance(d, str):
            return cls(d, "", ())
        return cls(d["expr"], d["duck"], tuple(d["attnums"]))

    def columns(self, t: Table) -> set[str]:
        """The names in ``t`` of the columns the filter reads."""
        return {c.name for c in t.columns if c.attnum in self.attnums}


@dataclass(frozen=True, slots=True)
class PublicationTable:
    table_oid: int
    columns: tuple[str, ...] | None = None
    row_filter: RowFilterExpr | None = None


#: A session's temporary tables live in a schema of this prefix (``pg_temp_<pid>``).
TEMP_SCHEMA_PREFIX = "pg_temp_"


def is_temp_schema(schema: str) -> bool:
    return schema.startswith(TEMP_SCHEMA_PREFIX)


@dataclass(frozen=True, slots=True)
class Publication:
    oid: int
    name: str
    all_tables: bool = False
    insert: bool = True
    update: bool = True
    delete: bool = True
    truncate: bool = True
    via_root: bool = False
    tables: tuple[PublicationTable, ...] = ()
    schemas: tuple[str, ...] = ()
    owner: str = "postgres"

    def includes(self, table: Table, ancestors: Seq[Table] = ()) -> bool:
        """Whether changes of ``table`` are published: named, in a named schema, all
        tables, or (a partition) one of its ``ancestors`` is published, as pgoutput's
        ``get_rel_sync_entry`` finds it."""
        if is_temp_schema(table.schema):  # (PostgreSQL never logs nor publishes them)
            return False
        return self.all_tables or any(
            t.schema in self.schemas or any(pt.table_oid == t.oid for pt in self.tables) for t in (table, *ancestors)
        )

    def entry(self, table_oid: int) -> PublicationTable | None:
        for pt in self.tables:
            if pt.table_oid == table_oid:
                return pt
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "oid": self.oid,
            "name": self.name,
            "all_tables": self.all_tables,
            "ops": [self.insert, self.update, self.delete, self.truncate],
            "via_root": self.via_root,
            "tables": [
                [
                    pt.table_oid,
                    list(pt.columns) if pt.columns is not None else None,
                    pt.row_filter.to_json() if pt.row_filter is not None else None,
                ]
                for pt in self.tables
            ],
            "schemas": list(self.schemas),
            "owner": self.owner,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Publication:
        ins, upd, dele, trunc = d["ops"]
        return cls(
            d["oid"],
            d["name"],
            d["all_tables"],
            ins,
            upd,
            dele,
            trunc,
            d["via_root"],
            tuple(
                PublicationTable(
                    oid,
                    tuple(cols) if cols is not None else None,
                    RowFilterExpr.from_json(flt) if flt is not None else None,
                )
                for oid, cols, flt in d["tables"]
            ),
            tuple(d["schemas"]),
            d.get("owner", "postgres"),
        )


CatalogError = PgError


@dataclass(frozen=True, slots=True)
class AclItem:
    """One entry of an ``aclitem[]``: what ``grantee`` (a role's OID, 0 for PUBLIC) holds
    from ``grantor``, as PostgreSQL's privilege letters in its order (``arwdDxt``, ``rwU``,
    ``UC``); ``grantable`` the letters it holds WITH GRANT OPTION."""

    grantee: int
    grantor: int
    privileges: str
    grantable: str = ""

    def to_json(self) -> list[Any]:
        return [self.grantee, self.grantor, self.privileges, self.grantable]

    @classmethod
    def from_json(cls, d: Seq[Any]) -> AclItem:
        return cls(int(d[0]), int(d[1]), str(d[2]), str(d[3]))


@dataclass(frozen=True, slots=True)
class Ownership:
    """Who owns a relation, schema or function and its ACL (``relowner``/``relacl``,
    ``nspowner``/``nspacl``, ``proowner``/``proacl``); ``acl`` None is PostgreSQL's NULL:
    the owner holds every privilege, nobody else any (a schema named public aside: see
    the SQL layer). ``columns``: a table's column privileges (``pg_attribute.attacl``),
    by attnum, only the columns whose ACL is not NULL (empty)."""

    owner: int
    acl: tuple[AclItem, ...] | None = None
    columns: tuple[tuple[int, tuple[AclItem, ...]], ...] = ()

    def column_acl(self, attnum: int) -> tuple[AclItem, ...]:
        return next((acl for num, acl in self.columns if num == attnum), ())

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"owner": self.owner}
        if self.acl is not None:
            out["acl"] = [a.to_json() for a in self.acl]
        if self.columns:
            out["columns"] = [[num, [a.to_json() for a in acl]] for num, acl in self.columns]
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Ownership:
        acl = d.get("acl")
        columns = tuple((int(num), tuple(AclItem.from_json(a) for a in items)) for num, items in d.get("columns", ()))
        return cls(int(d["owner"]), tuple(AclItem.from_json(a) for a in acl) if acl is not None else None, columns)


def _frozen(d: Mapping[Any, Any]) -> Mapping[Any, Any]:
    return MappingProxyType(dict(d))


@dataclass(frozen=True, slots=True)
class Catalog:
    schemas: Mapping[str, int] = field(
        default_factory=lambda: _frozen({"public": PUBLIC_SCHEMA_OID})
    )
    tables: Mapping[int, Table] = field(default_factory=lambda: _frozen({}))
    publications: Mapping[str, Publication] = field(default_factory=lambda: _frozen({}))
    next_oid: int = FIRST_USER_OID
    sequences: Mapping[int, Sequence] = field(default_factory=lambda: _frozen({}))
    views: Mapping[int, View] = field(default_factory=lambda: _frozen({}))
    functions: Mapping[int, Function] = field(default_factory=lambda: _frozen({}))
    #: COMMENT ON texts (``pg_description``) by ``"classoid:objoid:objsubid"``.
    comments: Mapping[str, str] = field(default_factory=lambda: _frozen({}))
    #: Owners and ACLs of relations and schemas, by OID; an object not here belongs to
    #: the database's owner (the first role) with the default ACL.
    owners: Mapping[int, Ownership] = field(default_factory=lambda: _frozen({}))
    #: ALTER DEFAULT PRIVILEGES (``pg_default_acl``) by ``"role:namespace:objtype"``
    #: (namespace 0: every schema; objtype ``r`` tables, ``S`` sequences, ``n`` schemas).
    default_acls: Mapping[str, tuple[AclItem, ...]] = field(default_factory=lambda: _frozen({}))
    #: Domains (CREATE DOMAIN) by OID.
    domains: Mapping[int, Domain] = field(default_factory=lambda: _frozen({}))
    #: Enums (CREATE TYPE … AS ENUM) by OID.
    enums: Mapping[int, EnumType] = field(default_factory=lambda: _frozen({}))
    #: Composite types (CREATE TYPE … AS (…)) by OID.
    composites: Mapping[int, CompositeType] = field(default_factory=lambda: _frozen({}))

    # -- lookups -------------------------------------------------------------------------
    def find_table(self, schema: str, name: str) -> Table | None:
        for t in self.tables.values():
            if t.schema == schema and t.name == name:
                return t
        return None

    def find_sequence(self, schema: str, name: str) -> Sequence | None:
        for s in self.sequences.values():
            if s.schema == schema and s.name == name:
                return s
        return None

    def find_domain(self, schema: str, name: str) -> Domain | None:
        return _named(self.domains.values(), schema, name)

    def resolve_domain(self, names: Seq[str], search_path: Iterable[str]) -> Domain | None:
        """The domain a type name (``d`` or ``schema.d``) names, ``d`` looked up along
        ``search_path``; None when it names none."""
        return _resolved(self.domains.values(), names, search_path)

    def find_enum(self, schema: str, name: str) -> EnumType | None:
        return _named(self.enums.values(), schema, name)

    def resolve_enum(self, names: Seq[str], search_path: Iterable[str]) -> EnumType | None:
        """The enum a type name (``e`` or ``schema.e``) names, as :meth:`resolve_domain`."""
        return _resolved(self.enums.values(), names, search_path)

    def find_composite(self, schema: str, name: str) -> CompositeType | None:
        return _named(self.composites.values(), schema, name)

    def resolve_composite(self, names: Seq[str], search_path: Iterable[str]) -> CompositeType | None:
        """The stand-alone composite type ``names`` names along ``search_path``."""
        return _resolved(self.composites.values(), names, search_path)

    def enum_of(self, ctype: ColumnType) -> EnumType | None:
        """The enum whose values (or arrays of them) a column type holds, through its
        domain if it has one; None for other types."""
        return self.enums.get(ctype.base.oid) if ctype.is_enum else None

    def domain_chain(self, oid: int) -> list[Domain]:
        """The domain ``oid`` and the domains it is over, outermost first (empty: not a
        domain)."""
        out: list[Domain] = []
        while oid and oid in self.domains:
            d = self.domains[oid]
            out.append(d)
            oid = d.parent
        return out

    def find_view(self, schema: str, name: str) -> View | None:
        for v in self.views.values():
            if v.schema == schema and v.name == name:
                return v
        return None

    def find_index(self, schema: str, name: str) -> tuple[Table, Index | None] | None:
        """The table whose index is ``name`` and that index (None for the primary key's)."""
        for t in self.tables.values():
            if t.schema != schema:
                continue
            if t.primary_key and t.pkey_name == name:
                return t, None
            ix = t.index(name)
            if ix is not None:
                return t, ix
        return None

    def relation_exists(self, schema: str, name: str) -> bool:
        """A table, a sequence, a view or an index of that name (they share pg_class's
        names)."""
        return (
            self.find_table(schema, name) is not None
            or self.find_sequence(schema, name) is not None
            or self.find_view(schema, name) is not None
            or self.find_index(schema, name) is not None
            or self.find_composite(schema, name) is not None
        )

    def dependent_views(self, oid: int) -> list[View]:
        """The views that read relation ``oid``, directly or through other views, each
        after the views it reads (the order a CASCADE drops them in reverse)."""
        out: list[View] = []
        todo = [oid]
        while todo:
            o = todo.pop(0)
            for v in sorted(self.views.values(), key=lambda v: v.oid):
                if o in v.depends and v not in out:
                    out.append(v)
                    todo.append(v.oid)
        return out

    def referencing(self, oid: int) -> list[tuple[Table, ForeignKey]]:
        """The foreign keys that reference table ``oid`` (its own self-references too),
        with their tables, in OID order."""
        return [
            (t, fk)
            for t in sorted(self.tables.values(), key=lambda t: t.oid)
            for fk in t.foreign_keys
            if fk.ref_oid == oid
        ]

    def resolve_sequence(self, name: str, search_path: Iterable[str] = ("public",)) -> Sequence:
        schema, dot, rel = name.rpartition(".")
        candidates = [schema] if dot else list(search_path)
        for s in candidates:
            found = self.find_sequence(s, rel)
            if found is not None:
                return found
            if self.find_table(s, rel) is not None or self.find_view(s, rel) is not None:
                raise CatalogError("42809", f'"{rel}" is not a sequence')
        raise CatalogError("42P01", f'relation "{name}" does not exist')

    def resolve_table(self, name: str, search_path: Iterable[str] = ("public",)) -> Table:
        """Resolve ``schema.name`` or an unqualified name along ``search_path``."""
        schema, dot, rel = name.rpartition(".")
        candidates = [schema] if dot else list(search_path)
        for s in candidates:
            t = self.find_table(s, rel)
            if t is not None:
                return t
            if self.find_view(s, rel) is not None:  # (a view is never written or altered as a table)
                raise CatalogError("42809", f'"{rel}" is not a table')
        raise CatalogError("42P01", f'relation "{name}" does not exist')

    def publications_for(self, table: Table) -> list[Publication]:
        up = self.ancestors(table)
        return [p for p in self.publications.values() if p.includes(table, up)]

    def partitions(self, oid: int) -> list[Table]:
        """The partitions attached to the partitioned table ``oid`` (any order)."""
        return [t for t in self.tables.values() if t.partition_bound is not None and t.partition_bound.parent == oid]

    def inheritors(self, table: Table, *, depth_first: bool = False) -> list[Table]:
        """Every partition under ``table``, level by level, each level in OID order
        (``find_all_inheritors`` without the table itself); ``depth_first``: each child
        followed by its own, as ALTER TABLE's recursion visits them."""
        children = sorted(self.partitions(table.oid), key=lambda x: x.oid)
        if depth_first:
            return [x for c in children for x in (c, *self.inheritors(c, depth_first=True))]
        out: list[Table] = []
        level = children
        while level:
            out += level
            level = [p for t in level for p in sorted(self.partitions(t.oid), key=lambda x: x.oid)]
        return out

    def ancestors(self, table: Table) -> list[Table]:
        """A partition's parent, its parent's parent, … up to the root (``[]`` for a table
        that is no partition): ``pg_partition_ancestors`` without the table itself."""
        out: list[Table] = []
        t = table
        while t.partition_bound is not None:
            parent = self.tables.get(t.partition_bound.parent)
            if parent is None:
                break
            out.append(parent)
            t = parent
        return out

    # -- changes -------------------------------------------------------------------------
    def apply(self, op: CatalogOp) -> Catalog:
        """Return the catalog after ``op``; the op was validated when it was made."""
        out = self._apply(op)
        gone = op.get("oid") if op["op"] in _DROPS else None
        if op["op"] == "drop_schema":
            gone = self.schemas.get(op["name"])
            stale = [k for k in out.default_acls if k.split(":")[1] == str(gone)]
            if stale:  # (a schema's default privileges go with it)
                out = replace(out, default_acls=_frozen({k: v for k, v in out.default_acls.items() if k not in stale}))
        if gone is not None and gone in out.owners:
            owners = dict(out.owners)
            del owners[gone]
            out = replace(out, owners=_frozen(owners))
        return out

    def _apply(self, op: CatalogOp) -> Catalog:
        kind = op["op"]
        if kind == "put_schema":
            schemas = dict(self.schemas)
            schemas[op["name"]] = op["oid"]
            return replace(
                self, schemas=_frozen(schemas), next_oid=max(self.next_oid, op["oid"] + 1)
            )
        if kind == "drop_schema":
            schemas = dict(self.schemas)
            schemas.pop(op["name"], None)
            return replace(self, schemas=_frozen(schemas))
        if kind == "put_table":
            t = Table.from_json(op["table"])
            tables = dict(self.tables)
            tables[t.oid] = t
            return replace(self, tables=_frozen(tables), next_oid=max(self.next_oid, t.oid + 1))
        if kind == "drop_table":
            tables = dict(self.tables)
            tables.pop(op["oid"], None)
            pubs = {
                n: replace(p, tables=tuple(pt for pt in p.tables if pt.table_oid != op["oid"]))
                for n, p in self.publications.items()
            }
            return replace(self, tables=_frozen(tables), publications=_frozen(pubs))
        if kind == "put_publication":
            p = Publication.from_json(op["publication"])
            pubs = dict(self.publications)
            pubs[p.name] = p
            return replace(self, publications=_frozen(pubs), next_oid=max(self.next_oid, p.oid + 1))
        if kind == "drop_publication":
            pubs = dict(self.publications)
            pubs.pop(op["name"], None)
            return replace(self, publications=_frozen(pubs))
        if kind == "put_sequence":
            sq = Sequence.from_json(op["sequence"])
            seqs = dict(self.sequences)
            seqs[sq.oid] = sq
            return replace(self, sequences=_frozen(seqs), next_oid=max(self.next_oid, sq.oid + 1))
        if kind == "drop_sequence":
            seqs = dict(self.sequences)
            seqs.pop(op["oid"], None)
            return replace(self, sequences=_frozen(seqs))
        if kind == "put_view":
            v = View.from_json(op["view"])
            views = dict(self.views)
            views[v.oid] = v
            return replace(self, views=_frozen(views), next_oid=max(self.next_oid, v.oid + 1))
        if kind == "drop_view":
            views = dict(self.views)
            views.pop(op["oid"], None)
            return replace(self, views=_frozen(views))
        if kind == "put_function":
            fn = Function.from_json(op["function"])
            fns = dict(self.functions)
            fns[fn.oid] = fn
            return replace(self, functions=_frozen(fns), next_oid=max(self.next_oid, fn.oid + 1))
        if kind == "drop_function":
            fns = dict(self.functions)
            fns.pop(op["oid"], None)
            return replace(self, functions=_frozen(fns))
        if kind == "put_domain":
            dom = Domain.from_json(op["domain"])
            doms = dict(self.domains)
            doms[dom.oid] = dom
            return replace(self, domains=_frozen(doms), next_oid=max(self.next_oid, dom.array_oid + 1, dom.oid + 1))
        if kind == "drop_domain":
            doms = dict(self.domains)
            doms.pop(op["oid"], None)
            return replace(self, domains=_frozen(doms))
        if kind == "put_enum":
            en = EnumType.from_json(op["enum"])
            ens = dict(self.enums)
            ens[en.oid] = en
            top = max([en.oid, en.array_oid, *(x.oid for x in en.labels)])
            return replace(self, enums=_frozen(ens), next_oid=max(self.next_oid, top + 1))
        if kind == "drop_enum":
            ens = dict(self.enums)
            ens.pop(op["oid"], None)
            return replace(self, enums=_frozen(ens))
        if kind == "put_composite":
            ct = CompositeType.from_json(op["composite"])
            cts = dict(self.composites)
            cts[ct.oid] = ct
            return replace(self, composites=_frozen(cts), next_oid=max(self.next_oid, ct.oid + 1, ct.array_oid + 1, ct.relid + 1))
        if kind == "drop_composite":
            cts = dict(self.composites)
            cts.pop(op["oid"], None)
            return replace(self, composites=_frozen(cts))
        if kind == "put_default_acl":
            defaults = dict(self.default_acls)
            if op["acl"] is None:
                defaults.pop(op["key"], None)
            else:
                defaults[op["key"]] = tuple(AclItem.from_json(a) for a in op["acl"])
            return replace(self, default_acls=_frozen(defaults))
        if kind == "put_ownership":
            owners = dict(self.owners)
            owners[op["oid"]] = Ownership.from_json(op["ownership"])
            return replace(self, owners=_frozen(owners))
        if kind == "put_comment":
            comments = dict(self.comments)
            if op["text"] is None:
                comments.pop(op["key"], None)
            else:
                comments[op["key"]] = op["text"]
            return replace(self, comments=_frozen(comments))
        raise ValueError(f"unknown catalog op {kind!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "schemas": dict(self.schemas),
            "tables": [t.to_json() for t in self.tables.values()],
            "publications": [p.to_json() for p in self.publications.values()],
            "next_oid": self.next_oid,
            "sequences": [sq.to_json() for sq in self.sequences.values()],
            "views": [v.to_json() for v in self.views.values()],
            "functions": [fn.to_json() for fn in self.functions.values()],
            **({"comments": dict(self.comments)} if self.comments else {}),
            **({"owners": {str(k): v.to_json() for k, v in self.owners.items()}} if self.owners else {}),
            **({"default_acls": {k: [a.to_json() for a in v] for k, v in self.default_acls.items()}} if self.default_acls else {}),
            **({"domains": [d.to_json() for d in self.domains.values()]} if self.domains else {}),
            **({"enums": [e.to_json() for e in self.enums.values()]} if self.enums else {}),
            **({"composites": [c.to_json() for c in self.composites.values()]} if self.composites else {}),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Catalog:
        tables = (Table.from_json(t) for t in d["tables"])
        pubs = (Publication.from_json(p) for p in d["publications"])
        seqs = (Sequence.from_json(sq) for sq in d.get("sequences", ()))
        views = (View.from_json(v) for v in d.get("views", ()))
        fns = (Function.from_json(fn) for fn in d.get("functions", ()))
        return cls(
            _frozen(d["schemas"]),
            _frozen({t.oid: t for t in tables}),
            _frozen({p.name: p for p in pubs}),
            d["next_oid"],
            _frozen({sq.oid: sq for sq in seqs}),
            _frozen({v.oid: v for v in views}),
            _frozen({fn.oid: fn for fn in fns}),
            _frozen(d.get("comments", {})),
            _frozen({int(k): Ownership.from_json(v) for k, v in d.get("owners", {}).items()}),
            _frozen({k: tuple(AclItem.from_json(a) for a in v) for k, v in d.get("default_acls", {}).items()}),
            _frozen({dom.oid: dom for dom in (Domain.from_json(x) for x in d.get("domains", ()))}),
            _frozen({en.oid: en for en in (EnumType.from_json(x) for x in d.get("enums", ()))}),
            _frozen({c.oid: c for c in (CompositeType.from_json(x) for x in d.get("composites", ()))}),
        )


_UserType = TypeVar("_UserType", Domain, EnumType, CompositeType)


def _named(types: Iterable[_UserType], schema: str, name: str) -> _UserType | None:
    return next((t for t in types if t.schema == schema and t.name == name), None)


def _resolved(types: Iterable[_UserType], names: Seq[str], search_path: Iterable[str]) -> _UserType | None:
    """The user type ``names`` (``t`` or ``schema.t``) names, ``t`` looked up along
    ``search_path``."""
    if not names or len(names) > 2:
        return None
    found = list(types)
    for schema in [names[0]] if len(names) == 2 else search_path:
        t = _named(found, schema, names[-1])
        if t is not None:
            return t
    return None


class CatalogHistory:
    """Catalog versions by CSN: ``at(S)`` is the catalog every snapshot ``S`` reads with.

    Versions are appended in CSN order; the lake guarantees it by letting one DDL
    transaction at a time hold the catalog lock until its commit is written.
    """

    def __init__(self, versions: list[tuple[int, Catalog]] | None = None) -> None:
        self._csns: list[int] = []
        self._cats: list[Catalog] = []
        for csn, cat in versions or [(0, Catalog())]:
            self._csns.append(csn)
            self._cats.append(cat)

    def at(self, csn: int) -> Catalog:
        i = bisect.bisect_right(self._csns, csn) - 1
        return self._cats[max(i, 0)]

    @property
    def latest(self) -> Catalog:
        return self._cats[-1]

    @property
    def latest_csn(self) -> int:
        return self._csns[-1]

    def add(self, csn: int, ops: Iterable[CatalogOp]) -> Catalog:
        if csn < self._csns[-1]:
            raise ValueError(f"catalog version {csn} is older than {self._csns[-1]}")
        cat = self._cats[-1]
        for op in ops:
            cat = cat.apply(op)
        if csn == self._csns[-1]:
            self._cats[-1] = cat
        else:
            self._csns.append(csn)
            self._cats.append(cat)
        return cat

    def versions(self) -> list[tuple[int, Catalog]]:
        return list(zip(self._csns, self._cats, strict=True))

    def table_oids_from(self, csn: int) -> set[int]:
        """The tables of every version a snapshot at ``csn`` or later reads with: their
        files are still needed, whatever older versions a decoder keeps besides."""
        i = max(bisect.bisect_right(self._csns, csn) - 1, 0)
        return {oid for cat in self._cats[i:] for oid in cat.tables}

    def forget_before(self, csn: int) -> None:
        """Drop versions nobody can ask for any more (the newest one ≤ csn stays): ``csn``
        must be at most the oldest snapshot in use *and* the oldest catalog a decoder still
        needs (a slot's catalog hold, PostgreSQL's ``catalog_xmin``)."""
        i = bisect.bisect_right(self._csns, csn) - 1
        if i > 0:
            del self._csns[:i]
            del self._cats[:i]

    def to_json(self) -> list[Any]:
        return [[c, cat.to_json()] for c, cat in zip(self._csns, self._cats, strict=True)]

    @classmethod
    def from_json(cls, data: list[Any]) -> CatalogHistory:
        return cls([(c, Catalog.from_json(d)) for c, d in data])
