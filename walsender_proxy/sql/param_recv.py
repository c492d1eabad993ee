"""Bind's parameter values as Python values.

Each parameter gets a pair of receive functions, chosen once per statement, Bind formats and
DateStyle order (:func:`decode_params` keeps them on the prepared statement): a quick one in
plain Python for the types drivers bind round after round (integers, floats, bool, text,
timestamps), which answers or steps aside, and the general one, the type's receive or input
function from :mod:`decoding.pgvalues` (which has PostgreSQL's errors). Catalog types the lake
does not store (oid, name, regclass … and their arrays) have receive functions of their own.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime as datetime_type
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from pglast import ast

from decoding.catalog import FIRST_USER_OID
from decoding.errors import PgError
from decoding.pgtime import PG_EPOCH, PG_EPOCH_NAIVE
from decoding.pgtypes import ColumnType, type_by_oid
from decoding.pgvalues import binary_decoder, text_decoder
from decoding.pgvalues.binin import array_recv_elements
from decoding.pgvalues.textin import NAME_BYTES, name_in
from walsender_proxy.sql.literals import cast_target

if TYPE_CHECKING:
    from walsender_proxy.sql.portals import Prepared


def decode_params(
    st: Prepared,
    formats: Sequence[int],
    params: Sequence[bytes | None],
    oids: Sequence[int] | None = None,
    date_order: str = "MDY",
    user_types: Mapping[int, ColumnType] | None = None,
    portal: str | None = None,
) -> list[Any]:
    """Bind's parameter values as Python values. The receive function of each
    parameter depends only on the statement's types, Bind's formats and the session's
    DateStyle order (``date_order``, how a date in text is read), so it is chosen once
    and kept on the statement (``st.param_recv``) while a driver binds the same way
    round after round; a NULL is None whatever the type. A value refused gets PostgreSQL's
    CONTEXT line naming ``portal``'s parameter (with Bind's own, not an EXECUTE's: None)."""
    formats = tuple(formats)
    cached = st.param_recv
    if (
        cached is None
        or cached[0] != formats
        or len(cached[1]) != len(params)
        or cached[4] != date_order
    ):  # type: ignore[misc]
        if oids is None or len(oids) != len(params):
            oids = _inferred_param_types(st.node, st.param_types, len(params))
        recvs = _param_recvs(oids, formats, len(params), date_order, user_types)
        cached = (formats, recvs, _typed_params(st.param_types), _lake_params(oids, user_types), date_order)
        st.param_recv = cached  # type: ignore[assignment]
    out = BoundParams()
    out.typed, out.types = cached[2], cached[3]  # type: ignore[misc]
    append = out.append
    for i, ((quick, general), raw) in enumerate(zip(cached[1], params, strict=True)):
        if raw is None:
            append(None)
            continue
        try:
            v = quick(raw)
            append(general(raw) if v is _NOT_SIMPLE else v)
        except PgError as e:
            if portal is not None and getattr(e, "where", None) is None:
                e.where = _param_context(portal, i + 1, raw, formats)  # type: ignore[attr-defined]
            raise
    return out


def _param_context(portal: str, number: int, raw: bytes, formats: tuple[int, ...]) -> str:
    """bind_param_error_callback's line: a text value is shown as ``'...'``, which is what
    log_parameter_max_length_on_error's default (0) leaves of it."""
    fmt = formats[0] if len(formats) == 1 else formats[number - 1] if number - 1 < len(formats) else 0
    where = f'portal "{portal}" parameter ${number}' if portal else f"unnamed portal parameter ${number}"
    return where if fmt == 1 else f"{where} = {chr(39) * 2 if not raw else chr(39) + '...' + chr(39)}"


class BoundParams(list):  # type: ignore[type-arg]
    """Bind's values; which of them the client declared of a type that is not text (a
    numeric or uuid parameter arrives as a str too, but is not text to cast); the lake
    types of the parameters, declared or inferred from a cast; the numbers of declared
    parameters the statement does not use, if any, and the DateStyle order its literals
    were parsed in when that is not the session's now (both set by the executor's bind)."""

    __slots__ = (
        "literal_date_order",
        "typed",
        "types",
        "unused",
    )  # set by decode_params (no __init__: Bind is a hot path)

    typed: frozenset[int]
    types: tuple[tuple[int, ColumnType], ...]
    unused: frozenset[int]
    literal_date_order: str | None


