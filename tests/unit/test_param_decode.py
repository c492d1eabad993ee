"""Bind parameters to Python values (param_recv.decode_params): the receive functions cached per
statement give what the Arrow decoders give, NULLs stay NULL, and the cache follows
changes of Bind's formats and parameter count."""

from __future__ import annotations

import datetime as dt
import struct
from typing import Any

import pytest

from decoding.errors import PgError
from decoding.pgtypes import type_by_oid
from decoding.pgvalues import binary_decoder, text_decoder
from walsender_proxy.sql.executor import Prepared
from walsender_proxy.sql.param_recv import decode_params


def decode(st: Prepared, formats: tuple[int, ...], params: tuple[bytes | None, ...]) -> list[Any]:
    return decode_params(st, formats, params)


def arrow(oid: int, fmt: int, raw: bytes) -> Any:
    dec = binary_decoder(type_by_oid(oid)) if fmt == 1 else text_decoder(type_by_oid(oid))
    return dec([raw])[0].as_py()


UTC_TS = struct.pack("!q", 757_382_400_123_456)
CASES = [
    (21, 1, struct.pack("!h", -7)),
    (23, 1, struct.pack("!i", 2**31 - 1)),
    (20, 1, struct.pack("!q", -(2**63))),
    (700, 1, struct.pack("!f", 1.5)),
    (701, 1, struct.pack("!d", -2.25)),
    (16, 1, b"\x01"),
    (25, 1, "héllo".encode()),
    (1043, 0, b"short"),
    (1114, 1, UTC_TS),
    (1184, 1, UTC_TS),
    (1184, 1, struct.pack("!q", 2**63 - 1)),  # infinity: whatever the Arrow decoder does
    (1184, 1, struct.pack("!q", -(2**63))),  # -infinity
    (1114, 1, struct.pack("!q", 252_455_616_000_000_000)),  # year 10000
    (21, 1, b"\x00\x01\x02"),  # wrong width
    (23, 0, b"42"),
    (1082, 1, struct.pack("!i", 8825)),  # date: no quick decoder
    (1700, 0, b"3.14"),
]


def outcome(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as e:
        return ("raised", type(e), str(e))


@pytest.mark.parametrize(("oid", "fmt", "raw"), CASES)
def test_same_as_arrow(oid: int, fmt: int, raw: bytes) -> None:
    st = Prepared("s", "", None, [oid])
    want = outcome(arrow, oid, fmt, raw)
    got = outcome(decode, st, (fmt,), (raw,))
    assert got == (want if isinstance(want, tuple) else [want])
    assert decode(st, (fmt,), (None,)) == [None]


def test_mixed_row_and_cache_follows_formats() -> None:
    st = Prepared("s", "", None, [21, 21, 21, 0, 1184])
    row = (struct.pack("!h", 5), struct.pack("!h", 6), None, b"text", UTC_TS)
    got = decode(st, (1, 1, 1, 0, 1), row)
    assert got == [5, 6, None, "text", dt.datetime(2024, 1, 1, 0, 0, 0, 123456, tzinfo=dt.UTC)]
    assert st.param_recv is not None and st.param_recv[0] == (1, 1, 1, 0, 1)
    assert decode(st, (1, 1, 1, 0, 1), row) == got
    # All text now: the cached functions must not be used.
    text_row = (b"5", b"6", None, b"text", b"2024-01-01 00:00:00.123456+00")
    assert decode(st, (), text_row) == got
    assert decode(st, (0,), text_row) == got
    # More values than declared types: the extra ones are of unknown type.
    assert decode(st, (0,), (*text_row, b"extra")) == [*got, "extra"]


def test_unknown_type_in_binary_is_refused_only_when_not_null() -> None:
    st = Prepared("s", "", None, [23])
    assert decode(st, (1,), (struct.pack("!i", 1), None)) == [1, None]
    with pytest.raises(PgError) as info:
        decode(st, (1,), (struct.pack("!i", 1), b"x"))
    assert (info.value.sqlstate, info.value.message) == ("08P01", "binary data for parameter $2 of unknown type")


def test_bad_input_is_the_arrow_decoders_error() -> None:
    st = Prepared("s", "", None, [23])
    with pytest.raises(Exception) as want:
        arrow(23, 0, b"nope")
    with pytest.raises(Exception) as got:
        decode(st, (0,), (b"nope",))
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)
    with pytest.raises(UnicodeDecodeError):
        decode(Prepared("s", "", None, []), (), (b"\xff",))
