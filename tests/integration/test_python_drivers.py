"""Outside Python drivers — asyncpg, SQLAlchemy 2 (psycopg 3, psycopg2 and asyncpg
dialects) and pandas — doing ordinary work against the proxy, with PostgreSQL 15 as the
reference: each tour runs on both and everything the client returns must be the same.

asyncpg prepares and describes every statement and then binds parameters in binary by the
types ParameterDescription names, and introspects pg_type for types it has no codec for;
SQLAlchemy reflects tables through pg_catalog; pandas goes through SQLAlchemy. Where the
proxy cannot do what PostgreSQL does, the tour records the refusal (0A000 naming the
feature) and the test checks that exact refusal instead of PostgreSQL's answer.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import decimal
import functools
import itertools
import json
import uuid
from typing import Any

import pytest
from sqlalchemy.orm import Mapped  # (module level: the ORM resolves annotations here)

from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer

_names = itertools.count(1)
UTC = dt.UTC


def _conninfo(dsn: str) -> dict[str, Any]:
    out = dict(part.split("=", 1) for part in dsn.split())
    return {"host": out["host"], "port": int(out["port"]), "user": out["user"], "database": out["dbname"]}


def _url(driver: str, dsn: str) -> str:
    c = _conninfo(dsn)
    return f"postgresql+{driver}://{c['user']}@{c['host']}:{c['port']}/{c['database']}"


def _diff(ref: list[Any], got: list[Any]) -> None:
    for i, (a, b) in enumerate(zip(ref, got, strict=False)):
        assert b == a, f"step {i} differs:\npostgres: {a!r}\nproxy:    {b!r}"
    assert len(got) == len(ref)


# -- asyncpg ---------------------------------------------------------------------------------


async def _asyncpg_tour(dsn: str, t: str) -> list[Any]:
    import asyncpg

    out: list[Any] = []

    def rows(rs: list[Any]) -> list[tuple[Any, ...]]:
        return [tuple(r.items()) for r in rs]

    async def attempt(label: str, coro: Any) -> None:
        try:
            out.append((label, await coro))
        except asyncpg.PostgresError as e:
            out.append((label, "error", e.sqlstate, str(e)))

    conn = await asyncpg.connect(**_conninfo(dsn))
    try:
        # parameters of every common type, each bound in binary by its described type
        out.append(rows(await conn.fetch("SELECT $1::int AS i", 1)))
        out.append(
            rows(
                await conn.fetch(
                    "SELECT $1::text AS t, $2::numeric AS n, $3::date AS d, $4::timestamptz AS ts, "
                    "$5::bool AS b, $6::float8 AS f, $7::bigint AS i8, $8::bytea AS by, $9::uuid AS u, "
                    "$10::int[] AS a, $11::interval AS iv, $12::smallint AS i2",
                    "x'y",
                    decimal.Decimal("12.50"),
                    dt.date(2024, 2, 29),
                    dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
                    True,
                    1.25,
                    2**40,
                    b"\x00\xff",
                    uuid.UUID(int=42),
                    [1, None, 3],
                    dt.timedelta(days=2, seconds=7),
                    -5,
                )
            )
        )
        out.append(await conn.fetchval("SELECT $1", "unknown is text"))
        # function arguments take the function's types (pg_advisory_lock's is bigint)
        out.append(await conn.fetchval("SELECT pg_try_advisory_lock($1)", 42))
        out.append(await conn.fetchval("SELECT pg_advisory_unlock($1)", 42))
        out.append(await conn.fetchval("SELECT pg_try_advisory_lock($1, $2)", 1, 2))
        out.append(await conn.fetchval("SELECT pg_advisory_unlock_all()"))
        out.append(tuple(await conn.fetchrow("SELECT lower($1), left($2, $3), to_timestamp($4)", "ABC", "abcdef", 2, 86400.5)))
        await conn.execute(
            f"CREATE TABLE {t} (id int PRIMARY KEY, name text NOT NULL, score numeric(10,2), "
            f"created timestamptz, tags text[], doc jsonb, flag boolean)"
        )
        # INSERT with parameters: their types are the columns'
        out.append(await conn.execute(f"INSERT INTO {t} VALUES ($1, $2, $3, $4, $5, $6)", 1, "one", decimal.Decimal("1.5"), dt.datetime(2024, 5, 1, tzinfo=UTC), ["a", "b"], '{"k": 1}'))
        await conn.executemany(f"INSERT INTO {t} (id, name, score) VALUES ($1, $2, $3)", [(i, f"n{i}", decimal.Decimal(i) / 4) for i in range(2, 8)])
        out.append(rows(await conn.fetch(f"SELECT * FROM {t} WHERE id = $1", 2)))
        out.append(rows(await conn.fetch(f"SELECT id FROM {t} WHERE id = ANY($1) ORDER BY id", [1, 3, 5])))
        out.append(rows(await conn.fetch(f"SELECT id FROM {t} WHERE name = ANY($1::text[]) ORDER BY id", ["n2", "n4"])))
        out.append(rows(await conn.fetch(f"SELECT id FROM {t} WHERE id IN ($1, $2) ORDER BY id", 4, 6)))
        out.append(rows(await conn.fetch(f"SELECT id FROM {t} WHERE id BETWEEN $1 AND $2 ORDER BY id", 2, 4)))
        out.append(rows(await conn.fetch(f"SELECT id, name FROM {t} WHERE name LIKE $1 ORDER BY id LIMIT $2 OFFSET $3", "n%", 2, 1)))
        out.append(rows(await conn.fetch(f"SELECT id FROM {t} WHERE score > $1 AND id < $2 + 10 ORDER BY id", decimal.Decimal("0.9"), 1)))
        out.append(await conn.execute(f"UPDATE {t} SET name = $1, score = score + $2 WHERE id = $3", "two", decimal.Decimal(1), 2))
        out.append(rows(await conn.fetch(f"DELETE FROM {t} WHERE id = $1 RETURNING id, name", 7)))
        out.append(rows(await conn.fetch(f"UPDATE {t} SET name = $2 WHERE id = $1 RETURNING id, name", 3, "three")))
        out.append(rows(await conn.fetch(f"SELECT * FROM {t} ORDER BY id")))
        # prepared statements: what asyncpg was told of parameters and columns
        st = await conn.prepare(f"SELECT id, name, score, doc FROM {t} WHERE id = $1 OR name = $2 ORDER BY id")
        out.append([(p.name, p.kind) for p in st.get_parameters()])
        out.append([(a.name, a.type.name) for a in st.get_attributes()])
        out.append([tuple(r) for r in await st.fetch(1, "n4")])
        out.append(await st.fetchval(2, "none"))
        # transactions and savepoints
        async with conn.transaction():
            await conn.execute(f"INSERT INTO {t} (id, name) VALUES ($1, $2)", 20, "tx")
        try:
            async with conn.transaction():
                await conn.execute(f"INSERT INTO {t} (id, name) VALUES ($1, $2)", 21, "rolled back")
                raise RuntimeError("roll back")
        except RuntimeError:
            pass
        async with conn.transaction():
            await conn.execute(f"INSERT INTO {t} (id, name) VALUES ($1, $2)", 22, "outer")
            try:
                async with conn.transaction():
                    await conn.execute(f"INSERT INTO {t} (id, name) VALUES ($1, $2)", 23, "inner")
                    await conn.execute(f"INSERT INTO {t} (id, name) VALUES ($1, $2)", 1, "duplicate")
            except asyncpg.UniqueViolationError as e:
                out.append((e.sqlstate, str(e), e.detail))
        out.append(rows(await conn.fetch(f"SELECT id, name FROM {t} WHERE id >= 20 ORDER BY id")))
        # a cursor inside a transaction
        async with conn.transaction():
            out.append([tuple(r) async for r in conn.cursor(f"SELECT id FROM {t} WHERE id > $1 ORDER BY id", 3, prefetch=2)])
        # COPY
        out.append(await conn.copy_records_to_table(t, records=[(30, "c30", decimal.Decimal("3.25"), None, ["x"], None, True), (31, "c31", None, None, None, None, None)]))
        out.append(await conn.copy_records_to_table(t, records=[(32, "c32")], columns=["id", "name"]))
        out.append(rows(await conn.fetch(f"SELECT * FROM {t} WHERE id >= 30 ORDER BY id")))
        # errors
        await attempt("type error", conn.fetch(f"SELECT * FROM {t} WHERE id = $1", "not an int"))
        await attempt("not null", conn.execute(f"INSERT INTO {t} (id) VALUES ($1)", 40))
        await attempt("undefined", conn.fetch("SELECT * FROM no_such_table_here WHERE id = $1", 1))
        # a codec for jsonb (text format: not usable by a binary COPY any more)
        await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
        out.append(await conn.fetchval(f"SELECT doc FROM {t} WHERE id = 1"))
        out.append(await conn.fetchval("SELECT $1::jsonb", {"a": [1, 2, {"b": None}]}))
    finally:
        await conn.close()
    return out


async def _asyncpg_pool(dsn: str, t: str) -> list[Any]:
    """A pool's acquire and release: release resets the connection (asyncpg's
    ``SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL;``)."""
    import asyncpg

    out: list[Any] = []
    pool = await asyncpg.create_pool(**_conninfo(dsn), min_size=1, max_size=2)
    try:
        async with pool.acquire() as c:
            await c.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, v text)")
            await c.execute("SET application_name = 'pooled'")
            await c.execute(f"INSERT INTO {t} VALUES ($1, $2)", 1, "a")
        async with pool.acquire() as c:
            out.append(await c.fetchval("SHOW application_name"))  # RESET ALL ran
            out.append([tuple(r) for r in await c.fetch(f"SELECT * FROM {t}")])
        out.append(await pool.fetchval(f"SELECT count(*) FROM {t} WHERE id = $1", 1))
        async with pool.acquire() as c1, pool.acquire() as c2:
            out.append((await c1.fetchval("SELECT $1::int + 1", 1), await c2.fetchval("SELECT $1::text", "b")))
    finally:
        await pool.close()
    return out


async def _asyncpg_enum(dsn: str, t: str) -> list[Any]:
    """User-defined types: asyncpg introspects them through pg_type (a domain's base type)
    and pg_enum (an enum's labels; an enum[]'s element type), then binds and decodes them
    in binary — an enum as its label, an array of one with the enum's OID in its header."""
    import asyncpg

    out: list[Any] = []

    async def attempt(coro: Any) -> Any:
        try:
            return await coro
        except asyncpg.PostgresError as e:
            return ("error", e.sqlstate, str(e))

    def types(ts: Any) -> list[tuple[str, str, str]]:
        return [(ty.name, ty.kind, ty.schema) for ty in ts]  # (OIDs differ between servers)

    conn = await asyncpg.connect(**_conninfo(dsn))
    try:
        for sql in (f"CREATE TYPE {t}_mood AS ENUM ('sad', 'happy')", f"CREATE DOMAIN {t}_pos AS int CHECK (VALUE > 0)"):
            out.append(await attempt(conn.execute(sql)))
        await conn.execute(f"CREATE TABLE {t}_d (id int, p {t}_pos)")
        out.append(await conn.execute(f"INSERT INTO {t}_d VALUES ($1, $2)", 1, 5))
        out.append(await conn.executemany(f"INSERT INTO {t}_d VALUES ($1, $2)", [(2, 6), (3, 7)]))
        out.append(await attempt(conn.execute(f"INSERT INTO {t}_d VALUES ($1, $2)", 4, -1)))
        out.append([tuple(r) for r in await conn.fetch(f"SELECT id, p, p::{t}_pos + 1 FROM {t}_d WHERE p > $1 ORDER BY id", 5)])
        out.append(await conn.fetchval(f"SELECT $1::{t}_pos", 9))
        # enums: labels added, a table of enum and enum[] columns written with parameters
        out.append(await conn.execute(f"ALTER TYPE {t}_mood ADD VALUE 'meh' BEFORE 'happy'"))
        out.append(await conn.execute(f"ALTER TYPE {t}_mood ADD VALUE IF NOT EXISTS 'ecstatic'"))
        await conn.execute(f"CREATE TABLE {t}_m (id int PRIMARY KEY, m {t}_mood NOT NULL, ms {t}_mood[])")
        out.append(await conn.executemany(f"INSERT INTO {t}_m VALUES ($1, $2, '{{sad}}')", [(1, "happy"), (2, "sad")]))
        out.append(await attempt(conn.execute(f"INSERT INTO {t}_m VALUES ($1, $2, $3)", 3, "meh", ["meh", "ecstatic"])))
        out.append(await attempt(conn.execute(f"INSERT INTO {t}_m VALUES ($1, $2)", 4, "ecstatic")))
        out.append(await attempt(conn.execute(f"INSERT INTO {t}_m VALUES ($1, $2)", 5, "nope")))
        out.append(await attempt(conn.execute(f"INSERT INTO {t}_m VALUES ($1, $2, $3)", 5, "sad", ["sad", "nope"])))
        out.append(await attempt(conn.execute(f"UPDATE {t}_m SET m = $1 WHERE id = $2", "meh", 2)))
        out.append(await attempt(conn.execute(f"UPDATE {t}_m SET ms = $1 WHERE id = $2", ["happy", None, "sad"], 1)))
        out.append([tuple(r) for r in await conn.fetch(f"SELECT id, m, ms FROM {t}_m ORDER BY id")])
        out.append([tuple(r) for r in await conn.fetch(f"SELECT id, m, ms FROM {t}_m WHERE m < $1 ORDER BY m, id", "happy")])
        out.append([tuple(r) for r in await conn.fetch(f"SELECT id, m::text FROM {t}_m WHERE m >= $1::{t}_mood ORDER BY id", "meh")])
        out.append(await attempt(conn.fetch(f"SELECT id FROM {t}_m WHERE m = any($1::{t}_mood[]) ORDER BY id", ["sad", "meh"])))
        out.append(await attempt(conn.fetch(f"SELECT id FROM {t}_m WHERE m = any($1) ORDER BY id", ["happy", "ecstatic"])))
        out.append([tuple(r) for r in await conn.fetch(f"SELECT m, count(*), min(id) FROM {t}_m GROUP BY m ORDER BY m")])
        out.append(await conn.fetchrow(f"SELECT min(m), max(m), enum_first(min(m)), enum_last(min(m)) FROM {t}_m"))
        out.append(await conn.fetchval(f"SELECT enum_range(NULL::{t}_mood)"))
        out.append(await conn.fetchval(f"SELECT enum_range($1::{t}_mood, $2::{t}_mood)", "meh", "ecstatic"))
        out.append(await attempt(conn.fetchval(f"SELECT $1::{t}_mood", "nope")))
        out.append(await attempt(conn.fetchval(f"SELECT $1::{t}_mood[]", ["happy", "sad"])))
        # what asyncpg was told of parameters and columns (its introspected types)
        for sql, args in (
            (f"SELECT id, m, m::text AS label FROM {t}_m WHERE m = $1 OR id = $2 ORDER BY id", ("happy", 2)),
            (f"SELECT id, ms FROM {t}_m WHERE ms @> $1 ORDER BY id", (["sad"],)),
        ):
            try:
                stmt = await conn.prepare(sql)
            except asyncpg.PostgresError as e:
                out += [("error", e.sqlstate, str(e)), None]
                continue
            out.append((types(stmt.get_parameters()), [(a.name, a.type.name, a.type.kind, a.type.schema) for a in stmt.get_attributes()]))
            out.append(await attempt(stmt.fetch(*args)))
        # binary COPY (asyncpg's copy_records_to_table) into the enum columns
        out.append(await attempt(conn.copy_records_to_table(f"{t}_m", records=[(10, "meh", ["sad"]), (11, "sad", None)])))
        out.append([tuple(r) for r in await conn.fetch(f"SELECT id, m, ms FROM {t}_m WHERE id >= 10 ORDER BY id")])
        out.append(await attempt(conn.execute(f"DROP TYPE {t}_mood")))
        out.append(await conn.execute(f"DROP TABLE {t}_m"))
        out.append(await conn.execute(f"DROP TYPE {t}_mood"))
    finally:
        await conn.close()
    return out


def test_asyncpg_tour_matches_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    t = f"apg{next(_names)}"
    ref = asyncio.run(_asyncpg_tour(pg15.dsn(dbname=pg15.new_database("pydrv")), t))
    got = asyncio.run(_asyncpg_tour(proxy.dsn(), t))
    _diff(ref, got)


def test_asyncpg_pool_matches_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    t = f"apool{next(_names)}"
    ref = asyncio.run(_asyncpg_pool(pg15.dsn(dbname=pg15.new_database("pydrv")), t))
    got = asyncio.run(_asyncpg_pool(proxy.dsn(), t))
    _diff(ref, got)


def test_asyncpg_domains_and_enums_work(proxy: ProxyServer, pg15: PgCluster) -> None:
    """Domains and enums through asyncpg: every step as with PostgreSQL 15."""
    t = f"aenum{next(_names)}"
    ref = asyncio.run(_asyncpg_enum(pg15.dsn(dbname=pg15.new_database("pydrv")), t))
    assert ref[0] == "CREATE TYPE" and ref[-1] == "DROP TYPE"
    _diff(ref, asyncio.run(_asyncpg_enum(proxy.dsn(), t)))


# -- SQLAlchemy ------------------------------------------------------------------------------


def _sa_reflection(conn: Any, t: str) -> list[Any]:
    """What SQLAlchemy's inspector and MetaData.reflect() make of two tables (``conn``: a
    synchronous Connection, the async one's run_sync included)."""
    import sqlalchemy as sa

    out: list[Any] = []
    insp = sa.inspect(conn)
    out.append(sorted(n for n in insp.get_table_names() if n.startswith(t)))
    out.append(insp.has_table(f"{t}_a"))
    out.append(insp.has_table(f"{t}_nope"))
    for tb in (f"{t}_a", f"{t}_b"):
        out.append(repr(insp.get_columns(tb)))
        out.append(insp.get_pk_constraint(tb))
        out.append(insp.get_foreign_keys(tb))
        out.append(insp.get_indexes(tb))
        out.append(insp.get_unique_constraints(tb))
        out.append(insp.get_check_constraints(tb))
        out.append(insp.get_table_comment(tb))
    out.append(insp.get_foreign_keys(f"{t}_c"))
    md = sa.MetaData()
    md.reflect(conn, only=[f"{t}_a", f"{t}_b"])
    out.append(sorted((tb.name, [(c.name, repr(c.type), c.nullable, c.primary_key) for c in tb.columns]) for tb in md.tables.values()))
    # Core round trip over the reflected table
    a = md.tables[f"{t}_a"]
    conn.execute(a.insert(), [{"id": 1, "name": "x", "score": decimal.Decimal("2.50"), "at": dt.datetime(2024, 1, 1, tzinfo=UTC)}, {"id": 2, "name": "y", "score": None, "at": None}])
    out.append([tuple(r) for r in conn.execute(sa.select(a).where(a.c.id >= sa.bindparam("lo")).order_by(a.c.id), {"lo": 1})])
    out.append([tuple(r) for r in conn.execute(sa.select(a.c.name).where(a.c.id.in_([1, 2])).order_by(a.c.name.desc()))])
    out.append(conn.execute(a.update().where(a.c.id == 2).values(score=decimal.Decimal("7.25"))).rowcount)
    out.append(conn.execute(sa.select(sa.func.count()).select_from(a).where(a.c.score > 1)).scalar())
    return out


def _sa_create(conn: Any, t: str) -> None:
    conn.exec_driver_sql(f"CREATE TABLE {t}_a (id int PRIMARY KEY, name varchar(20) NOT NULL, score numeric(8,2), at timestamptz)")
    conn.exec_driver_sql(f"CREATE TABLE {t}_b (k1 int, k2 text, v jsonb, d date, PRIMARY KEY (k1, k2), UNIQUE (d, k1))")
    conn.exec_driver_sql(f"CREATE UNIQUE INDEX {t}_a_name ON {t}_a (name) INCLUDE (score)")
    conn.exec_driver_sql(f"CREATE INDEX {t}_a_at ON {t}_a (at DESC, score)")
    conn.exec_driver_sql(
        f"CREATE TABLE {t}_c (id int PRIMARY KEY, a int REFERENCES {t}_a ON DELETE CASCADE, k1 int, k2 text, d date, "
        f"CONSTRAINT {t}_c_b FOREIGN KEY (k1, k2) REFERENCES {t}_b MATCH FULL ON UPDATE RESTRICT ON DELETE SET NULL (k2), "
        f"FOREIGN KEY (d, k1) REFERENCES {t}_b (d, k1))"
    )


def _sa_sync(url: str, t: str) -> list[Any]:
    import sqlalchemy as sa

    eng = sa.create_engine(url)
    try:
        with eng.begin() as conn:
            _sa_create(conn, t)
        with eng.begin() as conn:
            return _sa_reflection(conn, t)
    finally:
        eng.dispose()


def _sa_async(url: str, t: str) -> list[Any]:
    from sqlalchemy.ext.asyncio import create_async_engine

    async def run() -> list[Any]:
        eng = create_async_engine(url)
        try:
            async with eng.begin() as conn:
                await conn.run_sync(_sa_create, t)
            async with eng.begin() as conn:
                return await conn.run_sync(_sa_reflection, t)
        finally:
            await eng.dispose()

    return asyncio.run(run())


@pytest.mark.parametrize("driver", ["psycopg", "psycopg2", "asyncpg"])
def test_sqlalchemy_reflection_matches_postgresql(proxy: ProxyServer, pg15: PgCluster, driver: str) -> None:
    t = f"sar{next(_names)}"
    run = _sa_async if driver == "asyncpg" else _sa_sync
    ref = run(_url(driver, pg15.dsn(dbname=pg15.new_database("pydrv"))), t)
    got = run(_url(driver, proxy.dsn()), t)
    _diff(ref, got)


def _sa_orm(url: str, t: str, *, use_async: bool = False) -> list[Any]:
    """An ORM round trip: create_all (twice: it checks first), add, get, update, delete,
    queries, drop_all; through an AsyncSession with ``use_async`` (the asyncpg dialect)."""
    import sqlalchemy as sa
    from sqlalchemy.orm import DeclarativeBase, Session, mapped_column

    class Base(DeclarativeBase):
        pass

    class Item(Base):
        __tablename__ = t
        id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
        name: Mapped[str] = mapped_column(sa.String(30))
        price: Mapped[decimal.Decimal | None] = mapped_column(sa.Numeric(10, 2))
        created: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
        tags: Mapped[list[str] | None] = mapped_column(sa.ARRAY(sa.Text))

    def body(s: Session) -> list[Any]:
        out: list[Any] = []
        s.add_all([Item(id=i, name=f"item {i}", price=decimal.Decimal(i) / 3, created=dt.datetime(2024, 1, i, tzinfo=UTC), tags=[f"t{i}"] if i % 2 else None) for i in range(1, 6)])
        s.commit()
        out.append([(i.id, i.name, i.price, i.created, i.tags) for i in s.scalars(sa.select(Item).order_by(Item.id))])
        it = s.get(Item, 3)
        assert it is not None
        it.name = "renamed"
        s.delete(s.get(Item, 4))
        s.commit()
        out.append([(i.id, i.name) for i in s.scalars(sa.select(Item).where(Item.name.like("%e%")).order_by(Item.id.desc()))])
        out.append(s.scalar(sa.select(sa.func.sum(Item.price))))
        out.append(s.execute(sa.select(Item.id, Item.tags).where(Item.tags.is_not(None)).order_by(Item.id)).all())
        return out

    if use_async:
        from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

        async def run() -> list[Any]:
            eng = create_async_engine(url)
            try:
                for _ in range(2):
                    async with eng.begin() as conn:
                        await conn.run_sync(Base.metadata.create_all)
                async with AsyncSession(eng) as s:
                    out = await s.run_sync(body)
                async with eng.begin() as conn:
                    await conn.run_sync(Base.metadata.drop_all)
                    out.append(await conn.run_sync(lambda c: sa.inspect(c).has_table(t)))
                return out
            finally:
                await eng.dispose()

        return asyncio.run(run())
    eng = sa.create_engine(url)
    try:
        Base.metadata.create_all(eng)
        Base.metadata.create_all(eng)  # checks first: nothing to do the second time
        with Session(eng) as s:
            out = body(s)
        Base.metadata.drop_all(eng)
        out.append(sa.inspect(eng).has_table(t))
    finally:
        eng.dispose()
    return out


@pytest.mark.parametrize("driver", ["psycopg", "psycopg2", "asyncpg"])
def test_sqlalchemy_orm_round_trip_matches_postgresql(proxy: ProxyServer, pg15: PgCluster, driver: str) -> None:
    t = f"saorm{next(_names)}"
    run = functools.partial(_sa_orm, use_async=driver == "asyncpg")
    ref = run(_url(driver, pg15.dsn(dbname=pg15.new_database("pydrv"))), t)
    got = run(_url(driver, proxy.dsn()), t)
    _diff(ref, got)


# -- pandas ----------------------------------------------------------------------------------


def _records(df: Any) -> list[dict[str, Any]]:
    """A frame's rows, NaN as None (NaN is not equal to itself)."""
    return [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()} for r in df.to_dict("records")]


