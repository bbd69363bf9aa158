"""The catalogue of messages on the browser socket ``/ws/browser/{sid}``.

Every message a tab may send, and every message the server sends to a tab,
is declared here, both directions; docs/protocol.md's two tables list the
same types (``tests/test_message_catalogue.py`` holds them to each other
and to the source).

Browser → server messages cross a trust boundary, so they are pydantic
models, validated on arrival (a discriminated union on ``type``); a
malformed one gets an ``error`` reply and the socket lives on.

Server → browser messages are ``TypedDict``s: the code that builds one
stays a plain dict, serialised once per broadcast, and costs nothing at
run time (validating every stream delta would cost more than it catches).
The types are for mypy and for the catalogue test. ``seq`` is added by the
session when it broadcasts; messages meant for one tab carry none.
"""

# No `from __future__ import annotations` here: TypedDict reads NotRequired
# from real annotations only (string ones leave every key required).
import typing
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
)

MAX_IMAGE_BASE64 = 20 * 1024 * 1024


# --- browser → server ---------------------------------------------------------


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
    # The conversation the tab shows (its message_history's): with it, a
    # tab whose last_seq is older than the replay buffer (a restart) gets
    # what it missed from the log (history_resume), not a first page.
    conversation_id: str | None = Field(default=None, max_length=200)


class SessionAck(_Message):
    type: Literal["session_ack"]
    last_seq: int = Field(ge=0)


class HistoryMessage(_Message):
    """The whole of a message a page gave as a preview (its ``preview.row``),
    for this tab only."""

    type: Literal["history_message"]
    row: int = Field(ge=0, le=2**63 - 1)  # a row id: SQLite's INTEGER


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
    (the same as ``POST /api/extension/select``; docs/native.md)."""

    type: Literal["select_browser"]
    clientId: str = Field(min_length=1, max_length=200,
                          validation_alias=AliasChoices("clientId", "client_id"))
    client_msg_id: str | None = None
    # (code, message) for a session where no backend subscribed a handler
    # of it to the session's hooks (pneuma.server.session_hooks).
    unhandled: typing.ClassVar[tuple[str, str]] = (
        "not_native", "only --backend native sessions pick browser clients")


# The workspace's conversations (docs/conversations.md).

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


# Follow-ups the person sent while the agent works (pneuma.server.follow_ups).

_QUEUE_ID = Field(min_length=1, max_length=200)


class QueuedMessageCancel(_Message):
    """Withdraw a queued follow-up: the agent never gets it."""

    type: Literal["queued_message_cancel"]
    queue_id: str = _QUEUE_ID
    client_msg_id: str | None = None


class QueuedMessageEdit(_Message):
    """Replace the text of a queued follow-up."""

    type: Literal["queued_message_edit"]
    queue_id: str = _QUEUE_ID
    content: str = Field(max_length=1_000_000)
    client_msg_id: str | None = None


class QueuedMessageSend(_Message):
    """Send a follow-up held since a restart: it goes when the agent is free."""

    type: Literal["queued_message_send"]
    queue_id: str = _QUEUE_ID


BrowserMessage = Annotated[
    UserMessage
    | PermissionResponse
    | Interrupt
    | SetModel
    | SessionSubscribe
    | SessionAck
    | HistoryPage
    | HistoryMessage
    | ViewerActionResponse
    | ConfirmationResponse
    | SelectBrowser
    | ConversationList
    | ConversationNew
    | ConversationSwitch
    | ConversationRename
    | ConversationDelete
    | QueuedMessageCancel
    | QueuedMessageEdit
    | QueuedMessageSend,
    Field(discriminator="type"),
]

BROWSER_MESSAGE_MODELS: tuple[type[_Message], ...] = typing.get_args(typing.get_args(BrowserMessage)[0])


def _literal_type(cls: type) -> str:
    """The one value of a message class's ``type`` field (its annotation is
    ``Literal["…"]``; this module's annotations are objects, not strings)."""
    (value,) = typing.get_args(cls.__annotations__["type"])
    return str(value)


# Every type a tab may send, in the order the error message lists them.
BROWSER_MESSAGE_TYPES: tuple[str, ...] = tuple(_literal_type(m) for m in BROWSER_MESSAGE_MODELS)

_adapter: TypeAdapter[BrowserMessage] | None = None


