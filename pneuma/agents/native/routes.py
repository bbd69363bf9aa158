"""HTTP routes and the browser clients' WebSocket of the native backend.

The native backend's ``BackendSpec.routes`` (``plugin.py``) returns these for
a session that runs ``--backend native`` only; all sit behind the session
token like every route, and every failure is a ``ToolError`` answered in the
one error shape (``{"error": {"code": "E_…", …}}``).

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

Errors: ``E_BAD_ARGS`` (no ``clientId``, or a client that is not a
browser), ``E_NOT_FOUND`` (unknown client, artifact or session),
``E_UNAVAILABLE`` (the client is offline, or the backend is not running
yet), ``E_TOO_LARGE`` (an artifact over the limit).
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import Any

from aiohttp import WSMsgType, web

from pneuma.api import Pneuma, ToolError

from . import page_module
from .artifacts import ArtifactError
from .backend import NativeBackend
from .orchestrator import NotABrowser

log = logging.getLogger(__name__)

MAX_CLIENT_MESSAGE = 16 * 1024 * 1024
HELLO_TIMEOUT = 10.0


async def browser_module(request: web.Request) -> web.FileResponse:
    """The backend's browser module (page_module.py)."""
    return web.FileResponse(page_module.FILE, headers={"Content-Type": "text/javascript; charset=utf-8"})


def native_routes(pneuma: Pneuma) -> list[web.RouteDef]:
    """The routes of a session running the native backend."""
    routes = NativeRoutes(pneuma)
    return [
        web.get(page_module.URL, browser_module),
        web.get("/api/task/id", routes.task_id),
        web.get("/api/tasks", routes.task_list),
        web.get("/api/extension/extension-list", routes.extension_list),
        web.post("/api/extension/select", routes.extension_select),
        web.get("/api/extension/twin", routes.extension_twin),
        web.post("/api/artifacts", routes.artifact_upload),
        web.get("/api/artifacts/{artifact_id}", routes.artifact_get),
        web.get("/ws/extension/{sid}", routes.extension_socket),
    ]


class NativeRoutes:
    """The handlers, bound to one running session."""

    def __init__(self, pneuma: Pneuma) -> None:
        self.pneuma = pneuma

    @property
    def backend(self) -> NativeBackend:
        backend = self.pneuma.backend
        if not isinstance(backend, NativeBackend):  # the server has not started it (yet)
            raise ToolError("E_UNAVAILABLE", "the native backend is not running in this session",
                            hint="wait until the server is ready, then ask again")
        return backend

    async def task_id(self, request: web.Request) -> web.Response:
        return web.json_response({"taskId": self.backend.orchestrator.reserve_task_id()})

    async def task_list(self, request: web.Request) -> web.Response:
        orchestrator = self.backend.orchestrator
        current = orchestrator.current
        return web.json_response({"tasks": orchestrator.tasks(),
                                  "currentTaskId": current.id if current else None})

    async def extension_list(self, request: web.Request) -> web.Response:
        return web.json_response(self.backend.extension_list())

    async def extension_select(self, request: web.Request) -> web.Response:
        backend = self.backend
        try:
            body = await request.json()
        except ValueError:
            raise ToolError("E_BAD_ARGS", "the body must be JSON {clientId}") from None
        client_id = body.get("clientId") if isinstance(body, dict) else None
        if not isinstance(client_id, str) or not client_id:
            raise ToolError("E_BAD_ARGS", "'clientId' is required")
        try:
            client = backend.orchestrator.select_client(client_id)
        except KeyError:
            raise ToolError("E_NOT_FOUND", f"no browser client {client_id!r}",
                            details={"clientId": client_id},
                            hint="GET /api/extension/extension-list lists the clients") from None
        except NotABrowser as exc:
            raise ToolError("E_BAD_ARGS", str(exc), details={"clientId": client_id}) from None
        except ValueError as exc:
            raise ToolError("E_UNAVAILABLE", str(exc), details={"clientId": client_id},
                            hint="pick a client that is online") from None
        return web.json_response({"success": True, "client": client})

    async def extension_twin(self, request: web.Request) -> web.Response:
        backend = self.backend
        client_id = request.query.get("clientId") or backend.registry.selected(
            self.pneuma.session_id) or ""
        return web.json_response({"clientId": client_id, "twin": backend.twins.get(client_id)})

    async def artifact_upload(self, request: web.Request) -> web.Response:
        backend = self.backend
        data = await request.read()
        try:
            info = backend.artifacts.save(
                data, request.content_type or "application/octet-stream",
                kind=request.query.get("kind", "file"), task_id=request.query.get("taskId"))
        except ArtifactError as exc:
            raise ToolError("E_TOO_LARGE", str(exc)) from None
        return web.json_response(info)

    async def artifact_get(self, request: web.Request) -> web.StreamResponse:
        backend = self.backend
        artifact_id = request.match_info["artifact_id"]
        info = backend.artifacts.info(artifact_id)
        path = backend.artifacts.path(artifact_id)
        if info is None or path is None:
            raise ToolError("E_NOT_FOUND", f"no artifact {artifact_id}",
                            details={"artifactId": artifact_id})
        return web.FileResponse(path, headers={"Content-Type": info["contentType"],
                                               "Cache-Control": "private, max-age=3600",
                                               "X-Content-Type-Options": "nosniff",
                                               "Content-Security-Policy": "sandbox"})

    async def extension_socket(self, request: web.Request) -> web.StreamResponse:
        session_id = self.pneuma.session_id
        if request.match_info["sid"] != session_id:
            raise ToolError("E_NOT_FOUND", f"no session {request.match_info['sid']!r} on this server")
        backend = self.backend
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
        await send({"type": "welcome", "clientId": client_id, "sessionId": session_id})
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
