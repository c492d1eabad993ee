"""Value codecs without a server: hand fixtures for PostgreSQL's formats, hypothesis round
trips per type (decode(encode(x)) == x, text and binary), fast paths against the per-value
reference parsers, COPY streams split at every byte, and the DuckDB type mapping."""

from __future__ import annotations

import math
import struct
import uuid
from datetime import date
from decimal import Decimal

import hypothesis.strategies as st
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings

from decoding.copyformat import (
    BINARY_SIGNATURE,
    CopyDecoder,
    CopyError,
    CopyOptions,
    copy_text_unescape,
    encode_copy,
    encode_data_rows,
)
from decoding.errors import PgError
from decoding.pgtypes import INTERVAL_ARROW, ColumnType, parse_type
from decoding.pgvalues import (
    InputError,
    binary_decoder,
    binary_encoder,
    column_type,
    decode_text_arrow,
    encode_text_arrow,
    pg_float_text,
    pg_type_for_duckdb,
    text_decoder,
    text_encoder,
)
from decoding.pgvalues import _calendar as cal
from decoding.pgvalues._dtin import date_in, interval_in, time_in, timestamp_in
from decoding.pgvalues.textin import (
    array_in_elements,
    bool_in,
    bytea_in,
    float_in,
    int_in,
    jsonb_in,
    numeric_text_in,
    uuid_in,
)

T = column_type
FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def enc(typ: str, values: list, arrow: pa.DataType | None = None) -> list[bytes | None]:  # type: ignore[type-arg]
    ct = T(typ) if "(" not in typ else parse_type(typ)
    return text_encoder(ct)(pa.array(values, arrow or ct.arrow))


# ----------------------------------------------------------------------- text output


def test_bool_int_text() -> None:
    assert enc("bool", [True, False, None]) == [b"t", b"f", None]
    assert enc("int8", [0, -(2**63), 2**63 - 1]) == [
        b"0",
        b"-9223372036854775808",
        b"9223372036854775807",
    ]


@pytest.mark.parametrize(
    ("value", "float4", "text"),
    [
        (0.0, False, "0"),
        (-0.0, False, "-0"),
        (1e15, False, "1e+15"),
        (123456789012345.0, False, "123456789012345"),
        (1e-4, False, "0.0001"),
        (1e-5, False, "1e-05"),
        (1.25e-7, False, "1.25e-07"),
        (float("nan"), False, "NaN"),
        (float("inf"), False, "Infinity"),
        (float("-inf"), False, "-Infinity"),
        (1e23, False, "9.999999999999999e+22"),  # PostgreSQL's Ryu never takes the bound
        (5e-324, False, "5e-324"),
        (0.1, True, "0.1"),
        (1e6, True, "1e+06"),
        (123456.0, True, "123456"),
        (1234567.0, True, "1.234567e+06"),
        (1.4e-45, True, "1e-45"),
    ],
)
def test_float_text(value: float, float4: bool, text: str) -> None:
    assert pg_float_text(value, float4) == text
    typ = "float4" if float4 else "float8"
    assert enc(typ, [value]) == [text.encode()]


@pytest.mark.parametrize(
    ("value", "float4", "digits", "text"),
    [  # PostgreSQL 15's answers (SET extra_float_digits = …; SELECT …)
        (1 / 3, False, 0, "0.333333333333333"),
        (1 / 3, False, -15, "0.3"),
        (1 / 3, True, 0, "0.333333"),
        (5e-324, False, 0, "4.94065645841247e-324"),
        (123456789012345678.0, False, 0, "1.23456789012346e+17"),
        (123456789012345678.0, False, -15, "1e+17"),
        (100000.0, False, -14, "1e+05"),
        (2.5, False, -15, "2"),  # an exact tie rounds to even, as glibc's printf does
        (-0.0, False, 0, "-0"),
        (float("nan"), False, -3, "NaN"),
        (float("-inf"), True, 0, "-Infinity"),
        (1.4e-45, True, 0, "1.4013e-45"),
        (3.4e38, True, 0, "3.4e+38"),
        (1 / 3, False, 3, "0.3333333333333333"),  # 1 to 3: the shortest exact text
    ],
)
def test_float_text_with_fewer_digits(value: float, float4: bool, digits: int, text: str) -> None:
    assert pg_float_text(value, float4, digits) == text
    ctype = parse_type("float4" if float4 else "float8")
    assert encode_text_arrow(ctype, pa.array([value, None]), extra_float_digits=digits).to_pylist() == [text.encode(), None]


def test_float_digits_reach_arrays_records_and_copy() -> None:
    """An array's elements and a record's fields print as the float columns do."""
    arr = pa.array([[1 / 3, None, 2.5]], pa.list_(pa.float64()))
    assert encode_text_arrow(parse_type("float8[]"), arr, extra_float_digits=0).to_pylist() == [b"{0.333333333333333,NULL,2.5}"]
    rec = pa.array([{"a": 1 / 3, "b": "x"}])
    assert encode_text_arrow(parse_type("text"), rec, extra_float_digits=-13).to_pylist() == [b"(0.33,x)"]
    table = pa.table({"f": pa.array([1 / 3], pa.float64())})
    out = b"".join(encode_copy(table, [parse_type("float8")], "csv", extra_float_digits=0))
    assert out == b"0.333333333333333\n"


def test_numeric_text() -> None:
    assert enc("numeric(12,2)", [Decimal("1.20"), Decimal("-0.05"), Decimal("0.00")]) == [
        b"1.20",
        b"-0.05",
        b"0.00",
    ]
    # Arrow alone would print 0E-10 here
    assert enc("numeric(38,10)", [Decimal("0"), Decimal("1E-10")]) == [
        b"0.0000000000",
        b"0.0000000001",
    ]
    assert enc("numeric", ["NaN", "-1.50"]) == [b"NaN", b"-1.50"]


def test_bytea_text() -> None:
    assert enc("bytea", [b"", b"\x00\xff", None]) == [b"\\x", b"\\x00ff", None]