def _browser_message_adapter() -> TypeAdapter[BrowserMessage]:
    """The validator of browser messages, built on the first message: its
    union's core schema takes tens of milliseconds to build, which
    ``pneuma run`` would otherwise spend before its server answers."""
    global _adapter
    if _adapter is None:
        _adapter = TypeAdapter(BrowserMessage)
    return _adapter


class BadBrowserMessage(ValueError):
    pass


def parse_browser_message(raw: str | bytes) -> BrowserMessage:
    """Parse one browser message, or raise BadBrowserMessage saying what is wrong."""
    try:
        return _browser_message_adapter().validate_json(raw)
    except ValidationError as exc:
        raise BadBrowserMessage(_problem(exc)) from None


def _problem(exc: ValidationError) -> str:
    """One line saying what is wrong with a message that did not validate."""
    first = exc.errors()[0]
    expected = ", ".join(BROWSER_MESSAGE_TYPES)
    if first["type"] == "json_invalid":
        return f"not valid JSON: {first['msg']}"
    if first["type"] in ("union_tag_invalid", "union_tag_not_found", "model_type"):
        return "unknown message type; expected one of " + expected
    if not first["loc"]:
        # The JSON is valid but not an object (a list, a number): no
        # field to point at, and loc[0] below would not exist.
        return "a message must be a JSON object with a 'type'; expected one of " + expected
    where = ".".join(str(p) for p in first["loc"][1:]) or "message"
    return f"invalid {first['loc'][0]} message: {where}: {first['msg']}"


# --- server → browser ---------------------------------------------------------


class _Broadcast(TypedDict):
    # Set by the session as it broadcasts; absent from one-tab replies.
    seq: NotRequired[int]


class SessionInit(TypedDict):
    """The first message on a new socket, for that tab only."""

    type: Literal["session_init"]
    session: dict[str, Any]  # session_id, mode, backend, status, last_seq, saving, …


class SessionUpdate(_Broadcast):
    type: Literal["session_update"]
    updates: dict[str, Any]  # model, cwd, tools, permission_mode, saving, …


class _HistoryPage(TypedDict):
    messages: list[dict[str, Any]]
    has_more: bool
    before: int | None


class _ConversationView(_HistoryPage):
    # What a tab needs to show a whole conversation, not just a page of it.
    pending_permissions: list[dict[str, Any]]
    pending_confirmations: list[dict[str, Any]]
    conversation: dict[str, Any] | None
    # Follow-ups still waiting for the agent (UserMessageQueued's fields).
    queued_messages: NotRequired[list[dict[str, Any]]]


class MessageHistory(_ConversationView):
    """The newest part of the conversation, for one tab (no ``seq``)."""

    type: Literal["message_history"]
    last_seq: int


class HistoryMessageReply(TypedDict):
    """The whole of a message a page gave as a preview, in answer to
    ``history_message``, for the asking tab only."""

    type: Literal["history_message"]
    row: int
    message: dict[str, Any]


class HistoryResume(TypedDict):
    """Ends what a tab that subscribed with its ``last_seq`` and
    ``conversation_id`` missed, sent from the log (the messages themselves
    came before it, each with its seq): what is open now, and the seq it
    holds from now on. For that tab only."""

    type: Literal["history_resume"]
    last_seq: int
    pending_permissions: list[dict[str, Any]]
    pending_confirmations: list[dict[str, Any]]
    conversation: dict[str, Any] | None
    queued_messages: NotRequired[list[dict[str, Any]]]


class HistoryPageReply(_HistoryPage):
    """Older messages, in answer to ``history_page``, for the asking tab only."""

    type: Literal["history_page"]


class ConversationSwitched(_Broadcast, _ConversationView):
    """Every tab shows another conversation now (docs/conversations.md)."""

    type: Literal["conversation_switched"]
    conversations: list[dict[str, Any]]


class Conversations(_Broadcast):
    type: Literal["conversations"]
    conversations: list[dict[str, Any]]
    current: str | None


class UserMessageEcho(_Broadcast):
    """The person's message as every tab shows it."""

    type: Literal["user_message"]
    content: str
    viewer_context: NotRequired[str]
    images: NotRequired[list[dict[str, Any]]]
    client_msg_id: NotRequired[str]
    timestamp: float


