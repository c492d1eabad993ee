"""Client authentication rules as PostgreSQL 15's pg_hba.conf has them (``hba.c``).

Each ``[[hba]]`` table of the configuration is one pg_hba.conf line, a key per column:
``type``, ``database``, ``user``, ``address`` (and ``netmask``), ``method``. A value is the
text of that column, read by PostgreSQL's own tokenizer: comma lists, double quotes (a
quoted ``"all"`` is a name, never the keyword), ``@file`` inclusion (relative to the
configuration file's directory), ``#`` comments. A TOML list of such texts is one column.

The first rule whose connection type, address, database and user match decides the method;
none matching is 28000 with PostgreSQL's message, and so is a matching ``reject`` rule (with
its own message). What PostgreSQL accepts but the proxy cannot do exactly (host names,
authentication methods other than trust, reject, password, md5 and scram-sha-256,
authentication options) is refused when the configuration is loaded, naming it.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import re
import socket
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from decoding.errors import PgError
from walsender_proxy.backend.settings import parse_bool

CONFIG_FILE_ERROR = "F0000"

#: Connection types (PostgreSQL 15's, all of them). No connection to the proxy is
#: GSSAPI-encrypted (it answers GSSENCRequest with 'N'), so ``hostgssenc`` never matches and
#: ``hostnogssenc`` matches every TCP connection — what PostgreSQL does for such connections.
CONN_TYPES = ("local", "host", "hostssl", "hostnossl", "hostgssenc", "hostnogssenc")
METHODS = ("trust", "reject", "password", "md5", "scram-sha-256")
#: PostgreSQL's other methods: refused by name at load.
UNSUPPORTED_METHODS = ("ident", "peer", "gss", "sspi", "pam", "bsd", "ldap", "radius", "cert")
FIELDS = ("type", "database", "user", "address", "netmask", "method")

#: @file inclusion nested deeper than this is refused (PostgreSQL recurses until it runs
#: out of file descriptors, then refuses the line too).
_MAX_INCLUDE_DEPTH = 16

Replication = Literal["physical", "logical"] | None


class Membership(Protocol):
    """What ``+role`` and ``samerole`` ask of the role store."""

    def is_member(self, member: str, role: str) -> bool:
        """PostgreSQL's ``is_member`` of hba.c: both roles exist and ``member`` is ``role``
        or a member of it, directly or indirectly (superuser confers nothing)."""
        ...


@dataclass(frozen=True, slots=True)
class Token:
    """One item of a column. ``quoted``: the token began with a double quote, so it is never
    a keyword and never a ``+role`` or ``@file`` (PostgreSQL's AuthToken)."""

    text: str
    quoted: bool = False

    def keyword(self, word: str) -> bool:
        return not self.quoted and self.text == word


@dataclass(frozen=True, slots=True)
class Network:
    """An address and mask compared as pg_range_sockaddr compares them: bitwise, so a
    netmask need not be contiguous."""

    family: int
    addr: bytes
    mask: bytes

    def contains(self, family: int, addr: bytes) -> bool:
        return family == self.family and all(
            (a ^ n) & k == 0 for a, n, k in zip(addr, self.addr, self.mask, strict=True)
        )


# -- PostgreSQL's tokenizer (hba.c next_token, next_field_expand, tokenize_inc_file) --------


def _next_token(line: str, pos: int) -> tuple[Token | None, bool, int]:
    """The token at ``pos`` (None at the end of the line), whether a comma ended it, and
    where reading goes on: next_token, character for character."""
    n = len(line)
    while pos < n and line[pos] in " \t\r,":
        pos += 1
    buf: list[str] = []
    in_quote = was_quote = saw_quote = initial_quote = comma = False
    while pos < n and (line[pos] not in " \t\r" or in_quote):
        c = line[pos]
        if c == "#" and not in_quote:
            pos = n
            break
        if c == "," and not in_quote:
            comma = True
            break
        if c != '"' or was_quote:
            buf.append(c)
        was_quote = (not was_quote) if in_quote and c == '"' else False
        if c == '"':
            in_quote = not in_quote
            saw_quote = True
            if not buf:
                initial_quote = True
        pos += 1
    if not saw_quote and not buf:
        return None, False, pos
    return Token("".join(buf), initial_quote), comma, pos


def _next_field(line: str, pos: int, base: Path | None, depth: int) -> tuple[list[Token], int]:
    """One column's tokens from ``pos`` (empty at the end of the line), ``@file``
    expanded: next_field_expand."""
    tokens: list[Token] = []
    while True:
        tok, comma, pos = _next_token(line, pos)
        if tok is None:
            break
        if not tok.quoted and tok.text.startswith("@") and len(tok.text) > 1:
            tokens += _include(tok.text[1:], base, depth + 1)
        else:
            tokens.append(tok)
        if not comma:
            break
    return tokens, pos


def _lines(text: str) -> Iterator[str]:
    """The lines of an authentication file, backslash continuations joined."""
    pending = ""
    for raw in (line.rstrip("\r\n") for line in text.split("\n")):
        if raw.endswith("\\"):
            pending += raw[:-1]
            continue
        yield pending + raw
        pending = ""
    if pending:
        yield pending


def _include(name: str, base: Path | None, depth: int) -> list[Token]:
    """Every token of every line of the file ``@name``: tokenize_inc_file. A relative name
    is taken from the directory of the file that names it (the configuration file)."""
    path = Path(name)
    if not path.is_absolute():
        if base is None:
            raise PgError(
                CONFIG_FILE_ERROR,
                f'could not open secondary authentication file "@{name}": a relative name '
                "needs a configuration file to be relative to",
            )
        path = base / path
    path = Path(os.path.normpath(path))
    if depth > _MAX_INCLUDE_DEPTH:
        raise PgError(
            CONFIG_FILE_ERROR,
            f'could not open secondary authentication file "@{name}" as "{path}": '
            "too many levels of inclusion",
        )
    try:
        text = path.read_text()
    except OSError as e:
        raise PgError(
            CONFIG_FILE_ERROR,
            f'could not open secondary authentication file "@{name}" as "{path}": '
            f"{os.strerror(e.errno or errno.EIO)}",
        ) from None
    tokens: list[Token] = []
    for line in _lines(text):
        pos = 0
        while pos < len(line):
            field, pos = _next_field(line, pos, path.parent, depth)
            tokens += field
    return tokens


def _column(value: Any, key: str, rule: int, base: Path | None) -> list[Token]:
    """The tokens of one column: a string read as pg_hba.conf text, or a list of such."""
    texts = value if isinstance(value, list) else [value]
    tokens: list[Token] = []
    for text in texts:
        if not isinstance(text, str):
            raise _bad(rule, f'"{key}" must be a string or a list of strings, not {text!r}')
        field, pos = _next_field(text, 0, base, 0)
        rest, _ = _next_field(text, pos, base, 0)
        if not field:
            raise _bad(rule, f'"{key}" is empty')
        if rest:
            raise _bad(
                rule,
                f'"{key}" holds more than one column: {text!r} (quote a name with spaces: "a b")',
            )
        tokens += field
    if not tokens:  # an empty list
        raise _bad(rule, f'"{key}" is empty')
    return tokens


def _single(value: Any, key: str, what: str, rule: int, base: Path | None) -> Token:
    tokens = _column(value, key, rule, base)
    if len(tokens) > 1:
        raise _bad(rule, f"multiple values specified for {what}")
    return tokens[0]


def _bad(rule: int, message: str) -> PgError:
    return PgError(CONFIG_FILE_ERROR, f"{message} (hba rule {rule} of the configuration)")


# -- addresses ----------------------------------------------------------------------------


def _numeric(text: str) -> tuple[int, bytes] | None:
    """An IP address as getaddrinfo(AI_NUMERICHOST) reads it (so ``127.1`` is 127.0.0.1,
    as in PostgreSQL), or None if it is not one (a host name)."""
    try:
        info = socket.getaddrinfo(text, None, flags=socket.AI_NUMERICHOST)
    except socket.gaierror as e:
        if e.errno == socket.EAI_NONAME:
            return None
        raise
    family, *_, sockaddr = info[0]
    return family, socket.inet_pton(family, sockaddr[0].split("%")[0])


def _cidr_mask(bits: str, family: int) -> bytes | None:
    """pg_sockaddr_cidr_mask: ``bits`` ones, as strtol reads the number; None if invalid."""
    size = 32 if family == socket.AF_INET else 128
    if not re.fullmatch(r"[ \t\n\r\f\v]*[+-]?[0-9]+", bits):
        return None
    n = int(bits)
    if not 0 <= n <= size:
        return None
    return ((((1 << n) - 1) << (size - n)) if n else 0).to_bytes(size // 8, "big")


def _parse_address(d: Mapping[str, Any], rule: int, base: Path | None) -> str | Network:
    """'all', 'samehost', 'samenet' or a Network: parse_hba_line's address and netmask."""
    tok = _single(d["address"], "address", "host address", rule, base)
    for word in ("all", "samehost", "samenet"):
        if tok.keyword(word):
            if "netmask" in d:
                raise _bad(rule, f'"netmask" cannot follow the address "{word}"')
            return word
    text, slash, bits = tok.text.partition("/")
    try:
        ip = _numeric(text)
    except socket.gaierror as e:
        raise _bad(rule, f'invalid IP address "{text}": {e.strerror}') from None
    if ip is None:
        if slash:
            raise _bad(rule, f'specifying both host name and CIDR mask is invalid: "{tok.text}"')
        raise _bad(
            rule,
            f'host name "{text}" in an address is not supported by walsender-proxy '
            "(give an IP address range)",
        )
    family, addr = ip
    if slash:
        if "netmask" in d:
            raise _bad(rule, f'"netmask" cannot follow an address in CIDR notation: "{tok.text}"')
        mask = _cidr_mask(bits, family)
        if mask is None:
            raise _bad(rule, f'invalid CIDR mask in address "{tok.text}"')
        return Network(family, addr, mask)
    if "netmask" not in d:
        raise PgError(
            CONFIG_FILE_ERROR,
            f"end-of-line before netmask specification (hba rule {rule} of the configuration)",
            hint='Specify an address range in CIDR notation, or provide a separate "netmask".',
        )
    mtok = _single(d["netmask"], "netmask", "netmask", rule, base)
    try:
        m = _numeric(mtok.text)
    except socket.gaierror as e:
        raise _bad(rule, f'invalid IP mask "{mtok.text}": {e.strerror}') from None
    if m is None:
        raise _bad(rule, f'invalid IP mask "{mtok.text}": Name or service not known')
    if m[0] != family:
        raise _bad(rule, "IP address and mask do not match")
    return Network(family, addr, m[1])


def _client(address: str) -> tuple[int, bytes]:
    host = address.split("%")[0]
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return family, socket.inet_pton(family, host)


# -- the machine's interfaces, for samehost and samenet (getifaddrs, as PostgreSQL) -------


class _IfAddrs(ctypes.Structure):
    pass


_IfAddrs._fields_ = [
    ("ifa_next", ctypes.POINTER(_IfAddrs)),
    ("ifa_name", ctypes.c_char_p),
    ("ifa_flags", ctypes.c_uint),
    ("ifa_addr", ctypes.c_void_p),
    ("ifa_netmask", ctypes.c_void_p),
    ("ifa_ifu", ctypes.c_void_p),
    ("ifa_data", ctypes.c_void_p),
]

#: struct sockaddr starts with sa_len on the BSDs and macOS, not on Linux.
_SA_LEN_FIRST = sys.platform != "linux" and not sys.platform.startswith("win")


def _sockaddr(p: int | None) -> tuple[int, bytes] | None:
    """(family, address bytes) of a struct sockaddr of IPv4 or IPv6, else None."""
    if not p:
        return None
    head = ctypes.string_at(p, 2)
    family = head[1] if _SA_LEN_FIRST else int.from_bytes(head, sys.byteorder)
    if family == socket.AF_INET:
        return family, ctypes.string_at(p + 4, 4)  # sin_family, sin_port, sin_addr
    if family == socket.AF_INET6:
        return family, ctypes.string_at(p + 8, 16)  # … sin6_flowinfo, sin6_addr
    return None


@functools.cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.getifaddrs.argtypes = [ctypes.POINTER(ctypes.POINTER(_IfAddrs))]
    libc.getifaddrs.restype = ctypes.c_int
    libc.freeifaddrs.argtypes = [ctypes.POINTER(_IfAddrs)]
    libc.freeifaddrs.restype = None
    return libc


def interfaces() -> list[Network]:
    """Every IP address of this machine's interfaces with its netmask, as
    pg_foreach_ifaddr gives them (a missing, zero or other-family mask becomes all ones)."""
    libc = _libc()
    head = ctypes.POINTER(_IfAddrs)()
    if libc.getifaddrs(ctypes.byref(head)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"error enumerating network interfaces: {os.strerror(err)}")
    out: list[Network] = []
    try:
        node = head
        while node:
            ifa = node.contents
            addr = _sockaddr(ifa.ifa_addr)
            if addr is not None:
                mask = _sockaddr(ifa.ifa_netmask)
                if mask is None or mask[0] != addr[0] or not any(mask[1]):
                    mask = (addr[0], b"\xff" * len(addr[1]))
                out.append(Network(addr[0], addr[1], mask[1]))
            node = ifa.ifa_next
    finally:
        libc.freeifaddrs(head)
    return out


def _same_host_or_net(how: str, family: int, addr: bytes) -> bool:
    try:
        nets = interfaces()
    except OSError:
        return False  # PostgreSQL logs it and deems the line not matching
    for net in nets:
        if how == "samehost":
            net = Network(net.family, net.addr, b"\xff" * len(net.addr))
        if net.contains(family, addr):
            return True
    return False


# -- rules ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Client:
    """What the rules look at of a connection: TLS or not, the client's address (None on a
    Unix socket), the database and user of the startup packet, and its replication mode."""

    ssl: bool
    address: str | None
    database: str
    user: str
    replication: Replication


@dataclass(frozen=True, slots=True)
class HbaRule:
    conn_type: str
    databases: tuple[Token, ...]
    users: tuple[Token, ...]
    #: None for 'local'; 'all', 'samehost', 'samenet' or a Network
    address: str | Network | None
    method: str

    @classmethod
    def parse(cls, d: Mapping[str, Any], *, number: int = 1, base: Path | None = None) -> HbaRule:
        """Rule ``number`` (1-based, for messages) of the configuration; ``base``: the
        directory of the configuration file, for relative ``@file`` names."""
        unknown = sorted(set(d) - set(FIELDS))
        if unknown:
            raise _bad(
                number,
                f'unrecognized key "{unknown[0]}" (an hba rule has {", ".join(FIELDS)}; '
                "authentication options are not supported by walsender-proxy)",
            )
        for key in ("type", "database", "user", "method"):
            if key not in d:
                raise _bad(number, f'missing "{key}"')
        conn_type = _single(d["type"], "type", "connection type", number, base).text
        if conn_type not in CONN_TYPES:
            raise _bad(number, f'invalid connection type "{conn_type}"')
        databases = tuple(_column(d["database"], "database", number, base))
        users = tuple(_column(d["user"], "user", number, base))
        address: str | Network | None = None
        if conn_type == "local":
            if "address" in d or "netmask" in d:
                raise _bad(number, 'a "local" rule has no address')
        elif "address" not in d:
            raise _bad(number, "end-of-line before IP address specification")
        else:
            address = _parse_address(d, number, base)
        method = _single(d["method"], "method", "authentication type", number, base).text
        if method in UNSUPPORTED_METHODS:
            raise _bad(number, f'authentication method "{method}" is not supported by walsender-proxy')
        if method not in METHODS:
            raise _bad(number, f'invalid authentication method "{method}"')
        return cls(conn_type, databases, users, address, method)

    def _conn_matches(self, ssl: bool, address: str | None) -> bool:
        if self.conn_type == "local":
            return address is None
        if address is None:
            return False
        if (self.conn_type == "hostssl" and not ssl) or (self.conn_type == "hostnossl" and ssl):
            return False
        if self.conn_type == "hostgssenc":
            return False
        family, addr = _client(address)
        if isinstance(self.address, Network):
            return self.address.contains(family, addr)
        if self.address in ("samehost", "samenet"):
            return _same_host_or_net(self.address, family, addr)
        return True  # 'all'

    def _db_matches(
        self, database: str, user: str, replication: Replication, roles: Membership
    ) -> bool:
        """check_db: a physical replication connection matches only the keyword
        ``replication``; a logical one (replication=database) matches as a normal
        connection to its database does, and never ``replication``."""
        for tok in self.databases:
            if replication == "physical":
                if tok.keyword("replication"):
                    return True
            elif tok.keyword("all"):
                return True
            elif tok.keyword("sameuser"):
                if database == user:
                    return True
            elif tok.keyword("samerole") or tok.keyword("samegroup"):
                if roles.is_member(user, database):
                    return True
            elif tok.keyword("replication"):
                continue
            elif tok.text == database:
                return True
        return False

    def _user_matches(self, user: str, roles: Membership) -> bool:
        """check_role: ``+role`` (unquoted) is every member of role; ``all``; a name."""
        for tok in self.users:
            if not tok.quoted and tok.text.startswith("+"):
                if roles.is_member(user, tok.text[1:]):
                    return True
            elif tok.text == user or tok.keyword("all"):
                return True
        return False

    def matches(self, c: Client, roles: Membership) -> bool:
        """check_hba's test of one line, in its order."""
        return (
            self._conn_matches(c.ssl, c.address)
            and self._db_matches(c.database, c.user, c.replication, roles)
            and self._user_matches(c.user, roles)
        )


def parse_rules(rules: list[Mapping[str, Any]], base: Path | None = None) -> tuple[HbaRule, ...]:
    """The ``[[hba]]`` tables of a configuration file in ``base``."""
    if not isinstance(rules, list):
        raise PgError(CONFIG_FILE_ERROR, "hba must be an array of tables ([[hba]])")
    return tuple(HbaRule.parse(r, number=i, base=base) for i, r in enumerate(rules, 1))


#: initdb's pg_hba.conf for TCP: trust from loopback, for every database and for physical
#: replication (which ``all`` does not cover).
DEFAULT_RULES = parse_rules(
    [
        {"type": "host", "database": db, "user": "all", "address": a, "method": "trust"}
        for db in ("all", "replication")
        for a in ("127.0.0.1/32", "::1/128")
    ]
)


def replication_mode(value: str | None) -> Replication:
    """The startup packet's ``replication``: ``database`` (exactly, as PostgreSQL compares
    it) is a logical walsender; a boolean as parse_bool reads it is physical or none; else
    22023."""
    if value is None or value == "database":
        return "logical" if value else None
    on = parse_bool(value)
    if on is None:
        raise PgError("22023", f'invalid value for parameter "replication": "{value}"')
    return "physical" if on else None


def choose_method(
    rules: tuple[HbaRule, ...],
    *,
    ssl: bool,
    address: str | None,
    database: str,
    user: str,
    replication: Replication,
    roles: Membership,
) -> str:
    """The method of the first rule that matches (check_hba); 28000 as ClientAuthentication
    words it when that rule is ``reject`` or none matches."""
    host = address if address is not None else "[local]"
    enc = "SSL encryption" if ssl else "no encryption"
    client = Client(ssl, address, database, user, replication)
    for r in rules:
        if r.matches(client, roles):
            if r.method != "reject":
                return r.method
            if replication == "physical":
                msg = f'pg_hba.conf rejects replication connection for host "{host}", user "{user}", {enc}'
            else:
                msg = f'pg_hba.conf rejects connection for host "{host}", user "{user}", database "{database}", {enc}'
            raise PgError("28000", msg)
    if replication == "physical":
        msg = f'no pg_hba.conf entry for replication connection from host "{host}", user "{user}", {enc}'
    else:
        msg = f'no pg_hba.conf entry for host "{host}", user "{user}", database "{database}", {enc}'
    raise PgError("28000", msg)
