"""Spark sessions from the ``[spark]`` configuration section.

Local mode (``local[*]``) is the embedded default; a cluster is ``master = "spark://…"`` (or
``yarn``, ``k8s://…``) and a Spark Connect server is ``remote = "sc://host:15002"`` — a
configuration change, not a code change. A few settings are not negotiable because the lake's
files depend on them; they are applied after the user's.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from decoding.errors import PgError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: What the lake's Parquet needs from Spark: TIME columns readable, timestamps written as
#: INT64 microseconds (not INT96), no session time zone shifting timestamptz values.
REQUIRED_CONF: dict[str, str] = {
    "spark.sql.timeType.enabled": "true",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.datetimeRebaseModeInRead": "CORRECTED",
}
#: Defaults a user may override.
DEFAULT_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.driver.memory": "2g",
    "spark.sql.adaptive.enabled": "true",
}
FORBIDDEN = ("spark.jars.packages", "spark.jars.repositories")


@dataclass(frozen=True, slots=True)
class SparkSettings:
    master: str = "local[*]"
    #: Spark Connect URL (``sc://host:port``); when set, ``master`` is not used.
    remote: str = ""
    app_name: str = "walsender-proxy"
    conf: dict[str, str] = field(default_factory=dict)
    #: COPY/SELECT of a whole table with at least this many rows is read by Spark
    #: (0: never; DuckDB serves everything).
    read_rows_threshold: int = 0

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> SparkSettings:
        sec = dict(config.get("spark", {}))
        conf = {str(k): str(v) for k, v in sec.pop("conf", {}).items()}
        for k in FORBIDDEN:
            if k in conf:
                raise PgError(
                    "22023",
                    f'Spark setting "{k}" is not allowed: nothing may be downloaded at run time',
                    hint="Put the jars on the cluster's classpath instead (spark.jars).",
                )
        known = {"master", "remote", "app_name", "read_rows_threshold"}
        for k in sec:
            if k not in known:
                raise PgError("42704", f'unrecognized configuration parameter "spark.{k}"')
        return cls(conf=conf, **sec)

    def effective_conf(self) -> dict[str, str]:
        return {**DEFAULT_CONF, **self.conf, **REQUIRED_CONF}


_lock = threading.Lock()


def get_session(settings: SparkSettings | None = None) -> SparkSession:
    """The process's Spark session (created once: a JVM costs seconds and a gigabyte)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise PgError(
            "0A000",
            "the Spark pipeline needs PySpark",
            hint='Install it with: pip install "walsender-proxy[spark]" (and Java 17+).',
        ) from None
    s = settings or SparkSettings()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", _python())
    with _lock:
        b = SparkSession.builder.appName(s.app_name)
        b = b.remote(s.remote) if s.remote else b.master(s.master)
        for k, v in s.effective_conf().items():
            b = b.config(k, v)
        spark = b.getOrCreate()
        if not s.remote:
            spark.sparkContext.setLogLevel("ERROR")
            # Spark resolves SQL settings through the calling JVM thread's active session;
            # a Python thread new to py4j has none and would get defaults (no TIME type).
            jvm = spark.sparkContext._jvm
            assert jvm is not None
            jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)
        return spark


def _python() -> str:
    import sys

    return sys.executable
