"""Messages a browser may send on ``/ws/browser/{sid}`` (ADR-002 §3.2).

Browser → server messages are validated with pydantic (a discriminated
union on ``type``); a malformed one gets an ``error`` reply and the socket
lives on. Server → browser messages are plain dicts serialised once per
broadcast: validating every stream delta would cost more than it catches.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

MAX_IMAGE_BASE64 = 20 * 1024 * 1024


class _Message(BaseModel):
    # defer_build: validators are built on first use, not at import, which
    # keeps `pneuma run` quick to its ready line.
    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)


class ImageAttachment(_Message):
    media_type: Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
    data: str = Field(min_length=1, max_length=MAX_IMAGE_BASE64)


class SelectedElement(_Message):
    selector: str = ""
    tagName: str = ""
    textContent: str = ""
    attributes: dict[str, str] = Field(default_factory=dict)


class UIContext(_Message):
    mode: str = ""
    currentView: str = ""
    selectedElement: SelectedElement | None = None


class UserMessage(_Message):
    type: Literal["user_message"]
    content: str = Field(max_length=1_000_000)
    images: list[ImageAttachment] = Field(default_factory=list, max_length=20)
    uiContext: UIContext | None = None
    viewer_context: str | None = Field(default=None, max_length=200_000)
    client_msg_id: str | None = Field(default=None, max_length=200)


class PermissionResponse(_Message):
    type: Literal["permission_response"]
    request_id: str = Field(min_length=1)
    behavior: Literal["allow", "deny"]
    updated_input: dict[str, Any] | None = None
    message: str | None = None
    client_msg_id: str | None = None


class Interrupt(_Message):
    type: Literal["interrupt"]
    client_msg_id: str | None = None


class SetModel(_Message):
    type: Literal["set_model"]
    model: str = Field(min_length=1, max_length=200)
    client_msg_id: str | None = None


class SessionSubscribe(_Message):
    type: Literal["session_subscribe"]
    last_seq: int = Field(ge=0)


class SessionAck(_Message):
    type: Literal["session_ack"]
    last_seq: int = Field(ge=0)


class HistoryPage(_Message):
    """The tab scrolled to the start of what it has: the conversation
    before message ``before`` (a ``before`` cursor from ``message_history``
    or an earlier ``history_page``), one page of it, for this tab only."""

    type: Literal["history_page"]
    before: int = Field(ge=0, le=2**63 - 1)  # a row id: SQLite's INTEGER


class ViewerActionResult(_Message):
    model_config = ConfigDict(extra="allow", frozen=True)
    success: bool
    message: str | None = None
    data: dict[str, Any] | None = None


class ViewerActionResponse(_Message):
    type: Literal["viewer_action_response"]
    request_id: str = Field(min_length=1)
    result: ViewerActionResult


class ConfirmationResponse(_Message):
    type: Literal["confirmation_response"]
    request_id: str = Field(min_length=1)
    approved: bool
    message: str | None = None


class SelectBrowser(_Message):
    """The person picked the browser client a native session's tasks use
    (the same as ``POST /api/extension/select``)."""

    type: Literal["select_browser"]
    clientId: str = Field(min_length=1, max_length=200,
                          validation_alias=AliasChoices("clientId", "client_id"))
    client_msg_id: str | None = None


# --- the workspace's conversations (docs/conversations.md) ---

_CONVERSATION_ID = Field(min_length=1, max_length=200)


class ConversationList(_Message):
    """Send this tab the list of conversations (``conversations``)."""

    type: Literal["conversation_list"]


class ConversationNew(_Message):
    """Start a new conversation and make it current (every tab follows)."""

    type: Literal["conversation_new"]


class ConversationSwitch(_Message):
    """Make another conversation current: the agent resumes it."""

    type: Literal["conversation_switch"]
    conversation_id: str = _CONVERSATION_ID


class ConversationRename(_Message):
    type: Literal["conversation_rename"]
    conversation_id: str = _CONVERSATION_ID
    title: str = Field(max_length=1000)


class ConversationDelete(_Message):
    """Delete a conversation and its messages; deleting the current one
    switches to the most recent other (or a new one)."""

    type: Literal["conversation_delete"]
    conversation_id: str = _CONVERSATION_ID


BrowserMessage = Annotated[
    UserMessage
    | PermissionResponse
    | Interrupt
    | SetModel
    | SessionSubscribe
    | SessionAck
    | HistoryPage
    | ViewerActionResponse
    | ConfirmationResponse
    | SelectBrowser
    | ConversationList
    | ConversationNew
    | ConversationSwitch
    | ConversationRename
    | ConversationDelete,
    Field(discriminator="type"),
]

_adapter: TypeAdapter[BrowserMessage] | None = None


def _browser_message_adapter() -> TypeAdapter[BrowserMessage]:
    """The validator of browser messages, built on the first message: its
    union's core schema takes tens of milliseconds to build, which
    ``pneuma run`` would otherwise spend before its server answers."""
    global _adapter
    if _adapter is None:
        _adapter = TypeAdapter(BrowserMessage)
    return _adapter


BROWSER_MESSAGE_TYPES = (
    "user_message",
    "permission_response",
    "interrupt",
    "set_model",
    "session_subscribe",
    "session_ack",
    "history_page",
    "viewer_action_response",
    "confirmation_response",
    "select_browser",
    "conversation_list",
    "conversation_new",
    "conversation_switch",
    "conversation_rename",
    "conversation_delete",
)


class BadBrowserMessage(ValueError):
    pass


def parse_browser_message(raw: str | bytes) -> BrowserMessage:
    """Parse one browser message, or raise BadBrowserMessage saying what is wrong."""
    try:
        return _browser_message_adapter().validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            raise BadBrowserMessage(f"not valid JSON: {first['msg']}") from None
        if first["type"] in ("union_tag_invalid", "union_tag_not_found", "model_type"):
            raise BadBrowserMessage(
                "unknown message type; expected one of " + ", ".join(BROWSER_MESSAGE_TYPES)
            ) from None
        if not first["loc"]:
            # The JSON is valid but not an object (a list, a number): no
            # field to point at, and loc[0] below would not exist.
            raise BadBrowserMessage(
                "a message must be a JSON object with a 'type'; expected one of "
                + ", ".join(BROWSER_MESSAGE_TYPES)
            ) from None
        where = ".".join(str(p) for p in first["loc"][1:]) or "message"
        raise BadBrowserMessage(f"invalid {first['loc'][0]} message: {where}: {first['msg']}") from None
