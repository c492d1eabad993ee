"""PostgreSQL column types ↔ Spark types.

The lake stores each PostgreSQL type in one Arrow type (:mod:`decoding.pgtypes`); Spark reads
and writes those Parquet columns as the matching Spark type, so a table's Spark schema is
derived from its Arrow schema. Sources are the other direction: a Spark type chooses the
PostgreSQL type of a new column, and source columns are cast to an existing table's types —
with ANSI casts, so a value that does not fit is an error, not a NULL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from decoding.catalog import RID, Column, Table
from decoding.errors import PgError

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType, StructType


def storage_type(c: Column) -> DataType:
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(c.type.arrow)


def table_schema(t: Table, *, with_rid: bool = False, physical: bool = False) -> StructType:
    from pyspark.sql.types import LongType, StructField, StructType

    fields = [StructField(RID, LongType(), False)] if with_rid else []
    fields += [
        StructField(c.physical if physical else c.name, storage_type(c), True) for c in t.columns
    ]
    return StructType(fields)


def pg_type_for(dt: DataType, column: str) -> str:
    """The PostgreSQL type a new column of Spark type ``dt`` gets."""
    from pyspark.sql import types as T

    simple: list[tuple[type, str]] = [
        (T.BooleanType, "boolean"),
        (T.ByteType, "smallint"),
        (T.ShortType, "smallint"),
        (T.IntegerType, "integer"),
        (T.LongType, "bigint"),
        (T.FloatType, "real"),
        (T.DoubleType, "double precision"),
        (T.StringType, "text"),
        (T.VarcharType, "text"),
        (T.CharType, "text"),
        (T.BinaryType, "bytea"),
        (T.DateType, "date"),
        (T.TimestampNTZType, "timestamp"),
        (T.TimestampType, "timestamp with time zone"),
        (T.TimeType, "time"),
        (T.DayTimeIntervalType, "interval"),
        (T.YearMonthIntervalType, "interval"),
        (T.NullType, "text"),
    ]
    for cls, name in simple:
        if isinstance(dt, cls):
            return name
    if isinstance(dt, T.DecimalType):
        return f"numeric({dt.precision},{dt.scale})"
    if isinstance(dt, T.ArrayType):
        inner = pg_type_for(dt.elementType, column)
        if inner.endswith("[]") or inner == "jsonb":
            return "jsonb"  # PostgreSQL arrays are rectangular; nested lists are documents
        return inner + "[]"
    if isinstance(dt, (T.StructType, T.MapType)):
        return "jsonb"
    raise PgError("0A000", f'column "{column}" has Spark type {dt.simpleString()}, which has no PostgreSQL type')


def through_input(src: DataType, c: Column) -> bool:
    """Whether source values reach column ``c`` as text for its type's input function
    (decoding.pgvalues), as a COPY field or a literal would: any string into a column that
    is not unconstrained text (Spark's casts read bytea as UTF-8, dates and booleans their
    own way, and keep json, uuid and numeric text as written), and documents (structs,
    maps, arrays) into json/jsonb once Spark wrote them as JSON text."""
    from pyspark.sql import types as T

    ct = c.type
    if isinstance(src, T.StringType | T.VarcharType | T.CharType):
        return ct.is_array or ct.typmod >= 0 or ct.base.name not in ("text", "varchar", "bpchar")
    return isinstance(src, T.StructType | T.MapType | T.ArrayType) and ct.base.name in ("json", "jsonb") and not ct.is_array


def to_storage(col: SparkColumn, src: DataType, c: Column, table: str) -> SparkColumn:
    """A source column as table column ``c`` stores it (as text where :func:`through_input`:
    :func:`conform` then runs the input function)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    base = c.type.base.name
    target = storage_type(c)
    if through_input(src, c):
        text = F.to_json(col) if isinstance(src, T.StructType | T.MapType | T.ArrayType) else col.cast(T.StringType())
        if base in _RAW_TIMES and not c.type.is_array:
            # as their integers: Python's datetime has no infinity nor years past 9999
            raw = F.udf(_input_function(c.name, c.type.to_json()), T.LongType(), useArrow=False)(text)
            if base == "date":
                return F.date_from_unix_date(raw.cast(T.IntegerType()))
            stamp = F.timestamp_micros(raw)
            return stamp if base == "timestamptz" else stamp.cast(T.TimestampNTZType())
        return F.udf(_input_function(c.name, c.type.to_json()), target, useArrow=False)(text)
    if base == "interval":
        if isinstance(src, T.DayTimeIntervalType):
            micros = F.unix_micros(F.timestamp_seconds(F.lit(0)) + col)
            return F.when(col.isNull(), None).otherwise(
                F.struct(F.lit(0).alias("months"), F.lit(0).alias("days"), micros.alias("microseconds"))
            )
        if isinstance(src, T.YearMonthIntervalType):
            raise PgError(
                "0A000",
                f'column "{c.name}" of "{table}": year-month intervals are not supported as input',
                hint="Provide a struct<months int, days int, microseconds bigint>.",
            )
    if isinstance(src, (T.StructType, T.MapType, T.ArrayType)) and isinstance(target, T.StringType):
        return F.to_json(col)
    return col.cast(target)


