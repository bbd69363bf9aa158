"""One self-contained HTML page for a shared file (docs/sharing.md, "The page").

A shared file opens from ``file://`` with the network off, so nothing can be
fetched: not the shell's modules, not the mode's viewer, not a catalogue.
This module gathers every file the page runs, starting from the player
(``static/player.js``) and the mode's viewer module and following their
imports, and puts them in the page as text. The page's boot script
(``static/boot.js``) turns each into a ``blob:`` URL and maps it with an
import map, so the modules run as they are served in a session.

Each gathered file is known by its address in the session's server
(``/static/lib/i18n.js``, ``/modes/slide/viewer.js``), written as
``pneuma-share:/static/lib/i18n.js``: a ``blob:`` URL cannot be the base of
a relative import, so every import specifier and every literal naming a
gathered file is rewritten to that absolute address, and
``import.meta.url`` to the module's own, which the import map resolves.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.host.registry import get_mode
from pneuma.share.model import (
    ShareData,
    data_json_for_html,
    fill_template,
    pack_content,
)

SCHEME = "pneuma-share:"
STATIC_DIR = Path(__file__).parent / "static"
WEB_DIR = Path(__file__).resolve().parents[1] / "web"
PLAYER = "/share/player.js"
MODULES_ELEMENT_ID = "pneuma-share-modules"
# Where the template takes the page's parts.
PAGE_STYLE = "/share/page.css"
MODULES_SLOT = f'<script type="application/json" id="{MODULES_ELEMENT_ID}"></script>'
BOOT_SLOT = "/*pneuma-share-boot*/"
CATALOGUES = ("en", "zh-CN")

# No fetch, no outside origin: the page reads only what it holds. Scripts:
# the boot script and what it loads from blobs, by the page's nonce, never
# markup's inline script or handler (as the shell's own policy,
# pneuma/server/csp.py, keeps workspace markup from running as the page).
CSP = ("default-src 'none'; script-src 'nonce-{nonce}' blob:; "
       "style-src 'unsafe-inline' blob: data:; img-src data: blob:; font-src data: blob:; "
       "media-src data: blob:; connect-src 'none'; frame-src blob: data:; worker-src blob:; "
       "form-action 'none'")

# import … from "x", export … from "x", import "x", import("x").
# (Written without \b: a leading literal keeps the scan of a megabyte bundle
# fast; a match inside a longer word is skipped where it is found.)
_IMPORT = re.compile(r"""(?:from|import)\s*\(?\s*(["'])([^"'\n]+?)\1""")
_WORD = re.compile(r"[\w$.]")
# A literal that may name a file of the page: "./viewer.css", "../x.js",
# "/static/lib/source-edit.js", "excalidraw.js".
_LITERAL = re.compile(r"""(["'])((?:\.{1,2}/|/static/|/modes/|/share/)?[\w@.\-/]+\.(?:m?js|css))\1""")
# A folder named in a literal ("./vendor/"): bare file names resolve there too.
_FOLDER_LITERAL = re.compile(r"""(["'])(\.{1,2}/[\w.\-/]*/)\1""")
_IMPORT_META = re.compile(r"\bimport\.meta\.url\b")
_KINDS = {".js": "module", ".mjs": "module", ".css": "style", ".json": "json"}


@dataclass
class Gathered:
    """The page's files by address: ``{"/static/lib/i18n.js": {"type", "text"}}``."""

    entries: dict[str, dict[str, str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, dict[str, str]]:
        return {SCHEME + address: entry for address, entry in self.entries.items()}

    def packed(self) -> dict[str, dict[str, str]]:
        """As the page holds them: each text zlib-compressed, in base64
        (boot.js inflates them with the browser's DecompressionStream)."""
        return {SCHEME + address: {"type": entry["type"], "z": pack_content(entry["text"].encode("utf-8"))}
                for address, entry in self.entries.items()}


class PageFiles:
    """Finds the file behind an address and gathers what it imports."""

    def __init__(self, mode_name: str, mode_static: Path) -> None:
        self.roots: dict[str, Path] = {
            "/static/": WEB_DIR, f"/modes/{mode_name}/": mode_static, "/share/": STATIC_DIR}
        self.gathered = Gathered()

    def path_of(self, address: str) -> Path | None:
        for prefix, root in self.roots.items():
            if address.startswith(prefix):
                candidate = (root / address[len(prefix):]).resolve()
                if candidate.is_relative_to(root.resolve()) and candidate.is_file():
                    return candidate
        return None

    def resolve(self, specifier: str, importer: str, folders: list[str]) -> str | None:
        """The address ``specifier`` names from the module at ``importer``,
        if it is a file of the page."""
        if specifier.startswith(SCHEME):
            return None
        here = posixpath.dirname(importer)
        if specifier.startswith("/"):
            candidates = [posixpath.normpath(specifier)]
        elif specifier.startswith("."):
            candidates = [posixpath.normpath(posixpath.join(here, specifier))]
        else:
            candidates = [posixpath.normpath(posixpath.join(here, folder, specifier))
                          for folder in folders]
        for address in candidates:
            if self.path_of(address) is not None:
                return address
        return None

    def gather(self, address: str) -> None:
        pending = [address]
        while pending:
            current = pending.pop()
            if current in self.gathered.entries:
                continue
            path = self.path_of(current)
            if path is None:
                raise ToolError("E_NOT_FOUND", f"the share page needs {current}, which is missing",
                                details={"address": current},
                                hint="run scripts/build-web to fetch the shell's libraries")
            text = path.read_text(encoding="utf-8")
            # A classic bundle (mermaid's) is mapped as a module too: the
            # blob is the same, only <script src> or import() differs.
            kind = _KINDS.get(path.suffix, "text")
            if kind == "module":
                text, found = self.rewrite(text, current)
                pending.extend(found)
            self.gathered.entries[current] = {"type": kind, "text": text}

    def rewrite(self, text: str, address: str) -> tuple[str, list[str]]:
        """``text`` with every specifier and literal naming a page file made
        absolute, and the addresses it names."""
        found: list[str] = []
        folders = ["."] + [m.group(2) for m in _FOLDER_LITERAL.finditer(text)]

        def absolute(match: re.Match[str]) -> str:
            quote, specifier = match.group(1), match.group(2)
            if match.start() and _WORD.match(text, match.start() - 1):
                return match.group(0)
            target = self.resolve(specifier, address, folders)
            if target is None:
                return match.group(0)
            found.append(target)
            return match.group(0).replace(f"{quote}{specifier}{quote}",
                                          json.dumps(SCHEME + target), 1)

        text = _IMPORT.sub(absolute, text)
        if "/vendor/" not in address:
            # A vendored bundle names its own files by import only; scanning
            # its megabytes for literals would cost seconds.
            text = _LITERAL.sub(absolute, text)
        if "import.meta.url" in text:
            text = _IMPORT_META.sub(json.dumps(SCHEME + address), text)
        return text, found


def gather(mode_name: str) -> Gathered:
    """Every file the page for ``mode_name`` runs: the player, the shell
    modules it imports, the mode's viewer and what it imports, and the
    shell's catalogues."""
    mode = get_mode(mode_name)
    files = PageFiles(mode.name, mode.static_dir)
    files.gather(PLAYER)
    module = mode.manifest.viewer.module
    if module:
        files.gather(f"/modes/{mode.name}/{module}")
    for locale in CATALOGUES:
        files.gather(f"/static/i18n/{locale}.json")
    return files.gathered


def viewer_info(mode_name: str) -> dict[str, Any]:
    """What the player needs to mount the mode's viewer: its manifest (as
    GET /api/config gives it) and its module's address."""
    mode = get_mode(mode_name)
    module = mode.manifest.viewer.module
    return {"manifest": mode.manifest.to_json(),
            "module": f"{SCHEME}/modes/{mode.name}/{module}" if module else None}


def _script_safe(text: str) -> str:
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def page_style() -> str:
    """The shell's stylesheet (its colours, fonts, the chat's Markdown),
    Compare's and the player's, as one text. Their @imports (the CJK web
    font's slices) are left out: the page fetches nothing."""
    parts = [WEB_DIR / "styles.css", WEB_DIR / "lib" / "compare.css", STATIC_DIR / "player.css"]
    text = "\n".join(path.read_text(encoding="utf-8") for path in parts)
    return re.sub(r"^@import[^;]*;\s*$", "", text, flags=re.M)


def page(mode: str, data: ShareData) -> str:
    """The shared file: the player's template with every module, the
    stylesheet, the boot script and ``data`` put in."""
    template = (STATIC_DIR / "template.html").read_text(encoding="utf-8")
    boot = (STATIC_DIR / "boot.js").read_text(encoding="utf-8")
    if "</script" in boot.lower():
        raise ToolError("E_INTERNAL", "the share page's boot script ends its element early")
    if not data.viewer:
        data.viewer = viewer_info(mode)
    gathered = gather(mode)
    # The stylesheet travels compressed with the modules; boot.js links it.
    gathered.entries[PAGE_STYLE] = {"type": "style", "text": page_style()}
    modules = json.dumps(gathered.packed(), separators=(",", ":"))
    filled_modules = MODULES_SLOT.replace("></script>", ">" + _script_safe(modules) + "</script>")
    # Derived from everything the page holds: the same work gives the same
    # file, and no content can know the nonce of the page it ends up in.
    nonce = hashlib.sha256((modules + data_json_for_html(data)).encode("utf-8")).hexdigest()[:32]
    text = (template.replace("{{csp}}", CSP.format(nonce=nonce))
            .replace("{{nonce}}", nonce)
            .replace(BOOT_SLOT, boot)
            .replace(MODULES_SLOT, filled_modules))
    return fill_template(text, data)
