"""EXTRACT and date_part as PostgreSQL 15 answers them, written as DuckDB expressions.

DuckDB's EXTRACT drops the fraction of ``second`` (1 for 01.5), numbers years before 1 AD
astronomically (2020 BC is -2019), starts centuries at years ending in 00, gives NULL for
infinite dates and accepts ``hour`` of a date. PostgreSQL's EXTRACT returns numeric with a
fixed scale per field (``second`` 6 digits, ``milliseconds`` 3, ``epoch`` 6 for timestamps),
``date_part`` the same value as float8; infinite inputs give ±Infinity for the fields that
grow with time and NULL for the others; a field a type has not is 0A000 (``unit "hour"
not supported for type date``) or 22023. Each (field, type) pair PostgreSQL accepts is
either written here exactly or refused with 0A000 naming it."""

from __future__ import annotations

from pglast import ast

from decoding.errors import PgError
from walsender_proxy.sql import session_zone
from walsender_proxy.sql.nodes import call, cast, int_const, null_const, op, str_const

#: PostgreSQL's spellings of each field (datetktbl / deltatktbl), by canonical name.
_ALIASES = {
    "microseconds": ("microsecond", "microseconds", "us", "usec", "usecs", "useconds"),
    "milliseconds": ("millisecond", "milliseconds", "ms", "msec", "msecs", "mseconds"),
    "second": ("second", "seconds", "s", "sec", "secs"),
    "minute": ("minute", "minutes", "m", "min", "mins"),
    "hour": ("hour", "hours", "h", "hr", "hrs"),
    "day": ("day", "days", "d"),
    "month": ("month", "months", "mon", "mons"),
    "quarter": ("quarter", "qtr"),
    "year": ("year", "years", "y", "yr", "yrs"),
    "decade": ("decade", "decades", "dec", "decs"),
    "century": ("century", "centuries", "c", "cent"),
    "millennium": ("millennium", "millennia", "mil", "mils", "millenia", "millenniums"),
    "week": ("week", "weeks", "w"),
    "dow": ("dow",),
    "isodow": ("isodow",),
    "doy": ("doy",),
    "isoyear": ("isoyear",),
    "epoch": ("epoch",),
    "julian": ("julian", "j"),
    "timezone": ("timezone",),
    "timezone_hour": ("timezone_h", "timezone_hour"),
    "timezone_minute": ("timezone_m", "timezone_minute"),
}
FIELDS = {alias: name for name, aliases in _ALIASES.items() for alias in aliases}

_TIME_OF_DAY = ("microseconds", "milliseconds", "second", "minute", "hour")
_CALENDAR = ("day", "month", "quarter", "year", "decade", "century", "millennium", "week", "dow", "isodow", "doy", "isoyear", "julian")
#: Fields that grow with time: ±Infinity for an infinite input (the others are NULL).
_MONOTONIC = frozenset({"year", "decade", "century", "millennium", "isoyear", "julian", "epoch"})
#: What each source type has.
_FIELDS_OF = {
    "date": frozenset(_CALENDAR) | {"epoch"},
    "timestamp": frozenset(_CALENDAR + _TIME_OF_DAY) | {"epoch"},
    "timestamptz": frozenset(_CALENDAR + _TIME_OF_DAY) | {"epoch", "timezone", "timezone_hour", "timezone_minute"},
    "time": frozenset(_TIME_OF_DAY) | {"epoch"},
    "interval": frozenset(_TIME_OF_DAY) | {"day", "month", "year"},
}
_TYPE_NAMES = {"date": "date", "timestamp": "timestamp without time zone", "timestamptz": "timestamp with time zone",
               "time": "time without time zone", "interval": "interval"}  # fmt: skip


def _fixed(micros: ast.Node, scale: int) -> ast.Node:
    """An integer count of 10^-scale units as an exact DECIMAL with that scale."""
    unit = str_const("0." + "0" * (scale - 1) + "1")
    return op("*", cast(micros, "decimal", typmods=[18, 0]), cast(unit, "decimal", typmods=[scale + 1, scale]))