def test_datetime_text() -> None:
    d = pa.array(
        [
            0,
            cal.days(1, 1, 1),
            cal.days(0, 12, 31),
            cal.days(10000, 1, 1),
            cal.DATE_POS_INF,
            cal.DATE_NEG_INF,
        ],
        pa.int32(),
    ).view(pa.date32())
    assert text_encoder(T("date"))(d) == [
        b"1970-01-01",
        b"0001-01-01",
        b"0001-12-31 BC",
        b"10000-01-01",
        b"infinity",
        b"-infinity",
    ]
    ts = pa.array(
        [1704070923000004, 1500000, -62135596800000001, cal.TS_POS_INF, cal.TS_NEG_INF],
        pa.timestamp("us", tz="UTC"),
    )
    assert text_encoder(T("timestamptz"))(ts) == [
        b"2024-01-01 01:02:03.000004+00",
        b"1970-01-01 00:00:01.5+00",
        b"0001-12-31 23:59:59.999999+00 BC",
        b"infinity",
        b"-infinity",
    ]
    assert enc("time", [0, 86400000000, 3723000004]) == [
        b"00:00:00",
        b"24:00:00",
        b"01:02:03.000004",
    ]


def test_interval_text() -> None:
    vals = [
        {"months": 14, "days": 3, "microseconds": 14706700000},
        {"months": 0, "days": 0, "microseconds": 0},
        {"months": -14, "days": 3, "microseconds": -1},
        {"months": -1, "days": -1, "microseconds": 360000000000},
        {"months": 1, "days": 0, "microseconds": 0},
        {"months": 0, "days": -1, "microseconds": 5},
    ]
    assert enc("interval", vals) == [
        b"1 year 2 mons 3 days 04:05:06.7",
        b"00:00:00",
        b"-1 years -2 mons +3 days -00:00:00.000001",
        b"-1 mons -1 days +100:00:00",
        b"1 mon",
        b"-1 days +00:00:00.000005",
    ]
    # DuckDB's month_day_nano form
    mdn = pa.array([pa.MonthDayNano([14, 3, 14706700000000])], pa.month_day_nano_interval())
    assert text_encoder(T("interval"))(mdn) == [b"1 year 2 mons 3 days 04:05:06.7"]


def test_array_text_quoting() -> None:
    assert enc("int4[]", [[1, None, 3], [], None, [None]]) == [
        b"{1,NULL,3}",
        b"{}",
        None,
        b"{NULL}",
    ]
    got = enc(
        "text[]", [["a b", "", "NULL", 'x"y', "back\\slash", "plain", None, "null2", "{", ","]]
    )
    assert got == [b'{"a b","","NULL","x\\"y","back\\\\slash",plain,NULL,null2,"{",","}']
    assert enc("bytea[]", [[b"\x01"]]) == [b'{"\\\\x01"}']
    nested = pa.array([[[1, 2], [3, 4]]], pa.list_(pa.list_(pa.int32())))
    assert text_encoder(T("int4[]"))(nested) == [b"{{1,2},{3,4}}"]


def test_uuid_and_unknown_arrow_forms() -> None:
    raw = pa.array([b"\x12" * 16], pa.binary(16))
    assert text_encoder(T("uuid"))(raw) == [b"12121212-1212-1212-1212-121212121212"]
    assert binary_encoder(T("uuid"))(raw) == [b"\x12" * 16]
    # a STRUCT column (a row value) prints as record_out: fields by their output, quoted
    rows = pa.array([{"a": 1, "b": "x y", "c": None}, None, {"a": -2, "b": "", "c": 1.5}])
    assert text_encoder(T("text"))(rows) == [b'(1,"x y",)', None, b'(-2,"",1.5)']


def test_chunked_input() -> None:
    arr = pa.chunked_array([pa.array([1, 2], pa.int32()), pa.array([3], pa.int32())])
    assert text_encoder(T("int4"))(arr) == [b"1", b"2", b"3"]
    assert binary_encoder(T("int4"))(arr) == [struct.pack(">i", i) for i in (1, 2, 3)]


# ---------------------------------------------------------------------- binary output


def test_binary_fixtures() -> None:
    B = binary_encoder
    assert B(T("bool"))(pa.array([True, False, None])) == [b"\x01", b"\x00", None]
    assert B(T("int2"))(pa.array([-5], pa.int8())) == [b"\xff\xfb"]
    assert B(T("float8"))(pa.array([1.5])) == [struct.pack(">d", 1.5)]
    assert B(T("date"))(pa.array([0, cal.DATE_POS_INF], pa.int32()).view(pa.date32())) == [
        struct.pack(">i", -10957),
        b"\x7f\xff\xff\xff",
    ]
    assert B(T("timestamptz"))(pa.array([0], pa.timestamp("us", tz="UTC"))) == [
        struct.pack(">q", -946684800000000)
    ]
    iv = pa.array([{"months": 14, "days": 3, "microseconds": 5}], INTERVAL_ARROW)
    assert B(T("interval"))(iv) == [struct.pack(">qii", 5, 3, 14)]
    assert B(T("jsonb"))(pa.array(["{}"])) == [b"\x01{}"]
    assert B(T("uuid"))(pa.array(["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"])) == [
        uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11").bytes
    ]


def test_numeric_binary() -> None:
    B = binary_encoder
    dec = pa.array(
        [Decimal("1.20"), Decimal("-0.05"), Decimal("0.00"), Decimal("12345678.90")],
        pa.decimal128(12, 2),
    )
    assert B(T("numeric"))(dec) == [
        bytes.fromhex("0002000000000002000107d0"),
        bytes.fromhex("0001ffff4000000201f4"),
        bytes.fromhex("0000000000000002"),
        bytes.fromhex("000300010000000204d2162e2328"),
    ]
    text = pa.array(["NaN", "Infinity", "-Infinity", "100000000", "0.0001"])
    assert B(T("numeric"))(text) == [
        bytes.fromhex("00000000c0000000"),
        bytes.fromhex("00000000d0000020"),
        bytes.fromhex("00000000f0000020"),
        bytes.fromhex("00010002000000000001"),
        bytes.fromhex("0001ffff000000040001"),
    ]
    # HUGEINT beyond int64 goes through the per-value path
    big = pa.array([Decimal(10**30)], pa.decimal128(38, 0))
    assert binary_decoder(T("numeric"))(B(T("numeric"))(big)).to_pylist() == [str(10**30)]


