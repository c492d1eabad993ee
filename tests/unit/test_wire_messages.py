"""Message codec: byte-exact against PostgreSQL 15 captures, handwritten fixtures, properties."""

from __future__ import annotations

import contextlib
import struct
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.wire_fixtures import Capture, capture_paths, load_capture
from walsender_proxy.protocol import (
    BACKEND_MESSAGES,
    BACKEND_REPLICATION_MESSAGES,
    FRONTEND_MESSAGES,
    FRONTEND_REPLICATION_MESSAGES,
    PG_EPOCH,
    Authentication,
    AuthenticationCleartextPassword,
    AuthenticationGSS,
    AuthenticationGSSContinue,
    AuthenticationMD5Password,
    AuthenticationOk,
    AuthenticationSASL,
    AuthenticationSASLContinue,
    AuthenticationSASLFinal,
    AuthenticationSSPI,
    AuthResponse,
    BackendKeyData,
    Bind,
    BindComplete,
    CancelRequest,
    Close,
    CloseComplete,
    CommandComplete,
    CopyBothResponse,
    CopyData,
    CopyDone,
    CopyFail,
    CopyInResponse,
    CopyOutResponse,
    DataRow,
    Describe,
    EmptyQueryResponse,
    ErrorResponse,
    Execute,
    FieldDescription,
    Flush,
    FunctionCall,
    FunctionCallResponse,
    GSSENCRequest,
    GSSENCResponse,
    HotStandbyFeedback,
    NegotiateProtocolVersion,
    NoData,
    NoticeResponse,
    NotificationResponse,
    ParameterDescription,
    ParameterStatus,
    Parse,
    ParseComplete,
    PasswordMessage,
    PortalSuspended,
    PrimaryKeepalive,
    ProtocolViolation,
    Query,
    Reader,
    ReadyForQuery,
    RowDescription,
    SASLInitialResponse,
    SASLResponse,
    SSLRequest,
    SSLResponse,
    StandbyStatusUpdate,
    StartupMessage,
    Sync,
    Terminate,
    Writer,
    XLogData,
    datetime_to_pg,
    decode_replication_message,
    decode_startup_packet,
    encode_copy_data,
    encode_copy_data_many,
    encode_data_row,
    encode_data_rows,
    encode_keepalive_message,
    encode_xlogdata_message,
    pg_now,
    pg_to_datetime,
    pg_to_unix,
    unix_to_pg,
)
from walsender_proxy.protocol.messages import Message

CAPTURES = capture_paths()
pytestmark = pytest.mark.skipif(not CAPTURES, reason="protocol captures not available")


def msg(code: bytes, body: bytes) -> bytes:
    """A typed frame built by hand, independently of the codec."""
    return code + struct.pack("!i", len(body) + 4) + body


def roundtrip_typed(registry, raw: bytes) -> Message:
    decoded = registry[raw[:1]].decode(raw[5:])
    assert decoded.encode() == raw
    return decoded


# --------------------------------------------------------------------------------------
# Captures: every message PostgreSQL 15 and its clients sent, decoded and re-encoded
# --------------------------------------------------------------------------------------


def _frontend_roundtrip(capture: Capture) -> set[str]:
    seen: set[str] = set()
    sasl_step = 0
    for m in capture.frontend_messages:
        if m.type_code is None:
            packet = decode_startup_packet(m.payload)
            assert packet.encode() == m.raw
            seen.add(type(packet).__name__)
            continue
        decoded = roundtrip_typed(FRONTEND_MESSAGES, m.raw)
        seen.add(type(decoded).__name__)
        if isinstance(decoded, AuthResponse):
            # The captures authenticate with SCRAM: initial response, then one more.
            typed = decoded.as_sasl_initial() if sasl_step == 0 else decoded.as_sasl_response()
            sasl_step += 1
            assert typed.encode() == m.raw
            seen.add(type(typed).__name__)
        elif isinstance(decoded, CopyData):
            rep = decode_replication_message(decoded.data, FRONTEND_REPLICATION_MESSAGES)
            assert rep.encode() == decoded.data
            assert rep.encode_message() == m.raw
            seen.add(type(rep).__name__)
    return seen


def _backend_roundtrip(capture: Capture) -> set[str]:
    seen: set[str] = set()
    streaming = False
    for m in capture.backend_messages:
        if m.type_code is None:
            answer = SSLResponse.decode(m.payload)
            assert answer.encode() == m.raw
            seen.add("SSLResponse")
            continue
        decoded = roundtrip_typed(BACKEND_MESSAGES, m.raw)
        seen.add(type(decoded).__name__)
        if isinstance(decoded, CopyBothResponse):
            streaming = True
        elif isinstance(decoded, CopyData) and streaming:
            rep = decode_replication_message(decoded.data, BACKEND_REPLICATION_MESSAGES)
            assert rep.encode() == decoded.data
            assert rep.encode_message() == m.raw
            seen.add(type(rep).__name__)
        elif isinstance(decoded, CopyDone):
            streaming = False
    return seen


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_capture_frontend_roundtrip(path: Path) -> None:
    assert _frontend_roundtrip(load_capture(path))


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_capture_backend_roundtrip(path: Path) -> None:
    assert _backend_roundtrip(load_capture(path))


