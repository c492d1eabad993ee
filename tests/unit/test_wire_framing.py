"""Incremental framing: captures replayed chunk by chunk, arbitrary splits, hostile input."""

from __future__ import annotations

import contextlib
import random
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.wire_fixtures import Capture, capture_paths, load_capture
from walsender_proxy.protocol import (
    BackendParser,
    Bind,
    CancelRequest,
    CommandComplete,
    CopyData,
    CopyDone,
    DataRow,
    Describe,
    ErrorResponse,
    Execute,
    FrontendParser,
    GSSENCRequest,
    Parse,
    ParserState,
    ProtocolViolation,
    Query,
    ReadyForQuery,
    RowDescription,
    SSLRequest,
    SSLResponse,
    StartupMessage,
    Sync,
    Terminate,
)
from walsender_proxy.protocol.messages import FieldDescription, Message

CAPTURES = capture_paths()
SMALL_CAPTURES = [p for p in CAPTURES if p.stat().st_size < 8000]

STARTUP = StartupMessage({"user": "u", "database": "d", "replication": "database"})


def msg(code: bytes, body: bytes) -> bytes:
    return code + struct.pack("!i", len(body) + 4) + body


def drain(parser: FrontendParser | BackendParser) -> list[Message]:
    return list(parser)


def feed_chunks(parser: FrontendParser | BackendParser, chunks: list[bytes]) -> list[Message]:
    out: list[Message] = []
    for chunk in chunks:
        parser.feed(chunk)
        out.extend(parser)
    return out


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c for c in cuts if 0 < c < len(data)})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def random_chunks(data: bytes, rng: random.Random, max_size: int) -> list[bytes]:
    chunks = []
    pos = 0
    while pos < len(data):
        size = rng.randint(1, max_size)
        chunks.append(data[pos : pos + size])
        pos += size
    return chunks


def frontend_reference(capture: Capture) -> list[bytes]:
    return [m.raw for m in capture.frontend_messages]


def backend_reference(capture: Capture) -> list[bytes]:
    return [m.raw for m in capture.backend_messages]


# --------------------------------------------------------------------------------------
# Captures
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_capture_frontend_as_received(path: Path) -> None:
    capture = load_capture(path)
    parser = FrontendParser()
    messages = feed_chunks(parser, list(capture.frontend_chunks))
    assert [m.encode() for m in messages] == frontend_reference(capture)
    assert isinstance(messages[0], SSLRequest)
    assert isinstance(messages[1], StartupMessage)
    assert isinstance(messages[-1], Terminate)
    assert parser.state is ParserState.CLOSED
    parser.eof()


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_capture_backend_as_received(path: Path) -> None:
    capture = load_capture(path)
    parser = BackendParser()
    parser.expect_ssl_response()
    messages = feed_chunks(parser, list(capture.backend_chunks))
    assert messages[0] == SSLResponse(False)
    assert [m.encode() for m in messages] == backend_reference(capture)
    assert parser.buffered == 0
    parser.eof()


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("path", SMALL_CAPTURES[:6], ids=lambda p: p.stem)
def test_capture_rechunked(path: Path, seed: int) -> None:
    capture = load_capture(path)
    rng = random.Random(seed)
    frontend = capture.frontend
    # The SSLRequest must arrive alone: the client waits for the answer before sending on.
    chunks = [frontend[:8], *random_chunks(frontend[8:], rng, 40)]
    assert [m.encode() for m in feed_chunks(FrontendParser(), chunks)] == frontend_reference(
        capture
    )
    parser = BackendParser()
    parser.expect_ssl_response()
    chunks = random_chunks(capture.backend, rng, 40)
    assert [m.encode() for m in feed_chunks(parser, chunks)] == backend_reference(capture)


def test_large_capture_rechunked() -> None:
    big = max(CAPTURES, key=lambda p: p.stat().st_size)
    capture = load_capture(big)
    parser = BackendParser()
    parser.expect_ssl_response()
    chunks = random_chunks(capture.backend, random.Random(7), 70000)
    messages = feed_chunks(parser, chunks)
    assert len(messages) == len(capture.backend_messages)
    assert b"".join(m.encode() for m in messages) == capture.backend


def test_capture_byte_at_a_time() -> None:
    capture = load_capture(SMALL_CAPTURES[0])
    frontend = capture.frontend
    chunks = [frontend[:8]] + [frontend[i : i + 1] for i in range(8, len(frontend))]
    assert [m.encode() for m in feed_chunks(FrontendParser(), chunks)] == frontend_reference(
        capture
    )
    parser = BackendParser()
    parser.expect_ssl_response()
    backend = capture.backend
    chunks = [backend[i : i + 1] for i in range(len(backend))]
    assert [m.encode() for m in feed_chunks(parser, chunks)] == backend_reference(capture)


