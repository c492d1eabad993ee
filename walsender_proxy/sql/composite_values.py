"""Values of composite types in a query: a stand-alone composite type's (CREATE TYPE … AS)
or a table's row type, as PostgreSQL's ``record_in``, ``coerce_record_to_complex`` and
field selection give them.

A composite value computes as a DuckDB STRUCT whose fields carry the attributes' names,
each field of the attribute's type; it is printed by record_out's rules
(:func:`decoding.pgvalues.textout.record_text`) and described by the type's OID. What the
rewriter does with one is limited to what gives PostgreSQL's answer: casts to it (NULL, a
literal read by record_in, ``ROW(…)`` coerced field by field, a value of the same type),
field selection ``(v).f``, IS [NOT] NULL, and output. Operators and functions over one are
refused by name (0A000): DuckDB compares and orders STRUCTs by rules of its own.

The type is looked up in the catalog and search path the statement is rewritten under
(:data:`walsender_proxy.sql.sql_function_calls.LOOKUP`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pglast import ast

from decoding.catalog import Catalog, CompositeType, Table
from decoding.errors import PgError
from decoding.pgtypes import ColumnType
from walsender_proxy.sql.pgcatalog_defs import ROWTYPE, ROWTYPE_ARRAY, SYNTH_TABLE_BASE, quote_ident
from walsender_proxy.sql.sql_function_calls import LOOKUP


@dataclass(frozen=True, slots=True)
class RowType:
    """A composite type as a query sees it: its OIDs, its name as format_type_be prints
    it, and its attributes (name, type) in order."""

    oid: int
    array_oid: int
    name: str
    fields: tuple[tuple[str, ColumnType], ...]

    def field(self, name: str) -> tuple[int, ColumnType] | None:
        """The 0-based position and type of attribute ``name``."""
        for i, (n, t) in enumerate(self.fields):
            if n == name:
                return i, t
        return None


def _shown(cat: Catalog, path: Sequence[str], schema: str, name: str, found: object) -> str:
    """format_type_be: the name alone when the search path finds this type by it."""
    visible = cat.resolve_composite([name], path) if isinstance(found, CompositeType) else None
    if visible is None and isinstance(found, Table):
        visible = next((t for s in path if (t := cat.find_table(s, name)) is not None), None)
    return quote_ident(name) if visible == found else f"{quote_ident(schema)}.{quote_ident(name)}"


def _of_composite(cat: Catalog, path: Sequence[str], ct: CompositeType) -> RowType:
    return RowType(ct.oid, ct.array_oid, _shown(cat, path, ct.schema, ct.name, ct), ct.live_attributes)


def _of_table(cat: Catalog, path: Sequence[str], t: Table) -> RowType:
    oid = SYNTH_TABLE_BASE + 8 * t.oid
    fields = tuple((c.name, c.type) for c in t.columns)
    return RowType(oid + ROWTYPE, oid + ROWTYPE_ARRAY, _shown(cat, path, t.schema, t.name, t), fields)


def visible(names: Sequence[str]) -> RowType | None:
    """The composite type a type name in a query names: a stand-alone one, or a table's
    row type (None: neither)."""
    lk = LOOKUP.get()
    if lk is None or len(names) > 2:
        return None
    ct = lk.catalog.resolve_composite(names, lk.path)
    if ct is not None:
        return _of_composite(lk.catalog, lk.path, ct)
    for schema in [names[0]] if len(names) == 2 else lk.path:
        t = lk.catalog.find_table(schema, names[-1])
        if t is not None:
            return _of_table(lk.catalog, lk.path, t)
        if lk.catalog.find_view(schema, names[-1]) is not None or lk.catalog.find_composite(schema, names[-1]) is not None:
            return None
    return None


def by_oid(oid: int) -> RowType | None:
    """The composite type (or array type of one) ``oid`` names."""
    lk = LOOKUP.get()
    if lk is None:
        return None
    for ct in lk.catalog.composites.values():
        if oid in (ct.oid, ct.array_oid):
            return _of_composite(lk.catalog, lk.path, ct)
    if oid >= SYNTH_TABLE_BASE and (oid - SYNTH_TABLE_BASE) % 8 in (ROWTYPE, ROWTYPE_ARRAY):
        t = lk.catalog.tables.get((oid - SYNTH_TABLE_BASE) // 8)
        if t is not None:
            return _of_table(lk.catalog, lk.path, t)
    return None


def type_name(ctype: ColumnType) -> ast.TypeName:
    """A TypeName naming ``ctype`` (for a cast of a field to its attribute's type)."""
    lk = LOOKUP.get()
    bounds = (ast.Integer(ival=-1),) if ctype.is_array and not ctype.domain else None
    cat = lk.catalog if lk is not None else None
    user = None
    if cat is not None and ctype.domain:
        user = cat.domains.get(ctype.domain)
    elif cat is not None and (ctype.is_enum or ctype.is_composite):
        user = cat.enums.get(ctype.base.oid) or cat.composites.get(ctype.base.oid)
    if user is not None:
        names = (ast.String(sval=user.schema), ast.String(sval=user.name))
        return ast.TypeName(names=names, arrayBounds=bounds, typemod=-1)
    mods: tuple[int, ...] = ()
    if ctype.typmod >= 0:
        name = ctype.base.name
        if name in ("varchar", "bpchar"):
            mods = (ctype.typmod - 4,)
        elif name == "numeric":
            mods = ctype.numeric_precision_scale or ()
        elif name in ("timestamp", "timestamptz", "time"):
            mods = (ctype.typmod,)
    typmods = tuple(ast.A_Const(val=ast.Integer(ival=m)) for m in mods) or None
    return ast.TypeName(
        names=(ast.String(sval="pg_catalog"), ast.String(sval=ctype.base.name)), typmods=typmods, arrayBounds=bounds, typemod=-1
    )


def declared_oid(ctype: ColumnType) -> int:
    """The OID an attribute of type ``ctype`` is declared with (``atttypid``): a domain's,
    an enum's (or its array type's), a built-in type's."""
    if ctype.domain:
        return ctype.domain
    return ctype.base.array_oid if ctype.is_array else ctype.base.oid


def malformed(text: str, detail: str) -> PgError:
    return PgError("22P02", f'malformed record literal: "{text}"', detail=detail)


def record_fields(text: str, n: int) -> list[str | None]:
    """record_in's reading of ``text`` into ``n`` fields' texts (None: NULL): an empty
    unquoted field is NULL, double quotes group (``""`` inside is one), a backslash quotes
    the next character; 22P02 with record_in's DETAILs."""
    i = 0
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text) or text[i] != "(":
        raise malformed(text, "Missing left parenthesis.")
    i += 1
    out: list[str | None] = []
    for k in range(n):
        if k:
            if i < len(text) and text[i] == ",":
                i += 1
            else:
                raise malformed(text, "Too few columns.")
        if i < len(text) and text[i] in ",)":
            out.append(None)
            continue
        buf: list[str] = []
        quoted = False
        while quoted or not (i < len(text) and text[i] in ",)"):
            if i >= len(text):
                raise malformed(text, "Unexpected end of input.")
            ch = text[i]
            i += 1
            if ch == "\\":
                if i >= len(text):
                    raise malformed(text, "Unexpected end of input.")
                buf.append(text[i])
                i += 1
            elif ch == '"':
                if not quoted:
                    quoted = True
                elif i < len(text) and text[i] == '"':
                    buf.append('"')
                    i += 1
                else:
                    quoted = False
            else:
                buf.append(ch)
        out.append("".join(buf))
    if i >= len(text) or text[i] != ")":
        raise malformed(text, "Too many columns.")
    i += 1
    if text[i:].strip():
        raise malformed(text, "Junk after right parenthesis.")
    return out


def unsupported(what: str) -> PgError:
    return PgError("0A000", f"{what} is not supported by walsender-proxy")
