"""GRANT, REVOKE and OWNER TO on tables, views, sequences, schemas, the database and SQL
functions (aclchk.c's ExecuteGrantStmt and ALTER … OWNER TO), ALTER DEFAULT PRIVILEGES and
GRANT of a role, with PostgreSQL 15's errors and warnings.

Privileges on other objects (columns, types, languages, …) are refused with 0A000: the
proxy keeps no ACL for them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from pglast import ast, enums

from decoding.catalog import AclItem, Ownership
from decoding.errors import PgError
from walsender_proxy.backend.outcomes import Notice
from walsender_proxy.backend.roles import PREDEFINED
from walsender_proxy.lake import Transaction
from walsender_proxy.lake.view_ddl import described
from walsender_proxy.sql import privileges, sql_functions
from walsender_proxy.sql.ddl_names import unsupported
from walsender_proxy.sql.pg_functions import PG15_FUNCTIONS
from walsender_proxy.sql.privilege_checks import Rel, find, schema_usage
from walsender_proxy.sql.privileges import ALL, LETTERS, PUBLIC, Who

OT = enums.ObjectType
RS = enums.RoleSpecType
#: (role name) → its OID, or None when there is no such role.
RoleOid = Callable[[str], "int | None"]

_KIND_WORD = {
    OT.OBJECT_TABLE: "table", OT.OBJECT_SEQUENCE: "sequence", OT.OBJECT_SCHEMA: "schema", OT.OBJECT_DATABASE: "database",
    OT.OBJECT_FUNCTION: "function", OT.OBJECT_PROCEDURE: "function", OT.OBJECT_ROUTINE: "function",
}  # fmt: skip
#: How PostgreSQL's messages name the kind of object a GRANT names.
_SHOWN = {OT.OBJECT_TABLE: "relation", OT.OBJECT_PROCEDURE: "procedure", OT.OBJECT_ROUTINE: "routine"}
_REFUSED = {
    OT.OBJECT_TYPE: "GRANT on types",
    OT.OBJECT_DOMAIN: "GRANT on domains",
    OT.OBJECT_LANGUAGE: "GRANT on languages",
    OT.OBJECT_LARGEOBJECT: "GRANT on large objects",
    OT.OBJECT_TABLESPACE: "GRANT on tablespaces",
    OT.OBJECT_FDW: "GRANT on foreign-data wrappers",
    OT.OBJECT_FOREIGN_SERVER: "GRANT on foreign servers",
    OT.OBJECT_PARAMETER_ACL: "GRANT on parameters",
}


def role_of(spec: ast.RoleSpec, who: Who, session_user: tuple[str, int], role_oid: RoleOid) -> int:
    """A grantee or new owner's OID (PUBLIC: 0); 42704 for a role that does not exist."""
    if spec.roletype == RS.ROLESPEC_PUBLIC:
        return PUBLIC
    if spec.roletype in (RS.ROLESPEC_CURRENT_USER, RS.ROLESPEC_CURRENT_ROLE):
        return who.oid
    if spec.roletype == RS.ROLESPEC_SESSION_USER:
        return session_user[1]
    oid = role_oid(spec.rolename)
    if oid is None:
        raise PgError("42704", f'role "{spec.rolename}" does not exist')
    return oid


def _grantor(spec: ast.RoleSpec, who: Who, session_user: tuple[str, int], role_oid: RoleOid) -> int:
    """GRANTED BY's role (get_rolespec_oid: PUBLIC is no role)."""
    if spec.roletype == RS.ROLESPEC_PUBLIC:
        raise PgError("42704", 'role "public" does not exist')
    return role_of(spec, who, session_user, role_oid)


#: Column privileges a statement names: (letters, column names), in its order.
ColumnPrivileges = list[tuple[str, list[str]]]


def _letters(stmt: ast.GrantStmt, word: str, shown: str | None = None) -> str | None:
    """The letters the statement names on the object itself (None: ALL)."""
    return _privileges_named(stmt, word, shown)[0]


