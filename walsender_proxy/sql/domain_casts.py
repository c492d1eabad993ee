"""A cast to a domain in a query (``x::posint``, ``CAST(x AS posint)``): the cast to the
domain's base type, then PostgreSQL's ``CoerceToDomain`` as a DuckDB expression that is
the value or the error of the first constraint it fails (23502, 23514).

The domain is looked up in the catalog and search path the statement is rewritten under
(:data:`walsender_proxy.sql.sql_function_calls.LOOKUP`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from pglast import ast, parse_sql

from decoding.catalog import DOMAIN_VALUE, Catalog, Check, Domain
from decoding.errors import PgError
from walsender_proxy.lake.domains import constraints
from walsender_proxy.sql.nodes import all_nodes
from walsender_proxy.sql.param_context import FindTable, assigned
from walsender_proxy.sql.sql_function_calls import LOOKUP, type_shown

_VALUE = "__wpx_domain_value"


def visible(names: Sequence[str]) -> tuple[Domain, Catalog] | None:
    """The domain a type name in a query names (None: no domain by that name)."""
    lk = LOOKUP.get()
    if lk is None or not lk.catalog.domains:
        return None
    d = lk.catalog.resolve_domain(names, lk.path)
    return None if d is None else (d, lk.catalog)


def by_oid(oid: int) -> Domain | None:
    lk = LOOKUP.get()
    return None if lk is None else lk.catalog.domains.get(oid)


def shown(d: Domain) -> str:
    """The domain's name as format_type_be gives it."""
    return type_shown(d)


def parameter_domains(node: Any, find_table: FindTable, find_domain: Any) -> dict[int, int]:
    """The parameters PostgreSQL's parse analysis types as a domain (``$n`` index from 0 →
    domain OID): a VALUES item of an INSERT column, an UPDATE's ``SET col = $n``, a cast
    ``$n::d``. (An operator's unknown side takes the base type: binary_oper_exact.)"""
    out: dict[int, int] = {}

    def give(p: Any, oid: int) -> None:
        if isinstance(p, ast.ParamRef) and oid and p.number - 1 not in out:
            out[p.number - 1] = oid

    for n in all_nodes(node):
        if isinstance(n, ast.InsertStmt | ast.UpdateStmt):
            for v, c in assigned(n, find_table):
                give(v, c.type.domain if c is not None else 0)
        elif isinstance(n, ast.TypeCast) and isinstance(n.arg, ast.ParamRef) and not n.typeName.arrayBounds:
            d = find_domain([s.sval for s in n.typeName.names])
            give(n.arg, d.oid if d is not None else 0)
    return out


def _catalog() -> Catalog | None:
    lk = LOOKUP.get()
    return None if lk is None else lk.catalog


def base_type_name(d: Domain, location: int | None) -> ast.TypeName:
    """The domain's base type as a TypeName (``numeric(12,2)``, ``int4[]``, an enum by its
    qualified name)."""
    en = cat.enum_of(d.base) if (cat := _catalog()) is not None else None
    if en is not None:
        bounds = (ast.Integer(ival=-1),) if d.base.is_array else None
        return ast.TypeName(names=(ast.String(sval=en.schema), ast.String(sval=en.name)), arrayBounds=bounds, typemod=-1, location=location if location is not None else -1)
    stmt = parse_sql(f"SELECT NULL::{d.base.type_text()}")[0].stmt
    tn = stmt.targetList[0].val.typeName  # type: ignore[union-attr]
    tn.location = location if location is not None else -1
    return tn


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _check_case(cat: Catalog, d: Domain) -> str | None:
    whens: list[str] = []
    value = f'"{_VALUE}"'
    for c in constraints(cat, d.oid):
        if c is None:
            whens.append(f"WHEN {value} IS NULL THEN error({_literal(f'PGERR[23502] domain {d.name} does not allow null values')})")
        else:
            cond = Check.fill(c.duck, {DOMAIN_VALUE: value})
            msg = f'PGERR[23514] value for domain {d.name} violates check constraint "{c.name}"'
            whens.append(f"WHEN NOT coalesce(({cond}), true) THEN error({_literal(msg)})")
    if not whens:
        return None
    return f"CASE {' '.join(whens)} ELSE {value} END"


def _substitute(node: Any, value: ast.Node) -> Any:
    """``node`` with each reference to the placeholder replaced by a copy of ``value``."""
    if isinstance(node, ast.ColumnRef) and len(node.fields) == 1 and getattr(node.fields[0], "sval", None) == _VALUE:
        return copy.deepcopy(value)
    if isinstance(node, tuple):
        return tuple(_substitute(x, value) for x in node)
    if isinstance(node, ast.Node):
        for name in node:  # (a pglast node iterates over its attribute names)
            setattr(node, name, _substitute(getattr(node, name), value))
    return node


def coerce(cat: Catalog, d: Domain, value: ast.Node) -> ast.Node:
    """``value`` (an expression of the base type, already rewritten) coerced to ``d``."""
    case = _check_case(cat, d)
    if case is None:
        return value
    try:
        tree = parse_sql(f"SELECT {case}")[0].stmt.targetList[0].val  # type: ignore[union-attr]
    except Exception:  # (a check DuckDB's form of which the parser does not read back)
        raise PgError("0A000", f"a cast to domain {d.name} is not supported by walsender-proxy") from None
    return _substitute(tree, value)