class UserMessageQueued(_Broadcast):
    """A follow-up sent while the agent works, held until it takes it."""

    type: Literal["user_message_queued"]
    queue_id: str
    content: str
    images: NotRequired[list[dict[str, Any]]]
    client_msg_id: NotRequired[str]
    timestamp: float
    held: NotRequired[bool]


class QueuedMessageTaken(_Broadcast):
    """The agent takes this follow-up: its ``user_message`` comes next."""

    type: Literal["queued_message_taken"]
    queue_id: str


class QueuedMessageEdited(_Broadcast):
    type: Literal["queued_message_edited"]
    queue_id: str
    content: str


class QueuedMessageCancelled(_Broadcast):
    type: Literal["queued_message_cancelled"]
    queue_id: str


class QueuedMessageReleased(_Broadcast):
    """A held follow-up the person sent: queued as any other now."""

    type: Literal["queued_message_released"]
    queue_id: str


class StreamEvent(_Broadcast):
    type: Literal["stream_event"]
    event: dict[str, Any]  # a Messages API stream event
    parent_tool_use_id: str | None


class Assistant(_Broadcast):
    """An assistant message; the same ``message.id`` again replaces it."""

    type: Literal["assistant"]
    message: dict[str, Any]
    parent_tool_use_id: NotRequired[str | None]


class ToolResult(_Broadcast):
    type: Literal["tool_result"]
    tool_use_id: str
    content: Any
    is_error: bool
    parent_tool_use_id: NotRequired[str | None]


class Result(_Broadcast):
    """The turn ended: ``data {subtype, is_error, duration_ms, …}``."""

    type: Literal["result"]
    data: dict[str, Any]


class PermissionRequest(_Broadcast):
    type: Literal["permission_request"]
    request: dict[str, Any]  # request_id, tool_name, input, description?, tool_use_id


class PermissionCancelled(_Broadcast):
    type: Literal["permission_cancelled"]
    request_id: str


class StatusChange(_Broadcast):
    type: Literal["status_change"]
    status: str  # idle, running, or the agent's own (requesting, compacting)


class ContentUpdate(_Broadcast):
    type: Literal["content_update"]
    files: list[dict[str, Any]]  # path, content, origin, deleted?, binary?


class ModeEvent(_Broadcast):
    """A message of the served mode's own (``pneuma.broadcast``)."""

    type: Literal["mode_event"]
    name: str
    data: Any


class CliConnected(_Broadcast):
    type: Literal["cli_connected"]


class CliDisconnected(_Broadcast):
    type: Literal["cli_disconnected"]
    exit_code: int | None
    stderr: list[str]
    close_code: NotRequired[int | None]


class ViewerActionRequest(_Broadcast):
    type: Literal["viewer_action_request"]
    request_id: str
    action_id: str
    params: dict[str, Any]
    # Sent to the server's headless viewer alone; it runs only these.
    headless: NotRequired[bool]


class ConfirmationRequest(_Broadcast):
    type: Literal["confirmation_request"]
    request_id: str
    kind: str
    summary: str
    details: Any


class ConfirmationCancelled(_Broadcast):
    type: Literal["confirmation_cancelled"]
    request_id: str


class Error(_Broadcast):
    """Broadcast, or sent to one tab (its own bad input) without ``seq``."""

    type: Literal["error"]
    code: str
    message: str


class SystemNote(_Broadcast):
    """A line in the chat from Pneuma itself (``code`` names what it is about)."""

    type: Literal["system_note"]
    code: NotRequired[str]
    text: NotRequired[str]
    message: NotRequired[str]


class ToolCompletion(_Broadcast):
    """The agent called the ``complete`` tool with a summary of its work."""

    type: Literal["tool_completion"]
    summary: str


class TurnCheckpoint(_Broadcast):
    """The workspace was recorded before a user turn (docs/checkpoints.md)."""

    type: Literal["turn_checkpoint"]
    ref: int
    client_msg_id: str | None
    user_seq: int | None
    user_timestamp: float | None


class TurnChanges(_Broadcast):
    type: Literal["turn_changes"]
    ref: int
    changes: dict[str, list[str]]  # added, modified, removed


class WorkspaceRestored(_Broadcast):
    type: Literal["workspace_restored"]
    target: str
    undo: str | None
    restored: list[str]
    kept_conflicts: list[str]
    failed: list[dict[str, str]]
    timestamp: float
    reverted_change: NotRequired[dict[str, Any]]  # a revert of one change: {id, where, what}


