"""``GET /api/slide/export?format=html|pdf``: the export as a download (the
viewer's Export button). Added by ``register_routes`` for slide sessions
only, behind the server's token, Host and Origin checks.

Failures are ``ToolError``\\ s in the host's one error shape: a bad
``format`` is ``E_BAD_ARGS``; a deck that cannot be exported as it stands
(no or broken ``manifest.json``, a listed slide missing) is ``E_CONFLICT``;
no Chromium to print the PDF with is ``E_UNAVAILABLE``; a Chromium that
failed while printing is ``E_PREVIEW_FAIL``.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from aiohttp import web

from pneuma.api import CHROMIUM, Pneuma, ToolError, pneuma_of
from pneuma_slide.export import FORMATS, ExportError, export_deck

_PDF_HINT = "Export HTML instead (it prints to PDF from any browser), or install Chromium."


def _chromium_found() -> bool:
    """Whether a Chromium the PDF export can start is installed (the binary
    the host pins, or one on PATH as the export's fallback looks for)."""
    return Path(CHROMIUM).exists() or any(
        shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome"))


def _renderer_failed(exc: ExportError) -> bool:
    # export.py reports a failed ``chromium --print-to-pdf`` as an ExportError
    # too; its message names Chromium, a deck problem's never does.
    return "chromium" in str(exc).lower()


def _chromium_error(exc: Exception) -> ToolError:
    if not _chromium_found():
        return ToolError("E_UNAVAILABLE", f"PDF export needs Chromium ({CHROMIUM}), and it is "
                         "not installed", details={"format": "pdf"}, hint=_PDF_HINT)
    detail = str(exc) if isinstance(exc, ExportError) else f"{type(exc).__name__}: {exc}"
    return ToolError("E_PREVIEW_FAIL", f"Chromium failed to print the deck: {detail}",
                     details={"format": "pdf"}, hint=_PDF_HINT)


def slide_routes(pneuma: Pneuma) -> list[web.RouteDef]:
    """The routes of a slide session (the ``register_routes`` hook's answer)."""
    return [web.get("/api/slide/export", export_route)]


async def export_route(request: web.Request) -> web.StreamResponse:
    pneuma = pneuma_of(request)
    fmt = request.query.get("format", "pdf")
    if fmt not in FORMATS:
        raise ToolError("E_BAD_ARGS", f"'format' must be one of {', '.join(FORMATS)}",
                        details={"field": "format", "format": fmt})
    try:
        result = await asyncio.to_thread(export_deck, pneuma.workspace, fmt, None,
                                         dict(pneuma.params))
    except ExportError as exc:
        if fmt == "pdf" and _renderer_failed(exc):
            raise _chromium_error(exc) from None
        problem = str(exc).replace(str(pneuma.workspace), "the workspace")
        raise ToolError("E_CONFLICT", f"the deck cannot be exported: {problem}",
                        details={"format": fmt},
                        hint="Fix manifest.json (it must list the deck's slides, each an "
                             "existing file), then export again.") from None
    except OSError as exc:
        raise ToolError("E_IO", f"could not write the export: {exc.strerror or type(exc).__name__}",
                        details={"format": fmt}) from None
    except Exception as exc:
        if fmt != "pdf":
            raise  # a bug: the error middleware logs it and answers E_INTERNAL
        raise _chromium_error(exc) from None  # Playwright could not start or lost Chromium
    rel = result.path.relative_to(pneuma.workspace.resolve()).as_posix()
    media = "application/pdf" if fmt == "pdf" else "text/html; charset=utf-8"
    return web.FileResponse(
        result.path,
        headers={
            "Content-Disposition": f'attachment; filename="{result.path.name}"',
            "Content-Type": media,
            "Cache-Control": "no-store",
            "X-Pneuma-Export-Path": rel,
        },
    )
