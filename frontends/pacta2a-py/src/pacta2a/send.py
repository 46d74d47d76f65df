"""message:send (PACT §4): the request's validation, pactd's conversation
rules (BeginTurn, CompleteTurn, AbandonTurn), the agent's turn, step-up
tasks (§5.5) and receipts (§5.6)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import grpc

from . import a2a
from ._pb import conversation_pb2, delegation_pb2, token_pb2
from .a2a import A2AError
from .agent import Reply, Turn
from .call import Call
from .client import PactdError
from .http import MAX_SEND_BYTES, Exchange

if TYPE_CHECKING:
    from .middleware import PactMiddleware


class AgentRefusal(Exception):
    """Raised by an agent to answer the turn with an A2A error of its own
    (INVALID_PARAMS, CONTENT_TYPE_NOT_SUPPORTED or UNSUPPORTED_OPERATION);
    the turn is abandoned, as after any failure."""

    def __init__(self, error: A2AError) -> None:
        super().__init__(f"{error.reason}: {error.message}")
        self.error = error


@dataclass(frozen=True, slots=True)
class UserMessage:
    """What message:send needs from a valid request."""

    message_id: str
    context_id: str
    text: str
    #: The message as sent (a JSON object).
    message: dict[str, Any]
    #: The request's own metadata (SendMessageRequest.metadata), if any.
    metadata: dict[str, Any] | None = None


# Go's unicode.IsSpace, which strings.TrimSpace uses (str.isspace also
# counts U+001C..U+001F).
_BLANK = re.compile("[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*")


def _str(o: dict[str, Any], key: str) -> str | None:
    v = o.get(key)
    return a2a.clean_text(v) if isinstance(v, str) else None


def _part_kind(p: Any) -> str | None:
    """Checks a part as the strict A2A schema does: exactly one of text, raw
    (base64), url or data, plus optional metadata, filename and mediaType,
    and nothing else."""
    if not isinstance(p, dict):
        return None
    kind = None
    for k, v in p.items():
        if k in ("text", "raw", "url", "filename", "mediaType"):
            if not isinstance(v, str):
                return None
        elif k == "data":
            if v is None:
                return None
        elif k == "metadata":
            if not isinstance(v, dict):
                return None
        else:
            return None
        if k in ("text", "raw", "url", "data"):
            if kind is not None:
                return None
            kind = k
    return kind


def parse_send(body: bytes) -> UserMessage | A2AError:
    """Validates a SendMessageRequest in the order of PACT §4: JSON and
    schema, taskId, role, content types, blank text. Any bytes give a
    UserMessage or an A2AError; nothing raises."""
    try:
        req = a2a.loads(body)
    except ValueError:
        req = None
    m = req.get("message") if isinstance(req, dict) else None
    if not isinstance(m, dict):
        return a2a.invalid_params('The body must be JSON: {"message": Message}')
    message_id = _str(m, "messageId")
    role = _str(m, "role")
    context_id = _str(m, "contextId")
    parts = m.get("parts")
    if not message_id:
        return a2a.invalid_params("message.messageId must be a non-empty string")
    if role not in ("ROLE_USER", "ROLE_AGENT", "ROLE_UNSPECIFIED"):
        return a2a.invalid_params("message.role must be ROLE_USER")
    # A null element is a part with no kind (refused below), as in Go.
    if not isinstance(parts, list) or not parts or not all(p is None or isinstance(p, dict) for p in parts):
        return a2a.invalid_params("message.parts must be a non-empty array of parts")
    if ("contextId" in m and context_id is None) or ("taskId" in m and not isinstance(m["taskId"], str)):
        return a2a.invalid_params("message.contextId and message.taskId must be strings")
    if "metadata" in m and not isinstance(m["metadata"], dict):
        return a2a.invalid_params("message.metadata must be an object")
    texts: list[str] = []
    non_text = False
    for p in parts:
        kind = _part_kind(p)
        if kind is None:
            return a2a.invalid_params("Each part must be an object with exactly one of text, raw, url or data")
        if kind == "text":
            texts.append(a2a.clean_text(p["text"]))
        else:
            non_text = True
    text = "\n".join(texts)
    if "taskId" in m:
        return a2a.task_not_found("Task not found")
    if role != "ROLE_USER":
        return a2a.invalid_params("message.role must be ROLE_USER")
    if non_text:
        return a2a.content_type_not_supported("Only text parts are supported")
    if _BLANK.fullmatch(text):
        return a2a.invalid_params("The message text is empty")
    meta = req.get("metadata") if isinstance(req, dict) else None
    return UserMessage(message_id, context_id or "", text, m, meta if isinstance(meta, dict) else None)


def args_hash(args: Any) -> str:
    """Is a receipt action's argsHash: base64url SHA-256 of the arguments' JSON."""
    digest = hashlib.sha256(a2a.canonical_json(args)).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _agent_message(message_id: str, context_id: str, text: str) -> dict[str, Any]:
    return {"messageId": message_id, "contextId": context_id, "role": "ROLE_AGENT", "parts": [{"text": text}]}


async def serve_send(mw: PactMiddleware, ex: Exchange, call: Call) -> None:
    """Serves POST message:send. The request's Content-Type and A2A-Version
    are not checked: the body is parsed as JSON whatever they say."""
    body = await ex.read_body(MAX_SEND_BYTES)
    if body is None:
        await mw.write_a2a_error(ex, a2a.invalid_params("The request body is unreadable or too large"))
        return
    msg = parse_send(body)
    if isinstance(msg, A2AError):
        await mw.write_a2a_error(ex, msg)
        return
    assert call.caller is not None
    owner = conversation_pb2.Owner(brand_id=call.brand_id, agent_id=call.caller.agent_id, subject=call.caller.subject)
    begun = await mw.pactd.begin_turn(
        conversation_pb2.BeginTurnRequest(
            owner=owner,
            context_id=msg.context_id,
            message_id=msg.message_id,
            brand_user=call.delegation.brand_user if call.delegation else "",
        )
    )
    if begun.outcome == conversation_pb2.TURN_OUTCOME_ERROR:
        e = begun.error
        if not 400 <= e.http_status <= 599:
            raise RuntimeError("begin turn: A2A error without an error status")
        await mw.write_a2a(ex, e.http_status, e.body_json.encode("utf-8"))
        return
    if begun.outcome == conversation_pb2.TURN_OUTCOME_REPLAY:
        await mw.write_a2a(ex, 200, begun.reply_json.encode("utf-8"))
        return
    if begun.outcome != conversation_pb2.TURN_OUTCOME_RUN:
        raise RuntimeError(f"begin turn: unknown outcome {begun.outcome}")

    # The turn is ours. It runs to the end even if the PA hangs up (shielded
    # from cancellation), so a retry of the messageId finds the stored reply.
    try:
        out = await asyncio.shield(_run_turn(mw, ex.path, call, owner, msg, begun.context_id, begun.context_created))
    except AgentRefusal as refusal:
        await mw.write_a2a_error(ex, refusal.error)
        return
    await mw.write_a2a(ex, 200, out)


async def _run_turn(
    mw: PactMiddleware, path: str, call: Call, owner: Any, msg: UserMessage, context_id: str, created: bool
) -> bytes:
    """Runs the agent and builds the answer: the stored reply, or a step-up
    task. On a failure or a step-up the messageId is released (AbandonTurn)
    so the PA may send it again; a failure is raised for the caller's
    INTERNAL."""
    assert call.caller is not None
    stored = False
    try:
        message = dict(msg.message)
        message["contextId"] = context_id
        turn = Turn(call.brand_id, context_id, created, msg.text, call.caller, call.delegation, message, msg.metadata)
        reply: Reply = await asyncio.wait_for(mw.agent.reply(turn), mw.turn_timeout)
        out = None
        if reply.need_scopes:
            out = await _step_up(mw, call, context_id, list(reply.need_scopes))
        if out is None:
            out = await _complete(mw, call, owner, context_id, msg.message_id, reply)
            stored = True
        return out
    finally:
        if not stored:
            try:
                await mw.pactd.abandon_turn(
                    conversation_pb2.AbandonTurnRequest(owner=owner, context_id=context_id, message_id=msg.message_id)
                )
            except Exception as err:  # logged; the turn's own outcome is what the PA gets
                mw.log_error("abandon turn", path, err)


async def _step_up(mw: PactMiddleware, call: Call, context_id: str, need: list[str]) -> bytes | None:
    """Builds the AUTH_REQUIRED task of PACT §5.5; None when the Brand offers
    no delegation, so the agent's text answers instead."""
    assert call.caller is not None
    try:
        su = await mw.pactd.start_step_up(
            delegation_pb2.StartStepUpRequest(
                brand_id=call.brand_id, agent_id=call.caller.agent_id, context_id=context_id, missing_scopes=need
            )
        )
    except PactdError as err:
        if err.code == grpc.StatusCode.FAILED_PRECONDITION:
            return None
        raise
    wants = "; ".join(s.description for s in su.scopes)
    text = f"I need your permission first: {wants}. Please approve it at the link your assistant shows you."
    return a2a.marshal(
        {
            "task": {
                "id": su.task_id,
                "contextId": context_id,
                "status": {
                    "state": "TASK_STATE_AUTH_REQUIRED",
                    "message": _agent_message(mw.new_message_id(), context_id, text),
                },
                "metadata": {
                    "pact.missingScopes": list(su.missing_scopes),
                    "pact.verificationUriComplete": su.verification_uri_complete,
                },
            }
        }
    )


