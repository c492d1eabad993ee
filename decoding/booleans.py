"""PostgreSQL's ``parse_bool`` (utils/adt/bool.c), for settings and for the options of an
output plugin that reads them with it (test_decoding)."""

from __future__ import annotations

__all__ = ["parse_bool"]


def parse_bool(text: str) -> bool | None:
    """PostgreSQL's parse_bool: any unique prefix of true/false/yes/no, on/off (two
    letters at least), 1 or 0, in any case; None if it is none of them."""
    t = text.lower()
    if not t:
        return None
    for word, value in (("true", True), ("false", False), ("yes", True), ("no", False)):
        if word.startswith(t):
            return value
    if len(t) >= 2 and "on".startswith(t):
        return True
    if len(t) >= 2 and "off".startswith(t):
        return False
    return {"1": True, "0": False}.get(t)
