"""The WebGAL engine's own origin: WebGAL's use of ``pneuma.api.ContentSite``.

The engine runs the game's scenes and assets, which are workspace content,
and evaluates script expressions with ``new Function``: whatever a game
makes it do must not reach the API. So the engine page and the game's files
are not served by the Pneuma server's own origin but by the content site
every mode with such pages uses (``pneuma/server/content_site.py``: its
docstring lists what keeps it apart from the server), on another port of the
same host (``http://127.0.0.1:<engine port>``). What WebGAL asks of it:

* the workspace's ``game/`` folder only, at ``/webgal/game/``, each file
  with the ``sandbox`` policy the server gives ``/content/`` (opened as a
  document, a game file runs in an opaque origin); the engine page, its
  launcher and files and the editor-sync socket are routes of routes.py;
* its cookie is named ``pneuma_webgal_<port>``, and the ``?token=`` URL is
  answered with the page itself (the launcher removes the token from the
  address), so the URL ``preview_scene`` hands out opens in any client;
* the port is remembered in ``.pneuma/webgal-engine.json``: the engine keeps
  its saves and settings in the browser's storage of its origin;
* while a game is open (its socket to this site), the headless preview
  server that serves it is kept up (preview.py stops it when unused).

The shell's viewer talks to the engine through ``window.postMessage`` only
(``static/bridge.js`` on the Pneuma server's ``/webgal/`` page,
``static/launcher.js`` in the engine page).
"""

from __future__ import annotations

import os
from typing import Any

from pneuma.api import ContentSite, Pneuma

from .sync import preview_url

COOKIE_PREFIX = "pneuma_webgal"
IDLE_ENV = "PNEUMA_WEBGAL_PREVIEW_IDLE"  # the headless preview server's idle time (preview.py)
# In the workspace's .pneuma/: the engine site's port of the last run.
ENGINE_PORT_FILE = "webgal-engine.json"
# What a game file may do if opened as a document: the server's /content/ policy.
GAME_FILE_SANDBOX = "allow-scripts allow-popups allow-modals allow-downloads"


def keepalive_seconds() -> float:
    """How often an open game touches the server: well within the idle time
    after which a headless preview server stops (the same setting)."""
    try:
        idle = float(os.environ.get(IDLE_ENV, "600"))
    except ValueError:
        idle = 600.0
    return min(30.0, max(0.25, idle / 3))


def engine_site(pneuma: Pneuma) -> ContentSite:
    """The engine's site of one server: started with it, stopped with it."""
    return ContentSite.for_session(
        pneuma, name="webgal", port_file=ENGINE_PORT_FILE,
        workspace_at=("/webgal/game/", "game"), document_sandbox=GAME_FILE_SANDBOX,
        cookie_prefix=COOKIE_PREFIX, redirect_token=False, keep_server_alive=keepalive_seconds)


def page_url(site: ContentSite, scene: str | None = None, line: int | None = None, *,
             hostname: str | None = None, snapshot: str | None = None) -> str:
    """The engine page, with the site's own token (so the URL opens in any
    browser) and the scene and line to jump to in the fragment;
    ``snapshot`` (``{ref}/{side}``): the engine over that checkpoint's game."""
    url = preview_url(site.origin(hostname), scene, line, token=site.token)
    return url.replace("/webgal/", f"/webgal/snapshot/{snapshot}/", 1) if snapshot else url


def engine_headers(site: ContentSite, extra: dict[str, Any] | None = None) -> dict[str, str]:
    """Headers of the engine page and its own files: only the Pneuma
    server's pages may frame it, and it may connect only to its own site."""
    # 'self' covers the page's own name, these the others of 127.0.0.1
    # (Chromium ignores IPv6 literals in source lists).
    ws = {f"ws://{h}" for h in site.hosts() if not h.startswith("[")}
    policy = "; ".join((
        site.frame_ancestors(),
        "connect-src 'self' " + " ".join(sorted(ws)) + " blob: data:",
        "form-action 'none'",
        "base-uri 'self'",
    ))
    return {"Content-Security-Policy": policy, "X-Content-Type-Options": "nosniff",
            **{k: str(v) for k, v in (extra or {}).items()}}
