"""CoAuthor on the ``pneuma run`` server: the viewer's HTTP routes, and the
live billboard that keeps every tab up to date.

``coauthor_routes(pneuma)`` is what the plugin's ``register_routes`` hook
returns (the host calls it only when coauthor is served). Every route sits
behind the server's token, Host and Origin checks (the browser is
authorised by the shell's cookie) and answers a refusal as a ``ToolError``
in the host's one error shape. Each route calls the same use case as the
CLI subcommand of the same name, so Accept in the browser runs the same
revision checks as ``patch accept``.

``GET  /api/coauthor/tasks``                       the board
``POST /api/coauthor/tasks`` {title, file?, lines?, priority?}
                                                   ``task create`` (``lines`` "12-18")
``GET  /api/coauthor/tasks/{id}``                  the task, its thread, its patches
``POST /api/coauthor/tasks/{id}/accept`` {patchId?}        ``patch accept``
``POST /api/coauthor/tasks/{id}/reject`` {patchId?, reason} ``patch reject``
``POST /api/coauthor/tasks/{id}/feedback`` {text, answer?}  ``task feedback``
``POST /api/coauthor/tasks/{id}/cancel`` {reason?}          ``task cancel``
``GET  /api/coauthor/patches/{patchId}``           one proposal, side by side

Live updates need no route: every event the billboard folds (appended here,
by a ``pneuma coauthor`` command in another process, or recorded from the
person's edits) reaches every tab as the host's broadcast
``{"type": "mode_event", "name": "billboard_event", "data": <event>}``.
The person's edits come from the host's one file watcher
(``Pneuma.on_files_changed``) and enter the log as ``ArtifactChanged``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web

from pneuma.api import Pneuma, ToolError
from pneuma_coauthor import viewer_api
from pneuma_coauthor.domain.events import TaskEvent
from pneuma_coauthor.domain.model import ArtifactRef, LineRange, Priority
from pneuma_coauthor.domain.state import InvalidTransition
from pneuma_coauthor.watcher import SETTLE_MS, record_changes, watched_paths
from pneuma_coauthor.workflow.usecases import (
    CoAuthor,
    NotAllowed,
    NotFound,
    UseCaseError,
)

T = TypeVar("T")
API = "/api/coauthor"
EVENT_MESSAGE = "billboard_event"


class Service:
    """One CoAuthor over the session's workspace. Every use case runs on one
    worker thread: SQLite's fsync never blocks the server's loop, and two
    clicks never interleave inside a use case. What happens between requests
    (recording the person's edits, folding other processes' events) runs on
    a second one, so that it goes on while a use case runs latexmk; the
    billboard is safe to share between threads. ``close`` waits for both
    before it closes the billboard: SQLite must never see its connection
    closed under a running statement."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="coauthor")
        self.background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="coauthor-log")
        self._app: CoAuthor | None = None

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

    async def run_in_background(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(app, *args)`` on the second thread, once ``run`` has opened the billboard."""
        app = self._app
        if app is None:
            raise RuntimeError("the billboard is not open (or already closed)")
        return await asyncio.get_running_loop().run_in_executor(self.background, lambda: fn(app, *args))

    def close(self) -> None:
        self.executor.shutdown(wait=True)
        self.background.shutdown(wait=True)
        if self._app is not None:
            self._app.close()
            self._app = None


def event_message(event: TaskEvent) -> dict[str, Any]:
    """The browser message that carries one billboard event to the viewer."""
    return {"type": "mode_event", "name": EVENT_MESSAGE, "data": viewer_api.event_json(event)}


class LiveBillboard:
    """What the server does for CoAuthor between requests: it records the
    person's edits reported by the host's watcher, folds what other
    processes append, and broadcasts every event to the tabs."""

    def __init__(self, service: Service, pneuma: Pneuma) -> None:
        self.service = service
        self.pneuma = pneuma
        self._ready = asyncio.Event()  # the billboard is open and the start-up scan is done
        self._pending: set[str] = set()
        self._recording: asyncio.Task[None] | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._unsubscribe: Callable[[], None] | None = None
        self._closed = False

    def start(self) -> None:
        self._unsubscribe = self.pneuma.on_files_changed(self.files_changed)
        self.pneuma.on_startup(self._begin)
        self.pneuma.on_shutdown(self.stop)

    async def _begin(self) -> None:
        self._tasks.append(self.pneuma.spawn(self._open()))

    async def _open(self) -> None:
        last_seq = await self.service.run(lambda app: app.billboard.projector.last_seq)
        billboard = self.service.app.billboard
        self._tasks.append(self.pneuma.spawn(self._broadcast(last_seq)))
        # The agent's and the person's `pneuma coauthor` commands append from
        # their own processes: fold their events so that they are broadcast too.
        self._tasks.append(self.pneuma.spawn(billboard.follow_other_writers(executor=self.service.background)))
        # Edits made while no server watched (its broadcast comes from the log).
        await self.service.run_in_background(CoAuthor.scan_files)
        self._ready.set()

    async def _broadcast(self, after_seq: int) -> None:
        # From the seq the billboard had when it opened: nothing appended
        # since (the scan, a request) is missed, nothing is sent twice.
        async for event in self.service.app.billboard.subscribe_events(after_seq=after_seq):
            self.pneuma.broadcast(event_message(event))

    def files_changed(self, files: list[dict[str, Any]]) -> None:
        """The host's watcher reported a batch: record its paper files soon."""
        if self._closed:
            return
        self._pending.update(watched_paths(files))
        if self._pending and (self._recording is None or self._recording.done()):
            self._recording = self.pneuma.spawn(self._record_pending())

    async def _record_pending(self) -> None:
        await self._ready.wait()
        while self._pending and not self._closed:
            await asyncio.sleep(SETTLE_MS / 1000)
            paths = sorted(self._pending)
            self._pending.clear()
            # Not on the routes' worker: an edit is recorded even while an
            # accept is running latexmk there.
            await self.service.run_in_background(record_changes, paths)

    async def stop(self) -> None:
        self._closed = True
        if self._unsubscribe is not None:
            self._unsubscribe()
        jobs = [*self._tasks, *([self._recording] if self._recording is not None else [])]
        for job in jobs:
            job.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
        await asyncio.get_running_loop().run_in_executor(None, self.service.close)


# -- requests --------------------------------------------------------------------------------


def _refusal(exc: Exception) -> ToolError:
    """A use case's refusal in the host's error model."""
    if isinstance(exc, NotFound):
        return ToolError("E_NOT_FOUND", str(exc))
    if isinstance(exc, NotAllowed):
        return ToolError("E_POLICY_VIOLATION", str(exc))
    return ToolError("E_CONFLICT", str(exc), hint="the task's state changed: reload it and decide again")


async def _body(request: web.Request) -> dict[str, Any]:
    if not request.can_read_body:
        return {}
    try:
        data = await request.json()
    except ValueError as exc:
        raise ToolError("E_BAD_ARGS", f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ToolError("E_BAD_ARGS", "the body must be a JSON object")
    return data


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


class Routes:
    """The handlers, over one ``Service``."""

    def __init__(self, service: Service) -> None:
        self.service = service

    async def _use(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a use case; its refusal becomes the matching ``ToolError``."""
        try:
            return await self.service.run(fn, *args, **kwargs)
        except (UseCaseError, InvalidTransition) as exc:
            raise _refusal(exc) from None

    async def list_tasks(self, request: web.Request) -> web.Response:
        return web.json_response(await self.service.run(viewer_api.board))

    async def create_task(self, request: web.Request) -> web.Response:
        data = await _body(request)
        title = " ".join(str(data.get("title") or data.get("intent") or "").split())
        if not title:
            raise ToolError("E_BAD_ARGS", "a task needs a title: what should change")
        try:
            refs = parse_refs(data)
            priority = Priority(data.get("priority") or "foreground")
            view = await self.service.run(CoAuthor.create_task, title, refs=refs, priority=priority)
        except (UseCaseError, InvalidTransition, ValueError) as exc:
            # A line range or path that names no paper file, an unknown priority.
            raise ToolError("E_BAD_ARGS", str(exc)) from None
        return web.json_response({"task": view.dump(), "taskId": view.task_id}, status=201)

    async def get_task(self, request: web.Request) -> web.Response:
        return web.json_response(await self._use(viewer_api.task_detail, request.match_info["task_id"]))

    async def get_patch(self, request: web.Request) -> web.Response:
        return web.json_response(await self._use(viewer_api.find_patch, request.match_info["patch_id"]))

    async def accept(self, request: web.Request) -> web.Response:
        task_id = request.match_info["task_id"]
        data = await _body(request)
        result = await self._use(CoAuthor.accept_patch, task_id, str(data.get("patchId") or "latest"))
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

    async def reject(self, request: web.Request) -> web.Response:
        task_id = request.match_info["task_id"]
        data = await _body(request)
        reason = " ".join(str(data.get("reason") or "").split())
        if not reason:
            raise ToolError("E_BAD_ARGS", "say why the patch is rejected: the agent plans again from the reason")
        patch_id = await self._use(CoAuthor.reject_patch, task_id, str(data.get("patchId") or "latest"), reason)
        return web.json_response({"patchId": patch_id, "status": "rejected", "reason": reason})

    async def feedback(self, request: web.Request) -> web.Response:
        task_id = request.match_info["task_id"]
        data = await _body(request)
        text = str(data.get("text") or "").strip()
        if not text:
            raise ToolError("E_BAD_ARGS", "feedback needs a text")
        kind = "answer" if data.get("answer") else "followup"
        await self._use(CoAuthor.post_feedback, task_id, text, kind=kind)
        return web.json_response({"taskId": task_id, "kind": kind})

    async def cancel(self, request: web.Request) -> web.Response:
        task_id = request.match_info["task_id"]
        data = await _body(request)
        await self._use(CoAuthor.cancel, task_id, str(data.get("reason") or ""))
        return web.json_response({"taskId": task_id, "status": "canceled"})


def coauthor_routes(pneuma: Pneuma) -> list[web.RouteDef]:
    """The routes of one served session; starts its live billboard, which
    ends when the server stops."""
    service = Service(pneuma.workspace.resolve())
    LiveBillboard(service, pneuma).start()
    routes = Routes(service)
    return [
        web.get(f"{API}/tasks", routes.list_tasks),
        web.post(f"{API}/tasks", routes.create_task),
        web.get(f"{API}/tasks/{{task_id}}", routes.get_task),
        web.post(f"{API}/tasks/{{task_id}}/accept", routes.accept),
        web.post(f"{API}/tasks/{{task_id}}/reject", routes.reject),
        web.post(f"{API}/tasks/{{task_id}}/feedback", routes.feedback),
        web.post(f"{API}/tasks/{{task_id}}/cancel", routes.cancel),
        web.get(f"{API}/patches/{{patch_id}}", routes.get_patch),
    ]
