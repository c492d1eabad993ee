"""Sequence logic without a server: PostgreSQL 15's ``init_params`` checks and defaults,
``nextval_internal``'s fetching and logging ahead (log_cnt), bounds and CYCLE, and the
counter file that a restart resumes from (past the logged window after a crash)."""

from __future__ import annotations

from pathlib import Path

import pytest

from decoding.catalog import Catalog, Sequence
from decoding.errors import PgError
from walsender_proxy.lake.sequence_ddl import init_params
from walsender_proxy.lake.sequences import SequenceStore
from walsender_proxy.sql.sequences import SessionSequences, make_object_name


def define(**options: object) -> Sequence:
    sq, _, _ = init_params(None, None, options, 1, "public", "s")
    return sq


def test_defaults_follow_the_type_and_direction() -> None:
    assert (define().min, define().max, define().start) == (1, 2**63 - 1, 1)
    down = define(increment=-1)
    assert (down.min, down.max, down.start) == (-(2**63), -1, -1)
    small = define(**{"as": "int2"})
    assert (small.type, small.max) == ("int2", 32767)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"increment": 0}, "INCREMENT must not be zero"),
        ({"increment": -1, "minvalue": 20}, "MINVALUE (20) must be less than MAXVALUE (-1)"),
        ({"maxvalue": -20}, "MINVALUE (1) must be less than MAXVALUE (-20)"),
        ({"increment": -1, "start": 10}, "START value (10) cannot be greater than MAXVALUE (-1)"),
        ({"start": -10}, "START value (-10) cannot be less than MINVALUE (1)"),
        ({"cache": 0}, "CACHE (0) must be greater than zero"),
        ({"as": "int2", "maxvalue": 100000}, "MAXVALUE (100000) is out of range for sequence data type smallint"),
    ],
)
def test_refusals_as_postgresql_words_them(options: dict[str, object], message: str) -> None:
    with pytest.raises(PgError) as e:
        define(**options)
    assert (e.value.sqlstate, e.value.message) == ("22023", message)


def test_alter_as_a_type_moves_bounds_that_were_the_old_types(tmp_path: Path) -> None:
    sq = define(**{"as": "int4"})
    altered, _, _ = init_params(sq, 1, {"as": "int2"}, sq.oid, sq.schema, sq.name)
    assert altered.max == 32767
    with pytest.raises(PgError, match="MAXVALUE"):
        init_params(define(**{"as": "int4", "maxvalue": 100000}), 1, {"as": "int2"}, 1, "public", "s")


def test_a_restart_is_a_new_generation() -> None:
    sq = define(start=5)
    altered, restart, _ = init_params(sq, 9, {"restart": None}, sq.oid, sq.schema, sq.name)
    assert restart is not None and restart.value == 5 and altered.generation == sq.generation + 1


def test_nextval_logs_32_ahead_and_counts_down(tmp_path: Path) -> None:
    store = SequenceStore(tmp_path / "seq.json", fsync=False)
    sq = define()
    assert store.fetch(sq) == (1, 1)
    assert store.peek(sq) == (1, 32, True)
    assert store.fetch(sq) == (2, 2)
    assert store.peek(sq) == (2, 31, True)
    # a crash: the file holds the logged-ahead value, the next run starts past it
    again = SequenceStore(tmp_path / "seq.json", fsync=False)
    assert again.fetch(sq)[0] == 34
    # a clean close keeps the exact state
    store.close()
    assert SequenceStore(tmp_path / "seq.json", fsync=False).fetch(sq)[0] == 3


def test_bounds_and_cycle(tmp_path: Path) -> None:
    store = SequenceStore(tmp_path / "seq.json", fsync=False)
    sq = define(maxvalue=3)
    assert [store.fetch(sq)[0] for _ in range(3)] == [1, 2, 3]
    with pytest.raises(PgError) as e:
        store.fetch(sq)
    assert (e.value.sqlstate, e.value.message) == ("2200H", 'nextval: reached maximum value of sequence "s" (3)')
    cyc = define(maxvalue=2, cycle=True)
    cyc = Sequence(**{**cyc.to_json(), "owned_by": None, "oid": 2})  # type: ignore[arg-type]
    assert [store.fetch(cyc)[0] for _ in range(5)] == [1, 2, 1, 2, 1]


def test_a_sessions_cache_hands_out_its_block(tmp_path: Path) -> None:
    class FakeLake:
        sequences = SequenceStore(tmp_path / "seq.json", fsync=False)

    sq = define(cache=3)
    a, b = SessionSequences(), SessionSequences()
    lake = FakeLake()
    got = [a.nextval(lake, sq), b.nextval(lake, sq), a.nextval(lake, sq), a.nextval(lake, sq), a.nextval(lake, sq)]  # type: ignore[arg-type]
    assert got == [1, 4, 2, 3, 7]
    assert a.currval(sq) == 7 and b.currval(sq) == 4
    assert a.lastval(Catalog(sequences={1: sq})) == 7


def test_names_fit_in_63_bytes_shortening_the_longer_part() -> None:
    assert make_object_name("t", "id", "seq") == "t_id_seq"
    long = make_object_name("a" * 63, "b" * 38, "seq")
    assert long == "a" * 29 + "_" + "b" * 29 + "_seq" and len(long) == 63
