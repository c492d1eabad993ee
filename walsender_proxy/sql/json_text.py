"""The ``json`` type's functions over its text, as PostgreSQL 15's json parser sees it.

A ``json`` value is the text it was given (whitespace, key order and duplicate keys kept),
so ``->``, ``#>``, json_each … answer with the sub-value's *original* text, not a
re-serialisation: ``'[{"b": "c"}]'::json -> 0`` is ``{"b": "c"}`` with its space. This
module lexes the text into tokens (:func:`tokens`), turns them into the semantic events
PostgreSQL's recursive-descent parser (src/common/jsonapi.c) hands to its actions, and runs
the actions of src/backend/utils/adt/jsonfuncs.c over them — the same state machines, so
their quirks come along: with duplicate keys the last match wins, and a negative subscript
in a path is made positive by the first array met at its level and stays so for the next
ones (``'[[1,2],[3,4,5]]'::json #> '{-1,-1}'`` is ``4``).

Functions that need de-escaped strings (the getters, json_each, json_object_keys,
json_strip_nulls, the ``_text`` variants) lex the whole text with de-escaping, as
PostgreSQL does: a ``\\u0000`` or a lone surrogate anywhere is an error there (22P05,
22P02), while json_typeof and json_array_length never look inside strings.

It has no DuckDB or pglast in it: :mod:`walsender_proxy.sql.json_exprs` calls it from UDFs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from decoding.errors import PgError
from decoding.pgvalues.textin import array_in_elements, json_error

#: PostgreSQL's reserved "no subscript here" index (INT_MIN).
INT_MIN = -(2**31)
_INT_MAX = 2**31 - 1
_WS = " \t\n\r"
#: C isspace(), which strtol skips before a number.
_C_SPACE = " \t\n\v\f\r"
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _invalid(text: str) -> PgError:
    """The input error PostgreSQL's json_in gives ``text`` (values reaching here were
    checked on input; this is for text that was not)."""
    return json_error(text, jsonb=False)


@dataclass(slots=True)
class Token:
    #: ``{ } [ ] , :``, ``s`` string, ``n`` number, ``t`` true, ``f`` false, ``N`` null.
    kind: str
    start: int
    end: int


def tokens(text: str) -> list[Token]:
    """The tokens of a json text, as json_lex cuts them (no de-escaping)."""
    out: list[Token] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _WS:
            i += 1
        if i >= n:
            return out
        c = text[i]
        if c in "{}[],:":
            out.append(Token(c, i, i + 1))
            i += 1
        elif c == '"':
            j = i + 1
            while True:
                if j >= n:
                    raise _invalid(text)
                ch = text[j]
                if ch == '"':
                    break
                j += 2 if ch == "\\" else 1
            out.append(Token("s", i, j + 1))
            i = j + 1
        else:
            j = i
            while j < n and text[j] not in _WS and text[j] not in "{}[],:\"":
                j += 1
            word = text[i:j]
            if word in ("true", "false", "null"):
                kind = word[0] if word != "null" else "N"
            elif c == "-" or "0" <= c <= "9":
                kind = "n"
            else:
                raise _invalid(text)
            out.append(Token(kind, i, j))
            i = j


def decode_string(text: str, tok: Token) -> str:
    """A string token de-escaped as json_lex_string does with de-escaping on: surrogate
    pairs joined, a lone surrogate 22P02, ``\\u0000`` 22P05 (the database is UTF8)."""
    s = text[tok.start + 1 : tok.end - 1]
    if "\\" not in s:
        return s
    out: list[str] = []
    hi = -1
    low_missing = PgError(
        "22P02", "invalid input syntax for type json", detail="Unicode low surrogate must follow a high surrogate."
    )
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c != "\\":
            if hi != -1:
                raise low_missing
            out.append(c)
            i += 1
            continue
        e = s[i + 1]
        if e != "u":
            if hi != -1:
                raise low_missing
            if e not in _ESCAPES:
                raise _invalid(text)
            out.append(_ESCAPES[e])
            i += 2
            continue
        ch = int(s[i + 2 : i + 6], 16)
        i += 6
        if 0xD800 <= ch <= 0xDBFF:
            if hi != -1:
                raise PgError(
                    "22P02",
                    "invalid input syntax for type json",
                    detail="Unicode high surrogate must not follow a high surrogate.",
                )
            hi = ch
            continue
        if 0xDC00 <= ch <= 0xDFFF:
            if hi == -1:
                raise low_missing
            ch = 0x10000 + ((hi & 0x3FF) << 10) + (ch & 0x3FF)
            hi = -1
        elif hi != -1:
            raise low_missing
        if ch == 0:
            raise PgError(
                "22P05", "unsupported Unicode escape sequence", detail="\\u0000 cannot be converted to text."
            )
        out.append(chr(ch))
    if hi != -1:
        raise low_missing
    return "".join(out)


# ------------------------------------------------------------------------------ events


@dataclass(slots=True)
class Event:
    """One call of a semantic action, with what the lexer shows at that moment.

    kind: ``os``/``oe`` object start/end, ``as``/``ae`` array start/end, ``fs``/``fe``
    object field start/end, ``es``/``ee`` array element start/end, ``sc`` scalar.
    level: lex_level when the action runs (a container's own level at its start and end,
    one more for what is inside it).
    """

    kind: str
    level: int
    #: fs/fe: the field name (de-escaped when asked for, else its raw text).
    name: str = ""
    #: fs/es: the value's first token (the lookahead); sc: the scalar token.
    tok: Token | None = None
    #: fs/fe/es/ee: whether the value is the null token.
    isnull: bool = False
    #: fe/ee/oe/ae/sc: where the previous token ended (prev_token_terminator).
    prev_end: int = 0
    #: as: how many elements the array has (json_count_array_elements).
    count: int = 0
    #: sc: the token as the action receives it (de-escaped string, or the token's text).
    value: str = ""


def events(text: str, escapes: bool) -> list[Event]:
    """The semantic actions pg_parse_json runs over ``text``, in order. ``escapes``: lex
    with de-escaping (makeJsonLexContext's need_escapes), which raises on bad escapes."""
    toks = tokens(text)
    if not toks:
        raise _invalid(text)
    strings: dict[int, str] = {}
    if escapes:
        for k, t in enumerate(toks):
            if t.kind == "s":
                strings[k] = decode_string(text, t)
    counts = _array_counts(text, toks)
    out: list[Event] = []
    # frames: [kind "o"/"a", current field name, whether the current value is null]
    stack: list[list[object]] = []

    def word(idx: int) -> str:
        t = toks[idx]
        if t.kind == "s":
            return strings[idx] if escapes else text[t.start + 1 : t.end - 1]
        return text[t.start : t.end]

    def at(idx: int, kind: str | None = None) -> Token:
        if idx >= len(toks) or (kind is not None and toks[idx].kind != kind):
            raise _invalid(text)
        return toks[idx]

    def begin(idx: int) -> tuple[int, bool]:
        """Start the value at token ``idx``; (next token, whether the value is complete)."""
        t = at(idx)
        level = len(stack)
        if t.kind == "{":
            out.append(Event("os", level, tok=t))
            stack.append(["o", "", False])
            return idx + 1, False
        if t.kind == "[":
            out.append(Event("as", level, tok=t, count=counts[idx]))
            stack.append(["a", "", False])
            return idx + 1, False
        if t.kind not in "sntfN":
            raise _invalid(text)
        out.append(Event("sc", level, tok=t, prev_end=t.end, value=word(idx)))
        return idx + 1, True

    def member(idx: int) -> tuple[int, bool]:
        frame = stack[-1]
        if frame[0] == "o":
            at(idx, "s")
            at(idx + 1, ":")
            vt = at(idx + 2)
            frame[1], frame[2] = word(idx), vt.kind == "N"
            out.append(Event("fs", len(stack), name=str(frame[1]), tok=vt, isnull=vt.kind == "N"))
            return begin(idx + 2)
        vt = at(idx)
        frame[2] = vt.kind == "N"
        out.append(Event("es", len(stack), tok=vt, isnull=vt.kind == "N"))
        return begin(idx)

    k, done = begin(0)
    while stack:
        frame = stack[-1]
        close = "}" if frame[0] == "o" else "]"
        if done:
            end = "fe" if frame[0] == "o" else "ee"
            out.append(Event(end, len(stack), name=str(frame[1]), isnull=bool(frame[2]), prev_end=toks[k - 1].end))
            if at(k).kind == ",":
                k, done = member(k + 1)
                continue
            at(k, close)
        elif at(k).kind != close:  # just after the opening bracket
            k, done = member(k)
            continue
        stack.pop()
        out.append(Event("oe" if close == "}" else "ae", len(stack), prev_end=toks[k].end))
        k, done = k + 1, True
    if k != len(toks):
        raise _invalid(text)
    return out


def _array_counts(text: str, toks: Sequence[Token]) -> dict[int, int]:
    """Elements of each array (json_count_array_elements), by the index of its ``[``."""
    counts: dict[int, int] = {}
    stack: list[tuple[int, str]] = []
    for k, t in enumerate(toks):
        if stack and stack[-1][1] == "[":
            opened = stack[-1][0]
            if k == opened + 1 and t.kind != "]":
                counts[opened] = 1
            elif t.kind == ",":
                counts[opened] += 1
        if t.kind in "[{":
            stack.append((k, t.kind))
            if t.kind == "[":
                counts[k] = 0
        elif t.kind in "]}":
            if not stack:
                raise _invalid(text)
            stack.pop()
    return counts


# ------------------------------------------------------------------------------ getters


def strtoint(s: str) -> int:
    """A path element as get_path_all reads it: strtoint() (C strtol within int range,
    leading white space and a sign allowed, nothing after the digits); INT_MIN when it is
    not one, which no array element matches."""
    i, n = 0, len(s)
    while i < n and s[i] in _C_SPACE:
        i += 1
    j = i
    if j < n and s[j] in "+-":
        j += 1
    k = j
    while k < n and "0" <= s[k] <= "9":
        k += 1
    if k == j or k != n:
        return INT_MIN
    v = int(s[i:k])
    return v if -(2**31) <= v <= _INT_MAX else INT_MIN


def get(
    text: str, names: Sequence[str | None] | None, indexes: Sequence[int] | None, as_text: bool
) -> str | None:
    """get_worker: the value at a path of field names (``names``) and/or array indexes
    (``indexes``), as its original text; ``as_text`` (the ``->>`` family) de-escapes a
    string and gives NULL for a JSON null. None when nothing matches."""
    npath = len(names) if names is not None else len(indexes or ())
    path_indexes = list(indexes) if indexes is not None else None
    pathok = [False] * npath
    if npath:
        pathok[0] = True
    cur = [0] * npath
    result: str | None = None
    result_start: int | None = None
    next_scalar = False
    for ev in events(text, escapes=True):
        lv = ev.level
        k = ev.kind
        if k == "os":
            if lv == 0 and npath == 0:
                assert ev.tok is not None
                result_start = ev.tok.start
        elif k == "oe":
            if lv == 0 and npath == 0:
                assert result_start is not None
                result = text[result_start : ev.prev_end]
        elif k == "as":
            if path_indexes is None and npath != 0:
                continue
            if lv < npath:
                assert path_indexes is not None
                cur[lv] = -1
                if path_indexes[lv] < 0 and path_indexes[lv] != INT_MIN and -path_indexes[lv] <= ev.count:
                    path_indexes[lv] += ev.count
            elif lv == 0 and npath == 0:
                assert ev.tok is not None
                result_start = ev.tok.start
        elif k == "ae":
            if lv == 0 and npath == 0:
                assert result_start is not None
                result = text[result_start : ev.prev_end]
        elif k in ("fs", "fe"):
            if names is None:
                continue
            hit = lv <= npath and pathok[lv - 1] and names[lv - 1] is not None and ev.name == names[lv - 1]
            if k == "fs" and hit:
                if lv < npath:
                    pathok[lv] = True
                    continue
                result, result_start = None, None
                assert ev.tok is not None
                if as_text and ev.tok.kind == "s":
                    next_scalar = True
                else:
                    result_start = ev.tok.start
            elif k == "fe" and hit:
                if lv < npath:
                    pathok[lv] = False
                elif result_start is not None:
                    result = None if (ev.isnull and as_text) else text[result_start : ev.prev_end]
                    result_start = None
        elif k in ("es", "ee"):
            if path_indexes is None:
                continue
            if k == "es" and lv <= npath:
                cur[lv - 1] += 1
            hit = lv <= npath and pathok[lv - 1] and cur[lv - 1] == path_indexes[lv - 1]
            if k == "es" and hit:
                if lv < npath:
                    pathok[lv] = True
                    continue
                result, result_start = None, None
                assert ev.tok is not None
                if as_text and ev.tok.kind == "s":
                    next_scalar = True
                else:
                    result_start = ev.tok.start
            elif k == "ee" and hit:
                if lv < npath:
                    pathok[lv] = False
                elif result_start is not None:
                    result = None if (ev.isnull and as_text) else text[result_start : ev.prev_end]
                    result_start = None
        elif k == "sc":
            assert ev.tok is not None
            if lv == 0 and npath == 0:
                if as_text and ev.tok.kind == "s":
                    next_scalar = True
                elif as_text and ev.tok.kind == "N":
                    result = None
                else:  # (white space before a top-level scalar stays, as PostgreSQL's does)
                    result = text[: ev.prev_end]
            if next_scalar:
                result = ev.value
                next_scalar = False
    return result


def field(text: str, key: str, as_text: bool) -> str | None:
    """``json -> text`` / ``json ->> text``."""
    return get(text, [key], None, as_text)


def element(text: str, index: int, as_text: bool) -> str | None:
    """``json -> int`` / ``json ->> int``: negative indexes count from the end."""
    return get(text, None, [index], as_text)


def path(text: str, elems: Sequence[str | None], as_text: bool) -> str | None:
    """``json #> text[]`` / ``#>>``, json_extract_path(_text): NULL when the path has a
    NULL element; each element matches a field name, or an array index when it reads as
    an integer."""
    if any(e is None for e in elems):
        return None
    names = [e for e in elems if e is not None]
    return get(text, names, [strtoint(e) if e else INT_MIN for e in names], as_text)


# ------------------------------------------------------------------------------ the others


def array_length(text: str) -> int:
    """json_array_length: 22023 for an object or a scalar."""
    evs = events(text, escapes=False)
    first = evs[0]
    if first.kind == "os":
        raise PgError("22023", "cannot get array length of a non-array")
    if first.kind == "sc":
        raise PgError("22023", "cannot get array length of a scalar")
    return first.count


def typeof(text: str) -> str:
    """json_typeof: the kind of the first token."""
    toks = tokens(text)
    if not toks:
        raise _invalid(text)
    return {"{": "object", "[": "array", "s": "string", "n": "number", "t": "boolean", "f": "boolean", "N": "null"}.get(
        toks[0].kind, "invalid"
    )


def _top_level_check(
    text: str, on_object: str | None, on_array: str | None, on_scalar: str, escapes: bool = True
) -> None:
    """A function's structure errors for the top-level value, raised before any string is
    de-escaped (the action runs at the opening bracket), except for a scalar, whose token
    is lexed first."""
    toks = tokens(text)
    if not toks:
        raise _invalid(text)
    kind = toks[0].kind
    if kind == "{" and on_object:
        raise PgError("22023", on_object)
    if kind == "[" and on_array:
        raise PgError("22023", on_array)
    if kind not in "{[":
        if kind == "s" and escapes:
            decode_string(text, toks[0])
        raise PgError("22023", on_scalar)


def object_keys(text: str) -> list[str]:
    """json_object_keys: the top-level keys in order, duplicates included."""
    _top_level_check(
        text, None, "cannot call json_object_keys on an array", "cannot call json_object_keys on a scalar"
    )
    return [ev.name for ev in events(text, escapes=True) if ev.kind == "fs" and ev.level == 1]


def array_elements(text: str, as_text: bool) -> list[str | None]:
    """json_array_elements(_text): each top-level element's text (``_text``: strings
    de-escaped, null as NULL)."""
    fn = "json_array_elements_text" if as_text else "json_array_elements"
    _top_level_check(text, f"cannot call {fn} on a non-array", None, f"cannot call {fn} on a scalar", as_text)
    out: list[str | None] = []
    start: int | None = None
    pending: str | None = None
    for ev in events(text, escapes=as_text):
        if ev.level != 1:
            continue
        if ev.kind == "es":
            assert ev.tok is not None
            start = ev.tok.start
        elif ev.kind == "sc" and as_text and ev.tok is not None and ev.tok.kind == "s":
            pending = ev.value
        elif ev.kind == "ee":
            if as_text and ev.isnull:
                out.append(None)
            elif pending is not None:
                out.append(pending)
            else:
                assert start is not None
                out.append(text[start : ev.prev_end])
            pending = None
    return out


def each(text: str, as_text: bool) -> list[tuple[str, str | None]]:
    """json_each(_text): (key, value text) of each top-level field."""
    _top_level_check(text, None, "cannot deconstruct an array as an object", "cannot deconstruct a scalar")
    out: list[tuple[str, str | None]] = []
    start: int | None = None
    pending: str | None = None
    for ev in events(text, escapes=True):
        if ev.level != 1:
            continue
        if ev.kind == "fs":
            assert ev.tok is not None
            start = ev.tok.start
        elif ev.kind == "sc" and as_text and ev.tok is not None and ev.tok.kind == "s":
            pending = ev.value
        elif ev.kind == "fe":
            if as_text and ev.isnull:
                out.append((ev.name, None))
            elif pending is not None:
                out.append((ev.name, pending))
            else:
                assert start is not None
                out.append((ev.name, text[start : ev.prev_end]))
            pending = None
    return out


def strip_nulls(text: str) -> str:
    """json_strip_nulls: the value rewritten without white space, object fields whose
    value is null left out (array elements kept), strings re-escaped by escape_json."""
    out: list[str] = []
    last = ""
    skip_null = False
    for ev in events(text, escapes=True):
        k = ev.kind
        piece = ""
        if k == "os":
            piece = "{"
        elif k == "oe":
            piece = "}"
        elif k == "as":
            piece = "["
        elif k == "ae":
            piece = "]"
        elif k == "fs":
            if ev.isnull:
                skip_null = True
                continue
            piece = ("" if last == "{" else ",") + escape_json(ev.name) + ":"
        elif k == "es":
            if last != "[":
                piece = ","
        elif k == "sc":
            if skip_null:
                skip_null = False
                continue
            assert ev.tok is not None
            piece = escape_json(ev.value) if ev.tok.kind == "s" else ev.value
        if piece:
            out.append(piece)
            last = piece[-1]
    return "".join(out)


# ------------------------------------------------------------------------------ output


def escape_json(s: str) -> str:
    """escape_json: a JSON string literal, control characters as \\b \\f \\n \\r \\t or
    \\u00xx (lower-case hex), everything else as it is."""
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch < " ":
            out.append(
                {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch) or f"\\u{ord(ch):04x}"
            )
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)



