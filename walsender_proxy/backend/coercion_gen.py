"""Regenerate :mod:`walsender_proxy.backend.coercion_data` from a real PostgreSQL 15.

A column's DEFAULT expression is analysed as PostgreSQL analyses it (``cookDefault``): which
binary operator ``a + b`` resolves to, which implicit casts its arguments get, and how the
result is coerced to the column (a cast function, a binary relabel, or I/O). Those choices
decide what ``pg_get_expr`` prints, down to its parentheses, so they are dumped from the
real server rather than re-derived: the operator each pair of argument types resolves to
(or the error PostgreSQL raises), the cast pathways between the types the lake stores, and
the signatures of pg_catalog's functions (which calls exist at all)::

    python -m walsender_proxy.backend.coercion_gen "host=... port=... user=postgres" \\
        > walsender_proxy/backend/coercion_data.py
"""

from __future__ import annotations

import sys
from typing import Any

#: The types a default expression may compute with (``unknown``: a quoted literal).
TYPES = (
    "bool",
    "int2",
    "int4",
    "int8",
    "numeric",
    "float4",
    "float8",
    "text",
    "varchar",
    "bpchar",
    "name",
    "bytea",
    "date",
    "time",
    "timestamp",
    "timestamptz",
    "interval",
    "uuid",
    "json",
    "jsonb",
)
OPERATORS = ("+", "-", "*", "/", "%", "||")
#: Comparison and pattern operators (a CHECK constraint's): dumped as ``COMPARISONS``.
COMPARISONS = ("=", "<>", "<", ">", "<=", ">=", "~~", "!~~")
#: Types whose values can be written with a type modifier, and so get a length coercion.
TYPMOD_TYPES = ("varchar", "bpchar", "numeric", "time", "timestamp", "timestamptz", "interval")


