"""The native backend is a plugin like any third-party backend: it comes
from its own module through ``register_backends``, and its routes exist
only in a session that runs it."""

from __future__ import annotations

import pytest

from pneuma.agents.native.plugin import NATIVE
from pneuma.host.plugins import DEFAULT_PLUGINS

NATIVE_ROUTES = {
    "/api/task/id",
    "/api/tasks",
    "/api/extension/extension-list",
    "/api/extension/select",
    "/api/extension/twin",
    "/api/artifacts",
    "/api/artifacts/{artifact_id}",
    "/ws/extension/{sid}",
}


def _paths(server) -> set[str]:
    return {resource.canonical for resource in server.client.app.router.resources()}


def test_the_native_backend_is_offered_by_its_own_plugin(pm):
    assert "pneuma.agents.native.plugin" in DEFAULT_PLUGINS
    offered = {
        (pm.get_name(impl.plugin), spec.name)
        for impl in pm.hook.register_backends.get_hookimpls()
        for spec in impl.function()
    }
    assert ("pneuma.agents.native.plugin", "native") in offered
    assert [name for name, backend in offered if backend == "native"] == ["pneuma.agents.native.plugin"]
    assert NATIVE.routes is not None


async def test_a_native_session_serves_the_native_routes(make_native):
    server = await make_native()
    assert NATIVE_ROUTES <= _paths(server)
    status, body = await server.get_json("/api/tasks")
    assert status == 200 and body == {"tasks": [], "currentTaskId": None}
    await server.close()


@pytest.mark.parametrize("backend", ["none", "socket"])
async def test_other_backends_do_not_have_the_native_routes(make_native, backend):
    server = await make_native(backend=backend)
    assert not NATIVE_ROUTES & _paths(server)
    status, body = await server.get_json("/api/tasks")
    assert status == 404 and body["error"]["code"] == "E_NOT_FOUND"
    status, body = await server.get_json("/api/extension/extension-list")
    assert status == 404 and body["error"]["code"] == "E_NOT_FOUND"
    await server.close()


async def test_the_native_routes_answer_in_the_one_error_shape(make_native):
    server = await make_native()
    status, body = await server.post_json("/api/extension/select", {"clientId": "nobody"})
    assert status == 404 and body["error"]["code"] == "E_NOT_FOUND"
    assert "nobody" in body["error"]["message"]
    status, body = await server.post_json("/api/extension/select", {})
    assert status == 400 and body["error"]["code"] == "E_BAD_ARGS"
    status, body = await server.get_json("/api/artifacts/no-such-artifact")
    assert status == 404 and body["error"]["code"] == "E_NOT_FOUND"
    async with server.client.get("/ws/extension/another-session", headers=server.auth) as response:
        assert response.status == 404
        assert (await response.json())["error"]["code"] == "E_NOT_FOUND"
    await server.close()