# ------------------------------------------------------------------------------ jsonb paths


def jsonb_path(text: str, elems: Sequence[str | None], as_text: bool) -> str | None:
    """``jsonb #> text[]`` / ``#>>`` (jsonb_get_element) over jsonb's output text, whose
    sub-values print as their own jsonb text: each element a key in an object or an index
    in an array (negative from the end, each array on its own), NULL past a scalar."""
    if any(e is None for e in elems):
        return None
    evs = events(text, escapes=True)
    pos = 0  # the event where the current value starts

    def value_span(i: int) -> tuple[int, int, int]:
        """(start, end, index past it) of the value whose first event is ``evs[i]``."""
        ev = evs[i]
        assert ev.tok is not None
        if ev.kind == "sc":
            return ev.tok.start, ev.tok.end, i + 1
        depth, j = 0, i
        while True:
            k = evs[j].kind
            if k in ("os", "as"):
                depth += 1
            elif k in ("oe", "ae"):
                depth -= 1
                if depth == 0:
                    return ev.tok.start, evs[j].prev_end, j + 1
            j += 1

    def members(i: int) -> list[tuple[str, int]]:
        """(name, first event) of each member of the container starting at ``evs[i]``."""
        out: list[tuple[str, int]] = []
        level = evs[i].level + 1
        j = i + 1
        while True:
            ev = evs[j]
            if ev.level == level - 1 and ev.kind in ("oe", "ae"):
                return out
            if ev.level == level and ev.kind in ("fs", "es"):
                out.append((ev.name, j + 1))
            j += 1

    for elem in elems:
        assert elem is not None
        kind = evs[pos].kind
        if kind == "sc":
            return None
        items = members(pos)
        if kind == "os":
            found = [j for name, j in items if name == elem]
            if not found:
                return None
            pos = found[-1]
        else:
            idx = strtoint(elem)
            if idx == INT_MIN or (idx < 0 and -idx > len(items)):
                return None
            if idx < 0:
                idx += len(items)
            if idx >= len(items):
                return None
            pos = items[idx][1]
    start, end, _ = value_span(pos)
    ev = evs[pos]
    if as_text and ev.kind == "sc":
        assert ev.tok is not None
        if ev.tok.kind == "N":
            return None
        return ev.value
    return text[start:end]


