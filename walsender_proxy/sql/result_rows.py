"""A result's rows: their columns as PostgreSQL describes them, their Arrow batches read
from DuckDB, and their DataRows.

Rows leave as Arrow batches and are encoded column by column (:mod:`decoding.pgvalues`), never
row by row in Python: each column's send or output function is chosen once per result (or
once per portal, for Execute), with the session's extra_float_digits, bytea_output and
TimeZone. The warnings a batch's functions raised go out as NoticeResponses before its rows.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from decoding.catalog import Table
from decoding.errors import PgError
from decoding.pgtypes import ColumnType, type_by_oid
from decoding.pgvalues import (
    binary_encoder,
    pg_type_for_duckdb,
    record_binary_encoder,
    text_encoder,
)
from walsender_proxy.backend.outcomes import BINARY_AS_PG, OID_LIKE, Column, Done, Rows
from walsender_proxy.protocol import messages as m
from walsender_proxy.protocol.messages import encode_data_rows
from walsender_proxy.sql.duck_errors import duck_error
from walsender_proxy.sql.pgcatalog_defs import TYPES
from walsender_proxy.sql.rewrite import Origin, Rewritten
from walsender_proxy.sql.scopes import NO_COLUMNS

if TYPE_CHECKING:
    import duckdb

    from walsender_proxy.sql.portals import Portal
    from walsender_proxy.sql.services import SessionState

BATCH_ROWS = 8192


def check_result_formats(formats: Sequence[int], ncolumns: int) -> None:
    """Bind's result formats against the columns, as PostgreSQL's PortalSetResultFormat
    checks them: one format for every column, or one for all, or none (all text)."""
    if len(formats) > 1 and len(formats) != ncolumns:
        raise PgError(
            "08P01",
            f"bind message has {len(formats)} result formats but query has {ncolumns} columns",
        )


_STRINGY = frozenset({"text", "varchar", "bpchar", "json", "jsonb", "uuid", "numeric"})


def no_columns(cols: list[Column]) -> bool:
    """The result of ``SELECT FROM …``: the rewriter's placeholder column, dropped here."""
    return len(cols) == 1 and cols[0].name == NO_COLUMNS


def result_columns(
    rel: duckdb.DuckDBPyRelation, rw: Rewritten | None, tables: list[Table] | None = None
) -> list[Column]:
    """Result columns: PostgreSQL's names and types. The rewriter knows catalog types
    (name, oid, regclass …); a user table's column keeps its declared type (jsonb,
    varchar(10), uuid) where DuckDB only says VARCHAR or JSON; else DuckDB's type maps."""

    declared: dict[str, ColumnType] = {}
    for t in tables or ():
        for c in t.columns:
            declared.setdefault(c.name, c.type)
    cols = []
    known = (
        rw.columns
        if rw is not None and rw.columns is not None and len(rw.columns) == len(rel.columns)
        else None
    )
    for i, (name, t) in enumerate(zip(rel.columns, rel.types, strict=True)):
        ctype = pg_type_for_duckdb(str(t))
        oc = known[i] if known is not None else None
        out_name = oc.name if oc is not None else name
        if oc is not None and oc.enum is not None:  # (the labels, described as the enum)
            cols.append(Column(out_name, oc.enum))
            continue
        oid = oc.type_oid if oc is not None else None
        lake = _lake_result_type(oid, oc.typmod if oc is not None else -1, ctype)
        if lake is not None:
            # A lake type the rewriter knows ('x'::uuid, '1.50'::numeric, 'a'::char(3)):
            # its own encoders, whatever DuckDB computed it as (VARCHAR, DECIMAL, DOUBLE).
            cols.append(Column(out_name, lake))
            continue
        if oid is None or oid == ctype.oid:
            # A user column's declared type, by name, where the rewriter knows no type: it
            # knows one for an expression (`n::text` is text, whatever column n is).
            decl = declared.get(out_name) if oid is None else None
            if (
                decl is not None
                and decl.is_array == ctype.is_array
                and decl.base.name in _STRINGY
                and ctype.base.name in _STRINGY
            ):
                ctype = decl
            typmod = oc.typmod if oc is not None and oc.typmod != -1 else None
            cols.append(Column(out_name, ctype, pg_typmod=typmod))
            continue
        row = TYPES.rows.get(oid)
        typlen = row["typlen"] if row else -1
        fields = oc.row_fields if oc is not None else None
        cols.append(
            Column(out_name, ctype, pg_oid=oid, pg_typlen=typlen, pg_typmod=oc.typmod if oc else -1, fields=fields)
        )
    origins = rw.origins if rw is not None else None
    if origins is not None and len(origins) == len(cols) and tables:
        cols = [_with_origin(c, o, tables) for c, o in zip(cols, origins, strict=True)]
    return cols


