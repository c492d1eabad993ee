"""PostgreSQL types as the lake stores them.

Every column has a PostgreSQL type (what clients see: OID, name, text format) and an Arrow
type (what Parquet, DuckDB and Spark store). Keeping the mapping in one table means the SQL
server, the COPY encoder and pgoutput all agree on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import pyarrow as pa

from decoding.errors import PgError

#: Interval is kept as a struct because Parquet (and so Spark) has no Arrow
#: month-day-nano interval; the three parts are exactly PostgreSQL's own representation.
INTERVAL_ARROW = pa.struct(
    [("months", pa.int32()), ("days", pa.int32()), ("microseconds", pa.int64())]
)


@dataclass(frozen=True, slots=True)
class PgType:
    name: str  # canonical PostgreSQL name (pg_type.typname)
    oid: int
    array_oid: int
    typlen: int
    arrow: pa.DataType


_BASE: dict[str, PgType] = {
    t.name: t
    for t in (
        PgType("bool", 16, 1000, 1, pa.bool_()),
        PgType("int2", 21, 1005, 2, pa.int16()),
        PgType("int4", 23, 1007, 4, pa.int32()),
        PgType("int8", 20, 1016, 8, pa.int64()),
        PgType("float4", 700, 1021, 4, pa.float32()),
        PgType("float8", 701, 1022, 8, pa.float64()),
        # Unconstrained numeric has no fixed scale; its exact text is what survives.
        PgType("numeric", 1700, 1231, -1, pa.string()),
        PgType("text", 25, 1009, -1, pa.string()),
        PgType("varchar", 1043, 1015, -1, pa.string()),
        PgType("bpchar", 1042, 1014, -1, pa.string()),
        # (at most NAMEDATALEN - 1 = 63 bytes: longer input is cut, as namein cuts it)
        PgType("name", 19, 1003, 64, pa.string()),
        PgType("bytea", 17, 1001, -1, pa.binary()),
        PgType("date", 1082, 1182, 4, pa.date32()),
        PgType("time", 1083, 1183, 8, pa.time64("us")),
        PgType("timestamp", 1114, 1115, 8, pa.timestamp("us")),
        PgType("timestamptz", 1184, 1185, 8, pa.timestamp("us", tz="UTC")),
        PgType("interval", 1186, 1187, 16, INTERVAL_ARROW),
        PgType("uuid", 2950, 2951, 16, pa.string()),
        PgType("json", 114, 199, -1, pa.string()),
        PgType("jsonb", 3802, 3807, -1, pa.string()),
    )
}

_ALIASES = {
    "boolean": "bool",
    "smallint": "int2",
    "integer": "int4",
    "int": "int4",
    "bigint": "int8",
    "real": "float4",
    "double precision": "float8",
    "float": "float8",
    "decimal": "numeric",
    "character varying": "varchar",
    "character": "bpchar",
    "char": "bpchar",
    "timestamp without time zone": "timestamp",
    "timestamp with time zone": "timestamptz",
    "time without time zone": "time",
}

_TYPE_RE = re.compile(r"^\s*([a-z_][a-z0-9_ ]*?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*((?:\[\])*)\s*$")


class UnknownTypeError(PgError):
    """A type name the lake cannot store."""

    def __init__(self, message: str) -> None:
        super().__init__("42704", message)


@dataclass(frozen=True, slots=True)
class ColumnType:
    """A column's full type: base type, modifier and array-ness.

    ``typmod`` follows PostgreSQL's encoding (``-1`` when absent; ``length + 4`` for
    varchar/bpchar; ``((precision << 16) | scale) + 4`` for numeric) because clients read it
    back from RowDescription and pg_attribute.
    """

    base: PgType  # (an enum's: :func:`enum_type`)
    typmod: int = -1
    is_array: bool = False
    #: The OID of the domain a column is declared with (``pg_attribute.atttypid``), 0 for
    #: none. Values are the base type's everywhere (storage, text and binary I/O,
    #: RowDescription, as PostgreSQL's ``getBaseType``); the domain's constraints are
    #: checked where a value is coerced to it.
    domain: int = 0

    @property
    def oid(self) -> int:
        """The base type's OID: what values are, and what RowDescription says."""
        return self.base.array_oid if self.is_array else self.base.oid

    @property
    def declared_oid(self) -> int:
        """The declared type's OID: the domain's when there is one (``atttypid``, and the
        pgoutput Relation message's column type)."""
        return self.domain or self.oid

    @property
    def bare(self) -> ColumnType:
        """The base type without its domain."""
        return ColumnType(self.base, self.typmod, self.is_array) if self.domain else self

    @property
    def typlen(self) -> int:
        return -1 if self.is_array else self.base.typlen

    @property
    def numeric_precision_scale(self) -> tuple[int, int] | None:
        if self.base.name != "numeric" or self.typmod < 0:
            return None
        mod = self.typmod - 4
        return mod >> 16, mod & 0xFFFF

    @property
    def arrow(self) -> pa.DataType:
        ps = self.numeric_precision_scale
        if ps is not None and ps[0] <= 38:
            scalar: pa.DataType = pa.decimal128(ps[0], ps[1])
        else:
            scalar = self.base.arrow
        return pa.list_(scalar) if self.is_array else scalar

    def _modifier(self) -> str:
        """The typmod as SQL writes it: ``(10)``, ``(12,2)``, ``(3)``; "" without one."""
        if self.typmod < 0:
            return ""
        if self.base.name in ("varchar", "bpchar"):
            return f"({self.typmod - 4})"
        if self.base.name == "numeric":
            p, s = self.numeric_precision_scale or (0, 0)
            return f"({p},{s})"
        if self.base.name in ("timestamp", "timestamptz", "time"):
            return f"({self.typmod})"
        return ""

    @property
    def is_composite(self) -> bool:
        """A row of a composite type (or an array of them)."""
        return self.base.name == COMPOSITE

    @property
    def is_enum(self) -> bool:
        """A value of a user enum (or an array of one): its label, as text."""
        return self.base.name == ENUM

    def type_text(self) -> str:
        """The type as :func:`parse_type` reads it back (``varchar(10)[]``, ``numeric(12,2)``,
        an enum's ``anyenum#16390#16389``)."""
        mod = self._modifier()
        domain = f"{DOMAIN_MARK}{self.domain}" if self.domain else ""
        return f"{_base_text(self.base)}{mod}{'[]' if self.is_array else ''}{domain}"

    def sql_name(self) -> str:
        """The name ``format_type`` prints, e.g. ``character varying(10)``, ``integer[]``."""
        pretty = {
            "bool": "boolean",
            "int2": "smallint",
            "int4": "integer",
            "int8": "bigint",
            "float4": "real",
            "float8": "double precision",
            "varchar": "character varying",
            "bpchar": "character",
            "timestamp": "timestamp without time zone",
            "timestamptz": "timestamp with time zone",
            "time": "time without time zone",
        }.get(self.base.name, self.base.name)
        mod = self._modifier()
        if self.base.name in ("timestamp", "timestamptz", "time") and mod:
            head, _, tail = pretty.partition(" ")
            pretty = f"{head}{mod} {tail}"
            mod = ""
        return f"{pretty}{mod}{'[]' if self.is_array else ''}"

    def to_json(self) -> str:
        domain = f":{self.domain}" if self.domain else ""
        return f"{_base_text(self.base)}:{self.typmod}:{int(self.is_array)}{domain}"

    @classmethod
    def from_json(cls, text: str) -> ColumnType:
        name, typmod, arr, *domain = text.split(":")
        return cls(_base_named(name), int(typmod), arr == "1", int(domain[0]) if domain else 0)