def jsonb_field(text: str, key: str, as_text: bool) -> str | None:
    """``jsonb -> text`` / ``->>``: NULL unless the value is an object."""
    toks = tokens(text)
    if not toks or toks[0].kind != "{":
        return None
    return jsonb_path(text, [key], as_text)


def jsonb_element(text: str, index: int, as_text: bool) -> str | None:
    """``jsonb -> int`` / ``->>``: negative from the end; a scalar is stored as a raw
    one-element array, so its element 0 (and -1) is the scalar itself."""
    toks = tokens(text)
    if not toks or toks[0].kind == "{":
        return None
    if toks[0].kind != "[":
        return jsonb_path(text, [], as_text) if index in (0, -1) else None
    n = _array_counts(text, toks)[0]
    if index < 0:
        if -index > n:
            return None
        index += n
    return jsonb_path(text, [str(index)], as_text)


# ------------------------------------------------------------------------------ to json

#: How datum_to_json writes a value, by the kind the rewriter gives its type: ``n`` a
#: number (int2 … numeric, float: as printed, quoted when not a JSON number: NaN,
#: Infinity), ``b`` boolean, ``d`` date, ``t`` timestamp, ``z`` timestamptz (ISO 8601 with
#: ``T`` and a ``+00:00`` offset, as JsonEncodeDateTime's XSD style), ``j`` json/jsonb
#: (their text as it is), ``s`` anything else (its output text as a JSON string).
KINDS = frozenset("nbdtzjs")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_ISO_STAMP = re.compile(r"(-?[0-9]{4,}-[0-9]{2}-[0-9]{2}) ([0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?)([+-][0-9]{2}(?::[0-9]{2}){0,2})?( BC)?")


