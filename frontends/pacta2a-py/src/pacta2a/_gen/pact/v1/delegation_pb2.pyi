from google.protobuf import timestamp_pb2 as _timestamp_pb2
from pact.v1 import authorization_details_pb2 as _authorization_details_pb2
from pact.v1 import brand_pb2 as _brand_pb2
from pact.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

BRAND_ASSERTION_REFUSAL_ALGORITHM: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_AUDIENCE: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_CLAIMS: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_EXPIRED: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_FORBIDDEN_HEADER: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_ISSUER: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_KEYS_UNAVAILABLE: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_LIFETIME: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_MALFORMED: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_NOT_PENDING: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_NOT_YET_VALID: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_REPLAYED: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_SIGNATURE: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_SUBJECT: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_TOO_OLD: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_UNKNOWN_KEY: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_UNSPECIFIED: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_USER_CODE_MISMATCH: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_USER_CODE_MISSING: BrandAssertionRefusal
BRAND_ASSERTION_REFUSAL_USER_CODE_UNEXPECTED: BrandAssertionRefusal
CONSENT_SESSION_REFUSAL_AUDIENCE: ConsentSessionRefusal
CONSENT_SESSION_REFUSAL_CLAIMS: ConsentSessionRefusal
CONSENT_SESSION_REFUSAL_EXPIRED: ConsentSessionRefusal
CONSENT_SESSION_REFUSAL_ISSUER: ConsentSessionRefusal
CONSENT_SESSION_REFUSAL_MALFORMED: ConsentSessionRefusal
CONSENT_SESSION_REFUSAL_NOT_PENDING: ConsentSessionRefusal
CONSENT_SESSION_REFUSAL_SIGNATURE: ConsentSessionRefusal
CONSENT_SESSION_REFUSAL_TYPE: ConsentSessionRefusal
CONSENT_SESSION_REFUSAL_UNSPECIFIED: ConsentSessionRefusal
CONSENT_SESSION_REFUSAL_USER_CODE_MISMATCH: ConsentSessionRefusal
DESCRIPTOR: _descriptor.FileDescriptor
GRANT_CHECK_REASON_AGENT_NOT_ALLOWED: GrantCheckReason
GRANT_CHECK_REASON_DETAILS_NOT_COVERED: GrantCheckReason
GRANT_CHECK_REASON_EXPIRED: GrantCheckReason
GRANT_CHECK_REASON_REVOKED: GrantCheckReason
GRANT_CHECK_REASON_SCOPE_NOT_GRANTED: GrantCheckReason
GRANT_CHECK_REASON_SCOPE_RESTRICTED: GrantCheckReason
GRANT_CHECK_REASON_UNKNOWN: GrantCheckReason
GRANT_CHECK_REASON_UNSPECIFIED: GrantCheckReason

class ApproveConsentRequest(_message.Message):
    __slots__ = ["brand_assertion", "brand_id", "brand_user", "consent_session", "scopes", "skip_consent", "source", "user_code"]
    BRAND_ASSERTION_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    CONSENT_SESSION_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    SKIP_CONSENT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    USER_CODE_FIELD_NUMBER: _ClassVar[int]
    brand_assertion: str
    brand_id: str
    brand_user: str
    consent_session: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    skip_consent: bool
    source: str
    user_code: str
    def __init__(self, brand_id: _Optional[str] = ..., user_code: _Optional[str] = ..., brand_user: _Optional[str] = ..., brand_assertion: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., source: _Optional[str] = ..., consent_session: _Optional[str] = ..., skip_consent: bool = ...) -> None: ...

class ApproveConsentResponse(_message.Message):
    __slots__ = ["authorization_details_json", "client_id", "grant_id", "scopes"]
    AUTHORIZATION_DETAILS_JSON_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    authorization_details_json: str
    client_id: str
    grant_id: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, grant_id: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., client_id: _Optional[str] = ..., authorization_details_json: _Optional[str] = ...) -> None: ...

