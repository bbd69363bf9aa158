"""The person's preferences: one small JSON file for the person, not per port.

The page used to keep the language, the chat's width, whether the chat is
hidden and the composer's draft in the browser's storage, which is kept per
origin; every workspace is served on a port of its own (and the launcher on
another), so a choice made in one was unknown to the next and lost when a
workspace was stopped and opened again. They are kept here instead, in
``$XDG_CONFIG_HOME/pneuma/preferences.json`` (``~/.config/pneuma/`` when
that is not set), and served by every Pneuma server at
``/api/preferences`` behind the session token (pneuma.server.security):
``GET`` answers the person's preferences and this workspace's draft,
``POST`` changes the fields it names (docs/launcher.md, "Preferences").

    {"version": 1, "locale": "zh-CN", "chatWidth": 520,
     "chatHidden": {"editor": true}, "drafts": {"/abs/ws": {"text": "…", "at": 1764130000.0}},
     "followAgent": false, "notifications": true, "notificationSound": false}

The three switches (docs/notifications.md) are true/false once the person
chose, absent before: a page reads an absent one as its default (follow on,
notifications as the browser allows, sound off), and so do older pages.

The draft is per workspace, keyed by the workspace's real path. Several
servers write the file (the launcher, every workspace): each change is a
read-modify-write under an ``flock`` on ``preferences.json.lock``, written
to a temporary file and renamed (pneuma.core.user_files, as the list of
recent workspaces is), so a reader sees the old file or the new one. The
file is opened without following a link and without waiting on a FIFO: a
link planted at its name is never read through and never written through. A file that is damaged (not JSON,
over ``MAX_FILE_BYTES``, not the shape above) gives the defaults and one
warning; the next change moves it aside as ``preferences.json.damaged``
(``-2``, ``-3``… when an earlier copy has that name).

Nothing here imports aiohttp at module level: the early server
(pneuma.server.early_server) answers ``GET /api/preferences`` from this
module before aiohttp is loaded, so the first paint already speaks the
person's language.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pneuma.core.errors import ToolError
from pneuma.core.json_body import read_bounded_json
from pneuma.core.user_files import UnusableUserFile, UserFile, config_home

if TYPE_CHECKING:
    from aiohttp import web

log = logging.getLogger(__name__)

PREFERENCES_FILE = "preferences.json"
DOCUMENT_VERSION = 1
MAX_FILE_BYTES = 1024 * 1024
MAX_BODY_BYTES = 256 * 1024
MAX_DRAFT_CHARS = 20_000
MAX_DRAFTS = 10  # the newest drafts; an older workspace's draft is dropped
LOCALES = ("en", "zh-CN")  # the shell's catalogues (pneuma/web/i18n/)
LAYOUTS = ("editor", "app")  # a mode's layout (manifest `layout`)
MIN_CHAT_WIDTH = 200
MAX_CHAT_WIDTH = 8000
# On/off switches of the page (docs/notifications.md): absent until chosen.
SWITCHES = ("followAgent", "notifications", "notificationSound")
FIELDS = ("locale", "chatWidth", "chatHidden", "draft", *SWITCHES)


@dataclass
class Draft:
    text: str
    at: float


@dataclass
class Preferences:
    locale: str | None = None
    chat_width: int | None = None
    chat_hidden: dict[str, bool] = field(default_factory=dict)
    drafts: dict[str, Draft] = field(default_factory=dict)
    switches: dict[str, bool] = field(default_factory=dict)  # SWITCHES the person set

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"version": DOCUMENT_VERSION}
        if self.locale is not None:
            document["locale"] = self.locale
        if self.chat_width is not None:
            document["chatWidth"] = self.chat_width
        if self.chat_hidden:
            document["chatHidden"] = dict(self.chat_hidden)
        if self.drafts:
            document["drafts"] = {path: {"text": d.text, "at": d.at}
                                  for path, d in self.drafts.items()}
        document.update(self.switches)
        return document

    def view(self, workspace: str | None) -> dict[str, Any]:
        """What a page reads: the person's preferences and, in a workspace,
        its draft."""
        draft = self.drafts.get(workspace) if workspace else None
        return {"locale": self.locale, "chatWidth": self.chat_width,
                "chatHidden": dict(self.chat_hidden), "draft": draft.text if draft else "",
                **self.switches}


class DamagedPreferences(ValueError):
    """The file is not one this code wrote."""


class UnusablePreferences(UnusableUserFile):
    """The file's name holds a link, a FIFO, a folder or a device; ``str()``
    is the one line to show, naming the file."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(path, f"the preferences file {path} {why}; Pneuma never follows or "
                               "replaces it: move it away (Pneuma then starts a new one)")