def _pandas_tour(url: str, t: str) -> list[Any]:
    import pandas as pd
    import sqlalchemy as sa

    out: list[Any] = []
    eng = sa.create_engine(url)
    try:
        df = pd.DataFrame(
            {
                "id": [1, 2, 3],
                "name": ["a", "b", None],
                "value": [1.5, None, -2.25],
                "flag": [True, False, True],
                "at": pd.to_datetime(["2024-01-01 10:00:00", "2024-06-30 23:59:59", "2000-02-29 00:00:00"], utc=True),
            }
        )
        out.append(df.to_sql(t, eng, index=False))
        out.append(df.iloc[:1].to_sql(t, eng, index=False, if_exists="append"))
        out.append(_records(pd.read_sql_table(t, eng).sort_values(["id", "name"])))
        out.append(_records(pd.read_sql_query(sa.text(f"SELECT id, name FROM {t} WHERE value > :v ORDER BY id"), eng, params={"v": 0})))
        out.append(_records(pd.read_sql_query(f"SELECT count(*) AS n, sum(value) AS s FROM {t}", eng)))
        out.append(df.to_sql(t, eng, index=False, if_exists="replace"))
        out.append(_records(pd.read_sql_table(t, eng, columns=["id", "flag"]).sort_values("id")))
        out.append([(c, str(d)) for c, d in pd.read_sql_table(t, eng).dtypes.items()])
        # with its index (pandas makes ix_<table>_index) and read back by it
        out.append(df.set_index("id").to_sql(f"{t}_i", eng))
        out.append(sa.inspect(eng).get_indexes(f"{t}_i"))
        out.append(_records(pd.read_sql_table(f"{t}_i", eng, index_col="id").reset_index()))
    finally:
        eng.dispose()
    return out


