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
header{display:flex;justify-content:space-between;gap:1em;padding:.75em 1.5em;background:#1d3557;color:#fff}
main{max-width:38em;margin:2em auto;padding:1.5em 2em;background:#fff;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4em;line-height:1.3}
.agent{color:#1d3557}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25em 1em}
.facts dt{font-weight:600}.facts dd{margin:0}
fieldset{border:1px solid #c5cad3;border-radius:6px;margin:1em 0;padding:.5em 1em}
legend{font-weight:600;padding:0 .25em}
.scope{display:flex;gap:.5em;align-items:baseline;margin:.5em 0}
.scope input{width:1.15em;height:1.15em}
code{font-size:.85em;color:#4a5260}
.hint{font-size:.9em;color:#4a5260}
.details{margin:0 0 .5em 1.9em;padding-left:1em}
.usercode{font:600 1.2em ui-monospace,monospace;letter-spacing:.1em}
label{display:block;font-weight:600}.scope label{display:inline;font-weight:400}
input[type=text],input:not([type]){font:1.1em ui-monospace,monospace;padding:.4em;margin:.3em 0 1em;border:1px solid #8a94a3;border-radius:4px}
.buttons{display:flex;gap:1em;margin-top:1em}
button{font:inherit;font-weight:600;padding:.5em 1.5em;border-radius:4px;border:2px solid #1d3557;background:#1d3557;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#1d3557}
button:focus-visible,input:focus-visible{outline:3px solid #e76f51;outline-offset:2px}
.error{padding:.5em 1em;border-left:4px solid #b3261e;background:#fdecea}
.status{padding:.5em 1em;border-left:4px solid #2a9d8f;background:#e8f6f4}
table{width:100%;border-collapse:collapse}caption{text-align:left;padding:.5em 0}
th,td{text-align:left;padding:.4em;border-bottom:1px solid #dde1e6}
.hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}"""

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
    """One row of the connected-apps page."""

    id: str
    agent: str
    scopes: str
    since: str
    state: str
    live: bool
    details: list[str] = field(default_factory=list)


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
    #: anti-forgery token); email is the User's, from the Brand's assertion.
    session: str = ""
    email: str = ""
    grants: list[GrantView] = field(default_factory=list)
    #: The connected page of a signed-assertion Brand shows only the outcome.
    signed: bool = False
    granted: str = ""


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
            f'<label for="scope-{i}">{esc(s.description)} <code>{esc(s.id)}</code></label>\n</div>\n'
        )
        if s.details:
            items = "".join(f"<li>{esc(d)}</li>" for d in s.details)
            scopes += f'<ul class="details" aria-label="Only for">{items}</ul>\n'
    typed = ""
    if not v.session:
        typed = (
            '<label for="confirm_code">Type the code your assistant shows</label>\n'
            '<input id="confirm_code" name="confirm_code" required autocomplete="off" autocapitalize="characters" '
            'spellcheck="false" placeholder="XXXX-XXXX" maxlength="16" aria-describedby="code-help">\n'
        )
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
        '<div class="code">\n'
        f'<p id="code-help">Only allow this if your assistant shows the code <strong class="usercode">{esc(v.code)}</strong>. '
        f"This request expires at {esc(v.expires)}.</p>\n"
        f"{typed}</div>\n"
        '<div class="buttons">\n'
        '<button type="submit" name="decision" value="allow">Allow</button>\n'
        '<button type="submit" name="decision" value="deny" class="secondary" formnovalidate>Deny</button>\n'
        f"</div>\n</form>\n{_BOTTOM}"
    )


def _connected(v: View) -> str:
    status = f'<p class="status" role="status">{esc(v.status)}</p>' if v.status else ""
    if v.signed:
        granted = f"<p>Shared: <code>{esc(v.granted)}</code></p>" if v.granted else ""
        body = f"{granted}\n<p>You can close this page and go back to your assistant.</p>\n"
    elif v.grants:
        rows = ""
        for g in v.grants:
            details = "".join(f'<br><span class="hint">{esc(d)}</span>' for d in g.details)
            button = ""
            if g.live:
                button = (
                    f'<form method="post" action="{esc_url(v.action)}"><input type="hidden" name="csrf" value="{esc(v.csrf)}">'
                    f'<input type="hidden" name="grant_id" value="{esc(g.id)}"><button type="submit" class="secondary" '
                    f'aria-label="Revoke access of {esc(g.agent)}">Revoke</button></form>'
                )
            rows += (
                f"<tr>\n<td>{esc(g.agent)}</td><td><code>{esc(g.scopes)}</code>{details}</td><td>{esc(g.since)}</td>"
                f"<td>{esc(g.state)}</td>\n<td>{button}</td>\n</tr>\n"
            )
        body = (
            "<table>\n<caption>Personal agents you allowed to act for you</caption>\n"
            '<thead><tr><th scope="col">Agent</th><th scope="col">May</th><th scope="col">Since</th>'
            '<th scope="col">Status</th><th scope="col"><span class="hidden">Action</span></th></tr></thead>\n'
            f"<tbody>\n{rows}</tbody>\n</table>\n"
        )
    else:
        body = "<p>No personal agent is connected to your account.</p>"
    return f"{_top(v)}\n<h1>{esc(v.title)}</h1>\n{status}\n{body}\n{_BOTTOM}"


def _message(v: View) -> str:
    return f"{_top(v)}\n<h1>{esc(v.title)}</h1>\n{_error_line(v)}\n{_BOTTOM}"


#: What the connected page says after a decision or a revocation.
STATUS_TEXT = {
    "approved": "Done: your assistant is connected.",
    "denied": "Done: nothing was shared.",
    "revoked": "Done: access was revoked.",
}


def hhmm(ts: Any) -> str:
    """Formats a protobuf Timestamp as Go's "15:04 MST" in UTC."""
    return datetime.fromtimestamp(ts.seconds, tz=timezone.utc).strftime("%H:%M UTC")


def day_time(ts: Any) -> str:
    """Formats a protobuf Timestamp as Go's "2006-01-02 15:04 MST" in UTC."""
    return datetime.fromtimestamp(ts.seconds, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def scope_views(d: Any) -> list[ScopeView]:
    """Are a DescribeConsentResponse's scopes for the consent page, each with
    the words of the authorization_details entries that need it (PACT §5.7)."""
    return [ScopeView(s.id, s.description, [a.words for a in d.authorization_details if a.scope == s.id]) for s in d.scopes]


_TEMPLATES = {"code": _code, "consent": _consent, "connected": _connected, "message": _message}


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