def _privileges_named(stmt: ast.GrantStmt, word: str, shown: str | None = None) -> tuple[str | None, ColumnPrivileges]:
    """The letters the statement names on the object (None: ALL) and on columns; 0LP01
    for one the object kind lacks (``shown``: the kind as the message names it)."""
    if stmt.privileges is None:
        return None, []
    allowed = ALL["table"] + ALL["sequence"] if word == "table" else ALL[word]
    shown = shown or ("relation" if word == "table" else word)
    out = ""
    columns: ColumnPrivileges = []
    for p in stmt.privileges:
        name = (p.priv_name or "").upper()
        if p.cols and word != "table":
            raise PgError("0LP01", "column privileges are only valid for relations")
        if p.cols and p.priv_name is None:  # (ALL (columns))
            columns.append((ALL["column"], [c.sval for c in p.cols]))
            continue
        letter = LETTERS.get(name)
        if letter is None:
            if name in ("MAINTAIN", "SET", "ALTER SYSTEM"):
                raise PgError("0LP01", f"invalid privilege type {name} for {'column' if p.cols else shown}")
            raise PgError("42601", f'unrecognized privilege type "{p.priv_name}"')
        if p.cols:
            if letter not in ALL["column"]:
                raise PgError("0LP01", f"invalid privilege type {name} for column")
            columns.append((letter, [c.sval for c in p.cols]))
            continue
        if letter not in allowed:  # (ExecuteGrantStmt's check: the name as written)
            raise PgError("0LP01", f"invalid privilege type {name} for {shown}")
        out += letter
    return out, columns


def _targets(stmt: ast.GrantStmt, tx: Transaction, who: Who, path: Sequence[str], word: str, database: str) -> list[Rel]:
    cat = tx.catalog()
    out: list[Rel] = []
    if stmt.targtype == enums.GrantTargetType.ACL_TARGET_ALL_IN_SCHEMA:
        for s in stmt.objects:
            schema = s.sval
            if schema not in cat.schemas:
                raise PgError("3F000", f'schema "{schema}" does not exist')
            schema_usage(cat, who, schema)
            if word == "function":  # (every user function is a plain function: none for PROCEDURES)
                fns = [] if stmt.objtype == OT.OBJECT_PROCEDURE else [f for f in cat.functions.values() if f.schema == schema]
                rels = [Rel(f.oid, "function", f.schema, f.name) for f in fns]
            elif word == "sequence":
                rels = [Rel(q.oid, "sequence", q.schema, q.name) for q in cat.sequences.values() if q.schema == schema]
            else:
                rels = [Rel(t.oid, "table", t.schema, t.name) for t in cat.tables.values() if t.schema == schema]
                rels += [Rel(v.oid, "view", v.schema, v.name) for v in cat.views.values() if v.schema == schema]
            out += sorted(rels, key=lambda r: r.oid)
        return out
    if word == "database":
        for d in stmt.objects:
            if d.sval != database:
                if d.sval in ("template0", "template1"):
                    raise unsupported("GRANT on template databases")
                raise PgError("3D000", f'database "{d.sval}" does not exist')
            out.append(Rel(privileges.DATABASE_OID, "database", "", d.sval))
        return out
    if word == "function":
        return [_function(stmt, tx, who, path, obj) for obj in stmt.objects]
    if word == "schema":
        for s in stmt.objects:
            oid = cat.schemas.get(s.sval)
            if oid is None:
                raise PgError("3F000", f'schema "{s.sval}" does not exist')
            out.append(Rel(oid, "schema", s.sval, s.sval))
        return out
    for rv in stmt.objects:
        if rv.schemaname is not None:
            schema_usage(cat, who, rv.schemaname)
        rel = find(cat, rv.schemaname, rv.relname, path)
        if rel is None or rel.kind == "index":
            shown = f"{rv.schemaname}.{rv.relname}" if rv.schemaname else rv.relname
            raise PgError("42P01", f'relation "{shown}" does not exist')
        out.append(rel)
    return out


