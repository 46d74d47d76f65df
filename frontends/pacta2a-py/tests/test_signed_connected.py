"""The signed-assertion connected page's HTML: the forms carry the connected
session as the Go template renders them (frontends/pacta2a/pages.html);
the flow itself runs end to end in e2e TestSignedConnectedWithoutCookies."""

from __future__ import annotations

from pacta2a._pb import brand_pb2
from pacta2a.pages import AgentView, GrantView, Pages, ScopeView, View
from pacta2a.signed import BrandPages

_C = "https://p.example/a2a/mart/oauth/connected"


def _agent(live: bool = True) -> AgentView:
    g = GrantView(scopes=[ScopeView("orders:read", "See your orders", [])], since="1 Dec 2026", expires="1 Jan 2027", state="", live=live)
    return AgentView(id="agt_1", name="Example PA", live=live, state="Active" if live else "Revoked", ended="", grants=[g])


def test_connected_login_link_returns_to_exactly_the_connected_url() -> None:
    b = BrandPages("mart", "https://p.example/a2a/mart", brand_pb2.BRAND_LOGIN_MODE_SIGNED_ASSERTION, "https://mart.example/login?z=1")
    assert b.connected_login_link() == "https://mart.example/login?return_to=https%3A%2F%2Fp.example%2Fa2a%2Fmart%2Foauth%2Fconnected&z=1"


def test_list_and_confirmation_carry_the_session() -> None:
    p = Pages()
    page = p.render_bytes("connected", View(title="T", brand="Mart", user="alice", action=_C + "/revoke", agents=[_agent()], session="sess-1")).decode()
    assert (
        f'<form method="post" action="{_C}/revoke"><input type="hidden" name="session" value="sess-1">'
        '<input type="hidden" name="agent_id" value="agt_1">'
        '<button type="submit" class="secondary" aria-label="Revoke access of Example PA">Revoke…</button></form>\n'
    ) in page
    confirm = p.render_bytes("revoke", View(title="Revoke Example PA?", brand="Mart", user="alice", revoke=_agent(), action=_C + "/revoke",
                                            back=_C, session="sess-1")).decode()
    assert (
        f'<form method="post" action="{_C}/revoke">\n'
        '<input type="hidden" name="session" value="sess-1">\n'
        '<input type="hidden" name="confirm" value="1">\n'
        '<input type="hidden" name="agent_id" value="agt_1">\n'
        '<div class="buttons"><button type="submit" class="danger">Revoke Example PA</button>\n'
        f'<button type="submit" class="secondary" formaction="{_C}">Keep it</button></div>\n'
        "</form>"
    ) in confirm
    assert 'name="csrf"' not in confirm
    # Positive control: without a session, the trusted Brands' forms (GET, CSRF).
    trusted = p.render_bytes("connected", View(title="T", brand="Mart", user="alice", action=_C + "/revoke", agents=[_agent()])).decode()
    assert f'<form method="get" action="{_C}/revoke"><input type="hidden" name="agent_id" value="agt_1">' in trusted
    assert 'name="session"' not in trusted


def test_outcome_page_links_to_the_list() -> None:
    page = Pages().render_bytes("connected", View(title="T", brand="Mart", signed=True, back=_C)).decode()
    assert f'<p>You can close this page and go back to your assistant.</p>\n<p><a href="{_C}">See all your connected assistants</a></p>\n\n</main>' in page
