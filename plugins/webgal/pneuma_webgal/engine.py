"""The WebGAL engine the preview serves: where its files are, and its page.

The engine is npm ``webgal-engine`` (4.5.18); ``scripts/build-web`` copies its
``dist/`` to ``static/engine/`` (``PNEUMA_WEBGAL_ENGINE_DIR`` points elsewhere).
Its ``index.html`` is served with one ``<script>`` added, ``static/launcher.js``,
on the engine's own site (engine_site.py).
"""

from __future__ import annotations

import json
import os
from html import escape as html_escape
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
LAUNCHER = PACKAGE_DIR / "static" / "launcher.js"
BRIDGE = PACKAGE_DIR / "static" / "bridge.js"

NOT_BUILT_PAGE = """<!doctype html><meta charset="utf-8"><title>WebGAL engine missing</title>
<body style="font:15px system-ui;background:#111;color:#ddd;display:grid;place-items:center;height:100vh;margin:0">
<div style="max-width:34em"><h2>The WebGAL engine is not set up</h2>
<p>The preview serves the real engine (npm <code>webgal-engine</code> 4.5.18), fetched at
setup. Run <code>scripts/build-web</code> in the Pneuma checkout (or <code>npm ci &amp;&amp;
npm run build</code> in <code>plugins/webgal/web/</code>), then reload this page.</p></div>"""
"""What ``/webgal/`` shows (status 503) without the engine: it is a page in
the viewer's frame, so it is written for the person, not as a JSON error."""


def engine_candidates() -> list[Path]:
    """Where the engine's ``dist/`` is looked for, first match wins."""
    configured = os.environ.get("PNEUMA_WEBGAL_ENGINE_DIR")
    return ([Path(configured)] if configured else []) + [PACKAGE_DIR / "static" / "engine"]


def engine_dir() -> Path | None:
    """The folder holding the engine's ``index.html`` and ``assets/``, if set up."""
    for candidate in engine_candidates():
        if (candidate / "index.html").is_file() and (candidate / "assets").is_dir():
            return candidate
    return None


def engine_version(engine: Path | None) -> str | None:
    if engine is None:
        return None
    try:
        return json.loads((engine / "VERSIONS.json").read_text())["versions"]["webgal-engine"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def inject_launcher(html: str, language: str = "", parent_origins: str = "") -> str:
    """The engine's index.html with ``static/launcher.js`` added; a classic
    script in ``<head>`` runs before the engine's module script.
    ``parent_origins`` (space-separated) are the pages it talks to with
    ``postMessage``: the Pneuma server's, never ``*``."""
    tag = (f'<script src="./_pneuma/launcher.js" data-ui-language="'
           f'{html_escape(language, quote=True)}" data-parent-origins="'
           f'{html_escape(parent_origins, quote=True)}"></script>')
    if "</head>" in html:
        return html.replace("</head>", f"    {tag}\n  </head>", 1)
    return tag + html
