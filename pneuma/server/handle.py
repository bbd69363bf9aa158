"""``Pneuma``: the running session as a plugin sees it.

A plugin's routes and a backend's routes are handed this object (the way
datasette hands its plugins a ``datasette`` object) instead of the raw
aiohttp application: everything a mode may touch of the running server is
here, typed and documented, and nothing else is promised. Route handlers
that are plain functions find it again with ``pneuma_of(request)``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

from aiohttp import web

from pneuma.core.backend import AgentBackend
from pneuma.core.channels import (
    BrowserRequestTimeout,
    NoBrowserConnected,
    no_browser_error,
)
from pneuma.core.errors import ToolError
from pneuma.core.sandbox import Sandbox
from pneuma.host.modes import LoadedMode
from pneuma.server.config import ServerConfig
from pneuma.server.session import Session
from pneuma.server.watcher import SelfWrites

log = logging.getLogger(__name__)

FilesListener = Callable[[list[dict[str, Any]]], None]
"""Called with each batch of changed files, as the ``content_update`` message
carries them: ``{"path": "slides/a.html", "content": "..."}`` (``content`` is
None for a file that was removed or is not text)."""


class Pneuma:
    """One running Pneuma session: its mode, workspace, sandbox, broadcast,
    viewer-action channel, file changes and lifetime."""

    def __init__(self, config: ServerConfig, session: Session, sandbox: Sandbox,
                 self_writes: SelfWrites) -> None:
        self.config = config
        self.session = session
        self.sandbox = sandbox
        self._self_writes = self_writes
        self._files_listeners: list[FilesListener] = []
        self._startup: list[Callable[[], Awaitable[None]]] = []
        self._shutdown: list[Callable[[], Awaitable[None]]] = []

    # --- what is being served ---------------------------------------------

    @property
    def mode(self) -> LoadedMode:
        return self.config.mode

    @property
    def workspace(self) -> Path:
        return self.config.workspace

    @property
    def params(self) -> dict[str, Any]:
        """The workspace's init params (``.pneuma/config.toml``)."""
        return self.config.params

    @property
    def session_id(self) -> str:
        """This session's id (``PNEUMA_SESSION_ID``, the ``<id>`` of ``/ws/browser/<id>``)."""
        return self.session.id

    @property
    def backend(self) -> AgentBackend | None:
        """The session's agent backend (what ``--backend`` chose), once the
        server has started it; None before that and in a session without an agent."""
        return self.session.backend

    @property
    def api_url(self) -> str:
        """``http://127.0.0.1:<port>``, once the server is bound."""
        return self.config.api_url

    @property
    def token(self) -> str:
        """The session token every request must carry."""
        return self.config.token

    # --- talking to the browser -------------------------------------------

    def broadcast(self, message: dict[str, Any]) -> None:
        """Send one browser-protocol message (``{"type": ...}``) to every tab.

        The session numbers it, keeps it for replay and sends it; the dict
        must not be changed afterwards.
        """
        self.session.emit(message)

    async def viewer_action(self, action_id: str, params: dict[str, Any] | None = None,
                            timeout: float | None = None) -> dict[str, Any]:
        """Run one of the mode's viewer actions in the browser and return the
        viewer's answer. With no tab open the headless viewer answers, where
        installed (docs/headless-viewer.md). Raises ``ToolError``
        ``E_UNAVAILABLE`` when nothing can and ``E_TIMEOUT`` when none answers
        in time."""
        try:
            return await self.session.viewer_actions.request(
                action_id, dict(params or {}), timeout or self.config.action_timeout)
        except NoBrowserConnected as exc:
            # The same answer as POST /api/viewer/action gives (docs/errors.md).
            raise no_browser_error(exc) from None
        except BrowserRequestTimeout as exc:
            raise ToolError("E_TIMEOUT", str(exc), details={"actionId": action_id}) from None

    # --- files ---------------------------------------------------------------

    def on_files_changed(self, listener: FilesListener) -> Callable[[], None]:
        """Call ``listener`` with every batch of changed watched files (the
        host's one watcher). Returns a function that unsubscribes."""
        self._files_listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._files_listeners:
                self._files_listeners.remove(listener)

        return unsubscribe

    def mark_own_write(self, rel: str) -> None:
        """Tell the watcher that the server itself is about to write ``rel``,
        so that the change is not reported back to the tab that caused it."""
        self._self_writes.mark(rel)

    def files_changed(self, files: list[dict[str, Any]]) -> None:
        """Deliver a batch of changes: the browser first, then the listeners.
        Called by the host's watcher; a listener that raises is logged."""
        self.session.emit({"type": "content_update", "files": files})
        self.session.hooks.files_changed(files)
        for listener in list(self._files_listeners):
            try:
                listener(files)
            except Exception:
                log.exception("a files-changed listener failed")

    # --- lifetime ------------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``coro`` in the background for the life of the server; its
        exception, if any, is logged, never lost."""
        task = asyncio.get_running_loop().create_task(coro)

        def report(done: asyncio.Task[Any]) -> None:
            if not done.cancelled() and done.exception() is not None:
                log.error("background task failed", exc_info=done.exception())

        task.add_done_callback(report)
        return task

    def on_startup(self, callback: Callable[[], Awaitable[None]]) -> None:
        """Await ``callback()`` once the server starts, inside its event loop
        (where ``spawn`` may be called); before the first request is answered."""
        self._startup.append(callback)

    async def startup(self) -> None:
        """Run the startup callbacks in the order given (the host calls this)."""
        for callback in self._startup:
            await callback()

    def on_shutdown(self, callback: Callable[[], Awaitable[None]]) -> None:
        """Await ``callback()`` when the server stops (before the session is saved)."""
        self._shutdown.append(callback)

    async def shutdown(self) -> None:
        """Run the shutdown callbacks, newest first (the host calls this)."""
        while self._shutdown:
            callback = self._shutdown.pop()
            try:
                await callback()
            except Exception:
                log.exception("a shutdown callback failed")


PNEUMA = web.AppKey("pneuma", Pneuma)


def pneuma_of(request: web.Request) -> Pneuma:
    """The ``Pneuma`` of the server answering ``request``."""
    return request.app[PNEUMA]
