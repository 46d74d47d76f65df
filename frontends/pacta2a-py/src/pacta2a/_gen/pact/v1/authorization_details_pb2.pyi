from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

AUTHORIZATION_DETAILS_COMBINATION_SINGLE: AuthorizationDetailsCombination
AUTHORIZATION_DETAILS_COMBINATION_UNION: AuthorizationDetailsCombination
AUTHORIZATION_DETAILS_COMBINATION_UNSPECIFIED: AuthorizationDetailsCombination
AUTHORIZATION_DETAILS_FIELD_KIND_ENUM: AuthorizationDetailsFieldKind
AUTHORIZATION_DETAILS_FIELD_KIND_ENUM_ARRAY: AuthorizationDetailsFieldKind
AUTHORIZATION_DETAILS_FIELD_KIND_STRING: AuthorizationDetailsFieldKind
AUTHORIZATION_DETAILS_FIELD_KIND_UNSPECIFIED: AuthorizationDetailsFieldKind
DESCRIPTOR: _descriptor.FileDescriptor

class AuthorizationDetail(_message.Message):
    __slots__ = ["json", "members", "type"]
    JSON_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    json: str
    members: _containers.RepeatedCompositeFieldContainer[AuthorizationDetailMember]
    type: str
    def __init__(self, type: _Optional[str] = ..., json: _Optional[str] = ..., members: _Optional[_Iterable[_Union[AuthorizationDetailMember, _Mapping]]] = ...) -> None: ...

class AuthorizationDetailMember(_message.Message):
    __slots__ = ["array", "name", "values"]
    ARRAY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    array: bool
    name: str
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., values: _Optional[_Iterable[str]] = ..., array: bool = ...) -> None: ...

class AuthorizationDetailsField(_message.Message):
    __slots__ = ["kind", "label", "name", "pattern", "required", "values"]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    kind: AuthorizationDetailsFieldKind
    label: str
    name: str
    pattern: str
    required: bool
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[_Union[AuthorizationDetailsFieldKind, str]] = ..., required: bool = ..., label: _Optional[str] = ..., pattern: _Optional[str] = ..., values: _Optional[_Iterable[str]] = ...) -> None: ...

class AuthorizationDetailsType(_message.Message):
    __slots__ = ["combination", "consent_template", "description", "fields", "scope", "type"]
    COMBINATION_FIELD_NUMBER: _ClassVar[int]
    CONSENT_TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    combination: AuthorizationDetailsCombination
    consent_template: str
    description: str
    fields: _containers.RepeatedCompositeFieldContainer[AuthorizationDetailsField]
    scope: str
    type: str
    def __init__(self, type: _Optional[str] = ..., description: _Optional[str] = ..., scope: _Optional[str] = ..., fields: _Optional[_Iterable[_Union[AuthorizationDetailsField, _Mapping]]] = ..., combination: _Optional[_Union[AuthorizationDetailsCombination, str]] = ..., consent_template: _Optional[str] = ...) -> None: ...

class ConsentAuthorizationDetail(_message.Message):
    __slots__ = ["detail", "scope", "words"]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    WORDS_FIELD_NUMBER: _ClassVar[int]
    detail: AuthorizationDetail
    scope: str
    words: str
    def __init__(self, detail: _Optional[_Union[AuthorizationDetail, _Mapping]] = ..., scope: _Optional[str] = ..., words: _Optional[str] = ...) -> None: ...

class AuthorizationDetailsFieldKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class AuthorizationDetailsCombination(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
