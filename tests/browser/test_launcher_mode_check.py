"""A mode's check report on its launcher card, in real Chromium: "Check"
runs `pneuma mode check` on the installed mode through the launcher and the
card lists each failed check by name with its message; a reloaded page shows
the kept report at once; a mode that is not installed is a 404 with its code.

The mode checked is a freshly generated one with a Chinese label taken out,
installed for the launcher only (its folder and a dist-info on PYTHONPATH):
the card shows the `locales` check failed and every other check passed
(tests/mode_check/test_static_checks.py holds the same finding)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import kill_process_group, read_first_line
from tests.mode_check.generated import drop_chinese_action_label, generated_mode

READY = re.compile(r"^\[pneuma\] launcher ready (?P<base>http://127\.0\.0\.1:\d+)/\?token=(?P<token>\S+)$")
CHECK_MS = 90_000  # a whole check of one mode: its own server, Chromium and exports


@pytest.fixture(scope="module")
def launcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("launcher-check")
    project = generated_mode(root / "modes")
    drop_chinese_action_label(project)
    info = project / "pneuma_probemode-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pneuma-probemode\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[pneuma]\nprobemode = pneuma_probemode\n")
    env = {**os.environ, "HOME": str(root / "home"), "PNEUMA_HOME": str(root / "pneuma-home"),
           "XDG_CONFIG_HOME": str(root / "config"), "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(project), os.environ.get("PYTHONPATH")]))}
    env.pop("PNEUMA_LOAD_PLUGINS", None)
    process = subprocess.Popen([sys.executable, "-m", "pneuma", "open", "--no-open", "--port", "0"],
                               cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=(root / "launcher.stderr").open("wb"), start_new_session=True)
    try:
        match = READY.match(read_first_line(process, 30.0) or "")
        assert match, (root / "launcher.stderr").read_text(errors="replace")[-3000:]
        yield type("Launcher", (), {"base": match["base"], "token": match["token"], "root": root})
    finally:
        kill_process_group(process)


def post(launcher: Any, path: str) -> tuple[int, Any]:
    request = urllib.request.Request(f"{launcher.base}{path}", data=b"{}", method="POST", headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {launcher.token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_the_card_runs_the_check_and_lists_what_failed(browser: Any, launcher: Any, tmp_path: Path) -> None:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{launcher.base}/?token={launcher.token}")
        report = page.locator(".ln-check[data-mode='probemode']")
        expect(report.locator(".ln-check-run")).to_have_text("Check", timeout=15_000)
        report.locator(".ln-check-run").click()
        expect(report.locator(".ln-check-run")).to_have_text("Checking…")
        failed = report.locator(".ln-check-failed li")
        expect(failed).to_have_count(1, timeout=CHECK_MS)
        expect(failed.locator("strong")).to_have_text("locales")
        expect(failed.locator("code")).to_contain_text("no zh-CN text")
        expect(report.locator(".ln-check-failed > span")).to_have_text("✗ Failed checks: 1")
        # The launcher kept it for this version of the mode: a new page shows it at once.
        page.reload()
        expect(page.locator(".ln-check[data-mode='probemode'] .ln-check-failed li strong")).to_have_text("locales")
        expect(page.locator(".ln-check[data-mode='slide'] .ln-check-failed")).to_have_count(0)
        assert errors == []
    finally:
        page.close()
    status, answer = post(launcher, "/api/modes/no-such-mode/check")
    assert status == 404 and answer["error"]["code"] == "E_NOT_FOUND"
