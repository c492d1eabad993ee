"""Replication slots from SQL — ``pg_create_logical_replication_slot``,
``pg_replication_slot_advance``, ``pg_drop_replication_slot`` — as DuckDB UDFs (see
:mod:`walsender_proxy.sql.functions`). The slots are the walsender's
(:class:`~walsender_proxy.replication.slots.SlotStore`); these add PostgreSQL's checks on
the calling session and its record-shaped answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from decoding.errors import PgError
from decoding.lsn import format_lsn, parse_lsn
from walsender_proxy.sql.rewrite_funcs import ROW_SUFFIX, SET_SUFFIX

if TYPE_CHECKING:
    from walsender_proxy.sql.services import SessionState, SqlServices

Udf = tuple[str, Callable[..., Any], list[str], str]


def _record_text(row: dict[str, str]) -> str:
    """A record's text (what ``SELECT f(…)`` shows of a record-returning function), for
    values that need no quoting: slot names and LSNs."""
    return "(" + ",".join(row.values()) + ")"


def udfs(services: SqlServices, session: Callable[[int], SessionState]) -> list[Udf]:
    def slot_user(pid: int) -> SessionState:
        ex = session(pid)
        me = services.roles.get(ex.user)
        if me is None or not (me.superuser or me.replication):
            raise PgError("42501", "must be superuser or replication role to use replication slots")
        return ex

    def create_row(pid: int, name: str, plugin: str, temporary: bool, two_phase: bool) -> dict[str, str]:
        ex = slot_user(pid)
        if ex.tx is not None and ex.tx.xid is not None:
            raise PgError("25001", "cannot create logical replication slot in transaction that has performed writes")
        slot, _ = services.slots.create_logical(
            name, plugin, ex.database, owner=pid, temporary=bool(temporary), two_phase=bool(two_phase)
        )
        return {"slot_name": slot.name, "lsn": format_lsn(slot.confirmed_flush)}

    def create(pid: int, name: str, plugin: str, temporary: bool, two_phase: bool) -> str:
        return _record_text(create_row(pid, name, plugin, temporary, two_phase))

    def advance_row(pid: int, name: str, upto: str) -> dict[str, str]:
        slot_user(pid)
        try:
            lsn = parse_lsn(upto)
        except ValueError:
            raise PgError("22P02", f'invalid input syntax for type pg_lsn: "{upto}"') from None
        slot = services.slots.advance_to(name, lsn, pid)
        return {"slot_name": slot.name, "end_lsn": format_lsn(slot.confirmed_flush)}

    def advance(pid: int, name: str, upto: str) -> str:
        return _record_text(advance_row(pid, name, upto))

    def copy_row(pid: int, src: str | None, dst: str | None, temporary: bool | None, plugin: str | None) -> dict[str, str | None]:
        slot_user(pid)
        if src is None or dst is None:
            raise PgError("22004", "slot name must not be null")
        slot = services.slots.copy_logical(src, dst, pid, temporary=temporary, plugin=plugin)
        return {"slot_name": slot.name, "lsn": format_lsn(slot.confirmed_flush)}

    def copy(pid: int, src: str | None, dst: str | None, temporary: bool | None, plugin: str | None) -> str:
        return _record_text(copy_row(pid, src, dst, temporary, plugin))  # type: ignore[arg-type]

    def drop(pid: int, name: str) -> str:
        slot_user(pid)
        services.slots.drop(name, pid)
        return ""  # void's text

    def reset_stats(pid: int, name: str | None) -> str:
        """pg_stat_reset_replication_slot: one slot's statistics (NULL: every slot's);
        EXECUTE is revoked from PUBLIC, as in PostgreSQL."""
        if not session(pid).who().superuser:
            raise PgError("42501", "permission denied for function pg_stat_reset_replication_slot")
        services.slots.reset_stats(name)
        return ""  # void's text

    def version_num() -> int:
        major, _, minor = services.server.version.partition(".")
        return int(major) * 10000 + int(minor.split(".")[0] or 0)

    def changes(function: str, confirm: bool) -> Callable[..., list[dict[str, Any]]]:
        """pg_logical_slot_{get,peek}[_binary]_changes: the slot's plugin's rows."""

        def run(pid: int, name: str | None, upto: str | None, n: int | None, options: list[str | None] | None) -> list[dict[str, Any]]:
            ex = slot_user(pid)
            if name is None:
                raise PgError("22004", "slot name must not be null")
            opts = list(options or [])
            if None in opts:  # (logicalfuncs.c's checks and codes)
                raise PgError("0A000", "array must not contain nulls")
            if len(opts) % 2:
                raise PgError("0A000", "array must have even number of elements")
            pairs: list[tuple[str, str | None]] = [(k, v) for k, v in zip(opts[::2], opts[1::2], strict=True) if k is not None]
            try:
                upto_lsn = parse_lsn(upto) if upto is not None else None
            except ValueError:
                raise PgError("22P02", f'invalid input syntax for type pg_lsn: "{upto}"') from None
            rows = services.slots.changes(
                name, pid, ex.database, pairs, upto_lsn=upto_lsn, upto_nchanges=n, confirm=confirm,
                function=function, version_num=version_num(), search_path=ex.search_path(),
                work_mem=ex.settings.number("logical_decoding_work_mem") * 1024,
            )
            binary = "binary" in function
            return [{"lsn": format_lsn(lsn), "xid": xid, "data": data if binary else data.decode("utf-8", "replace")} for lsn, xid, data in rows]

        return run

    change_args = ["INTEGER", "VARCHAR", "VARCHAR", "INTEGER", "VARCHAR[]"]
    decoded: list[Udf] = [
        (
            f"pg_logical_slot_{verb}_{kind}changes" + SET_SUFFIX,
            changes(f"pg_logical_slot_{verb}_{kind}changes", verb == "get"),
            change_args,
            f"STRUCT(lsn VARCHAR, xid BIGINT, data {'BLOB' if kind else 'VARCHAR'})[]",
        )
        for verb in ("get", "peek")
        for kind in ("", "binary_")
    ]

    create_args = ["INTEGER", "VARCHAR", "VARCHAR", "BOOLEAN", "BOOLEAN"]
    advance_args = ["INTEGER", "VARCHAR", "VARCHAR"]
    return [
        ("pg_create_logical_replication_slot", create, create_args, "VARCHAR"),
        ("pg_create_logical_replication_slot" + ROW_SUFFIX, create_row, create_args, "STRUCT(slot_name VARCHAR, lsn VARCHAR)"),
        ("pg_replication_slot_advance", advance, advance_args, "VARCHAR"),
        ("pg_replication_slot_advance" + ROW_SUFFIX, advance_row, advance_args, "STRUCT(slot_name VARCHAR, end_lsn VARCHAR)"),
        ("pg_drop_replication_slot", drop, ["INTEGER", "VARCHAR"], "VARCHAR"),
        ("pg_stat_reset_replication_slot", reset_stats, ["INTEGER", "VARCHAR"], "VARCHAR"),
        ("pg_copy_logical_replication_slot", copy, ["INTEGER", "VARCHAR", "VARCHAR", "BOOLEAN", "VARCHAR"], "VARCHAR"),
        (
            "pg_copy_logical_replication_slot" + ROW_SUFFIX, copy_row, ["INTEGER", "VARCHAR", "VARCHAR", "BOOLEAN", "VARCHAR"],
            "STRUCT(slot_name VARCHAR, lsn VARCHAR)",
        ),
        *decoded,
    ]
