"""Issue 26, item 2 under stress: edits in place change only the bytes meant.

1. Hypothesis writes HTML sources (nested elements, attributes holding `>`
   and quotes, entities, comments, script and style holding markup, void
   tags; and tag soup: end tags with nothing to close, <li> in <li>, <div>
   in <p>, misnested formatting) and an edit of one text node each;
   /static/lib/source-edit.js under node lists the text nodes and makes the
   edit. Its list is the one Chromium's parser makes, and the edited source
   differs from the original only inside that node, which Chromium now reads
   as the new text, every other node as before.
2. Hypothesis writes Markdown documents (ATX headings with and without
   closing #s, multi-line paragraphs, list items of every marker with and
   without a task box, block quotes, CRLF or LF): markdownInlineRange finds
   exactly each block's inline text.
3. Rounds of 2-8 tabs saving over the same base at once, some after the
   agent wrote: exactly one wins (none once the agent wrote), every other
   gets E_CONFLICT and its text is kept; nothing is lost.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import json
import random
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.server.conftest import make_server, slide_mode  # noqa: F401 (fixtures)
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

SCRIPT = Path(__file__).with_name("source_edit_cases.mjs")
HTML_CASES = 250
SOUP_CASES = 150
MARKDOWN_DOCUMENTS = 100
ROUNDS = 60
TIME_CAP = 40.0

# Text a person types: letters (Latin and CJK), digits, punctuation, the
# characters HTML escapes, spaces; no astral characters (JS offsets count
# UTF-16 units) and no exotic spaces (JS and Python disagree on \s).
_ALPHABET = st.sampled_from(list("abcdefghijXYZ0123456789.,;:!?'\"()[]-_/&<>= 中文字") + ["é", "ß", "—"])
_words = st.text(_ALPHABET, min_size=1, max_size=24).filter(lambda s: s.strip() != "")

# --- HTML -------------------------------------------------------------------------------

_ENTITIES = ["&amp;", "&lt;", "&gt;", "&quot;", "&nbsp;", "&mdash;", "&#65;", "&#x4e2d;", "&copy;"]
_TAGS = ["p", "div", "span", "h1", "h2", "li", "em", "b", "section", "a"]


@st.composite
def _text_piece(draw: Any) -> str:
    parts = draw(st.lists(st.one_of(_words.map(lambda s: html.escape(s, quote=False)),
                                    st.sampled_from(_ENTITIES)), min_size=1, max_size=4))
    space = draw(st.sampled_from(["", " ", "\n  ", "\t"]))
    return space + "".join(parts) + draw(st.sampled_from(["", " ", "\n"]))


@st.composite
def _attribute(draw: Any) -> str:
    value = draw(st.text(st.sampled_from(list("ab>c'd/ =")), max_size=8))
    quote = '"' if "'" in value or draw(st.booleans()) else "'"
    value = value.replace(quote, "")
    return f' data-{draw(st.sampled_from(["x", "y", "label"]))}={quote}{value}{quote}'


@st.composite
def _html_nodes(draw: Any, depth: int = 0) -> str:
    out = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["text", "element", "element", "comment", "script", "void"]
                                    if depth < 2 else ["text", "comment", "void"]))
        if kind == "text":
            out.append(draw(_text_piece()))
        elif kind == "element":
            tag = draw(st.sampled_from(_TAGS))
            attrs = "".join(draw(st.lists(_attribute(), max_size=2)))
            out.append(f"<{tag}{attrs}>{draw(_html_nodes(depth + 1))}</{tag}>")
        elif kind == "comment":
            out.append(f"<!-- {draw(st.sampled_from(['<p>hidden</p>', 'note', 'a > b']))} -->")
        elif kind == "script":
            tag = draw(st.sampled_from(["script", "style"]))
            out.append(f"<{tag}>if (a < b) {{ '</p>' }}</{tag}>")
        else:
            out.append(draw(st.sampled_from(["<br>", "<br/>", '<img src="a>b.png" alt="x">', "<hr>"])))
    return "".join(out)


@st.composite
def _html_case(draw: Any) -> dict[str, Any]:
    source = "<!doctype html><body>" + draw(_html_nodes()) + "</body>"
    return {"source": source, "index": draw(st.integers(0, 5)), "text": draw(_words)}


_SOUP_TAGS = [*_TAGS, "ul", "i", "strong", "h3"]


@st.composite
def _soup_case(draw: Any) -> dict[str, Any]:
    """Tags in any order: what the tree builder drops, closes for you or reopens."""
    parts = draw(st.lists(st.one_of(
        _text_piece(),
        st.sampled_from(_SOUP_TAGS).map(lambda tag: f"<{tag}>"),
        st.sampled_from(_SOUP_TAGS).map(lambda tag: f"</{tag}>"),
        st.sampled_from(["<br>", "</br>", "<hr>", "<!-- note -->", "<body>", '<img src="a>b.png">']),
    ), min_size=2, max_size=16))
    source = "<!doctype html><body>" + "".join(parts) + "</body>"
    return {"source": source, "index": draw(st.integers(0, 5)), "text": draw(_words)}


# --- Markdown ---------------------------------------------------------------------------

_md_words = st.text(st.sampled_from(list("abcdefXYZ0123456789 ,.!?*_`中文")), min_size=1, max_size=30).map(
    # A letter first: text opening with "3. " or "1) " is itself a list
    # marker, a nested list whose inline text rightly leaves the marker out.
    lambda s: s.strip()).filter(lambda s: s != "" and s[0].isalpha() and s[-1] != "#")


@st.composite
def _md_block(draw: Any) -> tuple[list[str], str, int]:
    """(lines, the expected inline text as lines joined by \\n, how the lines end later)."""
    kind = draw(st.sampled_from(["atx", "paragraph", "item", "quote"]))
    text = draw(_md_words)
    if kind == "atx":
        closing = draw(st.sampled_from(["", " #", " ###  "]))
        return [f"{'#' * draw(st.integers(1, 6))} {text}{closing}"], text, 0
    if kind == "paragraph":
        more = draw(st.lists(_md_words, max_size=2))
        return [text, *more], "\n".join([text, *more]), 0
    if kind == "item":
        marker = draw(st.sampled_from(["-", "*", "+", "1.", "12)"]))
        box = draw(st.sampled_from(["", "[ ] ", "[x] "])) if marker in "-*+" else ""
        indent = draw(st.sampled_from(["", "  "]))
        return [f"{indent}{marker} {box}{text}"], text, 0
    return [f"> {text}"], text, 0


@st.composite
def _md_document(draw: Any) -> tuple[str, list[tuple[int, int, str]]]:
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    lines: list[str] = []
    blocks = []
    for block_lines, expected, _ in draw(st.lists(_md_block(), min_size=1, max_size=6)):
        start = len(lines)
        lines.extend(block_lines)
        blocks.append((start, len(lines), expected.replace("\n", eol)))
        lines.append("")
    return eol.join(lines), blocks


# --- running the cases under node -------------------------------------------------------

def run_node(cases: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(["node", "--experimental-default-type=module", str(SCRIPT)],
                          input=json.dumps(cases), capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def check_html(case: dict[str, Any], answer: dict[str, Any], texts: list[str], edited_texts: list[str]) -> None:
    """`texts` and `edited_texts`: Chromium's text nodes of the source and of the edited source."""
    source, index, new = case["source"], case["index"], case["text"]
    nodes = answer["nodes"]
    assert [n["text"] for n in nodes] == texts, source
    edited = answer["edited"]
    if index >= len(nodes):
        assert "RangeError" in edited["error"]
        return
    node = nodes[index]
    if new.strip() == node["text"].strip():
        assert edited == source
        return
    tail = len(source) - node["end"]
    assert edited[:node["start"]] == source[:node["start"]], (source, edited)
    assert edited[len(edited) - tail:] == source[node["end"]:], (source, edited)
    assert len(edited_texts) == len(texts), (source, edited)
    assert edited_texts[index].strip() == new.strip()
    assert [t for i, t in enumerate(edited_texts) if i != index] == [t for i, t in enumerate(texts) if i != index]


