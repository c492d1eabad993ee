"""The one error type every layer raises for conditions a client must hear about.

It carries what an ErrorResponse carries (SQLSTATE, message, detail, hint), so the server
can forward any error from the lake, the catalog or decoding to a client unchanged.
"""

from __future__ import annotations

import errno
import os


class PgError(Exception):
    #: The object an integrity error is about (ErrorResponse's s, t, c, n fields), which
    #: drivers expose (node-postgres ``e.constraint``, pgjdbc ``ServerErrorMessage``).
    schema: str | None = None
    table: str | None = None
    column: str | None = None
    constraint: str | None = None

    def __init__(
        self, sqlstate: str, message: str, *, detail: str | None = None, hint: str | None = None
    ) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
        self.message = message
        self.detail = detail
        self.hint = hint

    def about(
        self,
        schema: str | None = None,
        table: str | None = None,
        column: str | None = None,
        constraint: str | None = None,
    ) -> PgError:
        """This error, naming the object it is about; returns itself."""
        self.schema, self.table, self.column, self.constraint = schema, table, column, constraint
        return self


#: errno values PostgreSQL reports as a full disk (errcode_for_file_access).
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})

_FILE_ACCESS = {
    errno.EPERM: "42501",
    errno.EACCES: "42501",
    errno.EROFS: "42501",
    errno.ENOENT: "58P01",
    errno.EEXIST: "58P02",
    errno.ENOTDIR: "42809",
    errno.EISDIR: "42809",
    errno.ENOTEMPTY: "42809",
    errno.ENOSPC: "53100",
    errno.EDQUOT: "53100",
    errno.ENFILE: "53000",
    errno.EMFILE: "53000",
    errno.EIO: "58030",
}


def file_access_error(e: OSError, what: str) -> PgError:
    """An OSError of file I/O as PostgreSQL reports it: ``what`` says what could not be done
    (``could not extend file "wal/…"``), the system's text follows (``%m``), and the
    SQLSTATE is errcode_for_file_access's (53100 for a full disk, with its hint)."""
    code = _FILE_ACCESS.get(e.errno or 0, "58030")
    hint = "Check free disk space." if code == "53100" else None
    text = os.strerror(e.errno) if e.errno else str(e)  # (libraries word it their own way)
    return PgError(code, f"{what}: {text}", hint=hint)


def disk_full_error(e: BaseException, what: str) -> PgError | None:
    """53100 if ``e`` reports a full disk, whoever raised it: an OSError with its errno, or
    a library that words it in its own exception (pyarrow's ArrowIOError, DuckDB's
    IOException carry the system's text); else None."""
    if isinstance(e, OSError) and e.errno in DISK_FULL_ERRNOS:
        return file_access_error(e, what)
    text = str(e)
    for code in DISK_FULL_ERRNOS:
        strerror = os.strerror(code)
        if strerror in text:
            return PgError("53100", f"{what}: {strerror}", hint="Check free disk space.")
    return None