# --------------------------------------------------------------------------------------
# Arbitrary chunk boundaries
# --------------------------------------------------------------------------------------

text = st.text(
    alphabet=st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=20
)
blob = st.binary(max_size=300)
values = st.lists(st.one_of(st.none(), st.binary(max_size=30)), max_size=6).map(tuple)

frontend_messages = st.one_of(
    st.builds(Query, text),
    st.builds(Parse, text, text, st.lists(st.integers(0, 2**32 - 1), max_size=3).map(tuple)),
    st.builds(lambda p, v: Bind(p, "", (), v, ()), text, values),
    st.builds(Describe, st.sampled_from("SP"), text),
    st.builds(Execute, text, st.integers(0, 100)),
    st.just(Sync()),
    st.builds(CopyData, blob),
    st.just(CopyDone()),
)
backend_messages = st.one_of(
    st.builds(CommandComplete, text),
    st.builds(DataRow, values),
    st.builds(ReadyForQuery, st.sampled_from("ITE")),
    st.builds(RowDescription, st.lists(st.builds(FieldDescription, text), max_size=3).map(tuple)),
    st.builds(CopyData, blob),
    st.builds(lambda m: ErrorResponse.create("ERROR", "XX000", m), text),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(frontend_messages, max_size=12), st.lists(st.integers(0, 5000), max_size=12))
def test_frontend_any_split(messages: list[Message], cuts: list[int]) -> None:
    stream = STARTUP.encode() + b"".join(m.encode() for m in messages)
    parser = FrontendParser()
    out = feed_chunks(parser, split_at(stream, cuts))
    assert out == [STARTUP, *messages]
    assert parser.buffered == 0


@settings(max_examples=150, deadline=None)
@given(st.lists(backend_messages, max_size=12), st.lists(st.integers(0, 5000), max_size=12))
def test_backend_any_split(messages: list[Message], cuts: list[int]) -> None:
    stream = b"".join(m.encode() for m in messages)
    out = feed_chunks(BackendParser(), split_at(stream, cuts))
    assert out == messages


def test_large_message_in_small_chunks() -> None:
    payload = bytes(range(256)) * 4096  # 1 MiB
    stream = Query("x").encode() + CopyData(payload).encode() + Sync().encode()
    parser = FrontendParser(startup=False)
    out = feed_chunks(parser, [stream[i : i + 1000] for i in range(0, len(stream), 1000)])
    assert out == [Query("x"), CopyData(payload), Sync()]
    assert parser.buffered == 0


def test_many_messages_in_one_read() -> None:
    stream = b"".join(Query(f"SELECT {i}").encode() for i in range(1000))
    parser = FrontendParser(startup=False)
    parser.feed(stream)
    assert [m.query for m in parser] == [f"SELECT {i}" for i in range(1000)]  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------
# Lengths and type bytes
# --------------------------------------------------------------------------------------


def expect_fatal(parser: FrontendParser | BackendParser, text: str) -> ProtocolViolation:
    with pytest.raises(ProtocolViolation) as info:
        drain(parser)
    exc = info.value
    assert exc.message == text
    assert exc.sqlstate == "08P01"
    assert exc.severity == "FATAL"
    assert parser.state is ParserState.FAILED
    # The stream is lost: the same error again, whatever arrives afterwards.
    parser.feed(Sync().encode())
    with pytest.raises(ProtocolViolation) as again:
        parser.next_message()
    assert again.value is exc
    return exc


def typed_parser(**kwargs) -> FrontendParser:
    return FrontendParser(startup=False, **kwargs)


def test_oversize_refused_from_header_alone() -> None:
    parser = typed_parser(max_message_length=1000)
    parser.feed(b"Q" + struct.pack("!i", 1001))  # no body sent yet
    expect_fatal(parser, "invalid message length")


def test_max_length_is_inclusive() -> None:
    parser = typed_parser(max_message_length=1000)
    body = b"x" * (1000 - 5) + b"\x00"
    parser.feed(msg(b"Q", body))
    assert drain(parser) == [Query("x" * 995)]


@pytest.mark.parametrize("length", [-1, -(2**31), 0, 3])
def test_negative_or_tiny_length(length: int) -> None:
    parser = typed_parser()
    parser.feed(b"Q" + struct.pack("!i", length))
    expect_fatal(parser, "invalid message length")


