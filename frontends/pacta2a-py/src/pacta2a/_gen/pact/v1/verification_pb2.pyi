from google.protobuf import timestamp_pb2 as _timestamp_pb2
from pact.v1 import authorization_details_pb2 as _authorization_details_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DENY_REASON_AGENT_DISABLED: DenyReason
DENY_REASON_AGENT_NOT_ALLOWED: DenyReason
DENY_REASON_ALGORITHM: DenyReason
DENY_REASON_AUDIENCE: DenyReason
DENY_REASON_CLAIMS: DenyReason
DENY_REASON_DELEGATION_DISABLED: DenyReason
DENY_REASON_DELEGATION_INVALID: DenyReason
DENY_REASON_EXPIRED: DenyReason
DENY_REASON_FORBIDDEN_HEADER: DenyReason
DENY_REASON_JWKS_UNAVAILABLE: DenyReason
DENY_REASON_LIFETIME: DenyReason
DENY_REASON_MALFORMED: DenyReason
DENY_REASON_NOT_YET_VALID: DenyReason
DENY_REASON_RATE_LIMITED: DenyReason
DENY_REASON_SIGNATURE: DenyReason
DENY_REASON_SUBJECT: DenyReason
DENY_REASON_TOO_LARGE: DenyReason
DENY_REASON_UNKNOWN_BRAND: DenyReason
DENY_REASON_UNKNOWN_ISSUER: DenyReason
DENY_REASON_UNKNOWN_KEY: DenyReason
DENY_REASON_UNSPECIFIED: DenyReason
DESCRIPTOR: _descriptor.FileDescriptor

class Caller(_message.Message):
    __slots__ = ["agent_display_name", "agent_id", "issuer", "subject"]
    AGENT_DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ISSUER_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    agent_display_name: str
    agent_id: str
    issuer: str
    subject: str
    def __init__(self, agent_id: _Optional[str] = ..., issuer: _Optional[str] = ..., subject: _Optional[str] = ..., agent_display_name: _Optional[str] = ...) -> None: ...

class DelegationInfo(_message.Message):
    __slots__ = ["authorization_details", "authorization_details_json", "brand_user", "expires_at", "grant_id", "scopes"]
    AUTHORIZATION_DETAILS_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZATION_DETAILS_JSON_FIELD_NUMBER: _ClassVar[int]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    authorization_details: _containers.RepeatedCompositeFieldContainer[_authorization_details_pb2.AuthorizationDetail]
    authorization_details_json: str
    brand_user: str
    expires_at: _timestamp_pb2.Timestamp
    grant_id: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, grant_id: _Optional[str] = ..., brand_user: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., expires_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., authorization_details_json: _Optional[str] = ..., authorization_details: _Optional[_Iterable[_Union[_authorization_details_pb2.AuthorizationDetail, _Mapping]]] = ...) -> None: ...

class VerifyAgentRequestRequest(_message.Message):
    __slots__ = ["authorization", "brand_id", "user_delegation"]
    AUTHORIZATION_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    USER_DELEGATION_FIELD_NUMBER: _ClassVar[int]
    authorization: str
    brand_id: str
    user_delegation: str
    def __init__(self, brand_id: _Optional[str] = ..., authorization: _Optional[str] = ..., user_delegation: _Optional[str] = ...) -> None: ...

class VerifyAgentRequestResponse(_message.Message):
    __slots__ = ["allowed", "caller", "delegation", "http_status", "reason", "retry_after_seconds", "www_authenticate"]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    DELEGATION_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    WWW_AUTHENTICATE_FIELD_NUMBER: _ClassVar[int]
    allowed: bool
    caller: Caller
    delegation: DelegationInfo
    http_status: int
    reason: DenyReason
    retry_after_seconds: int
    www_authenticate: str
    def __init__(self, allowed: bool = ..., http_status: _Optional[int] = ..., www_authenticate: _Optional[str] = ..., retry_after_seconds: _Optional[int] = ..., reason: _Optional[_Union[DenyReason, str]] = ..., caller: _Optional[_Union[Caller, _Mapping]] = ..., delegation: _Optional[_Union[DelegationInfo, _Mapping]] = ...) -> None: ...

class DenyReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
