"""Roles and ownership statements: CREATE/ALTER/DROP ROLE, GRANT/REVOKE of a role, SET
ROLE and SET SESSION AUTHORIZATION, ALTER … OWNER TO, REASSIGN OWNED and DROP OWNED, as
PostgreSQL 15 runs them. The executor hands each statement over; what a session needs of
it is :class:`RoleSession`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from pglast import ast, enums, parse_sql

from decoding.catalog import Ownership
from decoding.errors import PgError
from walsender_proxy.backend.outcomes import Done, Notice, Outcome, ParameterChanged
from walsender_proxy.backend.roles import PREDEFINED
from walsender_proxy.backend.settings import Settings
from walsender_proxy.lake import Transaction
from walsender_proxy.lake.sequence_ddl import owned_sequences
from walsender_proxy.sql import (
    composite_sql,
    ddl_names,
    domain_sql,
    enum_sql,
    grant_sql,
    pgcatalog_defs,
    privilege_checks,
    privileges,
)
from walsender_proxy.sql.statement_nodes import set_arg_text


class RoleSession(Protocol):
    """What the role statements read and run of a session."""

    #: the server's services (``roles``: the role store)
    services: Any
    settings: Settings
    notices: list[Notice]
    explicit: bool
    database: str
    login_user: str

    @property
    def user(self) -> str: ...

    @property
    def session_user(self) -> str: ...

    def who(self, role: str | None = None) -> privileges.Who: ...

    def statement_tx(self) -> Transaction: ...

    def catalog_now(self) -> Any: ...

    def run_node(self, node: Any, text: str, params: list[Any]) -> Iterator[Outcome]: ...


class RoleStatements:
    """The role and ownership statements of one session."""

    def __init__(self, ex: RoleSession) -> None:
        self.ex = ex

    def role_oid(self, name: str) -> int | None:
        r = self.ex.services.roles.get(name)
        return r.oid if r is not None else None

    def session_role(self) -> tuple[str, int]:
        name = self.ex.session_user
        return name, self.role_oid(name) or -1

    def role(self, s: Any) -> str:
        """CREATE/ALTER/DROP ROLE with PostgreSQL 15's permission rules (user.c): a
        superuser may do anything; a CREATEROLE role may create, alter and drop ordinary
        roles (not superuser or replication ones, nor give those attributes); any role may
        change its own password."""
        me = self.ex.services.roles.get(self.ex.user)
        su = me is not None and me.superuser
        createrole = su or (me is not None and me.createrole)
        if isinstance(s, ast.DropRoleStmt):
            if not createrole:
                raise PgError("42501", "permission denied to drop role")
            for r in s.roles:
                role = self.ex.services.roles.get(r.rolename)
                if role is None:
                    if s.missing_ok:
                        self.ex.notices.append(Notice("NOTICE", "00000", f'role "{r.rolename}" does not exist, skipping'))
                        continue
                    raise PgError("42704", f'role "{r.rolename}" does not exist')
                if r.rolename == self.ex.user:
                    raise PgError("55006", "current user cannot be dropped")
                if r.rolename == self.ex.session_user:
                    raise PgError("55006", "session user cannot be dropped")
                if role.superuser and not su:
                    raise PgError("42501", "must be superuser to drop superusers")
                cat = self.ex.catalog_now()
                depends = privileges.dependents(cat, role.oid, {r.oid: r.name for r in self.ex.services.roles.all()})
                if depends:
                    raise PgError("2BP01", f'role "{r.rolename}" cannot be dropped because some objects depend on it', detail="\n".join(depends))
                self.ex.services.roles.drop(r.rolename)
            return "DROP ROLE"
        attrs: dict[str, bool | int] = {}
        memberships: list[tuple[str, list[str]]] = []
        password: str | None = None
        clear = False
        for o in s.options or ():
            if o.defname == "password":
                if o.arg is None:
                    clear = True
                else:
                    password = o.arg.sval
            elif o.defname == "connectionlimit":
                limit = int(o.arg.ival)
                if limit < -1:
                    raise PgError("22023", f"invalid connection limit: {limit}")
                attrs["connlimit"] = limit
            elif o.defname == "sysid":
                self.ex.notices.append(Notice("NOTICE", "00000", "SYSID can no longer be specified"))
            elif o.defname in ("superuser", "login", "createdb", "createrole", "isreplication", "canlogin", "inherit", "bypassrls"):
                name = {"isreplication": "replication", "canlogin": "login"}.get(o.defname, o.defname)
                flag = getattr(o.arg, "boolval", None)
                attrs[name] = bool(o.arg.ival if flag is None else flag)
            elif o.defname in ("addroleto", "rolemembers", "adminmembers"):
                memberships.append((o.defname, [self.spec_name(r) for r in o.arg]))
            else:
                raise ddl_names.unsupported(f"role option {o.defname}")
        if isinstance(s, ast.CreateRoleStmt):
            if attrs.get("superuser") and not su:
                raise PgError("42501", "must be superuser to create superusers")
            if attrs.get("replication") and not su:
                raise PgError("42501", "must be superuser to create replication users")
            if attrs.get("bypassrls") and not su:
                raise PgError("42501", "must be superuser to create bypassrls users")
            if not createrole:
                raise PgError("42501", "permission denied to create role")
            if s.stmt_type == enums.RoleStmtType.ROLESTMT_ROLE:
                attrs.setdefault("login", False)
            self.ex.services.roles.create(s.role, password=password, **attrs)
            self._memberships(s.role, memberships)  # (refused: the rollback takes the role back)
            return "CREATE ROLE"
        target = self.ex.services.roles.get(s.role.rolename)
        if target is None:
            raise PgError("42704", f'role "{s.role.rolename}" does not exist')
        if target.superuser or "superuser" in attrs:
            if not su:
                raise PgError("42501", "must be superuser to alter superuser roles or change superuser attribute")
        elif target.replication or "replication" in attrs:
            if not su:
                raise PgError("42501", "must be superuser to alter replication roles or change replication attribute")
        elif "bypassrls" in attrs:
            if not su:
                raise PgError("42501", "must be superuser to change bypassrls attribute")
        elif not createrole and (attrs or memberships or (password is None and not clear) or target.name != self.ex.user):
            raise PgError("42501", "permission denied")
        if attrs or password is not None or clear:
            self.ex.services.roles.alter(s.role.rolename, password=password, clear_password=clear, **attrs)
        elif self.ex.services.roles.get(s.role.rolename) is None:
            raise PgError("42704", f'role "{s.role.rolename}" does not exist')
        if memberships:  # ALTER GROUP g ADD/DROP USER u
            who = self.ex.who()
            for _kind, names in memberships:
                grant_sql.grant_roles(
                    self.ex.services.roles, [s.role.rolename], names, who, is_grant=s.action == 1,
                    admin=False, admin_only=False, notices=self.ex.notices,
                )
            return "ALTER ROLE"
        return "ALTER ROLE"

    def comment(self, s: ast.CommentStmt) -> None:
        """COMMENT ON ROLE: by a superuser, or a CREATEROLE role for a role that is not a
        superuser (check_object_ownership); '' or NULL removes the comment."""
        name = s.object.sval
        target = self.ex.services.roles.get(name)
        if target is None:
            raise PgError("42704", f'role "{name}" does not exist')
        me = self.ex.services.roles.get(self.ex.user)
        if target.superuser:
            if me is None or not me.superuser:
                raise PgError("42501", "must be superuser")
        elif me is None or not (me.superuser or me.createrole):
            raise PgError("42501", "must have CREATEROLE privilege")
        self.ex.services.roles.alter(name, comment=s.comment or None)

    def _memberships(self, role: str, memberships: list[tuple[str, list[str]]]) -> None:
        """CREATE ROLE's IN ROLE (it joins them), ROLE and ADMIN (they join it)."""
        who = self.ex.who()
        for kind, names in memberships:
            if kind == "addroleto":
                grant_sql.grant_roles(self.ex.services.roles, names, [role], who, is_grant=True, admin=False, admin_only=False, notices=self.ex.notices)
            else:
                grant_sql.grant_roles(
                    self.ex.services.roles, [role], names, who, is_grant=True, admin=kind == "adminmembers",
                    admin_only=False, notices=self.ex.notices,
                )

    def set_identity(self, s: ast.VariableSetStmt) -> Iterator[Outcome]:
        """SET [LOCAL] ROLE and SET [LOCAL] SESSION AUTHORIZATION, RESET of each, as
        PostgreSQL 15 checks them: any role for a superuser session user (or login, for
        SESSION AUTHORIZATION), otherwise only the role itself (roles have no members
        here). SESSION AUTHORIZATION also resets ROLE."""

        K = enums.VariableSetKind
        local = bool(s.is_local)
        if local and not self.ex.explicit:
            yield Notice("WARNING", "25P01", "SET LOCAL can only be used in transaction blocks")
            yield Done("SET")
            return
        value = None if s.kind in (K.VAR_RESET, K.VAR_SET_DEFAULT) else set_arg_text(s.args[0])
        roles = self.ex.services.roles
        changed: list[str] = []
        if s.name == "role":
            target = "none" if value is None or value == "none" else value
            if target != "none":
                if roles.get(target) is None and target not in PREDEFINED:
                    raise PgError("22023", f'role "{target}" does not exist')
                if not self.ex.who(self.ex.session_user).is_member(self.role_oid(target) or PREDEFINED[target]):
                    raise PgError("42501", f'permission denied to set role "{target}"')
            changed += self.ex.settings.set_identity("role", target, local=local)
        else:
            target = self.ex.login_user if value is None else value
            if roles.get(target) is None:
                raise PgError("22023", f'role "{target}" does not exist')
            me = roles.get(self.ex.login_user)
            if target != self.ex.login_user and not (me is not None and me.superuser):
                raise PgError("42501", f'permission denied to set session authorization "{target}"')
            changed += self.ex.settings.set_identity("session_authorization", target, local=local)
            changed += self.ex.settings.set_identity("role", "none", local=local)
        current = roles.get(self.ex.user)
        changed += self.ex.settings.set_identity("is_superuser", "on" if current is not None and current.superuser else "off", local=local)
        for name in dict.fromkeys(changed):
            yield ParameterChanged(name, self.ex.settings.get(name))
        yield Done("RESET" if s.kind == K.VAR_RESET else "SET")

    def relation_owner(self, node: ast.AlterTableStmt, spec: ast.RoleSpec, notices: list[Notice]) -> str:
        """ALTER TABLE/VIEW/SEQUENCE … OWNER TO (the sequences a table owns go along)."""
        tx = self.ex.statement_tx()
        cat = tx.catalog()
        who = self.ex.who()
        tag = {enums.ObjectType.OBJECT_VIEW: "ALTER VIEW", enums.ObjectType.OBJECT_SEQUENCE: "ALTER SEQUENCE"}.get(node.objtype, "ALTER TABLE")
        rel = privilege_checks.find(cat, node.relation.schemaname, node.relation.relname, tx.search_path)
        if rel is None or rel.kind == "index":
            if node.missing_ok:
                notices.append(Notice("NOTICE", "00000", f'relation "{node.relation.relname}" does not exist, skipping'))
                return tag
            raise PgError("42P01", f'relation "{ddl_names.qualified(node.relation)}" does not exist')
        new = grant_sql.role_of(spec, who, self.session_role(), self.role_oid)
        owned = [q.oid for q in owned_sequences(cat, rel.oid)] if rel.kind == "table" else []
        grant_sql.change_owner(tx, rel.oid, rel.kind, rel.name, new, spec.rolename or self.ex.user, who, owned)
        return tag

    def grant_roles(self, node: ast.GrantRoleStmt, notices: list[Notice]) -> None:
        admin = any(o.defname == "admin" for o in node.opt or ())
        bad = [o.defname for o in node.opt or () if o.defname != "admin"]
        if bad:  # (PostgreSQL 16's INHERIT and SET options)
            raise PgError("42601", f'unrecognized role option "{bad[0]}"')
        who = self.ex.who()
        members = [self.spec_name(m) for m in node.grantee_roles]
        grantor = who.name
        if node.grantor is not None:  # (AddRoleMems: recorded as pg_auth_members.grantor)
            if node.grantor.roletype == enums.RoleSpecType.ROLESPEC_PUBLIC:
                raise PgError("42704", 'role "public" does not exist')
            grantor = self.spec_name(node.grantor)
            if self.ex.services.roles.get(grantor) is None:
                raise PgError("42704", f'role "{grantor}" does not exist')
            if grantor != who.name and not who.superuser and node.is_grant:
                raise PgError("42501", "must be superuser to set grantor")
        grant_sql.grant_roles(
            self.ex.services.roles, [p.priv_name for p in node.granted_roles], members, who,
            is_grant=bool(node.is_grant), admin=admin and bool(node.is_grant), admin_only=admin and not node.is_grant,
            notices=notices, grantor=grantor,
        )

    def spec_name(self, spec: ast.RoleSpec) -> str:
        RS = enums.RoleSpecType
        if spec.roletype in (RS.ROLESPEC_CURRENT_USER, RS.ROLESPEC_CURRENT_ROLE):
            return self.ex.user
        if spec.roletype == RS.ROLESPEC_SESSION_USER:
            return self.ex.session_user
        if spec.roletype == RS.ROLESPEC_PUBLIC:
            raise PgError("0LP01", 'role "public" does not exist')
        return spec.rolename

    def _owned_roles(self, specs: Any, verb: str) -> list[int]:
        """The OIDs of REASSIGN/DROP OWNED's roles, each one whose privileges the current
        user has (42501), never the bootstrap superuser's (2BP01: what it owns is the
        system's)."""
        who = self.ex.who()
        out = []
        for spec in specs:
            name = self.spec_name(spec)
            oid = self.role_oid(name)
            if oid is None:
                raise PgError("42704", f'role "{name}" does not exist')
            if not who.superuser and not who.uses(oid):
                raise PgError("42501", f"permission denied to {verb} objects")
            if oid == 10:
                what = "reassign ownership of" if verb == "reassign" else "drop"
                raise PgError("2BP01", f"cannot {what} objects owned by role {name} because they are required by the database system")
            out.append(oid)
        return out

    def reassign_owned(self, node: ast.ReassignOwnedStmt) -> str:
        """REASSIGN OWNED BY … TO …: every relation, schema and function of this
        database the roles own goes to the new owner (default privileges stay, as in
        PostgreSQL)."""
        old = self._owned_roles(node.roles, "reassign")
        who = self.ex.who()
        name = self.spec_name(node.newrole)
        new = self.role_oid(name)
        if new is None:
            raise PgError("42704", f'role "{name}" does not exist')
        if not who.superuser and not who.uses(new):
            raise PgError("42501", "permission denied to reassign objects")
        tx = self.ex.statement_tx()
        for oid, own in sorted(tx.catalog().owners.items()):
            if own.owner in old:
                columns = grant_sql.map_column_acls(own, lambda acl, was=own.owner: grant_sql.new_owner_acl(acl, was, new))
                tx.set_ownership(oid, Ownership(new, grant_sql.new_owner_acl(own.acl, own.owner, new), columns))
        return "REASSIGN OWNED"

    def drop_owned(self, node: ast.DropOwnedStmt) -> Iterator[Outcome]:
        """DROP OWNED BY …: the roles' relations, functions and schemas dropped (their
        views first, then tables, sequences, functions and schemas, each kind in one
        statement, CASCADE or not as asked), their privileges on other objects revoked,
        their default privileges gone."""
        roles = self._owned_roles(node.roles, "drop")
        tx = self.ex.statement_tx()
        cat = tx.catalog()
        owned = {oid for oid, own in cat.owners.items() if own.owner in roles}
        cascade = " CASCADE" if node.behavior == enums.DropBehavior.DROP_CASCADE else ""
        statements = []
        views = [v for v in cat.views.values() if v.oid in owned]
        tables = [t for t in cat.tables.values() if t.oid in owned]
        seqs = [q for q in cat.sequences.values() if q.oid in owned and q.owned_by is None]
        fns = [f for f in cat.functions.values() if f.oid in owned]
        schemas = [n for n, o in cat.schemas.items() if o in owned]
        for word, objs in (("VIEW", views), ("TABLE", tables), ("SEQUENCE", seqs)):
            if objs:
                names = ", ".join(f"{pgcatalog_defs.quote_ident(o.schema)}.{pgcatalog_defs.quote_ident(o.name)}" for o in objs)
                statements.append(f"DROP {word} IF EXISTS {names}{cascade}")
        if fns:
            sigs = ", ".join(
                f"{pgcatalog_defs.quote_ident(f.schema)}.{pgcatalog_defs.quote_ident(f.name)}({', '.join(pgcatalog_defs.format_type(t, -1) or str(t) for t in f.input_types)})"
                for f in fns
            )
            statements.append(f"DROP FUNCTION IF EXISTS {sigs}{cascade}")
        if schemas:
            statements.append(f"DROP SCHEMA IF EXISTS {', '.join(pgcatalog_defs.quote_ident(n) for n in schemas)}{cascade}")
        for sql in statements:
            for out in self.ex.run_node(parse_sql(sql)[0].stmt, sql, []):
                if isinstance(out, Notice):
                    yield out
        tx = self.ex.statement_tx()
        cat = tx.catalog()
        for oid, own in sorted(cat.owners.items()):  # (what was granted to them)
            mentioned = [acl for acl in (own.acl or (), *(a for _, a in own.columns)) if any(a.grantee in roles or a.grantor in roles for a in acl)]
            if mentioned:
                acl = grant_sql.without_roles(own.acl, roles) if own.acl is not None else None
                tx.set_ownership(oid, Ownership(own.owner, acl, grant_sql.map_column_acls(own, lambda a: grant_sql.without_roles(a, roles))))
        for key, acl in sorted(cat.default_acls.items()):
            if int(key.split(":")[0]) in roles:
                tx.set_default_acl(key, None)
            elif any(a.grantee in roles for a in acl):
                tx.set_default_acl(key, grant_sql.without_roles(acl, roles) or None)

    def function_owner(self, node: ast.AlterOwnerStmt) -> str:
        """ALTER FUNCTION/PROCEDURE … OWNER TO."""
        tx = self.ex.statement_tx()
        who = self.ex.who()
        fns = privilege_checks.functions_named(tx.catalog(), tx.search_path, node.object)
        kind = "procedure" if node.objectType == enums.ObjectType.OBJECT_PROCEDURE else "function"
        if not fns:
            raise PgError("42883", f"{kind} {privilege_checks.signature_text(node.object)} does not exist")
        new = grant_sql.role_of(node.newowner, who, self.session_role(), self.role_oid)
        for fn in fns:
            grant_sql.change_owner(tx, fn.oid, kind, fn.name, new, node.newowner.rolename or self.ex.user, who)
        return f"ALTER {kind.upper()}"

    def user_type(self, node: ast.AlterOwnerStmt) -> tuple[int, str] | None:
        """The user type ALTER TYPE/DOMAIN … OWNER TO names: the OID its owner is kept by
        (a composite type's pg_class row's, a domain's or an enum's own) and its name; None
        when it names none (another statement's error then)."""

        tx = self.ex.statement_tx()
        names = [n.sval for n in node.object]
        if node.objectType == enums.ObjectType.OBJECT_DOMAIN:
            d = domain_sql.lookup(tx, names)
            if d is not None:
                return d.oid, d.name
            if composite_sql.lookup(tx, names) is not None or enum_sql.lookup(tx, names) is not None:
                raise PgError("42809", f"{names[-1]} is not a domain")
            raise PgError("42704", f'type "{".".join(names)}" does not exist')
        ct = composite_sql.lookup(tx, names)
        if ct is not None:
            return ct.relid, ct.name
        en = enum_sql.lookup(tx, names)
        if en is not None:
            return en.oid, en.name
        d = domain_sql.lookup(tx, names)  # (ALTER TYPE names a domain too)
        return None if d is None else (d.oid, d.name)

    def type_owner(self, node: ast.AlterOwnerStmt, oid: int, name: str) -> str:
        """ALTER TYPE/DOMAIN … OWNER TO of a composite type, an enum or a domain (their
        array types follow, as pg_type shows them)."""
        tx = self.ex.statement_tx()
        who = self.ex.who()
        new = grant_sql.role_of(node.newowner, who, self.session_role(), self.role_oid)
        kind = "domain" if node.objectType == enums.ObjectType.OBJECT_DOMAIN else "type"
        grant_sql.change_owner(tx, oid, kind, name, new, node.newowner.rolename or self.ex.user, who)
        return f"ALTER {kind.upper()}"

    def schema_owner(self, node: ast.AlterOwnerStmt) -> str:
        tx = self.ex.statement_tx()
        name = node.object.sval
        oid = tx.catalog().schemas.get(name)
        if oid is None:
            raise PgError("3F000", f'schema "{name}" does not exist')
        who = self.ex.who()
        new = grant_sql.role_of(node.newowner, who, self.session_role(), self.role_oid)
        if not who.superuser and new != who.database_owner and not privileges.is_owner(tx.catalog(), who, oid):
            raise PgError("42501", f"must be owner of schema {name}")
        if not who.superuser and who.oid != who.database_owner:
            raise PgError("42501", f"permission denied for database {self.ex.database}")
        grant_sql.change_owner(tx, oid, "schema", name, new, node.newowner.rolename or self.ex.user, who)
        return "ALTER SCHEMA"

