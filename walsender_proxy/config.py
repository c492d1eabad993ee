"""Configuration: ``conf/walsender-proxy.toml`` (documented inline) plus overrides.

Setting names follow PostgreSQL's wherever the meaning is the same; an unknown name is an
error (PostgreSQL: 'unrecognized configuration parameter', 42704), never silently ignored.
"""

from __future__ import annotations

import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any

from decoding.errors import PgError
from walsender_proxy.lake import LakeSettings
from walsender_proxy.server.context import ServerSettings
from walsender_proxy.server.hba import parse_rules
from walsender_proxy.server.tls import check_tls_settings

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "conf" / "walsender-proxy.toml"

#: Config name → LakeSettings field, where they differ.
_LAKE_NAMES = {"wal_segment_size": "segment_size"}


class Config(dict[str, Any]):
    """The parsed TOML, and the file it came from: ``@file`` names in ``[[hba]]`` rules are
    relative to its directory, as pg_hba.conf's are to pg_hba.conf's."""

    path: Path | None = None


def load_config(path: str | Path | None = None) -> dict[str, Any]:
    p = Path(path) if path is not None else DEFAULT_CONFIG
    try:
        with open(p, "rb") as f:
            config = Config(tomllib.load(f))
            config.path = p.resolve()
            return config
    except FileNotFoundError:
        if path is None:
            return {}
        raise PgError(
            "58P01", f'could not open configuration file "{p}": No such file or directory'
        ) from None
    except tomllib.TOMLDecodeError as e:
        raise PgError("F0000", f'configuration file "{p}" contains errors: {e}') from None


def lake_settings(config: dict[str, Any]) -> LakeSettings:
    known = {f.name: f for f in fields(LakeSettings)}
    kw: dict[str, Any] = {}
    for name, value in config.get("lake", {}).items():
        field = _LAKE_NAMES.get(name, name)
        if field not in known:
            raise PgError("42704", f'unrecognized configuration parameter "{name}"')
        default = getattr(LakeSettings(), field)
        if isinstance(default, bool) != isinstance(value, bool) or not isinstance(
            value, (type(default), int)
        ):
            raise PgError("22023", f'invalid value for parameter "{name}": "{value}"')
        kw[field] = type(default)(value)
    return LakeSettings(**kw)


def server_settings(config: dict[str, Any], **overrides: Any) -> Any:
    """``[server]`` and ``[[hba]]`` of the configuration as ServerSettings."""

    known = {f.name for f in fields(ServerSettings)} - {"hba", "extra", "command_line", "configured"}
    kw: dict[str, Any] = {}
    for name, value in config.get("server", {}).items():
        if name not in known:
            raise PgError("42704", f'unrecognized configuration parameter "{name}"')
        default = getattr(ServerSettings(), name)
        if name == "databases":
            value = tuple(value)
        elif default is not None and not isinstance(value, type(default)) and not (isinstance(default, float) and isinstance(value, int)):
            raise PgError("22023", f'invalid value for parameter "{name}": "{value}"')
        kw[name] = value
    if "hba" in config:
        path = getattr(config, "path", None)
        kw["hba"] = parse_rules(config["hba"], path.parent if path is not None else None)
    given = {k: v for k, v in overrides.items() if v is not None}
    kw.update(given)
    kw["command_line"] = frozenset(given)
    kw["configured"] = frozenset(config.get("server", {}))
    settings = ServerSettings(**kw)
    # As PostgreSQL at start-up: the TLS protocol range is checked whether or not TLS is
    # on (the cipher list when the TLS context is made).
    check_tls_settings(settings.ssl_min_protocol_version, settings.ssl_max_protocol_version)
    return settings
