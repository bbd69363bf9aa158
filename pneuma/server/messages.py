"""The browser socket's messages now live in the catalogue, ``pneuma.core.messages``;
these names stay importable from here for code written against the earlier layout."""

from pneuma.core.messages import (
    BROWSER_MESSAGE_TYPES,
    MAX_IMAGE_BASE64,
    BadBrowserMessage,
    BrowserMessage,
    ConfirmationResponse,
    ConversationDelete,
    ConversationList,
    ConversationNew,
    ConversationRename,
    ConversationSwitch,
    HistoryPage,
    ImageAttachment,
    Interrupt,
    PermissionResponse,
    SelectBrowser,
    SelectedElement,
    SessionAck,
    SessionSubscribe,
    SetModel,
    UIContext,
    UserMessage,
    ViewerActionResponse,
    ViewerActionResult,
    parse_browser_message,
)

__all__ = [
    "BROWSER_MESSAGE_TYPES", "MAX_IMAGE_BASE64", "BadBrowserMessage", "BrowserMessage",
    "ConfirmationResponse", "ConversationDelete", "ConversationList", "ConversationNew",
    "ConversationRename", "ConversationSwitch", "HistoryPage", "ImageAttachment", "Interrupt",
    "PermissionResponse", "SelectBrowser", "SelectedElement", "SessionAck", "SessionSubscribe",
    "SetModel", "UIContext", "UserMessage", "ViewerActionResponse", "ViewerActionResult",
    "parse_browser_message",
]
