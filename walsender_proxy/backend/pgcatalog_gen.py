"""Regenerate :mod:`walsender_proxy.backend.pgcatalog_data` from a real PostgreSQL 15.

The emulated catalog must look like PostgreSQL 15's down to column order, type OIDs, setting
descriptions and predefined roles. Typing that by hand would drift; dumping it from the real
server keeps it exact and reviewable (the output is plain literals). Run against a freshly
initdb'ed cluster (``initdb --locale=C -E UTF8``) so no user objects leak in::

    python -m walsender_proxy.backend.pgcatalog_gen "host=... port=... user=postgres" \\
        > walsender_proxy/backend/pgcatalog_data.py && ruff format walsender_proxy/backend/pgcatalog_data.py

``pg_proc``'s rows (every function PostgreSQL 15 has: psql's ``\\dfS``, pgcli's completion,
``'now'::regproc`` and drivers' metadata read them) go to a module of their own, one row a
line (``--procs``; not reformatted)::

    python -m walsender_proxy.backend.pgcatalog_gen --procs "host=... port=... user=postgres" \\
        > walsender_proxy/backend/pg_proc_data.py

pg_cast's built-in rows likewise (``--casts`` > ``walsender_proxy/backend/pg_cast_data.py``).
"""

from __future__ import annotations

import sys
from typing import Any

#: Every pg_catalog relation the emulation serves (rows or, for most, an empty table with
#: the right columns so that client queries bind).
CATALOG_RELATIONS = (
    "pg_aggregate",
    "pg_am",
    "pg_amop",
    "pg_amproc",
    "pg_attrdef",
    "pg_attribute",
    "pg_auth_members",
    "pg_authid",
    "pg_cast",
    "pg_class",
    "pg_collation",
    "pg_constraint",
    "pg_conversion",
    "pg_database",
    "pg_default_acl",
    "pg_depend",
    "pg_description",
    "pg_enum",
    "pg_event_trigger",
    "pg_extension",
    "pg_foreign_data_wrapper",
    "pg_foreign_server",
    "pg_foreign_table",
    "pg_index",
    "pg_inherits",
    "pg_init_privs",
    "pg_language",
    "pg_largeobject_metadata",
    "pg_namespace",
    "pg_opclass",
    "pg_operator",
    "pg_opfamily",
    "pg_partitioned_table",
    "pg_policy",
    "pg_proc",
    "pg_publication",
    "pg_publication_namespace",
    "pg_publication_rel",
    "pg_range",
    "pg_replication_origin",
    "pg_rewrite",
    "pg_seclabel",
    "pg_sequence",
    "pg_shdepend",
    "pg_shdescription",
    "pg_statistic_ext",
    "pg_subscription",
    "pg_subscription_rel",
    "pg_tablespace",
    "pg_transform",
    "pg_trigger",
    "pg_ts_config",
    "pg_ts_dict",
    "pg_ts_parser",
    "pg_ts_template",
    "pg_type",
    "pg_user_mapping",
    # views
    "pg_file_settings",
    "pg_indexes",
    "pg_locks",
    "pg_matviews",
    "pg_prepared_xacts",
    "pg_publication_tables",
    "pg_replication_origin_status",
    "pg_replication_slots",
    "pg_roles",
    "pg_seclabels",
    "pg_sequences",
    "pg_settings",
    "pg_shadow",
    "pg_stat_activity",
    "pg_stat_replication",
    "pg_stat_replication_slots",
    "pg_stat_ssl",
    "pg_stat_subscription",
    "pg_stat_user_tables",
    "pg_stat_wal_receiver",
    "pg_statio_user_tables",
    "pg_tables",
    "pg_timezone_names",
    "pg_user",
    "pg_views",
)

INFORMATION_SCHEMA_RELATIONS = (
    "schemata",
    "tables",
    "columns",
    "views",
    "table_constraints",
    "check_constraints",
    "key_column_usage",
    "referential_constraints",
    "constraint_column_usage",
    "constraint_table_usage",
    "routines",
    "sequences",
)