def _function(stmt: ast.GrantStmt, tx: Transaction, who: Who, path: Sequence[str], obj: ast.ObjectWithArgs) -> Rel:
    """The user function an ObjectWithArgs names (LookupFuncWithArgs); a built-in one is
    refused, as the proxy keeps no ACLs for pg_catalog's functions."""
    names = [n.sval for n in obj.objname]
    if len(names) == 2 and names[0] in tx.catalog().schemas:
        schema_usage(tx.catalog(), who, names[0])
    try:
        fn = sql_functions.lookup(tx, obj, path)
    except PgError as e:
        if e.sqlstate == "42883" and names[-1] in PG15_FUNCTIONS and (len(names) == 1 or names[0] == "pg_catalog"):
            raise unsupported("GRANT on built-in functions") from None
        raise
    if stmt.objtype == OT.OBJECT_PROCEDURE:
        raise PgError("42809", f"{described(fn, path).removeprefix('function ')} is not a procedure")
    return Rel(fn.oid, "function", fn.schema, fn.name)


def grant(
    tx: Transaction, stmt: ast.GrantStmt, who: Who, session_user: tuple[str, int], role_oid: RoleOid,
    path: Sequence[str], notices: list[Notice], database: str = "postgres",
) -> str:
    """Run a GRANT or REVOKE; returns its command tag."""
    verb = "GRANT" if stmt.is_grant else "REVOKE"
    if stmt.objtype in _REFUSED or stmt.objtype not in _KIND_WORD:
        raise unsupported(_REFUSED.get(stmt.objtype, f"{verb} on this kind of object"))
    word = _KIND_WORD[stmt.objtype]
    if stmt.grantor is not None and _grantor(stmt.grantor, who, session_user, role_oid) != who.oid:
        raise PgError("0A000", "grantor must be current user")  # (PostgreSQL 15 records no other)
    targets = _targets(stmt, tx, who, path, word, database)
    grantees = [role_of(g, who, session_user, role_oid) for g in stmt.grantees]
    letters, columns = _privileges_named(stmt, word, _SHOWN.get(stmt.objtype))
    if stmt.is_grant and stmt.grant_option and PUBLIC in grantees:
        raise PgError("0LP01", "grant options can only be granted to roles")
    for rel in targets:
        if word == "sequence" and rel.kind != "sequence":  # (ExecGrant_Relation's check)
            raise PgError("42809", f'"{rel.name}" is not a sequence')
        if columns and rel.kind != "table":
            raise unsupported("column privileges on views and sequences")
        if letters != "":  # (only columns named: the table's own ACL stays as it is)
            _grant_on(tx, stmt, rel, letters, grantees, who, notices)
        if rel.kind == "table":
            _grant_on_columns(tx, stmt, rel, letters, columns, grantees, who, notices)
    return verb


def _grant_on(tx: Transaction, stmt: ast.GrantStmt, rel: Rel, letters: str | None, grantees: Sequence[int], who: Who, notices: list[Notice]) -> None:
    """ExecGrant_Relation and its kin: the object's own ACL."""
    cat = tx.catalog()
    kind = rel.kind
    word = _KIND_WORD[stmt.objtype]
    wanted = ALL[kind] if letters is None else letters
    if kind == "sequence" and word == "table" and letters is not None and any(c not in ALL["sequence"] for c in letters):
        notices.append(Notice("WARNING", "0LP01", f'sequence "{rel.name}" only supports USAGE, SELECT, and UPDATE privileges'))
        wanted = "".join(c for c in wanted if c in ALL["sequence"])
    elif kind in ("table", "view") and any(c not in ALL[kind] for c in wanted):
        bad = next(c for c in wanted if c not in ALL[kind])
        raise PgError("0LP01", f"invalid privilege type {privileges.NAMES[bad]} for table")
    own = privileges.ownership(cat, rel.oid, who.database_owner)
    if privileges.is_owner(cat, who, rel.oid):
        grantor = own.owner
        allowed = wanted
    else:
        options = privileges.held(cat, who, rel.oid, kind, grantable=True)
        if not options and not privileges.held(cat, who, rel.oid, kind):
            raise PgError("42501", f"permission denied for {kind} {rel.name}")
        grantor = who.oid
        allowed = "".join(c for c in wanted if c in options)
        if allowed != wanted:
            _not_all(stmt, allowed, f'"{rel.name}"', notices)
    acl = _edited(stmt, privileges.effective_acl(own, kind), grantees, grantor, allowed, own.owner, kind)
    tx.set_ownership(rel.oid, replace(own, acl=acl))


