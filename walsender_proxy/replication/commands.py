"""Parser for the WalSender replication commands, modelled on PostgreSQL's grammar.

A replication connection accepts both replication commands and SQL in one ``Q`` message
stream. PostgreSQL tells them apart by lexing *only the first token* with the replication
scanner (``repl_scanner.l``: ``replication_scanner_is_replication_command``): if it is one
of the command keywords the whole text is parsed by ``repl_gram.y``, otherwise the text is
SQL. :func:`parse_command` does the same and returns ``None`` for SQL, so the caller runs
the text through the SQL engine.

The lexer mirrors ``repl_scanner.l`` rule by rule, including the parts that surprise:

* Keywords are **case-sensitive** (the scanner has no ``caseless`` option): ``SHOW x`` is a
  replication command, ``show x`` is SQL, and ``identify_system`` is a SQL syntax error.
  Keywords that appear as generic option *names* (``(TWO_PHASE, SNAPSHOT 'use')``) behave
  case-insensitively only because the grammar maps them to lower-case names and plain
  identifiers are down-cased.
* Unquoted identifiers are down-cased (ASCII only) and truncated to 63 bytes, quoted ones
  keep their case and are truncated too. A doubled ``""`` is *not* an escape here (there is
  no rule for it): ``"a""b"`` lexes as two identifiers, so it is a syntax error.
* String literals use ``''`` for an embedded quote and nothing else (no backslash escapes).
* ``X/X`` (hex, no blanks) is one token, ``RECPTR``; plain digits are ``UCONST``, converted
  like C's ``strtoul`` into a ``uint32`` (so ``TIMELINE 4294967296`` is timeline 0).
* Flex picks the longest match, so ``SLOTS`` is an identifier, not ``SLOT`` + ``S``.

Errors are :class:`~decoding.errors.PgError` with the SQLSTATE and wording PostgreSQL sends
(checked against a real PostgreSQL 15 over ``replication=database``): grammar errors are a
bare ``syntax error`` (42601, no "at or near": bison's default message), option validation
follows ``walsender.c`` (``parseCreateReplSlotOptions``, ``AlterReplicationSlot``) and
``define.c`` (``defGetBoolean`` / ``defGetString``), including the ``elog`` ones that carry
SQLSTATE XX000 (``unrecognized option: foo``).

Deliberate departures from PostgreSQL:

* The grammar is the union of the PostgreSQL 14-18 grammars (``ALTER_REPLICATION_SLOT`` and
  ``UPLOAD_MANIFEST`` are accepted whatever ``server_version`` the proxy advertises, as is
  the PostgreSQL 14 ``BASE_BACKUP LABEL 'x' PROGRESS ...`` form), so that every client gets
  a parsed command and the session decides what it supports (``BASE_BACKUP`` is refused
  with 0A000 there, not with a confusing syntax error here).
* An LSN half with more than 8 significant hex digits is rejected ("invalid streaming start
  location") instead of being silently truncated by ``sscanf``.
* Identifier truncation happens without the NOTICE PostgreSQL emits.
* Option validation runs at parse time; PostgreSQL runs it at execution, after its
  aborted-transaction check (25P02), so only the precedence of those two errors differs.
* Text after a NUL character is ignored, as C string handling would do.

pgoutput / test_decoding option validation is not done here: ``START_REPLICATION`` keeps its
plugin options raw and in order, the output plugin judges them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Final, Literal, NamedTuple

from decoding.errors import PgError
from decoding.lsn import parse_lsn

__all__ = [
    "REPLICATION_COMMAND_KEYWORDS",
    "AlterReplicationSlot",
    "BaseBackup",
    "Command",
    "CreateReplicationSlot",
    "DropReplicationSlot",
    "GenericOptionValue",
    "IdentifySystem",
    "ReadReplicationSlot",
    "Show",
    "StartReplication",
    "TimelineHistory",
    "UploadManifest",
    "parse_command",
]

SYNTAX_ERROR: Final = "42601"
INVALID_PARAMETER_VALUE: Final = "22023"
INTERNAL_ERROR: Final = "XX000"

# NAMEDATALEN - 1: identifiers longer than this (in bytes) are truncated by the scanner.
_MAX_IDENTIFIER_BYTES: Final = 63

SlotKind = Literal["logical", "physical"]
SnapshotAction = Literal["export", "use", "nothing"]

GenericOptionValue = str | int | bool | None
"""The value of a ``DefElem`` as the grammar builds it.

