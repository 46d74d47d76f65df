"""Self-service PA registration: POST {public URL}/api/platforms (reference
section 4.3), answered byte for byte as the Go frontend's
pacta2a.RegistrationHandler answers it. pactd's
AgentService.SelfRegisterAgent does every check; this only bounds and
parses the request and maps pactd's outcome to HTTP."""

from __future__ import annotations

import json
import re
from typing import Any

from . import trace
from ._pb import agent_pb2
from .client import PactdClient, PactdError
from .http import Exchange, Receive, Scope, Send

#: The bound of a POST /api/platforms body (the Go frontend's MaxRegistrationBody).
MAX_REGISTRATION_BODY = 8 << 10

#: Where a host mounts RegistrationApp.
REGISTRATION_PATH = "/api/platforms"

_REALM = 'Bearer realm="platforms"'
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_R = agent_pb2.SelfRegistrationResult


class _Invalid(Exception):
    pass


def _no_constant(name: str) -> Any:
    raise _Invalid(name)  # NaN, Infinity, -Infinity: not JSON (Go refuses them)


def _fields(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Every object's members in order, duplicates kept, for parse_registration.
    return {"\x00pairs": pairs}


def parse_registration(body: bytes) -> tuple[str, str] | None:
    """Reads {"name", "jwksUri"} as Go's encoding/json reads it into a
    struct: an object (or null); members in order, the last of a key
    winning; keys matched without regard to case (Go's folding, which also
    takes U+017F for s and U+212A for k); null leaves a field empty; any
    other non-string value refuses the body; other members ignored. None for
    a refused body."""
    try:
        v = json.loads(body.decode("utf-8", errors="replace"), object_pairs_hook=_fields, parse_constant=_no_constant)
    except (ValueError, _Invalid, RecursionError):
        return None
    out = {"name": "", "jwksUri": ""}
    if v is None:
        return out["name"], out["jwksUri"]
    if not isinstance(v, dict) or "\x00pairs" not in v:
        return None
    for k, val in v["\x00pairs"]:
        f = k.replace("\u017f", "s").replace("\u212a", "k").lower()
        field = "name" if f == "name" else "jwksUri" if f == "jwksuri" else None
        if field is None or val is None:
            continue
        if not isinstance(val, str):
            return None
        # A lone surrogate escape ("\ud800") is U+FFFD, as Go's decoder makes it (protobuf
        # could not carry it); pairs were joined by json already.
        out[field] = _LONE_SURROGATE.sub("\ufffd", val)
    return out["name"], out["jwksUri"]


def _encode(v: Any) -> bytes:
    # As Go's json.Encoder: UTF-8, <, >, &, U+2028 and U+2029 escaped, a final newline.
    s = json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    s = re.sub("[<>&\u2028\u2029]", lambda m: "\\u%04x" % ord(m.group(0)), s)
    return (s + "\n").encode("utf-8")


async def _answer(ex: Exchange, status: int, v: Any, headers: list[tuple[str, str]] | None = None) -> None:
    h = [*(headers or []), ("cache-control", "no-store"), ("content-type", "application/json")]
    await ex.respond(status, h, _encode(v))


async def _refuse(ex: Exchange, status: int, reason: str) -> None:
    await _answer(ex, status, {"error": reason}, [("www-authenticate", _REALM)] if status == 401 else None)


class RegistrationApp:
    """The ASGI app of POST /api/platforms. endpoint_url is the URL the PA
    must put in aud: the frontend's public base URL + REGISTRATION_PATH. It
    is served without a PA JWT: the registration JWT is the credential. The
    answer is 201, 200, 409, 400 or 401 (with WWW-Authenticate: Bearer
    realm="platforms"), 413 for a body over MAX_REGISTRATION_BODY, 502 when
    pactd cannot be asked, and 404 while pactd's PACT_SELF_REGISTRATION is
    off."""

    def __init__(self, pactd: PactdClient, endpoint_url: str) -> None:
        self.pactd = pactd
        self.endpoint_url = endpoint_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        ex = Exchange(scope, receive, send)
        token = trace.current.set(trace.trace_metadata(ex.header("traceparent"), ex.header("tracestate")))
        try:
            await self._serve(ex)
        finally:
            trace.current.reset(token)

    async def _serve(self, ex: Exchange) -> None:
        if ex.method != "POST":
            await ex.bare(405, [("allow", "POST")])
            return
        auth = ex.header_values("authorization")
        if len(auth) != 1 or not auth[0].startswith("Bearer "):
            await _refuse(ex, 401, "token_missing")
            return
        body = await ex.read_body(MAX_REGISTRATION_BODY)
        if body is None:
            await _refuse(ex, 413, "body_too_large")
            return
        parsed = parse_registration(body)
        if parsed is None:
            await _refuse(ex, 400, "body_invalid")
            return
        req = agent_pb2.SelfRegisterAgentRequest(
            token=auth[0][len("Bearer ") :], name=parsed[0], jwks_uri=parsed[1], endpoint_url=self.endpoint_url
        )
        try:
            res = await self.pactd.self_register_agent(req)
        except PactdError:
            await _refuse(ex, 502, "pactd_unavailable")
            return
        if res.result == _R.SELF_REGISTRATION_RESULT_CREATED:
            status = 201
        elif res.result == _R.SELF_REGISTRATION_RESULT_EXISTS:
            status = 200
        elif res.result == _R.SELF_REGISTRATION_RESULT_CONFLICT:
            await _refuse(ex, 409, res.reason)
            return
        elif res.result == _R.SELF_REGISTRATION_RESULT_INVALID_REQUEST:
            await _refuse(ex, 400, res.reason)
            return
        elif res.result == _R.SELF_REGISTRATION_RESULT_INVALID_TOKEN:
            await _refuse(ex, 401, res.reason)
            return
        else:
            await ex.bare(404)
            return
        a = res.agent
        # Keys in the Go encoder's order (a map's keys sorted).
        await _answer(
            ex,
            status,
            {"platform": {"enabled": a.enabled, "id": a.id, "issuer": a.issuer, "jwksUri": a.jwks_uri, "name": res.name}},
        )
