"""Issue 25, item 12 under stress: the doc export renders random workspaces
with the doc viewer's renderer, and every page it makes keeps its word.

Each round writes a workspace of random documents: headings that repeat, in
Chinese, with punctuation or empty; contents lists of #anchors to their own
headings (by slug, text or odd case) and links to other documents' headings;
task lists; bare https addresses; fenced code in highlight.js's languages;
raw HTML with scripts; and text that tries to pass for the exporter's own
result marker or to end its script (`</script>`, `<pre id="pneuma-result">`).
Each export is read back as a parser does: every in-page link has its target,
no id repeats, each task item is a checkbox, each address a link, each known
language's code highlighted, no script kept. A PDF of the last round keeps
its internal links."""

from __future__ import annotations

import random
import time
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

VENDOR = Path(__file__).resolve().parents[2] / "plugins/doc/pneuma_doc/static/vendor/doc-vendor.js"
ROUNDS = 24
TIME_CAP = 30.0  # seconds for all rounds (then one PDF); the counts say how far it got
WORDS = ["Setup", "setup", "Usage notes", "FAQ", "API: v2", "What's new?", "安装指南", "Ünïcode héading",
         "C++ & Rust", "a_b c", "1. Numbers", "`code` title", "**Bold** move"]
LANGUAGES = ["python", "bash", "json", "javascript", "rust", "yaml", "go"]
CODE = {"python": "def f(x):\n    return x", "bash": "echo hi # comment", "json": '{"a": 1}',
        "javascript": "const a = () => 1;", "rust": "fn main() { let x = 1; }",
        "yaml": "key: value", "go": "func main() { return }"}
HOSTILE = ["</script><script>document.title='ran'</script>", '<pre id="pneuma-result">[]</pre>',
           "<img src=x onerror=\"document.title='ran'\">", "\u2028 line separator \u2029", "&nbsp; &amp; &lt;"]


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: Counter[str] = Counter()
        self.hrefs: list[str] = []
        self.checkboxes = 0
        self.scripts = 0
        self.highlighted: Counter[str] = Counter()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids[str(found["id"])] += 1
        if tag == "a" and found.get("href"):
            self.hrefs.append(str(found["href"]))
        self.checkboxes += tag == "input" and found.get("type") == "checkbox"
        self.scripts += tag == "script"
        classes = str(found.get("class") or "").split()
        if tag == "code" and "hljs" in classes:
            self.highlighted.update(c.removeprefix("language-") for c in classes if c.startswith("language-"))


def _document(rng: random.Random, others: list[str]) -> tuple[str, int, list[str], list[str]]:
    """A random document: its text, task items, addresses and code languages."""
    headings = [rng.choice(WORDS) for _ in range(rng.randint(1, 6))]
    lines = [f"# {headings[0]}", ""]
    lines += [f"- [{h}](#{rng.choice([h, h.lower(), h.upper(), h.replace(' ', '-').lower()])})" for h in headings]
    lines += [f"- [elsewhere]({path}#{rng.choice(WORDS)})" for path in rng.sample(others, min(2, len(others)))]
    tasks, addresses, languages = 0, [], []
    for heading in headings[1:]:
        lines += ["", f"{'#' * rng.randint(2, 4)} {heading}", ""]
        for _ in range(rng.randint(1, 3)):
            kind = rng.randrange(4)
            if kind == 0:
                n = rng.randint(1, 4)
                tasks += n
                lines += [f"- [{rng.choice(' xX')}] task {i}" for i in range(n)] + [""]
            elif kind == 1:
                address = f"https://example.com/{rng.randrange(10**6)}"
                addresses.append(address)
                lines += [f"See {address} now.", ""]
            elif kind == 2:
                language = rng.choice(LANGUAGES)
                languages.append(language)
                lines += [f"```{language}", CODE[language], "```", ""]
            else:
                lines += [rng.choice(HOSTILE), ""]
    return "\n".join(lines) + "\n", tasks, addresses, languages


@pytest.mark.skipif(not VENDOR.exists(), reason="the doc viewer's bundle is not built")
@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")
def test_random_workspaces_export_as_the_viewer_renders_them(tmp_path: Path) -> None:
    from pneuma_doc.exporter import render_html

    rng = random.Random(12)
    started = time.monotonic()
    rounds = documents = links = dead = repeated = checkboxes_missing = unlinked = plain_code = scripts = 0
    last: Path | None = None
    while rounds < ROUNDS and time.monotonic() - started < TIME_CAP:
        workspace = tmp_path / f"ws{rounds}"
        paths = [f"{rng.choice(['', 'guide/', 'a/b/'])}doc{i}.md" for i in range(rng.randint(1, 6))]
        paths = list(dict.fromkeys(paths))
        tasks = 0
        addresses: list[str] = []
        languages: Counter[str] = Counter()
        for path in paths:
            others = ["/" + p for p in paths if p != path]
            text, n, found, used = _document(rng, others)
            tasks, addresses = tasks + n, addresses + found
            languages.update(used)
            (workspace / path).parent.mkdir(parents=True, exist_ok=True)
            (workspace / path).write_text(text, encoding="utf-8")
        page_text, rendered, _missing = render_html(workspace)
        page = _Page()
        page.feed(page_text)
        internal = [href[1:] for href in page.hrefs if href.startswith("#")]
        links += len(internal)
        dead += sum(target not in page.ids for target in internal)
        repeated += sum(n > 1 for n in page.ids.values())
        checkboxes_missing += abs(tasks - page.checkboxes)
        unlinked += sum(address not in page.hrefs for address in addresses)
        plain_code += sum(max(0, n - page.highlighted[lang]) for lang, n in languages.items())
        scripts += page.scripts
        documents += len(rendered)
        rounds += 1
        last = workspace
    pdf_links = _pdf_internal_links(last) if last is not None else (0, 0)
    took = time.monotonic() - started
    record("25.12 doc export rendering",
           f"{rounds} random workspaces, {count(documents)} documents, {count(links)} in-page links: "
           f"{dead} dead, {repeated} repeated ids, {checkboxes_missing} task items not checkboxes, "
           f"{unlinked} addresses not links, {plain_code} code blocks not highlighted, {scripts} scripts kept; "
           f"a PDF with {pdf_links[0]} internal links, {pdf_links[1]} to nowhere; {took:.1f} s")
    assert rounds >= 5
    assert (dead, repeated, checkboxes_missing, unlinked, plain_code, scripts) == (0, 0, 0, 0, 0, 0)
    assert pdf_links[0] > 0 and pdf_links[1] == 0


def _pdf_internal_links(workspace: Path) -> tuple[int, int]:
    """How many internal links the workspace's PDF export has, and how many
    of them name a place the PDF does not have."""
    from pypdf import PdfReader

    from pneuma_doc.exporter import EXPORTER

    out = workspace.parent / f"{workspace.name}.pdf"
    EXPORTER.run(workspace, "pdf", out)
    reader = PdfReader(str(out))
    places = set(reader.trailer["/Root"]["/Dests"].keys())
    names = [str(link.get_object()["/Dest"]) for page in reader.pages for link in page.get("/Annots") or []
             if link.get_object().get("/Dest") is not None]
    return len(names), sum(name not in places for name in names)