#: The base name of every user enum's :class:`PgType` (PostgreSQL's pseudo-type of them):
#: an enum's values are its labels, text in Arrow, with text's input and output; what
#: tells one enum from another is the OID. Its name, schema and labels are the catalog's
#: (``decoding.catalog.EnumType``).
ENUM = "anyenum"
#: In a type's text, separates an enum's OID and its array type's OID from :data:`ENUM`.
ENUM_MARK = "#"


def enum_type(oid: int, array_oid: int) -> PgType:
    """The base type of the values of the enum ``oid`` (enum_in's typlen 4; the label
    in storage)."""
    return PgType(ENUM, oid, array_oid, 4, pa.string())


#: The base name of every composite type's :class:`PgType` (CREATE TYPE … AS, a table's
#: row type): which one, and its attributes, are the catalog's
#: (``decoding.catalog.CompositeType``). Its values are rows (DuckDB STRUCTs) in a query;
#: no column of the lake stores one.
COMPOSITE = "anycomposite"


def composite_type(oid: int, array_oid: int) -> PgType:
    """The base type of the values of the composite type ``oid`` (record_in's typlen -1)."""
    return PgType(COMPOSITE, oid, array_oid, -1, pa.string())


def _base_text(t: PgType) -> str:
    if t.name in (ENUM, COMPOSITE):
        return f"{t.name}{ENUM_MARK}{t.oid}{ENUM_MARK}{t.array_oid}"
    return t.name