def _inferred_param_types(node: Any, declared: Sequence[int], n: int) -> list[int]:
    """Each parameter's type: as declared at Parse, or for one left unspecified, the lake
    type of the first cast applied to it (``$1::bytea``), as PostgreSQL's parse analysis
    gives an unknown parameter the type it is first coerced to; 0 when there is none."""
    oids = [declared[i] if i < len(declared) else 0 for i in range(n)]
    if all(oids):
        return oids

    def visit(x: Any) -> None:
        if isinstance(x, ast.TypeCast) and isinstance(x.arg, ast.ParamRef):
            i = x.arg.number - 1
            if 0 <= i < n and not oids[i]:
                ctype = cast_target(x.typeName)
                if ctype is not None:
                    oids[i] = ctype.oid
        if isinstance(x, ast.Node):
            for name in x:
                visit(getattr(x, name))
        elif isinstance(x, tuple | list):
            for y in x:
                visit(y)

    visit(node)
    return oids


def _lake_params(oids: Sequence[int], user_types: Mapping[int, ColumnType] | None = None) -> tuple[tuple[int, ColumnType], ...]:
    out = []
    for i, oid in enumerate(oids):
        if user_types and oid in user_types:
            out.append((i + 1, user_types[oid]))
        elif oid:
            with contextlib.suppress(PgError):
                out.append((i + 1, type_by_oid(oid)))
    return tuple(out)


#: Parameter types whose values are text to PostgreSQL (unknown included).
_TEXT_PARAM_OIDS = frozenset({0, 25, 1043, 1042, 19, 705})


def _typed_params(param_types: Sequence[int]) -> frozenset[int]:
    """The parameters declared of a type that is not text (a user enum's label is text)."""
    return frozenset(i + 1 for i, oid in enumerate(param_types) if oid not in _TEXT_PARAM_OIDS and oid < FIRST_USER_OID)


def text_params(params: Sequence[Any]) -> frozenset[int]:
    """The ``$n`` bound as text: a cast of one is an I/O conversion (the rewriter's
    ``text_params``). Only statements that go to DuckDB ask, not the point paths."""
    if not params:
        return frozenset()
    typed = getattr(params, "typed", frozenset())
    return frozenset(i + 1 for i, v in enumerate(params) if type(v) is str and i + 1 not in typed)


# -- parameters the common way, without Arrow ------------------------------------------------
# Each returns the value the Arrow decoders would give, or _NOT_SIMPLE to let them decide
# (and raise PostgreSQL's error for bad input).


class _NotSimple:
    pass


_NOT_SIMPLE = _NotSimple()

# (ZoneInfo's UTC, not datetime.UTC: the tzinfo the Arrow decoders' values carry)
_PG_EPOCH_TZ = PG_EPOCH.replace(tzinfo=ZoneInfo("UTC"))
#: Microseconds from 2000-01-01 that stay inside Python's datetime (years 1..9999).
_TS_LOW, _TS_HIGH = -63_082_281_600_000_000, 252_455_615_999_999_999


def _int_recv(width: int) -> Callable[[bytes], Any]:
    unpack = struct.Struct({2: "!h", 4: "!i", 8: "!q"}[width]).unpack

    def recv(raw: bytes) -> Any:
        return unpack(raw)[0] if len(raw) == width else _NOT_SIMPLE

    return recv


def _float_recv(fmt: str) -> Callable[[bytes], Any]:
    unpack = struct.Struct(fmt).unpack
    size = struct.calcsize(fmt)

    def recv(raw: bytes) -> Any:
        return unpack(raw)[0] if len(raw) == size else _NOT_SIMPLE

    return recv


def _bool_recv(raw: bytes) -> Any:
    return raw[0] != 0 if len(raw) == 1 else _NOT_SIMPLE


def _ts_recv(epoch: datetime_type) -> Callable[[bytes], Any]:
    unpack = struct.Struct("!q").unpack

    def recv(raw: bytes) -> Any:
        if len(raw) != 8:
            return _NOT_SIMPLE
        (us,) = unpack(raw)
        if not _TS_LOW <= us <= _TS_HIGH:
            return _NOT_SIMPLE  # infinity and the far ends: the Arrow decoders know
        return epoch + timedelta(0, 0, us)  # positional: no keyword parsing per value

    return recv


def _plain_text(raw: bytes) -> Any:
    if b"\x00" in raw:
        return _NOT_SIMPLE
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return _NOT_SIMPLE


