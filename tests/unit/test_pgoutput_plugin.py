"""pgoutput plugin logic (pgoutput.c): what a committed lake transaction becomes on the wire.

The strongest check replays the PostgreSQL 15 scenario of ``shared/protocol`` (steps 7-10c:
single-statement DML, updates with key changes, row filter moves, column lists, FULL /
DEFAULT / INDEX identities, deletes, an unpublished table, logical messages, truncates,
big and rolled-back transactions, two-phase commit, a table added to a publication) on a
lake and compares the decoded message stream with what PostgreSQL 15 sent to three
subscribers (text, binary, two_phase), message for message and byte for byte in every
tuple. Smaller cases pin the rules one at a time, and option validation is checked against
pgoutput_startup's wording and SQLSTATEs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from decoding.catalog import RowFilterExpr
from decoding.errors import PgError
from decoding.pgoutput import (
    UNCHANGED,
    Begin,
    BeginPrepare,
    Commit,
    CommitPrepared,
    Delete,
    Insert,
    LogicalMessage,
    Origin,
    Prepare,
    Relation,
    RollbackPrepared,
    Truncate,
    TupleData,
    Update,
    decode_message,
)
from decoding.pgoutput.options import PgOutputOptions, split_identifier_string
from decoding.pgoutput.plugin import PgOutput
from decoding.pgtypes import parse_type
from decoding.pgvalues import text_encoder
from decoding.reorder import DecodedTxn, Ended, ReorderBuffer, committed_after
from tests.lakeutil import MakeLake, cooked
from tests.unit.pgoutput_fixtures import CAPTURES_DIR, load_connection
from walsender_proxy.lake import Lake, LakeSettings, PubTable, Sql

needs_captures = pytest.mark.skipif(
    not CAPTURES_DIR.is_dir(), reason=f"protocol captures not found at {CAPTURES_DIR}"
)


# ---------------------------------------------------------------------------- helpers


def opts(*pubs: str, proto: str = "3", **kw: str) -> PgOutputOptions:
    names = ",".join(f'"{p}"' for p in pubs)
    raw = [("proto_version", proto), ("publication_names", names), *kw.items()]
    return PgOutputOptions.parse(raw, 150000)


@pytest.fixture
def lake(make_lake: MakeLake) -> Lake:
    return make_lake(path="lake")


class Stream:
    """A replication connection's view of a lake: remembers where it started, decodes
    every transaction committed since with one PgOutput (so the relation cache lives
    across transactions, as on one connection)."""

    def __init__(self, lake: Lake, options: PgOutputOptions, **kw: Any) -> None:
        self.lake = lake
        self.plugin = PgOutput(options, lake.catalog_at, lake.changesets, **kw)
        self.start = lake.log.insert_lsn
        self.csn = lake.frontier

    def txns(self) -> list[DecodedTxn]:
        out = list(committed_after(self.lake.log.read(self.start), self.start, self.csn))
        self.start = self.lake.log.insert_lsn
        self.csn = self.lake.frontier
        return out

    def messages(self) -> list[bytes]:
        """Messages of the transactions committed since the last call."""
        return [m for tx in self.txns() for m in self.plugin.transaction(tx)]

    def decoded(self) -> list[Any]:
        return [decode_message(m) for m in self.messages()]

    def per_txn(self) -> list[list[Any]]:
        return [[decode_message(m) for m in self.plugin.transaction(tx)] for tx in self.txns()]


def kinds(msgs: list[Any]) -> str:
    return "".join(type(m).TYPE.decode() for m in msgs)


def text(*values: Any) -> TupleData:
    return TupleData(tuple(None if v is None else str(v).encode() for v in values))


def setup_t(lake: Lake, *, identity: str = "d", **pub: Any) -> None:
    with lake.begin() as tx:
        tx.create_table(
            "t",
            [("id", "integer", True), ("region", "text", True), ("secret", "text"), ("n", "int")],
            primary_key=["id"],
        )
        if identity == "i":
            tx.set_replica_identity("t", "index", ["id", "region"])
        elif identity != "d":
            tx.set_replica_identity("t", {"f": "full", "n": "nothing"}[identity])
        if "tables" in pub:
            pub["tables"] = cooked(tx, pub["tables"])
        tx.create_publication("p", **pub)


def rel_cols(msg: Relation) -> list[tuple[str, int, int, int]]:
    return [(c.name, c.type_oid, c.type_modifier, c.flags) for c in msg.columns]


# ---------------------------------------------------------------- option validation


def parse(*pairs: tuple[str, str | None], version: int = 150000) -> PgOutputOptions:
    return PgOutputOptions.parse(list(pairs), version)


def test_options_as_a_pg15_subscriber_sends_them():
    o = parse(
        ("proto_version", "3"),
        ("streaming", "on"),
        ("two_phase", "on"),
        ("publication_names", '"pub_main","pub_filter"'),
        ("binary", "true"),
    )
    assert o == PgOutputOptions(3, ("pub_main", "pub_filter"), True, False, "on", True, "any")
    # pg_recvlogical: bare names, messages
    o = parse(("proto_version", "1"), ("publication_names", "pub_main"), ("messages", "true"))
    assert (o.proto_version, o.publication_names, o.messages, o.binary) == (
        1,
        ("pub_main",),
        True,
        False,
    )


@pytest.mark.parametrize(
    ("pairs", "version", "sqlstate", "message"),
    [
        ([("publication_names", "p")], 150000, "0A000",
         "client sent proto_version=0 but we only support protocol 1 or higher"),
        ([("proto_version", "4"), ("publication_names", "p")], 150000, "0A000",
         "client sent proto_version=4 but we only support protocol 3 or lower"),
        ([("proto_version", "5"), ("publication_names", "p")], 160000, "0A000",
         "client sent proto_version=5 but server only supports protocol 4 or lower"),
        ([("proto_version", "0"), ("publication_names", "p")], 160000, "0A000",
         "client sent proto_version=0 but server only supports protocol 1 or higher"),
        ([("proto_version", "4000000000"), ("publication_names", "p")], 150000, "0A000",
         "client sent proto_version=-294967296 but we only support protocol 3 or lower"),
        ([("proto_version", "3x")], 150000, "22023", "invalid proto_version"),
        ([("proto_version", " ")], 150000, "22023", "invalid proto_version"),
        ([("proto_version", None)], 150000, "22023", "invalid proto_version"),
        ([("proto_version", "-1")], 150000, "22023", 'proto_version "-1" out of range'),
        ([("proto_version", "4294967296")], 150000, "22023",
         'proto_version "4294967296" out of range'),
        ([("proto_version", "99999999999999999999")], 150000, "22023", "invalid proto_version"),
        ([("proto_version", "1"), ("proto_version", "1")], 150000, "42601",
         "conflicting or redundant options"),
        ([("proto_version", "1"), ("binary", "true"), ("binary", "false")], 150000, "42601",
         "conflicting or redundant options"),
        ([("proto_version", "1")], 150000, "22023", "publication_names parameter missing"),
        ([("proto_version", "1"), ("publication_names", " ")], 150000, "22023",
         "publication_names parameter missing"),
        ([("proto_version", "1"), ("publication_names", "a,")], 150000, "42602",
         "invalid publication_names syntax"),
        ([("proto_version", "1"), ("publication_names", '"a')], 150000, "42602",
         "invalid publication_names syntax"),
        ([("proto_version", "1"), ("publication_names", "a b")], 150000, "42602",
         "invalid publication_names syntax"),
        ([("proto_version", "1"), ("binary", "yes")], 150000, "42601",
         "binary requires a Boolean value"),
        ([("proto_version", "1"), ("messages", "1")], 150000, "42601",
         "messages requires a Boolean value"),
        ([("proto_version", "1"), ("streaming", "parallel")], 150000, "42601",
         "streaming requires a Boolean value"),
        ([("proto_version", "3"), ("streaming", "sometimes")], 160000, "42601",
         'streaming requires a Boolean value or "parallel"'),
        ([("proto_version", "1"), ("publication_names", "p"), ("streaming", "on")], 150000,
         "22023", "requested proto_version=1 does not support streaming, need 2 or higher"),
        ([("proto_version", "3"), ("publication_names", "p"), ("streaming", "parallel")],
         160000, "22023",
         "requested proto_version=3 does not support parallel streaming, need 4 or higher"),
        ([("proto_version", "2"), ("publication_names", "p"), ("two_phase", "on")], 150000,
         "22023",
         "requested proto_version=2 does not support two-phase commit, need 3 or higher"),
        ([("proto_version", "3"), ("origin", "none")], 150000, "XX000",
         "unrecognized pgoutput option: origin"),
        ([("proto_version", "3"), ("Binary", "true")], 150000, "XX000",
         "unrecognized pgoutput option: Binary"),
        ([("proto_version", "3"), ("origin", "local")], 160000, "22023",
         'unrecognized origin value: "local"'),
        ([("proto_version", "3"), ("origin", None)], 160000, "42601",
         "origin requires a parameter"),
    ],
)  # fmt: skip
def test_option_errors(pairs, version, sqlstate, message):
    with pytest.raises(PgError) as ei:
        PgOutputOptions.parse(pairs, version)
    assert (ei.value.sqlstate, ei.value.message) == (sqlstate, message)


def test_option_values():
    base = [("proto_version", "4"), ("publication_names", "p")]
    o = PgOutputOptions.parse([*base, ("streaming", "parallel"), ("origin", "NONE")], 160000)
    assert (o.streaming, o.origin) == ("parallel", "none")
    o = PgOutputOptions.parse([*base, ("binary", None), ("messages", "OFF")], 160000)
    assert (o.binary, o.messages) == (True, False)
    # a sign and leading blanks are what strtoul accepts
    o = PgOutputOptions.parse([("proto_version", " +2"), ("publication_names", "p")])
    assert o.proto_version == 2
    # the checks come after the whole list is read: the first problem in the list wins
    with pytest.raises(PgError, match="conflicting"):
        PgOutputOptions.parse([("proto_version", "9"), ("proto_version", "9")])


@pytest.mark.parametrize(
    ("raw", "names"),
    [
        ('"pub_main","pub_filter"', ["pub_main", "pub_filter"]),
        ("Pub_Main , other", ["pub_main", "other"]),
        (' "Mixed Case" ,"q""uote"', ["Mixed Case", 'q"uote']),
        ('""', [""]),
        ("", []),
        ("  ", []),
        ("a" * 70, ["a" * 63]),
        ('"' + "é" * 40 + '"', ["é" * 31]),  # 63 bytes, cut at a character boundary
        ("a,,b", None),
        (",a", None),
        ("a,", None),
        ('"a"b', None),
        ('"unterminated', None),
        ("ÄB", ["Äb"]),  # only ASCII letters fold
    ],
)
def test_split_identifier_string(raw, names):
    assert split_identifier_string(raw) == names


# -------------------------------------------------------------------- basic stream


def test_begin_relation_insert_commit_fields(lake):
    setup_t(lake, tables=["t"])
    s = Stream(lake, opts("p"))
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "region": "eu", "secret": "s", "n": 7}])
    (txn,) = s.txns()
    msgs = [decode_message(m) for m in s.plugin.transaction(txn)]
    assert msgs[0] == Begin(txn.commit_lsn, txn.commit_ts, txn.xid)
    rel = msgs[1]
    assert isinstance(rel, Relation)
    assert (rel.relid, rel.namespace, rel.name, rel.replica_identity) == (
        lake.catalog.resolve_table("t").oid,
        "public",
        "t",
        "d",
    )
    assert rel_cols(rel) == [("id", 23, -1, 1), ("region", 25, -1, 0), ("secret", 25, -1, 0),
                             ("n", 23, -1, 0)]  # fmt: skip
    assert msgs[2] == Insert(rel.relid, text(1, "eu", "s", 7))
    assert msgs[3] == Commit(txn.commit_lsn, txn.end_lsn, txn.commit_ts, 0)
    assert txn.end_lsn > txn.commit_lsn
    # the relation is known now: the next transaction has no R
    with lake.begin() as tx:
        tx.insert("t", [{"id": 2, "region": "us"}])
    assert kinds(s.decoded()) == "BIC"


def test_empty_and_unpublished_transactions_send_nothing(lake):
    setup_t(lake, tables=["t"])
    with lake.begin() as tx:
        tx.create_table("u", [("id", "integer")])
    s = Stream(lake, opts("p"))
    with lake.begin() as tx:
        tx.insert("u", [{"id": 1}])
    with lake.begin() as tx:
        tx.message("pfx", "not requested")
    with lake.begin() as tx:
        tx.create_table("u2", [("id", "integer")])
    lake.message("pfx", "non-transactional")
    txns = s.txns()
    assert len(txns) == 3
    assert [s.plugin.transaction(t) for t in txns] == [[], [], []]


def test_messages(lake):
    setup_t(lake, tables=["t"])
    s = Stream(lake, opts("p", proto="1", messages="true"))
    with lake.begin() as tx:
        tx.message("pfx", b"hello pgoutput")
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "region": "eu"}])
        tx.message("pfx", "after the row", transactional=True)
    (t1, t2) = s.txns()
    m1 = [decode_message(m) for m in s.plugin.transaction(t1)]
    assert kinds(m1) == "BMC"
    assert m1[1] == LogicalMessage(t1.commit_lsn, "pfx", b"hello pgoutput", 1)
    assert kinds([decode_message(m) for m in s.plugin.transaction(t2)]) == "BRIMC"
    # non-transactional: a bare M with flags 0, the LSN the caller gives
    rec = next(e for e in lake.log.read() if type(e.record).__name__ == "Message")
    (raw,) = s.plugin.message(4242, rec.record)
    assert decode_message(raw) == LogicalMessage(4242, "pfx", b"hello pgoutput", 0)
    quiet = PgOutput(opts("p"), lake.catalog_at, lake.changesets)
    assert quiet.message(1, rec.record) == []


# ------------------------------------------------------------------ row identities


def test_update_and_delete_per_replica_identity(lake):
    for name, ident in (("td", "default"), ("tf", "full"), ("ti", "index"), ("tn", "nothing")):
        with lake.begin() as tx:
            tx.create_table(
                name,
                [("id", "integer", True), ("code", "text", True), ("v", "text")],
                primary_key=["id"] if ident == "default" else [],
            )
            if ident == "index":
                tx.set_replica_identity(name, "index", ["code"])
            elif ident != "default":
                tx.set_replica_identity(name, ident)
            tx.insert(name, [{"id": 1, "code": "c1", "v": "a"}, {"id": 2, "code": "c2", "v": "b"}])
    with lake.begin() as tx:
        tx.create_table("tk", [("id", "integer"), ("v", "text")])  # DEFAULT without a key
        tx.insert("tk", [{"id": 1, "v": "a"}])
        tx.create_publication("p", all_tables=True)
    s = Stream(lake, opts("p"))
    # NOTHING / DEFAULT without a key: PostgreSQL refuses to update or delete a table
    # that publishes those actions without a replica identity, and so does the lake.
    from walsender_proxy.lake import LakeError

    for name in ("tn", "tk"):
        for stmt in (lambda tx, n=name: tx.update(n, {"v": "x"}, "id = 1"), lambda tx, n=name: tx.delete(n, "id = 1")):
            tx = lake.begin()
            with pytest.raises(LakeError) as ei:
                stmt(tx)
            assert ei.value.sqlstate == "55000"
            tx.rollback()
    for name in ("td", "tf", "ti"):
        with lake.begin() as tx:
            tx.update(name, {"v": "x"}, "id = 1")
        with lake.begin() as tx:
            if name == "tk":
                tx.update(name, {"id": 10}, "id = 1")
            else:
                tx.update(name, {"id": 20, "code": "c2x"}, "id = 2")
        with lake.begin() as tx:
            tx.delete(name, "v = 'x'")
            tx.delete(name, "v <> 'x'")
    got = {}
    for txn in s.txns():
        for m in s.plugin.transaction(txn):
            msg = decode_message(m)
            if isinstance(msg, Relation):
                rel = msg
                got.setdefault(msg.name, [rel.replica_identity, rel_cols(msg)])
            elif isinstance(msg, Update | Delete):
                got[rel.name].append(msg)
    td, tf, ti = (got[n] for n in ("td", "tf", "ti"))
    assert td[0] == "d" and [c[3] for c in td[1]] == [1, 0, 0]
    rid = td[2].relid
    assert td[2:] == [
        Update(rid, text(1, "c1", "x")),
        Update(rid, text(20, "c2x", "b"), key=text(2, None, None)),
        Delete(rid, key=text(1, None, None)),
        Delete(rid, key=text(20, None, None)),
    ]
    assert tf[0] == "f" and [c[3] for c in tf[1]] == [1, 1, 1]
    rid = tf[2].relid
    assert tf[2:] == [
        Update(rid, text(1, "c1", "x"), old=text(1, "c1", "a")),
        Update(rid, text(20, "c2x", "b"), old=text(2, "c2", "b")),
        Delete(rid, old=text(1, "c1", "x")),
        Delete(rid, old=text(20, "c2x", "b")),
    ]
    assert ti[0] == "i" and [c[3] for c in ti[1]] == [0, 1, 0]
    rid = ti[2].relid
    assert ti[2:] == [
        Update(rid, text(1, "c1", "x")),
        Update(rid, text(20, "c2x", "b"), key=text(None, "c2", None)),
        Delete(rid, key=text(None, "c1", None)),
        Delete(rid, key=text(None, "c2x", None)),
    ]


def test_update_setting_the_key_to_itself_sends_no_key(lake):
    setup_t(lake, tables=["t"])
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "region": "eu"}])
    s = Stream(lake, opts("p"))
    with lake.begin() as tx:
        tx.update("t", {"id": Sql("id"), "secret": "s"}, "true")
    msgs = s.decoded()
    assert msgs[2] == Update(msgs[2].relid, text(1, "eu", "s", None))


# -------------------------------------------------------------- publication rules


def test_row_filter_moves_in_and_out(lake):
    setup_t(lake, identity="i", tables=[PubTable("t", None, "region = 'eu'")])
    with lake.begin() as tx:
        tx.insert(
            "t", [{"id": i, "region": "eu" if i % 2 == 0 else "us", "n": i} for i in range(8)]
        )
    s = Stream(lake, opts("p"))
    with lake.begin() as tx:  # one statement, four fates
        tx.update(
            "t",
            {"region": Sql("CASE WHEN id IN (1, 2) THEN 'eu' ELSE 'us' END"), "n": Sql("n + 100")},
            "id IN (0, 1, 2, 3)",
        )
    with lake.begin() as tx:  # identity unchanged: judged on the new row alone
        tx.update("t", {"n": 0}, "id IN (4, 5)")
    with lake.begin() as tx:
        tx.insert("t", [{"id": 10, "region": "us"}, {"id": 11, "region": "eu"}])
    with lake.begin() as tx:
        tx.delete("t", "id IN (5, 6, 7)")
    with lake.begin() as tx:
        tx.delete("t", "id = 3")  # us: nothing, not even Begin/Commit
    t1, t2, t3, t4, t5 = s.per_txn()
    rid = t1[1].relid
    # id 0: eu->us becomes Delete (old key); id 1: us->eu becomes Insert; id 2: eu->eu
    # stays an Update (identity unchanged: no key); id 3: us->us sends nothing
    assert kinds(t1[:2]) + kinds(t1[-1:]) == "BRC"
    by_id = {(getattr(m, "key", None) or m.new).values[0]: m for m in t1[2:-1]}
    assert by_id == {
        b"0": Delete(rid, key=text(0, "eu", None, None)),
        b"1": Insert(rid, text(1, "eu", None, 101)),
        b"2": Update(rid, text(2, "eu", None, 102)),
    }
    assert t2[1:-1] == [Update(rid, text(4, "eu", None, 0))]
    assert t3[1:-1] == [Insert(rid, text(11, "eu", None, None))]
    assert t4[1:-1] == [Delete(rid, key=text(6, "eu", None, None))]
    assert t5 == []


def test_row_filter_with_full_identity_sees_the_whole_old_row(lake):
    setup_t(lake, identity="f", tables=[PubTable("t", None, "n > 10")])
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "region": "eu", "n": 20}, {"id": 2, "region": "eu", "n": 5}])
    s = Stream(lake, opts("p"))
    with lake.begin() as tx:
        tx.update("t", {"n": Sql("30 - n")}, "true")  # 20 -> 10 (out), 5 -> 25 (in)
    m = s.decoded()
    rid = m[1].relid
    # (the lake may hand a statement's rows over in any order)
    assert sorted(m[2:-1], key=repr) == [
        Delete(rid, old=text(1, "eu", None, 20)),
        Insert(rid, text(2, "eu", None, 25)),
    ]


def test_row_filter_null_is_false_and_casts(lake):
    setup_t(lake, tables=[PubTable("t", None, "((secret = 'x'::text) OR (n > (10)::numeric))")])
    s = Stream(lake, opts("p"))
    with lake.begin() as tx:
        tx.insert("t", [
            {"id": 1, "region": "a", "secret": None, "n": None},  # NULL OR NULL: not sent
            {"id": 2, "region": "a", "secret": "x", "n": None},
            {"id": 3, "region": "a", "secret": "y", "n": 11},
            {"id": 4, "region": "a", "secret": "y", "n": 10},
        ])  # fmt: skip
    assert [m.new.values[0] for m in s.decoded() if isinstance(m, Insert)] == [b"2", b"3"]


def test_uncooked_row_filter_is_refused_not_guessed(lake):
    # (a catalog written before filters were cooked keeps only the text)
    setup_t(lake, tables=[PubTable("t", None, RowFilterExpr("(region = 'eu')", "", ()))])
    s = Stream(lake, opts("p"))
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "region": "eu"}])
    with pytest.raises(PgError) as ei:
        s.messages()
    assert ei.value.sqlstate == "0A000"


def test_row_filters_of_publications_are_ored_in_order(lake):
    # (pgoutput evaluates them in order, each only while none is true yet)
    with lake.begin() as tx:
        tx.create_table("t", [("id", "integer", True), ("n", "int")], primary_key=["id"])
        tx.create_publication("p1", tables=cooked(tx, [PubTable("t", None, "n % 2 = 0")]))
        tx.create_publication("p2", tables=cooked(tx, [PubTable("t", None, "id / 10 = 1 OR n IS NULL")]))
    s = Stream(lake, opts("p1", "p2"))
    with lake.begin() as tx:
        tx.insert("t", [{"id": i, "n": None if i == 3 else i * 3} for i in range(1, 13)])
    # n even: 2, 4, 6, 8, 10, 12; id / 10 = 1: 10, 11; n NULL: 3
    assert [m.new.values[0] for m in s.decoded() if isinstance(m, Insert)] == [
        b"2", b"3", b"4", b"6", b"8", b"10", b"11", b"12"
    ]


def test_row_filters_combine_per_action(lake):
    with lake.begin() as tx:
        tx.create_table("t", [("id", "integer", True), ("region", "text", True)],
                        primary_key=["id"])  # fmt: skip
        tx.set_replica_identity("t", "index", ["id", "region"])
        tx.create_publication("eu", tables=cooked(tx, [PubTable("t", None, "region = 'eu'")]))
        tx.create_publication("us", tables=cooked(tx, [PubTable("t", None, "region = 'us'")]))
        tx.create_publication("ins", tables=["t"], publish="insert")
    # two filters: OR
    s = Stream(lake, opts("eu", "us"))
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "region": "eu"}, {"id": 2, "region": "us"},
                        {"id": 3, "region": "jp"}])  # fmt: skip
    assert [m.new.values[0] for m in s.decoded() if isinstance(m, Insert)] == [b"1", b"2"]
    # an unfiltered publication of inserts lifts the insert filter only
    s2 = Stream(lake, opts("eu", "ins"))
    with lake.begin() as tx:
        tx.insert("t", [{"id": 4, "region": "jp"}])
    with lake.begin() as tx:
        tx.delete("t", "id IN (3, 4)")
    with lake.begin() as tx:
        tx.delete("t", "id = 1")
    t1, t2, t3 = s2.per_txn()
    assert [m.new.values[0] for m in t1 if isinstance(m, Insert)] == [b"4"]
    assert t2 == []  # deletes are filtered by 'eu'
    assert kinds(t3) == "BDC"


def test_publish_actions_are_the_union(lake):
    with lake.begin() as tx:
        tx.create_table("t", [("id", "integer", True)], primary_key=["id"])
        tx.create_publication("pi", tables=["t"], publish="insert")
        tx.create_publication("pd", tables=["t"], publish="delete")
    s = Stream(lake, opts("pi"))
    s2 = Stream(lake, opts("pi", "pd"))
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1}])
    with lake.begin() as tx:
        tx.update("t", {"id": 2}, "true")
    with lake.begin() as tx:
        tx.delete("t", "true")
    with lake.begin() as tx:
        tx.truncate("t")
    assert [kinds(x) for x in s.per_txn()] == ["BRIC", "", "", ""]
    assert [kinds(x) for x in s2.per_txn()] == ["BRIC", "", "BDC", ""]


def test_column_lists(lake):
    with lake.begin() as tx:
        tx.create_table(
            "t",
            [("id", "integer", True), ("region", "text", True), ("secret", "text"),
             ("amount", "numeric")],
            primary_key=["id"],
        )  # fmt: skip
        tx.set_replica_identity("t", "index", ["id", "region"])
        tx.create_publication("cols", tables=[PubTable("t", ("id", "region", "amount"))])
        tx.create_publication("same", tables=[PubTable("t", ("amount", "region", "id"))])
        tx.create_publication("all", tables=[PubTable("t", ("id", "region", "secret", "amount"))])
        tx.create_publication("plain", tables=["t"])
        tx.create_publication("everything", all_tables=True)
    s = Stream(lake, opts("cols", "same"))
    s_all = Stream(lake, opts("all", "plain", "everything"))
    s_bad = Stream(lake, opts("cols", "plain"))
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "region": "eu", "secret": "s", "amount": "1.5"}])
    with lake.begin() as tx:
        tx.update("t", {"region": "us"}, "id = 1")
    with lake.begin() as tx:
        tx.delete("t", "true")
    m = s.decoded()
    rel = m[1]
    assert [c.name for c in rel.columns] == ["id", "region", "amount"]
    assert [c.flags for c in rel.columns] == [1, 1, 0]
    assert m[2] == Insert(rel.relid, text(1, "eu", "1.5"))
    assert m[5] == Update(rel.relid, text(1, "us", "1.5"), key=text(1, "eu", None))
    assert m[8] == Delete(rel.relid, key=text(1, "us", None))
    # a list naming every column is no list; ALL TABLES has none
    m = s_all.decoded()
    assert [c.name for c in m[1].columns] == ["id", "region", "secret", "amount"]
    # PostgreSQL 15 does not merge different lists: it refuses
    with pytest.raises(PgError) as ei:
        s_bad.messages()
    assert (ei.value.sqlstate, ei.value.message) == (
        "0A000",
        'cannot use different column lists for table "public.t" in different publications',
    )


def test_schema_and_all_tables_publications(lake):
    with lake.begin() as tx:
        tx.create_schema("s1")
        tx.create_table("s1.a", [("id", "bigint", True)], primary_key=["id"])
        tx.create_table("b", [("id", "bigint", True)], primary_key=["id"])
        tx.create_publication("sch", schemas=["s1"])
        tx.create_publication("flt", tables=cooked(tx, [PubTable("s1.a", None, "id > 100")]))
    s = Stream(lake, opts("sch", "flt"))  # the schema publication lifts the filter
    with lake.begin() as tx:
        tx.insert("s1.a", [{"id": 1}])
        tx.insert("b", [{"id": 1}])
    m = s.decoded()
    assert kinds(m) == "BRIC"
    assert (m[1].namespace, m[1].name) == ("s1", "a")
    with lake.begin() as tx:
        tx.create_publication("every", all_tables=True)
    s2 = Stream(lake, opts("every"))
    with lake.begin() as tx:
        tx.insert("b", [{"id": 2}])
    assert kinds(s2.decoded()) == "BRIC"


def test_missing_publication_errors_at_the_first_change(lake):
    setup_t(lake, tables=["t"])
    s = Stream(lake, opts("p", "nope"))
    with lake.begin() as tx:
        tx.message("pfx", "no change yet")
    assert s.messages() == []
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "region": "eu"}])
    with pytest.raises(PgError) as ei:
        s.messages()
    assert (ei.value.sqlstate, ei.value.message) == ("42704", 'publication "nope" does not exist')


def test_dropping_the_publication_stops_the_stream(lake):
    setup_t(lake, tables=["t"])
    s = Stream(lake, opts("p"))
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "region": "eu"}])
    assert kinds(s.decoded()) == "BRIC"
    with lake.begin() as tx:
        tx.drop_publication("p")
    with lake.begin() as tx:
        tx.insert("t", [{"id": 2, "region": "eu"}])
    with pytest.raises(PgError, match='publication "p" does not exist'):
        s.messages()


# -------------------------------------------------------------- relation cache


def test_relation_resent_after_add_column_and_publication_change(lake):
    setup_t(lake, tables=["t"])
    with lake.begin() as tx:
        tx.create_table("o", [("id", "integer", True)], primary_key=["id"])
        tx.alter_publication("p", add_tables=["o"])
    s = Stream(lake, opts("p"))
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "region": "eu"}])
        tx.insert("o", [{"id": 1}])
    with lake.begin() as tx:
        tx.add_column("t", "extra", "numeric(12,3)")
    with lake.begin() as tx:
        tx.insert("t", [{"id": 2, "region": "eu", "extra": Decimal("1.5")}])
        tx.insert("o", [{"id": 2}])  # untouched relation: no R
    with lake.begin() as tx:
        tx.create_publication("unrelated")  # any publication change: all R again
    with lake.begin() as tx:
        tx.insert("o", [{"id": 3}])
    t1, t2, t3, t4, t5 = s.per_txn()
    assert kinds(t1) == "BRIRIC"
    assert t2 == [] and t4 == []
    assert kinds(t3) == "BRIIC"
    assert rel_cols(t3[1])[-1] == ("extra", 1700, (12 << 16 | 3) + 4, 0)
    assert t3[2] == Insert(t3[1].relid, text(2, "eu", None, None, "1.500"))
    assert kinds(t5) == "BRIC" and t5[1].name == "o"


def test_ddl_inside_the_transaction_is_decoded_where_it_stands(lake):
    setup_t(lake, tables=["t"])
    s = Stream(lake, opts("p"))
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "region": "eu"}])
        tx.add_column("t", "extra", "text")
        tx.insert("t", [{"id": 2, "region": "eu", "extra": "x"}])
    with lake.begin() as tx:
        tx.insert("t", [{"id": 3, "region": "eu", "extra": "y"}])
    with lake.begin() as tx:
        tx.insert("t", [{"id": 4, "region": "eu", "extra": "z"}])
    t1, t2, t3 = s.per_txn()
    assert kinds(t1) == "BRIRIC"
    assert len(t1[1].columns) == 4 and len(t1[3].columns) == 5
    assert t1[2].new == text(1, "eu", None, None)
    assert t1[4].new == text(2, "eu", None, None, "x")
    # the DDL's invalidation runs again when its transaction ends (as in PostgreSQL)
    assert kinds(t2) == "BRIC" and kinds(t3) == "BIC"


def test_table_added_and_filled_in_one_transaction(lake):
    """Step 10 of the scenario: rows written before ALTER PUBLICATION ... ADD TABLE in the
    same transaction are decoded with the catalog of that moment: not published."""
    setup_t(lake, tables=["t"])
    s = Stream(lake, opts("p"))
    with lake.begin() as tx:
        tx.create_table("late", [("id", "integer", True), ("v", "text")], primary_key=["id"])
        tx.insert("late", [{"id": 1, "v": "late 1"}])
        tx.alter_publication("p", add_tables=["late"])
        tx.insert("late", [{"id": 2, "v": "late 2"}])
    (t1,) = s.per_txn()
    assert kinds(t1) == "BRIC" and t1[2].new == text(2, "late 2")


def test_truncate(lake):
    setup_t(lake, tables=["t"])
    with lake.begin() as tx:
        tx.create_table("u", [("id", "integer", True)], primary_key=["id"])
        tx.create_table("v", [("id", "integer", True)], primary_key=["id"])
        tx.alter_publication("p", add_tables=["u"])
        tx.create_publication("nt", tables=["t"], publish="insert, update, delete")
    s = Stream(lake, opts("p"))
    s_nt = Stream(lake, opts("nt"))
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "region": "eu"}])
    with lake.begin() as tx:
        tx.truncate(["t", "v", "u"], cascade=True, restart_identity=True)
    with lake.begin() as tx:
        tx.insert("t", [{"id": 1, "region": "eu"}])
    with lake.begin() as tx:
        tx.truncate("v")
    t1, t2, t3, t4 = s.per_txn()
    assert kinds(t1) == "BRIC"
    # the relations are sent (again) before the Truncate, and once more after it
    assert kinds(t2) == "BRRTC"
    assert [r.name for r in t2[1:3]] == ["t", "u"]
    assert t2[3] == Truncate((t2[1].relid, t2[2].relid), 3)
    assert kinds(t3) == "BRIC"
    assert t4 == []
    assert [kinds(x) for x in s_nt.per_txn()] == ["BRIC", "", "BRIC", ""]


# ------------------------------------------------------------------- formats, bulk


def test_binary_values(lake):
    with lake.begin() as tx:
        tx.create_table(
            "t",
            [("id", "integer", True), ("b", "bigint"), ("n", "numeric(12,3)"), ("ts", "timestamptz"),
             ("flag", "boolean"), ("data", "bytea"), ("iarr", "int[]")],
            primary_key=["id"],
        )  # fmt: skip
        tx.create_publication("p", tables=["t"])
    s = Stream(lake, opts("p", binary="true"))
    with lake.begin() as tx:
        tx.insert("t", [{"id": 100, "b": -(2**63), "n": Decimal("-123.456"),
                         "ts": datetime(1999, 12, 31, 18, 29, 59, 999999, tzinfo=UTC),
                         "flag": False, "data": b"\x00\xff\x10", "iarr": [1, None, 3]},
                        {"id": 101}])  # fmt: skip
    m = s.decoded()
    first, second = m[2].new, m[3].new
    assert first.kinds == b"bbbbbbb" and second.kinds == b"bnnnnnn"
    # bytes as PostgreSQL 15 sent them for the same values (capture, step 7, sub_bin)
    assert first.values == (
        bytes.fromhex("00000064"),
        bytes.fromhex("8000000000000000"),
        bytes.fromhex("0002000040000003007b11d0"),
        bytes.fromhex("fffffffb63d3f9ff"),
        b"\x00",
        b"\x00\xff\x10",
        bytes.fromhex("0000000100000001000000170000000300000001000000040000000"
                      "1ffffffff0000000400000003"),
    )  # fmt: skip


def test_changesets_and_chunks_give_the_same_messages(tmp_path):
    rows = [{"id": i, "region": "eu" if i % 3 else "us", "n": i} for i in range(50)]
    outs = []
    for bulk, chunk in ((False, 65536), (True, 7)):
        settings = LakeSettings(
            fsync=False, background=False, changeset_bytes=1 if bulk else 1 << 30
        )
        with Lake(tmp_path / f"l{bulk}", settings) as lk:
            setup_t(lk, identity="i", tables=[PubTable("t", None, "region = 'eu'")])
            s = Stream(lk, opts("p"), chunk_rows=chunk)
            with lk.begin() as tx:
                tx.insert("t", rows)
            with lk.begin() as tx:
                tx.update(
                    "t", {"region": Sql("CASE WHEN id % 2 = 0 THEN 'eu' ELSE 'us' END")}, "true"
                )
            with lk.begin() as tx:
                tx.delete("t", "id < 40")
            txns = s.txns()
            if bulk:
                assert any(type(c).__name__ == "Changeset" for t in txns for c in t.changes)
                chunks = list(s.plugin.iter_transaction(txns[0]))
                assert len(chunks) > 1 and all(len(c) <= 7 + 2 for c in chunks)
                s.plugin = PgOutput(opts("p"), lk.catalog_at, lk.changesets, chunk_rows=7)
            out = [[decode_message(m) for m in s.plugin.transaction(t)] for t in txns]
            # the lake may hand the rows of a statement over in another order
            outs.append([sorted(repr(m) for m in t if not isinstance(m, Begin | Commit))
                         for t in out])  # fmt: skip
    assert outs[0] == outs[1]
    # 33 eu rows; then 16 stay eu (Update), 17 leave (Delete), 9 arrive (Insert);
    # then the 20 eu rows below 40 go
    assert [len(t) for t in outs[0]] == [1 + 33, 16 + 17 + 9, 20]


def test_bulk_insert_matches_the_per_row_codec(lake):
    n = 20_000
    with lake.begin() as tx:
        tx.create_table("t", [("id", "bigint", True), ("v", "text"), ("x", "double precision")],
                        primary_key=["id"])  # fmt: skip
        tx.create_publication("p", tables=["t"])
    s = Stream(lake, opts("p"))
    ids = np.arange(n, dtype=np.int64)
    with lake.begin() as tx:
        tx.insert("t", pa.table({
            "id": ids,
            "v": pa.array([None if i % 7 == 0 else f"row {i} \t é" for i in range(n)]),
            "x": pa.array(ids / 3.0),
        }))  # fmt: skip
    msgs = s.messages()
    assert len(msgs) == n + 3
    relid = decode_message(msgs[1]).relid
    float8 = text_encoder(parse_type("float8"))
    for i in (0, 1, 7, 4999, n - 1):
        v = None if i % 7 == 0 else f"row {i} \t é".encode()
        (x,) = float8(pa.array([i / 3.0]))
        assert msgs[2 + i] == Insert(relid, TupleData((str(i).encode(), v, x))).encode()


# ------------------------------------------------------------------ origin, 2PC


def test_origin_message_and_origin_none(lake):
    setup_t(lake, tables=["t"])
    s = Stream(lake, opts("p"))
    none = PgOutput(
        PgOutputOptions.parse(
            [("proto_version", "4"), ("publication_names", "p"), ("origin", "none")], 160000
        ),
        lake.catalog_at,
        lake.changesets,
    )
    with lake.begin(origin="node_a") as tx:
        tx.insert("t", [{"id": 1, "region": "eu"}])
    with lake.begin() as tx:
        tx.insert("t", [{"id": 2, "region": "eu"}])
    t1, t2 = s.txns()
    m = [decode_message(x) for x in s.plugin.transaction(t1)]
    assert kinds(m) == "BORIC" and m[1] == Origin(0, "node_a")
    assert none.transaction(t1) == []
    assert kinds([decode_message(x) for x in none.transaction(t2)]) == "BRIC"


def test_two_phase_messages(lake):
    setup_t(lake, tables=["t"])
    start = lake.log.insert_lsn
    tx = lake.begin()
    tx.insert("t", [{"id": 1, "region": "eu"}])
    tx.prepare("g1")
    lake.commit_prepared("g1")
    tx = lake.begin()
    tx.create_table("other", [("id", "integer")])
    tx.prepare("g2")
    lake.rollback_prepared("g2")
    p = PgOutput(opts("p", two_phase="on"), lake.catalog_at, lake.changesets)
    rb = ReorderBuffer()
    prepared: dict[int, DecodedTxn] = {}
    out = []
    for entry in lake.log.read(start):
        for ev in rb.feed(entry):
            if isinstance(ev, DecodedTxn):
                prepared[ev.xid] = ev
                out.append([decode_message(m) for m in p.prepare(ev)])
            elif isinstance(ev, Ended):
                txn = prepared.pop(ev.xid)
                f = p.commit_prepared if ev.committed else p.rollback_prepared
                out.append([decode_message(m) for m in f(txn, ev)])
    assert not prepared
    (pre1, cp1, pre2, rp2) = out
    assert kinds(pre1) == "bRIP"
    assert isinstance(pre1[0], BeginPrepare) and pre1[0].gid == "g1"
    assert isinstance(pre1[-1], Prepare) and pre1[-1].prepare_lsn == pre1[0].prepare_lsn
    assert isinstance(cp1[0], CommitPrepared) and cp1[0].gid == "g1"
    assert kinds(pre2) == "bP"  # prepared transactions are sent even when empty
    assert isinstance(rp2[0], RollbackPrepared)
    assert rp2[0].prepare_end_lsn == pre2[0].end_lsn and rp2[0].gid == "g2"


# ------------------------------------------------- replay of the PostgreSQL 15 scenario

T0 = datetime(2026, 11, 21, tzinfo=UTC)


def at(hms: str) -> datetime:
    h, m, s = hms.split(":")
    sec, _, frac = s.partition(".")
    return T0 + timedelta(hours=int(h), minutes=int(m), seconds=int(sec),
                          microseconds=int(frac.ljust(6, "0")))  # fmt: skip


def pg_div3(g: int) -> str:
    # numeric g / 3.0 as PostgreSQL prints it (select_div_scale: 20 digits when the
    # leading digit of g is not above 3, else 16)
    scale = 20 if int(str(g)[0]) <= 3 and g < 10 else 16
    q = (Decimal(g) / Decimal(3)).quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
    return str(q)


def scenario_schema(lake: Lake) -> None:
    """shared/protocol/scenario/02_pub_schema.sql on the lake (partitions as two tables)."""
    with lake.begin() as tx:
        tx.create_schema("s1")
        tx.create_table("t_pk", [("id", "integer", True), ("b", "bigint"), ("t", "text"),
                                 ("n", "numeric(12,3)"), ("ts", "timestamptz"), ("flag", "boolean"),
                                 ("data", "bytea"), ("j", "jsonb"), ("iarr", "int[]"),
                                 ("tarr", "text[]"), ("bigtxt", "text")],
                        primary_key=["id"])  # fmt: skip
        tx.insert("t_pk", [
            {"id": g, "b": g * 10_000_000_000, "t": f"row {g}",
             "n": Decimal(g) * Decimal("1.125"),
             "ts": datetime(2024, 1, 1, tzinfo=UTC) + timedelta(hours=g), "flag": g % 2 == 0,
             "data": hashlib.md5(str(g).encode()).digest(),
             "j": f'{{"k": {g}, "arr": [{g}, "x"]}}', "iarr": [g, g + 1, None],
             "tarr": [f"a{g}", None, 'q"uote,comma']}
            for g in range(1, 21)
        ])  # fmt: skip
        tx.insert("t_pk", [{"id": 21}])
        tx.insert("t_pk", [{"id": 22, "t": "toasted", "bigtxt": "0123456789abcdef" * 800}])
        tx.create_table("t_full", [("id", "integer"), ("v", "text"), ("n", "numeric"),
                                   ("ts", "timestamptz")])  # fmt: skip
        tx.set_replica_identity("t_full", "full")
        ts0 = at("23:35:18.697445")
        tx.insert("t_full", [{"id": g, "v": f"full {g}", "n": pg_div3(g), "ts": ts0}
                             for g in range(1, 11)])  # fmt: skip
        tx.create_table("t_nokey", [("id", "integer"), ("v", "text")])
        tx.insert("t_nokey", [{"id": g, "v": f"nokey {g}"} for g in range(1, 11)])
        tx.create_table("t_uidx", [("id", "integer", True), ("code", "text", True), ("v", "text")])
        tx.set_replica_identity("t_uidx", "index", ["code"])
        tx.insert("t_uidx", [{"id": g, "code": f"c{g}", "v": f"uidx {g}"} for g in range(1, 11)])
        tx.create_table("s1.t_schema", [("id", "bigint", True), ("v", "text"),
                                        ("ts", "timestamptz")], primary_key=["id"])  # fmt: skip
        ts1 = at("23:35:18.702954")
        tx.insert("s1.t_schema", [{"id": g, "v": f"schema {g}", "ts": ts1} for g in range(1, 11)])
        tx.create_table("t_filtered", [("id", "integer", True), ("region", "text", True),
                                       ("secret", "text"), ("amount", "numeric")],
                        primary_key=["id"])  # fmt: skip
        tx.set_replica_identity("t_filtered", "index", ["id", "region"])
        tx.insert("t_filtered", [{"id": g, "region": "eu" if g % 2 == 0 else "us",
                                  "secret": f"secret{g}", "amount": str(g * 10)}
                                 for g in range(1, 11)])  # fmt: skip
        for part, ids in (
            ("t_part_1", range(100, 1000, 100)),
            ("t_part_2", range(1000, 1600, 100)),
        ):
            tx.create_table(part, [("id", "integer", True), ("v", "text")], primary_key=["id"])
            tx.insert(part, [{"id": i, "v": f"part {i // 100}"} for i in ids])
        tx.create_table("t_unpub", [("id", "integer", True), ("v", "text")], primary_key=["id"])
        tx.create_publication(
            "pub_main",
            tables=["t_pk", "t_full", "t_nokey", "t_uidx", "t_part_1", "t_part_2"],
            schemas=["s1"],
        )
        tx.create_publication(
            "pub_filter",
            tables=cooked(tx, [PubTable("t_filtered", ("id", "region", "amount"), "region = 'eu'")]),
        )


def scenario_steps(lake: Lake) -> None:
    """Steps 7 to 10c of shared/protocol/scenario/04_scenario.sh, with the timestamps
    PostgreSQL's now() gave (read from the capture)."""

    def one(fn: Any) -> None:
        with lake.begin() as tx:
            fn(tx)

    # 7 single-statement DML
    one(lambda tx: tx.insert("t_pk", [{
        "id": 100, "b": -(2**63), "t": "tab\there \"q\" 's' \\ nl\nend", "n": Decimal("-123.456"),
        "ts": datetime(1999, 12, 31, 18, 29, 59, 999999, tzinfo=UTC), "flag": False,
        "data": b"\x00\xff\x10", "j": '{"a": [1, 2.5, null, "s"]}', "iarr": [1, None, 3],
        "tarr": ["x y", None, "\\"], "bigtxt": None}]))  # fmt: skip
    one(lambda tx: tx.insert("t_pk", [{"id": 101}]))
    one(lambda tx: tx.insert("t_full", [{"id": 100, "v": "full new", "n": "1.5",
                                         "ts": at("23:38:34.257037")}]))  # fmt: skip
    one(lambda tx: tx.insert("t_nokey", [{"id": 100, "v": "nokey new"}]))
    one(lambda tx: tx.insert("t_uidx", [{"id": 100, "code": "c100", "v": "uidx new"}]))
    one(lambda tx: tx.insert("s1.t_schema", [{"id": 100, "v": "schema new",
                                              "ts": at("23:38:34.30197")}]))  # fmt: skip
    one(lambda tx: tx.insert("t_filtered", [{"id": 100, "region": "eu", "secret": "hidden",
                                             "amount": "1"},
                                            {"id": 101, "region": "us", "secret": "hidden",
                                             "amount": "2"}]))  # fmt: skip

    def parts(tx: Any) -> None:
        tx.insert("t_part_1", [{"id": 101, "v": "p1"}])
        tx.insert("t_part_2", [{"id": 1101, "v": "p2"}])

    one(parts)
    # 7b updates (the cross-partition UPDATE and the t_nokey UPDATE failed in PostgreSQL)
    one(lambda tx: tx.update("t_pk", {"t": "updated"}, "id = 1"))
    one(lambda tx: tx.update("t_pk", {"id": 1002}, "id = 2"))
    one(lambda tx: tx.update("t_pk", {"t": "toast row updated"}, "id = 22"))
    one(lambda tx: tx.update("t_full", {"v": "full updated"}, "id = 1"))
    one(lambda tx: tx.update("t_uidx", {"v": "uidx updated"}, "code = 'c1'"))
    one(lambda tx: tx.update("t_uidx", {"code": "c2x"}, "code = 'c2'"))
    one(lambda tx: tx.update("s1.t_schema", {"v": "schema updated"}, "id = 1"))
    one(lambda tx: tx.update("t_filtered", {"region": "eu"}, "id = 1"))
    one(lambda tx: tx.update("t_filtered", {"region": "us"}, "id = 2"))
    one(lambda tx: tx.update("t_filtered", {"amount": "999", "secret": "x"}, "id = 4"))
    # 7c deletes
    one(lambda tx: tx.delete("t_pk", "id = 3"))
    one(lambda tx: tx.delete("t_full", "id = 2"))
    one(lambda tx: tx.delete("t_uidx", "code = 'c3'"))
    one(lambda tx: tx.delete("s1.t_schema", "id = 2"))
    one(lambda tx: tx.delete("t_filtered", "id = 6"))
    one(lambda tx: tx.delete("t_filtered", "id = 7"))
    one(lambda tx: tx.delete("t_part_2", "id = 1500"))
    # 7d
    one(lambda tx: tx.insert("t_unpub", [{"id": 1, "v": "not published"}]))
    one(lambda tx: tx.message("myprefix", "transactional message"))
    lake.message("myprefix", "non-transactional message")

    def multi(tx: Any) -> None:
        tx.insert("t_pk", [{"id": 200, "t": "in txn"}])
        tx.update("t_full", {"v": "in txn"}, "id = 3")
        tx.delete("s1.t_schema", "id = 3")
        tx.insert("t_unpub", [{"id": 2, "v": "x"}])

    one(multi)
    # 7e truncates
    one(lambda tx: tx.truncate("t_nokey"))
    one(lambda tx: tx.truncate(["t_full", "t_uidx"]))
    one(lambda tx: tx.truncate(["t_part_1", "t_part_2"]))
    one(lambda tx: tx.truncate("s1.t_schema", restart_identity=True))
    one(lambda tx: tx.insert("t_full", [{"id": g, "v": f"refill {g}", "n": str(g),
                                         "ts": at("23:38:37.297639")}
                                        for g in range(1, 6)]))  # fmt: skip
    one(lambda tx: tx.insert("s1.t_schema", [{"id": g, "v": f"refill {g}",
                                              "ts": at("23:38:37.307736")}
                                             for g in range(1, 6)]))  # fmt: skip
    # 8a-8c
    one(lambda tx: tx.insert("t_pk", [{"id": g, "b": g, "t": "L" * 100 + str(g),
                                       "ts": at("23:38:42.422625")}
                                      for g in range(10000, 15000)]))  # fmt: skip

    def savepoint(tx: Any) -> None:
        tx.insert("t_pk", [{"id": g, "t": "S" * 100} for g in range(15000, 17000)])
        tx.savepoint("sp1")
        tx.insert("t_pk", [{"id": g, "t": "R" * 100} for g in range(17000, 19000)])
        tx.rollback_to("sp1")
        tx.insert("t_pk", [{"id": g, "t": "after sp"} for g in range(19000, 19010)])

    one(savepoint)
    tx = lake.begin()
    tx.insert("t_pk", [{"id": g, "t": "X" * 100} for g in range(30000, 33000)])
    tx.abort()
    one(lambda tx: tx.insert("t_pk", [{"id": 33000, "t": "after rollback"}]))
    # 9 two-phase
    tx = lake.begin()
    tx.insert("t_pk", [{"id": 20001, "t": "2pc commit"}])
    tx.update("t_full", {"v": "2pc"}, "id = 1")
    tx.prepare("gid_commit")
    lake.commit_prepared("gid_commit")
    tx = lake.begin()
    tx.insert("t_pk", [{"id": 20002, "t": "2pc rollback"}])
    tx.prepare("gid_rollback")
    lake.rollback_prepared("gid_rollback")
    # 9b
    tx = lake.begin()
    tx.insert("t_pk", [{"id": g, "t": "P" * 100} for g in range(40000, 43000)])
    tx.prepare("gid_big")
    lake.commit_prepared("gid_big")

    # 10
    def late(tx: Any) -> None:
        tx.create_table("t_late", [("id", "integer", True), ("v", "text")], primary_key=["id"])
        tx.insert("t_late", [{"id": g, "v": f"late {g}"} for g in range(1, 8)])
        tx.alter_publication("pub_main", add_tables=["t_late"])

    one(late)
    # 10c
    one(lambda tx: tx.insert("t_late", [{"id": 100, "v": "after refresh"}]))


