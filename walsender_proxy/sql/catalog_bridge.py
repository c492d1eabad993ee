"""Where a session's statement meets the catalog emulation: rewrite the PostgreSQL text for
DuckDB (:mod:`walsender_proxy.sql.rewrite`), register what it reads from the emulated
pg_catalog (:mod:`walsender_proxy.sql.pgcatalog`), feed it the server's own rows (slots,
backends, prepared transactions) and values, and apply its ``set_config`` side effects."""

from __future__ import annotations

import dataclasses
import datetime
import time
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from decoding.catalog import EnumType, Function
from decoding.errors import PgError
from decoding.lsn import format_lsn
from decoding.pgtypes import ColumnType
from walsender_proxy.lake import Transaction, enums
from walsender_proxy.sql import pgcatalog, privileges, sql_function_calls
from walsender_proxy.sql.functions import PREFIX, SERVER_FUNCTIONS
from walsender_proxy.sql.privileges import PG_READ_ALL_STATS
from walsender_proxy.sql.rewrite import ResolveUserTable, Rewritten, rewrite
from walsender_proxy.sql.rewrite_funcs import SERVER_VALUES
from walsender_proxy.sql.sql_errors import SqlError

if TYPE_CHECKING:
    from walsender_proxy.sql.services import SessionState

_STARTED = time.time()


def server_info(ex: SessionState) -> pgcatalog.ServerInfo:
    services = ex.services
    roles = tuple(
        pgcatalog.Role(
            r.name, r.superuser, r.replication, r.login, r.createdb, r.createrole,
            bypassrls=r.bypassrls, inherit=r.inherit, connlimit=r.connlimit, comment=r.comment, oid=r.oid,
            member_of=r.member_of,
        )
        for r in services.roles.all()
    )
    system = services.server.system
    key = (roles, services.server.version, ex.database, system.generation if system is not None else 0)
    cached = services.catalog_cache.get("server_info")
    if cached is not None and cached[0] == key:
        return cached[1]  # type: ignore[no-any-return]
    info = pgcatalog.ServerInfo(
        server_version=services.server.version,
        database=ex.database,
        roles=roles,
        settings={k: v for k, v in services.server.parameters().items() if not k.startswith("server_version")},
        setting_files=(
            {k: (str(system.path), line) for k, (_, line) in system.values.items() if k not in system.command_line}
            if system is not None
            else {}
        ),
        pending_restart=system.pending_restart if system is not None else frozenset(),
        sources=services.server.sources() if services.server.sources is not None else {},
    )
    services.catalog_cache["server_info"] = (key, info)
    return info


def session_info(ex: SessionState) -> pgcatalog.SessionInfo:
    settings = {name: value for name, value, _ in ex.settings.all()}
    settings.update(ex.settings.placeholders())  # (current_setting reads them too)
    tx = ex.tx
    if tx is not None:
        # the running transaction's own characteristics, as SHOW gives them (BEGIN
        # ISOLATION LEVEL … sets them for the transaction, not as a setting)
        settings["transaction_isolation"] = tx.isolation.value
        settings["transaction_read_only"] = "on" if tx.read_only else "off"
    return pgcatalog.SessionInfo(
        user=ex.user,
        session_user=ex.session_user,
        database=ex.database,
        application_name=ex.settings.get("application_name"),
        backend_pid=ex.backend_pid,
        settings=settings,
        sources=ex.settings.sources(),
        client_addr=ex.client_addr,
        temp_schema=ex.temp_schema,
        read_all_settings=ex.who().reads_all_settings(),
    )


