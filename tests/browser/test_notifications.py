"""Know when to step in (issue 26, item 4): a hidden tab tells the person
that a turn ended or that a permission waits, with a browser notification,
a badge in the title that clears when the tab is seen, and a sound if they
want one; the page's switches turn them off (docs/notifications.md).

The tab's visibility is emulated by an init script (document.visibilityState
and document.hidden follow ``window.__setHidden``, which dispatches
visibilitychange), and every notification the page makes is recorded
(``window.__notified``) on its way to Chromium's own; the context grants
the "notifications" permission as a person who said yes would have. The
first test runs the REAL Claude Code CLI against the fake Anthropic API
(a turn that ends, then a question from AskUserQuestion).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser.browser_helpers import send
from tests.browser.test_agent_viewer_actions import (  # noqa: F401  (fixtures)
    TURN,
    fake_api,
    loopback_only_network,
    start_with_real_cli,
)
from tests.fakes.anthropic_api import text, tool_use

HIDDEN_TAB = """
(() => {
  let hidden = false;
  Object.defineProperty(Document.prototype, 'visibilityState', { configurable: true, get: () => (hidden ? 'hidden' : 'visible') });
  Object.defineProperty(Document.prototype, 'hidden', { configurable: true, get: () => hidden });
  window.__setHidden = (value) => { hidden = value; document.dispatchEvent(new Event('visibilitychange')); };
  window.__notified = [];
  const Real = window.Notification;
  class Recorded extends Real {
    constructor(title, options) {
      window.__notified.push({ title, body: (options && options.body) || '' });
      super(title, options);
    }
  }
  Object.defineProperty(Recorded, 'permission', { get: () => Real.permission });
  Recorded.requestPermission = (...args) => Real.requestPermission(...args);
  window.Notification = Recorded;
  window.__tones = 0;
  const start = OscillatorNode.prototype.start;
  OscillatorNode.prototype.start = function (...args) { window.__tones += 1; return start.apply(this, args); };
})();
"""


def hidden_tab_page(open_page: Any, server: Any) -> Any:
    def prepare(page: Any) -> None:
        page.context.grant_permissions(["notifications"], origin=server.base)
        page.add_init_script(HIDDEN_TAB)

    return open_page(server, before_goto=prepare)


def notified(page: Any) -> list[dict[str, str]]:
    return page.evaluate("() => window.__notified")


def test_a_hidden_tab_is_told_when_the_real_agents_turn_ends(
        pneuma_server: Any, fake_api: Any, open_page: Any, tmp_path: Path, shot: Any) -> None:  # noqa: F811
    fake_api.push(text("Hi! What shall we write?"))
    server = start_with_real_cli(pneuma_server, fake_api, "doc")
    page = hidden_tab_page(open_page, server)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting, seen
    assert notified(page) == []

    fake_api.push(text("Done: the outline is ready."))
    page.evaluate("() => window.__setHidden(true)")
    send(page, "Write an outline, I'll be back.")
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    page.wait_for_function("() => window.__notified.length === 1")
    (shown,) = notified(page)
    assert shown["title"] == "The agent finished its turn"
    assert shown["body"].startswith("Doc"), shown
    page.wait_for_function("() => document.title.startsWith('(1) ')")

    page.evaluate("() => window.__setHidden(false)")
    page.wait_for_function("() => !document.title.startsWith('(')")
    assert notified(page) == [shown]

    # The agent asks a question (AskUserQuestion, the question card's): that waits for the person too.
    fake_api.push(text("One choice first."), tool_use("AskUserQuestion", {"questions": [
        {"question": "Short or long?", "header": "Length", "multiSelect": False,
         "options": [{"label": "Short", "description": ""}, {"label": "Long", "description": ""}]}]}))
    page.evaluate("() => window.__setHidden(true)")
    send(page, "Now the introduction.")
    page.wait_for_function("() => window.__notified.length === 2", timeout=TURN)
    assert notified(page)[1]["title"] == "The agent has a question for you"
    page.wait_for_function("() => document.title.startsWith('(1) ')")
    assert page.console_errors == []


def test_a_waiting_permission_notifies_and_the_switches_turn_it_off(
        pneuma_server: Any, fake_claude: Any, open_page: Any, tmp_path: Path, shot: Any) -> None:
    server = pneuma_server("doc", claude_bin=fake_claude.bin, args=("--permission-mode", "default"),
                           env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    page = hidden_tab_page(open_page, server)
    expect(page.locator(".result-line")).to_have_count(1, timeout=15_000)

    # The sound is on too, through the bell's menu.
    page.locator(".attention-btn").click()
    page.locator("[data-switch=notificationSound] input").check()
    expect(page.locator("[data-switch=notifications] input")).to_be_checked()
    expect(page.locator("[data-switch=followAgent] input")).to_be_checked()
    shot(page, "attention-menu")
    page.keyboard.press("Escape")

    page.evaluate("() => window.__setHidden(true)")
    send(page, "ask permission to write")
    page.wait_for_function("() => window.__notified.length === 1")
    assert notified(page)[0]["title"] == "The agent waits for your permission"
    assert notified(page)[0]["body"].startswith("Write · Doc")
    assert page.evaluate("() => window.__tones") >= 1
    page.wait_for_function("() => document.title.startsWith('(1) ')")
    page.locator(".permission .allow").click()
    page.wait_for_function("() => window.__notified.length === 2")  # the turn then ended
    assert notified(page)[1]["title"] == "The agent finished its turn"
    page.wait_for_function("() => document.title.startsWith('(2) ')")
    page.evaluate("() => window.__setHidden(false)")
    page.wait_for_function("() => !document.title.startsWith('(')")

    # Notifications off: a hidden tab gets its badge, no notification.
    page.locator(".attention-btn").click()
    page.locator("[data-switch=notifications] input").uncheck()
    page.locator("[data-switch=notificationSound] input").uncheck()
    page.keyboard.press("Escape")
    tones = page.evaluate("() => window.__tones")
    page.evaluate("() => window.__setHidden(true)")
    send(page, "hello again")
    expect(page.locator(".result-line")).to_have_count(3, timeout=15_000)
    page.wait_for_function("() => document.title.startsWith('(1) ')")
    assert len(notified(page)) == 2
    assert page.evaluate("() => window.__tones") == tones
    stored = tmp_path / "config" / "pneuma" / "preferences.json"
    deadline = time.monotonic() + 10
    while '"notifications": false' not in (stored.read_text() if stored.exists() else ""):
        assert time.monotonic() < deadline, "the switch was not kept with the preferences"
        time.sleep(0.05)
    assert page.console_errors == []
