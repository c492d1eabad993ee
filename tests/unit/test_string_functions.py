"""pg_regex's translation and matching, regex_funcs' and bytea_text's functions, without a
server: what a user would see of each (values, PostgreSQL's errors, refusals)."""

from __future__ import annotations

import base64

import hypothesis.strategies as st
import pytest
from hypothesis import given

from decoding.errors import PgError
from decoding.pgvalues.textout import bytea_escape_one
from walsender_proxy.sql import bytea_text, pg_regex, regex_funcs


def _error(fn, *args) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    with pytest.raises(PgError) as e:
        fn(*args)
    return e.value.sqlstate, e.value.message


# ------------------------------------------------------------------------------ pg_regex


@pytest.mark.parametrize(
    ("pattern", "python"),
    [
        ("a.c", "a.c"),
        ("^ab$", "\\Aab\\Z"),
        ("[[:alpha:]_]+", "[A-Za-z_]+"),
        ("[^]a-]", "[^\\]a\\-]"),
        ("\\d+\\y", "[0-9]+\\b"),
        ("a{", "a\\{"),
        ("(?:x)|y", "(?:x)|y"),
    ],
)
def test_translation(pattern: str, python: str) -> None:
    assert pg_regex.compile_pattern(pattern, False, False).body == python


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("(ab", "invalid regular expression: parentheses () not balanced"),
        ("a[b", "invalid regular expression: brackets [] not balanced"),
        ("a{2,1}", "invalid regular expression: invalid repetition count(s)"),
        ("a{256}", "invalid regular expression: invalid repetition count(s)"),
        ("*a", "invalid regular expression: quantifier operand invalid"),
        ("[[:foo:]]", "invalid regular expression: invalid character class"),
        ("a\\qb", "invalid regular expression: invalid escape \\ sequence"),
        ("\\x7fffffff", "invalid regular expression: invalid escape \\ sequence"),
    ],
)
def test_postgres_errors(pattern: str, message: str) -> None:
    assert _error(pg_regex.compile_pattern, pattern, False, False) == ("2201B", message)


@pytest.mark.parametrize("pattern", ["a*?", "(a)\\1", "[[.a.]]", "(?i)a", "(?<=a|bc)x", "x*" * 2000])
def test_refused_constructs(pattern: str) -> None:
    assert _error(pg_regex.compile_pattern, pattern, False, False)[0] == "0A000"


def test_flags() -> None:
    assert pg_regex.parse_flags("gin") == pg_regex.Flags(glob=True, icase=True, nlstop=True, nlanch=True)
    assert pg_regex.parse_flags("ic") == pg_regex.Flags()
    assert pg_regex.parse_flags("ns") == pg_regex.Flags()
    assert _error(pg_regex.parse_flags, "z") == ("22023", 'invalid regular expression option: "z"')
    assert _error(pg_regex.parse_flags, "x")[0] == "0A000"


def test_longest_match_not_first_alternative() -> None:
    """PostgreSQL's match is the longest at the leftmost start; Python's the first branch."""
    rx = pg_regex.compile_pattern("a|ab", False, False)
    assert rx.search("xab", 0, False) == (1, 3)
    assert regex_funcs.regexp_replace("aaa", "a|aa", "X", 1, 1, "g", 0) == "XX"
    with pytest.raises(PgError) as e:  # (captures of such a match could differ)
        regex_funcs.regexp_replace("ab", "(a|ab)", "\\1", 1, 1, "", 0)
    assert e.value.sqlstate == "0A000"


def test_regexp_functions() -> None:
    assert regex_funcs.regexp_count("ababab", "ab", 2, "") == 2
    assert regex_funcs.regexp_count("aaa", "", 1, "") == 4
    assert regex_funcs.regexp_instr("abcabc", "b(c)", 1, 1, 0, "", 1) == 3
    assert regex_funcs.regexp_instr("abc", "b", 1, 1, 0, "", 1) == 2  # (no subexpression: the match)
    assert regex_funcs.regexp_substr("abcabc", "b.", 1, 2, "", 0) == "bc"
    assert regex_funcs.regexp_match("abc", "(x)?b", "") == [None]
    assert regex_funcs.regexp_matches("abcabc", "b(c)", "g") == [["c"], ["c"]]
    assert regex_funcs.regexp_split("the quick", "\\s*", "", "regexp_split_to_array()") == list("thequick")
    assert regex_funcs.regexp_replace("abcabc", "(b)(c)", "[\\2\\1\\&\\\\\\3]", 1, 1, "g", 0) == "a[cbbc\\]a[cbbc\\]"
    assert regex_funcs.regexp_replace("abcabc", "b", "X", 1, 2, "", 2) == "abcaXc"
    assert _error(regex_funcs.regexp_count, "abc", "b", 0, "") == ("22023", 'invalid value for parameter "start": 0')
    assert _error(regex_funcs.regexp_like, "abc", "b", "g") == ("22023", 'regexp_like() does not support the "global" option')
    assert _error(regex_funcs.regexp_replace, "abc", "b", "X", 1, 1, "1", 0)[1] == 'invalid regular expression option: "1"'


