"""The data pipeline on Spark (PySpark): ingest sources into lake tables, compact tables into
new checkpoints, and read tables at a CSN for big COPY/SELECT results.

Spark reads the table store's Parquet files directly; it never writes the change log. Its
changes are committed by the lake (:mod:`walsender_proxy.lake.bulk`), through a running proxy
over the wire protocol or in-process against a stopped proxy's data directory. PySpark is an
optional dependency (``pip install walsender-proxy[spark]``); nothing here imports it at module
load time of the server.
"""