def test_captures_cover_expected_types() -> None:
    frontend: set[str] = set()
    backend: set[str] = set()
    for path in CAPTURES:
        capture = load_capture(path)
        frontend |= _frontend_roundtrip(capture)
        backend |= _backend_roundtrip(capture)
    assert frontend == {
        "SSLRequest",
        "StartupMessage",
        "AuthResponse",
        "SASLInitialResponse",
        "SASLResponse",
        "Query",
        "CopyData",
        "CopyDone",
        "StandbyStatusUpdate",
        "Terminate",
    }
    assert backend == {
        "SSLResponse",
        "AuthenticationOk",
        "AuthenticationSASL",
        "AuthenticationSASLContinue",
        "AuthenticationSASLFinal",
        "ParameterStatus",
        "BackendKeyData",
        "ReadyForQuery",
        "RowDescription",
        "DataRow",
        "CommandComplete",
        "ErrorResponse",
        "CopyOutResponse",
        "CopyBothResponse",
        "CopyData",
        "CopyDone",
        "XLogData",
        "PrimaryKeepalive",
    }


def test_capture_startup_message_fields() -> None:
    capture = load_capture(CAPTURES[0])
    startup = [m for m in capture.frontend_messages if m.type_code is None][1]
    decoded = decode_startup_packet(startup.payload)
    assert isinstance(decoded, StartupMessage)
    assert (decoded.major, decoded.minor) == (3, 0)
    assert list(decoded.parameters) == [
        "user",
        "database",
        "replication",
        "options",
        "application_name",
        "client_encoding",
    ]
    assert decoded.parameters["options"].startswith(" -c datestyle=ISO")
    assert decoded.protocol_options == {}


def test_capture_error_response_matches_create() -> None:
    """conn_060 holds PostgreSQL's answer to creating an existing slot."""
    capture = load_capture(next(p for p in CAPTURES if p.stem == "conn_060"))
    (raw,) = [m.raw for m in capture.backend_messages if m.type_code == b"E"]
    built = ErrorResponse.create(
        "ERROR",
        "42710",
        'replication slot "rl_td" already exists',
        file="slot.c",
        line=310,
        routine="ReplicationSlotCreate",
    )
    assert built.encode() == raw
    decoded = ErrorResponse.decode(raw[5:])
    assert decoded.sqlstate == "42710"
    assert decoded.severity == "ERROR"
    assert decoded.message == 'replication slot "rl_td" already exists'
    assert decoded.detail is None and decoded.position is None


def test_wire_example_keepalive_and_status_update() -> None:
    # shared/protocol/pg15/wire_examples.md, conn 002.
    k = bytes.fromhex("6b00000000019a6d98000303d099282d1800")
    keepalive = decode_replication_message(k)
    assert keepalive == PrimaryKeepalive(0x19A6D98, keepalive.send_time, False)
    assert pg_to_datetime(keepalive.send_time) == datetime(
        2026, 11, 21, 23, 36, 27, 759896, tzinfo=UTC
    )
    r = bytes.fromhex("7200000000019a6d9800000000019a6d9800000000019a6d98000303d099282dd400")
    status = decode_replication_message(r)
    assert isinstance(status, StandbyStatusUpdate)
    assert status.write_lsn == status.flush_lsn == status.apply_lsn == 0x19A6D98
    assert pg_to_datetime(status.send_time) == datetime(
        2026, 11, 21, 23, 36, 27, 760084, tzinfo=UTC
    )
    assert status.reply_requested is False


def test_wire_example_xlogdata_begin() -> None:
    raw = bytes.fromhex(
        "7700000000019ad53800000000019ad538000303d0a0b1e9464200000000019ad688000303d0a0b1e681000002ff"
    )
    x = decode_replication_message(raw)
    assert isinstance(x, XLogData)
    assert x.data_start == x.wal_end == 0x19AD538
    assert x.data[:1] == b"B" and len(x.data) == 21
    assert pg_to_datetime(x.send_time) == datetime(2026, 11, 21, 23, 38, 34, 227014, tzinfo=UTC)
    assert encode_xlogdata_message(x.data_start, x.wal_end, x.send_time, x.data) == msg(b"d", raw)


# --------------------------------------------------------------------------------------
# Handwritten fixtures for messages the captures do not contain
# --------------------------------------------------------------------------------------

