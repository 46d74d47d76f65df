"""HTTP on ASGI for the demo Brand's sign-in: one request and its response,
bounded body reads, and the parsers (query, form, cookie) that read
untrusted input, each with the semantics of Go's net/http and net/url that
the Go demo's sign-in has, so both answer alike.

Every parser returns a value or None and raises nothing for any input
(tests/test_web_fuzz.py holds them to that).
"""

from __future__ import annotations

import asyncio
import posixpath
import re
from typing import Any, Awaitable, Callable, Iterable, MutableMapping

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: The bound of the sign-in form.
MAX_FORM_BYTES = 16 << 10

#: How long a request body may take to arrive; a slower body is treated as
#: unreadable.
BODY_TIMEOUT = 30.0

# Bytes a header value may not hold (RFC 9110 §5.5): controls but HTAB.
_BAD_HEADER_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")


class Exchange:
    """One HTTP request and its response.

    It tracks whether the request body may still hold unread bytes: a
    response started while it does carries ``Connection: close`` (RFC 9112
    §9.3), so a keep-alive client never has the rest of a refused body
    parsed as its next request.
    """

    def __init__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scope = scope
        self._receive = receive
        self._send = send
        self.method: str = scope["method"]
        #: The percent-decoded path (for relative redirects, as Go's r.URL.Path).
        self.path: str = scope.get("path", "/")
        self.query: bytes = scope.get("query_string", b"")
        self.headers: list[tuple[bytes, bytes]] = list(scope.get("headers", []))
        self._unread = _may_have_body(self.headers)
        self.started = False
        self.finished = False

    def header(self, name: str) -> str:
        """Is the first value of a request header, or ""."""
        vals = self.header_values(name)
        return vals[0] if vals else ""

    def header_values(self, name: str) -> list[str]:
        """Are every value of a request header, in order."""
        key = name.lower().encode("latin-1")
        return [v.decode("latin-1") for k, v in self.headers if k.lower() == key]

    async def read_body(self, limit: int) -> bytes | None:
        """Reads the whole body if it is at most limit bytes; None when it is
        larger (the rest is left unread) or the client went away."""
        if not self._unread:
            return b""
        try:
            return await asyncio.wait_for(self._read(limit), BODY_TIMEOUT)
        except asyncio.TimeoutError:
            return None

    async def _read(self, limit: int) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await self._receive()
            if message["type"] != "http.request":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                self._unread = False
                return b"".join(chunks)

    async def start(self, status: int, headers: Iterable[tuple[str | bytes, str | bytes]] = ()) -> None:
        """Starts the response. Header values are text (sent as UTF-8) or
        bytes (sent as they are); one with a control character is a bug,
        refused before anything is sent."""
        raw: list[tuple[bytes, bytes]] = []
        for k, v in headers:
            key = k if isinstance(k, bytes) else k.encode("latin-1")
            value = v if isinstance(v, bytes) else v.encode("utf-8")
            if _BAD_HEADER_VALUE.search(value):
                raise ValueError(f"header {key!r} has a control character")
            raw.append((key.lower(), value))
        if self._unread:
            raw.append((b"connection", b"close"))
        self.started = True
        await self._send({"type": "http.response.start", "status": status, "headers": raw})

    async def write(self, chunk: bytes, more: bool = True) -> None:
        """Sends part of the body; more=False ends the response."""
        if not more:
            self.finished = True
        await self._send({"type": "http.response.body", "body": chunk, "more_body": more})

    async def respond(self, status: int, headers: Iterable[tuple[str, str]] = (), body: bytes = b"") -> None:
        """Sends a whole response, with its Content-Length."""
        await self.start(status, [*headers, ("content-length", str(len(body)))])
        await self.write(body, more=False)

    async def redirect(self, location: str, status: int = 303, extra: Iterable[tuple[str, str]] = ()) -> None:
        """Answers as Go's http.Redirect: a relative target is resolved against
        the request path, and a GET gets a short HTML body."""
        loc = redirect_location(location, self.path)
        headers = [*extra, ("location", loc)]
        body = b""
        if self.method in ("GET", "HEAD"):
            headers.append(("content-type", "text/html; charset=utf-8"))
        if self.method == "GET":
            body = ('<a href="' + _html_escape(loc) + '">See Other</a>.\n\n').encode("utf-8")
        await self.respond(status, headers, body)


def _may_have_body(headers: list[tuple[bytes, bytes]]) -> bool:
    for k, v in headers:
        k = k.lower()
        if k == b"transfer-encoding" or (k == b"content-length" and v.strip() != b"0"):
            return True
    return False


# --- paths -----------------------------------------------------------------

_HEX = b"0123456789abcdefABCDEF"


def _unescape(raw: bytes, plus_is_space: bool) -> bytes | None:
    """Percent-decodes bytes as Go's url.PathUnescape (or QueryUnescape with
    plus_is_space); None for a bad escape."""
    if b"%" not in raw and not (plus_is_space and b"+" in raw):
        return raw
    out = bytearray()
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == 0x25:  # %
            h = raw[i + 1 : i + 3]
            if len(h) != 2 or h[0] not in _HEX or h[1] not in _HEX:
                return None
            out.append(int(h, 16))
            i += 3
            continue
        out.append(0x20 if (c == 0x2B and plus_is_space) else c)
        i += 1
    return bytes(out)


