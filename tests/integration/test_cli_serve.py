"""The command line a user runs: init with demo data, serve, query with psql, stop with a
signal and get a clean shutdown."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from tests.proxy import free_port


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "walsender_proxy.cli", *args]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_demo_and_stop_cleanly(tmp_path: Path, sig: signal.Signals) -> None:
    d = tmp_path / "demo"
    assert subprocess.run(cli("init", "-D", str(d), "--demo"), capture_output=True, timeout=120).returncode == 0
    port = free_port()
    proc = subprocess.Popen(cli("serve", "-D", str(d), "-p", str(port)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = psycopg.connect(f"host=127.0.0.1 port={port} user=postgres dbname=postgres", connect_timeout=2)
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.2)
        with conn:
            assert conn.execute("SELECT count(*) FROM customers").fetchone() == (1000,)
            assert conn.execute("SELECT pubname, puballtables FROM pg_publication").fetchall() == [("demo_pub", True)]
            conn.execute("INSERT INTO readings (sensor, value) VALUES (99, 1.5)")
            conn.commit()
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert 'listening on IPv4 address "127.0.0.1"' in out and "database system is shut down" in out
    r = subprocess.run(cli("inspect", "-D", str(d)), capture_output=True, text=True, timeout=120)
    assert "public.readings (201 rows)" in r.stdout


def test_serve_refuses_a_missing_directory_and_a_used_one(tmp_path: Path) -> None:
    r = subprocess.run(cli("serve", "-D", str(tmp_path / "nope"), "-p", str(free_port())), capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "does not exist" in r.stderr
