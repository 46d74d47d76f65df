"""Under {interfaceUrl}/oauth/ (PACT Delegated): pactd's OAuth endpoints by
reverse proxy, and the Provider's consent and connected-apps pages for
Brands in BRAND_LOGIN_MODE_TRUSTED_FRONTEND, where the frontend's own
sign-in (a Sessions) vouches for the Brand user. signed.py has the pages of
BRAND_LOGIN_MODE_SIGNED_ASSERTION Brands."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Awaitable, Protocol

import grpc
import httpx

from ._pb import common_pb2, delegation_pb2
from .call import Call, Endpoint
from .client import PactdError
from .http import MAX_FORM_BYTES, Exchange, FormTooLarge, Scope, Values, first, parse_query, path_escape, query_escape, read_form
from .pages import STATUS_TEXT, AgentView, GrantView, View, day, hhmm, scope_views
from .signed import BrandPages, begin_connected, begin_consent, brand_pages, connected_signed, decide_signed, revoke_signed

if TYPE_CHECKING:
    from .middleware import PactMiddleware


class Sessions(Protocol):
    """Tells the consent and connected-apps pages who the User is at a Brand
    in BRAND_LOGIN_MODE_TRUSTED_FRONTEND (the frontend vouches for the Brand
    user it passes to pactd). Brands in BRAND_LOGIN_MODE_SIGNED_ASSERTION
    need none."""

    def brand_user(self, scope: Scope, brand_id: str) -> str:
        """Is the id at brand_id of the User signed in on the request (its
        ASGI scope), or ""."""
        ...

    def login_url(self, brand_id: str, return_to: str) -> str:
        """Is where a User who is not signed in goes first; the login then
        returns to return_to, a path on this frontend."""
        ...


# Hop-by-hop headers (RFC 9110 §7.6.1) and the inbound forwarding headers
# are not passed on, as Go's httputil.ReverseProxy (Rewrite) does; nor the
# User's cookies, which are not pactd's business.
_HOP_BY_HOP = {
    b"connection",
    b"proxy-connection",
    b"keep-alive",
    b"proxy-authenticate",
    b"proxy-authorization",
    b"te",
    b"trailer",
    b"transfer-encoding",
    b"upgrade",
}
_INBOUND_DROP = {b"host", b"cookie", b"forwarded", b"x-forwarded-for", b"x-forwarded-host", b"x-forwarded-proto", b"content-length"}
# The frontend's server adds its own Date.
_OUTBOUND_DROP = {b"date"}
# httpx adds these when a request has none; a proxy must not.
_CLIENT_DEFAULTS = (b"accept", b"accept-encoding", b"user-agent")

#: pactd's answer to an OAuth form over its bound (internal/oauthhttp), sent
#: here when the proxy will not read such a body.
_TOO_LARGE = b'{"error":"invalid_request","error_description":"the request body is too large"}'


def _pass_headers(headers: list[tuple[bytes, bytes]], drop: set[bytes]) -> list[tuple[bytes, bytes]]:
    """Are the headers a proxy passes on, byte for byte: not hop-by-hop, not
    named by Connection, not in drop."""
    named: set[bytes] = set()
    for k, v in headers:
        if k.lower() == b"connection":
            named |= {t.strip().lower() for t in v.split(b",")}
    out = []
    for k, v in headers:
        low = k.lower()
        if low not in _HOP_BY_HOP and low not in named and low not in drop:
            out.append((k, v))
    return out


def oauth_routes(mw: PactMiddleware, p: str) -> dict[str, Endpoint] | None:
    """Are the endpoints under {interfaceUrl}/oauth/ by method, or None."""

    def forward(ex: Exchange, c: Call) -> Awaitable[None]:
        return proxy(mw, ex, c.brand_id, p)

    if p in ("device_authorization", "token", "revoke"):
        return {"POST": Endpoint(forward, public=True)}
    if p in (".well-known/oauth-authorization-server", "jwks.json"):
        return {"GET": Endpoint(forward, public=True)}
    if p == "consent":
        # POST: a signed-assertion Brand's login returns the User here.
        return {
            "GET": Endpoint(lambda ex, c: consent_page(mw, ex, c), public=True),
            "POST": Endpoint(lambda ex, c: begin_consent(mw, ex, c), public=True),
        }
    if p == "consent/decision":
        return {"POST": Endpoint(lambda ex, c: decide(mw, ex, c), public=True)}
    if p == "connected":
        # POST: a signed-assertion Brand's login returns the User here (signed.py).
        return {
            "GET": Endpoint(lambda ex, c: connected_page(mw, ex, c), public=True),
            "POST": Endpoint(lambda ex, c: begin_connected(mw, ex, c), public=True),
        }
    if p == "connected/revoke":
        post = {"POST": Endpoint(lambda ex, c: revoke_any(mw, ex, c), public=True)}
        if mw.sessions is None:
            return post
        # GET: the confirmation that names what will be revoked.
        return {"GET": Endpoint(lambda ex, c: confirm_revoke(mw, ex, c), public=True), **post}
    return None


async def proxy(mw: PactMiddleware, ex: Exchange, brand_id: str, endpoint: str) -> None:
    """Sends a request to pactd's endpoint for the Brand, on the path the
    route matched (never the raw path the client sent), and its answer back.
    pactd authenticates the PA (its JWT is the OAuth client authentication)
    and writes every answer. The body is read up to pactd's own bound."""
    body = await ex.read_body(MAX_FORM_BYTES)
    if body is None:
        await ex.respond(
            413,
            [("cache-control", "no-store"), ("pragma", "no-cache"), ("content-type", "application/json")],
            _TOO_LARGE,
        )
        return
    url = mw.pactd_url.rstrip("/") + "/a2a/" + path_escape(brand_id) + "/oauth/" + endpoint
    if ex.query:
        url += "?" + ex.query.decode("latin-1")
    headers = _pass_headers(ex.headers, _INBOUND_DROP)
    request = mw.http.build_request(ex.method, url, headers=headers, content=body or None)
    sent = {k.lower() for k, _ in headers}
    for h in _CLIENT_DEFAULTS:
        if h not in sent:
            request.headers.pop(h.decode(), None)
    try:
        upstream = await mw.http.send(request, stream=True)
    except httpx.HTTPError as err:
        mw.log_error("oauth proxy", ex.path, err)
        await ex.bare(502)
        return
    try:
        out = _pass_headers(list(upstream.headers.raw), _OUTBOUND_DROP)
        await ex.start(upstream.status_code, out)
        async for chunk in upstream.aiter_raw():
            await ex.write(chunk)
        await ex.write(b"", more=False)
    finally:
        await upstream.aclose()


