"""HTTP routes and the browser clients' WebSocket of the native backend.

Registered (through the builtin agents plugin's ``register_routes``) only
when the session runs ``--backend native``; all sit behind the session
token like every route.

| route | what |
|---|---|
| ``GET /api/task/id`` | ``{taskId}``: the id the next message's task gets |
| ``GET /api/tasks`` | ``{tasks, currentTaskId}`` |
| ``GET /api/extension/extension-list`` | ``{clients: [{clientId, name, online, …}], selectedClientId, viewers}`` |
| ``POST /api/extension/select`` | ``{clientId}``: bind the session to that client (answers a waiting task) |
| ``GET /api/extension/twin?clientId=`` | that client's windows/tabs/groups/active tab |
| ``POST /api/artifacts?kind=&taskId=`` | the body (any content type) stored; ``{artifactId, url, …}`` |
| ``GET /api/artifacts/{id}`` | the stored artifact |
| ``GET /ws/extension/{session}`` | a browser client's socket (docs/native.md) |
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import Any

from aiohttp import WSMsgType, web

from pneuma.agents.native.artifacts import ArtifactError
from pneuma.agents.native.orchestrator import NotABrowser
from pneuma.server.config import SESSION
from pneuma.server.security import json_error

log = logging.getLogger(__name__)

MAX_CLIENT_MESSAGE = 16 * 1024 * 1024
HELLO_TIMEOUT = 10.0


def _backend(request: web.Request) -> Any:
    from pneuma.agents.native.backend import NativeBackend

    backend = request.app[SESSION].backend
    if not isinstance(backend, NativeBackend):
        raise web.HTTPConflict(text=json.dumps({"error": {
            "code": "not_native", "message": "this session does not run the native backend"}}),
            content_type="application/json")
    return backend


async def task_id(request: web.Request) -> web.Response:
    return web.json_response({"taskId": _backend(request).orchestrator.reserve_task_id()})


async def task_list(request: web.Request) -> web.Response:
    backend = _backend(request)
    current = backend.orchestrator.current
    return web.json_response({"tasks": backend.orchestrator.tasks(),
                              "currentTaskId": current.id if current else None})


async def extension_list(request: web.Request) -> web.Response:
    return web.json_response(_backend(request).extension_list())


async def extension_select(request: web.Request) -> web.Response:
    backend = _backend(request)
    try:
        body = await request.json()
    except ValueError:
        return json_error(400, "bad_request", "the body must be JSON {clientId}")
    client_id = body.get("clientId") if isinstance(body, dict) else None
    if not isinstance(client_id, str) or not client_id:
        return json_error(400, "bad_request", "'clientId' is required")
    try:
        client = backend.orchestrator.select_client(client_id)
    except KeyError:
        return json_error(404, "unknown_client", f"no browser client {client_id!r}")
    except NotABrowser as exc:
        return json_error(400, "not_a_browser", str(exc))
    except ValueError as exc:
        return json_error(409, "client_offline", str(exc))
    return web.json_response({"success": True, "client": client})


async def extension_twin(request: web.Request) -> web.Response:
    backend = _backend(request)
    client_id = request.query.get("clientId") or backend.registry.selected(
        request.app[SESSION].id) or ""
    return web.json_response({"clientId": client_id, "twin": backend.twins.get(client_id)})


async def artifact_upload(request: web.Request) -> web.Response:
    backend = _backend(request)
    data = await request.read()
    try:
        info = backend.artifacts.save(
            data, request.content_type or "application/octet-stream",
            kind=request.query.get("kind", "file"), task_id=request.query.get("taskId"))
    except ArtifactError as exc:
        return json_error(413, "too_large", str(exc))
    return web.json_response(info)


async def artifact_get(request: web.Request) -> web.StreamResponse:
    backend = _backend(request)
    artifact_id = request.match_info["artifact_id"]
    info = backend.artifacts.info(artifact_id)
    path = backend.artifacts.path(artifact_id)
    if info is None or path is None:
        return json_error(404, "not_found", f"no artifact {artifact_id}")
    return web.FileResponse(path, headers={"Content-Type": info["contentType"],
                                           "Cache-Control": "private, max-age=3600",
                                           "X-Content-Type-Options": "nosniff",
                                           "Content-Security-Policy": "sandbox"})


async def extension_socket(request: web.Request) -> web.StreamResponse:
    session = request.app[SESSION]
    if request.match_info["sid"] != session.id:
        return json_error(404, "unknown_session",
                          f"no session {request.match_info['sid']!r} on this server")
    backend = _backend(request)
    ws = web.WebSocketResponse(heartbeat=20.0, max_msg_size=MAX_CLIENT_MESSAGE)
    await ws.prepare(request)
    lock = asyncio.Lock()

    async def send(message: dict[str, Any]) -> bool:
        if ws.closed:
            return False
        try:
            async with lock:
                await ws.send_str(json.dumps(message, ensure_ascii=False))
        except (ConnectionResetError, RuntimeError):
            return False
        return True

    try:
        hello = await ws.receive(timeout=HELLO_TIMEOUT)
        first = json.loads(hello.data) if hello.type == WSMsgType.TEXT else None
    except (asyncio.TimeoutError, ValueError):
        first = None
    if not isinstance(first, dict) or first.get("type") != "hello":
        await ws.send_str(json.dumps({"type": "error", "code": "hello_required",
                                      "message": "the first message must be hello"}))
        await ws.close()
        return ws
    client_id = str(first.get("clientId") or f"client_{uuid.uuid4().hex[:12]}")
    metadata = first.get("metadata") if isinstance(first.get("metadata"), dict) else {}
    backend.registry.connect(client_id, send, name=str(first.get("name") or ""), metadata=metadata)
    await send({"type": "welcome", "clientId": client_id, "sessionId": session.id})
    try:
        async for frame in ws:
            if frame.type == WSMsgType.TEXT:
                try:
                    message = json.loads(frame.data)
                except ValueError:
                    await send({"type": "error", "code": "bad_message", "message": "not JSON"})
                    continue
                if not isinstance(message, dict):
                    continue
                try:
                    backend.client_message(client_id, message)
                except Exception:  # one bad message never drops the client
                    log.exception("handling a browser client message failed")
            elif frame.type == WSMsgType.ERROR:
                break
    finally:
        backend.registry.disconnect(client_id, send)
    return ws


def setup(app: web.Application) -> None:
    app.router.add_get("/api/task/id", task_id)
    app.router.add_get("/api/tasks", task_list)
    app.router.add_get("/api/extension/extension-list", extension_list)
    app.router.add_post("/api/extension/select", extension_select)
    app.router.add_get("/api/extension/twin", extension_twin)
    app.router.add_post("/api/artifacts", artifact_upload)
    app.router.add_get("/api/artifacts/{artifact_id}", artifact_get)
    app.router.add_get("/ws/extension/{sid}", extension_socket)
