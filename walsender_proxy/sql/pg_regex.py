"""PostgreSQL's advanced regular expressions (ARE), read into Python's ``re`` where that
provably matches the same, refused (0A000, naming the construct) where it might not.

PostgreSQL's engine (Henry Spencer's) and Python's differ in three ways this module keeps
apart:

- *Syntax.* Only the constructs below are translated; every other one is refused: literals,
  ``.``, bracket expressions with ranges and ``[:class:]``, ``\\d \\s \\w`` (and negations),
  ``\\m \\M \\y \\Y \\A \\Z``, ``^ $`` (whole-string anchors: PostgreSQL's default is not
  newline-sensitive), groups ``( )`` and ``(?: )``, ``|``, greedy ``* + ? {m} {m,} {m,n}``,
  ``\\xhhh \\uhhhh \\Uhhhhhhhh``, the ``***=`` prefix. Classes and case folding are ASCII's
  (``re.ASCII``), as PostgreSQL's under the C locale the proxy reports (lc_ctype): there a
  character above 127 is in no class and has no other case.
- *Which match.* A greedy ARE (one without non-greedy quantifiers, refused here) matches
  the leftmost-longest string; Python's backtracking takes the first alternative that
  succeeds. :class:`Regex` finds Python's leftmost match, then extends it to the longest
  match at the same start (PostgreSQL's), trying longer ends with anchored matches.
- *What subexpressions capture.* PostgreSQL gives earlier subexpressions priority to be
  long; Python gives priority to earlier alternatives and earlier quantifiers. They agree
  when there is no alternation, no quantified capturing group, quantified groups hold a
  fixed-length text, and every capturing group holds at most one quantified element: then
  both take the quantified elements longest first, left to right. Calls that need captures
  (``\\1`` in a replacement, regexp_match(es), subexpr arguments) refuse other patterns.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from decoding.errors import PgError

_CLASSES = {
    "alpha": "A-Za-z",
    "upper": "A-Z",
    "lower": "a-z",
    "digit": "0-9",
    "xdigit": "0-9A-Fa-f",
    "alnum": "0-9A-Za-z",
    "word": "0-9A-Za-z_",
    "space": " \\t\\n\\r\\f\\v",
    "blank": " \\t",
    "punct": "!-/:-@\\[-`{-~",
    "print": " -~",
    "graph": "!-~",
    "cntrl": "\\x00-\\x1f\\x7f",
}
#: ARE escapes naming a character (regc_lex.c's lexescape).
_CHAR_ESCAPES = {"a": "\x07", "b": "\x08", "B": "\\", "e": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_CLASS_ESCAPES = {"d": "0-9", "s": " \\t\\n\\r\\f\\v", "w": "0-9A-Za-z_"}
#: Every letter lexescape knows; any other after a backslash is its REG_EESCAPE.
_KNOWN_ESCAPES = frozenset("aAbBcdDefmMnrsStuUvwWxyYZ0123456789")


def _invalid(what: str) -> PgError:
    return PgError("2201B", f"invalid regular expression: {what}")


def _unsupported(what: str) -> PgError:
    return PgError("0A000", f"{what} in a regular expression is not supported by walsender-proxy")


@dataclass(frozen=True)
class Flags:
    """parse_re_flags's outcome, for the flags this module honours."""

    glob: bool = False
    icase: bool = False
    quote: bool = False
    #: REG_NLSTOP: ``.`` and ``[^…]`` do not match a newline.
    nlstop: bool = False
    #: REG_NLANCH: ``^`` and ``$`` also match after and before a newline.
    nlanch: bool = False


def parse_flags(text: str | None) -> Flags:
    """PostgreSQL's parse_re_flags: each letter in order (later ones override earlier ones);
    expanded syntax and the BRE/ERE flavours are refused."""
    glob = icase = quote = nlstop = nlanch = False
    for ch in text or "":
        if ch == "g":
            glob = True
        elif ch == "i":
            icase = True
        elif ch == "c":
            icase = False
        elif ch == "t":  # (the default)
            continue
        elif ch == "s":
            nlstop = nlanch = False
        elif ch in "mn":
            nlstop = nlanch = True
        elif ch == "p":
            nlstop, nlanch = True, False
        elif ch == "w":
            nlstop, nlanch = False, True
        elif ch == "q":
            quote = True
        elif ch in "xbe":
            raise PgError("0A000", f'the regular expression option "{ch}" is not supported by walsender-proxy')
        else:
            raise PgError("22023", f'invalid regular expression option: "{ch}"')
    return Flags(glob, icase, quote, nlstop, nlanch)


