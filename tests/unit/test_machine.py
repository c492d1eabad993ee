"""The connection state machine, driven with bytes alone: which message is handed on,
ignored or refused in each phase, and the phase each backend message moves to."""

from __future__ import annotations

import pytest

from walsender_proxy.protocol import messages as m
from walsender_proxy.protocol.machine import (
    ConnectionClosed,
    ConnectionMachine,
    MessageReceived,
    Phase,
    ProtocolError,
)

STARTUP = m.StartupMessage({"user": "u", "database": "d"}).encode()


def ready(*, replication: bool = False) -> ConnectionMachine:
    mc = ConnectionMachine()
    mc.receive_data(STARTUP)
    ev = mc.next_event()
    assert isinstance(ev, MessageReceived) and isinstance(ev.message, m.StartupMessage)
    mc.replication = replication
    mc.send(m.AuthenticationOk())
    assert mc.phase is Phase.READY
    return mc


def events(mc: ConnectionMachine, *messages: m.Message) -> list[object]:
    mc.receive_data(b"".join(x.encode() for x in messages))
    out = []
    while (ev := mc.next_event()) is not None:
        out.append(ev)
    return out


ROUND_TRIP = (
    m.Bind("", "s", (1,), (b"\x00\x01",), (0,)),
    m.Describe("P", ""),
    m.Execute("", 0),
    m.Sync(),
)


def test_extended_round_trip_is_handed_on() -> None:
    mc = ready()
    got = events(mc, m.Parse("s", "SELECT $1", (23,)), *ROUND_TRIP, m.Query("SELECT 1"), m.Flush(), m.Close("S", "s"))
    assert [type(e) for e in got] == [MessageReceived] * 8
    assert [e.message for e in got] == [m.Parse("s", "SELECT $1", (23,)), *ROUND_TRIP, m.Query("SELECT 1"), m.Flush(), m.Close("S", "s")]  # type: ignore[attr-defined]


def test_skipping_to_sync_after_an_error() -> None:
    mc = ready()
    mc.extended_error()
    got = events(mc, *ROUND_TRIP, m.Bind("", "s"))
    assert [e.message for e in got] == [m.Sync(), m.Bind("", "s")]  # type: ignore[attr-defined]
    assert not mc.skipping


@pytest.mark.parametrize("replication", [True, False])
def test_stray_copy_messages_are_ignored(replication: bool) -> None:
    # As PostgreSQL ignores them (after a failed COPY), on every connection.
    mc = ready(replication=replication)
    got = events(mc, m.CopyData(b"x"), m.CopyDone(), m.CopyFail("no"), m.Sync())
    assert [e.message for e in got] == [m.Sync()]  # type: ignore[attr-defined]
    mc = ready(replication=replication)
    mc.extended_error()
    got = events(mc, m.CopyData(b"x"), m.CopyDone(), m.Sync())
    assert [e.message for e in got] == [m.Sync()]  # type: ignore[attr-defined]


def test_terminate_closes() -> None:
    mc = ready()
    got = events(mc, m.Terminate())
    assert got == [ConnectionClosed()] and mc.phase is Phase.CLOSED


def test_unknown_in_ready_is_fatal() -> None:
    mc = ready()
    mc.receive_data(m.AuthResponse(b"x").encode())  # 'p' outside authentication
    ev = mc.next_event()
    assert isinstance(ev, ProtocolError) and ev.fatal
    assert ev.error.fields["M"] == "invalid frontend message type 112"
    assert mc.phase is Phase.CLOSED


@pytest.mark.parametrize("message", [m.Parse("", "SELECT 1"), m.Bind("", ""), m.Describe("P"), m.Execute(), m.Close("S")])
def test_replication_connections_refuse_extended_messages(message: m.Message) -> None:
    # As PostgreSQL's forbidden_in_wal_sender: an ERROR, then the rest is skipped to Sync.
    mc = ready(replication=True)
    got = events(mc, message, m.Bind("", ""), m.Execute(), m.Sync(), m.Query("SELECT 1"))
    assert isinstance(got[0], ProtocolError) and not got[0].fatal
    assert got[0].error.fields["M"] == "extended query protocol not supported in a replication connection"
    assert [e.message for e in got[1:]] == [m.Sync(), m.Query("SELECT 1")]  # type: ignore[attr-defined]


def test_replication_connections_take_simple_queries_and_sync() -> None:
    mc = ready(replication=True)
    got = events(mc, m.Query("IDENTIFY_SYSTEM"), m.Sync(), m.Flush(), m.CopyData(b"x"))
    assert [e.message for e in got] == [m.Query("IDENTIFY_SYSTEM"), m.Sync(), m.Flush()]  # type: ignore[attr-defined]


def test_copy_in_phase() -> None:
    mc = ready()
    mc.send(m.CopyInResponse(0, (0,)))
    assert mc.phase is Phase.COPY_IN
    got = events(mc, m.CopyData(b"1\n"), m.Sync(), m.Flush(), m.CopyDone())
    assert [e.message for e in got] == [m.CopyData(b"1\n"), m.CopyDone()]  # type: ignore[attr-defined]
    mc.copy_in_done()
    got = events(mc, m.Query("x"))
    assert isinstance(got[0], MessageReceived)
    mc.send(m.CopyInResponse(0, ()))
    got = events(mc, m.Query("x"))
    assert isinstance(got[0], ProtocolError) and got[0].fatal
    assert got[0].error.fields["M"] == "unexpected message type 0x51 during COPY from stdin"


def test_copy_both_phase() -> None:
    mc = ready(replication=True)
    assert mc.send(m.CopyBothResponse(0, ())) == m.CopyBothResponse(0, ()).encode()
    assert mc.phase is Phase.COPY_BOTH
    got = events(mc, m.CopyData(b"r"), m.CopyDone())
    assert [e.message for e in got] == [m.CopyData(b"r"), m.CopyDone()]  # type: ignore[attr-defined]
    got = events(mc, m.Sync())
    assert isinstance(got[0], ProtocolError) and got[0].error.fields["M"] == 'unexpected message type "S"'


def test_auth_phase_wants_a_password_message() -> None:
    mc = ConnectionMachine()
    events(mc, m.StartupMessage({"user": "u"}))
    mc.start_auth()
    got = events(mc, m.AuthResponse(b"pw\x00"))
    assert isinstance(got[0], MessageReceived)
    got = events(mc, m.Sync())
    assert isinstance(got[0], ProtocolError) and got[0].error.fields["M"] == "expected password response, got message type 83"


def test_send_moves_phases() -> None:
    mc = ready()
    assert mc.send(m.BindComplete()) == b"2\x00\x00\x00\x04" and mc.phase is Phase.READY
    mc.send(m.CopyInResponse(0, ()))
    assert mc.phase is Phase.COPY_IN
    assert mc.send(m.ReadyForQuery("I")) == b"Z\x00\x00\x00\x05I" and mc.phase is Phase.READY
    mc.send(m.ErrorResponse.create("ERROR", "42601", "x"))
    assert mc.phase is Phase.READY
    mc.send(m.NoticeResponse.create("FATAL", "42601", "x"))
    assert mc.phase is Phase.READY
    mc.send(m.ErrorResponse.create("FATAL", "57P01", "bye"))
    assert mc.phase is Phase.CLOSED


def test_eof_mid_message_and_clean_eof() -> None:
    mc = ready()
    mc.receive_data(m.Sync().encode()[:3])
    mc.receive_data(b"")
    ev = mc.next_event()
    assert isinstance(ev, ProtocolError) and ev.fatal
    mc = ready()
    mc.receive_data(b"")
    assert mc.next_event() == ConnectionClosed()
