"""A typed asyncio client of pactd's frontend RPCs, over gRPC.

pactd answers gRPC on its native gRPC port (default 127.0.0.1:7071) and on
its main port (127.0.0.1:7070, h2c); both take the same credential::

    client = PactdClient.from_url("http://127.0.0.1:7070", token)   # main port
    client = PactdClient("127.0.0.1:7071", token)                   # native port
    v = await client.verify_agent_request("acme", "Bearer eyJ…")

Every call carries ``authorization: Bearer <frontend token>``, a deadline
(``timeout``, 10 s unless given) and the trace context of the request being
served (pacta2a.trace). A failed call raises PactdError naming the RPC, the
gRPC code, pactd's message and its google.rpc.ErrorInfo reason.

Retries: gRPC always retries transparently a call that never left this
process. Beyond that, a call that failed UNAVAILABLE is tried again (3
attempts in all, within the one deadline) only for the RPCs in RETRYABLE:
those that read, or whose effect is the same however often they run
(CompleteTurn with the same reply is a no-op, RevokeGrant of a revoked grant
succeeds, StartStepUp and SignReceipt store nothing). UNAVAILABLE does not
prove that pactd did nothing, so RPCs that claim or use something up once
are never retried: BeginTurn (a second claim of the messageId would answer
"pending duplicate"), AbandonTurn (it could release a later claim),
BeginConsent, ApproveConsent and DenyConsent (single-use assertions and
sessions).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable
from urllib.parse import urlsplit

import grpc
import grpc.aio

from . import trace
from ._pb import (
    agent_pb2,
    agent_pb2_grpc,
    brand_pb2,
    brand_pb2_grpc,
    conversation_pb2,
    conversation_pb2_grpc,
    delegation_pb2,
    delegation_pb2_grpc,
    token_pb2,
    token_pb2_grpc,
    verification_pb2,
    verification_pb2_grpc,
)

#: The RPCs tried again after UNAVAILABLE (see the module's doc comment).
RETRYABLE: frozenset[str] = frozenset(
    {
        "pact.v1.VerificationService/VerifyAgentRequest",
        "pact.v1.BrandService/GetAgentCard",
        "pact.v1.BrandService/ListBrands",
        "pact.v1.ConversationService/CompleteTurn",
        "pact.v1.DelegationService/DescribeConsent",
        "pact.v1.DelegationService/ListGrants",
        "pact.v1.DelegationService/CheckGrant",
        "pact.v1.DelegationService/RevokeGrant",
        "pact.v1.DelegationService/StartStepUp",
        "pact.v1.TokenService/SignReceipt",
        "pact.v1.TokenService/IntrospectToken",
        "pact.v1.TokenService/GetJwks",
        "pact.v1.TokenService/GetAuthorizationServerMetadata",
    }
)


def _service_config() -> str:
    """Is the channel's gRPC service config: the retry policy of RETRYABLE."""
    names = [{"service": m.split("/")[0], "method": m.split("/")[1]} for m in sorted(RETRYABLE)]
    policy = {
        "maxAttempts": 3,
        "initialBackoff": "0.05s",
        "maxBackoff": "0.5s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": ["UNAVAILABLE"],
    }
    return json.dumps({"methodConfig": [{"name": names, "retryPolicy": policy}]})


class NotDelegated(Exception):
    """PactdClient.guard's answer for a turn without a delegation grant."""


class GrantInactive(Exception):
    """PactdClient.guard's answer when pactd says the grant is not active
    for the need: reason is the GrantCheckReason name (for example
    "GRANT_CHECK_REASON_REVOKED"), missing_scopes the scopes lacking or
    restricted without a covering entry."""

    def __init__(self, reason: str, missing_scopes: tuple[str, ...] = ()) -> None:
        short = reason.removeprefix("GRANT_CHECK_REASON_").lower()
        super().__init__(f"grant not active: {short}" + (f" ({' '.join(missing_scopes)})" if missing_scopes else ""))
        self.reason = reason
        self.missing_scopes = missing_scopes