class TurnDescribed(_Broadcast):
    """A turn in its mode's terms (docs/checkpoints.md, "A turn in the mode's terms")."""

    type: Literal["turn_described"]
    ref: str
    source: str  # mode, files
    changes: list[dict[str, Any]]
    warning: NotRequired[str]


class _OfAUserTurn(_Broadcast):  # the turn, by its user message (docs/checks.md)
    ref: str | None
    client_msg_id: str | None
    user_seq: int | None
    user_timestamp: float | None


class TurnChecked(_OfAUserTurn):  # status: passed, failed, error
    type: Literal["turn_checked"]
    repairTurn: bool
    files: list[str]
    seconds: float
    status: str
    problems: list[dict[str, Any]]
    problemCount: int
    checks: list[dict[str, Any]]


class TurnRepair(_OfAUserTurn):  # state: pending, waiting, sent, cancelled, superseded, dropped
    type: Literal["turn_repair"]
    id: str
    state: str
    seconds: NotRequired[float]


class TurnChecksSettings(_Broadcast):
    type: Literal["turn_checks_settings"]
    repair: bool


# The native backend's browser UI (docs/native.md): its tasks and the
# browser clients they drive. Sent only by a session running --backend native.

class TaskUpdate(_Broadcast):
    type: Literal["task_update"]
    task: dict[str, Any]


class TaskList(_Broadcast):
    type: Literal["task_list"]
    tasks: list[dict[str, Any]]


class BrowserSelection(_Broadcast):
    type: Literal["browser_selection"]
    taskId: str | None
    status: str  # waiting, selected, offline
    candidates: NotRequired[list[dict[str, Any]]]
    clientId: NotRequired[str | None]


class BrowserAction(_Broadcast):
    type: Literal["browser_action"]
    phase: str  # start, success, error
    action: dict[str, Any]


class PagePrepared(_Broadcast):
    type: Literal["page_prepared"]
    taskId: str
    page: dict[str, Any]


class ExtensionUpdate(_Broadcast):
    type: Literal["extension_update"]
    clients: list[dict[str, Any]]
    selectedClientId: str | None
    viewers: list[dict[str, Any]]


class TwinUpdate(_Broadcast):
    type: Literal["twin_update"]
    clientId: str
    twin: dict[str, Any]


class ReviewPins(_Broadcast):
    """The workspace's review pins after a change (pneuma/annotations/):
    every tab shows this list."""

    type: Literal["review_pins"]
    pins: list[dict[str, Any]]
    revision: int


class WorkspaceStopped(TypedDict):
    """To each tab of a workspace the launcher stops, before its server
    closes (docs/launcher.md): the tab stops reconnecting and says so.
    ``reason`` is ``stopped`` (its Stop) or ``exiting`` (the launcher is
    exiting); ``launcher`` is the launcher's page, without its token."""

    type: Literal["workspace_stopped"]
    reason: Literal["stopped", "exiting"]
    launcher: str | None


ServerMessage = (
    SessionInit | SessionUpdate | MessageHistory | HistoryResume | HistoryPageReply
    | HistoryMessageReply
    | ConversationSwitched
    | Conversations | UserMessageEcho | UserMessageQueued | QueuedMessageTaken
    | QueuedMessageEdited | QueuedMessageCancelled | QueuedMessageReleased
    | StreamEvent | Assistant | ToolResult | Result
    | PermissionRequest | PermissionCancelled | StatusChange | ContentUpdate | ModeEvent
    | CliConnected | CliDisconnected | ViewerActionRequest | ConfirmationRequest
    | ConfirmationCancelled | Error | SystemNote | ToolCompletion | TurnCheckpoint
    | TurnChanges | WorkspaceRestored | TaskUpdate | TaskList | BrowserSelection
    | BrowserAction | PagePrepared | ExtensionUpdate | TwinUpdate | WorkspaceStopped
    | ReviewPins
    | TurnDescribed
    | TurnChecked | TurnRepair | TurnChecksSettings
)

# Every type the server sends, mapped to its declaration.
SERVER_MESSAGES: dict[str, type] = {_literal_type(cls): cls for cls in typing.get_args(ServerMessage)}
SERVER_MESSAGE_TYPES: tuple[str, ...] = tuple(SERVER_MESSAGES)
