"""PostgreSQL's extended hash functions under the hash-partition seed, as a PostgreSQL 15
computes them (``hashint4extended``, ``hashint8extended``, ``hashtextextended``; the values
below were read off 15.18), and the row hash ``compute_partition_hash_value`` builds."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from decoding.pgtypes import parse_type
from walsender_proxy.lake import pghash

_U64 = 1 << 64

INT4 = {0: -4403592609991167795, 1: 5968994663651403477, -1: -5017072347659237694,
        2147483647: -6050265599104649060, -2147483648: 4938542303000433043, 123456: 7518462043501142587}
INT8 = {0: -4403592609991167795, -1: -5017072347659237694, 1099511627776: 5769331814454937003,
        9223372036854775807: 4938542303000433043, -9223372036854775808: -6050265599104649060}
TEXT = {"": -5700645584453517373, "a": -6705225459120232837, "abcdefghijk": -2046435308545367432,
        "abcdefghijkl": -7876791541613377658, "abcdefghijklm": -6785754114725280077, "é€𝄞": -1890246120450561372}


def _hashes(type_name: str, values: list[object], arrow: pa.DataType) -> list[int]:
    h, _ = pghash.column_hashes(parse_type(type_name), pa.array(values, arrow))
    return [int(x) for x in h]


def test_integers_hash_as_postgresql() -> None:
    assert _hashes("integer", list(INT4), pa.int32()) == [v % _U64 for v in INT4.values()]
    assert _hashes("bigint", list(INT8), pa.int64()) == [v % _U64 for v in INT8.values()]


def test_text_hashes_as_postgresql() -> None:
    assert _hashes("text", list(TEXT), pa.string()) == [v % _U64 for v in TEXT.values()]


@given(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=20))
def test_an_int4_hashes_as_the_int8_of_the_same_value(values: list[int]) -> None:
    """hashint8extended folds a value that fits in 32 bits to that value (PostgreSQL's
    cross-type hash opfamily relies on it)."""
    assert _hashes("integer", values, pa.int32()) == _hashes("bigint", values, pa.int64())


def test_a_null_key_adds_nothing_to_the_row_hash() -> None:
    t = parse_type("integer")
    rows = pghash.row_hashes([(t, pa.array([None, 1], pa.int32())), (t, pa.array([None, None], pa.int32()))], 2)
    assert rows[0] == 0
    one = pghash.row_hashes([(t, pa.array([1], pa.int32()))], 1)
    assert rows[1] == one[0] and rows.dtype == np.uint64
