"""Frames of a composition, drawn by headless Chromium through the scenes'
own runtime (static/runtime.js): the export, ``capture_frame`` and the
checks all look at a scene the way the player does.

One page at exactly width × height CSS px (device scale factor 1) shows one
scene at a time; for each frame the page's ``pneuma.seek(t)`` draws it and
CDP's ``Page.captureScreenshot`` takes the picture (measured in
benchmarks/bench_video_export.py).

The page lives on a private origin that exists only inside the browser: the
scene's document has the workspace's root as its base, as the player's
stage has (routes.py: ``assets/logo.png`` in any scene is the workspace's
``assets/logo.png``), the workspace's files are answered from disk (never
outside it), and every other request is refused: nothing leaves the machine.

The scene's fragment starts on the document's first line, right after the
runtime's tag, so a line Chromium reports is the line in the scene's file.

Chinese draws here as in the player on a machine without a CJK font: the
page runs the player's own static/cjk-font.js over the scene's text, and the
shell's Noto Sans SC slices it asks for are answered from the shell's files.
"""

from __future__ import annotations

import asyncio
import base64
import html
import mimetypes
import posixpath
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from pneuma.api import CHROMIUM_ARGS, ExportError, find_chromium, shell_static_dir
from pneuma_video.composition import Composition, CompositionError, Scene, scene_path

ORIGIN = "http://pneuma-video.localhost"
RUNTIME_PATH = "/__pneuma-video/runtime.js"
SCENE_PATH = "/__pneuma-video/scene.html"
STATIC_DIR = Path(__file__).resolve().parent / "static"
# The player's own modules this page runs too (the timeline runtime, the CJK font's loader)
MODULES = {f"/__pneuma-video/{name}": STATIC_DIR / name for name in ("runtime.js", "cjk-font.js", "data-url.js")}
CJK_FONT_PATH = "/__pneuma-video/cjk-font.js"
CJK_SLICES_PATH = "/static/vendor/cjk-font/"  # where cjk-font.js looks, on this page's origin too
# The scene's CJK faces (the player's code), in before the first frame is drawn.
LOAD_CJK_FONT = f"""async (text) => {{
  const {{ cjkFontFaces }} = await import({CJK_FONT_PATH!r});
  const css = await cjkFontFaces(text);
  if (!css) return;
  const style = document.createElement("style");
  style.textContent = css;
  document.head.append(style);
  await document.fonts.load('16px "Pneuma Noto Sans SC"', text).catch(() => undefined);
}}"""
SEEK_TIMEOUT_S = 15.0  # one frame; a scene whose onFrame never returns is named, not waited on
LOAD_TIMEOUT_S = 20.0


@dataclass
class SceneError:
    """Something a scene threw: its message and the line in the scene's file."""

    message: str
    line: int | None = None


@dataclass
class LoadedScene:
    scene: Scene
    errors: list[SceneError] = field(default_factory=list)


def scene_document(composition: Composition, scene: Scene, fragment: str) -> str:
    """The document a scene is shown in: the runtime first, the stage is the body."""
    runtime = (f'<script src="{RUNTIME_PATH}" data-fps="{composition.fps:g}" '
               f'data-duration="{scene.frames / composition.fps:g}" data-width="{composition.width}" '
               f'data-height="{composition.height}"></script>')
    style = (f"<style>html,body{{margin:0;padding:0;overflow:hidden}}"
             f"body{{position:relative;width:{composition.width}px;height:{composition.height}px;"
             f"background:{html.escape(composition.background, quote=False)}}}</style>")
    # one line up to <body>: the fragment's lines are the document's lines
    return (f'<!doctype html><html><head><meta charset="utf-8"><base href="/">{style}{runtime}</head>'
            f"<body>{fragment}</body></html>")


