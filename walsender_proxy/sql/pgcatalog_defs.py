"""The emulated catalog's fixed definitions, below everything that builds its rows: the
well-known OIDs, the built-in types by name (``TYPE_OIDS``, ``format_type``), the relations
clients find in pg_catalog and information_schema (``relation``), and ``quote_ident``.

Kept apart from :mod:`walsender_proxy.sql.pgcatalog` so that the DDL modules (views,
sequences, SQL functions) can name types and relations without importing the module that
builds pg_class, pg_proc and the views' rows from them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import pyarrow as pa

from decoding.identifiers import quote_identifier
from walsender_proxy.backend import pgcatalog_data as data

PG_CATALOG_OID = 11
PG_TOAST_OID = 99
BOOTSTRAP_SUPERUSER_OID = 10
FIRST_NORMAL_OID = 16384
HEAP_AM_OID = 2
BTREE_AM_OID = 403
HASH_AM_OID = 405
DEFAULT_COLLATION_OID = 100
PG_CLASS_OID = 1259
PG_NAMESPACE_OID = 2615
PG_ATTRDEF_OID = 2604
PG_REWRITE_OID = 2618
INFORMATION_SCHEMA_OID = next(o for o, n in data.SYSTEM_NAMESPACES if n == "information_schema")
SYSTEM_NAMESPACE_OIDS = frozenset(o for o, _ in data.SYSTEM_NAMESPACES)

#: Synthetic OIDs: table-derived objects at 2^31 + 8·relid + k, publication rows from 0xF0000000.
SYNTH_TABLE_BASE = 0x8000_0000
SYNTH_SEQ_BASE = 0xF000_0000
SYNTH_ROLE_BASE = 0xF800_0000
ROWTYPE, PKEY_INDEX, PKEY_CONSTRAINT, IDENTITY_INDEX, ROWTYPE_ARRAY, VIEW_RULE = range(6)

# ---------------------------------------------------------------------------------------------
# types


def _build_type_oids() -> dict[str, int]:
    cols = data.PG_TYPE_COLUMNS
    i_oid, i_name = cols.index("oid"), cols.index("typname")
    return {r[i_name]: r[i_oid] for r in data.PG_TYPE_ROWS}


#: pg_type.typname → oid for every built-in type (arrays as ``_elem``).
TYPE_OIDS: Mapping[str, int] = MappingProxyType(_build_type_oids())

_SCALAR_ARROW: Mapping[str, pa.DataType] = MappingProxyType(
    {
        "bool": pa.bool_(),
        "int2": pa.int16(),
        "int4": pa.int32(),
        "int8": pa.int64(),
        "float4": pa.float32(),
        "float8": pa.float64(),
        "numeric": pa.float64(),
        "oid": pa.uint32(),
        "regclass": pa.uint32(),
        "regtype": pa.uint32(),
        "regnamespace": pa.uint32(),
        "regrole": pa.uint32(),
        "regprocedure": pa.uint32(),
        "regoper": pa.uint32(),
        "xid": pa.uint32(),
        "cid": pa.uint32(),
        "xid8": pa.uint64(),
        "bytea": pa.binary(),
        "timestamptz": pa.timestamp("us", tz="UTC"),
        "timestamp": pa.timestamp("us"),
        "date": pa.date32(),
        "interval": pa.month_day_nano_interval(),
        "int2vector": pa.list_(pa.int16()),
        "oidvector": pa.list_(pa.uint32()),
    }
)


def arrow_type(typname: str) -> pa.DataType:
    """How a catalog column of PostgreSQL type ``typname`` is stored (text-like → string).

    ``regproc`` columns hold the function *name*: the functions they point at are not all
    in the emulated pg_proc, and the name is what every client prints.
    """
    if typname.startswith("_"):
        return pa.list_(arrow_type(typname[1:]))
    return _SCALAR_ARROW.get(typname, pa.string())


@dataclass(frozen=True, slots=True)
class RelDef:
    """One emulated relation: where clients look for it and what columns it has."""

    schema: str  # pg_catalog | information_schema
    name: str
    oid: int
    relkind: str
    columns: tuple[tuple[str, str], ...]  # (attname, typname)
    #: Rows come from the server (slots, walsenders, backends…) via ``injected=``.
    injectable: bool = False

    @property
    def registered(self) -> str:
        prefix = "pgc_" if self.schema == "pg_catalog" else "pgc_is_"
        return prefix + self.name

    @property
    def arrow_schema(self) -> pa.Schema:
        return pa.schema([(n, arrow_type(t)) for n, t in self.columns])


INJECTABLE = frozenset(
    {
        "pg_replication_slots",
        "pg_stat_replication",
        "pg_stat_activity",
        "pg_stat_ssl",
        "pg_stat_replication_slots",
        "pg_prepared_xacts",
        "pg_locks",
        "pg_stat_wal_receiver",
        "pg_stat_subscription",
        "pg_replication_origin_status",
        "pg_replication_origin",
        "pg_sequences",
        "pg_file_settings",
    }
)


def _build_reldefs() -> dict[str, RelDef]:
    out: dict[str, RelDef] = {}
    for name, (oid, kind, cols) in data.CATALOG_COLUMNS.items():
        out[name] = RelDef("pg_catalog", name, oid, kind, tuple(cols), name in INJECTABLE)
    return out


#: pg_catalog relation name → definition.
PG_CATALOG: Mapping[str, RelDef] = MappingProxyType(_build_reldefs())
#: information_schema view name → definition (domains reported as their base types).
INFORMATION_SCHEMA: Mapping[str, RelDef] = MappingProxyType(
    {
        name: RelDef("information_schema", name, 0, "v", tuple(cols))
        for name, cols in data.INFORMATION_SCHEMA_COLUMNS.items()
    }
)
BY_REGISTERED: Mapping[str, RelDef] = MappingProxyType(
    {d.registered: d for d in (*PG_CATALOG.values(), *INFORMATION_SCHEMA.values())}
)


#: Catalog views whose columns PostgreSQL changed after 15, with the version that changed
#: them and the columns after 15's then: a server claiming that version shows them
#: (``server_version`` is configuration; compared with PostgreSQL 16 and 17 in
#: ``tests/integration/test_publisher_versions_vs_postgres.py``).
_LATER_COLUMNS: Mapping[str, tuple[tuple[int, tuple[tuple[str, str], ...]], ...]] = {
    "pg_replication_slots": (
        (160000, (("conflicting", "bool"),)),
        (170000, (("inactive_since", "timestamptz"), ("conflicting", "bool"), ("invalidation_reason", "text"),
                  ("failover", "bool"), ("synced", "bool"))),
    ),
}  # fmt: skip


@functools.cache
def _as_of(name: str, major: int) -> RelDef:
    d = PG_CATALOG[name]
    later = [cols for since, cols in _LATER_COLUMNS[name] if since <= major * 10000]
    return replace(d, columns=d.columns + later[-1]) if later else d


def relation(schema: str | None, name: str, version_num: int = 150000) -> RelDef | None:
    """The emulated relation a (schema, name) reference means, if any, with the columns
    of the version the server claims (``server_version_num``).

    Unqualified ``pg_*`` names resolve to pg_catalog because PostgreSQL searches pg_catalog
    before the search_path (unless the path names it explicitly, which nobody does).
    """
    if schema is None or schema == "pg_catalog":
        if name in _LATER_COLUMNS:
            return _as_of(name, version_num // 10000)
        return PG_CATALOG.get(name)
    if schema == "information_schema":
        return INFORMATION_SCHEMA.get(name)
    return None


def registered_relation(registered: str, version_num: int = 150000) -> RelDef:
    """:data:`BY_REGISTERED`'s relation with the columns of the claimed version."""
    d = BY_REGISTERED[registered]
    return _as_of(d.name, version_num // 10000) if d.schema == "pg_catalog" and d.name in _LATER_COLUMNS else d


def any_version_columns(name: str) -> frozenset[str]:
    """The columns a pg_catalog view has in any version the server may claim."""
    later = {c for _, cols in _LATER_COLUMNS.get(name, ()) for c, _ in cols}
    return frozenset({c for c, _ in PG_CATALOG[name].columns} | later)


# ---------------------------------------------------------------------------------------------
# type names


class _TypeInfo:
    """The built-in pg_type rows, indexed for format_type and regtype input/output."""

    def __init__(self) -> None:
        cols = data.PG_TYPE_COLUMNS
        self.columns = cols
        n = len(cols)
        self.rows: dict[int, dict[str, Any]] = {}
        self.name_null: dict[int, str] = {}
        self.name_m1: dict[int, str] = {}
        for r in data.PG_TYPE_ROWS:
            row = dict(zip(cols, r[:n], strict=True))
            self.rows[row["oid"]] = row
            self.name_null[row["oid"]] = r[n]
            self.name_m1[row["oid"]] = r[n + 1]


TYPES = _TypeInfo()

_INTERVAL_FIELDS = {
    1 << 2: "year",
    1 << 1: "month",
    1 << 3: "day",
    1 << 10: "hour",
    1 << 11: "minute",
    1 << 12: "second",
    (1 << 2) | (1 << 1): "year to month",
    (1 << 3) | (1 << 10): "day to hour",
    (1 << 3) | (1 << 10) | (1 << 11): "day to minute",
    (1 << 3) | (1 << 10) | (1 << 11) | (1 << 12): "day to second",
    (1 << 10) | (1 << 11): "hour to minute",
    (1 << 10) | (1 << 11) | (1 << 12): "hour to second",
    (1 << 11) | (1 << 12): "minute to second",
}


def format_type(type_oid: int | None, typmod: int | None) -> str | None:
    """PostgreSQL's ``format_type(oid, typmod)`` for the built-in types."""
    if type_oid is None:
        return None
    row = TYPES.rows.get(type_oid)
    if row is None:
        return "???"
    if typmod is None:
        return TYPES.name_null[type_oid]
    if typmod < 0:
        return TYPES.name_m1[type_oid]
    suffix = ""
    if row["typelem"] and row["typlen"] == -1 and row["typsubscript"] == "array_subscript_handler":
        suffix = "[]"
        row = TYPES.rows.get(row["typelem"], row)
    name = row["typname"]
    if name in ("bpchar", "varchar"):
        pretty = "character" if name == "bpchar" else "character varying"
        text = f"{pretty}({typmod - 4})"
    elif name == "numeric":
        m = typmod - 4
        text = f"numeric({(m >> 16) & 0xFFFF},{m & 0xFFFF})"
    elif name in ("time", "timetz", "timestamp", "timestamptz"):
        head = (
            "time" if name.startswith("time") and not name.startswith("timestamp") else "timestamp"
        )
        tail = "with time zone" if name.endswith("tz") else "without time zone"
        text = f"{head}({typmod}) {tail}"
    elif name == "interval":
        prec, rng = typmod & 0xFFFF, (typmod >> 16) & 0x7FFF
        text = "interval"
        if rng != 0x7FFF and rng in _INTERVAL_FIELDS:
            text += " " + _INTERVAL_FIELDS[rng]
        if prec != 0xFFFF:
            text += f"({prec})"
    elif name in ("bit", "varbit"):
        text = f"{'bit' if name == 'bit' else 'bit varying'}({typmod})"
    else:
        text = f"{TYPES.name_m1[row['oid']]}({typmod})"
    return text + suffix


#: PostgreSQL's quote_ident: quote unless lower-case, plain and not a reserved word.
quote_ident = quote_identifier


#: PostgreSQL 15's pg_catalog tables and views the emulation does not serve (read off a
#: fresh 15.18: relkind r or v in pg_catalog, less ``CATALOG_COLUMNS``): a query naming one
#: is 0A000 naming it, not 42P01 as if PostgreSQL had no such relation.
UNEMULATED = frozenset(
    {
        "pg_available_extension_versions",
        "pg_available_extensions",
        "pg_backend_memory_contexts",
        "pg_config",
        "pg_cursors",
        "pg_db_role_setting",
        "pg_group",
        "pg_hba_file_rules",
        "pg_ident_file_mappings",
        "pg_largeobject",
        "pg_parameter_acl",
        "pg_policies",
        "pg_prepared_statements",
        "pg_rules",
        "pg_shmem_allocations",
        "pg_shseclabel",
        "pg_stat_all_indexes",
        "pg_stat_all_tables",
        "pg_stat_archiver",
        "pg_stat_bgwriter",
        "pg_stat_database",
        "pg_stat_database_conflicts",
        "pg_stat_gssapi",
        "pg_stat_progress_analyze",
        "pg_stat_progress_basebackup",
        "pg_stat_progress_cluster",
        "pg_stat_progress_copy",
        "pg_stat_progress_create_index",
        "pg_stat_progress_vacuum",
        "pg_stat_recovery_prefetch",
        "pg_stat_slru",
        "pg_stat_subscription_stats",
        "pg_stat_sys_indexes",
        "pg_stat_sys_tables",
        "pg_stat_user_functions",
        "pg_stat_user_indexes",
        "pg_stat_wal",
        "pg_stat_xact_all_tables",
        "pg_stat_xact_sys_tables",
        "pg_stat_xact_user_functions",
        "pg_stat_xact_user_tables",
        "pg_statio_all_indexes",
        "pg_statio_all_sequences",
        "pg_statio_all_tables",
        "pg_statio_sys_indexes",
        "pg_statio_sys_sequences",
        "pg_statio_sys_tables",
        "pg_statio_user_indexes",
        "pg_statio_user_sequences",
        "pg_statistic",
        "pg_statistic_ext_data",
        "pg_stats",
        "pg_stats_ext",
        "pg_stats_ext_exprs",
        "pg_timezone_abbrevs",
        "pg_ts_config_map",
        "pg_user_mappings",
    }
)
