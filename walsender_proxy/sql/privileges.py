"""Owners and privileges of relations and schemas, as PostgreSQL 15 checks them (aclchk.c).

An object's owner holds every privilege on it and alone may alter, drop or grant it; other
roles hold what its ACL grants them or PUBLIC. Superusers pass every check. The catalog
keeps each object's :class:`~decoding.catalog.Ownership` (an object not listed belongs to
the database's owner with the default ACL); this module reads and edits them and raises
PostgreSQL's 42501 texts. A role holds what is granted to it, to PUBLIC, and to the roles
it is a member of through INHERIT roles (for the database's owner, ``pg_database_owner``),
and owns what those roles own; members of ``pg_read_all_data`` and ``pg_write_all_data``
read and write every table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from decoding.catalog import PUBLIC_SCHEMA_OID, AclItem, Catalog, Ownership, Table
from decoding.errors import PgError
from walsender_proxy.backend.roles import PREDEFINED, RoleStore
from walsender_proxy.lake.view_ddl import described
from walsender_proxy.sql.pgcatalog_defs import quote_ident

#: The grantee PUBLIC in an ACL.
PUBLIC = 0
#: pg_database_owner: the database's owner is its one member.
PG_DATABASE_OWNER = 6171

#: Every privilege of each kind of object, in PostgreSQL's order of letters.
ALL = {"table": "arwdDxt", "view": "arwdDxt", "sequence": "rwU", "schema": "UC", "database": "CTc", "function": "X", "column": "arwx"}
#: The OID of the database the proxy serves (pg_database's row for it).
DATABASE_OID = 5
#: The view whose query is being analysed: what it reads is checked as its owner
#: (PostgreSQL checks a view's relations with the view owner's privileges).
READ_AS: ContextVar[int | None] = ContextVar("read_as", default=None)
#: False while CREATE VIEW analyses its query: reads are checked when the view is used,
#: as its owner, not when it is made.
CHECK_READS: ContextVar[bool] = ContextVar("check_reads", default=True)

#: Privilege names and their letters.
LETTERS = {
    "INSERT": "a", "SELECT": "r", "UPDATE": "w", "DELETE": "d", "TRUNCATE": "D",
    "REFERENCES": "x", "TRIGGER": "t", "USAGE": "U", "CREATE": "C", "CONNECT": "c",
    "TEMPORARY": "T", "TEMP": "T", "EXECUTE": "X",
}  # fmt: skip
NAMES = {v: k for k, v in LETTERS.items() if k != "TEMP"}


#: Predefined roles whose members read, or write, every table (aclchk.c's checks).
PG_READ_ALL_DATA = 6181
PG_WRITE_ALL_DATA = 6182
PG_READ_ALL_SETTINGS = 3374
PG_READ_ALL_STATS = 3375


@dataclass(frozen=True, slots=True)
class Who:
    """The role a check is made for (PostgreSQL's current user), the database's owner (the
    one member of pg_database_owner), and the roles whose privileges it uses: itself and
    those it is a member of through INHERIT roles (has_privs_of_role)."""

    name: str
    oid: int
    superuser: bool
    database_owner: int
    roles: frozenset[int] = frozenset()
    #: every role it is a member of, INHERIT or not (is_member_of_role: SET ROLE, OWNER TO)
    member_of: frozenset[int] = frozenset()

    def is_member(self, role: int) -> bool:
        return self.superuser or role == self.oid or role in self.member_of

    def reads_all_settings(self) -> bool:
        """It may see superuser-only settings (pg_read_all_settings)."""
        return self.superuser or self.uses(PG_READ_ALL_SETTINGS)

    def uses(self, role: int) -> bool:
        """It has the privileges of ``role`` (PUBLIC's are everyone's)."""
        return (
            role == self.oid
            or role == PUBLIC
            or role in self.roles
            or (role == PG_DATABASE_OWNER and self.database_owner in (self.oid, *self.roles))
        )


def ownership(cat: Catalog, oid: int, database_owner: int) -> Ownership:
    """The object's owner and ACL; schema public as PostgreSQL 15 creates it (owned by
    pg_database_owner, which may use and create in it; PUBLIC may use it)."""
    own = cat.owners.get(oid)
    if own is not None:
        return own
    if oid == PUBLIC_SCHEMA_OID:
        return Ownership(
            PG_DATABASE_OWNER,
            (AclItem(PG_DATABASE_OWNER, PG_DATABASE_OWNER, "UC"), AclItem(PUBLIC, PG_DATABASE_OWNER, "U")),
        )
    return Ownership(database_owner)


def effective_acl(own: Ownership, kind: str) -> tuple[AclItem, ...]:
    """The ACL as acldefault() fills in a NULL one: the owner holds everything."""
    if own.acl is not None:
        return own.acl
    return _acldefault(kind, own.owner)


def _acldefault(kind: str, owner: int) -> tuple[AclItem, ...]:
    """acldefault(): the owner holds everything; PUBLIC may connect to a database and
    create temporary tables in it, and execute a function (PUBLIC's entry first)."""
    if kind == "database":
        return (AclItem(PUBLIC, owner, "Tc"), AclItem(owner, owner, ALL[kind]))
    if kind == "function":
        return (AclItem(PUBLIC, owner, "X"), AclItem(owner, owner, ALL[kind]))
    return (AclItem(owner, owner, ALL[kind]),)


def held(cat: Catalog, who: Who, oid: int, kind: str, *, grantable: bool = False) -> str:
    """The letters ``who`` holds on the object (with grant option only, if asked)."""
    if who.superuser:
        return ALL[kind]
    own = ownership(cat, oid, who.database_owner)
    out = ""
    for item in effective_acl(own, kind):
        if who.uses(item.grantee):
            out += item.grantable if grantable else item.privileges
    if grantable and who.uses(own.owner) and own.owner != PUBLIC:
        out += ALL[kind]  # (an owner may always grant)
    if not grantable and kind in ("table", "view", "sequence") and who.uses(PG_READ_ALL_DATA):
        out += "r"
    if not grantable and kind in ("table", "view") and who.uses(PG_WRITE_ALL_DATA):
        out += "awd"
    if not grantable and kind == "schema" and (who.uses(PG_READ_ALL_DATA) or who.uses(PG_WRITE_ALL_DATA)):
        out += "U"
    return "".join(c for c in ALL[kind] if c in out)


def held_column(cat: Catalog, who: Who, oid: int, attnum: int, *, grantable: bool = False) -> str:
    """The letters ``who`` holds on a table's column by the column's own ACL (what it
    holds on the table is :func:`held`'s), with grant option only if asked; the owner
    holds every grant option."""
    if who.superuser:
        return ALL["column"]
    own = ownership(cat, oid, who.database_owner)
    out = "".join(it.grantable if grantable else it.privileges for it in own.column_acl(attnum) if who.uses(it.grantee))
    if grantable and who.uses(own.owner) and own.owner != PUBLIC:
        out += ALL["column"]
    return "".join(c for c in ALL["column"] if c in out)


def columns_with(cat: Catalog, who: Who, table: Table, letter: str) -> frozenset[str]:
    """The columns of ``table`` on which ``who`` holds ``letter`` by column privileges."""
    return frozenset(c.name for c in table.columns if letter in held_column(cat, who, table.oid, c.attnum))


def require_columns(cat: Catalog, who: Who, table: Table, letter: str, names: Iterable[str], kind: str = "table") -> None:
    """ExecCheckRTEPerms for one privilege of a table: held on the table, or on each of
    the columns named (on one column at least when none is named); 42501 ``permission
    denied for table t`` otherwise."""
    if who.superuser or letter in held(cat, who, table.oid, kind):
        return
    allowed = columns_with(cat, who, table, letter)
    wanted = set(names)
    if (wanted and not wanted <= allowed) or (not wanted and not allowed):
        raise PgError("42501", f"permission denied for {kind} {table.name}")


def is_owner(cat: Catalog, who: Who, oid: int) -> bool:
    if who.superuser:
        return True
    owner = ownership(cat, oid, who.database_owner).owner
    return owner != PUBLIC and who.uses(owner)


def require(cat: Catalog, who: Who, oid: int, kind: str, name: str, letters: str) -> None:
    """42501 ``permission denied for table t`` unless ``who`` holds every letter."""
    have = held(cat, who, oid, kind)
    if any(c not in have for c in letters):
        raise PgError("42501", f"permission denied for {kind} {name}")


def require_any(cat: Catalog, who: Who, oid: int, kind: str, name: str, letters: str) -> None:
    """42501 unless ``who`` holds one of the letters (nextval: USAGE or UPDATE)."""
    have = held(cat, who, oid, kind)
    if not any(c in have for c in letters):
        raise PgError("42501", f"permission denied for {kind} {name}")


def require_owner(cat: Catalog, who: Who, oid: int, kind: str, name: str) -> None:
    """42501 ``must be owner of table t`` unless ``who`` owns it (or is a superuser)."""
    if not is_owner(cat, who, oid):
        raise PgError("42501", f"must be owner of {kind} {name}")


def acl_text(acl: Iterable[AclItem], names: Mapping[int, str]) -> list[str]:
    """``aclitem`` output of each entry: ``grantee=letters/grantor`` (PUBLIC: no name;
    a letter held WITH GRANT OPTION followed by ``*``)."""

    def name(oid: int) -> str:
        return quote_ident(names.get(oid, str(oid)))

    out = []
    for item in acl:
        letters = "".join(c + ("*" if c in item.grantable else "") for c in item.privileges)
        grantee = "" if item.grantee == PUBLIC else name(item.grantee)
        out.append(f"{grantee}={letters}/{name(item.grantor)}")
    return out


def granted(acl: Sequence[AclItem], grantee: int, grantor: int, letters: str, grantable: bool, kind: str) -> tuple[AclItem, ...]:
    """The ACL after a GRANT (aclupdate's ACL_MODECHG_ADD): the grantee's entry from this
    grantor gains the letters, or a new entry is added at the end."""
    order = ALL[kind]
    out = list(acl)
    for i, item in enumerate(out):
        if item.grantee == grantee and item.grantor == grantor:
            privs = "".join(c for c in order if c in item.privileges or c in letters)
            opts = "".join(c for c in order if c in item.grantable or (grantable and c in letters))
            out[i] = AclItem(grantee, grantor, privs, opts)
            return tuple(out)
    privs = "".join(c for c in order if c in letters)
    out.append(AclItem(grantee, grantor, privs, privs if grantable else ""))
    return tuple(out)


def revoked(
    acl: Sequence[AclItem], grantee: int, grantor: int, letters: str, *, grant_option_only: bool, cascade: bool, owner: int, kind: str
) -> tuple[AclItem, ...]:
    """The ACL after a REVOKE (ACL_MODECHG_DEL): the letters (or only their grant option)
    go from the grantee's entry by this grantor; what the grantee granted on of them goes
    too with CASCADE, else 2BP01 ``dependent privileges exist``."""
    out = list(acl)
    lost_options = ""
    for i, item in enumerate(out):
        if item.grantee != grantee or item.grantor != grantor:
            continue
        lost_options = "".join(c for c in item.grantable if c in letters)
        opts = "".join(c for c in item.grantable if c not in letters)
        privs = item.privileges if grant_option_only else "".join(c for c in item.privileges if c not in letters)
        out[i] = AclItem(grantee, grantor, privs, opts)
    if lost_options and grantee not in (PUBLIC, owner):
        dependent = [it for it in out if it.grantor == grantee and any(c in it.privileges for c in lost_options)]
        if dependent and not cascade:
            raise PgError("2BP01", "dependent privileges exist", hint="Use CASCADE to revoke them too.")
        for it in dependent:
            out = list(revoked(out, it.grantee, grantee, lost_options, grant_option_only=False, cascade=True, owner=owner, kind=kind))
    return tuple(it for it in out if it.privileges)


def dependents(cat: Catalog, role: int, names: Mapping[int, str] | None = None) -> list[str]:
    """What keeps a role from being dropped (pg_shdepend's owner and ACL entries), as
    DROP ROLE's DETAIL lists them."""
    objects: dict[int, tuple[str, str]] = {}
    for t in cat.tables.values():
        objects[t.oid] = ("table", t.qualified_name if t.schema != "public" else t.name)
    for v in cat.views.values():
        objects[v.oid] = ("view", v.qualified_name if v.schema != "public" else v.name)
    for q in cat.sequences.values():
        objects[q.oid] = ("sequence", q.qualified_name if q.schema != "public" else q.name)
    for name, oid in cat.schemas.items():
        objects[oid] = ("schema", name)
    for fn in cat.functions.values():
        objects[fn.oid] = ("function", described(fn, ("public",)).removeprefix("function "))
    out = []
    for oid in sorted(cat.owners):
        own = cat.owners[oid]
        if oid not in objects:
            continue
        kind, name = objects[oid]
        if own.owner == role:
            out.append(f"owner of {kind} {name}")
        elif own.acl is not None and any(role in (a.grantee, a.grantor) for a in own.acl):
            out.append(f"privileges for {kind} {name}")
        table = cat.tables.get(oid)
        for num, acl in own.columns if table is not None else ():
            column = next((c.name for c in table.columns if c.attnum == num), None)
            if column is not None and own.owner != role and any(role in (a.grantee, a.grantor) for a in acl):
                out.append(f"privileges for column {column} of {kind} {name}")
    return default_dependents(cat, role, names) + out


def default_dependents(cat: Catalog, role: int, names: Mapping[int, str] | None = None) -> list[str]:
    """What ALTER DEFAULT PRIVILEGES entries keep a role (DROP ROLE's DETAIL lines)."""
    words = {"r": "relations", "S": "sequences", "n": "schemas", "f": "functions"}
    schemas = {oid: name for name, oid in cat.schemas.items()}
    out = []
    for key, acl in sorted(cat.default_acls.items()):
        owner, ns, objtype = key.split(":")
        what = f"default privileges on new {words[objtype]} belonging to role {(names or {}).get(int(owner), owner)}"
        if int(ns):
            what += f" in schema {schemas.get(int(ns), ns)}"
        if int(owner) == role:
            out.append(f"owner of {what}")
        elif any(role in (a.grantee, a.grantor) for a in acl):
            out.append(f"privileges for {what}")
    return out


#: pg_default_acl's object types by the kind of object created.
DEFAULT_ACL_TYPES = {"table": "r", "view": "r", "sequence": "S", "schema": "n", "function": "f"}
_DEFAULT_KINDS = {"r": "table", "S": "sequence", "n": "schema", "f": "function"}


def default_key(role: int, namespace: int, objtype: str) -> str:
    return f"{role}:{namespace}:{objtype}"


def hardwired(objtype: str, owner: int) -> tuple[AclItem, ...]:
    """acldefault() of the kind of object ``objtype`` stands for."""
    return _acldefault(_DEFAULT_KINDS[objtype], owner)


def merged(left: Sequence[AclItem], right: Sequence[AclItem], kind: str) -> tuple[AclItem, ...]:
    """aclmerge: ``right``'s entries added to ``left``'s."""
    out = tuple(left)
    for item in right:
        out = granted(out, item.grantee, item.grantor, item.privileges, False, kind)
        if item.grantable:
            out = granted(out, item.grantee, item.grantor, item.grantable, True, kind)
    return out


def new_object_acl(cat: Catalog, owner: int, namespace: int, kind: str) -> tuple[AclItem, ...] | None:
    """get_user_default_acl: the ACL an object ``owner`` creates in ``namespace`` starts
    with — the owner's ALTER DEFAULT PRIVILEGES for every schema (else the hard-wired
    default) merged with those for this schema; None when that is just the default."""
    objtype = DEFAULT_ACL_TYPES.get(kind)
    if objtype is None:
        return None
    glob = cat.default_acls.get(default_key(owner, 0, objtype))
    here = cat.default_acls.get(default_key(owner, namespace, objtype)) if objtype != "n" else None
    if glob is None and here is None:
        return None
    base = glob if glob is not None else hardwired(objtype, owner)
    result = merged(base, here or (), _DEFAULT_KINDS[objtype])
    if not result:  # (aclmerge of nothing is NULL: the default, whatever was revoked)
        return None
    if same_acl(result, hardwired(objtype, owner)):
        return None
    return tuple(sorted(result, key=lambda i: (i.grantee, i.grantor)))  # (aclitemsort)


def same_acl(a: Sequence[AclItem], b: Sequence[AclItem]) -> bool:
    """The same entries, whatever their order (aclequal after aclitemsort)."""
    return sorted(a, key=lambda i: (i.grantee, i.grantor)) == sorted(b, key=lambda i: (i.grantee, i.grantor))


def make_who(roles: RoleStore, name: str) -> Who:
    """``name`` as privilege checks see it, with the roles it is a member of."""
    me = roles.get(name)
    every = roles.all()
    db_owner = every[0].oid if every else PG_DATABASE_OWNER

    def oids(names: set[str]) -> frozenset[int]:
        out = set()
        for n in names:
            r = roles.get(n)
            oid = r.oid if r is not None else PREDEFINED.get(n)
            if oid is not None:
                out.add(oid)
        return frozenset(out)

    if me is None and name in PREDEFINED:  # (SET ROLE pg_read_all_data)
        return Who(name, PREDEFINED[name], False, db_owner, oids(roles.member_closure(name)), oids(roles.member_closure(name)))
    if me is None:  # (a session whose role was dropped: as PostgreSQL, no privileges)
        return Who(name, -1, False, db_owner)
    return Who(name, me.oid, me.superuser, db_owner, oids(roles.member_closure(name, inheriting=True)), oids(roles.member_closure(name)))


def may_connect(cat: Catalog, who: Who) -> bool:
    """CONNECT on the database (CheckMyDatabase's check as a session starts)."""
    return who.superuser or "c" in held(cat, who, DATABASE_OID, "database")