def test_pandas_round_trip_matches_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    t = f"pd{next(_names)}"
    ref = _pandas_tour(_url("psycopg", pg15.dsn(dbname=pg15.new_database("pydrv"))), t)
    got = _pandas_tour(_url("psycopg", proxy.dsn()), t)
    _diff(ref, got)


# -- what the drivers are refused ----------------------------------------------------------


def _sa_autoincrement(url: str, t: str) -> list[Any]:
    """An ORM model with an autoincrement key (SERIAL) and an identity column: the keys
    the database gives, and what reflection sees of the table."""
    import sqlalchemy as sa
    from sqlalchemy.orm import DeclarativeBase, Session, mapped_column

    class Base(DeclarativeBase):
        pass

    class Auto(Base):
        __tablename__ = t
        id: Mapped[int] = mapped_column(primary_key=True)
        n: Mapped[int] = mapped_column(sa.Identity(start=10, increment=5))
        name: Mapped[str] = mapped_column(sa.String(20), server_default="anon")

    eng = sa.create_engine(url)
    try:
        Base.metadata.create_all(eng)
        with Session(eng) as s:
            rows = [Auto(), Auto(name="b"), Auto()]
            s.add_all(rows)
            s.commit()
            out: list[Any] = [[(r.id, r.n, r.name) for r in rows]]
        out.append(sa.inspect(eng).get_columns(t))
        Base.metadata.drop_all(eng)
    finally:
        eng.dispose()
    return out


