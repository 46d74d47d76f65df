"""pacta2a: pactd's Python client and the PACT middleware for ASGI A2A frontends.

- PactdClient: pactd's frontend RPCs over gRPC (native gRPC port or main
  port), with credentials, deadlines, safe retries and typed answers.
- PactMiddleware: every PACT HTTP rule of a Provider's A2A frontend, pure
  ASGI, in front of any ASGI app (docs/frontends.md is the contract).
- Agent, Turn, Reply, Action: what a Brand writes itself; AsgiAgent runs an
  ASGI A2A app as the agent, with the verified Turn in scope["pact"].
- RegistrationApp: self-service PA registration, POST /api/platforms (the
  ASGI app a host mounts at REGISTRATION_PATH; registration.py).
"""

from .a2a import A2AError
from .agent import Action, Agent, EchoAgent, Reply, Turn
from .asgi_agent import SCOPE_KEY, AsgiAgent, step_up_task, with_receipt
from .client import (
    RETRYABLE,
    AuthorizationDetail,
    AuthorizationDetailMember,
    Caller,
    Delegation,
    GrantInactive,
    NotDelegated,
    PactdClient,
    PactdError,
    Verification,
)
from .middleware import PactMiddleware
from .oauth import Sessions
from .registration import MAX_REGISTRATION_BODY, REGISTRATION_PATH, RegistrationApp
from .send import AgentRefusal

__version__ = "0.1.0"

__all__ = [
    "A2AError",
    "Action",
    "Agent",
    "AgentRefusal",
    "AsgiAgent",
    "AuthorizationDetail",
    "AuthorizationDetailMember",
    "Caller",
    "MAX_REGISTRATION_BODY",
    "Delegation",
    "EchoAgent",
    "GrantInactive",
    "NotDelegated",
    "PactMiddleware",
    "PactdClient",
    "PactdError",
    "REGISTRATION_PATH",
    "RETRYABLE",
    "RegistrationApp",
    "Reply",
    "SCOPE_KEY",
    "Sessions",
    "Turn",
    "Verification",
    "step_up_task",
    "with_receipt",
]
