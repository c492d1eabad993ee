"""Storage parameters: reloptions.c's checks, SET/RESET merging, and the catalog keeping
them across a restart (Table's JSON)."""

from __future__ import annotations

import pytest
from pglast import parse_sql

from decoding.catalog import Table
from decoding.errors import PgError
from walsender_proxy.sql import reloptions


def _with(sql: str) -> tuple[str, ...]:
    return reloptions.with_options(parse_sql(f"CREATE TABLE t (a int) WITH ({sql})")[0].stmt.options)


def test_values_are_kept_as_written() -> None:
    assert _with("fillfactor = 70.5, autovacuum_enabled = 'OFF', user_catalog_table") == (
        "fillfactor=70.5", "autovacuum_enabled=OFF", "user_catalog_table=true",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("fillfactor = 5", 'value 5 out of bounds for option "fillfactor"'),
        ('"Fillfactor" = 10', 'unrecognized parameter "Fillfactor"'),
        ("fillfactor = 70, fillfactor = 80", 'parameter "fillfactor" specified more than once'),
        ("autovacuum_vacuum_scale_factor = 'nan'", 'invalid value for floating point option "autovacuum_vacuum_scale_factor": nan'),
        ("foo.bar = 1", 'unrecognized parameter namespace "foo"'),
    ],
)
def test_postgresqls_errors(sql: str, message: str) -> None:
    with pytest.raises(PgError) as e:
        _with(sql)
    assert e.value.message == message


def test_set_replaces_and_appends_reset_removes() -> None:
    stmt = parse_sql("ALTER TABLE t SET (fillfactor = 50, parallel_workers = 2)")[0].stmt
    got = reloptions.set_options(("fillfactor=70", "autovacuum_enabled=off"), stmt.cmds[0].def_)
    assert got == ("autovacuum_enabled=off", "fillfactor=50", "parallel_workers=2")
    reset = parse_sql("ALTER TABLE t RESET (fillfactor, nonsense)")[0].stmt
    assert reloptions.reset_options(got, reset.cmds[0].def_) == ("autovacuum_enabled=off", "parallel_workers=2")


def test_the_catalog_keeps_them() -> None:
    t = Table(16384, "public", "t", (), reloptions=("fillfactor=70",))
    assert Table.from_json(t.to_json()) == t
    assert "reloptions" not in Table(16385, "public", "u", ()).to_json()  # (older data dirs read the same)