``str`` for an identifier or a string literal, ``int`` for a number (a C ``int``, so
4294967295 arrives as -1, exactly as PostgreSQL reports it), ``bool`` for the legacy
keyword options (``RESERVE_WAL`` means ``reserve_wal true``), ``None`` when no value was
given.
"""


# --------------------------------------------------------------------------- commands


@dataclass(frozen=True, slots=True)
class IdentifySystem:
    """``IDENTIFY_SYSTEM``."""

    tag: ClassVar[str] = "IDENTIFY_SYSTEM"


@dataclass(frozen=True, slots=True)
class Show:
    """``SHOW name``; ``name`` may be dotted (``SHOW a.b``), parts joined with ``.``.

    The name is as lexed (down-cased unless quoted); PostgreSQL's GUC lookup is itself
    case-insensitive, which is the executor's business.
    """

    name: str
    tag: ClassVar[str] = "SHOW"


@dataclass(frozen=True, slots=True)
class TimelineHistory:
    """``TIMELINE_HISTORY n`` (n > 0)."""

    timeline: int
    tag: ClassVar[str] = "TIMELINE_HISTORY"


@dataclass(frozen=True, slots=True)
class ReadReplicationSlot:
    """``READ_REPLICATION_SLOT name`` (PostgreSQL's grammar allows a dotted name here)."""

    slot_name: str
    tag: ClassVar[str] = "READ_REPLICATION_SLOT"


@dataclass(frozen=True, slots=True)
class CreateReplicationSlot:
    """``CREATE_REPLICATION_SLOT name [TEMPORARY] {PHYSICAL | LOGICAL plugin} [options]``.

    The fields are the options after ``parseCreateReplSlotOptions``: ``snapshot`` defaults
    to ``'export'`` as in PostgreSQL (for a physical slot it is meaningless and always the
    default, since a SNAPSHOT option is rejected there). ``options`` keeps what the client
    wrote, in order, legacy keywords translated to the names the grammar gives them.
    """

    slot_name: str
    temporary: bool
    kind: SlotKind
    plugin: str | None
    snapshot: SnapshotAction = "export"
    two_phase: bool = False
    reserve_wal: bool = False
    failover: bool = False
    options: tuple[tuple[str, GenericOptionValue], ...] = ()
    tag: ClassVar[str] = "CREATE_REPLICATION_SLOT"


@dataclass(frozen=True, slots=True)
class DropReplicationSlot:
    """``DROP_REPLICATION_SLOT name [WAIT]``."""

    slot_name: str
    wait: bool = False
    tag: ClassVar[str] = "DROP_REPLICATION_SLOT"


@dataclass(frozen=True, slots=True)
class AlterReplicationSlot:
    """``ALTER_REPLICATION_SLOT name (FAILOVER [bool], TWO_PHASE [bool])``.

    ``options`` holds only the options given (PostgreSQL leaves the others unchanged), keyed
    ``'failover'`` / ``'two_phase'``.
    """

    slot_name: str
    options: dict[str, bool] = field(default_factory=dict)
    tag: ClassVar[str] = "ALTER_REPLICATION_SLOT"

    @property
    def failover(self) -> bool | None:
        """The new failover flag, or None when the command leaves it alone."""
        return self.options.get("failover")

    @property
    def two_phase(self) -> bool | None:
        """The new two_phase flag, or None when the command leaves it alone."""
        return self.options.get("two_phase")


@dataclass(frozen=True, slots=True)
class StartReplication:
    """``START_REPLICATION [SLOT s] [PHYSICAL] X/X [TIMELINE n]`` or
    ``START_REPLICATION SLOT s LOGICAL X/X [(name ['value'], ...)]``.

    ``timeline`` is None when not given (physical only). ``options`` are the plugin options
    exactly as sent, in order, duplicates kept: names as lexed identifiers, values the raw
    string literals (None when only a name was given).
    """

    slot_name: str | None
    kind: SlotKind
    start_lsn: int
    timeline: int | None = None
    options: tuple[tuple[str, str | None], ...] = ()
    tag: ClassVar[str] = "START_REPLICATION"


@dataclass(frozen=True, slots=True)
class BaseBackup:
    """``BASE_BACKUP [(option [value], ...)]``; parsed only so that it can be refused cleanly.

    Options are not validated (PostgreSQL does that in ``basebackup.c``).
    """

    options: tuple[tuple[str, GenericOptionValue], ...] = ()
    tag: ClassVar[str] = "BASE_BACKUP"


@dataclass(frozen=True, slots=True)
class UploadManifest:
    """``UPLOAD_MANIFEST`` (incremental backup, PostgreSQL 17)."""

    tag: ClassVar[str] = "UPLOAD_MANIFEST"


Command = (
    IdentifySystem
    | Show
    | TimelineHistory
    | ReadReplicationSlot
    | CreateReplicationSlot
    | DropReplicationSlot
    | AlterReplicationSlot
    | StartReplication
    | BaseBackup
    | UploadManifest
)


# --------------------------------------------------------------------------- lexer

# Every keyword of repl_scanner.l (PostgreSQL 18). Exact, upper-case spelling only.
_KEYWORDS: Final = frozenset(
    {
        "BASE_BACKUP",
        "IDENTIFY_SYSTEM",
        "READ_REPLICATION_SLOT",
        "SHOW",
        "TIMELINE",
        "START_REPLICATION",
        "CREATE_REPLICATION_SLOT",
        "DROP_REPLICATION_SLOT",
        "ALTER_REPLICATION_SLOT",
        "TIMELINE_HISTORY",
        "PHYSICAL",
        "RESERVE_WAL",
        "LOGICAL",
        "SLOT",
        "TEMPORARY",
        "TWO_PHASE",
        "EXPORT_SNAPSHOT",
        "NOEXPORT_SNAPSHOT",
        "USE_SNAPSHOT",
        "WAIT",
        "UPLOAD_MANIFEST",
    }
)

REPLICATION_COMMAND_KEYWORDS: Final = frozenset(
    {
        "IDENTIFY_SYSTEM",
        "BASE_BACKUP",
        "START_REPLICATION",
        "CREATE_REPLICATION_SLOT",
        "DROP_REPLICATION_SLOT",
        "ALTER_REPLICATION_SLOT",
        "READ_REPLICATION_SLOT",
        "TIMELINE_HISTORY",
        "UPLOAD_MANIFEST",
        "SHOW",
    }
)
"""First tokens that make a text a replication command (``replication_scanner_is_replication_command``)."""

# Token kinds besides keywords (whose kind is the keyword itself) and single characters
# (whose kind is the character).
_IDENT: Final = "IDENT"
_SCONST: Final = "SCONST"
_UCONST: Final = "UCONST"
_RECPTR: Final = "RECPTR"
_EOF: Final = "EOF"

_SPACE_RE: Final = re.compile(r"[ \t\n\r\f\v]+")
# ident_start [A-Za-z\200-\377_], ident_cont adds [0-9$]; every non-ASCII character stands
# for the high-bit bytes of its UTF-8 encoding.
_IDENT_RE: Final = re.compile(r"[A-Za-z_\u0080-\U0010ffff][A-Za-z_0-9$\u0080-\U0010ffff]*")
_DIGITS_RE: Final = re.compile(r"[0-9]+")
_RECPTR_RE: Final = re.compile(r"([0-9A-Fa-f]+)/([0-9A-Fa-f]+)")

_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class _Token(NamedTuple):
    kind: str
    value: str | int | None = None


def _ascii_lower(text: str) -> str:
    """Down-case A-Z only, as ``downcase_identifier`` and ``pg_strcasecmp`` do for UTF-8."""
    return text.translate(_ASCII_LOWER)


def _truncate_identifier(name: str) -> str:
    """Clip to 63 bytes of UTF-8 on a character boundary (``truncate_identifier``)."""
    if len(name) * 4 <= _MAX_IDENTIFIER_BYTES:
        return name
    size = 0
    for i, ch in enumerate(name):
        cp = ord(ch)
        size += 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
        if size > _MAX_IDENTIFIER_BYTES:
            return name[:i]
    return name


def _strtoul_uint32(digits: str) -> int:
    """What ``uint32 x = strtoul(digits)`` stores: saturate at 2**64-1, keep the low 32 bits."""
    return min(int(digits), 2**64 - 1) & 0xFFFFFFFF


def _c_int(value: int) -> int:
    """A uint32 seen as a C ``int`` (``makeInteger`` takes an int)."""
    return value - 2**32 if value >= 2**31 else value


def _syntax_error(message: str = "syntax error") -> PgError:
    return PgError(SYNTAX_ERROR, message)


class _Lexer:
    """On-demand tokenizer; lazy so errors surface in the order the real scanner hits them."""

    def __init__(self, text: str) -> None:
        nul = text.find("\0")
        self._text = text if nul < 0 else text[:nul]
        self._pos = 0

    def next_token(self) -> _Token:
        text = self._text
        m = _SPACE_RE.match(text, self._pos)
        if m:
            self._pos = m.end()
        pos = self._pos
        if pos >= len(text):
            return _Token(_EOF)
        ch = text[pos]
        if ch == "'":
            return self._string(pos + 1)
        if ch == '"':
            return self._quoted_identifier(pos + 1)
        # Longest match wins. A RECPTR match always extends past the '/' that stops both
        # other patterns, so when it matches it is the longest; digits and identifiers
        # cannot start at the same character.
        m = _RECPTR_RE.match(text, pos)
        if m:
            self._pos = m.end()
            return _Token(_RECPTR, _lsn(m.group(1), m.group(2)))
        m = _DIGITS_RE.match(text, pos)
        if m:
            self._pos = m.end()
            return _Token(_UCONST, _strtoul_uint32(m.group()))
        m = _IDENT_RE.match(text, pos)
        if m:
            self._pos = m.end()
            word = m.group()
            if word in _KEYWORDS:  # a keyword rule precedes {identifier} on equal length
                return _Token(word)
            return _Token(_IDENT, _truncate_identifier(_ascii_lower(word)))
        self._pos = pos + 1
        return _Token(ch)

    def _string(self, start: int) -> _Token:
        text = self._text
        parts: list[str] = []
        pos = start
        while True:
            end = text.find("'", pos)
            if end < 0:
                raise _syntax_error("unterminated quoted string")
            parts.append(text[pos:end])
            if text.startswith("'", end + 1):  # xqdouble: '' is one quote
                parts.append("'")
                pos = end + 2
                continue
            self._pos = end + 1
            return _Token(_SCONST, "".join(parts))

    def _quoted_identifier(self, start: int) -> _Token:
        end = self._text.find('"', start)
        if end < 0:
            raise _syntax_error("unterminated quoted string")
        self._pos = end + 1
        return _Token(_IDENT, _truncate_identifier(self._text[start:end]))


def _lsn(hi: str, lo: str) -> int:
    """``%X/%X`` into an LSN; over-long halves are refused rather than truncated."""
    hi = hi.lstrip("0") or "0"
    lo = lo.lstrip("0") or "0"
    if len(hi) > 8 or len(lo) > 8:
        raise _syntax_error("invalid streaming start location")
    try:
        return parse_lsn(f"{hi}/{lo}")
    except ValueError:  # cannot happen after the checks above; keep the error contract
        raise _syntax_error("invalid streaming start location") from None


# --------------------------------------------------------------------------- parser

_LEGACY_SLOT_OPTIONS: Final[dict[str, tuple[str, GenericOptionValue]]] = {
    "EXPORT_SNAPSHOT": ("snapshot", "export"),
    "NOEXPORT_SNAPSHOT": ("snapshot", "nothing"),
    "USE_SNAPSHOT": ("snapshot", "use"),
    "RESERVE_WAL": ("reserve_wal", True),
    "TWO_PHASE": ("two_phase", True),
}

# PostgreSQL 14's BASE_BACKUP keywords and whether each takes a value (SCONST or UCONST).
_LEGACY_BASE_BACKUP_OPTIONS: Final[dict[str, str | None]] = {
    "label": _SCONST,
    "progress": None,
    "fast": None,
    "wal": None,
    "nowait": None,
    "max_rate": _UCONST,
    "tablespace_map": None,
    "noverify_checksums": None,
    "manifest": _SCONST,
    "manifest_checksums": _SCONST,
}


class _RawAlter(NamedTuple):
    """ALTER_REPLICATION_SLOT before option validation (duplicates still visible)."""

    slot_name: str
    options: tuple[tuple[str, GenericOptionValue], ...]


class _Parser:
    """Recursive descent over ``repl_gram.y`` with one token of (lazy) look-ahead."""

    def __init__(self, text: str) -> None:
        self._lexer = _Lexer(text)
        self._look: _Token | None = None

    def _peek(self) -> _Token:
        if self._look is None:
            self._look = self._lexer.next_token()
        return self._look

    def _advance(self) -> _Token:
        tok = self._peek()
        self._look = None
        return tok

    def _accept(self, kind: str) -> bool:
        if self._peek().kind == kind:
            self._advance()
            return True
        return False

    def _expect(self, kind: str) -> _Token:
        tok = self._advance()
        if tok.kind != kind:
            raise _syntax_error()
        return tok

    def _ident(self) -> str:
        value = self._expect(_IDENT).value
        assert isinstance(value, str)
        return value

    def _uconst(self) -> int:
        value = self._expect(_UCONST).value
        assert isinstance(value, int)
        return value

    def _timeline(self) -> int:
        """``UCONST`` checked as the grammar action does, before any further token is read."""
        timeline = self._uconst()
        if timeline == 0:
            raise _syntax_error(f"invalid timeline {timeline}")
        return timeline

    # ---- entry

    def parse(self) -> Command | _RawAlter | None:
        first = self._peek()
        if first.kind not in REPLICATION_COMMAND_KEYWORDS:
            return None
        self._advance()
        command = self._COMMANDS[first.kind](self)
        self._accept(";")
        if self._peek().kind != _EOF:
            raise _syntax_error()
        return command

    # ---- commands

    def _identify_system(self) -> IdentifySystem:
        return IdentifySystem()

    def _show(self) -> Show:
        return Show(self._var_name())

    def _read_replication_slot(self) -> ReadReplicationSlot:
        return ReadReplicationSlot(self._var_name())

    def _timeline_history(self) -> TimelineHistory:
        return TimelineHistory(self._timeline())

    def _upload_manifest(self) -> UploadManifest:
        return UploadManifest()

    def _base_backup(self) -> BaseBackup:
        if self._accept("("):
            options = self._generic_option_list()
            self._expect(")")
            return BaseBackup(options)
        return BaseBackup(self._legacy_base_backup_options())

    def _create_replication_slot(self) -> CreateReplicationSlot:
        slot_name = self._ident()
        temporary = self._accept("TEMPORARY")
        kind: SlotKind
        plugin: str | None = None
        if self._accept("PHYSICAL"):
            kind = "physical"
        elif self._accept("LOGICAL"):
            kind = "logical"
            plugin = self._ident()
        else:
            raise _syntax_error()
        if self._accept("("):
            options = self._generic_option_list()
            self._expect(")")
        else:
            legacy: list[tuple[str, GenericOptionValue]] = []
            while self._peek().kind in _LEGACY_SLOT_OPTIONS:
                legacy.append(_LEGACY_SLOT_OPTIONS[self._advance().kind])
            options = tuple(legacy)
        return CreateReplicationSlot(slot_name, temporary, kind, plugin, options=options)

    def _drop_replication_slot(self) -> DropReplicationSlot:
        slot_name = self._ident()
        return DropReplicationSlot(slot_name, wait=self._accept("WAIT"))

    def _alter_replication_slot(self) -> _RawAlter:
        slot_name = self._ident()
        self._expect("(")
        options = self._generic_option_list()
        self._expect(")")
        return _RawAlter(slot_name, options)

    def _start_replication(self) -> StartReplication:
        slot_name = self._ident() if self._accept("SLOT") else None
        if slot_name is not None and self._accept("LOGICAL"):
            start_lsn = self._recptr()
            return StartReplication(slot_name, "logical", start_lsn, options=self._plugin_options())
        self._accept("PHYSICAL")
        start_lsn = self._recptr()
        timeline = self._timeline() if self._accept("TIMELINE") else None
        return StartReplication(slot_name, "physical", start_lsn, timeline)

    _COMMANDS: ClassVar[dict[str, Callable[[_Parser], Command | _RawAlter]]] = {
        "IDENTIFY_SYSTEM": _identify_system,
        "SHOW": _show,
        "READ_REPLICATION_SLOT": _read_replication_slot,
        "TIMELINE_HISTORY": _timeline_history,
        "UPLOAD_MANIFEST": _upload_manifest,
        "BASE_BACKUP": _base_backup,
        "CREATE_REPLICATION_SLOT": _create_replication_slot,
        "DROP_REPLICATION_SLOT": _drop_replication_slot,
        "ALTER_REPLICATION_SLOT": _alter_replication_slot,
        "START_REPLICATION": _start_replication,
    }

    # ---- pieces

    def _recptr(self) -> int:
        value = self._expect(_RECPTR).value
        assert isinstance(value, int)
        return value

    def _var_name(self) -> str:
        parts = [self._ident()]
        while self._accept("."):
            parts.append(self._ident())
        return ".".join(parts)

    def _plugin_options(self) -> tuple[tuple[str, str | None], ...]:
        """``'(' IDENT [SCONST] {',' IDENT [SCONST]} ')'`` or nothing; keywords are not names."""
        if not self._accept("("):
            return ()
        options: list[tuple[str, str | None]] = []
        while True:
            name = self._ident()
            value: str | None = None
            if self._peek().kind == _SCONST:
                raw = self._advance().value
                assert isinstance(raw, str)
                value = raw
            options.append((name, value))
            if self._accept(")"):
                return tuple(options)
            self._expect(",")

    def _generic_option_list(self) -> tuple[tuple[str, GenericOptionValue], ...]:
        """``generic_option {',' generic_option}``: name is an identifier or any keyword
        (lower-cased), value an identifier, a string, a number or nothing."""
        options: list[tuple[str, GenericOptionValue]] = []
        while True:
            tok = self._advance()
            if tok.kind == _IDENT:
                assert isinstance(tok.value, str)
                name = tok.value
            elif tok.kind in _KEYWORDS:
                name = tok.kind.lower()
            else:
                raise _syntax_error()
            value: GenericOptionValue = None
            look = self._peek()
            if look.kind in (_IDENT, _SCONST):
                value = self._advance().value
            elif look.kind == _UCONST:
                raw = self._advance().value
                assert isinstance(raw, int)
                value = _c_int(raw)
            options.append((name, value))
            if self._peek().kind != ",":
                return tuple(options)
            self._advance()

    def _legacy_base_backup_options(self) -> tuple[tuple[str, GenericOptionValue], ...]:
        """PostgreSQL 14: ``BASE_BACKUP [LABEL 'x'] [PROGRESS] [MAX_RATE n] ...``."""
        options: list[tuple[str, GenericOptionValue]] = []
        while True:
            look = self._peek()
            if look.kind != _IDENT or look.value not in _LEGACY_BASE_BACKUP_OPTIONS:
                return tuple(options)
            self._advance()
            name = str(look.value)
            arg = _LEGACY_BASE_BACKUP_OPTIONS[name]
            if arg is None:
                options.append((name, True))
            elif arg == _SCONST:
                options.append((name, self._expect(_SCONST).value))
            else:
                options.append((name, _c_int(self._uconst())))


# --------------------------------------------------------------------------- options


def _def_get_string(name: str, value: GenericOptionValue) -> str:
    """``defGetString``: the value as text; a missing value is an error."""
    if value is None:
        raise _syntax_error(f"{name} requires a parameter")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _def_get_boolean(name: str, value: GenericOptionValue) -> bool:
    """``defGetBoolean``: no value means true; 0/1; true/false/on/off, ASCII case-insensitive."""
    if value is None:
        return True
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if value in (0, 1):
            return bool(value)
    else:
        word = _ascii_lower(value)
        if word in ("true", "on"):
            return True
        if word in ("false", "off"):
            return False
    raise _syntax_error(f"{name} requires a Boolean value")


def _conflicting() -> PgError:
    return _syntax_error("conflicting or redundant options")


def _unrecognized_option(name: str) -> PgError:
    # walsender.c uses elog(ERROR, ...) here, hence SQLSTATE XX000 rather than 42601.
    return PgError(INTERNAL_ERROR, f"unrecognized option: {name}")


def _resolve_create_options(cmd: CreateReplicationSlot) -> CreateReplicationSlot:
    """``parseCreateReplSlotOptions``: same checks, same order, same messages."""
    snapshot: SnapshotAction = "export"
    reserve_wal = two_phase = failover = False
    given: set[str] = set()
    logical = cmd.kind == "logical"
    for name, value in cmd.options:
        if name == "snapshot":
            if name in given or not logical:
                raise _conflicting()
            action = _def_get_string(name, value)
            given.add(name)
            if action == "export":
                snapshot = "export"
            elif action == "nothing":
                snapshot = "nothing"
            elif action == "use":
                snapshot = "use"
            else:
                raise PgError(
                    INVALID_PARAMETER_VALUE,
                    f'unrecognized value for CREATE_REPLICATION_SLOT option "{name}": "{action}"',
                )
        elif name == "reserve_wal":
            if name in given or logical:
                raise _conflicting()
            given.add(name)
            reserve_wal = _def_get_boolean(name, value)
        elif name == "two_phase":
            if name in given or not logical:
                raise _conflicting()
            given.add(name)
            two_phase = _def_get_boolean(name, value)
        elif name == "failover":
            if name in given or not logical:
                raise _conflicting()
            given.add(name)
            failover = _def_get_boolean(name, value)
        else:
            raise _unrecognized_option(name)
    return CreateReplicationSlot(
        cmd.slot_name,
        cmd.temporary,
        cmd.kind,
        cmd.plugin,
        snapshot=snapshot,
        two_phase=two_phase,
        reserve_wal=reserve_wal,
        failover=failover,
        options=cmd.options,
    )


def _resolve_alter_options(
    slot_name: str, options: tuple[tuple[str, GenericOptionValue], ...]
) -> AlterReplicationSlot:
    """``AlterReplicationSlot`` in walsender.c (PostgreSQL 18: failover and two_phase)."""
    resolved: dict[str, bool] = {}
    for name, value in options:
        if name not in ("failover", "two_phase"):
            raise _unrecognized_option(name)
        if name in resolved:
            raise _conflicting()
        resolved[name] = _def_get_boolean(name, value)
    return AlterReplicationSlot(slot_name, resolved)


# --------------------------------------------------------------------------- entry point


def parse_command(text: str) -> Command | None:
    """Parse one replication command, or return None if ``text`` is SQL.

    The decision is PostgreSQL's: only the first token is looked at, so anything not
    starting with an (upper-case) replication keyword is SQL, even if it is nonsense.
    Lexing that first token can itself fail (an unterminated quote), as in PostgreSQL.

    Raises :class:`PgError` for a replication command that is malformed or has invalid
    options; never anything else.
    """
    parser = _Parser(text)
    command = parser.parse()
    if isinstance(command, CreateReplicationSlot):
        return _resolve_create_options(command)
    if isinstance(command, _RawAlter):
        return _resolve_alter_options(command.slot_name, command.options)
    return command
