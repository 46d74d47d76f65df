"""Fuzz-style tests of what reads untrusted input: a bounded number of random
requests (fixed seeds, so a failure reproduces) held to invariants: no
exception, a ServeRequest that serializes, the same target bytes after
percent-decoding, gRPC metadata that grpc accepts.

PACT_PY_FUZZ_N (default 3000) sets the inputs per test.
"""

from __future__ import annotations

import json
import os
import random
from urllib.parse import unquote_to_bytes

from pacta2a import Action, Reply
from pacta2a.agent import reply_to_proto
from pacta2a.frontdoor import serve_request, trace_metadata

N = int(os.environ.get("PACT_PY_FUZZ_N", "3000"))
NOT_SENT = {b"cookie", b"connection", b"keep-alive", b"proxy-connection", b"te", b"trailer", b"transfer-encoding", b"upgrade"}
BYTES = b"/%:?#aZ09 \t\r\n\x00\x7f\x80\xff\xc3\xa9" + bytes(range(0x21, 0x7F))


def rand_bytes(rng: random.Random, n: int) -> bytes:
    return bytes(rng.choice(BYTES) for _ in range(rng.randint(0, n)))


def test_serve_request_takes_any_request() -> None:
    rng = random.Random(7)
    for _ in range(N):
        raw_path = b"/" + rand_bytes(rng, 40)
        query = rand_bytes(rng, 20)
        headers = [(rand_bytes(rng, 10).lower() or b"x", rand_bytes(rng, 30)) for _ in range(rng.randint(0, 6))]
        client = rng.choice([None, ("127.0.0.1", 1), ("::1", 65535), ("unix", None), ()])
        scope = {"type": "http", "method": "GET", "path": "/", "raw_path": raw_path, "query_string": query, "headers": headers, "client": client}
        req = serve_request(scope, b"", False, False)
        req.SerializeToString()
        assert req.path.isascii() and req.path.isprintable() and " " not in req.path
        # Percent-decoding gives the bytes received: what pactd splits and decodes is the request's own target.
        assert unquote_to_bytes(req.path) == unquote_to_bytes(raw_path)
        assert unquote_to_bytes(req.query) == unquote_to_bytes(query)
        assert [h.name for h in req.headers] == [k.decode("latin-1") for k, _ in headers if k not in NOT_SENT]


def test_trace_metadata_is_always_sendable() -> None:
    rng = random.Random(11)
    good = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    sent = 0
    for _ in range(N):
        parent = good.encode() if rng.random() < 0.3 else rand_bytes(rng, 60)
        if rng.random() < 0.3:
            parent = bytearray(parent)
            if parent:
                parent[rng.randrange(len(parent))] = rng.choice(BYTES)
            parent = bytes(parent)
        md = trace_metadata({"headers": [(b"traceparent", parent), (b"tracestate", rand_bytes(rng, 30))]})
        for k, v in md:
            assert v.isascii() and v.isprintable(), (k, v)
        sent += bool(md)
    assert sent > N // 10  # the control: well-formed ones go through


def random_json(rng: random.Random, depth: int = 0) -> object:
    r = rng.random()
    if depth > 3 or r < 0.4:
        return rng.choice([0, 1, 1.0, -0.0, 1e300, 2.5, True, False, None, "", "é", "\u2028", "\ud7ff", 10**20])
    if r < 0.7:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(["a", "b", "é", ""]): random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def test_args_json_round_trips() -> None:
    rng = random.Random(13)
    for _ in range(N):
        args = random_json(rng)
        (action,) = reply_to_proto(Reply(text="x", actions=[Action("t", args)])).actions
        assert action.args_hash == ""
        assert action.args_json == "" if args is None else json.loads(action.args_json) == args