def guess_source(user: str) -> str:
    """Names the signed-in Brand user to pactd's user-code guessing limits,
    so one user's wrong codes spend that user's budget, not only the Brand's.
    A hash keeps the id printable and out of pactd's logs."""
    return "user:" + hashlib.sha256(user.encode("utf-8", "replace")).digest()[:12].hex()


async def consent_page(mw: PactMiddleware, ex: Exchange, c: Call) -> None:
    """Serves GET consent?user_code=…. A signed-assertion Brand's User goes
    to the Brand's login (which posts back here); otherwise the User must be
    signed in at the Brand, and without a code the page asks for one (a
    step-up link carries none)."""
    b = await brand_pages(mw, ex, c.brand_id)
    if b is None:
        return
    code = first(parse_query(ex.query) or {}, "user_code")
    if b.signed:
        await ex.redirect(b.login_link(code))
        return
    if mw.sessions is None:
        await ex.bare(404)
        return
    user = await _signed_in(mw, ex, c.brand_id)
    if not user:
        return
    if code == "":
        await mw.pages.render(ex, 200, "code", View(title="Connect your assistant", user=user, action=b.consent_url))
        return
    await _show_consent(mw, ex, b, user, code, 200, "", True)


async def _show_consent(
    mw: PactMiddleware, ex: Exchange, b: BrandPages, user: str, code: str, status: int, problem: str, may_skip: bool
) -> None:
    """Describes the pending authorization and renders the page, or the page
    that says why it cannot be decided. may_skip: when the Brand skips
    consent and a grant of this User to this PA covers the request already
    (covered_by_grant), it is approved with every requested scope at once."""
    try:
        d = await mw.pactd.describe_consent(
            delegation_pb2.DescribeConsentRequest(
                brand_id=b.id, user_code=code, source=guess_source(user), brand_user=user if may_skip else ""
            )
        )
        if d.covered_by_grant:
            # pactd checks the cover again, grants what was requested and
            # never past the covering grant's expiry.
            res = await mw.pactd.approve_consent(
                delegation_pb2.ApproveConsentRequest(
                    brand_id=b.id, user_code=code, brand_user=user, skip_consent=True, source=guess_source(user)
                )
            )
            outcome = "approved" if res.grant_id else "denied"
            await ex.redirect(b.interface_url + "/oauth/connected?status=" + outcome)
            return
    except PactdError as err:
        await _consent_error(mw, ex, b, user, err)
        return
    v = View(
        title=f"Allow {d.agent_display_name}?",
        user=user,
        error=problem,
        action=b.decision_url,
        agent=d.agent_display_name,
        origin=d.agent_origin,
        brand=d.brand_display_name,
        code=d.user_code,
        expires=hhmm(d.expires_at),
        csrf=mw.pages.csrf(b.id, user, "consent " + d.user_code),
        scopes=scope_views(d),
    )
    await mw.pages.render(ex, status, "consent", v)


