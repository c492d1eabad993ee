"""PostgreSQL 15's regular-expression functions (regexp.c) as Arrow UDFs over
:mod:`pg_regex`: regexp_count, regexp_instr, regexp_like, regexp_substr, regexp_match,
regexp_matches, regexp_replace (all its signatures), substring(text from pattern),
substring(text similar pattern escape e) and SIMILAR TO with ESCAPE.

DuckDB's functions of the same names speak RE2 (another syntax, leftmost-first matches,
other replacement escapes), so none is passed through. Each UDF takes every argument
PostgreSQL's longest signature has (the rewriter supplies the defaults) and checks them in
regexp.c's order, with its SQLSTATEs and messages."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from pglast import ast
from pglast.enums import BoolExprType

from decoding.errors import PgError
from walsender_proxy.sql import pg_regex
from walsender_proxy.sql.nodes import call, cast, int_const, str_const
from walsender_proxy.sql.udf_errors import keep_errors, strict_rows

PREFIX = "wpx_re_"


def _bad_value(name: str, value: int) -> PgError:
    return PgError("22023", f'invalid value for parameter "{name}": {value}')


def _no_global(fname: str, hint: str | None = None) -> PgError:
    return PgError("22023", f'{fname}() does not support the "global" option', hint=hint)


Loc = tuple[int, int]


def _matches(s: str, pattern: str, flags: pg_regex.Flags, start: int, subpatterns: bool, glob: bool) -> tuple[list[list[Loc]], int]:
    """setup_regexp_matches: each match's locations (the subexpressions' when
    ``subpatterns`` and the pattern has some, else the whole match's), and how many
    locations a match has."""
    rx = pg_regex.compile_pattern(pattern, flags.icase, flags.quote, flags.nlstop, flags.nlanch)
    use_sub = subpatterns and rx.ngroups > 0
    out: list[list[Loc]] = []
    pos = start
    while pos <= len(s):
        m = rx.search(s, pos, use_sub)
        if m is None:
            break
        if isinstance(m, tuple):
            so, eo = m
            out.append([m])
        else:
            so, eo = m.span()
            out.append([m.span(i) for i in range(1, rx.ngroups + 1)])
        if not glob:
            break
        pos = eo + (1 if so == eo else 0)
    return out, (rx.ngroups if use_sub else 1)


def regexp_count(s: str, pattern: str, start: int, flags: str) -> int:
    if start <= 0:
        raise _bad_value("start", start)
    f = pg_regex.parse_flags(flags)
    if f.glob:
        raise _no_global("regexp_count")
    return len(_matches(s, pattern, f, start - 1, False, True)[0])


def regexp_instr(s: str, pattern: str, start: int, n: int, endoption: int, flags: str, subexpr: int) -> int:
    if start <= 0:
        raise _bad_value("start", start)
    if n <= 0:
        raise _bad_value("n", n)
    if endoption not in (0, 1):
        raise _bad_value("endoption", endoption)
    if subexpr < 0:
        raise _bad_value("subexpr", subexpr)
    f = pg_regex.parse_flags(flags)
    if f.glob:
        raise _no_global("regexp_instr")
    found, npatterns = _matches(s, pattern, f, start - 1, subexpr > 0, True)
    if n > len(found) or subexpr > npatterns:
        return 0
    loc = found[n - 1][subexpr - 1 if subexpr > 0 else 0]
    if loc[0] < 0:
        return 0
    return loc[endoption] + 1


def regexp_like(s: str, pattern: str, flags: str) -> bool:
    f = pg_regex.parse_flags(flags)
    if f.glob:
        raise _no_global("regexp_like")
    return pg_regex.compile_pattern(pattern, f.icase, f.quote, f.nlstop, f.nlanch).found_in(s)


def regexp_substr(s: str, pattern: str, start: int, n: int, flags: str, subexpr: int) -> str | None:
    if start <= 0:
        raise _bad_value("start", start)
    if n <= 0:
        raise _bad_value("n", n)
    if subexpr < 0:
        raise _bad_value("subexpr", subexpr)
    f = pg_regex.parse_flags(flags)
    if f.glob:
        raise _no_global("regexp_substr")
    found, npatterns = _matches(s, pattern, f, start - 1, subexpr > 0, True)
    if n > len(found) or subexpr > npatterns:
        return None
    so, eo = found[n - 1][subexpr - 1 if subexpr > 0 else 0]
    if so < 0 or eo < 0:
        return None
    return s[so:eo]


def _match_array(s: str, locs: list[Loc]) -> list[str | None]:
    return [None if so < 0 else s[so:eo] for so, eo in locs]


def regexp_match(s: str, pattern: str, flags: str) -> list[str | None] | None:
    f = pg_regex.parse_flags(flags)
    if f.glob:
        raise _no_global("regexp_match", "Use the regexp_matches function instead.")
    found, _ = _matches(s, pattern, f, 0, True, False)
    return _match_array(s, found[0]) if found else None


def regexp_matches(s: str, pattern: str, flags: str) -> list[list[str | None]]:
    f = pg_regex.parse_flags(flags)
    found, _ = _matches(s, pattern, f, 0, True, f.glob)
    return [_match_array(s, locs) for locs in found]


def _escape_status(replacement: str) -> int:
    """check_replace_text_has_escape: 2 with a ``\\1``…``\\9``, 1 with another escape."""
    status = 0
    i = replacement.find("\\")
    while 0 <= i < len(replacement) - 1:
        if replacement[i + 1] in "123456789":
            return 2
        status = 1
        i = replacement.find("\\", i + 2)
    return status


def _substitute(replacement: str, s: str, spans: list[Loc]) -> str:
    """appendStringInfoRegexpSubstr: ``\\1``…``\\9`` and ``\\&`` replaced, ``\\\\`` one
    backslash, any other backslash kept."""
    out: list[str] = []
    i, n = 0, len(replacement)
    while i < n:
        j = replacement.find("\\", i)
        if j < 0:
            out.append(replacement[i:])
            break
        out.append(replacement[i:j])
        if j + 1 >= n:
            out.append("\\")
            break
        c = replacement[j + 1]
        if c in "123456789" or c == "&":
            idx = 0 if c == "&" else int(c)
            so, eo = spans[idx] if idx < len(spans) else (-1, -1)
            if so >= 0 and eo >= 0:
                out.append(s[so:eo])
            i = j + 2
        elif c == "\\":
            out.append("\\")
            i = j + 2
        else:
            out.append("\\")
            i = j + 1
    return "".join(out)


def regexp_replace(s: str, pattern: str, replacement: str, start: int, n: int, flags: str, form: int) -> str:
    """``form`` 0: (source, pattern, replacement [, flags]); 1: with start; 2: with start
    and N (textregexreplace and textregexreplace_extended)."""
    if form == 0:
        if flags and "0" <= flags[0] <= "9":
            raise PgError(
                "22023", f'invalid regular expression option: "{flags[0]}"',
                hint="If you meant to use regexp_replace() with a start parameter, cast the fourth argument to integer explicitly.",
            )  # fmt: skip
    else:
        if start <= 0:
            raise _bad_value("start", start)
        if form == 2 and n < 0:
            raise _bad_value("n", n)
    f = pg_regex.parse_flags(flags)
    if form < 2:
        n = 0 if f.glob else 1
    status = _escape_status(replacement)
    rx = pg_regex.compile_pattern(pattern, f.icase, f.quote, f.nlstop, f.nlanch)
    captures = status == 2
    out: list[str] = []
    pos, copied, count = start - 1, 0, 0
    while pos <= len(s):
        m = rx.search(s, pos, captures)
        if m is None:
            break
        spans = [m] if isinstance(m, tuple) else [m.span(i) for i in range(rx.ngroups + 1)]
        so, eo = spans[0]
        count += 1
        if n > 0 and count != n:
            pos = eo + (1 if so == eo else 0)
            continue
        out.append(s[copied:so])
        out.append(_substitute(replacement, s, spans) if status else replacement)
        copied = eo
        if n > 0:
            break
        pos = eo + (1 if so == eo else 0)
    out.append(s[copied:])
    return "".join(out)


def regexp_split(s: str, pattern: str, flags: str, fname: str) -> list[str]:
    """regexp_split_to_array/table: the text between matches, zero-length matches at the
    start, at the end or right after a match ignored (setup_regexp_matches's degenerate
    ones)."""
    f = pg_regex.parse_flags(flags)
    if f.glob:
        raise PgError("22023", f'{fname} does not support the "global" option')
    rx = pg_regex.compile_pattern(pattern, f.icase, f.quote, f.nlstop, f.nlanch)
    pieces: list[str] = []
    pos = last = prev_end = 0
    while pos <= len(s):
        span = rx.search(s, pos, False)
        if span is None:
            break
        assert isinstance(span, tuple)
        so, eo = span
        if so < len(s) and eo > prev_end:
            pieces.append(s[last:so])
            last = eo
        prev_end = eo
        pos = eo + (1 if so == eo else 0)
    pieces.append(s[last:])
    return pieces


# ----------------------------------------------------------------- SQL regular expressions


def similar_parts(pattern: str, escape: str | None) -> list[str]:
    """similar_escape_internal, its output cut at the escape-double-quotes: one to three
    ARE fragments (``escape`` None: the default backslash; '' none)."""
    if escape is None:
        esc: str | None = "\\"
    elif escape == "":
        esc = None
    elif len(escape) > 1:
        raise PgError("22025", "invalid escape string", hint="Escape string must be empty or one character.")
    else:
        esc = escape
    parts: list[list[str]] = [[]]
    out = parts[0]
    after = False
    depth = 0
    cpos = 0
    for ch in pattern:
        if after:
            if ch == '"' and depth < 1:
                if len(parts) == 3:
                    raise PgError("2200C", "SQL regular expression may not contain more than two escape-double-quote separators")
                out = []
                parts.append(out)
            else:
                out.append("\\" + ch)
                cpos = 3
            after = False
        elif esc is not None and ch == esc:
            after = True
        elif depth > 0:
            out.append("\\" + ch if ch == "\\" else ch)
            if ch == "]" and cpos > 2:
                depth -= 1
            elif ch == "[":
                depth += 1
                cpos = 3
            elif ch == "^":
                cpos += 1
            else:
                cpos = 3
        elif ch == "[":
            out.append(ch)
            depth, cpos = 1, 1
        elif ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        elif ch == "(":
            out.append("(?:")
        elif ch in "\\.^$":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return ["".join(p) for p in parts]


def similar_to(s: str, pattern: str, escape: str | None) -> bool:
    """``s SIMILAR TO pattern ESCAPE escape``: the parts joined, anchored at both ends."""
    parts = similar_parts(pattern, escape)
    # (one part: similar_escape's own ^(?:…)$, so that a malformed pattern fails where
    # PostgreSQL's parser fails on it)
    whole = "^(?:" + (parts[0] if len(parts) == 1 else "".join(f"(?:{p})" for p in parts)) + ")$"
    return pg_regex.compile_pattern(whole, False, False).found_in(s)


def similar_substring(s: str, pattern: str, escape: str | None) -> str | None:
    """``substring(s similar pattern escape escape)``: the text between the
    escape-double-quotes, where the part before them matches as little as it can and the
    part between them as much (the SQL standard's rule, which PostgreSQL's
    ``^(?:p1){1,1}?(p2){1,1}(?:p3)$`` follows)."""
    parts = similar_parts(pattern, escape)
    if not similar_to(s, pattern, escape):
        return None
    if len(parts) == 1:
        return s
    rxs = []
    for p in parts:
        try:
            rx = pg_regex.compile_pattern(p, False, False)
        except PgError as e:
            if e.sqlstate == "2201B":  # (parentheses that span a separator: PostgreSQL reads them whole)
                raise PgError("0A000", "a SIMILAR pattern whose parentheses span an escape-double-quote is not supported by walsender-proxy") from None
            raise
        if rx.end_sensitive or "\\b" in rx.body or "\\A" in rx.body:
            raise pg_regex._unsupported("an anchor or word boundary in a SUBSTRING ... SIMILAR part")
        rxs.append(rx)
    n = len(s)
    for i in range(n + 1):  # (part 1 as short as it can be)
        if not rxs[0].anchored.fullmatch(s, 0, i):
            continue
        if len(rxs) == 2:
            if rxs[1].anchored.fullmatch(s, i, n):
                return s[i:]
            continue
        for j in range(n, i - 1, -1):  # (part 2 as long as it can be)
            if rxs[1].anchored.fullmatch(s, i, j) and rxs[2].anchored.fullmatch(s, j, n):
                return s[i:j]
    return None  # (cannot happen: the whole matched)


def regex_substring(s: str, pattern: str) -> str | None:
    """textregexsubstr: the first subexpression's text if the pattern has one, else the
    match's (NULL without a match, or when the subexpression took no part)."""
    found, _ = _matches(s, pattern, pg_regex.Flags(), 0, True, False)
    if not found:
        return None
    so, eo = found[0][0]
    return None if so < 0 else s[so:eo]