def _not_all(stmt: ast.GrantStmt, allowed: str, shown: str, notices: list[Notice]) -> None:
    """restrict_and_check_grant's WARNING: the grantor holds the grant option of some (or
    none) of what it grants or revokes."""
    if stmt.is_grant:
        text = "no privileges were granted" if not allowed else "not all privileges were granted"
        notices.append(Notice("WARNING", "01007", f"{text} for {shown}"))
    else:
        text = "no privileges could be revoked" if not allowed else "not all privileges could be revoked"
        notices.append(Notice("WARNING", "01006", f"{text} for {shown}"))


def _edited(
    stmt: ast.GrantStmt, acl: Sequence[AclItem], grantees: Sequence[int], grantor: int, allowed: str, owner: int, kind: str
) -> tuple[AclItem, ...]:
    """The ACL after the statement gives (or takes) ``allowed`` to each grantee."""
    out = tuple(acl)
    for grantee in grantees:
        if not allowed:
            break
        if stmt.is_grant:
            out = privileges.granted(out, grantee, grantor, allowed, bool(stmt.grant_option), kind)
        else:
            out = privileges.revoked(
                out, grantee, grantor, allowed, grant_option_only=bool(stmt.grant_option),
                cascade=stmt.behavior == enums.DropBehavior.DROP_CASCADE, owner=owner, kind=kind,
            )
    return out


def _grant_on_columns(
    tx: Transaction, stmt: ast.GrantStmt, rel: Rel, letters: str | None, columns: ColumnPrivileges,
    grantees: Sequence[int], who: Who, notices: list[Notice],
) -> None:
    """ExecGrant_Attribute for each column named, in column order; a table-level REVOKE
    takes the same privileges from every column too (expand_all_col_privileges)."""
    cat = tx.catalog()
    table = cat.tables[rel.oid]
    by_name = {c.name: c for c in table.columns}
    wanted: dict[int, str] = {}
    for lets, names in columns:
        for n in names:
            c = by_name.get(n)
            if c is None:
                raise PgError("42703", f'column "{n}" of relation "{rel.name}" does not exist')
            wanted[c.attnum] = wanted.get(c.attnum, "") + lets
    expanded: set[int] = set()
    table_letters = ALL["table"] if letters is None else letters
    if not stmt.is_grant and any(c in ALL["column"] for c in table_letters):
        own = privileges.ownership(cat, rel.oid, who.database_owner)
        for num, _acl in own.columns:
            if num not in wanted:
                expanded.add(num)
            wanted[num] = wanted.get(num, "") + "".join(c for c in table_letters if c in ALL["column"])
    names = {c.attnum: c.name for c in table.columns}
    for num in sorted(wanted):
        cat = tx.catalog()
        own = privileges.ownership(cat, rel.oid, who.database_owner)
        lets = "".join(c for c in ALL["column"] if c in wanted[num])
        shown = f'column "{names[num]}" of relation "{rel.name}"'
        if privileges.is_owner(cat, who, rel.oid):
            grantor, allowed = own.owner, lets
        else:
            options = privileges.held(cat, who, rel.oid, "table", grantable=True) + privileges.held_column(cat, who, rel.oid, num, grantable=True)
            holds = privileges.held(cat, who, rel.oid, "table") + privileges.held_column(cat, who, rel.oid, num)
            if not options and not holds and num not in expanded:
                raise PgError("42501", f"permission denied for {shown}")
            grantor = who.oid
            allowed = "".join(c for c in lets if c in options)
            if allowed != lets and num not in expanded:
                _not_all(stmt, allowed, shown, notices)
        acl = _edited(stmt, own.column_acl(num), grantees, grantor, allowed, own.owner, "column")
        tx.set_ownership(rel.oid, replace(own, columns=with_column_acl(own.columns, num, acl)))


def with_column_acl(
    columns: tuple[tuple[int, tuple[AclItem, ...]], ...], num: int, acl: Sequence[AclItem]
) -> tuple[tuple[int, tuple[AclItem, ...]], ...]:
    """A table's column ACLs with column ``num``'s replaced (an empty one is NULL: gone)."""
    kept = [(n, a) for n, a in columns if n != num]
    if acl:
        kept.append((num, tuple(acl)))
    return tuple(sorted(kept))


