"""The server log as PostgreSQL writes it: ``%m [%p] LEVEL:  message`` lines, an ERROR
sent to a client logged with its DETAIL, HINT and the STATEMENT that raised it
(``log_min_error_statement``), so a failing client can be debugged from the log alone."""

from __future__ import annotations

import logging
import time

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


class PgLogFormatter(logging.Formatter):
    """``2026-11-26 10:00:00.123 UTC [10001] ERROR:  message``: the time to the millisecond
    in UTC and the backend's pid (PostgreSQL's default ``log_line_prefix`` ``%m [%p] ``);
    the OS process id where no backend is named."""

    converter = time.gmtime

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", self.converter(record.created))
        pid = getattr(record, "backend_pid", None) or record.process
        level = getattr(record, "pg_level", None) or _PG_LEVELS.get(record.levelno, record.levelname)
        head = f"{stamp}.{int(record.msecs):03d} UTC [{pid}] "
        text = f"{head}{level}:  {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def configure(level: int = logging.INFO) -> None:
    """The server's logging: PostgreSQL's line format on standard error."""
    handler = logging.StreamHandler()
    handler.setFormatter(PgLogFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def log_error(logger: logging.Logger, e: PgError, *, backend_pid: int, statement: str | None, min_error_statement: str = "error") -> None:
    """An ERROR sent to a client, as PostgreSQL logs it: the message, its DETAIL and HINT,
    then the statement when ``log_min_error_statement`` is ``error`` or less severe."""
    severity = "error"

    def line(level: str, text: str) -> None:
        logger.error("%s", text, extra={"pg_level": level, "backend_pid": backend_pid})

    position = getattr(e, "position", None)
    line("ERROR", e.message + (f" at character {position}" if position else ""))
    if e.detail:
        line("DETAIL", e.detail)
    if e.hint:
        line("HINT", e.hint)
    wanted = min_error_statement.lower()
    if statement and wanted in SEVERITIES and SEVERITIES.index(severity) >= SEVERITIES.index(wanted):
        line("STATEMENT", statement)
