"""Type lookups the codecs need beyond ``decoding.pgtypes``."""

from __future__ import annotations

import re

from decoding.pgtypes import ColumnType, base_types, parse_type

_BY_NAME = {t.name: t for t in base_types()}
_INTERNAL = re.compile(r"^\s*([a-z]+[0-9]+|[a-z]+)\s*(\[\])?\s*$")


def column_type(text: str) -> ColumnType:
    """``parse_type`` that also takes internal names with digits (``int4``, ``float8[]``)."""
    m = _INTERNAL.match(text.lower())
    if m and m.group(1) in _BY_NAME and m.group(1) not in ("bpchar",):
        return ColumnType(_BY_NAME[m.group(1)], -1, bool(m.group(2)))
    return parse_type(text)


def element_type(ctype: ColumnType) -> ColumnType:
    return ColumnType(ctype.base, ctype.typmod, False)


def array_of(ctype: ColumnType) -> ColumnType:
    return ColumnType(ctype.base, ctype.typmod, True)
