"""The doc viewer's annotate and follow capabilities in the real shell and
Debian's Chromium (docs/doc.md, "Editing in place, pins, following the
agent"): with the Annotate switch on, selected text becomes a pin whose
marker sits at that text in the document, scrolling makes no pin, the pin's
place changes when its line changes on disk and not when another does, and
``reveal``/``revealPin`` bring a document and a pinned text to the front.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

INSTANCE = "window.pneuma.ui.host.instance"

SELECT_TEXT = """(wanted) => {
  const doc = document.querySelector('.pd-doc');
  const walker = document.createTreeWalker(doc, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.data.indexOf(wanted);
    if (at < 0) continue;
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + wanted.length);
    const selection = document.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    return true;
  }
  return false;
}"""


def test_a_selected_text_becomes_a_pin_with_a_marker_and_reveal_finds_it(
        pneuma_server: Any, open_page: Any) -> None:
    server = pneuma_server("doc", backend="none")
    page = open_page(server)
    expect(page.locator(".pd-doc h1")).to_contain_text("Welcome", timeout=20_000)
    assert page.evaluate("() => window.pneuma.ui.host.module.capabilities") == ["annotate", "edit", "follow"]

    page.locator(".annotate-toggle").click()
    expect(page.locator(".annotate-toggle")).to_have_attribute("aria-checked", "true")
    # Scrolling says where the person is: no pin.
    page.locator(".pd-scroll").evaluate("(el) => { el.scrollTop = 400; }")
    page.locator(".pd-scroll").evaluate("(el) => { el.scrollTop = 0; }")
    assert page.evaluate(SELECT_TEXT, "where you and the agent write documents")
    box = page.locator(".pin-box textarea")
    expect(box).to_be_visible(timeout=5_000)
    box.fill("Say who the agent is")
    box.press("Enter")
    expect(page.locator(".pin-item")).to_have_count(1)
    marker = page.locator(".pd-pin-marker")
    expect(marker).to_have_text("1")
    # The marker sits at the pinned text's line.
    # (Its box is read once the viewer has placed it: markers are drawn
    # again as the document settles, and one being replaced has no box.)
    page.wait_for_function("""() => {
      const marker = document.querySelector('.pd-pin-marker');
      const paragraph = document.querySelector('.pd-doc > p');
      if (!marker || !paragraph || !marker.isConnected) return false;
      const top = marker.getBoundingClientRect().top;
      return marker.getClientRects().length > 0
        && Math.abs(top - paragraph.getBoundingClientRect().top) < 24;
    }""")

    # The place: the source line holding the text, changed only with that line.
    selection = {"file": "README.md", "text": "where you and the agent write documents"}
    place = f"(s) => {INSTANCE}.pinPlace(s, window.pneuma.ui.host.files)"
    before = page.evaluate(place, selection)
    assert before.startswith("This folder is where you and the agent"), before
    readme = server.workspace / "README.md"
    readme.write_text(readme.read_text().replace("## How it works", "## How it really works"))
    expect(page.locator(".pd-doc h2").first).to_contain_text("really")
    assert page.evaluate(place, selection) == before
    readme.write_text(readme.read_text().replace("where you and the agent write", "where we write"))
    page.wait_for_function(f"(p) => {INSTANCE}.pinPlace(p.s, window.pneuma.ui.host.files) !== p.before",
                           arg={"s": selection, "before": before})

    # Follow: another document to the front, then the pin's text back.
    assert page.evaluate(f"() => {INSTANCE}.reveal('guide/markdown.md')") is True
    expect(page.locator('.pd-tab[aria-selected="true"]')).to_have_attribute("data-path", "guide/markdown.md")
    assert page.evaluate(f"() => {INSTANCE}.reveal('nowhere.md')") is False
    page.evaluate(f"() => {INSTANCE}.revealPin({{id: 'x', number: 1, status: 'open', selection: {{file: 'README.md', text: 'every change shows up'}}}})")
    expect(page.locator('.pd-tab[aria-selected="true"]')).to_have_attribute("data-path", "README.md")
    expect(page.locator(".pd-doc .pd-flash")).to_contain_text("every change shows up")
    assert page.console_errors == []
