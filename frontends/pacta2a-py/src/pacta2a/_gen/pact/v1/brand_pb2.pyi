from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from pact.v1 import authorization_details_pb2 as _authorization_details_pb2
from pact.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

BRAND_AGENT_POLICY_ALL: BrandAgentPolicy
BRAND_AGENT_POLICY_LISTED: BrandAgentPolicy
BRAND_AGENT_POLICY_UNSPECIFIED: BrandAgentPolicy
BRAND_LOGIN_MODE_SIGNED_ASSERTION: BrandLoginMode
BRAND_LOGIN_MODE_TRUSTED_FRONTEND: BrandLoginMode
BRAND_LOGIN_MODE_UNSPECIFIED: BrandLoginMode
DESCRIPTOR: _descriptor.FileDescriptor

class AddBrandAgentRequest(_message.Message):
    __slots__ = ["agent_id", "brand_id"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    brand_id: str
    def __init__(self, brand_id: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class AddBrandAgentResponse(_message.Message):
    __slots__ = ["added"]
    ADDED_FIELD_NUMBER: _ClassVar[int]
    added: bool
    def __init__(self, added: bool = ...) -> None: ...

class Brand(_message.Message):
    __slots__ = ["agent_policy", "brand_id", "create_time", "delegation", "description", "display_name", "interface_url", "skills", "update_time"]
    AGENT_POLICY_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    DELEGATION_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    INTERFACE_URL_FIELD_NUMBER: _ClassVar[int]
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    agent_policy: BrandAgentPolicy
    brand_id: str
    create_time: _timestamp_pb2.Timestamp
    delegation: DelegationSettings
    description: str
    display_name: str
    interface_url: str
    skills: _containers.RepeatedCompositeFieldContainer[Skill]
    update_time: _timestamp_pb2.Timestamp
    def __init__(self, brand_id: _Optional[str] = ..., display_name: _Optional[str] = ..., description: _Optional[str] = ..., skills: _Optional[_Iterable[_Union[Skill, _Mapping]]] = ..., interface_url: _Optional[str] = ..., delegation: _Optional[_Union[DelegationSettings, _Mapping]] = ..., create_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., agent_policy: _Optional[_Union[BrandAgentPolicy, str]] = ...) -> None: ...

class BrandAgent(_message.Message):
    __slots__ = ["add_time", "agent_id", "display_name"]
    ADD_TIME_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    add_time: _timestamp_pb2.Timestamp
    agent_id: str
    display_name: str
    def __init__(self, agent_id: _Optional[str] = ..., display_name: _Optional[str] = ..., add_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateBrandRequest(_message.Message):
    __slots__ = ["brand_id", "delegation", "description", "display_name", "generate_brand_id", "skills"]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    DELEGATION_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    GENERATE_BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    brand_id: str
    delegation: DelegationSettings
    description: str
    display_name: str
    generate_brand_id: bool
    skills: _containers.RepeatedCompositeFieldContainer[Skill]
    def __init__(self, brand_id: _Optional[str] = ..., display_name: _Optional[str] = ..., description: _Optional[str] = ..., skills: _Optional[_Iterable[_Union[Skill, _Mapping]]] = ..., delegation: _Optional[_Union[DelegationSettings, _Mapping]] = ..., generate_brand_id: bool = ...) -> None: ...

class CreateBrandResponse(_message.Message):
    __slots__ = ["brand"]
    BRAND_FIELD_NUMBER: _ClassVar[int]
    brand: Brand
    def __init__(self, brand: _Optional[_Union[Brand, _Mapping]] = ...) -> None: ...

class DelegationSettings(_message.Message):
    __slots__ = ["assertion_issuer", "assertion_jwks_uri", "authorization_details_types", "enabled", "login_mode", "login_url", "scopes", "skip_consent_when_granted"]
    ASSERTION_ISSUER_FIELD_NUMBER: _ClassVar[int]
    ASSERTION_JWKS_URI_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZATION_DETAILS_TYPES_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    LOGIN_MODE_FIELD_NUMBER: _ClassVar[int]
    LOGIN_URL_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    SKIP_CONSENT_WHEN_GRANTED_FIELD_NUMBER: _ClassVar[int]
    assertion_issuer: str
    assertion_jwks_uri: str
    authorization_details_types: _containers.RepeatedCompositeFieldContainer[_authorization_details_pb2.AuthorizationDetailsType]
    enabled: bool
    login_mode: BrandLoginMode
    login_url: str
    scopes: _containers.RepeatedCompositeFieldContainer[Scope]
    skip_consent_when_granted: bool
    def __init__(self, enabled: bool = ..., scopes: _Optional[_Iterable[_Union[Scope, _Mapping]]] = ..., login_url: _Optional[str] = ..., login_mode: _Optional[_Union[BrandLoginMode, str]] = ..., assertion_issuer: _Optional[str] = ..., assertion_jwks_uri: _Optional[str] = ..., authorization_details_types: _Optional[_Iterable[_Union[_authorization_details_pb2.AuthorizationDetailsType, _Mapping]]] = ..., skip_consent_when_granted: bool = ...) -> None: ...

class GetAgentCardRequest(_message.Message):
    __slots__ = ["brand_id"]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    brand_id: str
    def __init__(self, brand_id: _Optional[str] = ...) -> None: ...

class GetAgentCardResponse(_message.Message):
    __slots__ = ["cache_control", "card_json", "content_type", "display_name", "interface_url", "login_mode", "verification_uri"]
    CACHE_CONTROL_FIELD_NUMBER: _ClassVar[int]
    CARD_JSON_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    INTERFACE_URL_FIELD_NUMBER: _ClassVar[int]
    LOGIN_MODE_FIELD_NUMBER: _ClassVar[int]
    VERIFICATION_URI_FIELD_NUMBER: _ClassVar[int]
    cache_control: str
    card_json: str
    content_type: str
    display_name: str
    interface_url: str
    login_mode: BrandLoginMode
    verification_uri: str
    def __init__(self, card_json: _Optional[str] = ..., content_type: _Optional[str] = ..., cache_control: _Optional[str] = ..., interface_url: _Optional[str] = ..., login_mode: _Optional[_Union[BrandLoginMode, str]] = ..., verification_uri: _Optional[str] = ..., display_name: _Optional[str] = ...) -> None: ...

class GetBrandRequest(_message.Message):
    __slots__ = ["brand_id"]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    brand_id: str
    def __init__(self, brand_id: _Optional[str] = ...) -> None: ...

class GetBrandResponse(_message.Message):
    __slots__ = ["brand"]
    BRAND_FIELD_NUMBER: _ClassVar[int]
    brand: Brand
    def __init__(self, brand: _Optional[_Union[Brand, _Mapping]] = ...) -> None: ...

class ListBrandAgentsRequest(_message.Message):
    __slots__ = ["brand_id", "page"]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    brand_id: str
    page: _common_pb2.PageRequest
    def __init__(self, brand_id: _Optional[str] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListBrandAgentsResponse(_message.Message):
    __slots__ = ["agents", "next_page_token", "policy"]
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[BrandAgent]
    next_page_token: str
    policy: BrandAgentPolicy
    def __init__(self, policy: _Optional[_Union[BrandAgentPolicy, str]] = ..., agents: _Optional[_Iterable[_Union[BrandAgent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListBrandsRequest(_message.Message):
    __slots__ = ["page"]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    page: _common_pb2.PageRequest
    def __init__(self, page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListBrandsResponse(_message.Message):
    __slots__ = ["brands", "next_page_token"]
    BRANDS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    brands: _containers.RepeatedCompositeFieldContainer[Brand]
    next_page_token: str
    def __init__(self, brands: _Optional[_Iterable[_Union[Brand, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RemoveBrandAgentRequest(_message.Message):
    __slots__ = ["agent_id", "brand_id"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    brand_id: str
    def __init__(self, brand_id: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class RemoveBrandAgentResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class Scope(_message.Message):
    __slots__ = ["description", "id"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    description: str
    id: str
    def __init__(self, id: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class SetBrandAgentPolicyRequest(_message.Message):
    __slots__ = ["brand_id", "policy"]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    brand_id: str
    policy: BrandAgentPolicy
    def __init__(self, brand_id: _Optional[str] = ..., policy: _Optional[_Union[BrandAgentPolicy, str]] = ...) -> None: ...

class SetBrandAgentPolicyResponse(_message.Message):
    __slots__ = ["brand"]
    BRAND_FIELD_NUMBER: _ClassVar[int]
    brand: Brand
    def __init__(self, brand: _Optional[_Union[Brand, _Mapping]] = ...) -> None: ...

class Skill(_message.Message):
    __slots__ = ["description", "examples", "id", "name", "tags"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    EXAMPLES_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    description: str
    examples: _containers.RepeatedScalarFieldContainer[str]
    id: str
    name: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., examples: _Optional[_Iterable[str]] = ...) -> None: ...

class UpdateBrandRequest(_message.Message):
    __slots__ = ["brand", "update_mask"]
    BRAND_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    brand: Brand
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, brand: _Optional[_Union[Brand, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateBrandResponse(_message.Message):
    __slots__ = ["brand"]
    BRAND_FIELD_NUMBER: _ClassVar[int]
    brand: Brand
    def __init__(self, brand: _Optional[_Union[Brand, _Mapping]] = ...) -> None: ...

class BrandAgentPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class BrandLoginMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
