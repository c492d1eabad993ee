"""The walsender at its edges, against PostgreSQL 15: what pg_stat_replication shows of a
client that has not replied yet and after its replies, and a client that stops reading
its socket (wal_sender_timeout must still end it)."""

from __future__ import annotations

import datetime
import logging
import socket
import time
from typing import Any

import psycopg
import pytest

from decoding.lsn import format_lsn
from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer
from walsender_proxy.protocol import BackendParser
from walsender_proxy.protocol import messages as m
from walsender_proxy.protocol.replication import (
    PrimaryKeepalive,
    StandbyStatusUpdate,
    XLogData,
    decode_replication_message,
    pg_now,
)

_PG_EPOCH = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)


class RawStream:
    """A replication client on a plain socket: it reads what it is told to and replies
    only when told to."""

    def __init__(self, port: int, application_name: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.parser = BackendParser()
        self.wal_end = 0
        self.sock.sendall(
            m.StartupMessage(
                {"user": "postgres", "database": "postgres", "replication": "database", "application_name": application_name}
            ).encode()
        )
        self.until(m.ReadyForQuery)

    def until(self, kind: type, timeout: float = 10) -> m.BackendMessage:
        deadline = time.monotonic() + timeout
        while True:
            for msg in self.parser:
                if isinstance(msg, m.CopyData):
                    rep = decode_replication_message(msg.data)
                    if isinstance(rep, (XLogData, PrimaryKeepalive)):
                        self.wal_end = max(self.wal_end, rep.wal_end)
                if isinstance(msg, kind):
                    return msg
                assert not isinstance(msg, m.ErrorResponse), msg.fields
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            data = self.sock.recv(1 << 16)
            assert data, "connection closed"
            self.parser.feed(data)

    def read_for(self, seconds: float) -> None:
        """Take whatever arrives for a while."""
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                self.until(type(None), timeout=deadline - time.monotonic())
        except TimeoutError:
            pass

    def start(self, slot: str, publication: str) -> None:
        self.sock.sendall(
            m.Query(f"START_REPLICATION SLOT {slot} LOGICAL 0/0 (proto_version '1', publication_names '{publication}')").encode()
        )
        self.until(m.CopyBothResponse)

    def reply(self, write: int, flush: int, apply: int) -> int:
        """A standby status update; its send time."""
        now = pg_now()
        self.sock.sendall(m.CopyData(StandbyStatusUpdate(write, flush, apply, now).encode()).encode())
        return now

    def close(self) -> None:
        self.sock.close()


def _setup(dsn: str, table: str, slot: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, v text)")
        c.execute(f"CREATE PUBLICATION p{table} FOR TABLE {table}")
    with psycopg.connect(dsn + " replication=database", autocommit=True) as c:
        c.execute(f"CREATE_REPLICATION_SLOT {slot} LOGICAL pgoutput (SNAPSHOT 'nothing')")


def _stat_row(dsn: str, application_name: str) -> dict[str, Any]:
    with psycopg.connect(dsn) as c:
        cur = c.execute("SELECT * FROM pg_stat_replication WHERE application_name = %s", (application_name,))
        row = cur.fetchone()
        assert row is not None and cur.description is not None
        return {d.name: v for d, v in zip(cur.description, row, strict=True)}


def _settled_row(dsn: str, application_name: str, sent_at: int, timeout: float = 4.0) -> dict[str, Any]:
    """The walsender's row once it shows the reply sent at ``sent_at`` with no lag (a
    loaded machine may take a while to process the reply); the last row seen if it never
    does."""
    deadline = time.monotonic() + timeout
    reply_time = _PG_EPOCH + datetime.timedelta(microseconds=sent_at)
    while True:
        row = _stat_row(dsn, application_name)
        settled = row["reply_time"] == reply_time and all(row[k] is None for k in ("write_lag", "flush_lag", "replay_lag"))
        if settled or time.monotonic() > deadline:
            return row
        time.sleep(0.1)


def _shape(row: dict[str, Any], replied: tuple[int, int, int, int] | None = None) -> dict[str, object]:
    """Which columns are NULL; the state; what the walsender shows of a reply."""
    shape: dict[str, object] = {k: v is None for k, v in row.items()}
    shape["state"] = row["state"]
    shape["client_port > 0"] = (row["client_port"] or 0) > 0
    if replied is not None:
        write, flush, apply, sent_at = replied
        shape["positions as reported"] = (row["write_lsn"], row["flush_lsn"], row["replay_lsn"]) == tuple(
            format_lsn(x) if x else None for x in (write, flush, apply)
        )
        shape["reply_time is the client's"] = row["reply_time"] == _PG_EPOCH + datetime.timedelta(microseconds=sent_at)
    return shape


def _monitoring_story(dsn: str, tag: str) -> list[dict[str, object]]:
    table, slot, app = f"mon_{tag}", f"mon_{tag}", f"mon_{tag}"
    _setup(dsn, table, slot)
    client = RawStream(int(dsn.split("port=")[1].split()[0]), app)
    try:
        shapes = [_shape(_stat_row(dsn, app))]  # connected, not streaming
        client.start(slot, f"p{table}")
        client.read_for(0.3)
        shapes.append(_shape(_stat_row(dsn, app)))  # streaming, never replied
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f"INSERT INTO {table} VALUES (1, 'one')")
        client.read_for(0.5)
        shapes.append(_shape(_stat_row(dsn, app)))  # sent a transaction, still no reply
        end = client.wal_end
        sent_at = client.reply(end, 0, 0)  # written, not yet flushed
        time.sleep(0.4)
        shapes.append(_shape(_stat_row(dsn, app), (end, 0, 0, sent_at)))
        sent_at = client.reply(end, end, end)
        time.sleep(0.4)
        shapes.append(_shape(_stat_row(dsn, app), (end, end, end, sent_at)))
        # All applied, twice in a row at the same end: the lags clear. A reply below the
        # walsender's sent position draws a keepalive carrying it, so the end counts as
        # the last one only when no keepalive moved it after a reply; the measurement
        # counts only if no WAL moved the end while it was taken.
        row = None
        for _ in range(40):
            client.read_for(0.3)
            end = client.wal_end
            client.reply(end, end, end)
            time.sleep(0.2)
            client.read_for(0.3)
            if client.wal_end != end:
                continue
            sent_at = client.reply(end, end, end)
            row = _settled_row(dsn, app, sent_at)
            client.read_for(0.3)
            if client.wal_end == end:
                break
        assert row is not None, "the server's WAL never stood still"
        shapes.append(_shape(row, (end, end, end, sent_at)))
    finally:
        client.close()
    return shapes


