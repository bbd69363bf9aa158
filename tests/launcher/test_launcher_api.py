"""The launcher's HTTP API through a real server (tests/launcher/conftest.py):
who may call it, the gallery, new and open workspaces served by this one
process each with its own URL, token and agent, stop and forget."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import aiohttp

from pneuma.server.config import SESSION
from pneuma.testing.browser import BrowserTab, join_session

BUILT_IN = {"slide", "doc", "draw", "webgal", "coauthor", "webcraft", "diagram"}


def _routes(app) -> list[tuple[str, str]]:
    routes = set()
    for resource in app.router.resources():
        path = re.sub(r"\{([^}]+)\}", "x", resource.canonical)
        for route in resource:
            if route.method != "HEAD":
                routes.add((route.method, path))
    return sorted(routes)


async def test_every_launcher_route_wants_the_token_this_host_and_origin(launcher) -> None:
    from pneuma.launcher.app import create_launcher_app

    routes = _routes(create_launcher_app(launcher.state))
    assert ("POST", "/api/workspaces/new") in routes and ("GET", "/") in routes
    for method, path in routes:
        status, body = await launcher.call(method, path, token=False)
        assert (status, body["error"]["code"]) == (401, "E_UNAUTHORIZED"), (method, path)
        status, body = await launcher.call(method, path, headers={"Host": "evil.example:80"})
        assert (status, body["error"]["code"]) == (403, "E_FORBIDDEN"), (method, path)
        status, body = await launcher.call(method, path,
                                           headers={"Origin": "http://evil.example"})
        assert (status, body["error"]["code"]) == (403, "E_FORBIDDEN"), (method, path)


async def test_the_page_loads_with_the_token_in_its_url(launcher) -> None:
    async with launcher.http.get(f"{launcher.url}/?token={launcher.token}") as r:
        assert r.status == 200
        assert "launcher.js" in await r.text()
        assert "script-src 'self'" in r.headers["Content-Security-Policy"]


async def test_the_gallery_lists_the_built_in_modes_with_their_source(launcher) -> None:
    status, body = await launcher.call("GET", "/api/modes")
    assert status == 200
    modes = {m["name"]: m for m in body["modes"]}
    assert BUILT_IN <= set(modes)
    doc = modes["doc"]
    assert doc["source"]["builtIn"] is True
    assert doc["version"] and doc["displayName"]
    assert doc["icon"] is None or doc["icon"].startswith("data:image/svg+xml;base64,")
    assert doc["suggestedFolder"] == "~/Pneuma/doc"
    # A mode with init params describes them for the form.
    with_params = [m for m in modes.values() if m["params"]]
    assert with_params, "no built-in mode declares init params any more"
    for param in with_params[0]["params"]:
        assert {"name", "label", "type", "default", "sensitive", "required"} <= set(param)


async def test_a_new_workspace_with_bad_params_or_folder_is_refused(launcher, tmp_path) -> None:
    _, gallery = await launcher.call("GET", "/api/modes")
    mode = next(m for m in gallery["modes"] if any(p["type"] == "number" for p in m["params"]))
    number = next(p for p in mode["params"] if p["type"] == "number")
    target = str(tmp_path / "new-ws")
    cases = [
        ({"mode": mode["name"], "path": target, "params": {number["name"]: "wide"}},
         400, "E_BAD_ARGS", f"params.{number['name']}"),
        ({"mode": mode["name"], "path": target, "params": {"nonsense": 1}},
         400, "E_BAD_ARGS", "params.nonsense"),
        ({"mode": "no-such-mode", "path": target}, 404, "E_NOT_FOUND", "mode"),
        ({"mode": "doc", "path": "relative/dir"}, 400, "E_BAD_ARGS", "path"),
        ({"mode": "doc", "path": "/"}, 400, "E_BAD_ARGS", "path"),
        ({"mode": "doc", "path": "~"}, 400, "E_BAD_ARGS", "path"),
    ]
    for body, status, code, field in cases:
        got_status, got = await launcher.call("POST", "/api/workspaces/new", json=body)
        assert (got_status, got["error"]["code"], got["error"]["details"]["field"]) == (
            status, code, field), (body, got)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "thesis.tex").write_text("mine")
    status, got = await launcher.call("POST", "/api/workspaces/new",
                                      json={"mode": "doc", "path": str(busy)})
    assert (status, got["error"]["code"]) == (409, "E_CONFLICT")
    assert "not empty" in got["error"]["message"]
    assert (busy / "thesis.tex").read_text() == "mine" and not (busy / ".pneuma").exists()
    assert not Path(target).exists()  # nothing was created for a refused request
    assert launcher.state.hosting.sessions() == []


async def _session_get(http: aiohttp.ClientSession, base: str, token: str | None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with http.get(f"{base}/api/session", headers=headers) as r:
        return r.status


async def _tab(http: aiohttp.ClientSession, base: str, session_id: str, token: str) -> BrowserTab:
    ws = await http.ws_connect(f"{base}/ws/browser/{session_id}",
                               headers={"Authorization": f"Bearer {token}", "Origin": base})
    tab = BrowserTab(ws)
    await join_session(tab)
    return tab


async def test_two_workspaces_served_at_once_each_with_its_own_token_and_agent(
        launcher, tmp_path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    status, a = await launcher.call("POST", "/api/workspaces/new",
                                    json={"mode": "doc", "path": str(first)})
    assert status == 200, a
    status, b = await launcher.call("POST", "/api/workspaces/new",
                                    json={"mode": "doc", "path": str(second)})
    assert status == 200, b
    assert a["servedBy"] == b["servedBy"] == "launcher"
    base_a, token_a = a["url"].split("/?")[0], a["url"].rsplit("token=", 1)[1]
    base_b, token_b = b["url"].split("/?")[0], b["url"].rsplit("token=", 1)[1]
    assert base_a != base_b and token_a != token_b
    assert (first / "README.md").exists() or any(first.iterdir())  # seeded

    http = launcher.http
    assert await _session_get(http, base_a, token_a) == 200
    assert await _session_get(http, base_a, launcher.token) == 401  # the launcher's token
    assert await _session_get(http, base_a, token_b) == 401  # another session's token
    assert await _session_get(http, base_a, None) == 401
    async with http.get(f"{base_a}/api/session", headers={
            "Authorization": f"Bearer {token_a}"}) as r:
        info = await r.json()
    assert info["cwd"] == str(first.resolve()) and info["mode"] == "doc"

    # Each session has an agent of its own, and each answers in its own conversation.
    agents = [s.runner.app[SESSION].backend for s in launcher.state.hosting.sessions()]
    assert len(agents) == 2 and agents[0] is not agents[1] and None not in agents
    tab_a = await _tab(http, base_a, a["sessionId"], token_a)
    tab_b = await _tab(http, base_b, b["sessionId"], token_b)
    await tab_a.say("hello from a")
    await tab_b.say("hello from b")
    for tab in (tab_a, tab_b):
        # The greeting turn may still be ending: its result is not this turn's.
        await tab.wait_for("user_message", timeout=20)
        await tab.wait_for("result", timeout=20)
    users_a = [m["content"] for m in tab_a.received if m.get("type") == "user_message"]
    users_b = [m["content"] for m in tab_b.received if m.get("type") == "user_message"]
    assert users_a == ["hello from a"] and users_b == ["hello from b"]

    # Opening it again gives the same session; both are listed, as running here.
    status, again = await launcher.call("POST", "/api/workspaces/open",
                                        json={"path": str(first)})
    assert (status, again["url"]) == (200, a["url"])
    status, listed = await launcher.call("GET", "/api/workspaces")
    served = {w["path"]: w["served"] for w in listed["workspaces"]}
    assert served == {str(first.resolve()): {"by": "launcher", "url": a["url"]},
                      str(second.resolve()): {"by": "launcher", "url": b["url"]}}
    last = {w["path"]: w["lastMessage"] for w in listed["workspaces"]}
    assert last[str(second.resolve())]["text"]  # the agent's reply (or the user's line)
    status, found = await launcher.call("GET", "/api/workspaces", params={"q": "second"})
    assert [w["path"] for w in found["workspaces"]] == [str(second.resolve())]

    # Closing a tab stops nothing; stopping from the launcher does.
    await tab_a.close()
    await asyncio.sleep(0.2)
    assert await _session_get(http, base_a, token_a) == 200
    status, stopped = await launcher.call("POST", "/api/sessions/stop",
                                          json={"path": str(first.resolve())})
    assert status == 200, stopped
    try:
        status = await _session_get(http, base_a, token_a)
    except aiohttp.ClientConnectionError:
        status = None
    assert status is None
    session_file = json.loads((first / ".pneuma" / "session.json").read_text())
    assert session_file["sessionId"] == a["sessionId"]  # saved on the way out
    status, running = await launcher.call("GET", "/api/sessions")
    assert [s["path"] for s in running["sessions"]] == [str(second.resolve())]
    # The lock is given up: the workspace can be opened again (a new port, the same session).
    status, reopened = await launcher.call("POST", "/api/workspaces/open",
                                           json={"path": str(first)})
    assert status == 200 and reopened["sessionId"] == a["sessionId"]
    await tab_b.close()


async def test_a_workspace_served_by_another_process_is_not_opened_twice(
        launcher, tmp_path) -> None:
    from tests.pneuma_process import start_run

    workspace = tmp_path / "elsewhere"
    proc = start_run(workspace, "doc", "--port", "0")
    try:
        line = proc.stdout.readline()
        assert line.startswith("[pneuma] ready "), line
        url = line.split(" ", 2)[2].strip()
        status, body = await launcher.call("POST", "/api/workspaces/open",
                                           json={"path": str(workspace)})
        assert (status, body["servedBy"], body["url"]) == (200, "other", url)
        assert launcher.state.hosting.sessions() == []
    finally:
        proc.terminate()
        proc.communicate(timeout=15)


async def test_forget_drops_the_entry_and_keeps_the_files(launcher, tmp_path) -> None:
    workspace = tmp_path / "kept"
    status, body = await launcher.call("POST", "/api/workspaces/new",
                                       json={"mode": "doc", "path": str(workspace)})
    assert status == 200, body
    await launcher.call("POST", "/api/sessions/stop", json={"path": body["path"]})
    status, _ = await launcher.call("POST", "/api/workspaces/forget", json={"path": body["path"]})
    assert status == 200
    _, listed = await launcher.call("GET", "/api/workspaces")
    assert listed["workspaces"] == []
    assert (workspace / ".pneuma").is_dir()
    status, again = await launcher.call("POST", "/api/workspaces/forget",
                                        json={"path": body["path"]})
    assert (status, again["error"]["code"]) == (404, "E_NOT_FOUND")


async def test_closing_the_tab_does_not_stop_an_agent_mid_turn(launcher, tmp_path) -> None:
    status, opened = await launcher.call("POST", "/api/workspaces/new",
                                         json={"mode": "doc", "path": str(tmp_path / "busy")})
    assert status == 200, opened
    base, token = opened["url"].split("/?")[0], opened["url"].rsplit("token=", 1)[1]
    tab = await _tab(launcher.http, base, opened["sessionId"], token)
    await tab.say("slow")  # the fake CLI streams for 10 s unless interrupted
    await tab.wait_for("stream_event", timeout=10)
    await tab.close()
    await asyncio.sleep(1.0)  # no tab at all for a while
    later = await _tab(launcher.http, base, opened["sessionId"], token)
    result = await later.wait_for("result", timeout=20,
                                  where=lambda m: "word" in str(m["data"].get("result")))
    # The turn ran to its end: not interrupted (that would be an error result).
    assert result["data"]["subtype"] == "success" and not result["data"]["is_error"], result
    await later.close()


async def test_the_gallery_names_a_plugin_that_failed_and_why(launcher) -> None:
    from pneuma.api import hookimpl
    from pneuma.testing import register_plugin

    class BrokenModes:
        @hookimpl
        def register_modes(self):
            raise RuntimeError("the manifest went missing")

    with register_plugin(BrokenModes(), "broken-modes"):
        status, body = await launcher.call("GET", "/api/modes")
    assert status == 200
    assert {"plugin": "broken-modes", "distribution": None,
            "error": "register_modes() raised RuntimeError: the manifest went missing"
            } in body["errors"]
    assert BUILT_IN <= {m["name"] for m in body["modes"]}  # the others are still there
