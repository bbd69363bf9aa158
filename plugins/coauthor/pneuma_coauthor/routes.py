"""The CoAuthor viewer's HTTP routes on the ``pneuma run`` server.

Added by the plugin's ``register_routes`` hook only when the served mode is
``coauthor``; every route sits behind the server's token, Host and Origin
checks (the browser is authorised by the shell's cookie). Each route calls
the same use case as the CLI subcommand of the same name, so Accept in the
browser runs the same revision checks as ``patch accept``.

``GET  /api/coauthor/tasks``                       the board
``POST /api/coauthor/tasks`` {title, file?, lines?, priority?}
                                                   ``task create`` (``lines`` "12-18")
``GET  /api/coauthor/tasks/{id}``                  the task, its thread, its patches
``POST /api/coauthor/tasks/{id}/accept`` {patchId?}        ``patch accept``
``POST /api/coauthor/tasks/{id}/reject`` {patchId?, reason} ``patch reject``
``POST /api/coauthor/tasks/{id}/feedback`` {text, answer?}  ``task feedback``
``POST /api/coauthor/tasks/{id}/cancel`` {reason?}          ``task cancel``
``GET  /api/coauthor/patches/{patchId}``           one proposal, side by side
``GET  /api/coauthor/events?since=SEQ&wait=S``     events after SEQ; waits up to
                                                   S seconds (≤ 25) for the first one

The server also folds what other processes append (the agent's and the
person's ``pneuma coauthor`` commands) and runs the file watcher, so the
person's own edits enter the log as ``ArtifactChanged``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from aiohttp import web

from pneuma.server.config import CONFIG
from pneuma.server.security import json_error
from pneuma_coauthor import viewer_api
from pneuma_coauthor.domain.model import ArtifactRef, LineRange, Priority
from pneuma_coauthor.domain.state import InvalidTransition
from pneuma_coauthor.workflow.usecases import CoAuthor, UseCaseError

log = logging.getLogger(__name__)

T = TypeVar("T")
MAX_WAIT = 25.0
POLL = 0.2


class Service:
    """One CoAuthor over the session's workspace. Every call runs on one
    worker thread: SQLite's fsync never blocks the server's loop, and two
    clicks never interleave inside a use case."""

    def __init__(self, workspace) -> None:  # noqa: ANN001
        self.workspace = workspace
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="coauthor")
        self._app: CoAuthor | None = None
        self.closing = asyncio.Event()

    @property
    def app(self) -> CoAuthor:
        if self._app is None:
            self._app = CoAuthor(self.workspace)
        return self._app

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(app, *args, **kwargs)`` on the worker thread (which also opens
        the billboard the first time, folding the log off the loop)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, lambda: fn(self.app, *args, **kwargs))

    def close(self) -> None:
        self.executor.shutdown(wait=True)
        if self._app is not None:
            self._app.close()
            self._app = None


SERVICE = web.AppKey("coauthor_service", Service)


def _error(exc: Exception) -> web.Response:
    message = str(exc)
    status = 404 if message.startswith(("no task", "no patch")) else 409
    return json_error(status, "coauthor_refused", message)


async def _body(request: web.Request) -> dict[str, Any]:
    if not request.can_read_body:
        return {}
    try:
        data = await request.json()
    except ValueError as exc:
        raise web.HTTPBadRequest(text=f"the body is not JSON: {exc}") from exc
    return data if isinstance(data, dict) else {}


def parse_refs(data: dict[str, Any]) -> list[ArtifactRef]:
    """``file`` + ``lines`` ("12-18", "12", [12, 18]) and/or ``refs`` ["path:12-18", …]."""
    refs: list[ArtifactRef] = []
    for spec in data.get("refs") or []:
        refs.append(ArtifactRef.parse(str(spec)))
    file = data.get("file")
    if file:
        lines = data.get("lines")
        if isinstance(lines, (list, tuple)) and lines:
            start, end = int(lines[0]), int(lines[-1])
            refs.append(ArtifactRef(path=str(file), range=LineRange(line_start=start, line_end=end)))
        elif lines:
            refs.append(ArtifactRef.parse(f"{file}:{lines}"))
        else:
            refs.append(ArtifactRef(path=str(file)))
    return refs


# -- handlers ------------------------------------------------------------------------------


async def list_tasks(request: web.Request) -> web.Response:
    service = request.app[SERVICE]
    return web.json_response(await service.run(viewer_api.board))


async def create_task(request: web.Request) -> web.Response:
    service = request.app[SERVICE]
    data = await _body(request)
    title = " ".join(str(data.get("title") or data.get("intent") or "").split())
    if not title:
        return json_error(400, "bad_request", "a task needs a title: what should change")
    try:
        refs = parse_refs(data)
        priority = Priority(data.get("priority") or "foreground")
        view = await service.run(CoAuthor.create_task, title, refs=refs, priority=priority)
    except (UseCaseError, InvalidTransition, ValueError) as exc:
        return json_error(400, "bad_request", str(exc))
    return web.json_response({"task": view.dump(), "taskId": view.task_id}, status=201)


async def _look_up(
    request: web.Request, find: Callable[[CoAuthor, str], dict[str, Any]], id_key: str
) -> web.Response:
    """``find(app, <the id in the URL>)`` as JSON, or the use case's refusal
    (an unknown id is a 404)."""
    try:
        found = await request.app[SERVICE].run(find, request.match_info[id_key])
    except UseCaseError as exc:
        return _error(exc)
    return web.json_response(found)


async def get_task(request: web.Request) -> web.Response:
    return await _look_up(request, viewer_api.task_detail, "task_id")


async def get_patch(request: web.Request) -> web.Response:
    return await _look_up(request, viewer_api.find_patch, "patch_id")


async def accept(request: web.Request) -> web.Response:
    service = request.app[SERVICE]
    task_id = request.match_info["task_id"]
    data = await _body(request)
    try:
        result = await service.run(CoAuthor.accept_patch, task_id, str(data.get("patchId") or "latest"))
    except (UseCaseError, InvalidTransition) as exc:
        return _error(exc)
    body: dict[str, Any] = {
        "patchId": result.patch_id,
        "status": result.status,
        "revisions": result.revisions,
        "reason": result.reason,
        "drifted": [d.dump() for d in result.drifted],
    }
    if result.build is not None:
        body["build"] = result.build.dump()
    # 200 either way: "needs_rebase" is an answer (the person's edit won), not a failure of the request.
    return web.json_response(body)


async def reject(request: web.Request) -> web.Response:
    service = request.app[SERVICE]
    task_id = request.match_info["task_id"]
    data = await _body(request)
    reason = " ".join(str(data.get("reason") or "").split())
    if not reason:
        return json_error(400, "bad_request", "say why the patch is rejected: the agent plans again from the reason")
    try:
        patch_id = await service.run(CoAuthor.reject_patch, task_id, str(data.get("patchId") or "latest"), reason)
    except (UseCaseError, InvalidTransition) as exc:
        return _error(exc)
    return web.json_response({"patchId": patch_id, "status": "rejected", "reason": reason})


async def feedback(request: web.Request) -> web.Response:
    service = request.app[SERVICE]
    task_id = request.match_info["task_id"]
    data = await _body(request)
    text = str(data.get("text") or "").strip()
    if not text:
        return json_error(400, "bad_request", "feedback needs a text")
    kind = "answer" if data.get("answer") else "followup"
    try:
        await service.run(CoAuthor.post_feedback, task_id, text, kind=kind)
    except (UseCaseError, InvalidTransition) as exc:
        return _error(exc)
    return web.json_response({"taskId": task_id, "kind": kind})


async def cancel(request: web.Request) -> web.Response:
    service = request.app[SERVICE]
    task_id = request.match_info["task_id"]
    data = await _body(request)
    try:
        await service.run(CoAuthor.cancel, task_id, str(data.get("reason") or ""))
    except (UseCaseError, InvalidTransition) as exc:
        return _error(exc)
    return web.json_response({"taskId": task_id, "status": "canceled"})


def _events_after(app: CoAuthor, since: int, limit: int) -> dict[str, Any]:
    app.billboard.refresh()
    last = app.billboard.projector.last_seq
    events = app.billboard.events(after_seq=since)[:limit] if last > since else []
    return {"lastSeq": last, "events": [viewer_api.event_json(e) for e in events]}


async def events(request: web.Request) -> web.Response:
    """Events after ``since``; with ``wait``, a long poll that answers as
    soon as there is one (or empty when the time is up)."""
    service = request.app[SERVICE]
    try:
        since = int(request.query.get("since", "0"))
        wait = min(max(float(request.query.get("wait", "0")), 0.0), MAX_WAIT)
        limit = min(max(int(request.query.get("limit", "500")), 1), 5000)
    except ValueError:
        return json_error(400, "bad_request", "since, wait and limit are numbers")
    deadline = time.monotonic() + wait
    while True:
        body = await service.run(_events_after, since, limit)
        if body["events"] or body["lastSeq"] < since or time.monotonic() >= deadline or service.closing.is_set():
            # lastSeq < since: the log was replaced (a new workspace); the viewer reloads.
            return web.json_response(body)
        try:
            await asyncio.wait_for(service.closing.wait(), POLL)
        except asyncio.TimeoutError:
            pass


# -- wiring ----------------------------------------------------------------------------------


async def _service_ctx(app: web.Application) -> AsyncIterator[None]:
    from pneuma_coauthor.watcher import watch_workspace

    service = app[SERVICE]
    stop = asyncio.Event()
    watcher = asyncio.get_running_loop().create_task(_watch(service, watch_workspace, stop))
    yield
    service.closing.set()
    stop.set()
    try:
        await asyncio.wait_for(watcher, 2)
    except (asyncio.TimeoutError, asyncio.CancelledError):
        watcher.cancel()
    except Exception:  # the watcher must never block shutdown
        log.exception("coauthor file watcher failed")
    await asyncio.get_running_loop().run_in_executor(None, service.close)


async def _watch(service: Service, watch_workspace: Callable[..., Any], stop: asyncio.Event) -> None:
    try:
        # Its own CoAuthor (its own SQLite connection): the watcher records
        # the person's edits while the routes' worker may be busy applying.
        watcher_app = await asyncio.to_thread(CoAuthor, service.workspace)
    except Exception:
        log.exception("coauthor: cannot open the billboard for the file watcher")
        return
    try:
        await watch_workspace(watcher_app, stop)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("coauthor file watcher stopped")
    finally:
        watcher_app.close()


async def _wake_waiters(app: web.Application) -> None:
    # on_shutdown runs before aiohttp waits for open requests: end the long polls now.
    app[SERVICE].closing.set()


def register(app: web.Application) -> None:
    config = app[CONFIG]
    app[SERVICE] = Service(config.workspace.resolve())
    app.on_shutdown.append(_wake_waiters)
    app.cleanup_ctx.append(_service_ctx)
    app.router.add_get("/api/coauthor/tasks", list_tasks)
    app.router.add_post("/api/coauthor/tasks", create_task)
    app.router.add_get("/api/coauthor/tasks/{task_id}", get_task)
    app.router.add_post("/api/coauthor/tasks/{task_id}/accept", accept)
    app.router.add_post("/api/coauthor/tasks/{task_id}/reject", reject)
    app.router.add_post("/api/coauthor/tasks/{task_id}/feedback", feedback)
    app.router.add_post("/api/coauthor/tasks/{task_id}/cancel", cancel)
    app.router.add_get("/api/coauthor/patches/{patch_id}", get_patch)
    app.router.add_get("/api/coauthor/events", events)
