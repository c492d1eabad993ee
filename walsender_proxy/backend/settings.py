"""Run-time settings (GUCs) of a session: PostgreSQL's names, defaults and validation.

Clients set and read these (``SET``, ``SHOW``, ``current_setting``, start-up ``options``);
the ones PostgreSQL reports (GUC_REPORT) are sent back as ParameterStatus when they change.
Only values the proxy really honours are accepted: the text formats it produces are ISO dates
in ISO style, so DateStyle takes the ISO output style (with any field order, which date
input follows: :meth:`Settings.date_order`); TimeZone takes what PostgreSQL takes
(:mod:`decoding.pgtz`, :meth:`Settings.zone`).

Every value is read by one parser, PostgreSQL's (guc.c ``parse_int``, ``parse_bool``,
``config_enum_lookup_by_name``), with the setting's type, base unit and range from
PostgreSQL 15's own ``pg_settings`` (:data:`PG_SETTINGS`): a value is checked and made
canonical when it is set (``SET``, start-up options, ``set_config``) and held as
``pg_settings.setting`` has it (``'1MB'`` of a kB setting is ``1024``); code that needs the
number asks :meth:`Settings.number`, never ``int()`` of the text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from decoding import pgtz
from decoding.booleans import parse_bool
from decoding.errors import PgError
from decoding.pgoutput.options import split_identifier_string
from decoding.pgvalues._dtin import interval_in
from walsender_proxy.backend import pgcatalog_data
from walsender_proxy.backend.logs import DEFAULT_LINE_PREFIX, check_line_prefix


@dataclass(frozen=True, slots=True)
class PgSetting:
    """One row of PostgreSQL 15's ``pg_settings`` (what does not depend on the server)."""

    name: str
    unit: str | None
    category: str
    short_desc: str
    extra_desc: str | None
    context: str
    vartype: str
    min_val: str | None
    max_val: str | None
    enumvals: list[str] | None
    boot_val: str | None


#: Lower-cased name → PostgreSQL 15's description of the setting.
PG_SETTINGS: Mapping[str, PgSetting] = MappingProxyType(
    {r[0].lower(): PgSetting(*r) for r in pgcatalog_data.SETTINGS}
)

#: Settings whose value depends on how the proxy runs rather than on PostgreSQL's boot value
#: (pg_settings source "override"); the server's configuration comes on top.
SERVER_DEFAULTS: Mapping[str, str] = MappingProxyType(
    {
        "server_encoding": "UTF8",
        "client_encoding": "UTF8",
        "lc_collate": "C",
        "lc_ctype": "C",
        "lc_messages": "C",
        "lc_monetary": "C",
        "lc_numeric": "C",
        "lc_time": "C",
        "DateStyle": "ISO, MDY",
        "TimeZone": "UTC",
        "log_timezone": "UTC",
        "wal_level": "logical",
        "data_directory_mode": "0700",
        "default_text_search_config": "pg_catalog.english",
        "integer_datetimes": "on",
        "standard_conforming_strings": "on",
        "transaction_isolation": "read committed",
        "jit": "off",
    }
)
_SERVER_DEFAULTS = {k.lower(): v for k, v in SERVER_DEFAULTS.items()}

#: guc.c's unit tables, largest unit first: memory units in bytes, time units in ms.
MEMORY_UNITS = (("TB", 1024.0**4), ("GB", 1024.0**3), ("MB", 1024.0**2), ("kB", 1024.0), ("B", 1.0))
TIME_UNITS = (
    ("d", 86_400_000.0),
    ("h", 3_600_000.0),
    ("min", 60_000.0),
    ("s", 1000.0),
    ("ms", 1.0),
    ("us", 0.001),
)
#: A setting's base unit (``pg_settings.unit``) in bytes or in milliseconds.
MEMORY_BASE = {"B": 1.0, "kB": 1024.0, "8kB": 8192.0, "MB": 1024.0**2, "16MB": 16 * 1024.0**2}
TIME_BASE = {"ms": 1.0, "s": 1000.0, "min": 60_000.0}
_MEMORY_HINT = 'Valid units for this parameter are "B", "kB", "MB", "GB", and "TB".'
_TIME_HINT = 'Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".'
_INT_RANGE_HINT = "Value exceeds integer range."
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MAX = 2**63 - 1