_QUICK_BINARY: dict[int, Callable[[bytes], Any]] = {
    16: _bool_recv,
    20: _int_recv(8),
    21: _int_recv(2),
    23: _int_recv(4),
    700: _float_recv(">f"),
    701: _float_recv(">d"),
    25: _plain_text,
    1043: _plain_text,
    1114: _ts_recv(PG_EPOCH_NAIVE),
    1184: _ts_recv(_PG_EPOCH_TZ),
}
_QUICK_TEXT: dict[int, Callable[[bytes], Any]] = {25: _plain_text, 1043: _plain_text}


def _not_simple(raw: bytes) -> Any:
    return _NOT_SIMPLE


def _utf8_recv(raw: bytes) -> Any:
    """A parameter of unspecified type sent as text: the string, as PostgreSQL's unknown."""
    return raw.decode("utf-8")


#: Parameter types the lake does not store but drivers bind (asyncpg's type introspection
#: sends ``$1::oid[]``): as the lake type whose values are the same (an oid is an unsigned
#: 32-bit integer, a name is text), with their own binary layout.
_OID_LIKE = frozenset({26, 28, 24, 2202, 2203, 2204, 2205, 2206, 4089, 4096, 3734, 3769})
_NAME_LIKE = frozenset({19, 18})
_ARRAY_OF_OID_LIKE = {
    1028: 26,
    1011: 28,
    1008: 24,
    2207: 2202,
    2208: 2203,
    2209: 2204,
    2210: 2205,
    2211: 2206,
}
_ARRAY_OF_NAME_LIKE = {1003: 19, 1002: 18}


def _catalog_type_recv(oid: int, fmt: int) -> Callable[[bytes], Any] | None:

    if oid in _OID_LIKE:
        if fmt == 1:
            return lambda raw: _uint4(raw)
        if oid in _REG_TYPES:  # 'pg_catalog.pg_class'::regclass: the cast looks it up
            return lambda raw: raw.decode()
        return lambda raw: _oid_in(raw.decode(), oid)
    if oid == 19:
        return _name_recv if fmt == 1 else lambda raw: name_in(raw.decode())
    if oid in _NAME_LIKE:
        return lambda raw: raw.decode()
    if oid in _ARRAY_OF_OID_LIKE or oid in _ARRAY_OF_NAME_LIKE:
        is_oid = oid in _ARRAY_OF_OID_LIKE
        if fmt == 0:
            dec = text_decoder(type_by_oid(1016 if is_oid else 1009))
            if oid == 1003:  # (each element through namein)
                return lambda raw: [None if e is None else name_in(e) for e in dec([raw])[0].as_py()]
            return lambda raw: dec([raw])[0].as_py()
        elem_oid = _ARRAY_OF_OID_LIKE.get(oid) or _ARRAY_OF_NAME_LIKE[oid]
        # array_recv_elements checks the element type against a lake type's oid; these
        # carry their own (26, 19…), which it lets through only above 10000: check here.

        def recv(raw: bytes) -> Any:
            if len(raw) >= 12 and struct.unpack_from(">I", raw, 8)[0] != elem_oid:
                raise PgError(
                    "42804",
                    f"binary data has array element type {struct.unpack_from('>I', raw, 8)[0]} instead of expected {elem_oid}",
                )
            fixed = raw[:8] + struct.pack(">I", 20 if is_oid else 25) + raw[12:]
            elems = array_recv_elements(fixed, type_by_oid(20 if is_oid else 25))
            if is_oid:
                return [None if e is None else _uint4(e) for e in elems]
            if elem_oid == 19:
                return [None if e is None else _name_recv(e) for e in elems]
            return [None if e is None else e.decode() for e in elems]

        return recv
    return None


def _name_recv(raw: bytes) -> str:
    """namerecv: a name sent in binary is refused at 64 bytes or more (its text input cuts)."""
    if len(raw) >= NAME_BYTES + 1:
        raise PgError("42622", "identifier too long", detail=f"Identifier must be less than {NAME_BYTES + 1} characters.")
    return raw.decode()


