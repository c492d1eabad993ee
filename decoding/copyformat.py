"""COPY TO / COPY FROM STDIN data in PostgreSQL's text, csv and binary formats.

``encode_copy`` turns an Arrow table into the bytes PostgreSQL's COPY TO sends, in chunks of
whole rows (one CopyData message each); ``CopyDecoder`` parses COPY FROM STDIN input as it
arrives, rows split anywhere across CopyData messages, into an Arrow table of the lake's types.

Both work a batch of rows at a time with Arrow/numpy kernels: a row is never a Python object
on the common path.  Rare shapes (values that need escaping, quoted CSV, binary input, whose
field boundaries can only be found sequentially) fall back to per-value Python for just the
rows or chunks concerned.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from decoding import pgtz
from decoding.errors import PgError
from decoding.pgtypes import ColumnType
from decoding.pgvalues import (
    InputError,
    decode_binary_arrow,
    decode_text_arrow,
    encode_binary_fields,
    encode_text_arrow,
)
from decoding.pgvalues._arrow import (
    binary_parts,
    from_parts,
    rows_with_bytes,
    valid_mask,
)
from decoding.pgvalues._utf8 import first_invalid, invalid_utf8_error
from decoding.pgvalues.binout import _variable
from decoding.pgvalues.textout import output_alphabet

__all__ = [
    "BINARY_SIGNATURE",
    "CopyDecoder",
    "CopyError",
    "CopyOptions",
    "encode_copy",
    "encode_data_rows",
]

CopyFormat = Literal["text", "csv", "binary"]
BINARY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"
BINARY_HEADER = BINARY_SIGNATURE + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x00"
BINARY_TRAILER = b"\xff\xff"
#: CopyData payload size the encoder aims for (whole rows; a longer row goes alone).
CHUNK_BYTES = 65536
#: Rows formatted per vectorized pass: big enough to amortize kernel calls, small enough
#: that intermediates stay a few tens of MB.
BATCH_ROWS = 131072
B = pa.binary()


class CopyError(PgError):
    """A PgError with the CONTEXT line PostgreSQL attaches to COPY errors (``where``)."""

    def __init__(
        self,
        sqlstate: str,
        message: str,
        *,
        detail: str | None = None,
        hint: str | None = None,
        where: str | None = None,
    ) -> None:
        super().__init__(sqlstate, message, detail=detail, hint=hint)
        self.where = where


@dataclass(frozen=True)
class CopyOptions:
    """COPY's data-format options; ``validate`` resolves them as ProcessCopyOptions does.

    Unset options are None so that, as in PostgreSQL, giving QUOTE or ESCAPE in text mode
    (or DELIMITER in binary mode) is an error rather than a silently ignored default.
    """

    format: CopyFormat = "text"
    delimiter: str | None = None
    null: str | None = None
    header: bool | str | int = False
    quote: str | None = None
    escape: str | None = None
    force_quote: Sequence[str] | str = ()
    force_not_null: Sequence[str] = ()
    force_null: Sequence[str] = ()
    #: names for error context and header matching; defaults to column1..N
    names: Sequence[str] | None = None
    table_name: str = "stdin"

    @property
    def delim(self) -> str:
        if self.delimiter is not None:
            return self.delimiter
        return "," if self.format == "csv" else "\t"

    @property
    def null_print(self) -> str:
        if self.null is not None:
            return self.null
        return "" if self.format == "csv" else "\\N"

    @property
    def quote_char(self) -> str:
        return self.quote if self.quote is not None else '"'

    @property
    def escape_char(self) -> str:
        return self.escape if self.escape is not None else self.quote_char

    @property
    def force_quote_all(self) -> bool:
        return isinstance(self.force_quote, str) and self.force_quote == "*"

    def validate(self, is_from: bool) -> CopyOptions:
        """ProcessCopyOptions' checks, in its order, with its SQLSTATEs and wording."""
        fmt = self.format
        if fmt not in ("text", "csv", "binary"):
            raise PgError("22023", f'COPY format "{fmt}" not recognized')
        header = _header_choice(self.header, is_from)
        binary, csv = fmt == "binary", fmt == "csv"
        if binary and self.delimiter is not None:
            raise PgError("42601", "cannot specify DELIMITER in BINARY mode")
        if binary and self.null is not None:
            raise PgError("42601", "cannot specify NULL in BINARY mode")
        d, nul = self.delim, self.null_print
        if len(d.encode()) != 1:
            raise PgError("0A000", "COPY delimiter must be a single one-byte character")
        if d in "\r\n":
            raise PgError("22023", "COPY delimiter cannot be newline or carriage return")
        if "\r" in nul or "\n" in nul:
            raise PgError("22023", "COPY null representation cannot use newline or carriage return")
        if not csv and d in "\\.abcdefghijklmnopqrstuvwxyz0123456789":
            raise PgError("22023", f'COPY delimiter cannot be "{d}"')
        if binary and header:
            raise PgError("0A000", "cannot specify HEADER in BINARY mode")
        if not csv and self.quote is not None:
            raise PgError("0A000", "COPY quote available only in CSV mode")
        if csv and len(self.quote_char.encode()) != 1:
            raise PgError("0A000", "COPY quote must be a single one-byte character")
        if csv and d == self.quote_char:
            raise PgError("22023", "COPY delimiter and quote must be different")
        if not csv and self.escape is not None:
            raise PgError("0A000", "COPY escape available only in CSV mode")
        if csv and len(self.escape_char.encode()) != 1:
            raise PgError("0A000", "COPY escape must be a single one-byte character")
        if self.force_quote and not csv:
            raise PgError("0A000", "COPY force quote available only in CSV mode")
        if self.force_quote and is_from:
            raise PgError("0A000", "COPY force quote only available using COPY TO")
        if self.force_not_null and not csv:
            raise PgError("0A000", "COPY force not null available only in CSV mode")
        if self.force_not_null and not is_from:
            raise PgError("0A000", "COPY force not null only available using COPY FROM")
        if self.force_null and not csv:
            raise PgError("0A000", "COPY force null available only in CSV mode")
        if self.force_null and not is_from:
            raise PgError("0A000", "COPY force null only available using COPY FROM")
        if not binary and d in nul:
            raise PgError("0A000", "COPY delimiter must not appear in the NULL specification")
        if csv and self.quote_char in nul:
            raise PgError("0A000", "CSV quote character must not appear in the NULL specification")
        return replace(self, header=header)


