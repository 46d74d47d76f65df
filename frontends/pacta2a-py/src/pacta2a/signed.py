"""The consent pages of a Brand in BRAND_LOGIN_MODE_SIGNED_ASSERTION.

They keep no state at the frontend and need no cookie: the Brand's login
(on the Brand's origin) posts its signed assertion to the consent URL,
pactd verifies it (BeginConsent) and hands back a consent session, the page
carries that session in its decision form, and the decision passes it to
pactd. Every form action is absolute, under the interface URL pactd names.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from collections.abc import Container, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import grpc

from ._pb import brand_pb2, delegation_pb2
from .client import PactdError
from .http import Exchange, FormTooLarge, first, parse_query, query_escape, read_form
from .pages import STATUS_TEXT, ScopeView, View, hhmm, scope_views

if TYPE_CHECKING:
    from .call import Call
    from .middleware import PactMiddleware


@dataclass(frozen=True, slots=True)
class BrandPages:
    """What the pages need to know of a Brand, from pactd's GetAgentCard."""

    id: str
    interface_url: str
    mode: int
    #: The Brand login link without a user code.
    verification: str
    #: The Brand card's scopes: id to the Brand's description.
    scopes: dict[str, str] = field(default_factory=dict)
    #: The Brand's display name (the card's name).
    name: str = ""

    def scope_views(self, ids: Iterable[str], details: Iterable[Any]) -> list[ScopeView]:
        """Are scope ids in the Brand's words (the id itself when the card no
        longer lists it), each with the words of the entries under it."""
        details = list(details)
        return [ScopeView(i, self.scopes.get(i) or i, [d.words for d in details if d.scope == i]) for i in ids]

    @property
    def signed(self) -> bool:
        """Reports whether the Brand's login posts signed assertions."""
        return self.mode == brand_pb2.BRAND_LOGIN_MODE_SIGNED_ASSERTION

    @property
    def consent_url(self) -> str:
        """Is the Brand's consent URL."""
        return self.interface_url + "/oauth/consent"

    @property
    def decision_url(self) -> str:
        """Is the Brand's consent decision URL."""
        return self.interface_url + "/oauth/consent/decision"

    @property
    def connected_url(self) -> str:
        """Is the Brand's connected page."""
        return self.interface_url + "/oauth/connected"

    def connected_login_link(self) -> str:
        """Is the Brand login link that returns to the connected page (Go's
        url.Values.Encode: keys sorted)."""
        try:
            u = urlsplit(self.verification)
        except ValueError:
            return self.verification
        q = parse_query(u.query.encode("utf-8")) or {}
        q["return_to"] = [self.connected_url]
        query = "&".join(query_escape(k) + "=" + query_escape(v) for k in sorted(q) for v in q[k])
        return urlunsplit((u.scheme, u.netloc, u.path, query, u.fragment))

    def login_link(self, code: str) -> str:
        """Is the Brand login link; with a user code it returns to the consent
        URL with that code, as verification_uri_complete does (Go's
        url.Values.Encode: keys sorted)."""
        if code == "":
            return self.verification
        try:
            u = urlsplit(self.verification)
        except ValueError:
            return self.verification
        q = parse_query(u.query.encode("utf-8")) or {}
        q["return_to"] = [self.consent_url + "?user_code=" + query_escape(code)]
        query = "&".join(query_escape(k) + "=" + query_escape(v) for k in sorted(q) for v in q[k])
        return urlunsplit((u.scheme, u.netloc, u.path, query, u.fragment))


def card_scopes(card_json: str) -> dict[str, str]:
    """Are the scopes of an Agent Card's userDelegation scheme: id to description."""
    return card_facts(card_json)[1]


def card_facts(card_json: str) -> tuple[str, dict[str, str]]:
    """Are an Agent Card's name (the Brand's display name) and the scopes of
    its userDelegation scheme."""
    try:
        c = json.loads(card_json)
    except (ValueError, RecursionError):
        return "", {}
    if not isinstance(c, dict):
        return "", {}
    name = c.get("name") if isinstance(c.get("name"), str) else ""
    try:
        scopes = c["securitySchemes"]["userDelegation"]["oauth2SecurityScheme"]["flows"]["deviceCode"]["scopes"]
    except (KeyError, TypeError):
        return name, {}
    if not isinstance(scopes, dict):
        return name, {}
    return name, {k: v if isinstance(v, str) else "" for k, v in scopes.items() if isinstance(k, str)}


