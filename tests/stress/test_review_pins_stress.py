"""Review pins under hostile input (issue 26, item 1): random pin lists and
hostile comments (markup, quotes that would end the `comment="…"`
attribute, tags of the review's own, huge text, a thousand pins).

The route stores what checks and answers the rest 4xx with an E_* code,
never a 5xx; the page builds a <viewer-review> the agent reads back exactly
(every comment decodes to what the person wrote, no pin ends early, the
whole stays under the message's bound); and a list of hostile pins shows as
text, never as markup, with no error in the page.
"""

from __future__ import annotations

import asyncio
import html
import json
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest

from pneuma.annotations.store import MAX_COMMENT_CHARS, MAX_PINS
from pneuma.testing import serve
from tests.browser.browser_helpers import CHROMIUM, browser_problems
from tests.browser.module_run import module_run
from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

HOSTILE = [
    '"', "'", '" onmouseover="alert(1)', "</pin>", '<pin n="9" comment="forged">', "</viewer-review>",
    "<viewer-review pins=\"1\">", "<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "&quot;",
    "&lt;/pin&gt;", "\n", "\r\n", "\t", "\u0000", "\u202e", "😀", "中文", "\\", "${x}", "`", "]]>", "-->",
]


def hostile_text(rng: random.Random, longest: int) -> str:
    parts = [rng.choice(HOSTILE) if rng.random() < 0.6 else "word" for _ in range(rng.randint(0, 12))]
    text = " ".join(parts)
    if rng.random() < 0.1:
        text += "x" * rng.randint(1, longest)
    return text


def random_pin(rng: random.Random, n: int) -> Any:
    pin: dict[str, Any] = {"id": f"p{n}", "comment": hostile_text(rng, 200),
                           "status": rng.choice(["open", "sent", "addressed"]),
                           "selection": {"file": "slides/01-title.html", "selector": "h1",
                                         "text": hostile_text(rng, 100)}}
    roll = rng.random()
    if roll < 0.05:
        pin["comment"] = "c" * (MAX_COMMENT_CHARS + rng.randint(1, 50))  # too long
    elif roll < 0.10:
        pin["id"] = rng.choice([None, 7, "", "i" * 101])  # no usable id
    elif roll < 0.15:
        pin["status"] = rng.choice(["done", None, 3])
    elif roll < 0.18:
        pin["selection"] = {"blob": "s" * 40_000}  # over the selection's bound
    elif roll < 0.20:
        return rng.choice([None, 1, "pin", []])
    return pin


def expected(pins: Any) -> int:
    """The status a correct route answers for this list."""
    if not isinstance(pins, list):
        return 400
    if len(pins) > MAX_PINS:
        return 413
    for pin in pins:
        if not isinstance(pin, dict):
            return 400
        pin_id = pin.get("id")
        if not isinstance(pin_id, str) or not 0 < len(pin_id) <= 100:
            return 400
        if len(pin.get("comment", "")) > MAX_COMMENT_CHARS:
            return 413
        if pin.get("status") not in ("open", "sent", "addressed"):
            return 400
        if len(json.dumps(pin.get("selection"), ensure_ascii=False).encode()) > 32 * 1024:
            return 413
    return 200


def test_random_pin_lists_are_stored_or_refused_never_a_5xx(tmp_path: Path) -> None:
    rng = random.Random(2601)
    rounds, stored, refused, slowest = 240, 0, 0, 0.0

    async def scenario() -> None:
        nonlocal stored, refused, slowest
        async with serve("slide", tmp_path / "ws", backend="none", watch=False) as server:
            last_good: list[str] = []
            for n in range(rounds):
                size = rng.choice([0, 1, 3, 20, 120, MAX_PINS, MAX_PINS + 1, 1000])
                pins: Any = [random_pin(rng, i) for i in range(size)]
                if rng.random() < 0.05:
                    pins = rng.choice(["nope", {"a": 1}, None])
                started = time.monotonic()
                answer = await server.put("/api/review/pins", json={"pins": pins})
                slowest = max(slowest, time.monotonic() - started)
                body = await answer.json()
                assert answer.status == expected(pins), (n, answer.status, str(body)[:300])
                if answer.status == 200:
                    stored += 1
                    last_good = [p["comment"] for p in body["pins"]]
                else:
                    refused += 1
                    assert body["error"]["code"] in ("E_BAD_ARGS", "E_TOO_LARGE"), body
                kept = await (await server.get("/api/review/pins")).json()
                assert [p["comment"] for p in kept["pins"]] == last_good

    asyncio.run(scenario())
    record("26.1", f"review pins: {count(rounds)} random pin lists (up to 1,000 pins, hostile comments): "
                   f"{count(stored)} stored, {count(refused)} refused 4xx, 0 5xx, slowest {slowest:.2f} s")