def chromium_texts(sources: list[str]) -> list[list[str]]:
    """The text nodes Chromium's own parser makes of each source (DOM_TEXTS)."""
    from playwright.sync_api import sync_playwright

    from pneuma.api import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            texts: list[list[str]] = browser.new_page().evaluate(DOM_TEXTS, sources)
        finally:
            browser.close()
    return texts


def collected(strategy: Any, examples: int) -> list[Any]:
    """``examples`` values Hypothesis draws from ``strategy`` (the same every run)."""
    found: list[Any] = []

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(value=strategy)
    def collect(value: Any) -> None:
        found.append(value)

    collect()
    return found


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_source_edits_change_only_the_intended_bytes() -> None:
    started = time.monotonic()
    pages = collected(_html_case(), HTML_CASES) + collected(_soup_case(), SOUP_CASES)
    markdown = [{"source": source, "start": start, "end": end, "expected": expected}
                for source, blocks in collected(_md_document(), MARKDOWN_DOCUMENTS)
                for start, end, expected in blocks]
    answers = run_node({"html": pages, "markdown": markdown})
    edited = [a["edited"] if isinstance(a["edited"], str) else "" for a in answers["html"]]
    texts = chromium_texts([case["source"] for case in pages] + edited)
    for n, (case, answer) in enumerate(zip(pages, answers["html"], strict=True)):
        check_html(case, answer, texts[n], texts[len(pages) + n])
    for case, found in zip(markdown, answers["markdown"], strict=True):
        assert found is not None and found["text"] == case["expected"], (case, found)
        assert case["source"][found["start"]:found["end"]] == found["text"]
    seconds = time.monotonic() - started
    record("26.2 source edits", f"{count(len(pages))} generated HTML edits ({SOUP_CASES} of them tag soup) and "
           f"{count(len(markdown))} Markdown blocks in {seconds:.1f} s: htmlTextNodes lists the text nodes "
           "Chromium's parser makes, and only the intended bytes changed")