class BeginConnectedRequest(_message.Message):
    __slots__ = ["brand_assertion", "brand_id", "connected_session", "source"]
    BRAND_ASSERTION_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_SESSION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    brand_assertion: str
    brand_id: str
    connected_session: str
    source: str
    def __init__(self, brand_id: _Optional[str] = ..., brand_assertion: _Optional[str] = ..., connected_session: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class BeginConnectedResponse(_message.Message):
    __slots__ = ["brand_user", "connected_session", "connected_url", "grants", "session_expires_at", "truncated"]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_SESSION_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_URL_FIELD_NUMBER: _ClassVar[int]
    GRANTS_FIELD_NUMBER: _ClassVar[int]
    SESSION_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    brand_user: str
    connected_session: str
    connected_url: str
    grants: _containers.RepeatedCompositeFieldContainer[Grant]
    session_expires_at: _timestamp_pb2.Timestamp
    truncated: bool
    def __init__(self, brand_user: _Optional[str] = ..., grants: _Optional[_Iterable[_Union[Grant, _Mapping]]] = ..., truncated: bool = ..., connected_session: _Optional[str] = ..., session_expires_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., connected_url: _Optional[str] = ...) -> None: ...

class BeginConsentRequest(_message.Message):
    __slots__ = ["brand_assertion", "brand_id", "source"]
    BRAND_ASSERTION_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    brand_assertion: str
    brand_id: str
    source: str
    def __init__(self, brand_id: _Optional[str] = ..., brand_assertion: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class BeginConsentResponse(_message.Message):
    __slots__ = ["brand_user", "client_id", "consent", "consent_session", "decision_url", "email", "granted_scopes", "session_expires_at", "skipped_grant_id"]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONSENT_FIELD_NUMBER: _ClassVar[int]
    CONSENT_SESSION_FIELD_NUMBER: _ClassVar[int]
    DECISION_URL_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    GRANTED_SCOPES_FIELD_NUMBER: _ClassVar[int]
    SESSION_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    brand_user: str
    client_id: str
    consent: DescribeConsentResponse
    consent_session: str
    decision_url: str
    email: str
    granted_scopes: _containers.RepeatedScalarFieldContainer[str]
    session_expires_at: _timestamp_pb2.Timestamp
    skipped_grant_id: str
    def __init__(self, consent: _Optional[_Union[DescribeConsentResponse, _Mapping]] = ..., brand_user: _Optional[str] = ..., email: _Optional[str] = ..., consent_session: _Optional[str] = ..., session_expires_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., decision_url: _Optional[str] = ..., client_id: _Optional[str] = ..., skipped_grant_id: _Optional[str] = ..., granted_scopes: _Optional[_Iterable[str]] = ...) -> None: ...

class CheckGrantRequest(_message.Message):
    __slots__ = ["agent_id", "authorization_details_json", "brand_id", "brand_user", "grant_id", "scopes"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZATION_DETAILS_JSON_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    authorization_details_json: str
    brand_id: str
    brand_user: str
    grant_id: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, brand_id: _Optional[str] = ..., grant_id: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., authorization_details_json: _Optional[str] = ..., brand_user: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class CheckGrantResponse(_message.Message):
    __slots__ = ["active", "expire_time", "missing_scopes", "reason"]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    MISSING_SCOPES_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    active: bool
    expire_time: _timestamp_pb2.Timestamp
    missing_scopes: _containers.RepeatedScalarFieldContainer[str]
    reason: GrantCheckReason
    def __init__(self, active: bool = ..., reason: _Optional[_Union[GrantCheckReason, str]] = ..., missing_scopes: _Optional[_Iterable[str]] = ..., expire_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class DenyConsentRequest(_message.Message):
    __slots__ = ["brand_assertion", "brand_id", "consent_session", "source", "user_code"]
    BRAND_ASSERTION_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    CONSENT_SESSION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    USER_CODE_FIELD_NUMBER: _ClassVar[int]
    brand_assertion: str
    brand_id: str
    consent_session: str
    source: str
    user_code: str
    def __init__(self, brand_id: _Optional[str] = ..., user_code: _Optional[str] = ..., brand_assertion: _Optional[str] = ..., source: _Optional[str] = ..., consent_session: _Optional[str] = ...) -> None: ...

class DenyConsentResponse(_message.Message):
    __slots__ = ["client_id"]
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    client_id: str
    def __init__(self, client_id: _Optional[str] = ...) -> None: ...

class DescribeConsentRequest(_message.Message):
    __slots__ = ["brand_id", "brand_user", "source", "user_code"]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    USER_CODE_FIELD_NUMBER: _ClassVar[int]
    brand_id: str
    brand_user: str
    source: str
    user_code: str
    def __init__(self, brand_id: _Optional[str] = ..., user_code: _Optional[str] = ..., source: _Optional[str] = ..., brand_user: _Optional[str] = ...) -> None: ...

class DescribeConsentResponse(_message.Message):
    __slots__ = ["agent_display_name", "agent_origin", "authorization_details", "brand_display_name", "covered_by_grant", "expires_at", "scopes", "user_code"]
    AGENT_DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    AGENT_ORIGIN_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZATION_DETAILS_FIELD_NUMBER: _ClassVar[int]
    BRAND_DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    COVERED_BY_GRANT_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    USER_CODE_FIELD_NUMBER: _ClassVar[int]
    agent_display_name: str
    agent_origin: str
    authorization_details: _containers.RepeatedCompositeFieldContainer[_authorization_details_pb2.ConsentAuthorizationDetail]
    brand_display_name: str
    covered_by_grant: bool
    expires_at: _timestamp_pb2.Timestamp
    scopes: _containers.RepeatedCompositeFieldContainer[_brand_pb2.Scope]
    user_code: str
    def __init__(self, agent_display_name: _Optional[str] = ..., agent_origin: _Optional[str] = ..., brand_display_name: _Optional[str] = ..., scopes: _Optional[_Iterable[_Union[_brand_pb2.Scope, _Mapping]]] = ..., user_code: _Optional[str] = ..., expires_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., authorization_details: _Optional[_Iterable[_Union[_authorization_details_pb2.ConsentAuthorizationDetail, _Mapping]]] = ..., covered_by_grant: bool = ...) -> None: ...

class FindGrantsRequest(_message.Message):
    __slots__ = ["agent_id", "brand_id", "brand_user", "page"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    brand_id: str
    brand_user: str
    page: _common_pb2.PageRequest
    def __init__(self, brand_id: _Optional[str] = ..., brand_user: _Optional[str] = ..., agent_id: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class FindGrantsResponse(_message.Message):
    __slots__ = ["grants", "next_page_token"]
    GRANTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    grants: _containers.RepeatedCompositeFieldContainer[Grant]
    next_page_token: str
    def __init__(self, grants: _Optional[_Iterable[_Union[Grant, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class Grant(_message.Message):
    __slots__ = ["agent_display_name", "agent_id", "authorization_details", "brand_id", "brand_user", "create_time", "expire_time", "grant_id", "revoke_time", "scopes"]
    AGENT_DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZATION_DETAILS_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    REVOKE_TIME_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    agent_display_name: str
    agent_id: str
    authorization_details: _containers.RepeatedCompositeFieldContainer[_authorization_details_pb2.ConsentAuthorizationDetail]
    brand_id: str
    brand_user: str
    create_time: _timestamp_pb2.Timestamp
    expire_time: _timestamp_pb2.Timestamp
    grant_id: str
    revoke_time: _timestamp_pb2.Timestamp
    scopes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, grant_id: _Optional[str] = ..., brand_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., agent_display_name: _Optional[str] = ..., brand_user: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., create_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., expire_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., revoke_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., authorization_details: _Optional[_Iterable[_Union[_authorization_details_pb2.ConsentAuthorizationDetail, _Mapping]]] = ...) -> None: ...

class IssueDelegationRequest(_message.Message):
    __slots__ = ["authorization", "brand_id", "client_id", "device_code", "grant_type", "refresh_token"]
    AUTHORIZATION_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    DEVICE_CODE_FIELD_NUMBER: _ClassVar[int]
    GRANT_TYPE_FIELD_NUMBER: _ClassVar[int]
    REFRESH_TOKEN_FIELD_NUMBER: _ClassVar[int]
    authorization: str
    brand_id: str
    client_id: str
    device_code: str
    grant_type: str
    refresh_token: str
    def __init__(self, brand_id: _Optional[str] = ..., authorization: _Optional[str] = ..., grant_type: _Optional[str] = ..., device_code: _Optional[str] = ..., refresh_token: _Optional[str] = ..., client_id: _Optional[str] = ...) -> None: ...

class IssueDelegationResponse(_message.Message):
    __slots__ = ["access_token", "authorization_details_json", "body_json", "error", "expires_in", "refresh_token", "scope", "token_type"]
    ACCESS_TOKEN_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZATION_DETAILS_JSON_FIELD_NUMBER: _ClassVar[int]
    BODY_JSON_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_IN_FIELD_NUMBER: _ClassVar[int]
    REFRESH_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_TYPE_FIELD_NUMBER: _ClassVar[int]
    access_token: str
    authorization_details_json: str
    body_json: str
    error: _common_pb2.OAuthError
    expires_in: int
    refresh_token: str
    scope: str
    token_type: str
    def __init__(self, access_token: _Optional[str] = ..., token_type: _Optional[str] = ..., refresh_token: _Optional[str] = ..., expires_in: _Optional[int] = ..., scope: _Optional[str] = ..., error: _Optional[_Union[_common_pb2.OAuthError, _Mapping]] = ..., body_json: _Optional[str] = ..., authorization_details_json: _Optional[str] = ...) -> None: ...

class ListGrantsRequest(_message.Message):
    __slots__ = ["brand_id", "brand_user", "page"]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    brand_id: str
    brand_user: str
    page: _common_pb2.PageRequest
    def __init__(self, brand_id: _Optional[str] = ..., brand_user: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListGrantsResponse(_message.Message):
    __slots__ = ["grants", "next_page_token"]
    GRANTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    grants: _containers.RepeatedCompositeFieldContainer[Grant]
    next_page_token: str
    def __init__(self, grants: _Optional[_Iterable[_Union[Grant, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RevokeConnectedRequest(_message.Message):
    __slots__ = ["agent_id", "brand_id", "connected_session", "source"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_SESSION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    brand_id: str
    connected_session: str
    source: str
    def __init__(self, brand_id: _Optional[str] = ..., connected_session: _Optional[str] = ..., agent_id: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class RevokeConnectedResponse(_message.Message):
    __slots__ = ["brand_user", "grants", "revoked_grant_ids", "truncated"]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    GRANTS_FIELD_NUMBER: _ClassVar[int]
    REVOKED_GRANT_IDS_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    brand_user: str
    grants: _containers.RepeatedCompositeFieldContainer[Grant]
    revoked_grant_ids: _containers.RepeatedScalarFieldContainer[str]
    truncated: bool
    def __init__(self, revoked_grant_ids: _Optional[_Iterable[str]] = ..., grants: _Optional[_Iterable[_Union[Grant, _Mapping]]] = ..., truncated: bool = ..., brand_user: _Optional[str] = ...) -> None: ...

class RevokeGrantRequest(_message.Message):
    __slots__ = ["brand_id", "brand_user", "grant_id"]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    brand_id: str
    brand_user: str
    grant_id: str
    def __init__(self, brand_id: _Optional[str] = ..., grant_id: _Optional[str] = ..., brand_user: _Optional[str] = ...) -> None: ...

class RevokeGrantResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class RevokeTokenRequest(_message.Message):
    __slots__ = ["authorization", "brand_id", "client_id", "token", "token_type_hint"]
    AUTHORIZATION_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    TOKEN_TYPE_HINT_FIELD_NUMBER: _ClassVar[int]
    authorization: str
    brand_id: str
    client_id: str
    token: str
    token_type_hint: str
    def __init__(self, brand_id: _Optional[str] = ..., authorization: _Optional[str] = ..., client_id: _Optional[str] = ..., token: _Optional[str] = ..., token_type_hint: _Optional[str] = ...) -> None: ...

class RevokeTokenResponse(_message.Message):
    __slots__ = ["error"]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    error: _common_pb2.OAuthError
    def __init__(self, error: _Optional[_Union[_common_pb2.OAuthError, _Mapping]] = ...) -> None: ...

class StartDeviceAuthorizationRequest(_message.Message):
    __slots__ = ["authorization", "authorization_details", "brand_id", "client_id", "scope"]
    AUTHORIZATION_DETAILS_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZATION_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    authorization: str
    authorization_details: str
    brand_id: str
    client_id: str
    scope: str
    def __init__(self, brand_id: _Optional[str] = ..., authorization: _Optional[str] = ..., client_id: _Optional[str] = ..., scope: _Optional[str] = ..., authorization_details: _Optional[str] = ...) -> None: ...

class StartDeviceAuthorizationResponse(_message.Message):
    __slots__ = ["body_json", "device_code", "error", "expires_in", "interval", "user_code", "verification_uri", "verification_uri_complete"]
    BODY_JSON_FIELD_NUMBER: _ClassVar[int]
    DEVICE_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_IN_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_FIELD_NUMBER: _ClassVar[int]
    USER_CODE_FIELD_NUMBER: _ClassVar[int]
    VERIFICATION_URI_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    VERIFICATION_URI_FIELD_NUMBER: _ClassVar[int]
    body_json: str
    device_code: str
    error: _common_pb2.OAuthError
    expires_in: int
    interval: int
    user_code: str
    verification_uri: str
    verification_uri_complete: str
    def __init__(self, device_code: _Optional[str] = ..., user_code: _Optional[str] = ..., verification_uri: _Optional[str] = ..., verification_uri_complete: _Optional[str] = ..., expires_in: _Optional[int] = ..., interval: _Optional[int] = ..., error: _Optional[_Union[_common_pb2.OAuthError, _Mapping]] = ..., body_json: _Optional[str] = ...) -> None: ...

class StartStepUpRequest(_message.Message):
    __slots__ = ["agent_id", "brand_id", "context_id", "missing_scopes"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    MISSING_SCOPES_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    brand_id: str
    context_id: str
    missing_scopes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, brand_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., context_id: _Optional[str] = ..., missing_scopes: _Optional[_Iterable[str]] = ...) -> None: ...

class StartStepUpResponse(_message.Message):
    __slots__ = ["missing_scopes", "scopes", "task_id", "verification_uri_complete"]
    MISSING_SCOPES_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    VERIFICATION_URI_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    missing_scopes: _containers.RepeatedScalarFieldContainer[str]
    scopes: _containers.RepeatedCompositeFieldContainer[_brand_pb2.Scope]
    task_id: str
    verification_uri_complete: str
    def __init__(self, task_id: _Optional[str] = ..., missing_scopes: _Optional[_Iterable[str]] = ..., verification_uri_complete: _Optional[str] = ..., scopes: _Optional[_Iterable[_Union[_brand_pb2.Scope, _Mapping]]] = ...) -> None: ...

class ConsentSessionRefusal(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class BrandAssertionRefusal(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class GrantCheckReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