def normalise(msgs: list[Any]) -> list[tuple[Any, ...]]:
    """Messages without LSNs, xids, times and OIDs (relations by name)."""
    names: dict[int, str] = {}
    out: list[tuple[Any, ...]] = []

    def tup(t: TupleData | None) -> tuple[bytes, tuple[Any, ...]] | None:
        return None if t is None else (t.kinds, t.values)

    for m in msgs:
        if isinstance(m, Relation):
            names[m.relid] = m.name
            out.append(("R", m.namespace, m.name, m.replica_identity, tuple(rel_cols(m))))
        elif isinstance(m, Insert):
            out.append(("I", names[m.relid], tup(m.new)))
        elif isinstance(m, Update):
            out.append(("U", names[m.relid], tup(m.key), tup(m.old), tup(m.new)))
        elif isinstance(m, Delete):
            out.append(("D", names[m.relid], tup(m.key), tup(m.old)))
        elif isinstance(m, Truncate):
            out.append(("T", tuple(names[r] for r in m.relids), m.options))
        elif isinstance(m, LogicalMessage):
            out.append(("M", m.flags, m.prefix, m.content))
        elif isinstance(m, BeginPrepare | Prepare | CommitPrepared | RollbackPrepared):
            out.append((type(m).TYPE.decode(), m.gid))
        else:
            out.append((type(m).TYPE.decode(),))
    return out


