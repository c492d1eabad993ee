"""Roles and their password verifiers.

Passwords are never stored: a role keeps a SCRAM-SHA-256 verifier (salt, stored key, server
key, iterations) in ``DATA/roles.json``, the same data PostgreSQL keeps in pg_authid. The
cleartext ``password`` method checks a password by deriving the verifier again.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import threading
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from scramp.core import saslprep

from decoding.errors import PgError

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
    def from_text(cls, text: str) -> Verifier:
        mech, iters_salt, keys = text.split("$")
        if mech != MECHANISM:
            raise ValueError(f"unsupported verifier {mech}")
        iters, salt = iters_salt.split(":")
        stored, server = keys.split(":")
        d = base64.b64decode
        return cls(d(salt), d(stored), d(server), int(iters))

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


def _prepare(password: str) -> bytes:
    """SASLprep the password, or use it as it is when it is not valid for SASLprep — what
    PostgreSQL does (pg_saslprep), so verifiers match the ones PostgreSQL would store."""
    try:
        return str(saslprep(password)).encode()
    except Exception:
        return password.encode()


@dataclass(frozen=True, slots=True)
class Role:
    name: str
    oid: int
    superuser: bool = False
    replication: bool = False
    login: bool = True
    createdb: bool = False
    createrole: bool = False
    verifier: str | None = None  # Verifier.to_text(), or None: no password set

    def password_verifier(self) -> Verifier | None:
        return Verifier.from_text(self.verifier) if self.verifier else None


class RoleStore:
    """Roles of one data directory; the bootstrap superuser exists from the start."""

    def __init__(self, path: Path, bootstrap_user: str = "postgres") -> None:
        self.path = path
        self._lock = threading.Lock()
        if path.exists():
            data = json.loads(path.read_text())
            self._roles = {r["name"]: Role(**r) for r in data}
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

    def _save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps([asdict(r) for r in self._roles.values()], indent=1))
        with open(tmp) as f:
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def get(self, name: str) -> Role | None:
        return self._roles.get(name)

    def all(self) -> list[Role]:
        return list(self._roles.values())

    def create(self, name: str, *, password: str | None = None, **attrs: bool) -> Role:
        with self._lock:
            if name in self._roles:
                raise PgError("42710", f'role "{name}" already exists')
            oid = max(r.oid for r in self._roles.values()) + 1
            oid = max(oid, 16384)
            role = Role(
                name, oid, verifier=Verifier.make(password).to_text() if password else None, **attrs
            )
            self._roles[name] = role
            self._save()
            return role

    def alter(
        self, name: str, *, password: str | None = None, clear_password: bool = False, **attrs: bool
    ) -> Role:
        with self._lock:
            role = self._roles.get(name)
            if role is None:
                raise PgError("42704", f'role "{name}" does not exist')
            if password is not None:
                role = replace(role, verifier=Verifier.make(password).to_text())
            elif clear_password:
                role = replace(role, verifier=None)
            role = replace(role, **attrs)
            self._roles[name] = role
            self._save()
            return role

    def drop(self, name: str) -> None:
        with self._lock:
            if name not in self._roles:
                raise PgError("42704", f'role "{name}" does not exist')
            if self._roles[name].oid == 10:
                raise PgError("42501", "cannot drop the bootstrap superuser")
            del self._roles[name]
            self._save()
