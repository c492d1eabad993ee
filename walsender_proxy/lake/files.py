"""The lake's file format: the columns every delta row carries beside a table's own, the
operation codes, and how Parquet files are written — shared by the table store, the spill
and changeset files, and the Spark pipeline."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from decoding.catalog import RID

CSN, SEQ, OP = "_csn", "_seq", "_op"
OP_WRITE, OP_DELETE, OP_TRUNCATE = 0, 1, 2
#: The CSN given to a transaction's own, uncommitted delta rows when it reads its writes.
OWN_CSN = (1 << 63) - 1
#: Rows per Parquet row group: DuckDB's own unit of parallelism and of statistics pruning.
ROW_GROUP = 122_880
#: How the lake writes Parquet. No dictionary encoding: the writer tries a dictionary for
#: every column first, which for high-cardinality text (most of it) costs twice the time and
#: memory of plain encoding and ends in a larger file; zstd takes care of repetition.
PARQUET_OPTIONS: dict[str, Any] = {"compression": "zstd", "use_dictionary": False}
#: Row groups of a statement's changeset file (beside the log).
CHANGESET_ROW_GROUP = 131_072
DELTA_META = pa.schema([(CSN, pa.int64()), (SEQ, pa.int64()), (OP, pa.int8()), (RID, pa.int64())])
