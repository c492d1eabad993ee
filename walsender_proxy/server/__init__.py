"""The server: asyncio transport, connection state machine, authentication and sessions."""
