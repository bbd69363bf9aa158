"""One warm Chromium for the diagram tools and the export (issue 25, item 22).

Starting Chromium and loading the 5 MB mermaid bundle costs about 1.8 s,
mermaid's own parse a few milliseconds. So the process keeps one browser
(Playwright) with one page that has mermaid loaded: started on first use,
started again when it has died (a crash, a killed process), and closed at
exit. The tools run in worker threads (``asyncio.to_thread``) and the export
in its own, so Playwright lives on an event loop of its own thread and every
call is handed to it and waits for its answer; a lock serialises the calls,
since one page runs one script at a time anyway. A page is replaced after
``RECYCLE_AFTER`` uses so that what mermaid leaves behind cannot grow
without bound.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from pneuma.api import CHROMIUM_ARGS

T = TypeVar("T")

RECYCLE_AFTER = 200
# On the browser's command line, so a person (or a test) can tell this
# Chromium from the others on the machine; Chromium ignores switches it
# does not know.
MARKER = "--pneuma-warm-diagram-renderer"
_LOAD_TIMEOUT_MS = 60_000


class _Page:
    """A page of the warm browser and how many times it was used."""

    def __init__(self, page: Any, context: Any) -> None:
        self.page = page
        self.context = context
        self.uses = 0
        self.state = ""  # for a mermaid page: the theme it was initialised with


class WarmRenderer:
    """The process's one Chromium: ``call`` runs a coroutine against it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._playwright: Any = None
        self._browser: Any = None
        self._pages: dict[str, _Page] = {}
        self._workdir: Path | None = None
        self.launches = 0  # how many times a browser was started (read by tests)

    # --- the caller's side (any thread) -----------------------------------------

    def call(self, work: Callable[[WarmRenderer], Awaitable[T]]) -> T:
        """``work(self)`` on the renderer's loop; one call at a time. A
        browser that died is started again and ``work`` tried once more."""
        with self._lock:
            if self._pid != os.getpid():  # a forked child owns none of the parent's browser
                self.__init__()  # type: ignore[misc]
            loop = self._running_loop()
            return asyncio.run_coroutine_threadsafe(self._with_retry(work), loop).result()

    def close(self) -> None:
        """Close the browser and Playwright and end the loop's thread."""
        with self._lock:
            loop, self._loop = self._loop, None
            if loop is None or self._pid != os.getpid():
                return
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._shut(), loop).result(timeout=15)
            loop.call_soon_threadsafe(loop.stop)
            if self._workdir is not None:
                shutil.rmtree(self._workdir, ignore_errors=True)
                self._workdir = None

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="pneuma-diagram-renderer", daemon=True).start()
            self._loop = loop
        return self._loop

    # --- the loop's side ----------------------------------------------------------

    async def _with_retry(self, work: Callable[[WarmRenderer], Awaitable[T]]) -> T:
        from playwright.async_api import Error as PlaywrightError

        try:
            return await work(self)
        except PlaywrightError:
            if self._browser is not None and self._browser.is_connected():
                raise  # the browser is fine: the failure is the page's or the work's own
        await self._shut()
        return await work(self)

    async def browser(self, binary: str) -> Any:
        """The running browser, started when there is none or it died."""
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        await self._shut()
        from playwright.async_api import async_playwright

        self._playwright = await async_playwright().start()
        self._browser = await self._playwright.chromium.launch(executable_path=binary,
                                                               args=[*CHROMIUM_ARGS, MARKER])
        self.launches += 1
        return self._browser

    async def page(self, binary: str, key: str, *, scale: int = 1, url: str | None = None) -> _Page:
        """The page kept under ``key`` (a fresh one after ``RECYCLE_AFTER``
        uses or when it was closed), opened at ``url`` when given."""
        browser = await self.browser(binary)
        kept = self._pages.get(key)
        if kept is not None and (kept.uses >= RECYCLE_AFTER or kept.page.is_closed()):
            await self.drop(key)
            kept = None
        if kept is None:
            context = await browser.new_context(device_scale_factor=scale)
            page = await context.new_page()
            kept = _Page(page, context)
            self._pages[key] = kept
            if url is not None:
                await page.goto(url, wait_until="load", timeout=_LOAD_TIMEOUT_MS)
        kept.uses += 1
        return kept

    async def drop(self, key: str) -> None:
        """Forget the page under ``key`` (after it hung, or to recycle it)."""
        kept = self._pages.pop(key, None)
        if kept is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(kept.context.close(), 10)

    def workdir(self) -> Path:
        """A folder for the renderer's page files, removed at close."""
        if self._workdir is None or not self._workdir.is_dir():
            self._workdir = Path(tempfile.mkdtemp(prefix="pneuma-diagram-"))
        return self._workdir

    async def _shut(self) -> None:
        self._pages.clear()
        browser, self._browser = self._browser, None
        playwright, self._playwright = self._playwright, None
        if browser is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(browser.close(), 10)
        if playwright is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(playwright.stop(), 10)


RENDERER = WarmRenderer()
atexit.register(RENDERER.close)