def test_array_binary() -> None:
    got = binary_encoder(T("int4[]"))(pa.array([[1, None], [], None], pa.list_(pa.int32())))
    assert got == [
        struct.pack(">iiIii", 1, 1, 23, 2, 1) + struct.pack(">ii", 4, 1) + struct.pack(">i", -1),
        struct.pack(">iiI", 0, 0, 23),
        None,
    ]
    nested = pa.array([[[1, 2], [3, 4]]], pa.list_(pa.list_(pa.int32())))
    head = struct.pack(">iiIiiii", 2, 0, 23, 2, 1, 2, 1)
    body = b"".join(struct.pack(">ii", 4, v) for v in (1, 2, 3, 4))
    assert binary_encoder(T("int4[]"))(nested) == [head + body]
    with pytest.raises(PgError) as ei:
        binary_encoder(T("int4[]"))(pa.array([[[1], [2, 3]]], pa.list_(pa.list_(pa.int32()))))
    assert ei.value.sqlstate == "2202E"


# ----------------------------------------------------------------------- text input


@pytest.mark.parametrize(
    ("fn", "text", "state", "message"),
    [
        (lambda s: int_in(s, 32), "x", "22P02", 'invalid input syntax for type integer: "x"'),
        (
            lambda s: int_in(s, 16),
            "40000",
            "22003",
            'value "40000" is out of range for type smallint',
        ),
        (
            lambda s: float_in(s, False),
            "1e400",
            "22003",
            '"1e400" is out of range for type double precision',
        ),
        (lambda s: float_in(s, True), "abc", "22P02", 'invalid input syntax for type real: "abc"'),
        (bool_in, "maybe", "22P02", 'invalid input syntax for type boolean: "maybe"'),
        (lambda s: numeric_text_in(s, (5, 2)), "1000", "22003", "numeric field overflow"),
        (bytea_in, "\\xzz", "22023", 'invalid hexadecimal digit: "z"'),
        (bytea_in, "\\x0", "22023", "invalid hexadecimal data: odd number of digits"),
        (uuid_in, "nope", "22P02", 'invalid input syntax for type uuid: "nope"'),
        (date_in, "2024-13-01", "22008", 'date/time field value out of range: "2024-13-01"'),
        (date_in, "x", "22007", 'invalid input syntax for type date: "x"'),
        (
            lambda s: timestamp_in(s, True),
            "2024-01-01 25:00",
            "22008",
            'date/time field value out of range: "2024-01-01 25:00"',
        ),
        (time_in, "x", "22007", 'invalid input syntax for type time: "x"'),
        (interval_in, "1 ago", "22007", 'invalid input syntax for type interval: "1 ago"'),
        (
            interval_in,
            "100000000000 years",
            "22015",
            'interval field value out of range: "100000000000 years"',
        ),
        (array_in_elements, "{1,2", "22P02", 'malformed array literal: "{1,2"'),
        (jsonb_in, '"\\u0000"', "22P05", "unsupported Unicode escape sequence"),
    ],
)
def test_input_errors(fn, text: str, state: str, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(PgError) as ei:
        fn(text)
    assert (ei.value.sqlstate, ei.value.message) == (state, message)


def test_input_values() -> None:
    assert numeric_text_in("  -0.00 ", None) == "0.00"
    assert numeric_text_in("1.5e3", None) == "1500"
    assert numeric_text_in("1.50e1", None) == "15.0"
    assert numeric_text_in("1.005", (5, 2)) == "1.01"
    assert numeric_text_in("-1.005", (5, 2)) == "-1.01"
    assert numeric_text_in("-0.004", (5, 2)) == "0.00"
    assert interval_in("1 year 2 mons 3 days 04:05:06.7") == (14, 3, 14706700000)
    assert interval_in("@ 1 hour ago") == (0, 0, -3600000000)
    assert interval_in("P1Y2M3DT4H5M6S") == (14, 3, 14706000000)
    assert interval_in("1.5 months") == (1, 15, 0)
    assert date_in("January 8, 1999") == date_in("1999-01-08") == date_in("19990108")
    assert date_in("infinity") == cal.DATE_POS_INF
    assert timestamp_in("2024-01-02 03:04:05+02", True) == timestamp_in("2024-01-02 01:04:05", True)
    assert timestamp_in("2024-01-02 03:04:05+02", False) == timestamp_in(
        "2024-01-02 03:04:05", False
    )
    assert time_in("04:05 PM") == (16 * 60 + 5) * 60_000_000
    assert (
        uuid_in("{A0EEBC99-9C0B4EF8-BB6D6BB9-BD380A11}") == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
    )
    assert bytea_in("\\001\\\\x") == b"\x01\\x"
    assert (
        jsonb_in('{"b":1, "a":2, "aa": [1.50, 1e2], "b": 3}')
        == '{"a": 2, "b": 3, "aa": [1.50, 100]}'
    )
    assert array_in_elements(' { "a b" , c d ,NULL, "NULL", \\N } ') == [
        "a b",
        "c d",
        None,
        "NULL",
        "N",
    ]


@pytest.mark.parametrize(
    ("text", "mdy", "dmy", "ymd"),
    [
        ("01/02/03", (2003, 1, 2), (2003, 2, 1), (2001, 2, 3)),
        ("1/8/1999", (1999, 1, 8), (1999, 8, 1), "22008"),
        ("1/18/1999", (1999, 1, 18), "22008", "22008"),
        ("18/1/1999", "22008", (1999, 1, 18), "22008"),
        ("08-Jan-99", (1999, 1, 8), (1999, 1, 8), "22008"),
        ("99-Jan-08", "22008", "22008", (1999, 1, 8)),
        ("99 Jan 08", "22007", "22008", (1999, 1, 8)),
        ("08 01 99", (1999, 8, 1), (1999, 1, 8), "22008"),
        ("January 8, 99 BC", (-98, 1, 8), (-98, 1, 8), "22008"),
        ("1999-01-08", (1999, 1, 8), (1999, 1, 8), (1999, 1, 8)),
        ("990108", (1999, 1, 8), (1999, 1, 8), (1999, 1, 8)),
        ("J2451187", (1999, 1, 8), (1999, 1, 8), (1999, 1, 8)),
    ],
)
def test_dates_read_in_the_datestyle_order(text: str, mdy: object, dmy: object, ymd: object) -> None:
    """DecodeNumber: a leading field of one or two digits is the month, day or year as
    DateStyle orders them; a year of more digits, a month name or ISO text reads alike in
    every order, and a field out of range is 22008 with the datestyle HINT."""
    for order, want in (("MDY", mdy), ("DMY", dmy), ("YMD", ymd)):
        if isinstance(want, str):
            with pytest.raises(PgError) as e:
                date_in(text, order)
            assert e.value.sqlstate == want, (text, order)
            if want == "22008":
                assert e.value.hint == 'Perhaps you need a different "datestyle" setting.'
        else:
            assert cal.civil(date_in(text, order)) == want, (text, order)


def test_every_text_input_of_dates_and_times_takes_the_order() -> None:
    """Timestamps, times (whose date is checked and dropped), arrays, whole columns, Bind's
    decoder and COPY read dates in the order they are given; MDY when none is."""
    assert timestamp_in("01/02/03 04:05", False, "DMY") == timestamp_in("2003-02-01 04:05", False)
    assert timestamp_in("01/02/03 04:05+02", True, "YMD") == timestamp_in("2001-02-03 02:05", True)
    with pytest.raises(PgError):
        time_in("1/18/1999 04:05", "DMY")
    assert time_in("1/18/1999 04:05") == time_in("04:05")
    col = decode_text_arrow(T("date"), [b"01/02/03", b"2003-01-02", None], "DMY")
    assert col.to_pylist() == [date(2003, 2, 1), date(2003, 1, 2), None]
    arr = decode_text_arrow(T("date[]"), [b"{01/02/03,04/05/06}"], "YMD")
    assert arr.to_pylist() == [[date(2001, 2, 3), date(2004, 5, 6)]]
    assert text_decoder(T("date"), "DMY")([b"01/02/03"]).to_pylist() == [date(2003, 2, 1)]
    assert text_decoder(T("date"))([b"01/02/03"]).to_pylist() == [date(2003, 1, 2)]
    dec = CopyDecoder([T("date")], "text", date_order="DMY")
    dec.feed(b"01/02/03\n")
    assert dec.finish().column(0).to_pylist() == [date(2003, 2, 1)]
    with pytest.raises(ValueError):
        decode_text_arrow(T("date"), [b"01/02/03"], "DYM")


@pytest.mark.parametrize(
    ("text", "ok"),
    [("1/8/1999 04:05", True), ("Jan-08-99 04:05", True), ("040506-08", True), ("04:05 1/8/1999", False),
     ("08 01 99 04:05", False), ("Mon 04:05", False), ("January 04:05", False), ("January 8, 99 BC 04:05", False),
     ("04:05 1999-01-08", False)],
)  # fmt: skip
def test_time_input_takes_numbers_as_time_fields(text: str, ok: bool) -> None:
    """DecodeTimeOnly: a date is read only as the first field, a plain number is hhmm or
    hhmmss, and a month or weekday name is no part of a time."""
    if ok:
        assert time_in(text) == time_in("04:05") or time_in(text) == time_in("04:05:06")
    else:
        with pytest.raises(PgError) as e:
            time_in(text)
        assert e.value.sqlstate == "22007"


def test_decoder_reports_first_bad_index() -> None:
    with pytest.raises(InputError) as ei:
        text_decoder(T("int4"))([b"1", b"2", b" 3 ", b"x", b"y"])
    assert ei.value.index == 3
    with pytest.raises(InputError) as ei:
        text_decoder(T("text"))([b"ok", b"\xc3\x28"])
    assert ei.value.index == 1
    assert ei.value.message == 'invalid byte sequence for encoding "UTF8": 0xc3 0x28'
    with pytest.raises(InputError) as ei:
        binary_decoder(T("int4"))([b"\x00\x00\x00\x01", b"\x00"])
    assert (ei.value.index, ei.value.sqlstate) == (1, "08P01")


def test_typmod_text_input() -> None:
    assert text_decoder(parse_type("char(3)"))([b"a", b"ab   "]).to_pylist() == ["a  ", "ab "]
    with pytest.raises(PgError) as ei:
        text_decoder(parse_type("varchar(3)"))([b"abcd"])
    assert ei.value.message == "value too long for type character varying(3)"
    got = text_decoder(parse_type("numeric(12,2)"))([b"1.005", b"-2"])
    assert got.to_pylist() == [Decimal("1.01"), Decimal("-2.00")]
    with pytest.raises(PgError) as ei:
        text_decoder(parse_type("numeric(12,2)"))([b"NaN"])
    assert ei.value.sqlstate == "0A000"  # decimal128 has no NaN


# --------------------------------------------------------------- round-trip strategies

ints = {
    "int2": st.integers(-(2**15), 2**15 - 1),
    "int4": st.integers(-(2**31), 2**31 - 1),
    "int8": st.integers(-(2**63), 2**63 - 1),
}
safe_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | safe_text,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(safe_text, kids, max_size=4),
    max_leaves=10,
)

