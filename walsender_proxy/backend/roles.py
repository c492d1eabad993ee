"""Roles and their password verifiers.

Passwords are never stored: a role keeps a SCRAM-SHA-256 verifier (salt, stored key, server
key, iterations) in ``DATA/roles.json``, the same data PostgreSQL keeps in pg_authid. The
cleartext ``password`` method checks a password by deriving the verifier again.

Only SCRAM-SHA-256 verifiers are stored (PostgreSQL 15's default ``password_encryption``,
which the proxy does not let be changed): a password given as a SCRAM secret is kept as it
is, as PostgreSQL keeps it; one given as an MD5 hash (``md5`` and 32 hex digits), which
PostgreSQL would keep and then check by the md5 method, is refused with 0A000.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from scramp.core import saslprep

from decoding.errors import PgError
from walsender_proxy.backend import pgcatalog_data as _data

MECHANISM = "SCRAM-SHA-256"
ITERATIONS = 4096  # PostgreSQL's scram_iterations default


@dataclass(frozen=True, slots=True)
class Verifier:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def to_text(self) -> str:
        """PostgreSQL's rolpassword format: SCRAM-SHA-256$iter:salt$StoredKey:ServerKey."""
        b = base64.b64encode
        return f"{MECHANISM}${self.iterations}:{b(self.salt).decode()}${b(self.stored_key).decode()}:{b(self.server_key).decode()}"

    @classmethod
    def from_text(cls, text: str) -> Verifier | None:
        """A SCRAM secret as PostgreSQL's parse_scram_secret reads it, or None if the text
        is not one (base64 with blanks skipped; each key 32 bytes)."""
        m = _SCRAM_SECRET.fullmatch(text)
        if m is None:
            return None
        iters, *parts = m.groups()
        try:
            salt, stored, server = (
                base64.b64decode(re.sub(r"[ \t\n\r]", "", p), validate=True) for p in parts
            )
        except ValueError:
            return None
        if len(stored) != SCRAM_KEY_LEN or len(server) != SCRAM_KEY_LEN or int(iters) < 1:
            return None
        return cls(salt, stored, server, int(iters))

    @classmethod
    def make(cls, password: str, iterations: int = ITERATIONS, salt: bytes | None = None) -> Verifier:
        salt = salt if salt is not None else secrets.token_bytes(16)
        salted = hashlib.pbkdf2_hmac("sha256", _prepare(password), salt, iterations)
        client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
        server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
        return cls(salt, hashlib.sha256(client_key).digest(), server_key, iterations)

    def check(self, password: str) -> bool:
        other = Verifier.make(password, self.iterations, self.salt)
        return hmac.compare_digest(other.stored_key, self.stored_key) and hmac.compare_digest(other.server_key, self.server_key)


SCRAM_KEY_LEN = 32
_SCRAM_SECRET = re.compile(r"SCRAM-SHA-256\$([0-9]+):([^$]+)\$([^:]+):(.+)", re.DOTALL)
_MD5_HASH = re.compile(r"md5[0-9a-f]{32}")


def stored_password(password: str) -> str | None:
    """What pg_authid.rolpassword gets for ``PASSWORD '…'`` (PostgreSQL's
    encrypt_password): None for the empty string (PostgreSQL clears the password, with a
    NOTICE), a SCRAM secret as it is, an MD5 hash refused, else a new SCRAM verifier."""
    if password == "":
        return None
    if _MD5_HASH.fullmatch(password):
        raise PgError(
            "0A000",
            "MD5 password hashes are not supported by walsender-proxy",
            hint="Give the password itself (stored as a SCRAM-SHA-256 verifier) or a "
            "SCRAM-SHA-256 secret.",
        )
    if Verifier.from_text(password) is not None:
        return password
    return Verifier.make(password).to_text()


def _prepare(password: str) -> bytes:
    """SASLprep the password, or use it as it is when it is not valid for SASLprep — what
    PostgreSQL does (pg_saslprep), so verifiers match the ones PostgreSQL would store."""
    try:
        return str(saslprep(password)).encode()
    except Exception:
        return password.encode()


#: PostgreSQL 15's predefined roles (they exist in every cluster, cannot log in, and may be
#: granted), and the memberships among them (pg_monitor's).
PREDEFINED: dict[str, int] = {name: oid for oid, name in _data.PREDEFINED_ROLES}
PREDEFINED_MEMBERS: list[tuple[str, str]] = [
    (_names[r], _names[m])
    for r, m, _admin in _data.PREDEFINED_AUTH_MEMBERS
    for _names in [{oid: name for oid, name in _data.PREDEFINED_ROLES}]
]


