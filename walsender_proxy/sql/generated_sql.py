"""Stored generated columns as statements write them (``GENERATED ALWAYS AS (…) STORED``),
cooked as PostgreSQL 15's ``cookDefault`` cooks a generation expression: analysed over the
table's other columns (:mod:`walsender_proxy.sql.cooked_exprs`, kind ``GENERATED``),
coerced to the column's type by assignment, printed as ``pg_get_expr`` prints it, and
translated to the DuckDB expression the lake computes the column with on every write
(``lake/generated.py``).

What an INSERT or UPDATE may say of such a column is PostgreSQL's rewriter's rule
(``rewriteTargetListIU``): DEFAULT only, 428C9 otherwise, whatever OVERRIDING says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pglast import ast, enums

from decoding.catalog import EnumType, Generation, Table
from decoding.errors import PgError
from decoding.pgtypes import ColumnType
from walsender_proxy.sql import cooked_exprs as cx
from walsender_proxy.sql import default_exprs as dx

_C = enums.ConstrType


def cook(raw: Any, t: Table, name: str, ctype: ColumnType, user_enums: Mapping[int, EnumType] | None = None) -> Generation:
    """The generation expression of column ``name`` (of type ``ctype``) of ``t``: its
    printed forms, its DuckDB form and the columns it reads (the pg_attrdef OID is the
    lake's to give)."""
    try:
        tree = cx.Cooker(t, cx.GENERATED, user_enums).expr(raw)
        tree = dx._coerce(tree, dx._ty(ctype), explicit=False, colname=name)
        duck = cx.duck(tree, raising=True)
    except (cx.Unsupported, dx._Unsupported) as e:
        raise PgError("0A000", f"generation expression {e} is not supported by walsender-proxy") from None
    return Generation(
        expr=cx.deparse(tree, False),
        pretty=cx.deparse(tree, True),
        duck=duck,
        attnums=tuple(cx.attnums(tree, [])),
    )


def is_generated(c: Any) -> bool:
    return isinstance(c, ast.Constraint) and c.contype == _C.CONSTR_GENERATED


def not_assignable(name: str, update: bool) -> PgError:
    """rewriteTargetListIU's refusal of a value given to a generated column."""
    message = f'column "{name}" can only be updated to DEFAULT' if update else f'cannot insert a non-DEFAULT value into column "{name}"'
    return PgError("428C9", message, detail=f'Column "{name}" is a generated column.')
