"""Random CHECK constraints over the forms the proxy cooks (comparisons, integer division
and modulo, text concatenation, COALESCE, ANY/ALL, BETWEEN, LIKE, IS [NOT] DISTINCT FROM,
AND/OR/NOT, casts) and a few it refuses, made on a real PostgreSQL 15 and on the proxy:
wherever both take a constraint, it prints the same and every row meets the same fate
(inserted, or the same SQLSTATE). Where the proxy cannot give PostgreSQL's verdict it must
refuse the constraint (0A000), never differ. Publication row filters are cooked and
evaluated by the same code (``sql/cooked_exprs.py``)."""

from __future__ import annotations

import random

import psycopg
import pytest

from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer

COLUMNS = {
    "a": "int", "b": "int2", "c": "int8", "t": "text", "v": "varchar(5)", "m": "numeric(6,2)",
    "d": "date", "f": "bool", "r": "float8",
}  # fmt: skip
INTS = ("a", "b", "c")
_DEF = "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'fz'::regclass AND contype = 'c'"


class Expressions:
    """A seeded generator of boolean expressions over :data:`COLUMNS` and of rows."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def pick(self, options: list[str]) -> str:
        return self.r.choice(options)

    def integer(self, depth: int = 0) -> str:
        k = self.r.random()
        if depth > 2 or k < 0.4:
            return self.pick([*INTS, "0", "1", "2", "-3", "7", "32767", "2147483647", "-2147483648", "5000000000"])
        if k < 0.8:
            return f"({self.integer(depth + 1)} {self.pick(['+', '-', '*', '/', '%'])} {self.integer(depth + 1)})"
        if k < 0.9:
            return f"coalesce({self.integer(depth + 1)}, {self.integer(depth + 1)})"
        return f"{self.pick(list(INTS))}::{self.pick(['int2', 'int4', 'int8'])}"

    def text(self) -> str:
        return self.pick(["t", "v", "'ab'", "'b'", "''", "t || 'x'", "coalesce(t, v)", "v || t", "coalesce(v, 'z')"])

    def condition(self, depth: int = 0) -> str:
        k = self.r.random()
        if depth < 2 and k < 0.25:
            return f"({self.condition(depth + 1)} {self.pick(['AND', 'OR'])} {self.condition(depth + 1)})"
        if depth < 2 and k < 0.3:
            return f"NOT ({self.condition(depth + 1)})"
        op = self.pick(["=", "<>", "<", ">", "<=", ">="])
        k = self.r.random()
        if k < 0.35:
            return f"{self.integer()} {op} {self.integer()}"
        if k < 0.5:
            return f"{self.text()} {op} {self.text()}"
        if k < 0.6:
            return f"m {op} {self.pick(['1.5', '0', '-2.25', 'a', '99.99', 'c'])}"
        if k < 0.65:
            return f"r {op} {self.pick(['1.5', 'a', '0', 'm'])}"
        if k < 0.7:
            return f"d {op} '2020-0{self.r.randint(1, 9)}-1{self.r.randint(0, 9)}'"
        if k < 0.75:
            return f"{self.pick([*INTS, 't', 'v', 'm', 'd', 'f'])} IS {self.pick(['', 'NOT '])}NULL"
        if k < 0.8:
            return f"{self.integer()} IS {self.pick(['', 'NOT '])}DISTINCT FROM {self.integer()}"
        if k < 0.85:
            return f"{self.pick(list(INTS))} {self.pick(['= ANY', '<> ALL'])} ('{{{self.pick(['1,2', '7,NULL', '', '-3'])}}}')"
        if k < 0.9:
            return f"t {self.pick(['= ANY', '<> ALL'])} (ARRAY['ab', 'b'])"
        if k < 0.95:
            return f"{self.pick(list(INTS))} {self.pick(['', 'NOT '])}BETWEEN {self.integer(3)} AND {self.integer(3)}"
        return f"{self.text()} {self.pick(['LIKE', 'NOT LIKE'])} '{self.pick(['a%', '%b', '_', 'ab', '%'])}'"

    def row(self) -> dict[str, str]:
        return {
            "a": self.pick(["0", "1", "-5", "7", "2147483647", "NULL", "3"]),
            "b": self.pick(["0", "2", "-1", "32767", "NULL"]),
            "c": self.pick(["0", "5000000000", "-1", "NULL", "7"]),
            "t": self.pick(["'ab'", "'b'", "''", "NULL", "'abx'", "'Ab'"]),
            "v": self.pick(["'ab'", "'b'", "NULL", "'zz'"]),
            "m": self.pick(["1.5", "0", "-2.25", "99.99", "NULL", "1.50"]),
            "d": self.pick(["'2020-01-15'", "'2020-05-11'", "NULL"]),
            "f": self.pick(["true", "false", "NULL"]),
            "r": self.pick(["1.5", "0", "'NaN'", "NULL", "-0.0"]),
        }


def _fate(con: psycopg.Connection, sql: str) -> str:
    try:
        con.execute(sql)
    except psycopg.Error as e:
        return str(e.sqlstate)
    return "ok"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_checks_meet_postgresqls_verdict(proxy: ProxyServer, pg15: PgCluster, seed: int) -> None:
    g = Expressions(seed)
    columns = ", ".join(f"{k} {v}" for k, v in COLUMNS.items())
    taken = 0
    with (
        psycopg.connect(pg15.dsn(dbname=pg15.new_database(f"ckrand{seed}")), autocommit=True) as pg,
        psycopg.connect(proxy.dsn(), autocommit=True) as px,
    ):
        for _ in range(40):
            check = g.condition()
            for con in (pg, px):
                _fate(con, "DROP TABLE IF EXISTS fz")
            ddl = f"CREATE TABLE fz ({columns}, CHECK ({check}))"
            want, got = _fate(pg, ddl), _fate(px, ddl)
            if want == "ok" and got == "0A000":
                continue  # (refused: the proxy could not give PostgreSQL's verdict)
            assert got == want, check
            if want != "ok":
                continue
            taken += 1
            assert px.execute(_DEF).fetchall() == pg.execute(_DEF).fetchall(), check
            for _ in range(8):
                row = g.row()
                insert = f"INSERT INTO fz ({', '.join(row)}) VALUES ({', '.join(row.values())})"
                assert _fate(px, insert) == _fate(pg, insert), f"{check} | {insert}"
        _fate(px, "DROP TABLE IF EXISTS fz")
    assert taken > 10
