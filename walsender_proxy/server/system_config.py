"""The server's side of ALTER SYSTEM: which of its settings ``postgresql.auto.conf`` may
hold, and the :class:`ServerSettings` that result from the configuration file plus it.

The precedence is PostgreSQL's: the configuration file (TOML here), then
``postgresql.auto.conf``, then the command line (``-p``, ``-h``), which neither file
overrides. Settings a session reads (``work_mem``, ``TimeZone``, ``logical_decoding_work_mem``,
…) travel as ``ServerSettings.extra``; the server's own map to its fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from walsender_proxy.backend.settings import GUCS
from walsender_proxy.backend.system_settings import SettingRules, SystemSettings, setting_rules

#: ``server.context.ServerSettings`` (which imports this module)
Settings = TypeVar("Settings")


def _on(v: str) -> bool:
    return v == "on"


#: PostgreSQL name → (ServerSettings field, canonical text → field value).
FIELDS: Mapping[str, tuple[str, Callable[[str], Any]]] = {
    "port": ("port", int),
    "listen_addresses": ("listen_addresses", str),
    "max_connections": ("max_connections", int),
    "max_wal_senders": ("max_wal_senders", int),
    "max_replication_slots": ("max_replication_slots", int),
    "authentication_timeout": ("authentication_timeout", float),  # (s)
    "wal_sender_timeout": ("wal_sender_timeout", lambda v: int(v) / 1000),  # (ms)
    "log_line_prefix": ("log_line_prefix", str),
    "log_statement": ("log_statement", str),
    "log_min_error_statement": ("log_min_error_statement", str),
    "log_connections": ("log_connections", _on),
    "log_disconnections": ("log_disconnections", _on),
    "ssl_min_protocol_version": ("ssl_min_protocol_version", str),
    "ssl_max_protocol_version": ("ssl_max_protocol_version", str),
    "ssl_ciphers": ("ssl_ciphers", str),
    "ssl_cert_file": ("ssl_cert_file", str),
    "ssl_key_file": ("ssl_key_file", str),
}

#: Applied at the server's next start: PostgreSQL's postmaster settings, and the TLS ones
#: (a reload rebuilds PostgreSQL's TLS context; the proxy's is made once, at its start).
RESTART = frozenset({
    "port", "listen_addresses", "max_connections", "max_wal_senders", "max_replication_slots",
    "ssl_min_protocol_version", "ssl_max_protocol_version", "ssl_ciphers", "ssl_cert_file",
    "ssl_key_file",
})  # fmt: skip

#: Server settings a reload applies (the session settings of GUCS come on top).
RELOADABLE = frozenset(FIELDS) - RESTART

RULES: SettingRules = setting_rules(RELOADABLE, RESTART)


def system_settings(data_dir: Path, *, fsync: bool = True) -> SystemSettings:
    """The data directory's ``postgresql.auto.conf``, loaded as at a start."""
    system = SystemSettings(data_dir, RULES, fsync=fsync)
    system.load()
    return system


def with_file(
    configured: Settings, values: Mapping[str, tuple[str, int]], *, running: Settings | None = None
) -> Settings:
    """``configured`` (the configuration file and command line) with the file's
    ``values`` on top; with ``running``, restart settings keep the running server's."""
    changes: dict[str, Any] = {}
    extra = dict(configured.extra)  # type: ignore[attr-defined]
    for key, (text, _) in values.items():
        canon = RULES.canonical(key, text)
        field = FIELDS.get(key)
        if field is not None:
            if field[0] not in configured.command_line:  # type: ignore[attr-defined]
                changes[field[0]] = field[1](canon)
        else:
            g = GUCS.get(key)
            extra[g.name if g is not None else key] = canon
    changes["extra"] = extra
    if running is not None:
        for key in RESTART:
            name = FIELDS[key][0]
            changes[name] = getattr(running, name)
    return dataclasses.replace(configured, **changes)  # type: ignore[type-var]