def map_column_acls(own: Ownership, fn: Callable[[tuple[AclItem, ...]], tuple[AclItem, ...] | None]) -> tuple[tuple[int, tuple[AclItem, ...]], ...]:
    """Each column ACL through ``fn`` (OWNER TO, DROP OWNED); the empty ones dropped."""
    out = []
    for num, acl in own.columns:
        new = fn(acl)
        if new:
            out.append((num, tuple(new)))
    return tuple(out)


def new_owner_acl(acl: tuple[AclItem, ...] | None, old: int, new: int) -> tuple[AclItem, ...] | None:
    """aclnewowner: the old owner's entries become the new owner's (merged into one)."""
    if acl is None:
        return None
    out: list[AclItem] = []
    for it in acl:
        grantee = new if it.grantee == old else it.grantee
        grantor = new if it.grantor == old else it.grantor
        same = next((i for i, o in enumerate(out) if o.grantee == grantee and o.grantor == grantor), None)
        if same is None:
            out.append(AclItem(grantee, grantor, it.privileges, it.grantable))
        else:
            o = out[same]
            out[same] = AclItem(grantee, grantor, "".join(sorted(set(o.privileges + it.privileges), key=(ALL["table"] + "UC").find)), "".join(sorted(set(o.grantable + it.grantable), key=(ALL["table"] + "UC").find)))
    return tuple(out)


def without_roles(acl: Sequence[AclItem], roles: Sequence[int]) -> tuple[AclItem, ...]:
    """An ACL with what was granted to ``roles`` gone, and what they granted on
    (DROP OWNED's REVOKE … CASCADE)."""
    out = [a for a in acl if a.grantee not in roles]
    gone = set(roles)
    while True:
        keep = [a for a in out if a.grantor not in gone]
        if len(keep) == len(out):
            return tuple(keep)
        gone |= {a.grantee for a in out if a.grantor in gone}
        out = keep


def change_owner(tx: Transaction, oid: int, kind: str, name: str, new: int, new_name: str, who: Who, owned: Sequence[int] = ()) -> None:
    """ALTER … OWNER TO: the owner (a superuser, or the owner giving it to a role it is a
    member of) hands the object, and the sequences it owns, over."""
    cat = tx.catalog()
    if not who.superuser:
        privileges.require_owner(cat, who, oid, kind, name)
        if not who.is_member(new):
            raise PgError("42501", f'must be member of role "{new_name}"')
    for o in (oid, *owned):
        own = privileges.ownership(cat, o, who.database_owner)
        if own.owner != new:
            columns = map_column_acls(own, lambda acl, old=own.owner: new_owner_acl(acl, old, new))
            tx.set_ownership(o, Ownership(new, new_owner_acl(own.acl, own.owner, new), columns))


_DEFAULT_TYPES = {OT.OBJECT_TABLE: "r", OT.OBJECT_SEQUENCE: "S", OT.OBJECT_SCHEMA: "n", OT.OBJECT_FUNCTION: "f"}
_DEFAULT_WORDS = {"r": "table", "S": "sequence", "n": "schema", "f": "function"}


