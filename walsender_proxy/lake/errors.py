"""Errors of the lake, each with the SQLSTATE PostgreSQL sends for the same condition, so the
SQL server can pass them to clients unchanged."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from decoding.catalog import Table
from decoding.errors import PgError
from decoding.pgvalues import text_encoder

#: Errors of the lake are the project's :class:`~decoding.errors.PgError`.
LakeError = PgError


def serialization_failure(detail: str | None = None) -> LakeError:
    return LakeError("40001", "could not serialize access due to concurrent update", detail=detail)


def unique_violation(
    constraint: str, key_cols: list[str], key_vals: list[object], schema: str | None = None, table: str | None = None
) -> LakeError:
    cols = ", ".join(key_cols)
    vals = ", ".join("null" if v is None else str(v) for v in key_vals)
    return LakeError(
        "23505",
        f'duplicate key value violates unique constraint "{constraint}"',
        detail=f"Key ({cols})=({vals}) already exists.",
    ).about(schema=schema, table=table, constraint=constraint)


def not_null_violation(column: str, table: str, schema: str | None = None, row: list[str | None] | None = None) -> LakeError:
    """23502; ``row`` is the failing row's values as their output texts (PostgreSQL's
    DETAIL ``Failing row contains (…)``, each value cut at 64 bytes)."""
    detail = failing_row(row) if row is not None else None
    return LakeError(
        "23502",
        f'null value in column "{column}" of relation "{table}" violates not-null constraint',
        detail=detail,
    ).about(schema=schema, table=table, column=column)


def failing_row(row: Sequence[str | None]) -> str:
    """ExecBuildSlotValueDescription's DETAIL: ``Failing row contains (…).``"""
    return "Failing row contains (" + ", ".join("null" if v is None else _clip(v) for v in row) + ")."


def _clip(value: str, limit: int = 64) -> str:
    """ExecBuildSlotValueDescription's cut: at most ``limit`` bytes, whole characters, '...'."""
    raw = value.encode()
    if len(raw) <= limit:
        return value
    return raw[:limit].decode(errors="ignore") + "..."


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


def key_texts(t: Table, columns: Sequence[str], values: Sequence[Any]) -> list[str | None]:
    """Key values as their type's output function prints them (the DETAIL of a 23505)."""
    out: list[str | None] = []
    for name, v in zip(columns, values, strict=True):
        col = t.column(name)
        if v is None or col is None:
            out.append(None if v is None else str(v))
            continue
        try:
            raw = text_encoder(col.type)(pa.array([v], col.type.arrow))[0]
        except (pa.ArrowException, ValueError, TypeError):
            raw = str(v).encode()
        out.append(None if raw is None else raw.decode())
    return out