class PactdError(Exception):
    """A call to pactd failed: which RPC, the gRPC code, pactd's message and
    the reason of its google.rpc.ErrorInfo detail ("" without one)."""

    def __init__(self, rpc: str, code: grpc.StatusCode, message: str, reason: str = "") -> None:
        self.rpc = rpc
        self.code = code
        self.message = message
        self.reason = reason
        text = f"pactd {rpc}: {code.name}: {message}"
        if reason:
            text += f" ({reason})"
        super().__init__(text)


# --- VerifyAgentRequest's answer as plain objects -------------------------


@dataclass(frozen=True, slots=True)
class Caller:
    """The PA and the User it acts for, as pactd verified them. The User is
    the pair (agent_id, subject)."""

    agent_id: str
    issuer: str
    subject: str
    agent_display_name: str


@dataclass(frozen=True, slots=True)
class AuthorizationDetailMember:
    """One member of an RFC 9396 authorization_details entry: a string
    (array False, one value) or an array of strings."""

    name: str
    values: tuple[str, ...]
    array: bool


@dataclass(frozen=True, slots=True)
class AuthorizationDetail:
    """One approved authorization_details entry of a grant (PACT §5.7)."""

    type: str
    json: str
    members: tuple[AuthorizationDetailMember, ...]


@dataclass(frozen=True, slots=True)
class Delegation:
    """The grant of a verified delegation token: the agent acts as
    brand_user, limited to scopes and to authorization_details (which it
    must enforce against the actual resource)."""

    grant_id: str
    brand_user: str
    scopes: tuple[str, ...]
    expires_at: datetime | None
    authorization_details_json: str
    authorization_details: tuple[AuthorizationDetail, ...]


@dataclass(frozen=True, slots=True)
class Verification:
    """pactd's decision on one A2A request. On a refusal send http_status
    with www_authenticate (and Retry-After when retry_after_seconds > 0)
    and no body; reason is for logs only."""

    allowed: bool
    http_status: int
    www_authenticate: str
    retry_after_seconds: int
    reason: str
    caller: Caller | None
    delegation: Delegation | None


def _timestamp(ts: Any) -> datetime | None:
    if ts.seconds == 0 and ts.nanos == 0:
        return None
    return datetime.fromtimestamp(ts.seconds + ts.nanos / 1e9, tz=timezone.utc)


def verification_from_proto(r: verification_pb2.VerifyAgentRequestResponse) -> Verification:
    """Converts VerifyAgentRequest's response into a Verification."""
    caller = None
    if r.HasField("caller"):
        c = r.caller
        caller = Caller(c.agent_id, c.issuer, c.subject, c.agent_display_name)
    delegation = None
    if r.HasField("delegation"):
        d = r.delegation
        details = tuple(
            AuthorizationDetail(
                a.type, a.json, tuple(AuthorizationDetailMember(m.name, tuple(m.values), m.array) for m in a.members)
            )
            for a in d.authorization_details
        )
        delegation = Delegation(
            d.grant_id,
            d.brand_user,
            tuple(d.scopes),
            _timestamp(d.expires_at) if d.HasField("expires_at") else None,
            d.authorization_details_json,
            details,
        )
    return Verification(
        r.allowed,
        r.http_status,
        r.www_authenticate,
        r.retry_after_seconds,
        verification_pb2.DenyReason.Name(r.reason),
        caller,
        delegation,
    )


# --- google.rpc.Status details ------------------------------------------