def test_small_types_have_small_limit() -> None:
    parser = typed_parser()
    parser.feed(b"S" + struct.pack("!i", 10001))
    expect_fatal(parser, "invalid message length")
    parser = typed_parser()
    parser.feed(b"p" + struct.pack("!i", 65536))
    expect_fatal(parser, "invalid message length")
    parser = typed_parser()
    parser.feed(b"Q" + struct.pack("!i", 10_000_000))  # large type: waits for the body
    assert drain(parser) == []


@pytest.mark.parametrize("code", [0, ord("Z"), ord("T"), 0xFF, ord("p") - 1])
def test_unknown_frontend_type_on_first_byte(code: int) -> None:
    parser = typed_parser()
    parser.feed(bytes([code]))
    expect_fatal(parser, f"invalid frontend message type {code}")


def test_unknown_type_after_good_messages() -> None:
    parser = typed_parser()
    parser.feed(Sync().encode() + b"\x01\x00\x00\x00\x04")
    assert parser.next_message() == Sync()
    expect_fatal(parser, "invalid frontend message type 1")


def test_malformed_content_keeps_stream_in_sync() -> None:
    parser = typed_parser()
    parser.feed(msg(b"D", b"X\x00") + Sync().encode())
    with pytest.raises(ProtocolViolation) as info:
        parser.next_message()
    assert info.value.severity == "ERROR"
    assert info.value.message == "invalid DESCRIBE message subtype 88"
    assert parser.next_message() == Sync()
    assert parser.state is ParserState.MESSAGES


def test_terminate_closes_and_ignores_the_rest() -> None:
    parser = typed_parser()
    parser.feed(Terminate().encode() + b"garbage that would be fatal")
    assert drain(parser) == [Terminate()]
    assert parser.state is ParserState.CLOSED
    parser.feed(b"\x00\x00")
    assert drain(parser) == []
    parser.eof()


def test_eof_in_the_middle_of_a_message() -> None:
    parser = typed_parser()
    parser.feed(Query("SELECT 1").encode()[:-2])
    assert drain(parser) == []
    with pytest.raises(ProtocolViolation, match="incomplete message from client"):
        parser.eof()
    parser = FrontendParser()
    parser.feed(b"\x00\x00")
    with pytest.raises(ProtocolViolation, match="incomplete startup packet"):
        parser.eof()
    FrontendParser().eof()  # nothing buffered: a clean close


# --------------------------------------------------------------------------------------
# Start-up phase
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("length", [0, 4, 7, -8, 10005, 2**31 - 1])
def test_startup_length_out_of_range(length: int) -> None:
    parser = FrontendParser()
    parser.feed(struct.pack("!i", length))
    expect_fatal(parser, "invalid length of startup packet")


def test_startup_max_length_accepted() -> None:
    value = "v" * (10000 - 4 - len("user\x00") - 2)
    message = StartupMessage({"user": value})
    raw = message.encode()
    assert len(raw) == 10004
    parser = FrontendParser()
    parser.feed(raw)
    assert drain(parser) == [message]


def test_unsupported_protocol_version() -> None:
    parser = FrontendParser()
    parser.feed(struct.pack("!iI", 9, 2 << 16) + b"\x00")
    with pytest.raises(ProtocolViolation) as info:
        drain(parser)
    assert info.value.sqlstate == "0A000"
    assert info.value.message == "unsupported frontend protocol 2.0: server supports 3.0 to 3.0"


def test_startup_layout_error() -> None:
    parser = FrontendParser()
    parser.feed(struct.pack("!iI", 13, 3 << 16) + b"user\x00")
    expect_fatal(parser, "invalid startup packet layout: expected terminator as last byte")


def test_ssl_request_then_startup() -> None:
    parser = FrontendParser()
    parser.feed(SSLRequest().encode())
    assert drain(parser) == [SSLRequest()]
    assert parser.state is ParserState.STARTUP
    parser.feed(STARTUP.encode() + Query("SELECT 1").encode())
    assert drain(parser) == [STARTUP, Query("SELECT 1")]
    assert parser.state is ParserState.MESSAGES


def test_gssenc_then_ssl_then_startup() -> None:
    parser = FrontendParser()
    parser.feed(GSSENCRequest().encode())
    parser.feed(b"")
    assert drain(parser) == [GSSENCRequest()]
    parser.feed(SSLRequest().encode())
    assert drain(parser) == [SSLRequest()]
    parser.feed(STARTUP.encode())
    assert drain(parser) == [STARTUP]