def value_json(printed: str, kind: str, key: bool = False) -> str:
    """datum_to_json of a scalar whose output function printed ``printed``; ``key``: as an
    object key (key_scalar: numbers and booleans quoted too)."""
    if kind == "n":
        return printed if not key and _NUMBER.fullmatch(printed) else escape_json(printed)
    if kind == "b":
        word = "true" if printed in ("t", "true") else "false"
        return escape_json(word) if key else word
    if kind in ("t", "z"):
        m = _ISO_STAMP.fullmatch(printed)
        if m is not None:
            date, clock, tz, bc = m.groups()
            if (tz is not None) != (kind == "z"):
                raise PgError("XX000", f"unexpected timestamp text {printed!r}")
            if tz is not None and len(tz) == 3:
                tz += ":00"  # (XSD style: the minutes always, the seconds when there are any)
            printed = f"{date}T{clock}{tz or ''}{bc or ''}"
        elif printed not in ("infinity", "-infinity"):
            raise PgError("XX000", f"unexpected timestamp text {printed!r}")
        return '"' + printed + '"'
    if kind == "d":
        return '"' + printed + '"'
    if kind == "j":
        if key:
            raise PgError("22023", "key value must be scalar, not array, composite, or json")
        return printed
    return escape_json(printed)


def parse_array_out(text: str) -> list[object]:
    """array_out's text (``{1,"a b",NULL,{2,3}}``) back into nested lists of element
    texts (None for NULL)."""
    pos = 0
    n = len(text)

    def level() -> list[object]:
        nonlocal pos
        if pos >= n or text[pos] != "{":
            raise PgError("XX000", f"unexpected array text {text!r}")
        pos += 1
        out: list[object] = []
        if pos < n and text[pos] == "}":
            pos += 1
            return out
        while True:
            if pos >= n:
                raise PgError("XX000", f"unexpected array text {text!r}")
            c = text[pos]
            if c == "{":
                out.append(level())
            elif c == '"':
                pos += 1
                buf: list[str] = []
                while text[pos] != '"':
                    if text[pos] == "\\":
                        pos += 1
                    buf.append(text[pos])
                    pos += 1
                pos += 1
                out.append("".join(buf))
            else:
                j = pos
                while text[j] not in ",}":
                    j += 1
                word = text[pos:j]
                out.append(None if word == "NULL" else word)
                pos = j
            if text[pos] == ",":
                pos += 1
                continue
            if text[pos] != "}":
                raise PgError("XX000", f"unexpected array text {text!r}")
            pos += 1
            return out

    items = level()
    if pos != n:
        raise PgError("XX000", f"unexpected array text {text!r}")
    return items


