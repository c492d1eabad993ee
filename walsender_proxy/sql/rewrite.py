"""PostgreSQL SQL → DuckDB SQL over the emulated catalog and the lake's tables.

Parsing uses pglast (PostgreSQL's own parser, libpg_query): every statement psql, psycopg or a
subscriber sends parses exactly as PostgreSQL would parse it, syntax errors carry
PostgreSQL's message and position, and the AST is PostgreSQL's raw parse tree, so the
column-naming (FigureColname) and name-resolution rules below can follow PostgreSQL's
source. sqlglot was the alternative; its PostgreSQL dialect is a re-implementation that
misses constructs such as ``OPERATOR(pg_catalog.~)`` and gives no PostgreSQL error texts.

DuckDB's grammar is a fork of PostgreSQL's, so pglast's deparser output is nearly DuckDB SQL;
the tree is rewritten first so that the remaining differences disappear:

- relations: ``pg_catalog.x`` / unqualified ``pg_x`` / ``information_schema.x`` become the
  registered emulation tables (``pgc_x AS x``); user tables become the subquery the server's
  ``resolve_user_table`` returns (``(subquery) AS t``);
- functions: emulated ones become ``pgc_*`` macros, server-owned values become lookups in
  ``pgc_server_values``, the rest pass to DuckDB when it has them (else 42883);
- types: reg* casts become lookups, int2vector/oidvector subscripts shift to 1-based,
  ``'{…}'`` array literals become lists, ``COLLATE`` and ``OPERATOR(schema.op)`` go;
- names: every select-list item gets PostgreSQL's column name as an explicit alias, so the
  DuckDB result carries the names PostgreSQL would send.

The result also says which emulated objects to register (``needs``), the PostgreSQL type of
each output column where known, and the side effects PostgreSQL would have (``set_config``).
"""

from __future__ import annotations

import copy
import itertools
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pglast
import pyarrow as pa
from pglast import ast
from pglast.enums import (
    A_Expr_Kind,
    BoolExprType,
    CoercionForm,
    CTEMaterialize,
    JoinType,
    MinMaxOp,
    NullTestType,
    SetOperation,
    SortByDir,
    SQLValueFunctionOp,
    SubLinkType,
    XmlExprOp,
)
from pglast.stream import RawStream

from decoding.catalog import FIRST_USER_OID, EnumType
from decoding.errors import PgError
from decoding.pgtypes import ColumnType, parse_type
from decoding.pgvalues.textin import NAME_BYTES, name_in, numeric_text_in
from walsender_proxy.backend import coercion_data
from walsender_proxy.backend.settings import shown_once_set
from walsender_proxy.sql import (
    agg_levels,
    array_exprs,
    bytea_text,
    collations,
    common_type,
    composite_values,
    datetime_bin,
    datetime_make,
    datetime_parts,
    domain_casts,
    enum_casts,
    float_aggs,
    float_exprs,
    formatting_udfs,
    function_exists,
    functional_grouping,
    join_star,
    json_exprs,
    json_records,
    jsonb_edit,
    jsonb_ops,
    lateral_refs,
    literals,
    nodes,
    numeric_exprs,
    numeric_math,
    numeric_text,
    pgcatalog,
    pgcatalog_defs,
    privilege_checks,
    privileges,
    recursive_cte,
    regex_funcs,
    session_zone,
    sql_function_calls,
    srf_targets,
    using_columns,
    views,
    width_bucket,
    window_frames,
    with_ties,
)
from walsender_proxy.sql.expr_types import (
    BOOL,
    INTEGERISH,
    NUMERIC_TEXT,
    TEXT,
    TEXTISH,
    UNKNOWN,
    T,
)
from walsender_proxy.sql.nodes import bool_const as _bool
from walsender_proxy.sql.nodes import call as _call
from walsender_proxy.sql.nodes import cast as _cast
from walsender_proxy.sql.nodes import colref as _colref
from walsender_proxy.sql.nodes import int_const as _int
from walsender_proxy.sql.nodes import name as _s
from walsender_proxy.sql.nodes import null_const as _null
from walsender_proxy.sql.nodes import op as _op
from walsender_proxy.sql.nodes import set_returning_call
from walsender_proxy.sql.nodes import str_const as _str
from walsender_proxy.sql.numeric_exprs import Operand
from walsender_proxy.sql.pg_functions import PG15_FUNCTIONS
from walsender_proxy.sql.rewrite_funcs import (
    ADVISORY,
    ARITY_SUFFIX,
    DIVERGENT,
    EMULATED,
    KEEP_SQL_SYNTAX,
    RETURNS,
    ROW_SUFFIX,
    SAME_AS_ARG,
    SEQUENCE_FUNCTIONS,
    SERVER_ONLY,
    SERVER_PARAMS,
    SERVER_RECORDS,
    SERVER_RETURNS,
    SERVER_SETS,
    SERVER_VALUES,
    SET_SUFFIX,
    duckdb_functions,
)
from walsender_proxy.sql.scopes import NO_COLUMNS, ColumnGuard
from walsender_proxy.sql.scopes import Rel as _Rel
from walsender_proxy.sql.scopes import Scope as _Scope
from walsender_proxy.sql.sql_errors import NotAQueryError, ServerFunctionError, SqlError


def _rows_in_order(stmt: ast.SelectStmt, ctes: Mapping[str, ast.Node] | None = None) -> bool:
    """Whether an aggregate of this SELECT sees its rows in the order PostgreSQL feeds them
    to it: no FROM, or one VALUES list or function, maybe under plain subqueries or a WITH
    query of the same level (a WHERE, a LIMIT); not a table (the lake's row order is not
    the heap's), a join, a GROUP BY or a sort (PostgreSQL's sorts do not keep the order of
    ties)."""
    if stmt.groupClause or len(stmt.fromClause or ()) > 1:
        return False
    if not stmt.fromClause:
        return True
    if ctes is None:
        wc = stmt.withClause
        ctes = {} if wc is None or wc.recursive else {c.ctename: c.ctequery for c in wc.ctes or ()}
    item = stmt.fromClause[0]
    if isinstance(item, ast.RangeFunction):
        return True
    if isinstance(item, ast.RangeVar) and not item.schemaname and item.relname in ctes:
        sub = ctes[item.relname]
    elif isinstance(item, ast.RangeSubselect):
        sub = item.subquery
    else:
        return False
    if not isinstance(sub, ast.SelectStmt):
        return False
    if sub.valuesLists:
        return True
    if sub.op != SetOperation.SETOP_NONE or sub.sortClause or sub.distinctClause or sub.withClause or sub.havingClause:
        return False
    if _has_window(sub.targetList):
        return False
    return _rows_in_order(sub, {})


def _has_window(node: Any) -> bool:
    if isinstance(node, ast.FuncCall) and node.over is not None:
        return True
    if isinstance(node, tuple):
        return any(_has_window(x) for x in node)
    if isinstance(node, ast.Node) and not isinstance(node, ast.SelectStmt):
        return any(_has_window(getattr(node, k)) for k in node)
    return False


def _has_call(node: Any) -> bool:
    """Whether a rewritten expression calls a function (an aggregate, maybe)."""
    if isinstance(node, ast.FuncCall):
        return True
    if isinstance(node, tuple):
        return any(_has_call(x) for x in node)
    if isinstance(node, ast.Node):
        return any(_has_call(getattr(node, k)) for k in node)
    return False


def _has_subquery(node: Any) -> bool:
    """Whether a rewritten expression holds a subquery, or an emulation macro (``pgc_*``),
    whose body is one."""
    if isinstance(node, tuple | list):
        return any(_has_subquery(n) for n in node)
    if not isinstance(node, ast.Node):
        return False
    if isinstance(node, ast.SubLink):
        return True
    if isinstance(node, ast.FuncCall) and any(
        isinstance(n, ast.String) and n.sval.startswith("pgc_") for n in node.funcname
    ):
        return True
    return any(_has_subquery(getattr(node, a, None)) for a in type(node).__slots__)


_COMPARISONS = frozenset({"=", "<>", "!=", "<", ">", "<=", ">="})
#: PostgreSQL functions DuckDB has under another name.
_DUCKDB_NAMES = {"every": "bool_and"}
#: Uses that would compare jsonb values by their text (see _no_json_compare).
_JSONB_EQUALITY_UNSUPPORTED = frozenset(
    {"JOIN USING", "NATURAL JOIN", "CASE … WHEN", "GREATEST/LEAST", "IN/ANY/ALL (subquery)"}
)
#: PostgreSQL's json/jsonb operators the proxy does not carry out.
_UNSUPPORTED_JSON_OPS = frozenset({"#>", "#>>", "?", "?|", "?&", "#-", "@?", "@@"})


def _regproc_pair(
    left: ast.Node, lt: T | None, right: ast.Node, rt: T | None, needs: set[str]
) -> tuple[ast.Node, ast.Node]:
    """A catalog ``regproc`` column (kept as the function's name) compared with a regproc
    value (an OID: ``typinput = 'array_in'::regproc``) compares names."""
    lname, rname = lt.name if lt else None, rt.name if rt else None
    if lname == "regproc_text" and rname == "regproc":
        return left, _regproc_name(right, needs)
    if rname == "regproc_text" and lname == "regproc":
        return _regproc_name(left, needs), right
    return left, right


def _regproc_name(node: ast.Node, needs: set[str]) -> ast.Node:
    """A regproc value as the name a catalog column keeps: a literal's own (unqualified)
    name, as not every function is in the emulated pg_proc; else the output function's."""
    if (
        isinstance(node, ast.FuncCall)
        and node.funcname[-1].sval == "pgc_regproc_in"
        and len(node.args or ()) == 1
    ):
        lit = _str_const(node.args[0])
        if lit is not None:
            return _str(lit.split(".")[-1].strip().strip('"'))
    needs.add("pgc_regproc_out")
    return _call("pgc_regproc_out", node)


#: Emulated catalog functions whose first argument is a regclass (a literal names a relation).
_REGCLASS_FIRST = frozenset({"pg_get_replica_identity_index", "pg_relation_is_publishable"})


@dataclass(frozen=True, slots=True)

class UserTable:
    """What ``resolve_user_table`` may return instead of bare SQL: the SQL and the declared
    type of each column (casts of a column follow its type's input and output rules)."""

    sql: str
    types: Mapping[str, ColumnType]
    #: The columns the statement may read where the current user holds SELECT on some of
    #: the table's columns only (None: on the table); a reference to another is 42501.
    readable: frozenset[str] | None = None
    name: str = ""
    #: The table's OID (its ``tableoid``); 0 where rows come from several tables (a
    #: partitioned table, whose ``tableoid`` is refused).
    oid: int = 0
    #: A partitioned table: ``ONLY`` reads none of its rows.
    partitioned: bool = False
    #: A partitioned table's ``tableoid`` from its key columns (see ``Rel.tableoid_sql``).
    tableoid_sql: Callable[[Callable[[str], str]], str] | None = None
    #: Its primary key's columns (GROUP BY them groups the others: functional_grouping).
    primary_key: tuple[str, ...] = ()
    #: The table's OID, whose key that is (a view grouping by it depends on the key).
    key_table: int = 0


ResolveUserTable = Callable[[str | None, str], "str | UserTable | views.ViewQuery | None"]


@dataclass(frozen=True, slots=True)
class OutputColumn:
    name: str
    #: PostgreSQL type OID for RowDescription; None: derive it from the DuckDB result type.
    type_oid: int | None
    typmod: int = -1
    #: The lake type of a value of a user enum (or an array of one), whose OID is not
    #: PostgreSQL's: its values are the labels, described as the enum.
    enum: ColumnType | None = None
    #: An untyped literal or NULL (described as text): what an assignment reads by the
    #: column's input function.
    unknown: bool = False
    #: A value of a composite type: its attributes (declared OID, type), for record_send.
    row_fields: tuple[tuple[int, ColumnType], ...] | None = None


#: ((schema as written or None, table name), column name) of a user table's column.
Origin = tuple[tuple[str | None, str], str]


@dataclass(frozen=True, slots=True)
class CopyTo:
    """``COPY (query) TO STDOUT`` options, lower-cased names → values as written."""

    format: str
    options: dict[str, Any] = field(default_factory=dict)


def _no_columns(cols: list[tuple[str, T | None]] | None) -> bool:
    return cols is not None and len(cols) == 1 and cols[0][0] == NO_COLUMNS


@dataclass(frozen=True, slots=True)
class Rewritten:
    sql: str
    #: Emulated tables/macros to register first: ``CatalogBinding.ensure(needs, …)``.
    needs: frozenset[str]
    #: Output columns (PostgreSQL names and types); None when a ``*`` over a user table hides
    #: their number — DuckDB's column names are PostgreSQL's anyway.
    columns: tuple[OutputColumn, ...] | None
    #: ``set_config(name, value, is_local)`` calls with literal arguments, in call order:
    #: the server applies them to the session (value None: not a literal).
    set_configs: tuple[tuple[str, str | None, bool], ...] = ()
    #: Server-evaluated functions used (pass values via ``ensure(server_values=…)``).
    server_values: frozenset[str] = frozenset()
    #: (schema, name) of user tables read, as written.
    user_tables: tuple[tuple[str | None, str], ...] = ()
    #: Highest ``$n`` parameter number used.
    param_count: int = 0
    #: ``$n`` the statement had only in arguments the translation dropped (DuckDB refuses a
    #: value it has no ``$n`` for: the engine leaves these out).
    dropped_params: frozenset[int] = frozenset()
    copy: CopyTo | None = None
    #: Per output column, the user table column it is as selected (RowDescription's table
    #: OID and attribute number), or None; None when not known for the statement.
    origins: tuple[Origin | None, ...] | None = None
    #: Tables whose primary key a GROUP BY rests on (functional_grouping).
    key_dependencies: tuple[int, ...] = ()
    #: With ``infer_params``: the type OID parse analysis gave each unspecified ``$n``
    #: it could place, by number.
    param_oids: tuple[tuple[int, int], ...] = ()
    #: reg* input of untyped literals (``'t'::regclass``, ``nextval('s')``): (the input
    #: macro, the text, its 1-based position). Parse analysis reads such a constant with
    #: the type's input function, so a missing name fails the statement even where the
    #: expression would never run; :func:`~walsender_proxy.sql.catalog_bridge.rewrite_and_register`
    #: reads each before the statement runs.
    reg_inputs: tuple[tuple[str, str, int | None], ...] = ()


# ---------------------------------------------------------------------------------------------
# types


#: Functions that take a character(n) value as it is, padding included (their own bpchar
#: overload or a polymorphic/"any" argument); every other function and operator gets it
#: through bpchar's cast to text, which drops the trailing spaces.
KEEPS_PADDING = frozenset({
    "octet_length", "min", "max", "count", "array_agg", "concat", "concat_ws", "format",
    "to_json", "to_jsonb", "json_build_array", "jsonb_build_array", "json_build_object",
    "jsonb_build_object", "json_agg", "jsonb_agg", "row_to_json", "quote_literal",
    "quote_nullable", "pg_typeof", "num_nulls", "num_nonnulls", "mode", "first_value",
    "last_value", "nth_value", "lag", "lead", "array_append", "array_prepend",
    "array_position", "array_positions", "array_remove", "array_replace", "array_fill",
})  # fmt: skip


#: Operators whose character(n) forms see the padding (pattern matching).
_PADDED_OPS = frozenset({"~~", "!~~", "~~*", "!~~*", "~", "!~", "~*", "!~*"})
_LIKE_OPS = frozenset({"~~", "!~~", "~~*", "!~~*"})
_LIKE_NAMES = {"~~": "like", "!~~": "notlike", "~~*": "ilike", "!~~*": "notilike"}


def is_bpchar(t: T | None) -> bool:
    return t is not None and t.name == "bpchar" and not t.is_array


def unpadded(node: ast.Node, t: T | None) -> tuple[ast.Node, T | None]:
    """A character(n) value as PostgreSQL hands it to a text function or operator: bpchar's
    cast to text (and its own comparisons) ignore trailing spaces, which the lake keeps."""
    if is_bpchar(t):
        return _call("rtrim", node, _str(" ")), TEXT
    return node, t


def unpadded_literal(node: ast.Node) -> ast.Node:
    """An untyped literal compared with a character(n) value becomes character(n) too:
    its trailing spaces do not count either."""
    lit = _str_const(node)
    return node if lit is None else _str(lit.rstrip(" "))


#: The comparison operators: between character(n) and character(n), varchar or an untyped
#: value PostgreSQL picks character(n)'s own (trailing spaces of neither side count);
#: against text, its preferred string type, text's (only the character(n) side's go).
COMPARISONS = frozenset({"=", "<>", "!=", "<", ">", "<=", ">="})
_AS_CHARACTER_N = frozenset({"bpchar", "varchar", "unknown"})


def _compares_as_character_n(a: T | None, b: T | None) -> bool:
    return (is_bpchar(a) and b is not None and b.name in _AS_CHARACTER_N and not b.is_array) or (
        is_bpchar(b) and a is not None and a.name in _AS_CHARACTER_N and not a.is_array
    )


def unpadded_pair(
    left: ast.Node, lt: T | None, right: ast.Node, rt: T | None, op: str
) -> tuple[ast.Node, T | None, ast.Node, T | None]:
    """Both operands of operator ``op``, with PostgreSQL's treatment of character(n)."""
    if not (is_bpchar(lt) or is_bpchar(rt)):
        return left, lt, right, rt
    if op in COMPARISONS and _compares_as_character_n(lt, rt):
        return (*_unpadded_any(left, lt), *_unpadded_any(right, rt))  # type: ignore[return-value]
    left, lt = unpadded(left, lt)
    right, rt = unpadded(right, rt)
    return left, lt, right, rt


def _unpadded_any(node: ast.Node, t: T | None) -> tuple[ast.Node, T | None]:
    """A character(n), varchar or untyped operand of a character(n) comparison."""
    if _str_const(node) is not None:
        return unpadded_literal(node), t
    if t is not None and t.name in ("bpchar", "varchar"):
        return _call("rtrim", node, _str(" ")), TEXT
    return node, t


def _printed(node: ast.Node, t: T | None) -> ast.Node:
    """A value as its type's output function prints it (format's %s): bool as t/f (its
    cast to text says true/false), character(n) with its padding, the types DuckDB prints
    its own way through their output UDF."""
    if t is not None and t.name == "bool" and not t.is_array:
        return ast.CaseExpr(
            args=(
                ast.CaseWhen(expr=node, result=_str("t")),
                ast.CaseWhen(expr=ast.BoolExpr(boolop=BoolExprType.NOT_EXPR, args=(node,)), result=_str("f")),
            )
        )
    if t is not None and t.enum_oid and t.is_array:  # (the labels' text[] output)
        node, t = _cast(node, "varchar", array=True), T("_text")
    ctype = literals.target_type(t.name.lstrip("_"), [], t.is_array) if t is not None and t != UNKNOWN else None
    if ctype is not None and literals.needs_output_call(ctype):
        return literals.output_call(node, ctype)
    return _cast(node, "varchar")


#: What makes record_out quote a field: C's isspace, a quote, a backslash, parentheses, comma.
_RECORD_QUOTE = '[" \t\n\x0b\f\r\\\\(),]'


def _record_field(text: ast.Node) -> ast.Node:
    """One field of record_out's text: empty for NULL; quoted (quotes and backslashes
    doubled) when empty or holding a character that needs it; else as it is."""
    quoted = _call(
        "concat", _str('"'), _call("replace", _call("replace", text, _str("\\"), _str("\\\\")), _str('"'), _str('""')), _str('"')
    )
    return ast.CaseExpr(
        args=(
            ast.CaseWhen(expr=ast.NullTest(arg=text, nulltesttype=NullTestType.IS_NULL), result=_str("")),
            ast.CaseWhen(
                expr=ast.BoolExpr(boolop=BoolExprType.OR_EXPR, args=(_op("=", text, _str("")), _call("regexp_matches", text, _str(_RECORD_QUOTE)))),
                result=quoted,
            ),
        ),
        defresult=text,
    )


_FORMAT_SPEC = re.compile(r"%(?:(\d+)\$)?(-)?(\*(?:\d+\$)?|\d+)?(.)", re.S)


def format_arguments(fmt: str) -> int:
    """How many arguments PostgreSQL's format() reads for ``fmt`` (its text_format: %s, %I
    and %L with positions, the '-' flag and widths); 22023 with its text for what format()
    rejects, 0A000 for a width taken from an argument."""
    needed, nxt, i = 0, 0, 0
    while True:
        i = fmt.find("%", i)
        if i < 0:
            return needed
        if fmt.startswith("%%", i):
            i += 2
            continue
        m = _FORMAT_SPEC.match(fmt, i)
        if m is None:
            raise PgError("22023", "unterminated format() type specifier", hint='For a single "%" use "%%".')
        pos, _, width, kind = m.groups()
        if kind not in "sIL":
            raise PgError("22023", f'unrecognized format() type specifier "{kind}"', hint='For a single "%" use "%%".')
        if width is not None and width.startswith("*"):
            raise PgError("0A000", "format() with a width taken from an argument is not supported by walsender-proxy")
        if pos is not None:
            if int(pos) == 0:
                raise PgError("22023", "format specifies argument 0, but arguments are numbered from 1")
            nxt = int(pos)
        else:
            nxt += 1
        needed = max(needed, nxt)
        i = m.end()


def positional_format(fmt: str) -> tuple[str, list[tuple[int, str]]]:
    """``fmt`` (already checked by :func:`format_arguments`) as printf's: one ``%s`` per
    specifier, in order, and for each the argument (1-based) and kind (``s``, ``I``, ``L``)
    it prints. PostgreSQL's format() lets numbered and unnumbered specifiers mix (one
    without a number takes the one after the last used) and prints one argument several
    ways; printf's arguments are each specifier's own."""
    out: list[str] = []
    plan: list[tuple[int, str]] = []
    nxt, i = 0, 0
    while True:
        j = fmt.find("%", i)
        if j < 0:
            out.append(fmt[i:])
            return "".join(out), plan
        out.append(fmt[i:j])
        if fmt.startswith("%%", j):
            out.append("%%")
            i = j + 2
            continue
        m = _FORMAT_SPEC.match(fmt, j)
        assert m is not None
        pos, minus, width, kind = m.groups()
        nxt = int(pos) if pos is not None else nxt + 1
        plan.append((nxt, kind))
        out.append(f"%{len(plan)}$" + (minus or "") + (width or "") + "s")
        i = m.end()


def _positional(node: ast.FuncCall, params: Sequence[str], rw: Any) -> tuple[ast.Node, ...]:
    """A call's arguments in parameter order, named ones (``strict => false``) put in
    their places; 42883 for a name the function has not or a gap, as PostgreSQL's lookup."""
    placed: dict[int, ast.Node] = {}
    for i, a in enumerate(node.args or ()):
        if isinstance(a, ast.NamedArgExpr):
            if a.name not in params or params.index(a.name) in placed:
                raise rw.fail("42883", f"function {node.funcname[-1].sval} does not exist", node)
            placed[params.index(a.name)] = a.arg
        else:
            placed[i] = a
    if sorted(placed) != list(range(len(placed))):
        raise rw.fail("42883", f"function {node.funcname[-1].sval} does not exist", node)
    return tuple(placed[i] for i in range(len(placed)))


def _select_unpadded(sub: ast.Node) -> ast.SelectStmt:
    """``SELECT rtrim(v) FROM (sub) AS s(v)``: a one-column subquery of character(n) values
    as they are compared."""
    return ast.SelectStmt(
        targetList=(ast.ResTarget(val=_call("rtrim", _colref("v"), _str(" "))),),
        fromClause=(
            ast.RangeSubselect(subquery=sub, alias=ast.Alias(aliasname="wpx_s", colnames=(_s("v"),))),
        ),
        op=SetOperation.SETOP_NONE,
    )


REG_TYPES = {
    "regclass": "regclass",
    "regtype": "regtype",
    "regnamespace": "regnamespace",
    "regrole": "regrole",
    "regproc": "regproc",
    "regprocedure": "regprocedure",
}
#: Types without subscripting (typsubscript 0) a value of which may be written with [...].
_NOT_SUBSCRIPTABLE = frozenset({
    "bool", "int2", "int4", "int8", "float4", "float8", "numeric", "date", "time", "timetz", "timestamp",
    "timestamptz", "interval", "uuid", "bytea", "json", "oid", "xid", "pg_lsn", "inet", "cidr", "macaddr",
    "macaddr8", "money", "bit", "varbit", "char", *REG_TYPES.values(),
})  # fmt: skip
#: Types whose comparisons with an untyped literal read it by an input function of ours.
_OID_INPUT_TYPES = frozenset({"oid", "xid", *REG_TYPES.values()})
#: reg* inputs read at analysis: those whose catalog the proxy holds whole (pg_proc lists
#: PostgreSQL's functions and the user's).
_EAGER_REG_INPUTS = frozenset({
    "pgc_regclass_in", "pgc_regtype_in", "pgc_regnamespace_in", "pgc_regrole_in", "pgc_regproc_in", "pgc_regprocedure_in",
    "pgc_oid_in", "pgc_xid_in",
})  # fmt: skip
#: Output formatting PostgreSQL's type output functions do that DuckDB's values need.
_OUT_FORMAT = {
    "int2vector": "vector",
    "oidvector": "vector",
    "regclass": "pgc_regclass_out",
    "regtype": "pgc_regtype_out",
    "regnamespace": "pgc_regnamespace_out",
    "regrole": "pgc_regrole_out",
    "regproc": "pgc_regproc_out",
    "regprocedure": "pgc_regprocedure_out",
}

#: PostgreSQL types with no DuckDB counterpart in the proxy: a cast to one is refused, where
#: it would otherwise yield the input text unchecked and unnormalised (``'1'::money`` is
#: ``$1.00``, ``'1.2.3.4/32'::inet`` is ``1.2.3.4``).
UNMODELED_TYPES = frozenset(
    ["money", "bit", "varbit", "tsvector", "tsquery", "gtsvector", "xml", "inet", "cidr", "macaddr", "macaddr8", "point", "line", "lseg", "box", "path", "polygon", "circle", "int4range", "int8range", "numrange", "tsrange", "tstzrange", "daterange", "int4multirange", "int8multirange", "nummultirange", "tsmultirange", "tstzmultirange", "datemultirange", "txid_snapshot", "pg_snapshot", "aclitem", "jsonpath", "tid", "regconfig", "regdictionary", "regcollation", "regoper", "regoperator", "pg_node_tree"]
)

#: DuckDB variables the engine sets before a statement that reads them: PostgreSQL's
#: transaction and statement timestamps (DuckDB's now() is its own transaction's start).
CLOCK_VARIABLE_PREFIX = "wpx_clock_"
TRANSACTION_CLOCK = CLOCK_VARIABLE_PREFIX + "xact"
STATEMENT_CLOCK = CLOCK_VARIABLE_PREFIX + "stmt"
#: Words of date/time input that read the clock: a statement with one is not cached.
_CLOCK_WORDS = re.compile(r"(?i)\b(now|today|tomorrow|yesterday)\b")


def _clock(name: str = TRANSACTION_CLOCK, precision: int | None = None) -> ast.Node:
    """The transaction's (or statement's) timestamp as a timestamptz, rounded to
    ``precision`` fractional digits as a timestamp(p) typmod rounds."""
    value: ast.Node = _cast(_call("getvariable", _str(name)), "timestamptz")
    if precision is not None and 0 <= precision < 6:
        value = _call("pgc_round_us", value, _int(10 ** (6 - precision)))
    return value


_DUCK_SCALAR = {
    **{k: v for k, v in literals.DUCK_TYPES.items() if v != "varchar"},
    "timetz": "timetz",
    "oid": "uinteger",
    "xid": "uinteger",
    "cid": "uinteger",
    "xid8": "ubigint",
    **dict.fromkeys(REG_TYPES, "uinteger"),
}


def _user_type_names(tn: ast.TypeName) -> list[str] | None:
    """The names of a type that may be a user's (a domain, an enum); None for one of
    pg_catalog's."""
    names = [n.sval for n in tn.names]
    if names[0] == "pg_catalog" or (len(names) == 1 and literals.TYPE_ALIASES.get(names[0], names[0]) in pgcatalog_defs.TYPE_OIDS):
        return None
    return names


#: Functions a value of a composite type may be handed to (others are refused, see
#: composite_values).
_ROW_FUNCTIONS = frozenset({"pg_typeof", "count", "json_populate_record", "jsonb_populate_record", "json_populate_recordset", "jsonb_populate_recordset"})


#: PostgreSQL's enum support functions (enum_casts).
_ENUM_FUNCTIONS = frozenset({"enum_first", "enum_last", "enum_range"})


def _type_oid(t: T | None) -> int | None:
    if t is None:
        return None
    if t.row_oid:
        rt = composite_values.by_oid(t.row_oid)
        return None if rt is None else rt.array_oid if t.is_array else rt.oid
    if t.enum_oid:
        en = enum_casts.by_oid(t.enum_oid)
        return None if en is None else en.array_oid if t.is_array else en.oid
    if t.name == "unknown":
        return 25
    if t.name == "regproc_text":
        return 24
    if t.name.startswith("__"):  # (a nested list: one array type whatever its dimensions)
        return pgcatalog_defs.TYPE_OIDS.get("_" + t.name.lstrip("_"))
    return pgcatalog_defs.TYPE_OIDS.get(t.name)


def _time_as_interval(node: ast.Node, t: T | None) -> tuple[ast.Node, T | None]:
    """A time value as the interval pg_cast's implicit time → interval makes of it (where a
    time meets an interval in a comparison); any other value as it is."""
    if t is not None and t.name == "time":
        return _call("to_microseconds", _call("epoch_us", node)), T("interval")
    return node, t


def _enum_domain(t: T) -> bool:
    """A value of a domain over an enum: anyenum's operators and functions do not take it
    (PostgreSQL matches no polymorphic anyenum to a domain)."""
    return bool(t.enum_oid and t.domain_oid)


def _enum_operator(op: str, lt: T, rt: T) -> bool:
    """Whether PostgreSQL has operator ``op`` between these types when one is an enum (or
    an array of one): anyenum's comparisons of one enum; anyarray's comparisons,
    containment and overlap of one array type; ``||`` of arrays or an array and its
    element type."""
    if op in _COMPARISONS or op in ("@>", "<@", "&&"):
        return lt == rt
    if op == "||":
        return (lt == rt and lt.is_array) or (lt.is_array and lt.elem == rt) or (rt.is_array and rt.elem == lt)
    return False


def _row_fields(t: T | None) -> tuple[tuple[int, ColumnType], ...] | None:
    """A composite value's attributes as record_send sends them (None: not one, or one
    with an attribute of a composite type, sent as text)."""
    if t is None or not t.row_oid or t.is_array or (rt := composite_values.by_oid(t.row_oid)) is None:
        return None
    if any(ct.is_composite for _, ct in rt.fields):
        return None
    return tuple((composite_values.declared_oid(ct), ct) for _, ct in rt.fields)


def _enum_lake_type(t: T | None) -> ColumnType | None:
    en = enum_casts.by_oid(t.enum_oid) if t is not None and t.enum_oid else None
    return None if en is None else ColumnType(en.column_type.base, is_array=t is not None and t.is_array)


#: XmlExpr's operations by the SQL they are written as.
_XML_FUNCTIONS = {
    XmlExprOp.IS_XMLCONCAT: "xmlconcat()", XmlExprOp.IS_XMLELEMENT: "xmlelement()",
    XmlExprOp.IS_XMLFOREST: "xmlforest()", XmlExprOp.IS_XMLPARSE: "xmlparse()",
    XmlExprOp.IS_XMLPI: "xmlpi()", XmlExprOp.IS_XMLROOT: "xmlroot()",
    XmlExprOp.IS_XMLSERIALIZE: "xmlserialize()", XmlExprOp.IS_DOCUMENT: "IS DOCUMENT",
}  # fmt: skip


def _type_display(t: T | None) -> str:
    if t is None or t.name == "unknown":
        return "unknown"
    if t.row_oid and (rt := composite_values.by_oid(t.row_oid)) is not None:
        return rt.name + ("[]" if t.is_array else "")
    if t.enum_oid and t.domain_oid and (d := domain_casts.by_oid(t.domain_oid)) is not None:
        return domain_casts.shown(d)
    if t.enum_oid and (en := enum_casts.by_oid(t.enum_oid)) is not None:
        return enum_casts.shown(en) + ("[]" if t.is_array else "")
    oid = _type_oid(t)
    return pgcatalog_defs.format_type(oid, None) or t.name if oid else t.name


def _column_t(typname: str) -> T:
    if typname in ("int2vector", "oidvector"):
        return T(typname, zero_based=True)
    if typname == "regproc":
        return T("regproc_text")
    return T(typname)


# ---------------------------------------------------------------------------------------------
# node helpers


def _str_const(node: ast.Node | None) -> str | None:
    if isinstance(node, ast.A_Const) and not node.isnull and isinstance(node.val, ast.String):
        return node.val.sval
    return None


def _is_star(node: ast.Node) -> bool:
    """``*`` or ``t.*`` in a target list (its columns are not its items one for one)."""
    return isinstance(node, ast.ColumnRef) and isinstance(node.fields[-1], ast.A_Star)


def _unknown_pair(node: ast.Node) -> tuple[ast.Node, T | None]:
    """A rewritten set operation arm's value with the type :meth:`_unknowns_as` reads it
    by: a quoted literal is unknown, a ``$n`` not known (None), anything else not to touch
    (TEXT, which it leaves alone)."""
    if _str_const(node) is not None:
        return node, UNKNOWN
    return node, None if isinstance(node, ast.ParamRef) else TEXT


def parse_array_literal(text: str) -> list[str | None] | None:
    """Elements of a one-dimensional PostgreSQL array literal ``'{a,"b c",NULL}'``."""
    s = text.strip()
    if not (s.startswith("{") and s.endswith("}")):
        return None
    body = s[1:-1]
    out: list[str | None] = []
    if not body.strip():
        return out
    i, n = 0, len(body)
    while i <= n:
        while i < n and body[i].isspace():
            i += 1
        if i < n and body[i] == "{":
            return None  # multi-dimensional
        if i < n and body[i] == '"':
            i += 1
            buf = []
            while i < n and body[i] != '"':
                if body[i] == "\\" and i + 1 < n:
                    i += 1
                buf.append(body[i])
                i += 1
            i += 1
            out.append("".join(buf))
            while i < n and body[i] != ",":
                i += 1
        else:
            j = i
            while j < n and body[j] != ",":
                j += 1
            item = body[i:j].strip()
            out.append(None if item.upper() == "NULL" else item.replace("\\", ""))
            i = j
        i += 1
    return out


# ---------------------------------------------------------------------------------------------
# column names (PostgreSQL's FigureColnameInternal)

_SVF_NAMES = {
    SQLValueFunctionOp.SVFOP_CURRENT_DATE: "current_date",
    SQLValueFunctionOp.SVFOP_CURRENT_TIME: "current_time",
    SQLValueFunctionOp.SVFOP_CURRENT_TIME_N: "current_time",
    SQLValueFunctionOp.SVFOP_CURRENT_TIMESTAMP: "current_timestamp",
    SQLValueFunctionOp.SVFOP_CURRENT_TIMESTAMP_N: "current_timestamp",
    SQLValueFunctionOp.SVFOP_LOCALTIME: "localtime",
    SQLValueFunctionOp.SVFOP_LOCALTIME_N: "localtime",
    SQLValueFunctionOp.SVFOP_LOCALTIMESTAMP: "localtimestamp",
    SQLValueFunctionOp.SVFOP_LOCALTIMESTAMP_N: "localtimestamp",
    SQLValueFunctionOp.SVFOP_CURRENT_ROLE: "current_role",
    SQLValueFunctionOp.SVFOP_CURRENT_USER: "current_user",
    SQLValueFunctionOp.SVFOP_USER: "user",
    SQLValueFunctionOp.SVFOP_SESSION_USER: "session_user",
    SQLValueFunctionOp.SVFOP_CURRENT_CATALOG: "current_catalog",
    SQLValueFunctionOp.SVFOP_CURRENT_SCHEMA: "current_schema",
}


def _unknown_as(node: ast.Node, t: T, name: str) -> tuple[ast.Node, T]:
    """An unknown-typed string literal as a value of type ``name`` (its input function);
    anything else as it is."""
    text = _str_const(node)
    if t != UNKNOWN or text is None:
        return node, t
    ctype = literals.target_type(name, [], False)
    assert ctype is not None
    return literals.unknown_literal(text, ctype), T(name)


def _distinct_on_matches(stmt: ast.SelectStmt) -> bool:
    """Whether DISTINCT ON's expressions lead ORDER BY as PostgreSQL requires
    (transformDistinctOnClause): no ORDER BY item outside them may come before one of
    them, nor leave one of them out. Items are told apart as PostgreSQL's target entries
    are: a position or an output name stands for its select-list expression."""
    if list(stmt.distinctClause) == [None]:
        return True
    targets = list(stmt.targetList or ())

    def key(node: ast.Node) -> str:
        if isinstance(node, ast.A_Const) and isinstance(node.val, ast.Integer) and 0 < node.val.ival <= len(targets):
            node = targets[node.val.ival - 1].val
        elif isinstance(node, ast.ColumnRef) and len(node.fields) == 1 and isinstance(node.fields[0], ast.String):
            named = [t.val for t in targets if t.name == node.fields[0].sval]
            if len(named) == 1:
                node = named[0]
        if isinstance(node, ast.ColumnRef) and isinstance(node.fields[-1], ast.String):
            return node.fields[-1].sval  # (t.a and a: one column, as far as can be told here)
        return RawStream()(node)

    on = {key(d) for d in stmt.distinctClause}
    seen: set[str] = set()
    skipped = False
    for sb in stmt.sortClause:
        k = key(sb.node)
        if k in on:
            if skipped:
                return False
            seen.add(k)
        else:
            skipped = True
    return not skipped or seen == on


def figure_colname(node: ast.Node | None) -> tuple[str, int]:
    """(name, strength) as PostgreSQL's FigureColnameInternal computes them."""
    if isinstance(node, ast.ColumnRef):
        names = [f.sval for f in node.fields if isinstance(f, ast.String)]
        return (names[-1], 2) if names else ("?column?", 0)
    if isinstance(node, ast.A_Indirection):
        names = [i.sval for i in node.indirection if isinstance(i, ast.String)]
        return (names[-1], 2) if names else figure_colname(node.arg)
    if isinstance(node, ast.FuncCall):
        return node.funcname[-1].sval, 2
    if isinstance(node, ast.A_Expr):
        if node.kind == A_Expr_Kind.AEXPR_NULLIF:
            return "nullif", 2
        return "?column?", 0
    if isinstance(node, ast.TypeCast):
        name, strength = figure_colname(node.arg)
        if strength <= 1 and node.typeName is not None and node.typeName.names:
            return node.typeName.names[-1].sval, 1
        return name, strength
    if isinstance(node, ast.CollateClause):
        return figure_colname(node.arg)
    if isinstance(node, ast.GroupingFunc):
        return "grouping", 2
    if isinstance(node, ast.SubLink):
        if node.subLinkType == SubLinkType.EXISTS_SUBLINK:
            return "exists", 2
        if node.subLinkType == SubLinkType.ARRAY_SUBLINK:
            return "array", 2
        if node.subLinkType == SubLinkType.EXPR_SUBLINK:
            sub = node.subselect
            while isinstance(sub, ast.SelectStmt) and sub.op != SetOperation.SETOP_NONE:
                sub = sub.larg
            if isinstance(sub, ast.SelectStmt) and sub.valuesLists:
                return "column1", 2  # (VALUES names its columns so)
            if isinstance(sub, ast.SelectStmt) and sub.targetList:
                rt = sub.targetList[0]
                if rt.name:
                    return rt.name, 2
                name, strength = figure_colname(rt.val)
                if strength:
                    return name, 2
        return "?column?", 0
    if isinstance(node, ast.CaseExpr):
        name, strength = figure_colname(node.defresult)
        return (name, strength) if strength > 1 else ("case", 1)
    if isinstance(node, ast.A_ArrayExpr):
        return "array", 2
    if isinstance(node, ast.RowExpr):
        return "row", 2
    if isinstance(node, ast.CoalesceExpr):
        return "coalesce", 2
    if isinstance(node, ast.MinMaxExpr):
        return ("greatest" if node.op == MinMaxOp.IS_GREATEST else "least"), 2
    if isinstance(node, ast.SQLValueFunction):
        return _SVF_NAMES.get(node.op, "?column?"), 2
    return "?column?", 0


# ---------------------------------------------------------------------------------------------
# scopes


def _row_comparison(op: str, left: Sequence[ast.Node], right: Sequence[ast.Node]) -> ast.Node:
    """``(a1, a2) op (b1, b2)`` as PostgreSQL's row comparison (RowCompareExpr): = and <>
    pair by pair; <, <=, >, >= decided by the first pair that is not equal, NULL when that
    pair holds a NULL. DuckDB compares STRUCTs with NULL as a value."""
    if len(left) != len(right):
        raise PgError("42601", "unequal number of entries in row expressions")
    if not left:
        raise PgError("0A000", "cannot compare rows of zero length")
    pairs = [(copy.deepcopy(a), copy.deepcopy(b)) for a, b in zip(left, right, strict=True)]
    if op in ("=", "<>", "!="):
        parts = [_op("=" if op == "=" else "<>", a, b) for a, b in pairs]
        if len(parts) == 1:
            return parts[0]
        return ast.BoolExpr(boolop=BoolExprType.AND_EXPR if op == "=" else BoolExprType.OR_EXPR, args=tuple(parts))
    strict = op[0]
    a, b = pairs[-1]
    out: ast.Node = _op(op, a, b)
    for a, b in reversed(pairs[:-1]):
        tie = ast.BoolExpr(boolop=BoolExprType.AND_EXPR, args=(_op("=", copy.deepcopy(a), copy.deepcopy(b)), out))
        out = ast.BoolExpr(boolop=BoolExprType.OR_EXPR, args=(_op(strict, a, b), tie))
    return out


def _calls_sequence(node: Any) -> bool:
    """Whether an expression calls nextval or setval (outside its subqueries)."""
    if isinstance(node, ast.FuncCall) and node.funcname[-1].sval.lower() in ("nextval", "setval"):
        return True
    if isinstance(node, ast.SubLink | ast.SelectStmt) or not isinstance(node, ast.Node | tuple | list):
        return False
    if isinstance(node, tuple | list):
        return any(_calls_sequence(n) for n in node)
    return any(_calls_sequence(getattr(node, a, None)) for a in type(node).__slots__)


def _posix_zone(zone: str) -> bool:
    """Whether PostgreSQL reads a zone as a POSIX-style offset (hours west of Greenwich),
    which ICU reads the other way: a sign or digit outside the tz database's own names."""
    return bool(re.search(r"^[+-]|[0-9]", zone)) and not re.fullmatch(
        r"etc/.*|est5edt|cst6cdt|mst7mdt|pst8pdt|gmt0|gmt[+-]0", zone.lower()
    )


def _char_in(text: str) -> str:
    """A ``"char"`` literal as charin reads it and charout writes it: one byte, the first
    of the text or ``\\ooo`` in octal; none for the empty text; above 127 shown as ``\\ooo``."""
    raw = text.encode()
    if len(raw) == 4 and raw[0] == 0x5C and all(0x30 <= b <= 0x37 for b in raw[1:]):
        byte = int(raw[1:], 8)
    else:
        byte = raw[0] if raw else 0
    return "" if byte == 0 else chr(byte) if byte < 128 else f"\\{byte:03o}"


def _is_star(rt: Any, qualified: bool | None = None) -> bool:
    """``*`` (or ``t.*``) in a SELECT list; ``qualified`` picks one of the two forms."""
    if not (isinstance(rt, ast.ResTarget) and isinstance(rt.val, ast.ColumnRef) and isinstance(rt.val.fields[-1], ast.A_Star)):
        return False
    return qualified is None or qualified == (len(rt.val.fields) > 1)


def _has_star(targets: Sequence[Any] | None, qualified: bool | None = None) -> bool:
    return any(_is_star(rt, qualified) for rt in targets or ())


def _barrier(scope: _Scope) -> _Scope:
    """The scope a subquery in FROM without LATERAL is analysed in: ``scope``'s query level
    with the FROM items beside it hidden (lateral_refs)."""
    barrier = _Scope(scope.parent)
    barrier.hidden = dict(scope.rels)
    barrier.ctes = scope.ctes
    barrier.query = scope.query
    barrier.windows = scope.windows
    return barrier


def _qualify(node: Any, scope: _Scope) -> Any:
    """Qualify bare column references, so a macro body's own tables cannot capture them.

    DuckDB substitutes macro arguments textually: ``pg_get_constraintdef(oid)`` would compare
    the macro's table's ``oid`` with itself.
    """
    if isinstance(node, tuple | list):
        return type(node)(_qualify(n, scope) for n in node)
    if isinstance(node, ast.ColumnRef):
        if len(node.fields) == 1 and isinstance(node.fields[0], ast.String):
            found = scope.find(node.fields[0].sval)
            if found is not None and not found[0].startswith("*"):
                return ast.ColumnRef(fields=(_s(found[0]), node.fields[0]))
        return node
    if isinstance(node, ast.SubLink | ast.SelectStmt) or not isinstance(node, ast.Node):
        return node
    for attr in type(node).__slots__:
        value = getattr(node, attr, None)
        if isinstance(value, ast.Node | tuple | list):
            setattr(node, attr, _qualify(value, scope))
    return node


def _whole_row(node: Any, scope: _Scope) -> tuple[str, _Scope, _Rel] | None:
    """``t`` naming a relation's whole row (not a column of that name, nor a function's
    scalar result): its alias, the query level that has it, and the relation."""
    if not (isinstance(node, ast.ColumnRef) and len(node.fields) == 1 and isinstance(node.fields[0], ast.String)):
        return None
    alias = node.fields[0].sval
    if scope.find(alias) is not None or scope.declared([alias]) is not None:
        return None
    level: _Scope | None = scope
    while level is not None and alias not in level.rels:
        level = level.parent
    if level is None or level.rels[alias].scalar_column is not None:
        return None
    return alias, level, level.rels[alias]


class _JsonHost:
    """The rewriter as :mod:`json_exprs` sees it (json_exprs.Host), in one scope."""

    def __init__(self, rw: _Rewriter, scope: _Scope) -> None:
        self.rw = rw
        self.scope = scope

    def expr(self, node: Any) -> tuple[Any, T | None]:
        return self.rw.expr(node, self.scope)

    def generic(self, node: Any) -> Any:
        return self.rw.generic(node, self.scope)

    def fail(self, sqlstate: str, message: str, node: Any = None, **kw: Any) -> SqlError:
        return self.rw.fail(sqlstate, message, node, **kw)

    def printed(self, node: ast.Node, t: T | None) -> ast.Node:
        if t is not None and t.name in REG_TYPES and t.name in _OUT_FORMAT:  # (a name, not the oid)
            self.rw.needs.add(_OUT_FORMAT[t.name])
            return _call(_OUT_FORMAT[t.name], _qualify(node, self.scope))
        return _printed(node, t)

    def json_type(self, node: ast.Node, t: T | None) -> str | None:
        src = self.rw._lake_source(node, t, self.scope)
        return src.base.name if src is not None and not src.is_array and src.base.name in ("json", "jsonb") else None

    def display(self, t: T | None) -> str:
        return _type_display(t)

    def text_array(self, lit: str, at: ast.Node) -> ast.Node:
        return self.rw._array_literal(lit, TEXT, at)

    def row_fields(self, node: Any) -> list[tuple[str, Any, T | None]] | None:
        """ROW(…)'s fields (f1, f2 …), or a whole-row reference's columns. A row of a
        relation that shares its FROM with others is refused: an outer join may
        null-extend it, which DuckDB's STRUCT of NULLs would not show."""
        if isinstance(node, ast.RowExpr):
            return [(f"f{i}", *self.expr(a)) for i, a in enumerate(node.args or (), 1)]
        found = _whole_row(node, self.scope)
        if found is None:
            return None
        alias, level, rel = found
        cols = _rel_types(rel)
        if len(level.rels) != 1 or not cols:
            what = "a row of a relation joined with others" if cols else "a row of a relation of unknown columns"
            raise self.fail("0A000", f"{what} as a value is not supported by walsender-proxy", node)
        fields = rel.row_names if rel.row_names is not None and len(rel.row_names) == len(cols) else [n for n, _ in cols]
        return [(f, _colref(alias, n), t) for f, (n, t) in zip(fields, cols, strict=True)]


# ---------------------------------------------------------------------------------------------
# the rewriter


class _Rewriter:
    def __init__(
        self,
        sql: str,
        resolve_user_table: ResolveUserTable,
        server_udfs: Mapping[str, str],
        udf_args: Sequence[Any],
        text_params: frozenset[int] = frozenset(),
        param_types: Mapping[int, ColumnType] | None = None,
        infer_params: bool = False,
    ) -> None:
        self.sql = sql
        #: Parse analysis of a statement whose ``$n`` the client left unspecified: each such
        #: parameter is an unknown value until a context coerces it, and the type it is
        #: first coerced to is its type (parse_param.c's variable parameters).
        self.infer_params = infer_params
        self.param_inferred: dict[int, T] = {}
        #: Lake types of the ``$n`` (declared at Parse or inferred from a cast), if known.
        self.param_types: Mapping[int, ColumnType] = param_types or {}
        #: ``$n`` bound as text (unknown or text-typed parameters): a cast of one is an I/O
        #: conversion through the target type's input function, as a text column's is.
        self.text_params = text_params
        self.resolve_user_table = resolve_user_table
        self.server_udfs = server_udfs
        self.udf_args = udf_args
        self.used_udfs = False
        #: A domain or an enum of the catalog was used: the result is not cached by text
        #: (the type may change with the catalog).
        self.user_types = False
        #: A value of a composite type was made (composite_values): operators and
        #: functions over one are looked at before DuckDB sees them.
        self._row_typed = False
        #: The SQL functions being inlined, innermost last (sql_function_calls).
        self.sql_fn_frames: list[sql_function_calls.Frame] = []
        self.needs: set[str] = set()
        #: set by a cast of ``ARRAY[]`` just before its operand is rewritten (its type is the cast's)
        self._typed_empty_array = False
        #: inside a CASE branch PostgreSQL's constant folding drops (see e_CaseExpr)
        self._unfolded = False
        #: the element type a cast gives the ARRAY[…] it applies to, set just before it
        self._array_cast_target: str | None = None
        #: the element types of each rewritten ROW(…), by id: a row compared with a row
        #: types its quoted literals element by element (_param_as)
        self._row_types: dict[int, list[T | None]] = {}
        self.set_configs: list[tuple[str, str | None, bool]] = []
        self.server_values: set[str] = set()
        self.user_tables: list[tuple[str | None, str]] = []
        self.placeholders: dict[str, str] = {}
        self.nonce = secrets.token_hex(4)
        #: Output column types of each plain SELECT/VALUES, by id: a set operation over them
        #: looks at its arms' columns (numeric display scales).
        self.arm_columns: dict[int, list[tuple[str, T | None]] | None] = {}
        self.max_param = 0
        self.origins: tuple[Origin | None, ...] | None = None
        #: How many times each ``$n`` is in the output (a dropped argument takes its out).
        self.param_uses: dict[int, int] = {}
        #: The views being expanded (a view reading itself is PostgreSQL's 42P17).
        self._views_open: set[int] = set()
        self.reg_inputs: list[tuple[str, str, int | None]] = []
        #: Tables whose primary key a GROUP BY rests on (functional_grouping).
        self.key_dependencies: set[int] = set()
        #: Of each plain SELECT (by id), its output positions a * gave, as references to
        #: the columns (ORDER BY n of one).
        self._star_columns: dict[int, dict[int, ast.ColumnRef]] = {}
        #: The server_version_num the server claims (see :func:`rewrite`).
        self.server_version_num = 150000

    # -- errors --------------------------------------------------------------------------
    def _pos(self, node: Any) -> int | None:
        loc = getattr(node, "location", None)
        return loc + 1 if isinstance(loc, int) and loc >= 0 else None

    def fail(self, sqlstate: str, message: str, node: Any = None, **kw: Any) -> SqlError:
        return SqlError(sqlstate, message, self._pos(node), **kw)

    def _reg_in(self, fn: str, arg: ast.Node, t: T | None, source: Any = None) -> ast.Node:
        """``fn(arg)``, a reg* type's input (``pgc_regclass_in`` …). An untyped literal is
        also read before the statement runs (``Rewritten.reg_inputs``), as coerce_type
        reads a constant: ``CASE WHEN false THEN 'nope'::regclass END`` is 42P01."""
        self.needs.add(fn)
        text = _str_const(arg)
        if text is not None and t == UNKNOWN and fn in _EAGER_REG_INPUTS:
            self.reg_inputs.append((fn, text, self._literal_pos(source)))
        return _call(fn, arg)

    def _literal_pos(self, at: Any) -> int | None:
        """The 1-based position of the string literal a cast or call at ``at`` reads
        (pglast keeps no location for a constant; its scanner does)."""
        loc = getattr(at, "location", None)
        if not isinstance(loc, int) or loc < 0 or self.sql_fn_frames:
            return None
        consts = [tok for tok in pglast.parser.scan(self.sql) if tok.name == "SCONST"]
        if self.sql.startswith("::", loc):  # 'x'::regclass
            found = next((tok for tok in reversed(consts) if tok.end < loc), None)
            if found is not None and self.sql[found.end + 1 : loc].strip():
                found = None
        else:  # CAST('x' AS regclass), regclass 'x', nextval('x')
            found = next((tok for tok in consts if tok.start > loc), None)
        return found.start + 1 if found is not None else None

    def _operand_literal_pos(self, op: Any, after: bool, value: str | None) -> int | None:
        """The 1-based position of the string literal ``value`` that is an operand of the
        operator at ``op`` (or an item of its list; its right one when ``after``): pglast
        keeps no constant's location."""
        loc = getattr(op, "location", None)
        if not isinstance(loc, int) or loc < 0 or self.sql_fn_frames:
            return None
        written = "'" + (value or "").replace("'", "''") + "'"
        consts = [tok for tok in pglast.parser.scan(self.sql) if tok.name == "SCONST" and self.sql[tok.start : tok.end + 1] == written]
        found = next((t for t in consts if t.start > loc), None) if after else next((t for t in reversed(consts) if t.end < loc), None)
        return found.start + 1 if found is not None else None

    # -- statements ------------------------------------------------------------------------
    def statement(self, stmt: ast.Node) -> tuple[ast.Node, list[tuple[str, T | None]] | None]:
        if isinstance(stmt, ast.SelectStmt):
            if stmt.valuesLists and stmt.op == SetOperation.SETOP_NONE:
                stmt = self._values_as_select(stmt)
            if stmt.intoClause is not None:
                raise self.fail("0A000", "SELECT INTO is not supported", stmt.intoClause)
            return self.select(stmt, None)
        raise NotAQueryError("0A000", f"not a query: {type(stmt).__name__}")

    def _values_as_select(self, stmt: ast.SelectStmt) -> ast.SelectStmt:
        ncols = len(stmt.valuesLists[0])
        alias = ast.Alias(
            aliasname="*VALUES*", colnames=tuple(_s(f"column{i}") for i in range(1, ncols + 1))
        )
        inner = ast.SelectStmt(
            valuesLists=stmt.valuesLists, op=SetOperation.SETOP_NONE, limitOption=stmt.limitOption
        )
        return ast.SelectStmt(
            targetList=(ast.ResTarget(val=ast.ColumnRef(fields=(ast.A_Star(),))),),
            fromClause=(ast.RangeSubselect(lateral=False, subquery=inner, alias=alias),),
            sortClause=stmt.sortClause,
            limitCount=stmt.limitCount,
            limitOffset=stmt.limitOffset,
            limitOption=stmt.limitOption,
            withClause=stmt.withClause,
            op=SetOperation.SETOP_NONE,
        )

    def select(
        self, stmt: ast.SelectStmt, parent: _Scope | None
    ) -> tuple[ast.SelectStmt, list[tuple[str, T | None]] | None]:
        if with_ties.applies(stmt):
            return self._with_ties(stmt, parent)
        lowered = srf_targets.lower(stmt, lambda v: figure_colname(v)[0])
        if lowered is not None:  # ((f(…)).* in the SELECT list: a LATERAL call instead)
            return self.select(lowered, parent)
        scope = _Scope(parent)
        scope.query = True
        if stmt.withClause is not None:
            self.with_clause(stmt.withClause, scope)
        if stmt.op != SetOperation.SETOP_NONE:
            right_written = [rt.val for rt in stmt.rarg.targetList or ()] if stmt.rarg.op == SetOperation.SETOP_NONE else []
            left_written = [rt.val for rt in stmt.larg.targetList or ()] if stmt.larg.op == SetOperation.SETOP_NONE else []
            larg, lcols = self.select(stmt.larg, scope)
            rarg, rcols = self.select(stmt.rarg, scope)
            stmt.larg, stmt.rarg = larg, rarg
            if lcols is not None and rcols is not None and len(lcols) == len(rcols):
                setop = {SetOperation.SETOP_UNION: "UNION", SetOperation.SETOP_INTERSECT: "INTERSECT"}.get(stmt.op, "EXCEPT")
                for i, ((_, lt), (_, rt)) in enumerate(zip(lcols, rcols, strict=True)):
                    where = right_written[i] if i < len(right_written) else stmt.rarg
                    first = left_written[i] if i < len(left_written) else None
                    self._select_common(setop, [(first, lt), (where, rt)])
            if not (stmt.op == SetOperation.SETOP_UNION and stmt.all):  # (these compare rows)
                setop = {SetOperation.SETOP_UNION: "UNION", SetOperation.SETOP_INTERSECT: "INTERSECT"}.get(stmt.op, "EXCEPT")
                self._no_json_compare(setop, stmt, *(t for _, t in (lcols or ())), *(t for _, t in (rcols or ())))
                jsonb = [i for i, (_, t) in enumerate(lcols or ()) if t is not None and t.name == "jsonb"]
                jsonb += [i for i, (_, t) in enumerate(rcols or ()) if t is not None and t.name == "jsonb" and i not in jsonb]
                if jsonb:
                    self._jsonb_arm_guards(stmt.larg, jsonb)
                    self._jsonb_arm_guards(stmt.rarg, jsonb)
            if (lcols is not None and rcols is not None and len(lcols) != len(rcols)) or (
                _no_columns(lcols) != _no_columns(rcols)
            ):
                setop = {SetOperation.SETOP_UNION: "UNION", SetOperation.SETOP_INTERSECT: "INTERSECT"}.get(stmt.op, "EXCEPT")
                raise self.fail("42601", f"each {setop} query must have the same number of columns", stmt.rarg)
            cols = lcols
            if lcols is not None and rcols is not None and len(lcols) == len(rcols):
                cols = [
                    (n, (_common([lt, rt]) if rt is not None else lt) if lt is not None and lt != UNKNOWN else rt)
                    for (n, lt), (_, rt) in zip(lcols, rcols, strict=True)
                ]
                self._set_operation_unknowns(stmt, cols)
                cols = self._set_operation_numeric(stmt, cols)
                cols = self._set_operation_chars(stmt, cols)
            outer = _Scope(scope)
            if cols is not None:
                outer.add("*setop*", _Rel(list(cols)))
            self._tail(stmt, outer)
            return stmt, cols
        if stmt.valuesLists:
            for row in stmt.valuesLists:
                srf = set_returning_call(row)
                if srf is not None:
                    raise self.fail("0A000", "set-returning functions are not allowed in VALUES", srf)
            written = [list(row) for row in stmt.valuesLists]
            typed = [[self.expr(e, scope) for e in row] for row in stmt.valuesLists]
            first: list[T | None] = [t for _, t in typed[0]]
            for c in range(len(first)):
                column, resolved = self._common_branches(
                    "VALUES", [r[c] for r in written if c < len(r)], [row[c] for row in typed if c < len(row)]
                )
                column = self._unknowns_as(column, resolved or _common([t for _, t in column]))
                for row, pair in zip((r for r in typed if c < len(r)), column, strict=True):
                    row[c] = pair
                common, own = _common([t for _, t in column]), column[0][1]
                if own == UNKNOWN or (own is not None and common is not None and common.name != own.name and common.name in _DATETIME_ORDER):
                    own = common  # (a date among timestamps is a timestamp)
                if resolved is not None and (own is None or resolved.name != own.name):
                    own = resolved
                first[c] = own
                floats = _float_branches(column)
                if floats is not None:
                    for row, node in zip((r for r in typed if c < len(r)), floats[0], strict=True):
                        row[c] = (node, floats[1])
                    first[c] = floats[1]
                    continue
                unified = _numeric_branches(column)
                if unified is not None:
                    for row, node in zip(typed, unified, strict=False):
                        row[c] = (node, NUMERIC_TEXT)
                    first[c] = NUMERIC_TEXT
            stmt.valuesLists = tuple(tuple(n for n, _ in row) for row in typed)
            values_cols = [(f"column{i}", t) for i, t in enumerate(first, start=1)]
            self.arm_columns[id(stmt)] = values_cols
            return stmt, values_cols
        if stmt.groupDistinct:
            raise self.fail("0A000", "GROUP BY DISTINCT is not supported by walsender-proxy", stmt.groupClause[0] if stmt.groupClause else stmt)
        if stmt.distinctClause and stmt.sortClause and not _distinct_on_matches(stmt):
            raise self.fail("42P10", "SELECT DISTINCT ON expressions must match initial ORDER BY expressions", stmt.sortClause[0])
        if stmt.lockingClause and stmt.op == SetOperation.SETOP_NONE:
            found = _aggregate_or_window(stmt)
            if found is not None:  # (CheckSelectLocking's; the other clauses are checked below)
                strength = _LOCK_STRENGTH.get(stmt.lockingClause[0].strength, "FOR UPDATE")
                raise self.fail("0A000", f"{strength} is not allowed with {found}", stmt)
        scope.rows_in_order = _rows_in_order(stmt)
        if stmt.windowClause:
            try:
                scope.windows = window_frames.named_windows(stmt.windowClause)
            except PgError as e:
                raise self.fail(e.sqlstate, e.message, stmt.windowClause[0]) from None
        for i, item in enumerate(stmt.fromClause or ()):
            new = self.from_item(item, scope)
            items = list(stmt.fromClause)
            items[i] = new
            stmt.fromClause = tuple(items)
        if (stmt.sortClause or stmt.limitCount is not None or stmt.limitOffset is not None or stmt.distinctClause) and any(
            _calls_sequence(rt) for rt in stmt.targetList or ()
        ):  # (PostgreSQL evaluates a volatile SELECT list after the sort and the limit; DuckDB before)
            raise self.fail(
                "0A000", "nextval()/setval() in a SELECT list with ORDER BY, LIMIT, OFFSET or DISTINCT is not supported by walsender-proxy", stmt
            )
        if scope.merged and stmt.groupClause:
            ungrouped = using_columns.ungrouped_reference(stmt, scope.merged)
            if ungrouped is not None:  # (PostgreSQL groups by the merged, coerced value)
                shown = ".".join(f.sval for f in ungrouped.fields[-2:])
                raise self.fail("42803", f'column "{shown}" must appear in the GROUP BY clause or be used in an aggregate function', ungrouped)
        functionally_grouped, keys_used = functional_grouping.dependent_columns(stmt, scope)
        self.key_dependencies.update(keys_used)
        if _has_star(stmt.targetList, qualified=False) and join_star.has_using(stmt.fromClause):
            stmt.targetList = self._using_star(stmt, scope)
        if not stmt.targetList:  # (``SELECT FROM t``: rows of no columns, which DuckDB has not)
            stmt.targetList = (ast.ResTarget(name=NO_COLUMNS, val=ast.A_Const(isnull=True)),)
        cols: list[tuple[str, T | None]] | None = []
        targets = []
        #: output positions a * gave, as a reference to the column (ORDER BY n of one)
        star_columns: dict[int, ast.ColumnRef] = {}
        origins: list[Origin | None] | None = [] if parent is None else None
        for rt in stmt.targetList or ():
            val = rt.val
            if origins is not None:
                more = self._origins(val, scope)
                origins = None if more is None else origins + more
            if isinstance(val, ast.ColumnRef) and isinstance(val.fields[-1], ast.A_Star):
                expanded = self._star(val, scope)
                if expanded is None or cols is None:
                    cols = None
                else:
                    first = len(cols)
                    cols.extend(expanded)
                    for i, (n, _) in enumerate(expanded, start=first):  # (what ORDER BY i reads)
                        star_columns[i] = ast.ColumnRef(fields=(*val.fields[-2:-1], _s(n)))
                if len(val.fields) == 3:
                    val.fields = val.fields[1:]
                targets.append(rt)
                continue
            fields = self._row_star(val, scope)
            if fields is not None:  # ((v).*: a column per attribute of v's composite type)
                origins = None
                for field in fields:
                    new, t = self.expr(field.val, scope)
                    targets.append(ast.ResTarget(name=field.name, val=new))
                    if cols is not None:
                        cols.append((field.name, t))
                continue
            name = rt.name or figure_colname(val)[0]
            new, t = self.expr(val, scope)
            rt.val = new
            rt.name = name
            if cols is not None:
                cols.append((name, t))
            targets.append(rt)
        stmt.targetList = tuple(targets) if targets else stmt.targetList
        if stmt.whereClause is not None:
            stmt.whereClause = self.condition(stmt.whereClause, scope)
        if stmt.groupClause:
            for g in stmt.groupClause:
                self._position_in_list("GROUP BY", g, cols)
            groups = [self.expr(g, scope) for g in stmt.groupClause]
            self._no_json_compare("GROUP BY", stmt, *(t for _, t in groups), *self._positional(stmt.groupClause, cols))
            stmt.groupClause = tuple(g for g, _ in groups) + self._jsonb_group_guards(stmt, groups, cols, scope) + functionally_grouped
        if stmt.havingClause is not None:
            stmt.havingClause = self.condition(stmt.havingClause, scope)
        if stmt.windowClause:
            stmt.windowClause = tuple(self._window_def(w, scope, in_clause=True) for w in stmt.windowClause)
        if stmt.distinctClause:
            if stmt.distinctClause == (None,) or list(stmt.distinctClause) == [None]:
                self._no_json_compare("SELECT DISTINCT", stmt, *(t for _, t in cols or ()))
                self._jsonb_distinct_guards(stmt, cols)
            distinct = [self.expr(d, scope) if d is not None else (None, None) for d in stmt.distinctClause]
            self._no_text_numeric("DISTINCT ON", stmt, *(t for _, t in distinct))
            stmt.distinctClause = tuple(
                _call(jsonb_ops.UDF_SORT_KEY, d) if d is not None and self._is_jsonb(d, t, scope) else d for d, t in distinct
            )
        out_scope = _Scope(scope)
        if cols:
            out_scope.add("*output*", _Rel(list(cols)))
        self._star_columns[id(stmt)] = star_columns
        self._tail(stmt, out_scope)
        if origins is not None:
            self.origins = tuple(origins)
        self.arm_columns[id(stmt)] = cols
        return stmt, cols

    def _origins(self, val: ast.Node, scope: _Scope) -> list[Origin | None] | None:
        """The user-table columns a target list item selects as they are (one per column
        it yields; None for an expression), read before the item is rewritten; None when
        the number of columns it yields is not known here."""
        if not isinstance(val, ast.ColumnRef) or not all(isinstance(f, ast.String | ast.A_Star) for f in val.fields):
            return [None]
        names = [f.sval for f in val.fields if isinstance(f, ast.String)]
        if isinstance(val.fields[-1], ast.A_Star):
            rels = [scope.rels.get(names[-1])] if names else [scope.rels[a] for a in scope.order]
            out: list[Origin | None] = []
            for rel in rels:
                if rel is None:
                    return None
                named = rel.origin_names()
                if rel.source is not None and named is not None:
                    out.extend((rel.source, n) for n in named)
                elif rel.columns is not None:
                    out.extend([None] * len(rel.columns))
                else:
                    return None
            return out
        if len(names) == 2:
            rel = scope.rels.get(names[0])
            hits = [rel] if rel is not None else []
        elif len(names) == 1:
            hits = [
                r for r in scope.rels.values()
                if (r.declared is not None and names[0] in r.declared)
                or (r.columns is not None and any(n == names[0] for n, _ in r.columns))
            ]
        else:
            return [None]
        if len(hits) != 1:
            return [None]
        rel = hits[0]
        named = rel.origin_names()
        if rel.source is None or named is None or names[-1] not in named:
            return [None]
        return [(rel.source, names[-1])]

    def _with_ties(self, stmt: ast.SelectStmt, parent: _Scope | None) -> tuple[ast.SelectStmt, list[tuple[str, T | None]] | None]:
        """FETCH FIRST … WITH TIES through window functions (sql/with_ties.py)."""
        try:
            inner = with_ties.inner_query(stmt)
        except PgError as e:  # (PostgreSQL's own refusals place no cursor)
            raise self.fail(e.sqlstate, e.message, stmt if e.sqlstate == "0A000" and "walsender-proxy" in e.message else None) from None
        scope = _Scope(parent)
        offset = self.expr(stmt.limitOffset, scope)[0] if stmt.limitOffset is not None else None
        count = self.expr(stmt.limitCount, scope)[0] if stmt.limitCount is not None else None
        query, cols = self.select(inner, parent)
        if cols is None:
            raise self.fail("0A000", "FETCH FIRST … WITH TIES of a query whose columns are not known is not supported by walsender-proxy", stmt)
        outer = with_ties.outer_query(query, [n for n, _ in cols], offset, count, self._limit_guard)
        cols = cols[:-2]
        self.arm_columns[id(outer)] = cols
        if parent is None and self.origins is not None:
            self.origins = self.origins[: len(cols)]
        return outer, cols

    def _limit_guard(self, kind: str, expr: Any) -> Any:
        """LIMIT's count or OFFSET's, with PostgreSQL's refusal of a negative one (2201W,
        2201X) where DuckDB would word its own."""
        word, state = ("LIMIT", "2201W") if kind == "count" else ("OFFSET", "2201X")
        if isinstance(expr, ast.A_Const):
            if isinstance(expr.val, ast.Integer) and expr.val.ival < 0:
                raise self.fail(state, f"{word} must not be negative")
            return expr
        return self._needing(f"pgc_limit_{kind}", expr)

    def _tail(self, stmt: ast.SelectStmt, scope: _Scope) -> None:
        for s in stmt.sortClause or ():
            if s.sortby_dir == SortByDir.SORTBY_USING:
                # ORDER BY x USING < is ascending, USING > descending (btree's operators)
                op = s.useOp[-1].sval if s.useOp else ""
                if op not in ("<", ">"):
                    raise self.fail("0A000", f"ORDER BY … USING {op} is not supported by walsender-proxy", s)
                s.sortby_dir = SortByDir.SORTBY_ASC if op == "<" else SortByDir.SORTBY_DESC
                s.useOp = None
        if stmt.sortClause:
            out = scope.rel("*output*") or scope.rel("*setop*")
            cols = out.columns if out is not None else None
            sorts = []
            for s in stmt.sortClause:
                self._position_in_list("ORDER BY", s.node, cols)
                self._unambiguous_sort(s, stmt, cols)
                if stmt.op != SetOperation.SETOP_NONE and cols is not None:
                    self._set_operation_sort(s.node, cols)
                (t,) = self._positional([s.node], cols) or (None,)
                self._no_json_compare("ORDER BY a position", s, t)
                if t is not None and array_exprs.depth(t.name) > 1:
                    raise self.fail("0A000", "ORDER BY a position of a multidimensional array is not supported by walsender-proxy", s)
                if t is not None and (t.text_numeric or t.name == "jsonb"):
                    # ORDER BY n of a text-held numeric or of jsonb: by its order key
                    key = jsonb_ops.UDF_SORT_KEY if t.name == "jsonb" else numeric_text.KEY_UDF
                    n = s.node.val.ival
                    if stmt.op != SetOperation.SETOP_NONE and cols is not None:
                        # a set operation's output column, by its name (when unique)
                        name = cols[n - 1][0]
                        if [c for c, _ in cols].count(name) != 1:
                            self._no_text_numeric("ORDER BY a position", s, t)
                            raise self.fail("0A000", "ORDER BY a position of a jsonb column with a name it shares is not supported by walsender-proxy", s)
                        s.node = _call(key, _colref(name))
                    elif not stmt.targetList:
                        self._no_text_numeric("ORDER BY a position", s, t)
                        raise self.fail("0A000", "ORDER BY a position of a jsonb column is not supported here by walsender-proxy", s)
                    elif self._star_columns.get(id(stmt)):
                        # (a * in the list: the nth output column is a column it gave, or not)
                        stars = self._star_columns[id(stmt)]
                        named = cols[n - 1][0] if cols is not None else None
                        if n - 1 not in stars or (cols is not None and [c for c, _ in cols].count(named) != 1):
                            self._no_text_numeric("ORDER BY a position", s, t)
                            raise self.fail("0A000", "ORDER BY a position of a numeric or jsonb column beside a * is not supported here by walsender-proxy", s)
                        s.node = _call(key, copy.deepcopy(stars[n - 1]))
                    else:
                        s.node = _call(key, copy.deepcopy(stmt.targetList[n - 1].val))
                    sorts.append(s)
                else:
                    sorts.append(self.generic(s, scope))
            stmt.sortClause = tuple(sorts)
        if stmt.limitCount is not None:
            stmt.limitCount = self._limit_guard("count", self.expr(stmt.limitCount, scope)[0])
        if stmt.limitOffset is not None:
            stmt.limitOffset = self._limit_guard("offset", self.expr(stmt.limitOffset, scope)[0])
        # row locks mean nothing over an immutable snapshot; DuckDB has no FOR UPDATE (but
        # PostgreSQL's refusals of a lock it could not take are kept)
        if stmt.lockingClause:
            strength = _LOCK_STRENGTH.get(stmt.lockingClause[0].strength, "FOR UPDATE")
            where = (
                "UNION/INTERSECT/EXCEPT" if stmt.op != SetOperation.SETOP_NONE
                else "DISTINCT clause" if stmt.distinctClause
                else "GROUP BY clause" if stmt.groupClause
                else "HAVING clause" if stmt.havingClause is not None
                else None
            )
            if where is not None:
                raise self.fail("0A000", f"{strength} is not allowed with {where}", stmt)
        stmt.lockingClause = None

    def _set_operation_unknowns(self, stmt: ast.SelectStmt, cols: list[tuple[str, T | None]]) -> None:
        """A quoted literal an arm of a set operation selects, where the other arm has a date,
        time or timestamp column, read by that type's input function (:meth:`_unknowns_as`).
        Only a plain arm's own literal is, as PostgreSQL resolves each operation's two arms
        (``'a' UNION 'b'`` below another operation is text)."""
        for c, (_, t) in enumerate(cols):
            for arm in (stmt.larg, stmt.rarg):
                if arm.op != SetOperation.SETOP_NONE:
                    continue
                if arm.valuesLists:
                    rows = [list(row) for row in arm.valuesLists]
                    for row in rows:
                        if c < len(row):
                            row[c] = self._unknowns_as([_unknown_pair(row[c])], t)[0][0]
                    arm.valuesLists = tuple(tuple(row) for row in rows)
                elif arm.targetList:
                    item = self._arm_item(arm, c, len(cols))
                    if item == -1:
                        continue
                    if item is not None:
                        arm.targetList[item].val = self._unknowns_as([_unknown_pair(arm.targetList[item].val)], t)[0][0]
                    elif any(_unknown_pair(rt.val)[1] is not TEXT for rt in arm.targetList) and literals.reads_datestyle(
                        self._lake_source(_null(), t, _Scope(None)) if t is not None and t != UNKNOWN else None
                    ):
                        raise self.fail(
                            "0A000",
                            "a set operation arm with several * and a quoted literal or untyped parameter beside a date "
                            "or time column is not supported by walsender-proxy",
                            arm,
                            hint="List the columns instead of *.",
                        )

    def _arm_item(self, arm: ast.SelectStmt, c: int, width: int) -> int | None:
        """The target list item that is output column ``c`` of a set operation arm of
        ``width`` columns: a ``*`` takes the columns the other items leave it (one ``*``
        only); -1 when the column comes from the ``*``, None when it cannot be placed."""
        stars = [i for i, rt in enumerate(arm.targetList) if _is_star(rt.val)]
        if not stars:
            return c if c < len(arm.targetList) else -1
        if len(stars) > 1:
            return None
        star, spread = stars[0], width - (len(arm.targetList) - 1)
        if c < star:
            return c
        if c < star + spread:
            return -1
        return c - spread + 1

    def _set_operation_sort(self, ref: ast.Node, cols: Sequence[tuple[str, T | None]]) -> None:
        """A set operation is ordered by its output columns' names or positions only, as in
        PostgreSQL's transformSetOperationStmt."""
        if isinstance(ref, ast.A_Const) and isinstance(ref.val, ast.Integer):
            return
        if isinstance(ref, ast.ColumnRef) and len(ref.fields) == 1 and isinstance(ref.fields[0], ast.String):
            name = ref.fields[0].sval
            if name not in [n for n, _ in cols]:
                raise self.fail("42703", f'column "{name}" does not exist', ref)
            return
        raise self.fail(
            "0A000",
            "invalid UNION/INTERSECT/EXCEPT ORDER BY clause",
            ref,
            detail="Only result column names can be used, not expressions or functions.",
            hint="Add the expression/function to every SELECT, or move the UNION into a FROM clause.",
        )

    def _set_operation_chars(
        self, stmt: ast.SelectStmt, cols: list[tuple[str, T | None]]
    ) -> list[tuple[str, T | None]]:
        """character(n) meeting varchar or text in a set operation: PostgreSQL's result is the
        first arm's type (select_common_type: the casts go both ways), so a character(n)
        arm's values lose their padding when the result is varchar or text, and stay
        character (compared without it) when the result is character. A row-comparing
        operation over a character result and unpadded values is refused: which of two
        values equal but for their padding PostgreSQL prints is its hashing's choice."""
        arms = list(_set_operation_arms(stmt))
        arm_cols = [self.arm_columns.get(id(a)) for a in arms]
        if any(a is None or len(a) != len(cols) for a in arm_cols):
            return cols
        out = list(cols)
        distinct = not _union_all(stmt)
        for i in range(len(cols)):
            types = [a[i][1] for a in arm_cols]  # type: ignore[index]
            chars = [is_bpchar(t) for t in types]
            if not any(chars) or all(chars):
                continue
            first = next((t for t in types if t is not None and t != UNKNOWN), None)
            if is_bpchar(first):
                if distinct:
                    raise self.fail(
                        "0A000",
                        "UNION, INTERSECT or EXCEPT of character(n) and other string values is not supported by walsender-proxy",
                        stmt,
                        hint="Cast the character(n) column to text or varchar in every arm.",
                    )
                out[i] = (cols[i][0], T("bpchar"))
                continue
            for arm, char in zip(arms, chars, strict=True):
                if not char:
                    continue
                if arm.valuesLists:
                    arm.valuesLists = tuple(
                        tuple(_call("rtrim", v, _str(" ")) if c == i else v for c, v in enumerate(row))
                        for row in arm.valuesLists
                    )
                elif arm.targetList and len(arm.targetList) == len(cols):
                    arm.targetList[i].val = _call("rtrim", arm.targetList[i].val, _str(" "))
            out[i] = (cols[i][0], first)
        return out

    def _set_operation_numeric(
        self, stmt: ast.SelectStmt, cols: list[tuple[str, T | None]]
    ) -> list[tuple[str, T | None]]:
        """A set operation's numeric columns keep each value's display scale, as
        PostgreSQL's do: where the arms' values differ in scale (``SELECT 1.1 UNION ALL
        SELECT 2``), DuckDB's common DECIMAL would print ``2.0``, so under UNION ALL every
        arm yields the value's text; UNION, INTERSECT and EXCEPT compare rows, which text
        cannot do, and are refused (0A000)."""
        arms = list(_set_operation_arms(stmt))
        arm_cols = [self.arm_columns.get(id(a)) for a in arms]
        out = list(cols)
        for i, (name, _) in enumerate(cols):
            places: list[tuple[Any, int, int]] = []  # (node holder, index, row) per value
            pairs: list[tuple[Any, T | None]] = []
            known = True
            for arm, acols in zip(arms, arm_cols, strict=True):
                if acols is None or len(acols) != len(cols):
                    known = False
                    break
                t = acols[i][1]
                if arm.valuesLists:
                    for r, row in enumerate(arm.valuesLists):
                        pairs.append((row[i], t))
                        places.append((arm, i, r))
                elif arm.targetList and len(arm.targetList) == len(cols):
                    pairs.append((arm.targetList[i].val, t))
                    places.append((arm, i, -1))
                else:
                    known = False
                    break
            types = [t for _, t in pairs] if known else [t for a in arm_cols if a and i < len(a) for t in [a[i][1]]]
            if not any(t is not None and t.name == "numeric" for t in types):
                continue
            floats = _float_branches(pairs) if known else None
            if floats is not None:  # (numeric among floats: each value as the float type)
                self._set_arm_values(floats[0], places)
                out[i] = (name, floats[1])
                continue
            if not known and _one_scale([(None, t) for t in types]):
                continue  # (arms of `*`: DECIMAL columns of one scale)
            unified = _numeric_branches(pairs) if known else None
            distinct = not _union_all(stmt)
            text = any(t is not None and t.text_numeric for t in types)
            if known and unified is None and not (distinct and text):
                continue
            if not known:
                raise self.fail(
                    "0A000",
                    "UNION, INTERSECT or EXCEPT of numeric values of different display scales is not supported by walsender-proxy",
                    stmt,
                    hint="Cast the column to one numeric(p,s) in every arm.",
                )
            if unified is None:  # (every value is text already)
                unified = [node for node, _ in pairs]
            if distinct:  # rows compared by the values' texts: numeric_text.grouped
                unified = [_call(numeric_text.GROUPED_UDF, node) for node in unified]
            self._set_arm_values(unified, places)
            out[i] = (name, NUMERIC_TEXT)
        return out

    @staticmethod
    def _set_arm_values(nodes: Sequence[ast.Node], places: Sequence[tuple[Any, int, int]]) -> None:
        """Put ``nodes`` back where a set operation's values came from: (arm, column, row
        of its VALUES or -1 for its target list)."""
        for node, (arm, c, r) in zip(nodes, places, strict=True):
            if r < 0:
                arm.targetList[c].val = node
            else:
                row = list(arm.valuesLists[r])
                row[c] = node
                arm.valuesLists = (*arm.valuesLists[:r], tuple(row), *arm.valuesLists[r + 1 :])

    def _unambiguous_sort(self, s: ast.SortBy, stmt: ast.SelectStmt, cols: Sequence[tuple[str, T | None]] | None) -> None:
        """``ORDER BY n`` names an output column first (SQL92); two different output
        columns of that name are 42702, as in PostgreSQL's findTargetlistEntrySQL92."""
        ref = s.node
        if not (isinstance(ref, ast.ColumnRef) and len(ref.fields) == 1 and isinstance(ref.fields[0], ast.String)):
            return
        if cols is None or stmt.op != SetOperation.SETOP_NONE or not stmt.targetList:
            return
        name = ref.fields[0].sval
        same = [rt.val for (n, _), rt in zip(cols, stmt.targetList, strict=False) if n == name]
        if len(same) > 1 and any(v != same[0] for v in same[1:]) and not _one_column(same):
            raise self.fail("42702", f'ORDER BY "{name}" is ambiguous', ref)

    def _position_in_list(self, what: str, node: Any, cols: Sequence[tuple[str, T | None]] | None) -> None:
        """``ORDER BY 3`` / ``GROUP BY 3`` naming no output column: PostgreSQL's 42P10."""
        val = node.val if isinstance(node, ast.A_Const) else None
        if isinstance(val, ast.Integer) and cols is not None:
            width = 0 if _no_columns(list(cols)) else len(cols)
            if not 1 <= val.ival <= width:
                raise self.fail("42P10", f"{what} position {val.ival} is not in select list", node)

    @staticmethod
    def _positional(items: Sequence[Any], cols: Sequence[tuple[str, T | None]] | None) -> list[T | None]:
        """The output columns' types that ``ORDER BY 2`` / ``GROUP BY 2`` items name."""
        out: list[T | None] = []
        for item in items:
            val = getattr(item, "val", None) if isinstance(item, ast.A_Const) else None
            n = getattr(val, "ival", None) if isinstance(val, ast.Integer) else None
            if n is not None and cols is not None and 1 <= n <= len(cols):
                out.append(cols[n - 1][1])
        return out

    def _star(self, ref: ast.ColumnRef, scope: _Scope) -> list[tuple[str, T | None]] | None:
        self._read_star(ref, scope)
        names = [f.sval for f in ref.fields if isinstance(f, ast.String)]
        if names:
            rel = scope.rel(names[-1])
            return None if rel is None or rel.columns is None else list(rel.columns)
        out: list[tuple[str, T | None]] = []
        for alias in scope.order:
            cols = scope.rels[alias].columns
            if cols is None:
                return None
            out.extend(cols)
        return out

    def _read_star(self, ref: ast.ColumnRef, scope: _Scope) -> None:
        """``t.*`` or ``*`` reads every column of the relations it names (column
        privileges: see ColumnGuard)."""
        names = [f.sval for f in ref.fields if isinstance(f, ast.String)]
        rels = [scope.rel(names[-1])] if names else [scope.rels[a] for a in scope.order]
        for rel in rels:
            if rel is not None and rel.guard is not None:
                rel.guard.read_all()

    def with_clause(self, w: ast.WithClause, scope: _Scope) -> None:
        ctes = []
        for cte in w.ctes:
            if cte.search_clause is not None or cte.cycle_clause is not None:
                bad = recursive_cte.search_cycle_violation(cte)  # (PostgreSQL's checks of them first)
                if bad is not None:
                    raise self.fail(bad.sqlstate, bad.message, bad.node)
                what = "SEARCH" if cte.search_clause is not None else "CYCLE"
                raise self.fail("0A000", f"the {what} clause of WITH RECURSIVE is not supported by walsender-proxy", cte.search_clause or cte.cycle_clause)
            names = [c.sval for c in cte.aliascolnames or ()]
            if not isinstance(cte.ctequery, ast.SelectStmt):
                raise self.fail("0A000", "data-modifying statements in WITH are not supported", cte)
            first = cte.ctequery
            while isinstance(first, ast.SelectStmt) and first.op != SetOperation.SETOP_NONE:
                first = first.larg
            if not names and isinstance(first, ast.SelectStmt) and first.valuesLists:
                # (VALUES names its columns column1…; DuckDB's would be col0…)
                names = [f"column{i}" for i in range(1, len(first.valuesLists[0]) + 1)]
                cte.aliascolnames = tuple(ast.String(sval=n) for n in names)
            nonrecursive: list[tuple[str, T | None]] | None = None
            if w.recursive:
                scope.ctes[cte.ctename] = _Rel([(n, None) for n in names] if names else None)
                bad = recursive_cte.check(cte)
                if bad is not None:
                    raise self.fail(bad.sqlstate, bad.message, bad.node)
                if recursive_cte.is_recursive(cte):
                    nonrecursive = self._nonrecursive_columns(cte, names, scope)
                    if nonrecursive is not None:  # (the recursive term sees the CTE so typed)
                        scope.ctes[cte.ctename] = _Rel(nonrecursive)
            query, cols = self.select(cte.ctequery, scope)
            cte.ctequery = query
            if nonrecursive is not None and cols is not None:
                for i, ((_, first), (_, overall)) in enumerate(zip(nonrecursive, cols, strict=False)):
                    if first is not None and overall is not None and overall != UNKNOWN and first.name != overall.name:
                        raise self.fail(
                            "42804", f'recursive query "{cte.ctename}" column {i + 1} has type {_type_display(first)} '
                            f"in non-recursive term but type {_type_display(overall)} overall", cte.ctequery.larg,
                            hint="Cast the output of the non-recursive term to the correct type.",
                        )
            if cols is not None and len(names) > len(cols):
                raise self.fail(
                    "42P10",
                    f'WITH query "{cte.ctename}" has {len(cols)} columns available but {len(names)} columns specified',
                    cte,
                )
            if cols is not None:  # (unknown-typed output columns are text to the query above)
                cols = [(names[i] if i < len(names) else n, TEXT if t == UNKNOWN else t) for i, (n, t) in enumerate(cols)]
            scope.ctes[cte.ctename] = _Rel(cols)
            ctes.append(cte)
        w.ctes = tuple(ctes)

    def _int4_series(self, rf: ast.RangeFunction, call: ast.Node, colname: str, given: Sequence[str], alias: str, scope: _Scope) -> ast.Node:
        """generate_series(int4, int4 [, int4]) in FROM: DuckDB's table function gives
        BIGINT, PostgreSQL's values are int4; the function streams, its values cast above it."""
        inner_cols = [_s("pgc_g")] + ([_s("pgc_o")] if rf.ordinality else [])
        targets = [ast.ResTarget(name=colname, val=_cast(_colref("pgc_series", "pgc_g"), "INTEGER"))]
        rel: list[tuple[str, T | None]] = [(colname, T("int4"))]
        if rf.ordinality:
            ordname = given[1] if len(given) > 1 else "ordinality"
            targets.append(ast.ResTarget(name=ordname, val=_colref("pgc_series", "pgc_o")))
            rel.append((ordname, T("int8")))
        inner = ast.RangeFunction(
            lateral=rf.lateral, ordinality=rf.ordinality, is_rowsfrom=False, functions=((call, None),),
            alias=ast.Alias(aliasname="pgc_series", colnames=tuple(inner_cols)),
        )
        scope.add(alias, _Rel(rel))
        return ast.RangeSubselect(
            lateral=rf.lateral,
            subquery=ast.SelectStmt(targetList=tuple(targets), fromClause=(inner,), op=SetOperation.SETOP_NONE),
            alias=ast.Alias(aliasname=alias, colnames=tuple(_s(n) for n, _ in rel)),
        )

    def _nonrecursive_columns(self, cte: ast.CommonTableExpr, names: Sequence[str], scope: _Scope) -> list[tuple[str, T | None]] | None:
        """The columns of a recursive CTE as its non-recursive term types them (an untyped
        literal there is text), analysed on a copy: PostgreSQL types the CTE by that term
        before it analyses the recursive one. None when they are not known."""
        saved = (dict(self.param_uses), list(self.set_configs), self._unfolded)
        try:
            first = copy.deepcopy(cte.ctequery.larg)
            if cte.ctequery.withClause is not None and first.withClause is None:  # (the union's WITH is the term's too)
                first.withClause = copy.deepcopy(cte.ctequery.withClause)
            _, cols = self.select(first, scope)
        finally:
            self.param_uses, self.set_configs, self._unfolded = dict(saved[0]), list(saved[1]), saved[2]
        if cols is None:
            return None
        return [(names[i] if i < len(names) else n, TEXT if t == UNKNOWN else t) for i, (n, t) in enumerate(cols)]

    # -- FROM ------------------------------------------------------------------------------
    def from_item(self, item: ast.Node, scope: _Scope) -> ast.Node:
        first = len(scope.order)
        new = self._from_item(item, scope)
        if not isinstance(new, ast.JoinExpr) and len(scope.order) > first:
            scope.item_alias[id(new)] = scope.order[first]
        return new

    def _from_item(self, item: ast.Node, scope: _Scope) -> ast.Node:
        if isinstance(item, ast.RangeVar):
            return self.range_var(item, scope)
        if isinstance(item, ast.JoinExpr):
            if item.join_using_alias is not None:
                raise self.fail("0A000", "JOIN … USING (…) AS alias is not supported by walsender-proxy", item)
            members = len(scope.order)
            item.larg = self.from_item(item.larg, scope)
            middle = len(scope.order)
            item.rarg = self.from_item(item.rarg, scope)
            if item.usingClause:
                def side(aliases: Sequence[str]) -> dict[str, list[tuple[str, str | None, int]]]:
                    return {
                        a: [(n, t.name if t is not None else None, t.typmod if t is not None else -1) for n, t in _rel_types(scope.rels[a])]
                        for a in aliases if a in scope.rels
                    }  # fmt: skip

                scope.merged.update(using_columns.merged(item, side(scope.order[members:middle]), side(scope.order[middle:])))
            self._read_join_columns(item, scope.order[members:middle], scope.order[middle:], scope)
            if item.usingClause or item.isNatural:  # (they compare the columns as stored)
                names = {n.sval for n in item.usingClause or ()}
                for rel in scope.rels.values():
                    for name, t in _rel_types(rel):
                        if item.isNatural or name in names:
                            self._no_text_numeric("JOIN USING" if names else "NATURAL JOIN", item, t)
            if item.quals is not None:
                item.quals = self.condition(item.quals, scope)
            if item.alias is not None:  # (its alias hides the names of the items it joins)
                if any(scope.rels[a].guard is not None for a in scope.order[members:]):
                    raise self.fail("0A000", "column privileges of a table in a join with an alias are not supported by walsender-proxy", item)
                scope.hide(scope.order[members:], item.alias.aliasname)
                scope.add(item.alias.aliasname, _Rel(None))
            return item
        if isinstance(item, ast.RangeSubselect):
            sub = item.subquery
            is_values = isinstance(sub, ast.SelectStmt) and bool(sub.valuesLists)
            query, cols = self.select(sub, scope if item.lateral or not scope.rels else _barrier(scope))
            item.subquery = query
            alias = item.alias
            if alias is None:
                alias = ast.Alias(aliasname=f"unnamed_subquery_{len(scope.order)}")
                item.alias = alias
            if cols is not None:
                given = [c.sval for c in alias.colnames or ()]
                if is_values and not given:
                    alias.colnames = tuple(_s(n) for n, _ in cols)
                # (a subquery's unknown-typed output columns are text to the query above)
                cols = [(given[i] if i < len(given) else n, TEXT if t == UNKNOWN else t) for i, (n, t) in enumerate(cols)]
            scope.add(alias.aliasname, _Rel(cols))
            return item
        if isinstance(item, ast.RangeFunction):
            return self.range_function(item, scope)
        raise self.fail("0A000", f"{type(item).__name__} in FROM is not supported", item)

    def _read_join_columns(self, item: ast.JoinExpr, left: Sequence[str], right: Sequence[str], scope: _Scope) -> None:
        """JOIN … USING and NATURAL JOIN read the joined columns of both sides."""
        if not (item.usingClause or item.isNatural):
            return
        sides = [[scope.rels[a] for a in aliases if a in scope.rels] for aliases in (left, right)]
        if not any(r.guard is not None for side in sides for r in side):
            return

        def names_of(side: list[_Rel]) -> set[str]:
            return {n for r in side for n, _ in r.columns or ()}

        if item.usingClause:
            joined = {n.sval for n in item.usingClause}
        else:
            if any(r.columns is None for side in sides for r in side):
                raise self.fail("0A000", "column privileges in a NATURAL JOIN the proxy cannot resolve", item)
            joined = names_of(sides[0]) & names_of(sides[1])
        for side in sides:
            for r in side:
                if r.guard is not None:
                    for name in sorted(joined):
                        if any(n == name for n, _ in r.columns or ()):
                            r.guard.read(name)

    def range_var(self, rv: ast.RangeVar, scope: _Scope) -> ast.Node:
        alias = rv.alias.aliasname if rv.alias is not None else rv.relname
        if rv.catalogname is not None and rv.catalogname != "postgres":
            raise self.fail(
                "0A000",
                f"cross-database references are not implemented: {rv.catalogname}.{rv.schemaname}.{rv.relname}",
                rv,
            )
        if rv.schemaname is None:
            cte = scope.cte(rv.relname)
            if cte is not None:
                cols = cte.columns
                if cols is not None and rv.alias is not None and rv.alias.colnames:
                    given = [c.sval for c in rv.alias.colnames]
                    cols = [(given[i] if i < len(given) else n, t) for i, (n, t) in enumerate(cols)]
                scope.add(alias, _Rel(cols))
                return rv
        d = pgcatalog_defs.relation(rv.schemaname, rv.relname, self.server_version_num)
        if d is not None:
            self.needs.add(d.registered)
            cols = [(n, _column_t(t)) for n, t in d.columns]
            if rv.alias is not None and rv.alias.colnames:
                given = [c.sval for c in rv.alias.colnames]
                cols = [(given[i] if i < len(given) else n, t) for i, (n, t) in enumerate(cols)]
            scope.add(alias, _Rel(cols, tableoid=d.oid))
            new_alias = rv.alias if rv.alias is not None else ast.Alias(aliasname=rv.relname)
            return ast.RangeVar(relname=d.registered, inh=True, relpersistence="p", alias=new_alias)
        if rv.schemaname in (None, "pg_catalog") and rv.relname in pgcatalog_defs.UNEMULATED:
            raise self.fail("0A000", f'relation "pg_catalog.{rv.relname}" is not supported by walsender-proxy', rv)
        if rv.schemaname in ("pg_catalog", "information_schema"):
            raise self.fail("42P01", f'relation "{rv.schemaname}.{rv.relname}" does not exist', rv)
        try:
            sub = self.resolve_user_table(rv.schemaname, rv.relname)
        except privilege_checks.SchemaDenied as e:  # (checked as the name is looked up: placed)
            raise self.fail(e.sqlstate, e.message, rv) from None
        if sub is None:
            shown = f"{rv.schemaname}.{rv.relname}" if rv.schemaname else rv.relname
            raise self.fail("42P01", f'relation "{shown}" does not exist', rv)
        if isinstance(sub, views.ViewQuery):
            return self._view(rv, sub, scope, alias)
        declared = None
        columns: list[tuple[str, T | None]] | None = None
        row_names = None
        guard = None
        tableoid = None
        tableoid_sql = None
        primary_key: tuple[str, ...] = ()
        key_table = 0
        if isinstance(sub, UserTable):
            primary_key, key_table = sub.primary_key, sub.key_table
            tableoid_sql = sub.tableoid_sql if rv.inh else None
            if sub.readable is not None:
                guard = ColumnGuard(sub.name, sub.readable, tuple(sub.types))
            tableoid = sub.oid if sub.oid else (-1 if sub.partitioned else None)
            if sub.partitioned and not rv.inh:  # (ONLY: a partitioned table holds no rows)
                sub = replace(sub, sql=f"SELECT * FROM ({sub.sql}) WHERE false")
            sub, declared = sub.sql, sub.types
            if rv.alias is not None and rv.alias.colnames:
                row_names = list(declared)
                given = [c.sval for c in rv.alias.colnames]
                names = given + list(declared)[len(given):]
                declared = dict(zip(names, declared.values(), strict=False))
                to_given = dict(zip(row_names, names, strict=False))
                primary_key = tuple(to_given.get(k, k) for k in primary_key)
                if guard is not None:
                    guard = replace(guard, renamed=dict(zip(names, row_names, strict=False)))
            # every column with its type, as stored: `SELECT *` of the table (in a subquery,
            # a CTE) keeps them (max over an unconstrained numeric compares numbers)
            columns = [(n, _lake_t(ct, stored=True)) for n, ct in declared.items()]
        self.user_tables.append((rv.schemaname, rv.relname))
        ph = f"wpx_rel_{self.nonce}_{len(self.placeholders)}"
        self.placeholders[ph] = sub
        renamed = rv.alias is not None and bool(rv.alias.colnames)
        scope.add(alias, _Rel(columns, declared, None if renamed else (rv.schemaname, rv.relname), row_names=row_names, guard=guard,
                              tableoid=tableoid, tableoid_sql=tableoid_sql, primary_key=primary_key, key_table=key_table))  # fmt: skip
        new_alias = rv.alias if rv.alias is not None else ast.Alias(aliasname=rv.relname)
        return ast.RangeVar(relname=ph, inh=True, relpersistence="p", alias=new_alias)

    def _unnest_zipped(
        self, rf: ast.RangeFunction, args: list[Any], types: list[T | None], given: list[str], alias: str, scope: _Scope
    ) -> ast.Node:
        """``unnest(a, b, …)`` in FROM: PostgreSQL reads it as ``ROWS FROM (unnest(a),
        unnest(b), …)``, the arrays side by side, the shorter ones padded with NULLs (as
        DuckDB unnests several lists in one SELECT list); each column is named unnest."""
        targets = []
        cols: list[tuple[str, T | None]] = []
        flat = []  # (each argument's elements, a multidimensional array's in order)
        for i, (arg, t) in enumerate(zip(args, types, strict=True)):
            assert t is not None
            if array_exprs.depth(t.name) > 1:
                arg, t = array_exprs.elements(arg, array_exprs.depth(t.name)), T("_" + t.name.lstrip("_"))
            flat.append(arg)
            colname = given[i] if i < len(given) else "unnest"
            cols.append((colname, t.elem))
            targets.append(ast.ResTarget(name=f"pgc_u{i}", val=_call("unnest", arg)))
        if rf.ordinality:
            lengths = [ast.CoalesceExpr(args=(_call("len", copy.deepcopy(a)), _int(0))) for a in flat]
            longest = _call("greatest", *lengths)
            targets.append(ast.ResTarget(name="pgc_ord", val=_cast(_call("unnest", _call("range", _int(1), _op("+", longest, _int(1)))), "bigint")))
            cols.append((given[len(args)] if len(given) > len(args) else "ordinality", T("int8")))
        if len(given) > len(cols):
            raise self.fail("42P10", f'table "{alias}" has {len(cols)} columns available but {len(given)} columns specified', rf)
        scope.add(alias, _Rel(cols))
        return ast.RangeSubselect(
            lateral=True,
            subquery=ast.SelectStmt(targetList=tuple(targets), op=SetOperation.SETOP_NONE),
            alias=ast.Alias(aliasname=alias, colnames=tuple(_s(n) for n, _ in cols)),
        )

    def _view(self, rv: ast.RangeVar, vq: views.ViewQuery, scope: _Scope, alias: str) -> ast.Node:
        """A view in FROM: its query as a subquery named by the view's columns (PostgreSQL's
        rewriter), analysed apart from the statement around it."""
        if vq.oid in self._views_open:
            raise self.fail("42P17", f'infinite recursion detected in rules for relation "{vq.name}"', rv)
        given = [c.sval for c in rv.alias.colnames] if rv.alias is not None and rv.alias.colnames else []
        if len(given) > len(vq.columns):
            raise self.fail("42P10", f'table "{alias}" has {len(vq.columns)} columns available but {len(given)} columns specified', rv)
        names = given + list(vq.columns[len(given):])
        self._views_open.add(vq.oid)
        reader = privileges.READ_AS.set(vq.oid)  # (its relations are read as its owner)
        keys = set(self.key_dependencies)  # (the view's own GROUP BY is its dependency, not ours)
        try:
            query, cols = self.select(views.parse_query(vq.sql), _Scope(None))
        finally:
            privileges.READ_AS.reset(reader)
            self._views_open.discard(vq.oid)
            self.key_dependencies = keys
        if cols is not None:  # (unknown-typed output columns are text to the query above)
            cols = [(names[i] if i < len(names) else n, TEXT if t == UNKNOWN else t) for i, (n, t) in enumerate(cols)]
        self.user_tables.append((rv.schemaname, rv.relname))  # (RowDescription names the view)
        scope.add(alias, _Rel(cols, None, None if given else (rv.schemaname, rv.relname), view=True))
        return ast.RangeSubselect(lateral=False, subquery=query, alias=ast.Alias(aliasname=alias, colnames=tuple(_s(n) for n in names)))

    def range_function(self, rf: ast.RangeFunction, scope: _Scope) -> ast.Node:
        if rf.is_rowsfrom or len(rf.functions) != 1:
            raise self.fail("0A000", "ROWS FROM (...) is not supported", rf)
        call, coldefs = rf.functions[0]
        if isinstance(call, ast.FuncCall) and sql_function_calls.is_user_call(call):
            return sql_function_calls.from_call(self, rf, call, scope)
        name = self._func_name(call) if isinstance(call, ast.FuncCall) else ""
        if name in json_records.FUNCTIONS and (coldefs or rf.coldeflist or not json_records.FUNCTIONS[name][2] or self._row_base(call) is not None):
            return self._json_record_function(rf, call, name, coldefs or rf.coldeflist, scope)
        if coldefs or rf.coldeflist:  # (only functions returning record take one in PostgreSQL)
            raise self.fail("0A000", "column definition lists are not supported by walsender-proxy", rf)
        if not isinstance(call, ast.FuncCall):
            raise self.fail("0A000", "only function calls are supported in FROM", rf)
        alias = rf.alias.aliasname if rf.alias is not None else name
        given = [c.sval for c in (rf.alias.colnames or ())] if rf.alias is not None else []
        args = []
        types = []
        for na, t in self._unknown_args(name, [self.expr(a, scope) for a in call.args or ()]):
            args.append(na)
            types.append(t)
        if name == "unnest" and len(args) > 1 and len(call.funcname) == 1:
            # (the parser's ROWS FROM (pg_catalog.unnest(a), pg_catalog.unnest(b), …))
            for t in types:
                if t is None or t == UNKNOWN or not t.is_array:
                    raise self.fail(
                        "42883", f"function pg_catalog.unnest({_type_display(t)}) does not exist", call,
                        hint="No function matches the given name and argument types. You might need to add explicit type casts.",
                    )  # fmt: skip
            return self._unnest_zipped(rf, args, types, given, alias, scope)
        if name == "pg_get_publication_tables" and self.server_version_num >= 160000:
            return self._publication_tables16(rf, call, args, types, given, alias, scope)
        if name == "pg_get_publication_tables" and call.func_variadic:  # (15's takes one text)
            raise self._no_function(name, types, call)
        self._function_exists(name, call, types, args)
        if name == "pg_partition_ancestors":
            return self._partition_ancestors(rf, args, types, given, alias, call, scope)
        if name == "pg_partition_tree":
            return self._partition_tree(rf, args, types, given, alias, call, scope)
        if name == "pg_get_publication_tables":
            if len(args) != 1:
                raise self._no_function(name, types, call)
            self.needs.add("pgc_pg_get_publication_tables")
            call = _call("pgc_pg_get_publication_tables", *args)
            cols: list[tuple[str, T | None]] = [
                ("relid", T("oid")),
                ("attrs", T("int2vector", zero_based=True)),
                ("qual", T("pg_node_tree")),
            ]
        elif name == "pg_get_keywords":
            if args:
                raise self._no_function(name, types, call)
            self.needs.add("pgc_pg_get_keywords")
            fields = [("word", TEXT), ("catcode", T("char")), ("barelabel", BOOL), ("catdesc", TEXT), ("baredesc", TEXT)]
            names = [given[i] if i < len(given) else n for i, (n, _) in enumerate(fields)]
            scope.add(alias, _Rel([(n, t) for n, (_, t) in zip(names, fields, strict=True)]))
            return ast.RangeVar(
                relname="pgc_pg_get_keywords",
                inh=True,
                relpersistence="p",
                alias=ast.Alias(aliasname=alias, colnames=tuple(_s(n) for n in names)),
            )
        elif name == "generate_series" and len(args) in (2, 3) and any(t is not None and t.name == "numeric" for t in types):
            # generate_series(numeric, numeric [, numeric]): numeric_math.series, exact
            if rf.ordinality:
                raise self.fail("0A000", "generate_series(numeric) WITH ORDINALITY is not supported by walsender-proxy", rf)
            series = _call("unnest", self._numeric_series(args, types, call))
            colname = given[0] if given else alias
            scope.add(alias, _Rel([(colname, NUMERIC_TEXT)]))
            return ast.RangeSubselect(
                lateral=True,
                subquery=ast.SelectStmt(targetList=(ast.ResTarget(name=colname, val=series),), op=SetOperation.SETOP_NONE),
                alias=ast.Alias(aliasname=alias, colnames=(_s(colname),)),
            )
        elif name == "pg_options_to_table":
            # each "name=value" of a reloptions-style text[] (value NULL without "=")
            if len(args) != 1 or not (types[0] is None or types[0] == UNKNOWN or types[0].name == "_text"):
                raise self._no_function(name, types, call)
            o = _colref("wpx_opt", "o")
            eq = _call("strpos", o, _str("="))
            has_eq = ast.A_Expr(kind=A_Expr_Kind.AEXPR_OP, name=(_s(">"),), lexpr=eq, rexpr=_int(0))
            option_name = ast.CaseExpr(args=(ast.CaseWhen(expr=has_eq, result=_call("left", o, ast.A_Expr(kind=A_Expr_Kind.AEXPR_OP, name=(_s("-"),), lexpr=copy.deepcopy(eq), rexpr=_int(1)))),), defresult=o)
            option_value = ast.CaseExpr(args=(ast.CaseWhen(expr=copy.deepcopy(has_eq), result=_call("substr", o, ast.A_Expr(kind=A_Expr_Kind.AEXPR_OP, name=(_s("+"),), lexpr=copy.deepcopy(eq), rexpr=_int(1)))),))
            names = [given[i] if i < len(given) else n for i, n in enumerate(("option_name", "option_value"))]
            scope.add(alias, _Rel([(names[0], TEXT), (names[1], TEXT)]))
            source = ast.RangeFunction(
                functions=((_call("unnest", _cast(args[0], "VARCHAR", array=True)), None),),
                alias=ast.Alias(aliasname="wpx_opt", colnames=(_s("o"),)),
            )
            return ast.RangeSubselect(
                lateral=True,
                subquery=ast.SelectStmt(
                    targetList=(ast.ResTarget(name=names[0], val=option_name), ast.ResTarget(name=names[1], val=option_value)),
                    fromClause=(source,),
                    op=SetOperation.SETOP_NONE,
                ),
                alias=ast.Alias(aliasname=alias, colnames=tuple(_s(n) for n in names)),
            )
        elif name in ("generate_series", "unnest", "string_to_table"):
            if name == "string_to_table":  # (string_to_array's elements)
                if len(args) not in (2, 3) or not all(t is None or t.name in TEXTISH for t in types):
                    raise self._no_function(name, types, call)
                self.needs.add(f"pgc_string_to_array{len(args)}")
                name, args, types = "unnest", [_call(f"pgc_string_to_array{len(args)}", *args)], [T("_text")]
            elif name == "unnest" and len(args) == 1 and types[0] is not None and array_exprs.depth(types[0].name) > 1:
                args, types = [array_exprs.elements(args[0], array_exprs.depth(types[0].name))], [T("_" + types[0].name.lstrip("_"))]
            if name == "unnest" and len(args) != 1:
                raise self._no_function(name, types, call)
            t = types[0] if name == "generate_series" else (types[0].elem if types[0] else None)
            if name == "generate_series" and t is not None and t.name in ("int2", "unknown"):
                t = T("int4")
            call = _call(name, *args)
            cols = [(given[0] if given else alias, t)]
            int4_series = name == "generate_series" and t is not None and t.name == "int4"
            # (a macro's list, unnested: DuckDB takes no subquery in a table function's argument)
            scalar = any(_has_subquery(a) for a in args) or (name == "generate_series" and self._zoned_series(types))
            if int4_series and not scalar:
                return self._int4_series(rf, call, cols[0][0], given, alias, scope)
            if rf.ordinality and scalar:
                # (the same, numbered: DuckDB binds no lambda of a macro in a table function's argument)
                colname, ordname = cols[0][0], given[1] if len(given) > 1 else "ordinality"
                listed = args[0] if name == "unnest" else self._series_list(args, types)
                inner = ast.RangeSubselect(
                    subquery=ast.SelectStmt(targetList=(ast.ResTarget(name="pgc_v", val=listed),), op=SetOperation.SETOP_NONE),
                    alias=ast.Alias(aliasname="pgc_u"),
                )
                numbers = _cast(_call("unnest", _call("range", _int(1), _op("+", _call("len", _colref("pgc_v")), _int(1)))), "bigint")
                scope.add(alias, _Rel([(colname, t), (ordname, T("int8"))]))
                return ast.RangeSubselect(
                    lateral=rf.lateral,
                    subquery=ast.SelectStmt(
                        targetList=(
                            ast.ResTarget(name=colname, val=_cast(_call("unnest", _colref("pgc_v")), "INTEGER") if int4_series else _call("unnest", _colref("pgc_v"))),
                            ast.ResTarget(name=ordname, val=numbers),
                        ),
                        fromClause=(inner,),
                        op=SetOperation.SETOP_NONE,
                    ),
                    alias=ast.Alias(aliasname=alias, colnames=(_s(colname), _s(ordname))),
                )
            if not rf.ordinality and scalar:
                # DuckDB's table functions take no subqueries (emulation macros such as
                # current_schemas() are subqueries): the scalar form, unnested, is the same set;
                # so is it for generate_series(int4, int4), whose values are int4 (DuckDB's BIGINT)
                colname = cols[0][0]
                val = call if name == "unnest" else _call("unnest", self._series_list(args, types))
                if int4_series:
                    val = _cast(val, "INTEGER")
                scope.add(alias, _Rel([(colname, t)]))
                return ast.RangeSubselect(
                    lateral=rf.lateral,
                    subquery=ast.SelectStmt(
                        targetList=(ast.ResTarget(name=colname, val=val),), op=SetOperation.SETOP_NONE
                    ),
                    alias=ast.Alias(aliasname=alias, colnames=(_s(colname),)),
                )
            if rf.alias is None:
                rf.alias = ast.Alias(aliasname=alias)
            if not given:
                rf.alias.colnames = (_s(alias),)
        elif name in ("regexp_matches", "regexp_split_to_table"):  # a set: the UDF's list, unnested in a subquery
            if rf.ordinality:
                raise self.fail("0A000", f"{name}() WITH ORDINALITY is not supported by walsender-proxy", call)
            done = self._regex_call(name, list(zip(args, types, strict=True)), call)
            assert done is not None
            colname = given[0] if given else alias
            scope.add(alias, _Rel([(colname, done[1])]))
            return ast.RangeSubselect(
                lateral=rf.lateral,
                subquery=ast.SelectStmt(targetList=(ast.ResTarget(name=colname, val=done[0]),), op=SetOperation.SETOP_NONE),
                alias=ast.Alias(aliasname=alias, colnames=(_s(colname),)),
            )
        elif name in SERVER_SETS and name in self.server_udfs:
            # rows of the server's, e.g. SELECT * FROM pg_logical_slot_get_changes(…): its
            # UDF's LIST of STRUCTs, unnested once in a MATERIALIZED CTE
            node = self._server_set_call(name, call, scope)
            fields = SERVER_SETS[name]
            names = [given[i] if i < len(given) else n for i, (n, _) in enumerate(fields)]
            scope.add(alias, _Rel([(n, T(t)) for n, (_, t) in zip(names, fields, strict=True)]))
            if rf.ordinality:
                raise self.fail("0A000", f"{name}() WITH ORDINALITY is not supported by walsender-proxy", rf)
            cte = ast.CommonTableExpr(
                ctename="wpx_rows",
                ctematerialized=CTEMaterialize.CTEMaterializeAlways,
                ctequery=ast.SelectStmt(targetList=(ast.ResTarget(name="rec", val=_call("unnest", node)),), op=SetOperation.SETOP_NONE),
            )
            targets = []
            for f, t in fields:
                val: ast.Node = ast.A_Indirection(arg=_colref("rec"), indirection=(_s(f),))
                targets.append(ast.ResTarget(val=_cast(val, "UINTEGER") if t == "xid" else val))
            sel = ast.SelectStmt(
                withClause=ast.WithClause(ctes=(cte,), recursive=False),
                targetList=tuple(targets),
                fromClause=(ast.RangeVar(relname="wpx_rows", inh=True, relpersistence="p"),),
                op=SetOperation.SETOP_NONE,
            )
            return ast.RangeSubselect(lateral=rf.lateral, subquery=sel, alias=ast.Alias(aliasname=alias, colnames=tuple(_s(n) for n in names)))
        elif name in SERVER_RECORDS and name in self.server_udfs:
            # a record of the server's, e.g. SELECT * FROM pg_create_logical_replication_slot(…):
            # its UDF's STRUCT, taken apart into columns. The call sits in a MATERIALIZED CTE:
            # DuckDB evaluates it exactly once there, where unnest(STRUCT) called it once a
            # field, and a subquery whose columns go unread (SELECT 'x' FROM f(…)) not at all.
            node, _ = self.func_call(call, scope)
            assert isinstance(node, ast.FuncCall)
            node.funcname = (_s(self.server_udfs[name] + ROW_SUFFIX),)
            fields = SERVER_RECORDS[name]
            names = [given[i] if i < len(given) else n for i, (n, _) in enumerate(fields)]
            scope.add(alias, _Rel([(n, T(t)) for n, (_, t) in zip(names, fields, strict=True)]))
            cte = ast.CommonTableExpr(
                ctename="wpx_record",
                ctematerialized=CTEMaterialize.CTEMaterializeAlways,
                ctequery=ast.SelectStmt(
                    targetList=(ast.ResTarget(name="rec", val=node),), op=SetOperation.SETOP_NONE
                ),
            )
            sel = ast.SelectStmt(
                withClause=ast.WithClause(ctes=(cte,), recursive=False),
                targetList=tuple(
                    ast.ResTarget(val=ast.A_Indirection(arg=_colref("rec"), indirection=(_s(f),)))
                    for f, _ in fields
                ),
                fromClause=(ast.RangeVar(relname="wpx_record", inh=True, relpersistence="p"),),
                op=SetOperation.SETOP_NONE,
            )
            return ast.RangeSubselect(
                lateral=rf.lateral,
                subquery=sel,
                alias=ast.Alias(aliasname=alias, colnames=tuple(_s(n) for n in names)),
            )
        elif name in json_exprs.TABLE_FUNCTIONS or name in json_exprs.JSONB_SETS:
            if rf.ordinality:
                raise self.fail("0A000", f"{name}() WITH ORDINALITY is not supported by walsender-proxy", rf)
            base = json_exprs.JSONB_SETS.get(name, name)
            done = self._as_jsonb_twin(
                name, base, lambda: json_exprs.table_function(_JsonHost(self, scope), base, call, args, types, alias, jsonb=base != name)
            )
            assert done is not None
            sub, fields = done
            if base != name:  # (jsonb_each's values are jsonb)
                fields = [(n, "jsonb" if t == "json" else t) for n, t in fields]
            names = [given[i] if i < len(given) else n for i, (n, _) in enumerate(fields)]
            scalar = names[0] if len(names) == 1 else None
            scope.add(alias, _Rel([(n, T(t)) for n, (_, t) in zip(names, fields, strict=True)], scalar_column=scalar))
            return ast.RangeSubselect(
                lateral=rf.lateral, subquery=sub, alias=ast.Alias(aliasname=alias, colnames=tuple(_s(n) for n in names))
            )
        else:
            # a scalar function in FROM is a one-row table whose column is named after it
            node, t = self.func_call(call, scope)
            colname = given[0] if given else alias
            sel = ast.SelectStmt(
                targetList=(ast.ResTarget(name=colname, val=node),), op=SetOperation.SETOP_NONE
            )
            scope.add(alias, _Rel([(colname, t)]))
            return ast.RangeSubselect(
                lateral=rf.lateral,
                subquery=sel,
                alias=ast.Alias(aliasname=alias, colnames=(_s(colname),)),
            )
        if given:
            cols = [(given[i] if i < len(given) else n, t) for i, (n, t) in enumerate(cols)]
        scope.add(alias, _Rel(cols))
        rf.functions = ((call, None),)
        return rf

    def _publication_tables16(
        self, rf: ast.RangeFunction, call: ast.FuncCall, args: list[ast.Node], types: list[T | None], given: list[str], alias: str, scope: _Scope
    ) -> ast.Node:
        """``pg_get_publication_tables(VARIADIC pubname text[])``, as PostgreSQL 16 and later
        define it (pubid, relid, attrs, qual): its names one by one or, with VARIADIC, as
        one array."""
        textish = ("text", "varchar", "name", "bpchar", "unknown")
        if call.func_variadic:
            if len(types) == 1 and types[0] == UNKNOWN:
                raise self.fail("0A000", "VARIADIC of an untyped literal in a call of pg_get_publication_tables() is not supported by walsender-proxy; cast it to text[]", call)
            ok = len(types) == 1 and types[0] is not None and types[0].is_array and types[0].elem is not None and types[0].elem.name in textish
            names = _cast(args[0], "VARCHAR", array=True) if ok else None
        else:
            ok = bool(types) and all(t is None or t.name in textish for t in types)
            names = _call("list_value", *(_cast(a, "VARCHAR") for a in args)) if ok else None
        if names is None:
            raise self._no_function("pg_get_publication_tables", types, call)
        self.needs.add("pgc_pg_get_publication_tables16")
        fields: list[tuple[str, T | None]] = [("pubid", T("oid")), ("relid", T("oid")), ("attrs", T("int2vector", zero_based=True)), ("qual", T("pg_node_tree"))]
        cols = [(given[i] if i < len(given) else n, t) for i, (n, t) in enumerate(fields)]
        scope.add(alias, _Rel(cols))
        rf.functions = ((_call("pgc_pg_get_publication_tables16", names), None),)
        if rf.alias is None:
            rf.alias = ast.Alias(aliasname=alias)
        return rf

    def _partition_ancestors(
        self,
        rf: ast.RangeFunction,
        args: list[ast.Node],
        types: list[T | None],
        given: list[str],
        alias: str,
        call: ast.FuncCall,
        scope: _Scope,
    ) -> ast.Node:
        """``pg_partition_ancestors(rel) [WITH ORDINALITY]`` in FROM (psql's ``\\d`` has it):
        the relation and its ancestors up to the root if it is a partition or partitioned,
        else no row, as PostgreSQL's check_rel_can_be_partition decides."""
        if len(args) != 1:
            raise self._no_function("pg_partition_ancestors", types, call)
        self.needs.add("pgc_pg_partition_ancestors")
        names = [given[0] if given else "relid"]
        targets = [ast.ResTarget(name=names[0], val=_call("unnest", _call("pgc_pg_partition_ancestors", args[0])))]
        cols: list[tuple[str, T | None]] = [(names[0], T("regclass"))]
        if rf.ordinality:  # (a set of at most the relation itself)
            names.append(given[1] if len(given) > 1 else "ordinality")
            targets.append(ast.ResTarget(name=names[1], val=_cast(_int(1), "bigint")))
            cols.append((names[1], T("int8")))
        scope.add(alias, _Rel(cols))
        return ast.RangeSubselect(
            lateral=True,
            subquery=ast.SelectStmt(targetList=tuple(targets), op=SetOperation.SETOP_NONE),
            alias=ast.Alias(aliasname=alias, colnames=tuple(_s(n) for n in names)),
        )

    def _whole_row_text(self, node: ast.Node, scope: _Scope) -> ast.Node | None:
        """The text record_out makes of a whole-row reference ``t`` (its columns' output
        texts, quoted where one is empty or holds a quote, backslash, parenthesis, comma or
        white space; NULL columns empty; NULL for a null-extended row), or None when
        ``node`` is not one. DuckDB's own text of the STRUCT is another."""
        found = _whole_row(node, scope)
        if found is None:
            return None
        alias, level, rel = found
        cols = _rel_types(rel)
        if len(level.rels) != 1 or not cols:  # (an outer join may null-extend it: see row_fields)
            what = "a row of a relation joined with others" if cols else "a row of a relation of unknown columns"
            raise self.fail("0A000", f"{what} as a value is not supported by walsender-proxy", node)
        if any(t is None or t.row_oid for _, t in cols):
            raise self.fail("0A000", f'the text of a row of "{alias}" is not supported by walsender-proxy', node)
        parts: list[ast.Node] = [_str("(")]
        for i, (name, t) in enumerate(cols):
            if i:
                parts.append(_str(","))
            ref = ast.ColumnRef(fields=(_s(alias), _s(name)))
            assert t is not None
            if t.name in float_exprs.FLOATS:
                field = float_exprs.printed(ref, t.name)
            elif t.name == "numeric" and not t.text_numeric:
                field = numeric_exprs.decimal_text(ref)
            else:
                field = _printed(ref, t)
            parts.append(_record_field(field))
        parts.append(_str(")"))
        whole = ast.ColumnRef(fields=(_s(alias),))
        return ast.CaseExpr(
            args=(ast.CaseWhen(expr=ast.NullTest(arg=whole, nulltesttype=NullTestType.IS_NULL), result=_null()),),
            defresult=_call("concat", *parts),
        )

    def _text_of(self, node: ast.Node, t: T | None, scope: _Scope) -> ast.Node:
        """A value's text as its output function prints it, a whole-row reference's too."""
        row = self._whole_row_text(node, scope) if t is None else None
        return row if row is not None else _printed(node, t)

    def _partition_tree(
        self,
        rf: ast.RangeFunction,
        args: list[ast.Node],
        types: list[T | None],
        given: list[str],
        alias: str,
        call: ast.FuncCall,
        scope: _Scope,
    ) -> ast.Node:
        """``pg_partition_tree(rel) [WITH ORDINALITY]`` in FROM: the relation's partition
        tree below it (pgcatalog's ``pgc_partition_tree``), none outside one."""
        if len(args) != 1:
            raise self._no_function("pg_partition_tree", types, call)
        self.needs.add("pgc_pg_partition_tree")
        fields = [("relid", T("regclass")), ("parentrelid", T("regclass")), ("isleaf", T("bool")), ("level", T("int4"))]
        names = [given[i] if i < len(given) else f for i, (f, _) in enumerate(fields)]
        if len(given) > len(fields) + (1 if rf.ordinality else 0):
            raise self.fail("42P10", f'table "{alias}" has {len(fields) + (1 if rf.ordinality else 0)} columns available but {len(given)} columns specified', call)
        row = ast.ColumnRef(fields=(_s("pgc_u"), _s("t")))
        targets = [ast.ResTarget(name=n, val=_call("struct_extract", row, _str(f))) for n, (f, _) in zip(names, fields, strict=True)]
        cols: list[tuple[str, T | None]] = [(n, t) for n, (_, t) in zip(names, fields, strict=True)]
        inner = ast.SelectStmt(
            targetList=(ast.ResTarget(name="t", val=_call("unnest", _call("pgc_pg_partition_tree", args[0]))),),
            op=SetOperation.SETOP_NONE,
        )
        from_item = ast.RangeSubselect(lateral=True, subquery=inner, alias=ast.Alias(aliasname="pgc_u"))
        if rf.ordinality:
            names.append(given[len(fields)] if len(given) > len(fields) else "ordinality")
            targets.append(ast.ResTarget(name=names[-1], val=_cast(_call("struct_extract", row, _str("ord")), "bigint")))
            cols.append((names[-1], T("int8")))
        scope.add(alias, _Rel(cols))
        return ast.RangeSubselect(
            lateral=True,
            subquery=ast.SelectStmt(targetList=tuple(targets), fromClause=(from_item,), op=SetOperation.SETOP_NONE),
            alias=ast.Alias(aliasname=alias, colnames=tuple(_s(n) for n in names)),
        )

    def _user_field(self, value: ast.Node, ct: ColumnType, at: ast.Node) -> tuple[ast.Node, T]:
        """A populated attribute's value of its base type coerced to its domain (the
        domain's NOT NULL and CHECKs, raised in the query) or read by its enum's enum_in."""
        lk = sql_function_calls.LOOKUP.get()
        cat = lk.catalog if lk is not None else None
        if ct.is_enum and cat is not None and (en := cat.enums.get(ct.base.oid)) is not None:
            return enum_casts.from_text(value, en), T("anyenum", enum_oid=en.oid)
        d = cat.domains.get(ct.domain) if cat is not None else None
        if d is None:
            raise self.fail("XX000", f"type with OID {ct.domain or ct.base.oid} does not exist", at)
        try:
            return domain_casts.coerce(cat, d, value), replace(_lake_t(ct.bare, stored=True), domain_oid=d.oid)
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, at) from None

    def _row_base(self, call: ast.FuncCall) -> composite_values.RowType | None:
        """The composite type of json_populate_record's base argument when it is a cast to
        one (``null::jpop``)."""
        base = call.args[0] if call.args else None
        if not isinstance(base, ast.TypeCast) or base.typeName.arrayBounds:
            return None
        names = _user_type_names(base.typeName)
        return composite_values.visible(names) if names is not None else None

    def _json_record_function(
        self, rf: ast.RangeFunction, call: ast.FuncCall, name: str, coldefs: Sequence[Any] | None, scope: _Scope
    ) -> ast.Node:
        """``json_to_record(j) AS x(a int, b text)`` and its kin (``sql/json_records.py``):
        each column's text of the document through the column type's input function."""
        returns_set, jsonb, populate = json_records.FUNCTIONS[name]
        row_base = self._row_base(call) if populate else None
        unread: dict[str, ColumnType] = {}
        base_row: ast.Node | None = None
        #: Attributes of a domain or an enum: read as their base type (text for an enum),
        #: then coerced to it (the domain's checks, enum_in), as populate_record does.
        user_fields: dict[str, ColumnType] = {}
        if row_base is not None:  # (the base's composite type gives the columns)
            if coldefs:
                raise self.fail("42601", "a column definition list is redundant for a function returning a named composite type", rf)
            base = call.args[0]
            if not (isinstance(base.arg, ast.A_Const) and base.arg.isnull):
                base_row = self.expr(copy.deepcopy(base), scope)[0]  # (a missing key keeps its field)
            self._row_typed = True
            # Attributes of a composite type, an array of an enum or a domain over an array
            # are not read: NULL when the document has no value for them (as PostgreSQL's
            # is), refused when it has one.
            unread = {n: ct for n, ct in row_base.fields if ct.is_composite or (ct.domain and ct.bare.is_array) or (ct.is_enum and ct.is_array)}
            user_fields = {n: ct for n, ct in row_base.fields if (ct.domain or ct.is_enum) and n not in unread}
            coldefs = [
                ast.ColumnDef(colname=n, typeName=ast.TypeName(names=(_s("text"),)) if ct.is_enum or n in unread else composite_values.type_name(ct.bare))
                for n, ct in row_base.fields
            ]
            call = ast.FuncCall(funcname=call.funcname, args=(ast.TypeCast(arg=_null(), typeName=ast.TypeName(names=(_s("record"),))), *call.args[1:]))
        if not coldefs:
            raise self.fail("42601", 'a column definition list is required for functions returning "record"', rf)
        if rf.ordinality:
            raise self.fail("42601", "WITH ORDINALITY cannot be used with a column definition list", rf)
        raw = list(call.args or ())
        if populate:
            base = raw[0] if raw else None
            if not (
                isinstance(base, ast.TypeCast) and isinstance(base.arg, ast.A_Const) and base.arg.isnull
                and [n.sval for n in base.typeName.names][-1] == "record"
            ):  # fmt: skip
                raise self.fail("0A000", f"{name}() of a base row other than null::record is not supported by walsender-proxy", call)
            raw = raw[1:]
        if len(raw) != 1 or call.agg_star or call.func_variadic:
            types = [self.expr(a, scope)[1] for a in raw]
            shown = ", ".join(["record"] * populate + [_type_display(t) if t is not None else "unknown" for t in types])
            raise self.fail("42883", f"function {name}({shown}) does not exist", call, hint=json_exprs.NO_FUNCTION_HINT)
        arg, t = self.expr(raw[0], scope)
        doc = json_exprs.document(_JsonHost(self, scope), name, arg, t, call, want="jsonb" if jsonb else "json")
        names: list[str] = []
        kinds = ""
        targets = []
        cols: list[tuple[str, T | None]] = []
        for i, cd in enumerate(coldefs):
            if cd.colname in names:
                raise self.fail("42701", f'column name "{cd.colname}" specified more than once', cd)
            target, is_array, typmods = self._type_name(cd.typeName)
            ctype = None if target in UNMODELED_TYPES else self._lake_type(target, typmods, is_array, cd.typeName)
            if ctype is None:
                shown = pgcatalog_defs.format_type(pgcatalog_defs.TYPE_OIDS[target], None) or target
                raise self.fail("0A000", f"{name}() of a column of type {shown} is not supported by walsender-proxy", cd)
            names.append(cd.colname)
            text = _call("list_extract", _colref("wpx_r"), _int(i + 1))
            if cd.colname in unread:
                kinds += json_records.JSON  # (its JSON text, NULL for a JSON null or none)
                assert row_base is not None
                null, vt = self.expr(ast.TypeCast(arg=_null(), typeName=composite_values.type_name(unread[cd.colname])), scope)
                refused = _call("error", _str(
                    f"PGERR[0A000] {name}() of a value for attribute {cd.colname} of composite type {row_base.name}, which is of a "
                    "composite type, an array of an enum or a domain over an array, is not supported by walsender-proxy"
                ))  # fmt: skip
                whens = [ast.CaseWhen(expr=ast.NullTest(arg=copy.deepcopy(text), nulltesttype=NullTestType.IS_NULL), result=null)]
                if base_row is not None:
                    missing = _op("=", copy.deepcopy(text), _call("chr", _int(0)))
                    whens.insert(0, ast.CaseWhen(expr=missing, result=_call("struct_extract", copy.deepcopy(base_row), _str(cd.colname))))
                targets.append(ast.ResTarget(name=cd.colname, val=ast.CaseExpr(args=tuple(whens), defresult=refused)))
                cols.append((cd.colname, vt))
                continue
            kinds += json_records.ARRAY if is_array else json_records.JSON if target in ("json", "jsonb") else json_records.SCALAR
            if target in ("text", "varchar") and ctype.typmod < 0 and not is_array:
                val, vt = text, T(target)
            else:
                vt = _lake_t(ctype, stored=True)
                val = literals.input_call(text, ctype, explicit=False, as_text=vt.text_numeric)
            if cd.colname in user_fields:
                val, vt = self._user_field(val, user_fields[cd.colname], cd)
            if base_row is not None:
                missing = _op("=", copy.deepcopy(text), _call("chr", _int(0)))
                kept = _call("struct_extract", copy.deepcopy(base_row), _str(cd.colname))
                val = ast.CaseExpr(args=(ast.CaseWhen(expr=missing, result=kept),), defresult=val)
            targets.append(ast.ResTarget(name=cd.colname, val=val))
            cols.append((cd.colname, vt))
        keys = ast.A_ArrayExpr(elements=tuple(_str(n) for n in names))
        texts: ast.Node = _call(
            json_records.UDF_RECORDSET if returns_set else json_records.UDF_RECORD, doc, keys,
            _str((json_records.BASE if base_row is not None else "") + kinds), _str(name),
        )  # fmt: skip
        inner = ast.SelectStmt(
            targetList=(ast.ResTarget(name="wpx_r", val=_call("unnest", texts) if returns_set else texts),),
            op=SetOperation.SETOP_NONE,
        )
        sel = ast.SelectStmt(
            targetList=tuple(targets),
            fromClause=(ast.RangeSubselect(lateral=False, subquery=inner, alias=ast.Alias(aliasname="wpx_rec")),),
            op=SetOperation.SETOP_NONE,
        )
        alias = rf.alias.aliasname if rf.alias is not None else name
        scope.add(alias, _Rel(cols))
        return ast.RangeSubselect(
            lateral=True, subquery=sel, alias=ast.Alias(aliasname=alias, colnames=tuple(_s(n) for n in names))
        )

    # -- expressions -----------------------------------------------------------------------
    def generic(self, node: Any, scope: _Scope) -> Any:
        """Rewrite every expression below a node the rewriter has no rule for."""
        if isinstance(node, tuple | list):
            return type(node)(self.generic(n, scope) for n in node)
        if not isinstance(node, ast.Node):
            return node
        if isinstance(node, ast.SortBy):
            return self._sort_key(node, scope)[0]
        if isinstance(node, ast.WindowDef):
            return self._window_def(node, scope)
        return self.expr(node, scope)[0]

    def _sort_key(self, node: ast.SortBy, scope: _Scope) -> tuple[ast.SortBy, T | None]:
        """An ORDER BY item rewritten, with its key's type."""
        new, t = self.expr(node.node, scope)
        self._no_json_compare("ORDER BY", node, t)
        node.node = self._numeric_key(new, t) if t is not None and t.text_numeric else new
        if t is not None and t.name == "pg_lsn":  # (the LSN's number, not its text)
            node.node = _lsn_int(new)
        if self._is_jsonb(new, t, scope):  # (jsonb's order, not its text's)
            node.node = _call(jsonb_ops.UDF_SORT_KEY, new)
        if t is not None and array_exprs.depth(t.name) > 1:  # (array_cmp's order)
            self.needs.add(f"pgc_arr_sortkey{array_exprs.depth(t.name)}")
            node.node = array_exprs.sort_key(new, array_exprs.depth(t.name))
        return node, t

    def _window_def(self, node: ast.WindowDef, scope: _Scope, *, in_clause: bool = False) -> ast.WindowDef:
        """A window definition checked as PostgreSQL's parser checks it, a window it copies
        written out in it, and its frame offsets as PostgreSQL evaluates them
        (:mod:`~walsender_proxy.sql.window_frames`)."""
        try:
            windows = scope.windows_in_reach()
            window_frames.check_definition(node, windows, in_clause)
            if node.name and not in_clause:  # OVER w: w written out (DuckDB resolves no
                node = copy.deepcopy(windows[node.name])  # name outside the SELECT list)
                node.name = None
            ref = windows.get(node.refname) if node.refname else None
            if ref is not None:  # (self-contained: the frame below needs its ORDER BY key)
                node.partitionClause = copy.deepcopy(ref.partitionClause)
                node.orderClause = node.orderClause or copy.deepcopy(ref.orderClause)
                node.refname = None
            if node.partitionClause:
                parts = [self.expr(e, scope) for e in node.partitionClause]
                self._no_text_numeric("PARTITION BY", node, *(t for _, t in parts))
                node.partitionClause = tuple(_call(jsonb_ops.UDF_SORT_KEY, e) if self._is_jsonb(e, t, scope) else e for e, t in parts)
            keys = [self._sort_key(e, scope) for e in node.orderClause or ()]
            node.orderClause = tuple(k for k, _ in keys) or node.orderClause
            if node.startOffset is not None or node.endOffset is not None:
                t = keys[0][1] if len(keys) == 1 else None

                def offset(e: Any) -> tuple[Any, str | None]:
                    new, ot = self.expr(e, scope)
                    return new, ot.name if ot is not None else None

                text_numeric = t is not None and t.text_numeric
                window_frames.frame(node, node.orderClause or (), t.name if t is not None else None, text_numeric, offset)
        except PgError as e:
            if isinstance(e, SqlError):
                raise
            raise self.fail(e.sqlstate, e.message, node, hint=e.hint) from None
        return node

    def expr(self, node: Any, scope: _Scope) -> tuple[Any, T | None]:
        if node is None:
            return None, None
        method = getattr(self, "e_" + type(node).__name__, None)
        if method is not None:
            return method(node, scope)
        if isinstance(node, ast.Node):
            for attr in type(node).__slots__:
                value = getattr(node, attr, None)
                if isinstance(value, ast.Node | tuple | list):
                    setattr(node, attr, self.generic(value, scope))
        return node, None

    def e_ColumnRef(self, node: ast.ColumnRef, scope: _Scope) -> tuple[ast.Node, T | None]:
        param = sql_function_calls.column_ref(self, node, scope)  # (a parameter, in a function's body)
        if param is not None:
            return param
        names = [f.sval for f in node.fields if isinstance(f, ast.String)]
        if len(node.fields) == 3 and scope.rel(names[1]) is not None:
            node.fields = node.fields[1:]
            names = names[1:]
        if isinstance(node.fields[-1], ast.A_Star):
            self._read_star(node, scope)
            return node, None
        try:
            outer = lateral_refs.outside_reference(names, scope)
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, node, hint=e.hint) from None
        if outer is not None:  # (DuckDB would bind the bare name to an item PostgreSQL hides)
            node = ast.ColumnRef(fields=(_s(outer), node.fields[-1]), location=node.location)
            names = [outer, names[-1]]
        if names[-1] == "tableoid":
            system = self._catalog_tableoid(names, scope)
            if system is not None:
                return system
        self._read_column(node, names, scope)
        if len(names) == 1:
            merged = scope.merged_column(names[0])
            if merged is not None:  # (a USING column whose sides' types differ)
                return _merged_column(node, names[0], merged), T(merged.common)
            t = scope.column(names[0])
            rel = scope.rel(names[0]) if t is None and scope.find(names[0]) is None else None
            if rel is not None and rel.scalar_column is not None:  # (a function's scalar)
                return _colref(names[0], rel.scalar_column), dict(rel.columns or ()).get(rel.scalar_column)
        else:
            rel = scope.rel(names[-2])
            if rel is None and len(names) == 2 and scope.cte(names[0]) is None and scope.find(names[0]) is not None:
                # (a column's field is (c).f: PostgreSQL reads c.f as a table's column, where
                # DuckDB would take the field of a row-valued column)
                raise self.fail("42P01", f'missing FROM-clause entry for table "{names[0]}"', node)
            t = None
            for n, ct in rel.columns if rel is not None and rel.columns is not None else ():
                if n == names[-1]:
                    t = ct
        if t is None:  # a user table's column: its declared type
            ctype = scope.declared(names[-2:])
            t = _lake_t(ctype, stored=True) if ctype is not None else None
        return node, t


    def _read_column(self, node: ast.ColumnRef, names: list[str], scope: _Scope) -> None:
        """Column privileges (ColumnGuard) of the column a reference reads: a column, or a
        whole row (``t`` alone); where the reference cannot be placed, of every relation
        read by column privileges in reach that has a column of that name."""
        if not scope.guards():
            return
        if len(names) >= 2:
            rel = scope.rel(names[-2])
            if rel is not None and rel.guard is not None:
                rel.guard.read(names[-1])
            return
        rel = scope.find_rel(names[0])
        if rel is not None:
            if rel.guard is not None:
                rel.guard.read(names[0])
            return
        whole = scope.rel(names[0])
        if whole is not None:
            if whole.guard is not None and whole.scalar_column is None:
                whole.guard.read_all()
            return
        # (not placed, a relation of unknown columns beside: any guarded one it may name)
        for guard in scope.guards():
            guard.read(names[0])

    def _catalog_tableoid(self, names: list[str], scope: _Scope) -> tuple[ast.Node, T] | None:
        """``x.tableoid`` of an emulated catalog (pg_dump reads it of every catalog it
        queries): the catalog's oid. None where the name is not that system column."""
        alias = names[0] if len(names) == 2 else None
        if len(names) == 2:
            rel = scope.rel(names[0])
        else:
            s: _Scope | None = scope
            rel = None
            while s is not None and rel is None:
                found = [(a, s.rels[a]) for a in s.order if a in s.rels]
                if found:
                    if len(found) > 1 and any(r.tableoid is not None for _, r in found):
                        return None  # (DuckDB's error; PostgreSQL's is 42702 ambiguous)
                    alias, rel = found[0]
                s = s.parent
        if rel is None or rel.tableoid is None or any(n == "tableoid" for n, _ in rel.columns or ()):
            return None
        if rel.tableoid < 0:
            if rel.tableoid_sql is None or alias is None:
                raise PgError("0A000", "tableoid of a partitioned table's rows is not supported by walsender-proxy")
            visible = [n for n, _ in rel.columns or ()]
            shown = dict(zip(rel.row_names, visible, strict=False)) if rel.row_names else {n: n for n in visible}

            def col(name: str) -> str:
                return f'"{alias.replace(chr(34), chr(34) * 2)}"."{shown[name].replace(chr(34), chr(34) * 2)}"'

            ph = f"wpx_toid_{self.nonce}_{len(self.placeholders)}_x"
            self.placeholders[ph] = f"CAST({rel.tableoid_sql(col)} AS UINTEGER)"
            return ast.ColumnRef(fields=(_s(ph),)), T("oid")
        return _cast(_int(rel.tableoid), "UINTEGER"), T("oid")

    def _numeric_key(self, node: ast.Node, t: T | None) -> ast.Node:
        """A value's order key when it is compared with a text-held numeric value."""
        if t is not None and t.text_numeric:
            return _call(numeric_text.KEY_UDF, node)
        return _call(numeric_text.KEY_UDF, _cast(node, "VARCHAR"))

    def _no_json_compare(self, what: str, node: Any, *types: T | None) -> None:
        """PostgreSQL's 42883 for a use that would compare, sort or group a json value, or
        sort an xid (which has equality only)."""
        err = json_exprs.incomparable(what, types)
        if err is not None:
            raise self.fail(err.sqlstate, err.message, node, hint=err.hint)
        if any(t is not None and t.name == "xid" for t in types):
            if what.startswith("ORDER BY"):
                raise self.fail("42883", "could not identify an ordering operator for type xid", node, hint="Use an explicit ordering operator or modify the query.")
            if what in ("min()", "max()"):
                raise self.fail("42883", f"function {what[:-2]}(xid) does not exist", node, hint=json_exprs.NO_FUNCTION_HINT)
            if what == "DISTINCT":  # (an aggregate's)
                raise self.fail("42883", "could not identify an ordering operator for type xid", node, detail="Aggregates with DISTINCT must be able to sort their inputs.")
        if any(t is not None and t.name == "jsonb" for t in types):
            if what in ("min()", "max()"):
                raise self.fail("42883", f"function {what[:-2]}(jsonb) does not exist", node, hint=json_exprs.NO_FUNCTION_HINT)
            if what in _JSONB_EQUALITY_UNSUPPORTED or what.endswith(" ANY/ALL"):
                # (these compare jsonb by its text: 1.0 and 1.00 would differ)
                raise self.fail("0A000", f"{what} on jsonb values is not supported by walsender-proxy", node)

    def _no_text_numeric(self, what: str, node: Any, *types: T | None) -> None:
        """0A000 for a use of an unconstrained numeric value the proxy cannot answer exactly
        (DuckDB would take its text for the number); PostgreSQL's 42883 for one that would
        compare a json value (DuckDB would compare its text)."""
        self._no_json_compare(what, node, *types)
        if any(t is not None and t.text_numeric for t in types):
            raise self.fail(
                "0A000", f"{what} of an unconstrained numeric value is not supported by walsender-proxy", node,
                hint="Declare the column numeric(p,s) with p at most 38, or cast the value: x::numeric(38,10).",
            )  # fmt: skip

    def e_A_Const(self, node: ast.A_Const, scope: _Scope) -> tuple[ast.Node, T | None]:
        if node.isnull:
            return node, UNKNOWN
        v = node.val
        if isinstance(v, ast.Integer):
            return node, T("int4")
        if isinstance(v, ast.Float):
            # an integer too wide for int4 is int8 when it fits (make_const), else numeric
            if re.fullmatch(r"-?[0-9]+", v.fval) and -(2**31) <= int(v.fval) < 2**31:
                return _cast(node, "integer"), T("int4")  # (-2147483648: the negated constant fits int4)
            if re.fullmatch(r"-?[0-9]+", v.fval) and -(2**63) <= int(v.fval) < 2**63:
                return node, T("int8")
            scale = numeric_math.parse(v.fval).dscale
            if re.fullmatch(r"-?[0-9]*\.?[0-9]*", v.fval) and len(v.fval.replace("-", "").replace(".", "")) <= 38:
                return node, T("numeric", scale=scale)  # DuckDB reads it as an exact DECIMAL
            # with an exponent, or beyond DECIMAL's 38 digits, DuckDB would read a double
            try:
                return literals.constant_cast(node, parse_type("numeric")), T("numeric", scale=scale)
            except PgError:
                return numeric_exprs.as_text(Operand(node, "numeric")), NUMERIC_TEXT
        if isinstance(v, ast.Boolean):
            return node, BOOL
        if isinstance(v, ast.BitString):  # (DuckDB's BIT prints raw bytes)
            raise self.fail("0A000", "type bit is not supported by walsender-proxy", node)
        return node, UNKNOWN

    def e_ParamRef(self, node: ast.ParamRef, scope: _Scope) -> tuple[ast.Node, T | None]:
        param = sql_function_calls.param_ref(self, node)
        if param is not None:
            return param
        self.max_param = max(self.max_param, node.number)
        self.param_uses[node.number] = self.param_uses.get(node.number, 0) + 1
        ctype = self.param_types.get(node.number)
        if ctype is None and self.infer_params:
            return node, self.param_inferred.get(node.number, UNKNOWN)
        if ctype is not None and ctype.is_enum and (en := enum_casts.by_oid(ctype.base.oid)) is not None:
            # (bound as the label's text: read by enum_in, as DuckDB would compare text)
            self.user_types = True
            if ctype.is_array:
                self.needs.add(enum_casts.ARRAY_IN)
                return enum_casts.array_from_text(node, en), _lake_t(ctype)
            return enum_casts.from_text(node, en), _lake_t(ctype)
        if ctype is not None and not ctype.is_array and ctype.base.name in _DATETIME_PARAMS and node.number not in self.text_params:
            # (a NULL bound for it has no type of its own: DuckDB would choose the operator)
            return _cast(node, literals.duck_type(ctype)[0]), _lake_t(ctype)
        return node, _lake_t(ctype) if ctype is not None else None

    def _coerced_param(self, node: Any, t: T | None) -> None:
        """An unknown ``$n`` coerced to ``t`` by its context takes that type (the first
        such coercion counts); anything else is left alone."""
        if (
            self.infer_params
            and isinstance(node, ast.ParamRef)
            and node.number not in self.param_types
            and node.number not in self.param_inferred
            and t is not None
            and t.name not in ("unknown", "record")
            and not t.zero_based
        ):
            self.param_inferred[node.number] = T(t.name, enum_oid=t.enum_oid)

    def _operator_params(self, op: str, left: Any, lt: T | None, right: Any, rt: T | None, *, array: bool = False) -> None:
        """The operand types PostgreSQL's operator resolution gives an unknown ``$n`` beside
        a typed value (``now() - $1``: timestamptz, ``now() + $1``: interval), from the
        dump of its resolutions; an array beside one makes it that array type."""
        if not self.infer_params:
            return
        if lt == UNKNOWN and rt == UNKNOWN and isinstance(right, ast.ParamRef) and op in _COMPARISONS and array:
            self._coerced_param(right, T("_text"))  # ('a' = ANY($1): text[])
            return
        if (lt == UNKNOWN) == (rt == UNKNOWN):
            return
        known = rt if lt == UNKNOWN else lt
        if known is None:
            return
        if known.is_array:
            self._coerced_param(left if lt == UNKNOWN else right, known)
            return
        key = ("<>" if op == "!=" else op, lt.name if lt is not None else "", rt.name if rt is not None else "")
        resolved = coercion_data.COMPARISONS.get(key) or coercion_data.OPERATORS.get(key)
        if resolved is not None and resolved[0] != "error":
            self._coerced_param(left, T(resolved[0]))
            self._coerced_param(right, T(resolved[1]))
        elif resolved is None and op in _COMPARISONS:
            self._coerced_param(left if lt == UNKNOWN else right, known)
        elif resolved is None and op == "^" and common_type.category(known.name) == "N":
            # (float8 ^ float8 and numeric ^ numeric: numeric stays, the rest is float8's)
            self._coerced_param(left if lt == UNKNOWN else right, T("numeric" if known.name == "numeric" else "float8"))

    def condition(self, node: Any, scope: _Scope) -> ast.Node:
        """A WHERE, HAVING, ON, WHEN or FILTER condition: an unknown ``$n`` there is boolean."""
        out = self.expr(node, scope)[0]
        self._coerced_param(out, BOOL)
        return out

    def e_CollateClause(self, node: ast.CollateClause, scope: _Scope) -> tuple[ast.Node, T | None]:
        """COLLATE of a collation there is (every one orders by code point, as the proxy
        compares) changes nothing; see ``sql/collations.py``."""
        arg, t = self.expr(node.arg, scope)
        try:
            collations.check_name([n.sval for n in node.collname])
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, node) from None
        if t is not None and t.name != "unknown" and (t.enum_oid or t.row_oid or not collations.collatable(t.name)):
            raise self.fail("42804", collations.not_collatable(_type_display(t)).message, node)
        return arg, t

    def e_XmlExpr(self, node: ast.XmlExpr, scope: _Scope) -> tuple[ast.Node, T | None]:
        """The SQL/XML functions: the proxy has no xml type (``type xml`` is refused too)."""
        what = _XML_FUNCTIONS.get(node.op, "an XML function")
        raise self.fail("0A000", f"{what} is not supported by walsender-proxy", node)

    def e_XmlSerialize(self, node: ast.XmlSerialize, scope: _Scope) -> tuple[ast.Node, T | None]:
        raise self.fail("0A000", "xmlserialize() is not supported by walsender-proxy", node)

    def e_BoolExpr(self, node: ast.BoolExpr, scope: _Scope) -> tuple[ast.Node, T | None]:
        node.args = tuple(self.condition(a, scope) for a in node.args)
        return node, BOOL

    def e_NullTest(self, node: ast.NullTest, scope: _Scope) -> tuple[ast.Node, T | None]:
        if isinstance(node.arg, ast.RowExpr):  # a row IS NULL when each field is (IS NOT NULL: none is)
            tests = [ast.NullTest(arg=a, nulltesttype=node.nulltesttype) for a in node.arg.args or ()]
            if not tests:
                return _bool(True), BOOL
            return self.expr(tests[0] if len(tests) == 1 else ast.BoolExpr(boolop=BoolExprType.AND_EXPR, args=tuple(tests)), scope)[0], BOOL
        if isinstance(node.arg, ast.ColumnRef) and len(node.arg.fields) == 1:  # a whole-row reference?
            fields = _JsonHost(self, scope).row_fields(node.arg)
            if fields is not None:
                return self.e_NullTest(ast.NullTest(arg=ast.RowExpr(args=tuple(f[1] for f in fields)), nulltesttype=node.nulltesttype), scope)
        node.arg, t = self.expr(node.arg, scope)
        if t is not None and t.row_oid and not t.is_array and (rt := composite_values.by_oid(t.row_oid)) is not None:
            # (ExecEvalRowNull: a composite value IS NULL when each field is, IS NOT NULL when none is)
            tests = tuple(
                ast.NullTest(arg=_call("struct_extract", copy.deepcopy(node.arg), _str(n)), nulltesttype=node.nulltesttype)
                for n, _ in rt.fields
            )
            return (tests[0] if len(tests) == 1 else ast.BoolExpr(boolop=BoolExprType.AND_EXPR, args=tests)), BOOL
        return node, BOOL

    def e_GroupingFunc(self, node: ast.GroupingFunc, scope: _Scope) -> tuple[ast.Node, T | None]:
        """GROUPING(…) is integer in PostgreSQL (DuckDB's is BIGINT)."""
        node.args = tuple(self.expr(a, scope)[0] for a in node.args or ())
        return _cast(node, "INTEGER"), T("int4")

    def e_BooleanTest(self, node: ast.BooleanTest, scope: _Scope) -> tuple[ast.Node, T | None]:
        node.arg = self.condition(node.arg, scope)
        return node, BOOL

    def e_CaseExpr(self, node: ast.CaseExpr, scope: _Scope) -> tuple[ast.Node, T | None]:
        at: T | None = None
        # PostgreSQL's constant folding drops a branch whose condition is constant false and
        # every one after a constant true: their constants are never folded (1/0 there is
        # no error)
        arg_value = _int_value(node.arg) if node.arg is not None else None
        folded = self._unfolded
        reached_true = False
        if node.arg is not None:
            node.arg, at = self.expr(node.arg, scope)
            node.arg = unpadded(node.arg, at)[0]
        types: list[T | None] = []
        whens = []
        written: list[Any] = []
        for w in node.args:
            cond = _const_condition(w.expr, arg_value, node.arg is not None)
            self._unfolded = folded or reached_true or cond is False
            reached_true = reached_true or cond is True
            w.expr, wt = self.expr(w.expr, scope)
            self._coerced_param(w.expr, BOOL if node.arg is None else at)
            if node.arg is not None:
                typed = self._param_as(w.expr, node.arg, at, scope)  # (CASE x WHEN v is x = v)
                if typed is not None:
                    w.expr, wt = typed, at
                self._no_text_numeric("CASE … WHEN", w, at, wt)
            if node.arg is not None and (is_bpchar(at) or is_bpchar(wt)):
                # CASE x WHEN v is x = v (x was unpadded above if it is character(n))
                w.expr = unpadded_pair(node.arg, at, w.expr, wt, "=")[2]
            written.append(w.result)
            w.result, t = self.expr(w.result, scope)
            types.append(t)
            whens.append(w)
        node.args = tuple(whens)
        self._unfolded = folded or reached_true
        if node.defresult is not None:
            written.append(node.defresult)
            node.defresult, t = self.expr(node.defresult, scope)
            types.append(t)
        self._unfolded = folded
        results = [(w.result, t) for w, t in zip(whens, types, strict=False)]
        if node.defresult is not None:
            results.append((node.defresult, types[-1]))
        # (PostgreSQL resolves the ELSE first, a missing one as an untyped NULL)
        order = [len(whens) if node.defresult is not None else -1, *range(len(whens))]
        results, common = self._common_branches("CASE", written, results, order)
        results = self._unknowns_as(results, common or _common(types))
        for w, (n, _) in zip(whens, results, strict=False):
            w.result = n
        if node.defresult is not None:
            node.defresult = results[-1][0]
        floats = _float_branches(results)
        if floats is not None:
            for w, n in zip(whens, floats[0], strict=False):
                w.result = n
            if node.defresult is not None:
                node.defresult = floats[0][-1]
            return node, floats[1]
        unified = _numeric_branches(results)
        if unified is not None:
            for w, n in zip(whens, unified, strict=False):
                w.result = n
            if node.defresult is not None:
                node.defresult = unified[-1]
            return node, NUMERIC_TEXT
        return node, _held_as_text(common or _common(types), types)

    def e_CoalesceExpr(self, node: ast.CoalesceExpr, scope: _Scope) -> tuple[ast.Node, T | None]:
        written = list(node.args)
        pairs, common = self._common_branches("COALESCE", written, [self.expr(a, scope) for a in node.args])
        pairs = self._unknowns_as(pairs, common or _common([p[1] for p in pairs]))
        floats = _float_branches(pairs)
        if floats is not None:
            node.args = tuple(floats[0])
            return node, floats[1]
        unified = _numeric_branches(pairs)
        if unified is not None:
            node.args = tuple(unified)
            return node, NUMERIC_TEXT
        node.args = tuple(p[0] for p in pairs)
        return node, _held_as_text(common or _common([p[1] for p in pairs]), [p[1] for p in pairs])

    def e_MinMaxExpr(self, node: ast.MinMaxExpr, scope: _Scope) -> tuple[ast.Node, T | None]:
        written = list(node.args)
        context = "GREATEST" if node.op == MinMaxOp.IS_GREATEST else "LEAST"
        pairs, common = self._common_branches(context, written, [self.expr(a, scope) for a in node.args])
        pairs = self._unknowns_as(pairs, common or _common([p[1] for p in pairs]))
        floats = _float_branches(pairs)
        if floats is not None:
            node.args = tuple(floats[0])
            return node, floats[1]
        self._no_text_numeric("GREATEST/LEAST", node, *(t for _, t in pairs))
        node.args = tuple(p[0] for p in pairs)
        texts = _numeric_branches(pairs)
        if texts is not None:
            # numeric values of several scales: the one chosen keeps its own (least(1, 2.5)
            # is 1, not DuckDB's 1.0) — the first argument equal to DuckDB's answer, as
            # PostgreSQL keeps the first of equal values
            values = ast.A_ArrayExpr(elements=tuple(copy.deepcopy(a) for a in node.args))
            at = _call("list_position", values, node)
            return _call("list_extract", ast.A_ArrayExpr(elements=tuple(texts)), at), NUMERIC_TEXT
        return node, common or _common([p[1] for p in pairs])

    def e_A_ArrayExpr(self, node: ast.A_ArrayExpr, scope: _Scope) -> tuple[ast.Node, T | None]:
        if not node.elements and not self._typed_empty_array:
            raise self.fail(
                "42P18", "cannot determine type of empty array", node,
                hint="Explicitly cast to the desired type, for example ARRAY[]::integer[].",
            )
        self._typed_empty_array = False
        outer_cast = self._array_cast_target
        written = list(node.elements or ())
        pairs = [self.expr(a, scope) for a in node.elements or ()]
        self._select_common("ARRAY", list(zip(written, [p[1] for p in pairs], strict=True)))
        elem = _common([p[1] for p in pairs])
        # (ARRAY['…']::date[]: the cast's element type is the elements' type)
        floats = outer_cast in ("float4", "float8") and elem is not None and elem.name in numeric_exprs.INTEGERS
        # (ARRAY[1, 'NaN']::float8[]: a cast's element type reads the quoted elements)
        if floats and outer_cast is not None:
            ctype = literals.target_type(outer_cast, [], False)
            try:
                pairs = [
                    (literals.unknown_literal(_str_const(a) or "", ctype), T(outer_cast)) if t == UNKNOWN and _str_const(a) is not None and ctype is not None else (a, t)
                    for a, t in pairs
                ]  # fmt: skip
            except PgError as e:
                raise self.fail(e.sqlstate, e.message, node, detail=e.detail, hint=e.hint) from None
        pairs = self._unknowns_as(pairs, T(outer_cast) if outer_cast is not None and elem == UNKNOWN else elem)
        node.elements = tuple(p[0] for p in pairs)
        elem = _common([p[1] for p in pairs])
        if elem is None:
            return node, None
        cast_to, self._array_cast_target = self._array_cast_target, None
        elem_types = [p[1] for p in pairs if p[1] is not None and p[1] != UNKNOWN]
        if elem.name == "numeric" and elem_types and all(t.text_numeric for t in elem_types):
            # (each element's exact text: printed as PostgreSQL prints it, compared nowhere)
            return node, T("_numeric", text_numeric=True)
        if cast_to is not None and cast_to != "numeric":
            return self._nested_array(node, T("_" + ("text" if elem == UNKNOWN else elem.name), enum_oid=elem.enum_oid))
        scale = self._one_numeric_scale(node, [p[1] for p in pairs])
        return self._nested_array(node, T("_" + ("text" if elem == UNKNOWN else elem.name), scale=scale, enum_oid=elem.enum_oid))

    def _array_order(self, op: str, node: ast.Node, left: Any, lt: T, right: Any, rt: T) -> tuple[Any, Any] | None:
        """Arrays of more than one dimension compare as array_cmp does: their elements in
        storage order, then their dimensions (array_exprs.sort_key); None for one dimension,
        where DuckDB's list order is PostgreSQL's."""
        ka, kb = array_exprs.depth(lt.name), array_exprs.depth(rt.name)
        if ka < 2 and kb < 2:
            return None
        if ka != kb:
            raise self.fail("0A000", "a comparison of arrays of different dimensions is not supported by walsender-proxy", node)
        if op in ("=", "<>", "!="):
            return None  # (equal nested lists are equal arrays: their shapes are checked)
        self.needs.add(f"pgc_arr_sortkey{ka}")
        return array_exprs.sort_key(left, ka), array_exprs.sort_key(right, ka)

    def _multidimensional_literal(self, lit: str, ctype: ColumnType, at: ast.Node) -> tuple[ast.Node, T]:
        """``'{{1,2},{3,4}}'::int[]``: nested lists, each innermost row read by the lake's
        input of the one-dimensional type (its element input, errors and typmod)."""
        try:
            rows, k, flat = array_exprs.literal_rows(lit)
            if ctype.base.name == "numeric" and ctype.typmod < 0:  # (one DECIMAL scale for all)
                scales = {numeric_math.parse(v.strip()) for v in flat if v is not None}
                if len({(n.special is not None, n.dscale) for n in scales}) > 1:
                    raise PgError("0A000", "an array of numeric values of different display scales is not supported by walsender-proxy")

            def build(node: object) -> ast.Node:
                if isinstance(node, str):
                    return literals.unknown_literal(node, ctype)
                assert isinstance(node, list)
                return ast.A_ArrayExpr(elements=tuple(build(child) for child in node))

            out = build(rows)
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, at, detail=e.detail, hint=e.hint) from None
        t = _lake_t(ctype)
        return out, T("_" * (k - 1) + t.name, typmod=t.typmod, scale=t.scale)

    def _nested_array(self, node: ast.Node, t: T) -> tuple[ast.Node, T]:
        """ARRAY[…] of arrays: PostgreSQL's checks that the sub-arrays match (array_exprs)."""
        try:
            out, need = array_exprs.nested(node, array_exprs.depth(t.name))
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, node) from None
        if need is not None:
            self.needs.add(need)
        return out, t

    def _one_numeric_scale(self, node: ast.Node, elems: Sequence[T | None], arrays: Sequence[T | None] = ()) -> int | None:
        """The one display scale of numeric array elements: a DuckDB list of DECIMALs has one
        scale where PostgreSQL keeps each element's (``ARRAY[1.1, 2]`` prints ``{1.1,2}``),
        so elements of different or unknown scales are refused."""
        if not any(t is not None and t.name.lstrip("_") == "numeric" for t in elems):
            return None
        if any(t is not None and t.name.lstrip("_") in ("float4", "float8") for t in elems):
            return None  # (the elements' common type is a float)
        scales: set[int | None] = set()
        for t, whole in itertools.zip_longest(elems, arrays):
            if t is None or t == UNKNOWN:
                continue
            if t.name in numeric_exprs.INTEGERS:
                scales.add(0)
            else:
                scales.add(None if t.text_numeric else (whole.scale if whole is not None and whole.is_array else t.scale))
        if len(scales) == 1 and None not in scales:
            return scales.pop()
        raise self.fail(
            "0A000",
            "an array of numeric values of different display scales is not supported by walsender-proxy",
            node,
            hint="Cast the elements to one numeric(p,s).",
        )

    def e_RowExpr(self, node: ast.RowExpr, scope: _Scope) -> tuple[ast.Node, T | None]:
        pairs = [self.expr(a, scope) for a in node.args or ()]
        node.args = tuple(p[0] for p in pairs)
        self._row_types[id(node)] = [p[1] for p in pairs]
        return node, None

    def e_SQLValueFunction(
        self, node: ast.SQLValueFunction, scope: _Scope
    ) -> tuple[ast.Node, T | None]:
        op = node.op
        target = {
            SQLValueFunctionOp.SVFOP_CURRENT_ROLE: "pgc_current_user",
            SQLValueFunctionOp.SVFOP_CURRENT_USER: "pgc_current_user",
            SQLValueFunctionOp.SVFOP_USER: "pgc_current_user",
            SQLValueFunctionOp.SVFOP_SESSION_USER: "pgc_session_user",
            SQLValueFunctionOp.SVFOP_CURRENT_CATALOG: "pgc_current_database",
            SQLValueFunctionOp.SVFOP_CURRENT_SCHEMA: "pgc_current_schema",
        }.get(op)
        if target is not None:
            self.needs.add(target)
            return _call(target), T("name")
        precision = node.typmod if node.typmod is not None and node.typmod >= 0 else None
        clock = _clock(precision=precision)
        if precision is not None:
            self.needs.add("pgc_round_us")
        as_type = {
            SQLValueFunctionOp.SVFOP_CURRENT_DATE: "date",
            SQLValueFunctionOp.SVFOP_CURRENT_TIME: "timetz",
            SQLValueFunctionOp.SVFOP_CURRENT_TIME_N: "timetz",
            SQLValueFunctionOp.SVFOP_LOCALTIME: "time",
            SQLValueFunctionOp.SVFOP_LOCALTIME_N: "time",
            SQLValueFunctionOp.SVFOP_LOCALTIMESTAMP: "timestamp",
            SQLValueFunctionOp.SVFOP_LOCALTIMESTAMP_N: "timestamp",
        }
        if op in (SQLValueFunctionOp.SVFOP_CURRENT_TIMESTAMP, SQLValueFunctionOp.SVFOP_CURRENT_TIMESTAMP_N):
            return clock, T("timestamptz")
        if op in as_type:
            if as_type[op] == "timetz":
                session_zone.refuse_outside_utc("CURRENT_TIME")
            if as_type[op] == "time":  # (DuckDB's ICU has no cast from TIMESTAMPTZ to TIME)
                clock = _cast(clock, "timestamp")
            return _cast(clock, as_type[op]), T(as_type[op])
        types = {
            SQLValueFunctionOp.SVFOP_CURRENT_DATE: "date",
            SQLValueFunctionOp.SVFOP_CURRENT_TIME: "timetz",
            SQLValueFunctionOp.SVFOP_CURRENT_TIME_N: "timetz",
            SQLValueFunctionOp.SVFOP_LOCALTIME: "time",
            SQLValueFunctionOp.SVFOP_LOCALTIME_N: "time",
            SQLValueFunctionOp.SVFOP_LOCALTIMESTAMP: "timestamp",
            SQLValueFunctionOp.SVFOP_LOCALTIMESTAMP_N: "timestamp",
        }
        return node, T(types.get(op, "timestamptz"))

    def e_A_Indirection(self, node: ast.A_Indirection, scope: _Scope) -> tuple[ast.Node, T | None]:
        field = bool(node.indirection) and isinstance(node.indirection[0], ast.String)
        inner = node.arg
        if field and isinstance(inner, ast.A_Indirection) and isinstance(inner.arg, ast.RowExpr) and all(isinstance(i, ast.String) for i in inner.indirection or ()):
            node = ast.A_Indirection(arg=inner.arg, indirection=(*inner.indirection, *node.indirection))  # ((ROW(…)).f1).f2 is (ROW(…)).f1.f2
        if field and isinstance(node.arg, ast.RowExpr):
            return self._row_field(node, node.arg, node.indirection[0].sval, scope)
        if field and isinstance(node.arg, ast.ColumnRef) and node.arg.fields and isinstance(node.arg.fields[-1], ast.A_Star):
            # (t.*).a is t.a
            ref = ast.ColumnRef(fields=(*node.arg.fields[:-1], node.indirection[0]), location=node.arg.location)
            rest = tuple(node.indirection[1:])
            return self.expr(ast.A_Indirection(arg=ref, indirection=rest) if rest else ref, scope)
        original = copy.deepcopy(node.arg)
        node.arg, t = self.expr(node.arg, scope)
        if field and t is not None and t.row_oid and not t.is_array:
            return self._row_field_of(node, t, original, scope)
        if t is not None and t.row_oid and any(isinstance(i, ast.A_Star) for i in node.indirection or ()):
            raise self.fail("0A000", f"(…).* of a value of composite type {_type_display(t)} is not supported by walsender-proxy", node)
        if field and t is not None and t.name != "unknown":
            # (a value of a scalar type has no fields; DuckDB's binder would say it its way)
            raise self.fail("42809", f"column notation .{node.indirection[0].sval} applied to type {_type_display(t)}, which is not a composite type", original)
        if self._is_jsonb(node.arg, t, scope) and all(isinstance(i, ast.A_Indices) for i in node.indirection):
            return self._jsonb_subscripts(original, node.indirection, scope)
        if t is not None and not t.name.startswith("_") and node.indirection and isinstance(node.indirection[0], ast.A_Indices):
            if t.name == "name" and len(node.indirection) == 1 and not node.indirection[0].is_slice:
                # name is a char[64] to subscripting: its byte at the 0-based subscript, a "char"
                i = self.expr(node.indirection[0].uidx, scope)[0]
                inside = ast.BoolExpr(boolop=BoolExprType.AND_EXPR, args=(_op(">=", i, _int(0)), _op("<=", copy.deepcopy(i), _int(63))))
                byte = _call("substr", _cast(node.arg, "varchar"), _op("+", copy.deepcopy(i), _int(1)), _int(1))
                return ast.CaseExpr(args=(ast.CaseWhen(expr=inside, result=byte),)), T("char")
            if t.name in TEXTISH or t.name == "name":
                raise self.fail("0A000" if t.name == "name" else "42804",
                                "a slice of a name value is not supported by walsender-proxy" if t.name == "name"
                                else f"cannot subscript type {_type_display(t)} because it does not support subscripting", node)  # fmt: skip
            if t.name in _NOT_SUBSCRIPTABLE and not t.zero_based and not t.domain_oid:
                # (DuckDB would try its array_extract and word its own error)
                raise SqlError("42804", f"cannot subscript type {_type_display(t)} because it does not support subscripting", self._parenthesized_pos(original))
        if t is not None and t.name.startswith("_") and not t.zero_based and node.indirection and isinstance(node.indirection[0], ast.A_Indices):
            subscripted = self._array_subscripts(node, t, scope)
            if subscripted is not None:
                return subscripted
        out_t = t
        new_ind = []
        for ind in node.indirection:
            if isinstance(ind, ast.A_Indices):
                shift = t is not None and t.zero_based
                for attr in ("lidx", "uidx"):
                    sub = getattr(ind, attr)
                    if sub is not None:
                        sub = self.expr(sub, scope)[0]
                        if shift:
                            sub = _op("+", sub, _int(1))
                        setattr(ind, attr, sub)
                if not ind.is_slice and out_t is not None:
                    out_t = out_t.elem
            else:
                out_t = None
            new_ind.append(ind)
        node.indirection = tuple(new_ind)
        return node, out_t

    def _parenthesized_pos(self, node: ast.Node) -> int | None:
        """The 1-based position of ``node`` (a cast of a literal: the literal's), or of the
        parenthesis it is written in."""
        pos = self._literal_pos(node) if isinstance(node, ast.TypeCast) and _str_const(node.arg) is not None else None
        pos = pos or self._pos(node)
        if pos is None:
            return None
        i = pos - 2
        while i >= 0 and self.sql[i].isspace():
            i -= 1
        return i + 1 if i >= 0 and self.sql[i] == "(" else pos

    def _row_star(self, val: ast.Node, scope: _Scope) -> list[ast.ResTarget] | None:
        """``(v).*`` in a SELECT list when ``v`` is a value of a composite type: one target
        per attribute, ``(v).a`` named ``a`` (None: not that). Like PostgreSQL's expansion,
        ``v`` is written once per attribute."""
        if not (isinstance(val, ast.A_Indirection) and val.indirection and isinstance(val.indirection[-1], ast.A_Star)):
            return None
        prefix = tuple(val.indirection[:-1])
        if not all(isinstance(i, ast.String) for i in prefix):
            return None
        if isinstance(val.arg, ast.RowExpr) and not prefix:  # ((ROW(a, b)).*: f1, f2, as ParseFuncOrColumn names them)
            return [ast.ResTarget(name=f"f{i}", val=copy.deepcopy(a)) for i, a in enumerate(val.arg.args or (), start=1)]
        base: ast.Node = ast.A_Indirection(arg=val.arg, indirection=prefix) if prefix else val.arg
        try:
            t = self.expr(copy.deepcopy(base), scope)[1]
        except PgError:
            return None
        rt = composite_values.by_oid(t.row_oid) if t is not None and t.row_oid and not t.is_array else None
        if rt is None:
            return None
        return [
            ast.ResTarget(name=n, val=ast.A_Indirection(arg=copy.deepcopy(val.arg), indirection=(*prefix, _s(n))))
            for n, _ in rt.fields
        ]

    def _row_field_of(self, node: ast.A_Indirection, t: T, original: ast.Node, scope: _Scope) -> tuple[ast.Node, T | None]:
        """``(v).f`` of a value of a composite type: the STRUCT's field, of the attribute's
        type (42703 for no attribute of that name)."""
        rt = composite_values.by_oid(t.row_oid)
        assert rt is not None
        name = node.indirection[0].sval
        found = rt.field(name)
        if found is None:
            raise self.fail("42703", f'column "{name}" not found in data type {rt.name}', node.indirection[0] if getattr(node.indirection[0], "location", None) else original)
        value: ast.Node = _call("struct_extract", node.arg, _str(name))
        ft = _lake_t(found[1])
        if found[1].is_composite and not found[1].is_array:
            ft = T("record", row_oid=found[1].base.oid)
        rest = tuple(node.indirection[1:])
        if not rest:
            return value, ft
        if isinstance(rest[0], ast.String) and ft.row_oid:
            return self._row_field_of(ast.A_Indirection(arg=value, indirection=rest), ft, original, scope)
        raise self.fail("0A000", "a subscript of a field of a composite value is not supported by walsender-proxy", node)

    def _row_field(self, node: ast.A_Indirection, row: ast.RowExpr, name: str, scope: _Scope) -> tuple[ast.Node, T | None]:
        """``(ROW(a, b)).f2``: an anonymous record's fields are ``f1``…``fn`` (PostgreSQL's
        ParseFuncOrColumn over a RowExpr), so the selection is the field's own expression."""
        args = list(row.args or ())
        m = re.fullmatch(r"f([1-9][0-9]*)", name)
        if m is None or int(m.group(1)) > len(args):
            raise self.fail("42703", f'could not identify column "{name}" in record data type', row)
        chosen = args[int(m.group(1)) - 1]
        if isinstance(chosen, ast.A_Const) and (chosen.isnull or isinstance(chosen.val, ast.String)):
            # (an untyped literal field has no type to take)
            raise self.fail("XX000", "failed to find conversion function from unknown to text")
        rest = tuple(node.indirection[1:])
        if not rest:
            return self.expr(chosen, scope)
        if isinstance(rest[0], ast.String) and isinstance(chosen, ast.RowExpr):  # (a field's record is not looked into)
            raise self.fail("42703", f'could not identify column "{rest[0].sval}" in record data type', row)
        return self.e_A_Indirection(ast.A_Indirection(arg=chosen, indirection=rest), scope)

    def _array_subscripts(self, node: ast.A_Indirection, t: T, scope: _Scope) -> tuple[ast.Node, T | None] | None:
        """``a[i][j]``, ``a[i:j]`` of an array with PostgreSQL's bounds: a subscript below 1
        or past the end gives NULL (DuckDB counts a negative one from the end), a slice
        keeps what lies within the array; a number of subscripts other than the array's
        dimensions gives NULL. Slices of a multidimensional array are refused. None when the
        indirection goes on past the subscripts (a field)."""
        if not all(isinstance(i, ast.A_Indices) for i in node.indirection):
            return None
        k = array_exprs.depth(t.name)
        indices = list(node.indirection)
        if len(indices) > array_exprs.MAX_DIMS:
            raise self.fail("54000", f"number of array dimensions ({len(indices)}) exceeds the maximum allowed ({array_exprs.MAX_DIMS})", node)
        slices = any(i.is_slice for i in indices)
        if slices and k > 1:
            raise self.fail("0A000", "a slice of a multidimensional array is not supported by walsender-proxy", node)
        if slices and len(indices) > k:
            # (array_get_slice: more subscripts than the array has dimensions, each [n]
            # read as [1:n], is an empty array; a NULL subscript makes it NULL)
            subs = [self.expr(sub, scope)[0] for ind in indices for sub in (ind.lidx, ind.uidx) if sub is not None]
            empty: ast.Node = _call("list_slice", node.arg, _int(1), _int(0))
            if subs:
                nulls = [ast.NullTest(arg=sub, nulltesttype=NullTestType.IS_NULL) for sub in subs]
                any_null = nulls[0] if len(nulls) == 1 else ast.BoolExpr(boolop=BoolExprType.OR_EXPR, args=tuple(nulls))
                empty = ast.CaseExpr(args=(ast.CaseWhen(expr=any_null, result=_null()),), defresult=empty)
            return empty, t
        for ind in indices:
            for attr in ("lidx", "uidx"):
                sub = getattr(ind, attr)
                if sub is not None:
                    macro = "pgc_sub_index" if not ind.is_slice else "pgc_sub_lower" if attr == "lidx" else "pgc_sub_upper"
                    self.needs.add(macro)
                    setattr(ind, attr, _call(macro, self.expr(sub, scope)[0]))
        base = T(t.name.lstrip("_"), typmod=t.typmod, scale=t.scale, text_numeric=t.text_numeric, enum_oid=t.enum_oid)
        if not slices and len(indices) != k:  # (array_get_element: NULL)
            return _call("list_extract", array_exprs.elements(node.arg, k), _cast(_null(), "integer")), base
        node.indirection = tuple(indices)
        return node, t if slices else base

    def _jsonb_subscripts(self, arg: ast.Node, indices: Sequence[ast.A_Indices], scope: _Scope) -> tuple[ast.Node, T | None]:
        """``j[0]['a']``: PostgreSQL's jsonb subscripting reads the path of its subscripts'
        texts, as ``j #> '{0,a}'`` does (a number picks an array element, counting from
        the end when negative; a missing element, or a scalar, gives NULL)."""
        path = []
        for ind in indices:
            if ind.is_slice:
                raise self.fail("42804", "jsonb subscript does not support slices", ind)
            _, st = self.expr(copy.deepcopy(ind.uidx), scope)
            if st is not None and st not in (UNKNOWN, TEXT) and st.name not in ("int2", "int4", "int8", "varchar", "bpchar", "name"):
                raise self.fail(
                    "42804", f"subscript type {_type_display(st)} is not supported", ind.uidx,
                    hint="jsonb subscript must be coercible to either integer or text.",
                )  # fmt: skip
            path.append(ast.TypeCast(arg=ind.uidx, typeName=ast.TypeName(names=(_s("text"),), typemod=-1)))
        expr = ast.A_Expr(
            kind=A_Expr_Kind.AEXPR_OP, name=(_s("#>"),), lexpr=arg,
            rexpr=ast.A_ArrayExpr(elements=tuple(path)),
        )  # fmt: skip
        return self.expr(expr, scope)

    def e_CurrentOfExpr(self, node: ast.CurrentOfExpr, scope: _Scope) -> tuple[ast.Node, T | None]:
        raise self.fail("0A000", "WHERE CURRENT OF a cursor is not supported by walsender-proxy", node)

    def e_SubLink(self, node: ast.SubLink, scope: _Scope) -> tuple[ast.Node, T | None]:
        tt: T | None = None
        if node.testexpr is not None:
            node.testexpr, tt = self.expr(node.testexpr, scope)
        if node.operName:
            node.operName = tuple(n for n in node.operName if n.sval != "pg_catalog")
        sub, cols = self.select(node.subselect, scope)
        node.subselect = sub
        kind = node.subLinkType
        if kind in (SubLinkType.ANY_SUBLINK, SubLinkType.ALL_SUBLINK) and len(cols or ()) == 1:
            inner = cols[0][1]
            self._no_text_numeric("IN/ANY/ALL (subquery)", node, tt, inner)
            if (tt is not None and tt.enum_oid) or (inner is not None and inner.enum_oid):
                # (a subquery's unknown literal is text there: an enum meets no text)
                op = node.operName[-1].sval if node.operName else "="
                self._operator_exists(op, node, tt, TEXT if inner == UNKNOWN else inner)
            if is_bpchar(tt) or is_bpchar(inner):  # (x IN (SELECT …) compares as x = y)
                both = _compares_as_character_n(tt, inner)
                node.testexpr = (_unpadded_any if both else unpadded)(node.testexpr, tt)[0]
                if is_bpchar(inner) or (both and inner is not None and inner.name == "varchar"):
                    node.subselect = _select_unpadded(sub)
        if kind == SubLinkType.EXPR_SUBLINK:
            return node, (TEXT if cols and cols[0][1] == UNKNOWN else cols[0][1]) if cols else None
        if kind == SubLinkType.ARRAY_SUBLINK:
            inner = cols[0][1] if cols else None
            if inner is None:
                return node, None
            return node, T("_" + ("text" if inner == UNKNOWN else inner.name), enum_oid=inner.enum_oid)
        return node, BOOL

    def e_TypeCast(self, node: ast.TypeCast, scope: _Scope) -> tuple[ast.Node, T | None]:
        new, t = self._type_cast(node, scope)
        if t is not None and t.name == "uuid" and not t.domain_oid:
            # (a query's uuid values are DuckDB's UUID, as its tables' columns: a cast's
            # storage text would not mix with them in COALESCE, CASE or GREATEST)
            return _cast(new, "UUID"), t
        return new, t

    def _type_cast(self, node: ast.TypeCast, scope: _Scope) -> tuple[ast.Node, T | None]:
        domain = self._domain_cast(node, scope)
        if domain is not None:
            return domain
        enum = self._enum_cast(node, scope)
        if enum is not None:
            return enum
        row = self._row_cast(node, scope)
        if row is not None:
            return row
        target, is_array, typmods = self._type_name(node.typeName)
        self._coerced_param(node.arg, T(("_" if is_array else "") + target))
        if target in UNMODELED_TYPES:  # (a varchar of the input text would print it unchecked)
            shown = pgcatalog_defs.format_type(pgcatalog_defs.TYPE_OIDS[target], None) or target
            raise self.fail("0A000", f"type {shown} is not supported by walsender-proxy", node)
        if target == "timetz" and typmods and typmods[0] < 6:  # (DuckDB's TIMETZ keeps six digits)
            raise self.fail("0A000", f"a cast to time({typmods[0]}) with time zone is not supported by walsender-proxy", node)
        if target in TEXTISH and not is_array and _whole_row(node.arg, scope) is not None:
            if target not in ("text", "varchar") or typmods:
                raise self.fail("0A000", f"a cast of a row to {_type_display(T(target))} is not supported by walsender-proxy", node)
            row = self._whole_row_text(node.arg, scope)
            assert row is not None
            return row, T(target)
        if isinstance(node.arg, ast.RowExpr) and target in TEXTISH and not is_array:
            # (record_out writes (Jim,Beam); DuckDB's STRUCT cast writes another text)
            raise self.fail("0A000", f"a cast of a row to {_type_display(T(target))} is not supported by walsender-proxy", node)
        if target == "char" and not is_array and _str_const(node.arg) is not None:
            return _cast(_str(_char_in(_str_const(node.arg) or "")), "VARCHAR"), T("char")
        if target == "pg_lsn" and not is_array and _str_const(node.arg) is not None:
            return self._pg_lsn_const(node.arg, node), T("pg_lsn")
        if target == "pg_lsn" and not is_array:
            value, vt = self.expr(node.arg, scope)
            if vt is None or vt.name != "pg_lsn":
                self.needs.add("pgc_pg_lsn_in")
                value = _call("pgc_pg_lsn_in", _cast(value, "VARCHAR"))
            return value, T("pg_lsn")
        if target in ("xid", "xid8", "cid") and not is_array and _str_const(node.arg) is not None:
            # (PostgreSQL 15's input of each: strtoul, octal and hexadecimal, no error)
            value = literals.xid_in(_str_const(node.arg) or "", 64 if target == "xid8" else 32)
            return _cast(_int(value), "UBIGINT" if target == "xid8" else "UINTEGER"), T(target)
        if target == "name" and is_array and node.typeName.arrayBounds and len(node.typeName.arrayBounds) == 1:
            value, vt = self.expr(copy.deepcopy(node.arg), scope)  # (a probe: the cast below rewrites its own)
            if vt is not None and vt.is_array and vt.name.lstrip("_") in ("text", "varchar", "name"):
                # (each text element through text_name: cut to 63 bytes at a character's end)
                self.needs.update(("pgc_name_in", "pgc_name_array_in"))
                return _call("pgc_name_array_in", _cast(value, "VARCHAR", array=True)), T("_name")
        if target == "name" and not is_array:
            # namein: at most NAMEDATALEN - 1 (63) bytes, cut at a character's end
            self.needs.add("pgc_name_in")
            value, vt = self.expr(node.arg, scope)
            if vt is not None and vt.name not in TEXTISH:
                value = self.expr(ast.TypeCast(arg=node.arg, typeName=ast.TypeName(names=(_s("pg_catalog"), _s("text")), typemod=-1)), scope)[0]
            elif vt is not None and vt.name == "bpchar" and not vt.is_array:  # (bpchar_name drops the padding)
                value = _call("rtrim", _cast(value, "VARCHAR"), _str(" "))
            return _call("pgc_name_in", _cast(value, "VARCHAR")), T("name")
        ctype = self._lake_type(target, typmods, is_array, node.typeName)
        if target == "numeric" and ctype is not None and not is_array:
            exact = self._numeric_constant(node.arg, ctype)
            if exact is not None:
                return exact
        if is_array and ctype is not None and array_exprs.is_multidimensional_literal(_str_const(node.arg) or ""):
            return self._multidimensional_literal(_str_const(node.arg) or "", ctype, node.arg)
        if ctype is not None and isinstance(node.arg, ast.A_Const) and not node.arg.isnull:
            # a quoted literal goes through the type's input function, a number through the
            # cast from its own type (sql/literals.py)
            try:
                lit = _str_const(node.arg)
                out = (
                    literals.unknown_literal(lit, ctype)
                    if lit is not None
                    else literals.constant_cast(node.arg, ctype)
                )
            except PgError as e:
                at = self._literal_pos(node) if lit is not None else None  # (the literal's, as PostgreSQL's)
                raise SqlError(e.sqlstate, e.message, at, detail=e.detail, hint=e.hint) from None
            if out is not None:
                if target == "numeric" and not is_array and ctype.typmod < 0:  # (its own scale)
                    raw = lit if lit is not None else node.arg.val.fval if isinstance(node.arg.val, ast.Float) else str(node.arg.val.ival)
                    return out, T("numeric", scale=numeric_math.parse(raw).dscale)
                return out, _lake_t(ctype)
        lit = _str_const(node.arg)
        if is_array and lit is not None:
            elems = parse_array_literal(lit)
            if elems is None:
                raise self.fail("22P02", f'malformed array literal: "{lit}"', node.arg)
            arr = ast.A_ArrayExpr(elements=tuple(_null() if e is None else _str(e) for e in elems))
            return _cast(arr, _duck_type(target, node.typeName), array=True), T("_" + target)
        self._typed_empty_array = isinstance(node.arg, ast.A_ArrayExpr) and not node.arg.elements
        self._array_cast_target = target if isinstance(node.arg, ast.A_ArrayExpr) and is_array else None
        arg, t = self.expr(node.arg, scope)
        if t is not None and t.row_oid:  # (a cast to the same composite type was taken above)
            raise self.fail("0A000", f"a cast of composite type {_type_display(t)} to {_type_display(T(('_' if is_array else '') + target))} is not supported by walsender-proxy", node)
        if not is_array and t is not None and t.name in ("xid", "xid8") and target in ("int2", "int4", "int8", "numeric", "oid"):
            # (pg_cast has no cast from xid or xid8 to a number; text is the way)
            raise self.fail("42846", f"cannot cast type {t.name} to {_type_display(T(target))}", node)
        if not is_array and t is not None and t.name == "regproc_text" and target not in TEXTISH and target != "regproc":
            # (a catalog regproc column keeps the function's name: its OID is that of the
            # one function so named, refused if the name is overloaded)
            self.needs.add("pgc_regproc_text_oid")
            arg, t = _call("pgc_regproc_text_oid", arg), T("regproc")
        if target in ("oid", "xid") and not is_array and (t is None or t == UNKNOWN or t.name in TEXTISH or t.name == "name"):
            # (their input functions: oidin's syntax and range errors, PostgreSQL 15's xidin
            # that reads what strtoul reads; a literal is read before the statement runs)
            return self._reg_in(f"pgc_{target}_in", arg if t == UNKNOWN else _cast(arg, "varchar"), t, node), T(target)
        if (
            not is_array and t is not None and not t.is_array and not t.domain_oid and not t.enum_oid
            and t.name != target and t.name in _CAST_CHECKED and target in _CAST_CHECKED
            and (t.name, target) not in coercion_data.CASTS
        ):
            # (neither a pg_cast entry nor an I/O cast, which only string types have)
            raise self.fail("42846", f"cannot cast type {_type_display(t)} to {_type_display(T(target))}", node)
        if not is_array and t is not None and (t.name, target) in _DATETIME_CASTS and not typmods:
            # pg_cast's time → interval, interval → time (DuckDB has neither), and a date's
            # range check on its way to a timestamp (22008 past 294276 AD)
            macro = _DATETIME_CASTS[(t.name, target)]
            self.needs.add(macro)
            arg = _call(macro, arg)
            if target in ("interval", "time"):
                return arg, T(target)
        if _JsonHost(self, scope).json_type(node.arg, t) == "json":  # json casts to text and jsonb only
            if is_array or target not in ("json", "jsonb", "text", "varchar", "bpchar", "name"):
                shown = _type_display(T(("_" if is_array else "") + target))
                raise self.fail("42846", f"cannot cast type json to {shown}", node)
            if target in ("varchar", "bpchar") and ctype is not None and ctype.typmod >= 0:
                return literals.input_call(arg, ctype), _lake_t(ctype)  # (its length coercion)
        if target == "numeric" and ctype is not None and not is_array and self._is_jsonb(arg, t, scope):
            # jsonb_numeric: the number as written, every digit (DuckDB's cast reads a double)
            text = _call(jsonb_ops.UDF_NUMBER, arg)
            if ctype.typmod < 0:
                return text, NUMERIC_TEXT
            out_t = _lake_t(ctype, stored=True)
            return literals.input_call(text, ctype, as_text=out_t.text_numeric), out_t
        if (
            target == "numeric"
            and ctype is not None
            and not is_array
            and t is not None
            and not t.text_numeric
            and t.name in ("numeric", *numeric_exprs.INTEGERS, *numeric_exprs.FLOATS)
        ):
            # exact: integers' and DECIMALs' text, float8's 15 digits (float8_numeric)
            if t.name == "numeric" and ctype.typmod < 0:
                return arg, T("numeric")
            text = numeric_exprs.as_text(_operand(arg, t))
            if ctype.typmod < 0:
                return text, NUMERIC_TEXT
            out_t = _lake_t(ctype, stored=True)
            return literals.input_call(text, ctype, as_text=out_t.text_numeric), out_t
        if ctype is not None and t is not None and t.text_numeric and not is_array:
            if target == "numeric":  # numeric's own input of the exact text, with the typmod
                if ctype.typmod < 0:
                    return arg, t
                out_t = _lake_t(ctype, stored=True)
                return literals.input_call(arg, ctype, as_text=out_t.text_numeric), out_t
            if target in ("int2", "int4", "int8"):  # rounded as numeric rounds, range-checked
                bits = {"int2": 16, "int4": 32, "int8": 64}[target]
                value = _call(numeric_math.udf_name("to_int"), arg, _cast(_int(bits), "bigint"))
                return _cast(value, _duck_type(target, None)), T(target)
        if ctype is not None and not is_array and t is not None:
            floating = self._floats(float_exprs.cast, node, _operand(arg, t), target)
            if floating is not None:
                return floating
        if ctype is not None:
            source = self._lake_source(node.arg, t, scope)
            out_t = _lake_t(ctype)
            if (
                source is not None
                and source.base.name == "bpchar"
                and not source.is_array
                and target in ("text", "varchar")
                and not is_array
            ):
                arg = _call("rtrim", arg, _str(" "))  # bpchar → text/varchar drops the padding
                if ctype.typmod < 0:
                    return arg, out_t
            if self._io_cast(node.arg, t, source, ctype):
                if target == "numeric" and not is_array:  # held as its text where DECIMAL cannot
                    out_t = _lake_t(ctype, stored=True)
                    return literals.input_call(arg, ctype, as_text=out_t.text_numeric), out_t
                return literals.input_call(arg, ctype), out_t
            if (
                source is not None
                and target in ("text", "varchar", "bpchar")
                and not is_array
                and literals.needs_output_call(source)
            ):
                text = literals.output_call(arg, source)
                if ctype.typmod < 0:
                    return text, out_t
                return literals.input_call(text, ctype), out_t
        if target in REG_TYPES:
            reg = REG_TYPES[target]
            if t is not None and t.name in INTEGERISH:
                return _cast(arg, "uinteger"), T(reg)
            return self._reg_in(f"pgc_{reg}_in", _qualify(arg, scope), t, node), T(reg)
        if t is not None and t.name in _OUT_FORMAT and t.name in REG_TYPES and target in TEXTISH:
            fn = _OUT_FORMAT[t.name]
            self.needs.add(fn)
            return _call(fn, _qualify(arg, scope)), T(target)
        if is_array:
            duck = _duck_type(target, node.typeName)
            zero = bool(t and t.zero_based)
            # a nested list keeps its levels (PostgreSQL's array of n dimensions is one type)
            depth = len(t.name) - len(t.name.lstrip("_")) if t is not None and t.name.startswith("_") else 1
            return _cast(arg, duck, array=depth), T("_" * depth + target, zero_based=zero)
        if target in ("int2vector", "oidvector"):
            if t is None or t == UNKNOWN or t.name in TEXTISH:  # (its input function: ``1 2``)
                self.needs.add(f"pgc_{target}_in")
                return _call(f"pgc_{target}_in", arg), T(target, zero_based=True)
            elem = "smallint" if target == "int2vector" else "uinteger"
            return _cast(arg, elem, array=True), T(target, zero_based=True)
        if target in ("text", "varchar", "bpchar", "name") and t is not None and t.name in _VECTORS:
            return _call("array_to_string", arg, _str(" ")), T(target)  # (int2vectorout: ``1 2``)
        if target in ("text", "varchar", "bpchar", "name") and t is not None and t.is_array and t.enum_oid:
            # (array_out of the labels: text[]'s, NULLs and quoting included)
            text_array = literals.target_type("text", [], True)
            assert text_array is not None
            return literals.output_call(_cast(arg, "varchar", array=True), text_array), T(target)
        if target in ("text", "varchar", "bpchar", "name") and t is not None and t.is_array:
            if array_exprs.depth(t.name) > 1:  # (DuckDB prints a nested list its own way)
                raise self.fail("0A000", f"a cast of a multidimensional array to {_type_display(T(target))} is not supported by walsender-proxy", node)
            out = _op(
                "||", _op("||", _str("{"), _call("array_to_string", arg, _str(","))), _str("}")
            )
            return out, T(target)
        duck = _duck_type(target, node.typeName, typmods)
        if t is not None and t.name == "timestamptz" and target in ("time", "timetz"):
            if target == "timetz":
                session_zone.refuse_outside_utc("a cast to time with time zone")
            arg = _cast(arg, "timestamp")  # (the wall clock; DuckDB's ICU has no TIMESTAMPTZ to TIME)
            if target == "time":  # (infinity has no time of day: NULL)
                arg = ast.CaseExpr(args=(ast.CaseWhen(expr=_call("isinf", arg), result=_null()),), defresult=arg)
        if isinstance(duck, tuple):
            return _cast(arg, duck[0], typmods=duck[1]), T(target)
        if target in ("timestamp", "timestamptz", "time") and typmods and 0 <= typmods[0] < 6:
            # timestamp(p): the value rounded to p fractional digits (AdjustTimestampForTypmod)
            fn = "pgc_round_time" if target == "time" else "pgc_round_us"
            self.needs.add(fn)
            rounded = _call(fn, _cast(arg, duck), _int(10 ** (6 - typmods[0])))
            if target == "timestamp":  # (pgc_round_us gives the instant of that UTC wall clock)
                rounded = _call("timezone", _str("UTC"), rounded)
            return _cast(rounded, duck), T(target, typmod=typmods[0])
        if target == "timestamptz" and t is not None and t.name in ("date", "timestamp"):
            return session_zone.before_first_instant(_cast(arg, duck), t.name), T(target)
        return _cast(arg, duck), T(target)

    def _numeric_constant(self, arg: ast.Node, ctype: ColumnType) -> tuple[ast.Node, T] | None:
        """``1e-30::numeric``, ``'NaN'::numeric``, a 50-digit literal: numeric's input of the
        constant, held as its text when DuckDB's DECIMAL cannot hold it (None: it can, and
        the literal cast makes it a DECIMAL)."""
        if not isinstance(arg, ast.A_Const) or arg.isnull:
            return None
        v = arg.val
        raw = v.sval if isinstance(v, ast.String) else v.fval if isinstance(v, ast.Float) else None
        if raw is None:
            return None
        try:
            num = numeric_math.parse(raw)
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, arg) from None
        out_t = _lake_t(ctype, stored=True) if ctype.typmod >= 0 else NUMERIC_TEXT
        if not out_t.text_numeric or (not num.special and len(numeric_math.text(num).lstrip("-").replace(".", "")) <= 38 and ctype.typmod < 0):
            return None
        text = _str(numeric_math.text(num))
        if ctype.typmod < 0:
            return text, NUMERIC_TEXT
        try:
            return _str(numeric_text_in(numeric_math.text(num), ctype.numeric_precision_scale)), out_t
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, arg) from None

    def _lake_type(
        self, target: str, typmods: list[int], is_array: bool, tn: ast.TypeName
    ) -> ColumnType | None:
        try:
            return literals.target_type(target, typmods, is_array)
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, tn) from None

    def _lake_source(self, arg: ast.Node, t: T | None, scope: _Scope) -> ColumnType | None:
        """The lake type of a cast's operand: what the rewriter inferred, or a user table
        column's declared type."""
        if t is not None:
            base = t.name[1:] if t.name.startswith("_") else t.name
            try:
                return literals.target_type(base, [], t.name.startswith("_"))
            except PgError:
                return None
        if isinstance(arg, ast.ColumnRef) and all(isinstance(f, ast.String) for f in arg.fields):
            return scope.declared([f.sval for f in arg.fields][-2:])
        return None

    def _io_cast(
        self, arg: ast.Node, t: T | None, source: ColumnType | None, ctype: ColumnType
    ) -> bool:
        """A cast PostgreSQL makes by I/O conversion through the target's input function,
        which DuckDB's casts from VARCHAR do not reproduce: from a text expression or a
        parameter bound as text (to anything but unconstrained text), json to jsonb."""
        target = ctype.base.name
        if target in ("text", "varchar", "bpchar") and ctype.typmod < 0 and not ctype.is_array:
            return False
        if isinstance(arg, ast.A_Const):
            return False  # NULL (other constants are the literal input's)
        if isinstance(arg, ast.ParamRef):
            return arg.number in self.text_params
        if t is not None and t.name in TEXTISH:
            return True
        if source is None or source.is_array:
            return False
        return source.base.name in ("text", "varchar", "bpchar") or (
            source.base.name == "json" and target == "jsonb" and not ctype.is_array
        )

    def _domain_cast(self, node: ast.TypeCast, scope: _Scope) -> tuple[ast.Node, T | None] | None:
        """A cast to a domain: to its base type, then its constraints (None: the type is
        not a domain)."""
        tn = node.typeName
        names = _user_type_names(tn)
        if names is None:
            return None
        found = domain_casts.visible(names)
        if found is None:
            return None
        self.user_types = True
        d, cat = found
        if tn.typmods:
            raise self.fail("42601", f'type modifier is not allowed for type "{d.name}"', tn)
        if tn.arrayBounds:
            raise self.fail("0A000", f"an array of domain {d.name} is not supported by walsender-proxy", tn)
        inner = ast.TypeCast(arg=node.arg, typeName=domain_casts.base_type_name(d, tn.location), location=node.location)
        value, t = self.e_TypeCast(inner, scope)
        try:
            return domain_casts.coerce(cat, d, value), None if t is None else replace(t, domain_oid=d.oid)
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, node) from None

    def _enum_cast(self, node: ast.TypeCast, scope: _Scope) -> tuple[ast.Node, T | None] | None:
        """A cast to an enum or an array of one (None: the type is no enum): a literal
        read by enum_in here, text by enum_in in the query, the same enum as it is."""
        tn = node.typeName
        names = _user_type_names(tn)
        if names is None:
            return None
        en = enum_casts.visible(names)
        if en is None:
            return None
        self.user_types = True
        if tn.typmods:
            raise self.fail("42601", f'type modifier is not allowed for type "{en.name}"', tn)
        array = bool(tn.arrayBounds)
        return self._as_enum(node.arg, en, array, scope, node)

    def _row_cast(self, node: ast.TypeCast, scope: _Scope) -> tuple[ast.Node, T | None] | None:
        """A cast to a composite type (None: the type is none): NULL, a literal read by
        record_in, ``ROW(…)`` coerced field by field as coerce_record_to_complex does, a
        value of the same type as it is; other sources refused by name."""
        tn = node.typeName
        names = _user_type_names(tn)
        rt = composite_values.visible(names) if names is not None else None
        if rt is None:
            return None
        self.user_types = True
        if tn.typmods:
            raise self.fail("42601", f'type modifier is not allowed for type "{names[-1]}"', tn)
        if tn.arrayBounds:
            if isinstance(node.arg, ast.A_Const) and node.arg.isnull:  # (a NULL list of the type's STRUCTs)
                element = self._as_row(node.arg, rt, scope, node)[0]
                return ast.CaseExpr(args=(ast.CaseWhen(expr=_bool(False), result=_call("list_value", element)),)), T("_record", row_oid=rt.oid)
            raise self.fail("0A000", f"an array of composite type {rt.name} is not supported by walsender-proxy", node)
        return self._as_row(node.arg, rt, scope, node)

    def _as_row(self, arg: ast.Node, rt: composite_values.RowType, scope: _Scope, at: ast.Node) -> tuple[ast.Node, T]:
        self._row_typed = True
        out_t = T("record", row_oid=rt.oid)
        lit = _str_const(arg)
        if isinstance(arg, ast.A_Const) and arg.isnull:
            fields = [self.expr(ast.TypeCast(arg=_null(), typeName=composite_values.type_name(ct)), scope)[0] for _, ct in rt.fields]
            return ast.CaseExpr(args=(ast.CaseWhen(expr=_bool(False), result=self._struct(rt, fields)),)), out_t
        if lit is not None:
            try:
                texts = composite_values.record_fields(lit, len(rt.fields))
            except PgError as e:
                raise SqlError(e.sqlstate, e.message, self._literal_pos(at), detail=e.detail) from None
            fields = [self._field_input(text, ct, scope) for text, (_, ct) in zip(texts, rt.fields, strict=True)]
            return self._struct(rt, fields), out_t
        if isinstance(arg, ast.RowExpr):
            args = list(arg.args or ())
            fields = []
            for i, (_, ct) in enumerate(rt.fields):
                if i >= len(args):
                    raise self.fail("42846", f"cannot cast type record to {rt.name}", at, detail="Input has too few columns.")
                value = args[i]
                try:
                    fields.append(self.expr(ast.TypeCast(arg=value, typeName=composite_values.type_name(ct)), scope)[0])
                except SqlError as e:
                    if e.sqlstate != "42846":
                        raise
                    src = self.expr(copy.deepcopy(value), scope)[1]
                    raise self.fail(
                        "42846", f"cannot cast type record to {rt.name}", at,
                        detail=f"Cannot cast type {_type_display(src)} to {_type_display(_lake_t(ct))} in column {i + 1}.",
                    ) from None  # fmt: skip
            if len(args) > len(rt.fields):
                raise self.fail("42846", f"cannot cast type record to {rt.name}", at, detail="Input has too many columns.")
            return self._struct(rt, fields), out_t
        value, vt = self.expr(arg, scope)
        if vt is not None and vt.row_oid == rt.oid and not vt.is_array:
            return value, out_t
        raise self.fail("0A000", f"a cast of {_type_display(vt)} to composite type {rt.name} is not supported by walsender-proxy", at)

    def _field_input(self, text: str | None, ct: ColumnType, scope: _Scope) -> ast.Node:
        """A field's text of a record literal through its attribute type's input function
        with the attribute's typmod (record_in's InputFunctionCall)."""
        if text is None:
            return self.expr(ast.TypeCast(arg=_null(), typeName=composite_values.type_name(ct)), scope)[0]
        if ct.is_composite and not ct.is_array:
            rt = composite_values.by_oid(ct.base.oid)
            assert rt is not None
            return self._as_row(_str(text), rt, scope, _str(text))[0]
        if ct.domain or ct.is_enum or ct.is_composite or ct.typmod < 0:
            return self.expr(ast.TypeCast(arg=_str(text), typeName=composite_values.type_name(ct)), scope)[0]
        return literals.input_call(_str(text), ct, explicit=False)

    def _struct(self, rt: composite_values.RowType, fields: Sequence[ast.Node]) -> ast.Node:
        """DuckDB's STRUCT of ``fields`` named as the type's attributes."""
        args = tuple(ast.NamedArgExpr(name=n, arg=v, argnumber=-1) for (n, _), v in zip(rt.fields, fields, strict=True))
        if not args:
            raise self.fail("0A000", f"a value of composite type {rt.name} without attributes is not supported by walsender-proxy")
        return _call("struct_pack", *args)

    def _as_enum(self, arg: ast.Node, en: EnumType, array: bool, scope: _Scope, at: ast.Node | None = None) -> tuple[ast.Node, T]:
        """``arg`` (not yet rewritten) coerced to enum ``en`` (``array``: an array of it)."""
        out_t = T("_anyenum" if array else "anyenum", enum_oid=en.oid)
        lit = _str_const(arg)
        try:
            if lit is not None and not array:
                return enum_casts.label_value(lit, en), out_t
            if lit is not None:
                elems = parse_array_literal(lit)
                if elems is None:
                    raise PgError("22P02", f'malformed array literal: "{lit}"')
                if array_exprs.is_multidimensional_literal(lit):
                    raise PgError("0A000", f"a multidimensional array of enum {en.name} is not supported by walsender-proxy")
                return enum_casts.labels_value(elems, en), out_t
        except PgError as e:
            raise SqlError(e.sqlstate, e.message, self._literal_pos(at) if at is not None else None) from None
        if isinstance(arg, ast.A_Const) and arg.isnull:
            return enum_casts.as_enum(_null(), en, array), out_t
        if array and isinstance(arg, ast.A_ArrayExpr) and all(_str_const(e) is not None or (isinstance(e, ast.A_Const) and e.isnull) for e in arg.elements or ()):
            try:  # (ARRAY['a', 'b']::e[]: each element read by enum_in)
                return enum_casts.labels_value([_str_const(e) for e in arg.elements or ()], en), out_t
            except PgError as e:
                raise self.fail(e.sqlstate, e.message, arg) from None
        self._coerced_param(arg, out_t)
        value, vt = self.expr(arg, scope)
        if vt is not None and vt.enum_oid == en.oid and vt.is_array == array:
            return value, out_t
        textish = vt is None or vt == UNKNOWN or vt.name.lstrip("_") in TEXTISH
        if textish and (vt is not None or isinstance(arg, ast.ParamRef)):
            if not array and (vt is None or not vt.is_array):
                return enum_casts.from_text(value, en), out_t
            if array and (vt is None or vt == UNKNOWN or not vt.is_array):
                # (text: its elements read by text[]'s input first, as array_in reads them)
                text_array = ast.TypeName(names=(_s("pg_catalog"), _s("text")), arrayBounds=(ast.Integer(ival=-1),), typemod=-1)
                value, vt = self.expr(ast.TypeCast(arg=value, typeName=text_array), scope)
            if array:
                self.needs.add(enum_casts.ARRAY_IN)
                return enum_casts.array_from_text(value, en), out_t
        raise self.fail("42846", f"cannot cast type {_type_display(vt)} to {_type_display(out_t)}", at if at is not None else arg)

    def _type_name(self, tn: ast.TypeName) -> tuple[str, bool, list[int]]:
        names = [n.sval for n in tn.names]
        if tn.pct_type or tn.setof:
            raise self.fail("0A000", "%TYPE and SETOF are not supported", tn)
        name = names[-1].lower()
        if len(names) > 2 or (len(names) == 2 and names[0] != "pg_catalog"):
            raise self.fail("42704", f'type "{".".join(names)}" does not exist', tn)
        name = literals.TYPE_ALIASES.get(name, name)
        if name not in pgcatalog_defs.TYPE_OIDS:
            raise self.fail("42704", f'type "{".".join(names)}" does not exist', tn)
        typmods = []
        for m in tn.typmods or ():
            if isinstance(m, ast.A_Const) and isinstance(m.val, ast.Integer):
                typmods.append(m.val.ival)
        if name.startswith("_") and name[1:] in pgcatalog_defs.TYPE_OIDS and pgcatalog_defs.TYPE_OIDS.get(name) is not None:
            return name[1:], True, typmods  # (``_int4`` is int4[] by its catalog name)
        return name, bool(tn.arrayBounds), typmods

    def _no_such_operator(self, node: ast.A_Expr, op: str, scope: _Scope) -> PgError:
        """42883 for an operator name pg_operator does not have, with the operands' types
        as PostgreSQL names them (``unknown`` for an untyped literal)."""
        shown = [_type_display(self.expr(e, scope)[1]) for e in (node.lexpr, node.rexpr) if e is not None]
        if node.kind != A_Expr_Kind.AEXPR_OP and len(shown) == 2:  # (op ANY (array): the element type)
            rt = self.expr(node.rexpr, scope)[1]
            shown[1] = _type_display(rt.elem if rt is not None and rt.elem is not None else rt)
        text = f"{shown[0]} {op} {shown[1]}" if len(shown) == 2 else f"{op} {shown[0]}"
        return self.fail(
            "42883", f"operator does not exist: {text}", node,
            hint="No operator matches the given name and argument types. You might need to add explicit type casts.",
        )  # fmt: skip

    def _before_literal(self, op: ast.A_Expr, lit: ast.Node) -> int:
        """A location just before a literal of ``op``'s right operand list, for a cast made
        of it to report the literal's position as PostgreSQL does (-1: not known)."""
        pos = self._operand_literal_pos(op, True, _str_const(lit))
        return pos - 2 if pos is not None and pos >= 2 else -1

    @staticmethod
    def _catalog_type(name: str) -> ast.TypeName:
        return ast.TypeName(names=(_s("pg_catalog"), _s(name)), typemod=-1)

    def e_A_Expr(self, node: ast.A_Expr, scope: _Scope) -> tuple[ast.Node, T | None]:
        if node.name:
            node.name = tuple(
                n for n in node.name if not (isinstance(n, ast.String) and n.sval == "pg_catalog")
            )
        op = node.name[-1].sval if node.name else ""
        kind = node.kind
        if kind in (A_Expr_Kind.AEXPR_OP, A_Expr_Kind.AEXPR_OP_ANY, A_Expr_Kind.AEXPR_OP_ALL) and op not in coercion_data.OPERATOR_NAMES:
            raise self._no_such_operator(node, op, scope)
        if not (kind in (A_Expr_Kind.AEXPR_OP, A_Expr_Kind.AEXPR_IN, A_Expr_Kind.AEXPR_DISTINCT, A_Expr_Kind.AEXPR_NOT_DISTINCT) and op in _COMPARISONS):
            for operand in (node.lexpr, node.rexpr):
                rt = self._row_operand(operand, scope)
                if rt is not None:  # (record's operators are its comparisons; DuckDB would take others)
                    raise self.fail("0A000", f"operator {op} of a value of composite type {_type_display(rt)} is not supported by walsender-proxy", node)
        if kind == A_Expr_Kind.AEXPR_OP and op in _COMPARISONS and isinstance(node.lexpr, ast.RowExpr) and isinstance(node.rexpr, ast.RowExpr):
            try:
                return self.expr(_row_comparison(op, node.lexpr.args or (), node.rexpr.args or ()), scope)[0], BOOL
            except PgError as e:
                raise self.fail(e.sqlstate, e.message, node) from None
        if kind in (A_Expr_Kind.AEXPR_OP_ANY, A_Expr_Kind.AEXPR_OP_ALL):
            if op in array_exprs.NON_BOOLEAN_OPERATORS:
                raise self.fail("42809", "op ANY/ALL (array) requires operator to yield boolean", node)
            left, lt = self.expr(node.lexpr, scope)
            self._no_text_numeric(f"{op} ANY/ALL", node, lt)
            lit = _str_const(node.rexpr)
            if is_bpchar(lt) and op not in _PADDED_OPS:
                left, lt = unpadded(left, lt)
                if lit is not None:  # a '{…}' literal read as character(n)[]
                    elems = parse_array_literal(lit)
                    if elems is None:
                        raise self.fail("22P02", f'malformed array literal: "{lit}"', node.rexpr)
                    lit = None
                    node.rexpr = ast.A_ArrayExpr(
                        elements=tuple(_null() if e is None else _str(e.rstrip(" ")) for e in elems)
                    )
            if lit is not None and lt is not None and lt.enum_oid and (en := enum_casts.by_oid(lt.enum_oid)) is not None:
                right, rt = self._as_enum(node.rexpr, en, True, scope)  # ('{a,b}' read as the enum's array)
                right = array_exprs.elements(right, 1)
            elif lit is not None:
                right = self._array_literal(lit, lt, node.rexpr)
            else:
                right, rt = self.expr(node.rexpr, scope)
                right = self._param_as(right, left, lt, scope, array=True) or right
                if self.infer_params:  # ($1 = ANY(ints): int4; x = ANY($1): an array of x's type)
                    if rt is not None and rt.is_array and lt == UNKNOWN:
                        self._coerced_param(left, rt.elem)
                    elif rt == UNKNOWN and lt is not None and lt != UNKNOWN and not lt.is_array:
                        self._coerced_param(right, T("_" + lt.name, enum_oid=lt.enum_oid))
                    else:
                        self._operator_params(op, left, lt, right, rt, array=True)
                if (lt == UNKNOWN or (lt is None and self._untyped_param(left))) and rt is not None and rt.is_array:
                    # ('…' = ANY(dates))
                    left, lt = self._unknowns_as([(left, lt)], rt.elem)[0]
                if lt is not None and lt.name == "float4" and rt is not None and rt.name in ("_numeric", "_float8"):
                    # (float4 against numeric or float8 elements: PostgreSQL's float48
                    # operators compare in double precision, 1.1::float4 <> 1.1)
                    left, right = _cast(left, "double"), _cast(right, "double", array=True)
                if rt is not None and rt.is_array and not rt.zero_based:
                    self._operator_exists(op, node, lt, T(rt.name.lstrip("_"), enum_oid=rt.enum_oid))
                right = array_exprs.elements(right, array_exprs.depth(rt.name if rt is not None else None))
            if op in _LIKE_OPS:
                fn = f"pgc_{_LIKE_NAMES[op]}_{'any' if kind == A_Expr_Kind.AEXPR_OP_ANY else 'all'}"
                self.needs.add(fn)
                return _call(fn, left, right), BOOL
            if (op == "=" and kind == A_Expr_Kind.AEXPR_OP_ANY) or (
                op in ("<>", "!=") and kind == A_Expr_Kind.AEXPR_OP_ALL
            ):
                self.needs.add("pgc_any_eq")
                found = _call("pgc_any_eq", left, right)
                if op == "=":
                    return found, BOOL
                return ast.BoolExpr(boolop=BoolExprType.NOT_EXPR, args=(found,)), BOOL
            # DuckDB's x op ANY/ALL(list) has PostgreSQL's three-valued answer except for a
            # NULL array, which it reads as an empty one
            node.lexpr, node.rexpr = left, right
            null_array = ast.NullTest(arg=copy.deepcopy(right), nulltesttype=NullTestType.IS_NULL)
            return ast.CaseExpr(args=(ast.CaseWhen(expr=null_array, result=_cast(_null(), "boolean")),), defresult=node), BOOL
        if kind in (
            A_Expr_Kind.AEXPR_IN,
            A_Expr_Kind.AEXPR_BETWEEN,
            A_Expr_Kind.AEXPR_NOT_BETWEEN,
            A_Expr_Kind.AEXPR_BETWEEN_SYM,
            A_Expr_Kind.AEXPR_NOT_BETWEEN_SYM,
        ) or (kind == A_Expr_Kind.AEXPR_OP and isinstance(node.rexpr, tuple | list)):
            left, lt = self.expr(node.lexpr, scope)
            items = [self.expr(x, scope) for x in node.rexpr]
            for x, (_, t) in zip(node.rexpr, items, strict=True):
                if kind == A_Expr_Kind.AEXPR_IN and (refusal := self._record_mismatch(node.lexpr, lt, x, t, scope, node)) is not None:
                    return refusal, BOOL
            if kind == A_Expr_Kind.AEXPR_IN and len(items) > 1 and lt is not None and not lt.is_array and lt.name in REG_TYPES.values():
                # (select_common_type: a list of several takes the left side's reg* type, so
                # its untyped literals are read by that type's input, oid::regclass IN ('a', 'b'))
                items = [
                    self.expr(ast.TypeCast(arg=x, typeName=self._catalog_type(lt.name), location=self._before_literal(node, x)), scope)
                    if _str_const(x) is not None else (done, t)
                    for x, (done, t) in zip(node.rexpr, items, strict=True)
                ]  # fmt: skip
            items = [(x, t) if (typed := self._param_as(x, left, lt, scope)) is None else (typed, lt) for x, t in items]
            if lt == UNKNOWN and _str_const(left) is not None:  # ('7' IN (a, b): read as their type)
                known = next(((x, t) for x, t in items if t is not None and t != UNKNOWN), None)
                if known is not None and (typed_pair := self._literal_typed(left, known[0], known[1], scope)) is not None:
                    left, lt = typed_pair
            compared = op if kind == A_Expr_Kind.AEXPR_IN else ("<" if "NOT" in kind.name else ">=")
            if self.infer_params:  # (x IN ($1, $2), $1 BETWEEN a AND b: of the others' type)
                known_t = lt if lt not in (None, UNKNOWN) else next((t for _, t in items if t not in (None, UNKNOWN)), None)
                for x in (left, *(x for x, _ in items)):
                    self._coerced_param(x, known_t)
            for _, t in items:  # (x IN (a, b) is x = a OR x = b when a and b share no type)
                self._operator_exists(compared if kind == A_Expr_Kind.AEXPR_IN else ">=", node, lt, t)
            self._no_json_compare(f"operator {compared}", node, lt, *(t for _, t in items[:1]))
            if lt is not None and {lt.name} | {t.name for _, t in items if t is not None} == {"time", "interval"}:
                left, lt = _time_as_interval(left, lt)  # (time IN (interval, …): as intervals)
                items = [_time_as_interval(x, t) for x, t in items]
            if is_bpchar(lt) or any(is_bpchar(t) for _, t in items):
                # each item compared on its own (x IN (a, b) is x = a OR x = b); the left
                # side once, as the first comparison that needs it unpadded has it
                paired = [unpadded_pair(left, lt, x, t, "=") for x, t in items]
                lefts = [p[0] for p in paired if p[0] is not left]
                left = lefts[0] if lefts else left
                items = [(p[2], p[3]) for p in paired]
            if (lt is not None and lt.text_numeric) or any(t is not None and t.text_numeric for _, t in items):
                left = self._numeric_key(left, lt)
                items = [(self._numeric_key(x, t), t) for x, t in items]
            if self._is_jsonb(left, lt, scope) or any(self._is_jsonb(x, t, scope) for x, t in items):
                # x IN (a, b) is x = a OR x = b: jsonb's equality (see _jsonb_compare)
                for x, t in items:
                    self._jsonb_compare("=", node, left, lt, x, t, scope)
                left = _call(jsonb_ops.UDF_SORT_KEY, self._as_jsonb(left, lt, scope))
                items = [(_call(jsonb_ops.UDF_SORT_KEY, self._as_jsonb(x, t, scope)), t) for x, t in items]
            node.lexpr = left
            node.rexpr = tuple(x for x, _ in items)
            return node, BOOL
        if kind == A_Expr_Kind.AEXPR_SIMILAR:
            return self._similar(node, op, scope), BOOL
        if kind in (A_Expr_Kind.AEXPR_OP, A_Expr_Kind.AEXPR_LIKE, A_Expr_Kind.AEXPR_ILIKE) and op in _LIKE_OPS:
            return self._like(node, op, scope), BOOL
        if kind == A_Expr_Kind.AEXPR_OP and op in ("/", "%") and not self._unfolded and _int_value(node.rexpr) == 0 and _int_value(node.lexpr) is not None:
            # PostgreSQL folds constants while planning: 1/0 fails even where no row or CASE
            # branch would evaluate it
            raise SqlError("22012", "division by zero")  # (at run time: no position)
        left, lt = self.expr(node.lexpr, scope)
        right, rt = self.expr(node.rexpr, scope)
        if kind in _COMPARING and op in _COMPARISONS and (refusal := self._record_mismatch(node.lexpr, lt, node.rexpr, rt, scope, node)) is not None:
            return refusal, BOOL
        if kind in _COMPARING and op in _COMPARISONS:
            typed = self._param_as(right, left, lt, scope)
            if typed is not None:
                right, rt = typed, lt
            typed = self._param_as(left, right, rt, scope)
            if typed is not None:
                left, lt = typed, rt
            left, right = _regproc_pair(left, lt, right, rt, self.needs)
        if left is not None and (kind in _COMPARING or (kind == A_Expr_Kind.AEXPR_OP and op in _ARITHMETIC)):
            self._operator_exists(op if kind == A_Expr_Kind.AEXPR_OP else "=", node, lt, rt)
            self._operator_params(op if kind == A_Expr_Kind.AEXPR_OP else "=", left, lt, right, rt)
            lt = self.param_inferred.get(left.number, lt) if isinstance(left, ast.ParamRef) and lt == UNKNOWN else lt
            rt = self.param_inferred.get(right.number, rt) if isinstance(right, ast.ParamRef) and rt == UNKNOWN else rt
        if kind in _COMPARING and op in _COMPARISONS and {lt and lt.name, rt and rt.name} == {"time", "interval"}:
            # time = interval compares as intervals (pg_cast's implicit time → interval)
            left, lt = _time_as_interval(left, lt)
            right, rt = _time_as_interval(right, rt)
        if kind in _COMPARING and op in _COMPARISONS and left is not None and "pg_lsn" in (lt and lt.name, rt and rt.name):
            # pg_lsn compares as the number it is (its text would put 0/10 before 0/9); a
            # quoted literal beside one is read by pg_lsn's input
            if rt == UNKNOWN and _str_const(right) is not None:
                right, rt = self._pg_lsn_const(right), T("pg_lsn")
            if lt == UNKNOWN and _str_const(left) is not None:
                left, lt = self._pg_lsn_const(left), T("pg_lsn")
            if lt is not None and rt is not None and lt.name == rt.name == "pg_lsn":
                left, right = _lsn_int(left), _lsn_int(right)
        if kind == A_Expr_Kind.AEXPR_OP and left is not None and (reads := _unknown_operand_type(op, lt if rt == UNKNOWN else rt)):
            # a quoted literal beside a number (a date, time or timestamp minus one) is
            # PostgreSQL's operator between two of that type: the literal is read as one;
            # beside a time or timestamp plus, an interval times, the other operand's type
            if rt == UNKNOWN and _str_const(right) is not None and (typed_pair := self._literal_read(right, reads, left, lt, scope)) is not None:
                right, rt = typed_pair
            elif lt == UNKNOWN and _str_const(left) is not None and (typed_pair := self._literal_read(left, reads, right, rt, scope)) is not None:
                left, lt = typed_pair
        if op in _COMPARISONS:  # (IS DISTINCT FROM and NULLIF compare with = too)
            self._no_json_compare(f"operator {op}", node, lt, rt)
            if kind == A_Expr_Kind.AEXPR_OP and left is not None and (
                self._is_jsonb(left, lt, scope) or self._is_jsonb(right, rt, scope)
            ):
                return self._jsonb_compare(op, node, left, lt, right, rt, scope), BOOL
        if kind == A_Expr_Kind.AEXPR_OP and op in json_exprs.OPERATORS:
            done = json_exprs.operator(_JsonHost(self, scope), op, node, left, lt, right, rt)
            if done is not None:
                return done[0], T(done[1])
        if kind == A_Expr_Kind.AEXPR_OP and op in ("-", "#-") and left is not None and self._is_jsonb(left, lt, scope):
            return self._jsonb_delete(op, node, left, right, rt), T("jsonb")
        if kind == A_Expr_Kind.AEXPR_OP and op in ("?", "?|", "?&") and self._is_jsonb(left, lt, scope):
            return self._jsonb_exists(op, node, left, lt, right, rt, scope), BOOL
        if kind == A_Expr_Kind.AEXPR_OP and op in _UNSUPPORTED_JSON_OPS:
            # DuckDB's parser has no such operators: its 42601 would blame the syntax
            raise self.fail("0A000", f"operator {op} is not supported", node)
        if kind == A_Expr_Kind.AEXPR_OP and op in ("@>", "<@") and (
            self._is_jsonb(left, lt, scope) or self._is_jsonb(right, rt, scope)
        ):
            a, b = (self._as_jsonb(left, lt, scope), self._as_jsonb(right, rt, scope))
            if op == "<@":
                a, b = b, a
            return _call(jsonb_ops.UDF_CONTAINS, a, b), BOOL
        if op not in _PADDED_OPS:
            left, lt, right, rt = unpadded_pair(left, lt, right, rt, op)
        if kind == A_Expr_Kind.AEXPR_NULLIF:
            if (lt is not None and lt.text_numeric) or (rt is not None and rt.text_numeric):
                # NULLIF(a, b) is CASE WHEN a = b THEN NULL ELSE a END, compared as numbers
                same = _op("=", self._numeric_key(left, lt), self._numeric_key(right, rt))
                value = numeric_exprs.as_text(_operand(copy.deepcopy(left), lt))
                return ast.CaseExpr(args=(ast.CaseWhen(expr=same, result=_cast(_null(), "varchar")),), defresult=value), NUMERIC_TEXT
            node.lexpr, node.rexpr = left, right
            return node, lt
        if kind == A_Expr_Kind.AEXPR_OP and op == "~" and node.lexpr is None:
            if rt is None or rt.name not in numeric_exprs.INTEGERS:
                raise self.fail("0A000", "operator ~ of this type is not supported by walsender-proxy", node)
            return _cast(_call("xor", right, _int(-1)), _duck_type(rt.name, None)), rt  # (bitwise NOT)
        if kind == A_Expr_Kind.AEXPR_OP and op in ("<<", ">>") and lt is not None and rt is not None and lt.name in ("int2", "int4", "int8") and rt.name in ("int2", "int4", "int8"):
            if rt.name == "int8":  # (the count is int4; bigint does not cast to it implicitly)
                raise self.fail(
                    "42883", f"operator does not exist: {_type_display(lt)} {op} {_type_display(rt)}", node,
                    hint="No operator matches the given name and argument types. You might need to add explicit type casts.",
                )
            return _shift(op, left, lt.name, right), lt
        if kind == A_Expr_Kind.AEXPR_OP and op == "#" and lt is not None and rt is not None and lt.name in numeric_exprs.INTEGERS and rt.name in numeric_exprs.INTEGERS:
            return _call("xor", left, right), _arith(lt, rt)  # (integer XOR; DuckDB has no #)
        if kind == A_Expr_Kind.AEXPR_OP and op in ("-", "@") and node.lexpr is None and rt is not None and rt.name in ("int2", "int4", "int8"):
            fn = f"pgc_{'neg' if op == '-' else 'abs'}_{rt.name}"
            self.needs.add(fn)
            return _call(fn, right), rt
        if kind == A_Expr_Kind.AEXPR_OP:
            floating = self._floats(float_exprs.operator, node, op, None if left is None else _operand(left, lt), _operand(right, rt))
            if floating is not None:
                return floating
        if kind == A_Expr_Kind.AEXPR_OP and op in numeric_exprs.OPERATORS:
            numeric = self._numeric_operator(op, node, left, lt, right, rt)
            if numeric is not None:
                return numeric
        if (lt is not None and lt.text_numeric) or (rt is not None and rt.text_numeric):
            if kind != A_Expr_Kind.AEXPR_OP or op in ("=", "<>", "!=", "<", ">", "<=", ">="):
                node.lexpr, node.rexpr = self._numeric_key(left, lt), self._numeric_key(right, rt)
                return node, BOOL  # (and IS [NOT] DISTINCT FROM)
            if op != "||":  # (|| takes the value's text, as PostgreSQL's output function prints it)
                self._no_text_numeric(f"operator {op}", node, lt, rt)
        if kind == A_Expr_Kind.AEXPR_OP:
            if left is not None:
                # a '{…}' literal compared with an array is an array
                if lt is not None and lt.is_array and _str_const(right) is not None:
                    right = self._array_literal(_str_const(right) or "", lt, right, whole=True)
                    rt = lt if op == "||" else rt  # (array || '{…}' is array_cat)
                elif rt is not None and rt.is_array and _str_const(left) is not None:
                    left = self._array_literal(_str_const(left) or "", rt, left, whole=True)
                    lt = rt if op == "||" else lt
            if op == "||" and ((lt and lt.is_array) or (rt and rt.is_array)):
                self._one_numeric_scale(node, [lt.elem if lt and lt.is_array else lt, rt.elem if rt and rt.is_array else rt], (lt, rt))
                ka, kb = array_exprs.depth(lt.name if lt else None), array_exprs.depth(rt.name if rt else None)
                if lt and lt.is_array and rt and rt.is_array:
                    if lt.zero_based or rt.zero_based or lt.name in _VECTORS or rt.name in _VECTORS:
                        self.needs.add("pgc_array_cat")
                        return _call("pgc_array_cat", left, right), lt
                    joined, macro = array_exprs.concat(left, right, ka, kb)
                    self.needs.add(macro)
                    return joined, _array_of_common(lt, rt) if ka >= kb else _array_of_common(rt, lt, array_first=False)
                if ka > 1 or kb > 1:  # (array_append/array_prepend of a multidimensional array)
                    refused, macro = array_exprs.append_nested(left if ka > 1 else right)
                    self.needs.add(macro)
                    return refused, lt if ka > 1 else rt
                if lt and lt.is_array:
                    return _call("list_append", left, right), _array_of_common(lt, rt)
                return _call("list_prepend", left, right), _array_of_common(rt, lt, array_first=False)
            if op in ("<", ">", "<=", ">=", "=", "<>", "!=") and lt is not None and rt is not None and lt.is_array and rt.is_array:
                keyed = self._array_order(op, node, left, lt, right, rt)
                if keyed is not None:
                    left, right = keyed
            node.lexpr, node.rexpr = left, right
            if op in ("~", "!~", "~*", "!~*") and left is not None:
                # PostgreSQL's ARE, not RE2's syntax and matching (pg_regex)
                if not all(t is None or t.name in TEXTISH for t in (lt, rt)):
                    raise self.fail(
                        "42883", f"operator does not exist: {_type_display(lt)} {op} {_type_display(rt)}", node,
                        hint="No operator matches the given name and argument types. You might need to add explicit type casts.",
                    )  # fmt: skip
                return regex_funcs.match_call(left, right, op), BOOL
            if op in (
                "=",
                "<>",
                "!=",
                "<",
                ">",
                "<=",
                ">=",
                "~",
                "!~",
                "~*",
                "!~*",
                "~~",
                "!~~",
                "~~*",
                "!~~*",
            ):
                return node, BOOL
            if op in ("@>", "<@", "&&"):
                if op == "&&":
                    self.needs.add("pgc_arr_overlap")
                    return _call("pgc_arr_overlap", left, right), BOOL
                self.needs.add("pgc_arr_contains")
                return _call("pgc_arr_contains", *((left, right) if op == "@>" else (right, left))), BOOL
            for same in ("jsonb", "bytea"):  # (jsonb || jsonb, bytea || bytea; an unknown literal is their input)
                if op == "||" and lt is not None and rt is not None and same in (lt.name, rt.name) and not (lt.is_array or rt.is_array):
                    (a, at), (b, bt) = _unknown_as(left, lt, same), _unknown_as(right, rt, same)
                    if at.name == bt.name == same and same == "jsonb":
                        return _call(jsonb_ops.UDF_CONCAT, a, b), at
                    if at.name == bt.name == same:
                        node.lexpr, node.rexpr = a, b
                        return node, at
            if op == "||":
                if (
                    lt is not None and rt is not None and lt.name not in TEXTISH and rt.name not in TEXTISH
                    and not (lt.name == rt.name and lt.name in ("bytea", "jsonb", "bit", "varbit", "tsvector"))
                ):  # (PostgreSQL's || takes text on one side at least: anynonarray || text)
                    raise self.fail(
                        "42883", f"operator does not exist: {_type_display(lt)} || {_type_display(rt)}", node,
                        hint="No operator matches the given name and argument types. You might need to add explicit type casts.",
                    )
                if lt is not None and lt.name == "numeric" and not lt.text_numeric:
                    node.lexpr = numeric_exprs.decimal_text(left)
                if rt is not None and rt.name == "numeric" and not rt.text_numeric:
                    node.rexpr = numeric_exprs.decimal_text(right)
                node.lexpr, node.rexpr = float_exprs.printed(node.lexpr, lt and lt.name), float_exprs.printed(node.rexpr, rt and rt.name)
                # (a whole-row reference: record_out's text; other untyped sides as they are)
                if lt is None and (row := self._whole_row_text(node.lexpr, scope)) is not None:
                    node.lexpr = row
                if rt is None and (row := self._whole_row_text(node.rexpr, scope)) is not None:
                    node.rexpr = row
                # (the other side's cast to text: its output function; bool's says true/false)
                if lt is not None and not lt.is_array and lt.name in literals.PRINTED_BY_OUTPUT:
                    node.lexpr = _printed(node.lexpr, lt)
                if rt is not None and not rt.is_array and rt.name in literals.PRINTED_BY_OUTPUT:
                    node.rexpr = _printed(node.rexpr, rt)
                return node, TEXT
            if op in ("^", "|/", "||/"):  # float8's (numeric's ^ is handled above)
                return node, T("float8")
            if op in ("+", "-") and "pg_lsn" in (lt and lt.name, rt and rt.name):
                return self._lsn_arith(node, op, left, lt, right, rt)
            dated = _datetime_arith(op, lt, rt)
            if dated is not None and dated.name == "interval" and op == "-" and "timestamptz" in (lt and lt.name, rt and rt.name):
                node = session_zone.instant_difference(node)
            if dated is not None and dated.name == "interval" and op == "/" and rt is not None and rt.name != "interval":
                # interval_div by a double (DuckDB's integer division has no interval form);
                # its cascade of fractional months and days is PostgreSQL's
                self.needs.add("pgc_interval_div")
                node = _call("pgc_interval_div", node.lexpr, _cast(node.rexpr, "DOUBLE"))
            if dated is not None and dated.name == "interval":
                # (a time part past Arrow's int64 nanoseconds would reach the client wrapped)
                self.needs.add("pgc_interval_guard")
                return _call("pgc_interval_guard", node), dated
            if dated is not None and dated.name == "timestamptz" and op in ("+", "-") and "interval" in (lt and lt.name, rt and rt.name):
                # (PostgreSQL's order of the interval's parts, not ICU's)
                self.needs.add("pgc_tstz_pl_interval")
                stamp, span = (node.lexpr, node.rexpr) if rt is not None and rt.name == "interval" else (node.rexpr, node.lexpr)
                span = _cast(span, "INTERVAL")  # (a parameter's NULL at Describe has no type of its own)
                if op == "-":
                    span = ast.A_Expr(kind=A_Expr_Kind.AEXPR_OP, name=(_s("-"),), rexpr=span)
                node = _call("pgc_tstz_pl_interval", _cast(stamp, "TIMESTAMPTZ"), span)
            if dated is not None and dated.name in ("date", "timestamp", "timestamptz"):
                # (date ± integer, ± interval: DuckDB's go before PostgreSQL's first)
                guard = "pgc_date_guard" if dated.name == "date" else "pgc_timestamp_guard"
                self.needs.add(guard)
                return _call(guard, node), dated
            if dated is not None:
                return node, dated
            return node, _arith(lt, rt)
        node.lexpr, node.rexpr = left, right
        return node, BOOL

    def _like(self, node: ast.A_Expr, op: str, scope: _Scope) -> ast.Node:
        """LIKE / ILIKE with PostgreSQL's escape: a backslash unless ``ESCAPE`` names another
        character (or none, ``ESCAPE ''``); DuckDB's plain LIKE has no escape character."""
        pattern, escape = node.rexpr, _str("\\")
        if isinstance(pattern, ast.FuncCall) and pattern.funcname[-1].sval == "like_escape" and len(pattern.args or ()) == 2:
            pattern, escape = pattern.args
        if op in ("~~*", "!~~*"):  # ILIKE: LIKE of both sides lowered as the C locale lowers
            op = "~~" if op == "~~*" else "!~~"
            node.name = (_s(op),)
            node.lexpr = ast.FuncCall(funcname=(_s("lower"),), args=(node.lexpr,))
            pattern = ast.FuncCall(funcname=(_s("lower"),), args=(pattern,))
            node.rexpr = pattern
        left, lt = self.expr(node.lexpr, scope)
        if lt is not None and lt.text_numeric:
            self._no_text_numeric(f"operator {op}", node, lt)
        if lt is not None and lt.enum_oid:  # (no LIKE takes an enum: no implicit cast to text)
            raise self.fail("42883", f"operator does not exist: {_type_display(lt)} {op} {_type_display(self.expr(copy.deepcopy(pattern), scope)[1])}", node,
                            hint="No operator matches the given name and argument types. You might need to add explicit type casts.")  # fmt: skip
        if lt is not None and lt.name == "bytea" and op in ("~~", "!~~"):  # bytealike: byte by byte
            explicit = isinstance(node.rexpr, ast.FuncCall) and node.rexpr.funcname[-1].sval == "like_escape"
            (pat, pt), (esc_node, et) = self.expr(pattern, scope), self.expr(escape if explicit else _str("\\x5c"), scope)
            if explicit and pt == UNKNOWN and et == UNKNOWN:  # (like_escape(text, text) wins: bytea ~~ text)
                pt = TEXT
            pat, pt = _unknown_as(pat, pt or UNKNOWN, "bytea") if pt in (None, UNKNOWN) else (pat, pt)
            esc_node, et = _unknown_as(esc_node, et or UNKNOWN, "bytea") if et in (None, UNKNOWN) else (esc_node, et)
            if pt.name != "bytea" or et.name != "bytea":
                shown = _type_display(pt if pt.name != "bytea" else TEXT)
                raise self.fail("42883", f"operator does not exist: bytea {op} {shown}", node,
                                hint="No operator matches the given name and argument types. You might need to add explicit type casts.")  # fmt: skip
            liked: ast.Node = _call(bytea_text.LIKE_UDF, left, pat, esc_node)
            return ast.BoolExpr(boolop=BoolExprType.NOT_EXPR, args=(liked,)) if op == "!~~" else liked
        plain = _str_const(pattern)
        right = self.expr(pattern, scope)[0]
        if plain is not None and "\\" not in plain and escape is not node.rexpr and isinstance(node.rexpr, ast.A_Const):
            # a constant pattern with nothing to escape: DuckDB's own LIKE (its prefix and
            # suffix shortcuts) answers the same
            node.lexpr, node.rexpr = left, right
            return node
        esc = self.expr(escape, scope)[0]
        fn = "ilike_escape" if op in ("~~*", "!~~*") else "like_escape"
        out: ast.Node = _call(fn, left, right, esc)
        if op.startswith("!"):
            out = ast.BoolExpr(boolop=BoolExprType.NOT_EXPR, args=(out,))
        return out
    def _floats(self, fn: Callable[..., tuple[ast.Node, str] | None], node: ast.Node, *args: Any) -> tuple[ast.Node, T] | None:
        """A float operator, function or cast as PostgreSQL computes it (float_exprs)."""
        try:
            out = fn(*args)
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, node, hint=e.hint) from None
        return None if out is None else (out[0], T(out[1]))

    def _numeric_operator(
        self, op: str, node: ast.A_Expr, left: Any, lt: T | None, right: Any, rt: T | None
    ) -> tuple[ast.Node, T] | None:
        """``left op right`` when PostgreSQL resolves it to numeric's operator (exact, through
        numeric_math); a numeric operand meeting a float8 one becomes a float8. None when
        the operator is not numeric's."""
        operands = [_operand(right, rt)] if left is None else [_operand(left, lt), _operand(right, rt)]
        if left is None and not operands[0].text:
            return None  # DuckDB negates integers and DECIMALs exactly
        if any(o.is_numeric for o in operands) and any(o.type in numeric_exprs.FLOATS for o in operands):
            # numeric ⊕ float8 is float8's operator (numeric casts implicitly to float8)
            if left is not None:
                node.lexpr = _cast(left, "double")
            node.rexpr = _cast(right, "double")
            return node, T("float8")
        if not numeric_exprs.is_numeric_operation(operands):
            return None
        try:
            return numeric_exprs.operator(op, operands[0] if left is not None else None, operands[-1]), NUMERIC_TEXT
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, node) from None

    def _param_as(
        self, param: ast.Node, other: ast.Node, other_t: T | None, scope: _Scope, *, array: bool = False
    ) -> ast.Node | None:
        """An unknown-typed ``$n`` (bound as text, no type at Parse) compared with a value of
        a known type takes that type, as PostgreSQL's parse analysis resolves it: its text
        goes through the type's input function (``ts > $1`` with '2024-02-01 00:00:00+00',
        ``id = ANY($1)`` with '{1,2,3}' as int4[]). So does a quoted literal compared with a
        date, time or timestamp (:meth:`_literal_as`). None when that does not apply."""
        if isinstance(param, ast.RowExpr) and isinstance(other, ast.RowExpr) and not array:
            return self._row_as(param, other, scope)
        if other_t is not None and other_t.enum_oid and not other_t.domain_oid and (en := enum_casts.by_oid(other_t.enum_oid)) is not None:
            # (an unknown literal or a text parameter beside an enum is read by enum_in)
            if _str_const(param) is not None or (isinstance(param, ast.ParamRef) and param.number not in self.param_types and not self.infer_params):
                return self._as_enum(param, en, other_t.is_array or array, scope)[0]
            return None
        if other_t is not None and other_t.name == "name" and not other_t.is_array and not array:
            # (name's comparison operators: an unknown literal or text parameter is read by
            # namein, cut to 63 bytes at a character's end)
            if (text := _str_const(param)) is not None:
                return _str(name_in(text)) if len(text.encode()) > NAME_BYTES else None
            if self._untyped_param(param) and not self.infer_params:
                self.needs.add("pgc_name_in")
                return _call("pgc_name_in", _cast(param, "VARCHAR"))
        if other_t is not None and other_t.name in _OID_INPUT_TYPES and not other_t.is_array and not array and _str_const(param) is not None:
            # (the reg* types compare as oids: an untyped literal beside one, an oid or an xid
            # is read by oid's or xid's input)
            return self.expr(ast.TypeCast(arg=param, typeName=self._catalog_type("xid" if other_t.name == "xid" else "oid")), scope)[0]
        if _str_const(param) is not None and not array:
            return self._literal_as(param, other, other_t, scope)
        if not isinstance(param, ast.ParamRef) or param.number not in self.text_params:
            return None
        if param.number in self.param_types:
            return None
        src = self._lake_source(other, other_t, scope)
        if src is None or src.base.name in ("text", "varchar", "bpchar", "name", "unknown"):
            return None
        if array and src.is_array:
            return None
        cast = ast.TypeCast(
            arg=param,
            typeName=ast.TypeName(
                names=(_s("pg_catalog"), _s(src.base.name)),
                typemod=-1,
                arrayBounds=(ast.Integer(ival=-1),) if array or src.is_array else None,
            ),
        )
        return self.expr(cast, scope)[0]

    def _untyped_param(self, node: ast.Node) -> bool:
        """Whether ``node`` is a ``$n`` of no type the server knows, bound as text: PostgreSQL
        gave it the type its context wants at Parse, as it does an unknown literal."""
        return isinstance(node, ast.ParamRef) and node.number in self.text_params and node.number not in self.param_types

    def _unknown_args(self, name: str, pairs: list[tuple[ast.Node, T | None]]) -> list[tuple[ast.Node, T | None]]:
        """Quoted literals among the arguments PostgreSQL resolves to one type with another
        argument (``generate_series(ts, '…', '1 day')``, ``lag(d, 1, '…')``) or to the
        element type of an array argument (``array_position(dates, '…')``), read as that
        type when it is a date, time or timestamp (:meth:`_unknowns_as`)."""
        same = _SAME_TYPE_ARGS.get(name)
        if name == "generate_series" and len(pairs) == 3 and pairs[0][1] == UNKNOWN and pairs[1][1] == UNKNOWN and pairs[2][1] is not None and pairs[2][1].name == "interval":
            # (two unknowns and an interval: the timestamptz form, the preferred type's)
            pairs[:2] = self._unknowns_as(pairs[:2], T("timestamptz"))
        if name == "generate_series" and len(pairs) == 3 and pairs[2][1] == UNKNOWN and isinstance(pairs[2][0], ast.A_Const):
            # an unknown step takes the type of the form the bounds chose (its input function's errors)
            bound = next((t for _, t in pairs[:2] if t is not None and t != UNKNOWN), None)
            step = "interval" if bound is not None and bound.name in ("timestamp", "timestamptz") else (
                "int4" if bound is not None and bound.name == "int2" else bound.name if bound is not None and bound.name in ("int4", "int8", "numeric") else None)
            if step is not None:
                typed = ast.TypeCast(arg=pairs[2][0], typeName=ast.TypeName(names=(_s("pg_catalog"), _s(step)), typemod=-1), location=getattr(pairs[2][0], "location", None))
                pairs[2] = self.expr(typed, _Scope(None))
        if same is not None and len(pairs) > max(same):
            typed = self._unknowns_as([pairs[i] for i in same], _common([pairs[i][1] for i in same]))
            for i, pair in zip(same, typed, strict=True):
                pairs[i] = pair
        elements = _ELEMENT_ARGS.get(name)
        if elements is not None and len(pairs) > max(elements[0], *elements[1]):
            at = pairs[elements[0]][1]
            if at is not None and at.is_array:
                typed = self._unknowns_as([pairs[i] for i in elements[1]], at.elem)
                for i, pair in zip(elements[1], typed, strict=True):
                    pairs[i] = pair
        return pairs

    def _row_as(self, row: ast.RowExpr, other: ast.RowExpr, scope: _Scope) -> ast.Node | None:
        """``(d, 1) = ('01/02/03', 1)``: a row compared with a row compares element by element,
        each quoted literal taking its counterpart's type as in a comparison of the two
        (:meth:`_param_as`); None when no element changes."""
        mine, theirs = self._row_types.get(id(row)), self._row_types.get(id(other))
        if mine is None or theirs is None or len(row.args or ()) != len(other.args or ()):
            return None
        args = list(row.args)
        changed = False
        for i, (a, b) in enumerate(zip(row.args, other.args, strict=True)):
            typed = self._param_as(a, b, theirs[i], scope) if mine[i] == UNKNOWN or mine[i] is None else None
            if typed is not None:
                args[i], mine[i], changed = typed, theirs[i], True
        if not changed:
            return None
        row.args = tuple(args)
        return row

    def _literal_as(self, lit: ast.Node, other: ast.Node, other_t: T | None, scope: _Scope) -> ast.Node | None:
        """A quoted literal compared with a value of a known type (``d = '01/02/03'``,
        ``id IN ('7', '8')``) read as PostgreSQL reads it, by that type's input function
        (:meth:`_literal_typed`); None where the literal stays as it is."""
        typed = self._literal_typed(lit, other, other_t, scope)
        return None if typed is None else typed[0]

    def _literal_read(self, lit: ast.Node, as_type: str, other: ast.Node, other_t: T | None, scope: _Scope) -> tuple[ast.Node, T | None] | None:
        """A quoted literal read as ``as_type``: the other operand's own type (without its
        modifier, :meth:`_literal_typed`) or another one its operator takes."""
        if other_t is not None and as_type == other_t.name:
            return self._literal_typed(lit, other, other_t, scope)
        name = ast.TypeName(names=(_s("pg_catalog"), _s(as_type)), typemod=-1)
        return self.expr(ast.TypeCast(arg=lit, typeName=name), scope)

    def _literal_typed(self, lit: ast.Node, other: ast.Node, other_t: T | None, scope: _Scope) -> tuple[ast.Node, T | None] | None:
        """A quoted literal meeting a value of a known type in an operator PostgreSQL
        resolves to that type on both sides: the literal read by the type's input function
        without the other's type modifier (``n = '1.555'`` compares 1.555 with a
        numeric(10,2) column, where DuckDB's cast would round it to the column's scale; '1.5'
        is no integer; dates in the DateStyle order). None for string types, json and
        arrays, whose literals stay as they are."""
        src = self._lake_source(other, other_t, scope)
        if src is None or src.is_array or (other_t is not None and other_t.text_numeric):
            return None  # (an unconstrained numeric held as text compares by its own key)
        bare = ColumnType(src.base)
        if not (literals.reads_by_input(bare) or bare.base.name == "numeric"):
            return None
        text = _str_const(lit)
        if bare.base.name == "uuid" and text is not None:
            # uuid's input (its errors, its canonical text) as a plain string constant, which
            # DuckDB takes as a UUID beside a column and as text beside a cast value
            try:
                canonical = literals.unknown_literal(text, bare)
            except PgError as e:
                raise self.fail(e.sqlstate, e.message, lit) from None
            return (canonical.arg if isinstance(canonical, ast.TypeCast) else canonical), T("uuid")
        name = ast.TypeName(names=(_s("pg_catalog"), _s(src.base.name)), typemod=-1)
        return self.expr(ast.TypeCast(arg=lit, typeName=name), scope)

    def _num_nulls(self, name: str, node: ast.FuncCall, scope: _Scope) -> tuple[ast.Node, T | None]:
        """num_nulls / num_nonnulls (VARIADIC "any"): how many arguments are (not) NULL; with
        VARIADIC, how many elements of the array (NULL for a NULL array)."""
        if not node.args:
            raise self.fail("42883", f"function {name}() does not exist", node,
                            hint="No function matches the given name and argument types. You might need to add explicit type casts.")
        if node.func_variadic:
            arr, at = self.expr(node.args[-1], scope)
            if at is not None and at != UNKNOWN and not at.is_array:
                raise self.fail("42804", "VARIADIC argument must be an array", node.args[-1])
            macro = f"pgc_{name}_array"
            self.needs.add(macro)
            return _call(macro, arr), T("int4")  # (a NULL array: len(NULL) is NULL)
        total: ast.Node | None = None
        for a in node.args:
            value, _ = self.expr(a, scope)
            test = ast.NullTest(arg=value, nulltesttype=NullTestType.IS_NULL if name == "num_nulls" else NullTestType.IS_NOT_NULL)
            one = _cast(test, "integer")
            total = one if total is None else _op("+", total, one)
        assert total is not None
        return _cast(total, "integer"), T("int4")

    def _format_argument(self, text: ast.Node, kind: str) -> ast.Node:
        """One of format()'s arguments (its text) as specifier ``kind`` prints it: %s NULL as
        nothing, %L by quote_literal (NULL unquoted), %I by quote_ident (22004 for NULL)."""
        if kind == "s":
            return ast.CoalesceExpr(args=(copy.deepcopy(text), _str("")))
        if kind == "L":
            self.needs.add("pgc_quote_literal")
            return ast.CoalesceExpr(args=(_call("pgc_quote_literal", _cast(copy.deepcopy(text), "varchar")), _str("NULL")))
        self.needs.add("pgc_quote_ident")
        null = ast.NullTest(arg=copy.deepcopy(text), nulltesttype=NullTestType.IS_NULL)
        refuse = _call("error", _str("PGERR[22004] null values cannot be formatted as an SQL identifier"))
        return ast.CaseExpr(args=(ast.CaseWhen(expr=null, result=_cast(refuse, "varchar")),), defresult=_call("pgc_quote_ident", _cast(copy.deepcopy(text), "varchar")))

    def _record_mismatch(self, left: ast.Node, lt: T | None, right: ast.Node, rt: T | None, scope: _Scope, at: ast.A_Expr) -> ast.Node | None:
        """A composite value (``left`` and ``right`` as written) compared with a quoted
        literal or an anonymous ``ROW(…)`` is record's comparison: the literal would be
        an anonymous record's input (0A000), and record_eq (or record_cmp) refuses columns
        of different types or numbers at the first row it compares (42804). That error,
        raised as each row is compared (no row, no error, as in PostgreSQL); None when the
        comparison is not one of these or is fine."""
        composite = [self._composite_columns(left, lt, scope), self._composite_columns(right, rt, scope)]
        if (composite[0] is None) == (composite[1] is None):
            return None  # (two values of composite types, or none)
        other = right if composite[0] is not None else left
        if _str_const(other) is not None:
            raise SqlError("0A000", "input of anonymous composite types is not implemented", self._operand_literal_pos(at, other is right, _str_const(other)))
        row = self._row_expr_columns(other)
        if row is None:
            return None
        mine, theirs = (composite[0], row) if composite[0] is not None else (row, composite[1])
        mine, theirs = mine or [], theirs or []
        if len(mine) != len(theirs):
            message = "cannot compare record types with different numbers of columns"
        else:
            bad = next(((i, a, b) for i, (a, b) in enumerate(zip(mine, theirs, strict=True)) if a and b and a != b), None)
            if bad is None:
                return None
            i, a, b = bad
            message = f"cannot compare dissimilar column types {a} and {b} at record column {i + 1}"
        return _cast(_call("error", _str(f"PGERR[42804] {message}")), "BOOLEAN")

    def _composite_columns(self, node: ast.Node, t: T | None, scope: _Scope) -> list[str | None] | None:
        """The column types (as format_type names them; None where not told) of a value of
        a composite type, or of a whole-row reference to a relation (``t1 = …``); None
        for anything else."""
        if t is not None and t.row_oid and not t.is_array:
            rt = composite_values.by_oid(t.row_oid)
            if rt is None:
                return None
            oids = [composite_values.declared_oid(ct) for _, ct in rt.fields]
            return [None if o >= FIRST_USER_OID else pgcatalog_defs.format_type(o, None) for o in oids]
        found = _whole_row(node, scope)
        if found is None:
            return None
        cols = _rel_types(found[2])
        return [self._shown_column_type(ct) for _, ct in cols] if cols else None

    @staticmethod
    def _shown_column_type(t: T | None) -> str | None:
        if t is None or t.row_oid or t.enum_oid or t.domain_oid:
            return None
        return "unknown" if t == UNKNOWN else _type_display(replace(t, typmod=-1))  # (record_eq compares type OIDs)

    def _row_expr_columns(self, node: ast.Node) -> list[str | None] | None:
        """The column types of an anonymous ``ROW(…)`` (rewritten already), or None."""
        types = self._row_types.get(id(node)) if isinstance(node, ast.RowExpr) else None
        return None if types is None else [self._shown_column_type(x) for x in types]

    def _operator_exists(self, op: str, node: Any, lt: T | None, rt: T | None) -> None:
        """PostgreSQL's refusal of an operator between two typed values it has none for
        (``1 = 'a'::text`` is 42883, where DuckDB would cast one side), from the dump of
        its resolutions; pairs outside the dump are left to the translation."""
        if lt is None or rt is None:
            return
        if (lt.enum_oid or rt.enum_oid) and ((UNKNOWN not in (lt, rt) and not _enum_operator(op, lt, rt)) or _enum_domain(lt) or _enum_domain(rt)):
            raise self.fail("42883", f"operator does not exist: {_type_display(lt)} {'<>' if op == '!=' else op} {_type_display(rt)}", node, hint="No operator matches the given name and argument types. You might need to add explicit type casts.")
        if lt.is_array or rt.is_array:
            self._array_operator_exists(op, node, lt, rt)
            return
        key = ("<>" if op == "!=" else op, lt.name, rt.name)
        if "xid" in key[1:] and not (key[0] in ("=", "<>") and lt.name == "xid" and rt.name in ("xid", "int4", "int2", "unknown")):
            # (xid has = and <> with xid and int4 only: no ordering, no arithmetic)
            raise self.fail("42883", f"operator does not exist: {_type_display(lt)} {key[0]} {_type_display(rt)}", node, hint="No operator matches the given name and argument types. You might need to add explicit type casts.")
        resolved = coercion_data.COMPARISONS.get(key) or coercion_data.OPERATORS.get(key)
        if resolved is not None and resolved[0] == "error":
            _, sqlstate, message, hint = resolved
            raise self.fail(sqlstate, message, node, hint=hint)

    def _array_operator_exists(self, op: str, node: Any, lt: T, rt: T) -> None:
        """The same for arrays (pg_operator's anyarray and anycompatible operators):
        comparisons need one array type on both sides, ``||`` elements of one common type,
        arithmetic has none; only pairs of types common_type knows are judged."""
        if op not in _ARITHMETIC and (UNKNOWN in (lt, rt) or op not in (*_COMPARISONS, "||")):
            return  # (arithmetic on an array is refused whatever the other side)
        elems = [t.name.lstrip("_") for t in (lt, rt)]  # (an array of any dimension: its element type)
        if op in _ARITHMETIC and any(e in ("json", "jsonb") for e in elems):
            return  # (jsonb - text[] deletes keys)
        if op not in _ARITHMETIC and (lt.zero_based or rt.zero_based or any(common_type.category(e) is None for e in elems)):
            return
        if op == "||":
            try:
                common_type.select_common(elems)
                return
            except (common_type.Mismatch, common_type.NoConversion):
                pass
        elif op in _COMPARISONS and lt.is_array and rt.is_array and elems[0] == elems[1]:
            return
        raise self.fail(
            "42883", f"operator does not exist: {_type_display(lt)} {'<>' if op == '!=' else op} {_type_display(rt)}", node,
            hint="No operator matches the given name and argument types. You might need to add explicit type casts.",
        )

    def _select_common(self, context: str, items: Sequence[tuple[Any, T | None]]) -> T | None:
        """PostgreSQL's common type of ``items`` ((the branch as written, its type), in
        PostgreSQL's order) with its errors (42804, 42846), or None when a type is not one
        common_type knows. The type modifier stays when every branch has the same one."""
        if any(t is not None and t.enum_oid for _, t in items):
            return self._enum_common(context, items)
        # (a $n is resolved by its context, as PostgreSQL infers it at Parse)
        names = ["unknown" if isinstance(w, ast.ParamRef) else None if t is None else t.name for w, t in items]
        try:
            name = common_type.select_common(names)
        except common_type.Mismatch as m:
            raise self.fail(
                "42804", f"{context} types {_type_display(T(m.first))} and {_type_display(T(m.second))} cannot be matched", items[m.index][0]
            ) from None
        except common_type.NoConversion as m:
            raise self.fail(
                "42846", f"{context} could not convert type {_type_display(T(m.source))} to {_type_display(T(m.target))}", items[m.index][0]
            ) from None
        if name is None:
            return None
        first = items[0][1] if items else None
        if first is not None and first.domain_oid and all(
            not isinstance(w, ast.ParamRef) and t is not None and t == first and t.domain_oid == first.domain_oid for w, t in items
        ):
            return first  # (exactly one type throughout, a domain: the only way the result is one)
        for w, _ in items:  # (an unknown $n among the branches takes their common type)
            self._coerced_param(w, T(name))
        typmods = {-1 if t is None or t.name != name else t.typmod for _, t in items}
        return T(name, typmod=typmods.pop() if len(typmods) == 1 else -1)

    def _enum_common(self, context: str, items: Sequence[tuple[Any, T | None]]) -> T | None:
        """The common type of branches among which an enum is: that enum, when every other
        branch is an unknown literal or parameter (no implicit cast leads to or from an
        enum); else 42804 naming the first two types that differ."""
        first: T | None = None
        for w, t in items:
            if isinstance(w, ast.ParamRef) or t == UNKNOWN:
                continue
            if t is None:
                return None
            if first is None:
                first = t
            elif t != first:
                raise self.fail("42804", f"{context} types {_type_display(first)} and {_type_display(t)} cannot be matched", w)
        return first

    def _common_branches(
        self, context: str, written: Sequence[Any], pairs: Sequence[tuple[ast.Node, T | None]], order: Sequence[int] | None = None
    ) -> tuple[list[tuple[ast.Node, T | None]], T | None]:
        """The branches of one result resolved as PostgreSQL resolves them: their common
        type (``order``: the branches' indexes in PostgreSQL's order, CASE's ELSE first),
        character(n) values losing their padding when it is another string type. The
        type is None when common_type does not know one of the branches' types."""
        idx = list(order) if order is not None else list(range(len(pairs)))
        common = self._select_common(context, [(written[i], pairs[i][1]) if i >= 0 else (None, UNKNOWN) for i in idx])
        if common is None or common.name not in ("text", "varchar", "name"):
            return list(pairs), common
        return [unpadded(n, t) if is_bpchar(t) else (n, t) for n, t in pairs], common

    def _unknowns_as(self, pairs: Sequence[tuple[ast.Node, T | None]], to: T | None) -> list[tuple[ast.Node, T | None]]:
        """Quoted literals among values resolved to one type ``to`` (CASE arms, COALESCE,
        GREATEST/LEAST, ARRAY[…] elements, a VALUES column, set operation arms) read by that
        type's input function (literals.reads_by_input): PostgreSQL coerces each unknown
        constant to the common type at parse analysis, with the type's own errors and, for
        dates and times, in the session's DateStyle order, where DuckDB's implicit cast from
        VARCHAR reads its own way ('01/02/03' is 0001-02-03 there, '1.5' an integer 2).
        Others are returned as they are."""
        if to is not None and to.enum_oid and (en := enum_casts.by_oid(to.enum_oid)) is not None:
            return [
                (self._as_enum(node, en, to.is_array, _Scope(None))[0], to)
                if (t == UNKNOWN and _str_const(node) is not None) or (t is None and self._untyped_param(node))
                else (node, t)
                for node, t in pairs
            ]
        ctype = self._lake_source(_null(), to, _Scope(None)) if to is not None and to != UNKNOWN else None
        if not literals.reads_by_input(ctype):
            return list(pairs)
        assert ctype is not None
        out: list[tuple[ast.Node, T | None]] = []
        for node, t in pairs:
            if t is None and self._untyped_param(node):  # (bound as text: read when it runs)
                name = ast.TypeName(names=(_s("pg_catalog"), _s(ctype.base.name)), typemod=-1)
                out.append((self.expr(ast.TypeCast(arg=node, typeName=name), _Scope(None))[0], _lake_t(ctype)))
                continue
            lit = _str_const(node) if t == UNKNOWN else None
            if lit is None:
                out.append((node, t))
                continue
            try:
                value = literals.unknown_literal(lit, ctype)
            except PgError as e:
                raise self.fail(e.sqlstate, e.message, node, detail=e.detail, hint=e.hint) from None
            if ctype.base.name == "uuid" and not ctype.is_array:  # (a query's uuid values are DuckDB's UUID)
                value = _cast(value, "UUID")
            out.append((value, _lake_t(ctype)))
        return out

    def _as_jsonb(self, node: ast.Node, t: T | None, scope: _Scope) -> ast.Node:
        """An operand of a jsonb operator: jsonb as it is; text (an untyped literal, a text
        parameter) through jsonb's input function, with its errors (22P02 and DETAIL)."""
        if self._is_jsonb(node, t, scope):
            return node
        lit = _str_const(node)
        jsonb = literals.target_type("jsonb", [], False)
        assert jsonb is not None
        if lit is not None:
            try:
                return literals.unknown_literal(lit, jsonb)
            except PgError as e:
                raise self.fail(e.sqlstate, e.message, node, detail=e.detail, hint=e.hint) from None
        return literals.input_call(_cast(node, "varchar"), jsonb)

    def _using_star(self, stmt: ast.SelectStmt, scope: _Scope) -> tuple[ast.Node, ...]:
        """The SELECT list with ``*`` written out in PostgreSQL's order over joins with
        USING or NATURAL (join_star)."""

        def leaf(item: ast.Node) -> list[join_star.Column] | None:
            alias = scope.item_alias.get(id(item))
            rel = scope.rels.get(alias) if alias is not None else None
            if rel is None:
                return None
            cols = rel.columns
            if cols is None and rel.declared is not None:
                cols = [(n, _lake_t(ct, stored=True)) for n, ct in rel.declared.items()]
            if cols is None:
                return None
            return [join_star.Column(ast.ColumnRef(fields=(_s(alias), _s(n))), n, t) for n, t in cols]

        try:
            columns = join_star.columns(stmt.fromClause, leaf)
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, stmt) from None
        out: list[ast.Node] = []
        for rt in stmt.targetList:
            if _is_star(rt, qualified=False):
                out.extend(ast.ResTarget(name=c.name, val=copy.deepcopy(c.node)) for c in columns)
            else:
                out.append(rt)
        return tuple(out)

    def _jsonb_group_guards(
        self, stmt: ast.SelectStmt, groups: list[tuple[Any, T | None]], cols: Sequence[tuple[str, T | None]] | None, scope: _Scope
    ) -> tuple[ast.Node, ...]:
        """Extra GROUP BY keys that refuse jsonb values whose text is not their equality
        class's only one (jsonb_ops.grouped): the groups stay those of the texts, which
        are then jsonb's; the SELECT list still matches the keys as written."""
        extra: list[ast.Node] = []
        for g, t in groups:
            if isinstance(g, ast.A_Const) and isinstance(g.val, ast.Integer):  # GROUP BY 2
                n = g.val.ival
                ct = cols[n - 1][1] if cols is not None and 1 <= n <= len(cols) else None
                guard = _text_guard(ct, key=True)
                if guard is None:
                    continue
                if _has_star(stmt.targetList):
                    raise self.fail("0A000", f"GROUP BY a position of a {_guarded_kind(guard)} column after * is not supported by walsender-proxy", g)
                g = stmt.targetList[n - 1].val
            else:
                guard = jsonb_ops.UDF_GROUPED_KEY if self._is_jsonb(g, t, scope) else _text_guard(t, key=True)
                if guard is None:
                    continue
            extra.append(_call(guard, copy.deepcopy(g)))
        if extra and any(isinstance(g, ast.GroupingSet) for g, _ in groups):
            raise self.fail("0A000", "grouping sets over jsonb or unconstrained numeric values are not supported by walsender-proxy", stmt)
        return tuple(extra)

    def _jsonb_distinct_guards(self, stmt: ast.SelectStmt, cols: Sequence[tuple[str, T | None]] | None) -> None:
        """SELECT DISTINCT over jsonb columns: each such value through jsonb_ops.grouped
        (its text is its equality class's only one), under its own column name."""
        guarded = [(i, g) for i, (_, t) in enumerate(cols or ()) for g in [_text_guard(t, key=True)] if g is not None]
        if not guarded:
            return
        if _has_star(stmt.targetList) or len(stmt.targetList or ()) != len(cols or ()):
            kind = _guarded_kind(guarded[0][1])
            raise self.fail("0A000", f"SELECT DISTINCT * over {kind} columns is not supported by walsender-proxy", stmt)
        for i, guard in guarded:
            rt = stmt.targetList[i]
            rt.val = _call(guard, rt.val)
            rt.name = rt.name or (cols or ())[i][0]

    def _jsonb_arm_guards(self, arm: ast.SelectStmt, columns: list[int]) -> None:
        """A set operation that compares rows with jsonb columns: those columns' values, in
        every arm, through jsonb_ops.grouped (jsonb's text is then its equality)."""
        if arm.op != SetOperation.SETOP_NONE:
            self._jsonb_arm_guards(arm.larg, columns)
            self._jsonb_arm_guards(arm.rarg, columns)
            return
        if arm.valuesLists:
            arm.valuesLists = tuple(
                tuple(_call(jsonb_ops.UDF_GROUPED, _cast(v, "VARCHAR")) if i in columns else v for i, v in enumerate(row))
                for row in arm.valuesLists
            )
            return
        if _has_star(arm.targetList):
            raise self.fail("0A000", "a set operation over * with jsonb columns is not supported by walsender-proxy", arm)
        names = self.arm_columns.get(id(arm)) or []
        for i in columns:
            if i < len(arm.targetList or ()):
                rt = arm.targetList[i]
                rt.name = rt.name or (names[i][0] if i < len(names) else None)
                rt.val = _call(jsonb_ops.UDF_GROUPED, _cast(rt.val, "VARCHAR"))

    @staticmethod
    def _as_jsonb_twin(name: str, base: str, run: Callable[[], Any]) -> Any:
        """``run()`` of json function ``base`` standing in for jsonb's ``name``, its errors
        worded as the jsonb function's (json_exprs.jsonb_wording)."""
        try:
            return run()
        except SqlError as e:
            message, hint = json_exprs.jsonb_wording(e.message, e.hint, base, name)
            raise SqlError(e.sqlstate, message, e.position, detail=e.detail, hint=hint) from None

    def _jsonb_builder(self, name: str, node: ast.FuncCall, scope: _Scope) -> tuple[ast.Node, T | None]:
        """to_jsonb, jsonb_agg, jsonb_build_object … : the json builder's text through jsonb's
        input (sorted, unique keys; PostgreSQL's jsonb text), with the jsonb function's
        name in errors."""
        base = json_exprs.JSONB_BUILDERS[name]
        node.funcname = (_s(base),)
        done = self._as_jsonb_twin(name, base, lambda: json_exprs.function(_JsonHost(self, scope), base, node, jsonb=True))
        if done is None:
            raise self._no_function(name, [], node)
        jsonb = literals.target_type("jsonb", [], False)
        assert jsonb is not None
        return literals.input_call(_cast(done[0], "varchar"), jsonb), T("jsonb")

    def _text_array_operand(self, node: ast.Node, t: T | None) -> ast.Node | None:
        """A text[] operand: a quoted literal read as one, or a text array value."""
        lit = _str_const(node)
        if lit is not None:
            return self._array_literal(lit, TEXT, node)
        if t is not None and t.name in ("_text", "_varchar", "_bpchar", "_name"):
            return _cast(node, "VARCHAR", array=True)
        return None

    def _jsonb_set(self, node: ast.FuncCall, scope: _Scope) -> ast.Node:
        """jsonb_set(target, path, new_value[, create_if_missing]) (jsonb_edit.set_path)."""
        pairs = [self.expr(a, scope) for a in node.args or ()]
        types = [t for _, t in pairs]
        if len(pairs) in (3, 4):
            (target, tt), (path, pt), (new, nt) = pairs[:3]
            keys = self._text_array_operand(path, pt)
            fits = keys is not None and all(
                self._is_jsonb(n, t, scope) or _str_const(n) is not None or t == UNKNOWN for n, t in ((target, tt), (new, nt))
            )
            create: ast.Node = _bool(True)
            if len(pairs) == 4:
                create, ct = pairs[3]
                fits = fits and (ct is None or ct in (BOOL, UNKNOWN))
                create = _cast(create, "BOOLEAN")
            if fits and keys is not None:
                return _call(jsonb_edit.UDF_SET, self._as_jsonb(target, tt, scope), keys, self._as_jsonb(new, nt, scope), create)
        raise self._no_function("jsonb_set", types, node)

    def _jsonb_delete(self, op: str, node: ast.Node, left: ast.Node, right: ast.Node, rt: T | None) -> ast.Node:
        """jsonb ``- text``, ``- text[]``, ``- integer`` and ``#- text[]`` (jsonb_edit)."""
        if op == "-" and (_str_const(right) is not None or (rt is not None and rt.name in TEXTISH)):
            return _call(jsonb_edit.UDF_DELETE, left, _cast(right, "VARCHAR"))
        if op == "-" and rt is not None and rt.name in ("int2", "int4"):
            return _call(jsonb_edit.UDF_DELETE_INDEX, left, _cast(right, "INTEGER"))
        keys = self._text_array_operand(right, rt) if _str_const(right) is None or op == "#-" else None
        if keys is not None:
            return _call(jsonb_edit.UDF_DELETE_PATH if op == "#-" else jsonb_edit.UDF_DELETE_KEYS, left, keys)
        raise self._no_jsonb_operator(op, node, rt)

    def _jsonb_exists(
        self, op: str, node: ast.Node, left: ast.Node, lt: T | None, right: ast.Node, rt: T | None, scope: _Scope
    ) -> ast.Node:
        """jsonb ``?`` (a key or string element), ``?|`` (any of a text[]), ``?&`` (all)."""
        if op == "?":
            if _str_const(right) is not None or rt is None or rt == UNKNOWN or rt.name in TEXTISH:
                return _call(jsonb_ops.UDF_EXISTS, left, _cast(right, "VARCHAR"))
        elif (keys := self._text_array_operand(right, rt)) is not None:
            return _call(jsonb_ops.UDF_EXISTS_ALL if op == "?&" else jsonb_ops.UDF_EXISTS_ANY, left, keys)
        raise self._no_jsonb_operator(op, node, rt)

    def _no_jsonb_operator(self, op: str, node: ast.Node, rt: T | None) -> SqlError:
        """PostgreSQL's 42883 for a jsonb operator with an operand of another type (0A000
        where the rewriter cannot tell the operand's type)."""
        if rt is None:
            return self.fail("0A000", f"operator {op} of a value of unknown type is not supported by walsender-proxy", node)
        return self.fail(
            "42883", f"operator does not exist: jsonb {op} {_type_display(rt)}", node,
            hint="No operator matches the given name and argument types. You might need to add explicit type casts.",
        )  # fmt: skip

    def _jsonb_compare(
        self, op: str, node: ast.Node, left: ast.Node, lt: T | None, right: ast.Node, rt: T | None, scope: _Scope
    ) -> ast.Node:
        """A comparison of jsonb values, by jsonb's btree order (jsonb_ops.sort_key): their
        texts would order ``{"b": 1}`` after ``{"a": 1, "b": 2}`` and tell 1.0 from 1.00."""
        for side, t in ((left, lt), (right, rt)):
            if not self._is_jsonb(side, t, scope) and _str_const(side) is None and t not in (None, UNKNOWN):
                raise self.fail(
                    "42883", f"operator does not exist: {_type_display(lt)} {op} {_type_display(rt)}", node,
                    hint="No operator matches the given name and argument types. You might need to add explicit type casts.",
                )  # fmt: skip
        a, b = (_call(jsonb_ops.UDF_SORT_KEY, self._as_jsonb(n, t, scope)) for n, t in ((left, lt), (right, rt)))
        return _op("<>" if op == "!=" else op, a, b)

    def _is_jsonb(self, node: ast.Node, t: T | None, scope: _Scope) -> bool:
        src = self._lake_source(node, t, scope)
        return src is not None and not src.is_array and src.base.name == "jsonb"

    def _similar(self, node: ast.A_Expr, op: str, scope: _Scope) -> ast.Node:
        """``x SIMILAR TO 'pat'``: DuckDB reads the pattern as a regex, PostgreSQL as SQL."""
        pat, escape = node.rexpr, None
        if isinstance(pat, ast.FuncCall) and pat.funcname[-1].sval == "similar_to_escape":
            pat, escape = pat.args[0], (pat.args[1] if len(pat.args or ()) > 1 else None)
        left = self.expr(node.lexpr, scope)[0]
        right = self.expr(pat, scope)[0]
        esc = self.expr(escape, scope)[0] if escape is not None else None
        call = regex_funcs.similar_call(left, right, esc)
        if op == "!~":
            return ast.BoolExpr(boolop=BoolExprType.NOT_EXPR, args=(call,))
        return call

    def _array_literal(
        self, lit: str, other: T | None, at: ast.Node, whole: bool = False
    ) -> ast.Node:
        elem = (other.elem if whole and other is not None else other) or TEXT
        lake = literals.target_type(elem.name.lstrip("_"), [], True) if elem != UNKNOWN else None
        if lake is not None and array_exprs.is_multidimensional_literal(lit):
            return self._multidimensional_literal(lit, lake, at)[0]
        if lake is not None:
            # the other side's element type reads the literal, as PostgreSQL resolves it
            try:
                return literals.unknown_literal(lit, lake)
            except PgError as e:
                raise self.fail(e.sqlstate, e.message, at, detail=e.detail, hint=e.hint) from None
        elems = parse_array_literal(lit)
        if elems is None:
            raise self.fail("22P02", f'malformed array literal: "{lit}"', at)
        if elem == UNKNOWN:
            elem = TEXT
        arr = ast.A_ArrayExpr(elements=tuple(_null() if e is None else _str(e) for e in elems))
        duck = _duck_type(elem.name, None)
        return _cast(arr, duck if isinstance(duck, str) else duck[0], array=True)

    def _row_operand(self, node: ast.Node | None, scope: _Scope) -> T | None:
        """The type of ``node`` when it is a value of a composite type (None: it is not, or
        cannot be told without rewriting more than a column). Read from the node's shape —
        a cast to a composite type, json_populate_record over one — or, once the statement
        has made composite values, from a column or a field's analysis: never a rewrite of
        a whole subtree, which every level of a nested expression would repeat."""
        if isinstance(node, ast.TypeCast):
            names = _user_type_names(node.typeName)
            rt = composite_values.visible(names) if names is not None and not node.typeName.arrayBounds else None
            return T("record", row_oid=rt.oid) if rt is not None else None
        if isinstance(node, ast.FuncCall):
            fname = node.funcname[-1].sval
            rt = self._row_base(node) if fname in ("json_populate_record", "jsonb_populate_record") else None
            return T("record", row_oid=rt.oid) if rt is not None else None
        if not self._row_typed or not isinstance(node, ast.ColumnRef | ast.A_Indirection):
            return None
        try:
            t = self.expr(copy.deepcopy(node), scope)[1]
        except PgError:
            return None
        return t if t is not None and t.row_oid else None

    def e_FuncCall(self, node: ast.FuncCall, scope: _Scope) -> tuple[ast.Node, T | None]:
        names = [n.sval for n in node.funcname]
        if (
            names[-1] in ("json_populate_record", "jsonb_populate_record") and (len(names) == 1 or names[0] == "pg_catalog")
            and not (node.agg_star or node.agg_distinct or node.agg_order or node.agg_filter or node.over or node.func_variadic)
            and (rt := self._row_base(node)) is not None
        ):  # fmt: skip
            # (its value: the row the FROM-clause form reads, as a value of the base's type)
            fields = tuple(ast.ColumnRef(fields=(_s("wpx_pop"), _s(n))) for n, _ in rt.fields)
            row = ast.TypeCast(arg=ast.RowExpr(args=fields, row_format=CoercionForm.COERCE_EXPLICIT_CALL), typeName=copy.deepcopy(node.args[0].typeName))
            rf = ast.RangeFunction(functions=((node, None),), alias=ast.Alias(aliasname="wpx_pop"))
            sub = ast.SelectStmt(targetList=(ast.ResTarget(val=row),), fromClause=(rf,), op=SetOperation.SETOP_NONE)
            return self.expr(ast.SubLink(subLinkType=SubLinkType.EXPR_SUBLINK, subselect=sub), scope)
        if names[-1] not in _ROW_FUNCTIONS or (len(names) > 1 and names[0] != "pg_catalog"):
            for a in node.args or ():
                rt = self._row_operand(a.arg if isinstance(a, ast.NamedArgExpr) else a, scope)
                if rt is not None:  # (DuckDB would take a STRUCT where PostgreSQL has no function of a record)
                    raise self.fail("0A000", f"{'.'.join(names)}() of a value of composite type {_type_display(rt)} is not supported by walsender-proxy", node)
        if names[-1] in _ENUM_FUNCTIONS and (len(names) == 1 or names[0] == "pg_catalog") and not node.agg_star and node.over is None:
            return self._enum_function(names[-1], node, scope)
        if (
            names[-1] in _TYPE_CALLS and (len(names) == 1 or names[0] == "pg_catalog") and len(node.args or ()) == 1
            and not (node.agg_star or node.agg_distinct or node.agg_order or node.agg_filter or node.over or node.func_variadic)
            and not isinstance(node.args[0], ast.NamedArgExpr)
            and not sql_function_calls.is_user_call(node)
        ):
            return self._type_call(names[-1], node, scope)
        return self.func_call(node, scope)

    def _type_call(self, name: str, node: ast.FuncCall, scope: _Scope) -> tuple[ast.Node, T | None]:
        """``date(ts)``, ``int4(2.5)``, ``text(1)``: a one-argument call of a type's name is
        the cast to it. pg_proc's functions of these names are the casts' own functions
        (date(timestamptz), int4(numeric)); where none fits, ParseFuncOrColumn takes the
        call as a coercion. Where no cast exists, PostgreSQL's 42883 for the function."""
        tn = ast.TypeName(names=(ast.String(sval="pg_catalog"), ast.String(sval=name)), typemod=-1)
        try:
            return self.e_TypeCast(ast.TypeCast(arg=node.args[0], typeName=tn, location=node.location), scope)
        except SqlError as e:
            if e.sqlstate != "42846":
                raise
            _, t = self.expr(copy.deepcopy(node.args[0]), scope)
            raise self._no_function(name, [t], node) from None

    def _enum_function(self, name: str, node: ast.FuncCall, scope: _Scope) -> tuple[ast.Node, T | None]:
        """enum_first, enum_last, enum_range: of the enum their arguments are (an unknown
        literal beside one is read as it)."""
        args = list(node.args or ())
        pairs = [self.expr(a, scope) for a in args]
        en = next((enum_casts.by_oid(t.enum_oid) for _, t in pairs if t is not None and t.enum_oid and not t.is_array and not t.domain_oid), None)
        if en is None or len(args) > (2 if name == "enum_range" else 1) or (len(args) == 2 and name != "enum_range"):
            raise self._no_function(name, [t for _, t in pairs], node)
        if any(t is not None and t.enum_oid != en.oid and t != UNKNOWN and not (isinstance(a, ast.A_Const) and a.isnull) for a, (_, t) in zip(args, pairs, strict=True)):
            raise self._no_function(name, [t for _, t in pairs], node)
        out_t = T("anyenum", enum_oid=en.oid)
        try:
            if name in ("enum_first", "enum_last"):
                return enum_casts.first_or_last(en, name == "enum_last"), out_t
            if len(args) == 1:
                return enum_casts.whole_range(en), T("_anyenum", enum_oid=en.oid)
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, node) from None
        bounds = [v if t is not None and t.enum_oid else self._as_enum(a, en, False, scope)[0] for a, (v, t) in zip(args, pairs, strict=True)]
        return enum_casts.bounded_range(bounds[0], bounds[1], en), T("_anyenum", enum_oid=en.oid)

    def _func_name(self, node: ast.FuncCall) -> str:
        names = [n.sval for n in node.funcname]
        if names == ["information_schema", "_pg_expandarray"]:
            return names[-1]
        if len(names) > 2 or (len(names) == 2 and names[0] != "pg_catalog"):
            raise self._no_function(".".join(names), [], node)
        return names[-1].lower()

    def _regex_call(self, name: str, pairs: list[tuple[ast.Node, T | None]], node: Any) -> tuple[ast.Node, T] | None:
        """A regular-expression function (regex_funcs): its UDF call, PostgreSQL's 42883 for a
        signature it lacks; None for substring() that is not its pattern form."""
        types = [t.name if t is not None else None for _, t in pairs]
        consts = [_str_const(a) if t == UNKNOWN else None for a, t in pairs]
        try:
            done = regex_funcs.rewrite(name, [a for a, _ in pairs], types, consts)
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, node, hint=e.hint) from None
        if done is None:
            if name == "substring":
                return None
            raise self._no_function(name, [t for _, t in pairs], node)
        return done[0], T(done[1])

    def _fixed_signature(
        self, name: str, sigs: list[tuple[tuple[str, ...], str, Any]], pairs: list[tuple[ast.Node, T | None]], node: Any
    ) -> tuple[ast.Node, T]:
        """A call of a function of bytea_text (its signatures, each a UDF): a quoted literal
        read as its parameter's type, arguments of a type without an implicit cast to it
        refused with PostgreSQL's 42883."""
        types = [t for _, t in pairs]
        widths = {"int4": ("int2", "int4"), "int8": ("int2", "int4", "int8")}
        for params, result, fn in sigs:
            if len(params) != len(pairs):
                continue
            args: list[ast.Node] = []
            for (a, t), want in zip(pairs, params, strict=True):
                lit = _str_const(a) if t == UNKNOWN else None
                if t is None or (t != UNKNOWN and (t.name == want or (want == "text" and t.name in TEXTISH))):
                    args.append(a)
                elif want in widths and t.name in widths[want]:
                    args.append(_cast(a, "bigint" if want == "int8" else "integer"))
                elif want in widths and lit is not None and re.fullmatch(r"\s*[+-]?\d{1,18}\s*", lit):
                    args.append(_int(int(lit)))
                elif t == UNKNOWN and want in ("text", "bytea"):
                    args.append(_unknown_as(a, t, want)[0] if want == "bytea" else a)
                else:
                    break
            else:
                return _call(bytea_text.udf_name(fn), *args), T(result)
        raise self._no_function(name, types, node)

    def _function_exists(self, name: str, node: ast.FuncCall, types: Sequence[T | None], args: Sequence[Any] = ()) -> None:
        """PostgreSQL's 42883 for a call of a pg_catalog function none of whose overloads
        takes these argument types (function_exists); calls it cannot judge pass. An
        unknown ``$n`` among ``args`` takes the type the chosen overload gives it."""
        if node.func_variadic or node.agg_star or node.agg_within_group or any(isinstance(a, ast.NamedArgExpr) for a in node.args or ()):
            return  # (an ordered-set aggregate's overloads take its WITHIN GROUP arguments too)
        names = [None if t is None or t.zero_based else "_" + t.name.lstrip("_") if t.is_array else t.name for t in types]
        if not all(function_exists.judged(n) for n in names):
            return
        if function_exists.exists(name, names) is False:  # type: ignore[arg-type]
            raise self._no_function(name, types, node)
        if function_exists.ambiguous(name, names):  # type: ignore[arg-type]
            shown = ", ".join(_type_display(t) for t in types)
            raise self.fail(
                "42725", f"function {'.'.join(n.sval for n in node.funcname)}({shown}) is not unique", node,
                hint="Could not choose a best candidate function. You might need to add explicit type casts.",
            )
        if function_exists.polymorphic_unknown(name, names):  # type: ignore[arg-type]
            raise self.fail("42804", "could not determine polymorphic type because input has type unknown", node)
        self._call_params(name, node, types, args)

    def _call_params(self, name: str, node: ast.FuncCall, types: Sequence[T | None], args: Sequence[Any]) -> None:
        """Each unknown ``$n`` argument of a pg_catalog function takes the type of the
        overload's parameter PostgreSQL's resolution picks (``generate_series(1, $1)``: int4)."""
        if not self.infer_params or not any(isinstance(a, ast.ParamRef) for a in args):
            return
        if node.func_variadic or node.agg_star or node.agg_within_group or any(isinstance(a, ast.NamedArgExpr) for a in node.args or ()):
            return
        names = [None if t is None or t.zero_based else "_" + t.name.lstrip("_") if t.is_array else t.name for t in types]
        if all(function_exists.judged(n) for n in names):
            for i, type_name in function_exists.resolved_unknowns(name, names).items():  # type: ignore[arg-type]
                self._coerced_param(args[i], T(type_name))

    def _ordered_set(self, name: str, node: ast.FuncCall, scope: _Scope) -> tuple[ast.Node, T | None]:
        """percentile_cont, percentile_disc and mode() WITHIN GROUP as orderedsetaggs.c
        computes them, over the group's values sorted in PostgreSQL's order (NULLs left
        out): the percentiles from a list (pgc_percentile_*), mode by DuckDB's mode fed in
        that order (its ties go to the first value, as PostgreSQL's)."""
        if node.over is not None:
            raise self.fail("0A000", f"OVER is not supported for ordered-set aggregate {name}", node)
        raw_sorts = list(node.agg_order or ())
        if name != "mode" and node.args and isinstance(node.args[0], ast.A_ArrayExpr):
            # ARRAY[0.25, 0.5] is float8[] here: each element cast as PostgreSQL's coercion
            # of the numeric[] to the parameter's type casts it
            float8 = ast.TypeName(names=(_s("pg_catalog"), _s("float8")), typemod=-1)
            elements = tuple(ast.TypeCast(arg=e, typeName=copy.deepcopy(float8)) for e in node.args[0].elements or ())
            node.args = (ast.A_ArrayExpr(elements=elements, location=node.args[0].location), *node.args[1:])
        direct = [self.expr(a, scope) for a in node.args or ()]
        values = [self.expr(copy.deepcopy(sb.node), scope) for sb in raw_sorts]
        shown = [t for _, t in direct] + [t for _, t in values]
        want_direct = 0 if name == "mode" else 1
        if len(direct) != want_direct or len(values) != 1 or any(sb.sortby_dir == SortByDir.SORTBY_USING for sb in raw_sorts):
            raise self._no_function(name, shown, node)
        value, vt = values[0]
        numbers = ("int2", "int4", "int8", "float4", "float8", "numeric")
        many = False
        p: ast.Node | None = None
        if direct:
            p, pt = direct[0]
            many = pt is not None and pt.is_array
            base = pt.elem if many and pt is not None else pt
            if base is None or (base != UNKNOWN and base.name not in numbers) or (many and base == UNKNOWN):
                raise self._no_function(name, shown, node)
            p = _cast(p, "DOUBLE", array=many)
        if name == "percentile_cont":
            if vt is not None and vt.name == "interval":
                raise self.fail("0A000", "percentile_cont() of interval values is not supported by walsender-proxy", node)
            if vt is None or (vt != UNKNOWN and vt.name not in numbers):
                raise self._no_function(name, shown, node)
            value = _cast(value, "DOUBLE")
            key = ast.SortBy(node=copy.deepcopy(value), sortby_dir=raw_sorts[0].sortby_dir, sortby_nulls=0)
            result = T("_float8") if many else T("float8")
        else:
            if vt is None or vt == UNKNOWN or vt.is_array:
                raise self.fail("0A000", f"{name}() of values of this type is not supported by walsender-proxy", node)
            if name == "mode":
                self._no_text_numeric("mode()", node, vt)  # (its equality is the text's)
            key = self._sort_key(copy.deepcopy(raw_sorts[0]), scope)[0]
            key.sortby_nulls = 0
            result = T("_" + vt.name, enum_oid=vt.enum_oid) if many else vt
        present = ast.NullTest(arg=copy.deepcopy(value), nulltesttype=NullTestType.IS_NOT_NULL)
        keep = present if node.agg_filter is None else ast.BoolExpr(boolop=BoolExprType.AND_EXPR, args=(present, self.condition(node.agg_filter, scope)))
        gathered = ast.FuncCall(
            funcname=(_s("mode" if name == "mode" else "list"),), args=(value,), agg_order=(key,), agg_filter=keep,
            funcformat=CoercionForm.COERCE_EXPLICIT_CALL,
        )  # fmt: skip
        if name == "mode":
            return gathered, result
        macro = f"pgc_percentile{'s' if many else ''}_{name.rsplit('_', 1)[1]}"
        self.needs.add(macro)
        assert p is not None
        return _call(macro, p, gathered), result

    def _privilege(self, name: str, node: ast.FuncCall, args: list[ast.Node], types: list[T | None]) -> ast.Node:
        """has_*_privilege and pg_has_role as PostgreSQL answers them for a superuser (true,
        once the privilege names and the relation are checked); for another role — the one
        named, or the session's — 0A000: the proxy keeps no owners or grants to answer
        from."""
        with_role = len(args) == (4 if name == "has_column_privilege" else 3)
        if (name == "has_column_privilege" and len(args) == 2) or len(args) < 2:
            raise self._no_function(name, types, node)
        if with_role:
            role, rt = args[0], types[0]
            by_oid = rt is not None and rt.name in ("oid", "regrole", "int2", "int4", "int8")
            self.needs.add("pgc_role_is_super_oid" if by_oid else "pgc_role_is_super")
            superuser = _call("pgc_role_is_super_oid" if by_oid else "pgc_role_is_super", role)
        else:
            self.needs.add("pgc_session_is_super")
            superuser = _call("pgc_session_is_super")
        held = args[1] if with_role else args[0]
        held_t = types[1] if with_role else types[0]
        if name in _RELATION_PRIVILEGES and (held_t is None or held_t == UNKNOWN or held_t.name in TEXTISH):
            check = "pgc_sequence_in" if name == "has_sequence_privilege" else "pgc_regclass_in"
            self.needs.add(check)  # (42P01 for a relation that does not exist)
            superuser = ast.CaseExpr(args=(ast.CaseWhen(expr=ast.NullTest(arg=_call(check, held), nulltesttype=NullTestType.IS_NULL), result=_null()),), defresult=superuser)
        if name == "has_function_privilege":  # (42883 for a signature no function has; NULL for an OID)
            textual = held_t is None or held_t == UNKNOWN or held_t.name in TEXTISH
            held = self._needing("pgc_regprocedure_in", held) if textual else _cast(held, "uinteger")
            exists = self._needing("pgc_function_exists", copy.deepcopy(held))
            superuser = ast.CaseExpr(args=(ast.CaseWhen(expr=ast.BoolExpr(boolop=BoolExprType.NOT_EXPR, args=(exists,)), result=_null()),), defresult=superuser)
        known = _str(",".join(_PRIVILEGE_NAMES[name]))
        if name in _ACL_PRIVILEGES:  # (answered from the object's ACL for any role)
            if with_role:
                by_oid = types[0] is not None and types[0].name in ("oid", "regrole", "int2", "int4", "int8")
                role_oid = _cast(args[0], "uinteger") if by_oid else self._needing("pgc_role_oid_of", args[0])
            else:
                role_oid = self._needing("pgc_session_user_oid")
            obj = held
            textual = held_t is None or held_t == UNKNOWN or held_t.name in TEXTISH
            if name == "has_database_privilege":
                obj = self._needing("pgc_database_oid", held) if textual else _cast(held, "uinteger")
            if name == "pg_has_role":
                group = self._needing("pgc_role_oid_of", held) if textual else _cast(held, "uinteger")
                member = self._needing("pgc_member_held", role_oid, group)
                return self._needing("pgc_has_privilege_acl", superuser, args[-1], known, member, _str(""))
            if name in _RELATION_PRIVILEGES and (held_t is None or held_t == UNKNOWN or held_t.name in TEXTISH):
                obj = self._needing("pgc_sequence_in" if name == "has_sequence_privilege" else "pgc_regclass_in", held)
            elif name == "has_schema_privilege" and (held_t is None or held_t == UNKNOWN or held_t.name in TEXTISH):
                obj = self._needing("pgc_namespace_in", held)
            on = self._needing("pgc_held", role_oid, obj)
            on_grant = self._needing("pgc_held_grant", role_oid, obj)
            if name in ("has_column_privilege", "has_any_column_privilege"):  # (the table's, or the columns')
                column: ast.Node = _null()
                if name == "has_column_privilege":
                    col, col_t = args[-2], types[-2]
                    textual_col = col_t is None or col_t == UNKNOWN or col_t.name in TEXTISH
                    column = self._needing("pgc_column_named" if textual_col else "pgc_column_numbered", obj, col)
                    superuser = ast.CaseExpr(args=(ast.CaseWhen(expr=ast.NullTest(arg=copy.deepcopy(column), nulltesttype=NullTestType.IS_NULL), result=_null()),), defresult=superuser)
                on = _op("||", on, self._needing("pgc_column_held", role_oid, copy.deepcopy(obj), copy.deepcopy(column)))
                on_grant = _op("||", on_grant, self._needing("pgc_column_held_grant", role_oid, copy.deepcopy(obj), copy.deepcopy(column)))
            return self._needing("pgc_has_privilege_acl", superuser, args[-1], known, on, on_grant)
        self.needs.add("pgc_has_privilege")
        return _call("pgc_has_privilege", superuser, args[-1], known)

    def _needing(self, fn: str, *args: ast.Node) -> ast.Node:
        """``fn(args)``, a catalog macro the statement then needs."""
        self.needs.add(fn)
        return _call(fn, *args)

    def _numeric_series(self, args: Sequence[ast.Node], types: Sequence[T | None], node: ast.Node) -> ast.Node:
        """generate_series(numeric, numeric [, numeric]) as the list numeric_math.series
        computes, exactly."""
        ops = [numeric_exprs.Operand(a, t.name if t is not None else None, t is not None and t.text_numeric) for a, t in zip(args, types, strict=True)]
        if not numeric_exprs.is_numeric_operation(ops):
            raise self._no_function("generate_series", types, node)
        texts = [numeric_exprs.as_text(o) for o in ops] + ([] if len(ops) == 3 else [_str("1")])
        return _call(numeric_math.udf_name("series"), *texts)

    def _lsn_arith(self, node: ast.A_Expr, op: str, left: ast.Node, lt: T | None, right: ast.Node, rt: T | None) -> tuple[ast.Node, T | None]:
        """pg_lsn - pg_lsn (numeric: the bytes between), pg_lsn ± numeric and numeric +
        pg_lsn (pg_lsn: the byte position moved, rounded as numeric → bigint rounds;
        22023 outside 0 … 2^64 - 1)."""
        if rt == UNKNOWN and _str_const(right) is not None and op == "-" and lt is not None and lt.name == "pg_lsn":
            right, rt = self._pg_lsn_const(right), T("pg_lsn")
        if lt == UNKNOWN and _str_const(left) is not None and rt is not None and rt.name == "pg_lsn":
            left, lt = self._pg_lsn_const(left), T("pg_lsn")
        names = (lt.name if lt is not None else None, rt.name if rt is not None else None)
        if op == "-" and names == ("pg_lsn", "pg_lsn"):
            return _lsn_difference(left, right), T("numeric")
        lsn, other, other_t = (left, right, rt) if names[0] == "pg_lsn" else (right, left, lt)
        if op == "-" and names[1] == "pg_lsn":  # (numeric - pg_lsn: none)
            raise self._no_operator(node, lt, rt)
        if other_t is None or other_t.name not in (*numeric_exprs.INTEGERS, "numeric", "unknown") or other_t.text_numeric:
            if other_t is not None and other_t.text_numeric:
                raise self.fail("0A000", "pg_lsn arithmetic with an unconstrained numeric value is not supported by walsender-proxy", node)
            raise self._no_operator(node, lt, rt)
        if other_t.name == "unknown":
            other = self.expr(ast.TypeCast(arg=other, typeName=ast.TypeName(names=(_s("pg_catalog"), _s("numeric")), typemod=-1)), _Scope(None))[0]
        self.needs.add("pgc_lsn_move")
        amount = _cast(other, "DECIMAL", typmods=(38, 6)) if other_t.name != "unknown" else other
        if op == "-":
            amount = ast.A_Expr(kind=A_Expr_Kind.AEXPR_OP, name=(_s("-"),), rexpr=amount)
        return _call("pgc_lsn_move", _lsn_int(lsn), amount), T("pg_lsn")

    def _no_operator(self, node: ast.Node, lt: T | None, rt: T | None) -> SqlError:
        op = node.name[-1].sval if isinstance(node, ast.A_Expr) else "?"
        return self.fail(
            "42883", f"operator does not exist: {_type_display(lt)} {op} {_type_display(rt)}", node,
            hint="No operator matches the given name and argument types. You might need to add explicit type casts.",
        )

    def _pg_lsn_const(self, lit: ast.Node, at: ast.Node | None = None) -> ast.Node:
        """A quoted pg_lsn as pg_lsn_in reads it and pg_lsn_out writes it back (errors
        placed at ``at``, the cast, when given)."""
        try:
            return _cast(_str(literals.pg_lsn_in(_str_const(lit) or "")), "VARCHAR")
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, at if at is not None else lit) from None

    @staticmethod
    def _zoned_series(types: Sequence[T | None]) -> bool:
        """A generate_series(timestamptz, timestamptz, interval) under a TimeZone other than
        UTC: ICU's steps are not PostgreSQL's there (``pgc_tstz_series``)."""
        return len(types) == 3 and bool(session_zone.ZONE.get()) and any(t is not None and t.name == "timestamptz" for t in types[:2])

    def _series_list(self, args: Sequence[ast.Node], types: Sequence[T | None]) -> ast.Node:
        """generate_series(…) as a list of its values (DuckDB's scalar form, whose zero step
        gives an empty list where PostgreSQL's is 22023)."""
        if len(args) == 3:
            guard = "pgc_series_step_iv" if types[2] is not None and types[2].name == "interval" else "pgc_series_step"
            self.needs.add(guard)
            args = [*args[:2], _call(guard, args[2])]
        if self._zoned_series(types):
            self.needs.add("pgc_tstz_series")
            return _call("pgc_tstz_series", _cast(args[0], "TIMESTAMPTZ"), _cast(args[1], "TIMESTAMPTZ"), _cast(args[2], "INTERVAL"))
        return _call("generate_series", *args)

    def _no_function(self, name: str, types: Sequence[T | None], node: Any) -> SqlError:
        if isinstance(node, ast.FuncCall):
            name = ".".join(n.sval for n in node.funcname)
        shown = ", ".join(_type_display(t) for t in types)
        return self.fail(
            "42883",
            f"function {name}({shown}) does not exist",
            node,
            hint="No function matches the given name and argument types. "
            "You might need to add explicit type casts.",
        )

    def _server_set_call(self, name: str, call: ast.FuncCall, scope: _Scope) -> ast.Node:
        """``pg_logical_slot_get_changes(slot_name, upto_lsn, upto_nchanges, VARIADIC
        options)`` as its UDF's call: the session's pid first, the LSN as its text, the
        options (variadic, or an array after VARIADIC) as one text array."""
        self.used_udfs = True
        self.server_values.add(name)
        raw = list(call.args or ())
        if any(isinstance(a, ast.NamedArgExpr) for a in raw) or call.agg_star or len(raw) < 3 or (call.func_variadic and len(raw) != 4):
            types = [self.expr(a.arg if isinstance(a, ast.NamedArgExpr) else a, scope)[1] for a in raw]
            raise self._no_function(name, types, call)
        slot, _ = self.expr(raw[0], scope)
        upto, _ = self.expr(raw[1], scope)
        count, _ = self.expr(raw[2], scope)
        if call.func_variadic:
            options, _ = self.expr(raw[3], scope)
        else:
            options = ast.A_ArrayExpr(elements=tuple(_cast(self.expr(a, scope)[0], "VARCHAR") for a in raw[3:]))
        lead = [_int(a) if isinstance(a, int) else _str(str(a)) for a in self.udf_args]
        return _call(
            self.server_udfs[name] + SET_SUFFIX, *lead, _cast(slot, "VARCHAR"), _cast(upto, "VARCHAR"), _cast(count, "INTEGER"),
            _cast(options, "VARCHAR", array=True),
        )

    def _server_udf_args(
        self, name: str, node: ast.FuncCall, args: list[Any], types: list[T | None], scope: _Scope
    ) -> list[Any]:
        """A server function's arguments in parameter order, named ones placed and
        defaults filled in (a UDF takes them all, by position)."""
        spec = SERVER_PARAMS.get(name)
        if spec is None:
            return args
        params, required, defaults = spec
        placed: list[Any] = [None] * len(params)
        fits = len(args) <= len(params)
        for i, a in enumerate(args[: len(params)]):
            if isinstance(a, ast.NamedArgExpr):
                at = params.index(a.name) if a.name in params else -1
                if at >= 0 and placed[at] is None:
                    placed[at] = a.arg
                else:
                    fits = False
            else:
                placed[i] = a
        fits = fits and all(p is not None for p in placed[:required])
        if not fits:  # worded as PostgreSQL's: "f(unknown, twophase => boolean)"
            shown = [
                T(f"{a.name} => {_type_display(self.expr(a.arg, scope)[1])}")
                if isinstance(a, ast.NamedArgExpr)
                else t
                for a, t in zip(args, types, strict=True)
            ]
            raise self._no_function(name, shown, node)
        return [
            p if p is not None else _bool(d) if isinstance(d := defaults[i - required], bool) else _null()
            for i, p in enumerate(placed)
        ]

    def _sequence_args(self, name: str, node: ast.FuncCall, args: list[Any], types: list[T | None]) -> list[Any]:
        """nextval/currval/setval(regclass, …): the sequence as its OID, a name resolved as
        regclass input resolves it (42P01 for none); lastval() takes nothing."""
        arity = {"nextval": (1,), "currval": (1,), "setval": (2, 3), "lastval": (0,)}[name]
        if len(args) not in arity:
            raise self._no_function(name, types, node)
        if not args:
            return args
        t = types[0]
        rel = args[0]
        if t == UNKNOWN or (t is not None and t.name in TEXTISH):
            rel = self._reg_in("pgc_regclass_in", rel, t, node)
        elif t is not None and t.name not in ("regclass", "oid", "int2", "int4", "int8"):
            raise self._no_function(name, types, node)
        out = [_cast(rel, "bigint"), *args[1:]]
        if name == "setval":
            out[1] = _cast(out[1], "bigint")
            if len(out) == 3:
                out[2] = _cast(out[2], "boolean")
        return out

    def func_call(self, node: ast.FuncCall, scope: _Scope) -> tuple[ast.Node, T | None]:
        if sql_function_calls.is_user_call(node):  # (a user's SQL function: its body inlined)
            return sql_function_calls.scalar_call(self, node, scope)
        name = self._func_name(node)
        if name == "parse_ident" and any(isinstance(a, ast.NamedArgExpr) for a in node.args or ()):
            node.args = _positional(node, ("qualname", "strict"), self)
        if node.agg_distinct and node.agg_order:
            written = {RawStream()(a) for a in node.args or ()}
            if any(RawStream()(sb.node) not in written for sb in node.agg_order):
                raise self.fail("42P10", "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list", node)
        if agg_levels.misplaced(node, scope.level):
            raise self.fail(
                "0A000",
                f"aggregate {name}() whose outer query level is set by a subquery in its arguments"
                " is not supported by walsender-proxy",
                node,
            )
        if node.agg_filter is not None and node.args and not node.agg_within_group and not (node.agg_distinct and node.agg_order):
            # PostgreSQL computes an aggregate's arguments only for the rows FILTER lets in
            # (``sum(x / y) FILTER (WHERE y <> 0)``); DuckDB for every row first.
            # (not an object aggregate's key: a NULL one is an error wherever it is computed)
            keys = 1 if name in ("json_object_agg", "jsonb_object_agg") else 0
            node.args = tuple(
                a if i < keys or isinstance(a, ast.A_Const | ast.ParamRef) else _only_when(node.agg_filter, a)
                for i, a in enumerate(node.args)
            )
        if node.agg_within_group and name in _ORDERED_SET and len(node.funcname) <= 2:
            return self._ordered_set(name, node, scope)
        if node.agg_within_group and name in ("rank", "dense_rank", "percent_rank", "cume_dist"):
            raise self.fail("0A000", f"the hypothetical-set aggregate {name}() … WITHIN GROUP is not supported by walsender-proxy", node)
        if name == "date_trunc" and len(node.args or ()) == 2 and _str_const(node.args[0]) is not None:
            value, t = self.expr(node.args[1], scope)
            if t is not None and t != UNKNOWN:
                try:
                    out, pg_type = datetime_parts.date_trunc(_str_const(node.args[0]) or "", value, t.name)
                except PgError as e:
                    raise self.fail(e.sqlstate, e.message, node) from None
                return out, T(pg_type)
            node.args = (node.args[0], value)
            return node, t
        if name in ("extract", "date_part") and len(node.args or ()) == 2 and _str_const(node.args[0]) is not None:
            return self._date_part(name, node, scope)
        if name in json_exprs.FUNCTIONS:
            done = json_exprs.function(_JsonHost(self, scope), name, node)
            if done is not None:
                return done[0], T(done[1])
        if name in json_exprs.JSONB_BUILDERS:
            return self._jsonb_builder(name, node, scope)
        if name == "jsonb_set" and not (node.agg_order or node.agg_filter is not None or node.over is not None):
            return self._jsonb_set(node, scope), T("jsonb")
        if name in json_exprs.JSONB_SETS:
            base = json_exprs.JSONB_SETS[name]
            node.funcname = (_s(base),)
            done = self._as_jsonb_twin(name, base, lambda: json_exprs.function(_JsonHost(self, scope), base, node, jsonb=True))
            if done is None:
                raise self._no_function(name, [], node)
            return done[0], T("jsonb" if done[1] == "json" else done[1])
        if name in json_exprs.JSONB_FUNCTIONS:
            done = json_exprs.jsonb_function(_JsonHost(self, scope), name, node)
            if done is not None and done[1] == "json":  # (a jsonb value: jsonb's text)
                jsonb = literals.target_type("jsonb", [], False)
                assert jsonb is not None
                return literals.input_call(_cast(done[0], "varchar"), jsonb), T("jsonb")
            if done is not None:
                return done[0], T(done[1])
        if node.funcformat == CoercionForm.COERCE_SQL_SYNTAX and name in KEEP_SQL_SYNTAX:
            node.args = tuple(self.expr(a, scope)[0] for a in node.args or ())
            return node, T("numeric") if name == "extract" else T("int4")
        if name in ("num_nulls", "num_nonnulls"):
            return self._num_nulls(name, node, scope)
        if name in ("quote_literal", "quote_nullable") and len(node.args or ()) == 1:
            # quote_literal(anyelement) is quote_literal(x::text): quoted as quote.c quotes
            arg = node.args[0]
            if not (isinstance(arg, ast.A_Const) and arg.isnull):
                arg = ast.TypeCast(arg=arg, typeName=ast.TypeName(names=(_s("text"),), typemod=-1))
            text, _ = self.expr(arg, scope)
            self.needs.add("pgc_quote_literal")
            quoted: ast.Node = _call("pgc_quote_literal", _cast(text, "varchar"))
            if name == "quote_nullable":
                quoted = ast.CoalesceExpr(args=(quoted, _str("NULL")))
            return quoted, TEXT
        if name in ("quote_literal", "quote_nullable"):
            raise self._no_function(name, [self.expr(a, scope)[1] for a in node.args or ()], node)
        pairs = self._unknown_args(name, [self.expr(a, scope) for a in node.args or ()])
        self._function_exists(name, node, [t for _, t in pairs], [a for a, _ in pairs])
        if name == "format":
            # each value by its type's output function (PostgreSQL's text_format), printed
            # as its specifier says (_format_argument); printf would print DuckDB's forms
            pairs[1:] = [(self._text_of(a, t, scope), TEXT) for a, t in pairs[1:]]
        if name in ("concat", "concat_ws"):  # each value by its type's output function
            if any(isinstance(a, ast.RowExpr) for a, _ in pairs):  # (DuckDB prints a struct its way)
                raise self.fail("0A000", f"{name}() of a row value is not supported by walsender-proxy", node)
            pairs = [
                (float_exprs.printed(a, t.name), t) if t is not None and t.name in float_exprs.FLOATS
                else (row, TEXT) if t is None and (row := self._whole_row_text(a, scope)) is not None
                else (a, t) if t is None or t == UNKNOWN or t.name in TEXTISH
                else (_printed(a, t), TEXT)
                for a, t in pairs
            ]  # fmt: skip
        if name == "array_to_string" and pairs:
            pairs[0] = (float_exprs.element_texts(pairs[0][0], pairs[0][1] and pairs[0][1].name), pairs[0][1])
        if name not in KEEPS_PADDING:
            pairs = [unpadded(*p) for p in pairs]
        args = [p[0] for p in pairs]
        types = [p[1] for p in pairs]
        if name == "pg_lsn" and len(args) == 1:  # (numeric_pg_lsn, the one pg_lsn(…))
            t0 = types[0]
            if t0 is not None and t0.name not in (*numeric_exprs.INTEGERS, "numeric", "unknown"):
                raise self._no_function(name, types, node)
            if t0 == UNKNOWN:  # (a type's name called on an unknown literal is its input: pg_lsn_in)
                if _str_const(node.args[0]) is not None:
                    return self._pg_lsn_const(node.args[0]), T("pg_lsn")
                self.needs.add("pgc_pg_lsn_in")
                return _call("pgc_pg_lsn_in", _cast(args[0], "VARCHAR")), T("pg_lsn")
            self.needs.add("pgc_pg_lsn_numeric")
            return _call("pgc_pg_lsn_numeric", _cast(args[0], "VARCHAR")), T("pg_lsn")
        if name == "date_bin":
            binned = datetime_bin.call_of(args, [t.name if t is not None else None for t in types])
            if binned is None:
                raise self._no_function(name, types, node)
            return binned[0], T(binned[1])
        if name in datetime_make.FUNCTIONS:
            made = datetime_make.call_of(name, args, [t.name if t is not None else None for t in types])
            if made is None:
                raise self._no_function(name, types, node)
            return made, T(datetime_make.result_type(name))
        if name in formatting_udfs.FUNCTIONS and len(args) == 2:  # formatting.c's functions
            try:
                fmt_call = formatting_udfs.rewrite(name, [_operand(a, t) for a, t in pairs])
            except PgError as e:
                raise self.fail(e.sqlstate, e.message, node, hint=e.hint) from None
            if fmt_call is None:
                raise self._no_function(name, types, node)
            return fmt_call[0], NUMERIC_TEXT if fmt_call[1] == "numeric" else T(fmt_call[1])
        if (
            name in bytea_text.SIGNATURES and node.over is None
            and (name not in bytea_text.SHARED or (pairs and pairs[0][1] is not None and pairs[0][1].name == "bytea"))
        ):  # encode.c's, unistr and bytea's string functions
            return self._fixed_signature(name, bytea_text.SIGNATURES[name], pairs, node)
        if name in regex_funcs.FUNCTIONS and node.over is None:  # regexp.c's, through pg_regex
            regex_call = self._regex_call(name, pairs, node)
            if regex_call is not None:
                return regex_call
        if node.over is not None or name == "count" or name in window_frames.WINDOW_FUNCTIONS:
            try:
                window_frames.window_call(name, node, name in PG15_FUNCTIONS)
            except PgError as e:
                raise self.fail(e.sqlstate, e.message, node) from None
            if node.over is not None:
                args = window_frames.guard_arguments(name, args)
        for attr in ("agg_order", "agg_filter", "over"):
            v = getattr(node, attr, None)
            if v is not None:
                setattr(node, attr, self.condition(v, scope) if attr == "agg_filter" else self.generic(v, scope))
        if node.agg_distinct or name in ("min", "max"):  # (json has no equality nor ordering)
            self._no_json_compare("DISTINCT" if node.agg_distinct else f"{name}()", node, *types)
            if node.agg_distinct and any(self._is_jsonb(a, t, scope) for a, t in zip(args, types, strict=True)):
                # count(DISTINCT j) counts jsonb's equality classes; another aggregate keeps
                # its values, so they must be the only text of their class (jsonb_ops.grouped)
                udf = jsonb_ops.UDF_SORT_KEY if name == "count" else jsonb_ops.UDF_GROUPED
                args = [_call(udf, a) if self._is_jsonb(a, t, scope) else a for a, t in zip(args, types, strict=True)]
                node.args = tuple(args)
        if name in ("min", "max") and any(t is not None and _enum_domain(t) for t in types):
            raise self._no_function(name, types, node)  # (min(anyenum) takes no domain)
        numeric = self._numeric_call(name, node, args, types)
        if numeric is not None:
            return numeric
        float_agg = self._float_aggregate(name, node, args, types, scope)
        if float_agg is not None:
            return float_agg
        floating = self._floats(float_exprs.function, node, node, name, [_operand(a, t) for a, t in zip(args, types, strict=True)])
        if floating is not None:
            return floating
        if (
            name in ("substr", "substring")
            and len(args) in (2, 3)
            and (types[0] is None or types[0].name in TEXTISH)
            and all(t is not None and t.name in ("int2", "int4", "int8") for t in types[1:])
        ):  # PostgreSQL's positions (a start below 1 counts from before the string)
            target = f"pgc_substr{len(args)}"
            self.needs.add(target)
            return _call(target, *args), TEXT
        if name == "timezone" and len(args) == 2 and types[1] == UNKNOWN and _str_const(args[1]) is not None:
            # ('…' AT TIME ZONE z: the literal is a timestamptz, timezone(text, timestamptz)'s)
            stamp = ast.TypeCast(arg=args[1], typeName=ast.TypeName(names=(_s("timestamptz"),), typemod=-1))
            args[1], types[1] = self.expr(stamp, scope)
            node.args = tuple(args)
        if name == "timezone" and len(args) == 2 and types[0] is not None and types[0].name in TEXTISH | {"unknown"}:
            zone = _str_const(args[0])
            fixed = session_zone.at_posix_zone(zone, args[1], types[1].name) if zone is not None and types[1] is not None else None
            if fixed is not None:
                return fixed[0], T(fixed[1])
            if zone is not None and _posix_zone(zone):
                raise self.fail("0A000", f'time zone "{zone}" (a POSIX-style offset) is not supported by walsender-proxy', node)
            if zone is None:  # (checked row by row)
                self.needs.add("pgc_tz_guard")
                args = [_call("pgc_tz_guard", args[0]), args[1]]
                node.args = tuple(args)
        if name in ("now", "transaction_timestamp", "statement_timestamp") and not args:
            return _clock(STATEMENT_CLOCK if name == "statement_timestamp" else TRANSACTION_CLOCK), T("timestamptz")
        if name == "octet_length" and len(args) == 1 and (types[0] is None or types[0].name in TEXTISH):
            # (textoctetlen counts UTF-8 bytes, character(n)'s padding included; DuckDB's
            # octet_length takes only BLOB and BIT)
            return _cast(_call("strlen", args[0]), "integer"), T("int4")
        if name in ("length", "octet_length") and len(args) == 1 and types[0] is not None and types[0].name == "bytea":
            return _cast(_call("octet_length", args[0]), "integer"), T("int4")  # (byteaoctetlen)
        if name == "abs" and len(args) == 1 and types[0] is not None and types[0].name in ("int2", "int4", "int8"):
            self.needs.add(f"pgc_abs_{types[0].name}")
            return _call(f"pgc_abs_{types[0].name}", args[0]), types[0]
        if name in ("lag", "lead") and len(types) == 3 and _wider_default(types[0], types[2]):
            # (PostgreSQL's anycompatible makes both the common type; DuckDB casts the default)
            raise self.fail("0A000", f"{name}() with a default of another type than its value is not supported by walsender-proxy", node)
        if name == "string_to_table":  # (string_to_array's elements)
            if len(args) not in (2, 3) or not all(t is None or t.name in TEXTISH for t in types):
                raise self._no_function(name, types, node)
            self.needs.add(f"pgc_string_to_array{len(args)}")
            return _call("unnest", _call(f"pgc_string_to_array{len(args)}", *args)), TEXT
        if name == "string_to_array" and len(args) in (2, 3):
            target = f"pgc_string_to_array{len(args)}"
            self.needs.add(target)
            return _call(target, *args), T("_text")
        if name == "array_to_string" and len(args) in (2, 3):
            return self._array_to_string(node, args, types[0]), TEXT
        if name in ("gcd", "lcm") and len(args) == 2 and all(t is not None and t.name in ("int2", "int4", "int8") for t in types):
            if all(t is not None and t.name == "int2" for t in types):  # (int4 and int8 fit alike)
                raise self.fail(
                    "42725", f"function {name}(smallint, smallint) is not unique", node,
                    hint="Could not choose a best candidate function. You might need to add explicit type casts.",
                )  # fmt: skip
            wide = any(t is not None and t.name == "int8" for t in types)  # (PostgreSQL's overflow checks)
            target = f"pgc_{name}{8 if wide else 4}"
            self.needs.add(target)
            return _call(target, *args), T("int8" if wide else "int4")
        if name == "to_hex" and len(args) == 1 and types[0] is not None and types[0].name in ("int2", "int4"):
            self.needs.add("pgc_to_hex4")  # an int4's two's complement has 8 digits
            return _call("pgc_to_hex4", args[0]), TEXT
        if name == "width_bucket":
            if len(args) == 2 and types[1] == UNKNOWN and _str_const(args[1]) is not None and types[0] is not None and not types[0].is_array:
                # (a quoted thresholds array takes the operand's type)
                args[1] = self._array_literal(_str_const(args[1]) or "", TEXT if types[0] == UNKNOWN else types[0], node)
                types[1] = T("_" + ("text" if types[0] == UNKNOWN else types[0].name))
            try:
                bucket = width_bucket.rewrite([_operand(a, t) for a, t in zip(args, types, strict=True)], array_exprs.depth(types[1].name) if len(types) == 2 and types[1] is not None else 0)
            except PgError as e:
                raise self.fail(e.sqlstate, e.message, node) from None
            if bucket is None:
                raise self._no_function(name, types, node)
            self.needs.update(bucket[2])
            return bucket[0], T(bucket[1])
        if name in array_exprs.FUNCTIONS and not any(t is not None and (t.zero_based or t.name in _VECTORS) for t in types):
            arrays = self._array_function(name, node, args, types)
            if arrays is not None:
                return arrays
        if any(t is not None and t.text_numeric for t in types):
            keyed = self._text_numeric_call(name, node, args, types)
        elif name in ("min", "max") and len(args) == 1 and types[0] is not None and types[0].name == "pg_lsn":
            keyed = [args[0], _lsn_int(copy.deepcopy(args[0]))]  # (the LSN's number, not its text)
        elif name in ("min", "max") and len(args) == 1 and types[0] is not None and array_exprs.depth(types[0].name) > 1:
            k = array_exprs.depth(types[0].name)  # (array_cmp's order: elements, then dimensions)
            self.needs.add(f"pgc_arr_sortkey{k}")
            keyed = [args[0], array_exprs.sort_key(copy.deepcopy(args[0]), k)]
        else:
            keyed = None
        if keyed is not None:  # min/max: arg_min/arg_max by the key, the value as it is
            node.args = tuple(keyed)
            node.funcname = (_s("arg_" + name),)
            return node, types[0]
        if name in self.server_udfs:
            self.used_udfs = True
            self.server_values.add(name)
            lead = [_int(a) if isinstance(a, int) else _str(str(a)) for a in self.udf_args]
            ret = SERVER_RETURNS.get(name) or SERVER_VALUES.get(name, (None, None))[0]
            args = self._server_udf_args(name, node, args, types, scope)
            udf = self.server_udfs[name]
            if name in ADVISORY:  # one bigint key, or two int4
                if len(args) not in (1, 2):
                    raise self._no_function(name, types, node)
                udf += f"{ARITY_SUFFIX}{len(args)}"
            if name in SEQUENCE_FUNCTIONS:
                args = self._sequence_args(name, node, args, types)
                if name == "setval":
                    udf += f"{ARITY_SUFFIX}{len(args)}"
            return _call(udf, *lead, *args), T(ret) if ret else None
        if name in SERVER_ONLY:
            raise ServerFunctionError(name, self._pos(node))
        if name in SERVER_VALUES:
            if args:
                raise self._no_function(name, types, node)
            pg_t, duck = SERVER_VALUES[name]
            self.server_values.add(name)
            self.needs.add(pgcatalog.SERVER_VALUES)
            sel = ast.SelectStmt(
                targetList=(ast.ResTarget(val=_colref("v")),),
                fromClause=(
                    ast.RangeVar(relname=pgcatalog.SERVER_VALUES, inh=True, relpersistence="p"),
                ),
                whereClause=_op("=", _colref("k"), _str(name)),
                op=SetOperation.SETOP_NONE,
            )
            sub = ast.SubLink(subLinkType=SubLinkType.EXPR_SUBLINK, subLinkId=0, subselect=sel)
            return _cast(sub, duck), T(pg_t)
        fn = EMULATED.get(name)
        if fn is not None:
            return self._emulated(name, fn, node, _qualify(args, scope), types)
        if name.startswith("pg_") or name in DIVERGENT or (name not in duckdb_functions() and name not in _DUCKDB_NAMES) or name not in PG15_FUNCTIONS:
            # (a function only DuckDB has — first(), list_value(), strftime() — is none of
            # PostgreSQL's: 42883 as PostgreSQL says, never DuckDB's answer)
            if name in PG15_FUNCTIONS and len(node.funcname) <= 2:
                # PostgreSQL has it; DuckDB has none or one that answers differently
                raise self.fail("0A000", f"function {name}() is not supported by walsender-proxy", node)
            raise self._no_function(name, types, node)
        if node.func_variadic:
            # (DuckDB's parser has no VARIADIC: an array spread over a variadic parameter is
            # taken apart only by the functions that handle it above)
            raise self.fail("0A000", f"VARIADIC in a call of {name}() is not supported by walsender-proxy", node)
        node.funcname = (_s(_DUCKDB_NAMES.get(name, name)),)
        if name in ("upper", "lower"):  # (the C locale's: ASCII letters only)
            if len(types) != 1 or (types[0] is not None and types[0] != UNKNOWN and types[0].name not in TEXTISH):
                raise self._no_function(name, types, node)
            self.needs.add(f"pgc_{name}_c")
            node.funcname = (_s(f"pgc_{name}_c"),)
        node.args = tuple(args)
        if name == "to_timestamp" and len(args) == 1 and types[0] is not None and types[0].name in (*numeric_exprs.INTEGERS, *numeric_exprs.FLOATS, "numeric"):
            # float8_timestamptz: ±Infinity are the infinite timestamps, NaN and values
            # outside the timestamp range 22008 (DuckDB's epoch conversion has neither)
            self.needs.add("pgc_to_timestamp")
            return _call("pgc_to_timestamp", _cast(args[0], "DOUBLE")), T("timestamptz")
        if node.agg_distinct and not node.agg_order and args and name in ("array_agg", "string_agg"):
            # PostgreSQL sorts a DISTINCT aggregate's input: the values come out in order
            node.agg_order = (ast.SortBy(node=copy.deepcopy(args[0]), sortby_dir=SortByDir.SORTBY_DEFAULT, sortby_nulls=0),)
        if name == "string_agg" and len(args) == 2:
            return self._string_agg(node, args, types)
        if name == "unnest" and len(args) == 1 and types[0] is not None and array_exprs.depth(types[0].name) > 1:
            node.args = (array_exprs.elements(args[0], array_exprs.depth(types[0].name)),)
            return node, T(types[0].name.lstrip("_"))
        if name in ("unnest",):
            t = types[0].elem if types and types[0] is not None else None
            if t is not None and types[0] is not None and types[0].text_numeric:
                t = NUMERIC_TEXT
            return node, t
        if name == "array_agg":
            t = types[0] if types else None
            if t is not None and t.is_array and node.over is None:
                self.needs.add("pgc_array_agg_arrays")  # (one dimension more, PostgreSQL's checks)
                out: ast.Node = _call("pgc_array_agg_arrays", node)
                if array_exprs.depth(t.name) > 1:  # (and sub-arrays of one shape)
                    self.needs.add(f"pgc_array_agg_shapes{array_exprs.depth(t.name) + 1}")
                    out = _call(f"pgc_array_agg_shapes{array_exprs.depth(t.name) + 1}", out)
                return out, T("_" + t.name, text_numeric=t.text_numeric, enum_oid=t.enum_oid)
            return node, (
                T("_" + ("text" if t == UNKNOWN else t.name), text_numeric=t.text_numeric, enum_oid=t.enum_oid)
                if t is not None and not t.is_array
                else None
            )
        if name in SAME_AS_ARG:
            return node, types[0] if types else None
        if name == "sum" and types and types[0] is not None:
            if types[0].name in float_exprs.FLOATS:  # (float4's and float8's own type; DuckDB's sum is a DOUBLE)
                return (_cast(node, "real") if types[0].name == "float4" else node), types[0]
            return node, T("int8" if types[0].name in ("int2", "int4") else "numeric")
        ret = RETURNS.get(name)
        return node, T(ret) if ret else None

    def _string_agg(self, node: ast.FuncCall, args: list[Any], types: list[T | None]) -> tuple[ast.Node, T]:
        """string_agg of text or of bytea: a NULL delimiter is no delimiter (DuckDB's gives
        NULL), and bytea values are joined as bytes (DuckDB's takes text only)."""
        if types[0] is None or types[0].name != "bytea":
            node.args = (args[0], ast.CoalesceExpr(args=(args[1], _str(""))))
            return node, TEXT
        sep = args[1]
        if types[1] == UNKNOWN:  # (an unknown literal is bytea's input; NULL a NULL bytea)
            sep = _cast(_null(), "blob") if _str_const(sep) is None else _unknown_as(sep, UNKNOWN, "bytea")[0]
        elif types[1] is None or types[1].name != "bytea":
            raise self._no_function("string_agg", types, node)
        sep = ast.CoalesceExpr(args=(sep, _cast(_str(""), "blob")))
        # (joined as hex digits, whose order is the bytes' order: DISTINCT sorts them so)
        node.args = (_call("hex", args[0]), _call("hex", sep))
        if node.agg_distinct:
            node.agg_order = tuple(
                ast.SortBy(node=_call("hex", sb.node), sortby_dir=sb.sortby_dir, sortby_nulls=sb.sortby_nulls)
                for sb in node.agg_order or ()
            )
        return _call("unhex", node), T("bytea")

    def _array_to_string(self, node: ast.FuncCall, args: list[Any], t: T | None) -> ast.Node:
        """array_to_string over the elements' text as their output function prints it,
        every dimension flattened; element types whose DuckDB text differs are refused."""
        depth = len(t.name) - len(t.name.lstrip("_")) if t is not None and t.is_array else 0
        elem = t.name.lstrip("_") if t is not None else None
        arr = args[0]
        for _ in range(depth - 1):
            arr = _call("flatten", arr)
        if elem == "bool":
            self.needs.add("pgc_bool_list_text")
            arr = _call("pgc_bool_list_text", arr)
        elif t is not None and t.enum_oid and depth == 1:  # (the labels)
            arr = _cast(arr, "varchar", array=True)
        elif elem is None or elem not in (*TEXTISH, "int2", "int4", "int8", "oid", "date", "uuid", "aclitem", "float4", "float8"):  # (floats: their float8out text, made above)
            shown = _type_display(t) if t is not None else "an untyped array"
            raise self.fail("0A000", f"array_to_string() of {shown} is not supported by walsender-proxy", node)
        target = f"pgc_array_to_string{len(args)}"
        self.needs.add(target)
        return _call(target, arr, *args[1:])

    def _date_part(self, name: str, node: ast.FuncCall, scope: _Scope) -> tuple[ast.Node, T]:
        """EXTRACT (numeric) and date_part (float8) of a date, timestamp, time or interval
        as PostgreSQL computes them (datetime_parts); None when the value's type is not
        inferred (DuckDB's EXTRACT then answers: left as it was)."""
        value, t = self.expr(node.args[1], scope)
        if t is None or t == UNKNOWN:  # (as DuckDB has it)
            node.args = (node.args[0], value)
            if name == "date_part":
                node.funcname = (_s("date_part"),)
            return node, T("numeric" if name == "extract" else "float8")
        field = _str_const(node.args[0]) or ""
        try:
            out, pg_type = datetime_parts.extract(field, value, t.name, as_float=name == "date_part")
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, node) from None
        return out, NUMERIC_TEXT if pg_type == "numeric_text" else T(pg_type)

    def _numeric_call(
        self, name: str, node: ast.FuncCall, args: list[Any], types: list[T | None]
    ) -> tuple[ast.Node, T] | None:
        """A function or aggregate PostgreSQL resolves to its numeric version, computed
        exactly (numeric_math); None for the others."""
        if node.agg_star or node.agg_within_group or node.func_variadic:
            return None
        operands = [_operand(a, t) for a, t in zip(args, types, strict=True)]
        if name in numeric_exprs.AGGREGATES and len(args) == 1:
            return self._numeric_aggregate(name, node, operands[0])
        if node.over is not None or node.agg_filter is not None or node.agg_distinct:
            return None
        try:
            out = numeric_exprs.function(name, operands)
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, node) from None
        if out is None:
            return None
        return out[0], NUMERIC_TEXT if out[1] == "numeric" else T(out[1])

    def _numeric_aggregate(self, name: str, node: ast.FuncCall, arg: Operand) -> tuple[ast.Node, T] | None:
        """sum/avg/variance/stddev of integers or numeric as PostgreSQL computes them: exact
        sums, divided at select_div_scale. avg of DuckDB-exact sums divides their sum by
        their count; the others aggregate the values' text into a list."""
        udf = numeric_exprs.aggregate(name, arg)
        if udf is None:
            return None
        if arg.text and node.agg_distinct:
            return None  # (refused by _text_numeric_call: DISTINCT compares the text)

        def agg(fn: str, value: ast.Node) -> ast.FuncCall:
            return ast.FuncCall(
                funcname=(_s(fn),), args=(value,), agg_distinct=node.agg_distinct,
                agg_filter=copy.deepcopy(node.agg_filter), over=copy.deepcopy(node.over),
                funcformat=CoercionForm.COERCE_EXPLICIT_CALL,
            )  # fmt: skip

        if numeric_exprs.AGGREGATES[name] == "avg" and not arg.text:
            total = _cast(agg("sum", arg.node), "varchar")
            return _call(numeric_math.udf_name("avg"), total, agg("count", copy.deepcopy(arg.node))), NUMERIC_TEXT
        return _call(udf, agg("list", numeric_exprs.as_text(arg))), NUMERIC_TEXT

    def _float_aggregate(
        self, name: str, node: ast.FuncCall, args: list[Any], types: list[T | None], scope: _Scope
    ) -> tuple[ast.Node, T] | None:
        """sum/avg/variance/stddev of floats and the float8 covariance and regression
        aggregates as PostgreSQL computes them (float_aggs); None for the others. Their
        rows come in PostgreSQL's order only from VALUES, functions and plain subqueries
        of them (_rows_in_order): a user table's rows come here in another order than
        its heap's."""
        ordered = not self.user_tables and scope.rows_in_order
        operands = [_operand(a, t) for a, t in zip(args, types, strict=True)]
        try:
            out = float_aggs.aggregate(node, name, operands, float_exprs.as_float8, ordered)
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, node) from None
        return None if out is None else (out[0], T(out[1]))

    def _array_function(self, name: str, node: ast.FuncCall, args: list[Any], types: list[T | None]) -> tuple[ast.Node, T | None] | None:
        """An array function of array_exprs (PostgreSQL's shapes, errors and NULL rules)."""
        if name == "array_fill" and len(args) > 1:
            for i in range(1, len(args)):  # (a quoted dimension array: its length makes the type)
                lit = _str_const(args[i])
                if lit is not None and types[i] == UNKNOWN:
                    args[i], types[i] = self._array_literal(lit, T("int4"), node), T("_int4")
        if name in ("array_remove", "array_replace", "array_positions") and any(t is not None and t.text_numeric for t in types):
            self._no_text_numeric(f"{name}()", node, *types)
        try:
            done = array_exprs.function(
                name, args, [t.name if t is not None else None for t in types],
                lambda: self._no_function(name, types, node), array_exprs.constant_length,
            )  # fmt: skip
        except PgError as e:
            raise self.fail(e.sqlstate, e.message, node) from None
        if done is None:
            return None
        self.needs.update(done.needs)
        t0 = types[0] if types else None
        if t0 is not None and done.type == t0.name:
            return done.node, t0
        return done.node, T(done.type)

    def _text_numeric_call(self, name: str, node: ast.FuncCall, args: list[Any], types: list[T | None]) -> list[Any] | None:
        """A function of a text-held numeric value: min/max by the value's key (the value
        itself comes back, with its own display scale); the ones that take the value's text
        (count, format, concat) as they are; anything else refused."""
        if name == "count" and not node.agg_distinct:
            return None
        if name == "count" and len(args) == 1 and node.agg_order is None:
            args[0] = _call(numeric_text.GROUPED_UDF, args[0])  # (count(DISTINCT x): of x's texts)
            return None
        if name in ("min", "max") and len(args) == 1 and not node.agg_distinct:
            return [args[0], self._numeric_key(args[0], types[0])]
        if name in _TAKES_TEXT and name != "count":
            return None
        if name in ("array_agg", "unnest") and not node.agg_distinct and node.agg_order is None and node.over is None:
            return None  # (the values as they are; the result keeps the text-held flag)
        self._no_text_numeric(f"{name}()" + (" with DISTINCT" if node.agg_distinct else ""), node, *types)
        return None

    def _emulated(
        self, name: str, fn: Any, node: ast.FuncCall, args: list[ast.Node], types: list[T | None]
    ) -> tuple[ast.Node, T | None]:
        if node.func_variadic:  # (none of these spreads an array over its parameters)
            raise self.fail("0A000", f"VARIADIC in a call of {name}() is not supported by walsender-proxy", node)
        lo, hi = fn.arity
        if not lo <= len(args) <= hi:
            raise self._no_function(name, types, node)
        ret = T(fn.ret) if fn.ret else None
        special = fn.special or ""
        if name == "pg_size_pretty" and types[0] is not None and types[0].name == "numeric":
            # pg_size_pretty(numeric), exactly over the value's text (numeric_math)
            return _call(numeric_math.udf_name("size_pretty"), numeric_exprs.as_text(_operand(args[0], types[0]))), ret
        if special == "set_config":
            key, value, local = (_str_const(args[0]), _str_const(args[1]), args[2])
            is_local = (
                isinstance(local, ast.A_Const)
                and isinstance(local.val, ast.Boolean)
                and local.val.boolval
            )
            if key is not None:
                self.set_configs.append((key, value, is_local))
                if value is not None:
                    return _str(shown_once_set(key, value, literals.current_date_order().partition(" ")[0])), ret
            return _cast(args[1], "varchar"), ret
        if special == "false":
            return _bool(False), ret
        if special == "utf8":
            return _str("UTF8"), ret
        if special == "null_text" and name == "pg_get_viewdef" and args:
            rel = args[0]
            if types[0] == UNKNOWN or (types[0] is not None and types[0].name in TEXTISH):
                self.needs.add("pgc_regclass_in")  # (pg_get_viewdef(text) reads it when run)
                rel = _call("pgc_regclass_in", rel)
            self.needs.add("pgc_viewdef")
            return _call("pgc_viewdef", rel), ret
        if special == "null_text":
            return _cast(_null(), "varchar"), ret
        if special == "zero_bigint":
            zero = _cast(_int(0), "bigint")
            if name != "pg_database_size" and args and (types[0] == UNKNOWN or (types[0] is not None and types[0].name in TEXTISH)):
                rel = self._reg_in("pgc_regclass_in", args[0], types[0], node)  # (42P01 for none)
                return ast.CaseExpr(args=(ast.CaseWhen(expr=ast.NullTest(arg=rel, nulltesttype=NullTestType.IS_NULL), result=_null()),), defresult=zero), ret
            return zero, ret
        if special == "typeof":
            t = types[0]
            # (a domain is what a column or a cast gives; an expression over it is of its base type)
            declared = t.domain_oid if t is not None and isinstance(node.args[0], ast.ColumnRef | ast.TypeCast | ast.CoalesceExpr | ast.CaseExpr | ast.MinMaxExpr) else 0
            oid = 705 if t == UNKNOWN else (declared or _type_oid(t)) if t is not None else None  # ('x', NULL: unknown)
            if oid is None:
                raise self.fail("0A000", "pg_typeof of an expression of unknown type", node)
            out = _cast(_int(oid), "uinteger")
            if _has_call(args[0]):  # (kept: pg_typeof(sum(x)) is still an aggregate query)
                out = ast.CaseExpr(args=(ast.CaseWhen(expr=ast.NullTest(arg=args[0], nulltesttype=NullTestType.IS_NULL), result=out),), defresult=copy.deepcopy(out))
            return out, T("regtype")
        if special == "lsn_diff":
            return _lsn_difference(*args), ret
        if special == "format":
            fmt = _str_const(args[0])
            if fmt is None:
                raise self.fail("0A000", "format() with a format string that is not a constant is not supported", node)
            try:
                needed = format_arguments(fmt)
            except PgError as e:
                raise self.fail(e.sqlstate, e.message, node) from None
            if needed > len(args) - 1:
                raise self.fail("22023", "too few arguments for format()", node)
            printf, plan = positional_format(fmt)
            return _call("printf", _str(printf), *(self._format_argument(args[n], kind) for n, kind in plan)), ret
        if special == "srf_in_select":
            if len(args) in (2, 3) and any(t is not None and t.name == "numeric" for t in types):
                return _call("unnest", self._numeric_series(args, types, node)), NUMERIC_TEXT
            t = types[0] if types else None
            if t is not None and t.name in ("int2", "unknown"):
                t = T("int4")
            series = _call("unnest", self._series_list(args, types))
            return (_cast(series, "INTEGER") if t is not None and t.name == "int4" else series), t  # (DuckDB's are BIGINT)
        if special == "list_set":  # a set-returning function whose macro gives its set as a list
            self.needs.add(fn.target)
            return _call("unnest", _call(fn.target, *args)), ret
        if special == "expandarray":
            # information_schema._pg_expandarray(a): a set of (x, n) records, one per element
            self.needs.add(fn.target)
            return _call("unnest", _call(fn.target, args[0])), None
        if special == "array_bound":
            zero = bool(types[0] and types[0].zero_based)
            target = fn.target + ("0" if zero else "")
            self.needs.add(target)
            return _call(target, *args), ret
        if special.startswith("procdef:"):
            self.needs.add("pgc_procdef")
            return _call("pgc_procdef", args[0], _str(special.split(":")[1])), ret
        if special == "privilege":
            return self._privilege(name, node, args, types), ret
        if special == "obj_description":
            target = "pgc_obj_description" if len(args) == 2 else "pgc_obj_description1"
            self.needs.add(target)
            return _call(target, *args), ret
        keep = fn.keep if fn.keep is not None else len(args)
        for dropped in args[keep:]:  # pg_get_constraintdef(oid, $1): $1 goes nowhere
            self._forget_params(dropped)
        call_args = list(args[:keep])
        if name in _REGCLASS_FIRST and call_args and (types[0] == UNKNOWN or (types[0] is not None and types[0].name in TEXTISH)):
            # ('t' is regclass input: a missing one is 42P01)
            call_args[0] = self._reg_in("pgc_regclass_in", call_args[0], types[0], node)
        missing = max(0, (fn.keep or fn.arity[1]) - len(call_args))
        for lit in fn.pad[len(fn.pad) - missing :] if missing else ():
            call_args.append(_bool(lit == "true") if lit in ("true", "false") else _int(int(lit)))
        if fn.target.startswith("pgc_"):
            self.needs.add(fn.target)
        return _call(fn.target, *call_args), ret

    def _forget_params(self, node: Any) -> None:
        if isinstance(node, ast.ParamRef):
            self.param_uses[node.number] = self.param_uses.get(node.number, 1) - 1
        elif isinstance(node, ast.Node):
            for name in node:
                self._forget_params(getattr(node, name))
        elif isinstance(node, tuple | list):
            for x in node:
                self._forget_params(x)

    # -- output ----------------------------------------------------------------------------
    def wrap_output(self, stmt: ast.SelectStmt, cols: list[tuple[str, T | None]]) -> ast.SelectStmt:
        """Apply PostgreSQL's output formats (reg* names, int2vector ``1 2``) outside the query.

        Outside, so that ORDER BY/DISTINCT inside still see OIDs and lists, as PostgreSQL's
        do.
        """
        if not any(t is not None and t.name in _OUT_FORMAT for _, t in cols):
            return stmt
        inner_names = [f"c{i}" for i in range(len(cols))]
        targets = []
        for (name, t), inner in zip(cols, inner_names, strict=True):
            ref: ast.Node = _colref("wpx_out", inner)
            fmt = _OUT_FORMAT.get(t.name) if t is not None else None
            if fmt == "vector":
                ref = _call("array_to_string", ref, _str(" "))
            elif fmt is not None:
                self.needs.add(fmt)
                ref = _call(fmt, ref)
            targets.append(ast.ResTarget(name=name, val=ref))
        return ast.SelectStmt(
            targetList=tuple(targets),
            fromClause=(
                ast.RangeSubselect(
                    lateral=False,
                    subquery=stmt,
                    alias=ast.Alias(
                        aliasname="wpx_out", colnames=tuple(_s(n) for n in inner_names)
                    ),
                ),
            ),
            op=SetOperation.SETOP_NONE,
        )

    def deparse(self, stmt: ast.Node) -> str:
        text = nodes.deparse(stmt)
        for ph, sub in self.placeholders.items():
            text = text.replace(ph, f"({sub})")
        return text


def _wider_default(value: T | None, default: T | None) -> bool:
    """lag/lead's default of a type their common type would widen the value to (an
    integer value, a numeric or wider integer default)."""
    if value is None or default is None or default == UNKNOWN:
        return False
    order = ("int2", "int4", "int8", "numeric", "float4", "float8")
    if value.name in order and default.name in order:
        return order.index(default.name) > order.index(value.name)
    return False


def _int_value(node: Any) -> int | None:
    """An integer constant's value (a signed literal too), else None."""
    if isinstance(node, ast.A_Const) and isinstance(node.val, ast.Integer):
        return node.val.ival
    if (
        isinstance(node, ast.A_Expr)
        and node.kind == A_Expr_Kind.AEXPR_OP
        and node.lexpr is None
        and node.name
        and node.name[-1].sval in ("-", "+")
    ):
        inner = _int_value(node.rexpr)
        return None if inner is None else (-inner if node.name[-1].sval == "-" else inner)
    return None


def _const_condition(cond: Any, arg: int | None, simple: bool) -> bool | None:
    """A CASE condition's value when it is a constant PostgreSQL folds (a boolean, a
    comparison of integer constants; ``CASE 1 WHEN 0``), else None."""
    if simple:
        v = _int_value(cond)
        return None if arg is None or v is None else arg == v
    if isinstance(cond, ast.A_Const) and isinstance(cond.val, ast.Boolean):
        return bool(cond.val.boolval)
    if isinstance(cond, ast.A_Expr) and cond.kind == A_Expr_Kind.AEXPR_OP and cond.name:
        a, b = _int_value(cond.lexpr), _int_value(cond.rexpr)
        if a is None or b is None:
            return None
        ops = {"=": a == b, "<>": a != b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}
        return ops.get(cond.name[-1].sval)
    return None


def _one_column(refs: Sequence[Any]) -> bool:
    """Column references that name one column (``x`` and ``t.x``: an unqualified name
    resolved, or PostgreSQL would have said it is ambiguous)."""
    if not all(isinstance(r, ast.ColumnRef) and all(isinstance(f, ast.String) for f in r.fields) for r in refs):
        return False
    paths = {tuple(f.sval for f in r.fields) for r in refs}
    if len({p[-1] for p in paths}) != 1:
        return False
    return len({p[:-1] for p in paths if len(p) > 1}) <= 1


def _lsn_difference(a: ast.Node, b: ast.Node) -> ast.Node:
    """The bytes between two LSNs, exactly (pg_lsn_mi, pg_wal_lsn_diff: a numeric)."""
    return _cast(_op("-", _cast(_lsn_int(a), "hugeint"), _cast(_lsn_int(b), "hugeint")), "DECIMAL", typmods=(38, 0))


def _lsn_int(node: ast.Node) -> ast.Node:
    def part(i: int) -> ast.Node:
        hexa = _op(
            "||", _str("0x"), _call("split_part", _cast(node, "varchar"), _str("/"), _int(i))
        )
        return _cast(hexa, "ubigint")

    return _op("+", _op("<<", part(1), _int(32)), part(2))


def _rel_types(rel: _Rel) -> list[tuple[str, T | None]]:
    """A relation's columns with their types (a user table's as stored)."""
    if rel.declared is not None:
        return [(n, _lake_t(ct, stored=True)) for n, ct in rel.declared.items()]
    return list(rel.columns or ())


#: Functions that take a value's text as PostgreSQL's output function prints it.
_TAKES_TEXT = frozenset({
    "count", "format", "concat", "concat_ws", "quote_literal", "quote_nullable", "pg_typeof", "num_nulls",
    "num_nonnulls", "pg_size_pretty",
})  # fmt: skip


#: pglast's LockClauseStrength, as PostgreSQL's messages name it.
_LOCK_STRENGTH = {1: "FOR KEY SHARE", 2: "FOR SHARE", 3: "FOR NO KEY UPDATE", 4: "FOR UPDATE"}


def _set_operation_arms(stmt: ast.SelectStmt) -> Iterator[ast.SelectStmt]:
    if stmt.op == SetOperation.SETOP_NONE:
        yield stmt
    else:
        yield from _set_operation_arms(stmt.larg)
        yield from _set_operation_arms(stmt.rarg)


def _union_all(stmt: ast.SelectStmt) -> bool:
    if stmt.op == SetOperation.SETOP_NONE:
        return True
    return stmt.op == SetOperation.SETOP_UNION and bool(stmt.all) and _union_all(stmt.larg) and _union_all(stmt.rarg)


def _text_guard(t: T | None, *, key: bool = False) -> str | None:
    """The UDF that lets values of type ``t`` be grouped or deduplicated by their text
    (refusing the values whose text is not their equality class's only one): jsonb's and
    an unconstrained numeric's; None for a type DuckDB compares as PostgreSQL does.
    ``key``: its volatile twin, for a GROUP BY key or a SELECT DISTINCT value."""
    if t is None:
        return None
    if t.text_numeric:
        return numeric_text.GROUPED_KEY_UDF if key else numeric_text.GROUPED_UDF
    if t.name == "jsonb":
        return jsonb_ops.UDF_GROUPED_KEY if key else jsonb_ops.UDF_GROUPED
    return None


def _guarded_kind(guard: str) -> str:
    return "jsonb" if guard in (jsonb_ops.UDF_GROUPED, jsonb_ops.UDF_GROUPED_KEY) else "unconstrained numeric"


def _numeric_branches(pairs: Sequence[tuple[Any, T | None]]) -> list[ast.Node] | None:
    """The branches of one result (CASE, COALESCE, a VALUES column) as exact numeric text
    when PostgreSQL's common type is numeric and DuckDB would unify them otherwise: into a
    DECIMAL of one scale (``COALESCE(d, 0)`` would print 0.00) or not at all (text and
    DECIMAL). None when the result is not numeric or every branch is already text."""
    types = [t for _, t in pairs]
    if not any(t is not None and t.name == "numeric" for t in types):
        return None
    if not all(t is not None and (t.name in ("numeric", "unknown") or t.name in numeric_exprs.INTEGERS) for t in types):
        return None
    if all(t is not None and t.text_numeric for t in types):
        return None
    if _one_scale(pairs):
        return None  # DECIMALs (and integers) of one scale: DuckDB's common DECIMAL keeps it
    return [numeric_exprs.as_text(_operand(n, t)) for n, t in pairs]


def _unknown_operand_type(op: str, known: T | None) -> str | None:
    """The type an untyped operand of ``known op unknown`` is read as: ``known``'s own where
    that operator exists (PostgreSQL's first guess), else the one operator of that name
    taking ``known`` (a time or timestamp plus an interval, an interval times a float8);
    None where PostgreSQL's choice is not one of these."""
    if known is None or known == UNKNOWN or known.is_array:
        return None
    name = known.name
    if name in _NUMERIC_ORDER:
        ok = op in _ARITHMETIC and not (op == "%" and name in ("float4", "float8"))
        return name if ok else None
    if name in ("date", "time", "timestamp", "timestamptz", "timetz") and op == "-":
        return name
    if name in ("time", "timestamp", "timestamptz", "timetz") and op == "+":
        return "interval"
    if name == "interval":
        return name if op in ("+", "-") else "float8" if op in ("*", "/") else None
    return None


def _array_of_common(array: T, other: T | None, *, array_first: bool = True) -> T:
    """The type of ``array || other`` (anycompatiblearray): ``array``'s, its elements
    becoming the common type of both sides' elements where common_type knows them
    (``int[] || float8`` is float8[])."""
    if other is None or other == UNKNOWN or array.zero_based or other.zero_based:
        return array
    elem, o = array.name.lstrip("_"), other.name.lstrip("_")  # (of any dimension)
    try:
        common = common_type.select_common([elem, o] if array_first else [o, elem])
    except (common_type.Mismatch, common_type.NoConversion):
        return array
    if common is None or common == elem:
        return array
    return T(array.name[: len(array.name) - len(elem)] + common)


def _float_branches(pairs: Sequence[tuple[Any, T | None]]) -> tuple[list[ast.Node], T] | None:
    """The branches of one result (CASE, COALESCE, GREATEST/LEAST) converted to float4 or
    float8 when that is PostgreSQL's common type of them and some branch is numeric
    (DuckDB would refuse text and DOUBLE, or keep a DECIMAL). None otherwise."""
    types = [t for _, t in pairs]
    names = {t.name for t in types if t is not None and t != UNKNOWN and not t.is_array}
    if not names & {"float4", "float8"} or "numeric" not in names or not names <= set(_NUMERIC_ORDER):
        return None
    if any(t is None or t.is_array for t in types):
        return None
    target = "float8" if "float8" in names else "float4"
    return [float_exprs.as_float(_operand(n, t), target) for n, t in pairs], T(target)


def _one_scale(pairs: Sequence[tuple[Any, T | None]]) -> bool:
    """Whether every value is a DECIMAL or an integer of one known display scale (NULLs
    aside), so that DuckDB's common DECIMAL type prints each as PostgreSQL does."""
    scales = set()
    for node, t in pairs:
        if t is None or t.text_numeric:
            return False
        if t == UNKNOWN:
            if not (isinstance(node, ast.A_Const) and node.isnull):
                return False
            continue
        scales.add(0 if t.name in numeric_exprs.INTEGERS else t.scale)
    return len(scales) <= 1 and None not in scales


def _operand(node: Any, t: T | None) -> Operand:
    return Operand(node, None if t is None else t.name, t is not None and t.text_numeric)


#: Parameter types whose ``$n`` is cast to its DuckDB type: a date/time operator between a
#: value and NULL is chosen by the operand types.
_DATETIME_PARAMS = frozenset({"date", "time", "timestamp", "timestamptz", "interval"})


def _lake_t(ctype: ColumnType, *, stored: bool = False) -> T:
    """The rewriter's type of a value of lake type ``ctype``; ``stored``: a value as the
    lake stores it (an unconstrained numeric column's is its text)."""
    text_numeric = stored and ctype.base.name == "numeric" and not ctype.is_array and ctype.arrow == pa.string()
    ps = ctype.numeric_precision_scale if ctype.base.name == "numeric" and not ctype.is_array else None
    scale = ps[1] if ps is not None and not text_numeric else None
    enum_oid = ctype.base.oid if ctype.is_enum else 0
    return T(("_" if ctype.is_array else "") + ctype.base.name, typmod=ctype.typmod, text_numeric=text_numeric, scale=scale, domain_oid=ctype.domain, enum_oid=enum_oid)


#: PostgreSQL's implicit casts among dates and timestamps: values of several of them resolve
#: to the last (select_common_type: date and timestamp are timestamp, either with
#: timestamptz is timestamptz), as DuckDB's common type of them is.
_DATETIME_ORDER = ("date", "timestamp", "timestamptz")


def _common(types: Sequence[T | None]) -> T | None:
    known = [t for t in types if t is not None]
    concrete = [t for t in known if t != UNKNOWN]
    names = {t.name for t in concrete}
    if len(names) > 1 and names <= set(_DATETIME_ORDER):
        return T(max(names, key=_DATETIME_ORDER.index))
    if len(names) > 1 and names <= set(_NUMERIC_ORDER):
        # (numeric category: each implicitly casts to the next, never back)
        return T(max(names, key=_NUMERIC_ORDER.index))
    if concrete:
        first = concrete[0]
        if first.domain_oid and not all(t is not None and t == first and t.domain_oid == first.domain_oid for t in types):
            return replace(first, domain_oid=0)  # (a domain is the result only when every input is it)
        return first
    if len(known) == len(types) and known:
        return UNKNOWN
    return None


#: Functions whose arguments at these positions PostgreSQL resolves to one common type
#: (anycompatible, anyelement, or one signature per type): an unknown literal takes it.
#: Casts between date/time types that go through a macro: (source, target) → macro.
_DATETIME_CASTS: Mapping[tuple[str, str], str] = {
    ("time", "interval"): "pgc_time_interval",
    ("interval", "time"): "pgc_interval_time",
    ("date", "timestamp"): "pgc_date_ts_guard",
    ("date", "timestamptz"): "pgc_date_ts_guard",
}

#: The privileges each has_*_privilege function knows (convert_*_priv_string), and
#: pg_has_role's modes.
_PRIVILEGE_NAMES: Mapping[str, tuple[str, ...]] = {
    "has_table_privilege": ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"),
    "has_sequence_privilege": ("USAGE", "SELECT", "UPDATE"),
    "has_column_privilege": ("SELECT", "INSERT", "UPDATE", "REFERENCES"),
    "has_any_column_privilege": ("SELECT", "INSERT", "UPDATE", "REFERENCES"),
    "has_schema_privilege": ("CREATE", "USAGE"),
    "has_database_privilege": ("CREATE", "CONNECT", "TEMPORARY", "TEMP"),
    "has_function_privilege": ("EXECUTE",),
    "has_tablespace_privilege": ("CREATE",),
    "has_type_privilege": ("USAGE",),
    "has_language_privilege": ("USAGE",),
    "has_server_privilege": ("USAGE",),
    "has_foreign_data_wrapper_privilege": ("USAGE",),
    "pg_has_role": ("MEMBER", "USAGE"),
}
#: The has_*_privilege functions of a relation, named by regclass input.
_RELATION_PRIVILEGES = frozenset({"has_table_privilege", "has_sequence_privilege", "has_column_privilege", "has_any_column_privilege"})
#: has_*_privilege answered from ACLs for any role (the others only for a superuser).
_ACL_PRIVILEGES = _RELATION_PRIVILEGES | {"has_schema_privilege", "has_database_privilege", "has_function_privilege", "pg_has_role"}

_SAME_TYPE_ARGS: dict[str, tuple[int, ...]] = {"generate_series": (0, 1), "lag": (0, 2), "lead": (0, 2)}
#: Array functions: (the array's position, positions of arguments of its element type).
_ELEMENT_ARGS: dict[str, tuple[int, tuple[int, ...]]] = {
    "array_position": (0, (1,)), "array_positions": (0, (1,)), "array_append": (0, (1,)),
    "array_prepend": (1, (0,)), "array_remove": (0, (1,)), "array_replace": (0, (1, 2)),
}

#: Expression kinds that compare their operands with an operator: an unknown operand takes
#: the other's type (NULLIF(a, b) and a IS DISTINCT FROM b compare with =).
_COMPARING = frozenset({A_Expr_Kind.AEXPR_OP, A_Expr_Kind.AEXPR_NULLIF, A_Expr_Kind.AEXPR_DISTINCT, A_Expr_Kind.AEXPR_NOT_DISTINCT})

#: The 0-based array types (their bounds stay with pgcatalog's macros).
_VECTORS = frozenset({"int2vector", "oidvector"})

_NUMERIC_ORDER = ["int2", "int4", "int8", "numeric", "float4", "float8"]
_ARITHMETIC = frozenset({"+", "-", "*", "/", "%"})


def _arith(a: T | None, b: T | None) -> T | None:
    """The type of an arithmetic result: no type modifier (``numeric(12,2) * 2`` is
    plain numeric in PostgreSQL, as its scale follows the operands)."""
    t = _arith_type(a, b)
    return T(t.name) if t is not None and t.typmod != -1 and not t.zero_based else t


_DATETIMES = frozenset({"date", "time", "timetz", "timestamp", "timestamptz", "interval"})


def _datetime_arith(op: str, a: T | None, b: T | None) -> T | None:
    """The result type of PostgreSQL's date/time operators (pg_operator), None when no
    operand is a date/time or the pair is not one of them."""
    x = a.name if a is not None and not a.is_array else None
    y = b.name if b is not None and not b.is_array else None
    if x not in _DATETIMES and y not in _DATETIMES:
        return None
    ints = ("int2", "int4", "int8")
    nums = (*ints, "float4", "float8", "numeric")
    table = {
        ("date", "-", "date"): "int4",
        ("date", "+", "int"): "date", ("date", "-", "int"): "date", ("int", "+", "date"): "date",
        ("date", "+", "interval"): "timestamp", ("date", "-", "interval"): "timestamp",
        ("interval", "+", "date"): "timestamp",
        ("date", "+", "time"): "timestamp", ("time", "+", "date"): "timestamp",
        ("timestamp", "-", "timestamp"): "interval", ("timestamptz", "-", "timestamptz"): "interval",
        # (a date or timestamp meeting a later one of date < timestamp < timestamptz casts to it)
        ("date", "-", "timestamp"): "interval", ("timestamp", "-", "date"): "interval",
        ("date", "-", "timestamptz"): "interval", ("timestamptz", "-", "date"): "interval",
        ("timestamp", "-", "timestamptz"): "interval", ("timestamptz", "-", "timestamp"): "interval",
        ("time", "-", "time"): "interval",
        ("interval", "+", "interval"): "interval", ("interval", "-", "interval"): "interval",
        ("interval", "*", "num"): "interval", ("num", "*", "interval"): "interval",
        ("interval", "/", "num"): "interval",
    }
    for t in ("timestamp", "timestamptz", "time", "timetz"):
        table[(t, "+", "interval")] = table[(t, "-", "interval")] = table[("interval", "+", t)] = t
    def kind(n: str | None, other: str | None) -> str | None:
        if n in ints and other == "date":
            return "int"
        if n in nums and other == "interval":
            return "num"
        return n
    out = table.get((kind(x, y) or "", op, kind(y, x) or ""))
    return T(out) if out is not None else None


def _arith_type(a: T | None, b: T | None) -> T | None:
    if a is None:
        return b if b is not None and b.name in _NUMERIC_ORDER else None
    if b is None:
        return a if a.name in _NUMERIC_ORDER else None
    if a.name in _NUMERIC_ORDER and b.name in _NUMERIC_ORDER:
        return max(a, b, key=lambda t: _NUMERIC_ORDER.index(t.name))
    if a.name in ("date", "timestamp", "timestamptz", "interval"):
        return a
    return None


def _duck_type(
    name: str, tn: ast.TypeName | None, typmods: Sequence[int] = ()
) -> str | tuple[str, list[int]]:
    if name == "numeric" and typmods and typmods[0] <= 38:
        return "decimal", [typmods[0], typmods[1] if len(typmods) > 1 else 0]
    if name == "int2vector":
        return "smallint"
    if name == "oidvector":
        return "uinteger"
    return _DUCK_SCALAR.get(name, "varchar")


# ---------------------------------------------------------------------------------------------
# entry point

_CACHE: OrderedDict[tuple[str, frozenset[int], tuple[tuple[int, ColumnType], ...], str, int], Rewritten] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 512


def _parse_one(sql: str) -> ast.Node:
    try:
        stmts = pglast.parse_sql(sql)
    except pglast.parser.ParseError as e:
        msg, loc = (*e.args, None)[:2]
        pos = loc + 1 if isinstance(loc, int) else None
        raise SqlError(window_frames.parse_error_sqlstate(str(msg)), str(msg), pos) from None
    if len(stmts) != 1:
        raise SqlError("42601", "cannot insert multiple commands into a prepared statement")
    return stmts[0].stmt


def rewrite(
    sql: str,
    *,
    resolve_user_table: ResolveUserTable,
    server_udfs: Mapping[str, str] | None = None,
    udf_args: Sequence[Any] = (),
    text_params: frozenset[int] = frozenset(),
    param_types: tuple[tuple[int, ColumnType], ...] = (),
    date_order: str = "MDY",
    extra_float_digits: int = 1,
    literal_date_order: str | None = None,
    bytea_output: str = "hex",
    infer_params: bool = False,
    server_version_num: int = 150000,
) -> Rewritten:
    """One PostgreSQL query (SELECT, VALUES, WITH …, or ``COPY (query) TO STDOUT``) for DuckDB.

    ``resolve_user_table(schema, name)`` returns DuckDB SQL of a subquery producing the
    table's rows (the server chooses the snapshot), or None if no such table exists.
    ``server_udfs`` maps PostgreSQL function names the server implements as DuckDB UDFs
    (``{"txid_current": "wpx_txid_current"}``) to the UDF; calls become
    ``udf(*udf_args, *args)`` (e.g. the backend pid first). Without a UDF, zero-argument
    server values (:data:`~walsender_proxy.sql.rewrite_funcs.SERVER_VALUES`) are read from
    the ``pgc_server_values`` table instead. ``text_params`` are the numbers of the ``$n``
    bound as text: a cast of one goes through the target type's input function;
    ``param_types`` the lake types of the ``$n`` the server knows; ``date_order`` the
    session's DateStyle field order, in which date and timestamp literals are read;
    ``extra_float_digits`` the session's, which a float's cast to text follows;
    ``bytea_output`` the session's, which a bytea's cast to text follows;
    ``literal_date_order`` the order literals are read in instead, for a prepared
    statement parsed under another DateStyle (:func:`literals.date_order`).
    ``infer_params``: the ``$n`` not in ``param_types`` are unknown values whose types the
    analysis infers from their context (``Rewritten.param_oids``), as at Parse.
    ``server_version_num`` is the version the server claims: the few built-in functions
    whose signatures changed since 15 take the claimed version's (subscribers call them).
    Raises :class:`SqlError` (a PgError) with PostgreSQL's SQLSTATE, message and position.
    Results of statements that read no user table and call no UDF are cached by text
    (subscribers and psql repeat the same catalog queries): a repeat costs a dict lookup.
    """
    udfs = server_udfs or {}
    digits = min(extra_float_digits, 1)  # (the session's: floats cast to text print so)
    literals.FLOAT_DIGITS.set(digits)
    literals.BYTEA_OUTPUT.set(bytea_output)
    session_zone.ZONE.set(date_order.partition(" ")[2])
    orders = date_order if literal_date_order in (None, date_order) else f"{literal_date_order}:{date_order}"
    key = (sql, text_params, param_types, orders, digits, bytea_output, server_version_num) if not udfs and not infer_params else None
    if key is not None:
        with _CACHE_LOCK:
            hit = _CACHE.get(key)
            if hit is not None:
                _CACHE.move_to_end(key)
                return hit
    stmt = _parse_one(sql)
    rw = _Rewriter(sql, resolve_user_table, udfs, udf_args, text_params, dict(param_types), infer_params)
    rw.server_version_num = server_version_num
    copy: CopyTo | None = None
    if isinstance(stmt, ast.CopyStmt):
        stmt, copy = _copy_query(stmt)
    with literals.date_order(date_order, literal_date_order):
        new, cols = rw.statement(stmt)
    if cols is not None and isinstance(new, ast.SelectStmt):
        new = rw.wrap_output(new, cols)
    columns = None
    if cols is not None:
        columns = tuple(
            OutputColumn(n, _type_oid(t), t.typmod if t is not None else -1, _enum_lake_type(t), t == UNKNOWN, _row_fields(t)) for n, t in cols
        )
    result = Rewritten(
        sql=rw.deparse(new),
        needs=frozenset(rw.needs),
        columns=columns,
        set_configs=tuple(rw.set_configs),
        server_values=frozenset(rw.server_values),
        user_tables=tuple(rw.user_tables),
        param_count=rw.max_param,
        dropped_params=frozenset(n for n, uses in rw.param_uses.items() if uses <= 0),
        copy=copy,
        origins=rw.origins if copy is None else None,
        param_oids=tuple((n, oid) for n, t in sorted(rw.param_inferred.items()) if (oid := _type_oid(t))),
        reg_inputs=tuple(dict.fromkeys(rw.reg_inputs)),
        key_dependencies=tuple(sorted(rw.key_dependencies)),
    )
    if key is not None and not rw.user_tables and not rw.user_types and not rw.set_configs and not rw.used_udfs and not _CLOCK_WORDS.search(sql):
        with _CACHE_LOCK:
            _CACHE[key] = result
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
    return result


#: Types between which a cast exists only where pg_cast has one (``coercion_data.CASTS``,
#: dumped for these; no string type among them: those cast to and from anything through
#: text, as PostgreSQL's I/O casts).
_CAST_CHECKED = frozenset({
    "bool", "int2", "int4", "int8", "float4", "float8", "numeric", "date", "time",
    "timestamp", "timestamptz", "interval", "uuid", "bytea", "jsonb",
})  # fmt: skip

#: Type names whose one-argument call is the cast to the type (see _Rewriter._type_call).
_TYPE_CALLS = frozenset({
    "name", "date", "int2", "int4", "int8", "float4", "float8", "text", "bool", "oid", "uuid",
    "jsonb", "bytea",
})  # fmt: skip


def _merged_column(node: ast.ColumnRef, name: str, m: using_columns.Merged) -> ast.Node:
    """PostgreSQL's merged USING column of sides of different types: the kept side's
    column (cast to the common type where it is not of it), both sides' COALESCE for a
    full join; the bare name cast where a side's member cannot be named."""
    duck = literals.DUCK_TYPES[m.common]

    def side(alias: str | None) -> ast.Node:
        return _cast(_colref(alias, name) if alias is not None else copy.deepcopy(node), duck)

    if m.jointype == JoinType.JOIN_FULL:
        if m.left is None or m.right is None:
            return _cast(node, duck)
        return ast.CoalesceExpr(args=(side(m.left), side(m.right)))
    alias = m.right if m.jointype == JoinType.JOIN_RIGHT else m.left
    if alias is None:
        return _cast(node, duck)
    return _colref(alias, name) if not m.coerced else side(alias)


#: The ordered-set aggregates the rewriter computes (_ordered_set); the hypothetical-set
#: ones (rank(x) WITHIN GROUP …) are refused.
_ORDERED_SET = frozenset({"percentile_cont", "percentile_disc", "mode"})


def _aggregate_or_window(stmt: ast.SelectStmt) -> str | None:
    """"aggregate functions" or "window functions" when the query level of ``stmt`` (its
    SELECT list, HAVING and ORDER BY, not its subqueries) calls one; None otherwise."""
    places = [[rt.val for rt in stmt.targetList or ()], stmt.havingClause, [s.node for s in stmt.sortClause or ()]]
    calls = [n for n in nodes.level_nodes(places) if agg_levels.is_aggregate_or_window(n)]
    if any(c.over is None for c in calls):
        return "aggregate functions"
    return "window functions" if calls else None


def _held_as_text(result: T | None, branches: Sequence[T | None]) -> T | None:
    """A numeric result of branches whose numeric values DuckDB holds as text (the others
    NULL; a mix is unified before) is held as text too: its aggregates and comparisons
    must go through numeric_text as the branches' would."""
    if result is None or result.name != "numeric" or result.text_numeric:
        return result
    if any(t is not None and t.text_numeric for t in branches):
        return replace(result, text_numeric=True, scale=None)
    return result


def _only_when(cond: ast.Node, value: ast.Node) -> ast.CaseExpr:
    """``CASE WHEN cond THEN value END``: ``value`` computed only where ``cond`` holds."""
    return ast.CaseExpr(args=(ast.CaseWhen(expr=copy.deepcopy(cond), result=value),))


def _copy_query(stmt: ast.CopyStmt) -> tuple[ast.SelectStmt, CopyTo]:
    if stmt.is_from or stmt.filename is not None or stmt.is_program:
        raise NotAQueryError("0A000", "only COPY ... TO STDOUT is rewritten")
    opts: dict[str, Any] = {}
    for d in stmt.options or ():
        arg = d.arg
        if isinstance(arg, ast.String):
            val: Any = arg.sval
        elif isinstance(arg, ast.Boolean):
            val = arg.boolval
        elif isinstance(arg, ast.Integer):
            val = arg.ival
        elif isinstance(arg, tuple | list):
            val = [a.sval if isinstance(a, ast.String) else a for a in arg]
        else:
            val = True if arg is None else arg
        opts[d.defname.lower()] = val
    fmt = str(opts.pop("format", "text")).lower()
    if stmt.query is not None:
        query = stmt.query
        if not isinstance(query, ast.SelectStmt):
            raise NotAQueryError("0A000", "COPY (...) must contain a query")
    else:
        targets: tuple[ast.ResTarget, ...]
        if stmt.attlist:
            targets = tuple(ast.ResTarget(val=_colref(a.sval)) for a in stmt.attlist)
        else:
            targets = (ast.ResTarget(val=ast.ColumnRef(fields=(ast.A_Star(),))),)
        query = ast.SelectStmt(
            targetList=targets, fromClause=(stmt.relation,), op=SetOperation.SETOP_NONE
        )
    return query, CopyTo(fmt, opts)


def statements(sql: str) -> list[str]:
    """Split a simple-query string into statements, as PostgreSQL's parser would."""
    try:
        return list(pglast.split(sql))
    except pglast.parser.ParseError as e:
        msg, loc = (*e.args, None)[:2]
        raise SqlError("42601", str(msg), loc + 1 if isinstance(loc, int) else None) from None


def _shift(op: str, value: ast.Node, type_name: str, count: ast.Node) -> ast.Node:
    """PostgreSQL's int2/int4/int8 ``<<`` and ``>>``: C's shift, the count taken modulo
    the promoted width (32 bits for int2 and int4, 64 for int8) and a left shift wrapping
    around the type's width (``1 << 31`` is -2147483648, ``-1 << 2`` is -4), where DuckDB
    refuses a negative value or a count past the width."""
    mask = 63 if type_name == "int8" else 31
    bits = {"int2": 16, "int4": 32, "int8": 64}[type_name]
    duck = {"int2": "smallint", "int4": "integer", "int8": "bigint"}[type_name]
    m = _op("&", _cast(count, "integer"), _int(mask))
    if op == ">>":
        return _cast(_op(">>", _cast(value, "bigint"), m), duck)
    full = _op("*", _cast(value, "hugeint"), _op("<<", _cast(_int(1), "hugeint"), m))
    span = _op("<<", _cast(_int(1), "hugeint"), _int(bits))
    wrapped = _op("%", _op("+", _op("%", full, span), copy.deepcopy(span)), copy.deepcopy(span))
    half = _op("<<", _cast(_int(1), "hugeint"), _int(bits - 1))
    signed = ast.CaseExpr(
        args=(ast.CaseWhen(expr=_op(">=", wrapped, half), result=_op("-", copy.deepcopy(wrapped), copy.deepcopy(span))),),
        defresult=copy.deepcopy(wrapped),
    )
    return _cast(signed, duck)
