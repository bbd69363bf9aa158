"""The shared file's page holds everything it runs (pneuma/share/inline.py).

For every built-in mode: the player, the shell modules it imports, the
mode's viewer and everything that imports, each rewritten so that it names
the others by their address; the page fetches nothing (its policy), and
nothing a message says can end the data's element early.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pneuma.share import inline
from pneuma.share.model import ShareData, SharedMessage, SharedTurn, parse_share_html

MODES = ("slide", "doc", "draw", "diagram", "webcraft", "webgal", "coauthor", "illustrate", "video", "print", "dashboard")
# Relative or absolute specifiers of static and dynamic imports.
IMPORTS = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])((?:\.{1,2}/|/)[^"'\n]*)\1""")


@functools.cache
def gathered_for(mode: str) -> dict[str, dict[str, str]]:
    return inline.gather(mode).to_json()


def own_modules(gathered: dict[str, dict[str, str]]) -> dict[str, str]:
    """The modules written in this repository (not vendored bundles)."""
    return {address: entry["text"] for address, entry in gathered.items()
            if entry["type"] == "module" and "/vendor/" not in address}


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_s_page_holds_its_viewer_and_every_module_it_imports(mode: str) -> None:
    gathered = gathered_for(mode)
    viewer = inline.viewer_info(mode)
    assert viewer["module"] in gathered, f"the {mode} viewer is not in its page"
    for needed in ("/share/player.js", "/static/lib/compare.js", "/static/lib/markdown.js",
                   "/static/i18n/en.json", "/static/i18n/zh-CN.json"):
        assert inline.SCHEME + needed in gathered
    modules = own_modules(gathered)
    assert len(modules) > 10
    for address, text in modules.items():
        left = [m.group(2) for m in IMPORTS.finditer(text)]
        assert left == [], f"{address} still imports {left} by a path a blob cannot resolve"
        assert "import.meta.url" not in text, f"{address} still reads import.meta.url"
        for named in re.findall(r'"(pneuma-share:[^"]+)"', text):
            base = named.split("?")[0]
            assert base in gathered or base.endswith("/"), f"{address} names {named}, not in the page"


def test_what_a_viewer_loads_later_is_in_the_page_too() -> None:
    # Loaded by URL at run time, not imported: mermaid's bundle by <script
    # src>, the doc's vendor bundle and the slide's source-edit by import(),
    # Excalidraw by import() from a folder named in a literal.
    for mode, address in (("diagram", "/modes/diagram/vendor/mermaid.iife.js"),
                          ("dashboard", "/modes/dashboard/vendor/vega.iife.js"),
                          ("doc", "/modes/doc/vendor/doc-vendor.js"),
                          ("slide", "/static/lib/source-edit.js"),
                          ("draw", "/modes/draw/vendor/excalidraw.js"),
                          ("slide", "/modes/slide/viewer.css")):
        assert inline.SCHEME + address in gathered_for(mode), f"{address} is not in the {mode} page"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_every_rewritten_module_still_parses(tmp_path: Path) -> None:
    sources = {}
    for mode in MODES:
        sources.update(own_modules(gathered_for(mode)))
    (tmp_path / "modules.json").write_text(json.dumps(sources), encoding="utf-8")
    script = (
        "const vm = require('vm'); const fs = require('fs');"
        "const all = JSON.parse(fs.readFileSync(process.argv[1], 'utf8')); const bad = [];"
        "for (const [k, v] of Object.entries(all)) {"
        "  try { new vm.SourceTextModule(v, { identifier: k }); } catch (e) { bad.push(k + ': ' + e.message); } }"
        "console.log(JSON.stringify({ count: Object.keys(all).length, bad }));")
    done = subprocess.run(["node", "--experimental-vm-modules", "--no-warnings", "-e", script,
                           str(tmp_path / "modules.json")], capture_output=True, text=True, check=True)
    report = json.loads(done.stdout)
    assert report["bad"] == [] and report["count"] > 40


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.metas: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts.append(dict(attrs))
        elif tag == "meta":
            self.metas.append(dict(attrs))


def sample(mode: str = "slide") -> ShareData:
    data = ShareData(mode=mode, title="Deck </script><script>alert(1)</script>", created_at=1)
    one = data.add_content(b"<section><h1>One</h1></section>")
    data.turns = [SharedTurn("1", "first", 10, {"slides/01.html": one})]
    data.conversation = [SharedMessage("user", "</script><script>alert(2)</script> <!-- hi", 5)]
    return data


def test_the_page_fetches_nothing_and_its_data_reads_back() -> None:
    html = inline.page("slide", sample())
    parser = Elements()
    parser.feed(html)
    # The data, the modules, the boot script: a message or a title adds none.
    assert [s.get("type") or s.get("id") for s in parser.scripts] == \
        ["application/json", "application/json", None]
    [policy] = [m["content"] for m in parser.metas if m.get("http-equiv") == "Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["connect-src"] == "'none'"
    # No inline script but the boot script, by the page's nonce.
    nonce = directives["script-src"].split()[0]
    assert re.fullmatch(r"'nonce-[0-9a-f]{32}'", nonce) and "unsafe-inline" not in directives["script-src"]
    assert parser.scripts[-1].get("nonce") == nonce[7:-1]
    assert inline.page("slide", sample()) == html  # the same work, the same file
    assert "http" not in policy and "'self'" not in policy
    back = parse_share_html(html)
    assert back.conversation[0].text.startswith("</script>")
    assert back.files_at(1) == {"slides/01.html": b"<section><h1>One</h1></section>"}
    assert back.viewer["module"] == inline.SCHEME + "/modes/slide/viewer.js"
    assert back.viewer["manifest"]["name"] == "slide"


def test_the_page_leaves_out_the_shell_font_s_import() -> None:
    # The @import of the CJK font's slices would be a fetch the policy refuses.
    assert "@import" not in inline.page_style()