def path_unescape(s: str) -> str | None:
    """Is Go's url.PathUnescape for a UTF-8 result: None for a bad escape or
    bytes that are not UTF-8."""
    d = _unescape(s.encode("utf-8"), plus_is_space=False)
    if d is None:
        return None
    try:
        return d.decode("utf-8")
    except UnicodeDecodeError:
        return None


def path_escape(s: str) -> str:
    """Is Go's url.PathEscape: unreserved characters and $&+:=@ stay."""
    out = []
    for b in s.encode("utf-8"):
        c = chr(b)
        if c.isascii() and (c.isalnum() or c in "-_.~$&+:=@"):
            out.append(c)
        else:
            out.append("%%%02X" % b)
    return "".join(out)


def query_escape(s: str) -> str:
    """Is Go's url.QueryEscape: unreserved characters stay, space is '+'."""
    out = []
    for b in s.encode("utf-8"):
        c = chr(b)
        if c.isascii() and (c.isalnum() or c in "-_.~"):
            out.append(c)
        elif c == " ":
            out.append("+")
        else:
            out.append("%%%02X" % b)
    return "".join(out)


# --- queries and forms -----------------------------------------------------

Values = dict[str, list[str]]


def parse_query(raw: bytes, strict: bool = False) -> Values | None:
    """Parses a query or urlencoded form as Go's url.ParseQuery: pairs split
    on '&', a pair with ';' or a bad escape is skipped (strict: the whole
    input is refused, None). Values are decoded as UTF-8 (bad bytes become
    U+FFFD)."""
    out: Values = {}
    for pair in raw.split(b"&"):
        if pair == b"":
            continue
        key, _, value = pair.partition(b"=")
        k = None if b";" in pair else _unescape(key, plus_is_space=True)
        v = _unescape(value, plus_is_space=True)
        if k is None or v is None:
            if strict:
                return None
            continue
        out.setdefault(k.decode("utf-8", "replace"), []).append(v.decode("utf-8", "replace"))
    return out


def first(values: Values, key: str) -> str:
    """Is a query's or form's first value of key, or "" (Go's Values.Get)."""
    v = values.get(key)
    return v[0] if v else ""


class FormTooLarge(Exception):
    """The form body is larger than MAX_FORM_BYTES."""


async def read_form(ex: Exchange) -> Values | None:
    """Reads a page's POST form as Go's r.ParseForm then r.PostForm: the body
    (at most MAX_FORM_BYTES, else FormTooLarge) when it is urlencoded, an
    empty form otherwise; None when the body or the URL's query is not a
    valid form."""
    if parse_query(ex.query, strict=True) is None:
        return None
    body = await ex.read_body(MAX_FORM_BYTES)
    if body is None:
        raise FormTooLarge()
    media = ex.header("content-type").split(";", 1)[0].strip().lower()
    if media != "application/x-www-form-urlencoded":
        return {}
    return parse_query(body, strict=True)


# --- cookies ---------------------------------------------------------------

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_COOKIE_VALUE = re.compile(r'[\x20\x21\x23-\x3a\x3c-\x5b\x5d-\x7e]*')
_MAX_COOKIES = 3000


def is_token(s: str) -> bool:
    """Reports whether s is an RFC 9110 token (a valid cookie name)."""
    return _TOKEN.fullmatch(s) is not None


def cookie(cookie_headers: list[str], name: str) -> str | None:
    """Is the value of the first valid cookie of that name, as Go's
    r.Cookie(name) reads the Cookie headers; None without one."""
    if sum(line.count(";") + 1 for line in cookie_headers) > _MAX_COOKIES:
        return None
    ws = " \t\r\n"
    for line in cookie_headers:
        for part in line.strip(ws).split(";"):
            part = part.strip(ws)
            if part == "":
                continue
            n, _, v = part.partition("=")
            n = n.strip(ws)
            if not is_token(n) or n != name:
                continue
            if len(v) > 1 and v[0] == '"' and v[-1] == '"':
                v = v[1:-1]
            if _COOKIE_VALUE.fullmatch(v) is None:
                continue
            return v
    return None


# --- redirects -------------------------------------------------------------


def _clean(p: str) -> str:
    """Is Go's path.Clean."""
    c = posixpath.normpath(p) if p else "."
    if c.startswith("//"):
        c = "/" + c.lstrip("/")
    return c


def redirect_location(url: str, request_path: str) -> str:
    """Is the Location Go's http.Redirect writes for url: a relative url is
    made absolute against the request path and cleaned (keeping a trailing
    slash and the query); non-ASCII bytes are hex-escaped."""
    scheme = re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", url)
    if not scheme and not url.startswith("//"):
        old = request_path or "/"
        if url == "" or url[0] != "/":
            url = old[: old.rfind("/") + 1] + url
        path, q, query = url.partition("?")
        trailing = path.endswith("/")
        path = _clean(path)
        if trailing and not path.endswith("/"):
            path += "/"
        url = path + q + query
    return "".join(c if ord(c) < 0x80 else "".join("%%%x" % b for b in c.encode("utf-8")) for c in url)


def _html_escape(s: str) -> str:
    """Is Go's html.EscapeString."""
    return s.replace("&", "&amp;").replace("'", "&#39;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;")


_ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;", "+": "&#43;", "\0": "\ufffd"}
_ESC_RE = re.compile("[&<>\"'+\0]")


def esc(s: str) -> str:
    """Escapes text for HTML text and quoted attribute values as Go's
    html/template does."""
    return _ESC_RE.sub(lambda m: _ESC[m.group(0)], s)
