"""Prepared statements and portals of the extended query protocol: what Parse and Bind
leave for Describe and Execute, kept per session by the executor."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from walsender_proxy.backend.outcomes import Outcome, Rows


@dataclass(slots=True)
class Prepared:
    name: str
    text: str
    node: Any
    param_types: list[int]
    #: How many parameters Bind must supply (counted once, at Parse): the highest ``$n``
    #: used or the number of types Parse declared, whichever is more (PostgreSQL's
    #: num_params).
    nparams: int = -1
    #: Declared parameters the statement does not use (their values go nowhere).
    unused: frozenset[int] = frozenset()
    #: Bind's formats and the receive functions they chose (Engine.decode_params).
    param_recv: tuple[tuple[int, ...], list[Any]] | None = None
    #: Every parameter's type: declared, or inferred as PostgreSQL's parse analysis would
    #: (0: not known; reported as text). Worked out at the first Describe or Bind.
    inferred: list[int] | None = None
    #: DateStyle's field order when it was parsed: PostgreSQL reads the statement's
    #: date and timestamp literals then, not when it runs.
    date_order: str = "MDY"
    #: Whether Describe can find result columns (None: not yet asked; see describe_portal).
    may_describe_rows: bool | None = None
    #: The (name, type oid) of each result column its first run gave: a later run must give
    #: the same (PostgreSQL's plan cache keeps a prepared statement's result fixed).
    result_shape: tuple[tuple[str, int], ...] | None = None
    #: Parameters ParameterDescription reports as a domain (index → the domain's OID):
    #: declared so at Parse, or the target of an INSERT/UPDATE column or ``$n::d`` cast of
    #: a domain. Their values are the base type's (``param_types``/``inferred``).
    domains: dict[int, int] = field(default_factory=dict)


@dataclass(slots=True)
class Portal:
    name: str
    stmt: Prepared
    params: list[Any]
    result_formats: list[int]
    outcomes: Iterator[Outcome] | None = None
    pending_rows: Rows | None = None
    reader: Iterator[pa.RecordBatch] | None = None
    carry: pa.RecordBatch | None = None
    sent: int = 0
    done: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
