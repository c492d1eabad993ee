"""``nextval``, ``currval``, ``setval`` and ``lastval`` from SQL, as DuckDB UDFs (see
:mod:`walsender_proxy.sql.functions`): the rewriter hands them the calling backend's pid and
the sequence's OID (a name is resolved as regclass input resolves it), and they act on that
session's :class:`~walsender_proxy.sql.sequences.SessionSequences` and the lake's counters.
A DuckDB scalar UDF runs once per row, in row order: ``nextval`` in a multi-row INSERT
gives each row its own value, as PostgreSQL's."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from decoding.catalog import Sequence, is_temp_schema
from decoding.errors import PgError
from walsender_proxy.sql.rewrite_funcs import ARITY_SUFFIX
from walsender_proxy.sql.sequences import owned_sequence_name, sequence_for

if TYPE_CHECKING:
    from walsender_proxy.sql.services import SessionState, SqlServices

Udf = tuple[str, Callable[..., Any], list[str], str]

#: The sequence functions; setval has a UDF per arity (2 and 3 arguments).
NAMES = ("nextval", "currval", "setval", "lastval", "pg_get_serial_sequence")
#: The UDFs whose result may be NULL.
NULLABLE = frozenset({"pg_get_serial_sequence"})


def udfs(services: SqlServices, session: Callable[[int], SessionState]) -> list[Udf]:
    lake = services.lake

    def sequence(ex: SessionState, oid: int) -> Sequence:
        tx = ex.tx
        cat = tx.catalog() if tx is not None else lake.catalog
        sq = sequence_for(cat, int(oid))
        if is_temp_schema(sq.schema):
            ex.temp_read = True  # (PREPARE TRANSACTION refuses it then)
        return sq

    def writable(ex: SessionState, sq: Sequence, fn: str) -> None:
        tx = ex.tx
        if tx is not None and tx.read_only and not is_temp_schema(sq.schema):
            raise PgError("25006", f"cannot execute {fn}() in a read-only transaction")

    def nextval(pid: int, oid: int) -> int:
        ex = session(pid)
        sq = sequence(ex, oid)
        writable(ex, sq, "nextval")
        return ex.sequences.nextval(lake, sq)

    def currval(pid: int, oid: int) -> int:
        ex = session(pid)
        return ex.sequences.currval(sequence(ex, oid))

    def setval(pid: int, oid: int, value: int, is_called: bool = True) -> int:
        ex = session(pid)
        sq = sequence(ex, oid)
        writable(ex, sq, "setval")
        return ex.sequences.setval(lake, sq, int(value), bool(is_called))

    def setval2(pid: int, oid: int, value: int) -> int:  # (DuckDB reads the arity off the signature)
        return setval(pid, oid, value, True)

    def setval3(pid: int, oid: int, value: int, is_called: bool) -> int:
        return setval(pid, oid, value, is_called)

    def lastval(pid: int) -> int:
        ex = session(pid)
        tx = ex.tx
        return ex.sequences.lastval(tx.catalog() if tx is not None else lake.catalog)

    def serial_sequence(pid: int, table: str | None, column: str | None) -> str | None:
        """pg_get_serial_sequence: the sequence a serial or identity column owns, as
        ``schema.name``; 42P01 / 42703 for a table / column that does not exist."""
        if table is None or column is None:
            return None
        ex = session(pid)
        tx = ex.tx
        if tx is None:
            return None
        return owned_sequence_name(tx, table, column)

    return [
        ("pg_get_serial_sequence", serial_sequence, ["INTEGER", "VARCHAR", "VARCHAR"], "VARCHAR"),
        ("nextval", nextval, ["INTEGER", "BIGINT"], "BIGINT"),
        ("currval", currval, ["INTEGER", "BIGINT"], "BIGINT"),
        ("setval" + ARITY_SUFFIX + "2", setval2, ["INTEGER", "BIGINT", "BIGINT"], "BIGINT"),
        ("setval" + ARITY_SUFFIX + "3", setval3, ["INTEGER", "BIGINT", "BIGINT", "BOOLEAN"], "BIGINT"),
        ("lastval", lastval, ["INTEGER"], "BIGINT"),
    ]
