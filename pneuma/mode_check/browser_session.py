"""One served mode and one Chromium page on it, for the browser checks.

The mode is served by the one server (``create_app``, as ``pneuma run``
serves it: token, Host and Origin checks, the watcher, the mode's routes)
on 127.0.0.1 over a scratch workspace seeded from the mode's seeds, with no
agent. The page is the shell, in Debian's Chromium started with the host's
flags (pneuma.tools.chromium). Everything the page says on its console and
every socket frame it sends is kept: the checks read them.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from pneuma.host.modes import LoadedMode

CONNECTED = '.pill[data-state="open"]'
MOUNTED = "() => Boolean(window.pneuma && window.pneuma.ui && window.pneuma.ui.viewerReady)"
ACTION_TIMEOUT_S = 15.0  # an action that drives an engine (a WebGAL scene preview) takes seconds
VIEWPORT: Any = {"width": 1280, "height": 800}  # Playwright's ViewportSize


@dataclass
class CheckSession:
    """What the checks hold: the served mode, its workspace, the page."""

    mode: LoadedMode
    workspace: Path
    url: str
    token: str
    session_id: str
    page: Any
    http: aiohttp.ClientSession
    console_errors: list[str] = field(default_factory=list)
    sent_frames: list[str] = field(default_factory=list)

    @property
    def page_url(self) -> str:
        return f"{self.url}/?session={self.session_id}&token={self.token}"

    async def post(self, path: str, body: dict[str, Any], timeout: float) -> tuple[int, Any]:
        async with self.http.post(self.url + path, json=body, timeout=aiohttp.ClientTimeout(total=timeout),
                                  headers={"Authorization": f"Bearer {self.token}"}) as response:
            try:
                return response.status, await response.json(content_type=None)
            except ValueError:
                return response.status, None

    async def get_json(self, path: str) -> tuple[int, Any]:
        async with self.http.get(self.url + path, headers={"Authorization": f"Bearer {self.token}"}) as response:
            try:
                return response.status, await response.json(content_type=None)
            except ValueError:
                return response.status, None

    def errors_since(self, start: int) -> list[str]:
        return self.console_errors[start:]


def seeded_workspace(mode: LoadedMode, scratch: Path) -> Path:
    """A workspace seeded as ``pneuma init`` seeds one (defaults for params)."""
    from pneuma.workspace.params import init_workspace

    root = scratch / "workspace"
    root.mkdir(parents=True, exist_ok=True)
    init_workspace(mode, root, {})
    return root


@asynccontextmanager
async def served(mode: LoadedMode, scratch: Path) -> AsyncIterator[tuple[str, str, str, Path]]:
    """Serve ``mode`` over a seeded scratch workspace: (url, token, session id, workspace)."""
    from aiohttp import web

    from pneuma.server.app import create_app
    from pneuma.server.config import ServerConfig
    from pneuma.server.session import Session
    from pneuma.workspace.params import resolve_params

    root = seeded_workspace(mode, scratch)
    session = Session(str(uuid.uuid4()), mode=mode.name, workspace=root, backend_name="none")
    config = ServerConfig(mode=mode, workspace=root, token=secrets.token_urlsafe(24), session=session,
                          params=resolve_params(mode, root, save=False), action_timeout=ACTION_TIMEOUT_S)
    runner = web.AppRunner(create_app(config), handle_signals=False, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        config.port = runner.addresses[0][1]
        yield config.api_url, config.token, session.id, root
    finally:
        await runner.cleanup()


@asynccontextmanager
async def check_session(mode: LoadedMode, timeout_s: float) -> AsyncIterator[CheckSession]:
    """The mode served and its shell page open (mounted or not: the mount
    check says which)."""
    from playwright.async_api import async_playwright

    from pneuma.host.exporters import ExportError
    from pneuma.tools.chromium import CHROMIUM, CHROMIUM_ARGS
    from pneuma.tools.html_render import find_chromium

    try:
        chromium = find_chromium()
    except ExportError:
        raise RuntimeError(f"Chromium is not installed ({CHROMIUM}): sudo apt-get install chromium "
                           "(Debian, Ubuntu) or your system's package") from None
    scratch = Path(tempfile.mkdtemp(prefix="pneuma-mode-check-"))
    try:
        async with served(mode, scratch) as (url, token, session_id, root), \
                aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http, \
                async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=chromium, headless=True,
                                                       args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page(viewport=VIEWPORT)
                page.set_default_timeout(timeout_s * 1000)
                checked = CheckSession(mode, root, url, token, session_id, page, http)
                watch_page(checked)
                await page.goto(checked.page_url)
                yield checked
            finally:
                await browser.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def watch_page(checked: CheckSession) -> None:
    """Keep the page's console errors, uncaught errors and sent socket frames."""
    page = checked.page

    def on_console(message: Any) -> None:
        if message.type == "error":
            where = (message.location or {}).get("url") or ""
            checked.console_errors.append(f"console: {message.text}" + (f" ({where})" if where else ""))

    def on_websocket(socket: Any) -> None:
        socket.on("framesent", lambda payload: checked.sent_frames.append(
            payload if isinstance(payload, str) else payload.decode("utf-8", "replace")))

    page.on("console", on_console)
    page.on("pageerror", lambda error: checked.console_errors.append(f"error: {error}"))
    page.on("websocket", on_websocket)
