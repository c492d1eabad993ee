"""CREATE DOMAIN, ALTER DOMAIN and DROP DOMAIN (PostgreSQL 15's ``typecmds.c``), and the
resolution of a domain's name where a column or a cast names a type.

A domain is a base type the lake stores (``decoding.pgtypes``) with a NOT NULL, a DEFAULT
and CHECK constraints; a column declared with it is kept as the base type marked with the
domain's OID (``int4%16385``, see :data:`decoding.pgtypes.DOMAIN_MARK`). Its CHECK
constraints are cooked as a table's are (:mod:`walsender_proxy.sql.cooked_exprs`) over one
column, ``VALUE``, and enforced by the lake on every write (``lake/domains.py``) and by a
cast's translation (:func:`cast_check_sql`).

Refused by name (0A000): a domain over an array of a domain, arrays of domains, COLLATE,
DROP DOMAIN … CASCADE of a domain in use.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pglast import ast, enums

from decoding.catalog import DOMAIN_VALUE, Check, Column, Domain, Table, choose_name
from decoding.errors import PgError
from decoding.pgtypes import DOMAIN_MARK, ColumnType, UnknownTypeError, parse_type
from walsender_proxy.backend.outcomes import Notice
from walsender_proxy.lake import Transaction
from walsender_proxy.lake.domain_ddl import type_exists
from walsender_proxy.sql import cooked_exprs as cx
from walsender_proxy.sql import default_exprs as dx
from walsender_proxy.sql.ddl_names import cascaded, relation_oid, type_text, unsupported
from walsender_proxy.sql.pgcatalog_defs import TYPE_OIDS, TYPES
from walsender_proxy.sql.type_dependents import drop_dependents

_C = enums.ConstrType


def _names(tn: Any) -> list[str]:
    return [n.sval for n in tn]


def lookup(tx: Transaction, names: list[str]) -> Domain | None:
    """The domain a (possibly qualified) type name names; None when it names none."""
    if len(names) > 2:
        return None
    try:
        return tx.domain(".".join(names))
    except PgError:
        return None


def column_type_text(tx: Transaction, tn: ast.TypeName, *, composite: bool = False) -> str:
    """A column's type as the lake's parser reads it: a built-in type's text, an enum's
    (``anyenum#…``), or a domain's base type marked with the domain (42704 for none). A
    composite type (``anycomposite#…``) only where ``composite`` allows it (an attribute of
    another): a lake column of one is refused."""
    try:
        return type_text(tn)
    except (UnknownTypeError, PgError) as e:
        if e.sqlstate != "42704":
            raise
        names = _names(tn.names)
        en = tx.enum(".".join(names)) if len(names) <= 2 else None
        if en is not None:
            if tn.typmods:
                raise PgError("42601", f'type modifier is not allowed for type "{en.name}"') from None
            return en.column_type.type_text() + ("[]" if tn.arrayBounds else "")
        ct = tx.composite(".".join(names)) if len(names) <= 2 else None
        if ct is not None:
            if tn.typmods:
                raise PgError("42601", f'type modifier is not allowed for type "{ct.name}"') from None
            if not composite:
                raise unsupported(f"a column of composite type {ct.name}") from None
            return ct.column_type.type_text() + ("[]" if tn.arrayBounds else "")
        if _row_type_named(tx, names):
            raise unsupported(f"a column of the row type of table {names[-1]}") from None
        dom = lookup(tx, names)
        if dom is None:
            raise
    if tn.typmods:
        raise PgError("42601", f'type modifier is not allowed for type "{dom.name}"')
    if tn.arrayBounds:
        raise unsupported(f"an array of domain {dom.name}")
    return dom.column_type.type_text()


def _row_type_named(tx: Transaction, names: list[str]) -> bool:
    """Whether ``names`` names a table's or a view's row type."""
    if len(names) > 2:
        return False
    cat = tx.catalog()
    schemas = [names[0]] if len(names) == 2 else tx.search_path or tx.lake.search_path
    return any(cat.find_table(s, names[-1]) is not None or cat.find_view(s, names[-1]) is not None for s in schemas)


def _base(tx: Transaction, tn: ast.TypeName) -> tuple[ColumnType, int]:
    """A new domain's base type, and the domain it is over (0: a base type)."""
    ctype = parse_type(column_type_text(tx, tn, composite=True))
    if ctype.is_composite:
        raise unsupported(f"a domain over composite type {'.'.join(_names(tn.names))}")
    if tn.setof:
        raise PgError("42601", "SETOF type not allowed in this context")  # (the grammar's)
    return ctype.bare, ctype.domain


def _pseudo_type(tn: ast.TypeName) -> None:
    """42804 for a pseudo-type (``anyelement``, ``record``, …) as a domain's base."""

    names = [n.sval for n in tn.names]
    if len(names) == 1 or names[0] == "pg_catalog":
        oid = TYPE_OIDS.get(names[-1])
        if oid is not None and TYPES.rows[oid].get("typtype") == "p":
            raise PgError("42804", f'"{names[-1]}" is not a valid base type for a domain')


def _value_table(dom: Domain) -> Table:
    """The one "column" a domain's CHECK reads: ``VALUE``, of the base type."""
    return Table(0, dom.schema, dom.name, (Column(DOMAIN_VALUE, "value", dom.base, physical="value"),))


def _constraint_names(tx: Transaction, schema: str) -> set[str]:
    """The constraint names already used in ``schema`` (ChooseConstraintName's test)."""
    cat = tx.catalog()
    out = {c.name for d in cat.domains.values() if d.schema == schema for c in d.checks}
    out |= {c.name for t in cat.tables.values() if t.schema == schema for c in t.checks}
    return out


def _cook_check(tx: Transaction, dom: Domain, c: ast.Constraint, taken: set[str]) -> Check:
    if c.is_no_inherit:
        raise PgError("42P17", "check constraints for domains cannot be marked NO INHERIT")
    if c.deferrable or c.initdeferred:
        raise PgError("0A000", "specifying constraint deferrability not supported for domains")
    try:
        tree = cx.Cooker(_value_table(dom), cx.CHECK, tx.catalog().enums).boolean(c.raw_expr)
        duck = cx.duck(tree)
    except (cx.Unsupported, dx._Unsupported) as e:
        raise PgError("0A000", f"CHECK constraint {e} is not supported by walsender-proxy") from None
    except PgError as e:  # (PostgreSQL reports a domain's constraint errors without a position)
        raise PgError(e.sqlstate, e.message, detail=e.detail, hint=e.hint) from None
    name = c.conname
    if name is None:
        name, n = choose_name(dom.name, "", "check"), 0
        while name in taken:  # (ChooseConstraintName: posint_check, posint_check1, …)
            n += 1
            name = choose_name(dom.name, "", f"check{n}")
    taken.add(name)
    return Check(0, name, cx.deparse(tree, False), cx.deparse(tree, True), duck, (DOMAIN_VALUE,))


def _default(tx: Transaction, dom: Domain, raw: Any) -> Any:
    """cookDefault of a domain's DEFAULT, for its base type."""
    if dom.base.is_enum:
        from walsender_proxy.sql import enum_sql

        return enum_sql.cook_default(tx, raw, dom.base, column=False)
    cooked = dx.cook(raw, dom.base, dom.name, lambda name: relation_oid(tx, name))
    return None if cooked is None else cooked.column_default()


def create(tx: Transaction, s: ast.CreateDomainStmt) -> str:
    names = _names(s.domainname)
    if len(names) > 2:
        raise PgError("42601", f"improper qualified name (too many dotted names): {'.'.join(names)}")
    schema = names[0] if len(names) == 2 else tx.creation_schema()
    _pseudo_type(s.typeName)
    base, parent = _base(tx, s.typeName)
    if s.collClause is not None:
        if base.base.name not in ("text", "varchar", "bpchar"):
            raise PgError("42804", f"collations are not supported by type {base.sql_name()}")
        raise unsupported("CREATE DOMAIN … COLLATE")
    dom = Domain(0, 0, schema, names[-1], base, parent)
    nulls: bool | None = None
    default: Any = None
    checks: list[ast.Constraint] = []
    for c in s.constraints or ():
        kind = c.contype
        if kind == _C.CONSTR_DEFAULT:
            if default is not None:
                raise PgError("42601", "multiple default expressions")
            default = c.raw_expr
        elif kind in (_C.CONSTR_NOTNULL, _C.CONSTR_NULL):
            if c.is_no_inherit:  # (PostgreSQL 15's grammar has no NOT NULL NO INHERIT for a domain)
                raise PgError("42601", 'syntax error at or near "no"')
            if nulls is not None and nulls != (kind == _C.CONSTR_NOTNULL):
                raise PgError("42601", "conflicting NULL/NOT NULL constraints")
            nulls = kind == _C.CONSTR_NOTNULL
        elif kind == _C.CONSTR_CHECK:
            checks.append(c)
        elif kind == _C.CONSTR_UNIQUE:
            raise PgError("42601", "unique constraints not possible for domains")
        elif kind == _C.CONSTR_PRIMARY:
            raise PgError("42601", "primary key constraints not possible for domains")
        elif kind == _C.CONSTR_EXCLUSION:
            raise PgError("42601", "exclusion constraints not possible for domains")
        elif kind == _C.CONSTR_FOREIGN:
            raise PgError("42601", "foreign key constraints not possible for domains")
        elif kind in (_C.CONSTR_ATTR_DEFERRABLE, _C.CONSTR_ATTR_NOT_DEFERRABLE, _C.CONSTR_ATTR_DEFERRED, _C.CONSTR_ATTR_IMMEDIATE):
            raise PgError("0A000", "specifying constraint deferrability not supported for domains")
        else:
            raise unsupported(f"CREATE DOMAIN with a {kind.name.removeprefix('CONSTR_')} constraint")
    taken = _constraint_names(tx, schema)
    inherited = tx.catalog().domains[parent].default if parent and default is None else None
    dom = replace(
        dom,
        not_null=bool(nulls),
        default=inherited if default is None else _default(tx, dom, default),  # (DefineDomain: the base domain's default)
        checks=tuple(_cook_check(tx, dom, c, taken) for c in checks),
    )
    tx.create_domain(dom)
    return "CREATE DOMAIN"


def domain_named(tx: Transaction, names: list[str], *, as_written: bool = False) -> Domain:
    """The domain ``names`` names (42704 for no type of that name, 42809 for a type that is
    not a domain, named as PostgreSQL's message names it: ``integer`` after format_type,
    or ``"int4"`` ``as_written``)."""
    dom = lookup(tx, names)
    if dom is None:
        shown = ".".join(names)
        try:
            builtin = parse_type(shown)
        except UnknownTypeError:
            raise PgError("42704", f'type "{shown}" does not exist') from None
        raise PgError("42809", f'"{shown}" is not a domain' if as_written else f"{builtin.sql_name()} is not a domain")
    return dom


def alter(tx: Transaction, s: ast.AlterDomainStmt, notices: list[Notice]) -> str:
    dom = domain_named(tx, _names(s.typeName))
    kind = s.subtype
    if kind == "T":  # SET / DROP DEFAULT
        tx.alter_domain(replace(dom, default=None if s.def_ is None else _default(tx, dom, s.def_)))
    elif kind == "N":  # DROP NOT NULL
        if dom.not_null:
            tx.alter_domain(replace(dom, not_null=False))
    elif kind == "O":  # SET NOT NULL
        if not dom.not_null:
            tx.alter_domain(replace(dom, not_null=True), validate=None)
    elif kind == "C":  # ADD CONSTRAINT
        c = s.def_
        if not isinstance(c, ast.Constraint) or c.contype != _C.CONSTR_CHECK:
            if isinstance(c, ast.Constraint) and c.contype == _C.CONSTR_NOTNULL:
                raise PgError("42601", "use ALTER DOMAIN .. [ SET | DROP ] NOT NULL instead")
            raise PgError("42601", "only check constraints can be added to domains")  # (AlterDomainAddConstraint)
        if c.conname is not None and any(x.name == c.conname for x in dom.checks):
            raise PgError("42710", f'constraint "{c.conname}" for domain "{dom.name}" already exists')
        check = _cook_check(tx, dom, c, _constraint_names(tx, dom.schema))
        if c.skip_validation:
            tx.alter_domain(replace(dom, checks=(*dom.checks, replace(check, validated=False))))
        else:
            tx.alter_domain(replace(dom, checks=(*dom.checks, check)), validate=check)
    elif kind == "X":  # DROP CONSTRAINT
        kept = tuple(c for c in dom.checks if c.name != s.name)
        if len(kept) == len(dom.checks):
            if not s.missing_ok:
                raise PgError("42704", f'constraint "{s.name}" of domain "{dom.name}" does not exist')
            notices.append(Notice("NOTICE", "00000", f'constraint "{s.name}" of domain "{dom.name}" does not exist, skipping'))
        else:
            tx.alter_domain(replace(dom, checks=kept))
    elif kind == "V":  # VALIDATE CONSTRAINT
        found = next((c for c in dom.checks if c.name == s.name), None)
        if found is None:
            raise PgError("42704", f'constraint "{s.name}" of domain "{dom.name}" does not exist')
        if not found.validated:
            done = replace(found, validated=True)
            tx.alter_domain(replace(dom, checks=tuple(done if c is found else c for c in dom.checks)), validate=done)
    else:
        raise unsupported("this form of ALTER DOMAIN")
    return "ALTER DOMAIN"


def rename(tx: Transaction, s: ast.RenameStmt) -> str:
    """ALTER DOMAIN … RENAME TO / RENAME CONSTRAINT (and ALTER TYPE … RENAME TO of one)."""
    dom = domain_named(tx, _names(s.object.names if isinstance(s.object, ast.TypeName) else s.object))
    if s.renameType == enums.ObjectType.OBJECT_DOMCONSTRAINT:
        if not any(c.name == s.subname for c in dom.checks):
            raise PgError("42704", f'constraint "{s.subname}" for domain "{dom.name}" does not exist')
        if s.newname in _constraint_names(tx, dom.schema):
            raise PgError("42710", f'constraint "{s.newname}" for domain "{dom.name}" already exists')
        checks = tuple(replace(c, name=s.newname) if c.name == s.subname else c for c in dom.checks)
        tx.alter_domain(replace(dom, checks=checks))
        return "ALTER DOMAIN"
    if type_exists(tx.catalog(), dom.schema, s.newname):
        raise PgError("42710", f'type "{s.newname}" already exists')
    tx.alter_domain(replace(dom, name=s.newname))
    return "ALTER DOMAIN" if s.renameType == enums.ObjectType.OBJECT_DOMAIN else "ALTER TYPE"


def drop(tx: Transaction, domains: list[Domain], cascade: bool, notices: list[Notice] | None = None) -> None:
    """DROP DOMAIN / DROP TYPE of domains. CASCADE drops the domains over them and the
    columns declared with any of them first (as PostgreSQL's NOTICE names them); without
    it, those are the lake's 2BP01."""
    if cascade:
        gone = drop_dependents(tx, [d.oid for d in domains])
        if notices is not None:
            cascaded(notices, [line for _, line in gone])
    tx.drop_domains([d.oid for d in domains])




def drop_schema_domains(tx: Transaction, schema: str) -> list[tuple[int, str]]:
    """DROP SCHEMA … CASCADE of a schema holding domains or enums: the columns outside it
    declared with them (or with domains over them) are dropped first; the lake drops the
    types with the schema. Returns the NOTICE's entries, each with the OID that orders it among
    the schema's members."""
    cat = tx.catalog()
    inside = sorted(
        [
            *(d for d in cat.domains.values() if d.schema == schema), *(e for e in cat.enums.values() if e.schema == schema),
            *(c for c in cat.composites.values() if c.schema == schema),
        ],
        key=lambda d: d.oid,
    )
    if not inside:
        return []
    tables = frozenset(t.oid for t in cat.tables.values() if t.schema == schema)
    gone = drop_dependents(tx, [d.oid for d in inside], tables, domains_too=False)
    out: list[tuple[int, str]] = []
    for d in inside:
        out.append((d.oid, f"type {d.qualified_name}"))
        out += [(oid, line) for oid, line in gone if oid == d.oid]
    return out


__all__ = ["DOMAIN_MARK", "alter", "column_type_text", "create", "drop", "lookup", "rename"]
