"""What every backend of the server is built on, whether it serves SQL or a walsender:
its connection's I/O, its settings, the outcomes of its statements, the roles it runs as,
the snapshots it can export, PostgreSQL 15's catalog data, and the interfaces of the
services the server lends it (slots, sessions). Imports nothing above it: ``sql``,
``replication`` and ``server`` build on this, never the other way (docs/architecture.md)."""
