"""pgoutput, PostgreSQL's built-in logical replication output plugin.

Split as in PostgreSQL: ``proto`` is the message codec (proto.c); the plugin
logic that decides what to send (pgoutput.c) lives beside it.  The codec's
public names are re-exported here because every consumer needs them.
"""

from decoding.pgoutput.proto import *  # noqa: F403
from decoding.pgoutput.proto import __all__ as __all__
