"""The demo Brand's sign-in, as cmd/pact-a2a/demo's. It serves the
verification URI pactd builds from the Brand's login_url::

    GET  /demo/{brandId}/login?return_to=…   the form
    POST /demo/{brandId}/login               sign in, then back to return_to

and, as a pacta2a.Sessions, tells the consent and connected-apps pages who
is signed in: a cookie per Brand holding the user name, its expiry and an
HMAC under a key of this process. return_to may only name this Brand's
consent or connected-apps page, and only its path and query are kept, so a
sign-in never sends the User to another site. Nothing here checks a
password: it is a demo.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from typing import Awaitable, Callable
from urllib.parse import quote, urlsplit

from .web import Exchange, FormTooLarge, Receive, Scope, Send, cookie, esc, first, is_token, parse_query
from .web import path_escape, path_unescape, query_escape, read_form

#: How long a demo sign-in lasts, in seconds.
SESSION_TTL = 3600

LOGIN_CSS = """body{margin:0;font:16px/1.5 Georgia,serif;color:#2b1d0e;background:#fbf6ef}
header{padding:.75em 1.5em;background:#6f4e37;color:#fff;font-weight:700;letter-spacing:.05em}
main{max-width:26em;margin:2em auto;padding:1.5em 2em;background:#fff;border:1px solid #e2d6c6;border-radius:8px}
label{display:block;font-weight:700}
input{font:1.1em system-ui,sans-serif;padding:.4em;margin:.3em 0 1em;width:95%;border:1px solid #8c7a66;border-radius:4px}
button{font:inherit;font-weight:700;padding:.5em 1.5em;border:0;border-radius:4px;background:#6f4e37;color:#fff}
button:focus-visible,input:focus-visible{outline:3px solid #d4a017;outline-offset:2px}
.error{padding:.5em 1em;border-left:4px solid #b3261e;background:#fdecea}.note{color:#6b5a48;font-size:.9em}"""


def _page(brand: str, user: str, return_to: str, error: str) -> str:
    signed = f" You are signed in as <strong>{esc(user)}</strong>." if user else ""
    problem = f'<p class="error" role="alert">{esc(error)}</p>' if error else ""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in to {esc(brand)}</title>
<style>{LOGIN_CSS}</style>
</head>
<body>
<header>{esc(brand)}</header>
<main>
<h1>Sign in to {esc(brand)}</h1>
<p class="note">This is the Brand's own sign-in page, in a demo: any user name works and there is no password.{signed}</p>
{problem}
<form method="post">
<input type="hidden" name="return_to" value="{esc(return_to)}">
<label for="username">User name</label>
<input id="username" name="username" required autocomplete="username" maxlength="64" pattern="[a-z0-9._\\-]+" aria-describedby="username-help">
<p id="username-help" class="note">Lower-case letters, digits, dot, dash or underscore, for example alice.</p>
<button type="submit">Sign in</button>
</form>
</main>
</body>
</html>"""


_USER = re.compile(r"[a-z0-9._\-]{1,64}")
_BRAND_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_INT = re.compile(r"[+-]?[0-9]{1,19}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def cookie_name(brand_id: str) -> str:
    """Is the sign-in cookie's name for a Brand."""
    return "demo_session_" + brand_id


def return_path(raw: str, brand_id: str) -> str | None:
    """Is the path and query of return_to when it names this Brand's consent
    or connected-apps page ("" means the connected-apps page), else None."""
    base = "/a2a/" + brand_id + "/oauth/"
    if raw == "":
        return base + "connected"
    if _CONTROL.search(raw):  # Go's url.Parse refuses control characters
        return None
    try:
        u = urlsplit(raw)
    except ValueError:
        return None
    path = path_unescape(u.path)
    if path not in (base + "consent", base + "connected"):
        return None
    return quote(path, safe="/$&+,:;=@") + ("?" + u.query if u.query else "")


class DemoLogin:
    """The demo Brand's cookie sign-in (an ASGI app for its two routes) and
    the frontend's Sessions."""

    def __init__(self, now: Callable[[], float] = time.time) -> None:
        self._key = secrets.token_bytes(32)
        self._now = now
        #: Names a Brand on the sign-in page (its display name, e.g.
        #: app.brand_name); the Brand id when None or "".
        self.brand_name: Callable[[str], Awaitable[str]] | None = None
        digest = hashlib.sha256(LOGIN_CSS.encode()).digest()
        self._csp = (
            "default-src 'none'; style-src 'sha256-" + base64.b64encode(digest).decode() + "'; "
            "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        )

    def login_url(self, brand_id: str, return_to: str) -> str:
        """Implements Sessions."""
        return "/demo/" + path_escape(brand_id) + "/login?return_to=" + query_escape(return_to)

    def brand_user(self, scope: Scope, brand_id: str) -> str:
        """Implements Sessions: the user name of a valid, unexpired cookie for
        the Brand, or ""."""
        headers = [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == b"cookie"]
        value = cookie(headers, cookie_name(brand_id))
        if value is None:
            return ""
        user, _, rest = value.partition("|")
        exp, _, sig = rest.partition("|")
        if not _INT.fullmatch(exp) or self._now() >= int(exp):
            return ""
        if not hmac.compare_digest(sig.encode(), self._sign(brand_id, user, exp).encode()):
            return ""
        return user

    def _sign(self, brand_id: str, user: str, exp: str) -> str:
        m = hmac.new(self._key, (brand_id + "\0" + user + "\0" + exp).encode("utf-8", "replace"), hashlib.sha256)
        return base64.urlsafe_b64encode(m.digest()).rstrip(b"=").decode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        ex = Exchange(scope, receive, send)
        brand_id = scope["path_params"]["brand_id"]
        if ex.method != "POST":
            await self._render(ex, brand_id, 200, first(parse_query(ex.query) or {}, "return_to"), "")
            return
        try:
            f = await read_form(ex)
        except FormTooLarge:
            await self._render(ex, brand_id, 413, "", "The form is larger than this page accepts.")
            return
        if f is None:
            await self._render(ex, brand_id, 400, "", "The form could not be read.")
            return
        return_to = first(f, "return_to")
        nxt = return_path(return_to, brand_id)
        if nxt is None:
            await self._render(
                ex, brand_id, 400, "", f"This sign-in link does not lead back to {brand_id}. Start again from your assistant."
            )
            return
        user = first(f, "username")
        if not _USER.fullmatch(user):
            await self._render(ex, brand_id, 400, return_to, "Use 1 to 64 lower-case letters, digits, dots, dashes or underscores.")
            return
        exp = str(int(self._now()) + SESSION_TTL)
        headers = []
        name = cookie_name(brand_id)
        if is_token(name):  # as Go's http.SetCookie, which drops a cookie it cannot name
            secure = "; Secure" if scope.get("scheme") == "https" else ""
            value = f"{user}|{exp}|{self._sign(brand_id, user, exp)}"
            headers.append(("set-cookie", f"{name}={value}; Path=/; Max-Age={SESSION_TTL}; HttpOnly{secure}; SameSite=Lax"))
        await ex.redirect(nxt, extra=headers)

    async def _render(self, ex: Exchange, brand_id: str, status: int, return_to: str, problem: str) -> None:
        name = ""
        if self.brand_name is not None and _BRAND_ID.fullmatch(brand_id):  # only what a Brand id can be is looked up
            name = await self.brand_name(brand_id)
        body = _page(name or brand_id, self.brand_user(ex.scope, brand_id), return_to, problem).encode("utf-8")
        await ex.respond(
            status,
            [
                ("content-type", "text/html; charset=utf-8"),
                ("content-security-policy", self._csp),
                ("x-frame-options", "DENY"),
                ("cache-control", "no-store"),
                ("referrer-policy", "no-referrer"),
            ],
            body,
        )

