"""The mode-maker's page in the real shell and Chromium (docs/mode-maker.md).

One `pneuma run --mode mode-maker` without an agent for the module: the
workspace is seeded with the template's package (mode `mymode`); the page
plays its viewer in the sandboxed Play frame on its own seed files. Files
are edited on disk as the agent edits them; what the person sees is read
from the page and from inside the frame.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import (
    READY_LINE,
    api_call,
    kill_process_group,
    read_first_line,
    viewer_answer,
)
from tests.browser.module_run import module_page

PACKAGE = "pneuma_mymode"
VIEWER = f"{PACKAGE}/static/viewer.js"
WAIT = 20_000


@contextmanager
def maker_run(root: Path, *params: str) -> Iterator[SimpleNamespace]:
    """`pneuma run --mode mode-maker --backend none` with every installed
    mode loadable: the check's child process loads the package under
    construction beside them (tests/browser/module_run.py would restrict the
    plugins to the mode-maker alone). ``params``: ``name=…``, ``from=…``."""
    workspace, home = root / "ws", root / "home"
    (home / ".claude").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PNEUMA_LOAD_PLUGINS", "ANTHROPIC_BASE_URL")}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"), PYTHONUNBUFFERED="1",
               # Package builds offline with the hatchling already installed.
               PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0")
    command = [str(Path(sys.executable).with_name("pneuma")), "run", "--mode", "mode-maker", "--workspace",
               str(workspace), "--no-open", "--no-prompt", "--port", "0", "--backend", "none"]
    for param in params:  # name=…, from=…
        command += ["--param", param]
    with (root / "pneuma-run.stderr").open("wb") as stderr:
        process = subprocess.Popen(command, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=stderr, start_new_session=True)
    try:
        line = read_first_line(process, 30.0)
        match = READY_LINE.match(line or "")
        assert match, f"no ready line ({line!r}): {(root / 'pneuma-run.stderr').read_text()[-3000:]}"
        yield SimpleNamespace(url=line.split(" ", 2)[2], base=match["base"], token=match["token"],
                              workspace=workspace.resolve())
    finally:
        kill_process_group(process)


@pytest.fixture(scope="module")
def maker(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any, dict[str, str]]]:
    """The server, one page on it, and the package's files as seeded (the
    tests put back what they changed)."""
    with maker_run(tmp_path_factory.mktemp("maker")) as server:
        with module_page(browser, server.url) as page:
            # The package is written while the server builds its routes,
            # after the early server's ready line: Play shows it once it is.
            expect(play(page).locator(".pm-page h1")).to_have_text("Welcome to Mymode", timeout=WAIT)
            seeded = {p.relative_to(server.workspace).as_posix(): p.read_text()
                      for p in (server.workspace / PACKAGE).rglob("*") if p.is_file() and "__pycache__" not in p.parts}
            yield server, page, seeded


@pytest.fixture
def made(maker: tuple[Any, Any, dict[str, str]]) -> Iterator[tuple[Any, Any]]:
    server, page, seeded = maker
    yield server, page
    changed = [path for path, text in seeded.items() if (server.workspace / path).read_text() != text]
    loads = play_loads(page)
    for path in changed:
        (server.workspace / path).write_text(seeded[path])
    if changed:  # the next test starts on the package as seeded, played again
        page.wait_for_function(
            "n => Number(document.querySelector('iframe.mm-play-frame').dataset.generation) > n"
            " && document.querySelector('.mm-play-status').dataset.status === 'mounted'", arg=loads, timeout=WAIT)


def play_loads(page: Any) -> int:
    """How many times Play has loaded the viewer (each load is a new frame)."""
    return int(page.locator("iframe.mm-play-frame").get_attribute("data-generation") or 0)


def play(page: Any) -> Any:
    return page.frame_locator("iframe.mm-play-frame")


def edit(server: Any, path: str, old: str, new: str) -> None:
    file = server.workspace / path
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new, 1))


def test_the_workspace_is_the_template_package_and_play_mounts_its_viewer(made: tuple[Any, Any]) -> None:
    server, page = made
    assert json.loads((server.workspace / PACKAGE / "manifest.json").read_text())["name"] == "mymode"
    expect(play(page).locator(".pm-page h1")).to_have_text("Welcome to Mymode", timeout=WAIT)
    frame = page.locator("iframe.mm-play-frame")
    assert frame.get_attribute("sandbox") == "allow-scripts"
    expect(page.locator(".mm-summary")).to_contain_text("show-file")
    expect(page.locator(".mm-summary")).to_contain_text("outline")
    expect(page.locator(f'.mm-file[data-path="{VIEWER}"]')).to_have_count(1)


def test_an_edit_to_the_viewer_reloads_play(made: tuple[Any, Any]) -> None:
    server, page = made
    expect(play(page).locator(".pm-page h1")).to_have_text("Welcome to Mymode", timeout=WAIT)
    edit(server, VIEWER, "'<nav class=\"pm-nav\" aria-label=\"Pages\"></nav>' +",
         "'<p class=\"made-by-test\">Edited by the test</p><nav class=\"pm-nav\" aria-label=\"Pages\"></nav>' +")
    expect(play(page).locator(".made-by-test")).to_have_text("Edited by the test", timeout=WAIT)
    answer = viewer_answer(server, "describe-view")
    assert "Edited by the test" in answer["message"] and answer["data"]["play"]["status"] == "mounted"


def test_an_error_the_viewer_throws_is_shown_in_the_problem_box(made: tuple[Any, Any]) -> None:
    server, page = made
    edit(server, VIEWER, "    this.load(ctx.files);", "    throw new Error('the test broke mount');")
    expect(page.locator(".mm-problems")).to_contain_text("the test broke mount", timeout=WAIT)
    answer = viewer_answer(server, "navigate-to", {"file": VIEWER})
    assert answer["success"] is False and "the test broke mount" in answer["message"]


def test_the_viewer_under_construction_cannot_reach_the_api(made: tuple[Any, Any]) -> None:
    server, page = made
    probe = (
        "    fetch('/api/config').then((r) => r.text(), (e) => 'refused: ' + e.name)"
        ".then((t) => { const p = document.createElement('p'); p.className = 'api-probe';"
        " p.textContent = 'answer: ' + t; document.body.appendChild(p); });\n"
        "    this.load(ctx.files);"
    )
    edit(server, VIEWER, "    this.load(ctx.files);", probe)
    expect(play(page).locator(".api-probe")).to_have_text("answer: refused: TypeError", timeout=WAIT)
    status, config = api_call(server, "GET", "/api/config")
    assert status == 200 and config  # the API answers the shell, not the frame


def test_a_selection_made_in_play_becomes_the_makers_selection(made: tuple[Any, Any]) -> None:
    server, page = made
    play(page).locator(".pm-page h1").click()
    expect(page.locator(".mm-selection-context")).to_contain_text('<viewer-context mode="mymode" file="welcome.md"',
                                                                  timeout=WAIT)
    answer = viewer_answer(server, "describe-view")
    assert 'file="welcome.md"' in answer["message"]
    result = viewer_answer(server, "play-action", {"actionId": "show-file", "params": {"file": "welcome.md"}})
    assert result["success"] is True and result["data"]["result"]["success"] is True


def test_a_bad_request_to_the_makers_routes_is_a_clear_4xx(made: tuple[Any, Any]) -> None:
    server, _page = made
    status, answer = api_call(server, "POST", "/api/mode-maker/install", [1, 2])
    assert status == 400 and answer["error"]["code"] == "E_BAD_ARGS"


def test_package_builds_a_wheel_of_the_mode_into_dist(made: tuple[Any, Any]) -> None:
    server, page = made
    page.locator(".mm-package").click()
    expect(page.locator(".mm-check")).to_be_disabled()
    expect(page.locator(".mm-status")).to_have_text(
        "Wheel written: dist/pneuma_mymode-0.1.0-py3-none-any.whl", timeout=90_000)
    with zipfile.ZipFile(server.workspace / "dist" / "pneuma_mymode-0.1.0-py3-none-any.whl") as wheel:
        names = set(wheel.namelist())
        manifest = json.loads(wheel.read("pneuma_mymode/manifest.json"))
    assert {"pneuma_mymode/static/viewer.js", "pneuma_mymode/seeds/welcome.md"} <= names
    assert manifest["name"] == "mymode"
    assert not any(name.startswith((".pneuma/", ".claude/", "CLAUDE.md")) for name in names)


def test_the_agent_checks_quickly_and_installs_or_packages_only_when_it_says_so(made: tuple[Any, Any]) -> None:
    server, page = made
    checked = viewer_answer(server, "run-check", wait=60, timeout=90)
    assert checked["success"] is True, checked
    assert [r["check"] for r in checked["data"]["results"]] == ["manifest", "imports", "locales"]
    wheels = sorted(server.workspace.glob("dist/*.whl"))
    for action in ("install-mode", "package-mode"):
        answer = viewer_answer(server, action)
        assert answer["success"] is False and '{"confirm": true}' in answer["message"], answer
    assert sorted(server.workspace.glob("dist/*.whl")) == wheels
    expect(page.locator(".mm-status")).to_have_text("Every check passed (3)")
