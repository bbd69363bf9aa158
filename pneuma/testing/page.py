"""The shell page of a served session in a real Chromium, for a mode's
browser-level tests (docs/api.md, "Testing a mode"; docs/mode-authors.md).

    async with serve(mode, workspace) as server, shell_page(server) as page:
        await page.locator(".annotate-toggle").click()

``page`` is a Playwright (async API) page on ``server.page_url``, connected
to the session. Playwright and a Chromium are the test's own dependencies:
without them the test is skipped, with the reason. The Chromium is
``$PNEUMA_CHROMIUM``, else Debian's ``/usr/bin/chromium``, else the one
Playwright installed for itself.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pneuma.testing.server import RunningServer

CHROMIUM_ENV = "PNEUMA_CHROMIUM"
DEBIAN_CHROMIUM = "/usr/bin/chromium"
CONNECTED = '.pill[data-state="open"]'
# Root in a container has no user namespaces for Chromium's sandbox; a test
# page on 127.0.0.1 needs none of it.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run"]


def chromium_path() -> str | None:
    """The Chromium to drive: ``$PNEUMA_CHROMIUM``, Debian's, or None
    (Playwright's own, if it has one)."""
    chosen = os.environ.get(CHROMIUM_ENV)
    if chosen:
        return chosen
    return DEBIAN_CHROMIUM if Path(DEBIAN_CHROMIUM).exists() else None


@asynccontextmanager
async def shell_page(server: RunningServer, *, viewport: dict[str, int] | None = None,
                     color_scheme: str = "light", timeout_ms: float = 15_000) -> AsyncIterator[Any]:
    """A page on the session's shell, connected and with the viewer mounted."""
    import pytest

    try:
        from playwright.async_api import async_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (pip install playwright)")
    async with async_playwright() as playwright:
        try:
            browser = await playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                                        args=CHROMIUM_ARGS)
        except Exception as exc:  # no Chromium here: a skip, said why
            pytest.skip(f"no Chromium to drive ({exc}); set {CHROMIUM_ENV}")
        try:
            options: dict[str, Any] = {"viewport": viewport or {"width": 1280, "height": 800},
                                       "color_scheme": color_scheme}
            context = await browser.new_context(**options)
            page = await context.new_page()
            page.set_default_timeout(timeout_ms)
            await page.goto(server.page_url)
            await page.wait_for_selector(CONNECTED)
            # A function, not an expression: the page's policy forbids eval.
            await page.wait_for_function("() => window.pneuma && window.pneuma.ui.viewerReady")
            yield page
        finally:
            await browser.close()