async def _consent_error(mw: PactMiddleware, ex: Exchange, b: BrandPages, user: str, err: PactdError) -> None:
    """Renders why a code cannot be decided."""
    v = View(title="Connect your assistant", user=user, action=b.consent_url)
    status = 400
    if err.code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
        v.error, status = "This code is unknown. Check the code your assistant shows and type it again.", 404
    elif err.code == grpc.StatusCode.FAILED_PRECONDITION:
        v.error = "This request was already decided or has expired. Ask your assistant to start again."
    elif err.code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        v.error, status = "Too many unknown codes were tried. Wait a few minutes, then try again.", 429
    else:
        mw.log_error("consent", ex.path, err)
        v.error, status = "Something went wrong on our side. Try again later.", 500
    await mw.pages.render(ex, status, "code", v)


async def decide(mw: PactMiddleware, ex: Exchange, c: Call) -> None:
    """Serves POST consent/decision: Allow grants the checked scopes; Deny
    refuses. The page showed the code to compare with the assistant's (RFC
    8628 §5.4), so Allow is the User's confirmation that they match; no code
    is typed again. A signed-assertion Brand's form carries a consent
    session instead."""
    if ex.header("sec-fetch-site") == "cross-site":
        await mw.pages.forbidden(ex, "")
        return
    b = await brand_pages(mw, ex, c.brand_id)
    if b is None:
        return
    if b.signed:
        await decide_signed(mw, ex, b)
        return
    if mw.sessions is None:
        await ex.bare(404)
        return
    got = await _form(mw, ex, c.brand_id)
    if got is None:
        return
    user, f = got
    code = first(f, "user_code")
    if not mw.pages.check_csrf(first(f, "csrf"), c.brand_id, user, "consent " + code):
        await mw.pages.forbidden(ex, user)
        return
    outcome = "denied"
    try:
        decision = first(f, "decision")
        if decision == "deny":
            await mw.pactd.deny_consent(
                delegation_pb2.DenyConsentRequest(brand_id=c.brand_id, user_code=code, source=guess_source(user))
            )
        elif decision == "allow":
            res = await mw.pactd.approve_consent(
                delegation_pb2.ApproveConsentRequest(
                    brand_id=c.brand_id, user_code=code, brand_user=user, scopes=f.get("scope", []), source=guess_source(user)
                )
            )
            if res.grant_id:
                outcome = "approved"
        else:
            await mw.pages.render(ex, 400, "message", View(title="Choose Allow or Deny", user=user))
            return
    except PactdError as err:
        await _consent_error(mw, ex, b, user, err)
        return
    await ex.redirect("../connected?status=" + outcome)


