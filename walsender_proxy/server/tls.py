"""The server's TLS: its SSLContext as PostgreSQL 15's be_tls_init makes it from the
settings ssl_min_protocol_version, ssl_max_protocol_version and ssl_ciphers, and the
server certificate's hash for SCRAM channel binding (tls-server-end-point)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import ssl

from decoding.errors import PgError
from walsender_proxy.backend.settings import canonical_value

#: ssl_min/max_protocol_version → the TLS version (PostgreSQL 15's enum values).
TLS_VERSIONS = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
DEFAULT_SSL_CIPHERS = "HIGH:MEDIUM:+3DES:!aNULL"


def make_ssl_context(
    cert: str,
    key: str,
    *,
    min_protocol_version: str = "TLSv1.2",
    max_protocol_version: str = "",
    ciphers: str = DEFAULT_SSL_CIPHERS,
) -> ssl.SSLContext:
    """The server's TLS context as PostgreSQL 15's be_tls_init makes it: the protocol range
    of ssl_min/max_protocol_version ('' max: no limit), the cipher list of ssl_ciphers (TLS
    1.2 and older; TLS 1.3's suites are OpenSSL's defaults, as in PostgreSQL), no session
    tickets, no compression. A value PostgreSQL would refuse at start-up is a PgError with
    its words (the values were checked as settings already: :func:`check_tls_settings`)."""
    check_tls_settings(min_protocol_version, max_protocol_version)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = TLS_VERSIONS[canonical_value("ssl_min_protocol_version", min_protocol_version)]
    top = canonical_value("ssl_max_protocol_version", max_protocol_version)
    if top:
        ctx.maximum_version = TLS_VERSIONS[top]
    try:
        ctx.set_ciphers(ciphers)
    except ssl.SSLError:
        raise PgError("F0000", "could not set the cipher list (no valid ciphers available)") from None
    ctx.options |= ssl.OP_NO_TICKET | ssl.OP_NO_COMPRESSION
    ctx.num_tickets = 0  # (TLS 1.3's tickets too, as PostgreSQL's SSL_CTX_set_num_tickets)
    try:
        ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as e:  # (OSError: a missing file; its text is Python's)
        reason = e.strerror if not isinstance(e, ssl.SSLError) and e.strerror else ssl_error_text(e)
        raise PgError(
            "F0000", f'could not load server certificate file "{cert}" or its key "{key}": {reason}'
        ) from None
    return ctx


def check_tls_settings(min_protocol_version: str, max_protocol_version: str) -> None:
    """ssl_min_protocol_version and ssl_max_protocol_version as PostgreSQL 15 checks them
    when it starts: each value against its list (22023, with the list as HINT), then the
    range (min above max refused). (ssl_ciphers is checked when the context is made.)"""
    low = canonical_value("ssl_min_protocol_version", min_protocol_version)
    high = canonical_value("ssl_max_protocol_version", max_protocol_version)
    if high and TLS_VERSIONS[low] > TLS_VERSIONS[high]:
        raise PgError(
            "F0000", "could not set SSL protocol version range",
            detail='"ssl_min_protocol_version" cannot be higher than "ssl_max_protocol_version"',
        )  # fmt: skip


def certificate_hash(cert_file: str) -> bytes | None:
    """tls-server-end-point channel-binding data of the server certificate (the first one
    in ``cert_file``), as PostgreSQL's ``be_tls_get_certificate_hash`` makes it: the DER
    certificate hashed with its signature's hash algorithm, SHA-256 when that is MD5 or
    SHA-1 (RFC 5929 §4.1). None when the algorithm has no hash (Ed25519, …): then the -PLUS
    mechanism is not offered."""
    from scramp.core import CBindData  # scramp's own tls-server-end-point hash
    from scramp.utils import ScramException

    with open(cert_file, encoding="ascii", errors="replace") as f:
        pem = f.read()
    start = pem.find("-----BEGIN CERTIFICATE-----")
    end = pem.find("-----END CERTIFICATE-----", start)
    if start < 0 or end < 0:
        return None
    der = ssl.PEM_cert_to_DER_cert(pem[start : end + len("-----END CERTIFICATE-----")])
    try:
        return bytes(CBindData.from_der(der))
    except (ScramException, ValueError, KeyError):
        return None


async def peek_client_hello(
    transport: asyncio.BaseTransport, timeout: float
) -> tuple[socket.socket, bytes] | None:
    """The client's first TLS record (its ClientHello), read without taking it from the
    connection, and a duplicate of the connection's socket that outlives a failed TLS
    start (for :func:`handshake_alert`'s bytes). The transport must not be reading (paused)
    while this waits. None: the client closed or said nothing in time (or no socket)."""
    raw = transport.get_extra_info("socket")
    if raw is None:
        return None
    sock = socket.socket(fileno=os.dup(raw.fileno()))
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        while True:
            try:
                data = sock.recv(5 + 16384, socket.MSG_PEEK)
            except BlockingIOError:
                data = None
            if data == b"":
                break  # closed
            if data is not None and len(data) >= 5:
                if data[:2] != b"\x16\x03":
                    return sock, data  # not a TLS handshake record: OpenSSL fails on its header
                if len(data) >= 5 + min(int.from_bytes(data[3:5], "big"), 16384):
                    return sock, data
            ready: asyncio.Future[None] = loop.create_future()
            loop.add_reader(sock.fileno(), _wake, ready)
            try:
                await asyncio.wait_for(ready, max(0.0, deadline - loop.time()))
            except TimeoutError:
                break
            finally:
                loop.remove_reader(sock.fileno())
    except OSError:
        pass
    sock.close()
    return None


def _wake(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)


def handshake_alert(ctx: ssl.SSLContext, client_hello: bytes) -> bytes:
    """What OpenSSL answers ``client_hello`` with when the handshake cannot go on (an alert:
    no TLS version or cipher in common, …), so that the client hears why, as from
    PostgreSQL. asyncio drops these bytes when a TLS start fails; this plays the ClientHello
    again through an SSLObject of the same context to get them."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    probe = ctx.wrap_bio(incoming, outgoing, server_side=True)
    incoming.write(client_hello)
    with contextlib.suppress(ssl.SSLError):
        probe.do_handshake()
    return outgoing.read()


def ssl_error_text(e: BaseException) -> str:
    """OpenSSL's reason, as PostgreSQL logs it (``unsupported protocol``)."""
    text = str(e)
    m = re.search(r"\] (.*?)(?: \(_ssl\.c:\d+\))?$", text)
    return m.group(1) if m else text
