"""The launcher's "Add a mode" box: install a mode with pip while the page
shows how far it is (docs/launcher.md; docs/mode-authors.md, "Install from
anywhere").

    POST /api/modes/install   {source[, editable][, check]}: start installing (202);
                              409 E_BUSY while another install runs
    GET  /api/modes/install   the last install: state (idle, running, done, failed),
                              its progress lines, the mode it installed or the error

The launcher's security middleware guards both like every other route (its
token, its own Host and Origin); only POST starts anything. The install runs
in a worker thread (pip takes seconds to minutes); the page polls the GET.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web

from pneuma.core.errors import ToolError
from pneuma.mode_sources import install_mode
from pneuma.mode_sources.sources import parse_source
from pneuma.server.errors import json_text

MAX_LINES = 400  # what the box keeps of pip's progress
MAX_SOURCE = 2000

JobState = Literal["idle", "running", "done", "failed"]


@dataclass
class InstallJob:
    """The launcher's one install: at most one runs at a time."""

    state: JobState = "idle"
    source: str = ""
    lines: list[str] = field(default_factory=list)
    mode: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def to_json(self) -> dict[str, Any]:
        with self.lock:
            return {"state": self.state, "source": self.source, "lines": list(self.lines),
                    "mode": self.mode, "error": self.error}

    def add_line(self, line: str) -> None:
        with self.lock:
            self.lines.append(line)
            del self.lines[:-MAX_LINES]


INSTALL_JOB = web.AppKey("mode_install_job", InstallJob)
ROUTES = web.RouteTableDef()


def add_routes(app: web.Application) -> None:
    app[INSTALL_JOB] = InstallJob()
    app.router.add_routes(ROUTES)


@ROUTES.get("/api/modes/install")
async def install_progress(request: web.Request) -> web.Response:
    return web.json_response(request.app[INSTALL_JOB].to_json(), dumps=json_text)


@ROUTES.post("/api/modes/install")
async def start_install(request: web.Request) -> web.Response:
    source, editable, check = _request_body(await _json_object(request))
    parse_source(source, editable=editable)  # a source of no known kind: 400 now, not later
    job = request.app[INSTALL_JOB]
    with job.lock:
        if job.state == "running":
            raise ToolError("E_BUSY", f"a mode is being installed already ({job.source}); "
                            "wait for it to finish", details={"source": job.source})
        job.state, job.source, job.lines, job.mode, job.error = "running", source, [], None, None
    loop = asyncio.get_running_loop()
    loop.run_in_executor(None, _run, job, source, editable, check)
    return web.json_response(job.to_json(), status=202, dumps=json_text)


def _run(job: InstallJob, source: str, editable: bool, check: bool | None) -> None:
    try:
        installed = install_mode(source, editable=editable, check=check, progress=job.add_line)
    except ToolError as exc:
        outcome: tuple[JobState, Any] = ("failed", exc.to_dict()["error"])
    except Exception as exc:  # a bug must still end the job, said in one line
        outcome = ("failed", {"code": "E_INTERNAL", "message": f"{type(exc).__name__}: {exc}",
                              "details": {}})
    else:
        outcome = ("done", installed.to_json())
    with job.lock:
        job.state = outcome[0]
        if outcome[0] == "done":
            job.mode = outcome[1]
        else:
            job.error = outcome[1]


async def _json_object(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise ToolError("E_BAD_ARGS", "the body must be a JSON object", details={"field": "(root)"})
    return body


def _request_body(body: dict[str, Any]) -> tuple[str, bool, bool | None]:
    source = body.get("source")
    if not isinstance(source, str) or not source.strip() or len(source) > MAX_SOURCE:
        raise ToolError("E_BAD_ARGS", "give a source: a git URL, a folder, a wheel or sdist, or a "
                        "PyPI name", details={"field": "source", "reason": "required"})
    editable = body.get("editable", False)
    check = body.get("check")
    if not isinstance(editable, bool) or not (check is None or isinstance(check, bool)):
        raise ToolError("E_BAD_ARGS", "'editable' and 'check' must be true or false",
                        details={"field": "editable" if not isinstance(editable, bool) else "check"})
    return source.strip(), editable, check
