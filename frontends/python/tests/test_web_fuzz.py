"""Fuzz-style tests of the demo sign-in's parsers of untrusted input (web.py):
a bounded number of random inputs (fixed seeds, so a failure reproduces),
each held to invariants: no exception, results of the declared shape, and
round trips where the input is well formed.

PACT_PY_FUZZ_N (default 3000) sets the inputs per parser.
"""

from __future__ import annotations

import os
import random

from pact_a2a_py.web import cookie, parse_query, path_escape, path_unescape, query_escape, redirect_location

N = int(os.environ.get("PACT_PY_FUZZ_N", "3000"))


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


def test_path_escape_round_trip() -> None:
    rng = random.Random(23)
    for _ in range(N):
        s = "".join(rng.choice("ab/:%?é#\u2028 \x00") for _ in range(rng.randint(0, 12)))
        escaped = path_escape(s)
        assert escaped.isascii() and "/" not in escaped and path_unescape(escaped) == s
    assert path_unescape("%zz") is None and path_unescape("%FF") is None


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
        loc = redirect_location(url, "/demo/shop/login")
        assert loc.isascii()
    assert redirect_location("../connected?status=approved", "/a2a/shop/oauth/consent/decision") == "/a2a/shop/oauth/connected?status=approved"
    assert redirect_location("//evil/x", "/a") == "//evil/x" and redirect_location("/a/./b/../c/", "/") == "/a/c/"