async def brand_pages(mw: PactMiddleware, ex: Exchange, brand_id: str) -> BrandPages | None:
    """Asks pactd about the Brand of a page; an unknown Brand is a 404 (a page
    for browsers, see PactMiddleware.not_found), one without delegation a
    404 page (None after answering)."""
    try:
        res = await mw.pactd.get_agent_card(brand_id)
    except PactdError as err:
        if err.code == grpc.StatusCode.NOT_FOUND:
            await mw.not_found(ex, brand_id)
            return None
        mw.log_error("get agent card", ex.path, err)
        await mw.pages.render(
            ex, 500, "message", View(title="Connect your assistant", error="Something went wrong on our side. Try again later.")
        )
        return None
    if res.login_mode == brand_pb2.BRAND_LOGIN_MODE_UNSPECIFIED:
        await mw.pages.render(
            ex, 404, "message", View(title="Connect your assistant", error="This Brand does not let assistants act for you.")
        )
        return None
    name, scopes = card_facts(res.card_json)
    return BrandPages(brand_id, res.interface_url, res.login_mode, res.verification_uri, scopes, name or brand_id)


def client_source(ex: Exchange) -> str:
    """Names the browser's address to pactd's user-code guessing limits
    (hashed: printable, and no address in pactd's logs)."""
    client = ex.scope.get("client")
    host = str(client[0]) if client else ""
    return "ip:" + hashlib.sha256(host.encode("utf-8", "replace")).digest()[:12].hex()


async def begin_consent(mw: PactMiddleware, ex: Exchange, c: Call) -> None:
    """Serves POST consent from a signed-assertion Brand's login: one form
    field, assertion. pactd verifies it and uses it up; the page it renders
    carries the consent session. The post comes from the Brand's origin, so
    it is cross-site by design: the assertion is its credential."""
    b = await brand_pages(mw, ex, c.brand_id)
    if b is None:
        return
    if not b.signed:
        await mw.pages.render(
            ex,
            400,
            "message",
            View(title="Connect your assistant", error="This Brand's sign-in does not post here. Start again from your assistant."),
        )
        return
    try:
        f = await read_form(ex)
    except FormTooLarge:
        await mw.pages.too_large(ex, "")
        return
    if f is None or first(f, "assertion") == "":
        await mw.pages.render(
            ex, 400, "message", View(title="Connect your assistant", error="The sign-in could not be read. Start again from your assistant.")
        )
        return
    try:
        res = await mw.pactd.begin_consent(
            delegation_pb2.BeginConsentRequest(brand_id=c.brand_id, brand_assertion=first(f, "assertion"), source=client_source(ex))
        )
    except PactdError as err:
        await _signed_error(mw, ex, err)
        return
    if res.skipped_grant_id:
        # Consent skipped: a grant of this User to this PA covers the
        # request, and pactd approved it; answer as after an allow.
        await ex.redirect(
            b.interface_url
            + "/oauth/connected?client="
            + query_escape(res.client_id)
            + "&status=approved&scope="
            + query_escape(" ".join(res.granted_scopes))
        )
        return
    d = res.consent
    v = View(
        title=f"Allow {d.agent_display_name}?",
        user=res.brand_user,
        email=res.email,
        agent=d.agent_display_name,
        origin=d.agent_origin,
        brand=d.brand_display_name,
        code=d.user_code,
        expires=hhmm(d.expires_at),
        session=res.consent_session,
        action=res.decision_url,
        scopes=scope_views(d),
    )
    await mw.pages.render(ex, 200, "consent", v)


