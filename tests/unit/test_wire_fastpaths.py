"""The hot-path decoders and encoders (Bind, Describe, Execute, constant replies) agree with
the reference ones: same message for every accepted payload, same complaint for every
rejected one."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from walsender_proxy.protocol import (
    Bind,
    BindComplete,
    CloseComplete,
    CommandComplete,
    CopyDone,
    Describe,
    EmptyQueryResponse,
    Execute,
    Flush,
    NoData,
    ParseComplete,
    PortalSuspended,
    ProtocolViolation,
    Sync,
    Terminate,
)
from walsender_proxy.protocol.messages import _decode_bind_fast


def _outcome(decode, payload: bytes) -> object:  # type: ignore[no-untyped-def]
    try:
        return decode(payload)
    except ProtocolViolation as e:
        return ("error", e.message, e.sqlstate, e.severity)


# psycopg 3's Bind for a prepared five-column INSERT (captured from a real client).
PSYCOPG_BIND = (
    b"\x00_pg3_0\x00\x00\x05\x00\x01\x00\x01\x00\x01\x00\x00\x00\x01\x00\x05"
    b"\x00\x00\x00\x02\x00\x07\x00\x00\x00\x02\x00\x07\x00\x00\x00\x02\x00\x00"
    b"\x00\x00\x003the quick brown fox jumps over the lazy dog 0123456"
    b"\x00\x00\x00\x08\x00\x02\xb0\xd5\xd4\xe9@\x00\x00\x01\x00\x00"
)


def test_psycopg_bind() -> None:
    want = Bind(
        "",
        "_pg3_0",
        (1, 1, 1, 0, 1),
        (b"\x00\x07", b"\x00\x07", b"\x00\x00", b"the quick brown fox jumps over the lazy dog 0123456", b"\x00\x02\xb0\xd5\xd4\xe9@\x00"),
        (0,),
    )
    assert _decode_bind_fast(Bind, PSYCOPG_BIND) == want
    assert Bind.decode(PSYCOPG_BIND) == want == Bind.decode_checked(PSYCOPG_BIND)


BAD_BINDS = [
    b"",  # no portal name
    b"\x00",  # no statement name
    b"\x00\x00",  # no format count
    b"\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00",  # 2 formats, 0 parameters
    b"\x00\x00\x00\x00\x00\x01\xff\xff\xff\xfe",  # negative length
    b"\x00\x00\x00\x00\x00\x01\x00\x00\x00\x05ab\x00\x00",  # value cut short
    b"\x00\x00\x00\x00\x00\x00\x00\x00x",  # trailing byte
    b"\x00\x00\x00\x00\x00\x00\x00\x01",  # result format missing
    b"\xc3\x28\x00\x00\x00\x00\x00\x00\x00\x00",  # bad UTF-8 in the portal name
    b"\x00\xff\x00\x00\x00\x00\x00\x00\x00",  # bad UTF-8 in the statement name
    b"\x00\x00\x00\x20" + b"\x00\x01" * 3,  # 32 formats announced, 3 there
]


@pytest.mark.parametrize("payload", BAD_BINDS)
def test_bad_bind_same_complaint(payload: bytes) -> None:
    got = _outcome(Bind.decode, payload)
    assert isinstance(got, tuple) and got[0] == "error"
    assert got == _outcome(Bind.decode_checked, payload)


def _bind_payloads() -> st.SearchStrategy[bytes]:
    text = st.text(alphabet=st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=8)
    value = st.one_of(st.none(), st.binary(max_size=12))
    good = st.builds(
        lambda portal, stmt, fmt, params, res: Bind(portal, stmt, fmt, params, res).encode()[5:],
        text,
        text,
        st.lists(st.integers(-(2**15), 2**15 - 1), max_size=20).map(tuple),
        st.lists(value, max_size=20).map(tuple),
        st.lists(st.integers(-(2**15), 2**15 - 1), max_size=20).map(tuple),
    )

    def mutate(data: bytes, cut: int, pos: int, byte: int, extra: bytes) -> bytes:
        b = bytearray(data[: max(0, len(data) - cut)])
        if b:
            b[pos % len(b)] = byte
        return bytes(b) + extra

    mutated = st.builds(mutate, good, st.integers(0, 6), st.integers(0, 200), st.integers(0, 255), st.binary(max_size=3))
    return st.one_of(good, mutated, st.binary(max_size=40))


@settings(max_examples=1000)
@given(_bind_payloads())
def test_bind_fast_path_agrees_with_reference(payload: bytes) -> None:
    assert _outcome(Bind.decode, payload) == _outcome(Bind.decode_checked, payload)


@given(st.binary(max_size=12))
def test_execute_and_describe_agree_with_reference(payload: bytes) -> None:
    assert _outcome(Execute.decode, payload) == _outcome(Execute.decode_checked, payload)
    for p in (payload, b"P" + payload, b"P\x00", b"S\x00"):
        want = _outcome(lambda x: Describe(*_kind_and_name_ref(x)), p)
        assert _outcome(Describe.decode, p) == want


def _kind_and_name_ref(payload: bytes) -> tuple[str, str]:
    from walsender_proxy.protocol.messages import _kind_and_name

    return _kind_and_name(payload, "DESCRIBE")


def test_unnamed_shortcuts() -> None:
    assert Execute.decode(b"\x00\x00\x00\x00\x00") == Execute("", 0)
    assert Describe.decode(b"P\x00") == Describe("P", "")
    assert Describe.decode(b"S\x00") == Describe("S", "")


@pytest.mark.parametrize(
    ("message", "frame"),
    [
        (ParseComplete(), b"1\x00\x00\x00\x04"),
        (BindComplete(), b"2\x00\x00\x00\x04"),
        (CloseComplete(), b"3\x00\x00\x00\x04"),
        (NoData(), b"n\x00\x00\x00\x04"),
        (PortalSuspended(), b"s\x00\x00\x00\x04"),
        (EmptyQueryResponse(), b"I\x00\x00\x00\x04"),
        (CopyDone(), b"c\x00\x00\x00\x04"),
        (Sync(), b"S\x00\x00\x00\x04"),
        (Flush(), b"H\x00\x00\x00\x04"),
        (Terminate(), b"X\x00\x00\x00\x04"),
    ],
)
def test_constant_frames(message: object, frame: bytes) -> None:
    assert message.encode() == frame  # type: ignore[attr-defined]


def test_command_complete_frames_are_cached_but_bounded() -> None:
    from walsender_proxy.protocol import messages

    assert CommandComplete("INSERT 0 1").encode() == b"C\x00\x00\x00\x0fINSERT 0 1\x00"
    assert CommandComplete("INSERT 0 1").encode() == b"C\x00\x00\x00\x0fINSERT 0 1\x00"
    for i in range(1000):
        tag = f"SELECT {i}"
        raw = CommandComplete(tag).encode()
        assert raw == b"C" + struct.pack("!i", len(tag) + 5) + tag.encode() + b"\x00"
    assert len(messages._COMMAND_COMPLETE_FRAMES) <= 256
    with pytest.raises(ValueError):
        CommandComplete("a\x00b").encode()