def test_orm_autoincrement_keys_match_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    t = f"auto{next(_names)}"
    ref = _sa_autoincrement(_url("psycopg", pg15.dsn(dbname=pg15.new_database("pydrv"))), t)
    got = _sa_autoincrement(_url("psycopg", proxy.dsn()), t)
    assert repr(got) == repr(ref)


def _sa_relationships(url: str, t: str) -> list[Any]:
    """ORM models with relationships (ForeignKey columns, ON DELETE CASCADE): create_all,
    inserts and deletes through a Session, what reflection sees, and what a violation says."""
    import sqlalchemy as sa
    from sqlalchemy.orm import DeclarativeBase, Session, mapped_column, relationship

    class Base(DeclarativeBase):
        pass

    class Parent(Base):
        __tablename__ = f"{t}_parent"
        id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
        name: Mapped[str] = mapped_column(sa.String(20))
        children: Mapped[list[Child]] = relationship(back_populates="parent", passive_deletes=True)

    class Child(Base):
        __tablename__ = f"{t}_child"
        id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
        parent_id: Mapped[int] = mapped_column(sa.ForeignKey(f"{t}_parent.id", ondelete="CASCADE"))
        parent: Mapped[Parent] = relationship(back_populates="children")

    eng = sa.create_engine(url)
    out: list[Any] = []
    try:
        Base.metadata.create_all(eng)
        with Session(eng) as s:
            s.add_all([Parent(id=1, name="a", children=[Child(id=10), Child(id=11)]), Parent(id=2, name="b", children=[Child(id=20)])])
            s.commit()
            out.append(sorted((c.id, c.parent.name) for c in s.scalars(sa.select(Child))))
            s.delete(s.get(Parent, 1))
            s.commit()
            out.append(sorted(c.id for c in s.scalars(sa.select(Child))))
            s.add(Child(id=30, parent_id=99))
            try:
                s.commit()
            except sa.exc.IntegrityError as e:
                out.append((e.orig.sqlstate, e.orig.diag.message_primary, e.orig.diag.message_detail))  # type: ignore[union-attr]
                s.rollback()
        insp = sa.inspect(eng)
        out.append(insp.get_foreign_keys(f"{t}_child"))
        out.append(insp.get_foreign_keys(f"{t}_parent"))
        Base.metadata.drop_all(eng)
    finally:
        eng.dispose()
    return out