def generate(dsn: str) -> str:
    import psycopg

    out = ['"""PostgreSQL 15 operators and casts dumped by ``coercion_gen`` — generated, do not edit."""', ""]
    operators: dict[tuple[str, str, str], Any] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        ver = conn.execute("SHOW server_version").fetchone()
        out.insert(1, f"# source: PostgreSQL {ver[0] if ver else '?'}")
        for op in (*OPERATORS, *COMPARISONS):
            for left in (*TYPES, "unknown"):
                for right in (*TYPES, "unknown"):
                    lhs = "NULL" if left == "unknown" else f"NULL::{left}"
                    rhs = "NULL" if right == "unknown" else f"NULL::{right}"
                    try:
                        with conn.transaction():
                            conn.execute(f"CREATE TEMP VIEW wpx_op AS SELECT ({lhs} {op} {rhs}) AS x")
                            # (the view's stored tree names the operator: dependencies on
                            # built-in objects are not recorded in pg_depend)
                            row = conn.execute(
                                """SELECT l.typname, r.typname, res.typname FROM pg_operator o
                                   JOIN pg_type l ON l.oid = o.oprleft JOIN pg_type r ON r.oid = o.oprright
                                   JOIN pg_type res ON res.oid = o.oprresult
                                   WHERE o.oid = (SELECT substring(ev_action::text FROM ':opno ([0-9]+)')::oid
                                                  FROM pg_rewrite WHERE ev_class = 'wpx_op'::regclass)"""
                            ).fetchone()
                            conn.execute("DROP VIEW wpx_op")
                        operators[(op, left, right)] = tuple(row) if row else None
                    except psycopg.Error as e:
                        operators[(op, left, right)] = ("error", e.sqlstate, e.diag.message_primary, e.diag.message_hint)
        names = "', '".join(TYPES)
        casts = {}
        for s, t, context, method in conn.execute(
            f"""SELECT s.typname, t.typname, c.castcontext, c.castmethod FROM pg_cast c
                JOIN pg_type s ON s.oid = c.castsource JOIN pg_type t ON t.oid = c.casttarget
                WHERE s.typname IN ('{names}') AND t.typname IN ('{names}') AND s.oid <> t.oid"""
        ).fetchall():
            casts[(s, t)] = (context, {"f": "func", "b": "relabel", "i": "io"}[method])
        categories = dict(
            conn.execute(f"SELECT typname, typcategory FROM pg_type WHERE typname IN ('{names}')").fetchall()
        )
        implicit_out = sorted(
            conn.execute(
                f"""SELECT s.typname, t.typname FROM pg_cast c
                    JOIN pg_type s ON s.oid = c.castsource JOIN pg_type t ON t.oid = c.casttarget
                    WHERE s.typname IN ('{names}') AND t.typname NOT IN ('{names}') AND c.castcontext = 'i'"""
            ).fetchall()
        )
        type_functions = sorted(
            r[0] for r in conn.execute(
                """SELECT DISTINCT t.typname FROM pg_type t JOIN pg_proc p ON p.proname = t.typname
                   WHERE t.typnamespace = 'pg_catalog'::regnamespace"""
            ).fetchall()
        )
        functions: dict[str, list[tuple[tuple[str, ...], str | None, int]]] = {}
        for name, args, variadic, defaults in conn.execute(
            """SELECT p.proname,
                      ARRAY(SELECT t.typname FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY a(oid, n)
                            JOIN pg_type t ON t.oid = a.oid ORDER BY a.n),
                      (SELECT typname FROM pg_type WHERE oid = p.provariadic), p.pronargdefaults
               FROM pg_proc p WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.prokind <> 'p'
               ORDER BY p.proname, p.oid"""
        ).fetchall():
            functions.setdefault(name, []).append((tuple(args), variadic, defaults))
        kinds: dict[str, str] = {}
        for name, kind in conn.execute(
            """SELECT proname, string_agg(DISTINCT k, '' ORDER BY k)
               FROM (SELECT proname, CASE WHEN prokind IN ('a', 'w') THEN prokind::text
                                          WHEN proretset THEN 'r' ELSE provolatile::text END AS k
                     FROM pg_proc WHERE pronamespace = 'pg_catalog'::regnamespace AND prokind <> 'p') p
               GROUP BY proname ORDER BY proname"""
        ).fetchall():
            kinds[name] = kind
        operator_names = sorted(
            r[0] for r in conn.execute("SELECT DISTINCT oprname FROM pg_operator WHERE oid < 16384").fetchall()
        )
    out.append("#: (operator, left type, right type) → (oprleft, oprright, oprresult) of the operator")
    out.append("#: PostgreSQL 15 resolves it to; ('error', sqlstate, message, hint) when it refuses.")
    out.append("OPERATORS = {")
    out.extend(f"    {k!r}: {v!r}," for k, v in operators.items() if k[0] in OPERATORS)
    out.append("}")
    out.append("")
    out.append("#: The same for the comparison and LIKE operators (``~~``, ``!~~``).")
    out.append("COMPARISONS = {")
    out.extend(f"    {k!r}: {v!r}," for k, v in operators.items() if k[0] in COMPARISONS)
    out.append("}")
    out.append("")
    out.append("#: (source, target) → (castcontext, how: func | relabel | io), from pg_cast.")
    out.append("CASTS = {")
    out.extend(f"    {k!r}: {v!r}," for k, v in sorted(casts.items()))
    out.append("}")
    out.append("")
    out.append("#: pg_type.typcategory ('S' string types take any type by I/O in assignment).")
    out.append(f"CATEGORIES = {categories!r}")
    out.append("")
    out.append(f"TYPMOD_TYPES = {TYPMOD_TYPES!r}")
    out.append("")
    out.append("#: Implicit casts (pg_cast) from those types to types outside them: (source, target).")
    out.append(f"IMPLICIT_OUT = frozenset({[tuple(r) for r in implicit_out]!r})")
    out.append("")
    out.append("#: Type names that are also function names: a one-argument call of one may be a cast.")
    out.append(f"TYPE_FUNCTIONS = frozenset({type_functions!r})")
    out.append("")
    out.append("#: pg_catalog's functions (pg_proc, procedures aside): name → its overloads, each")
    out.append("#: (argument type names, the VARIADIC element type or None, how many have defaults).")
    out.append("FUNCTIONS = {")
    out.extend(f"    {k!r}: {tuple(v)!r}," for k, v in functions.items())
    out.append("}")
    out.append("")
    out.append("#: What the overloads of each pg_catalog function name are, one letter per kind present:")
    out.append("#: a aggregate, w window, r set-returning, else provolatile (i immutable, s stable,")
    out.append("#: v volatile).")
    out.append("FUNCTION_KINDS = {")
    out.extend(f"    {k!r}: {v!r}," for k, v in kinds.items())
    out.append("}")
    out.append("")
    out.append("#: Every operator name pg_operator has (an expression with another is 42883).")
    out.append(f"OPERATOR_NAMES = frozenset({operator_names!r})")
    out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(generate(sys.argv[1]))
