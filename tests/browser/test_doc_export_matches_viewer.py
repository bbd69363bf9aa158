"""The doc export is what the doc viewer shows (issue 25, item 12).

One workspace (tests/modes/doc_export_sample.py), served by `pneuma run`:
the viewer renders each document in the shell; the Export menu downloads
the HTML export, which is then opened in Chromium with the network off, as
a person opens a file they were sent. The export's articles and the
viewer's page are the same HTML once what must differ is set aside (ids and
in-page addresses, image sources), its links lead where they say, and the
code has the viewer's colours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.export_menu import download_export, open_export_menu
from tests.modes.doc_export_sample import EXTERNAL_ADDRESS, write_sample

VENDOR = Path(__file__).resolve().parents[2] / "plugins/doc/pneuma_doc/static/vendor/doc-vendor.js"
pytestmark = pytest.mark.skipif(not VENDOR.exists(), reason="the doc viewer's bundle is not built")

DOCUMENTS = ["README.md", "guide/other.md"]

# The top-level blocks of rendered Markdown, without what only one of the two
# may differ in: ids and in-page addresses (one page of several documents
# against one document in the shell), image sources (data: URLs against the
# workspace's content route), the heading links' label (the shell's
# language) and the export's file-name line.
NORMALISED = """html => {
  const t = document.createElement("template");
  t.innerHTML = html;
  t.content.querySelectorAll("p.doc-file").forEach((n) => n.remove());
  for (const el of t.content.querySelectorAll("*")) {
    el.removeAttribute("id");
    el.removeAttribute("loading");
    if (el.matches("a[data-path], a.pd-anchor")) el.removeAttribute("href");
    if (el.matches("a.pd-anchor")) el.removeAttribute("aria-label");
    if (el.matches("img[data-path]")) el.removeAttribute("src");
  }
  return [...t.content.children].map((e) => e.outerHTML);
}"""

KEYWORD_COLOUR = "getComputedStyle(document.querySelector('pre code .hljs-keyword')).color"


def _viewer_blocks(page: Any, path: str) -> list[str]:
    page.click(f'.pd-tab[data-path="{path}"]')
    page.wait_for_selector(f'.pd-tab[data-path="{path}"][aria-selected=true]')
    return page.evaluate(NORMALISED, page.inner_html(".pd-doc"))


def test_the_html_export_is_the_viewers_rendering_and_works_offline(
        pneuma_server: Any, open_page: Any, browser: Any, tmp_path: Path, shot: Any) -> None:
    workspace = write_sample(tmp_path / "handbook")
    server = pneuma_server("doc", backend="none", workspace=workspace)
    page = open_page(server)
    page.wait_for_selector(".pd-doc h1")
    viewer = {path: _viewer_blocks(page, path) for path in DOCUMENTS}
    _viewer_blocks(page, "README.md")
    viewer_keyword = page.evaluate(KEYWORD_COLOUR)
    open_export_menu(page)
    exported = tmp_path / "sent" / "handbook.html"  # as saved, with its suffix
    exported.parent.mkdir()
    download_export(page, "html", timeout=60_000).save_as(exported)

    context = browser.new_context(offline=True, viewport={"width": 900, "height": 360})
    try:
        export = context.new_page()
        fetched: list[str] = []
        export.on("request", lambda request: fetched.append(request.url))
        export.goto(exported.as_uri())
        for path in DOCUMENTS:
            article = export.inner_html(f'article[data-file="{path}"]')
            assert export.evaluate(NORMALISED, article) == viewer[path], path
        # Nothing but the file itself (and its inlined data) is fetched.
        assert [url for url in fetched if not url.startswith(("file:", "data:"))] == []
        # Every in-page link, the contents list's included, has its target.
        dead = export.evaluate("""() => [...document.querySelectorAll('a[href^="#"]')]
            .map((a) => a.getAttribute('href').slice(1))
            .filter((id) => !document.getElementById(decodeURIComponent(id)))""")
        assert dead == []
        # The document's own contents list takes the reader to the section.
        export.click('article[data-file="README.md"] a[data-fragment="setup"]')
        # (at the top of the window, less the viewer's scroll margin of 12 px)
        export.wait_for_function("""() => {
            const top = document.getElementById('doc-readme--setup').getBoundingClientRect().top;
            return location.hash === '#doc-readme--setup' && top > -1 && top < 16;
        }""")
        boxes = export.locator("input[type=checkbox]")
        assert [boxes.nth(i).is_checked() for i in range(boxes.count())] == [True, False]
        assert export.locator(f'a[href="{EXTERNAL_ADDRESS}"]').count() == 1
        assert export.evaluate(KEYWORD_COLOUR) == viewer_keyword != "rgb(0, 0, 0)"
        assert export.evaluate("document.querySelector('img[data-path]').naturalWidth") == 40
        shot(export, "doc-export-offline")
    finally:
        context.close()
