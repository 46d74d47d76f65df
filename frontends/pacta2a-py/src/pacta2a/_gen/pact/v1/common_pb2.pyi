from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor
ERROR_REASON_ALREADY_EXISTS: ErrorReason
ERROR_REASON_FAILED_PRECONDITION: ErrorReason
ERROR_REASON_INTERNAL: ErrorReason
ERROR_REASON_INVALID_ARGUMENT: ErrorReason
ERROR_REASON_NOT_FOUND: ErrorReason
ERROR_REASON_PERMISSION_DENIED: ErrorReason
ERROR_REASON_UNAUTHENTICATED: ErrorReason
ERROR_REASON_UNAVAILABLE: ErrorReason
ERROR_REASON_UNSPECIFIED: ErrorReason

class A2AError(_message.Message):
    __slots__ = ["body_json", "http_status", "message", "reason", "status"]
    BODY_JSON_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    body_json: str
    http_status: int
    message: str
    reason: str
    status: str
    def __init__(self, http_status: _Optional[int] = ..., status: _Optional[str] = ..., reason: _Optional[str] = ..., message: _Optional[str] = ..., body_json: _Optional[str] = ...) -> None: ...

class OAuthError(_message.Message):
    __slots__ = ["body_json", "error", "error_description", "http_status", "www_authenticate"]
    BODY_JSON_FIELD_NUMBER: _ClassVar[int]
    ERROR_DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    WWW_AUTHENTICATE_FIELD_NUMBER: _ClassVar[int]
    body_json: str
    error: str
    error_description: str
    http_status: int
    www_authenticate: str
    def __init__(self, http_status: _Optional[int] = ..., error: _Optional[str] = ..., error_description: _Optional[str] = ..., www_authenticate: _Optional[str] = ..., body_json: _Optional[str] = ...) -> None: ...

class PageRequest(_message.Message):
    __slots__ = ["page_size", "page_token"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
