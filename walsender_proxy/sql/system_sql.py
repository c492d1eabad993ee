"""``ALTER SYSTEM SET/RESET`` and ``pg_reload_conf()``: the SQL side of the server's
``postgresql.auto.conf`` (:mod:`walsender_proxy.backend.system_settings`).

The statement is checked as PostgreSQL 15 checks it, in its order: no transaction block
(25001), a superuser (42501: GRANT ALTER SYSTEM ON PARAMETER is refused by the proxy, so
nobody else holds the privilege), the name (42704, 55P02, or 0A000 for a setting the
proxy does not honour) and the value (22023). It writes the file and applies nothing:
the server applies it when it reloads its configuration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pglast import ast, enums

from decoding.errors import PgError
from walsender_proxy.backend.outcomes import Done
from walsender_proxy.backend.system_settings import alter_system_value
from walsender_proxy.sql.ddl_names import unsupported
from walsender_proxy.sql.statement_nodes import set_value_text

if TYPE_CHECKING:
    from walsender_proxy.sql.services import SessionState


def alter_system(ex: SessionState, node: ast.AlterSystemStmt, *, in_block: bool) -> Done:
    system = ex.services.server.system
    if system is None:  # (an executor without a server: the tests of the SQL layer)
        raise unsupported("ALTER SYSTEM")
    if in_block:
        raise PgError("25001", "ALTER SYSTEM cannot run inside a transaction block")
    s = node.setstmt
    K = enums.VariableSetKind
    reset_all = s.kind == K.VAR_RESET_ALL
    if not ex.who().superuser:
        if reset_all:
            raise PgError("42501", "permission denied to perform ALTER SYSTEM RESET ALL")
        raise PgError("42501", f'permission denied to set parameter "{s.name}"')
    if reset_all:
        system.reset_all()
        return Done("ALTER SYSTEM")
    value = set_value_text(s.name, s.args or ()) if s.kind == K.VAR_SET_VALUE else None
    alter_system_value(system.rules, s.name, value)
    system.alter(s.name, value)
    return Done("ALTER SYSTEM")
