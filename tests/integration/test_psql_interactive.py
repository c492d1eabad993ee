"""psql's backslash commands, typed into an interactive psql on a pty, against the proxy
and against PostgreSQL 15 holding the same objects: the screens must match."""

from __future__ import annotations

import os
import pty
import select
import time

from tests.integration.test_sql_clients import fresh_pg_db, psql
from tests.pgcluster import PgCluster, pg_bindir
from tests.proxy import ProxyServer

SCHEMA = """
CREATE SCHEMA sales;
CREATE TABLE sales.orders (id bigint PRIMARY KEY, customer text NOT NULL, amount numeric(12,2), placed timestamptz, tags text[]);
CREATE TABLE notes (n int, body varchar(200));
ALTER TABLE notes REPLICA IDENTITY FULL;
CREATE PUBLICATION pub_orders FOR TABLE sales.orders (id, customer, amount) WHERE (amount > 10), notes WITH (publish = 'insert, update');
CREATE PUBLICATION pub_schema FOR TABLES IN SCHEMA sales;
"""

COMMANDS = ["\\dt", "\\dt sales.*", "\\d sales.orders", "\\d notes", "\\dn", "\\dRp", "\\dRp+"]



def interactive(port: int, dbname: str, commands: list[str]) -> list[str]:
    """Type each command at psql's prompt; return each command's screen output."""
    pid, fd = pty.fork()
    if pid == 0:  # child: psql talking to the pty
        env = {**os.environ, "PAGER": "cat", "PSQL_PAGER": "cat", "TERM": "dumb", "COLUMNS": "200"}
        os.execve(
            str(pg_bindir() / "psql"),
            [
                "psql",
                "-X",
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-U",
                "postgres",
                "-d",
                dbname,
                "-v",
                "PROMPT1=PSQL> ",
            ],
            env,
        )
    out: list[str] = []

    def read_until_prompt(timeout: float = 20) -> str:
        buf = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r, _, _ = select.select([fd], [], [], 0.2)
            if r:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                buf += chunk
                if buf.rstrip().endswith(b"PSQL>"):
                    break
        return buf.decode("utf-8", "replace").replace("\r\n", "\n")

    try:
        read_until_prompt()
        for cmd in commands:
            os.write(fd, cmd.encode() + b"\n")
            screen = read_until_prompt()
            body = screen.split("\n", 1)[1] if "\n" in screen else ""  # drop the echoed command
            out.append(body.rsplit("PSQL>", 1)[0])
        os.write(fd, b"\\q\n")
    finally:
        os.waitpid(pid, 0)
        os.close(fd)
    return out


def test_backslash_commands_match_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    db = fresh_pg_db(pg15)
    assert psql(pg15.port, "-c", SCHEMA, dbname=db).returncode == 0
    r = psql(proxy.port, "-c", SCHEMA)
    assert r.returncode == 0, r.stderr
    ref = interactive(pg15.port, db, COMMANDS)
    got = interactive(proxy.port, "postgres", COMMANDS)
    for cmd, a, b in zip(COMMANDS, ref, got, strict=True):
        assert a == b, f"{cmd}:\n--- postgres ---\n{a}\n--- proxy ---\n{b}"
    screens = dict(zip(COMMANDS, got, strict=True))
    assert "orders" in screens["\\dt sales.*"] and "notes" in screens["\\dt"]
    assert (
        'Table "sales.orders"' in screens["\\d sales.orders"]
        and "PRIMARY KEY" in screens["\\d sales.orders"]
    )
    assert (
        "pub_orders" in screens["\\dRp+"] and "WHERE (amount > (10)::numeric)" in screens["\\dRp+"]
    )
