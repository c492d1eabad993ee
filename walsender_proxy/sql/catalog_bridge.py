"""Provisional: user tables only (replaced by the pg_catalog rewriter)."""

from __future__ import annotations

from typing import Any

from pglast import ast, parse_sql
from pglast.stream import RawStream

from decoding.errors import PgError


def rewrite_and_register(engine: Any, sql: str, resolve: Any, tx: Any) -> str:
    stmt = parse_sql(sql)[0].stmt
    subs: dict[str, str] = {}

    def visit(n: Any) -> Any:
        if isinstance(n, ast.RangeVar):
            got = resolve(n.schemaname, n.relname)
            if got is None:
                raise PgError("42P01", f'relation "{n.relname}" does not exist')
            key = f"__sub_{len(subs)}__"
            subs[key] = got
            alias = n.alias.aliasname if n.alias else n.relname
            return ast.RangeVar(relname=key, inh=True, relpersistence="p", alias=ast.Alias(aliasname=alias))
        if isinstance(n, ast.FuncCall):
            from walsender_proxy.sql.functions import PREFIX, SERVER_FUNCTIONS

            fname = n.funcname[-1].sval
            if fname in SERVER_FUNCTIONS:
                n.funcname = (ast.String(sval=PREFIX + fname),)
                pid = ast.A_Const(isnull=False, val=ast.Integer(ival=engine.ex.backend_pid))
                n.args = (pid, *(n.args or ()))
        if isinstance(n, ast.Node):
            for name in n:
                v = getattr(n, name)
                nv = visit(v)
                if nv is not v:
                    setattr(n, name, nv)
            return n
        if isinstance(n, tuple):
            return tuple(visit(x) for x in n)
        return n

    visit(stmt)
    out = RawStream()(stmt)
    for key, sub in subs.items():
        out = out.replace(key, f"({sub})")
    return out