# The text nodes Chromium's own parser makes of a source, by the rule
# htmlTextNodes promises (script and style skipped, blank runs skipped).
DOM_TEXTS = """(sources) => sources.map((source) => {
  const doc = new DOMParser().parseFromString(source, 'text/html');
  const walker = doc.createTreeWalker(doc, NodeFilter.SHOW_TEXT);
  const texts = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement && node.parentElement.closest('script, style')) continue;
    if (/\\S/.test(node.data)) texts.push(node.data);
  }
  return texts;
})"""


def sha(data: str) -> str:
    return hashlib.sha256(data.encode()).hexdigest()


async def test_concurrent_edits_over_stale_bases_lose_nothing(make_server: Any) -> None:  # noqa: F811
    server = await make_server()
    rng = random.Random(26)
    paths = ["slides/01-title.html", "theme.css", "manifest.json"]
    started = time.monotonic()
    wins = conflicts = 0
    for round_number in range(ROUNDS):
        rel = rng.choice(paths)
        target = server.workspace / rel
        base = target.read_text()
        agent_wrote = rng.random() < 0.25
        if agent_wrote:
            target.write_text(base + f"\n/* agent {round_number} */\n")
        theirs = target.read_text()
        texts = [f"{base}\n/* tab {n} of round {round_number} */\n" for n in range(rng.randint(2, 8))]
        answers = await asyncio.gather(*(
            server.post("/api/edits", json={"path": rel, "content": t, "base_sha256": sha(base)}) for t in texts))
        bodies = [await a.json() for a in answers]
        won = [t for t, a in zip(texts, answers, strict=True) if a.status == 200]
        assert len(won) == (0 if agent_wrote else 1), (round_number, [a.status for a in answers])
        assert target.read_text() == (theirs if agent_wrote else won[0])
        for t, a, body in zip(texts, answers, bodies, strict=True):
            if a.status == 200:
                continue
            assert a.status == 409 and body["error"]["code"] == "E_CONFLICT"
            assert (server.workspace / body["error"]["details"]["kept"]).read_text() == t
            conflicts += 1
        wins += len(won)
    seconds = time.monotonic() - started
    record("26.2 concurrent edits", f"{ROUNDS} rounds of 2-8 tabs saving over one base in {seconds:.1f} s: "
           f"{wins} won, {conflicts} refused with E_CONFLICT and kept; nothing lost")
