"""What the DDL modules share beneath them: relation names as written (``qualified``) and
as regclass input reads them (``ident_parts``, ``relation_oid``), a column's type name as
the lake's type parser reads it (``type_text``), the NOTICE of what a CASCADE dropped, and
the 0A000 of what the proxy does not model (``unsupported``).

Apart from :mod:`walsender_proxy.sql.ddl_sql` so that views, sequences, indexes, SQL
functions and DEFAULT expressions use them without importing the module that dispatches
every DDL statement to them.
"""

from __future__ import annotations

from pglast import ast

from decoding.errors import PgError
from decoding.pgtypes import UnknownTypeError, parse_type
from walsender_proxy.backend.outcomes import Notice
from walsender_proxy.lake import Transaction


def unsupported(what: str) -> PgError:
    return PgError("0A000", f"{what} is not supported by walsender-proxy")


def qualified(rv: ast.RangeVar) -> str:
    return f"{rv.schemaname}.{rv.relname}" if rv.schemaname else rv.relname


def type_text(tn: ast.TypeName) -> str:
    """A TypeName as the lake's type parser reads it (``varchar(10)[]``, ``int4``)."""
    names = [n.sval for n in tn.names]
    if len(names) == 2 and names[0] == "pg_catalog":
        names = names[1:]
    if len(names) != 1:
        raise PgError("42704", f'type "{".".join(names)}" does not exist')
    name = names[0]
    if len(tn.names) == 1 and name == "char":  # ("char", one byte; char is bpchar(1))
        raise unsupported('a column of type "char"')
    if len(tn.names) == 1 and name in ("serial", "serial4", "bigserial", "serial8", "smallserial", "serial2"):
        raise unsupported(f"{name} (a column owning a sequence)")
    mods = []
    for m in tn.typmods or ():
        if isinstance(m, ast.A_Const) and isinstance(m.val, ast.Integer):
            mods.append(str(m.val.ival))
        else:
            raise PgError("42601", f'invalid type modifier for type "{name}"')
    if name == "interval" and mods:
        raise unsupported("interval type modifiers (fields and precision)")
    bounds = len(tn.arrayBounds or ())
    if name.startswith("_") and not bounds:
        from walsender_proxy.sql.pgcatalog_defs import TYPE_OIDS

        if name in TYPE_OIDS and name[1:] in TYPE_OIDS:  # (``_int4`` is int4[] by its catalog name)
            name, bounds = name[1:], 1
    text = name + (f"({','.join(mods)})" if mods else "")
    text += "[]" * bounds
    try:
        parse_type(text)
    except UnknownTypeError:
        from walsender_proxy.sql.literals import TYPE_ALIASES
        from walsender_proxy.sql.pgcatalog_defs import TYPE_OIDS

        if TYPE_ALIASES.get(name, name) in TYPE_OIDS:  # PostgreSQL's type, not the lake's
            raise unsupported(f"a column of type {name}") from None
        raise
    return text


def ident_parts(text: str) -> list[str]:
    """A qualified name as regclass input reads it (stringToQualifiedNameList): dots
    between parts, double quotes keep case, other letters are lowered."""
    parts: list[str] = []
    cur, i, n = "", 0, len(text)
    quoted = False
    while i < n:
        ch = text[i]
        if ch == '"':
            if quoted and i + 1 < n and text[i + 1] == '"':
                cur += '"'
                i += 1
            else:
                quoted = not quoted
        elif ch == "." and not quoted:
            parts.append(cur)
            cur = ""
        else:
            cur += ch if quoted else ch.lower()
        i += 1
    parts.append(cur.strip() if not text.endswith('"') else cur)
    if quoted or any(not p for p in parts):
        raise PgError("42602", 'invalid name syntax')
    return parts


def relation_oid(tx: Transaction, text: str) -> tuple[int, bool]:
    """regclass input of ``text``: the relation's OID and whether it is a sequence."""
    name = ".".join(ident_parts(text))
    try:
        return tx.sequence(name).oid, True
    except PgError as e:
        if e.sqlstate != "42809":
            if e.sqlstate == "42P01":
                raise PgError("42P01", f'relation "{text}" does not exist') from None
            raise
    try:
        v = tx.view(name)
    except PgError:
        v = None
    if v is not None:
        return v.oid, False
    return tx.table(name).oid, False


def cascaded(notices: list[Notice], dropped: list[str]) -> None:
    """PostgreSQL's NOTICE of what a CASCADE dropped besides."""
    if len(dropped) == 1:
        notices.append(Notice("NOTICE", "00000", f"drop cascades to {dropped[0]}"))
    elif dropped:
        detail = "\n".join(f"drop cascades to {d}" for d in dropped)
        notices.append(Notice("NOTICE", "00000", f"drop cascades to {len(dropped)} other objects", detail=detail))
