"""Replication origins in the lake (``walsender_proxy.lake.origins``): commits under an
origin carry its remote LSN and time, and the progress they make survives a crash."""

from __future__ import annotations

from pathlib import Path

from decoding import records as R
from tests.lakeutil import FAST, crash
from walsender_proxy.lake import Lake


def test_a_commit_under_an_origin_carries_it_and_its_progress_survives_a_crash(tmp_path: Path) -> None:
    lake = Lake(tmp_path, FAST)
    with lake.begin() as tx:
        tx.create_table("t", [("id", "int")])
    lake.origins.create("remote")
    lake.origins.setup(7, "remote")
    s = lake.origins.configured(7)
    s.origin_lsn, s.origin_ts = 0x5000, 123
    tx = lake.begin()
    lake.origins.stamp(7, tx)
    tx.insert("t", [{"id": 1}])
    info = tx.commit()
    (rec,) = [e.record for e in lake.log.read() if isinstance(e.record, R.Commit) and e.record.xid == info.xid]
    assert (rec.origin, rec.origin_lsn, rec.commit_ts) == ("remote", 0x5000, 123)
    (o,) = lake.origins.rows()
    assert (o.remote_lsn, o.local_lsn) == (0x5000, info.end_lsn)
    crash(lake)  # (the progress was never saved: the commit record is replayed)
    with Lake(tmp_path, FAST) as again:
        (o,) = again.origins.rows()
        assert (o.name, o.remote_lsn, o.local_lsn, o.tracked) == ("remote", 0x5000, info.end_lsn, True)
        assert again.origins.session(7) is None  # (sessions do not outlive the server)
