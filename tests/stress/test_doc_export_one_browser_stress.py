"""The doc export's one browser under stress (issue 25, item 12, its speed):
random PDF exports each start Chromium once, never with the flag that lets
a page read local files, and print what every document says; and a module
on the renderer's private origin that tries every way out it can (paths
that leave its folder, plain and escaped; file:// addresses; another port,
scheme or host; a real HTTP server on 127.0.0.1; fetch, import() and
images) reads nothing but its own folder and reaches nothing."""

from __future__ import annotations

import json
import random
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.modes.test_doc_export_one_browser import starts  # noqa: F401 (the fixture)
from tests.stress.tally import count, record

REAL_CHROMIUM = Path("/usr/bin/chromium")
VENDOR = Path(__file__).resolve().parents[2] / "plugins/doc/pneuma_doc/static/vendor/doc-vendor.js"
pytestmark = [pytest.mark.stress,
              pytest.mark.skipif(not REAL_CHROMIUM.exists(), reason="needs Debian's chromium"),
              pytest.mark.skipif(not VENDOR.exists(), reason="the doc viewer's bundle is not built")]
EXPORTS = 6
PROBE_ROUNDS = 2
TIME_CAP = 20.0  # seconds for each part; the counts say how far it got
HOSTILE = ["</script><script>document.title='ran'</script>", "<img src=x onerror=\"document.title='ran'\">",
           "<iframe src=\"file:///etc/passwd\"></iframe>", "![x](/etc/passwd)", "![y](../../secret.txt)",
           "[z](file:///etc/passwd)", "&nbsp; &lt; \u2028"]


def test_random_pdf_exports_start_chromium_once_each_without_file_access(starts: Path, tmp_path: Path) -> None:
    from pneuma_doc.exporter import EXPORTER

    rng = random.Random(25_12_2)
    started = time.monotonic()
    exports = extra_starts = with_flag = documents = words_missing = 0
    (tmp_path / "secret.txt").write_text("SECRET-BESIDE", encoding="utf-8")
    while exports < EXPORTS and time.monotonic() - started < TIME_CAP:
        workspace = tmp_path / f"ws{exports}"
        words = []
        for i in range(rng.randint(1, 5)):
            word = f"marker{exports}x{i}"
            words.append(word)
            lines = [f"# Doc {i}", "", word, ""] + rng.sample(HOSTILE, 3)
            path = workspace / rng.choice(["", "guide/", "a/b/"]) / f"doc{i}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n\n".join(lines), encoding="utf-8")
        before = len(starts.read_text().splitlines())
        out = tmp_path / f"out{exports}.pdf"
        EXPORTER.run(workspace, "pdf", out)
        lines = starts.read_text().splitlines()[before:]
        extra_starts += len(lines) - 1
        with_flag += sum("--allow-file-access-from-files" in line for line in lines)
        text = subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True, check=True).stdout
        words_missing += sum(word not in text for word in words)
        words_missing += "SECRET-BESIDE" in text or "root:x:0:0" in text
        documents += len(words)
        exports += 1
    took = time.monotonic() - started
    record("25.12 doc export in one browser",
           f"{exports} random PDF exports of {count(documents)} documents with hostile text: "
           f"{extra_starts} Chromium starts beyond one an export, {with_flag} with file access, "
           f"{words_missing} documents missing or files leaked; {took:.1f} s")
    assert exports >= 2
    assert (extra_starts, with_flag, words_missing) == (0, 0, 0)


PROBE = """
export async function probe(job) {
  const said = {};
  const attempt = async (how, url) => {
    try {
      if (how === "fetch") {
        const answer = await fetch(url);
        return answer.ok ? "read: " + (await answer.text()).slice(0, 60) : "status " + answer.status;
      }
      if (how === "import") {
        const module = await import(url);
        return "imported: " + Object.keys(module).join(",");
      }
      return await new Promise((resolve) => {
        const image = new Image();
        image.onload = () => resolve("loaded");
        image.onerror = () => resolve("refused");
        image.src = url;
      });
    } catch (e) {
      return "refused";
    }
  };
  for (const [how, url] of job.tries) said[how + " " + url] = await attempt(how, url);
  return said;
}
"""


class _Counting(BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        type(self).hits += 1
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"SECRET-SERVER")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def local_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()


