"""The lake: change log, CSN-versioned Parquet tables, catalog and transactions.

Start here::

    from walsender_proxy.lake import Lake

    with Lake("/path/to/data") as lake:
        with lake.begin() as tx:
            tx.create_table("t", [("id", "bigint"), ("v", "text")], primary_key=["id"])
        with lake.begin() as tx:
            tx.insert("t", [{"id": 1, "v": "a"}])
        print(lake.read("t"))
"""

from walsender_proxy.lake.ddl import PubTable
from walsender_proxy.lake.errors import LakeError
from walsender_proxy.lake.lake import ConsistentPoint, Lake
from walsender_proxy.lake.settings import LakeSettings
from walsender_proxy.lake.transaction import Isolation, PendingCommit, Sql, Transaction
from walsender_proxy.lake.tx_services import CommitInfo

__all__ = [
    "CommitInfo",
    "ConsistentPoint",
    "Isolation",
    "Lake",
    "LakeError",
    "LakeSettings",
    "PendingCommit",
    "PubTable",
    "Sql",
    "Transaction",
]
