"""Decoding: the change log, its records and catalog, and the pgoutput plugin.

Importing this package picks Arrow's allocator before pyarrow loads (pyarrow fixes its
default pool when it is imported): the system allocator, unless ``ARROW_DEFAULT_MEMORY_POOL``
says otherwise. With the lake's fixed mmap threshold (``decoding.allocator``) glibc returns a
big buffer to the operating system when it is freed; mimalloc, pyarrow's default, kept the
buffers of a 1M-row statement, a fold or a decoded chunk resident afterwards (scenario 6
of scripts/bench.py; docs/changelog/performance.md, session 6)."""

import os

os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