async def connected_page(mw: PactMiddleware, ex: Exchange, c: Call) -> None:
    """Serves GET connected: the User's grants at the Brand, one entry per PA
    with its grants grouped, each live PA with a Revoke button."""
    b = await brand_pages(mw, ex, c.brand_id)
    if b is None:
        return
    if b.signed:
        if first(parse_query(ex.query) or {}, "status") == "":
            # Nobody is signed in here: the Brand's login signs the User in
            # and posts its assertion back (begin_connected).
            await ex.redirect(b.connected_login_link())
            return
        await connected_signed(mw, ex, b)
        return
    if mw.sessions is None:
        await mw.not_found(ex)
        return
    user = await _signed_in(mw, ex, c.brand_id)
    if not user:
        return
    agents = await _user_agents(mw, ex, b, user)
    if agents is None:
        return
    q = parse_query(ex.query) or {}
    status = STATUS_TEXT.get(first(q, "status"), "")
    if first(q, "status") == "revoked":
        # Name what was revoked, from pactd's list: never words from the link.
        status = "Access was revoked."
        for a in agents:
            if a.id == first(q, "agent_id") and not a.live:
                status = "Revoked: " + a.name + " can no longer act for you here."
    v = View(
        title="Connected assistants at " + b.name,
        brand=b.name,
        user=user,
        action=b.interface_url + "/oauth/connected/revoke",
        status=status,
        agents=agents,
    )
    await mw.pages.render(ex, 200, "connected", v)


#: How many pages of grants the connected page reads at most.
MAX_GRANT_PAGES = 10


async def _list_grants(mw: PactMiddleware, brand_id: str, user: str) -> list[Any]:
    """Reads the User's grants at the Brand, newest first, at most
    MAX_GRANT_PAGES pages of 500."""
    grants: list[Any] = []
    token = ""
    for _ in range(MAX_GRANT_PAGES):
        res = await mw.pactd.list_grants(
            delegation_pb2.ListGrantsRequest(
                brand_id=brand_id, brand_user=user, page=common_pb2.PageRequest(page_size=500, page_token=token)
            )
        )
        grants.extend(res.grants)
        if not res.next_page_token:
            break
        token = res.next_page_token
    return grants


async def _user_agents(mw: PactMiddleware, ex: Exchange, b: BrandPages, user: str) -> list[AgentView] | None:
    """Is the User's grants grouped by PA, or None after the error page."""
    try:
        grants = await _list_grants(mw, b.id, user)
    except PactdError as err:
        mw.log_error("list grants", ex.path, err)
        await mw.pages.render(
            ex,
            500,
            "message",
            View(title="Connected assistants", user=user, error="Your connected assistants cannot be shown right now. Try again later."),
        )
        return None
    return group_grants(b, grants, datetime.now(timezone.utc).timestamp())


def _secs(ts: Any) -> float:
    return ts.seconds + ts.nanos / 1e9


def group_grants(b: BrandPages, grants: list[Any], now: float) -> list[AgentView]:
    """Makes one AgentView per PA, in the order of its newest grant, with its
    live grants first."""
    out: list[AgentView] = []
    index: dict[str, AgentView] = {}
    ended: dict[str, float] = {}
    for g in grants:
        a = index.get(g.agent_id)
        if a is None:
            a = index[g.agent_id] = AgentView(g.agent_id, g.agent_display_name)
            out.append(a)
        gv = GrantView(
            b.scope_views(g.scopes, g.authorization_details), day(g.create_time.seconds), day(g.expire_time.seconds), "Active", False
        )
        end = _secs(g.expire_time)
        if g.HasField("revoke_time"):
            gv.state, end = "Revoked", _secs(g.revoke_time)
        elif now >= end:
            gv.state = "Expired"
        else:
            gv.live = a.live = True
        if not gv.live and end > ended.get(g.agent_id, float("-inf")):
            ended[g.agent_id] = end
            a.state = gv.state
        a.grants.append(gv)
    for a in out:
        a.grants = [g for g in a.grants if g.live] + [g for g in a.grants if not g.live]
        if a.live:
            n = sum(1 for g in a.grants if g.live)
            a.state = f"Active · {n} grants" if n > 1 else "Active"
        else:
            a.ended = day(ended.get(a.id, 0))
    return out