def test_pg_stat_replication_shows_null_until_the_client_reports(proxy: ProxyServer) -> None:
    """Before its first standby status update a walsender has no write, flush or replay
    position, no lag and no reply time (NULL, where the proxy showed 0/0: lag dashboards
    then took the whole log for lag); after replies, the positions reported, the lags
    measured from the transactions sent and the client's own reply time, and no lag once
    it has applied everything twice in a row. (PostgreSQL's side runs on a cluster of its
    own without autovacuum: the shared one's WAL, from its analyses of the databases other
    tests made, kept moving the end the lags are measured to.)"""
    with PgCluster({"autovacuum": "off"}) as quiet:
        assert _monitoring_story(proxy.dsn(), "px") == _monitoring_story(quiet.dsn(), "pg")


@pytest.mark.parametrize("processes", [True, False], ids=["walsender process", "server process"])
@pytest.mark.parametrize("transactions", [1, 400], ids=["one big transaction", "many transactions"])
def test_a_client_that_stops_reading_is_ended_by_wal_sender_timeout(
    tmp_path: Any, processes: bool, transactions: int, caplog: pytest.LogCaptureFixture
) -> None:
    """PostgreSQL's WalSndCheckTimeOut runs while a write is pending too: a client that
    starts a big transaction's stream and then neither reads nor replies is ended after
    wal_sender_timeout, and its slot is free for the next START_REPLICATION (it stayed
    active for good, and every reconnect got 55006)."""
    with ProxyServer(tmp_path / "proxy", walsender_processes=processes) as p:
        _setup(p.dsn(), "big", "stuck")
        caplog.set_level(logging.INFO, logger="walsender_proxy")
        rows = 200_000 // transactions
        with psycopg.connect(p.dsn(), autocommit=True) as c:
            for t in range(transactions):
                c.execute(f"INSERT INTO big SELECT g, repeat('x', 200) FROM generate_series({t * rows + 1}, {(t + 1) * rows}) AS g(g)")
        stuck = socket.socket()
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect(("127.0.0.1", p.port))
        stuck.sendall(
            m.StartupMessage({"user": "postgres", "database": "postgres", "replication": "database", "wal_sender_timeout": "2s"}).encode()
            + m.Query("START_REPLICATION SLOT stuck LOGICAL 0/0 (proto_version '1', publication_names 'pbig')").encode()
        )
        # (and reads nothing more)
        with psycopg.connect(p.dsn(), autocommit=True) as c:
            deadline = time.monotonic() + 30
            while c.execute("SELECT active FROM pg_replication_slots WHERE slot_name = 'stuck'").fetchone() != (True,):
                assert time.monotonic() < deadline
                time.sleep(0.05)
            started = time.monotonic()
            while c.execute("SELECT active FROM pg_replication_slots WHERE slot_name = 'stuck'").fetchone() != (False,):
                assert time.monotonic() - started < 15, "the slot is still active"
                time.sleep(0.1)
        stuck.close()
        client = RawStream(p.port, "after")
        try:
            client.start("stuck", "pbig")  # no 55006: the slot was let go
        finally:
            client.close()
    if not processes:
        assert "terminating walsender process due to replication timeout" in caplog.text


