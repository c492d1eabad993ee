"""PostgreSQL 15's pg_catalog, emulated over the lake catalog for DuckDB.

Clients (psql, psycopg, subscribers' tablesync workers) learn about tables and publications by
querying pg_catalog, so the proxy must answer those queries with PostgreSQL's column names,
types and values. DuckDB's own ``pg_catalog`` is read-only and describes DuckDB, so the
catalog lives here as Arrow tables registered on each session's DuckDB connection under
``pgc_``-prefixed names, and :mod:`walsender_proxy.sql.rewrite` points client SQL at them.

Three layers, by how often they change:

- :class:`CatalogSnapshot` — everything derived from one lake :class:`~decoding.catalog.Catalog`
  version plus the :class:`ServerInfo`. Immutable, built lazily table by table, cached per
  catalog version, shared by all sessions.
- Session tables (current user, search_path, settings) — derived from :class:`SessionInfo`;
  rebuilt only when the session's settings change.
- :class:`CatalogBinding` — per DuckDB connection: registers the Arrow tables and creates the
  ``TEMP`` macros/views a statement needs (``Rewritten.needs``), once, and re-registers
  tables when the catalog version or the session changes. A statement whose objects are all
  registered costs a few dictionary lookups.

OIDs are ``UINTEGER`` (PostgreSQL's ``oid`` is unsigned 32-bit); every oid-typed column uses
it, so joins between catalogs never need casts and the server can map ``UINTEGER`` results to
type ``oid`` when no column type hint is available. Objects PostgreSQL has but the lake does
not model (primary-key indexes and constraints, replica-identity indexes, table row types,
publication membership rows) get deterministic synthetic OIDs above 2^31 (see
:func:`synthetic_oid`), so they never collide with the lake's allocator, which counts up from
16384.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import pyarrow as pa

from decoding.catalog import (
    DOMAIN_VALUE,
    SEQUENCE_MARK,
    TYPE_MARK,
    Catalog,
    Check,
    Column,
    Domain,
    EnumType,
    ForeignKey,
    IndexExpr,
    Table,
    View,
    ViewColumn,
    fill_marks,
    is_dropped_attribute,
    is_temp_schema,
)
from decoding.errors import PgError, disk_full_error
from decoding.pgtime import PG_EPOCH_UNIX_US
from decoding.pgtypes import ColumnType, UnknownTypeError, type_by_oid
from walsender_proxy.backend import pg_cast_data, pg_proc_data
from walsender_proxy.backend import pgcatalog_data as data
from walsender_proxy.backend.roles import closure
from walsender_proxy.backend.settings import (
    PG_SETTINGS,
    SERVER_DEFAULTS,
    SUPERUSER_ONLY,
    shown_setting,
)
from walsender_proxy.lake import partition_ddl, partitions
from walsender_proxy.sql import array_exprs, privileges, sql_functions
from walsender_proxy.sql.pgcatalog_defs import (
    BOOTSTRAP_SUPERUSER_OID,
    BTREE_AM_OID,
    BY_REGISTERED,
    HASH_AM_OID,
    HEAP_AM_OID,
    IDENTITY_INDEX,
    PG_ATTRDEF_OID,
    PG_CATALOG,
    PG_CATALOG_OID,
    PG_CLASS_OID,
    PG_NAMESPACE_OID,
    PG_REWRITE_OID,
    PKEY_CONSTRAINT,
    PKEY_INDEX,
    ROWTYPE,
    ROWTYPE_ARRAY,
    SYNTH_ROLE_BASE,
    SYNTH_SEQ_BASE,
    SYNTH_TABLE_BASE,
    TYPE_OIDS,
    TYPES,
    VIEW_RULE,
    any_version_columns,
    format_type,
    quote_ident,
    registered_relation,
)
from walsender_proxy.sql.pgcatalog_defs import relation as catalog_relation
from walsender_proxy.sql.views import view_updatability

# ---------------------------------------------------------------------------------------------
# server and session


@dataclass(frozen=True, slots=True)
class Role:
    name: str
    superuser: bool = False
    replication: bool = False
    login: bool = True
    createdb: bool = False
    createrole: bool = False
    bypassrls: bool = False
    inherit: bool = True
    connlimit: int = -1
    #: COMMENT ON ROLE's text (pg_shdescription).
    comment: str | None = None
    #: None: assigned (10 for the first role, then from 0xF8000000, clear of lake OIDs).
    oid: int | None = None
    #: The roles it is a member of: (role, grantor, admin_option), by name.
    member_of: tuple[tuple[str, str, bool], ...] = ()


@dataclass(frozen=True)
class ServerInfo:
    """What the proxy claims to be: version, database, roles, configuration."""

    server_version: str = "15.18"
    database: str = "postgres"
    roles: tuple[Role, ...] = (
        Role(
            "postgres",
            superuser=True,
            replication=True,
            createdb=True,
            createrole=True,
            bypassrls=True,
        ),
    )
    #: Setting overrides by PostgreSQL name (``max_wal_senders``, ``TimeZone``, …).
    settings: Mapping[str, str] = field(default_factory=dict)
    #: Of those, the ones postgresql.auto.conf gave: lower-cased name → (file, line)
    setting_files: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    #: Settings changed in the file that need a restart (pg_settings.pending_restart)
    pending_restart: frozenset[str] = frozenset()
    #: pg_settings.source of ``settings`` by lower-cased name (else: configuration file)
    sources: Mapping[str, str] = field(default_factory=dict)
    encoding: str = "UTF8"
    lc_collate: str = "C"
    lc_ctype: str = "C"
    #: Also list template0/template1 in pg_database, as every PostgreSQL does (psql \l).
    template_databases: bool = True
    version_string: str | None = None

    @property
    def server_version_num(self) -> int:
        parts = [int(p) for p in re.findall(r"\d+", self.server_version)[:2]] + [0]
        return parts[0] * 10000 + parts[1]

    @property
    def version(self) -> str:
        return self.version_string or (
            f"PostgreSQL {self.server_version} on x86_64-pc-linux-gnu, "
            "compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit"
        )

    def role_oids(self) -> dict[str, int]:
        out: dict[str, int] = {}
        nxt = SYNTH_ROLE_BASE
        for i, r in enumerate(self.roles):
            if r.oid is not None:
                out[r.name] = r.oid
            elif i == 0:
                out[r.name] = BOOTSTRAP_SUPERUSER_OID
            else:
                while nxt in out.values():
                    nxt += 1
                out[r.name] = nxt
                nxt += 1
        return out

    def role(self, name: str) -> Role | None:
        return next((r for r in self.roles if r.name == name), None)


@dataclass(frozen=True)
class SessionInfo:
    """One client session's view: who it is and its SET/set_config values."""

    user: str = "postgres"
    database: str = "postgres"
    application_name: str = ""
    backend_pid: int = 0
    #: Session overrides by setting name (case-insensitive), e.g. ``{"search_path": ""}``.
    settings: Mapping[str, str] = field(default_factory=dict)
    #: What the session itself set: lower-cased name → (source, reset value), the source
    #: ``client`` (start-up packet) or ``session`` (SET); other values are the server's.
    sources: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    client_addr: str | None = None
    session_user: str | None = None
    #: The session's schema of temporary objects (``pg_temp_<pid>``), searched first
    #: unless search_path places ``pg_temp``.
    temp_schema: str | None = None
    #: The current user may see superuser-only settings (a superuser, or with the
    #: privileges of pg_read_all_settings).
    read_all_settings: bool = True

    def setting(self, name: str) -> str | None:
        low = name.lower()
        for k, v in self.settings.items():
            if k.lower() == low:
                return v
        return None

    @property
    def search_path(self) -> str:
        v = self.setting("search_path")
        return '"$user", public' if v is None else v

    def schemas_on_path(self, existing: Iterable[str]) -> list[str]:
        """search_path as schema names, ``$user`` resolved, missing schemas dropped."""
        have = set(existing)
        out: list[str] = []
        for part in split_search_path(self.search_path):
            name = self.user if part == "$user" else part
            if name == "pg_temp" and self.temp_schema is not None:
                name = self.temp_schema
            if name in have and name not in out:
                out.append(name)
        return out

    def key(self) -> tuple[Any, ...]:
        return (
            self.user,
            self.session_user,
            self.database,
            self.application_name,
            self.backend_pid,
            self.client_addr,
            tuple(sorted((k.lower(), v) for k, v in self.settings.items())),
            tuple(sorted(self.sources.items())),
            self.temp_schema,
            self.read_all_settings,
        )


def split_search_path(text: str) -> list[str]:
    """Split a search_path value the way PostgreSQL's SplitIdentifierString does."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t\n,":
            i += 1
        if i >= n:
            break
        if text[i] == '"':
            j = i + 1
            buf = []
            while j < n:
                if text[j] == '"':
                    if j + 1 < n and text[j + 1] == '"':
                        buf.append('"')
                        j += 2
                        continue
                    break
                buf.append(text[j])
                j += 1
            out.append("".join(buf))
            i = j + 1
        else:
            j = i
            while j < n and text[j] != ",":
                j += 1
            out.append(text[i:j].strip().lower())
            i = j
    return [p for p in out if p]


# ---------------------------------------------------------------------------------------------
# settings


def server_settings(server: ServerInfo) -> dict[str, tuple[str, str]]:
    """Lower-cased name → (value, source) after the server's own overrides."""
    out: dict[str, tuple[str, str]] = {
        k: (s.boot_val or "", "default") for k, s in PG_SETTINGS.items()
    }
    fixed = {
        "server_version": server.server_version,
        "server_version_num": str(server.server_version_num),
        "server_encoding": server.encoding,
        "lc_collate": server.lc_collate,
        "lc_ctype": server.lc_ctype,
    }
    for src, values in (
        ("override", SERVER_DEFAULTS),
        ("override", fixed),
        (None, server.settings),
    ):
        for k, v in values.items():
            out[k.lower()] = (str(v), src or server.sources.get(k.lower(), "configuration file"))
    return out


def _source_file(server: ServerInfo, low: str, src: str, session: SessionInfo) -> dict[str, Any]:
    """pg_settings' sourcefile and sourceline: for values from the file, to those who may
    read every setting (NULL to others, as PostgreSQL's GetConfigOptionValues)."""
    where = server.setting_files.get(low)
    if where is None or src != "configuration file" or not session.read_all_settings:
        return {}
    return {"sourcefile": where[0], "sourceline": where[1]}


def _session_settings(
    server: ServerInfo, base: Mapping[str, tuple[str, str]], session: SessionInfo
) -> dict[str, tuple[str, str]]:
    out = dict(base)
    role = server.role(session.user)
    out["is_superuser"] = ("on" if role is not None and role.superuser else "off", "override")
    out["session_authorization"] = (session.session_user or session.user, "override")
    out["application_name"] = (session.application_name, out["application_name"][1])
    for k, v in session.settings.items():
        low = k.lower()
        src = session.sources.get(low, (None, ""))[0]
        if src is None:
            if low in out and out[low][0] == str(v):
                continue  # the server's value, with its source
            src = "override"  # the proxy's own where PostgreSQL's boot value differs
        out[low] = (str(v), src)
    return out


# ---------------------------------------------------------------------------------------------
# the snapshot


def synthetic_oid(table_oid: int, kind: int) -> int:
    """OID of an object the lake does not model, derived from its table's OID."""
    return SYNTH_TABLE_BASE + 8 * table_oid + kind


def index_name(t: Table, cols: Sequence[str], primary: bool) -> str:
    """The primary key's index name (kept by the table), or PostgreSQL's default name of
    an index over ``cols`` (ChooseRelationName), cut to 63 bytes."""
    if primary:
        return t.pkey_name
    tail = "idx"
    stem = "_".join([t.name, *cols])
    name = f"{stem}_{tail}"
    while len(name.encode()) > 63:
        stem = stem[:-1]
        name = f"{stem}_{tail}"
    return name


@dataclass(frozen=True, slots=True)
class _Index:
    oid: int
    name: str
    table: Table
    columns: tuple[str, ...]
    primary: bool
    replident: bool
    unique: bool = True
    nulls_not_distinct: bool = False
    method: str = "btree"
    options: tuple[int, ...] = ()
    include: tuple[str, ...] = ()
    #: The pg_constraint row's OID (primary key, UNIQUE constraint), 0 for none.
    constraint: int = 0
    #: Per key column, an operator class other than the type's default ("" for that).
    opclasses: tuple[str, ...] = ()
    #: Per key column, its expression where it is one (its ``columns`` entry is "").
    expressions: tuple[IndexExpr | None, ...] = ()
    predicate: IndexExpr | None = None

    @property
    def all_columns(self) -> tuple[str, ...]:
        return (*self.columns, *self.include)

    def expression(self, i: int) -> IndexExpr | None:
        """The ``i``-th (0-based) key column's expression, None for a plain column."""
        return self.expressions[i] if i < len(self.expressions) else None

    def attribute_names(self) -> list[str]:
        """The index's pg_attribute names: a column's own, an expression's as
        ChooseIndexColumnNames makes them unique (``lower``, ``lower1``)."""
        out: list[str] = []
        for i, c in enumerate(self.all_columns):
            e = self.expression(i)
            name = c if e is None else e.name
            base, n = name, 0
            while name in out:
                n += 1
                name = f"{base}{n}"
            out.append(name)
        return out


def _table_indexes(t: Table) -> list[_Index]:
    out: list[_Index] = []
    ident = t.identity_index if t.replica_identity == "i" else ()
    ident_name = t.identity_index_name or (
        t.pkey_name if ident and tuple(ident) == tuple(t.primary_key) else ""
    )
    if t.primary_key:
        out.append(
            _Index(
                synthetic_oid(t.oid, PKEY_INDEX),
                index_name(t, t.primary_key, True),
                t,
                t.primary_key,
                True,
                bool(ident) and ident_name == t.pkey_name,
                constraint=synthetic_oid(t.oid, PKEY_CONSTRAINT),
            )
        )
    if ident and not ident_name:  # (the lake API's identity by columns, with no index named)
        out.append(
            _Index(
                synthetic_oid(t.oid, IDENTITY_INDEX),
                index_name(t, ident, False),
                t,
                ident,
                False,
                True,
            )
        )
    for ix in t.indexes:
        out.append(
            _Index(
                ix.oid,
                ix.name,
                t,
                ix.columns,
                False,
                bool(ident) and ident_name == ix.name,
                ix.unique,
                ix.nulls_not_distinct,
                ix.method,
                ix.options,
                ix.include,
                ix.constraint,
                ix.opclasses,
                ix.expressions,
                ix.predicate,
            )
        )
    return out


_BTREE_OPCLASS = {intype: oid for oid, _n, intype, _f in data.BTREE_OPCLASSES}
#: btree's operator classes that are no type's default (pg_opclass, PostgreSQL 15): OID,
#: name, input type, family
_BTREE_OTHER_OPCLASSES = (
    (4217, "text_pattern_ops", 25, 2095), (4218, "varchar_pattern_ops", 25, 2095),
    (4219, "bpchar_pattern_ops", 1042, 2097), (10009, "cidr_ops", 869, 1974),
    (10036, "record_image_ops", 2249, 3194), (10044, "varchar_ops", 25, 1994),
)  # fmt: skip
#: hash's pattern operator classes (the others, cidr_ops and varchar_ops, are refused)
_HASH_PATTERN_OPCLASSES = (
    (10056, "text_pattern_ops", 25, 2229), (10057, "varchar_pattern_ops", 25, 2229),
    (10058, "bpchar_pattern_ops", 1042, 2231),
)  # fmt: skip
_OPCLASS_BY_NAME = {name: oid for oid, name, _t, _f in _BTREE_OTHER_OPCLASSES}
_HASH_OPCLASS_BY_NAME = {name: oid for oid, name, _t, _f in _HASH_PATTERN_OPCLASSES}
#: hash's default operator classes (pg_opclass, PostgreSQL 15) of the types the lake stores
#: (varchar indexes with text's)
_HASH_OPCLASS = {2277: 10001, 16: 10048, 17: 10049, 20: 10021, 21: 10019, 23: 10020, 25: 10037, 700: 10013,
                 701: 10014, 1042: 10005, 1043: 10037, 1082: 10011, 1083: 10039, 1114: 10046,
                 1184: 10040, 1186: 10023, 1700: 10030, 2950: 10066, 3802: 10089}  # fmt: skip


#: (opclass OID) → (opcintype, opcfamily) of btree's default operator classes.
_BTREE_OPCLASS_INFO = {oid: (intype, family) for oid, _n, intype, family in data.BTREE_OPCLASSES}
#: btree's equality operators (strategy 3) of the default operator classes' families, by
#: (family, left type, right type), as PostgreSQL 15's pg_amop lists them: what
#: ATAddForeignKeyConstraint picks a foreign key's conpfeqop/conppeqop/conffeqop from.
_BTREE_EQ = {
    (397, 2277, 2277): 1070, (423, 1560, 1560): 1784, (424, 16, 16): 91, (426, 1042, 1042): 1054,
    (428, 17, 17): 1955, (429, 18, 18): 92, (434, 1082, 1082): 1093, (434, 1082, 1114): 2347,
    (434, 1082, 1184): 2360, (434, 1114, 1082): 2373, (434, 1114, 1114): 2060,
    (434, 1114, 1184): 2536, (434, 1184, 1082): 2386, (434, 1184, 1114): 2542,
    (434, 1184, 1184): 1320, (1970, 700, 700): 620, (1970, 700, 701): 1120,
    (1970, 701, 700): 1130, (1970, 701, 701): 670, (1974, 869, 869): 1201, (1976, 20, 20): 410,
    (1976, 20, 21): 1868, (1976, 20, 23): 416, (1976, 21, 20): 1862, (1976, 21, 21): 94,
    (1976, 21, 23): 532, (1976, 23, 20): 15, (1976, 23, 21): 533, (1976, 23, 23): 96,
    (1982, 1186, 1186): 1330, (1984, 829, 829): 1220, (1988, 1700, 1700): 1752,
    (1989, 26, 26): 607, (1994, 19, 19): 93, (1994, 19, 25): 254, (1994, 25, 19): 260,
    (1994, 25, 25): 98, (1996, 1083, 1083): 1108, (2000, 1266, 1266): 1550,
    (2002, 1562, 1562): 1804, (2099, 790, 790): 900, (2968, 2950, 2950): 2972,
    (2994, 2249, 2249): 2988, (3253, 3220, 3220): 3222, (3371, 774, 774): 3362,
    (3626, 3614, 3614): 3629, (3683, 3615, 3615): 3676, (4033, 3802, 3802): 3240,
}  # fmt: skip


def _fk_operators(pk: ColumnType, fk: ColumnType) -> tuple[int, int, int]:
    """(pfeqop, ppeqop, ffeqop) of one column pair, chosen as PostgreSQL 15's
    ATAddForeignKeyConstraint chooses them: in the family of the referenced index's operator
    class, the PK = FK and FK = FK operators if the family has both (int4 = int8, float8 =
    float4), else the PK = PK operator for all three (the FK side is cast: int4 → numeric,
    varchar → text)."""
    intype, family = _BTREE_OPCLASS_INFO.get(_opclass(_BTREE_OPCLASS, pk), (0, 0))
    pp = _BTREE_EQ.get((family, intype, intype), 0)
    fk_oid = -1 if fk.is_array else fk.oid
    pf = _BTREE_EQ.get((family, intype, fk_oid), 0)
    ff = _BTREE_EQ.get((family, fk_oid, fk_oid), 0)
    return (pf, pp, ff) if pf and ff else (pp, pp, pp)


_FK_ACTIONS = {"a": "", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}


@dataclass(frozen=True, slots=True)
class _ForeignKey:
    """A FOREIGN KEY resolved against its two tables: what its pg_constraint row shows."""

    fk: ForeignKey
    table: Table
    ref: Table
    #: conindid: the referenced unique index (the primary key's when ``fk.ref_index`` is 0)
    index: int
    conkey: tuple[int, ...]
    ref_columns: tuple[str, ...]
    pfeqop: tuple[int, ...]
    ppeqop: tuple[int, ...]
    ffeqop: tuple[int, ...]
    #: confdelsetcols: None unless ``ON DELETE SET NULL (cols)`` named columns
    delsetcols: tuple[int, ...] | None

    def definition(self, *, qualify: bool) -> str:
        """``pg_get_constraintdef``'s text (ruleutils.c, CONSTRAINT_FOREIGN): the referenced
        table schema-qualified when ``qualify`` (generate_relation_name qualifies a table
        not visible on the search_path, whatever the pretty flag)."""
        fk = self.fk
        rel = quote_ident(self.ref.name)
        if qualify:
            rel = f"{quote_ident(self.ref.schema)}.{rel}"
        text = (
            f"FOREIGN KEY ({', '.join(quote_ident(c) for c in fk.columns)}) REFERENCES {rel}("
            + ", ".join(quote_ident(c) for c in self.ref_columns)
            + ")"
        )
        if fk.match_full:
            text += " MATCH FULL"
        if _FK_ACTIONS[fk.on_update]:
            text += " ON UPDATE " + _FK_ACTIONS[fk.on_update]
        if _FK_ACTIONS[fk.on_delete]:
            text += " ON DELETE " + _FK_ACTIONS[fk.on_delete]
        if fk.set_columns:
            text += " (" + ", ".join(quote_ident(c) for c in fk.set_columns) + ")"
        if fk.deferrable:
            text += " DEFERRABLE"
        if fk.initially_deferred:
            text += " INITIALLY DEFERRED"
        if not fk.validated:
            text += " NOT VALID"
        return text


def _foreign_keys(catalog: Catalog, tables: Sequence[Table]) -> list[_ForeignKey]:
    """Every table's foreign keys, in OID order (a key whose referenced table is missing,
    which the lake does not allow, is left out rather than shown wrong)."""
    out = []
    for t in tables:
        attnum = {c.name: c.attnum for c in t.columns}
        types = {c.name: c.type for c in t.columns}
        for fk in t.foreign_keys:
            ref = catalog.tables.get(fk.ref_oid)
            if ref is None or any(c not in attnum for c in fk.columns):
                continue
            ref_cols = {c.attnum: c for c in ref.columns}
            ops = [
                _fk_operators(ref_cols[n].type, types[c])
                for n, c in zip(fk.ref_attnums, fk.columns, strict=True)
            ]
            out.append(
                _ForeignKey(
                    fk,
                    t,
                    ref,
                    fk.ref_index or synthetic_oid(ref.oid, PKEY_INDEX),
                    tuple(attnum[c] for c in fk.columns),
                    fk.ref_columns(ref),
                    tuple(o[0] for o in ops),
                    tuple(o[1] for o in ops),
                    tuple(o[2] for o in ops),
                    tuple(attnum[c] for c in fk.set_columns if c in attnum)
                    if fk.set_columns
                    else None,
                )
            )
    out.sort(key=lambda f: f.fk.oid)
    return out


def _collation_of(type_oid: int) -> int:
    row = TYPES.rows.get(type_oid)
    return int(row["typcollation"]) if row else 0


class CatalogSnapshot:
    """The emulated catalog for one lake catalog version: Arrow tables built on first use."""

    def __init__(self, catalog: Catalog, server: ServerInfo) -> None:
        self.catalog = catalog
        self.server = server
        self._tables: dict[str, pa.Table] = {}
        self._lock = threading.Lock()
        self.role_oids = server.role_oids()
        self.owner_oid = next(iter(self.role_oids.values()), BOOTSTRAP_SUPERUSER_OID)
        self.role_names = {oid: name for name, oid in self.role_oids.items()}
        #: every role's OID by name, the predefined ones too
        self.all_role_oids = {**{name: oid for oid, name in data.PREDEFINED_ROLES}, **self.role_oids}
        self.role_names.setdefault(PG_DATABASE_OWNER_OID, "pg_database_owner")
        self.base_settings = server_settings(server)
        self.user_tables = sorted(catalog.tables.values(), key=lambda t: t.oid)
        self.sequences = sorted(catalog.sequences.values(), key=lambda sq: sq.oid)
        self.views = sorted(catalog.views.values(), key=lambda v: v.oid)
        self.functions = sorted(catalog.functions.values(), key=lambda fn: fn.oid)
        self.indexes = [ix for t in self.user_tables for ix in _table_indexes(t)]
        self.foreign_keys = _foreign_keys(catalog, self.user_tables)
        #: every table's CHECK constraints, in OID order
        self.checks = sorted(((t, c) for t in self.user_tables for c in t.checks), key=lambda x: x[1].oid)
        self.domains = sorted(catalog.domains.values(), key=lambda d: d.oid)
        self.enums = sorted(catalog.enums.values(), key=lambda e: e.oid)
        self.composites = sorted(catalog.composites.values(), key=lambda c: c.oid)
        #: relhastriggers: a foreign key's RI triggers are on both of its tables (PostgreSQL
        #: leaves the flag set after the constraint is dropped, until a VACUUM; the lake
        #: does not remember that)
        self.triggered = {t.oid for f in self.foreign_keys for t in (f.table, f.ref)}
        self.namespaces: list[tuple[int, str]] = [
            *data.SYSTEM_NAMESPACES,
            *sorted((oid, name) for name, oid in catalog.schemas.items()),
        ]
        self.ns_oid = {name: oid for oid, name in self.namespaces}

    @functools.cached_property
    def array_names(self) -> dict[int, str]:
        """Each user type's array type name (by the element type's OID), as
        makeArrayTypeName chooses it: ``_name``, or with more underscores while a type of
        the schema has it — the other types' names, and the array names chosen before, in
        the order the types were made (which is what moveArrayTypeName's renames leave)."""
        made: list[tuple[int, str, int, str]] = []  # (made when, schema, element OID, name)
        for t in (*self.user_tables, *self.views):
            made.append((t.oid, t.schema, synthetic_oid(t.oid, ROWTYPE), t.name))
        made += [(e.oid, e.schema, e.oid, e.name) for e in self.enums]
        made += [(d.oid, d.schema, d.oid, d.name) for d in self.domains]
        made += [(ct.relid, ct.schema, ct.oid, ct.name) for ct in self.composites]
        taken: dict[str, set[str]] = {}
        for _, schema, _, name in made:
            taken.setdefault(schema, set()).add(name)
        out: dict[int, str] = {}
        for _, schema, oid, name in sorted(made, key=lambda m: m[0]):
            names = taken[schema]
            for k in range(1, 63):
                cand = _array_name(name, k)
                if cand not in names:
                    break
            names.add(cand)
            out[oid] = cand
        return out

    def owner_of(self, oid: int) -> int:
        """relowner/nspowner: the object's owner (the database's owner by default)."""
        return privileges.ownership(self.catalog, oid, self.owner_oid).owner

    def owner_name(self, oid: int) -> str:
        owner = self.owner_of(oid)
        return self.role_names.get(owner, str(owner))

    def acl_of(self, oid: int) -> list[str] | None:
        """relacl/nspacl: the ACL as aclitem[] prints it; None while it is the default."""
        own = privileges.ownership(self.catalog, oid, self.owner_oid)
        return privileges.acl_text(own.acl, self.role_names) if own.acl is not None else None

    _cache: ClassVar[list[CatalogSnapshot]] = []
    _cache_lock: ClassVar[threading.Lock] = threading.Lock()
    CACHE_SIZE: ClassVar[int] = 8

    @classmethod
    def build(cls, catalog: Catalog, server: ServerInfo) -> CatalogSnapshot:
        """The snapshot for this catalog version (cached: a repeat call is a short scan).

        Catalog versions are immutable objects, so identity is the version key; the server
        description is compared by value, so a server may rebuild its ServerInfo freely.
        """
        with cls._cache_lock:
            for i, snap in enumerate(cls._cache):
                if snap.catalog is catalog and (snap.server is server or snap.server == server):
                    cls._cache.append(cls._cache.pop(i))
                    return snap
            snap = cls(catalog, server)
            cls._cache.append(snap)
            del cls._cache[: -cls.CACHE_SIZE]
            return snap

    # -- access ---------------------------------------------------------------------------
    def table(self, registered: str) -> pa.Table:
        """The Arrow table registered as ``registered`` (``pgc_pg_class``, ``pgc_gpt``, …)."""
        t = self._tables.get(registered)
        if t is not None:
            return t
        with self._lock:
            t = self._tables.get(registered)
            if t is None:
                t = self._make(registered)
                self._tables[registered] = t
            return t

    def _make(self, registered: str) -> pa.Table:
        helper = _HELPER_TABLES.get(registered)
        if helper is not None:
            schema, fn = helper
            return pa.Table.from_pylist(fn(self), schema=schema)
        d = BY_REGISTERED[registered]
        builder = _ROW_BUILDERS.get(registered)
        rows = builder(self) if builder is not None else []
        return pa.Table.from_pylist(rows, schema=d.arrow_schema)

    # -- helpers used by the builders -------------------------------------------------------
    def quals(self) -> dict[tuple[int, int], str | None]:
        out: dict[tuple[int, int], str | None] = {}
        for p in self.catalog.publications.values():
            for pt in p.tables:
                t = self.catalog.tables.get(pt.table_oid)
                if t is None or pt.row_filter is None:
                    out[(p.oid, pt.table_oid)] = None
                    continue
                names = {c.attnum: quote_ident(c.name) for c in t.columns}
                out[(p.oid, pt.table_oid)] = fill_marks(pt.row_filter.expr, names)
        return out

    def publication_tables(self) -> list[tuple[str, Table, list[int] | None, str | None]]:
        """What PostgreSQL 15's ``pg_get_publication_tables(pubname)`` returns, per pub.

        ``attrs`` is NULL unless the publication has a column list for the table (15.x
        since 15.4; the pg_publication_tables view then lists every live column).
        """
        quals = self.quals()
        out: list[tuple[str, Table, list[int] | None, str | None]] = []
        for p in sorted(self.catalog.publications.values(), key=lambda p: p.oid):
            seen: set[int] = set()
            chosen: list[Table] = []
            if p.all_tables:
                chosen = [t for t in self.user_tables if not is_temp_schema(t.schema)]
            else:
                for pt in p.tables:
                    t = self.catalog.tables.get(pt.table_oid)
                    if t is not None and t.oid not in seen:
                        seen.add(t.oid)
                        chosen.append(t)
                for t in self.user_tables:
                    if t.schema in p.schemas and t.oid not in seen:
                        seen.add(t.oid)
                        chosen.append(t)
            chosen = _partition_option(self.catalog, chosen, p.via_root, p.all_tables)
            for t in chosen:
                entry = p.entry(t.oid)
                attrs = None
                if entry is not None and entry.columns is not None:
                    attrs = sorted(c.attnum for c in t.columns if c.name in entry.columns)
                out.append((p.name, t, attrs, quals.get((p.oid, t.oid))))
        return out

    def relnatts(self, t: Table) -> int:
        return max([t.next_attnum - 1, *(c.attnum for c in t.columns)], default=0)


