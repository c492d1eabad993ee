"""UTF-8 validation with PostgreSQL's error wording (report_invalid_encoding)."""

from __future__ import annotations

from decoding.errors import PgError


def _mblen(b: int) -> int:
    if b & 0x80 == 0:
        return 1
    if b & 0xE0 == 0xC0:
        return 2
    if b & 0xF0 == 0xE0:
        return 3
    if b & 0xF8 == 0xF0:
        return 4
    return 1


def invalid_utf8_error(data: bytes, pos: int) -> PgError:
    n = min(_mblen(data[pos]), len(data) - pos, 8)
    shown = " ".join(f"0x{b:02x}" for b in data[pos : pos + n])
    return PgError("22021", f'invalid byte sequence for encoding "UTF8": {shown}')


def first_invalid(data: bytes) -> int | None:
    """Offset of the first byte PostgreSQL's UTF-8 verifier rejects (NUL included)."""
    nul = data.find(b"\x00")
    try:
        data.decode("utf-8")
        bad = None
    except UnicodeDecodeError as e:
        bad = e.start
    if nul >= 0 and (bad is None or nul < bad):
        return nul
    return bad


def check_utf8(data: bytes) -> None:
    pos = first_invalid(data)
    if pos is not None:
        raise invalid_utf8_error(data, pos)


def decode_utf8(data: bytes) -> str:
    pos = first_invalid(data)
    if pos is not None:
        raise invalid_utf8_error(data, pos)
    return data.decode("utf-8")
