"""The shell's CJK web font, one promise for viewers and exports.

Chinese must draw as glyphs on a machine without CJK fonts
(docs/viewer-contract.md, "Language"). The shell ships Noto Sans SC as
unicode-range slices (scripts/build-web copies them from npm
``@fontsource/noto-sans-sc``). A viewer links ``CJK_FONT_URL`` (or imports
``/static/lib/cjk-font.js``, which says the same); an export, which runs
without the server, reads the stylesheet and its slices from
``cjk_font_dir()``.
"""

from __future__ import annotations

from pathlib import Path

from pneuma.host.paths import web_dir

CJK_FONT_FAMILY = "Pneuma Noto Sans SC"
# The URL path the server serves the stylesheet at; its url()s are relative to it.
CJK_FONT_URL = "/static/vendor/cjk-font/noto-sans-sc.css"


def cjk_font_dir() -> Path:
    """The folder of the stylesheet (``noto-sans-sc.css``) and its woff2
    slices; empty or absent when scripts/build-web has not run."""
    return web_dir() / "vendor" / "cjk-font"