def _with_origin(col: Column, origin: Origin | None, tables: list[Table]) -> Column:
    """A column selected as it is from a user table names the table and the column in
    RowDescription, as PostgreSQL's does (pgjdbc reads nullability and the table name of
    ResultSetMetaData from them)."""
    if origin is None:
        return col
    (schema, name), colname = origin
    for t in tables:
        if t.name == name and (schema is None or t.schema == schema):
            c = t.column(colname)
            if c is None:
                return col
            if (
                c.type.base == col.type.base
                and c.type.is_array == col.type.is_array
                and col.pg_oid is None
            ):
                # (the column as declared, its typmod too: timestamp(2), varchar(5))
                return dataclasses.replace(
                    col, type=c.type, table_oid=t.oid, attnum=c.attnum, pg_typmod=None
                )
            return dataclasses.replace(col, table_oid=t.oid, attnum=c.attnum)
    return col


def _lake_result_type(oid: int | None, typmod: int, duck: ColumnType) -> ColumnType | None:
    """The lake type (with the rewriter's typmod) of a result column the rewriter typed as
    ``oid``, when DuckDB's value ``duck`` is that type's storage or computing form: text for
    the types stored as text, any number for numeric, the same type otherwise."""
    if oid is None:
        return None
    try:
        lake = type_by_oid(oid)
    except PgError:
        return None
    if lake.is_array != duck.is_array:
        return None
    name, got = lake.base.name, duck.base.name
    fits = (
        got == name
        or (got == "text" and name in _STRINGY and (name != "numeric" or typmod == -1))
        or (name == "numeric" and got in ("numeric", "float8", "int2", "int4", "int8"))
    )  # (an unconstrained numeric is stored as its text; numeric(p,s) as a decimal)
    return ColumnType(lake.base, typmod, lake.is_array) if fits else None


