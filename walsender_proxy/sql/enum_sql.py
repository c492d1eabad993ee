"""CREATE TYPE … AS ENUM, ALTER TYPE … ADD VALUE / RENAME TO, and DROP TYPE of enums
(PostgreSQL 15's ``DefineEnum``, ``AlterEnum``, ``RenameType``).

An enum lives in the catalog (:class:`decoding.catalog.EnumType`, its labels in
``pg_enum``'s order); a column declared with it stores labels
(:func:`decoding.pgtypes.enum_type`), checked on every write by ``lake/enums.py``.

Refused by name (0A000): ``ALTER TYPE … RENAME VALUE``, since stored values are labels
and a rename would change every row holding the old one; ``SET SCHEMA`` of an enum.
``ALTER TYPE … OWNER TO`` is ``role_sql``'s.
"""

from __future__ import annotations

from pglast import ast

from decoding.catalog import TYPE_MARK, ColumnDefault, EnumType
from decoding.errors import PgError
from decoding.pgtypes import ColumnType
from walsender_proxy.backend.outcomes import Notice
from walsender_proxy.lake import Transaction
from walsender_proxy.lake.enum_ddl import check_label
from walsender_proxy.sql.ddl_names import cascaded, unsupported
from walsender_proxy.sql.literals import TYPE_ALIASES
from walsender_proxy.sql.pgcatalog_defs import TYPE_OIDS, quote_ident
from walsender_proxy.sql.type_dependents import drop_dependents


def _names(nodes: tuple[ast.String, ...] | list[ast.String]) -> list[str]:
    return [n.sval for n in nodes]


def lookup(tx: Transaction, names: list[str]) -> EnumType | None:
    """The enum a (possibly qualified) type name names; None when it names none."""
    if len(names) > 2:
        return None
    return tx.enum(".".join(names))


def enum_named(tx: Transaction, names: list[str]) -> EnumType:
    """The enum ``names`` names: 42704 for no type, 42809 for a type that is no enum."""
    en = lookup(tx, names)
    if en is not None:
        return en
    shown = ".".join(names)
    if _domain(tx, names) or _builtin(names):
        raise PgError("42809", f"{shown} is not an enum")
    raise PgError("42704", f'type "{shown}" does not exist')


def _domain(tx: Transaction, names: list[str]) -> bool:
    try:
        tx.domain(".".join(names))
    except PgError:
        return False
    return True


def _builtin(names: list[str]) -> bool:

    return (len(names) == 1 or names[0] == "pg_catalog") and TYPE_ALIASES.get(names[-1], names[-1]) in TYPE_OIDS


def create(tx: Transaction, s: ast.CreateEnumStmt) -> str:
    names = _names(s.typeName)
    if len(names) > 2:
        raise PgError("42601", f"improper qualified name (too many dotted names): {'.'.join(names)}")
    schema = names[0] if len(names) == 2 else tx.creation_schema()
    labels = [v.sval for v in s.vals or ()]
    tx.create_enum(EnumType(0, 0, schema, names[-1]), labels)
    return "CREATE TYPE"


def alter(tx: Transaction, s: ast.AlterEnumStmt, notices: list[Notice]) -> str:
    """ALTER TYPE … ADD VALUE [IF NOT EXISTS] … [BEFORE | AFTER …] and RENAME VALUE."""
    en = enum_named(tx, _names(s.typeName))
    if s.oldVal is not None:  # RENAME VALUE: PostgreSQL's errors, then the refusal
        check_label(s.newVal)
        if s.oldVal not in en.names:
            raise PgError("22023", f'"{s.oldVal}" is not an existing enum label')
        if s.newVal in en.names:
            raise PgError("42710", f'enum label "{s.newVal}" already exists')
        raise unsupported("ALTER TYPE … RENAME VALUE (an enum's values are stored as their labels)")
    added = tx.add_enum_label(
        en.oid, s.newVal, s.newValNeighbor, after=bool(s.newValIsAfter), if_not_exists=bool(s.skipIfNewValExists)
    )
    if not added:
        notices.append(Notice("NOTICE", "42710", f'enum label "{s.newVal}" already exists, skipping'))
    return "ALTER TYPE"


