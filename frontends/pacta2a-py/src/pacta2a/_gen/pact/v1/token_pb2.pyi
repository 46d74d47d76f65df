from google.protobuf import timestamp_pb2 as _timestamp_pb2
from pact.v1 import authorization_details_pb2 as _authorization_details_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetAuthorizationServerMetadataRequest(_message.Message):
    __slots__ = ["brand_id"]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    brand_id: str
    def __init__(self, brand_id: _Optional[str] = ...) -> None: ...

class GetAuthorizationServerMetadataResponse(_message.Message):
    __slots__ = ["cache_control", "metadata_json"]
    CACHE_CONTROL_FIELD_NUMBER: _ClassVar[int]
    METADATA_JSON_FIELD_NUMBER: _ClassVar[int]
    cache_control: str
    metadata_json: str
    def __init__(self, metadata_json: _Optional[str] = ..., cache_control: _Optional[str] = ...) -> None: ...

class GetJwksRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetJwksResponse(_message.Message):
    __slots__ = ["cache_control", "jwks_json"]
    CACHE_CONTROL_FIELD_NUMBER: _ClassVar[int]
    JWKS_JSON_FIELD_NUMBER: _ClassVar[int]
    cache_control: str
    jwks_json: str
    def __init__(self, jwks_json: _Optional[str] = ..., cache_control: _Optional[str] = ...) -> None: ...

class IntrospectTokenRequest(_message.Message):
    __slots__ = ["brand_id", "client_id", "token"]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    brand_id: str
    client_id: str
    token: str
    def __init__(self, token: _Optional[str] = ..., brand_id: _Optional[str] = ..., client_id: _Optional[str] = ...) -> None: ...

class IntrospectTokenResponse(_message.Message):
    __slots__ = ["active", "aud", "authorization_details", "authorization_details_json", "client_id", "exp", "grant_id", "iat", "iss", "jti", "scope", "sub", "token_type"]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    AUD_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZATION_DETAILS_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZATION_DETAILS_JSON_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    EXP_FIELD_NUMBER: _ClassVar[int]
    GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    IAT_FIELD_NUMBER: _ClassVar[int]
    ISS_FIELD_NUMBER: _ClassVar[int]
    JTI_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    SUB_FIELD_NUMBER: _ClassVar[int]
    TOKEN_TYPE_FIELD_NUMBER: _ClassVar[int]
    active: bool
    aud: str
    authorization_details: _containers.RepeatedCompositeFieldContainer[_authorization_details_pb2.AuthorizationDetail]
    authorization_details_json: str
    client_id: str
    exp: _timestamp_pb2.Timestamp
    grant_id: str
    iat: _timestamp_pb2.Timestamp
    iss: str
    jti: str
    scope: str
    sub: str
    token_type: str
    def __init__(self, active: bool = ..., scope: _Optional[str] = ..., client_id: _Optional[str] = ..., sub: _Optional[str] = ..., aud: _Optional[str] = ..., iss: _Optional[str] = ..., exp: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., iat: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., grant_id: _Optional[str] = ..., token_type: _Optional[str] = ..., authorization_details_json: _Optional[str] = ..., authorization_details: _Optional[_Iterable[_Union[_authorization_details_pb2.AuthorizationDetail, _Mapping]]] = ..., jti: _Optional[str] = ...) -> None: ...

class ReceiptAction(_message.Message):
    __slots__ = ["args_hash", "args_json", "tool"]
    ARGS_HASH_FIELD_NUMBER: _ClassVar[int]
    ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    args_hash: str
    args_json: str
    tool: str
    def __init__(self, tool: _Optional[str] = ..., args_hash: _Optional[str] = ..., args_json: _Optional[str] = ...) -> None: ...

class RotateSigningKeyRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class RotateSigningKeyResponse(_message.Message):
    __slots__ = ["activate_time", "kid"]
    ACTIVATE_TIME_FIELD_NUMBER: _ClassVar[int]
    KID_FIELD_NUMBER: _ClassVar[int]
    activate_time: _timestamp_pb2.Timestamp
    kid: str
    def __init__(self, kid: _Optional[str] = ..., activate_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SignReceiptRequest(_message.Message):
    __slots__ = ["actions", "brand_id", "brand_user", "grant_id", "pa_issuer", "scopes_used", "ts"]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    GRANT_ID_FIELD_NUMBER: _ClassVar[int]
    PA_ISSUER_FIELD_NUMBER: _ClassVar[int]
    SCOPES_USED_FIELD_NUMBER: _ClassVar[int]
    TS_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[ReceiptAction]
    brand_id: str
    brand_user: str
    grant_id: str
    pa_issuer: str
    scopes_used: _containers.RepeatedScalarFieldContainer[str]
    ts: _timestamp_pb2.Timestamp
    def __init__(self, brand_id: _Optional[str] = ..., grant_id: _Optional[str] = ..., scopes_used: _Optional[_Iterable[str]] = ..., actions: _Optional[_Iterable[_Union[ReceiptAction, _Mapping]]] = ..., ts: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., pa_issuer: _Optional[str] = ..., brand_user: _Optional[str] = ...) -> None: ...

class SignReceiptResponse(_message.Message):
    __slots__ = ["claims_json", "jws", "receipt_json"]
    CLAIMS_JSON_FIELD_NUMBER: _ClassVar[int]
    JWS_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_JSON_FIELD_NUMBER: _ClassVar[int]
    claims_json: str
    jws: str
    receipt_json: str
    def __init__(self, jws: _Optional[str] = ..., claims_json: _Optional[str] = ..., receipt_json: _Optional[str] = ...) -> None: ...
