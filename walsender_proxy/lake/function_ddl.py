"""Function DDL as pure functions over the catalog: CREATE [OR REPLACE] FUNCTION (the checks
PostgreSQL 15's ``ProcedureCreate`` makes against the function it replaces), DROP FUNCTION
(with the functions whose SQL-standard bodies use the one dropped), and the members of a
schema DROP SCHEMA removes.

The lake knows no SQL: a function arrives analysed by the SQL layer (its argument and
result types as OIDs, its body as text) and is kept as a :class:`decoding.catalog.Function`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from decoding.catalog import Catalog, CatalogOp, Function
from walsender_proxy.lake import view_ddl
from walsender_proxy.lake.errors import LakeError

Alloc = Callable[[], int]
RECORD_OID = 2249
#: How a function is named in messages (PostgreSQL's ``format_procedure``: ``f(integer)``,
#: schema-qualified when not visible); the SQL layer knows type names, the lake does not.
Describe = Callable[[Function], str]


def overloads(cat: Catalog, schema: str, name: str) -> list[Function]:
    """The functions of that name in that schema, oldest first."""
    return sorted((fn for fn in cat.functions.values() if fn.schema == schema and fn.name == name), key=lambda fn: fn.oid)


def same_signature(cat: Catalog, schema: str, name: str, input_types: Sequence[int]) -> Function | None:
    for fn in overloads(cat, schema, name):
        if fn.input_types == tuple(input_types):
            return fn
    return None


def _out_columns(fn: Function) -> list[tuple[str, int]]:
    return [(a.name, a.type_oid) for a in fn.args if a.mode in ("o", "b", "t")]


def create_function(
    cat: Catalog, alloc: Alloc, new: Function, or_replace: bool, describe: Describe
) -> tuple[list[CatalogOp], Function]:
    """``new`` with its OID still to give (0); OR REPLACE keeps the OID of the function of the
    same argument types, as PostgreSQL's ProcedureCreate does, after its checks."""
    if new.schema not in cat.schemas:
        raise LakeError("3F000", f'schema "{new.schema}" does not exist')
    old = same_signature(cat, new.schema, new.name, new.input_types)
    if old is None:
        fn = replace(new, oid=alloc())
        return [{"op": "put_function", "function": fn.to_json()}], fn
    if not or_replace:
        raise LakeError("42723", f'function "{new.name}" already exists with same argument types')
    hint = f"Use DROP FUNCTION {describe(old)} first."
    if old.rettype != new.rettype or old.retset != new.retset:
        raise LakeError("42P13", "cannot change return type of existing function", hint=hint)
    if new.rettype == RECORD_OID and _out_columns(old) != _out_columns(new):
        raise LakeError(
            "42P13",
            "cannot change return type of existing function",
            detail="Row type defined by OUT parameters is different.",
            hint=hint,
        )
    for was, now in zip(old.input_args, new.input_args, strict=True):
        if was.name and was.name != now.name:
            raise LakeError("42P13", f'cannot change name of input parameter "{was.name}"', hint=hint)
    if sum(a.default is not None for a in new.args) < sum(a.default is not None for a in old.args):
        raise LakeError("42P13", "cannot remove parameter defaults from existing function", hint=hint)
    fn = replace(new, oid=old.oid)
    return [{"op": "put_function", "function": fn.to_json()}], fn


def alter_function(cat: Catalog, alloc: Alloc, fn: Function) -> tuple[list[CatalogOp], None]:
    if fn.oid not in cat.functions:
        raise LakeError("42883", f"function with OID {fn.oid} does not exist")
    return [{"op": "put_function", "function": fn.to_json()}], None


def dependents(cat: Catalog, oids: Sequence[int], dropped: set[int] | None = None) -> list[Function]:
    """The functions whose SQL-standard bodies use any of ``oids`` (relations or functions),
    transitively, not themselves among ``dropped``."""
    found, _ = view_ddl.dependency_lines(cat, oids, (), dropped)
    return [f for f in found if isinstance(f, Function)]


def drop_functions(
    cat: Catalog, alloc: Alloc, oids: Sequence[int], cascade: bool, search_path: Sequence[str]
) -> tuple[list[CatalogOp], list[str]]:
    """DROP FUNCTION of ``oids`` (resolved by the caller, all dropped together); 2BP01 while
    another function's SQL-standard body uses one, unless CASCADE (returned: the NOTICE's
    lines)."""
    deps, lines = view_ddl.dependency_lines(cat, oids, search_path)
    if deps and not cascade:
        what = view_ddl.described(cat.functions[oids[0]], search_path)
        raise LakeError(
            "2BP01",
            f"cannot drop {what} because other objects depend on it" if len(oids) == 1
            else "cannot drop desired object(s) because other objects depend on them",
            detail="\n".join(lines),
            hint="Use DROP ... CASCADE to drop the dependent objects too.",
        )  # fmt: skip
    ops: list[CatalogOp] = [view_ddl.drop_op(d) for d in reversed(deps)]
    ops += [{"op": "drop_function", "oid": o} for o in oids]
    return ops, [view_ddl.described(d, search_path) for d in deps]


def schema_functions(cat: Catalog, schema: str) -> list[Function]:
    """The functions DROP SCHEMA removes with the schema."""
    return sorted((fn for fn in cat.functions.values() if fn.schema == schema), key=lambda fn: fn.oid)
