"""Demo data: a few tables with values of many types, and ``demo_pub`` FOR ALL TABLES.

It is what ``walsender-proxy init --demo`` loads, so a first-time user has something to
SELECT and to subscribe to.
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid

import pyarrow as pa

from walsender_proxy.lake import Lake


def load_demo(lake: Lake) -> None:
    with lake.begin() as tx:
        tx.create_table(
            "customers",
            [
                ("id", "bigint"),
                ("name", "text", True),
                ("email", "varchar(120)"),
                ("active", "boolean"),
                ("signed_up", "timestamptz"),
                ("tags", "text[]"),
            ],
            primary_key=["id"],
        )
        tx.create_table(
            "orders",
            [
                ("id", "bigint"),
                ("customer_id", "bigint", True),
                ("amount", "numeric(12,2)"),
                ("ordered_on", "date"),
                ("ref", "uuid"),
                ("details", "jsonb"),
            ],
            primary_key=["id"],
        )
        tx.create_table(
            "readings",
            [
                ("sensor", "int"),
                ("at", "timestamp"),
                ("value", "double precision"),
                ("raw", "bytea"),
                ("every", "interval"),
            ],
        )
        tx.set_replica_identity("readings", "full")
        tx.create_publication("demo_pub", all_tables=True)
    base = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    n = 1000
    with lake.begin() as tx:
        tx.insert(
            "customers",
            pa.table(
                {
                    "id": pa.array(range(1, n + 1), pa.int64()),
                    "name": [f"Customer {i}" for i in range(1, n + 1)],
                    "email": [f"c{i}@example.com" if i % 7 else None for i in range(1, n + 1)],
                    "active": [i % 3 != 0 for i in range(1, n + 1)],
                    "signed_up": [base + dt.timedelta(hours=i) for i in range(1, n + 1)],
                    "tags": [["vip"] if i % 10 == 0 else [] for i in range(1, n + 1)],
                }
            ),
        )
        tx.insert(
            "orders",
            [
                {
                    "id": i,
                    "customer_id": 1 + i % n,
                    "amount": decimal.Decimal(i * 7 % 10000) / 100,
                    "ordered_on": dt.date(2024, 1, 1) + dt.timedelta(days=i % 365),
                    "ref": str(uuid.UUID(int=i)),
                    "details": f'{{"items": {i % 5 + 1}, "gift": {str(i % 11 == 0).lower()}}}',
                }
                for i in range(1, 5 * n + 1)
            ],
        )
        tx.insert(
            "readings",
            [
                {
                    "sensor": i % 10,
                    "at": dt.datetime(2024, 1, 1) + dt.timedelta(minutes=i),
                    "value": i / 3,
                    "raw": bytes([i % 256, (i * 7) % 256]),
                    "every": {"months": 0, "days": 0, "microseconds": 60_000_000},
                }
                for i in range(200)
            ],
        )
