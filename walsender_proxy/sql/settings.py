"""Run-time settings (GUCs) of a session: PostgreSQL's names, defaults and validation.

Clients set and read these (``SET``, ``SHOW``, ``current_setting``, start-up ``options``);
the ones PostgreSQL reports (GUC_REPORT) are sent back as ParameterStatus when they change.
Only values the proxy really honours are accepted: the text formats it produces are ISO dates
in UTC, so DateStyle and TimeZone take exactly what means that.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from decoding.errors import PgError


@dataclass(frozen=True, slots=True)
class Guc:
    name: str
    default: str
    report: bool = False  # sent as ParameterStatus at start-up and on change
    check: Callable[[str], str] | None = None  # canonicalises or raises
    settable: bool = True  # False: read-only (PGC_INTERNAL / postmaster)
    category: str = "Client Connection Defaults"
    description: str = ""


def _one_of(*ok: str, canon: str | None = None) -> Callable[[str], str]:
    allowed = {o.lower() for o in ok}

    def check(v: str) -> str:
        if v.strip().lower() not in allowed:
            raise PgError("22023", f'invalid value for parameter: "{v}"')
        return canon if canon is not None else v.strip().lower()

    return check


def _bool(v: str) -> str:
    t = v.strip().lower()
    if t in ("on", "true", "yes", "1", "t", "y"):
        return "on"
    if t in ("off", "false", "no", "0", "f", "n"):
        return "off"
    raise PgError("22023", f'parameter requires a Boolean value: "{v}"')


_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(us|ms|s|min|h|d)?\s*$")
_MS_PER = {"us": 0.001, "ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


def duration_ms(text: str) -> int:
    """A time setting's value in milliseconds (``5s``, ``250ms``, ``1min``, a bare number of
    milliseconds), as PostgreSQL reads GUC_UNIT_MS values; ValueError if it is none."""
    m = _DURATION.match(text)
    if m is None:
        raise ValueError(text)
    return round(float(m.group(1)) * _MS_PER[m.group(2) or "ms"])


def _duration(v: str) -> str:
    """A time setting in its base unit, milliseconds, as pg_settings.setting holds it (SHOW
    words it in the largest unit that divides it: pgcatalog.show_value)."""
    try:
        n = duration_ms(v)
    except ValueError:
        raise PgError("22023", f'invalid value for parameter: "{v}"', hint='Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".') from None
    if n > 2**31 - 1:
        raise PgError("22023", f"{n} ms is outside the valid range for parameter (0 .. 2147483647)")
    return str(n)


def _int(lo: int, hi: int) -> Callable[[str], str]:
    def check(v: str) -> str:
        try:
            n = int(v.strip())
        except ValueError:
            raise PgError("22023", f'invalid value for parameter: "{v}"') from None
        if not lo <= n <= hi:
            raise PgError("22023", f"{n} is outside the valid range for parameter ({lo} .. {hi})")
        return str(n)

    return check


def _datestyle(v: str) -> str:
    parts = {p.strip().lower() for p in v.split(",") if p.strip()}
    if not parts <= {"iso", "mdy", "dmy", "ymd"}:
        raise PgError(
            "22023",
            f'invalid value for parameter "DateStyle": "{v}"',
            detail="The proxy formats dates in ISO style only.",
        )
    order = next((p.upper() for p in parts if p != "iso"), "MDY")
    return f"ISO, {order}"


def _timezone(v: str) -> str:
    if v.strip().strip("'").upper() in (
        "UTC",
        "GMT",
        "ETC/UTC",
        "Z",
        "ZULU",
        "UCT",
        "+00",
        "00:00",
        "0",
    ):
        return "UTC"
    raise PgError(
        "22023",
        f'invalid value for parameter "TimeZone": "{v}"',
        detail="The proxy serves timestamps in UTC only.",
    )


GUCS: dict[str, Guc] = {
    g.name.lower(): g
    for g in (
        Guc("server_version", "15.18", report=True, settable=False, category="Preset Options"),
        Guc("server_version_num", "150018", settable=False, category="Preset Options"),
        Guc("server_encoding", "UTF8", report=True, settable=False, category="Preset Options"),
        Guc(
            "client_encoding",
            "UTF8",
            report=True,
            check=_one_of("utf8", "utf-8", "unicode", canon="UTF8"),
        ),
        Guc("DateStyle", "ISO, MDY", report=True, check=_datestyle),
        Guc("IntervalStyle", "postgres", report=True, check=_one_of("postgres")),
        Guc("TimeZone", "UTC", report=True, check=_timezone),
        Guc("integer_datetimes", "on", report=True, settable=False, category="Preset Options"),
        Guc(
            "standard_conforming_strings",
            "on",
            report=True,
            check=_one_of("on", "true", canon="on"),
        ),
        Guc("application_name", "", report=True),
        Guc("is_superuser", "off", report=True, settable=False),
        Guc("session_authorization", "", report=True, settable=False),
        Guc(
            "default_transaction_isolation",
            "read committed",
            check=_one_of("read committed", "repeatable read", "serializable", "read uncommitted"),
        ),
        Guc("default_transaction_read_only", "off", check=_bool),
        Guc("transaction_isolation", "read committed", settable=False),
        Guc("transaction_read_only", "off", settable=False),
        Guc("search_path", '"$user", public'),
        Guc("extra_float_digits", "1", check=_int(-15, 3)),
        Guc("bytea_output", "hex", check=_one_of("hex")),
        Guc("statement_timeout", "0", check=_duration),
        Guc("lock_timeout", "0", check=_duration),
        Guc("deadlock_timeout", "1000", check=_duration),
        Guc("idle_in_transaction_session_timeout", "0", check=_duration),
        Guc(
            "synchronous_commit",
            "on",
            check=_one_of("on", "off", "local", "remote_write", "remote_apply"),
        ),
        Guc(
            "client_min_messages",
            "notice",
            check=_one_of(
                "debug5",
                "debug4",
                "debug3",
                "debug2",
                "debug1",
                "log",
                "notice",
                "warning",
                "error",
            ),
        ),
        Guc("timezone_abbreviations", "Default"),
        Guc("lc_messages", "C"),
        Guc("lc_monetary", "C"),
        Guc("lc_numeric", "C"),
        Guc("lc_time", "C"),
        Guc("max_identifier_length", "63", settable=False),
        Guc("wal_level", "logical", settable=False),
        Guc("max_connections", "100", settable=False),
        Guc("max_wal_senders", "10", settable=False),
        Guc("max_replication_slots", "10", settable=False),
        Guc("wal_sender_timeout", "60000", check=_duration),  # per connection, as since PostgreSQL 12
        Guc("logical_decoding_work_mem", "65536"),
        Guc("port", "5432", settable=False),
        Guc("listen_addresses", "localhost", settable=False),
        Guc("data_directory_mode", "0700", settable=False),
        Guc("in_hot_standby", "off", report=True, settable=False),
        Guc("default_transaction_deferrable", "off", check=_bool),
        Guc("row_security", "on", check=_bool),
        Guc("check_function_bodies", "on", check=_bool),
        Guc("xmloption", "content"),
        Guc("jit", "off", check=_bool),
    )
}


class Settings:
    """One session's settings: server values, overridden by start-up options and SET."""

    def __init__(self, server: dict[str, str] | None = None) -> None:
        self._base = {k: g.default for k, g in GUCS.items()}
        for k, v in (server or {}).items():
            self._base[k.lower()] = v
        self._values: dict[str, str] = {}
        self._tx_values: dict[str, str] | None = None  # SET LOCAL, undone at transaction end

    def canonical_name(self, name: str) -> str:
        g = GUCS.get(name.lower())
        if g is None:
            raise PgError("42704", f'unrecognized configuration parameter "{name}"')
        return g.name

    def get(self, name: str) -> str:
        key = name.lower()
        if key not in GUCS:
            raise PgError("42704", f'unrecognized configuration parameter "{name}"')
        if self._tx_values is not None and key in self._tx_values:
            return self._tx_values[key]
        return self._values.get(key, self._base[key])

    def set(
        self, name: str, value: str | None, *, local: bool = False, force: bool = False
    ) -> bool:
        """Set (``None``: reset to default). Returns True when a reported value changed."""
        key = name.lower()
        g = GUCS.get(key)
        if g is None:
            raise PgError("42704", f'unrecognized configuration parameter "{name}"')
        if not g.settable and not force:
            raise PgError("55P02", f'parameter "{g.name}" cannot be changed now')
        before = self.get(key)
        if value is None:
            value = self._base[key]
        elif g.check is not None:
            value = g.check(value)
        if local:
            if self._tx_values is not None:
                self._tx_values[key] = value
        else:
            self._values[key] = value
            if self._tx_values is not None:
                self._tx_values.pop(key, None)
        return g.report and self.get(key) != before

    def begin(self) -> None:
        self._tx_values = {}

    def end(self) -> list[str]:
        """Transaction end: SET LOCAL values lapse; returns reported names that changed."""
        changed = []
        if self._tx_values:
            for k, v in self._tx_values.items():
                if GUCS[k].report and v != self._values.get(k, self._base[k]):
                    changed.append(GUCS[k].name)
        self._tx_values = None
        return changed

    def reported(self) -> list[tuple[str, str]]:
        return [(g.name, self.get(k)) for k, g in GUCS.items() if g.report]

    def all(self) -> list[tuple[str, str, Guc]]:
        return [(g.name, self.get(k), g) for k, g in sorted(GUCS.items())]
