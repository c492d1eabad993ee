"""What a client sees of a statement, in a form to compare between the proxy and PostgreSQL
15: the columns (names and type OIDs) and rows, or the error's SQLSTATE, message and
detail, with the notices it raised; LSNs, PIDs and OIDs that differ between servers masked."""

from __future__ import annotations

import re
from typing import Any

import psycopg

_LSN = re.compile(r"\b[0-9A-F]{1,8}/[0-9A-F]{1,8}\b")
_PID = re.compile(r"(PID|[Pp]rocess) \d+")
_LOCK = re.compile(r"advisory lock \[\d+,")


def masked(value: object) -> object:
    if isinstance(value, str):
        return _LOCK.sub("advisory lock [db,", _PID.sub(r"\1 n", _LSN.sub("X/X", value)))
    if isinstance(value, (list, tuple)):
        return type(value)(masked(v) for v in value)
    return value


class Client:
    """A connection whose statements are recorded as outcomes (notices included)."""

    def __init__(self, dsn: str) -> None:
        self.conn = psycopg.connect(dsn, autocommit=True)
        self.notices: list[tuple[str, str, str]] = []
        self.conn.add_notice_handler(lambda d: self.notices.append((d.severity, d.sqlstate, d.message_primary)))  # type: ignore[arg-type]

    def __call__(self, sql: str) -> tuple[object, ...]:
        try:
            cur = self.conn.execute(sql)
        except psycopg.Error as e:
            got: tuple[object, ...] = ("error", e.sqlstate, masked(e.diag.message_primary), masked(e.diag.message_detail))
        else:
            if cur.description is None:
                got = ("done", cur.statusmessage)
            else:
                got = ("rows", [(d.name, d.type_code) for d in cur.description], masked(cur.fetchall()))
        if self.notices:
            got += (masked(self.notices),)
            self.notices = []
        return got

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
