"""The draw mode's ``Exporter`` (``register_exporters``): every drawing
(``*.excalidraw``) of the workspace as an SVG or a PNG, drawn by the real
Excalidraw renderer — the viewer's own bundle (``static/vendor/``, built
by scripts/build-web), its ``exportToSvg`` / ``exportToBlob`` in headless
Chromium.

The bundle is an ES module with lazily loaded chunks and fonts, which a
``file://`` page cannot import, so it is served for the length of the export
by a throwaway HTTP server on 127.0.0.1 that serves only this package's
static folder and the one render page; the drawings go to the page through
Playwright, never through that server.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pneuma.api import (
    CHROMIUM,
    CHROMIUM_ARGS,
    Exporter,
    ExportError,
    ExportFormat,
    ExportRequest,
    ExportResult,
    find_chromium,
)

STATIC = Path(__file__).resolve().parent / "static"
_SKIPPED_DIRS = {"node_modules", "exports"}

_RENDER_PAGE = b"""<!doctype html><html><head><meta charset="utf-8"></head><body>
<script type="module">
window.EXCALIDRAW_ASSET_PATH = new URL('/vendor/', location.href).href;
const lib = await import('/vendor/excalidraw.js');
const appStateOf = (scene) => ({
  exportBackground: true, exportWithDarkMode: false, exportEmbedScene: false,
  viewBackgroundColor: (scene.appState && scene.appState.viewBackgroundColor) || '#ffffff',
});
window.renderDrawing = async (scene, kind) => {
  const elements = lib.restoreElements(scene.elements || [], null).filter((e) => !e.isDeleted);
  if (!elements.length) return { empty: true };
  const options = { elements, files: scene.files || {}, appState: appStateOf(scene), exportPadding: 24 };
  if (kind === 'svg') {
    const svg = await lib.exportToSvg(options);
    return { svg: new XMLSerializer().serializeToString(svg) };
  }
  let size = null;
  const blob = await lib.exportToBlob({ ...options, mimeType: 'image/png',
    // Twice the drawing's size (sharp on a high-density screen), at most 4000 px a side.
    getDimensions: (w, h) => {
      const scale = Math.max(0.25, Math.min(2, 4000 / Math.max(w, h, 1)));
      size = { width: Math.round(w * scale), height: Math.round(h * scale) };
      return { ...size, scale };
    } });
  const data = await new Promise((resolve) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(',', 2)[1]);
    reader.readAsDataURL(blob);
  });
  return { png: data, ...size };
};
window.rendererReady = true;
</script></body></html>"""


class _Handler(SimpleHTTPRequestHandler):
    """The static folder, plus the render page; quiet."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path.split("?", 1)[0] == "/__render.html":
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(_RENDER_PAGE)))
            self.end_headers()
            self.wfile.write(_RENDER_PAGE)
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@contextmanager
def _static_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(STATIC)))
    thread = threading.Thread(target=server.serve_forever, name="pneuma-draw-export", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/__render.html"
    finally:
        server.shutdown()
        server.server_close()


def drawings_of(workspace: Path) -> list[Path]:
    found = []
    for path in sorted(workspace.rglob("*.excalidraw")):
        rel = path.relative_to(workspace)
        if any(part.startswith(".") or part in _SKIPPED_DIRS for part in rel.parts[:-1]):
            continue
        if path.is_file():
            found.append(path)
    return found


def _read_scene(path: Path, workspace: Path) -> dict[str, Any]:
    rel = path.relative_to(workspace).as_posix()
    try:
        scene = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ExportError(f"{rel} is not a valid Excalidraw file: {exc}") from None
    if not isinstance(scene, dict) or not isinstance(scene.get("elements"), list):
        raise ExportError(f'{rel} is not a valid Excalidraw file: it has no "elements" list')
    return scene


def export(request: ExportRequest) -> ExportResult:
    workspace = request.workspace
    drawings = drawings_of(workspace)
    if not drawings:
        raise ExportError(f"{workspace} has no drawings (*.excalidraw) to export")
    if not (STATIC / "vendor" / "excalidraw.js").is_file():
        raise ExportError("the draw viewer's Excalidraw bundle is not built; run scripts/build-web")
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise ExportError("the draw export needs the playwright package (pip install playwright)") from None
    scenes = [(path, _read_scene(path, workspace)) for path in drawings]
    files: list[Path] = []
    warnings: list[str] = []
    with _static_server() as url, sync_playwright() as p:
        try:  # find_chromium: no Chromium is E_UNAVAILABLE, as in every mode
            browser = p.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        except PlaywrightError as exc:
            raise ExportError(f"could not start Chromium ({CHROMIUM}): {str(exc).splitlines()[0]}",
                              code="E_PREVIEW_FAIL") from None
        try:
            page = browser.new_page()
            page.goto(url, wait_until="load")
            page.wait_for_function("window.rendererReady === true", timeout=30_000)
            for path, scene in scenes:
                rel = path.relative_to(workspace)
                result = page.evaluate("([scene, kind]) => window.renderDrawing(scene, kind)",
                                       [scene, request.format])
                if result.get("empty"):
                    warnings.append(f"{rel.as_posix()} is empty; nothing exported for it")
                    continue
                target = request.output / (rel.with_suffix("").as_posix().replace("/", "-")
                                           + f".{request.format}")
                if request.format == "svg":
                    target.write_text(result["svg"], encoding="utf-8")
                else:
                    target.write_bytes(base64.b64decode(result["png"]))
                files.append(target)
        except PlaywrightError as exc:
            raise ExportError(f"Excalidraw could not render the drawing: {str(exc).splitlines()[0]}",
                              code="E_PREVIEW_FAIL") from None
        finally:
            browser.close()
    if not files:
        raise ExportError("every drawing is empty; nothing to export")
    return ExportResult(files, warnings, f"{len(files)} drawing(s)")


EXPORTER = Exporter(
    mode="draw",
    formats=[
        ExportFormat("svg", {"en": "SVG (one per drawing)", "zh-CN": "SVG（每幅绘图一个）"}, ""),
        ExportFormat("png", {"en": "PNG (one per drawing)", "zh-CN": "PNG（每幅绘图一张）"}, ""),
    ],
    export=export,
    default_name=lambda workspace: workspace.name or "drawings",
)
