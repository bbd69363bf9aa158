"""The host's generic agent tools, on a small mode of their own that names
them in its manifest as any mode would: ``execute_command``
(pneuma/tools/command.py), ``browser_action`` (browser.py),
``ask_followup_question`` / ``attempt_completion`` (interaction.py) and
``get_runtime_info`` (runtime_info.py)."""

from __future__ import annotations

import http.server
import json
import struct
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pneuma.host.manifest import parse_manifest
from pneuma.host.modes import LoadedMode
from pneuma.tools.chromium import CHROMIUM
from pneuma.tools.runtime import call_tool

LOCAL_URL = r"^https?://(localhost|127\.0\.0\.1)(:[0-9]+)?(/.*)?$"
OBJ: dict[str, Any] = {"type": "object"}


def _tool(name: str, input_schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    # The host's tool by its promised name, with this test's own schema.
    return {"name": name, "description": f"the host's {name}",
            "handler": f"pneuma:{name}", "inputSchema": input_schema, **extra}


@pytest.fixture
def agent_mode(minimal_manifest: Callable[..., dict[str, Any]], tmp_path: Path) -> LoadedMode:
    manifest = minimal_manifest("notes")
    manifest["version"] = "1.2.3"
    manifest["tools"] = [
        _tool("get_runtime_info", {**OBJ, "additionalProperties": False}),
        _tool("ask_followup_question", {**OBJ, "properties": {"question": {"type": "string", "minLength": 1}},
               "required": ["question"]}),
        _tool("attempt_completion", {**OBJ, "properties": {"result": {"type": "string", "minLength": 1}},
               "required": ["result"]}),
        _tool("execute_command", {**OBJ, "properties": {"scriptName": {"type": "string"},
                                     "args": {"type": "array", "items": {"type": "string"}}},
               "required": ["scriptName"]},
              devOnly=True, enabledByDefault=False),
        _tool("browser_action", {**OBJ, "properties": {"action": {"enum": ["open", "click", "screenshot"]},
                                     "url": {"type": "string", "pattern": LOCAL_URL},
                                     "selector": {"type": "string"}, "path": {"type": "string"}},
               "required": ["action"]},
              devOnly=True, enabledByDefault=False),
    ]
    package = tmp_path / "notes_pkg"
    package.mkdir()
    return LoadedMode(parse_manifest(manifest, "test"), package, "test", None, None)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A plain workspace: a note and nothing of any mode."""
    workspace = (tmp_path / "notes").resolve()
    workspace.mkdir()
    (workspace / "todo.md").write_text("# To do\n", encoding="utf-8")
    return workspace


@pytest.fixture
def call(agent_mode: LoadedMode, ws: Path) -> Callable[..., dict[str, Any]]:
    def invoke(name: str, args: dict[str, Any], **options: Any) -> dict[str, Any]:
        options.setdefault("server_url", "")
        options.setdefault("server_token", "")
        return call_tool(agent_mode, ws, name, args, **options)

    return invoke


def code(result: dict[str, Any]) -> str | None:
    return (result.get("error") or {}).get("code")


def write_policies(ws: Path, policies: dict[str, Any]) -> Path:
    path = ws / ".pneuma" / "notes-policies.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"policies": policies}))
    return path


# --- get_runtime_info ----------------------------------------------------------------


def test_runtime_info_says_what_is_allowed_and_no_secret(call, ws):
    info = call("get_runtime_info", {}, params={"language": "de"})
    assert info["projectRoot"] == str(ws)
    assert info["server"] == {"name": "pneuma-notes", "version": "1.2.3"}
    assert info["tools"] == ["get_runtime_info", "ask_followup_question", "attempt_completion"]
    assert info["language"] == "de" and info["sandbox"]["textEncoding"] == "utf-8"
    assert ".pneuma" in info["sandbox"]["forbiddenDirs"]
    assert "execution" not in info and "browser" not in info
    info = call("get_runtime_info", {}, enable_exec=True, enable_browser=True)
    assert info["execution"] == {"enabled": True, "allowedCommands": ["dev", "build", "lint"],
                                 "timeoutMs": 30000, "workingDir": str(ws)}
    assert info["browser"]["allowedHosts"] == ["localhost", "127.0.0.1"]
    assert "execute_command" in info["tools"] and "redactEnv" not in json.dumps(info)


# --- ask_followup_question / attempt_completion ------------------------------------------


def test_interaction_without_a_page_says_to_answer_in_the_reply(call):
    asked = call("ask_followup_question", {"question": "Which ending?"})
    assert code(asked) == "E_UNSUPPORTED" and "reply" in asked["error"]["hint"]
    assert code(call("attempt_completion", {"result": "done"})) == "E_UNSUPPORTED"


def test_interaction_goes_through_the_page(call):
    class Page:
        asked: list[str] = []
        completed: list[str] = []

        async def ask(self, question: str, options: list[str] | None = None) -> str:
            Page.asked.append(question)
            return "the river"

        async def complete(self, summary: str) -> bool:
            Page.completed.append(summary)
            return True

    page = Page()
    assert call("ask_followup_question", {"question": "Which ending?"}, interact=page) == \
        {"ack": True, "answer": "the river"}
    assert call("attempt_completion", {"result": "done"}, interact=page) == {"ack": True}
    assert (Page.asked, Page.completed) == (["Which ending?"], ["done"])


# --- execute_command ------------------------------------------------------------------


@pytest.fixture
def node_project(ws: Path) -> Path:
    (ws / "package.json").write_text(json.dumps({"scripts": {
        "build": "node -e \"console.log('built', process.env.MY_API_KEY || 'no-key', "
                 "'hunter2-secret-value', process.argv.slice(1).join(' '))\"",
        "lint": "node -e \"setTimeout(() => {}, 20000)\"",
    }}))
    return ws


def test_execute_command_is_off_until_enabled(call, node_project):
    assert code(call("execute_command", {"scriptName": "build"})) == "E_TOOL_DISABLED"


def test_execute_command_runs_an_allowed_script_with_secrets_redacted(call, node_project,
                                                                     monkeypatch):
    monkeypatch.setenv("MY_API_KEY", "hunter2-secret-value")
    result = call("execute_command", {"scriptName": "build"}, enable_exec=True)
    assert result["ok"] is True, result
    text = "\n".join(result["logs"])
    # The secret is neither passed on to the script nor shown where the script prints it.
    assert "built no-key ***" in text and "hunter2" not in text


def test_execute_command_runs_only_allowed_scripts_of_package_json(call, node_project):
    write_policies(node_project, {"allowedCommands": ["lint"], "execution": {"enabled": True}})
    assert code(call("execute_command", {"scriptName": "build"})) == "E_POLICY_VIOLATION"
    write_policies(node_project, {"execution": {"enabled": True}})
    missing = call("execute_command", {"scriptName": "dev"})  # allowed, not in package.json
    assert code(missing) == "E_POLICY_VIOLATION" and missing["error"]["details"]["scripts"] == \
        ["build", "lint"]
    assert code(call("execute_command", {"scriptName": "build", "args": ["a\nb"]})) == "E_BAD_ARGS"


def test_execute_command_stops_a_script_that_runs_too_long(call, node_project):
    write_policies(node_project, {"execution": {"enabled": True, "timeoutMs": 1500}})
    result = call("execute_command", {"scriptName": "lint"})
    assert code(result) == "E_TIMEOUT" and result["error"]["details"]["timeoutMs"] == 1500


def test_execute_command_without_package_json(call, ws):
    assert code(call("execute_command", {"scriptName": "build"}, enable_exec=True)) == "E_NOT_FOUND"


# --- browser_action --------------------------------------------------------------------------


class _Site(http.server.SimpleHTTPRequestHandler):
    """index.html trades ``?token=secret`` for a cookie; two.html needs it."""

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        if self.path.startswith("/two.html") and "pass=secret" not in self.headers.get("Cookie", ""):
            self.send_error(401)
            return
        if self.path.startswith("/index.html?token=secret"):
            self.path = "/index.html"
            self._cookie = True
        super().do_GET()

    def end_headers(self) -> None:
        if getattr(self, "_cookie", False):
            self.send_header("Set-Cookie", "pass=secret; HttpOnly; Path=/")
        super().end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def local_site(tmp_path: Path) -> Iterator[str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        "<html><body style='background:#123'><a id='go' href='two.html'>next</a></body></html>")
    (site / "two.html").write_text("<html><body><h1 id='two'>two</h1></body></html>")
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), lambda *a, **kw: _Site(*a, directory=str(site), **kw))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_browser_action_opens_only_local_pages(call, ws):
    opened = call("browser_action", {"action": "open", "url": "http://example.com/"},
                  enable_browser=True)
    assert code(opened) == "E_BAD_ARGS"  # the schema's localhost pattern
    write_policies(ws, {"browser": {"enabled": True}, "browserAllowedHosts": ["localhost"]})
    assert code(call("browser_action", {"action": "open", "url": "http://127.0.0.1:9/"})) == \
        "E_POLICY_VIOLATION"
    write_policies(ws, {})
    assert code(call("browser_action", {"action": "open", "url": "http://localhost:1/"})) == \
        "E_TOOL_DISABLED"
    assert code(call("browser_action", {"action": "click", "selector": "a"},
                     enable_browser=True)) == "E_BAD_ARGS"  # nothing opened yet


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no {CHROMIUM}")
def test_browser_action_open_click_screenshot(call, ws, local_site):
    # The page is authorised by a ?token= URL, as a Pneuma server's pages are:
    # the cookie it sets carries over to the next calls (each a new browser).
    assert call("browser_action", {"action": "open", "url": local_site + "/index.html?token=secret"},
                enable_browser=True) == {"ok": True}
    assert call("browser_action", {"action": "click", "selector": "#go"},
                enable_browser=True) == {"ok": True}
    state = ws / ".pneuma" / "tools" / "notes" / "browser.json"
    assert state.stat().st_mode & 0o777 == 0o600  # it holds the page's cookies
    assert json.loads(state.read_text())["url"] == local_site + "/two.html"
    shot = call("browser_action", {"action": "screenshot", "path": "shots/two.png"},
                enable_browser=True)
    assert shot == {"ok": True}
    data = (ws / "shots" / "two.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1280, 720)
    assert call("browser_action", {"action": "screenshot", "path": "bare.png"},
                enable_browser=True) == {"ok": True}
    assert (ws / ".pneuma" / "screenshots" / "bare.png").is_file()

    write_policies(ws, {"browser": {"enabled": True, "timeoutMs": 1000}})
    assert code(call("browser_action", {"action": "click", "selector": "#nope"})) == "E_TIMEOUT"
    # A fresh open starts without the cookies of the last page.
    refused = call("browser_action", {"action": "open", "url": local_site + "/two.html"})
    assert code(refused) == "E_PREVIEW_FAIL" and refused["error"]["details"]["status"] == 401
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    closed = call("browser_action", {"action": "open", "url": f"http://127.0.0.1:{port}/"})
    assert code(closed) == "E_PREVIEW_FAIL"