def unchanged_toast_as_ours(theirs: list[tuple[Any, ...]], ours: list[tuple[Any, ...]]) -> None:
    """PostgreSQL sends 'u' for an unchanged TOASTed column; the lake has no TOAST and
    sends the value. Accept our value where the capture has 'u'."""
    for i, (t, o) in enumerate(zip(theirs, ours, strict=False)):
        if t[0] == "U" and o[0] == "U" and t[4] and UNCHANGED in t[4][1]:
            kinds_, values = t[4]
            fixed_k = bytes(
                o[4][0][j] if v is UNCHANGED else k
                for j, (k, v) in enumerate(zip(kinds_, values, strict=True))
            )
            fixed_v = tuple(o[4][1][j] if v is UNCHANGED else v for j, v in enumerate(values))
            theirs[i] = (*t[:4], (fixed_k, fixed_v))


def captured_stream(conn: int, first_xid: int, last_xid: int) -> list[Any]:
    """The conn's messages from the Begin (or BeginPrepare) of first_xid to the end of
    last_xid's transaction."""
    msgs = [decode_message(m.data, in_stream=m.in_stream)
            for m in load_connection(CAPTURES_DIR / f"conn_{conn:03d}.raw").messages]  # fmt: skip
    out: list[Any] = []
    xid = None
    for m in msgs:
        if isinstance(m, Begin | BeginPrepare | CommitPrepared | RollbackPrepared):
            xid = m.xid
        if xid is not None and first_xid <= xid <= last_xid:
            out.append(m)
    return out


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Lake, int, int]]:
    d = tmp_path_factory.mktemp("scenario")
    with Lake(d, LakeSettings(fsync=False, background=False)) as lk:
        scenario_schema(lk)
        start, csn = lk.log.insert_lsn, lk.frontier
        scenario_steps(lk)
        yield lk, start, csn


