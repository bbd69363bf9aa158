"""The WebGAL-specific tools other than validate_script, called through the runtime."""

from __future__ import annotations

import http.server
import json
import struct
import threading
import urllib.request
from pathlib import Path

import pytest

from pneuma.tools.runtime import call_tool
from pneuma_webgal import preview


def call(ws, name, args, **kw):
    return call_tool("webgal", ws, name, args, **kw)


def code(result):
    return result.get("error", {}).get("code")


def write_policies(ws: Path, policies: dict) -> Path:
    path = ws / ".pneuma" / "webgal-policies.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"contractVersion": "1.0.0", "policies": policies}))
    return path


# --- list_project_resources / get_runtime_info / generate_character_profile --------------


def test_list_project_resources(seeded):
    r = call(seeded, "list_project_resources", {})
    assert r["figures"] == ["mio.png", "stationmaster.png"]
    assert "station_dusk.png" in r["backgrounds"] and "start.txt" in r["scenes"]
    assert r["bgm"] == [] and r["vocals"] == []
    (seeded / "game" / "vocal" / "ch1").mkdir(parents=True)
    (seeded / "game" / "vocal" / "ch1" / "mio_001.ogg").write_bytes(b"")
    assert call(seeded, "list_project_resources", {})["vocals"] == ["ch1/mio_001.ogg"]


def test_get_runtime_info(seeded):
    r = call(seeded, "get_runtime_info", {})
    assert r["projectRoot"] == str(seeded.resolve()) and r["server"]["name"] == "pneuma-webgal"
    assert "execution" not in r and "browser" not in r
    assert "execute_command" not in r["tools"] and "validate_script" in r["tools"]
    r = call(seeded, "get_runtime_info", {}, enable_exec=True, enable_browser=True)
    assert r["execution"]["enabled"] is True and r["execution"]["allowedCommands"] == ["dev", "build", "lint"]
    assert r["browser"]["allowedHosts"] == ["localhost", "127.0.0.1"]
    assert "redactEnv" not in json.dumps(r)


def test_generate_character_profile(seeded):
    assert call(seeded, "generate_character_profile", {"name": "美绪", "imageFile": "mio.png"}) == {"success": True}
    again = call(seeded, "generate_character_profile", {"name": "美绪", "imageFile": "mio.png"})
    assert again == {"success": True}
    data = json.loads((seeded / "game" / "characters.json").read_text())
    assert data == {"characters": [{"name": "美绪", "imageFile": "mio.png"}]}
    clash = call(seeded, "generate_character_profile", {"name": "美绪", "imageFile": "stationmaster.png"})
    assert code(clash) == "E_CONFLICT"
    missing = call(seeded, "generate_character_profile", {"name": "X", "imageFile": "Mio.png"})
    assert code(missing) == "E_NOT_FOUND" and "mio.png" in missing["error"]["hint"]
    assert code(call(seeded, "generate_character_profile", {"name": "X", "imageFile": "../../x.png"})) == "E_DENY_PATH"


def test_interaction_signals_without_a_browser(seeded, monkeypatch):
    monkeypatch.delenv("PNEUMA_API", raising=False)
    assert code(call(seeded, "ask_followup_question", {"question": "哪个结局？"})) == "E_UNSUPPORTED"
    assert code(call(seeded, "attempt_completion", {"result": "done"})) == "E_UNSUPPORTED"


def test_interaction_signals_through_interact(seeded):
    class Page:
        asked = None

        async def ask(self, question, options=None):
            Page.asked = question
            return "河边"

        async def complete(self, summary):
            return True

    assert call(seeded, "ask_followup_question", {"question": "哪个结局？"}, interact=Page()) == \
        {"ack": True, "answer": "河边"}
    assert Page.asked == "哪个结局？"
    assert call(seeded, "attempt_completion", {"result": "done"}, interact=Page()) == {"ack": True}


# --- preview_scene ----------------------------------------------------------------------