def injected_rows(ex: SessionState, needs: frozenset[str]) -> dict[str, pa.Table]:
    """The server-owned rows of the views this statement reads."""
    out: dict[str, pa.Table] = {}
    wanted = {n.removeprefix("pgc_") for n in needs}
    if "pg_sequences" in wanted:
        tx = ex.tx
        cat = tx.catalog() if tx is not None else ex.lake.catalog
        snap = pgcatalog.CatalogSnapshot.build(cat, server_info(ex))
        out["pg_sequences"] = pgcatalog.make_table("pg_sequences", pgcatalog.sequences_view(snap, ex.lake.sequences.peek))
    if "pg_file_settings" in wanted:
        system = ex.services.server.system
        rows = [dataclasses.asdict(r) for r in system.file_rows] if system is not None else []
        out["pg_file_settings"] = pgcatalog.make_table("pg_file_settings", rows)
    if "pg_prepared_xacts" in wanted:
        rows = [
            {"transaction": t.xid, "gid": gid, "prepared": _PG_EPOCH + datetime.timedelta(microseconds=t.prepared_at) if t.prepared_at else None,
             "owner": "postgres", "database": ex.database}
            for gid, t in list(ex.lake.prepared.items())
        ]  # fmt: skip
        out["pg_prepared_xacts"] = pgcatalog.make_table("pg_prepared_xacts", rows)
    if wanted & {"pg_replication_origin", "pg_replication_origin_status"}:
        origins = ex.lake.origins.rows()
        out["pg_replication_origin"] = pgcatalog.make_table(
            "pg_replication_origin", [{"roident": o.roident, "roname": o.name} for o in origins]
        )
        out["pg_replication_origin_status"] = pgcatalog.make_table(
            "pg_replication_origin_status",
            [
                {"local_id": o.roident, "external_id": o.name, "remote_lsn": format_lsn(o.remote_lsn), "local_lsn": format_lsn(o.local_lsn)}
                for o in origins
                if o.tracked
            ],
        )
    role_oids = server_info(ex).role_oids()
    who = ex.who() if wanted & {"pg_stat_activity", "pg_stat_ssl", "pg_stat_replication"} else None

    def may_see(user: str) -> bool:
        """HAS_PGSTAT_PERMISSIONS: the session's role's privileges, or pg_read_all_stats'."""
        assert who is not None
        return who.superuser or who.uses(PG_READ_ALL_STATS) or (user in role_oids and who.uses(role_oids[user]))

    if "pg_stat_activity" in wanted:
        rows = []
        backends = ex.services.backends
        for pid, other in backends.sessions():
            if not may_see(other.user):  # (what it runs is hidden, as PostgreSQL hides it)
                rows.append({
                    "datname": other.database, "pid": pid, "usesysid": role_oids.get(other.user),
                    "usename": other.user, "application_name": other.settings.get("application_name"),
                    "client_port": None, "query": "<insufficient privilege>", "backend_type": None,
                })  # fmt: skip
                continue
            rows.append(
                {
                    "datname": other.database,
                    "pid": pid,
                    "usesysid": role_oids.get(other.user),
                    "usename": other.user,
                    "application_name": other.settings.get("application_name"),
                    "client_addr": other.client_addr,
                    "client_port": other.client_port or -1,  # (-1: a Unix socket)
                    "backend_start": other.backend_start,
                    "query_start": _timestamp(other.query_start),
                    "state": _activity_state(other, ex),
                    "query": other.query,
                    "backend_type": "walsender" if backends.is_walsender(pid) else "client backend",
                }
            )
        out["pg_stat_activity"] = pgcatalog.make_table("pg_stat_activity", rows)
    if "pg_stat_ssl" in wanted:
        # A row per client connection the caller may see, as PostgreSQL 15's view: of a
        # role whose privileges it has, or all with pg_read_all_stats' (others have a NULL
        # client_port there, which the view's WHERE leaves out).
        rows = []
        for pid, other in ex.services.backends.sessions():
            if not may_see(other.user):
                continue
            info = other.ssl_info
            row: dict[str, Any] = {"pid": pid, "ssl": info is not None}
            if info is not None:  # (no client certificates: client_dn and the rest NULL)
                row.update(version=info[0], cipher=info[1], bits=info[2])
            rows.append(row)
        out["pg_stat_ssl"] = pgcatalog.make_table("pg_stat_ssl", rows)
    for name, fn in ex.services.server.catalog_rows.items():
        if name in wanted:
            rows = fn()
            if name == "pg_stat_replication":
                assert who is not None
                stats = who.superuser or who.uses(PG_READ_ALL_STATS)
                for i, r in enumerate(rows):
                    r["usesysid"] = role_oids.get(r["usename"])
                    if not stats:  # (pg_stat_get_wal_senders: the pid alone; the session's
                        # own columns as pg_stat_activity shows them)
                        keep = ("pid", "usesysid", "usename", "application_name")
                        if may_see(r["usename"]):
                            keep += ("client_addr", "client_port", "backend_start")
                        rows[i] = {k: v for k, v in r.items() if k in keep}
            out[name] = pgcatalog.make_table(name, rows, server_info(ex).server_version_num)
    return out


_PG_EPOCH = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)


def _timestamp(t: float | None) -> datetime.datetime | None:
    return None if t is None else datetime.datetime.fromtimestamp(t, datetime.UTC)


#: The catalog relations PostgreSQL 15 revokes from PUBLIC (read off 15.18 as a plain
#: role): only superusers and pg_read_all_data's members read them.
_REVOKED = {
    "pgc_pg_authid": "table pg_authid",
    "pgc_pg_shadow": "view pg_shadow",
    "pgc_pg_user_mapping": "table pg_user_mapping",
    "pgc_pg_file_settings": "view pg_file_settings",
    "pgc_pg_replication_origin_status": "view pg_replication_origin_status",
}


def _check_revoked(ex: SessionState, needs: frozenset[str]) -> None:
    """42501 for a statement reading a catalog relation the current user may not read
    (after the rewrite, cached or not: the cache is shared by every role)."""
    if not privileges.CHECK_READS.get():
        return
    who = ex.who()
    if who.superuser:
        return
    if who.uses(privileges.PG_READ_ALL_DATA):  # (SELECT on the view, not EXECUTE on its function)
        if "pgc_pg_replication_origin_status" in needs:
            raise PgError("42501", "permission denied for function pg_show_replication_origin_status")
        return
    for name, shown in _REVOKED.items():
        if name in needs:
            raise PgError("42501", f"permission denied for {shown}")


