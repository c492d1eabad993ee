"""Django, the ORM the project did not write, against the proxy and against PostgreSQL 15:
``makemigrations`` and ``migrate`` of the contrib apps (their own migrations lengthen
varchar columns under ``varchar_pattern_ops`` indexes and insert with ``unnest`` of
several arrays) and of an app with foreign keys, a many-to-many, JSON, UUID, a CHECK
constraint and indexes; then ordinary ORM work (``clients/django_shop/exercise.py``:
bulk_create, annotate with GROUP BY the key, Exists/Subquery, savepoints, select_for_update,
many-to-many add, introspection), each step's answer compared line by line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pgcluster import PgCluster
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

PROJECT = Path(__file__).parent / "clients" / "django_shop"


def _django(project: Path, port: int, database: str, *args: str) -> str:
    env = {**os.environ, "PGHOST": "127.0.0.1", "PGPORT": str(port), "PGDATABASE": database, "PGUSER": "postgres"}
    r = subprocess.run([sys.executable, *args], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_a_django_project_migrates_and_works_as_on_postgresql(proxy: ProxyServer, pg15: PgCluster, tmp_path: Path) -> None:
    pytest.importorskip("django")
    project = tmp_path / "django_shop"
    shutil.copytree(PROJECT, project)
    _django(project, proxy.port, "postgres", "manage.py", "makemigrations", "shop", "-v0")
    runs = []
    for port, database in ((pg15.port, pg15.new_database("django")), (proxy.port, "postgres")):
        _django(project, port, database, "manage.py", "migrate", "-v0")
        runs.append(_django(project, port, database, "exercise.py").splitlines())
    ref, ours = runs
    assert len(ref) == 49
    for theirs, mine in zip(ref, ours, strict=True):
        assert mine == theirs
    # Django's own test runner, on the proxy's one database (--keepdb: no CREATE DATABASE)
    _django(project, proxy.port, "postgres", "manage.py", "test", "shop", "--keepdb", "-v0")