# --- checking what was read and what is asked ------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)


def _locale(value: Any) -> str | None:
    return value if value in LOCALES else None


def _chat_width(value: Any) -> int | None:
    if not _is_number(value) or not MIN_CHAT_WIDTH <= value <= MAX_CHAT_WIDTH:
        return None
    return int(round(value))


def _chat_hidden(value: Any) -> dict[str, bool] | None:
    if not isinstance(value, dict):
        return None
    if any(k not in LAYOUTS or not isinstance(v, bool) for k, v in value.items()):
        return None
    return dict(value)


def _switches(document: dict[str, Any]) -> dict[str, bool]:
    return {name: document[name] for name in SWITCHES if isinstance(document.get(name), bool)}


def _drafts(value: Any) -> dict[str, Draft]:
    drafts: dict[str, Draft] = {}
    if not isinstance(value, dict):
        return drafts
    for path, raw in value.items():
        # One odd entry is skipped, not every draft.
        if not isinstance(path, str) or not path.startswith("/") or not isinstance(raw, dict):
            continue
        text, at = raw.get("text"), raw.get("at")
        if isinstance(text, str) and text and len(text) <= MAX_DRAFT_CHARS \
                and isinstance(at, (int, float)) and _is_number(at):
            drafts[path] = Draft(text, float(at))
    return drafts


