"""The demo Brand's agent and sign-in, as cmd/pact-a2a/demo's tests pin them."""

from __future__ import annotations

import asyncio
import re

from pact_a2a_py.demo_agent import ORDER_CANCEL_TYPE, DemoAgent, order_number
from pact_a2a_py.demo_login import DemoLogin, return_path

from pacta2a import AuthorizationDetail, AuthorizationDetailMember, Caller, Delegation, Reply, Turn

CALLER = Caller("agent-1", "https://pa.example", "user-1", "PA")


def turn(text: str, scopes: tuple[str, ...] | None = None, details: tuple[AuthorizationDetail, ...] = ()) -> Turn:
    d = None if scopes is None else Delegation("a2agrant_1", "alice", scopes, None, "", details)
    return Turn("shop", "ctx", False, text, CALLER, d)


def reply(agent: DemoAgent, t: Turn) -> Reply:
    return asyncio.run(agent.reply(t))


def cancel_entry(order: str, actions: tuple[str, ...] = ("cancel",)) -> AuthorizationDetail:
    return AuthorizationDetail(ORDER_CANCEL_TYPE, "{}", (AuthorizationDetailMember("order_id", (order,), False),
                                                        AuthorizationDetailMember("actions", actions, True)))


def test_agent_steps_up_without_scopes_and_acts_with_them() -> None:
    a = DemoAgent()
    # Without delegation, or without the scope: a step-up, never an action.
    for t in [turn("show my orders"), turn("show my orders", ("orders:cancel",))]:
        r = reply(a, t)
        assert list(r.need_scopes) == ["orders:read"] and not r.actions
    assert list(reply(a, turn("cancel order 1002", ("orders:read",))).need_scopes) == ["orders:cancel"]
    # With it: the orders, with what the receipt names.
    r = reply(a, turn("Show my ORDERS", ("orders:read",)))
    assert r.text == "Your orders, alice:\n- #1001 Espresso beans, 1 kg: delivered\n- #1002 Milk frother: processing\n- #1003 Ceramic cups, set of 4: shipped"
    assert list(r.scopes_used) == ["orders:read"] and [x.tool for x in r.actions] == ["list_orders"]
    r = reply(a, turn("cancel order 1002", ("orders:cancel",)))
    assert r.text == "Done: order #1002 (Milk frother) is cancelled." and r.actions[0].args == {"orderId": "1002"}
    assert reply(a, turn("cancel order 1002", ("orders:cancel",))).text == "Order #1002 is cancelled, so it can no longer be cancelled."
    assert reply(a, turn("cancel order 1003", ("orders:cancel",))).text == "Order #1003 is shipped, so it can no longer be cancelled."
    assert reply(a, turn("cancel order 9999", ("orders:cancel",))).text == "I cannot find order #9999 in your account."
    assert reply(a, turn("cancel it", ("orders:cancel",))).text == 'Which order should I cancel? Say for example "cancel order 1002".'
    r = reply(a, turn("hello", ("orders:read", "orders:cancel")))
    assert r.text.endswith("You are signed in as alice; I may use: orders:read, orders:cancel.") and not r.need_scopes


def test_agent_enforces_authorization_details() -> None:
    a = DemoAgent()
    only_1002 = (cancel_entry("1002"),)
    # An order the grant does not name: a step-up, nothing cancelled.
    r = reply(a, turn("cancel order 1001", ("orders:cancel",), only_1002))
    assert list(r.need_scopes) == ["orders:cancel"] and not r.actions and "only certain orders" in r.text
    r = reply(a, turn("cancel order 1002", ("orders:cancel",), (cancel_entry("1002", ("refund",)),)))
    assert list(r.need_scopes) == ["orders:cancel"]
    # Positive control: the named order.
    r = reply(a, turn("cancel order 1002", ("orders:cancel",), only_1002))
    assert r.text.startswith("Done: order #1002") and r.actions[0].tool == "cancel_order"


def test_order_number() -> None:
    assert [order_number(s) for s in ["cancel order 1002", "12 then 345", "no", "１２３４"]] == ["1002", "345", "", ""]


def test_return_path() -> None:
    base = "/a2a/shop/oauth/"
    assert return_path("", "shop") == base + "connected"
    assert return_path(base + "consent?user_code=BCDF-GHJK", "shop") == base + "consent?user_code=BCDF-GHJK"
    assert return_path("http://127.0.0.1:3000" + base + "connected?status=x", "shop") == base + "connected?status=x"
    assert return_path("//evil.example" + base + "consent", "shop") == base + "consent"  # the host is dropped
    for bad in ["/a2a/acme/oauth/consent", "/elsewhere", "https://evil.example/x", base + "consent/x", base + "cons%65nt%zz",
                base + "consent\r\nSet-Cookie: x", base + "%FFconsent"]:
        assert return_path(bad, "shop") is None, bad


def test_login_cookie_round_trip() -> None:
    now = [1_800_000_000.0]
    login = DemoLogin(now=lambda: now[0])
    sent: list[dict] = []

    async def post(brand: str, form: bytes, cookie: str = "") -> dict:
        msgs = iter([{"type": "http.request", "body": form, "more_body": False}])
        sent.clear()

        async def receive() -> dict:
            return next(msgs)

        async def send(m: dict) -> None:
            sent.append(m)

        headers = [(b"content-type", b"application/x-www-form-urlencoded"), (b"content-length", str(len(form)).encode())]
        if cookie:
            headers.append((b"cookie", cookie.encode()))
        scope = {"type": "http", "method": "POST", "path": f"/demo/{brand}/login", "raw_path": f"/demo/{brand}/login".encode(),
                 "query_string": b"", "headers": headers, "path_params": {"brand_id": brand}, "scheme": "http"}
        await login(scope, receive, send)
        return {k.decode(): v.decode() for k, v in sent[0]["headers"]} | {"status": sent[0]["status"]}

    r = asyncio.run(post("shop", b"username=alice&return_to=%2Fa2a%2Fshop%2Foauth%2Fconsent%3Fuser_code%3DX"))
    assert (r["status"], r["location"]) == (303, "/a2a/shop/oauth/consent?user_code=X")
    assert re.fullmatch(r"demo_session_shop=alice\|1800003600\|[A-Za-z0-9_-]{43}; Path=/; Max-Age=3600; HttpOnly; SameSite=Lax", r["set-cookie"])
    value = r["set-cookie"].split(";")[0].split("=", 1)[1]
    scope = {"headers": [(b"cookie", f"other=1; demo_session_shop={value}".encode())]}
    assert login.brand_user(scope, "shop") == "alice"
    # Another Brand, a tampered or expired cookie: nobody.
    assert login.brand_user(scope, "mart") == ""
    tampered = {"headers": [(b"cookie", f"demo_session_shop={value.replace('alice', 'mallory')}".encode())]}
    assert login.brand_user(tampered, "shop") == ""
    now[0] += 3600
    assert login.brand_user(scope, "shop") == ""
    # Refusals: a bad user name, a return_to elsewhere, a form too large.
    assert asyncio.run(post("shop", b"username=Alice!&return_to="))["status"] == 400
    assert asyncio.run(post("shop", b"username=alice&return_to=https%3A%2F%2Fevil.example%2F"))["status"] == 400
    r = asyncio.run(post("shop", b"username=alice&pad=" + b"a" * (16 << 10)))
    assert (r["status"], r["connection"]) == (413, "close")
    assert login.login_url("shop", "/a2a/shop/oauth/consent?user_code=X") == "/demo/shop/login?return_to=%2Fa2a%2Fshop%2Foauth%2Fconsent%3Fuser_code%3DX"