def _inside(workspace: Path, url_path: str) -> Path | None:
    """The workspace file a request path names, or None when it is outside."""
    rel = posixpath.normpath(unquote(url_path).lstrip("/"))
    if rel.startswith("..") or rel in ("", "."):
        return None
    target = (workspace / rel).resolve()
    return target if target.is_relative_to(workspace) and target.is_file() else None


def _cjk_font_file(url_path: str) -> Path | None:
    """The shell's CJK font file (its CSS or a slice) a request names, if installed."""
    folder = (Path(shell_static_dir()) / "vendor" / "cjk-font").resolve()
    found = (folder / unquote(url_path)[len(CJK_SLICES_PATH):]).resolve()
    return found if found.is_relative_to(folder) and found.is_file() else None


class FramePage:
    """One headless page that shows scenes and captures their frames."""

    def __init__(self, page: Any, cdp: Any, workspace: Path, composition: Composition) -> None:
        self.page = page
        self.cdp = cdp
        self.workspace = workspace
        self.composition = composition
        self.documents: dict[str, str] = {}
        self.errors: list[SceneError] = []
        self.current: Scene | None = None

    async def route(self, route: Any) -> None:
        url = route.request.url
        if not url.startswith(ORIGIN + "/"):
            await route.abort()  # nothing leaves the machine
            return
        path = urlsplit(url).path
        if path in self.documents:
            await route.fulfill(status=200, content_type="text/html; charset=utf-8", body=self.documents[path])
        elif path in MODULES:
            await route.fulfill(status=200, content_type="text/javascript", body=MODULES[path].read_bytes())
        elif path.startswith(CJK_SLICES_PATH) and (font := _cjk_font_file(path)) is not None:
            kind = "text/css" if font.suffix == ".css" else "font/woff2"
            await route.fulfill(status=200, content_type=kind, body=font.read_bytes())
        elif (found := _inside(self.workspace, path)) is not None:
            kind = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
            await route.fulfill(status=200, content_type=kind, body=found.read_bytes())
        else:
            await route.fulfill(status=404, body="")

    def _page_error(self, error: Any) -> None:
        self.errors.append(SceneError(str(getattr(error, "message", error)), _stack_line(str(getattr(error, "stack", "")))))

    async def show(self, scene: Scene) -> LoadedScene:
        """Load ``scene`` (its file read now); what it threw while loading."""
        try:
            fragment = scene_path(self.workspace, scene).read_text(encoding="utf-8")
        except CompositionError as exc:
            raise ExportError(str(exc), code="E_CONFLICT", hint="Fix the scene's file entry in video.json") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ExportError(f"{scene.label()}: cannot read {scene.file}: {exc}",
                              hint="Fix the scene's file entry in video.json") from None
        path = SCENE_PATH
        self.documents = {path: scene_document(self.composition, scene, fragment)}
        self.errors = []
        try:
            await asyncio.wait_for(self.page.goto(f"{ORIGIN}{path}?scene={scene.index}", wait_until="load"),
                                   LOAD_TIMEOUT_S)
        except TimeoutError:
            raise ExportError(f"{scene.label()} ({scene.file}) did not load within {LOAD_TIMEOUT_S:g} s",
                              code="E_TIMEOUT", hint="A script in the scene never ends; fix it") from None
        await asyncio.wait_for(self.page.evaluate(LOAD_CJK_FONT, fragment), LOAD_TIMEOUT_S)
        self.current = scene
        return LoadedScene(scene, list(self.errors))

    async def seek(self, seconds: float) -> None:
        """Draw the current scene at ``seconds`` of its own time."""
        scene = self.current
        assert scene is not None, "show a scene first"
        try:
            await asyncio.wait_for(self.page.evaluate("(t) => window.pneuma.seek(t).then(() => true)", seconds),
                                   SEEK_TIMEOUT_S)
        except TimeoutError:
            raise ExportError(f"{scene.label()} ({scene.file}) did not draw the frame at {seconds:.3f} s "
                              f"within {SEEK_TIMEOUT_S:g} s", code="E_TIMEOUT",
                              hint="An onFrame callback never returns; fix it") from None

    async def screenshot(self) -> bytes:
        shot = await self.cdp.send("Page.captureScreenshot", {
            "format": "png", "optimizeForSpeed": True, "captureBeyondViewport": False,
            "fromSurface": True})
        return base64.b64decode(shot["data"])

    async def frame(self, number: int) -> bytes:
        """The PNG of composition frame ``number``, loading its scene when needed."""
        scene, local = self.composition.scene_at_frame(number)
        if self.current is None or self.current.index != scene.index:
            await self.show(scene)
        await self.seek(local)
        return await self.screenshot()