def replay(lake: Lake, start: int, csn: int, options: PgOutputOptions) -> list[Any]:
    plugin = PgOutput(options, lake.catalog_at, lake.changesets)
    out: list[Any] = []
    if not options.two_phase:
        for txn in committed_after(lake.log.read(start), start, csn):
            out += [decode_message(m) for m in plugin.transaction(txn)]
        return out
    rb = ReorderBuffer()
    prepared: dict[int, DecodedTxn] = {}
    for entry in lake.log.read(start):
        for ev in rb.feed(entry):
            if isinstance(ev, DecodedTxn) and ev.gid is not None:
                prepared[ev.xid] = ev
                out += [decode_message(m) for m in plugin.prepare(ev)]
            elif isinstance(ev, DecodedTxn):
                out += [decode_message(m) for m in plugin.transaction(ev)]
            elif isinstance(ev, Ended):
                txn = prepared.pop(ev.xid)
                f = plugin.commit_prepared if ev.committed else plugin.rollback_prepared
                out += [decode_message(m) for m in f(txn, ev)]
    return out


@needs_captures
@pytest.mark.parametrize(
    ("conn", "extra"),
    [(2, {}), (33, {"binary": "true"}), (31, {"two_phase": "on"})],
    ids=["sub_default-text", "sub_bin-binary", "sub_2pc-two_phase"],
)
def test_replay_matches_postgresql_15(scenario, conn, extra):
    lake, start, csn = scenario
    options = opts("pub_main", "pub_filter", **extra)
    ours = normalise(replay(lake, start, csn, options))
    theirs = normalise(captured_stream(conn, 767, 812))
    unchanged_toast_as_ours(theirs, ours)
    assert len(ours) == len(theirs) > 10_000
    for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        assert o == t, f"message {i}"
