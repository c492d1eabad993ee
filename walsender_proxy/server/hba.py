"""Client authentication rules, pg_hba.conf style: the first rule whose connection type,
database, user and address match decides the method; none matching is 28000, with
PostgreSQL's message."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from decoding.errors import PgError

METHODS = ("trust", "reject", "password", "scram-sha-256", "md5")


@dataclass(frozen=True, slots=True)
class HbaRule:
    conn_type: str  # 'host', 'hostssl', 'hostnossl', 'local'
    databases: tuple[str, ...]  # 'all', 'replication', names
    users: tuple[str, ...]  # 'all' or names
    network: ipaddress.IPv4Network | ipaddress.IPv6Network | None
    method: str

    @classmethod
    def parse(cls, d: dict[str, Any]) -> HbaRule:
        method = d.get("method", "")
        if method not in METHODS:
            raise PgError("F0000", f'invalid authentication method "{method}"')
        addr = d.get("address")
        net = ipaddress.ip_network(addr, strict=False) if addr and addr not in ("all",) else None
        dbs = d.get("database", "all")
        users = d.get("user", "all")
        return cls(
            d.get("type", "host"),
            tuple(dbs.split(",") if isinstance(dbs, str) else dbs),
            tuple(users.split(",") if isinstance(users, str) else users),
            net,
            method,
        )

    def matches(
        self, *, ssl: bool, address: str | None, database: str, user: str, replication: bool
    ) -> bool:
        if self.conn_type == "local":
            if address is not None:
                return False
        else:
            if address is None:
                return False
            if self.conn_type == "hostssl" and not ssl:
                return False
            if self.conn_type == "hostnossl" and ssl:
                return False
            if self.network is not None:
                ip = ipaddress.ip_address(address.split("%")[0])
                if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
                    ip = ip.ipv4_mapped
                if ip.version != self.network.version or ip not in self.network:
                    return False
        if replication:
            # A physical/logical replication connection matches 'replication' or, for
            # logical (replication=database), the database name as well (PostgreSQL 10+).
            if (
                "replication" not in self.databases
                and "all" not in self.databases
                and database not in self.databases
            ):
                return False
        elif "all" not in self.databases and database not in self.databases:
            return False
        return "all" in self.users or user in self.users


DEFAULT_RULES = (
    HbaRule("host", ("all",), ("all",), ipaddress.ip_network("127.0.0.0/8"), "trust"),
    HbaRule("host", ("all",), ("all",), ipaddress.ip_network("::1/128"), "trust"),
)


def choose_method(
    rules: tuple[HbaRule, ...],
    *,
    ssl: bool,
    address: str | None,
    database: str,
    user: str,
    replication: bool,
) -> str:
    for r in rules:
        if r.matches(
            ssl=ssl, address=address, database=database, user=user, replication=replication
        ):
            if r.method == "reject":
                break
            return r.method
    what = "replication connection" if replication else f'database "{database}"'
    enc = "SSL encryption" if ssl else "no encryption"
    raise PgError(
        "28000", f'no pg_hba.conf entry for host "{address}", user "{user}", {what}, {enc}'
    )