def _utc_text(t: float) -> str:
    """A time as timestamptz text, to the microsecond as PostgreSQL keeps it."""
    return datetime.datetime.fromtimestamp(t, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S.%f+00")


def _loaded_at(ex: SessionState) -> float:
    """When the server last read its configuration (pg_conf_load_time)."""
    system = ex.services.server.system
    return system.loaded_at if system is not None else _STARTED


def _activity_state(other: SessionState, me: SessionState) -> str:
    """pg_stat_activity.state of a session, as PostgreSQL reports it."""
    if other is me or other.running:
        return "active"
    if other.tx is not None and other.explicit:
        return "idle in transaction (aborted)" if other.status == "E" else "idle in transaction"
    return "idle"


def server_values(ex: SessionState, names: frozenset[str], tx: Transaction) -> dict[str, Any]:
    values: dict[str, Any] = {
        "pg_postmaster_start_time": _utc_text(_STARTED),
        "pg_conf_load_time": _utc_text(_loaded_at(ex)),
        "inet_server_addr": ex.server_addr,
        "inet_server_port": ex.services.server.port if ex.server_addr else None,
        "inet_client_addr": ex.client_addr,
        "inet_client_port": ex.client_port,
        "txid_current_if_assigned": tx.xid,
        "pg_current_xact_id_if_assigned": tx.xid,
        "pg_current_wal_lsn": format_lsn(ex.lake.log.insert_lsn),
        "pg_current_wal_insert_lsn": format_lsn(ex.lake.log.insert_lsn),
        "pg_current_wal_flush_lsn": format_lsn(ex.lake.log.flushed_lsn),
        "txid_current_snapshot": ex.lake.xid_snapshot(tx.xid),
        "pg_current_snapshot": ex.lake.xid_snapshot(tx.xid),
        "pg_last_wal_receive_lsn": None,
        "pg_last_wal_replay_lsn": None,
        "pg_last_xact_replay_timestamp": None,
    }
    missing = sorted(k for k in names if k in SERVER_VALUES and k not in values and k not in SERVER_FUNCTIONS)
    if missing:  # (a server value given none would read as NULL: an error instead)
        raise PgError("XX000", f"no server value for {', '.join(missing)}")
    return {k: v for k, v in values.items() if k in names}


def rewrite_and_register(
    ex: SessionState,
    binding: pgcatalog.CatalogBinding,
    sql: str,
    resolve: ResolveUserTable,
    tx: Transaction,
    text_params: frozenset[int] = frozenset(),
    param_types: tuple[tuple[int, ColumnType], ...] = (),
    literal_date_order: str | None = None,
    infer_params: bool = False,
) -> Rewritten:
    low = sql.lower()
    udfs = {n: PREFIX + n for n in SERVER_FUNCTIONS if n in low}
    cat = tx.catalog()

    def may_execute(fn: Function) -> bool:
        if not privileges.CHECK_READS.get():  # (CREATE VIEW: checked when the view is used)
            return True
        who = ex.who()
        return who.superuser or "X" in privileges.held(cat, who, fn.oid, "function")

    unsafe = None
    if tx.added_enum_labels:

        def unsafe(en: EnumType) -> frozenset[str]:
            return enums.unsafe_labels(tx, en)

    with sql_function_calls.looking_up(cat, ex.search_path(), may_execute=may_execute, unsafe_labels=unsafe):  # (user functions' calls)
        rw = rewrite(
            sql,
            resolve_user_table=resolve,
            server_udfs=udfs or None,
            udf_args=(ex.backend_pid,) if udfs else (),
            text_params=text_params,
            param_types=param_types,
            date_order=ex.settings.datetime_input(),
            literal_date_order=literal_date_order,
            extra_float_digits=int(ex.settings.get("extra_float_digits")),
            bytea_output=str(ex.settings.get("bytea_output")),
            infer_params=infer_params,
            server_version_num=server_info(ex).server_version_num,
        )
    # set_config takes effect at once: current_setting() in the same statement sees it.
    for name, value, is_local in rw.set_configs:
        if value is not None:
            ex.settings.set(name, value, local=is_local)
    if rw.needs & _REVOKED.keys():
        _check_revoked(ex, rw.needs)
    if rw.needs:
        snap = pgcatalog.CatalogSnapshot.build(tx.catalog(), server_info(ex))
        binding.ensure(
            rw.needs,
            snap,
            session_info(ex),
            injected=injected_rows(ex, rw.needs),
            server_values=server_values(ex, rw.server_values, tx) if rw.server_values else None,
        )
    for fn, text, position in rw.reg_inputs:  # ('nope'::regclass fails where it never runs)
        try:
            binding.con.execute(f"SELECT {fn}($1)", [text]).fetchall()
        except Exception as e:
            err = pgcatalog.translate_error(e)
            raise SqlError(err.sqlstate, err.message, position, detail=err.detail, hint=err.hint) from None
    return rw