def conform(df: DataFrame, t: Table, *, allow_missing: bool = True) -> DataFrame:
    """``df`` with ``t``'s columns (SQL names) in their storage types. A source column the
    table lacks is an error (42703); a missing column is NULL unless it is NOT NULL or part
    of the key (23502)."""
    from pyspark.sql import functions as F

    src = {f.name: f.dataType for f in df.schema.fields}
    known = {c.name for c in t.columns}
    for name in src:
        if name not in known:
            raise PgError("42703", f'column "{name}" of relation "{t.name}" does not exist',
                          detail="The source has a column the table does not.")
    cols = []
    for c in t.columns:
        if c.name in src:
            cols.append(to_storage(F.col(f"`{c.name}`"), src[c.name], c, t.name).alias(c.name))
        elif not allow_missing or c.not_null or c.name in t.primary_key:
            raise PgError(
                "23502",
                f'null value in column "{c.name}" of relation "{t.name}" violates not-null constraint',
                detail="The source has no such column.",
            )
        else:
            cols.append(F.lit(None).cast(storage_type(c)).alias(c.name))
    return df.select(*cols)


_RAW_TIMES = frozenset({"date", "timestamp", "timestamptz"})

#: How an input error leaves a Python worker: Spark passes on the exception's text only.
INPUT_ERROR = "[SQLSTATE {sqlstate}] {message} [DETAIL] {detail}"
INPUT_ERROR_RE = r"\[SQLSTATE ([0-9A-Z]{5})\] ([^\n]*?) \[DETAIL\] ([^\n]*)"


def _input_function(name: str, ctype_json: str) -> Callable[[str | None], Any]:
    """The Spark UDF (one value at a time: Arrow UDFs need pandas) that runs column
    ``name``'s input function (decoding.pgvalues) on the executors and gives the value in
    its storage form, or PostgreSQL's error."""

    def convert(text: str | None) -> Any:
        if text is None:
            return None
        from decoding.pgtypes import ColumnType
        from decoding.pgvalues import decode_text_arrow

        ctype = ColumnType.from_json(ctype_json)
        try:
            arr = decode_text_arrow(ctype, [text])
            if ctype.base.name in _RAW_TIMES and not ctype.is_array:
                return arr.view(pa.int32() if ctype.base.name == "date" else pa.int64())[0].as_py()
            value = arr[0]
            try:
                return value.as_py()
            except (ValueError, OverflowError):  # a date or time Python cannot hold
                raise PgError(
                    "0A000", f'value "{text}" is outside the range Spark carries for {ctype.sql_name()}'
                ) from None
        except PgError as e:
            detail = f'Source column "{name}".' + (f" {e.detail}" if e.detail else "")
            raise RuntimeError(INPUT_ERROR.format(sqlstate=e.sqlstate, message=e.message, detail=detail)) from None

    return convert
