"""What a client sees of a statement, in a form to compare between the proxy and PostgreSQL
15: the columns (names and type OIDs) and rows, or the error's SQLSTATE, message and
detail, with the notices it raised; LSNs, PIDs and OIDs that differ between servers masked."""

from __future__ import annotations

import re
import subprocess
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


def refused_where_postgres_answers(proxy: Client, reference: Client, statements: list[str]) -> None:
    """Statements PostgreSQL answers that the proxy refuses with 0A000 naming itself."""
    for sql in statements:
        assert reference(sql)[0] in ("rows", "done"), sql
        have = proxy(sql)
        assert have[:2] == ("error", "0A000") and "walsender-proxy" in str(have[2]), (sql, have)


def same_answers(proxy_dsn: str, reference_dsn: str, statements: list[str]) -> Client:
    """Each statement on the proxy and on a PostgreSQL 15 database, answers compared (by
    repr: Decimal('NaN') equals itself); returns the proxy's client, still open."""
    ref, got = Client(reference_dsn), Client(proxy_dsn)
    try:
        for sql in statements:
            assert repr(got(sql)) == repr(ref(sql)), sql
    except BaseException:
        got.close()
        raise
    finally:
        ref.close()
    return got


# -- a logical replication stream as pg_recvlogical receives it ------------------------------


def run_sql(dsn: str, *statements: str) -> None:
    """Each statement in turn on one autocommit connection."""
    with psycopg.connect(dsn, autocommit=True) as c:
        for sql in statements:
            c.execute(sql)


def recvlogical(dsn: str, slot: str, *args: str, timeout: float = 120) -> bytes:
    """Run the real ``pg_recvlogical -d DSN -S SLOT ARGS…`` and return what it wrote to stdout
    (``--create-slot -P pgoutput``, or ``--start -f - --endpos=… -o …``)."""
    import subprocess

    from tests.pgcluster import pg_bindir

    r = subprocess.run(
        [str(pg_bindir() / "pg_recvlogical"), "-d", dsn, "-S", slot, *args],
        capture_output=True,
        timeout=timeout,
    )
    if r.returncode != 0:
        raise RuntimeError(f"pg_recvlogical {args[0]} failed: {r.stderr.decode(errors='replace')}")
    return r.stdout


def recorded_stream(dsn: str, slot: str, publication: str, write: Any, *, binary: bool = False) -> list[Any]:
    """The pgoutput messages (protocol 1) pg_recvlogical receives of what ``write`` (called
    with an autocommit connection) does once a slot is made; the slot dropped after."""
    recvlogical(dsn, slot, "--create-slot", "-P", "pgoutput")
    with psycopg.connect(dsn, autocommit=True) as c:
        write(c)
        end = str(c.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0])  # type: ignore[index]
    options = ["-o", "proto_version=1", "-o", f"publication_names={publication}", *(["-o", "binary=true"] if binary else [])]
    out = recvlogical(dsn, slot, "--start", "-f", "-", f"--endpos={end}", "--no-loop", *options)
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("SELECT pg_drop_replication_slot(%s)", [slot])
    return pgoutput_messages(out)


def pgoutput_messages(data: bytes) -> list[Any]:
    """pg_recvlogical's output of a pgoutput stream (each message followed by a newline)
    cut back into messages: the shortest piece up to a newline that decodes whole is one
    (a piece cut short of its message never does: every field is counted or terminated)."""
    from decoding.pgoutput.proto import DecodeError, StreamStart, StreamStop, decode_message

    out: list[Any] = []
    start = 0
    in_stream = False  # (between Stream Start and Stream Stop, changes carry an xid)
    while start < len(data):
        end = data.find(b"\n", start)
        while True:
            if end < 0:
                raise AssertionError(f"undecodable pgoutput output at byte {start}: {data[start:start + 40]!r}")
            try:
                m = decode_message(data[start:end], in_stream=in_stream)
                out.append(m)
                if isinstance(m, StreamStart | StreamStop):
                    in_stream = isinstance(m, StreamStart)
                break
            except DecodeError:
                end = data.find(b"\n", end + 1)
        start = end + 1
    return out


