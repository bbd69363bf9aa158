"""Pneuma's shell (pneuma/web/) in Chromium against `pneuma run` with the fake CLI.

Each test starts a real server (tests/browser/conftest.py), or shares the
module's one without an agent (``agentless``), and drives the page as a person would: typing, clicking, pressing keys. What the agent
received is read back from the fake CLI's log; what the person sees is read
from the page. Screenshots land in $PNEUMA_SCREENSHOTS (see conftest).
"""

from __future__ import annotations

import base64
import json
import os
import threading
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from pneuma.host.registry import get_mode
from tests.browser.browser_helpers import api_call, send, send_and_read
from tests.browser.module_run import module_run

GREETING = "Hello from the fake CLI!"
TURN = 15_000  # ms a fake CLI turn may take in the page


def wait_greeting(page: Any) -> None:
    """Fresh slide sessions begin with a hidden greeting turn; let it end."""
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)
    expect(page.locator(".pill")).to_have_attribute("data-status", "idle")


@pytest.fixture
def chat(pneuma_server: Any, fake_claude: Any, open_page: Any) -> Callable[..., Any]:
    """``chat(*run_args, color_scheme="light")``: the page of a fresh slide
    session with the fake CLI (extra ``pneuma run`` arguments), once its
    greeting turn has ended."""

    def start(*run_args: str, color_scheme: str = "light") -> Any:
        server = pneuma_server("slide", claude_bin=fake_claude.bin, args=run_args)
        page = open_page(server, color_scheme=color_scheme)
        wait_greeting(page)
        return page

    return start


@pytest.fixture(scope="module")
def agentless_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[str, bytes]]]:
    """One `pneuma run --mode slide --backend none` for the tests of a
    session without an agent (each opens its own page), and its seeded
    slides."""
    with module_run(tmp_path_factory.mktemp("agentless"), "slide") as server:
        slides = server.workspace / "slides"
        yield server, {p.name: p.read_bytes() for p in slides.glob("*.html")}


@pytest.fixture
def agentless(agentless_run: tuple[Any, dict[str, bytes]]) -> Any:
    """The shared agentless server with its seeded slides as `pneuma run`
    made them (a test before may have started the deck over)."""
    server, seeded = agentless_run
    slides: Path = server.workspace / "slides"
    for path in slides.glob("*.html"):
        if path.name not in seeded:
            path.unlink()
    for name, content in seeded.items():
        if not (slides / name).is_file() or (slides / name).read_bytes() != content:
            (slides / name).write_bytes(content)
    return server


