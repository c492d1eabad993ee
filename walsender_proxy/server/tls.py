"""The server's TLS: its SSLContext as PostgreSQL 15's be_tls_init makes it from the
settings ssl_min_protocol_version, ssl_max_protocol_version and ssl_ciphers, and the
server certificate's hash for SCRAM channel binding (tls-server-end-point)."""

from __future__ import annotations

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
    check_tls_settings(min_protocol_version, max_protocol_version, ciphers)
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
    ctx.load_cert_chain(cert, key)
    return ctx


def check_tls_settings(min_protocol_version: str, max_protocol_version: str, ciphers: str) -> None:
    """ssl_min_protocol_version, ssl_max_protocol_version and ssl_ciphers as PostgreSQL 15
    checks them when it starts: each enum value against its list (22023, with the list as
    HINT), then the range (min above max refused)."""
    low = canonical_value("ssl_min_protocol_version", min_protocol_version)
    high = canonical_value("ssl_max_protocol_version", max_protocol_version)
    if high and TLS_VERSIONS[low] > TLS_VERSIONS[high]:
        raise PgError(
            "F0000", "could not set SSL protocol version range",
            detail='"ssl_min_protocol_version" cannot be higher than "ssl_max_protocol_version"',
        )  # fmt: skip
    if not isinstance(ciphers, str):
        raise PgError("22023", f'invalid value for parameter "ssl_ciphers": "{ciphers}"')


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
