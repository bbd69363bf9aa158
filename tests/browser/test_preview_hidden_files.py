"""A page on the webcraft preview (its content site, pneuma.api.ContentSite)
cannot read the agent's instructions, however it spells the path: in real
Chromium, ``fetch('/.%2fCLAUDE.md')``, ``'/%2e%2fCLAUDE.md'``, ``AGENTS.md``
and symlinks to them or to ``.claude/`` all answer 404, while the page's
own files still load."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError

SECRET_TEXT = "AGENT-INSTRUCTIONS-SECRET"
HIDDEN_PATHS = ["/.%2fCLAUDE.md", "/%2e%2fCLAUDE.md", "/%2e/CLAUDE.md", "/.%2fAGENTS.md",
                "/%2e%2fAGENTS.md", "/AGENTS.md", "/docs/..%2fCLAUDE.md", "/notes.md",
                "/agents.txt", "/cfg/settings.json", "/here/CLAUDE.md", "/.%2f.claude/settings.json"]
PROBE = """<!doctype html><html><head><title>not run</title></head><body><script>
const paths = %s;
Promise.all(paths.map((p) => fetch(p).then(
  (r) => r.text().then((t) => [p, r.status, t.includes('%s')]),
  () => [p, 0, false])))
  .then((rows) => fetch('data.json').then((r) => r.json()).then((own) => {
    document.body.dataset.results = JSON.stringify({rows, own});
    document.title = 'probed';
  }));
</script></body></html>
"""


def _probe_results(page: Any) -> dict[str, Any]:
    """What the probe page found, once it is done."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = _ask_frame(page)
        if found is not None:
            return found
        time.sleep(0.1)
    raise AssertionError("the probe page never finished")


def _ask_frame(page: Any) -> dict[str, Any] | None:
    """The probe's results if its frame is done; None if not yet, or if a
    reload swapped the frame between the lookup and the question."""
    handle = page.locator("iframe.webcraft-frame[data-viewport='desktop']").element_handle()
    inner = handle.content_frame() if handle else None
    try:
        if inner is None or not inner.url.split("?")[0].endswith("/probe.html") \
                or inner.title() != "probed":
            return None
        return json.loads(inner.evaluate("() => document.body.dataset.results"))
    except PlaywrightError:  # detached mid-question: ask the new one next time
        return None


def test_a_preview_page_cannot_fetch_the_agents_files(pneuma_server: Any, open_page: Any) -> None:
    server = pneuma_server("webcraft", backend="none")
    ws = Path(server.workspace)
    for name in ("CLAUDE.md", "AGENTS.md"):
        (ws / name).write_text(SECRET_TEXT, encoding="utf-8")
    (ws / ".claude").mkdir(exist_ok=True)
    (ws / ".claude" / "settings.json").write_text(SECRET_TEXT, encoding="utf-8")
    (ws / "docs").mkdir(exist_ok=True)
    os.symlink("CLAUDE.md", ws / "notes.md")
    os.symlink("AGENTS.md", ws / "agents.txt")
    os.symlink(".claude", ws / "cfg")
    os.symlink(".", ws / "here")
    (ws / "data.json").write_text('{"own": "loaded"}', encoding="utf-8")
    (ws / "probe.html").write_text(PROBE % (json.dumps(HIDDEN_PATHS), SECRET_TEXT),
                                   encoding="utf-8")
    page = open_page(server)
    page.click('.webcraft-tab[data-page="probe.html"]')
    results = _probe_results(page)
    assert results["own"] == {"own": "loaded"}  # the page's own fetches still work
    served = [(path, status) for path, status, leaked in results["rows"]
              if leaked or status not in (403, 404)]
    assert served == [], served
    assert len(results["rows"]) == len(HIDDEN_PATHS)
