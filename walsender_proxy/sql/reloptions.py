"""A table's storage parameters (``CREATE TABLE … WITH (fillfactor = 70)``, ``ALTER TABLE
… SET (…) / RESET (…)``) as PostgreSQL 15's reloptions.c checks and keeps them.

The proxy's storage has no pages, TOAST or autovacuum, so no parameter changes what it
does; they are kept as PostgreSQL keeps them (``pg_class.reloptions``, ``name=value`` as
written) because clients read them back — pg_dump writes them into its ``CREATE TABLE``.
``toast.*`` parameters belong to a TOAST table, which the proxy has none of: refused.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pglast import ast

from decoding.errors import PgError
from walsender_proxy.backend.settings import parse_bool, parse_int, parse_real

_INT_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class _Option:
    kind: str  # bool | int | real | enum
    low: float = 0
    high: float = 0


#: The heap's parameters (reloptions.c, RELOPT_KIND_HEAP), with their bounds.
HEAP: dict[str, _Option] = {
    "autovacuum_enabled": _Option("bool"),
    "user_catalog_table": _Option("bool"),
    "vacuum_truncate": _Option("bool"),
    "fillfactor": _Option("int", 10, 100),
    "toast_tuple_target": _Option("int", 128, 8160),
    "autovacuum_vacuum_threshold": _Option("int", 0, _INT_MAX),
    "autovacuum_vacuum_insert_threshold": _Option("int", -1, _INT_MAX),
    "autovacuum_analyze_threshold": _Option("int", 0, _INT_MAX),
    "autovacuum_vacuum_cost_limit": _Option("int", 1, 10000),
    "autovacuum_freeze_min_age": _Option("int", 0, 1000000000),
    "autovacuum_multixact_freeze_min_age": _Option("int", 0, 1000000000),
    "autovacuum_freeze_max_age": _Option("int", 100000, 2000000000),
    "autovacuum_multixact_freeze_max_age": _Option("int", 10000, 2000000000),
    "autovacuum_freeze_table_age": _Option("int", 0, 2000000000),
    "autovacuum_multixact_freeze_table_age": _Option("int", 0, 2000000000),
    "log_autovacuum_min_duration": _Option("int", -1, _INT_MAX),
    "parallel_workers": _Option("int", 0, 1024),
    "autovacuum_vacuum_cost_delay": _Option("real", 0, 100),
    "autovacuum_vacuum_scale_factor": _Option("real", 0, 100),
    "autovacuum_vacuum_insert_scale_factor": _Option("real", 0, 100),
    "autovacuum_analyze_scale_factor": _Option("real", 0, 100),
    "vacuum_index_cleanup": _Option("enum"),
}
_INDEX_CLEANUP = ("auto", "on", "off", "true", "false", "yes", "no", "1", "0")


def _value_text(d: ast.DefElem) -> str:
    """defGetString: the value as written (a bare name is ``true``)."""
    v = d.arg
    if v is None:
        return "true"
    if isinstance(v, ast.Integer):
        return str(v.ival)
    if isinstance(v, ast.Float):
        return v.fval
    if isinstance(v, ast.Boolean):
        return "true" if v.boolval else "false"
    if isinstance(v, ast.String):
        return v.sval
    if isinstance(v, ast.TypeName):
        return ".".join(n.sval for n in v.names)
    raise PgError("42601", f'invalid value for option "{d.defname}"')


def _check(name: str, text: str) -> None:
    opt = HEAP.get(name)
    if opt is None:
        raise PgError("22023", f'unrecognized parameter "{name}"')
    if opt.kind == "bool":
        if parse_bool(text) is None:
            raise PgError("22023", f'invalid value for boolean option "{name}": {text}')
    elif opt.kind == "enum":
        if text.lower() not in _INDEX_CLEANUP:
            raise PgError(
                "22023", f'invalid value for enum option "{name}": {text}', detail='Valid values are "on", "off", and "auto".'
            )
    elif opt.kind == "int":
        value, _ = parse_int(text, None)
        if value is None:
            raise PgError("22023", f'invalid value for integer option "{name}": {text}')
        if not opt.low <= value <= opt.high:
            raise PgError(
                "22023", f'value {text} out of bounds for option "{name}"',
                detail=f'Valid values are between "{int(opt.low)}" and "{int(opt.high)}".',
            )  # fmt: skip
    else:
        real, _ = parse_real(text, None)
        if real is None or math.isnan(real):
            raise PgError("22023", f'invalid value for floating point option "{name}": {text}')
        if not opt.low <= real <= opt.high:
            raise PgError(
                "22023", f'value {text} out of bounds for option "{name}"',
                detail=f'Valid values are between "{opt.low:f}" and "{opt.high:f}".',
            )  # fmt: skip


def _namespace_ok(d: ast.DefElem) -> None:
    if d.defnamespace is None:
        return
    if d.defnamespace != "toast":
        raise PgError("22023", f'unrecognized parameter namespace "{d.defnamespace}"')
    raise PgError("0A000", "toast.* storage parameters are not supported by walsender-proxy (its tables have no TOAST table)")


def with_options(options: Sequence[Any] | None) -> tuple[str, ...]:
    """``WITH (…)`` of CREATE TABLE: the checked ``name=value`` texts, in their order.
    ``oids = false`` is PostgreSQL's no-op; ``oids = true`` its 0A000."""
    out: list[str] = []
    seen: set[str] = set()
    for d in options or ():
        if d.defname == "oids" and d.defnamespace is None:
            if parse_bool(_value_text(d)) is not False:
                raise PgError("0A000", "tables declared WITH OIDS are not supported")
            continue
        _namespace_ok(d)
        text = _value_text(d)
        _check(d.defname, text)
        if d.defname in seen:
            raise PgError("22023", f'parameter "{d.defname}" specified more than once')
        seen.add(d.defname)
        out.append(f"{d.defname}={text}")
    return tuple(out)


def set_options(current: Sequence[str], options: Sequence[Any]) -> tuple[str, ...]:
    """``ALTER TABLE … SET (…)``: each named parameter's old entry removed, the new ones
    appended in their order (transformRelOptions)."""
    new = with_options(options)
    names = {o.split("=", 1)[0] for o in new}
    return tuple(o for o in current if o.split("=", 1)[0] not in names) + new


def reset_options(current: Sequence[str], options: Sequence[Any]) -> tuple[str, ...]:
    """``ALTER TABLE … RESET (…)``: the named entries removed; names are not checked, as
    in PostgreSQL, but a value is an error."""
    names = set()
    for d in options:
        if d.arg is not None:
            raise PgError("42601", "RESET must not include values for parameters")
        if d.defnamespace is not None:
            _namespace_ok(d)
        names.add(d.defname)
    return tuple(o for o in current if o.split("=", 1)[0] not in names)