FRONTEND_FIXTURES: list[tuple[Message, bytes]] = [
    (Query("SELECT 1;"), msg(b"Q", b"SELECT 1;\x00")),
    (Query(""), msg(b"Q", b"\x00")),
    (
        Parse("s1", "SELECT $1::int", (23,)),
        msg(b"P", b"s1\x00SELECT $1::int\x00\x00\x01\x00\x00\x00\x17"),
    ),
    (Parse("", "SELECT 1"), msg(b"P", b"\x00SELECT 1\x00\x00\x00")),
    (
        Bind("p1", "s1", (1,), (b"\x00\x00\x00\x2a", None), (0, 1)),
        msg(
            b"B",
            b"p1\x00s1\x00"
            b"\x00\x01\x00\x01"
            b"\x00\x02\x00\x00\x00\x04\x00\x00\x00\x2a\xff\xff\xff\xff"
            b"\x00\x02\x00\x00\x00\x01",
        ),
    ),
    (Bind("", ""), msg(b"B", b"\x00\x00\x00\x00\x00\x00\x00\x00")),
    (Describe("S", "s1"), msg(b"D", b"Ss1\x00")),
    (Describe("P", ""), msg(b"D", b"P\x00")),
    (Execute("", 0), msg(b"E", b"\x00\x00\x00\x00\x00")),
    (Execute("p1", 100), msg(b"E", b"p1\x00\x00\x00\x00\x64")),
    (Sync(), b"S\x00\x00\x00\x04"),
    (Flush(), b"H\x00\x00\x00\x04"),
    (Close("S", "s1"), msg(b"C", b"Ss1\x00")),
    (Close("P", "p1"), msg(b"C", b"Pp1\x00")),
    (Terminate(), b"X\x00\x00\x00\x04"),
    (CopyData(b"1\tfoo\n"), msg(b"d", b"1\tfoo\n")),
    (CopyDone(), b"c\x00\x00\x00\x04"),
    (CopyFail("client gave up"), msg(b"f", b"client gave up\x00")),
    (
        FunctionCall(1598, (0,), (b"42", None), 1),
        msg(
            b"F",
            b"\x00\x00\x06\x3e\x00\x01\x00\x00\x00\x02\x00\x00\x00\x0242\xff\xff\xff\xff\x00\x01",
        ),
    ),
    (AuthResponse(b"secret\x00"), msg(b"p", b"secret\x00")),
]

AUTH_FIXTURES: list[tuple[Message, bytes]] = [
    (PasswordMessage(b"secret"), msg(b"p", b"secret\x00")),
    (
        PasswordMessage(b"md5" + b"0" * 32),
        msg(b"p", b"md5" + b"0" * 32 + b"\x00"),
    ),
    (
        SASLInitialResponse("SCRAM-SHA-256", None),
        msg(b"p", b"SCRAM-SHA-256\x00\xff\xff\xff\xff"),
    ),
    (
        SASLInitialResponse("SCRAM-SHA-256", b"n,,n=,r=abc"),
        msg(b"p", b"SCRAM-SHA-256\x00\x00\x00\x00\x0bn,,n=,r=abc"),
    ),
    (SASLResponse(b"c=biws,r=abc,p=xyz"), msg(b"p", b"c=biws,r=abc,p=xyz")),
]

STARTUP_FIXTURES: list[tuple[Message, bytes]] = [
    (SSLRequest(), bytes.fromhex("0000000804d2162f")),
    (GSSENCRequest(), bytes.fromhex("0000000804d21630")),
    (CancelRequest(6158, 0xB8165673), bytes.fromhex("0000001004d2162e0000180eb8165673")),
    (
        StartupMessage({"user": "u", "database": "d"}),
        b"\x00\x00\x00\x1b\x00\x03\x00\x00user\x00u\x00database\x00d\x00\x00",
    ),
    (
        StartupMessage({"user": "u", "_pq_.x": "1"}, protocol_version=(3 << 16) | 2),
        b"\x00\x00\x00\x19\x00\x03\x00\x02user\x00u\x00_pq_.x\x001\x00\x00",
    ),
]

