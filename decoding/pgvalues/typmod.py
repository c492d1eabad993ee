"""The precision typmods of time(p), timestamp(p) and timestamptz(p) on storage values.

PostgreSQL rounds a value to ``p`` fractional digits wherever one meets the typmod: a
column's assignment, an explicit cast, a literal (``AdjustTimestampForTypmod``). The SQL
layer (literals, casts) and the lake (values stored into a column) share this one rule.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from decoding.pgtypes import ColumnType
from decoding.pgvalues import _calendar as cal

__all__ = ["SUBSECOND_TYPES", "round_times"]

#: The types whose typmod is a number of fractional digits.
SUBSECOND_TYPES = frozenset({"time", "timestamp", "timestamptz"})


def round_times(arr: pa.Array, ctype: ColumnType) -> pa.Array:
    """time(p) / timestamp(p): round half away from zero to ``p`` fractional digits,
    counted from PostgreSQL's epoch (2000-01-01) as PostgreSQL does; infinities stay.
    Values of other types, or without a precision below 6, are returned as they are."""
    p = ctype.typmod
    if ctype.base.name not in SUBSECOND_TYPES or ctype.is_array or not 0 <= p < 6 or not len(arr):
        return arr
    scale = 10 ** (6 - p)
    raw = np.asarray(arr.view(pa.int64()).fill_null(0), dtype=np.int64)
    if ctype.base.name == "time":
        rounded = (raw + scale // 2) // scale * scale
    else:
        finite = np.abs(raw) < cal.INT64_MAX
        pg = raw - cal.PG_EPOCH_USECS
        mag = (np.abs(pg) + scale // 2) // scale * scale
        rounded = np.where(finite, np.sign(pg) * mag + cal.PG_EPOCH_USECS, raw)
    out = pa.array(rounded, pa.int64(), mask=~np.asarray(arr.is_valid()))
    return out.view(arr.type)
