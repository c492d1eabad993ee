"""Parameter types as PostgreSQL 15's parse analysis infers them (each expectation was
checked with a Describe against PostgreSQL 15; tests/integration/test_python_drivers.py runs
asyncpg, which depends on them)."""

from __future__ import annotations

import re

import pytest
from pglast import parse_sql

from walsender_proxy.sql.paramtypes import infer_param_types

COLUMNS = {
    "dt": {"v": 1043, "c": 1042, "n": 25, "i2": 21, "i8": 20, "num": 1700, "ts": 1184, "j": 3802, "ta": 1009, "u": 2950, "b": 16, "f4": 700, "d": 1082},
    "other": {"id": 23, "dt_i8": 20},
}


def infer(sql: str, declared: tuple[int, ...] = ()) -> list[int]:
    node = parse_sql(sql)[0].stmt
    n = max((int(x) for x in re.findall(r"\$(\d+)", sql)), default=0)
    return infer_param_types(node, declared, n, lambda rv: COLUMNS.get(rv.relname))


@pytest.mark.parametrize(
    ("sql", "want"),
    [
        ("SELECT 1 FROM dt WHERE v = $1", [25]),  # varchar has no operators: texteq
        ("SELECT 1 FROM dt WHERE c = $1", [1042]),
        ("SELECT 1 FROM dt WHERE i2 = $1", [21]),
        ("SELECT 1 FROM dt WHERE i8 > $1", [20]),
        ("SELECT 1 FROM dt WHERE $1 = i2", [21]),
        ("SELECT 1 FROM dt WHERE num * $1 > 1", [1700]),
        ("SELECT 1 FROM dt WHERE i2 + $1 > 0", [21]),
        ("SELECT 1 FROM dt WHERE ta = $1", [1009]),
        ("SELECT 1 FROM dt WHERE v = ANY($1)", [1009]),
        ("SELECT 1 FROM dt WHERE i8 = ANY($1)", [1016]),
        ("SELECT 1 FROM dt WHERE v IN ($1, $2)", [1043, 1043]),
        ("SELECT 1 FROM dt WHERE v BETWEEN $1 AND $2", [25, 25]),
        ("SELECT 1 FROM dt WHERE v LIKE $1", [25]),
        ("SELECT 1 FROM dt WHERE u = $1 AND b = $2", [2950, 16]),
        ("INSERT INTO dt (v, c, n, i2) VALUES ($1, $2, $3, $4)", [1043, 1042, 25, 21]),
        ("UPDATE dt SET v = $1 WHERE d = $2", [1043, 1082]),
        ("DELETE FROM dt WHERE ts < $1 RETURNING v", [1184]),
        ("SELECT $1", [0]),  # reported as text
        ("SELECT $1 + 1", [23]),
        ("SELECT $1::int, $2::oid[], $3::character varying, $4::timestamp with time zone", [23, 1028, 1043, 1184]),
        ("SELECT 1 LIMIT $1 OFFSET $2", [20, 20]),
        ("SELECT coalesce(v, $1) FROM dt", [1043]),
        ("SELECT 1 FROM pg_class WHERE oid = $1 AND relname = $2 AND relkind = $3", [26, 19, 18]),
        ("SELECT 1 FROM dt JOIN other o ON o.dt_i8 = dt.i8 WHERE o.id = $1 AND dt.num = $2", [23, 1700]),
        ("SELECT 1 FROM dt WHERE i2 IN (SELECT id FROM other WHERE id > $1)", [23]),
        ("SELECT 1 FROM dt WHERE i8 = $1 AND i2 = $1", [20]),  # the first use decides
        ("SELECT pg_advisory_lock($1), pg_advisory_unlock($2, $3)", [20, 23, 23]),
        ("SELECT lower($1), left($2, $3), pg_catalog.current_setting($4)", [25, 25, 23, 25]),
        ("SELECT date_trunc($1, ts) FROM dt", [25]),
    ],
)
def test_inferred_as_postgresql(sql: str, want: list[int]) -> None:
    assert infer(sql) == want


def test_declared_types_win() -> None:
    assert infer("SELECT 1 FROM dt WHERE i2 = $1 AND i8 = $2", (20,)) == [20, 20]


def test_unknown_tables_and_ambiguous_columns_stay_unknown() -> None:
    assert infer("SELECT 1 FROM nosuch WHERE x = $1") == [0]
    assert infer("SELECT 1 FROM dt, dt AS d2 WHERE i2 = $1") == [0]
