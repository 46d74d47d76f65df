from google.protobuf import timestamp_pb2 as _timestamp_pb2
from pact.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

CALLER_ROLE_ADMIN: CallerRole
CALLER_ROLE_FRONTEND: CallerRole
CALLER_ROLE_UNSPECIFIED: CallerRole
DESCRIPTOR: _descriptor.FileDescriptor

class CreateCredentialRequest(_message.Message):
    __slots__ = ["expire_time", "name", "role"]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    expire_time: _timestamp_pb2.Timestamp
    name: str
    role: CallerRole
    def __init__(self, role: _Optional[_Union[CallerRole, str]] = ..., name: _Optional[str] = ..., expire_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateCredentialResponse(_message.Message):
    __slots__ = ["credential", "token"]
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    credential: Credential
    token: str
    def __init__(self, credential: _Optional[_Union[Credential, _Mapping]] = ..., token: _Optional[str] = ...) -> None: ...

class Credential(_message.Message):
    __slots__ = ["create_time", "expire_time", "id", "last_use_time", "name", "revoke_time", "role"]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    LAST_USE_TIME_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REVOKE_TIME_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    create_time: _timestamp_pb2.Timestamp
    expire_time: _timestamp_pb2.Timestamp
    id: str
    last_use_time: _timestamp_pb2.Timestamp
    name: str
    revoke_time: _timestamp_pb2.Timestamp
    role: CallerRole
    def __init__(self, id: _Optional[str] = ..., role: _Optional[_Union[CallerRole, str]] = ..., name: _Optional[str] = ..., create_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., expire_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_use_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., revoke_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListCredentialsRequest(_message.Message):
    __slots__ = ["page"]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    page: _common_pb2.PageRequest
    def __init__(self, page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListCredentialsResponse(_message.Message):
    __slots__ = ["credentials", "next_page_token"]
    CREDENTIALS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    credentials: _containers.RepeatedCompositeFieldContainer[Credential]
    next_page_token: str
    def __init__(self, credentials: _Optional[_Iterable[_Union[Credential, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RevokeCredentialRequest(_message.Message):
    __slots__ = ["id"]
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class RevokeCredentialResponse(_message.Message):
    __slots__ = ["credential"]
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    credential: Credential
    def __init__(self, credential: _Optional[_Union[Credential, _Mapping]] = ...) -> None: ...

class CallerRole(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
