"""The session TimeZone where SQL meets it: ``SET TIME ZONE INTERVAL …`` as guc.c
flattens it, and the zone DuckDB's ICU functions compute in for a session.

DuckDB follows its own ``TimeZone`` per connection (each session has its own cursor):
casts between timestamptz and timestamp or date, ``date_trunc``, ``+ interval`` and
``generate_series`` over timestamptz run in it. A zone of the tz database is given by
name; a fixed offset of whole hours as ``Etc/GMT∓h`` (whose sign is POSIX's, as
PostgreSQL's ``UTC+3`` is); a fixed offset ICU has no zone for (``10.5``) has none, and
the statements that need one are refused (:func:`duck_zone`).
"""

from __future__ import annotations

import re
import threading
from contextvars import ContextVar
from typing import Any

from pglast import ast
from pglast.enums import BoolExprType

from decoding import pgtz
from decoding.errors import PgError
from decoding.pgtypes import parse_type
from decoding.pgvalues import encode_text_arrow
from decoding.pgvalues._dtin import interval_in
from walsender_proxy.sql.nodes import call, cast, int_const, op, str_const

#: The TimeZone of the session whose statement is being rewritten, as SHOW gives it; ""
#: for UTC (set by ``rewrite`` for each statement, as ``literals.FLOAT_DIGITS``).
ZONE: ContextVar[str] = ContextVar("session_zone", default="")


def refuse_outside_utc(what: str) -> None:
    """0A000 for ``what`` when the session's TimeZone is not UTC: what the proxy computes
    in UTC only."""
    if ZONE.get():
        raise PgError("0A000", f"{what} under TimeZone {ZONE.get()!r} is not supported by walsender-proxy")


def instant_difference(node: ast.A_Expr) -> ast.A_Expr | ast.Node:
    """``a - b`` where a timestamptz is involved, outside UTC: timestamptz_mi's interval of
    the instants' microseconds with whole days taken out (interval_justify_hours), not
    DuckDB's calendar difference in its TimeZone (152 days, not 151 days 23:00, across a
    spring-forward change). Infinite operands are PostgreSQL's 22008."""
    if not ZONE.get():
        return node
    a, b = cast(node.lexpr, "timestamptz"), cast(node.rexpr, "timestamptz")
    diff = cast(op("-", call("epoch_us", a), call("epoch_us", b)), "bigint")  # (CAST: parenthesised)
    day = int_const(86_400_000_000)
    value = op("+", call("to_days", cast(op("//", diff, day), "integer")), call("to_microseconds", op("%", diff, day)))
    infinite = ast.BoolExpr(boolop=BoolExprType.OR_EXPR, args=(call("isinf", a), call("isinf", b)))
    refused = call("error", str_const("PGERR[22008] cannot subtract infinite timestamps"))
    return ast.CaseExpr(args=(ast.CaseWhen(expr=infinite, result=refused),), defresult=value)


def at_posix_zone(zone: str, value: ast.Node, source: str) -> tuple[ast.Node, str] | None:
    """``value AT TIME ZONE zone`` for a POSIX-style ``zone`` (``UTC+3``, ``+03:00``: hours
    WEST, where ICU would read them east) as its fixed offset: a timestamptz's wall clock
    there (timestamp), or a timestamp's instant there (timestamptz). None: not such a zone,
    or a value of another type."""
    east = pgtz.posix_offset(zone)
    if east is None or source not in ("timestamp", "timestamptz"):
        return None
    shift = call("to_seconds", cast(int_const(east), "bigint"))
    if source == "timestamptz":
        return op("+", call("timezone", str_const("UTC"), value), shift), "timestamp"
    return call("timezone", str_const("UTC"), op("-", value, shift)), "timestamptz"


def before_first_instant(value: ast.Node, source: str) -> ast.Node:
    """A date's or timestamp's cast to timestamptz outside UTC: local midnight of
    4714-11-24 BC east of Greenwich is before PostgreSQL's first instant (22008), as
    date2timestamptz and timestamp2timestamptz find."""
    if not ZONE.get():
        return value
    message = "date out of range for timestamp" if source == "date" else "timestamp out of range"
    early = ast.BoolExpr(
        boolop=BoolExprType.AND_EXPR,
        args=(ast.BoolExpr(boolop=BoolExprType.NOT_EXPR, args=(call("isinf", value),)), op("<", call("epoch_us", value), int_const(-210866803200000000))),
    )
    return ast.CaseExpr(args=(ast.CaseWhen(expr=early, result=call("error", str_const(f"PGERR[22008] {message}"))),), defresult=value)