def _fetch(cur: Any, sql: str) -> list[tuple[Any, ...]]:
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]


def generate(dsn: str) -> str:
    import psycopg

    out: list[str] = [
        '"""PostgreSQL 15 catalog data dumped by ``pgcatalog_gen`` — generated, do not edit."""',
        "",
    ]

    def emit(name: str, value: Any) -> None:
        out.append(f"{name} = {value!r}")
        out.append("")

    with psycopg.connect(dsn, autocommit=True) as conn, conn.cursor() as cur:
        ver = _fetch(cur, "SHOW server_version")[0][0]
        out.insert(1, f"# source: PostgreSQL {ver}")
        rels = "', '".join(CATALOG_RELATIONS)
        cols: dict[str, Any] = {}
        for relname, reloid, relkind, attname, typname in _fetch(
            cur,
            f"""SELECT c.relname, c.oid::int8, c.relkind, a.attname, t.typname
            FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
                 AND NOT a.attisdropped
            JOIN pg_type t ON t.oid = a.atttypid
            WHERE c.relnamespace = 11 AND c.relname IN ('{rels}') ORDER BY c.relname, a.attnum""",
        ):
            e = cols.setdefault(relname, [reloid, relkind, []])
            e[2].append((attname, typname))
        emit("CATALOG_COLUMNS", {k: (v[0], v[1], tuple(v[2])) for k, v in cols.items()})
        notnull: dict[str, list[str]] = {}
        for relname, attname in _fetch(
            cur,
            f"""SELECT c.relname, a.attname FROM pg_class c
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND a.attnotnull
            WHERE c.relnamespace = 11 AND c.relname IN ('{rels}') ORDER BY c.relname, a.attnum""",
        ):
            notnull.setdefault(relname, []).append(attname)
        emit("CATALOG_NOT_NULL", {k: tuple(v) for k, v in notnull.items()})
        isrels = "', '".join(INFORMATION_SCHEMA_RELATIONS)
        iscols: dict[str, list[tuple[str, str]]] = {}
        for relname, attname, typname in _fetch(
            cur,
            f"""SELECT c.relname, a.attname,
                 coalesce(bt.typname, t.typname)
            FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
            JOIN pg_type t ON t.oid = a.atttypid
            LEFT JOIN pg_type bt ON bt.oid = t.typbasetype AND t.typtype = 'd'
            WHERE c.relnamespace = 'information_schema'::regnamespace
              AND c.relname IN ('{isrels}') ORDER BY c.relname, a.attnum""",
        ):
            iscols.setdefault(relname, []).append((attname, typname))
        emit("INFORMATION_SCHEMA_COLUMNS", {k: tuple(v) for k, v in iscols.items()})

        type_cols = [
            r[0]
            for r in _fetch(
                cur,
                """SELECT a.attname FROM pg_attribute a
            WHERE a.attrelid = 'pg_type'::regclass AND a.attnum > 0 ORDER BY a.attnum""",
            )
        ]
        sel = ", ".join(
            f"t.{c}::text"
            if c.startswith("typ")
            and c
            in {
                "typinput",
                "typoutput",
                "typreceive",
                "typsend",
                "typmodin",
                "typmodout",
                "typanalyze",
                "typsubscript",
            }
            else ("t.oid::int8" if c == "oid" else f"t.{c}")
            for c in type_cols
        )
        emit("PG_TYPE_COLUMNS", tuple(type_cols))
        emit(
            "PG_TYPE_ROWS",
            _fetch(
                cur,
                f"""SELECT {sel}, format_type(t.oid, NULL), format_type(t.oid, -1)
                FROM pg_type t
                WHERE t.typnamespace = 11 AND t.typtype <> 'c'
                  AND NOT EXISTS (SELECT 1 FROM pg_type e WHERE e.oid = t.typelem
                                  AND e.typtype = 'c')
                ORDER BY t.oid""",
            ),
        )
        proc_cols = [
            r[0]
            for r in _fetch(
                cur,
                """SELECT a.attname FROM pg_attribute a
            WHERE a.attrelid = 'pg_proc'::regclass AND a.attnum > 0 ORDER BY a.attnum""",
            )
        ]
        emit("PG_PROC_COLUMNS", tuple(proc_cols))
        emit(
            "SETTINGS",
            _fetch(
                cur,
                """SELECT name, unit, category, short_desc, extra_desc, context, vartype,
                          min_val, max_val, enumvals, boot_val
                   FROM pg_settings ORDER BY name""",
            ),
        )
        emit(
            "PREDEFINED_ROLES",
            _fetch(
                cur,
                "SELECT oid::int8, rolname FROM pg_authid WHERE oid <> 10 ORDER BY rolname",
            ),
        )
        emit(
            "PREDEFINED_AUTH_MEMBERS",
            _fetch(cur, "SELECT roleid::int8, member::int8, admin_option FROM pg_auth_members"),
        )
        emit(
            "PG_INIT_PRIVS_ROWS",
            _fetch(
                cur,
                "SELECT objoid::int8, classoid::int8, objsubid, privtype::text, initprivs::text[]"
                " FROM pg_init_privs ORDER BY classoid, objoid, objsubid",
            ),
        )
        emit(
            "PG_AM_ROWS",
            _fetch(
                cur, "SELECT oid::int8, amname, amhandler::text, amtype FROM pg_am ORDER BY oid"
            ),
        )
        emit(
            "PG_COLLATION_ROWS",
            _fetch(
                cur,
                """SELECT oid::int8, collname, collnamespace::int8, collprovider,
                          collisdeterministic, collencoding, collcollate, collctype,
                          colliculocale, collversion
                   FROM pg_collation WHERE collprovider <> 'i' ORDER BY oid""",
            ),
        )
        emit(
            "SYSTEM_NAMESPACES",
            _fetch(
                cur,
                "SELECT oid::int8, nspname FROM pg_namespace WHERE nspname IN"
                " ('pg_catalog', 'pg_toast', 'information_schema') ORDER BY oid",
            ),
        )
        emit(
            "PG_LANGUAGE_ROWS",
            _fetch(
                cur,
                """SELECT oid::int8, lanname, lanispl, lanpltrusted, lanplcallfoid::int8,
                          laninline::int8, lanvalidator::int8 FROM pg_language ORDER BY oid""",
            ),
        )
        emit(
            "PG_RANGE_ROWS",
            _fetch(
                cur,
                """SELECT rngtypid::int8, rngsubtype::int8, rngmultitypid::int8,
                          rngcollation::int8, rngsubopc::int8, rngcanonical::text,
                          rngsubdiff::text FROM pg_range ORDER BY 1""",
            ),
        )
        emit(
            "BTREE_OPCLASSES",
            _fetch(
                cur,
                """SELECT oid::int8, opcname, opcintype::int8, opcfamily::int8
                   FROM pg_opclass WHERE opcmethod = 403 AND opcdefault ORDER BY oid""",
            ),
        )
        emit(
            "ENCODINGS",
            _fetch(
                cur,
                "SELECT i, pg_encoding_to_char(i) FROM generate_series(0, 42) i"
                " WHERE pg_encoding_to_char(i) <> ''",
            ),
        )
        emit(
            "QUOTED_KEYWORDS",
            tuple(
                r[0]
                for r in _fetch(
                    cur, "SELECT word FROM pg_get_keywords() WHERE catcode <> 'U' ORDER BY word"
                )
            ),
        )
        emit(
            "PG_KEYWORDS",
            _fetch(cur, "SELECT word, catcode::text, barelabel FROM pg_get_keywords() ORDER BY word"),
        )
        # (the names only: abbreviation, offset and DST are the zone's at the time asked)
        emit("TIMEZONE_NAMES", tuple(r[0] for r in _fetch(cur, "SELECT name FROM pg_timezone_names ORDER BY name")))
    return "\n".join(out)