def _stack_line(stack: str) -> int | None:
    """The scene-file line of the first frame of a stack (the document's line)."""
    for line in stack.splitlines()[1:]:
        tail = line.rstrip(")").rsplit(":", 2)
        if len(tail) == 3 and tail[1].isdigit() and ORIGIN in line:
            return int(tail[1])
    return None


@asynccontextmanager
async def frame_page(workspace: Path, composition: Composition) -> AsyncIterator[FramePage]:
    """A Chromium with one page at the composition's size; closed on the way out,
    also when the export is stopped (Ctrl-C, the page closed)."""
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        raise ExportError("drawing video frames needs Playwright, and it is not installed",
                          code="E_UNAVAILABLE", hint="Run scripts/install") from None
    chromium = find_chromium()
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport={"width": composition.width, "height": composition.height},
                                          device_scale_factor=1)
            cdp = await page.context.new_cdp_session(page)
            frames = FramePage(page, cdp, workspace.resolve(), composition)
            page.on("pageerror", frames._page_error)
            await page.route("**/*", frames.route)
            yield frames
        finally:
            await browser.close()


Progress = Callable[[int, int], None]


async def frames_of(workspace: Path, composition: Composition, numbers: Sequence[int],
                    progress: Progress | None = None) -> AsyncIterator[bytes]:
    """The PNG of each frame in ``numbers``, one at a time (never all in memory)."""
    async with frame_page(workspace, composition) as page:
        for done, number in enumerate(numbers, start=1):
            yield await page.frame(number)
            if progress is not None:
                progress(done, len(numbers))


def capture_png(workspace: Path, composition: Composition, seconds: float) -> bytes:
    """The picture of the composition at ``seconds`` (its frame), as the export draws it."""
    from pneuma.api import run_sync

    async def one() -> bytes:
        async with frame_page(workspace, composition) as page:
            return await page.frame(composition.frame_at(seconds))

    return run_sync(one())


def load_errors(workspace: Path, composition: Composition, scenes: Sequence[Scene],
                settle_s: float = 0.0) -> dict[int, list[SceneError]]:
    """What each of ``scenes`` throws when loaded and drawn at its first frame."""
    from pneuma.api import run_sync

    async def all_scenes() -> dict[int, list[SceneError]]:
        found: dict[int, list[SceneError]] = {}
        async with frame_page(workspace, composition) as page:
            for scene in scenes:
                await page.show(scene)
                await page.seek(0)
                if settle_s:
                    await asyncio.sleep(settle_s)
                runtime_errors = await page.page.evaluate("() => window.pneuma ? window.pneuma.errors : []")
                found[scene.index] = _merged(page.errors, runtime_errors)
        return found

    return run_sync(all_scenes())


def _merged(page_errors: list[SceneError], runtime_errors: list[dict[str, Any]]) -> list[SceneError]:
    """The page's errors, and the runtime's (it catches onFrame's) that the page did not see."""
    merged = list(page_errors)
    seen = {e.message for e in merged}
    for error in runtime_errors:
        message = str(error.get("message", ""))
        if not any(message in s or s in message for s in seen):
            line = error.get("line")
            merged.append(SceneError(message, line if isinstance(line, int) else None))
            seen.add(message)
    return merged
