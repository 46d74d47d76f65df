from google.protobuf import timestamp_pb2 as _timestamp_pb2
from pact.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

AUDIT_EVENT_KIND_CONSENT_SKIPPED: AuditEventKind
AUDIT_EVENT_KIND_GRANT_CREATED: AuditEventKind
AUDIT_EVENT_KIND_GRANT_REDEEMED: AuditEventKind
AUDIT_EVENT_KIND_GRANT_REFRESHED: AuditEventKind
AUDIT_EVENT_KIND_GRANT_REUSE_REVOKED: AuditEventKind
AUDIT_EVENT_KIND_GRANT_REVOKED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_ADDRESS_DECIDED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_ADDRESS_PENDING: AuditEventKind
AUDIT_EVENT_KIND_HDTP_CALL_REFUSED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_CONTACT_ACCEPTED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_CONTACT_APPROVED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_CONTACT_BLOCKED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_CONTACT_DENIED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_CONTACT_MOVED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_CONTACT_REJECTED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_CONTACT_REMOVED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_CONTACT_REQUESTED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_CONTACT_UNBLOCKED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_INVITE_CREATED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_INVITE_REVOKED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_LEAF_RENEWED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_PERMISSIONS_CHANGED: AuditEventKind
AUDIT_EVENT_KIND_HDTP_REQUEST_SENT: AuditEventKind
AUDIT_EVENT_KIND_RECEIPT_SIGNED: AuditEventKind
AUDIT_EVENT_KIND_STEP_UP: AuditEventKind
AUDIT_EVENT_KIND_UNSPECIFIED: AuditEventKind
DESCRIPTOR: _descriptor.FileDescriptor

class AuditAction(_message.Message):
    __slots__ = ["args_hash", "tool"]
    ARGS_HASH_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    args_hash: str
    tool: str
    def __init__(self, tool: _Optional[str] = ..., args_hash: _Optional[str] = ...) -> None: ...

class AuditEvent(_message.Message):
    __slots__ = ["actions", "actor", "agent_id", "brand_id", "brand_user", "detail", "grant_id", "hdtp_identity_id", "hdtp_peer", "id", "kind", "pa_issuer", "scopes", "time"]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    HDTP_IDENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    HDTP_PEER_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PA_ISSUER_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[AuditAction]
    actor: str
    agent_id: str
    brand_id: str
    brand_user: str
    detail: str
    grant_id: str
    hdtp_identity_id: str
    hdtp_peer: str
    id: str
    kind: AuditEventKind
    pa_issuer: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    time: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[_Union[AuditEventKind, str]] = ..., time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., brand_id: _Optional[str] = ..., brand_user: _Optional[str] = ..., agent_id: _Optional[str] = ..., pa_issuer: _Optional[str] = ..., grant_id: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., actions: _Optional[_Iterable[_Union[AuditAction, _Mapping]]] = ..., actor: _Optional[str] = ..., detail: _Optional[str] = ..., hdtp_identity_id: _Optional[str] = ..., hdtp_peer: _Optional[str] = ...) -> None: ...

class AuditFilter(_message.Message):
    __slots__ = ["agent_id", "brand_user", "end_time", "grant_id", "hdtp_identity_id", "kind", "start_time"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    HDTP_IDENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    brand_user: str
    end_time: _timestamp_pb2.Timestamp
    grant_id: str
    hdtp_identity_id: str
    kind: AuditEventKind
    start_time: _timestamp_pb2.Timestamp
    def __init__(self, brand_user: _Optional[str] = ..., agent_id: _Optional[str] = ..., grant_id: _Optional[str] = ..., kind: _Optional[_Union[AuditEventKind, str]] = ..., start_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., hdtp_identity_id: _Optional[str] = ...) -> None: ...

class ListAuditEventsRequest(_message.Message):
    __slots__ = ["brand_id", "filter", "page"]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    brand_id: str
    filter: AuditFilter
    page: _common_pb2.PageRequest
    def __init__(self, brand_id: _Optional[str] = ..., filter: _Optional[_Union[AuditFilter, _Mapping]] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListAuditEventsResponse(_message.Message):
    __slots__ = ["events", "next_page_token"]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[AuditEvent]
    next_page_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[AuditEvent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListBrandAuditEventsRequest(_message.Message):
    __slots__ = ["brand_id", "filter", "page"]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    brand_id: str
    filter: AuditFilter
    page: _common_pb2.PageRequest
    def __init__(self, brand_id: _Optional[str] = ..., filter: _Optional[_Union[AuditFilter, _Mapping]] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListBrandAuditEventsResponse(_message.Message):
    __slots__ = ["events", "next_page_token"]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[AuditEvent]
    next_page_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[AuditEvent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class AuditEventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