def _proc_select(cur: Any) -> str:
    proc_cols = [
        r[0]
        for r in _fetch(
            cur,
            """SELECT a.attname FROM pg_attribute a
        WHERE a.attrelid = 'pg_proc'::regclass AND a.attnum > 0 ORDER BY a.attnum""",
        )
    ]
    special = {"oid": "p.oid::int8", "prosupport": "p.prosupport::text", "proargtypes": "p.proargtypes::oid[]", "proacl": "p.proacl::text[]"}
    return ", ".join(special.get(c, f"p.{c}") for c in proc_cols)


def generate_procs(dsn: str) -> str:
    """pg_proc's every row, then each function's pg_get_function_result, _arguments and
    _identity_arguments texts (one tuple a line)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn, conn.cursor() as cur:
        ver = _fetch(cur, "SHOW server_version")[0][0]
        rows = _fetch(
            cur,
            f"""SELECT {_proc_select(cur)}, pg_get_function_result(p.oid),
                   pg_get_function_arguments(p.oid),
                   pg_get_function_identity_arguments(p.oid)
            FROM pg_proc p ORDER BY p.oid""",
        )
        descriptions = _fetch(
            cur,
            """SELECT d.objoid::int8, d.description FROM pg_description d
            WHERE d.classoid = 'pg_proc'::regclass AND d.objsubid = 0 ORDER BY d.objoid""",
        )
    out = [
        '"""PostgreSQL 15\'s pg_proc rows, dumped by ``pgcatalog_gen --procs`` — generated, do not edit.',
        "",
        "Each row: pg_proc's columns in order (``pgcatalog_data.PG_PROC_COLUMNS``), then the",
        'function\'s result, arguments and identity arguments as pg_get_function_* print them."""',
        f"# source: PostgreSQL {ver}",
        "# fmt: off",
        "PG_PROC_ROWS = (",
        *(f"    {tuple(r)!r}," for r in rows),
        ")",
        "#: pg_description's text of each function (COMMENT ON FUNCTION as initdb leaves it).",
        "PG_PROC_DESCRIPTIONS = {",
        *(f"    {oid!r}: {text!r}," for oid, text in descriptions),
        "}",
        "# fmt: on",
        "",
    ]
    return "\n".join(out)