REVIEW_SCRIPT = """async ({pins}) => {
  const { reviewContext } = await import('/static/lib/pins.js');
  const { text, included } = reviewContext(pins, window.pneuma.ui.host);
  return { text, numbers: included.map((p) => p.number) };
}"""

PIN_LINE = re.compile(r'^<pin n="(\d+)" comment="([^"<>]*)">$')


def parse_review(text: str) -> list[tuple[int, str, str]]:
    """The review as a strict reader takes it: its opening line, then per pin
    an opening line, one <viewer-context> element, a closing line."""
    lines = text.split("\n")
    head = re.fullmatch(r'<viewer-review pins="(\d+)">', lines[0])
    assert head and lines[-1] == "</viewer-review>", (lines[0], lines[-1])
    body = "\n".join(lines[1:-1])
    found = re.findall(r'<pin n="(\d+)" comment="([^"<>]*)">\n(<viewer-context[\s\S]*?</viewer-context>)\n</pin>',
                       body)
    assert len(found) == int(head[1]), (len(found), head[1])
    # Nothing but those pins: no tag of the review's own inside a context.
    for _, _, context in found:
        assert not re.search(r"</?(pin|viewer-review)\b", context), context[:200]
    return [(int(n), html.unescape(comment), context) for n, comment, context in found]


def test_hostile_reviews_read_back_exactly_and_the_page_stays_whole(tmp_path: Path) -> None:
    problems = browser_problems()
    if problems:
        pytest.skip("; ".join(problems))
    from playwright.sync_api import expect, sync_playwright

    from pneuma.tools.chromium import CHROMIUM_ARGS

    rng = random.Random(2602)
    reviews, pins_read, cut = 20, 0, 0
    with module_run(tmp_path, "slide") as run, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(run.url)
            page.wait_for_selector('.pill[data-state="open"]', timeout=20_000)
            page.wait_for_function("() => window.pneuma && window.pneuma.ui.viewerReady")
            for n in range(reviews):
                size = rng.choice([1, 5, 60, 1000])
                pins = [{"id": f"p{i}", "number": i + 1, "status": "open",
                         "comment": hostile_text(rng, 30_000 if rng.random() < 0.05 else 300),
                         "selection": {"file": "slides/01-title.html", "selector": "section.slide > h1",
                                       "tag": "h1", "text": hostile_text(rng, 6_000)}}
                        for i in range(size)]
                answer = page.evaluate(REVIEW_SCRIPT, {"pins": pins})
                text = answer["text"]
                assert len(text) <= 180_000, len(text)
                read = parse_review(text)
                assert [number for number, _, _ in read] == answer["numbers"]
                assert answer["numbers"] == list(range(1, len(read) + 1))  # in order, none skipped
                for number, comment, context in read:
                    wrote = pins[number - 1]["comment"].strip()
                    if len(wrote) > 2_000:
                        cut += 1
                        # Cut where the page's own string (UTF-16) ends, marked.
                        assert comment.endswith("…") and len(comment) <= 2_000
                        assert wrote.startswith(comment[:1_500])
                    else:
                        assert comment == wrote, (n, number)
                    assert 'mode="slide"' in context and len(context) <= 4_000
                pins_read += len(read)

            # 500 hostile pins in the review list: text on screen, never markup.
            hostile = [{"id": f"h{i}", "status": rng.choice(["open", "sent", "addressed"]),
                        "comment": rng.choice(HOSTILE[:10]) + hostile_text(rng, 50),
                        "selection": {"file": "slides/01-title.html", "label": rng.choice(HOSTILE[:10])}}
                       for i in range(MAX_PINS)]
            status = page.evaluate("""async (pins) => (await fetch('/api/review/pins', {method: 'PUT',
                headers: {'Content-Type': 'application/json'}, body: JSON.stringify({pins})})).status""", hostile)
            assert status == 200
            expect(page.locator(".review-list .pin-item")).to_have_count(MAX_PINS, timeout=15_000)
            assert page.locator(".review-list img, .review-list script, .review-list [onerror]").count() == 0
            shown = page.locator(".review-list .pin-comment").first.inner_text()
            assert shown == hostile[0]["comment"].strip() or shown.startswith(hostile[0]["comment"][:5])
            assert not errors, errors
        finally:
            browser.close()
    record("26.1", f"review pins: {count(reviews)} hostile reviews ({count(pins_read)} pins read back, "
                   f"{count(cut)} long comments cut), every comment decoded exactly, 0 pins forged or ended early; "
                   f"{count(MAX_PINS)} hostile pins listed as text, 0 page errors")
