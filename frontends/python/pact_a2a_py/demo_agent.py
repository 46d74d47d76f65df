"""The demo Brand's support agent, as cmd/pact-a2a/demo's: its account
actions need scopes, so PACT Delegated's step-up, consent and receipts can
be seen. Every User starts with the same three orders; cancellations are
kept in memory. It is the example of what a Provider writes itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pacta2a import Action, Reply, Turn

#: The demo Brand's scopes.
SCOPE_ORDERS_READ = "orders:read"
SCOPE_ORDERS_CANCEL = "orders:cancel"
SCOPE_PROFILE_READ = "profile:read"

#: The demo Brand's authorization_details type (PACT §5.7, RFC 9396):
#: {"type": ORDER_CANCEL_TYPE, "order_id": "1002", "actions": ["cancel"]}
#: permits cancelling that one order; several entries are a union of exact
#: orders. It needs orders:cancel.
ORDER_CANCEL_TYPE = "https://acme.example/authorization/order-cancel/v1"


@dataclass(slots=True)
class _Order:
    id: str
    item: str
    status: str


def order_number(s: str) -> str:
    """Is the first run of three or more digits in s, or ""."""
    for f in re.split(r"[^0-9]+", s):
        if len(f) >= 3:
            return f
    return ""


def _lacks(t: Turn, scope: str) -> Reply | None:
    """Is the step-up reply when the turn may not use scope."""
    if t.delegation is not None and scope in t.delegation.scopes:
        return None
    return Reply(need_scopes=[scope], text="I cannot open customer accounts here, so please ask me about something else.")


def may_cancel(t: Turn, order_id: str) -> bool:
    """Enforces the grant's authorization_details of ORDER_CANCEL_TYPE
    against the actual order: without any such entry the scope alone decides
    (a scope-only grant); with some, an entry for exactly this order with
    the action "cancel" must exist (a union of exact orders)."""
    bound = False
    for e in t.delegation.authorization_details if t.delegation else ():
        if e.type != ORDER_CANCEL_TYPE:
            continue
        bound = True
        order = any(m.name == "order_id" and not m.array and m.values == (order_id,) for m in e.members)
        action = any(m.name == "actions" and m.array and "cancel" in m.values for m in e.members)
        if order and action:
            return True
    return not bound


class DemoAgent:
    """The demo support agent (a pacta2a.Agent)."""

    def __init__(self) -> None:
        self._orders: dict[tuple[str, str], list[_Order]] = {}  # by Brand and Brand user

    async def reply(self, turn: Turn) -> Reply:
        """Answers "show my orders" (orders:read), "cancel order N"
        (orders:cancel) and anything else with help. A turn whose scope the
        caller lacks asks for it (the middleware turns that into a step-up)."""
        text = turn.text.lower()
        if "cancel" in text:
            return self._cancel(turn, order_number(text))
        if "order" in text:
            return self._list(turn)
        msg = (
            f"Hi! This is the {turn.brand_id} support agent. I can show your orders "
            '(say "show my orders") or cancel one ("cancel order 1002").'
        )
        if turn.delegation is not None:
            msg += f" You are signed in as {turn.delegation.brand_user}; I may use: {', '.join(turn.delegation.scopes)}."
        return Reply(text=msg)

    def _of(self, brand_id: str, user: str) -> list[_Order]:
        """Are a User's orders, made on first use."""
        key = (brand_id, user)
        if key not in self._orders:
            self._orders[key] = [
                _Order("1001", "Espresso beans, 1 kg", "delivered"),
                _Order("1002", "Milk frother", "processing"),
                _Order("1003", "Ceramic cups, set of 4", "shipped"),
            ]
        return self._orders[key]

    def _list(self, t: Turn) -> Reply:
        lack = _lacks(t, SCOPE_ORDERS_READ)
        if lack is not None:
            return lack
        assert t.delegation is not None
        user = t.delegation.brand_user
        lines = [f"Your orders, {user}:"] + [f"- #{o.id} {o.item}: {o.status}" for o in self._of(t.brand_id, user)]
        return Reply(text="\n".join(lines), scopes_used=[SCOPE_ORDERS_READ], actions=[Action("list_orders")])

    def _cancel(self, t: Turn, order_id: str) -> Reply:
        if order_id == "":
            return Reply(text='Which order should I cancel? Say for example "cancel order 1002".')
        lack = _lacks(t, SCOPE_ORDERS_CANCEL)
        if lack is not None:
            return lack
        if not may_cancel(t, order_id):
            # A resource-bound grant without this order: never the action;
            # the PA has to ask for it (authorization_details for this order).
            return Reply(
                need_scopes=[SCOPE_ORDERS_CANCEL],
                text=f"You allowed me to cancel only certain orders, and order #{order_id} is not one of them. "
                f"Please connect again and allow cancelling order #{order_id}.",
            )
        assert t.delegation is not None
        used = [SCOPE_ORDERS_CANCEL]
        o = next((x for x in self._of(t.brand_id, t.delegation.brand_user) if x.id == order_id), None)
        if o is None:
            return Reply(text=f"I cannot find order #{order_id} in your account.", scopes_used=used)
        if o.status != "processing":
            return Reply(text=f"Order #{order_id} is {o.status}, so it can no longer be cancelled.", scopes_used=used)
        o.status = "cancelled"
        return Reply(
            text=f"Done: order #{order_id} ({o.item}) is cancelled.",
            scopes_used=used,
            actions=[Action("cancel_order", {"orderId": order_id})],
        )
