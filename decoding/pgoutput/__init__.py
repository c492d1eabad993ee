"""pgoutput, PostgreSQL's built-in logical replication output plugin.

Split as in PostgreSQL: ``proto`` is the message codec (proto.c), every message's bytes one
message at a time; ``rows`` writes the row messages (Insert, Update, Delete) of a whole Arrow
slice at once, the same bytes; the plugin logic that decides what to send (pgoutput.c) lives
beside them and writes no bytes itself.  The codec's public names are re-exported here
because every consumer needs them; ``rows`` is imported by name, since it needs Arrow.
"""

from decoding.pgoutput.proto import *  # noqa: F403
from decoding.pgoutput.proto import __all__ as __all__
