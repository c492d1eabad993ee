"""Foreign keys checked at commit: a ``DEFERRABLE INITIALLY DEFERRED`` constraint, or one
``SET CONSTRAINTS … DEFERRED`` made so, has its checks queued rather than run after each
statement — the referencing side's (RI_FKey_check) and the referenced side's NO ACTION
(the other actions are never deferred, as PostgreSQL makes their triggers). The queue is
fired at COMMIT and PREPARE TRANSACTION, and by ``SET CONSTRAINTS … IMMEDIATE`` for the
constraints it names; what a ROLLBACK TO SAVEPOINT undoes leaves it.

A queued check is of keys, not of row versions: at firing, a referencing key is checked
when a row of the transaction's view still holds it, and a referenced key when no row of
the referenced table has it again and a referencing row still does — what PostgreSQL's
deferred trigger finds for each row version still alive.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from decoding.catalog import ForeignKey

#: SET CONSTRAINTS ALL's key in :attr:`Deferrals.modes`.
ALL = 0


@dataclass(slots=True)
class Event:
    """One statement's deferred check of constraint ``fk_oid``: ``referencing`` keys of the
    table ``relid`` (the referencing table's, columns as its physical names), or the
    referenced table's old keys (NO ACTION)."""

    fk_oid: int
    relid: int
    referencing: bool
    keys: pa.Table
    subxid: int


@dataclass(slots=True)
class Deferrals:
    """A transaction's SET CONSTRAINTS modes (constraint OID or :data:`ALL` → deferred)
    and its queued checks."""

    modes: dict[int, bool] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)

    def deferred(self, fk: ForeignKey) -> bool:
        """Whether ``fk``'s checks wait for commit in this transaction."""
        if not fk.deferrable:
            return False
        if fk.oid in self.modes:
            return self.modes[fk.oid]
        if ALL in self.modes:
            return self.modes[ALL]
        return fk.initially_deferred

    def queue(self, fk: ForeignKey, relid: int, referencing: bool, keys: pa.Table, subxid: int) -> None:
        if keys.num_rows:
            self.events.append(Event(fk.oid, relid, referencing, keys, subxid))

    def pending_on(self, relid: int) -> bool:
        """Whether checks queued on table ``relid`` wait (AfterTriggerPendingOnRel)."""
        return any(e.relid == relid for e in self.events)

    def undo_since(self, subxid: int) -> None:
        """ROLLBACK TO SAVEPOINT: the checks of what it undid go with it."""
        self.events = [e for e in self.events if e.subxid < subxid]

    def set_mode(self, oids: list[int] | None, deferred: bool) -> None:
        """SET CONSTRAINTS (``oids`` None: ALL, which also resets each named one)."""
        if oids is None:
            self.modes = {ALL: deferred}
        else:
            for oid in oids:
                self.modes[oid] = deferred

    def take(self, only: set[int] | None = None) -> list[Event]:
        """The queued checks to fire now (``only``: of those constraints), removed."""
        fire = [e for e in self.events if only is None or e.fk_oid in only]
        self.events = [e for e in self.events if e not in fire]
        return fire