def alter_default_privileges(
    tx: Transaction, node: ast.AlterDefaultPrivilegesStmt, who: Who, session_user: tuple[str, int],
    role_oid: RoleOid,
) -> None:
    """ALTER DEFAULT PRIVILEGES [FOR ROLE …] [IN SCHEMA …] GRANT/REVOKE … ON TABLES,
    SEQUENCES, FUNCTIONS (ROUTINES) or SCHEMAS (SetDefaultACL): entries for every schema start from the
    hard-wired default and vanish when back at it, a schema's from nothing and vanish
    when empty."""
    stmt = node.action
    objtype = _DEFAULT_TYPES.get(stmt.objtype)
    if objtype is None:
        raise unsupported("ALTER DEFAULT PRIVILEGES on types")
    roles = schemas = None
    for o in node.options or ():
        if o.defname == "roles":
            roles = list(o.arg)
        elif o.defname == "schemas":
            schemas = [n.sval for n in o.arg]
    if schemas is not None and objtype == "n":
        raise PgError("0LP01", "cannot use IN SCHEMA clause when using GRANT/REVOKE ON SCHEMAS")
    word = _DEFAULT_WORDS[objtype]
    letters = _letters(stmt, word)
    if letters is not None and objtype == "r" and any(c not in ALL["table"] for c in letters):
        bad = next(c for c in letters if c not in ALL["table"])
        raise PgError("0LP01", f"invalid privilege type {privileges.NAMES[bad]} for relation")
    grantees = [role_of(g, who, session_user, role_oid) for g in stmt.grantees]
    if stmt.is_grant and stmt.grant_option and PUBLIC in grantees:
        raise PgError("0LP01", "grant options can only be granted to roles")
    targets = [role_of(r, who, session_user, role_oid) for r in roles] if roles is not None else [who.oid]
    for spec, target in zip(roles if roles is not None else [None], targets, strict=True):
        if not who.is_member(target):
            raise PgError("42501", f'must be member of role "{spec.rolename if spec is not None else who.name}"')
    cat = tx.catalog()
    namespaces = [0]
    if schemas is not None:
        namespaces = []
        for name in schemas:
            oid = cat.schemas.get(name)
            if oid is None:
                raise PgError("3F000", f'schema "{name}" does not exist')
            namespaces.append(oid)
    kind = word
    wanted = ALL[kind] if letters is None else letters
    for target in targets:
        for ns in namespaces:
            key = privileges.default_key(target, ns, objtype)
            current = tx.catalog().default_acls.get(key)
            if current is None:
                current = privileges.hardwired(objtype, target) if ns == 0 else ()
            acl = tuple(current)
            for grantee in grantees:
                if stmt.is_grant:
                    acl = privileges.granted(acl, grantee, target, wanted, bool(stmt.grant_option), kind)
                else:
                    acl = privileges.revoked(
                        acl, grantee, target, wanted, grant_option_only=bool(stmt.grant_option),
                        cascade=True, owner=target, kind=kind,
                    )
            back = privileges.same_acl(acl, privileges.hardwired(objtype, target)) if ns == 0 else not acl
            tx.set_default_acl(key, None if back else acl)


def grant_roles(
    roles: Any, granted: Sequence[str], members: Sequence[str], who: Who, *, is_grant: bool,
    admin: bool, admin_only: bool, notices: list[Notice], grantor: str | None = None,
) -> None:
    """GRANT/REVOKE role TO/FROM role (AddRoleMems and DelRoleMems of PostgreSQL 15): a
    superuser, a CREATEROLE role (a superuser role only by a superuser) or one holding the
    role WITH ADMIN OPTION may; a circle of memberships is 0LP01."""

    me = roles.get(who.name)
    for name in granted:
        role = roles.get(name)
        if role is None and name not in PREDEFINED:
            raise PgError("42704", f'role "{name}" does not exist')
        if name == "pg_database_owner":
            raise PgError("XX000", 'role "pg_database_owner" cannot have explicit members')  # (PostgreSQL's elog)
        if role is not None and role.superuser and not who.superuser:
            raise PgError("42501", "must be superuser to alter superusers")
        if not (who.superuser or (me is not None and me.createrole) or _admin_of(roles, who.name, name)):
            raise PgError("42501", f'must have admin option on role "{name}"')
        for member in members:
            if roles.get(member) is None:
                raise PgError("42704", f'role "{member}" does not exist')
            if is_grant:
                if member in roles.member_closure(name):  # (a circle, itself included)
                    raise PgError("0LP01", f'role "{name}" is a member of role "{member}"')
                said = roles.grant_membership(name, member, grantor or who.name, admin)
                if said is not None:
                    notices.append(Notice("NOTICE", "00000", said))
            elif not roles.revoke_membership(name, member, admin_only=admin_only):
                notices.append(Notice("WARNING", "01000", f'role "{member}" is not a member of role "{name}"'))


def _admin_of(roles: Any, who: str, role: str) -> bool:
    r = roles.get(who)
    return r is not None and any(m == role and a for m, _g, a in r.member_of)