STRATEGIES: dict[str, st.SearchStrategy] = {  # type: ignore[type-arg]
    "bool": st.booleans(),
    **ints,
    "float4": st.floats(width=32),
    "float8": st.floats(),
    "numeric": st.decimals(allow_nan=False, allow_infinity=False)
    .filter(lambda d: abs(d.adjusted()) < 300)
    .map(lambda d: numeric_text_in(format(d, "f"), None))
    | st.sampled_from(["NaN", "Infinity", "-Infinity"]),
    "numeric(12,2)": st.decimals(
        min_value=-(10**10) + 1, max_value=10**10 - 1, places=2, allow_nan=False
    ),
    "numeric(38,10)": st.decimals(
        min_value=-(10**28) + 1, max_value=10**28 - 1, places=10, allow_nan=False
    ),
    "text": safe_text,
    "bytea": st.binary(max_size=30),
    "date": st.integers(cal.DATE_MIN, cal.DATE_END - 1)
    | st.sampled_from([cal.DATE_POS_INF, cal.DATE_NEG_INF]),
    "time": st.integers(0, cal.USECS_PER_DAY),
    "timestamp": st.integers(cal.TS_MIN, cal.TS_END)
    | st.sampled_from([cal.TS_POS_INF, cal.TS_NEG_INF]),
    "timestamptz": st.integers(cal.TS_MIN, cal.TS_END)
    | st.sampled_from([cal.TS_POS_INF, cal.TS_NEG_INF]),
    "interval": st.fixed_dictionaries(
        {
            "months": st.integers(-(2**31), 2**31 - 1),
            "days": st.integers(-(2**31), 2**31 - 1),
            "microseconds": st.integers(-(2**63) + 1, 2**63 - 1),
        }
    ),
    "uuid": st.uuids().map(str),
    "json": json_values.map(lambda v: __import__("json").dumps(v)),
    "jsonb": json_values.map(lambda v: jsonb_in(__import__("json").dumps(v))),
}