# -- row builders ------------------------------------------------------------------------------

RowsFn = Callable[[CatalogSnapshot], list[dict[str, Any]]]
_ROW_BUILDERS: dict[str, RowsFn] = {}


def _rows(name: str) -> Callable[[RowsFn], RowsFn]:
    def deco(fn: RowsFn) -> RowsFn:
        _ROW_BUILDERS[name] = fn
        return fn

    return deco


PG_DATABASE_OWNER_OID = 6171


@_rows("pgc_pg_namespace")
def _pg_namespace(s: CatalogSnapshot) -> list[dict[str, Any]]:
    owner = quote_ident(next(iter(s.role_oids), "postgres"))
    acls = {
        "pg_catalog": [f"{owner}=UC/{owner}", f"=U/{owner}"],
        "information_schema": [f"{owner}=UC/{owner}", f"=U/{owner}"],
        "public": ["pg_database_owner=UC/pg_database_owner", "=U/pg_database_owner"],
    }
    out = []
    for oid, name in s.namespaces:
        # public belongs to pg_database_owner since PostgreSQL 15
        if name in acls:
            nspowner = PG_DATABASE_OWNER_OID if name == "public" else s.owner_oid
            acl = acls[name]
        else:
            nspowner, acl = s.owner_of(oid), s.acl_of(oid)
        if name == "public" and oid in s.catalog.owners:
            nspowner, acl = s.owner_of(oid), s.acl_of(oid)
        out.append({"oid": oid, "nspname": name, "nspowner": nspowner, "nspacl": acl})
    return out


def _class_row(**kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "reltype": 0,
        "reloftype": 0,
        "relowner": BOOTSTRAP_SUPERUSER_OID,
        "relam": 0,
        "reltablespace": 0,
        "relpages": 0,
        "reltuples": -1.0,
        "relallvisible": 0,
        "reltoastrelid": 0,
        "relhasindex": False,
        "relisshared": False,
        "relpersistence": "p",
        "relchecks": 0,
        "relhasrules": False,
        "relhastriggers": False,
        "relhassubclass": False,
        "relrowsecurity": False,
        "relforcerowsecurity": False,
        "relispopulated": True,
        "relreplident": "n",
        "relispartition": False,
        "relrewrite": 0,
        "relfrozenxid": 0,
        "relminmxid": 0,
    }
    row.update(kw)
    row.setdefault("relfilenode", row["oid"])
    return row


_SHARED_CATALOGS = frozenset(
    {
        "pg_authid",
        "pg_auth_members",
        "pg_database",
        "pg_tablespace",
        "pg_shdescription",
        "pg_shdepend",
        "pg_subscription",
        "pg_replication_origin",
    }
)