BACKEND_FIXTURES: list[tuple[Message, bytes]] = [
    (AuthenticationOk(), msg(b"R", b"\x00\x00\x00\x00")),
    (AuthenticationCleartextPassword(), msg(b"R", b"\x00\x00\x00\x03")),
    (
        AuthenticationMD5Password(b"\x01\x02\x03\x04"),
        msg(b"R", b"\x00\x00\x00\x05\x01\x02\x03\x04"),
    ),
    (AuthenticationGSS(), msg(b"R", b"\x00\x00\x00\x07")),
    (AuthenticationGSSContinue(b"tok"), msg(b"R", b"\x00\x00\x00\x08tok")),
    (AuthenticationSSPI(), msg(b"R", b"\x00\x00\x00\x09")),
    (
        AuthenticationSASL(("SCRAM-SHA-256-PLUS", "SCRAM-SHA-256")),
        msg(b"R", b"\x00\x00\x00\x0aSCRAM-SHA-256-PLUS\x00SCRAM-SHA-256\x00\x00"),
    ),
    (AuthenticationSASLContinue(b"r=1,s=2,i=4096"), msg(b"R", b"\x00\x00\x00\x0br=1,s=2,i=4096")),
    (AuthenticationSASLFinal(b"v=abc"), msg(b"R", b"\x00\x00\x00\x0cv=abc")),
    (ParameterStatus("server_version", "15.18"), msg(b"S", b"server_version\x0015.18\x00")),
    (BackendKeyData(6158, 0xB8165673), msg(b"K", bytes.fromhex("0000180eb8165673"))),
    (ReadyForQuery("I"), b"Z\x00\x00\x00\x05I"),
    (ReadyForQuery("T"), b"Z\x00\x00\x00\x05T"),
    (ReadyForQuery("E"), b"Z\x00\x00\x00\x05E"),
    (
        RowDescription(
            (
                FieldDescription("id", 16391, 1, 23, 4, -1, 1),
                FieldDescription("?column?"),
            )
        ),
        msg(
            b"T",
            b"\x00\x02"
            b"id\x00\x00\x00\x40\x07\x00\x01\x00\x00\x00\x17\x00\x04\xff\xff\xff\xff\x00\x01"
            b"?column?\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x19\xff\xff\xff\xff\xff\xff\x00\x00",
        ),
    ),
    (RowDescription(()), msg(b"T", b"\x00\x00")),
    (
        DataRow((b"", None, b"abc")),
        msg(b"D", b"\x00\x03\x00\x00\x00\x00\xff\xff\xff\xff\x00\x00\x00\x03abc"),
    ),
    (DataRow(()), msg(b"D", b"\x00\x00")),
    (CommandComplete("INSERT 0 1"), msg(b"C", b"INSERT 0 1\x00")),
    (EmptyQueryResponse(), b"I\x00\x00\x00\x04"),
    (
        NoticeResponse.create("NOTICE", "00000", "nothing to do", hint="relax"),
        msg(b"N", b"SNOTICE\x00VNOTICE\x00C00000\x00Mnothing to do\x00Hrelax\x00\x00"),
    ),
    (
        ErrorResponse.create(
            "ERROR", "42601", 'syntax error at or near "SELEC"', detail="d", position=1
        ),
        msg(
            b"E",
            b'SERROR\x00VERROR\x00C42601\x00Msyntax error at or near "SELEC"\x00Dd\x00P1\x00\x00',
        ),
    ),
    (ParseComplete(), b"1\x00\x00\x00\x04"),
    (BindComplete(), b"2\x00\x00\x00\x04"),
    (CloseComplete(), b"3\x00\x00\x00\x04"),
    (NoData(), b"n\x00\x00\x00\x04"),
    (PortalSuspended(), b"s\x00\x00\x00\x04"),
    (
        ParameterDescription((23, 25)),
        msg(b"t", b"\x00\x02\x00\x00\x00\x17\x00\x00\x00\x19"),
    ),
    (CopyInResponse(0, (0, 0)), msg(b"G", b"\x00\x00\x02\x00\x00\x00\x00")),
    (CopyOutResponse(1, (1,)), msg(b"H", b"\x01\x00\x01\x00\x01")),
    (CopyBothResponse(), msg(b"W", b"\x00\x00\x00")),
    (
        NegotiateProtocolVersion(0, ("_pq_.x",)),
        msg(b"v", b"\x00\x00\x00\x00\x00\x00\x00\x01_pq_.x\x00"),
    ),
    (NotificationResponse(42, "chan", "hi"), msg(b"A", b"\x00\x00\x00\x2achan\x00hi\x00")),
    (FunctionCallResponse(None), msg(b"V", b"\xff\xff\xff\xff")),
    (FunctionCallResponse(b"x"), msg(b"V", b"\x00\x00\x00\x01x")),
    (CopyData(b""), msg(b"d", b"")),
    (CopyDone(), b"c\x00\x00\x00\x04"),
]


@pytest.mark.parametrize(("message", "raw"), FRONTEND_FIXTURES, ids=repr)
def test_frontend_fixture(message: Message, raw: bytes) -> None:
    assert message.encode() == raw
    assert FRONTEND_MESSAGES[raw[:1]].decode(raw[5:]) == message


@pytest.mark.parametrize(("message", "raw"), AUTH_FIXTURES, ids=repr)
def test_auth_response_fixture(message: Message, raw: bytes) -> None:
    assert message.encode() == raw
    assert type(message).decode(raw[5:]) == message
    generic = FRONTEND_MESSAGES[b"p"].decode(raw[5:])
    assert isinstance(generic, AuthResponse)
    helper = {
        PasswordMessage: generic.as_password,
        SASLInitialResponse: generic.as_sasl_initial,
        SASLResponse: generic.as_sasl_response,
    }[type(message)]
    assert helper() == message