async def confirm_revoke(mw: PactMiddleware, ex: Exchange, c: Call) -> None:
    """Serves GET connected/revoke?agent_id=…: the confirmation naming the PA
    and what it will lose."""
    b = await brand_pages(mw, ex, c.brand_id)
    if b is None:
        return
    if b.signed:
        # The signed-assertion confirmation is a POST carrying the session.
        await ex.redirect(b.connected_url)
        return
    user = await _signed_in(mw, ex, c.brand_id)
    if not user:
        return
    agents = await _user_agents(mw, ex, b, user)
    if agents is None:
        return
    agent_id = first(parse_query(ex.query) or {}, "agent_id")
    for a in agents:
        if a.id == agent_id and a.live:
            v = View(
                title="Revoke " + a.name + "?",
                brand=b.name,
                user=user,
                revoke=a,
                action=b.interface_url + "/oauth/connected/revoke",
                back=b.interface_url + "/oauth/connected",
                csrf=mw.pages.csrf(c.brand_id, user, "revoke " + agent_id),
            )
            await mw.pages.render(ex, 200, "revoke", v)
            return
    await mw.pages.render(
        ex,
        404,
        "message",
        View(title="Connected assistants", user=user, error="This assistant has no access to revoke. Go back to your connected assistants."),
    )


async def revoke_any(mw: PactMiddleware, ex: Exchange, c: Call) -> None:
    """Serves POST connected/revoke for either login mode."""
    b = await brand_pages(mw, ex, c.brand_id)
    if b is None:
        return
    if b.signed:
        await revoke_signed(mw, ex, b)
    elif mw.sessions is None:
        await mw.not_found(ex)
    else:
        await revoke(mw, ex, c)


async def revoke(mw: PactMiddleware, ex: Exchange, c: Call) -> None:
    """Serves POST connected/revoke: it revokes every live grant of one PA to
    the User, then the connected page names what was revoked."""
    got = await _form(mw, ex, c.brand_id)
    if got is None:
        return
    user, f = got
    agent_id = first(f, "agent_id")
    if not mw.pages.check_csrf(first(f, "csrf"), c.brand_id, user, "revoke " + agent_id):
        await mw.pages.forbidden(ex, user)
        return
    try:
        now = datetime.now(timezone.utc).timestamp()
        for g in await _list_grants(mw, c.brand_id, user):
            if g.agent_id != agent_id or g.HasField("revoke_time") or now >= _secs(g.expire_time):
                continue
            try:
                await mw.pactd.revoke_grant(
                    delegation_pb2.RevokeGrantRequest(brand_id=c.brand_id, grant_id=g.grant_id, brand_user=user)
                )
            except PactdError as err:
                if err.code != grpc.StatusCode.NOT_FOUND:  # NOT_FOUND: revoked meanwhile, or not this User's
                    raise
    except PactdError as err:
        mw.log_error("revoke grant", ex.path, err)
        await mw.pages.render(
            ex,
            500,
            "message",
            View(title="Connected assistants", user=user, error="Access could not be revoked right now. Try again later."),
        )
        return
    await ex.redirect("../connected?status=revoked&agent_id=" + query_escape(agent_id))


async def _signed_in(mw: PactMiddleware, ex: Exchange, brand_id: str) -> str:
    """Is the Brand user, or "" after sending the User to the Brand's login
    (which returns here)."""
    assert mw.sessions is not None
    user = mw.sessions.brand_user(ex.scope, brand_id)
    if user:
        return user
    await ex.redirect(mw.sessions.login_url(brand_id, ex.request_uri()))
    return ""


async def _form(mw: PactMiddleware, ex: Exchange, brand_id: str) -> tuple[str, Values] | None:
    """Reads a page's POST form from a signed-in User. A request another site
    started is refused before anything is read."""
    assert mw.sessions is not None
    user = mw.sessions.brand_user(ex.scope, brand_id)
    if not user or ex.header("sec-fetch-site") == "cross-site":
        await mw.pages.forbidden(ex, user)
        return None
    f = await read_page_form(mw, ex, user)
    if f is None:
        return None
    return user, f


async def read_page_form(mw: PactMiddleware, ex: Exchange, user: str) -> Values | None:
    """Reads a page's form, or answers 413 (past MAX_FORM_BYTES) or 400 (not
    a valid form) and returns None."""
    try:
        f = await read_form(ex)
    except FormTooLarge:
        await mw.pages.too_large(ex, user)
        return None
    if f is None:
        await mw.pages.render(ex, 400, "message", View(title="Bad request", user=user, error="The form could not be read."))
    return f