def _ways_out(rng: random.Random, origin: str, secret: Path, port: int) -> list[str]:
    ups = ["..", "%2e%2e", "%2E%2E", ".%2e", "%252e%252e", "..%2f..", "..%5c..", "..\\..", "%c0%ae%c0%ae"]
    found = [f"{origin}/m/{rng.choice(ups)}/{rng.choice(ups)}/{secret.name}" for _ in range(6)]
    found += [f"{origin}/m/{rng.choice(ups)}/{secret.parent.name}/{secret.name}",
              f"{origin}{secret}", f"{origin}//{secret}", f"{origin}/m/{secret}",
              secret.as_uri(), "file:///etc/passwd", f"file://localhost{secret}",
              f"http://127.0.0.1:{port}/", f"http://localhost:{port}/x", f"http://[::1]:{port}/",
              origin.replace("http:", "https:") + "/m/note.txt", origin + ":81/m/note.txt",
              origin.replace("localhost", "localhost.example") + "/m/note.txt",
              "https://example.com/", "ws://127.0.0.1:9/"]
    return found


def test_a_module_on_the_private_origin_reads_nothing_but_its_folder(tmp_path: Path, local_server: int) -> None:
    from pneuma.tools.script_page import ORIGIN, ScriptPage, run_script_then_pdf

    rng = random.Random(25_12_3)
    served = tmp_path / "served"
    served.mkdir()
    (served / "probe.js").write_text(PROBE, encoding="utf-8")
    (served / "note.txt").write_text("served-note", encoding="utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-BESIDE", encoding="utf-8")
    script = ScriptPage(folders={"/m/": served}, module="/m/probe.js", function="probe")
    started = time.monotonic()
    rounds = tried = leaked = own_unread = 0
    while rounds < PROBE_ROUNDS and time.monotonic() - started < TIME_CAP:
        tries = [[how, url] for url in _ways_out(rng, ORIGIN, secret, local_server)
                 for how in ("fetch", "import", "image")]
        tries.append(["fetch", f"{ORIGIN}/m/note.txt"])
        said = run_script_then_pdf(script, {"tries": tries}, lambda got: f"<pre>{json.dumps(got)}</pre>",
                                   tmp_path / f"probe{rounds}.pdf", name="the probe")
        own = said.pop(f"fetch {ORIGIN}/m/note.txt")
        own_unread += own != "read: served-note"
        leaked += sum("SECRET" in answer or answer.startswith(("read", "imported", "loaded"))
                      for answer in said.values())
        tried += len(said)
        rounds += 1
    took = time.monotonic() - started
    record("25.12 doc export in one browser",
           f"{rounds} pages on the private origin, {count(tried)} attempts to leave its folder (paths, "
           f"escapes, file://, 127.0.0.1, other hosts; fetch, import, image): {leaked} read or reached, "
           f"{_Counting.hits} requests at the local server, {own_unread} own files unread; {took:.1f} s")
    assert rounds >= 1
    assert (leaked, _Counting.hits, own_unread) == (0, 0, 0)


NODE_ROUNDS = 4


def test_random_documents_render_the_same_in_node_and_in_chromium(
        starts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from pneuma_doc.exporter import render_html

    if shutil.which("node") is None:
        pytest.skip("needs Node.js (a prerequisite of scripts/install)")
    rng = random.Random(25_12_4)
    pieces = HOSTILE + ["- [x] done", "- [ ] todo", "https://example.com/a", "```python\ndef f(): pass\n```",
                        "## 安装指南", "## C++ & Rust", "| a | b |\n|---|---|\n| 1 | 2 |", "> note", "[top](#doc-0)"]
    started = time.monotonic()
    rounds = differ = documents = 0
    path_with_node = str(Path(shutil.which("node") or "").parent)
    while rounds < NODE_ROUNDS and time.monotonic() - started < TIME_CAP:
        workspace = tmp_path / f"same{rounds}"
        for i in range(rng.randint(1, 4)):
            path = workspace / rng.choice(["", "guide/"]) / f"doc-{i}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n\n".join([f"# Doc {i}"] + rng.sample(pieces, 6)), encoding="utf-8")
            documents += 1
        raw = rng.random() < 0.5
        monkeypatch.setenv("PATH", path_with_node)
        in_node = render_html(workspace, raw_html=raw)[0]
        monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
        in_chromium = render_html(workspace, raw_html=raw)[0]
        differ += in_node != in_chromium
        rounds += 1
    took = time.monotonic() - started
    chromium_starts = len(starts.read_text().splitlines())
    record("25.12 doc export in one browser",
           f"{rounds} random workspaces ({documents} documents, hostile text) rendered in Node and in "
           f"Chromium: {differ} pages that differ, {chromium_starts} Chromium starts for {rounds} "
           f"Chromium renders; {took:.1f} s")
    assert rounds >= 2 and differ == 0 and chromium_starts == rounds
