"""ES256 (ECDSA P-256, SHA-256) signing for the tests' personal agent, in
plain Python (no crypto package is among the test dependencies). Slow and
not constant-time: test use only. pactd verifying its tokens is the check
that it is right (every positive control)."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from typing import Any

P = 2**256 - 2**224 + 2**192 + 2**96 - 1
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
G = (
    0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
    0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
)

Point = tuple[int, int] | None


def _add(a: Point, b: Point) -> Point:
    if a is None:
        return b
    if b is None:
        return a
    if a[0] == b[0] and (a[1] + b[1]) % P == 0:
        return None
    if a == b:
        lam = (3 * a[0] * a[0] - 3) * pow(2 * a[1], -1, P) % P
    else:
        lam = (b[1] - a[1]) * pow(b[0] - a[0], -1, P) % P
    x = (lam * lam - a[0] - b[0]) % P
    return x, (lam * (a[0] - x) - a[1]) % P


def _mul(k: int, pt: Point) -> Point:
    out: Point = None
    while k:
        if k & 1:
            out = _add(out, pt)
        pt = _add(pt, pt)
        k >>= 1
    return out


def b64url(b: bytes) -> str:
    """Is unpadded base64url."""
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


class Key:
    """A P-256 key pair."""

    def __init__(self) -> None:
        self.d = secrets.randbelow(N - 1) + 1
        pub = _mul(self.d, G)
        assert pub is not None
        self.x, self.y = pub

    def jwk(self, kid: str) -> dict[str, str]:
        """Is the public key as a JWK."""
        return {
            "kty": "EC",
            "crv": "P-256",
            "x": b64url(self.x.to_bytes(32, "big")),
            "y": b64url(self.y.to_bytes(32, "big")),
            "kid": kid,
            "alg": "ES256",
            "use": "sig",
        }

    def sign(self, data: bytes) -> bytes:
        """Is the raw R||S signature of data."""
        z = int.from_bytes(hashlib.sha256(data).digest(), "big")
        while True:
            k = secrets.randbelow(N - 1) + 1
            pt = _mul(k, G)
            assert pt is not None
            r = pt[0] % N
            s = pow(k, -1, N) * (z + r * self.d) % N
            if r and s:
                return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    def jwt(self, kid: str, claims: dict[str, Any], alg: str = "ES256") -> str:
        """Is a compact JWS of the claims (alg is only written, ES256 signs)."""
        header = b64url(json.dumps({"alg": alg, "typ": "JWT", "kid": kid}).encode())
        payload = b64url(json.dumps(claims).encode())
        signing_input = f"{header}.{payload}".encode()
        return f"{header}.{payload}.{b64url(self.sign(signing_input))}"