def _base_named(text: str) -> PgType:
    if text.startswith((ENUM + ENUM_MARK, COMPOSITE + ENUM_MARK)):
        name, oid, array_oid = text.split(ENUM_MARK)
        return (enum_type if name == ENUM else composite_type)(int(oid), int(array_oid))
    return _BASE[text]


#: In a type's text (:meth:`ColumnType.type_text`, :func:`parse_type`), what follows names
#: the domain the base type is declared through by OID: ``int4%16385``. (A type name never
#: holds ``%``; the SQL layer resolves a domain's name to this form.)
DOMAIN_MARK = "%"


def parse_type(text: str) -> ColumnType:
    """Parse a SQL type name such as ``numeric(12,2)``, ``varchar(20)`` or ``int[]`` (a
    domain's base type followed by :data:`DOMAIN_MARK` and the domain's OID)."""
    head, mark, domain = text.partition(DOMAIN_MARK)
    if mark:
        return replace(parse_type(head), domain=int(domain))
    if text.startswith((ENUM + ENUM_MARK, COMPOSITE + ENUM_MARK)):
        base_text, _, arrays = text.partition("[")
        return ColumnType(_base_named(base_text), is_array=bool(arrays))
    m = _TYPE_RE.match(text.lower())
    if not m:
        raise UnknownTypeError(f'type "{text}" does not exist')
    name, a, b, arrays = m.groups()
    name = " ".join(name.split())
    name = _ALIASES.get(name, name)
    base = _BASE.get(name)
    if base is None:
        raise UnknownTypeError(f'type "{text.strip()}" does not exist')
    typmod = -1
    if a is not None:
        if name in ("varchar", "bpchar"):
            typmod = int(a) + 4
        elif name == "numeric":
            precision, scale = int(a), int(b or 0)
            if not 1 <= precision <= 1000 or scale > precision:
                raise PgError("22023", f"NUMERIC precision {precision} must be between 1 and 1000")
            typmod = ((precision << 16) | scale) + 4
        elif name in ("timestamp", "timestamptz", "time"):
            typmod = min(int(a), 6)  # fractional digits (PostgreSQL reduces 7+ to 6)
    elif name == "bpchar" and text.strip().lower() in ("char", "character"):
        typmod = 1 + 4  # bare char means char(1), as in PostgreSQL
    return ColumnType(base, typmod, bool(arrays))


def type_by_oid(oid: int) -> ColumnType:
    for t in _BASE.values():
        if t.oid == oid:
            return ColumnType(t)
        if t.array_oid == oid:
            return ColumnType(t, is_array=True)
    raise UnknownTypeError(f"type with OID {oid} does not exist")


def base_types() -> list[PgType]:
    return list(_BASE.values())
