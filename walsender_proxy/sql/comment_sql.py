"""COMMENT ON as PostgreSQL 15's ``CommentObject``: the object named is resolved as
``get_object_address`` resolves it (with its errors), and its text becomes a
``pg_description`` row that ``obj_description``, ``col_description``, psql's ``\\d+`` and
pg_dump read. The lake keeps the texts in the versioned catalog by (classoid, objoid,
objsubid), so a comment follows its object through renames and is transactional."""

from __future__ import annotations

from pglast import ast, enums

from decoding.errors import PgError
from walsender_proxy.lake import Transaction
from walsender_proxy.sql import pgcatalog, pgcatalog_defs
from walsender_proxy.sql.domain_sql import domain_named

_O = enums.ObjectType
_KINDS = {
    _O.OBJECT_TABLE: "table",
    _O.OBJECT_VIEW: "view",
    _O.OBJECT_SEQUENCE: "sequence",
    _O.OBJECT_INDEX: "index",
}


def comment(tx: Transaction, s: ast.CommentStmt) -> str:
    classoid, objoid, subid = _address(tx, s)
    tx.set_comment(classoid, objoid, subid, s.comment)
    return "COMMENT"


def _names(obj: object) -> list[str]:
    return [n.sval for n in obj] if isinstance(obj, tuple) else [obj.sval]  # type: ignore[attr-defined]


def _relation(tx: Transaction, names: list[str]) -> tuple[str, int, object]:
    """(kind, oid, object) of the relation ``names`` (schema-qualified or on the path)."""
    if len(names) > 2:
        raise PgError("0A000", "cross-database references are not implemented: " + ".".join(names))
    cat = tx.catalog()
    for schema in names[:-1] or tx.search_path or tx.lake.search_path:
        rel = names[-1]
        if (t := cat.find_table(schema, rel)) is not None:
            return "table", t.oid, t
        if (v := cat.find_view(schema, rel)) is not None:
            return "view", v.oid, v
        if (sq := cat.find_sequence(schema, rel)) is not None:
            return "sequence", sq.oid, sq
        if (found := cat.find_index(schema, rel)) is not None:
            t, ix = found
            oid = ix.oid if ix is not None else pgcatalog.synthetic_oid(t.oid, pgcatalog_defs.PKEY_INDEX)
            return "index", oid, None
    raise PgError("42P01", f'relation "{".".join(names)}" does not exist')


def _address(tx: Transaction, s: ast.CommentStmt) -> tuple[int, int, int]:
    pg_class = pgcatalog_defs.PG_CATALOG["pg_class"].oid
    kind = s.objtype
    if kind in _KINDS:
        names = _names(s.object)
        what, oid, _ = _relation(tx, names)
        if what != _KINDS[kind]:
            raise PgError(
                "42809",
                f'"{names[-1]}" is not {"an" if _KINDS[kind] == "index" else "a"} {_KINDS[kind]}',
            )
        return pg_class, oid, 0
    if kind == _O.OBJECT_COLUMN:
        names = _names(s.object)
        if len(names) < 2:
            raise PgError("42601", "column name must be qualified")
        what, oid, rel = _relation(tx, names[:-1])
        cols = getattr(rel, "columns", None)
        attnum = None
        if what == "table":
            col = rel.column(names[-1])  # type: ignore[union-attr]
            attnum = col.attnum if col is not None else None
        elif what == "view":
            attnum = next(
                (i for i, c in enumerate(cols or (), start=1) if c.name == names[-1]), None
            )
        else:
            raise PgError(
                "0A000", f"COMMENT ON COLUMN of a {what} is not supported by walsender-proxy"
            )
        if attnum is None:
            raise PgError(
                "42703", f'column "{names[-1]}" of relation "{".".join(names[:-1])}" does not exist'
            )
        return pg_class, oid, attnum
    if kind == _O.OBJECT_SCHEMA:
        name = _names(s.object)[0]
        ns = tx.catalog().schemas.get(name)
        if ns is None:
            raise PgError("3F000", f'schema "{name}" does not exist')
        return pgcatalog_defs.PG_CATALOG["pg_namespace"].oid, ns, 0
    if kind == _O.OBJECT_TABCONSTRAINT:
        names = _names(s.object)
        what, _oid, rel = _relation(tx, names[:-1])
        con = names[-1]
        if what == "table":
            if rel.primary_key and rel.pkey_name == con:  # type: ignore[union-attr]
                return (
                    pgcatalog_defs.PG_CATALOG["pg_constraint"].oid,
                    pgcatalog.synthetic_oid(rel.oid, pgcatalog_defs.PKEY_CONSTRAINT),
                    0,
                )  # type: ignore[union-attr]
            ix = rel.index(con)  # type: ignore[union-attr]
            if ix is not None and ix.constraint:
                return pgcatalog_defs.PG_CATALOG["pg_constraint"].oid, ix.constraint, 0
            for fk in rel.foreign_keys:  # type: ignore[union-attr]
                if fk.name == con:
                    return pgcatalog_defs.PG_CATALOG["pg_constraint"].oid, fk.oid, 0
            for ck in rel.checks:  # type: ignore[union-attr]
                if ck.name == con:
                    return pgcatalog_defs.PG_CATALOG["pg_constraint"].oid, ck.oid, 0
        raise PgError("42704", f'constraint "{con}" for table "{names[-2]}" does not exist')
    if kind in (_O.OBJECT_DOMAIN, _O.OBJECT_TYPE, _O.OBJECT_DOMCONSTRAINT):
        return _domain_address(tx, s)
    if kind == _O.OBJECT_PUBLICATION:
        name = s.object.sval  # type: ignore[union-attr]
        pub = tx.catalog().publications.get(name)
        if pub is None:
            raise PgError("42704", f'publication "{name}" does not exist')
        return pgcatalog_defs.PG_CATALOG["pg_publication"].oid, pub.oid, 0
    raise PgError(
        "0A000",
        f"COMMENT ON {kind.name.removeprefix('OBJECT_').replace('_', ' ')} is not supported by walsender-proxy",
    )


def _domain_address(tx: Transaction, s: ast.CommentStmt) -> tuple[int, int, int]:
    """COMMENT ON DOMAIN, ON TYPE of a domain or an enum, ON CONSTRAINT … ON DOMAIN."""

    tn = s.object[0] if s.objtype == _O.OBJECT_DOMCONSTRAINT else s.object
    en = tx.enum(".".join(n.sval for n in tn.names)) if s.objtype == _O.OBJECT_TYPE and len(tn.names) <= 2 else None
    if en is not None:  # (COMMENT ON TYPE of an enum)
        return pgcatalog_defs.PG_CATALOG["pg_type"].oid, en.oid, 0
    dom = domain_named(tx, [n.sval for n in tn.names], as_written=True)
    if s.objtype != _O.OBJECT_DOMCONSTRAINT:
        return pgcatalog_defs.PG_CATALOG["pg_type"].oid, dom.oid, 0
    con = s.object[1].sval
    check = next((c for c in dom.checks if c.name == con), None)
    if check is None:
        raise PgError("42704", f'constraint "{con}" for domain {dom.name} does not exist')
    return pgcatalog_defs.PG_CATALOG["pg_constraint"].oid, check.oid, 0
