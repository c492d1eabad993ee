"""COPY … FROM STDIN and COPY … TO STDOUT: options, target columns, and the COPY data.

The engine (:meth:`walsender_proxy.sql.engine.Engine.copy`) finds what COPY TO reads, a
query's rows or a table's at the statement's snapshot, as Arrow batches; this module checks
the statement, decodes COPY FROM's data into the table (the omitted columns' defaults added)
and encodes COPY TO's batches in the COPY format (:mod:`decoding.copyformat`), streamed a
batch at a time so memory stays bounded by a batch whatever the row count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pglast import ast
from pglast.stream import RawStream

from decoding.catalog import EnumType, Table
from decoding.copyformat import CopyDecoder, encode_copy
from decoding.errors import PgError
from decoding.pgtypes import ColumnType
from decoding.pgvalues import InputError
from walsender_proxy.backend.outcomes import Column, CopyIn, CopyOut
from walsender_proxy.lake import enums
from walsender_proxy.sql import defaults, sequences
from walsender_proxy.sql.readahead import ReadAhead
from walsender_proxy.sql.result_rows import bytea_output, float_digits

if TYPE_CHECKING:
    from walsender_proxy.lake import Transaction
    from walsender_proxy.sql.services import SessionState


def format_and_options(node: ast.CopyStmt) -> tuple[str, dict[str, Any]]:
    """COPY's format and its other options; a file or a program is refused first (only
    STDIN and STDOUT are the client's)."""
    if node.filename is not None or node.is_program:
        raise PgError(
            "42501",
            "COPY to or from a file is not supported by walsender-proxy",
            hint="Use COPY … TO STDOUT or FROM STDIN.",
        )
    opts = _copy_options(node.options)
    fmt = opts.pop("format", "text")
    return fmt, opts


def copy_in(
    ev: defaults.Evaluator,
    ex: SessionState,
    tx: Transaction,
    node: ast.CopyStmt,
    fmt: str,
    opts: dict[str, Any],
) -> CopyIn:
    """COPY … FROM STDIN: the CopyIn that decodes the client's data and, at its end,
    inserts the rows (``ev`` evaluates the omitted columns' defaults)."""

    if node.query is not None or node.relation is None:
        raise PgError("42601", "COPY FROM needs a table")
    if node.whereClause is not None:  # (every row would be stored)
        raise PgError("0A000", "COPY FROM … WHERE is not supported by walsender-proxy")
    t = sequences.write_target(tx, node.relation, sequences.COPY_TO)
    cols = copy_columns(t, node)
    ctypes = [t.column(c).type for c in cols]  # type: ignore[union-attr]
    dec = CopyDecoder(ctypes, fmt, names=cols, table_name=t.name, date_order=ev.date_order, checks=_enum_checks(tx, ctypes), **opts)
    state: dict[str, Any] = {"rows": 0}

    def feed(data: bytes) -> None:
        dec.feed(data)

    omitted = defaults.OmittedDefaults(ev, tx, t, cols)

    def finish() -> str:
        table = dec.finish()
        table = omitted.add(table.rename_columns(cols))
        n = tx.apply_insert(t, table) if table.num_rows else 0
        state["rows"] = n
        return f"COPY {n}"

    def fail(_msg: str) -> None:
        ex.fail()

    return CopyIn(fmt == "binary", len(cols), feed, finish, fail)


def _enum_checks(tx: Transaction, ctypes: list[ColumnType]) -> dict[int, Callable[[pa.Array], None]]:
    """enum_in's check of each enum column's labels, as COPY reads a field (its error then
    has the field's CONTEXT line)."""
    cat = tx.catalog()
    out: dict[int, Callable[[pa.Array], None]] = {}
    for i, ct in enumerate(ctypes):
        en = cat.enum_of(ct)
        if en is None:
            continue

        def check(arr: pa.Array, en: EnumType = en) -> None:
            found = enums.first_invalid(arr, frozenset(en.names))
            if found is not None:
                raise InputError(enums.label_error(en, found[1]), found[0])

        out[i] = check
    return out


def copy_columns(t: Table, node: ast.CopyStmt) -> list[str]:
    """The columns COPY names (all the table's but its generated ones if none), each once
    and each the table's (CopyGetAttnums; a generated one is 42P10, both ways)."""
    cols = [c.sval for c in node.attlist] if node.attlist else [c.name for c in t.columns if c.generation is None]
    for i, c in enumerate(cols):
        col = t.column(c)
        if col is None:
            raise PgError("42703", f'column "{c}" of relation "{t.name}" does not exist')
        if col.generation is not None:
            raise PgError("42P10", f'column "{c}" is a generated column', detail="Generated columns cannot be used in COPY.")
        if c in cols[:i]:
            raise PgError("42701", f'column "{c}" specified more than once')
    return cols


def copy_out(
    source: Iterator[pa.RecordBatch],
    columns: list[Column],
    fmt: str,
    opts: dict[str, Any],
    ex: SessionState,
) -> CopyOut:
    """COPY … TO STDOUT of ``source``'s batches: the CopyOut that streams them as COPY
    data and counts the rows for the completion tag."""

    counter = {"n": 0}
    ctypes = [c.type for c in columns]

    def counted() -> Iterator[pa.RecordBatch]:
        for b in source:
            counter["n"] += b.num_rows
            yield b

    # Streamed batch by batch: memory stays bounded by a batch, whatever the row count;
    # the next chunks are made while the current ones are sent.
    chunks = ReadAhead(
        encode_copy(
            counted(),
            ctypes,
            fmt,
            names=[c.name for c in columns],
            extra_float_digits=float_digits(ex),
            bytea_output=bytea_output(ex),
            zone=ex.settings.zone(),
            **opts,
        )
    )
    return CopyOut(fmt == "binary", len(columns), chunks, lambda: counter["n"])


def _copy_options(options: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    seen: set[str] = set()
    for o in options or ():
        name = o.defname
        if name in seen:
            raise PgError("42601", "conflicting or redundant options")
        seen.add(name)
        arg = o.arg
        if isinstance(arg, ast.String):
            val: Any = arg.sval
        elif isinstance(arg, ast.Integer):
            val = arg.ival
        elif isinstance(arg, ast.Boolean):
            val = arg.boolval
        elif isinstance(arg, tuple):
            val = tuple(a.sval for a in arg)
        elif arg is None:
            val = True
        else:
            val = RawStream()(arg)
        if name == "format":
            val = str(val).lower()
            if val not in ("text", "csv", "binary"):
                raise PgError("22023", f'COPY format "{val}" not recognized')
        elif name not in (
            "delimiter",
            "null",
            "header",
            "quote",
            "escape",
            "force_quote",
            "encoding",
            "force_not_null",
            "force_null",
            "freeze",
        ):
            raise PgError("42601", f'option "{name}" not recognized')
        if name in ("encoding", "freeze"):
            continue
        out[name] = val
    return out
