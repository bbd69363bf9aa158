"""Full-page screenshots of the site's pages in headless Chromium, from a
private copy of the site (see site.py), with the network closed: only the
copy's own files load, so a capture shows what the exported site shows and
the page cannot reach Pneuma's server."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pneuma.api import CHROMIUM, CHROMIUM_ARGS, hung_page, page_timeout_s, within

from .site import viewport_size

T = TypeVar("T")


@dataclass(frozen=True)
class Shot:
    page: str
    viewport: str
    output: Path
    width: int
    height: int


async def screenshot_pages(site_root: Path, jobs: Sequence[tuple[str, str, Path]],
                           page_seconds: float | None = None) -> tuple[list[Shot], list[str]]:
    """``jobs`` are (page, viewport name, output PNG); one browser for all.
    Also one line per job left out: a page that does not finish within its
    budget (``page_timeout_s``) is closed and the others are still taken."""
    site_root = site_root.resolve()
    from playwright.async_api import async_playwright

    seconds = page_seconds or page_timeout_s()
    # One context (and page) per width, not per job: a context costs about a
    # third of a second, and the pages of one site may share one at a width
    # as they share one browser when visited (benchmarks/bench_export.py).
    widths: dict[str, list[int]] = {}
    for index, (_page, viewport, _output) in enumerate(jobs):
        widths.setdefault(viewport, []).append(index)
    shots: list[Shot | None] = [None] * len(jobs)
    left_out: list[str] = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for viewport, indexes in widths.items():
                width, height = viewport_size(viewport)
                context = await browser.new_context(viewport={"width": width, "height": height})
                await context.route("**/*", _only_inside(site_root))
                page = await context.new_page()
                for index in indexes:
                    page_path, _viewport, output = jobs[index]
                    box: list[Shot] = []

                    async def work(page: Any = page, page_path: str = page_path, output: Path = output,
                                   box: list[Shot] = box, viewport: str = viewport) -> None:
                        box.append(await _shoot(page, site_root, page_path, viewport, output))

                    if await within(page, seconds, work):
                        shots[index] = box[0]
                    else:
                        output.unlink(missing_ok=True)
                        left_out.append(hung_page(f"{page_path} at {viewport} width", seconds))
                        page = await context.new_page()
                await context.close()
        finally:
            await browser.close()
    return [shot for shot in shots if shot is not None], left_out


async def _shoot(page: Any, site_root: Path, page_path: str, viewport: str, output: Path) -> Shot:
    width, height = viewport_size(viewport)
    await page.goto((site_root / page_path).as_uri(), wait_until="load", timeout=0)
    await page.evaluate("() => document.fonts ? document.fonts.ready.then(() => true) : true")
    output.parent.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(output), full_page=True, timeout=0)
    size = await page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
    return Shot(page_path, viewport, output, width, max(height, int(size[1])))


def _only_inside(site_root: Path) -> Callable[[Any], Awaitable[None]]:
    """A route handler that lets through the copy's own files (and data:/blob:
    URLs) and nothing else: no network, and no file:// outside the copy,
    which a page could otherwise frame into the screenshot."""
    prefix = site_root.resolve().as_uri().rstrip("/") + "/"

    async def decide(route: Any) -> None:
        url: str = route.request.url
        if url.startswith((prefix, "data:", "blob:")):
            await route.continue_()
        else:
            await route.abort()

    return decide




# A crop of a pinned place shows that place, not the page: its box plus a
# margin, at most this many CSS pixels each way.
CROP_MARGIN = 8
MAX_CROP = 1600
_BOX_OF = """([selector, margin, most]) => {
  let el = null;
  try { el = document.querySelector(selector); } catch { return null; }
  if (!el) return null;
  const r = el.getBoundingClientRect();
  if (r.width < 1 || r.height < 1) return null;
  const x = Math.max(0, r.left + scrollX - margin), y = Math.max(0, r.top + scrollY - margin);
  return { x, y, width: Math.min(most, r.width + 2 * margin), height: Math.min(most, r.height + 2 * margin) };
}"""


@dataclass(frozen=True)
class Crop:
    key: str
    page: str
    selector: str
    viewport: str


async def crop_elements(site_root: Path, crops: Sequence[Crop],
                        page_seconds: float | None = None) -> dict[str, bytes | None]:
    """A PNG of each crop's element (by CSS selector) on its page at its
    width, from the private copy with the network closed, one browser for
    all and one load per page and width; None for a crop whose element is
    not there (made by a script that did not run here) or whose page did
    not finish within its budget."""
    site_root = site_root.resolve()
    from playwright.async_api import async_playwright

    seconds = page_seconds or page_timeout_s()
    found: dict[str, bytes | None] = {crop.key: None for crop in crops}
    loads: dict[tuple[str, str], list[Crop]] = {}
    for crop in crops:
        loads.setdefault((crop.page, crop.viewport), []).append(crop)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for (page_path, viewport), group in loads.items():
                width, height = viewport_size(viewport)
                context = await browser.new_context(viewport={"width": width, "height": height})
                await context.route("**/*", _only_inside(site_root))
                page = await context.new_page()

                async def work(page: Any = page, page_path: str = page_path, group: list[Crop] = group) -> None:
                    await page.goto((site_root / page_path).as_uri(), wait_until="load", timeout=0)
                    for crop in group:
                        box = await page.evaluate(_BOX_OF, [crop.selector, CROP_MARGIN, MAX_CROP])
                        if box:
                            found[crop.key] = await page.screenshot(clip=box, full_page=True, timeout=0)

                await within(page, seconds, work)
                await context.close()
        finally:
            await browser.close()
    return found
