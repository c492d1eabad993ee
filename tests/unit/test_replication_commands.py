"""Tests for the replication command grammar (``walsender_proxy.replication.commands``).

Expected errors (SQLSTATE and wording) were checked against a real PostgreSQL 15.18 over a
``replication=database`` connection; the cases marked PG17/PG18 follow that version's
``walsender.c``. Commands from the relay captures of a real PostgreSQL subscriber, recvlogical
and psql session are parsed verbatim: every replication command in them must parse, and
every SQL statement in them must be handed back as SQL (None).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from decoding.errors import PgError
from walsender_proxy.replication.commands import (
    REPLICATION_COMMAND_KEYWORDS,
    AlterReplicationSlot,
    BaseBackup,
    CreateReplicationSlot,
    DropReplicationSlot,
    IdentifySystem,
    ReadReplicationSlot,
    Show,
    StartReplication,
    TimelineHistory,
    UploadManifest,
    parse_command,
)

PG15_DIR = Path("/work/shared/protocol/pg15")
DISTINCT_QUERIES = PG15_DIR / "distinct_queries.md"
PUB_LOG = PG15_DIR / "walsender_commands_from_pub_log.txt"

PUBS = '"pub_main","pub_filter"'

_TYPE_BY_KEYWORD = {
    "IDENTIFY_SYSTEM": IdentifySystem,
    "SHOW": Show,
    "TIMELINE_HISTORY": TimelineHistory,
    "READ_REPLICATION_SLOT": ReadReplicationSlot,
    "CREATE_REPLICATION_SLOT": CreateReplicationSlot,
    "DROP_REPLICATION_SLOT": DropReplicationSlot,
    "ALTER_REPLICATION_SLOT": AlterReplicationSlot,
    "START_REPLICATION": StartReplication,
    "BASE_BACKUP": BaseBackup,
    "UPLOAD_MANIFEST": UploadManifest,
}


def _first_word(text: str) -> str:
    """Independent of the lexer: the leading run of word characters."""
    m = re.match(r"\s*(\w+)", text)
    return m.group(1) if m else ""


def _assert_classified(text: str) -> None:
    """A captured statement parses iff it starts with an upper-case replication keyword."""
    word = _first_word(text)
    result = parse_command(text)
    if word in REPLICATION_COMMAND_KEYWORDS:
        assert isinstance(result, _TYPE_BY_KEYWORD[word]), text
        assert result.tag == word
    else:
        assert result is None, text


def _pg_error(text: str) -> PgError:
    with pytest.raises(PgError) as info:
        parse_command(text)
    return info.value


# --------------------------------------------------------------------------- captures


def _distinct_query_texts() -> list[str]:
    if not DISTINCT_QUERIES.exists():
        pytest.skip(f"{DISTINCT_QUERIES} not available")
    text = DISTINCT_QUERIES.read_text()
    # Each section: "normalised: `...`", a blank line, then the verbatim text in a fence.
    return re.findall(r"^normalised: [^\n]*\n\n```\n(.*?)\n```", text, flags=re.M | re.S)


def _pub_log_statements() -> list[str]:
    """Statements of the publisher log: a statement starts at a two-space indent, deeper
    indented lines continue it. Some SQL continuation lines are indented by exactly two
    spaces too; they come out as separate fragments, which are SQL all the same."""
    if not PUB_LOG.exists():
        pytest.skip(f"{PUB_LOG} not available")
    statements: list[list[str]] = []
    for line in PUB_LOG.read_text().splitlines():
        if line.startswith("==="):
            continue
        if line.startswith("   ") and statements:
            statements[-1].append(line[2:])
        elif line.startswith("  "):
            statements.append([line[2:]])
    return ["\n".join(s) for s in statements]


def _raw_capture_queries() -> list[str]:
    """Every simple-query text a client sent in the byte-exact relay captures."""
    from tests.unit.wire_fixtures import all_captures, capture_paths

    if not capture_paths():
        pytest.skip("relay captures not available")
    queries = []
    for capture in all_captures():
        for message in capture.frontend_messages:
            if message.type_code == b"Q":
                queries.append(message.payload.rstrip(b"\0").decode())
    return queries


def test_distinct_queries_all_classified() -> None:
    texts = _distinct_query_texts()
    assert len(texts) > 40
    replication = [t for t in texts if _first_word(t) in REPLICATION_COMMAND_KEYWORDS]
    assert len(replication) >= 25
    for text in texts:
        _assert_classified(text)


def test_pub_log_all_classified() -> None:
    statements = _pub_log_statements()
    kinds = {_first_word(s) for s in statements}
    assert {"CREATE_REPLICATION_SLOT", "START_REPLICATION", "DROP_REPLICATION_SLOT"} <= kinds
    assert {"IDENTIFY_SYSTEM", "SHOW", "SELECT", "COPY", "BEGIN", "COMMIT"} <= kinds
    parsed = 0
    for statement in statements:
        _assert_classified(statement)
        parsed += _first_word(statement) in REPLICATION_COMMAND_KEYWORDS
    assert parsed > 150


def test_raw_capture_queries_all_classified() -> None:
    queries = _raw_capture_queries()
    assert len(queries) > 300
    for query in queries:
        _assert_classified(query)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("IDENTIFY_SYSTEM", IdentifySystem()),
        ("SHOW data_directory_mode", Show("data_directory_mode")),
        (
            """CREATE_REPLICATION_SLOT "sub_default" LOGICAL pgoutput (SNAPSHOT 'nothing')""",
            CreateReplicationSlot(
                "sub_default",
                False,
                "logical",
                "pgoutput",
                snapshot="nothing",
                options=(("snapshot", "nothing"),),
            ),
        ),
        (
            """CREATE_REPLICATION_SLOT "pg_16758_sync_16421_7710772185845866585" LOGICAL pgoutput (SNAPSHOT 'use')""",
            CreateReplicationSlot(
                "pg_16758_sync_16421_7710772185845866585",
                False,
                "logical",
                "pgoutput",
                snapshot="use",
                options=(("snapshot", "use"),),
            ),
        ),
        (
            """CREATE_REPLICATION_SLOT "rl_td" LOGICAL "test_decoding" ( SNAPSHOT 'nothing')""",
            CreateReplicationSlot(
                "rl_td",
                False,
                "logical",
                "test_decoding",
                snapshot="nothing",
                options=(("snapshot", "nothing"),),
            ),
        ),
        (
            """CREATE_REPLICATION_SLOT "rl_2pc" LOGICAL "test_decoding" ( TWO_PHASE,  SNAPSHOT 'nothing')""",
            CreateReplicationSlot(
                "rl_2pc",
                False,
                "logical",
                "test_decoding",
                snapshot="nothing",
                two_phase=True,
                options=(("two_phase", None), ("snapshot", "nothing")),
            ),
        ),
        (
            f"""START_REPLICATION SLOT "sub_default" LOGICAL 0/0 (proto_version '3', publication_names '{PUBS}')""",
            StartReplication(
                "sub_default",
                "logical",
                0,
                options=(("proto_version", "3"), ("publication_names", PUBS)),
            ),
        ),
        (
            f"""START_REPLICATION SLOT "pg_16758_sync_16421_7710772185845866585" LOGICAL 0/19A6DD0 (proto_version '3', publication_names '{PUBS}')""",
            StartReplication(
                "pg_16758_sync_16421_7710772185845866585",
                "logical",
                0x19A6DD0,
                options=(("proto_version", "3"), ("publication_names", PUBS)),
            ),
        ),
        (
            f"""START_REPLICATION SLOT "sub_combo" LOGICAL 0/0 (proto_version '3', streaming 'on', two_phase 'on', publication_names '{PUBS}', binary 'true')""",
            StartReplication(
                "sub_combo",
                "logical",
                0,
                options=(
                    ("proto_version", "3"),
                    ("streaming", "on"),
                    ("two_phase", "on"),
                    ("publication_names", PUBS),
                    ("binary", "true"),
                ),
            ),
        ),
        (
            """START_REPLICATION SLOT "rl_td" LOGICAL 0/0 ("include-xids" '0', "include-timestamp" '1')""",
            StartReplication(
                "rl_td",
                "logical",
                0,
                options=(("include-xids", "0"), ("include-timestamp", "1")),
            ),
        ),
        (
            """START_REPLICATION SLOT "rl_pgo" LOGICAL 0/0 ("proto_version" '1', "publication_names" 'pub_main', "messages" 'true')""",
            StartReplication(
                "rl_pgo",
                "logical",
                0,
                options=(
                    ("proto_version", "1"),
                    ("publication_names", "pub_main"),
                    ("messages", "true"),
                ),
            ),
        ),
        (
            """START_REPLICATION SLOT "rl_2pc" LOGICAL 0/1D75FF8""",
            StartReplication("rl_2pc", "logical", 0x1D75FF8),
        ),
        (
            "DROP_REPLICATION_SLOT pg_16758_sync_16421_7710772185845866585 WAIT",
            DropReplicationSlot("pg_16758_sync_16421_7710772185845866585", wait=True),
        ),
        ('DROP_REPLICATION_SLOT "rl_td"', DropReplicationSlot("rl_td", wait=False)),
        ("DROP_REPLICATION_SLOT sub_default WAIT", DropReplicationSlot("sub_default", wait=True)),
    ],
)
def test_captured_commands_parse_to(text: str, expected: object) -> None:
    assert text in _distinct_query_texts()
    assert parse_command(text) == expected


# --------------------------------------------------------------------------- SQL or not


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\t",
        ";",
        "SELECT 1",
        "select pg_catalog.set_config('search_path', '', false);",
        "BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ",
        "COPY public.t (id) TO STDOUT",
        "COMMIT",
        # keywords are case-sensitive: these are SQL in PostgreSQL (and SQL errors there)
        "identify_system",
        "show work_mem",
        "Show work_mem",
        "start_replication SLOT x LOGICAL 0/0",
        "Create_Replication_Slot x LOGICAL pgoutput",
        # the longest match makes these identifiers, not keywords
        "SHOWX work_mem",
        "IDENTIFY_SYSTEM2",
        "SHOW$ a",
        "SLOT x",
        "TIMELINE 1",
        "LOGICAL",
        "WAIT",
        # other first tokens
        "1/0",
        "0/0 IDENTIFY_SYSTEM",
        "42",
        "(IDENTIFY_SYSTEM)",
        '"IDENTIFY_SYSTEM"',
        "'x' IDENTIFY_SYSTEM",
        "-- IDENTIFY_SYSTEM",
        "/* c */ IDENTIFY_SYSTEM",
        "\0IDENTIFY_SYSTEM",
    ],
)
def test_sql_is_not_a_replication_command(text: str) -> None:
    assert parse_command(text) is None


@pytest.mark.parametrize("first", ["'abc", '"abc', "'it''s", '"a'])
def test_unterminated_quote_as_first_token_is_an_error(first: str) -> None:
    # PostgreSQL lexes the first token with the replication scanner, which reports this
    # before the text ever reaches the SQL parser.
    error = _pg_error(first)
    assert (error.sqlstate, error.message) == ("42601", "unterminated quoted string")


# --------------------------------------------------------------------------- each command


def test_identify_system_and_semicolons() -> None:
    assert parse_command("IDENTIFY_SYSTEM") == IdentifySystem()
    assert parse_command("IDENTIFY_SYSTEM;") == IdentifySystem()
    assert parse_command("  IDENTIFY_SYSTEM  ;  \n") == IdentifySystem()
    assert parse_command("\tIDENTIFY_SYSTEM\r\n\f\v") == IdentifySystem()
    assert parse_command("IDENTIFY_SYSTEM\0garbage that C would never see") == IdentifySystem()


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("SHOW work_mem", "work_mem"),
        ("SHOW WORK_MEM", "work_mem"),
        ('SHOW "WORK_MEM"', "WORK_MEM"),
        ('SHOW "work mem"', "work mem"),
        ("SHOW all", "all"),
        ("SHOW a.b", "a.b"),
        ('SHOW My."Custom" . Var;', "my.Custom.var"),
        ("SHOW x$1", "x$1"),
        ("SHOW _x9", "_x9"),
        ("SHOW süß", "süß"),
        ("SHOW ÄB", "Äb"),  # only ASCII letters are down-cased
    ],
)
def test_show(text: str, name: str) -> None:
    assert parse_command(text) == Show(name)


def test_timeline_history() -> None:
    assert parse_command("TIMELINE_HISTORY 1") == TimelineHistory(1)
    assert parse_command("TIMELINE_HISTORY 007;") == TimelineHistory(7)
    assert parse_command("TIMELINE_HISTORY 4294967295") == TimelineHistory(4294967295)
    # strtoul into a uint32: 2**32 + 5 wraps to 5, as in PostgreSQL
    assert parse_command("TIMELINE_HISTORY 4294967301") == TimelineHistory(5)


def test_read_replication_slot() -> None:
    assert parse_command("READ_REPLICATION_SLOT s1") == ReadReplicationSlot("s1")
    assert parse_command('READ_REPLICATION_SLOT "S1"') == ReadReplicationSlot("S1")
    # the grammar takes a var_name here, so PostgreSQL accepts (and finds no) "x.y"
    assert parse_command("READ_REPLICATION_SLOT x.y") == ReadReplicationSlot("x.y")


def test_upload_manifest() -> None:
    assert parse_command("UPLOAD_MANIFEST") == UploadManifest()
    assert parse_command("UPLOAD_MANIFEST;") == UploadManifest()


@pytest.mark.parametrize(
    ("text", "options"),
    [
        ("BASE_BACKUP", ()),
        ("BASE_BACKUP;", ()),
        (
            "BASE_BACKUP (LABEL 'pg_basebackup base backup', PROGRESS, CHECKPOINT 'fast', "
            "WAIT 0, MANIFEST 'yes', TARGET 'client', MAX_RATE 32768)",
            (
                ("label", "pg_basebackup base backup"),
                ("progress", None),
                ("checkpoint", "fast"),
                ("wait", 0),
                ("manifest", "yes"),
                ("target", "client"),
                ("max_rate", 32768),
            ),
        ),
        ("BASE_BACKUP (compression gzip)", (("compression", "gzip"),)),
        ("BASE_BACKUP (INCREMENTAL)", (("incremental", None),)),
        # PostgreSQL 14 syntax, accepted so that it can be refused with 0A000 too
        (
            "BASE_BACKUP LABEL 'x' PROGRESS FAST WAL NOWAIT MAX_RATE 100 TABLESPACE_MAP "
            "NOVERIFY_CHECKSUMS MANIFEST 'yes' MANIFEST_CHECKSUMS 'SHA256'",
            (
                ("label", "x"),
                ("progress", True),
                ("fast", True),
                ("wal", True),
                ("nowait", True),
                ("max_rate", 100),
                ("tablespace_map", True),
                ("noverify_checksums", True),
                ("manifest", "yes"),
                ("manifest_checksums", "SHA256"),
            ),
        ),
    ],
)
def test_base_backup(text: str, options: tuple[tuple[str, object], ...]) -> None:
    assert parse_command(text) == BaseBackup(options)


@pytest.mark.parametrize(
    "text",
    [
        "BASE_BACKUP ()",
        "BASE_BACKUP (LABEL 'x',)",
        "BASE_BACKUP (LABEL 'x'",
        "BASE_BACKUP LABEL",
        "BASE_BACKUP LABEL x",
        "BASE_BACKUP MAX_RATE 'x'",
        "BASE_BACKUP bogus",
        "BASE_BACKUP (LABEL 'x') PROGRESS",
    ],
)
def test_base_backup_syntax_errors(text: str) -> None:
    error = _pg_error(text)
    assert (error.sqlstate, error.message) == ("42601", "syntax error")


def test_drop_replication_slot() -> None:
    assert parse_command("DROP_REPLICATION_SLOT s") == DropReplicationSlot("s", False)
    assert parse_command("DROP_REPLICATION_SLOT S WAIT;") == DropReplicationSlot("s", True)
    assert parse_command('DROP_REPLICATION_SLOT "WAIT"') == DropReplicationSlot("WAIT", False)
    assert parse_command("DROP_REPLICATION_SLOT wait") == DropReplicationSlot("wait", False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("START_REPLICATION 0/0", StartReplication(None, "physical", 0)),
        ("START_REPLICATION PHYSICAL 1/2", StartReplication(None, "physical", (1 << 32) | 2)),
        (
            "START_REPLICATION SLOT s PHYSICAL FFFFFFFF/FFFFFFFF TIMELINE 3",
            StartReplication("s", "physical", 2**64 - 1, 3),
        ),
        ("START_REPLICATION SLOT s 0/1", StartReplication("s", "physical", 1)),
        ("START_REPLICATION abc/DEF", StartReplication(None, "physical", (0xABC << 32) | 0xDEF)),
        (
            "START_REPLICATION 0000000001/00000000002",
            StartReplication(None, "physical", (1 << 32) | 2),
        ),
        ("START_REPLICATION 0/0 TIMELINE 1;", StartReplication(None, "physical", 0, 1)),
        ('START_REPLICATION SLOT "S" LOGICAL 0/0', StartReplication("S", "logical", 0)),
        (
            "START_REPLICATION SLOT s LOGICAL 0/0 (a, b 'x', \"C\" 'it''s', d '')",
            StartReplication(
                "s",
                "logical",
                0,
                options=(("a", None), ("b", "x"), ("C", "it's"), ("d", "")),
            ),
        ),
        (
            # duplicates and order are kept: judging them is the output plugin's business
            "START_REPLICATION SLOT s LOGICAL 0/0 (x '1', y '2', x '3')",
            StartReplication("s", "logical", 0, options=(("x", "1"), ("y", "2"), ("x", "3"))),
        ),
        (
            # plugin option values are raw: no case folding, no escapes but ''
            "START_REPLICATION SLOT s LOGICAL 0/0 (Publication_Names 'A\\n\"B\"')",
            StartReplication("s", "logical", 0, options=(("publication_names", 'A\\n"B"'),)),
        ),
        (
            "START_REPLICATION\nSLOT\ts\nLOGICAL\n0/0\n(\nx\n'multi\nline'\n)\n;",
            StartReplication("s", "logical", 0, options=(("x", "multi\nline"),)),
        ),
    ],
)
def test_start_replication(text: str, expected: StartReplication) -> None:
    assert parse_command(text) == expected


def test_alter_replication_slot() -> None:  # PG17 (failover), PG18 (two_phase)
    cmd = parse_command("ALTER_REPLICATION_SLOT s (FAILOVER)")
    assert cmd == AlterReplicationSlot("s", {"failover": True})
    assert isinstance(cmd, AlterReplicationSlot)
    assert (cmd.failover, cmd.two_phase) == (True, None)
    cmd = parse_command("ALTER_REPLICATION_SLOT \"S\" ( failover false, TWO_PHASE 'on' );")
    assert cmd == AlterReplicationSlot("S", {"failover": False, "two_phase": True})
    assert parse_command("ALTER_REPLICATION_SLOT s (two_phase 0)") == AlterReplicationSlot(
        "s", {"two_phase": False}
    )


# --------------------------------------------------------------------------- CREATE options


@pytest.mark.parametrize(
    ("legacy", "generic", "fields"),
    [
        ("", "", {"snapshot": "export"}),
        ("EXPORT_SNAPSHOT", "(SNAPSHOT 'export')", {"snapshot": "export"}),
        ("NOEXPORT_SNAPSHOT", "(SNAPSHOT 'nothing')", {"snapshot": "nothing"}),
        ("USE_SNAPSHOT", "(SNAPSHOT 'use')", {"snapshot": "use"}),
        ("TWO_PHASE", "(TWO_PHASE)", {"two_phase": True}),
        (
            "TWO_PHASE NOEXPORT_SNAPSHOT",
            "(two_phase true, snapshot nothing)",
            {"two_phase": True, "snapshot": "nothing"},
        ),
        (
            "USE_SNAPSHOT TWO_PHASE",
            "(snapshot use, two_phase 1)",
            {"snapshot": "use", "two_phase": True},
        ),
    ],
)
def test_create_logical_both_syntaxes(legacy: str, generic: str, fields: dict[str, object]) -> None:
    expected = {
        "slot_name": "s",
        "temporary": False,
        "kind": "logical",
        "plugin": "pgoutput",
        "snapshot": "export",
        "two_phase": False,
        "reserve_wal": False,
        "failover": False,
        **fields,
    }
    for text in (
        f"CREATE_REPLICATION_SLOT s LOGICAL pgoutput {legacy}",
        f"CREATE_REPLICATION_SLOT s LOGICAL pgoutput {generic}",
    ):
        cmd = parse_command(text)
        assert isinstance(cmd, CreateReplicationSlot), text
        got = {k: getattr(cmd, k) for k in expected}
        assert got == expected, text


def test_create_physical_both_syntaxes() -> None:
    for text in (
        "CREATE_REPLICATION_SLOT p PHYSICAL RESERVE_WAL",
        "CREATE_REPLICATION_SLOT p PHYSICAL (RESERVE_WAL)",
        "CREATE_REPLICATION_SLOT p PHYSICAL (reserve_wal 'on')",
    ):
        cmd = parse_command(text)
        assert isinstance(cmd, CreateReplicationSlot)
        assert (cmd.kind, cmd.plugin, cmd.reserve_wal) == ("physical", None, True), text
    cmd = parse_command("CREATE_REPLICATION_SLOT p TEMPORARY PHYSICAL")
    assert isinstance(cmd, CreateReplicationSlot)
    assert (cmd.temporary, cmd.reserve_wal) == (True, False)
    cmd = parse_command("CREATE_REPLICATION_SLOT p PHYSICAL (reserve_wal false)")
    assert isinstance(cmd, CreateReplicationSlot)
    assert cmd.reserve_wal is False


def test_create_logical_details() -> None:
    cmd = parse_command(
        'CREATE_REPLICATION_SLOT "Mixed" TEMPORARY LOGICAL "Test_Decoding" '
        "(SNAPSHOT 'use', TWO_PHASE off, FAILOVER);"
    )
    assert cmd == CreateReplicationSlot(
        "Mixed",
        True,
        "logical",
        "Test_Decoding",
        snapshot="use",
        two_phase=False,
        failover=True,
        options=(("snapshot", "use"), ("two_phase", "off"), ("failover", None)),
    )
    # generic option values: identifiers (folded), strings (raw), numbers
    cmd = parse_command("CREATE_REPLICATION_SLOT s LOGICAL p (two_phase TRUE, failover 'False')")
    assert isinstance(cmd, CreateReplicationSlot)
    assert (cmd.two_phase, cmd.failover) == (True, False)
    assert cmd.options == (("two_phase", "true"), ("failover", "False"))
    # keywords are fine as option names (ident_or_keyword) and fold to lower case
    cmd = parse_command("CREATE_REPLICATION_SLOT s LOGICAL p (TWO_PHASE 0)")
    assert isinstance(cmd, CreateReplicationSlot)
    assert cmd.options == (("two_phase", 0),)


_BOOL_SPELLINGS = {
    "": True,
    " true": True,
    " TRUE": True,
    " 'True'": True,
    " on": True,
    " 'ON'": True,
    " 1": True,
    " false": False,
    " 'FALSE'": False,
    " off": False,
    " 'Off'": False,
    " 0": False,
    ' "true"': True,
}


@pytest.mark.parametrize(("spelling", "value"), list(_BOOL_SPELLINGS.items()))
def test_boolean_option_spellings(spelling: str, value: bool) -> None:
    cmd = parse_command(f"CREATE_REPLICATION_SLOT s LOGICAL p (two_phase{spelling})")
    assert isinstance(cmd, CreateReplicationSlot)
    assert cmd.two_phase is value


# --------------------------------------------------------------------------- errors

_SYNTAX = ("42601", "syntax error")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        # grammar (verified against PostgreSQL 15)
        ("IDENTIFY_SYSTEM x", _SYNTAX),
        ("IDENTIFY_SYSTEM;;", _SYNTAX),
        ("IDENTIFY_SYSTEM @", _SYNTAX),
        ("IDENTIFY_SYSTEM x 'unterminated", _SYNTAX),  # lexing stops at the first bad token
        ("SHOW", _SYNTAX),
        ("SHOW a.", _SYNTAX),
        ("SHOW TIME ZONE", _SYNTAX),
        ("SHOW work_mem work_mem", _SYNTAX),
        ("SHOW 'work_mem'", _SYNTAX),
        ("TIMELINE_HISTORY", _SYNTAX),
        ("TIMELINE_HISTORY x", _SYNTAX),
        ("TIMELINE_HISTORY -1", _SYNTAX),
        ("READ_REPLICATION_SLOT", _SYNTAX),
        ("UPLOAD_MANIFEST x", _SYNTAX),
        ("DROP_REPLICATION_SLOT", _SYNTAX),
        ("DROP_REPLICATION_SLOT x NOWAIT", _SYNTAX),
        ("DROP_REPLICATION_SLOT x wait", _SYNTAX),  # keywords are case-sensitive
        ("DROP_REPLICATION_SLOT x.y", _SYNTAX),
        ("DROP_REPLICATION_SLOT 'x'", _SYNTAX),
        ("CREATE_REPLICATION_SLOT x.y LOGICAL pgoutput", _SYNTAX),
        ('CREATE_REPLICATION_SLOT "a""b" LOGICAL pgoutput', _SYNTAX),  # "" is no escape here
        ("CREATE_REPLICATION_SLOT x LOGICAL", _SYNTAX),
        ("CREATE_REPLICATION_SLOT x logical pgoutput", _SYNTAX),
        ("CREATE_REPLICATION_SLOT TEMPORARY LOGICAL pgoutput", _SYNTAX),
        ("CREATE_REPLICATION_SLOT x LOGICAL TEMPORARY pgoutput", _SYNTAX),
        ("CREATE_REPLICATION_SLOT x LOGICAL pgoutput ()", _SYNTAX),
        ("CREATE_REPLICATION_SLOT x LOGICAL pgoutput (two_phase on,)", _SYNTAX),
        ("CREATE_REPLICATION_SLOT x LOGICAL pgoutput (snapshot 0/0)", _SYNTAX),
        ("CREATE_REPLICATION_SLOT x LOGICAL pgoutput (SNAPSHOT USE_SNAPSHOT)", _SYNTAX),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (SNAPSHOT 'nothing') EXPORT_SNAPSHOT",
            _SYNTAX,
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput EXPORT_SNAPSHOT (SNAPSHOT 'nothing')",
            _SYNTAX,
        ),
        ("CREATE_REPLICATION_SLOT x LOGICAL pgoutput export_snapshot", _SYNTAX),
        ("CREATE_REPLICATION_SLOT x LOGICAL pgoutput (SNAPSHOT 'use'", _SYNTAX),
        ("CREATE_REPLICATION_SLOT x PHYSICAL pgoutput", _SYNTAX),
        ("START_REPLICATION", _SYNTAX),
        ("START_REPLICATION LOGICAL 0/0", _SYNTAX),
        ("START_REPLICATION SLOT x LOGICAL", _SYNTAX),
        ("START_REPLICATION SLOT x LOGICAL 0/0 TIMELINE 1", _SYNTAX),
        ("START_REPLICATION SLOT x LOGICAL 0/0 ()", _SYNTAX),
        ("START_REPLICATION SLOT x LOGICAL 0/0 (a 'b',)", _SYNTAX),
        ("START_REPLICATION SLOT x LOGICAL 0/0 (a 5)", _SYNTAX),
        ("START_REPLICATION SLOT x LOGICAL 0/0 (TWO_PHASE 'on')", _SYNTAX),
        ("START_REPLICATION SLOT x LOGICAL 0/0 (proto_version '1' publication_names 'p')", _SYNTAX),
        ('START_REPLICATION SLOT x LOGICAL 0/0 ("a""b" \'x\')', _SYNTAX),
        ("START_REPLICATION SLOT x LOGICAL 0/0 (a 'b'", _SYNTAX),
        ("START_REPLICATION ABCDEF/G", _SYNTAX),
        ("START_REPLICATION 0 / 0", _SYNTAX),
        ("START_REPLICATION 0/0 TIMELINE", _SYNTAX),
        ("START_REPLICATION PHYSICAL SLOT x 0/0", _SYNTAX),
        ("ALTER_REPLICATION_SLOT x", _SYNTAX),
        ("ALTER_REPLICATION_SLOT x ()", _SYNTAX),
        ("ALTER_REPLICATION_SLOT x FAILOVER", _SYNTAX),
        ("ALTER_REPLICATION_SLOT (failover)", _SYNTAX),
        # scanner and grammar actions
        ("IDENTIFY_SYSTEM 'abc", ("42601", "unterminated quoted string")),
        ('IDENTIFY_SYSTEM "abc', ("42601", "unterminated quoted string")),
        ('SHOW "work_mem', ("42601", "unterminated quoted string")),
        ("START_REPLICATION SLOT x LOGICAL 0/0 (a 'it''s", ("42601", "unterminated quoted string")),
        ("TIMELINE_HISTORY 0", ("42601", "invalid timeline 0")),
        ("TIMELINE_HISTORY 4294967296", ("42601", "invalid timeline 0")),
        ("TIMELINE_HISTORY 0 'abc", ("42601", "invalid timeline 0")),  # raised before lexing on
        ("START_REPLICATION 0/0 TIMELINE 0", ("42601", "invalid timeline 0")),
        ("START_REPLICATION 0/0 TIMELINE 0 'abc", ("42601", "invalid timeline 0")),
        # LSN halves beyond 32 bits (PostgreSQL would silently truncate; see module docstring)
        ("START_REPLICATION 123456789/0", ("42601", "invalid streaming start location")),
        ("START_REPLICATION 0/FFFFFFFFF", ("42601", "invalid streaming start location")),
        # parseCreateReplSlotOptions (verified against PostgreSQL 15)
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (SNAPSHOT 'x')",
            ("22023", 'unrecognized value for CREATE_REPLICATION_SLOT option "snapshot": "x"'),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (snapshot 'EXPORT')",
            ("22023", 'unrecognized value for CREATE_REPLICATION_SLOT option "snapshot": "EXPORT"'),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (snapshot 5)",
            ("22023", 'unrecognized value for CREATE_REPLICATION_SLOT option "snapshot": "5"'),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (snapshot 4294967295)",
            ("22023", 'unrecognized value for CREATE_REPLICATION_SLOT option "snapshot": "-1"'),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (snapshot)",
            ("42601", "snapshot requires a parameter"),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (SNAPSHOT 'use', SNAPSHOT 'use')",
            ("42601", "conflicting or redundant options"),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput EXPORT_SNAPSHOT USE_SNAPSHOT",
            ("42601", "conflicting or redundant options"),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput TWO_PHASE TWO_PHASE",
            ("42601", "conflicting or redundant options"),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (two_phase on, two_phase off)",
            ("42601", "conflicting or redundant options"),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (reserve_wal)",
            ("42601", "conflicting or redundant options"),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput RESERVE_WAL",
            ("42601", "conflicting or redundant options"),
        ),
        (
            "CREATE_REPLICATION_SLOT x PHYSICAL (reserve_wal false, reserve_wal true)",
            ("42601", "conflicting or redundant options"),
        ),
        (
            "CREATE_REPLICATION_SLOT x PHYSICAL (snapshot 'use')",
            ("42601", "conflicting or redundant options"),
        ),
        (
            "CREATE_REPLICATION_SLOT x PHYSICAL USE_SNAPSHOT",
            ("42601", "conflicting or redundant options"),
        ),
        (
            "CREATE_REPLICATION_SLOT x PHYSICAL (two_phase)",
            ("42601", "conflicting or redundant options"),
        ),
        (
            "CREATE_REPLICATION_SLOT x PHYSICAL RESERVE_WAL TWO_PHASE",
            ("42601", "conflicting or redundant options"),
        ),
        (
            "CREATE_REPLICATION_SLOT x PHYSICAL (failover)",
            ("42601", "conflicting or redundant options"),
        ),  # PG17
        (
            "CREATE_REPLICATION_SLOT x LOGICAL p (failover true, failover)",
            ("42601", "conflicting or redundant options"),
        ),  # PG17
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (two_phase 'maybe')",
            ("42601", "two_phase requires a Boolean value"),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (two_phase 2)",
            ("42601", "two_phase requires a Boolean value"),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (two_phase '')",
            ("42601", "two_phase requires a Boolean value"),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (two_phase 't')",
            ("42601", "two_phase requires a Boolean value"),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (two_phase '1')",
            ("42601", "two_phase requires a Boolean value"),
        ),
        (
            "CREATE_REPLICATION_SLOT x PHYSICAL (reserve_wal yes)",
            ("42601", "reserve_wal requires a Boolean value"),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL p (failover 'nope')",
            ("42601", "failover requires a Boolean value"),
        ),  # PG17
        ("CREATE_REPLICATION_SLOT x LOGICAL pgoutput (FOO)", ("XX000", "unrecognized option: foo")),
        (
            'CREATE_REPLICATION_SLOT x LOGICAL pgoutput ("Foo" 1)',
            ("XX000", "unrecognized option: Foo"),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (snapshot 'nothing', temporary)",
            ("XX000", "unrecognized option: temporary"),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (foo, SNAPSHOT 'x')",
            ("XX000", "unrecognized option: foo"),
        ),
        # ... options are checked in order: the bad snapshot value comes first here
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (SNAPSHOT 'x', foo)",
            ("22023", 'unrecognized value for CREATE_REPLICATION_SLOT option "snapshot": "x"'),
        ),
        (
            "CREATE_REPLICATION_SLOT x LOGICAL pgoutput (two_phase 'TRUE', snapshot 'x')",
            ("22023", 'unrecognized value for CREATE_REPLICATION_SLOT option "snapshot": "x"'),
        ),
        # a syntax error wins over option validation
        ("CREATE_REPLICATION_SLOT x LOGICAL pgoutput (SNAPSHOT 'x') junk", _SYNTAX),
        # ALTER_REPLICATION_SLOT (PG17/PG18 walsender.c)
        (
            "ALTER_REPLICATION_SLOT x (failover, failover false)",
            ("42601", "conflicting or redundant options"),
        ),
        (
            "ALTER_REPLICATION_SLOT x (two_phase, TWO_PHASE)",
            ("42601", "conflicting or redundant options"),
        ),
        ("ALTER_REPLICATION_SLOT x (failover 'x')", ("42601", "failover requires a Boolean value")),
        ("ALTER_REPLICATION_SLOT x (snapshot 'use')", ("XX000", "unrecognized option: snapshot")),
        ("ALTER_REPLICATION_SLOT x (failover, bogus)", ("XX000", "unrecognized option: bogus")),
    ],
)
def test_errors(text: str, error: tuple[str, str]) -> None:
    e = _pg_error(text)
    assert (e.sqlstate, e.message) == error


# --------------------------------------------------------------------------- lexical rules


def test_identifier_case_folding_and_quoting() -> None:
    cmd = parse_command("DROP_REPLICATION_SLOT MySlot")
    assert cmd == DropReplicationSlot("myslot")
    assert parse_command('DROP_REPLICATION_SLOT "MySlot"') == DropReplicationSlot("MySlot")
    assert parse_command('DROP_REPLICATION_SLOT "my slot; WAIT"') == DropReplicationSlot(
        "my slot; WAIT"
    )
    assert parse_command('DROP_REPLICATION_SLOT ""') == DropReplicationSlot("")
    assert parse_command("DROP_REPLICATION_SLOT _a$1") == DropReplicationSlot("_a$1")
    # quoted keywords are plain identifiers
    assert parse_command('DROP_REPLICATION_SLOT "SLOT" WAIT') == DropReplicationSlot("SLOT", True)


def test_string_literals() -> None:
    cmd = parse_command("START_REPLICATION SLOT s LOGICAL 0/0 (a '''', b 'x''''y', c '\\')")
    assert isinstance(cmd, StartReplication)
    assert cmd.options == (("a", "'"), ("b", "x''y"), ("c", "\\"))


def test_identifier_truncation_to_63_bytes() -> None:
    long_name = "a" * 70
    assert parse_command(f"DROP_REPLICATION_SLOT {long_name}") == DropReplicationSlot("a" * 63)
    assert parse_command(f'DROP_REPLICATION_SLOT "{"B" * 64}"') == DropReplicationSlot("B" * 63)
    # multi-byte characters are never cut in half: 31 x 2 bytes = 62, the 32nd would make 64
    assert parse_command(f"DROP_REPLICATION_SLOT {'é' * 40}") == DropReplicationSlot("é" * 31)
    assert parse_command(f"DROP_REPLICATION_SLOT x{'€' * 30}") == DropReplicationSlot(
        "x" + "€" * 20
    )


def test_longest_match_rules() -> None:
    # hex/hex is one token even when it starts with letters; keywords need exact spelling
    assert parse_command("START_REPLICATION SLOT s LOGICAL dead/beef") == StartReplication(
        "s", "logical", (0xDEAD << 32) | 0xBEEF
    )
    assert parse_command("DROP_REPLICATION_SLOT WAITING") == DropReplicationSlot("waiting")
    assert parse_command("DROP_REPLICATION_SLOT SLOTS WAIT") == DropReplicationSlot("slots", True)
    assert parse_command("SHOW TIMELINE_HISTORYX") == Show("timeline_historyx")
    e = _pg_error("SHOW TIMELINE_HISTORY")  # a keyword, not an IDENT, so not a var_name
    assert (e.sqlstate, e.message) == _SYNTAX
    e = _pg_error("TIMELINE_HISTORY 12ab")  # digits then an identifier
    assert (e.sqlstate, e.message) == _SYNTAX


def test_commands_are_hashable_values() -> None:
    cmd = parse_command(
        f"START_REPLICATION SLOT a LOGICAL 0/0 (proto_version '4', publication_names '{PUBS}')"
    )
    assert cmd == parse_command(
        f"START_REPLICATION SLOT a LOGICAL 0/0 (proto_version '4', publication_names '{PUBS}')"
    )
    assert hash(cmd) == hash(
        parse_command(
            f"START_REPLICATION   SLOT \"a\" LOGICAL 0/0 (proto_version '4', publication_names '{PUBS}');"
        )
    )
    with pytest.raises(AttributeError):
        cmd.slot_name = "b"  # type: ignore[misc,union-attr]


# --------------------------------------------------------------------------- properties

_ALLOWED_SQLSTATES = {"42601", "22023", "XX000"}

_VOCABULARY = [
    *sorted(REPLICATION_COMMAND_KEYWORDS),
    "SLOT", "LOGICAL", "PHYSICAL", "TIMELINE", "TEMPORARY", "WAIT", "RESERVE_WAL",
    "TWO_PHASE", "EXPORT_SNAPSHOT", "NOEXPORT_SNAPSHOT", "USE_SNAPSHOT",
    "(", ")", ",", ";", ".", "'", '"', "''", '""', "0/0", "1/FF", "ab/cd", "0", "1", "4294967296",
    "x", "X", "snapshot", "failover", "two_phase", "'use'", "'export'", "'nothing'", "'on'",
    "true", "'x''y'", '"Q"', "@", "-", "/", "\0", "é", "$",
]  # fmt: skip


def _check_never_crashes(text: str) -> None:
    try:
        parse_command(text)
    except PgError as e:
        assert e.sqlstate in _ALLOWED_SQLSTATES
        assert e.message


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(st.text())
@example("START_REPLICATION \ud800")
@example("SHOW \ud800" * 30)
def test_random_text_only_raises_pg_error(text: str) -> None:
    _check_never_crashes(text)


@settings(max_examples=1000)
@given(
    st.sampled_from(sorted(REPLICATION_COMMAND_KEYWORDS)),
    st.lists(st.sampled_from(_VOCABULARY), max_size=12),
    st.lists(st.sampled_from([" ", "", "\n", "\t"]), min_size=13, max_size=13),
)
def test_token_soup_only_raises_pg_error(first: str, tokens: list[str], gaps: list[str]) -> None:
    text = first + " " + "".join(g + t for g, t in zip(gaps, tokens, strict=False))
    _check_never_crashes(text)


@settings(max_examples=500)
@given(st.data())
def test_mutated_captured_commands_only_raise_pg_error(data: st.DataObject) -> None:
    base = data.draw(
        st.sampled_from(
            [
                f"START_REPLICATION SLOT \"sub\" LOGICAL 0/19A6DD0 (proto_version '3', publication_names '{PUBS}')",
                'CREATE_REPLICATION_SLOT "rl_2pc" LOGICAL "test_decoding" ( TWO_PHASE,  SNAPSHOT \'nothing\')',
                "DROP_REPLICATION_SLOT pg_16758_sync_16421_7710772185845866585 WAIT",
                "ALTER_REPLICATION_SLOT s (FAILOVER true, TWO_PHASE)",
                "START_REPLICATION SLOT s PHYSICAL 1/0 TIMELINE 2",
            ]
        )
    )
    pos = data.draw(st.integers(0, len(base)))
    cut = data.draw(st.integers(0, 5))
    insert = data.draw(st.text(alphabet="()'\",;./ 0aAxX_é\0", max_size=3))
    _check_never_crashes(base[:pos] + insert + base[pos + cut :])


_option_names = st.text(
    alphabet=st.characters(blacklist_characters='"\0', blacklist_categories=("Cs",)),
    min_size=1,
    max_size=63,
).filter(lambda s: len(s.encode()) <= 63)
_option_values = st.none() | st.text(
    alphabet=st.characters(blacklist_characters="\0", blacklist_categories=("Cs",))
)


@settings(max_examples=300)
@given(st.lists(st.tuples(_option_names, _option_values), min_size=1, max_size=6))
def test_start_replication_options_round_trip(options: list[tuple[str, str | None]]) -> None:
    rendered = ", ".join(
        f'"{name}"' + ("" if value is None else " '" + value.replace("'", "''") + "'")
        for name, value in options
    )
    cmd = parse_command(f'START_REPLICATION SLOT "s" LOGICAL 0/0 ({rendered})')
    assert cmd == StartReplication("s", "logical", 0, options=tuple(options))


@settings(max_examples=300)
@given(st.integers(0, 2**64 - 1), st.booleans())
def test_lsn_round_trip(lsn: int, lower: bool) -> None:
    text = f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"
    cmd = parse_command(f"START_REPLICATION SLOT s LOGICAL {text.lower() if lower else text}")
    assert cmd == StartReplication("s", "logical", lsn)


_bool_words = st.sampled_from([("", True), ("true", True), ("'on'", True), ("1", True), ("off", False), ("'FALSE'", False), ("0", False)])  # fmt: skip


@settings(max_examples=300)
@given(
    st.permutations(["snapshot", "two_phase", "failover"]),
    st.lists(st.booleans(), min_size=3, max_size=3),
    st.sampled_from(["export", "use", "nothing"]),
    _bool_words,
    _bool_words,
    st.booleans(),
)
def test_create_generic_options_model(
    order: list[str],
    present: list[bool],
    snapshot: str,
    two_phase: tuple[str, bool],
    failover: tuple[str, bool],
    upper: bool,
) -> None:
    rendered = {
        "snapshot": f"snapshot '{snapshot}'",
        "two_phase": f"two_phase {two_phase[0]}".rstrip(),
        "failover": f"failover {failover[0]}".rstrip(),
    }
    chosen = [name for name, keep in zip(order, present, strict=True) if keep]
    parts = [rendered[n].upper() if upper and n != "snapshot" else rendered[n] for n in chosen]
    options = f"({', '.join(parts)})" if parts else ""
    cmd = parse_command(f"CREATE_REPLICATION_SLOT s LOGICAL pgoutput {options}")
    assert isinstance(cmd, CreateReplicationSlot)
    assert cmd.snapshot == (snapshot if "snapshot" in chosen else "export")
    assert cmd.two_phase == ("two_phase" in chosen and two_phase[1])
    assert cmd.failover == ("failover" in chosen and failover[1])
    assert [name for name, _ in cmd.options] == chosen
