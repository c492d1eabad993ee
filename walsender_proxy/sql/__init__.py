"""SQL over the lake: PostgreSQL catalog emulation, rewriting to DuckDB, and execution."""