@pytest.mark.parametrize(("message", "raw"), STARTUP_FIXTURES, ids=repr)
def test_startup_fixture(message: Message, raw: bytes) -> None:
    assert message.encode() == raw
    assert decode_startup_packet(raw[4:]) == message
    assert type(message).decode(raw[4:]) == message


@pytest.mark.parametrize(("message", "raw"), BACKEND_FIXTURES, ids=repr)
def test_backend_fixture(message: Message, raw: bytes) -> None:
    assert message.encode() == raw
    assert BACKEND_MESSAGES[raw[:1]].decode(raw[5:]) == message


def test_encryption_answers() -> None:
    assert SSLResponse(False).encode() == b"N"
    assert SSLResponse(True).encode() == b"S"
    assert GSSENCResponse(True).encode() == b"G"
    assert SSLResponse.decode(b"N") == SSLResponse(False)
    assert GSSENCResponse.decode(b"N") == GSSENCResponse(False)
    with pytest.raises(ProtocolViolation):
        SSLResponse.decode(b"G")


def test_hot_standby_feedback_fixture() -> None:
    body = struct.pack("!qIIII", 1234, 100, 0, 90, 1)
    feedback = decode_replication_message(b"h" + body, FRONTEND_REPLICATION_MESSAGES)
    assert feedback == HotStandbyFeedback(1234, 100, 0, 90, 1)
    assert feedback.encode() == b"h" + body
    assert feedback.encode_message() == msg(b"d", b"h" + body)
    assert feedback.to_copy_data() == CopyData(b"h" + body)


def test_authentication_specific_decode_checks_subcode() -> None:
    assert AuthenticationOk.decode(b"\x00\x00\x00\x00") == AuthenticationOk()
    with pytest.raises(ProtocolViolation, match="expected authentication request 0, got 3"):
        AuthenticationOk.decode(b"\x00\x00\x00\x03")
    with pytest.raises(ProtocolViolation, match="authentication method 4 not supported"):
        Authentication.decode(b"\x00\x00\x00\x04")


def test_error_response_field_order_and_accessors() -> None:
    e = ErrorResponse.create(
        "FATAL",
        "08P01",
        "m",
        routine="r",
        line=7,
        file="f.c",
        internal_query="iq",
        internal_position=3,
        position=2,
        constraint="n",
        datatype="d",
        column="c",
        table="t",
        schema="s",
        context="w",
        hint="h",
        detail="dd",
    )
    assert "".join(e.fields) == "SVCMDHWstcdnPpqFLR"
    assert (e.severity, e.sqlstate, e.message, e.detail, e.hint, e.position) == (
        "FATAL",
        "08P01",
        "m",
        "dd",
        "h",
        2,
    )
    assert ErrorResponse.decode(e.encode()[5:]) == e


def test_protocol_violation_to_error_response() -> None:
    exc = ProtocolViolation("invalid message length", severity="FATAL")
    err = ErrorResponse.from_violation(exc)
    assert err.fields == {
        "S": "FATAL",
        "V": "FATAL",
        "C": "08P01",
        "M": "invalid message length",
    }
    assert exc.fatal and not ProtocolViolation("x").fatal


def test_bind_param_format() -> None:
    assert Bind("", "", (), (b"a", b"b")).param_format(1) == 0
    assert Bind("", "", (1,), (b"a", b"b")).param_format(1) == 1
    assert Bind("", "", (0, 1), (b"a", b"b")).param_format(1) == 1


# --------------------------------------------------------------------------------------
# Malformed payloads: PostgreSQL's words, always ProtocolViolation
# --------------------------------------------------------------------------------------