def _header_choice(value: object, is_from: bool) -> bool | str:
    """defGetCopyHeaderChoice: a boolean, or "match" (COPY FROM only)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if value in (0, 1):
            return bool(value)
    elif isinstance(value, str):
        low = value.lower()
        if low in ("true", "on", "yes", "1", "t", "y"):
            return True
        if low in ("false", "off", "no", "0", "f", "n"):
            return False
        if low == "match":
            if not is_from:
                raise PgError("0A000", 'cannot use "match" with HEADER in COPY TO')
            return "match"
    raise PgError("42601", 'header requires a Boolean value or "match"')


def _options(
    fmt: CopyFormat,
    options: CopyOptions | Mapping[str, object] | None,
    is_from: bool,
    **kw: object,
) -> CopyOptions:
    extra = {k: v for k, v in kw.items() if v is not None}
    if isinstance(options, CopyOptions):
        return replace(options, format=fmt, **extra).validate(is_from)  # type: ignore[arg-type]
    merged = dict(options or {})
    merged.pop("format", None)
    merged.update(extra)
    return CopyOptions(format=fmt, **merged).validate(is_from)  # type: ignore[arg-type]


# ============================================================================ COPY TO


def _text_specials(delim: str) -> bytes:
    return bytes([8, 9, 10, 11, 12, 13, 92, ord(delim)])


def _text_escape_map(delim: str) -> dict[int, str]:
    m = {8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 92: "\\\\"}
    if ord(delim) not in m:
        m[ord(delim)] = "\\" + delim
    return m


def copy_text_escape(value: str, delim: str = "\t") -> str:
    """CopyAttributeOutText for one value."""
    return value.translate(_text_escape_map(delim))


def _escape_text_column(vals: pa.Array, delim: str, alphabet: bytes | None = None) -> pa.Array:
    specials = _text_specials(delim)
    if alphabet is not None and not set(specials) & set(alphabet):
        return vals
    if alphabet is not None and set(alphabet) & set(specials) == {92}:
        # bytea: every value is \\x..., one backslash to double and nothing else
        return pc.binary_join_element_wise(pa.scalar(b"\\", B), vals, pa.scalar(b"", B))
    rows = rows_with_bytes(vals, specials)
    if len(rows) == 0:
        return vals
    table = _text_escape_map(delim)
    sub = vals.take(pa.array(rows)).to_pylist()
    repl = pa.array(
        [
            v.decode("utf-8", "surrogateescape").translate(table).encode("utf-8", "surrogateescape")
            for v in sub
        ],
        B,
    )
    mask = np.zeros(len(vals), dtype=bool)
    mask[rows] = True
    return pc.replace_with_mask(vals, pa.array(mask), repl)


def _csv_column(
    vals: pa.Array, opts: CopyOptions, forced: bool, single: bool, alphabet: bytes | None = None
) -> pa.Array:
    n = len(vals)
    valid = valid_mask(vals)
    quote = opts.quote_char.encode()
    escape = opts.escape_char.encode()
    if forced:
        need = valid.copy()
    else:
        need = np.zeros(n, dtype=bool)
        special = bytes({ord(opts.delim), quote[0], 10, 13})
        if alphabet is None or set(special) & set(alphabet):
            need[rows_with_bytes(vals, special)] = True
        nul = opts.null_print.encode()
        lengths = np.diff(binary_parts(vals)[0])
        cand = np.flatnonzero(valid & (lengths == len(nul)))
        if len(nul) == 0:
            need[cand] = True
        elif len(cand):
            eq = pc.equal(vals.take(pa.array(cand)), pa.scalar(nul, B)).fill_null(False)
            need[cand[np.asarray(eq)]] = True
        if single:
            cand = np.flatnonzero(valid & (lengths == 2))
            if len(cand):
                eq = pc.equal(vals.take(pa.array(cand)), pa.scalar(b"\\.", B)).fill_null(False)
                need[cand[np.asarray(eq)]] = True
        need &= valid
    if not need.any():
        return vals
    rows = np.flatnonzero(need)
    sub = vals.take(pa.array(rows))
    inner = sub
    if rows_with_bytes(sub, bytes({quote[0], escape[0]})).size:
        if escape != quote:
            inner = pc.replace_substring(
                inner.view(pa.string()), escape.decode(), 2 * escape.decode()
            ).view(B)
        inner = pc.replace_substring(
            inner.view(pa.string()), quote.decode(), (escape + quote).decode()
        ).view(B)
    q = pa.scalar(quote, B)
    quoted = pc.binary_join_element_wise(q, inner, q, pa.scalar(b"", B))
    if len(rows) == n:
        return quoted
    mask = np.zeros(n, dtype=bool)
    mask[rows] = True
    return pc.replace_with_mask(vals, pa.array(mask), quoted)


def _header_line(names: Sequence[str], opts: CopyOptions) -> bytes:
    if opts.format == "csv":
        arr = pa.array([n.encode() for n in names], B)
        out = _csv_column(arr, opts, False, len(names) == 1).to_pylist()
    else:
        out = [copy_text_escape(n, opts.delim).encode() for n in names]
    return opts.delim.encode().join(out) + b"\n"


def _force_quote_set(opts: CopyOptions, names: Sequence[str], table_name: str | None) -> set[int]:
    if opts.force_quote_all:
        return set(range(len(names)))
    out = set()
    cols = [opts.force_quote] if isinstance(opts.force_quote, str) else opts.force_quote
    for fq in cols:
        if fq not in names:
            where = f' of relation "{table_name}"' if table_name else ""
            raise PgError("42703", f'column "{fq}"{where} does not exist')
        out.add(list(names).index(fq))
    return out


def _join_rows(cols: Sequence[pa.Array], sep: bytes, end: bytes, lead: bytes = b"") -> pa.Array:
    """Element-wise concatenation: lead + c1 + sep + c2 + ... + cN + end.

    Arrow's join is several times faster with one separator argument than with scalars
    interleaved, so the lead and end bytes are attached to the first and last column first.
    """
    cols = list(cols)
    empty = pa.scalar(b"", B)
    if lead:
        cols[0] = pc.binary_join_element_wise(pa.scalar(lead, B), cols[0], empty)
    if end:
        cols[-1] = pc.binary_join_element_wise(cols[-1], pa.scalar(end, B), empty)
    if len(cols) == 1:
        return cols[0]
    return pc.binary_join_element_wise(*cols, pa.scalar(sep, B))


def _chunks(rows: pa.Array, target: int = CHUNK_BYTES) -> Iterator[bytes]:
    offs, data = binary_parts(rows)
    n = len(rows)
    start = 0
    mv = memoryview(data)
    while start < n:
        end = int(np.searchsorted(offs, offs[start] + target, side="right")) - 1
        end = min(max(end, start + 1), n)
        yield bytes(mv[offs[start] : offs[end]])
        start = end


def _format_batch(
    batch: pa.RecordBatch,
    ctypes: Sequence[ColumnType],
    opts: CopyOptions,
    forced: set[int],
    extra_float_digits: int = 1,
    bytea_output: str = "hex",
    zone: pgtz.Zone | None = None,
) -> pa.Array:
    ncols = len(ctypes)
    if opts.format == "binary":
        cols = [encode_binary_fields(ct, batch.column(i)).prefixed for i, ct in enumerate(ctypes)]
        if not cols:
            return pa.array([struct.pack(">h", 0)] * batch.num_rows, B)
        return _join_rows(cols, b"", b"", struct.pack(">h", ncols))
    cols = []
    nul = pa.scalar(opts.null_print.encode(), B)
    for i, ct in enumerate(ctypes):
        col = batch.column(i)
        vals = encode_text_arrow(ct, col, extra_float_digits=extra_float_digits, bytea_output=bytea_output, zone=zone)
        # (bytea's alphabet is its hex form's: the escape form has backslashes anywhere)
        alphabet = None if ct.base.name == "bytea" and bytea_output != "hex" else output_alphabet(ct, col.type)
        if opts.format == "text":
            vals = _escape_text_column(vals, opts.delim, alphabet)
        else:
            vals = _csv_column(vals, opts, i in forced, ncols == 1, alphabet)
        cols.append(vals.fill_null(nul))
    if not cols:
        return pa.array([b"\n"] * batch.num_rows, B)
    return _join_rows(cols, opts.delim.encode(), b"\n")


def encode_copy(
    table: pa.Table | Iterable[pa.RecordBatch],
    ctypes: list[ColumnType],
    fmt: CopyFormat,
    *,
    names: Sequence[str] | None = None,
    delimiter: str | None = None,
    null: str | None = None,
    header: bool | str | int = False,
    quote: str | None = None,
    escape: str | None = None,
    force_quote: Sequence[str] | str = (),
    force_not_null: Sequence[str] = (),
    force_null: Sequence[str] = (),
    table_name: str | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    batch_rows: int = BATCH_ROWS,
    extra_float_digits: int = 1,
    bytea_output: str = "hex",
    zone: pgtz.Zone | None = None,
) -> Iterator[bytes]:
    """COPY TO STDOUT data, byte-identical to PostgreSQL's, in CopyData-sized chunks
    (floats in text and CSV as the session's ``extra_float_digits`` prints them, bytea as its
    ``bytea_output``, timestamptz in its ``zone``).

    ``table`` may be a stream of record batches (then ``names`` names its columns): the
    output is produced as they arrive, so memory stays bounded whatever the row count.

    Column names (for HEADER and FORCE_QUOTE) are the table's field names; ``quote`` and
    ``escape`` default to '"' in CSV mode.  Options are checked as PostgreSQL checks them.
    """
    opts = CopyOptions(
        format=fmt,
        delimiter=delimiter,
        null=null,
        header=header,
        quote=quote,
        escape=escape,
        force_quote=force_quote,
        force_not_null=force_not_null,
        force_null=force_null,
        table_name=table_name or "stdin",
    ).validate(is_from=False)
    if isinstance(table, pa.Table):
        names = table.column_names
        batches: Iterable[pa.RecordBatch] = table.to_batches(max_chunksize=batch_rows)
    else:
        if names is None:
            raise ValueError("a batch stream needs its column names")
        batches = table
    names = list(names)
    if len(ctypes) != len(names):
        raise ValueError("one ColumnType per table column is needed")
    forced = _force_quote_set(opts, names, table_name) if fmt == "csv" else set()
    pending = b""
    if fmt == "binary":
        pending = BINARY_HEADER
    elif opts.header:
        pending = _header_line(names, opts)
    for batch in batches:
        if batch.num_rows == 0:
            continue
        rows = _format_batch(batch, ctypes, opts, forced, extra_float_digits, bytea_output, zone)
        for chunk in _chunks(rows, chunk_bytes):
            if pending:
                chunk = pending + chunk
                pending = b""
            yield chunk
    if fmt == "binary":
        pending += BINARY_TRAILER
    if pending:
        yield pending


def encode_data_rows(
    table: pa.Table | pa.RecordBatch,
    ctypes: Sequence[ColumnType],
    formats: Sequence[int] | int = 0,
    *,
    chunk_bytes: int = CHUNK_BYTES,
    batch_rows: int = BATCH_ROWS,
) -> Iterator[bytes]:
    """Whole DataRow ('D') messages for a result set, many per chunk, ready for the socket.

    ``formats`` is the Bind result-format list (0 text, 1 binary; one entry for all columns).
    """
    ncols = len(ctypes)
    if isinstance(formats, int):
        formats = [formats] * ncols
    elif len(formats) == 1:
        formats = list(formats) * ncols
    elif len(formats) == 0:
        formats = [0] * ncols
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    for batch in table.to_batches(max_chunksize=batch_rows):
        if batch.num_rows == 0:
            continue
        cols = []
        for i, ct in enumerate(ctypes):
            if formats[i]:
                cols.append(encode_binary_fields(ct, batch.column(i)).prefixed)
            else:
                text = encode_text_arrow(ct, batch.column(i))
                cols.append(_prefix_lengths(text))
        body = _join_rows(cols, b"", b"", struct.pack(">h", ncols))
        offs, _ = binary_parts(body)
        lens = np.diff(offs) + 4
        head = np.empty((len(lens), 5), dtype=np.uint8)
        head[:, 0] = ord("D")
        head[:, 1:] = lens.astype(">i4").view(np.uint8).reshape(-1, 4)
        heads = from_parts(
            np.arange(0, 5 * len(lens) + 1, 5, dtype=np.int64), head.reshape(-1), None
        )
        msgs = _join_rows([heads, body], b"", b"")
        yield from _chunks(msgs, chunk_bytes)


def _prefix_lengths(vals: pa.Array) -> pa.Array:

    return _variable(vals).prefixed


# ========================================================================== COPY FROM


def _limit_printout(s: bytes) -> str:
    """limit_printout_length: at most 100 bytes of a value in an error context, then '...'."""
    if len(s) <= 100:
        return s.decode("utf-8", "replace")
    cut = 100
    while cut > 0 and (s[cut] & 0xC0) == 0x80:
        cut -= 1
    return s[:cut].decode("utf-8", "replace") + "..."


_OCT = frozenset(b"01234567")
_HEXD = frozenset(b"0123456789abcdefABCDEF")
_ESC = {ord("b"): 8, ord("f"): 12, ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("v"): 11}


def copy_text_unescape(raw: bytes) -> bytes:
    """CopyReadAttributesText's de-escaping of one field."""
    out = bytearray()
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        i += 1
        if c != 0x5C:
            out.append(c)
            continue
        if i >= n:
            break
        c = raw[i]
        i += 1
        if c in _OCT:
            val = c - 48
            if i < n and raw[i] in _OCT:
                val = (val << 3) + raw[i] - 48
                i += 1
                if i < n and raw[i] in _OCT:
                    val = (val << 3) + raw[i] - 48
                    i += 1
            out.append(val & 0xFF)
        elif c == ord("x"):
            if i < n and raw[i] in _HEXD:
                val = int(chr(raw[i]), 16)
                i += 1
                if i < n and raw[i] in _HEXD:
                    val = (val << 4) + int(chr(raw[i]), 16)
                    i += 1
                out.append(val)
            else:
                out.append(c)
        else:
            out.append(_ESC.get(c, c))
    return bytes(out)