def array_json(printed: str, kind: str, pretty: bool = False) -> str:
    """array_to_json of an array whose output text is ``printed``: nested dimensions as
    nested JSON arrays, NULL as null; ``pretty`` breaks lines between the outer elements
    only, as array_dim_to_json does."""

    def dim(items: list[object], sep: str) -> str:
        parts = []
        for item in items:
            if item is None:
                parts.append("null")
            elif isinstance(item, list):
                parts.append(dim(item, ","))
            else:
                parts.append(value_json(str(item), kind))
        return "[" + sep.join(parts) + "]"

    return dim(parse_array_out(printed), ",\n " if pretty else ",")


def agg_json(items: Sequence[str | None], structured: bool) -> str:
    """json_agg's text from its values' JSON texts (None for NULL): ``[a, b]``, and before
    each later non-null array or record a line break (json_agg_transfn's "\\n ")."""
    parts: list[str] = []
    for i, item in enumerate(items):
        if item is None:
            parts.append("null")
        elif i and structured:
            parts.append("\n " + item)
        else:
            parts.append(item)
    return "[" + ", ".join(parts) + "]"


def object_agg_json(pairs: Sequence[str]) -> str:
    """json_object_agg's text from its ``"key" : value`` pieces."""
    return "{ " + ", ".join(pairs) + " }"