@dataclass
class _Node:
    """What the translator knows of a parsed piece: its Python text, whether its length is
    fixed, how many quantified elements it holds, whether it holds alternation or a
    quantified capturing group."""

    text: str
    fixed: bool = True
    quantified: int = 0
    alternation: bool = False
    groups: int = 0
    is_atom: bool = True  # (a quantifier may follow)
    is_group: bool = False
    capture: bool = False
    #: Estimates of PostgreSQL's NFA: states (bounded repetitions copy their atom) and
    #: quantifiers (each adds arcs to the states around it).
    states: int = 1
    qw: int = 0


#: Beyond these estimates PostgreSQL may answer "regular expression is too complex" (it does
#: for 3000 quantifiers, 65025 repeated states or a 100000-character literal; not for 1000
#: quantifiers or 10000 repeated states): the proxy refuses rather than guess.
_MAX_STATES = 20000
_MAX_QUANTIFIERS = 1500


class _Parser:
    def __init__(self, pattern: str, nlstop: bool = False, nlanch: bool = False) -> None:
        self.p = pattern
        self.nlstop, self.nlanch = nlstop, nlanch
        self.i = 0
        self.ngroups = 0
        self.capture_unsafe: str | None = None
        self.end_sensitive = False
        self.in_constraint = False


    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.p[j] if j < len(self.p) else None

    def parse(self) -> str:
        node = self.alternation(top=True)
        if self.i < len(self.p):  # (a stray ')')
            raise _invalid("parentheses () not balanced")
        if node.states > _MAX_STATES or node.qw > _MAX_QUANTIFIERS:
            raise _unsupported("a pattern this large (PostgreSQL's limit of complexity)")
        self.note_capture_rules(node)
        return node.text

    def note_capture_rules(self, node: _Node) -> None:
        if node.alternation and self.capture_unsafe is None:
            self.capture_unsafe = "alternation (|)"

    def alternation(self, top: bool = False) -> _Node:
        branches = [self.branch()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.branch())
        if len(branches) == 1:
            return branches[0]
        return _Node(
            "|".join(b.text for b in branches),
            fixed=False,
            quantified=sum(b.quantified for b in branches) + 1,
            alternation=True,
            groups=sum(b.groups for b in branches),
            is_atom=False,
            states=sum(b.states for b in branches),
            qw=sum(b.qw for b in branches) + 1,
        )

    def branch(self) -> _Node:
        parts: list[_Node] = []
        while self.i < len(self.p) and self.peek() not in ("|", ")"):
            atom = self.atom()
            atom = self.quantifier(atom)
            parts.append(atom)
        return _Node(
            "".join(p.text for p in parts),
            fixed=all(p.fixed for p in parts),
            quantified=sum(p.quantified for p in parts),
            alternation=any(p.alternation for p in parts),
            groups=sum(p.groups for p in parts),
            is_atom=False,
            states=sum(p.states for p in parts),
            qw=sum(p.qw for p in parts),
        )

    def quantifier(self, atom: _Node) -> _Node:
        ch = self.peek()
        if ch is None or ch not in "*+?{":
            return atom
        if ch == "{" and not (self.peek(1) or "").isdigit():
            return atom  # (a plain '{': the next atom)
        if ch == "{":
            m = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.p, self.i)
            if m is None:
                raise _invalid("braces {} not balanced") if "}" not in self.p[self.i :] else _invalid("invalid repetition count(s)")
            lo = int(m.group(1))
            hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
            if lo > 255 or (hi is not None and (hi > 255 or hi < lo)):
                raise _invalid("invalid repetition count(s)")
            self.i = m.end()
            q = m.group(0)
            fixed_count = hi == lo
            copies = max(hi if hi is not None else lo + 1, 1)
        else:
            self.i += 1
            q = ch
            fixed_count = False
            copies = 1
        if self.peek() == "?":
            raise _unsupported("a non-greedy quantifier")
        if (self.peek() is not None and self.peek() in "*+?") or (self.peek() == "{" and (self.peek(1) or "").isdigit()):
            raise _invalid("quantifier operand invalid")
        if not atom.is_atom:
            raise _invalid("quantifier operand invalid")
        if atom.is_group and (atom.groups > int(atom.capture) or not atom.fixed or atom.quantified) and self.capture_unsafe is None:
            # (which iteration's text a group holds, and how iterations split, is each
            # engine's own)
            self.capture_unsafe = "a quantified group holding a subexpression or text of varying length"
        states, qw = atom.states * copies + 1, atom.qw * copies + 1
        if fixed_count:
            return _Node(atom.text + q, fixed=atom.fixed, quantified=atom.quantified, alternation=atom.alternation,
                         groups=atom.groups, is_atom=False, states=states, qw=qw)  # fmt: skip
        return _Node(
            atom.text + q,
            fixed=False,
            quantified=atom.quantified + 1,
            alternation=atom.alternation,
            groups=atom.groups,
            is_atom=False,
            states=states,
            qw=qw,
        )

    def atom(self) -> _Node:
        ch = self.p[self.i]
        if ch == "(":
            return self.group()
        if ch in "*+?":
            raise _invalid("quantifier operand invalid")
        if ch == "{" and (self.peek(1) or "").isdigit():
            raise _invalid("quantifier operand invalid")
        self.i += 1
        if ch == ".":
            return _Node("[^\\n]" if self.nlstop else ".")
        if ch == "^":
            return _Node("(?:\\A|(?<=\\n))" if self.nlanch else "\\A", is_atom=False)
        if ch == "$":
            self.end_sensitive = True
            return _Node("(?:\\Z|(?=\\n))" if self.nlanch else "\\Z", is_atom=False)
        if ch == "[":
            return _Node(self.bracket())
        if ch == "\\":
            return self.escape()
        return _Node(re.escape(ch))

    def group(self) -> _Node:
        self.i += 1
        capture = True
        if self.peek() == "?":
            kind = self.peek(1)
            if kind == ":":
                capture = False
                self.i += 2
            elif kind in ("=", "!") or (kind == "<" and self.peek(2) in ("=", "!")):
                return self.constraint()
            else:
                raise _unsupported("an embedded option (?...)")
        capture = capture and not self.in_constraint
        if capture:
            self.ngroups += 1
        inner = self.alternation()
        if self.peek() != ")":
            raise _invalid("parentheses () not balanced")
        self.i += 1
        if capture:
            if inner.quantified > 1 and self.capture_unsafe is None:
                self.capture_unsafe = "a capturing group holding more than one quantifier"
            self.note_capture_rules(inner)
        text = ("(" if capture else "(?:") + inner.text + ")"
        return _Node(
            text,
            fixed=inner.fixed,
            quantified=inner.quantified,
            alternation=inner.alternation,
            groups=inner.groups + int(capture),
            is_group=True,
            capture=capture,
            states=inner.states,
            qw=inner.qw,
        )

    def constraint(self) -> _Node:
        """``(?=re) (?!re) (?<=re) (?<!re)``: parentheses inside do not capture (PostgreSQL's
        rule); a lookbehind must have one length (Python's)."""
        behind = self.peek(1) == "<"
        head = self.p[self.i : self.i + (3 if behind else 2)]
        self.i += len(head)
        outer, self.in_constraint = self.in_constraint, True
        inner = self.alternation()
        self.in_constraint = outer
        if self.peek() != ")":
            raise _invalid("parentheses () not balanced")
        self.i += 1
        if behind and not inner.fixed:
            raise _unsupported("a lookbehind constraint of varying length")
        if not behind:
            self.end_sensitive = True
        return _Node("(" + head + inner.text + ")", is_atom=False, states=inner.states, qw=inner.qw)

    def escape(self) -> _Node:
        ch = self.peek()
        if ch is None:
            raise _invalid("invalid escape \\ sequence")
        self.i += 1
        if not ch.isascii() or not ch.isalnum():
            return _Node(re.escape(ch))
        if ch not in _KNOWN_ESCAPES:
            raise _invalid("invalid escape \\ sequence")
        if ch in _CHAR_ESCAPES:
            return _Node(re.escape(_CHAR_ESCAPES[ch]))
        if ch in _CLASS_ESCAPES:
            return _Node(f"[{_CLASS_ESCAPES[ch]}]")
        if ch.lower() in _CLASS_ESCAPES:
            return _Node(f"[^{_CLASS_ESCAPES[ch.lower()]}]")
        if ch == "A":
            return _Node("\\A", is_atom=False)
        if ch == "Z":
            self.end_sensitive = True
            return _Node("\\Z", is_atom=False)
        if ch in "myMY":
            self.end_sensitive = True
            text = {"m": "\\b(?=\\w)", "M": "\\b(?<=\\w)", "y": "\\b", "Y": "\\B"}[ch]
            return _Node(text, is_atom=False)
        if ch in "xuU":
            return self.code_escape(ch)
        if ch.isdigit():
            raise _unsupported("a back reference or octal escape")
        raise _unsupported(f"the escape \\{ch}")

    def code_escape(self, kind: str) -> _Node:
        """``\\x`` and one or more hex digits, ``\\u`` and four, ``\\U`` and eight (lexescape)."""
        m = re.compile(r"[0-9A-Fa-f]+").match(self.p, self.i)
        digits = m.group(0) if m else ""
        want = {"x": None, "u": 4, "U": 8}[kind]
        if want is not None:
            digits = digits[:want]
        if not digits or (want is not None and len(digits) < want):
            raise _invalid("invalid escape \\ sequence")
        self.i += len(digits)
        code = int(digits, 16)
        if code > 0x7FFFFFFE:  # (CHR_MAX)
            raise _invalid("invalid escape \\ sequence")
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return _Node("(?!)")  # (no text holds it)
        return _Node(re.escape(chr(code)))

    def bracket(self) -> str:
        """A bracket expression (the '[' read) as a Python character class."""
        out = []
        negate = False
        if self.peek() == "^":
            negate = True
            self.i += 1
        first = True
        while True:
            ch = self.peek()
            if ch is None:
                raise _invalid("brackets [] not balanced")
            if ch == "]" and not first:
                self.i += 1
                break
            first = False
            if ch == "[" and self.peek(1) in (":", ".", "="):
                kind = self.peek(1)
                end = self.p.find(kind + "]", self.i + 2)
                if end < 0:
                    raise _invalid("brackets [] not balanced")
                name = self.p[self.i + 2 : end]
                self.i = end + 2
                if kind != ":":
                    raise _unsupported("a collating element or equivalence class")
                if name not in _CLASSES:
                    raise _invalid("invalid character class")
                if self.peek() == "-" and self.peek(1) != "]":
                    raise _invalid("invalid character range")
                out.append(_CLASSES[name])
                continue
            lo, members = self.bracket_char()
            if members is not None:  # (a class escape: \d \s \w)
                out.append(members)
                continue
            if self.peek() == "-" and self.peek(1) not in ("]", None):
                self.i += 1
                hi, hi_members = self.bracket_char()
                if hi_members is not None or ord(hi) < ord(lo):
                    raise _invalid("invalid character range")
                out.append(re.escape(lo) + "-" + re.escape(hi))
            else:
                out.append(re.escape(lo))
        if negate and self.nlstop:  # (cbracket: never a newline)
            out.append("\\n")
        body = "".join(out)
        if not body:
            return "(?!)" if not negate else "[\\s\\S]"  # (cannot happen: ']' first is a member)
        return ("[^" if negate else "[") + body + "]"

    def bracket_char(self) -> tuple[str, str | None]:
        """One member character, or ("", members) for a class escape (``\\d \\s \\w``)."""
        ch = self.p[self.i]
        self.i += 1
        if ch != "\\":
            return ch, None
        nxt = self.peek()
        if nxt is None:
            raise _invalid("brackets [] not balanced")
        self.i += 1
        if not nxt.isascii() or not nxt.isalnum():
            return nxt, None
        if nxt in _CHAR_ESCAPES:
            return _CHAR_ESCAPES[nxt], None
        if nxt in _CLASS_ESCAPES:
            return "", _CLASS_ESCAPES[nxt]
        if nxt not in _KNOWN_ESCAPES:
            raise _invalid("invalid escape \\ sequence")
        raise _unsupported(f"the escape \\{nxt} in a bracket expression")


