"""``HeadlessViewer``: the session's answer to a viewer action when no tab of
the person's is open (docs/viewer-contract.md, "Headless viewer").

The server opens its own shell page (``?client=headless``) in a Chromium it
starts on the first such action; every later one goes to that page's socket
alone (``viewer_action_request`` with ``headless: true``). Concurrent first
actions wait for the one start. The page closes after ``idle_s`` without an
action, is restarted when it died or its processes grew past the memory
bound, and closes with the server. The last place the agent navigated to is
shown once by the next tab of the person's that opens.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from typing import Any

from pneuma.core.channels import NoBrowserConnected, ViewerActionChannel
from pneuma.headless_viewer import processes
from pneuma.headless_viewer.browser import Chromium, check_installed, launch
from pneuma.headless_viewer.settings import Settings

log = logging.getLogger(__name__)

NOTE = "(answered by Pneuma's headless viewer: no tab of the person's is open)"
POLL_S = 0.1


class _PageLost(Exception):
    """The page or its Chromium went away before it answered."""


class HeadlessViewer:
    def __init__(self, channel: ViewerActionChannel, page_url: Any, settings: Settings) -> None:
        self.channel = channel
        self.page_url = page_url  # () -> the shell's URL with the token, once the server is bound
        self.settings = settings
        self.chromium: Chromium | None = None
        self.starts = 0  # Chromiums started, for the status route and the tests
        self.last_rss = 0
        self._connection: Any = None
        self._connected = asyncio.Event()
        self._start_lock = asyncio.Lock()
        self._busy = 0
        self._last_used = time.monotonic()
        self._idle_task: asyncio.Task[None] | None = None
        self._last_navigation: dict[str, Any] | None = None
        self._stopped = False
        self._checks: set[asyncio.Task[None]] = set()  # held: the loop keeps only weak references

    # --- the session's hook ------------------------------------------------

    def tab_subscribed(self, connection: Any) -> None:
        if getattr(connection, "headless", False):
            self._connection = connection
            self._connected.set()
            return
        if self._last_navigation is not None:
            # The person's new tab shows where the agent last went, once.
            params, self._last_navigation = self._last_navigation, None
            connection.send(json.dumps({
                "type": "viewer_action_request", "request_id": f"va_{uuid.uuid4().hex[:16]}",
                "action_id": "navigate-to", "params": params}))

    # --- answering ---------------------------------------------------------------

    async def answer(self, action_id: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        """The channel's ``when_no_tab``: run the action in the headless page."""
        self._busy += 1
        try:
            result = await self._answer_once_or_twice(action_id, params, timeout)
        finally:
            self._busy -= 1
            self._last_used = time.monotonic()
        if action_id == "navigate-to" and result.get("success"):
            self._last_navigation = dict(params)
        check = asyncio.get_running_loop().create_task(self._check_memory())
        self._checks.add(check)
        check.add_done_callback(self._checks.discard)
        marked = dict(result)
        marked["viewer"] = "headless"
        message = marked.get("message")
        marked["message"] = f"{message} {NOTE}" if message else NOTE
        return marked

    async def _answer_once_or_twice(self, action_id: str, params: dict[str, Any],
                                    timeout: float) -> dict[str, Any]:
        # A page that dies under an action is started again once: a renderer
        # killed for memory, a Chromium that crashed.
        for attempt in (1, 2):
            connection, chromium = await self._ready()
            try:
                return await self._ask(connection, chromium, action_id, params, timeout)
            except _PageLost:
                log.warning("the headless viewer went away during '%s' (attempt %d)", action_id, attempt)
                await self._close(chromium)
        raise NoBrowserConnected(
            f"the headless viewer closed twice before it answered '{action_id}'",
            hint="Try again; if it keeps failing, ask the person to open the Pneuma page.",
            details={"headless": "lost"})

    async def _ask(self, connection: Any, chromium: Chromium, action_id: str,
                   params: dict[str, Any], timeout: float) -> dict[str, Any]:
        def send(message: dict[str, Any]) -> None:
            connection.send(json.dumps(message))

        asked = asyncio.ensure_future(
            self.channel.request_through(send, action_id, params, timeout, headless=True))
        lost = asyncio.ensure_future(self._until_lost(connection, chromium))
        try:
            done, _ = await asyncio.wait({asked, lost}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
        if asked in done:
            return asked.result()
        asked.cancel()
        raise _PageLost

    @staticmethod
    async def _until_lost(connection: Any, chromium: Chromium) -> None:
        while not (connection.closed or chromium.dead.is_set()):
            await asyncio.sleep(POLL_S)

    # --- starting, stopping ------------------------------------------------------

    def _live_connection(self, chromium: Chromium) -> Any:
        connection = self._connection
        if connection is None or connection.closed or chromium.dead.is_set():
            return None
        return connection

    async def _ready(self) -> tuple[Any, Chromium]:
        """The headless page's socket, starting Chromium if needed (once)."""
        async with self._start_lock:
            if self._stopped:
                raise NoBrowserConnected("the server is shutting down")
            chromium = self.chromium
            if chromium is not None and chromium.dead.is_set():
                await self._close(chromium)
                chromium = None
            if chromium is None:
                check_installed(self.settings)
                self._connection = None
                self._connected.clear()
                chromium = await launch(self.settings, self.page_url())
                self.chromium = chromium
                self.starts += 1
                self._last_used = time.monotonic()
                if self._idle_task is None or self._idle_task.done():
                    self._idle_task = asyncio.get_running_loop().create_task(self._close_when_idle())
            connection = self._live_connection(chromium)
            if connection is None:
                connection = await self._wait_for_page(chromium)
                await chromium.settle()
            return connection, chromium

    async def _wait_for_page(self, chromium: Chromium) -> Any:
        deadline = time.monotonic() + self.settings.start_timeout_s
        while time.monotonic() < deadline and not chromium.dead.is_set():
            self._connected.clear()
            connection = self._live_connection(chromium)
            if connection is not None:
                return connection
            try:
                await asyncio.wait_for(self._connected.wait(), POLL_S * 5)
            except asyncio.TimeoutError:
                pass
        await self._close(chromium)
        raise NoBrowserConnected(
            "the headless viewer's page did not connect in time",
            hint="Try again; if it keeps failing, ask the person to open the Pneuma page.",
            details={"headless": "no_page"})

    async def _close(self, chromium: Chromium | None = None) -> None:
        chromium = chromium or self.chromium
        if chromium is None:
            return
        if self.chromium is chromium:
            self.chromium = None
            self._connection = None
        await chromium.close()

    async def _close_when_idle(self) -> None:
        while self.chromium is not None:
            left = self._last_used + self.settings.idle_s - time.monotonic()
            if left <= 0 and self._busy == 0 and not self._start_lock.locked():
                log.info("closing the headless viewer after %.0f s without an action", self.settings.idle_s)
                await self._close()
                return
            await asyncio.sleep(max(left, POLL_S * 5))

    async def _check_memory(self) -> None:
        chromium = self.chromium
        if chromium is None or chromium.pid is None:
            return
        self.last_rss = await asyncio.to_thread(lambda: processes.resident_bytes(chromium.pids()))
        if self.last_rss > self.settings.max_rss_bytes and self._busy == 0:
            log.warning("the headless viewer holds %d MiB (bound %d MiB): restarting it",
                        self.last_rss >> 20, self.settings.max_rss_bytes >> 20)
            await self._close(chromium)

    async def stop(self) -> None:
        """Close for good (the server stops): no Chromium outlives it."""
        self._stopped = True
        if self._idle_task is not None:
            self._idle_task.cancel()
        async with self._start_lock:
            await self._close()

    def status(self) -> dict[str, Any]:
        chromium = self.chromium
        return {"running": chromium is not None and not chromium.dead.is_set(),
                "pid": chromium.pid if chromium else None, "starts": self.starts,
                "rssBytes": self.last_rss, "idleSeconds": self.settings.idle_s,
                "maxRssBytes": self.settings.max_rss_bytes}
