"""Workspace files a page refers to (images, fonts, stylesheets' ``url()``)
as data: URLs, so the standalone HTML is one file that prints the same
anywhere.

A URL in a page is looked for beside the page's file first, then from the
workspace's root (the viewer serves both ways: docs/print.md); ``/x`` and
``/content/x`` are from the root. Only files inside the workspace are read
through the host's sandbox (no ``..`` or link out, never ``.env``,
``.git`` or ``.pneuma``); web addresses and ``data:`` stay as written.
"""

from __future__ import annotations

import base64
import html
import mimetypes
import posixpath
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from pneuma.api import Sandbox, ToolError

_CSS_URL = re.compile(r"""url\(\s*(['"]?)([^'")]+?)\1\s*\)""")
_TAG = re.compile(r"<(?:img|source|video|audio|image|use|input|track|embed|object)\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r"""(\s(?:src|poster|href|xlink:href|data)\s*=\s*)(?:"([^"]*)"|'([^']*)')""",
                   re.IGNORECASE)
_SRCSET = re.compile(r"""\ssrcset\s*=\s*(?:"[^"]*"|'[^']*')""", re.IGNORECASE)
_STYLE_ATTR = re.compile(r"""(\sstyle\s*=\s*)(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
_STYLE_BLOCK = re.compile(r"(<style\b[^>]*>)(.*?)(</style\s*>)", re.IGNORECASE | re.DOTALL)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_TYPES = {".svg": "image/svg+xml", ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf",
          ".otf": "font/otf", ".webp": "image/webp", ".avif": "image/avif", ".css": "text/css"}
MAX_ASSET_BYTES = 50 * 1024 * 1024


class Inliner:
    """Turns a workspace's relative URLs into data: URLs; remembers the
    ones that name no file (``missing``)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace.resolve()
        self.sandbox = Sandbox(self.workspace)
        self.missing: set[str] = set()
        self._cache: dict[str, str | None] = {}

    def data_url(self, url: str, base_dir: str) -> str | None:
        raw = html.unescape(url).strip()
        if not raw or raw.startswith(("#", "//")) or _SCHEME.match(raw):
            return None
        raw = raw.split("#", 1)[0].split("?", 1)[0]
        candidates = _candidates(raw, base_dir)
        for rel in candidates:
            if rel in self._cache:
                if self._cache[rel] is not None:
                    return self._cache[rel]
                continue
            self._cache[rel] = found = self._read(rel)
            if found is not None:
                return found
        if candidates:
            self.missing.add(candidates[0])
        return None

    def _read(self, rel: str) -> str | None:
        data = self.read_bytes(rel, MAX_ASSET_BYTES)
        if data is None:
            return None
        suffix = PurePosixPath(rel).suffix.lower()
        mime = _TYPES.get(suffix) or mimetypes.guess_type(rel)[0] or "application/octet-stream"
        return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"

    def read_bytes(self, rel: str, limit: int) -> bytes | None:
        """The file ``rel`` through the workspace's sandbox (no link out, no
        ``.env``, ``.git`` or ``.pneuma``), or None when it cannot be read
        or is larger than ``limit``."""
        try:
            data, _ = self.sandbox.read_bytes(rel, limit)
        except (ToolError, OSError):
            return None
        return data if len(data) <= limit else None

    def css(self, text: str, base_dir: str = "") -> str:
        def replace(match: re.Match[str]) -> str:
            data = self.data_url(match.group(2), base_dir)
            return f'url("{data}")' if data else match.group(0)

        return _CSS_URL.sub(replace, text)

    def markup(self, text: str, base_dir: str, css_filter: Callable[[str], str] = str) -> str:
        """A page's HTML with its media and ``style`` attributes' URLs
        inlined; ``css_filter`` rewrites each <style> block and ``style``
        attribute too."""
        def attribute(match: re.Match[str]) -> str:
            value = match.group(2) if match.group(2) is not None else match.group(3)
            data = self.data_url(value, base_dir)
            return f'{match.group(1)}"{data}"' if data else match.group(0)

        def tag(match: re.Match[str]) -> str:
            # srcset names other resolutions to fetch; the inlined src is enough
            return _SRCSET.sub("", _ATTR.sub(attribute, match.group(0)))

        def style(match: re.Match[str]) -> str:
            value = match.group(2) if match.group(2) is not None else match.group(3)
            inlined = css_filter(self.css(html.unescape(value), base_dir))
            return f'{match.group(1)}"{html.escape(inlined, quote=True)}"'

        def block(match: re.Match[str]) -> str:
            return match.group(1) + css_filter(self.css(match.group(2), base_dir)) + match.group(3)

        return _STYLE_BLOCK.sub(block, _STYLE_ATTR.sub(style, _TAG.sub(tag, text)))


def _candidates(raw: str, base_dir: str) -> list[str]:
    if raw.startswith("/content/"):
        bases, raw = [""], raw[len("/content/"):]
    elif raw.startswith("/"):
        bases, raw = [""], raw.lstrip("/")
    else:
        bases = [base_dir, ""] if base_dir else [""]
    found = []
    for base in bases:
        joined = posixpath.normpath(posixpath.join(base, raw))
        if joined not in (".", "") and not joined.startswith("..") and joined not in found:
            found.append(joined)
    return found