@dataclass(frozen=True)
class Regex:
    """A translated pattern and how far its Python matches can be trusted."""

    compiled: re.Pattern[str]
    ngroups: int
    #: Why captures could differ from PostgreSQL's (None: they cannot).
    capture_unsafe: str | None
    #: Whether the match depends on what follows its end ($, \Z, word boundaries): an
    #: anchored check of a longer end must then see the rest of the string.
    end_sensitive: bool
    body: str
    flags: int

    def found_in(self, s: str) -> bool:
        """Whether the pattern matches anywhere in ``s`` (which match does not matter)."""
        return self.compiled.search(s) is not None

    def search(self, s: str, pos: int, captures: bool) -> re.Match[str] | tuple[int, int] | None:
        """PostgreSQL's match found searching from ``pos``: a Match when ``captures``
        (refused where its groups could differ), else the span (start, end)."""
        m = self.compiled.search(s, pos)
        if m is None:
            return None
        end = self._longest_end(s, m.start(), m.end())
        if not captures:
            return m.start(), end
        if end != m.end():
            raise PgError("0A000", "subexpressions of a regular expression whose longest match is not its first alternative's are not supported by walsender-proxy")
        if self.capture_unsafe is not None:
            raise _unsupported(f"{self.capture_unsafe}, with the subexpressions' matches used,")
        return m

    def _longest_end(self, s: str, start: int, end: int) -> int:
        if end == len(s) or self.fixed_length:
            return end
        for cand in range(len(s), end, -1):
            if self.end_sensitive:
                if _anchored(self.body, self.flags, len(s) - cand).match(s, start):
                    return cand
            elif self.anchored.fullmatch(s, start, cand):
                return cand
        return end

    @functools.cached_property
    def anchored(self) -> re.Pattern[str]:
        return re.compile(f"(?:{self.body})", self.flags)

    @functools.cached_property
    def fixed_length(self) -> bool:
        return _fixed(self.body)


