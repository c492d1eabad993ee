"""COPY TO reads ahead on a thread of its own: same items in the same order, the source's
error where it happened, and a consumer that stops early stops the producer too."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from walsender_proxy.sql.readahead import ReadAhead


def test_items_come_in_order_and_a_short_stream_needs_no_thread() -> None:
    def readahead_threads() -> int:  # (other tests' threads may come and go meanwhile)
        return sum(t.name == "copy-readahead" for t in threading.enumerate())

    before = readahead_threads()
    assert list(ReadAhead(iter([b"only"]))) == [b"only"]
    assert readahead_threads() == before
    assert list(ReadAhead(iter(range(10_000)), depth=3)) == list(range(10_000))
    assert list(ReadAhead(iter([]))) == []


def test_an_error_of_the_source_comes_after_the_items_before_it() -> None:
    def source() -> Iterator[int]:
        yield from range(5)
        raise ValueError("bad value at row 6")

    got = []
    with pytest.raises(ValueError, match="row 6"):
        for x in ReadAhead(source(), depth=2):
            got.append(x)
    assert got == list(range(5))


def test_closing_early_stops_the_producer_and_closes_the_source() -> None:
    closed = threading.Event()

    def source() -> Iterator[int]:
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.set()

    it = ReadAhead(source(), depth=4)
    assert [next(it) for _ in range(3)] == [0, 1, 2]
    it.close()
    assert closed.wait(5)
    assert it._thread is not None and not it._thread.is_alive()
    with pytest.raises(StopIteration):
        next(it)


def test_dropping_the_iterator_stops_the_producer() -> None:
    def source() -> Iterator[int]:
        yield from range(1_000_000)

    it = ReadAhead(source(), depth=2)
    next(it)
    thread = it._thread
    assert thread is not None
    del it
    deadline = time.monotonic() + 5
    while thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not thread.is_alive()
