"""What a slot sends of each transaction (``decoding.reorder.SlotFilter``): decode.c's
choices for commits, prepares and their outcomes, with and without two-phase decoding."""

from __future__ import annotations

from decoding.reorder import DecodedTxn, Ended, Finished, Prepared, SlotFilter


def _prepared(xid: int, lsn: int, gid: str = "g", *, known: bool = True) -> DecodedTxn:
    t = DecodedTxn(xid, lsn - 10)
    t.gid, t.prepare_lsn, t.end_lsn, t.known = gid, lsn, lsn + 5, known
    return t


def _ended(xid: int, lsn: int, *, committed: bool = True, csn: int = 50, gid: str = "g") -> Ended:
    return Ended(xid, gid, committed, lsn, lsn + 5, csn if committed else 0, 0)


def test_without_two_phase_a_prepared_transaction_goes_whole_at_commit_prepared() -> None:
    f = SlotFilter(start=100, snapshot_csn=10)
    t = _prepared(1, 200)
    assert f.route(t) is None
    out = f.route(_ended(1, 300))
    assert out is t and (t.commit_lsn, t.csn) == (300, 50)
    # a rolled back one sends nothing at all
    assert f.route(_prepared(2, 400)) is None
    assert f.route(_ended(2, 500, committed=False)) is None


def test_two_phase_sends_at_prepare_then_the_outcome() -> None:
    f = SlotFilter(start=100, snapshot_csn=10, two_phase_at=100)
    t = _prepared(1, 200)
    assert f.route(t) == Prepared(t)
    e = _ended(1, 300)
    assert f.route(e) == Finished(t, e, replay=False)
    assert t.end_lsn == 205  # (still its PREPARE's: a ROLLBACK PREPARED names it)
    r = _prepared(2, 400)
    f.route(r)
    e2 = _ended(2, 500, committed=False)
    assert f.route(e2) == Finished(r, e2)


def test_a_transaction_prepared_before_two_phase_at_is_replayed_at_commit_prepared() -> None:
    f = SlotFilter(start=250, snapshot_csn=10, two_phase_at=250)
    t = _prepared(1, 200)
    assert f.route(t) is None  # (before the start: not sent now)
    e = _ended(1, 300)
    assert f.route(e) == Finished(t, e, replay=True)
    # rolled back: the outcome goes out (the subscriber checks it has the prepare), no replay
    r = _prepared(2, 210)
    f.route(r)
    e2 = _ended(2, 320, committed=False)
    assert f.route(e2) == Finished(r, e2, replay=False)


def test_a_prepare_sent_in_an_earlier_session_gets_only_its_outcome() -> None:
    f = SlotFilter(start=250, snapshot_csn=10, two_phase_at=100)
    t = _prepared(1, 200)  # at or past two_phase_at, before this session's start: sent before
    assert f.route(t) is None
    e = _ended(1, 300)
    assert f.route(e) == Finished(t, e, replay=False)


def test_outcomes_before_the_start_and_unknown_transactions_send_nothing() -> None:
    f = SlotFilter(start=1000, snapshot_csn=10, two_phase_at=0)
    f.route(_prepared(1, 200))
    assert f.route(_ended(1, 300)) is None  # (ended before the start: already sent)
    g = SlotFilter(start=0, snapshot_csn=10, two_phase_at=0)
    empty = _prepared(2, 200, known=False)
    assert g.route(empty) is None
    assert g.route(_ended(2, 300)) is None


def test_a_gid_the_plugin_filters_is_decoded_as_a_plain_transaction() -> None:
    f = SlotFilter(start=0, snapshot_csn=10, two_phase_at=0, skip_prepare=lambda gid: "_nodecode" in gid)
    t = _prepared(1, 200, "x_nodecode")
    assert f.route(t) is None
    assert f.route(_ended(1, 300, gid="x_nodecode")) is t


def test_the_csn_rule_still_holds_for_commits_and_replays() -> None:
    f = SlotFilter(start=0, snapshot_csn=60, two_phase_at=250)
    plain = DecodedTxn(3, 100)
    plain.commit_lsn, plain.csn = 150, 55
    assert f.route(plain) is None  # (in the copy)
    t = _prepared(1, 200)
    f.route(t)
    assert f.route(_ended(1, 300, csn=55)) is None  # never sent, and the copy holds it
