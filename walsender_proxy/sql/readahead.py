"""Read-ahead for long output streams (COPY TO).

Producing a COPY stream (DuckDB scan, then text encoding) and sending it alternate in one
thread: while a batch is encoded the client only has what the socket buffer holds, a few
hundredths of a second of work for a subscriber's tablesync worker, and then waits. With the
next chunks made on another thread while the current ones are sent, the client is kept busy
and the proxy's work hides behind its own. Both sides mostly run in C (DuckDB, Arrow, the
socket), so the two threads do overlap.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")

_END = object()


class ReadAhead(Generic[T]):
    """Iterates ``source`` on a thread of its own, at most ``depth`` items ahead.

    The first item is taken inline, so a short stream (one chunk) costs no thread. Errors
    of the source are raised to the consumer in order. A consumer that stops early calls
    :meth:`close` (or drops the iterator): the producer stops at its next item."""

    def __init__(self, source: Iterator[T], depth: int = 64) -> None:
        self._source = source
        self._depth = depth
        self._queue: queue.Queue[object] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._first = True
        self._done = False

    def __iter__(self) -> ReadAhead[T]:
        return self

    def __next__(self) -> T:
        if self._done:
            raise StopIteration
        if self._first:
            self._first = False
            try:
                item = next(self._source)
            except StopIteration:
                self._done = True
                raise
            self._queue = queue.Queue(self._depth)
            self._thread = threading.Thread(
                target=_produce, args=(self._source, self._queue, self._stop),
                name="copy-readahead", daemon=True,
            )
            self._thread.start()
            return item
        assert self._queue is not None
        item = self._queue.get()
        if item is _END:
            self._done = True
            raise StopIteration
        if isinstance(item, _Failure):
            self._done = True
            raise item.error
        return item  # type: ignore[return-value]

    def close(self) -> None:
        self._done = True
        self._stop.set()
        if self._queue is not None:
            while True:  # unblock a producer waiting for room
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    break
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)
        elif self._thread is None:
            close = getattr(self._source, "close", None)
            if close is not None:
                close()

    def __del__(self) -> None:
        self._stop.set()


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _produce(source: Iterator[object], q: queue.Queue[object], stop: threading.Event) -> None:
    """The producer: holds no reference to its :class:`ReadAhead`, so dropping that
    stops it."""
    try:
        for item in source:
            while True:
                if stop.is_set():
                    return
                try:
                    q.put(item, timeout=0.5)
                    break
                except queue.Full:
                    continue
        end: object = _END
    except BaseException as e:  # handed to the consumer, in order
        end = _Failure(e)
    finally:
        if stop.is_set():
            close = getattr(source, "close", None)
            if close is not None:
                close()
    while not stop.is_set():
        try:
            q.put(end, timeout=0.5)
            return
        except queue.Full:
            continue
