#!/usr/bin/env python3
"""Many clients running short transactions against the proxy and against PostgreSQL 15, in
one run on one machine: throughput, latency percentiles and the errors seen.

    .venv/bin/python scripts/bench_sql_clients.py [--clients 50] [--seconds 30] [--json OUT]

Each transaction: UPDATE one random account (+1), read it back, COMMIT. The proxy answers
a concurrent write to the same row with 40001 at once (first updater wins); PostgreSQL makes
the second writer wait. Both are reported.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg

ACCOUNTS = 1000


async def client(dsn: str, until: float, lat: list[float], errors: dict[str, int], seed: int) -> None:
    rnd = random.Random(seed)
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        while time.monotonic() < until:
            k = rnd.randrange(ACCOUNTS)
            t0 = time.perf_counter()
            try:
                async with conn.transaction():
                    await conn.execute("UPDATE accounts SET balance = balance + 1 WHERE id = %s", (k,))
                    await (await conn.execute("SELECT balance FROM accounts WHERE id = %s", (k,))).fetchone()
                lat.append(time.perf_counter() - t0)
            except psycopg.Error as e:
                errors[e.sqlstate or "?"] = errors.get(e.sqlstate or "?", 0) + 1


async def run(dsn: str, clients: int, seconds: float) -> dict[str, object]:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as c:
        await c.execute("DROP TABLE IF EXISTS accounts")
        await c.execute("CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL)")
        async with c.cursor() as cur, cur.copy("COPY accounts FROM STDIN") as cp:
            for i in range(ACCOUNTS):
                await cp.write_row((i, 0))
    lat: list[float] = []
    errors: dict[str, int] = {}
    start = time.monotonic()
    until = start + seconds
    await asyncio.gather(*(client(dsn, until, lat, errors, i) for i in range(clients)))
    took = time.monotonic() - start
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as c:
        total = (await (await c.execute("SELECT sum(balance) FROM accounts")).fetchone())[0]  # type: ignore[index]
    lat.sort()
    return {
        "committed": len(lat),
        "tps": len(lat) / took,
        "p50_ms": statistics.median(lat) * 1000 if lat else None,
        "p99_ms": lat[int(len(lat) * 0.99)] * 1000 if lat else None,
        "errors": errors,
        "sum_balance": int(total),
        "lost_updates": len(lat) - int(total),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--json")
    args = ap.parse_args()
    from tests.pgcluster import PgCluster
    from tests.proxy import ProxyServer
    from walsender_proxy.lake import LakeSettings

    results = {}
    with PgCluster({"max_connections": "200", "fsync": "on", "synchronous_commit": "on"}) as pg:
        results["postgresql"] = asyncio.run(run(pg.dsn(), args.clients, args.seconds))
    with ProxyServer(lake_settings=LakeSettings(fsync=True), max_connections=200) as px:
        results["proxy"] = asyncio.run(run(px.dsn(), args.clients, args.seconds))
    ratio = results["proxy"]["tps"] / results["postgresql"]["tps"]  # type: ignore[operator]
    results["proxy_over_native_tps"] = ratio
    print(json.dumps(results, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