BAD_PAYLOADS = [
    (Query, b"SELECT 1", "invalid string in message", "08P01"),
    (Query, b"SELECT 1\x00x", "invalid message format", "08P01"),
    (Query, b"SELECT \xc3\x28\x00", 'invalid byte sequence for encoding "UTF8": 0xc3', "22021"),
    (Parse, b"s\x00q\x00\x00\x02\x00\x00\x00\x17", "insufficient data left in message", "08P01"),
    (
        Bind,
        b"\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00",
        "bind message has 2 parameter formats but 0 parameters",
        "08P01",
    ),
    (Bind, b"\x00\x00\x00\x00\x00\x01\xff\xff\xff\xfe", "insufficient data left", "08P01"),
    (Describe, b"X\x00", "invalid DESCRIBE message subtype 88", "08P01"),
    (Close, b"Q\x00", "invalid CLOSE message subtype 81", "08P01"),
    (Execute, b"\x00\x00\x00", "insufficient data left in message", "08P01"),
    (Sync, b"x", "invalid message format", "08P01"),
    (CopyFail, b"", "invalid string in message", "08P01"),
    (DataRow, b"\x00\x01\x00\x00\x00\x05ab", "insufficient data left in message", "08P01"),
    (DataRow, b"\x00\x00\x00", "invalid message format", "08P01"),
    (RowDescription, b"\x00\x01id\x00\x00", "insufficient data left in message", "08P01"),
    (ReadyForQuery, b"", "invalid message format", "08P01"),
    (BackendKeyData, b"\x00" * 7, "invalid message format", "08P01"),
    (Authentication, b"\x00\x00", "insufficient data left in message", "08P01"),
    (AuthenticationMD5Password, b"\x00\x00\x00\x05\x01", "invalid message format", "08P01"),
    (ErrorResponse, b"SERROR\x00", "insufficient data left in message", "08P01"),
    (NegotiateProtocolVersion, b"\x00\x00\x00\x00\x7f\xff\xff\xff", "insufficient data", "08P01"),
]


@pytest.mark.parametrize(("cls", "payload", "text", "sqlstate"), BAD_PAYLOADS)
def test_bad_payload(cls: type[Message], payload: bytes, text: str, sqlstate: str) -> None:
    with pytest.raises(ProtocolViolation) as info:
        cls.decode(payload)
    assert info.value.message.startswith(text)
    assert info.value.sqlstate == sqlstate
    assert info.value.severity == "ERROR"


def test_bad_auth_payloads() -> None:
    with pytest.raises(ProtocolViolation, match="invalid password packet size"):
        PasswordMessage.decode(b"pw\x00extra")
    with pytest.raises(ProtocolViolation, match="invalid password packet size"):
        AuthResponse(b"pw").as_password()
    with pytest.raises(ProtocolViolation, match="insufficient data"):
        SASLInitialResponse.decode(b"SCRAM-SHA-256\x00\x00\x00\x00\x09abc")
    with pytest.raises(ProtocolViolation, match="invalid message format"):
        SASLInitialResponse.decode(b"SCRAM-SHA-256\x00\xff\xff\xff\xffx")


BAD_STARTUP = [
    (b"\x00\x02\x00\x00user\x00u\x00\x00", "unsupported frontend protocol 2.0", "0A000"),
    (b"\x00\x03\x00\x00user\x00u\x00", "invalid startup packet layout", "08P01"),
    (b"\x00\x03\x00\x00user\x00\x00", "invalid startup packet layout", "08P01"),
    (b"\x00\x03\x00\x00", "invalid startup packet layout", "08P01"),
    (b"\x00\x03\x00\x00user\x00u\x00\x00\x00", "invalid startup packet layout", "08P01"),
    (b"\x04\xd2\x16\x2e\x00\x00", "invalid length of startup packet", "08P01"),
    (b"\x00\x03", "invalid length of startup packet", "08P01"),
    (b"\x00\x03\x00\x00user\x00\xff\x00\x00", "invalid byte sequence", "22021"),
]


@pytest.mark.parametrize(("payload", "text", "sqlstate"), BAD_STARTUP)
def test_bad_startup_packet(payload: bytes, text: str, sqlstate: str) -> None:
    with pytest.raises(ProtocolViolation) as info:
        decode_startup_packet(payload)
    assert info.value.message.startswith(text)
    assert info.value.sqlstate == sqlstate
    assert info.value.severity == "FATAL"


def test_bad_replication_payloads() -> None:
    with pytest.raises(ProtocolViolation, match='unexpected message type "w"'):
        decode_replication_message(b"w" + b"\x00" * 24, FRONTEND_REPLICATION_MESSAGES)
    with pytest.raises(ProtocolViolation, match='unexpected message type "z"'):
        decode_replication_message(b"z")
    with pytest.raises(ProtocolViolation, match="insufficient data"):
        decode_replication_message(b"")
    with pytest.raises(ProtocolViolation, match="insufficient data"):
        decode_replication_message(b"r" + b"\x00" * 32)
    with pytest.raises(ProtocolViolation, match="invalid keepalive message"):
        decode_replication_message(b"k" + b"\x00" * 18)
    with pytest.raises(ProtocolViolation, match="invalid WAL message"):
        decode_replication_message(b"w" + b"\x00" * 23)
    # The walsender reads its fields and ignores what follows; so do we.
    status = decode_replication_message(b"r" + b"\x00" * 33 + b"junk")
    assert status == StandbyStatusUpdate(0, 0, 0, 0, False)


def test_encode_refuses_nul_in_strings() -> None:
    with pytest.raises(ValueError, match="NUL"):
        Query("a\x00b").encode()
    with pytest.raises(ValueError, match="NUL"):
        PasswordMessage(b"a\x00").encode()
    with pytest.raises(ValueError, match="one character"):
        ReadyForQuery("II").encode()


