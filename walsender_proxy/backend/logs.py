"""The server log as PostgreSQL writes it.

Every line starts with ``log_line_prefix`` (PostgreSQL's escapes, default ``%m [%p] ``),
then ``LEVEL:  message``. An ERROR sent to a client is logged with its DETAIL and HINT and
the STATEMENT that raised it (``log_min_error_statement``); ``log_statement`` logs the
statements a session runs (``statement: …``, ``execute <unnamed>: …`` with its
parameters), so a failing client can be debugged from the log alone.

A line written for a session carries its :class:`LogSession` (``extra={"session": …}``);
any other line is the server's own, printed as PostgreSQL prints the postmaster's.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from decoding.errors import PgError

#: Python's levels as PostgreSQL names its own.
_PG_LEVELS = {
    logging.DEBUG: "DEBUG",
    logging.INFO: "LOG",
    logging.WARNING: "WARNING",
    logging.ERROR: "ERROR",
    logging.CRITICAL: "FATAL",
}
#: PostgreSQL's message levels, least severe first (for log_min_error_statement).
SEVERITIES = ("debug5", "debug4", "debug3", "debug2", "debug1", "info", "notice", "warning", "error", "log", "fatal", "panic")
DEFAULT_LINE_PREFIX = "%m [%p] "
#: log_line_prefix escapes the proxy cannot fill as PostgreSQL does (the command tag of
#: the process title, virtual and real transaction ids); a prefix using one is refused.
_UNSUPPORTED_ESCAPES = {"i": "the command tag (%i)", "v": "virtual transaction ids (%v)", "x": "transaction ids (%x)"}
_ESCAPE = re.compile(r"%(-?\d*)(.)", re.DOTALL)
_SERVER_START = time.time()


@dataclass(slots=True)
class LogSession:
    """What a session's log lines show of it (the escapes of log_line_prefix)."""

    pid: int
    user: str
    database: str
    host: str | None
    port: int | None
    start: float  # Unix time
    backend_type: str = "client backend"
    application_name: Callable[[], str] = lambda: ""
    lines: itertools.count = field(default_factory=lambda: itertools.count(1))


def check_line_prefix(prefix: str) -> str:
    """A log_line_prefix the proxy can honour, or 0A000 naming the escape it cannot."""
    for m in _ESCAPE.finditer(prefix):
        what = _UNSUPPORTED_ESCAPES.get(m.group(2))
        if what is not None:
            raise PgError("0A000", f"log_line_prefix: {what} is not supported by walsender-proxy")
    return prefix


def _stamp(t: float, millis: bool) -> str:
    text = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
    return f"{text}.{int(t * 1000) % 1000:03d} UTC" if millis else f"{text} UTC"


class PgLogFormatter(logging.Formatter):
    """``log_line_prefix`` expanded as PostgreSQL's log_line_prefix() does (times in UTC),
    then ``LEVEL:  message``."""

    def __init__(self, prefix: str = DEFAULT_LINE_PREFIX) -> None:
        super().__init__()
        self.prefix = check_line_prefix(prefix)
        self._server_lines = itertools.count(1)

    def format(self, record: logging.LogRecord) -> str:
        level = getattr(record, "pg_level", None) or _PG_LEVELS.get(record.levelno, record.levelname)
        text = f"{self.line_prefix(record)}{level}:  {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text

    def line_prefix(self, record: logging.LogRecord) -> str:
        session: LogSession | None = getattr(record, "session", None)
        pid = session.pid if session is not None else getattr(record, "backend_pid", None) or os.getpid()
        line = next(session.lines if session is not None else self._server_lines)
        start = session.start if session is not None else _SERVER_START
        out: list[str] = []
        pos = 0
        for m in _ESCAPE.finditer(self.prefix):
            out.append(self.prefix[pos : m.start()])
            pos = m.end()
            pad, code = m.group(1), m.group(2)
            if code == "q":
                if session is None:
                    return "".join(out)
                continue
            value = self._escape(code, session, pid, line, start, record)
            if value is None:
                continue
            if pad and pad != "-":
                width = int(pad)
                value = value.rjust(width) if width > 0 else value.ljust(-width)
            out.append(value)
        out.append(self.prefix[pos:])
        return "".join(out)

    @staticmethod
    def _escape(code: str, s: LogSession | None, pid: int, line: int, start: float, record: logging.LogRecord) -> str | None:
        if code == "%":
            return "%"
        if code == "m":
            return _stamp(record.created, True)
        if code == "t":
            return _stamp(record.created, False)
        if code == "n":
            return f"{record.created:.3f}"
        if code == "p":
            return str(pid)
        if code == "P":
            return ""  # (no parallel workers: PostgreSQL prints nothing outside one)
        if code == "l":
            return str(line)
        if code == "s":
            return _stamp(start, False)
        if code == "c":
            return f"{int(start):x}.{pid:x}"
        if code == "e":
            return getattr(record, "sqlstate", "00000")
        if code == "b":
            return s.backend_type if s is not None else "postmaster"
        if s is None:
            return "" if code in "uadhr" else None
        if code == "u":
            return s.user
        if code == "d":
            return s.database
        if code == "a":
            return s.application_name()
        if code == "h":
            return s.host or "[local]"
        if code == "r":
            return f"{s.host}({s.port})" if s.host and s.port else (s.host or "[local]")
        return None  # (an unknown escape prints nothing, as in PostgreSQL)


