from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from pact.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
SELF_REGISTRATION_RESULT_CLOSED: SelfRegistrationResult
SELF_REGISTRATION_RESULT_CONFLICT: SelfRegistrationResult
SELF_REGISTRATION_RESULT_CREATED: SelfRegistrationResult
SELF_REGISTRATION_RESULT_EXISTS: SelfRegistrationResult
SELF_REGISTRATION_RESULT_INVALID_REQUEST: SelfRegistrationResult
SELF_REGISTRATION_RESULT_INVALID_TOKEN: SelfRegistrationResult
SELF_REGISTRATION_RESULT_UNSPECIFIED: SelfRegistrationResult

class Agent(_message.Message):
    __slots__ = ["audience", "create_time", "display_name", "enabled", "id", "issuer", "jwks_uri", "update_time"]
    AUDIENCE_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    ISSUER_FIELD_NUMBER: _ClassVar[int]
    JWKS_URI_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    audience: str
    create_time: _timestamp_pb2.Timestamp
    display_name: str
    enabled: bool
    id: str
    issuer: str
    jwks_uri: str
    update_time: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., issuer: _Optional[str] = ..., jwks_uri: _Optional[str] = ..., display_name: _Optional[str] = ..., audience: _Optional[str] = ..., enabled: bool = ..., create_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class DeleteAgentRequest(_message.Message):
    __slots__ = ["id"]
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class DeleteAgentResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetAgentRequest(_message.Message):
    __slots__ = ["id", "issuer"]
    ID_FIELD_NUMBER: _ClassVar[int]
    ISSUER_FIELD_NUMBER: _ClassVar[int]
    id: str
    issuer: str
    def __init__(self, id: _Optional[str] = ..., issuer: _Optional[str] = ...) -> None: ...

class GetAgentResponse(_message.Message):
    __slots__ = ["agent"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    def __init__(self, agent: _Optional[_Union[Agent, _Mapping]] = ...) -> None: ...

class ListAgentsRequest(_message.Message):
    __slots__ = ["page"]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    page: _common_pb2.PageRequest
    def __init__(self, page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListAgentsResponse(_message.Message):
    __slots__ = ["agents", "next_page_token"]
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[Agent]
    next_page_token: str
    def __init__(self, agents: _Optional[_Iterable[_Union[Agent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RegisterAgentRequest(_message.Message):
    __slots__ = ["audience", "display_name", "issuer", "jwks_uri"]
    AUDIENCE_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    ISSUER_FIELD_NUMBER: _ClassVar[int]
    JWKS_URI_FIELD_NUMBER: _ClassVar[int]
    audience: str
    display_name: str
    issuer: str
    jwks_uri: str
    def __init__(self, issuer: _Optional[str] = ..., jwks_uri: _Optional[str] = ..., display_name: _Optional[str] = ..., audience: _Optional[str] = ...) -> None: ...

class RegisterAgentResponse(_message.Message):
    __slots__ = ["agent", "created"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    created: bool
    def __init__(self, agent: _Optional[_Union[Agent, _Mapping]] = ..., created: bool = ...) -> None: ...

class SelfRegisterAgentRequest(_message.Message):
    __slots__ = ["endpoint_url", "jwks_uri", "name", "token"]
    ENDPOINT_URL_FIELD_NUMBER: _ClassVar[int]
    JWKS_URI_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    endpoint_url: str
    jwks_uri: str
    name: str
    token: str
    def __init__(self, token: _Optional[str] = ..., name: _Optional[str] = ..., jwks_uri: _Optional[str] = ..., endpoint_url: _Optional[str] = ...) -> None: ...

class SelfRegisterAgentResponse(_message.Message):
    __slots__ = ["agent", "name", "reason", "result"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    name: str
    reason: str
    result: SelfRegistrationResult
    def __init__(self, result: _Optional[_Union[SelfRegistrationResult, str]] = ..., reason: _Optional[str] = ..., agent: _Optional[_Union[Agent, _Mapping]] = ..., name: _Optional[str] = ...) -> None: ...

class UpdateAgentRequest(_message.Message):
    __slots__ = ["agent", "update_mask"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, agent: _Optional[_Union[Agent, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateAgentResponse(_message.Message):
    __slots__ = ["agent"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    def __init__(self, agent: _Optional[_Union[Agent, _Mapping]] = ...) -> None: ...

class SelfRegistrationResult(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
