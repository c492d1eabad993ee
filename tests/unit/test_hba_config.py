"""``[[hba]]`` rules as the configuration file gives them: the default, ``@file`` inclusion
relative to the configuration file, and what is refused at load. How the rules decide is
compared with PostgreSQL 15 in ``tests/integration/test_hba_vs_postgres.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from decoding.errors import PgError
from tests.unit.test_cli_config import cli
from walsender_proxy.config import load_config, server_settings
from walsender_proxy.server.hba import DEFAULT_RULES, HbaRule, Token, parse_rules


def _rules(tmp_path: Path, toml: str) -> tuple[HbaRule, ...]:
    conf = tmp_path / "proxy.toml"
    conf.write_text(toml)
    return server_settings(load_config(conf)).hba


def _refusal(tmp_path: Path, toml: str) -> str:
    with pytest.raises(PgError) as ei:
        _rules(tmp_path, toml)
    assert ei.value.sqlstate == "F0000"
    return ei.value.message


RULE = "[[hba]]\ntype = 'host'\naddress = '127.0.0.1/32'\nmethod = 'trust'\n"


def test_the_default_configuration_has_the_default_rules() -> None:
    """initdb's rules for TCP, physical replication included (``all`` does not cover it)."""
    assert server_settings(load_config()).hba == DEFAULT_RULES
    assert {r.databases for r in DEFAULT_RULES} == {(Token("all"),), (Token("replication"),)}


def test_included_files_are_found_beside_the_file_that_names_them(tmp_path: Path) -> None:
    """``@name`` is relative to the configuration file's directory, and a name inside an
    included file relative to that file's, as PostgreSQL resolves them."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "users.txt").write_text('alice, "+b c" \\\n @more.txt # comment\n')
    (tmp_path / "sub" / "more.txt").write_text("carol\n")
    [rule] = _rules(tmp_path, RULE + "database = ['all']\nuser = '@sub/users.txt, dave'\n")
    assert rule.users == (Token("alice"), Token("+b c", quoted=True), Token("carol"), Token("dave"))


def test_inclusion_without_a_file_to_be_relative_to_is_refused() -> None:
    with pytest.raises(PgError, match="needs a configuration file"):
        parse_rules([{"type": "host", "database": "@dbs.txt", "user": "all", "address": "all", "method": "trust"}])


def test_an_inclusion_loop_is_refused(tmp_path: Path) -> None:
    (tmp_path / "loop.txt").write_text("@loop.txt\n")
    assert "too many levels of inclusion" in _refusal(tmp_path, RULE + "database = '@loop.txt'\nuser = 'all'\n")


@pytest.mark.parametrize(
    ("toml", "reason"),
    [
        ("database = 'all'\n", 'missing "user"'),
        ("database = 'all'\nuser = 'all'\noptions = 'x'\n", 'unrecognized key "options"'),
        ("database = 'all'\nuser = 'all'\nnetmask = '255.0.0.0'\n", '"netmask" cannot follow an address in CIDR notation'),
        ("database = 'all'\nuser = 'my user'\n", '"user" holds more than one column'),
        ("database = ''\nuser = 'all'\n", '"database" is empty'),
        ("database = 1\nuser = 'all'\n", '"database" must be a string or a list of strings'),
    ],
    ids=["missing column", "unknown key", "netmask after CIDR", "two columns in one", "empty", "not text"],
)
def test_malformed_rules_are_refused_naming_what_is_wrong(tmp_path: Path, toml: str, reason: str) -> None:
    message = _refusal(tmp_path, RULE + toml)
    assert reason in message and "(hba rule 1 of the configuration)" in message


def test_a_local_rule_has_no_address(tmp_path: Path) -> None:
    toml = "[[hba]]\ntype = 'local'\ndatabase = 'all'\nuser = 'all'\naddress = 'all'\nmethod = 'trust'\n"
    assert 'a "local" rule has no address' in _refusal(tmp_path, toml)


def test_serve_refuses_a_rule_it_cannot_follow(tmp_path: Path) -> None:
    """The server does not start on rules it would not follow as PostgreSQL does."""
    conf = tmp_path / "proxy.toml"
    conf.write_text("[[hba]]\ntype = 'host'\ndatabase = 'all'\nuser = 'all'\naddress = 'all'\nmethod = 'ldap'\n")
    r = cli("serve", "-D", str(tmp_path / "data"), "-c", str(conf))
    assert r.returncode == 1
    assert 'FATAL:  authentication method "ldap" is not supported by walsender-proxy' in r.stderr