def in_background(fn: Any, *args: Any) -> dict[str, Any]:
    """Run fn(*args) in a thread; the returned dict gets 'result' (or 'error')."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = fn(*args)
        except Exception as exc:  # reported by the test
            box["error"] = exc

    box["thread"] = threading.Thread(target=run, daemon=True)
    box["thread"].start()
    return box


def png_bytes(width: int = 4, height: int = 3) -> bytes:
    raw = b"".join(b"\x00" + b"\x6d\x5d\xfc" * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + b"\x08\x02\x00\x00\x00"
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


# --- loading -------------------------------------------------------------------


def test_page_loads_without_console_errors(pneuma_server, fake_claude, open_page, shot):
    server = pneuma_server("slide", claude_bin=fake_claude.bin)
    page = open_page(server)
    expect(page.locator(".topbar .mode-name")).to_have_text("Slides")
    expect(page.locator(".viewer-loading")).to_have_count(0, timeout=10_000)
    wait_greeting(page)
    # The token set the cookie and left the address bar.
    assert "token=" not in page.url and f"session={server.session_id}" in page.url
    expect(page.locator(".pill")).to_contain_text("Connected")
    expect(page.locator(".command[data-command='review-deck']")).to_be_visible()
    shot(page, "shell-light")
    assert page.console_errors == []


def test_dark_mode_and_narrow_window(chat, shot):
    page = chat(color_scheme="dark")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(20, 20, 23)", background
    shot(page, "shell-dark")
    page.set_viewport_size({"width": 700, "height": 900})
    expect(page.locator(".composer textarea")).to_be_visible()
    shot(page, "shell-narrow")
    assert page.console_errors == []


def test_missing_vendor_files_are_explained(agentless, open_page, shot):
    server = agentless

    def hide_vendor(page: Any) -> None:
        page.route("**/static/vendor/**", lambda route: route.fulfill(status=404, body="{}"))

    page = open_page(server, wait_connected=False, before_goto=hide_vendor)
    expect(page.locator(".boot-problem h1")).to_have_text("The browser code is not installed")
    expect(page.locator(".boot-problem pre")).to_have_text("scripts/build-web")
    shot(page, "missing-vendor")


# --- chat ---------------------------------------------------------------------


def test_a_message_streams_in_and_is_answered_once(chat, fake_claude, shot):
    page = chat()
    send(page, "hello **there**")
    expect(page.locator(".msg.user .bubble")).to_have_text("hello **there**")
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    replies = page.locator(".msg.assistant .md", has_text=GREETING)
    expect(replies).to_have_count(2)  # the greeting and this reply: each exactly once
    expect(replies.last.locator("p")).to_have_text(GREETING)  # rendered Markdown, not raw text
    expect(page.locator(".md.streaming")).to_have_count(0)
    last = page.locator(".result-line").last
    expect(last).to_contain_text("Done")
    expect(last).to_contain_text("1 step")
    expect(last).to_contain_text("$0.0001")
    assert fake_claude.user_texts()[-1].endswith("hello **there**")
    # The composer is empty again and keeps focus for the next message.
    expect(page.locator(".composer textarea")).to_have_value("")
    assert page.console_errors == []


def test_streamed_text_renders_incrementally_as_markdown_then_interrupt(chat, fake_claude, shot):
    page = chat()
    send(page, "slow please")
    streaming = page.locator(".md.streaming")
    expect(streaming).to_contain_text("word3", timeout=TURN)
    first = streaming.inner_text()
    expect(page.locator(".pill")).to_have_text("Agent running")
    page.wait_for_timeout(300)
    assert len(streaming.inner_text()) > len(first), "the text did not grow while streaming"
    shot(page, "streaming")
    stop = page.locator(".send.stop")
    expect(stop).to_be_visible()
    stop.click()
    fake_claude.wait_stdin(lambda m: m.get("type") == "control_request"
                           and m["request"].get("subtype") == "interrupt")
    expect(page.locator(".result-line").last).to_contain_text("Stopped", timeout=TURN)
    expect(page.locator(".md.streaming")).to_have_count(0)
    # The final assistant message replaced the streamed one: one block, not two.
    expect(page.locator(".msg.assistant", has_text="word0")).to_have_count(1)
    expect(page.locator(".send.stop")).to_have_count(0)
    expect(page.locator(".pill")).to_contain_text("idle")
    assert page.console_errors == []


def test_escape_interrupts_the_agent(chat, fake_claude):
    page = chat()
    send(page, "slow again")
    expect(page.locator(".md.streaming")).to_contain_text("word1", timeout=TURN)
    page.keyboard.press("Escape")
    fake_claude.wait_stdin(lambda m: m.get("type") == "control_request"
                           and m["request"].get("subtype") == "interrupt")
    expect(page.locator(".result-line").last).to_contain_text("Stopped", timeout=TURN)


def test_shift_enter_makes_a_new_line(chat):
    page = chat()
    box = page.locator(".composer textarea")
    box.click()
    box.type("first line")
    box.press("Shift+Enter")
    box.type("second line")
    expect(box).to_have_value("first line\nsecond line")
    expect(page.locator(".msg.user")).to_have_count(0)
    box.press("Enter")
    expect(page.locator(".msg.user .bubble")).to_have_text("first line\nsecond line")


def test_tool_uses_are_compact_cards_that_expand(chat, shot):
    page = chat()
    send(page, "use a tool")
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    card = page.locator(".tool-card[data-tool='Write']")
    expect(card).to_have_count(1)
    expect(card.locator(".tool-key")).to_have_text("hello.txt")
    expect(card).to_have_class("tool-card done")
    expect(card.locator(".tool-body")).to_have_count(0)
    card.locator(".tool-head").click()
    expect(card.locator(".tool-body")).to_contain_text("hello world")
    expect(card.locator(".tool-body")).to_contain_text("File created successfully")
    # A failed result shows in red even though no tool_use announced it.
    failed = page.locator(".tool-card.error")
    expect(failed).to_have_count(1)
    expect(failed.locator(".tool-error-line")).to_have_text("no such file")
    assert page.evaluate("getComputedStyle(document.querySelector('.tool-card.error .tool-error-line')).color") \
        == "rgb(210, 63, 63)"
    shot(page, "tool-cards")
    assert page.console_errors == []


def test_permission_prompt_is_answered_from_the_page(chat, fake_claude, shot):
    page = chat("--permission-mode", "default")
    send(page, "ask permission to write")
    prompt = page.locator(".permission")
    expect(prompt).to_be_visible(timeout=TURN)
    expect(prompt.locator(".perm-title")).to_contain_text("Write")
    expect(prompt).to_contain_text("/workspace/allowed.txt")
    expect(prompt.locator("pre")).to_contain_text("ok")
    expect(page.locator(".tool-card.ask .tool-status")).to_have_text("needs your OK")
    shot(page, "permission")
    prompt.locator("button.allow").click()
    answer = fake_claude.wait_stdin(lambda m: m.get("type") == "control_response")
    decision = answer["response"]["response"]
    assert decision["behavior"] == "allow"
    assert decision["updatedInput"] == {"file_path": "/workspace/allowed.txt", "content": "ok\n"}
    expect(page.locator(".permission")).to_have_count(0)
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    expect(page.locator(".tool-card[data-tool='Write']")).to_have_class("tool-card done")
    assert page.console_errors == []


def test_permission_denied_with_a_note(chat, fake_claude):
    page = chat("--permission-mode", "default")
    send(page, "permission test")
    prompt = page.locator(".permission")
    expect(prompt).to_be_visible(timeout=TURN)
    prompt.get_by_role("button", name="Deny…").click()
    prompt.locator(".perm-note").fill("write it to notes/ instead")
    prompt.get_by_role("button", name="Deny", exact=True).click()
    answer = fake_claude.wait_stdin(lambda m: m.get("type") == "control_response")
    assert answer["response"]["response"] == {"behavior": "deny", "message": "write it to notes/ instead"}
    expect(page.locator(".tool-card[data-tool='Write']")).to_have_class("tool-card error", timeout=TURN)


def test_model_switch(chat, fake_claude):
    page = chat()
    # The model comes with the agent's first init line: on a busy machine
    # the fake CLI can take longer than expect's default 5 s to start.
    expect(page.locator(".model-name")).to_have_text("claude-fake-model", timeout=15_000)
    page.locator(".model-btn").click()
    page.locator(".menu-item[data-model='opus']").click()
    request = fake_claude.wait_stdin(lambda m: m.get("type") == "control_request"
                                     and m["request"].get("subtype") == "set_model")
    assert request["request"]["model"] == "opus"
    expect(page.locator(".model-name")).to_have_text("opus", timeout=15_000)
    expect(page.locator(".notice.quiet", has_text="Model switched to opus")).to_have_count(1)


def test_images_are_attached_and_sent(chat, fake_claude, shot, tmp_path):
    page = chat()
    image = tmp_path / "dot.png"
    image.write_bytes(png_bytes())
    page.locator(".composer input[type=file]").set_input_files(str(image))
    expect(page.locator(".attachments .thumb")).to_have_count(1)
    # A pasted image (a screenshot from the clipboard) joins it.
    page.evaluate("""(b64) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const data = new DataTransfer();
        data.items.add(new File([bytes], 'pasted.png', {type: 'image/png'}));
        document.querySelector('.composer textarea').dispatchEvent(
            new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
    }""", base64.b64encode(png_bytes(6, 6)).decode())
    expect(page.locator(".attachments .thumb")).to_have_count(2)
    shot(page, "attachment")
    send(page, "hello, look at this")
    expect(page.locator(".msg.user .msg-images img")).to_have_count(2)
    expect(page.locator(".attachments .thumb")).to_have_count(0)
    message = fake_claude.wait_stdin(lambda m: m.get("type") == "user" and isinstance(m["message"]["content"], list))
    blocks = message["message"]["content"]
    assert blocks[0]["type"] == "text" and blocks[0]["text"].endswith("hello, look at this")
    assert blocks[1]["type"] == "image"
    assert blocks[1]["source"]["media_type"] == "image/png"
    assert base64.b64decode(blocks[1]["source"]["data"]) == png_bytes()
    assert base64.b64decode(blocks[2]["source"]["data"]) == png_bytes(6, 6)


def test_command_buttons_send_their_prompt(chat, fake_claude):
    page = chat()
    prompt = next(c.prompt for c in get_mode("slide").manifest.viewer_api.commands if c.id == "review-deck")
    page.locator(".command[data-command='review-deck']").click()
    expect(page.locator(".msg.user .bubble")).to_have_text(prompt)
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    assert fake_claude.user_texts()[-1].endswith(prompt)


# --- reconnecting and reloading ------------------------------------------------


def test_reconnect_after_the_socket_drops_shows_nothing_twice(pneuma_server, fake_claude, open_page, shot):
    server = pneuma_server("slide", claude_bin=fake_claude.bin)
    sockets: list[Any] = []
    blocked = {"now": False}

    def route(ws: Any) -> None:
        if blocked["now"]:
            ws.close(code=1011, reason="server gone")
            return
        ws.connect_to_server()
        sockets.append(ws)

    page = open_page(server, before_goto=lambda p: p.route_web_socket("**/ws/browser/**", route))
    wait_greeting(page)
    send(page, "hello before the drop")
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)

    # The server side goes away and stays away for a while.
    blocked["now"] = True
    sockets[-1].close(code=1006, reason="dropped")
    expect(page.locator(".pill")).to_contain_text("reconnecting", timeout=5_000)
    expect(page.locator(".pill")).to_have_attribute("data-state", "reconnecting")
    shot(page, "reconnecting")

    # Meanwhile the conversation goes on in another tab, and a file changes.
    other = open_page(server)
    send(other, "hello while the first tab is away")
    expect(other.locator(".result-line")).to_have_count(3, timeout=TURN)

    blocked["now"] = False
    page.locator(".pill").click()  # "retry now"
    expect(page.locator(".pill")).to_have_attribute("data-state", "open", timeout=15_000)
    expect(page.locator(".result-line")).to_have_count(3, timeout=TURN)
    expect(page.locator(".msg.user .bubble")).to_have_count(2)
    expect(page.locator(".msg.user .bubble", has_text="while the first tab is away")).to_have_count(1)
    expect(page.locator(".msg.assistant .md", has_text=GREETING)).to_have_count(3)
    # Drop again without anything new: the replay is empty, nothing doubles.
    sockets[-1].close(code=1006, reason="dropped again")
    expect(page.locator(".pill")).to_have_attribute("data-state", "reconnecting", timeout=5_000)
    expect(page.locator(".pill")).to_have_attribute("data-state", "open", timeout=15_000)
    page.wait_for_timeout(300)
    expect(page.locator(".msg.assistant .md", has_text=GREETING)).to_have_count(3)
    expect(page.locator(".result-line")).to_have_count(3)
    assert len(sockets) >= 3
    assert page.console_errors == [] or all("WebSocket" in e for e in page.console_errors), page.console_errors


def test_history_after_reload(chat, shot):
    page = chat()
    send(page, "use a tool")
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    page.reload()
    page.wait_for_selector('.pill[data-state="open"]')
    expect(page.locator(".msg.user .bubble")).to_have_text("use a tool")
    expect(page.locator(".result-line")).to_have_count(2)
    expect(page.locator(".tool-card[data-tool='Write']")).to_have_count(1)
    expect(page.locator(".msg.assistant .md", has_text="done")).to_have_count(1)
    expect(page.locator(".msg.assistant .md", has_text=GREETING)).to_have_count(1)
    shot(page, "history-after-reload")
    assert page.console_errors == []


# --- dialogs and the no-agent case ------------------------------------------------


def test_scaffold_confirmation_dialog_approve(agentless, open_page, shot):
    server = agentless
    page = open_page(server)
    body = {"clear": ["slides/**/*.html"], "files": [{"path": "slides/01-new.html", "content": "<h1>New deck</h1>\n"}]}
    call = in_background(api_call, server, "POST", "/api/workspace/scaffold", body)
    dialog = page.locator(".modal[data-kind='scaffold']")
    expect(dialog).to_be_visible(timeout=10_000)
    expect(dialog).to_contain_text("Start the workspace over?")
    expect(dialog.locator(".detail-delete li")).to_have_count(8)
    expect(dialog.locator(".detail-write li")).to_have_text(["slides/01-new.html"])
    shot(page, "confirm-scaffold")
    dialog.get_by_role("button", name="Approve").click()
    call["thread"].join(10)
    status, answer = call["result"]
    assert status == 200 and answer["success"] is True, answer
    assert (server.workspace / "slides" / "01-new.html").read_text() == "<h1>New deck</h1>\n"
    expect(page.locator(".modal")).to_have_count(0)
    assert page.console_errors == []


def test_scaffold_confirmation_dialog_decline(agentless, open_page):
    server = agentless
    page = open_page(server)
    before = sorted(p.name for p in (server.workspace / "slides").iterdir())
    call = in_background(api_call, server, "POST", "/api/workspace/scaffold",
                         {"clear": ["slides/**/*.html"], "files": []})
    expect(page.locator(".modal")).to_be_visible(timeout=10_000)
    page.locator(".modal").get_by_role("button", name="Decline").click()
    call["thread"].join(10)
    status, answer = call["result"]
    assert status == 403 and answer["error"]["code"] == "E_POLICY_VIOLATION"
    assert answer["success"] is False
    assert sorted(p.name for p in (server.workspace / "slides").iterdir()) == before


def test_no_agent_reason_is_shown(agentless, open_page, shot):
    server = agentless
    page = open_page(server)
    banner = page.locator(".no-agent")
    expect(banner).to_contain_text("without an agent")
    expect(banner).to_contain_text("--backend claude-code")
    expect(page.locator(".composer textarea")).to_be_disabled()
    expect(page.locator(".pill")).to_have_text("Connected · no agent")
    expect(page.locator(".model-btn")).to_have_count(0)
    shot(page, "no-agent")
    assert page.console_errors == []


def test_agent_not_found_is_explained(pneuma_server, open_page, tmp_path, shot):
    server = pneuma_server("slide", claude_bin=tmp_path / "no-such-claude")
    page = open_page(server)
    error = page.locator(".notice.error[data-code='agent_not_found']").first
    expect(error).to_be_visible(timeout=TURN)
    expect(error.locator(".notice-title")).to_have_text("Claude Code was not found")
    expect(error).to_contain_text("no-such-claude")
    shot(page, "agent-not-found")


def test_a_crashing_agent_shows_its_exit_and_output(chat, shot):
    page = chat()
    send(page, "crash now")
    note = page.locator(".notice.warn", has_text="exited with code 3")
    expect(note).to_be_visible(timeout=TURN)
    note.get_by_role("button", name="Show output").click()
    expect(note.locator(".stderr")).to_contain_text("something went badly wrong")
    expect(page.locator(".pill")).to_contain_text("idle")


# --- the generic viewer (a mode without viewer.module) ------------------------------


VIEWERLESS_MANIFEST = {
    "name": "plainfiles",
    "version": "0.1.0",
    "displayName": "Plain files",
    "description": "a folder of notes, shown by the shell's generic viewer",
    "skill": {"installName": "pneuma-plainfiles"},
    "viewer": {"watchPatterns": ["**/*.md", "**/*.txt"]},
    "agent": {"greeting": "Say hello to the person."},
    "init": {"contentCheckPattern": "**/*.md", "seedFiles": {"seeds/": "."}},
    "viewerApi": {
        "workspace": {"type": "all", "multiFile": True, "ordered": False, "hasActiveFile": True},
        "actions": [
            {"id": "navigate-to", "label": "Open", "category": "navigate",
             "params": {"file": {"type": "string", "required": True}}},
            {"id": "describe-view", "label": "Describe", "category": "custom"},
            # Declared but only a real viewer could do it: the generic one says so.
            {"id": "ui:toggle-outline", "label": "Outline", "category": "ui"},
        ],
    },
}


@pytest.fixture(scope="module")
def viewerless_plugin(tmp_path_factory) -> dict[str, str]:
    """A throwaway mode with no viewer module, installed the way pip would
    (a package plus a dist-info with an entry point) on PYTHONPATH, so that
    the `pneuma run` subprocess finds it like any third-party mode."""
    root = tmp_path_factory.mktemp("viewerless")
    package = root / "pneuma_plainfiles"
    (package / "skill").mkdir(parents=True)
    (package / "seeds").mkdir()
    (package / "skill" / "SKILL.md").write_text("---\nname: pneuma-plainfiles\n---\n# Notes\n")
    (package / "seeds" / "BRIEF.md").write_text("# Brief\n\nThe seed brief.\n")
    (package / "seeds" / "notes.md").write_text("# Notes\n\nFirst note.\n")
    (package / "manifest.json").write_text(json.dumps(VIEWERLESS_MANIFEST))
    (package / "__init__.py").write_text(
        "from pathlib import Path\n"
        "from pneuma import hookimpl\n"
        "from pneuma.host.modes import ModeSource\n"
        "HERE = Path(__file__).resolve().parent\n"
        "@hookimpl\n"
        "def register_modes():\n"
        "    return [ModeSource(manifest=HERE / 'manifest.json', package_dir=HERE)]\n"
    )
    dist = root / "pneuma_plainfiles-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: pneuma-plainfiles\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[pneuma]\nplainfiles = pneuma_plainfiles\n")
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path}


def test_generic_viewer_lists_files_answers_actions_and_sends_the_selection(
        pneuma_server, fake_claude, open_page, shot, viewerless_plugin):
    mode = "plainfiles"
    server = pneuma_server(mode, claude_bin=fake_claude.bin, env=viewerless_plugin)
    page = open_page(server)
    expect(page.locator(".generic-viewer .gv-file").first).to_be_visible(timeout=10_000)
    files = [p.get_attribute("title") for p in page.locator(".gv-file").all()]
    target = next(f for f in files if f.endswith((".tex", ".txt", ".md")))

    status, answer = api_call(server, "POST", "/api/viewer/action",
                              {"actionId": "navigate-to", "params": {"file": target}})
    assert status == 200 and answer["success"] is True, answer
    expect(page.locator(".gv-title")).to_have_text(target)
    expect(page.locator(".topbar .active-file")).to_have_text(target)

    status, answer = api_call(server, "POST", "/api/viewer/action", {"actionId": "describe-view"})
    assert answer["success"] is True and answer["data"]["file"] == target

    status, answer = api_call(server, "POST", "/api/viewer/action",
                              {"actionId": "ui:toggle-outline", "params": {}})
    assert answer["success"] is False and "not supported" in answer["message"]

    # Select text in the preview: a chip, then the context goes with the next message.
    page.evaluate("""() => {
        const node = document.querySelector('.gv-text code');
        const range = document.createRange();
        range.selectNodeContents(node.firstChild || node);
        getSelection().removeAllRanges(); getSelection().addRange(range);
        node.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
    }""")
    chip = page.locator(".ctx-row .ctx-chip")
    expect(chip).to_contain_text(target.split("/")[-1])
    shot(page, "generic-viewer")
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # greeting
    received = send_and_read(page, fake_claude, "hello, what about this?", turns=2, timeout=TURN)
    assert received.startswith(f'<viewer-context mode="{mode}" file="{target}">selected text: "'), received
    assert received.endswith("\n\nhello, what about this?")
    # The chip's ✕ drops the selection: the next message goes without it.
    page.locator(".ctx-row .chip-x").click()
    expect(page.locator(".ctx-row")).to_have_count(0)
    assert send_and_read(page, fake_claude, "hello again", turns=3, timeout=TURN) == "hello again"
    assert page.console_errors == []


def test_content_updates_reach_the_viewer(pneuma_server, open_page, viewerless_plugin):
    mode = "plainfiles"
    server = pneuma_server(mode, backend="none", env=viewerless_plugin)
    page = open_page(server)
    expect(page.locator(".generic-viewer .gv-file").first).to_be_visible(timeout=10_000)
    name = "BRIEF.md"
    (server.workspace / name).write_text("# A brief written on disk\n")
    page.locator(f".gv-file[title='{name}']").click()
    expect(page.locator(".gv-text")).to_contain_text("A brief written on disk", timeout=5_000)
    (server.workspace / name).write_text("# Changed again\n")
    expect(page.locator(".gv-text")).to_contain_text("Changed again", timeout=5_000)


def test_app_layout_has_a_floating_chat(pneuma_server, fake_claude, open_page, shot):
    """layout "app": the viewer takes the page and the chat floats over it."""
    server = pneuma_server("slide", claude_bin=fake_claude.bin)

    def as_app(page: Any) -> None:
        def fulfill(route: Any) -> None:
            response = route.fetch()
            config = response.json()
            config["mode"]["layout"] = "app"
            route.fulfill(response=response, json=config)

        page.route("**/api/config", fulfill)

    page = open_page(server, before_goto=as_app)
    wait_greeting(page)
    chat = page.locator(".chat.floating")
    expect(chat).to_be_visible()
    expect(page.locator(".splitter")).to_have_count(0)
    viewer = page.locator(".viewer-panel").bounding_box()
    assert viewer["width"] > 1300  # the whole window
    shot(page, "layout-app")
    chat.get_by_role("button", name="Hide chat").click()
    expect(chat).to_have_count(0)
    page.get_by_role("button", name="Open the chat").click()
    send(page, "hello from the floating chat")
    expect(page.locator(".result-line")).to_have_count(2, timeout=TURN)
    assert page.console_errors == []


def test_the_chat_panel_resizes(agentless, open_page):
    server = agentless
    page = open_page(server)
    before = page.locator(".chat").bounding_box()["width"]
    box = page.locator(".splitter").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + 200
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - 150, y, steps=5)
    page.mouse.up()
    after = page.locator(".chat").bounding_box()["width"]
    assert abs(after - (before + 150)) < 8, (before, after)
    page.reload()
    page.wait_for_selector('.pill[data-state="open"]')
    assert abs(page.locator(".chat").bounding_box()["width"] - after) < 2