async def decide_signed(mw: PactMiddleware, ex: Exchange, b: BrandPages) -> None:
    """Serves a signed-assertion Brand's decision: the form's session (its
    only state and its anti-forgery token), decision and scopes. It answers
    303 to the connected page with the outcome."""
    try:
        f = await read_form(ex)
    except FormTooLarge:
        await mw.pages.too_large(ex, "")
        return
    session = first(f, "session") if f is not None else ""
    if f is None or session == "":
        await mw.pages.forbidden(ex, "")
        return
    client = granted = ""
    outcome = "denied"
    try:
        decision = first(f, "decision")
        if decision == "allow":
            res = await mw.pactd.approve_consent(
                delegation_pb2.ApproveConsentRequest(
                    brand_id=b.id, consent_session=session, scopes=f.get("scope", []), source=client_source(ex)
                )
            )
            client = res.client_id
            if res.grant_id:
                outcome, granted = "approved", " ".join(res.scopes)
        elif decision == "deny":
            dres = await mw.pactd.deny_consent(
                delegation_pb2.DenyConsentRequest(brand_id=b.id, consent_session=session, source=client_source(ex))
            )
            client = dres.client_id
        else:
            await mw.pages.render(ex, 400, "message", View(title="Choose Allow or Deny"))
            return
    except PactdError as err:
        await _signed_error(mw, ex, err)
        return
    nxt = b.interface_url + "/oauth/connected?client=" + query_escape(client) + "&status=" + outcome
    if outcome == "approved":
        nxt += "&scope=" + query_escape(granted)
    await ex.redirect(nxt)


def scope_list(s: str, scopes: Container[str]) -> bool:
    """Reports whether s is 1 to 50 of the Brand's scope ids separated by
    single spaces, as the decision's redirect writes them."""
    ids = s.split(" ")
    return len(ids) <= 50 and all(i in scopes for i in ids)


async def connected_signed(mw: PactMiddleware, ex: Exchange, b: BrandPages) -> None:
    """Answers the connected page of a signed-assertion Brand after a
    decision: the outcome the decision redirected with, and a link to the
    User's list (which needs the Brand's login: see begin_connected)."""
    q = parse_query(ex.query) or {}
    v = View(
        title="Connected assistants at " + b.name,
        brand=b.name,
        signed=True,
        status=STATUS_TEXT.get(first(q, "status"), ""),
        back=b.connected_url,
    )
    sc = first(q, "scope")
    # Only when it lists the Brand's scopes: no free text on our page.
    if first(q, "status") == "approved" and len(sc.encode("utf-8")) <= 2048 and scope_list(sc, b.scopes):
        v.granted = b.scope_views(sc.split(" "), [])
    await mw.pages.render(ex, 200, "connected", v)


# The connected page of a signed-assertion Brand works as its consent page
# does, with no cookie: GET connected sends the User to the Brand's login
# with return_to the connected URL; the login posts its signed assertion (aud
# the connected URL, no user_code) to the connected URL; pactd verifies and
# uses it up (BeginConnected) and answers the User's grants and a connected
# session, which the page's revoke forms carry in a hidden field (their only
# state and their anti-forgery token). Revoking confirms first (pactd
# relists the grants for the session), then calls RevokeConnected.


async def begin_connected(mw: PactMiddleware, ex: Exchange, c: Call) -> None:
    """Serves POST connected: from the Brand's login, one form field,
    assertion (cross-site by design: the assertion is its credential); or,
    from the revoke confirmation's "Keep it", the session."""
    b = await brand_pages(mw, ex, c.brand_id)
    if b is None:
        return
    if not b.signed:
        await mw.pages.render(
            ex,
            400,
            "message",
            View(title="Connected assistants", error="This Brand's sign-in does not post here. Open your connected assistants again."),
        )
        return
    status = 0
    try:
        f = await read_form(ex)
    except FormTooLarge:
        f, status = None, 413
    assertion = first(f, "assertion") if f is not None else ""
    session = first(f, "session") if f is not None else ""
    if f is None or (assertion == "") == (session == ""):
        await mw.pages.render(
            ex,
            status or 400,
            "message",
            View(title="Connected assistants", error="The sign-in could not be read. Open your connected assistants again."),
        )
        return
    req = delegation_pb2.BeginConnectedRequest(brand_id=c.brand_id, source=client_source(ex))
    if assertion:
        req.brand_assertion = assertion
    else:
        req.connected_session = session
    try:
        res = await mw.pactd.begin_connected(req)
    except PactdError as err:
        await _signed_error(mw, ex, err)
        return
    await _render_signed_connected(mw, ex, b, res.brand_user, res.connected_session, list(res.grants), "")


