"""The one error type every layer raises for conditions a client must hear about.

It carries what an ErrorResponse carries (SQLSTATE, message, detail, hint), so the server
can forward any error from the lake, the catalog or decoding to a client unchanged.
"""

from __future__ import annotations


class PgError(Exception):
    def __init__(
        self, sqlstate: str, message: str, *, detail: str | None = None, hint: str | None = None
    ) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
        self.message = message
        self.detail = detail
        self.hint = hint
