"""Which PostgreSQL functions the rewriter maps where, and what types they return.

Kept apart from the tree walk in :mod:`walsender_proxy.sql.rewrite` because this table is
what grows as clients send new queries: each entry says how a PostgreSQL function becomes
DuckDB SQL (an emulation macro from :mod:`walsender_proxy.sql.pgcatalog`, a DuckDB built-in,
or a value the server computes) and what PostgreSQL type it returns (for RowDescription).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

#: Resolution of a call: rename to ``target`` (an emulation macro or DuckDB function).
#: ``arity`` = (min, max) PostgreSQL arguments; ``keep`` = how many of them are passed on
#: (extra arguments such as ``pretty`` flags are dropped); ``pad`` = SQL literals appended
#: when fewer are given (DuckDB macros have no optional parameters).


@dataclass(frozen=True, slots=True)
class Fn:
    target: str
    ret: str | None
    arity: tuple[int, int]
    keep: int | None = None
    pad: tuple[str, ...] = ()
    #: A special rewrite in rewrite.py (set_config, array bounds, …).
    special: str | None = None


def _f(
    target: str,
    ret: str | None,
    lo: int,
    hi: int | None = None,
    *,
    keep: int | None = None,
    pad: tuple[str, ...] = (),
    special: str | None = None,
) -> Fn:
    return Fn(target, ret, (lo, lo if hi is None else hi), keep, pad, special)


_PRIV = ("has_privilege", "bool")

EMULATED: Mapping[str, Fn] = MappingProxyType(
    {
        # session and server
        "current_database": _f("pgc_current_database", "name", 0),
        "current_schema": _f("pgc_current_schema", "name", 0),
        "current_schemas": _f("pgc_current_schemas", "_name", 1),
        "current_user": _f("pgc_current_user", "name", 0),
        "session_user": _f("pgc_session_user", "name", 0),
        "version": _f("pgc_version", "text", 0),
        "pg_backend_pid": _f("pgc_pg_backend_pid", "int4", 0),
        "current_setting": _f("pgc_current_setting", "text", 1, 2, pad=("false",)),
        "set_config": _f("", "text", 3, special="set_config"),
        "pg_is_in_recovery": _f("", "bool", 0, special="false"),
        "pg_client_encoding": _f("", "name", 0, special="utf8"),
        "getdatabaseencoding": _f("", "name", 0, special="utf8"),
        # catalog functions
        "format_type": _f("pgc_format_type", "text", 2),
        "pg_get_expr": _f("pgc_pg_get_expr", "text", 2, 3, pad=("false",)),
        "pg_get_partkeydef": _f("pgc_pg_get_partkeydef", "text", 1),
        "pg_get_partition_constraintdef": _f("pgc_pg_get_partition_constraintdef", "text", 1),
        "pg_table_is_visible": _f("pgc_pg_table_is_visible", "bool", 1),
        "pg_type_is_visible": _f("pgc_pg_type_is_visible", "bool", 1),
        "pg_function_is_visible": _f("pgc_pg_function_is_visible", "bool", 1),
        "pg_collation_is_visible": _f("pgc_pg_collation_is_visible", "bool", 1),
        "pg_get_userbyid": _f("pgc_pg_get_userbyid", "name", 1),
        "acldefault": _f("pgc_acldefault", "_aclitem", 2),
        "obj_description": _f("pgc_obj_description", "text", 1, 2, special="obj_description"),
        "col_description": _f("pgc_col_description", "text", 2),
        "shobj_description": _f("pgc_shobj_description", "text", 2),
        "pg_get_indexdef": _f("pgc_pg_get_indexdef", "text", 1, 3, pad=("0", "false")),
        "pg_get_constraintdef": _f("pgc_pg_get_constraintdef", "text", 1, 2, pad=("false",)),
        "pg_partition_ancestors": _f("pgc_pg_partition_ancestors", "regclass", 1, special="list_set"),
        "pg_partition_root": _f("pgc_pg_partition_root", "regclass", 1),
        "pg_get_replica_identity_index": _f("pgc_pg_get_replica_identity_index", "regclass", 1),
        "pg_relation_is_publishable": _f("pgc_pg_relation_is_publishable", "bool", 1),
        "pg_encoding_to_char": _f("pgc_pg_encoding_to_char", "name", 1),
        "pg_char_to_encoding": _f("pgc_pg_char_to_encoding", "int4", 1),
        "quote_ident": _f("pgc_quote_ident", "text", 1),
        "parse_ident": _f("wpx_parse_ident", "_text", 1, 2, pad=("true",)),
        "pg_get_function_result": _f("pgc_procdef", "text", 1, special="procdef:result"),
        "pg_get_function_arguments": _f("pgc_procdef", "text", 1, special="procdef:args"),
        "pg_get_function_identity_arguments": _f(
            "pgc_procdef", "text", 1, special="procdef:identity"
        ),
        "pg_get_functiondef": _f("pgc_functiondef", "text", 1),
        "pg_get_function_sqlbody": _f("pgc_function_sqlbody", "text", 1),
        "pg_size_pretty": _f("pgc_pg_size_pretty", "text", 1),
        "to_hex": _f("pgc_to_hex", "text", 1),
        "sha256": _f("pgc_sha256", "bytea", 1),
        "chr": _f("pgc_chr", "text", 1),
        "split_part": _f("pgc_split_part", "text", 3),
        "to_regclass": _f("pgc_to_regclass", "regclass", 1),
        "to_regtype": _f("pgc_to_regtype", "regtype", 1),
        "to_regnamespace": _f("pgc_to_regnamespace", "regnamespace", 1),
        "to_regrole": _f("pgc_to_regrole", "regrole", 1),
        "to_regproc": _f("pgc_to_regproc", "regproc", 1),
        "to_regprocedure": _f("pgc_to_regprocedure", "regprocedure", 1),
        "pg_typeof": _f("", "regtype", 1, special="typeof"),
        "array_upper": _f("pgc_array_upper", "int4", 2, special="array_bound"),
        "array_lower": _f("pgc_array_lower", "int4", 2, special="array_bound"),
        "format": _f("printf", "text", 1, 100, special="format"),
        "generate_series": _f("generate_series", None, 2, 3, special="srf_in_select"),
        "_pg_expandarray": _f("pgc_expandarray", None, 1, special="expandarray"),
        "string_to_array": _f("string_split", "_text", 2),
        "cardinality": _f("len", "int4", 1),
        "btrim": _f("trim", "text", 1, 2),
        "transaction_timestamp": _f("now", "timestamptz", 0),
        "statement_timestamp": _f("now", "timestamptz", 0),
        "clock_timestamp": _f("get_current_timestamp", "timestamptz", 0),
        "pg_wal_lsn_diff": _f("", "numeric", 2, special="lsn_diff"),
        # the parts of a txid_snapshot / pg_snapshot (xmin:xmax:xip,…) and xid visibility in one
        "txid_snapshot_xmin": _f("pgc_snapshot_xmin", "int8", 1),
        "txid_snapshot_xmax": _f("pgc_snapshot_xmax", "int8", 1),
        "pg_snapshot_xmin": _f("pgc_snapshot_xmin8", "xid8", 1),
        "pg_snapshot_xmax": _f("pgc_snapshot_xmax8", "xid8", 1),
        "txid_visible_in_snapshot": _f("pgc_visible_in_snapshot", "bool", 2),
        "pg_visible_in_snapshot": _f("pgc_visible_in_snapshot", "bool", 2),
        # functions PostgreSQL has for objects the lake does not model: no definition
        **{
            n: _f("", "text", 1, 3, special="null_text")
            for n in (
                "pg_get_viewdef",
                "pg_get_triggerdef",
                "pg_get_ruledef",
                "pg_get_statisticsobjdef",
                "pg_get_statisticsobjdef_columns",
            )
        },
        **{
            n: _f("", "int8", 1, 2, special="zero_bigint")
            for n in (
                "pg_table_size",
                "pg_relation_size",
                "pg_total_relation_size",
                "pg_indexes_size",
                "pg_database_size",
            )
        },
        **{
            n: _f("pgc_has_privilege", "bool", 2, 4, special="privilege")
            for n in (
                "has_table_privilege",
                "has_schema_privilege",
                "has_database_privilege",
                "has_column_privilege",
                "has_any_column_privilege",
                "has_function_privilege",
                "has_sequence_privilege",
                "has_tablespace_privilege",
                "has_type_privilege",
                "has_language_privilege",
                "has_server_privilege",
                "has_foreign_data_wrapper_privilege",
                "pg_has_role",
            )
        },
    }
)

#: Zero-argument functions whose value only the server knows; their values arrive per
#: statement in the ``pgc_server_values`` table (``CatalogBinding.ensure(server_values=…)``).
#: name → (PostgreSQL return type, DuckDB type of the value).
SERVER_VALUES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "txid_current": ("int8", "bigint"),
        "txid_current_if_assigned": ("int8", "bigint"),
        "pg_current_xact_id": ("xid8", "ubigint"),
        "pg_current_xact_id_if_assigned": ("xid8", "ubigint"),
        "pg_current_wal_lsn": ("pg_lsn", "varchar"),
        "pg_current_wal_insert_lsn": ("pg_lsn", "varchar"),
        "pg_current_wal_flush_lsn": ("pg_lsn", "varchar"),
        "pg_last_wal_receive_lsn": ("pg_lsn", "varchar"),
        "pg_last_wal_replay_lsn": ("pg_lsn", "varchar"),
        "pg_postmaster_start_time": ("timestamptz", "timestamptz"),
        "pg_conf_load_time": ("timestamptz", "timestamptz"),
        "pg_last_xact_replay_timestamp": ("timestamptz", "timestamptz"),
        "inet_server_addr": ("inet", "varchar"),
        "inet_server_port": ("int4", "integer"),
        "inet_client_addr": ("inet", "varchar"),
        "inet_client_port": ("int4", "integer"),
        "txid_current_snapshot": ("txid_snapshot", "varchar"),
        "pg_current_snapshot": ("pg_snapshot", "varchar"),
        "pg_export_snapshot": ("text", "varchar"),
    }
)

#: Server functions (UDFs) with named parameters, some of them defaulted, as PostgreSQL
#: declares them: (parameter names, how many are required, the defaults of the rest).
SERVER_PARAMS: Mapping[str, tuple[tuple[str, ...], int, tuple[bool | None, ...]]] = MappingProxyType(
    {
        "pg_create_logical_replication_slot": (("slot_name", "plugin", "temporary", "twophase"), 2, (False, False)),
        "pg_drop_replication_slot": (("slot_name",), 1, ()),
        "pg_replication_slot_advance": (("slot_name", "upto_lsn"), 2, ()),
        "pg_copy_logical_replication_slot": (("src_slot_name", "dst_slot_name", "temporary", "plugin"), 2, (None, None)),
    }
)

#: The advisory lock functions with a key (one bigint or two int4: a UDF for each arity,
#: named with ARITY_SUFFIX and the count).
ADVISORY = (
    "pg_advisory_lock",
    "pg_advisory_lock_shared",
    "pg_try_advisory_lock",
    "pg_try_advisory_lock_shared",
    "pg_advisory_xact_lock",
    "pg_advisory_xact_lock_shared",
    "pg_try_advisory_xact_lock",
    "pg_try_advisory_xact_lock_shared",
    "pg_advisory_unlock",
    "pg_advisory_unlock_shared",
)
ARITY_SUFFIX = "__"

#: The sequence functions: a regclass argument (a name is resolved to its OID first),
#: setval with a UDF per arity.
SEQUENCE_FUNCTIONS = ("nextval", "currval", "setval", "lastval")

#: What server functions with arguments return (pg_type names).
SERVER_RETURNS: Mapping[str, str] = MappingProxyType(
    {
        "pg_create_logical_replication_slot": "record",
        "pg_replication_slot_advance": "record",
        "pg_copy_logical_replication_slot": "record",
        "pg_walfile_name": "text",
        "pg_walfile_name_offset": "record",
        "pg_drop_replication_slot": "void",
        "pg_stat_reset_replication_slot": "void",
        **{n: "bool" if n.startswith("pg_try_") or "_unlock" in n else "void" for n in ADVISORY},
        "pg_advisory_unlock_all": "void",
        "pg_sleep": "void",
        "pg_reload_conf": "bool",
        "pg_notify": "void",
        **dict.fromkeys(SEQUENCE_FUNCTIONS, "int8"),
        "pg_get_serial_sequence": "text",
        **{
            "pg_replication_origin_" + n: t
            for n, t in (
                ("create", "oid"), ("drop", "void"), ("oid", "oid"), ("session_setup", "void"),
                ("session_reset", "void"), ("session_is_setup", "bool"), ("session_progress", "pg_lsn"),
                ("xact_setup", "void"), ("xact_reset", "void"), ("advance", "void"), ("progress", "pg_lsn"),
            )
        },
    }
)

#: The columns of record-returning server functions called in FROM; their UDF of that
#: name plus ROW_SUFFIX gives them as a STRUCT.
SERVER_RECORDS: Mapping[str, tuple[tuple[str, str], ...]] = MappingProxyType(
    {
        "pg_create_logical_replication_slot": (("slot_name", "name"), ("lsn", "pg_lsn")),
        "pg_replication_slot_advance": (("slot_name", "name"), ("end_lsn", "pg_lsn")),
        "pg_copy_logical_replication_slot": (("slot_name", "name"), ("lsn", "pg_lsn")),
        "pg_walfile_name_offset": (("file_name", "text"), ("file_offset", "int4")),
    }
)
ROW_SUFFIX = "_row"

#: The columns of set-returning server functions called in FROM; their UDF of that name
#: plus SET_SUFFIX gives the rows as a LIST of STRUCTs.
SERVER_SETS: Mapping[str, tuple[tuple[str, str], ...]] = MappingProxyType(
    {
        **{
            f"pg_logical_slot_{verb}_{kind}changes": (("lsn", "pg_lsn"), ("xid", "xid"), ("data", "bytea" if kind else "text"))
            for verb in ("get", "peek")
            for kind in ("", "binary_")
        },
    }
)
SET_SUFFIX = "_rows"

#: Functions with side effects on server state (slots, backends, WAL): a statement calling
#: them cannot be answered by DuckDB; the server must implement them itself.
SERVER_ONLY = frozenset(
    {
        "pg_create_physical_replication_slot",
        "pg_copy_logical_replication_slot",
        "pg_logical_slot_get_changes",
        "pg_logical_slot_peek_changes",
        "pg_logical_slot_get_binary_changes",
        "pg_logical_slot_peek_binary_changes",
        "pg_logical_emit_message",
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_switch_wal",
        "nextval",
        "setval",
        "currval",
        "lastval",
    }
)

#: Names DuckDB has but with different meaning; never passed through.
DIVERGENT = frozenset({"encode", "decode", "regexp_matches", "age", "to_char", "to_number", "setseed"})

#: Return types of common pass-through functions (a hint; None = let DuckDB's type decide).
RETURNS: Mapping[str, str] = MappingProxyType(
    {
        "count": "int8",
        "lower": "text",
        "upper": "text",
        "initcap": "text",
        "length": "int4",
        "char_length": "int4",
        "character_length": "int4",
        "octet_length": "int4",
        "bit_length": "int4",
        "strpos": "int4",
        "position": "int4",
        "concat": "text",
        "concat_ws": "text",
        "replace": "text",
        "substring": "text",
        "substr": "text",
        "trim": "text",
        "ltrim": "text",
        "rtrim": "text",
        "left": "text",
        "right": "text",
        "lpad": "text",
        "rpad": "text",
        "repeat": "text",
        "reverse": "text",
        "md5": "text",
        "split_part": "text",
        "string_agg": "text",
        "array_to_string": "text",
        "regexp_replace": "text",
        "now": "timestamptz",
        "to_timestamp": "timestamptz",
        "bool_and": "bool",
        "bool_or": "bool",
        "every": "bool",
        "starts_with": "bool",
        "row_number": "int8",
        "rank": "int8",
        "dense_rank": "int8",
        "ntile": "int4",  # (DuckDB's is a BIGINT: its values fit)
        "random": "float8",
        "array_length": "int4",
        "array_position": "int4",
    }
)

#: Functions whose result has the type of their first argument.
SAME_AS_ARG = frozenset(
    {"max", "min", "abs", "any_value", "first_value", "last_value", "lag", "lead"}
)

#: SQL-syntax forms PostgreSQL's parser turns into function calls that pglast prints back in
#: keyword form (EXTRACT(... FROM ...), POSITION(... IN ...)); those nodes are kept as is.
KEEP_SQL_SYNTAX = frozenset({"extract", "position"})


@functools.cache
def duckdb_functions() -> frozenset[str]:
    """Function names DuckDB knows (for pass-through of non-emulated PostgreSQL functions)."""
    import duckdb

    con = duckdb.connect()
    try:
        rows = con.sql("SELECT DISTINCT function_name FROM duckdb_functions()").fetchall()
    finally:
        con.close()
    return frozenset(r[0].lower() for r in rows)