@functools.lru_cache(maxsize=512)
def _anchored(body: str, flags: int, rest: int) -> re.Pattern[str]:
    return re.compile(f"(?:{body})(?=[\\s\\S]{{{rest}}}\\Z)", flags)


def _fixed(body: str) -> bool:
    """Whether every match has one length: no quantifier but {m} and no alternation (a
    conservative reading of the translated text)."""
    depth = 0
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            j = i + 1
            if j < len(body) and body[j] == "^":
                j += 1
            j += 1
            while j < len(body) and body[j] != "]":
                j += 2 if body[j] == "\\" else 1
            i = j + 1
            continue
        if ch in "*+?|" and not (ch == "?" and i > 0 and body[i - 1] == "("):
            return False
        if ch == "{" and not re.match(r"\{\d+\}", body[i:]):
            return False
        depth += ch == "("
        i += 1
    return True


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str, icase: bool, quote: bool, nlstop: bool = False, nlanch: bool = False) -> Regex:
    """The pattern (with the flags' case and quoting) as a :class:`Regex`, PostgreSQL's
    2201B for a pattern it rejects, 0A000 for one this module does not translate."""
    if pattern.startswith("***="):
        pattern, quote = pattern[4:], True
    elif pattern.startswith("***:"):
        pattern = pattern[4:]
    elif pattern.startswith("***"):
        raise _invalid("invalid regexp (reg version 0.8)")
    if pattern.startswith("(?") and re.match(r"\(\?[a-z]*\)", pattern):
        raise _unsupported("an embedded option (?...)")
    flags = re.ASCII | re.DOTALL | (re.IGNORECASE if icase else 0)
    if quote:
        body = re.escape(pattern)
        return Regex(re.compile(body, flags), 0, None, False, body, flags)
    parser = _Parser(pattern, nlstop, nlanch)
    body = parser.parse()
    return Regex(re.compile(body, flags), parser.ngroups, parser.capture_unsafe, parser.end_sensitive, body, flags)
