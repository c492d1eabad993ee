"""Sequences for SQL: CREATE / ALTER / DROP SEQUENCE read from PostgreSQL's syntax tree, and
``nextval``, ``currval``, ``setval``, ``lastval`` with a session's own state, as PostgreSQL 15
keeps it per backend (``SeqTable``): the value ``currval`` returns, the values fetched ahead
into the session's cache (``CACHE n``), and the sequence ``lastval`` names.

The definitions are catalog objects (transactional, with the lake's DDL:
:mod:`walsender_proxy.lake.sequence_ddl`); the counters are not (a rolled-back nextval stays
consumed), and survive a crash without handing a value out twice
(:mod:`walsender_proxy.lake.sequences`). Sequences are not replicated by pgoutput, as in
PostgreSQL 15.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence as Seq
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pglast import ast

from decoding.catalog import Catalog, Sequence, Table
from decoding.errors import PgError
from decoding.pgtypes import UnknownTypeError, parse_type
from walsender_proxy.backend.outcomes import Notice
from walsender_proxy.lake import Lake, Transaction
from walsender_proxy.sql import pgcatalog_defs
from walsender_proxy.sql.ddl_names import cascaded, ident_parts, qualified

_INT_TYPES = {"int2", "int4", "int8"}


def unsupported(what: str) -> PgError:
    return PgError("0A000", f"{what} is not supported by walsender-proxy")


# ---------------------------------------------------------------------------------------------
# DDL


def _int64(d: ast.DefElem) -> int:
    """defGetInt64: an integer, or a numeric literal int8's input accepts."""
    arg = d.arg
    if isinstance(arg, ast.Integer):
        return int(arg.ival)
    if isinstance(arg, ast.Float):
        text = arg.fval
        try:
            v = int(text, 10)
        except ValueError:
            raise PgError("22P02", f'invalid input syntax for type bigint: "{text}"') from None
        if not -(2**63) <= v < 2**63:
            raise PgError("22003", f'value "{text}" is out of range for type bigint')
        return v
    raise PgError("42601", f"{d.defname} requires a numeric value")


def _type_of(tn: ast.TypeName) -> str:
    names = [n.sval for n in tn.names]
    if len(names) == 2 and names[0] == "pg_catalog":
        names = names[1:]
    name = ".".join(names)
    try:
        ct = parse_type(name)
    except UnknownTypeError:
        from walsender_proxy.sql.literals import TYPE_ALIASES
        from walsender_proxy.sql.pgcatalog_defs import TYPE_OIDS

        if TYPE_ALIASES.get(name, name) not in TYPE_OIDS:
            raise PgError("42704", f'type "{name}" does not exist') from None
        raise PgError("22023", "sequence type must be smallint, integer, or bigint") from None
    if ct.is_array or ct.base.name not in _INT_TYPES:
        raise PgError("22023", "sequence type must be smallint, integer, or bigint")
    return ct.base.name


def options(defs: Seq[ast.DefElem] | None) -> tuple[dict[str, Any], list[str] | None]:
    """A CREATE/ALTER SEQUENCE's options as :func:`sequence_ddl.init_params` takes them,
    and its OWNED BY names."""
    out: dict[str, Any] = {}
    owned: list[str] | None = None
    seen: set[str] = set()
    for d in defs or ():
        name = d.defname
        if name in seen:
            raise PgError("42601", "conflicting or redundant options")
        seen.add(name)
        if name == "as":
            out["as"] = _type_of(d.arg)
        elif name in ("increment", "start", "cache"):
            out[name] = _int64(d)
        elif name in ("restart", "maxvalue", "minvalue"):
            out[name] = None if d.arg is None else _int64(d)
        elif name == "cycle":
            out["cycle"] = bool(d.arg.boolval) if isinstance(d.arg, ast.Boolean) else True
        elif name == "owned_by":
            owned = [n.sval for n in d.arg]
        else:
            raise PgError("42601", f'option "{name}" not recognized')
    return out, owned


def _owned_by_catalog_relation(owned: list[str] | None) -> None:
    """OWNED BY a relation of pg_catalog: PostgreSQL's refusals (not the proxy's table)."""

    if not owned or len(owned) < 2:
        return
    schema = owned[-3] if len(owned) > 2 else None
    rel = pgcatalog_defs.relation(schema, owned[-2])
    if rel is None:
        if schema is None and owned[-2].endswith("_index") and owned[-2].startswith("pg_"):
            raise PgError(
                "42809",
                f'sequence cannot be owned by relation "{owned[-2]}"',
                detail="This operation is not supported for indexes.",
            )
        return
    raise PgError("55000", "sequence must be in same schema as table it is linked to")


