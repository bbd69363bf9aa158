"""``pneuma export --mode video --format mp4|webm|png`` and the Export menu.

Every frame is drawn by headless Chromium through the scenes' own runtime
(frames.py: the same ``seek(t)`` the player uses) and streamed into Debian's
ffmpeg (encode.py), frame n at n / fps: the file has exactly the
composition's frames, at its size and rate. ``png`` is one frame: the
``time`` param in seconds (``--param time=2.5``; the Export menu's, the
first frame).

Progress goes to ``ExportRequest.report`` once a frame ("frame 120/240"):
``pneuma export`` prints it, the Export menu shows it. A progress callback
that raises stops the export; ffmpeg and Chromium are stopped and the half
file removed (encode.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from pneuma.api import (
    Exporter,
    ExportError,
    ExportFormat,
    ExportRequest,
    ExportResult,
    atomic_write_bytes,
    run_sync,
)
from pneuma_video.composition import Composition, CompositionError, read_composition
from pneuma_video.encode import encode, find_ffmpeg
from pneuma_video.frames import capture_png, frame_page

FORMATS = (
    ExportFormat("mp4", {"en": "MP4 video (H.264)", "zh-CN": "MP4 视频（H.264）"}, ".mp4"),
    ExportFormat("webm", {"en": "WebM video (VP9)", "zh-CN": "WebM 视频（VP9）"}, ".webm"),
    ExportFormat("png", {"en": "PNG (one frame)", "zh-CN": "PNG（单帧）"}, ".png"),
)


def composition_for_export(workspace: Path) -> Composition:
    try:
        return read_composition(workspace)
    except CompositionError as exc:
        raise ExportError(str(exc), hint="Fix video.json, then export again") from None


def seconds_param(params: object, name: str = "time") -> float:
    """The ``time`` param in seconds (0 when not given); ``ExportError`` when it is not a number ≥ 0."""
    value = params.get(name) if isinstance(params, dict) else None
    if value in (None, ""):
        return 0.0
    try:
        seconds = float(str(value))
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise ExportError(f"{name} must be a time in seconds ≥ 0, not {value!r}", code="E_BAD_ARGS")
    return seconds


async def _frames(request: ExportRequest, composition: Composition) -> AsyncIterator[bytes]:
    total = composition.total_frames
    async with frame_page(request.workspace, composition) as page:
        for number in range(total):
            yield await page.frame(number)
            request.report(number + 1, total, f"frame {number + 1}/{total}")


def export_video(request: ExportRequest) -> ExportResult:
    composition = composition_for_export(request.workspace)
    container = request.format
    if container == "mp4" and (composition.width % 2 or composition.height % 2):
        raise ExportError(f"H.264 needs an even width and height; the composition is "
                          f"{composition.width}×{composition.height}",
                          hint="Make width and height in video.json even numbers")
    find_ffmpeg()  # said before Chromium starts, not after
    written = run_sync(encode(_frames(request, composition), container, composition.fps, request.output))
    seconds = written / composition.fps
    return ExportResult(files=[request.output], summary=(
        f"{written} frames, {seconds:g} s at {composition.fps:g} fps, {composition.width}×{composition.height}"))


def export_frame(request: ExportRequest) -> ExportResult:
    composition = composition_for_export(request.workspace)
    seconds = seconds_param(request.params)
    frame = composition.frame_at(seconds)
    atomic_write_bytes(request.output, capture_png(request.workspace, composition, seconds))
    return ExportResult(files=[request.output],
                        summary=f"frame {frame} ({frame / composition.fps:g} s), "
                                f"{composition.width}×{composition.height}")


def _export(request: ExportRequest) -> ExportResult:
    if request.format == "png":
        return export_frame(request)
    return export_video(request)


def _default_name(workspace: Path) -> str:
    try:
        return read_composition(workspace).title or "video"
    except CompositionError:
        return "video"


EXPORTER = Exporter(mode="video", formats=FORMATS, export=_export, default_name=_default_name)