def _arrow(typ: str, values: list) -> pa.Array:  # type: ignore[type-arg]
    ct = T(typ) if "(" not in typ else parse_type(typ)
    storage = {
        "date": pa.int32(),
        "time": pa.int64(),
        "timestamp": pa.int64(),
        "timestamptz": pa.int64(),
    }.get(typ)
    if storage is not None:
        return pa.array(values, storage).view(ct.arrow)
    return pa.array(values, ct.arrow)


def _same(a: pa.Array, b: pa.Array) -> bool:
    if a.type != b.type:
        return False
    t = a.type
    inner = t.value_type if pa.types.is_list(t) else t
    if pa.types.is_floating(inner):
        fa = a.flatten() if pa.types.is_list(t) else a
        fb = b.flatten() if pa.types.is_list(t) else b
        width = np.uint32 if pa.types.is_float32(inner) else np.uint64
        xa = np.asarray(fa.fill_null(0)).view(width)
        xb = np.asarray(fb.fill_null(0)).view(width)
        nan_a = np.isnan(np.asarray(fa.fill_null(0)))
        nan_b = np.isnan(np.asarray(fb.fill_null(0)))
        same_bits = (xa == xb) | (nan_a & nan_b)
        return bool(same_bits.all()) and a.is_null().equals(b.is_null())
    if pa.types.is_date32(inner) or pa.types.is_timestamp(inner) or pa.types.is_time64(inner):
        return a.view(pa.int64() if not pa.types.is_date32(inner) else pa.int32()).equals(
            b.view(pa.int64() if not pa.types.is_date32(inner) else pa.int32())
        )
    return a.equals(b)


@pytest.mark.parametrize("typ", list(STRATEGIES))
def test_round_trip_text_and_binary(typ: str) -> None:
    ct = T(typ) if "(" not in typ else parse_type(typ)

    @FAST
    @given(st.lists(st.none() | STRATEGIES[typ], max_size=40))
    def run(values: list) -> None:  # type: ignore[type-arg]
        arr = _arrow(typ, values)
        back = text_decoder(ct)(text_encoder(ct)(arr))
        assert _same(back, arr), (typ, arr, back)
        back = binary_decoder(ct)(binary_encoder(ct)(arr))
        assert _same(back, arr), (typ, arr, back)
        # arrays of the same values, with an empty one and a NULL one
        act = ColumnType(ct.base, ct.typmod, True)
        lists = (
            pa.array([values, [], None], act.arrow)
            if typ not in ("date", "time", "timestamp", "timestamptz")
            else pa.ListArray.from_arrays(
                pa.array([0, len(values), len(values), len(values)], pa.int32()),
                arr,
                mask=pa.array([False, False, True]),
            )
        )
        back = text_decoder(act)(text_encoder(act)(lists))
        assert _same(back.flatten(), lists.flatten()) and back.is_null().equals(lists.is_null())
        back = binary_decoder(act)(binary_encoder(act)(lists))
        assert _same(back.flatten(), lists.flatten()) and back.is_null().equals(lists.is_null())

    run()


# ------------------------------------------------- vectorized paths vs reference parsers


def _verdict(fn, s: str) -> tuple:  # type: ignore[no-untyped-def,type-arg]
    try:
        return ("ok", fn(s))
    except PgError as e:
        return ("error", e.sqlstate, e.message)


@FAST
@given(st.lists(st.text(alphabet="0123456789-+ .eE", max_size=8), min_size=1, max_size=20))
def test_int_and_float_fast_paths_agree_with_reference(texts: list[str]) -> None:
    for typ, bits in (("int2", 16), ("int4", 32), ("int8", 64)):
        want = [_verdict(lambda s, b=bits: int_in(s, b), s) for s in texts]
        _check_column(typ, texts, want)
    want = [_verdict(lambda s: float_in(s, False), s) for s in texts]
    _check_column("float8", texts, want)