def create(tx: Transaction, s: ast.CreateSeqStmt, temp_schema: str | None, notices: list[Notice]) -> str:

    rv = s.sequence
    if rv.relpersistence == "u":
        raise unsupported("CREATE UNLOGGED SEQUENCE")
    if rv.relpersistence == "t" or rv.schemaname == "pg_temp":
        if temp_schema is None or rv.schemaname not in (None, "pg_temp", temp_schema):
            raise PgError("42P16", "cannot create temporary relation in non-temporary schema")
        tx.create_schema(temp_schema, if_not_exists=True, system=True)
        name = f"{temp_schema}.{rv.relname}"
    else:
        name = qualified(rv)
    cat = tx.catalog()
    schema = rv.schemaname or (temp_schema if rv.relpersistence == "t" else None)
    if s.if_not_exists and _exists(tx, cat, schema, rv.relname):
        notices.append(Notice("NOTICE", "42P07", f'relation "{rv.relname}" already exists, skipping'))
        return "CREATE SEQUENCE"
    opts, owned = options(s.options)
    _owned_by_catalog_relation(owned)
    tx.create_sequence(name, opts, owned_by=owned, if_not_exists=bool(s.if_not_exists))
    return "CREATE SEQUENCE"


def _exists(tx: Transaction, cat: Catalog, schema: str | None, name: str) -> bool:
    """A relation of that name where CREATE would make it."""
    return cat.relation_exists(schema or tx.creation_schema(), name)


def alter(tx: Transaction, s: ast.AlterSeqStmt, session: SessionSequences, notices: list[Notice]) -> str:

    name = qualified(s.sequence)
    if s.missing_ok:
        try:
            tx.sequence(name)
        except PgError as e:
            if e.sqlstate != "42P01":
                raise
            notices.append(Notice("NOTICE", "00000", f'relation "{s.sequence.relname}" does not exist, skipping'))
            return "ALTER SEQUENCE"
    opts, owned = options(s.options)
    _owned_by_catalog_relation(owned)
    current = tx.sequence(name)
    if owned is not None and current.identity and current.owned_by is not None:
        table = tx.catalog().tables.get(current.owned_by[0])
        raise PgError(
            "0A000", "cannot change ownership of identity sequence",
            detail=f'Sequence "{current.name}" is linked to table "{table.name if table else current.owned_by[0]}".',
        )
    sq = tx.alter_sequence(name, opts, owned_by=owned)
    session.altered(sq)
    return "ALTER SEQUENCE"


def drop(tx: Transaction, names: list[list[str]], if_exists: bool, cascade: bool, notices: list[Notice]) -> str:
    dropped: list[str] = []
    for parts in names:
        name = ".".join(parts)
        try:
            tx.sequence(name)
        except PgError as e:
            if e.sqlstate == "42P01":
                if if_exists:
                    notices.append(Notice("NOTICE", "00000", f'sequence "{name}" does not exist, skipping'))
                    continue
                raise PgError("42P01", f'sequence "{name}" does not exist') from None
            if e.sqlstate == "42809":
                raise PgError("42809", f'"{parts[-1]}" is not a sequence', hint="Use DROP TABLE to remove a table.") from None
            raise
        dropped += tx.drop_sequence(name, cascade=cascade)

    cascaded(notices, dropped)
    return "DROP SEQUENCE"


def restart_owned(tx: Transaction, tables: list[int], session: SessionSequences) -> None:
    """TRUNCATE … RESTART IDENTITY: the sequences the tables' columns own restart, with the
    transaction (PostgreSQL's ResetSequence)."""
    cat = tx.catalog()
    for sq in list(cat.sequences.values()):
        if sq.owned_by is not None and sq.owned_by[0] in tables:
            session.altered(tx.alter_sequence(sq.qualified_name, {"restart": None}))


# ---------------------------------------------------------------------------------------------
# SERIAL and identity columns: a sequence each

_SERIALS = {"serial": "int4", "serial4": "int4", "bigserial": "int8", "serial8": "int8", "smallserial": "int2", "serial2": "int2"}


def serial_type(tn: ast.TypeName) -> str | None:
    """The integer type of a ``serial``-family column (None for another type)."""
    names = [n.sval for n in tn.names]
    if len(names) != 1 or names[0] not in _SERIALS:
        return None
    if tn.arrayBounds:
        raise PgError("0A000", "array of serial is not implemented")
    if tn.typmods:
        raise PgError("42601", f'type modifier is not allowed for type "{names[0]}"')
    return _SERIALS[names[0]]


