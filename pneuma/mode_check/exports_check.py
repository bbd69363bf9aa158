"""The `exports` check: every format the mode's exporter offers writes a
file of its declared type, read back by its first bytes (a PDF starts
``%PDF-``, a PNG with its signature, a zip ``PK``...), not by its name."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pneuma.host.exporters import Exporter, ExportError, exporter_for
from pneuma.host.plugins import get_plugin_manager
from pneuma.mode_check.report import CheckResult

EXPORT_TIMEOUT_S = 40.0
MAGIC: dict[str, tuple[bytes, ...]] = {
    ".pdf": (b"%PDF-",), ".png": (b"\x89PNG\r\n\x1a\n",), ".zip": (b"PK\x03\x04",),
    ".jpg": (b"\xff\xd8\xff",), ".jpeg": (b"\xff\xd8\xff",), ".gif": (b"GIF87a", b"GIF89a"),
    ".webm": (b"\x1a\x45\xdf\xa3",), ".webp": (b"RIFF",), ".epub": (b"PK\x03\x04",),
    ".docx": (b"PK\x03\x04",), ".pptx": (b"PK\x03\x04",),
}
TEXT_MARKERS: dict[str, tuple[str, ...]] = {".html": ("<html", "<!doctype html"), ".htm": ("<html", "<!doctype html"),
                                            ".svg": ("<svg",)}


def file_problem(path: Path, suffix: str) -> str | None:
    """Why ``path`` is not a file of type ``suffix``, or None."""
    if not path.is_file() or path.stat().st_size == 0:
        return f"{path.name} was not written (or is empty)"
    head = path.read_bytes()[:4096]
    suffix = suffix.lower()
    if suffix in MAGIC and not head.startswith(MAGIC[suffix]):
        return f"{path.name} does not start as a {suffix} file does"
    if suffix in (".mp4", ".mov", ".m4v") and head[4:8] != b"ftyp":
        return f"{path.name} is not an MP4 (no ftyp box)"
    if suffix in TEXT_MARKERS and not any(m in head.decode("utf-8", "replace").lower() for m in TEXT_MARKERS[suffix]):
        return f"{path.name} is not {suffix[1:].upper()}"
    if suffix == ".json":
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            return f"{path.name} is not JSON"
    return None


def export_one(exporter: Exporter, workspace: Path, name: str, out: Path) -> str | None:
    fmt = exporter.format(name)
    target = out / (f"{name}-export" if fmt.is_directory else f"export{fmt.suffix}")
    try:
        exporter.run(workspace, name, target, {})
    except ExportError as exc:
        # E_CONFLICT: the seeded workspace cannot be exported as it stands (illustrate
        # with no image picked yet), said in one line: a refusal, not a broken exporter.
        return None if exc.code == "E_CONFLICT" else f"failed ({exc.code}): {exc}"
    if fmt.is_directory:
        written = [p for p in target.rglob("*") if p.is_file()]
        return None if written else "wrote no file into its folder"
    return file_problem(target, fmt.suffix)


async def check_exports(mode_name: str, workspace: Path, out: Path) -> CheckResult:
    exporter = exporter_for(get_plugin_manager(), mode_name)
    if exporter is None or not exporter.formats:
        return CheckResult("exports", True, "the mode registers no exporter")
    problems: list[str] = []
    for fmt in exporter.formats:
        try:
            problem = await asyncio.wait_for(asyncio.to_thread(export_one, exporter, workspace, fmt.name, out),
                                             EXPORT_TIMEOUT_S)
        except TimeoutError:
            problem = f"took longer than {EXPORT_TIMEOUT_S:.0f} s"
        except Exception as exc:  # an exporter that crashes is this check's finding, not the checker's end
            problem = f"crashed: {type(exc).__name__}: {exc}"
        if problem:
            problems.append(f"{fmt.name}: {problem}")
    names = ", ".join(f.name for f in exporter.formats)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return CheckResult("exports", False, problems[0] + more, {"problems": problems})
    return CheckResult("exports", True, f"{len(exporter.formats)} format(s) wrote files of their type, or "
                       f"refused the seeded workspace in one line ({names})")
