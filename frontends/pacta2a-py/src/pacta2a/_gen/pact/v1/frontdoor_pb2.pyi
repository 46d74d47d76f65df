from pact.v1 import token_pb2 as _token_pb2
from pact.v1 import verification_pb2 as _verification_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AgentReply(_message.Message):
    __slots__ = ["actions", "metadata_json", "need_scopes", "scopes_used", "text"]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    METADATA_JSON_FIELD_NUMBER: _ClassVar[int]
    NEED_SCOPES_FIELD_NUMBER: _ClassVar[int]
    SCOPES_USED_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[_token_pb2.ReceiptAction]
    metadata_json: str
    need_scopes: _containers.RepeatedScalarFieldContainer[str]
    scopes_used: _containers.RepeatedScalarFieldContainer[str]
    text: str
    def __init__(self, text: _Optional[str] = ..., need_scopes: _Optional[_Iterable[str]] = ..., scopes_used: _Optional[_Iterable[str]] = ..., actions: _Optional[_Iterable[_Union[_token_pb2.ReceiptAction, _Mapping]]] = ..., metadata_json: _Optional[str] = ...) -> None: ...

class FinishTurnRequest(_message.Message):
    __slots__ = ["failure", "handle", "reply", "sdk_answer"]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    REPLY_FIELD_NUMBER: _ClassVar[int]
    SDK_ANSWER_FIELD_NUMBER: _ClassVar[int]
    failure: str
    handle: str
    reply: AgentReply
    sdk_answer: SdkAnswer
    def __init__(self, handle: _Optional[str] = ..., reply: _Optional[_Union[AgentReply, _Mapping]] = ..., sdk_answer: _Optional[_Union[SdkAnswer, _Mapping]] = ..., failure: _Optional[str] = ...) -> None: ...

class FinishTurnResponse(_message.Message):
    __slots__ = ["response"]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    response: HttpResponse
    def __init__(self, response: _Optional[_Union[HttpResponse, _Mapping]] = ...) -> None: ...

class HttpHeader(_message.Message):
    __slots__ = ["name", "value"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: str
    def __init__(self, name: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class HttpResponse(_message.Message):
    __slots__ = ["body", "headers", "status"]
    BODY_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    body: bytes
    headers: _containers.RepeatedCompositeFieldContainer[HttpHeader]
    status: int
    def __init__(self, status: _Optional[int] = ..., headers: _Optional[_Iterable[_Union[HttpHeader, _Mapping]]] = ..., body: _Optional[bytes] = ...) -> None: ...

class SdkAnswer(_message.Message):
    __slots__ = ["body", "status"]
    BODY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    body: bytes
    status: int
    def __init__(self, status: _Optional[int] = ..., body: _Optional[bytes] = ...) -> None: ...

class ServeRequest(_message.Message):
    __slots__ = ["body", "body_too_large", "brand_user", "client_address", "headers", "method", "path", "query", "sign_in_url", "signs_in_users"]
    BODY_FIELD_NUMBER: _ClassVar[int]
    BODY_TOO_LARGE_FIELD_NUMBER: _ClassVar[int]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SIGNS_IN_USERS_FIELD_NUMBER: _ClassVar[int]
    SIGN_IN_URL_FIELD_NUMBER: _ClassVar[int]
    body: bytes
    body_too_large: bool
    brand_user: str
    client_address: str
    headers: _containers.RepeatedCompositeFieldContainer[HttpHeader]
    method: str
    path: str
    query: str
    sign_in_url: str
    signs_in_users: bool
    def __init__(self, method: _Optional[str] = ..., path: _Optional[str] = ..., query: _Optional[str] = ..., headers: _Optional[_Iterable[_Union[HttpHeader, _Mapping]]] = ..., body: _Optional[bytes] = ..., body_too_large: bool = ..., brand_user: _Optional[str] = ..., signs_in_users: bool = ..., client_address: _Optional[str] = ..., sign_in_url: _Optional[str] = ...) -> None: ...

class ServeResponse(_message.Message):
    __slots__ = ["response", "turn", "user_needed"]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    USER_NEEDED_FIELD_NUMBER: _ClassVar[int]
    response: HttpResponse
    turn: Turn
    user_needed: UserNeeded
    def __init__(self, response: _Optional[_Union[HttpResponse, _Mapping]] = ..., turn: _Optional[_Union[Turn, _Mapping]] = ..., user_needed: _Optional[_Union[UserNeeded, _Mapping]] = ...) -> None: ...

class Turn(_message.Message):
    __slots__ = ["brand_id", "caller", "context_id", "delegation", "handle", "new_context", "sdk_path", "sdk_request_json", "text", "turn_timeout_seconds"]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    DELEGATION_FIELD_NUMBER: _ClassVar[int]
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    NEW_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    SDK_PATH_FIELD_NUMBER: _ClassVar[int]
    SDK_REQUEST_JSON_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TURN_TIMEOUT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    brand_id: str
    caller: _verification_pb2.Caller
    context_id: str
    delegation: _verification_pb2.DelegationInfo
    handle: str
    new_context: bool
    sdk_path: str
    sdk_request_json: str
    text: str
    turn_timeout_seconds: int
    def __init__(self, handle: _Optional[str] = ..., brand_id: _Optional[str] = ..., context_id: _Optional[str] = ..., new_context: bool = ..., text: _Optional[str] = ..., caller: _Optional[_Union[_verification_pb2.Caller, _Mapping]] = ..., delegation: _Optional[_Union[_verification_pb2.DelegationInfo, _Mapping]] = ..., sdk_request_json: _Optional[str] = ..., sdk_path: _Optional[str] = ..., turn_timeout_seconds: _Optional[int] = ...) -> None: ...

class UserNeeded(_message.Message):
    __slots__ = ["brand_id", "return_to"]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    RETURN_TO_FIELD_NUMBER: _ClassVar[int]
    brand_id: str
    return_to: str
    def __init__(self, brand_id: _Optional[str] = ..., return_to: _Optional[str] = ...) -> None: ...