def _check_strings(name: str, v: Sequence[Any]) -> list[str]:
    if isinstance(v, (str, bytes)) or not all(isinstance(s, str) for s in v):
        raise TypeError(f"agent reply: {name} must be a sequence of strings")
    return list(v)


async def _complete(
    mw: PactMiddleware, call: Call, owner: Any, context_id: str, message_id: str, reply: Reply
) -> bytes:
    """Builds the reply body, with the signed receipt of PACT §5.6 on a
    delegated turn, and stores it so a retry of the messageId gets it back."""
    if not isinstance(reply.text, str):
        raise TypeError("agent reply: text must be a string")
    m = _agent_message(mw.new_message_id(), context_id, reply.text)
    metadata: dict[str, bytes] = {}
    for k, v in (reply.metadata or {}).items():
        if isinstance(k, str) and not k.startswith("pact."):
            metadata[k] = a2a.marshal(v)
    d = call.delegation
    if d is not None:
        assert call.caller is not None
        req = token_pb2.SignReceiptRequest(
            brand_id=call.brand_id,
            grant_id=d.grant_id,
            scopes_used=_check_strings("scopes_used", reply.scopes_used),
            pa_issuer=call.caller.issuer,
            brand_user=d.brand_user,
        )
        for act in reply.actions:
            ra = req.actions.add(tool=act.tool)
            if act.args is not None:
                ra.args_hash = args_hash(act.args)
        # pactd's receipt JSON goes in as it is.
        metadata["pact.receipt"] = (await mw.pactd.sign_receipt(req)).receipt_json.encode("utf-8")
    out = a2a.marshal({"message": m})
    if metadata:
        # Go marshals the metadata map with its keys sorted.
        members = b",".join(a2a.marshal(k) + b":" + v for k, v in sorted(metadata.items()))
        out = out[:-2] + b',"metadata":{' + members + b"}}}"
    await mw.pactd.complete_turn(
        conversation_pb2.CompleteTurnRequest(
            owner=owner,
            context_id=context_id,
            message_id=message_id,
            reply_message_id=m["messageId"],
            reply_json=out.decode("utf-8"),
        )
    )
    return out