def test_orm_relationships_match_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    t = f"rel{next(_names)}"
    ref = _sa_relationships(_url("psycopg", pg15.dsn(dbname=pg15.new_database("pydrv"))), t)
    got = _sa_relationships(_url("psycopg", proxy.dsn()), t)
    assert repr(got) == repr(ref)


def _sa_checks(url: str, t: str) -> list[Any]:
    """An ORM model with a non-native Enum (a VARCHAR with SQLAlchemy's CHECK … IN) and a
    CheckConstraint: create_all, rows that pass and fail, and what reflection reads back."""
    import sqlalchemy as sa
    from sqlalchemy.orm import DeclarativeBase, Session, mapped_column

    class Base(DeclarativeBase):
        pass

    class Order(Base):
        __tablename__ = t
        __table_args__ = (sa.CheckConstraint("qty > 0 AND qty < 1000", name=f"{t}_qty_range"),)
        id: Mapped[int] = mapped_column(primary_key=True)
        status: Mapped[str] = mapped_column(sa.Enum("new", "paid", "shipped", native_enum=False, create_constraint=True, name="order_status"))
        qty: Mapped[int] = mapped_column(sa.Integer, sa.CheckConstraint("qty <> 13"))
        price: Mapped[decimal.Decimal] = mapped_column(sa.Numeric(10, 2), sa.CheckConstraint("price >= 0"), nullable=True)

    out: list[Any] = []
    eng = sa.create_engine(url)
    try:
        Base.metadata.create_all(eng)
        for row in (
            {"id": 1, "status": "new", "qty": 2, "price": decimal.Decimal("1.50")},
            {"id": 2, "status": "lost", "qty": 2},
            {"id": 3, "status": "paid", "qty": 0},
            {"id": 4, "status": "paid", "qty": 13},
            {"id": 5, "status": "paid", "qty": 1, "price": decimal.Decimal("-0.01")},
        ):
            with Session(eng) as s:
                try:
                    if row["status"] == "lost":  # (the Enum type itself refuses it client-side)
                        s.execute(sa.text(f"INSERT INTO {t} (id, status, qty) VALUES (:id, :status, :qty)"), row)
                    else:
                        s.add(Order(**row))
                    s.commit()
                    out.append("ok")
                except sa.exc.IntegrityError as e:
                    out.append((e.orig.sqlstate, e.orig.diag.message_primary, e.orig.diag.message_detail))  # type: ignore[union-attr]
        insp = sa.inspect(eng)
        out.append(insp.get_check_constraints(t))
        out.append(repr(insp.get_columns(t)))
        md = sa.MetaData()
        md.reflect(eng, only=[t])
        out.append(sorted((c.name, str(c.sqltext)) for c in md.tables[t].constraints if isinstance(c, sa.CheckConstraint)))
        Base.metadata.drop_all(eng)
    finally:
        eng.dispose()
    return out


def test_orm_check_constraints_match_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    t = f"ck{next(_names)}"
    ref = _sa_checks(_url("psycopg", pg15.dsn(dbname=pg15.new_database("pydrv"))), t)
    got = _sa_checks(_url("psycopg", proxy.dsn()), t)
    _diff(ref, got)