def closure(name: str, ups: Callable[[str], Iterable[str]]) -> set[str]:
    """``name`` and every role reached by following ``ups`` (the roles a role is directly
    a member of, as the caller counts them)."""
    out = {name}
    todo = [name]
    while todo:
        for up in ups(todo.pop()):
            if up not in out:
                out.add(up)
                todo.append(up)
    return out


@dataclass(frozen=True, slots=True)
class Role:
    name: str
    oid: int
    superuser: bool = False
    replication: bool = False
    login: bool = True
    createdb: bool = False
    createrole: bool = False
    #: BYPASSRLS: kept for the catalogs (the proxy has no row security to bypass).
    bypassrls: bool = False
    #: CONNECTION LIMIT (-1: none): how many sessions of the role may be open at once
    #: (superusers are not held to it).
    connlimit: int = -1
    #: COMMENT ON ROLE (pg_shdescription), None: none.
    comment: str | None = None
    verifier: str | None = None  # Verifier.to_text(), or None: no password set
    #: INHERIT: the role uses the privileges of the roles it is a member of.
    inherit: bool = True
    #: The roles this one is a member of (pg_auth_members): [role, grantor, admin_option],
    #: by name (a predefined role such as pg_read_all_data among them).
    member_of: tuple[tuple[str, str, bool], ...] = ()

    def password_verifier(self) -> Verifier | None:
        """The SCRAM verifier, or None when there is none (then every password check fails,
        as PostgreSQL's fails for a role without a valid SCRAM secret)."""
        return Verifier.from_text(self.verifier) if self.verifier else None


