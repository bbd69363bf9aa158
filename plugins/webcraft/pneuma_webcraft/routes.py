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

from pathlib import Path

from aiohttp import web

from pneuma.api import ContentSite, Pneuma, ToolError

STATIC = Path(__file__).parent / "static"
BRIDGE_TAG = '<script src="/__pneuma__/bridge.js"></script>'
ASSETS = {"bridge.js": STATIC / "bridge.js", "axe.min.js": STATIC / "vendor" / "axe.min.js"}


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

    return [web.get("/api/webcraft/site", site_info)]
