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


def _replies(port: int, messages: Sequence[m.FrontendMessage], syncs: int = 1, *, replication: bool = False) -> list[tuple[object, ...]]:
    """What the server answers to ``messages`` (sent at once, as a pipelining client
    does), up to the ``syncs``-th ReadyForQuery: each message's type, an error's
    severity, SQLSTATE and text, a row's values, a command tag."""
    params = {"user": "postgres", "database": "postgres"}
    if replication:
        params["replication"] = "database"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(m.StartupMessage(params).encode())
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


def _bind(query: str, params: tuple[bytes | None, ...], types: tuple[int, ...] = (), name: str = "", formats: tuple[int, ...] = (), results: tuple[int, ...] = ()) -> list[m.FrontendMessage]:
    return [m.Parse(name, query, types), m.Bind("", name, formats, params, results), m.Describe("P"), m.Execute(), m.Sync(), m.Query("SELECT 'alive'")]


@pytest.mark.parametrize(
    "messages",
    [
        _bind("SELECT $1::int + $2::int", (b"1",)),
        _bind("SELECT $1::int + $2::int", (b"1", b"2", b"3")),
        _bind("SELECT $1::int + $2::int", ()),
        _bind("SELECT $1::int + $2::int", (b"1", b"2")),
        _bind("SELECT $1::int", (b"1",), types=(23, 23)),
        _bind("SELECT $1::int", (b"1", b"2"), types=(23, 23)),
        _bind("SELECT $2::int", (b"1", b"2"), types=(23, 23)),
        _bind("SELECT $1::int + $2::int", (b"1",), types=(23,)),
        _bind("SELECT $1::int + $2::int", (b"1",), name="named"),
        _bind("SELECT 1", (b"1",)),
        _bind("SELECT $2::int", (b"1", b"2")),
        _bind("SELECT $2::int", (b"1",)),
        _bind("SELECT $1::int + $2::int", (b"1", b"2"), formats=(0, 0, 0)),
        _bind("SELECT $1::int", (b"1",), formats=(0, 0)),
        _bind("SELECT 1, 2", (), results=(1, 0)),
    ],
    ids=["too few", "too many", "none", "as many", "fewer than declared", "as declared", "declared, the first unused",
         "declared fewer than used", "a named statement", "none wanted", "an unused untyped parameter",
         "an unused untyped parameter, too few", "more formats than parameters", "two formats for one parameter",
         "a result format per column"],
)
def test_bind_checks_its_parameter_count_as_postgresql(pg15: PgCluster, proxy: ProxyServer, messages: list[m.FrontendMessage]) -> None:
    """A Bind with the wrong number of parameters is 08P01 at Bind, worded as PostgreSQL
    words it, too few and too many alike (one fewer than Parse declared was taken, and
    DuckDB then refused a declared parameter the statement does not use with XX000 and its
    own text); an unused parameter of unknown type is 42P18 at Parse; a Bind whose format
    count is wrong skips to Sync (the Describe after it ran and failed again)."""
    assert _replies(proxy.port, messages, 2) == _replies(pg15.port, messages, 2)


def test_a_malformed_bind_rolls_back_the_pipeline(pg15: PgCluster, proxy: ProxyServer) -> None:
    """An error in a Bind aborts the implicit transaction like any other error: the INSERT
    pipelined before it is not committed at Sync."""

    def run(port: int, table: str) -> list[tuple[object, ...]]:
        bad = m.Bind("", "", (0, 0), (b"1",), ())
        msgs = [
            m.Query(f"CREATE TABLE {table} (id int PRIMARY KEY)"),
            m.Parse("", f"INSERT INTO {table} VALUES (1)"), m.Bind("", ""), m.Execute(),
            m.Parse("", "SELECT $1::int"), bad, m.Execute(), m.Sync(),
            m.Query(f"SELECT count(*) FROM {table}"),
        ]  # fmt: skip
        return _replies(port, msgs, 3)

    assert run(proxy.port, "malformed_bind") == run(pg15.port, "malformed_bind")


@pytest.mark.parametrize("results", [(0, 0), (0, 0, 0, 0)])
def test_result_formats_must_match_the_columns(pg15: PgCluster, proxy: ProxyServer, results: tuple[int, ...]) -> None:
    """More than one result format, but not one per column: PostgreSQL's 08P01 (the
    proxy took the first and sent text for the rest). PostgreSQL finds it at Bind; the
    proxy when it first knows the columns, at Describe or Execute (after BindComplete)."""
    messages = _bind("SELECT 1, 2, 3", (), results=results)

    def errors(port: int) -> list[tuple[object, ...]]:
        return [r for r in _replies(port, messages, 2) if r[0] in ("E", "D", "Z")]

    assert errors(proxy.port) == errors(pg15.port)


@pytest.mark.parametrize(
    ("messages", "syncs"),
    [
        ([m.Parse("", "SELECT 1"), m.Bind("", ""), m.Execute(), m.Sync(), m.Query("SELECT 2")], 2),
        ([m.Query("SELECT 1"), m.Describe("S", "x"), m.Close("S", "x"), m.Sync(), m.Query("IDENTIFY_SYSTEM")], 3),
    ],
    ids=["a pipeline", "Describe and Close"],
)
def test_extended_query_on_a_replication_connection_is_an_error(pg15: PgCluster, proxy: ProxyServer, messages: list[m.FrontendMessage], syncs: int) -> None:
    """PostgreSQL's walsender answers an extended-query message with an ERROR and skips
    to Sync; the connection carries on (it was FATAL 'invalid frontend message type 80')."""

    def shape(port: int) -> list[tuple[object, ...]]:
        return [r if r[0] != "D" else ("D",) for r in _replies(port, messages, syncs, replication=True)]

    assert shape(proxy.port) == shape(pg15.port)


@pytest.mark.parametrize(
    "messages",
    [_bind("SELECT $1::int", (b"1",), formats=(2,)), _bind("SELECT 1", (), results=(2,)), _bind("SELECT 1, 2", (), results=(0, 7))],
    ids=["a parameter format", "a result format", "a per-column result format"],
)
def test_unsupported_format_codes_are_22023(pg15: PgCluster, proxy: ProxyServer, messages: list[m.FrontendMessage]) -> None:
    """Format codes other than 0 and 1 are 22023 'unsupported format code' (the proxy read
    them as text): a parameter's at Bind, a result's at Execute, as in PostgreSQL."""
    assert _replies(proxy.port, messages, 2) == _replies(pg15.port, messages, 2)
