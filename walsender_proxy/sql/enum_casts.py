"""Enum values in a query: a cast to an enum (``'red'::rainbow``, ``t::rainbow``), an
unknown literal or text parameter met by an enum (``col < 'green'``), and PostgreSQL's
enum support functions (``enum_first``, ``enum_last``, ``enum_range``).

DuckDB computes with an enum as its ENUM of the labels in the enum's order (the lake's
``enum_sql_type``): comparisons, ORDER BY, min and max then follow the enum's order, as
PostgreSQL's enum operators do. What DuckDB would do differently is done here: its ENUM
meets a VARCHAR as text (``col < 'green'`` would compare labels alphabetically), and its
cast error names no PostgreSQL type. So every text that becomes an enum value goes through
``enum_in``'s check first — at rewrite time for a literal (22P02 at the literal's
position), in the query for any other text (the same error, raised by DuckDB's
``error()``).

The enum is looked up in the catalog and search path the statement is rewritten under
(:data:`walsender_proxy.sql.sql_function_calls.LOOKUP`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

from pglast import ast
from pglast.enums import A_Expr_Kind, NullTestType

from decoding.catalog import EnumType
from decoding.errors import PgError
from walsender_proxy.sql.sql_function_calls import LOOKUP, type_shown


def visible(names: Sequence[str]) -> EnumType | None:
    """The enum a type name in a query names (None: no enum by that name)."""
    lk = LOOKUP.get()
    if lk is None or not lk.catalog.enums:
        return None
    return lk.catalog.resolve_enum(names, lk.path)


def by_oid(oid: int) -> EnumType | None:
    lk = LOOKUP.get()
    return None if lk is None else lk.catalog.enums.get(oid)


def shown(en: EnumType) -> str:
    """The enum's name as format_type_be gives it."""
    return type_shown(en)


def _s(text: str) -> ast.A_Const:
    return ast.A_Const(val=ast.String(sval=text))


def duck_type(en: EnumType, array: bool = False) -> ast.TypeName:
    """DuckDB's type of the enum's values: ENUM of its labels in order (VARCHAR for an
    enum without labels, which has no values)."""
    bounds = (ast.Integer(ival=-1),) if array else None
    if not en.labels:
        return ast.TypeName(names=(ast.String(sval="varchar"),), arrayBounds=bounds, typemod=-1)
    return ast.TypeName(names=(ast.String(sval="enum"),), typmods=tuple(_s(x) for x in en.names), arrayBounds=bounds, typemod=-1)


def as_enum(value: ast.Node, en: EnumType, array: bool = False) -> ast.TypeCast:
    """``value`` (labels already checked) as DuckDB's type of the enum."""
    return ast.TypeCast(arg=value, typeName=duck_type(en, array))


def input_error(en: EnumType, label: str) -> PgError:
    return PgError("22P02", f'invalid input value for enum {shown(en)}: "{label}"')


def _unsafe(en: EnumType) -> frozenset[str]:
    lk = LOOKUP.get()
    return frozenset() if lk is None or lk.unsafe_labels is None else lk.unsafe_labels(en)


def _check(label: str, en: EnumType) -> None:
    """enum_in's checks of one label: 22P02 for none of the enum's, 55P04 for one this
    transaction added to an enum it did not create."""
    if label not in en.names:
        raise input_error(en, label)
    if label in _unsafe(en):
        raise PgError(
            "55P04",
            f'unsafe use of new value "{label}" of enum type {shown(en)}',
            hint="New enum values must be committed before they can be used.",
        )


def label_value(label: str, en: EnumType) -> ast.TypeCast:
    """enum_in of a literal label: the value, or its error."""
    _check(label, en)
    return as_enum(_s(label), en)


def labels_value(labels: Sequence[str | None], en: EnumType) -> ast.TypeCast:
    """An array literal's elements (None: NULL) as an array of the enum."""
    for x in labels:
        if x is not None:
            _check(x, en)
    elems = tuple(ast.A_Const(isnull=True) if x is None else _s(x) for x in labels)
    return as_enum(ast.A_ArrayExpr(elements=elems), en, array=True)


def from_text(value: ast.Node, en: EnumType) -> ast.Node:
    """enum_in of a text expression, evaluated in the query: ``CASE WHEN v IS NULL THEN
    NULL WHEN v IN (labels) THEN v::enum ELSE error(…) END``."""
    def v() -> ast.Node:
        return copy.deepcopy(value)

    text = ast.TypeCast(arg=v(), typeName=ast.TypeName(names=(ast.String(sval="varchar"),), typemod=-1))
    message = ast.A_Expr(
        kind=A_Expr_Kind.AEXPR_OP,
        name=(ast.String(sval="||"),),
        lexpr=ast.A_Expr(
            kind=A_Expr_Kind.AEXPR_OP,
            name=(ast.String(sval="||"),),
            lexpr=_s(f'PGERR[22P02] invalid input value for enum {shown(en)}: "'),
            rexpr=text,
        ),
        rexpr=_s('"'),
    )
    fail = ast.FuncCall(funcname=(ast.String(sval="error"),), args=(message,))
    whens = [ast.CaseWhen(expr=ast.NullTest(arg=v(), nulltesttype=NullTestType.IS_NULL), result=ast.A_Const(isnull=True))]
    usable = [x for x in en.names if x not in _unsafe(en)]  # (an unsafe one: 22P02 here)
    if usable:
        found = ast.A_Expr(kind=A_Expr_Kind.AEXPR_IN, name=(ast.String(sval="="),), lexpr=copy.deepcopy(text), rexpr=tuple(_s(x) for x in usable))
        whens.append(ast.CaseWhen(expr=found, result=as_enum(v(), en)))
    fail_typed = as_enum(fail, en)
    return ast.CaseExpr(args=tuple(whens), defresult=fail_typed)


#: The macro :func:`array_from_text` calls (the rewriter adds it to the statement's needs).
ARRAY_IN = "pgc_enum_array_in"


def array_from_text(value: ast.Node, en: EnumType) -> ast.Node:
    """enum_in of each element of a text array, evaluated in the query."""
    usable = [x for x in en.names if x not in _unsafe(en)]
    text = ast.TypeCast(arg=value, typeName=ast.TypeName(names=(ast.String(sval="varchar"),), arrayBounds=(ast.Integer(ival=-1),), typemod=-1))
    labels = ast.TypeCast(
        arg=ast.A_ArrayExpr(elements=tuple(_s(x) for x in usable)),
        typeName=ast.TypeName(names=(ast.String(sval="varchar"),), arrayBounds=(ast.Integer(ival=-1),), typemod=-1),
    )
    call = ast.FuncCall(funcname=(ast.String(sval=ARRAY_IN),), args=(text, labels, _s(shown(en))))
    return as_enum(call, en, array=True)


def first_or_last(en: EnumType, last: bool) -> ast.Node:
    """enum_first / enum_last: they read only their argument's type."""
    if not en.labels:
        raise PgError("55000", f"enum {shown(en)} contains no values")
    return label_value(en.names[-1] if last else en.names[0], en)


def whole_range(en: EnumType) -> ast.Node:
    """enum_range(x): every label, in order."""
    return labels_value(en.names, en)


def bounded_range(low: ast.Node, high: ast.Node, en: EnumType) -> ast.Node:
    """enum_range(a, b): the labels from a to b (a NULL bound: the first or the last), by
    DuckDB's enum_range_boundary over the enum's ENUM values."""
    if not en.labels:
        return whole_range(en)
    call = ast.FuncCall(funcname=(ast.String(sval="enum_range_boundary"),), args=(low, high))
    return as_enum(call, en, array=True)