def _plain(v: ast.Node, source: str) -> ast.Node:
    """``v`` where DuckDB's year() is astronomical: a TIMESTAMPTZ's year() before 1 AD is
    the historical one (55 for 55 BC), a TIMESTAMP's (and a DATE's) is -54. (The cast
    gives the wall clock in the session's zone, whose year it is.)"""
    return cast(v, "timestamp") if source == "timestamptz" else v


def _year_field(field: str, v: ast.Node) -> ast.Node:
    y = call("year", v)
    if field == "year":
        return ast.CaseExpr(args=(ast.CaseWhen(expr=op(">", y, int_const(0)), result=y),), defresult=op("-", call("year", v), int_const(1)))
    if field == "isoyear":
        iy = call("isoyear", v)
        return ast.CaseExpr(args=(ast.CaseWhen(expr=op(">", iy, int_const(0)), result=iy),), defresult=op("-", call("isoyear", v), int_const(1)))
    span, offset = {"decade": (10, 8), "century": (100, 99), "millennium": (1000, 999)}[field]
    # (/ is integer division in the proxy's DuckDB sessions; every numerator is >= 0)
    if field == "decade":  # year / 10 from year 0 on (so 1 BC, astronomical 0, is decade 0)
        pos_test, pos = op(">=", y, int_const(0)), op("/", call("year", v), int_const(10))
    else:
        pos_test, pos = op(">", y, int_const(0)), op("/", op("+", call("year", v), int_const(offset)), int_const(span))
    neg = op("-", int_const(0), op("/", op("-", int_const(offset), op("-", call("year", v), int_const(1))), int_const(span)))
    return ast.CaseExpr(args=(ast.CaseWhen(expr=pos_test, result=pos),), defresult=neg)


def extract(field_text: str, v: ast.Node, source: str | None, *, as_float: bool) -> tuple[ast.Node, str]:
    """``EXTRACT(field FROM v)`` (numeric, as text where it may be infinite) or
    ``date_part(field, v)`` (float8): the DuckDB expression and its PostgreSQL type."""
    field = FIELDS.get(field_text.lower())
    if source not in _FIELDS_OF:
        raise PgError("0A000", f"EXTRACT from a value of type {source or 'unknown'} is not supported by walsender-proxy")
    shown = _TYPE_NAMES[source]
    if field is None:
        raise PgError("22023", f'unit "{field_text.lower()}" not recognized for type {shown}')
    if field not in _FIELDS_OF[source]:
        if field in ("timezone", "timezone_hour", "timezone_minute") or (field in _TIME_OF_DAY and source == "date"):
            raise PgError("0A000", f'unit "{field_text.lower()}" not supported for type {shown}')
        raise PgError("0A000", f'EXTRACT({field} FROM {shown}) is not supported by walsender-proxy')
    if field == "julian" and source != "date":
        raise PgError("0A000", f"EXTRACT(julian FROM {shown}) is not supported by walsender-proxy")
    micros_of_minute = call("date_part", str_const("microseconds"), v)
    if field in ("timezone", "timezone_hour", "timezone_minute"):
        # the offset of the instant in the session's zone (DuckDB's ICU computes in it)
        value: ast.Node = call("date_part", str_const(field), v) if session_zone.ZONE.get() else int_const(0)
    elif field == "microseconds":
        value = micros_of_minute
    elif field == "milliseconds":
        value = _fixed(micros_of_minute, 3)
    elif field == "second":
        value = _fixed(micros_of_minute, 6)
    elif field == "epoch":
        if source == "date":
            value = op("*", call("date_diff", str_const("day"), cast(str_const("1970-01-01"), "date"), v), cast(int_const(86400), "bigint"))
        elif source == "time":
            value = _fixed(call("epoch_us", op("+", cast(str_const("1970-01-01"), "date"), v)), 6)
        else:
            value = _fixed(call("epoch_us", v), 6)
    elif field in ("year", "decade", "century", "millennium", "isoyear"):
        value = _year_field(field, _plain(v, source))
    elif field == "julian":
        value = cast(call("julian", v), "bigint")
    else:  # minute, hour, day, month, quarter, week, dow, isodow, doy: PostgreSQL's = DuckDB's
        value = call("date_part", str_const(field), v)
    if as_float:
        value = cast(value, "double")
    finite_type = "float8" if as_float else "numeric"
    if source in ("time", "interval"):
        return value, finite_type
    # an infinite date or timestamp: ±Infinity for the fields that grow with time, else NULL
    inf = call("isinf", v)
    if field in _MONOTONIC:
        later = op(">", v, cast(str_const("1970-01-01"), "date"))
        sign = ast.CaseExpr(args=(ast.CaseWhen(expr=later, result=str_const("Infinity")),), defresult=str_const("-Infinity"))
        if as_float:
            return ast.CaseExpr(args=(ast.CaseWhen(expr=inf, result=cast(sign, "double")),), defresult=value), "float8"
        text = ast.CaseExpr(args=(ast.CaseWhen(expr=inf, result=sign),), defresult=cast(value, "varchar"))
        return text, "numeric_text"
    return ast.CaseExpr(args=(ast.CaseWhen(expr=inf, result=null_const()),), defresult=value), finite_type