def record_text(fields: Sequence[str | None]) -> str:
    """record_out of text fields: quoted when empty or holding ``"\\(),`` or white space."""
    out = []
    for f in fields:
        if f is None:
            out.append("")
        elif f and not any(c in '"\\(),' or c in _C_SPACE for c in f):
            out.append(f)
        else:
            out.append('"' + f.replace("\\", "\\\\").replace('"', '""') + '"')
    return "(" + ",".join(out) + ")"


# ------------------------------------------------------------------------------ json_object


def json_object(items: object, values: object = None, jsonb: bool = False, two: bool = False) -> str:
    """json_object / jsonb_object of text arrays given as nested lists (``[]`` for the
    empty array, which has no dimensions): one array of alternating keys and values, or
    of two-element rows; or (``two``) an array of keys and one of values."""
    err = "2202E"
    pairs: list[tuple[str | None, str | None]] = []
    if two:
        kd, vd = _dims(items), _dims(values)
        if len(kd) > 1 or len(kd) != len(vd):
            raise PgError(err, "wrong number of array subscripts")
        if not kd:
            return "{}"
        keys, vals = flatten(items), flatten(values)
        if len(keys) != len(vals):
            raise PgError(err, "mismatched array dimensions")
        pairs = list(zip(keys, vals, strict=True))
    else:
        dims = _dims(items)
        if not dims:
            return "{}"
        if len(dims) == 1 and dims[0] % 2:
            raise PgError(err, "array must have even number of elements")
        if len(dims) == 2 and dims[1] != 2:
            raise PgError(err, "array must have two columns")
        if len(dims) > 2:
            raise PgError(err, "wrong number of array subscripts")
        flat = flatten(items)
        pairs = [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]
    parts = []
    for k, v in pairs:
        if k is None:
            raise PgError("22004", "null value not allowed for object key")
        parts.append(escape_json(k) + " : " + ("null" if v is None else escape_json(v)))
    out = "{" + ", ".join(parts) + "}"
    if jsonb:
        from decoding.pgvalues.textin import jsonb_in

        return jsonb_in(out)
    return out


