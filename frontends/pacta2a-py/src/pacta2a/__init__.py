"""pacta2a: a Python A2A frontend's side of pactd's PACT front door.

pactd answers every PACT request (pact.v1.FrontDoorService); this package
forwards them and runs the Brand's agent:

- FrontDoor (frontdoor.py): pure ASGI; forwards GET /, /a2a/… and POST
  /api/platforms to pactd and writes its answers, runs turns, bounds bodies.
- PactdClient (client.py): pactd's RPCs over gRPC, with the credential.
- Agent, Turn, Reply, Action, EchoAgent (agent.py): what a Brand writes.
- AsgiAgent, step_up_task, with_receipt (asgi.py): an ASGI A2A app as the
  agent, the verified Turn in scope["pact"].
- Sessions (sessions.py): the sign-in hook for trusted-frontend Brands.
- guard (guard.py): the action guard, CheckGrant before a tool runs.
- Recover (recover.py): an exception becomes a bare 500, logged once.
"""

from .agent import Action, Agent, AuthorizationDetail, AuthorizationDetailMember, Caller, Delegation, EchoAgent, Reply, Turn
from .asgi import SCOPE_KEY, AsgiAgent, step_up_task, with_receipt
from .client import PactdClient, PactdError
from .frontdoor import MAX_BODY_BYTES, REGISTRATION_PATH, FrontDoor, pact_routes
from .guard import GrantInactive, NotDelegated, guard
from .recover import Recover
from .sessions import Sessions

__version__ = "0.2.0"

__all__ = [
    "Action",
    "Agent",
    "AsgiAgent",
    "AuthorizationDetail",
    "AuthorizationDetailMember",
    "Caller",
    "Delegation",
    "EchoAgent",
    "FrontDoor",
    "GrantInactive",
    "MAX_BODY_BYTES",
    "NotDelegated",
    "PactdClient",
    "PactdError",
    "REGISTRATION_PATH",
    "Recover",
    "Reply",
    "SCOPE_KEY",
    "Sessions",
    "Turn",
    "guard",
    "pact_routes",
    "step_up_task",
    "with_receipt",
]
