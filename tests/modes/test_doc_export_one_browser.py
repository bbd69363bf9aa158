"""The doc export's speed without giving up what item 12 built (issue 25,
follow-up F2): the PDF is rendered with the viewer's renderer and printed
in ONE Chromium start, and that Chromium has no flag that lets a page read
local files; the HTML export is one start. Starts are counted by a real
Chromium behind a one-line shell wrapper that notes its command line (the
browser's own child processes start from /proc/self/exe, not through it).

Also: the private origin the module runs on serves the named folders and
nothing else, and without Playwright (a package that refuses to import,
ahead of the real one on the path) the PDF is still the viewer's rendering."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.modes.doc_export_sample import DOCUMENT_LINKS, write_sample

REAL_CHROMIUM = Path("/usr/bin/chromium")
VENDOR = Path(__file__).resolve().parents[2] / "plugins/doc/pneuma_doc/static/vendor/doc-vendor.js"
pytestmark = [pytest.mark.skipif(not REAL_CHROMIUM.exists(), reason="needs Debian's chromium"),
              pytest.mark.skipif(not VENDOR.exists(), reason="the doc viewer's bundle is not built")]
PNEUMA = shutil.which("pneuma", path=str(Path(sys.executable).parent))
FILE_ACCESS = "--allow-file-access-from-files"


@pytest.fixture
def starts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The exporters' Chromium is the real one behind a wrapper that writes
    one line per start (its arguments) to the file this returns."""
    import pneuma.tools.html_render

    log = tmp_path / "chromium-starts.log"
    log.touch()
    wrapper = tmp_path / "bin" / "chromium"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec {REAL_CHROMIUM} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setattr(pneuma.tools.html_render, "CHROMIUM", str(wrapper))
    return log


def _export(workspace: Path, fmt: str, output: Path) -> None:
    from pneuma.host.exporters import all_exporters
    from pneuma.host.plugins import get_plugin_manager

    all_exporters(get_plugin_manager())["doc"].run(workspace, fmt, output, {})


def test_the_doc_pdf_is_rendered_and_printed_in_one_chromium_that_cannot_read_local_files(
        starts: Path, tmp_path: Path) -> None:
    workspace = write_sample(tmp_path / "handbook")
    pdf = tmp_path / "out.pdf"
    _export(workspace, "pdf", pdf)
    lines = starts.read_text().splitlines()
    assert len(lines) == 1, lines  # was two: a --dump-dom render, then a print
    assert FILE_ACCESS not in lines[0]
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    # What the viewer's renderer made: highlighted code is still code, the
    # contents list and the documents are there.
    assert "Contents" in text and "install the tools" in text and "def greet(name):" in text


def test_the_doc_html_export_starts_no_chromium_when_node_is_there(starts: Path, tmp_path: Path) -> None:
    assert shutil.which("node"), "this machine's Node.js (a prerequisite of scripts/install)"
    workspace = write_sample(tmp_path / "handbook")
    page = tmp_path / "out.html"
    _export(workspace, "html", page)
    assert starts.read_text().splitlines() == []  # was one bare start
    assert all(f'id="{anchor}"' in page.read_text(encoding="utf-8") for anchor in DOCUMENT_LINKS)


def _no_node(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake: str | None = None) -> None:
    """PATH without Node.js, or with a ``node`` that only runs ``fake`` (sh)."""
    empty = tmp_path / "path-bin"
    empty.mkdir()
    if fake is not None:
        (empty / "node").write_text(f"#!/bin/sh\n{fake}\n")
        (empty / "node").chmod(0o755)
    monkeypatch.setenv("PATH", str(empty))


@pytest.mark.parametrize("node", ["none", "too old"])
def test_without_a_node_that_can_render_the_html_is_the_same_page_from_one_chromium_start(
        starts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, node: str) -> None:
    workspace = write_sample(tmp_path / "handbook")
    (workspace / "hostile.md").write_text("# </script> \u2028 <pre id=\"pneuma-result\">[]</pre>\n\n- [x] 安装\n",
                                          encoding="utf-8")
    with_node = tmp_path / "node.html"
    _export(workspace, "html-raw", with_node)
    # A node too old for module hooks fails as Node 18.0 does: a message, exit 1.
    _no_node(monkeypatch, tmp_path, None if node == "none" else
             "echo 'SyntaxError: The requested module does not provide an export named register' >&2; exit 1")
    without = tmp_path / "chromium.html"
    _export(workspace, "html-raw", without)
    assert len(starts.read_text().splitlines()) == 1
    assert with_node.read_text(encoding="utf-8") == without.read_text(encoding="utf-8")


PROBE = """
export async function probe(job) {
  const tries = {};
  for (const url of job.urls) {
    try {
      const answer = await fetch(url);
      tries[url] = answer.ok ? "read: " + (await answer.text()).slice(0, 40) : "status " + answer.status;
    } catch (e) {
      tries[url] = "refused";
    }
  }
  return {tries, origin: location.origin};
}
"""


def test_the_render_page_serves_its_folders_and_nothing_else(tmp_path: Path) -> None:
    from pneuma.tools.script_page import ORIGIN, ScriptPage, run_script_then_pdf

    served = tmp_path / "served"
    served.mkdir()
    (served / "probe.js").write_text(PROBE, encoding="utf-8")
    (served / "note.txt").write_text("served text", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("SECRET beside the folder", encoding="utf-8")
    urls = [f"{ORIGIN}/m/note.txt", f"{ORIGIN}/m/../secret.txt", f"{ORIGIN}/m/%2e%2e/secret.txt",
            f"{ORIGIN}/secret.txt", (tmp_path / "secret.txt").as_uri(), "http://127.0.0.1:9/",
            "https://example.com/"]
    script = ScriptPage(folders={"/m/": served}, module="/m/probe.js", function="probe")
    answer = run_script_then_pdf(script, {"urls": urls}, lambda got: f"<pre>{json.dumps(got)}</pre>",
                                 tmp_path / "probe.pdf", name="the probe")
    tries = answer["tries"]
    assert tries[urls[0]] == "read: served text"
    assert all("SECRET" not in said for said in tries.values()), tries
    assert all(tries[url] in ("refused", "status 404") for url in urls[1:]), tries
    assert (tmp_path / "probe.pdf").stat().st_size > 0


def test_without_playwright_the_pdf_is_still_the_viewers_rendering(tmp_path: Path) -> None:
    # A package named playwright that refuses to import, ahead of the real one.
    blocker = tmp_path / "no-playwright" / "playwright"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('playwright is not installed here')\n")
    workspace = write_sample(tmp_path / "handbook")
    pdf = tmp_path / "out.pdf"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(blocker.parent),
                                                                       os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([PNEUMA, "export", "--mode", "doc", "-w", str(workspace), "--format", "pdf",
                           "-o", str(pdf)], capture_output=True, text=True, timeout=180, check=False, env=env)
    assert done.returncode == 0, done.stderr
    from pypdf import PdfReader

    destinations = {str(name).lstrip("/") for name in PdfReader(str(pdf)).trailer["/Root"]["/Dests"].keys()}
    assert DOCUMENT_LINKS <= destinations
