"""The doc export renders Markdown as the doc viewer does (issue 25, item 12),
in every format the mode offers: in-page #anchor links and the contents list
lead somewhere, task lists are checkboxes, a bare https address is a link and
fenced code is highlighted. The HTML is read back as a parser sees it; the
PDF with pypdf (its link annotations and named destinations) and poppler's
pdftotext (what a reader sees). The viewer side of the comparison is
tests/browser/test_doc_export_matches_viewer.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.modes.doc_export_sample import DOCUMENT_LINKS, EXTERNAL_ADDRESS, write_sample

CHROMIUM = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")
VENDOR = Path(__file__).resolve().parents[2] / "plugins/doc/pneuma_doc/static/vendor/doc-vendor.js"
pytestmark = [CHROMIUM, pytest.mark.skipif(not VENDOR.exists(), reason="the doc viewer's bundle is not built")]
PNEUMA = shutil.which("pneuma", path=str(Path(sys.executable).parent))


class _Page(HTMLParser):
    """What a browser would find in the exported page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.checkboxes: list[bool] = []
        self.classes: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if tag == "a" and found.get("href"):
            self.hrefs.append(str(found["href"]))
        if tag == "input" and found.get("type") == "checkbox":
            self.checkboxes.append("checked" in found)
        self.classes.extend(str(found.get("class") or "").split())

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _export(workspace: Path, fmt: str, out: Path) -> Path:
    done = subprocess.run([PNEUMA, "export", "--mode", "doc", "-w", str(workspace), "--format", fmt,
                           "-o", str(out)], capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_sample(tmp_path / "handbook")


@pytest.mark.parametrize("fmt", ["html", "html-raw"])
def test_the_html_export_renders_markdown_as_the_viewer_does(workspace: Path, tmp_path: Path, fmt: str) -> None:
    page = _Page()
    page.feed(_export(workspace, fmt, tmp_path / "out.html").read_text(encoding="utf-8"))
    internal = {href[1:] for href in page.hrefs if href.startswith("#")}
    # Every in-page link resolves: the contents list, the document's own
    # #anchors and the link to another document's heading.
    assert DOCUMENT_LINKS <= internal
    assert internal <= page.ids, internal - page.ids
    # The task list is two checkboxes, the first ticked; no "[x]" is left as text.
    assert page.checkboxes == [True, False]
    text = "".join(page.text)
    assert "[x]" not in text and "[ ]" not in text
    # The bare address is a link; the Python code is highlighted by highlight.js.
    assert EXTERNAL_ADDRESS in page.hrefs
    assert {"hljs", "language-python", "hljs-keyword", "hljs-string"} <= set(page.classes)


def test_the_pdf_keeps_the_links_and_shows_checkboxes_not_brackets(workspace: Path, tmp_path: Path) -> None:
    from pypdf import PdfReader

    pdf = _export(workspace, "pdf", tmp_path / "out.pdf")
    reader = PdfReader(str(pdf))
    destinations = set(reader.trailer["/Root"]["/Dests"].keys())
    internal: list[str] = []
    external: list[str] = []
    for page in reader.pages:
        for annotation in page.get("/Annots") or []:
            link = annotation.get_object()
            if link.get("/Dest") is not None:
                internal.append(str(link["/Dest"]).lstrip("/"))
            elif link.get("/A") is not None and link["/A"].get("/URI"):
                external.append(str(link["/A"]["/URI"]))
    # Each internal link jumps to a place that is in the PDF, and the
    # documents' own links are among them (not only the contents list's).
    assert internal and {"/" + name for name in internal} <= destinations
    assert DOCUMENT_LINKS <= set(internal)
    assert external == [EXTERNAL_ADDRESS]
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    assert "install the tools" in text and "def greet(name):" in text
    assert not re.search(r"\[[ xX]\]", text)


def test_a_chinese_document_exports_whatever_the_locale(tmp_path: Path) -> None:
    # Chromium prints the rendered page as UTF-8; a C locale without UTF-8
    # (no coercion, no UTF-8 mode) must not garble or refuse it.
    workspace = tmp_path / "zh"
    workspace.mkdir()
    (workspace / "README.md").write_text("# 安装指南\n\n- [链接](#安装指南)\n", encoding="utf-8")
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
    out = tmp_path / "zh.html"
    done = subprocess.run([PNEUMA, "export", "--mode", "doc", "-w", str(workspace), "--format", "html",
                           "-o", str(out)], capture_output=True, timeout=180, check=False, env=env)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    page = out.read_text(encoding="utf-8")
    assert '<h1 data-slug="安装指南" id="doc-readme--安装指南">' in page
    assert 'href="#doc-readme--安装指南"' in page