@dataclass
class _Rows:
    """Raw fields of a run of records, row-major: ``fields[r * ncols + c]``.

    ``nulls`` marks fields equal to the null marker (before de-escaping, as PostgreSQL
    compares); ``lines`` is each record's line number for error contexts; ``raw_lines`` gives
    a record's text for line-level contexts.
    """

    fields: pa.Array  # binary, de-escaped values
    nulls: np.ndarray
    nrows: int
    lines: np.ndarray
    raw_line: Callable[[int], bytes]


#: A column's input check beyond its storage type (see ``CopyDecoder(checks=…)``).
InputCheck = Callable[[pa.Array], None]


class CopyDecoder:
    """COPY FROM STDIN parser: ``feed`` CopyData payloads, then ``finish`` for the table.

    Data is parsed in batches of whole records as it arrives (``batch_bytes``), so memory
    holds the decoded Arrow columns plus at most one batch of raw input.  ``drain()`` hands
    over the rows decoded so far, for callers that write as they go.
    """

    def __init__(
        self,
        ctypes: Sequence[ColumnType],
        fmt: CopyFormat = "text",
        options: CopyOptions | Mapping[str, object] | None = None,
        *,
        names: Sequence[str] | None = None,
        table_name: str | None = None,
        batch_bytes: int = 1 << 20,
        date_order: str = "MDY",
        checks: Mapping[int, InputCheck] | None = None,
        **option_kw: object,
    ) -> None:
        """``options`` (or keyword options: delimiter, null, header, quote, escape,
        force_not_null, force_null) are COPY's; ``names`` and ``table_name`` go into error
        contexts and HEADER MATCH; ``date_order`` is the session's DateStyle field order,
        in which text dates and timestamps are read; ``checks``, by column, what the
        column's input function checks beyond its storage type's (an enum's labels), run
        on each decoded batch and raising :class:`InputError` for the first bad value."""
        kw: dict[str, object] = dict(option_kw)
        if names is not None:
            kw["names"] = list(names)
        if table_name is not None:
            kw["table_name"] = table_name
        self.opts = _options(fmt, options, True, **kw)
        self.ctypes = list(ctypes)
        self.checks = dict(checks or {})
        self.names = list(self.opts.names or [f"column{i + 1}" for i in range(len(ctypes))])
        if len(self.names) != len(self.ctypes):
            raise ValueError("one name per column is needed")
        self.ncols = len(self.ctypes)
        self.batch_bytes = batch_bytes
        self.date_order = date_order
        self._buf = bytearray()
        self._lineno = 0  # records (and, in CSV, quoted line breaks) consumed so far
        self._eol: str | None = None
        self._done = False  # end-of-data marker seen
        self._header_pending = bool(self.opts.header)
        self._binary_header_done = False
        self._pending_error: tuple[int, str, str, int, int] | None = None
        self._columns: list[list[pa.Array]] = [[] for _ in self.ctypes]
        self._rows = 0
        self.schema = pa.schema(
            [pa.field(n, ct.arrow) for n, ct in zip(self.names, self.ctypes, strict=True)]
        )
        self._force_not_null = self._col_flags(self.opts.force_not_null)
        self._force_null = self._col_flags(self.opts.force_null)
        self._threshold = batch_bytes
        if self.opts.format == "csv":
            specials_q = re.escape(bytes({ord(self.opts.quote_char), ord(self.opts.escape_char)}))
            specials_u = re.escape(bytes({ord(self.opts.delim), ord(self.opts.quote_char)}))
            self._csv_runs = (
                re.compile(b"[^" + specials_q + b"]+").match,
                re.compile(b"[^" + specials_u + b"\\r\\n]+").match,
            )

    def _col_flags(self, cols: Sequence[str] | str) -> set[int]:
        out = set()
        for c in [cols] if isinstance(cols, str) else cols:
            if c not in self.names:
                raise PgError(
                    "42703", f'column "{c}" of relation "{self.opts.table_name}" does not exist'
                )
            out.add(self.names.index(c))
        return out

    # ------------------------------------------------------------------------ public

    @property
    def rows(self) -> int:
        """Rows decoded so far (drained or not)."""
        return self._rows

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Take one CopyData payload; complete records are parsed once a batch is buffered."""
        if self._done:
            # text and csv ignore what follows the end marker; binary insists on nothing
            if self.opts.format == "binary" and len(data):
                raise self._fail(
                    "22P04",
                    "received copy data after EOF marker",
                    f"COPY {self.opts.table_name}, line {self._lineno}",
                )
            return
        self._buf += data
        if len(self._buf) >= self._threshold:
            before = len(self._buf)
            self._process(final=False)
            # a record longer than a batch is re-scanned only each time the buffer doubles
            self._threshold = self.batch_bytes if len(self._buf) < before else 2 * before

    def drain(self) -> pa.Table:
        """The rows decoded since the last drain, as a table of the lake's types."""
        cols = []
        for i, parts in enumerate(self._columns):
            typ = self.schema.field(i).type
            cols.append(pa.chunked_array(parts, typ) if parts else pa.chunked_array([], typ))
            self._columns[i] = []
        return pa.Table.from_arrays(cols, schema=self.schema)

    def finish(self) -> pa.Table:
        """Parse what is left (the last line needs no newline) and return the rows."""
        self._process(final=True)
        return self.drain()

    # ---------------------------------------------------------------------- errors

    def _where(
        self,
        line: int,
        column: int | None = None,
        value: bytes | None = None,
        *,
        line_text: bytes | None = None,
        null: bool = False,
    ) -> str:
        t = self.opts.table_name
        if column is not None:
            name = self.names[column]
            if self.opts.format == "binary":
                return f"COPY {t}, line {line}, column {name}"
            if null:
                return f"COPY {t}, line {line}, column {name}: null input"
            return f'COPY {t}, line {line}, column {name}: "{_limit_printout(value or b"")}"'
        if line_text is not None:
            return f'COPY {t}, line {line}: "{_limit_printout(line_text)}"'
        return f"COPY {t}, line {line}"

    def _fail(self, sqlstate: str, message: str, where: str, hint: str | None = None) -> CopyError:
        return CopyError(sqlstate, message, hint=hint, where=where)

    # --------------------------------------------------------------------- driving

    def _process(self, final: bool) -> None:
        if self._done and not self._buf:
            return
        if self.opts.format == "binary":
            self._process_binary(final)
            return
        buf = bytes(self._buf)
        parse = self._parse_text if self.opts.format == "text" else self._parse_csv
        # PostgreSQL verifies the raw input's encoding as its line reader reaches it; a line
        # break never splits a UTF-8 sequence, so everything up to the last one can be checked
        limit = len(buf) if final else max(buf.rfind(b"\n"), buf.rfind(b"\r")) + 1
        bad = None if _utf8_ok(buf[:limit]) else first_invalid(buf[:limit])
        if bad is not None:
            cut = max(buf.rfind(b"\n", 0, bad), buf.rfind(b"\r", 0, bad)) + 1
            parse(buf[:cut], False)
            if not self._done:
                raise CopyError(
                    "22021",
                    invalid_utf8_error(buf, bad).message,
                    where=f"COPY {self.opts.table_name}, line {self._lineno + 1}",
                )
        consumed = parse(buf, final)
        del self._buf[:consumed]
        if self._done:
            self._buf.clear()

    def _emit(
        self, rows: _Rows, *, upto: int | None = None, partial: tuple[int, int] | None = None
    ) -> None:
        """Decode rows [0, upto) column by column; raise the first type error row-major.

        ``partial`` = (row, nfields): that row's first nfields fields are decoded too (the
        columns PostgreSQL converts before it notices missing data).
        """
        n = rows.nrows if upto is None else upto
        ncols = self.ncols
        errors: list[tuple[int, int, InputError]] = []
        decoded: list[pa.Array] = []
        for c, ct in enumerate(self.ctypes):
            take_n = n + (1 if partial is not None and c < partial[1] else 0)
            idx = np.arange(take_n, dtype=np.int64) * ncols + c
            vals = rows.fields.take(pa.array(idx)) if take_n else pa.array([], B)
            nulls = rows.nulls[idx] if take_n else np.zeros(0, dtype=bool)
            if self.opts.format == "csv":
                # as CopyReadAttributesCSV: FORCE_NOT_NULL turns an unquoted empty field
                # into the NULL string, and FORCE_NULL applies only to the others (a quoted
                # field that matches the NULL string)
                unquoted_null = nulls
                if c in self._force_not_null and nulls.any():
                    vals = pc.if_else(
                        pa.array(nulls), pa.scalar(self.opts.null_print.encode(), B), vals
                    )
                    nulls = np.zeros(take_n, dtype=bool)
                if c in self._force_null:
                    eq = np.asarray(
                        pc.equal(vals, pa.scalar(self.opts.null_print.encode(), B)).fill_null(False)
                    )
                    nulls = nulls | (eq & ~unquoted_null)
            if nulls.any():
                vals = pc.if_else(pa.array(~nulls), vals, pa.scalar(None, B))
            try:
                arr = decode_text_arrow(ct, vals, self.date_order)
                if c in self.checks:
                    self.checks[c](arr)
            except InputError as e:
                errors.append((e.index, c, e))
                continue
            decoded.append(arr.slice(0, n) if take_n > n else arr)
        if errors:
            r, c, e = min(errors, key=lambda x: (x[0], x[1]))
            value = rows.fields[r * ncols + c].as_py()
            if e.sqlstate == "22021":
                # de-escaped bytes are verified while the line is split, before any column
                where = self._where(int(rows.lines[r]), line_text=rows.raw_line(r))
            else:
                where = self._where(int(rows.lines[r]), c, value)
            raise CopyError(e.sqlstate, e.message, detail=e.detail, hint=e.hint, where=where)
        if n:
            for c, arr in enumerate(decoded):
                self._columns[c].append(arr.cast(self.schema.field(c).type))
            self._rows += n

    def _check_and_emit(self, rows: _Rows, counts: np.ndarray) -> None:
        """Field-count checks (extra/missing data) in PostgreSQL's order, then decode."""
        bad = np.flatnonzero(counts != self.ncols)
        if len(bad) == 0:
            self._emit(rows)
            return
        k = int(bad[0])
        line = int(rows.lines[k])
        text = rows.raw_line(k)
        if counts[k] > self.ncols:
            self._emit(rows, upto=k)
            raise self._fail(
                "22P04",
                "extra data after last expected column",
                self._where(line, line_text=text),
            )
        have = int(counts[k])
        self._emit(rows, upto=k, partial=(k, have))
        raise self._fail(
            "22P04",
            f'missing data for column "{self.names[have]}"',
            self._where(line, line_text=text),
        )

    # ------------------------------------------------------------------- text/csv

    def _eol_style(self, a: np.ndarray, term: np.ndarray, final: bool) -> str | None:
        """Decide the newline style from the first record terminator (PostgreSQL does)."""
        if self._eol is not None:
            return self._eol
        if len(term) == 0:
            return None
        p = int(term[0])
        if a[p] == 10:
            self._eol = "nl"
        elif p + 1 < len(a):
            self._eol = "crnl" if a[p + 1] == 10 else "cr"
        elif final:
            self._eol = "cr"
        else:
            return None
        return self._eol

    def _records(
        self, buf: bytes, a: np.ndarray, escaped: np.ndarray | None, final: bool, csv: bool
    ) -> tuple[np.ndarray, np.ndarray, int] | None:
        """(record starts, record ends (exclusive, no EOL), consumed bytes) of whole records."""
        is_term = (a == 10) | (a == 13)
        if escaped is not None:
            is_term &= ~escaped
        term = np.flatnonzero(is_term)
        eol = self._eol_style(a, term, final)
        if eol is None:
            if not final:
                return None
            if len(a) == 0:
                return np.zeros(0, np.int64), np.zeros(0, np.int64), 0
            return np.array([0]), np.array([len(a)]), len(a)
        lit = "unquoted" if csv else "literal"
        hint_cr = (
            "Use quoted CSV field to represent carriage return."
            if csv
            else 'Use "\\r" to represent carriage return.'
        )
        hint_nl = (
            "Use quoted CSV field to represent newline."
            if csv
            else 'Use "\\n" to represent newline.'
        )
        if eol == "nl":
            ends = term[a[term] == 10]
            crs = term[a[term] == 13]
            seps = ends
            bad_cr = crs
            bad_nl = np.zeros(0, np.int64)
            content_end = ends
        elif eol == "cr":
            ends = term[a[term] == 13]
            bad_nl = term[a[term] == 10]
            bad_cr = np.zeros(0, np.int64)
            seps = ends
            content_end = ends
        else:
            crs = term[a[term] == 13]
            nls = term[a[term] == 10]
            nxt = np.minimum(crs + 1, len(a) - 1)
            paired = (crs + 1 < len(a)) & (a[nxt] == 10)
            tail_cr = crs[(crs + 1 >= len(a))] if not final else np.zeros(0, np.int64)
            bad_cr = crs[~paired & ~np.isin(crs, tail_cr)]
            prev = np.maximum(nls - 1, 0)
            bad_nl = nls[~((nls > 0) & (a[prev] == 13))]
            seps = nls
            content_end = nls - 1
        first_bad = None
        for pos, msg, hint in (
            (bad_cr, f"{lit} carriage return found in data", hint_cr),
            (bad_nl, f"{lit} newline found in data", hint_nl),
        ):
            if len(pos):
                p = int(pos[0])
                if first_bad is None or p < first_bad[0]:
                    first_bad = (p, msg, hint)
        limit = len(a)
        if first_bad is not None:
            limit = first_bad[0]
        keep = seps < limit
        seps = seps[keep]
        content_end = content_end[keep]
        starts = np.concatenate([[0], seps + 1]).astype(np.int64)[: len(seps)]
        ends = content_end.astype(np.int64)
        consumed = int(seps[-1]) + 1 if len(seps) else 0
        if first_bad is not None:
            self._pending_error = (len(seps), first_bad[1], first_bad[2], consumed, limit)
        elif final and consumed < len(a):
            tail_end = len(a)
            if eol == "crnl" and a[-1] == 13:
                tail_end -= 1
            starts = np.concatenate([starts, [consumed]])
            ends = np.concatenate([ends, [tail_end]])
            consumed = len(a)
        return starts, ends, consumed

    def _parse_text(self, buf: bytes, final: bool) -> int:
        a = np.frombuffer(buf, dtype=np.uint8)
        delim = ord(self.opts.delim)
        escaped = None
        bsmask = a == 92
        if bsmask.any():
            # a byte is escaped when an odd run of backslashes precedes it
            idx = np.arange(len(a), dtype=np.int64)
            last_non = np.maximum.accumulate(np.where(~bsmask, idx, -1))
            prev_last = np.concatenate([[-1], last_non[:-1]])
            escaped = ((idx - 1 - prev_last) % 2) == 1
        self._pending_error = None
        rec = self._records(buf, a, escaped, final, csv=False)
        if rec is None:
            return 0
        starts, ends, consumed = rec
        if escaped is not None:
            cand = np.flatnonzero(bsmask[:-1] & ~escaped[:-1] & (a[1:] == ord(".")))
            if len(cand):
                p = int(cand[0])
                pe = self._pending_error
                if pe is not None and pe[4] < p:
                    pass  # a newline error comes first
                elif p < consumed or final:
                    return self._eof_marker(a, p, starts, ends, final, buf, escaped, delim)
        self._text_rows(buf, a, starts, ends, escaped, delim)
        self._raise_pending()
        return consumed

    def _raise_pending(self) -> None:
        pe = self._pending_error
        if pe is not None:
            _nrec, msg, hint, _consumed, _limit = pe
            self._pending_error = None
            raise self._fail("22P04", msg, self._where(self._lineno + 1), hint=hint)

    def _eof_marker(
        self,
        a: np.ndarray,
        p: int,
        starts: np.ndarray,
        ends: np.ndarray,
        final: bool,
        buf: bytes,
        escaped: np.ndarray | None,
        delim: int,
    ) -> int:
        """Handle the end-of-data marker: earlier rows count, the rest is ignored."""
        # records wholly before the marker, then the marker line's own leading text
        r = int(np.searchsorted(starts, p, side="right")) - 1
        if r >= 0 and p <= ends[r]:
            keep = r
            rec_start = int(starts[r])
        else:
            keep = r + 1
            rec_start = int(ends[r]) + (2 if self._eol == "crnl" else 1) if r >= 0 else 0
        line = self._lineno + keep + 1
        eol = self._eol or "nl"
        q = p + 2
        if q >= len(a) and not final:
            return 0
        c2 = int(a[q]) if q < len(a) else 0
        if eol == "crnl" and c2:
            if c2 == 10:
                raise self._fail(
                    "22P04",
                    "end-of-copy marker does not match previous newline style",
                    self._where(line),
                )
            if c2 != 13:
                raise self._fail("22P04", "end-of-copy marker corrupt", self._where(line))
            c2 = int(a[q + 1]) if q + 1 < len(a) else 0
        if c2 not in (10, 13):
            raise self._fail("22P04", "end-of-copy marker corrupt", self._where(line))
        if (eol != "cr" and c2 != 10) or (eol == "cr" and c2 != 13):
            raise self._fail(
                "22P04",
                "end-of-copy marker does not match previous newline style",
                self._where(line),
            )
        ks = list(starts[:keep])
        ke = list(ends[:keep])
        if p > rec_start:
            ks.append(rec_start)
            ke.append(p)
        self._pending_error = None
        self._text_rows(buf, a, np.array(ks, np.int64), np.array(ke, np.int64), escaped, delim)
        self._done = True
        return len(a)

    def _header_skip(
        self,
        starts: np.ndarray,
        ends: np.ndarray,
        buf: bytes,
        fields_of: Callable[[int], list[bytes]],
    ) -> int:
        """Skip (or check, for HEADER MATCH) the first record; returns records to drop."""
        if not self._header_pending or len(starts) == 0:
            return 0
        self._header_pending = False
        self._lineno += 1
        if self.opts.header == "match":
            got = fields_of(0)
            if len(got) != self.ncols:
                raise self._fail(
                    "22P04",
                    f"wrong number of fields in header line: got {len(got)}, expected {self.ncols}",
                    self._where(self._lineno, line_text=buf[starts[0] : ends[0]]),
                )
            for i, (g, name) in enumerate(zip(got, self.names, strict=True)):
                if g.decode("utf-8", "replace") != name:
                    raise self._fail(
                        "22P04",
                        f'column name mismatch in header line field {i + 1}: got "{g.decode("utf-8", "replace")}", expected "{name}"',
                        self._where(self._lineno, line_text=buf[starts[0] : ends[0]]),
                    )
        return 1

    def _text_rows(
        self,
        buf: bytes,
        a: np.ndarray,
        starts: np.ndarray,
        ends: np.ndarray,
        escaped: np.ndarray | None,
        delim: int,
    ) -> None:
        if len(starts) == 0:
            return

        def raw_fields(i: int) -> list[bytes]:
            line = buf[starts[i] : ends[i]]
            return [copy_text_unescape(f) for f in _split_unescaped(line, delim)]

        skip = self._header_skip(starts, ends, buf, raw_fields)
        starts, ends = starts[skip:], ends[skip:]
        nrec = len(starts)
        if nrec == 0:
            return
        # delimiters inside records
        is_d = a == delim
        if escaped is not None:
            is_d &= ~escaped
        dpos = np.flatnonzero(is_d)
        rec_of = np.searchsorted(starts, dpos, side="right") - 1
        inside = (rec_of >= 0) & (dpos < ends[np.maximum(rec_of, 0)])
        dpos = dpos[inside]
        rec_of = rec_of[inside]
        counts = np.bincount(rec_of, minlength=nrec).astype(np.int64) + 1
        # field f of record r spans from the previous separator (or the record start) to the
        # next one (or the record end); the k-th delimiter of r ends its field k
        nf = int(counts.sum())
        first_field = np.zeros(nrec + 1, dtype=np.int64)
        np.cumsum(counts, out=first_field[1:])
        fstart = np.empty(nf, dtype=np.int64)
        fend = np.empty(nf, dtype=np.int64)
        fstart[first_field[:-1]] = starts
        fend[first_field[1:] - 1] = ends
        # the k-th delimiter overall is field (k + record) of the row-major field list
        fi = np.arange(len(dpos)) + rec_of
        fend[fi] = dpos
        fstart[fi + 1] = dpos + 1
        lens = fend - fstart
        # the field bytes are everything but separators, line breaks and what lies outside
        # the records (a skipped header, an unfinished tail)
        keep = np.ones(len(a), dtype=bool)
        keep[: starts[0]] = False
        keep[dpos] = False
        keep[ends[-1] :] = False
        gap_end = starts[1:]
        gap_start = ends[:-1]
        keep[gap_start] = False
        wide = np.flatnonzero(gap_end - gap_start > 1)
        for g in wide.tolist():
            keep[gap_start[g] : gap_end[g]] = False
        data = a[keep]
        offs = np.zeros(nf + 1, dtype=np.int64)
        np.cumsum(lens, out=offs[1:])
        fields = from_parts(offs, data, None)
        nul = self.opts.null_print.encode()
        nulls = np.zeros(nf, dtype=bool)
        cand = np.flatnonzero(lens == len(nul))
        if len(cand):
            if len(nul) == 0:
                nulls[cand] = True
            else:
                eq = pc.equal(fields.take(pa.array(cand)), pa.scalar(nul, B)).fill_null(False)
                nulls[cand[np.asarray(eq)]] = True
        if escaped is not None:
            rows_bs = rows_with_bytes(fields, b"\\")
            rows_bs = rows_bs[~nulls[rows_bs]]
            if len(rows_bs):
                sub = fields.take(pa.array(rows_bs)).to_pylist()
                repl = pa.array([copy_text_unescape(v) for v in sub], B)
                mask = np.zeros(nf, dtype=bool)
                mask[rows_bs] = True
                fields = pc.replace_with_mask(fields, pa.array(mask), repl)
        lines = self._lineno + np.arange(1, nrec + 1, dtype=np.int64)
        rows = _Rows(fields, nulls, nrec, lines, lambda r: buf[starts[r] : ends[r]])
        ok = counts == self.ncols
        if ok.all():
            self._emit(rows)
        else:
            self._check_and_emit_ragged(rows, counts, first_field)
        self._lineno += nrec

    def _check_and_emit_ragged(
        self, rows: _Rows, counts: np.ndarray, first_field: np.ndarray
    ) -> None:
        """Rows with the wrong field count: regroup the good prefix, then raise."""
        k = int(np.flatnonzero(counts != self.ncols)[0])
        # rows before k are regular; re-slice fields so row r starts at r * ncols
        head = rows.fields.slice(0, int(first_field[k]))
        have = int(counts[k])
        tail = rows.fields.slice(int(first_field[k]), have)
        fields = pa.concat_arrays([head, tail])
        nulls = np.concatenate(
            [rows.nulls[: first_field[k]], rows.nulls[first_field[k] : first_field[k] + have]]
        )
        sub = _Rows(fields, nulls, k + 1, rows.lines, rows.raw_line)
        cnt = np.full(k + 1, self.ncols, dtype=np.int64)
        cnt[k] = have
        self._check_and_emit(sub, cnt)

    # ------------------------------------------------------------------------- csv

    def _parse_csv(self, buf: bytes, final: bool) -> int:
        q = self.opts.quote_char.encode()
        if q not in buf:
            return self._parse_csv_plain(buf, final)
        return self._parse_csv_quoted(buf, final)

    def _csv_marker(self, a: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> int | None:
        """Index of the first record that is exactly '\\.' followed by a line break (CSV's
        end-of-data marker; at the very end of the data it is a value)."""
        lens = ends - starts
        cand = np.flatnonzero(lens == 2)
        for r in cand.tolist():
            if a[starts[r]] == 92 and a[starts[r] + 1] == 46 and ends[r] < len(a):
                return r
        return None

    def _parse_csv_plain(self, buf: bytes, final: bool) -> int:
        a = np.frombuffer(buf, dtype=np.uint8)
        self._pending_error = None
        rec = self._records(buf, a, None, final, csv=True)
        if rec is None:
            return 0
        starts, ends, consumed = rec
        m = self._csv_marker(a, starts, ends)
        if m is not None:
            self._pending_error = None
            starts, ends = starts[:m], ends[:m]
            self._done = True
            consumed = len(a)
        self._text_rows(buf, a, starts, ends, None, ord(self.opts.delim))
        self._raise_pending()
        return consumed

    def _parse_csv_quoted(self, buf: bytes, final: bool) -> int:
        """CSV with quotes: a sequential scanner (quotes can hide delimiters and newlines)."""
        values: list[bytes] = []
        nulls: list[bool] = []
        counts: list[int] = []
        lines: list[int] = []
        raw: list[tuple[int, int]] = []
        n = len(buf)
        pos = 0
        consumed = 0
        lineno = self._lineno
        try:
            while pos < n:
                if buf.startswith(b"\\.", pos):
                    after = pos + 2
                    if after >= n and not final:
                        break
                    if after < n and buf[after] in (10, 13):
                        self._done = True
                        consumed = n
                        break
                rec = self._csv_record(buf, pos, final)
                if rec is None:
                    break
                fields, fnulls, end_content, nxt, extra = rec
                lineno += 1 + extra
                if self._header_pending:
                    self._header_pending = False
                    self._check_header(fields, lineno, buf[pos:end_content])
                else:
                    values.extend(fields)
                    nulls.extend(fnulls)
                    counts.append(len(fields))
                    lines.append(lineno)
                    raw.append((pos, end_content))
                pos = nxt
                consumed = pos
        except _CsvError as e:
            self._emit_csv(values, nulls, counts, lines, raw, buf)
            if e.unterminated:
                lineno += 1 + e.extra
                raise self._fail(
                    "22P04", e.message, self._where(lineno, line_text=buf[e.start : e.end])
                ) from None
            raise self._fail("22P04", e.message, self._where(lineno + 1), hint=e.hint) from None
        self._emit_csv(values, nulls, counts, lines, raw, buf)
        self._lineno = lineno
        return consumed

    def _csv_record(
        self, buf: bytes, pos: int, final: bool
    ) -> tuple[list[bytes], list[bool], int, int, int] | None:
        """One CSV record from ``pos``: (fields, nulls, content end, next pos, quoted newlines);
        None when the record is not complete yet."""
        d = ord(self.opts.delim)
        qc = ord(self.opts.quote_char)
        ec = ord(self.opts.escape_char)
        nul = self.opts.null_print.encode()
        n = len(buf)
        start = pos
        fields: list[bytes] = []
        fnulls: list[bool] = []
        cur = bytearray()
        saw_quote = False
        in_quote = False
        raw_start = pos
        extra = 0
        # PostgreSQL counts quoted line breaks by the newline style, which is unknown (so
        # taken as CR) until the first record has ended
        qnl = 10 if self._eol == "nl" else 13
        qnl_b = bytes([qnl])
        quoted_run, plain_run = self._csv_runs
        while True:
            # ordinary bytes go in runs found by a regex, not one by one
            m = (quoted_run if in_quote else plain_run)(buf, pos)
            if m is not None:
                seg = m.group()
                cur += seg
                if in_quote:
                    extra += seg.count(qnl_b)
                pos = m.end()
            if pos >= n:
                if not final:
                    return None
                if in_quote:
                    raise _CsvError(
                        "unterminated CSV quoted field",
                        unterminated=True,
                        start=start,
                        end=n,
                        extra=extra,
                    )
                if pos == start:
                    return None
                fields.append(bytes(cur))
                fnulls.append(not saw_quote and buf[raw_start:pos] == nul)
                return fields, fnulls, n, n, extra
            c = buf[pos]
            if in_quote:
                if c == ec and ec != qc:
                    if pos + 1 >= n and not final:
                        return None
                    if pos + 1 < n and buf[pos + 1] in (qc, ec):
                        cur.append(buf[pos + 1])
                        pos += 2
                        continue
                elif c == qc:
                    if ec == qc:
                        if pos + 1 >= n and not final:
                            return None
                        if pos + 1 < n and buf[pos + 1] == qc:
                            cur.append(qc)
                            pos += 2
                            continue
                    in_quote = False
                    pos += 1
                    continue
                if c == qnl:
                    extra += 1
                cur.append(c)
                pos += 1
                continue
            if c == d:
                fields.append(bytes(cur))
                fnulls.append(not saw_quote and buf[raw_start:pos] == nul)
                cur = bytearray()
                saw_quote = False
                pos += 1
                raw_start = pos
                continue
            if c == qc:
                in_quote = True
                saw_quote = True
                pos += 1
                continue
            if c in (10, 13):
                if self._eol is None:
                    if c == 10:
                        self._eol = "nl"
                    elif pos + 1 < n:
                        self._eol = "crnl" if buf[pos + 1] == 10 else "cr"
                    elif final:
                        self._eol = "cr"
                    else:
                        return None
                eol = self._eol
                cr_err = _CsvError(
                    "unquoted carriage return found in data",
                    hint="Use quoted CSV field to represent carriage return.",
                )
                nl_err = _CsvError(
                    "unquoted newline found in data",
                    hint="Use quoted CSV field to represent newline.",
                )
                if eol == "nl":
                    if c == 13:
                        raise cr_err
                    nxt = pos + 1
                elif eol == "cr":
                    if c == 10:
                        raise nl_err
                    nxt = pos + 1
                else:
                    if c == 10:
                        raise nl_err
                    if pos + 1 >= n:
                        if not final:
                            return None
                        raise cr_err
                    if buf[pos + 1] != 10:
                        raise cr_err
                    nxt = pos + 2
                fields.append(bytes(cur))
                fnulls.append(not saw_quote and buf[raw_start:pos] == nul)
                return fields, fnulls, pos, nxt, extra
            cur.append(c)
            pos += 1

    def _check_header(self, fields: list[bytes], line: int, text: bytes) -> None:
        if self.opts.header != "match":
            return
        if len(fields) != self.ncols:
            raise self._fail(
                "22P04",
                f"wrong number of fields in header line: got {len(fields)}, expected {self.ncols}",
                self._where(line, line_text=text),
            )
        for i, (g, name) in enumerate(zip(fields, self.names, strict=True)):
            if g.decode("utf-8", "replace") != name:
                raise self._fail(
                    "22P04",
                    f'column name mismatch in header line field {i + 1}: got "{g.decode("utf-8", "replace")}", expected "{name}"',
                    self._where(line, line_text=text),
                )

    def _emit_csv(
        self,
        values: list[bytes],
        nulls: list[bool],
        counts: list[int],
        lines: list[int],
        raw: list[tuple[int, int]],
        buf: bytes,
    ) -> None:
        if not counts:
            return
        cnt = np.array(counts, dtype=np.int64)
        first_field = np.zeros(len(cnt) + 1, dtype=np.int64)
        np.cumsum(cnt, out=first_field[1:])
        rows = _Rows(
            pa.array(values, B),
            np.array(nulls, dtype=bool),
            len(cnt),
            np.array(lines, dtype=np.int64),
            lambda r: buf[raw[r][0] : raw[r][1]],
        )
        if (cnt == self.ncols).all():
            self._emit(rows)
        else:
            self._check_and_emit_ragged(rows, cnt, first_field)

    # ---------------------------------------------------------------------- binary

    def _process_binary(self, final: bool) -> None:
        buf = bytes(self._buf)
        pos = 0
        n = len(buf)
        t = self.opts.table_name
        if not self._binary_header_done:
            if n < 19 and not final:
                return
            if n < 11 or buf[:11] != BINARY_SIGNATURE:
                raise self._fail("22P04", "COPY file signature not recognized", None)
            if n < 15:
                raise self._fail("22P04", "invalid COPY file header (missing flags)", None)
            (flags,) = struct.unpack_from(">i", buf, 11)
            if flags & (1 << 16):
                raise self._fail("22P04", "invalid COPY file header (WITH OIDS)", None)
            if (flags & ~(1 << 16)) >> 16:
                raise self._fail("22P04", "unrecognized critical flags in COPY file header", None)
            if n < 19:
                raise self._fail("22P04", "invalid COPY file header (missing length)", None)
            (ext,) = struct.unpack_from(">i", buf, 15)
            if ext < 0:
                raise self._fail("22P04", "invalid COPY file header (missing length)", None)
            if n < 19 + ext:
                if not final:
                    return
                raise self._fail("22P04", "invalid COPY file header (wrong length)", None)
            pos = 19 + ext
            self._binary_header_done = True
        ncols = self.ncols
        row_starts: list[int] = []
        lens: list[int] = []
        first_line = self._lineno + 1
        unpack_h = struct.Struct(">h").unpack_from
        unpack_i = struct.Struct(">i").unpack_from
        plan = self._binary_plan()
        min_row = 2 + sum(seg.size for seg, _, _ in plan)
        err: CopyError | None = None
        while True:
            # tight loop for rows in the common layout: a few unpacks per row, no branches
            # per field; anything unusual drops to the field-by-field code below
            while n - pos >= min_row:
                if unpack_h(buf, pos)[0] != ncols:
                    break
                p = pos + 2
                mark = len(lens)
                for seg, expected, has_var in plan:
                    if n - p < seg.size:
                        break
                    vals = seg.unpack_from(buf, p)
                    if (vals[:-1] if has_var else vals) != expected:
                        break
                    p += seg.size
                    if has_var:
                        ln = vals[-1]
                        if ln > 0:
                            if n - p < ln:
                                break
                            p += ln
                        elif ln < -1:
                            break
                    lens.extend(vals)
                else:
                    row_starts.append(pos)
                    pos = p
                    continue
                del lens[mark:]
                break
            line = first_line + len(row_starts)
            if self._done:
                if pos < n:
                    err = self._fail(
                        "22P04", "received copy data after EOF marker", f"COPY {t}, line {line}"
                    )
                break
            if n - pos < 2:
                break  # (a lone trailing byte reads as end of data, as in PostgreSQL)
            (fc,) = unpack_h(buf, pos)
            if fc == -1:
                self._done = True
                pos += 2
                continue
            if fc != ncols:
                err = self._fail(
                    "22P04", f"row field count is {fc}, expected {ncols}", f"COPY {t}, line {line}"
                )
                break
            p = pos + 2
            row: list[int] = []
            incomplete = False
            for c in range(ncols):
                if n - p < 4:
                    incomplete = True
                    break
                (ln,) = unpack_i(buf, p)
                p += 4
                if ln < -1:
                    err = self._fail(
                        "22P04",
                        "invalid field size",
                        f"COPY {t}, line {line}, column {self.names[c]}",
                    )
                    break
                if ln > 0:
                    if n - p < ln:
                        incomplete = True
                        break
                    p += ln
                row.append(ln)
            if err is not None:
                break
            if incomplete:
                if final:
                    err = self._fail(
                        "22P04",
                        "unexpected EOF in COPY data",
                        f"COPY {t}, line {line}, column {self.names[len(row)]}",
                    )
                break
            row_starts.append(pos)
            lens.extend(row)
            pos = p
        nrows = len(row_starts)
        self._emit_binary(buf, row_starts, lens, list(range(first_line, first_line + nrows)))
        self._lineno = first_line - 1 + nrows + (1 if self._done else 0)
        del self._buf[:pos]
        if self._done:
            self._buf.clear()
        if err is not None:
            raise err

    def _binary_plan(self) -> list[tuple[struct.Struct, tuple[int, ...], bool]]:
        """Struct layouts reading a row's field lengths when fixed-width fields are present.

        Each segment covers fixed-width fields (length, then skipped data) up to and including
        the length of the next variable-width field.
        """
        plan: list[tuple[struct.Struct, tuple[int, ...], bool]] = []
        fmt = ">"
        expected: list[int] = []
        for ct in self.ctypes:
            w = None if ct.is_array else _FIXED_WIDTH.get(ct.base.name)
            if w is None:
                plan.append((struct.Struct(fmt + "i"), tuple(expected), True))
                fmt, expected = ">", []
            else:
                fmt += f"i{w}x"
                expected.append(w)
        if expected:
            plan.append((struct.Struct(fmt), tuple(expected), False))
        return plan

    def _emit_binary(
        self, buf: bytes, row_starts: list[int], lens: list[int], lines: list[int]
    ) -> None:
        nrows = len(lines)
        if not nrows:
            return
        a = np.frombuffer(buf, dtype=np.uint8)
        ln = np.array(lens, dtype=np.int64).reshape(nrows, self.ncols)
        # field c starts after the count, its own length word and all earlier fields
        step = 4 + np.maximum(ln, 0)
        before = np.cumsum(step, axis=1) - step
        s = np.array(row_starts, dtype=np.int64)[:, None] + 2 + before + 4
        errors: list[tuple[int, int, InputError]] = []
        decoded: list[pa.Array] = []
        for c, ct in enumerate(self.ctypes):
            cl = ln[:, c]
            valid = cl >= 0
            cl0 = np.where(valid, cl, 0)
            offs = np.zeros(nrows + 1, dtype=np.int64)
            np.cumsum(cl0, out=offs[1:])
            total = int(offs[-1])
            w = _FIXED_WIDTH.get(ct.base.name) if not ct.is_array else None
            if total and w is not None and valid.all():
                data = np.lib.stride_tricks.sliding_window_view(a, w)[s[:, c]].reshape(-1)
            elif total:
                idx = np.repeat(s[:, c] - offs[:-1], cl0) + np.arange(total, dtype=np.int64)
                data = a[idx]
            else:
                data = np.zeros(0, dtype=np.uint8)
            vals = from_parts(offs, data, valid)
            try:
                arr = decode_binary_arrow(ct, vals)
                if c in self.checks:
                    self.checks[c](arr)
                decoded.append(arr)
            except InputError as e:
                errors.append((e.index, c, e))
        if errors:
            r, c, e = min(errors, key=lambda x: (x[0], x[1]))
            raise CopyError(
                e.sqlstate, e.message, detail=e.detail, hint=e.hint, where=self._where(lines[r], c)
            )
        for c, arr in enumerate(decoded):
            self._columns[c].append(arr.cast(self.schema.field(c).type))
        self._rows += nrows


#: Binary send sizes of the fixed-width types.
_FIXED_WIDTH = {
    "bool": 1,
    "int2": 2,
    "int4": 4,
    "int8": 8,
    "float4": 4,
    "float8": 8,
    "date": 4,
    "time": 8,
    "timestamp": 8,
    "timestamptz": 8,
    "interval": 16,
    "uuid": 16,
}


def _utf8_ok(data: bytes) -> bool:
    """Valid UTF-8 without NUL, checked by Arrow's SIMD validator over a zero-copy view."""
    if not data:
        return True
    if b"\x00" in data:
        return False
    buf = pa.py_buffer(data)
    arr = pa.Array.from_buffers(
        pa.binary(), 1, [None, pa.py_buffer(np.array([0, len(data)], np.int32)), buf]
    )
    try:
        arr.cast(pa.string())
    except pa.ArrowInvalid:
        return False
    return True


class _CsvError(Exception):
    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        unterminated: bool = False,
        start: int = 0,
        end: int = 0,
        extra: int = 0,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.unterminated = unterminated
        self.start = start
        self.end = end
        self.extra = extra


def _split_unescaped(line: bytes, delim: int) -> list[bytes]:
    out = []
    cur = bytearray()
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if c == 0x5C and i + 1 < n:
            cur += line[i : i + 2]
            i += 2
            continue
        if c == delim:
            out.append(bytes(cur))
            cur = bytearray()
        else:
            cur.append(c)
        i += 1
    out.append(bytes(cur))
    return out
