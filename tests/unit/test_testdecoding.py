"""test_decoding's lines of lake transactions (no server): the same lines whether a
statement's rows sit in the log or in a changeset's Parquet files, pg_decode_startup's
option errors, and print_literal's quoting. (Compared with PostgreSQL 15's own plugin
through pg_recvlogical in tests/integration/test_test_decoding_vs_postgres.py.)"""

from __future__ import annotations

import pytest

from decoding.errors import PgError
from decoding.reorder import committed_after
from decoding.testdecoding import TestDecoding, TestDecodingOptions, _literal
from tests.lakeutil import MakeLake
from walsender_proxy.lake import LakeSettings


@pytest.mark.parametrize("changeset", [False, True], ids=["inline", "changeset"])
def test_lines_of_a_transaction(make_lake: MakeLake, changeset: bool) -> None:
    lake = make_lake(LakeSettings(fsync=False, background=False, changeset_bytes=1 if changeset else 1 << 30), path="lake")
    with lake.begin() as tx:
        tx.create_table("t", [("id", "integer", True), ("v", "text")], primary_key=["id"])
    start, csn = lake.log.insert_lsn, lake.frontier
    with lake.begin() as tx:
        tx.insert("t", [{"id": i, "v": f"v{i}" if i % 2 else None} for i in range(1, 201)])
    with lake.begin() as tx:
        tx.update("t", {"id": 1000}, "id = 1")
        tx.delete("t", "id = 2")
    plugin = TestDecoding(TestDecodingOptions.parse([("include-xids", "0")]), lake.catalog_at, lake.changesets)
    lines = [line.decode() for txn in committed_after(lake.log.read(start), start, csn) for line in plugin.transaction(txn)]
    assert lines[:3] == ["BEGIN", "table public.t: INSERT: id[integer]:1 v[text]:'v1'", "table public.t: INSERT: id[integer]:2 v[text]:null"]
    assert lines[200:] == [
        "table public.t: INSERT: id[integer]:200 v[text]:null",
        "COMMIT",
        "BEGIN",
        "table public.t: UPDATE: old-key: id[integer]:1 new-tuple: id[integer]:1000 v[text]:'v1'",
        "table public.t: DELETE: id[integer]:2",
        "COMMIT",
    ]


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ([("include-xids", "maybe")], ("22023", 'could not parse value "maybe" for parameter "include-xids"')),
        ([("nosuch", None)], ("22023", 'option "nosuch" = "(null)" is unknown')),
        ([("nosuch", "1")], ("22023", 'option "nosuch" = "1" is unknown')),
        ([("stream-changes", "perhaps")], ("22023", 'could not parse value "perhaps" for parameter "stream-changes"')),
    ],
)
def test_startup_options_are_checked_as_pg_decode_startup_checks_them(options: list[tuple[str, str | None]], error: tuple[str, str]) -> None:
    with pytest.raises(PgError) as e:
        TestDecodingOptions.parse(options)
    assert (e.value.sqlstate, e.value.message) == error


def test_options_read_as_parse_bool_reads_them() -> None:
    o = TestDecodingOptions.parse([("include-xids", "of"), ("skip-empty-xacts", None), ("include-timestamp", "Y"), ("stream-changes", "1")])
    assert (o.include_xids, o.skip_empty_xacts, o.include_timestamp, o.stream_changes) == (False, True, True, True)


def test_print_literal() -> None:
    assert _literal(23, b"-5") == b"-5"
    assert _literal(701, b"NaN") == b"NaN"
    assert _literal(16, b"t") == b"true" and _literal(16, b"f") == b"false"
    assert _literal(25, b"it's \\") == b"'it''s \\'"
    assert _literal(16390, b"5") == b"'5'"  # (a domain over int4 is quoted: its OID is not int4's)
