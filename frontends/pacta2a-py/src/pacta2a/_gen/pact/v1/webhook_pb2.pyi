from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from pact.v1 import audit_pb2 as _audit_pb2
from pact.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
WEBHOOK_DELIVERY_STATUS_DEAD: WebhookDeliveryStatus
WEBHOOK_DELIVERY_STATUS_DELIVERED: WebhookDeliveryStatus
WEBHOOK_DELIVERY_STATUS_PENDING: WebhookDeliveryStatus
WEBHOOK_DELIVERY_STATUS_UNSPECIFIED: WebhookDeliveryStatus

class CreateWebhookRequest(_message.Message):
    __slots__ = ["brand_ids", "description", "disabled", "event_kinds", "url"]
    BRAND_IDS_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    DISABLED_FIELD_NUMBER: _ClassVar[int]
    EVENT_KINDS_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    brand_ids: _containers.RepeatedScalarFieldContainer[str]
    description: str
    disabled: bool
    event_kinds: _containers.RepeatedScalarFieldContainer[_audit_pb2.AuditEventKind]
    url: str
    def __init__(self, url: _Optional[str] = ..., description: _Optional[str] = ..., event_kinds: _Optional[_Iterable[_Union[_audit_pb2.AuditEventKind, str]]] = ..., brand_ids: _Optional[_Iterable[str]] = ..., disabled: bool = ...) -> None: ...

class CreateWebhookResponse(_message.Message):
    __slots__ = ["secret", "webhook"]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    secret: str
    webhook: Webhook
    def __init__(self, webhook: _Optional[_Union[Webhook, _Mapping]] = ..., secret: _Optional[str] = ...) -> None: ...

class DeleteWebhookRequest(_message.Message):
    __slots__ = ["webhook_id"]
    WEBHOOK_ID_FIELD_NUMBER: _ClassVar[int]
    webhook_id: str
    def __init__(self, webhook_id: _Optional[str] = ...) -> None: ...

class DeleteWebhookResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetWebhookRequest(_message.Message):
    __slots__ = ["webhook_id"]
    WEBHOOK_ID_FIELD_NUMBER: _ClassVar[int]
    webhook_id: str
    def __init__(self, webhook_id: _Optional[str] = ...) -> None: ...

class GetWebhookResponse(_message.Message):
    __slots__ = ["webhook"]
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    webhook: Webhook
    def __init__(self, webhook: _Optional[_Union[Webhook, _Mapping]] = ...) -> None: ...

