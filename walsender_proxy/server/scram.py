"""The server side of SCRAM-SHA-256 and SCRAM-SHA-256-PLUS (RFC 5802/7677, channel binding
``tls-server-end-point`` of RFC 5929) as PostgreSQL 15 speaks it (``auth-scram.c``).

scramp makes and checks the verifiers and hashes the server certificate for channel
binding (``tls.certificate_hash``), but its server refuses the empty user name that libpq
always sends (``n,,n=,r=…``: PostgreSQL takes the user from the startup packet) and words
its errors its own way, so the exchange itself is here — PostgreSQL's parser, rule for rule,
with its messages, details and SQLSTATEs — over a few HMACs of the stored verifier.

Messages are handled as bytes, one character each (``latin-1``), as the C code sees them:
nothing from an unauthenticated client is decoded as UTF-8.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets

from decoding.errors import PgError
from walsender_proxy.backend.roles import Verifier

SCRAM_SHA_256 = "SCRAM-SHA-256"
SCRAM_SHA_256_PLUS = "SCRAM-SHA-256-PLUS"
#: The only channel-binding type PostgreSQL supports, and its cbind-input header.
CBIND_TYPE = "tls-server-end-point"
_CBIND_HEADER = b"p=tls-server-end-point,,"


class ScramError(PgError):
    """The client's messages break SCRAM's rules: a FATAL error with PostgreSQL's words."""


def _malformed(detail: str) -> ScramError:
    return ScramError("08P01", "malformed SCRAM message", detail=detail)


def _char(c: str) -> str:
    """sanitize_char: a printable ASCII character quoted, anything else in hex."""
    return f"'{c}'" if "\x21" <= c <= "\x7e" else f"0x{ord(c) & 0xFF:02x}"


def _str(s: str) -> str:
    """sanitize_str: non-printable characters as ``?``, at most 30 characters."""
    return "".join(c if "\x21" <= c <= "\x7e" else "?" for c in s[:30])


