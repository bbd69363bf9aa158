"""The webcraft mode describes a turn in pages, elements, stylesheets and
assets, and reverts one element's change alone (issue 28, items 1-2)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import pneuma_webcraft
from pneuma.api import TurnFilesFromMaps
from pneuma.host.turn_changes import describe_turn, revert_contents
from pneuma_webcraft.changes import DESCRIBER

SEEDS = Path(pneuma_webcraft.__file__).parent / "seeds"
NEW_CARD = """        <article class="card">
          <h3>Search that remembers</h3>"""


@pytest.fixture(scope="module")
def site() -> dict[str, bytes]:
    return {p.relative_to(SEEDS).as_posix(): p.read_bytes() for p in SEEDS.rglob("*") if p.is_file()}


def _edited(files: dict[str, bytes], path: str, *pairs: tuple[str, str]) -> dict[str, bytes]:
    text = files[path].decode()
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new, 1)
    return {**files, path: text.encode()}


def _summary(turn) -> list[str]:
    def en(label):
        return label if isinstance(label, str) else label["en"]
    return [f"{en(c.where)}: {en(c.what)}" for c in turn.changes]


def _turn(site: dict[str, bytes]) -> dict[str, bytes]:
    after = _edited(site, "index.html",
                    ('<h2 id="features-title">Why people switch</h2>', '<h2 id="features-title">Why people love it</h2>'),
                    ('<p class="lead">Lumen links', '<p class="lead big">Lumen links'),
                    (NEW_CARD, '        <article class="card">\n          <h3>New card</h3>\n          <p>Fresh.</p>\n'
                               '        </article>\n' + NEW_CARD),
                    ('<h2 id="pricing-title">Simple pricing</h2>', '<h2 id="pricing-title">Fair pricing</h2>'))
    after = _edited(after, "css/style.css", (".card {", ".card {\n  outline: 1px solid;"))
    return {**after, "assets/hero.png": b"\x89PNG", "blog.html": b"<!doctype html><title>Blog</title><h1>Hi</h1>\n"}


def test_a_turn_is_named_by_pages_elements_rules_and_assets(site) -> None:
    turn = describe_turn(DESCRIBER, TurnFilesFromMaps(site, _turn(site)))
    assert turn.source == "mode"
    assert _summary(turn) == [
        "Page blog.html: added (“Blog”)",
        "index.html › section “Notes that think with you.” › p.lead.big: attributes changed",
        "index.html › h2#features-title: text changed",
        "index.html › section “Why people love it” › div.grid: article added",
        "index.html › h2#pricing-title: text changed",
        "Stylesheet css/style.css: rule .card changed",
        "Assets: 1 added: hero.png",
    ]
    card = turn.changes[3]
    assert card.kind == "added"
    # the viewer's navigate-to takes the page and the picker's selector of the new card
    assert card.locate == {"file": "index.html", "page": "index.html",
                           "selector": "body > main > section.features > div.grid > article.card:nth-of-type(2)"}
    assert turn.changes[2].locate == {"file": "index.html", "page": "index.html", "selector": "#features-title"}
    assert turn.changes[3].to_json()["what"]["zh-CN"] == "新增 article"
    # a stylesheet is shown on a page that uses it (the viewer shows pages)
    assert turn.changes[5].locate == {"file": "css/style.css", "page": "index.html"}


def test_reverting_the_new_card_alone_keeps_the_new_titles_and_the_persons_edit(site) -> None:
    after = _turn(site)
    files = TurnFilesFromMaps(site, after)
    turn = describe_turn(DESCRIBER, files)
    card = next(c for c in turn.changes if c.to_json()["what"]["en"] == "article added")
    exact = revert_contents(turn, files, card, {"index.html": after["index.html"]})["index.html"].decode()
    assert "New card" not in exact and "Why people love it" in exact and "Fair pricing" in exact
    assert exact.count('<article class="card">') == site["index.html"].decode().count('<article class="card">')
    # the person changed the brand since the turn: the revert keeps that too
    now = after["index.html"].decode().replace("> Lumen</a>", "> Lumen!</a>")
    edited = revert_contents(turn, files, card, {"index.html": now.encode()})["index.html"].decode()
    assert "New card" not in edited and "> Lumen!</a>" in edited and "Fair pricing" in edited


def test_a_removed_element_and_broken_pages_never_raise(site) -> None:
    index = site["index.html"].decode()
    start = index.index('    <section class="pricing"')
    end = index.index("</section>", start) + len("</section>\n")
    after = {**site, "index.html": (index[:start] + index[end:]).encode(),
             "about.html": b"<div><p>unclosed <span>text</div></section></body>",
             "js/app.js": b"\xff\xfe"}
    turn = describe_turn(DESCRIBER, TurnFilesFromMaps(site, after))
    summary = _summary(turn)
    assert "index.html › main: section removed" in summary
    assert [s for s in summary if s.startswith("about.html")], summary
    assert not [c for c in turn.changes if c.id.startswith("file:")]


def test_a_two_thousand_line_page_is_described_in_a_few_milliseconds() -> None:
    rows = "\n".join(f'    <li class="item">Item {n}</li>' for n in range(2000))
    page = f"<!doctype html>\n<html>\n<body>\n  <ul id=\"list\">\n{rows}\n  </ul>\n</body>\n</html>\n"
    changed = page.replace("Item 1500<", "Item fifteen hundred<")
    started = time.perf_counter()
    turn = describe_turn(DESCRIBER, TurnFilesFromMaps({"index.html": page.encode()}, {"index.html": changed.encode()}))
    took = time.perf_counter() - started
    assert _summary(turn) == ["index.html › #list > li.item:nth-of-type(1501): text changed"]
    assert took < 0.5, took


def test_the_webcraft_mode_registers_its_describer() -> None:
    from pneuma.host.plugins import build_plugin_manager
    from pneuma.host.turn_changes import all_describers

    assert all_describers(build_plugin_manager())["webcraft"] is DESCRIBER


def test_reverting_every_change_one_by_one_in_any_order_gives_back_the_page() -> None:
    import random

    rng = random.Random(28)
    pieces = ["<div>", "</div>", "<p>a</p>", "<p class=\"x\">b</p>", "<section id=\"s\">", "</section>", "<h2>T</h2>",
              "", "<ul>", "<li>x</li>", "</ul>"]
    checked = 0
    for _ in range(300):
        old = [rng.choice(pieces) for _ in range(rng.randint(3, 30))]
        new = list(old)
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(0, len(new))
            roll = rng.random()
            if roll < 0.4:
                new.insert(at, rng.choice(pieces))
            elif new:
                del new[min(at, len(new) - 1)]
                if roll > 0.7:
                    new.insert(min(at, len(new)), rng.choice(pieces))
        before = {"index.html": ("\n".join(old) + "\n").encode()}
        after = {"index.html": ("\n".join(new) + "\n").encode()}
        if before == after:
            continue
        files = TurnFilesFromMaps(before, after)
        turn = describe_turn(DESCRIBER, files)
        now = after["index.html"]
        for change in rng.sample(turn.changes, len(turn.changes)):
            now = revert_contents(turn, files, change, {"index.html": now})["index.html"]  # type: ignore[assignment]
        assert now == before["index.html"], (old, new)
        checked += 1
    assert checked > 250