@FAST
@given(
    st.lists(
        st.from_regex(r"-?[0-9]{0,12}(\.[0-9]{0,4})?", fullmatch=True), min_size=1, max_size=20
    )
)
def test_numeric_fast_path_agrees_with_reference(texts: list[str]) -> None:
    from decoding.pgvalues.textin import numeric_decimal_in

    want = [_verdict(lambda s: numeric_decimal_in(s, 12, 2), s) for s in texts]
    _check_column("numeric(12,2)", texts, want)


@FAST
@given(
    st.lists(
        st.from_regex(
            r"[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?(\+00)?)?",
            fullmatch=True,
        ),
        min_size=1,
        max_size=20,
    )
)
def test_datetime_fast_paths_agree_with_reference(texts: list[str]) -> None:
    _check_column(
        "timestamptz", texts, [_verdict(lambda s: timestamp_in(s, True), s) for s in texts]
    )
    _check_column(
        "timestamp", texts, [_verdict(lambda s: timestamp_in(s, False), s) for s in texts]
    )
    _check_column("date", texts, [_verdict(date_in, s) for s in texts])


def _check_column(typ: str, texts: list[str], want: list[tuple]) -> None:  # type: ignore[type-arg]
    ct = T(typ) if "(" not in typ else parse_type(typ)
    first_err = next((i for i, w in enumerate(want) if w[0] == "error"), None)
    try:
        got = decode_text_arrow(ct, [s.encode() for s in texts])
    except InputError as e:
        assert first_err is not None, (typ, texts, e)
        assert e.index == first_err and (e.sqlstate, e.message) == want[first_err][1:], (typ, texts)
        return
    assert first_err is None, (typ, texts, want[first_err])
    if typ in ("date", "timestamp", "timestamptz"):
        vals = got.view(pa.int32() if typ == "date" else pa.int64()).to_pylist()
    else:
        vals = got.to_pylist()
    for v, w in zip(vals, want, strict=True):
        if isinstance(v, float) and math.isnan(v):
            assert math.isnan(w[1])
        else:
            assert v == w[1], (typ, texts)


# ------------------------------------------------------------------------------- COPY


def _copy_table() -> tuple[pa.Table, list[ColumnType]]:
    cts = [T("int8"), T("text"), T("float8"), T("timestamptz"), T("bytea"), T("int4[]"), T("bool")]
    t = pa.table(
        {
            "id": pa.array([1, 2, 3, None], pa.int64()),
            "t": pa.array(["plain", "tab\there\nnew\\back\rcr\x01", "", None]),
            "f": pa.array([1.5, float("nan"), -0.0, None]),
            "ts": pa.array([0, 1500000, None, cal.TS_POS_INF], pa.timestamp("us", tz="UTC")),
            "b": pa.array([b"\x00\xff", b"", None, b"\\"]),
            "a": pa.array([[1, None], [], None, [3]], pa.list_(pa.int32())),
            "bo": pa.array([True, False, None, True]),
        }
    )
    return t, cts


def test_copy_text_fixture() -> None:
    t, cts = _copy_table()
    out = b"".join(encode_copy(t, cts, "text"))
    assert out == (
        b"1\tplain\t1.5\t1970-01-01 00:00:00+00\t\\\\x00ff\t{1,NULL}\tt\n"
        b"2\ttab\\there\\nnew\\\\back\\rcr\x01\tNaN\t1970-01-01 00:00:01.5+00\t\\\\x\t{}\tf\n"
        b"3\t\t-0\t\\N\t\\N\t\\N\t\\N\n"
        b"\\N\t\\N\t\\N\tinfinity\t\\\\x5c\t{3}\tt\n"
    )


def test_copy_csv_fixture() -> None:
    t, cts = _copy_table()
    out = b"".join(encode_copy(t, cts, "csv", header=True))
    assert out == (
        b"id,t,f,ts,b,a,bo\n"
        b'1,plain,1.5,1970-01-01 00:00:00+00,\\x00ff,"{1,NULL}",t\n'
        b'2,"tab\there\nnew\\back\rcr\x01",NaN,1970-01-01 00:00:01.5+00,\\x,{},f\n'
        b'3,"",-0,,,,\n'
        b",,,infinity,\\x5c,{3},t\n"
    )
    out = b"".join(encode_copy(t.select([0, 1]), cts[:2], "csv", force_quote=["t"], null="NULL"))
    assert out.split(b"\n")[-2] == b"NULL,NULL"
    assert out.split(b"\n")[0] == b'1,"plain"'


def test_copy_binary_fixture() -> None:
    t = pa.table({"a": pa.array([1, None], pa.int32()), "b": pa.array(["x", "yz"])})
    out = b"".join(encode_copy(t, [T("int4"), T("text")], "binary"))
    assert out == (
        BINARY_SIGNATURE
        + b"\x00\x00\x00\x00\x00\x00\x00\x00"
        + b"\x00\x02\x00\x00\x00\x04\x00\x00\x00\x01\x00\x00\x00\x01x"
        + b"\x00\x02\xff\xff\xff\xff\x00\x00\x00\x02yz"
        + b"\xff\xff"
    )
    empty = b"".join(encode_copy(t.slice(0, 0), [T("int4"), T("text")], "binary"))
    assert empty == BINARY_SIGNATURE + b"\x00" * 8 + b"\xff\xff"


def test_copy_chunks_are_whole_rows() -> None:
    n = 5000
    t = pa.table({"a": pa.array(np.arange(n)), "t": pa.array(["x" * (i % 50) for i in range(n)])})
    chunks = list(encode_copy(t, [T("int8"), T("text")], "text", chunk_bytes=1000, batch_rows=700))
    assert all(c.endswith(b"\n") for c in chunks)
    assert all(len(c) <= 1100 for c in chunks)
    assert sum(c.count(b"\n") for c in chunks) == n