def test_preview_scene_serves_the_engine_and_names_the_scene(seeded, monkeypatch):
    monkeypatch.delenv("PNEUMA_API", raising=False)
    if preview.find_engine() is None:
        pytest.skip("the WebGAL engine dist/ is not set up (npm run build in plugins/webgal/web)")
    r = call(seeded, "preview_scene", {"scenePath": "game/scene/station_zh.txt"})
    assert "error" not in r, r
    assert r["url"].startswith("http://127.0.0.1:") and r["url"].endswith("/webgal/#scene=station_zh.txt&line=1")
    with urllib.request.urlopen(r["url"], timeout=5) as page:
        assert page.status == 200 and b"<html" in page.read().lower()
    base = r["url"].split("#")[0]
    with urllib.request.urlopen(base + "game/scene/station_zh.txt", timeout=5) as scene:
        assert scene.read().decode("utf-8") == (seeded / "game" / "scene" / "station_zh.txt").read_text("utf-8")
    # reused, not started again; default scene is start
    again = call(seeded, "preview_scene", {})
    assert again["url"].split("#")[0] == base and again["url"].endswith("#scene=start.txt&line=1")
    assert any("reused" in line for line in again["logs"])
    assert code(call(seeded, "preview_scene", {"scenePath": "nope.txt"})) == "E_NOT_FOUND"
    # No game is open: the jump waits for the first one (nothing to wait for here).
    assert any("no preview is open" in line for line in again["logs"]), again["logs"]
    # A line past the end is clamped to the scene's last line.
    total = len((seeded / "game/scene/station_zh.txt").read_text("utf-8").split("\n"))
    far = call(seeded, "preview_scene", {"scenePath": "station_zh", "line": 10_000})
    assert far["url"].endswith(f"#scene=station_zh.txt&line={total}"), far
    # The background server has the same jump route and status as `pneuma run`.
    with urllib.request.urlopen(base.replace("/webgal/", "/api/webgal/status"), timeout=5) as status:
        body = json.loads(status.read())
    assert body["previews"] == [] and body["pendingJump"]["scene"] == "station_zh.txt"
    # The engine page carries the launcher that reads #scene=…&line=….
    with urllib.request.urlopen(base, timeout=5) as page:
        assert b"_pneuma/launcher.js" in page.read()


def test_preview_scene_reports_the_first_error_line(seeded, monkeypatch):
    monkeypatch.delenv("PNEUMA_API", raising=False)
    if preview.find_engine() is None:
        pytest.skip("the WebGAL engine dist/ is not set up")
    (seeded / "game" / "scene" / "broken.txt").write_text("美绪:你好;\nchangeBg:nope.png;\n", encoding="utf-8")
    r = call(seeded, "preview_scene", {"scenePath": "broken.txt"})
    assert r["firstErrorLine"] == 2 and r["url"].endswith("#scene=broken.txt&line=1")


def test_preview_fails_when_no_engine_can_be_served(seeded, monkeypatch, tmp_path):
    monkeypatch.delenv("PNEUMA_API", raising=False)
    monkeypatch.setattr(preview, "engine_candidates", lambda: [tmp_path / "no-engine"])
    assert code(call(seeded, "preview_scene", {})) == "E_PREVIEW_FAIL"


def test_preview_terre_not_running_and_non_local(seeded):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    write_policies(seeded, {"terre": {"port": port}})
    assert code(call(seeded, "preview_scene", {})) == "E_PREVIEW_FAIL"
    write_policies(seeded, {"terre": {"url": "http://example.com:3001"}})
    assert code(call(seeded, "preview_scene", {})) == "E_POLICY_VIOLATION"


def test_preview_non_local_pneuma_server_is_refused(seeded):
    r = call(seeded, "preview_scene", {}, server_url="http://example.com:8080")
    assert code(r) == "E_POLICY_VIOLATION"


# --- execute_command ------------------------------------------------------------------------


@pytest.fixture
def node_project(seeded):
    (seeded / "package.json").write_text(json.dumps({"scripts": {
        "build": "node -e \"console.log('built', process.env.MY_API_KEY || 'no-key', 'hunter2-secret-value')\"",
        "lint": "node -e \"setTimeout(() => {}, 20000)\"",
    }}))
    return seeded


def test_execute_command_is_disabled_by_default(node_project):
    assert code(call(node_project, "execute_command", {"scriptName": "build"})) == "E_TOOL_DISABLED"


