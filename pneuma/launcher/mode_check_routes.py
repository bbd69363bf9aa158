"""The launcher's check report on a mode's card (docs/launcher.md;
docs/mode-authors.md, "Check a mode"):

    GET  /api/modes/checks        the reports already made, {name: {version, report}},
                                  for the modes as installed now (a report of another
                                  version of the mode is not shown)
    POST /api/modes/{name}/check  check the installed mode now (`pneuma mode check NAME`,
                                  a child process with its own server and Chromium);
                                  200 {version, report}; 404 E_NOT_FOUND; 409 E_BUSY
                                  while another check runs

Reports are kept per mode and version for as long as the launcher runs: a
mode updated to another version is checked again when asked.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from pneuma.core.errors import ToolError
from pneuma.host.modes import LoadedMode, UnknownModeError
from pneuma.host.registry import load_modes
from pneuma.server.errors import json_text

ROUTES = web.RouteTableDef()


@dataclass
class CheckReports:
    """The launcher's reports, by mode name: (version, report as JSON)."""

    by_mode: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    running: str | None = None


CHECK_REPORTS = web.AppKey("mode_check_reports", CheckReports)


def add_routes(app: web.Application) -> None:
    app[CHECK_REPORTS] = CheckReports()
    app.router.add_routes(ROUTES)


def version_of(mode: LoadedMode) -> str:
    """What a report is kept under: the manifest's version and, for an
    installed distribution, its own (a git install's commit changes it)."""
    dist = mode.distribution_version
    return mode.manifest.version + (f"+{dist}" if dist and dist != mode.manifest.version else "")


async def installed() -> dict[str, LoadedMode]:
    registry = await asyncio.get_running_loop().run_in_executor(None, load_modes)
    return dict(registry.modes)


@ROUTES.get("/api/modes/checks")
async def check_reports(request: web.Request) -> web.Response:
    reports = request.app[CHECK_REPORTS]
    modes = await installed()
    current = {name: {"version": version, "report": report}
               for name, (version, report) in reports.by_mode.items()
               if name in modes and version_of(modes[name]) == version}
    return web.json_response({"reports": current, "running": reports.running}, dumps=json_text)


@ROUTES.post("/api/modes/{name}/check")
async def run_check(request: web.Request) -> web.Response:
    from pneuma.mode_check import check_mode

    name = request.match_info["name"]
    reports = request.app[CHECK_REPORTS]
    modes = await installed()
    if name not in modes:
        raise ToolError("E_NOT_FOUND", str(UnknownModeError(name, load_modes())),
                        details={"mode": name})
    if reports.running is not None:
        raise ToolError("E_BUSY", f"the mode '{reports.running}' is being checked; wait for it to finish",
                        details={"mode": reports.running})
    reports.running = name
    try:
        report = await asyncio.to_thread(check_mode, name)
    finally:
        reports.running = None
    version = version_of(modes[name])
    reports.by_mode[name] = (version, report.to_dict())
    return web.json_response({"version": version, "report": report.to_dict()}, dumps=json_text)
