"""Reader for the byte-exact relay captures in ``shared/protocol/captures``.

The captures are the project's ground truth for what a real PostgreSQL 15 publisher
sends, so tests replay them instead of trusting hand-decoded hex.  The reader knows
just enough of the frontend/backend protocol to find the pgoutput messages: it
follows the untyped start-up packets, reads the ``START_REPLICATION`` command to
learn whether the connection speaks pgoutput (test_decoding connections also send
XLogData, but as text), and only treats CopyData as XLogData after the
CopyBothResponse, because a tablesync COPY also ships rows in CopyData.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

CAPTURES_DIR = Path(os.environ.get("WALSENDER_PROXY_CAPTURES", "/work/shared/protocol/captures"))

_FRAME_HEADER = struct.Struct("<cdI")
_SSL_REQUEST_CODE = 80877103
_GSSENC_REQUEST_CODE = 80877104
_XLOGDATA_HEADER = struct.Struct(">cQQq")
_OPTION_RE = re.compile(r"\"?([A-Za-z_][A-Za-z0-9_-]*)\"?\s+'((?:[^']|'')*)'")


@dataclass(frozen=True, slots=True)
class CapturedMessage:
    """One pgoutput message as PostgreSQL sent it, with the context needed to decode it."""

    conn: int
    seq: int
    start_lsn: int
    end_lsn: int
    send_time: int
    in_stream: bool
    data: bytes


@dataclass(slots=True)
class CapturedConnection:
    conn: int
    start_replication: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    messages: list[CapturedMessage] = field(default_factory=list)

    @property
    def is_pgoutput(self) -> bool:
        # test_decoding is never given proto_version; pgoutput refuses to start without it.
        return "proto_version" in self.options

    @property
    def proto_version(self) -> int | None:
        value = self.options.get("proto_version")
        return int(value) if value is not None else None


def read_frames(path: Path) -> Iterator[tuple[str, float, bytes]]:
    raw = path.read_bytes()
    pos = 0
    while pos < len(raw):
        direction, t, length = _FRAME_HEADER.unpack_from(raw, pos)
        pos += _FRAME_HEADER.size
        yield direction.decode(), t, raw[pos : pos + length]
        pos += length
    if pos != len(raw):
        raise ValueError(f"{path}: truncated frame")


def _typed_messages(stream: bytes, pos: int) -> Iterator[tuple[bytes, bytes]]:
    while pos + 5 <= len(stream):
        mtype = stream[pos : pos + 1]
        (length,) = struct.unpack_from(">i", stream, pos + 1)
        if pos + 1 + length > len(stream):
            return  # connection closed mid-message
        yield mtype, stream[pos + 5 : pos + 1 + length]
        pos += 1 + length


def _frontend_start(stream: bytes) -> tuple[int, int]:
    """Skip SSL/GSS requests and the StartupMessage; return (typed start, negotiation bytes)."""
    pos = 0
    negotiations = 0
    while pos + 8 <= len(stream):
        (length, code) = struct.unpack_from(">iI", stream, pos)
        pos += length
        if code in (_SSL_REQUEST_CODE, _GSSENC_REQUEST_CODE):
            negotiations += 1
            continue
        return pos, negotiations
    return pos, negotiations


def parse_options(command: str) -> dict[str, str]:
    start = command.find("(")
    if start < 0:
        return {}
    return {k: v.replace("''", "'") for k, v in _OPTION_RE.findall(command[start:])}


@cache
def load_connection(path: Path) -> CapturedConnection:
    frontend = bytearray()
    backend = bytearray()
    for direction, _t, data in read_frames(path):
        (frontend if direction == "F" else backend).extend(data)

    conn = CapturedConnection(conn=int(path.stem.split("_")[1]))
    fpos, negotiations = _frontend_start(bytes(frontend))
    for mtype, body in _typed_messages(bytes(frontend), fpos):
        if mtype == b"Q":
            query = body.rstrip(b"\0").decode()
            if query.lstrip().upper().startswith("START_REPLICATION"):
                conn.start_replication = query
                conn.options = parse_options(query)

    # Each SSL/GSS request is answered with one unframed byte ('N' here: no TLS).
    in_copy_both = False
    in_stream = False
    seq = 0
    for mtype, body in _typed_messages(bytes(backend), negotiations):
        if mtype == b"W":
            in_copy_both = True
        elif mtype == b"d" and in_copy_both and body[:1] == b"w":
            _, start, end, send_time = _XLOGDATA_HEADER.unpack_from(body)
            payload = body[_XLOGDATA_HEADER.size :]
            kind = payload[:1]
            if kind == b"S":
                in_stream = True
            conn.messages.append(
                CapturedMessage(
                    conn=conn.conn,
                    seq=seq,
                    start_lsn=start,
                    end_lsn=end,
                    send_time=send_time,
                    in_stream=in_stream and kind not in (b"S", b"E"),
                    data=payload,
                )
            )
            seq += 1
            if kind == b"E":
                in_stream = False
        elif mtype in (b"c", b"E"):
            in_copy_both = False
    return conn


def capture_paths() -> list[Path]:
    return sorted(CAPTURES_DIR.glob("conn_*.raw"))


def pgoutput_connections() -> list[CapturedConnection]:
    """Every captured connection that received at least one pgoutput message."""
    conns = (load_connection(p) for p in capture_paths())
    return [c for c in conns if c.is_pgoutput and c.messages]