# --------------------------------------------------------------------------------------
# Buffer helpers and timestamps
# --------------------------------------------------------------------------------------


def test_reader_writer_roundtrip() -> None:
    w = Writer().int8(-1).uint8(255).int16(-2).uint16(65535).int32(-3).uint32(2**32 - 1)
    w.int64(-4).uint64(2**64 - 1).cstring("héllo").raw(b"xy")
    frame = w.finish(b"Z")
    assert frame[:1] == b"Z" and struct.unpack("!i", frame[1:5])[0] == len(frame) - 1
    r = Reader(frame[5:])
    assert [r.int8(), r.uint8(), r.int16(), r.uint16(), r.int32(), r.uint32()] == [
        -1,
        255,
        -2,
        65535,
        -3,
        2**32 - 1,
    ]
    assert (r.int64(), r.uint64(), r.cstring(), r.read_bytes(2)) == (-4, 2**64 - 1, "héllo", b"xy")
    r.end()
    for method in (r.int8, r.uint16, r.int32, r.int64, r.byte, r.cstring):
        with pytest.raises(ProtocolViolation):
            method()
    with pytest.raises(ProtocolViolation):
        Reader(b"abc").read_bytes(-1)


def test_timestamp_helpers() -> None:
    assert datetime_to_pg(PG_EPOCH) == 0
    dt = datetime(2026, 11, 21, 23, 36, 27, 759896, tzinfo=UTC)
    assert pg_to_datetime(datetime_to_pg(dt)) == dt
    plus2 = dt.astimezone(timezone(timedelta(hours=2)))
    assert datetime_to_pg(plus2) == datetime_to_pg(dt)
    assert datetime_to_pg(datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)) == -1
    assert unix_to_pg(946_684_800) == 0
    assert pg_to_unix(1_000_000) == 946_684_801.0
    now = pg_now()
    assert abs(now - datetime_to_pg(datetime.now(UTC))) < 5_000_000
    with pytest.raises(ValueError, match="aware"):
        datetime_to_pg(datetime(2020, 1, 1))
    with pytest.raises(ValueError, match="outside"):
        pg_to_datetime(2**63 - 1)


# --------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------

text = st.text(
    alphabet=st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=30
)
u16 = st.integers(0, 2**16 - 1)
i16 = st.integers(-(2**15), 2**15 - 1)
u32 = st.integers(0, 2**32 - 1)
i32 = st.integers(-(2**31), 2**31 - 1)
u64 = st.integers(0, 2**64 - 1)
i64 = st.integers(-(2**63), 2**63 - 1)
value = st.one_of(st.none(), st.binary(max_size=40))
values = st.lists(value, max_size=12).map(tuple)
formats = st.lists(st.sampled_from([0, 1]), max_size=5).map(tuple)

field_descriptions = st.builds(FieldDescription, text, u32, i16, u32, i16, i32, i16)
report_fields = st.dictionaries(st.sampled_from(list("SVCMDHWstcdnPpqFLR")), text, max_size=8)

frontend_messages = st.one_of(
    st.builds(Query, text),
    st.builds(Parse, text, text, st.lists(u32, max_size=5).map(tuple)),
    st.builds(
        lambda portal, stmt, params, fmt, res: Bind(portal, stmt, fmt, params, res),
        text,
        text,
        values,
        st.sampled_from([(), (0,), (1,)]),
        formats,
    ),
    st.builds(Describe, st.sampled_from("SP"), text),
    st.builds(Close, st.sampled_from("SP"), text),
    st.builds(Execute, text, i32),
    st.just(Sync()),
    st.just(Flush()),
    st.builds(CopyData, st.binary(max_size=100)),
    st.just(CopyDone()),
    st.builds(CopyFail, text),
    st.builds(FunctionCall, u32, formats, values, i16),
    st.builds(AuthResponse, st.binary(max_size=40)),
)

backend_messages = st.one_of(
    st.just(AuthenticationOk()),
    st.builds(AuthenticationMD5Password, st.binary(min_size=4, max_size=4)),
    st.builds(AuthenticationSASL, st.lists(text.filter(bool), max_size=3).map(tuple)),
    st.builds(AuthenticationSASLContinue, st.binary(max_size=40)),
    st.builds(AuthenticationSASLFinal, st.binary(max_size=40)),
    st.builds(ParameterStatus, text, text),
    st.builds(BackendKeyData, u32, u32),
    st.builds(ReadyForQuery, st.sampled_from("ITE")),
    st.builds(RowDescription, st.lists(field_descriptions, max_size=5).map(tuple)),
    st.builds(DataRow, values),
    st.builds(CommandComplete, text),
    st.just(EmptyQueryResponse()),
    st.builds(ErrorResponse, report_fields),
    st.builds(NoticeResponse, report_fields),
    st.just(ParseComplete()),
    st.just(BindComplete()),
    st.just(NoData()),
    st.builds(ParameterDescription, st.lists(u32, max_size=5).map(tuple)),
    st.builds(CopyOutResponse, st.sampled_from([0, 1]), formats),
    st.builds(CopyBothResponse, st.sampled_from([0, 1]), formats),
    st.builds(CopyData, st.binary(max_size=100)),
    st.builds(NegotiateProtocolVersion, i32, st.lists(text, max_size=3).map(tuple)),
)

