"""The command line and configuration, as a user meets them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from decoding.errors import PgError
from walsender_proxy.config import DEFAULT_CONFIG, lake_settings, load_config


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "walsender_proxy.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_default_config_is_valid_and_documented() -> None:
    cfg = load_config()
    s = lake_settings(cfg)
    assert s.fsync is True and s.segment_size == 64 << 20
    assert "#" in DEFAULT_CONFIG.read_text()


def test_bad_settings_are_refused_with_postgresql_codes(tmp_path: Path) -> None:
    with pytest.raises(PgError) as ei:
        lake_settings({"lake": {"no_such_setting": 1}})
    assert ei.value.sqlstate == "42704"
    with pytest.raises(PgError) as ei:
        lake_settings({"lake": {"fsync": "yes"}})
    assert ei.value.sqlstate == "22023"
    bad = tmp_path / "bad.toml"
    bad.write_text("[lake\n")
    with pytest.raises(PgError) as ei:
        load_config(bad)
    assert ei.value.sqlstate == "F0000"
    with pytest.raises(PgError):
        load_config(tmp_path / "missing.toml")


def test_init_demo_then_inspect(tmp_path: Path) -> None:
    d = tmp_path / "demo"
    r = cli("init", "-D", str(d), "--demo")
    assert r.returncode == 0, r.stderr
    assert "ready with demo data" in r.stdout
    r = cli("inspect", "-D", str(d))
    assert r.returncode == 0, r.stderr
    assert "public.customers (1000 rows)" in r.stdout
    assert "publication demo_pub: ALL TABLES" in r.stdout
    again = cli("init", "-D", str(d))
    assert again.returncode == 1 and "not empty" in again.stderr


def test_the_server_preloads_what_first_statements_import_and_not_spark() -> None:
    """Modules a first COPY or catalog query would import are loaded before the server
    listens (a fresh server's first table sync took ~50 ms longer than the next); none of
    them may pull in PySpark, which only Spark jobs need."""
    import subprocess
    import sys

    code = (
        "import importlib, sys\n"
        "from walsender_proxy.server.server import PRELOAD\n"
        "for name in PRELOAD: importlib.import_module(name)\n"
        "print('pyspark' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
