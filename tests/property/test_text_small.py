"""The value-by-value text output used for tiny row batches must give exactly the bytes of
the vectorised one, for every value of the types it takes (and decline the rest)."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from decoding.pgtypes import parse_type
from decoding.pgvalues import encode_text_arrow
from decoding.pgvalues.textout import small_text_encoder

INT64 = (-(1 << 63), (1 << 63) - 1)
CASES = {
    "int2": (pa.int16(), st.integers(-(1 << 15), (1 << 15) - 1)),
    "int4": (pa.int32(), st.integers(-(1 << 31), (1 << 31) - 1)),
    "int8": (pa.int64(), st.integers(*INT64)),
    "text": (pa.string(), st.text()),
    "varchar": (pa.string(), st.text(max_size=20)),
    "jsonb": (pa.string(), st.text(max_size=20)),
    "bool": (pa.bool_(), st.booleans()),
    # every microsecond from far BC to far AD, and ±infinity (INT64 min/max)
    "timestamp": (pa.timestamp("us"), st.integers(*INT64)),
    "timestamptz": (pa.timestamp("us", tz="UTC"), st.integers(*INT64)),
    "date": (pa.date32(), st.integers(-(1 << 31), (1 << 31) - 1)),
}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(CASES)), st.data())
def test_small_text_output_equals_the_arrow_path(name: str, data: st.DataObject) -> None:
    arrow_type, values = CASES[name]
    raw = data.draw(st.lists(st.one_of(st.none(), values), min_size=1, max_size=8))
    if pa.types.is_timestamp(arrow_type) or pa.types.is_date32(arrow_type):
        storage = pa.int64() if pa.types.is_timestamp(arrow_type) else pa.int32()
        arr = pa.array(raw, storage).view(arrow_type)
    else:
        arr = pa.array(raw, arrow_type)
    ctype = parse_type(name)
    enc = small_text_encoder(ctype, arr.type)
    assert enc is not None and enc(arr) == encode_text_arrow(ctype, arr).to_pylist()


def test_small_text_output_declines_what_it_does_not_cover() -> None:
    assert small_text_encoder(parse_type("numeric"), pa.string()) is None
    assert small_text_encoder(parse_type("float8"), pa.float64()) is None
    assert small_text_encoder(parse_type("int4[]"), pa.list_(pa.int32())) is None
    assert small_text_encoder(parse_type("timestamp"), pa.timestamp("ns")) is None