def _fields(buf: bytes) -> list[tuple[int, int, Any]] | None:
    """Decodes one protobuf message's fields (number, wire type, value), or
    None when buf is not protobuf."""
    out: list[tuple[int, int, Any]] = []
    i, n = 0, len(buf)

    def varint() -> int | None:
        nonlocal i
        shift = result = 0
        while i < n and shift < 64:
            b = buf[i]
            i += 1
            result |= (b & 0x7F) << shift
            if b < 0x80:
                return result
            shift += 7
        return None

    while i < n:
        key = varint()
        if key is None:
            return None
        num, wt = key >> 3, key & 7
        if wt == 0:
            v = varint()
            if v is None:
                return None
            out.append((num, wt, v))
        elif wt == 2:
            size = varint()
            if size is None or i + size > n:
                return None
            out.append((num, wt, buf[i : i + size]))
            i += size
        elif wt in (1, 5):
            i += 8 if wt == 1 else 4
            if i > n:
                return None
        else:
            return None
    return out


def error_info_reason(status_details: bytes) -> str:
    """Is the reason of the google.rpc.ErrorInfo in a serialized
    google.rpc.Status (the grpc-status-details-bin trailer), or ""."""
    for num, wt, any_msg in _fields(status_details) or []:
        if num != 3 or wt != 2:  # Status.details
            continue
        parts = {n: v for n, w, v in _fields(any_msg) or [] if w == 2}
        if parts.get(1, b"").endswith(b"/google.rpc.ErrorInfo"):
            for n, w, v in _fields(parts.get(2, b"")) or []:
                if n == 1 and w == 2:  # ErrorInfo.reason
                    return v.decode("utf-8", "replace")
    return ""


def _error(rpc: str, err: grpc.aio.AioRpcError) -> PactdError:
    reason = ""
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            reason = error_info_reason(value)
    return PactdError(rpc, err.code(), err.details() or "", reason)


# --- the client --------------------------------------------------------------


