"""Where the preview's pages come from: the workspace on a content origin of
its own (``pneuma.api.ContentSite``), with the viewer's bridge added to
every HTML document.

The viewer frames ``http://127.0.0.1:<content port>/<page>`` directly, so
a page loads as it would from the published site: its stylesheets, scripts,
ES module imports, ``fetch``es and srcset candidates are plain requests to
that site. The site is another origin than Pneuma's: what the page runs can
neither call the API nor read the shell (docs/security.md). The bridge
(``static/bridge.js``, served as ``/__pneuma__/bridge.js``) talks to the
viewer by ``postMessage`` only; axe-core is served beside it for the
accessibility check.

``GET /api/webcraft/site?hostname=…`` (behind the server's token, Host and
Origin checks) tells the viewer the site's origin and its token.
"""

from __future__ import annotations

import asyncio
import base64
import tempfile
from pathlib import Path
from typing import Any

from aiohttp import web

from pneuma.api import ContentSite, Pneuma, Sandbox, ToolError, shell_static_dir

from .render import Crop, crop_elements
from .site import copy_site, viewport_size

STATIC = Path(__file__).parent / "static"
BRIDGE_TAG = '<script src="/__pneuma__/bridge.js"></script>'
# axe-core is the shell's pinned copy (pneuma/web/package.json), one for every check that runs it.
ASSETS = {"bridge.js": STATIC / "bridge.js", "axe.min.js": shell_static_dir() / "vendor" / "axe.min.js"}


def webcraft_routes(pneuma: Pneuma) -> list[web.RouteDef]:
    """The routes of a webcraft session (the ``register_routes`` hook's answer);
    the content site lives as long as the server."""
    site = ContentSite.for_session(pneuma, name="webcraft", inject_head=BRIDGE_TAG, assets=ASSETS)

    async def site_info(request: web.Request) -> web.Response:
        if not site.running:
            raise ToolError("E_UNAVAILABLE", "the webcraft preview's site is not running",
                            hint="restart pneuma run; the server log says why it did not start")
        # Named as the shell was opened (localhost or 127.0.0.1), so that
        # the frame is same-site with it and keeps its cookie.
        hostname = request.query.get("hostname")
        return web.json_response({"origin": site.origin(hostname), "token": site.token})

    async def crops(request: web.Request) -> web.Response:
        wanted = _crops_asked(await _json_body(request), Sandbox(pneuma.workspace))
        with tempfile.TemporaryDirectory(prefix="pneuma-webcraft-crops-") as tmp:
            root = Path(tmp)
            pages = set(await asyncio.to_thread(copy_site, pneuma.workspace, root))
            try:
                shots = await crop_elements(root, [crop for crop in wanted if crop.page in pages])
            except ImportError as error:
                raise ToolError("E_UNAVAILABLE", f"crops need the playwright package ({error})",
                                hint="pip install playwright; Chromium is /usr/bin/chromium") from error
        images = {crop.key: _data_url(shots.get(crop.key)) for crop in wanted}
        return web.json_response({"images": images})

    return [web.get("/api/webcraft/site", site_info), web.post("/api/webcraft/crops", crops)]


MAX_CROPS = 20  # a review carries at most 20 images (docs/viewer-contract.md, "Annotate")


async def _json_body(request: web.Request) -> Any:
    try:
        return await request.json()
    except ValueError:
        raise ToolError("E_BAD_ARGS", "the body is not JSON", hint='send {"crops": [{key, page, selector, viewport}]}') from None


def _crops_asked(body: Any, sandbox: Sandbox) -> list[Crop]:
    """The crops a viewer asks for, checked: a page inside the workspace, a
    selector, a known width; at most MAX_CROPS."""
    items = body.get("crops") if isinstance(body, dict) else None
    if not isinstance(items, list) or len(items) > MAX_CROPS:
        raise ToolError("E_BAD_ARGS", f"crops must be a list of at most {MAX_CROPS}",
                        hint='send {"crops": [{key, page, selector, viewport}]}')
    wanted: list[Crop] = []
    for item in items:
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("key", "page", "selector")):
            raise ToolError("E_BAD_ARGS", "each crop needs a key, a page and a selector (strings)")
        viewport = str(item.get("viewport") or "desktop")
        viewport_size(viewport)
        wanted.append(Crop(item["key"][:100], sandbox.normalize(item["page"]), item["selector"][:2000], viewport))
    return wanted


def _data_url(png: bytes | None) -> str | None:
    return None if png is None else "data:image/png;base64," + base64.b64encode(png).decode("ascii")
