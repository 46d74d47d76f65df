"""A Brand's agent behind pactd's front door, complete: run it with
PACT_FRONTEND_TOKEN=… python3 -m uvicorn agent_app:app --port 3000."""

import os

from pacta2a import Action, FrontDoor, PactdClient, Reply


class Agent:
    async def reply(self, turn):
        if turn.delegation is None or "orders:read" not in turn.delegation.scopes:
            return Reply(text="I need to see your orders first.", need_scopes=["orders:read"])
        orders = [{"id": "1001", "total": 12.5}]  # the Brand's own lookup, as turn.delegation.brand_user
        return Reply(text=f"You have {len(orders)} order(s).", scopes_used=["orders:read"], actions=[Action("list_orders", {"limit": 10})])


pactd = PactdClient.from_url(os.environ.get("PACTD_URL", "http://127.0.0.1:7070"), os.environ["PACT_FRONTEND_TOKEN"])
app = FrontDoor(pactd=pactd, agent=Agent())