def _dims(items: object) -> list[int]:
    dims: list[int] = []
    while isinstance(items, list) and items:
        dims.append(len(items))
        items = items[0]
    return dims


def flatten(items: object) -> list[str | None]:
    if isinstance(items, list):
        return [x for item in items for x in flatten(item)]
    return [items]  # type: ignore[list-item]


def parse_array_in(text: str) -> list[object]:
    """A text[] literal (array_in) with its dimensions, as nested lists; 22P02 for what
    array_in refuses. Only needed where a function takes a literal of more than one
    dimension (json_object): one-dimensional ones go through the lake's own parser."""

    s = text.strip(_C_SPACE)
    if not s.startswith("{") or not s[1:].lstrip(_C_SPACE).startswith("{"):
        return list(array_in_elements(text))
    pos = 0

    def malformed(detail: str) -> PgError:
        return PgError("22P02", f'malformed array literal: "{text}"', detail=detail)

    def level() -> list[object]:
        nonlocal pos
        pos += 1  # "{"
        out: list[object] = []
        while True:
            while pos < len(s) and s[pos] in _C_SPACE:
                pos += 1
            if pos >= len(s):
                raise malformed("Unexpected end of input.")
            c = s[pos]
            if c == "{":
                out.append(level())
            elif c == "}" and not out:
                pos += 1
                return out
            else:
                j = pos
                depth_quote = False
                while j < len(s) and (depth_quote or s[j] not in ",}{"):
                    if s[j] == "\\":
                        j += 1
                    elif s[j] == '"':
                        depth_quote = not depth_quote
                    j += 1
                out.append(array_in_elements("{" + s[pos:j] + "}")[0] if s[pos:j].strip(_C_SPACE) else "")
                pos = j
            while pos < len(s) and s[pos] in _C_SPACE:
                pos += 1
            if pos < len(s) and s[pos] == ",":
                pos += 1
                continue
            if pos < len(s) and s[pos] == "}":
                pos += 1
                return out
            raise malformed("Unexpected array element.")

    items = level()
    if s[pos:].strip(_C_SPACE):
        raise malformed("Junk after closing right brace.")
    _check_rectangular(items, malformed)
    return items


def _check_rectangular(items: list[object], malformed: Callable[[str], PgError]) -> None:
    """Sub-arrays of one size at each level, and elements only at the deepest."""
    dims = _dims(items)

    def walk(node: object, depth: int) -> None:
        if depth < len(dims):
            if not isinstance(node, list) or len(node) != dims[depth]:
                raise malformed("Multidimensional arrays must have sub-arrays with matching dimensions.")
            for child in node:
                walk(child, depth + 1)
        elif isinstance(node, list):
            raise malformed("Multidimensional arrays must have sub-arrays with matching dimensions.")

    walk(items, 0)
