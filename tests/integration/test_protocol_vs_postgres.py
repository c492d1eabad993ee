"""Frontend messages PostgreSQL 15 accepts in unusual places, sent as raw protocol bytes to
PostgreSQL and to the proxy: the same replies, message by message."""

from __future__ import annotations

import socket
from collections.abc import Sequence

import pytest

from tests.integration.test_server_protocol import read_messages
from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer
from walsender_proxy.protocol import messages as m

pytestmark = pytest.mark.integration


def _replies(port: int, messages: Sequence[m.FrontendMessage], syncs: int = 1) -> list[tuple[object, ...]]:
    """What the server answers to ``messages`` (sent at once, as a pipelining client
    does), up to the ``syncs``-th ReadyForQuery: each message's type, an error's
    severity, SQLSTATE and text, a row's values, a command tag."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(m.StartupMessage({"user": "postgres", "database": "postgres"}).encode())
        read_messages(s)
        s.sendall(b"".join(msg.encode() for msg in messages))
        got = read_messages(s, count=syncs)
    out: list[tuple[object, ...]] = []
    for msg in got:
        if isinstance(msg, m.ErrorResponse):
            out.append(("E", msg.fields.get("S"), msg.fields.get("C"), msg.fields.get("M")))
        elif isinstance(msg, m.DataRow):
            out.append(("D", msg.values))
        elif isinstance(msg, m.CommandComplete):
            out.append(("C", msg.tag))
        elif isinstance(msg, m.ReadyForQuery):
            out.append(("Z", msg.status))
        else:
            out.append((type(msg).__name__,))
    return out


@pytest.mark.parametrize(
    ("messages", "syncs"),
    [
        ([m.CopyData(b"1\n"), m.CopyDone(), m.CopyFail("x"), m.Query("SELECT 1")], 1),
        ([m.Query("SELECT 1"), m.CopyData(b"stray"), m.Query("SELECT 2")], 2),
        ([m.Parse("", "SELECT 3"), m.Bind("", ""), m.CopyData(b"between"), m.Execute(), m.CopyDone(), m.Sync()], 1),
        # A pipelined COPY whose statement fails: its data and CopyDone follow regardless.
        ([m.Parse("", "COPY no_such_table FROM STDIN"), m.Bind("", ""), m.Execute(), m.CopyData(b"1\n"),
          m.CopyDone(), m.Sync(), m.Query("SELECT 4")], 2),
        ([m.Parse("", "COPY no_such_table FROM STDIN"), m.Bind("", ""), m.Execute(), m.CopyData(b"1\n"),
          m.CopyFail("client gave up"), m.Sync()], 1),
    ],
    ids=["before a query", "between queries", "inside an extended query", "after a failed COPY", "CopyFail after a failed COPY"],
)
def test_copy_messages_outside_copy_are_ignored(pg15: PgCluster, proxy: ProxyServer, messages: list[m.FrontendMessage], syncs: int) -> None:
    """CopyData, CopyDone and CopyFail outside COPY are ignored, as PostgreSQL ignores them
    (a client still sending COPY data after its COPY failed): they closed the connection
    with FATAL 08P01."""
    assert _replies(proxy.port, messages, syncs) == _replies(pg15.port, messages, syncs)