def test_data_rows() -> None:
    t = pa.table({"a": pa.array([1, None], pa.int32()), "b": pa.array(["x", "yz"])})
    out = b"".join(encode_data_rows(t, [T("int4"), T("text")], [0, 1]))
    row1 = b"\x00\x02" + b"\x00\x00\x00\x011" + b"\x00\x00\x00\x01x"
    row2 = b"\x00\x02" + b"\xff\xff\xff\xff" + b"\x00\x00\x00\x02yz"
    assert (
        out
        == b"D"
        + struct.pack(">i", 4 + len(row1))
        + row1
        + b"D"
        + struct.pack(">i", 4 + len(row2))
        + row2
    )


def test_copy_text_unescape() -> None:
    assert copy_text_unescape(b"a\\tb\\x41\\101\\q\\\\\\N") == b"a\tbAAq\\N"
    assert copy_text_unescape(b"\\x4g\\0") == b"\x04g\x00"


def _feed_all(dec: CopyDecoder, data: bytes, step: int) -> pa.Table:
    for k in range(0, len(data), step):
        dec.feed(data[k : k + step])
    return dec.finish()


@pytest.mark.parametrize("fmt", ["text", "csv", "binary"])
def test_copy_round_trip_any_split(fmt: str) -> None:
    t, cts = _copy_table()
    data = b"".join(encode_copy(t, cts, fmt))  # type: ignore[arg-type]
    for step in (1, 2, 5, 13, len(data)):
        got = _feed_all(CopyDecoder(cts, fmt, names=t.column_names, batch_bytes=8), data, step)  # type: ignore[arg-type]
        for name in t.column_names:
            assert _same(got.column(name).combine_chunks(), t.column(name).combine_chunks()), (
                fmt,
                step,
                name,
            )


copy_rows = st.lists(
    st.tuples(
        st.none() | st.integers(-(2**63), 2**63 - 1), st.none() | safe_text, st.none() | st.floats()
    ),
    max_size=25,
)


@FAST
@given(
    copy_rows,
    st.sampled_from(["text", "csv", "binary"]),
    st.integers(1, 50),
    st.sampled_from([None, "|", ";"]),
)
def test_copy_round_trip_random(rows: list, fmt: str, step: int, delim: str | None) -> None:  # type: ignore[type-arg]
    if fmt == "binary":
        delim = None
    t = pa.table(
        {
            "a": pa.array([r[0] for r in rows], pa.int64()),
            "b": pa.array([r[1] for r in rows], pa.string()),
            "c": pa.array([r[2] for r in rows], pa.float64()),
        }
    )
    cts = [T("int8"), T("text"), T("float8")]
    data = b"".join(encode_copy(t, cts, fmt, delimiter=delim))  # type: ignore[arg-type]
    opts = {"delimiter": delim} if delim else {}
    got = _feed_all(CopyDecoder(cts, fmt, opts, names=["a", "b", "c"], batch_bytes=64), data, step)  # type: ignore[arg-type]
    for name in ("a", "b", "c"):
        assert _same(got.column(name).combine_chunks(), t.column(name).combine_chunks())


@pytest.mark.parametrize(
    ("fmt", "data", "state", "message", "where"),
    [
        ("text", b"1\tx\n2\n", "22P04", 'missing data for column "b"', 'COPY t, line 2: "2"'),
        (
            "text",
            b"1\tx\ty\n",
            "22P04",
            "extra data after last expected column",
            'COPY t, line 1: "1\tx\ty"',
        ),
        (
            "text",
            b"1\tx\nz\ty\n",
            "22P02",
            'invalid input syntax for type integer: "z"',
            'COPY t, line 2, column a: "z"',
        ),
        ("text", b"1\tx\r\n2\ty\n", "22P04", "literal newline found in data", "COPY t, line 2"),
        ("text", b"1\tx\n\\.x\n", "22P04", "end-of-copy marker corrupt", "COPY t, line 2"),
        (
            "csv",
            b'1,"open\n',
            "22P04",
            "unterminated CSV quoted field",
            'COPY t, line 1: "1,"open\n"',
        ),
        ("csv", b"1,x\r2,y\n", "22P04", "unquoted newline found in data", "COPY t, line 2"),
        (
            "binary",
            b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8 + b"\x00\x01",
            "22P04",
            "row field count is 1, expected 2",
            "COPY t, line 1",
        ),
    ],
)
def test_copy_from_errors(fmt: str, data: bytes, state: str, message: str, where: str) -> None:
    dec = CopyDecoder([T("int4"), T("text")], fmt, names=["a", "b"], table_name="t")  # type: ignore[arg-type]
    with pytest.raises(CopyError) as ei:
        _feed_all(dec, data, len(data))
    assert (ei.value.sqlstate, ei.value.message, ei.value.where) == (state, message, where)


def test_copy_long_value_context_is_cut() -> None:
    dec = CopyDecoder([T("int4")], "text", names=["a"], table_name="t")
    with pytest.raises(CopyError) as ei:
        _feed_all(dec, b"9" * 150 + b"\n", 200)
    assert ei.value.where == 'COPY t, line 1, column a: "' + "9" * 100 + '..."'


def test_copy_options_validation() -> None:
    with pytest.raises(PgError, match="single one-byte"):
        CopyOptions(delimiter="||").validate(is_from=False)
    with pytest.raises(PgError, match="cannot specify DELIMITER in BINARY mode"):
        CopyOptions(format="binary", delimiter=",").validate(is_from=False)
    with pytest.raises(PgError, match='COPY delimiter cannot be "a"'):
        CopyOptions(delimiter="a").validate(is_from=True)
    with pytest.raises(PgError, match="COPY quote available only in CSV mode"):
        list(encode_copy(pa.table({"a": [1]}), [T("int8")], "text", quote='"'))
    with pytest.raises(PgError, match='cannot use "match" with HEADER in COPY TO'):
        list(encode_copy(pa.table({"a": [1]}), [T("int8")], "csv", header="match"))
    assert CopyOptions(format="csv", header="on").validate(is_from=True).header is True
    # keyword options, as the SQL layer passes them
    dec = CopyDecoder([T("int4")], "csv", names=["a"], delimiter=";", null="N", header=True)
    dec.feed(b"a\nN\n5\n")
    assert dec.finish().column("a").to_pylist() == [None, 5]