def test_execute_command_runs_an_allowed_script_with_secrets_redacted(node_project, monkeypatch):
    monkeypatch.setenv("MY_API_KEY", "hunter2-secret-value")
    r = call(node_project, "execute_command", {"scriptName": "build"}, enable_exec=True)
    assert r["ok"] is True, r
    text = "\n".join(r["logs"])
    assert "built no-key ***" in text and "hunter2" not in text


def test_execute_command_allow_list_and_package_scripts(node_project):
    write_policies(node_project, {"allowedCommands": ["lint"], "execution": {"enabled": True}})
    assert code(call(node_project, "execute_command", {"scriptName": "build"})) == "E_POLICY_VIOLATION"
    write_policies(node_project, {"execution": {"enabled": True}})
    assert code(call(node_project, "execute_command", {"scriptName": "dev"})) == "E_POLICY_VIOLATION"
    assert code(call(node_project, "execute_command", {"scriptName": "rm"})) == "E_BAD_ARGS"


def test_execute_command_timeout(node_project):
    write_policies(node_project, {"execution": {"enabled": True, "timeoutMs": 1500}})
    r = call(node_project, "execute_command", {"scriptName": "lint"})
    assert code(r) == "E_TIMEOUT"


# --- browser_action ---------------------------------------------------------------------------


@pytest.fixture
def local_site(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(
        "<html><body style='background:#123'><a id='go' href='two.html'>next</a></body></html>")
    (site / "two.html").write_text("<html><body><h1 id='two'>two</h1></body></html>")
    handler = lambda *a, **kw: http.server.SimpleHTTPRequestHandler(*a, directory=str(site), **kw)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.RequestHandlerClass.log_message = lambda *a: None
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_browser_action_refuses_non_local(seeded):
    r = call(seeded, "browser_action", {"action": "open", "url": "http://example.com/"}, enable_browser=True)
    assert code(r) == "E_BAD_ARGS"  # the schema's localhost pattern
    write_policies(seeded, {"browser": {"enabled": True}, "browserAllowedHosts": ["localhost"]})
    r = call(seeded, "browser_action", {"action": "open", "url": "http://127.0.0.1:9/"})
    assert code(r) == "E_POLICY_VIOLATION"
    assert code(call(seeded, "browser_action", {"action": "open", "url": "http://localhost:1/"},
                     enable_browser=False, policies_file=write_policies(seeded, {}))) == "E_TOOL_DISABLED"


def test_browser_action_open_click_screenshot(seeded, local_site):
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("no /usr/bin/chromium")
    assert call(seeded, "browser_action", {"action": "open", "url": local_site + "/index.html"},
                enable_browser=True) == {"ok": True}
    assert call(seeded, "browser_action", {"action": "click", "selector": "#go"}, enable_browser=True) == {"ok": True}
    r = call(seeded, "browser_action", {"action": "screenshot", "path": "shots/two.png"}, enable_browser=True)
    assert r == {"ok": True}
    data = (seeded / "shots" / "two.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1280, 720)
    missing = call(seeded, "browser_action", {"action": "click", "selector": "#nope"}, enable_browser=True,
                   policies_file=write_policies(seeded, {"browser": {"enabled": True, "timeoutMs": 1000}}))
    assert code(missing) == "E_TIMEOUT"
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    closed = call(seeded, "browser_action", {"action": "open", "url": f"http://127.0.0.1:{port}/"},
                  enable_browser=True)
    assert code(closed) == "E_PREVIEW_FAIL"


def test_background_preview_server_stops_when_idle(seeded, monkeypatch):
    import time

    monkeypatch.delenv("PNEUMA_API", raising=False)
    if preview.find_engine() is None:
        pytest.skip("the WebGAL engine dist/ is not set up")
    monkeypatch.setenv("PNEUMA_WEBGAL_PREVIEW_IDLE", "1.5")
    r = call(seeded, "preview_scene", {})
    pid = json.loads((seeded / ".pneuma" / "webgal-preview.json").read_text())["pid"]
    assert r["url"].endswith("#scene=start.txt&line=1")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and preview._alive(pid):
        time.sleep(0.2)
    import os

    try:  # reap it if it is our child (it is not: it runs in its own session)
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    assert preview.running_server(seeded) is None
