"""The ``[spark]`` configuration and the type mapping (no JVM needed)."""

from __future__ import annotations

import pytest

from decoding.errors import PgError
from walsender_proxy.config import load_config
from walsender_proxy.spark.session import REQUIRED_CONF, SparkSettings

types = pytest.importorskip("pyspark.sql.types")


def test_default_config_is_local_mode() -> None:
    s = SparkSettings.from_config(load_config())
    assert s.master == "local[*]" and s.remote == "" and s.read_rows_threshold == 0
    conf = s.effective_conf()
    for k, v in REQUIRED_CONF.items():
        assert conf[k] == v


def test_user_settings_and_cluster_master() -> None:
    s = SparkSettings.from_config(
        {"spark": {"master": "spark://h:7077", "conf": {"spark.executor.memory": "8g",
                                                         "spark.sql.session.timeZone": "Europe/Paris"}}}
    )
    conf = s.effective_conf()
    assert s.master == "spark://h:7077" and conf["spark.executor.memory"] == "8g"
    assert conf["spark.sql.session.timeZone"] == "UTC"  # the lake's files depend on it


@pytest.mark.parametrize("key", ["spark.jars.packages", "spark.jars.repositories"])
def test_downloads_are_refused(key: str) -> None:
    with pytest.raises(PgError) as ei:
        SparkSettings.from_config({"spark": {"conf": {key: "x"}}})
    assert ei.value.sqlstate == "22023"


def test_unknown_setting_is_an_error() -> None:
    with pytest.raises(PgError) as ei:
        SparkSettings.from_config({"spark": {"masterr": "local"}})
    assert ei.value.sqlstate == "42704"


@pytest.mark.parametrize(
    ("dt", "pg"),
    [
        (types.BooleanType(), "boolean"),
        (types.ByteType(), "smallint"),
        (types.IntegerType(), "integer"),
        (types.LongType(), "bigint"),
        (types.FloatType(), "real"),
        (types.DoubleType(), "double precision"),
        (types.DecimalType(12, 3), "numeric(12,3)"),
        (types.StringType(), "text"),
        (types.BinaryType(), "bytea"),
        (types.DateType(), "date"),
        (types.TimestampType(), "timestamp with time zone"),
        (types.TimestampNTZType(), "timestamp"),
        (types.DayTimeIntervalType(), "interval"),
        (types.ArrayType(types.IntegerType()), "integer[]"),
        (types.ArrayType(types.ArrayType(types.IntegerType())), "jsonb"),
        (types.StructType([types.StructField("a", types.IntegerType())]), "jsonb"),
        (types.MapType(types.StringType(), types.IntegerType()), "jsonb"),
    ],
)
def test_spark_types_choose_postgres_types(dt: object, pg: str) -> None:
    from walsender_proxy.spark.types import pg_type_for

    assert pg_type_for(dt, "c") == pg  # type: ignore[arg-type]
