"""Content-Security-Policy headers: who may run script on this origin.

Two kinds of documents come from one Pneuma server, and they must not be
equals:

* **The shell** (``/``, ``/static/…``, ``/modes/…``, ``/api/…``): Pneuma's
  own code. Its policy lets only script files served by this server run —
  no inline ``<script>``, no ``onerror=`` attributes, no ``eval`` — so
  workspace text that ends up in the shell's DOM (a Markdown preview, a
  slide fragment painted into a same-origin ``srcdoc`` frame, which
  inherits this policy) cannot run. ``frame-ancestors 'none'`` keeps other
  pages from framing it. Images, styles, fonts and media stay open to the
  web: decks link web fonts and pictures, and none of these can call the
  API.
* **Workspace content** (``/content/…``): whatever the agent wrote,
  fetched or the user dropped in. It is served with ``sandbox`` *without* ``allow-same-origin``:
  opened as a document it runs in an opaque origin, so the browser sends
  ``Origin: null`` with anything it tries against ``/api``, ``/ws`` or
  ``/content`` that could change state, and the security middleware refuses
  that (only this server's own origin is accepted); it cannot read the
  shell's cookie-authenticated responses either (they are cross-origin for
  it). Scripts may still run there, so an HTML page or an animated SVG
  still works when opened on its own.

The WebGAL engine, which needs ``eval`` (PIXI's shader compiler) and runs
the game's scenes, is not served here at all: it runs on a site of its own,
another origin (``plugins/webgal/pneuma_webgal/engine_site.py``), with the
same sandbox policy on the game's files; this server's ``/webgal/`` page,
Pneuma's own script, frames it and sets its own policy.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Annotations only: the early server (early_server.py) uses this module
    # before aiohttp is imported.
    from aiohttp import web

CONTENT_PREFIXES = ("/content/",)

# No allow-same-origin: the document gets an opaque origin. No allow-forms:
# a form post would be a navigation the Origin check cannot see as a fetch.
CONTENT_POLICY = "sandbox allow-scripts allow-popups allow-modals allow-downloads"

_OPEN_SOURCES = "'self' data: blob: https: http:"
_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$")


def shell_policy(host: str) -> str:
    """The shell's policy; ``host`` (already checked by the security
    middleware) names the socket endpoint explicitly for older browsers
    whose ``'self'`` does not cover ``ws:``."""
    connect = "'self'"
    frames = "'self' blob: data:"
    if _HOST.match(host):
        connect += f" ws://{host}"
        # Content sites (pneuma.server.content_site) are this host on
        # another port, started after this page may have been answered (the
        # early server), so their ports cannot be listed. A frame runs in
        # its own origin, so this lets the shell show them, not reach them.
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if not name.startswith("["):  # Chromium ignores IPv6 literals in source lists
            frames += f" http://{name}:*"
    return "; ".join((
        "default-src 'self'",
        "script-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        f"connect-src {connect}",
        f"frame-src {frames}",
        "worker-src 'self' blob:",
        # Inline styles: the viewers set style attributes and slide themes
        # are <style> elements; styles cannot call the API.
        f"style-src 'unsafe-inline' {_OPEN_SOURCES}",
        f"img-src {_OPEN_SOURCES}",
        f"font-src {_OPEN_SOURCES}",
        f"media-src {_OPEN_SOURCES}",
    ))


def policy_for(path: str, host: str) -> str:
    if path.startswith(CONTENT_PREFIXES):
        return CONTENT_POLICY
    return shell_policy(host)


async def add_policy_headers(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare`` hook: every answer, errors and files included,
    carries the policy of the kind of document it is, unless its handler
    set one."""
    resource = request.match_info.route.resource
    # The matched route, not the raw path, says which handler answered.
    path = resource.canonical if resource is not None else request.path
    # A handler that chose a policy for its own answer (the native agent's
    # artifacts: a bare ``sandbox``) keeps it.
    response.headers.setdefault("Content-Security-Policy", policy_for(path, request.host))
    # A text file must not be sniffed into HTML; the policy then still fits.
    response.headers.setdefault("X-Content-Type-Options", "nosniff")


def setup(app: web.Application) -> None:
    app.on_response_prepare.append(add_policy_headers)
