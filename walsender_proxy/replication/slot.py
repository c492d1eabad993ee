"""One replication slot's durable state, as a value: what a slot file holds, and what a
walsender process is handed with its stream — without the slot store, which needs the
lake (``slots.py``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from decoding.errors import PgError

_NAME = re.compile(r"^[a-z0-9_]{1,63}$")
#: Output plugins a logical slot can name.
PLUGINS = ("pgoutput",)


@dataclass(frozen=True, slots=True)
class Slot:
    name: str
    plugin: str
    database: str
    #: Where decoding starts to see every transaction committing at or after
    #: ``consistent_point`` whole; moves forward with the client's flush position.
    restart_lsn: int
    #: The consistent point: the LSN at which the slot was created.
    consistent_point: int
    #: The CSN the slot's snapshot shows (copy side of the CSN rule).
    snapshot_csn: int
    #: What the client confirmed as flushed; streaming resumes from here.
    confirmed_flush: int
    temporary: bool = False
    two_phase: bool = False
    failover: bool = False
    kind: str = "logical"
    #: The oldest catalog the slot may still decode with (a CSN: the lake keeps every
    #: catalog version from the one of this CSN on) — PostgreSQL's ``catalog_xmin``. It
    #: moves with ``confirmed_flush`` (``Lake.catalog_hold_at``); 0 in slots saved before it
    #: existed (everything kept until the slot moves).
    catalog_csn: int = 0


def check_slot_name(name: str) -> None:
    if len(name) > 63:
        raise PgError("42622", f'replication slot name "{name}" is too long')
    if not _NAME.match(name):
        raise PgError(
            "42602",
            f'replication slot name "{name}" contains invalid character',
            hint="Replication slot names may only contain lower case letters, numbers, and the underscore character.",
        )
