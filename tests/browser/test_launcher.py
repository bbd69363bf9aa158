"""The launcher in real Chromium: `pneuma open` as a subprocess (its list in
a temporary PNEUMA_HOME, the fake Claude Code CLI as every workspace's
agent), a workspace created from the gallery opening as a working session,
a `pneuma run` of another terminal listed beside it, and the page in
Chinese with no English left in its own words."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browser_helpers import (
    ALLOWED_WORDS,
    english_words,
    kill_process_group,
    read_first_line,
    send,
    visible_texts,
)

TURN = 15_000  # ms a fake CLI turn may take in the page

LAUNCHER_READY = re.compile(r"^\[pneuma\] launcher ready (?P<base>http://127\.0\.0\.1:\d+)/\?token=(?P<token>[A-Za-z0-9_\-]+)$")
BUILT_IN = ["coauthor", "dashboard", "diagram", "doc", "draw", "illustrate", "mode-maker", "print", "slide", "video",
            "webcraft", "webgal"]

# Byte units stay as they are in every language.
LAUNCHER_ALLOWED = ALLOWED_WORDS | {"kB", "MB", "GB"}
# What is not the launcher's own words: folder names and paths, what the
# conversation said, commands, and the modes' own texts (their names and
# descriptions come from their manifests, in their own words).
NOT_CHROME = ".ln-path, .ln-ws-name, .ln-last-text, code, .ln-card-name, .ln-card-desc, .ln-chip, .ln-dialog-head p, .ln-failed"


def launcher_english(texts: list[str], names: list[str]) -> list[str]:
    """English words in the launcher's own texts, less paths and the modes'
    display names (which a label may quote)."""
    cleaned = []
    for text in texts:
        for name in names:
            text = text.replace(name, "")
        cleaned.append(re.sub(r"\S*/\S*", "", text))  # paths
    return english_words(cleaned, LAUNCHER_ALLOWED)


@pytest.fixture
def launcher(tmp_path: Path, fake_claude: Any) -> Iterator[Callable[[], Any]]:
    started: list[subprocess.Popen] = []

    def start() -> Any:
        home = tmp_path / "home"
        (home / ".claude").mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "CLAUDE", "PNEUMA_LOAD_PLUGINS"))}
        env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"), PYTHONUNBUFFERED="1",
                   PNEUMA_HOME=str(tmp_path / "pneuma-home"))
        pneuma = Path(sys.executable).with_name("pneuma")
        stderr = (tmp_path / "launcher.stderr").open("wb")
        process = subprocess.Popen(
            [str(pneuma), "open", "--no-open", "--port", "0", "--claude-bin", str(fake_claude.bin)],
            cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr,
            start_new_session=True)
        started.append(process)
        line = read_first_line(process, 20.0) or ""
        match = LAUNCHER_READY.match(line)
        if not match:
            kill_process_group(process)
            raise AssertionError(f"no launcher ready line (got {line!r}): "
                                 + (tmp_path / "launcher.stderr").read_text(errors="replace")[-3000:])
        return type("Launcher", (), {"url": line.split(" ", 3)[3], "base": match["base"],
                                     "home": home, "process": process})

    yield start
    for process in started:
        kill_process_group(process)


def _new_page(browser: Any, locale: str, color_scheme: str = "light") -> Any:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale=locale,
                                  color_scheme=color_scheme)
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda m: page.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.console_errors.append(f"pageerror: {e}"))
    return page


def _settled(page: Any) -> None:
    """Fonts loaded (the CJK slices come on demand), animations over: ready to be looked at."""
    for _ in range(3):  # a slice that finished loading can reveal text needing another
        page.wait_for_timeout(200)
        page.wait_for_function("() => document.fonts.status === 'loaded'")


def test_the_launcher_creates_a_doc_workspace_and_lists_a_pneuma_run_beside_it(
        browser, launcher, pneuma_server, tmp_path, shot):
    other = pneuma_server("slide", backend="none", workspace=tmp_path / "talk",
                          env={"PNEUMA_HOME": str(tmp_path / "pneuma-home")})
    served = launcher()
    page = _new_page(browser, "en-US")
    try:
        page.goto(served.url)
        cards = page.locator(".ln-card")
        expect(cards).to_have_count(len(BUILT_IN), timeout=10_000)
        assert sorted(cards.evaluate_all("els => els.map(e => e.dataset.mode)")) == BUILT_IN
        expect(page.locator(".ln-card[data-mode='doc'] .ln-card-name")).to_have_text("Documents")
        expect(page.locator(".ln-card[data-mode='doc'] .ln-badge")).to_have_text("Built-in")
        # Every icon is an image that loaded (a data: URL, never live SVG markup).
        assert page.locator(".ln-card svg").count() == 0
        expect(page.locator(".ln-card .ln-icon img")).to_have_count(len(BUILT_IN))
        page.wait_for_function("() => [...document.querySelectorAll('.ln-card img')].every(i => i.complete && i.naturalWidth > 0)")
        # The `pneuma run` of another terminal is listed, served by it.
        talk = page.locator(f".ln-row[data-path='{other.workspace}']")
        expect(talk).to_be_visible(timeout=10_000)
        expect(talk.locator(".ln-status")).to_have_text("Running elsewhere")
        _settled(page)
        shot(page, "launcher-en", full_page=True)

        # A doc workspace from the gallery, by keyboard: the card, the dialog, Enter.
        page.locator(".ln-card[data-mode='doc']").focus()
        page.keyboard.press("Enter")
        folder = page.locator("#ln-folder")
        expect(folder).to_be_focused()
        expect(folder).to_have_value("~/Pneuma/doc")
        _settled(page)
        shot(page, "launcher-new-doc-en")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/\?session=[^&]+&token="), timeout=20_000)
        assert not page.url.startswith(served.base)  # the workspace's own server
        page.wait_for_selector('.pill[data-state="open"]', timeout=15_000)
        expect(page.locator(".pd-doc h1").first).to_contain_text(
            "Welcome to your document workspace", timeout=10_000)
        shot(page, "launcher-doc-session")

        # Back in the launcher: both workspaces listed, the doc one running here.
        page.goto(served.url)
        doc_path = str((served.home / "Pneuma" / "doc").resolve())
        doc = page.locator(f".ln-row[data-path='{doc_path}']")
        expect(doc.locator(".ln-status")).to_have_text("Running here", timeout=10_000)
        expect(page.locator(f".ln-session[data-path='{doc_path}']")).to_be_visible()
        expect(page.locator(f".ln-row[data-path='{other.workspace}']")).to_be_visible()
        page.locator(".ln-search input").fill("talk")
        expect(page.locator(".ln-row")).to_have_count(1)
        expect(page.locator(".ln-row .ln-ws-name")).to_have_text("talk")
        assert page.console_errors == []
    finally:
        page.context.close()


def test_the_launcher_in_chinese_has_no_english_left(browser, launcher, shot):
    served = launcher()
    page = _new_page(browser, "zh-CN", color_scheme="dark")
    try:
        page.goto(served.url)
        expect(page.locator(".ln-card")).to_have_count(len(BUILT_IN), timeout=10_000)
        expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
        expect(page.locator(".ln-card[data-mode='doc'] .ln-card-name")).to_have_text("文档")
        expect(page.locator(".ln-hero h1")).to_have_text("今天想创作什么？")
        expect(page.locator(".ln-empty")).to_be_visible()
        texts = visible_texts(page, NOT_CHROME)
        assert any("最近的工作区" in text for text in texts), texts
        names = page.locator(".ln-card-name").all_inner_texts()
        words = launcher_english(texts, names)
        assert not words, f"English words {words} in the Chinese launcher: {texts}"
        _settled(page)
        shot(page, "launcher-zh-CN-dark", full_page=True)

        # The dialog of a mode with params, and a refused folder, in Chinese too.
        page.locator(".ln-card[data-mode='coauthor']").click()
        expect(page.locator(".ln-dialog")).to_be_visible()
        page.locator("#ln-folder").fill("/")
        page.locator(".ln-dialog button[type=submit]").click()
        expect(page.locator(".ln-field-error")).to_have_text(
            "请为工作区单独选一个文件夹，不要用 / 或你的主文件夹。")
        texts = visible_texts(page, NOT_CHROME + ", .ln-params label, .ln-help:not(#ln-folder-help), option")
        words = launcher_english(texts, names)
        assert not words, f"English words {words} in the Chinese dialog: {texts}"
        _settled(page)
        shot(page, "launcher-zh-CN-dialog")
        page.keyboard.press("Escape")
        expect(page.locator(".ln-dialog")).to_have_count(0)

        page.locator(".lang-btn[data-locale='en']").click()
        expect(page.locator(".ln-hero h1")).to_have_text("What shall we make?")
        # Chromium logs the refused request itself (400); nothing else went wrong.
        assert [e for e in page.console_errors if "status of 400" not in e] == []
    finally:
        page.context.close()


def test_from_the_gallery_to_a_rewind_in_the_chat_and_back_from_the_terminal(
        browser, launcher, shot):
    """Issue 16's whole journey: a doc workspace made from the gallery, two
    turns of the (fake) agent each changing a file, "Rewind to here" on the
    first turn restoring both, the rewind listed in the chat and by
    `pneuma checkpoints`, and undone from the terminal."""
    served = launcher()
    page = _new_page(browser, "en-US")
    try:
        page.goto(served.url)
        page.locator(".ln-card[data-mode='doc']").click()
        page.locator(".ln-dialog button[type=submit]").click()
        page.wait_for_url(re.compile(r"/\?session=[^&]+&token="), timeout=20_000)
        page.wait_for_selector('.pill[data-state="open"]', timeout=15_000)
        workspace = (served.home / "Pneuma" / "doc").resolve()
        readme, added = workspace / "README.md", workspace / "notes" / "later.md"
        original = readme.read_text()
        expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting

        for count, text in ((2, "write README.md # Rewritten by the agent"),
                            (3, "write notes/later.md Added in turn two")):
            send(page, text)
            expect(page.locator(".result-line")).to_have_count(count, timeout=TURN)
            expect(page.locator(".pill")).to_have_attribute("data-status", "idle", timeout=TURN)
        assert readme.read_text() == "# Rewritten by the agent\n" and added.exists()
        first = page.locator('.turn-changes[data-ref="1"]')
        expect(first.locator(".changes-chip")).to_contain_text("1 file changed", timeout=TURN)

        first.locator(".rewind-btn").click()
        dialog = page.locator(".rewind-dialog")
        expect(dialog.locator(".detail-write")).to_contain_text("README.md")
        expect(dialog.locator(".detail-delete")).to_contain_text("notes/later.md")
        dialog.locator(".rewind-confirm").click()
        expect(page.locator('.rewind-note[data-target="1"]')).to_contain_text(
            "Rewound to before turn 1: 2 files restored", timeout=TURN)
        assert readme.read_text() == original and not added.exists()
        shot(page, "journey-rewound")

        # The terminal sees the same checkpoints, the rewind among them, and undoes it.
        pneuma = str(Path(sys.executable).with_name("pneuma"))
        listed = subprocess.run([pneuma, "checkpoints", "list", "-w", str(workspace), "--json"],
                                capture_output=True, text=True, timeout=60)
        assert listed.returncode == 0, listed.stderr
        refs = [c["ref"] for c in json.loads(listed.stdout)["checkpoints"]]
        assert refs[:2] == ["1", "2"] and "u1" in refs, refs
        undone = subprocess.run([pneuma, "checkpoints", "restore", "u1", "-w", str(workspace),
                                 "--yes"], capture_output=True, text=True, timeout=60)
        assert undone.returncode == 0, undone.stderr
        assert readme.read_text() == "# Rewritten by the agent\n"
        assert added.read_text() == "Added in turn two\n"
        # The viewer follows the files the terminal put back.
        expect(page.locator(".pd-doc h1").first).to_contain_text("Rewritten by the agent",
                                                                 timeout=TURN)
        # And the chat lists that undo as it lists its own, saying where it was made.
        from_terminal = page.locator('.rewind-note[data-target="u1"]')
        expect(from_terminal).to_contain_text("Rewind undone: 2 files restored", timeout=TURN)
        expect(from_terminal.locator(".rewind-origin")).to_contain_text("Made from the terminal")
        shot(page, "journey-undone-from-terminal")
        assert page.console_errors == []
    finally:
        page.context.close()


def test_the_new_workspace_dialog_picks_a_backend_and_says_why_one_cannot_work(
        browser, launcher, shot):
    # The launcher runs without any credentials (see the fixture): its
    # default claude-code is shown as not usable, with what it needs.
    served = launcher()
    page = _new_page(browser, "en-US")
    try:
        page.goto(served.url)
        page.locator(".ln-card[data-mode='doc']").click()
        picker = page.locator("#ln-backend")
        expect(picker).to_have_value("claude-code")
        expect(picker.locator("option[value='claude-code']")).to_have_text(
            "claude-code (not usable now)")
        expect(picker.locator("option[value='none']")).to_have_text("none")
        problem = page.locator(".ln-backend-problem")
        expect(problem).to_contain_text("The claude-code backend cannot work now")
        expect(problem).to_contain_text("credentials")
        expect(problem).to_contain_text("claude login")
        shot(page, "launcher-backend-picker")

        picker.select_option("none")
        expect(problem).to_have_count(0)
        page.locator(".ln-dialog button[type=submit]").click()
        page.wait_for_url(re.compile(r"/\?session=[^&]+&token="), timeout=20_000)
        config = page.evaluate("() => fetch('/api/config').then(r => r.json())")
        assert config["backend"] == "none"
        assert page.console_errors == []
    finally:
        page.context.close()


def test_a_refused_launcher_page_says_which_link_to_open(browser, launcher):
    # The cookie the launcher's link set is gone (it restarted with a new
    # token): the page is cached, its API answers 401.
    served = launcher()
    page = _new_page(browser, "en-US")
    try:
        page.route("**/api/launcher", lambda route: route.fulfill(status=401, body="{}"))
        page.goto(served.url)
        expect(page.locator(".boot-problem h1")).to_have_text("This page needs the launcher link")
        expect(page.locator(".boot-problem p")).to_contain_text("?token=")
        expect(page).to_have_title("Pneuma · This page needs the launcher link")
    finally:
        page.context.close()


def test_a_folder_with_files_is_made_a_workspace_only_after_the_listed_writes_are_confirmed(
        browser, launcher, tmp_path, shot):
    """Issue 23, item 5: the dialog lists what will be written into a folder
    that has the person's files, writes nothing until they confirm, and
    keeps their own CLAUDE.md text when they do."""
    served = launcher()
    folder = tmp_path / "my-notes"
    folder.mkdir()
    (folder / "CLAUDE.md").write_text("Always answer in haiku.\n")
    (folder / "ideas.md").write_text("# Ideas\n")
    page = _new_page(browser, "en-US")
    try:
        page.goto(served.url)
        page.locator(".ln-card[data-mode='doc']").click()
        page.locator("#ln-folder").fill(str(folder))
        page.locator(".ln-dialog button[type=submit]").click()
        writes = page.locator(".ln-confirm .ln-writes li")
        expect(page.locator(".ln-confirm h3")).to_have_text("This folder already has files")
        expect(writes.filter(has_text="CLAUDE.md")).to_contain_text("updated, your own content kept")
        expect(writes.filter(has_text=".pneuma/")).to_contain_text("new")
        expect(writes.filter(has_text=".gitignore")).to_have_count(1)
        expect(page.locator(".ln-dialog button[type=submit]")).to_have_text("Write these and open")
        assert sorted(p.name for p in folder.iterdir()) == ["CLAUDE.md", "ideas.md"]
        _settled(page)
        shot(page, "launcher-confirm-writes-en")
        page.locator(".ln-dialog button[type=submit]").click()
        page.wait_for_url(re.compile(r"/\?session=[^&]+&token="), timeout=20_000)
        assert (folder / "CLAUDE.md").read_text().startswith("Always answer in haiku.\n")
        assert (folder / ".pneuma").is_dir() and (folder / "ideas.md").read_text() == "# Ideas\n"
        # Chromium logs the 409 that asked for the confirmation itself.
        assert [e for e in page.console_errors if "status of 409" not in e] == []
    finally:
        page.context.close()
