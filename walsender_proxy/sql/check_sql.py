"""CHECK constraints as statements write them (a column's ``CHECK (…)``, a table's
``[CONSTRAINT name] CHECK (…) [NO INHERIT] [NOT VALID]``), cooked as PostgreSQL 15's
``cookConstraint`` cooks them and printed as ``pg_get_constraintdef`` prints them
(``ruleutils.c``), and translated to a DuckDB expression the lake evaluates over written
rows (``lake/checks.py``).

The lake keeps the texts (:class:`walsender_proxy.lake.check_ddl.CheckSpec`), columns named
by attnum in them, so a RENAME COLUMN reprints them as PostgreSQL does. The forms taken and
the errors raised are :mod:`walsender_proxy.sql.cooked_exprs`'; another form is refused with
0A000 when the constraint is made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pglast import ast, enums

from decoding.catalog import EnumType, Table
from decoding.errors import PgError
from walsender_proxy.lake.check_ddl import CheckSpec
from walsender_proxy.sql import cooked_exprs as cx
from walsender_proxy.sql import default_exprs as dx

_C = enums.ConstrType


def cook(c: ast.Constraint, t: Table, *, new_table: bool = False, user_enums: Mapping[int, EnumType] | None = None) -> CheckSpec:
    """cookConstraint of a CHECK constraint of table ``t``, and its DuckDB form
    (``user_enums``: the catalog's, for enum columns)."""
    if c.deferrable or c.initdeferred:
        raise PgError("0A000", "CHECK constraints cannot be marked DEFERRABLE")
    try:
        tree = cx.Cooker(t, cx.CHECK, user_enums).boolean(c.raw_expr)
        duck = cx.duck(tree)
    except (cx.Unsupported, dx._Unsupported) as e:
        raise PgError("0A000", f"CHECK constraint {e} is not supported by walsender-proxy") from None
    return CheckSpec(
        name=c.conname,
        expr=cx.deparse(tree, False),
        pretty=cx.deparse(tree, True),
        duck=duck,
        attnums=tuple(cx.attnums(tree, [])),
        not_valid=bool(c.skip_validation) and not new_table,
        no_inherit=bool(c.is_no_inherit),
    )


def is_check(c: Any) -> bool:
    return isinstance(c, ast.Constraint) and c.contype == _C.CONSTR_CHECK


Cook = Callable[[ast.Constraint, Table], CheckSpec]
