"""``parse_ident(qualname text [, strict boolean])``: a qualified SQL identifier split into
its parts, as PostgreSQL 15's misc.c splits it — quoted parts as written (``""`` for a
quote), others lower-cased (ASCII letters only, as downcase_identifier in a multibyte
encoding), none truncated; 22023 ``string is not a valid identifier`` with its DETAILs.
Strict (the default) refuses anything after the last part."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from decoding.errors import PgError
from walsender_proxy.sql.udf_errors import keep_errors, strict_rows

UDF = "wpx_parse_ident"
_SPACE = " \t\n\r\f"


def _ident_start(c: str) -> bool:
    return c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z") or ord(c) > 127


def _ident_cont(c: str) -> bool:
    return ("0" <= c <= "9") or c == "$" or _ident_start(c)


def parse_ident(qualname: str, strict: bool) -> list[str]:
    def invalid(detail: str | None = None) -> PgError:
        return PgError("22023", f'string is not a valid identifier: "{qualname}"', detail=detail)

    s, i, n = qualname, 0, len(qualname)
    out: list[str] = []
    after_dot = False
    while i < n and s[i] in _SPACE:
        i += 1
    while True:
        missing = True
        if i < n and s[i] == '"':
            part, j = [], i + 1
            while True:
                k = s.find('"', j)
                if k < 0:
                    raise invalid("String has unclosed double quotes.")
                part.append(s[j:k])
                if k + 1 < n and s[k + 1] == '"':
                    part.append('"')
                    j = k + 2
                    continue
                i = k + 1
                break
            name = "".join(part)
            if not name:
                raise invalid("Quoted identifier must not be empty.")
            out.append(name)
            missing = False
        elif i < n and _ident_start(s[i]):
            j = i + 1
            while j < n and _ident_cont(s[j]):
                j += 1
            out.append("".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s[i:j]))
            i, missing = j, False
        if missing:
            if i < n and s[i] == ".":
                raise invalid('No valid identifier before ".".')
            if after_dot:
                raise invalid('No valid identifier after ".".')
            raise invalid()
        while i < n and s[i] in _SPACE:
            i += 1
        if i < n and s[i] == ".":
            after_dot = True
            i += 1
            while i < n and s[i] in _SPACE:
                i += 1
        elif i >= n:
            break
        else:
            if strict:
                raise invalid()
            break
    return out


def install(con: Any, have: frozenset[str] | set[str] = frozenset()) -> None:
    if UDF not in have:
        fn = strict_rows(parse_ident, pa.list_(pa.string()), 2)
        con.create_function(UDF, keep_errors(fn), ["VARCHAR", "BOOLEAN"], "VARCHAR[]", type="arrow", null_handling="special")
