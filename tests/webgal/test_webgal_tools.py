"""The WebGAL-specific tools other than validate_script, called through the
runtime, and the wiring of the host's generic tools in the webgal manifest.
(The generic tools themselves are tested in tests/tools on a generic mode.)"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from pneuma.api import running_headless_server
from pneuma.tools.runtime import call_tool
from pneuma_webgal import engine

needs_engine = pytest.mark.skipif(
    engine.engine_dir() is None,
    reason="the WebGAL engine dist/ is not set up (scripts/build-web)")


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


# --- preview_scene ----------------------------------------------------------------------


def get(server, path: str, *, token: bool = True) -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {server.token}"} if token else {}
    request = urllib.request.Request(server.url + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@needs_engine
def test_preview_scene_serves_the_engine_and_names_the_scene(seeded, monkeypatch):
    monkeypatch.delenv("PNEUMA_API", raising=False)
    r = call(seeded, "preview_scene", {"scenePath": "game/scene/station_zh.txt"})
    assert "error" not in r, r
    server = running_headless_server("webgal", seeded)
    assert server is not None
    # The URL opens in a browser as it is: it is the engine's own site and
    # carries that site's read-only token, not the server's.
    status, body = get(server, "/api/webgal/status")
    site = json.loads(body)
    origin, engine_url = site["engine"]["origin"], site["url"]
    assert origin != server.url and server.token not in r["url"]
    assert r["url"] == f"{engine_url}#scene=station_zh.txt&line=1"
    with urllib.request.urlopen(r["url"], timeout=5) as page:
        assert page.status == 200 and b"_pneuma/launcher.js" in page.read()
        assert f"pneuma_webgal_{origin.rsplit(':', 1)[1]}=" in page.headers["Set-Cookie"]
    # The game's files are the workspace's, on the engine's site (its token
    # is needed there, as the server's is everywhere on the server).
    engine_token = engine_url.split("?token=", 1)[1]
    request = urllib.request.Request(origin + "/webgal/game/scene/station_zh.txt",
                                     headers={"Authorization": f"Bearer {engine_token}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.read().decode("utf-8") == \
            (seeded / "game/scene/station_zh.txt").read_text("utf-8")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(origin + "/webgal/game/scene/station_zh.txt", timeout=5)
    assert refused.value.code == 401
    # Reused, not started again; the default scene is start.txt.
    again = call(seeded, "preview_scene", {})
    assert again["url"] == f"{engine_url}#scene=start.txt&line=1"
    assert any("reused" in line for line in again["logs"]), again["logs"]
    assert running_headless_server("webgal", seeded).pid == server.pid
    assert code(call(seeded, "preview_scene", {"scenePath": "nope.txt"})) == "E_NOT_FOUND"
    # No game is open: the jump waits for the first one (nothing to wait for here).
    assert any("no preview is open" in line for line in again["logs"]), again["logs"]
    # A line past the end is clamped to the scene's last line.
    total = len((seeded / "game/scene/station_zh.txt").read_text("utf-8").split("\n"))
    far = call(seeded, "preview_scene", {"scenePath": "station_zh", "line": 10_000})
    assert far["url"].endswith(f"#scene=station_zh.txt&line={total}"), far
    # The server has the same jump route and status as `pneuma run`: it is the same app.
    status, body = get(server, "/api/webgal/status")
    data = json.loads(body)
    assert status == 200 and data["previews"] == []
    assert data["pendingJump"]["scene"] == "station_zh.txt"


@needs_engine
def test_preview_server_leaves_the_session_alone(seeded, monkeypatch):
    """The headless server keeps its token to this user and writes no
    session or history a later `pneuma run` would resume."""
    monkeypatch.delenv("PNEUMA_API", raising=False)
    stored = seeded / ".pneuma" / "session.json"
    stored.parent.mkdir(exist_ok=True)
    stored.write_text('{"mine": true}')
    assert "error" not in call(seeded, "preview_scene", {})
    state = seeded / ".pneuma" / "headless-webgal.json"
    assert state.stat().st_mode & 0o777 == 0o600
    assert set(json.loads(state.read_text())) >= {"pid", "port", "token"}
    running_headless_server("webgal", seeded).stop()
    deadline = time.monotonic() + 10
    while state.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not state.exists()  # removed on the way out
    assert stored.read_text() == '{"mine": true}'
    assert not (seeded / ".pneuma" / "history.json").exists()


@needs_engine
def test_preview_scene_reports_the_first_error_line(seeded, monkeypatch):
    monkeypatch.delenv("PNEUMA_API", raising=False)
    (seeded / "game" / "scene" / "broken.txt").write_text("美绪:你好;\nchangeBg:nope.png;\n", encoding="utf-8")
    r = call(seeded, "preview_scene", {"scenePath": "broken.txt"})
    assert r["firstErrorLine"] == 2 and r["url"].endswith("#scene=broken.txt&line=1")


def test_preview_fails_when_no_engine_can_be_served(seeded, monkeypatch, tmp_path):
    monkeypatch.delenv("PNEUMA_API", raising=False)
    monkeypatch.setattr(engine, "engine_candidates", lambda: [tmp_path / "no-engine"])
    assert code(call(seeded, "preview_scene", {})) == "E_PREVIEW_FAIL"
    assert running_headless_server("webgal", seeded) is None


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


@needs_engine
def test_preview_server_stops_when_idle(seeded, monkeypatch):
    from pneuma_webgal import preview

    monkeypatch.delenv("PNEUMA_API", raising=False)
    monkeypatch.setattr(preview, "IDLE_SECONDS", 1.5)
    r = call(seeded, "preview_scene", {})
    assert r["url"].endswith("#scene=start.txt&line=1")
    pid = running_headless_server("webgal", seeded).pid
    # Watched through its state file: a request would be use and keep it up.
    state = seeded / ".pneuma" / "headless-webgal.json"
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and state.exists():
        time.sleep(0.2)
    assert not state.exists()
    try:  # reap it: it is this process's child until it is waited for
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert running_headless_server("webgal", seeded) is None


@needs_engine
async def test_preview_server_stays_up_while_a_game_is_open(seeded, monkeypatch):
    """An open game keeps the headless server up, though its socket goes to
    the engine's own site, not to the server that counts its connections."""
    import asyncio

    import aiohttp

    from pneuma_webgal import preview

    monkeypatch.delenv("PNEUMA_API", raising=False)
    monkeypatch.setattr(preview, "IDLE_SECONDS", 1.5)
    monkeypatch.setenv("PNEUMA_WEBGAL_PREVIEW_IDLE", "1.5")  # the server process reads it
    r = await asyncio.to_thread(call, seeded, "preview_scene", {})
    server = running_headless_server("webgal", seeded)
    origin, engine_token = r["url"].split("/webgal/?token=", 1)
    engine_token = engine_token.split("#", 1)[0]
    state = seeded / ".pneuma" / "headless-webgal.json"
    async with aiohttp.ClientSession() as client:
        async with client.ws_connect(origin.replace("http://", "ws://") + "/api/webgalsync",
                                     headers={"Authorization": f"Bearer {engine_token}",
                                              "Origin": origin}):
            # Four idle times with the game's socket open and nothing else.
            await asyncio.sleep(6.0)
            assert state.exists()
            os.kill(server.pid, 0)
    # Closed: it stops on its own again.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and state.exists():
        await asyncio.sleep(0.2)
    assert not state.exists()
    try:
        os.waitpid(server.pid, 0)
    except ChildProcessError:
        pass
