"""The Provider's HTML pages: consent, code entry, connected apps, messages.

Byte for byte what cmd/pact-a2a's pages.html renders through Go's
html/template (and frontends/node/src/pages.ts), with the same headers:
nothing runs but the page's own style sheet (allowed by its hash), no frame
may hold it, no cache keeps it, no Referer leaves it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

from .http import Exchange

#: The pages' only style sheet (the Go frontend's, byte for byte).
PAGE_CSS = """body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1b1f24;background:#f4f5f7}
header{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.25em 1em;padding:.75em 1.5em;background:#1d3557;color:#fff}
main{max-width:40em;margin:2em auto;padding:1.5em 2em;background:#fff;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4em;line-height:1.3}h2{font-size:1.1em;margin:0}
.agent{color:#1d3557}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25em 1em}
.facts dt{font-weight:600}.facts dd{margin:0;overflow-wrap:anywhere}
fieldset{border:1px solid #c5cad3;border-radius:6px;margin:1em 0;padding:.5em 1em}
legend{font-weight:600;padding:0 .25em}
.scope{display:flex;gap:.5em;align-items:baseline;margin:.5em 0}
.scope input{width:1.15em;height:1.15em;flex:none}
code,.id{font-size:.8em;color:#5f6875}
.hint{font-size:.9em;color:#4a5260}
.details{margin:0 0 .5em 1.9em;padding-left:1em}
.usercode{font:600 1.3em ui-monospace,monospace;letter-spacing:.1em;white-space:nowrap}
.compare{padding:.75em 1em;border:2px dashed #1d3557;border-radius:6px;text-align:center}
label{display:block;font-weight:600}.scope label{display:inline;font-weight:400}
input[type=text],input:not([type]){font:1.1em ui-monospace,monospace;padding:.4em;margin:.3em 0 1em;border:1px solid #8a94a3;border-radius:4px;max-width:100%;box-sizing:border-box}
.buttons{display:flex;flex-wrap:wrap;gap:1em;margin-top:1em}
button,a.button{font:inherit;font-weight:600;padding:.5em 1.5em;border-radius:4px;border:2px solid #1d3557;background:#1d3557;color:#fff;cursor:pointer;text-decoration:none}
button.secondary,a.button.secondary{background:#fff;color:#1d3557}
button.danger{background:#b3261e;border-color:#b3261e}
button:focus-visible,input:focus-visible,a:focus-visible{outline:3px solid #e76f51;outline-offset:2px}
.error{padding:.5em 1em;border-left:4px solid #b3261e;background:#fdecea}
.status{padding:.5em 1em;border-left:4px solid #2a9d8f;background:#e8f6f4}
.pas,.brands,.grants{list-style:none;margin:0;padding:0}
.pa,.brand{border:1px solid #dde1e6;border-radius:6px;padding:.75em 1em;margin:.75em 0}
.pa-head{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:baseline;gap:.25em 1em}
.state{font-size:.85em;font-weight:600;padding:.1em .6em;border-radius:1em;background:#e8f6f4;color:#1f6f65;white-space:nowrap}
.state.off{background:#eceef1;color:#4a5260}
.grants>li{margin:.5em 0;padding-top:.5em;border-top:1px solid #eceef1}
.grants ul{margin:.25em 0;padding-left:1.25em}
.when{font-size:.9em;color:#4a5260}.when time{white-space:nowrap}
.pa form{margin:.5em 0 0}
@media (max-width:40em){main{margin:0;padding:1em;border-radius:0;box-shadow:none}header{padding:.5em 1em}.facts{grid-template-columns:1fr}.facts dd{margin-bottom:.5em}}"""

_ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;", "+": "&#43;", "\0": "\ufffd"}
_ESC_RE = re.compile("[&<>\"'+\0]")


def esc(s: str) -> str:
    """Escapes text for HTML text and quoted attribute values as Go's
    html/template does."""
    return _ESC_RE.sub(lambda m: _ESC[m.group(0)], s)


_URL_KEEP = re.compile(r"[A-Za-z0-9\-._~!#$&*+,/:;=?@\[\]%]")


def esc_url(s: str) -> str:
    """Escapes a URL attribute value as html/template does: a URL with a
    scheme other than http, https or mailto becomes "#ZgotmplZ"; other bytes
    than RFC 3986's are percent-encoded; then attribute escaping."""
    scheme, colon, _ = s.partition(":")
    if colon and "/" not in scheme and scheme.lower() not in ("http", "https", "mailto"):
        return "#ZgotmplZ"
    out = "".join(c if _URL_KEEP.fullmatch(c) else "".join("%%%02x" % b for b in c.encode("utf-8")) for c in s)
    return esc(out)


@dataclass(slots=True)
class ScopeView:
    """One requested scope; details are the conditions in words of the
    authorization_details entries that need it (PACT §5.7), as pactd wrote them."""

    id: str
    description: str
    details: list[str] = field(default_factory=list)


@dataclass(slots=True)
class GrantView:
    """One grant of a PA on the connected page: its scopes in the Brand's
    words, each with its authorization_details in words."""

    scopes: list[ScopeView]
    since: str
    expires: str
    state: str
    live: bool


@dataclass(slots=True)
class AgentView:
    """One PA on the connected page: its grants, live ones first; live while
    one of them is; ended is when its last grant ended, when none is live."""

    id: str
    name: str
    live: bool = False
    state: str = ""
    ended: str = ""
    grants: list[GrantView] = field(default_factory=list)


@dataclass(slots=True)
class BrandView:
    """One Brand on the root page."""

    id: str
    name: str
    description: str
    card: str
    connected: str


@dataclass(slots=True)
class View:
    """What a page shows."""

    title: str
    user: str = ""
    error: str = ""
    status: str = ""
    #: The absolute URL the page's forms post (or get) to.
    action: str = ""
    agent: str = ""
    origin: str = ""
    brand: str = ""
    code: str = ""
    expires: str = ""
    csrf: str = ""
    scopes: list[ScopeView] = field(default_factory=list)
    #: A signed-assertion Brand's consent session (its form's only state and
    #: anti-forgery token), or the connected session of its connected and
    #: revoke pages (the revoke forms' only state and anti-forgery token);
    #: email is the User's, from the Brand's assertion.
    session: str = ""
    email: str = ""
    #: The connected page's PAs, each with its grants grouped.
    agents: list[AgentView] = field(default_factory=list)
    #: The connected page of a signed-assertion Brand shows only the
    #: outcome, granted (the scopes in the Brand's words).
    signed: bool = False
    granted: list[ScopeView] = field(default_factory=list)
    #: The PA the revoke confirmation names; back is the connected page
    #: (also linked from a signed-assertion Brand's outcome page).
    revoke: AgentView | None = None
    back: str = ""
    #: The root page's Brands.
    brands: list[BrandView] = field(default_factory=list)


def _top(v: View) -> str:
    who = f'<span class="who">Signed in as <strong>{esc(v.user)}</strong></span>' if v.user else ""
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(v.title)}</title>\n<style>{PAGE_CSS}</style>\n</head>\n<body>\n"
        f'<header><span class="provider">PACT Provider</span>{who}</header>\n<main>\n'
    )


_BOTTOM = "</main>\n</body>\n</html>\n"


def _error_line(v: View) -> str:
    return f'<p class="error" role="alert">{esc(v.error)}</p>' if v.error else ""


def _code(v: View) -> str:
    return (
        f"{_top(v)}\n<h1>{esc(v.title)}</h1>\n{_error_line(v)}\n"
        f'<form method="get" action="{esc_url(v.action)}">\n'
        '<label for="user_code">Type the code your assistant shows you</label>\n'
        '<input id="user_code" name="user_code" required autocomplete="off" autocapitalize="characters" '
        'spellcheck="false" placeholder="XXXX-XXXX" maxlength="16">\n'
        '<div class="buttons"><button type="submit">Continue</button></div>\n'
        f"</form>\n{_BOTTOM}"
    )


def _consent(v: View) -> str:
    email = f"<dt>Your email</dt><dd>{esc(v.email)}</dd>\n" if v.email else ""
    if v.session:
        state = f'<input type="hidden" name="session" value="{esc(v.session)}">\n'
    else:
        state = (
            f'<input type="hidden" name="csrf" value="{esc(v.csrf)}">\n'
            f'<input type="hidden" name="user_code" value="{esc(v.code)}">\n'
        )
    scopes = ""
    for i, s in enumerate(v.scopes):
        scopes += (
            f'<div class="scope">\n<input type="checkbox" id="scope-{i}" name="scope" value="{esc(s.id)}" checked>\n'
            f'<label for="scope-{i}">{esc(s.description)} <span class="id">{esc(s.id)}</span></label>\n</div>\n'
        )
        if s.details:
            items = "".join(f"<li>{esc(d)}</li>" for d in s.details)
            scopes += f'<ul class="details" aria-label="Only for">{items}</ul>\n'
    return (
        f'{_top(v)}\n<h1>Allow <span class="agent">{esc(v.agent)}</span> to act for you at {esc(v.brand)}?</h1>\n'
        f"{_error_line(v)}\n"
        '<dl class="facts">\n'
        f"<dt>Personal agent</dt><dd>{esc(v.agent)}</dd>\n"
        f"<dt>Operated from</dt><dd><code>{esc(v.origin)}</code></dd>\n"
        f"<dt>Account at</dt><dd>{esc(v.brand)}</dd>\n"
        f"{email}</dl>\n"
        f'<form method="post" action="{esc_url(v.action)}">\n{state}\n'
        f"<fieldset>\n<legend>{esc(v.agent)} asks to</legend>\n"
        f'{scopes}<p class="hint">Uncheck what you do not want to share.</p>\n</fieldset>\n'
        '<div class="code" id="code-help">\n'
        f"<p>Allow only if your assistant shows this same code. This request expires at {esc(v.expires)}.</p>\n"
        f'<p class="compare"><strong class="usercode">{esc(v.code)}</strong></p>\n'
        '<p class="hint">If your assistant shows another code, or you did not ask it to connect, choose Deny.</p>\n'
        "</div>\n"
        '<div class="buttons">\n'
        '<button type="submit" name="decision" value="allow" aria-describedby="code-help">Allow</button>\n'
        '<button type="submit" name="decision" value="deny" class="secondary" formnovalidate>Deny</button>\n'
        f"</div>\n</form>\n{_BOTTOM}"
    )


def _scope_list(scopes: list[ScopeView]) -> str:
    items = ""
    for s in scopes:
        details = "".join(f"<li>{esc(d)}</li>" for d in s.details)
        sub = f'<ul class="hint">{details}</ul>' if s.details else ""
        items += f'<li>{esc(s.description)} <span class="id">{esc(s.id)}</span>{sub}</li>\n'
    return f"<ul>{items}</ul>"


def _connected(v: View) -> str:
    status = f'<p class="status" role="status">{esc(v.status)}</p>' if v.status else ""
    if v.signed:
        granted = f"<p>You shared:</p>\n{_scope_list(v.granted)}" if v.granted else ""
        back = f'<p><a href="{esc_url(v.back)}">See all your connected assistants</a></p>' if v.back else ""
        body = f"{granted}\n<p>You can close this page and go back to your assistant.</p>\n{back}\n"
    elif v.agents:
        entries = ""
        for a in v.agents:
            off = "" if a.live else " off"
            entries += (
                f'<li class="pa" data-agent="{esc(a.id)}">\n'
                f'<div class="pa-head"><h2>{esc(a.name)}</h2><span class="state{off}">{esc(a.state)}</span></div>\n'
            )
            if a.live:
                grants = "".join(
                    f"<li>May:{_scope_list(g.scopes)}\n"
                    f'<span class="when">Since <time>{esc(g.since)}</time> · expires <time>{esc(g.expires)}</time></span></li>\n'
                    for g in a.grants
                    if g.live
                )
                if v.session:
                    form = (
                        f'<form method="post" action="{esc_url(v.action)}">'
                        f'<input type="hidden" name="session" value="{esc(v.session)}">'
                    )
                else:
                    form = f'<form method="get" action="{esc_url(v.action)}">'
                entries += (
                    f'<ul class="grants">\n{grants}</ul>\n'
                    f'{form}<input type="hidden" name="agent_id" value="{esc(a.id)}">'
                    f'<button type="submit" class="secondary" aria-label="Revoke access of {esc(a.name)}">Revoke…</button></form>\n'
                )
            else:
                entries += f'<p class="when">{esc(a.state)} <time>{esc(a.ended)}</time></p>'
            entries += "\n</li>\n"
        body = f"<p>Personal agents you allowed to act for you at {esc(v.brand)}:</p>\n<ul class=\"pas\">\n{entries}</ul>\n"
    else:
        body = f"<p>At {esc(v.brand)}, no personal agent is connected to your account.</p>"
    return f"{_top(v)}\n<h1>{esc(v.title)}</h1>\n{status}\n{body}\n{_BOTTOM}"


def _revoke(v: View) -> str:
    body = ""
    a = v.revoke
    if a is not None:
        lost = "".join(_scope_list(g.scopes) for g in a.grants if g.live)
        if v.session:
            state = (
                f'<input type="hidden" name="session" value="{esc(v.session)}">\n'
                '<input type="hidden" name="confirm" value="1">'
            )
            keep = f'<button type="submit" class="secondary" formaction="{esc_url(v.back)}">Keep it</button>'
        else:
            state = f'<input type="hidden" name="csrf" value="{esc(v.csrf)}">'
            keep = f'<a class="button secondary" href="{esc_url(v.back)}">Keep it</a>'
        body = (
            f"<p>At {esc(v.brand)}, <strong>{esc(a.name)}</strong> will no longer be able to act for you. It loses:</p>\n"
            f"{lost}\n"
            '<p class="hint">Your assistant has to ask again, and you to allow it, before it can act for you here.</p>\n'
            f'<form method="post" action="{esc_url(v.action)}">\n'
            f"{state}\n"
            f'<input type="hidden" name="agent_id" value="{esc(a.id)}">\n'
            f'<div class="buttons"><button type="submit" class="danger">Revoke {esc(a.name)}</button>\n'
            f"{keep}</div>\n"
            "</form>"
        )
    return f"{_top(v)}\n<h1>{esc(v.title)}</h1>\n{body}\n{_BOTTOM}"


def _root(v: View) -> str:
    if v.brands:
        items = ""
        for b in v.brands:
            desc = f'<p class="hint">{esc(b.description)}</p>' if b.description else ""
            conn = f' · <a href="{esc_url(b.connected)}">Connected assistants</a>' if b.connected else ""
            items += (
                f'<li class="brand" data-brand="{esc(b.id)}"><h2>{esc(b.name)} <span class="id">{esc(b.id)}</span></h2>\n'
                f'{desc}\n<a href="{esc_url(b.card)}">Agent Card</a>{conn}</li>\n'
            )
        body = f'<ul class="brands">\n{items}</ul>\n'
    elif v.error:
        body = ""
    else:
        body = "<p>No Brand is set up yet.</p>"
    return (
        f"{_top(v)}\n<h1>{esc(v.title)}</h1>\n"
        "<p>A PACT Provider's A2A frontend. Personal agents find each Brand by its Agent Card.</p>\n"
        f"{_error_line(v)}\n{body}\n{_BOTTOM}"
    )


def _notfound(v: View) -> str:
    return (
        f'{_top(v)}\n<h1>{esc(v.title)}</h1>\n<p class="error" role="alert">{esc(v.error)}</p>\n'
        f'<p><a href="/">See the Brands this Provider serves</a></p>\n{_BOTTOM}'
    )


def _message(v: View) -> str:
    return f"{_top(v)}\n<h1>{esc(v.title)}</h1>\n{_error_line(v)}\n{_BOTTOM}"


#: What the connected page says after a decision or a revocation.
#: What the connected page says after a decision; each is true whatever
#: else the page lists (a denial shares nothing new, and the User's other
#: grants stay as they were).
STATUS_TEXT = {
    "approved": "Done: your assistant is connected.",
    "denied": "You denied the request: nothing new was shared.",
}


def hhmm(ts: Any) -> str:
    """Formats a protobuf Timestamp as Go's "15:04 MST" in UTC."""
    return datetime.fromtimestamp(ts.seconds, tz=timezone.utc).strftime("%H:%M UTC")


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def day(seconds: float) -> str:
    """Formats a Unix time as Go's "2 Jan 2006" in UTC: short, one line."""
    d = datetime.fromtimestamp(seconds, tz=timezone.utc)
    return f"{d.day} {_MONTHS[d.month - 1]} {d.year}"


def scope_views(d: Any) -> list[ScopeView]:
    """Are a DescribeConsentResponse's scopes for the consent page, each with
    the words of the authorization_details entries that need it (PACT §5.7)."""
    return [ScopeView(s.id, s.description, [a.words for a in d.authorization_details if a.scope == s.id]) for s in d.scopes]


_TEMPLATES = {
    "code": _code,
    "consent": _consent,
    "connected": _connected,
    "revoke": _revoke,
    "root": _root,
    "notfound": _notfound,
    "message": _message,
}


class Pages:
    """Renders the pages; its key (random per process) signs the forms'
    anti-forgery tokens."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or secrets.token_bytes(32)
        digest = hashlib.sha256(PAGE_CSS.encode()).digest()
        self.style_src = "'sha256-" + base64.b64encode(digest).decode() + "'"

    def csp(self, action: str) -> str:
        """Is a page's Content-Security-Policy: nothing runs but its style
        sheet, no frame may hold it, and its forms may post only to this
        origin and to the origin of its (absolute) form action."""
        form_action = "'self'"
        try:
            u = urlsplit(action)
            host = u.netloc.rpartition("@")[2]
            if u.scheme in ("http", "https") and host:
                form_action += f" {u.scheme}://{host}"
        except ValueError:
            pass
        return (
            f"default-src 'none'; style-src {self.style_src}; form-action {form_action}; "
            "frame-ancestors 'none'; base-uri 'none'"
        )

    def render_bytes(self, name: str, v: View) -> bytes:
        """Is a page's HTML."""
        return _TEMPLATES[name](v).encode("utf-8")

    async def render(self, ex: Exchange, status: int, name: str, v: View) -> None:
        """Sends a page with its headers."""
        body = self.render_bytes(name, v)
        await ex.respond(
            status,
            [
                ("content-type", "text/html; charset=utf-8"),
                ("content-security-policy", self.csp(v.action)),
                ("x-frame-options", "DENY"),
                ("cache-control", "no-store"),
                ("referrer-policy", "no-referrer"),
                ("x-content-type-options", "nosniff"),
            ],
            body,
        )

    async def forbidden(self, ex: Exchange, user: str) -> None:
        """Answers a form that is expired, forged or from another site."""
        await self.render(
            ex,
            403,
            "message",
            View(
                title="Please try again",
                user=user,
                error="This form has expired or was not sent from this site. Go back, reload the page and try again.",
            ),
        )

    async def too_large(self, ex: Exchange, user: str) -> None:
        """Answers a form past MAX_FORM_BYTES: 413, and the connection closes
        (its body is left unread)."""
        await self.render(
            ex, 413, "message", View(title="Request too large", user=user, error="The form is larger than this page accepts.")
        )

    def csrf(self, brand_id: str, user: str, purpose: str) -> str:
        """Is the anti-forgery token of one form: an HMAC of the Brand, the
        signed-in User and what the form decides."""
        m = hmac.new(self._key, digestmod=hashlib.sha256)
        for s in (brand_id, user, purpose):
            m.update(s.encode("utf-8", "replace"))
            m.update(b"\0")
        return base64.urlsafe_b64encode(m.digest()).rstrip(b"=").decode()

    def check_csrf(self, token: str, brand_id: str, user: str, purpose: str) -> bool:
        """Reports whether token is the form's anti-forgery token."""
        return token != "" and hmac.compare_digest(token.encode("utf-8", "replace"), self.csrf(brand_id, user, purpose).encode())
