"""Unconstrained ``numeric`` values as the lake keeps them: their exact text (DuckDB's
DECIMAL holds 38 digits; PostgreSQL's numeric far more, each value with its own display
scale). DuckDB would compare that text as text (``'93901.57' > '7799461.41'``, ``'10' <>
'10.0'``), so the rewriter compares, orders and takes the min/max of such values through
:func:`sort_key`, whose text order is PostgreSQL's numeric order (NaN above +Infinity, equal
values equal whatever their scale), and refuses what it cannot answer exactly."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

import pyarrow as pa

from decoding.errors import PgError

#: The DuckDB function (``VARCHAR → VARCHAR``) the rewriter calls.
KEY_UDF = "wpx_numeric_key"
#: The guard (``VARCHAR → VARCHAR``) on values grouped or deduplicated by their text.
GROUPED_UDF = "wpx_numeric_grouped"
#: The same, volatile, for a GROUP BY key or a SELECT DISTINCT value (see jsonb_ops).
GROUPED_KEY_UDF = "wpx_numeric_grouped_key"
_EXP_OFFSET = 10**6  # numeric's exponents stay far inside ±10^6
_EXP_WIDTH = 7


def sort_key(text: str) -> str:
    """An order-preserving text key of a numeric value's text: class, exponent, digits
    (complemented for negatives, with a terminator so a shorter one sorts above)."""
    try:
        d = Decimal(text.strip())
    except InvalidOperation:
        raise ValueError(f'invalid input syntax for type numeric: "{text}"') from None
    if d.is_nan():
        return "5"
    if d.is_infinite():
        return "4" if d > 0 else "0"
    if d.is_zero():
        return "2"
    sign, digits, _ = d.normalize().as_tuple()
    exp = d.adjusted() + _EXP_OFFSET
    body = "".join(map(str, digits))
    if not sign:
        return f"3{exp:0{_EXP_WIDTH}d}{body}"
    flipped = body.translate(str.maketrans("0123456789", "9876543210"))
    return f"1{10**_EXP_WIDTH - 1 - exp:0{_EXP_WIDTH}d}{flipped}~"


def key_udf(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """:func:`sort_key` over an Arrow array of numeric text (NULL stays NULL)."""
    return pa.array([None if v is None else sort_key(v) for v in values.to_pylist()], pa.string())


def grouped(text: str) -> str:
    """``text`` when every numeric value equal to it has this text, so that grouping by
    the text is grouping by numeric equality: numeric_out writes one text a value, except
    for its display scale, which trailing fractional zeros show (``1.50`` equals ``1.5``).
    0A000 for such a value."""
    if "." in text and text.endswith("0"):
        raise PgError(
            "0A000",
            f"grouping or deduplicating unconstrained numeric values written with trailing fractional zeros ({text}) "
            "is not supported by walsender-proxy",
            hint="PostgreSQL takes 1.50 and 1.5 for one value; declare the column numeric(p,s), or cast: x::numeric(38,10).",
        )
    return text


def grouped_udf(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """:func:`grouped` over an Arrow array of numeric text (NULL stays NULL)."""
    return pa.array([None if v is None else grouped(v) for v in values.to_pylist()], pa.string())