@_rows("pgc_pg_class")
def _pg_class(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    for d in PG_CATALOG.values():
        is_table = d.relkind == "r"
        out.append(
            _class_row(
                oid=d.oid,
                relname=d.name,
                relnamespace=PG_CATALOG_OID,
                relowner=s.owner_oid,
                relam=HEAP_AM_OID if is_table else 0,
                relfilenode=0 if d.name in _SHARED_CATALOGS or not is_table else d.oid,
                reltablespace=1664 if d.name in _SHARED_CATALOGS else 0,
                relhasindex=is_table,
                relisshared=d.name in _SHARED_CATALOGS,
                relkind=d.relkind,
                relnatts=len(d.columns),
                relfrozenxid=0,
                relminmxid=1 if is_table else 0,
                reltuples=-1.0 if is_table else 0.0,
            )
        )
    has_index = {ix.table.oid for ix in s.indexes}
    parents = {t.partition_bound.parent for t in s.user_tables if t.partition_bound is not None}
    for t in s.user_tables:
        partitioned = t.partition_key is not None
        out.append(
            _class_row(
                oid=t.oid,
                relname=t.name,
                relnamespace=s.ns_oid[t.schema],
                reltype=synthetic_oid(t.oid, ROWTYPE),
                relowner=s.owner_of(t.oid),
                relacl=s.acl_of(t.oid),
                relam=0 if partitioned else HEAP_AM_OID,
                relfilenode=0 if partitioned else t.oid,
                relhasindex=t.oid in has_index,
                relhastriggers=t.oid in s.triggered,
                relhassubclass=t.oid in parents,
                relispartition=t.partition_bound is not None,
                relpartbound=partbound_bin(t.oid) if t.partition_bound is not None else None,
                relchecks=len(t.checks),
                relkind=t.relkind,
                relnatts=s.relnatts(t),
                relreplident=t.replica_identity,
                relminmxid=1,
                relpersistence="t" if is_temp_schema(t.schema) else "p",
                reloptions=list(t.reloptions) or None,
            )
        )
    for v in s.views:
        out.append(
            _class_row(
                oid=v.oid,
                relname=v.name,
                relnamespace=s.ns_oid[v.schema],
                reltype=synthetic_oid(v.oid, ROWTYPE),
                relowner=s.owner_of(v.oid),
                relacl=s.acl_of(v.oid),
                relfilenode=0,
                relkind="v",
                relnatts=len(v.columns),
                relhasrules=True,
                reltuples=-1.0,
                relpersistence="t" if is_temp_schema(v.schema) else "p",
            )
        )
    for ct in s.composites:
        out.append(
            _class_row(
                oid=ct.relid,
                relname=ct.name,
                relnamespace=s.ns_oid[ct.schema],
                reltype=ct.oid,
                relowner=s.owner_of(ct.relid),
                relfilenode=0,
                relkind="c",
                relnatts=len(ct.attributes),
                relpersistence="t" if is_temp_schema(ct.schema) else "p",
            )
        )
    for sq in s.sequences:
        out.append(
            _class_row(
                oid=sq.oid,
                relname=sq.name,
                relnamespace=s.ns_oid[sq.schema],
                relowner=s.owner_of(sq.oid),
                relacl=s.acl_of(sq.oid),
                relpages=1,
                reltuples=1.0,
                relkind="S",
                relnatts=3,
                relpersistence="t" if is_temp_schema(sq.schema) else "p",
            )
        )
    for ix in s.indexes:
        out.append(
            _class_row(
                oid=ix.oid,
                relname=ix.name,
                relnamespace=s.ns_oid[ix.table.schema],
                relowner=s.owner_of(ix.table.oid),
                relam=HASH_AM_OID if ix.method == "hash" else BTREE_AM_OID,
                relpages=0 if ix.table.partition_key is not None else 1,
                reltuples=0.0,
                relkind="I" if ix.table.partition_key is not None else "i",
                relhassubclass=ix.primary and ix.table.oid in parents,
                relispartition=ix.table.partition_bound is not None,
                relnatts=len(ix.all_columns),
                relpersistence="t" if is_temp_schema(ix.table.schema) else "p",
            )
        )
    return out


_SYSTEM_COLUMNS = (
    ("tableoid", -6, 26),
    ("cmax", -5, 29),
    ("xmax", -4, 28),
    ("cmin", -3, 29),
    ("xmin", -2, 28),
    ("ctid", -1, 27),
)


def _attr_row(
    relid: int, name: str, num: int, type_oid: int, typmod: int, *, stored_as: int = 0, **kw: Any
) -> dict[str, Any]:
    """``stored_as``: the type whose length, alignment, storage and collation the column
    has, when ``type_oid`` is a domain over it."""
    trow = TYPES.rows.get(stored_as or type_oid, {})
    row: dict[str, Any] = {
        "attrelid": relid,
        "attname": name,
        "atttypid": type_oid,
        "attstattarget": -1,
        "attlen": trow.get("typlen", -1),
        "attnum": num,
        "attndims": 0,
        "attcacheoff": -1,
        "atttypmod": typmod,
        "attbyval": trow.get("typbyval", False),
        "attalign": trow.get("typalign", "i"),
        "attstorage": trow.get("typstorage", "p"),
        "attcompression": "",
        "attnotnull": False,
        "atthasdef": False,
        "atthasmissing": False,
        "attidentity": "",
        "attgenerated": "",
        "attisdropped": False,
        "attislocal": True,
        "attinhcount": 0,
        "attcollation": _collation_of(stored_as or type_oid),
    }
    row.update(kw)
    return row


def _stored_as(ct: ColumnType) -> int:
    """The built-in type whose length, alignment, storage and collation a column of
    ``ct`` has when its own type is not built in: a domain's base type; an enum's are
    anyenum's (4 bytes by value), an array of one's are int4[]'s (no collation)."""
    if ct.is_enum:
        return 1007 if ct.is_array else 3500
    if ct.is_composite:  # (record's and record[]'s: varlena, double-aligned, extended)
        return 2287 if ct.is_array else 2249
    return ct.oid if ct.domain else 0


def _typname_oid(typname: str) -> int:
    return TYPE_OIDS.get(typname, 25)


@_rows("pgc_pg_attribute")
def _pg_attribute(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    owner = quote_ident(next(iter(s.role_oids), "postgres"))
    column_acls = {  # (the catalogs' column privileges, as initdb grants them)
        (o, sub): [re.sub(r"\bpostgres\b", owner, a) for a in acl]
        for o, c, sub, _, acl in data.PG_INIT_PRIVS_ROWS
        if c == PG_CLASS_OID and sub > 0
    }
    for d in PG_CATALOG.values():
        notnull = set(data.CATALOG_NOT_NULL.get(d.name, ()))
        for i, (name, typ) in enumerate(d.columns, start=1):
            toid = _typname_oid(typ)
            row = _attr_row(d.oid, name, i, toid, -1, attnotnull=name in notnull)
            if (d.oid, i) in column_acls:
                row["attacl"] = column_acls[d.oid, i]
            out.append(row)
    for t in s.user_tables:
        for name, num, toid in _SYSTEM_COLUMNS:
            out.append(
                _attr_row(
                    t.oid, name, num, toid, -1, attstattarget=0, attnotnull=True, attcollation=0
                )
            )
        by_num = {c.attnum: c for c in t.columns}
        own = privileges.ownership(s.catalog, t.oid, s.owner_oid)
        for num in range(1, s.relnatts(t) + 1):
            c = by_num.get(num)
            if c is None:
                out.append(
                    _attr_row(
                        t.oid,
                        f"........pg.dropped.{num}........",
                        num,
                        0,
                        -1,
                        attisdropped=True,
                        attstattarget=0,
                        attlen=-1,
                        attcollation=0,
                    )
                )
                continue
            out.append(
                _attr_row(
                    t.oid,
                    c.name,
                    num,
                    c.type.declared_oid,
                    c.type.typmod if not c.type.domain else -1,
                    attndims=1 if c.type.is_array and not c.type.domain else 0,
                    stored_as=_stored_as(c.type),
                    attnotnull=c.not_null,
                    atthasdef=(c.default is not None and not c.identity) or c.generation is not None,
                    attidentity=c.identity,
                    attgenerated=c.generated,
                    atthasmissing=c.has_missing,
                    # (a partition's columns are all its parent's: MergeAttributes and
                    # ATTACH PARTITION make them not local, inherited once)
                    **({"attislocal": False, "attinhcount": 1} if t.partition_bound is not None else {}),
                    **({"attstorage": c.storage} if c.storage else {}),
                    **({"attacl": privileges.acl_text(own.column_acl(num), s.role_names)} if own.column_acl(num) else {}),
                )
            )
    for ct in s.composites:
        for num, (name, ctype) in enumerate(ct.attributes, start=1):
            if is_dropped_attribute(name):
                out.append(_attr_row(ct.relid, name, num, 0, -1, attisdropped=True, attlen=-1, attcollation=0, attalign="d", attstorage="x"))
                continue
            out.append(
                _attr_row(
                    ct.relid,
                    name,
                    num,
                    ctype.declared_oid,
                    ctype.typmod if not ctype.domain else -1,
                    attndims=1 if ctype.is_array and not ctype.domain else 0,
                    stored_as=_stored_as(ctype),
                )
            )
    for v in s.views:
        for num, vc in enumerate(v.columns, start=1):
            out.append(
                _attr_row(
                    v.oid,
                    vc.name,
                    num,
                    vc.type_oid,
                    vc.typmod,
                    attndims=1 if _is_array_oid(vc.type_oid) else 0,
                )
            )
    for sq in s.sequences:
        for name, num, toid in _SYSTEM_COLUMNS:
            out.append(
                _attr_row(
                    sq.oid, name, num, toid, -1, attstattarget=0, attnotnull=True, attcollation=0
                )
            )
        for num, (name, toid) in enumerate(
            (("last_value", 20), ("log_cnt", 20), ("is_called", 16)), start=1
        ):
            out.append(_attr_row(sq.oid, name, num, toid, -1, attnotnull=True))
    for ix in s.indexes:
        cols = {c.name: c for c in ix.table.columns}
        for i, (name, shown) in enumerate(zip(ix.all_columns, ix.attribute_names(), strict=True), start=1):
            c = cols.get(name)
            e = ix.expression(i - 1)
            toid = e.type_oid if e is not None else c.type.oid if c else 25
            extra = {"attcollation": 0} if i > len(ix.columns) else {}  # (INCLUDE columns: none)
            typmod = c.type.typmod if c else -1
            name = shown
            if (
                ix.method == "hash"
            ):  # (a hash index stores int4 hash codes: its opclass's opckeytype)
                extra, toid, typmod = {"attcollation": _collation_of(toid)}, 23, -1
            out.append(_attr_row(ix.oid, name, i, toid, typmod, **extra))
    return out


def _is_array_oid(oid: int) -> bool:
    row = TYPES.rows.get(oid, {})
    return bool(row.get("typelem")) and row.get("typsubscript") == "array_subscript_handler"


def _row_type(t: Table | View, s: CatalogSnapshot) -> dict[str, Any]:
    return dict(
        _row_type_common(s.ns_oid[t.schema], s.owner_oid),
        oid=synthetic_oid(t.oid, ROWTYPE),
        typname=t.name,
        typrelid=t.oid,
        typarray=synthetic_oid(t.oid, ROWTYPE_ARRAY),
    )


def _array_name(name: str, underscores: int) -> str:
    """``_`` repeated, then ``name`` cut to fit 63 bytes at a character's end."""
    data = ("_" * underscores + name).encode()
    return data[:63].decode(errors="ignore")


def _row_array_type(row: dict[str, Any], oid: int) -> dict[str, Any]:
    """The array type of the row type ``row``."""
    return dict(
        row,
        oid=oid,
        typname=("_" + row["typname"])[:63],
        typcategory="A",
        typrelid=0,
        typsubscript="array_subscript_handler",
        typelem=row["oid"],
        typarray=0,
        typinput="array_in",
        typoutput="array_out",
        typreceive="array_recv",
        typsend="array_send",
        typanalyze="array_typanalyze",
        typtype="b",
    )


def _row_type_common(namespace: int, owner: int) -> dict[str, Any]:
    """The pg_type columns every row type (typtype ``c``: a relation's, a composite type's)
    has alike."""
    return {
        "typnamespace": namespace,
        "typowner": owner,
        "typlen": -1,
        "typbyval": False,
        "typtype": "c",
        "typcategory": "C",
        "typispreferred": False,
        "typisdefined": True,
        "typdelim": ",",
        "typsubscript": "-",
        "typelem": 0,
        "typinput": "record_in",
        "typoutput": "record_out",
        "typreceive": "record_recv",
        "typsend": "record_send",
        "typmodin": "-",
        "typmodout": "-",
        "typanalyze": "-",
        "typalign": "d",
        "typstorage": "x",
        "typnotnull": False,
        "typbasetype": 0,
        "typtypmod": -1,
        "typndims": 0,
        "typcollation": 0,
    }


@_rows("pgc_pg_type")
def _pg_type(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = [dict(r) for r in TYPES.rows.values()]
    for t in (*s.user_tables, *s.views):
        row = _row_type(t, s)  # type: ignore[arg-type]
        out.append(row)
        out.append(dict(_row_array_type(row, synthetic_oid(t.oid, ROWTYPE_ARRAY)), typname=s.array_names[row["oid"]]))
    for e in s.enums:
        out += _enum_types(e, s)
    for d in s.domains:
        out += _domain_types(d, s)
    for ct in s.composites:
        row = dict(
            _row_type_common(s.ns_oid[ct.schema], s.owner_of(ct.relid)),
            oid=ct.oid, typname=ct.name, typrelid=ct.relid, typarray=ct.array_oid, typacl=None,
        )  # fmt: skip
        out.append(row)
        out.append(dict(_row_array_type(row, ct.array_oid), typname=s.array_names[ct.oid]))
    return out


#: pg_type's row of an enum (typtype ``e``, enum_in/enum_out; its other columns as every
#: enum's in PostgreSQL 15) and of its array type.
_ENUM_TYPE = dict(
    TYPES.rows[3500],  # (anyenum's row for the columns every type has)
    typlen=4, typbyval=True, typtype="e", typcategory="E", typispreferred=False, typisdefined=True,
    typdelim=",", typrelid=0, typsubscript="-", typelem=0, typinput="enum_in", typoutput="enum_out",
    typreceive="enum_recv", typsend="enum_send", typmodin="-", typmodout="-", typanalyze="-",
    typalign="i", typstorage="p", typnotnull=False, typbasetype=0, typtypmod=-1, typndims=0,
    typcollation=0, typdefaultbin=None, typdefault=None, typacl=None,
)  # fmt: skip


def _enum_types(e: EnumType, s: CatalogSnapshot) -> list[dict[str, Any]]:
    row = dict(_ENUM_TYPE, oid=e.oid, typname=e.name, typnamespace=s.ns_oid[e.schema], typowner=s.owner_of(e.oid), typarray=e.array_oid)
    array = dict(
        TYPES.rows[1009],  # (text[]'s row: array_in, typalign i, typstorage x)
        oid=e.array_oid, typname=s.array_names[e.oid], typnamespace=row["typnamespace"], typowner=row["typowner"],
        typelem=e.oid, typcollation=0, typarray=0, typispreferred=False,
    )  # fmt: skip
    return [row, array]


def _base_type_row(oid: int, s: CatalogSnapshot) -> dict[str, Any]:
    """pg_type's row of a domain's base type: a built-in type's, or an enum's."""
    en = s.catalog.enums.get(oid)
    return _enum_types(en, s)[0] if en is not None else TYPES.rows[oid]


@_rows("pgc_pg_enum")
def _pg_enum(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [
        {"oid": x.oid, "enumtypid": e.oid, "enumsortorder": x.sortorder, "enumlabel": x.label}
        for e in s.enums
        for x in e.labels
    ]


def _domain_types(d: Domain, s: CatalogSnapshot) -> list[dict[str, Any]]:
    """A domain's pg_type row (typtype ``d``, its base's I/O through domain_in/domain_recv)
    and its array type's."""
    base = _base_type_row(d.base.oid, s)
    row = dict(
        base,
        oid=d.oid,
        typname=d.name,
        typnamespace=s.ns_oid[d.schema],
        typowner=s.owner_of(d.oid),
        typtype="d",
        typispreferred=False,
        typarray=d.array_oid,
        typelem=0,
        typinput="domain_in",
        typreceive="domain_recv",
        typnotnull=d.not_null,
        typbasetype=d.parent or d.base.oid,
        typtypmod=-1 if d.parent else d.base.typmod,
        typndims=1 if d.base.is_array and not d.parent else 0,
        typdefault=None if d.default is None else d.default.expr,
        typdefaultbin=None if d.default is None else domain_default_bin(d.oid),
    )
    elem_array = TYPES.rows[1009] if d.base.is_enum else TYPES.rows[d.base.base.array_oid] if not d.base.is_array else TYPES.rows[d.base.oid]
    array = dict(
        elem_array,
        oid=d.array_oid,
        typname=s.array_names[d.oid],
        typnamespace=s.ns_oid[d.schema],
        typowner=row["typowner"],
        typelem=d.oid,
        typalign=row["typalign"] if row["typalign"] == "d" else "i",
        typcollation=row["typcollation"],
    )
    return [row, array]


def domain_check_definition(d: Domain, c: Check, *, pretty: bool) -> str:
    """``pg_get_constraintdef`` of a domain's CHECK: ``CHECK (VALUE > 0)``. The value of a
    domain over a domain is of that domain's type, so it prints relabelled to the base
    type, as the operators it meets take it (``(VALUE)::integer``)."""
    value = "VALUE"
    if d.parent:  # (a RelabelType to the base type, without its typmod)
        base = ColumnType(d.base.base, -1, d.base.is_array).sql_name()
        value = f"VALUE::{base}" if pretty else f"(VALUE)::{base}"
    text = f"CHECK ({Check.fill(c.pretty if pretty else c.expr, {DOMAIN_VALUE: value})})"
    return text if c.validated else text + " NOT VALID"


def type_storage(type_oid: int) -> str:
    """A type's typstorage (``p`` for a type that cannot be TOASTed)."""
    return str(TYPES.rows.get(type_oid, {}).get("typstorage", "p"))


def _opclass(opclasses: dict[int, int], ct: Any) -> int:
    """A key column's default operator class (varchar uses text's; an array, array_ops)."""
    return opclasses.get(2277 if ct.is_array else 25 if ct.oid == 1043 else ct.oid, 0)


@_rows("pgc_pg_index")
def _pg_index(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    for ix in s.indexes:
        cols = {c.name: c for c in ix.table.columns}
        # (an expression's column: its type's, attnum 0)
        keys = [cols[n] if n in cols else _ExprColumn(e.type_oid) for n, e in zip(ix.columns, ix.expressions or (None,) * len(ix.columns), strict=True)
                if n in cols or e is not None]  # fmt: skip
        every = [*keys, *(cols[n] for n in ix.include if n in cols)]
        opclasses = _HASH_OPCLASS if ix.method == "hash" else _BTREE_OPCLASS
        out.append(
            {
                "indexrelid": ix.oid,
                "indrelid": ix.table.oid,
                "indnatts": len(every),
                "indnkeyatts": len(keys),
                "indisunique": ix.unique,
                "indnullsnotdistinct": ix.nulls_not_distinct,
                "indisprimary": ix.primary,
                "indisexclusion": False,
                "indimmediate": True,
                "indisclustered": False,
                "indisvalid": True,
                "indcheckxmin": False,
                "indisready": True,
                "indislive": True,
                "indisreplident": ix.replident,
                "indkey": [c.attnum for c in every],
                "indcollation": [_collation_of(c.type.oid) for c in keys],
                "indclass": [
                    (_HASH_OPCLASS_BY_NAME if ix.method == "hash" else _OPCLASS_BY_NAME)[ix.opclasses[i]]
                    if i < len(ix.opclasses) and ix.opclasses[i]
                    else _opclass(opclasses, c.type)
                    for i, c in enumerate(keys)
                ],
                "indoption": list(ix.options) or [0 for _ in keys],
                "indexprs": index_exprs_bin(ix.oid) if any(ix.expressions) else None,
                "indpred": index_pred_bin(ix.oid) if ix.predicate is not None else None,
            }
        )
    return out


@dataclass(frozen=True, slots=True)
class _ExprColumn:
    """An index expression where _pg_index wants a column: its attnum (0) and type."""

    type_oid: int
    attnum: int = 0

    @property
    def type(self) -> ColumnType:
        return type_by_oid(self.type_oid)


def index_exprs_bin(oid: int) -> str:
    """An index's ``indexprs``: opaque, as ``adbin``; ``pg_get_expr`` prints it."""
    return f"{{INDEXPRS :indexrelid {oid}}}"


def index_pred_bin(oid: int) -> str:
    """A partial index's ``indpred``."""
    return f"{{INDPRED :indexrelid {oid}}}"


@_rows("pgc_pg_constraint")
def _pg_constraint(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    key_constraints = {ix.table.oid: ix.constraint for ix in s.indexes if ix.primary}
    for ix in s.indexes:
        if not ix.constraint:
            continue
        cols = {c.name: c.attnum for c in ix.table.columns}
        bound = ix.table.partition_bound
        # (a partition's primary key is its parent's, inherited: conparentid names it)
        parent_key = key_constraints.get(bound.parent, 0) if ix.primary and bound is not None else 0
        out.append(
            {
                "oid": ix.constraint,
                "conname": ix.name,
                "connamespace": s.ns_oid[ix.table.schema],
                "contype": "p" if ix.primary else "u",
                "condeferrable": False,
                "condeferred": False,
                "convalidated": True,
                "conrelid": ix.table.oid,
                "contypid": 0,
                "conindid": ix.oid,
                "conparentid": parent_key,
                "confrelid": 0,
                "confupdtype": " ",
                "confdeltype": " ",
                "confmatchtype": " ",
                "conislocal": not parent_key,
                "coninhcount": 1 if parent_key else 0,
                "connoinherit": not parent_key or bool(bound is not None and bound.attached),
                "conkey": [cols[n] for n in ix.columns if n in cols],
            }
        )
    for f in s.foreign_keys:
        fk = f.fk
        out.append(
            {
                "oid": fk.oid,
                "conname": fk.name,
                "connamespace": s.ns_oid[f.table.schema],
                "contype": "f",
                "condeferrable": fk.deferrable,
                "condeferred": fk.initially_deferred,
                "convalidated": fk.validated,
                "conrelid": f.table.oid,
                "contypid": 0,
                "conindid": f.index,
                "conparentid": 0,
                "confrelid": f.ref.oid,
                "confupdtype": fk.on_update,
                "confdeltype": fk.on_delete,
                "confmatchtype": "f" if fk.match_full else "s",
                "conislocal": True,
                "coninhcount": 0,
                "connoinherit": True,
                "conkey": list(f.conkey),
                "confkey": list(fk.ref_attnums),
                "conpfeqop": list(f.pfeqop),
                "conppeqop": list(f.ppeqop),
                "conffeqop": list(f.ffeqop),
                "confdelsetcols": None if f.delsetcols is None else list(f.delsetcols),
            }
        )
    tables = {t.oid: t for t in s.user_tables}
    for t, c in s.checks:
        row = _check_row(c, s.ns_oid[t.schema], t.oid, 0, list(c.attnums) or None)
        parent = tables.get(t.partition_bound.parent) if t.partition_bound is not None else None
        if parent is not None and any(pc.name == c.name and not pc.no_inherit for pc in parent.checks):
            row |= {"conislocal": False, "coninhcount": 1}  # (the parent's, as a partition has it)
        out.append(row)
    out += [_check_row(c, s.ns_oid[d.schema], 0, d.oid, None) for d in s.domains for c in d.checks]
    return out


def _check_row(c: Check, namespace: int, relid: int, typid: int, conkey: list[int] | None) -> dict[str, Any]:
    """The pg_constraint row of a table's CHECK (``relid``) or a domain's (``typid``)."""
    return {
        "oid": c.oid,
        "conname": c.name,
        "connamespace": namespace,
        "contype": "c",
        "condeferrable": False,
        "condeferred": False,
        "convalidated": c.validated,
        "conrelid": relid,
        "contypid": typid,
        "conindid": 0,
        "conparentid": 0,
        "confrelid": 0,
        "confupdtype": " ",
        "confdeltype": " ",
        "confmatchtype": " ",
        "conislocal": True,
        "coninhcount": 0,
        "connoinherit": c.no_inherit,
        "conkey": conkey,
        "conbin": check_bin(c.oid),
    }


def check_definition(t: Table, c: Check, *, pretty: bool) -> str:
    """``pg_get_constraintdef`` of a CHECK constraint (ruleutils.c, CONSTRAINT_CHECK):
    ``CHECK (expr)`` with the table's current column names."""
    names = {col.attnum: quote_ident(col.name) for col in t.columns}
    text = f"CHECK ({Check.fill(c.pretty if pretty else c.expr, names)})"
    if c.no_inherit:
        text += " NO INHERIT"
    if not c.validated:
        text += " NOT VALID"
    return text


@_rows("pgc_pg_publication")
def _pg_publication(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [
        {
            "oid": p.oid,
            "pubname": p.name,
            "pubowner": s.role_oids.get(p.owner, s.owner_oid),
            "puballtables": p.all_tables,
            "pubinsert": p.insert,
            "pubupdate": p.update,
            "pubdelete": p.delete,
            "pubtruncate": p.truncate,
            "pubviaroot": p.via_root,
        }
        for p in sorted(s.catalog.publications.values(), key=lambda p: p.oid)
    ]


def _pub_members(s: CatalogSnapshot) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rels: list[dict[str, Any]] = []
    nsps: list[dict[str, Any]] = []
    seq = SYNTH_SEQ_BASE
    quals = s.quals()
    for p in sorted(s.catalog.publications.values(), key=lambda p: p.oid):
        for pt in p.tables:
            t = s.catalog.tables.get(pt.table_oid)
            if t is None:
                continue
            attrs = None
            if pt.columns is not None:
                attrs = sorted(c.attnum for c in t.columns if c.name in pt.columns)
            rels.append(
                {
                    "oid": seq,
                    "prpubid": p.oid,
                    "prrelid": t.oid,
                    "prqual": quals.get((p.oid, t.oid)),
                    "prattrs": attrs,
                }
            )
            seq += 1
        for name in p.schemas:
            if name in s.ns_oid:
                nsps.append({"oid": seq, "pnpubid": p.oid, "pnnspid": s.ns_oid[name]})
                seq += 1
    return rels, nsps


@_rows("pgc_pg_publication_rel")
def _pg_publication_rel(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return _pub_members(s)[0]


@_rows("pgc_pg_publication_namespace")
def _pg_publication_namespace(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return _pub_members(s)[1]


def _partition_option(cat: Catalog, chosen: list[Table], via_root: bool, all_tables: bool) -> list[Table]:
    """A publication's tables as PostgreSQL 15 lists them: without
    ``publish_via_partition_root`` a partitioned table stands for its leaf partitions,
    with it a partition of a listed (or, for ALL TABLES, any) table is left out."""
    out: dict[int, Table] = {}
    listed = {t.oid for t in chosen}
    for t in chosen:
        if via_root:  # (filter_partitions: a partition of a listed table goes as that table)
            if not (t.partition_bound is not None and (all_tables or any(a.oid in listed for a in cat.ancestors(t)))):
                out.setdefault(t.oid, t)
        elif t.partition_key is None:
            out.setdefault(t.oid, t)
        elif not all_tables:
            for leaf in sorted((x for x in cat.inheritors(t) if x.partition_key is None), key=lambda x: x.oid):
                out.setdefault(leaf.oid, leaf)
    return list(out.values())


@_rows("pgc_pg_publication_tables")
def _pg_publication_tables(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    for pubname, t, attrs, qual in s.publication_tables():
        names = {c.attnum: c.name for c in t.columns}
        out.append(
            {
                "pubname": pubname,
                "schemaname": t.schema,
                "tablename": t.name,
                "attnames": [names[a] for a in (attrs or sorted(names))],
                "rowfilter": qual,
            }
        )
    return out


def _authid_rows(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    for r in s.server.roles:
        out.append(
            {
                "oid": s.role_oids[r.name],
                "rolname": r.name,
                "rolsuper": r.superuser,
                "rolinherit": r.inherit,
                "rolcreaterole": r.createrole,
                "rolcreatedb": r.createdb,
                "rolcanlogin": r.login,
                "rolreplication": r.replication,
                "rolbypassrls": r.bypassrls,
                "rolconnlimit": r.connlimit,
            }
        )
    for oid, name in data.PREDEFINED_ROLES:
        out.append(
            {
                "oid": oid,
                "rolname": name,
                "rolsuper": False,
                "rolinherit": True,
                "rolcreaterole": False,
                "rolcreatedb": False,
                "rolcanlogin": False,
                "rolreplication": False,
                "rolbypassrls": False,
                "rolconnlimit": -1,
            }
        )
    return out


@_rows("pgc_pg_authid")
def _pg_authid(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return _authid_rows(s)


@_rows("pgc_pg_roles")
def _pg_roles(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [dict(r, rolpassword="********") for r in _authid_rows(s)]


def _user_rows(s: CatalogSnapshot, passwd: str | None) -> list[dict[str, Any]]:
    return [
        {
            "usename": r["rolname"],
            "usesysid": r["oid"],
            "usecreatedb": r["rolcreatedb"],
            "usesuper": r["rolsuper"],
            "userepl": r["rolreplication"],
            "usebypassrls": r["rolbypassrls"],
            "passwd": passwd,
        }
        for r in _authid_rows(s)
        if r["rolcanlogin"]
    ]


@_rows("pgc_pg_user")
def _pg_user(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return _user_rows(s, "********")


@_rows("pgc_pg_shadow")
def _pg_shadow(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return _user_rows(s, None)


#: OIDs of pg_default_acl rows (the lake keeps the entries by key, not by OID).
_DEFAULT_ACL_OID_BASE = 0xF7000000


@_rows("pgc_pg_default_acl")
def _pg_default_acl(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    for i, (key, acl) in enumerate(sorted(s.catalog.default_acls.items())):
        role, ns, objtype = key.split(":")
        out.append({
            "oid": _DEFAULT_ACL_OID_BASE + i,
            "defaclrole": int(role), "defaclnamespace": int(ns), "defaclobjtype": objtype,
            "defaclacl": privileges.acl_text(acl, s.role_names),
        })  # fmt: skip
    return out


@_rows("pgc_pg_auth_members")
def _pg_auth_members(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = [
        {"roleid": r, "member": m, "grantor": BOOTSTRAP_SUPERUSER_OID, "admin_option": a}
        for r, m, a in data.PREDEFINED_AUTH_MEMBERS
    ]
    oids = s.all_role_oids
    for r in s.server.roles:
        for role, grantor, admin in r.member_of:
            if role in oids and r.name in oids:
                out.append({"roleid": oids[role], "member": oids[r.name], "grantor": oids.get(grantor, BOOTSTRAP_SUPERUSER_OID), "admin_option": admin})
    return out




def _encoding_id(name: str) -> int:
    return next((i for i, n in data.ENCODINGS if n == name), 6)


@_rows("pgc_pg_database")
def _pg_database(s: CatalogSnapshot) -> list[dict[str, Any]]:
    owner = next(iter(s.role_oids), "postgres")
    acl = ["=c/" + quote_ident(owner), f"{quote_ident(owner)}=CTc/{quote_ident(owner)}"]
    base = {
        "datdba": s.owner_oid,
        "encoding": _encoding_id(s.server.encoding),
        "datlocprovider": "c",
        "datconnlimit": -1,
        "datfrozenxid": 716,
        "datminmxid": 1,
        "dattablespace": 1663,
        "datcollate": s.server.lc_collate,
        "datctype": s.server.lc_ctype,
    }
    out = [dict(base, oid=privileges.DATABASE_OID, datname=s.server.database, datistemplate=False, datallowconn=True, datacl=s.acl_of(privileges.DATABASE_OID))]
    if s.server.template_databases:
        out.append(
            dict(
                base, oid=1, datname="template1", datistemplate=True, datallowconn=True, datacl=acl
            )
        )
        out.append(
            dict(
                base, oid=4, datname="template0", datistemplate=True, datallowconn=False, datacl=acl
            )
        )
    return out


@_rows("pgc_pg_tablespace")
def _pg_tablespace(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [
        {"oid": 1663, "spcname": "pg_default", "spcowner": s.owner_oid},
        {"oid": 1664, "spcname": "pg_global", "spcowner": s.owner_oid},
    ]


@_rows("pgc_pg_init_privs")
def _pg_init_privs(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """The initial privileges of PostgreSQL 15's own objects (pg_dump leaves an object out
    whose ACL is still these), the bootstrap superuser as the session's owner role."""
    owner = quote_ident(next(iter(s.role_oids), "postgres"))
    return [
        {"objoid": o, "classoid": c, "objsubid": sub, "privtype": kind,
         "initprivs": [re.sub(r"\bpostgres\b", owner, a) for a in acl]}
        for o, c, sub, kind, acl in data.PG_INIT_PRIVS_ROWS
    ]  # fmt: skip


@_rows("pgc_pg_am")
def _pg_am(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [{"oid": o, "amname": n, "amhandler": h, "amtype": t} for o, n, h, t in data.PG_AM_ROWS]


@_rows("pgc_pg_cast")
def _pg_cast(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """PostgreSQL 15's casts (psql's \\dC; CREATE CAST is refused, so there are no others)."""
    return _casts()


@functools.cache
def _casts() -> list[dict[str, Any]]:
    cols = [c for c, _ in data.CATALOG_COLUMNS["pg_cast"][2]]
    return [dict(zip(cols, r, strict=True)) for r in pg_cast_data.PG_CAST_ROWS]


@_rows("pgc_pg_collation")
def _pg_collation(s: CatalogSnapshot) -> list[dict[str, Any]]:
    keys = (
        "oid",
        "collname",
        "collnamespace",
        "collprovider",
        "collisdeterministic",
        "collencoding",
        "collcollate",
        "collctype",
        "colliculocale",
        "collversion",
    )
    return [dict(zip(keys, r, strict=True), collowner=s.owner_oid) for r in data.PG_COLLATION_ROWS]


@_rows("pgc_pg_language")
def _pg_language(s: CatalogSnapshot) -> list[dict[str, Any]]:
    keys = (
        "oid",
        "lanname",
        "lanispl",
        "lanpltrusted",
        "lanplcallfoid",
        "laninline",
        "lanvalidator",
    )
    return [dict(zip(keys, r, strict=True), lanowner=s.owner_oid) for r in data.PG_LANGUAGE_ROWS]


@_rows("pgc_pg_range")
def _pg_range(s: CatalogSnapshot) -> list[dict[str, Any]]:
    keys = (
        "rngtypid",
        "rngsubtype",
        "rngmultitypid",
        "rngcollation",
        "rngsubopc",
        "rngcanonical",
        "rngsubdiff",
    )
    return [dict(zip(keys, r, strict=True)) for r in data.PG_RANGE_ROWS]


@_rows("pgc_pg_opclass")
def _pg_opclass(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [
        {
            "oid": oid,
            "opcmethod": method,
            "opcname": name,
            "opcnamespace": PG_CATALOG_OID,
            "opcowner": s.owner_oid,
            "opcfamily": fam,
            "opcintype": intype,
            "opcdefault": default,
            "opckeytype": 0,
        }
        for method, default, rows in (
            (BTREE_AM_OID, True, data.BTREE_OPCLASSES), (BTREE_AM_OID, False, _BTREE_OTHER_OPCLASSES),
            (HASH_AM_OID, False, _HASH_PATTERN_OPCLASSES),
        )
        for oid, name, intype, fam in rows
    ]


@_rows("pgc_pg_proc")
def _pg_proc(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """PostgreSQL 15's functions (all of them: pg_proc lists what PostgreSQL has, whether
    or not a call of it is served) and the user's."""

    return _builtin_procs(quote_ident(next(iter(s.role_oids), "postgres"))) + [
        sql_functions.pg_proc_row(fn, s.ns_oid[fn.schema], s.owner_of(fn.oid), s.acl_of(fn.oid)) for fn in s.functions
    ]


@functools.lru_cache(maxsize=4)
def _builtin_procs(superuser: str) -> list[dict[str, Any]]:
    """pg_proc's rows of PostgreSQL 15's own functions, their ACLs naming the bootstrap
    superuser as the proxy calls it (initdb's ``postgres``)."""
    n = len(data.PG_PROC_COLUMNS)
    at = data.PG_PROC_COLUMNS.index("proacl")
    out = []
    for r in pg_proc_data.PG_PROC_ROWS:
        row = dict(zip(data.PG_PROC_COLUMNS, r[:n], strict=True))
        if r[at] is not None and superuser != "postgres":
            row["proacl"] = [re.sub(r"\bpostgres\b", superuser, a) for a in r[at]]
        out.append(row)
    return out


#: plpgsql is installed in every PostgreSQL database (psql \dx lists it).
PLPGSQL_EXTENSION_OID = 13559


@_rows("pgc_pg_extension")
def _pg_extension(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [
        {
            "oid": PLPGSQL_EXTENSION_OID,
            "extname": "plpgsql",
            "extowner": s.owner_oid,
            "extnamespace": PG_CATALOG_OID,
            "extrelocatable": False,
            "extversion": "1.0",
        }
    ]


_NAMESPACE_DESCRIPTIONS = {
    "pg_toast": "reserved schema for TOAST tables",
    "pg_catalog": "system catalog schema",
    "public": "standard public schema",
}


def _commentable(s: CatalogSnapshot) -> set[tuple[int, int]]:
    """(classoid, objoid) of the user objects a comment may be on (a dropped one's stays
    in the catalog but shows nowhere)."""
    pg_class = PG_CATALOG["pg_class"].oid
    out = {(pg_class, r.oid) for r in (*s.user_tables, *s.views, *s.sequences)}
    out |= {(pg_class, ix.oid) for ix in s.indexes}
    out |= {(PG_CATALOG["pg_constraint"].oid, ix.constraint) for ix in s.indexes if ix.constraint}
    out |= {(PG_CATALOG["pg_constraint"].oid, f.fk.oid) for f in s.foreign_keys}
    out |= {(PG_CATALOG["pg_constraint"].oid, c.oid) for _, c in s.checks}
    out |= {(PG_CATALOG["pg_namespace"].oid, oid) for oid, _ in s.namespaces}
    out |= {(PG_CATALOG["pg_type"].oid, d.oid) for d in [*s.domains, *s.enums, *s.composites]}
    out |= {(PG_CATALOG["pg_constraint"].oid, c.oid) for d in s.domains for c in d.checks}
    out |= {(PG_CATALOG["pg_publication"].oid, p.oid) for p in s.catalog.publications.values()}
    return out


@_rows("pgc_pg_description")
def _pg_description(s: CatalogSnapshot) -> list[dict[str, Any]]:
    nsp_class = PG_CATALOG["pg_namespace"].oid
    out = [
        {
            "objoid": PLPGSQL_EXTENSION_OID,
            "classoid": PG_CATALOG["pg_extension"].oid,
            "objsubid": 0,
            "description": "PL/pgSQL procedural language",
        }
    ]
    proc_class = PG_CATALOG["pg_proc"].oid
    out += [
        {"objoid": oid, "classoid": proc_class, "objsubid": 0, "description": text}
        for oid, text in pg_proc_data.PG_PROC_DESCRIPTIONS.items()
    ]
    comments = s.catalog.comments
    live = _commentable(s)
    for key, text in sorted(comments.items()):
        classoid, objoid, subid = (int(x) for x in key.split(":"))
        if (classoid, objoid) in live:
            out.append(
                {"objoid": objoid, "classoid": classoid, "objsubid": subid, "description": text}
            )
    for oid, name in s.namespaces:
        if f"{nsp_class}:{oid}:0" in comments:
            continue  # (COMMENT ON SCHEMA replaced its built-in text)
        if name in _NAMESPACE_DESCRIPTIONS:
            out.append(
                {
                    "objoid": oid,
                    "classoid": nsp_class,
                    "objsubid": 0,
                    "description": _NAMESPACE_DESCRIPTIONS[name],
                }
            )
    return out


@_rows("pgc_pg_shdescription")
def _pg_shdescription(s: CatalogSnapshot) -> list[dict[str, Any]]:
    db_class = PG_CATALOG["pg_database"].oid
    texts = (
        {5: "default administrative connection database"} if s.server.database == "postgres" else {}
    )
    if s.server.template_databases:
        texts.update({1: "default template for new databases", 4: "unmodifiable empty database"})
    authid = PG_CATALOG["pg_authid"].oid
    return [
        {"objoid": oid, "classoid": db_class, "description": text} for oid, text in texts.items()
    ] + [
        {"objoid": s.role_oids[r.name], "classoid": authid, "description": r.comment}
        for r in s.server.roles
        if r.comment is not None
    ]


@_rows("pgc_pg_tables")
def _pg_tables(s: CatalogSnapshot) -> list[dict[str, Any]]:
    owner = next(iter(s.role_oids), "postgres")
    out = [
        {
            "schemaname": "pg_catalog",
            "tablename": d.name,
            "tableowner": owner,
            "tablespace": "pg_global" if d.name in _SHARED_CATALOGS else None,
            "hasindexes": True,
            "hasrules": False,
            "hastriggers": False,
            "rowsecurity": False,
        }
        for d in PG_CATALOG.values()
        if d.relkind == "r"
    ]
    has_index = {ix.table.oid for ix in s.indexes}
    for t in s.user_tables:
        out.append(
            {
                "schemaname": t.schema,
                "tablename": t.name,
                "tableowner": s.owner_name(t.oid),
                "tablespace": None,
                "hasindexes": t.oid in has_index,
                "hasrules": False,
                "hastriggers": t.oid in s.triggered,
                "rowsecurity": False,
            }
        )
    return out


_ORDERING = {0: "", 1: " DESC NULLS LAST", 2: " NULLS FIRST", 3: " DESC"}


def indexdef(ix: _Index, column: int = 0, *, qualify: bool = True) -> str:
    """``pg_get_indexdef(oid, column, pretty)``: pretty output qualifies only invisible
    tables; a column's own text carries no ordering, as PostgreSQL's. Expressions print
    pretty with ``qualify`` off (psql's pretty form)."""
    pretty = not qualify
    names = {c.attnum: quote_ident(c.name) for c in ix.table.columns}
    if column > 0:
        if column > len(ix.all_columns):
            return ""
        e = ix.expression(column - 1)
        if e is None:
            return quote_ident(ix.all_columns[column - 1])
        text = Check.fill(e.pretty if pretty else e.expr, names)
        return text if _function_like(e) else f"({text})"
    options = ix.options or (0,) * len(ix.columns)
    classes = ix.opclasses or ("",) * len(ix.columns)
    keys = []
    for i, c in enumerate(ix.columns):
        e = ix.expression(i)
        if e is None:
            keys.append(quote_ident(c))
        else:  # (a function call as it is, anything else in parentheses, as pg_get_indexdef)
            text = Check.fill(e.pretty if pretty else e.expr, names)
            keys.append(text if _function_like(e) else f"({text})")
    cols = ", ".join(key + (f" {k}" if k else "") + _ORDERING[o & 3] for key, o, k in zip(keys, options, classes, strict=True))
    rel = quote_ident(ix.table.name)
    if qualify:
        rel = f"{quote_ident(ix.table.schema)}.{rel}"
    text = f"CREATE {'UNIQUE ' if ix.unique else ''}INDEX {quote_ident(ix.name)} ON {rel} USING {ix.method} ({cols})"
    if ix.include:
        text += " INCLUDE (" + ", ".join(quote_ident(c) for c in ix.include) + ")"
    if ix.nulls_not_distinct:
        text += " NULLS NOT DISTINCT"
    if ix.predicate is not None:
        text += " WHERE " + Check.fill(ix.predicate.pretty if pretty else ix.predicate.expr, names)
    return text


def _function_like(e: IndexExpr) -> bool:
    """looks_like_function: an index expression that is a function call prints bare."""
    return e.name != "expr"


def constraintdef(ix: _Index) -> str:
    """``pg_get_constraintdef`` of a primary key or UNIQUE constraint."""
    text = "PRIMARY KEY" if ix.primary else "UNIQUE"
    if ix.nulls_not_distinct:
        text += " NULLS NOT DISTINCT"
    text += " (" + ", ".join(quote_ident(c) for c in ix.columns) + ")"
    if ix.include:
        text += " INCLUDE (" + ", ".join(quote_ident(c) for c in ix.include) + ")"
    return text


@_rows("pgc_pg_indexes")
def _pg_indexes(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [
        {
            "schemaname": ix.table.schema,
            "tablename": ix.table.name,
            "indexname": ix.name,
            "tablespace": None,
            "indexdef": indexdef(ix),
        }
        for ix in s.indexes
    ]


@_rows("pgc_pg_stat_user_tables")
def _pg_stat_user_tables(s: CatalogSnapshot) -> list[dict[str, Any]]:
    zero = dict.fromkeys(
        (
            "seq_scan",
            "seq_tup_read",
            "n_tup_ins",
            "n_tup_upd",
            "n_tup_del",
            "n_tup_hot_upd",
            "n_live_tup",
            "n_dead_tup",
            "n_mod_since_analyze",
            "n_ins_since_vacuum",
            "vacuum_count",
            "autovacuum_count",
            "analyze_count",
            "autoanalyze_count",
        ),
        0,
    )
    return [dict(zero, relid=t.oid, schemaname=t.schema, relname=t.name) for t in s.user_tables]


@_rows("pgc_pg_statio_user_tables")
def _pg_statio_user_tables(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [
        {
            "relid": t.oid,
            "schemaname": t.schema,
            "relname": t.name,
            "heap_blks_read": 0,
            "heap_blks_hit": 0,
        }
        for t in s.user_tables
    ]


@_rows("pgc_pg_timezone_names")
def _pg_timezone_names(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """PostgreSQL 15's zone names, each with its abbreviation, offset and DST flag now
    (from the same system tz database PostgreSQL reads)."""
    import datetime
    import zoneinfo

    now = datetime.datetime.now(datetime.UTC)
    out = []
    for name in data.TIMEZONE_NAMES:
        try:
            zone = zoneinfo.ZoneInfo(name)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):  # (not in this machine's tz database)
            continue
        local = now.astimezone(zone)
        offset = local.utcoffset() or datetime.timedelta()
        out.append({
            "name": name,
            "abbrev": local.tzname(),
            "utc_offset": (0, 0, offset // datetime.timedelta(microseconds=1) * 1000),
            "is_dst": bool(local.dst()),
        })  # fmt: skip
    return out


# -- information_schema ------------------------------------------------------------------------


@_rows("pgc_is_schemata")
def _is_schemata(s: CatalogSnapshot) -> list[dict[str, Any]]:
    owner = next(iter(s.role_oids), "postgres")
    return [
        {
            "catalog_name": s.server.database,
            "schema_name": name,
            "schema_owner": "pg_database_owner" if name == "public" else owner,
        }
        for _oid, name in sorted(s.namespaces, key=lambda x: x[1])
    ]


@_rows("pgc_is_tables")
def _is_tables(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [
        {
            "table_catalog": s.server.database,
            "table_schema": t.schema,
            "table_name": t.name,
            "table_type": "BASE TABLE",
            "is_insertable_into": "YES",
            "is_typed": "NO",
        }
        for t in s.user_tables
    ] + [
        {
            "table_catalog": s.server.database,
            "table_schema": v.schema,
            "table_name": v.name,
            "table_type": "VIEW",
            "is_insertable_into": "YES" if view_updatability(s.catalog, v).insertable else "NO",
            "is_typed": "NO",
        }
        for v in s.views
    ]


@_rows("pgc_is_views")
def _is_views(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    for v in s.views:
        u = view_updatability(s.catalog, v)
        out.append(
            {
                "table_catalog": s.server.database,
                "table_schema": v.schema,
                "table_name": v.name,
                "view_definition": v.definition,
                "check_option": "NONE",
                "is_updatable": "YES" if u.updatable else "NO",
                "is_insertable_into": "YES" if u.insertable else "NO",
                "is_trigger_updatable": "NO",
                "is_trigger_deletable": "NO",
                "is_trigger_insertable_into": "NO",
            }
        )
    return out


@_rows("pgc_pg_views")
def _pg_views(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [
        {"schemaname": v.schema, "viewname": v.name, "viewowner": s.owner_name(v.oid), "definition": v.definition}
        for v in s.views
    ]


def _is_domain_columns(s: CatalogSnapshot, ct: ColumnType) -> dict[str, Any]:
    """information_schema.columns of a column declared with a domain: the domain, and as
    its ``udt`` the type the domain is over (USER-DEFINED when that is a domain too)."""
    d = s.catalog.domains.get(ct.domain) if ct.domain else None
    if d is None:
        return {}
    out: dict[str, Any] = {"domain_catalog": s.server.database, "domain_schema": d.schema, "domain_name": d.name}
    parent = s.catalog.domains.get(d.parent) if d.parent else None
    if parent is not None:
        out.update(data_type="USER-DEFINED", udt_schema=parent.schema, udt_name=parent.name)
    return out


def _is_enum_columns(s: CatalogSnapshot, ct: ColumnType) -> dict[str, Any]:
    """information_schema.columns of a column of an enum (or of a domain over one): the
    enum as its ``udt``, USER-DEFINED."""
    en = s.catalog.enum_of(ct)
    if en is None:
        return {}
    return {
        "data_type": "ARRAY" if ct.is_array and not ct.domain else "USER-DEFINED",
        "udt_schema": en.schema,
        "udt_name": ("_" if ct.is_array else "") + en.name,
    }


def _is_data_type(ct: ColumnType) -> str:
    if ct.is_array:
        return "ARRAY"
    name = format_type(ct.base.oid, -1) or ""
    return {"bpchar": "character", "jsonb": "jsonb"}.get(name, name)


def _view_column(num: int, vc: ViewColumn) -> Column | None:
    """A view's column as a lake column, for information_schema (None: a type the lake
    does not know: left out, see docs)."""
    try:
        ct = type_by_oid(vc.type_oid)
    except UnknownTypeError:
        return None
    return Column(num, vc.name, ColumnType(ct.base, vc.typmod, ct.is_array))


@_rows("pgc_is_columns")
def _is_columns(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    members: list[tuple[Table | View, list[Column], frozenset[str] | None]] = [
        (t, sorted(t.columns, key=lambda c: c.attnum), None) for t in s.user_tables
    ]
    for v in s.views:
        cols = [_view_column(i, vc) for i, vc in enumerate(v.columns, start=1)]
        members.append(
            (v, [c for c in cols if c is not None], view_updatability(s.catalog, v).columns)
        )
    for t, tcols, updatable in members:
        for c in tcols:
            ct = c.type
            row: dict[str, Any] = {
                "table_catalog": s.server.database,
                "table_schema": t.schema,
                "table_name": t.name,
                "column_name": c.name,
                "ordinal_position": c.attnum,
                "is_nullable": "NO" if c.not_null else "YES",
                "data_type": _is_data_type(ct),
                "udt_catalog": s.server.database,
                "udt_schema": "pg_catalog",
                "udt_name": ("_" if ct.is_array else "") + ct.base.name,
                **_is_enum_columns(s, ct),
                **_is_domain_columns(s, ct),
                "dtd_identifier": str(c.attnum),
                "column_default": _shown_default(s, c.default.expr, c.default.sequence, c.type)
                if c.default is not None and not c.identity
                else None,
                "is_self_referencing": "NO",
                "is_identity": "YES" if c.identity else "NO",
                "is_generated": "ALWAYS" if getattr(c, "generation", None) is not None else "NEVER",
                "generation_expression": _generation_text(t, c),
                "is_updatable": "YES" if updatable is None or c.name in updatable else "NO",
            }
            if c.identity and c.default is not None:
                sq = s.catalog.sequences.get(c.default.sequence)
                if sq is not None:
                    row.update(
                        identity_generation="ALWAYS" if c.identity == "a" else "BY DEFAULT",
                        identity_start=str(sq.start),
                        identity_increment=str(sq.increment),
                        identity_maximum=str(sq.max),
                        identity_minimum=str(sq.min),
                    )
                    row["identity_cycle"] = "YES" if sq.cycle else "NO"
            else:
                row["identity_cycle"] = "NO"
            if not ct.is_array and ct.base.name in ("varchar", "bpchar") and ct.typmod >= 4:
                row["character_maximum_length"] = ct.typmod - 4
                row["character_octet_length"] = (ct.typmod - 4) * 4
            elif not ct.is_array and ct.base.name in ("varchar", "bpchar", "text"):
                row["character_octet_length"] = 1073741824
            ps = ct.numeric_precision_scale
            if not ct.is_array and ct.base.name in ("int2", "int4", "int8"):
                row.update(
                    numeric_precision={"int2": 16, "int4": 32, "int8": 64}[ct.base.name],
                    numeric_precision_radix=2,
                    numeric_scale=0,
                )
            elif not ct.is_array and ct.base.name in ("float4", "float8"):
                row.update(
                    numeric_precision=24 if ct.base.name == "float4" else 53,
                    numeric_precision_radix=2,
                )
            elif not ct.is_array and ct.base.name == "numeric":
                row["numeric_precision_radix"] = 10
                if ps is not None:
                    row.update(numeric_precision=ps[0], numeric_scale=ps[1])
            if not ct.is_array and ct.base.name in ("date",):
                row["datetime_precision"] = 0
            elif not ct.is_array and ct.base.name in (
                "time",
                "timestamp",
                "timestamptz",
                "interval",
            ):
                row["datetime_precision"] = ct.typmod if ct.typmod >= 0 else 6
            out.append(row)
    return out


@_rows("pgc_is_table_constraints")
def _is_table_constraints(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """PostgreSQL 15's view: keys, NOT NULL columns (as CHECK) and foreign keys."""

    def row(t: Table, name: str, kind: str, nulls_distinct: str | None = None, deferrable: bool = False, deferred: bool = False) -> dict[str, Any]:
        return {
            "constraint_catalog": s.server.database,
            "constraint_schema": t.schema,
            "constraint_name": name,
            "table_catalog": s.server.database,
            "table_schema": t.schema,
            "table_name": t.name,
            "constraint_type": kind,
            "is_deferrable": "YES" if deferrable else "NO",
            "initially_deferred": "YES" if deferred else "NO",
            "enforced": "YES",
            "nulls_distinct": nulls_distinct,
        }

    out = []
    for ix in s.indexes:
        if ix.constraint:
            # (the view's CASE has no branch for a primary key)
            distinct = None if ix.primary else "NO" if ix.nulls_not_distinct else "YES"
            out.append(row(ix.table, ix.name, "PRIMARY KEY" if ix.primary else "UNIQUE", distinct))
    for t in s.user_tables:  # every NOT NULL column is a CHECK row named by OIDs
        out += [
            row(t, f"{s.ns_oid[t.schema]}_{t.oid}_{c.attnum}_not_null", "CHECK")
            for c in t.columns
            if c.not_null
        ]
    out += [row(f.table, f.fk.name, "FOREIGN KEY", None, f.fk.deferrable, f.fk.initially_deferred) for f in s.foreign_keys]
    out += [row(t, c.name, "CHECK") for t, c in s.checks]
    return out


@_rows("pgc_is_check_constraints")
def _is_check_constraints(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """PostgreSQL 15's view: each CHECK constraint's ``pg_get_constraintdef`` from its
    seventh character, and every NOT NULL column as ``col IS NOT NULL`` named by OIDs."""
    out = [
        {
            "constraint_catalog": s.server.database,
            "constraint_schema": t.schema,
            "constraint_name": c.name,
            "check_clause": check_definition(t, c, pretty=False)[6:],
        }
        for t, c in s.checks
    ]
    for t in s.user_tables:
        for col in t.columns:
            if col.not_null:
                out.append(
                    {
                        "constraint_catalog": s.server.database,
                        "constraint_schema": t.schema,
                        "constraint_name": f"{s.ns_oid[t.schema]}_{t.oid}_{col.attnum}_not_null",
                        "check_clause": f"{col.name} IS NOT NULL",
                    }
                )
    return out


@_rows("pgc_is_key_column_usage")
def _is_key_column_usage(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    for ix in s.indexes:
        if ix.constraint:
            t = ix.table
            for pos, col in enumerate(ix.columns, start=1):
                out.append(
                    {
                        "constraint_catalog": s.server.database,
                        "constraint_schema": t.schema,
                        "constraint_name": ix.name,
                        "table_catalog": s.server.database,
                        "table_schema": t.schema,
                        "table_name": t.name,
                        "column_name": col,
                        "ordinal_position": pos,
                    }
                )
    index_columns = {ix.oid: ix.all_columns for ix in s.indexes}
    for f in s.foreign_keys:
        keyed = index_columns.get(f.index, ())
        for pos, (col, ref_col) in enumerate(
            zip(f.fk.columns, f.ref_columns, strict=True), start=1
        ):
            out.append(
                {
                    "constraint_catalog": s.server.database,
                    "constraint_schema": f.table.schema,
                    "constraint_name": f.fk.name,
                    "table_catalog": s.server.database,
                    "table_schema": f.table.schema,
                    "table_name": f.table.name,
                    "column_name": col,
                    "ordinal_position": pos,
                    # _pg_index_position(conindid, confkey[n])
                    "position_in_unique_constraint": keyed.index(ref_col) + 1
                    if ref_col in keyed
                    else None,
                }
            )
    return out


@_rows("pgc_is_referential_constraints")
def _is_referential_constraints(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """One row per foreign key; the unique constraint is the one owning the referenced
    index (none for a bare unique index: the view's pg_depend join finds nothing)."""
    owner = {ix.oid: ix for ix in s.indexes if ix.constraint}
    out = []
    for f in s.foreign_keys:
        unique = owner.get(f.index)
        out.append(
            {
                "constraint_catalog": s.server.database,
                "constraint_schema": f.table.schema,
                "constraint_name": f.fk.name,
                "unique_constraint_catalog": s.server.database if unique else None,
                "unique_constraint_schema": unique.table.schema if unique else None,
                "unique_constraint_name": unique.name if unique else None,
                "match_option": "FULL" if f.fk.match_full else "NONE",
                "update_rule": _FK_RULES[f.fk.on_update],
                "delete_rule": _FK_RULES[f.fk.on_delete],
            }
        )
    return out


_FK_RULES = {"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}


@_rows("pgc_is_constraint_column_usage")
def _is_constraint_column_usage(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """The columns a constraint uses: a key's own, a foreign key's referenced ones."""
    out = []
    for ix in s.indexes:
        if ix.constraint:
            for col in ix.columns:
                out.append(_column_usage(s, ix.table, col, ix.table.schema, ix.name))
    for f in s.foreign_keys:
        for col in f.ref_columns:
            out.append(_column_usage(s, f.ref, col, f.table.schema, f.fk.name))
    return out


def _column_usage(
    s: CatalogSnapshot, t: Table, col: str, con_schema: str, con: str
) -> dict[str, Any]:
    return {
        "table_catalog": s.server.database,
        "table_schema": t.schema,
        "table_name": t.name,
        "column_name": col,
        "constraint_catalog": s.server.database,
        "constraint_schema": con_schema,
        "constraint_name": con,
    }


@_rows("pgc_is_constraint_table_usage")
def _is_constraint_table_usage(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """The table a constraint uses: a key's own, a foreign key's referenced one."""
    uses = [(ix.table, ix.table.schema, ix.name) for ix in s.indexes if ix.constraint]
    uses += [(f.ref, f.table.schema, f.fk.name) for f in s.foreign_keys]
    return [
        {
            "table_catalog": s.server.database,
            "table_schema": t.schema,
            "table_name": t.name,
            "constraint_catalog": s.server.database,
            "constraint_schema": con_schema,
            "constraint_name": con,
        }
        for t, con_schema, con in uses
    ]


_SEQ_TYPE_OIDS = {"int2": 21, "int4": 23, "int8": 20}


@_rows("pgc_pg_sequence")
def _pg_sequence(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [
        {
            "seqrelid": sq.oid,
            "seqtypid": _SEQ_TYPE_OIDS[sq.type],
            "seqstart": sq.start,
            "seqincrement": sq.increment,
            "seqmax": sq.max,
            "seqmin": sq.min,
            "seqcache": sq.cache,
            "seqcycle": sq.cycle,
        }
        for sq in s.sequences
    ]


@_rows("pgc_pg_depend")
def _pg_depend(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """The dependencies clients follow: a sequence on its schema, OWNED BY (``a``, what
    psql's ``\\d`` shows as "Owned by"), a column default on the sequence it names."""
    out = []
    for sq in s.sequences:
        out.append(_depend(PG_CLASS_OID, sq.oid, 0, PG_NAMESPACE_OID, s.ns_oid[sq.schema], 0, "n"))
        if sq.owned_by is not None:
            kind = "i" if sq.identity else "a"
            out.append(
                _depend(PG_CLASS_OID, sq.oid, 0, PG_CLASS_OID, sq.owned_by[0], sq.owned_by[1], kind)
            )
    for t in s.user_tables:
        for c in t.columns:
            if c.default is not None and c.default.sequence and not c.identity:
                out.append(
                    _depend(
                        PG_ATTRDEF_OID, c.default.oid, 0, PG_CLASS_OID, c.default.sequence, 0, "n"
                    )
                )
    for v in s.views:  # (a view's _RETURN rule on the view and on what it reads: pg_dump's order)
        rule = synthetic_oid(v.oid, VIEW_RULE)
        out.append(_depend(PG_REWRITE_OID, rule, 0, PG_CLASS_OID, v.oid, 0, "i"))
        out.append(_depend(PG_REWRITE_OID, rule, 0, PG_CLASS_OID, v.oid, 0, "n"))
        for dep in v.depends:
            out.append(_depend(PG_REWRITE_OID, rule, 0, PG_CLASS_OID, dep, 0, "n"))
    return out


@_rows("pgc_pg_rewrite")
def _pg_rewrite(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """Each view's ``_RETURN`` rule (its action is opaque: clients print a view by
    pg_get_viewdef)."""
    return [
        {
            "oid": synthetic_oid(v.oid, VIEW_RULE), "rulename": "_RETURN", "ev_class": v.oid, "ev_type": "1",
            "ev_enabled": "O", "is_instead": True, "ev_qual": "<>", "ev_action": f"({{QUERY :view {v.oid}}})",
        }
        for v in s.views
    ]


def _depend(
    classid: int,
    objid: int,
    objsubid: int,
    refclassid: int,
    refobjid: int,
    refobjsubid: int,
    deptype: str,
) -> dict[str, Any]:
    return {
        "classid": classid, "objid": objid, "objsubid": objsubid, "refclassid": refclassid,
        "refobjid": refobjid, "refobjsubid": refobjsubid, "deptype": deptype,
    }  # fmt: skip


_SEQ_PRECISION = {"int2": 16, "int4": 32, "int8": 64}
_SEQ_TYPE_NAMES = {"int2": "smallint", "int4": "integer", "int8": "bigint"}


@_rows("pgc_is_sequences")
def _is_sequences(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [
        {
            "sequence_catalog": s.server.database,
            "sequence_schema": sq.schema,
            "sequence_name": sq.name,
            "data_type": _SEQ_TYPE_NAMES[sq.type],
            "numeric_precision": _SEQ_PRECISION[sq.type],
            "numeric_precision_radix": 2,
            "numeric_scale": 0,
            "start_value": str(sq.start),
            "minimum_value": str(sq.min),
            "maximum_value": str(sq.max),
            "increment": str(sq.increment),
            "cycle_option": "YES" if sq.cycle else "NO",
        }
        for sq in s.sequences
        if not sq.identity  # (PostgreSQL's view leaves out an identity column's sequence)
    ]


def sequences_view(
    snap: CatalogSnapshot, counters: Callable[[Any], tuple[int, int, bool]]
) -> list[dict[str, Any]]:
    """``pg_sequences``: the definitions with each counter's last value (NULL before the
    first nextval), read when the statement runs."""
    out = []
    for sq in snap.sequences:
        last, _log, called = counters(sq)
        out.append(
            {
                "schemaname": sq.schema,
                "sequencename": sq.name,
                "sequenceowner": snap.owner_name(sq.oid),
                "data_type": _SEQ_TYPE_OIDS[sq.type],
                "start_value": sq.start,
                "min_value": sq.min,
                "max_value": sq.max,
                "increment_by": sq.increment,
                "cycle": sq.cycle,
                "cache_size": sq.cache,
                "last_value": last if called else None,
            }
        )
    return out


def _shown_default(s: CatalogSnapshot, text: str, seq: int, ctype: ColumnType | None = None) -> str:
    """A default's text with its sequence named as regclass prints it under the default
    search_path (``information_schema.columns`` is built per catalog, not per session), and
    its enum type (``ctype``'s) as format_type prints it there."""
    if TYPE_MARK in text and ctype is not None and (en := s.catalog.enum_of(ctype)) is not None:
        name = quote_ident(en.name) if en.schema == "public" else f"{quote_ident(en.schema)}.{quote_ident(en.name)}"
        text = text.replace(TYPE_MARK, name + ("[]" if ctype.is_array else ""))
    if not seq:
        return text
    sq = s.catalog.sequences.get(seq)
    if sq is None:
        return text
    name = (
        quote_ident(sq.name)
        if sq.schema == "public"
        else f"{quote_ident(sq.schema)}.{quote_ident(sq.name)}"
    )
    return text.replace(SEQUENCE_MARK, name.replace("'", "''"))


def attrdef_bin(oid: int) -> str:
    """``pg_attrdef.adbin``: PostgreSQL's is the node tree of the cooked expression, which
    clients only hand to ``pg_get_expr``; the proxy's names the row, whose texts
    ``pgc_exprs`` holds for the ``pg_get_expr`` macro."""
    return f"{{DEFAULT :adoid {oid}}}"


def _generation_text(t: Any, c: Any) -> str | None:
    """information_schema.columns.generation_expression: pg_get_expr of the generation
    expression (its columns under their names now); None for a view's column."""
    g = getattr(c, "generation", None)
    if g is None:
        return None
    return Check.fill(g.expr, {x.attnum: quote_ident(x.name) for x in t.columns})


@_rows("pgc_pg_attrdef")
def _pg_attrdef(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    for t in s.user_tables:
        for c in t.columns:
            if c.default is not None and not c.identity:
                out.append(
                    {
                        "oid": c.default.oid,
                        "adrelid": t.oid,
                        "adnum": c.attnum,
                        "adbin": attrdef_bin(c.default.oid),
                    }
                )
            elif c.generation is not None:
                out.append(
                    {
                        "oid": c.generation.oid,
                        "adrelid": t.oid,
                        "adnum": c.attnum,
                        "adbin": attrdef_bin(c.generation.oid),
                    }
                )
    return out


# -- helper tables (not PostgreSQL relations; read by the macros) -------------------------------

HelperFn = Callable[[CatalogSnapshot], list[dict[str, Any]]]
_HELPER_TABLES: dict[str, tuple[pa.Schema, HelperFn]] = {}


def _helper(name: str, schema: pa.Schema) -> Callable[[HelperFn], HelperFn]:
    def deco(fn: HelperFn) -> HelperFn:
        _HELPER_TABLES[name] = (schema, fn)
        return fn

    return deco


@_helper("pgc_role_closure", pa.schema([("member", pa.uint32()), ("role", pa.uint32()), ("inherited", pa.bool_())]))
def _role_closure(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """Each role and the roles it is a member of, directly or not (itself included):
    ``inherited`` when its privileges reach it (through INHERIT roles only), as
    has_privs_of_role; every row is is_member_of_role's. The database's owner is
    pg_database_owner's member."""
    oids = s.all_role_oids
    ups: dict[str, list[str]] = {}
    inherit = {r.name: r.inherit for r in s.server.roles}
    names = {oid: name for name, oid in oids.items()}
    for r in s.server.roles:
        ups[r.name] = [m[0] for m in r.member_of]
    for r, m, _a in data.PREDEFINED_AUTH_MEMBERS:
        ups.setdefault(names[m], []).append(names[r])
    owner = names.get(s.owner_oid)
    if owner is not None:
        ups.setdefault(owner, []).append("pg_database_owner")
    out = []
    for name, oid in oids.items():
        for inheriting in (True, False):
            seen = closure(name, lambda cur, i=inheriting: [] if i and not inherit.get(cur, True) else ups.get(cur, ()))
            out += [{"member": oid, "role": oids[u], "inherited": inheriting} for u in sorted(seen) if u in oids]
    return out


@_helper(
    "pgc_privileges",
    pa.schema([("oid", pa.uint32()), ("grantee", pa.uint32()), ("privs", pa.string()), ("grantable", pa.string()), ("kind", pa.string())]),
)
def _privileges(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """Each relation's and schema's ACL with the defaults filled in (its owner holds
    everything; the catalog's relations are PUBLIC's to read, schema public to use) and
    pg_database_owner as the database's owner: what has_*_privilege answers from."""
    kinds = [(t.oid, "table") for t in s.user_tables] + [(v.oid, "view") for v in s.views]
    kinds += [(q.oid, "sequence") for q in s.sequences] + [(oid, "schema") for name, oid in s.catalog.schemas.items()]
    kinds += [(fn.oid, "function") for fn in s.functions]
    out = []
    for oid, kind in kinds:
        own = privileges.ownership(s.catalog, oid, s.owner_oid)
        for item in privileges.effective_acl(own, kind):
            grantee = s.owner_oid if item.grantee == PG_DATABASE_OWNER_OID else item.grantee
            out.append({"oid": oid, "grantee": grantee, "privs": item.privileges, "grantable": item.grantable, "kind": kind})
        # (aclmask: the owner holds every grant option, whatever its ACL says)
        owner = s.owner_oid if own.owner == PG_DATABASE_OWNER_OID else own.owner
        out.append({"oid": oid, "grantee": owner, "privs": "", "grantable": privileges.ALL[kind], "kind": kind})
    for d in PG_CATALOG.values():
        out.append({"oid": d.oid, "grantee": s.owner_oid, "privs": privileges.ALL["table"], "grantable": privileges.ALL["table"], "kind": "catalog"})
        out.append({"oid": d.oid, "grantee": 0, "privs": "r", "grantable": "", "kind": "catalog"})
    for item in privileges.effective_acl(privileges.ownership(s.catalog, privileges.DATABASE_OID, s.owner_oid), "database"):
        out.append({"oid": privileges.DATABASE_OID, "grantee": item.grantee, "privs": item.privileges, "grantable": item.grantable, "kind": "database"})
    out += _builtin_function_privileges(s.owner_oid)
    for template in (1, 4):  # (their ACL as initdb leaves it)
        out.append({"oid": template, "grantee": s.owner_oid, "privs": "CTc", "grantable": "CTc", "kind": "database"})
        out.append({"oid": template, "grantee": 0, "privs": "c", "grantable": "", "kind": "database"})
    for oid, _name in data.SYSTEM_NAMESPACES:
        out.append({"oid": oid, "grantee": s.owner_oid, "privs": "UC", "grantable": "UC", "kind": "schema"})
        out.append({"oid": oid, "grantee": 0, "privs": "U", "grantable": "", "kind": "schema"})
    return out


@functools.lru_cache(maxsize=4)
def _builtin_function_privileges(owner: int) -> list[dict[str, Any]]:
    """PostgreSQL's own functions' ACLs (pg_proc.proacl, NULL: PUBLIC and the bootstrap
    superuser may execute), the superuser's grant options with them."""
    at = data.PG_PROC_COLUMNS.index("proacl")
    out = []
    for r in pg_proc_data.PG_PROC_ROWS:
        items = r[at] if r[at] is not None else ["=X/postgres", "postgres=X/postgres"]
        for text in items:
            grantee, rest = text.split("=", 1)
            letters = rest.split("/", 1)[0]
            out.append({
                "oid": r[0], "grantee": owner if grantee == "postgres" else 0 if grantee == "" else None,
                "privs": letters.replace("*", ""), "grantable": "".join(c for i, c in enumerate(letters) if letters[i + 1 : i + 2] == "*"),
                "kind": "function",
            })  # fmt: skip
        out.append({"oid": r[0], "grantee": owner, "privs": "", "grantable": "X", "kind": "function"})
    return [row for row in out if row["grantee"] is not None]


@_helper(
    "pgc_column_privileges",
    pa.schema([("oid", pa.uint32()), ("attnum", pa.int32()), ("grantee", pa.uint32()), ("privs", pa.string()), ("grantable", pa.string())]),
)
def _column_privileges(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """Each table column's ACL (attacl), and the table owner's grant options on every
    column: what has_column_privilege adds to the table's privileges."""
    out = []
    for t in s.user_tables:
        own = privileges.ownership(s.catalog, t.oid, s.owner_oid)
        owner = s.owner_oid if own.owner == PG_DATABASE_OWNER_OID else own.owner
        for c in t.columns:
            for item in own.column_acl(c.attnum):
                out.append({"oid": t.oid, "attnum": c.attnum, "grantee": item.grantee, "privs": item.privileges, "grantable": item.grantable})
            out.append({"oid": t.oid, "attnum": c.attnum, "grantee": owner, "privs": "", "grantable": privileges.ALL["column"]})
    return out


@_helper("pgc_viewdefs", pa.schema([("oid", pa.uint32()), ("definition", pa.string())]))
def _viewdefs(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [{"oid": v.oid, "definition": v.definition} for v in s.views]


@_helper(
    "pgc_exprs",
    pa.schema(
        [
            ("e_bin", pa.string()),
            ("e_plain", pa.string()),
            ("e_pretty", pa.string()),
            ("e_styled", pa.bool_()),
            ("e_seq", pa.uint32()),
            ("e_type", pa.uint32()),
        ]
    ),
)
def _exprs(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """What ``pg_get_expr`` prints for each ``adbin`` (plain and pretty); ``styled``: the
    text has a date/time constant, printed in DateStyle ISO."""
    out = []
    for t in s.user_tables:
        for c in t.columns:
            d = c.default
            if d is not None and not c.identity:
                out.append(
                    {
                        "e_bin": attrdef_bin(d.oid),
                        "e_plain": d.expr,
                        "e_pretty": d.pretty,
                        "e_styled": d.styled,
                        "e_seq": d.sequence,
                        "e_type": c.type.oid if TYPE_MARK in d.expr else 0,
                    }
                )
    for t in s.user_tables:  # (a generation expression's adbin)
        names = {c.attnum: quote_ident(c.name) for c in t.columns}
        for c in t.columns:
            g = c.generation
            if g is not None:
                out.append(
                    {
                        "e_bin": attrdef_bin(g.oid),
                        "e_plain": Check.fill(g.expr, names),
                        "e_pretty": Check.fill(g.pretty, names),
                        "e_styled": False,
                        "e_seq": 0,
                        "e_type": 0,
                    }
                )
    for t, ck in s.checks:  # (pg_get_expr(conbin, conrelid): the expression alone)
        names = {c.attnum: quote_ident(c.name) for c in t.columns}
        out.append(
            {
                "e_bin": check_bin(ck.oid),
                "e_plain": Check.fill(ck.expr, names),
                "e_pretty": Check.fill(ck.pretty, names),
                "e_styled": False,
                "e_seq": 0,
            }
        )
    by_oid = {t.oid: t for t in s.user_tables}
    for t in s.user_tables:  # (relpartbound)
        b = t.partition_bound
        if b is not None and b.parent in by_oid:
            text = partition_ddl.bound_text(by_oid[b.parent], b)
            out.append({"e_bin": partbound_bin(t.oid), "e_plain": text, "e_pretty": text, "e_styled": False, "e_seq": 0})
        if b is not None and b.parent in by_oid:  # (pg_get_partition_constraintdef)
            text = partition_ddl.constraint_text(s.catalog, t, lambda ct: format_type(ct.base.oid, ct.typmod) or ct.sql_name())
            if text is not None:
                out.append({"e_bin": f"{{PARTCONSTR :relid {t.oid}}}", "e_plain": text, "e_pretty": text, "e_styled": False, "e_seq": 0})
        if t.partition_key is not None:  # (pg_get_partkeydef)
            strategy = {"r": "RANGE", "l": "LIST", "h": "HASH"}[t.partition_key.strategy]
            keys = ", ".join(
                quote_ident(c.name) if e is None else (f"({x})" if (x := partitions.expr_text(t, e, quote=True)).startswith("(") else x)
                for c, e in partitions.key_parts(t)
            )
            text = f"{strategy} ({keys})"
            out.append({"e_bin": f"{{PARTKEY :relid {t.oid}}}", "e_plain": text, "e_pretty": text, "e_styled": False, "e_seq": 0})
    for ix in s.indexes:  # (indexprs of one expression, indpred)
        names = {c.attnum: quote_ident(c.name) for c in ix.table.columns}
        exprs = [e for e in ix.expressions if e is not None]
        if len(exprs) == 1:
            out.append({"e_bin": index_exprs_bin(ix.oid), "e_plain": Check.fill(exprs[0].expr, names),
                        "e_pretty": Check.fill(exprs[0].pretty, names), "e_styled": False, "e_seq": 0})  # fmt: skip
        if ix.predicate is not None:
            out.append({"e_bin": index_pred_bin(ix.oid), "e_plain": Check.fill(ix.predicate.expr, names),
                        "e_pretty": Check.fill(ix.predicate.pretty, names), "e_styled": False, "e_seq": 0})  # fmt: skip
    for dom in s.domains:  # (typdefaultbin)
        if dom.default is not None:
            d = dom.default
            out.append({"e_bin": domain_default_bin(dom.oid), "e_plain": d.expr, "e_pretty": d.pretty, "e_styled": d.styled, "e_seq": d.sequence})
    return out


def partbound_bin(oid: int) -> str:
    """A partition's ``relpartbound``: opaque, as ``adbin``; ``pg_get_expr`` prints it."""
    return f"{{PARTITIONBOUNDSPEC :relid {oid}}}"


@_rows("pgc_pg_inherits")
def _pg_inherits(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = [
        {"inhrelid": t.oid, "inhparent": t.partition_bound.parent, "inhseqno": 1, "inhdetachpending": False}
        for t in s.user_tables
        if t.partition_bound is not None
    ]
    keys = {ix.table.oid: ix.oid for ix in s.indexes if ix.primary}
    for t in s.user_tables:  # (a partition's primary key index is attached to its parent's)
        b = t.partition_bound
        if b is not None and t.oid in keys and b.parent in keys:
            out.append({"inhrelid": keys[t.oid], "inhparent": keys[b.parent], "inhseqno": 1, "inhdetachpending": False})
    return out


@_helper("pgc_partition_ancestry", pa.schema([("relid", pa.uint32()), ("ancestor", pa.uint32()), ("depth", pa.int32())]))
def _partition_ancestry(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """Each partition, partitioned table or index of one with its ancestors (itself at
    depth 0), as ``pg_partition_ancestors`` walks pg_inherits upwards."""
    parent = {r["inhrelid"]: r["inhparent"] for r in _pg_inherits(s)}
    members = set(parent) | set(parent.values()) | {t.oid for t in s.user_tables if t.partition_key is not None}
    out = []
    for oid in members:
        depth, cur = 0, oid
        while cur is not None:
            out.append({"relid": oid, "ancestor": cur, "depth": depth})
            cur, depth = parent.get(cur), depth + 1
    return out


@_helper(
    "pgc_partition_tree",
    pa.schema([("root", pa.uint32()), ("relid", pa.uint32()), ("parentrelid", pa.uint32()), ("isleaf", pa.bool_()), ("level", pa.int32()), ("ord", pa.int32())]),
)
def _partition_tree(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """``pg_partition_tree(root)`` of every partition tree member as the root: the members
    below it in find_all_inheritors' order (breadth first, each relation's children by
    OID), with each one's parent, whether it is a leaf (not a partitioned table or
    index) and its depth below the root."""
    inherits = _pg_inherits(s)
    parent = {r["inhrelid"]: r["inhparent"] for r in inherits}
    children: dict[int, list[int]] = {}
    for r in inherits:
        children.setdefault(r["inhparent"], []).append(r["inhrelid"])
    partitioned = {t.oid for t in s.user_tables if t.partition_key is not None}
    partitioned |= {ix.oid for ix in s.indexes if ix.primary and ix.table.oid in partitioned}
    members = set(parent) | set(parent.values()) | partitioned
    out = []
    for root in members:
        order = [root]
        for rel in order:  # (grows as it goes: breadth first)
            order += sorted(children.get(rel, ()))
        for i, rel in enumerate(order):
            level, cur = 0, rel
            while cur != root:
                cur, level = parent[cur], level + 1
            out.append({"root": root, "relid": rel, "parentrelid": parent.get(rel), "isleaf": rel not in partitioned, "level": level, "ord": i})
    return out


@_rows("pgc_pg_partitioned_table")
def _pg_partitioned_table(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    defaults = {t.partition_bound.parent: t.oid for t in s.user_tables if t.partition_bound is not None and t.partition_bound.kind == "d"}
    for t in s.user_tables:
        if t.partition_key is None:
            continue
        cols = partitions.key_columns(t)
        out.append(
            {
                "partrelid": t.oid,
                "partstrat": t.partition_key.strategy,
                "partnatts": len(cols),
                "partdefid": defaults.get(t.oid, 0),
                "partattrs": list(t.partition_key.attnums),
                "partclass": [_opclass(_HASH_OPCLASS if t.partition_key.strategy == "h" else _BTREE_OPCLASS, c.type) for c in cols],
                "partcollation": [_collation_of(c.type.oid) for c in cols],
                "partexprs": f"{{PARTKEYEXPRS :relid {t.oid}}}" if t.partition_key.exprs else None,
            }
        )
    return out


def domain_default_bin(oid: int) -> str:
    """A domain's ``typdefaultbin``: opaque, as ``adbin``; ``pg_get_expr`` prints it."""
    return f"{{DOMAIN_DEFAULT :domain {oid}}}"


def check_bin(oid: int) -> str:
    """A CHECK constraint's ``conbin``: opaque, as ``adbin`` (PostgreSQL's node tree is
    internal); ``pg_get_expr`` prints the expression."""
    return f"{{CHECK :conoid {oid}}}"


@_helper(
    "pgc_gpt",
    pa.schema(
        [
            ("pubname", pa.string()),
            ("pubid", pa.uint32()),
            ("viaroot", pa.bool_()),
            ("relid", pa.uint32()),
            ("attrs", pa.list_(pa.int16())),
            ("attrs16", pa.list_(pa.int16())),
            ("qual", pa.string()),
            ("ord", pa.int32()),
        ]
    ),
)
def _gpt(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """A row per (publication, published table), in ``pg_get_publication_tables``' order:
    ``attrs`` as PostgreSQL 15 gives it (NULL without a column list), ``attrs16`` as 16
    and later give it (without a column list, every column neither dropped nor
    generated)."""
    pubs = {p.name: p for p in s.catalog.publications.values()}
    out = []
    for name, t, attrs, qual in s.publication_tables():
        every = [c.attnum for c in sorted(t.columns, key=lambda c: c.attnum) if not c.generated]
        out.append({
            "pubname": name, "pubid": pubs[name].oid, "viaroot": pubs[name].via_root, "relid": t.oid,
            "attrs": attrs, "attrs16": attrs if attrs is not None else (every or None), "qual": qual,
            "ord": len(out),
        })  # fmt: skip
    return out


@_helper(
    "pgc_typefmt",
    pa.schema([("oid", pa.uint32()), ("typmod", pa.int32()), ("fmt", pa.string())]),
)
def _typefmt(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = [{"oid": 0, "typmod": -2, "fmt": "-"}, {"oid": 0, "typmod": -1, "fmt": "-"}]
    for oid in TYPES.rows:
        out.append({"oid": oid, "typmod": -2, "fmt": TYPES.name_null[oid]})
        out.append({"oid": oid, "typmod": -1, "fmt": TYPES.name_m1[oid]})
    seen: set[tuple[int, int]] = set()
    for t in s.user_tables:
        name = _rowtype_name(t, s)
        for kind, fmt in ((ROWTYPE, name), (ROWTYPE_ARRAY, name + "[]")):
            out.append({"oid": synthetic_oid(t.oid, kind), "typmod": -2, "fmt": fmt})
            out.append({"oid": synthetic_oid(t.oid, kind), "typmod": -1, "fmt": fmt})
        for c in t.columns:
            key = (c.type.oid, c.type.typmod)
            if c.type.typmod >= 0 and key not in seen:
                seen.add(key)
                out.append({"oid": key[0], "typmod": key[1], "fmt": format_type(*key)})
    return out


@_helper(
    "pgc_user_typenames",
    pa.schema([("oid", pa.uint32()), ("name", pa.string()), ("qualified", pa.string())]),
)
def _user_typenames(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """How format_type and regtype print a domain or an enum and its array type: by name where the
    search path finds it, else schema-qualified (pg_dump's empty search_path)."""
    out = []
    for d in [*s.domains, *s.enums, *s.composites]:
        name = quote_ident(d.name)
        for oid, suffix in ((d.oid, ""), (d.array_oid, "[]")):
            out.append({"oid": oid, "name": name + suffix, "qualified": f"{quote_ident(d.schema)}.{name}{suffix}"})
    return out


def _rowtype_name(t: Table, s: CatalogSnapshot) -> str:
    return (
        quote_ident(t.name)
        if t.schema == "public"
        else f"{quote_ident(t.schema)}.{quote_ident(t.name)}"
    )


@_helper(
    "pgc_typebase",
    pa.schema([("oid", pa.uint32()), ("base", pa.string()), ("suffix", pa.string())]),
)
def _typebase(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    for oid, row in TYPES.rows.items():
        if (
            row["typelem"]
            and row["typlen"] == -1
            and row["typsubscript"] == "array_subscript_handler"
        ):
            elem = TYPES.rows.get(row["typelem"])
            out.append({"oid": oid, "base": elem["typname"] if elem else "", "suffix": "[]"})
        else:
            out.append({"oid": oid, "base": row["typname"], "suffix": ""})
    return out


_TYPE_ALIASES = {
    "int": "int4",
    "integer": "int4",
    "smallint": "int2",
    "bigint": "int8",
    "real": "float4",
    "float": "float8",
    "double precision": "float8",
    "boolean": "bool",
    "character varying": "varchar",
    "varchar": "varchar",
    "char": "bpchar",
    "character": "bpchar",
    "decimal": "numeric",
    "dec": "numeric",
    "timestamp": "timestamp",
    "timestamp without time zone": "timestamp",
    "timestamp with time zone": "timestamptz",
    "time": "time",
    "time without time zone": "time",
    "time with time zone": "timetz",
    "bit varying": "varbit",
}


@_helper("pgc_typenames", pa.schema([("name", pa.string()), ("oid", pa.uint32())]))
def _typenames(s: CatalogSnapshot) -> list[dict[str, Any]]:
    names: dict[str, int] = {}
    by_name = {row["typname"]: oid for oid, row in TYPES.rows.items()}
    for oid, row in TYPES.rows.items():
        for n in (row["typname"], TYPES.name_null[oid], TYPES.name_m1[oid]):
            names.setdefault(n, oid)
            names.setdefault(f"pg_catalog.{n}", oid)
    for alias, target in _TYPE_ALIASES.items():
        if target in by_name:
            names[alias] = by_name[target]
            names[f"pg_catalog.{alias}"] = by_name[target]
    arrays: dict[str, int] = {}
    for n, oid in names.items():
        arr = TYPES.rows[oid]["typarray"]
        if arr:
            arrays[f"{n}[]"] = arr
    names.update({k: v for k, v in arrays.items() if k not in names})
    names["char"] = by_name["bpchar"]
    names['"char"'] = by_name["char"]
    for t in s.user_tables:
        for kind, suffix in ((ROWTYPE, ""), (ROWTYPE_ARRAY, "[]")):
            names.setdefault(t.name + suffix, synthetic_oid(t.oid, kind))
            names[f"{t.schema}.{t.name}{suffix}"] = synthetic_oid(t.oid, kind)
        names.setdefault(s.array_names[synthetic_oid(t.oid, ROWTYPE)], synthetic_oid(t.oid, ROWTYPE_ARRAY))
    for d in [*s.domains, *s.enums, *s.composites]:
        for oid, suffix in ((d.oid, ""), (d.array_oid, "[]")):
            names.setdefault(d.name + suffix, oid)
            names[f"{d.schema}.{d.name}{suffix}"] = oid
        names.setdefault(s.array_names[d.oid], d.array_oid)
    return [{"name": k, "oid": v} for k, v in names.items()]


@_helper(
    "pgc_indexdefs",
    pa.schema(
        [
            ("indexrelid", pa.uint32()),
            ("colno", pa.int32()),
            ("relid", pa.uint32()),
            ("def", pa.string()),
            ("def_short", pa.string()),
        ]
    ),
)
def _indexdefs(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    for ix in s.indexes:
        for col in range(len(ix.all_columns) + 1):
            out.append(
                {
                    "indexrelid": ix.oid,
                    "colno": col,
                    "relid": ix.table.oid,
                    "def": indexdef(ix, col),
                    "def_short": indexdef(ix, col, qualify=False),
                }
            )
    return out


@_helper(
    "pgc_constraintdefs",
    pa.schema(
        [
            ("oid", pa.uint32()),
            ("def", pa.string()),
            ("def_short", pa.string()),
            ("refrel", pa.uint32()),
            ("def_pretty", pa.string()),
        ]
    ),
)
def _constraintdefs(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """Each constraint's ``pg_get_constraintdef`` text; a foreign key's twice, with its
    referenced table qualified and not, as the session's search_path decides (``refrel``)."""
    out = [
        {"oid": ix.constraint, "def": constraintdef(ix), "def_short": None, "refrel": 0}
        for ix in s.indexes
        if ix.constraint
    ]
    out += [
        {
            "oid": f.fk.oid,
            "def": f.definition(qualify=True),
            "def_short": f.definition(qualify=False),
            "refrel": f.ref.oid,
        }
        for f in s.foreign_keys
    ]
    out += [
        {
            "oid": c.oid,
            "def": check_definition(t, c, pretty=False),
            "def_short": None,
            "refrel": 0,
            "def_pretty": check_definition(t, c, pretty=True),
        }
        for t, c in s.checks
    ]
    out += [
        {
            "oid": c.oid,
            "def": domain_check_definition(d, c, pretty=False),
            "def_short": None,
            "refrel": 0,
            "def_pretty": domain_check_definition(d, c, pretty=True),
        }
        for d in s.domains
        for c in d.checks
    ]
    return out


@_helper("pgc_replident", pa.schema([("relid", pa.uint32()), ("indexrelid", pa.uint32())]))
def _replident(s: CatalogSnapshot) -> list[dict[str, Any]]:
    out = []
    for ix in s.indexes:
        t = ix.table
        if (t.replica_identity == "i" and ix.replident) or (
            t.replica_identity == "d" and ix.primary
        ):
            out.append({"relid": t.oid, "indexrelid": ix.oid})
    return out


@_helper("pgc_encodings", pa.schema([("enc", pa.int32()), ("name", pa.string())]))
def _encodings(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [{"enc": i, "name": n} for i, n in data.ENCODINGS]


@_helper("pgc_keywords", pa.schema([("word", pa.string())]))
def _keywords(s: CatalogSnapshot) -> list[dict[str, Any]]:
    return [{"word": w} for w in data.QUOTED_KEYWORDS]


_KEYWORD_CATEGORIES = {
    "U": "unreserved",
    "C": "unreserved (cannot be function or type name)",
    "T": "reserved (can be function or type name)",
    "R": "reserved",
}


@_helper(
    "pgc_pg_get_keywords",
    pa.schema(
        [
            ("word", pa.string()),
            ("catcode", pa.string()),
            ("barelabel", pa.bool_()),
            ("catdesc", pa.string()),
            ("baredesc", pa.string()),
        ]
    ),
)
def _pg_get_keywords(s: CatalogSnapshot) -> list[dict[str, Any]]:
    """``pg_get_keywords()``: PostgreSQL 15's keywords (pgjdbc's getSQLKeywords)."""
    return [
        {
            "word": w,
            "catcode": c,
            "barelabel": bare,
            "catdesc": _KEYWORD_CATEGORIES[c],
            "baredesc": "can be bare label" if bare else "requires AS",
        }
        for w, c, bare in data.PG_KEYWORDS
    ]


@_helper(
    "pgc_procdefs",
    pa.schema(
        [
            ("oid", pa.uint32()),
            ("result", pa.string()),
            ("args", pa.string()),
            ("identity_args", pa.string()),
            ("functiondef", pa.string()),
            ("standard", pa.bool_()),
        ]
    ),
)
def _procdefs(s: CatalogSnapshot) -> list[dict[str, Any]]:

    n = len(data.PG_PROC_COLUMNS)
    return [
        {"oid": r[0], "result": r[n], "args": r[n + 1], "identity_args": r[n + 2]}
        for r in pg_proc_data.PG_PROC_ROWS
    ] + [
        {
            "oid": fn.oid,
            "result": sql_functions.result_text(fn),
            "args": sql_functions.arguments_text(fn),
            "identity_args": sql_functions.identity_arguments_text(fn),
            "functiondef": sql_functions.functiondef(fn),
            "standard": fn.standard,
        }
        for fn in s.functions
    ]


# ---------------------------------------------------------------------------------------------
# session tables

SESSION_TABLES: Mapping[str, pa.Schema] = MappingProxyType(
    {
        "pgc_session": pa.schema(
            [
                ("user_name", pa.string()),
                ("session_user_name", pa.string()),
                ("database_name", pa.string()),
                ("backend_pid", pa.int32()),
                ("application_name", pa.string()),
                ("user_is_superuser", pa.bool_()),
                ("version_string", pa.string()),
                ("user_oid", pa.uint32()),
            ]
        ),
        "pgc_search_path": pa.schema(
            [
                ("pos", pa.int32()),
                ("nspname", pa.string()),
                ("nspoid", pa.uint32()),
                ("implicit", pa.bool_()),
            ]
        ),
        "pgc_settings_lookup": pa.schema([("name", pa.string()), ("setting", pa.string()), ("hidden", pa.bool_())]),
        "pgc_pg_settings": PG_CATALOG["pg_settings"].arrow_schema,
        "pgc_pg_stat_activity": PG_CATALOG["pg_stat_activity"].arrow_schema,
    }
)


def build_session_table(name: str, snap: CatalogSnapshot, session: SessionInfo) -> pa.Table:
    """A table whose rows depend on the session (who, search_path, SET values)."""
    server = snap.server
    if name == "pgc_session":
        role = server.role(session.user)
        return pa.Table.from_pylist(
            [
                {
                    "user_name": session.user,
                    "session_user_name": session.session_user or session.user,
                    "database_name": session.database,
                    "backend_pid": session.backend_pid,
                    "application_name": session.application_name,
                    "user_is_superuser": bool(role and role.superuser),
                    "version_string": server.version,
                    "user_oid": snap.role_oids.get(session.user, 0),
                }
            ],
            schema=SESSION_TABLES[name],
        )
    if name == "pgc_search_path":
        path = session.schemas_on_path(snap.ns_oid)
        rows = []
        temp = session.temp_schema
        if temp is not None and temp in snap.ns_oid and temp not in path:
            rows.append({"pos": -1, "nspname": temp, "nspoid": snap.ns_oid[temp], "implicit": True})
        explicit_catalog = "pg_catalog" in split_search_path(session.search_path)
        if not explicit_catalog:
            rows.append(
                {"pos": 0, "nspname": "pg_catalog", "nspoid": PG_CATALOG_OID, "implicit": True}
            )
        for i, nsp in enumerate(path, start=1):
            rows.append({"pos": i, "nspname": nsp, "nspoid": snap.ns_oid[nsp], "implicit": False})
        return pa.Table.from_pylist(rows, schema=SESSION_TABLES[name])
    settings = _session_settings(server, snap.base_settings, session)
    if name == "pgc_settings_lookup":
        rows = []
        for low, (value, _src) in settings.items():
            hidden = not session.read_all_settings and low in SUPERUSER_ONLY
            rows.append({"name": low, "setting": None if hidden else shown_setting(low, value), "hidden": hidden})
        return pa.Table.from_pylist(rows, schema=SESSION_TABLES[name])
    if name == "pgc_pg_settings":
        rows = []
        for low, meta in PG_SETTINGS.items():
            if not session.read_all_settings and low in SUPERUSER_ONLY:
                continue
            value, src = settings[low]
            reset = (
                session.sources[low][1] if low in session.sources else snap.base_settings[low][0]
            )
            rows.append(
                {
                    "name": meta.name,
                    "setting": value,
                    "unit": meta.unit,
                    "category": meta.category,
                    "short_desc": meta.short_desc,
                    "extra_desc": meta.extra_desc,
                    "context": meta.context,
                    "vartype": meta.vartype,
                    "source": src,
                    "min_val": meta.min_val,
                    "max_val": meta.max_val,
                    "enumvals": meta.enumvals,
                    "boot_val": meta.boot_val,
                    "reset_val": reset,
                    **_source_file(server, low, src, session),
                    "pending_restart": low in server.pending_restart,
                }
            )
        return pa.Table.from_pylist(rows, schema=SESSION_TABLES[name])
    if name == "pgc_pg_stat_activity":
        return make_table(
            "pg_stat_activity",
            [
                {
                    "datid": 5,
                    "datname": session.database,
                    "pid": session.backend_pid,
                    "usesysid": snap.role_oids.get(session.user),
                    "usename": session.user,
                    "application_name": session.application_name,
                    "client_addr": session.client_addr,
                    "state": "active",
                    "backend_type": "client backend",
                }
            ],
        )
    raise KeyError(name)


def make_table(relname: str, rows: Iterable[Mapping[str, Any]], version_num: int = 150000) -> pa.Table:
    """An Arrow table with ``pg_catalog.relname``'s columns in the claimed version (missing
    keys → NULL; keys of the view's columns in other versions are left out).

    For the server to inject rows it owns: slots (pg_replication_slots), walsenders
    (pg_stat_replication), backends (pg_stat_activity), prepared transactions.
    """
    d = catalog_relation("pg_catalog", relname, version_num)
    assert d is not None
    names = any_version_columns(relname)
    clean = []
    for r in rows:
        unknown = set(r) - names
        if unknown:
            raise KeyError(f"{relname} has no column(s) {sorted(unknown)}")
        clean.append(dict(r))
    return pa.Table.from_pylist(clean, schema=d.arrow_schema)


# ---------------------------------------------------------------------------------------------
# macros and views: SQL bodies; dependencies are the pgc_ names they mention

_MACROS: dict[str, str] = {
    # Macro parameters are substituted textually before binding, so a body must not let an
    # argument's column references bind to its own tables: every table inside is aliased
    # ``pgc_*`` and every column qualified (the rewriter qualifies the arguments).
    # session
    "pgc_current_user": "MACRO pgc_current_user() AS (SELECT pgc_s.user_name FROM pgc_session pgc_s)",
    "pgc_session_user": """MACRO pgc_session_user() AS (
        SELECT pgc_s.session_user_name FROM pgc_session pgc_s)""",
    "pgc_current_database": """MACRO pgc_current_database() AS (
        SELECT pgc_s.database_name FROM pgc_session pgc_s)""",
    "pgc_version": "MACRO pgc_version() AS (SELECT pgc_s.version_string FROM pgc_session pgc_s)",
    "pgc_pg_backend_pid": "MACRO pgc_pg_backend_pid() AS (SELECT pgc_s.backend_pid FROM pgc_session pgc_s)",
    "pgc_current_schema": """MACRO pgc_current_schema() AS (
        SELECT pgc_p.nspname FROM pgc_search_path pgc_p WHERE NOT pgc_p.implicit
        ORDER BY pgc_p.pos LIMIT 1)""",
    "pgc_current_schemas": """MACRO pgc_current_schemas(imp) AS (
        SELECT coalesce(list(pgc_p.nspname ORDER BY pgc_p.pos), []::VARCHAR[])
        FROM pgc_search_path pgc_p WHERE imp OR NOT pgc_p.implicit)""",
    "pgc_current_setting": """MACRO pgc_current_setting(n, ok) AS (
        CASE WHEN EXISTS (SELECT 1 FROM pgc_settings_lookup pgc_l WHERE pgc_l.name = lower(n) AND pgc_l.hidden)
             THEN error('PGERR[42501] must be superuser or have privileges of pg_read_all_settings to examine "' || n || '"')
             WHEN EXISTS (SELECT 1 FROM pgc_settings_lookup pgc_l WHERE pgc_l.name = lower(n))
             THEN (SELECT pgc_l.setting FROM pgc_settings_lookup pgc_l WHERE pgc_l.name = lower(n))
             WHEN ok THEN NULL::VARCHAR
             ELSE error('PGERR[42704] unrecognized configuration parameter "' || n || '"') END)""",
    # has_*_privilege for a superuser (``su``): true once each privilege named is one the
    # function knows (``known``, comma-separated; WITH GRANT/ADMIN OPTION allowed), as
    # convert_any_priv_string checks them; for another role the proxy has no grants to
    # answer from (0A000)
    # has_table_privilege and friends from the ACLs: any of the privileges named (a
    # "… WITH GRANT OPTION" one among those held with it)
    "pgc_held": """MACRO pgc_held(r, o) AS (coalesce((SELECT string_agg(pgc_a.privs, '') FROM pgc_privileges pgc_a
        WHERE pgc_a.oid = o AND (pgc_a.grantee = 0 OR pgc_a.grantee IN (
            SELECT pgc_c.role FROM pgc_role_closure pgc_c WHERE pgc_c.member = r AND pgc_c.inherited))), '')
        || CASE WHEN (SELECT max(pgc_a.kind) FROM pgc_privileges pgc_a WHERE pgc_a.oid = o) IN ('table', 'view', 'sequence')
                 AND pgc_uses_role(r, 6181) THEN 'r' ELSE '' END
        || CASE WHEN (SELECT max(pgc_a.kind) FROM pgc_privileges pgc_a WHERE pgc_a.oid = o) IN ('table', 'view')
                 AND pgc_uses_role(r, 6182) THEN 'awd' ELSE '' END
        || CASE WHEN (SELECT max(pgc_a.kind) FROM pgc_privileges pgc_a WHERE pgc_a.oid = o) = 'schema'
                 AND (pgc_uses_role(r, 6181) OR pgc_uses_role(r, 6182)) THEN 'U' ELSE '' END)""",
    "pgc_held_grant": """MACRO pgc_held_grant(r, o) AS (coalesce((SELECT string_agg(pgc_a.grantable, '') FROM pgc_privileges pgc_a
        WHERE pgc_a.oid = o AND (pgc_a.grantee = 0 OR pgc_a.grantee IN (
            SELECT pgc_c.role FROM pgc_role_closure pgc_c WHERE pgc_c.member = r AND pgc_c.inherited))), ''))""",
    # a column's own privileges (a NULL attnum: every column's, has_any_column_privilege)
    "pgc_column_held": """MACRO pgc_column_held(r, o, a) AS (coalesce((SELECT string_agg(pgc_a.privs, '') FROM pgc_column_privileges pgc_a
        WHERE pgc_a.oid = o AND (a IS NULL OR pgc_a.attnum = a) AND (pgc_a.grantee = 0 OR pgc_a.grantee IN (
            SELECT pgc_c.role FROM pgc_role_closure pgc_c WHERE pgc_c.member = r AND pgc_c.inherited))), ''))""",
    "pgc_column_held_grant": """MACRO pgc_column_held_grant(r, o, a) AS (coalesce((SELECT string_agg(pgc_a.grantable, '') FROM pgc_column_privileges pgc_a
        WHERE pgc_a.oid = o AND (a IS NULL OR pgc_a.attnum = a) AND (pgc_a.grantee = 0 OR pgc_a.grantee IN (
            SELECT pgc_c.role FROM pgc_role_closure pgc_c WHERE pgc_c.member = r AND pgc_c.inherited))), ''))""",
    # has_column_privilege's column: by name (42703 for none), by number (NULL for none)
    "pgc_column_named": """MACRO pgc_column_named(o, c) AS (CASE WHEN o IS NULL OR c IS NULL THEN NULL::INTEGER
        ELSE coalesce((SELECT pgc_t.attnum::INTEGER FROM pgc_pg_attribute pgc_t WHERE pgc_t.attrelid = o AND pgc_t.attname = c AND NOT pgc_t.attisdropped),
            error('PGERR[42703] column "' || c || '" of relation "' || (SELECT pgc_r.relname FROM pgc_pg_class pgc_r WHERE pgc_r.oid = o) || '" does not exist')::INTEGER) END)""",
    "pgc_column_numbered": """MACRO pgc_column_numbered(o, a) AS (SELECT pgc_t.attnum::INTEGER FROM pgc_pg_attribute pgc_t
        WHERE pgc_t.attrelid = o AND pgc_t.attnum = a AND NOT pgc_t.attisdropped)""",
    # LIMIT and OFFSET: a negative count is PostgreSQL's error (NULL: no limit)
    "pgc_limit_count": """MACRO pgc_limit_count(x) AS (CASE WHEN x < 0 THEN error('PGERR[2201W] LIMIT must not be negative') ELSE x END)""",
    "pgc_limit_offset": """MACRO pgc_limit_offset(x) AS (CASE WHEN x < 0 THEN error('PGERR[2201X] OFFSET must not be negative') ELSE x END)""",
    "pgc_function_exists": """MACRO pgc_function_exists(o) AS (EXISTS (SELECT 1 FROM pgc_pg_proc pgc_fe WHERE pgc_fe.oid = o))""",
    "pgc_uses_role": """MACRO pgc_uses_role(r, g) AS (EXISTS (SELECT 1 FROM pgc_role_closure pgc_c
        WHERE pgc_c.member = r AND pgc_c.role = g AND pgc_c.inherited))""",
    "pgc_privilege_letter": """MACRO pgc_privilege_letter(x) AS (CASE regexp_replace(upper(trim(x)), '\\s+WITH\\s+(GRANT|ADMIN)\\s+OPTION$', '')
        WHEN 'SELECT' THEN 'r' WHEN 'INSERT' THEN 'a' WHEN 'UPDATE' THEN 'w' WHEN 'DELETE' THEN 'd'
        WHEN 'TRUNCATE' THEN 'D' WHEN 'REFERENCES' THEN 'x' WHEN 'TRIGGER' THEN 't' WHEN 'USAGE' THEN 'U'
        WHEN 'CREATE' THEN 'C' WHEN 'CONNECT' THEN 'c' WHEN 'TEMPORARY' THEN 'T' WHEN 'TEMP' THEN 'T'
        WHEN 'MEMBER' THEN 'm' WHEN 'EXECUTE' THEN 'X' ELSE '?' END)""",
    "pgc_database_oid": """MACRO pgc_database_oid(d) AS (CASE WHEN d IS NULL THEN NULL::UINTEGER
        ELSE coalesce((SELECT pgc_d.oid FROM pgc_pg_database pgc_d WHERE pgc_d.datname = d),
            error('PGERR[3D000] database "' || d || '" does not exist')::UINTEGER) END)""",
    # role membership (pg_has_role): MEMBER through any membership, USAGE through INHERIT roles
    "pgc_member_held": """MACRO pgc_member_held(r, g) AS (CASE WHEN r IS NULL OR g IS NULL THEN NULL
        ELSE (CASE WHEN r = g OR EXISTS (SELECT 1 FROM pgc_role_closure pgc_c WHERE pgc_c.member = r AND pgc_c.role = g)
                   THEN 'm' ELSE '' END)
          || (CASE WHEN r = g OR pgc_uses_role(r, g) THEN 'U' ELSE '' END) END)""",
    "pgc_has_privilege_acl": """MACRO pgc_has_privilege_acl(su, p, known, held, held_grant) AS (CASE WHEN su IS NULL OR p IS NULL THEN NULL
        WHEN len(pgc_privileges_unknown(p, known)) > 0
            THEN error('PGERR[22023] unrecognized privilege type: "' || pgc_privileges_unknown(p, known)[1] || '"')::BOOLEAN
        WHEN su THEN true
        WHEN held IS NULL THEN NULL
        ELSE coalesce(regexp_matches(held, '[' || pgc_privilege_letters(p, false) || ']'), false)
            OR coalesce(regexp_matches(held_grant, '[' || pgc_privilege_letters(p, true) || ']'), false) END)""",
    "pgc_privilege_letters": """MACRO pgc_privilege_letters(p, with_grant) AS (array_to_string(list_transform(
        list_filter(string_split(p, ','), lambda x: regexp_matches(upper(x), 'WITH\\s+GRANT\\s+OPTION\\s*$') = with_grant),
        lambda x: pgc_privilege_letter(x)), '') || '-')""",
    "pgc_role_oid_of": """MACRO pgc_role_oid_of(r) AS (CASE WHEN r IS NULL THEN NULL::UINTEGER
        WHEN lower(r) = 'public' THEN 0::UINTEGER
        ELSE coalesce((SELECT pgc_a.oid FROM pgc_pg_authid pgc_a WHERE pgc_a.rolname = r),
            error('PGERR[42704] role "' || r || '" does not exist')::UINTEGER) END)""",
    "pgc_session_user_oid": "MACRO pgc_session_user_oid() AS (SELECT pgc_s.user_oid FROM pgc_session pgc_s)",
    "pgc_namespace_in": """MACRO pgc_namespace_in(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        ELSE coalesce((SELECT pgc_n.oid FROM pgc_pg_namespace pgc_n WHERE pgc_n.nspname = x),
            error('PGERR[3F000] schema "' || x || '" does not exist')::UINTEGER) END)""",
    "pgc_has_privilege": """MACRO pgc_has_privilege(su, p, known) AS (CASE WHEN su IS NULL OR p IS NULL THEN NULL
        WHEN len(pgc_privileges_unknown(p, known)) > 0
            THEN error('PGERR[22023] unrecognized privilege type: "' || pgc_privileges_unknown(p, known)[1] || '"')::BOOLEAN
        WHEN su THEN true
        ELSE error('PGERR[0A000] the privileges of a role that is not a superuser are not modelled by walsender-proxy')::BOOLEAN END)""",
    "pgc_privileges_unknown": """MACRO pgc_privileges_unknown(p, known) AS (list_transform(list_filter(string_split(p, ','),
        lambda x: NOT list_contains(string_split(known, ','), regexp_replace(upper(trim(x)), '\\s+WITH\\s+(GRANT|ADMIN)\\s+OPTION$', ''))),
        lambda x: trim(x)))""",
    # a sequence named by regclass input (has_sequence_privilege): 42809 for another relation
    "pgc_sequence_in": """MACRO pgc_sequence_in(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        WHEN (SELECT pgc_c.relkind FROM pgc_pg_class pgc_c WHERE pgc_c.oid = pgc_regclass_in(x)) = 'S' THEN pgc_regclass_in(x)
        ELSE error('PGERR[42809] "' || x || '" is not a sequence') END)""",
    "pgc_session_is_super": "MACRO pgc_session_is_super() AS (SELECT pgc_s.user_is_superuser FROM pgc_session pgc_s)",
    "pgc_role_is_super": """MACRO pgc_role_is_super(r) AS (CASE WHEN r IS NULL THEN NULL
        WHEN lower(r) = 'public' THEN false
        ELSE coalesce((SELECT pgc_a.rolsuper FROM pgc_pg_authid pgc_a WHERE pgc_a.rolname = r),
            error('PGERR[42704] role "' || r || '" does not exist')::BOOLEAN) END)""",
    "pgc_role_is_super_oid": """MACRO pgc_role_is_super_oid(r) AS (CASE WHEN r IS NULL THEN NULL
        ELSE coalesce((SELECT pgc_a.rolsuper FROM pgc_pg_authid pgc_a WHERE pgc_a.oid = r), false) END)""",
    # catalog lookups
    "pgc_pg_get_userbyid": """MACRO pgc_pg_get_userbyid(r) AS coalesce(
        (SELECT pgc_a.rolname FROM pgc_pg_authid pgc_a WHERE pgc_a.oid = r),
        'unknown (OID=' || r || ')')""",
    "pgc_visible_rels": """VIEW pgc_visible_rels AS
        SELECT c.oid, c.relname FROM pgc_pg_class c JOIN pgc_search_path s ON s.nspoid = c.relnamespace
        QUALIFY row_number() OVER (PARTITION BY c.relname ORDER BY s.pos) = 1""",
    "pgc_visible_types": """VIEW pgc_visible_types AS
        SELECT t.oid, t.typname FROM pgc_pg_type t JOIN pgc_search_path s ON s.nspoid = t.typnamespace
        QUALIFY row_number() OVER (PARTITION BY t.typname ORDER BY s.pos) = 1""",
    "pgc_pg_table_is_visible": """MACRO pgc_pg_table_is_visible(r) AS (
        r IN (SELECT pgc_v.oid FROM pgc_visible_rels pgc_v))""",
    "pgc_pg_type_is_visible": """MACRO pgc_pg_type_is_visible(r) AS (
        r IN (SELECT pgc_v.oid FROM pgc_visible_types pgc_v))""",
    # Collations are PostgreSQL 15's own, all in pg_catalog (CREATE COLLATION is refused):
    # each is visible; NULL for an oid that is no collation, as in PostgreSQL.
    "pgc_pg_collation_is_visible": """MACRO pgc_pg_collation_is_visible(c) AS (
        SELECT true FROM pgc_pg_collation pgc_c WHERE pgc_c.oid = c)""",
    "pgc_pg_function_is_visible": """MACRO pgc_pg_function_is_visible(f) AS (
        SELECT pgc_f.pronamespace IN (SELECT pgc_p.nspoid FROM pgc_search_path pgc_p)
        FROM pgc_pg_proc pgc_f WHERE pgc_f.oid = f)""",
    "pgc_format_type": """MACRO pgc_format_type(t, m) AS (CASE WHEN t IS NULL THEN NULL::VARCHAR ELSE coalesce(
        (SELECT CASE WHEN pgc_utn.oid IN (SELECT pgc_v.oid FROM pgc_visible_types pgc_v) THEN pgc_utn.name
                 ELSE pgc_utn.qualified END FROM pgc_user_typenames pgc_utn WHERE pgc_utn.oid = t),
                (SELECT pgc_f.fmt FROM pgc_typefmt pgc_f WHERE pgc_f.oid = t AND pgc_f.typmod = coalesce(m, -2)),
        (SELECT CASE WHEN m >= 4 AND pgc_b.base = 'varchar' THEN 'character varying(' || (m - 4) || ')'
                     WHEN m >= 4 AND pgc_b.base = 'bpchar' THEN 'character(' || (m - 4) || ')'
                     WHEN m >= 4 AND pgc_b.base = 'numeric'
                       THEN 'numeric(' || (((m - 4) >> 16) & 65535) || ',' || ((m - 4) & 65535) || ')'
                     WHEN m >= 0 AND pgc_b.base = 'time' THEN 'time(' || m || ') without time zone'
                     WHEN m >= 0 AND pgc_b.base = 'timetz' THEN 'time(' || m || ') with time zone'
                     WHEN m >= 0 AND pgc_b.base = 'timestamp' THEN 'timestamp(' || m || ') without time zone'
                     WHEN m >= 0 AND pgc_b.base = 'timestamptz' THEN 'timestamp(' || m || ') with time zone'
                     WHEN m >= 0 AND pgc_b.base = 'bit' THEN 'bit(' || m || ')'
                     WHEN m >= 0 AND pgc_b.base = 'varbit' THEN 'bit varying(' || m || ')'
                     ELSE (SELECT pgc_g.fmt FROM pgc_typefmt pgc_g WHERE pgc_g.oid = t AND pgc_g.typmod = -1) END
                || CASE WHEN (m >= 4 AND pgc_b.base IN ('varchar', 'bpchar', 'numeric')) OR (m >= 0
                    AND pgc_b.base IN ('time', 'timetz', 'timestamp', 'timestamptz', 'bit', 'varbit'))
                   THEN pgc_b.suffix ELSE '' END
         FROM pgc_typebase pgc_b WHERE pgc_b.oid = t),
        '???') END)""",
    "pgc_obj_description": """MACRO pgc_obj_description(o, cat) AS (
        SELECT min(pgc_d.description) FROM pgc_pg_description pgc_d WHERE pgc_d.objoid = o
        AND pgc_d.objsubid = 0 AND pgc_d.classoid = (SELECT pgc_c.oid FROM pgc_pg_class pgc_c
            WHERE pgc_c.relname = cat AND pgc_c.relnamespace = 11))""",
    "pgc_obj_description1": """MACRO pgc_obj_description1(o) AS (
        SELECT min(pgc_d.description) FROM pgc_pg_description pgc_d
        WHERE pgc_d.objoid = o AND pgc_d.objsubid = 0)""",
    "pgc_col_description": """MACRO pgc_col_description(r, n) AS (
        SELECT min(pgc_d.description) FROM pgc_pg_description pgc_d
        WHERE pgc_d.objoid = r AND pgc_d.classoid = 1259 AND pgc_d.objsubid = n)""",
    "pgc_shobj_description": """MACRO pgc_shobj_description(o, cat) AS (
        SELECT min(pgc_d.description) FROM pgc_pg_shdescription pgc_d WHERE pgc_d.objoid = o
        AND pgc_d.classoid = (SELECT pgc_c.oid FROM pgc_pg_class pgc_c
            WHERE pgc_c.relname = cat AND pgc_c.relnamespace = 11))""",
    "pgc_pg_get_indexdef": """MACRO pgc_pg_get_indexdef(i, col, pretty) AS coalesce(
        (SELECT CASE WHEN coalesce(pretty, false)
                      AND pgc_x.relid IN (SELECT pgc_v.oid FROM pgc_visible_rels pgc_v)
                     THEN pgc_x.def_short ELSE pgc_x.def END
         FROM pgc_indexdefs pgc_x WHERE pgc_x.indexrelid = i AND pgc_x.colno = coalesce(col, 0)),
        CASE WHEN EXISTS (SELECT 1 FROM pgc_indexdefs pgc_y WHERE pgc_y.indexrelid = i) THEN '' END)""",
    # an expression the proxy keeps (a column default's adbin) or the text it was given
    # (a publication's prqual is its text already); a date/time constant in another
    # DateStyle than ISO or IntervalStyle than postgres is refused rather than misprinted
    # a sequence named in it (nextval('s'::regclass)) is printed as regclass prints it now
    "pgc_pg_get_expr": """MACRO pgc_pg_get_expr(x, r, pretty) AS coalesce(
        (SELECT CASE WHEN pgc_e.e_styled AND (NOT starts_with(upper(pgc_current_setting('datestyle', false)), 'ISO')
                     OR pgc_current_setting('intervalstyle', false) <> 'postgres')
                THEN error('PGERR[0A000] pg_get_expr() of a date or time constant in DateStyle '
                    || pgc_current_setting('datestyle', false) || ' is not supported by walsender-proxy')
                WHEN pgc_e.e_seq <> 0 THEN replace(CASE WHEN coalesce(pretty, false) THEN pgc_e.e_pretty ELSE pgc_e.e_plain END,
                    chr(1), replace(pgc_regclass_out(pgc_e.e_seq), chr(39), chr(39) || chr(39)))
                WHEN pgc_e.e_type <> 0 THEN replace(CASE WHEN coalesce(pretty, false) THEN pgc_e.e_pretty ELSE pgc_e.e_plain END,
                    chr(3), pgc_regtype_out(pgc_e.e_type))
                WHEN coalesce(pretty, false) THEN pgc_e.e_pretty ELSE pgc_e.e_plain END
         FROM pgc_exprs pgc_e WHERE pgc_e.e_bin = x::VARCHAR),
        x::VARCHAR)""",
    "pgc_pg_get_partition_constraintdef": """MACRO pgc_pg_get_partition_constraintdef(x) AS (
        SELECT CASE WHEN pgc_e.e_plain = chr(0)
            THEN error('PGERR[0A000] pg_get_partition_constraintdef() of a multi-column range partition or of a key '
                || 'expression is not supported by walsender-proxy')
            ELSE pgc_e.e_plain END
        FROM pgc_exprs pgc_e WHERE pgc_e.e_bin = '{PARTCONSTR :relid ' || x::VARCHAR || '}')""",
    "pgc_pg_get_partkeydef": """MACRO pgc_pg_get_partkeydef(x) AS (
        SELECT pgc_e.e_plain FROM pgc_exprs pgc_e WHERE pgc_e.e_bin = '{PARTKEY :relid ' || x::VARCHAR || '}')""",
    "pgc_pg_get_constraintdef": """MACRO pgc_pg_get_constraintdef(c, pretty) AS (
        SELECT CASE WHEN pgc_x.refrel <> 0
                      AND pgc_x.refrel IN (SELECT pgc_v.oid FROM pgc_visible_rels pgc_v)
                    THEN pgc_x.def_short
                    WHEN coalesce(pretty, false) AND pgc_x.def_pretty IS NOT NULL THEN pgc_x.def_pretty
                    ELSE pgc_x.def END
        FROM pgc_constraintdefs pgc_x WHERE pgc_x.oid = c)""",
    # the relation's partition ancestors, itself first (pg_inherits upwards): only a
    # partition or partitioned table or index has any (check_rel_can_be_partition); a
    # list, unnested where the call stands (NULL: the empty set)
    # (the CASE first reads the argument as regclass: a missing relation is 42P01)
    "pgc_pg_partition_ancestors": """MACRO pgc_pg_partition_ancestors(r) AS (
        CASE WHEN pgc_regclass_in(r) IS NULL THEN NULL ELSE (
            SELECT list(pgc_a.ancestor ORDER BY pgc_a.depth) FROM pgc_partition_ancestry pgc_a
            WHERE pgc_a.relid = pgc_regclass_in(r))
        END)""",
    # the root of the relation's partition tree: itself when it has no parent; NULL for a
    # relation outside any (check_rel_can_be_partition)
    "pgc_pg_partition_root": """MACRO pgc_pg_partition_root(r) AS (
        CASE WHEN pgc_regclass_in(r) IS NULL THEN NULL ELSE (
            SELECT pgc_a.ancestor FROM pgc_partition_ancestry pgc_a
            WHERE pgc_a.relid = pgc_regclass_in(r) ORDER BY pgc_a.depth DESC LIMIT 1)
        END)""",
    # pg_partition_tree's rows as a list (unnested where the call stands)
    "pgc_pg_partition_tree": """MACRO pgc_pg_partition_tree(r) AS (
        CASE WHEN pgc_regclass_in(r) IS NULL THEN NULL ELSE (
            SELECT list({'relid': pgc_t.relid, 'parentrelid': pgc_t.parentrelid, 'isleaf': pgc_t.isleaf, 'level': pgc_t.level, 'ord': pgc_t.ord + 1} ORDER BY pgc_t.ord)
            FROM pgc_partition_tree pgc_t WHERE pgc_t.root = pgc_regclass_in(r))
        END)""",
    # pg_get_publication_tables(pubname) of PostgreSQL 15; strict; 42704 for no such
    # publication
    "pgc_pg_get_publication_tables": """MACRO pgc_pg_get_publication_tables(p) AS TABLE
        SELECT pgc_g.relid, pgc_g.attrs, pgc_g.qual FROM pgc_gpt pgc_g WHERE pgc_g.pubname = p
        UNION ALL SELECT NULL, NULL, NULL WHERE pgc_publication_named(p) IS DISTINCT FROM p""",
    # pg_get_publication_tables(VARIADIC pubnames text[]) of PostgreSQL 16 and later: a row
    # per publication naming a table, the partitions of a table published by its root left
    # out when any of the publications publishes via the root (filter_partitions)
    "pgc_pg_get_publication_tables16": """MACRO pgc_pg_get_publication_tables16(ps) AS TABLE
        SELECT pgc_r.pubid, pgc_r.relid, pgc_r.attrs, pgc_r.qual FROM (
        WITH pgc_sel AS (
            SELECT pgc_g.*, pgc_n.i FROM (SELECT unnest(ps) AS pn, generate_subscripts(ps, 1) AS i) pgc_n
            JOIN pgc_gpt pgc_g ON pgc_g.pubname = pgc_n.pn)
        SELECT pgc_s.pubid, pgc_s.relid, pgc_s.attrs16 AS attrs, pgc_s.qual, pgc_s.i, pgc_s.ord FROM pgc_sel pgc_s
        WHERE NOT ((SELECT bool_or(pgc_v.viaroot) FROM pgc_sel pgc_v) AND EXISTS (
            SELECT 1 FROM pgc_partition_tree pgc_t
            WHERE pgc_t.relid = pgc_s.relid AND pgc_t.level > 0 AND pgc_t.root IN (SELECT pgc_o.relid FROM pgc_sel pgc_o)))
        UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL
        WHERE (SELECT count(pgc_publication_named(pgc_x.pn, true)) FROM (SELECT unnest(ps) AS pn) pgc_x) < 0
        ORDER BY i, ord) pgc_r""",
    # a publication's name, checked: 42704 if there is none (GetPublicationByName); with
    # no_nulls, a NULL is 22004 as deconstruct_array_builtin says
    "pgc_publication_named": """MACRO pgc_publication_named(p, no_nulls := false) AS (CASE
        WHEN p IS NULL AND no_nulls THEN error('PGERR[22004] null array element not allowed in this context')
        WHEN p IS NULL THEN NULL::VARCHAR
        WHEN EXISTS (SELECT 1 FROM pgc_pg_publication pgc_p WHERE pgc_p.pubname = p) THEN p
        ELSE error('PGERR[42704] publication "' || p || '" does not exist') END)""",
    "pgc_pg_get_replica_identity_index": """MACRO pgc_pg_get_replica_identity_index(r) AS (
        SELECT pgc_r.indexrelid FROM pgc_replident pgc_r WHERE pgc_r.relid = r)""",
    "pgc_pg_relation_is_publishable": """MACRO pgc_pg_relation_is_publishable(r) AS (
        SELECT pgc_c.relkind IN ('r', 'p') AND pgc_c.relpersistence = 'p' AND pgc_c.oid >= 16384
        FROM pgc_pg_class pgc_c WHERE pgc_c.oid = r)""",
    "pgc_pg_encoding_to_char": """MACRO pgc_pg_encoding_to_char(e) AS coalesce(
        (SELECT pgc_e.name FROM pgc_encodings pgc_e WHERE pgc_e.enc = e), '')""",
    "pgc_pg_char_to_encoding": """MACRO pgc_pg_char_to_encoding(n) AS coalesce(
        (SELECT pgc_e.enc FROM pgc_encodings pgc_e
         WHERE regexp_replace(lower(pgc_e.name), '[^a-z0-9]', '', 'g')
             = regexp_replace(lower(n), '[^a-z0-9]', '', 'g')),
        -1)""",
    # acldefault(kind, owner): the privileges an object of that kind has when its ACL is
    # NULL (acl.c), PUBLIC's entry first; a role name printed as aclitemout's putid does
    "pgc_acldefault": """MACRO pgc_acldefault(k, r) AS (
        SELECT CASE k
            WHEN 'c' THEN []::VARCHAR[]
            WHEN 'r' THEN [pgc_o.pgc_owner || '=arwdDxt/' || pgc_o.pgc_owner]
            WHEN 's' THEN [pgc_o.pgc_owner || '=rwU/' || pgc_o.pgc_owner]
            WHEN 'd' THEN ['=Tc/' || pgc_o.pgc_owner, pgc_o.pgc_owner || '=CTc/' || pgc_o.pgc_owner]
            WHEN 'f' THEN ['=X/' || pgc_o.pgc_owner, pgc_o.pgc_owner || '=X/' || pgc_o.pgc_owner]
            WHEN 'l' THEN ['=U/' || pgc_o.pgc_owner, pgc_o.pgc_owner || '=U/' || pgc_o.pgc_owner]
            WHEN 'L' THEN [pgc_o.pgc_owner || '=rw/' || pgc_o.pgc_owner]
            WHEN 'n' THEN [pgc_o.pgc_owner || '=UC/' || pgc_o.pgc_owner]
            WHEN 't' THEN [pgc_o.pgc_owner || '=C/' || pgc_o.pgc_owner]
            WHEN 'F' THEN [pgc_o.pgc_owner || '=U/' || pgc_o.pgc_owner]
            WHEN 'S' THEN [pgc_o.pgc_owner || '=U/' || pgc_o.pgc_owner]
            WHEN 'T' THEN ['=U/' || pgc_o.pgc_owner, pgc_o.pgc_owner || '=U/' || pgc_o.pgc_owner]
            WHEN 'p' THEN [pgc_o.pgc_owner || '=sA/' || pgc_o.pgc_owner]
            ELSE error('PGERR[XX000] unrecognized object type abbreviation: ' || k) END
        FROM (SELECT CASE WHEN pgc_u.pgc_rolname IS NULL THEN r::VARCHAR
                          WHEN regexp_full_match(pgc_u.pgc_rolname, '[A-Za-z0-9_]+') THEN pgc_u.pgc_rolname
                          ELSE '"' || replace(pgc_u.pgc_rolname, '"', '""') || '"' END AS pgc_owner
              FROM (SELECT (SELECT pgc_a.rolname FROM pgc_pg_authid pgc_a WHERE pgc_a.oid = r) AS pgc_rolname) pgc_u) pgc_o)""",
    # quote_literal: quotes doubled; a backslash doubled too, and then an E'' literal
    "pgc_quote_literal": """MACRO pgc_quote_literal(s) AS (CASE
        WHEN strpos(s, chr(92)) > 0
            THEN 'E' || chr(39) || replace(replace(s, chr(92), chr(92) || chr(92)), chr(39), chr(39) || chr(39)) || chr(39)
        ELSE chr(39) || replace(s, chr(39), chr(39) || chr(39)) || chr(39) END)""",
    # num_nulls / num_nonnulls of a VARIADIC array: its elements that are (not) NULL
    # int2vectorin / oidvectorin: integers separated by spaces
    "pgc_int2vector_in": "MACRO pgc_int2vector_in(s) AS (list_transform(list_filter(string_split(s, ' '), lambda pgc_x: pgc_x <> ''), lambda pgc_x: CAST(pgc_x AS SMALLINT)))",
    "pgc_oidvector_in": "MACRO pgc_oidvector_in(s) AS (list_transform(list_filter(string_split(s, ' '), lambda pgc_x: pgc_x <> ''), lambda pgc_x: CAST(pgc_x AS UINTEGER)))",
    "pgc_num_nulls_array": "MACRO pgc_num_nulls_array(a) AS (CAST(len(list_filter(a, lambda pgc_x: pgc_x IS NULL)) AS INTEGER))",
    "pgc_num_nonnulls_array": "MACRO pgc_num_nonnulls_array(a) AS (CAST(len(list_filter(a, lambda pgc_x: pgc_x IS NOT NULL)) AS INTEGER))",
    "pgc_quote_ident": """MACRO pgc_quote_ident(s) AS (CASE WHEN s IS NULL THEN NULL::VARCHAR
        WHEN regexp_full_match(s, '[a-z_][a-z0-9_]*')
             AND s NOT IN (SELECT pgc_k.word FROM pgc_keywords pgc_k) THEN s
        ELSE '"' || replace(s, '"', '""') || '"' END)""",
    # a user function's CREATE statement; none is kept of an SQL-standard body's analysed
    # tree, nor of the built-in functions' definitions (NULL, as before)
    "pgc_functiondef": """MACRO pgc_functiondef(f) AS (CASE
        WHEN (SELECT pgc_p.standard FROM pgc_procdefs pgc_p WHERE pgc_p.oid = f)
        THEN error('PGERR[0A000] pg_get_functiondef() of a function with an SQL-standard body is not supported by walsender-proxy')
        ELSE (SELECT pgc_p.functiondef FROM pgc_procdefs pgc_p WHERE pgc_p.oid = f) END)""",
    # pg_get_function_sqlbody: NULL but for an SQL-standard body (not kept as a tree)
    "pgc_function_sqlbody": """MACRO pgc_function_sqlbody(f) AS (CASE
        WHEN (SELECT pgc_p.standard FROM pgc_procdefs pgc_p WHERE pgc_p.oid = f)
        THEN error('PGERR[0A000] pg_get_function_sqlbody() of a function with an SQL-standard body is not supported by walsender-proxy')
        ELSE NULL::VARCHAR END)""",
    "pgc_procdef": """MACRO pgc_procdef(f, what) AS (
        SELECT CASE what WHEN 'result' THEN pgc_p.result WHEN 'args' THEN pgc_p.args
                         ELSE pgc_p.identity_args END
        FROM pgc_procdefs pgc_p WHERE pgc_p.oid = f)""",
    # reg* types: text in (names or numeric OIDs, as regclassin accepts both) and text out
    "pgc_ident_parts": """MACRO pgc_ident_parts(x) AS list_transform(
        regexp_extract_all(x::VARCHAR, '"(?:[^"]|"")*"|[^."]+'),
        lambda p: CASE WHEN starts_with(p, '"') THEN replace(p[2:-2], '""', '"') ELSE lower(trim(p)) END)""",
    "pgc_to_regclass": """MACRO pgc_to_regclass(x) AS (CASE
        WHEN x IS NULL THEN NULL::UINTEGER
        WHEN regexp_full_match(x::VARCHAR, '\\s*[0-9]+\\s*') THEN CAST(trim(x::VARCHAR) AS UINTEGER)
        WHEN len(pgc_ident_parts(x)) = 1 THEN
            (SELECT pgc_v.oid FROM pgc_visible_rels pgc_v WHERE pgc_v.relname = pgc_ident_parts(x)[1])
        WHEN len(pgc_ident_parts(x)) > 3 THEN error('PGERR[42601] improper relation name (too many dotted names): '
            || array_to_string(pgc_ident_parts(x), '.'))
        WHEN len(pgc_ident_parts(x)) = 3 AND pgc_ident_parts(x)[1] <> pgc_current_database() THEN
            error('PGERR[0A000] cross-database references are not implemented: "' || array_to_string(pgc_ident_parts(x), '.') || '"')
        ELSE (SELECT pgc_c.oid FROM pgc_pg_class pgc_c JOIN pgc_pg_namespace pgc_n
                ON pgc_n.oid = pgc_c.relnamespace
              WHERE pgc_n.nspname = pgc_ident_parts(x)[-2] AND pgc_c.relname = pgc_ident_parts(x)[-1]) END)""",
    # oidin: optional blanks and sign around decimal digits; -1 … -2147483648 wrap around
    # as strtoul's do; 22P02 / 22003 with the text as given
    "pgc_oid_in": """MACRO pgc_oid_in(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        WHEN NOT regexp_full_match(x, '[ \t\n\r\f\v]*[+-]?[0-9]+[ \t\n\r\f\v]*')
        THEN error('PGERR[22P02] invalid input syntax for type oid: "' || x || '"')
        WHEN TRY_CAST(trim(x, ' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13)) AS HUGEINT) BETWEEN 0 AND 4294967295
        THEN CAST(TRY_CAST(trim(x, ' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13)) AS HUGEINT) AS UINTEGER)
        WHEN TRY_CAST(trim(x, ' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13)) AS HUGEINT) BETWEEN -2147483648 AND -1
        THEN CAST(TRY_CAST(trim(x, ' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13)) AS HUGEINT) + 4294967296 AS UINTEGER)
        ELSE error('PGERR[22003] value "' || x || '" is out of range for type oid') END)""",
    # PostgreSQL 15's xidin: strtoul(x, NULL, 0) as a TransactionId, no error (no digits:
    # 0; past the range: 4294967295; a sign negates modulo 2^64); octal and hexadecimal
    # forms are refused rather than read otherwise
    "pgc_xid_in": """MACRO pgc_xid_in(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        WHEN regexp_matches(x, '^[ \t\n\r\f\v]*[+-]?0[0-9xX]')
        THEN error('PGERR[0A000] xid input in octal or hexadecimal ("' || x || '") is not supported by walsender-proxy')
        ELSE pgc_xid_dec(regexp_extract(x, '^[ \t\n\r\f\v]*([+-]?)([0-9]*)', 1),
                         TRY_CAST(nullif(regexp_extract(x, '^[ \t\n\r\f\v]*([+-]?)([0-9]*)', 2), '') AS HUGEINT),
                         regexp_extract(x, '^[ \t\n\r\f\v]*([+-]?)([0-9]*)', 2) = '') END)""",
    "pgc_xid_dec": """MACRO pgc_xid_dec(sign, v, empty) AS (CASE
        WHEN empty THEN 0::UINTEGER
        WHEN v IS NULL OR v >= 18446744073709551616 THEN 4294967295::UINTEGER
        WHEN sign = '-' THEN CAST((18446744073709551616 - v) % 4294967296 AS UINTEGER)
        ELSE CAST(v % 4294967296 AS UINTEGER) END)""",
    # a catalog regproc column's name (pg_type.typinput …) as the function's OID: the one
    # function of that name ('-' is 0); several of that name are refused, not guessed
    "pgc_regproc_text_oid": """MACRO pgc_regproc_text_oid(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        WHEN x = '-' THEN 0::UINTEGER
        WHEN (SELECT count(*) FROM pgc_pg_proc pgc_p WHERE pgc_p.proname = x) = 1
        THEN (SELECT pgc_p.oid FROM pgc_pg_proc pgc_p WHERE pgc_p.proname = x)
        ELSE error('PGERR[0A000] the OID of regproc value "' || x || '" (an overloaded name) is not supported by walsender-proxy') END)""",
    "pgc_regclass_in": """MACRO pgc_regclass_in(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        WHEN pgc_to_regclass(x) IS NOT NULL THEN pgc_to_regclass(x)
        ELSE error('PGERR[42P01] relation "' || x || '" does not exist') END)""",
    # a user view's definition as kept (sql/views.py); the catalog's own views' are not
    # kept: refused; NULL for another relation, as PostgreSQL's
    "pgc_viewdef": """MACRO pgc_viewdef(o) AS (CASE
        WHEN o IN (SELECT pgc_d.oid FROM pgc_viewdefs pgc_d)
        THEN (SELECT pgc_d.definition FROM pgc_viewdefs pgc_d WHERE pgc_d.oid = o)
        WHEN (SELECT pgc_c.relkind FROM pgc_pg_class pgc_c WHERE pgc_c.oid = o) IN ('v', 'm')
        THEN error('PGERR[0A000] pg_get_viewdef() of a view is not supported by walsender-proxy')
        ELSE NULL::VARCHAR END)""",
    "pgc_regclass_out": """MACRO pgc_regclass_out(o) AS (CASE WHEN o IS NULL THEN NULL::VARCHAR WHEN o = 0 THEN '-' ELSE coalesce(
        (SELECT CASE WHEN pgc_c.oid IN (SELECT pgc_v.oid FROM pgc_visible_rels pgc_v)
                     THEN pgc_quote_ident(pgc_c.relname)
                     ELSE pgc_quote_ident(pgc_n.nspname) || '.' || pgc_quote_ident(pgc_c.relname) END
         FROM pgc_pg_class pgc_c JOIN pgc_pg_namespace pgc_n ON pgc_n.oid = pgc_c.relnamespace
         WHERE pgc_c.oid = o),
        o::VARCHAR) END)""",
    "pgc_normtype": """MACRO pgc_normtype(x) AS (CASE WHEN starts_with(trim(x::VARCHAR), '"')
        THEN trim(x::VARCHAR)
        ELSE regexp_replace(regexp_replace(regexp_replace(lower(trim(x::VARCHAR)),
            '\\s*\\([^)]*\\)', '', 'g'), '\\s+', ' ', 'g'), '^"?pg_catalog"?\\.', 'pg_catalog.') END)""",
    "pgc_to_regtype": """MACRO pgc_to_regtype(x) AS (CASE
        WHEN x IS NULL THEN NULL::UINTEGER
        WHEN regexp_full_match(x::VARCHAR, '\\s*[0-9]+\\s*') THEN CAST(trim(x::VARCHAR) AS UINTEGER)
        ELSE (SELECT min(pgc_t.oid) FROM pgc_typenames pgc_t WHERE pgc_t.name = pgc_normtype(x)) END)""",
    "pgc_regtype_in": """MACRO pgc_regtype_in(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        WHEN pgc_to_regtype(x) IS NOT NULL THEN pgc_to_regtype(x)
        ELSE error('PGERR[42704] type "' || x || '" does not exist') END)""",
    "pgc_regtype_out": """MACRO pgc_regtype_out(o) AS (CASE WHEN o IS NULL THEN NULL::VARCHAR WHEN o = 0 THEN '-' ELSE coalesce(
        (SELECT CASE WHEN pgc_utn.oid IN (SELECT pgc_v.oid FROM pgc_visible_types pgc_v) THEN pgc_utn.name
                 ELSE pgc_utn.qualified END FROM pgc_user_typenames pgc_utn WHERE pgc_utn.oid = o),
                (SELECT pgc_f.fmt FROM pgc_typefmt pgc_f WHERE pgc_f.oid = o AND pgc_f.typmod = -2),
        o::VARCHAR) END)""",
    "pgc_to_regnamespace": """MACRO pgc_to_regnamespace(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        WHEN regexp_full_match(x::VARCHAR, '\\s*[0-9]+\\s*') THEN CAST(trim(x::VARCHAR) AS UINTEGER)
        WHEN len(pgc_ident_parts(x)) <> 1 THEN error('PGERR[42602] invalid name syntax')
        ELSE (SELECT pgc_n.oid FROM pgc_pg_namespace pgc_n WHERE pgc_n.nspname = pgc_ident_parts(x)[1]) END)""",
    "pgc_regnamespace_in": """MACRO pgc_regnamespace_in(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        WHEN pgc_to_regnamespace(x) IS NOT NULL THEN pgc_to_regnamespace(x)
        ELSE error('PGERR[3F000] schema "' || x || '" does not exist') END)""",
    "pgc_regnamespace_out": """MACRO pgc_regnamespace_out(o) AS (CASE WHEN o IS NULL THEN NULL::VARCHAR WHEN o = 0 THEN '-'
        ELSE coalesce((SELECT pgc_quote_ident(pgc_n.nspname) FROM pgc_pg_namespace pgc_n WHERE pgc_n.oid = o),
                      o::VARCHAR) END)""",
    "pgc_to_regrole": """MACRO pgc_to_regrole(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        WHEN regexp_full_match(x::VARCHAR, '\\s*[0-9]+\\s*') THEN CAST(trim(x::VARCHAR) AS UINTEGER)
        WHEN len(pgc_ident_parts(x)) <> 1 THEN error('PGERR[42602] invalid name syntax')
        ELSE (SELECT pgc_a.oid FROM pgc_pg_authid pgc_a WHERE pgc_a.rolname = pgc_ident_parts(x)[1]) END)""",
    "pgc_regrole_in": """MACRO pgc_regrole_in(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        WHEN pgc_to_regrole(x) IS NOT NULL THEN pgc_to_regrole(x)
        ELSE error('PGERR[42704] role "' || x || '" does not exist') END)""",
    "pgc_regrole_out": """MACRO pgc_regrole_out(o) AS (CASE WHEN o IS NULL THEN NULL::VARCHAR WHEN o = 0 THEN '-'
        ELSE coalesce((SELECT pgc_quote_ident(pgc_a.rolname) FROM pgc_pg_authid pgc_a WHERE pgc_a.oid = o),
                      o::VARCHAR) END)""",
    # regprocin: the one function of that name (in the schema named, else on the search
    # path); to_regproc gives NULL where regproc input fails
    "pgc_regproc_match": """MACRO pgc_regproc_match(x) AS (
        SELECT {'n': count(*), 'oid': min(pgc_f.oid)} FROM pgc_pg_proc pgc_f
        JOIN pgc_pg_namespace pgc_n ON pgc_n.oid = pgc_f.pronamespace
        WHERE pgc_f.proname = pgc_ident_parts(x)[-1]
          AND CASE WHEN len(pgc_ident_parts(x)) > 1 THEN pgc_n.nspname = pgc_ident_parts(x)[-2]
                   ELSE pgc_f.pronamespace IN (SELECT pgc_s.nspoid FROM pgc_search_path pgc_s) END)""",
    "pgc_to_regproc": """MACRO pgc_to_regproc(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        WHEN regexp_full_match(x::VARCHAR, '\\s*[0-9]+\\s*') THEN CAST(trim(x::VARCHAR) AS UINTEGER)
        WHEN pgc_regproc_match(x).n = 1 THEN pgc_regproc_match(x).oid END)""",
    "pgc_regproc_in": """MACRO pgc_regproc_in(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        WHEN pgc_to_regproc(x) IS NOT NULL THEN pgc_to_regproc(x)
        WHEN pgc_regproc_match(x).n > 1 THEN error('PGERR[42725] more than one function named "' || x || '"')
        ELSE error('PGERR[42883] function "' || x || '" does not exist') END)""",
    # regprocout: the name alone when regproc input would find this function (and only it)
    # on the search path, else qualified
    "pgc_regproc_out": """MACRO pgc_regproc_out(o) AS (CASE WHEN o IS NULL THEN NULL::VARCHAR WHEN o = 0 THEN '-'
        ELSE coalesce((SELECT CASE WHEN (SELECT count(*) FROM pgc_pg_proc pgc_rpq
                    WHERE pgc_rpq.proname = pgc_rpo.proname
                      AND pgc_rpq.pronamespace IN (SELECT pgc_rps.nspoid FROM pgc_search_path pgc_rps)) = 1
                  AND pgc_rpo.pronamespace IN (SELECT pgc_rps.nspoid FROM pgc_search_path pgc_rps)
                THEN '' ELSE pgc_quote_ident(pgc_rpn.nspname) || '.' END || pgc_quote_ident(pgc_rpo.proname)
            FROM pgc_pg_proc pgc_rpo JOIN pgc_pg_namespace pgc_rpn ON pgc_rpn.oid = pgc_rpo.pronamespace
            WHERE pgc_rpo.oid = o), o::VARCHAR) END)""",
    # regprocedure: ``name(type, …)`` (parseNameAndArgTypes: a name, then its argument
    # types between parentheses; 22P02 without them)
    "pgc_regprocedure_parts": r"""MACRO pgc_regprocedure_parts(x) AS (CASE
        WHEN NOT contains(x, '(') THEN error('PGERR[22P02] expected a left parenthesis')
        WHEN NOT regexp_full_match(x, '(?s).*\)\s*') THEN error('PGERR[22P02] expected a right parenthesis')
        ELSE {'name': trim(x[:strpos(x, '(') - 1]),
              'args': list_transform(list_filter(string_split(regexp_extract(x, '(?s)\((.*)\)\s*$', 1), ','),
                  lambda pgc_a: trim(pgc_a) <> '' OR strpos(x, ',') > 0), lambda pgc_a: trim(pgc_a))} END)""",
    "pgc_regprocedure_match": """MACRO pgc_regprocedure_match(x) AS (
        SELECT min(pgc_rpf.oid) FROM pgc_pg_proc pgc_rpf
        JOIN pgc_pg_namespace pgc_rpn ON pgc_rpn.oid = pgc_rpf.pronamespace
        WHERE pgc_rpf.proname = pgc_ident_parts(pgc_regprocedure_parts(x).name)[-1]
          AND CASE WHEN len(pgc_ident_parts(pgc_regprocedure_parts(x).name)) > 1
                   THEN pgc_rpn.nspname = pgc_ident_parts(pgc_regprocedure_parts(x).name)[-2]
                   ELSE pgc_rpf.pronamespace IN (SELECT pgc_rps.nspoid FROM pgc_search_path pgc_rps) END
          AND pgc_rpf.proargtypes::UINTEGER[] = pgc_regprocedure_argtypes(x))""",
    # the argument types' OIDs, in order (NULL for a name that is no type)
    "pgc_regprocedure_argtypes": """MACRO pgc_regprocedure_argtypes(x) AS (coalesce((
        SELECT list(pgc_to_regtype(pgc_rpu.a) ORDER BY pgc_rpu.i)
        FROM (SELECT unnest(pgc_regprocedure_parts(x).args) AS a,
                     generate_subscripts(pgc_regprocedure_parts(x).args, 1) AS i) pgc_rpu), []::UINTEGER[]))""",
    "pgc_regprocedure_badtype": """MACRO pgc_regprocedure_badtype(x) AS (
        SELECT min(pgc_rpu.a) FROM (SELECT unnest(pgc_regprocedure_parts(x).args) AS a) pgc_rpu
        WHERE pgc_to_regtype(pgc_rpu.a) IS NULL)""",
    "pgc_to_regprocedure": r"""MACRO pgc_to_regprocedure(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        WHEN regexp_full_match(x::VARCHAR, '\s*[0-9]+\s*') THEN CAST(trim(x::VARCHAR) AS UINTEGER)
        WHEN NOT contains(x, '(') OR pgc_regprocedure_badtype(x) IS NOT NULL THEN NULL::UINTEGER
        ELSE pgc_regprocedure_match(x) END)""",
    "pgc_regprocedure_in": r"""MACRO pgc_regprocedure_in(x) AS (CASE WHEN x IS NULL THEN NULL::UINTEGER
        WHEN regexp_full_match(x::VARCHAR, '\s*[0-9]+\s*') THEN CAST(trim(x::VARCHAR) AS UINTEGER)
        WHEN pgc_regprocedure_badtype(x) IS NOT NULL THEN error('PGERR[42704] type "' || pgc_regprocedure_badtype(x) || '" does not exist')
        WHEN pgc_regprocedure_match(x) IS NOT NULL THEN pgc_regprocedure_match(x)
        ELSE error('PGERR[42883] function "' || x || '" does not exist') END)""",
    "pgc_regprocedure_out": """MACRO pgc_regprocedure_out(o) AS (CASE WHEN o IS NULL THEN NULL::VARCHAR WHEN o = 0 THEN '-'
        ELSE coalesce((SELECT CASE WHEN pgc_pg_function_is_visible(pgc_rpf.oid) THEN '' ELSE pgc_quote_ident(pgc_rpn.nspname) || '.' END
                || pgc_quote_ident(pgc_rpf.proname) || '('
                || coalesce((SELECT string_agg(pgc_format_type(pgc_rpu.t, NULL), ',' ORDER BY pgc_rpu.i)
                    FROM (SELECT unnest(pgc_rpf.proargtypes) AS t, generate_subscripts(pgc_rpf.proargtypes, 1) AS i) pgc_rpu), '') || ')'
            FROM pgc_pg_proc pgc_rpf JOIN pgc_pg_namespace pgc_rpn ON pgc_rpn.oid = pgc_rpf.pronamespace WHERE pgc_rpf.oid = o),
            o::VARCHAR) END)""",
    # information_schema._pg_expandarray: (element, 1-based position) of each element
    "pgc_expandarray": """MACRO pgc_expandarray(a) AS (
        list_transform(range(1, len(a) + 1), lambda pgc_i: {'x': a[pgc_i], 'n': pgc_i::INTEGER}))""",
    # arrays (PostgreSQL's int2vector/oidvector are 0-based)
    "pgc_array_upper": """MACRO pgc_array_upper(a, d) AS (
        CASE WHEN d = 1 AND len(a) > 0 THEN len(a)::INTEGER END)""",
    "pgc_array_upper0": """MACRO pgc_array_upper0(a, d) AS (
        CASE WHEN d = 1 AND len(a) > 0 THEN (len(a) - 1)::INTEGER END)""",
    "pgc_array_lower": """MACRO pgc_array_lower(a, d) AS (CASE WHEN d = 1 AND len(a) > 0 THEN 1 END)""",
    "pgc_array_lower0": """MACRO pgc_array_lower0(a, d) AS (CASE WHEN d = 1 AND len(a) > 0 THEN 0 END)""",
    "pgc_array_cat": """MACRO pgc_array_cat(a, b) AS (
        CASE WHEN a IS NULL AND b IS NULL THEN NULL ELSE list_concat(a, b) END)""",
    # x = ANY(a) with PostgreSQL's three values: NULL for a NULL array, false for an empty
    # one (whatever x), NULL when nothing matched but x or an element is NULL
    # enum_in of each element of a text array (sql/enum_casts.py): the array, or the
    # error of its first element that is no label of the enum
    "pgc_enum_array_in": """MACRO pgc_enum_array_in(v, labels, shown) AS (CASE
        WHEN v IS NULL OR list_has_all(labels, v) THEN v
        ELSE error('PGERR[22P02] invalid input value for enum ' || shown || ': "'
            || list_filter(v, lambda e: e IS NOT NULL AND NOT list_contains(labels, e))[1] || '"') END)""",
    "pgc_any_eq": """MACRO pgc_any_eq(x, a) AS (CASE
        WHEN list_contains(a, x) THEN true
        WHEN a IS NULL THEN NULL
        WHEN len(a) = 0 THEN false
        WHEN x IS NULL OR list_position(a, NULL) IS NOT NULL THEN NULL
        ELSE false END)""",
    # array containment and overlap: a NULL element equals nothing, not even NULL
    "pgc_arr_contains": """MACRO pgc_arr_contains(a, b) AS (CASE
        WHEN a IS NULL OR b IS NULL THEN NULL
        WHEN list_position(b, NULL) IS NOT NULL THEN false
        ELSE list_has_all(a, b) END)""",
    "pgc_arr_overlap": """MACRO pgc_arr_overlap(a, b) AS (CASE
        WHEN a IS NULL OR b IS NULL THEN NULL ELSE list_has_any(a, b) END)""",
    # string_to_array: '' is an empty array, a NULL delimiter splits characters, an empty
    # one splits nothing; the third argument's matches become NULL
    "pgc_string_to_array2": """MACRO pgc_string_to_array2(s, d) AS (CASE
        WHEN s IS NULL THEN NULL WHEN s = '' THEN []::VARCHAR[]
        WHEN d IS NULL THEN string_split(s, '') WHEN d = '' THEN [s]
        ELSE string_split(s, d) END)""",
    "pgc_string_to_array3": """MACRO pgc_string_to_array3(s, d, n) AS (list_transform(
        pgc_string_to_array2(s, d), lambda pgc_e: CASE WHEN pgc_e = n THEN NULL ELSE pgc_e END))""",
    # array_to_string over the elements' text: NULLs skipped or printed as the third
    # argument; a NULL delimiter gives NULL
    "pgc_array_to_string2": """MACRO pgc_array_to_string2(a, d) AS (CASE
        WHEN d IS NULL THEN NULL ELSE array_to_string(list_filter(a, lambda pgc_e: pgc_e IS NOT NULL), d) END)""",
    "pgc_array_to_string3": """MACRO pgc_array_to_string3(a, d, n) AS (CASE
        WHEN d IS NULL THEN NULL WHEN n IS NULL THEN pgc_array_to_string2(a, d)
        ELSE array_to_string(list_transform(a, lambda pgc_e: coalesce(pgc_e::VARCHAR, n)), d) END)""",
    "pgc_bool_list_text": """MACRO pgc_bool_list_text(a) AS (list_transform(a,
        lambda pgc_e: CASE WHEN pgc_e THEN 't' WHEN NOT pgc_e THEN 'f' END))""",
    # array_agg of arrays builds one more dimension: every input non-NULL, non-empty and
    # of one length
    "pgc_array_agg_arrays": """MACRO pgc_array_agg_arrays(r) AS (CASE
        WHEN r IS NULL THEN NULL
        WHEN list_position(r, NULL) IS NOT NULL THEN error('PGERR[22004] cannot accumulate null arrays')
        WHEN list_min(list_transform(r, lambda pgc_e: len(pgc_e))) = 0
            THEN error('PGERR[2202E] cannot accumulate empty arrays')
        WHEN list_min(list_transform(r, lambda pgc_e: len(pgc_e)))
            <> list_max(list_transform(r, lambda pgc_e: len(pgc_e)))
            THEN error('PGERR[2202E] cannot accumulate arrays of different dimensionality')
        ELSE r END)""",
    # integer negation and abs: the one value whose opposite does not fit is 22003 (DuckDB
    # widens the type instead)
    "pgc_neg_int2": """MACRO pgc_neg_int2(x) AS (CASE
        WHEN x = -32768 THEN error('PGERR[22003] smallint out of range') ELSE (-x)::SMALLINT END)""",
    "pgc_abs_int2": """MACRO pgc_abs_int2(x) AS (CASE
        WHEN x = -32768 THEN error('PGERR[22003] smallint out of range') ELSE abs(x)::SMALLINT END)""",
    "pgc_neg_int4": """MACRO pgc_neg_int4(x) AS (CASE
        WHEN x = -2147483648 THEN error('PGERR[22003] integer out of range') ELSE (-x)::INTEGER END)""",
    "pgc_abs_int4": """MACRO pgc_abs_int4(x) AS (CASE
        WHEN x = -2147483648 THEN error('PGERR[22003] integer out of range') ELSE abs(x)::INTEGER END)""",
    "pgc_neg_int8": """MACRO pgc_neg_int8(x) AS (CASE
        WHEN x = -9223372036854775808 THEN error('PGERR[22003] bigint out of range') ELSE (-x)::BIGINT END)""",
    "pgc_abs_int8": """MACRO pgc_abs_int8(x) AS (CASE
        WHEN x = -9223372036854775808 THEN error('PGERR[22003] bigint out of range') ELSE abs(x)::BIGINT END)""",
    # an interval computed in DuckDB (int64 microseconds, as PostgreSQL's) whose time part
    # Arrow's nanoseconds cannot hold: it would come out wrapped, so it is refused
    # timestamptz + interval as timestamptz_pl_interval adds it: the months in local time,
    # then the days in local time, then the time part as elapsed microseconds (DuckDB's
    # ICU adds the time part first: 1999-12-01 + '1 month -1 second' was 1999-12-30 23:59:59)
    # (the parts cast: a NULL folded by DuckDB has lost its interval type)
    "pgc_tstz_pl_interval": """MACRO pgc_tstz_pl_interval(t, i) AS (pgc_tstz_pl_local(pgc_tstz_pl_local(t,
            (datepart('year', i) * 12 + datepart('month', i))::INTEGER, 0),
            0, datepart('day', i)::INTEGER)
        + to_microseconds((datepart('hour', i)::BIGINT * 3600000000 + datepart('minute', i)::BIGINT * 60000000
            + datepart('microseconds', i))::BIGINT))""",
    # months or days added to a timestamptz's wall clock, the result's offset chosen as
    # DetermineTimeZoneOffset chooses it: the cast from timestamp (an ambiguous wall time of a
    # fall-back change is the later instant; ICU's own addition kept the earlier offset)
    "pgc_tstz_pl_local": """MACRO pgc_tstz_pl_local(t, m, d) AS (CASE WHEN m = 0 AND d = 0 THEN t
        ELSE (t::TIMESTAMP + to_months(m) + to_days(d))::TIMESTAMPTZ END)""",
    # time_interval: the time of day as an interval; interval_time: the interval's time part
    # modulo a day (its days and months dropped), as PostgreSQL's casts make them
    "pgc_time_interval": "MACRO pgc_time_interval(t) AS (to_microseconds(epoch_us(t)))",
    "pgc_interval_time": """MACRO pgc_interval_time(i) AS (TIME '00:00:00' + to_microseconds(((
        (datepart('hour', i)::BIGINT * 3600000000 + datepart('minute', i)::BIGINT * 60000000
            + datepart('microseconds', i)) % 86400000000) + 86400000000) % 86400000000))""",
    # date2timestamp's range check: a date from 294277-01-01 on has no timestamp
    # (and from 294247-01-11 on, past DuckDB's timestamps, 0A000 as for any such timestamp)
    "pgc_date_ts_guard": """MACRO pgc_date_ts_guard(d) AS (CASE WHEN isinf(d) THEN d
        WHEN d >= DATE '294277-01-01' THEN error('PGERR[22008] date out of range for timestamp')::DATE
        WHEN d > DATE '294247-01-10'
            THEN error('PGERR[0A000] timestamps after 294247-01-10 04:00:54.775806 are not supported by walsender-proxy')::DATE
        ELSE d END)""",
    # float8_timestamptz (to_timestamp(double precision))
    "pgc_to_timestamp": """MACRO pgc_to_timestamp(x) AS (CASE WHEN x = 'Infinity'::DOUBLE THEN 'infinity'::TIMESTAMPTZ
        WHEN x = '-Infinity'::DOUBLE THEN '-infinity'::TIMESTAMPTZ
        WHEN isnan(x) THEN error('PGERR[22008] timestamp cannot be NaN')::TIMESTAMPTZ
        WHEN x < -210866803200 OR x >= 9224318016000
            THEN error('PGERR[22008] timestamp out of range: "' || printf('%g', x) || '"')::TIMESTAMPTZ
        WHEN x > 9223372036854.775
            THEN error('PGERR[0A000] timestamps after 294247-01-10 04:00:54.775806 are not supported by walsender-proxy')::TIMESTAMPTZ
        ELSE make_timestamptz(round(x * 1000000)::BIGINT) END)""",
    # generate_series' step in the scalar form (DuckDB's gives no value for a zero step)
    "pgc_series_step": """MACRO pgc_series_step(s) AS (CASE WHEN s = 0
        THEN error('PGERR[22023] step size cannot equal zero') ELSE s END)""",
    "pgc_series_step_iv": """MACRO pgc_series_step_iv(s) AS (CASE WHEN s = INTERVAL 0 DAY
        THEN error('PGERR[22023] step size cannot equal zero') ELSE s END)""",
    # generate_series(timestamptz, timestamptz, interval) outside UTC, as
    # generate_series_timestamptz steps: each value the last plus the step. ICU's series
    # keeps PostgreSQL's wall clocks for a step of months or days, but not its offset for a
    # wall time a fall-back change repeats: each value after the first is recast from its
    # wall clock, the series run a day past the end for a descending step (ICU's earlier
    # instant could end it a value early) and cut where PostgreSQL's ends. A step with a
    # time part as well is added in another order by ICU: refused.
    "pgc_tstz_series": """MACRO pgc_tstz_series(a, b, s) AS (CASE
        WHEN datepart('month', s) = 0 AND datepart('year', s) = 0 AND datepart('day', s) = 0
            THEN generate_series(a, b, s)
        WHEN datepart('hour', s) <> 0 OR datepart('minute', s) <> 0 OR datepart('microseconds', s) <> 0
            THEN error('PGERR[0A000] generate_series(timestamptz) by a step of days or months with a time part '
                || 'under a TimeZone other than UTC is not supported by walsender-proxy')::TIMESTAMPTZ[]
        ELSE list_filter(
            list_transform(generate_series(a, CASE WHEN s < INTERVAL 0 DAY THEN b - INTERVAL 1 DAY ELSE b END, s),
                lambda v, n: CASE WHEN n = 1 THEN v ELSE v::TIMESTAMP::TIMESTAMPTZ END),
            lambda v: CASE WHEN s < INTERVAL 0 DAY THEN v >= b ELSE v <= b END) END)""",
    # ordered-set aggregates over the group's sorted non-NULL values (``l``), as
    # orderedsetaggs.c computes them: percentile_cont's interpolation in float8,
    # percentile_disc's ceil(p * n)-th value; p outside [0, 1] is 22003 (even in an
    # empty group), a NULL p a NULL result; list() of no row is NULL, not []
    "pgc_percentile_bad": """MACRO pgc_percentile_bad(p) AS (error('PGERR[22003] percentile value '
        || CASE WHEN isnan(p) THEN 'NaN' ELSE printf('%g', p) END || ' is not between 0 and 1'))""",
    "pgc_percentile_cont": """MACRO pgc_percentile_cont(p, l) AS (CASE WHEN p IS NULL THEN NULL
        WHEN p < 0 OR p > 1 OR isnan(p) THEN pgc_percentile_bad(p)::DOUBLE
        WHEN l IS NULL OR len(l) = 0 THEN NULL
        WHEN floor(p * (len(l) - 1)) = ceil(p * (len(l) - 1)) THEN l[floor(p * (len(l) - 1))::BIGINT + 1]
        ELSE l[floor(p * (len(l) - 1))::BIGINT + 1] + (l[ceil(p * (len(l) - 1))::BIGINT + 1]
            - l[floor(p * (len(l) - 1))::BIGINT + 1]) * (p * (len(l) - 1) - floor(p * (len(l) - 1))) END)""",
    "pgc_percentile_disc": """MACRO pgc_percentile_disc(p, l) AS (CASE WHEN p IS NULL THEN NULL
        WHEN p < 0 OR p > 1 OR isnan(p) THEN pgc_percentile_bad(p)
        WHEN l IS NULL OR len(l) = 0 THEN NULL
        ELSE l[greatest(ceil(p * len(l)), 1)::BIGINT] END)""",
    "pgc_percentiles_cont": """MACRO pgc_percentiles_cont(ps, l) AS (CASE WHEN ps IS NULL THEN NULL
        WHEN list_bool_or(list_transform(ps, lambda q: q < 0 OR q > 1 OR isnan(q)))
            THEN pgc_percentile_bad(list_filter(ps, lambda q: q < 0 OR q > 1 OR isnan(q))[1])::DOUBLE[]
        WHEN l IS NULL OR len(l) = 0 THEN NULL
        ELSE list_transform(ps, lambda q: pgc_percentile_cont(q, l)) END)""",
    "pgc_percentiles_disc": """MACRO pgc_percentiles_disc(ps, l) AS (CASE WHEN ps IS NULL THEN NULL
        WHEN list_bool_or(list_transform(ps, lambda q: q < 0 OR q > 1 OR isnan(q)))
            THEN pgc_percentile_bad(list_filter(ps, lambda q: q < 0 OR q > 1 OR isnan(q))[1])
        WHEN l IS NULL OR len(l) = 0 THEN NULL
        ELSE list_transform(ps, lambda q: pgc_percentile_disc(q, l)) END)""",
    # interval_div: PostgreSQL's cascade of fractional months into days (30 a month) and of
    # fractional days into time, each rounded to microseconds (DuckDB's integer division
    # setting leaves it no interval / number)
    "pgc_interval_div": """MACRO pgc_interval_div(i, f) AS (CASE WHEN f = 0 THEN error('PGERR[22012] division by zero') WHEN isnan(f) THEN error('PGERR[22008] interval out of range') ELSE to_months(trunc((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f)::INTEGER) + to_days((trunc(datepart('day', i)::DOUBLE / f) + (CASE WHEN abs((round_even((datepart('day', i)::DOUBLE / f - trunc(datepart('day', i)::DOUBLE / f) + (round_even(((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f - trunc((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f)) * 30 * 1000000, 0) / 1000000) - trunc((round_even(((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f - trunc((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f)) * 30 * 1000000, 0) / 1000000))) * 86400 * 1000000, 0) / 1000000)) >= 86400 THEN trunc((round_even((datepart('day', i)::DOUBLE / f - trunc(datepart('day', i)::DOUBLE / f) + (round_even(((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f - trunc((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f)) * 30 * 1000000, 0) / 1000000) - trunc((round_even(((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f - trunc((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f)) * 30 * 1000000, 0) / 1000000))) * 86400 * 1000000, 0) / 1000000) / 86400) ELSE 0 END) + trunc((round_even(((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f - trunc((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f)) * 30 * 1000000, 0) / 1000000)))::INTEGER) + to_microseconds(round_even((datepart('hour', i)::BIGINT * 3600000000 + datepart('minute', i)::BIGINT * 60000000 + datepart('microseconds', i))::DOUBLE / f + ((round_even((datepart('day', i)::DOUBLE / f - trunc(datepart('day', i)::DOUBLE / f) + (round_even(((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f - trunc((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f)) * 30 * 1000000, 0) / 1000000) - trunc((round_even(((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f - trunc((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f)) * 30 * 1000000, 0) / 1000000))) * 86400 * 1000000, 0) / 1000000) - (CASE WHEN abs((round_even((datepart('day', i)::DOUBLE / f - trunc(datepart('day', i)::DOUBLE / f) + (round_even(((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f - trunc((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f)) * 30 * 1000000, 0) / 1000000) - trunc((round_even(((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f - trunc((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f)) * 30 * 1000000, 0) / 1000000))) * 86400 * 1000000, 0) / 1000000)) >= 86400 THEN trunc((round_even((datepart('day', i)::DOUBLE / f - trunc(datepart('day', i)::DOUBLE / f) + (round_even(((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f - trunc((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f)) * 30 * 1000000, 0) / 1000000) - trunc((round_even(((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f - trunc((datepart('year', i) * 12 + datepart('month', i))::DOUBLE / f)) * 30 * 1000000, 0) / 1000000))) * 86400 * 1000000, 0) / 1000000) / 86400) ELSE 0 END) * 86400) * 1000000, 0)::BIGINT) END)""",
    "pgc_interval_guard": """MACRO pgc_interval_guard(i) AS (CASE WHEN abs(datepart('hour', i)::HUGEINT * 3600000000
            + datepart('minute', i)::HUGEINT * 60000000 + datepart('microseconds', i)) > 9223372036854775
        THEN error('PGERR[0A000] intervals with more than 2562047 hours are not supported by walsender-proxy') ELSE i END)""",
    # date ± integer past PostgreSQL's dates (4714-11-24 BC to 5874897-12-31), which DuckDB's
    # go beyond: date_pli's and date_mii's error
    "pgc_date_guard": """MACRO pgc_date_guard(d) AS (CASE WHEN NOT isinf(d) AND ((d - DATE '1970-01-01') < -2440588
            OR (d - DATE '1970-01-01') >= 2145042906) THEN error('PGERR[22008] date out of range') ELSE d END)""",
    # a timestamp computed before PostgreSQL's first (4714-11-24 BC), where DuckDB's go on
    "pgc_timestamp_guard": """MACRO pgc_timestamp_guard(t) AS (CASE WHEN NOT isinf(t) AND epoch_us(t) < -210866803200000000
        THEN error('PGERR[22008] timestamp out of range') ELSE t END)""",
    # a timestamptz rounded to a multiple of ``scale`` microseconds (timestamp(p)'s typmod)
    # (half away from zero counted from PostgreSQL's epoch, 2000-01-01)
    "pgc_round_us": f"""MACRO pgc_round_us(ts, scale) AS (CASE WHEN isinf(ts) THEN ts::TIMESTAMPTZ
        WHEN epoch_us(ts) >= {PG_EPOCH_UNIX_US}
            THEN timezone('UTC', make_timestamp(((epoch_us(ts) - {PG_EPOCH_UNIX_US} + scale // 2) // scale) * scale + {PG_EPOCH_UNIX_US}))
        ELSE timezone('UTC', make_timestamp({PG_EPOCH_UNIX_US} - (({PG_EPOCH_UNIX_US} - epoch_us(ts) + scale // 2) // scale) * scale)) END)""",
    # time(p): rounded half up (a time is never negative; 23:59:59.99 may round to 24:00)
    "pgc_round_time": """MACRO pgc_round_time(t, scale) AS (
        make_time(0, 0, 0) + to_microseconds(((epoch_us(t) + scale // 2) // scale) * scale))""",
    # upper/lower under the C locale the proxy reports (lc_ctype): ASCII letters only
    # (DuckDB's map é to É and ß to ẞ); ILIKE compares what lower gives
    "pgc_upper_c": """MACRO pgc_upper_c(s) AS translate(s, 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')""",
    "pgc_lower_c": """MACRO pgc_lower_c(s) AS translate(s, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')""",
    # AT TIME ZONE / timezone(z, x): a POSIX-style zone ('UTC+3', '+03:00') counts hours west
    # of Greenwich in PostgreSQL and east in ICU; the tz database's own such names
    # (Etc/GMT+3, EST5EDT …) mean the same to both
    "pgc_tz_guard": """MACRO pgc_tz_guard(z) AS (CASE WHEN regexp_matches(z, '^[+-]|[0-9]')
        AND NOT regexp_matches(lower(z), '^(etc/.*|est5edt|cst6cdt|mst7mdt|pst8pdt|gmt0|gmt[+-]0)$')
        THEN error('PGERR[0A000] time zone "' || z || '" (a POSIX-style offset) is not supported by walsender-proxy')
        ELSE z END)""",
    # x LIKE ANY/ALL (array): each element a pattern with the backslash escape, the
    # answer three-valued as ANY/ALL's
    "pgc_like_any": """MACRO pgc_like_any(x, a) AS (CASE WHEN a IS NULL THEN NULL WHEN len(a) = 0 THEN false
        WHEN list_bool_or(list_transform(a, lambda pgc_e: like_escape(x, pgc_e, '\\'))) THEN true
        WHEN list_count(list_transform(a, lambda pgc_e: like_escape(x, pgc_e, '\\'))) < len(a) THEN NULL ELSE false END)""",
    "pgc_like_all": """MACRO pgc_like_all(x, a) AS (CASE WHEN a IS NULL THEN NULL WHEN len(a) = 0 THEN true
        WHEN list_contains(list_transform(a, lambda pgc_e: like_escape(x, pgc_e, '\\')), false) THEN false
        WHEN list_count(list_transform(a, lambda pgc_e: like_escape(x, pgc_e, '\\'))) < len(a) THEN NULL ELSE true END)""",
    "pgc_notlike_any": """MACRO pgc_notlike_any(x, a) AS (CASE WHEN a IS NULL THEN NULL WHEN len(a) = 0 THEN false
        WHEN list_bool_or(list_transform(a, lambda pgc_e: NOT like_escape(x, pgc_e, '\\'))) THEN true
        WHEN list_count(list_transform(a, lambda pgc_e: NOT like_escape(x, pgc_e, '\\'))) < len(a) THEN NULL ELSE false END)""",
    "pgc_notlike_all": """MACRO pgc_notlike_all(x, a) AS (CASE WHEN a IS NULL THEN NULL WHEN len(a) = 0 THEN true
        WHEN list_contains(list_transform(a, lambda pgc_e: NOT like_escape(x, pgc_e, '\\')), false) THEN false
        WHEN list_count(list_transform(a, lambda pgc_e: NOT like_escape(x, pgc_e, '\\'))) < len(a) THEN NULL ELSE true END)""",
    "pgc_ilike_any": """MACRO pgc_ilike_any(x, a) AS (CASE WHEN a IS NULL THEN NULL WHEN len(a) = 0 THEN false
        WHEN list_bool_or(list_transform(a, lambda pgc_e: ilike_escape(x, pgc_e, '\\'))) THEN true
        WHEN list_count(list_transform(a, lambda pgc_e: ilike_escape(x, pgc_e, '\\'))) < len(a) THEN NULL ELSE false END)""",
    "pgc_ilike_all": """MACRO pgc_ilike_all(x, a) AS (CASE WHEN a IS NULL THEN NULL WHEN len(a) = 0 THEN true
        WHEN list_contains(list_transform(a, lambda pgc_e: ilike_escape(x, pgc_e, '\\')), false) THEN false
        WHEN list_count(list_transform(a, lambda pgc_e: ilike_escape(x, pgc_e, '\\'))) < len(a) THEN NULL ELSE true END)""",
    "pgc_notilike_any": """MACRO pgc_notilike_any(x, a) AS (CASE WHEN a IS NULL THEN NULL WHEN len(a) = 0 THEN false
        WHEN list_bool_or(list_transform(a, lambda pgc_e: NOT ilike_escape(x, pgc_e, '\\'))) THEN true
        WHEN list_count(list_transform(a, lambda pgc_e: NOT ilike_escape(x, pgc_e, '\\'))) < len(a) THEN NULL ELSE false END)""",
    "pgc_notilike_all": """MACRO pgc_notilike_all(x, a) AS (CASE WHEN a IS NULL THEN NULL WHEN len(a) = 0 THEN true
        WHEN list_contains(list_transform(a, lambda pgc_e: NOT ilike_escape(x, pgc_e, '\\')), false) THEN false
        WHEN list_count(list_transform(a, lambda pgc_e: NOT ilike_escape(x, pgc_e, '\\'))) < len(a) THEN NULL ELSE true END)""",
    # string functions whose DuckDB namesakes answer differently
    "pgc_to_hex": """MACRO pgc_to_hex(x) AS (lower(to_hex(x::BIGINT)))""",
    "pgc_to_hex4": """MACRO pgc_to_hex4(x) AS (lower(to_hex(x::BIGINT & 4294967295)))""",
    # gcd/lcm of integers with PostgreSQL's result types and range checks
    "pgc_gcd4": """MACRO pgc_gcd4(a, b) AS (CASE WHEN gcd(a::BIGINT, b::BIGINT) > 2147483647
        THEN error('PGERR[22003] integer out of range') ELSE gcd(a::BIGINT, b::BIGINT)::INTEGER END)""",
    "pgc_lcm4": """MACRO pgc_lcm4(a, b) AS (CASE WHEN abs(lcm(a::BIGINT, b::BIGINT)) > 2147483647
        THEN error('PGERR[22003] integer out of range') ELSE abs(lcm(a::BIGINT, b::BIGINT))::INTEGER END)""",
    "pgc_gcd8": """MACRO pgc_gcd8(a, b) AS (CASE WHEN gcd(a::HUGEINT, b::HUGEINT) > 9223372036854775807
        THEN error('PGERR[22003] bigint out of range') ELSE gcd(a::HUGEINT, b::HUGEINT)::BIGINT END)""",
    "pgc_lcm8": """MACRO pgc_lcm8(a, b) AS (CASE WHEN abs(lcm(a::HUGEINT, b::HUGEINT)) > 9223372036854775807
        THEN error('PGERR[22003] bigint out of range') ELSE abs(lcm(a::HUGEINT, b::HUGEINT))::BIGINT END)""",
    "pgc_sha256": """MACRO pgc_sha256(x) AS (unhex(sha256(x)))""",
    "pgc_chr": """MACRO pgc_chr(n) AS (CASE
        WHEN n = 0 THEN error('PGERR[54000] null character not permitted')
        WHEN n < 0 THEN error('PGERR[22023] character number must be positive')
        ELSE chr(n) END)""",
    # substr(s, from[, for]): PostgreSQL counts a start below 1 as positions before the
    # string (substr('123', -1, 5) is '123'); DuckDB counts it from the end
    "pgc_substr2": """MACRO pgc_substr2(s, f) AS (CASE
        WHEN s IS NULL OR f IS NULL THEN NULL ELSE substring(s, greatest(f, 1)) END)""",
    "pgc_substr3": """MACRO pgc_substr3(s, f, n) AS (CASE
        WHEN s IS NULL OR f IS NULL OR n IS NULL THEN NULL
        WHEN n < 0 THEN error('PGERR[22011] negative substring length not allowed')
        WHEN f::BIGINT + n <= 1 THEN ''
        ELSE substring(s, greatest(f, 1), (f::BIGINT + n - greatest(f, 1))::BIGINT) END)""",
    # split_part: 0 is an error, an empty delimiter splits nothing, negatives count back
    "pgc_split_part": """MACRO pgc_split_part(s, d, n) AS (CASE
        WHEN s IS NULL OR d IS NULL OR n IS NULL THEN NULL
        WHEN n = 0 THEN error('PGERR[22023] field position must not be zero')
        WHEN d = '' THEN CASE WHEN n IN (1, -1) THEN s ELSE '' END
        ELSE coalesce(list_extract(string_split(s, d), n), '') END)""",
    # txid_snapshot / pg_snapshot text (xmin:xmax:xip,…): its parts, and XidInMVCCSnapshot's
    # answer for an xid (below xmin: visible; at or past xmax, or in progress: not)
    "pgc_snapshot_xmin": "MACRO pgc_snapshot_xmin(s) AS CAST(split_part(s, ':', 1) AS BIGINT)",
    "pgc_snapshot_xmax": "MACRO pgc_snapshot_xmax(s) AS CAST(split_part(s, ':', 2) AS BIGINT)",
    "pgc_snapshot_xmin8": "MACRO pgc_snapshot_xmin8(s) AS CAST(split_part(s, ':', 1) AS UBIGINT)",
    "pgc_snapshot_xmax8": "MACRO pgc_snapshot_xmax8(s) AS CAST(split_part(s, ':', 2) AS UBIGINT)",
    "pgc_visible_in_snapshot": """MACRO pgc_visible_in_snapshot(x, s) AS (CASE
        WHEN x IS NULL OR s IS NULL THEN NULL
        WHEN x < CAST(split_part(s, ':', 1) AS BIGINT) THEN true
        WHEN x >= CAST(split_part(s, ':', 2) AS BIGINT) THEN false
        ELSE NOT list_contains(CAST(string_split(nullif(split_part(s, ':', 3), ''), ',') AS BIGINT[]), CAST(x AS BIGINT)) END)""",
    # pg_size_pretty(bigint): each unit's size a division (toward zero, as C's) of the bytes,
    # half-rounded away from zero (half_rounded); a shift would round negatives down
    "pgc_pg_size_pretty": """MACRO pgc_pg_size_pretty(b) AS (CASE
        WHEN b IS NULL THEN NULL::VARCHAR
        WHEN abs(b::HUGEINT) < 10240 THEN b || ' bytes'
        WHEN abs(b // 512) < 20479 THEN pgc_half_rounded(b // 512) || ' kB'
        WHEN abs(b // 524288) < 20479 THEN pgc_half_rounded(b // 524288) || ' MB'
        WHEN abs(b // 536870912) < 20479 THEN pgc_half_rounded(b // 536870912) || ' GB'
        WHEN abs(b // 549755813888) < 20479 THEN pgc_half_rounded(b // 549755813888) || ' TB'
        ELSE pgc_half_rounded(b // 562949953421312) || ' PB' END)""",
    # namein's length: a value of more than 63 bytes cut to the longest prefix of whole
    # characters that fits
    "pgc_name_array_in": "MACRO pgc_name_array_in(a) AS (list_transform(a, lambda pgc_x: pgc_name_in(pgc_x)))",
    "pgc_name_in": """MACRO pgc_name_in(s) AS (CASE WHEN strlen(s) <= 63 THEN s
        ELSE left(s, list_max(list_filter(range(0, 64), lambda k: strlen(left(s, k)) <= 63))) END)""",
    # pg_lsn_in of a computed text (a constant is read by literals.pg_lsn_in)
    "pgc_pg_lsn_in": """MACRO pgc_pg_lsn_in(s) AS (CASE WHEN s IS NULL THEN NULL
        WHEN NOT regexp_full_match(s, '[0-9a-fA-F]{1,8}/[0-9a-fA-F]{1,8}')
            THEN error('PGERR[22P02] invalid input syntax for type pg_lsn: "' || s || '"')
        ELSE printf('%X/%X', ('0x' || split_part(s, '/', 1))::UBIGINT, ('0x' || split_part(s, '/', 2))::UBIGINT) END)""",
    # pg_lsn_pli / pg_lsn_mii: an LSN moved by a number of bytes, the sum rounded half away
    # from zero (numeric → uint64), 22023 outside the LSNs
    "pgc_lsn_move": """MACRO pgc_lsn_move(l, n) AS (CASE WHEN l IS NULL OR n IS NULL THEN NULL
        WHEN pgc_lsn_moved(l, n) < 0 OR pgc_lsn_moved(l, n) > 18446744073709551615
            THEN error('PGERR[22023] pg_lsn out of range')
        ELSE printf('%X/%X', pgc_lsn_moved(l, n) >> 32, pgc_lsn_moved(l, n) & 4294967295) END)""",
    # numeric_pg_lsn: the number rounded half away from zero (numeric → uint64); 0A000 for
    # NaN and the infinities, 22023 outside the LSNs
    "pgc_pg_lsn_numeric": """MACRO pgc_pg_lsn_numeric(n) AS (CASE WHEN n IS NULL THEN NULL
        WHEN n = 'NaN' THEN error('PGERR[0A000] cannot convert NaN to pg_lsn')
        WHEN n IN ('Infinity', '-Infinity') THEN error('PGERR[0A000] cannot convert infinity to pg_lsn')
        WHEN abs(n::DOUBLE) >= 1e20 OR round(n::DECIMAL(38, 17))::HUGEINT NOT BETWEEN 0 AND 18446744073709551615
            THEN error('PGERR[22023] pg_lsn out of range')
        ELSE printf('%X/%X', round(n::DECIMAL(38, 17))::HUGEINT >> 32, round(n::DECIMAL(38, 17))::HUGEINT & 4294967295) END)""",
    "pgc_lsn_moved": "MACRO pgc_lsn_moved(l, n) AS (round(l::DECIMAL(38, 6) + n::DECIMAL(38, 6))::HUGEINT)",
    "pgc_half_rounded": "MACRO pgc_half_rounded(x) AS ((x + CASE WHEN x < 0 THEN -1 ELSE 1 END) // 2)",
    **array_exprs.MACROS,
}


#: Table of per-statement values the server computes (txid_current(), pg_current_wal_lsn()…).
SERVER_VALUES = "pgc_server_values"


def is_table_name(name: str) -> bool:
    return (
        name in BY_REGISTERED
        or name in _HELPER_TABLES
        or name in SESSION_TABLES
        or name == SERVER_VALUES
    )


def _deps(body: str, own: str) -> frozenset[str]:
    names = set(re.findall(r"\bpgc_\w+", body)) - {own}
    return frozenset(n for n in names if n in _MACROS or is_table_name(n))


#: Object name → (CREATE TEMP … body, names it depends on).
OBJECTS: Mapping[str, tuple[str, frozenset[str]]] = MappingProxyType(
    {name: (body, _deps(body, name)) for name, body in _MACROS.items()}
)

#: Connection settings that make DuckDB compute like PostgreSQL (NULL ordering, int division).
PG_COMPAT_SETTINGS = (
    "SET default_null_order = 'nulls_last_on_asc_first_on_desc'",
    "SET integer_division = true",
)


def dependency_closure(needs: Iterable[str]) -> list[str]:
    """``needs`` plus everything they use, dependencies first (creation order)."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(n: str) -> None:
        if n in seen:
            return
        seen.add(n)
        if n in OBJECTS:
            for d in sorted(OBJECTS[n][1]):
                visit(d)
        order.append(n)

    for n in sorted(needs):
        visit(n)
    return order


#: Everything :func:`register` registers.
ALL_OBJECTS = frozenset({*BY_REGISTERED, *_HELPER_TABLES, *OBJECTS, *SESSION_TABLES})


class CatalogBinding:
    """The emulated catalog as seen by one DuckDB connection (one client session).

    ``ensure`` is called before each statement with the statement's ``Rewritten.needs``;
    tables are (re-)registered only when their Arrow object changed (new catalog version,
    changed session, fresh injected rows), macros and views are created once per connection.
    """

    def __init__(self, con: Any) -> None:
        self.con = con
        self._registered: dict[str, pa.Table] = {}
        self._created: set[str] = set()
        self._session_key: tuple[Any, ...] | None = None
        self._session_snap: CatalogSnapshot | None = None
        self._session_tables: dict[str, pa.Table] = {}
        for stmt in PG_COMPAT_SETTINGS:
            con.execute(stmt)

    def ensure(
        self,
        needs: Iterable[str],
        snapshot: CatalogSnapshot,
        session: SessionInfo,
        *,
        injected: Mapping[str, pa.Table] | None = None,
        server_values: Mapping[str, Any] | None = None,
    ) -> None:
        """Make every object in ``needs`` (and what they use) usable on the connection.

        ``injected``: rows the server owns, by pg_catalog relation name
        (``{"pg_replication_slots": make_table(...)}``); without it those views are empty
        (pg_stat_activity shows this session only). ``server_values``: values for the
        server-evaluated functions the statement calls (``Rewritten.server_values``).
        """
        key = session.key()
        if key != self._session_key or snapshot is not self._session_snap:
            self._session_key, self._session_snap = key, snapshot
            self._session_tables = {}
        for name in dependency_closure(needs):
            if name in OBJECTS:
                if name not in self._created:
                    self.con.execute("CREATE OR REPLACE TEMP " + OBJECTS[name][0])
                    self._created.add(name)
                continue
            table = self._table_for(name, snapshot, session, injected, server_values)
            if self._registered.get(name) is not table:
                self.con.register(name, table)
                self._registered[name] = table

    def _table_for(
        self,
        name: str,
        snapshot: CatalogSnapshot,
        session: SessionInfo,
        injected: Mapping[str, pa.Table] | None,
        server_values: Mapping[str, Any] | None,
    ) -> pa.Table:
        if name == SERVER_VALUES:
            values = dict(server_values or {})
            return pa.Table.from_pylist(
                [{"k": k, "v": None if v is None else str(v)} for k, v in values.items()],
                schema=pa.schema([("k", pa.string()), ("v", pa.string())]),
            )
        d = BY_REGISTERED.get(name)
        if d is not None and injected and d.name in injected:
            d = registered_relation(name, snapshot.server.server_version_num)
            return injected[d.name].cast(d.arrow_schema)
        if name in SESSION_TABLES:
            t = self._session_tables.get(name)
            if t is None:
                t = build_session_table(name, snapshot, session)
                self._session_tables[name] = t
            return t
        return snapshot.table(name)


def register(
    con: Any,
    snapshot: CatalogSnapshot,
    session: SessionInfo,
    *,
    injected: Mapping[str, pa.Table] | None = None,
) -> CatalogBinding:
    """Register the whole emulated catalog on ``con`` (≈ tens of ms; prefer ``ensure``)."""
    binding = CatalogBinding(con)
    binding.ensure(ALL_OBJECTS, snapshot, session, injected=injected)
    return binding


# ---------------------------------------------------------------------------------------------
# errors

_PGERR = re.compile(r"PGERR\[([0-9A-Z]{5})\] (.*)", re.S)


_DUCK_NO_FUNCTION = re.compile(
    r"(No function matches the given name and argument types|Could not choose a best candidate function for the function call) '([^(']+)\((.*)\)'"
)
_DUCK_MACRO = re.compile(r"Macro (\w+)\(\) does not support the supplied arguments")
#: DuckDB's type names as PostgreSQL shows them in 42883's text.
_PG_TYPE_NAMES = {
    "INTEGER": "integer", "BIGINT": "bigint", "SMALLINT": "smallint", "TINYINT": "smallint",
    "VARCHAR": "text", "DOUBLE": "double precision", "FLOAT": "real", "BOOLEAN": "boolean",
    "DATE": "date", "TIMESTAMP": "timestamp without time zone", "TIMESTAMP WITH TIME ZONE":
    "timestamp with time zone", "TIME": "time without time zone", "INTERVAL": "interval",
    "BLOB": "bytea", "UUID": "uuid", "JSON": "json", "HUGEINT": "numeric", "NULL": "unknown",
    "UINTEGER": "oid",
}  # fmt: skip


def _pg_type_name(duck: str) -> str:
    duck = duck.strip()
    if duck.endswith("[]"):
        return _pg_type_name(duck[:-2]) + "[]"
    if duck.startswith("DECIMAL"):
        return "numeric"
    if duck.endswith("_LITERAL"):  # a constant not yet typed: 1 is an integer, 'x' unknown
        return {"INTEGER_LITERAL": "integer", "STRING_LITERAL": "unknown"}.get(duck, "numeric")
    return _PG_TYPE_NAMES.get(duck, duck.lower())


def no_such_function(message: str) -> PgError | None:
    """DuckDB's binder finding no (or no single) function for the arguments, worded as
    PostgreSQL's 42883 / 42725 (DuckDB's wording and the 42P01 it would be mapped to are
    not PostgreSQL's)."""
    m = _DUCK_MACRO.search(message)
    if m:
        return PgError(
            "42883", f"function {m.group(1)} does not exist",
            hint="No function matches the given name and argument types. You might need to add explicit type casts.",
        )  # fmt: skip
    m = _DUCK_NO_FUNCTION.search(message)
    if m is None:
        return None
    name, raw = m.group(2), m.group(3)
    depth, args, cur = 0, [], ""
    for ch in raw:  # split on top-level commas (DECIMAL(18,3), STRUCT(...) hold their own)
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        args.append(cur)
    types = [_pg_type_name(a) for a in args]
    ambiguous = m.group(1).startswith("Could not")
    if not name.replace("_", "").isalnum():  # an operator
        shown = (
            f"{types[0]} {name} {types[1]}"
            if len(types) == 2
            else f"{name} {types[0]}"
            if types
            else name
        )
        if ambiguous:
            return PgError(
                "42725",
                f"operator is not unique: {shown}",
                hint="Could not choose a best candidate operator. You might need to add explicit type casts.",
            )
        return PgError(
            "42883",
            f"operator does not exist: {shown}",
            hint="No operator matches the given name and argument types. You might need to add explicit type casts.",
        )
    shown = f"{name}({', '.join(types)})"
    if ambiguous:
        return PgError(
            "42725",
            f"function {shown} is not unique",
            hint="Could not choose a best candidate function. You might need to add explicit type casts.",
        )
    return PgError(
        "42883",
        f"function {shown} does not exist",
        hint="No function matches the given name and argument types. You might need to add explicit type casts.",
    )


_INT_NAMES = {"INT16": "smallint", "INT32": "integer", "INT64": "bigint"}


#: DuckDB's type names as PostgreSQL's messages print the types they stand for.
_DUCK_DISPLAY = {
    "SMALLINT": "smallint", "INTEGER": "integer", "BIGINT": "bigint", "DOUBLE": "double precision",
    "FLOAT": "real", "BOOLEAN": "boolean", "DATE": "date", "VARCHAR": "text", "BLOB": "bytea",
    "UUID": "uuid", "INTERVAL": "interval", "TIME": "time without time zone",
    "TIMESTAMP": "timestamp without time zone", "TIMESTAMP WITH TIME ZONE": "timestamp with time zone",
}  # fmt: skip


#: DuckDB binder errors of statements PostgreSQL refuses too, as PostgreSQL words them:
#: (pattern, SQLSTATE, message with ``{0}`` for the pattern's group, detail).
_BINDER_ERRORS: tuple[tuple[re.Pattern[str], str, str, str | None], ...] = tuple(
    (re.compile(p), code, msg, detail)
    for p, code, msg, detail in (
        (r'^Referenced table "([^"]+)" not found', "42P01", 'missing FROM-clause entry for table "{0}"', None),
        (r'^Ambiguous reference to column name "([^"]+)"', "42702", 'column reference "{0}" is ambiguous', None),
        (r"^(WHERE|HAVING) clause cannot contain window functions", "42P20", "window functions are not allowed in {0}", None),
        (r"^GROUP BY clause cannot contain window functions", "42P20", "window functions are not allowed in GROUP BY", None),
        (r"^LATERAL join cannot contain aggregates", "42803", "aggregate functions are not allowed in FROM clause of their own query level", None),
        (r"^The combining JOIN type must be INNER or LEFT for a LATERAL reference", "42P10",
         "invalid reference to FROM-clause entry in a LATERAL item", "The combining JOIN type must be INNER or LEFT for a LATERAL reference."),
        (r"^(aggregate functions are not allowed in FILTER)", "42803", "{0}", None),
        (r"^aggregate function calls cannot be nested", "42803", "aggregate function calls cannot be nested", None),
        (r'^table "[^"]+" has \d+ columns available but \d+ columns specified', "42P10", "{0}", None),
        (r'^(column "[^"]+" must appear in the GROUP BY clause or be used in an aggregate function)', "42803", "{0}", None),
        (r'^Circular reference to CTE "([^"]+)"', "42P19", 'recursive reference to query "{0}" must not appear within a subquery', None),
        (r"^SELECT clause cannot contain DEFAULT clause", "0A000", "DEFAULT in UPDATE … SET (…) = (…) is not supported by walsender-proxy", None),
        (r'^Unknown ordered aggregate "([^"]+)"', "0A000", "{0}() WITHIN GROUP (a hypothetical-set aggregate) is not supported by walsender-proxy", None),
    )
)


def _binder_error(first: str) -> PgError | None:
    for pattern, code, message, detail in _BINDER_ERRORS:
        m = pattern.search(first)
        if m:
            return PgError(code, message.format(m.group(1) if m.groups() else m.group(0)), detail=detail)
    return None


def translate_error(exc: BaseException) -> PgError:
    """A DuckDB exception raised while running rewritten SQL, as PostgreSQL would report it."""
    if isinstance(exc, PgError):
        return exc
    full = disk_full_error(exc, "could not write to temporary file")
    if full is not None:
        return full
    text = str(exc)
    m = _PGERR.search(text)
    if m:
        msg = m.group(2).strip().splitlines()[0]
        return PgError(m.group(1), msg)
    name = type(exc).__name__
    first = text.splitlines()[0] if text else name
    first = re.sub(r"^[A-Za-z ]+ Error: ", "", first)
    m = re.search(r'Referenced column "([^"]+)" not found', text)
    if m:
        return PgError("42703", f'column "{m.group(1)}" does not exist')
    if "Division by zero" in text or "division by zero" in text:
        return PgError("22012", "division by zero")
    if first.endswith("interval cannot be 0!"):  # (generate_series' step)
        return PgError("22023", "step size cannot equal zero")
    if first == "Interval infinite bounds not supported":  # (a series to ±infinity, endless)
        return PgError("0A000", "generate_series to an infinite bound is not supported by walsender-proxy")
    m = re.search(r"Cannot compare values of type (\w+) and (\w+) in IN/ANY/ALL clause", first)
    if (
        m and m.group(1) in _DUCK_DISPLAY and m.group(2) in _DUCK_DISPLAY
    ):  # (IN (SELECT …) of another type)
        return PgError(
            "42883",
            f"operator does not exist: {_DUCK_DISPLAY[m.group(1)]} = {_DUCK_DISPLAY[m.group(2)]}",
            hint="No operator matches the given name and argument types. You might need to add explicit type casts.",
        )
    m = re.search(r"Values were not provided for the following parameters: (\d+)", text)
    if m:
        return PgError("42P02", f"there is no parameter ${m.group(1)}")
    if "More than one row returned by a subquery used as an expression" in text:
        return PgError("21000", "more than one row returned by a subquery used as an expression")
    m = re.search(
        r'column "([^"]+)" must appear in the GROUP BY clause or must be part of an aggregate', text
    )
    if m:  # (PostgreSQL names the column with its table: DuckDB's binder gives the name only)
        return PgError(
            "42803",
            f'column "{m.group(1)}" must appear in the GROUP BY clause or be used in an aggregate function',
        )
    if "Like pattern must not end with escape character" in text:
        return PgError("22025", "LIKE pattern must not end with escape character")
    if "Invalid escape string" in text:
        return PgError(
            "22025", "invalid escape string", hint="Escape string must be empty or one character."
        )
    if (name == "ConversionException" and re.search(
        r"not in timestamp range|overflows timestamp range", first
    )) or first == "Timestamp out of range":
        # a result past DuckDB's timestamps, which end where the lake's do: PostgreSQL's may
        # go on to 294276 (or raise 22008 sooner than that), so it is refused
        return PgError(
            "0A000",
            "timestamps after 294247-01-10 04:00:54.775806 are not supported by walsender-proxy",
        )
    if name == "ConversionException":
        return PgError("22P02", first)
    if name == "OutOfRangeException" and re.match(r"Overflow in \w+ of INTERVAL", first):
        return PgError(
            "22008", "interval out of range"
        )  # (its 64-bit microseconds, as PostgreSQL's)
    m = re.search(r"Unknown TimeZone '(.*)'!", first)
    if m:
        return PgError("22023", f'time zone "{m.group(1)}" not recognized')
    m = re.search(
        r"Overflow in \w+ of (INT16|INT32|INT64)\b|out of range for the destination type (INT16|INT32|INT64)\b",
        first,
    )
    if name == "OutOfRangeException" and m:  # (an integer operator's or cast's overflow)
        return PgError("22003", f"{_INT_NAMES[m.group(1) or m.group(2)]} out of range")
    if name == "OutOfRangeException":
        return PgError("22003", first)
    if name in ("BinderException", "CatalogException"):
        worded = no_such_function(text) or _binder_error(first)
        if worded is not None:
            return worded
        if name == "BinderException" and "Function" not in first:
            # (a statement the translation let through and DuckDB's binder would not take:
            # refused, DuckDB's words kept for a report)
            return PgError("0A000", "this statement is not supported by walsender-proxy", detail=first)
        return PgError("42883" if "Function" in first else "42P01", first)
    if name == "ParserException":
        return _binder_error(first) or PgError("42601", first)
    # An interrupt that stops DuckDB inside an Arrow stream (a result read batch by batch)
    # reaches Python as pyarrow's OSError carrying DuckDB's text, not as InterruptException.
    if name == "InterruptException" or text.startswith("INTERRUPT Error"):
        return PgError("57014", "canceling statement due to user request")
    return PgError("XX000", first)