class PactdClient:
    """A client of pactd's frontend RPCs (frontend role), on one gRPC channel.

    target is host:port (pactd's native gRPC port or its main port); secure
    uses TLS with the system's roots (or root_certificates). The channel is
    made on first use, inside the running event loop. Close it with close()
    or ``async with``.
    """

    def __init__(
        self,
        target: str,
        token: str,
        *,
        secure: bool = False,
        root_certificates: bytes | None = None,
        timeout: float = 10.0,
    ) -> None:
        if not target or not token:
            raise ValueError("PactdClient needs pactd's address and a frontend token")
        self.target = target
        self.timeout = timeout
        self._secure = secure
        self._roots = root_certificates
        self._auth = ("authorization", "Bearer " + token)
        self._channel: grpc.aio.Channel | None = None
        self._stubs: dict[str, Any] = {}

    @classmethod
    def from_url(cls, url: str, token: str, **kwargs: Any) -> PactdClient:
        """Is a client of pactd at a base URL: http://host:port (h2c) or
        https://host:port (TLS), default ports 80 and 443."""
        u = urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"pactd URL {url!r} must be http://host:port or https://host:port")
        port = u.port or (443 if u.scheme == "https" else 80)
        host = f"[{u.hostname}]" if ":" in u.hostname else u.hostname
        return cls(f"{host}:{port}", token, secure=u.scheme == "https", **kwargs)

    def _stub(self, name: str, factory: Callable[[grpc.aio.Channel], Any]) -> Any:
        if self._channel is None:
            options = [("grpc.service_config", _service_config()), ("grpc.enable_retries", 1)]
            if self._secure:
                creds = grpc.ssl_channel_credentials(root_certificates=self._roots)
                self._channel = grpc.aio.secure_channel(self.target, creds, options=options)
            else:
                self._channel = grpc.aio.insecure_channel(self.target, options=options)
            self._stubs = {}
        stub = self._stubs.get(name)
        if stub is None:
            stub = self._stubs[name] = factory(self._channel)
        return stub

    async def close(self) -> None:
        """Closes the channel; the next call opens a new one."""
        if self._channel is not None:
            channel, self._channel = self._channel, None
            await channel.close()

    async def __aenter__(self) -> PactdClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _call(self, service: str, method: str, factory: Callable[[grpc.aio.Channel], Any], request: Any) -> Any:
        rpc = f"pact.v1.{service}/{method}"
        fn = getattr(self._stub(service, factory), method)
        try:
            return await fn(request, timeout=self.timeout, metadata=(self._auth, *trace.current.get()))
        except grpc.aio.AioRpcError as err:
            raise _error(rpc, err) from None

    # --- VerificationService

    async def verify_agent_request(self, brand_id: str, authorization: str, user_delegation: str = "") -> Verification:
        """Asks pactd whether a request to the Brand with these raw
        Authorization and X-A2A-User-Delegation values may proceed."""
        req = verification_pb2.VerifyAgentRequestRequest(
            brand_id=brand_id, authorization=authorization, user_delegation=user_delegation
        )
        res = await self._call("VerificationService", "VerifyAgentRequest", verification_pb2_grpc.VerificationServiceStub, req)
        return verification_from_proto(res)

    # --- BrandService

    async def get_agent_card(self, brand_id: str) -> brand_pb2.GetAgentCardResponse:
        """Is the Brand's Agent Card and what its pages need; PactdError
        NOT_FOUND for an unknown Brand."""
        return await self._call(
            "BrandService", "GetAgentCard", brand_pb2_grpc.BrandServiceStub, brand_pb2.GetAgentCardRequest(brand_id=brand_id)
        )

    async def list_brands(self, req: brand_pb2.ListBrandsRequest) -> brand_pb2.ListBrandsResponse:
        """Lists the Brands, oldest first (the root page)."""
        return await self._call("BrandService", "ListBrands", brand_pb2_grpc.BrandServiceStub, req)

    # --- ConversationService

    async def begin_turn(self, req: conversation_pb2.BeginTurnRequest) -> conversation_pb2.BeginTurnResponse:
        """Opens or continues a context and claims the turn's messageId."""
        return await self._call("ConversationService", "BeginTurn", conversation_pb2_grpc.ConversationServiceStub, req)

    async def complete_turn(self, req: conversation_pb2.CompleteTurnRequest) -> conversation_pb2.CompleteTurnResponse:
        """Stores a turn's reply, so a retry of the messageId gets it back."""
        return await self._call("ConversationService", "CompleteTurn", conversation_pb2_grpc.ConversationServiceStub, req)

    async def abandon_turn(self, req: conversation_pb2.AbandonTurnRequest) -> conversation_pb2.AbandonTurnResponse:
        """Releases a claimed turn that failed or stepped up."""
        return await self._call("ConversationService", "AbandonTurn", conversation_pb2_grpc.ConversationServiceStub, req)

    # --- DelegationService

    async def start_step_up(self, req: delegation_pb2.StartStepUpRequest) -> delegation_pb2.StartStepUpResponse:
        """Prepares the AUTH_REQUIRED task of a turn that needs scopes;
        FAILED_PRECONDITION when the Brand offers no delegation."""
        return await self._call("DelegationService", "StartStepUp", delegation_pb2_grpc.DelegationServiceStub, req)

    async def describe_consent(self, req: delegation_pb2.DescribeConsentRequest) -> delegation_pb2.DescribeConsentResponse:
        """Is what the consent page shows for a pending user code."""
        return await self._call("DelegationService", "DescribeConsent", delegation_pb2_grpc.DelegationServiceStub, req)

    async def begin_consent(self, req: delegation_pb2.BeginConsentRequest) -> delegation_pb2.BeginConsentResponse:
        """Verifies a signed-assertion Brand's login assertion and opens its consent page."""
        return await self._call("DelegationService", "BeginConsent", delegation_pb2_grpc.DelegationServiceStub, req)

    async def begin_connected(self, req: delegation_pb2.BeginConnectedRequest) -> delegation_pb2.BeginConnectedResponse:
        """Verifies a signed-assertion Brand's connected-page assertion (or its
        connected session) and lists the User's grants with a connected session."""
        return await self._call("DelegationService", "BeginConnected", delegation_pb2_grpc.DelegationServiceStub, req)

    async def revoke_connected(self, req: delegation_pb2.RevokeConnectedRequest) -> delegation_pb2.RevokeConnectedResponse:
        """Revokes one PA's live grants to the User a connected session names."""
        return await self._call("DelegationService", "RevokeConnected", delegation_pb2_grpc.DelegationServiceStub, req)

    async def approve_consent(self, req: delegation_pb2.ApproveConsentRequest) -> delegation_pb2.ApproveConsentResponse:
        """Records the User's approval (granted = requested ∩ chosen)."""
        return await self._call("DelegationService", "ApproveConsent", delegation_pb2_grpc.DelegationServiceStub, req)

    async def deny_consent(self, req: delegation_pb2.DenyConsentRequest) -> delegation_pb2.DenyConsentResponse:
        """Records the User's refusal."""
        return await self._call("DelegationService", "DenyConsent", delegation_pb2_grpc.DelegationServiceStub, req)

    async def list_grants(self, req: delegation_pb2.ListGrantsRequest) -> delegation_pb2.ListGrantsResponse:
        """Lists a Brand user's grants, newest first."""
        return await self._call("DelegationService", "ListGrants", delegation_pb2_grpc.DelegationServiceStub, req)

    async def check_grant(self, req: delegation_pb2.CheckGrantRequest) -> delegation_pb2.CheckGrantResponse:
        """Is whether a grant of the Brand is active now for the scopes and
        the authorization_details entry asked (the action guard's RPC)."""
        return await self._call("DelegationService", "CheckGrant", delegation_pb2_grpc.DelegationServiceStub, req)

    async def guard(
        self, brand_id: str, caller: Caller | None, delegation: Delegation | None, scopes: Sequence[str] = (), detail: str = ""
    ) -> None:
        """The action guard: call it right before a tool runs and again after
        a slow policy decision, with the turn's brand_id, caller and
        delegation. It returns only when pactd says the grant is active for
        the scopes and the detail (one authorization_details entry as a JSON
        object); it raises NotDelegated for an identity-only turn,
        GrantInactive when pactd says no, and PactdError when pactd could not
        be asked (fail closed). pactd answers from its grant cache, within
        the same revocation bound as VerifyAgentRequest."""
        if delegation is None or not delegation.grant_id:
            raise NotDelegated("the turn carries no delegation grant")
        r = await self.check_grant(
            delegation_pb2.CheckGrantRequest(
                brand_id=brand_id,
                grant_id=delegation.grant_id,
                brand_user=delegation.brand_user,
                agent_id=caller.agent_id if caller else "",
                scopes=list(scopes),
                authorization_details_json=detail,
            )
        )
        if not r.active:
            raise GrantInactive(delegation_pb2.GrantCheckReason.Name(r.reason), tuple(r.missing_scopes))

    async def revoke_grant(self, req: delegation_pb2.RevokeGrantRequest) -> delegation_pb2.RevokeGrantResponse:
        """Revokes a grant; NOT_FOUND for another Brand's or Brand user's."""
        return await self._call("DelegationService", "RevokeGrant", delegation_pb2_grpc.DelegationServiceStub, req)

    # --- TokenService

    async def sign_receipt(self, req: token_pb2.SignReceiptRequest) -> token_pb2.SignReceiptResponse:
        """Signs the receipt of a delegated reply (PACT §5.6)."""
        return await self._call("TokenService", "SignReceipt", token_pb2_grpc.TokenServiceStub, req)

    async def introspect_token(self, req: token_pb2.IntrospectTokenRequest) -> token_pb2.IntrospectTokenResponse:
        """Introspects a delegation token (RFC 7662)."""
        return await self._call("TokenService", "IntrospectToken", token_pb2_grpc.TokenServiceStub, req)

    # --- AgentService

    async def self_register_agent(self, req: agent_pb2.SelfRegisterAgentRequest) -> agent_pb2.SelfRegisterAgentResponse:
        """Asks pactd to check and record a PA's self-service registration
        (POST /api/platforms, registration.py); not retried: it consumes a jti."""
        return await self._call("AgentService", "SelfRegisterAgent", agent_pb2_grpc.AgentServiceStub, req)