def test_data_glued_to_ssl_request_is_refused() -> None:
    parser = FrontendParser()
    parser.feed(SSLRequest().encode() + STARTUP.encode())
    assert parser.next_message() == SSLRequest()
    exc = expect_fatal(parser, "received unencrypted data after SSL request")
    assert exc.detail is not None and "man-in-the-middle" in exc.detail
    lenient = FrontendParser(check_unencrypted_data=False)
    lenient.feed(SSLRequest().encode() + STARTUP.encode())
    assert drain(lenient) == [SSLRequest(), STARTUP]


def test_second_ssl_request_is_an_unsupported_protocol() -> None:
    parser = FrontendParser()
    parser.feed(SSLRequest().encode())
    assert drain(parser) == [SSLRequest()]
    parser.feed(SSLRequest().encode())
    with pytest.raises(ProtocolViolation) as info:
        drain(parser)
    assert info.value.message.startswith("unsupported frontend protocol 1234.5679")
    assert info.value.severity == "FATAL"


def test_cancel_request_closes() -> None:
    parser = FrontendParser()
    parser.feed(CancelRequest(42, 7).encode() + b"ignored")
    assert drain(parser) == [CancelRequest(42, 7)]
    assert parser.state is ParserState.CLOSED


def test_cancel_request_with_wrong_length() -> None:
    parser = FrontendParser()
    parser.feed(struct.pack("!iIII", 20, 80877102, 1, 2) + b"\x00\x00\x00\x00")
    expect_fatal(parser, "invalid length of startup packet")


# --------------------------------------------------------------------------------------
# Garbage: only ProtocolViolation, ever
# --------------------------------------------------------------------------------------


def _consume(parser: FrontendParser | BackendParser, chunks: list[bytes]) -> None:
    for chunk in chunks:
        parser.feed(chunk)
        while True:
            try:
                if parser.next_message() is None:
                    break
            except ProtocolViolation as exc:
                if exc.fatal:
                    assert parser.state is ParserState.FAILED
                    return
    if parser.state is not ParserState.FAILED:
        parser.eof()


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["startup", "typed", "backend"]),
    st.binary(max_size=200),
    st.lists(st.integers(0, 200), max_size=8),
)
def test_garbage_raises_only_protocol_violation(kind: str, data: bytes, cuts: list[int]) -> None:
    parser: FrontendParser | BackendParser
    if kind == "startup":
        parser = FrontendParser()
    elif kind == "typed":
        parser = FrontendParser(startup=False)
    else:
        parser = BackendParser()
    with contextlib.suppress(ProtocolViolation):
        _consume(parser, split_at(data, cuts))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(frontend_messages, min_size=1, max_size=6),
    st.integers(0, 10_000),
    st.integers(0, 255),
    st.lists(st.integers(0, 2000), max_size=6),
)
def test_corrupted_valid_stream(messages: list[Message], where: int, byte: int, cuts: list[int]):
    stream = bytearray(STARTUP.encode() + b"".join(m.encode() for m in messages))
    stream[where % len(stream)] = byte
    with contextlib.suppress(ProtocolViolation):
        _consume(FrontendParser(), split_at(bytes(stream), cuts))


# --------------------------------------------------------------------------------------
# Client side
# --------------------------------------------------------------------------------------


def test_backend_ssl_answers() -> None:
    parser = BackendParser()
    parser.expect_ssl_response()
    parser.feed(b"N" + ReadyForQuery("I").encode())
    assert drain(parser) == [SSLResponse(False), ReadyForQuery("I")]
    parser = BackendParser()
    parser.expect_ssl_response()
    parser.feed(b"S")
    assert drain(parser) == [SSLResponse(True)]
    error = ErrorResponse.create("FATAL", "08P01", "unsupported frontend protocol")
    parser = BackendParser()
    parser.expect_ssl_response()
    parser.feed(error.encode())
    assert drain(parser) == [error]
    parser = BackendParser()
    parser.expect_ssl_response()
    parser.feed(b"X")
    with pytest.raises(ProtocolViolation, match="invalid response to SSL negotiation"):
        drain(parser)


def test_backend_unknown_type_and_lost_sync() -> None:
    parser = BackendParser()
    parser.feed(b"x")
    expect_fatal(parser, 'unexpected response from server; first received character was "x"')
    parser = BackendParser()
    parser.feed(b"Z" + struct.pack("!i", 30001))
    expect_fatal(parser, 'lost synchronization with server: got message type "Z", length 30001')
    parser = BackendParser()
    big = DataRow((b"x" * 100_000,))
    parser.feed(big.encode())
    assert drain(parser) == [big]


def test_backend_eof() -> None:
    parser = BackendParser()
    parser.feed(ReadyForQuery("I").encode()[:3])
    assert drain(parser) == []
    with pytest.raises(ProtocolViolation, match="server closed the connection unexpectedly"):
        parser.eof()
