"""Identifiers as PostgreSQL's ``quote_identifier`` writes them, for the base layer (the
walsender process prints names with it: test_decoding's output, messages), with no SQL
layer or catalog data loaded.

``QUOTED_KEYWORDS`` are PostgreSQL 15's keywords that are not UNRESERVED_KEYWORD (the ones
an identifier must be quoted to be): the same words as the generated catalog data's
``pg_get_keywords`` rows of those categories, checked by a unit test.
"""

from __future__ import annotations

import re

QUOTED_KEYWORDS: frozenset[str] = frozenset((
    "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric",
    "authorization", "between", "bigint", "binary", "bit", "boolean", "both", "case", "cast",
    "char", "character", "check", "coalesce", "collate", "collation", "column", "concurrently",
    "constraint", "create", "cross", "current_catalog", "current_date", "current_role",
    "current_schema", "current_time", "current_timestamp", "current_user", "dec", "decimal",
    "default", "deferrable", "desc", "distinct", "do", "else", "end", "except", "exists",
    "extract", "false", "fetch", "float", "for", "foreign", "freeze", "from", "full", "grant",
    "greatest", "group", "grouping", "having", "ilike", "in", "initially", "inner", "inout",
    "int", "integer", "intersect", "interval", "into", "is", "isnull", "join", "lateral",
    "leading", "least", "left", "like", "limit", "localtime", "localtimestamp", "national",
    "natural", "nchar", "none", "normalize", "not", "notnull", "null", "nullif", "numeric",
    "offset", "on", "only", "or", "order", "out", "outer", "overlaps", "overlay", "placing",
    "position", "precision", "primary", "real", "references", "returning", "right", "row",
    "select", "session_user", "setof", "similar", "smallint", "some", "substring", "symmetric",
    "table", "tablesample", "then", "time", "timestamp", "to", "trailing", "treat", "trim",
    "true", "union", "unique", "user", "using", "values", "varchar", "variadic", "verbose",
    "when", "where", "window", "with", "xmlattributes", "xmlconcat", "xmlelement", "xmlexists",
    "xmlforest", "xmlnamespaces", "xmlparse", "xmlpi", "xmlroot", "xmlserialize", "xmltable",
))

_PLAIN = re.compile(r"[a-z_][a-z0-9_]*")


def quote_identifier(name: str) -> str:
    """``name`` as an identifier: bare when it is lower case, plain and not a keyword
    that needs quoting; else in double quotes (``"`` doubled)."""
    if _PLAIN.fullmatch(name) and name not in QUOTED_KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


def quote_qualified_identifier(schema: str | None, name: str) -> str:
    return name if schema is None else f"{quote_identifier(schema)}.{quote_identifier(name)}"