#: date_trunc's fields DuckDB truncates as PostgreSQL does (years after 1 AD).
_TRUNC_AS_IS = frozenset({"microseconds", "milliseconds", "second", "minute", "hour", "day", "week", "month", "quarter", "year"})


#: The fields below a day, whose truncation keeps a timestamptz's UTC offset.
_SUB_DAY = frozenset({"microseconds", "milliseconds", "second", "minute", "hour"})


def date_trunc(field_text: str, v: ast.Node, source: str | None) -> tuple[ast.Node, str]:
    """date_trunc(field, v): a date is truncated as a timestamp with time zone (its
    implicit cast), decades, centuries and millennia start as PostgreSQL's do (1901, 2001),
    years before 1 AD refused (0A000)."""
    field = FIELDS.get(field_text.lower())
    if source not in ("date", "timestamp", "timestamptz"):
        raise PgError("0A000", f"date_trunc of a value of type {source or 'unknown'} is not supported by walsender-proxy")
    result = "timestamptz" if source in ("date", "timestamptz") else "timestamp"
    yv = _plain(v, source)  # (whose year() is astronomical)
    if source == "date":
        v = cast(v, "timestamptz")
    if field is None or field not in _TRUNC_AS_IS | {"decade", "century", "millennium"}:
        shown = _TYPE_NAMES[result]
        raise PgError("0A000" if field is not None else "22023", f'unit "{field_text.lower()}" not {"supported" if field else "recognized"} for type {shown}')
    if field in _TRUNC_AS_IS and field in _SUB_DAY and source == "timestamptz" and session_zone.ZONE.get():
        # timestamptz_trunc keeps the value's own UTC offset below a day (it recomputes the
        # offset only from the day up): the wall clock's excess taken off the instant, where
        # ICU's truncation picks the offset anew (the other one, in a fall-back's repeated hour)
        wall = cast(v, "timestamp")
        out = op("-", v, op("-", wall, call("date_trunc", str_const(field), wall)))
    elif field in _TRUNC_AS_IS:
        out: ast.Node = call("date_trunc", str_const(field), v)
    else:
        # the first year of v's decade (a multiple of 10), century or millennium (…01)
        span = {"decade": 10, "century": 100, "millennium": 1000}[field]
        y = call("year", yv)
        first = op("*", op("/", y, int_const(span)), int_const(span)) if span == 10 else op("+", op("*", op("/", op("-", call("year", yv), int_const(1)), int_const(span)), int_const(span)), int_const(1))
        out = op("+", call("date_trunc", str_const("year"), v), op("*", cast(str_const("1 year"), "interval"), op("-", first, call("year", yv))))
    guard = op("<=", call("year", yv), int_const(0))
    refused = call("error", str_const(f"PGERR[0A000] date_trunc('{field}') of a year before 1 AD is not supported by walsender-proxy"))
    return ast.CaseExpr(
        args=(
            ast.CaseWhen(expr=call("isinf", v), result=v),  # (±infinity stays)
            ast.CaseWhen(expr=guard, result=refused),
        ),
        defresult=out,
    ), result
