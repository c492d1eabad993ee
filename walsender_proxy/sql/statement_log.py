"""``log_statement``: which statements a session logs, decided as PostgreSQL's
GetCommandLogLevel (utility.c) decides it, and the text of a Bind's parameters as
errdetail_params shows them (each value through its type's output function)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pglast import ast

from decoding.pgtypes import type_by_oid
from decoding.pgvalues import binary_decoder, text_decoder, text_encoder

#: log_statement's levels, each including the ones before it.
_ORDER = {"none": 0, "ddl": 1, "mod": 2, "all": 3}

#: Statements logged only with log_statement = all (everything else not listed as a data
#: modification below is DDL).
_ALL = frozenset({
    "TransactionStmt", "DeclareCursorStmt", "ClosePortalStmt", "FetchStmt", "DeallocateStmt",
    "DoStmt", "NotifyStmt", "ListenStmt", "UnlistenStmt", "LoadStmt", "CallStmt", "VacuumStmt",
    "VariableSetStmt", "VariableShowStmt", "DiscardStmt", "LockStmt", "ConstraintsSetStmt",
    "CheckPointStmt", "ReindexStmt", "ReturnStmt", "PLAssignStmt",
})  # fmt: skip
_MOD = frozenset({"InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt", "TruncateStmt"})


def command_level(node: Any, prepared: Callable[[str], Any | None]) -> str:
    """``ddl``, ``mod`` or ``all``: the least log_statement that logs ``node``.
    ``prepared`` finds a prepared statement's node by name (for EXECUTE)."""
    kind = type(node).__name__
    if kind in _MOD:
        return "mod"
    if kind == "SelectStmt":
        return "ddl" if node.intoClause is not None else "all"
    if kind == "CopyStmt":
        return "mod" if node.is_from else "all"
    if kind == "PrepareStmt":
        return command_level(node.query, prepared)
    if kind == "ExecuteStmt":
        target = prepared(node.name)
        return command_level(target, prepared) if target is not None else "all"
    if kind == "ExplainStmt":
        analyze = any(
            isinstance(o, ast.DefElem) and o.defname == "analyze" and _true(o.arg) for o in node.options or ()
        )
        return command_level(node.query, prepared) if analyze else "all"
    if kind in _ALL or node is None:
        return "all"
    return "ddl"


def _true(arg: Any) -> bool:
    if arg is None:
        return True
    value = getattr(arg, "sval", None) or getattr(arg, "ival", None) or getattr(arg, "boolval", None)
    if isinstance(value, str):
        return value.lower() in ("true", "on", "1", "yes")
    return bool(getattr(value, "boolval", value))


def logs(setting: str, nodes: Sequence[Any], prepared: Callable[[str], Any | None]) -> bool:
    """check_log_statement: whether any of ``nodes`` is logged under ``setting``."""
    wanted = _ORDER.get(setting, 0)
    if wanted == 0:
        return False
    if wanted == 3:
        return True
    return any(_ORDER[command_level(n, prepared)] <= wanted for n in nodes)


def parameter_texts(
    types: Sequence[int], formats: Sequence[int], params: Sequence[bytes | None], date_order: str = "MDY"
) -> list[str | None]:
    """Each Bind value as its type's output function prints it (BuildParamLogString): a
    text value read (a date in the session's DateStyle order, ``date_order``) and printed
    again (``007`` of an int4 is ``7``), a binary one printed; a value of no declared type
    as it came."""
    out: list[str | None] = []
    for i, raw in enumerate(params):
        if raw is None:
            out.append(None)
            continue
        oid = types[i] if i < len(types) else 0
        fmt = formats[0] if len(formats) == 1 else (formats[i] if i < len(formats) else 0)
        if not oid or (oid in (25, 1043, 705) and fmt == 0):
            out.append(raw.decode("utf-8", "replace"))
            continue
        ctype = type_by_oid(oid)
        decode = binary_decoder(ctype) if fmt == 1 else text_decoder(ctype, date_order)
        text = text_encoder(ctype)(decode([raw]))[0]
        out.append(None if text is None else text.decode("utf-8", "replace"))
    return out