replication_messages = st.one_of(
    st.builds(XLogData, u64, u64, i64, st.binary(max_size=60)),
    st.builds(PrimaryKeepalive, u64, i64, st.booleans()),
    st.builds(StandbyStatusUpdate, u64, u64, u64, i64, st.booleans()),
    st.builds(HotStandbyFeedback, i64, u32, u32, u32, u32),
)


@given(frontend_messages)
def test_frontend_roundtrip_property(message: Message) -> None:
    raw = message.encode()
    assert struct.unpack("!i", raw[1:5])[0] == len(raw) - 1
    assert FRONTEND_MESSAGES[raw[:1]].decode(raw[5:]) == message


@given(backend_messages)
def test_backend_roundtrip_property(message: Message) -> None:
    raw = message.encode()
    assert struct.unpack("!i", raw[1:5])[0] == len(raw) - 1
    assert BACKEND_MESSAGES[raw[:1]].decode(raw[5:]) == message


@given(st.dictionaries(text.filter(bool), text, max_size=6), st.integers(0, 2**16 - 1))
def test_startup_roundtrip_property(params: dict[str, str], minor: int) -> None:
    message = StartupMessage(params, (3 << 16) | minor)
    raw = message.encode()
    assert decode_startup_packet(raw[4:]) == message


@given(replication_messages)
def test_replication_roundtrip_property(message) -> None:
    data = message.encode()
    assert decode_replication_message(data) == message
    assert message.encode_message() == msg(b"d", data)


@given(st.lists(values, max_size=20))
def test_encode_data_rows_matches_single_rows(rows: list[tuple[bytes | None, ...]]) -> None:
    expected = b"".join(DataRow(r).encode() for r in rows)
    assert encode_data_rows(rows) == expected
    assert b"".join(encode_data_row(r) for r in rows) == expected


@given(st.lists(st.binary(max_size=50), max_size=20))
def test_encode_copy_data_helpers(chunks: list[bytes]) -> None:
    expected = b"".join(CopyData(c).encode() for c in chunks)
    assert encode_copy_data_many(chunks) == expected
    assert b"".join(encode_copy_data(c) for c in chunks) == expected


@given(u64, i64, st.booleans())
def test_keepalive_fast_path(wal_end: int, send_time: int, reply: bool) -> None:
    assert (
        encode_keepalive_message(wal_end, send_time, reply)
        == PrimaryKeepalive(wal_end, send_time, reply).to_copy_data().encode()
    )


# Decoders that, like PostgreSQL, tolerate input whose re-encoding differs (ignored
# bodies, repeated keys); all others must re-encode whatever they accept byte-exactly.
LENIENT = {Terminate, CopyDone, ErrorResponse, NoticeResponse}
ALL_DECODERS = sorted(
    {*FRONTEND_MESSAGES.values(), *BACKEND_MESSAGES.values()}, key=lambda c: c.__name__
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(ALL_DECODERS),
    st.one_of(
        st.binary(max_size=64),
        st.builds(lambda m: m.encode()[5:], st.one_of(frontend_messages, backend_messages)),
    ),
    st.data(),
)
def test_decoders_fail_only_with_protocol_violation(cls, payload: bytes, data) -> None:
    # Mutate a real payload (truncate, extend, flip a byte) so decoders get near-misses.
    if payload and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(payload) - 1))
        payload = payload[:i] + bytes([data.draw(st.integers(0, 255))]) + payload[i + 1 :]
    if data.draw(st.booleans()):
        payload = payload[: data.draw(st.integers(0, len(payload)))]
    try:
        decoded = cls.decode(payload)
    except ProtocolViolation:
        return
    if cls not in LENIENT:
        assert decoded.encode()[5:] == payload


@given(st.binary(max_size=64))
def test_startup_decoder_fails_only_with_protocol_violation(payload: bytes) -> None:
    try:
        decode_startup_packet(payload)
    except ProtocolViolation as exc:
        assert exc.severity == "FATAL"


@given(st.sampled_from(list(b"wkrhz")), st.binary(max_size=40))
def test_replication_decoder_fails_only_with_protocol_violation(code: int, body: bytes) -> None:
    with contextlib.suppress(ProtocolViolation):
        decode_replication_message(bytes([code]) + body)
