"""pgoutput codec: byte-exact against PostgreSQL 15 captures, by hand for what was
not captured, and by property for every message class."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decoding.pgoutput import (
    MESSAGE_CLASSES,
    MESSAGE_TRANSACTIONAL,
    REPLICA_IDENTITY_DEFAULT,
    STREAMABLE_TYPES,
    TRUNCATE_CASCADE,
    TRUNCATE_RESTART_IDENTITY,
    UNCHANGED,
    Begin,
    BeginPrepare,
    Commit,
    CommitPrepared,
    DecodeError,
    Delete,
    Insert,
    LogicalMessage,
    Origin,
    Prepare,
    Relation,
    RelationColumn,
    RollbackPrepared,
    StreamAbort,
    StreamCommit,
    StreamPrepare,
    StreamStart,
    StreamStop,
    StreamTracker,
    Truncate,
    TupleData,
    Type,
    Update,
    decode_message,
)
from decoding.pgoutput.rows import encode_insert_batch
from decoding.pgtime import datetime_to_pg, pg_to_datetime
from tests.unit.pgoutput_fixtures import CAPTURES_DIR, CapturedMessage, pgoutput_connections


def lsn(text: str) -> int:
    hi, lo = text.split("/")
    return (int(hi, 16) << 32) | int(lo, 16)


def ts(text: str) -> int:
    return datetime_to_pg(datetime.fromisoformat(text))


# ------------------------------------------------------------------ captured fixtures

needs_captures = pytest.mark.skipif(
    not CAPTURES_DIR.is_dir(), reason=f"protocol captures not found at {CAPTURES_DIR}"
)


@pytest.fixture(scope="module")
def captured() -> dict[bytes, list[CapturedMessage]]:
    by_type: dict[bytes, list[CapturedMessage]] = defaultdict(list)
    for conn in pgoutput_connections():
        for msg in conn.messages:
            by_type[msg.data[:1]].append(msg)
    return by_type


def first(captured, kind: bytes, pred=lambda m: True) -> object:
    for m in captured[kind]:
        msg = decode_message(m.data, in_stream=m.in_stream)
        if pred(msg):
            return msg
    raise AssertionError(f"no captured {kind!r} matches")


# The types PostgreSQL 15 sent in the scenario.  Origin ('O') and Type ('Y') never
# appear (no origins, only built-in types) and PG15 speaks at most protocol 3, so
# those and the v4 StreamAbort layout are covered by hand below.
CAPTURED_TYPES = sorted(b"BCRIUDTMSEcAbPKrp")


@needs_captures
def test_captures_hold_the_expected_message_types(captured):
    assert sorted(k[0] for k in captured) == CAPTURED_TYPES


@needs_captures
@pytest.mark.parametrize("kind", [bytes((k,)) for k in CAPTURED_TYPES], ids=bytes.decode)
def test_captured_messages_round_trip_byte_exact(captured, kind):
    msgs = captured[kind]
    assert msgs
    cls = MESSAGE_CLASSES[kind]
    for m in msgs:
        decoded = decode_message(m.data, in_stream=m.in_stream)
        assert type(decoded) is cls
        assert decoded.encode() == m.data, (m.conn, m.seq)
        if kind in STREAMABLE_TYPES:
            assert (decoded.xid is not None) is m.in_stream


@needs_captures
def test_stream_tracker_follows_every_captured_connection():
    streamed = 0
    for conn in pgoutput_connections():
        tracker = StreamTracker()
        for m in conn.messages:
            assert tracker.in_stream is m.in_stream or m.data[:1] in b"SE"
            msg = tracker.decode(m.data)
            assert msg.encode() == m.data
            streamed += m.in_stream
        assert not tracker.in_stream
    assert streamed > 0


@needs_captures
def test_streamed_message_needs_in_stream_flag(captured):
    m = next(m for m in captured[b"I"] if m.in_stream)
    with pytest.raises(DecodeError):
        decode_message(m.data, in_stream=False)


@needs_captures
def test_captured_field_values(captured):
    """Spot-check decoded fields against the decoded listing in pgoutput_by_step.md."""
    begin = first(captured, b"B", lambda b: b.xid == 767)
    assert begin == Begin(lsn("0/19AD688"), ts("2026-11-21T23:38:34.226305+00:00"), 767)
    assert pg_to_datetime(begin.commit_time) == datetime(
        2026, 11, 21, 23, 38, 34, 226305, tzinfo=UTC
    )

    commit = first(captured, b"C", lambda c: c.commit_lsn == lsn("0/19AD688"))
    assert commit == Commit(lsn("0/19AD688"), lsn("0/19AD6B8"), begin.commit_time)

    rel = first(captured, b"R", lambda r: r.relid == 16391 and r.xid is None)
    assert (rel.namespace, rel.name, rel.replica_identity) == ("public", "t_pk", "d")
    assert rel.columns[0] == RelationColumn("id", 23, -1, flags=1)
    assert rel.columns[3] == RelationColumn("n", 1700, 786439)  # numeric(12,3)
    assert [c.is_key for c in rel.columns] == [True] + [False] * 10
    full = first(captured, b"R", lambda r: r.name == "t_full")
    assert full.replica_identity == "f" and all(c.is_key for c in full.columns)
    assert first(captured, b"R", lambda r: r.xid is not None).xid == 802

    ins = first(captured, b"I", lambda i: i.relid == 16391)
    assert ins.new.values[:2] == (b"100", b"-9223372036854775808")
    assert ins.new.values[-1] is None and ins.new.kinds == b"t" * 10 + b"n"
    assert first(captured, b"I", lambda i: i.new.binary).new.values[0] == b"\x00\x00\x00\x64"

    toast = first(captured, b"U", lambda u: UNCHANGED in u.new.values)
    assert toast.new.values[0] in (b"22", b"\x00\x00\x00\x16")
    assert toast.new.values[-1] is UNCHANGED and toast.key is None and toast.old is None
    key_change = first(captured, b"U", lambda u: u.key is not None)
    assert key_change.old is None
    full_update = first(captured, b"U", lambda u: u.old is not None)
    assert full_update.relid == 16399

    delete = first(captured, b"D", lambda d: d.relid == 16423)
    assert delete.key == TupleData((b"2", b"eu", None))
    assert first(captured, b"D", lambda d: d.old is not None).relid == 16399

    restart = first(captured, b"T", lambda t: t.options)
    assert restart == Truncate((16415,), TRUNCATE_RESTART_IDENTITY)
    assert restart.restart_identity and not restart.cascade
    assert first(captured, b"T", lambda t: len(t.relids) == 2).relids == (16399, 16409)

    tx_msg = first(captured, b"M", lambda m: m.transactional)
    assert (tx_msg.prefix, tx_msg.content, tx_msg.lsn) == (
        "rlprefix",
        b"hello pgoutput",
        lsn("0/1D75F10"),
    )
    assert first(captured, b"M", lambda m: not m.transactional).content == b"non-tx hello"

    assert first(captured, b"S", lambda s: s.first_segment) == StreamStart(802, True)
    assert first(captured, b"c", lambda c: c.xid == 802) == StreamCommit(
        802, lsn("0/1AF9E88"), lsn("0/1AF9EB8"), ts("2026-11-21T23:38:42.430950+00:00")
    )
    sub_abort = first(captured, b"A", lambda a: a.xid != a.subxid)
    assert sub_abort == StreamAbort(803, 804) and not sub_abort.has_abort_info

    assert first(captured, b"b", lambda b: b.gid == "gid_commit") == BeginPrepare(
        lsn("0/1C8B9C8"),
        lsn("0/1C8BB38"),
        ts("2026-11-21T23:38:51.319635+00:00"),
        808,
        "gid_commit",
    )
    assert first(captured, b"P", lambda p: p.gid == "gid_commit").xid == 808
    assert first(captured, b"K", lambda k: k.gid == "gid_commit").commit_lsn == lsn("0/1C8BB38")
    assert first(captured, b"r", lambda r: True) == RollbackPrepared(
        lsn("0/1C8BD08"),
        lsn("0/1C8BD48"),
        ts("2026-11-21T23:38:53.358820+00:00"),
        ts("2026-11-21T23:38:55.374324+00:00"),
        809,
        "gid_rollback",
    )
    assert first(captured, b"p", lambda p: True).gid == "gid_big"


def _batches(conn_messages):
    """Group consecutive captured Inserts by (relid, xid) and rebuild them column-major."""
    groups = []
    tracker = StreamTracker()
    for m in conn_messages:
        msg = tracker.decode(m.data)
        if not isinstance(msg, Insert) or UNCHANGED in msg.new.values:
            continue
        key = (msg.relid, msg.xid, len(msg.new.values))
        if not groups or groups[-1][0] != key:
            groups.append((key, []))
        groups[-1][1].append((msg, m.data))
    return groups


@needs_captures
def test_batch_encoder_reproduces_captured_inserts():
    total = 0
    for conn in pgoutput_connections():
        for (relid, xid, ncols), rows in _batches(conn.messages):
            columns = [[msg.new.values[i] for msg, _ in rows] for i in range(ncols)]
            binary = [any(msg.new.kinds[i] == ord("b") for msg, _ in rows) for i in range(ncols)]
            expected = [data for _, data in rows]
            assert encode_insert_batch(relid, columns, xid=xid, binary=binary) == expected
            total += len(rows)
    assert total > 50_000


# ----------------------------------------------------------------- handwritten bytes
# Built from the layouts in proto.c, independently of the encoder, for what the
# PostgreSQL 15 capture cannot show.

XID = bytes.fromhex("00000322")  # 802
RELID = bytes.fromhex("00004007")  # 16391
TUPLE_1_A = bytes.fromhex("0002") + b"t" + bytes.fromhex("00000001") + b"1" + b"n"
TUPLE_B_U = bytes.fromhex("0002") + b"b" + bytes.fromhex("00000004") + bytes(4) + b"u"

HANDWRITTEN = [
    pytest.param(
        b"O" + bytes.fromhex("0000000001d75f10") + b"node_a\0",
        False,
        Origin(lsn("0/1D75F10"), "node_a"),
        id="origin",
    ),
    pytest.param(
        b"Y" + bytes.fromhex("00004074") + b"public\0mood\0",
        False,
        Type(16500, "public", "mood"),
        id="type",
    ),
    pytest.param(
        b"Y" + XID + bytes.fromhex("00004074") + b"\0mood\0",
        True,
        Type(16500, "", "mood", xid=802),
        id="type-streamed-pg_catalog",
    ),
    pytest.param(
        b"R" + XID + RELID + b"s1\0t\0n" + bytes.fromhex("0000"),
        True,
        Relation(16391, "s1", "t", "n", (), xid=802),
        id="relation-streamed-no-columns",
    ),
    pytest.param(
        b"U" + XID + RELID + b"O" + TUPLE_1_A + b"N" + TUPLE_B_U,
        True,
        Update(
            16391,
            new=TupleData((bytes(4), UNCHANGED), b"bu"),
            old=TupleData((b"1", None)),
            xid=802,
        ),
        id="update-streamed-old",
    ),
    pytest.param(
        b"U" + RELID + b"K" + TUPLE_1_A + b"N" + TUPLE_1_A,
        False,
        Update(16391, new=TupleData((b"1", None)), key=TupleData((b"1", None))),
        id="update-key",
    ),
    pytest.param(
        b"D" + XID + RELID + b"K" + TUPLE_1_A,
        True,
        Delete(16391, key=TupleData((b"1", None)), xid=802),
        id="delete-streamed",
    ),
    pytest.param(
        b"I" + XID + RELID + b"N" + TUPLE_B_U,
        True,
        Insert(16391, TupleData((bytes(4), UNCHANGED), b"bu"), xid=802),
        id="insert-streamed-binary",
    ),
    pytest.param(
        b"T" + XID + bytes.fromhex("00000002") + b"\x03" + RELID + bytes.fromhex("00004008"),
        True,
        Truncate((16391, 16392), TRUNCATE_CASCADE | TRUNCATE_RESTART_IDENTITY, xid=802),
        id="truncate-streamed-cascade",
    ),
    pytest.param(
        b"T" + bytes.fromhex("00000000") + b"\x00",
        False,
        Truncate(()),
        id="truncate-empty",
    ),
    pytest.param(
        b"M"
        + XID
        + b"\x01"
        + bytes.fromhex("0000000001d75f10")
        + b"p\0"
        + bytes.fromhex("00000003")
        + b"a\0b",
        True,
        LogicalMessage(lsn("0/1D75F10"), "p", b"a\0b", MESSAGE_TRANSACTIONAL, xid=802),
        id="message-streamed",
    ),
    pytest.param(
        b"A"
        + XID
        + bytes.fromhex("00000323")
        + bytes.fromhex("0000000001d75f10")
        + bytes.fromhex("000303d0a12f17e6"),
        False,
        StreamAbort(802, 803, lsn("0/1D75F10"), 0x000303D0A12F17E6),
        id="stream-abort-v4-parallel",
    ),
    pytest.param(b"E", False, StreamStop(), id="stream-stop"),
    pytest.param(
        b"S" + XID + b"\x00",
        False,
        StreamStart(802, False),
        id="stream-start-continuation",
    ),
    pytest.param(
        b"C"
        + b"\x00"
        + bytes.fromhex("ffffffffffffffff")
        + bytes(8)
        + bytes.fromhex("ffffffffffffffff"),
        False,
        Commit(2**64 - 1, 0, -1),
        id="commit-extremes",
    ),
    pytest.param(
        b"B" + bytes.fromhex("0000000000000001") + bytes.fromhex("8000000000000000") + bytes(4),
        False,
        Begin(1, -(2**63), 0),
        id="begin-extremes",
    ),
    pytest.param(
        b"P" + bytes(1) + bytes(8) * 3 + bytes(4) + "gïd".encode() + b"\0",
        False,
        Prepare(0, 0, 0, 0, "gïd"),
        id="prepare-utf8-gid",
    ),
]


@pytest.mark.parametrize(("wire", "in_stream", "message"), HANDWRITTEN)
def test_handwritten_fixture(wire, in_stream, message):
    assert message.encode() == wire
    assert decode_message(wire, in_stream=in_stream) == message
    assert type(message).decode(wire, **({"in_stream": True} if in_stream else {})) == message


# ---------------------------------------------------------------------- malformed


@pytest.mark.parametrize(
    ("wire", "in_stream"),
    [
        pytest.param(b"", False, id="empty"),
        pytest.param(b"Z", False, id="unknown-type"),
        pytest.param(b"B" + bytes(19), False, id="begin-short"),
        pytest.param(b"B" + bytes(21), False, id="begin-trailing"),
        pytest.param(b"E\0", False, id="stop-trailing"),
        pytest.param(b"A" + bytes(12), False, id="abort-odd-length"),
        pytest.param(b"S" + bytes(4) + b"\x02", False, id="start-bad-first-segment"),
        pytest.param(b"O" + bytes(8) + b"no-nul", False, id="unterminated-string"),
        pytest.param(b"I" + RELID + b"X" + TUPLE_1_A, False, id="insert-bad-tag"),
        pytest.param(b"I" + RELID + b"N\x00\x01x", False, id="bad-column-kind"),
        pytest.param(b"I" + RELID + b"N\x00\x01t\xff\xff\xff\xff", False, id="negative-length"),
        pytest.param(b"I" + RELID + b"N\x00\x01t\x00\x00\x00\x09abc", False, id="overlong-value"),
        pytest.param(b"I" + RELID + b"N\x00\x02n", False, id="missing-column"),
        pytest.param(b"U" + RELID + b"K" + TUPLE_1_A, False, id="update-without-new"),
        pytest.param(
            b"U" + RELID + b"K" + TUPLE_1_A + b"O" + TUPLE_1_A, False, id="update-two-old"
        ),
        pytest.param(b"D" + RELID + b"N" + TUPLE_1_A, False, id="delete-new-tag"),
        pytest.param(b"T" + bytes.fromhex("00000002") + b"\0" + RELID, False, id="truncate-short"),
        pytest.param(
            b"M\x00" + bytes(8) + b"p\0" + bytes.fromhex("00000009"), False, id="msg-short"
        ),
        pytest.param(b"I" + XID + RELID + b"N" + TUPLE_1_A, False, id="streamed-as-plain"),
        pytest.param(b"I" + RELID + b"N" + TUPLE_1_A, True, id="plain-as-streamed"),
    ],
)
def test_malformed_input_raises_decode_error(wire, in_stream):
    with pytest.raises(DecodeError):
        decode_message(wire, in_stream=in_stream)


def test_decode_checks_the_class_type_byte():
    with pytest.raises(DecodeError):
        Begin.decode(StreamStop().encode())


def test_stream_tracker_rejects_bad_nesting():
    tracker = StreamTracker()
    tracker.decode(StreamStart(1, True).encode())
    with pytest.raises(DecodeError):
        tracker.decode(StreamStart(2, True).encode())
    tracker = StreamTracker()
    with pytest.raises(DecodeError):
        tracker.decode(StreamStop().encode())


def test_invalid_construction():
    with pytest.raises(ValueError):
        TupleData((b"x", None), b"tt")
    with pytest.raises(ValueError):
        TupleData((b"x",), b"tb")
    with pytest.raises(TypeError):
        TupleData(("text",))
    with pytest.raises(TypeError):
        TupleData.of([1])
    with pytest.raises(ValueError):
        Delete(1)
    with pytest.raises(ValueError):
        Update(1, TupleData(()), key=TupleData(()), old=TupleData(()))
    with pytest.raises(ValueError):
        StreamAbort(1, 1, abort_lsn=5)
    with pytest.raises(ValueError):
        Origin(0, "a\0b").encode()


def test_tuple_data_defaults_and_helpers():
    assert TupleData([b"a", None, UNCHANGED]).kinds == b"tnu"
    assert TupleData.of([b"a", None], binary=True) == TupleData((b"a", None), b"bn")
    assert TupleData.of([b"a"], binary=True).binary
    assert TupleData((b"a", None)).encode() == bytes.fromhex("0002") + b"t\0\0\0\x01an"
    assert TupleData.decode(TUPLE_B_U) == TupleData((bytes(4), UNCHANGED), b"bu")
    assert repr(UNCHANGED) == "UNCHANGED"
    assert Relation(1, "", "t", REPLICA_IDENTITY_DEFAULT, [RelationColumn("a", 23)]).columns == (
        RelationColumn("a", 23, -1, 0),
    )


def test_min_versions():
    versions = {k.decode(): cls.MIN_VERSION for k, cls in MESSAGE_CLASSES.items()}
    assert {k for k, v in versions.items() if v == 1} == set("BCORYIUDTM")
    assert {k for k, v in versions.items() if v == 2} == set("SEcA")
    assert {k for k, v in versions.items() if v == 3} == set("bPKrp")


def test_timestamp_helpers():
    assert datetime_to_pg(datetime(2000, 1, 1, tzinfo=UTC)) == 0
    assert datetime_to_pg(datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)) == -1
    assert pg_to_datetime(-1) == datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)


# -------------------------------------------------------------------- properties

u32 = st.integers(0, 2**32 - 1)
u64 = st.integers(0, 2**64 - 1)
i64 = st.integers(-(2**63), 2**63 - 1)
i32 = st.integers(-(2**31), 2**31 - 1)
u8 = st.integers(0, 255)
xids = st.none() | u32
names = st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), max_size=20)
column_values = st.one_of(
    st.tuples(st.none(), st.just(b"n")),
    st.tuples(st.just(UNCHANGED), st.just(b"u")),
    st.tuples(st.binary(max_size=40), st.sampled_from([b"t", b"b"])),
)


@st.composite
def tuples(draw):
    cols = draw(st.lists(column_values, max_size=12))
    return TupleData(tuple(v for v, _ in cols), b"".join(k for _, k in cols))


relation_columns = st.builds(RelationColumn, names, u32, i32, u8)

STRATEGIES = {
    Begin: [st.builds(Begin, u64, i64, u32)],
    Commit: [st.builds(Commit, u64, u64, i64, u8)],
    Origin: [st.builds(Origin, u64, names)],
    Relation: [
        st.builds(
            Relation,
            u32,
            names,
            names,
            st.sampled_from("dnfi"),
            st.lists(relation_columns, max_size=8).map(tuple),
            xids,
        )
    ],
    Type: [st.builds(Type, u32, names, names, xids)],
    Insert: [st.builds(Insert, u32, tuples(), xids)],
    Update: [
        st.builds(Update, u32, tuples(), key=st.none() | tuples(), xid=xids),
        st.builds(Update, u32, tuples(), old=tuples(), xid=xids),
    ],
    Delete: [
        st.builds(Delete, u32, key=tuples(), xid=xids),
        st.builds(Delete, u32, old=tuples(), xid=xids),
    ],
    Truncate: [st.builds(Truncate, st.lists(u32, max_size=10).map(tuple), u8, xids)],
    LogicalMessage: [st.builds(LogicalMessage, u64, names, st.binary(max_size=50), u8, xids)],
    StreamStart: [st.builds(StreamStart, u32, st.booleans())],
    StreamStop: [st.just(StreamStop())],
    StreamCommit: [st.builds(StreamCommit, u32, u64, u64, i64, u8)],
    StreamAbort: [st.builds(StreamAbort, u32, u32), st.builds(StreamAbort, u32, u32, u64, i64)],
    BeginPrepare: [st.builds(BeginPrepare, u64, u64, i64, u32, names)],
    Prepare: [st.builds(Prepare, u64, u64, i64, u32, names, u8)],
    StreamPrepare: [st.builds(StreamPrepare, u64, u64, i64, u32, names, u8)],
    CommitPrepared: [st.builds(CommitPrepared, u64, u64, i64, u32, names, u8)],
    RollbackPrepared: [st.builds(RollbackPrepared, u64, u64, i64, i64, u32, names, u8)],
}
MESSAGES = st.one_of([s for group in STRATEGIES.values() for s in group])


def test_every_class_has_a_strategy():
    assert set(STRATEGIES) == set(MESSAGE_CLASSES.values())


@given(MESSAGES)
def test_property_round_trip(message):
    wire = message.encode()
    assert wire[:1] == type(message).TYPE
    in_stream = getattr(message, "xid", None) is not None and wire[:1] in STREAMABLE_TYPES
    assert decode_message(wire, in_stream=in_stream) == message
    assert decode_message(memoryview(bytearray(wire)), in_stream=in_stream) == message


@given(MESSAGES, st.data())
def test_property_truncation_is_detected(message, data):
    wire = message.encode()
    in_stream = getattr(message, "xid", None) is not None and wire[:1] in STREAMABLE_TYPES
    cut = data.draw(st.integers(0, len(wire) - 1))
    try:
        decoded = decode_message(wire[:cut], in_stream=in_stream)
    except DecodeError:
        return
    # A shorter prefix can only parse if it is itself a complete message of the
    # same type (the v4 StreamAbort drops back to the v2 layout).
    assert decoded.encode() == wire[:cut]


@given(st.lists(column_values.filter(lambda c: c[0] is not UNCHANGED), max_size=6), st.data())
def test_property_batch_matches_per_row_insert(template, data):
    ncols = len(template)
    binary = [k == b"b" for _, k in template]
    nrows = data.draw(st.integers(0, 20))
    cell = st.none() | st.binary(max_size=30)
    columns = [data.draw(st.lists(cell, min_size=nrows, max_size=nrows)) for _ in range(ncols)]
    xid = data.draw(xids)
    relid = data.draw(u32)
    if ncols == 0:
        got = encode_insert_batch(relid, columns, xid=xid, binary=binary, nrows=nrows)
    else:
        got = encode_insert_batch(relid, columns, xid=xid, binary=binary)
    expected = []
    for row in range(nrows):
        values = [columns[c][row] for c in range(ncols)]
        kinds = bytes(
            ord("n") if v is None else ord("b" if binary[c] else "t") for c, v in enumerate(values)
        )
        expected.append(Insert(relid, TupleData(tuple(values), kinds), xid).encode())
    assert got == expected


def test_batch_argument_checks():
    with pytest.raises(ValueError):
        encode_insert_batch(1, [[b"a"], [b"a", b"b"]])
    with pytest.raises(ValueError):
        encode_insert_batch(1, [])
    with pytest.raises(ValueError):
        encode_insert_batch(1, [[b"a"]], binary=[True, False])
    with pytest.raises(ValueError):
        encode_insert_batch(1, [[b"a"]], nrows=2)
    with pytest.raises(TypeError):
        encode_insert_batch(1, [[b"a", 5]])
    with pytest.raises(TypeError):
        encode_insert_batch(1, [[None, "text"]])
    assert encode_insert_batch(7, [[], []]) == []
    assert encode_insert_batch(7, [], nrows=2) == [Insert(7, TupleData(())).encode()] * 2
