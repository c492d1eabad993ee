"""The type the analysis infers for an expression (:class:`T`, PostgreSQL's type name with
what a cast or DuckDB's representation adds to it) and the type names the rewriter and the
modules it calls share."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class T:
    """An inferred PostgreSQL type (pg_type.typname; arrays as ``_elem``)."""

    name: str
    #: int2vector/oidvector (and casts of them to arrays) index from 0, DuckDB lists from 1.
    zero_based: bool = False
    #: The type modifier a cast gave (``varchar(3)``: 7), as RowDescription reports it.
    typmod: int = -1
    #: A numeric value DuckDB holds as its exact text (an unconstrained numeric column):
    #: compared and ordered through numeric_text's key, refused where that cannot serve.
    text_numeric: bool = field(default=False, compare=False)
    #: The display scale of every value of a numeric DuckDB holds as a DECIMAL, when known
    #: (a literal, a numeric(p,s) column): branches of one result that share it need no
    #: conversion to text to keep it.
    scale: int | None = field(default=None, compare=False)
    #: The domain a value was declared or cast as (its column's, a cast's): what
    #: ``pg_typeof`` says; everything else sees the base type, as PostgreSQL's operators do.
    domain_oid: int = field(default=0, compare=False)
    #: The OID of the user enum a value (``anyenum``), or an array's elements
    #: (``_anyenum``), belong to: enums of different OIDs are different types.
    enum_oid: int = 0
    #: The OID of the composite type a row value (``record``), or an array's elements
    #: (``_record``), are of (``walsender_proxy/sql/composite_values.py``); 0 for an
    #: anonymous row, which the rewriter leaves untyped.
    row_oid: int = 0

    @property
    def is_array(self) -> bool:
        return self.name.startswith("_") or self.name in ("int2vector", "oidvector")

    @property
    def elem(self) -> T | None:
        if self.name.startswith("_"):
            return T(self.name[1:], enum_oid=self.enum_oid, row_oid=self.row_oid)
        if self.name == "int2vector":
            return T("int2")
        if self.name == "oidvector":
            return T("oid")
        return None


UNKNOWN = T("unknown")
BOOL = T("bool")
TEXT = T("text")
JSONB = T("jsonb")
#: A numeric value DuckDB holds as its exact text (numeric_math computes with it).
NUMERIC_TEXT = T("numeric", text_numeric=True)
INTEGERISH = frozenset(
    {
        "int2",
        "int4",
        "int8",
        "oid",
        "regclass",
        "regtype",
        "regproc",
        "regprocedure",
        "regnamespace",
        "regrole",
        "xid",
        "cid",
    }
)
TEXTISH = frozenset({"text", "varchar", "bpchar", "name", "char", "unknown"})
