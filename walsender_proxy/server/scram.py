"""The server side of SCRAM-SHA-256 (RFC 5802/7677) as PostgreSQL speaks it.

scramp makes and checks the verifiers, but its server refuses the empty user name that
libpq always sends (``n,,n=,r=…``: PostgreSQL takes the user from the startup packet), so
the exchange itself is here — a few HMACs over the stored verifier. No channel binding is
offered (no -PLUS mechanism), as PostgreSQL does without TLS.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from walsender_proxy.backend.roles import Verifier


class ScramError(Exception):
    """The client's messages do not follow SCRAM (08P01 at the protocol level)."""


def _attrs(text: str) -> list[tuple[str, str]]:
    out = []
    for part in text.split(","):
        if len(part) < 2 or part[1] != "=":
            raise ScramError(f"malformed SCRAM message: {text!r}")
        out.append((part[0], part[2:]))
    return out


class ScramServer:
    def __init__(self, verifier: Verifier, nonce: str | None = None) -> None:
        self.v = verifier
        self.server_nonce = nonce or base64.b64encode(secrets.token_bytes(18)).decode()
        self._client_first_bare = ""
        self._server_first = ""
        self._gs2 = ""
        self._nonce = ""

    def server_first(self, client_first: bytes) -> bytes:
        text = client_first.decode("utf-8")
        if text[:2] not in ("n,", "y,"):
            if text.startswith("p="):
                raise ScramError("channel binding is not supported by this server")
            raise ScramError("malformed SCRAM message: unexpected channel-binding flag")
        i = text.index(",", 2)  # gs2 header: flag, authzid
        self._gs2 = text[: i + 1]
        bare = text[i + 1 :]
        attrs = dict(_attrs(bare)[:2])
        if "r" not in attrs or not attrs["r"]:
            raise ScramError("malformed SCRAM message: missing client nonce")
        self._client_first_bare = bare
        self._nonce = attrs["r"] + self.server_nonce
        salt = base64.b64encode(self.v.salt).decode()
        self._server_first = f"r={self._nonce},s={salt},i={self.v.iterations}"
        return self._server_first.encode()

    def server_final(self, client_final: bytes) -> bytes | None:
        """The server-final message, or None if the proof is wrong (bad password)."""
        text = client_final.decode("utf-8")
        attrs = _attrs(text)
        if len(attrs) < 3 or attrs[0][0] != "c" or attrs[1][0] != "r" or attrs[-1][0] != "p":
            raise ScramError("malformed SCRAM message: client-final")
        if base64.b64decode(attrs[0][1]) != self._gs2.encode():
            raise ScramError("SCRAM channel binding check failed")
        if not hmac.compare_digest(attrs[1][1].encode(), self._nonce.encode()):
            raise ScramError("SCRAM nonce mismatch")
        without_proof = text[: text.rindex(",p=")]
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        proof = base64.b64decode(attrs[-1][1])
        signature = hmac.new(self.v.stored_key, auth_message, hashlib.sha256).digest()
        if len(proof) != len(signature):
            return None
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.sha256(client_key).digest(), self.v.stored_key):
            return None
        server_sig = hmac.new(self.v.server_key, auth_message, hashlib.sha256).digest()
        return b"v=" + base64.b64encode(server_sig)
