"""Debian's ffmpeg, fed one PNG frame at a time on its standard input
(``image2pipe``): frames are never all in memory or on disk at once.

The output is written under a temporary name beside the target and renamed
at the end, so a stopped export (Ctrl-C, the page closed, a scene that
throws) leaves the file that was there before, or none, never half a video.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncIterator
from fractions import Fraction
from pathlib import Path

from pneuma.api import ExportError

INSTALL_FFMPEG = "Install Debian's ffmpeg (apt-get install ffmpeg, or run scripts/install)"

# Codec settings per container. H.264 in yuv420p (what every player opens),
# the index at the front (+faststart) so a browser plays it while loading;
# VP9 in constant quality, at its fastest setting.
CODECS: dict[str, list[str]] = {
    "mp4": ["-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-pix_fmt", "yuv420p",
            "-movflags", "+faststart", "-f", "mp4"],
    "webm": ["-c:v", "libvpx-vp9", "-b:v", "0", "-crf", "32", "-deadline", "realtime", "-cpu-used", "8",
             "-row-mt", "1", "-pix_fmt", "yuv420p", "-f", "webm"],
}


def find_ffmpeg() -> str:
    found = shutil.which("ffmpeg")
    if not found:
        raise ExportError("this export needs ffmpeg, and it is not installed", code="E_UNAVAILABLE",
                          hint=INSTALL_FFMPEG)
    return found


def rate(fps: float) -> str:
    """ffmpeg's frame rate: 30 → "30", 29.97 → "30000/1001"."""
    value = Fraction(fps).limit_denominator(1001)
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def encode_command(ffmpeg: str, container: str, fps: float, target: Path) -> list[str]:
    return [ffmpeg, "-hide_banner", "-loglevel", "error", "-y",
            "-f", "image2pipe", "-c:v", "png", "-framerate", rate(fps), "-i", "pipe:0",
            *CODECS[container], "-r", rate(fps), str(target)]


def partial_name(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.part")


async def encode(frames: AsyncIterator[bytes], container: str, fps: float, target: Path) -> int:
    """Encode ``frames`` (PNG bytes) into ``target``; the number of frames written."""
    part = partial_name(target)
    process = await asyncio.create_subprocess_exec(
        *encode_command(find_ffmpeg(), container, fps, part),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    assert process.stdin is not None and process.stderr is not None
    stderr_task = asyncio.ensure_future(process.stderr.read())
    count = 0
    finished = False
    try:
        try:
            async for png in frames:
                process.stdin.write(png)
                await process.stdin.drain()
                count += 1
            process.stdin.close()
        except (BrokenPipeError, ConnectionResetError):
            pass  # ffmpeg stopped: its own words say why, below
        status = await process.wait()
        said = (await stderr_task).decode("utf-8", "replace").strip()
        if status != 0:
            last = said.splitlines()[-1] if said else f"exit status {status}"
            raise ExportError(f"ffmpeg failed: {last}", code="E_PREVIEW_FAIL")
        part.replace(target)
        finished = True
        return count
    finally:
        aclose = getattr(frames, "aclose", None)
        if aclose is not None:  # the frames' browser closes now, not when the loop ends
            await aclose()
        if not finished:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(process.wait(), 5)
            stderr_task.cancel()
            part.unlink(missing_ok=True)
