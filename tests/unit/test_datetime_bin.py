"""date_bin's vectorised UDF against the row-by-row arithmetic of timestamp_bin (Python
integers, no overflow): the same bins, NULLs and infinite sources kept, and the first
failing row's error."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from decoding.errors import PgError
from walsender_proxy.sql.datetime_bin import _ERRORS, _INFINITY, _NEG_INFINITY, _bin, _bin_one

_TS = st.one_of(st.integers(-210866803200000000, 2**63 - 2), st.sampled_from([_INFINITY, _NEG_INFINITY, 0]), st.none())
_IV = st.one_of(
    st.tuples(st.just(0), st.integers(-3, 2**31 - 1), st.integers(-(2**40), 2**62)),
    st.tuples(st.integers(-2, 2), st.integers(0, 3), st.integers(1, 10**9)),
    st.none(),
)


def _expected(rows: list[tuple[object, object, object]]) -> list[int | None] | tuple[str, str]:
    out: list[int | None] = []
    for iv, ts, o in rows:
        if iv is None or ts is None or o is None:
            out.append(None)
        elif ts in (_INFINITY, _NEG_INFINITY):
            out.append(ts)  # type: ignore[arg-type]
        else:
            err, r = _bin_one(*iv, ts, o)  # type: ignore[misc]
            if err:
                return _ERRORS[err]
            out.append(r)
    return out


@given(st.lists(st.tuples(_IV, _TS, _TS), max_size=20))
def test_the_vectorised_bins_are_the_row_by_row_ones(rows: list[tuple[object, object, object]]) -> None:
    stride = pa.array([None if iv is None else pa.MonthDayNano(iv) for iv, _, _ in rows], pa.month_day_nano_interval())
    source = pa.array([ts for _, ts, _ in rows], pa.int64()).cast(pa.timestamp("us"))
    origin = pa.array([o for _, _, o in rows], pa.int64()).cast(pa.timestamp("us"))
    want = _expected(rows)
    if isinstance(want, tuple):
        with pytest.raises(PgError) as e:
            _bin(stride, source, origin)
        assert (e.value.sqlstate, e.value.message) == want
    else:
        assert _bin(stride, source, origin).cast(pa.int64()).to_pylist() == want