def result_batches(
    rel: duckdb.DuckDBPyRelation, ex: SessionState, batch_rows: int = BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
    try:
        reader = rel.to_arrow_reader(batch_size=batch_rows)
    except Exception as e:
        raise duck_error(e) from None
    try:
        while True:
            if ex.cancelled.is_set():
                raise PgError("57014", "canceling statement due to user request")
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return
            except Exception as e:
                raise duck_error(e) from None
            yield batch
    finally:  # a reader left open keeps DuckDB's result, and the connection refuses queries
        reader.close()


def column_binary_encoder(c: Column) -> Callable[[Any], list[bytes | None]]:
    """The binary send function of a result column: its lake type's, or for a catalog type
    in ``BINARY_AS_PG`` PostgreSQL's (``oidsend``, ``namesend``, ``array_send`` of oids…)."""

    if c.fields is not None:
        return record_binary_encoder(c.fields)
    oid = c.pg_oid
    if oid is None or oid == c.type.oid or oid not in BINARY_AS_PG:
        return binary_encoder(c.type)
    if oid in OID_LIKE:
        return lambda arr: [None if v is None else _U4.pack(v & 0xFFFFFFFF) for v in _pylist(arr)]
    if oid == 19:
        return lambda arr: [None if v is None else v.encode() for v in _pylist(arr)]
    if oid == 18:  # charsend: always one byte, \0 for the empty "char"
        return lambda arr: [
            None if v is None else (v.encode()[:1] or b"\x00") for v in _pylist(arr)
        ]
    elem, lbound = {
        22: (21, 0),
        30: (26, 0),
        1028: (26, 1),
        1003: (19, 1),
        1002: (18, 1),
        1011: (28, 1),
        1012: (29, 1),
    }[oid]

    def items(v: Any) -> list[Any]:
        if isinstance(v, str):  # int2vector / oidvector as text: "1 2 3"
            return [int(x) for x in v.split()]
        return list(v)

    def one(v: Any) -> bytes:
        vals = items(v)
        head = struct.pack(">iiI", 1 if vals else 0, 1 if None in vals else 0, elem)
        if vals:
            head += struct.pack(">ii", len(vals), lbound)
        body = []
        for x in vals:
            if x is None:
                body.append(b"\xff\xff\xff\xff")
            elif elem == 21:
                body.append(b"\x00\x00\x00\x02" + struct.pack(">h", x))
            elif elem in (26, 28, 29):
                body.append(b"\x00\x00\x00\x04" + _U4.pack(x & 0xFFFFFFFF))
            else:
                b = str(x).encode()
                body.append(struct.pack(">i", len(b)) + b)
        return head + b"".join(body)

    return lambda arr: [None if v is None else one(v) for v in _pylist(arr)]


_U4 = struct.Struct(">I")


def _pylist(arr: Any) -> list[Any]:
    return arr.to_pylist() if hasattr(arr, "to_pylist") else list(arr)


def float_digits(ex: SessionState) -> int:
    """The session's extra_float_digits: how float4out and float8out print its floats."""
    return int(ex.settings.get("extra_float_digits"))


def bytea_output(ex: SessionState) -> str:
    """The session's bytea_output: how byteaout prints its bytea values (hex or escape)."""
    return str(ex.settings.get("bytea_output"))


def encode_rows(rows: Rows, formats: list[int], ex: SessionState) -> Iterator[tuple[bytes, int]]:
    """DataRow bytes, a batch at a time, encoded column by column."""

    encoders = []
    digits, byteas = float_digits(ex), bytea_output(ex)
    zone = ex.settings.zone()
    for i, c in enumerate(rows.columns):
        fmt = formats[0] if len(formats) == 1 else formats[i] if i < len(formats) else 0
        encoders.append(
            column_binary_encoder(c) if fmt == 1 else text_encoder(c.type, digits, byteas, zone)
        )
    for batch in rows.batches:
        if ex.cancelled.is_set():
            raise PgError("57014", "canceling statement due to user request")
        if ex.notices:
            yield take_notices(ex), 0
        if batch.num_rows == 0:
            continue
        cols = [enc(batch.column(i)) for i, enc in enumerate(encoders)]
        yield (
            encode_data_rows(zip(*cols, strict=True) if cols else [()] * batch.num_rows),
            batch.num_rows,
        )
    if ex.notices:
        yield take_notices(ex), 0


def take_notices(ex: SessionState) -> bytes:
    """NoticeResponses for the warnings a query's functions raised while its last batch was
    made: they go before that batch's rows, as PostgreSQL's go before the row that raised
    them."""

    out = b"".join(
        m.NoticeResponse.create(
            n.severity, n.sqlstate, n.message, detail=n.detail, hint=n.hint
        ).encode()
        for n in ex.notices
    )
    ex.notices.clear()
    return out


def fetch_portal(ex: SessionState, portal: Portal, max_rows: int) -> tuple[str, Any]:
    """One step of an Execute: ('rows', bytes), ('suspended', None), ('done', tag),
    ('outcome', Outcome) or ('end', None). The session calls it until it gets one of the
    last three kinds (or 'suspended'). As in PostgreSQL, a portal that stops exactly at
    ``max_rows`` is suspended; the next Execute then completes it with no rows."""
    if portal.done:
        return "done", portal.extra.get("tag", "SELECT 0")
    if portal.extra.pop("suspend_now", False):
        return "suspended", None
    if portal.pending_rows is None:
        assert portal.outcomes is not None
        try:
            o = next(portal.outcomes)
        except StopIteration:
            portal.done = True
            return "end", None
        if not isinstance(o, Rows):
            if isinstance(o, Done):
                portal.done = True
                portal.extra["tag"] = o.tag
                return "done", o.tag
            return "outcome", o
        portal.pending_rows = o
    rows = portal.pending_rows
    encs = portal.extra.get("encoders")
    if encs is None:
        from decoding.pgvalues import text_encoder

        f = portal.result_formats
        check_result_formats(f, len(rows.columns))
        encs = []
        digits, byteas = float_digits(ex), bytea_output(ex)
        zone = ex.settings.zone()
        for i, c in enumerate(rows.columns):
            fmt = f[0] if len(f) == 1 else f[i] if i < len(f) else 0
            if fmt != 0 and fmt != 1:
                raise PgError("22023", f"unsupported format code: {fmt}")
            encs.append(
                column_binary_encoder(c) if fmt == 1 else text_encoder(c.type, digits, byteas, zone)
            )
        portal.extra["encoders"] = encs
    budget = max_rows - portal.sent if max_rows > 0 else None
    out: list[bytes] = []
    got = 0
    exhausted = False
    while budget is None or got < budget:
        if ex.cancelled.is_set():
            raise PgError("57014", "canceling statement due to user request")
        batch = portal.carry
        portal.carry = None
        if batch is None:
            batch = next(rows.batches, None)
            if ex.notices:
                out.append(take_notices(ex))
            if batch is None:
                exhausted = True
                break
        if budget is not None and batch.num_rows > budget - got:
            portal.carry = batch.slice(budget - got)
            batch = batch.slice(0, budget - got)
        if batch.num_rows:
            cols = [enc(batch.column(i)) for i, enc in enumerate(encs)]
            out.append(encode_data_rows(zip(*cols, strict=True) if cols else [()] * batch.num_rows))
            got += batch.num_rows
        if budget is None and len(out) >= 16:
            break
    portal.sent += got
    if exhausted:
        tag = rows.fixed_tag or f"{rows.verb} {portal.sent}"
        portal.done = True
        portal.extra["tag"] = tag
        if out:
            return "rows", b"".join(out)
        return "done", tag
    if budget is not None and got >= budget:
        portal.sent = 0  # counts per Execute, like PostgreSQL's completion tag
        portal.extra["suspend_now"] = True
    return "rows", b"".join(out)
