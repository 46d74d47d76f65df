from google.protobuf import timestamp_pb2 as _timestamp_pb2
from pact.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
TURN_OUTCOME_ERROR: TurnOutcome
TURN_OUTCOME_REPLAY: TurnOutcome
TURN_OUTCOME_RUN: TurnOutcome
TURN_OUTCOME_UNSPECIFIED: TurnOutcome

class AbandonTurnRequest(_message.Message):
    __slots__ = ["claim", "context_id", "message_id", "owner"]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    claim: str
    context_id: str
    message_id: str
    owner: Owner
    def __init__(self, owner: _Optional[_Union[Owner, _Mapping]] = ..., context_id: _Optional[str] = ..., message_id: _Optional[str] = ..., claim: _Optional[str] = ...) -> None: ...

class AbandonTurnResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class BeginTurnRequest(_message.Message):
    __slots__ = ["brand_user", "context_id", "message_id", "owner"]
    BRAND_USER_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    brand_user: str
    context_id: str
    message_id: str
    owner: Owner
    def __init__(self, owner: _Optional[_Union[Owner, _Mapping]] = ..., context_id: _Optional[str] = ..., message_id: _Optional[str] = ..., brand_user: _Optional[str] = ...) -> None: ...

class BeginTurnResponse(_message.Message):
    __slots__ = ["claim", "context_created", "context_id", "error", "outcome", "reply_json"]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_CREATED_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REPLY_JSON_FIELD_NUMBER: _ClassVar[int]
    claim: str
    context_created: bool
    context_id: str
    error: _common_pb2.A2AError
    outcome: TurnOutcome
    reply_json: str
    def __init__(self, outcome: _Optional[_Union[TurnOutcome, str]] = ..., context_id: _Optional[str] = ..., context_created: bool = ..., reply_json: _Optional[str] = ..., error: _Optional[_Union[_common_pb2.A2AError, _Mapping]] = ..., claim: _Optional[str] = ...) -> None: ...

class CloseContextRequest(_message.Message):
    __slots__ = ["context_id", "owner"]
    CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    context_id: str
    owner: Owner
    def __init__(self, owner: _Optional[_Union[Owner, _Mapping]] = ..., context_id: _Optional[str] = ...) -> None: ...

class CloseContextResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class CompleteTurnRequest(_message.Message):
    __slots__ = ["claim", "context_id", "message_id", "owner", "reply_json", "reply_message_id"]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    REPLY_JSON_FIELD_NUMBER: _ClassVar[int]
    REPLY_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    claim: str
    context_id: str
    message_id: str
    owner: Owner
    reply_json: str
    reply_message_id: str
    def __init__(self, owner: _Optional[_Union[Owner, _Mapping]] = ..., context_id: _Optional[str] = ..., message_id: _Optional[str] = ..., reply_message_id: _Optional[str] = ..., reply_json: _Optional[str] = ..., claim: _Optional[str] = ...) -> None: ...

class CompleteTurnResponse(_message.Message):
    __slots__ = ["stored_at"]
    STORED_AT_FIELD_NUMBER: _ClassVar[int]
    stored_at: _timestamp_pb2.Timestamp
    def __init__(self, stored_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Owner(_message.Message):
    __slots__ = ["agent_id", "brand_id", "subject"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    brand_id: str
    subject: str
    def __init__(self, brand_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., subject: _Optional[str] = ...) -> None: ...

class TurnOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
