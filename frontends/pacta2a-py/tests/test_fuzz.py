"""Fuzz-style tests of every parser of untrusted input: a bounded number of
random and mutated inputs (fixed seeds, so a failure reproduces), each held
to invariants: no exception but the declared ones, results of the declared
shape, and round trips where the input is well formed.

PACT_PY_FUZZ_N (default 3000) sets the inputs per parser.
"""

from __future__ import annotations

import json
import os
import random
import string
from typing import Any

from pacta2a import Reply
from pacta2a.a2a import A2AError, loads
from pacta2a.asgi_agent import parse_answer
from pacta2a.client import error_info_reason
from pacta2a.http import cookie, parse_query, path_escape, query_escape, redirect_location, split_path
from pacta2a.registration import parse_registration
from pacta2a.send import AgentRefusal, UserMessage, parse_send

N = int(os.environ.get("PACT_PY_FUZZ_N", "3000"))

SEEDS = [
    b'{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}',
    b'{"message":{"messageId":"m-2","role":"ROLE_USER","contextId":"c","parts":[{"text":"a"},{"text":"b"}],"metadata":{}}}',
    b'{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"aGVsbG8=","mediaType":"x"}],"taskId":"t"}}',
    b'{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":{"k":[1,2]}}]},"metadata":{"a":1}}',
    b'{"message":{"messageId":"\\ud800","role":"ROLE_USER","parts":[{"text":"\\u3000"}]}}',
]
ALPHABET = b'{}[]":,\\ ntrufals0123456789.-+eE' + bytes(range(0x20, 0x7F)) + b"\x00\xff\xc3\xa9\n"


