"""walsender-proxy: a PostgreSQL logical-replication publisher over a Parquet lake."""

import decoding  # noqa: F401  (first: it picks Arrow's allocator before pyarrow loads)
