"""START_REPLICATION options of pgoutput, validated as PostgreSQL's ``pgoutput_startup`` does.

A subscriber learns whether the publisher accepts it from the answer to START_REPLICATION,
and it keys its retry behaviour on the SQLSTATE, so the checks, their order, the wording
and the codes follow ``parse_output_parameters`` and ``pgoutput_startup`` of the server
version being emulated (``server_version_num``): PostgreSQL 15 knows protocol 1-3 and the
options proto_version, publication_names, binary, messages, streaming (a boolean) and
two_phase; PostgreSQL 16 adds protocol 4, ``streaming 'parallel'`` and ``origin``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from decoding.errors import PgError

__all__ = ["PgOutputOptions", "split_identifier_string"]

#: NAMEDATALEN - 1: identifiers are cut to this many bytes (at a character boundary).
_MAX_IDENTIFIER_BYTES = 63
_SPACE = " \t\n\r\f"  # scanner_isspace
_UINT32_MAX = 0xFFFFFFFF
_ULONG_MAX = 0xFFFFFFFFFFFFFFFF


def _truncate_identifier(name: str) -> str:
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) <= _MAX_IDENTIFIER_BYTES:
        return name
    cut = raw[:_MAX_IDENTIFIER_BYTES]
    # pg_mbcliplen: never split a multibyte character.
    return cut.decode("utf-8", "ignore")


def _downcase(name: str) -> str:
    # downcase_identifier in a multibyte encoding folds ASCII letters only.
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in name)


def split_identifier_string(raw: str, separator: str = ",") -> list[str] | None:
    """PostgreSQL's ``SplitIdentifierString``: a separator-delimited list of identifiers,
    double-quoted ones kept verbatim (``""`` is a quote), bare ones downcased, all cut to
    63 bytes. Returns None for invalid syntax, ``[]`` for an empty or blank string."""
    s = raw.split("\0", 1)[0]  # the C string ends at the first NUL
    names: list[str] = []
    i, n = 0, len(s)
    while i < n and s[i] in _SPACE:
        i += 1
    if i == n:
        return names
    while True:
        if s[i] == '"':
            parts: list[str] = []
            j = i + 1
            while True:
                end = s.find('"', j)
                if end < 0:
                    return None  # mismatched quotes
                parts.append(s[j:end])
                if end + 1 < n and s[end + 1] == '"':
                    parts.append('"')
                    j = end + 2
                    continue
                break
            name = "".join(parts)
            i = end + 1
        else:
            j = i
            while j < n and s[j] != separator and s[j] not in _SPACE:
                j += 1
            if j == i:
                return None  # empty unquoted name
            name = _downcase(s[i:j])
            i = j
        while i < n and s[i] in _SPACE:
            i += 1
        names.append(_truncate_identifier(name))
        if i < n and s[i] == separator:
            i += 1
            while i < n and s[i] in _SPACE:
                i += 1
            if i == n:
                return None  # a separator must be followed by a name
            continue
        if i == n:
            return names
        return None


def _strtoul(text: str) -> int | None:
    """C ``strtoul(text, &end, 10)`` with PostgreSQL's checks (``errno == 0 && *end == 0``):
    leading blanks and a sign are allowed, a negative value wraps; None when invalid."""
    s = text.lstrip(" \t\n\r\f\v")
    neg = False
    if s[:1] in ("+", "-"):
        neg = s[0] == "-"
        s = s[1:]
    if not s:
        # No digits: strtoul returns 0 and leaves end at the start of the input.
        return 0 if text == "" else None
    if not s.isascii() or not s.isdigit():
        return None
    value = int(s)
    if value > _ULONG_MAX:
        return None  # ERANGE
    return (-value) & _ULONG_MAX if neg else value


def _int32(value: int) -> int:
    """How ``%d`` prints a uint32."""
    value &= _UINT32_MAX
    return value - (1 << 32) if value >= 1 << 31 else value


def _def_get_boolean(name: str, value: str | None) -> bool:
    if value is None:
        return True
    v = value.lower()
    if v in ("true", "on"):
        return True
    if v in ("false", "off"):
        return False
    raise PgError("42601", f"{name} requires a Boolean value")


def _def_get_streaming(name: str, value: str | None) -> str:
    if value is None:
        return "on"
    v = value.lower()
    if v in ("true", "on"):
        return "on"
    if v in ("false", "off"):
        return "off"
    if v == "parallel":
        return "parallel"
    raise PgError("42601", f'{name} requires a Boolean value or "parallel"')


def _redundant() -> PgError:
    return PgError("42601", "conflicting or redundant options")


@dataclass(frozen=True, slots=True)
class PgOutputOptions:
    """The validated plugin options of one START_REPLICATION.

    ``streaming`` is 'off', 'on' or 'parallel'. Accepting 'on' is sound even though the
    plugin never streams: PostgreSQL only streams a transaction once it outgrows
    ``logical_decoding_work_mem``, so a subscriber must accept whole transactions anyway.
    ``origin`` is 'any' or 'none' (PostgreSQL 16+).
    """

    proto_version: int
    publication_names: tuple[str, ...]
    binary: bool = False
    messages: bool = False
    streaming: str = "off"
    two_phase: bool = False
    origin: str = "any"

    @classmethod
    def parse(
        cls, options: Sequence[tuple[str, str | None]], server_version_num: int = 150000
    ) -> PgOutputOptions:
        """Validate the raw ``(name, value)`` pairs (value None: given without a value) in
        order, raising :class:`PgError` with PostgreSQL's SQLSTATE and message."""
        pg16 = server_version_num >= 160000
        max_proto = 4 if pg16 else 3
        given: set[str] = set()
        proto = 0  # palloc0: a missing proto_version reads as 0
        names: list[str] = []
        binary = messages = two_phase = False
        streaming = "off"
        origin = "any"

        def once(name: str) -> None:
            if name in given:
                raise _redundant()
            given.add(name)

        for name, value in options:
            if name == "proto_version":
                once(name)
                parsed = None if value is None else _strtoul(value)
                if parsed is None:
                    raise PgError("22023", "invalid proto_version")
                if parsed > _UINT32_MAX:
                    raise PgError("22023", f'proto_version "{value}" out of range')
                proto = parsed
            elif name == "publication_names":
                once(name)
                split = None if value is None else split_identifier_string(value)
                if split is None:
                    raise PgError("42602", "invalid publication_names syntax")
                names = split
            elif name == "binary":
                once(name)
                binary = _def_get_boolean(name, value)
            elif name == "messages":
                once(name)
                messages = _def_get_boolean(name, value)
            elif name == "streaming":
                once(name)
                if pg16:
                    streaming = _def_get_streaming(name, value)
                else:
                    streaming = "on" if _def_get_boolean(name, value) else "off"
            elif name == "two_phase":
                once(name)
                two_phase = _def_get_boolean(name, value)
            elif name == "origin" and pg16:
                once(name)
                if value is None:
                    raise PgError("42601", f"{name} requires a parameter")
                if value.lower() not in ("none", "any"):
                    raise PgError("22023", f'unrecognized origin value: "{value}"')
                origin = value.lower()
            else:
                # elog(ERROR): an internal error, SQLSTATE XX000.
                raise PgError("XX000", f"unrecognized pgoutput option: {name}")

        shown = _int32(proto)
        only = "server only supports" if pg16 else "we only support"
        if proto > max_proto:
            raise PgError(
                "0A000",
                f"client sent proto_version={shown} but {only} protocol {max_proto} or lower",
            )
        if proto < 1:
            raise PgError(
                "0A000", f"client sent proto_version={shown} but {only} protocol 1 or higher"
            )
        if not names:
            raise PgError("22023", "publication_names parameter missing")
        if streaming == "on" and proto < 2:
            raise PgError(
                "22023",
                f"requested proto_version={shown} does not support streaming, need 2 or higher",
            )
        if streaming == "parallel" and proto < 4:
            raise PgError(
                "22023",
                f"requested proto_version={shown} does not support parallel streaming, "
                "need 4 or higher",
            )
        if two_phase and proto < 3:
            raise PgError(
                "22023",
                f"requested proto_version={shown} does not support two-phase commit, "
                "need 3 or higher",
            )
        return cls(proto, tuple(names), binary, messages, streaming, two_phase, origin)
