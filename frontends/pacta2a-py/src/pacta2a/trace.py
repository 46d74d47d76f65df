"""The caller's W3C trace context goes on to pactd.

The middleware reads a request's ``traceparent`` and ``tracestate`` into a
context variable; the client writes them into every call it makes while
that request is served, so pactd's spans belong to the PA's (or the load
balancer's) trace, as in the Go and TypeScript frontends. No spans are made
here.
"""

from __future__ import annotations

import contextvars
import re

_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")

#: The trace metadata of the request being served: (("traceparent", …),
#: ("tracestate", …)) or ().
current: contextvars.ContextVar[tuple[tuple[str, str], ...]] = contextvars.ContextVar("pacta2a_trace", default=())


def trace_metadata(traceparent: str, tracestate: str) -> tuple[tuple[str, str], ...]:
    """Is the metadata to send for a request's headers: a valid traceparent
    (version normalised to 00, only the sampled flag kept) and, with it, a
    tracestate of at most 512 bytes; () for none or an invalid one."""
    m = _TRACEPARENT.fullmatch(traceparent.strip())
    if m is None or m.group(1) == "ff" or set(m.group(2)) == {"0"} or set(m.group(3)) == {"0"}:
        return ()
    sampled = "01" if int(m.group(4), 16) & 1 else "00"
    out: tuple[tuple[str, str], ...] = (("traceparent", f"00-{m.group(2)}-{m.group(3)}-{sampled}"),)
    if tracestate and len(tracestate) <= 512 and tracestate.isascii() and tracestate.isprintable():
        out += (("tracestate", tracestate),)
    return out