class _Reader:
    """A SCRAM message read as PostgreSQL's read_attr_value / read_any_attr read it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else "\0"

    def _value(self, attr: str) -> str:
        self.pos += 1
        if self.peek() != "=":
            raise _malformed(f'Expected character "=" for attribute "{attr}".')
        self.pos += 1
        end = self.text.find(",", self.pos)
        if end < 0:
            value, self.pos = self.text[self.pos :], len(self.text)
        else:
            value, self.pos = self.text[self.pos : end], end + 1
        return value

    def attr_value(self, attr: str) -> str:
        if self.peek() != attr:
            raise _malformed(f'Expected attribute "{attr}" but found "{_char(self.peek())}".')
        return self._value(attr)

    def any_attr(self) -> tuple[str, str]:
        attr = self.peek()
        if attr == "\0":
            raise _malformed("Attribute expected, but found end of string.")
        if not ("A" <= attr <= "Z" or "a" <= attr <= "z"):
            raise _malformed(f'Attribute expected, but found invalid character "{_char(attr)}".')
        return attr, self._value(attr)


def _b64decode(value: str) -> bytes | None:
    """pg_b64_decode: None for anything that is not base64 (whitespace is skipped)."""
    try:
        return base64.b64decode("".join(value.split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def _printable(s: str) -> bool:
    return all("\x21" <= c <= "\x7e" and c != "," for c in s)


class ScramServer:
    """One exchange. ``mechanism`` is what the client selected; ``tls``: the connection
    is TLS; ``cbind_data``: the server certificate's hash (``tls.certificate_hash``), the
    channel-binding data the client must send with SCRAM-SHA-256-PLUS."""

    def __init__(
        self,
        verifier: Verifier,
        mechanism: str = SCRAM_SHA_256,
        *,
        tls: bool = False,
        cbind_data: bytes | None = None,
        nonce: str | None = None,
    ) -> None:
        # scram_init: -PLUS only where it was offered (TLS and a certificate hash).
        if mechanism == SCRAM_SHA_256_PLUS and tls and cbind_data:
            self.channel_binding = True
        elif mechanism == SCRAM_SHA_256:
            self.channel_binding = False
        else:
            raise ScramError("08P01", "client selected an invalid SASL authentication mechanism")
        self.v = verifier
        self.tls = tls
        self.cbind_data = cbind_data
        self.server_nonce = nonce or base64.b64encode(secrets.token_bytes(18)).decode()
        self._cbind_flag = ""
        self._client_first_bare = ""
        self._client_nonce = ""
        self._server_first = ""

    @staticmethod
    def _text(data: bytes) -> str:
        if not data:
            raise _malformed("The message is empty.")
        if b"\0" in data:
            raise _malformed("Message length does not match input length.")
        return data.decode("latin-1")

    def server_first(self, client_first: bytes) -> bytes:
        """read_client_first_message, then the server-first message."""
        r = _Reader(self._text(client_first))
        flag = self._cbind_flag = r.peek()
        if flag in ("n", "y"):
            if self.channel_binding:
                raise _malformed(
                    "The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data."
                )
            if flag == "y" and self.tls and self.cbind_data:
                raise ScramError(
                    "28000",
                    "SCRAM channel binding negotiation error",
                    detail="The client supports SCRAM channel binding but thinks the server does not.  "
                    "However, this server does support channel binding.",
                )
            r.pos += 1
            if r.peek() != ",":
                raise _malformed(f'Comma expected, but found character "{_char(r.peek())}".')
            r.pos += 1
        elif flag == "p":
            if not self.channel_binding:
                raise _malformed(
                    "The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data."
                )
            cb_type = r.attr_value("p")
            if cb_type != CBIND_TYPE:
                raise ScramError("08P01", f'unsupported SCRAM channel-binding type "{_str(cb_type)}"')
        else:
            raise _malformed(f'Unexpected channel-binding flag "{_char(flag)}".')
        if r.peek() == "a":
            raise ScramError("0A000", "client uses authorization identity, but it is not supported")
        if r.peek() != ",":
            raise _malformed(f'Unexpected attribute "{_char(r.peek())}" in client-first-message.')
        r.pos += 1
        self._client_first_bare = r.text[r.pos :]
        if r.peek() == "m":
            raise ScramError("0A000", "client requires an unsupported SCRAM extension")
        r.attr_value("n")  # the user name: PostgreSQL's is the startup packet's
        self._client_nonce = r.attr_value("r")
        if not _printable(self._client_nonce):
            raise ScramError("08P01", "non-printable characters in SCRAM nonce")
        while r.pos < len(r.text):
            r.any_attr()  # extensions: none supported, ignored
        salt = base64.b64encode(self.v.salt).decode()
        self._server_first = f"r={self._client_nonce}{self.server_nonce},s={salt},i={self.v.iterations}"
        return self._server_first.encode()

    def _expected_binding(self) -> str:
        if self.channel_binding:
            assert self.cbind_data is not None
            return base64.b64encode(_CBIND_HEADER + self.cbind_data).decode()
        return "biws" if self._cbind_flag == "n" else "eSws"  # "n,," / "y,,"

    def server_final(self, client_final: bytes) -> bytes | None:
        """read_client_final_message and the checks after it: the server-final message,
        or None if the proof is wrong (a wrong password)."""
        text = self._text(client_final)
        r = _Reader(text)
        binding = r.attr_value("c")
        if self.channel_binding:
            if not hmac.compare_digest(binding.encode("latin-1"), self._expected_binding().encode()):
                raise ScramError("28000", "SCRAM channel binding check failed")
        elif binding != self._expected_binding():
            raise ScramError("08P01", "unexpected SCRAM channel-binding attribute in client-final-message")
        final_nonce = r.attr_value("r")
        while True:
            proof_at = r.pos - 1
            attr, value = r.any_attr()
            if attr == "p":
                break
        proof = _b64decode(value)
        if proof is None or len(proof) != 32:
            raise _malformed("Malformed proof in client-final-message.")
        if r.pos < len(text):
            raise _malformed("Garbage found at the end of client-final-message.")
        if final_nonce != self._client_nonce + self.server_nonce:
            raise ScramError("08P01", "invalid SCRAM response", detail="Nonce does not match.")
        without_proof = text[:proof_at]
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode("latin-1")
        signature = hmac.new(self.v.stored_key, auth_message, hashlib.sha256).digest()
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.sha256(client_key).digest(), self.v.stored_key):
            return None
        server_sig = hmac.new(self.v.server_key, auth_message, hashlib.sha256).digest()
        return b"v=" + base64.b64encode(server_sig)
