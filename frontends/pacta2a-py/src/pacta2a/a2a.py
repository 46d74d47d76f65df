"""A2A wire details the middleware writes itself: errors and JSON.

Errors about conversations come from pactd ready-made (A2AError.body_json of
BeginTurn); these are the few any frontend needs before or without pactd
(PACT 1.0 §6), byte for byte as the Go and TypeScript frontends write them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

#: The exact Content-Type of every A2A response (PACT §4): no charset.
CONTENT_TYPE = "application/a2a+json"

_SURROGATES = re.compile("[\ud800-\udfff]")


def marshal(value: Any) -> bytes:
    """Encodes JSON as Go's encoder with HTML escaping off (and JavaScript's
    JSON.stringify) do: compact, non-ASCII as is, U+2028 and U+2029 escaped,
    a lone surrogate as U+FFFD. Keys keep their order."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return _SURROGATES.sub("\ufffd", text).encode("utf-8")


def canonical_json(value: Any) -> bytes:
    """Is marshal with object keys sorted, as Go marshals maps: the bytes a
    receipt's argsHash is taken over."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, sort_keys=True)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return _SURROGATES.sub("\ufffd", text).encode("utf-8")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(data: bytes) -> Any:
    """Parses JSON as Go's encoding/json reads it: invalid UTF-8 becomes
    U+FFFD, NaN and Infinity are refused; nesting deeper than Python's
    recursion limit is refused too. Raises ValueError."""
    try:
        return json.loads(data.decode("utf-8", "replace"), parse_constant=_no_constant)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def clean_text(s: str) -> str:
    """Replaces lone surrogates (from a JSON escape such as "\\ud800") with
    U+FFFD, as Go's decoder does, so the string encodes as UTF-8."""
    return _SURROGATES.sub("\ufffd", s)


@dataclass(frozen=True, slots=True)
class A2AError:
    """An A2A error in the AIP-193 envelope of PACT §6."""

    http_status: int
    status: str  # the google.rpc status name
    reason: str  # details[0].reason
    message: str

    def body(self) -> bytes:
        """Is the JSON body, in the field order of every PACT frontend."""
        return marshal(
            {
                "error": {
                    "code": self.http_status,
                    "status": self.status,
                    "message": self.message,
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": self.reason,
                            "domain": "a2a-protocol.org",
                        }
                    ],
                }
            }
        )


def invalid_params(message: str) -> A2AError:
    """Is INVALID_PARAMS (400 INVALID_ARGUMENT)."""
    return A2AError(400, "INVALID_ARGUMENT", "INVALID_PARAMS", message)


def content_type_not_supported(message: str) -> A2AError:
    """Is CONTENT_TYPE_NOT_SUPPORTED (400 INVALID_ARGUMENT)."""
    return A2AError(400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED", message)


def unsupported_operation(message: str) -> A2AError:
    """Is UNSUPPORTED_OPERATION (400 FAILED_PRECONDITION)."""
    return A2AError(400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", message)


def push_not_supported() -> A2AError:
    """Is PUSH_NOTIFICATION_NOT_SUPPORTED (400 FAILED_PRECONDITION)."""
    return A2AError(400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push notifications are not supported")


def task_not_found(message: str) -> A2AError:
    """Is TASK_NOT_FOUND (404 NOT_FOUND)."""
    return A2AError(404, "NOT_FOUND", "TASK_NOT_FOUND", message)


def internal_error() -> A2AError:
    """Is INTERNAL (500): the answer to every unexpected failure."""
    return A2AError(500, "INTERNAL", "INTERNAL", "Internal error")


# The reasons an ASGI agent may answer with its own message (docs/frontends.md):
# everything else it fails with is INTERNAL.
AGENT_REASONS = {
    "INVALID_PARAMS": invalid_params,
    "CONTENT_TYPE_NOT_SUPPORTED": content_type_not_supported,
    "UNSUPPORTED_OPERATION": unsupported_operation,
}
