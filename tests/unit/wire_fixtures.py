"""Byte fixtures from the relay captures of a real PostgreSQL 15 (``shared/protocol/captures``).

The splitter here is deliberately independent of ``walsender_proxy.protocol``: it knows
only the framing rules (untyped start-up packets, then type byte + length) so that the
codec is checked against the captures, not against itself.

Capture file layout: frames of ``[dir: 1 byte 'F'|'B'][t: float64 LE][len: uint32 LE][data]``;
F is frontend -> backend.  ``data`` is one TCP read, so messages span frames freely.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CAPTURES_DIR = Path(os.environ.get("WALSENDER_PROXY_CAPTURES", "/work/shared/protocol/captures"))

_FRAME_HEADER = struct.Struct("<cdI")
_SSL_REQUEST_CODE = 80877103
_GSSENC_REQUEST_CODE = 80877104
_CANCEL_REQUEST_CODE = 80877102


@dataclass(frozen=True, slots=True)
class RawMessage:
    """One message as it was on the wire.

    ``type_code`` is None for untyped packets (start-up packets, and the one-byte answer
    to SSLRequest/GSSENCRequest); ``payload`` excludes type byte and length word.
    """

    type_code: bytes | None
    raw: bytes
    payload: bytes


@dataclass(frozen=True, slots=True)
class Capture:
    conn: int
    frontend_chunks: tuple[bytes, ...]
    backend_chunks: tuple[bytes, ...]

    @property
    def frontend(self) -> bytes:
        return b"".join(self.frontend_chunks)

    @property
    def backend(self) -> bytes:
        return b"".join(self.backend_chunks)

    @property
    def frontend_messages(self) -> list[RawMessage]:
        return split_frontend(self.frontend)

    @property
    def backend_messages(self) -> list[RawMessage]:
        requests = sum(
            1
            for m in self.frontend_messages
            if m.type_code is None and _code(m.payload) in (_SSL_REQUEST_CODE, _GSSENC_REQUEST_CODE)
        )
        return split_backend(self.backend, encryption_answers=requests)


def _code(payload: bytes) -> int:
    return struct.unpack_from("!I", payload, 0)[0]


def read_frames(path: Path) -> list[tuple[str, float, bytes]]:
    raw = path.read_bytes()
    frames = []
    pos = 0
    while pos < len(raw):
        direction, t, length = _FRAME_HEADER.unpack_from(raw, pos)
        pos += _FRAME_HEADER.size
        frames.append((direction.decode(), t, raw[pos : pos + length]))
        pos += length
    if pos != len(raw):
        raise ValueError(f"{path}: truncated frame")
    return frames


def capture_paths() -> list[Path]:
    return sorted(CAPTURES_DIR.glob("conn_*.raw"))


@cache
def load_capture(path: Path) -> Capture:
    frames = read_frames(path)
    return Capture(
        conn=int(path.stem.split("_")[1]),
        frontend_chunks=tuple(d for direction, _, d in frames if direction == "F"),
        backend_chunks=tuple(d for direction, _, d in frames if direction == "B"),
    )


def _typed(stream: bytes, pos: int, out: list[RawMessage]) -> None:
    while pos < len(stream):
        if pos + 5 > len(stream):
            raise ValueError(f"truncated message header at {pos}")
        (length,) = struct.unpack_from("!i", stream, pos + 1)
        end = pos + 1 + length
        if length < 4 or end > len(stream):
            raise ValueError(f"bad or truncated message at {pos}")
        out.append(RawMessage(stream[pos : pos + 1], stream[pos:end], stream[pos + 5 : end]))
        pos = end


def split_frontend(stream: bytes) -> list[RawMessage]:
    """Untyped packets until the StartupMessage (or CancelRequest), typed messages after."""
    out: list[RawMessage] = []
    pos = 0
    while pos < len(stream):
        (length,) = struct.unpack_from("!i", stream, pos)
        end = pos + length
        payload = stream[pos + 4 : end]
        out.append(RawMessage(None, stream[pos:end], payload))
        pos = end
        code = _code(payload)
        if code == _CANCEL_REQUEST_CODE:
            return out
        if code not in (_SSL_REQUEST_CODE, _GSSENC_REQUEST_CODE):
            break
    _typed(stream, pos, out)
    return out


def split_backend(stream: bytes, encryption_answers: int = 0) -> list[RawMessage]:
    """The first ``encryption_answers`` bytes are single-byte answers ('S', 'N' or 'G')."""
    out: list[RawMessage] = []
    pos = 0
    for _ in range(encryption_answers):
        if stream[pos : pos + 1] == b"E":  # a server refusing the request outright
            break
        out.append(RawMessage(None, stream[pos : pos + 1], stream[pos : pos + 1]))
        pos += 1
    _typed(stream, pos, out)
    return out


def all_captures() -> list[Capture]:
    return [load_capture(p) for p in capture_paths()]