async def _render_signed_connected(
    mw: PactMiddleware, ex: Exchange, b: BrandPages, user: str, session: str, grants: list[Any], status: str
) -> None:
    """Renders the connected page of a signed-assertion Brand's User: the
    shared template, the revoke forms carrying session."""
    from .oauth import group_grants

    v = View(
        title="Connected assistants at " + b.name,
        brand=b.name,
        user=user,
        action=b.connected_url + "/revoke",
        agents=group_grants(b, grants, time.time()),
        session=session,
        status=status,
    )
    await mw.pages.render(ex, 200, "connected", v)


async def revoke_signed(mw: PactMiddleware, ex: Exchange, b: BrandPages) -> None:
    """Serves a signed-assertion Brand's revoke form: without confirm, the
    confirmation naming what the PA loses (pactd lists the grants for the
    session); with confirm, RevokeConnected and the page after it, naming
    what was revoked."""
    from .oauth import group_grants

    try:
        f = await read_form(ex)
    except FormTooLarge:
        await mw.pages.too_large(ex, "")
        return
    session = first(f, "session") if f is not None else ""
    agent_id = first(f, "agent_id") if f is not None else ""
    if f is None or session == "" or agent_id == "":
        await mw.pages.forbidden(ex, "")
        return
    if first(f, "confirm") == "":
        try:
            res = await mw.pactd.begin_connected(
                delegation_pb2.BeginConnectedRequest(brand_id=b.id, connected_session=session, source=client_source(ex))
            )
        except PactdError as err:
            await _signed_error(mw, ex, err)
            return
        for a in group_grants(b, list(res.grants), time.time()):
            if a.id == agent_id and a.live:
                v = View(
                    title="Revoke " + a.name + "?",
                    brand=b.name,
                    user=res.brand_user,
                    revoke=a,
                    action=b.connected_url + "/revoke",
                    back=b.connected_url,
                    session=session,
                )
                await mw.pages.render(ex, 200, "revoke", v)
                return
        await mw.pages.render(
            ex,
            404,
            "message",
            View(
                title="Connected assistants",
                user=res.brand_user,
                error="This assistant has no access to revoke. Go back to your connected assistants.",
            ),
        )
        return
    try:
        rres = await mw.pactd.revoke_connected(
            delegation_pb2.RevokeConnectedRequest(brand_id=b.id, connected_session=session, agent_id=agent_id, source=client_source(ex))
        )
    except PactdError as err:
        await _signed_error(mw, ex, err)
        return
    msg = "Access was revoked."
    for a in group_grants(b, list(rres.grants), time.time()):
        if a.id == agent_id and not a.live:
            msg = "Revoked: " + a.name + " can no longer act for you here."
    await _render_signed_connected(mw, ex, b, rres.brand_user, session, list(rres.grants), msg)


async def _signed_error(mw: PactMiddleware, ex: Exchange, err: PactdError) -> None:
    """Renders why pactd refused an assertion or a consent session (the
    ErrorInfo reason names it); nothing changed."""
    v = View(title="Connect your assistant")
    status = 400
    reason = err.reason
    if reason.endswith("_REPLAYED"):
        v.error = "This sign-in was used already. Start again from your assistant."
    elif reason.endswith("_NOT_PENDING"):
        v.error = "This request was already decided or has expired. Ask your assistant to start again."
    elif reason.endswith("_EXPIRED") or reason.endswith("_TOO_OLD"):
        v.error = "This page has expired. Start again from your assistant."
    elif err.code in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT):
        v.error, status = "This sign-in or form could not be verified. Start again from your assistant.", 403
    elif err.code == grpc.StatusCode.NOT_FOUND:
        v.error, status = "This code is unknown. Start again from your assistant.", 404
    elif err.code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        v.error, status = "Too many unknown codes were tried. Wait a few minutes, then try again.", 429
    elif err.code == grpc.StatusCode.UNAVAILABLE:
        v.error, status = "The sign-in cannot be checked right now. Try again in a minute.", 503
    else:
        mw.log_error("consent", ex.path, err)
        v.error, status = "Something went wrong on our side. Try again later.", 500
    await mw.pages.render(ex, status, "message", v)