def mutate(rng: random.Random, data: bytes) -> bytes:
    """Applies a few random edits: flip, insert, delete, duplicate, truncate."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(5)
        i = rng.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(i, len(b) - 1)] = rng.choice(ALPHABET)
        elif op == 1:
            b[i:i] = bytes(rng.choice(ALPHABET) for _ in range(rng.randint(1, 4)))
        elif op == 2 and b:
            del b[i : i + rng.randint(1, 8)]
        elif op == 3 and b:
            j = rng.randrange(len(b))
            b[i:i] = b[j : j + rng.randint(1, 16)]
        else:
            b = b[:i]
    return bytes(b)


def random_json(rng: random.Random, depth: int = 0) -> Any:
    """Is a random JSON value, biased toward the shapes of A2A messages."""
    r = rng.random()
    if depth > 4 or r < 0.3:
        return rng.choice(["", "x", "ROLE_USER", "ROLE_AGENT", "\u2028", 0, 1.5, True, False, None, "m-1", " \t\n"])
    if r < 0.6:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = ["message", "messageId", "role", "parts", "text", "raw", "url", "data", "metadata", "contextId", "taskId", "filename", "kind", "x"]
    return {rng.choice(keys): random_json(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def check_send(body: bytes) -> None:
    out = parse_send(body)
    if isinstance(out, A2AError):
        assert out.reason in ("INVALID_PARAMS", "TASK_NOT_FOUND", "CONTENT_TYPE_NOT_SUPPORTED"), out
        assert json.loads(out.body())["error"]["details"][0]["reason"] == out.reason
        return
    assert isinstance(out, UserMessage)
    assert out.message_id and isinstance(out.context_id, str) and out.text.strip() != ""
    for s in (out.message_id, out.context_id, out.text):
        s.encode("utf-8")  # strict: no lone surrogate reaches pactd


def test_parse_send_mutated_and_random() -> None:
    rng = random.Random(17)
    for _ in range(N):
        check_send(mutate(rng, rng.choice(SEEDS)))
        check_send(json.dumps(random_json(rng)).encode())
        check_send(json.dumps({"message": random_json(rng)}).encode())
    # Valid messages stay valid: the round trip of a generated good one.
    for i in range(200):
        text = "".join(rng.choice(string.printable + "é\u2028") for _ in range(rng.randint(1, 40))) + "x"
        out = parse_send(json.dumps({"message": {"messageId": f"m{i}", "role": "ROLE_USER", "parts": [{"text": text}]}}).encode())
        assert isinstance(out, UserMessage) and out.text == text and out.message_id == f"m{i}"


def test_split_path_random_and_round_trip() -> None:
    rng = random.Random(23)
    chars = "/%:aé.~+ 2F3Azz\x00"
    for _ in range(N):
        raw = ("/a2a/" if rng.random() < 0.8 else "/") + "".join(rng.choice(chars) for _ in range(rng.randint(0, 30)))
        out = split_path(raw.encode("utf-8"))
        if out is not None:
            brand, rest = out
            assert brand != "" and len(rest) >= 1 and all(isinstance(s, str) for s in rest)
            (brand + "".join(rest)).encode("utf-8")
    # Any segments, escaped as Go's url.PathEscape does, come back as they were.
    for _ in range(500):
        segs = ["".join(rng.choice("ab/:%?é#\u2028 ") for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(2, 4))]
        assert split_path(("/a2a/" + "/".join(path_escape(s) for s in segs)).encode()) == (segs[0], segs[1:])


def test_parse_query_random_and_round_trip() -> None:
    rng = random.Random(29)
    chars = "a=&;%+2F0zé "
    for _ in range(N):
        raw = "".join(rng.choice(chars) for _ in range(rng.randint(0, 30))).encode("utf-8")
        for strict in (False, True):
            out = parse_query(raw, strict)
            assert out is None or all(isinstance(k, str) and all(isinstance(v, str) for v in vs) for k, vs in out.items())
            if out is None:
                assert strict
    for _ in range(500):
        form = {"".join(rng.choice("ab &=+%é;") for _ in range(rng.randint(1, 5))): ["".join(rng.choice("x &=+%é\n") for _ in range(rng.randint(0, 5)))]}
        raw = "&".join(query_escape(k) + "=" + query_escape(v[0]) for k, v in form.items())
        assert parse_query(raw.encode(), strict=True) == form


def test_cookie_random_and_round_trip() -> None:
    rng = random.Random(31)
    chars = 'ab=; "\t,\\é|'
    for _ in range(N):
        lines = ["".join(rng.choice(chars) for _ in range(rng.randint(0, 20))) for _ in range(rng.randint(0, 3))]
        v = cookie(lines, "a")
        assert v is None or all(0x20 <= ord(c) < 0x7F and c not in '";\\' for c in v)
    assert cookie(["x=1; demo_session_shop=alice|1|sig", "demo_session_shop=bob"], "demo_session_shop") == "alice|1|sig"
    assert cookie(['a="quoted"'], "a") == "quoted"
    assert cookie(["a=b\\c", "a=ok"], "a") == "ok"
    assert cookie(["a=1;" * 3001], "a") is None  # past Go's 3000-cookie limit


def test_redirect_location_random() -> None:
    rng = random.Random(37)
    for _ in range(N):
        url = "".join(rng.choice("/.?aé:%../") for _ in range(rng.randint(0, 20)))
        loc = redirect_location(url, "/a2a/shop/oauth/consent/decision")
        assert loc.isascii()
    assert redirect_location("../connected?status=approved", "/a2a/shop/oauth/consent/decision") == "/a2a/shop/oauth/connected?status=approved"
    assert redirect_location("//evil/x", "/a") == "//evil/x" and redirect_location("/a/./b/../c/", "/") == "/a/c/"


def test_error_info_reason_random() -> None:
    rng = random.Random(41)
    status = b"\x08\x05\x12\x0fbrand not found\x1aK\n(type.googleapis.com/google.rpc.ErrorInfo\x12\x1f\n\x16ERROR_REASON_NOT_FOUND\x12\x05pactd"
    for _ in range(N):
        assert isinstance(error_info_reason(mutate(rng, status)), str)
        assert isinstance(error_info_reason(bytes(rng.randrange(256) for _ in range(rng.randint(0, 40)))), str)


def test_agent_answer_random() -> None:
    rng = random.Random(43)
    seed = b'{"message":{"messageId":"r","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"hi"}],"metadata":{"pact.scopesUsed":["a"],"pact.actions":[{"tool":"t","args":{"x":1}}]}}}'
    for _ in range(N):
        for status, body in [(200, mutate(rng, seed)), (rng.choice([200, 400, 500]), json.dumps(random_json(rng)).encode())]:
            try:
                out = parse_answer(status, body)
            except AgentRefusal as refusal:
                assert refusal.error.reason in ("INVALID_PARAMS", "CONTENT_TYPE_NOT_SUPPORTED", "UNSUPPORTED_OPERATION")
            except ValueError:
                pass
            else:
                assert isinstance(out, Reply) and isinstance(out.text, str)
    good = parse_answer(200, seed)
    assert good.text == "hi" and list(good.scopes_used) == ["a"] and good.actions[0].tool == "t"


def test_loads_refuses_what_go_refuses() -> None:
    for bad in [b"NaN", b"[Infinity]", b"{", b"\xef\xbb\xbf{}", b"[" * 5000]:
        try:
            loads(bad)
        except ValueError:
            continue
        raise AssertionError(bad)
    assert loads(b'"\xff"') == "\ufffd" and loads(b"[1e999]") == [float("inf")]


REGISTRATION_SEEDS = [
    b'{"name":"my-pa","jwksUri":"https://pa.example/jwks.json"}',
    b'{"NAME":"a","jwk\xc5\xbfUri":null}',
    b'{"name":5,"name":"a"}',
    b'{"name":"a","x":{"name":[1,"}"]},"jwksUri":"\\ud800"}',
    b"null",
]


def check_registration(body: bytes) -> None:
    out = parse_registration(body)
    assert out == parse_registration(body)
    if out is None:
        return
    name, jwks = out
    assert isinstance(name, str) and isinstance(jwks, str)
    name.encode("utf-8"), jwks.encode("utf-8")  # strict: no lone surrogate reaches pactd


def test_parse_registration_mutated_and_random() -> None:
    rng = random.Random(31)
    for _ in range(N):
        check_registration(mutate(rng, rng.choice(REGISTRATION_SEEDS)))
        check_registration(json.dumps(random_json(rng)).encode())
        check_registration(json.dumps({rng.choice(["name", "NAME", "jwksUri", "jwksuri"]): random_json(rng)}).encode())
    # Well-formed bodies come back as they were.
    for _ in range(200):
        name = "".join(rng.choice(string.printable + "é\u2028") for _ in range(rng.randint(0, 20)))
        assert parse_registration(json.dumps({"name": name, "jwksUri": "u"}).encode()) == (name, "u")
    assert parse_registration(b'{"name":"\\ud800x"}') == ("\ufffdx", "")
