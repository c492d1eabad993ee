"""What monitoring and CDC tools read beside PostgreSQL 15: the transaction-id snapshot
(``txid_current_snapshot()``, ``pg_current_snapshot()`` and their parts and visibility
tests), ``pg_copy_logical_replication_slot``, and ``pg_walfile_name(_offset)`` by the
server's own ``wal_segment_size``."""

from __future__ import annotations

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import same_answers
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

SNAPSHOTS = [
    "select txid_current_snapshot() is not null, pg_current_snapshot() is not null",
    "select txid_snapshot_xmin(txid_current_snapshot()) <= txid_snapshot_xmax(txid_current_snapshot())",
    "select pg_snapshot_xmin(pg_current_snapshot()) <= pg_snapshot_xmax(pg_current_snapshot())",
    "select pg_typeof(txid_snapshot_xmin(txid_current_snapshot()))::text, pg_typeof(pg_snapshot_xmax(pg_current_snapshot()))::text",
    "select txid_visible_in_snapshot(txid_snapshot_xmin(txid_current_snapshot()) - 1, txid_current_snapshot()),"
    " txid_visible_in_snapshot(txid_snapshot_xmax(txid_current_snapshot()), txid_current_snapshot())",
    "begin",
    "create table mon_t (a int)",
    # (an xid the snapshot cannot see yet: its own, newer than any that ended)
    "select txid_visible_in_snapshot(txid_current(), txid_current_snapshot()),"
    " txid_snapshot_xmax(txid_current_snapshot()) = txid_current(), txid_snapshot_xmin(txid_current_snapshot()) <= txid_current()",
    "commit",
    "select txid_visible_in_snapshot(txid_snapshot_xmax(txid_current_snapshot()) - 1, txid_current_snapshot())",
    "drop table mon_t",
]

SLOT_COPIES = [
    "select slot_name from pg_create_logical_replication_slot('mon_a', 'test_decoding')",
    "select slot_name from pg_copy_logical_replication_slot('mon_a', 'mon_b')",
    "select * from pg_copy_logical_replication_slot('mon_a', 'mon_c', false, 'pgoutput')",
    "select slot_name, plugin, temporary, restart_lsn = (select restart_lsn from pg_replication_slots where slot_name = 'mon_a'),"
    " confirmed_flush_lsn = (select confirmed_flush_lsn from pg_replication_slots where slot_name = 'mon_a')"
    " from pg_replication_slots where slot_name like 'mon\\_%' order by 1",
    "select lsn = (select confirmed_flush_lsn from pg_replication_slots where slot_name = 'mon_a') from pg_copy_logical_replication_slot('mon_a', 'mon_d')",
    "select pg_copy_logical_replication_slot('mon_nosuch', 'mon_x')",
    "select pg_copy_logical_replication_slot('mon_a', 'mon_b')",
    "select pg_copy_logical_replication_slot('mon_a', 'mon_e', false, 'nosuchplugin')",
    "select pg_copy_logical_replication_slot('mon_a', 'Bad Name')",
    "select pg_drop_replication_slot('mon_a')",
    "select pg_drop_replication_slot('mon_b')",
    "select pg_drop_replication_slot('mon_c')",
    "select pg_drop_replication_slot('mon_d')",
]


@pytest.mark.parametrize("statements", [SNAPSHOTS, SLOT_COPIES], ids=["xid-snapshots", "slot-copies"])
def test_answers_as_postgres(proxy: ProxyServer, pg15: PgCluster, statements: list[str]) -> None:
    same_answers(proxy.dsn(), pg15.dsn(dbname=pg15.new_database("mon")), statements).close()


@pytest.mark.parametrize("lsn", ["0/16B3748", "1/0", "0/1", "A/FFFFFFFF"])
def test_wal_file_names_follow_the_segment_size(proxy: ProxyServer, pg15: PgCluster, lsn: str) -> None:
    """XLogFileName of the segment before ``lsn`` and the offset in its own, each server
    by its own wal_segment_size (the proxy's log segments are 64MB)."""
    for dsn in (proxy.dsn(), pg15.dsn()):
        with psycopg.connect(dsn, autocommit=True) as c:
            size = int(c.execute("select setting from pg_settings where name = 'wal_segment_size'").fetchone()[0])  # type: ignore[index]
            name, offset = c.execute(f"select * from pg_walfile_name_offset('{lsn}')").fetchone()  # type: ignore[misc]
            assert c.execute(f"select pg_walfile_name('{lsn}')").fetchone() == (name,)
            hi, lo = (int(x, 16) for x in lsn.split("/"))
            n = (hi << 32) | lo
            segno = ((n - 1) % 2**64) // size
            per_id = 2**32 // size
            assert (name, offset) == (f"00000001{segno // per_id:08X}{segno % per_id:08X}", n % size)