def parse_document(data: bytes) -> Preferences:
    """The preferences in ``data``; a field of the wrong shape is left at
    its default. Not JSON, or not an object: ``DamagedPreferences``."""
    if len(data) > MAX_FILE_BYTES:
        raise DamagedPreferences(f"over {MAX_FILE_BYTES} bytes")
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise DamagedPreferences(f"not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise DamagedPreferences("not a JSON object")
    return Preferences(locale=_locale(document.get("locale")),
                       chat_width=_chat_width(document.get("chatWidth")),
                       chat_hidden=_chat_hidden(document.get("chatHidden")) or {},
                       drafts=_drafts(document.get("drafts")),
                       switches=_switches(document))


def _bad(name: str, what: str) -> ToolError:
    return ToolError("E_BAD_ARGS", f"'{name}' must be {what}", details={"field": name})


def check_change(body: Any) -> dict[str, Any]:
    """The fields a ``POST`` changes, checked; ``ToolError`` names the first
    wrong one. ``None`` for ``locale``, ``chatWidth`` or a switch forgets the choice."""
    if not isinstance(body, dict):
        raise ToolError("E_BAD_ARGS", "the request body must be a JSON object")
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise ToolError("E_BAD_ARGS", f"no preference named {unknown[0]!r}",
                        details={"field": unknown[0], "allowed": list(FIELDS)})
    change: dict[str, Any] = {}
    if "locale" in body:
        if body["locale"] is not None and _locale(body["locale"]) is None:
            raise _bad("locale", f"one of {', '.join(LOCALES)}")
        change["locale"] = body["locale"]
    if "chatWidth" in body:
        width = body["chatWidth"]
        if width is not None and _chat_width(width) is None:
            raise _bad("chatWidth", f"a number of pixels from {MIN_CHAT_WIDTH} to {MAX_CHAT_WIDTH}")
        change["chatWidth"] = None if width is None else _chat_width(width)
    if "chatHidden" in body:
        hidden = _chat_hidden(body["chatHidden"])
        if hidden is None:
            raise _bad("chatHidden", f"an object of true/false by layout ({', '.join(LAYOUTS)})")
        change["chatHidden"] = hidden
    if "draft" in body:
        draft = body["draft"]
        if not isinstance(draft, str):
            raise _bad("draft", "a string")
        if len(draft) > MAX_DRAFT_CHARS:
            raise ToolError("E_TOO_LARGE", f"the draft is {len(draft)} characters; the limit "
                            f"is {MAX_DRAFT_CHARS}", details={"field": "draft",
                                                              "limit": MAX_DRAFT_CHARS})
        change["draft"] = draft
    for name in SWITCHES:
        if name in body:
            if body[name] is not None and not isinstance(body[name], bool):
                raise _bad(name, "true, false or null")
            change[name] = body[name]
    return change


def apply_change(preferences: Preferences, change: dict[str, Any], workspace: str | None,
                 now: float) -> None:
    if "locale" in change:
        preferences.locale = change["locale"]
    if "chatWidth" in change:
        preferences.chat_width = change["chatWidth"]
    if "chatHidden" in change:
        preferences.chat_hidden.update(change["chatHidden"])
    for name in SWITCHES:
        if name in change:
            if change[name] is None:
                preferences.switches.pop(name, None)
            else:
                preferences.switches[name] = change[name]
    if "draft" in change:
        if workspace is None:
            raise ToolError("E_BAD_ARGS", "a draft belongs to a workspace; this server "
                            "serves none", details={"field": "draft"})
        preferences.drafts.pop(workspace, None)
        if change["draft"]:
            preferences.drafts[workspace] = Draft(change["draft"], now)
        newest = sorted(preferences.drafts.items(), key=lambda item: item[1].at, reverse=True)
        preferences.drafts = dict(newest[:MAX_DRAFTS])


# --- the file ------------------------------------------------------------------


class PreferenceStore:
    """The preferences file in ``home`` (default: ``config_home()``).
    ``warn`` hears about a damaged or unusable file (default: the log), once
    per store for the same problem."""

    def __init__(self, home: Path | None = None,
                 warn: Callable[[str], None] | None = None) -> None:
        self.home = home if home is not None else config_home()
        self._file = UserFile(self.home, PREFERENCES_FILE, UnusablePreferences,
                              max_bytes=MAX_FILE_BYTES)
        self.path = self._file.path
        self._warn = warn or log.warning
        self._warned: set[str] = set()

    def read(self) -> Preferences:
        """The preferences, or the defaults when there is no file or it
        cannot be used (with one warning). Never raises for the file's
        content; reading takes no lock (the file is only replaced whole)."""
        try:
            data = self._file.read()
        except OSError as exc:
            self._warn_once(str(exc) if isinstance(exc, UnusablePreferences)
                            else f"the preferences file {self.path} cannot be read "
                                 f"({exc.strerror or exc}); using the defaults")
            return Preferences()
        if data is None:
            return Preferences()
        try:
            return parse_document(data)
        except DamagedPreferences as exc:
            self._warn_once(f"the preferences file {self.path} is damaged ({exc}); using the "
                            "defaults (the next change sets it aside)")
            return Preferences()

    def change(self, change: dict[str, Any], workspace: str | None,
               now: float | None = None) -> Preferences:
        """Apply a checked change (``check_change``) and write the file."""
        with self._file.locked():
            preferences = self._read_for_change()
            apply_change(preferences, change, workspace, time.time() if now is None else now)
            self._file.write(json.dumps(preferences.to_json(), ensure_ascii=False,
                                        indent=1).encode())
        return preferences

    def _read_for_change(self) -> Preferences:
        data = self._file.read()  # a link or FIFO there: refused, never replaced
        if data is None:
            return Preferences()
        try:
            return parse_document(data)
        except DamagedPreferences as exc:
            aside = self._file.move_aside(PREFERENCES_FILE + ".damaged")
            self._warn(f"the preferences file {self.path} was damaged ({exc}); it was moved "
                       f"to {aside} and a new one started")
            return Preferences()

    def _warn_once(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            self._warn(message)


def workspace_key(workspace: Path | None) -> str | None:
    """A workspace's drafts are kept under its real path: the same folder
    reached through a link, or opened again later, finds its draft."""
    return os.path.realpath(workspace) if workspace is not None else None


# --- the route -------------------------------------------------------------------


def add_routes(app: web.Application, workspace: Path | None,
               store: PreferenceStore | None = None) -> None:
    """``GET``/``POST /api/preferences`` on ``app`` (the token is checked by
    the app's security middleware, as for every route)."""
    from aiohttp import web

    preferences = store or PreferenceStore()
    key = workspace_key(workspace)

    async def read_preferences(request: web.Request) -> web.Response:
        return web.json_response(preferences.read().view(key))

    async def change_preferences(request: web.Request) -> web.Response:
        change = check_change(await _json_body(request))
        try:
            changed = preferences.change(change, key)
        except UnusablePreferences as exc:
            raise ToolError("E_CONFLICT", str(exc), details={"path": exc.path}) from None
        except OSError as exc:
            raise ToolError("E_IO", f"the preferences file {preferences.path} cannot be "
                            f"written ({exc.strerror or exc})",
                            details={"path": str(preferences.path)}) from None
        return web.json_response(changed.view(key))

    app.router.add_get("/api/preferences", read_preferences)
    app.router.add_post("/api/preferences", change_preferences)


async def _json_body(request: web.Request) -> Any:
    return await read_bounded_json(request, MAX_BODY_BYTES,
                                   too_large=f"the request body is over {MAX_BODY_BYTES} bytes",
                                   not_json="the request body must be JSON")