class ListWebhookDeliveriesRequest(_message.Message):
    __slots__ = ["page", "status", "webhook_id"]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_ID_FIELD_NUMBER: _ClassVar[int]
    page: _common_pb2.PageRequest
    status: WebhookDeliveryStatus
    webhook_id: str
    def __init__(self, webhook_id: _Optional[str] = ..., status: _Optional[_Union[WebhookDeliveryStatus, str]] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListWebhookDeliveriesResponse(_message.Message):
    __slots__ = ["deliveries", "next_page_token"]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    deliveries: _containers.RepeatedCompositeFieldContainer[WebhookDelivery]
    next_page_token: str
    def __init__(self, deliveries: _Optional[_Iterable[_Union[WebhookDelivery, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListWebhooksRequest(_message.Message):
    __slots__ = ["page"]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    page: _common_pb2.PageRequest
    def __init__(self, page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListWebhooksResponse(_message.Message):
    __slots__ = ["next_page_token", "webhooks"]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    WEBHOOKS_FIELD_NUMBER: _ClassVar[int]
    next_page_token: str
    webhooks: _containers.RepeatedCompositeFieldContainer[Webhook]
    def __init__(self, webhooks: _Optional[_Iterable[_Union[Webhook, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RetryWebhookDeliveriesRequest(_message.Message):
    __slots__ = ["delivery_id", "webhook_id"]
    DELIVERY_ID_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_ID_FIELD_NUMBER: _ClassVar[int]
    delivery_id: str
    webhook_id: str
    def __init__(self, webhook_id: _Optional[str] = ..., delivery_id: _Optional[str] = ...) -> None: ...

class RetryWebhookDeliveriesResponse(_message.Message):
    __slots__ = ["retried"]
    RETRIED_FIELD_NUMBER: _ClassVar[int]
    retried: int
    def __init__(self, retried: _Optional[int] = ...) -> None: ...

class RotateWebhookSecretRequest(_message.Message):
    __slots__ = ["previous_valid_for", "webhook_id"]
    PREVIOUS_VALID_FOR_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_ID_FIELD_NUMBER: _ClassVar[int]
    previous_valid_for: _duration_pb2.Duration
    webhook_id: str
    def __init__(self, webhook_id: _Optional[str] = ..., previous_valid_for: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class RotateWebhookSecretResponse(_message.Message):
    __slots__ = ["previous_secret_expire_time", "secret"]
    PREVIOUS_SECRET_EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    previous_secret_expire_time: _timestamp_pb2.Timestamp
    secret: str
    def __init__(self, secret: _Optional[str] = ..., previous_secret_expire_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class UpdateWebhookRequest(_message.Message):
    __slots__ = ["update_mask", "webhook"]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    update_mask: _field_mask_pb2.FieldMask
    webhook: Webhook
    def __init__(self, webhook: _Optional[_Union[Webhook, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateWebhookResponse(_message.Message):
    __slots__ = ["webhook"]
    WEBHOOK_FIELD_NUMBER: _ClassVar[int]
    webhook: Webhook
    def __init__(self, webhook: _Optional[_Union[Webhook, _Mapping]] = ...) -> None: ...

class Webhook(_message.Message):
    __slots__ = ["brand_ids", "create_time", "delivery_state", "description", "enabled", "event_kinds", "previous_secret_expire_time", "update_time", "url", "webhook_id"]
    BRAND_IDS_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    DELIVERY_STATE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    EVENT_KINDS_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_SECRET_EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_ID_FIELD_NUMBER: _ClassVar[int]
    brand_ids: _containers.RepeatedScalarFieldContainer[str]
    create_time: _timestamp_pb2.Timestamp
    delivery_state: WebhookDeliveryState
    description: str
    enabled: bool
    event_kinds: _containers.RepeatedScalarFieldContainer[_audit_pb2.AuditEventKind]
    previous_secret_expire_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    url: str
    webhook_id: str
    def __init__(self, webhook_id: _Optional[str] = ..., url: _Optional[str] = ..., description: _Optional[str] = ..., event_kinds: _Optional[_Iterable[_Union[_audit_pb2.AuditEventKind, str]]] = ..., brand_ids: _Optional[_Iterable[str]] = ..., enabled: bool = ..., create_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., delivery_state: _Optional[_Union[WebhookDeliveryState, _Mapping]] = ..., previous_secret_expire_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class WebhookDelivery(_message.Message):
    __slots__ = ["attempts", "brand_id", "delivery_id", "done_time", "event_id", "event_kind", "last_attempt_time", "last_error", "last_status", "message_id", "next_attempt_time", "status", "webhook_id"]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    BRAND_ID_FIELD_NUMBER: _ClassVar[int]
    DELIVERY_ID_FIELD_NUMBER: _ClassVar[int]
    DONE_TIME_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_KIND_FIELD_NUMBER: _ClassVar[int]
    LAST_ATTEMPT_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    LAST_STATUS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_TIME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_ID_FIELD_NUMBER: _ClassVar[int]
    attempts: int
    brand_id: str
    delivery_id: str
    done_time: _timestamp_pb2.Timestamp
    event_id: str
    event_kind: _audit_pb2.AuditEventKind
    last_attempt_time: _timestamp_pb2.Timestamp
    last_error: str
    last_status: int
    message_id: str
    next_attempt_time: _timestamp_pb2.Timestamp
    status: WebhookDeliveryStatus
    webhook_id: str
    def __init__(self, delivery_id: _Optional[str] = ..., webhook_id: _Optional[str] = ..., event_id: _Optional[str] = ..., event_kind: _Optional[_Union[_audit_pb2.AuditEventKind, str]] = ..., brand_id: _Optional[str] = ..., message_id: _Optional[str] = ..., status: _Optional[_Union[WebhookDeliveryStatus, str]] = ..., attempts: _Optional[int] = ..., next_attempt_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_attempt_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_status: _Optional[int] = ..., last_error: _Optional[str] = ..., done_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class WebhookDeliveryState(_message.Message):
    __slots__ = ["dead", "delivered", "last_attempt_time", "last_delivered_time", "last_failure_error", "last_failure_status", "last_failure_time", "oldest_pending_time", "pending"]
    DEAD_FIELD_NUMBER: _ClassVar[int]
    DELIVERED_FIELD_NUMBER: _ClassVar[int]
    LAST_ATTEMPT_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_DELIVERED_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_FAILURE_ERROR_FIELD_NUMBER: _ClassVar[int]
    LAST_FAILURE_STATUS_FIELD_NUMBER: _ClassVar[int]
    LAST_FAILURE_TIME_FIELD_NUMBER: _ClassVar[int]
    OLDEST_PENDING_TIME_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    dead: int
    delivered: int
    last_attempt_time: _timestamp_pb2.Timestamp
    last_delivered_time: _timestamp_pb2.Timestamp
    last_failure_error: str
    last_failure_status: int
    last_failure_time: _timestamp_pb2.Timestamp
    oldest_pending_time: _timestamp_pb2.Timestamp
    pending: int
    def __init__(self, pending: _Optional[int] = ..., dead: _Optional[int] = ..., delivered: _Optional[int] = ..., oldest_pending_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_attempt_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_delivered_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_failure_time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_failure_status: _Optional[int] = ..., last_failure_error: _Optional[str] = ...) -> None: ...

class WebhookDeliveryStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