#: interval typmod range bits (datetime.h INTERVAL_MASK): HOUR, MINUTE, SECOND.
_HOUR, _MINUTE, _SECOND = 1 << 10, 1 << 11, 1 << 12
_FULL_RANGE = 0x7FFF


def timezone_interval(tc: ast.TypeCast) -> str:
    """``SET TIME ZONE INTERVAL '…' [HOUR [TO MINUTE|SECOND]]`` as flatten_set_variable_args
    makes it: ``INTERVAL '<interval_out>'`` of the value read with its range. A range that
    changes how the text is read (``INTERVAL '5' HOUR``, ``MINUTE TO SECOND``) is refused."""
    arg = tc.arg
    text = arg.val.sval if isinstance(arg, ast.A_Const) and hasattr(arg.val, "sval") else None
    if text is None:
        raise PgError("0A000", "SET TIME ZONE with this interval is not supported by walsender-proxy")
    months, days, us = interval_in(text)
    mods = [m.val.ival for m in tc.typeName.typmods or () if isinstance(m, ast.A_Const) and hasattr(m.val, "ival")]
    rng = mods[0] if mods else _FULL_RANGE
    if len(mods) > 1 and rng != _FULL_RANGE:
        raise PgError("0A000", "SET TIME ZONE with an interval precision is not supported by walsender-proxy")
    if rng != _FULL_RANGE:
        if rng not in (_HOUR, _HOUR | _MINUTE, _HOUR | _MINUTE | _SECOND) or not re.search(r"[:a-zA-Z]", text):
            raise PgError("0A000", "SET TIME ZONE with this interval range is not supported by walsender-proxy")
        unit = {_HOUR: 3_600_000_000, _HOUR | _MINUTE: 60_000_000}.get(rng)
        if unit is not None:
            us = int(us / unit) * unit  # (AdjustIntervalForTypmod truncates toward zero)
    shown = _interval_text(months, days, us)
    return f"INTERVAL '{shown}'"


def _interval_text(months: int, days: int, us: int) -> str:
    import pyarrow as pa

    ct = parse_type("interval")
    arr = pa.array([{"months": months, "days": days, "microseconds": us}], ct.arrow)
    out = encode_text_arrow(ct, arr).to_pylist()[0]
    return out.decode() if isinstance(out, bytes) else str(out)


#: Zones whose ICU offsets were compared with the tz files' (:func:`icu_agrees`).
_AGREES: dict[str, bool] = {}
_AGREES_LOCK = threading.Lock()


def icu_agrees(con: Any, zone: pgtz.Zone) -> bool:
    """Whether DuckDB's ICU, its TimeZone just set to ``zone`` on ``con``, gives the offsets
    the system's tz files (PostgreSQL's, and the proxy's own text I/O) give, at instants
    every 6 days 7 hours from 1850 to 2045: ICU carries its own copy of the tz database,
    and a zone whose rules differ between the two would be computed two ways. Once per
    zone and process."""
    with _AGREES_LOCK:
        known = _AGREES.get(zone.name)
    if known is not None:
        return known
    rows = con.execute(
        "SELECT epoch_us(t)::BIGINT, date_part('timezone', t) FROM (SELECT unnest(generate_series("
        "timestamptz '1850-01-01 00:00:00+00', timestamptz '2045-01-01 00:00:00+00', interval '6 days 7 hours')) AS t)"
    ).fetchall()
    ok = all(zone.utc_offset(us) == off for us, off in rows)
    if ok and zone.key is not None:  # and either side of every change the tz file records
        seconds = [s for t in pgtz.transitions(zone.key) for s in (t - 1, t) if -3_786_825_600 <= t <= 2_366_841_600]
        if seconds:
            got = con.execute("SELECT t, date_part('timezone', to_timestamp(t)) FROM unnest(?::BIGINT[]) AS u(t)", [seconds]).fetchall()
            ok = all(zone.utc_offset(s * 1_000_000) == off for s, off in got)
    with _AGREES_LOCK:
        _AGREES[zone.name] = ok
    return ok


def duck_zone(zone: pgtz.Zone) -> str | None:
    """The name DuckDB's ICU knows ``zone`` by, or None when it has none."""
    if zone.key is not None:
        return zone.key
    fixed = zone.fixed or 0
    if fixed == 0:
        return "UTC"
    if fixed % 3600 == 0 and -12 <= fixed // 3600 <= 14:
        h = fixed // 3600
        return f"Etc/GMT{-h:+d}"
    return None
