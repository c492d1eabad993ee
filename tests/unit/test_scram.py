"""The SCRAM exchange (``server/scram.py``) and the channel-binding hash (``server/tls.py``)
without a server: what PostgreSQL 15's auth-scram.c decides, rule by rule (the same cases
run against PostgreSQL itself in ``tests/integration/test_tls_auth.py``)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import ssl
import subprocess
from pathlib import Path

import pytest

from walsender_proxy.backend.roles import Verifier
from walsender_proxy.server.scram import SCRAM_SHA_256, SCRAM_SHA_256_PLUS, ScramError, ScramServer
from walsender_proxy.server.tls import certificate_hash, make_ssl_context

PASSWORD = "pw"
VERIFIER = Verifier.make(PASSWORD, iterations=16)
CBIND = hashlib.sha256(b"the certificate").digest()


def exchange(server: ScramServer, gs2: str, cbind_input: bytes | None = None) -> bytes | None:
    """A client's whole exchange with ``server``: its answer to the client-final message."""
    bare = "n=,r=clientnonce"
    first = server.server_first((gs2 + bare).encode()).decode()
    attrs = dict(a.split("=", 1) for a in first.split(","))
    salted = hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(), base64.b64decode(attrs["s"]), int(attrs["i"]))
    cb = cbind_input if cbind_input is not None else gs2.encode() + (CBIND if gs2.startswith("p=") else b"")
    without_proof = f"c={base64.b64encode(cb).decode()},r={attrs['r']}"
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    auth = f"{bare},{first},{without_proof}".encode()
    sig = hmac.new(hashlib.sha256(client_key).digest(), auth, hashlib.sha256).digest()
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, sig, strict=True))).decode()
    return server.server_final(f"{without_proof},p={proof}".encode())


def test_channel_binding_checked() -> None:
    plus = ScramServer(VERIFIER, SCRAM_SHA_256_PLUS, tls=True, cbind_data=CBIND)
    assert exchange(plus, "p=tls-server-end-point,,") is not None
    wrong = ScramServer(VERIFIER, SCRAM_SHA_256_PLUS, tls=True, cbind_data=CBIND)
    with pytest.raises(ScramError) as ei:
        exchange(wrong, "p=tls-server-end-point,,", b"p=tls-server-end-point,," + bytes(32))
    assert (ei.value.sqlstate, ei.value.message) == ("28000", "SCRAM channel binding check failed")


def test_plain_scram_over_tls_and_without() -> None:
    assert exchange(ScramServer(VERIFIER, SCRAM_SHA_256, tls=True, cbind_data=CBIND), "n,,") is not None
    assert exchange(ScramServer(VERIFIER, SCRAM_SHA_256), "y,,") is not None  # no TLS: y is fine
    with pytest.raises(ScramError) as ei:  # y over TLS: the client was downgraded
        exchange(ScramServer(VERIFIER, SCRAM_SHA_256, tls=True, cbind_data=CBIND), "y,,")
    assert (ei.value.sqlstate, ei.value.message) == ("28000", "SCRAM channel binding negotiation error")


def test_plus_only_where_offered() -> None:
    for kw in ({"tls": False, "cbind_data": CBIND}, {"tls": True, "cbind_data": None}):
        with pytest.raises(ScramError) as ei:
            ScramServer(VERIFIER, SCRAM_SHA_256_PLUS, **kw)  # type: ignore[arg-type]
        assert ei.value.message == "client selected an invalid SASL authentication mechanism"


@pytest.mark.parametrize(
    ("mechanism", "message", "sqlstate", "detail"),
    [
        (SCRAM_SHA_256_PLUS, b"n,,n=,r=x", "08P01", "The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data."),
        (SCRAM_SHA_256, b"p=tls-server-end-point,,n=,r=x", "08P01", "The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data."),
        (SCRAM_SHA_256, b"", "08P01", "The message is empty."),
        (SCRAM_SHA_256, b"n,,n=,r=x\x00", "08P01", "Message length does not match input length."),
        (SCRAM_SHA_256, b"q,,n=,r=x", "08P01", "Unexpected channel-binding flag \"'q'\"."),
        (SCRAM_SHA_256, b"n,,r=x", "08P01", "Expected attribute \"n\" but found \"'r'\"."),
        (SCRAM_SHA_256, b"n,,n=,r=x,1", "08P01", "Attribute expected, but found invalid character \"'1'\"."),
    ],
)
def test_client_first_refusals(mechanism: str, message: bytes, sqlstate: str, detail: str) -> None:
    server = ScramServer(VERIFIER, mechanism, tls=True, cbind_data=CBIND)
    with pytest.raises(ScramError) as ei:
        server.server_first(message)
    assert (ei.value.sqlstate, ei.value.detail) == (sqlstate, detail)


def test_certificate_hash_uses_the_signature_hash(tmp_path: Path) -> None:
    """be_tls_get_certificate_hash: SHA-384 for an ecdsa-with-SHA384 certificate, SHA-256
    for SHA-256 and for SHA-1 (and MD5)."""
    for digest, curve in (("sha384", "secp384r1"), ("sha256", "prime256v1")):
        cert, key = tmp_path / f"{digest}.crt", tmp_path / f"{digest}.key"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", f"ec_paramgen_curve:{curve}", f"-{digest}",
             "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=localhost"],
            check=True, capture_output=True,
        )  # fmt: skip
        der = ssl.PEM_cert_to_DER_cert(cert.read_text())
        assert certificate_hash(str(cert)) == hashlib.new(digest, der).digest()
        make_ssl_context(str(cert), str(key))  # (a usable server certificate)
    cert, key = tmp_path / "sha1.crt", tmp_path / "sha1.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-sha1", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    der = ssl.PEM_cert_to_DER_cert(cert.read_text())
    assert certificate_hash(str(cert)) == hashlib.sha256(der).digest()