class RoleStore:
    """Roles of one data directory; the bootstrap superuser exists from the start."""

    def __init__(self, path: Path, bootstrap_user: str = "postgres") -> None:
        self.path = path
        self._lock = threading.Lock()
        #: Per thread, the journal of the running statement's transaction: the roles it
        #: changed as they were before (None: it did not exist). See :meth:`journaling`.
        self._local = threading.local()
        #: Bumped at every change: what is derived from the roles is good while it stays.
        self.version = 0
        self._mock_nonce = self._read_mock_nonce(path.with_name("mock_auth_nonce"))
        if path.exists():
            data = json.loads(path.read_text())
            self._roles = {
                r["name"]: Role(**{**r, "member_of": tuple(tuple(m) for m in r.get("member_of", ()))}) for r in data
            }
        else:
            self._roles = {
                bootstrap_user: Role(
                    bootstrap_user,
                    10,
                    superuser=True,
                    replication=True,
                    createdb=True,
                    createrole=True,
                )
            }
            self._save()

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            os.fsync(f.fileno())
        os.replace(tmp, path)

    # -- undo of a transaction's role changes ---------------------------------------------
    @contextlib.contextmanager
    def journaling(self, journal: dict[str, Role | None]) -> Iterator[None]:
        """Changes made in this thread meanwhile note each role's first before-image in
        ``journal``, so that :meth:`undo` can put them back if the transaction rolls back
        (PostgreSQL's role changes are transactional; this store writes at once)."""
        self._local.journal = journal
        try:
            yield
        finally:
            self._local.journal = None

    def undo(self, journal: dict[str, Role | None]) -> None:
        """Put back the roles ``journal`` noted (a rolled-back transaction's changes)."""
        if not journal:
            return
        with self._lock:
            for name, before in journal.items():
                if before is None:
                    self._roles.pop(name, None)
                else:
                    self._roles[name] = before
            self._save()

    def _put(self, name: str, role: Role | None) -> None:
        journal = getattr(self._local, "journal", None)
        if journal is not None and name not in journal:
            journal[name] = self._roles.get(name)
        if role is None:
            self._roles.pop(name, None)
        else:
            self._roles[name] = role

    def _save(self) -> None:
        self.version += 1
        self._write(self.path, json.dumps([asdict(r) for r in self._roles.values()], indent=1).encode())

    @classmethod
    def _read_mock_nonce(cls, path: Path) -> bytes:
        """The data directory's secret for mock salts (PostgreSQL keeps one in pg_control
        from initdb on), made at first use."""
        if not path.exists():
            cls._write(path, secrets.token_bytes(32))
        return path.read_bytes()

    def mock_verifier(self, user: str) -> Verifier:
        """The verifier an unknown user, or one without a SCRAM secret, is challenged with
        (the exchange then fails). Its salt is PostgreSQL's scram_mock_salt: SHA-256 of the
        user name and the data directory's secret, so it is the same at every attempt and
        unlike any other user's, as a real user's salt is; one salt shared by every unknown
        user would tell them apart from the real ones."""
        salt = hashlib.sha256(user.encode() + self._mock_nonce).digest()[:16]
        unusable = bytes(SCRAM_KEY_LEN)  # no client key hashes to it
        return Verifier(salt, unusable, unusable, ITERATIONS)

    def is_member(self, member: str, role: str) -> bool:
        """hba.c's is_member (is_member_of_role_nosuper): both roles exist and ``member``
        is ``role`` or, directly or indirectly, a member of it."""
        return member in self._roles and (role in self._roles or role in PREDEFINED) and role in self.member_closure(member)

    def member_closure(self, name: str, *, inheriting: bool = False) -> set[str]:
        """The role and every role it is a member of, directly or through others
        (roles_is_member_of); with ``inheriting``, only through roles with INHERIT — whose
        privileges it has (has_privs_of_role)."""

        def ups(cur: str) -> list[str]:
            role = self._roles.get(cur)
            if role is None:
                return [r for r, m in PREDEFINED_MEMBERS if m == cur]
            return [] if inheriting and not role.inherit else [m[0] for m in role.member_of]

        return closure(name, ups)

    def grant_membership(self, role: str, member: str, grantor: str, admin: bool) -> str | None:
        """GRANT role TO member (checked by the caller); a NOTICE text when it already was."""
        with self._lock:
            m = self._roles[member]
            for i, (r, g, a) in enumerate(m.member_of):
                if r == role:
                    if admin and not a:
                        entries = list(m.member_of)
                        entries[i] = (r, g, True)
                        self._put(member, replace(m, member_of=tuple(entries)))
                        self._save()
                        return None
                    return f'role "{member}" is already a member of role "{role}"'
            self._put(member, replace(m, member_of=(*m.member_of, (role, grantor, admin))))
            self._save()
            return None

    def revoke_membership(self, role: str, member: str, *, admin_only: bool) -> bool:
        """REVOKE [ADMIN OPTION FOR] role FROM member; False when it was not a member."""
        with self._lock:
            m = self._roles[member]
            kept = []
            found = False
            for r, g, a in m.member_of:
                if r == role:
                    found = True
                    if admin_only:
                        kept.append((r, g, False))
                    continue
                kept.append((r, g, a))
            if found:
                self._put(member, replace(m, member_of=tuple(kept)))
                self._save()
            return found

    def members(self, role: str) -> list[tuple[str, str, bool]]:
        """(member, grantor, admin_option) of every role directly in ``role``."""
        return [(n, g, a) for n, r in self._roles.items() for rr, g, a in r.member_of if rr == role]

    def get(self, name: str) -> Role | None:
        return self._roles.get(name)

    def all(self) -> list[Role]:
        return list(self._roles.values())

    def create(self, name: str, *, password: str | None = None, **attrs: bool | int | str | None) -> Role:
        with self._lock:
            if name in self._roles:
                raise PgError("42710", f'role "{name}" already exists')
            oid = max(r.oid for r in self._roles.values()) + 1
            oid = max(oid, 16384)
            role = Role(
                name, oid, verifier=stored_password(password) if password is not None else None, **attrs
            )
            self._put(name, role)
            self._save()
            return role

    def alter(
        self, name: str, *, password: str | None = None, clear_password: bool = False, **attrs: bool | int | str | None
    ) -> Role:
        with self._lock:
            role = self._roles.get(name)
            if role is None:
                raise PgError("42704", f'role "{name}" does not exist')
            if password is not None:
                role = replace(role, verifier=stored_password(password))
            elif clear_password:
                role = replace(role, verifier=None)
            role = replace(role, **attrs)
            self._put(name, role)
            self._save()
            return role

    def drop(self, name: str) -> None:
        with self._lock:
            if name not in self._roles:
                raise PgError("42704", f'role "{name}" does not exist')
            if self._roles[name].oid == 10:
                raise PgError("42501", "cannot drop the bootstrap superuser")
            self._put(name, None)
            for n, r in list(self._roles.items()):  # (its memberships go with it)
                if any(m[0] == name for m in r.member_of):
                    self._put(n, replace(r, member_of=tuple(m for m in r.member_of if m[0] != name)))
            self._save()