# ---------------------------------------------------------------------------- the UDFs

_T, _I, _B = pa.string(), pa.int32(), pa.bool_()
_TEXT_LIST = pa.list_(pa.string())

#: name → (function, DuckDB argument types, DuckDB result type, Arrow result type)
_UDFS: dict[str, tuple[Callable[..., Any], list[str], str, pa.DataType]] = {
    "count": (regexp_count, ["VARCHAR", "VARCHAR", "INTEGER", "VARCHAR"], "INTEGER", _I),
    "instr": (regexp_instr, ["VARCHAR", "VARCHAR", "INTEGER", "INTEGER", "INTEGER", "VARCHAR", "INTEGER"], "INTEGER", _I),
    "like": (regexp_like, ["VARCHAR", "VARCHAR", "VARCHAR"], "BOOLEAN", _B),
    "substr": (regexp_substr, ["VARCHAR", "VARCHAR", "INTEGER", "INTEGER", "VARCHAR", "INTEGER"], "VARCHAR", _T),
    "match": (regexp_match, ["VARCHAR", "VARCHAR", "VARCHAR"], "VARCHAR[]", _TEXT_LIST),
    "matches": (regexp_matches, ["VARCHAR", "VARCHAR", "VARCHAR"], "VARCHAR[][]", pa.list_(_TEXT_LIST)),
    "replace": (regexp_replace, ["VARCHAR", "VARCHAR", "VARCHAR", "INTEGER", "INTEGER", "VARCHAR", "INTEGER"], "VARCHAR", _T),
    "split": (regexp_split, ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"], "VARCHAR[]", _TEXT_LIST),
    "similar": (similar_to, ["VARCHAR", "VARCHAR", "VARCHAR"], "BOOLEAN", _B),
    "similar_substring": (similar_substring, ["VARCHAR", "VARCHAR", "VARCHAR"], "VARCHAR", _T),
    "substring": (regex_substring, ["VARCHAR", "VARCHAR"], "VARCHAR", _T),
}


def install(con: Any, have: frozenset[str] | set[str] = frozenset()) -> None:
    """Create the UDFs in ``con``'s database (those not in ``have`` already)."""
    for name, (fn, args, ret, arrow) in _UDFS.items():
        if PREFIX + name not in have:
            con.create_function(PREFIX + name, keep_errors(strict_rows(fn, arrow, len(args))), args, ret, type="arrow", null_handling="special")


def udf_name(name: str) -> str:
    return PREFIX + name


# ------------------------------------------------------------------------ the rewriting

_TEXTISH = frozenset({"text", "varchar", "bpchar", "name", "char", "unknown"})
_INTS = frozenset({"int2", "int4"})

#: PostgreSQL's signatures: name → (parameter kinds, fewest arguments); T text, I integer.
_SIGNATURES: dict[str, tuple[str, int]] = {
    "regexp_count": ("TTIT", 2),
    "regexp_instr": ("TTIIITI", 2),
    "regexp_like": ("TTT", 2),
    "regexp_substr": ("TTIITI", 2),
    "regexp_match": ("TTT", 2),
    "regexp_matches": ("TTT", 2),
    "regexp_split_to_array": ("TTT", 2),
    "regexp_split_to_table": ("TTT", 2),
}
_DEFAULTS: dict[str, list[Any]] = {
    "regexp_count": [None, None, 1, ""],
    "regexp_instr": [None, None, 1, 1, 0, "", 0],
    "regexp_like": [None, None, ""],
    "regexp_substr": [None, None, 1, 1, "", 0],
    "regexp_match": [None, None, ""],
    "regexp_matches": [None, None, ""],
    "regexp_split_to_array": [None, None, ""],
    "regexp_split_to_table": [None, None, ""],
}
_RESULTS = {
    "regexp_count": "int4", "regexp_instr": "int4", "regexp_like": "bool", "regexp_substr": "text",
    "regexp_match": "_text", "regexp_matches": "_text", "regexp_replace": "text", "substring": "text",
    "regexp_split_to_array": "_text", "regexp_split_to_table": "text",
}  # fmt: skip
FUNCTIONS = frozenset(_RESULTS)


def _fits(kind: str, t: str | None, const: str | None) -> bool:
    if t is None:  # (a parameter whose type the server does not know, a NULL)
        return True
    if kind == "T":
        return t in _TEXTISH
    return t in _INTS or (t == "unknown" and const is not None and re.fullmatch(r"\s*[+-]?\d+\s*", const) is not None)


def _arg(kind: str, node: ast.Node, t: str | None, const: str | None) -> ast.Node:
    if kind == "I" and t == "unknown" and const is not None:
        return int_const(int(const))  # (int4's input of a quoted integer)
    if kind == "I":
        return cast(node, "integer")
    return node


def rewrite(name: str, args: list[ast.Node], types: list[str | None], consts: list[str | None]) -> tuple[ast.Node, str] | None:
    """A call of one of :data:`FUNCTIONS` as its UDF's call and PostgreSQL's result type;
    None when PostgreSQL has no such signature (its 42883), or when ``substring`` is not
    its pattern form (substring(text, int …) is another function)."""
    n = len(args)
    if name == "substring":
        if n in (2, 3) and all(t is None or t in _TEXTISH for t in types) and any(t is not None for t in types[1:]):
            if n == 2:
                return call(udf_name("substring"), *args), "text"
            return call(udf_name("similar_substring"), *args), "text"
        return None
    if name == "regexp_replace":
        return _replace(args, types, consts)
    kinds, fewest = _SIGNATURES[name]
    if not fewest <= n <= len(kinds):
        return None
    if name == "regexp_substr" and n == 5 and types[4] is not None and types[4] not in _TEXTISH:
        return None
    full: list[ast.Node] = []
    for i, kind in enumerate(kinds):
        if i < n:
            if not _fits(kind, types[i], consts[i]):
                return None
            full.append(_arg(kind, args[i], types[i], consts[i]))
        else:
            d = _DEFAULTS[name][i]
            full.append(str_const(d) if isinstance(d, str) else int_const(d))
    if name.startswith("regexp_split"):
        out = call(udf_name("split"), *full, str_const(name + "()"))
    else:
        out = call(udf_name(name.removeprefix("regexp_")), *full)
    if name in ("regexp_matches", "regexp_split_to_table"):
        out = call("unnest", out)
    return out, _RESULTS[name]


def _replace(args: list[ast.Node], types: list[str | None], consts: list[str | None]) -> tuple[ast.Node, str] | None:
    n = len(args)
    if not 3 <= n <= 6 or not all(_fits("T", types[i], consts[i]) for i in range(3)):
        return None
    s, p, r = args[:3]
    start, count, flags, form = int_const(1), int_const(1), str_const(""), 0
    if n == 4:
        # (an untyped literal is the flags: textregexreplace wins the overload resolution)
        if types[3] is not None and types[3] in _TEXTISH:
            flags = args[3]
        elif _fits("I", types[3], None):
            start, form = _arg("I", args[3], types[3], None), 1
        else:
            return None
    elif n >= 5:
        if not (_fits("I", types[3], consts[3]) and _fits("I", types[4], consts[4])):
            return None
        if n == 6 and not _fits("T", types[5], consts[5]):
            return None
        start, count = _arg("I", args[3], types[3], consts[3]), _arg("I", args[4], types[4], consts[4])
        flags, form = (args[5] if n == 6 else str_const("")), 2
    return call(udf_name("replace"), s, p, r, start, count, flags, int_const(form)), "text"


def match_call(value: ast.Node, pattern: ast.Node, op: str) -> ast.Node:
    """``value ~ pattern`` (``~*`` case-insensitive, ``!`` negated) as regexp_like's UDF."""
    out: ast.Node = call(udf_name("like"), value, pattern, str_const("i" if "*" in op else ""))
    if op.startswith("!"):
        out = ast.BoolExpr(boolop=BoolExprType.NOT_EXPR, args=(out,))
    return out


def similar_call(value: ast.Node, pattern: ast.Node, escape: ast.Node | None) -> ast.Node:
    """``value SIMILAR TO pattern [ESCAPE escape]`` (no ESCAPE: the backslash)."""
    return call(udf_name("similar"), value, pattern, escape if escape is not None else str_const("\\"))
