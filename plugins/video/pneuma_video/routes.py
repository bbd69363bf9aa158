"""The player's stage: the document each scene's frame loads.

A scene is the workspace's markup and runs its own script (its
``pneuma.onFrame`` callbacks), so the player frames it "live, at arm's
length" (docs/viewer-contract.md, "Workspace content and the page's security
policy"): the frame is sandboxed with ``allow-scripts`` alone, an opaque
origin that can neither reach the API nor read the shell. A ``srcdoc``
frame would inherit the shell's ``script-src 'self'`` and run none of the
scene's inline scripts, so the frame loads this route instead: a fixed
document holding the timeline runtime (``static/runtime.js``, the same one
the export renders with) and the stage loader (``static/stage.js``), under
a policy of its own that sandboxes it and lets inline scripts run. The
viewer then posts the scene's fragment into it, from its own files (the live
workspace, or a checkpoint's files in Compare and the timeline).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp import web

from pneuma.api import ExportError, Pneuma, ToolError, error_response
from pneuma_video.composition import CompositionError, read_composition

STATIC = Path(__file__).parent / "static"
STAGE_PATH = "/api/video/stage"
# The picture of one frame, as the export draws it (frames.py), written nowhere:
# a review pin's picture (the page cannot draw the sandboxed scene frame itself).
FRAME_PATH = "/api/video/frame"
_OPEN = "http: https: data: blob:"
# No allow-same-origin: an opaque origin. Inline scripts are the scene's
# own; nothing it loads can be fetched (connect-src 'none').
STAGE_POLICY = "; ".join((
    "sandbox allow-scripts",
    "default-src 'none'",
    "script-src 'unsafe-inline'",
    f"style-src 'unsafe-inline' {_OPEN}",
    f"img-src {_OPEN}",
    f"font-src {_OPEN}",
    f"media-src {_OPEN}",
    "connect-src 'none'",
    "frame-ancestors 'self'",
))


def _inline_script(path: Path) -> str:
    # "</script" inside the file would end the element early.
    return "<script>" + path.read_text("utf-8").replace("</script", "<\\/script") + "</script>"


def stage_document() -> str:
    """The stage's HTML: the runtime first (it pauses animations before any
    scene runs), then the loader; the body is filled by the viewer."""
    style = ("<style>html,body{margin:0;padding:0;overflow:hidden}"
             "body{position:relative;width:1280px;height:720px;background:#000}</style>")
    return ('<!doctype html><html><head><meta charset="utf-8"><base href="/content/">'
            f"{style}{_inline_script(STATIC / 'runtime.js')}{_inline_script(STATIC / 'stage.js')}"
            "</head><body></body></html>")


async def stage(request: web.Request) -> web.Response:
    response = web.Response(text=stage_document(), content_type="text/html", charset="utf-8")
    response.headers["Content-Security-Policy"] = STAGE_POLICY
    response.headers["Cache-Control"] = "no-store"
    return response


def frame_handler(workspace: Path) -> Any:
    async def frame(request: web.Request) -> web.Response:
        from pneuma_video.export import seconds_param
        from pneuma_video.frames import frame_page

        try:
            seconds = seconds_param(dict(request.query))
            composition = read_composition(workspace)
            async with frame_page(workspace, composition) as page:
                png = await page.frame(composition.frame_at(seconds))
        except CompositionError as exc:
            return error_response(ToolError("E_CONFLICT", str(exc), hint="Fix video.json"))
        except ExportError as exc:
            return error_response(ToolError(exc.code, str(exc), hint=exc.hint))
        return web.Response(body=png, content_type="image/png", headers={"Cache-Control": "no-store"})

    return frame


def video_routes(pneuma: Pneuma) -> list[web.RouteDef]:
    """The ``register_routes`` answer of a video session."""
    return [web.get(STAGE_PATH, stage), web.get(FRAME_PATH, frame_handler(Path(pneuma.workspace)))]
