"""The mode-maker with the REAL Claude Code CLI (issue 31, "Done when"):
`pneuma run --mode mode-maker` run by the Python of a throwaway virtualenv
(it sees the suite's .venv through a .pth file, so an install changes only
the throwaway one), its agent the real CLI against the fake Anthropic
Messages API (tests/fakes/anthropic_api.py), the shell in Debian's
Chromium, everything in the loopback-only network namespace.

The scripted model edits the new mode's viewer with the CLI's own Edit
tool and the Play frame shows the edit; the test plants a missing Chinese
string and the page's Check lists the locales check; once it is put back,
Install installs the package editable and `pneuma modes` of that
environment lists the new mode.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import (
    READY_LINE,
    kill_process_group,
    read_first_line,
    send,
    viewer_answer,
)
from tests.browser.test_agent_viewer_actions import (
    TURN,
    ThreadedFakeAPI,
    fake_api,  # noqa: F401 (the fixture)
)
from tests.e2e.pneuma_run import CLAUDE_BIN
from tests.fakes.anthropic_api import text, tool_use
from tests.loopback import fail_unless_loopback_only
from tests.mode_sources.mode_env import ModeEnv, make_mode_env

pytestmark = pytest.mark.skipif(
    CLAUDE_BIN is None,
    reason="the real Claude Code CLI is not installed: pip install claude-agent-sdk==0.2.187",
)
CHECK_MS = 90_000  # the full check mounts the viewer in a Chromium of its own
PACKAGE = "pneuma_kanban"
_FOREIGN_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDECODE", "PNEUMA_CLAUDE_BIN", "HTTP_PROXY",
                "HTTPS_PROXY", "PNEUMA_LOAD_PLUGINS")


@pytest.fixture(autouse=True)
def loopback_only_network() -> None:
    fail_unless_loopback_only("the mode-maker agent turn", "tests/browser/test_mode_maker_agent.py")


@pytest.fixture
def maker_run(tmp_path: Path, fake_api: ThreadedFakeAPI) -> Iterator[tuple[Any, ModeEnv]]:  # noqa: F811
    """`python -m pneuma run --mode mode-maker --param name=kanban` of a
    throwaway virtualenv, with the real CLI as its agent."""
    venv = make_mode_env(tmp_path / "venv")
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    workspace = tmp_path / "ws"
    env = {k: v for k, v in venv.env.items() if k not in _FOREIGN_ENV}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"), PYTHONUNBUFFERED="1",
               ANTHROPIC_BASE_URL=fake_api.base_url, ANTHROPIC_API_KEY="sk-test",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1",
               DISABLE_ERROR_REPORTING="1", IS_SANDBOX="1")
    command = [venv.python, "-m", "pneuma", "run", "--mode", "mode-maker", "--workspace", str(workspace),
               "--no-open", "--no-prompt", "--port", "0", "--backend", "claude-code",
               "--claude-bin", str(CLAUDE_BIN), "--param", "name=kanban"]
    stderr_path = tmp_path / "pneuma-run.stderr"
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(command, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=stderr, start_new_session=True)
    try:
        line = read_first_line(process, 30.0)
        match = READY_LINE.match(line or "")
        assert match, f"no ready line ({line!r}): {stderr_path.read_text(errors='replace')[-3000:]}"
        yield SimpleNamespace(url=line.split(" ", 2)[2], base=match["base"], token=match["token"],
                              workspace=workspace.resolve()), venv
    finally:
        kill_process_group(process)


def test_the_agent_builds_the_mode_play_shows_it_check_finds_the_planted_fault_install_lists_it(
        maker_run: tuple[Any, ModeEnv], fake_api: ThreadedFakeAPI, open_page: Any, shot: Any) -> None:  # noqa: F811
    server, venv = maker_run
    fake_api.push(text("Hi! This is the kanban mode's package, made from the template."))
    page = open_page(server, viewport={"width": 1400, "height": 900})
    frame = page.frame_locator("iframe.mm-play-frame")
    expect(frame.locator(".pm-page h1")).to_have_text("Welcome to Kanban", timeout=TURN)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting turn

    # The agent edits the new mode's viewer with its own Edit tool; Play shows it.
    viewer = str(server.workspace / PACKAGE / "static" / "viewer.js")
    fake_api.push(tool_use("Read", {"file_path": viewer}))
    fake_api.push(tool_use("Edit", {
        "file_path": viewer,
        "old_string": "'<nav class=\"pm-nav\" aria-label=\"Pages\"></nav>' +",
        "new_string": "'<h2 class=\"kb-title\">Kanban board</h2><nav class=\"pm-nav\" aria-label=\"Pages\"></nav>' +"}))
    fake_api.push(text("The viewer now shows the board's title above the pages."))
    frame.locator(".pm-page h1").click()  # a selection made in Play, as the new mode's own context
    expect(page.locator(".mm-selection-context")).to_contain_text('file="welcome.md"')
    send(page, "Give the viewer a title: Kanban board")
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    assert fake_api.pending() == 0
    asked = fake_api._on_loop(lambda: fake_api.api.conversation_requests())
    said = [str(m["content"]) for r in asked for m in r["messages"]
            if m.get("role") == "user" and "Kanban board" in str(m["content"])]
    assert said and '<viewer-context mode="kanban" file="welcome.md" line="1" block="heading">' in said[0], said
    expect(frame.locator(".kb-title")).to_have_text("Kanban board", timeout=20_000)
    shot(page, "mode-maker-play")

    # A Chinese string goes missing: Check names the locales check.
    manifest = server.workspace / PACKAGE / "manifest.json"
    before = manifest.read_text()
    assert '"zh-CN": "Kanban"' in before
    manifest.write_text(before.replace(', "zh-CN": "Kanban"', "", 1))
    page.locator(".mm-check").click()
    expect(page.locator(".mm-check")).to_be_disabled()
    expect(page.locator(".mm-check")).to_be_enabled(timeout=CHECK_MS)
    assert page.locator(".mm-status").inner_text().endswith("1 check(s) failed"), page.locator(".mm-status").inner_text()
    expect(page.locator('.mm-failure[data-check="locales"]')).to_contain_text("zh-CN")
    expect(page.locator(".mm-install")).to_be_enabled()
    told = viewer_answer(server, "describe-view")["message"]  # what the agent reads of it
    assert "check: 1 of" in told and "✗ locales:" in told, told

    # Install refuses a mode that fails its check, says which, and installs it when asked anyway.
    page.locator(".mm-install").click()
    expect(page.locator(".mm-status")).to_contain_text("The install failed: kanban fails the check: locales",
                                                       timeout=CHECK_MS + 60_000)
    assert "kanban" not in venv.modes()
    page.locator(".mm-install-anyway").click()
    expect(page.locator(".mm-status")).to_contain_text("Installed kanban 0.1.0", timeout=CHECK_MS)
    expect(page.locator(".mm-install-anyway")).to_be_hidden()
    modes = venv.modes()
    assert "kanban" in modes, sorted(modes)
    assert modes["kanban"]["editable"] is True and modes["kanban"]["distribution"] == "pneuma-kanban"
