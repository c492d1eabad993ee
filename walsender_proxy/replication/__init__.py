"""The replication sub-protocol: the WalSender command grammar (``commands``).

Kept apart from the wire codec and the session so that what a client *said* (a parsed,
validated command) is decided in one place, the way PostgreSQL keeps ``repl_scanner.l`` /
``repl_gram.y`` apart from ``walsender.c``.
"""
