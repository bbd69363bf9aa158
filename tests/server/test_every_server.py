"""Every server Pneuma starts guards every one of its routes the same way.

One server code path serves every mode (its own routes included), every
backend's routes (the native runtime's) and the headless server a tool
starts (tests/webgal/test_preview_security.py starts that one as
``preview_scene`` does). Here each installed mode is served, and the
native backend once, and every route of the application is asked without
the token, with a foreign Host and with a foreign Origin.
"""

from __future__ import annotations

import re

import pytest

from pneuma.host.registry import get_plugin_manager, load_modes
from pneuma.testing import serve

MODES = sorted(load_modes(get_plugin_manager()).modes)


def _routes(app, session_id: str) -> list[tuple[str, str]]:
    def fill(match: re.Match[str]) -> str:
        name = match.group(1).split(":")[0]
        return {"sid": session_id}.get(name, "x")

    routes = set()
    for resource in app.router.resources():
        path = re.sub(r"\{([^}]+)\}", fill, resource.canonical)
        for route in resource:
            methods = ("GET", "POST") if route.method == "*" else (route.method,)
            routes.update((method, path) for method in methods if method != "HEAD")
    return sorted(routes)


async def _refusals(server) -> dict[str, list[tuple[str, str, int]]]:
    wrong: dict[str, list[tuple[str, str, int]]] = {"token": [], "host": [], "origin": []}
    routes = _routes(server.app, server.session_id)
    assert routes
    for method, path in routes:
        url = server.url + path
        async with server.session.request(method, url) as r:
            if r.status != 401 or (await r.json())["error"]["code"] != "E_UNAUTHORIZED":
                wrong["token"].append((method, path, r.status))
        async with server.session.request(method, url, headers={
                **server.auth, "Host": "evil.example:80"}) as r:
            if r.status != 403 or (await r.json())["error"]["code"] != "E_FORBIDDEN":
                wrong["host"].append((method, path, r.status))
        async with server.session.request(method, url, headers={
                **server.auth, "Origin": "http://evil.example"}) as r:
            if r.status != 403 or (await r.json())["error"]["code"] != "E_FORBIDDEN":
                wrong["origin"].append((method, path, r.status))
    return wrong


@pytest.mark.parametrize("mode", MODES)
async def test_every_route_of_every_mode_server_is_guarded(mode, tmp_path):
    async with serve(mode, tmp_path / "ws", backend="none", watch=False) as server:
        paths = {path for _, path in _routes(server.app, server.session_id)}
        # Every mode exports through the one Export route (no mode has its own).
        assert {"/api/export", "/api/export/x"} <= paths
        assert not any(p.endswith("/export") and p != "/api/export" for p in paths), paths
        assert await _refusals(server) == {"token": [], "host": [], "origin": []}


async def test_every_route_of_the_native_backend_is_guarded(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # never called here
    async with serve("doc", tmp_path / "ws", backend="native", watch=False) as server:
        paths = {path for _, path in _routes(server.app, server.session_id)}
        assert "/api/tasks" in paths  # the backend's own routes are there
        assert await _refusals(server) == {"token": [], "host": [], "origin": []}


def test_all_built_in_modes_are_covered():
    assert {"slide", "doc", "draw", "webgal", "coauthor", "webcraft", "diagram"} <= set(MODES)