def generate_casts(dsn: str) -> str:
    """pg_cast's built-in rows (OIDs below FirstNormalObjectId), in its column order."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn, conn.cursor() as cur:
        ver = _fetch(cur, "SHOW server_version")[0][0]
        cols = [
            r[0]
            for r in _fetch(
                cur,
                """SELECT a.attname FROM pg_attribute a
                WHERE a.attrelid = 'pg_cast'::regclass AND a.attnum > 0 ORDER BY a.attnum""",
            )
        ]
        rows = _fetch(cur, f"SELECT {', '.join(cols)} FROM pg_cast WHERE oid < 16384 ORDER BY oid")
    out = [
        '"""PostgreSQL 15\'s built-in pg_cast rows, dumped by ``pgcatalog_gen --casts`` — generated,',
        'do not edit. Columns in pg_cast\'s order."""',
        f"# source: PostgreSQL {ver}",
        "# fmt: off",
        "PG_CAST_ROWS = (",
        *(f"    {tuple(r)!r}," for r in rows),
        ")",
        "# fmt: on",
        "",
    ]
    return "\n".join(out)


if __name__ == "__main__":
    if sys.argv[1] == "--procs":
        sys.stdout.write(generate_procs(sys.argv[2]))
    elif sys.argv[1] == "--casts":
        sys.stdout.write(generate_casts(sys.argv[2]))
    else:
        sys.stdout.write(generate(sys.argv[1]))