def test_copy_drain_incremental() -> None:
    dec = CopyDecoder([T("int4")], "text", names=["a"], batch_bytes=4)
    dec.feed(b"1\n2\n3\n")
    first = dec.drain()
    dec.feed(b"4\n")
    rest = dec.finish()
    assert first.column("a").to_pylist() + rest.column("a").to_pylist() == [1, 2, 3, 4]
    assert dec.rows == 4


# ---------------------------------------------------------------------- DuckDB types


@pytest.mark.parametrize(
    ("duck", "pg"),
    [
        ("INTEGER", "integer"),
        ("BIGINT", "bigint"),
        ("DECIMAL(12,3)", "numeric(12,3)"),
        ("VARCHAR", "text"),
        ("BLOB", "bytea"),
        ("TIMESTAMP WITH TIME ZONE", "timestamp with time zone"),
        ("INTERVAL", "interval"),
        ("UUID", "uuid"),
        ("JSON", "json"),
        ("INTEGER[]", "integer[]"),
        ("BOOLEAN", "boolean"),
        ("DOUBLE", "double precision"),
        ("FLOAT", "real"),
        ("SMALLINT", "smallint"),
        ("TINYINT", "smallint"),
        ("UTINYINT", "smallint"),
        ("USMALLINT", "integer"),
        ("UINTEGER", "bigint"),
        ("UBIGINT", "numeric"),
        ("HUGEINT", "numeric"),
        ("DATE", "date"),
        ("TIME", "time without time zone"),
        ("TIMESTAMP", "timestamp without time zone"),
        ("TIMESTAMP_NS", "timestamp without time zone"),
        ("NULL", "text"),
        ('"NULL"', "text"),
        ("STRUCT(a INTEGER)", "text"),
        ("MAP(VARCHAR, INTEGER)", "text"),
        ("INTEGER[][]", "integer[]"),
        ("VARCHAR[3]", "text[]"),
    ],
)
def test_pg_type_for_duckdb(duck: str, pg: str) -> None:
    assert pg_type_for_duckdb(duck).sql_name() == pg


def test_pg_type_for_duckdb_accepts_duckdb_types() -> None:
    import duckdb

    rel = duckdb.sql("SELECT 1::TINYINT a, 'x' b, [1.5]::DOUBLE[] c")
    assert [pg_type_for_duckdb(t).sql_name() for t in rel.types] == [
        "smallint",
        "text",
        "double precision[]",
    ]


def test_small_helpers() -> None:
    assert date(1970, 1, 1).toordinal() - date(1, 1, 1).toordinal() == -cal.days(1, 1, 1)
    y, m, d = cal.civil_from_days(np.array([0, -1, cal.days(2000, 2, 29)]))
    assert list(zip(y, m, d, strict=True)) == [(1970, 1, 1), (1969, 12, 31), (2000, 2, 29)]


def test_binary_copy_data_after_trailer_in_a_later_message() -> None:
    dec = CopyDecoder([T("int4")], "binary", names=["a"], table_name="t", batch_bytes=1)
    dec.feed(BINARY_SIGNATURE + b"\x00" * 8 + b"\x00\x01\x00\x00\x00\x04\x00\x00\x00\x07\xff\xff")
    with pytest.raises(CopyError) as ei:
        dec.feed(b"x")
    assert (ei.value.message, ei.value.where) == (
        "received copy data after EOF marker",
        "COPY t, line 2",
    )


def test_array_errors_come_in_value_order() -> None:
    dec = text_decoder(T("int4[]"))
    with pytest.raises(InputError) as ei:
        dec([b"{1,x}", b"{2"])  # the element error of the first value wins
    assert (ei.value.index, ei.value.message) == (0, 'invalid input syntax for type integer: "x"')
    with pytest.raises(InputError) as ei:
        dec([b"{1}", b"{1", b"{x}"])
    assert (ei.value.index, ei.value.message) == (1, 'malformed array literal: "{1"')
    got = dec([b"{1,2,NULL}", b" { 3 , 4 } ", b"{}", None, b'{"5", 6}', b"{null , NuLL}"])
    assert got.to_pylist() == [[1, 2, None], [3, 4], [], None, [5, 6], [None, None]]


def test_duckdb_result_through_copy() -> None:
    import duckdb

    rel = duckdb.sql(
        "SELECT range AS id, range::TINYINT % 5 AS t, 'v' || range AS s, "
        "interval (range) day AS iv, [range, NULL] AS l, range * 1.5::DECIMAL(10,2) AS d, "
        "{'a': range} AS st FROM range(3)"
    )
    cts = [pg_type_for_duckdb(t) for t in rel.types]
    out = b"".join(encode_copy(rel.to_arrow_table(), cts, "text"))
    assert out.split(b"\n")[2] == b"2\t2\tv2\t2 days\t{2,NULL}\t3.00\t(2)"  # (a STRUCT as record_out)


def test_name_values_are_cut_or_refused_as_postgresql_reads_them() -> None:
    """namein cuts text to 63 bytes at a character's end; namerecv refuses 64 bytes or more
    (42622), as PostgreSQL 15's do; output is the value as stored."""
    from decoding.pgvalues import decode_binary_arrow

    name = parse_type("name")
    got = decode_text_arrow(name, ["x" * 70, "é" * 40, "ab", None]).to_pylist()
    assert got == ["x" * 63, "é" * 31, "ab", None]
    assert decode_binary_arrow(name, [b"y" * 63]).to_pylist() == ["y" * 63]
    with pytest.raises(PgError) as e:
        decode_binary_arrow(name, [b"y" * 64])
    assert (e.value.sqlstate, e.value.message) == ("42622", "identifier too long")
    assert encode_text_arrow(name, pa.array(["n"])).to_pylist() in (["n"], [b"n"])
