"""The lake and its transactions meet only through ``lake/tx_services.py``: the lake
provides every member of ``TransactionServices``, a transaction every member of
``OpenTransaction``. Nothing checks the Protocols' types here, so this keeps them from
drifting apart from what they describe."""

from __future__ import annotations

from tests.lakeutil import MakeLake
from walsender_proxy.lake.tx_services import OpenTransaction, TransactionServices


def _members(protocol: type) -> set[str]:
    """The Protocol's own members: its methods and properties, and its attributes."""
    return {n for n in vars(protocol) if not n.startswith("_")} | set(protocol.__annotations__)


def test_the_lake_and_a_transaction_provide_what_the_other_side_uses(make_lake: MakeLake) -> None:
    lake = make_lake()
    tx = lake.begin()
    try:
        assert {n for n in _members(TransactionServices) if not hasattr(lake, n)} == set()
        assert {n for n in _members(OpenTransaction) if not hasattr(tx, n)} == set()
        assert tx.lake is lake
    finally:
        tx.abort()