_NAMEDATALEN = 64


def _clip(name: str, nbytes: int) -> str:
    """pg_mbcliplen: at most ``nbytes`` bytes, whole characters."""
    raw = name.encode()[:nbytes]
    return raw.decode(errors="ignore")


def make_object_name(name1: str, name2: str, label: str) -> str:
    """makeObjectName: ``name1_name2_label`` within 63 bytes, the longer part shortened."""
    n1, n2 = len(name1.encode()), len(name2.encode())
    avail = _NAMEDATALEN - 1 - (len(label) + 2)
    while n1 + n2 > avail:
        if n1 > n2:
            n1 -= 1
        else:
            n2 -= 1
    return f"{_clip(name1, n1)}_{_clip(name2, n2)}_{label}"


def choose_sequence_name(cat: Catalog, schema: str, table: str, column: str) -> str:
    """ChooseRelationName(table, column, "seq"): ``t_c_seq``, else ``t_c_seq1``, …"""
    label, n = "seq", 0
    while True:
        name = make_object_name(table, column, label)
        if not cat.relation_exists(schema, name):
            return name
        n += 1
        label = f"seq{n}"


# ---------------------------------------------------------------------------------------------
# nextval, currval, setval, lastval


@dataclass(slots=True)
class _Elm:
    """PostgreSQL's SeqTableData: this session's view of one sequence."""

    last: int = 0
    cached: int = 0
    last_valid: bool = False
    increment: int = 0
    #: The definition the cache was fetched under: another (ALTER, RESTART) empties it.
    seen: Sequence | None = None


class SessionSequences:
    """One session's sequence state."""

    def __init__(self) -> None:
        self._elms: dict[int, _Elm] = {}
        self._last_used: int | None = None
        #: The session's privilege check of a sequence (any of the letters needed), set by
        #: the executor: nextval wants USAGE or UPDATE, currval and lastval USAGE or
        #: SELECT, setval UPDATE. An identity column's values are not checked (PostgreSQL's
        #: NextValueExpr is not).
        self.check: Callable[[Sequence, str], None] | None = None

    def _allowed(self, sq: Sequence, letters: str) -> None:
        if self.check is not None and not sq.identity:
            self.check(sq, letters)

    def _elm(self, sq: Sequence) -> _Elm:
        elm = self._elms.get(sq.oid)
        if elm is None:
            elm = self._elms[sq.oid] = _Elm()
        if elm.seen is not sq and elm.seen != sq:
            elm.cached = elm.last  # (PostgreSQL: a new relfilenode empties the cache)
            elm.seen = sq
        return elm

    def altered(self, sq: Sequence) -> None:
        """This session altered the sequence: its cached values go (currval stays)."""
        elm = self._elms.get(sq.oid)
        if elm is not None:
            elm.cached = elm.last

    def nextval(self, lake: Lake, sq: Sequence) -> int:
        self._allowed(sq, "Uw")
        elm = self._elm(sq)
        if elm.last != elm.cached:  # a value fetched ahead into this session's cache
            elm.last += elm.increment
            self._last_used = sq.oid
            return elm.last
        result, last = lake.sequences.fetch(sq)
        elm.last, elm.cached, elm.last_valid, elm.increment = result, last, True, sq.increment
        self._last_used = sq.oid
        return result

    def currval(self, sq: Sequence) -> int:
        self._allowed(sq, "Ur")
        elm = self._elms.get(sq.oid)
        if elm is None or not elm.last_valid:
            raise PgError("55000", f'currval of sequence "{sq.name}" is not yet defined in this session')
        return elm.last

    def lastval(self, cat: Catalog) -> int:
        oid = self._last_used
        if oid is None or oid not in cat.sequences:
            raise PgError("55000", "lastval is not yet defined in this session")
        self._allowed(cat.sequences[oid], "Ur")
        return self._elms[oid].last

    def setval(self, lake: Lake, sq: Sequence, value: int, is_called: bool) -> int:
        self._allowed(sq, "w")
        lake.sequences.setval(sq, value, is_called)
        elm = self._elm(sq)
        if is_called:
            elm.last, elm.last_valid = value, True
        elm.cached = elm.last
        elm.increment = sq.increment
        return value

    def discard(self) -> None:
        """DISCARD SEQUENCES (and ALL)."""
        self._elms.clear()
        self._last_used = None


