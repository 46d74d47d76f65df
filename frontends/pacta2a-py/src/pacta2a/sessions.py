"""The sign-in hook of a frontend that signs Users in for Brands in
BRAND_LOGIN_MODE_TRUSTED_FRONTEND (their consent and connected-assistants
pages need the User). Brands in BRAND_LOGIN_MODE_SIGNED_ASSERTION need none.

The front door vouches to pactd for the Brand user it names, so the hook
must only name a User the frontend itself signed in (a signed session
cookie, say). Without a hook, those Brands' pages answer 404.
"""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, MutableMapping, Protocol


class Sessions(Protocol):
    """Who is signed in at a Brand, and where to sign in."""

    def brand_user(self, scope: MutableMapping[str, Any], brand_id: str) -> str | Awaitable[str]:
        """Is the id at brand_id of the User signed in on the request (its
        ASGI scope), or "" for nobody; it may be a coroutine."""
        ...

    def login_url(self, brand_id: str, return_to: str) -> str:
        """Is where a User who is not signed in goes (pactd answers the
        redirect to it); the sign-in then returns to return_to, a path and
        query on this frontend."""
        ...


async def signed_in(sessions: Sessions, scope: MutableMapping[str, Any], brand_id: str) -> str:
    """Is sessions.brand_user's answer, awaited when it is a coroutine."""
    user = sessions.brand_user(scope, brand_id)
    if inspect.isawaitable(user):
        user = await user
    return user or ""
