"""Starting and stopping the headless viewer's Chromium through Playwright:
one browser, one page on the shell's URL, and a way to know it died."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pneuma.core.channels import NoBrowserConnected
from pneuma.headless_viewer import processes
from pneuma.headless_viewer.settings import (
    MEMORY_ARGS,
    VIEWPORT_HEIGHT,
    VIEWPORT_WIDTH,
    Settings,
)
from pneuma.tools.chromium import CHROMIUM_ARGS

log = logging.getLogger(__name__)

INSTALL_CHROMIUM = "sudo apt-get install chromium (Debian, Ubuntu) or your system's package"
INSTALL_PLAYWRIGHT = "pip install playwright==1.65.2 (no `playwright install`: it drives the system's Chromium)"
CLOSE_TIMEOUT_S = 5.0
SETTLE_S = 10.0
# A function's source, not a bare expression: the shell's policy has no eval
# (Playwright compiles a function through DevTools, which the policy does not govern).
VIEWER_MOUNTED = "() => Boolean(window.pneuma && window.pneuma.ui && window.pneuma.ui.viewerReady)"


def cannot_start(why: str, reason: str, install: str) -> NoBrowserConnected:
    """Today's no-tab answer (E_UNAVAILABLE), naming what to install."""
    return NoBrowserConnected(
        f"No Pneuma tab is open and the headless viewer cannot start: {why}",
        hint=f"Ask the person to open the Pneuma page, or install what the headless viewer "
             f"needs: {install}.",
        details={"headless": reason})


def check_installed(settings: Settings) -> None:
    """Raise ``cannot_start`` when Chromium or Playwright is missing."""
    if not settings.chromium or not Path(settings.chromium).exists():
        where = f" at {settings.chromium}" if settings.chromium else ""
        raise cannot_start(f"Chromium was not found{where}", "no_chromium", INSTALL_CHROMIUM)
    if importlib.util.find_spec("playwright") is None:
        raise cannot_start("Playwright (Python) is not installed", "no_playwright", INSTALL_PLAYWRIGHT)


@dataclass
class Chromium:
    """One running headless Chromium with the shell's page open."""

    playwright: Any
    browser: Any
    page: Any
    marker: str
    pid: int | None = None
    dead: asyncio.Event = field(default_factory=asyncio.Event)

    async def settle(self) -> None:
        """Wait (at most SETTLE_S) until the shell has mounted the viewer and
        the page's requests have gone quiet: a viewer that reads its file
        after ``mount`` (draw) then shows it when the first action arrives."""
        try:
            await self.page.wait_for_function(VIEWER_MOUNTED, timeout=SETTLE_S * 1000)
            await self.page.wait_for_load_state("networkidle", timeout=SETTLE_S * 1000)
        except Exception as exc:  # the action is still asked: the viewer may answer anyway
            log.info("the headless viewer's page did not settle: %s", str(exc).splitlines()[0])

    def pids(self) -> list[int]:
        return processes.process_tree(self.pid) if self.pid is not None else []

    async def close(self) -> None:
        """Close the browser; kill what is left of it if it will not close."""
        pids = await asyncio.to_thread(self.pids)
        try:
            await asyncio.wait_for(self.browser.close(), CLOSE_TIMEOUT_S)
        except Exception as exc:  # crashed or hung: the kill below ends it
            log.info("the headless viewer's Chromium did not close by itself: %s", exc)
        try:
            await asyncio.wait_for(self.playwright.stop(), CLOSE_TIMEOUT_S)
        except Exception as exc:
            log.info("Playwright did not stop by itself: %s", exc)
        processes.kill([pid for pid in pids if processes.alive(pid)])
        self.dead.set()


async def launch(settings: Settings, url: str) -> Chromium:
    """Start Chromium and open ``url`` (the shell as the headless client)."""
    from playwright.async_api import async_playwright

    marker = f"--pneuma-headless-viewer={secrets.token_hex(6)}"
    playwright = await async_playwright().start()
    try:
        browser = await playwright.chromium.launch(
            executable_path=settings.chromium, headless=True,
            args=[*CHROMIUM_ARGS, *MEMORY_ARGS, marker],
            timeout=settings.start_timeout_s * 1000)
        page = await browser.new_page(viewport={"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT})
    except Exception as exc:
        await playwright.stop()
        raise cannot_start(f"Chromium failed to start ({str(exc).splitlines()[0]})",
                           "start_failed", INSTALL_CHROMIUM) from None
    chromium = Chromium(playwright, browser, page, marker)
    browser.on("disconnected", lambda *_: chromium.dead.set())
    page.on("crash", lambda *_: chromium.dead.set())
    page.on("close", lambda *_: chromium.dead.set())
    chromium.pid = await asyncio.to_thread(processes.browser_pid, marker)
    try:
        await page.goto(url, wait_until="commit", timeout=settings.start_timeout_s * 1000)
    except Exception as exc:
        await chromium.close()
        raise cannot_start(f"the page did not open ({str(exc).splitlines()[0]})",
                           "start_failed", INSTALL_CHROMIUM) from None
    return chromium
