"""Process-wide allocator settings and trimming, for the server and its walsender processes
alike (this module loads neither DuckDB nor the lake)."""

from __future__ import annotations

import ctypes
import os

import pyarrow as pa

_M_MMAP_THRESHOLD = -3
try:
    _libc: ctypes.CDLL | None = ctypes.CDLL("libc.so.6")
    _libc.malloc_trim.argtypes = [ctypes.c_size_t]
    _libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
except (OSError, AttributeError):  # not glibc
    _libc = None


def release_memory() -> None:
    """Give memory freed by a big statement, commit, fold or streamed transaction back to
    the operating system: Arrow's allocator keeps freed blocks in its pool and glibc in its
    arenas (numpy's large buffers come from malloc, one arena per thread that made them)."""
    pa.default_memory_pool().release_unused()
    if _libc is not None:
        _libc.malloc_trim(0)


def tune_allocator() -> None:
    """Serve big allocations from their own mappings, returned to the system when freed.

    glibc raises its mmap threshold each time a big mapped block is freed (up to 32 MB),
    after which the buffers of a 1M-row statement (DuckDB's result, its conversion to
    Arrow, Parquet's) come from the per-thread arenas and stay there, freed but resident,
    one arena per thread that touched them. A fixed threshold keeps them out of the arenas;
    the price is a page fault per page of a new big buffer, small beside the work that fills
    it. Process-wide: set once, when the lake opens or a walsender process starts."""
    if _libc is not None:
        _libc.mallopt(_M_MMAP_THRESHOLD, 256 << 10)
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL", "system") == "system":
        # (pyarrow may have been imported before ``decoding`` chose its pool: then at least
        # the calls made from Python use the system allocator.)
        pa.set_memory_pool(pa.system_memory_pool())