def object_names(obj: ast.TypeName | tuple[ast.String, ...] | list[ast.String]) -> list[str]:
    """The names of a statement's type object (a TypeName, or a list of names)."""
    return _names(obj.names if isinstance(obj, ast.TypeName) else obj)


def rename(tx: Transaction, s: ast.RenameStmt) -> str:
    """ALTER TYPE … RENAME TO of an enum."""
    en = enum_named(tx, object_names(s.object))
    tx.rename_enum(en.oid, s.newname)
    return "ALTER TYPE"


def cook_default(tx: Transaction, raw: ast.Node, ctype: ColumnType, *, column: bool = True) -> ColumnDefault | None:
    """The DEFAULT of an enum column (or a domain over an enum): a label (``'sad'``,
    ``'sad'::mood``), kept as PostgreSQL prints its cooked constant, ``'sad'::mood`` (None:
    NULL, no default); a column's names its type by :data:`TYPE_MARK`, printed per search
    path. Other expressions are refused: their cooking knows no enum."""
    en = tx.catalog().enum_of(ctype)
    assert en is not None
    value = raw
    if isinstance(value, ast.TypeCast) and not value.typeName.arrayBounds and lookup(tx, _names(value.typeName.names)) == en:
        value = value.arg
    if isinstance(value, ast.A_Const) and value.isnull:
        return None
    label = value.val.sval if isinstance(value, ast.A_Const) and isinstance(value.val, ast.String) else None
    if label is None:
        raise unsupported("a DEFAULT of an enum column other than one of its labels")
    if ctype.is_array:  # ('{sad,ok}': array_in of the labels, printed as array_out prints it)
        from walsender_proxy.sql.rewrite import parse_array_literal

        elems = parse_array_literal(label)
        if elems is None or any(x is not None and ("{" in x or "}" in x) for x in elems):
            raise unsupported("a DEFAULT of an enum array column other than a one-dimensional array literal")
        for x in elems:
            if x is not None and x not in en.names:
                raise PgError("22P02", f'invalid input value for enum {_shown(tx, en)}: "{x}"')
        label = "{" + ",".join(_array_element(x) for x in elems) + "}"
    elif label not in en.names:
        raise PgError("22P02", f'invalid input value for enum {_shown(tx, en)}: "{label}"')
    named = TYPE_MARK if column else _shown(tx, en, quoted=True) + ("[]" if ctype.is_array else "")
    text = "'" + label.replace("'", "''") + "'::" + named
    return ColumnDefault(text, text)


def _array_element(x: str | None) -> str:
    """An element as array_out prints it: quoted when it is empty, NULL-like or holds a
    character the array syntax gives a meaning to."""
    if x is None:
        return "NULL"
    if x == "" or x.lower() == "null" or any(c in x for c in '{},"\\ \t\n'):
        return '"' + x.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return x


def _shown(tx: Transaction, en: EnumType, *, quoted: bool = False) -> str:
    """format_type_be: the enum's name, qualified when the search path does not find it."""
    visible = lookup(tx, [en.name]) == en
    name, schema = (quote_ident(en.name), quote_ident(en.schema)) if quoted else (en.name, en.schema)
    return name if visible else f"{schema}.{name}"


def drop(tx: Transaction, dropped: list[EnumType], cascade: bool, notices: list[Notice] | None = None) -> None:
    """DROP TYPE of enums. CASCADE first drops the domains over them and the columns
    declared with them (or with arrays of them), as PostgreSQL's NOTICE names them;
    without it, those are the lake's 2BP01."""
    if cascade:
        gone = drop_dependents(tx, [e.oid for e in dropped])
        if notices is not None:
            cascaded(notices, [line for _, line in gone])
    tx.drop_enums([e.oid for e in dropped])

__all__ = ["alter", "create", "drop", "enum_named", "lookup", "rename"]