def stream_shape(messages: list[Any]) -> list[tuple[object, ...]]:
    """What a subscriber applies from a pgoutput stream, with what differs between servers
    masked: LSNs, xids and times are left out, relation OIDs become the order in which each
    first appears (a re-created table is a new relation), and a Relation message that
    repeats the one last sent for its relation is left out — PostgreSQL sends it again
    after any invalidation of the relation (VACUUM's update of pg_class is one), and a
    subscriber's map of the relation stays as it was."""
    from decoding.pgoutput import proto as P

    rels: dict[int, int] = {}
    described: dict[int, tuple[object, ...]] = {}

    def rel(oid: int) -> int:
        return rels.setdefault(oid, len(rels))

    def tup(t: Any) -> object:
        return None if t is None else t.values

    shape: list[tuple[object, ...]] = []
    for m in messages:
        if isinstance(m, P.Begin):
            shape.append(("BEGIN",))
        elif isinstance(m, P.Commit):
            shape.append(("COMMIT",))
        elif isinstance(m, P.Relation):
            cols = tuple((c.name, c.type_oid, c.type_modifier, c.flags) for c in m.columns)
            entry = ("RELATION", rel(m.relid), m.namespace, m.name, m.replica_identity, cols)
            if described.get(m.relid) != entry:
                shape.append(entry)
            described[m.relid] = entry
        elif isinstance(m, P.Insert):
            shape.append(("INSERT", rel(m.relid), tup(m.new)))
        elif isinstance(m, P.Update):
            shape.append(("UPDATE", rel(m.relid), tup(m.key), tup(m.old), tup(m.new)))
        elif isinstance(m, P.Delete):
            shape.append(("DELETE", rel(m.relid), tup(m.key), tup(m.old)))
        elif isinstance(m, P.Truncate):
            shape.append(("TRUNCATE", tuple(rel(r) for r in m.relids), m.options))
        else:
            shape.append((type(m).__name__,))
    return shape


def raw_outcome(conn: psycopg.Connection, sql: str, fmt: int = 0) -> tuple[object, ...]:
    """A statement's outcome as bytes on the wire: ("rows", [(name, oid, typmod)], rows of
    field bytes in text (``fmt`` 0) or binary (1)), ("done", tag) or ("error", SQLSTATE,
    message, detail). No client-side parsing: a jsonb's spacing, a bytea's hex digits and
    a float's digits are compared as sent."""
    from psycopg import pq

    if sql.lstrip().upper().startswith("COPY"):
        res = conn.pgconn.exec_(sql.encode())  # COPY in the simple protocol, as psql sends it
    else:
        res = conn.pgconn.exec_params(sql.encode(), [], result_format=fmt)
    if res.status == pq.ExecStatus.FATAL_ERROR:

        def field(f: pq.DiagnosticField) -> str | None:
            v = res.error_field(f)
            return None if v is None else v.decode()

        return ("error", field(pq.DiagnosticField.SQLSTATE), field(pq.DiagnosticField.MESSAGE_PRIMARY),
                field(pq.DiagnosticField.MESSAGE_DETAIL))
    if res.status == pq.ExecStatus.TUPLES_OK:
        cols = [((res.fname(j) or b"").decode(), res.ftype(j), res.fmod(j)) for j in range(res.nfields)]
        rows = [tuple(res.get_value(i, j) for j in range(res.nfields)) for i in range(res.ntuples)]
        return ("rows", cols, rows)
    if res.status == pq.ExecStatus.COPY_OUT:
        chunks = []
        while True:
            n, data = conn.pgconn.get_copy_data(0)
            if n < 0:
                break
            chunks.append(bytes(data))
        end = conn.pgconn.get_result()
        while conn.pgconn.get_result() is not None:
            pass
        return ("copy", b"".join(chunks), end.command_status if end is not None else None)
    return ("done", (res.command_status or b"").decode())


def psql_outputs(psql: str, script: str, *dsns: str) -> list[tuple[str, str]]:
    """What psql (``psql``: its path) prints, stdout and stderr, running ``script`` against
    each of ``dsns`` (psql's ``\\d`` and its error lines, to compare between servers)."""
    outs = [subprocess.run([psql, "-X", "-d", dsn], input=script, capture_output=True, text=True, timeout=60) for dsn in dsns]
    return [(o.stdout, o.stderr) for o in outs]