_formatter = PgLogFormatter()


def configure(level: int = logging.INFO) -> None:
    """The server's logging: PostgreSQL's line format on standard error."""
    handler = logging.StreamHandler()
    handler.setFormatter(_formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def set_line_prefix(prefix: str) -> None:
    """The configuration's log_line_prefix (checked: 0A000 for an escape not honoured)."""
    _formatter.prefix = check_line_prefix(prefix)


def _line(logger: logging.Logger, session: LogSession | None, level: str, text: str, *, pid: int = 0, sqlstate: str = "00000") -> None:
    extra = {"pg_level": level, "session": session, "backend_pid": pid, "sqlstate": sqlstate}
    logger.log(logging.ERROR if level in ("ERROR", "FATAL") else logging.INFO, "%s", text, extra=extra)


def log_error(
    logger: logging.Logger, e: PgError, *, backend_pid: int, statement: str | None,
    min_error_statement: str = "error", session: LogSession | None = None,
) -> None:  # fmt: skip
    """An ERROR sent to a client, as PostgreSQL logs it: the message, its DETAIL and HINT,
    then the statement when ``log_min_error_statement`` is ``error`` or less severe."""
    severity = "error"

    def line(level: str, text: str) -> None:
        _line(logger, session, level, text, pid=backend_pid, sqlstate=e.sqlstate)

    position = getattr(e, "position", None)
    line("ERROR", e.message + (f" at character {position}" if position else ""))
    if e.detail:
        line("DETAIL", e.detail)
    if e.hint:
        line("HINT", e.hint)
    wanted = min_error_statement.lower()
    if statement and wanted in SEVERITIES and SEVERITIES.index(severity) >= SEVERITIES.index(wanted):
        line("STATEMENT", statement)


def _quoted(text: str, max_length: int) -> str:
    """appendStringInfoStringQuoted: single quotes doubled, cut at ``max_length``
    characters with ``...`` (a negative length: whole)."""
    cut = max_length >= 0 and len(text) > max_length
    body = (text[:max_length] if cut else text).replace("'", "''")
    return f"'{body}...'" if cut else f"'{body}'"


def parameters_detail(values: Sequence[str | None], max_length: int) -> str | None:
    """errdetail_params: ``parameters: $1 = '42', $2 = NULL`` (None when there are none
    or log_parameter_max_length is 0)."""
    if not values or max_length == 0:
        return None
    shown = ", ".join(f"${i} = " + ("NULL" if v is None else _quoted(v, max_length)) for i, v in enumerate(values, 1))
    return f"parameters: {shown}"


def log_statement(logger: logging.Logger, session: LogSession | None, message: str, detail: str | None = None) -> None:
    """A statement logged by log_statement: ``LOG:  statement: …`` or ``LOG:  execute
    <name>: …`` with the parameters' DETAIL."""
    pid = session.pid if session is not None else 0
    _line(logger, session, "LOG", message, pid=pid)
    if detail:
        _line(logger, session, "DETAIL", detail, pid=pid)