def sequence_for(cat: Catalog, oid: int) -> Sequence:
    """The sequence a regclass names: 42809 for a table."""
    sq = cat.sequences.get(oid)
    if sq is not None:
        return sq
    t = cat.tables.get(oid)
    if t is not None:
        raise PgError("42809", f'"{t.name}" is not a sequence')

    for d in pgcatalog_defs.PG_CATALOG.values():
        if d.oid == oid:
            raise PgError("42809", f'"{d.name}" is not a sequence')
    raise PgError("XX000", f"could not open relation with OID {oid}")


def as_relation(lake: Lake, cat: Catalog, schemas: Seq[str], name: str) -> tuple[tuple[str, pa.Table], str] | None:
    """``SELECT * FROM seq``: (the Arrow table to register under its name, the SQL reading
    it) for the first sequence of that name along ``schemas``, its counter read now."""
    for schema in schemas:
        sq = cat.find_sequence(schema, name)
        if sq is not None:
            reg = f"__wp_seq_{sq.oid}"
            return (reg, relation_rows(lake, sq)), f"SELECT * FROM {reg}"
    return None


#: A sequence's columns when read as a relation.
RELATION_TYPES = {"last_value": parse_type("int8"), "log_cnt": parse_type("int8"), "is_called": parse_type("bool")}


#: What PostgreSQL says of a sequence named as the target of DML or COPY.
CHANGE = 'cannot change sequence "{}"'
COPY_TO = 'cannot copy to sequence "{}"'
COPY_FROM = 'cannot copy from sequence "{}"'


def write_target(tx: Transaction, rv: ast.RangeVar, message: str) -> Table:
    """The table a DML statement or COPY names; 42809 in PostgreSQL's words when it names
    a sequence (a relation of the same namespace: else it would be 42P01)."""

    try:
        return tx.table(qualified(rv))
    except PgError as e:
        if e.sqlstate == "42809" and tx.view(qualified(rv)) is not None:
            raise _view_target(rv, message) from None
        if e.sqlstate != "42P01":
            raise
        try:
            tx.sequence(qualified(rv))
        except PgError:
            raise e from None
        raise PgError("42809", message.format(rv.relname)) from None


def _view_target(rv: ast.RangeVar, message: str) -> PgError:
    """A view named where a table is written or copied: PostgreSQL's words for COPY and
    TRUNCATE; writing through a view (PostgreSQL's auto-updatable views) is not done."""
    if message == COPY_FROM:
        return PgError("42809", f'cannot copy from view "{rv.relname}"', hint="Try the COPY (SELECT ...) TO variant.")
    if message == COPY_TO:
        return PgError("42809", f'cannot copy to view "{rv.relname}"', hint="To enable copying to a view, provide an INSTEAD OF INSERT trigger.")
    if message == CHANGE:
        return PgError("0A000", "INSERT, UPDATE or DELETE on a view (an auto-updatable view) is not supported by walsender-proxy")
    return PgError("42809", message.format(rv.relname))


_SYSTEM_COLUMNS = frozenset({"tableoid", "cmax", "xmax", "cmin", "xmin", "ctid"})


def owned_sequence_name(tx: Transaction, table: str, column: str) -> str | None:
    """pg_get_serial_sequence(table, column)."""

    parts = ident_parts(table)
    try:
        t = tx.table(".".join(parts))
    except PgError:
        if pgcatalog_defs.relation(parts[-2] if len(parts) > 1 else None, parts[-1]) is not None:
            return None  # (a catalog relation: no column of it owns a sequence)
        try:
            tx.sequence(".".join(parts))
        except PgError:
            raise PgError("42P01", f'relation "{table}" does not exist') from None
        return None
    col = t.column(column)
    if col is None:
        if column in _SYSTEM_COLUMNS:
            return None
        raise PgError("42703", f'column "{column}" of relation "{t.name}" does not exist')
    for sq in tx.catalog().sequences.values():
        if sq.owned_by == (t.oid, col.attnum):
            return f"{pgcatalog_defs.quote_ident(sq.schema)}.{pgcatalog_defs.quote_ident(sq.name)}"
    return None


def relation_rows(lake: Lake, sq: Sequence) -> pa.Table:
    """``SELECT * FROM seq``: last_value, log_cnt, is_called."""
    last, log, called = lake.sequences.peek(sq)
    return pa.table(
        {"last_value": pa.array([last], pa.int64()), "log_cnt": pa.array([log], pa.int64()), "is_called": pa.array([called])}
    )