_SPACE = " \t\n\v\f\r"  # C's isspace
# strtol(…, 0): optional sign, then hexadecimal, octal or decimal digits.
_STRTOL = re.compile(r"[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
# strtod: decimal (with fraction and exponent) or hexadecimal floating point.
_STRTOD = re.compile(r"[ \t\n\v\f\r]*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_STRTOD_HEX = re.compile(r"[ \t\n\v\f\r]*([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?)")


def _unit_table(unit: str) -> tuple[float, tuple[tuple[str, float], ...]] | None:
    """A base unit's size and the table of units it converts to (bytes or milliseconds);
    None for a unit that is neither memory nor time."""
    if unit in MEMORY_BASE:
        return MEMORY_BASE[unit], MEMORY_UNITS
    if unit in TIME_BASE:
        return TIME_BASE[unit], TIME_UNITS
    return None


def _c_integer(sign: str, digits: str) -> int:
    """The integer strtol(…, 0) reads: hexadecimal after ``0x``, octal after ``0``."""
    if digits[:2] in ("0x", "0X"):
        n = int(digits[2:], 16)
    elif digits[0] == "0":
        n = int(digits, 8)
    else:
        n = int(digits)
    return -n if sign == "-" else n


def _strtod(text: str) -> tuple[float, int] | None:
    """C's strtod on the start of ``text``: (value, characters read), None if none."""
    m = _STRTOD_HEX.match(text)
    if m is not None:
        body = m.group(2)
        value = float.fromhex("0x" + (body if "p" in body.lower() else body + "p0"))
        return (-value if m.group(1) == "-" else value), m.end()
    m = _STRTOD.match(text)
    if m is None:
        return None
    return float(m.group(0)), m.end()


def _to_base_unit(value: float, rest: str, unit: str) -> float | None:
    """guc.c's convert_to_base_unit: ``value`` followed by the unit text ``rest`` in the
    setting's base ``unit``, a fraction rounded to the next smaller unit; None if ``rest``
    is not a unit of this kind (units are case-sensitive, at most 3 characters)."""
    word = rest.rstrip(_SPACE)
    units = _unit_table(unit)
    if not word or len(word) > 3 or any(c in _SPACE for c in word) or units is None:
        return None
    base, table = units
    for i, (name, size) in enumerate(table):
        if name == word:
            converted = value * (size / base)
            if i + 1 < len(table):
                step = table[i + 1][1] / base
                converted = round(converted / step) * step
            return converted
    return None


def parse_int(text: str, unit: str | None) -> tuple[int | None, str | None]:
    """guc.c's parse_int: ``text`` as an integer setting in its base ``unit`` (None: the
    setting takes no unit), as (value, None) or (None, the HINT PostgreSQL gives, if any).
    Octal and hexadecimal (``010``, ``0x10``), fractions rounded half to even (C's rint)
    and whitespace around the number and unit are PostgreSQL's too."""
    m = _STRTOL.match(text)
    end = m.end() if m is not None else 0
    value = float(_c_integer(m.group(1), m.group(2))) if m is not None else 0.0
    if (end < len(text) and text[end] in ".eE") or abs(value) > _LONG_MAX:
        got = _strtod(text)
        if got is None:
            return None, None
        value, end = got
        if math.isinf(value):
            return None, None  # ERANGE: no hint
    elif m is None:
        return None, None
    rest = text[end:].lstrip(_SPACE)
    if rest:
        if unit is None:
            return None, None
        converted = _to_base_unit(value, rest, unit)
        if converted is None:
            return None, _MEMORY_HINT if unit in MEMORY_BASE else _TIME_HINT
        value = converted
    value = round(value)
    if not _INT_MIN <= value <= _INT_MAX:
        return None, _INT_RANGE_HINT
    return int(value), None


def parse_real(text: str, unit: str | None) -> tuple[float | None, str | None]:
    """guc.c's parse_real: ``text`` as a floating-point setting in its base ``unit``, as
    (value, None) or (None, the HINT PostgreSQL gives, if any). NaN is refused."""
    got = _strtod(text)
    if got is None:
        return None, None
    value, end = got
    if math.isnan(value):
        return None, None
    rest = text[end:].lstrip(_SPACE)
    if rest:
        if unit is None:
            return None, None
        converted = _to_base_unit(value, rest, unit)
        if converted is None:
            return None, _MEMORY_HINT if unit in MEMORY_BASE else _TIME_HINT
        value = converted
    return value, None


#: Enum values PostgreSQL accepts but does not list in pg_settings.enumvals (guc.c's hidden
#: entries), by setting: value → the listed value it means.
_HIDDEN_ENUM_VALUES: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "synchronous_commit": {"true": "on", "false": "off", "yes": "on", "no": "off", "1": "on", "0": "off"},
        "client_min_messages": {"debug": "debug2"},
        "wal_level": {"archive": "replica", "hot_standby": "replica"},
    }
)


def _invalid(name: str, text: str, hint: str | None = None, detail: str | None = None) -> PgError:
    return PgError("22023", f'invalid value for parameter "{name}": "{text}"', hint=hint, detail=detail)


def canonical_value(name: str, text: str) -> str:
    """``text`` as PostgreSQL would hold setting ``name`` (``pg_settings.setting``), checked
    as guc.c's parse_and_validate_value checks it: 22023 with PostgreSQL's words and HINT."""
    meta = PG_SETTINGS.get(name.lower())
    if meta is None:
        return text
    if meta.vartype == "integer":
        n, hint = parse_int(text, meta.unit)
        if n is None:
            raise _invalid(meta.name, text, hint)
        lo, hi = int(meta.min_val or _INT_MIN), int(meta.max_val or _INT_MAX)
        # (an internal setting's range is the value PostgreSQL 15 was built with, as
        # server_version_num's; the server's own values of them are not user input)
        if not lo <= n <= hi and meta.context != "internal":
            unit = f" {meta.unit}" if meta.unit else ""
            raise PgError("22023", f'{n}{unit} is outside the valid range for parameter "{meta.name}" ({lo} .. {hi})')
        return str(n)
    if meta.vartype == "real":
        x, hint = parse_real(text, meta.unit)
        if x is None:
            raise _invalid(meta.name, text, hint)
        lo, hi = float(meta.min_val or "-inf"), float(meta.max_val or "inf")
        if not lo <= x <= hi:  # (C's %g, as guc.c words it)
            unit = f" {meta.unit}" if meta.unit else ""
            raise PgError("22023", f'{x:g}{unit} is outside the valid range for parameter "{meta.name}" ({lo:g} .. {hi:g})')
        return f"{x:g}"
    if meta.vartype == "bool":
        b = parse_bool(text)
        if b is None:
            raise PgError("22023", f'parameter "{meta.name}" requires a Boolean value')
        return "on" if b else "off"
    if meta.vartype == "enum" and meta.enumvals:
        low = text.lower()
        for v in meta.enumvals:
            if v.lower() == low:
                return v
        hidden = _HIDDEN_ENUM_VALUES.get(name.lower(), {}).get(low)
        if hidden is not None:
            return hidden
        raise _invalid(meta.name, text, f"Available values: {', '.join(meta.enumvals)}.")
    return text


def show_value(setting: str, unit: str | None, vartype: str) -> str:
    """``SHOW``/``current_setting`` text for a pg_settings value, as guc.c's _ShowOption.

    Positive values get the largest unit that divides them evenly (units at or below the
    base unit always qualify), so shared_buffers 16384 (8kB) shows as ``128MB``.
    """
    if not unit or vartype not in ("integer", "real"):
        return setting
    try:
        num = float(setting)
    except ValueError:
        return setting
    units = _unit_table(unit)
    if num <= 0 or units is None:
        return setting
    base, table = units
    if vartype == "integer":
        for name, size in table:
            mult = size / base
            if mult <= 1.0 or num % mult == 0:
                return f"{round(num / mult)}{name}"
        return setting
    chosen = setting
    for name, size in table:
        value = num / (size / base)
        chosen = f"{value:g}{name}"
        if abs(round(value) - value) <= abs(value) * 1e-6:
            break
    return chosen


#: Settings with a show hook that prints the raw number.
_RAW_SHOW = frozenset(
    {"tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count", "tcp_user_timeout"}
)


def shown_setting(name: str, value: str) -> str:
    """What SHOW and current_setting() give for a session's raw value of ``name``."""
    low = name.lower()
    meta = PG_SETTINGS.get(low)
    if meta is None or low in _RAW_SHOW:
        return value
    return show_value(value, meta.unit, meta.vartype)


@dataclass(frozen=True, slots=True)
class Guc:
    name: str
    default: str
    report: bool = False  # sent as ParameterStatus at start-up and on change
    #: A string setting's own check (canonicalises or raises); other types are checked by
    #: canonical_value from their pg_settings type.
    check: Callable[[str], str] | None = None
    #: A check whose result depends on the value it replaces, called with (new value,
    #: current value, reset value): DateStyle's ``DMY`` keeps the output style, ``ISO``
    #: the field order, ``DEFAULT`` means the reset value.
    check_against: Callable[[str, str, str], str] | None = None
    settable: bool = True  # False: read-only (PGC_INTERNAL / postmaster)
    category: str = "Client Connection Defaults"
    description: str = ""
    #: The values (canonical) the proxy honours, of the ones PostgreSQL accepts.
    only: tuple[str, ...] | None = None


def _client_encoding(v: str) -> str:
    # PostgreSQL's clean_encoding_name: only letters and digits count ('utf-8' is utf8;
    # asyncpg sends the quotes too).
    if "".join(ch for ch in v.lower() if ch.isascii() and ch.isalnum()) not in ("utf8", "unicode"):
        raise _invalid("client_encoding", v, detail="The proxy sends and receives UTF8 only.")
    return "UTF8"


#: DateStyle's output styles and field orders, as check_datestyle spells them.
_DATE_STYLES = ("ISO", "SQL", "POSTGRES", "GERMAN")
_DATE_STYLE_SHOWN = {"ISO": "ISO", "SQL": "SQL", "POSTGRES": "Postgres", "GERMAN": "German"}
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _datestyle_parts(v: str, current: str, reset: str) -> tuple[str, str]:
    """variable.c's check_datestyle: (output style, field order) of the DateStyle value
    ``v``, each keeping its ``current`` value unless ``v`` names it; raises 22023 with
    PostgreSQL's DETAIL."""
    tokens = split_identifier_string(v)
    if tokens is None:
        raise _invalid("DateStyle", v, detail="List syntax is invalid.")
    style, order = (p.strip().upper() for p in current.split(","))
    have_style = have_order = False
    ok = True
    for tok in tokens:
        low = tok.translate(_ASCII_LOWER)  # (pg_strcasecmp: ASCII letters only)
        if low.upper() in _DATE_STYLES and low.isascii():
            ok &= not have_style or style == low.upper()
            style, have_style = low.upper(), True
            if style == "GERMAN" and not have_order:
                order = "DMY"  # (German also means DMY, unless an order is given)
            continue
        if low == "ymd":
            new_order = "YMD"
        elif low == "dmy" or low.startswith("euro"):
            new_order = "DMY"
        elif low in ("mdy", "us") or low.startswith("noneuro"):
            new_order = "MDY"
        elif low == "default":
            reset_style, reset_order = _datestyle_parts(reset, "ISO, MDY", "ISO, MDY")
            style = style if have_style else reset_style
            order = order if have_order else reset_order
            continue
        else:
            raise _invalid("DateStyle", v, detail=f'Unrecognized key word: "{tok}".')
        ok &= not have_order or order == new_order
        order, have_order = new_order, True
    if not ok:
        raise _invalid("DateStyle", v, detail='Conflicting "datestyle" specifications.')
    return style, order


def _datestyle(v: str, current: str, reset: str) -> str:
    """DateStyle as PostgreSQL canonicalises it (``'dmy'`` after ``ISO, MDY`` is ``ISO,
    DMY``); output styles other than ISO are refused, the proxy printing ISO only."""
    style, order = _datestyle_parts(v, current, reset)
    if style != "ISO":  # (a feature the proxy lacks, not a bad value: 0A000)
        raise PgError("0A000", f'DateStyle "{_DATE_STYLE_SHOWN[style]}" is not supported by walsender-proxy', detail="The proxy formats dates in ISO style only.")
    return f"{_DATE_STYLE_SHOWN[style]}, {order}"


def _timezone(v: str) -> str:
    """check_timezone: the zone as SHOW gives it (``pgtz.parse_setting``). ``INTERVAL '…'``
    (how guc.c flattens ``SET TIME ZONE INTERVAL …``) takes an interval of hours, minutes
    and seconds only, as PostgreSQL's errors say."""
    interval = None
    if v[:8].lower() == "interval":
        m = re.fullmatch(r"(?is)interval\s*'([^']*)'", v)
        if m is None:
            raise _invalid("TimeZone", v)
        months, days, usecs = interval_in(m.group(1))
        if months:
            raise _invalid("TimeZone", v, detail="Cannot specify months in time zone interval.")
        if days:
            raise _invalid("TimeZone", v, detail="Cannot specify days in time zone interval.")
        interval = int(usecs / 1_000_000) if usecs < 0 else usecs // 1_000_000
    return pgtz.parse_setting(v, interval).name


def _c_locale(name: str) -> Callable[[str], str]:
    """lc_numeric, lc_monetary, lc_time: the C locale only (its UTF-8 form is the same for
    them): to_char's D, G, L and TM names follow these, and the proxy formats as C does."""

    def check(v: str) -> str:
        if v in ("C", "POSIX", "C.UTF-8", "C.utf8"):
            return v
        raise _invalid(name, v, detail="The proxy formats numbers, money and dates in the C locale only.")

    return check


def _default_tablespace(v: str) -> str:
    """check_default_tablespace: the lake's one tablespace (pg_default, or "" for the
    database's) — what pg_dump's scripts set."""
    if v in ("", "pg_default"):
        return v
    raise _invalid("default_tablespace", v, detail=f'Tablespace "{v}" does not exist.')


def _default_table_access_method(v: str) -> str:
    """check_default_table_access_method: heap, the only table access method there is."""
    if v == "heap":
        return v
    if v == "":
        raise _invalid("default_table_access_method", v, detail="default_table_access_method cannot be empty.")
    raise _invalid("default_table_access_method", v, detail=f'Table access method "{v}" does not exist.')


def _pg_setting(name: str) -> PgSetting:
    meta = PG_SETTINGS.get(name.lower())
    if meta is None:
        raise PgError("42704", f'unrecognized configuration parameter "{name}"')
    return meta


_PLACEHOLDER_PART = re.compile(r"[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_$\x80-\U0010ffff]*")


def placeholder_name(name: str) -> bool:
    """Whether ``name`` may be a custom setting (a placeholder, ``app.user_id``): two or
    more simple identifiers joined by dots, as guc.c's valid_custom_variable_name checks;
    42602 for a dotted name that is not one."""
    if "." not in name:
        return False
    if not all(_PLACEHOLDER_PART.fullmatch(part) for part in name.split(".")):
        raise PgError(
            "42602", f'invalid configuration parameter name "{name}"',
            detail="Custom parameter names must be two or more simple identifiers separated by dots.",
        )
    return True


def _context(key: str) -> str:
    meta = PG_SETTINGS.get(key)
    return meta.context if meta is not None else "user"


def _unchangeable(name: str) -> PgError:
    """SET of a setting the session cannot change, worded by its context as guc.c does."""
    meta = PG_SETTINGS.get(name.lower())
    context = meta.context if meta is not None else "internal"
    if context == "internal":
        return PgError("55P02", f'parameter "{name}" cannot be changed')
    if context == "postmaster":
        return PgError("55P02", f'parameter "{name}" cannot be changed without restarting the server')
    return PgError("55P02", f'parameter "{name}" cannot be changed now')


#: PostgreSQL 15's GUC_SUPERUSER_ONLY settings: only superusers and those with the
#: privileges of pg_read_all_settings see them (SHOW, current_setting, pg_settings, SHOW
#: ALL). Read off PostgreSQL 15.18's pg_settings as a superuser and as a plain role
#: (tests/integration/test_settings_vs_postgres.py compares).
SUPERUSER_ONLY = frozenset({
    "config_file", "data_directory", "dynamic_library_path", "extension_destdir",
    "external_pid_file", "hba_file", "ident_file", "jit_provider", "krb_server_keyfile",
    "log_directory", "log_filename", "primary_conninfo", "session_preload_libraries",
    "shared_preload_libraries", "ssl_ciphers", "ssl_dh_params_file", "ssl_ecdh_curve",
    "ssl_max_protocol_version", "ssl_min_protocol_version", "ssl_passphrase_command",
    "unix_socket_directories",
})  # fmt: skip


def hidden_setting(name: str) -> PgError:
    """SHOW or current_setting of a superuser-only setting by a role that may not see it."""
    return PgError("42501", f'must be superuser or have privileges of pg_read_all_settings to examine "{name}"')


GUCS: dict[str, Guc] = {
    g.name.lower(): g
    for g in (
        Guc("server_version", "15.18", report=True, settable=False, category="Preset Options"),
        Guc("server_version_num", "150018", settable=False, category="Preset Options"),
        Guc("server_encoding", "UTF8", report=True, settable=False, category="Preset Options"),
        Guc("client_encoding", "UTF8", report=True, check=_client_encoding),
        Guc("DateStyle", "ISO, MDY", report=True, check_against=_datestyle),
        Guc("IntervalStyle", "postgres", report=True, only=("postgres",)),
        Guc("TimeZone", "UTC", report=True, check=_timezone),
        Guc("integer_datetimes", "on", report=True, settable=False, category="Preset Options"),
        Guc("standard_conforming_strings", "on", report=True, only=("on",)),
        # (it warns of backslashes in '…' literals only when standard_conforming_strings is off)
        Guc("escape_string_warning", "on"),
        Guc("application_name", "", report=True),
        Guc("is_superuser", "off", report=True, settable=False),
        Guc("session_authorization", "", report=True, settable=False),
        # (SET ROLE's: the executor checks and stores it, see Settings.set_identity)
        Guc("role", "none", settable=False),
        Guc("default_transaction_isolation", "read committed"),
        Guc("default_transaction_read_only", "off"),
        Guc("transaction_isolation", "read committed", settable=False),
        Guc("transaction_read_only", "off", settable=False),
        Guc("search_path", '"$user", public'),
        Guc("extra_float_digits", "1"),  # (-15 .. 3, every one printed as PostgreSQL prints it)
        Guc("bytea_output", "hex"),  # (hex or escape, each printed as byteaout prints it)
        Guc("statement_timeout", "0"),
        Guc("lock_timeout", "0"),
        Guc("default_tablespace", "", check=_default_tablespace),
        Guc("default_table_access_method", "heap", check=_default_table_access_method),
        Guc("deadlock_timeout", "1000"),
        Guc("idle_in_transaction_session_timeout", "0"),
        Guc("synchronous_commit", "on"),
        Guc("client_min_messages", "notice"),
        Guc("timezone_abbreviations", "Default"),
        Guc("lc_messages", "C"),
        Guc("lc_monetary", "C", check=_c_locale("lc_monetary")),
        Guc("lc_numeric", "C", check=_c_locale("lc_numeric")),
        Guc("lc_time", "C", check=_c_locale("lc_time")),
        Guc("max_identifier_length", "63", settable=False),
        Guc("wal_level", "logical", settable=False),
        Guc("max_connections", "100", settable=False),
        Guc("max_wal_senders", "10", settable=False),
        Guc("max_replication_slots", "10", settable=False),
        Guc("max_prepared_transactions", "100", settable=False),  # (lake.MAX_PREPARED_TRANSACTIONS)
        Guc("wal_sender_timeout", "60000"),  # per connection, as since PostgreSQL 12
        Guc("logical_decoding_work_mem", "65536"),
        Guc("port", "5432", settable=False),
        Guc("listen_addresses", "localhost", settable=False),
        Guc("data_directory_mode", "0700", settable=False),
        Guc("in_hot_standby", "off", report=True, settable=False),
        Guc("default_transaction_deferrable", "off"),
        Guc("row_security", "on"),
        Guc("check_function_bodies", "on"),
        Guc("xmloption", "content"),
        Guc("jit", "off"),
        # (scans start at a table's first row whatever it says: pg_dump turns it off)
        Guc("synchronize_seqscans", "on", category="Version and Platform Compatibility / Previous PostgreSQL Versions"),
        Guc("log_statement", "none", category="Reporting and Logging / What to Log"),
        Guc("log_min_error_statement", "error", category="Reporting and Logging / When to Log"),
        Guc("log_parameter_max_length", "-1", category="Reporting and Logging / What to Log"),
        Guc("log_connections", "off", category="Reporting and Logging / What to Log"),
        Guc("log_disconnections", "off", category="Reporting and Logging / What to Log"),
        Guc("log_line_prefix", DEFAULT_LINE_PREFIX, settable=False, check=check_line_prefix,
            category="Reporting and Logging / What to Log"),
    )
}


#: Categories of PostgreSQL settings that shape plans, memory, parallelism and statistics
#: but never an answer: a session may SET them (checked, shown, undone with its transaction)
#: and the proxy, whose plans are DuckDB's, has nothing to change (docs/sql-server.md).
INERT_CATEGORIES = frozenset({
    "Query Tuning / Planner Method Configuration",
    "Query Tuning / Planner Cost Constants",
    "Query Tuning / Genetic Query Optimizer",
    "Query Tuning / Other Planner Options",
    "Resource Usage / Memory",
    "Resource Usage / Asynchronous Behavior",
    "Resource Usage / Cost-Based Vacuum Delay",
    "Statistics / Cumulative Query and Index Statistics",
    "Statistics / Monitoring",
    "Reporting and Logging / Process Title",
})  # fmt: skip

for _meta in PG_SETTINGS.values():
    if _meta.context == "user" and _meta.category in INERT_CATEGORIES and _meta.name.lower() not in GUCS:
        GUCS[_meta.name.lower()] = Guc(
            _meta.name, _meta.boot_val or "", category=_meta.category, description=_meta.short_desc
        )


def shown_once_set(name: str, value: str, date_order: str = "MDY") -> str:
    """What ``set_config(name, value, …)`` returns: the value as SHOW gives it once set
    (``'5000'`` of lock_timeout is ``5s``), checked as SET checks it. ``date_order`` is the
    session's DateStyle order, which a DateStyle naming no order keeps."""
    g = GUCS.get(name.lower())
    if g is None:
        return shown_setting(name, canonical_value(name, value))
    current = f"ISO, {date_order}" if g.check_against is not None else g.default
    return shown_setting(name, _validated(g, value, current))


def _validated(g: Guc, value: str, current: str | None = None, reset: str | None = None) -> str:
    """``value`` checked and made canonical for ``g``; ``current`` and ``reset`` (the
    default if not given) are what a relative value (DateStyle's) is read against."""
    if g.check_against is not None:
        return g.check_against(value, current or g.default, reset or g.default)
    if g.check is not None:
        return g.check(value)
    canon = canonical_value(g.name, value)
    if g.only is not None and canon not in g.only:
        # (a value PostgreSQL accepts: a refusal, not its 22023)
        raise PgError(
            "0A000", f'{g.name} = {canon} is not supported by walsender-proxy',
            detail=f"The proxy supports {', '.join(g.only)} only.",
        )  # fmt: skip
    return canon


class Settings:
    """One session's settings: server values, overridden by start-up options and SET.

    Every PostgreSQL setting can be read (SHOW, current_setting); the proxy's own (GUCS)
    can be changed. Values sent at start-up are the session's reset values (RESET goes
    back to them) with source ``client``; SET makes a value's source ``session``."""

    def __init__(self, server: Mapping[str, str] | None = None) -> None:
        self._base = {k: g.default for k, g in GUCS.items()}
        #: The names the server's configuration gave (a reload may take them back).
        self._server = {k.lower() for k in server or {}}
        for k, v in (server or {}).items():
            key = k.lower()
            self._base[key] = _validated(GUCS[key], v) if key in GUCS else v
        self._values: dict[str, str] = {}
        self._tx_values: dict[str, str] | None = None  # SET LOCAL, undone at transaction end
        self._client: set[str] = set()  # set by the start-up packet
        #: How many times a value was set, reset or restored: who reports changes to the
        #: client compares it with the count when it last did.
        self.changes = 0
        #: The session values at the transaction's start and at each savepoint (name,
        #: values, SET LOCAL values), to undo SETs of what is rolled back.
        self._saved: list[tuple[str | None, dict[str, str], dict[str, str]]] = []
        #: Custom settings (placeholders) this session defined, by lower-case name → the
        #: name as first given; one stays defined, its reset value empty, once set (even
        #: by a transaction that rolled back), as guc.c's placeholders do.
        self._placeholders: dict[str, str] = {}

    def reload(self, server: Mapping[str, str]) -> None:
        """The server read its configuration again (pg_reload_conf): its values replace
        the ones it gave before, where this session's start-up packet did not set its own
        (a client's value outranks the file's, as in guc.c); SET values stay on top.
        A reported setting that changes is sent to the client at the next report."""
        new = {k.lower(): v for k, v in server.items()}
        changed = False
        for key in self._server | new.keys():
            if key in self._client:
                continue
            g = GUCS.get(key)
            if key not in new and g is None:
                changed = self._base.pop(key, None) is not None or changed
                continue
            if key in new:
                value = _validated(g, new[key]) if g is not None else new[key]
            else:
                assert g is not None
                value = g.default
            if self._base.get(key) != value:
                self._base[key] = value
                changed = True
        self._server = set(new)
        if changed:
            self.changes += 1

    def canonical_name(self, name: str) -> str:
        g = GUCS.get(name.lower())
        if g is not None:
            return g.name
        if name.lower() in self._placeholders:
            return self._placeholders[name.lower()]
        return _pg_setting(name).name

    def placeholders(self) -> dict[str, str]:
        """The custom settings defined in this session: name → value (SHOW and
        current_setting read them; pg_settings and SHOW ALL leave them out)."""
        return {name: self.get(key) for key, name in self._placeholders.items()}

    def get(self, name: str) -> str:
        key = name.lower()
        if key not in GUCS and key not in self._placeholders:
            meta = _pg_setting(name)
            return self._base.get(key, _SERVER_DEFAULTS.get(key, meta.boot_val or ""))
        if self._tx_values is not None and key in self._tx_values:
            return self._tx_values[key]
        return self._values.get(key, self._base[key])

    def zone(self) -> pgtz.Zone:
        """The session's TimeZone: timestamptz text is printed, and read when it names
        no zone, in it."""
        return pgtz.zone_of(self.get("TimeZone"))

    def datetime_input(self) -> str:
        """How text becomes a date, time or timestamp in this session: DateStyle's field
        order, then the TimeZone unless it is UTC (``"MDY America/New_York"``), the form
        :mod:`decoding.pgvalues`' input functions take as their ``date_order``."""
        order, zone = self.date_order(), self.zone()
        return order if zone.is_utc else f"{order} {zone.name}"

    def date_order(self) -> str:
        """DateStyle's field order (``MDY``, ``DMY`` or ``YMD``): how text dates and
        timestamps with ambiguous numeric fields (``01/02/03``) are read."""
        return self.get("DateStyle").rsplit(",", 1)[-1].strip()

    def number(self, name: str) -> int:
        """An integer setting in its base unit (milliseconds, kB, …), read by the one
        parser every setting goes through, whatever form the value came in."""
        return int(canonical_value(name, self.get(name)))

    def set(
        self, name: str, value: str | None, *, local: bool = False, force: bool = False,
        startup: bool = False,
    ) -> bool:
        """Set (``None``: reset to the session's reset value); ``startup``: from the
        start-up packet; ``force``: a read-only setting's value for this session, set by
        the server as it starts the session. Returns True when a reported value changed."""
        key = name.lower()
        g = GUCS.get(key)
        if g is None and key not in PG_SETTINGS and (key in self._placeholders or placeholder_name(name)):
            return self._set_placeholder(key, name, value, local=local)
        if g is None:
            meta = _pg_setting(name)
            if meta.context in ("user", "superuser"):
                raise PgError("0A000", f'parameter "{meta.name}" cannot be set in walsender-proxy')
            raise _unchangeable(meta.name)
        if not g.settable and not force:
            raise _unchangeable(g.name)
        context = _context(key)
        if not force and not startup and context in ("backend", "superuser-backend"):
            raise PgError("55P02", f'parameter "{g.name}" cannot be set after connection start')
        if not force and self._base.get("is_superuser") != "on" and context in ("superuser", "superuser-backend"):
            raise PgError("42501", f'permission denied to set parameter "{g.name}"')
        before = self.get(key)
        if value is not None:
            value = _validated(g, value, before, self._base[key])
        self.changes += 1
        if (startup or force) and value is not None:  # (force: the server's own, at start-up)
            self._base[key] = value
            if startup:
                self._client.add(key)
        else:
            self._store(key, value, local)
        return g.report and self.get(key) != before

    def set_identity(self, name: str, value: str, *, local: bool) -> list[str]:
        """SET ROLE and SET SESSION AUTHORIZATION (role, session_authorization and
        is_superuser), checked by the caller: stored as any SET is, so a transaction's
        end or rollback undoes them alike. Returns the reported names that changed."""
        before = self._reported()
        self.changes += 1
        self._store(name.lower(), value, local)
        return self._changed(before)

    def _set_placeholder(self, key: str, name: str, value: str | None, *, local: bool) -> bool:
        """SET/RESET of a custom setting: any text, transactional as every SET is."""
        self._placeholders.setdefault(key, name)
        self._base.setdefault(key, "")
        self.changes += 1
        self._store(key, value, local)
        return False

    def _store(self, key: str, value: str | None, local: bool) -> None:
        """A SET (``None``: RESET) for the session, or with ``local`` for the transaction."""
        if local:
            if self._tx_values is not None:
                self._tx_values[key] = self._base[key] if value is None else value
            return
        if value is None:
            self._values.pop(key, None)
        else:
            self._values[key] = value
        if self._tx_values is not None:
            self._tx_values.pop(key, None)

    def reset_all(self) -> list[str]:
        """RESET ALL (guc.c's ResetAllOptions): every user and superuser setting back to its
        reset value, whoever asks (no permission check, as in PostgreSQL); backend and
        server settings stay. Returns the reported names whose value changed."""
        changed = []
        self.changes += 1
        for key, g in GUCS.items():
            if not g.settable or _context(key) not in ("user", "superuser"):
                continue
            before = self.get(key)
            self._values.pop(key, None)
            if self._tx_values is not None:
                self._tx_values.pop(key, None)
            if g.report and self.get(key) != before:
                changed.append(g.name)
        for key in self._placeholders:
            self._values.pop(key, None)
            if self._tx_values is not None:
                self._tx_values.pop(key, None)
        return changed

    def sources(self) -> dict[str, tuple[str, str]]:
        """The values this session set: name → (pg_settings source, reset value)."""
        out = {k: ("client", self._base[k]) for k in self._client}
        for k in (*self._values, *(self._tx_values or ())):
            out[k] = ("session", self._base[k])
        return out

    # -- transactions: SET is undone with the transaction (or savepoint) it ran in ------------
    def begin(self) -> None:
        self._tx_values = {}
        self._saved = [(None, dict(self._values), {})]

    def savepoint(self, name: str) -> None:
        if self._tx_values is not None:
            self._saved.append((name, dict(self._values), dict(self._tx_values)))

    def rollback_to(self, name: str) -> list[str]:
        """ROLLBACK TO SAVEPOINT: the values as they were at the savepoint (which stays);
        returns the reported names whose value changed."""
        before = self._reported()
        self.changes += 1
        for i in range(len(self._saved) - 1, 0, -1):
            if self._saved[i][0] == name:
                _, values, tx_values = self._saved[i]
                self._values, self._tx_values = dict(values), dict(tx_values)
                del self._saved[i + 1 :]
                break
        return self._changed(before)

    def release(self, name: str) -> None:
        for i in range(len(self._saved) - 1, 0, -1):
            if self._saved[i][0] == name:
                del self._saved[i:]
                return

    def end(self, commit: bool = True) -> list[str]:
        """Transaction end: SET LOCAL values lapse, and an aborted transaction's SETs are
        undone, as PostgreSQL's AtEOXact_GUC does; returns reported names that changed."""
        restore = not commit and self._saved and self._saved[0][1] != self._values
        if not self._tx_values and not restore:  # (the common case: nothing to undo)
            self._tx_values, self._saved = None, []
            return []
        before = self._reported()
        self.changes += 1
        if restore:
            self._values = self._saved[0][1]
        self._tx_values, self._saved = None, []
        return self._changed(before)

    def _reported(self) -> dict[str, str]:
        return {k: self.get(k) for k, g in GUCS.items() if g.report}

    def _changed(self, before: dict[str, str]) -> list[str]:
        return [GUCS[k].name for k, v in before.items() if self.get(k) != v]

    def reported(self) -> list[tuple[str, str]]:
        return [(g.name, self.get(k)) for k, g in GUCS.items() if g.report]

    def all(self) -> list[tuple[str, str, Guc]]:
        return [(g.name, self.get(k), g) for k, g in sorted(GUCS.items())]