def _interval_recv(fmt: int) -> Callable[[bytes], Any]:
    """An interval parameter as ``'m months d days u microseconds'``: DuckDB binds a Python
    value of the lake's interval struct as a STRUCT (no cast to INTERVAL), a timedelta
    loses months and folds a negative time into the days; this text is exact in DuckDB's
    and PostgreSQL's interval input alike."""

    ctype = type_by_oid(1186)
    dec = binary_decoder(ctype) if fmt == 1 else text_decoder(ctype)

    def recv(raw: bytes) -> Any:
        v = dec([raw])[0].as_py()
        if isinstance(v, dict):
            return f"{v['months']} months {v['days']} days {v['microseconds']} microseconds"
        return v

    return recv


_REG_TYPES = frozenset({24, 2202, 2203, 2204, 2205, 2206, 4089, 4096, 3734, 3769})


def _oid_in(text: str, oid: int) -> int:
    """oidin / xidin: a decimal number of 32 bits (a negative one wraps, as in oidin)."""
    try:
        v = int(text.strip())
    except ValueError:
        v = None
    if v is None or not -(2**31) <= v < 2**32:
        name = {26: "oid", 28: "xid", 29: "cid"}.get(oid, "oid")
        raise PgError(
            "22P02" if v is None else "22003",
            f'invalid input syntax for type {name}: "{text}"'
            if v is None
            else f'value "{text}" is out of range for type {name}',
        )
    return v & 0xFFFFFFFF


def param_receivable(oid: int) -> bool:
    """Whether Bind can take a parameter of type ``oid`` (a lake type, or a catalog type
    with a receive function here): an inferred type that is not stays unknown (text)."""
    if (
        oid in _OID_LIKE
        or oid in _NAME_LIKE
        or oid in _ARRAY_OF_OID_LIKE
        or oid in _ARRAY_OF_NAME_LIKE
    ):
        return True
    try:
        type_by_oid(oid)
    except PgError:
        return oid >= FIRST_USER_OID  # (a user enum's label: text)
    return True


def _uint4(raw: bytes) -> int:
    if len(raw) != 4:
        raise PgError(
            "08P01", f"incorrect binary data format in bind parameter (oid of {len(raw)} bytes)"
        )
    return int(struct.unpack(">I", raw)[0])


def _general_recv(oid: int, fmt: int, date_order: str = "MDY") -> Callable[[bytes], Any]:
    """The Arrow decoders, for whatever the quick ones leave (a date in text read in
    ``date_order``). The type is looked up at the first non-NULL value, as before the
    receive functions were cached."""
    special = _catalog_type_recv(oid, fmt)
    if special is not None:
        return special
    if oid == 1186:
        return _interval_recv(fmt)

    def recv(raw: bytes) -> Any:

        ctype = type_by_oid(oid)
        dec = binary_decoder(ctype) if fmt == 1 else text_decoder(ctype, date_order)
        return dec([raw])[0].as_py()

    return recv


def _unknown_binary_recv(number: int) -> Callable[[bytes], Any]:
    def recv(raw: bytes) -> Any:
        raise PgError("08P01", f"binary data for parameter ${number} of unknown type")

    return recv


_ParamRecv = tuple[Callable[[bytes], Any], Callable[[bytes], Any]]


def _param_recvs(
    param_types: Sequence[int],
    formats: tuple[int, ...],
    n: int,
    date_order: str = "MDY",
    user_types: Mapping[int, ColumnType] | None = None,
) -> list[_ParamRecv]:
    """(quick, general) receive functions of each of ``n`` parameters: ``quick`` answers or
    returns _NOT_SIMPLE, then ``general`` decides. Formats as Bind gives them: none = all
    text, one = for all, else one each."""
    out: list[_ParamRecv] = []
    for i in range(n):
        fmt = formats[0] if len(formats) == 1 else formats[i] if i < len(formats) else 0
        oid = param_types[i] if i < len(param_types) else 0
        if not oid:
            quick = _unknown_binary_recv(i + 1) if fmt == 1 else _utf8_recv
            out.append((quick, _not_simple))
            continue
        if user_types and oid in user_types:  # (an enum's label: text's receive functions)
            out.append((_not_simple, _typed_recv(user_types[oid], fmt, date_order)))
            continue
        quick = (_QUICK_BINARY if fmt == 1 else _QUICK_TEXT).get(oid, _not_simple)
        out.append((quick, _general_recv(oid, fmt, date_order)))
    return out


def _typed_recv(ctype: ColumnType, fmt: int, date_order: str) -> Callable[[bytes], Any]:

    dec = binary_decoder(ctype) if fmt == 1 else text_decoder(ctype, date_order)

    def recv(raw: bytes) -> Any:
        return dec([raw])[0].as_py()

    return recv
