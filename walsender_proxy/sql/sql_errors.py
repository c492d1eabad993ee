"""The errors the SQL translation raises: PostgreSQL's, with the character position it
reports (the ErrorResponse's ``P`` field). Below every module of the translation, so each
raises them without importing the rewriter."""

from __future__ import annotations

from decoding.errors import PgError


class SqlError(PgError):
    """A PgError with the 1-based character position PostgreSQL reports (``P`` field)."""

    def __init__(
        self,
        sqlstate: str,
        message: str,
        position: int | None = None,
        *,
        detail: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(sqlstate, message, detail=detail, hint=hint)
        self.position = position


class ServerFunctionError(SqlError):
    """The statement calls a function with server-side effects (slots, backends…)."""

    def __init__(self, function: str, position: int | None) -> None:
        super().__init__("0A000", f"function {function}() must be executed by the server", position)
        self.function = function


class NotAQueryError(SqlError):
    """Only SELECT, VALUES and COPY (…) TO STDOUT are rewritten; the server does the rest."""
