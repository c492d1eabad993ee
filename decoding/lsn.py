"""Log sequence numbers.

LSNs are plain ``int`` byte positions in the change log so that hot paths pay nothing for
them; these helpers give them PostgreSQL's ``X/Y`` face wherever a human or a client sees one.
"""

from __future__ import annotations

INVALID_LSN = 0
#: The first record of a fresh log sits here, so that ``0/0`` stays free to mean "invalid"
#: exactly as ``InvalidXLogRecPtr`` does in PostgreSQL.
FIRST_LSN = 0x0100_0000


def format_lsn(lsn: int) -> str:
    """Render an LSN as PostgreSQL does (``%X/%X``)."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFF_FFFF:X}"


def parse_lsn(text: str) -> int:
    """Parse ``X/Y``; raises ValueError with PostgreSQL's wording on bad input."""
    hi, sep, lo = text.strip().partition("/")
    if not sep or not hi or not lo or len(hi) > 8 or len(lo) > 8:
        raise ValueError(f'invalid input syntax for type pg_lsn: "{text}"')
    try:
        return (int(hi, 16) << 32) | int(lo, 16)
    except ValueError:
        raise ValueError(f'invalid input syntax for type pg_lsn: "{text}"') from None