def test_similar() -> None:
    assert regex_funcs.similar_parts('a#"%#"g', "#") == ["a", ".*", "g"]
    assert regex_funcs.similar_to("5", "\\d", "\\")
    assert regex_funcs.similar_substring("abcdefg", 'a*#"%#"g*', "#") == "abcdefg"
    assert regex_funcs.similar_substring("abcdefg", 'a|b#"%#"g', "#") == "bcdef"
    assert _error(regex_funcs.similar_parts, "a", "##") == ("22025", "invalid escape string")
    assert _error(regex_funcs.similar_parts, 'a#"b#"c#"d', "#")[0] == "2200C"


# ---------------------------------------------------------------------------- bytea_text


@given(st.binary(max_size=200), st.sampled_from(["hex", "base64", "escape", "HEX"]))
def test_encode_decode_round_trip(data: bytes, fmt: str) -> None:
    assert bytea_text.decode(bytea_text.encode(data, fmt), fmt) == data


@given(st.binary(max_size=200))
def test_base64_is_mime_with_76_character_lines(data: bytes) -> None:
    text = bytea_text.encode(data, "base64")
    assert text.replace("\n", "") == base64.b64encode(data).decode()
    assert all(len(line) == 76 for line in text.split("\n")[:-1])


def test_decode_errors() -> None:
    assert _error(bytea_text.decode, "ab", "foo") == ("22023", 'unrecognized encoding: "foo"')
    assert _error(bytea_text.decode, "12é4", "hex") == ("22023", 'invalid hexadecimal digit: "é"')
    assert _error(bytea_text.decode, "123", "hex") == ("22023", "invalid hexadecimal data: odd number of digits")
    assert _error(bytea_text.decode, "abc", "base64") == ("22023", "invalid base64 end sequence")
    assert _error(bytea_text.decode, "a=bc", "base64") == ("22023", 'unexpected "=" while decoding base64 sequence')
    assert _error(bytea_text.decode, "ab\\x", "escape") == ("22P02", "invalid input syntax for type bytea")
    assert bytea_text.decode("ab==cdef", "base64") == b"iq"  # (after "=", one byte a group, as PostgreSQL)


def test_unistr() -> None:
    assert bytea_text.unistr("\\0064at\\+0000610") == "data0"
    assert bytea_text.unistr("\\d83d\\de00") == "😀"
    assert _error(bytea_text.unistr, "\\db99") == ("42601", "invalid Unicode surrogate pair")
    assert _error(bytea_text.unistr, "\\+2FFFFF") == ("22023", "invalid Unicode code point: 2FFFFF")
    assert _error(bytea_text.unistr, "\\xyz")[1] == "invalid Unicode escape"


def test_bytea_functions() -> None:
    assert bytea_text.bytea_substr(b"string", -10, 2147483646) == b"string"
    assert bytea_text.bytea_substr(b"string", -5, 3) == b""
    assert _error(bytea_text.bytea_substr, b"s", 1, -1) == ("22011", "negative substring length not allowed")
    assert bytea_text.bytea_overlay(b"abc", b"X", 2, -1) == b"aXabc"
    assert bytea_text.set_bit(b"\x12", 1, 1) == b"\x12"
    assert _error(bytea_text.get_byte, b"\x12", 1) == ("2202E", "index 1 out of valid range, 0..0")
    assert bytea_text.bytea_like(b"a_c", b"a$__", b"$")
    assert not bytea_text.bytea_like(b"abc", b"a$__", b"$")
    assert _error(bytea_text.bytea_like, b"a", b"a\\", b"\\")[0] == "22025"


def test_pad_and_initcap() -> None:
    assert bytea_text.lpad("hi", 5, "xy") == "xyxhi"
    assert bytea_text.rpad("hello", 2, "x") == "he"
    assert bytea_text.lpad("hi", 5, "") == "hi"
    assert _error(bytea_text.rpad, "x", 300000000, "ab") == ("54000", "requested length too large")
    assert bytea_text.initcap("hi THOMAS éa 1a") == "Hi Thomas éA 1a"


def test_bytea_escape_output() -> None:
    assert bytea_escape_one(b"De\x00d\\\x7f\xff ~") == b"De\\000d\\\\\\177\\377 ~"
