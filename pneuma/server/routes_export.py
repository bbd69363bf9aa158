"""The shell's Export menu over HTTP (the served mode's exporter, from
``register_exporters``; docs/hooks.md):

    GET /api/export            {"mode", "formats": [{"name", "label", "suffix"}]}
    GET /api/export/{format}   the export as a download (a zip for a format
                               that writes several files), also kept under W/exports/;
                               ``X-Pneuma-Export-Left-Out`` lists (percent-encoded JSON) the
                               slides, pages or diagrams left out while the rest was exported
    GET /api/export/{format}/progress[?id=ID]
                               {"running", "done", "total", "what"}: how far that export is,
                               as its exporter reports it (``ExportRequest.report``), for the
                               menu to show while it waits ("frame 120/240"). The menu names
                               its export (``GET /api/export/{format}?progress=ID``), so that
                               two tabs exporting the same format each see their own

An export whose page went away (the tab closed, the request aborted) is
stopped at its next progress report: the exporter removes what it had half
written.

Exports run in a worker thread (they print with Chromium). An
``ExportError`` answers with its own code and hint: ``E_CONFLICT`` (the
workspace cannot be exported as it stands), ``E_UNAVAILABLE`` (no Chromium
installed), ``E_PREVIEW_FAIL`` (Chromium failed), ``E_TIMEOUT``. A
Playwright error an exporter let escape is answered the same way
(``renderer_failure``). A format the mode does not offer is ``E_BAD_ARGS``,
a disk error ``E_IO``.
"""

from __future__ import annotations

import asyncio
import json
import zipfile
from pathlib import Path
from urllib.parse import quote

from aiohttp import web

from pneuma.core.errors import ToolError
from pneuma.host.exporters import Exporter, ExportError, ExportResult, all_exporters
from pneuma.host.plugins import get_plugin_manager
from pneuma.server.handle import PNEUMA, Pneuma
from pneuma.tools.html_render import renderer_failure

_MEDIA = {
    ".pdf": "application/pdf",
    ".html": "text/html; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".zip": "application/zip",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
}


# "format" or "format:ID" (ID: the ?progress= the page chose) -> {"done", "total", "what"}
# of that running export
_PROGRESS: web.AppKey[dict[str, dict[str, object]]] = web.AppKey("export_progress", dict)


def _exporter(pneuma: Pneuma) -> Exporter | None:
    return all_exporters(get_plugin_manager()).get(pneuma.mode.name)


async def list_formats(request: web.Request) -> web.Response:
    pneuma: Pneuma = request.app[PNEUMA]
    exporter = _exporter(pneuma)
    formats = [] if exporter is None else [
        {"name": f.name, "label": f.label, "suffix": f.suffix} for f in exporter.formats]
    return web.json_response({"mode": pneuma.mode.name, "formats": formats})


def _one_file(result: ExportResult, workspace: Path, name: str) -> Path:
    """The file to download: the export itself, or a zip of its files."""
    if len(result.files) == 1:
        return result.files[0]
    first = result.files[0].parent
    target = first.with_name(first.name + ".zip") if first != workspace else workspace / f"{name}.zip"
    tmp = target.with_name(target.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in result.files:
            archive.write(path, path.relative_to(first).as_posix() if path.is_relative_to(first)
                          else path.name)
    tmp.replace(target)
    return target


async def run_export(request: web.Request) -> web.StreamResponse:
    pneuma: Pneuma = request.app[PNEUMA]
    name = request.match_info["format"]
    exporter = _exporter(pneuma)
    if exporter is None:
        raise ToolError("E_UNSUPPORTED", f"the {pneuma.mode.name} mode has no export",
                        details={"mode": pneuma.mode.name})
    offered = [f.name for f in exporter.formats]
    if name not in offered:
        raise ToolError("E_BAD_ARGS", f"'format' must be one of {', '.join(offered)}",
                        details={"field": "format", "format": name, "offered": offered})
    workspace = pneuma.workspace.resolve()
    progress: dict[str, dict[str, object]] = request.app[_PROGRESS]
    query = dict(request.query)
    key = _progress_key(name, query.pop("progress", None))
    params = {**pneuma.params, **query}  # a format's option (the video mode's png: ?time=2.5)

    def report(done: int, total: int, what: str) -> None:  # in the export's thread
        if request.transport is None or request.transport.is_closing():
            raise ExportError(f"the {name} export was stopped: the page that asked for it went away")
        progress[key] = {"done": done, "total": total, "what": what}

    def export() -> tuple[Path, list[str]]:
        result = exporter.run(workspace, name, None, params, progress=report)
        return _one_file(result, workspace, f"{pneuma.mode.name}-{name}"), result.left_out

    progress[key] = {"done": 0, "total": 0, "what": ""}
    try:
        path, left_out = await asyncio.to_thread(export)
    except ExportError as exc:
        raise _answer(exc, name, workspace) from None
    except OSError as exc:
        raise ToolError("E_IO", f"could not write the export: {exc.strerror or type(exc).__name__}",
                        details={"format": name}) from None
    except Exception as exc:
        failure = renderer_failure(exc)
        if failure is None:
            raise  # a bug: the error middleware logs it and answers E_INTERNAL
        raise _answer(failure, name, workspace) from None
    finally:
        progress.pop(key, None)
    try:
        rel = path.relative_to(workspace).as_posix()
    except ValueError:
        rel = path.name
    return web.FileResponse(path, headers={
        "Content-Disposition": _attachment(path.name),
        "Content-Type": _MEDIA.get(path.suffix.lower(), "application/octet-stream"),
        "Cache-Control": "no-store",
        "X-Pneuma-Export-Path": rel,
        # what could not be exported while the rest was: JSON lines, percent-encoded (any name)
        "X-Pneuma-Export-Left-Out": quote(json.dumps(
            [line.replace(str(workspace), "the workspace") for line in left_out], ensure_ascii=False)),
    })


def _answer(exc: ExportError, name: str, workspace: Path) -> ToolError:
    """The exporter's error as the Export menu shows it: its code and hint, and
    no absolute path of the person's disk in the message."""
    problem = str(exc).replace(str(workspace), "the workspace")
    return ToolError(exc.code, f"cannot export {name}: {problem}", details={"format": name},
                     hint=exc.hint)


def _attachment(name: str) -> str:
    """A download name that survives any title: ASCII fallback, UTF-8 name (RFC 6266)."""
    fallback = name.encode("ascii", "replace").decode("ascii").replace("?", "_").replace('"', "_")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name)}"


def _progress_key(name: str, chosen: str | None) -> str:
    """Where an export's progress is kept: per format, and per the id its
    page chose (any short text; longer is cut, not refused)."""
    return f"{name}:{chosen[:64]}" if chosen else name


async def export_progress(request: web.Request) -> web.Response:
    key = _progress_key(request.match_info["format"], request.query.get("id"))
    state = request.app[_PROGRESS].get(key)
    return web.json_response({"running": state is not None, **(state or {})})


def setup(app: web.Application) -> None:
    app[_PROGRESS] = {}
    app.router.add_get("/api/export", list_formats)
    app.router.add_get("/api/export/{format}", run_export)
    app.router.add_get("/api/export/{format}/progress", export_progress)