def _activity(dsn: str, tag: str) -> list[tuple[object, ...]]:
    """pg_stat_activity of sessions in each state, and of a streaming walsender."""
    idle = psycopg.connect(dsn, autocommit=True, application_name=f"{tag}_idle")
    in_tx = psycopg.connect(dsn, application_name=f"{tag}_in_tx")
    aborted = psycopg.connect(dsn, application_name=f"{tag}_aborted")
    _setup(dsn, f"act_{tag}", f"act_{tag}")
    stream = RawStream(int(dsn.split("port=")[1].split()[0]), f"{tag}_walsender")
    try:
        idle.execute("SELECT 'idle'")
        in_tx.execute("SELECT 'in a transaction'")
        with pytest.raises(psycopg.errors.DivisionByZero):
            aborted.execute("SELECT 1/0")
        stream.start(f"act_{tag}", f"pact_{tag}")
        stream.read_for(0.3)
        with psycopg.connect(dsn) as c:
            rows = c.execute(
                "SELECT application_name, state, backend_type, query, client_addr IS NOT NULL, client_port > 0,"
                " backend_start <= now(), query_start <= now(), usesysid FROM pg_stat_activity"
                " WHERE application_name LIKE %s ORDER BY application_name", (f"{tag}%",)
            ).fetchall()
        return [(r[0].removeprefix(tag), *r[1:]) for r in rows]
    finally:
        stream.close()
        for c in (idle, in_tx, aborted):
            c.close()


def test_pg_stat_activity_shows_each_session_as_postgresql(pg15: PgCluster, proxy: ProxyServer) -> None:
    """Every session's state (it said idle for every other session), last query, address,
    port and start; a replication connection is a walsender, active while it streams."""

    def masked(rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
        return [(*r[:3], "START_REPLICATION" if "START_REPLICATION" in str(r[3]) else r[3], *r[4:]) for r in rows]

    assert masked(_activity(proxy.dsn(), "px")) == masked(_activity(pg15.dsn(), "pg"))


@pytest.mark.parametrize("processes", [True, False], ids=["walsender-process", "in-server"])
def test_a_slot_is_free_again_as_soon_as_its_client_is_gone(processes: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that disconnects and reconnects at once gets its slot, as from PostgreSQL
    (ReplicationSlotRelease does not wait for a save): here each save of a slot's position
    takes 3 s, and the reconnect must not wait for it."""
    import psycopg2
    import psycopg2.extras

    with ProxyServer(walsender_processes=processes) as proxy:
        assert proxy.ctx is not None
        slots = proxy.ctx.slots
        save = slots.save_if_dirty

        def slow_save(name: str) -> Any:
            time.sleep(3)
            return save(name)

        with psycopg.connect(proxy.dsn(), autocommit=True) as c:
            c.execute("CREATE TABLE fr_t (a int)")
            c.execute("CREATE PUBLICATION fr_p FOR TABLE fr_t")
            c.execute("SELECT pg_create_logical_replication_slot('fr_s', 'pgoutput')")
        monkeypatch.setattr(slots, "save_if_dirty", slow_save)
        options = {"proto_version": "1", "publication_names": "fr_p"}
        first = psycopg2.connect(proxy.dsn(), connection_factory=psycopg2.extras.LogicalReplicationConnection)
        first.cursor().start_replication(slot_name="fr_s", options=options)
        time.sleep(0.3)
        first.close()
        gone = time.monotonic()
        while True:
            again = psycopg2.connect(proxy.dsn(), connection_factory=psycopg2.extras.LogicalReplicationConnection)
            try:
                again.cursor().start_replication(slot_name="fr_s", options=options)
                break
            except psycopg2.errors.ObjectInUse:
                assert time.monotonic() - gone < 2, "the slot stayed held while its position was saved"
                time.sleep(0.01)
            finally:
                again.close()
        monkeypatch.setattr(slots, "save_if_dirty", save)
