"""Errors of the lake, each with the SQLSTATE PostgreSQL sends for the same condition, so the
SQL server can pass them to clients unchanged."""

from __future__ import annotations

from decoding.errors import PgError

#: Errors of the lake are the project's :class:`~decoding.errors.PgError`.
LakeError = PgError


def serialization_failure(detail: str | None = None) -> LakeError:
    return LakeError("40001", "could not serialize access due to concurrent update", detail=detail)


def unique_violation(constraint: str, key_cols: list[str], key_vals: list[object]) -> LakeError:
    cols = ", ".join(key_cols)
    vals = ", ".join("null" if v is None else str(v) for v in key_vals)
    return LakeError(
        "23505",
        f'duplicate key value violates unique constraint "{constraint}"',
        detail=f"Key ({cols})=({vals}) already exists.",
    )


def not_null_violation(column: str, table: str, *, detail: str | None = None) -> LakeError:
    return LakeError(
        "23502",
        f'null value in column "{column}" of relation "{table}" violates not-null constraint',
        detail=detail,
    )


def transaction_aborted() -> LakeError:
    return LakeError(
        "25P02", "current transaction is aborted, commands ignored until end of transaction block"
    )


def no_active_transaction() -> LakeError:
    return LakeError("25P01", "there is no transaction in progress")


def snapshot_too_old(csn: int, oldest: int) -> LakeError:
    return LakeError(
        "72000",
        "snapshot too old",
        detail=f"CSN {csn} is older than the oldest retained snapshot {oldest}.",
    )
